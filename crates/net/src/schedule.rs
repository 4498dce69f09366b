//! A time-varying link: rate and delay that follow a schedule.

use std::sync::Arc;
use units::{Dur, Rate, Time};

/// Values that hold from their instant until the next one: `steps` of
/// (offset, value) from `from`, the first at offset 0, repeated every
/// `period` if given (else the last value holds for ever). A trace of a
/// changing path, as trace modulation replays it.
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule<T: Copy> {
    steps: Arc<[(Dur, T)]>,
    period: Option<Dur>,
    from: Time,
}

/// Why a schedule cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScheduleError {
    Empty,
    /// Offsets must start at 0 and increase.
    Order,
    /// A repeating schedule's period must be longer than its last offset.
    Period,
}

impl std::fmt::Display for ScheduleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ScheduleError::Empty => "a schedule needs at least one step",
            ScheduleError::Order => "a schedule's offsets start at 0 and increase",
            ScheduleError::Period => "a repeating schedule's period must be longer than its last offset",
        })
    }
}

impl<T: Copy> Schedule<T> {
    pub fn new(steps: Vec<(Dur, T)>, period: Option<Dur>, from: Time) -> Result<Schedule<T>, ScheduleError> {
        let first = steps.first().ok_or(ScheduleError::Empty)?;
        if first.0 != Dur::ZERO || steps.windows(2).any(|w| w[0].0 >= w[1].0) {
            return Err(ScheduleError::Order);
        }
        if period.is_some_and(|p| p <= steps[steps.len() - 1].0) {
            return Err(ScheduleError::Period);
        }
        Ok(Schedule { steps: steps.into(), period, from })
    }

    /// The value at `t` and the instant it next changes (None: never).
    pub fn at(&self, t: Time) -> (T, Option<Time>) {
        if t < self.from {
            return (self.steps[0].1, Some(self.from));
        }
        let rel = t.0 - self.from.0;
        let (base, off) = match self.period {
            Some(p) => (self.from.0 + rel - rel % p.0, rel % p.0),
            None => (self.from.0, rel),
        };
        let i = self.steps.partition_point(|s| s.0 .0 <= off) - 1;
        let next = match (self.steps.get(i + 1), self.period) {
            (Some(s), _) => Some(Time(base + s.0 .0)),
            (None, Some(p)) => Some(Time(base + p.0)),
            (None, None) => None,
        };
        (self.steps[i].1, next)
    }
}

/// A serialiser whose rate follows a schedule (a rate of 0 sends nothing
/// until it changes).
pub type RateSchedule = Schedule<Rate>;

impl RateSchedule {
    /// When a packet of `len` bytes that starts at `start` has its last bit
    /// out: the bits sent in each step at that step's rate, to the
    /// nanosecond (rounded up at the end, as a fixed rate is).
    pub fn finish(&self, start: Time, len: u32) -> Time {
        // Bits times 1e9: what a rate of r bit/s sends in d ns is r x d.
        let mut left = len as u128 * 8 * 1_000_000_000;
        let mut t = start;
        loop {
            let (rate, next) = self.at(t);
            let r = rate.0 as u128;
            match next {
                Some(n) if r == 0 => t = n,
                Some(n) if r * (n - t).0 as u128 >= left => return t + Dur(left.div_ceil(r) as u64),
                Some(n) => {
                    left -= r * (n - t).0 as u128;
                    t = n;
                }
                None if r == 0 => return Time(u64::MAX),
                None => return t + Dur(left.div_ceil(r) as u64),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_holds_until_the_next_and_repeats_with_the_period() {
        let ms = Dur::from_millis;
        let s = Schedule::new(vec![(ms(0), 1u32), (ms(10), 2), (ms(30), 3)], Some(ms(50)), Time(ms(100).0)).unwrap();
        let at = |x: u64| s.at(Time(ms(x).0));
        assert_eq!(at(0), (1, Some(Time(ms(100).0))));
        assert_eq!(at(105), (1, Some(Time(ms(110).0))));
        assert_eq!(at(110), (2, Some(Time(ms(130).0))));
        assert_eq!(at(149), (3, Some(Time(ms(150).0))));
        assert_eq!(at(152), (1, Some(Time(ms(160).0))));
        let once = Schedule::new(vec![(ms(0), 1u32), (ms(10), 2)], None, Time::ZERO).unwrap();
        assert_eq!(once.at(Time(ms(1000).0)), (2, None));
        assert_eq!(Schedule::<u32>::new(vec![], None, Time::ZERO), Err(ScheduleError::Empty));
        assert_eq!(Schedule::new(vec![(ms(1), 1u32)], None, Time::ZERO), Err(ScheduleError::Order));
        assert_eq!(Schedule::new(vec![(ms(0), 1u32), (ms(5), 2)], Some(ms(5)), Time::ZERO), Err(ScheduleError::Period));
    }

    #[test]
    fn a_packet_spanning_a_rate_change_sends_its_bits_at_each_rate() {
        let ms = Dur::from_millis;
        // 12 Mbit/s for 1 ms, off for 1 ms, then 24 Mbit/s.
        let s = RateSchedule::new(vec![(ms(0), Rate::mbps(12)), (ms(1), Rate(0)), (ms(2), Rate::mbps(24))], None, Time::ZERO).unwrap();
        // 1500 B: 12,000 bits; 0.5 ms at 12 Mbit/s sends 6,000, then the
        // pause, then 6,000 at 24 Mbit/s in 0.25 ms.
        assert_eq!(s.finish(Time(500_000), 1500), Time(2_250_000));
        assert_eq!(s.finish(Time(0), 1500), Time(1_000_000));
        assert_eq!(s.finish(Time(1_500_000), 1500), Time(2_500_000));
    }
}
