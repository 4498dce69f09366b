//! Background models and applications are tagged tables: the tag (`model`,
//! `kind`) decides which fields the table may hold, and every error inside
//! one names its whole path.

mod common;

use common::*;
use scenario::{BackgroundSpec, ModelSpec, Scenario, ScenarioFile};
use std::path::{Path, PathBuf};

fn refuses(text: &str, unwanted: &str) {
    let e = error(text);
    assert!(!e.contains(unwanted), "message {e:?} has {unwanted:?}");
}

/// A swing model file from the repository (a short simulated run).
fn swing_model_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/model_loader/simulated.json").canonicalize().unwrap()
}

#[test]
fn a_field_of_another_model_is_refused_naming_the_model_and_the_fields_it_allows() {
    let greedy = format!("{BASE}[[background]]\nmodel = \"greedy\"\npacket_size = \"1KB\"");
    check(&greedy, &["s.toml: background[0].packet_size: does not apply to model \"greedy\"", "allowed fields are", "\"hosts\", ", "\"spread\""]);
    refuses(&greedy, "\"packet_size\"; ");
    check(
        &format!("{BASE}[[background]]\nmodel = \"cbr\"\ntransport = \"udp\"\nrate = \"1Mbps\"\nspread = \"1s\""),
        &["background[0].spread: does not apply to model \"cbr\"", "\"transport\", \"rate\", \"packet_size\""],
    );
    check(
        &format!("{BASE}[[background]]\nmodel = \"swing\"\nfile = \"m.json\"\nrate = \"1Mbps\""),
        &["background[0].rate: does not apply to model \"swing\"", "\"file\", \"session_scale\""],
    );
    // In a case, and in the second table.
    check(
        &format!("{BASE}[cases.x]\nbackground = [{{ model = \"greedy\" }}, {{ model = \"poisson\", transport = \"tcp\", rate = \"1%\", zero_think = true }}]"),
        &["case \"x\": background[1].zero_think: does not apply to model \"poisson\""],
    );
}

#[test]
fn an_unknown_field_is_refused_with_the_fields_of_its_model_only() {
    let text = format!("{BASE}[[background]]\nmodel = \"cbr\"\ntransport = \"udp\"\nrate = \"1Mbps\"\nbogus = 1");
    check(
        &text,
        &["background[0].bogus: unknown field \"bogus\"; allowed fields are \"model\", \"name\", \"hosts\", \"direction\", \"start\", \"stop\", \"access\", \"tcp\", \"line\", \"class\", \"transport\", \"rate\", \"packet_size\""],
    );
    refuses(&text, "\"spread\"");
    check(
        &format!("{BASE}[[apps]]\nkind = \"http\"\nobject_size = \"1MB\"\nmodel = \"cbr\""),
        &["apps[0].model: unknown field \"model\"; allowed fields are \"kind\", \"name\", \"object_size\""],
    );
}

#[test]
fn errors_inside_a_model_or_an_application_name_the_whole_path() {
    let cbr = |extra: &str| format!("{BASE}[[background]]\nmodel = \"cbr\"\ntransport = \"udp\"\nrate = \"1Mbps\"\n{extra}");
    check(&cbr("packet_size = \"big\""), &["background[0].packet_size: \"big\" is not a valid size"]);
    check(&cbr("hosts = -3"), &["background[0].hosts: integer \"-3\" is not allowed here"]);
    check(&cbr("start = \"later\""), &["background[0].start: \"later\" is not a valid duration"]);
    check(&cbr("access = { rate = \"x\" }"), &["background[0].access.rate: \"x\" is not a valid rate"]);
    check(&cbr("access = { rat = \"1Mbps\" }"), &["background[0].access.rat: unknown field \"rat\""]);
    check(&cbr("tcp = { congestion_control = \"vegas\" }"), &["background[0].tcp.congestion_control: \"vegas\" is not allowed", "\"cubic\""]);
    check(
        &format!("{BASE}[[background]]\nmodel = \"cbr\"\ntransport = \"udp\"\nrate = \"fast\""),
        &["background[0].rate: \"fast\" is not a valid rate", "\"66%\""],
    );
    check(
        &format!("{BASE}[[background]]\nmodel = \"swing\"\nfile = \"m.json\"\nsession_scale = \"lots\""),
        &["background[0].session_scale: string \"lots\" is not allowed here"],
    );
    check(
        &format!("{BASE}[[background]]\nmodel = \"greedy\"\n[[background]]\nmodel = \"greedy\"\nspread = 3"),
        &["background[1].spread: 3 is not valid here"],
    );
    let http = |extra: &str| format!("{BASE}[[apps]]\nkind = \"http\"\nobject_size = \"1MB\"\n{extra}");
    check(&http("port = 70000"), &["apps[0].port: integer \"70000\" is not allowed here", "0 to 65535"]);
    check(&http("client = { tcp = { sack = \"yes\" } }"), &["apps[0].client.tcp.sack: string \"yes\" is not allowed here: expected true or false"]);
    check(&http("server = { acces = {} }"), &["apps[0].server.acces: unknown field \"acces\""]);
    check(
        &format!("{BASE}[cases.c]\napps = [{{ kind = \"http\", object_size = \"1 megabyte\" }}]"),
        &["case \"c\": apps[0].object_size: \"1 megabyte\""],
    );
}

