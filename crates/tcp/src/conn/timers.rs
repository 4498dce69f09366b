//! The transmit timer. Like Linux's (`icsk_pending`), one timer serves three purposes:
//! the retransmission timeout, RACK's reordering timeout, and the tail loss probe. Arming
//! one replaces the others; the reordering timeout and the probe, once they have run,
//! put the retransmission timeout back, measured from when the oldest outstanding
//! segment was sent (`tcp_rearm_rto`).
//!
//! The tail loss probe (RFC 8985 §7 as Linux's `tcp_schedule_loss_probe`,
//! `tcp_send_loss_probe`, `tcp_process_tlp_ack`): in the open state with nothing
//! SACKed or retransmitted, after new data is sent or an ACK advances snd_una, the
//! timer is set for 2·SRTT + 2 ms (+ `min_rto` instead of 2 ms with one segment out,
//! for the peer's delayed ACK), or the RTO if that comes first. When it fires, one new
//! segment goes out whatever cwnd says (or, with none to send, the highest segment
//! again), then the RTO runs from now. One probe at a time: until snd_una reaches what
//! was sent when it went out. A probe that was a retransmission and repaired a loss
//! (the next ACK goes beyond it) costs one window reduction.

use super::{Notify, Tcp};
use crate::Segment;
use units::{Dur, Opt, Time};

/// What the transmit timer is armed for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Xmit {
    Retransmit,
    /// RACK's reordering window ends for a segment it is waiting on.
    Reorder,
    /// The tail loss probe is due.
    Probe,
}

impl Tcp {
    /// The transmit timer, if armed: when, and for what.
    pub(super) fn xmit(&self) -> Option<(Time, Xmit)> {
        self.xmit_at.get().map(|t| (t, self.xmit_kind))
    }

    /// Arm the transmit timer for `kind`, `delay` from `now`, on the estimator's clock.
    pub(super) fn arm(&mut self, now: Time, delay: Dur, kind: Xmit) {
        (self.xmit_at, self.xmit_kind) = (Opt::some(self.rtt.timer_at(now, delay)), kind);
    }

    /// The retransmission timer, armed only if nothing is (RFC 6298 5.1).
    pub(super) fn arm_rto_if_idle(&mut self, now: Time) {
        if self.xmit_at.is_none() {
            self.arm(now, self.rtt.rto(), Xmit::Retransmit);
        }
    }

    /// Linux `tcp_rearm_rto`: nothing outstanding, no timer (unless the window is
    /// closed until it expires); after the reordering timeout or a probe, the RTO from
    /// when the oldest outstanding segment was sent; otherwise the RTO from now (RFC
    /// 6298 5.3).
    pub(super) fn rearm_rto(&mut self, now: Time) {
        if self.sb.outstanding() == 0 && !self.rec.window_closed(&self.w) {
            self.xmit_at = Opt::NONE;
            return;
        }
        let rto = self.rtt.rto();
        let delay = match self.xmit() {
            Some((_, Xmit::Reorder | Xmit::Probe)) => self.rto_left(now).max(Dur(1)),
            _ => rto,
        };
        self.arm(now, delay, Xmit::Retransmit);
    }

    /// How long until the RTO, counted from when the oldest outstanding segment was sent
    /// (Linux `tcp_rto_delta_us`).
    fn rto_left(&self, now: Time) -> Dur {
        let rto = self.rtt.rto();
        self.sb.head_sent().map_or(rto, |t| (t + rto).saturating_since(now))
    }

    /// Linux `tcp_set_xmit_timer`, for an ACK that advanced snd_una: the probe if it may
    /// be armed, otherwise the RTO.
    pub(super) fn set_xmit_timer(&mut self, now: Time) {
        if !self.schedule_probe(now, true) {
            self.rearm_rto(now);
        }
    }

    /// Linux `tcp_schedule_loss_probe`; `advancing` on an ACK (the RTO would restart),
    /// else after new data was sent (the RTO runs on). Returns whether it armed it.
    pub(super) fn schedule_probe(&mut self, now: Time, advancing: bool) -> bool {
        if !self.cfg.tlp
            || !self.sack_ok
            || self.sb.outstanding() == 0
            || !matches!(self.rec.phase(), crate::recovery::Phase::Open | crate::recovery::Phase::Cwr)
            || self.sb.disorder()
        {
            return false;
        }
        let timeout = match self.rtt.srtt() {
            Some(srtt) => {
                // One segment out: the peer may be holding its ACK back.
                let extra = if self.sb.outstanding() <= self.mss as u64 { self.cfg.min_rto } else { Dur::from_millis(2) };
                Dur(2 * srtt.0) + extra
            }
            None => Dur::from_secs(1),
        };
        let rto = if advancing { self.rtt.rto() } else { self.rto_left(now) };
        let timeout = if rto > Dur::ZERO { timeout.min(rto) } else { timeout };
        self.arm(now, timeout, Xmit::Probe);
        true
    }

