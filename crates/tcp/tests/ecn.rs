//! ECN at the endpoints (RFC 3168 §6.1): negotiation, the codepoints and flags on the
//! wire, the echo until CWR, and the window's response, Linux's and ns-2's.

mod common;

use common::*;
use tcp::{Algorithm, Dur, Ecn, Flags, TcpConfig, Time};

const END: Time = Time(20_000_000_000);

fn ecn(mut c: TcpConfig, on: bool) -> TcpConfig {
    c.ecn = on;
    c
}

fn net(a: TcpConfig, b: TcpConfig) -> Net {
    Net::new(a, b, Dur::from_millis(20)).transfer(400 * MSS, 0)
}

/// A's data segments whose first byte is that of segment `ks`, marked on first sending.
fn mark_first(ks: &'static [u64]) -> impl FnMut(Time, Side, &tcp::Segment) -> bool {
    let mut done = Vec::new();
    move |_, side, s| {
        let hit = side == Side::A && s.len > 0 && ks.iter().any(|&k| seg_seq(k) == s.seq) && !done.contains(&s.seq);
        if hit {
            done.push(s.seq);
        }
        hit
    }
}

#[test]
fn ecn_is_agreed_when_the_active_end_asks_and_only_data_is_ect() {
    let base = cfg(Algorithm::Cubic, true);
    for (a, b, agreed) in [(true, false, true), (true, true, true), (false, true, false), (false, false, false)] {
        let mut n = net(ecn(base.clone(), a), ecn(base.clone(), b));
        n.start();
        n.run(END);
        assert_eq!(n.app[1].delivered, 400 * MSS);
        assert_eq!((n.a().ecn_enabled(), n.b().ecn_enabled()), (agreed, agreed), "asks {a}, peer configured {b}");
        let syn = n.sent_by(Side::A).next().unwrap().seg;
        let synack = n.sent_by(Side::B).next().unwrap().seg;
        assert_eq!(syn.flags.contains(Flags::ECE | Flags::CWR), a);
        assert_eq!(synack.flags.contains(Flags::ECE), agreed);
        assert!(!synack.flags.contains(Flags::CWR));
        for w in n.sent_by(Side::A).chain(n.sent_by(Side::B)) {
            let want = if agreed && w.seg.len > 0 && !w.seg.retransmit { Ecn::Ect0 } else { Ecn::NotEct };
            assert_eq!(w.seg.ecn, want, "{:?}", w.seg);
        }
    }
}

#[test]
fn a_mark_is_echoed_until_cwr_and_linux_reduces_once_without_retransmitting() {
    let c = ecn(cfg(Algorithm::NewReno, true), true);
    // Three marks within one window: one reduction.
    let mut n = net(c.clone(), c).marking(mark_first(&[60, 62, 65]));
    n.start();
    n.run(END);
    assert_eq!(n.app[1].delivered, 400 * MSS);
    assert!(n.retransmissions_by(Side::A).is_empty());
    let marked: Vec<_> = n.sent_by(Side::A).filter(|w| w.seg.ecn == Ecn::Ce).map(|w| w.t).collect();
    assert_eq!(marked.len(), 3);
    // B echoes from the ACK of the first mark until the segment with CWR arrives.
    let acks: Vec<_> = n.sent_by(Side::B).filter(|w| w.seg.ack > seg_seq(60)).collect();
    assert!(acks[0].seg.flags.contains(Flags::ECE), "the ACK of the marked segment echoes it");
    let cwr: Vec<_> = n.sent_by(Side::A).filter(|w| w.seg.flags.contains(Flags::CWR) && !w.seg.flags.contains(Flags::SYN)).collect();
    assert_eq!(cwr.len(), 1, "one CWR, on the first new data after the reduction");
    assert!(cwr[0].seg.len > 0 && !cwr[0].seg.retransmit && cwr[0].t > marked[0]);
    let cwr_end = cwr[0].seg.seq + cwr[0].seg.len as u64;
    for w in n.sent_by(Side::B).filter(|w| w.seg.ack > seg_seq(60)) {
        assert_eq!(w.seg.flags.contains(Flags::ECE), w.seg.ack < cwr_end, "ack {}", w.seg.ack);
    }
    // ssthresh fell once, to half the window (NewReno), and cwnd came down to it.
    let cuts: Vec<_> = n.trace.windows(2).filter(|p| p[1].ssthresh < p[0].ssthresh).map(|p| (p[0].cwnd, p[1].ssthresh, p[1].t)).collect();
    assert_eq!(cuts.len(), 1, "{cuts:?}");
    let (before, ssthresh, t) = cuts[0];
    assert_eq!(ssthresh, (before / 2).max(2 * MSS));
    assert!(n.trace.iter().all(|s| !s.recovery));
    // Within about a round trip the window is down to ssthresh, and only then grows.
    let after: Vec<_> = n.trace.iter().filter(|s| s.t > t + Dur::from_millis(100)).collect();
    assert!(after.iter().all(|s| s.cwnd >= ssthresh) && after[0].cwnd <= ssthresh + 2 * MSS, "{:?}", after[0]);
    let lowest = n.trace.iter().filter(|s| s.t > t).map(|s| s.cwnd).min().unwrap();
    assert!(lowest <= ssthresh, "PRR brought cwnd to ssthresh ({lowest} > {ssthresh})");
}

