//! One direction of a link: loss, drop-tail FIFO, serialiser, delay.

use crate::loss::Loss;
use crate::queue::{DropReason, QueueLimit, Waiting};
use units::{Dur, Rate, Time};

#[derive(Clone, Debug)]
pub struct LinkConfig {
    pub rate: Rate,
    pub delay: Dur,
    pub queue: QueueLimit,
    pub loss: Loss,
}

/// What happened to an offered packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Its last bit reaches the far end at this instant.
    Deliver(Time),
    Dropped(DropReason),
}

/// Counters kept by the link itself, at the moment of admission.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LinkStats {
    pub accepted_pkts: u64,
    pub accepted_bytes: u64,
    pub queue_drops: u64,
    pub loss_drops: u64,
    /// Sum over accepted packets of the time spent waiting for the
    /// serialiser (not counting their own transmission).
    pub queue_delay_sum: Dur,
    pub max_backlog_pkts: u64,
}

#[derive(Clone, Debug)]
pub struct Link {
    cfg: LinkConfig,
    /// When the serialiser finishes the last accepted packet.
    busy_until: Time,
    waiting: Waiting,
    stats: LinkStats,
}

impl Link {
    pub fn new(cfg: LinkConfig) -> Link {
        Link { cfg, busy_until: Time::ZERO, waiting: Waiting::default(), stats: LinkStats::default() }
    }

    pub fn config(&self) -> &LinkConfig {
        &self.cfg
    }

    pub fn stats(&self) -> &LinkStats {
        &self.stats
    }

    /// A packet of `len` bytes arrives at the link at `now`.
    #[inline]
    pub fn offer(&mut self, now: Time, len: u32) -> Verdict {
        if self.cfg.loss.drops() {
            self.stats.loss_drops += 1;
            return Verdict::Dropped(DropReason::Loss);
        }
        let start = if self.busy_until <= now {
            // Idle serialiser: nothing can be waiting either.
            now
        } else {
            self.waiting.advance(now);
            if !self.waiting.admits(self.cfg.queue, len) {
                self.stats.queue_drops += 1;
                return Verdict::Dropped(DropReason::QueueFull);
            }
            self.waiting.push(self.busy_until, len);
            let n = self.waiting.packets() as u64;
            if n > self.stats.max_backlog_pkts {
                self.stats.max_backlog_pkts = n;
            }
            self.busy_until
        };
        self.busy_until = start + self.cfg.rate.tx_time(len as u64);
        self.stats.accepted_pkts += 1;
        self.stats.accepted_bytes += len as u64;
        self.stats.queue_delay_sum += start - now;
        Verdict::Deliver(self.busy_until + self.cfg.delay)
    }

    /// Packets waiting (not in service) at `now`.
    pub fn backlog_pkts(&mut self, now: Time) -> usize {
        self.waiting.advance(now);
        self.waiting.packets()
    }

    /// Bytes waiting (not in service) at `now`.
    pub fn backlog_bytes(&mut self, now: Time) -> u64 {
        self.waiting.advance(now);
        self.waiting.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use units::Rng;

    fn link(rate_mbps: u64, delay_ms: u64, queue: QueueLimit) -> Link {
        Link::new(LinkConfig {
            rate: Rate::mbps(rate_mbps),
            delay: Dur::from_millis(delay_ms),
            queue,
            loss: Loss::None,
        })
    }

    #[test]
    fn idle_link_delivers_after_tx_plus_delay() {
        let mut l = link(12, 10, QueueLimit::Packets(10));
        // 1500 B at 12 Mbps = 1 ms.
        assert_eq!(l.offer(Time(0), 1500), Verdict::Deliver(Time(11_000_000)));
        assert_eq!(l.stats().queue_delay_sum, Dur::ZERO);
    }

    #[test]
    fn back_to_back_packets_queue_fifo() {
        let mut l = link(12, 0, QueueLimit::Packets(10));
        let t: Vec<_> = (0..3).map(|_| l.offer(Time(0), 1500)).collect();
        assert_eq!(
            t,
            vec![
                Verdict::Deliver(Time(1_000_000)),
                Verdict::Deliver(Time(2_000_000)),
                Verdict::Deliver(Time(3_000_000))
            ]
        );
        // Second waited 1 ms, third 2 ms.
        assert_eq!(l.stats().queue_delay_sum, Dur::from_millis(3));
    }

    #[test]
    fn drop_tail_counts_waiting_packets_only() {
        let mut l = link(12, 0, QueueLimit::Packets(2));
        // One in service plus two waiting fit; the fourth is dropped.
        for _ in 0..3 {
            assert!(matches!(l.offer(Time(0), 1500), Verdict::Deliver(_)));
        }
        assert_eq!(l.offer(Time(0), 1500), Verdict::Dropped(DropReason::QueueFull));
        // At 1 ms the second packet enters service, freeing a slot.
        assert_eq!(l.offer(Time(1_000_000), 1500), Verdict::Deliver(Time(4_000_000)));
        assert_eq!(l.stats().queue_drops, 1);
        assert_eq!(l.backlog_pkts(Time(1_000_000)), 2);
        assert_eq!(l.backlog_pkts(Time(3_000_000)), 0);
    }

    #[test]
    fn byte_limit() {
        let mut l = link(12, 0, QueueLimit::Bytes(2000));
        assert!(matches!(l.offer(Time(0), 1500), Verdict::Deliver(_))); // in service
        assert!(matches!(l.offer(Time(0), 1500), Verdict::Deliver(_))); // waits: 1500 B
        assert_eq!(l.offer(Time(0), 1000), Verdict::Dropped(DropReason::QueueFull));
        assert!(matches!(l.offer(Time(0), 500), Verdict::Deliver(_))); // exactly 2000 B
    }

    #[test]
    fn bernoulli_loss_rate() {
        let mut l = Link::new(LinkConfig {
            rate: Rate::mbps(1000),
            delay: Dur::ZERO,
            queue: QueueLimit::Packets(1_000_000),
            loss: Loss::bernoulli(0.02, Rng::stream(3, "loss")),
        });
        let n = 200_000u64;
        let lost = (0..n)
            .filter(|&i| l.offer(Time(i * 1_000_000), 100) == Verdict::Dropped(DropReason::Loss))
            .count() as f64;
        assert!((lost / n as f64 - 0.02).abs() < 0.001, "{}", lost / n as f64);
        assert_eq!(l.stats().loss_drops as f64, lost);
    }
}
