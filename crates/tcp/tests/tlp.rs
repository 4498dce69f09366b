//! The tail loss probe (RFC 8985 §7, Linux `tcp_schedule_loss_probe`,
//! `tcp_send_loss_probe`, `tcp_process_tlp_ack`): when ACKs stop with data
//! outstanding, about two RTTs after the last one the sender sends a new segment or
//! the last one again, so that RACK finds a lost tail instead of the RTO.

mod common;
use common::*;
use tcp::{Algorithm, Dur, Time};

fn ms(x: u64) -> Dur {
    Dur::from_millis(x)
}

/// A's transfer of `segs` segments over a 20 ms RTT path, kept open (no FIN after it).
fn run(tlp: bool, segs: u64, drop: impl FnMut(Time, Side, &tcp::Segment) -> bool + 'static) -> Net {
    let c = tcp::TcpConfig { tlp, ..cfg(Algorithm::Cubic, true) };
    let mut net = Net::new(c.clone(), c, ms(10)).transfer(segs * MSS, 0).dropping(drop);
    net.app[0].close_when_done = false;
    net.start();
    net.run(Time::from_secs_f64(30.0));
    assert_eq!(net.app[1].delivered, segs * MSS);
    net
}

/// When A received the last ACK before `t`.
fn last_ack_before(net: &Net, t: Time) -> Time {
    net.sent_by(Side::B).map(|w| w.t + ms(10)).filter(|&a| a < t).max().unwrap()
}

#[test]
fn a_lost_tail_is_probed_two_rtts_after_the_last_ack_and_repaired_by_rack() {
    // The last two of 20 segments are lost. Two SRTTs (20 ms and the receiver's
    // delayed ACKs) + 2 ms after the last ACK, on a 4 ms jiffy, the last segment goes
    // out again; its SACK shows the other lost, which RACK repairs a quarter RTT
    // later: no timeout.
    let net = run(true, 20, drop_segments(&[18, 19]));
    let rtx = net.retransmissions_by(Side::A);
    assert_eq!(rtx.len(), 2);
    assert_eq!(rtx[0].seg.seq, seg_seq(19), "the probe resends the highest segment");
    let wait = rtx[0].t - last_ack_before(&net, rtx[0].t);
    assert!(wait >= ms(42) && wait < ms(60), "probed {wait} after the last ACK");
    assert_eq!(rtx[1].seg.seq, seg_seq(18));
    assert!(rtx[1].t - rtx[0].t < ms(30), "RACK repairs the other one an RTT and a bit later");
    let st = net.a().stats();
    assert_eq!((st.rtos, st.loss_probes, st.fast_recoveries), (0, 1, 1));
    // Without the probe the timer repairs the tail: at the RTO, 220 ms and more.
    let net = run(false, 20, drop_segments(&[18, 19]));
    let rtx = net.retransmissions_by(Side::A);
    assert!(rtx[0].t - last_ack_before(&net, rtx[0].t) >= ms(220));
    assert_eq!(net.a().stats().rtos, 1);
}

#[test]
fn with_more_to_send_the_probe_is_new_data_whatever_cwnd_says() {
    // The whole second flight (segments 10-29) is lost and cwnd is full: the probe
    // sends segment 30, new, and its SACK lets RACK find the rest.
    let net = run(true, 40, |_, side, seg| side == Side::A && seg.len > 0 && !seg.retransmit && (seg_seq(10)..seg_seq(30)).contains(&seg.seq));
    let st = net.a().stats();
    assert_eq!((st.rtos, st.loss_probes), (0, 1));
    let probe = net.sent_by(Side::A).find(|w| w.seg.seq == seg_seq(30)).unwrap();
    assert!(!probe.seg.retransmit);
    let wait = probe.t - last_ack_before(&net, probe.t);
    assert!(wait >= ms(42) && wait < ms(60), "probed {wait} after the last ACK");
    let first_rtx = net.retransmissions_by(Side::A)[0].t;
    assert!(first_rtx - probe.t < ms(30), "RACK repairs the flight about an RTT after the probe");
}

#[test]
fn a_lone_segment_is_probed_no_sooner_than_the_rto() {
    // One segment outstanding: the probe waits 2 RTTs + min_rto for the peer's delayed
    // ACK, which is later than the RTO: the RTO comes first.
    let net = run(true, 10, drop_segments(&[9]));
    let st = net.a().stats();
    assert_eq!((st.loss_probes, st.rtos), (1, 0));
    let rtx = net.retransmissions_by(Side::A);
    assert!(rtx[0].t - last_ack_before(&net, rtx[0].t) >= ms(220), "the probe at the RTO");
}
