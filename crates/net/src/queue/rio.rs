//! RIO-C: RED with In and Out, coupled (Clark and Fang, "Explicit
//! allocation of best-effort packet delivery service", 1998; ns-2's dsRED
//! `setMREDMode RIO-C`). One physical first-in first-out queue holds
//! packets of two or three drop precedences (their [`Colour`]); each
//! precedence runs RED ([`RedEstimator`]) with its own thresholds, max_p
//! and weight, on an average of the packets waiting of that precedence and
//! every lower (more important) one. So green packets see only green
//! congestion, and red packets are dropped first. RIO's own are the coupled
//! backlogs and when a precedence is idle.

use super::red::{RedCurve, RedEstimator, RedRule, RedVerdict};
use super::{Admit, Backlog, Discipline};
use crate::element::DropReason;
use crate::packet::{Colour, Packet};
use std::collections::VecDeque;
use units::{Rate, Rng, Time};

/// Whose RIO-C.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RioFlavour {
    /// Clark and Fang's: each precedence runs Floyd and Jacobson's RED
    /// ([`RedRule::FloydJacobson`]): drops evenly spaced, about 2·p_b of
    /// the arrivals at a steady average.
    ClarkFang,
    /// ns-2 2.35 dsRED's `RIO-C` (diffserv/dsredq.cc), which departs from
    /// the definition in three ways:
    /// - p_a is not capped ([`RedRule::Dsred`]): once count·p_b passes 1
    ///   (the average rose between arrivals), the precedence drops nothing
    ///   early until its average leaves (min_th, max_th];
    /// - an arrival that is dropped leaves the precedences idle, so the next
    ///   one decays the average again over the whole idle time;
    /// - precedence i's average adds Σ_{j≤i} w_j·q_j, each backlog weighted
    ///   by its own precedence's w (the same sum when the weights are equal).
    Ns2,
}

/// RIO-C's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct RioSpec {
    /// From the lowest drop precedence (green) up: two or three.
    pub precedences: Vec<RedCurve>,
    /// The physical queue's limit in packets waiting.
    pub limit: u32,
    /// For the idle-time decay of the averages: the link's rate and a
    /// typical packet's size (ns-2's ptc = rate / (8·mean_pktsize)).
    pub rate: Rate,
    pub mean_packet: u32,
    pub flavour: RioFlavour,
}

#[derive(Clone, Debug)]
struct Prec {
    est: RedEstimator,
    /// Packets of this precedence waiting.
    waiting: u64,
    idle: bool,
    idle_since: Time,
}

/// The discipline.
pub struct Rio {
    precs: Vec<Prec>,
    limit: u32,
    flavour: RioFlavour,
    /// Packets waiting, as (service start, precedence): the precedences'
    /// backlogs, exactly, from the queue's own plan.
    waiting: VecDeque<(Time, u8)>,
    rng: Rng,
    /// Drops by precedence: [early, forced, overflow].
    pub drops: Vec<[u64; 3]>,
    pub arrivals: Vec<u64>,
}

impl Rio {
    pub fn new(spec: &RioSpec, rng: Rng) -> Rio {
        let ptc = spec.rate.as_f64() / (8.0 * spec.mean_packet.max(1) as f64);
        let rule = match spec.flavour {
            RioFlavour::ClarkFang => RedRule::FloydJacobson,
            RioFlavour::Ns2 => RedRule::Dsred,
        };
        let precs = spec
            .precedences
            .iter()
            .map(|&curve| Prec { est: RedEstimator::from_curve(curve, ptc, rule), waiting: 0, idle: true, idle_since: Time::ZERO })
            .collect::<Vec<_>>();
        let n = precs.len();
        Rio { precs, limit: spec.limit, flavour: spec.flavour, waiting: VecDeque::new(), rng, drops: vec![[0; 3]; n], arrivals: vec![0; n] }
    }

    /// The precedence a colour takes: yellow shares red's when there are two.
    fn prec_of(&self, c: Colour) -> usize {
        c.index().min(self.precs.len() - 1)
    }

