//! PIE (RFC 8033): a drop probability that a proportional-integral
//! controller moves every `t_update` towards holding the queue delay at
//! `target`, applied at arrival.
//!
//! Sans-IO: the periodic update runs lazily when a packet arrives, once
//! per `t_update` boundary passed since the last. Between arrivals the
//! queue only drains, so the delay at a past boundary is known exactly:
//! what an arrival then would have waited.

use super::{Admit, AqmStats, Backlog, Discipline, QueueLimit};
use crate::element::DropReason;
use crate::packet::Packet;
use units::{Dur, Rng, Time};

/// PIE's parameters, as RFC 8033 names them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PieParams {
    /// QDELAY_REF: the target queue delay (default 15 ms).
    pub target: Dur,
    /// T_UPDATE: how often the probability is updated (default 15 ms).
    pub t_update: Dur,
    /// alpha and beta, per second (defaults 0.125 and 1.25), before the
    /// auto-tuning that scales them down while the probability is small.
    pub alpha: f64,
    pub beta: f64,
    /// MAX_BURST: how long a burst into an uncongested queue passes
    /// without drops (default 150 ms).
    pub max_burst: Dur,
    /// MEAN_PKTSIZE: a queue of at most two of these is never dropped
    /// from (default 1500 bytes).
    pub mean_pktsize: u32,
    /// Mark ECN-capable packets (CE) instead of dropping them while the
    /// probability is at most 10% (RFC 8033's mark_ecnth).
    pub ecn: bool,
    /// RFC 8033's de-randomisation (section 5.1, which Linux's PIE
    /// always applies): drop probabilities accumulate between drops, so
    /// that no drop comes before they add up to 0.85 and one always
    /// comes once they reach 8.5.
    pub derandomize: bool,
}

impl Default for PieParams {
    fn default() -> PieParams {
        PieParams {
            target: Dur::from_millis(15),
            t_update: Dur::from_millis(15),
            alpha: 0.125,
            beta: 1.25,
            max_burst: Dur::from_millis(150),
            mean_pktsize: 1500,
            ecn: false,
            derandomize: true,
        }
    }
}

/// Above this probability PIE drops even ECN-capable packets.
const MARK_ECN_THRESHOLD: f64 = 0.1;

/// PIE behind a tail-drop limit: a [`Discipline`].
#[derive(Clone, Debug)]
pub struct Pie {
    p: PieParams,
    limit: QueueLimit,
    rng: Rng,
    drop_prob: f64,
    qdelay_old: Dur,
    burst_allowance: Dur,
    next_update: Time,
    /// The probabilities accumulated since the last drop.
    accu_prob: f64,
    stats: AqmStats,
}

impl Pie {
    pub fn new(p: PieParams, limit: QueueLimit, rng: Rng) -> Pie {
        Pie {
            p,
            limit,
            rng,
            drop_prob: 0.0,
            qdelay_old: Dur::ZERO,
            burst_allowance: p.max_burst,
            next_update: Time::ZERO + p.t_update,
            accu_prob: 0.0,
            stats: AqmStats::default(),
        }
    }

    /// The current drop probability.
    pub fn probability(&self) -> f64 {
        self.drop_prob
    }

    /// One periodic update with the queue delay `qdelay` then.
    fn update(&mut self, qdelay: Dur) {
        let secs = |d: Dur| d.as_secs_f64();
        let mut p = self.p.alpha * (secs(qdelay) - secs(self.p.target)) + self.p.beta * (secs(qdelay) - secs(self.qdelay_old));
        // Auto-tuning: small steps while the probability is small.
        p /= match self.drop_prob {
            d if d < 0.000001 => 2048.0,
            d if d < 0.00001 => 512.0,
            d if d < 0.0001 => 128.0,
            d if d < 0.001 => 32.0,
            d if d < 0.01 => 8.0,
            d if d < 0.1 => 2.0,
            _ => 1.0,
        };
        // No jump of more than 2% once the probability is high.
        if self.drop_prob >= 0.1 && p > 0.02 {
            p = 0.02;
        }
        self.drop_prob += p;
        // Decay when the queue has been empty at two updates running.
        if qdelay == Dur::ZERO && self.qdelay_old == Dur::ZERO {
            self.drop_prob *= 0.98;
        }
        self.drop_prob = self.drop_prob.clamp(0.0, 1.0);
        self.burst_allowance = Dur(self.burst_allowance.0.saturating_sub(self.p.t_update.0));
        let half = Dur(self.p.target.0 / 2);
        if self.drop_prob == 0.0 && qdelay < half && self.qdelay_old < half {
            self.burst_allowance = self.p.max_burst;
        }
        self.qdelay_old = qdelay;
    }

