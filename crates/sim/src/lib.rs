//! The simulation engine: a scenario run in simulated time.
//!
//! [`engine`] is the event queue (integer nanoseconds, ties broken by
//! insertion order, so equal inputs give equal outputs). [`world`] holds the
//! network: links from `net`, TCP endpoints from `tcp`, and the transport
//! that the applications of `traffic` drive. [`build`] turns resolved
//! scenario settings into a world; [`driver`] runs it; [`output`] and
//! [`capture`] write the run directory.
//!
//! Nothing here reads the wall clock except to pace progress reports and to
//! time the run, and neither reaches the results: the same scenario and seed
//! give byte-identical run directories (timing.json aside).

pub mod build;
pub mod capture;
pub mod driver;
pub mod engine;
mod ip;
pub mod output;
mod packet;
pub mod prefetch;
pub mod timers;
pub mod topology;
pub mod world;

use rundir::io_err;
use scenario::Resolved;
use serde_json::json;
use std::path::Path;
use units::Time;

pub use rundir::{RunError, RunReport, INCOMPLETE};

/// Runs a resolved scenario to its end without writing anything, and
/// returns the finished world and applications (for tests and tools that
/// inspect the state directly).
pub fn simulate(r: &Resolved) -> build::Built {
    let mut b = build::build(r);
    // Without a progress callback that can cancel, the run always completes.
    let _ = driver::run(&mut b, Time(r.duration.0), &mut |_| true);
    b.world.finish_tcp_totals();
    b
}

/// Runs one resolved scenario and writes its run directory `dir`.
/// `scenario_toml` is recorded as `scenario.toml`. `progress` receives the
/// fraction done and returns false to cancel.
pub fn run_scenario(
    r: &Resolved,
    scenario_toml: &str,
    case: Option<&str>,
    dir: &Path,
    progress: &mut dyn FnMut(f64) -> bool,
) -> Result<RunReport, RunError> {
    if let Some(c) = r.apps.iter().find(|a| matches!(a, scenario::AppModel::Command { .. })) {
        return Err(RunError::Engine(format!(
            "app {:?} runs real programs: only the emulator runs them (engine = \"emu\", or --engine emu)",
            c.name()
        )));
    }
    rundir::begin(dir, scenario_toml)?;
    let mut b = build::build(r);
    let pcap = dir.join("bottleneck.pcap");
    if r.output.pcap {
        b.world.capture = Some(
            capture::Capture::create(&pcap, r.output.pcap_snaplen, r.seed, Time(r.output.pcap_from.0), r.output.pcap_miss)
                .map_err(|e| io_err(&pcap, e))?,
        );
    }
    let end = Time(r.duration.0);
    let started = std::time::Instant::now();
    let outcome = driver::run(&mut b, end, &mut |t| progress(t.as_secs_f64() / end.as_secs_f64()));
    let wall = started.elapsed().as_secs_f64();
    if let Some(cap) = b.world.capture.take() {
        cap.finish().map_err(|e| io_err(&pcap, e))?;
    }
    outcome.map_err(|_| RunError::Cancelled)?;
    b.world.finish_tcp_totals();

    let summary = output::summary(&b, r, case);
    output::write_tables(&b, r, dir).map_err(RunError::Output)?;
    let events = b.world.counters.events;
    let bn_pkts = b.world.monitors[0].total_pkts + b.world.monitors[1].total_pkts;
    let timing = json!({
        "wall_s": wall,
        "events": events,
        "events_per_wall_s": events as f64 / wall,
        "bottleneck_packets": bn_pkts,
        "bottleneck_packets_per_wall_s": bn_pkts as f64 / wall,
        "bottleneck_fwd_packets_per_wall_s": b.world.monitors[0].total_pkts as f64 / wall,
        "sim_s_per_wall_s": r.duration.as_secs_f64() / wall,
        "peak_open_connections": b.world.counters.peak_open_conns,
        // What an open connection costs the engine (its TCP endpoint
        // inside); its buffers' heap memory comes on top while they hold data.
        "connection_bytes": world::CONNECTION_BYTES,
    });
    rundir::finish(dir, summary, timing)
}
