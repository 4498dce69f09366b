//! ns-3 3.44's loss recovery (`loss_response = Ns3`) on a connection, beside Linux's
//! response on the same path: the timer's backoff, lost retransmissions with SACK, and
//! the resend cycle of ns-3 without SACK.
mod common;
use common::*;
use tcp::{Algorithm, Dur, LossResponse, PartialAckTimer, RtoEstimator, TcpConfig, Time};
use units::Rate;

fn ms(x: u64) -> Dur {
    Dur::from_millis(x)
}

/// The recovery under test; ns-3's with the RTO estimator and loss detection ns-3 has
/// (RFC 6298's, RFC 6675's, no tail loss probe), as `TcpConfig::ns3` sets them. Both
/// send as ns-3 does, a segment as soon as the window allows, so that both see the
/// same round trips before the losses.
fn with(response: LossResponse, sack: bool) -> TcpConfig {
    let c = TcpConfig { loss_response: response, byte_counting: false, tso_defer: false, ..cfg(Algorithm::NewReno, sack) };
    match response {
        LossResponse::Ns3 => TcpConfig { rack: false, tlp: false, rto_estimator: RtoEstimator::Rfc6298, ..c },
        _ => c,
    }
}

#[test]
fn an_ack_of_new_data_ends_the_backoff_where_linux_waits_for_a_sample() {
    // ns-3: RFC 6298's estimate again, floored at min_rto (200 ms); Linux: its RTO
    // (SRTT plus 200 ms, in 4 ms jiffies: 232 ms) still doubled.
    for (response, second_rto) in [(LossResponse::Ns3, ms(200)), (LossResponse::Linux, ms(464))] {
        // From 0.1 s on A's data is lost, except the first retransmission: the timeout's
        // resend of the head is ACKed (no RTT sample: it was retransmitted), and the
        // two segments that ACK releases are lost again.
        let mut passed = false;
        let mut net = Net::new(with(response, false), with(response, false), ms(10)).transfer(2_000_000, 0).dropping(move |t, side, seg| {
            if side != Side::A || seg.len == 0 || t < Time::from_secs_f64(0.1) {
                return false;
            }
            let first = seg.retransmit && !passed;
            passed |= first;
            !first
        });
        net.start();
        net.run(Time::from_secs_f64(3.0));
        let rtx: Vec<Time> = net.retransmissions_by(Side::A).iter().map(|w| w.t).collect();
        // rtx[0]: the timeout; rtx[1], rtx[2]: released by its (delayed) ACK; rtx[3]:
        // the next timeout, one RTO after that ACK.
        assert_eq!(rtx[1], rtx[2]);
        assert_eq!(rtx[3] - rtx[1], second_rto, "{response:?}: the timeout after an ACK of new data");
    }
}

#[test]
fn with_sack_a_lost_retransmission_waits_for_the_timer_where_linux_resends_it_from_later_sacks() {
    for response in [LossResponse::Ns3, LossResponse::Linux] {
        // Segment 40 and its first retransmission are lost.
        let mut resent = 0;
        let mut net = Net::new(with(response, true), with(response, true), ms(10)).transfer(2_000_000, 0).dropping(move |_, side, seg| {
            if side != Side::A || seg.seq != seg_seq(40) || seg.len == 0 {
                return false;
            }
            resent += seg.retransmit as u32;
            resent <= 1
        });
        net.start();
        net.run(Time::from_secs_f64(5.0));
        let again: Vec<Time> = net.retransmissions_by(Side::A).iter().filter(|w| w.seg.seq == seg_seq(40)).map(|w| w.t).collect();
        let gap = again[1] - again[0];
        match response {
            LossResponse::Ns3 => assert!(gap >= ms(200), "ns-3 has no lost-retransmission detection: {gap:?}"),
            _ => assert!(gap < ms(50), "Linux resends within about a round trip: {gap:?}"),
        }
        assert_eq!(net.app[1].delivered, 2_000_000);
    }
}

#[test]
fn without_sack_the_resends_after_a_timeout_start_ns3s_cycle_of_resending_data_the_receiver_holds() {
    // The Kenesi variant's setting: an ACK per segment, a 20-segment window that held
    // data does not shrink, a 1 Mbit/s bottleneck. Every other segment of one window is
    // lost: NewReno repairs one per round trip until the timer, restarted by the first
    // partial ACK only, expires; go-back-N then resends segments the receiver holds.
    for (response, timer) in [(LossResponse::Ns3, PartialAckTimer::First), (LossResponse::Linux, PartialAckTimer::Every)] {
        let c = TcpConfig { ack_every: 1, rcv_buf: 20 * MSS, ooo_shrinks_window: false, partial_ack_timer: timer, ..with(response, false) };
        let mut net = Net::new(c.clone(), c, ms(15))
            .bottleneck(Rate::mbps(1), 40)
            .transfer(3_000_000, 0)
            .dropping(drop_segments(&[250, 252, 254, 256, 258, 260, 262, 264, 266, 268]));
        net.start();
        net.run(Time::from_secs_f64(60.0));
        let late = Time::from_secs_f64(8.0);
        let resent = net.retransmissions_by(Side::A).iter().filter(|w| w.t > late).count();
        let sent = net.data_by(Side::A).filter(|w| w.t > late).count();
        assert_eq!(net.app[1].delivered, 3_000_000);
        match response {
            // Every duplicate marks a segment received; a mark reaching snd_una makes the
            // head lost and resent, and its duplicate brings the next: about one segment
            // in two is resent long after the losses.
            LossResponse::Ns3 => assert!(resent * 3 > sent, "{resent} of {sent} resent after 8 s"),
            _ => assert_eq!(resent, 0, "{resent} of {sent} resent after 8 s"),
        }
    }
}
