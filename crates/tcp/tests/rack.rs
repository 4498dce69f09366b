//! RACK loss detection (RFC 8985, Linux `tcp_recovery.c`): a segment is lost once one
//! sent after it has been delivered and the latest delivery's RTT plus a reordering
//! window has passed since it was sent; the window is a quarter of the minimum RTT
//! while fewer segments than the duplicate threshold are SACKed, and zero from then on
//! and in recovery.

mod common;
use common::*;
use tcp::{Algorithm, Dur, Time};

fn ms(x: u64) -> Dur {
    Dur::from_millis(x)
}

/// A's transfer of `segs` segments over a 20 ms RTT path through a 10 Mbit/s
/// bottleneck (a segment every 0.8 ms), dropping what `drop` says; without RACK, RFC
/// 6675 alone (no tail loss probe either).
fn run(rack: bool, segs: u64, drop: impl FnMut(Time, Side, &tcp::Segment) -> bool + 'static) -> Net {
    let c = tcp::TcpConfig { rack, tlp: rack, ..cfg(Algorithm::Cubic, true) };
    let mut net = Net::new(c.clone(), c, ms(10)).bottleneck(units::Rate::bps(10_000_000), 1000).transfer(segs * MSS, 0).dropping(drop);
    net.start();
    net.run(Time::from_secs_f64(30.0));
    assert_eq!(net.app[1].delivered, segs * MSS);
    net
}

fn first_sent(net: &Net, k: u64) -> Time {
    net.sent_by(Side::A).find(|w| w.seg.seq == seg_seq(k) && w.seg.len > 0).unwrap().t
}

#[test]
fn a_hole_with_one_segment_after_it_is_repaired_a_quarter_rtt_late_not_at_the_rto() {
    // Segment 8 of 10 is lost: one SACK arrives, never three. RACK waits the RTT of
    // the SACKed segment plus a quarter of the minimum RTT (about 5 ms) and 2 ms more,
    // then retransmits; RFC 6675 alone waits for the retransmission timeout.
    let with = run(true, 10, drop_segments(&[8]));
    let sacked = with.sent_by(Side::B).find(|w| !w.seg.sack.is_empty()).expect("a SACK").t + ms(10);
    let rtx = with.retransmissions_by(Side::A);
    assert_eq!(rtx.len(), 1);
    let (st, hole) = (with.a().stats(), first_sent(&with, 8));
    assert_eq!((st.rtos, st.fast_recoveries), (0, 1));
    // The hole was sent 0.8 ms before the SACKed segment, whose RTT RACK takes: the
    // deadline is hole + RTT(seg 9) + min_rtt/4, then 2 ms, on a 4 ms jiffy.
    let wait = rtx[0].t - sacked;
    assert!(wait >= ms(5) && wait <= ms(5) + ms(2) + ms(4), "retransmitted {wait} after the SACK (hole sent at {hole})");
    let without = run(false, 10, drop_segments(&[8]));
    let st = without.a().stats();
    assert_eq!(st.rtos, 1, "RFC 6675 waits for the RTO");
    assert!(without.retransmissions_by(Side::A)[0].t - first_sent(&without, 8) >= ms(200));
}

#[test]
fn three_sacked_segments_mark_the_hole_lost_at_once() {
    let net = run(true, 40, drop_segments(&[20]));
    let sacks: Vec<Time> = net.sent_by(Side::B).filter(|w| !w.seg.sack.is_empty()).map(|w| w.t + ms(10)).collect();
    let rtx = net.retransmissions_by(Side::A);
    assert_eq!(rtx.len(), 1);
    // The ACK carrying the third SACKed segment (arriving 10 ms and its serialisation
    // after it left) triggers the retransmission, before the fourth arrives.
    assert!(rtx[0].t >= sacks[2] && rtx[0].t < sacks[3], "{:?} vs {sacks:?}", rtx[0].t);
}

#[test]
fn a_lost_retransmission_is_found_once_a_later_segment_is_delivered() {
    // Segment 20 and its first retransmission are lost. The retransmission is lost
    // once a segment sent after it is SACKed and its RTT has passed since it was sent:
    // sent again about an RTT later (20 ms and the queue), in the same recovery, not
    // at the timeout.
    let mut copies = 0;
    let net = run(true, 200, move |_, side, seg| {
        let hit = side == Side::A && seg.seq == seg_seq(20) && seg.len > 0 && copies < 2;
        copies += hit as u32;
        hit
    });
    let rtx: Vec<Time> = net.retransmissions_by(Side::A).iter().filter(|w| w.seg.seq == seg_seq(20)).map(|w| w.t).collect();
    assert_eq!(rtx.len(), 2);
    let gap = rtx[1] - rtx[0];
    assert!(gap >= ms(20) && gap < ms(40), "sent again {gap} later");
    let st = net.a().stats();
    assert_eq!((st.rtos, st.fast_recoveries), (0, 1));
}

#[test]
fn a_retransmission_sent_after_new_data_at_the_same_instant_is_not_judged_by_it() {
    // No bottleneck: the first two SACKs release new segments, the third the
    // retransmission, all at one instant. The new segments' SACKs must not count as
    // delivered after the retransmission: one retransmission only.
    let c = cfg(Algorithm::Cubic, true);
    let mut net = Net::new(c.clone(), c, ms(10)).transfer(300 * MSS, 0).dropping(drop_segments(&[30]));
    net.start();
    net.run(Time::from_secs_f64(30.0));
    assert_eq!(net.app[1].delivered, 300 * MSS);
    assert_eq!(net.a().stats().retransmits, 1);
}
