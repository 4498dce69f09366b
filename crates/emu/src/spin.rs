//! How much of its CPU the core may burn spinning before departures.
//!
//! The core runs under SCHED_FIFO and spins the last tens of microseconds
//! before each departure, because the kernel wakes a sleeper that late.
//! When departures come closer together than the spin, the spin never
//! ends and the core holds its CPU without a break. Linux does not let a
//! real-time thread starve the ordinary ones for ever: once they have
//! waited most of a second (the real-time budget, `sched_rt_runtime_us`,
//! and the fair server of newer kernels), it stops the real-time thread
//! for tens of milliseconds. A stop that long holds every packet of the
//! run, which is far worse than waking late. So the core watches its own
//! share of the CPU over short windows, and while it took more than
//! [`SpinBudget::max_share`] in the last one, it sleeps all the way to
//! each departure instead of spinning.

/// Windows short enough that the ordinary threads never wait long, long
/// enough that reading the thread's CPU clock (a system call) is rare.
pub const WINDOW_NS: u64 = 10_000_000;

/// Decides, window by window, whether the core may spin.
#[derive(Clone, Debug)]
pub struct SpinBudget {
    /// The largest share of the CPU (0-1] over a window after which the
    /// core stops spinning for the next one.
    pub max_share: f64,
    /// The current window's start: (wall, thread CPU) ns.
    start: Option<(u64, u64)>,
    allowed: bool,
    /// Windows in which the core slept instead of spinning.
    pub withheld: u64,
}

impl SpinBudget {
    pub fn new(max_share: f64) -> SpinBudget {
        SpinBudget { max_share, start: None, allowed: true, withheld: 0 }
    }

    /// Whether the core may spin now: `wall` is the monotonic clock, `cpu`
    /// reads the thread's CPU clock (called once a window).
    pub fn may_spin(&mut self, wall: u64, cpu: impl FnOnce() -> u64) -> bool {
        match self.start {
            None => self.start = Some((wall, cpu())),
            Some((w0, c0)) if wall >= w0 + WINDOW_NS => {
                let c = cpu();
                let share = c.saturating_sub(c0) as f64 / (wall - w0) as f64;
                self.allowed = share <= self.max_share;
                if !self.allowed {
                    self.withheld += 1;
                }
                self.start = Some((wall, c));
            }
            Some(_) => {}
        }
        self.allowed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_core_that_mostly_sleeps_keeps_spinning() {
        let mut b = SpinBudget::new(0.75);
        for i in 0..100u64 {
            // 20% of each 10 ms window on the CPU.
            assert!(b.may_spin(i * 5_000_000, || i * 1_000_000));
        }
        assert_eq!(b.withheld, 0);
    }

    #[test]
    fn a_core_that_spins_through_a_window_sleeps_through_the_next() {
        let mut b = SpinBudget::new(0.75);
        assert!(b.may_spin(0, || 0));
        assert!(b.may_spin(9_000_000, || panic!("the CPU clock is read once a window")));
        // 9.5 ms of CPU in 10 ms.
        assert!(!b.may_spin(10_000_000, || 9_500_000));
        assert!(!b.may_spin(15_000_000, || panic!("read once a window")));
        // Sleeping brought the next window down to 30%: spinning again.
        assert!(b.may_spin(20_000_000, || 12_500_000));
        assert_eq!(b.withheld, 1);
    }

    #[test]
    fn a_window_is_judged_by_its_own_time_however_long_it_ran() {
        let mut b = SpinBudget::new(0.75);
        b.may_spin(0, || 0);
        // A 50 ms wait in which the core used 20 ms: 40%.
        assert!(b.may_spin(50_000_000, || 20_000_000));
    }
}
