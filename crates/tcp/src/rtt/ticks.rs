//! The coarse-clock retransmission timer of BSD-derived stacks as ns-2 2.35's
//! `Agent/TCP` runs it (`tcp.cc`: `rtt_update`, `rtt_timeout`, `rtt_backoff`), with
//! `rfc2988_` true and no timestamps:
//!
//! * one segment at a time is timed: the first new segment sent while none is timed,
//!   until an ACK covers it; a fast retransmit or a timeout abandons the measurement;
//! * the sample is the number of clock ticks that passed between send and ACK (at
//!   least 1); SRTT is kept in eighths of a tick and RTTVAR in quarters, in integers;
//! * RTO = (SRTT + 4·RTTVAR) ticks, raised to `min_rto` before the backoff multiplies
//!   it, then capped at `max_rto` and at least two ticks;
//! * the backoff doubles per timeout and returns to 1 only when a timed segment is
//!   acknowledged, so a timer that expired keeps the doubled value until a fresh sample;
//! * backed off beyond 8, SRTT is folded into RTTVAR and cleared, so the next sample
//!   starts the estimate again.
//!
//! ns-2 offsets its tick clock by a random `boot_time_`; here the clock ticks at whole
//! multiples of the tick from time zero.

use units::{Dur, Time};

const SRTT_BITS: u32 = 3;
const RTTVAR_BITS: u32 = 2;
/// RTO = SRTT + 2^RTTVAR_EXP · RTTVAR (ns-2 `rttvar_exp_`).
const RTTVAR_EXP: u32 = 2;

#[derive(Clone, Debug)]
pub(crate) struct TickRto {
    tick: Dur,
    /// SRTT in ticks × 8; 0 = no estimate.
    srtt8: i64,
    /// RTTVAR in ticks × 4.
    rttvar4: i64,
    /// The unbacked-off RTO (ns-2 `t_rtxcur_`), before the `min_rto` clamp.
    cur: Dur,
    backoff: u64,
    min: Dur,
    max: Dur,
    /// The timed segment: acknowledged once the ACK reaches `end`, sent at `sent`.
    timed: Option<(u64, Time)>,
    /// Highest sequence ever sent + 1: only new data is timed.
    high: u64,
}

impl TickRto {
    pub fn new(tick: Dur, initial: Dur, min: Dur, max: Dur) -> Self {
        let tick = tick.max(Dur(1));
        TickRto { tick, srtt8: 0, rttvar4: 0, cur: initial, backoff: 1, min, max, timed: None, high: 0 }
    }

    fn ticks(&self, t: Time) -> i64 {
        (t.0 / self.tick.0) as i64
    }

    /// A sample measured from `sent` to `now`, as ns-2's `rtt_update` without timestamps.
    pub fn sample_between(&mut self, sent: Time, now: Time) {
        let m = (self.ticks(now) - self.ticks(sent)).max(1);
        if self.srtt8 != 0 {
            let mut delta = m - (self.srtt8 >> SRTT_BITS);
            self.srtt8 = (self.srtt8 + delta).max(1);
            delta = delta.abs() - (self.rttvar4 >> RTTVAR_BITS);
            self.rttvar4 = (self.rttvar4 + delta).max(1);
        } else {
            self.srtt8 = m << SRTT_BITS;
            self.rttvar4 = m << (RTTVAR_BITS - 1);
        }
        let cur = ((self.rttvar4 << (RTTVAR_EXP + SRTT_BITS - RTTVAR_BITS)) + self.srtt8) >> SRTT_BITS;
        self.cur = Dur(cur as u64 * self.tick.0);
    }

    /// New data `[.., end)` left: time it if nothing is being timed.
    pub fn on_send(&mut self, now: Time, end: u64) {
        if end > self.high {
            self.high = end;
            if self.timed.is_none() {
                self.timed = Some((end, now));
            }
        }
    }

    /// A cumulative ACK up to `ack`: the timed segment's sample if this covers it,
    /// which ends the backoff unless `keep_backoff`.
    pub fn on_ack(&mut self, now: Time, ack: u64, keep_backoff: bool) -> Option<Dur> {
        let (_, sent) = self.timed.filter(|&(end, _)| ack >= end)?;
        self.timed = None;
        if !keep_backoff {
            self.backoff = 1;
        }
        self.sample_between(sent, now);
        Some(now - sent)
    }

    /// A fast retransmit or timeout (ns-2 `reset_rtx_timer`): stop timing.
    pub fn cancel_timing(&mut self) {
        self.timed = None;
    }

    pub fn rto(&self) -> Dur {
        let base = if self.cur < self.min { self.min } else { self.cur };
        Dur(base.0.saturating_mul(self.backoff)).min(self.max).max(Dur(2 * self.tick.0))
    }

