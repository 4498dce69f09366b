//! Applications' timers fire late by the scenario's `timer_lateness`, and
//! exactly on time without it.

use rundir::stats::percentile;
use scenario::ScenarioFile;
use std::path::Path;

/// One CBR source over UDP, a 1000-byte packet every millisecond, through
/// an idle 100 Mbit/s bottleneck whose capture shows when each left.
fn scenario(lateness: &str) -> String {
    format!(
        r#"
duration = "20s"
seed = 5
{lateness}
[topology.bottleneck]
rate = "100Mbps"
delay = "5ms"
[[background]]
model = "cbr"
transport = "udp"
rate = "8Mbps"
packet_size = "1000B"
hosts = 1
[output]
pcap = true
"#
    )
}

/// How much later than the schedule each packet reached the capture,
/// beyond the earliest: the source's period is 1 ms, so packet i's
/// schedule is the first one's plus i ms, and the path adds a constant.
fn excess_over_schedule(toml: &str, out: &Path) -> Vec<f64> {
    let f = ScenarioFile::parse("s.toml", Path::new("."), toml).unwrap_or_else(|e| panic!("{e}"));
    let (_, r) = f.resolved(None, None).unwrap_or_else(|e| panic!("{e}"));
    sim::run_scenario(&r, toml, None, out, &mut |_| true).unwrap();
    let mut rd = wire::TraceReader::open(out.join("bottleneck.pcap")).unwrap();
    let mut ts = Vec::new();
    while let Some(rec) = rd.read_next().unwrap() {
        if let wire::Transport::Udp(_) = rec.decode().unwrap().transport {
            ts.push(rec.ts_ns);
        }
    }
    let offsets: Vec<i64> = ts.iter().enumerate().map(|(i, t)| t - ts[0] - i as i64 * 1_000_000).collect();
    let least = *offsets.iter().min().unwrap();
    let mut v: Vec<f64> = offsets.iter().map(|o| (o - least) as f64).collect();
    v.sort_by(f64::total_cmp);
    v
}

#[test]
fn a_cbr_sources_packets_leave_late_by_the_timer_lateness_asked_for_and_on_schedule_without_it() {
    let dir = std::env::temp_dir().join(format!("undertow-timers-{}", std::process::id()));
    let exact = excess_over_schedule(&scenario(""), &dir.join("exact"));
    let late = excess_over_schedule(&scenario("[timer_lateness]\nmedian = \"23us\"\np99 = \"79us\""), &dir.join("late"));
    std::fs::remove_dir_all(&dir).ok();

    // Without it every packet leaves on its schedule (to the nanosecond its
    // deadline was rounded up to), and all of them leave.
    assert!(exact.len() >= 19_990, "{} packets", exact.len());
    assert!(exact.last().unwrap() <= &1.0, "the latest packet {} ns off its schedule", exact.last().unwrap());

    // With it, the same number leave (the schedule does not drift: each
    // deadline is the previous one's plus the period, not the late firing's),
    // spread as a shifted exponential through 23 and 79 us: beyond its floor
    // (the earliest packet), the median is ln 2 of the mean and the 99th
    // percentile 56 us above the median.
    assert!(late.len().abs_diff(exact.len()) <= 1, "{} packets against {}", late.len(), exact.len());
    let mean = 56_000.0 / 50f64.ln();
    let (p50, p99) = (percentile(&late, 50.0), percentile(&late, 99.0));
    assert!((p50 / (mean * std::f64::consts::LN_2) - 1.0).abs() < 0.05, "median beyond the floor {p50} ns");
    assert!(((p99 - p50) / 56_000.0 - 1.0).abs() < 0.05, "p99 less the median {} ns", p99 - p50);
}

#[test]
fn a_99th_percentile_outside_what_a_shifted_exponential_through_the_median_allows_is_refused() {
    for (median, p99) in [("23us", "20us"), ("10us", "80us")] {
        let toml = scenario(&format!("[timer_lateness]\nmedian = \"{median}\"\np99 = \"{p99}\""));
        let e = ScenarioFile::parse("s.toml", Path::new("."), &toml).and_then(|f| f.resolved(None, None)).unwrap_err().to_string();
        assert!(e.contains("timer_lateness.p99") && e.contains("6.64 times"), "{e}");
    }
}
