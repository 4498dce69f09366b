//! RED (Floyd & Jacobson 1993) as ns-2 2.35's Queue/RED computes it: the
//! average queue at each arrival, the drop probability between the
//! thresholds (and, gentle, up to twice the upper one), drops spread
//! evenly by the count since the last one, byte mode, idle-time decay,
//! ECN marking (below `mark_p_` with `use_mark_p_`) and adaptive RED.
//!
//! [`RedEstimator`] holds the average, its decay over idle time, the curve
//! and the count, apart from any queue, so that disciplines built on RED
//! (RIO, one per drop precedence) reuse it. How the count spaces drops is
//! its [`RedRule`]: ns-2's Queue/RED, Floyd and Jacobson's algorithm as
//! their paper gives it, or ns-2's dsRED.

use super::{Admit, AqmStats, Backlog, Discipline, QueueLimit};
use crate::element::DropReason;
use crate::packet::Packet;
use units::{Dur, Rate, Rng, Time};

/// A RED curve in the paper's terms: thresholds in packets, the drop
/// probability at the upper one, the average's weight (ns-2 dsRED's
/// `configQ`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedCurve {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    /// The average's weight (w_q).
    pub w_q: f64,
}

/// How RED decides between its thresholds, and so how its count spaces
/// the drops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedRule {
    /// ns-2 2.35's Queue/RED: the arrival that first finds the average
    /// above `thresh` starts the count and is kept, a queue of one packet
    /// is never dropped from, `wait_`, gentle and byte modes.
    Queue,
    /// Floyd and Jacobson's algorithm (1993): count = -1 while the average
    /// is at most min_th; above it, count + 1 and p_a = p_b / (1 - count·p_b),
    /// 1 once count·p_b reaches 1; a drop sets the count to 0; forced past
    /// max_th.
    FloydJacobson,
    /// ns-2 2.35 dsRED's (diffserv/dsredq.cc): Floyd and Jacobson's
    /// without the cap, so once count·p_b passes 1 p_a is negative and no
    /// early drop comes until the average leaves (min_th, max_th].
    Dsred,
}

/// RED's parameters as ns-2's Queue/RED names them (`thresh_` is
/// `thresh`, ...), with ns-2 2.35's defaults.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedParams {
    /// `thresh_`, `maxthresh_`: the thresholds on the average, in packets
    /// (of `mean_pktsize` bytes when the queue is measured in bytes). 0
    /// asks for ns-2's automatic setting: `thresh` = max(5, half the
    /// packets the link sends in 5 ms), `maxthresh` = 3 · `thresh`.
    pub thresh: f64,
    pub maxthresh: f64,
    /// `q_weight_`: the average's weight. 0, -1 and -2 ask for ns-2's
    /// automatic settings (1 - exp(-1/C), 1 - exp(-1/(10·RTT·C)) with RTT
    /// three times the link's delay and transmission time, at least 0.1 s,
    /// and 1 - exp(-10/C), for C the link's packets per second).
    pub q_weight: f64,
    /// `linterm_`: 1/max_p, max_p the drop probability at `maxthresh`.
    pub linterm: f64,
    /// `gentle_`: between `maxthresh` and twice it, the probability rises
    /// from max_p to 1 instead of jumping to 1.
    pub gentle: bool,
    /// `bytes_`: the probability scales with the packet's size over
    /// `mean_pktsize`, and the count runs in bytes.
    pub bytes: bool,
    /// `queue_in_bytes_`: the queue and its average are measured in bytes.
    pub queue_in_bytes: bool,
    /// `mean_pktsize_`: bytes of an average packet.
    pub mean_pktsize: u32,
    /// `wait_`: wait between drops (p_a = p_b / (2 - count·p_b), 0 until
    /// count·p_b reaches 1).
    pub wait: bool,
    /// `setbit_`: mark ECN-capable packets (CE) instead of dropping them
    /// early.
    pub setbit: bool,
    /// `use_mark_p_`: no forced drops past `maxthresh` (twice it, gentle):
    /// there the probability is 1 and the drop an early one; and a packet is
    /// marked instead of dropped only while p_b is below `mark_p`.
    pub use_mark_p: bool,
    /// `mark_p_`: the probability below which `use_mark_p` marks.
    pub mark_p: f64,
    /// `adaptive_`: adaptive RED (Floyd, Gummadi, Shenker 2001), max_p moved
    /// every `interval` to keep the average in the middle of the thresholds.
    pub adaptive: bool,
    /// `alpha_`: max_p's additive increase (at most a quarter of max_p).
    pub alpha: f64,
    /// `beta_`: max_p's multiplicative decrease.
    pub beta: f64,
    /// `interval_`: the least time between two changes of max_p.
    pub interval: Dur,
    /// `targetdelay_`: the delay the automatic `thresh` is set for.
    pub targetdelay: Dur,
    /// `top_`, `bottom_`: the range max_p is kept in; `bottom` 0 asks for
    /// ns-2's min(0.01, 1/W), W the packets of 1000 bytes the link sends
    /// in 100 ms.
    pub top: f64,
    pub bottom: f64,
}

