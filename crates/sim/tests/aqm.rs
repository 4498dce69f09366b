//! Active queues at the bottleneck with long TCP flows: each holds the
//! queue where its definition says.

use net::DropReason;
use scenario::ScenarioFile;
use sim::build::Built;
use std::path::Path;

/// `flows` greedy flows of `cc` for `secs` through a 10 Mbit/s, 20 ms
/// bottleneck whose queue is `queue` (the fields after `rate`).
fn simulate(queue: &str, cc: &str, flows: u32, secs: u32) -> Built {
    let toml = format!(
        r#"
        duration = "{secs}s"
        [topology.bottleneck]
        path = [{{ element = "queue", rate = "10Mbps", {queue} }}, {{ element = "delay", delay = "20ms" }}]
        [topology.access]
        rate = "100Mbps"
        delay = "1ms"
        [tcp]
        congestion_control = "{cc}"
        [[background]]
        model = "greedy"
        hosts = {flows}
        spread = "1s"
        "#
    );
    let f = ScenarioFile::parse("test.toml", Path::new("."), &toml).unwrap_or_else(|e| panic!("{e}"));
    let (_, r) = f.resolved(None, None).unwrap_or_else(|e| panic!("{e}"));
    sim::simulate(&r)
}

/// The forward bottleneck queue's mean wait and the link's utilisation.
fn delay_and_utilisation(b: &Built, secs: u32) -> (f64, f64) {
    let q = b.world.fabric.paths[0].path.stats().queue;
    let delay = q.queue_delay_sum.as_secs_f64() / q.accepted_pkts as f64;
    let bytes: u64 = b.world.monitors[0].bytes.iter().map(|&x| x as u64).sum();
    (delay, bytes as f64 * 8.0 / secs as f64 / 10e6)
}

#[test]
fn codel_holds_long_tcp_flows_near_its_5ms_target() {
    // CoDel acts when the smallest sojourn of an interval passes 5 ms: the
    // standing queue sits at the target and each flow's sawtooth rides
    // above it, so the mean wait lies between the target and about twice
    // it, where drop-tail with the same buffer fills to nearly a second.
    let (tail, _) = delay_and_utilisation(&simulate(r#"limit = "1000p""#, "cubic", 4, 60), 60);
    assert!(tail > 0.5, "drop-tail waits {tail:.3} s");
    for cc in ["cubic", "newreno"] {
        let (d, u) = delay_and_utilisation(&simulate(r#"limit = "1000p", discipline = "codel""#, cc, 4, 60), 60);
        assert!((0.005..0.012).contains(&d), "{cc}: mean wait {d:.4} s");
        assert!(u > 0.95, "{cc}: utilisation {u:.3}");
    }
}

#[test]
fn pie_holds_long_tcp_flows_near_its_15ms_target() {
    for cc in ["cubic", "newreno"] {
        let (d, u) = delay_and_utilisation(&simulate(r#"limit = "1000p", discipline = "pie""#, cc, 4, 60), 60);
        assert!((d - 0.015).abs() < 0.003, "{cc}: mean wait {d:.4} s");
        assert!(u > 0.95, "{cc}: utilisation {u:.3}");
    }
}

#[test]
fn red_keeps_its_average_between_the_thresholds_and_counts_its_drops_by_reason() {
    let b = simulate(
        r#"limit = "50p", red = { thresh = 5, maxthresh = 15, q_weight = 0.002, gentle = false, bytes = false, queue_in_bytes = false }"#,
        "newreno",
        4,
        60,
    );
    let p = b.world.fabric.paths[0].path.stats();
    let ave = p.queue.aqm.mean_estimate().unwrap();
    assert!((5.0..15.0).contains(&ave), "mean average {ave:.2}");
    // Every drop at the bottleneck is the queue's, counted under its reason;
    // with the average between the thresholds most are early ones.
    assert_eq!(p.drops, p.queue.drops);
    let [early, forced, overflow] = [DropReason::Early, DropReason::Forced, DropReason::QueueFull].map(|r| p.queue.drops(r));
    assert!(early > 2 * (forced + overflow), "early {early}, forced {forced}, overflow {overflow}");
    assert_eq!(p.queue.aqm.arrivals, p.queue.accepted_pkts + p.total_drops());
}
