//! Arbitrary text as a scenario file: loading never panics, and a scenario
//! that loads, written out with every default, loads to the same settings.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scenario::ScenarioFile;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    // Relative files (models, sizes) are looked for where none exist.
    let Ok(f) = ScenarioFile::parse("fuzz.toml", Path::new("/nonexistent-fuzz-dir"), text) else { return };
    let cases: Vec<Option<String>> = std::iter::once(None).chain(f.cases.iter().cloned().map(Some)).collect();
    for case in cases {
        let Ok((s, r)) = f.resolved(case.as_deref(), None) else { continue };
        let filled = scenario::to_toml(&scenario::with_defaults(&s, &r));
        let again = ScenarioFile::parse("filled.toml", Path::new("/nonexistent-fuzz-dir"), &filled)
            .unwrap_or_else(|e| panic!("the filled scenario does not load: {e}\n{filled}"));
        let (_, r2) = again.resolved(None, None).unwrap_or_else(|e| panic!("the filled scenario does not resolve: {e}\n{filled}"));
        assert_eq!(r, r2, "the filled scenario resolves to other settings:\n{filled}");
    }
});
