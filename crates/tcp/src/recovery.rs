//! Loss recovery: when a loss is declared, what happens to cwnd while recovering, and
//! when recovery ends. The retransmissions themselves are chosen by the scoreboard
//! (`send.rs`); the connection sends them.
//!
//! * Tahoe: dupthresh duplicate ACKs -> ssthresh = FlightSize/2, cwnd = 1 MSS, everything
//!   outstanding is marked lost (go-back-N) and slow start resumes. SACK is ignored.
//! * Reno (RFC 5681 §3.2): fast retransmit, cwnd = ssthresh + dupthresh*MSS, +1 MSS per
//!   further duplicate, deflate to ssthresh on the first ACK that advances snd_una.
//! * NewReno (RFC 6582): as Reno, but partial ACKs retransmit the next hole, deflate by
//!   the amount acked (+1 MSS), and recovery lasts until `recover` is acknowledged. Every
//!   partial ACK restarts the timer (RFC 6298 5.3, the "Slow-but-Steady" variant, as ns-3
//!   and Linux do) rather than only the first (RFC 6582's "Impatient" variant), so many
//!   losses in one window are repaired one per RTT without a timeout.
//! * SACK (RFC 6675) with PRR (RFC 6937, PRR-SSRB) for every non-Tahoe algorithm when
//!   both ends agreed on SACK: loss is IsLost or dupthresh SACK-bearing duplicates, the
//!   scoreboard's NextSeg chooses what to send and PRR sets cwnd = pipe + sndcnt.
//!
//! After a timeout (all flavours) the connection is in `Loss` until `recover` (snd_max at
//! the timeout) is acknowledged, and a fast retransmit needs an ACK beyond `recover`:
//! RFC 6582 §4 "careful" variant, RFC 6675 §5.1. Tahoe's fast retransmit uses the same
//! state, which keeps its go-back-N duplicates from triggering another one. ssthresh is
//! cut once per loss episode.
//!
//! An ECN-Echo (RFC 3168 §6.1.2) reduces the window once per window of data. Linux
//! (`tcp_enter_cwr`): from the open state only, the CWR phase: ssthresh as for a loss
//! (from cwnd), cwnd brought down by PRR without retransmitting, no growth, until an ACK
//! beyond what was outstanding at entry; a loss found meanwhile starts recovery without a
//! second cut. ns-2 (`TcpAgent::ecn`, `LossResponse::Ns2`): at once, cwnd halved and
//! ssthresh its whole packets, unless the ACK is not beyond the point of the last
//! response (`recover_`, shared with fast retransmit) and the last response was not a
//! timeout; an ACK carrying ECE never opens the window, and a fast retransmit within the
//! window of an ECN response resends without cutting again (`dupack_action`). At a
//! window of one segment, ns-2 backs off the retransmission timer instead
//! (`ecn_backoff_`, `Recovery::ns2_echo_timer`).

use crate::cc::{Ack, Cc, CongestionControl, Window};
use crate::ns3_recovery::Ns3Recovery;
use crate::send::Scoreboard;
use crate::{Algorithm, LossResponse, PartialAckTimer, TcpConfig};
use units::Time;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Tahoe,
    Reno,
    NewReno,
    Sack,
}

impl Mode {
    pub fn new(alg: Algorithm, sack: bool) -> Mode {
        match alg {
            Algorithm::Tahoe => Mode::Tahoe,
            _ if sack => Mode::Sack,
            Algorithm::Reno => Mode::Reno,
            Algorithm::NewReno | Algorithm::Cubic => Mode::NewReno,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    Open,
    /// Fast recovery (Reno, NewReno, SACK).
    Recovery,
    /// Slow start after a timeout or a Tahoe fast retransmit, until `recover` is acked.
    Loss,
    /// Linux's CWR: the window comes down after an ECN-Echo, nothing is resent.
    Cwr,
}

/// ns-2's `last_cwnd_action_`: what the last window reduction answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ns2Action {
    Dupack,
    Ecn,
    Timeout,
}

/// One ACK as seen by recovery.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AckInfo {
    /// snd_una advance, bytes.
    pub acked: u64,
    /// A duplicate ACK (RFC 5681 definition; with SACK: it SACKs new data).
    pub dup: bool,
    /// RFC 6937 DeliveredData: acked + change in SACKed bytes.
    pub delivered: u64,
    /// Loss detection marked a segment lost on this ACK.
    pub newly_lost: bool,
    /// Window growth is allowed only while cwnd-limited (see `conn.rs`).
    pub cwnd_limited: bool,
    /// It carried ECN-Echo on a connection that agreed on ECN.
    pub ece: bool,
    /// The peer's receive window after it (the send window's other bound).
    pub snd_wnd: u64,
}

impl Default for AckInfo {
    /// No news, and no receive window that binds.
    fn default() -> Self {
        AckInfo { acked: 0, dup: false, delivered: 0, newly_lost: false, cwnd_limited: false, ece: false, snd_wnd: u64::MAX }
    }
}

/// What the connection has to do after `on_ack`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct Outcome {
    /// Retransmit the segment at snd_una now, whatever cwnd says.
    pub retransmit_head: bool,
    /// Send the next segment the scoreboard offers (a lost one, else new data) now,
    /// whatever cwnd says (ns-3's `DoRetransmit` at a partial ACK).
    pub send_next: bool,
    /// A loss episode started (fast retransmit).
    pub entered: bool,
    /// The ACK advanced snd_una and restarts the retransmission timer (RFC 6298
    /// 5.3); a partial ACK under `PartialAckTimer::First` other than the first does not.
    pub restart_timer: bool,
    /// The window was reduced in answer to an ECN-Echo.
    pub ecn_response: bool,
}

/// What ns-2's answer to an ECN-Echo asks of the retransmission timer on one ACK
/// (`Recovery::ns2_echo_timer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct EchoTimer {
    /// Double the backoff now (ns-2's `rtt_backoff`).
    pub back_off: bool,
    /// The ACK's RTT sample leaves the backoff as it is.
    pub keep_backoff: bool,
}

/// The loss recovery a connection runs: the RFC algorithms with Linux's or ns-2's
/// response, or ns-3's state machine (`loss_response = Ns3`, any algorithm but Tahoe).
#[derive(Clone, Debug)]
pub(crate) enum Loss {
    Rfc(Recovery),
    Ns3(Ns3Recovery),
}

impl Loss {
    /// `sack`: both ends agreed on SACK.
    pub fn new(cfg: &TcpConfig, sack: bool) -> Loss {
        let mode = Mode::new(cfg.algorithm, sack);
        match cfg.loss_response {
            LossResponse::Ns3 if mode != Mode::Tahoe => Loss::Ns3(Ns3Recovery::new(cfg, sack)),
            _ => Loss::Rfc(Recovery::new(mode, cfg)),
        }
    }

