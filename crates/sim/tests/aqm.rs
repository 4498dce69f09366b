//! Active queues at the bottleneck with long TCP flows: each holds the
//! queue where its definition says.

use net::DropReason;
use scenario::ScenarioFile;
use sim::build::Built;
use std::path::Path;

/// `flows` greedy flows of `cc` for `secs` through a 10 Mbit/s, 20 ms
/// bottleneck whose queue is `queue` (the fields after `rate`).
fn simulate(queue: &str, cc: &str, flows: u32, secs: u32) -> Built {
    let (_, r) = resolve(&scenario(queue, cc, flows, secs, ""));
    sim::simulate(&r)
}

fn resolve(toml: &str) -> (scenario::Scenario, scenario::Resolved) {
    let f = ScenarioFile::parse("test.toml", Path::new("."), toml).unwrap_or_else(|e| panic!("{e}"));
    f.resolved(None, None).unwrap_or_else(|e| panic!("{e}"))
}

/// The scenario of [`simulate`], with `tcp` more lines of its `[tcp]` table.
fn scenario(queue: &str, cc: &str, flows: u32, secs: u32, tcp: &str) -> String {
    format!(
        r#"
        duration = "{secs}s"
        [topology.bottleneck]
        path = [{{ element = "queue", rate = "10Mbps", {queue} }}, {{ element = "delay", delay = "20ms" }}]
        [topology.access]
        rate = "100Mbps"
        delay = "1ms"
        [tcp]
        congestion_control = "{cc}"
        {tcp}
        [[background]]
        model = "greedy"
        hosts = {flows}
        spread = "1s"
        "#
    )
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

#[test]
fn with_ecn_red_marks_the_flows_instead_of_dropping_early_and_the_capture_shows_the_bits() {
    let red = r#"limit = "50p", red = { thresh = 5, maxthresh = 15, q_weight = 0.002, gentle = false, bytes = false, queue_in_bytes = false, setbit = true, use_mark_p = false }"#;
    let dir = std::env::temp_dir().join(format!("undertow-ecn-{}", std::process::id()));
    let mut runs = Vec::new();
    for ecn in [false, true] {
        let toml = scenario(red, "newreno", 4, 30, &format!("ecn = {ecn}\n        [output]\n        pcap = true"));
        let (_, r) = resolve(&toml);
        let out = dir.join(format!("ecn_{ecn}"));
        sim::run_scenario(&r, &toml, None, &out, &mut |_| true).unwrap();
        let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
        let link = summary["links"]["bottleneck_fwd"].clone();
        // What the capture shows: IP ECN codepoints and TCP flags, each way.
        let (mut ce, mut ect, mut ece, mut cwr) = (0u64, 0u64, 0u64, 0u64);
        let mut rd = wire::TraceReader::open(out.join("bottleneck.pcap")).unwrap();
        while let Some(rec) = rd.read_next().unwrap() {
            let p = rec.decode().unwrap();
            let wire::Transport::Tcp(t) = p.transport else { continue };
            ect += (p.ip.ecn == wire::ECT0) as u64;
            ce += (p.ip.ecn == wire::CE) as u64;
            ece += (t.flags.contains(wire::TcpFlags::ECE) && !t.flags.syn()) as u64;
            cwr += (t.flags.contains(wire::TcpFlags::CWR) && !t.flags.syn()) as u64;
        }
        runs.push((link["early_drops"].as_u64().unwrap(), link["ecn_marks"].as_u64().unwrap(), ce, ect, ece, cwr));
    }
    std::fs::remove_dir_all(&dir).ok();
    let (early, marks, ce, ect, ece, cwr) = runs[0];
    assert!(early > 100 && marks == 0 && ce + ect + ece + cwr == 0, "without ECN: {:?}", runs[0]);
    let (early, marks, ce, ect, ece, cwr) = runs[1];
    // RED's early decisions became marks (but for what is not ECN-capable:
    // handshakes and Linux's retransmissions); the capture at the link's far
    // end has every mark as CE (but for those still queued or on the wire
    // when the run ends: at most the queue's 50 and the 17 that 20 ms of a
    // 10 Mbit/s link hold), data otherwise ECT(0), and the echo and its answer.
    assert!(early * 10 < marks, "{:?}", runs[1]);
    assert!(marks > 100 && ce <= marks && marks - ce <= 67 && ect > 50 * marks, "{:?}", runs[1]);
    assert!(ece >= marks / 2 && cwr > 0 && cwr <= marks, "{:?}", runs[1]);
}
