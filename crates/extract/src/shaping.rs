//! A host's sending envelope: how fast it sustained long sends, against how
//! fast its bursts left.
//!
//! Packet pairs give the rate at which a host's back-to-back packets cross
//! its path. Some hosts (cloud machines behind an egress limit, links behind
//! a provider's shaper) send bursts at that rate but cannot keep it up: a
//! long send leaves in trains at the pair rate with gaps between them, at a
//! far lower average. A virtual host with only the pair rate as its access
//! capacity sends the same data in one train, and the regenerated traffic is
//! burstier at round-trip scales than the trace. This module measures what
//! a token bucket behind the capacity needs: the sustained rate and the
//! burst.
//!
//! - A *stretch* is a run of the host's data segments (all its connections
//!   together, as a shaper sees them) with no gap longer than g. For each g
//!   in `GAPS_NS` the fastest stretch of at least `min_segments` is kept;
//!   the end of the pass picks the largest g no longer than half the host's
//!   RTT (`STRETCH_GAP_RTTS`), so that a stretch spans a shaper's gaps but
//!   not the idle of a window-limited sender waiting for ACKs.
//! - The *envelope* is the most bytes the host sent in any window of each
//!   length in `TAUS_NS`; the burst is the most any window held above the
//!   sustained rate.
//!
//! Per packet the cost is a few comparisons: the envelope windows are
//! cursors into a queue of the last 32 ms of the host's data segments.

use std::collections::VecDeque;
use swing::HostShaper;

/// Gaps that end a stretch.
const GAPS_NS: [i64; 5] = [4_000_000, 8_000_000, 16_000_000, 32_000_000, 64_000_000];
/// Envelope windows.
const TAUS_NS: [i64; 6] = [1_000_000, 2_000_000, 4_000_000, 8_000_000, 16_000_000, 32_000_000];
/// A stretch's gap is the largest of `GAPS_NS` no longer than this share of
/// the host's RTT: long enough to span a shaper's gaps, too short to span a
/// window-limited sender's wait for ACKs, most of a round trip.
const STRETCH_GAP_RTTS: f64 = 0.5;
/// A bucket holds at least two full packets.
const MIN_BURST: u64 = 3000;

#[derive(Clone, Copy, Debug, Default)]
struct Stretch {
    start: i64,
    last: i64,
    bytes: u64,
    /// The first segment's bytes: n segments span n - 1 intervals.
    first: u64,
    segs: u32,
}

impl Stretch {
    fn bps(&self) -> Option<f64> {
        (self.last > self.start).then(|| (self.bytes - self.first) as f64 * 8e9 / (self.last - self.start) as f64)
    }
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Sending {
    open: [Stretch; GAPS_NS.len()],
    /// Fastest finished stretch (bit/s) and how many there were, per gap.
    best: [f64; GAPS_NS.len()],
    count: [u64; GAPS_NS.len()],
    /// (time, bytes sent before it) of the data segments in the last 32 ms.
    recent: VecDeque<(i64, u64)>,
    /// Segments dropped from the front of `recent`, so cursors are absolute.
    popped: u64,
    /// Per window: the first segment inside it, as an absolute index.
    heads: [u64; TAUS_NS.len()],
    sent: u64,
    envelope: [u64; TAUS_NS.len()],
    last: i64,
}

impl Sending {
    /// A data segment of `bytes` (IP) the host sent at `t` (ns).
    #[inline]
    pub(crate) fn data(&mut self, t: i64, bytes: u64, min_segments: u32) {
        // A segment captured out of order counts as sent with the last one.
        let t = t.max(self.last);
        self.last = t;
        for (k, &g) in GAPS_NS.iter().enumerate() {
            let s = &mut self.open[k];
            if s.segs > 0 && t - s.last <= g {
                s.last = t;
                s.bytes += bytes;
                s.segs += 1;
            } else {
                if s.segs >= min_segments {
                    if let Some(r) = s.bps() {
                        self.best[k] = self.best[k].max(r);
                        self.count[k] += 1;
                    }
                }
                *s = Stretch { start: t, last: t, bytes, first: bytes, segs: 1 };
            }
        }
        let horizon = TAUS_NS[TAUS_NS.len() - 1];
        while self.recent.front().is_some_and(|&(t0, _)| t - t0 >= horizon) {
            self.recent.pop_front();
            self.popped += 1;
        }
        self.recent.push_back((t, self.sent));
        self.sent += bytes;
        for (k, &tau) in TAUS_NS.iter().enumerate() {
            let h = &mut self.heads[k];
            *h = (*h).max(self.popped);
            while self.recent[(*h - self.popped) as usize].0 <= t - tau {
                *h += 1;
            }
            let before = self.recent[(*h - self.popped) as usize].1;
            self.envelope[k] = self.envelope[k].max(self.sent - before);
        }
    }

    /// The token bucket the host's sending shows, if its sustained rate was
    /// under `max_fraction` of `capacity_bps`.
    pub(crate) fn shaper(&self, rtt_s: Option<f64>, capacity_bps: Option<f64>, min_segments: u32, max_fraction: Option<f64>) -> Option<HostShaper> {
        let (rtt, cap, frac) = (rtt_s?, capacity_bps?, max_fraction?);
        let k = GAPS_NS.iter().rposition(|&g| g as f64 <= rtt * 1e9 * STRETCH_GAP_RTTS).unwrap_or(0);
        let open = self.open[k];
        let tail = open.bps().filter(|_| open.segs >= min_segments);
        let rate = self.best[k].max(tail.unwrap_or(0.0));
        let stretches = self.count[k] + tail.is_some() as u64;
        if stretches == 0 || rate <= 0.0 || rate >= frac * cap {
            return None;
        }
        let burst = TAUS_NS
            .iter()
            .zip(&self.envelope)
            .map(|(&tau, &e)| (e as f64 - rate * tau as f64 / 8e9).max(0.0) as u64)
            .max()
            .unwrap_or(0)
            .max(MIN_BURST);
        Some(HostShaper { rate_bps: rate, burst_bytes: burst, stretches, peaks: self.peaks(rate, cap) })
    }

