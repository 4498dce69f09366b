//! First in, first out, decided at dequeue: the scheduled form of drop-tail.

use super::{QueueLimit, Scheduler};
use crate::element::DropReason;
use crate::packet::Packet;
use std::collections::VecDeque;
use units::Time;

/// Drop-tail served through the scheduled path of the queue (held packets,
/// a wake-up per departure). It gives the same departures and drops as
/// [`super::DropTail`] when no gate delays the serialiser; it is the
/// reference that the scheduled machinery is exact, and the simplest
/// [`Scheduler`] to read before writing one.
#[derive(Clone, Debug)]
pub struct Fifo {
    limit: QueueLimit,
    q: VecDeque<Packet>,
    bytes: u64,
}

impl Fifo {
    pub fn new(limit: QueueLimit) -> Fifo {
        Fifo { limit, q: VecDeque::new(), bytes: 0 }
    }
}

impl Scheduler for Fifo {
    fn enqueue(&mut self, _now: Time, pkt: Packet, dropped: &mut Vec<(Packet, DropReason)>) {
        if self.limit.admits(self.q.len(), self.bytes, pkt.len) {
            self.bytes += pkt.len as u64;
            self.q.push_back(pkt);
        } else {
            dropped.push((pkt, DropReason::QueueFull));
        }
    }

    fn dequeue(&mut self, _now: Time, _dropped: &mut Vec<(Packet, DropReason)>) -> Option<Packet> {
        let p = self.q.pop_front()?;
        self.bytes -= p.len as u64;
        Some(p)
    }

    fn backlog(&self) -> (usize, u64) {
        (self.q.len(), self.bytes)
    }
}
