//! CUBIC (RFC 9438): C = 0.4, beta_cubic = 0.7, fast convergence and the Reno-friendly
//! region. Slow start is RFC 5681/3465 slow start, left early by Linux's HyStart
//! (`net/ipv4/tcp_cubic.c` since 5.8, with its module defaults) unless it is turned off.
//!
//! HyStart watches each round of slow start (from an ACK until snd_una passes the snd_nxt
//! of that moment) once cwnd >= 16 segments, and sets ssthresh = cwnd when either
//! - ACK train: ACKs arriving at most 2 ms apart have kept coming for longer than
//!   (delay_min + ack_delay) / 2 since the round began (the window fills the pipe), or
//! - delay: the least of the round's first 8 RTT samples (and of any later ones) exceeds
//!   delay_min + clamp(delay_min / 8, 4 ms, 16 ms) (a queue has built up).
//!
//! It runs once per connection: a timeout resets it (and delay_min), nothing else does.
//!
//! Windows are kept in segments as `f64` for the cubic arithmetic; the byte window moves
//! by whole bytes with the fractional remainder carried so slow growth is not lost.

use super::{slow_start, Ack, CongestionControl, Sample, Window};
use units::{Dur, Opt, Time};

const C: f64 = 0.4;
const BETA: f64 = 0.7;
/// §4.3: additive increase that gives Reno's average rate with beta_cubic.
const ALPHA_AIMD: f64 = 3.0 * (1.0 - BETA) / (1.0 + BETA);

/// Linux `hystart_low_window`: HyStart looks only from this cwnd on, segments.
const HYSTART_LOW_WINDOW: u64 = 16;
/// Linux `hystart_ack_delta_us`: ACKs at most this far apart form a train.
const HYSTART_ACK_DELTA: Dur = Dur::from_micros(2000);
/// Linux HYSTART_MIN_SAMPLES: RTT samples per round before the delay test.
const HYSTART_MIN_SAMPLES: u32 = 8;
/// Linux HYSTART_DELAY_MIN / MAX: bounds of the delay increase, delay_min / 8.
const HYSTART_DELAY_MIN: Dur = Dur::from_millis(4);
const HYSTART_DELAY_MAX: Dur = Dur::from_millis(16);
/// Linux discards delay samples for 1 s (HZ) after a congestion-avoidance epoch begins.
const EPOCH_QUIET: Dur = Dur::from_secs(1);
/// `sk_gso_max_size` of Linux's devices (veth, loopback: 64 KiB), for `hystart_ack_delay`.
const GSO_MAX_SIZE: u64 = 65536;

/// HyStart's state for the current round (Linux `bictcp_hystart_reset` fields).
#[derive(Clone, Debug)]
struct HyStart {
    /// Slow start was left by HyStart; it stays off until a timeout.
    found: bool,
    round_start: Time,
    /// Last ACK of the current train.
    last_ack: Time,
    /// The round ends when snd_una passes this (snd_nxt when it began).
    end_seq: u64,
    /// Least RTT of the round so far.
    curr_rtt: Opt<Dur>,
    sample_cnt: u32,
}

impl HyStart {
    fn new() -> HyStart {
        HyStart { found: false, round_start: Time::ZERO, last_ack: Time::ZERO, end_seq: 0, curr_rtt: Opt::NONE, sample_cnt: 0 }
    }

    /// A new round begins now, ending once snd_una passes `nxt`.
    fn reset(&mut self, now: Time, nxt: u64) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = nxt;
        self.curr_rtt = Opt::NONE;
        self.sample_cnt = 0;
    }
}

/// Linux `hystart_ack_delay`: a cushion for TSO/GRO batching of 4 GSO packets at the
/// pacing rate Linux computes in slow start (2 cwnd / srtt), at most 1 ms.
fn ack_delay(w: &Window, srtt: Option<Dur>) -> Dur {
    let Some(srtt) = srtt.filter(|s| s.0 > 0) else { return Dur::ZERO };
    let rate = 2 * w.cwnd as u128 * 1_000_000_000 / srtt.0 as u128; // bytes per second
    if rate == 0 {
        return Dur::ZERO;
    }
    let ns = (GSO_MAX_SIZE as u128 * 4 * 1_000_000_000 / rate) as u64;
    Dur(ns).min(Dur::from_millis(1))
}

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
    epoch: Opt<Time>,
    /// W_est: Reno-equivalent window, segments.
    w_est: f64,
    /// The last reduction was a timeout: next epoch uses K = 0, W_max = cwnd (§4.8).
    after_rto: bool,
    /// Sub-byte growth carried to the next ACK.
    frac: f64,
    /// HyStart on (Linux's `hystart` module parameter).
    hystart_on: bool,
    hystart: HyStart,
    /// Least RTT seen (Linux `delay_min`), forgotten on a timeout.
    delay_min: Opt<Dur>,
}

