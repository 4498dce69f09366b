//! The Swing source on the fake transport, against hand-built models whose
//! every distribution is a short list of values.

use super::*;
use crate::fake::{Conn, Fake, Message};
use swing::example::d;
use swing::SessionSample;

fn at(s: f64) -> Time {
    Time::from_secs_f64(s)
}

fn secs(s: f64) -> Dur {
    Dur::from_secs_f64(s)
}

/// Four sessions in a 10 s trace: one client host on side A, servers on
/// side B, HTTP on port 80 and DNS.
fn model() -> Model {
    swing::example::four_sessions()
}

/// The model with one session a period, at 0.5 s, of three RREs of two
/// connections of two pairs each, every size and time one value.
fn one_session() -> Model {
    let mut m = model();
    let c = &mut m.classes[0];
    c.counts.sessions = 1;
    c.session_start_s = d(&[0.5]);
    c.rres_per_session = d(&[3.0]);
    c.conns_per_rre = d(&[2.0]);
    c.pairs_per_conn = d(&[2.0]);
    c.request_bytes = d(&[300.0]);
    c.response_bytes = d(&[10_000.0]);
    m.udp.clear();
    m
}

fn conn_sample(at_s: f64, pairs: &[[f64; 3]]) -> ConnSample {
    ConnSample { at_s, pairs: pairs.to_vec(), adus: vec![], server: 0, server_s: vec![], close_s: 0.0, after: vec![] }
}

/// The model with one kept session, started at 0 s once a period: an RRE
/// of two connections 0.5 s apart (two pairs 0.3 s apart, then one), then
/// 1 s after it ends an RRE of one connection.
fn kept_session() -> Model {
    let mut m = model();
    let c = &mut m.classes[0];
    c.counts.sessions = 1;
    c.session_start_s = d(&[0.0]);
    c.sessions = vec![SessionSample {
        start_s: 0.0,
        rres: vec![
            RreSample {
                gap_s: 0.0,
                conns: vec![conn_sample(0.0, &[[300.0, 10_000.0, 0.0], [400.0, 20_000.0, 0.3]]), conn_sample(0.5, &[[100.0, 5_000.0, 0.0]])],
            },
            RreSample { gap_s: 1.0, conns: vec![conn_sample(0.0, &[[200.0, 1_000.0, 0.0]])] },
        ],
        hosts: vec![],
    }];
    m.udp.clear();
    m
}

/// Side A is host 10, side B hosts 20 and 21; servers listen on the
/// class's own port; one 10 s period until 10 s.
fn config(m: Model) -> SwingConfig {
    SwingConfig {
        name: "sw".into(),
        model: Arc::new(m),
        hosts: [vec![10], vec![20, 21]],
        ipv6: [vec![], vec![]],
        copies: [vec![], vec![]],
        start: Time::ZERO,
        stop: at(10.0),
        session_scale: 1.0,
        response_scale: 1.0,
        zero_think: false,
        port_base: 0,
        structure: Structure::Marginals,
    }
}

/// The source started on a loopback of one-way `delay`.
fn started(cfg: SwingConfig, delay: Dur) -> Fake {
    let mut f = Fake::loopback(delay);
    f.add(SwingSource::new(cfg, Rng::stream(1, "swing-test")));
    f.start();
    f
}

/// The source run until `until` s on an instant loopback.
fn run(cfg: SwingConfig, until: f64) -> Fake {
    let mut f = started(cfg, Dur::ZERO);
    f.run_until(at(until));
    f
}

/// The client connections, in the order they were opened.
fn clients(f: &Fake) -> Vec<Conn> {
    f.connections().cloned().collect()
}

/// The requests a client connection sent, in order.
fn requests<'a>(f: &'a Fake, c: &Conn) -> Vec<&'a Message> {
    f.messages().iter().filter(|m| m.conn == c.id).collect()
}

/// The responses a client connection received, in order.
fn responses<'a>(f: &'a Fake, c: &Conn) -> Vec<&'a Message> {
    f.messages().iter().filter(|m| Some(m.conn) == c.peer).collect()
}