impl Default for RedParams {
    fn default() -> RedParams {
        RedParams {
            thresh: 0.0,
            maxthresh: 0.0,
            q_weight: -1.0,
            linterm: 10.0,
            gentle: true,
            bytes: true,
            queue_in_bytes: true,
            mean_pktsize: 500,
            wait: true,
            setbit: false,
            use_mark_p: true,
            mark_p: 0.1,
            adaptive: false,
            alpha: 0.01,
            beta: 0.9,
            interval: Dur::from_millis(500),
            targetdelay: Dur::from_millis(5),
            top: 0.5,
            bottom: 0.0,
        }
    }
}

impl RedParams {
    /// The estimator these parameters make for a link of `rate` and
    /// propagation `delay` (what the automatic settings need). As in
    /// ns-2, the rate is taken once: a link whose rate changes keeps the
    /// settings of its first.
    pub fn estimator(&self, rate: Rate, delay: Dur) -> RedEstimator {
        // ns-2's "packet time constant": average packets per second.
        let ptc = rate.as_f64() / (8.0 * self.mean_pktsize as f64);
        let q_w = match self.q_weight {
            0.0 => 1.0 - (-1.0 / ptc).exp(),
            -1.0 => {
                let rtt = (3.0 * (delay.as_secs_f64() + 1.0 / ptc)).max(0.1);
                1.0 - (-1.0 / (10.0 * rtt * ptc)).exp()
            }
            -2.0 => 1.0 - (-10.0 / ptc).exp(),
            w => w,
        };
        let th_min = if self.thresh == 0.0 { (self.targetdelay.as_secs_f64() * ptc / 2.0).max(5.0) } else { self.thresh };
        let th_max = if self.maxthresh == 0.0 { 3.0 * th_min } else { self.maxthresh };
        let scale = if self.queue_in_bytes { self.mean_pktsize as f64 } else { 1.0 };
        RedEstimator {
            th_min: th_min * scale,
            th_max: th_max * scale,
            q_w,
            max_p: 1.0 / self.linterm,
            gentle: self.gentle,
            bytes: self.bytes,
            queue_in_bytes: self.queue_in_bytes,
            mean_pktsize: self.mean_pktsize,
            wait: self.wait,
            ptc,
            rule: RedRule::Queue,
            use_mark_p: self.use_mark_p,
            mark_p: self.mark_p,
            gentle_max_p: 1.0 / self.linterm,
            ave: 0.0,
            count: 0,
            count_bytes: 0,
            old: false,
        }
    }

    /// Adaptive RED's controller for a link of `rate`, if `adaptive`.
    pub fn adaptive(&self, rate: Rate) -> Option<AdaptiveRed> {
        let bottom = if self.bottom == 0.0 { 0.01f64.min(80_000.0 / rate.as_f64()) } else { self.bottom };
        let a = AdaptiveRed { alpha: self.alpha, beta: self.beta, interval: self.interval, top: self.top, bottom, lastset: Time::ZERO };
        self.adaptive.then_some(a)
    }
}