impl Default for Cubic {
    fn default() -> Self {
        Cubic::new(true, true)
    }
}

impl Cubic {
    pub(crate) fn new(byte_counting: bool, hystart: bool) -> Cubic {
        Cubic {
            byte_counting,
            w_max: 0.0,
            cwnd_prior: 0.0,
            k: 0.0,
            origin: 0.0,
            epoch: Opt::NONE,
            w_est: 0.0,
            after_rto: false,
            frac: 0.0,
            hystart_on: hystart,
            // end_seq = 0: the first ACK begins a round, as after Linux's init at snd_nxt = ISS + 1.
            hystart: HyStart::new(),
            delay_min: Opt::NONE,
        }
    }

    /// Linux `hystart_update`: one RTT sample in slow start with cwnd >= 16 segments.
    fn hystart_update(&mut self, w: &mut Window, now: Time, s: &Sample, delay: Dur) {
        let delay_min = self.delay_min.get().unwrap_or(delay);
        let h = &mut self.hystart;
        if s.una > h.end_seq {
            h.reset(now, s.nxt);
        }
        // ACK train: a closely spaced train of ACKs lasting half the minimum RTT means
        // the window already spans the path's capacity.
        if now.saturating_since(h.last_ack) <= HYSTART_ACK_DELTA {
            h.last_ack = now;
            // Halved: without pacing a window leaves in a burst (SK_PACING_NONE).
            let threshold = Dur((delay_min + ack_delay(w, s.srtt)).0 / 2);
            if now.saturating_since(h.round_start) > threshold {
                h.found = true;
                w.ssthresh = w.cwnd;
            }
        }
        // Delay: the round's RTT has grown past delay_min by an eighth of it (4-16 ms).
        if h.curr_rtt.get().is_none_or(|c| c > delay) {
            h.curr_rtt = Opt::some(delay);
        }
        if h.sample_cnt < HYSTART_MIN_SAMPLES {
            h.sample_cnt += 1;
        } else if h.curr_rtt.get().is_some_and(|c| c > delay_min + Dur(delay_min.0 / 8).clamp(HYSTART_DELAY_MIN, HYSTART_DELAY_MAX)) {
            h.found = true;
            w.ssthresh = w.cwnd;
        }
    }

    /// W_cubic(t) = C (t - K)^3 + W_max (RFC 9438 eq. 1), segments.
    #[inline]
    fn w_cubic(&self, t: f64) -> f64 {
        let d = t - self.k;
        C * d * d * d + self.origin
    }

    fn begin_epoch(&mut self, now: Time, cwnd: f64) {
        self.epoch = Opt::some(now);
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
        self.epoch = Opt::NONE;
    }

    #[cfg(test)]
    pub(crate) fn k(&self) -> f64 {
        self.k
    }
}

impl CongestionControl for Cubic {
    /// Linux `cubictcp_acked`.
    fn on_rtt_sample(&mut self, w: &mut Window, now: Time, s: &Sample) {
        if self.epoch.get().is_some_and(|e| now.saturating_since(e) < EPOCH_QUIET) {
            return; // right after a reduction: the queue is draining
        }
        let delay = s.rtt.max(Dur::from_micros(1));
        if self.delay_min.get().is_none_or(|d| d > delay) {
            self.delay_min = Opt::some(delay);
        }
        if self.hystart_on && !self.hystart.found && w.in_slow_start() && w.cwnd >= HYSTART_LOW_WINDOW * w.mss {
            self.hystart_update(w, now, s, delay);
        }
    }

