//! The one place Rust errors become Python exceptions.

use pyo3::PyErr;

pub fn scenario_err(e: scenario::ScenarioError) -> PyErr {
    crate::ScenarioError::new_err(e.to_string())
}

pub fn input_err(message: impl Into<String>) -> PyErr {
    crate::InputError::new_err(message.into())
}
