//! summary.json and the tables (records, series) of a run.

use crate::conn_log::{ConnLog, TcpTotals};
use crate::parquet_out;
use crate::stats::describe;
use net::monitor::Monitor;
use scenario::Resolved;
use serde_json::{json, Map, Value};
use std::path::Path;
use traffic::{AppReport, Column};

pub const SUMMARY_FORMAT: &str = "undertow.summary/1";

fn round(x: f64) -> Value {
    // Twelve significant digits: enough for any metric, stable to print.
    if !x.is_finite() {
        return Value::Null;
    }
    let v: f64 = format!("{x:.12e}").parse().unwrap_or(x);
    json!(v)
}

/// A bottleneck direction's figures; its utilisation against the rate of
/// its first queue, if it has one.
fn link_summary(m: &Monitor, stats: &net::PathStats, rate: Option<units::Rate>, path: &net::PathSpec, duration_s: f64) -> Value {
    let mean_rate = m.total_bytes as f64 * 8.0 / duration_s;
    let q = &stats.queue;
    let mean_qdelay = if q.accepted_pkts > 0 { q.queue_delay_sum.as_secs_f64() / q.accepted_pkts as f64 } else { 0.0 };
    let mut v = json!({
        "bytes": m.total_bytes,
        "packets": m.total_pkts,
        "drops": stats.total_drops(),
        "queue_drops": stats.total_drops() - stats.drops(net::DropReason::Loss),
        "loss_drops": stats.drops(net::DropReason::Loss),
        "mean_rate_bps": round(mean_rate),
        "utilization": rate.map_or(Value::Null, |r| round(mean_rate / r.as_f64())),
        "mean_queue_delay_s": round(mean_qdelay),
        "max_queue_packets": q.max_backlog_pkts,
        "classes": stats.classes.as_deref().map_or(Value::Null, class_summary),
        "overflow_drops": q.drops(net::DropReason::QueueFull),
        "early_drops": q.drops(net::DropReason::Early),
        "forced_drops": q.drops(net::DropReason::Forced),
        "ecn_marks": q.aqm.ecn_marks,
    });
    // What an active queue estimates, averaged over the packets it saw.
    let estimate = match first_discipline(path) {
        Some(net::DisciplineSpec::Red { params, .. }) => {
            Some((if params.queue_in_bytes { "red_mean_average_bytes" } else { "red_mean_average_packets" }, q.aqm.mean_estimate()))
        }
        Some(net::DisciplineSpec::Pie { .. }) => Some(("pie_mean_probability", q.aqm.mean_estimate())),
        _ => None,
    };
    if let Some((key, mean)) = estimate {
        v[key] = mean.map_or(Value::Null, round);
    }
    v
}

fn first_discipline(path: &net::PathSpec) -> Option<&net::DisciplineSpec> {
    path.elements.iter().find_map(|e| match e {
        net::ElementSpec::Queue { discipline, .. } => Some(discipline),
        _ => None,
    })
}

/// Per DiffServ class: packets offered, drops, and the early-drop fraction
/// (RED's random drops over all its drops, as ns-2's dsRED counts early
/// drops); per colour the packets offered with it (a marker's verdict:
/// ns-2's count per code point) and its drops by reason.
fn class_summary(c: &net::ClassCounts) -> Value {
    let mut out = Map::new();
    for k in c.used() {
        let by_colour: Map<String, Value> = net::Colour::ALL
            .iter()
            .map(|&colour| (colour, c.offered_with(k, colour)))
            .filter(|(_, n)| *n > 0)
            .map(|(colour, n)| (colour.name().to_string(), json!(n)))
            .collect();
        let mut colours = Map::new();
        let (mut drops, mut early) = (0u64, 0u64);
        for colour in net::Colour::ALL {
            let by_reason = &c.drops[k][colour.index()];
            let total: u64 = by_reason.iter().sum();
            if total == 0 {
                continue;
            }
            let reasons: Map<String, Value> = net::DropReason::ALL.iter().map(|r| (r.name().to_string(), json!(by_reason[*r as usize]))).collect();
            colours.insert(colour.name().into(), Value::Object(reasons));
            drops += total;
            // RED's random drops only, as the AF/BE seed and ns-2's dsRED
            // count them (forced drops go with the overflows there).
            early += by_reason[net::DropReason::Early as usize];
        }
        let offered = c.offered[k];
        out.insert(
            k.to_string(),
            json!({
                "offered": offered,
                "drops": drops,
                "drop_fraction": round(if offered > 0 { drops as f64 / offered as f64 } else { 0.0 }),
                "early_drop_fraction": if drops > 0 { round(early as f64 / drops as f64) } else { Value::Null },
                "drops_by_colour": Value::Object(colours),
                "by_colour": Value::Object(by_colour),
            }),
        );
    }
    Value::Object(out)
}

