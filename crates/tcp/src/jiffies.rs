//! Linux's coarse clock, the jiffy, where the model follows Linux's own arithmetic in
//! it (CUBIC's epoch, the timers' rounding). `CONFIG_HZ` is a kernel build option:
//! 250 here, the value of the kernel the emulator validates against (Debian's and
//! many distributions' default; others build 1000).

use units::{Dur, Time};

/// Jiffies per second (`CONFIG_HZ`).
pub(crate) const HZ: u64 = 250;
const NS_PER_JIFFY: u64 = 1_000_000_000 / HZ;

/// The jiffy counter at `now` (Linux `tcp_jiffies32`, counted from time zero).
#[inline]
pub(crate) fn jiffies(now: Time) -> u64 {
    now.0 / NS_PER_JIFFY
}

/// Linux `usecs_to_jiffies`: a duration in whole jiffies, rounded up.
#[inline]
pub(crate) fn usecs_to_jiffies(d: Dur) -> u64 {
    d.0.div_ceil(1000).div_ceil(NS_PER_JIFFY / 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jiffy_is_four_milliseconds_and_durations_round_up() {
        assert_eq!(jiffies(Time(7_999_999)), 1);
        assert_eq!(jiffies(Time(8_000_000)), 2);
        assert_eq!(usecs_to_jiffies(Dur::ZERO), 0);
        assert_eq!(usecs_to_jiffies(Dur::from_micros(1)), 1);
        assert_eq!(usecs_to_jiffies(Dur::from_millis(4)), 1);
        assert_eq!(usecs_to_jiffies(Dur::from_micros(40_001)), 11);
    }
}
