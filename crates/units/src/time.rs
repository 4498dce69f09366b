use std::fmt;
use std::ops::{Add, AddAssign, Sub, SubAssign};

/// An instant: nanoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

/// A span of time in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Dur(pub u64);

/// A rate in bits per second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(pub u64);

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);

    pub fn from_secs_f64(s: f64) -> Time {
        Time((s * 1e9).round().max(0.0) as u64)
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    pub fn nanos(self) -> u64 {
        self.0
    }
    /// Duration since `earlier`, or zero if `earlier` is later.
    pub fn saturating_since(self, earlier: Time) -> Dur {
        Dur(self.0.saturating_sub(earlier.0))
    }
}

impl Dur {
    pub const ZERO: Dur = Dur(0);
    pub const MAX: Dur = Dur(u64::MAX);

    pub const fn from_nanos(n: u64) -> Dur {
        Dur(n)
    }
    pub const fn from_micros(us: u64) -> Dur {
        Dur(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> Dur {
        Dur(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Dur {
        Dur(s * 1_000_000_000)
    }
    pub fn from_secs_f64(s: f64) -> Dur {
        Dur((s * 1e9).round().max(0.0) as u64)
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    pub fn nanos(self) -> u64 {
        self.0
    }
    pub fn saturating_mul(self, k: u64) -> Dur {
        Dur(self.0.saturating_mul(k))
    }
}

impl Rate {
    pub const fn bps(b: u64) -> Rate {
        Rate(b)
    }
    pub const fn mbps(m: u64) -> Rate {
        Rate(m * 1_000_000)
    }
    pub fn bits_per_sec(self) -> u64 {
        self.0
    }
    pub fn as_f64(self) -> f64 {
        self.0 as f64
    }
    /// Time to serialise `bytes` at this rate, rounded up to whole nanoseconds.
    /// A zero rate means "infinitely fast".
    #[inline]
    pub fn tx_time(self, bytes: u64) -> Dur {
        if self.0 == 0 {
            return Dur::ZERO;
        }
        let bits = bytes as u128 * 8 * 1_000_000_000;
        Dur(bits.div_ceil(self.0 as u128) as u64)
    }
    /// Bytes that fit in `d` at this rate (rounded down).
    pub fn bytes_in(self, d: Dur) -> u64 {
        (self.0 as u128 * d.0 as u128 / 8 / 1_000_000_000) as u64
    }
    /// `self` scaled by `f` (for shares such as "66% of the bottleneck").
    pub fn scaled(self, f: f64) -> Rate {
        Rate((self.0 as f64 * f).round() as u64)
    }
}

impl Add<Dur> for Time {
    type Output = Time;
    #[inline]
    fn add(self, d: Dur) -> Time {
        Time(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Dur> for Time {
    #[inline]
    fn add_assign(&mut self, d: Dur) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub<Dur> for Time {
    type Output = Time;
    #[inline]
    fn sub(self, d: Dur) -> Time {
        Time(self.0.saturating_sub(d.0))
    }
}
impl Sub<Time> for Time {
    type Output = Dur;
    /// Saturating: an earlier minus a later instant is zero.
    #[inline]
    fn sub(self, t: Time) -> Dur {
        Dur(self.0.saturating_sub(t.0))
    }
}
impl Add for Dur {
    type Output = Dur;
    #[inline]
    fn add(self, d: Dur) -> Dur {
        Dur(self.0.saturating_add(d.0))
    }
}
impl AddAssign for Dur {
    #[inline]
    fn add_assign(&mut self, d: Dur) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub for Dur {
    type Output = Dur;
    #[inline]
    fn sub(self, d: Dur) -> Dur {
        Dur(self.0.saturating_sub(d.0))
    }
}
impl SubAssign for Dur {
    #[inline]
    fn sub_assign(&mut self, d: Dur) {
        self.0 = self.0.saturating_sub(d.0);
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}
impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::parse::fmt_duration(*self, f)
    }
}
impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::parse::fmt_rate(*self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_time_exact_and_rounded_up() {
        assert_eq!(Rate::mbps(1000).tx_time(1500), Dur(12_000));
        assert_eq!(Rate::mbps(15).tx_time(1500), Dur(800_000));
        // 1 byte at 3 bps = 8/3 s, rounded up.
        assert_eq!(Rate(3).tx_time(1), Dur(2_666_666_667));
        assert_eq!(Rate(0).tx_time(1500), Dur::ZERO);
    }

    #[test]
    fn bytes_in_inverts_tx_time() {
        let r = Rate::mbps(10);
        assert_eq!(r.bytes_in(Dur::from_secs(1)), 1_250_000);
        assert_eq!(r.bytes_in(r.tx_time(1500)), 1500);
    }

    #[test]
    fn time_arithmetic_saturates() {
        assert_eq!(Time(5) - Time(9), Dur(0));
        assert_eq!(Time(u64::MAX) + Dur(1), Time(u64::MAX));
        assert_eq!(Time(10) - Dur(20), Time(0));
    }
}
