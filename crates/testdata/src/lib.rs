//! What the integration tests of several crates need about the shared real
//! traces: where they are, what their README says of them, and tshark to
//! compare with.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Every pcap and pcapng of shared/traces: name, packets and wire bytes
/// ("Bytes (wire)") from its README.
pub const PCAPS: &[(&str, u64, u64)] = &[
    ("caida-nyc-2018.pcapng", 10_000, 9_259_300),
    ("auckland-atm-2000.pcap", 31_249, 8_023_844),
    ("web-ynet-2013.pcap", 4_631, 3_738_523),
    ("web-espn-2010.pcapng", 956, 652_181),
    ("web-reddit-tls.pcap", 1_942, 713_996),
    ("app-alexa.pcapng", 3_103, 1_171_135),
    ("video-netflix.pcap", 1_793, 1_006_416),
    ("http-bro-org.pcap", 751, 494_493),
    ("tls-firefox.pcap", 667, 458_067),
    ("quic-firefox-google.pcap", 441, 427_135),
    ("dns-recursive.pcapng", 4, 336),
];

/// The shared real traces: $UNDERTOW_TRACES, else ../shared/traces beside
/// the workspace. Missing is a failure, not a skip: these tests are the
/// check on real data.
pub fn traces_dir() -> PathBuf {
    let dir = match std::env::var_os("UNDERTOW_TRACES") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces"),
    };
    assert!(
        dir.join("README.md").is_file(),
        "trace directory not found: looked in {} (set UNDERTOW_TRACES to the shared traces folder)",
        dir.display()
    );
    dir
}

/// One shared trace, which must exist.
pub fn trace(name: &str) -> PathBuf {
    let p = traces_dir().join(name);
    assert!(p.is_file(), "missing trace {}", p.display());
    p
}

/// True if tshark runs; otherwise says why the live comparison is skipped.
pub fn have_tshark() -> bool {
    match Command::new("tshark").arg("--version").output() {
        Ok(o) if o.status.success() => true,
        _ => {
            eprintln!("tshark not on PATH: skipping the live tshark comparison (install the tshark package to run it)");
            false
        }
    }
}

/// Runs tshark on `file` with extra arguments, returning stdout lines.
pub fn tshark(file: &Path, args: &[&str]) -> Vec<String> {
    let out = Command::new("tshark")
        .arg("-r")
        .arg(file)
        .args(["-o", "ip.defragment:FALSE", "-o", "ipv6.defragment:FALSE"])
        .args(args)
        .output()
        .expect("run tshark");
    assert!(out.status.success(), "tshark failed on {}: {}", file.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect()
}
