//! What the scenario crate's tests share: a small valid scenario, and the
//! one-line error a bad one gives.

#![allow(dead_code)]

use scenario::ScenarioFile;
use std::path::Path;

/// A valid scenario to add fields to.
pub const BASE: &str = r#"
duration = "10s"
[topology.bottleneck]
rate = "15Mbps"
delay = "20ms"
"#;

/// The error `text` (base and every case) gives, relative files looked
/// for in `dir`; panics if it loads.
pub fn error_in(dir: &Path, text: &str) -> String {
    match ScenarioFile::parse("s.toml", dir, text).and_then(|f| {
        f.scenario(None)?;
        for c in &f.cases {
            f.scenario(Some(c))?;
        }
        Ok(())
    }) {
        Ok(()) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

pub fn error(text: &str) -> String {
    error_in(Path::new("/nonexistent-dir"), text)
}

/// `text` is refused in one short line holding every one of `wants`.
pub fn check(text: &str, wants: &[&str]) {
    let e = error(text);
    assert!(!e.contains('\n') && e.len() < 500, "not one short line: {e}");
    for w in wants {
        assert!(e.contains(w), "message {e:?} lacks {w:?}");
    }
}