/// A metric per flow-length class, for records with a `class` column
/// (web flows): count, mean and median, keyed by class with its size.
fn by_class(rep: &AppReport, metric: &str) -> Option<Value> {
    let class = rep.records.i64("class")?;
    let vals = rep.records.f64(metric)?;
    let bytes = rep.records.i64("bytes");
    let mut keys: Vec<i64> = class.to_vec();
    keys.sort_unstable();
    keys.dedup();
    let mut out = Map::new();
    for k in keys {
        let v: Vec<f64> = class.iter().zip(vals).filter(|(c, _)| **c == k).map(|(_, v)| *v).collect();
        let size = bytes.and_then(|b| class.iter().position(|c| *c == k).map(|i| b[i]));
        let d = describe(&v)?;
        out.insert(
            k.to_string(),
            json!({"bytes": if k >= 0 { json!(size) } else { Value::Null }, "count": d.count, "mean": round(d.mean), "p50": round(d.p50), "p90": round(d.p90)}),
        );
    }
    Some(Value::Object(out))
}

/// A bottleneck direction as a run saw it.
pub struct Link<'a> {
    pub monitor: &'a Monitor,
    pub stats: net::PathStats,
    /// The rate of its first queue, if it has one.
    pub rate: Option<units::Rate>,
    /// The most packets waiting in its queue at once per bin of the
    /// monitor, if it has a queue.
    pub occupancy: Option<Vec<u32>>,
}

