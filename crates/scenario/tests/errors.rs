//! Every kind of bad input gets one message naming file, field and what is allowed.

mod common;

use common::*;
use scenario::ScenarioFile;
use std::path::Path;

#[test]
fn valid_base_loads() {
    let f = ScenarioFile::parse("s.toml", Path::new("."), BASE).unwrap();
    let (s, r) = f.resolved(None, Some(9)).unwrap();
    assert_eq!(s.seed, 9);
    assert_eq!(r.bottleneck[0].rate(), Some(units::Rate::mbps(15)));
    assert_eq!(r.bottleneck[1].elements, r.bottleneck[0].elements, "both directions alike");
}

#[test]
fn unknown_fields() {
    check(&format!("{BASE}ratee = 1"), &["s.toml", "topology.bottleneck.ratee", "unknown field \"ratee\"", "\"rate\", \"delay\""]);
    check(&format!("{BASE}[tcp]\ncc = \"reno\""), &["tcp.cc", "unknown field", "\"congestion_control\""]);
    check(&format!("{BASE}[[apps]]\nkind = \"http\"\nobject_size = \"1MB\"\nsize = 3"), &["apps[0].size", "unknown field"]);
    check(&format!("bogus = 1\n{BASE}"), &["bogus", "unknown field", "\"duration\""]);
}

#[test]
fn bad_units() {
    let with =
        |field: &str, v: &str| BASE.replace(&format!("{field} = \"{}\"", if field == "rate" { "15Mbps" } else { "20ms" }), &format!("{field} = {v}"));
    check(&with("rate", "\"15Mbs\""), &["topology.bottleneck.rate", "\"15Mbs\"", "Mbps", "Gbps"]);
    check(&with("rate", "\"15\""), &["topology.bottleneck.rate", "not a valid rate"]);
    check(&with("delay", "\"20 parsecs\""), &["topology.bottleneck.delay", "ms", "not a valid duration"]);
    check(&with("delay", "20"), &["topology.bottleneck.delay", "20 is not valid here"]);
    check(&format!("{BASE}queue = \"100 bananas\""), &["topology.bottleneck.queue", "\"100p\""]);
    check(&format!("{BASE}loss = \"150%\""), &["topology.bottleneck.loss", "0% to 100%"]);
    check(&format!("{BASE}loss = \"100%\""), &["topology.bottleneck.loss", "less than 100%"]);
    check(&format!("{BASE}[[apps]]\nkind = \"http\"\nobject_size = \"1 megabyte\""), &["apps[0].object_size", "MB", "KiB"]);
}

#[test]
fn negative_and_zero_rates() {
    check(&BASE.replace("\"15Mbps\"", "\"-15Mbps\""), &["topology.bottleneck.rate", "\"-15Mbps\"", "positive"]);
    check(&BASE.replace("\"15Mbps\"", "\"0Mbps\""), &["topology.bottleneck.rate", "\"0Mbps\"", "positive"]);
    check(&format!("{BASE}[topology.access]\nrate = \"0bps\""), &["topology.access.rate", "positive"]);
    check(&format!("{BASE}[[background]]\nmodel = \"cbr\"\ntransport = \"udp\"\nrate = \"0%\""), &["background[0].rate", "\"0%\""]);
    check(&format!("{BASE}[[background]]\nmodel = \"cbr\"\ntransport = \"udp\"\nrate = \"-2Mbps\""), &["background[0].rate", "\"-2Mbps\""]);
}

#[test]
fn missing_files_and_fields() {
    check(
        &format!("{BASE}[[apps]]\nkind = \"http\"\nsizes_file = \"sizes.txt\""),
        &["apps[0].sizes_file", "\"sizes.txt\" not found", "/nonexistent-dir/sizes.txt"],
    );
    check("duration = \"1s\"\n[topology.bottleneck]\nrate = \"1Mbps\"", &["topology.bottleneck", "missing required field \"delay\""]);
    check(&format!("{BASE}[[background]]\nmodel = \"cbr\"\nrate = \"1Mbps\""), &["background[0]", "\"transport\""]);
    check(&format!("{BASE}[[apps]]\nkind = \"http\""), &["apps[0]", "\"object_size\""]);
    let e = ScenarioFile::load(Path::new("/no/such/scenario.toml")).unwrap_err().to_string();
    assert_eq!(e, "/no/such/scenario.toml: no such file");
}

