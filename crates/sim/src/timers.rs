//! How late an application's timer fires on a simulated host.
//!
//! A real host wakes a program some tens of microseconds after its timer's
//! deadline (the kernel's wake-up latency and timer slack, the scheduler),
//! a little differently each time. A simulator whose timers fire exactly
//! lets periodic sources keep a fixed phase against everything else, so
//! that a run can lock into a cycle real hosts never hold (Floyd and
//! Jacobson's traffic phase effects). With `timer_lateness` set, every
//! application timer fires late by a draw from a shifted exponential
//! through the given median and 99th percentile, each application drawing
//! from its own stream.

use scenario::TimerLateness;
use units::{Dur, Rng};

/// A shifted exponential: `floor` plus an exponential of mean `mean`, in ns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lateness {
    floor_ns: f64,
    mean_ns: f64,
}

impl Lateness {
    /// The shifted exponential whose median and 99th percentile are these
    /// (the scenario has checked that its floor is not negative).
    pub fn through(t: &TimerLateness) -> Lateness {
        let (median, p99) = (t.median.0 .0 as f64, t.p99.0 .0 as f64);
        let mean_ns = (p99 - median) / (50f64).ln();
        Lateness { floor_ns: (median - mean_ns * std::f64::consts::LN_2).max(0.0), mean_ns }
    }

    pub fn draw(&self, rng: &mut Rng) -> Dur {
        Dur((self.floor_ns + rng.exponential(self.mean_ns)).round() as u64)
    }
}

/// The lateness and each application's stream.
pub struct AppTimers {
    lateness: Lateness,
    streams: Vec<Rng>,
}

impl AppTimers {
    /// One stream per application, named after it, so that adding an
    /// application changes no other's draws.
    pub fn new(t: &TimerLateness, seed: u64, app_names: &[String]) -> AppTimers {
        let streams = app_names.iter().map(|n| Rng::stream(seed, &format!("timers/{n}"))).collect();
        AppTimers { lateness: Lateness::through(t), streams }
    }

    /// How late application `app`'s next timer fires.
    pub fn late(&mut self, app: u32) -> Dur {
        self.lateness.draw(&mut self.streams[app as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rundir::stats::percentile;
    use scenario::TimeSpan;

    #[test]
    fn draws_have_the_median_and_99th_percentile_asked_for() {
        let t = TimerLateness { median: TimeSpan(Dur::from_micros(23)), p99: TimeSpan(Dur::from_micros(79)) };
        let l = Lateness::through(&t);
        let mut rng = Rng::stream(1, "t");
        let mut v: Vec<f64> = (0..200_000).map(|_| l.draw(&mut rng).0 as f64).collect();
        v.sort_by(f64::total_cmp);
        let (p50, p99) = (percentile(&v, 50.0), percentile(&v, 99.0));
        assert!((p50 / 23_000.0 - 1.0).abs() < 0.02, "median {p50} ns");
        assert!((p99 / 79_000.0 - 1.0).abs() < 0.03, "p99 {p99} ns");
        // The floor: nothing fires earlier than the median less ln 2 means.
        assert!(v[0] >= 23_000.0 - (79_000.0 - 23_000.0) / 50f64.ln() * std::f64::consts::LN_2 - 1.0);
    }

    #[test]
    fn a_median_equal_to_the_99th_percentile_is_a_constant_delay() {
        let t = TimerLateness { median: TimeSpan(Dur::from_micros(30)), p99: TimeSpan(Dur::from_micros(30)) };
        let mut rng = Rng::stream(1, "t");
        assert!((0..100).all(|_| Lateness::through(&t).draw(&mut rng) == Dur::from_micros(30)));
    }
}
