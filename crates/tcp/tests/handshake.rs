mod common;
use common::*;
use tcp::{Algorithm, Dur, Flags, RtoEstimator, State, TcpConfig, Time};

fn ms(x: u64) -> Dur {
    Dur::from_millis(x)
}

/// RFC 6298's timer, which runs exactly when due (Linux's runs on its timer wheel,
/// `connect_gives_up_after_syn_retries` shows both).
fn rfc(alg: Algorithm) -> TcpConfig {
    TcpConfig { rto_estimator: RtoEstimator::Rfc6298, ..cfg(alg, true) }
}

#[test]
fn handshake_establishes_and_negotiates_mss() {
    // Timestamps off: the negotiated MSS is the segment size (linux.rs covers them).
    let a = TcpConfig { mss: 1460, timestamps: false, ..TcpConfig::default() };
    let b = TcpConfig { mss: 1000, timestamps: false, ..TcpConfig::default() };
    let mut net = Net::new(a, b, ms(10));
    net.start();
    net.run(Time::from_secs_f64(1.0));
    assert_eq!(net.a().state(), State::Established);
    assert_eq!(net.b().state(), State::Established);
    assert_eq!((net.a().mss(), net.b().mss()), (1000, 1000));
    assert_eq!(net.app[0].established, Some(Time(20_000_000)), "one RTT after the SYN");
    assert_eq!(net.app[1].established, Some(Time(30_000_000)));
    let syn = net.log[0].seg;
    assert_eq!((syn.flags, syn.seq, syn.seq_len(), syn.header_len()), (Flags::SYN, 0, 1, 32));
    let synack = net.log[1].seg;
    assert_eq!(synack.flags, Flags::SYN | Flags::ACK);
    assert_eq!(synack.ack, 1);
    // Handshake RTT sample: SRTT = 20 ms on both ends.
    assert_eq!(net.a().srtt(), Some(ms(20)));
    assert_eq!(net.b().srtt(), Some(ms(20)));
    assert_eq!(net.a().cwnd(), 10_000, "IW = 10 segments (RFC 6928)");
}

#[test]
fn sack_negotiation_on_and_off() {
    for (sa, sb, expect) in [(true, true, true), (true, false, false), (false, true, false), (false, false, false)] {
        let mut net = Net::new(cfg(Algorithm::Cubic, sa), cfg(Algorithm::Cubic, sb), ms(5));
        net.start();
        net.run(Time::from_secs_f64(0.5));
        assert_eq!(net.a().sack_enabled(), expect, "{sa} {sb}");
        assert_eq!(net.b().sack_enabled(), expect, "{sa} {sb}");
        let synack = net.log[1].seg.syn_opts.unwrap();
        assert_eq!(synack.sack_permitted, expect, "SYN-ACK may offer SACK only if the SYN did");
    }
}

#[test]
fn sack_blocks_only_sent_when_negotiated() {
    for sack in [true, false] {
        let mut net = Net::new(cfg(Algorithm::NewReno, sack), cfg(Algorithm::NewReno, true), ms(5)).transfer(50_000, 0).dropping(drop_segments(&[3]));
        net.start();
        net.run(Time::from_secs_f64(5.0));
        assert_eq!(net.app[1].delivered, 50_000);
        let with_sack = net.sent_by(Side::B).filter(|w| !w.seg.sack.is_empty()).count();
        assert_eq!(with_sack > 0, sack);
    }
}

/// A's first `n` SYNs (or B's first `n` SYN-ACKs, with `side` B) are lost.
fn syns_lost(a: TcpConfig, side: Side, n: u32) -> Net {
    let mut lost = 0;
    let mut net = Net::new(a.clone(), a, ms(10)).transfer(0, 5_000).dropping(move |_, s, seg| {
        let d = s == side && seg.flags.contains(Flags::SYN) && lost < n;
        lost += d as u32;
        d
    });
    net.start();
    net
}

