//! Runs a scenario file in the simulator without Python: for profiling
//! (`perf record`, `valgrind --tool=callgrind`), writing nothing, or with
//! `--out DIR` writing the run directory as `undertow run` does, so that
//! two builds' outputs can be compared byte for byte.
//!
//! `cargo run --release -p sim --example simulate -- SCENARIO [CASE] [--out DIR]`

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let out = args.iter().position(|a| a == "--out").map(|i| {
        let dir = args.get(i + 1).cloned().unwrap_or_else(|| usage());
        args.drain(i..i + 2);
        dir
    });
    let (path, case) = match args.as_slice() {
        [p] => (p, None),
        [p, c] => (p, Some(c.as_str())),
        _ => usage(),
    };
    let f = scenario::ScenarioFile::load(std::path::Path::new(path)).unwrap_or_else(|e| fail(e));
    let (s, r) = f.resolved(case, None).unwrap_or_else(|e| fail(e));
    let t = std::time::Instant::now();
    match out {
        None => {
            let b = sim::simulate(&r);
            let pkts = b.world.monitors.iter().map(|m| m.total_pkts).sum::<u64>();
            eprintln!("{} events, {pkts} bottleneck packets in {:.3} s", b.world.counters.events, t.elapsed().as_secs_f64());
        }
        Some(dir) => {
            let text = scenario::to_toml(&scenario::with_defaults(&s, &r));
            let report = sim::run_scenario(&r, &text, s.case.as_deref(), std::path::Path::new(&dir), &mut |_| true).unwrap_or_else(|e| fail(e));
            eprintln!("{}", report.timing);
        }
    }
}

fn usage() -> ! {
    eprintln!("usage: simulate SCENARIO [CASE] [--out DIR]");
    std::process::exit(2);
}

fn fail(e: impl std::fmt::Display) -> ! {
    eprintln!("error: {e}");
    std::process::exit(2);
}
