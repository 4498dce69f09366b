//! One direction of a link: loss, drop-tail FIFO, serialiser, optional
//! token-bucket shapers, delay.

use crate::loss::Loss;
use crate::queue::{DropReason, QueueLimit, Waiting};
use std::sync::Arc;
use units::{Dur, Rate, Rng, Time};

#[derive(Clone, Debug)]
pub struct LinkConfig {
    pub rate: Rate,
    pub delay: Dur,
    pub queue: QueueLimit,
    pub loss: Loss,
    /// Token buckets behind the serialiser, in series: bursts leave at
    /// `rate`, but no more than each bucket's `burst` bytes above its rate
    /// in any interval (a concave arrival curve, one bucket per piece).
    pub shapers: Vec<Shaper>,
    /// Packets delivered in pairs: a packet that waited in the queue and
    /// does not complete a pair is, with probability `p`, held back until
    /// the packet after it has been serialised too, and both arrive at once
    /// (a Wi-Fi aggregate, a receiver's batched interrupts). A share
    /// p / (1 + p) of consecutive packets then arrive together; the average
    /// rate is unchanged.
    pub bunching: Option<Bunching>,
    /// Windows in which the link sends nothing (a path that stalled).
    pub outages: Option<Outages>,
}

/// Windows `[start, end)` from the start of each `period` (periods run
/// from `from`), sorted and apart, in which a link sends nothing: packets
/// wait in its queue (or are dropped when it is full) and leave, at its
/// rate, when a window ends, as a stalled Wi-Fi or cellular path lets them
/// through.
#[derive(Clone, Debug, PartialEq)]
pub struct Outages {
    windows: Arc<[(Dur, Dur)]>,
    period: Dur,
    from: Time,
}

impl Outages {
    /// `windows` clipped to the period, sorted, overlaps merged; none if
    /// nothing is left.
    pub fn new(mut windows: Vec<(Dur, Dur)>, period: Dur, from: Time) -> Option<Outages> {
        windows.retain(|w| w.0 < w.1 && w.0 < period);
        windows.sort();
        let mut out: Vec<(Dur, Dur)> = Vec::with_capacity(windows.len());
        for (a, b) in windows {
            let b = b.min(period);
            match out.last_mut() {
                Some(last) if a <= last.1 => last.1 = last.1.max(b),
                _ => out.push((a, b)),
            }
        }
        (!out.is_empty() && period > Dur::ZERO).then(|| Outages { windows: out.into(), period, from })
    }

