//! One direction of a TCP connection as a byte stream: sequence numbers
//! turned into offsets, the highest byte seen, holes (gaps skipped and
//! filled later), the last data segment (for packet pairs) and the segment
//! being timed for a data→ACK RTT.

/// Open holes remembered per direction; older ones are forgotten.
pub(crate) const MAX_GAPS: usize = 16;

/// New segments remembered per direction, for the ACK that covers one of
/// them alone (`Recent`).
pub(crate) const RECENT_SEGS: usize = 8;

/// The latest segments of new data a direction sent, oldest first: the
/// one an ACK covered alone, when it was sent and when data after it was.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Recent {
    /// (start, end, when seen), `n` of them.
    segs: [(i64, i64, i64); RECENT_SEGS],
    n: u8,
}

impl Recent {
    pub(crate) fn push(&mut self, start: i64, end: i64, t: i64) {
        if (self.n as usize) == RECENT_SEGS {
            self.segs.copy_within(1.., 0);
            self.n -= 1;
        }
        self.segs[self.n as usize] = (start, end, t);
        self.n += 1;
    }

    /// Forgets them all: after data sent again an ACK may answer either copy.
    pub(crate) fn clear(&mut self) {
        self.n = 0;
    }

    /// The segment that ends at `end`, with when the one before it and
    /// the one after it were seen.
    pub(crate) fn ending_at(&self, end: i64) -> Option<Sent> {
        let segs = &self.segs[..self.n as usize];
        let i = segs.iter().position(|&(_, e, _)| e == end)?;
        let (start, _, t) = segs[i];
        let prev_t = i.checked_sub(1).map(|j| segs[j]).filter(|&(_, e, _)| e == start).map(|(_, _, t)| t);
        Some(Sent { start, t, prev_t, next_t: segs.get(i + 1).map(|&(_, _, t)| t) })
    }
}

/// A segment of new data as `Recent` found it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sent {
    pub start: i64,
    /// When it was seen.
    pub t: i64,
    /// When the segment that ends where it starts was (if remembered).
    pub prev_t: Option<i64>,
    /// When the next segment was (none if nothing was sent after it yet).
    pub next_t: Option<i64>,
}

/// A hole: bytes [start, end) skipped by a segment seen at time `t`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Gap {
    pub start: i64,
    pub end: i64,
    pub t: i64,
}

/// A segment sent with nothing before it unacknowledged, until an ACK
/// covers it (`stalls`): its end offset, and when it was first and last
/// sent (ns).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ask {
    pub end: i64,
    pub first: i64,
    pub last: i64,
}

/// The last data segment of a direction, the first half of a packet pair.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Seg {
    pub t: i64,
    pub len: u32,
    pub ack: u32,
}

/// A flight of a direction's data begun with nothing unacknowledged: when
/// it began, the offsets it spans, its largest segment and the last one's
/// time (for the sender's initial window).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Flight {
    pub start: i64,
    pub from: i64,
    pub to: i64,
    pub max_len: u32,
    pub last: i64,
    /// Begun after the direction's earlier data (not its first flight).
    pub later: bool,
    /// When the first ACK of its data was seen.
    pub acked_at: Option<i64>,
    /// The length of its latest segment.
    pub last_len: u32,
}

impl Flight {
    /// The flight in the sender's segments: the bytes it spans over its
    /// segment size (the MSS its receiver announced, or its largest
    /// segment), rounded up. A middlebox that cuts each segment in two (a
    /// large piece and a small one) leaves the sender's count, not its own;
    /// a short first segment (a response's header) counts as one; a
    /// capture that missed part of the flight does not shrink it.
    pub fn segments(&self, mss: Option<u16>) -> u32 {
        let size = (mss.unwrap_or(0) as i64).max(self.max_len as i64).max(1);
        ((self.to - self.from + size - 1) / size).max(1) as u32
    }

    /// Its latest segment filled the MSS the receiver announced (less 60
    /// bytes of options), or 1000 bytes if none was: the sender stopped
    /// with data to send, not at the end of a message (which Nagle's rule
    /// would also hold for the ACK).
    pub fn ends_full(&self, mss: Option<u16>) -> bool {
        Flight::full(self.last_len, mss)
    }

    /// A segment of `len` bytes fills the MSS the receiver announced (less
    /// 60 bytes of options), or 1000 bytes if none was.
    pub fn full(len: u32, mss: Option<u16>) -> bool {
        len + 60 >= mss.map_or(1060, u32::from)
    }
}

