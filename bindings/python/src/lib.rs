//! `undertow._core`: converts types and maps errors, nothing more. The
//! simulation runs with the GIL released; progress reports take it briefly.

use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::Path;

mod error;

create_exception!(_core, ScenarioError, PyValueError, "A scenario file that cannot be used; the message names the file, field and what is allowed.");
create_exception!(_core, RunError, PyOSError, "A run that could not write its run directory.");

use error::scenario_err;

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

/// Runs one case of a scenario file into `out_dir`. Returns (summary JSON,
/// timing JSON). `progress(fraction)` is called now and then; if it raises,
/// the run stops and the exception propagates.
#[pyfunction]
#[pyo3(signature = (path, out_dir, case=None, seed=None, progress=None))]
fn run(
    py: Python<'_>,
    path: &str,
    out_dir: &str,
    case: Option<&str>,
    seed: Option<u64>,
    progress: Option<Py<PyAny>>,
) -> PyResult<(String, String)> {
    let f = scenario::ScenarioFile::load(Path::new(path)).map_err(scenario_err)?;
    let (s, r) = f.resolved(case, seed).map_err(scenario_err)?;
    let text = scenario::to_toml(&scenario::with_defaults(&s, &r));
    let mut raised: Option<PyErr> = None;
    let result = py.detach(|| {
        let mut cb = |frac: f64| -> bool {
            Python::attach(|py| {
                if let Err(e) = py.check_signals() {
                    raised = Some(e);
                    return false;
                }
                if let Some(p) = &progress {
                    if let Err(e) = p.call1(py, (frac,)) {
                        raised = Some(e);
                        return false;
                    }
                }
                true
            })
        };
        sim::run_scenario(&r, &text, case, Path::new(out_dir), &mut cb)
    });
    match result {
        Ok(rep) => Ok((rep.summary.to_string(), rep.timing.to_string())),
        Err(sim::RunError::Cancelled) => {
            Err(raised.unwrap_or_else(|| PyKeyboardInterrupt::new_err("run cancelled")))
        }
        Err(e @ sim::RunError::Output(_)) => Err(RunError::new_err(e.to_string())),
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
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("RunError", m.py().get_type::<RunError>())?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(parse_duration, m)?)?;
    m.add_function(wrap_pyfunction!(parse_rate, m)?)?;
    Ok(())
}
