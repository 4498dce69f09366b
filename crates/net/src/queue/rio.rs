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

/// How the drop probability of successive packets is spaced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CountMode {
    /// Floyd and Jacobson (and ns-2's RED): p_a = p_b / (1 - count·p_b),
    /// count the packets since the last drop, so drops come evenly spaced
    /// (gaps uniform on 1..1/p_b - 1: a share of 2·p_b).
    Red,
    /// ns-2 2.35 dsRED's: its count restarts at every packet kept, so a
    /// packet is dropped with p_b itself (p_b / (1 - k·p_b) only right
    /// after k drops in a row).
    Dsred,
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
    pub count: CountMode,
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
    count_mode: CountMode,
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
            count_mode: spec.count,
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
        let mut coupled = [0u64; 3];
        let mut below = 0;
        for (i, c) in self.precs.iter().enumerate() {
            below += c.waiting;
            coupled[i.min(2)] = below;
        }
        let ptc = self.ptc;
        for (c, &backlog) in self.precs.iter_mut().zip(&coupled).skip(p) {
            let mut m = 0;
            if c.idle {
                c.idle = false;
                m = (ptc * now.saturating_since(c.idle_since).as_secs_f64()) as i32;
            }
            c.avg = c.avg * (1.0 - c.curve.w_q).powi(m + 1) + c.curve.w_q * backlog as f64;
        }
    }

    /// RED's decision for a packet of precedence `p`, given its average.
    fn early(&mut self, p: usize) -> Option<DropReason> {
        let mode = self.count_mode;
        let c = &mut self.precs[p];
        match c.curve.p_b(c.avg) {
            Some(pb) if pb > 0.0 => {
                c.count += 1;
                let pa = match mode {
                    CountMode::Red if c.count as f64 * pb >= 1.0 => 1.0,
                    _ => pb / (1.0 - c.count as f64 * pb),
                };
                if self.rng.uniform() < pa {
                    if mode == CountMode::Red {
                        c.count = 0;
                    }
                    return Some(DropReason::Early);
                }
                if mode == CountMode::Dsred {
                    c.count = -1;
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

    fn rio(count: CountMode) -> Rio {
        let spec = RioSpec {
            precedences: vec![curve(40.0, 70.0, 0.02), curve(10.0, 40.0, 0.1)],
            limit: 1000,
            rate: Rate::mbps(10),
            mean_packet: 1000,
            count,
        };
        Rio::new(&spec, Rng::stream(1, "rio-test"))
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

    #[test]
    fn each_precedence_averages_its_own_and_the_lower_backlog() {
        let mut r = rio(CountMode::Dsred);
        held(&mut r, 20, 30);
        // w_q = 0.002: after n arrivals avg = b·(1 - 0.998^n).
        for _ in 0..5000 {
            r.average(1, Time::ZERO);
        }
        let k = 1.0 - 0.998f64.powi(5000);
        assert!((r.avg(1) - 50.0 * k).abs() < 1e-6, "red sees green and red: {}", r.avg(1));
        assert_eq!(r.avg(0), 0.0, "a red arrival leaves green's average alone");
        for _ in 0..5000 {
            r.average(0, Time::ZERO);
        }
        assert!((r.avg(0) - 20.0 * k).abs() < 1e-6, "green sees green only: {}", r.avg(0));
    }

    #[test]
    fn each_precedence_drops_with_its_red_curve_given_its_average() {
        // Averages fixed at 25 (red: p_b = 0.1·15/30 = 0.05; green below
        // its min) and 55 (green: 0.02·15/30 = 0.01; red past its max).
        // dsRED spacing drops with p_b itself: over n draws the share is
        // within 4 binomial deviations.
        let n = 200_000;
        for (avg, want) in [(25.0, [0.0, 0.05]), (55.0, [0.01, 1.0])] {
            let mut r = rio(CountMode::Dsred);
            for (i, w) in want.iter().enumerate() {
                r.precs[i].avg = avg;
                let mut drops = 0;
                for _ in 0..n {
                    drops += r.early(i).is_some() as u32;
                }
                let share = drops as f64 / n as f64;
                let tol = 4.0 * (w * (1.0 - w) / n as f64).sqrt() + 1e-9;
                assert!((share - w).abs() <= tol, "avg {avg} precedence {i}: {share} against {w}");
            }
        }
        // Floyd-Jacobson spacing (as ns-2's RED counts): the k-th packet
        // after a drop is dropped with p_b/(1 - k·p_b), so the gap between
        // drops is uniform on 1..1/p_b - 1, of mean 1/(2·p_b): a share of
        // 2·p_b.
        let mut r = rio(CountMode::Red);
        r.precs[1].avg = 25.0;
        let drops = (0..n).filter(|_| r.early(1).is_some()).count() as f64 / n as f64;
        assert!((drops - 2.0 * 0.05).abs() < 0.002, "{drops}");
    }

    #[test]
    fn a_full_queue_overflows_and_idle_time_decays_the_averages() {
        let mut r = rio(CountMode::Dsred);
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
        let mut r = rio(CountMode::Dsred);
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
