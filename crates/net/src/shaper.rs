//! Token buckets that gate a queue's serialiser.

use units::{Rate, Time};

/// A token bucket of `burst` bytes filled at `rate`, as a cloud host's
/// egress limit or a provider's policer-turned-shaper. It gates the
/// serialiser of the queue it follows: a packet leaves only when the bucket
/// holds its size, and until then waits in that queue, head of line,
/// counting against its limit (Linux tbf with a peak rate: bursts leave at
/// the line rate, long sends at the sustained rate). A packet larger than
/// the bucket waits for a full bucket. Several in series make a concave
/// arrival curve, one piece each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shaper {
    pub rate: Rate,
    pub burst: u32,
}

/// A shaper with its state: when its bucket was (or will be) empty,
/// extrapolating its fill backwards: it holds min(burst, rate x (t -
/// empty_at)) at t. One number keeps the departure of every packet fixed at
/// its admission, in integer nanoseconds.
#[derive(Clone, Debug)]
pub(crate) struct Bucket {
    pub(crate) shaper: Shaper,
    empty_at: Time,
}

impl Bucket {
    pub(crate) fn new(shaper: Shaper) -> Bucket {
        Bucket { shaper, empty_at: Time::ZERO }
    }

    /// When a packet of `len` bytes may finish leaving: once the bucket
    /// holds it.
    #[inline]
    pub(crate) fn ready(&self, len: u32) -> Time {
        self.empty_at + self.shaper.rate.tx_time(len.min(self.shaper.burst) as u64)
    }

    /// A packet of `len` bytes finished leaving at `end`.
    #[inline]
    pub(crate) fn sent(&mut self, end: Time, len: u32) {
        let sh = self.shaper;
        // Never more than `burst` in the bucket: an empty-at more than a
        // full bucket's fill before this departure is clamped there.
        let floor = Time(end.0.saturating_sub(sh.rate.tx_time(sh.burst as u64).0));
        self.empty_at = self.empty_at.max(floor) + sh.rate.tx_time(len.min(sh.burst) as u64);
    }
}
