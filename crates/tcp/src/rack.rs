//! RACK, time-based loss detection (RFC 8985 §6.2), as Linux 6.x runs it
//! (`net/ipv4/tcp_recovery.c`, `tcp.h`): a segment is lost once a segment sent after it
//! has been delivered (ACKed or SACKed) and more than the RTT of the latest delivery
//! plus a reordering window has passed since it was sent. The scoreboard (`send.rs`)
//! walks its segments against this reference; this module holds the reference.
//!
//! * Every newly delivered segment updates the RTT (`rack.rtt_us`, the last one
//!   processed, SACKed ones first in sequence order, then the cumulatively acknowledged
//!   ones), and the reference moves to it if it was sent later (`rack.mstamp`,
//!   `rack.end_seq`). Linux tells "later" by send time in ns, a tie going to the higher
//!   sequence; here segments sent at one instant are told apart by their transmission
//!   order, which Linux's clock gives it. A retransmitted
//!   segment delivered sooner than the minimum RTT is ambiguous (the original may have
//!   arrived) and is skipped.
//! * The reordering window (`tcp_rack_reo_wnd`) is zero once recovery has begun or as
//!   many segments as the duplicate threshold are SACKed, unless reordering was seen;
//!   otherwise a quarter of the minimum RTT, at most SRTT. With fewer SACKs than the
//!   threshold the sender so waits a quarter RTT more for a late segment rather than
//!   for two more duplicates: the reordering timer fires then.

use crate::segment::after;
use units::{Dur, Opt, Time};

#[derive(Clone, Debug, Default)]
pub(crate) struct Rack {
    /// Send time and transmission order of the most recently sent segment delivered
    /// (the order means nothing while the time is none).
    sent: Opt<Time>,
    order: u32,
    /// RTT of the last delivered segment that was not ambiguous.
    rtt: Dur,
    /// Least RTT seen (`tcp_min_rtt`); none before the first sample.
    min_rtt: Opt<Dur>,
    /// The reference moved since the last detection (`rack.advanced`).
    advanced: bool,
    /// A segment never retransmitted was delivered after one sent later
    /// (`tp->reord_seen`): reordering, which keeps the window open.
    reordering: bool,
}

impl Rack {
    /// The least RTT seen, if any.
    pub fn min_rtt(&self) -> Option<Dur> {
        self.min_rtt.get()
    }

    /// An RTT sample for the minimum (Linux's `tcp_update_rtt_min`, from `ca_rtt_us`).
    pub fn on_rtt(&mut self, rtt: Dur) {
        if self.min_rtt.get().is_none_or(|m| rtt < m) {
            self.min_rtt = Opt::some(rtt);
        }
    }

    /// `tcp_rack_advance`: a segment sent at `sent`, `order`th, was delivered now.
    pub fn advance(&mut self, sent: Time, order: u32, retransmitted: bool, now: Time) {
        let rtt = now - sent;
        if retransmitted && self.min_rtt.get().is_some_and(|m| rtt < m) {
            return;
        }
        self.advanced = true;
        self.rtt = rtt;
        if self.xmit().is_none_or(|(_, o)| after(order, o)) {
            (self.sent, self.order) = (Opt::some(sent), order);
        }
    }

    /// Reordering observed: a never-retransmitted segment delivered below one delivered
    /// before it.
    pub fn saw_reordering(&mut self) {
        self.reordering = true;
    }

    /// Whether the reference moved since the last call (which clears it).
    pub fn take_advanced(&mut self) -> bool {
        std::mem::take(&mut self.advanced)
    }

    /// `tcp_rack_reo_wnd`: `recovering` once a loss episode has begun, `sacked` the
    /// segments SACKed now.
    pub fn reo_wnd(&self, recovering: bool, sacked: u64, dupthresh: u32, srtt: Option<Dur>) -> Dur {
        if !self.reordering && (recovering || sacked >= dupthresh as u64) {
            return Dur::ZERO;
        }
        let srtt = srtt.unwrap_or(Dur::ZERO);
        self.min_rtt.get().map_or(srtt, |m| Dur(m.0 / 4).min(srtt))
    }

    /// The `order`th transmission was sent before the reference
    /// (`tcp_skb_sent_after(rack.mstamp, ...)`): it can be judged.
    pub fn judges(&self, order: u32) -> bool {
        self.xmit().is_some_and(|(_, o)| after(o, order))
    }

    /// When a segment sent at `sent`, judged, counts as lost with window `reo_wnd`:
    /// at or past this time (`tcp_rack_skb_timeout` ≤ 0).
    pub fn deadline(&self, sent: Time, reo_wnd: Dur) -> Time {
        sent + self.rtt + reo_wnd
    }

    /// The reference: send time and transmission order, once anything was delivered.
    fn xmit(&self) -> Option<(Time, u32)> {
        self.sent.get().map(|t| (t, self.order))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Dur {
        Dur::from_millis(x)
    }
    fn at(x: u64) -> Time {
        Time::ZERO + ms(x)
    }

    #[test]
    fn the_reference_is_the_latest_sent_and_the_rtt_the_last_delivered() {
        let mut r = Rack::default();
        assert!(!r.judges(1));
        r.on_rtt(ms(40));
        r.advance(at(10), 3, false, at(55));
        r.advance(at(5), 2, false, at(55));
        // The reference stays at the later transmission; the RTT is the last one processed.
        assert_eq!((r.xmit(), r.rtt), (Some((at(10), 3)), ms(50)));
        assert!(r.judges(2) && !r.judges(3) && !r.judges(4));
        assert!(r.take_advanced() && !r.take_advanced());
        // A retransmission delivered faster than the minimum RTT is ambiguous.
        r.advance(at(50), 9, true, at(60));
        assert_eq!((r.xmit(), r.rtt, r.advanced), (Some((at(10), 3)), ms(50), false));
        r.advance(at(20), 5, true, at(60));
        assert_eq!((r.xmit(), r.rtt), (Some((at(20), 5)), ms(40)));
        assert_eq!(r.deadline(at(15), ms(10)), at(65));
        // Orders wrap.
        let mut r = Rack::default();
        r.advance(at(30), u32::MAX, false, at(70));
        r.advance(at(31), 1, false, at(71));
        assert_eq!(r.xmit(), Some((at(31), 1)));
        assert!(r.judges(u32::MAX - 3) && r.judges(0) && !r.judges(2));
    }

    #[test]
    fn the_window_is_a_quarter_min_rtt_until_recovery_or_dupthresh_sacks() {
        let mut r = Rack::default();
        r.on_rtt(ms(80));
        r.on_rtt(ms(100));
        let srtt = Some(ms(100));
        assert_eq!(r.reo_wnd(false, 2, 3, srtt), ms(20));
        assert_eq!(r.reo_wnd(false, 3, 3, srtt), Dur::ZERO);
        assert_eq!(r.reo_wnd(true, 0, 3, srtt), Dur::ZERO);
        // At most SRTT; with no sample at all, SRTT itself.
        assert_eq!(r.reo_wnd(false, 1, 3, Some(ms(10))), ms(10));
        assert_eq!(Rack::default().reo_wnd(false, 0, 3, srtt), ms(100));
        // Once reordering was seen the window stays open.
        r.saw_reordering();
        assert_eq!(r.reo_wnd(true, 10, 3, srtt), ms(20));
    }
}
