//! RIO-C: RED with In and Out, coupled (Clark and Fang, "Explicit
//! allocation of best-effort packet delivery service", 1998; ns-2's dsRED
//! `setMREDMode RIO-C`). One physical first-in first-out queue holds
//! packets of two or three drop precedences (their [`Colour`]); each
//! precedence runs RED with its own thresholds, max_p and weight, on an
//! average of the packets waiting of that precedence and every lower
//! (more important) one. So green packets see only green congestion, and
//! red packets are dropped first.

use super::{Admit, Backlog, Discipline};
use crate::element::DropReason;
use crate::packet::{Colour, Packet};
use std::collections::VecDeque;
use units::{Rate, Rng, Time};

/// One drop precedence's RED parameters (ns-2 dsRED's `configQ`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedCurve {
    /// Thresholds on the average, in packets.
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    /// The average's weight (w_q).
    pub w_q: f64,
}

impl RedCurve {
    /// RED's drop probability p_b at average `avg` (before the count
    /// spacing): 0 up to min_th, rising linearly to max_p at max_th; past
    /// max_th every packet is dropped (`None`: a forced drop).
    pub fn p_b(&self, avg: f64) -> Option<f64> {
        if avg <= self.min_th {
            Some(0.0)
        } else if avg <= self.max_th {
            Some(self.max_p * (avg - self.min_th) / (self.max_th - self.min_th))
        } else {
            None
        }
    }
}

/// Whose RIO-C.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RioFlavour {
    /// Clark and Fang's: each precedence runs Floyd and Jacobson's RED,
    /// p_a = p_b / (1 - count·p_b) (1 once count·p_b reaches 1), count the
    /// packets since the last drop, so drops come evenly spaced (gaps
    /// uniform on 1..1/p_b: a share of about 2·p_b at a steady average).
    ClarkFang,
    /// ns-2 2.35 dsRED's `RIO-C` (diffserv/dsredq.cc), which departs from
    /// the definition in three ways:
    /// - p_a is not capped: once count·p_b passes 1 (the average rose
    ///   between arrivals), p_a is negative and the precedence drops
    ///   nothing early until its average leaves (min_th, max_th];
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

#[derive(Clone, Copy, Debug)]
struct Prec {
    curve: RedCurve,
    avg: f64,
    count: i64,
    /// Packets of this precedence waiting.
    waiting: u64,
    idle: bool,
    idle_since: Time,
}

