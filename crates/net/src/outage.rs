//! Windows in which a link sends nothing.

use std::sync::Arc;
use units::{Dur, Time};

/// Windows `[start, end)` from the start of each `period` (periods run
/// from `from`), sorted and apart, in which the serialiser of the queue
/// they follow sends nothing: packets wait in that queue (or are dropped
/// when it is full) and leave, at its rate, when a window ends, as a
/// stalled Wi-Fi or cellular path lets them through.
#[derive(Clone, Debug, PartialEq)]
pub struct Outages {
    windows: Arc<[(Dur, Dur)]>,
    period: Dur,
    from: Time,
}

impl Outages {
    /// `windows` clipped to the period, sorted, overlaps merged; none if
    /// nothing is left.
    pub fn new(mut windows: Vec<(Dur, Dur)>, period: Dur, from: Time) -> Option<Outages> {
        windows.retain(|w| w.0 < w.1 && w.0 < period);
        windows.sort();
        let mut out: Vec<(Dur, Dur)> = Vec::with_capacity(windows.len());
        for (a, b) in windows {
            let b = b.min(period);
            match out.last_mut() {
                Some(last) if a <= last.1 => last.1 = last.1.max(b),
                _ => out.push((a, b)),
            }
        }
        (!out.is_empty() && period > Dur::ZERO).then(|| Outages { windows: out.into(), period, from })
    }

    /// The first instant at or after `t` outside every window.
    pub fn resume(&self, t: Time) -> Time {
        if t < self.from {
            return t;
        }
        let (p, rel) = (self.period.0, t.0 - self.from.0);
        let (base, at) = (self.from.0 + rel - rel % p, Dur(rel % p));
        // The last window starting at or before `at`.
        let i = self.windows.partition_point(|w| w.0 <= at);
        match i.checked_sub(1).map(|i| self.windows[i]) {
            Some((_, end)) if at < end => {
                // A window ending at the period's end may run into one
                // starting at the next period's start.
                let next = Time(base + end.0);
                if end.0 == p {
                    self.resume(next)
                } else {
                    next
                }
            }
            _ => t,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_repeat_every_period_and_merge() {
        let ms = Dur::from_millis;
        let t = |x: u64| Time(x * 1_000_000);
        let o = Outages::new(vec![(ms(300), ms(400)), (ms(100), ms(300)), (ms(2000), ms(2100))], Dur::from_secs(1), t(1000)).unwrap();
        assert_eq!(o.resume(t(150)), t(150)); // before the first period
        assert_eq!(o.resume(t(1150)), t(1400)); // merged window 100-400 ms
        assert_eq!(o.resume(t(1400)), t(1400));
        assert_eq!(o.resume(t(3150)), t(3400));
        // (the window past the period was dropped)
        assert_eq!(o.resume(t(3099)), t(3099));
        assert_eq!(Outages::new(vec![(ms(5), ms(5))], Dur::from_secs(1), Time::ZERO), None);
        // A window to the period's end runs into the next period's first.
        let o = Outages::new(vec![(ms(0), ms(100)), (ms(900), ms(1000))], Dur::from_secs(1), Time::ZERO).unwrap();
        assert_eq!(o.resume(t(950)), t(1100));
    }
}
