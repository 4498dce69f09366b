//! The run directory, written the same way by both engines (its format is
//! in docs/run-directory.md).
//!
//! A run starts by [`begin`]: a new, empty directory marked
//! [`INCOMPLETE`], with the scenario it ran. The engine then writes the
//! summary ([`summary`] from the run's [`Facts`]) and the tables
//! ([`write_tables`]), and [`finish`] writes timing.json and removes the
//! mark. A directory without the mark is a whole result.

mod capture_miss;
mod conn_log;
pub mod parquet_out;
pub mod stats;
mod summary;

pub use capture_miss::CaptureMiss;
pub use conn_log::{ConnLog, ConnRow, TcpTotals};
pub use summary::{summary, write_tables, Facts, Link, SUMMARY_FORMAT};

use serde_json::Value;
use std::path::Path;

/// A file present in a run directory until its last file is written: a
/// directory holding it is not a result.
pub const INCOMPLETE: &str = "INCOMPLETE";

/// Why a run did not complete.
#[derive(Debug)]
pub enum RunError {
    /// The run directory could not be written: path and reason.
    Output(String),
    /// The engine could not run the scenario (the emulator without root,
    /// a setting it cannot apply): what and why.
    Engine(String),
    /// The progress callback asked to stop.
    Cancelled,
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Output(m) => write!(f, "cannot write the run directory: {m}"),
            RunError::Engine(m) => write!(f, "{m}"),
            RunError::Cancelled => write!(f, "run cancelled"),
        }
    }
}

impl std::error::Error for RunError {}

/// What a finished run returns: its summary and its timing.
pub struct RunReport {
    pub summary: Value,
    pub timing: Value,
}

/// An error writing `path`.
pub fn io_err(path: &Path, e: impl std::fmt::Display) -> RunError {
    RunError::Output(format!("{}: {e}", path.display()))
}

/// Writes `v` as pretty JSON to `path`.
pub fn write_json(path: &Path, v: &Value) -> Result<(), RunError> {
    let text = serde_json::to_string_pretty(v).map_err(|e| io_err(path, e))? + "\n";
    std::fs::write(path, text).map_err(|e| io_err(path, e))
}

/// Starts run directory `dir`: it must be new or empty (or hold only the
/// mark, left by a caller that writes several runs); it is marked
/// incomplete and gets `scenario_toml` as scenario.toml.
pub fn begin(dir: &Path, scenario_toml: &str) -> Result<(), RunError> {
    std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
    // A run never mixes its files with another's.
    let mut entries = std::fs::read_dir(dir).map_err(|e| io_err(dir, e))?;
    if entries.any(|e| e.map_or(true, |e| e.file_name() != INCOMPLETE)) {
        return Err(RunError::Output(format!("{}: not empty: a run writes into a new directory", dir.display())));
    }
    let marker = dir.join(INCOMPLETE);
    std::fs::write(&marker, "this run has not finished (or was stopped): its files are not a result\n").map_err(|e| io_err(&marker, e))?;
    let sc = dir.join("scenario.toml");
    std::fs::write(&sc, scenario_toml).map_err(|e| io_err(&sc, e))
}

/// Ends run directory `dir`: writes summary.json and timing.json, then
/// removes the mark.
pub fn finish(dir: &Path, summary: Value, timing: Value) -> Result<RunReport, RunError> {
    write_json(&dir.join("summary.json"), &summary)?;
    write_json(&dir.join("timing.json"), &timing)?;
    let marker = dir.join(INCOMPLETE);
    std::fs::remove_file(&marker).map_err(|e| io_err(&marker, e))?;
    Ok(RunReport { summary, timing })
}