    /// The pieces of the envelope's upper concave hull (from the origin)
    /// steeper than `rate` and flatter than `cap`, as [bit/s, bytes]
    /// buckets: in series with the sustained one they allow no window more
    /// than the trace host sent in it (at the measured window lengths).
    fn peaks(&self, rate: f64, cap: f64) -> Vec<[f64; 2]> {
        let pts: Vec<(f64, f64)> =
            std::iter::once((0.0, 0.0)).chain(TAUS_NS.iter().zip(&self.envelope).map(|(&t, &e)| (t as f64 * 1e-9, e as f64 * 8.0))).collect();
        let mut hull: Vec<(f64, f64)> = Vec::new();
        for p in pts {
            while hull.len() >= 2 {
                let (a, b) = (hull[hull.len() - 2], hull[hull.len() - 1]);
                // b lies on or under the chord from a to p: not on the hull.
                if (b.1 - a.1) * (p.0 - a.0) <= (p.1 - a.1) * (b.0 - a.0) {
                    hull.pop();
                } else {
                    break;
                }
            }
            hull.push(p);
        }
        hull.windows(2)
            .filter_map(|w| {
                let s = (w[1].1 - w[0].1) / (w[1].0 - w[0].0);
                let bits = w[0].1 - s * w[0].0;
                (s > rate && s < cap).then(|| [s, (bits / 8.0).max(MIN_BURST as f64).round()])
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    /// Trains of `n` 1500-byte packets at 100 Mbit/s (120 us apart), one
    /// train every `every` ns, `trains` of them.
    fn trains(s: &mut Sending, t0: i64, n: u32, every: i64, trains: u32) {
        for j in 0..trains as i64 {
            for i in 0..n as i64 {
                s.data(t0 + j * every + i * 120_000, 1500, 16);
            }
        }
    }

    #[test]
    fn trains_with_gaps_are_a_bucket_behind_the_capacity() {
        let mut s = Sending::default();
        // 20 packets (30 kB) every 10 ms: 24 Mbit/s sustained.
        trains(&mut s, 0, 20, 10 * MS, 30);
        let sh = s.shaper(Some(0.040), Some(100e6), 16, Some(0.5)).unwrap();
        // One stretch (gap 16 ms at a 40 ms RTT) of 600 packets over
        // 292.28 ms.
        assert_eq!(sh.stretches, 1);
        let want = 599.0 * 1500.0 * 8.0 / 0.29228;
        assert!((sh.rate_bps - want).abs() < 1.0, "{}", sh.rate_bps);
        // The bucket holds what the sustained rate does not explain: most
        // in the 2 ms window, 17 packets (25.5 kB) less 2 ms at 24.6 Mbit/s.
        assert_eq!(sh.burst_bytes, (25_500.0 - want * 0.002 / 8.0) as u64);
        // Its 1-2 ms windows (9 and 17 packets) make a steeper piece of the
        // envelope's hull, 96 Mbit/s, under the 100 Mbit/s capacity; the
        // piece from 1 ms is the capacity's own and the one from 2 ms is
        // flatter than the sustained rate.
        assert_eq!(sh.peaks.len(), 1, "{:?}", sh.peaks);
        assert!((sh.peaks[0][0] - 96e6).abs() < 1.0 && sh.peaks[0][1] == 3000.0, "{:?}", sh.peaks);
        // Against a slower capacity the same sending is no shaper.
        assert_eq!(s.shaper(Some(0.040), Some(40e6), 16, Some(0.5)), None);
        assert_eq!(s.shaper(Some(0.040), Some(100e6), 16, None), None, "disabled");
        assert_eq!(s.shaper(None, Some(100e6), 16, Some(0.5)), None, "no RTT");
    }

    #[test]
    fn a_window_limited_sender_idle_between_round_trips_is_not_shaped() {
        let mut s = Sending::default();
        // 20 packets every 40 ms at a 40 ms RTT: the stretch gap is 16 ms,
        // so each train is its own stretch, at the line rate.
        trains(&mut s, 0, 20, 40 * MS, 30);
        assert_eq!(s.shaper(Some(0.040), Some(100e6), 16, Some(0.5)), None);
        // Short trains are no stretches at all.
        let mut s = Sending::default();
        trains(&mut s, 0, 10, 40 * MS, 30);
        assert_eq!(s.shaper(Some(0.040), Some(100e6), 16, Some(0.5)), None);
    }

    #[test]
    fn envelope_counts_the_most_bytes_in_each_window() {
        let mut s = Sending::default();
        trains(&mut s, 0, 20, 10 * MS, 3);
        // 1 ms holds 9 packets (0..0.96 ms); 32 ms holds all 60.
        assert_eq!(s.envelope[0], 9 * 1500);
        assert_eq!(s.envelope[5], 60 * 1500);
        // Out-of-order timestamps do not break the cursors.
        s.data(5 * MS, 1500, 16);
        assert_eq!(s.envelope[5], 61 * 1500);
    }
}
