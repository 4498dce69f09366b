//! Retransmission queue and SACK scoreboard, kept per segment as Linux does.
//!
//! Byte totals for SACKed, lost and retransmitted-in-flight data are maintained
//! incrementally, so `pipe` (RFC 6675 §4) is O(1):
//! `pipe = outstanding - sacked - lost + retransmitted_in_flight`.
//! A lost segment that was retransmitted counts once (its retransmission), a segment
//! retransmitted without being deemed lost (NextSeg rule 3) counts twice, as in RFC 6675.
//! The same totals are kept in segments, for a window counted in packets as Linux
//! counts it (`tcp_packets_in_flight`): there `pipe` is segments × MSS.
//!
//! Lost segments always form a prefix of the unSACKed segments (every marking rule marks
//! from the front), which lets both loss marking and NextSeg run from cursors that only
//! move forward: recovery is O(segments) in total, not O(window) per ACK.

use crate::rack::Rack;
use crate::segment::KeptBlocks;
use crate::SackBlocks;
use std::collections::VecDeque;
use units::{Dur, Time};

/// Ever retransmitted: no RTT samples from it (Karn).
const RETRANS_EVER: u8 = 1;
const SACKED: u8 = 2;
const LOST: u8 = 4;
/// A retransmission of it is believed to be in flight.
const RETRANS: u8 = 8;
const FIN: u8 = 16;

#[derive(Clone, Copy, Debug)]
struct Sent {
    start: u64,
    end: u64,
    sent: Time,
    /// Transmission order (wrapping), for "sent after" when send times tie.
    order: u32,
    flags: u8,
}

impl Sent {
    #[inline]
    fn len(&self) -> u64 {
        self.end - self.start
    }
    #[inline]
    fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
}

/// Result of a cumulative ACK.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Acked {
    /// Sequence space newly acknowledged.
    pub bytes: u64,
    /// Send time of the latest never-retransmitted segment acked, if the ACK covered no
    /// retransmitted segment (Karn's algorithm, as Linux applies it without timestamps).
    pub rtt_from: Option<Time>,
    /// Send time of the earliest never-retransmitted segment acked that was not SACKed
    /// before, likewise (Linux's `first_ackt`, which its RTO estimator takes).
    pub first: Option<Time>,
}

/// Result of applying an ACK's SACK blocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Sacked {
    /// Bytes newly SACKed.
    pub bytes: u64,
    /// Send times of the earliest and the latest never-retransmitted segments newly
    /// SACKed (Linux's `first_sackt`, `last_sackt`).
    pub first: Option<Time>,
    pub last: Option<Time>,
}

/// A retransmission in flight: the segment's start, its transmission order, and snd_max
/// when it was sent.
#[derive(Clone, Copy, Debug)]
struct Rtx {
    start: u64,
    order: u32,
    mark: u64,
}

/// The first segment NextSeg (RFC 6675 §4) could retransmit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Candidate {
    pub idx: usize,
    pub start: u64,
    /// Sequence space (payload + FIN).
    pub len: u64,
    pub lost: bool,
}

/// Laid out in declaration order (`repr(C)`), in the order a connection's
/// state is visited (see [`crate::Tcp`]): what every ACK reads, sender or
/// receiver, first; what only an ACK advancing snd_una or SACKing data
/// touches last, so that a receiver's pure ACKs leave those lines alone.
#[derive(Clone, Debug)]
#[repr(C)]
pub(crate) struct Scoreboard {
    una: u64,
    nxt: u64,
    sacked: u64,
    lost: u64,
    retrans: u64,
    high_sacked: u64,
    /// Segment counts (a window's segments fit 32 bits).
    sacked_segs: u32,
    lost_segs: u32,
    retrans_segs: u32,
    above_segs: u32,
    /// HighRxt-like cursor: segments below it are SACKed or already retransmitted.
    rxt_cur: u64,
    /// IsLost marking: every unSACKed segment below `lost_cur` is marked lost, and
    /// `above_*` count SACKed bytes/segments at or above it.
    lost_cur: u64,
    above_bytes: u64,
    /// Blocks of the previous ACK: ranges inside them are already marked, so a growing
    /// block costs only its new part (Linux's recv_sack_cache).
    sack_cache: KeptBlocks,
    q: VecDeque<Sent>,
    /// Retransmissions in flight, in send order.
    rtx_fifo: VecDeque<Rtx>,
    /// Transmissions so far (wrapping): the next one's order.
    tx: u32,
    /// A SACKed segment keeps its retransmission in `pipe` until it is acknowledged
    /// (ns-3's `TcpTxBuffer::Update` leaves `m_retrans` set); RFC 6675 drops it.
    sacked_keeps_retrans: bool,
    /// Non-zero: the window is counted in segments of this size (see
    /// [`Scoreboard::count_packets`]; an MSS fits 16 bits).
    packet_mss: u16,
    #[cfg(test)]
    visits: u64,
}

impl Scoreboard {
    pub fn new(start: u64) -> Self {
        Scoreboard {
            q: VecDeque::new(),
            una: start,
            nxt: start,
            sacked: 0,
            sacked_segs: 0,
            lost: 0,
            retrans: 0,
            lost_segs: 0,
            retrans_segs: 0,
            high_sacked: start,
            rxt_cur: start,
            lost_cur: start,
            above_bytes: 0,
            above_segs: 0,
            sack_cache: KeptBlocks::default(),
            rtx_fifo: VecDeque::new(),
            tx: 0,
            sacked_keeps_retrans: false,
            packet_mss: 0,
            #[cfg(test)]
            visits: 0,
        }
    }

    /// ns-3's accounting: see `sacked_keeps_retrans`.
    pub fn keep_retransmissions_when_sacked(&mut self) {
        self.sacked_keeps_retrans = true;
    }

