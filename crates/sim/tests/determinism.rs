//! The same scenario and seed give byte-identical run directories
//! (timing.json aside); another seed gives other ones.

use scenario::ScenarioFile;
use std::path::{Path, PathBuf};

/// Every element kind and traffic model the run can hold at once: a swing
/// model with loss before and beyond the link, shapers, bunching and a
/// shared line, cbr and greedy background (the greedy senders behind a
/// line of their own), downloads, a bottleneck path with loss, a
/// scheduled queue and bunching, late timers, and a capture.
fn scenario(dir: &Path) -> String {
    let mut m = swing::example::four_sessions();
    let h = &mut m.hosts[1];
    (h.loss, h.loss_after_link, h.handshakes, h.handshake_retx, h.bunched) = (Some(0.02), Some(0.01), 20, 1, Some(0.1));
    h.loss_burst = Some(2.0);
    m.hosts[2].shaper = Some(swing::HostShaper { rate_bps: 5e6, burst_bytes: 9000, stretches: 10, peaks: vec![] });
    m.lines =
        vec![swing::Line { side: swing::Side::B, hosts: vec!["192.0.2.1".into(), "192.0.2.2".into()], rate_bps: 6e6, back_to_back: 10, faster: 0 }];
    std::fs::write(dir.join("m.json"), serde_json::to_string(&m).unwrap()).unwrap();
    r#"
duration = "20s"
seed = 3
[topology.bottleneck]
path = [
  { element = "gilbert_elliott", enter_bad = "1%", leave_bad = "30%", loss_in_bad = "50%" },
  { element = "queue", rate_schedule = [["0s", "20Mbps"], ["5s", "8Mbps"]], period = "10s", limit = "60p" },
  { element = "bunching", share = "10%" },
  { element = "delay", delay = "15ms" },
]
reverse = { path = [{ element = "queue", rate = "20Mbps" }, { element = "delay", delay = "15ms" }] }
[[apps]]
kind = "http"
object_size = "200KB"
clients = 2
[[background]]
model = "swing"
file = "m.json"
session_scale = 3.0
[[background]]
model = "poisson"
transport = "udp"
rate = "10%"
hosts = 3
[[background]]
model = "greedy"
hosts = 2
direction = "reverse"
line = { rate = "4Mbps", queue = "30p" }
[timer_lateness]
median = "20us"
p99 = "80us"
[output]
pcap = true
"#
    .to_string()
}

fn run(dir: &Path, seed: Option<u64>, out: &str) -> PathBuf {
    let text = scenario(dir);
    let f = ScenarioFile::parse("s.toml", dir, &text).unwrap_or_else(|e| panic!("{e}"));
    let (s, r) = f.resolved(None, seed).unwrap_or_else(|e| panic!("{e}"));
    let out = dir.join(out);
    let toml = scenario::to_toml(&scenario::with_defaults(&s, &r));
    sim::run_scenario(&r, &toml, None, &out, &mut |_| true).unwrap_or_else(|e| panic!("{e}"));
    out
}

/// Every file of a run directory but timing.json, by relative path.
fn files(d: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![d.to_path_buf()];
    while let Some(p) = stack.pop() {
        for e in std::fs::read_dir(&p).unwrap() {
            let e = e.unwrap().path();
            if e.is_dir() {
                stack.push(e);
            } else if e.file_name().unwrap() != "timing.json" {
                out.push((e.strip_prefix(d).unwrap().to_path_buf(), std::fs::read(&e).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn the_same_scenario_and_seed_give_byte_identical_run_directories() {
    let dir = std::env::temp_dir().join(format!("undertow-determinism-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (a, b, c) = (files(&run(&dir, None, "a")), files(&run(&dir, None, "b")), files(&run(&dir, Some(4), "c")));
    let names: Vec<_> = a.iter().map(|f| f.0.display().to_string()).collect();
    for want in
        ["summary.json", "scenario.toml", "bottleneck.pcap", "series/bottleneck.parquet", "records/connections.parquet", "records/http.parquet"]
    {
        assert!(names.iter().any(|n| n == want), "{want} missing from {names:?}");
    }
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.0, y.0);
        assert!(x.1 == y.1, "{} differs between two runs of one seed", x.0.display());
    }
    // Another seed: other traffic, another capture.
    let differ = |name: &str| a.iter().zip(&c).any(|(x, y)| x.0.to_str() == Some(name) && x.1 != y.1);
    assert!(differ("bottleneck.pcap") && differ("summary.json"));
    std::fs::remove_dir_all(&dir).unwrap();
}
