use super::*;
use crate::fake::{Fake, Op};
use units::Rng;

fn at(s: f64) -> Time {
    Time::from_secs_f64(s)
}

/// A bursty trace: about 3000 packets in 2 s, exponential gaps (a few
/// sharing a nanosecond), sizes 40 to 1500 bytes, five flows.
fn trace() -> Arc<PlaybackTrace> {
    let mut rng = Rng::stream(3, "playback-test");
    let mut t = 0.0;
    let mut packets = Vec::new();
    while t < 2e9 {
        let size = 40 + (rng.uniform() * 1461.0) as u32;
        let flow = (rng.uniform() * 5.0) as u32;
        packets.push(TracePacket { at: Dur(t as u64), size, flow });
        if rng.uniform() > 0.05 {
            t += rng.exponential(0.66e6);
        }
    }
    Arc::new(PlaybackTrace { packets, period: None })
}

fn config(transport: PlaybackTransport, granularity: Granularity, trace: Arc<PlaybackTrace>) -> PlaybackConfig {
    PlaybackConfig {
        name: "pb".into(),
        transport,
        granularity,
        pairs: vec![(1, 101), (2, 102)],
        trace,
        header: if transport == PlaybackTransport::Udp { 28 } else { 52 },
        port: 9,
        start: at(1.0),
        stop: at(10.0),
    }
}

fn run(cfg: PlaybackConfig, tp: Fake, until: f64) -> Fake {
    let mut f = tp;
    f.add(Playback::new(cfg));
    f.start();
    f.run_until(at(until));
    f
}

/// Packets (or bytes) per millisecond bin of the times given.
fn per_ms(items: impl Iterator<Item = (Dur, u64)>) -> std::collections::BTreeMap<u64, (u64, u64)> {
    let mut m = std::collections::BTreeMap::new();
    for (t, b) in items {
        let e = m.entry(t.0 / 1_000_000).or_insert((0, 0));
        e.0 += 1;
        e.1 += b;
    }
    m
}

#[test]
fn udp_exact_sends_every_packet_at_its_trace_time_with_its_size_from_its_flows_host() {
    let tr = trace();
    let f = run(config(PlaybackTransport::Udp, Granularity::Exact, tr.clone()), Fake::loopback(Dur::ZERO), 12.0);
    let sent = f.datagrams();
    assert_eq!(sent.len(), tr.packets.len());
    for (d, p) in sent.iter().zip(&tr.packets) {
        let (src, dst) = [(1, 101), (2, 102)][p.flow as usize % 2];
        assert_eq!((d.at, d.from, d.to, d.payload + 28), (at(1.0) + p.at, src, dst, p.size));
    }
    let bytes: u64 = tr.packets.iter().map(|p| p.size as u64).sum();
    assert_eq!(f.counter(0, "sent_bytes") as u64, bytes);
    assert_eq!(f.counter(0, "trace_bytes") as u64, bytes);
    // The sinks listen: every byte arrives.
    assert_eq!(f.counter(0, "received_bytes") as u64, bytes);
    assert_eq!(f.counter(0, "received_packets") as usize, sent.len());
}

#[test]
fn udp_at_1ms_sends_each_milliseconds_packets_at_its_start() {
    let tr = trace();
    let f = run(config(PlaybackTransport::Udp, Granularity::Millisecond, tr.clone()), Fake::loopback(Dur::ZERO), 12.0);
    let sent = f.datagrams();
    assert!(sent.iter().all(|d| (d.at - at(1.0)).0.is_multiple_of(1_000_000)));
    let got = per_ms(sent.iter().map(|d| (d.at - at(1.0), d.payload as u64 + 28)));
    let want = per_ms(tr.packets.iter().map(|p| (p.at, p.size as u64)));
    assert_eq!(got, want);
    // Bursty: some milliseconds hold several packets, sent at one instant.
    assert!(want.values().any(|&(n, _)| n >= 4), "{:?}", want.values().max());
}

#[test]
fn udp_stops_at_the_stop_and_a_short_trace_just_ends() {
    let tr = trace();
    let cfg = PlaybackConfig { stop: at(2.0), ..config(PlaybackTransport::Udp, Granularity::Exact, tr.clone()) };
    let f = run(cfg, Fake::loopback(Dur::ZERO), 12.0);
    let due = tr.packets.iter().filter(|p| p.at < Dur::from_secs(1)).count();
    assert_eq!(f.datagrams().len(), due);
    assert!(f.datagrams().iter().all(|d| d.at < at(2.0)));
    assert_eq!(f.counter(0, "trace_bytes") as u64, tr.packets[..due].iter().map(|p| p.size as u64).sum::<u64>());
}

