//! What an observed path carries: bytes, packets and drops per time bin.
//!
//! Packets are counted when their last bit reaches the far end of the link
//! (as ns-3's PhyRxEnd trace does), drops when the link refuses them. How
//! full its queue was the queue keeps itself ([`crate::queue::Occupancy`]).

use crate::fabric::Fabric;
use units::{Dur, Time};

/// The monitors of `fabric`'s observed paths (the bottleneck, forward and
/// back) for a run of `duration` in bins of `bin`; their queues are watched
/// in the same bins.
pub fn observe(fabric: &mut Fabric, bin: Dur, duration: Dur) -> Vec<Monitor> {
    for slot in fabric.paths.iter_mut().filter(|s| s.monitor.is_some()) {
        if let Some(q) = slot.path.queue_mut() {
            q.watch(bin, duration);
        }
    }
    (0..2).map(|_| Monitor::new(bin, duration)).collect()
}

/// Bytes, packets and drops per time bin, plus run totals.
pub struct Monitor {
    pub bin: Dur,
    pub bytes: Vec<u32>,
    pub pkts: Vec<u32>,
    pub drops: Vec<u32>,
    pub total_bytes: u64,
    pub total_pkts: u64,
    pub total_drops: u64,
    /// The bin of the latest count and its span [start, end): most counts
    /// fall in it, which saves a division each.
    last: (usize, u64, u64),
}

impl Monitor {
    pub fn new(bin: Dur, duration: Dur) -> Monitor {
        let n = duration.0.div_ceil(bin.0) as usize;
        Monitor { bin, bytes: vec![0; n], pkts: vec![0; n], drops: vec![0; n], total_bytes: 0, total_pkts: 0, total_drops: 0, last: (0, 0, 0) }
    }

    /// Keeps the bins before `end` only (a run that ended early).
    pub fn truncate(&mut self, end: Time) {
        let n = (end.0.div_ceil(self.bin.0) as usize).min(self.bytes.len());
        self.bytes.truncate(n);
        self.pkts.truncate(n);
        self.drops.truncate(n);
    }

    #[inline]
    fn slot(&mut self, t: Time) -> Option<usize> {
        let (mut i, start, end) = self.last;
        if !(start..end).contains(&t.0) {
            i = (t.0 / self.bin.0) as usize;
            let start = i as u64 * self.bin.0;
            self.last = (i, start, start + self.bin.0);
        }
        (i < self.bytes.len()).then_some(i)
    }

    #[inline]
    pub fn arrived(&mut self, t: Time, size: u32) {
        if let Some(i) = self.slot(t) {
            self.bytes[i] = self.bytes[i].saturating_add(size);
            self.pkts[i] += 1;
        }
        self.total_bytes += size as u64;
        self.total_pkts += 1;
    }

    #[inline]
    pub fn dropped(&mut self, t: Time) {
        if let Some(i) = self.slot(t) {
            self.drops[i] += 1;
        }
        self.total_drops += 1;
    }
}
