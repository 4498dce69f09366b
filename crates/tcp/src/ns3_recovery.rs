//! ns-3 3.44's loss recovery (`LossResponse::Ns3`): `TcpSocketBase`'s congestion
//! states (`ProcessAck`, `DupAck`, `EnterRecovery`, `ReTxTimeout`) with
//! `TcpClassicRecovery` and `TcpTxBuffer`'s scoreboard, as ns-3's anchors run them.
//!
//! * Open, Disorder (Open with duplicates counted), Recovery and Loss. A fast
//!   retransmit comes at the `dupthresh`-th duplicate once snd_una has reached
//!   `recover` (or no recovery point is active), or at any duplicate while the head is
//!   marked lost; duplicates are not counted in Loss.
//! * ssthresh = max(2 MSS, `pipe` / 2) at a fast retransmit (without SACK `pipe` + 1
//!   MSS) and again at every timeout (`pipe` before it). cwnd = ssthresh through
//!   recovery and after it; sending is bounded by min(cwnd, peer window) − `pipe`.
//! * Without SACK, each duplicate in Disorder (Limited Transmit) or Recovery marks the
//!   next segment as received (`AddRenoSack`); the marks outlive recovery, and one
//!   that reaches snd_una moves on and leaves the head marked lost (`DiscardUpTo`), so
//!   the head is resent and the next duplicate starts another recovery. Resent
//!   segments the receiver already holds bring duplicates that keep this going, the
//!   go-back-N of ns-3 without SACK on a small window.
//! * A partial ACK marks the head lost (without SACK) and sends the next segment at
//!   once; only the first of a recovery restarts the timer under
//!   `PartialAckTimer::First` (`m_isFirstPartialAck`). The ACK that ends recovery
//!   grows the window from ssthresh.
//! * Any ACK that restarts the timer recomputes the RTO from the estimator, ending the
//!   backoff (`NewAck`); the connection does that.
//! * The window grows as `TcpNewReno` grows it (`IncreaseWindow`), on every ACK of new
//!   data in Open and Loss and on the one that ends recovery, used or not (it does not
//!   check `m_isCwndLimited`): by whole segments acknowledged, one MSS in slow start
//!   and the rest, once ssthresh is reached, ⌊MSS²/cwnd⌋ in congestion avoidance.

use crate::cc::{Ack, Cc, CongestionControl, Window};
use crate::recovery::{AckInfo, Outcome, Phase};
use crate::send::Scoreboard;
use crate::{Algorithm, PartialAckTimer, TcpConfig};
use units::Time;

#[derive(Clone, Debug)]
pub(crate) struct Ns3Recovery {
    /// SACK agreed; without it duplicates are counted as `pseudo_sack` marks.
    sack: bool,
    limited_transmit: bool,
    partial_ack_timer: PartialAckTimer,
    phase: Phase,
    dupacks: u32,
    dupthresh: u32,
    /// RFC 6675 RecoveryPoint (`m_recover`), exclusive, and whether it still holds
    /// back a fast retransmit (`m_recoverActive`).
    recover: u64,
    recover_active: bool,
    first_partial: bool,
    /// The Reno family grows as ns-3's `TcpNewReno` (`increase_window`); CUBIC keeps its own.
    newreno_growth: bool,
    /// Bytes acknowledged short of a whole segment, carried to the next ACK
    /// (`m_bytesAckedNotProcessed`).
    part_acked: u64,
}

impl Ns3Recovery {
    pub fn new(cfg: &TcpConfig, sack: bool) -> Self {
        Ns3Recovery {
            sack,
            limited_transmit: cfg.limited_transmit,
            partial_ack_timer: cfg.partial_ack_timer,
            phase: Phase::Open,
            dupacks: 0,
            dupthresh: cfg.dupthresh.max(1),
            recover: 0,
            recover_active: false,
            first_partial: true,
            newreno_growth: cfg.algorithm != Algorithm::Cubic,
            part_acked: 0,
        }
    }

    fn whole_segments(&mut self, acked: u64, mss: u64) -> u64 {
        self.part_acked += acked % mss;
        let carry = self.part_acked / mss;
        self.part_acked %= mss;
        acked / mss + carry
    }

    #[inline]
    pub fn phase(&self) -> Phase {
        self.phase
    }
    #[inline]
    pub fn uses_sack(&self) -> bool {
        self.sack
    }
    /// NextSeg rule 3 only in SACK recovery (`SendPendingData`'s `enableRule3`).
    #[inline]
    pub fn rule3_allowed(&self) -> bool {
        self.sack && self.phase == Phase::Recovery
    }

