//! `undertow._core`: converts types and maps errors, nothing more. The
//! simulation runs with the GIL released; progress reports take it briefly.

use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::Path;

mod error;

create_exception!(_core, ScenarioError, PyValueError, "A scenario file that cannot be used; the message names the file, field and what is allowed.");
create_exception!(_core, RunError, PyOSError, "A run that could not write its run directory.");
create_exception!(
    _core,
    EngineError,
    PyRuntimeError,
    "An engine that cannot run a scenario here (the emulator without root, a setting it cannot apply)."
);
create_exception!(
    _core,
    InputError,
    PyValueError,
    "A trace, model or option that cannot be used; the message names the file or option and what is allowed."
);
create_exception!(
    _core,
    TruncatedError,
    InputError,
    "A trace of which too little could be read to model it; the message names the file, the share read and where the damage was."
);

use error::{input_err, scenario_err};

/// Extraction options: the defaults with the fields of `overrides` (a JSON
/// object) replaced; a wrong field or value names the option.
fn extract_options(overrides: Option<&str>) -> Result<swing::ExtractOptions, String> {
    let mut v = serde_json::to_value(swing::ExtractOptions::default()).map_err(|e| e.to_string())?;
    if let Some(text) = overrides {
        let o: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("options are not JSON: {e}"))?;
        let (Some(base), Some(over)) = (v.as_object_mut(), o.as_object()) else {
            return Err("options must be a JSON object".into());
        };
        for (k, x) in over {
            if !base.contains_key(k) {
                return Err(format!("unknown option {k:?}"));
            }
            base.insert(k.clone(), x.clone());
        }
    }
    serde_json::from_value(v).map_err(|e| format!("bad option: {e}"))
}

fn read_model(path: &str) -> PyResult<swing::Model> {
    swing::Model::load(Path::new(path)).map_err(|e| input_err(format!("{path}: {e}")))
}

/// Loads and checks a model file as every reader does (ranges included);
/// raises InputError naming the file and field.
#[pyfunction]
fn check_model(path: &str) -> PyResult<()> {
    read_model(path).map(|_| ())
}

/// A progress callback for work done without the GIL: it hands `progress`
/// each figure the work reports, and asks the work to stop (returns false)
/// when a signal is pending for Python or `progress` raised, keeping what
/// was raised in `raised`.
fn reporter<'a, T>(progress: &'a Option<Py<PyAny>>, raised: &'a mut Option<PyErr>) -> impl FnMut(T) -> bool + 'a
where
    T: for<'py> IntoPyObject<'py>,
{
    move |x: T| {
        Python::attach(|py| {
            let outcome = py.check_signals().and_then(|()| match progress {
                Some(p) => p.call1(py, (x,)).map(drop),
                None => Ok(()),
            });
            match outcome {
                Ok(()) => true,
                Err(e) => {
                    *raised = Some(e);
                    false
                }
            }
        })
    }
}

/// A finished run as (summary JSON, timing JSON), or the Python exception
/// for why it did not finish (what the progress callback raised, if it
/// stopped it).
fn finished(result: Result<sim::RunReport, sim::RunError>, raised: Option<PyErr>) -> PyResult<(String, String)> {
    match result {
        Ok(rep) => Ok((rep.summary.to_string(), rep.timing.to_string())),
        Err(sim::RunError::Cancelled) => Err(raised.unwrap_or_else(|| PyKeyboardInterrupt::new_err("run cancelled"))),
        Err(e) => Err(run_err(e)),
    }
}

