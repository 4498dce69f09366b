//! CoDel (RFC 8289): drops at dequeue once packets have stayed in the
//! queue longer than `target` for a whole `interval`, then at intervals
//! that shrink as interval/√count until the sojourn time falls back.

use super::{AqmStats, QueueLimit, Scheduler};
use crate::element::DropReason;
use crate::packet::Packet;
use std::collections::VecDeque;
use units::{Dur, Time};

/// CoDel's parameters, as RFC 8289 names them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CodelParams {
    /// TARGET: the acceptable standing sojourn time (default 5 ms).
    pub target: Dur,
    /// INTERVAL: how long the sojourn time must stay above target before
    /// a drop, and the base of the control law (default 100 ms).
    pub interval: Dur,
    /// Mark ECN-capable packets (CE) instead of dropping them.
    pub ecn: bool,
}

impl Default for CodelParams {
    fn default() -> CodelParams {
        CodelParams { target: Dur::from_millis(5), interval: Dur::from_millis(100), ecn: false }
    }
}

/// CoDel behind a tail-drop limit: a [`Scheduler`].
#[derive(Clone, Debug)]
pub struct Codel {
    p: CodelParams,
    limit: QueueLimit,
    q: VecDeque<Packet>,
    bytes: u64,
    /// The largest packet seen: a queue holding no more than one such
    /// packet is never dropped from (RFC 8289's MAXPACKET).
    max_packet: u32,
    /// When the sojourn time will have been above target for an interval
    /// (None: it is below).
    first_above: Option<Time>,
    dropping: bool,
    drop_next: Time,
    count: u32,
    last_count: u32,
    stats: AqmStats,
}

impl Codel {
    pub fn new(p: CodelParams, limit: QueueLimit) -> Codel {
        Codel {
            p,
            limit,
            q: VecDeque::new(),
            bytes: 0,
            max_packet: 0,
            first_above: None,
            dropping: false,
            drop_next: Time::ZERO,
            count: 0,
            last_count: 0,
            stats: AqmStats::default(),
        }
    }

    /// The drop or mark after one at `t`: interval/√count later.
    fn control_law(&self, t: Time) -> Time {
        t + Dur::from_secs_f64(self.p.interval.as_secs_f64() / (self.count as f64).sqrt())
    }

    /// The head packet, and whether CoDel may drop it: its sojourn time
    /// has been at or above target for an interval.
    fn pop(&mut self, now: Time) -> Option<(Packet, bool)> {
        let Some(p) = self.q.pop_front() else {
            self.first_above = None;
            return None;
        };
        self.bytes -= p.len as u64;
        let sojourn = now.saturating_since(p.enqueued_at);
        if sojourn < self.p.target || self.bytes <= self.max_packet as u64 {
            self.first_above = None;
            return Some((p, false));
        }
        match self.first_above {
            None => {
                self.first_above = Some(now + self.p.interval);
                Some((p, false))
            }
            Some(t) => Some((p, now >= t)),
        }
    }

    /// Drops or marks `p`: returns it when marked (it is then served).
    fn signal(&mut self, mut p: Packet, dropped: &mut Vec<(Packet, DropReason)>) -> Option<Packet> {
        if self.p.ecn && p.ecn_capable {
            p.ce = true;
            self.stats.ecn_marks += 1;
            Some(p)
        } else {
            dropped.push((p, DropReason::Early));
            None
        }
    }
}

impl Scheduler for Codel {
    fn enqueue(&mut self, _now: Time, pkt: Packet, dropped: &mut Vec<(Packet, DropReason)>) {
        self.max_packet = self.max_packet.max(pkt.len);
        if self.limit.admits(self.q.len(), self.bytes, pkt.len) {
            self.bytes += pkt.len as u64;
            self.q.push_back(pkt);
        } else {
            dropped.push((pkt, DropReason::QueueFull));
        }
    }

    fn dequeue(&mut self, now: Time, dropped: &mut Vec<(Packet, DropReason)>) -> Option<Packet> {
        let (mut p, mut ok_to_drop) = self.pop(now)?;
        if self.dropping {
            if !ok_to_drop {
                self.dropping = false;
            }
            while self.dropping && now >= self.drop_next {
                self.count += 1;
                if let Some(marked) = self.signal(p, dropped) {
                    self.drop_next = self.control_law(self.drop_next);
                    return Some(marked);
                }
                let Some(next) = self.pop(now) else {
                    self.dropping = false;
                    return None;
                };
                (p, ok_to_drop) = next;
                if ok_to_drop {
                    self.drop_next = self.control_law(self.drop_next);
                } else {
                    self.dropping = false;
                }
            }
            return Some(p);
        }
        if !ok_to_drop {
            return Some(p);
        }
        // Entering the dropping state: if it left it recently, resume
        // near the rate that controlled the queue then.
        let delta = self.count.saturating_sub(self.last_count);
        self.count = if delta > 1 && now.saturating_since(self.drop_next) < self.p.interval.saturating_mul(16) { delta } else { 1 };
        self.dropping = true;
        self.drop_next = self.control_law(now);
        self.last_count = self.count;
        match self.signal(p, dropped) {
            Some(marked) => Some(marked),
            None => self.pop(now).map(|(p, _)| p),
        }
    }

    fn backlog(&self) -> (usize, u64) {
        (self.q.len(), self.bytes)
    }

    fn stats(&self) -> AqmStats {
        self.stats
    }
}