    pub fn on_ack(&mut self, now: Time, a: &AckInfo, sb: &mut Scoreboard, w: &mut Window, cc: &mut Cc) -> Outcome {
        let mut o = Outcome::default();
        if a.acked > 0 && !self.sack {
            sb.pseudo_sack_reached_head();
        }
        if a.dup {
            self.dup_ack(now, sb, w, cc, &mut o);
        }
        if a.acked == 0 {
            return o;
        }
        if !a.dup {
            self.dupacks = 0;
        }
        let partial = sb.una() < self.recover;
        // The whole segments this ACK delivered (`ProcessAck`'s segsAcked, from the rate
        // sampler's count): with SACK, what was SACKed before counted then; the marks of
        // duplicates are not deliveries.
        let delivered = if self.sack { a.delivered } else { a.acked };
        let mut segs = self.whole_segments(delivered, w.mss);
        match self.phase {
            Phase::Recovery if partial => {
                if !self.sack {
                    sb.mark_head_lost_again();
                }
                o.send_next = true;
                o.restart_timer = self.first_partial || self.partial_ack_timer == PartialAckTimer::Every;
                self.first_partial = false;
                return o;
            }
            Phase::Loss if partial => {}
            Phase::Recovery => {
                self.first_partial = true;
                self.dupacks = 0;
                cc.on_recovery_exit(w, now);
                self.phase = Phase::Open;
                segs = a.acked / w.mss;
            }
            Phase::Loss => {
                // Only what lies beyond `recover` counts.
                self.first_partial = true;
                self.phase = Phase::Open;
                segs = (sb.una() - self.recover) / w.mss;
            }
            // ns-3's recovery ignores ECN-Echo, so never reduces for it.
            Phase::Open | Phase::Cwr => {}
        }
        if !partial {
            self.recover_active = false;
        }
        if self.newreno_growth {
            increase_window(w, segs);
        } else if segs > 0 {
            cc.on_ack(w, now, &Ack { acked: a.acked, delivered: a.delivered, abc_limit: 2 * w.mss });
        }
        o.restart_timer = true;
        o
    }

    /// `TcpSocketBase::DupAck`.
    fn dup_ack(&mut self, now: Time, sb: &mut Scoreboard, w: &mut Window, cc: &mut Cc, o: &mut Outcome) {
        match self.phase {
            Phase::Loss => {}
            Phase::Recovery => {
                if !self.sack {
                    sb.pseudo_sack();
                }
            }
            Phase::Open | Phase::Cwr => {
                self.dupacks += 1;
                let may = sb.una() >= self.recover || !self.recover_active;
                if (self.dupacks == self.dupthresh && may) || (sb.head_lost() && sb.sacked() > 0) {
                    self.enter(now, sb, w, cc, o);
                } else if !self.sack && self.limited_transmit {
                    sb.pseudo_sack();
                }
            }
        }
    }

    /// `TcpSocketBase::EnterRecovery` with `TcpClassicRecovery`.
    fn enter(&mut self, now: Time, sb: &mut Scoreboard, w: &mut Window, cc: &mut Cc, o: &mut Outcome) {
        let flight = if self.sack {
            if !sb.head_lost() {
                sb.mark_head_lost_again();
            }
            sb.reset_rxt_cursor();
            sb.pipe()
        } else {
            // One more segment has left, and the head is lost; ns-3 counts the head in
            // flight for the threshold.
            sb.pseudo_sack();
            sb.mark_head_lost_again();
            sb.pipe() + w.mss
        };
        self.recover = sb.nxt();
        self.recover_active = true;
        self.phase = Phase::Recovery;
        cc.on_loss(w, now, flight);
        w.cwnd = w.ssthresh;
        o.entered = true;
        o.retransmit_head = true;
    }

    /// `TcpSocketBase::ReTxTimeout`: ssthresh from `pipe` at every timeout, cwnd = 1
    /// MSS, everything not SACKed lost (without SACK: everything, the marks dropped).
    pub fn on_rto(&mut self, now: Time, sb: &mut Scoreboard, w: &mut Window, cc: &mut Cc) {
        let pipe = sb.pipe();
        self.dupacks = 0;
        if !self.sack {
            sb.clear_sacks();
        }
        sb.mark_all_lost();
        self.recover = sb.nxt();
        self.recover_active = true;
        self.phase = Phase::Loss;
        cc.on_rto(w, now, pipe, sb.nxt(), false);
    }
}