    /// Linux `tcp_send_loss_probe`.
    fn send_loss_probe(&mut self, now: Time, out: &mut Vec<Segment>) {
        if self.tlp_high.is_none() {
            self.tlp_retrans = false;
            if self.send_probe_new(now, out) {
                self.probe_sent();
            } else if let Some(idx) = self.sb.last_idx() {
                self.sb.mark_probed(idx, now);
                let (start, end, fin) = self.sb.seg(idx);
                let len = end - start - fin as u64;
                self.stats.retransmits += 1;
                self.stats.retrans_bytes += len;
                self.emit_data(now, start, len, fin, true, out);
                self.tlp_retrans = true;
                self.probe_sent();
            }
        }
        self.rearm_rto(now);
    }

    /// A probe went out: the RTO restarts from now.
    fn probe_sent(&mut self) {
        self.tlp_high = Opt::some(self.sb.nxt());
        self.stats.loss_probes += 1;
        self.xmit_at = Opt::NONE;
    }

    /// Linux `tcp_process_tlp_ack`, for an ACK up to `ack` that advanced snd_una
    /// (`advanced`), delivered SACKed data (`sacked`), or carried something other than a
    /// duplicate (`not_dup`).
    pub(super) fn process_probe_ack(&mut self, now: Time, ack: u64, advanced: bool, sacked: bool, not_dup: bool) {
        let Some(high) = self.tlp_high.get().filter(|&h| ack >= h) else { return };
        if !self.tlp_retrans {
            self.tlp_high = Opt::NONE; // a probe of new data, delivered
        } else if ack > high {
            // The probe repaired a loss.
            self.tlp_high = Opt::NONE;
            self.rec.on_probe_repaired(now, &self.sb, &mut self.w, &mut self.cc);
            self.ecn.queue_cwr(); // a reduction (Linux `tcp_init_cwnd_reduction`)
        } else if !(advanced || sacked || not_dup) {
            self.tlp_high = Opt::NONE; // a duplicate: original and probe both arrived
        }
    }

    /// The transmit timer expired at `now`.
    pub(super) fn on_xmit_timer(&mut self, now: Time, kind: Xmit, out: &mut Vec<Segment>, n: &mut Notify) {
        match kind {
            Xmit::Retransmit => {
                self.xmit_at = Opt::NONE;
                self.on_rto(now, out, n);
            }
            Xmit::Reorder => self.on_reorder_timeout(now, out),
            Xmit::Probe => self.send_loss_probe(now, out),
        }
    }

    /// Linux `tcp_rack_reo_timeout`: the segments whose reordering window has ended are
    /// lost; the first such loss begins recovery. Then the retransmission timer again.
    fn on_reorder_timeout(&mut self, now: Time, out: &mut Vec<Segment>) {
        let lost = self.sb.lost();
        self.detect_loss_by_rack(now);
        if self.sb.lost() > lost {
            if self.rec.on_reorder_timeout(now, &mut self.sb, &mut self.w, &mut self.cc) {
                self.stats.fast_recoveries += 1;
                self.ecn.queue_cwr(); // RFC 3168 §6.1.2: CWR after any reduction
                self.tlp_high = Opt::NONE;
            }
            self.transmit(now, out);
        }
        if self.xmit().is_none_or(|(_, k)| k != Xmit::Retransmit) {
            self.rearm_rto(now);
        }
    }

    /// RACK: mark what is lost now; returns when a segment still within its
    /// reordering window will be judged again.
    pub(super) fn detect_loss_by_rack(&mut self, now: Time) -> Option<Time> {
        let recovering = matches!(self.rec.phase(), crate::recovery::Phase::Recovery | crate::recovery::Phase::Loss);
        let reo_wnd = self.rack.reo_wnd(recovering, self.sb.sacked_segs(), self.cfg.dupthresh, self.rtt.srtt());
        self.sb.mark_lost_by_rack(&self.rack, reo_wnd, now)
    }

    /// Arm the reordering timer for `at` (Linux adds TCP_TIMEOUT_MIN_US, 2 ms).
    pub(super) fn arm_reorder(&mut self, now: Time, at: Time) {
        self.arm(now, at.saturating_since(now) + Dur::from_millis(2), Xmit::Reorder);
    }
}
