mod common;
use common::*;
use tcp::{Algorithm, Dur, TcpConfig, Time};

fn ms(x: u64) -> Dur {
    Dur::from_millis(x)
}

/// cwnd (in segments) in the middle of each of the first `rounds` RTTs of data, on a
/// 20 ms RTT path without a bottleneck (each flight's ACKs arrive at one instant).
fn cwnd_per_round(c: TcpConfig, rounds: u64) -> Vec<u64> {
    let mut net = Net::new(c.clone(), c, ms(10)).transfer(100_000_000, 0);
    net.start();
    let first_data = Time::from_secs_f64(0.020);
    (0..rounds)
        .map(|k| {
            net.run_until(first_data + ms(20 * k + 10));
            net.a().cwnd() / MSS
        })
        .collect()
}

#[test]
fn slow_start_doubles_per_rtt() {
    let c = TcpConfig { ack_every: 1, ..cfg(Algorithm::NewReno, true) };
    assert_eq!(cwnd_per_round(c, 6), vec![10, 20, 40, 80, 160, 320]);
}

#[test]
fn slow_start_with_delayed_acks_doubles_thanks_to_abc() {
    // One ACK per two segments; RFC 3465 counts the 2 MSS each acknowledges
    // (L = 2). Strictly per two: no ACK at once of pushed segments
    // (`ack_pushed`), which would leave a flight's odd segment to the timer.
    for alg in [Algorithm::Reno, Algorithm::Cubic] {
        let c = TcpConfig { ack_every: 2, ack_pushed: false, ..cfg(alg, true) };
        assert_eq!(cwnd_per_round(c, 6), vec![10, 20, 40, 80, 160, 320], "{alg:?}");
    }
}

#[test]
fn congestion_avoidance_adds_one_segment_per_rtt() {
    let c = TcpConfig { ack_every: 1, initial_ssthresh: 20 * MSS, ..cfg(Algorithm::Reno, false) };
    assert_eq!(cwnd_per_round(c, 7), vec![10, 20, 21, 22, 23, 24, 25]);
    // Delayed ACKs: byte counting keeps ~1 MSS per RTT (per-ACK counting would give 1/2).
    // An odd flight leaves one segment to the 40 ms delayed-ACK timer, so an increment
    // can slip by a round.
    let c = TcpConfig { ack_every: 2, initial_ssthresh: 20 * MSS, ..cfg(Algorithm::Reno, false) };
    let w = cwnd_per_round(c, 12);
    assert_eq!(&w[..3], &[10, 20, 21]);
    assert!(w[11] >= 29 && w[11] <= 30, "{w:?}");
}

#[test]
fn app_limited_sender_does_not_grow_cwnd() {
    let c = cfg(Algorithm::Cubic, true);
    let mut net = Net::new(c.clone(), c, ms(10));
    net.start();
    for k in 0..30 {
        net.run_until(Time::from_secs_f64(0.1 + 0.05 * k as f64));
        net.app_write(Side::A, 2 * MSS);
    }
    net.run_until(Time::from_secs_f64(3.0));
    assert_eq!(net.app[1].delivered, 60 * MSS);
    assert_eq!(net.a().cwnd(), 10 * MSS, "two segments in flight never test a 10-segment window");
}

#[test]
fn short_segments_each_take_a_packet_of_the_window() {
    // An application writing 400 bytes at a time, faster than the path: Linux
    // counts cwnd in packets, so the initial window of ten sends ten 400-byte
    // segments; a window of bytes sends 25 (10 × 1000 / 400), as ns-2's and
    // ns-3's flavours keep it.
    for (packets, segs) in [(true, 10), (false, 25)] {
        let c = TcpConfig { packet_window: packets, ..cfg(Algorithm::Cubic, true) };
        let mut net = Net::new(c.clone(), c, ms(10));
        net.start();
        net.run_until(Time::from_secs_f64(0.1));
        for _ in 0..40 {
            net.app_write(Side::A, 400);
        }
        net.run_until(net.now + ms(15)); // before the first ACK is back
        let sent: Vec<u32> = net.data_by(Side::A).map(|w| w.seg.len).collect();
        assert_eq!(sent, vec![400; segs], "window in packets: {packets}");
        // Once the window is in use the backlog leaves in full segments, so a
        // window of packets carries more bytes when the writer has fallen behind.
        net.run_until(net.now + ms(10));
        assert!(net.data_by(Side::A).skip(segs).all(|w| w.seg.len == MSS as u32), "window in packets: {packets}");
    }
}

#[test]
fn idle_connection_restarts_as_linux_does() {
    // Linux (tcp_cwnd_restart): after more than an RTO without sending, cwnd
    // halves once per further RTO of idleness, to no less than the initial
    // window, and ssthresh keeps at least 3/4 of the old window. Writes 2.5 RTOs
    // after the last data: two halvings. Far longer: the initial window.
    for (idle_rtos, restart) in [(2.5, true), (40.0, true), (2.5, false)] {
        let c = TcpConfig { slow_start_after_idle: restart, ..cfg(Algorithm::Cubic, true) };
        let mut net = Net::new(c.clone(), c, ms(10)).transfer(1_000_000, 0);
        net.app[0].close_when_done = false;
        net.start();
        while net.app[1].delivered < 1_000_000 {
            net.run_until(net.now + ms(1));
        }
        net.run_until(net.now + ms(30)); // the last ACKs
        let (cwnd, ssthresh) = (net.a().cwnd() / MSS, net.a().ssthresh());
        assert!(cwnd > 100, "{cwnd}");
        let last = net.data_by(Side::A).map(|w| w.t).max().unwrap();
        net.run_until(last + Dur::from_secs_f64(net.a().rto().as_secs_f64() * idle_rtos));
        net.app_write(Side::A, 4000 * MSS);
        let now = net.now;
        let sent = net.data_by(Side::A).filter(|w| w.t == now).count() as u64;
        let want = match (restart, idle_rtos < 3.0) {
            (false, _) => cwnd,
            (true, true) => cwnd / 4,
            (true, false) => 10,
        };
        assert_eq!(sent, want, "slow_start_after_idle = {restart}, {idle_rtos} RTOs");
        let want_ssthresh = if restart { ssthresh.max((cwnd / 2 + cwnd / 4) * MSS) } else { ssthresh };
        assert_eq!(net.a().ssthresh(), want_ssthresh);
    }
}