/// Extracts a Swing model from traces into `out_path` (JSON); returns the
/// extraction report (its Debug text) and a line for each damaged trace.
/// `options` is a JSON object of `ExtractOptions` fields to change. A trace
/// read under `min_read_share` of its bytes raises `TruncatedError` and
/// nothing is written.
#[pyfunction]
#[pyo3(name = "extract", signature = (paths, out_path, options=None, progress=None, min_read_share=0.0))]
fn extract_model(
    py: Python<'_>,
    paths: Vec<String>,
    out_path: &str,
    options: Option<&str>,
    progress: Option<Py<PyAny>>,
    min_read_share: f64,
) -> PyResult<(String, Vec<String>)> {
    let opts = extract_options(options).map_err(input_err)?;
    let paths: Vec<std::path::PathBuf> = paths.into_iter().map(Into::into).collect();
    let mut raised: Option<PyErr> = None;
    let result = py.detach(|| {
        let mut cb = reporter::<u64>(&progress, &mut raised);
        ::extract::extract(&paths, &opts, &mut cb)
    });
    let (model, report) = match result {
        Ok(x) => x,
        Err(::extract::ExtractError::Cancelled) => return Err(raised.unwrap_or_else(|| PyKeyboardInterrupt::new_err("extraction cancelled"))),
        Err(e) => return Err(input_err(e.to_string())),
    };
    if let Some(d) = report.damaged.iter().find(|d| d.read_share() < min_read_share) {
        return Err(TruncatedError::new_err(d.refusal(min_read_share)));
    }
    write_model(&model, out_path)?;
    Ok((format!("{report:?}"), damage_lines(&report.damaged)))
}

fn damage_lines(damaged: &[::extract::TraceDamage]) -> Vec<String> {
    damaged.iter().map(ToString::to_string).collect()
}

/// Writes the model as pretty JSON, streamed (a long trace's model runs to
/// tens of MB) into a temporary file renamed over `out_path` at the end, so
/// a failed write leaves any earlier file whole.
fn write_model(model: &swing::Model, out_path: &str) -> PyResult<()> {
    use std::io::Write;
    let cannot = |e: std::io::Error| RunError::new_err(format!("{out_path}: cannot write: {e}"));
    // The rename replaces what is there: only a regular file may be (a
    // device, FIFO or symlink named by mistake is left alone).
    if let Ok(m) = std::fs::symlink_metadata(out_path) {
        if !m.file_type().is_file() {
            return Err(RunError::new_err(format!("{out_path} exists and is not a regular file: refusing to replace it")));
        }
    }
    let tmp = format!("{out_path}.partial");
    let write = || -> std::io::Result<()> {
        let mut w = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        serde_json::to_writer_pretty(&mut w, model)?;
        w.write_all(b"\n")?;
        w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, out_path)
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        cannot(e)
    })
}

/// Bytes and packets per bin of traces, per direction (`fwd` = side A to
/// B). The sides are those of `model` (a model extracted from these traces),
/// else of `side_a` prefixes, else decided from the traces as `extract`
/// does. Bins start at `start_s` (seconds since the epoch) if given, else
/// at the model's first timestamp, else at the first packet. `warnings` has
/// a line for each damaged trace.
#[pyfunction]
#[pyo3(signature = (paths, bin_s, model=None, side_a=None, start_s=None))]
fn trace_series<'py>(
    py: Python<'py>,
    paths: Vec<String>,
    bin_s: f64,
    model: Option<&str>,
    side_a: Option<Vec<String>>,
    start_s: Option<f64>,
) -> PyResult<Bound<'py, PyDict>> {
    let paths: Vec<std::path::PathBuf> = paths.into_iter().map(Into::into).collect();
    let m = match model {
        Some(p) => read_model(p)?,
        None => {
            let mut opts = swing::ExtractOptions::default();
            if let Some(a) = side_a {
                opts.sides = swing::SideRule::Prefixes { a };
            }
            py.detach(|| ::extract::extract(&paths, &opts, &mut |_| true)).map_err(|e| input_err(e.to_string()))?.0
        }
    };
    let s = py
        .detach(|| match start_s {
            Some(t) => ::extract::series(&paths, bin_s, &::extract::host_sides(&m), Some(t)),
            None => ::extract::series_for_model(&paths, bin_s, &m),
        })
        .map_err(|e| input_err(e.to_string()))?;
    let d = PyDict::new(py);
    d.set_item("bin_s", s.bin_s)?;
    d.set_item("start_s", s.start_ns as f64 * 1e-9)?;
    for (i, dir) in ["fwd", "rev"].iter().enumerate() {
        d.set_item(format!("{dir}_bytes"), s.bytes[i].clone())?;
        d.set_item(format!("{dir}_packets"), s.packets[i].clone())?;
    }
    d.set_item("unplaced", s.unplaced)?;
    d.set_item("duplicates", s.duplicates)?;
    d.set_item("warnings", damage_lines(&s.damaged))?;
    Ok(d)
}