/// Writes (or any call) `conn`'s application made on it after `t`.
fn calls_on_after(f: &Fake, conn: ConnId, t: Time) -> usize {
    use crate::fake::Op;
    f.calls()
        .iter()
        .filter(|c| c.at > t)
        .filter(|c| match c.op {
            Op::Write { conn: w, .. } | Op::Mark { conn: w, .. } | Op::Close { conn: w } => w == conn,
            _ => false,
        })
        .count()
}

#[test]
fn a_period_starts_the_models_sessions_times_the_scale() {
    // Three 10 s periods of four sessions each, at 0, 1, 2 and 3 s into
    // each period; all of them complete.
    let cfg = SwingConfig { stop: at(30.0), ..config(model()) };
    let f = run(cfg.clone(), 60.0);
    assert_eq!(f.counter(0, "sessions"), 12.0);
    assert_eq!(f.counter(0, "sessions_completed"), 12.0);
    let opened: Vec<Time> = f.connections().map(|c| c.opened).collect();
    for p in [0.0, 10.0, 20.0] {
        for o in [0.0, 1.0, 2.0, 3.0] {
            assert!(opened.contains(&at(p + o)), "no session started at {} s: {opened:?}", p + o);
        }
    }
    assert!(opened.iter().all(|&t| t < at(30.0)), "nothing starts after the stop");
    // A whole scale multiplies every period's sessions.
    let f = run(SwingConfig { session_scale: 2.0, ..cfg.clone() }, 60.0);
    assert_eq!(f.counter(0, "sessions"), 24.0);
    // A fractional one draws the fraction: 4 × 1.3 = 5.2 is 5 or 6 sessions
    // in each period, 5.2 a period on average.
    let mut f = started(SwingConfig { session_scale: 1.3, stop: at(1000.0), ..cfg }, Dur::ZERO);
    let mut per_period = Vec::new();
    let mut before = 0.0;
    for p in 0..100 {
        // A period's sessions have all started 3 s into it.
        f.run_until(at(p as f64 * 10.0 + 5.0));
        let now = f.counter(0, "sessions");
        per_period.push(now - before);
        before = now;
    }
    assert!(per_period.iter().all(|&n| n == 5.0 || n == 6.0), "{per_period:?}");
    let sixes = per_period.iter().filter(|&&n| n == 6.0).count();
    assert!((10..=30).contains(&sixes), "{sixes} periods of 6 in 100, 20 expected");
}

#[test]
fn rres_connections_and_pairs_follow_the_models_distributions() {
    // Three periods: the RRE deck (2, 2, 3, 1) gives 8 RREs a period; 24
    // RREs draw 1 or 2 connections each, 12 times each (a deck draws each
    // value once per cycle): 36 connections, which draw 1 or 3 pairs, 18
    // times each: 72 pairs.
    let f = run(SwingConfig { stop: at(30.0), ..config(model()) }, 60.0);
    assert_eq!(f.counter(0, "rres"), 24.0);
    assert_eq!(f.counter(0, "connections"), 36.0);
    assert_eq!(f.counter(0, "pairs"), 72.0);
    let conns = clients(&f);
    assert_eq!(conns.len(), 36);
    // In opening order, each two connections drew 1 and 3 pairs.
    let pairs: Vec<usize> = conns.iter().map(|c| requests(&f, c).len()).collect();
    for two in pairs.chunks(2) {
        let mut two = two.to_vec();
        two.sort_unstable();
        assert_eq!(two, vec![1, 3], "{pairs:?}");
    }
    // Every response came back, every connection closed at both ends.
    assert!(conns.iter().all(|c| responses(&f, c).len() == requests(&f, c).len()));
    assert!(conns.iter().all(|c| c.ended.is_some() && !c.reset && f.conn(c.peer.expect("accepted")).ended.is_some()));
    // Clients on side A, servers on side B, on the class's port.
    assert!(conns.iter().all(|c| c.host == 10 && [20, 21].contains(&c.remote) && c.port == 80));
}

