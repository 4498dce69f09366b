//! The swing generator against a hand-built model whose counts are known.

use scenario::ScenarioFile;
use swing::*;

use swing::example::d;

/// Four sessions in a 10 s trace; every parameter a short list of values.
fn model() -> Model {
    swing::example::four_sessions()
}

fn run(extra: &str, duration: &str) -> sim::build::Built {
    run_model(&model(), extra, duration)
}

fn run_model(m: &Model, extra: &str, duration: &str) -> sim::build::Built {
    // Tests run in parallel: a directory of its own per call.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("undertow-swing-test-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("m.json"), serde_json::to_string(m).unwrap()).unwrap();
    let text = format!(
        "duration = \"{duration}\"\n[topology.bottleneck]\nrate = \"100Mbps\"\ndelay = \"0.1ms\"\n[[background]]\nmodel = \"swing\"\nname = \"sw\"\nfile = \"m.json\"\n{extra}"
    );
    let f = ScenarioFile::parse("s.toml", &dir, &text).unwrap_or_else(|e| panic!("{e}"));
    let (_, r) = f.resolved(None, None).unwrap_or_else(|e| panic!("{e}"));
    sim::simulate(&r)
}

/// What the elements of a path do, read from its description.
#[derive(Debug)]
struct Access {
    rate: units::Rate,
    delay: units::Dur,
    bunching: Option<f64>,
    shapers: Vec<net::Shaper>,
}

fn access(b: &sim::build::Built, path: u32) -> Access {
    let mut a = Access { rate: units::Rate(0), delay: units::Dur::ZERO, bunching: None, shapers: vec![] };
    for e in &b.world.fabric.specs[path as usize].elements {
        match e {
            net::ElementSpec::Queue { rate: net::RateSpec::Fixed(r), .. } => a.rate = *r,
            net::ElementSpec::Delay(net::DelaySpec::Fixed(d)) => a.delay = *d,
            net::ElementSpec::Bunching { p, .. } => a.bunching = Some(*p),
            net::ElementSpec::Shaper(s) => a.shapers.push(*s),
            _ => {}
        }
    }
    a
}

fn stats(b: &sim::build::Built, path: u32) -> net::PathStats {
    b.world.fabric.paths[path as usize].path.stats()
}

fn counter(b: &sim::build::Built, name: &str) -> f64 {
    let rep = b.apps[0].report();
    rep.counters.iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("no counter {name}")).1
}

#[test]
fn one_period_reproduces_the_model_counts() {
    let b = run("", "30s");
    // One 10 s period per 10 s of run: 3 periods × 4 sessions.
    assert_eq!(counter(&b, "sessions"), 12.0);
    assert_eq!(counter(&b, "sessions_completed"), 12.0);
    // Each period draws the RRE counts 2, 2, 3, 1 once each (a deck): 8 per period.
    assert_eq!(counter(&b, "rres"), 24.0);
    // Two UDP flows per period, 2 + 5 packets.
    assert_eq!(counter(&b, "udp_flows"), 6.0);
    assert_eq!(counter(&b, "udp_packets"), 21.0);
    // Every pair completed: requests of 300 or 500 B, responses of 10 kB or 50 kB.
    let pairs = counter(&b, "pairs");
    assert!(pairs >= counter(&b, "connections"));
    let rsp = counter(&b, "response_bytes");
    assert!(rsp >= pairs * 10_000.0 && rsp <= pairs * 50_000.0, "{rsp} over {pairs} pairs");
    assert_eq!(b.world.counters.stray_segments, 0);
    assert_eq!(b.world.counters.stray_datagrams, 0);
    // Virtual hosts: the model's one client and two servers.
    assert_eq!(b.world.hosts.len(), 3);
}

#[test]
fn access_links_follow_the_host_tuples_and_knobs() {
    let b = run("", "1s");
    // Host 0 is side A (10 ms RTT, 10 Mbps); its uplink has half the RTT,
    // less its 60-byte SYN's 48 µs at 10 Mbps, which the trace's RTT held.
    let up = access(&b, b.world.fabric.hosts[0].uplink);
    assert_eq!(up.delay, units::Dur::from_micros(5_000 - 48));
    assert_eq!(up.rate, units::Rate::mbps(10));
    assert!(up.bunching.is_none());
    // A host whose packets arrived bunched a fifth of the time sends
    // through a link that holds a packet for the next with p = 0.2 / 0.8,
    // so that a fifth of consecutive packets arrive together; what it
    // receives is not bunched.
    let mut m = model();
    m.hosts[0].bunched = Some(0.2);
    let b = run_model(&m, "", "1s");
    let h = &b.world.fabric.hosts[0];
    let p = access(&b, h.uplink).bunching;
    assert!(p.is_some_and(|p| (p - 0.25).abs() < 1e-12), "{p:?}");
    let bunched = (0..b.world.fabric.paths.len() as u32).filter(|&i| access(&b, i).bunching.is_some()).count();
    assert_eq!(bunched, 1);
    let b = run("rtt = \"4ms\"\naccess_cap = \"2Mbps\"", "1s");
    for h in &b.world.fabric.hosts {
        let c = access(&b, h.uplink);
        assert_eq!(c.delay, units::Dur::from_millis(1), "HighBurst: a quarter of the RTT per access direction");
        assert_eq!(c.rate, units::Rate::mbps(2), "Traffic2: capacity capped");
    }
}

#[test]
fn virtual_hosts_of_a_trace_line_send_through_one_line_in_the_simulator() {
    // The model's two servers on one 2 Mbit/s line: both virtual servers
    // are behind one line of the fabric, whose up path carries what they
    // send and is observed by no monitor.
    let mut m = model();
    m.lines = vec![line(Side::B, &["192.0.2.1", "192.0.2.2"], 2e6)];
    let b = run_model(&m, "", "20s");
    let f = &b.world.fabric;
    assert_eq!(f.lines.len(), 1);
    let servers: Vec<_> = f.hosts.iter().filter(|h| h.side == net::Side::Right).collect();
    assert!(servers.len() == 2 && servers.iter().all(|h| h.line == Some(0)));
    let up = f.lines[0].up as usize;
    assert_eq!(access(&b, up as u32).rate, units::Rate::mbps(2));
    let carried = f.paths[up].path.stats().queue.accepted_pkts;
    assert!(carried > 100 && f.paths[up].monitor.is_none(), "{carried}");
}

