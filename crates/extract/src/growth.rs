//! How a sender's window grows in slow start: by one segment per ACK, or by
//! the bytes each ACK acknowledges (RFC 3465 byte counting, as Linux does).
//!
//! A flight begun with nothing unacknowledged goes out in rounds: a
//! sender whose window limits it sends a flight, waits a round trip for its
//! ACKs, and sends the next on them, its window grown by what those ACKs
//! earned. Round `k`'s
//! flight is what it sent past the highest byte the ACKs of round `k - 1`
//! covered (`U(k-1)`), so the window grew between two rounds by
//! `G = F(k+1) - F(k)`. Round `k`'s ACKs (`A` of them, acknowledging `B`
//! segments) earn `G = A` per ACK and `G = B` by byte counting, which a
//! receiver's delayed ACKs tell apart (every other segment: per ACK grows
//! a window by 1.5 a round, byte counting by 2). The share of the way from
//! one to the other, pooled over rounds, is the host's estimate
//! (`Growth::per_byte`).
//!
//! Only rounds that show the window: of a connection whose handshake was
//! seen, each round a cluster within the span of a first flight
//! (`tcpflow`) followed by a pause (the path was not full), ending with a
//! full segment, the next sent on its ACKs (an application with nothing to send
//! ends short or waits longer), nothing lost or reported lost, under the
//! receiver's window, and flights of less than `HYSTART_LOW_WINDOW`, under
//! which Linux's HyStart never ends slow start early (a window in
//! congestion avoidance would pass for per-ACK growth). ACKs are counted by
//! their acknowledgement numbers, which a capture sees alike anywhere on
//! the path; only the rounds' clustering uses time.

use crate::stream::Flight;

/// Flights of this many segments or more are left out: Linux's HyStart
/// (`hystart_low_window`) may end slow start from there.
pub(crate) const HYSTART_LOW_WINDOW: f64 = 16.0;

/// Segments of difference between the two hypotheses (`B - A` over its
/// rounds) a host needs for an estimate: with an ACK per segment, as a
/// receiver in quick-ACK mode sends, both grow alike and the rounds say
/// nothing.
pub(crate) const GROWTH_MIN_SEGMENTS: f64 = 4.0;

/// One round of a direction's slow start: its data's offsets, when it
/// began and ended, and the ACKs (count, highest offset) of its data.
#[derive(Clone, Copy, Debug)]
struct Round {
    start: i64,
    last: i64,
    from: i64,
    to: i64,
    last_len: u32,
    /// What the sender had in flight as the round ended: `to` less the
    /// highest offset the previous round's ACKs covered, bytes (set when
    /// the round ends, as those ACKs may still come during it).
    flight: i64,
    acks: u32,
    /// The highest offset its own ACKs covered, and when the first came.
    acked_to: i64,
    first_ack: Option<i64>,
}

/// A direction's slow-start rounds: those of the flight being read, until
/// they stop showing the window, and whether a loss ended slow start.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Rounds {
    prev: Option<Round>,
    cur: Option<Round>,
    lost: bool,
    /// The largest segment of new data the direction sent: its sender's
    /// segment size, which a path's MTU may hold below the MSS announced.
    largest: i64,
}

/// What the connection says of its rounds: the timing that separates
/// them (from its round trip), the segment size and the receiver's window.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RoundTiming {
    /// The MSS the receiver announced, and its latest window (bytes).
    pub mss: i64,
    pub rwnd: Option<i64>,
    /// A round's segments come within this of its first (ns).
    pub span: i64,
    /// The quiet after a round, and the least time from a round's first
    /// segment to the next round's, that show the sender waited for ACKs.
    pub pause: i64,
    pub next_after: i64,
    /// The next round comes this soon after the first ACK of a round's
    /// data reaches the capture.
    pub on_ack: i64,
}

/// What a new data segment closes: a pair of rounds whose window growth
/// can be read, in bytes (`grew`), with the ACKs between them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct RoundPair {
    pub grew: i64,
    pub acks: u32,
    pub acked: i64,
    /// The sender's segment size.
    pub seg: i64,
}

impl Rounds {
    /// Stops for good at a loss (a retransmission, or a loss report from
    /// the receiver): the window grows in congestion avoidance from there.
    pub(crate) fn stop(&mut self) {
        self.lost = true;
        self.end();
    }

    /// The sender's segment size: its largest segment, unless under 500
    /// bytes (it sent none full yet) or over the receiver's MSS.
    fn seg(&self, mss: i64) -> i64 {
        if self.largest >= 500 {
            self.largest.min(mss)
        } else {
            mss
        }
    }

    /// Ends the flight being read.
    fn end(&mut self) {
        self.prev = None;
        self.cur = None;
    }