#[test]
fn requests_and_responses_carry_the_models_sizes_and_responses_the_scale() {
    let f = run(SwingConfig { stop: at(30.0), response_scale: 1.5, ..config(model()) }, 60.0);
    let (mut req, mut rsp) = (Vec::new(), Vec::new());
    for c in clients(&f) {
        let (q, r) = (requests(&f, &c), responses(&f, &c));
        assert_eq!(q.len(), r.len());
        for (q, r) in q.iter().zip(&r) {
            // Each request asks for the size its response then has, at once.
            assert_eq!(parse_request(q.msg), (r.bytes, Dur::ZERO));
            assert_eq!((r.msg, q.writes, r.writes), (r.bytes, 1, 1), "one write each without write tables");
            req.push(q.bytes);
            rsp.push(r.bytes);
        }
    }
    // 72 pairs: each deck value 36 times; responses ×1.5.
    let count = |v: &[u64], x: u64| v.iter().filter(|&&b| b == x).count();
    assert_eq!((req.len(), count(&req, 300), count(&req, 500)), (72, 36, 36));
    assert_eq!((count(&rsp, 15_000), count(&rsp, 75_000)), (36, 36));
    assert_eq!(f.counter(0, "request_bytes"), req.iter().sum::<u64>() as f64);
    assert_eq!(f.counter(0, "response_bytes"), rsp.iter().sum::<u64>() as f64);
}

#[test]
fn responses_go_out_in_the_application_writes_the_trace_showed() {
    // Servers that wrote 1000 bytes at a time; clients that wrote each
    // request in three writes.
    let mut m = model();
    m.classes[0].response_writes = vec![[10_000.0, 10.0], [50_000.0, 50.0]];
    m.classes[0].request_writes = vec![[300.0, 3.0], [500.0, 3.0]];
    let f = run(config(m), 20.0);
    let msgs = f.messages();
    assert!(!msgs.is_empty());
    for m in msgs {
        let want = if m.client { 3 } else { m.bytes / 1000 };
        assert_eq!(m.writes as u64, want, "{m:?}");
    }
    let c = f.connections().next().expect("a connection");
    let w = f.writes(c.peer.expect("accepted"));
    assert!(w.iter().all(|&b| b == 1000), "{w:?}");
}

#[test]
fn think_times_separate_a_connections_requests_and_a_sessions_rres() {
    // A 1 ms loopback: every exchange takes its round trips, the gaps are
    // the model's.
    let f = {
        let mut f = started(config(one_session()), Dur::from_millis(1));
        f.run_until(at(20.0));
        f
    };
    assert_eq!(f.counter(0, "sessions_completed"), 1.0);
    let c = clients(&f);
    assert_eq!(c.len(), 6, "three RREs of two connections");
    assert_eq!(c[0].opened, at(0.5));
    for rre in c.chunks(2) {
        // The RRE's connections open 10 ms apart (inter_conn_s).
        assert_eq!(rre[1].opened - rre[0].opened, secs(0.01));
        for k in rre {
            let (q, r) = (requests(&f, k), responses(&f, k));
            assert_eq!((q.len(), r.len()), (2, 2));
            // The first request goes as soon as the handshake completes
            // (no connect wait in the model), the second 0.2 s (think_s)
            // after the first response is in.
            assert_eq!(q[0].started, k.established.expect("established"));
            assert_eq!(q[1].started - r[0].delivered.expect("delivered"), secs(0.2));
            // The connection closes as soon as its last response is in.
            assert_eq!(k.closed, r[1].delivered);
        }
    }
    // The next RRE starts 0.5 s (inter_rre_s) after the last connection of
    // the previous one closed.
    for k in [2, 4] {
        let end = c[k - 2].ended.max(c[k - 1].ended).expect("closed");
        assert_eq!(c[k].opened - end, secs(0.5));
    }
}

#[test]
fn zero_think_drops_think_times_but_not_the_gaps_between_connections() {
    let mut f = started(SwingConfig { zero_think: true, ..config(one_session()) }, Dur::from_millis(1));
    f.run_until(at(20.0));
    let c = clients(&f);
    assert_eq!(c.len(), 6);
    for rre in c.chunks(2) {
        assert_eq!(rre[1].opened - rre[0].opened, secs(0.01));
        for k in rre {
            let (q, r) = (requests(&f, k), responses(&f, k));
            assert_eq!(q[1].started, r[0].delivered.expect("delivered"));
        }
    }
    for k in [2, 4] {
        assert_eq!(Some(c[k].opened), c[k - 2].ended.max(c[k - 1].ended));
    }
}