    /// The average of precedence `i`.
    pub fn avg(&self, i: usize) -> f64 {
        self.precs[i].est.average()
    }

    /// Packets of precedence `p` left the waiting line at `at` (their
    /// service started): a precedence whose coupled backlog (its own and
    /// every lower one's) is now empty goes idle from then.
    fn left(&mut self, p: usize, at: Time) {
        let mut below = 0;
        for i in 0..self.precs.len() {
            below += self.precs[i].waiting;
            if i >= p && below == 0 && !self.precs[i].idle {
                self.precs[i].idle = true;
                self.precs[i].idle_since = at;
            }
        }
    }

    fn advance(&mut self, now: Time) {
        while let Some(&(start, p)) = self.waiting.front() {
            if start > now {
                break;
            }
            self.waiting.pop_front();
            self.precs[p as usize].waiting -= 1;
            self.left(p as usize, start);
        }
    }

    /// Updates the averages of precedence `p` and every higher one at an
    /// arrival at `now` (RIO-C: each on the backlog of its own and lower
    /// precedences), decayed over the time each has been idle.
    fn average(&mut self, p: usize, now: Time) {
        // Σ_{j≤i} q_j and Σ_{j≤i} w_j·q_j for each precedence i.
        let (mut coupled, mut weighted) = ([0u64; 3], [0f64; 3]);
        let (mut below, mut below_w) = (0, 0.0);
        for (i, c) in self.precs.iter().enumerate() {
            below += c.waiting;
            below_w += c.est.weight() * c.waiting as f64;
            coupled[i.min(2)] = below;
            weighted[i.min(2)] = below_w;
        }
        let flavour = self.flavour;
        for (i, c) in self.precs.iter_mut().enumerate().skip(p) {
            let idle = c.idle.then(|| now.saturating_since(c.idle_since));
            // ns-2 clears the flag only once the packet is kept (admit).
            c.idle &= flavour == RioFlavour::Ns2;
            match flavour {
                RioFlavour::ClarkFang => c.est.arrive(coupled[i] as f64, idle),
                RioFlavour::Ns2 => c.est.arrive_adding(weighted[i], idle),
            };
        }
    }

    /// RED's decision for a packet of precedence `p`, given its average.
    fn early(&mut self, p: usize) -> Option<DropReason> {
        match self.precs[p].est.decide(0.0, 0, &mut self.rng) {
            RedVerdict::Pass => None,
            RedVerdict::Early => Some(DropReason::Early),
            RedVerdict::Forced => Some(DropReason::Forced),
        }
    }
}

