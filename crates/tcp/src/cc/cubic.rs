//! CUBIC as Linux runs it (`net/ipv4/tcp_cubic.c`, `bictcp_update` and
//! `tcp_cong_avoid_ai`), with its module defaults: beta 717/1024, `bic_scale` 41 (C =
//! 0.4), fast convergence and TCP friendliness on. The window is counted in whole
//! packets, as Linux counts it: growth is a count of ACKed packets (`cnt`) after which
//! cwnd grows by one, and ssthresh is cwnd × 717/1024 rounded down, so a window of 7
//! leaves recovery at 4, not 4.9. The curve is Linux's fixed-point one (time in
//! 1/1024 s, one RTT ahead by `delay_min`); the Reno-friendly estimate grows by one
//! packet per 15·cwnd/8 packets ACKed (α ≈ 0.53, without RFC 9438's switch to α = 1);
//! `cnt` is recomputed at most once per jiffy, and only when cwnd changed or 1/32 s
//! passed. Slow start is Linux's `tcp_slow_start`: cwnd grows by the packets each ACK
//! delivered, up to ssthresh, the rest going to congestion avoidance. With
//! `byte_counting` off it grows by one segment per ACK instead, as ns-3's does.
//!
//! HyStart (`tcp_cubic.c` since 5.8 with 6.14's round fix, module defaults) watches each
//! round of slow start (from an ACK until snd_una passes the snd_nxt of that moment,
//! counted from the first ACK) once cwnd >= 16 segments, and sets ssthresh = cwnd when
//! either
//! - ACK train: ACKs arriving at most 2 ms apart have kept coming for longer than
//!   (delay_min + ack_delay) / 2 since the round began (the window fills the pipe), or
//! - delay: the least of the round's first 8 RTT samples (and of any later ones) exceeds
//!   delay_min + clamp(delay_min / 8, 4 ms, 16 ms) (a queue has built up).
//!
//! It runs once per connection: a timeout resets it (and delay_min), nothing else does.

use super::{slow_start, Ack, CongestionControl, Sample, Window};
use crate::jiffies::{jiffies, usecs_to_jiffies, HZ};
use crate::segment::after;
use units::{Dur, Opt, Time};

/// Linux `beta`: the window kept at a loss, in 1024ths.
const BETA: u64 = 717;
const BETA_SCALE: u64 = 1024;
/// Linux `bic_scale` × 10: C = 410 / 1024 ≈ 0.4, in `cube_rtt_scale`'s fixed point.
const CUBE_RTT_SCALE: u64 = 41 * 10;
/// Time on the curve is counted in 1/2^10 s (`BICTCP_HZ`).
const BICTCP_HZ: u32 = 10;
/// Linux `cube_factor`: 2^(10 + 3·BICTCP_HZ) / CUBE_RTT_SCALE, so that
/// K = cbrt(cube_factor × (W_max − cwnd)) is in 1/1024 s.
const CUBE_FACTOR: u64 = (1 << (10 + 3 * BICTCP_HZ)) / CUBE_RTT_SCALE;
/// Linux `beta_scale`: 8·(1024 + β)/3/(1024 − β) in integers (15), so the Reno-friendly
/// window grows by one packet per `cwnd · 15 / 8` packets ACKed.
const FRIENDLY_SCALE: u64 = 8 * (BETA_SCALE + BETA) / 3 / (BETA_SCALE - BETA);

/// Linux `hystart_low_window`: HyStart looks only from this cwnd on, segments.
const HYSTART_LOW_WINDOW: u64 = 16;
/// Linux `hystart_ack_delta_us`: ACKs at most this far apart form a train.
const HYSTART_ACK_DELTA: Dur = Dur::from_micros(2000);
/// Linux HYSTART_MIN_SAMPLES: RTT samples per round before the delay test.
const HYSTART_MIN_SAMPLES: u8 = 8;
/// Linux HYSTART_DELAY_MIN / MAX: bounds of the delay increase, delay_min / 8.
const HYSTART_DELAY_MIN: Dur = Dur::from_millis(4);
const HYSTART_DELAY_MAX: Dur = Dur::from_millis(16);
/// `sk_gso_max_size` of Linux's devices (veth, loopback: 64 KiB), for `hystart_ack_delay`.
const GSO_MAX_SIZE: u64 = 65536;