#[test]
fn a_first_request_waits_the_server_takes_its_time_and_an_idle_connection_lingers() {
    let mut m = one_session();
    let c = &mut m.classes[0];
    (c.rres_per_session, c.conns_per_rre) = (d(&[1.0]), d(&[1.0]));
    c.connect_wait_s = d(&[0.25]);
    c.server_s = d(&[0.15]);
    c.close_wait_s = d(&[0.4]);
    for zero_think in [false, true] {
        let f = run(SwingConfig { zero_think, ..config(m.clone()) }, 10.0);
        let k = &clients(&f)[0];
        let (q, r) = (requests(&f, k), responses(&f, k));
        // zero_think drops the client's wait and idle close, not the
        // server's time.
        let (wait, linger) = if zero_think { (0.0, 0.0) } else { (0.25, 0.4) };
        assert_eq!(q[0].started - k.opened, secs(wait), "zero_think {zero_think}");
        for (q, r) in q.iter().zip(&r) {
            assert_eq!(parse_request(q.msg).1, secs(0.15));
            assert_eq!(r.started - q.delivered.expect("delivered"), secs(0.15));
        }
        assert_eq!(k.closed.expect("closed") - r[1].delivered.expect("delivered"), secs(linger));
    }
}

#[test]
fn whole_session_replay_reproduces_a_kept_sessions_connections_pairs_and_timings() {
    let f = run(SwingConfig { structure: Structure::Sessions, ..config(kept_session()) }, 10.0);
    let c = clients(&f);
    assert_eq!(c.len(), 3);
    let sizes = |k: &Conn| -> Vec<(u64, u64)> { requests(&f, k).iter().zip(responses(&f, k)).map(|(q, r)| (q.bytes, r.bytes)).collect() };
    // The kept sizes, not the marginals'.
    assert_eq!(sizes(&c[0]), vec![(300, 10_000), (400, 20_000)]);
    assert_eq!(sizes(&c[1]), vec![(100, 5_000)]);
    assert_eq!(sizes(&c[2]), vec![(200, 1_000)]);
    // Connections at their offsets; the second pair 0.3 s after the first
    // response; the second RRE 1 s after the first one's last close.
    assert_eq!((c[0].opened, c[1].opened), (at(0.0), at(0.5)));
    let (q, r) = (requests(&f, &c[0]), responses(&f, &c[0]));
    assert_eq!(q[1].started - r[0].delivered.expect("delivered"), secs(0.3));
    let end = c[0].ended.max(c[1].ended).expect("closed");
    assert_eq!((end, c[2].opened), (at(0.5), at(1.5)));
    assert_eq!((f.counter(0, "rres"), f.counter(0, "pairs"), f.counter(0, "sessions_completed")), (2.0, 4.0, 1.0));
    // Without whole sessions the marginals draw the same model's sessions:
    // requests of 300 or 500 bytes.
    let f = run(config(kept_session()), 10.0);
    assert!(f.messages().iter().filter(|m| m.client).all(|m| [300, 500].contains(&m.bytes)));
}

#[test]
fn whole_session_replay_draws_each_kept_session_once_per_cycle() {
    // Two kept sessions (two RREs and three connections, one RRE and one
    // connection), four sessions a period: each kept one twice.
    let mut m = kept_session();
    let c = &mut m.classes[0];
    c.sessions.push(SessionSample {
        start_s: 2.0,
        rres: vec![RreSample { gap_s: 0.0, conns: vec![conn_sample(0.0, &[[50.0, 60_000.0, 0.0]])] }],
        hosts: vec![],
    });
    c.counts.sessions = 4;
    c.session_start_s = d(&[0.0, 1.0, 2.0, 3.0]);
    let f = run(SwingConfig { structure: Structure::Sessions, stop: at(30.0), ..config(m) }, 60.0);
    assert_eq!(f.counter(0, "sessions_completed"), 12.0);
    assert_eq!(f.counter(0, "rres"), 6.0 * 2.0 + 6.0);
    assert_eq!(f.counter(0, "connections"), 6.0 * 3.0 + 6.0);
    assert_eq!(f.counter(0, "response_bytes"), 6.0 * 36_000.0 + 6.0 * 60_000.0);
}