/// Adaptive RED (Floyd, Gummadi and Shenker, "Adaptive RED: An Algorithm
/// for Increasing the Robustness of RED's Active Queue Management", 2001)
/// as ns-2 2.35's `REDQueue::updateMaxP`: at an arrival at least
/// `interval` after the last change, max_p grows by min(alpha, max_p/4)
/// while the average is above the upper 40% of the thresholds' range
/// (and max_p below `top`), and shrinks by the factor beta while it is
/// below the lower 40% (and max_p above `bottom`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdaptiveRed {
    pub alpha: f64,
    pub beta: f64,
    pub interval: Dur,
    pub top: f64,
    pub bottom: f64,
    /// When max_p last changed.
    lastset: Time,
}

impl AdaptiveRed {
    /// After the average moved at `now`.
    pub fn update(&mut self, now: Time, est: &mut RedEstimator) {
        if now <= self.lastset + self.interval {
            return;
        }
        let (min, max) = est.thresholds();
        let part = 0.4 * (max - min);
        let (ave, p) = (est.average(), est.max_p);
        if ave < min + part && p > self.bottom {
            est.max_p = p * self.beta;
            self.lastset = now;
        } else if ave > max - part && self.top > p {
            est.max_p = p + self.alpha.min(0.25 * p);
            self.lastset = now;
        }
    }
}

/// What RED decides for an arriving packet, before the queue's limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedVerdict {
    Pass,
    /// A random drop (or mark) between the thresholds.
    Early,
    /// The average is past `maxthresh` (twice it, gentle).
    Forced,
}

/// RED's average queue and drop decision, as ns-2's REDQueue keeps them.
#[derive(Clone, Debug)]
pub struct RedEstimator {
    /// Thresholds in the queue's unit (packets or bytes).
    th_min: f64,
    th_max: f64,
    q_w: f64,
    max_p: f64,
    gentle: bool,
    bytes: bool,
    queue_in_bytes: bool,
    mean_pktsize: u32,
    wait: bool,
    /// Packets of `mean_pktsize` the link sends per second: how many an
    /// idle period counts as.
    ptc: f64,
    rule: RedRule,
    /// ns-2's `use_mark_p_` and `mark_p_`.
    use_mark_p: bool,
    mark_p: f64,
    /// max_p as the gentle slope above maxthresh was set from: ns-2 sets it
    /// once, so adaptive RED's changes of max_p leave it.
    gentle_max_p: f64,
    ave: f64,
    /// Packets (and bytes) since the last drop; -1 below min_th with the
    /// paper's rule.
    count: i64,
    count_bytes: u64,
    /// Whether the last arrival found the average above `thresh`.
    old: bool,
}

impl RedEstimator {
    /// RED on `curve`, in packets, with `rule`; `ptc` packets a second is
    /// what an idle second counts as (ns-2: the link's rate over 8 ×
    /// mean_pktsize).
    pub fn from_curve(curve: RedCurve, ptc: f64, rule: RedRule) -> RedEstimator {
        RedEstimator {
            th_min: curve.min_th,
            th_max: curve.max_th,
            q_w: curve.w_q,
            max_p: curve.max_p,
            gentle: false,
            bytes: false,
            queue_in_bytes: false,
            mean_pktsize: 1,
            wait: false,
            ptc,
            rule,
            use_mark_p: false,
            mark_p: 1.0,
            gentle_max_p: curve.max_p,
            ave: 0.0,
            count: -1,
            count_bytes: 0,
            old: false,
        }
    }

    /// The queue as RED measures it: packets, or bytes with `queue_in_bytes_`.
    #[inline]
    pub fn measure(&self, packets: usize, bytes: u64) -> f64 {
        if self.queue_in_bytes {
            bytes as f64
        } else {
            packets as f64
        }
    }