#[test]
fn the_path_is_whole_when_the_tag_comes_after_the_field() {
    check(
        &format!("{BASE}[[background]]\nrate = \"fast\"\ntransport = \"udp\"\nmodel = \"cbr\""),
        &["background[0].rate: \"fast\" is not a valid rate"],
    );
    check(
        &format!("background = [{{ name = \"x\", spread = \"1s\", model = \"swing\", file = \"m.json\" }}]\n{BASE}"),
        &["background[0].spread: does not apply to model \"swing\""],
    );
    check(&format!("{BASE}[[apps]]\nobject_size = \"1 megabyte\"\nkind = \"http\""), &["apps[0].object_size: \"1 megabyte\""]);
}

#[test]
fn a_missing_or_unknown_tag_names_the_models_or_kinds_there_are() {
    check(
        &format!("{BASE}[[background]]\nhosts = 3"),
        &["background[0]: missing required field \"model\": expected one of \"cbr\", \"poisson\", \"greedy\", \"swing\", \"playback\", \"sine\", \"fgn\", \"noise\""],
    );
    check(&format!("{BASE}[[background]]\n"), &["background[0]: missing required field \"model\""]);
    check(
        &format!("{BASE}[[background]]\nmodel = \"pareto\"\nrate = \"1Mbps\""),
        &["background[0].model: \"pareto\" is not allowed: expected one of \"cbr\", \"poisson\", \"greedy\", \"swing\", \"playback\", \"sine\", \"fgn\", \"noise\""],
    );
    check(&format!("{BASE}[[background]]\nmodel = 3"), &["background[0].model: integer \"3\" is not allowed here: expected one of \"cbr\""]);
    check(&format!("background = [3]\n{BASE}"), &["background[0]: integer \"3\" is not allowed here: expected a table with a \"model\" field"]);
    check(&format!("{BASE}[[apps]]\nobject_size = \"1MB\""), &["apps[0]: missing required field \"kind\": expected \"http\""]);
    check(&format!("{BASE}[[apps]]\nkind = \"ftp\""), &["apps[0].kind: \"ftp\" is not allowed: expected \"http\""]);
}

#[test]
fn a_model_without_its_required_fields_is_refused_naming_them() {
    check(&format!("{BASE}[[background]]\nmodel = \"cbr\"\nrate = \"1Mbps\""), &["background[0]: missing required field \"transport\""]);
    check(&format!("{BASE}[[background]]\nmodel = \"poisson\"\ntransport = \"tcp\""), &["background[0]: missing required field \"rate\""]);
    check(&format!("{BASE}[[background]]\nmodel = \"swing\"\nstructure = \"sessions\""), &["background[0]: missing required field \"file\""]);
}

