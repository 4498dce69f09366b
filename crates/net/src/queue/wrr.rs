//! Round-robin and weighted round-robin between classes: each DiffServ
//! class (`Packet::class`) waits in a sub-queue of its own, with its own
//! limit, and the serialiser takes up to `weight` packets from each
//! non-empty sub-queue in turn (ns-2 dsRED's `WRR`; all weights 1 is its
//! `RR`). An empty sub-queue gives its turn away: the queue never idles
//! while any class waits.

use super::{QueueLimit, Scheduler};
use crate::element::DropReason;
use crate::packet::Packet;
use std::collections::VecDeque;
use units::Time;

/// One class: the packets of class `class`, served `weight` at a turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WrrClass {
    pub class: u8,
    pub weight: u32,
    pub limit: QueueLimit,
}

#[derive(Clone, Debug)]
struct Sub {
    spec: WrrClass,
    q: VecDeque<Packet>,
    bytes: u64,
}

/// The scheduler. A packet of a class not listed waits with the last
/// class listed (the catch-all, best effort by convention).
#[derive(Clone, Debug)]
pub struct Wrr {
    subs: Vec<Sub>,
    /// The sub-queue whose turn it is and what is left of its turn.
    turn: usize,
    left: u32,
    packets: usize,
    bytes: u64,
    /// Packets served and dropped, per class listed.
    pub served: Vec<u64>,
    pub dropped: Vec<u64>,
}

impl Wrr {
    /// `classes` must not be empty and every weight must be at least 1
    /// (the scenario checks both).
    pub fn new(classes: &[WrrClass]) -> Wrr {
        assert!(!classes.is_empty() && classes.iter().all(|c| c.weight > 0), "wrr needs classes with weights of at least 1");
        let subs: Vec<Sub> = classes.iter().map(|&spec| Sub { spec, q: VecDeque::new(), bytes: 0 }).collect();
        let left = subs[0].spec.weight;
        let n = subs.len();
        Wrr { subs, turn: 0, left, packets: 0, bytes: 0, served: vec![0; n], dropped: vec![0; n] }
    }

    fn sub_of(&self, class: u8) -> usize {
        self.subs.iter().position(|s| s.spec.class == class).unwrap_or(self.subs.len() - 1)
    }
}

impl Scheduler for Wrr {
    fn enqueue(&mut self, _now: Time, pkt: Packet, dropped: &mut Vec<(Packet, DropReason)>) {
        let i = self.sub_of(pkt.class);
        let s = &mut self.subs[i];
        if s.spec.limit.admits(s.q.len(), s.bytes, pkt.len) {
            s.bytes += pkt.len as u64;
            s.q.push_back(pkt);
            self.packets += 1;
            self.bytes += pkt.len as u64;
        } else {
            self.dropped[i] += 1;
            dropped.push((pkt, DropReason::QueueFull));
        }
    }

    fn dequeue(&mut self, _now: Time, _dropped: &mut Vec<(Packet, DropReason)>) -> Option<Packet> {
        if self.packets == 0 {
            return None;
        }
        loop {
            let s = &mut self.subs[self.turn];
            if self.left > 0 {
                if let Some(p) = s.q.pop_front() {
                    s.bytes -= p.len as u64;
                    self.left -= 1;
                    self.packets -= 1;
                    self.bytes -= p.len as u64;
                    self.served[self.turn] += 1;
                    return Some(p);
                }
            }
            self.turn = (self.turn + 1) % self.subs.len();
            self.left = self.subs[self.turn].spec.weight;
        }
    }

    fn backlog(&self) -> (usize, u64) {
        (self.packets, self.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::{Element, Release};
    use crate::queue::{DisciplineKind, Queue, Server, Transmit};
    use units::{Dur, Rate};

    fn class(class: u8, weight: u32) -> WrrClass {
        WrrClass { class, weight, limit: QueueLimit::Packets(50) }
    }

    fn pkt(id: u32, class: u8) -> Packet {
        let mut p = Packet::new(id, 1000);
        p.class = class;
        p
    }

    /// Three classes offered `offered_per_ms` packets each per
    /// millisecond for `secs` on a 8 Mbit/s link of 1000-byte packets
    /// (1 ms each): the packets each class got through.
    fn saturate(weights: [u32; 3], offered_per_ms: [u32; 3], secs: u64) -> [u64; 3] {
        let classes = [1u8, 2, 0];
        let wrr = Wrr::new(&[class(1, weights[0]), class(2, weights[1]), class(0, weights[2])]);
        let mut q = Queue::new(Server::new(Transmit::Rate(Rate::mbps(8))), DisciplineKind::Dequeue(Box::new(wrr)));
        let mut got = [0u64; 3];
        let (mut id, mut out) = (0u32, Vec::new());
        for ms in 0..secs * 1000 {
            let now = Time::ZERO + Dur::from_millis(ms);
            if q.poll_at().is_some_and(|t| t <= now) {
                q.wake(now, &mut out);
            }
            for (k, &n) in offered_per_ms.iter().enumerate() {
                for _ in 0..n {
                    id += 1;
                    q.offer(now, &mut pkt(id, classes[k]));
                }
            }
            for r in out.drain(..) {
                if let Release::Pass(p) = r {
                    got[classes.iter().position(|&c| c == p.class).unwrap_or(2)] += 1;
                }
            }
        }
        got
    }

    #[test]
    fn under_saturation_each_class_gets_its_weighted_share() {
        // Weights 3:2:1 and every class offered 2 packets per packet time.
        let got = saturate([3, 2, 1], [2, 2, 2], 6);
        let total: u64 = got.iter().sum();
        for (k, w) in [3.0, 2.0, 1.0].iter().enumerate() {
            let share = got[k] as f64 / total as f64;
            // Within one round (6 packets) of the weights over ~6000 packets.
            assert!((share - w / 6.0).abs() < 0.002, "{got:?}");
        }
    }

    #[test]
    fn round_robin_is_work_conserving_a_lone_class_takes_the_whole_link() {
        // Only class 2 sends, 1 packet per packet time: it gets every slot,
        // and the link never idles while it waits.
        let got = saturate([1, 1, 1], [0, 1, 0], 2);
        assert!(got[1] >= 1998 && got[0] == 0 && got[2] == 0, "{got:?}");
        // Two classes at weights 1:1 sharing a link the third leaves free.
        let got = saturate([1, 1, 1], [2, 0, 2], 2);
        assert!(got[0].abs_diff(got[2]) <= 1 && got[0] + got[2] >= 1998, "{got:?}");
    }

    #[test]
    fn each_class_has_its_own_limit_and_unlisted_classes_wait_with_the_last() {
        let mut w = Wrr::new(&[WrrClass { class: 1, weight: 1, limit: QueueLimit::Packets(2) }, class(0, 1)]);
        let mut dropped = Vec::new();
        for id in 0..4 {
            w.enqueue(Time::ZERO, pkt(id, 1), &mut dropped);
        }
        w.enqueue(Time::ZERO, pkt(9, 5), &mut dropped);
        assert_eq!(dropped.iter().map(|(p, r)| (p.id, *r)).collect::<Vec<_>>(), vec![(2, DropReason::QueueFull), (3, DropReason::QueueFull)]);
        assert_eq!(w.backlog(), (3, 3000));
        let order: Vec<u32> = std::iter::from_fn(|| w.dequeue(Time::ZERO, &mut dropped)).map(|p| p.id).collect();
        assert_eq!(order, vec![0, 9, 1]);
    }
}
