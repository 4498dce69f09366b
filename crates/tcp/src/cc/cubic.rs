//! CUBIC (RFC 9438): C = 0.4, beta_cubic = 0.7, fast convergence and the Reno-friendly
//! region. Slow start is plain RFC 5681/3465 slow start: no HyStart++.
//!
//! Windows are kept in segments as `f64` for the cubic arithmetic; the byte window moves
//! by whole bytes with the fractional remainder carried so slow growth is not lost.

use super::{slow_start, Ack, CongestionControl, Window};
use units::Time;

const C: f64 = 0.4;
const BETA: f64 = 0.7;
/// §4.3: additive increase that gives Reno's average rate with beta_cubic.
const ALPHA_AIMD: f64 = 3.0 * (1.0 - BETA) / (1.0 + BETA);

#[derive(Clone, Debug)]
pub(crate) struct Cubic {
    /// RFC 3465 byte counting in slow start (else one MSS per ACK).
    byte_counting: bool,
    /// W_max: window before the last reduction (after fast convergence), segments.
    w_max: f64,
    /// cwnd just before the last reduction; W_est switches to alpha = 1 past it (§4.3).
    cwnd_prior: f64,
    /// K: seconds for the curve to climb back to its plateau.
    k: f64,
    /// Plateau of the current curve: W_max, or cwnd when cwnd starts above W_max.
    origin: f64,
    /// Start of the current congestion-avoidance stage.
    epoch: Option<Time>,
    /// W_est: Reno-equivalent window, segments.
    w_est: f64,
    /// The last reduction was a timeout: next epoch uses K = 0, W_max = cwnd (§4.8).
    after_rto: bool,
    /// Sub-byte growth carried to the next ACK.
    frac: f64,
}

impl Default for Cubic {
    fn default() -> Self {
        Cubic::new(true)
    }
}

impl Cubic {
    pub(crate) fn new(byte_counting: bool) -> Cubic {
        Cubic { byte_counting, w_max: 0.0, cwnd_prior: 0.0, k: 0.0, origin: 0.0, epoch: None, w_est: 0.0, after_rto: false, frac: 0.0 }
    }

    /// W_cubic(t) = C (t - K)^3 + W_max (RFC 9438 eq. 1), segments.
    #[inline]
    fn w_cubic(&self, t: f64) -> f64 {
        let d = t - self.k;
        C * d * d * d + self.origin
    }

    fn begin_epoch(&mut self, now: Time, cwnd: f64) {
        self.epoch = Some(now);
        if self.after_rto {
            self.w_max = cwnd;
            self.after_rto = false;
        }
        if cwnd < self.w_max {
            self.k = ((self.w_max - cwnd) / C).cbrt(); // eq. 2 with cwnd_epoch = cwnd
            self.origin = self.w_max;
        } else {
            self.k = 0.0;
            self.origin = cwnd;
        }
        self.w_est = cwnd;
        self.frac = 0.0;
    }

    /// §4.6/4.7: remember W_max (with fast convergence) and set ssthresh = cwnd * beta.
    /// RFC 9438 allows cwnd instead of FlightSize when cwnd growth is limited to
    /// cwnd-limited periods, which the connection enforces (as Linux does).
    fn reduce(&mut self, w: &mut Window) {
        let cwnd = w.cwnd as f64 / w.mss as f64;
        self.w_max = if cwnd < self.w_max { cwnd * (1.0 + BETA) / 2.0 } else { cwnd };
        self.cwnd_prior = cwnd;
        w.ssthresh = ((w.cwnd as f64 * BETA) as u64).max(2 * w.mss);
        self.epoch = None;
    }

    #[cfg(test)]
    pub(crate) fn k(&self) -> f64 {
        self.k
    }
}

impl CongestionControl for Cubic {
    fn on_ack(&mut self, w: &mut Window, now: Time, ack: &Ack) {
        if w.in_slow_start() {
            slow_start(w, ack.acked, ack.abc_limit, self.byte_counting);
            return;
        }
        let mss = w.mss as f64;
        let cwnd = w.cwnd as f64 / mss;
        let epoch = match self.epoch {
            Some(e) => e,
            None => {
                self.begin_epoch(now, cwnd);
                now
            }
        };
        let t = now.saturating_since(epoch).as_secs_f64();
        let rtt = ack.srtt.map_or(0.0, |d| d.as_secs_f64());
        let segs = ack.acked as f64 / mss;

        // §4.3 Reno-friendly estimate.
        let alpha = if self.w_est >= self.cwnd_prior { 1.0 } else { ALPHA_AIMD };
        self.w_est += alpha * segs / cwnd;

        let next = if self.w_cubic(t) < self.w_est {
            self.w_est.max(cwnd)
        } else {
            // §4.4/4.5: aim for W_cubic one RTT ahead, at most 1.5x per RTT.
            let target = self.w_cubic(t + rtt).clamp(cwnd, 1.5 * cwnd);
            cwnd + (target - cwnd) / cwnd * segs
        };
        let inc = (next - cwnd) * mss + self.frac;
        let whole = inc.floor().max(0.0);
        self.frac = inc - whole;
        w.cwnd += whole as u64;
    }

    fn on_loss(&mut self, w: &mut Window, _now: Time, _flight: u64) {
        self.reduce(w);
        self.after_rto = false;
    }

    fn on_rto(&mut self, w: &mut Window, _now: Time, _flight: u64, repeated: bool) {
        if !repeated {
            self.reduce(w);
        }
        self.after_rto = true;
        self.epoch = None;
        w.cwnd = w.mss;
    }