/// `TcpNewReno::IncreaseWindow` for the whole segments an ACK covered, whether the
/// window was used or not: slow start adds one MSS, and once cwnd reaches ssthresh the
/// rest goes to congestion avoidance, which adds ⌊MSS²/cwnd⌋ (at least one byte) per
/// ACK, the fraction dropped.
fn increase_window(w: &mut Window, segs: u64) {
    let mut segs = segs;
    if segs > 0 && w.cwnd < w.ssthresh {
        w.cwnd += w.mss;
        segs -= 1;
    }
    if segs > 0 && w.cwnd >= w.ssthresh {
        w.cwnd += (w.mss * w.mss / w.cwnd).max(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recovery::testing::{board, Fixture, M};

    /// `n` segments outstanding with cwnd `cwnd`, ns-3's per-ACK NewReno window.
    fn fixture(sack: bool, n: u64, cwnd: u64, timer: PartialAckTimer) -> Fixture<Ns3Recovery> {
        let cfg = TcpConfig { partial_ack_timer: timer, ..TcpConfig::ns3() };
        Fixture {
            r: Ns3Recovery::new(&cfg, sack),
            sb: board(n),
            w: Window { cwnd, ssthresh: u64::MAX, mss: M },
            cc: Cc::new(Algorithm::NewReno, false, false),
        }
    }

    fn seq(i: u64) -> u64 {
        1 + i * M
    }

    impl Fixture<Ns3Recovery> {
        fn send(&mut self, k: u64) {
            for _ in 0..k {
                let n = self.sb.nxt();
                self.sb.on_send(n, n + M, Time::ZERO, false);
            }
        }
        fn resend_head(&mut self) {
            let i = self.sb.head_retransmittable().expect("head can be resent");
            self.sb.mark_retransmitted(i, Time::ZERO);
        }
        /// An ACK to `to` when the window was not in use.
        fn ack_unused(&mut self, to: u64) -> Outcome {
            let acked = self.sb.ack_t(to).bytes;
            let a = AckInfo { acked, delivered: acked, cwnd_limited: false, ..Default::default() };
            self.r.on_ack(Time::ZERO, &a, &mut self.sb, &mut self.w, &mut self.cc)
        }
    }

    #[test]
    fn duplicates_mark_segments_received_and_the_threshold_comes_from_pipe() {
        let mut f = fixture(false, 10, 10 * M, PartialAckTimer::First);
        // Limited Transmit is pipe shrinking: each of the first two duplicates marks one
        // segment as received (AddRenoSack), leaving room for one new segment.
        assert!(!f.dup().entered);
        assert_eq!((f.sb.sacked(), f.sb.pipe()), (M, 9 * M));
        f.dup();
        assert_eq!(f.sb.pipe(), 8 * M);
        f.send(2);
        let o = f.dup();
        assert!(o.entered && o.retransmit_head);
        // The third marks one more and the head lost: pipe = 12 − 3 − 1 = 8 segments;
        // ssthresh = (pipe + 1 MSS) / 2, not FlightSize (12) / 2.
        assert_eq!((f.sb.sacked(), f.sb.lost(), f.sb.pipe()), (3 * M, M, 8 * M));
        assert_eq!((f.w.ssthresh, f.w.cwnd), (4500, 4500), "cwnd = ssthresh (TcpClassicRecovery)");
        assert_eq!(f.r.phase(), Phase::Recovery);
        // With SACK the threshold is half of pipe alone.
        let mut g = fixture(true, 10, 10 * M, PartialAckTimer::First);
        g.sb.apply_sack_t(&crate::SackBlocks::from_slice(&[(seq(1), seq(4))]));
        g.sb.mark_lost_by_sack(3, M);
        let o = g.dup();
        assert!(o.entered);
        assert_eq!(g.sb.pipe(), 6 * M, "10 − 3 SACKed − the head");
        assert_eq!((g.w.ssthresh, g.w.cwnd), (3 * M, 3 * M));
    }

    #[test]
    fn recovery_holds_cwnd_at_ssthresh_and_the_ack_that_ends_it_grows_the_window() {
        let mut f = fixture(false, 10, 10 * M, PartialAckTimer::First);
        for _ in 0..3 {
            f.dup();
        }
        let ss = f.w.ssthresh;
        f.resend_head();
        // Duplicates do not inflate cwnd: they shrink pipe by marking segments.
        let pipe = f.sb.pipe();
        f.dup();
        assert_eq!((f.w.cwnd, f.sb.pipe()), (ss, pipe - M));
        let o = f.ack(seq(10));
        assert_eq!(f.r.phase(), Phase::Open);
        assert!(o.restart_timer);
        // cwnd = ssthresh, then the ACK's own growth: MSS²/cwnd.
        assert_eq!(f.w.cwnd, ss + M * M / ss);
    }

    #[test]
    fn marks_outlive_recovery_and_one_reaching_the_head_makes_the_next_duplicate_a_fast_retransmit() {
        let mut f = fixture(false, 10, 10 * M, PartialAckTimer::First);
        for _ in 0..3 {
            f.dup(); // segments 1..3 arrived: marks on 1, 2, 3
        }
        f.resend_head();
        f.send(5); // 10..14 while recovering
                   // Segments 4..9 arrive, and one duplicate answers data the receiver already
                   // held: seven duplicates mark 4..10, one more than arrived.
        for _ in 0..7 {
            f.dup();
        }
        assert_eq!(f.sb.sacked(), 10 * M);
        // The retransmission fills the hole: recovery ends at 10. The mark on 10 has
        // reached the head: it moves on to 11 and 10 is taken as lost (sent but never
        // lost), so it is resent at once.
        f.ack(seq(10));
        assert_eq!(f.r.phase(), Phase::Open);
        assert!(f.sb.head_lost());
        assert_eq!((f.sb.sacked(), f.sb.una()), (M, seq(10)));
        // Its duplicate arrival brings one duplicate ACK later: with the head lost, one
        // is enough for another recovery (IsLost of the head), and the cycle goes on.
        f.resend_head();
        let o = f.dup();
        assert!(o.entered, "ns-3 re-enters recovery on a single duplicate");
        // Linux's response counts three duplicates.
        let mut g = crate::recovery::Recovery::new(crate::recovery::Mode::NewReno, &TcpConfig::default());
        let a = AckInfo { dup: true, ..Default::default() };
        assert!(!g.on_ack(Time::ZERO, &a, &mut f.sb, &mut f.w, &mut f.cc).entered);
    }

    #[test]
    fn partial_acks_send_the_next_segment_and_only_the_first_restarts_the_timer() {
        for (timer, second_restarts) in [(PartialAckTimer::First, false), (PartialAckTimer::Every, true)] {
            let mut f = fixture(false, 10, 10 * M, timer);
            for _ in 0..3 {
                f.dup();
            }
            f.resend_head();
            let o = f.ack(seq(3));
            assert!(o.send_next && o.restart_timer, "{timer:?}: the first partial ACK");
            assert!(f.sb.head_lost(), "without SACK the new head is taken as lost");
            assert_eq!(f.r.phase(), Phase::Recovery);
            f.resend_head();
            let o = f.ack(seq(5));
            assert!(o.send_next);
            assert_eq!(o.restart_timer, second_restarts, "{timer:?}: the second partial ACK");
            // A new recovery: its first partial ACK restarts the timer again.
            f.resend_head();
            f.ack(seq(10));
            f.send(10);
            for _ in 0..3 {
                f.dup();
            }
            f.resend_head();
            assert!(f.ack(seq(12)).restart_timer);
        }
    }

    #[test]
    fn every_timeout_cuts_ssthresh_from_pipe_and_duplicates_are_ignored_until_recover() {
        let mut f = fixture(false, 10, 10 * M, PartialAckTimer::First);
        f.dup(); // one mark: pipe 9
        f.r.on_rto(Time::ZERO, &mut f.sb, &mut f.w, &mut f.cc);
        assert_eq!((f.w.cwnd, f.w.ssthresh, f.r.phase()), (M, 4500, Phase::Loss));
        assert_eq!((f.sb.sacked(), f.sb.lost()), (0, 10 * M), "marks dropped, everything lost");
        f.resend_head();
        // A second timeout in the same episode cuts again: pipe is the one retransmission.
        f.r.on_rto(Time::ZERO, &mut f.sb, &mut f.w, &mut f.cc);
        assert_eq!(f.w.ssthresh, 2 * M);
        for _ in 0..5 {
            assert!(!f.dup().entered);
        }
        assert_eq!(f.sb.sacked(), 0, "duplicates in Loss are not counted");
        // The ACK that reaches `recover` ends Loss; three duplicates at once are a fast
        // retransmit (ns-3 is not RFC 6582's careful variant, Linux here would wait).
        f.ack(seq(10));
        f.send(5);
        assert_eq!(f.r.phase(), Phase::Open);
        f.dup();
        f.dup();
        assert!(f.dup().entered);
    }

    #[test]
    fn the_window_grows_by_whole_segments_on_every_ack_whether_it_was_used_or_not() {
        let mut f = fixture(false, 10, 3 * M, PartialAckTimer::First);
        f.w.ssthresh = 4 * M;
        // The window was not in use (cwnd_limited false): ns-3's NewReno grows anyway. Two
        // segments in one ACK: slow start adds one MSS up to ssthresh, and the second
        // goes to congestion avoidance, MSS²/cwnd.
        f.ack_unused(seq(2));
        assert_eq!(f.w.cwnd, 4 * M + M / 4);
        // Congestion avoidance drops the fraction: ⌊10⁶ / 4250⌋ = 235, not 235.29.
        f.ack_unused(seq(3));
        assert_eq!(f.w.cwnd, 4 * M + M / 4 + 235);
        // Less than a segment acknowledged counts once a whole one has gathered.
        let before = f.w.cwnd;
        f.ack_unused(seq(3) + M / 2);
        assert_eq!(f.w.cwnd, before);
        f.ack_unused(seq(4));
        assert!(f.w.cwnd > before);
    }
}