#[test]
fn wrong_choices_and_types() {
    check(&format!("{BASE}[[background]]\nmodel = \"pareto\""), &["background[0].model", "\"cbr\", \"poisson\", \"greedy\""]);
    check(
        &format!("{BASE}[[background]]\nmodel = \"greedy\"\npacket_size = \"1KB\""),
        &["background[0].packet_size", "does not apply to model \"greedy\""],
    );
    check(&format!("{BASE}[[background]]\nmodel = \"greedy\"\nhosts = -3"), &["background[0].hosts", "-3", "whole number"]);
    check(&format!("{BASE}[[background]]\nmodel = \"greedy\"\nhosts = 0"), &["background[0].hosts", "at least 1"]);
    check(&format!("{BASE}[tcp]\ncongestion_control = \"vegas\""), &["tcp.congestion_control", "\"vegas\"", "\"cubic\""]);
    check(&format!("{BASE}[tcp]\nsack = \"yes\""), &["tcp.sack", "true or false"]);
    check(&format!("{BASE}[tcp]\nmin_rto = \"2s\"\nmax_rto = \"1s\""), &["tcp.min_rto", "above max_rto"]);
    check(&format!("{BASE}[tcp]\nflavour = \"ns3\"\necn = true"), &["tcp.ecn", "not modelled with ns-3", "expected false"]);
    check("duration = \n", &["not valid TOML at line 1, column"]);
}

#[test]
fn cases_and_baseline() {
    check(&format!("baseline = \"b\"\n{BASE}[cases.a]"), &["baseline", "\"b\" is not a case", "a"]);
    check(&format!("{BASE}[cases.fast]\ntopology.bottleneck.rate = \"lots\""), &["case \"fast\"", "topology.bottleneck.rate", "\"lots\""]);
    let f =
        ScenarioFile::parse("s.toml", Path::new("."), &format!("baseline = \"a\"\n{BASE}[cases.a]\n[cases.b]\ntopology.bottleneck.loss = \"1%\""))
            .unwrap();
    assert_eq!(f.cases, vec!["a", "b"]);
    let (_, rb) = f.resolved(Some("b"), None).unwrap();
    assert!(matches!(&rb.bottleneck[0].elements[0], net::ElementSpec::Loss { model: net::LossModel::Bernoulli { p }, .. } if *p == 0.01));
    assert_eq!(rb.bottleneck[0].rate(), Some(units::Rate::mbps(15)), "a case keeps the base fields it does not override");
}

#[test]
fn names_must_be_unique_and_usable() {
    check(
        &format!("{BASE}[[background]]\nmodel = \"greedy\"\nname = \"x\"\n[[background]]\nmodel = \"greedy\"\nname = \"x\""),
        &["named \"x\"", "unique"],
    );
    check(&format!("{BASE}[[background]]\nmodel = \"greedy\"\nname = \"a/b\""), &["\"a/b\" is not a usable name"]);
}

#[test]
fn filled_scenario_round_trips() {
    let text =
        format!("{BASE}[[apps]]\nkind = \"http\"\nobject_size = \"1MB\"\n[[background]]\nmodel = \"poisson\"\ntransport = \"tcp\"\nrate = \"66%\"\n");
    let f = ScenarioFile::parse("s.toml", Path::new("."), &text).unwrap();
    let (s, r) = f.resolved(None, None).unwrap();
    let filled = scenario::to_toml(&scenario::with_defaults(&s, &r));
    let g = ScenarioFile::parse("filled.toml", Path::new("."), &filled).unwrap_or_else(|e| panic!("{e}\n{filled}"));
    let (_, r2) = g.resolved(None, None).unwrap();
    assert_eq!(r, r2, "the filled scenario resolves to the same settings:\n{filled}");
    for field in ["congestion_control", "min_rto", "series_bin", "packet_size", "request_size"] {
        assert!(filled.contains(field), "{field} missing from the filled scenario:\n{filled}");
    }
}