    /// The first instant at or after `t` outside every window.
    pub fn resume(&self, t: Time) -> Time {
        if t < self.from {
            return t;
        }
        let (p, rel) = (self.period.0, t.0 - self.from.0);
        let (base, at) = (self.from.0 + rel - rel % p, Dur(rel % p));
        // The last window starting at or before `at`.
        let i = self.windows.partition_point(|w| w.0 <= at);
        match i.checked_sub(1).map(|i| self.windows[i]) {
            Some((_, end)) if at < end => {
                // A window ending at the period's end may run into one
                // starting at the next period's start.
                let next = Time(base + end.0);
                if end.0 == p {
                    self.resume(next)
                } else {
                    next
                }
            }
            _ => t,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Bunching {
    pub p: f64,
    pub rng: Rng,
}

/// A token bucket of `burst` bytes filled at `rate`, as a cloud host's
/// egress limit or a provider's policer-turned-shaper: a packet leaves the
/// serialiser only when the bucket holds its size, and waits in the queue
/// (head of line) until it does. A packet larger than the bucket waits for
/// a full bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shaper {
    pub rate: Rate,
    pub burst: u32,
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
    /// When each shaper's bucket was (or will be) empty, extrapolating its
    /// fill backwards: it holds min(burst, rate x (t - empty_at)) at t.
    empty_at: Vec<Time>,
    /// When the last accepted packet leaves (before the propagation delay):
    /// no later packet leaves earlier.
    last_out: Time,
    /// The last packet was held for the next (bunching).
    held: bool,
}

impl Link {
    pub fn new(cfg: LinkConfig) -> Link {
        let empty_at = vec![Time::ZERO; cfg.shapers.len()];
        Link { cfg, busy_until: Time::ZERO, waiting: Waiting::default(), stats: LinkStats::default(), empty_at, last_out: Time::ZERO, held: false }
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
        let tx = self.cfg.rate.tx_time(len as u64);
        let mut start = self.busy_until.max(now);
        // Integer nanoseconds throughout, so both engines agree exactly.
        // The last bit leaves once every bucket holds the packet.
        for (sh, &empty) in self.cfg.shapers.iter().zip(&self.empty_at) {
            let ready = empty + sh.rate.tx_time(len.min(sh.burst) as u64);
            if ready > start + tx {
                start = ready - tx;
            }
        }
        if let Some(o) = &self.cfg.outages {
            start = o.resume(start);
        }
        if start > now {
            // It waits, for the serialiser, for tokens or for the path.
            self.waiting.advance(now);
            if !self.waiting.admits(self.cfg.queue, len) {
                self.stats.queue_drops += 1;
                return Verdict::Dropped(DropReason::QueueFull);
            }
            self.waiting.push(start, len);
            let n = self.waiting.packets() as u64;
            if n > self.stats.max_backlog_pkts {
                self.stats.max_backlog_pkts = n;
            }
        }
        self.busy_until = start + tx;
        let mut out = self.busy_until;
        if let Some(b) = &mut self.cfg.bunching {
            // Held for one more packet of its size: the next one, when the
            // queue has it, leaves with it and completes the pair.
            self.held = !self.held && start > now && b.rng.bernoulli(b.p);
            if self.held {
                out = out + tx;
            }
        }
        out = out.max(self.last_out);
        self.last_out = out;
        for (sh, empty) in self.cfg.shapers.iter().zip(&mut self.empty_at) {
            // A bucket never holds more than `burst`: an empty-at more than
            // a full bucket's fill before departure is clamped there.
            let floor = Time(self.busy_until.0.saturating_sub(sh.rate.tx_time(sh.burst as u64).0));
            *empty = (*empty).max(floor) + sh.rate.tx_time(len.min(sh.burst) as u64);
        }
        self.stats.accepted_pkts += 1;
        self.stats.accepted_bytes += len as u64;
        self.stats.queue_delay_sum += start - now;
        Verdict::Deliver(out + self.cfg.delay)
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
            shapers: vec![],
            bunching: None,
            outages: None,
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
        assert_eq!(t, vec![Verdict::Deliver(Time(1_000_000)), Verdict::Deliver(Time(2_000_000)), Verdict::Deliver(Time(3_000_000))]);
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
            shapers: vec![],
            bunching: None,
            outages: None,
        });
        let n = 200_000u64;
        let lost = (0..n).filter(|&i| l.offer(Time(i * 1_000_000), 100) == Verdict::Dropped(DropReason::Loss)).count() as f64;
        assert!((lost / n as f64 - 0.02).abs() < 0.001, "{}", lost / n as f64);
        assert_eq!(l.stats().loss_drops as f64, lost);
    }

    fn shaped(burst: u32) -> Link {
        Link::new(LinkConfig {
            rate: Rate::mbps(96),
            delay: Dur::ZERO,
            queue: QueueLimit::Packets(1000),
            loss: Loss::None,
            shapers: vec![Shaper { rate: Rate::mbps(12), burst }],
            bunching: None,
            outages: None,
        })
    }

    fn departures(l: &mut Link, at: Time, n: usize) -> Vec<u64> {
        (0..n)
            .map(|_| match l.offer(at, 1500) {
                Verdict::Deliver(t) => t.0,
                v => panic!("{v:?}"),
            })
            .collect()
    }