/// One direction's byte stream. Offsets are bytes from the first data byte
/// (the byte after the SYN), or from the first sequence seen when the SYN
/// was missed; wraparound is handled by reading each sequence number
/// relative to the highest offset so far.
#[derive(Clone, Debug, Default)]
pub(crate) struct Dir {
    pub base: Option<u32>,
    /// The stream starts at offset 0 (its SYN, or the SYN/ACK's ack, was seen).
    pub from_syn: bool,
    /// End of the highest data segment seen from this direction.
    pub data_hi: Option<i64>,
    /// Highest offset known to have crossed the link: `data_hi` or acknowledged.
    pub hi: i64,
    pub fin_off: Option<i64>,
    pub gaps: [Gap; MAX_GAPS],
    pub ngaps: u8,
    pub prev: Option<Seg>,
    /// (end offset, send time) of the segment being timed for a data→ACK RTT.
    pub timing: Option<(i64, i64)>,
    /// A segment sent with nothing before it unacknowledged, until an ACK
    /// covers it: how long its answer took (`stalls`).
    pub ask: Option<Ask>,
    pub retx: u64,
    pub fills: u64,
    /// When the last retransmission (or hole fill) of this direction was seen.
    pub recovered_at: Option<i64>,
    /// When this direction last showed a loss: a retransmission, a
    /// duplicate or selective ACK from its receiver, or the ACK that ended
    /// such a report (the retransmission came just before it, whether or not
    /// the capture shows it).
    pub loss_at: Option<i64>,
    /// The receiver's loss report that no ACK has moved past yet.
    pub report: Option<LossReport>,
    /// Offset up to which the receiver's SACK blocks have been read for
    /// the bytes it lacked.
    pub sacked_to: i64,
    /// The window field of the receiver's latest ACK (a repeated ACK that
    /// changes it is a window update, not a duplicate).
    pub rwnd: u16,
    /// Highest offset the peer has acknowledged, and when the ACK that
    /// moved it there was seen.
    pub acked: i64,
    pub acked_t: i64,
    /// The shortest time from a timed segment to the ACK that covered it,
    /// ns: the round trip between the capture and the receiver.
    pub rtt_min: Option<i64>,
    /// The flight being counted; `flight_done` once the first
    /// window-limited one was counted, or could not be.
    pub flight: Option<Flight>,
    pub flight_done: bool,
    /// The latest segments of new data (none kept once data was sent
    /// again, until the next new segment).
    pub recent: Recent,
    /// Its flights' slow-start rounds (`growth`).
    pub rounds: crate::growth::Rounds,
    /// Its segments awaiting acknowledgement, counted (`window_unit`).
    pub outstanding: crate::window_unit::Outstanding,
}

/// A receiver's run of loss reports (duplicate and selective ACKs) until
/// an ACK moves past them: one loss episode, which TCP recovers from at
/// once, however many segments it lost.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LossReport {
    /// The direction's retransmissions and hole fills seen when it began.
    pub resent: u64,
    /// Bytes the receiver's SACK blocks showed it lacked.
    pub lacked: i64,
    /// A duplicate ACK without SACK blocks: a segment lacked, bytes unknown.
    pub dup: bool,
    /// Its pure ACKs, the one that ends it included, and the bytes they
    /// newly acknowledged.
    pub acks: u64,
    pub bytes: i64,
}

impl LossReport {
    /// Counts an ACK of the report (`pure`: without data) that moved the
    /// cumulative ACK from `from` to `a`.
    pub(crate) fn count(&mut self, pure: bool, from: i64, a: i64) {
        self.acks += pure as u64;
        self.bytes += (a - from).clamp(0, 1 << 30);
    }
}

impl Dir {
    /// The bytes between the cumulative ACK `a` and the receiver's SACK
    /// `blocks` (wire sequence numbers) not counted before: what it lacked.
    /// A block below the ACK (D-SACK) reports a copy, not a loss.
    pub(crate) fn lacked(&mut self, a: i64, blocks: &[(u32, u32)]) -> i64 {
        let mut b: [(i64, i64); 4] = [(0, 0); 4];
        let n = blocks.len().min(4);
        for (o, &(l, e)) in b.iter_mut().zip(blocks) {
            *o = (self.off(l), self.off(e));
        }
        let b = &mut b[..n];
        b.sort_unstable();
        let (mut at, mut lacked) = (a.max(self.sacked_to), 0);
        for &(l, e) in b.iter().filter(|&&(_, e)| e > a && e - a < 1 << 30) {
            lacked += (l - at).max(0);
            at = at.max(e);
        }
        self.sacked_to = at;
        lacked
    }