/// A bottleneck path of `elements` (TOML inline tables) on BASE's duration.
fn path(elements: &str) -> String {
    format!("duration = \"10s\"\n[topology.bottleneck]\npath = [{elements}]\n")
}

#[test]
fn diffserv_elements_and_disciplines_refuse_bad_values_by_name() {
    let q = r#"{ element = "queue", rate = "10Mbps""#;
    check(&path(&format!("{q}, discipline = \"rio\" }}")), &["topology.bottleneck.path[0]", "\"precedences\"", "\"rio\""]);
    check(
        &path(&format!("{q}, discipline = \"rio\", precedences = [{{ min_th = 5, max_th = 15, max_p = 0.1 }}] }}")),
        &["path[0].precedences", "two or three"],
    );
    let two = "[{ min_th = 40, max_th = 70, max_p = 0.02 }, { min_th = 30, max_th = 10, max_p = 0.1 }]";
    check(&path(&format!("{q}, discipline = \"rio\", precedences = {two} }}")), &["path[0].precedences[1]", "min_th < max_th"]);
    let p = "[{ min_th = 40, max_th = 70, max_p = 0.02 }, { min_th = 10, max_th = 40, max_p = 1.5 }]";
    check(&path(&format!("{q}, discipline = \"rio\", precedences = {p} }}")), &["path[0].precedences[1].max_p", "1.5", "at most 1"]);
    check(&path(&format!("{q}, precedences = {p} }}")), &["path[0].precedences", "does not apply to discipline \"droptail\""]);
    let ok = "[{ min_th = 40, max_th = 70, max_p = 0.02 }, { min_th = 10, max_th = 40, max_p = 0.1 }]";
    check(&path(&format!("{q}, discipline = \"rio\", flavour = \"dsred\", precedences = {ok} }}")), &["path[0].flavour", "\"dsred\"", "\"ns2\""]);
    check(&path(&format!("{q}, discipline = \"red\", flavour = \"ns2\" }}")), &["path[0].flavour", "does not apply to discipline \"red\""]);
    check(&path(&format!("{q}, discipline = \"wrr\" }}")), &["path[0]", "\"classes\""]);
    check(&path(&format!("{q}, discipline = \"wrr\", classes = [{{ class = 1, weight = 0 }}] }}")), &["path[0].classes[0].weight", "at least 1"]);
    check(&path(&format!("{q}, discipline = \"rr\", classes = [{{ class = 1, weight = 3 }}] }}")), &["path[0].classes[0].weight", "\"wrr\""]);
    check(&path(&format!("{q}, discipline = \"wrr\", classes = [{{ class = 9 }}] }}")), &["path[0].classes[0].class", "0 to 7"]);
    check(&path(&format!("{q}, discipline = \"wrr\", classes = [{{ class = 1 }}, {{ class = 1 }}] }}")), &["path[0].classes[1].class", "twice"]);
    check(&path(&format!("{q}, discipline = \"fq\" }}")), &["path[0].discipline", "\"fq\"", "\"rio\""]);
    check(&path(r#"{ element = "tswtcm", cir = "5Mbps", pir = "2Mbps" }"#), &["path[0].pir", "expected pir >= cir"]);
    check(&path(r#"{ element = "tswtcm", cir = "5Mbps", window = "0s" }"#), &["path[0].window", "above 0s"]);
    check(&path(r#"{ element = "tswtcm", cir = "5Mbps", others = "blue" }"#), &["path[0].others", "\"blue\"", "\"red\""]);
    check(&path(r#"{ element = "tswtcm" }"#), &["path[0]", "\"cir\""]);
}

#[test]
fn web_flows_refuse_bad_values_by_name() {
    let web = format!("{BASE}[[background]]\nmodel = \"web\"\n");
    check(&format!("{web}flows_per_s = 10"), &["background[0]", "flow_sizes, pareto or lognormal"]);
    check(&format!("{web}flow_sizes = [[\"10KB\", 1.0]]"), &["background[0]", "flows_per_s or load"]);
    check(&format!("{web}flows_per_s = 10\nload = \"50%\"\nflow_sizes = [[\"10KB\", 1.0]]"), &["background[0]", "not both"]);
    check(&format!("{web}flows_per_s = -1\nflow_sizes = [[\"10KB\", 1.0]]"), &["background[0].flows_per_s", "above 0"]);
    check(&format!("{web}flows_per_s = 1\nflow_sizes = [[\"10KB\", 0.0]]"), &["background[0].flow_sizes[0]", "weight above 0"]);
    check(&format!("{web}flows_per_s = 1\nflow_sizes = []"), &["background[0].flow_sizes", "is empty"]);
    check(&format!("{web}flows_per_s = 1\npareto = {{ alpha = 1.2, min = \"10KB\", max = \"1KB\" }}"), &["background[0].pareto", "min < max"]);
    check(
        &format!("{web}flows_per_s = 1\npareto = {{ alpha = 1.2, min = \"1KB\", max = \"10KB\" }}\nlognormal = {{ median = \"1KB\", sigma = 1 }}"),
        &["background[0]", "one of flow_sizes, pareto and lognormal"],
    );
    check(&format!("{web}flows_per_s = 1\nflow_sizes = [[\"10KB\", 1.0]]\nclass = 8"), &["background[0].class", "0 (best effort) to 7"]);
    check(&format!("{web}flows_per_s = 1e9\nflow_sizes = [[\"10KB\", 1.0]]"), &["background[0].flows_per_s", "at most"]);
}

#[test]
fn bad_queue_disciplines() {
    let q = |rest: &str| format!("duration = \"10s\"\n[topology.bottleneck]\npath = [{{ element = \"queue\", rate = \"10Mbps\", {rest} }}]\n");
    check(
        &q("discipline = \"blue\""),
        &["s.toml", "topology.bottleneck.path[0].discipline", "\"blue\"", "\"droptail\", \"red\", \"codel\", \"pie\""],
    );
    check(&q("red = { thresh = 5, maxthresh = 3 }"), &["topology.bottleneck.path[0].red.maxthresh", "not above thresh", "maxthresh > thresh"]);
    check(&q("red = { q_weight = 1.5 }"), &["path[0].red.q_weight", "1.5", "(0, 1]", "0, -1 or -2"]);
    check(&q("red = { linterm = 0.5 }"), &["path[0].red.linterm", "1 or more"]);
    check(&q("red = { thresh = -1 }"), &["path[0].red.thresh", "0 or more"]);
    check(&q("red = { mean_pktsize = 0 }"), &["path[0].red.mean_pktsize", "1 to 4294967295 bytes"]);
    check(&q("red = { mark_p = 0 }"), &["path[0].red.mark_p", "(0, 1]"]);
    check(&q("red = { adaptive = true, beta = 1.5 }"), &["path[0].red.beta", "a factor in (0, 1]"]);
    check(&q("red = { bottom = -0.1 }"), &["path[0].red.bottom", "or 0"]);
    check(&q("red = { interval = \"0s\" }"), &["path[0].red.interval", "above 0s"]);
    check(&q("red = { threshold = 5 }"), &["path[0].red.threshold", "unknown field", "\"thresh\""]);
    check(&q("discipline = \"codel\", red = { thresh = 5 }"), &["path[0].red", "red parameters on a codel queue"]);
    check(&q("red = {}, pie = {}"), &["path[0].pie", "one discipline"]);
    check(&q("codel = { target = \"0ms\" }"), &["path[0].codel.target", "above 0s"]);
    check(&q("pie = { alpha = -0.1 }"), &["path[0].pie.alpha", "0 or more"]);
    check(&q("pie = { t_update = \"soon\" }"), &["path[0].pie.t_update", "\"soon\""]);
}
