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

/// When a Linux timer armed at `now` to run `delay` later fires: `mod_timer` files it
/// on the timer wheel (`calc_wheel_index`) at `jiffies` + ⌈delay⌉, rounded up past the
/// granularity of the level that holds it (one jiffy below 63 jiffies from now, 8
/// below 504, 64 below 4032, ...), so that it never fires early: up to a jiffy late
/// within 252 ms, up to 8 (32 ms) within 2 s.
pub(crate) fn timer_at(now: Time, delay: Dur) -> Time {
    let clk = jiffies(now);
    let delta = usecs_to_jiffies(delay);
    let mut shift = 0;
    while shift < 24 && delta >= 63 << shift {
        shift += 3;
    }
    let bucket = (((clk + delta) >> shift) + 1) << shift;
    Time(bucket * NS_PER_JIFFY)
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

    #[test]
    fn timers_fire_on_the_wheels_next_bucket_never_early() {
        let ms = |x: u64| Time(x * 1_000_000);
        // Armed at 10 ms (jiffy 2) for 244 ms (61 jiffies): level 0, the tick after
        // jiffy 63, 256 ms: 2 ms late.
        assert_eq!(timer_at(ms(10), Dur::from_millis(244)), ms(256));
        // 300 ms (75 jiffies) is on level 1: jiffy 77 rounds up past a multiple of 8, 80.
        assert_eq!(timer_at(ms(10), Dur::from_millis(300)), ms(320));
        // At a multiple of 8 it still goes to the next bucket: 2 + 70 = 72 -> 80.
        assert_eq!(timer_at(ms(10), Dur::from_millis(280)), ms(320));
        // 3 s (750 jiffies) is on level 2: past a multiple of 64, 768.
        assert_eq!(timer_at(ms(10), Dur::from_secs(3)), Time(768 * NS_PER_JIFFY));
    }
}