    #[inline]
    pub(crate) fn off(&self, seq: u32) -> i64 {
        let base = self.base.unwrap_or(seq);
        let at_hi = base.wrapping_add(self.hi as u32);
        self.hi + seq.wrapping_sub(at_hi) as i32 as i64
    }

    pub(crate) fn set_base(&mut self, first_data_seq: u32, from_syn: bool) {
        if self.base.is_none() {
            self.base = Some(first_data_seq);
            self.from_syn = from_syn;
        }
    }

    pub(crate) fn open_gap(&mut self, start: i64, end: i64, t: i64) {
        if (self.ngaps as usize) < MAX_GAPS {
            self.gaps[self.ngaps as usize] = Gap { start, end, t };
            self.ngaps += 1;
        } else {
            self.gaps.copy_within(1.., 0);
            self.gaps[MAX_GAPS - 1] = Gap { start, end, t };
        }
    }

    /// Closes the holes an acknowledgement up to `acked` covers and
    /// returns their bytes: the receiver had them, so the capture missed
    /// them (and a copy seen later was sent again needlessly). Closed when
    /// acknowledged, they leave room for new ones: a capture that misses
    /// many segments opens holes faster than `MAX_GAPS`.
    pub(crate) fn acked_holes(&mut self, acked: i64) -> i64 {
        let (mut n, mut kept) = (0, 0);
        for i in 0..self.ngaps as usize {
            let g = self.gaps[i];
            if acked >= g.end {
                n += g.end - g.start;
            } else {
                self.gaps[kept] = g;
                kept += 1;
            }
        }
        self.ngaps = kept as u8;
        n
    }

    /// If [s, e) overlaps an open hole, shrinks it and returns how long
    /// the hole had been open.
    pub(crate) fn fill(&mut self, s: i64, e: i64, t: i64) -> Option<i64> {
        let n = self.ngaps as usize;
        let i = self.gaps[..n].iter().position(|g| s < g.end && e > g.start)?;
        let g = self.gaps[i];
        let delay = t - g.t;
        if s <= g.start && e >= g.end {
            self.gaps.copy_within(i + 1..n, i);
            self.ngaps -= 1;
        } else if s <= g.start {
            self.gaps[i].start = e;
        } else if e >= g.end {
            self.gaps[i].end = s;
        } else {
            // A fill in the middle: keep the larger remainder.
            if s - g.start >= g.end - e {
                self.gaps[i].end = s;
            } else {
                self.gaps[i].start = e;
            }
        }
        Some(delay)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_survive_sequence_wraparound() {
        let mut d = Dir::default();
        d.set_base(u32::MAX - 99, true);
        assert_eq!(d.off(u32::MAX - 99), 0);
        d.hi = 50;
        assert_eq!(d.off(u32::MAX - 49), 50);
        assert_eq!(d.off(10), 110);
        d.hi = 110;
        assert_eq!(d.off(u32::MAX - 99), 0, "old data reads as below the high mark");
        d.hi = 3_000_000_000;
        // Past 2^32 bytes of stream the offset keeps growing.
        let s = (u32::MAX - 99).wrapping_add(3_000_000_000).wrapping_add(2_000_000_000);
        assert_eq!(d.off(s), 5_000_000_000);
    }

    #[test]
    fn holes_shrink_as_they_fill() {
        let mut d = Dir::default();
        d.open_gap(100, 400, 5);
        assert_eq!(d.fill(400, 500, 9), None, "not in the hole");
        assert_eq!(d.fill(100, 200, 9), Some(4));
        assert_eq!((d.gaps[0].start, d.gaps[0].end), (200, 400));
        assert_eq!(d.fill(300, 400, 10), Some(5));
        assert_eq!(d.fill(200, 300, 11), Some(6));
        assert_eq!(d.ngaps, 0);
        let n = MAX_GAPS as i64 + 2;
        for i in 0..n {
            d.open_gap(i * 10, i * 10 + 5, i);
        }
        assert_eq!((d.ngaps as usize, d.gaps[0].start), (MAX_GAPS, 20), "the oldest holes are forgotten");
    }

    #[test]
    fn acknowledged_holes_close_and_count() {
        let mut d = Dir::default();
        d.open_gap(100, 200, 1);
        d.open_gap(300, 350, 2);
        d.open_gap(500, 600, 3);
        assert_eq!(d.acked_holes(99), 0);
        assert_eq!(d.acked_holes(350), 150, "both holes below the ACK");
        assert_eq!((d.ngaps, d.gaps[0].start), (1, 500));
        assert_eq!(d.acked_holes(350), 0, "counted once");
        // A copy seen after its ACK is not a fill.
        assert_eq!(d.fill(100, 200, 9), None);
    }
}
