mod common;
use common::*;
use tcp::{Algorithm, Dur, Time};

fn ms(x: u64) -> Dur {
    Dur::from_millis(x)
}

const RTT: Dur = Dur::from_millis(20);

/// 300 segments A->B over a 20 ms RTT path, dropping the given segments once.
fn run(alg: Algorithm, sack: bool, drops: &'static [u64]) -> Net {
    let mut net = Net::new(cfg(alg, sack), cfg(alg, sack), ms(10)).transfer(300 * MSS, 0).dropping(drop_segments(drops));
    net.start();
    net.run(Time::from_secs_f64(30.0));
    assert_eq!(net.app[1].delivered, 300 * MSS, "{alg:?} sack={sack}");
    net
}

/// Index of the first trace sample in recovery and of the first one after it.
fn recovery_span(net: &Net) -> (usize, usize) {
    let start = net.trace.iter().position(|s| s.recovery).expect("entered recovery");
    let end = start + net.trace[start..].iter().position(|s| !s.recovery).expect("left recovery");
    (start, end)
}

fn retransmit_times(net: &Net) -> Vec<Time> {
    net.retransmissions_by(Side::A).iter().map(|w| w.t).collect()
}

#[test]
fn single_loss_tahoe_fast_retransmit_then_slow_start() {
    let net = run(Algorithm::Tahoe, false, &[30]);
    let st = net.a().stats();
    assert_eq!((st.rtos, st.fast_recoveries, st.retransmits), (0, 1, 1));
    // cwnd drops to one segment right at the fast retransmit, ssthresh to half the flight.
    let rtx = retransmit_times(&net)[0];
    // Several ACKs arrive at the same instant: take the last sample at that time.
    let at = net.trace.iter().rfind(|s| s.t == rtx).unwrap();
    let before = net.trace.iter().rev().find(|s| s.t < rtx).unwrap();
    assert_eq!(at.cwnd, MSS);
    assert!(at.ssthresh >= before.cwnd / 2 - 2 * MSS && at.ssthresh <= before.cwnd / 2 + 2 * MSS);
    assert!(!net.trace.iter().any(|s| s.recovery), "Tahoe has no fast recovery");
}

#[test]
fn single_loss_tahoe_ignores_sack() {
    let net = run(Algorithm::Tahoe, true, &[30]);
    assert!(net.a().sack_enabled());
    let st = net.a().stats();
    assert_eq!((st.rtos, st.fast_recoveries, st.retransmits), (0, 1, 1));
    assert!(net.trace.iter().any(|s| s.cwnd == MSS));
}

#[test]
fn single_loss_reno_family_deflates_to_ssthresh() {
    for (alg, sack) in [
        (Algorithm::Reno, false),
        (Algorithm::NewReno, false),
        (Algorithm::NewReno, true),
        (Algorithm::Reno, true),
        (Algorithm::Cubic, false),
        (Algorithm::Cubic, true),
    ] {
        let net = run(alg, sack, &[30]);
        let tag = format!("{alg:?} sack={sack}");
        let st = net.a().stats();
        assert_eq!((st.rtos, st.fast_recoveries, st.retransmits), (0, 1, 1), "{tag}");
        let (start, end) = recovery_span(&net);
        let before = net.trace[start - 1];
        let after = net.trace[end];
        assert_eq!(after.cwnd, after.ssthresh, "{tag}: cwnd = ssthresh after recovery");
        if alg == Algorithm::Cubic {
            let expect = (before.cwnd as f64 * 0.7) as u64;
            assert_eq!(after.ssthresh, expect, "{tag}: beta_cubic = 0.7");
        } else {
            // Half the data in flight, which is about the window.
            let half = before.cwnd / 2;
            assert!(after.ssthresh.abs_diff(half) <= 3 * MSS, "{tag}: {} vs {half}", after.ssthresh);
        }
        // The loss is repaired one RTT after it is detected.
        let dur = after.t - net.trace[start].t;
        assert!(dur >= RTT && dur < RTT + ms(3), "{tag}: recovery took {dur}");
    }
}