#[test]
fn a_replayed_request_that_followed_another_connections_response_waits_for_it() {
    // Connection 0's response takes the server 2 s; connection 1's second
    // request followed it by 10 ms in the trace, 3 s after its own first.
    let mut m = kept_session();
    let mut c0 = conn_sample(0.0, &[[100.0, 1_000.0, 0.0]]);
    c0.server_s = vec![2.0];
    let mut c1 = conn_sample(0.0, &[[100.0, 1_000.0, 0.0], [100.0, 1_000.0, 3.0]]);
    c1.after = vec![None, Some([0.0, 0.0, 0.010])];
    m.classes[0].sessions = vec![SessionSample { start_s: 0.0, rres: vec![RreSample { gap_s: 0.0, conns: vec![c0, c1.clone()] }], hosts: vec![] }];
    let second = |m: Model| {
        let f = run(SwingConfig { structure: Structure::Sessions, ..config(m) }, 10.0);
        let c = clients(&f);
        let q = requests(&f, &c[1]);
        (responses(&f, &c[0])[0].delivered.expect("delivered"), q[1].started)
    };
    let (other, started) = second(m.clone());
    assert_eq!((other, started), (at(2.0), at(2.01)));
    // Without the order, its own think time.
    m.classes[0].sessions[0].rres[0].conns[1].after.clear();
    assert_eq!(second(m).1, at(3.0));
}

#[test]
fn a_drawn_session_spreads_its_connections_over_its_servers() {
    // One RRE of 20 connections: one server takes them all by default (as
    // in Swing), both with two servers per session.
    let mut m = one_session();
    (m.classes[0].rres_per_session, m.classes[0].conns_per_rre) = (d(&[1.0]), d(&[20.0]));
    let servers = |m: &Model| {
        let f = run(config(m.clone()), 10.0);
        let mut s: Vec<HostId> = f.connections().map(|c| c.remote).collect();
        assert_eq!(s.len(), 20);
        s.sort_unstable();
        s.dedup();
        s
    };
    assert_eq!(servers(&m).len(), 1);
    m.classes[0].servers_per_session = d(&[2.0]);
    assert_eq!(servers(&m), vec![20, 21]);
}

#[test]
fn a_concurrent_connection_sends_each_sides_units_at_their_offsets() {
    // Every connection concurrent: the client's 300-byte units at 0 and
    // 0.5 s, the server's 20 kB at 10 ms and 50 kB at 0.3 s, not waiting
    // for the requests.
    let mut m = one_session();
    let c = &mut m.classes[0];
    (c.rres_per_session, c.conns_per_rre) = (d(&[1.0]), d(&[1.0]));
    c.counts.connections = 10;
    c.counts.concurrent_connections = 10;
    c.concurrent = vec![vec![[0.0, 0.0, 300.0], [0.5, 0.0, 300.0], [0.01, 1.0, 20_000.0], [0.3, 1.0, 50_000.0]]];
    let f = run(config(m), 10.0);
    let k = &clients(&f)[0];
    let s = k.peer.expect("accepted");
    let writes = |conn: ConnId| -> Vec<(Time, u64)> {
        f.calls()
            .iter()
            .filter_map(|c| if let crate::fake::Op::Write { conn: w, took, .. } = c.op { (w == conn).then_some((c.at, took)) } else { None })
            .collect()
    };
    assert_eq!(writes(k.id), vec![(at(0.5), 300), (at(1.0), 300)]);
    assert_eq!(writes(s), vec![(at(0.51), 20_000), (at(0.8), 50_000)]);
    assert!(f.messages().is_empty(), "no request/response pairs");
    assert_eq!((f.counter(0, "pairs"), f.counter(0, "request_bytes"), f.counter(0, "response_bytes")), (0.0, 600.0, 70_000.0));
    // Each side closes once its units are written; the session is over.
    assert_eq!((k.closed, f.conn(s).closed), (Some(at(1.0)), Some(at(0.8))));
    assert_eq!(f.counter(0, "sessions_completed"), 1.0);
}