#[test]
fn marks_a_window_apart_reduce_twice() {
    let c = ecn(cfg(Algorithm::NewReno, true), true);
    let mut n = net(c.clone(), c).marking(mark_first(&[60, 200]));
    n.start();
    n.run(END);
    let cuts = n.trace.windows(2).filter(|p| p[1].ssthresh < p[0].ssthresh).count();
    assert_eq!(cuts, 2);
}

#[test]
fn ns2s_sender_halves_at_once_marks_retransmissions_and_does_not_grow_on_an_echo() {
    let c = TcpConfig { mss: MSS as u32, ecn: true, algorithm: Algorithm::NewReno, snd_buf_auto: false, ..TcpConfig::ns2() };
    // A mark and, in the same window, a loss: ns-2 resends without a second cut.
    let mut dropped = false;
    let mut n = net(c.clone(), c).marking(mark_first(&[60])).dropping(move |_, side, s| {
        let hit = side == Side::A && s.seq == seg_seq(70) && s.len > 0 && !dropped;
        dropped |= hit;
        hit
    });
    n.start();
    n.run(END);
    assert_eq!(n.app[1].delivered, 400 * MSS);
    let rtx = n.retransmissions_by(Side::A);
    assert_eq!(rtx.len(), 1);
    assert_eq!(rtx[0].seg.ecn, Ecn::Ect0, "ns-2 sends retransmissions ECN-capable");
    let echo = n.sent_by(Side::B).find(|w| w.seg.flags.contains(Flags::ECE) && !w.seg.flags.contains(Flags::SYN)).unwrap().t + Dur::from_millis(20);
    let cut: Vec<_> = n.trace.windows(2).filter(|p| p[1].ssthresh < p[0].ssthresh).collect();
    let (before, at) = (cut[0][0], cut[0][1]);
    assert_eq!(at.t, echo, "the response comes with the ACK that echoes the mark");
    assert_eq!(at.cwnd, before.cwnd / 2, "cwnd halved");
    assert_eq!(at.ssthresh, before.cwnd / MSS / 2 * MSS, "ssthresh its whole packets");
    // No growth on the ACKs that carry the echo.
    let last_echo = n.sent_by(Side::B).filter(|w| w.seg.flags.contains(Flags::ECE)).last().unwrap().t + Dur::from_millis(20);
    assert!(n.trace.iter().filter(|s| s.t > at.t && s.t <= last_echo && !s.recovery).all(|s| s.cwnd <= at.cwnd));
    let cuts = n.trace.windows(2).filter(|p| p[1].ssthresh < p[0].ssthresh).count();
    assert_eq!(cuts, 1, "the fast retransmit in the window of the ECN response does not cut again");
    // CWR rides on the next segment sent after the response.
    let cwr: Vec<_> = n.sent_by(Side::A).filter(|w| w.seg.flags.contains(Flags::CWR) && !w.seg.flags.contains(Flags::SYN)).collect();
    assert!(!cwr.is_empty() && cwr[0].t >= echo);
}