#[test]
fn choice_fields_refuse_other_values_naming_the_choices() {
    let bg = |model: &str| format!("{BASE}[[background]]\nmodel = \"{model}\"\n");
    check(
        &format!("{}transport = \"sctp\"\nrate = \"1%\"", bg("cbr")),
        &["background[0].transport: \"sctp\" is not allowed: expected \"udp\" or \"tcp\""],
    );
    check(
        &format!("{}transport = 3\nrate = \"1%\"", bg("cbr")),
        &["background[0].transport: integer \"3\" is not allowed here: expected \"udp\" or \"tcp\""],
    );
    check(&format!("{}direction = \"up\"", bg("greedy")), &["background[0].direction: \"up\" is not allowed: expected \"forward\" or \"reverse\""]);
    // Refused by the schema, before the model file is looked for.
    check(
        &format!("{}file = \"no-such.json\"\nstructure = \"whole\"", bg("swing")),
        &["background[0].structure: \"whole\" is not allowed: expected \"marginals\" or \"sessions\""],
    );
    check(
        &format!("{BASE}[[apps]]\nkind = \"http\"\nobject_size = \"1MB\"\nserver_side = \"middle\""),
        &["apps[0].server_side: \"middle\" is not allowed: expected \"left\" or \"right\""],
    );
    check(
        &format!("{BASE}[tcp]\ncongestion_control = \"vegas\""),
        &["tcp.congestion_control: \"vegas\" is not allowed: expected one of \"tahoe\", \"reno\", \"newreno\", \"cubic\""],
    );
    check(&format!("{BASE}[topology]\nkind = \"ring\""), &["topology.kind: \"ring\" is not allowed: expected \"dumbbell\""]);
}

#[test]
fn every_model_and_its_common_fields_survive_the_filled_scenario() {
    let model = swing_model_file();
    let text = format!(
        r#"{BASE}
[[background]]
model = "cbr"
transport = "udp"
rate = "1Mbps"
packet_size = "500B"
hosts = 3
direction = "reverse"
start = "1s"
stop = "9s"
access = {{ rate = "100Mbps", delay = "2ms" }}
tcp = {{ congestion_control = "reno" }}
[[background]]
name = "p"
model = "poisson"
transport = "tcp"
rate = "10%"
tcp = {{ sack = false }}
[[background]]
model = "greedy"
spread = "2s"
[[background]]
model = "swing"
file = {model:?}
structure = "sessions"
zero_think = true
rtt = "4ms"
access_cap = "2Mbps"
session_scale = 2.0
direction = "reverse"
[[apps]]
kind = "http"
object_size = "1MB"
server_side = "right"
client = {{ tcp = {{ congestion_control = "tahoe" }} }}
"#
    );
    let f = ScenarioFile::parse("s.toml", Path::new("."), &text).unwrap_or_else(|e| panic!("{e}"));
    let (s, r) = f.resolved(None, None).unwrap();
    let kinds: Vec<String> = s.background.iter().map(|b| b.model.kind().to_string()).collect();
    assert_eq!(kinds, ["cbr", "poisson", "greedy", "swing"]);
    assert!(matches!(&s.background[3], BackgroundSpec { model: ModelSpec::Swing(m), .. } if m.zero_think == Some(true)));
    let filled = scenario::to_toml(&scenario::with_defaults(&s, &r));
    let g = ScenarioFile::parse("filled.toml", Path::new("."), &filled).unwrap_or_else(|e| panic!("{e}\n{filled}"));
    let (s2, r2) = g.resolved(None, None).unwrap();
    assert_eq!(r, r2, "the filled scenario resolves to the same settings:\n{filled}");
    // Filled twice, the scenario is the same.
    assert_eq!(scenario::with_defaults(&s2, &r2), s2);
    for tag in ["model = \"cbr\"", "model = \"poisson\"", "model = \"greedy\"", "model = \"swing\"", "kind = \"http\"", "[background.access]"] {
        assert!(filled.contains(tag), "{tag} missing from the filled scenario:\n{filled}");
    }
}