    #[inline]
    pub fn una(&self) -> u64 {
        self.una
    }
    /// Highest sequence sent + 1 (snd_max).
    #[inline]
    pub fn nxt(&self) -> u64 {
        self.nxt
    }
    /// RFC 5681 FlightSize.
    #[inline]
    pub fn outstanding(&self) -> u64 {
        self.nxt - self.una
    }
    /// Linux counts the window in packets: from now on every segment in flight
    /// counts as `mss` bytes in `pipe`, whatever its length (`tcp_skb_pcount` is 1
    /// for a segment no longer than the MSS), and so in what is delivered.
    pub fn count_packets(&mut self, mss: u64) {
        self.packet_mss = mss.min(u16::MAX as u64) as u16;
    }

    /// What a segment of `len` bytes of sequence space takes of the window.
    #[inline]
    pub fn charge(&self, len: u64) -> u64 {
        let mss = self.packet_mss as u64;
        if mss == 0 {
            len
        } else {
            len.div_ceil(mss).max(1) * mss
        }
    }

    #[inline]
    pub fn pipe(&self) -> u64 {
        if self.packet_mss == 0 {
            self.outstanding() - self.sacked - self.lost + self.retrans
        } else {
            (self.q.len() as u64 - self.sacked_segs as u64 - self.lost_segs as u64 + self.retrans_segs as u64) * self.packet_mss as u64
        }
    }

    /// FlightSize in the window's units (Linux's `packets_out` when it counts packets).
    #[inline]
    pub fn flight(&self) -> u64 {
        if self.packet_mss == 0 {
            self.outstanding()
        } else {
            self.q.len() as u64 * self.packet_mss as u64
        }
    }

    /// Outstanding data not SACKed, in the window's units: what an ACK delivers is the
    /// drop in it (RFC 6937 DeliveredData; Linux's `acked_sacked` in packets).
    #[inline]
    pub fn undelivered(&self) -> u64 {
        if self.packet_mss == 0 {
            self.outstanding() - self.sacked
        } else {
            (self.q.len() as u64 - self.sacked_segs as u64) * self.packet_mss as u64
        }
    }
    #[inline]
    pub fn sacked(&self) -> u64 {
        self.sacked
    }
    #[inline]
    pub fn lost(&self) -> u64 {
        self.lost
    }
    #[inline]
    pub fn high_sacked(&self) -> u64 {
        self.high_sacked
    }
    /// SACKed segments (Linux's `sacked_out`).
    #[inline]
    pub fn sacked_segs(&self) -> u64 {
        self.sacked_segs as u64
    }
    /// Linux's Disorder state: something SACKed or a retransmission in flight, or the
    /// oldest segment was retransmitted (`tcp_left_out`, `tcp_any_retrans_done`).
    pub fn disorder(&self) -> bool {
        self.sacked > 0 || self.lost > 0 || self.retrans > 0 || self.q.front().is_some_and(|s| s.has(RETRANS_EVER))
    }

    /// The highest segment sent, for a tail loss probe to send again.
    pub fn last_idx(&self) -> Option<usize> {
        self.q.len().checked_sub(1)
    }

    /// Segment `idx` was sent again at `now` as a loss probe: like a retransmission for
    /// RTT samples and RACK, but not counted as in flight twice (Linux sends it with
    /// `__tcp_retransmit_skb`, outside `retrans_out`).
    pub fn mark_probed(&mut self, idx: usize, now: Time) {
        let order = self.next_order();
        let s = &mut self.q[idx];
        s.flags |= RETRANS_EVER;
        s.sent = now;
        s.order = order;
    }

    /// When the oldest outstanding segment was last sent.
    pub fn head_sent(&self) -> Option<Time> {
        self.q.front().map(|s| s.sent)
    }
    pub fn head_lost(&self) -> bool {
        self.q.front().is_some_and(|s| s.has(LOST))
    }

    /// A new segment `[start, end)` (end includes the FIN if `fin`) went out.
    pub fn on_send(&mut self, start: u64, end: u64, now: Time, fin: bool) {
        debug_assert_eq!(start, self.nxt);
        let order = self.next_order();
        self.q.push_back(Sent { start, end, sent: now, order, flags: if fin { FIN } else { 0 } });
        self.nxt = end;
    }

    fn next_order(&mut self) -> u32 {
        self.tx = self.tx.wrapping_add(1);
        self.tx
    }

    /// Segment `idx` as `(start, end, fin)`.
    pub fn seg(&self, idx: usize) -> (u64, u64, bool) {
        let s = &self.q[idx];
        (s.start, s.end, s.has(FIN))
    }

