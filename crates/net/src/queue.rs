//! Queue limits and the drop-tail FIFO.

use std::collections::VecDeque;
use units::Time;

/// How much a queue may hold while packets wait for the serialiser.
/// The packet being transmitted is not counted, as in ns-3's device queue
/// and Linux qdiscs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    Packets(u32),
    Bytes(u64),
}

/// Why a packet did not make it across a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// The queue was full (tail drop).
    QueueFull,
    /// The link's loss model discarded it.
    Loss,
}

/// Packets accepted but not yet in service, as (service start, bytes).
#[derive(Clone, Debug, Default)]
pub(crate) struct Waiting {
    q: VecDeque<(Time, u32)>,
    bytes: u64,
}

impl Waiting {
    /// Forgets packets whose service has started by `now`.
    #[inline]
    pub(crate) fn advance(&mut self, now: Time) {
        while let Some(&(start, len)) = self.q.front() {
            if start > now {
                break;
            }
            self.q.pop_front();
            self.bytes -= len as u64;
        }
    }

    #[inline]
    pub(crate) fn admits(&self, limit: QueueLimit, len: u32) -> bool {
        match limit {
            QueueLimit::Packets(n) => (self.q.len() as u64) < n as u64,
            QueueLimit::Bytes(b) => self.bytes + len as u64 <= b,
        }
    }

    #[inline]
    pub(crate) fn push(&mut self, start: Time, len: u32) {
        self.q.push_back((start, len));
        self.bytes += len as u64;
    }

    pub(crate) fn packets(&self) -> usize {
        self.q.len()
    }

    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }
}