impl Discipline for Rio {
    fn admit(&mut self, now: Time, pkt: &mut Packet, q: &Backlog) -> Admit {
        self.advance(now);
        let p = self.prec_of(pkt.colour);
        self.arrivals[p] += 1;
        if q.wait.0 > 0 && q.packets as u64 >= self.limit as u64 {
            self.drops[p][2] += 1;
            return Admit::Drop(DropReason::QueueFull);
        }
        self.average(p, now);
        if let Some(r) = self.early(p) {
            self.drops[p][if r == DropReason::Early { 0 } else { 1 }] += 1;
            return Admit::Drop(r);
        }
        if self.flavour == RioFlavour::Ns2 {
            for c in &mut self.precs[p..] {
                c.idle = false;
            }
        }
        if q.wait.0 > 0 {
            self.waiting.push_back((now + q.wait, p as u8));
            self.precs[p].waiting += 1;
        } else {
            // Straight into service: enqueued and dequeued at once, as ns-2.
            self.left(p, now);
        }
        Admit::Accept
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use units::Dur;

    fn curve(min_th: f64, max_th: f64, max_p: f64) -> RedCurve {
        RedCurve { min_th, max_th, max_p, w_q: 0.002 }
    }

    fn rio_with(flavour: RioFlavour, precedences: Vec<RedCurve>) -> Rio {
        let spec = RioSpec { precedences, limit: 1000, rate: Rate::mbps(10), mean_packet: 1000, flavour };
        Rio::new(&spec, Rng::stream(1, "rio-test"))
    }

    fn rio(flavour: RioFlavour) -> Rio {
        rio_with(flavour, vec![curve(40.0, 70.0, 0.02), curve(10.0, 40.0, 0.1)])
    }

    fn coloured(c: Colour) -> Packet {
        let mut p = Packet::new(0, 1000);
        p.colour = c;
        p
    }

    /// A queue held at `green` green and `red` red packets waiting: the
    /// average of each precedence settles on its coupled backlog.
    fn held(r: &mut Rio, green: u64, red: u64) {
        r.precs[0].waiting = green;
        r.precs[1].waiting = red;
        for p in &mut r.precs {
            p.idle = false;
        }
    }

    const BOTH: [RioFlavour; 2] = [RioFlavour::ClarkFang, RioFlavour::Ns2];

    #[test]
    fn each_flavour_decides_with_its_red_rule() {
        // 18 red packets kept just above min_th (p_b 3·10⁻⁶, count 17),
        // then the average jumps to 28 (p_b = 0.06): count·p_b = 1.08 at
        // the next. Clark and Fang's RED drops it; dsRED's makes no early
        // drop (tests/red.rs has each rule at length).
        for (flavour, drops) in [(RioFlavour::ClarkFang, true), (RioFlavour::Ns2, false)] {
            let mut r = rio(flavour);
            let rule = if drops { RedRule::FloydJacobson } else { RedRule::Dsred };
            let mut red = curve(10.0, 40.0, 0.1);
            red.w_q = 1.0;
            r.precs[1].est = RedEstimator::from_curve(red, 1.0, rule);
            r.precs[1].est.arrive(10.0001, None);
            for _ in 0..18 {
                assert_eq!(r.early(1), None);
            }
            r.precs[1].est.arrive(28.0, None);
            assert_eq!(r.early(1).is_some(), drops, "{flavour:?}");
        }
    }

    #[test]
    fn each_precedence_averages_its_own_and_the_lower_backlog() {
        for flavour in BOTH {
            let mut r = rio(flavour);
            held(&mut r, 20, 30);
            // w_q = 0.002: after n arrivals avg = b·(1 - 0.998^n).
            for _ in 0..5000 {
                r.average(1, Time::ZERO);
            }
            let k = 1.0 - 0.998f64.powi(5000);
            assert!((r.avg(1) - 50.0 * k).abs() < 1e-6, "{flavour:?}: red sees green and red: {}", r.avg(1));
            assert_eq!(r.avg(0), 0.0, "a red arrival leaves green's average alone");
            for _ in 0..5000 {
                r.average(0, Time::ZERO);
            }
            assert!((r.avg(0) - 20.0 * k).abs() < 1e-6, "{flavour:?}: green sees green only: {}", r.avg(0));
        }
    }

    #[test]
    fn ns2_keeps_a_precedence_idle_until_a_packet_is_kept() {
        // Red's average 100, its backlog empty since time 0; red packets
        // arrive at 100 ms and 200 ms, both forced drops. The first decays
        // the average by 0.998^(125+1) (125 packets' time at 10 Mbit/s).
        // Clark and Fang's second sees a busy precedence (one step); ns-2's
        // precedence is still idle, and the second decays again over the
        // whole 200 ms, from the already decayed average.
        let idle = Backlog { packets: 0, bytes: 0, wait: Dur::ZERO, idle_since: Some(Time::ZERO) };
        let at = |ms| Time::ZERO + Dur::from_millis(ms);
        for flavour in BOTH {
            let mut r = rio(flavour);
            r.precs[1].est.set_average(100.0);
            r.left(0, Time::ZERO);
            assert_eq!(r.admit(at(100), &mut coloured(Colour::Red), &idle), Admit::Drop(DropReason::Forced));
            let first = 100.0 * 0.998f64.powi(126);
            assert!((r.avg(1) - first).abs() < 1e-9, "{}", r.avg(1));
            assert_eq!(r.admit(at(200), &mut coloured(Colour::Red), &idle), Admit::Drop(DropReason::Forced));
            let second = match flavour {
                RioFlavour::ClarkFang => first * 0.998,
                RioFlavour::Ns2 => first * 0.998f64.powi(251),
            };
            assert!((r.avg(1) - second).abs() < 1e-9, "{flavour:?}: {} against {second}", r.avg(1));
        }
        // A packet kept ends ns-2's idle period.
        let mut r = rio(RioFlavour::Ns2);
        r.left(0, Time::ZERO);
        let busy = Backlog { packets: 0, bytes: 0, wait: Dur::from_millis(1), idle_since: None };
        assert_eq!(r.admit(at(100), &mut coloured(Colour::Green), &busy), Admit::Accept);
        assert!(!r.precs[0].idle && !r.precs[1].idle);
    }

    #[test]
    fn ns2_weights_each_backlog_by_its_own_precedences_w() {
        // 20 green and 30 red packets wait; green's w 0.002, red's 0.01.
        // One red arrival: Clark and Fang's red average moves by
        // 0.01·(20 + 30); ns-2's by 0.002·20 + 0.01·30.
        for (flavour, want) in [(RioFlavour::ClarkFang, 0.5), (RioFlavour::Ns2, 0.34)] {
            let mut red = curve(10.0, 40.0, 0.1);
            red.w_q = 0.01;
            let mut r = rio_with(flavour, vec![curve(40.0, 70.0, 0.02), red]);
            held(&mut r, 20, 30);
            r.average(1, Time::ZERO);
            assert!((r.avg(1) - want).abs() < 1e-12, "{flavour:?}: {}", r.avg(1));
        }
    }

    #[test]
    fn a_full_queue_overflows_and_idle_time_decays_the_averages() {
        let mut r = rio(RioFlavour::ClarkFang);
        let busy = |packets| Backlog { packets, bytes: 0, wait: Dur::from_millis(1), idle_since: None };
        assert_eq!(r.admit(Time::ZERO, &mut coloured(Colour::Green), &busy(1000)), Admit::Drop(DropReason::QueueFull));
        assert_eq!(r.drops[0], [0, 0, 1]);
        // Averages of 30; the link idle for 100 ms sends 125 packets' worth
        // at 10 Mbit/s: the next arrival decays red's by 0.998^126.
        r.precs[0].est.set_average(30.0);
        r.precs[1].est.set_average(30.0);
        r.left(0, Time::ZERO);
        let now = Time::ZERO + Dur::from_millis(100);
        let idle = Backlog { packets: 0, bytes: 0, wait: Dur::ZERO, idle_since: Some(Time::ZERO) };
        r.admit(now, &mut coloured(Colour::Red), &idle);
        assert!((r.avg(1) - 30.0 * 0.998f64.powi(126)).abs() < 1e-9, "{}", r.avg(1));
        assert_eq!(r.avg(0), 30.0);
    }

    #[test]
    fn waiting_packets_count_until_their_service_starts() {
        let mut r = rio(RioFlavour::ClarkFang);
        // Two red packets wait, starting service at 1 ms and 2 ms.
        for k in 1..=2 {
            let q = Backlog { packets: k - 1, bytes: 0, wait: Dur::from_millis(k as u64), idle_since: None };
            assert_eq!(r.admit(Time::ZERO, &mut coloured(Colour::Red), &q), Admit::Accept);
        }
        assert_eq!(r.precs[1].waiting, 2);
        r.advance(Time::ZERO + Dur::from_micros(1500));
        assert_eq!(r.precs[1].waiting, 1);
        r.advance(Time::ZERO + Dur::from_millis(2));
        assert!(r.precs[1].waiting == 0 && r.precs[1].idle && r.precs[1].idle_since == Time::ZERO + Dur::from_millis(2));
    }
}