    /// Cumulative ACK up to `ack` (`una < ack <= nxt`) at `now`; the segments it newly
    /// delivers (not SACKed before) advance `rack`. A segment never retransmitted below
    /// `prior_fack`, the highest SACK before this ACK, arrived late: reordering.
    pub fn ack(&mut self, ack: u64, prior_fack: u64, rack: &mut Rack, now: Time) -> Acked {
        debug_assert!(ack > self.una && ack <= self.nxt);
        let mut rtt_from = None;
        let mut first = None;
        let mut rtx_acked = false;
        while let Some(f) = self.q.front() {
            if f.end <= ack {
                let f = self.q.pop_front().expect("front exists");
                self.forget(f.flags, f.len(), true);
                if !f.has(SACKED) {
                    rack.advance(f.sent, f.order, f.has(RETRANS_EVER), now);
                    if !f.has(RETRANS_EVER) && f.start < prior_fack {
                        rack.saw_reordering();
                    }
                }
                if f.has(RETRANS_EVER) {
                    rtx_acked = true;
                } else {
                    rtt_from = Some(f.sent);
                    if first.is_none() && !f.has(SACKED) {
                        first = Some(f.sent);
                    }
                }
            } else {
                if f.start < ack {
                    // Acked part of a segment: trim it.
                    let (flags, cut) = (f.flags, ack - f.start);
                    self.forget(flags, cut, false);
                    self.q[0].start = ack;
                }
                break;
            }
        }
        let bytes = ack - self.una;
        self.una = ack;
        // Blocks wholly below `una` cannot meet a later block: a cache of
        // only those skips nothing, and is let go.
        if !self.sack_cache.is_empty() && self.sack_cache.get().as_slice().iter().all(|&(_, e)| e <= ack) {
            self.sack_cache.set(SackBlocks::default());
        }
        if self.lost_cur < ack {
            self.lost_cur = ack;
            self.above_bytes = self.sacked;
            self.above_segs = self.sacked_segs;
        }
        self.rxt_cur = self.rxt_cur.max(ack);
        self.high_sacked = self.high_sacked.max(ack);
        // Retransmissions sent when snd_max <= ack are acknowledged; forget them.
        while self.rtx_fifo.front().is_some_and(|r| r.mark <= ack) {
            self.rtx_fifo.pop_front();
        }
        // A connection with nothing in flight keeps no storage for it: most
        // of thousands of open connections are idle between messages.
        if self.q.is_empty() {
            self.q = VecDeque::new();
            self.rtx_fifo = VecDeque::new();
        }
        if rtx_acked {
            (rtt_from, first) = (None, None);
        }
        Acked { bytes, rtt_from, first }
    }

    fn forget(&mut self, flags: u8, len: u64, whole: bool) {
        if flags & SACKED != 0 {
            self.sacked -= len;
            self.sacked_segs -= whole as u32;
        }
        if flags & LOST != 0 {
            self.lost -= len;
            self.lost_segs -= whole as u32;
        }
        if flags & RETRANS != 0 {
            self.retrans -= len;
            self.retrans_segs -= whole as u32;
        }
    }

    /// Apply SACK blocks at `now`: the bytes newly SACKed, and when they were sent. The
    /// segments newly SACKed advance `rack`, in sequence order (Linux sorts the blocks).
    pub fn apply_sack(&mut self, blocks: &SackBlocks, rack: &mut Rack, now: Time) -> Sacked {
        let mut newly = Sacked::default();
        let cache = self.sack_cache.get();
        let mut seen = SackBlocks::default();
        let mut sorted = *blocks;
        sorted.blocks[..sorted.n as usize].sort_unstable();
        let prior_high = self.high_sacked;
        for &(bs, be) in sorted.as_slice() {
            // Only [una, nxt) can be SACKed: older blocks (D-SACK) and bogus ones are ignored.
            let (bs, be) = (bs.max(self.una), be.min(self.nxt));
            if bs >= be {
                continue;
            }
            seen.blocks[seen.n as usize] = (bs, be);
            seen.n += 1;
            let mut pos = bs;
            while pos < be {
                if let Some(&(_, ce)) = cache.as_slice().iter().find(|c| c.0 <= pos && pos < c.1) {
                    pos = ce;
                    continue;
                }
                let stop = cache.as_slice().iter().map(|c| c.0).filter(|&c| c > pos).fold(be, u64::min);
                self.sack_range(pos, stop, (bs, be), &mut newly, (rack, now, prior_high));
                pos = stop;
            }
        }
        self.sack_cache.set(seen);
        newly
    }

    /// Mark segments overlapping `[from, to)` that lie wholly inside block `[bs, be)`,
    /// advancing RACK at `now`; below `prior_high` (the highest SACK before this ACK) a
    /// segment never retransmitted was reordered.
    fn sack_range(&mut self, from: u64, to: u64, (bs, be): (u64, u64), newly: &mut Sacked, (rack, now, prior_high): (&mut Rack, Time, u64)) {
        let mut i = self.q.partition_point(|s| s.end <= from);
        while i < self.q.len() && self.q[i].start < to {
            #[cfg(test)]
            {
                self.visits += 1;
            }
            let s = self.q[i];
            if !s.has(SACKED) && s.start >= bs && s.end <= be {
                self.mark_sacked(i);
                newly.bytes += s.len();
                rack.advance(s.sent, s.order, s.has(RETRANS_EVER), now);
                if !s.has(RETRANS_EVER) {
                    newly.first = Some(newly.first.map_or(s.sent, |t: Time| t.min(s.sent)));
                    newly.last = Some(newly.last.map_or(s.sent, |t: Time| t.max(s.sent)));
                    if s.start < prior_high {
                        rack.saw_reordering();
                    }
                }
            }
            i += 1;
        }
    }

    fn mark_sacked(&mut self, i: usize) {
        let s = &mut self.q[i];
        let len = s.len();
        if s.has(LOST) {
            self.lost -= len;
            self.lost_segs -= 1;
        }
        let keep = if self.sacked_keeps_retrans { RETRANS } else { 0 };
        if s.has(RETRANS) && keep == 0 {
            self.retrans -= len;
            self.retrans_segs -= 1;
        }
        s.flags = (s.flags | SACKED) & !(LOST | RETRANS) | (s.flags & keep);
        self.sacked += len;
        self.sacked_segs += 1;
        if s.start >= self.lost_cur {
            self.above_bytes += len;
            self.above_segs += 1;
        }
        self.high_sacked = self.high_sacked.max(s.end);
    }

