//! The engine wakes elements that hold packets and resumes packets at
//! elements that must see them at their own time: a path whose queues
//! decide at dequeue (held, woken per departure) carries open-loop traffic
//! exactly as the same path deciding at arrival (no event of its own), and
//! responsive traffic alike (TCP's order of events at one nanosecond may
//! then differ, and a run with it).

use net::{DisciplineSpec, ElementSpec};
use scenario::ScenarioFile;
use std::path::Path;
use units::Time;

/// Two queues in series, the second the slower: the first passes bursts
/// on, the second holds them.
const PATH: &str = r#"
[topology.bottleneck]
path = [
  { element = "queue", rate = "50Mbps", limit = "20p" },
  { element = "queue", rate = "20Mbps", limit = "30p" },
  { element = "delay", delay = "20ms" },
]
"#;

/// Open-loop traffic: packets whose fates do not change what is sent.
const UDP: &str = r#"
duration = "30s"
seed = 5
[[background]]
model = "poisson"
transport = "udp"
rate = "22Mbps"
hosts = 8
packet_size = "1200B"
[[background]]
model = "cbr"
transport = "udp"
rate = "4Mbps"
hosts = 2
direction = "reverse"
"#;

/// Responsive traffic both ways, and downloads.
const TCP: &str = r#"
duration = "30s"
seed = 5
[[background]]
model = "greedy"
hosts = 6
[[background]]
model = "greedy"
hosts = 2
direction = "reverse"
[[apps]]
kind = "http"
object_size = "300KB"
clients = 3
"#;

/// The run with the bottleneck's queues (in order) deciding at arrival
/// (false) or at dequeue (true).
fn run(traffic: &str, scheduled: [bool; 2]) -> (sim::build::Built, scenario::Resolved) {
    let text = format!("{traffic}{PATH}");
    let f = ScenarioFile::parse("s.toml", Path::new("."), &text).unwrap_or_else(|e| panic!("{e}"));
    let (_, mut r) = f.resolved(None, None).unwrap();
    for dir in &mut r.bottleneck {
        let queues = dir.elements.iter_mut().filter_map(|e| match e {
            ElementSpec::Queue { discipline, .. } => Some(discipline),
            _ => None,
        });
        for (d, &s) in queues.zip(&scheduled) {
            *d = if s { DisciplineSpec::ScheduledFifo } else { DisciplineSpec::DropTail };
        }
    }
    let mut b = sim::build::build(&r);
    sim::driver::run(&mut b, Time(r.duration.0), &mut |_| true).unwrap();
    b.world.finish_tcp_totals();
    (b, r)
}

#[test]
fn held_and_woken_queues_carry_open_loop_traffic_exactly_as_queues_deciding_at_arrival() {
    let (a, r) = run(UDP, [false, false]);
    for scheduled in [[false, true], [true, true], [true, false]] {
        let (b, _) = run(UDP, scheduled);
        // Every figure of the bottleneck, to the byte, and the series.
        assert_eq!(sim::output::summary(&a, &r, None)["links"], sim::output::summary(&b, &r, None)["links"], "{scheduled:?}");
        for m in 0..2 {
            assert!(a.world.monitors[m].bytes == b.world.monitors[m].bytes, "{scheduled:?}: the series");
            assert!(a.world.monitors[m].drops == b.world.monitors[m].drops, "{scheduled:?}: the drops");
        }
        // ...with the engine's work: wake-ups (and, behind a queue
        // deciding at arrival, resumed packets) as events of their own.
        assert!(b.world.counters.events > a.world.counters.events, "{scheduled:?}");
    }
    // The first queue passed bursts, the second overflowed: the test
    // covers holding, waking, resuming and dropping.
    let s = a.world.fabric.paths[0].path.stats();
    assert!(s.drops(net::DropReason::QueueFull) > 1000, "{s:?}");
    assert!(a.world.monitors[0].total_pkts > 50_000);
}

#[test]
fn held_and_woken_queues_carry_tcp_as_queues_deciding_at_arrival() {
    let (a, r) = run(TCP, [false, false]);
    let (b, _) = run(TCP, [true, true]);
    let figure = |x: &sim::build::Built, dir: &str, k: &str| sim::output::summary(x, &r, None)["links"][dir][k].as_f64().unwrap();
    // The forward direction is full either way: TCP fills the 20 Mbit/s
    // queue. (Events at one nanosecond run in another order when the
    // second queue is woken: the runs part after a while, as two seeds do.)
    let (x, y) = (figure(&a, "bottleneck_fwd", "mean_rate_bps"), figure(&b, "bottleneck_fwd", "mean_rate_bps"));
    assert!((y / x - 1.0).abs() < 0.05, "{x} against {y} bit/s");
    assert!(y > 0.85 * 20e6, "{y} bit/s through the 20 Mbit/s queue");
    assert!(figure(&b, "bottleneck_rev", "mean_rate_bps") > 1e6);
    let downloads =
        |x: &sim::build::Built| x.apps.iter().find(|p| p.report().name == "http").unwrap().report().records.f64("download_time_s").unwrap().len();
    assert!(downloads(&b) > 50 && downloads(&a) > 50);
}
