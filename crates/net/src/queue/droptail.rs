//! Drop-tail: a packet that finds the queue full is dropped.

use super::{Admit, Backlog, Discipline, QueueLimit};
use crate::element::DropReason;
use crate::packet::Packet;
use units::Time;

/// Drop-tail in packets or bytes: the limit counts the packets waiting for
/// the serialiser; a packet that goes straight into service always fits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DropTail {
    pub limit: QueueLimit,
}

impl DropTail {
    pub fn new(limit: QueueLimit) -> DropTail {
        DropTail { limit }
    }

    #[inline]
    pub(crate) fn admit_idle(&self) -> Admit {
        Admit::Accept
    }

    #[inline]
    pub(crate) fn admit_waiting(&self, packets: usize, bytes: u64, len: u32) -> Admit {
        if self.limit.admits(packets, bytes, len) {
            Admit::Accept
        } else {
            Admit::Drop(DropReason::QueueFull)
        }
    }
}

impl Discipline for DropTail {
    fn admit(&mut self, _now: Time, pkt: &mut Packet, q: &Backlog) -> Admit {
        if q.wait.0 == 0 {
            self.admit_idle()
        } else {
            self.admit_waiting(q.packets, q.bytes, pkt.len)
        }
    }
}
