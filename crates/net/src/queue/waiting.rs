//! The packets of a first-in first-out queue still waiting for service.

use super::occupancy::Occupancy;
use std::collections::VecDeque;
use units::Time;

/// Packets accepted but not yet in service, as (service start, bytes):
/// enough to decide admission exactly and to measure the backlog.
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

    /// As [`Waiting::advance`], telling `seen` of each start of service.
    pub(crate) fn advance_seen(&mut self, now: Time, seen: &mut Occupancy) {
        while let Some(&(start, len)) = self.q.front() {
            if start > now {
                break;
            }
            self.q.pop_front();
            self.bytes -= len as u64;
            seen.changed(start, self.q.len());
        }
    }

    /// `seen` as it will be once every packet waiting now is in service.
    pub(crate) fn drained(&self, seen: &Occupancy) -> Occupancy {
        let mut seen = seen.clone();
        for (i, &(start, _)) in self.q.iter().enumerate() {
            seen.changed(start, self.q.len() - i - 1);
        }
        seen
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