    fn on_recovery_exit(&mut self, w: &mut Window, _now: Time) {
        w.cwnd = w.ssthresh;
    }

    fn on_idle_restart(&mut self, w: &mut Window, iw: u64) {
        w.cwnd = w.cwnd.min(iw);
        self.epoch = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use units::Dur;

    const MSS: u64 = 1000;

    /// One RTT of ACKs, one per segment of the current window, evenly spaced.
    fn run_rtt(c: &mut Cubic, w: &mut Window, now: &mut Time, rtt: Dur) {
        let n = (w.cwnd / MSS).max(1);
        let gap = Dur(rtt.0 / n);
        for _ in 0..n {
            *now += gap;
            c.on_ack(w, *now, &Ack { acked: MSS, srtt: Some(rtt), abc_limit: 2 * MSS });
        }
    }

    #[test]
    fn reduction_is_beta_and_curve_is_followed() {
        // W_max = 1000 segments, RTT 100 ms: the curve stays above W_est (alpha = 0.53 per
        // RTT) for the whole run, so cwnd must track W(t) = C (t - K)^3 + W_max.
        let mut c = Cubic::default();
        let mut w = Window { cwnd: 1000 * MSS, ssthresh: u64::MAX, mss: MSS };
        let mut now = Time::ZERO;
        c.on_loss(&mut w, now, 1000 * MSS);
        assert_eq!(w.ssthresh, 700 * MSS);
        c.on_recovery_exit(&mut w, now);
        assert_eq!(w.cwnd, 700 * MSS);

        let rtt = Dur::from_millis(100);
        let k = (300.0f64 / C).cbrt();
        let mut max_err: f64 = 0.0;
        while now.as_secs_f64() < 1.3 * k {
            run_rtt(&mut c, &mut w, &mut now, rtt);
            let t = now.as_secs_f64();
            let expect = C * (t - k).powi(3) + 1000.0;
            let got = w.cwnd as f64 / MSS as f64;
            max_err = max_err.max((got - expect).abs() / expect);
        }
        assert!((c.k() - k).abs() < 1e-9);
        assert!(max_err < 0.01, "cwnd strays {:.2}% from W(t)", max_err * 100.0);
        // Past K the window is above W_max (convex region).
        assert!(w.cwnd > 1005 * MSS);
    }

    #[test]
    fn reno_friendly_takes_over_past_cwnd_prior() {
        // W_max = 100 at RTT 100 ms: once W_est passes cwnd_prior it grows at alpha = 1
        // per RTT and overtakes the flat top of the curve (RFC 9438 §4.3).
        let mut c = Cubic::default();
        let mut w = Window { cwnd: 100 * MSS, ssthresh: u64::MAX, mss: MSS };
        let mut now = Time::ZERO;
        c.on_loss(&mut w, now, 0);
        c.on_recovery_exit(&mut w, now);
        let rtt = Dur::from_millis(100);
        while now.as_secs_f64() < 7.0 {
            run_rtt(&mut c, &mut w, &mut now, rtt);
        }
        let k = (30.0f64 / C).cbrt();
        let curve = C * (now.as_secs_f64() - k).powi(3) + 100.0;
        let got = w.cwnd as f64 / MSS as f64;
        assert!(got > curve + 2.0, "cwnd {got:.1} should exceed W_cubic {curve:.1}");
        assert!(c.w_est >= c.cwnd_prior);
    }

    #[test]
    fn fast_convergence_lowers_w_max() {
        let mut c = Cubic::default();
        let mut w = Window { cwnd: 100 * MSS, ssthresh: u64::MAX, mss: MSS };
        c.on_loss(&mut w, Time::ZERO, 0);
        c.on_recovery_exit(&mut w, Time::ZERO);
        // Second loss below the previous W_max: W_max = cwnd * (1 + beta) / 2.
        w.cwnd = 80 * MSS;
        c.on_loss(&mut w, Time::ZERO, 0);
        assert!((c.w_max - 68.0).abs() < 1e-9);
        assert_eq!(w.ssthresh, 56 * MSS);
    }

    #[test]
    fn reno_friendly_region_grows_like_aimd() {
        // Short RTT: the cubic curve is flat, W_est (alpha = 0.53 per RTT) dominates.
        let mut c = Cubic::default();
        let mut w = Window { cwnd: 20 * MSS, ssthresh: u64::MAX, mss: MSS };
        let mut now = Time::ZERO;
        c.on_loss(&mut w, now, 0);
        c.on_recovery_exit(&mut w, now);
        assert_eq!(w.cwnd, 14 * MSS);
        for _ in 0..10 {
            run_rtt(&mut c, &mut w, &mut now, Dur::from_millis(1));
        }
        let got = w.cwnd as f64 / MSS as f64;
        assert!((got - (14.0 + 10.0 * ALPHA_AIMD)).abs() < 0.6, "{got}");
    }

    #[test]
    fn timeout_restarts_curve_from_cwnd() {
        let mut c = Cubic::default();
        let mut w = Window { cwnd: 50 * MSS, ssthresh: u64::MAX, mss: MSS };
        c.on_rto(&mut w, Time::ZERO, 50 * MSS, false);
        assert_eq!((w.cwnd, w.ssthresh), (MSS, 35 * MSS));
        w.cwnd = 35 * MSS; // as if slow start reached ssthresh
        c.on_ack(&mut w, Time(1), &Ack { acked: MSS, srtt: None, abc_limit: MSS });
        assert_eq!(c.k(), 0.0);
        assert!((c.w_max - 35.0).abs() < 1e-9);
    }
}
