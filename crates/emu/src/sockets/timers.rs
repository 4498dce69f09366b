//! Application timers: a heap of deadlines, and a timerfd armed at the
//! earliest so that the event loop's epoll wait ends when it is due.

use crate::sys::TimerFd;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use units::Time;

/// A timer set by application `app`, to be told `token`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Due {
    pub at: Time,
    /// The order it was set in: timers due at one instant fire in that order.
    seq: u64,
    pub app: u32,
    pub token: u64,
}

#[derive(Default)]
pub struct Timers {
    heap: BinaryHeap<Reverse<Due>>,
    seq: u64,
}

impl Timers {
    pub fn set(&mut self, app: u32, at: Time, token: u64) {
        self.seq += 1;
        self.heap.push(Reverse(Due { at, seq: self.seq, app, token }));
    }

    /// The earliest deadline.
    pub fn next(&self) -> Option<Time> {
        self.heap.peek().map(|Reverse(d)| d.at)
    }

    /// The earliest timer if it is due by `now`.
    pub fn pop_due(&mut self, now: Time) -> Option<Due> {
        if self.next()? > now {
            return None;
        }
        self.heap.pop().map(|Reverse(d)| d)
    }
}

/// A timerfd on CLOCK_MONOTONIC, re-armed only when the deadline changes.
pub struct Alarm {
    fd: TimerFd,
    armed: Option<Time>,
    origin_ns: u64,
}

impl Alarm {
    pub fn new(origin_ns: u64) -> io::Result<Alarm> {
        Ok(Alarm { fd: TimerFd::new()?, armed: None, origin_ns })
    }

    pub fn raw(&self) -> i32 {
        self.fd.raw()
    }

    /// Fires at `at` (on the clock whose zero is the origin).
    pub fn arm(&mut self, at: Time) -> io::Result<()> {
        if self.armed != Some(at) {
            self.fd.set(self.origin_ns + at.0)?;
            self.armed = Some(at);
        }
        Ok(())
    }

    /// It fired: clears it so that epoll stops reporting it.
    pub fn fired(&mut self) {
        self.fd.clear();
        self.armed = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timers_fire_by_deadline_then_in_the_order_they_were_set() {
        let mut t = Timers::default();
        t.set(0, Time(30), 1);
        t.set(1, Time(10), 2);
        t.set(2, Time(30), 3);
        t.set(0, Time(20), 4);
        assert_eq!(t.next(), Some(Time(10)));
        assert_eq!(t.pop_due(Time(9)), None, "nothing is due before its deadline");
        let fired: Vec<(u32, u64)> = std::iter::from_fn(|| t.pop_due(Time(30))).map(|d| (d.app, d.token)).collect();
        assert_eq!(fired, vec![(1, 2), (0, 4), (0, 1), (2, 3)]);
        assert_eq!(t.next(), None);
    }
}