#[test]
fn a_scenario_deserialized_directly_takes_its_tags_anywhere_in_a_table() {
    // Not through ScenarioFile (which puts tags first): the same scenario either way.
    let text = format!(
        "background = [{{ rate = \"1Mbps\", transport = \"udp\", model = \"cbr\" }}]\napps = [{{ object_size = \"1MB\", kind = \"http\" }}]\n{BASE}"
    );
    let direct: Scenario = toml::from_str(&text).unwrap();
    let loaded = ScenarioFile::parse("s.toml", Path::new("."), &text).unwrap().scenario(None).unwrap();
    assert_eq!(direct, loaded);
    let e = toml::from_str::<Scenario>(&format!("background = [{{ spread = \"1s\", model = \"cbr\" }}]\n{BASE}")).unwrap_err().to_string();
    assert!(e.contains("does not apply to model \"cbr\""), "{e}");
}

#[test]
fn a_missing_required_field_says_what_it_takes() {
    let base = "duration = \"10s\"\n[topology.bottleneck]\nrate = \"15Mbps\"\ndelay = \"20ms\"\n";
    let e = |extra: &str| {
        scenario::ScenarioFile::parse("s.toml", std::path::Path::new("/nonexistent"), &format!("{base}{extra}"))
            .and_then(|f| f.scenario(None))
            .unwrap_err()
            .to_string()
    };
    assert!(e("[[background]]\nmodel = \"cbr\"\nrate = \"1Mbps\"").contains("missing required field \"transport\" (\"udp\" or \"tcp\")"));
    assert!(e("[[background]]\nmodel = \"swing\"").contains("missing required field \"file\" (a model from `undertow extract`)"));
    assert!(e("[[background]]\nmodel = \"poisson\"\ntransport = \"udp\"").contains("missing required field \"rate\" (a rate such as"));
}

#[test]
fn tso_deferral_can_be_turned_off_for_a_group_and_the_filled_scenario_keeps_it() {
    let text = format!("{BASE}[[background]]\nmodel = \"greedy\"\ntcp = {{ tso_defer = false }}\n[[apps]]\nkind = \"http\"\nobject_size = \"1MB\"\n");
    let f = ScenarioFile::parse("s.toml", Path::new("."), &text).unwrap_or_else(|e| panic!("{e}"));
    let (s, r) = f.resolved(None, None).unwrap();
    let filled = scenario::to_toml(&scenario::with_defaults(&s, &r));
    // Written only where it leaves Linux's behaviour.
    assert_eq!(filled.matches("tso_defer = false").count(), 1, "{filled}");
    let (_, r2) = ScenarioFile::parse("filled.toml", Path::new("."), &filled).unwrap().resolved(None, None).unwrap();
    assert_eq!(r, r2);
    let (_, on) =
        ScenarioFile::parse("s.toml", Path::new("."), &text.replace("tso_defer = false", "tso_defer = true")).unwrap().resolved(None, None).unwrap();
    assert_ne!(r, on, "tso_defer reaches the resolved TCP settings");
}

#[test]
fn hystart_can_be_turned_off_for_a_group_and_the_filled_scenario_keeps_it() {
    let text = format!("{BASE}[[background]]\nmodel = \"greedy\"\ntcp = {{ hystart = false }}\n[[apps]]\nkind = \"http\"\nobject_size = \"1MB\"\n");
    let f = ScenarioFile::parse("s.toml", Path::new("."), &text).unwrap_or_else(|e| panic!("{e}"));
    let (s, r) = f.resolved(None, None).unwrap();
    let filled = scenario::to_toml(&scenario::with_defaults(&s, &r));
    // Linux's default for the apps, the group's own setting for the greedy sources.
    assert!(filled.contains("hystart = false") && filled.contains("hystart = true"), "{filled}");
    let (_, r2) = ScenarioFile::parse("filled.toml", Path::new("."), &filled).unwrap().resolved(None, None).unwrap();
    assert_eq!(r, r2);
    let (_, on) =
        ScenarioFile::parse("s.toml", Path::new("."), &text.replace("hystart = false", "hystart = true")).unwrap().resolved(None, None).unwrap();
    assert_ne!(r, on, "hystart reaches the resolved TCP settings");
}