#[test]
fn an_ns3_end_does_not_agree_to_ecn_so_its_data_is_never_ect() {
    // ns-3's TcpSocketBase leaves ECN off (`UseEcn` Off) and its recovery ignores
    // ECN-Echo: were it to agree, a queue would mark its data instead of dropping
    // it and it would never slow down.
    let linux = ecn(cfg(Algorithm::Cubic, true), true);
    let ns3 = TcpConfig { mss: MSS as u32, ..TcpConfig::ns3() };
    let mut n = Net::new(linux, ns3, Dur::from_millis(20)).transfer(0, 200 * MSS);
    n.start();
    n.run(END);
    assert_eq!(n.app[0].delivered, 200 * MSS);
    assert!(!n.a().ecn_enabled() && !n.b().ecn_enabled());
    let synack = n.sent_by(Side::B).next().unwrap().seg;
    assert!(synack.flags.contains(Flags::SYN | Flags::ACK) && !synack.flags.contains(Flags::ECE), "{synack:?}");
    assert!(n.sent_by(Side::B).all(|w| w.seg.ecn == Ecn::NotEct));
}

/// A's transfer of `segs` segments with ECN agreed, losing `lost`, kept open; after
/// the repair, 10 segments more at 1 s and 10 at 2 s. Returns the new data segments
/// A sent after its first retransmission.
fn new_data_after_a_repair(segs: u64, lost: &'static [u64]) -> (Net, Vec<tcp::Segment>) {
    let c = ecn(cfg(Algorithm::Cubic, true), true);
    let mut n = Net::new(c.clone(), c, Dur::from_millis(10)).transfer(segs * MSS, 0).dropping(drop_segments(lost));
    n.app[0].close_when_done = false;
    n.start();
    n.run_until(Time::from_secs_f64(1.0));
    assert_eq!(n.app[1].delivered, segs * MSS);
    n.app_write(Side::A, 10 * MSS);
    n.run_until(Time::from_secs_f64(2.0));
    n.app_write(Side::A, 10 * MSS);
    n.run(END);
    assert_eq!(n.app[1].delivered, (segs + 20) * MSS);
    let rtx = n.retransmissions_by(Side::A)[0].t;
    let new: Vec<_> = n.data_by(Side::A).filter(|w| w.t > rtx && !w.seg.retransmit && w.seg.seq >= seg_seq(segs)).map(|w| w.seg).collect();
    (n, new)
}

#[test]
fn a_reduction_by_racks_reordering_timer_or_a_tail_loss_probe_is_followed_by_cwr() {
    // RFC 3168 §6.1.2: CWR on the first new data after any reduction of the window
    // (Linux `tcp_init_cwnd_reduction` queues it for recovery and for a probe that
    // repaired a loss alike). Segment 8 of 10 lost: the reordering timer starts recovery.
    let (n, new) = new_data_after_a_repair(10, &[8]);
    assert_eq!(n.a().stats().fast_recoveries, 1);
    assert!(new[0].flags.contains(Flags::CWR), "{:?}", new[0]);
    // The last two of 20 lost: the probe resends the last, RACK the other.
    let (n, new) = new_data_after_a_repair(20, &[18, 19]);
    assert_eq!(n.a().stats().loss_probes, 1);
    assert!(new[0].flags.contains(Flags::CWR), "{:?}", new[0]);
    // The probe alone repairs the last of 20: the window is reduced once an ACK
    // covers more than the probe (Linux `tcp_process_tlp_ack`: here the ACK of the
    // data written at 1 s), so the data written at 2 s begins with CWR.
    let (n, new) = new_data_after_a_repair(20, &[19]);
    assert_eq!((n.a().stats().loss_probes, n.a().stats().fast_recoveries, n.a().stats().rtos), (1, 0, 0));
    let cwr: Vec<_> = new.iter().filter(|s| s.flags.contains(Flags::CWR)).map(|s| s.seq).collect();
    assert_eq!(cwr, [seg_seq(30)]);
}

