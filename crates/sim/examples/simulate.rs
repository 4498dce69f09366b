//! Runs a scenario file in the simulator without Python and writes
//! nothing: for profiling (`perf record`, `valgrind --tool=callgrind`).
//!
//! `cargo run --release -p sim --example simulate -- SCENARIO [CASE]`

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: simulate SCENARIO [CASE]");
        std::process::exit(2);
    };
    let f = scenario::ScenarioFile::load(std::path::Path::new(path)).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2);
    });
    let (_, r) = f.resolved(args.get(2).map(String::as_str), None).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2);
    });
    let t = std::time::Instant::now();
    let b = sim::simulate(&r);
    let pkts = b.world.monitors.iter().map(|m| m.total_pkts).sum::<u64>();
    eprintln!("{} events, {pkts} bottleneck packets in {:.3} s", b.world.counters.events, t.elapsed().as_secs_f64());
}