    pub fn end_backoff(&mut self) {
        self.backoff = 1;
    }

    pub fn back_off(&mut self) {
        if self.backoff < 64 || self.rto() < self.max {
            self.backoff = self.backoff.saturating_mul(2);
        }
        if self.backoff > 8 {
            self.rttvar4 += self.srtt8 >> SRTT_BITS;
            self.srtt8 = 0;
        }
    }

    pub fn srtt(&self) -> Option<Dur> {
        (self.srtt8 != 0).then(|| Dur((self.srtt8 as u64 * self.tick.0) >> SRTT_BITS))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Dur {
        Dur::from_millis(x)
    }
    fn at(x: u64) -> Time {
        Time(x * 1_000_000)
    }

    fn est(min: u64) -> TickRto {
        TickRto::new(ms(10), ms(3000), ms(min), ms(60_000))
    }

    #[test]
    fn samples_count_the_ticks_crossed_and_rto_is_srtt_plus_four_rttvar() {
        let mut e = est(0);
        assert_eq!(e.rto(), ms(3000), "rtxcur_init_ before any sample");
        // 31 ms from 9 ms to 40 ms crosses the ticks at 10, 20, 30 and 40: 4 ticks.
        e.sample_between(at(9), at(40));
        // First sample: SRTT = 4, RTTVAR = 2 ticks: RTO = 4 + 8 = 12 ticks.
        assert_eq!((e.srtt(), e.rto()), (Some(ms(40)), ms(120)));
        // 4 → 8 ticks: delta 4; SRTT8 = 32 + 4 = 36 (4.5 ticks); RTTVAR4 = 8 + (4 - 2) = 10.
        // RTO = (10·8 + 36) >> 3 = 14 ticks.
        e.sample_between(at(100), at(180));
        assert_eq!((e.srtt(), e.rto()), (Some(ms(45)), ms(140)));
        // The same 31 ms from 1 ms to 32 ms crosses only three ticks.
        let mut f = est(0);
        f.sample_between(at(1), at(32));
        assert_eq!(f.srtt(), Some(ms(30)));
        // Within one tick the sample is still 1 tick.
        let mut g = est(0);
        g.sample_between(at(1), at(2));
        assert_eq!((g.srtt(), g.rto()), (Some(ms(10)), ms(30)));
    }

    #[test]
    fn min_rto_applies_before_the_backoff_and_max_rto_after() {
        let mut e = TickRto::new(ms(10), ms(3000), ms(200), ms(1000));
        e.sample_between(at(0), at(30)); // RTO 90 ms, raised to 200
        assert_eq!(e.rto(), ms(200));
        e.back_off();
        assert_eq!(e.rto(), ms(400));
        e.back_off();
        assert_eq!(e.rto(), ms(800));
        e.back_off();
        assert_eq!(e.rto(), ms(1000), "capped at max_rto");
    }

    #[test]
    fn one_segment_is_timed_and_only_its_ack_ends_the_backoff() {
        let mut e = est(200);
        e.on_send(at(0), 1000);
        e.on_send(at(1), 2000); // not timed: one at a time
        assert_eq!(e.on_ack(at(30), 1000, false), Some(ms(30)));
        assert_eq!(e.on_ack(at(31), 2000, false), None, "the second segment was never timed");
        e.on_send(at(40), 3000);
        e.back_off();
        e.cancel_timing(); // the timeout abandons the measurement
        assert_eq!(e.rto(), ms(400));
        assert_eq!(e.on_ack(at(80), 3000, false), None);
        assert_eq!(e.rto(), ms(400), "an ACK without a sample keeps the backoff");
        e.on_send(at(90), 2500); // a retransmission is never timed
        e.on_send(at(90), 4000);
        assert!(e.on_ack(at(130), 4000, false).is_some());
        assert_eq!(e.rto(), ms(200), "a timed segment acknowledged ends the backoff");
    }

    #[test]
    fn a_sample_that_keeps_the_backoff_still_updates_the_estimate() {
        let mut e = est(200);
        e.on_send(at(0), 1000);
        e.back_off();
        assert_eq!(e.on_ack(at(30), 1000, true), Some(ms(30)));
        // SRTT 3 ticks, RTTVAR 1.5: 90 ms, raised to 200, still doubled.
        assert_eq!((e.srtt(), e.rto()), (Some(ms(30)), ms(400)));
    }

    #[test]
    fn a_long_backoff_clears_srtt_so_the_next_sample_starts_afresh() {
        let mut e = est(0);
        e.sample_between(at(0), at(100));
        for _ in 0..4 {
            e.back_off(); // backoff 16 > 8
        }
        assert_eq!(e.srtt(), None);
        e.sample_between(at(0), at(50));
        assert_eq!(e.srtt(), Some(ms(50)), "first-sample rule again");
    }
}