#[test]
fn newreno_repairs_one_hole_per_rtt_without_timeout() {
    let net = run(Algorithm::NewReno, false, &[30, 33, 36, 39]);
    let st = net.a().stats();
    assert_eq!((st.rtos, st.fast_recoveries, st.retransmits), (0, 1, 4));
    let t = retransmit_times(&net);
    for w in t.windows(2) {
        let gap = w[1] - w[0];
        assert!(gap >= RTT && gap < RTT + ms(3), "partial ACKs come one RTT apart: {gap}");
    }
    let (start, end) = recovery_span(&net);
    let dur = net.trace[end].t - net.trace[start].t;
    assert!(dur >= RTT.saturating_mul(4) && dur < RTT.saturating_mul(5), "{dur}");
}

#[test]
fn sack_repairs_all_holes_in_about_one_rtt() {
    for alg in [Algorithm::NewReno, Algorithm::Cubic, Algorithm::Reno] {
        let net = run(alg, true, &[30, 33, 36, 39]);
        let st = net.a().stats();
        assert_eq!((st.rtos, st.fast_recoveries, st.retransmits), (0, 1, 4), "{alg:?}");
        let t = retransmit_times(&net);
        assert!(t[3] - t[0] < ms(10), "{alg:?}: all four holes retransmitted together");
        let (start, end) = recovery_span(&net);
        let dur = net.trace[end].t - net.trace[start].t;
        assert!(dur < RTT + ms(10), "{alg:?}: recovery took {dur}");
    }
}

#[test]
fn classic_reno_times_out_on_several_holes() {
    // Reno leaves fast recovery on the first partial ACK, so every further hole needs a
    // fresh round of three duplicate ACKs and halves ssthresh again. Observed with four
    // holes: hole 1 and hole 2 get fast recoveries; by then the window has been halved
    // twice and deflated, too little new data is in flight to produce three more
    // duplicates for hole 3, and the timer fires (the behaviour Fall & Floyd 1996
    // describe). The timeout's go-back-N also resends one segment the receiver held.
    let net = run(Algorithm::Reno, false, &[30, 33, 36, 39]);
    let st = net.a().stats();
    assert_eq!((st.fast_recoveries, st.rtos), (2, 1));
    assert_eq!(st.retransmits, 5);
    let nr = run(Algorithm::NewReno, false, &[30, 33, 36, 39]);
    assert!(net.app[1].deliveries.last().unwrap().0 > nr.app[1].deliveries.last().unwrap().0 + ms(150));
}

#[test]
fn tahoe_goes_back_n_over_several_holes() {
    let net = run(Algorithm::Tahoe, false, &[30, 33, 36, 39]);
    let st = net.a().stats();
    assert_eq!((st.rtos, st.fast_recoveries), (0, 1));
    // Go-back-N resends segments the receiver already holds.
    assert!(st.retransmits > 4, "{}", st.retransmits);
}

#[test]
fn duplicates_after_timeout_do_not_start_fast_retransmit() {
    // Holes at 30, 40, 50, 60 and no duplicate ACKs for the first one: only the timer can
    // repair it. Go-back-N then resends data the receiver holds, whose duplicate ACKs
    // must not trigger a fast retransmit before `recover` (RFC 6582 §4 careful variant).
    for alg in [Algorithm::NewReno, Algorithm::Reno] {
        let mut acked_30 = false;
        let mut net = Net::new(cfg(alg, false), cfg(alg, false), ms(10)).transfer(300 * MSS, 0).dropping(move |_, side, seg| {
            let k = (seg.seq.saturating_sub(1)) / MSS;
            match side {
                Side::A => seg.len > 0 && !seg.retransmit && (30..=60).contains(&k) && k.is_multiple_of(10) && seg.seq == seg_seq(k),
                // Let the first ACK up to the hole through, drop its duplicates.
                Side::B if seg.ack == seg_seq(30) => std::mem::replace(&mut acked_30, true),
                Side::B => false,
            }
        });
        net.start();
        net.run(Time::from_secs_f64(30.0));
        assert_eq!(net.app[1].delivered, 300 * MSS);
        let st = net.a().stats();
        assert_eq!(st.rtos, 1, "{alg:?}");
        assert!(st.dup_acks_rcvd >= 3, "{alg:?}: go-back-N produced duplicates ({})", st.dup_acks_rcvd);
        assert_eq!(st.fast_recoveries, 0, "{alg:?}");
    }
}