/// A TCP segment of a trace: (time s, source, source port, destination,
/// destination port, sequence number, payload bytes, flags), addresses as
/// text.
type Segment = (f64, String, u16, String, u16, u32, u32, u16);

/// A UDP datagram of a trace: (time s, source, source port, destination,
/// destination port, payload bytes), addresses as text.
type Datagram = (f64, String, u16, String, u16, u32);

/// What `keep` makes of each packet of a trace (pcap or pcapng, any link
/// type the wire layer reads), in file order, through its one checked
/// reader; records that do not decode are passed over.
fn trace_packets<T: Send>(py: Python<'_>, path: &str, keep: impl Fn(f64, &wire::PacketInfo) -> Option<T> + Send + Sync) -> PyResult<Vec<T>> {
    py.detach(|| {
        let mut r = wire::TraceReader::open(path).map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        while let Some(rec) = r.read_next().map_err(|e| e.to_string())? {
            let Ok(p) = rec.decode() else { continue };
            out.extend(keep(rec.ts_ns as f64 * 1e-9, &p));
        }
        Ok(out)
    })
    .map_err(|e: String| input_err(e))
}

/// Every TCP segment of a trace.
#[pyfunction]
fn tcp_segments(py: Python<'_>, path: &str) -> PyResult<Vec<Segment>> {
    trace_packets(py, path, |at, p| {
        let t = p.tcp()?;
        Some((at, p.ip.src.to_string(), t.src_port, p.ip.dst.to_string(), t.dst_port, t.seq, t.payload_len, t.flags.0))
    })
}

/// Every UDP datagram of a trace, a fragmented one by its first fragment.
#[pyfunction]
fn udp_datagrams(py: Python<'_>, path: &str) -> PyResult<Vec<Datagram>> {
    trace_packets(py, path, |at, p| {
        let u = p.udp()?;
        Some((at, p.ip.src.to_string(), u.src_port, p.ip.dst.to_string(), u.dst_port, u.payload_len))
    })
}

/// The default extraction options, as JSON.
#[pyfunction]
fn default_extract_options() -> PyResult<String> {
    serde_json::to_string(&swing::ExtractOptions::default()).map_err(|e| RunError::new_err(e.to_string()))
}

/// Compares two model files (original, regenerated); returns JSON. With
/// `regenerated_s`, the regenerated rates are over that many seconds, the
/// window its capture covered, not its first packet to its last.
#[pyfunction]
#[pyo3(signature = (original, regenerated, regenerated_s=None))]
fn compare_models(original: &str, regenerated: &str, regenerated_s: Option<f64>) -> PyResult<String> {
    let (a, b) = (read_model(original)?, read_model(regenerated)?);
    let c = match regenerated_s {
        Some(s) => swing::compare_over(&a, &b, s),
        None => swing::compare(&a, &b),
    };
    serde_json::to_string(&c).map_err(|e| RunError::new_err(e.to_string()))
}

/// Per direction of a model's link (A to B, B to A): the share of the TCP
/// payload that crossed it which the capture missed.
#[pyfunction]
fn capture_loss(model: &str) -> PyResult<Vec<f64>> {
    Ok(read_model(model)?.link.dirs.iter().map(|d| d.capture_loss()).collect())
}