#[test]
fn lost_syn_is_retransmitted_after_initial_rto_and_the_window_stays_unless_it_happens_twice() {
    let mut net = syns_lost(rfc(Algorithm::Reno), Side::A, 1);
    net.run(Time::from_secs_f64(1.021));
    let syns: Vec<Time> = net.sent_by(Side::A).filter(|w| w.seg.flags.contains(Flags::SYN)).map(|w| w.t).collect();
    assert_eq!(syns, vec![Time::ZERO, Time::from_secs_f64(1.0)], "retransmitted after initial_rto = 1 s");
    assert!(net.log.iter().any(|w| w.seg.retransmit && w.seg.flags.contains(Flags::SYN)));
    assert_eq!(net.app[0].established, Some(Time::from_secs_f64(1.02)));
    // RFC 5681 asks for one segment; Linux keeps the initial window after a single
    // SYN retransmission (`tcp_init_transfer`), as here.
    assert_eq!(net.a().cwnd(), 10 * MSS);
    assert_eq!(net.a().rto(), Dur::from_secs(3), "RFC 6298 5.7");
    assert_eq!(net.a().srtt(), None, "Karn: no sample from a retransmitted SYN");
    assert_eq!(net.a().stats().rtos, 1);
    // The passive side saw a clean handshake.
    assert_eq!(net.b().cwnd(), 10 * MSS);
    // Two lost SYNs: one segment.
    let mut net = syns_lost(rfc(Algorithm::Reno), Side::A, 2);
    net.run(Time::from_secs_f64(3.021));
    assert!(net.app[0].established.is_some());
    assert_eq!(net.a().cwnd(), MSS);
}

#[test]
fn ns2_starts_with_one_segment_and_ssthresh_two_after_one_lost_syn() {
    // ns-2's timeout of the SYN (`tcp.cc` `timeout`): `bugfix_ss_` makes the initial
    // window 1, and `slowdown` halves the handshake's one-packet window to the
    // floor of 2 packets, which the SYN's ACK leaves in place (Linux restores it).
    let c = TcpConfig::ns2();
    let mss = c.mss as u64;
    let mut net = syns_lost(c.clone(), Side::A, 1);
    // The SYN-ACK arrives at 3.02 s; A's FIN, timed, is acknowledged at 3.04 s.
    net.run(Time::from_secs_f64(3.03));
    assert!(net.app[0].established.is_some());
    assert_eq!((net.a().cwnd(), net.a().ssthresh()), (mss, 2 * mss));
    assert_eq!(net.a().rto(), Dur::from_secs(6), "the backoff stays until a timed segment is acknowledged");
    // A clean handshake: ns-2's initial window of 2 and no ssthresh.
    let mut net = syns_lost(c, Side::A, 0);
    net.run(Time::from_secs_f64(0.025));
    assert_eq!((net.a().cwnd(), net.a().ssthresh()), (2 * mss, u64::MAX));
}

#[test]
fn with_timestamps_linux_times_a_retransmitted_syn_by_its_echo() {
    // Linux's estimator takes the SYN-ACK's echo of the retransmitted SYN's TSval: a
    // 20 ms sample, not RFC 6298's 3 s wait for one.
    let c = TcpConfig { timestamps: true, ..cfg(Algorithm::Cubic, true) };
    let mut net = syns_lost(c, Side::A, 1);
    net.run(Time::from_secs_f64(1.1));
    assert_eq!(net.a().srtt(), Some(ms(20)));
    assert_eq!(net.a().rto(), ms(220));
}

