use std::fmt;

/// A scenario that cannot be used, with where and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// The scenario file, as the user named it.
    pub file: String,
    /// Case whose overrides were being applied, if any.
    pub case: Option<String>,
    /// Dotted path of the field, e.g. `topology.bottleneck.rate`; empty for the whole file.
    pub field: String,
    pub message: String,
}

impl ScenarioError {
    pub fn new(file: &str, field: impl Into<String>, message: impl Into<String>) -> ScenarioError {
        ScenarioError { file: file.to_string(), case: None, field: field.into(), message: message.into() }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(c) = &self.case {
            write!(f, ": case {c:?}")?;
        }
        if !self.field.is_empty() {
            write!(f, ": {}", self.field)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ScenarioError {}