#[test]
fn the_ns2_flavour_fills_in_ns2s_settings_under_the_fields_a_scenario_sets() {
    let text = format!("{BASE}[tcp]\nflavour = \"ns2\"\nmin_rto = \"1s\"\n[[background]]\nmodel = \"greedy\"\n");
    let f = ScenarioFile::parse("s.toml", Path::new("."), &text).unwrap_or_else(|e| panic!("{e}"));
    let (s, r) = f.resolved(None, None).unwrap();
    let filled = scenario::to_toml(&scenario::with_defaults(&s, &r));
    for want in [
        "congestion_control = \"reno\"",
        "initial_cwnd = 2",
        "ack_every = 1",
        "sack = false",
        "initial_rto = \"3s\"",
        "min_rto = \"1s\"",
        "idle_restart = false",
        "rto_tick = \"10ms\"",
        "loss_response = \"ns2\"",
        "partial_ack_timer = \"first\"",
        "ooo_shrinks_window = false",
        "packet_window = false",
        "ack_pushed = false",
        "delayed_fin_ack = false",
    ] {
        assert!(filled.contains(want), "{want} missing from\n{filled}");
    }
    assert!(!filled.contains("flavour"), "the filled file names the values, not the preset");
    let (_, r2) = ScenarioFile::parse("filled.toml", Path::new("."), &filled).unwrap().resolved(None, None).unwrap();
    assert_eq!(r, r2, "the filled scenario resolves to the same settings");
    // Linux's defaults write none of the ns-2 fields.
    let (s, r) =
        ScenarioFile::parse("s.toml", Path::new("."), &format!("{BASE}[[background]]\nmodel = \"greedy\"\n")).unwrap().resolved(None, None).unwrap();
    let linux = scenario::to_toml(&scenario::with_defaults(&s, &r));
    for absent in [
        "limited_transmit",
        "idle_restart",
        "rack",
        "tlp",
        "rto_estimator",
        "rto_tick",
        "loss_response",
        "partial_ack_timer",
        "ooo_shrinks_window",
        "packet_window",
        "ack_pushed",
        "delayed_fin_ack",
    ] {
        assert!(!linux.contains(absent), "{absent} in\n{linux}");
    }
}

#[test]
fn rfc_6298_rfc_6675_and_no_probe_are_chosen_by_name_and_written_back() {
    let text = format!("{BASE}[tcp]\nrto_estimator = \"rfc6298\"\nrack = false\ntlp = false\n[[background]]\nmodel = \"greedy\"\n");
    let f = ScenarioFile::parse("s.toml", Path::new("."), &text).unwrap_or_else(|e| panic!("{e}"));
    let (s, r) = f.resolved(None, None).unwrap();
    let filled = scenario::to_toml(&scenario::with_defaults(&s, &r));
    assert!(filled.contains("rto_estimator = \"rfc6298\"") && filled.contains("rack = false") && filled.contains("tlp = false"), "{filled}");
    let (_, r2) = ScenarioFile::parse("filled.toml", Path::new("."), &filled).unwrap().resolved(None, None).unwrap();
    assert_eq!(r, r2);
    let text = format!("{BASE}[tcp]\nrto_estimator = \"bsd\"\n[[background]]\nmodel = \"greedy\"\n");
    let e = ScenarioFile::parse("s.toml", Path::new("."), &text).and_then(|f| f.resolved(None, None).map(|_| ())).unwrap_err().to_string();
    assert!(e.contains("rto_estimator") && e.contains("rfc6298"), "{e}");
}