/// The discipline.
pub struct Rio {
    precs: Vec<Prec>,
    limit: u32,
    /// Packets per second the link sends (ptc).
    ptc: f64,
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
        let precs = spec
            .precedences
            .iter()
            .map(|&curve| Prec { curve, avg: 0.0, count: -1, waiting: 0, idle: true, idle_since: Time::ZERO })
            .collect::<Vec<_>>();
        let n = precs.len();
        Rio {
            precs,
            limit: spec.limit,
            ptc: spec.rate.as_f64() / (8.0 * spec.mean_packet.max(1) as f64),
            flavour: spec.flavour,
            waiting: VecDeque::new(),
            rng,
            drops: vec![[0; 3]; n],
            arrivals: vec![0; n],
        }
    }

    /// The precedence a colour takes: yellow shares red's when there are two.
    fn prec_of(&self, c: Colour) -> usize {
        c.index().min(self.precs.len() - 1)
    }

    /// The average of precedence `i`.
    pub fn avg(&self, i: usize) -> f64 {
        self.precs[i].avg
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
    /// precedences), decayed over any idle time as ns-2 does.
    fn average(&mut self, p: usize, now: Time) {
        // Σ_{j≤i} q_j and Σ_{j≤i} w_j·q_j for each precedence i.
        let (mut coupled, mut weighted) = ([0u64; 3], [0f64; 3]);
        let (mut below, mut below_w) = (0, 0.0);
        for (i, c) in self.precs.iter().enumerate() {
            below += c.waiting;
            below_w += c.curve.w_q * c.waiting as f64;
            coupled[i.min(2)] = below;
            weighted[i.min(2)] = below_w;
        }
        let (ptc, flavour) = (self.ptc, self.flavour);
        for (i, c) in self.precs.iter_mut().enumerate().skip(p) {
            let mut m = 0;
            if c.idle {
                // ns-2 clears the flag only once the packet is kept (admit).
                c.idle = flavour == RioFlavour::Ns2;
                m = (ptc * now.saturating_since(c.idle_since).as_secs_f64()) as i32;
            }
            let add = match flavour {
                RioFlavour::ClarkFang => c.curve.w_q * coupled[i] as f64,
                RioFlavour::Ns2 => weighted[i],
            };
            c.avg = c.avg * (1.0 - c.curve.w_q).powi(m + 1) + add;
        }
    }

    /// RED's decision for a packet of precedence `p`, given its average.
    fn early(&mut self, p: usize) -> Option<DropReason> {
        let capped = self.flavour == RioFlavour::ClarkFang;
        let c = &mut self.precs[p];
        match c.curve.p_b(c.avg) {
            Some(pb) if pb > 0.0 => {
                c.count += 1;
                let cp = c.count as f64 * pb;
                let pa = if capped && cp >= 1.0 { 1.0 } else { pb / (1.0 - cp) };
                if self.rng.uniform() < pa {
                    c.count = 0;
                    return Some(DropReason::Early);
                }
                None
            }
            Some(_) => {
                c.count = -1;
                None
            }
            None => {
                c.count = 0;
                Some(DropReason::Forced)
            }
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
    fn each_precedence_drops_with_its_red_curve_given_its_average() {
        // Averages fixed at 25 (red: p_b = 0.1·15/30 = 0.05; green below
        // its min) and 55 (green: 0.02·15/30 = 0.01; red past its max).
        // The k-th packet after a drop is dropped with p_b/(1 - k·p_b), so
        // the gap between drops is uniform on 1..K, K = 1/p_b - 1, of mean
        // μ = 1/(2·p_b): a share of 2·p_b, within 4 deviations (a renewal
        // count's: √(n·σ²/μ³) drops, σ² = (K² - 1)/12) over n arrivals.
        // Both flavours, as long as p_b stays put. Past max_th all drop.
        let n = 200_000.0;
        for flavour in BOTH {
            for (avg, pb) in [(25.0, [0.0, 0.05]), (55.0, [0.01, 1.0])] {
                let mut r = rio(flavour);
                for (i, &pb) in pb.iter().enumerate() {
                    r.precs[i].avg = avg;
                    let share = (0..n as u32).filter(|_| r.early(i).is_some()).count() as f64 / n;
                    let (want, tol) = match pb {
                        0.0 => (0.0, 0.0),
                        1.0 => (1.0, 0.0),
                        _ => {
                            let (k, mu) = (1.0 / pb - 1.0, 1.0 / (2.0 * pb));
                            (1.0 / mu, 4.0 * (n * (k * k - 1.0) / 12.0 / mu.powi(3)).sqrt() / n)
                        }
                    };
                    assert!((share - want).abs() <= tol, "{flavour:?} avg {avg} precedence {i}: {share} against {want} ± {tol}");
                }
            }
        }
    }

    #[test]
    fn ns2s_early_drops_stop_once_count_times_p_b_passes_one() {
        // 18 packets kept since the last drop at p_b = 0.05; the average
        // then rises to 28 (p_b = 0.06): the 19th has count·p_b = 1.14.
        // Capped, p_a is 1 and it is dropped; ns-2's p_a is negative, and
        // stays so while the count grows: no early drop at all, until the
        // average falls below min_th (or passes max_th) and the count
        // restarts.
        for flavour in BOTH {
            let mut r = rio(flavour);
            r.precs[1].avg = 25.0;
            r.precs[1].count = 18;
            r.precs[1].avg = 28.0;
            let drops = (0..10_000).filter(|_| r.early(1).is_some()).count();
            match flavour {
                RioFlavour::ClarkFang => assert!(drops > 1000, "{drops}"),
                RioFlavour::Ns2 => assert_eq!(drops, 0),
            }
        }
        let mut r = rio(RioFlavour::Ns2);
        r.precs[1].count = 10_000;
        r.precs[1].avg = 5.0;
        assert_eq!(r.early(1), None);
        r.precs[1].avg = 28.0;
        assert!((0..1000).filter(|_| r.early(1).is_some()).count() > 50, "below min_th the count restarted");
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
            r.precs[1].avg = 100.0;
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
        r.precs[0].avg = 30.0;
        r.precs[1].avg = 30.0;
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
