//! What a finished simulation tells the run directory (`rundir`): its
//! facts, and the simulator's own section of the summary. The capture is
//! streamed during the run by [`crate::capture`].

use crate::build::Built;
use rundir::{Facts, Link};
use scenario::Resolved;
use serde_json::{json, Value};
use std::path::Path;

/// The facts of a finished run, with the engine section `engine`.
fn facts<'a>(b: &'a Built, r: &Resolved, engine: Value) -> Facts<'a> {
    let w = &b.world;
    let link = |i: usize| Link::new(&w.monitors[i], &w.fabric.paths[i].path, r.bottleneck[i].rate());
    Facts {
        reports: b.apps.iter().map(|a| a.report()).collect(),
        app_names: &b.app_names,
        app_tcp: &w.app_tcp,
        links: [link(0), link(1)],
        conn_log: &w.conn_log,
        engine,
    }
}

/// The simulator's section of the summary. Deterministic.
fn engine(b: &Built) -> Value {
    let w = &b.world;
    json!({
        "events": w.counters.events,
        "hosts": w.hosts.len(),
        "stray_segments": w.counters.stray_segments,
        "stray_datagrams": w.counters.stray_datagrams,
        "lost_before_link": w.fabric.losses.before_link,
        "lost_after_link": w.fabric.losses.after_link,
    })
}

/// The summary of a finished run. Deterministic: no wall-clock figures.
pub fn summary(b: &Built, r: &Resolved, case: Option<&str>) -> Value {
    rundir::summary(r, case, &facts(b, r, engine(b)))
}

/// Writes records and series.
pub fn write_tables(b: &Built, r: &Resolved, dir: &Path) -> Result<(), String> {
    rundir::write_tables(dir, &facts(b, r, Value::Null))
}
