//! The bottleneck as a path of elements: `path = [...]` in the schema.

use net::{DelaySpec, DisciplineSpec, ElementSpec, LossModel, QueueLimit, RateSpec, Shaper};
use scenario::ScenarioFile;
use std::path::Path;
use units::{Dur, Rate};

const HEAD: &str = "duration = \"10s\"\n[topology.bottleneck]\n";

fn resolved(text: &str) -> scenario::Resolved {
    let f = ScenarioFile::parse("s.toml", Path::new("."), text).unwrap_or_else(|e| panic!("{e}"));
    f.resolved(None, None).unwrap_or_else(|e| panic!("{e}")).1
}

fn error(text: &str) -> String {
    let e = ScenarioFile::parse("s.toml", Path::new("."), text).and_then(|f| f.resolved(None, None)).unwrap_err().to_string();
    assert!(!e.contains('\n'), "{e}");
    e
}

#[test]
fn a_bottleneck_path_resolves_to_its_elements_in_order_each_on_its_own_stream() {
    let r = resolved(&format!(
        r#"{HEAD}path = [
  {{ element = "loss", rate = "1%" }},
  {{ element = "queue", rate = "20Mbps", limit = "50p" }},
  {{ element = "shaper", rate = "10Mbps", burst = "30KB" }},
  {{ element = "gilbert_elliott", enter_bad = "1%", leave_bad = "10%", loss_in_bad = "70%" }},
  {{ element = "bunching", share = "20%" }},
  {{ element = "delay", delay = "20ms" }},
]
"#
    ));
    let e = &r.bottleneck[0].elements;
    assert_eq!(e[0], ElementSpec::Loss { model: LossModel::Bernoulli { p: 0.01 }, stream: "link/bottleneck/fwd/0".into(), handshakes: None });
    assert_eq!(
        e[1],
        ElementSpec::Queue { rate: RateSpec::Fixed(Rate::mbps(20)), limit: QueueLimit::Packets(50), discipline: DisciplineSpec::DropTail }
    );
    assert_eq!(e[2], ElementSpec::Shaper(Shaper { rate: Rate::mbps(10), burst: 30_000 }));
    assert_eq!(
        e[3],
        ElementSpec::Loss {
            model: LossModel::GilbertElliott { p: 0.01, r: 0.1, loss_good: 0.0, loss_bad: 0.7 },
            stream: "link/bottleneck/fwd/3".into(),
            handshakes: None
        }
    );
    assert_eq!(e[4], ElementSpec::Bunching { p: 0.2, stream: "link/bottleneck/fwd/4".into() });
    assert_eq!(e[5], ElementSpec::Delay(DelaySpec::Fixed(Dur::from_millis(20))));
    // The reverse direction is the same path, on streams of its own.
    assert_eq!(r.bottleneck[1].elements[1], e[1]);
    assert!(matches!(&r.bottleneck[1].elements[0], ElementSpec::Loss { stream, .. } if stream == "link/bottleneck/rev/0"));
    // What shares of the bottleneck are shares of: its first queue's rate.
    assert_eq!(r.bottleneck[0].rate(), Some(Rate::mbps(20)));
}

#[test]
fn a_time_varying_bottleneck_follows_its_schedules() {
    let r = resolved(&format!(
        r#"{HEAD}path = [
  {{ element = "queue", rate_schedule = [["0s", "10Mbps"], ["5s", "2Mbps"]], period = "10s" }},
  {{ element = "delay", delay_schedule = [["0s", "20ms"], ["1s", "80ms"]] }},
]
[topology.bottleneck.reverse]
path = [{{ element = "queue", rate = "1Mbps" }}, {{ element = "delay", delay = "20ms" }}]
"#
    ));
    let ElementSpec::Queue { rate: RateSpec::Scheduled(s), limit, .. } = &r.bottleneck[0].elements[0] else { panic!() };
    assert_eq!(*limit, QueueLimit::Packets(100), "the default limit");
    assert_eq!(s.at(units::Time(7_000_000_000)).0, Rate::mbps(2));
    assert_eq!(s.at(units::Time(12_000_000_000)).0, Rate::mbps(10), "repeated every 10 s");
    assert_eq!(r.bottleneck[1].rate(), Some(Rate::mbps(1)));
}