    /// A segment of new data `s0..e0` at `t`. `fresh`: sent with nothing
    /// of the direction unacknowledged (it may begin a flight). Returns the
    /// pair of rounds this segment's round closes, if it shows the window's
    /// growth.
    pub(crate) fn segment(&mut self, t: i64, s0: i64, e0: i64, fresh: bool, k: RoundTiming) -> Option<RoundPair> {
        if self.lost {
            return None;
        }
        self.largest = self.largest.max(e0 - s0);
        let seg = self.seg(k.mss);
        let Some(cur) = self.cur.as_mut() else {
            if fresh {
                self.cur = Some(Round {
                    start: t,
                    last: t,
                    from: s0,
                    to: e0,
                    last_len: (e0 - s0) as u32,
                    flight: e0 - s0,
                    acks: 0,
                    acked_to: s0,
                    first_ack: None,
                });
            }
            return None;
        };
        if t < cur.start + k.span {
            cur.to = cur.to.max(e0);
            cur.last = t;
            cur.last_len = (e0 - s0) as u32;
            return None;
        }
        // The round is over: it showed the window if the sender paused
        // for ACKs, ended it full and sent this segment on them, under
        // the receiver's window.
        cur.flight = cur.to - self.prev.map_or(cur.from, |p| p.acked_to);
        let waited = t - cur.last >= k.pause && t - cur.start >= k.next_after;
        let on_ack = cur.first_ack.is_some_and(|a| t >= a && t - a <= k.on_ack);
        let full = Flight::full(cur.last_len, Some(seg as u16));
        let open = k.rwnd.is_none_or(|w| cur.flight + seg <= w);
        let shown = waited && on_ack && full && open && (cur.flight as f64) < HYSTART_LOW_WINDOW * seg as f64;
        if !shown {
            // The flight no longer shows the window; a later one begun with
            // nothing unacknowledged may.
            self.end();
            return self.segment(t, s0, e0, fresh, k);
        }
        let cur = *cur;
        // The previous round's ACKs covered from where those of the round
        // before it left off (its `to` less its flight).
        let pair = self.prev.filter(|p| p.acks > 0).map(|p| RoundPair {
            grew: cur.flight - p.flight,
            acks: p.acks,
            acked: p.acked_to - (p.to - p.flight),
            seg,
        });
        let next = Round {
            start: t,
            last: t,
            from: s0,
            to: e0,
            last_len: (e0 - s0) as u32,
            flight: e0 - cur.acked_to,
            acks: 0,
            acked_to: cur.acked_to,
            first_ack: None,
        };
        self.prev = self.cur.replace(next);
        pair
    }

    /// An ACK at `t` that moved the cumulative acknowledgement from `from`
    /// to `a`: counted in the round whose data it covers last.
    pub(crate) fn ack(&mut self, t: i64, from: i64, a: i64) {
        if a <= from {
            return;
        }
        for r in [self.cur.as_mut(), self.prev.as_mut()].into_iter().flatten() {
            if a > r.from && a <= r.to {
                r.acks += 1;
                r.acked_to = r.acked_to.max(a);
                r.first_ack.get_or_insert(t);
                return;
            }
        }
    }
}

/// A host's slow-start rounds, pooled: window growth, ACKs and segments
/// acknowledged, in segments.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Growth {
    pub pairs: u64,
    grew: f64,
    acks: f64,
    acked: f64,
}

impl Growth {
    pub(crate) fn add(&mut self, p: RoundPair) {
        let seg = p.seg.max(1) as f64;
        self.pairs += 1;
        self.grew += p.grew as f64 / seg;
        self.acks += p.acks as f64;
        self.acked += p.acked as f64 / seg;
    }

