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
pub mod output;
mod packet;
mod parquet_out;
pub mod stats;
pub mod topology;
pub mod world;

use scenario::Resolved;
use serde_json::{json, Value};
use std::path::Path;
use units::Time;

/// A file present in a run directory until its last file is written: a
/// directory holding it is not a result.
pub const INCOMPLETE: &str = "INCOMPLETE";

/// Why a run did not complete.
#[derive(Debug)]
pub enum RunError {
    /// The run directory could not be written: path and reason.
    Output(String),
    /// The progress callback asked to stop.
    Cancelled,
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Output(m) => write!(f, "cannot write the run directory: {m}"),
            RunError::Cancelled => write!(f, "run cancelled"),
        }
    }
}

impl std::error::Error for RunError {}

pub struct RunReport {
    pub summary: Value,
    pub timing: Value,
}

fn io_err(path: &Path, e: impl std::fmt::Display) -> RunError {
    RunError::Output(format!("{}: {e}", path.display()))
}

fn write_json(path: &Path, v: &Value) -> Result<(), RunError> {
    let text = serde_json::to_string_pretty(v).map_err(|e| io_err(path, e))? + "\n";
    std::fs::write(path, text).map_err(|e| io_err(path, e))
}

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
    std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
    // A run never mixes its files with another's: it writes into a new
    // directory, marked incomplete until its last file is written.
    // (It may already be marked, by a caller that writes several runs.)
    let mut entries = std::fs::read_dir(dir).map_err(|e| io_err(dir, e))?;
    if entries.any(|e| e.map_or(true, |e| e.file_name() != INCOMPLETE)) {
        return Err(RunError::Output(format!("{}: not empty: a run writes into a new directory", dir.display())));
    }
    let marker = dir.join(INCOMPLETE);
    std::fs::write(&marker, "this run has not finished (or was stopped): its files are not a result\n").map_err(|e| io_err(&marker, e))?;
    let sc = dir.join("scenario.toml");
    std::fs::write(&sc, scenario_toml).map_err(|e| io_err(&sc, e))?;

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
    write_json(&dir.join("summary.json"), &summary)?;
    output::write_tables(&b, dir).map_err(RunError::Output)?;
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
    });
    write_json(&dir.join("timing.json"), &timing)?;
    std::fs::remove_file(&marker).map_err(|e| io_err(&marker, e))?;
    Ok(RunReport { summary, timing })
}