#[test]
fn knobs_scale_sessions_and_responses_and_remove_think_time() {
    let base = run("", "20s");
    let more = run("session_scale = 2.0", "20s");
    assert_eq!(counter(&more, "sessions"), 2.0 * counter(&base, "sessions"));
    let big = run("response_scale = 4.0", "20s");
    let per_pair = |b: &sim::build::Built| counter(b, "response_bytes") / counter(b, "pairs");
    let ratio = per_pair(&big) / per_pair(&base);
    assert!((3.0..5.0).contains(&ratio), "response sizes ×4 gave ×{ratio:.2} per pair");
    // Zero think time: the same sessions finish sooner, so the last
    // connection closes earlier.
    let last = |b: &sim::build::Built| b.world.conn_log.closed_s.iter().cloned().filter(|x| x.is_finite()).fold(0.0, f64::max);
    let quick = run("zero_think = true", "20s");
    assert!(last(&quick) < last(&base), "zero think {} vs {}", last(&quick), last(&base));
}

#[test]
fn bad_model_files_are_reported() {
    let dir = std::env::temp_dir().join(format!("undertow-swing-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("bad.json"), "{\"format\": \"nope\"}").unwrap();
    let mut m = model();
    m.format = "undertow.swing-model/99".into();
    std::fs::write(dir.join("v99.json"), serde_json::to_string(&m).unwrap()).unwrap();
    let base = "duration = \"1s\"\n[topology.bottleneck]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n[[background]]\nmodel = \"swing\"\n";
    let msg =
        |extra: &str| ScenarioFile::parse("s.toml", &dir, &format!("{base}{extra}")).and_then(|f| f.resolved(None, None)).unwrap_err().to_string();
    assert!(msg("").contains("missing required field \"file\""));
    let e = msg("file = \"missing.json\"");
    assert!(e.contains("background[0].file") && e.contains("not found"), "{e}");
    let e = msg("file = \"bad.json\"");
    assert!(e.contains("background[0].file") && e.contains("format \"nope\" is not supported"), "{e}");
    let e = msg("file = \"v99.json\"");
    assert!(e.contains("undertow.swing-model/99") && e.contains("not supported"), "{e}");
    let e = msg("file = \"v99.json\"\nrate = \"1Mbps\"");
    assert!(e.contains("background[0].rate") && e.contains("does not apply"), "{e}");
    // Write tables and data units are checked too, naming the class.
    let mut m = model();
    m.classes[0].response_writes = vec![[5000.0, 2.0], [100.0, 1.0]];
    std::fs::write(dir.join("writes.json"), serde_json::to_string(&m).unwrap()).unwrap();
    let e = msg("file = \"writes.json\"");
    assert!(e.contains("\"HTTP\"") && e.contains("response_writes"), "{e}");
    let mut m = model();
    m.classes[0].concurrent = vec![vec![[0.0, 2.0, 100.0]]];
    std::fs::write(dir.join("units.json"), serde_json::to_string(&m).unwrap()).unwrap();
    let e = msg("file = \"units.json\"");
    assert!(e.contains("data unit") && e.contains("direction 0 or 1"), "{e}");
}

#[test]
fn a_model_with_values_extraction_never_gives_is_refused_naming_the_field() {
    type Spoil = fn(&mut Model);
    let cases: Vec<(&str, Spoil, &str)> = vec![
        ("loss above 1", |m| m.hosts[0].loss = Some(1.5), "hosts[0] (10.0.0.2): loss is 1.5: expected 0 to 1"),
        ("negative loss", |m| m.hosts[1].loss = Some(-0.5), "hosts[1] (192.0.2.1): loss is -0.5"),
        ("loss bursts under 1", |m| m.hosts[0].loss_burst = Some(0.5), "hosts[0] (10.0.0.2): loss_burst is 0.5: expected 1 to 1000000"),
        ("zero capacity", |m| m.hosts[0].capacity_bps = Some(0.0), "capacity_bps is 0"),
        ("negative capacity", |m| m.hosts[0].capacity_bps = Some(-1.0), "capacity_bps is -1"),
        ("negative RTT", |m| m.hosts[0].rtt_s = Some(-1.0), "rtt_s is -1"),
        ("MSS 0", |m| m.hosts[0].mss = Some(0), "mss is 0"),
        ("bad address", |m| m.hosts[0].addr = "10.0.0.999".into(), "hosts[0] (10.0.0.999): addr is not an IPv4 or IPv6 address"),
        ("negative think time", |m| m.classes[0].think_s = Dist { n: 1, values: vec![-0.2] }, "classes[0] (\"HTTP\"): think_s must hold"),
        ("negative RRE gap", |m| m.classes[0].inter_rre_s = Dist { n: 1, values: vec![-0.5] }, "inter_rre_s"),
        (
            "negative pair size",
            |m| {
                m.classes[0].sessions = vec![SessionSample {
                    start_s: 0.0,
                    rres: vec![RreSample { gap_s: 0.0, conns: vec![conn(0.0, &[[-300.0, 1000.0, 0.0]])] }],
                    hosts: vec![],
                }]
            },
            "pair",
        ),
        (
            "a session's host past the model's",
            |m| {
                let rres = vec![RreSample { gap_s: 0.0, conns: vec![conn(0.0, &[[300.0, 1000.0, 0.0]])] }];
                m.classes[0].sessions = vec![SessionSample { start_s: 0.0, rres, hosts: vec![0, 99] }]
            },
            "classes[0] (\"HTTP\"): sessions[0].hosts: index 99 is past the model's",
        ),
        ("negative duration", |m| m.link.duration_s = -10.0, "link.duration_s is -10"),
        ("negative UDP start", |m| m.udp[0].samples[0].start_s = -1.0, "udp[0] (\"DNS\"): a flow's start_s is -1"),
        ("a line of one host", |m| m.lines = vec![line(Side::B, &["192.0.2.1"], 1e6)], "lines[0].hosts holds 1 host"),
        ("a line of no rate", |m| m.lines = vec![line(Side::B, &["192.0.2.1", "192.0.2.2"], 0.0)], "lines[0].rate_bps is 0"),
        ("a line to a host not in hosts", |m| m.lines = vec![line(Side::B, &["192.0.2.1", "192.0.2.9"], 1e6)], "192.0.2.9 is not in hosts"),
        ("a line across sides", |m| m.lines = vec![line(Side::B, &["192.0.2.1", "10.0.0.2"], 1e6)], "10.0.0.2 is not a host of side B"),
        (
            "a host on two lines",
            |m| m.lines = vec![line(Side::B, &["192.0.2.1", "192.0.2.2"], 1e6), line(Side::B, &["192.0.2.2", "192.0.2.1"], 1e6)],
            "lines[1].hosts: 192.0.2.2 is on another line too",
        ),
        (
            "a line in a /1 file",
            |m| {
                m.format = "undertow.swing-model/1".into();
                m.lines = vec![line(Side::B, &["192.0.2.1", "192.0.2.2"], 1e6)]
            },
            "lines: format \"undertow.swing-model/1\" has no lines",
        ),
        ("another format", |m| m.format = "undertow.swing-model/9".into(), "expected \"undertow.swing-model/1\" or \"undertow.swing-model/2\""),
    ];
    let dir = std::env::temp_dir().join(format!("undertow-swing-range-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let base = "duration = \"1s\"\n[topology.bottleneck]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n[[background]]\nmodel = \"swing\"\nfile = \"m.json\"\n";
    for (what, spoil, want) in cases {
        let mut m = model();
        spoil(&mut m);
        std::fs::write(dir.join("m.json"), serde_json::to_string(&m).unwrap()).unwrap();
        let e = ScenarioFile::parse("s.toml", &dir, base).and_then(|f| f.resolved(None, None)).unwrap_err().to_string();
        assert!(e.contains("background[0].file") && e.contains(want), "{what}: {e}");
        // Every reader loads through the same check.
        assert!(Model::load(&dir.join("m.json")).unwrap_err().to_string().contains(want), "{what}");
    }
    // The hand-built model itself is within every range.
    model().check().unwrap();
}

#[test]
fn a_session_scale_that_would_start_too_many_sessions_at_once_is_refused() {
    let dir = std::env::temp_dir().join(format!("undertow-swing-scale-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("m.json"), serde_json::to_string(&model()).unwrap()).unwrap();
    let base = "duration = \"1s\"\n[topology.bottleneck]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n[[background]]\nmodel = \"swing\"\nfile = \"m.json\"\n";
    let msg =
        |extra: &str| ScenarioFile::parse("s.toml", &dir, &format!("{base}{extra}")).and_then(|f| f.resolved(None, None)).unwrap_err().to_string();
    let e = msg("session_scale = 1e30");
    assert!(e.contains("background[0].session_scale") && e.contains("at most 1000000"), "{e}");
    // Four sessions and two UDP flows a period: 200,000 times that is over the limit.
    let e = msg("session_scale = 200000");
    assert!(e.contains("1.200e6 per period") && e.contains("at most 1e6"), "{e}");
    let e = msg("response_scale = -1");
    assert!(e.contains("background[0].response_scale") && e.contains("above 0"), "{e}");
    let e = msg("hosts = 1000000");
    assert!(e.contains("2000000 hosts") && e.contains("at most 200000"), "{e}");
}

fn line(side: Side, hosts: &[&str], rate_bps: f64) -> swing::Line {
    swing::Line { side, hosts: hosts.iter().map(|h| h.to_string()).collect(), rate_bps, back_to_back: 10, faster: 0 }
}

fn conn(at_s: f64, pairs: &[[f64; 3]]) -> ConnSample {
    ConnSample { at_s, pairs: pairs.to_vec(), adus: vec![], server: 0, server_s: vec![], close_s: 0.0, after: vec![] }
}

/// The test model with two whole sessions kept: one of two RREs (two
/// connections 0.5 s apart, then one more 1 s after the first RRE ends) and
/// one of a single large response.
fn with_sessions() -> Model {
    let mut m = model();
    m.classes[0].sessions = vec![
        SessionSample {
            start_s: 0.0,
            rres: vec![
                RreSample {
                    gap_s: 0.0,
                    conns: vec![conn(0.0, &[[300.0, 10_000.0, 0.0], [400.0, 20_000.0, 0.3]]), conn(0.5, &[[100.0, 5_000.0, 0.0]])],
                },
                RreSample { gap_s: 1.0, conns: vec![conn(0.0, &[[200.0, 1_000.0, 0.0]])] },
            ],
            hosts: vec![],
        },
        SessionSample { start_s: 2.0, rres: vec![RreSample { gap_s: 0.0, conns: vec![conn(0.0, &[[50.0, 60_000.0, 0.0]])] }], hosts: vec![] },
    ];
    m
}

#[test]
fn whole_sessions_replay_their_structure() {
    let m = with_sessions();
    let b = run_model(&m, "structure = \"sessions\"", "30s");
    // Three periods of 4 sessions, drawn from the two kept ones through a
    // deck: each kept session six times.
    assert_eq!(counter(&b, "sessions"), 12.0);
    assert_eq!(counter(&b, "sessions_completed"), 12.0);
    assert_eq!(counter(&b, "rres"), 6.0 * 2.0 + 6.0);
    assert_eq!(counter(&b, "connections"), 6.0 * 3.0 + 6.0);
    assert_eq!(counter(&b, "pairs"), 6.0 * 4.0 + 6.0);
    assert_eq!(counter(&b, "request_bytes"), 6.0 * 1000.0 + 6.0 * 50.0);
    assert_eq!(counter(&b, "response_bytes"), 6.0 * 36_000.0 + 6.0 * 60_000.0);
    // The marginals still drive the default.
    let marg = run_model(&m, "", "30s");
    assert_ne!(counter(&marg, "response_bytes"), counter(&b, "response_bytes"));

    // One session at 0 s: connections open at 0 and 0.5 s, and the second
    // RRE's 1 s after the first RRE's last connection closed.
    let mut one = with_sessions();
    one.classes[0].sessions.truncate(1);
    one.classes[0].counts.sessions = 1;
    one.classes[0].session_start_s = d(&[0.0]);
    one.udp.clear();
    let b = run_model(&one, "structure = \"sessions\"", "10s");
    let log = &b.world.conn_log;
    let mut opened: Vec<(f64, f64)> = (0..log.opened_s.len()).filter(|&i| log.active[i]).map(|i| (log.opened_s[i], log.closed_s[i])).collect();
    opened.sort_by(|a, b| a.0.total_cmp(&b.0));
    assert_eq!(opened.len(), 3, "{opened:?}");
    assert!(opened[0].0.abs() < 1e-9 && (opened[1].0 - 0.5).abs() < 1e-9, "{opened:?}");
    // The log's close times include TIME_WAIT; the app saw the close before it.
    let rre_end = opened[0].1.max(opened[1].1) - sim::world::TIME_WAIT.as_secs_f64();
    assert!(rre_end > 0.5 && (opened[2].0 - rre_end - 1.0).abs() < 1e-6, "{opened:?}");
}

/// Open (s) and app-level close (s) of each connection, in opening order.
fn conn_times(b: &sim::build::Built) -> Vec<(f64, f64)> {
    let log = &b.world.conn_log;
    let mut v: Vec<(f64, f64)> = (0..log.opened_s.len())
        .filter(|&i| log.active[i])
        .map(|i| (log.opened_s[i], log.closed_s[i] - sim::world::TIME_WAIT.as_secs_f64()))
        .collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    v
}

#[test]
fn a_request_that_followed_another_connections_response_waits_for_it_not_its_own_think() {
    // One RRE: connection 0 fetches 200 kB; connection 1 fetches 1 kB, then
    // in the trace sent its second request 10 ms after connection 0's
    // response ended, 3 s after its own first.
    let mut m = with_sessions();
    m.udp.clear();
    let mut c1 = conn(0.0, &[[100.0, 1_000.0, 0.0], [100.0, 1_000.0, 3.0]]);
    c1.after = vec![None, Some([0.0, 0.0, 0.010])];
    m.classes[0].sessions = vec![SessionSample {
        start_s: 0.0,
        rres: vec![RreSample { gap_s: 0.0, conns: vec![conn(0.0, &[[100.0, 200_000.0, 0.0]]), c1.clone()] }],
        hosts: vec![],
    }];
    m.classes[0].counts.sessions = 1;
    m.classes[0].session_start_s = d(&[0.0]);
    m.check().unwrap();
    let b = run_model(&m, "structure = \"sessions\"", "10s");
    let t = conn_times(&b);
    assert_eq!(t.len(), 2, "{t:?}");
    // Connection 1 closes a round trip or so after connection 0 does, far
    // before its own 3 s think time.
    assert!(t[1].1 > t[0].1 && t[1].1 < t[0].1 + 0.2 && t[1].1 < 2.0, "{t:?}");
    // Without the order, the 3 s think time.
    c1.after.clear();
    m.classes[0].sessions[0].rres[0].conns[1] = c1;
    let b = run_model(&m, "structure = \"sessions\"", "10s");
    let t = conn_times(&b);
    assert!(t[1].1 > 3.0, "{t:?}");
    // An order naming a pair that does not exist is refused.
    m.classes[0].sessions[0].rres[0].conns[1].after = vec![None, Some([0.0, 1.0, 0.0])];
    assert!(m.check().unwrap_err().contains("after"));
}

#[test]
fn every_connection_carries_exactly_its_pairs_bytes_through_losses_and_full_buffers() {
    // Responses far over the initial send buffer, from servers that lose
    // 1% of their packets: the writers block, and are woken as the buffer
    // gains room, in recoveries too. A wake lost leaves a connection
    // unfinished (a session not completed); a wake while not waiting, or a
    // write repeated, sends bytes the model never had. Each connection
    // carries its pairs' bytes, no more, no less.
    let mut m = with_sessions();
    m.udp.clear();
    let big = |s: &mut SessionSample| {
        for c in s.rres.iter_mut().flat_map(|r| r.conns.iter_mut()) {
            for p in c.pairs.iter_mut() {
                p[1] *= 10.0;
            }
        }
    };
    m.classes[0].sessions.iter_mut().for_each(big);
    for h in m.hosts.iter_mut().filter(|h| h.side == Side::B) {
        h.loss = Some(0.01);
    }
    m.check().unwrap();
    let b = run_model(&m, "structure = \"sessions\"", "30s");
    let log = &b.world.conn_log;
    let sessions = (counter(&b, "sessions"), counter(&b, "sessions_completed"));
    let mut carried: Vec<(i64, i64)> =
        (0..log.active.len()).filter(|&i| log.active[i]).map(|i| (log.bytes_acked[i], log.bytes_received[i])).collect();
    carried.sort();
    // Per connection (requests, responses): 700 B and 300 kB, 100 B and
    // 50 kB, 200 B and 10 kB in the first session, 50 B and 600 kB in the
    // second; each kept session six times.
    let mut want: Vec<(i64, i64)> = [(700, 300_000), (100, 50_000), (200, 10_000), (50, 600_000)].iter().flat_map(|&c| [c; 6]).collect();
    want.sort();
    assert_eq!((sessions, &carried), ((12.0, 12.0), &want));
    let (rtx, fr): (i64, i64) = (log.retransmits.iter().sum(), log.fast_recoveries.iter().sum());
    assert!(rtx > 20 && fr > 10, "{rtx} retransmissions, {fr} fast recoveries: the losses did not happen");
    // The servers' side of the same connections.
    let mut served: Vec<(i64, i64)> =
        (0..log.active.len()).filter(|&i| !log.active[i]).map(|i| (log.bytes_received[i], log.bytes_acked[i])).collect();
    served.sort();
    assert_eq!(served, want);
}

#[test]
fn whole_sessions_need_a_model_that_keeps_them() {
    let dir = std::env::temp_dir().join(format!("undertow-swing-structure-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("m.json"), serde_json::to_string(&model()).unwrap()).unwrap();
    let base = "duration = \"1s\"\n[topology.bottleneck]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n[[background]]\nmodel = \"swing\"\nfile = \"m.json\"\n";
    let msg =
        |extra: &str| ScenarioFile::parse("s.toml", &dir, &format!("{base}{extra}")).and_then(|f| f.resolved(None, None)).unwrap_err().to_string();
    let e = msg("structure = \"sessions\"");
    assert!(e.contains("background[0].structure") && e.contains("session_structures"), "{e}");
    let e = msg("structure = \"joint\"");
    assert!(e.contains("background[0].structure") && e.contains("\"marginals\" or \"sessions\""), "{e}");
}

#[test]
fn loss_after_the_link_shows_the_lost_copies_on_the_link() {
    // The client loses 10% of what it sends, all of it beyond the link: the
    // link carries the lost copies and their retransmissions. With the
    // same loss before the link it carries each segment about once.
    let mut m = model();
    m.udp.clear();
    m.classes[0].request_bytes = d(&[50_000.0]);
    m.hosts[0].loss = Some(0.10);
    let before = run_model(&m, "", "60s");
    m.hosts[0].loss_after_link = Some(0.10);
    let after = run_model(&m, "", "60s");
    assert_eq!(before.world.fabric.losses.after_link, 0);
    let lost = after.world.fabric.losses.after_link as f64;
    let fwd = |b: &sim::build::Built| stats(b, sim::build::BOTTLENECK_FWD).queue.accepted_pkts as f64;
    assert!(lost > 0.05 * fwd(&after), "{lost} of {}", fwd(&after));
    // About as many requests go (the sessions are closed loops, so each
    // request's losses move the next ones: a few sessions' worth either
    // way in 60 s); per request byte the link sees more packets when loss
    // is past it.
    let (rb, ra) = (counter(&before, "request_bytes"), counter(&after, "request_bytes"));
    assert!((rb - ra).abs() <= 0.05 * rb, "{rb} vs {ra}");
    assert!(fwd(&after) / ra > 1.05 * fwd(&before) / rb, "{} per {ra} vs {} per {rb}", fwd(&after), fwd(&before));
    // Nothing is lost before the link when all the loss is after it.
    assert_eq!(after.world.fabric.losses.before_link, 0);
    assert!(before.world.fabric.losses.before_link as f64 > 0.05 * fwd(&before));
}

#[test]
fn handshakes_are_lost_at_their_own_rate() {
    // The client lost none of its packets but half of its 20 handshakes:
    // only SYNs are lost, and the exchanges still go through, later.
    let mut m = model();
    m.udp.clear();
    m.hosts[0].handshakes = 20;
    let clean = run_model(&m, "", "60s");
    m.hosts[0].handshake_retx = 10;
    let lossy = run_model(&m, "", "60s");
    let lost = |b: &sim::build::Built| b.world.fabric.losses.before_link + b.world.fabric.losses.after_link;
    assert_eq!(lost(&clean), 0);
    assert!(lost(&lossy) as f64 > 0.2 * counter(&lossy, "connections"), "{} of {}", lost(&lossy), counter(&lossy, "connections"));
    assert!(counter(&lossy, "request_bytes") > 0.9 * counter(&clean, "request_bytes"));
    // A SYN lost waits out the initial RTO.
    assert!(lossy.world.app_tcp.iter().map(|t| t.rtos).sum::<u64>() > 0);
    // The other way round: its packets lost, its handshakes not.
    m.hosts[0].handshake_retx = 0;
    m.hosts[0].loss = Some(0.2);
    let data = run_model(&m, "", "60s");
    assert!(lost(&data) > lost(&lossy));
}

#[test]
fn a_stalled_path_holds_its_sides_packets_then_lets_them_through() {
    // Side B's path stalled from 1 to 3 s of the 10 s trace: in every
    // period nothing of side B's crosses the link then, and what was held
    // crosses together when it ends.
    let mut m = model();
    m.udp.clear();
    // Packets of side B's that reached the link's far end, per bin.
    fn rev(b: &sim::build::Built) -> impl Fn(f64, f64) -> u32 + '_ {
        let i = b.world.fabric.paths[sim::build::BOTTLENECK_REV as usize].monitor.unwrap() as usize;
        let mon = &b.world.monitors[i];
        let bin = mon.bin.as_secs_f64();
        move |from: f64, to: f64| mon.pkts[(from / bin).round() as usize..(to / bin).round() as usize].iter().sum::<u32>()
    }
    let free = run_model(&m, "", "30s");
    m.link.stalls = vec![Stall { side: Side::B, start_s: 1.0, end_s: 3.0, answers: 2 }];
    let held = run_model(&m, "stalls = true", "30s");
    let off = run_model(&m, "", "30s");
    let (f, h, o) = (rev(&free), rev(&held), rev(&off));
    for k in [0.0, 10.0, 20.0] {
        // Packets already on the link when it began still arrive (the
        // bottleneck's own delay is 0.1 ms).
        assert!(f(k + 1.01, k + 3.0) > 0, "the sessions send then");
        assert_eq!(h(k + 1.01, k + 3.0), 0, "period at {k} s");
        // What was held crosses right after.
        assert!(h(k + 3.0, k + 3.1) > 0, "released at the end");
        assert_eq!(o(k, k + 10.0), f(k, k + 10.0), "none replayed unless asked");
    }
}

#[test]
fn whole_sessions_replay_kept_udp_flows_packet_by_packet() {
    let mut m = with_sessions();
    m.udp[0].samples[1].sequence = vec![[0.0, 0.0, 100.0], [0.25, 1.0, 600.0], [0.5, 0.0, 128.0]];
    let b = run_model(&m, "structure = \"sessions\"", "30s");
    // Per period: the first flow drawn as before (2 packets), the second
    // exactly its 3 kept packets.
    assert_eq!(counter(&b, "udp_flows"), 6.0);
    assert_eq!(counter(&b, "udp_packets"), 3.0 * (2.0 + 3.0));
    // Without whole sessions the kept packets are not used.
    let b = run_model(&m, "", "30s");
    assert_eq!(counter(&b, "udp_packets"), 21.0);
}

#[test]
fn virtual_hosts_take_their_trace_hosts_ack_behaviour_and_mss() {
    // Side B's two virtual hosts are drawn from its two trace hosts: give
    // both the same behaviour so the draw does not matter.
    let mut m = model();
    m.hosts[0].segments_per_ack = Some(1.05);
    m.hosts[0].mss = Some(1380);
    for h in &mut m.hosts[1..] {
        h.segments_per_ack = Some(2.0);
    }
    let b = run_model(&m, "", "1s");
    let cfg = |b: &sim::build::Built, h: usize| b.world.tcp_cfgs[b.world.hosts[h].tcp_cfg as usize].clone();
    assert_eq!((cfg(&b, 0).ack_every, cfg(&b, 0).mss), (1, 1380));
    for h in 1..3 {
        assert_eq!((cfg(&b, h).ack_every, cfg(&b, h).quickack, cfg(&b, h).mss), (2, 0, 1460));
    }
    // Linux-like delayed ACKs and no MSS seen: the group's settings.
    m.hosts[0].segments_per_ack = Some(1.6);
    m.hosts[0].mss = None;
    let b = run_model(&m, "", "1s");
    let c = cfg(&b, 0);
    assert_eq!((c.ack_every, c.quickack, c.mss), (2, 16, 1460));
    // Bytes per ACK, when measured, is reproduced as it is.
    m.hosts[0].bytes_per_ack = Some(1868.4);
    m.hosts[0].timestamps = Some(false);
    m.hosts[0].sack = Some(false);
    m.hosts[0].initial_window = Some(4);
    m.hosts[0].rcv_window = Some(190_112);
    let c = cfg(&run_model(&m, "", "1s"), 0);
    assert_eq!((c.ack_bytes, c.quickack, c.timestamps, c.sack, c.initial_cwnd), (Some(1868), 0, false, false, 4));
    assert_eq!(c.rcv_buf, 190_112);
    assert!(cfg(&run_model(&m, "", "1s"), 1).timestamps, "the group's setting where not measured");
}

#[test]
fn ipv6_trace_hosts_become_ipv6_virtual_hosts() {
    let mut m = model();
    m.hosts[0].addr = "2001:db8::1".into();
    m.hosts[1].addr = "2001:db8:1::1".into();
    m.hosts[2].addr = "2001:db8:1::2".into();
    // A fixed receive window: an opening one ACKs by timing, which the
    // larger packets' serialisation shifts.
    let fixed = "tcp = { rcv_buf = \"4MiB\" }";
    let b = run_model(&m, fixed, "20s");
    assert!(b.world.hosts.iter().all(|h| h.ipv6 && h.addr().is_ipv6()));
    // Every packet carries a 40-byte header: the link's bytes per packet
    // are 20 more than with the same run over IPv4. Not exactly the same
    // packets: the send buffer's charge follows the pacing rate, which the
    // serialisation shifts (a few ACKs of 885 here).
    let v4 = run_model(&model(), fixed, "20s");
    let per_pkt = |b: &sim::build::Built| {
        let s = stats(b, sim::build::BOTTLENECK_FWD).queue;
        (s.accepted_bytes as f64 / s.accepted_pkts as f64, s.accepted_pkts)
    };
    let ((b6, n6), (b4, n4)) = (per_pkt(&b), per_pkt(&v4));
    assert!(n6.abs_diff(n4) * 100 <= n4, "{n6} packets against {n4}");
    assert!((b6 - b4 - 20.0).abs() < 0.5, "{b6} vs {b4}");
    // Only side A speaks IPv6: no connection could, so nobody does.
    let mut half = model();
    half.hosts[0].addr = "2001:db8::1".into();
    let b = run_model(&half, "", "1s");
    assert!(b.world.hosts.iter().all(|h| !h.ipv6));
}

#[test]
fn responses_go_out_in_the_application_writes_the_trace_showed() {
    // Servers that wrote 1000 bytes at a time: the first flight of each
    // response is 1000-byte segments instead of full ones.
    let mut m = model();
    m.classes[0].response_writes = vec![[10_000.0, 10.0], [50_000.0, 50.0]];
    let rev = |b: &sim::build::Built| {
        let s = stats(b, sim::build::BOTTLENECK_REV).queue;
        (s.accepted_pkts, s.accepted_bytes)
    };
    let (whole, cut) = (rev(&run_model(&model(), "", "10s")), rev(&run_model(&m, "", "10s")));
    assert!(cut.1.abs_diff(whole.1) < whole.1 / 50, "same bytes: {cut:?} vs {whole:?}");
    assert!(cut.0 as f64 > 1.1 * whole.0 as f64, "more, shorter segments: {cut:?} vs {whole:?}");
    assert_eq!(counter(&run_model(&m, "", "10s"), "response_bytes"), counter(&run_model(&model(), "", "10s"), "response_bytes"));
}

#[test]
fn concurrent_connections_replay_each_sides_data_units() {
    // Every connection of the class is concurrent: the client's two
    // 300-byte units at 0 and 0.5 s, the server's 20 kB at 10 ms and 50 kB
    // at 0.3 s, the server not waiting for the requests.
    let mut m = model();
    let units = vec![[0.0, 0.0, 300.0], [0.5, 0.0, 300.0], [0.01, 1.0, 20_000.0], [0.3, 1.0, 50_000.0]];
    m.classes[0].counts.connections = 10;
    m.classes[0].counts.concurrent_connections = 10;
    m.classes[0].concurrent = vec![units.clone()];
    let b = run_model(&m, "", "10s");
    let conns = counter(&b, "connections");
    assert!(conns >= 4.0, "{conns}");
    assert_eq!(counter(&b, "pairs"), 0.0, "no request/response exchanges");
    assert_eq!(counter(&b, "request_bytes"), 600.0 * conns);
    assert_eq!(counter(&b, "response_bytes"), 70_000.0 * conns);
    assert_eq!(counter(&b, "sessions_completed"), 4.0, "every connection closed, every session ended");
    let stats = |l: u32| stats(&b, l).queue;
    assert!(stats(sim::build::BOTTLENECK_REV).accepted_bytes as f64 > 70_000.0 * conns);
    assert!(stats(sim::build::BOTTLENECK_FWD).accepted_bytes as f64 > 600.0 * conns);
    // Whole sessions replay a kept connection's units the same way.
    let mut s = with_sessions();
    for r in &mut s.classes[0].sessions[0].rres {
        for c in &mut r.conns {
            c.adus = units.clone();
        }
    }
    let b = run_model(&s, "structure = \"sessions\"", "10s");
    assert!(counter(&b, "response_bytes") >= 70_000.0);
}

#[test]
fn a_replayed_concurrent_connection_stays_open_as_long_as_its_trace_connection() {
    // The trace's concurrent connection idled 2 s after its last unit
    // before it closed: its replay does too (and its RRE lasts that long).
    let mut m = one_connection();
    let rres = &mut m.classes[0].sessions[0].rres;
    rres[0].conns[0].adus = vec![[0.0, 0.0, 300.0], [0.01, 1.0, 20_000.0]];
    rres.push(RreSample { gap_s: 0.0, conns: vec![conn(0.0, &[[100.0, 1_000.0, 0.0]])] });
    // When the next RRE's connection opened.
    let next_rre = |m: &Model| {
        let b = run_model(m, "structure = \"sessions\"", "5s");
        let log = &b.world.conn_log;
        let mut opened: Vec<f64> = (0..log.opened_s.len()).filter(|&i| log.active[i]).map(|i| log.opened_s[i]).collect();
        opened.sort_by(f64::total_cmp);
        assert_eq!(opened.len(), 2, "{opened:?}");
        opened[1]
    };
    let base = next_rre(&m);
    m.classes[0].sessions[0].rres[0].conns[0].close_s = 2.0;
    let later = next_rre(&m) - base;
    // 2 s after the server's side was done, plus the round trip the
    // client's own FIN then takes to close it.
    assert!((2.0..2.2).contains(&later), "{later}");
}

#[test]
fn whole_session_replay_draws_unkept_sessions_from_the_marginals() {
    // The one kept session has a single RRE; half the trace's sessions were
    // too long to keep, and replay draws that half from the marginals
    // (2, 2, 3 or 1 RREs).
    let mut kept = with_sessions();
    kept.classes[0].sessions.remove(0);
    let mut half = kept.clone();
    half.classes[0].counts.sessions_unkept = half.classes[0].counts.sessions / 2;
    let (kept, half) = (run_model(&kept, "structure = \"sessions\"", "100s"), run_model(&half, "structure = \"sessions\"", "100s"));
    assert_eq!(counter(&half, "sessions"), counter(&kept, "sessions"));
    let per = |b: &sim::build::Built| counter(b, "rres") / counter(b, "sessions");
    assert_eq!(per(&kept), 1.0);
    assert!((1.3..1.7).contains(&per(&half)), "{}", per(&half));
}

#[test]
fn a_shaped_trace_host_sends_through_a_token_bucket() {
    let mut m = model();
    let shaper = HostShaper { rate_bps: 100e3, burst_bytes: 6000, stretches: 3, peaks: vec![[1e6, 3000.0]] };
    for h in &mut m.hosts[1..] {
        h.shaper = Some(shaper.clone());
    }
    let b = run_model(&m, "", "20s");
    for h in &b.world.fabric.hosts[1..] {
        let up = access(&b, h.uplink);
        let want = [(100_000, 6000), (1_000_000, 3000)].map(|(r, b)| net::Shaper { rate: units::Rate(r), burst: b });
        assert_eq!(up.shapers, want);
    }
    // What they send, not what they receive.
    assert_eq!((0..b.world.fabric.paths.len() as u32).filter(|&i| !access(&b, i).shapers.is_empty()).count(), 2);
    // Two servers at 100 kbit/s for 20 s send at most 500 kB and two bursts.
    let sent = stats(&b, sim::build::BOTTLENECK_REV).queue.accepted_bytes;
    assert!(sent <= 2 * (250_000 + 6000), "{sent}");
    let free = stats(&run("", "20s"), sim::build::BOTTLENECK_REV).queue.accepted_bytes;
    assert!(free > 2 * sent, "{free} unshaped against {sent}");
    // An access cap below a bucket's rate leaves nothing for it to shape.
    let b = run_model(&m, "access_cap = \"500kbps\"", "1s");
    assert_eq!(access(&b, b.world.fabric.hosts[1].uplink).shapers.len(), 1);
    let b = run_model(&m, "access_cap = \"50kbps\"", "1s");
    assert!(b.world.fabric.hosts.iter().all(|h| access(&b, h.uplink).shapers.is_empty()));
}

#[test]
fn a_replayed_session_reaches_as_many_servers_as_its_trace_session() {
    let mut m = with_sessions();
    m.classes[0].sessions.truncate(1);
    m.classes[0].counts.sessions = 1;
    m.classes[0].session_start_s = d(&[0.0]);
    m.udp.clear();
    let servers = |m: &Model| {
        let b = run_model(m, "structure = \"sessions\"", "10s");
        let log = &b.world.conn_log;
        let mut by_open: Vec<(f64, i64)> = (0..log.opened_s.len()).filter(|&i| log.active[i]).map(|i| (log.opened_s[i], log.peer[i])).collect();
        by_open.sort_by(|a, b| a.0.total_cmp(&b.0));
        by_open.into_iter().map(|(_, p)| p).collect::<Vec<_>>()
    };
    // As in the trace (and Swing): one server for the whole session.
    let one = servers(&m);
    assert_eq!(one.len(), 3);
    assert!(one.iter().all(|&p| p == one[0]), "{one:?}");
    // The second connection reached another server, the third the first
    // again: the model's two servers, in that pattern.
    m.classes[0].sessions[0].rres[0].conns[1].server = 1;
    let two = servers(&m);
    assert!(two[0] != two[1] && two[2] == two[0], "{two:?}");
}

#[test]
fn a_replayed_session_reaches_copies_of_its_own_trace_hosts() {
    // The kept session went to 192.0.2.2, 80 ms from the link (the other
    // server, 192.0.2.1, is 50 ms away and has three times its bytes):
    // each replay reaches a copy of it among 20 virtual hosts a side, so
    // every connection's round trip is its 80 ms plus the client's 10.
    let mut m = with_sessions();
    m.classes[0].sessions.truncate(1);
    m.classes[0].counts.sessions = 1;
    m.classes[0].session_start_s = d(&[0.0]);
    m.udp.clear();
    let srtts = |m: &Model| {
        let b = run_model(m, "structure = \"sessions\"\nhosts = 20", "20s");
        let log = &b.world.conn_log;
        (0..log.active.len()).filter(|&i| log.active[i]).map(|i| log.srtt_s[i]).collect::<Vec<f64>>()
    };
    m.classes[0].sessions[0].hosts = vec![0, 2];
    let far = srtts(&m);
    assert!(far.len() >= 3 && far.iter().all(|&r| (0.088..0.1).contains(&r)), "{far:?}");
    m.classes[0].sessions[0].hosts = vec![0, 1];
    let near = srtts(&m);
    assert!(near.len() >= 3 && near.iter().all(|&r| (0.058..0.07).contains(&r)), "{near:?}");
}

#[test]
fn concurrent_and_pair_connections_mix_in_the_trace_share_and_keep_their_servers_apart() {
    // Three connections in ten are concurrent (a server unit of 77,777
    // bytes, which no sum of the pairs' 10 kB and 50 kB responses makes),
    // four opened 1 ms apart to the one server, 50 ms away: every replay
    // is expected while connections opened before it are still in their
    // handshakes.
    let mut m = model();
    m.hosts.truncate(2);
    m.classes[0].conns_per_rre = d(&[4.0]);
    m.classes[0].inter_conn_s = d(&[0.001]);
    m.classes[0].counts.connections = 10;
    m.classes[0].counts.concurrent_connections = 3;
    m.classes[0].concurrent = vec![vec![[0.0, 0.0, 300.0], [0.01, 1.0, 77_777.0]]];
    let b = run_model(&m, "", "60s");
    let log = &b.world.conn_log;
    let clients: Vec<usize> = (0..log.active.len()).filter(|&i| log.active[i]).collect();
    let n = clients.len();
    let concurrent = clients.iter().filter(|&&i| log.bytes_received[i] == 77_777).count();
    // A deck of the trace's share: three in every ten drawn, whatever the
    // coin would have given.
    assert!((3 * (n / 10)..=3 * n.div_ceil(10)).contains(&concurrent), "{concurrent} of {n}");
    // Pair connections share their path with the replays; none was taken
    // for one (its server would have sent the units to a client expecting
    // a response, and answered the replay's client with nothing).
    let starved: Vec<usize> = clients.iter().copied().filter(|&i| log.bytes_received[i] == 0).collect();
    assert!(starved.is_empty(), "{} of {n} clients got nothing", starved.len());
    let received: i64 = clients.iter().map(|&i| log.bytes_received[i]).sum();
    assert_eq!(received as f64, counter(&b, "response_bytes"));
}

#[test]
fn a_drawn_session_spreads_its_connections_over_its_servers() {
    // One session, one RRE of 20 connections: by default (Swing) one
    // server takes them all; with two servers per session, both do.
    let mut m = model();
    m.classes[0].counts.sessions = 1;
    m.classes[0].session_start_s = d(&[0.0]);
    m.classes[0].rres_per_session = d(&[1.0]);
    m.classes[0].conns_per_rre = d(&[20.0]);
    m.udp.clear();
    let peers = |m: &Model| {
        let b = run_model(m, "", "10s");
        let log = &b.world.conn_log;
        let mut p: Vec<i64> = (0..log.active.len()).filter(|&i| log.active[i]).map(|i| log.peer[i]).collect();
        p.sort();
        p.dedup();
        p.len()
    };
    assert_eq!(peers(&m), 1);
    m.classes[0].servers_per_session = d(&[2.0]);
    assert_eq!(peers(&m), 2);
}

/// One session of one connection carrying two 10 kB responses.
fn one_connection() -> Model {
    let mut m = model();
    let c = &mut m.classes[0];
    c.counts.sessions = 1;
    c.session_start_s = d(&[0.0]);
    c.rres_per_session = d(&[1.0]);
    c.conns_per_rre = d(&[1.0]);
    c.pairs_per_conn = d(&[2.0]);
    c.response_bytes = d(&[10_000.0]);
    c.think_s = d(&[0.0]);
    c.sessions = vec![SessionSample {
        start_s: 0.0,
        rres: vec![RreSample { gap_s: 0.0, conns: vec![conn(0.0, &[[300.0, 10_000.0, 0.0], [300.0, 10_000.0, 0.0]])] }],
        hosts: vec![],
    }];
    m.udp.clear();
    m
}

/// How long the run's only connection lasted (the application's part: TIME_WAIT off).
fn lifetime(m: &Model, extra: &str) -> f64 {
    let b = run_model(m, extra, "5s");
    let log = &b.world.conn_log;
    let spans: Vec<f64> = (0..log.opened_s.len()).filter(|&i| log.active[i]).map(|i| log.closed_s[i] - log.opened_s[i]).collect();
    assert_eq!(spans.len(), 1, "{spans:?}");
    spans[0] - sim::world::TIME_WAIT.as_secs_f64()
}

#[test]
fn first_request_waits_server_times_and_idle_closes_delay_the_exchanges() {
    for structure in ["structure = \"sessions\"", ""] {
        let plain = one_connection();
        let base = lifetime(&plain, structure);
        // Replayed: the first request 0.25 s after the handshake, the server
        // 0.1 and 0.2 s before its responses, and the close 0.4 s after the
        // last; drawn: the same wait and close, 0.15 s each time.
        let mut timed = one_connection();
        let k = &mut timed.classes[0].sessions[0].rres[0].conns[0];
        k.pairs[0][2] = 0.25;
        k.server_s = vec![0.1, 0.2];
        k.close_s = 0.4;
        timed.classes[0].connect_wait_s = d(&[0.25]);
        timed.classes[0].server_s = d(&[0.15]);
        timed.classes[0].close_wait_s = d(&[0.4]);
        let slower = lifetime(&timed, structure) - base;
        // The exchanges' own round trips are about the same (a server
        // that waits acknowledges the request on its own, which moves the
        // close by well under a millisecond); a sender idle for longer than
        // its RTO may restart from its initial window, a few round trips
        // (60 ms) at most.
        assert!((0.945..0.95 + 0.2).contains(&slower), "{structure}: {slower}");
        // zero_think drops the client's wait and idle close, not the
        // server's time.
        let quick = lifetime(&timed, &format!("{structure}\nzero_think = true")) - base;
        assert!((0.295..0.3 + 0.2).contains(&quick), "{structure} zero_think: {quick}");
    }
}
