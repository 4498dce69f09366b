//! What can stop an extraction.

use std::fmt;
use std::path::PathBuf;

#[derive(Debug)]
pub enum ExtractError {
    /// A trace that cannot be read: the message names the file, the byte
    /// offset and what was expected (damaged records are skipped, not errors).
    Trace(wire::TraceError),
    /// An option with a value outside what is allowed; the message names the
    /// option and the allowed values.
    Options(String),
    /// A request beyond what fits in memory: the message names the limit.
    Limit(String),
    /// A file that cannot be opened.
    Io { path: PathBuf, err: std::io::Error },
    /// The progress callback asked to stop.
    Cancelled,
}

impl fmt::Display for ExtractError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExtractError::Trace(e) => write!(f, "{e}"),
            ExtractError::Options(m) => write!(f, "extract options: {m}"),
            ExtractError::Limit(m) => write!(f, "{m}"),
            ExtractError::Io { path, err } => write!(f, "{}: cannot open: {err}", path.display()),
            ExtractError::Cancelled => write!(f, "extraction cancelled"),
        }
    }
}

impl std::error::Error for ExtractError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ExtractError::Trace(e) => Some(e),
            ExtractError::Io { err, .. } => Some(err),
            _ => None,
        }
    }
}

impl From<wire::TraceError> for ExtractError {
    fn from(e: wire::TraceError) -> Self {
        ExtractError::Trace(e)
    }
}