/// Checks a scenario file and returns what the command line needs to plan runs.
#[pyfunction]
fn load(py: Python<'_>, path: &str) -> PyResult<Py<PyDict>> {
    let f = scenario::ScenarioFile::load(Path::new(path)).map_err(scenario_err)?;
    let base = f.scenario(None).map_err(scenario_err)?;
    let d = PyDict::new(py);
    d.set_item("file", &f.display)?;
    d.set_item("name", base.name.clone().unwrap_or_default())?;
    d.set_item("cases", f.cases.clone())?;
    d.set_item("baseline", f.baseline.clone())?;
    d.set_item("duration_s", base.duration.0.as_secs_f64())?;
    d.set_item("engine", base.engine.map_or_else(|| "sim".to_string(), |e| e.to_string()))?;
    Ok(d.unbind())
}

/// The scenario of `case` with every default written out, as TOML.
#[pyfunction]
#[pyo3(signature = (path, case=None, seed=None))]
fn resolve(path: &str, case: Option<&str>, seed: Option<u64>) -> PyResult<String> {
    let f = scenario::ScenarioFile::load(Path::new(path)).map_err(scenario_err)?;
    let (s, r) = f.resolved(case, seed).map_err(scenario_err)?;
    Ok(scenario::to_toml(&scenario::with_defaults(&s, &r)))
}

/// The engine named on the command line, or the scenario's own.
fn engine_named(name: Option<&str>, r: &mut scenario::Resolved) -> PyResult<()> {
    match name {
        None => Ok(()),
        Some("sim") => {
            r.engine = scenario::Engine::Sim;
            Ok(())
        }
        Some("emu") => {
            r.engine = scenario::Engine::Emu;
            Ok(())
        }
        Some(other) => Err(PyValueError::new_err(format!("engine {other:?}: expected \"sim\" or \"emu\""))),
    }
}

/// Runs one case of a scenario file into `out_dir`. Returns (summary JSON,
/// timing JSON). `progress(fraction)` is called now and then; if it raises,
/// the run stops and the exception propagates. `engine` ("sim" or "emu")
/// replaces the scenario's own.
#[pyfunction]
#[pyo3(signature = (path, out_dir, case=None, seed=None, progress=None, engine=None))]
fn run(
    py: Python<'_>,
    path: &str,
    out_dir: &str,
    case: Option<&str>,
    seed: Option<u64>,
    progress: Option<Py<PyAny>>,
    engine: Option<&str>,
) -> PyResult<(String, String)> {
    let f = scenario::ScenarioFile::load(Path::new(path)).map_err(scenario_err)?;
    let (s, mut r) = f.resolved(case, seed).map_err(scenario_err)?;
    engine_named(engine, &mut r)?;
    let text = scenario::to_toml(&scenario::with_defaults(&s, &r));
    let mut raised: Option<PyErr> = None;
    let result = py.detach(|| {
        let mut cb = reporter::<f64>(&progress, &mut raised);
        // The case named on the command line, or the one a run directory's
        // scenario.toml records.
        let (case, dir) = (s.case.as_deref(), Path::new(out_dir));
        match r.engine {
            scenario::Engine::Sim => sim::run_scenario(&r, &text, case, dir, &mut cb),
            scenario::Engine::Emu => emu::run::run_scenario(&r, &text, case, dir, &mut cb),
        }
    });
    finished(result, raised)
}

/// Runs a case in the emulator with a shell (or `command`) in place of a
/// command app's client (`app`, or the first), until it exits. Returns
/// (summary JSON, timing JSON).
#[pyfunction]
#[pyo3(signature = (path, out_dir, case=None, seed=None, app=None, command=None, progress=None))]
#[allow(clippy::too_many_arguments)]
fn shell(
    py: Python<'_>,
    path: &str,
    out_dir: &str,
    case: Option<&str>,
    seed: Option<u64>,
    app: Option<String>,
    command: Option<String>,
    progress: Option<Py<PyAny>>,
) -> PyResult<(String, String)> {
    let f = scenario::ScenarioFile::load(Path::new(path)).map_err(scenario_err)?;
    let (s, mut r) = f.resolved(case, seed).map_err(scenario_err)?;
    r.engine = scenario::Engine::Emu;
    let text = scenario::to_toml(&scenario::with_defaults(&s, &r));
    let sh = emu::programs::Shell { app, command };
    let mut raised: Option<PyErr> = None;
    let result = py.detach(|| {
        let mut cb = reporter::<f64>(&progress, &mut raised);
        emu::run::run_shell(&r, &text, s.case.as_deref(), Path::new(out_dir), &sh, &mut cb)
    });
    finished(result, raised)
}