    #[inline]
    pub fn phase(&self) -> Phase {
        match self {
            Loss::Rfc(r) => r.phase(),
            Loss::Ns3(r) => r.phase(),
        }
    }
    #[inline]
    pub fn uses_sack(&self) -> bool {
        match self {
            Loss::Rfc(r) => r.uses_sack(),
            Loss::Ns3(r) => r.uses_sack(),
        }
    }
    #[inline]
    pub fn rule3_allowed(&self) -> bool {
        match self {
            Loss::Rfc(r) => r.rule3_allowed(),
            Loss::Ns3(r) => r.rule3_allowed(),
        }
    }
    /// The window the send loop fills with `pipe`; `snd_wnd` is the peer's window.
    #[inline]
    pub fn send_window(&self, w: &Window, limited_transmit: bool, snd_wnd: u64) -> u64 {
        match self {
            Loss::Rfc(r) => r.send_window(w, limited_transmit),
            Loss::Ns3(_) => w.cwnd.min(snd_wnd),
        }
    }
    /// Whether NextSeg rule 3 may run with `unsent` bytes written but not sent yet: ns-3's
    /// `TcpTxBuffer::NextSeg` gives up when unsent data waits for the peer's window, so
    /// a greedy sender never uses rule 3 there.
    #[inline]
    pub fn rule3_with_unsent(&self, unsent: u64) -> bool {
        matches!(self, Loss::Rfc(_)) || unsent == 0
    }

    /// Whether a segment deemed lost that starts at `start` is resent now (NextSeg rule
    /// 1). ns-3 keeps RFC 6675's condition that it lies below the highest SACKed data
    /// while any is SACKed, after a timeout too, when new data goes first.
    #[inline]
    pub fn resends_lost_at(&self, start: u64, sb: &Scoreboard) -> bool {
        match self {
            Loss::Rfc(_) => true,
            Loss::Ns3(_) => sb.high_sacked() <= sb.una() || start < sb.high_sacked(),
        }
    }
    #[inline]
    pub fn on_sent(&mut self, bytes: u64) {
        if let Loss::Rfc(r) = self {
            r.on_sent(bytes);
        }
    }
    #[inline]
    pub fn on_ack(&mut self, now: Time, a: &AckInfo, sb: &mut Scoreboard, w: &mut Window, cc: &mut Cc) -> Outcome {
        match self {
            Loss::Rfc(r) => r.on_ack(now, a, sb, w, cc),
            Loss::Ns3(r) => r.on_ack(now, a, sb, w, cc),
        }
    }
    /// What an ACK (`ece`: carrying the echo; `new_ack`: advancing snd_una) asks of the
    /// retransmission timer before its RTT sample: only ns-2's response asks anything.
    #[inline]
    pub fn echo_timer(&mut self, ece: bool, new_ack: bool, sb: &Scoreboard, w: &Window) -> EchoTimer {
        match self {
            Loss::Rfc(r) if r.ns2 => r.ns2_echo_timer(ece, new_ack, sb, w),
            _ => EchoTimer::default(),
        }
    }
    /// Whether the window is closed below one segment until the retransmission timer
    /// expires (`Recovery::window_closed`): only ns-2's response closes it.
    #[inline]
    pub fn window_closed(&self, w: &Window) -> bool {
        matches!(self, Loss::Rfc(r) if r.window_closed(w))
    }
    /// Retransmission timeout; `snd_wnd` is the peer's window.
    pub fn on_rto(&mut self, now: Time, repeated: bool, snd_wnd: u64, sb: &mut Scoreboard, w: &mut Window, cc: &mut Cc) {
        match self {
            Loss::Rfc(r) => r.on_rto(now, repeated, snd_wnd, sb, w, cc),
            Loss::Ns3(r) => r.on_rto(now, sb, w, cc),
        }
    }
    /// RACK's reordering timer found losses; returns whether recovery began. ns-3's
    /// recovery has no such timer (its losses wait for a duplicate ACK).
    pub fn on_reorder_timeout(&mut self, now: Time, sb: &mut Scoreboard, w: &mut Window, cc: &mut Cc) -> bool {
        match self {
            Loss::Rfc(r) => r.on_reorder_timeout(now, sb, w, cc),
            Loss::Ns3(_) => false,
        }
    }