    /// RFC 6675 IsLost: a segment is lost once `dupthresh` SACKed segments, or more than
    /// `(dupthresh - 1) * mss` SACKed bytes, lie above it. Marks newly lost segments.
    pub fn mark_lost_by_sack(&mut self, dupthresh: u32, mss: u64) {
        let thresh_bytes = (dupthresh.max(1) as u64 - 1) * mss;
        let mut i = self.q.partition_point(|s| s.start < self.lost_cur);
        while let Some(s) = self.q.get_mut(i) {
            let len = s.len();
            if s.has(SACKED) {
                self.above_bytes -= len;
                self.above_segs -= 1;
            } else {
                if self.above_segs < dupthresh && self.above_bytes <= thresh_bytes {
                    break;
                }
                if !s.has(LOST) {
                    s.flags |= LOST;
                    self.lost += len;
                    self.lost_segs += 1;
                }
            }
            self.lost_cur = s.end;
            i += 1;
        }
    }

    /// Reno/NewReno: the segment at snd_una is presumed lost.
    pub fn mark_head_lost(&mut self) {
        if let Some(s) = self.q.front_mut() {
            if !s.has(SACKED | LOST) {
                s.flags |= LOST;
                self.lost += s.len();
                self.lost_segs += 1;
            }
        }
    }

    /// ns-3 without SACK (`TcpTxBuffer::AddRenoSack`): a duplicate ACK means one more
    /// segment arrived, so the first segment after snd_una not marked yet is taken as
    /// SACKed. Only that mark is set: a segment retransmitted or lost keeps those marks
    /// too (its retransmission stays in `pipe`), as in ns-3. Marks stay until the
    /// segment is acknowledged or a timeout clears them.
    pub fn pseudo_sack(&mut self) {
        let Some(i) = self.q.iter().skip(1).position(|s| !s.has(SACKED)).map(|i| i + 1) else {
            return; // more duplicates than segments: they answer resent data
        };
        let s = &mut self.q[i];
        s.flags |= SACKED;
        let (len, start, end) = (s.len(), s.start, s.end);
        self.sacked += len;
        self.sacked_segs += 1;
        if start >= self.lost_cur {
            self.above_bytes += len;
            self.above_segs += 1;
        }
        self.high_sacked = self.high_sacked.max(end);
    }

    /// ns-3's `TcpTxBuffer::DiscardUpTo` after a cumulative ACK without SACK: a segment
    /// `pseudo_sack` marked that has become snd_una was guessed wrong, so its mark moves
    /// on to the next unmarked segment and the head is taken as lost. Returns whether it did.
    pub fn pseudo_sack_reached_head(&mut self) -> bool {
        if !self.q.front().is_some_and(|s| s.has(SACKED)) {
            return false;
        }
        self.unmark_head_sacked();
        self.pseudo_sack();
        self.mark_head_lost_again();
        true
    }

    fn unmark_head_sacked(&mut self) {
        let s = &mut self.q[0];
        if s.has(SACKED) {
            s.flags &= !SACKED;
            let (len, start) = (s.len(), s.start);
            self.sacked -= len;
            self.sacked_segs -= 1;
            if start >= self.lost_cur {
                self.above_bytes -= len;
                self.above_segs -= 1;
            }
        }
    }

    /// ns-3's `TcpTxBuffer::MarkHeadAsLost`: the segment at snd_una is lost, whatever
    /// was believed of it (a SACK mark is dropped, a retransmission in flight is taken
    /// as lost too), so it is the next to be retransmitted.
    pub fn mark_head_lost_again(&mut self) {
        if self.q.is_empty() {
            return;
        }
        self.unmark_head_sacked();
        let s = &mut self.q[0];
        let len = s.len();
        if s.has(RETRANS) {
            self.retrans -= len;
            self.retrans_segs -= 1;
        }
        if !s.has(LOST) {
            self.lost += len;
            self.lost_segs += 1;
        }
        s.flags = (s.flags | LOST) & !RETRANS;
        self.rxt_cur = self.una;
    }

    /// Forget every SACK mark (ns-3's `ResetRenoSack` at a timeout without SACK,
    /// whose marks were guesses).
    pub fn clear_sacks(&mut self) {
        for s in self.q.iter_mut() {
            s.flags &= !SACKED;
        }
        self.sacked = 0;
        self.sacked_segs = 0;
        self.above_bytes = 0;
        self.above_segs = 0;
        self.high_sacked = self.una;
        self.sack_cache = KeptBlocks::default();
    }

    /// Timeout (and Tahoe): everything not SACKed is lost, earlier retransmissions
    /// included; retransmission restarts from snd_una.
    pub fn mark_all_lost(&mut self) {
        for s in self.q.iter_mut() {
            if s.has(SACKED) {
                if s.has(RETRANS) {
                    self.retrans -= s.len(); // ns-3's accounting kept it (sacked_keeps_retrans)
                    self.retrans_segs -= 1;
                    s.flags &= !RETRANS;
                }
                continue;
            }
            if !s.has(LOST) {
                self.lost += s.len();
                self.lost_segs += 1;
            }
            if s.has(RETRANS) {
                self.retrans -= s.len();
                self.retrans_segs -= 1;
            }
            s.flags = (s.flags | LOST) & !RETRANS;
        }
        self.rxt_cur = self.una;
        self.lost_cur = self.nxt;
        self.above_bytes = 0;
        self.above_segs = 0;
        self.rtx_fifo.clear();
    }

    /// Lost retransmission detection (Linux's tcp_mark_lost_retrans, the idea behind
    /// RACK): a retransmission is lost again once data sent after it has been SACKed
    /// `tolerance` bytes beyond the send point. It is marked for another retransmission
    /// instead of waiting for the RTO, which RFC 6675 alone would need.
    pub fn detect_lost_retransmissions(&mut self, tolerance: u64) {
        while let Some(&Rtx { start, mark, .. }) = self.rtx_fifo.front() {
            if self.high_sacked < mark + tolerance {
                break;
            }
            self.rtx_fifo.pop_front();
            if let Some(i) = self.in_flight_retransmission(start, None) {
                self.lose_retransmission(i);
            }
        }
    }

