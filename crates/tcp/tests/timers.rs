mod common;
use common::*;
use tcp::{Algorithm, Dur, RtoEstimator, State, TcpConfig, Time};

fn ms(x: u64) -> Dur {
    Dur::from_millis(x)
}

/// A's data is black-holed from `from` on. B ACKs by the delayed-ACK rule
/// alone (no ACK at once of pushed segments), so that flights end on a
/// pair and every RTT sample is the path's 20 ms.
fn outage(cfg_a: TcpConfig, from: f64, until: f64) -> Net {
    let (a, b) = (Time::from_secs_f64(from), Time::from_secs_f64(until));
    let receiver = TcpConfig { ack_pushed: false, ..cfg(Algorithm::NewReno, true) };
    let mut net =
        Net::new(cfg_a, receiver, ms(10)).transfer(2_000_000, 0).dropping(move |t, side, seg| side == Side::A && seg.len > 0 && t >= a && t < b);
    net.start();
    net
}

#[test]
fn rto_backs_off_doubling_to_max_then_aborts() {
    // 20 ms RTT. Linux: RTO = SRTT + max(deviation, min_rto) = 220 ms (55 jiffies), then
    // doubling, capped at 2 s, each wait rounded up on the timer wheel (to the next
    // jiffy within 63 jiffies, past a multiple of 8 beyond): 224, 444, 896, ...
    // RFC 6298: max(min_rto, SRTT + 4 RTTVAR) = 200 ms, exactly.
    backs_off(RtoEstimator::Linux, [224, 444, 896, 1792, 2016, 2016]);
    backs_off(RtoEstimator::Rfc6298, [200, 400, 800, 1600, 2000, 2000]);
}

fn backs_off(rto_estimator: RtoEstimator, want: [u64; 6]) {
    // No tail loss probe: the timer alone (tlp.rs has the probe before it).
    let c = TcpConfig { max_rto: Dur::from_secs(2), max_retries: 6, rto_estimator, tlp: false, ..cfg(Algorithm::NewReno, true) };
    let mut net = outage(c, 0.1, 1e9);
    net.run(Time::from_secs_f64(100.0));
    // The timer was last restarted by the last ACK of data sent before the outage.
    let last_ack = net.sent_by(Side::B).map(|w| w.t).max().unwrap() + ms(10);
    let rtx: Vec<Time> = net.retransmissions_by(Side::A).iter().map(|w| w.t).collect();
    assert_eq!(rtx.len(), 6, "max_retries retransmissions");
    let mut gaps = vec![rtx[0] - last_ack];
    gaps.extend(rtx.windows(2).map(|w| w[1] - w[0]));
    let gaps_ms: Vec<u64> = gaps.iter().map(|d| d.0 / 1_000_000).collect();
    assert_eq!(gaps_ms, want, "{rto_estimator:?}");
    assert!(net.app[0].reset);
    assert!(net.app[0].closed.unwrap() - *rtx.last().unwrap() >= Dur::from_secs(2));
    assert_eq!(net.a().state(), State::Closed);
    assert_eq!(net.a().stats().rtos, 7, "six retransmissions and the expiry that gives up");
    assert_eq!(net.a().poll_at(), None);
}

#[test]
fn min_rto_respected_and_rto_follows_large_rtts() {
    // min_rto: a 2 ms RTT path still waits 200 ms, Linux's 2 ms more (204 ms in
    // whole 4 ms jiffies).
    for (rto_estimator, want) in [(RtoEstimator::Linux, ms(204)), (RtoEstimator::Rfc6298, ms(200))] {
        let c = TcpConfig { rto_estimator, ..cfg(Algorithm::Cubic, true) };
        let mut net = Net::new(c.clone(), c, ms(1)).transfer(200_000, 0);
        net.start();
        net.run(Time::from_secs_f64(10.0));
        assert_eq!(net.a().rto(), want, "{rto_estimator:?}");
        assert!(net.a().srtt().unwrap() < ms(3));
    }
    // A 600 ms RTT path: RTO is above the RTT, not clamped to min_rto.
    let mut net = Net::new(cfg(Algorithm::Cubic, true), cfg(Algorithm::Cubic, true), ms(300)).transfer(200_000, 0);
    net.start();
    net.run(Time::from_secs_f64(60.0));
    let srtt = net.a().srtt().unwrap();
    assert!(srtt >= ms(600) && net.a().rto() > srtt);
}

#[test]
fn timeout_collapses_window_and_recovers_after_outage() {
    for (alg, sack) in [(Algorithm::NewReno, false), (Algorithm::Cubic, true), (Algorithm::Tahoe, false), (Algorithm::Reno, false)] {
        let mut net = outage(cfg(alg, sack), 0.1, 1.0);
        net.run(Time::from_secs_f64(120.0));
        let tag = format!("{alg:?} sack={sack}");
        assert_eq!(net.app[1].delivered, 2_000_000, "{tag}");
        let st = *net.a().stats();
        assert!(st.rtos >= 2, "{tag}: backed-off timeouts during the outage");
        assert_eq!(st.fast_recoveries, 0, "{tag}: no spurious fast retransmit after the timeout");
        // cwnd was 1 MSS after the first timeout.
        let first_rtx = net.retransmissions_by(Side::A)[0].t;
        let s = net.trace.iter().rfind(|s| s.t == first_rtx).unwrap();
        assert_eq!(s.cwnd, MSS, "{tag}");
        assert!(!net.app[0].reset, "{tag}");
    }
}

#[test]
fn srtt_converges_to_path_rtt() {
    // All samples equal. Linux: the deviation term settles at min_rto, RTO = 30 +
    // 200 ms in whole jiffies (232 ms). RFC 6298: RTTVAR decays by 3/4 per sample and
    // RTO hits min_rto.
    for (rto_estimator, want) in [(RtoEstimator::Linux, ms(232)), (RtoEstimator::Rfc6298, ms(200))] {
        let c = TcpConfig { ack_every: 1, rto_estimator, ..cfg(Algorithm::Cubic, true) };
        let mut net = Net::new(c.clone(), c, ms(15)).transfer(100_000, 0);
        net.start();
        net.run(Time::from_secs_f64(10.0));
        assert_eq!(net.a().srtt(), Some(ms(30)));
        assert_eq!(net.a().rto(), want, "{rto_estimator:?}");
    }
}

#[test]
fn spurious_and_early_timer_calls_do_nothing() {
    let mut net = Net::new(cfg(Algorithm::Cubic, true), cfg(Algorithm::Cubic, true), ms(10)).transfer(50_000, 0);
    net.start();
    net.run(Time::from_secs_f64(0.025));
    let deadline = net.a().poll_at().expect("data in flight");
    let mut out = Vec::new();
    let a = net.tcp[0].as_mut().unwrap();
    let before = *a.stats();
    for t in [Time(0), deadline - Dur(1)] {
        let n = a.on_timer(t, &mut out);
        assert_eq!(n, tcp::Notify::default());
    }
    assert!(out.is_empty());
    assert_eq!(a.stats().rtos, before.rtos);
    assert_eq!(a.poll_at(), Some(deadline));
}