    /// A tail loss probe repaired a loss (Linux `tcp_process_tlp_ack`): one reduction,
    /// at once (Linux's CWR state entered and left on one ACK): ssthresh as for a
    /// loss, cwnd = ssthresh.
    pub fn on_probe_repaired(&self, now: Time, sb: &Scoreboard, w: &mut Window, cc: &mut Cc) {
        cc.on_loss(w, now, sb.outstanding());
        cc.on_recovery_exit(w, now);
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Recovery {
    mode: Mode,
    phase: Phase,
    dupacks: u32,
    dupthresh: u32,
    /// RFC 6582 `recover` / RFC 6675 RecoveryPoint, exclusive (snd_max at entry).
    recover: u64,
    /// A fast retransmit needs snd_una >= this. After go-back-N (timeout, Tahoe) it is
    /// recover + 1: the ACK must cover more than what was outstanding, because duplicate
    /// ACKs for resent data the receiver already held arrive with ack == recover (the
    /// careful variant as ns-2 implements it). NewReno/SACK recovery ends with
    /// snd_una >= recover anyway and resends only holes.
    fr_floor: u64,
    prr_delivered: u64,
    prr_out: u64,
    recover_fs: u64,
    /// ns-2's loss response (see `LossResponse::Ns2`).
    ns2: bool,
    /// ns-2: the window fast recovery ends with, half the window at entry to the byte
    /// (`precision_reduce_`: cwnd_ = windowd() / 2, while ssthresh_ is its integer part).
    half_cwnd: u64,
    /// SACK losses are found by RACK (`rack.rs`): recovery begins once anything is
    /// marked lost, not at dupthresh duplicates.
    rack: bool,
    partial_ack_timer: PartialAckTimer,
    /// No partial ACK has restarted the timer in this recovery yet.
    first_partial: bool,
    /// ns-2: what the last reduction answered.
    last_action: Ns2Action,
    /// ns-2's `ecn_backoff_`: the last echo was answered with the window at one segment.
    ecn_backoff: bool,
}

impl Recovery {
    pub fn new(mode: Mode, cfg: &TcpConfig) -> Self {
        Recovery {
            mode,
            phase: Phase::Open,
            dupacks: 0,
            dupthresh: cfg.dupthresh.max(1),
            recover: 0,
            fr_floor: 0,
            prr_delivered: 0,
            prr_out: 0,
            recover_fs: 0,
            ns2: cfg.loss_response == LossResponse::Ns2,
            half_cwnd: 0,
            rack: cfg.rack,
            partial_ack_timer: cfg.partial_ack_timer,
            first_partial: true,
            last_action: Ns2Action::Dupack,
            ecn_backoff: false,
        }
    }

    #[inline]
    pub fn phase(&self) -> Phase {
        self.phase
    }
    #[inline]
    pub fn uses_sack(&self) -> bool {
        self.mode == Mode::Sack
    }
    /// In SACK recovery, NextSeg rule 3 may retransmit unSACKed data below the highest
    /// SACK; not with RACK, as Linux retransmits only what is marked lost.
    #[inline]
    pub fn rule3_allowed(&self) -> bool {
        self.mode == Mode::Sack && self.phase == Phase::Recovery && !self.rack
    }

    /// cwnd for the send loop: RFC 3042 Limited Transmit lets the first two duplicate
    /// ACKs each release one new segment (SACK gets this through `pipe`).
    #[inline]
    pub fn send_window(&self, w: &Window, limited_transmit: bool) -> u64 {
        let lt = limited_transmit && self.phase == Phase::Open && matches!(self.mode, Mode::Reno | Mode::NewReno) && self.dupacks < self.dupthresh;
        w.cwnd + if lt { self.dupacks.min(2) as u64 * w.mss } else { 0 }
    }

    /// Account data sent (for PRR's prr_out).
    #[inline]
    pub fn on_sent(&mut self, bytes: u64) {
        if matches!(self.phase, Phase::Recovery | Phase::Cwr) {
            self.prr_out += bytes;
        }
    }

    pub fn on_ack(&mut self, now: Time, a: &AckInfo, sb: &mut Scoreboard, w: &mut Window, cc: &mut Cc) -> Outcome {
        let mut o = Outcome { restart_timer: a.acked > 0, ..Outcome::default() };
        if a.acked > 0 {
            self.dupacks = 0;
        } else if a.dup {
            self.dupacks += 1;
        }
        if a.ece && self.ns2_echo_due(sb) {
            // ns-2 answers the echo before it looks at the ACK's other news.
            self.ns2_ecn(now, a, sb, w, cc, &mut o);
        }
        if self.phase == Phase::Cwr && sb.una() > self.recover {
            // Linux ends CWR once an ACK covers more than `high_seq`, so that the
            // CWR flag has surely reached the receiver.
            cc.on_recovery_exit(w, now);
            self.phase = Phase::Open;
        }
        match self.phase {
            Phase::Open => {
                if sb.una() >= self.fr_floor && self.loss_detected(a, sb) {
                    self.enter(now, a, sb, w, cc, &mut o);
                } else if self.ns2 && self.last_action == Ns2Action::Ecn && self.loss_detected(a, sb) {
                    self.enter_without_cut(w, sb, &mut o);
                } else if a.ece && !self.ns2 {
                    self.enter_cwr(now, a, sb, w, cc, &mut o);
                } else {
                    self.grow(now, a, w, cc, 2 * w.mss);
                }
            }
            Phase::Cwr => {
                if self.loss_detected(a, sb) {
                    // Linux's tcp_enter_recovery inside a window reduction: no second
                    // cut, and PRR carries on from where CWR took it.
                    self.enter(now, a, sb, w, cc, &mut o);
                } else {
                    self.prr(a, sb, w, true);
                }
            }
            Phase::Loss => {
                if sb.una() >= self.recover {
                    self.phase = Phase::Open;
                }
                // RFC 3465 §2.3: L = 1 SMSS in the slow start that follows a timeout.
                self.grow(now, a, w, cc, w.mss);
            }
            Phase::Recovery => self.in_recovery(now, a, sb, w, cc, &mut o),
        }
        o
    }

    fn loss_detected(&self, a: &AckInfo, sb: &Scoreboard) -> bool {
        if sb.outstanding() == 0 {
            return false;
        }
        match self.mode {
            // RACK (Linux `tcp_time_to_recover`): a loss was proven.
            Mode::Sack if self.rack => sb.lost() > 0,
            // RFC 6675 §5: dupthresh duplicates, or IsLost(HighACK + 1).
            Mode::Sack => sb.head_lost() || (a.dup && self.dupacks >= self.dupthresh),
            _ => a.dup && self.dupacks == self.dupthresh,
        }
    }

    /// A loss detected: fast retransmit and recovery. In CWR the window is already
    /// being reduced (Linux `tcp_enter_recovery`), so ssthresh and PRR's state stay.
    fn enter(&mut self, now: Time, a: &AckInfo, sb: &mut Scoreboard, w: &mut Window, cc: &mut Cc, o: &mut Outcome) {
        let reducing = self.phase == Phase::Cwr;
        // RFC 5681 eq. (4) / RFC 6675 (4.2) FlightSize: all data outstanding, SACKed or not.
        // (ns-3 uses pipe here, which is smaller by the SACKed segments that revealed the
        // loss; FlightSize reproduces the Mathis rate with and without SACK.)
        let ns2_win = ns2_window(w.cwnd, a.snd_wnd);
        if !reducing {
            cc.on_loss(w, now, if self.ns2 { whole_packets(ns2_win, w.mss) } else { sb.outstanding() });
        }
        self.recover = sb.nxt();
        o.entered = true;
        self.first_partial = true;
        self.last_action = Ns2Action::Dupack;
        if self.ns2 {
            // ns-2's bug_fix_: the next fast retransmit needs an ACK beyond `recover`.
            self.fr_floor = self.recover + 1;
            self.half_cwnd = (ns2_win / 2).max(w.mss);
        }
        match self.mode {
            Mode::Tahoe => {
                w.cwnd = w.mss;
                sb.mark_all_lost();
                self.phase = Phase::Loss;
                self.fr_floor = self.recover + 1;
            }
            Mode::Reno | Mode::NewReno => {
                sb.mark_head_lost();
                w.cwnd = w.ssthresh + self.dupthresh as u64 * w.mss;
                self.phase = Phase::Recovery;
                o.retransmit_head = true;
            }
            Mode::Sack => {
                sb.mark_head_lost();
                sb.reset_rxt_cursor();
                if !reducing {
                    self.prr_delivered = 0;
                    self.prr_out = 0;
                    // Linux takes cwnd at entry (`prior_cwnd`), RFC 6937 FlightSize.
                    self.recover_fs = if self.rack { w.cwnd } else { sb.outstanding() };
                }
                self.phase = Phase::Recovery;
                self.prr(a, sb, w, self.rack);
            }
        }
    }

    /// Linux `tcp_enter_cwr` on an ECN-Echo in the open state, and the PRR step of
    /// the ACK that brought it (`tcp_cong_control`).
    #[cold]
    fn enter_cwr(&mut self, now: Time, a: &AckInfo, sb: &Scoreboard, w: &mut Window, cc: &mut Cc, o: &mut Outcome) {
        // The congestion control's ssthresh from cwnd (`ca_ops->ssthresh`).
        cc.on_loss(w, now, w.cwnd);
        self.recover = sb.nxt();
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.recover_fs = w.cwnd;
        self.phase = Phase::Cwr;
        o.ecn_response = true;
        self.prr(a, sb, w, true);
    }

    /// ns-2's `TcpAgent::ecn`: at most once per window of data (or after a timeout),
    /// `slowdown(CLOSE_CWND_HALF | CLOSE_SSTHRESH_HALF)`.
    #[cold]
    /// Whether ns-2 answers an echo on this ACK (`TcpAgent::ecn`): once the ACK goes
    /// beyond the point of the last response, or after a timeout.
    fn ns2_echo_due(&self, sb: &Scoreboard) -> bool {
        self.ns2 && self.phase != Phase::Recovery && (sb.una() >= self.fr_floor || self.last_action == Ns2Action::Timeout)
    }

    /// Whether the window is closed below one segment, as ns-2's answer to an echo at
    /// a window of one segment leaves it (`cwnd_` 0.5, `window()` 0): nothing is sent
    /// until the retransmission timer expires, and the timer stays armed with nothing
    /// outstanding (`TcpAgent::newtimer`'s `cwnd_ < 1`).
    pub fn window_closed(&self, w: &Window) -> bool {
        self.ns2 && w.cwnd < w.mss
    }

    /// ns-2's `ecn_backoff_` (`TcpAgent::ecn`, `newack`, `recv_newack_helper`): an
    /// echo answered with the window at one segment, when the echo answered before it
    /// found the window at one segment too, doubles the retransmission timer's backoff;
    /// while so backing off, the RTT sample of an ACK carrying the echo does not end
    /// the backoff; an ACK of new data without the echo, or an echo answered with a
    /// larger window, ends it. A timeout that follows then waits the doubled time.
    /// The connection asks this before the ACK's RTT sample, as ns-2 answers the echo
    /// before it times the ACK.
    pub fn ns2_echo_timer(&mut self, ece: bool, new_ack: bool, sb: &Scoreboard, w: &Window) -> EchoTimer {
        let mut t = EchoTimer::default();
        if ece && self.ns2_echo_due(sb) {
            if w.cwnd <= w.mss {
                t.back_off = self.ecn_backoff;
                self.ecn_backoff = true;
            } else {
                self.ecn_backoff = false;
            }
        }
        t.keep_backoff = self.ecn_backoff && ece;
        if new_ack && !ece {
            self.ecn_backoff = false;
        }
        t
    }

    fn ns2_ecn(&mut self, now: Time, a: &AckInfo, sb: &Scoreboard, w: &mut Window, cc: &mut Cc, o: &mut Outcome) {
        let win = ns2_window(w.cwnd, a.snd_wnd);
        cc.on_loss(w, now, whole_packets(win, w.mss));
        // Half the window to the byte (`precisionReduce_`) and no floor: from one
        // segment, half a segment, which sends nothing until the retransmission
        // timer expires (`Recovery::window_closed`).
        w.cwnd = (win / 2).max(1);
        self.recover = sb.nxt();
        self.fr_floor = self.recover + 1;
        self.last_action = Ns2Action::Ecn;
        o.ecn_response = true;
    }

    /// ns-2's `dupack_action` after an ECN response in the same window: the fast
    /// retransmit and fast recovery, without halving the window again.
    #[cold]
    fn enter_without_cut(&mut self, w: &mut Window, sb: &mut Scoreboard, o: &mut Outcome) {
        self.last_action = Ns2Action::Dupack;
        o.entered = true;
        self.first_partial = true;
        self.half_cwnd = w.cwnd;
        match self.mode {
            Mode::Tahoe => {
                w.cwnd = w.mss;
                sb.mark_all_lost();
                self.phase = Phase::Loss;
            }
            Mode::Reno | Mode::NewReno | Mode::Sack => {
                sb.mark_head_lost();
                w.cwnd += self.dupthresh as u64 * w.mss;
                self.phase = Phase::Recovery;
                o.retransmit_head = true;
            }
        }
    }

    fn in_recovery(&mut self, now: Time, a: &AckInfo, sb: &mut Scoreboard, w: &mut Window, cc: &mut Cc, o: &mut Outcome) {
        match self.mode {
            Mode::Reno => {
                if a.acked > 0 {
                    self.exit(now, a, w, cc);
                } else if a.dup {
                    w.cwnd += w.mss; // inflate: a segment has left the network
                }
            }
            Mode::NewReno => {
                if a.acked > 0 && sb.una() >= self.recover {
                    self.exit(now, a, w, cc); // full ACK
                } else if a.acked > 0 {
                    sb.mark_head_lost();
                    o.retransmit_head = true;
                    o.restart_timer = self.first_partial || self.partial_ack_timer == PartialAckTimer::Every;
                    self.first_partial = false;
                    let back = if a.acked >= w.mss { w.mss } else { 0 };
                    w.cwnd = w.cwnd.saturating_sub(a.acked).max(w.mss) + back;
                } else if a.dup {
                    w.cwnd += w.mss;
                }
            }
            Mode::Sack => {
                if sb.una() >= self.recover {
                    self.exit(now, a, w, cc);
                } else {
                    self.prr(a, sb, w, self.rack);
                }
            }
            Mode::Tahoe => unreachable!("Tahoe recovers in the Loss phase"),
        }
    }

    fn exit(&mut self, now: Time, a: &AckInfo, w: &mut Window, cc: &mut Cc) {
        cc.on_recovery_exit(w, now);
        self.phase = Phase::Open;
        if self.ns2 {
            if self.mode != Mode::Sack {
                w.cwnd = self.half_cwnd;
            }
            // ns-2 handles the ACK that ends recovery as any new ACK: it opens cwnd.
            self.grow(now, a, w, cc, 2 * w.mss);
        }
    }

    /// Window growth on an ACK of new data while cwnd-limited; under ns-2's rules never
    /// on an ACK carrying ECN-Echo, in any phase (`recv_newack_helper` opens the window
    /// only without it).
    fn grow(&self, now: Time, a: &AckInfo, w: &mut Window, cc: &mut Cc, abc_limit: u64) {
        if a.acked > 0 && a.cwnd_limited && !(self.ns2 && a.ece) {
            cc.on_ack(w, now, &Ack { acked: a.acked, delivered: a.delivered, abc_limit });
        }
    }

    /// RACK's reordering timer found losses (Linux `tcp_rack_reo_timeout`): from the open
    /// state they begin recovery, counted as one segment delivered for PRR. Returns
    /// whether recovery began.
    pub fn on_reorder_timeout(&mut self, now: Time, sb: &mut Scoreboard, w: &mut Window, cc: &mut Cc) -> bool {
        if !matches!(self.phase, Phase::Open | Phase::Cwr) || self.mode != Mode::Sack || sb.lost() == 0 {
            return false;
        }
        let mut o = Outcome::default();
        self.enter(now, &AckInfo { delivered: w.mss, ..AckInfo::default() }, sb, w, cc, &mut o);
        o.entered
    }

    /// RFC 6937 PRR with Slow Start Reduction Bound; sets cwnd = pipe + sndcnt. `linux`
    /// (with RACK, and in CWR) as Linux's `tcp_cwnd_reduction`: an ACK that delivers
    /// nothing leaves cwnd, and the reduction bound's extra segment comes only with an
    /// ACK that advanced snd_una and found no new loss (PRR-CRB's conservative spirit).
    fn prr(&mut self, a: &AckInfo, sb: &Scoreboard, w: &mut Window, linux: bool) {
        let delivered = a.delivered;
        if linux && delivered == 0 {
            return;
        }
        self.prr_delivered += delivered;
        let pipe = sb.pipe();
        let ss = w.ssthresh;
        let sndcnt = if pipe > ss {
            let target = (self.prr_delivered as u128 * ss as u128).div_ceil(self.recover_fs.max(1) as u128);
            (target as u64).saturating_sub(self.prr_out)
        } else {
            let extra = if !linux || (a.acked > 0 && !a.newly_lost) { w.mss } else { 0 };
            let limit = self.prr_delivered.saturating_sub(self.prr_out).max(delivered) + extra;
            (ss - pipe).min(limit)
        };
        // The fast retransmit (in CWR a first segment) always goes out (as in Linux).
        let sndcnt = if self.prr_out == 0 { sndcnt.max(w.mss) } else { sndcnt };
        w.cwnd = pipe + sndcnt;
    }

    /// Retransmission timeout: RFC 5681/6298 cwnd = 1 MSS, everything lost, and RFC 6582
    /// §4: recover = snd_max so that duplicates from go-back-N don't trigger a fast retransmit.
    /// ssthresh is reduced once per loss episode: not again for a repeated timeout (RFC 5681
    /// §3.1 note) nor for a timeout during fast recovery or the slow start after an earlier
    /// one, whose outstanding data is no measure of the path (Linux tcp_enter_loss).
    ///
    /// ns-2 instead halves the congestion window at every timeout (its deflated value in
    /// fast recovery), so a repeated timeout leaves ssthresh at 2 segments; but a
    /// timeout whose last reduction answered an echo, or the one a window closed by an
    /// echo waits for with nothing outstanding, only brings cwnd back to one segment
    /// (`TcpAgent::timeout`'s CLOSE_CWND_ONE): the echo already halved it.
    pub fn on_rto(&mut self, now: Time, repeated: bool, snd_wnd: u64, sb: &mut Scoreboard, w: &mut Window, cc: &mut Cc) {
        let after_echo = sb.outstanding() == 0 || self.last_action == Ns2Action::Ecn;
        if self.ns2 && after_echo {
            cc.on_rto(w, now, 0, sb.nxt(), true);
        } else if self.ns2 {
            let cwnd = if self.phase == Phase::Recovery { w.ssthresh } else { w.cwnd };
            cc.on_rto(w, now, whole_packets(ns2_window(cwnd, snd_wnd), w.mss), sb.nxt(), false);
        } else {
            let same_episode = repeated || self.phase != Phase::Open;
            cc.on_rto(w, now, sb.outstanding(), sb.nxt(), same_episode);
        }
        sb.mark_all_lost();
        self.recover = sb.nxt();
        self.fr_floor = self.recover + 1;
        self.phase = Phase::Loss;
        self.dupacks = 0;
        self.last_action = Ns2Action::Timeout;
    }
}

/// The window ns-2 halves at a loss or an echo (`slowdown`'s `window()`, `windowd()`):
/// cwnd, or the receiver's window where that is smaller. ns-2 opens cwnd_ on every new
/// ACK, in slow start too, while the receiver's window (`window_`) holds the sender
/// back, so cwnd_ may have grown well past what was ever sent.
fn ns2_window(cwnd: u64, snd_wnd: u64) -> u64 {
    cwnd.min(snd_wnd)
}

/// The amount whose half (`cc::half_flight`) is ns-2's `int(window() / 2)`: the window
/// in whole packets, rounded down to an even number.
fn whole_packets(cwnd: u64, mss: u64) -> u64 {
    cwnd / mss / 2 * 2 * mss
}

/// What the tests of both recoveries drive: a scoreboard, a window and one recovery.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    pub const M: u64 = 1000;

    pub trait OnAck {
        fn on_ack(&mut self, now: Time, a: &AckInfo, sb: &mut Scoreboard, w: &mut Window, cc: &mut Cc) -> Outcome;
    }
    impl OnAck for Recovery {
        fn on_ack(&mut self, now: Time, a: &AckInfo, sb: &mut Scoreboard, w: &mut Window, cc: &mut Cc) -> Outcome {
            Recovery::on_ack(self, now, a, sb, w, cc)
        }
    }
    impl OnAck for Ns3Recovery {
        fn on_ack(&mut self, now: Time, a: &AckInfo, sb: &mut Scoreboard, w: &mut Window, cc: &mut Cc) -> Outcome {
            Ns3Recovery::on_ack(self, now, a, sb, w, cc)
        }
    }

    pub struct Fixture<R> {
        pub r: R,
        pub sb: Scoreboard,
        pub w: Window,
        pub cc: Cc,
    }

    /// `n` segments of `M` bytes outstanding from sequence 1.
    pub fn board(n: u64) -> Scoreboard {
        let mut sb = Scoreboard::new(1);
        for i in 0..n {
            sb.on_send(1 + i * M, 1 + (i + 1) * M, Time::ZERO, false);
        }
        sb
    }

    impl<R: OnAck> Fixture<R> {
        pub fn dup(&mut self) -> Outcome {
            let a = AckInfo { dup: true, ..Default::default() };
            self.r.on_ack(Time::ZERO, &a, &mut self.sb, &mut self.w, &mut self.cc)
        }
        /// A cumulative ACK to `to`, the window used.
        pub fn ack(&mut self, to: u64) -> Outcome {
            let acked = self.sb.ack(to, self.sb.high_sacked(), &mut crate::rack::Rack::default(), Time::ZERO).bytes;
            let a = AckInfo { acked, delivered: acked, cwnd_limited: true, ..Default::default() };
            self.r.on_ack(Time::ZERO, &a, &mut self.sb, &mut self.w, &mut self.cc)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;

    fn fixture(mode: Mode, nsegs: u64, cwnd: u64) -> Fixture<Recovery> {
        fixture_with(mode, nsegs, cwnd, LossResponse::Linux)
    }

    fn fixture_with(mode: Mode, nsegs: u64, cwnd: u64, response: LossResponse) -> Fixture<Recovery> {
        fixture_full(mode, nsegs, cwnd, response, false)
    }

    fn fixture_full(mode: Mode, nsegs: u64, cwnd: u64, response: LossResponse, rack: bool) -> Fixture<Recovery> {
        let cfg = TcpConfig { loss_response: response, rack, ..TcpConfig::default() };
        Fixture {
            r: Recovery::new(mode, &cfg),
            sb: board(nsegs),
            w: Window { cwnd, ssthresh: u64::MAX, mss: M },
            cc: Cc::new(Algorithm::Reno, true, true),
        }
    }

    #[test]
    fn reno_inflates_then_deflates_on_first_advance() {
        let mut f = fixture(Mode::Reno, 10, 10 * M);
        assert!(!f.dup().entered);
        assert_eq!(f.r.send_window(&f.w, true), 11 * M, "limited transmit");
        f.dup();
        let o = f.dup();
        assert!(o.entered && o.retransmit_head);
        assert_eq!((f.w.ssthresh, f.w.cwnd), (5 * M, 8 * M));
        f.dup();
        assert_eq!(f.w.cwnd, 9 * M);
        // A partial ACK still ends Reno's recovery.
        f.ack(1 + 3 * M);
        assert_eq!((f.r.phase(), f.w.cwnd), (Phase::Open, 5 * M));
    }

    #[test]
    fn newreno_partial_acks_stay_in_recovery() {
        let mut f = fixture(Mode::NewReno, 10, 10 * M);
        for _ in 0..3 {
            f.dup();
        }
        assert_eq!(f.w.cwnd, 8 * M);
        let o = f.ack(1 + 4 * M); // partial: 4 segments
        assert!(o.retransmit_head);
        assert_eq!(f.r.phase(), Phase::Recovery);
        assert_eq!(f.w.cwnd, 8 * M - 4 * M + M);
        assert!(f.sb.head_lost());
        let o = f.ack(1 + 6 * M);
        assert!(o.retransmit_head);
        let o = f.ack(1 + 10 * M);
        assert!(!o.retransmit_head);
        assert_eq!((f.r.phase(), f.w.cwnd), (Phase::Open, 5 * M));
    }

    #[test]
    fn newreno_restarts_the_timer_at_every_partial_ack_or_only_the_first() {
        for (timer, second) in [(PartialAckTimer::Every, true), (PartialAckTimer::First, false)] {
            let mut f = fixture(Mode::NewReno, 10, 10 * M);
            f.r.partial_ack_timer = timer;
            for _ in 0..3 {
                f.dup();
            }
            assert!(f.ack(1 + 3 * M).restart_timer, "{timer:?}: first partial ACK");
            assert_eq!(f.ack(1 + 5 * M).restart_timer, second, "{timer:?}: second partial ACK");
            assert!(f.ack(1 + 10 * M).restart_timer, "the full ACK");
        }
    }

    #[test]
    fn ns3_bounds_sending_by_the_smaller_of_cwnd_and_the_peer_window() {
        let w = Window { cwnd: 30 * M, ssthresh: u64::MAX, mss: M };
        let ns3 = Loss::new(&TcpConfig { mss: M as u32, ..TcpConfig::ns3() }, false);
        assert_eq!(ns3.send_window(&w, true, 20 * M), 20 * M);
        let linux = Loss::new(&TcpConfig { algorithm: Algorithm::NewReno, ..TcpConfig::default() }, false);
        assert_eq!(linux.send_window(&w, true, 20 * M), 30 * M, "the peer window limits new data only");
    }

    #[test]
    fn ns3_nextseg_resends_lost_data_below_the_highest_sack_only_and_rule_3_without_unsent_data() {
        let mut f = fixture(Mode::Sack, 10, 10 * M);
        f.sb.apply_sack_t(&crate::SackBlocks::from_slice(&[(1 + 3 * M, 1 + 5 * M)]));
        f.sb.mark_all_lost(); // a timeout: everything not SACKed is lost
        let ns3 = Loss::new(&TcpConfig { mss: M as u32, ..TcpConfig::ns3() }, true);
        let linux = Loss::new(&TcpConfig::default(), true);
        assert!(ns3.resends_lost_at(1 + 2 * M, &f.sb));
        assert!(!ns3.resends_lost_at(1 + 6 * M, &f.sb), "above the highest SACK: new data goes first");
        assert!(linux.resends_lost_at(1 + 6 * M, &f.sb));
        // Once snd_una passes the SACKed data nothing is SACKed: all of it may go.
        f.sb.ack_t(1 + 6 * M);
        assert!(ns3.resends_lost_at(1 + 6 * M, &f.sb));
        // NextSeg rule 3 waits while unsent data waits for the window, in ns-3 only.
        assert!(!ns3.rule3_with_unsent(M) && ns3.rule3_with_unsent(0));
        assert!(linux.rule3_with_unsent(M));
    }

    #[test]
    fn tahoe_goes_back_n_and_ignores_later_dups() {
        let mut f = fixture(Mode::Tahoe, 10, 10 * M);
        for _ in 0..3 {
            f.dup();
        }
        assert_eq!((f.r.phase(), f.w.cwnd, f.w.ssthresh), (Phase::Loss, M, 5 * M));
        assert_eq!(f.sb.pipe(), 0);
        for _ in 0..5 {
            assert!(!f.dup().entered);
        }
        f.ack(1 + 2 * M);
        assert_eq!(f.w.cwnd, 2 * M, "slow start with L = 1 MSS after go-back-N");
        f.ack(1 + 10 * M);
        assert_eq!(f.r.phase(), Phase::Open);
    }

    #[test]
    fn careful_variant_after_timeout() {
        let mut f = fixture(Mode::NewReno, 10, 10 * M);
        f.r.on_rto(Time::ZERO, false, u64::MAX, &mut f.sb, &mut f.w, &mut f.cc);
        assert_eq!((f.w.cwnd, f.w.ssthresh, f.r.phase()), (M, 5 * M, Phase::Loss));
        for _ in 0..5 {
            assert!(!f.dup().entered, "duplicates below recover");
        }
        f.ack(1 + 10 * M); // == recover: slow start continues in the open state
        assert_eq!(f.r.phase(), Phase::Open);
        for i in 10..20 {
            f.sb.on_send(1 + i * M, 1 + (i + 1) * M, Time::ZERO, false);
        }
        for _ in 0..4 {
            assert!(!f.dup().entered, "ack == recover may be go-back-N duplicates");
        }
        f.ack(1 + 11 * M);
        f.dup();
        f.dup();
        assert!(f.dup().entered, "an ACK beyond recover re-arms fast retransmit");
        // A timeout inside this recovery keeps its ssthresh (one reduction per episode).
        let ss = f.w.ssthresh;
        f.r.on_rto(Time::ZERO, false, u64::MAX, &mut f.sb, &mut f.w, &mut f.cc);
        assert_eq!((f.w.cwnd, f.w.ssthresh), (M, ss));
    }

    #[test]
    fn prr_spreads_the_reduction_over_the_acks() {
        let mut f = fixture(Mode::Sack, 20, 20 * M);
        // Segment 0 lost; each SACK for segments 1.. delivers one segment.
        let mut sent = 0;
        for k in 1..20u64 {
            let newly =
                f.sb.apply_sack(&crate::SackBlocks::from_slice(&[(1 + M, 1 + (k + 1) * M)]), &mut crate::rack::Rack::default(), Time::ZERO).bytes;
            f.sb.mark_lost_by_sack(3, M);
            let a = AckInfo { dup: true, delivered: newly, ..Default::default() };
            let o = f.r.on_ack(Time::ZERO, &a, &mut f.sb, &mut f.w, &mut f.cc);
            assert!(!o.retransmit_head);
            if f.r.phase() == Phase::Recovery {
                // Send what PRR allows, one segment at a time.
                while f.w.cwnd >= f.sb.pipe() + M {
                    f.r.on_sent(M);
                    f.sb.on_send(f.sb.nxt(), f.sb.nxt() + M, Time::ZERO, false);
                    sent += 1;
                }
            }
        }
        // Entry on the third SACK: ssthresh = FlightSize / 2 = 10 segments; 17 segments
        // are delivered in recovery and PRR sends about ssthresh/RecoverFS = 1/2 of them
        // (the first slot being the fast retransmit's).
        assert_eq!(f.w.ssthresh, 10 * M);
        assert!((8..=10).contains(&sent), "sent {sent}");
    }

    #[test]
    fn ns2_halves_the_window_in_whole_packets_and_leaves_recovery_at_half_of_it() {
        // cwnd 10.5 segments with 12 outstanding (Limited Transmit sent two more).
        let mut f = fixture_with(Mode::Reno, 12, 10 * M + M / 2, LossResponse::Ns2);
        f.cc = Cc::new(Algorithm::Reno, false, false); // per-ACK growth, as ns-2
        for _ in 0..3 {
            f.dup();
        }
        // ns-2: ssthresh_ = int(10.5 / 2) = 5, not FlightSize 12 / 2 = 6.
        assert_eq!((f.w.ssthresh, f.w.cwnd), (5 * M, 8 * M));
        f.ack(1 + 12 * M);
        // cwnd_ = 10.5 / 2 = 5.25 segments, then this ACK opens it by 1/cwnd_.
        let half = 5 * M + M / 4;
        assert_eq!(f.r.phase(), Phase::Open);
        assert_eq!(f.w.cwnd, half + M * M / half);
        // The Linux response halves FlightSize and deflates to ssthresh.
        let mut g = fixture(Mode::Reno, 12, 10 * M + M / 2);
        for _ in 0..3 {
            g.dup();
        }
        g.ack(1 + 12 * M);
        assert_eq!((g.w.ssthresh, g.w.cwnd), (6 * M, 6 * M));
    }

    #[test]
    fn ns2_halves_the_window_the_receiver_allows_not_a_cwnd_grown_past_it() {
        // ns-2 opens cwnd_ on every new ACK while window_ holds the sender to 20
        // packets; slowdown() halves window() = min(cwnd_, window_). With cwnd 30
        // segments and the peer's window 20, a fast retransmit, a timeout and an
        // echo each leave 10 segments, not 15.
        let peer = 20 * M;
        let ack = |f: &mut Fixture<Recovery>, to: u64, ece: bool| {
            let acked = f.sb.ack(to, f.sb.high_sacked(), &mut crate::rack::Rack::default(), Time::ZERO).bytes;
            let a = AckInfo { acked, delivered: acked, cwnd_limited: true, ece, snd_wnd: peer, ..Default::default() };
            f.r.on_ack(Time::ZERO, &a, &mut f.sb, &mut f.w, &mut f.cc);
        };
        let ns2 = || {
            let mut f = fixture_with(Mode::Reno, 20, 30 * M, LossResponse::Ns2);
            f.cc = Cc::new(Algorithm::Reno, false, false);
            f
        };
        let mut f = ns2();
        for _ in 0..3 {
            let a = AckInfo { dup: true, snd_wnd: peer, ..Default::default() };
            f.r.on_ack(Time::ZERO, &a, &mut f.sb, &mut f.w, &mut f.cc);
        }
        assert_eq!((f.w.ssthresh, f.w.cwnd), (10 * M, 13 * M), "fast retransmit");
        ack(&mut f, 1 + 20 * M, false);
        assert_eq!(f.w.cwnd, 10 * M + M / 10, "recovery ends at half of 20 segments, opened by its ACK");
        let mut f = ns2();
        f.r.on_rto(Time::ZERO, false, peer, &mut f.sb, &mut f.w, &mut f.cc);
        assert_eq!((f.w.ssthresh, f.w.cwnd), (10 * M, M), "timeout");
        let mut f = ns2();
        ack(&mut f, 1 + M, true);
        assert_eq!((f.w.ssthresh, f.w.cwnd), (10 * M, 10 * M), "echo");
        // Where cwnd is the smaller, it is what is halved.
        let mut f = fixture_with(Mode::Reno, 20, 16 * M, LossResponse::Ns2);
        f.r.on_rto(Time::ZERO, false, peer, &mut f.sb, &mut f.w, &mut f.cc);
        assert_eq!(f.w.ssthresh, 8 * M);
    }

    #[test]
    fn ns2_reno_waits_for_the_timer_after_a_partial_ack_where_linux_retransmits_again() {
        for (response, second) in [(LossResponse::Ns2, false), (LossResponse::Linux, true)] {
            let mut f = fixture_with(Mode::Reno, 10, 10 * M, response);
            for _ in 0..3 {
                f.dup();
            }
            f.ack(1 + 3 * M); // partial: Reno leaves recovery, segment 3 is lost too
            let entered = (0..3).fold(false, |e, _| f.dup().entered || e);
            assert_eq!(entered, second, "{response:?}: a second fast retransmit in one window");
        }
    }

    #[test]
    fn ns2_never_opens_the_window_on_an_ack_that_echoes_a_mark() {
        // ns-2's recv_newack_helper opens cwnd only on an ACK without ECN-Echo: in the
        // slow start after a timeout and on the ACK that ends fast recovery too.
        let echo = |f: &mut Fixture<Recovery>, to: u64, ece: bool| {
            let acked = f.sb.ack(to, f.sb.high_sacked(), &mut crate::rack::Rack::default(), Time::ZERO).bytes;
            let a = AckInfo { acked, delivered: acked, cwnd_limited: true, ece, ..Default::default() };
            f.r.on_ack(Time::ZERO, &a, &mut f.sb, &mut f.w, &mut f.cc);
        };
        let mut f = fixture_with(Mode::Reno, 10, 20 * M, LossResponse::Ns2);
        f.cc = Cc::new(Algorithm::Reno, false, false);
        f.r.on_rto(Time::ZERO, false, u64::MAX, &mut f.sb, &mut f.w, &mut f.cc);
        assert_eq!((f.r.phase(), f.w.cwnd), (Phase::Loss, M));
        echo(&mut f, 1 + M, true); // answered (the last action was a timeout), not opened
        assert_eq!(f.w.cwnd, M / 2, "half of one segment: closed until the timer");
        assert!(f.r.window_closed(&f.w));
        echo(&mut f, 1 + 2 * M, true); // within the response's window: neither
        assert_eq!(f.w.cwnd, M / 2);
        echo(&mut f, 1 + 3 * M, false);
        assert_eq!(f.w.cwnd, M / 2 + M, "slow start opens on an ACK without the echo");
        assert!(!f.r.window_closed(&f.w));
        let mut f = fixture_with(Mode::Reno, 12, 10 * M + M / 2, LossResponse::Ns2);
        f.cc = Cc::new(Algorithm::Reno, false, false);
        for _ in 0..3 {
            f.dup();
        }
        echo(&mut f, 1 + 12 * M, true);
        assert_eq!((f.r.phase(), f.w.cwnd), (Phase::Open, 5 * M + M / 4), "half the window at entry, not opened");
    }

    #[test]
    fn ns2_a_timeout_after_an_echos_answer_only_brings_cwnd_back_to_one_segment() {
        // ns-2's timeout(): with data outstanding and the last reduction an echo's,
        // slowdown(CLOSE_CWND_ONE), ssthresh as the echo left it.
        let mut f = fixture_with(Mode::NewReno, 8, 8 * M, LossResponse::Ns2);
        let acked = f.sb.ack(1 + M, f.sb.high_sacked(), &mut crate::rack::Rack::default(), Time::ZERO).bytes;
        let a = AckInfo { acked, delivered: acked, cwnd_limited: true, ece: true, ..Default::default() };
        f.r.on_ack(Time::ZERO, &a, &mut f.sb, &mut f.w, &mut f.cc);
        assert_eq!((f.w.cwnd, f.w.ssthresh), (4 * M, 4 * M));
        f.r.on_rto(Time::ZERO, false, u64::MAX, &mut f.sb, &mut f.w, &mut f.cc);
        assert_eq!((f.w.cwnd, f.w.ssthresh), (M, 4 * M), "not halved again");
        // The next timeout follows a timeout: halved as ever.
        f.r.on_rto(Time::ZERO, true, u64::MAX, &mut f.sb, &mut f.w, &mut f.cc);
        assert_eq!((f.w.cwnd, f.w.ssthresh), (M, 2 * M));
    }

    #[test]
    fn ns2_cuts_ssthresh_at_every_timeout_so_a_repeated_one_leaves_two_segments() {
        let mut f = fixture_with(Mode::Reno, 10, 20 * M, LossResponse::Ns2);
        f.r.on_rto(Time::ZERO, false, u64::MAX, &mut f.sb, &mut f.w, &mut f.cc);
        assert_eq!((f.w.cwnd, f.w.ssthresh), (M, 10 * M));
        f.r.on_rto(Time::ZERO, true, u64::MAX, &mut f.sb, &mut f.w, &mut f.cc);
        assert_eq!((f.w.cwnd, f.w.ssthresh), (M, 2 * M), "half of a one-segment window, at least 2");
        // Linux keeps the first cut for the whole episode.
        let mut g = fixture(Mode::Reno, 10, 20 * M);
        g.r.on_rto(Time::ZERO, false, u64::MAX, &mut g.sb, &mut g.w, &mut g.cc);
        g.r.on_rto(Time::ZERO, true, u64::MAX, &mut g.sb, &mut g.w, &mut g.cc);
        assert_eq!(g.w.ssthresh, 5 * M, "FlightSize 10 / 2, held");
    }
    #[test]
    fn linux_prr_takes_cwnd_at_entry_and_adds_a_segment_only_on_clean_progress() {
        // 20 segments out under a cwnd of 30 (the sender ran out of data): segment 0
        // lost, 1-3 SACKed. ssthresh = FlightSize / 2 = 10 segments. Proportional part
        // (pipe 16 > 10): RFC 6937 may send 3 × 10 / 20 = 1.5 segments' bytes of the 3
        // delivered, Linux 3 × 10 / 30 = 1 (RecoverFS = cwnd at entry).
        for (rack, sndcnt) in [(false, 1500), (true, 1000)] {
            let mut f = fixture_full(Mode::Sack, 20, 30 * M, LossResponse::Linux, rack);
            let newly = f.sb.apply_sack(&crate::SackBlocks::from_slice(&[(1 + M, 1 + 4 * M)]), &mut crate::rack::Rack::default(), Time::ZERO).bytes;
            f.sb.mark_lost_by_sack(3, M);
            let a = AckInfo { dup: true, delivered: newly, newly_lost: true, ..Default::default() };
            f.r.dupacks = 2;
            assert!(f.r.on_ack(Time::ZERO, &a, &mut f.sb, &mut f.w, &mut f.cc).entered);
            assert_eq!(f.w.ssthresh, 10 * M);
            assert_eq!(f.w.cwnd - f.sb.pipe(), sndcnt, "rack {rack}");
        }
        // Below ssthresh (the reduction bound): pipe 4 after 12 more SACKed and 3 lost.
        // The bound is max(prr_delivered - prr_out, delivered) + 1 segment: Linux adds the
        // segment only for an ACK that advanced snd_una and marked nothing lost.
        for (rack, acked, newly_lost, sndcnt) in [(false, 0, true, 2), (true, 0, false, 1), (true, M, true, 1), (true, M, false, 2)] {
            let mut f = fixture_full(Mode::Sack, 20, 20 * M, LossResponse::Linux, rack);
            f.r.phase = Phase::Recovery;
            f.r.prr_delivered = 10 * M;
            f.r.prr_out = 10 * M;
            f.w.ssthresh = 10 * M;
            f.sb.apply_sack(&crate::SackBlocks::from_slice(&[(1 + 4 * M, 1 + 20 * M)]), &mut crate::rack::Rack::default(), Time::ZERO);
            f.sb.mark_lost_by_sack(3, M);
            assert_eq!(f.sb.pipe(), 0);
            let a = AckInfo { delivered: M, acked, newly_lost, ..Default::default() };
            f.r.prr(&a, &f.sb, &mut f.w, f.r.rack);
            assert_eq!(f.w.cwnd, sndcnt * M, "rack {rack} acked {acked} newly_lost {newly_lost}");
        }
        // An ACK that delivers nothing leaves Linux's cwnd alone.
        let mut f = fixture_full(Mode::Sack, 20, 20 * M, LossResponse::Linux, true);
        f.r.phase = Phase::Recovery;
        f.r.prr(&AckInfo::default(), &f.sb, &mut f.w, f.r.rack);
        assert_eq!(f.w.cwnd, 20 * M);
    }
}
