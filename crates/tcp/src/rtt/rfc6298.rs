//! Retransmission timeout estimation (RFC 6298): a sample from every ACK that Karn allows.

use units::{Dur, Opt};

/// Clock granularity G; the RFC's lower bound on the variance term.
const G: Dur = Dur::from_millis(1);

#[derive(Clone, Debug)]
pub(crate) struct RttEstimator {
    srtt: Opt<Dur>,
    rttvar: Dur,
    /// RTO before backoff, already clamped to [min, max].
    base: Dur,
    backoff: u32,
    min: Dur,
    max: Dur,
}

impl RttEstimator {
    pub fn new(initial: Dur, min: Dur, max: Dur) -> Self {
        RttEstimator { srtt: Opt::NONE, rttvar: Dur::ZERO, base: initial.min(max), backoff: 0, min, max }
    }

    /// RFC 6298 §2.2/2.3, in integer nanoseconds. A valid sample also collapses any
    /// backoff (§5, note after 5.7).
    pub fn sample(&mut self, r: Dur) {
        match self.srtt.get() {
            None => {
                self.srtt = Opt::some(r);
                self.rttvar = Dur(r.0 / 2);
            }
            Some(s) => {
                let diff = s.0.abs_diff(r.0);
                // RTTVAR uses the SRTT from before this sample.
                self.rttvar = Dur((3 * self.rttvar.0 + diff) / 4);
                self.srtt = Opt::some(Dur((7 * s.0 + r.0) / 8));
            }
        }
        let s = self.srtt.get().unwrap_or(r);
        let rto = s + G.max(Dur(self.rttvar.0.saturating_mul(4)));
        self.base = rto.max(self.min).min(self.max);
        self.backoff = 0;
    }

    /// RFC 6298 §5.7: after a timed-out SYN, start data transfer with a 3 s RTO unless
    /// a sample exists.
    pub fn syn_timed_out(&mut self) {
        if self.srtt.is_none() {
            self.base = Dur::from_secs(3).min(self.max);
            self.backoff = 0;
        }
    }

    /// Current timeout including exponential backoff, capped at max_rto (§5.5).
    pub fn rto(&self) -> Dur {
        let shift = self.backoff.min(63);
        Dur(self.base.0.saturating_mul(1u64 << shift)).min(self.max)
    }

    pub fn end_backoff(&mut self) {
        self.backoff = 0;
    }

    /// Double the timeout (§5.5), stopping once the cap is reached.
    pub fn back_off(&mut self) {
        if self.rto() < self.max {
            self.backoff += 1;
        }
    }

    pub fn srtt(&self) -> Option<Dur> {
        self.srtt.get()
    }
    #[cfg(test)]
    pub fn rttvar(&self) -> Dur {
        self.rttvar
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Dur {
        Dur::from_millis(x)
    }

    #[test]
    fn rfc6298_arithmetic_by_hand() {
        let mut e = RttEstimator::new(ms(1000), ms(200), ms(60_000));
        assert_eq!(e.rto(), ms(1000));
        // First sample 100 ms: SRTT=100, RTTVAR=50, RTO=100+200=300.
        e.sample(ms(100));
        assert_eq!((e.srtt(), e.rttvar(), e.rto()), (Some(ms(100)), ms(50), ms(300)));
        // R=180: RTTVAR = 3/4*50 + 1/4*|100-180| = 37.5+20 = 57.5; SRTT = 7/8*100 + 180/8 = 110.
        e.sample(ms(180));
        assert_eq!(e.rttvar(), Dur::from_micros(57_500));
        assert_eq!(e.srtt(), Some(ms(110)));
        assert_eq!(e.rto(), ms(110 + 230));
        // R=110: RTTVAR = 3/4*57.5 + 0 = 43.125; SRTT stays 110; RTO = 110 + 172.5 = 282.5.
        e.sample(ms(110));
        assert_eq!(e.rttvar(), Dur::from_micros(43_125));
        assert_eq!(e.rto(), Dur::from_micros(282_500));
    }

    #[test]
    fn clamps_and_granularity() {
        let mut e = RttEstimator::new(ms(1000), ms(200), ms(60_000));
        e.sample(ms(10)); // 10 + 4*5 = 30 ms -> clamped up to min_rto
        assert_eq!(e.rto(), ms(200));
        let mut e = RttEstimator::new(ms(1000), Dur::ZERO, ms(60_000));
        for _ in 0..200 {
            e.sample(ms(10)); // RTTVAR decays to 0; G keeps RTO above SRTT
        }
        assert_eq!(e.srtt(), Some(ms(10)));
        assert_eq!(e.rto(), ms(11));
        let mut e = RttEstimator::new(ms(1000), ms(200), ms(5_000));
        e.sample(ms(4_000)); // 4 s + 8 s -> capped at max
        assert_eq!(e.rto(), ms(5_000));
    }

    #[test]
    fn backoff_doubles_caps_and_collapses() {
        let mut e = RttEstimator::new(ms(1000), ms(200), ms(10_000));
        let mut seen = vec![];
        for _ in 0..6 {
            seen.push(e.rto().0 / 1_000_000);
            e.back_off();
        }
        assert_eq!(seen, vec![1000, 2000, 4000, 8000, 10_000, 10_000]);
        e.sample(ms(100));
        assert_eq!(e.rto(), ms(300));
    }

    #[test]
    fn syn_timeout_sets_three_seconds_until_sampled() {
        let mut e = RttEstimator::new(ms(1000), ms(200), ms(60_000));
        e.back_off();
        e.syn_timed_out();
        assert_eq!(e.rto(), ms(3000));
        e.sample(ms(100));
        assert_eq!(e.rto(), ms(300));
        e.syn_timed_out(); // has a sample now: no effect
        assert_eq!(e.rto(), ms(300));
    }
}