    fn on_ack(&mut self, w: &mut Window, now: Time, ack: &Ack) {
        if w.in_slow_start() {
            slow_start(w, ack.acked, ack.abc_limit, self.byte_counting);
            return;
        }
        let mss = w.mss as f64;
        let cwnd = w.cwnd as f64 / mss;
        let epoch = match self.epoch.get() {
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

    fn on_rto(&mut self, w: &mut Window, now: Time, _flight: u64, nxt: u64, repeated: bool) {
        if !repeated {
            self.reduce(w);
        }
        // Linux `cubictcp_state(TCP_CA_Loss)`: bictcp_reset and bictcp_hystart_reset.
        self.delay_min = Opt::NONE;
        self.hystart.found = false;
        self.hystart.reset(now, nxt);
        self.after_rto = true;
        self.epoch = Opt::NONE;
        w.cwnd = w.mss;
    }

    fn on_recovery_exit(&mut self, w: &mut Window, _now: Time) {
        w.cwnd = w.ssthresh;
    }

    fn on_idle_restart(&mut self, w: &mut Window, iw: u64) {
        w.cwnd = w.cwnd.min(iw);
        self.epoch = Opt::NONE;
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

    /// RTT samples `rtts`, one every `gap`, in slow start at 20 segments (one round).
    fn hystart_run(on: bool, gap: Dur, rtts: &[u64]) -> (Window, Time) {
        let mut c = Cubic::new(true, on);
        let mut w = Window { cwnd: 20 * MSS, ssthresh: u64::MAX, mss: MSS };
        let mut now = Time::ZERO;
        // delay_min = 40 ms from a sample below the low window.
        let mut small = Window { cwnd: 10 * MSS, ..w };
        c.on_rtt_sample(&mut small, now, &Sample { rtt: Dur::from_millis(40), una: 1, nxt: 10_000, srtt: None });
        for (i, &ms) in rtts.iter().enumerate() {
            now += gap;
            let s = Sample { rtt: Dur::from_millis(ms), una: 20_000 + i as u64, nxt: 1_000_000, srtt: Some(Dur::from_millis(40)) };
            c.on_rtt_sample(&mut w, now, &s);
            if !w.in_slow_start() {
                break;
            }
        }
        (w, now)
    }

    #[test]
    fn hystart_ack_train_ends_slow_start_past_half_the_min_rtt() {
        // ACKs 1 ms apart at the base RTT: the train exits once it is longer than
        // (40 ms + 1 ms ack delay) / 2 = 20.5 ms after the round's first ACK.
        let (w, now) = hystart_run(true, Dur::from_millis(1), &[40; 40]);
        assert_eq!(w.ssthresh, 20 * MSS);
        assert_eq!(now, Time::ZERO + Dur::from_millis(22));
        // A gap over 2 ms breaks the train, and no delay increase: slow start goes on.
        let (w, _) = hystart_run(true, Dur::from_millis(3), &[40; 40]);
        assert!(w.in_slow_start());
        let (w, _) = hystart_run(false, Dur::from_millis(1), &[40; 40]);
        assert!(w.in_slow_start());
    }

    #[test]
    fn hystart_delay_ends_slow_start_once_the_round_min_rtt_grows_an_eighth() {
        // Threshold 40 + clamp(5, 4, 16) = 45 ms, tested from the 9th sample of the round.
        let (w, now) = hystart_run(true, Dur::from_millis(3), &[46; 20]);
        assert_eq!(w.ssthresh, 20 * MSS);
        assert_eq!(now, Time::ZERO + Dur::from_millis(27));
        // 45 ms is not past it; one low sample in the round keeps the minimum down.
        let (w, _) = hystart_run(true, Dur::from_millis(3), &[45; 20]);
        assert!(w.in_slow_start());
        let mut rtts = [60; 20];
        rtts[3] = 44;
        let (w, _) = hystart_run(true, Dur::from_millis(3), &rtts);
        assert!(w.in_slow_start());
        let (w, _) = hystart_run(false, Dur::from_millis(3), &[60; 20]);
        assert!(w.in_slow_start());
    }

    #[test]
    fn a_timeout_rearms_hystart_and_forgets_delay_min() {
        let mut c = Cubic::default();
        let mut w = Window { cwnd: 20 * MSS, ssthresh: u64::MAX, mss: MSS };
        c.hystart.found = true;
        c.delay_min = Opt::some(Dur::from_millis(40));
        c.on_rto(&mut w, Time(5), 20 * MSS, 77, false);
        assert!(!c.hystart.found && c.delay_min.is_none());
        assert_eq!((c.hystart.end_seq, c.hystart.round_start), (77, Time(5)));
    }

    #[test]
    fn timeout_restarts_curve_from_cwnd() {
        let mut c = Cubic::default();
        let mut w = Window { cwnd: 50 * MSS, ssthresh: u64::MAX, mss: MSS };
        c.on_rto(&mut w, Time::ZERO, 50 * MSS, 0, false);
        assert_eq!((w.cwnd, w.ssthresh), (MSS, 35 * MSS));
        w.cwnd = 35 * MSS; // as if slow start reached ssthresh
        c.on_ack(&mut w, Time(1), &Ack { acked: MSS, srtt: None, abc_limit: MSS });
        assert_eq!(c.k(), 0.0);
        assert!((c.w_max - 35.0).abs() < 1e-9);
    }
}