    /// The share of the way from per-ACK growth (0) to byte counting (1)
    /// its windows grew, when its rounds tell them apart by at least
    /// `GROWTH_MIN_SEGMENTS`.
    pub(crate) fn per_byte(&self) -> Option<f64> {
        let spread = self.acked - self.acks;
        (spread >= GROWTH_MIN_SEGMENTS).then(|| ((self.grew - self.acks) / spread).clamp(0.0, 1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;
    const MSS: i64 = 1460;

    fn timing() -> RoundTiming {
        // A 100 ms round trip, the capture at the sender.
        RoundTiming { mss: MSS, rwnd: None, span: 80 * MS, pause: 25 * MS, next_after: 90 * MS, on_ack: 2 * MS }
    }

    /// A sender at the capture, its receiver ACKing every other segment
    /// 100 ms later, growing its window from `iw` segments by `per_ack`
    /// (true: one segment per ACK; false: the segments each ACK covers),
    /// `rounds` rounds. Returns its pooled growth.
    fn slow_start(iw: i64, per_ack: bool, rounds: usize) -> Growth {
        let (mut r, mut g) = (Rounds::default(), Growth::default());
        let (mut cwnd, mut sent, mut acked, mut t) = (iw, 0i64, 0i64, 0i64);
        let mut first = true;
        // Segments sent at `t`, up to the window.
        let send = |r: &mut Rounds, g: &mut Growth, t: i64, sent: &mut i64, acked: i64, cwnd: i64, first: &mut bool| {
            while *sent < acked + cwnd {
                if let Some(p) = r.segment(t, *sent * MSS, (*sent + 1) * MSS, *first, timing()) {
                    g.add(p);
                }
                *first = false;
                *sent += 1;
            }
        };
        send(&mut r, &mut g, t, &mut sent, acked, cwnd, &mut first);
        for _ in 0..rounds {
            t += 100 * MS;
            let upto = sent;
            while acked < upto {
                let a = (acked + 2).min(upto);
                r.ack(t, acked * MSS, a * MSS);
                cwnd += if per_ack { 1 } else { a - acked };
                acked = a;
                send(&mut r, &mut g, t + MS / 10, &mut sent, acked, cwnd, &mut first);
            }
        }
        g
    }

    #[test]
    fn per_ack_growth_reads_as_none_of_the_bytes() {
        let g = slow_start(2, true, 5);
        assert!(g.pairs >= 3, "{g:?}");
        assert_eq!(g.per_byte(), Some(0.0));
    }

    #[test]
    fn byte_counting_reads_as_all_of_the_bytes() {
        let g = slow_start(3, false, 3);
        assert!(g.pairs >= 2, "{g:?}");
        assert_eq!(g.per_byte(), Some(1.0));
    }

    #[test]
    fn flights_past_hystarts_low_window_are_left_out() {
        // From 10 segments, per-ACK growth reaches 15 then 22: only the
        // first pair of rounds stays under 16.
        let g = slow_start(10, true, 4);
        assert_eq!(g.pairs, 1, "{g:?}");
        assert_eq!(g.per_byte(), Some(0.0));
    }

    #[test]
    fn a_round_ended_short_or_late_ends_the_count() {
        let k = timing();
        let mut r = Rounds::default();
        assert_eq!(r.segment(0, 0, MSS, true, k), None);
        assert_eq!(r.segment(MS / 10, MSS, 2 * MSS - 500, false, k), None);
        r.ack(100 * MS, 0, 2 * MSS - 500);
        // Short last segment: the application had no more.
        assert_eq!(r.segment(100 * MS + MS / 10, 2 * MSS - 500, 3 * MSS, false, k), None);
        assert!(r.cur.is_none() && r.prev.is_none());
        let mut r = Rounds::default();
        r.segment(0, 0, MSS, true, k);
        r.ack(100 * MS, 0, MSS);
        // Sent long after the ACK: an application's pause.
        r.segment(300 * MS, MSS, 2 * MSS, false, k);
        assert!(r.cur.is_none() && r.prev.is_none());
    }

    #[test]
    fn a_window_the_receiver_fills_ends_the_count() {
        let k = RoundTiming { rwnd: Some(2 * MSS), ..timing() };
        let mut r = Rounds::default();
        r.segment(0, 0, MSS, true, k);
        r.segment(MS / 10, MSS, 2 * MSS, false, k);
        r.ack(100 * MS, 0, 2 * MSS);
        r.segment(100 * MS + MS / 10, 2 * MSS, 3 * MSS, false, k);
        assert!(r.cur.is_none() && r.prev.is_none());
    }

    #[test]
    fn a_later_flight_begun_with_nothing_unacknowledged_is_read_until_a_loss() {
        let k = timing();
        let mut r = Rounds::default();
        // A response that fitted one flight, ended short: no pair.
        r.segment(0, 0, MSS, true, k);
        r.segment(MS / 10, MSS, 2 * MSS - 500, false, k);
        r.ack(100 * MS, 0, 2 * MSS - 500);
        // The next, a second later, begins a flight of its own: 2 segments,
        // one ACK of both, then 3 (per-ACK growth).
        let b = 2 * MSS - 500;
        r.segment(1000 * MS, b, b + MSS, true, k);
        r.segment(1000 * MS + MS / 10, b + MSS, b + 2 * MSS, false, k);
        r.ack(1100 * MS, b, b + 2 * MSS);
        for i in 0..3 {
            assert_eq!(r.segment(1100 * MS + MS / 10, b + (2 + i) * MSS, b + (3 + i) * MSS, false, k), None);
        }
        r.ack(1200 * MS, b + 2 * MSS, b + 5 * MSS);
        let p = r.segment(1200 * MS + MS / 10, b + 5 * MSS, b + 6 * MSS, false, k);
        assert_eq!(p, Some(RoundPair { grew: MSS, acks: 1, acked: 2 * MSS, seg: MSS }));
        // A loss ends slow start: nothing more is read, fresh or not.
        r.stop();
        r.ack(1300 * MS, b + 5 * MSS, b + 6 * MSS);
        assert_eq!(r.segment(2000 * MS, b + 6 * MSS, b + 7 * MSS, true, k), None);
        assert!(r.cur.is_none());
    }

    #[test]
    fn rounds_that_cannot_tell_the_two_apart_give_no_estimate() {
        let mut g = Growth::default();
        // An ACK per segment: both hypotheses give the same growth.
        g.add(RoundPair { grew: 4 * MSS, acks: 4, acked: 4 * MSS, seg: MSS });
        assert_eq!(g.per_byte(), None);
    }
}