#[test]
fn linux_acks_at_once_the_segment_after_a_retransmission_that_arrives_not_ect() {
    // Linux `__tcp_ecn_check_ce`: a data segment that is not ECN-capable after
    // ECN-capable ones is probably a retransmission, and the receiver enters quick-ACK
    // mode for two segments: the hole fill and the next segment are both ACKed at once.
    // Without ECN the next segment waits for the one after it, as delayed ACKs do.
    for on in [true, false] {
        let c = TcpConfig { rcv_buf_auto: false, rcv_buf: 1 << 20, ..ecn(cfg(Algorithm::NewReno, true), on) };
        let mut n = Net::new(c.clone(), c, Dur::from_millis(20))
            .bottleneck(units::Rate::bps(10_000_000), 1000)
            .transfer(400 * MSS, 0)
            .dropping(drop_segments(&[100]));
        n.start();
        n.run(END);
        assert_eq!(n.app[1].delivered, 400 * MSS);
        assert_eq!(n.retransmissions_by(Side::A).len(), 1);
        // The path keeps order: the first new segment sent after the retransmission
        // is the first to arrive after the hole is filled.
        let next = n.data_by(Side::A).skip_while(|w| !w.seg.retransmit).find(|w| !w.seg.retransmit).unwrap().seg;
        let end = next.seq + next.len as u64;
        let acked_alone = n.sent_by(Side::B).any(|w| w.seg.ack == end);
        assert_eq!(acked_alone, on, "ecn {on}: an ACK of the segment after the hole fill alone");
    }
}

/// ns-2's answer to an echo at a window of one segment: cwnd halves to half a segment
/// (`precisionReduce_`), so nothing is sent until the retransmission timer, kept armed
/// with nothing outstanding (`newtimer`'s `cwnd_ < 1`), expires and gives one segment
/// back without a retransmission (`timeout`'s CLOSE_CWND_ONE); from the second
/// answer at one segment on, each doubles the timer's backoff (`ecn_backoff_`); the
/// first ACK of new data without the echo ends it.
#[test]
fn ns2_echoes_at_one_segment_close_the_window_until_the_backed_off_timer() {
    let c = TcpConfig { mss: MSS as u32, ecn: true, snd_buf_auto: false, ..TcpConfig::ns2() };
    // Every data segment from 20 to 63 marked: the window halves once per window of
    // data (16, 11 as the receiver's window allows, 5.5, 2.75, 1.375 segments) and
    // closes at the next answer and at each of the last three marks.
    let marked: &'static [u64] = Box::leak((20..64).collect::<Vec<u64>>().into_boxed_slice());
    let mut n = net(c.clone(), c).marking(mark_first(marked));
    n.start();
    // (time, cwnd, RTO) each time cwnd or the RTO changes.
    let mut seen: Vec<(Time, u64, Dur)> = Vec::new();
    let mut t = Time::ZERO;
    while t < END {
        t += Dur::from_millis(1);
        n.run_until(t);
        let now = (n.a().cwnd(), n.a().rto());
        if seen.last().map(|&(_, c, r)| (c, r)) != Some(now) {
            seen.push((t, now.0, now.1));
        }
    }
    assert_eq!(n.app[1].delivered, 400 * MSS);
    assert!(n.retransmissions_by(Side::A).is_empty(), "the timer sends new data: nothing was outstanding");
    let ms = Dur::from_millis;
    let closed: Vec<(Time, Dur)> = seen.iter().filter(|&&(_, cwnd, _)| cwnd < MSS).map(|&(t, _, rto)| (t, rto)).collect();
    let waits: Vec<Dur> = closed.iter().map(|&(_, rto)| rto).collect();
    // The answer at 1.375 segments closes it without backing off, as does the first
    // at one segment; the next ones double the backoff.
    assert_eq!(waits, [ms(200), ms(200), ms(400), ms(800)]);
    for &(at, rto) in &closed {
        // Nothing goes out while the window is closed; the timer's expiry sends one
        // segment (`at` is the first millisecond after the ACK that closed it).
        let next = n.data_by(Side::A).find(|w| w.t >= at).unwrap().t;
        let wait = next - at;
        assert!(wait + ms(1) >= rto && wait <= rto, "{wait:?} against the RTO {rto:?}");
    }
    let last = closed.last().unwrap().0;
    let after = seen.iter().find(|&&(t, cwnd, _)| t > last && cwnd > MSS).unwrap();
    assert_eq!(after.2, ms(200), "the first unechoed ACK ends the backoff");
}
