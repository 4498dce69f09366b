//! Web flows, the TSWTCM marker and RIO-C in the simulator: a lone flow's
//! completion time against TCP's handshake and slow start, and the classes
//! hosts stamp reaching the marker and the queue.

use scenario::ScenarioFile;
use std::path::Path;
use units::Time;

fn built(text: &str) -> sim::build::Built {
    let f = ScenarioFile::parse("s.toml", Path::new("."), text).unwrap_or_else(|e| panic!("{e}"));
    let (_, r) = f.resolved(None, None).unwrap_or_else(|e| panic!("{e}"));
    let mut b = sim::build::build(&r);
    sim::driver::run(&mut b, Time(r.duration.0), &mut |_| true).unwrap();
    b
}

const TCP: &str = r#"
[tcp]
congestion_control = "reno"
sack = false
timestamps = false
mss = "1000B"
ack_every = 1
quickack = 0
initial_cwnd = 2
rcv_buf = "1MB"
snd_buf = "1MB"
"#;

#[test]
fn a_lone_flow_completes_in_the_handshake_and_its_slow_start_rounds() {
    // A 20 ms round trip (a 10 ms bottleneck each way), links fast enough that serialising a 90-packet flow takes 8 ms at
    // most. A flow of N segments from an initial window of 2, an ACK per
    // segment, needs k = ceil(log2(N/2 + 1)) rounds; it completes when its
    // last byte arrives: the handshake's RTT, k - 1 more, half an RTT.
    let rtt = 0.020;
    for (n, rounds) in [(1u64, 1u32), (6, 2), (20, 4), (90, 6)] {
        let text = format!(
            r#"
duration = "30s"
[topology.bottleneck]
rate = "100Mbps"
delay = "10ms"
queue = "1000p"
[topology.access]
rate = "10Gbps"
delay = "0s"
{TCP}
[[background]]
model = "web"
hosts = 4
flows_per_s = 0.2
flow_sizes = [["{}B", 1.0]]
"#,
            n * 1000
        );
        let b = built(&text);
        let rep = b.apps[0].report();
        let c = rep.records.f64("completion_s").expect("completion");
        assert!(c.len() >= 2, "{n}: {c:?}");
        let want = rtt * (rounds as f64 + 0.5);
        // Serialisation: at most the flow's packets at 100 Mbit/s, plus
        // every packet's own on each link.
        let tol = n as f64 * 1040.0 * 8.0 / 100e6 + 0.0005;
        for x in c {
            assert!((x - want).abs() <= tol, "{n} segments: {x} s against {want} s");
        }
    }
}

#[test]
fn the_marker_colours_the_af_class_by_its_profile_and_best_effort_red() {
    // AF flows (class 1) at about 8.4 Mbit/s against a 4 Mbit/s profile
    // and best effort, through RIO-C whose red precedence drops every
    // packet once anything has waited and whose green one never drops:
    // every drop is a red packet, of either class, and AF's green
    // packets all get through.
    let text = format!(
        r#"
duration = "40s"
[topology.bottleneck]
path = [
  {{ element = "tswtcm", cir = "4Mbps", class = 1 }},
  {{ element = "queue", rate = "10Mbps", limit = "1000p", discipline = "rio", precedences = [
    {{ min_th = 900, max_th = 950, max_p = 0.02 }},
    {{ min_th = 0, max_th = 0.000001, max_p = 0.1 }},
  ] }},
  {{ element = "delay", delay = "10ms" }},
]
reverse.path = [{{ element = "queue", rate = "10Mbps", limit = "1000p" }}, {{ element = "delay", delay = "10ms" }}]
[topology.access]
rate = "1Gbps"
delay = "1ms"
{TCP}
[[background]]
model = "web"
name = "af"
class = 1
flows_per_s = 100
flow_sizes = [["10000B", 1.0]]
[[background]]
model = "web"
name = "be"
flows_per_s = 10
flow_sizes = [["10000B", 1.0]]
"#
    );
    let b = built(&text);
    let s = b.world.fabric.paths[sim::build::BOTTLENECK_FWD as usize].path.stats();
    let c = s.classes.clone().expect("the bottleneck counts classes");
    assert!(c.offered[1] > 10_000 && c.offered[0] > 1_000, "{:?}", c.offered);
    for class in [0, 1] {
        let [green, yellow, red] = c.drops[class].map(|r| r.iter().sum::<u64>());
        assert!(green == 0 && yellow == 0 && red > 0, "class {class}: {green} {yellow} {red}");
    }
    // The red precedence's drops are forced (its average past max_th).
    let forced = c.drops[1][2][net::DropReason::Forced as usize] + c.drops[0][2][net::DropReason::Forced as usize];
    assert_eq!(forced, s.total_drops());
}

#[test]
fn the_bottleneck_counts_what_it_was_offered_by_the_colour_its_marker_gave() {
    // Open-loop class 1 at 8 Mbit/s against a 4 Mbit/s profile: the TSW
    // estimate settles at 8 Mbit/s, where RFC 2859's two-colour rule makes
    // each packet red with probability 1 − 4/8. Its estimate starts at the
    // profile and takes a few windows (1 s) to rise, which costs the red
    // share about a hundredth over 60 s. Best effort takes `others`.
    let text = r#"
duration = "60s"
[topology.bottleneck]
path = [
  { element = "tswtcm", cir = "4Mbps", class = 1, others = "green" },
  { element = "queue", rate = "100Mbps", limit = "1000p" },
  { element = "delay", delay = "10ms" },
]
[[background]]
model = "cbr"
transport = "udp"
rate = "8Mbps"
class = 1
[[background]]
model = "cbr"
transport = "udp"
rate = "2Mbps"
"#;
    let b = built(text);
    let c = b.world.fabric.paths[sim::build::BOTTLENECK_FWD as usize].path.stats().classes.expect("the bottleneck counts classes");
    let [green, yellow, red] = net::Colour::ALL.map(|colour| c.offered_with(1, colour));
    let share = red as f64 / (green + red) as f64;
    assert!(yellow == 0 && (share - 0.5).abs() < 0.025, "AF: {green} green, {yellow} yellow, {red} red");
    assert!(c.offered_with(0, net::Colour::Green) > 0 && c.offered_with(0, net::Colour::Red) == 0);
    // Each packet offered is counted once, with its colour.
    for class in [0, 1] {
        let coloured: u64 = net::Colour::ALL.iter().map(|&colour| c.offered_with(class, colour)).sum();
        assert_eq!(coloured, c.offered[class], "class {class}");
    }
}