#[test]
fn udp_flows_send_their_packets() {
    let mut m = model();
    m.classes.clear();
    let f = run(SwingConfig { stop: at(30.0), ..config(m) }, 40.0);
    assert_eq!((f.counter(0, "udp_flows"), f.counter(0, "udp_packets")), (6.0, 21.0));
    let sent = f.datagrams();
    assert_eq!(sent.len(), 21);
    for p in [0.0, 10.0, 20.0] {
        let mut period: Vec<_> = sent.iter().filter(|g| g.at >= at(p) && g.at < at(p + 10.0)).collect();
        period.sort_by_key(|g| g.at);
        // From the client (side A) and back, on the class's port; each
        // flow's packets at the flow's start, the reply's at its reply
        // time, then at the direction's gaps (0.5 s out, 1 s back).
        let times: Vec<(f64, bool)> = period.iter().map(|g| ((g.at - at(p)).as_secs_f64(), g.from == 10)).collect();
        let want = [(0.5, true), (0.52, false), (4.0, true), (4.1, false), (4.5, true), (5.0, true), (5.1, false)];
        assert_eq!(times.len(), want.len());
        for (got, want) in times.iter().zip(want) {
            assert!((got.0 - want.0).abs() < 1e-9 && got.1 == want.1, "{times:?}");
        }
        assert!(period.iter().all(|g| g.src_port == 53 && g.dst_port == 53 && (g.from == 10) != (g.to == 10)));
        // Sizes through the direction's deck: each value once a period,
        // less the 28 bytes of IP and UDP headers.
        let mut out: Vec<u32> = period.iter().filter(|g| g.from == 10).map(|g| g.payload).collect();
        let mut back: Vec<u32> = period.iter().filter(|g| g.to == 10).map(|g| g.payload).collect();
        out.sort_unstable();
        back.sort_unstable();
        assert_eq!((out, back), (vec![42, 72, 72, 72], vec![172, 472, 472]));
    }
}

#[test]
fn whole_session_replay_sends_a_kept_udp_flows_own_packets() {
    let mut m = model();
    m.classes.clear();
    m.udp[0].samples[1].sequence = vec![[0.0, 0.0, 100.0], [0.25, 1.0, 600.0], [0.5, 0.0, 128.0]];
    let f = run(SwingConfig { structure: Structure::Sessions, ..config(m) }, 10.0);
    let kept: Vec<(Time, bool, u32)> = f.datagrams().iter().filter(|g| g.at >= at(4.0)).map(|g| (g.at, g.from == 10, g.payload)).collect();
    assert_eq!(kept, vec![(at(4.0), true, 72), (at(4.25), false, 572), (at(4.5), true, 100)]);
    // The other flow, without a sequence, is drawn as before.
    assert_eq!(f.counter(0, "udp_packets"), 2.0 + 3.0);
}

#[test]
fn a_reset_connection_ends_its_part_and_the_session_goes_on() {
    // One session of three RREs of two connections (10 ms loopback):
    // reset the first connection's client end while its first request is
    // in flight (its TCP gave up), and both ends of the third while it
    // thinks between its pairs (an RST).
    let mut f = started(config(one_session()), Dur::from_millis(10));
    f.run_until(at(0.515));
    let first = clients(&f)[0].clone();
    assert_eq!(requests(&f, &first).len(), 1);
    f.reset(first.id);
    let third = loop {
        f.advance(Dur::from_millis(1));
        if let Some(k) = clients(&f).get(2).filter(|k| responses(&f, k).first().is_some_and(|r| r.delivered.is_some())) {
            break k.clone();
        }
        assert!(f.now() < at(10.0), "the session stalled");
    };
    f.reset(third.id);
    f.reset(third.peer.expect("accepted"));
    let reset_at = f.now();
    f.run_until(at(20.0));
    // Nothing more was written or closed on the reset ends; the first's
    // response went nowhere.
    for k in [&first, &third] {
        assert!(f.conn(k.id).reset);
        assert_eq!(calls_on_after(&f, k.id, reset_at.max(at(0.515))), 0);
    }
    assert!(responses(&f, &first).iter().all(|r| r.delivered.is_none()));
    assert_eq!(calls_on_after(&f, third.peer.expect("accepted"), reset_at), 0);
    // The session went on: all six connections opened and counted, the
    // others' pairs complete, the session complete.
    assert_eq!(f.counter(0, "connections"), 6.0);
    assert_eq!(f.counter(0, "pairs"), 4.0 * 2.0 + 1.0);
    assert_eq!(f.counter(0, "sessions_completed"), 1.0);
}