    /// A packet arrives and finds `q` waiting (in the queue's unit), the
    /// link having been idle for `idle` if it was: the average moves
    /// towards `q` with weight `q_weight`, after decaying as if
    /// ⌊idle · C⌋ packets had found the queue empty. Returns the average.
    pub fn arrive(&mut self, q: f64, idle: Option<Dur>) -> f64 {
        self.arrive_adding(self.q_w * q, idle)
    }

    /// [`RedEstimator::arrive`] with the average moved by `added` instead
    /// of q_weight · q (ns-2 dsRED's RIO-C adds Σ w_j·q_j over the lower
    /// precedences, each backlog with its own precedence's weight).
    pub fn arrive_adding(&mut self, added: f64, idle: Option<Dur>) -> f64 {
        let m = idle.map_or(0, |d| (self.ptc * d.as_secs_f64()) as i32);
        self.ave = self.ave * (1.0 - self.q_w).powi(m.saturating_add(1)) + added;
        self.ave
    }

    /// The average queue, in the queue's unit.
    pub fn average(&self) -> f64 {
        self.ave
    }

    #[cfg(test)]
    pub(crate) fn set_average(&mut self, ave: f64) {
        self.ave = ave;
    }

    /// The thresholds in the queue's unit.
    pub fn thresholds(&self) -> (f64, f64) {
        (self.th_min, self.th_max)
    }

    pub fn weight(&self) -> f64 {
        self.q_w
    }

    /// max_p: the probability at the upper threshold (adaptive RED moves it).
    pub fn max_p(&self) -> f64 {
        self.max_p
    }

    /// Whether an early decision may mark an ECN-capable packet rather than
    /// drop it: always, or with `use_mark_p` while p_b is below `mark_p`.
    pub fn may_mark(&self) -> bool {
        !self.use_mark_p || self.probability() < self.mark_p
    }

    /// p_b: the drop probability the average gives, before the count.
    pub fn probability(&self) -> f64 {
        let ave = self.ave;
        let p = if ave < self.th_min {
            0.0
        } else if ave >= self.th_max && self.gentle {
            // From max_p at maxthresh to 1 at twice maxthresh.
            (1.0 - self.gentle_max_p) * ave / self.th_max + 2.0 * self.gentle_max_p - 1.0
        } else if ave >= self.th_max {
            1.0
        } else {
            self.ramp()
        };
        p.min(1.0)
    }

    /// max_p, scaled by where the average lies between the thresholds.
    fn ramp(&self) -> f64 {
        self.max_p * (self.ave - self.th_min) / (self.th_max - self.th_min)
    }

    /// p_a: p_b spread by the count since the last drop, so that drops
    /// come at even intervals rather than geometric ones; scaled by the
    /// packet's size in byte mode.
    fn spread(&self, p: f64, len: u32) -> f64 {
        let count = if self.bytes { (self.count_bytes / self.mean_pktsize as u64) as f64 } else { self.count as f64 };
        let cp = count * p;
        let mut p = if self.wait {
            match cp {
                cp if cp < 1.0 => 0.0,
                cp if cp < 2.0 => p / (2.0 - cp),
                _ => 1.0,
            }
        } else if cp < 1.0 {
            p / (1.0 - cp)
        } else {
            1.0
        };
        if self.bytes && p < 1.0 {
            p = p * len as f64 / self.mean_pktsize as f64;
        }
        p.min(1.0)
    }

    /// RED's decision for a packet of `len` bytes that found `q` waiting,
    /// after [`RedEstimator::arrive`]. The count restarts at an early or
    /// forced drop (or mark); a drop for another reason (the queue's
    /// limit) should restart it too ([`RedEstimator::dropped`]).
    /// With the paper's or dsRED's rule `q` and `len` play no part.
    pub fn decide(&mut self, q: f64, len: u32, rng: &mut Rng) -> RedVerdict {
        match self.rule {
            RedRule::Queue => self.decide_queue(q, len, rng),
            RedRule::FloydJacobson | RedRule::Dsred => self.decide_paper(rng),
        }
    }

