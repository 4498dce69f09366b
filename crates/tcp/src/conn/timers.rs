//! The transmit timer. Like Linux's (`icsk_pending`), one timer serves three purposes:
//! the retransmission timeout, RACK's reordering timeout, and the tail loss probe. Arming
//! one replaces the others; the reordering timeout and the probe, once they have run,
//! put the retransmission timeout back, measured from when the oldest outstanding
//! segment was sent (`tcp_rearm_rto`).

use super::{Notify, Tcp};
use crate::Segment;
use units::{Dur, Time};

/// What the transmit timer is armed for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Xmit {
    Retransmit,
    /// RACK's reordering window ends for a segment it is waiting on.
    Reorder,
}

impl Tcp {
    /// Arm the transmit timer for `kind`, `delay` from `now`, on the estimator's clock.
    pub(super) fn arm(&mut self, now: Time, delay: Dur, kind: Xmit) {
        self.xmit = Some((self.rtt.timer_at(now, delay), kind));
    }

    /// The retransmission timer, armed only if nothing is (RFC 6298 5.1).
    pub(super) fn arm_rto_if_idle(&mut self, now: Time) {
        if self.xmit.is_none() {
            self.arm(now, self.rtt.rto(), Xmit::Retransmit);
        }
    }

    /// Linux `tcp_rearm_rto`: nothing outstanding, no timer; after the reordering
    /// timeout or a probe, the RTO from when the oldest outstanding segment was sent;
    /// otherwise the RTO from now (RFC 6298 5.3).
    pub(super) fn rearm_rto(&mut self, now: Time) {
        if self.sb.outstanding() == 0 {
            self.xmit = None;
            return;
        }
        let rto = self.rtt.rto();
        let delay = match self.xmit {
            Some((_, Xmit::Reorder)) => self.sb.head_sent().map_or(rto, |t| (t + rto).saturating_since(now)).max(Dur(1)),
            _ => rto,
        };
        self.arm(now, delay, Xmit::Retransmit);
    }

    /// The transmit timer expired at `now`.
    pub(super) fn on_xmit_timer(&mut self, now: Time, kind: Xmit, out: &mut Vec<Segment>, n: &mut Notify) {
        match kind {
            Xmit::Retransmit => {
                self.xmit = None;
                self.on_rto(now, out, n);
            }
            Xmit::Reorder => self.on_reorder_timeout(now, out),
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
            }
            self.transmit(now, out);
        }
        if self.xmit.is_none_or(|(_, k)| k != Xmit::Retransmit) {
            self.rearm_rto(now);
        }
    }

    /// RACK: mark what is lost now; returns when a segment still within its
    /// reordering window will be judged again.
    pub(super) fn detect_loss_by_rack(&mut self, now: Time) -> Option<Time> {
        let recovering = self.rec.phase() != crate::recovery::Phase::Open;
        let reo_wnd = self.rack.reo_wnd(recovering, self.sb.sacked_segs(), self.cfg.dupthresh, self.rtt.srtt());
        self.sb.mark_lost_by_rack(&self.rack, reo_wnd, now)
    }

    /// Arm the reordering timer for `at` (Linux adds TCP_TIMEOUT_MIN_US, 2 ms).
    pub(super) fn arm_reorder(&mut self, now: Time, at: Time) {
        self.arm(now, at.saturating_since(now) + Dur::from_millis(2), Xmit::Reorder);
    }
}