    /// RACK (RFC 8985 §6.2, Linux `tcp_rack_detect_loss`): every segment sent before
    /// `rack`'s reference whose deadline (its send time + RACK's RTT + `reo_wnd`) has
    /// come is lost: original transmissions from the loss cursor on, which were sent in
    /// sequence order, and retransmissions in the order they were sent. Returns when
    /// the earliest segment judged but not yet lost will be (Linux arms its
    /// reordering timer for the latest, a few packet times later).
    pub fn mark_lost_by_rack(&mut self, rack: &Rack, reo_wnd: Dur, now: Time) -> Option<Time> {
        let mut wait = None;
        let mut i = self.q.partition_point(|s| s.start < self.lost_cur);
        while let Some(s) = self.q.get(i) {
            // SACKed, marked lost, or retransmitted (judged below): pass.
            if !s.has(SACKED | LOST | RETRANS_EVER) {
                if !rack.judges(s.order) {
                    break;
                }
                let at = rack.deadline(s.sent, reo_wnd);
                if at > now {
                    wait = Some(at);
                    break;
                }
                let s = &mut self.q[i];
                s.flags |= LOST;
                self.lost += s.len();
                self.lost_segs += 1;
            }
            self.pass_lost_cursor(i);
            i += 1;
        }
        while let Some(&Rtx { start, order, .. }) = self.rtx_fifo.front() {
            let Some(i) = self.in_flight_retransmission(start, Some(order)) else {
                self.rtx_fifo.pop_front(); // delivered, lost, or sent again since
                continue;
            };
            if !rack.judges(order) {
                break;
            }
            let at = rack.deadline(self.q[i].sent, reo_wnd);
            if at > now {
                wait = Some(wait.map_or(at, |w: Time| w.min(at)));
                break;
            }
            self.rtx_fifo.pop_front();
            self.lose_retransmission(i);
        }
        wait
    }

    /// Move the loss cursor past segment `i`, keeping the count of SACKed segments above it.
    fn pass_lost_cursor(&mut self, i: usize) {
        let s = &self.q[i];
        if s.has(SACKED) && s.start >= self.lost_cur {
            self.above_bytes -= s.len();
            self.above_segs -= 1;
        }
        self.lost_cur = self.lost_cur.max(s.end);
    }

    /// The index of the segment starting at `start` if a retransmission of it (that
    /// transmission, when `order` is given) is still in flight: not SACKed (ns-3's
    /// accounting keeps a SACKed segment's retransmission mark).
    fn in_flight_retransmission(&self, start: u64, order: Option<u32>) -> Option<usize> {
        let i = self.q.partition_point(|s| s.start < start);
        let s = self.q.get(i)?;
        (s.start == start && s.has(RETRANS) && !s.has(SACKED) && order.is_none_or(|o| s.order == o)).then_some(i)
    }

    /// The retransmission of segment `i` is lost too: it is due again.
    fn lose_retransmission(&mut self, i: usize) {
        let s = &mut self.q[i];
        let (len, start) = (s.len(), s.start);
        self.retrans -= len;
        self.retrans_segs -= 1;
        if !s.has(LOST) {
            self.lost += len;
            self.lost_segs += 1;
        }
        s.flags = (s.flags | LOST) & !RETRANS;
        self.rxt_cur = self.rxt_cur.min(start);
    }

    /// Restart the NextSeg scan from snd_una (new recovery episode).
    pub fn reset_rxt_cursor(&mut self) {
        self.rxt_cur = self.una;
    }

    /// First segment at or after the cursor that is neither SACKed nor retransmitted.
    pub fn next_candidate(&mut self) -> Option<Candidate> {
        let mut i = self.q.partition_point(|s| s.end <= self.rxt_cur);
        while let Some(s) = self.q.get(i) {
            if s.has(SACKED | RETRANS) {
                self.rxt_cur = s.end;
                i += 1;
                continue;
            }
            return Some(Candidate { idx: i, start: s.start, len: s.len(), lost: s.has(LOST) });
        }
        None
    }

    /// Segment `idx` was retransmitted at `now`.
    pub fn mark_retransmitted(&mut self, idx: usize, now: Time) {
        let s = &mut self.q[idx];
        debug_assert!(!s.has(RETRANS | SACKED));
        let order = self.next_order();
        let s = &mut self.q[idx];
        s.flags |= RETRANS | RETRANS_EVER;
        s.sent = now;
        s.order = order;
        let start = s.start;
        self.retrans += s.len();
        self.retrans_segs += 1;
        self.rxt_cur = self.rxt_cur.max(s.end);
        self.rtx_fifo.push_back(Rtx { start, order, mark: self.nxt });
    }

    /// The segment at snd_una has a retransmission in flight and is not SACKed.
    pub fn head_retransmitted(&self) -> bool {
        self.q.front().is_some_and(|s| s.has(RETRANS) && !s.has(SACKED))
    }

    /// Index of the segment at snd_una, if it can be retransmitted now.
    pub fn head_retransmittable(&self) -> Option<usize> {
        self.q.front().filter(|s| !s.has(RETRANS | SACKED)).map(|_| 0)
    }

    #[cfg(test)]
    fn check(&self) {
        let (mut sacked, mut lost, mut retrans) = (0, 0, 0);
        let mut segs = [0; 3];
        let mut at = self.una;
        for s in &self.q {
            assert_eq!(s.start, at, "queue must tile [una, nxt)");
            at = s.end;
            if s.has(SACKED) {
                sacked += s.len();
                segs[0] += 1;
            }
            if s.has(LOST) {
                lost += s.len();
                segs[1] += 1;
            }
            if s.has(RETRANS) {
                retrans += s.len();
                segs[2] += 1;
            }
        }
        assert_eq!(at, self.nxt);
        assert_eq!((sacked, lost, retrans), (self.sacked, self.lost, self.retrans));
        assert_eq!(segs, [self.sacked_segs, self.lost_segs, self.retrans_segs]);
    }
}

