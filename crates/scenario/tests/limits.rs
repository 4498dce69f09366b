//! Values outside their stated ranges, names that are paths, and loads that
//! would exhaust memory or time are refused at load, with the limit named.

mod common;

use common::*;
use scenario::ScenarioFile;
use std::path::Path;

#[test]
fn case_names_are_names_not_paths() {
    for bad in ["../victim", "/abs/dir", ".hidden", "a/b", ""] {
        check(&format!("{BASE}[cases.\"{bad}\"]\n"), &["cases", "is not a usable case name", "do not start with '.'"]);
    }
    let long = "x".repeat(65);
    check(&format!("{BASE}[cases.{long}]\n"), &["not a usable case name"]);
}

#[test]
fn a_resolved_case_names_itself_so_that_running_it_again_records_the_same_case() {
    let f = ScenarioFile::parse("s.toml", Path::new("."), &format!("{BASE}[cases.nbg]\n[cases.lossy]\ntopology.bottleneck.loss = \"1%\"\n")).unwrap();
    let (s, r) = f.resolved(Some("lossy"), None).unwrap();
    let filled = scenario::to_toml(&scenario::with_defaults(&s, &r));
    assert!(filled.contains("case = \"lossy\""), "{filled}");
    let again = ScenarioFile::parse("scenario.toml", Path::new("."), &filled).unwrap();
    let (s2, r2) = again.resolved(None, None).unwrap();
    assert_eq!(s2.case.as_deref(), Some("lossy"));
    assert_eq!(r2, r);
    // A file with cases names them with its tables, not with `case`.
    check(&format!("case = \"x\"\n{BASE}[cases.a]\n"), &["case", "cannot be set in a file with [cases]"]);
    check(&format!("{BASE}[cases.a]\ncase = \"b\"\n"), &["cases.a.case", "cannot be set"]);
    check(&format!("case = \"../x\"\n{BASE}"), &["case", "not a usable case name"]);
}

#[test]
fn values_beyond_their_range_are_refused_not_clamped() {
    check(&BASE.replace("\"15Mbps\"", "\"1e30Mbps\""), &["topology.bottleneck.rate", "out of range", "1000Tbps"]);
    check(&BASE.replace("\"15Mbps\"", "\"1e-30bps\""), &["topology.bottleneck.rate", "out of range", "1bps"]);
    check(&BASE.replace("\"20ms\"", "\"1e-30s\""), &["topology.bottleneck.delay", "out of range", "1ns"]);
    check(&format!("{BASE}[[apps]]\nkind = \"http\"\nobject_size = \"1e30B\""), &["apps[0].object_size", "out of range", "1000TB"]);
    check(&format!("{BASE}queue = \"1e30B\""), &["topology.bottleneck.queue", "out of range"]);
    check(&format!("{BASE}[[background]]\nmodel = \"cbr\"\ntransport = \"udp\"\nrate = \"1e30Mbps\""), &["background[0].rate", "out of range"]);
    check(&format!("{BASE}[[apps]]\nkind = \"http\"\nobject_size = \"1MB\"\nport = 70000"), &["apps[0].port", "70000", "0 to 65535"]);
    check(&format!("{BASE}[tcp]\ninitial_cwnd = 100000"), &["tcp.initial_cwnd", "1 to 1000"]);
    check(&format!("{BASE}[tcp]\nack_every = 1000"), &["tcp.ack_every", "1 (every segment) to 64"]);
    check(&format!("{BASE}[tcp]\nrcv_buf = \"2GiB\""), &["tcp.rcv_buf", "1GiB"]);
}

#[test]
fn loads_that_would_exhaust_memory_or_time_are_refused_with_the_limit_named() {
    check(&BASE.replace("\"10s\"", "\"100000h\""), &["output.series_bin", "bins", "at most 20000000"]);
    // A long run passes with a coarser series.
    let f =
        ScenarioFile::parse("s.toml", Path::new("."), &format!("{}[output]\nseries_bin = \"1s\"\n", BASE.replace("\"10s\"", "\"1000h\""))).unwrap();
    assert!(f.resolved(None, None).is_ok());
    check(&format!("{BASE}[[background]]\nmodel = \"cbr\"\ntransport = \"udp\"\nrate = \"1Mbps\"\nhosts = 1000000000"), &["hosts", "at most 200000"]);
    check(&format!("{BASE}[[apps]]\nkind = \"http\"\nobject_size = \"1MB\"\nclients = 1000000000"), &["hosts", "at most 200000"]);
    check(
        &format!("{BASE}[[background]]\nmodel = \"cbr\"\ntransport = \"udp\"\nrate = \"900Tbps\""),
        &["background[0].rate", "packets", "at most 1e9"],
    );
}

#[test]
fn input_files_are_read_with_a_limit_and_never_quoted() {
    let e = ScenarioFile::load(Path::new("/dev/zero")).unwrap_err().to_string();
    assert!(e.starts_with("/dev/zero: ") && e.contains("larger than 4MiB"), "{e}");
    check(&format!("{BASE}[[apps]]\nkind = \"http\"\nsizes_file = \"/dev/zero\""), &["apps[0].sizes_file", "larger than 64MiB"]);
    let dir = std::env::temp_dir().join(format!("undertow-limits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("secret.txt"), "root:$6$saltsalt$hash:19000:0:99999:7:::\n").unwrap();
    let e = error_in(&dir, &format!("{BASE}[[apps]]\nkind = \"http\"\nsizes_file = \"secret.txt\""));
    assert!(e.contains("secret.txt line 1 is not a size") && !e.contains("root") && !e.contains("hash"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}