    #[test]
    fn shaper_lets_a_bucket_through_at_line_rate_then_the_sustained_rate() {
        let mut l = shaped(3000);
        // The bucket starts full, so at 1 s it holds 3000 B: two packets
        // leave at 96 Mbit/s (125 us each), leaving 1687 B; the third waits
        // for 1313 B more (875 us), then one leaves per 1 ms (12 Mbit/s).
        let t = Time(1_000_000_000);
        let d: Vec<u64> = departures(&mut l, t, 5).iter().map(|x| x - t.0).collect();
        assert_eq!(d, vec![125_000, 250_000, 1_125_000, 2_125_000, 3_125_000]);
        // Long backlogs average the sustained rate, not the line rate.
        let mut l = shaped(3000);
        let last = *departures(&mut l, t, 1000).last().unwrap() - t.0;
        assert_eq!(last, 1_125_000 + 997 * 1_000_000);
    }

    #[test]
    fn shaper_bucket_refills_at_its_rate_and_never_beyond_burst() {
        let mut l = shaped(3000);
        let t = Time(1_000_000_000);
        departures(&mut l, t, 4);
        // The fourth packet emptied the bucket 2.125 ms after t; at 3.625
        // ms it holds 2250 B: one packet leaves at once, leaving 937 B, and
        // the next waits 375 us for the rest of its 1500 B.
        let t2 = Time(t.0 + 3_625_000);
        let d: Vec<u64> = departures(&mut l, t2, 2).iter().map(|x| x - t2.0).collect();
        assert_eq!(d, vec![125_000, 500_000]);
        // After an hour idle, still only two packets at line rate.
        let t3 = Time(t.0 + 3_600_000_000_000);
        let d: Vec<u64> = departures(&mut l, t3, 3).iter().map(|x| x - t3.0).collect();
        assert_eq!(d, vec![125_000, 250_000, 1_125_000]);
    }

    #[test]
    fn shaped_packets_wait_in_the_queue_and_count_against_its_limit() {
        let mut l = Link::new(LinkConfig {
            rate: Rate::mbps(96),
            delay: Dur::ZERO,
            queue: QueueLimit::Packets(2),
            loss: Loss::None,
            shapers: vec![Shaper { rate: Rate::mbps(12), burst: 1500 }],
            bunching: None,
            outages: None,
        });
        let t = Time(1_000_000_000);
        // One in service, two waiting for tokens; the fourth is dropped,
        // though at line rate the first would long have left.
        for _ in 0..3 {
            assert!(matches!(l.offer(t, 1500), Verdict::Deliver(_)));
        }
        assert_eq!(l.offer(Time(t.0 + 500_000), 1500), Verdict::Dropped(DropReason::QueueFull));
        assert_eq!(l.stats().queue_drops, 1);
    }

    #[test]
    fn shapers_in_series_keep_every_window_under_their_concave_curve() {
        let mut l = Link::new(LinkConfig {
            rate: Rate::mbps(96),
            delay: Dur::ZERO,
            queue: QueueLimit::Packets(1000),
            loss: Loss::None,
            shapers: vec![Shaper { rate: Rate::mbps(48), burst: 3000 }, Shaper { rate: Rate::mbps(12), burst: 9000 }],
            bunching: None,
            outages: None,
        });
        let t = Time(1_000_000_000);
        let d = departures(&mut l, t, 200);
        // Bytes in any window of length tau ending at a departure (the first
        // packet's bits left before the window) are at most each curve.
        for i in 0..d.len() {
            for j in i..d.len() {
                let tau = (d[j] - d[i]) as f64 * 1e-9;
                let bytes = (j - i) as f64 * 1500.0;
                let curve = (96e6 * tau / 8.0).min(3000.0 + 48e6 * tau / 8.0).min(9000.0 + 12e6 * tau / 8.0);
                assert!(bytes <= curve + 1.0, "{} packets in {tau} s", j - i);
            }
        }
        // The first two leave at the line rate, the next at 48 Mbit/s, and
        // the long run at 12 Mbit/s: the 9000 B bucket buys six packets.
        assert_eq!(d[1] - d[0], 125_000);
        assert_eq!(d[3] - d[2], 250_000);
        assert_eq!(d[199] - d[150], 49 * 1_000_000);
    }