/// Each write on the connection from `src`: (time, bytes asked, bytes taken).
fn writes(f: &Fake, src: HostId) -> Vec<(Time, u64, u64)> {
    let conn = f.connections().find(|c| c.host == src && c.client).expect("a connection").id;
    f.calls()
        .iter()
        .filter_map(|c| if let Op::Write { conn: w, bytes, took } = c.op { (w == conn).then_some((c.at, bytes, took)) } else { None })
        .collect()
}

#[test]
fn tcp_writes_each_hosts_trace_payload_per_millisecond_and_delivers_it_all() {
    let tr = trace();
    let f = run(config(PlaybackTransport::Tcp, Granularity::Millisecond, tr.clone()), Fake::loopback(Dur::from_millis(1)), 12.0);
    let mut total = 0;
    for (i, src) in [1, 2].into_iter().enumerate() {
        let c = f.connections().find(|c| c.host == src && c.client).expect("a connection").clone();
        // Opened at the start; the timeline begins when it is established.
        assert_eq!((c.opened, c.established), (at(1.0), Some(at(1.001))));
        let w = writes(&f, src);
        assert!(w.iter().all(|&(_, b, took)| b == took));
        let got = per_ms(w.iter().map(|&(t, b, _)| (t - at(1.001), b)));
        let mine = tr.packets.iter().filter(|p| p.flow as usize % 2 == i);
        let want = per_ms(mine.map(|p| (p.at, p.size.saturating_sub(52) as u64)));
        // One write per millisecond that holds payload, of all of it.
        let want: std::collections::BTreeMap<u64, (u64, u64)> =
            want.into_iter().filter(|(_, (_, b))| *b > 0).map(|(k, (_, b))| (k, (1, b))).collect();
        assert_eq!(got, want);
        // Everything marked and closed after the last write.
        assert_eq!(c.written, want.values().map(|v| v.1).sum::<u64>());
        assert!(f.calls().iter().any(|k| k.op == Op::Mark { conn: c.id, msg: c.written }));
        assert!(f.conn(c.id).closed.is_some_and(|t| t < at(3.01)));
        total += c.written;
    }
    assert_eq!(f.counter(0, "trace_bytes") as u64, total);
    assert_eq!(f.counter(0, "sent_bytes") as u64, total);
    assert_eq!(f.counter(0, "received_bytes") as u64, total);
    assert_eq!((f.counter(0, "blocked_s"), f.counter(0, "behind_s")), (0.0, 0.0));
}

#[test]
fn tcp_exact_writes_at_each_distinct_packet_time() {
    let tr = Arc::new(PlaybackTrace {
        packets: vec![
            TracePacket { at: Dur(1_500), size: 1052, flow: 0 },
            TracePacket { at: Dur(1_500), size: 552, flow: 2 },
            TracePacket { at: Dur(700_001), size: 100, flow: 0 },
            TracePacket { at: Dur(900_000), size: 40, flow: 0 },
        ],
        period: None,
    });
    let cfg = PlaybackConfig { pairs: vec![(1, 101)], ..config(PlaybackTransport::Tcp, Granularity::Exact, tr) };
    let f = run(cfg, Fake::loopback(Dur::ZERO), 12.0);
    // A packet smaller than the headers carries no payload: no write.
    assert_eq!(writes(&f, 1), vec![(at(1.0) + Dur(1_500), 1500, 1500), (at(1.0) + Dur(700_001), 48, 48)]);
}

#[test]
fn tcp_blocked_by_its_buffer_falls_behind_and_keeps_the_trace_gaps_after() {
    // A 3000-byte send buffer and 50 ms to the sink: the buffer frees far
    // slower than the trace (about 1.2 MB/s per host) fills it.
    let tr = trace();
    let cfg = PlaybackConfig { pairs: vec![(1, 101)], ..config(PlaybackTransport::Tcp, Granularity::Millisecond, tr.clone()) };
    let f = run(cfg, Fake::loopback(Dur::from_millis(50)).with_send_buffer(3000), 12.0);
    let w = writes(&f, 1);
    // Bins before the first short write went one write each; the blocked
    // bin's rest goes when space frees (a `Writable`), maybe in parts.
    let k = w.iter().position(|&(_, b, took)| took < b).expect("a short write");
    let done = k + 1 + w[k + 1..].iter().position(|&(_, b, took)| took == b).expect("the blocked bin completes");
    let writable: Vec<Time> = f.told().iter().filter(|t| matches!(t.event, Event::Writable(_))).map(|t| t.at).collect();
    assert!(w[k + 1..=done].iter().all(|x| writable.contains(&x.0)));
    assert_eq!(w[k..=done].iter().map(|x| x.2).sum::<u64>(), w[k].1);
    // The next bin follows the completed one by its trace gap.
    let bins: Vec<(u64, u64)> = per_ms(tr.packets.iter().map(|p| (p.at, p.size.saturating_sub(52) as u64)))
        .into_iter()
        .map(|(ms, v)| (ms, v.1))
        .filter(|v| v.1 > 0)
        .collect();
    assert_eq!(w[done + 1].1, bins[k + 1].1);
    assert_eq!(w[done + 1].0 - w[done].0, Dur::from_millis(bins[k + 1].0 - bins[k].0));
    // Responsive: about 3000 bytes went every 50 ms, far less than the trace.
    let sent = f.counter(0, "sent_bytes");
    assert!(sent < 3000.0 * 200.0, "{sent}");
    assert!(f.counter(0, "trace_bytes") > 2e6);
    assert!(f.counter(0, "blocked_s") > 5.0 && f.counter(0, "behind_s") > 5.0);
}