impl<'a> Link<'a> {
    /// The direction whose path is `path`, seen by `monitor`.
    pub fn new(monitor: &'a Monitor, path: &net::path::Path, rate: Option<units::Rate>) -> Link<'a> {
        Link { monitor, stats: path.stats(), rate, occupancy: path.queue().and_then(|q| q.occupancy()) }
    }
}

/// What a finished run knows, whichever engine ran it.
pub struct Facts<'a> {
    /// Per application (and background model), what it reports.
    pub reports: Vec<AppReport>,
    pub app_names: &'a [String],
    /// Per application: its TCP totals.
    pub app_tcp: &'a [TcpTotals],
    /// The bottleneck, forward and back.
    pub links: [Link<'a>; 2],
    pub conn_log: &'a ConnLog,
    /// The engine's own section of the summary.
    pub engine: Value,
}

/// The summary of a finished run. The simulator's is deterministic: no
/// wall-clock figures.
pub fn summary(r: &Resolved, case: Option<&str>, f: &Facts) -> Value {
    let duration_s = r.duration.as_secs_f64();
    let mut apps = Map::new();
    for (i, rep) in f.reports.iter().enumerate() {
        let mut o = Map::new();
        o.insert("kind".into(), json!(rep.kind));
        if let Some(metric) = rep.metric {
            o.insert("metric".into(), json!(metric));
            let vals = rep.records.f64(metric).unwrap_or(&[]);
            match describe(vals) {
                Some(d) => {
                    o.insert("count".into(), json!(d.count));
                    for (k, v) in
                        [("mean", d.mean), ("sd", d.sd), ("min", d.min), ("max", d.max), ("p5", d.p5), ("p50", d.p50), ("p90", d.p90), ("p95", d.p95)]
                    {
                        o.insert(k.into(), round(v));
                    }
                }
                None => {
                    o.insert("count".into(), json!(0));
                }
            }
        }
        if let Some(b) = rep.metric.and_then(|m| by_class(rep, m)) {
            o.insert("by_class".into(), b);
        }
        let counters: Map<String, Value> = rep.counters.iter().map(|(k, v)| (k.to_string(), round(*v))).collect();
        o.insert("counters".into(), Value::Object(counters));
        let t = &f.app_tcp[i];
        if t.connections > 0 {
            o.insert(
                "tcp".into(),
                json!({
                    "connections": t.connections,
                    "segments_sent": t.segments,
                    "retransmits": t.retransmits,
                    "fast_recoveries": t.fast_recoveries,
                    "rtos": t.rtos,
                    "resets": t.resets,
                }),
            );
        }
        apps.insert(rep.name.clone(), Value::Object(o));
    }
    let [fwd, rev] = &f.links;
    let links = json!({
        "bottleneck_fwd": link_summary(fwd.monitor, &fwd.stats, fwd.rate, &r.bottleneck[0], duration_s),
        "bottleneck_rev": link_summary(rev.monitor, &rev.stats, rev.rate, &r.bottleneck[1], duration_s),
    });
    json!({
        "format": SUMMARY_FORMAT,
        "scenario": r.name,
        "case": case,
        "seed": r.seed,
        "duration_s": duration_s,
        "apps": apps,
        "links": links,
        "engine": f.engine,
    })
}

/// Writes records and series; the summary and scenario are written by the caller.
pub fn write_tables(dir: &Path, f: &Facts) -> Result<(), String> {
    let records = dir.join("records");
    std::fs::create_dir_all(&records).map_err(|e| format!("{}: {e}", records.display()))?;
    for rep in &f.reports {
        if rep.records.columns.is_empty() {
            continue;
        }
        let path = records.join(format!("{}.parquet", rep.name));
        let cols: Vec<(&str, &Column)> = rep.records.columns.iter().map(|(n, c)| (*n, c)).collect();
        parquet_out::write(&path, &cols).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let log = f.conn_log;
    let names = f.app_names;
    let int = |v: &[i64]| Column::I64(v.to_vec());
    let cols = [
        ("app", Column::Str(log.app.iter().map(|&a| names[a as usize].clone()).collect())),
        ("active", Column::Bool(log.active.clone())),
        ("host", int(&log.host)),
        ("peer", int(&log.peer)),
        ("local_port", int(&log.local_port)),
        ("remote_port", int(&log.remote_port)),
        ("opened_s", Column::F64(log.opened_s.clone())),
        ("closed_s", Column::F64(log.closed_s.clone())),
        ("bytes_acked", int(&log.bytes_acked)),
        ("bytes_received", int(&log.bytes_received)),
        ("segments_sent", int(&log.segments_sent)),
        ("retransmits", int(&log.retransmits)),
        ("fast_recoveries", int(&log.fast_recoveries)),
        ("rtos", int(&log.rtos)),
        ("srtt_s", Column::F64(log.srtt_s.clone())),
    ];
    let path = records.join("connections.parquet");
    let refs: Vec<(&str, &Column)> = cols.iter().map(|(n, c)| (*n, c)).collect();
    parquet_out::write(&path, &refs).map_err(|e| format!("{}: {e}", path.display()))?;

    let series = dir.join("series");
    std::fs::create_dir_all(&series).map_err(|e| format!("{}: {e}", series.display()))?;
    let int = |v: &[u32]| Column::I64(v.iter().map(|&x| x as i64).collect());
    // The monitor's bins (an emulator run that ended early has fewer).
    let queue = |l: &Link| {
        let mut q = l.occupancy.clone().unwrap_or_default();
        q.resize(l.monitor.bytes.len(), 0);
        int(&q)
    };
    let (fq, rq) = (queue(&f.links[0]), queue(&f.links[1]));
    let [f, r] = [f.links[0].monitor, f.links[1].monitor];
    let bin = f.bin.as_secs_f64();
    let n = f.bytes.len();
    let cols = [
        ("t_s", Column::F64((0..n).map(|i| i as f64 * bin).collect())),
        ("fwd_bytes", int(&f.bytes)),
        ("fwd_packets", int(&f.pkts)),
        ("fwd_drops", int(&f.drops)),
        ("rev_bytes", int(&r.bytes)),
        ("rev_packets", int(&r.pkts)),
        ("rev_drops", int(&r.drops)),
        ("fwd_queue_packets", fq),
        ("rev_queue_packets", rq),
    ];
    let path = series.join("bottleneck.parquet");
    let refs: Vec<(&str, &Column)> = cols.iter().map(|(n, c)| (*n, c)).collect();
    parquet_out::write(&path, &refs).map_err(|e| format!("{}: {e}", path.display()))
}
