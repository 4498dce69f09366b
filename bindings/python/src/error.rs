//! The one place Rust errors become Python exceptions.

use pyo3::PyErr;

pub fn scenario_err(e: scenario::ScenarioError) -> PyErr {
    crate::ScenarioError::new_err(e.to_string())
}
