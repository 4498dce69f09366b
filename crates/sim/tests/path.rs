//! A bottleneck path of loss, queue, shaper and delay in the simulator:
//! each element's effect on packets sent through it, against a hand
//! computation (crates/net/tests/path.rs does the same through the element
//! API alone).

use scenario::ScenarioFile;
use std::path::Path;
use units::{Rng, Time};

const US: u64 = 1_000;
const MS: u64 = 1_000_000;

/// `n` datagrams of 1500 IP bytes sent at once at `at` from the left host
/// to the right through a bottleneck of `path` (a TOML array), run to the
/// end of 2 s in series bins of `bin`. The hosts' access links take a
/// nanosecond a packet and no delay, so the bottleneck sees what they send
/// as it is sent; a cbr model only to have a sender and a receiver (it
/// starts after the run's end).
fn after_a_burst(path: &str, bin: &str, n: usize, at: Time) -> sim::build::Built {
    let text = format!(
        r#"
duration = "2s"
seed = 7
[topology.bottleneck]
path = {path}
[topology.access]
rate = "1000Tbps"
delay = "0s"
[[background]]
model = "cbr"
transport = "udp"
rate = "1Mbps"
hosts = 1
start = "5s"
stop = "6s"
[output]
series_bin = "{bin}"
"#
    );
    let f = ScenarioFile::parse("s.toml", Path::new("."), &text).unwrap_or_else(|e| panic!("{e}"));
    let (_, r) = f.resolved(None, None).unwrap();
    let mut b = sim::build::build(&r);
    b.world.now = at;
    for _ in 0..n {
        b.world.send_udp(0, 40000, 1, 9, 1472);
    }
    sim::driver::run(&mut b, Time(r.duration.0), &mut |_| true).unwrap();
    b
}

#[test]
fn loss_then_queue_then_shaper_then_delay_on_the_bottleneck_do_what_a_hand_computation_says() {
    let path = r#"[
  { element = "loss", rate = "30%" },
  { element = "queue", rate = "96Mbps", limit = "4p" },
  { element = "shaper", rate = "12Mbps", burst = "3000B" },
  { element = "delay", delay = "10ms" },
]"#;
    // 40 datagrams at 1 s.
    let t0 = 1_000 * MS;
    let b = after_a_burst(path, "1us", 40, Time(t0));

    // Loss: the packets the first element's stream draws under 0.3.
    let mut rng = Rng::stream(7, "link/bottleneck/fwd/0");
    let lost = (0..40).filter(|_| rng.bernoulli(0.3)).count() as u64;
    let s = b.world.fabric.paths[sim::build::BOTTLENECK_FWD as usize].path.stats();
    assert_eq!(s.drops(net::DropReason::Loss), lost);
    // Queue: one in service and four waiting; every later survivor overflows.
    assert_eq!(s.drops(net::DropReason::QueueFull), 40 - lost - 5);
    // Shaper: the full bucket lets two through at the line rate (125 us
    // each), the third waits for the bucket (875 us more), then one a
    // millisecond at 12 Mbit/s; delay: 10 ms on each. Each arrives a few
    // nanoseconds after that (its access link's nanosecond per packet),
    // inside the microsecond bin.
    let m = &b.world.monitors[0];
    let arrived: Vec<u64> =
        m.pkts.iter().enumerate().filter(|(_, &n)| n > 0).flat_map(|(i, &n)| std::iter::repeat_n(i as u64 * US, n as usize)).collect();
    let want: Vec<u64> = [125, 250, 1125, 2125, 3125].iter().map(|d| t0 + 10 * MS + d * US).collect();
    assert_eq!(arrived, want);
    assert_eq!(s.drops(net::DropReason::Loss) + s.drops(net::DropReason::QueueFull) + 5, 40);
}

#[test]
fn the_series_shows_a_burst_filling_the_queue_and_draining_a_packet_a_transmission_time() {
    // Twenty datagrams at once into a queue of ten behind a 12 Mbit/s
    // serialiser (a millisecond each): one in service, ten waiting, nine
    // dropped; then one fewer waiting every millisecond.
    let path = r#"[{ element = "queue", rate = "12Mbps", limit = "10p" }]"#;
    let b = after_a_burst(path, "1ms", 20, Time(1_000 * MS));
    assert_eq!(b.world.monitors[0].total_drops, 9);
    let path = &b.world.fabric.paths[sim::build::BOTTLENECK_FWD as usize].path;
    let q = path.queue().and_then(|q| q.occupancy()).expect("the bottleneck's queue is watched");
    assert_eq!(q.len(), 2_000);
    assert!(q[..1_000].iter().all(|&n| n == 0));
    // The first packet reaches the queue a nanosecond into the second (its
    // access link's), so each packet starts its service a nanosecond into
    // a millisecond, which began with one more waiting.
    assert_eq!(q[1_000..1_012], [10, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    assert!(q[1_012..].iter().all(|&n| n == 0));
    assert_eq!(path.stats().queue.max_backlog_pkts, 10);
}