/// The tests' ACKs: at a fixed time, with a RACK of their own.
#[cfg(test)]
impl Scoreboard {
    pub(crate) fn ack_t(&mut self, ack: u64) -> Acked {
        self.ack(ack, self.high_sacked, &mut Rack::default(), Time(1000))
    }
    pub(crate) fn apply_sack_t(&mut self, blocks: &SackBlocks) -> Sacked {
        self.apply_sack(blocks, &mut Rack::default(), Time(1000))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An ACK that moves nothing (a receiver's) reads the counts that
    /// lead the scoreboard and leaves the rest, ending with the queue, alone.
    #[test]
    fn what_every_ack_reads_leads_the_scoreboard() {
        use std::mem::offset_of;
        for f in [
            offset_of!(Scoreboard, una),
            offset_of!(Scoreboard, nxt),
            offset_of!(Scoreboard, sacked),
            offset_of!(Scoreboard, lost),
            offset_of!(Scoreboard, retrans),
            offset_of!(Scoreboard, high_sacked),
        ] {
            assert!(f < offset_of!(Scoreboard, sacked_segs));
        }
        assert!(offset_of!(Scoreboard, sacked_segs) < offset_of!(Scoreboard, q));
    }

    const M: u64 = 100;

    /// `n` segments of M bytes from seq 1.
    fn board(n: u64) -> Scoreboard {
        let mut b = Scoreboard::new(1);
        for i in 0..n {
            b.on_send(1 + i * M, 1 + (i + 1) * M, Time(i), false);
        }
        b
    }
    fn seq(i: u64) -> u64 {
        1 + i * M
    }
    fn sack(b: &mut Scoreboard, blocks: &[(u64, u64)]) -> u64 {
        let n = b.apply_sack_t(&SackBlocks::from_slice(blocks));
        b.check();
        n.bytes
    }

    #[test]
    fn a_window_in_packets_counts_every_segment_as_one_mss() {
        // Linux's tcp_packets_in_flight: ten segments of 60 bytes are ten packets,
        // so with an MSS of M they take what ten full segments take in bytes.
        let mut b = Scoreboard::new(1);
        for i in 0..10 {
            b.on_send(1 + i * 60, 1 + (i + 1) * 60, Time(i), false);
        }
        let bytes = b.clone();
        b.count_packets(M);
        assert_eq!((bytes.pipe(), b.pipe()), (600, 10 * M));
        assert_eq!((b.flight(), b.undelivered()), (10 * M, 10 * M));
        assert_eq!((b.charge(60), b.charge(M), b.charge(1)), (M, M, M), "a short segment or a bare FIN is one packet");
        // Two SACKed, the first lost and resent, then a cumulative ACK of three.
        assert_eq!(b.apply_sack_t(&SackBlocks::from_slice(&[(301, 421)])).bytes, 120);
        assert_eq!((b.pipe(), b.undelivered()), (8 * M, 8 * M));
        b.mark_head_lost();
        assert_eq!(b.pipe(), 7 * M);
        b.mark_retransmitted(0, Time(20));
        assert_eq!(b.pipe(), 8 * M, "lost and resent counts once");
        b.check();
        b.ack_t(181);
        assert_eq!((b.pipe(), b.undelivered(), b.flight()), (5 * M, 5 * M, 7 * M));
        b.mark_all_lost();
        assert_eq!(b.pipe(), 0);
        b.check();
    }

    #[test]
    fn pipe_follows_rfc6675_accounting() {
        let mut b = board(10);
        assert_eq!(b.pipe(), 10 * M);
        assert_eq!(sack(&mut b, &[(seq(2), seq(4))]), 2 * M);
        assert_eq!(b.pipe(), 8 * M);
        b.mark_head_lost();
        assert_eq!(b.pipe(), 7 * M);
        let c = b.next_candidate().unwrap();
        assert_eq!((c.idx, c.start, c.lost), (0, seq(0), true));
        b.mark_retransmitted(c.idx, Time(50));
        assert_eq!(b.pipe(), 8 * M, "lost + retransmitted counts once");
        // Rule-3 style retransmission of a not-lost segment counts twice.
        let c = b.next_candidate().unwrap();
        assert_eq!((c.start, c.lost), (seq(1), false));
        b.mark_retransmitted(c.idx, Time(51));
        assert_eq!(b.pipe(), 9 * M);
        b.check();
        // The cumulative ACK of retransmitted data gives no RTT sample (Karn).
        let a = b.ack_t(seq(4));
        assert_eq!(a, Acked { bytes: 4 * M, rtt_from: None, first: None });
        assert_eq!((b.pipe(), b.sacked()), (6 * M, 0));
        b.check();
        // A clean ACK samples the latest segment it covers, and Linux's estimator
        // the earliest.
        let a = b.ack_t(seq(6));
        assert_eq!((a.rtt_from, a.first), (Some(Time(5)), Some(Time(4))));
        // SACKed segments sampled when SACKed: the earliest not SACKed before.
        let s = b.apply_sack_t(&SackBlocks::from_slice(&[(seq(7), seq(9))]));
        assert_eq!((s.bytes, s.first, s.last), (2 * M, Some(Time(7)), Some(Time(8))));
        let a = b.ack_t(seq(10));
        assert_eq!((a.rtt_from, a.first), (Some(Time(9)), Some(Time(6))));
    }

    #[test]
    fn is_lost_needs_dupthresh_segments_above() {
        let mut b = board(10);
        sack(&mut b, &[(seq(2), seq(3))]);
        sack(&mut b, &[(seq(3), seq(4)), (seq(2), seq(3))]);
        b.mark_lost_by_sack(3, M);
        assert_eq!(b.lost(), 0, "two SACKed segments above are not enough");
        sack(&mut b, &[(seq(2), seq(5))]);
        b.mark_lost_by_sack(3, M);
        // Segments 0 and 1 have 3 SACKed above; nothing above segment 5 is SACKed.
        assert_eq!(b.lost(), 2 * M);
        assert!(b.head_lost());
        sack(&mut b, &[(seq(7), seq(8)), (seq(2), seq(5))]);
        b.mark_lost_by_sack(3, M);
        assert_eq!(b.lost(), 2 * M, "segment 5 has only one SACKed segment above");
        sack(&mut b, &[(seq(7), seq(10)), (seq(2), seq(5))]);
        b.mark_lost_by_sack(3, M);
        // Now 5 and 6 have 3 above.
        assert_eq!(b.lost(), 4 * M);
        b.check();
    }

    #[test]
    fn byte_rule_counts_small_segments() {
        // Five 40-byte SACKed segments (200 bytes) above: > 2*M bytes is false, but
        // >= 3 segments is true.
        let mut b = Scoreboard::new(1);
        b.on_send(1, 101, Time(0), false);
        for i in 0..5 {
            b.on_send(101 + i * 40, 141 + i * 40, Time(0), false);
        }
        sack(&mut b, &[(101, 301)]);
        b.mark_lost_by_sack(3, M);
        assert!(b.head_lost());
    }

    #[test]
    fn growing_block_costs_only_its_new_part() {
        let mut b = board(1000);
        for k in 2..1000 {
            sack(&mut b, &[(seq(1), seq(k))]);
        }
        assert_eq!(b.sacked(), 998 * M);
        // Without the cache this would be ~500k visits.
        assert!(b.visits < 3_000, "visits {}", b.visits);
    }

    #[test]
    fn merged_blocks_sack_the_gap_only_once() {
        let mut b = board(10);
        sack(&mut b, &[(seq(6), seq(8)), (seq(2), seq(4))]);
        assert_eq!(sack(&mut b, &[(seq(2), seq(8))]), 2 * M);
        assert_eq!(b.sacked(), 6 * M);
        // SACK below una or above nxt is ignored.
        b.ack_t(seq(1));
        assert_eq!(sack(&mut b, &[(0, seq(1)), (seq(10), seq(12))]), 0);
    }

    #[test]
    fn timeout_marks_all_unsacked_and_rescans() {
        let mut b = board(6);
        sack(&mut b, &[(seq(3), seq(4))]);
        b.mark_head_lost();
        let c = b.next_candidate().unwrap();
        b.mark_retransmitted(c.idx, Time(9));
        b.mark_all_lost();
        b.check();
        assert_eq!((b.lost(), b.pipe()), (5 * M, 0));
        let starts: Vec<u64> = std::iter::from_fn(|| {
            let c = b.next_candidate()?;
            assert!(c.lost);
            b.mark_retransmitted(c.idx, Time(10));
            Some(c.start)
        })
        .collect();
        assert_eq!(starts, vec![seq(0), seq(1), seq(2), seq(4), seq(5)]);
        assert_eq!(b.pipe(), 5 * M);
        b.check();
    }

    #[test]
    fn lost_retransmission_is_detected_by_later_sacks() {
        let mut b = board(10);
        sack(&mut b, &[(seq(1), seq(4))]);
        b.mark_lost_by_sack(3, M);
        let c = b.next_candidate().unwrap();
        assert_eq!((c.start, c.lost), (seq(0), true));
        b.mark_retransmitted(c.idx, Time(1));
        // New data sent after the retransmission.
        for i in 10..15 {
            b.on_send(seq(i), seq(i + 1), Time(2), false);
        }
        sack(&mut b, &[(seq(10), seq(12)), (seq(1), seq(4))]);
        b.detect_lost_retransmissions(3 * M);
        assert_eq!(b.next_candidate().unwrap().start, seq(4), "two segments past: tolerated");
        sack(&mut b, &[(seq(10), seq(13)), (seq(1), seq(4))]);
        b.detect_lost_retransmissions(3 * M);
        b.check();
        let c = b.next_candidate().unwrap();
        assert_eq!((c.start, c.lost), (seq(0), true), "head is due again");
        // A timeout forgets pending detections.
        b.mark_retransmitted(c.idx, Time(3));
        b.mark_all_lost();
        assert!(b.rtx_fifo.is_empty());
        // Without SACK the cumulative ACK alone keeps the record bounded.
        let c = b.next_candidate().unwrap();
        b.mark_retransmitted(c.idx, Time(4));
        assert_eq!(b.rtx_fifo.len(), 1);
        b.ack_t(seq(15));
        assert!(b.rtx_fifo.is_empty());
    }

    #[test]
    fn pseudo_sacks_mark_the_next_segment_and_move_on_when_they_reach_the_head() {
        let mut b = board(6);
        let c = b.next_candidate().unwrap();
        b.mark_head_lost();
        b.mark_retransmitted(c.idx, Time(1));
        // Duplicates mark 1, then 2: never the head, whatever it is.
        b.pseudo_sack();
        b.pseudo_sack();
        b.check();
        assert_eq!((b.sacked(), b.pipe()), (2 * M, 4 * M), "6 − 2 marked − head lost + its retransmission");
        // A mark keeps a segment's retransmission in pipe, as ns-3 does.
        let c = b.next_candidate().unwrap();
        assert_eq!(c.start, seq(3));
        b.mark_retransmitted(c.idx, Time(2));
        b.pseudo_sack();
        b.check();
        assert_eq!(b.pipe(), 4 * M, "3 is marked and retransmitted: it counts once");
        // The ACK of 0 makes the marked 1 the head: a wrong guess. Its mark moves to 4
        // (2 and 3 are marked) and 1 is lost, the next to resend.
        b.ack_t(seq(1));
        assert!(b.pseudo_sack_reached_head());
        b.check();
        assert!(b.head_lost());
        assert_eq!(b.sacked(), 3 * M, "2, 3 and 4");
        assert_eq!(b.next_candidate().unwrap().start, seq(1));
        // An unmarked head is left alone.
        let mut b2 = board(3);
        b2.ack_t(seq(1));
        assert!(!b2.pseudo_sack_reached_head());
        // A timeout forgets the marks.
        b.clear_sacks();
        b.mark_all_lost();
        b.check();
        assert_eq!((b.sacked(), b.lost(), b.pipe()), (0, 5 * M, 0));
    }

    #[test]
    fn with_ns3s_accounting_a_sacked_retransmission_stays_in_pipe_until_acknowledged() {
        for (ns3, pipe) in [(false, 8 * M), (true, 9 * M)] {
            let mut b = board(10);
            if ns3 {
                b.keep_retransmissions_when_sacked();
            }
            sack(&mut b, &[(seq(1), seq(2))]);
            // Segment 2 retransmitted (rule 3), then SACKed: its original or its copy arrived.
            let i = b.q.iter().position(|s| s.start == seq(2)).unwrap();
            b.mark_retransmitted(i, Time(5));
            sack(&mut b, &[(seq(1), seq(3))]);
            assert_eq!(b.pipe(), pipe, "ns-3 accounting {ns3}: 10 − 2 SACKed (+ the retransmission)");
            // A timeout clears it either way, as ns-3's SetSentListLost does.
            b.mark_all_lost();
            b.check();
            assert_eq!(b.pipe(), 0);
        }
    }

    #[test]
    fn partial_ack_trims_head() {
        let mut b = board(3);
        b.mark_head_lost();
        let a = b.ack_t(51);
        assert_eq!(a.bytes, 50);
        assert_eq!((b.una(), b.lost()), (51, 50));
        b.check();
        b.on_send(seq(3), seq(3) + 1, Time(7), true);
        assert_eq!(b.seg(3), (seq(3), seq(3) + 1, true));
    }
    #[test]
    fn a_board_with_nothing_in_flight_keeps_no_storage() {
        let mut b = board(3);
        b.ack_t(seq(2));
        assert!(b.q.capacity() > 0, "a segment still in flight keeps the queue");
        b.ack_t(seq(3));
        assert_eq!(b.q.capacity(), 0);
        b.check();
    }

    /// `n` segments of M bytes from seq 1, segment i sent at i ms.
    fn board_ms(n: u64) -> Scoreboard {
        let mut b = Scoreboard::new(1);
        for i in 0..n {
            b.on_send(1 + i * M, 1 + (i + 1) * M, Time(i * 1_000_000), false);
        }
        b
    }

    #[test]
    fn rack_marks_what_was_sent_before_the_latest_delivery_once_its_deadline_passes() {
        let ms = |x: u64| Time(x * 1_000_000);
        let mut b = board_ms(10);
        let mut rack = Rack::default();
        rack.on_rtt(Dur::from_millis(20));
        // Segment 5 (sent at 5 ms) SACKed at 25 ms: RACK's RTT 20 ms. Segments 0-4 were
        // sent before it: with a 5 ms window they are lost at sent + 25 ms.
        b.apply_sack(&SackBlocks::from_slice(&[(seq(5), seq(6))]), &mut rack, ms(25));
        assert_eq!(b.mark_lost_by_rack(&rack, Dur::from_millis(5), ms(25)), Some(ms(26)));
        assert_eq!(b.lost(), M, "segment 0's deadline is 25 ms, segment 1's 26 ms");
        assert_eq!(b.mark_lost_by_rack(&rack, Dur::from_millis(5), ms(27)), Some(ms(28)));
        assert_eq!(b.lost(), 3 * M, "segments 0-2 (deadlines 25-27 ms); segment 3 waits to 28 ms");
        // Without a window everything sent before segment 5 is lost; nothing after it.
        assert_eq!(b.mark_lost_by_rack(&rack, Dur::ZERO, ms(27)), None);
        assert_eq!(b.lost(), 5 * M);
        b.check();
        // A retransmission is judged by the segments sent after it: segment 0 resent
        // at 30 ms, then new segments 10 and 11.
        let c = b.next_candidate().unwrap();
        b.mark_retransmitted(c.idx, ms(30));
        b.on_send(seq(10), seq(11), ms(30), false);
        b.on_send(seq(11), seq(12), ms(31), false);
        b.apply_sack(&SackBlocks::from_slice(&[(seq(10), seq(11)), (seq(5), seq(6))]), &mut rack, ms(50));
        assert_eq!(b.mark_lost_by_rack(&rack, Dur::ZERO, ms(50)), None);
        assert!(b.next_candidate().is_some_and(|c| c.start == seq(0)), "the lost retransmission is due again");
        b.check();
    }

    #[test]
    fn reordering_is_a_segment_never_retransmitted_delivered_below_an_earlier_sack() {
        let mut b = board(10);
        let mut rack = Rack::default();
        let t = Time(1000);
        // The ACK that delivers segment 0 and first SACKs segment 2 is no reordering.
        b.apply_sack(&SackBlocks::from_slice(&[(seq(2), seq(3))]), &mut rack, t);
        b.ack(seq(1), seq(0), &mut rack, t);
        assert_eq!(rack.reo_wnd(true, 0, 3, Some(Dur(100))), Dur::ZERO);
        // Segment 1 delivered after segment 2 was SACKed is.
        b.ack(seq(3), b.high_sacked(), &mut rack, t);
        assert_eq!(rack.reo_wnd(true, 0, 3, Some(Dur(100))), Dur(100));
    }
}