/// A run's error as the Python exception for it.
fn run_err(e: sim::RunError) -> PyErr {
    match e {
        sim::RunError::Engine(m) => EngineError::new_err(m),
        e => RunError::new_err(e.to_string()),
    }
}

/// Removes what emulator runs that were killed left behind (namespaces,
/// with their devices and routes); returns their names.
#[pyfunction]
fn emu_clean() -> PyResult<Vec<String>> {
    if let Some(why) = emu::network::unavailable() {
        return Err(EngineError::new_err(why));
    }
    emu::netns::clean_orphans().map_err(|e| EngineError::new_err(format!("cannot remove the leftovers: {e}")))
}

/// The emulator's namespaces now present (live runs' and leftovers).
#[pyfunction]
fn emu_namespaces() -> Vec<String> {
    emu::netns::list()
}

/// The address prefixes (CIDR text) of the hosts of each side, left then
/// right, as `engine` ("sim" or "emu") numbers them.
#[pyfunction]
fn side_prefixes(engine: &str) -> PyResult<[Vec<String>; 2]> {
    use scenario::Side::{Left, Right};
    match engine {
        "sim" => Ok([Left, Right].map(sim::topology::side_prefixes)),
        "emu" => Ok([Left, Right].map(emu::addr::side_prefixes)),
        _ => Err(PyValueError::new_err(format!("engine {engine:?}: expected \"sim\" or \"emu\""))),
    }
}

/// A human duration ("1ms", "2.5s") in seconds; ValueError names what is allowed.
#[pyfunction]
fn parse_duration(text: &str) -> PyResult<f64> {
    units::parse::duration(text).map(|d| d.as_secs_f64()).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// A human rate ("15Mbps") in bit/s.
#[pyfunction]
fn parse_rate(text: &str) -> PyResult<f64> {
    units::parse::rate(text).map(|r| r.as_f64()).map_err(|e| PyValueError::new_err(e.to_string()))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("SERIES_MAX_BINS", ::extract::SERIES_MAX_BINS)?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("RunError", m.py().get_type::<RunError>())?;
    m.add("EngineError", m.py().get_type::<EngineError>())?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(emu_clean, m)?)?;
    m.add_function(wrap_pyfunction!(shell, m)?)?;
    m.add_function(wrap_pyfunction!(emu_namespaces, m)?)?;
    m.add_function(wrap_pyfunction!(side_prefixes, m)?)?;
    m.add("InputError", m.py().get_type::<InputError>())?;
    m.add("TruncatedError", m.py().get_type::<TruncatedError>())?;
    m.add_function(wrap_pyfunction!(extract_model, m)?)?;
    m.add_function(wrap_pyfunction!(compare_models, m)?)?;
    m.add_function(wrap_pyfunction!(capture_loss, m)?)?;
    m.add_function(wrap_pyfunction!(check_model, m)?)?;
    m.add_function(wrap_pyfunction!(default_extract_options, m)?)?;
    m.add_function(wrap_pyfunction!(trace_series, m)?)?;
    m.add_function(wrap_pyfunction!(tcp_segments, m)?)?;
    m.add_function(wrap_pyfunction!(udp_datagrams, m)?)?;
    m.add_function(wrap_pyfunction!(parse_duration, m)?)?;
    m.add_function(wrap_pyfunction!(parse_rate, m)?)?;
    Ok(())
}