#[test]
fn a_refused_connect_is_counted_and_does_not_stall_the_session() {
    let mut f = Fake::loopback(Dur::from_millis(10));
    f.add(SwingSource::new(config(one_session()), Rng::stream(1, "swing-test")));
    f.refuse_port(20, 80);
    f.refuse_port(21, 80);
    f.start();
    f.run_until(at(10.0));
    let c = clients(&f);
    assert_eq!(c.len(), 6, "every RRE tried its connections");
    assert!(c.iter().all(|k| k.reset && k.established.is_none()));
    // Each RRE ended with its refused connections; the next followed its gap.
    for k in [2, 4] {
        assert_eq!(c[k].opened - c[k - 1].ended.expect("refused"), secs(0.5));
    }
    assert_eq!((f.counter(0, "connections"), f.counter(0, "pairs")), (6.0, 0.0));
    assert_eq!(f.counter(0, "sessions_completed"), 1.0);
}

/// Known bug, left for its owner (see the ignore reason): `open_conn`
/// queues every connection's plan for its server's accept
/// (`Replays::expect`), and nothing takes it out when the connect fails:
/// the next connection on the same (client, server, port) path is then
/// served as the failed one should have been, and so on for the rest of
/// the run. In the simulator a connect fails when all its SYNs or SYN/ACKs
/// are lost (handshake loss).
#[test]
fn a_refused_connect_does_not_shift_the_servers_of_later_connections_on_its_path() {
    // One server host; one RRE of two connections, one concurrent and one
    // with a pair (a deck of the share, 1 in 2); the first connect refused.
    for seed in 1..=5 {
        let mut m = one_session();
        let c = &mut m.classes[0];
        (c.rres_per_session, c.conns_per_rre, c.pairs_per_conn) = (d(&[1.0]), d(&[2.0]), d(&[1.0]));
        c.request_bytes = d(&[111.0]);
        c.counts.connections = 2;
        c.counts.concurrent_connections = 1;
        c.concurrent = vec![vec![[0.0, 0.0, 300.0], [0.01, 1.0, 20_000.0]]];
        let cfg = SwingConfig { hosts: [vec![10], vec![20]], ..config(m) };
        let mut f = Fake::loopback(Dur::from_millis(1));
        f.add(SwingSource::new(cfg, Rng::stream(seed, "swing-test")));
        f.start();
        f.run_until(at(0.5));
        f.refuse(clients(&f)[0].id);
        f.run_until(at(10.0));
        let second = clients(&f)[1].clone();
        let server = f.writes(second.peer.expect("accepted"));
        if requests(&f, &second).is_empty() {
            // Concurrent: its server sends its unit (seeds 1-3 send nothing:
            // served as the refused pair connection would have been).
            assert_eq!(server, vec![20_000], "seed {seed}");
        } else {
            // Pairs: its request is answered (seeds 4-5 get the refused
            // concurrent connection's unit instead, and no response).
            assert_eq!((server, responses(&f, &second).len()), (vec![10_000], 1), "seed {seed}");
        }
    }
}

#[test]
fn a_new_server_is_the_rth_host_not_yet_reached_as_a_filtered_copy_would_give() {
    let mut rng = Rng::stream(3, "test/servers");
    for _ in 0..2000 {
        let n = 1 + rng.below(40) as usize;
        let pool: Vec<HostId> = (0..n as u32).map(|i| 100 + 3 * i).collect();
        // Reached servers: some in the pool, some repeated, some elsewhere.
        let reached: Vec<HostId> = (0..rng.below(6)).map(|_| 100 + rng.below(3 * n as u64 + 6) as u32).collect();
        let fresh: Vec<HostId> = pool.iter().copied().filter(|h| !reached.contains(h)).collect();
        let skip = positions(&pool, &reached);
        assert_eq!(pool.len() - skip.len(), fresh.len());
        for (r, &h) in fresh.iter().enumerate() {
            assert_eq!(pool[skipping(&skip, r)], h);
        }
    }
}