#[test]
fn the_ns3_flavour_fills_in_ns3s_settings_under_the_fields_a_scenario_sets() {
    let text = format!("{BASE}[tcp]\nflavour = \"ns3\"\nsack = false\nrcv_buf = \"19200B\"\n[[background]]\nmodel = \"greedy\"\n");
    let f = ScenarioFile::parse("s.toml", Path::new("."), &text).unwrap_or_else(|e| panic!("{e}"));
    let (s, r) = f.resolved(None, None).unwrap();
    let filled = scenario::to_toml(&scenario::with_defaults(&s, &r));
    for want in [
        "congestion_control = \"newreno\"",
        "sack = false",
        "rcv_buf = \"19200B\"",
        "snd_buf = \"131072B\"",
        "quickack = 0",
        "delack_timeout = \"200ms\"",
        "min_rto = \"1s\"",
        "initial_rto = \"3s\"",
        "byte_counting = false",
        "idle_restart = false",
        "loss_response = \"ns3\"",
        "partial_ack_timer = \"first\"",
        "ooo_shrinks_window = false",
    ] {
        assert!(filled.contains(want), "{want} missing from\n{filled}");
    }
    let (_, r2) = ScenarioFile::parse("filled.toml", Path::new("."), &filled).unwrap().resolved(None, None).unwrap();
    assert_eq!(r, r2, "the filled scenario resolves to the same settings");
    // The options one by one, without the preset.
    let one = format!(
        "{BASE}[tcp]\nloss_response = \"ns3\"\npartial_ack_timer = \"first\"\nooo_shrinks_window = false\n[[background]]\nmodel = \"greedy\"\n"
    );
    let (_, r3) = ScenarioFile::parse("s.toml", Path::new("."), &one).unwrap().resolved(None, None).unwrap();
    assert_ne!(
        r3,
        ScenarioFile::parse("s.toml", Path::new("."), &format!("{BASE}[[background]]\nmodel = \"greedy\"\n"))
            .unwrap()
            .resolved(None, None)
            .unwrap()
            .1
    );
    let e = ScenarioFile::parse("s.toml", Path::new("."), &one.replace("\"first\"", "\"second\""))
        .and_then(|f| f.resolved(None, None).map(|_| ()))
        .unwrap_err()
        .to_string();
    assert!(e.contains("partial_ack_timer") && e.contains("\"every\"") && e.contains("\"first\""), "{e}");
}

#[test]
fn an_rto_tick_out_of_range_is_refused_by_name() {
    let text = format!("{BASE}[tcp]\nrto_tick = \"2s\"\n[[background]]\nmodel = \"greedy\"\n");
    let e = ScenarioFile::parse("s.toml", Path::new("."), &text).and_then(|f| f.resolved(None, None).map(|_| ())).unwrap_err().to_string();
    assert!(e.contains("tcp.rto_tick") && e.contains("1us to 1s"), "{e}");
}

#[test]
fn a_shared_line_takes_a_rate_and_a_queue_and_is_not_for_swing_models() {
    let greedy = |line: &str| format!("{BASE}[[background]]\nmodel = \"greedy\"\nhosts = 3\nline = {line}");
    check(&greedy("{ rate = \"0bps\" }"), &["background[0].line.rate: \"0bps\" is not a valid rate"]);
    check(&greedy("{ rate = \"8Mbps\", queue = \"0p\" }"), &["background[0].line.queue: \"0p\" is not a valid queue size"]);
    check(&greedy("{ queue = \"10p\" }"), &["background[0].line", "rate"]);
    check(&greedy("{ rate = \"8Mbps\", delay = \"1ms\" }"), &["background[0].line.delay: unknown field \"delay\""]);
    check(
        &format!("{BASE}[[apps]]\nkind = \"http\"\nobject_size = \"1MB\"\nclient = {{ line = {{ rate = \"0bps\" }} }}"),
        &["apps[0].client.line.rate: \"0bps\" is not a valid rate"],
    );
    let swing = format!("{BASE}[[background]]\nmodel = \"swing\"\nfile = {:?}\nline = {{ rate = \"8Mbps\" }}", swing_model_file());
    check(&swing, &["background[0].line: a swing model's virtual hosts share the lines its model file holds"]);
    // Accepted: the sources and the sinks each behind a line of their own.
    let text = greedy("{ rate = \"8Mbps\", queue = \"50p\" }");
    let f = ScenarioFile::parse("s.toml", Path::new("/nonexistent-dir"), &text).unwrap();
    let (_, r) = f.resolved(None, None).unwrap();
    match &r.background[0] {
        scenario::BackgroundModel::Greedy { group, .. } => {
            assert_eq!(group.line, Some(scenario::LineParams { rate: units::Rate::mbps(8), queue: net::QueueLimit::Packets(50) }))
        }
        other => panic!("{other:?}"),
    }
}