#[test]
fn lost_synack_is_retransmitted_and_server_keeps_its_initial_window() {
    let mut net = syns_lost(rfc(Algorithm::Reno), Side::B, 1);
    // A's retransmitted SYN reaches B at 1.01 s (B answers it), A's ACK at 1.03 s.
    net.run(Time::from_secs_f64(1.04));
    assert_eq!(net.app[1].established, Some(Time::from_secs_f64(1.03)));
    assert_eq!(net.b().cwnd(), 10 * MSS, "one SYN-ACK retransmission keeps the initial window");
    net.run(Time::from_secs_f64(10.0));
    assert_eq!(net.app[0].delivered, 5_000);
    assert!(net.sent_by(Side::B).filter(|w| w.seg.flags.contains(Flags::SYN)).count() >= 2);
}

#[test]
fn data_rides_on_the_third_ack() {
    let mut net = Net::new(cfg(Algorithm::Cubic, true), cfg(Algorithm::Cubic, true), ms(10)).transfer(3_000, 0);
    net.start();
    net.run(Time::from_secs_f64(1.0));
    // SYN, then the first data segment is the handshake-completing ACK.
    let a: Vec<_> = net.sent_by(Side::A).collect();
    assert!(a[1].seg.len > 0 && a[1].seg.flags.contains(Flags::ACK));
    assert_eq!(a[1].t, Time(20_000_000));
    assert_eq!(net.app[1].delivered, 3_000);
}

#[test]
fn connect_gives_up_after_syn_retries() {
    // RFC 6298's timer: 1 + 6 retries, doubling from 1 s, the last wait of 64 s capped at
    // max_rto = 60 s. Linux's runs on its timer wheel: each wait is rounded up past the
    // wheel's granularity (8 jiffies = 32 ms from 63 jiffies, 64 from 504, 512 from
    // 4032), so 1 s becomes 1.024 s, and so on.
    for (c, want, closed) in [
        (rfc(Algorithm::Cubic), vec![0, 1000, 3000, 7000, 15000, 31000, 63000], 123_000),
        (cfg(Algorithm::Cubic, true), vec![0, 1024, 3040, 7168, 15360, 31488, 65536], 126_976),
    ] {
        let mut net = Net::new(c.clone(), c, ms(10)).dropping(|_, side, _| side == Side::A);
        net.start();
        net.run(Time::from_secs_f64(1000.0));
        let syns: Vec<u64> = net.sent_by(Side::A).map(|w| w.t.0 / 1_000_000).collect();
        assert_eq!(syns, want, "1 + 6 retries, doubling (ms)");
        assert!(net.app[0].reset);
        assert_eq!(net.app[0].closed, Some(Time(closed * 1_000_000)));
        assert_eq!(net.a().state(), State::Closed);
        assert_eq!(net.a().poll_at(), None);
    }
}

#[test]
fn simultaneous_open() {
    let c = std::sync::Arc::new(cfg(Algorithm::NewReno, true));
    let mut out = Vec::new();
    let t0 = Time::ZERO;
    let mut a = tcp::Tcp::connect(&c, t0, &mut out);
    let mut b = tcp::Tcp::connect(&c, t0, &mut out);
    let (syn_a, syn_b) = (out[0], out[1]);
    out.clear();
    let t1 = t0 + ms(10);
    a.on_segment(t1, &syn_b, &mut out);
    b.on_segment(t1, &syn_a, &mut out);
    assert_eq!((a.state(), b.state()), (State::SynReceived, State::SynReceived));
    let (sa_a, sa_b) = (out[0], out[1]);
    assert_eq!(sa_a.flags, Flags::SYN | Flags::ACK);
    out.clear();
    let t2 = t1 + ms(10);
    assert!(a.on_segment(t2, &sa_b, &mut out).established);
    assert!(b.on_segment(t2, &sa_a, &mut out).established);
    assert_eq!((a.state(), b.state()), (State::Established, State::Established));
    assert!(a.sack_enabled() && b.sack_enabled());
    // Data flows afterwards.
    out.clear();
    assert_eq!(a.write(t2, 500, &mut out), 500);
    let n = b.on_segment(t2 + ms(10), &out[0], &mut Vec::new());
    assert_eq!(n.delivered, 500);
}