#[test]
fn udp_looped_plays_the_trace_again_every_period_until_the_stop() {
    // The 2 s trace every 2.5 s from 1 s to 10 s: passes at 0, 2.5, 5 and
    // 7.5 s of the model's 9, the last one cut at 9 s (1.5 s into it).
    let mut tr = (*trace()).clone();
    tr.period = Some(Dur::from_millis(2_500));
    let tr = Arc::new(tr);
    let f = run(config(PlaybackTransport::Udp, Granularity::Exact, tr.clone()), Fake::loopback(Dur::ZERO), 12.0);
    let sent = f.datagrams();
    let last_pass = tr.packets.iter().filter(|p| p.at < Dur::from_millis(1_500)).count();
    assert_eq!(sent.len(), 3 * tr.packets.len() + last_pass);
    for (pass, chunk) in sent.chunks(tr.packets.len()).enumerate() {
        for (d, p) in chunk.iter().zip(&tr.packets) {
            let shift = Dur::from_millis(2_500 * pass as u64);
            assert_eq!((d.at, d.payload + 28), (at(1.0) + p.at + shift, p.size));
        }
    }
    let bytes: u64 = sent.iter().map(|d| d.payload as u64 + 28).sum();
    assert_eq!(f.counter(0, "trace_bytes") as u64, bytes);
}

#[test]
fn a_loops_period_keeps_its_packets_on_the_millisecond_grid_and_after_the_last_packet() {
    // A period of 1.2345 ms under 1 ms granularity plays every 2 ms; one
    // shorter than the trace, just after its last packet (on the grid).
    assert_eq!(Granularity::Millisecond.period(Dur(1_234_500), Dur(900_000)), Dur::from_millis(2));
    assert_eq!(Granularity::Millisecond.period(Dur(1_000), Dur(2_000_000)), Dur::from_millis(3));
    assert_eq!(Granularity::Exact.period(Dur(1_000), Dur(2_000_000)), Dur(2_000_001));
    assert_eq!(Granularity::Exact.period(Dur(1_234_500), Dur(900_000)), Dur(1_234_500));
}

#[test]
fn tcp_looped_keeps_one_connection_and_writes_every_pass_at_its_times() {
    let mut tr = (*trace()).clone();
    tr.period = Some(Dur::from_millis(2_500));
    let tr = Arc::new(tr);
    let cfg = PlaybackConfig { pairs: vec![(1, 101)], ..config(PlaybackTransport::Tcp, Granularity::Millisecond, tr.clone()) };
    let f = run(cfg, Fake::loopback(Dur::from_millis(1)), 12.0);
    assert_eq!(f.connections().filter(|c| c.host == 1 && c.client).count(), 1);
    let w = writes(&f, 1);
    let got = per_ms(w.iter().map(|&(t, b, _)| (t - at(1.001), b)));
    // The connection's timeline starts when it is established, 1 ms after
    // the model's start, and ends with the model 8.999 s into it, within
    // the fourth pass.
    let span = Dur::from_millis(8_999);
    let want = per_ms(
        (0..4u64)
            .flat_map(|k| tr.packets.iter().map(move |p| (p.at + Dur::from_millis(2_500 * k), p.size.saturating_sub(52) as u64)))
            .filter(|&(t, b)| Granularity::Millisecond.due(t) < span && b > 0),
    );
    let want: std::collections::BTreeMap<u64, (u64, u64)> = want.into_iter().map(|(k, (_, b))| (k, (1, b))).collect();
    assert_eq!(got, want);
    assert!(got.keys().any(|&ms| ms >= 7_500), "the fourth pass plays");
}