    /// Whether the controller asks to drop this packet (RFC 8033 4.1).
    fn drop_early(&mut self, q: &Backlog) -> bool {
        if self.burst_allowance > Dur::ZERO {
            return false;
        }
        // Stay work-conserving: never drop from a nearly empty queue, nor
        // while the delay is low and the probability moderate.
        if (self.qdelay_old < Dur(self.p.target.0 / 2) && self.drop_prob < 0.2) || q.bytes <= 2 * self.p.mean_pktsize as u64 {
            return false;
        }
        if !self.p.derandomize {
            return self.rng.bernoulli(self.drop_prob);
        }
        if self.drop_prob == 0.0 {
            self.accu_prob = 0.0;
        }
        self.accu_prob += self.drop_prob;
        if self.accu_prob < 0.85 {
            return false;
        }
        self.accu_prob >= 8.5 || self.rng.bernoulli(self.drop_prob)
    }

    /// Every drop restarts the accumulation (Linux resets it on tail
    /// drops too).
    fn dropped(&mut self, why: DropReason) -> Admit {
        self.accu_prob = 0.0;
        Admit::Drop(why)
    }
}

impl Discipline for Pie {
    fn admit(&mut self, now: Time, pkt: &mut Packet, q: &Backlog) -> Admit {
        // The serialiser is busy until `now + wait`: an arrival at a past
        // boundary would have waited from then to that instant.
        let busy_until = now + q.wait;
        while self.next_update <= now {
            let qdelay = busy_until.saturating_since(self.next_update);
            self.update(qdelay);
            self.next_update += self.p.t_update;
        }
        self.stats.estimate_sum += self.drop_prob;
        self.stats.arrivals += 1;
        if q.wait > Dur::ZERO && !self.limit.admits(q.packets, q.bytes, pkt.len) {
            return self.dropped(DropReason::QueueFull);
        }
        if !self.drop_early(q) {
            return Admit::Accept;
        }
        if self.p.ecn && pkt.ecn_capable && self.drop_prob <= MARK_ECN_THRESHOLD {
            pkt.ce = true;
            self.stats.ecn_marks += 1;
            return Admit::Accept;
        }
        self.dropped(DropReason::Early)
    }

    fn stats(&self) -> AqmStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Arrivals one nanosecond apart into a queue kept past the
    /// safeguards at a fixed drop probability `p`: the gaps between drops.
    fn gaps_between_drops(p: f64, derandomize: bool) -> Vec<u64> {
        let params = PieParams { derandomize, max_burst: Dur::ZERO, t_update: Dur::from_secs(1_000_000), ..PieParams::default() };
        let mut pie = Pie::new(params, QueueLimit::Packets(100_000), Rng::stream(3, "pie"));
        (pie.drop_prob, pie.qdelay_old) = (p, Dur::from_millis(30));
        let q = Backlog { packets: 25, bytes: 37_500, wait: Dur::from_millis(30), idle_since: None };
        let (mut gaps, mut last) = (Vec::new(), 0);
        for i in 1..=200_000 {
            if let Admit::Drop(_) = pie.admit(Time(i), &mut Packet::new(0, 1500), &q) {
                gaps.push(i - last);
                last = i;
            }
        }
        gaps
    }

    #[test]
    fn derandomised_drops_come_after_0_85_and_by_8_5_of_accumulated_probability() {
        // At p = 1%: no gap under 85 arrivals nor over 850.
        let g = gaps_between_drops(0.01, true);
        assert!(g.len() > 500 && g.iter().all(|&x| (85..=851).contains(&x)), "{:?}", (g.iter().min(), g.iter().max()));
        // The mean gap: 85 arrivals, then a geometric wait for a draw of p.
        let mean = g.iter().sum::<u64>() as f64 / g.len() as f64;
        assert!((mean / (85.0 + 100.0) - 1.0).abs() < 0.05, "{mean}");
        // Independent draws give gaps of any length.
        let r = gaps_between_drops(0.01, false);
        assert!(r.iter().filter(|&&x| x < 85).count() as f64 / r.len() as f64 > 0.5);
    }
}