    /// Floyd and Jacobson's decision (capped or, dsRED's, not).
    fn decide_paper(&mut self, rng: &mut Rng) -> RedVerdict {
        if self.ave <= self.th_min {
            self.count = -1;
            return RedVerdict::Pass;
        }
        if self.ave > self.th_max {
            self.count = 0;
            return RedVerdict::Forced;
        }
        let pb = self.ramp();
        self.count += 1;
        let cp = self.count as f64 * pb;
        let pa = if self.rule == RedRule::FloydJacobson && cp >= 1.0 { 1.0 } else { pb / (1.0 - cp) };
        if rng.uniform() < pa {
            self.count = 0;
            RedVerdict::Early
        } else {
            RedVerdict::Pass
        }
    }

    fn decide_queue(&mut self, q: f64, len: u32, rng: &mut Rng) -> RedVerdict {
        self.count += 1;
        self.count_bytes += len as u64;
        // A queue of at most one packet (one byte) is never dropped from.
        if self.ave < self.th_min || q <= 1.0 {
            self.old = false;
            return RedVerdict::Pass;
        }
        let forced_at = if self.gentle { 2.0 * self.th_max } else { self.th_max };
        if self.ave >= forced_at && !self.use_mark_p {
            self.dropped();
            return RedVerdict::Forced;
        }
        // With use_mark_p, past forced_at p is 1: every arrival goes (after
        // one that starts the count) as an early drop.
        if !self.old {
            // The average has just crossed thresh: start counting.
            self.old = true;
            self.count = 1;
            self.count_bytes = len as u64;
            return RedVerdict::Pass;
        }
        let p = self.spread(self.probability(), len);
        if rng.uniform() < p {
            self.dropped();
            RedVerdict::Early
        } else {
            RedVerdict::Pass
        }
    }

    /// A packet was dropped: the count since the last drop restarts.
    pub fn dropped(&mut self) {
        self.count = 0;
        self.count_bytes = 0;
    }
}

/// RED in front of a queue of `limit`: a [`Discipline`].
#[derive(Clone, Debug)]
pub struct Red {
    est: RedEstimator,
    limit: QueueLimit,
    setbit: bool,
    adaptive: Option<AdaptiveRed>,
    rng: Rng,
    stats: AqmStats,
}

impl Red {
    pub fn new(est: RedEstimator, limit: QueueLimit, setbit: bool, rng: Rng) -> Red {
        Red { est, limit, setbit, adaptive: None, rng, stats: AqmStats::default() }
    }

    /// With adaptive RED's controller of max_p, if any.
    pub fn with_adaptive(mut self, adaptive: Option<AdaptiveRed>) -> Red {
        self.adaptive = adaptive;
        self
    }

    pub fn estimator(&self) -> &RedEstimator {
        &self.est
    }
}

impl Discipline for Red {
    fn admit(&mut self, now: Time, pkt: &mut Packet, q: &Backlog) -> Admit {
        let qlen = self.est.measure(q.packets, q.bytes);
        let ave = self.est.arrive(qlen, q.idle_since.map(|t| now.saturating_since(t)));
        if let Some(a) = &mut self.adaptive {
            a.update(now, &mut self.est);
        }
        self.stats.estimate_sum += ave;
        self.stats.arrivals += 1;
        let verdict = self.est.decide(qlen, pkt.len, &mut self.rng);
        // A packet that would wait and finds the queue full overflows,
        // whatever RED said (ns-2 calls this a forced drop too).
        if q.wait > Dur::ZERO && !self.limit.admits(q.packets, q.bytes, pkt.len) {
            self.est.dropped();
            return Admit::Drop(DropReason::QueueFull);
        }
        match verdict {
            RedVerdict::Pass => Admit::Accept,
            RedVerdict::Early if self.setbit && pkt.ecn_capable && self.est.may_mark() => {
                pkt.ce = true;
                self.stats.ecn_marks += 1;
                Admit::Accept
            }
            RedVerdict::Early => Admit::Drop(DropReason::Early),
            RedVerdict::Forced => Admit::Drop(DropReason::Forced),
        }
    }

    fn stats(&self) -> AqmStats {
        self.stats
    }
}