#[test]
fn a_path_that_cannot_work_is_refused_naming_the_element() {
    let e =
        error(&format!("{HEAD}path = [{{ element = \"shaper\", rate = \"1Mbps\", burst = \"3KB\" }}, {{ element = \"queue\", rate = \"2Mbps\" }}]"));
    assert!(e.contains("topology.bottleneck.path") && e.contains("a shaper gates the serialiser of the queue before it"), "{e}");
    let e = error(&format!("{HEAD}path = [{{ element = \"red\", rate = \"1Mbps\" }}]"));
    assert!(e.contains("topology.bottleneck.path[0].element") && e.contains("\"queue\"") && e.contains("\"gilbert_elliott\""), "{e}");
    let e = error(&format!("{HEAD}path = [{{ element = \"queue\", rate = \"1Mbps\", burst = \"3KB\" }}]"));
    assert!(e.contains("topology.bottleneck.path[0].burst") && e.contains("does not apply to element \"queue\""), "{e}");
    let e = error(&format!("{HEAD}path = [{{ element = \"queue\", rate = \"fast\" }}]"));
    assert!(e.contains("topology.bottleneck.path[0].rate") && e.contains("\"fast\""), "{e}");
    let e = error(&format!("{HEAD}path = [{{ element = \"queue\" }}]"));
    assert!(e.contains("topology.bottleneck.path[0]") && e.contains("missing required field \"rate\""), "{e}");
    let e = error(&format!("{HEAD}path = [{{ element = \"loss\", rate = \"100%\" }}]"));
    assert!(e.contains("topology.bottleneck.path[0].rate") && e.contains("less than 100%"), "{e}");
    let e = error(&format!("{HEAD}path = [{{ element = \"queue\", rate_schedule = [[\"1s\", \"1Mbps\"]] }}]"));
    assert!(e.contains("path[0].rate_schedule") && e.contains("start at 0"), "{e}");
    let e = error(&format!("{HEAD}rate = \"1Mbps\"\npath = [{{ element = \"queue\", rate = \"1Mbps\" }}]"));
    assert!(e.contains("topology.bottleneck.rate") && e.contains("not both"), "{e}");
    let e = error(&format!(
        "{HEAD}path = [{{ element = \"delay\", delay = \"1ms\" }}]\n[[background]]\nmodel = \"cbr\"\ntransport = \"udp\"\nrate = \"50%\""
    ));
    assert!(e.contains("background[0].rate") && e.contains("needs a queue"), "{e}");
    let e = error(&format!("{HEAD}path = [{{ element = \"queue\", rate = \"1Mbps\" }}]\nreverse = {{ rate = \"2Mbps\" }}"));
    assert!(e.contains("topology.bottleneck.reverse") && e.contains("give the reverse one a path too"), "{e}");
    let e = error(&format!("{HEAD}delay = \"1ms\""));
    assert!(e.contains("topology.bottleneck") && e.contains("missing required field \"rate\" (or a \"path\" of elements)"), "{e}");
}

#[test]
fn a_path_written_out_with_its_defaults_resolves_to_the_same_settings() {
    let text = format!(
        r#"{HEAD}path = [
  {{ element = "loss", rate = "1%" }},
  {{ delay = "5ms", element = "delay" }},
  {{ element = "queue", rate = "20Mbps" }},
  {{ element = "outages", windows = [["1s", "2s"]], period = "10s" }},
  {{ element = "gilbert_elliott", enter_bad = "2%" }},
]
"#
    );
    let f = ScenarioFile::parse("s.toml", Path::new("."), &text).unwrap();
    let (s, r) = f.resolved(None, None).unwrap();
    let filled = scenario::to_toml(&scenario::with_defaults(&s, &r));
    assert!(filled.contains("limit = \"100p\"") && filled.contains("discipline = \"droptail\""), "{filled}");
    let (_, r2) = ScenarioFile::parse("f.toml", Path::new("."), &filled).unwrap().resolved(None, None).unwrap_or_else(|e| panic!("{e}\n{filled}"));
    assert_eq!(r, r2, "{filled}");
}

#[test]
fn a_queue_takes_red_codel_or_pie_with_their_parameters_in_ns2_and_rfc_names() {
    let r = resolved(&format!(
        r#"{HEAD}path = [
  {{ element = "queue", rate = "10Mbps", limit = "50p", discipline = "red", red = {{ thresh = 5, maxthresh = 15, q_weight = 0.002, gentle = false, queue_in_bytes = false, bytes = false }} }},
  {{ element = "delay", delay = "20ms" }},
]
[topology.bottleneck.reverse]
path = [{{ element = "queue", rate = "10Mbps", codel = {{ target = "10ms" }} }}, {{ element = "queue", rate = "10Mbps", discipline = "pie" }}]
"#
    ));
    let ElementSpec::Queue { discipline: DisciplineSpec::Red { params, stream }, .. } = &r.bottleneck[0].elements[0] else { panic!() };
    let expected = net::queue::RedParams {
        thresh: 5.0,
        maxthresh: 15.0,
        q_weight: 0.002,
        gentle: false,
        queue_in_bytes: false,
        bytes: false,
        ..Default::default()
    };
    assert_eq!((params, stream.as_str()), (&expected, "link/bottleneck/fwd/0"));
    // A table alone names its discipline; the defaults are the RFC's.
    let ElementSpec::Queue { discipline: DisciplineSpec::Codel(c), .. } = &r.bottleneck[1].elements[0] else { panic!() };
    assert_eq!(*c, net::queue::CodelParams { target: Dur::from_millis(10), ..Default::default() });
    let ElementSpec::Queue { discipline: DisciplineSpec::Pie { params, .. }, .. } = &r.bottleneck[1].elements[1] else { panic!() };
    assert_eq!(*params, net::queue::PieParams::default());
}

#[test]
fn a_queue_discipline_written_out_with_its_defaults_resolves_to_the_same_settings() {
    let text = format!(
        r#"{HEAD}path = [{{ element = "queue", rate = "10Mbps", red = {{ thresh = 5, linterm = 50, mean_pktsize = "1KB" }} }}]
[topology.bottleneck.reverse]
path = [{{ element = "queue", rate = "10Mbps", pie = {{ max_burst = "0s" }} }}, {{ element = "queue", rate = "1Mbps", codel = {{}} }}]
"#
    );
    let (s, r) = ScenarioFile::parse("s.toml", Path::new("."), &text).unwrap().resolved(None, None).unwrap();
    let filled = scenario::to_toml(&scenario::with_defaults(&s, &r));
    assert!(filled.contains("discipline = \"red\"") && filled.contains("discipline = \"codel\""), "{filled}");
    let (_, r2) = ScenarioFile::parse("f.toml", Path::new("."), &filled).unwrap().resolved(None, None).unwrap_or_else(|e| panic!("{e}\n{filled}"));
    assert_eq!(r, r2, "{filled}");
}