/// HyStart's state for the current round (Linux `bictcp_hystart_reset` fields), in
/// Linux's 32 bits where that keeps a connection small.
#[derive(Clone, Debug)]
struct HyStart {
    /// Slow start was left by HyStart; it stays off until a timeout.
    found: bool,
    round_start: Time,
    /// Last ACK of the current train.
    last_ack: Time,
    /// The round ends when snd_una passes this (snd_nxt when it began; wrapping).
    end_seq: u32,
    /// Least RTT of the round so far.
    curr_rtt: Opt<Dur>,
    sample_cnt: u8,
}

impl HyStart {
    fn new() -> HyStart {
        HyStart { found: false, round_start: Time::ZERO, last_ack: Time::ZERO, end_seq: 0, curr_rtt: Opt::NONE, sample_cnt: 0 }
    }

    /// A new round begins now, ending once snd_una passes `nxt`.
    fn reset(&mut self, now: Time, nxt: u64) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = nxt as u32;
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

/// ⌊∛a⌋. Linux approximates it (a table lookup and one Newton step, within 0.2%);
/// the exact root differs from it by at most a few 1/1024 s of K.
fn cube_root(a: u64) -> u64 {
    let mut x = (a as f64).cbrt() as u64;
    while x * x * x > a {
        x -= 1;
    }
    while (x + 1).pow(3) <= a {
        x += 1;
    }
    x
}

/// The curve of the current congestion-avoidance epoch (Linux `bictcp` fields, in
/// Linux's 32 bits: packet counts and 1/1024 s).
#[derive(Clone, Debug, Default)]
struct Curve {
    /// Start of the epoch, jiffies (None: the next ACK starts one).
    epoch_start: Opt<u64>,
    /// K, in 1/1024 s from the epoch start, and the plateau W_max it climbs to.
    k: u32,
    origin: u32,
    /// ACKed packets to grow cwnd by one (`cnt`), and when and at which cwnd it was
    /// last computed (`last_time`, `last_cwnd`).
    cnt: u32,
    last_time: Opt<u64>,
    last_cwnd: u32,
    /// Reno-friendly estimate: packets ACKed in the epoch not yet counted, and the
    /// window Reno would have (`ack_cnt`, `tcp_cwnd`).
    ack_cnt: u32,
    tcp_cwnd: u32,
}

/// A packet count in Linux's 32 bits.
fn pkts(n: u64) -> u32 {
    n.min(u32::MAX as u64) as u32
}

#[derive(Clone, Debug)]
pub(crate) struct Cubic {
    /// Linux counts delivered packets in slow start; off: one segment per ACK (ns-3).
    byte_counting: bool,
    /// W_max (`last_max_cwnd`), packets: 0 at the start and after a timeout.
    last_max_cwnd: u32,
    curve: Curve,
    /// Packets ACKed towards the next increment (`tp->snd_cwnd_cnt`).
    cwnd_cnt: u32,
    /// Bytes delivered short of a whole packet, carried to the next ACK.
    partial: u32,
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
            last_max_cwnd: 0,
            curve: Curve::default(),
            cwnd_cnt: 0,
            partial: 0,
            hystart_on: hystart,
            // end_seq = 0: the first ACK begins a round, as after Linux's init at snd_nxt = ISS + 1.
            hystart: HyStart::new(),
            delay_min: Opt::NONE,
        }
    }

    /// Linux `hystart_update`: one RTT sample in slow start. Rounds are counted from the
    /// first ACK, so that each begins with the first ACK of a flight; the tests run from
    /// cwnd >= 16 segments (Linux 6.14 and later: earlier kernels began counting rounds
    /// only there, mid-flight).
    fn hystart_update(&mut self, w: &mut Window, now: Time, s: &Sample, delay: Dur) {
        let delay_min = self.delay_min.get().unwrap_or(delay);
        let h = &mut self.hystart;
        if after(s.una as u32, h.end_seq) {
            h.reset(now, s.nxt);
        }
        if w.cwnd < HYSTART_LOW_WINDOW * w.mss {
            return;
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

    /// Whole packets in `bytes` delivered, the remainder carried to the next ACK.
    fn packets(&mut self, bytes: u64, mss: u64) -> u64 {
        let b = bytes + self.partial as u64;
        self.partial = (b % mss) as u32;
        b / mss
    }

    /// Linux `bictcp_update`: the packets to ACK per increment of cwnd (packets) now.
    fn update(&mut self, cwnd: u32, acked: u32, now: Time) {
        let c = &mut self.curve;
        let j = jiffies(now);
        c.ack_cnt += acked;
        if c.last_cwnd == cwnd && c.last_time.get().is_some_and(|t| j - t <= HZ / 32) {
            return;
        }
        // The curve is evaluated at most once per jiffy; a reduction (epoch_start
        // cleared) always forces it.
        if c.epoch_start.is_none() || c.last_time != Opt::some(j) {
            c.last_cwnd = cwnd;
            c.last_time = Opt::some(j);
            let epoch = match c.epoch_start.get() {
                Some(e) => e,
                None => {
                    c.ack_cnt = acked;
                    c.tcp_cwnd = cwnd;
                    (c.k, c.origin) = if self.last_max_cwnd <= cwnd {
                        (0, cwnd)
                    } else {
                        (pkts(cube_root(CUBE_FACTOR * (self.last_max_cwnd - cwnd) as u64)), self.last_max_cwnd)
                    };
                    c.epoch_start = Opt::some(j);
                    j
                }
            };
            // Where the curve will be one minimum RTT from now, in 1/1024 s.
            let ahead = usecs_to_jiffies(self.delay_min.get().unwrap_or(Dur::ZERO));
            let t = ((j - epoch + ahead) << BICTCP_HZ) / HZ;
            let (k, origin, cw) = (c.k as u64, c.origin as u64, cwnd as u64);
            let offs = t.abs_diff(k) as u128;
            let delta = ((CUBE_RTT_SCALE as u128 * offs * offs * offs) >> (10 + 3 * BICTCP_HZ)) as u64;
            let target = if t < k { origin.saturating_sub(delta) } else { origin + delta };
            c.cnt = pkts(if target > cw { cw / (target - cw) } else { 100 * cw });
            // Before the first loss, grow at least 5% per RTT.
            if self.last_max_cwnd == 0 {
                c.cnt = c.cnt.min(20);
            }
        }
        // TCP friendliness: never grow more slowly than Reno would.
        let per_packet = pkts((cwnd as u64 * FRIENDLY_SCALE) >> 3);
        if per_packet > 0 && c.ack_cnt > per_packet {
            let n = (c.ack_cnt - 1) / per_packet;
            c.ack_cnt -= n * per_packet;
            c.tcp_cwnd += n;
        }
        if c.tcp_cwnd > cwnd {
            c.cnt = c.cnt.min(cwnd / (c.tcp_cwnd - cwnd));
        }
        // At most one packet per two ACKed: 1.5× per RTT.
        c.cnt = c.cnt.max(2);
    }

    /// Linux `tcp_cong_avoid_ai`: one packet more per `cnt` packets ACKed.
    fn avoid(&mut self, w: &mut Window, acked: u32) {
        let cnt = self.curve.cnt;
        if self.cwnd_cnt >= cnt {
            // Credit earned at a larger cnt: spend it gently.
            self.cwnd_cnt = 0;
            w.cwnd += w.mss;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= cnt {
            let n = self.cwnd_cnt / cnt;
            self.cwnd_cnt -= n * cnt;
            w.cwnd += n as u64 * w.mss;
        }
    }

    /// Linux `cubictcp_recalc_ssthresh`: W_max with fast convergence, ssthresh =
    /// cwnd × β in whole packets, at least 2; the epoch ends.
    fn reduce(&mut self, w: &mut Window) {
        let cwnd = w.cwnd / w.mss;
        self.curve.epoch_start = Opt::NONE;
        let last_max = self.last_max_cwnd as u64;
        self.last_max_cwnd = pkts(if cwnd < last_max { cwnd * (BETA_SCALE + BETA) / (2 * BETA_SCALE) } else { cwnd });
        w.ssthresh = (cwnd * BETA / BETA_SCALE).max(2) * w.mss;
        self.cwnd_cnt = 0;
    }

    #[cfg(test)]
    pub(crate) fn k(&self) -> u32 {
        self.curve.k
    }
}

impl CongestionControl for Cubic {
    /// Linux `cubictcp_acked`.
    fn on_rtt_sample(&mut self, w: &mut Window, now: Time, s: &Sample) {
        if self.curve.epoch_start.get().is_some_and(|e| jiffies(now) - e < HZ) {
            return; // right after a reduction: the queue is draining
        }
        let delay = s.rtt.max(Dur::from_micros(1));
        if self.delay_min.get().is_none_or(|d| d > delay) {
            self.delay_min = Opt::some(delay);
        }
        if self.hystart_on && !self.hystart.found && w.in_slow_start() {
            self.hystart_update(w, now, s, delay);
        }
    }

    /// Linux `cubictcp_cong_avoid` (the caller checks that the sender is cwnd-limited).
    fn on_ack(&mut self, w: &mut Window, now: Time, ack: &Ack) {
        let mss = w.mss;
        let mut acked = self.packets(ack.delivered, mss);
        if w.in_slow_start() {
            if !self.byte_counting {
                slow_start(w, ack.acked, ack.abc_limit, false);
                return;
            }
            // Linux `tcp_slow_start`: up to ssthresh; what is left grows the window
            // in congestion avoidance.
            let before = w.cwnd;
            w.cwnd = (w.cwnd + acked * mss).min(w.ssthresh.max(before));
            acked -= ((w.cwnd - before) / mss).min(acked);
            if acked == 0 {
                return;
            }
        }
        self.update(pkts(w.cwnd / mss), pkts(acked), now);
        self.avoid(w, pkts(acked));
    }

    fn on_loss(&mut self, w: &mut Window, _now: Time, _flight: u64) {
        self.reduce(w);
    }

    fn on_rto(&mut self, w: &mut Window, now: Time, _flight: u64, nxt: u64, repeated: bool) {
        if !repeated {
            self.reduce(w);
        }
        // Linux `cubictcp_state(TCP_CA_Loss)`: bictcp_reset (W_max and delay_min
        // forgotten: the next epoch starts its curve at cwnd) and bictcp_hystart_reset.
        self.last_max_cwnd = 0;
        self.curve = Curve::default();
        self.cwnd_cnt = 0;
        self.delay_min = Opt::NONE;
        self.hystart.found = false;
        self.hystart.reset(now, nxt);
        w.cwnd = w.mss;
    }

    fn on_recovery_exit(&mut self, w: &mut Window, _now: Time) {
        w.cwnd = w.ssthresh;
    }

    /// Linux's CUBIC ignores `CA_EVENT_CWND_RESTART`: its curve carries on, shifted
    /// by the idle time when data leaves again ([`Self::on_tx_start`]).
    fn on_idle_restart(&mut self, _w: &mut Window) {}

    /// Linux `cubictcp_cwnd_event(CA_EVENT_TX_START)`: an application-limited
    /// pause does not count as time on the curve, so the window does not leap
    /// when sending resumes.
    fn on_tx_start(&mut self, now: Time, last_send: Time) {
        let j = jiffies(now);
        let idle = j.saturating_sub(jiffies(last_send));
        if let Some(e) = self.curve.epoch_start.get().filter(|_| idle > 0) {
            self.curve.epoch_start = Opt::some((e + idle).min(j));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use units::Dur;

    const MSS: u64 = 1000;

    fn ack(packets: u64) -> Ack {
        Ack { acked: packets * MSS, delivered: packets * MSS, abc_limit: 2 * MSS }
    }

    /// One RTT of ACKs, one per segment of the current window, evenly spaced.
    fn run_rtt(c: &mut Cubic, w: &mut Window, now: &mut Time, rtt: Dur) {
        let n = (w.cwnd / MSS).max(1);
        let gap = Dur(rtt.0 / n);
        for _ in 0..n {
            *now += gap;
            c.on_ack(w, *now, &ack(1));
        }
    }

    /// A connection in congestion avoidance at `cwnd` packets after a loss at `w_max`.
    fn after_loss(w_max: u64) -> (Cubic, Window) {
        let mut c = Cubic::default();
        let mut w = Window { cwnd: w_max * MSS, ssthresh: u64::MAX, mss: MSS };
        c.on_loss(&mut w, Time::ZERO, 0);
        c.on_recovery_exit(&mut w, Time::ZERO);
        (c, w)
    }

    #[test]
    fn slow_start_grows_by_the_segments_acked_or_one_per_ack_without_byte_counting() {
        // Delayed ACKs of two segments each over a window of 10: byte
        // counting doubles it in a round, per-ACK growth takes it to 15.
        for (byte_counting, after) in [(true, 20), (false, 15)] {
            let mut c = Cubic::new(byte_counting, false);
            let mut w = Window { cwnd: 10 * MSS, ssthresh: u64::MAX, mss: MSS };
            for i in 0..5 {
                c.on_ack(&mut w, Time::ZERO + Dur::from_millis(i), &ack(2));
            }
            assert_eq!(w.cwnd, after * MSS, "byte counting {byte_counting}");
        }
    }

    #[test]
    fn ssthresh_is_cwnd_times_717_over_1024_in_whole_packets() {
        for (cwnd, ss) in [(1000, 700), (7, 4), (8, 5), (2, 2), (1, 2)] {
            let mut c = Cubic::default();
            let mut w = Window { cwnd: cwnd * MSS, ssthresh: u64::MAX, mss: MSS };
            c.on_loss(&mut w, Time::ZERO, 0);
            assert_eq!(w.ssthresh, ss * MSS, "cwnd {cwnd}");
        }
    }

    #[test]
    fn fast_convergence_lowers_w_max() {
        let (mut c, mut w) = after_loss(100);
        assert_eq!(c.last_max_cwnd, 100);
        // Second loss below the previous W_max: W_max = 80 × (1024 + 717) / 2048 = 68.
        w.cwnd = 80 * MSS;
        c.on_loss(&mut w, Time::ZERO, 0);
        assert_eq!(c.last_max_cwnd, 68);
        assert_eq!(w.ssthresh, 56 * MSS);
    }

    #[test]
    fn k_is_the_time_to_climb_back_to_w_max_in_1024ths_of_a_second() {
        // W_max 100, cwnd 70: K = ⌊∛(⌊2^40 / 410⌋ × 30)⌋ = 4316 (4.215 s; ∛(30 / 0.4) = 4.217 s).
        let (mut c, mut w) = after_loss(100);
        assert_eq!(w.cwnd, 70 * MSS);
        c.on_ack(&mut w, Time(1), &ack(1));
        assert_eq!((c.k(), c.curve.origin), (4316, 100));
        assert_eq!(CUBE_FACTOR, 2_681_735_677);
        assert_eq!(FRIENDLY_SCALE, 15);
    }

    #[test]
    fn cwnd_follows_the_cubic_curve() {
        // W_max = 1000 packets, RTT 100 ms: the curve is far above Reno's pace. cnt
        // aims at the curve one minimum RTT ahead and reaches it an RTT later, so
        // cwnd(t) tracks W(t) = C (t - K)^3 + W_max.
        let (mut c, mut w) = after_loss(1000);
        let rtt = Dur::from_millis(100);
        c.delay_min = Opt::some(rtt);
        let mut now = Time::ZERO;
        c.on_ack(&mut w, now, &ack(1));
        let k = c.k();
        let mut max_err: f64 = 0.0;
        while now.as_secs_f64() < 1.5 * k as f64 / 1024.0 {
            run_rtt(&mut c, &mut w, &mut now, rtt);
            let t = now.as_secs_f64() - k as f64 / 1024.0;
            let expect = 0.4 * t.powi(3) + 1000.0;
            let got = (w.cwnd / MSS) as f64;
            max_err = max_err.max((got - expect).abs() / expect);
        }
        assert!(max_err < 0.01, "cwnd strays {:.2}% from W(t)", max_err * 100.0);
        assert!(w.cwnd > 1002 * MSS, "past K the window is above W_max: {}", w.cwnd / MSS);
    }

    #[test]
    fn on_a_flat_curve_the_reno_estimate_gains_a_packet_per_fifteen_eighths_of_a_window() {
        // W_max = cwnd = 14 and an ACK every 32 ms (so cnt is recomputed at each: more
        // than HZ/32 = 7 jiffies apart). The curve, C t³ above 14, stays below 15 for
        // 1.357 s (42 ACKs); Reno's estimate gains one packet per ⌊14 × 15 / 8⌋ = 26
        // packets ACKed beyond the first, which lets cwnd spend the credit it gathered:
        // 15 at the 27th packet, and no more until the curve reaches 16.
        let mut c = Cubic { last_max_cwnd: 14, ..Cubic::default() };
        let mut w = Window { cwnd: 14 * MSS, ssthresh: 14 * MSS, mss: MSS };
        let mut now = Time::ZERO;
        let mut at = vec![];
        for n in 1..=42 {
            now += Dur::from_millis(32);
            let before = w.cwnd;
            c.on_ack(&mut w, now, &ack(1));
            if w.cwnd != before {
                at.push((n, w.cwnd / MSS));
            }
        }
        assert_eq!(at, [(27, 15)]);
    }

    #[test]
    fn before_any_loss_and_after_a_timeout_the_window_grows_at_least_5_percent_per_rtt() {
        // No W_max: the curve starts flat at cwnd, and cnt is capped at 20.
        let mut c = Cubic::default();
        let mut w = Window { cwnd: 100 * MSS, ssthresh: 100 * MSS, mss: MSS };
        let mut now = Time::ZERO;
        run_rtt(&mut c, &mut w, &mut now, Dur::from_millis(1));
        assert_eq!(w.cwnd, 105 * MSS);
        c.on_rto(&mut w, now, 100 * MSS, 0, false);
        assert_eq!((w.cwnd, w.ssthresh, c.last_max_cwnd), (MSS, 73 * MSS, 0));
    }

    #[test]
    fn slow_start_grows_by_the_packets_delivered_and_passes_the_rest_to_avoidance() {
        let mut c = Cubic::default();
        let mut w = Window { cwnd: 10 * MSS, ssthresh: 12 * MSS, mss: MSS };
        // A stretch ACK delivering 5 packets: 2 fill slow start, 3 count in avoidance.
        c.on_ack(&mut w, Time(1), &ack(5));
        assert_eq!(w.cwnd, 12 * MSS);
        assert_eq!(c.cwnd_cnt, 3);
        // Delivered bytes short of a packet are carried to the next ACK.
        c.on_ack(&mut w, Time(2), &Ack { acked: MSS / 2, delivered: MSS / 2, abc_limit: 2 * MSS });
        assert_eq!(c.cwnd_cnt, 3);
        c.on_ack(&mut w, Time(3), &Ack { acked: MSS / 2, delivered: MSS / 2, abc_limit: 2 * MSS });
        assert_eq!(c.cwnd_cnt, 4);
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
    fn an_idle_pause_shifts_the_epoch() {
        // An epoch that began at jiffy 250 (1 s); sending last at 2 s and again at
        // 3.5 s: the 375 idle jiffies move the start to 625, so the curve stands
        // where it stood when the sender paused. A pause longer than the epoch
        // itself only brings its start to now.
        let mut c = Cubic::default();
        c.curve.epoch_start = Opt::some(250);
        c.on_tx_start(Time::from_secs_f64(3.5), Time::from_secs_f64(2.0));
        assert_eq!(c.curve.epoch_start.get(), Some(625));
        c.curve.epoch_start = Opt::some(875);
        c.on_tx_start(Time::from_secs_f64(10.0), Time::from_secs_f64(1.0));
        assert_eq!(c.curve.epoch_start.get(), Some(2500));
        // No epoch (slow start, or just after a reduction): nothing to shift.
        c.curve.epoch_start = Opt::NONE;
        c.on_tx_start(Time::from_secs_f64(20.0), Time::from_secs_f64(10.0));
        assert_eq!(c.curve.epoch_start.get(), None);
    }

    #[test]
    fn timeout_restarts_curve_from_cwnd() {
        let mut c = Cubic::default();
        let mut w = Window { cwnd: 50 * MSS, ssthresh: u64::MAX, mss: MSS };
        c.on_rto(&mut w, Time::ZERO, 50 * MSS, 0, false);
        assert_eq!((w.cwnd, w.ssthresh), (MSS, 35 * MSS));
        w.cwnd = 35 * MSS; // as if slow start reached ssthresh
        c.on_ack(&mut w, Time(1), &ack(1));
        assert_eq!((c.k(), c.curve.origin, c.last_max_cwnd), (0, 35, 0));
    }
}