    fn bunched(p: f64) -> Link {
        Link::new(LinkConfig {
            rate: Rate::mbps(12),
            delay: Dur::from_millis(5),
            queue: QueueLimit::Packets(100_000),
            loss: Loss::None,
            shapers: vec![],
            bunching: Some(Bunching { p, rng: Rng::stream(7, "bunching") }),
            outages: None,
        })
    }

    #[test]
    fn bunching_delivers_queued_packets_in_pairs_at_the_same_rate() {
        // 10,000 packets of 1500 B at once: 1 ms each at 12 Mbit/s.
        let mut l = bunched(0.3);
        let out = departures(&mut l, Time::ZERO, 10_000);
        // In order, and the last leaves when it would have (or a packet
        // time later, if it was held too).
        assert!(out.windows(2).all(|w| w[0] <= w[1]));
        let end = 5_000_000 + 10_000 * 1_000_000;
        assert!((end..=end + 1_000_000).contains(out.last().unwrap()));
        // A share 0.3 / 1.3 leave with the next one; the rest a packet time
        // apart, and never three at once.
        let together = out.windows(2).filter(|w| w[0] == w[1]).count() as f64 / 9_999.0;
        assert!((together - 0.3 / 1.3).abs() < 0.02, "{together}");
        assert!(out.windows(3).all(|w| w[0] < w[2]));
        assert!(out.windows(2).all(|w| w[1] - w[0] <= 2_000_000));
        // A packet that finds the link idle is never held.
        let mut idle = bunched(1.0);
        let spaced: Vec<u64> = (0..100u64)
            .map(|i| match idle.offer(Time(i * 2_000_000), 1500) {
                Verdict::Deliver(t) => t.0 - i * 2_000_000,
                v => panic!("{v:?}"),
            })
            .collect();
        assert!(spaced.iter().all(|&d| d == 6_000_000), "{spaced:?}");
    }

    #[test]
    fn an_outage_holds_packets_and_releases_them_at_the_rate() {
        // 12 Mbit/s (1 ms per 1500 B), 5 ms delay; out from 100 to 300 ms
        // of every second, counted from 1 s.
        let ms = Dur::from_millis;
        let o = Outages::new(vec![(ms(300), ms(400)), (ms(100), ms(300)), (ms(2000), ms(2100))], Dur::from_secs(1), Time(1_000_000_000));
        let o = o.unwrap();
        let t = |x: u64| Time(x * 1_000_000);
        assert_eq!(o.resume(t(150)), t(150)); // before the first period
        assert_eq!(o.resume(t(1150)), t(1400)); // merged window 100-400 ms
        assert_eq!(o.resume(t(1400)), t(1400));
        assert_eq!(o.resume(t(3150)), t(3400));
        // (the window past the period was dropped)
        assert_eq!(o.resume(t(3099)), t(3099));
        assert_eq!(Outages::new(vec![(ms(5), ms(5))], Dur::from_secs(1), Time::ZERO), None);
        let mut l = Link::new(LinkConfig { outages: Some(o), ..link(12, 5, QueueLimit::Packets(3)).config().clone() });
        // Before the window: at once.
        assert_eq!(l.offer(t(1050), 1500), Verdict::Deliver(t(1056)));
        // In it: held to its end, then one after the other; the fourth
        // finds the queue full.
        let d: Vec<_> = (0..4).map(|k| l.offer(t(1200 + k), 1500)).collect();
        assert_eq!(d[..3], [Verdict::Deliver(t(1406)), Verdict::Deliver(t(1407)), Verdict::Deliver(t(1408))]);
        assert_eq!(d[3], Verdict::Dropped(DropReason::QueueFull));
        // Every period.
        assert_eq!(l.offer(t(2150), 1500), Verdict::Deliver(t(2406)));
    }
}
