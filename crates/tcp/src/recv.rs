//! Receiver side: in-order point, out-of-order ranges, SACK blocks (RFC 2018) and the
//! delayed-ACK policy (RFC 1122 §4.2.3.2, RFC 5681 §4.2).
//!
//! The application consumes in-order data instantly, so the buffer only ever holds
//! out-of-order bytes. The advertised window is `rcv_buf - ooo_bytes`, or, with
//! autotuning, what Linux's window growth allows ([`RcvSpace`]); either way its
//! right edge never moves back, and data up to it is kept (Linux's
//! `tcp_select_window` with `tcp_shrink_window` off, its default).

use crate::rcv_mss::RcvMss;
use crate::rcv_space::RcvSpace;
use crate::segment::KeptBlocks;
use crate::SackBlocks;
use std::collections::VecDeque;
use units::{Dur, Opt, Time};

/// What one segment did for the application.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Rx {
    /// New in-order payload bytes.
    pub delivered: u64,
    /// The peer's FIN was reached in order.
    pub fin: bool,
}

/// Laid out in declaration order (`repr(C)`), in the order a connection's
/// state is visited (see [`crate::Tcp`]): what is seldom read first, then
/// what only arriving data touches, then what every segment sent reads
/// (the ACK point, the window, the SACK blocks, the delayed ACK), next to
/// the rest of the endpoint's state, so that a sender's ACKs leave the
/// first lines alone.
#[derive(Clone, Debug)]
#[repr(C)]
pub(crate) struct Receiver {
    /// Sequence number of the peer's FIN once seen (possibly out of order).
    fin_seq: Opt<u64>,
    /// Autotuning: the starting buffer (set before `start`), then the window's growth.
    auto_initial: Opt<u64>,
    /// Sorted, disjoint, non-adjacent `[start, end)` ranges above `rcv_nxt`.
    ooo: VecDeque<(u64, u64)>,
    /// When in-order data last arrived.
    last_data: Opt<Time>,
    delack_timeout: Dur,
    /// `TcpConfig::ack_bytes`, the bytes counted towards it, and whether
    /// the ACK now due is one of its own.
    ack_bytes: Opt<u64>,
    /// Delayed ACK: ACK at once when more than this many in-order bytes are unacknowledged.
    ack_after: u32,
    /// Linux quick-ACK mode: data segments still to ACK at once (Linux's
    /// count is at most 16).
    quick: u16,
    quick_max: u16,
    /// The sender's segment size as measured here, the marks that ask for
    /// an ACK once the application has read, and the interactive mode.
    rcv_mss: RcvMss,
    /// Whether those marks are heeded (`TcpConfig::ack_pushed`).
    ack_pushed: bool,
    /// A FIN's ACK waits for the timer or our reply (`TcpConfig::delayed_fin_ack`,
    /// until the application closes).
    fin_delays_ack: bool,
    space: Option<RcvSpace>,
    rcv_nxt: u64,
    rcv_buf: u64,
    ooo_bytes: u64,
    /// The right edge of the window last advertised, which never moves back.
    right_edge: u64,
    credit: u64,
    unacked: u64,
    delack_at: Opt<Time>,
    /// Blocks to report, most recent first.
    sack: KeptBlocks,
    fin_done: bool,
    /// SACK blocks that fit beside the other options (3 with timestamps).
    max_blocks: u8,
    sack_enabled: bool,
    /// A fixed window is reduced by the bytes held out of order (`TcpConfig::ooo_shrinks_window`).
    ooo_shrinks: bool,
    credit_ack: bool,
    ack_now: bool,
}

impl Receiver {
    pub fn new(rcv_buf: u64, delack_timeout: Dur) -> Self {
        Receiver {
            rcv_nxt: 0,
            ooo: VecDeque::new(),
            ooo_bytes: 0,
            sack: KeptBlocks::default(),
            sack_enabled: false,
            fin_seq: Opt::NONE,
            fin_done: false,
            rcv_buf,
            ack_after: 0,
            unacked: 0,
            ack_bytes: Opt::NONE,
            credit: 0,
            credit_ack: false,
            ack_now: false,
            delack_at: Opt::NONE,
            delack_timeout,
            max_blocks: SackBlocks::MAX as u8,
            rcv_mss: RcvMss::new(0, false),
            ack_pushed: false,
            fin_delays_ack: false,
            quick: 0,
            quick_max: 0,
            last_data: Opt::NONE,
            auto_initial: Opt::NONE,
            space: None,
            right_edge: 0,
            ooo_shrinks: true,
        }
    }

    /// Whether a fixed window leaves out the bytes held out of order (Linux: the
    /// buffer holds them), or is the whole buffer from `rcv_nxt` on (ns-3's
    /// `TcpRxBuffer`, whose application has read everything in order).
    pub fn set_ooo_shrinks_window(&mut self, on: bool) {
        self.ooo_shrinks = on;
    }

    /// Linux receive-buffer autotuning from `initial` bytes up to the
    /// buffer given at creation (call before `start`).
    pub fn set_autotuning(&mut self, initial: u64) {
        self.auto_initial = Opt::some(initial);
    }

    /// The receiver's round-trip sample from a full-sized segment echoing
    /// `tsecr`, `delta` ago (Linux `tcp_rcv_rtt_measure_ts`).
    pub fn rtt_from_echo(&mut self, tsecr: u32, delta: Dur) {
        if let Some(sp) = &mut self.space {
            sp.rtt_from_echo(tsecr, delta);
        }
    }

    /// Quick-ACK mode (Linux `tcp_incr_quickack`): ACK the next `n` data
    /// segments at once. Entered at the first data and after `idle` without
    /// data (Linux: longer than the RTO), so short transfers and the first
    /// round trips after a pause are not slowed by delayed ACKs.
    pub fn set_quickack(&mut self, n: u32) {
        self.quick_max = n.min(u16::MAX as u32) as u16;
    }

    /// ACK at least the next `n` data segments at once (Linux
    /// `tcp_enter_quickack_mode`, as for a CE mark: the sender may be down to
    /// a very small window).
    pub fn enter_quickack(&mut self, n: u32) {
        self.quick = self.quick.max(n.min(u16::MAX as u32) as u16);
    }

    /// ACK at once the segment that ends a write, once the application has
    /// read it (`TcpConfig::ack_pushed`; call before `start`).
    pub fn set_ack_pushed(&mut self, on: bool) {
        self.ack_pushed = on;
    }

    /// Whether a FIN in order waits for the delayed-ACK timer or our reply
    /// (`TcpConfig::delayed_fin_ack`); off once the application has closed,
    /// as Linux's `tcp_fin` ACKs at once in FIN-WAIT.
    pub fn set_fin_delays_ack(&mut self, on: bool) {
        self.fin_delays_ack = on;
    }

    /// Data of ours went out at `now`: within the delayed-ACK timeout of data
    /// arriving, the connection is interactive (Linux `tcp_event_data_sent`,
    /// `tcp_pingpong_thresh` 1).
    pub fn on_data_sent(&mut self, now: Time) {
        if self.last_data.get().is_some_and(|t| now.saturating_since(t) < self.delack_timeout) {
            self.rcv_mss.set_pingpong(true);
        }
    }

    /// The delayed-ACK timer fired: an interactive connection missed its
    /// piggybacked ACK and is no longer taken as interactive (Linux
    /// `tcp_delack_timer_handler`).
    pub fn on_delack_timer(&mut self) {
        self.rcv_mss.set_pingpong(false);
        self.ack_now = true;
    }

    /// ACK once per `n` bytes on average (`TcpConfig::ack_bytes`).
    pub fn set_ack_bytes(&mut self, n: Option<u64>) {
        self.ack_bytes = n.map(|n| n.max(1)).into();
    }

    /// Called before in-order data at `now`; `idle` is the connection's RTO.
    pub fn data_arrives(&mut self, now: Time, idle: Dur) {
        if self.last_data.get().is_none_or(|t| now.saturating_since(t) > idle) {
            self.quick = self.quick_max;
        }
        self.last_data = Opt::some(now);
    }

    /// Synchronise on the peer's SYN; `mss` and `ack_every` set the delayed-ACK threshold
    /// (Linux: ACK once more than one full segment is pending when ack_every = 2);
    /// `offered` is the window our SYN (or SYN-ACK) offers.
    pub fn start(&mut self, peer_isn: u64, mss: u32, ack_every: u32, sack: bool, timestamps: bool, offered: u64) {
        self.rcv_nxt = peer_isn + 1;
        self.ack_after = ack_every.saturating_sub(1).saturating_mul(mss);
        self.rcv_mss = RcvMss::new(mss, timestamps);
        self.sack_enabled = sack;
        // 40 option bytes: 12 go to the timestamps, leaving room for 3 blocks.
        self.max_blocks = if timestamps { 3 } else { SackBlocks::MAX as u8 };
        self.space = self.auto_initial.get().map(|initial| RcvSpace::new(mss, initial, self.rcv_buf, self.rcv_nxt, offered));
        self.right_edge = self.rcv_nxt + offered;
    }

    #[inline]
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }
    #[inline]
    pub fn window(&self) -> u64 {
        // The buffer's free space, but never less than what is left of the
        // window last advertised: a receiver does not shrink its window
        // (RFC 9293 §3.8.6, Linux's tcp_select_window, which advertises
        // what is left rounded up to the scale's unit), so data the sender
        // may send past a hole is kept, not trimmed.
        let left = self.right_edge.saturating_sub(self.rcv_nxt);
        let room = self.rcv_buf.saturating_sub(self.ooo_bytes).max(left);
        match &self.space {
            None if !self.ooo_shrinks => self.rcv_buf,
            None => room,
            Some(sp) => {
                let kept = sp.align(left);
                sp.window(self.ooo_bytes).max(kept).min(room.max(kept))
            }
        }
    }
    #[inline]
    pub fn sack_blocks(&self) -> SackBlocks {
        if self.sack_enabled {
            self.sack.get()
        } else {
            SackBlocks::default()
        }
    }
    #[inline]
    pub fn ack_due(&self) -> bool {
        self.ack_now
    }
    #[inline]
    pub fn delack_deadline(&self) -> Option<Time> {
        self.delack_at.get()
    }
    #[cfg(test)]
    pub fn fin_received(&self) -> bool {
        self.fin_done
    }
    /// A segment that needs an ACK regardless of the delayed-ACK policy.
    pub fn force_ack(&mut self) {
        self.ack_now = true;
    }
    /// Any segment carrying our ACK went out.
    #[inline]
    pub fn on_ack_sent(&mut self) {
        if !self.credit_ack {
            self.credit = 0;
        }
        self.credit_ack = false;
        self.unacked = 0;
        self.ack_now = false;
        self.delack_at = Opt::NONE;
        self.rcv_mss.on_ack_sent();
        self.right_edge = self.right_edge.max(self.rcv_nxt + self.window());
    }
    /// Is `seq` acceptable for a RST (RFC 793 window check)?
    pub fn in_window(&self, seq: u64) -> bool {
        seq >= self.rcv_nxt && seq < self.rcv_nxt + self.window().max(1)
    }

    /// Process the payload `[seq, seq+len)`, its PSH flag and a FIN flag.
    pub fn on_segment(&mut self, now: Time, seq: u64, len: u32, psh: bool, fin: bool) -> Rx {
        let mut rx = Rx::default();
        // Nothing beyond what the buffer can hold is kept (the sender respects the
        // window, so this only trims misbehaviour).
        let limit = self.rcv_nxt + self.window();
        let mut end = seq + len as u64;
        let mut fin = fin;
        if end > limit {
            end = limit;
            fin = false;
        }
        if fin && !self.fin_done {
            self.fin_seq = Opt::some(end);
        }
        if len == 0 && fin && seq == self.rcv_nxt && !self.fin_done {
            // A FIN alone, in order: its ACK is decided below.
        } else if end <= self.rcv_nxt || (len == 0 && !fin) {
            // Old duplicate (or pure ACK): duplicates get an immediate ACK (RFC 5681 §4.2).
            if len > 0 || fin {
                self.ack_now = true;
            }
        } else if seq > self.rcv_nxt {
            if end > seq {
                let held = self.ooo_bytes;
                let r = self.insert(seq, end);
                self.report(r);
                // Linux (tcp_data_queue_ofo) opens the window on out-of-order
                // data too when SACK is on (without it the duplicate ACKs
                // must stay duplicates), and grows the buffer to hold the hole.
                let span = self.ooo_span();
                if let Some(sp) = &mut self.space {
                    if self.sack_enabled {
                        sp.grow(len, held);
                    }
                    sp.out_of_order(span);
                }
            }
            self.ack_now = true; // out of order: ACK at once (RFC 5681 §4.2)
        } else {
            let filled_hole = !self.ooo.is_empty();
            let start = self.rcv_nxt;
            self.rcv_nxt = end;
            while let Some(&(s, e)) = self.ooo.front() {
                if s > self.rcv_nxt {
                    break;
                }
                self.rcv_nxt = self.rcv_nxt.max(e);
                self.ooo_bytes -= e - s;
                self.ooo.pop_front();
            }
            if filled_hole && self.ooo.is_empty() {
                // No storage kept for holes once they are filled.
                self.ooo = VecDeque::new();
            }
            rx.delivered = self.rcv_nxt - start;
            // Linux's `tcp_fin` runs before the ACK is decided: a FIN that
            // makes the connection interactive leaves quick-ACK mode off.
            let interactive_fin = self.fin_delays_ack && self.fin_seq.get() == Some(self.rcv_nxt);
            if interactive_fin {
                self.rcv_mss.set_pingpong(true);
            }
            // Linux opens the window on in-order data and ACKs at once
            // while it does (tcp_grow_window's quick ACK), then lets the
            // application read, which right-sizes the buffer.
            let mut opened = false;
            let span = self.ooo_span();
            let resized = self.rcv_mss.measure(len, psh);
            if let Some(sp) = &mut self.space {
                if resized {
                    // What the last ACK offered, as Linux's `rcv_wnd`.
                    sp.remeasure(len, self.right_edge.saturating_sub(start));
                }
                opened = sp.grow(len, self.ooo_bytes);
                if !sp.timestamped() {
                    sp.rtt_from_window(now, self.rcv_nxt, self.right_edge.saturating_sub(start));
                }
                sp.adjust(now, self.rcv_nxt, span);
            }
            if filled_hole {
                self.ack_now = true; // segment filled (part of) a gap
                self.refresh_sack();
            } else {
                self.unacked += rx.delivered;
                if let Some(per) = self.ack_bytes.get() {
                    self.credit += rx.delivered;
                    if self.credit >= per {
                        // Keep the remainder (less than one ACK's worth).
                        self.credit = (self.credit - per).min(per - 1);
                        self.credit_ack = true;
                        self.ack_now = true;
                    } else if self.delack_at.is_none() {
                        self.delack_at = Opt::some(now + self.delack_timeout);
                    }
                } else if (self.quick > 0 || opened) && !interactive_fin {
                    // Opening the window sets quick-ACK's low bit (Linux
                    // `icsk_ack.quick |= 1`): the ACK it sends costs the
                    // count nothing while the count is even.
                    self.quick = (self.quick | opened as u16).saturating_sub(1);
                    self.ack_now = true;
                } else if self.unacked > self.ack_after as u64 {
                    self.ack_now = true;
                } else if self.ack_pushed && self.ooo.is_empty() && self.rcv_mss.ack_on_read() {
                    // The application reads everything at once (Linux `tcp_cleanup_rbuf`).
                    self.ack_now = true;
                } else if self.delack_at.is_none() {
                    self.delack_at = Opt::some(now + self.delack_timeout);
                }
            }
        }
        if !self.fin_done && self.fin_seq.get() == Some(self.rcv_nxt) {
            self.rcv_nxt += 1;
            self.fin_done = true;
            rx.fin = true;
            if self.fin_delays_ack {
                // Linux's `tcp_fin` in ESTABLISHED: ping-pong mode, so the
                // ACK is delayed and an application that closes in answer
                // sends its FIN with it, one segment rather than two.
                self.rcv_mss.set_pingpong(true);
                if !self.ack_now && self.delack_at.is_none() {
                    self.delack_at = Opt::some(now + self.delack_timeout);
                }
            } else {
                self.ack_now = true;
            }
        }
        rx
    }

    /// Bytes from `rcv_nxt` to the end of the highest range held out of order.
    fn ooo_span(&self) -> u64 {
        self.ooo.back().map_or(0, |&(_, e)| e - self.rcv_nxt)
    }

    /// Insert `[s, e)` into the out-of-order set, merging; returns the containing range.
    fn insert(&mut self, s: u64, e: u64) -> (u64, u64) {
        // First range that ends at or after s (could touch or overlap).
        let i = self.ooo.partition_point(|&(_, re)| re < s);
        let (mut ns, mut ne) = (s, e);
        let mut removed = 0;
        while let Some(&(rs, re)) = self.ooo.get(i) {
            if rs > ne {
                break;
            }
            ns = ns.min(rs);
            ne = ne.max(re);
            removed += re - rs;
            self.ooo.remove(i);
        }
        self.ooo.insert(i, (ns, ne));
        self.ooo_bytes = self.ooo_bytes - removed + (ne - ns);
        (ns, ne)
    }

    fn containing(&self, x: u64) -> Option<(u64, u64)> {
        let i = self.ooo.partition_point(|&(_, e)| e <= x);
        self.ooo.get(i).copied().filter(|&(s, _)| s <= x)
    }

    /// RFC 2018 §4: the block holding the segment that triggered this ACK first, then
    /// the most recently reported blocks that are not already covered.
    fn report(&mut self, first: (u64, u64)) {
        let old = self.sack.get();
        let mut new = SackBlocks::default();
        self.push_block(&mut new, first);
        for &(s, _) in old.as_slice() {
            if let Some(r) = self.containing(s) {
                self.push_block(&mut new, r);
            }
        }
        self.fill_sack(new);
    }

    /// After `rcv_nxt` moved: drop delivered blocks and widen merged ones.
    fn refresh_sack(&mut self) {
        let old = self.sack.get();
        let mut new = SackBlocks::default();
        for &(s, _) in old.as_slice() {
            if s >= self.rcv_nxt {
                if let Some(r) = self.containing(s) {
                    self.push_block(&mut new, r);
                }
            }
        }
        self.fill_sack(new);
    }

    /// Use `blocks`' spare slots for ranges not listed, lowest first, so that every ACK
    /// sent while data is held out of order carries SACK information (RFC 2018 §4); they
    /// are then the blocks to report.
    fn fill_sack(&mut self, mut blocks: SackBlocks) {
        for i in 0..self.ooo.len() {
            if blocks.n >= self.max_blocks {
                break;
            }
            self.push_block(&mut blocks, self.ooo[i]);
        }
        self.sack.set(blocks);
    }

    fn push_block(&self, blocks: &mut SackBlocks, r: (u64, u64)) {
        let n = blocks.n as usize;
        if n < self.max_blocks as usize && !blocks.blocks[..n].contains(&r) {
            blocks.blocks[n] = r;
            blocks.n += 1;
        }
    }

    #[cfg(test)]
    pub(crate) fn ooo_ranges(&self) -> Vec<(u64, u64)> {
        self.ooo.iter().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sender's ACKs, which read the ACK point, the window and the
    /// SACK blocks, leave the fields only arriving data touches alone:
    /// they lead the receiver, the ACK point follows them.
    #[test]
    fn what_only_arriving_data_touches_leads_the_receiver() {
        use std::mem::offset_of;
        let data_only = offset_of!(Receiver, ack_pushed) + 1;
        assert!(data_only <= offset_of!(Receiver, space));
        assert!(offset_of!(Receiver, space) < offset_of!(Receiver, rcv_nxt));
        assert!(data_only >= 64, "a sender's ACK skips at least a cache line of it");
    }

    fn rx() -> Receiver {
        let mut r = Receiver::new(1 << 20, Dur::from_millis(40));
        r.start(0, 500, 2, true, false, r.window());
        r
    }

    fn blocks(r: &Receiver) -> Vec<(u64, u64)> {
        r.sack_blocks().as_slice().to_vec()
    }

    #[test]
    fn rfc2018_single_loss_block_grows() {
        // RFC 2018 §5 case 2 style: first segment lost, the rest arrive.
        let mut r = rx();
        for i in 1..4u64 {
            let rx = r.on_segment(Time::ZERO, 1 + i * 500, 500, false, false);
            assert_eq!(rx.delivered, 0);
            assert!(r.ack_due());
            assert_eq!(blocks(&r), vec![(501, 1 + (i + 1) * 500)]);
            r.on_ack_sent();
        }
        // Out-of-order bytes fill the buffer but the offered edge stays.
        assert_eq!(r.window(), 1 << 20);
        let rx = r.on_segment(Time::ZERO, 1, 500, false, false);
        assert_eq!(rx.delivered, 2000);
        assert_eq!(r.rcv_nxt(), 2001);
        assert!(r.ack_due(), "hole fill must be acked at once");
        assert!(blocks(&r).is_empty());
        assert_eq!(r.window(), 1 << 20);
        assert_eq!(r.ooo.capacity(), 0, "a filled hole keeps no storage");
    }

    #[test]
    fn rfc2018_every_other_lost_most_recent_first() {
        // Segments of 500 from seq 1; segments 1, 3, 5 (0-based even) are dropped.
        let mut r = rx();
        let s = |i: u64| 1 + i * 500;
        r.on_segment(Time::ZERO, s(1), 500, false, false);
        assert_eq!(blocks(&r), vec![(s(1), s(2))]);
        r.on_segment(Time::ZERO, s(3), 500, false, false);
        assert_eq!(blocks(&r), vec![(s(3), s(4)), (s(1), s(2))]);
        r.on_segment(Time::ZERO, s(5), 500, false, false);
        assert_eq!(blocks(&r), vec![(s(5), s(6)), (s(3), s(4)), (s(1), s(2))]);
        // Segment 4 fills between blocks 3 and 5: merged block first, stale subsets dropped.
        r.on_segment(Time::ZERO, s(4), 500, false, false);
        assert_eq!(blocks(&r), vec![(s(3), s(6)), (s(1), s(2))]);
        // An older block becoming most recent moves to the front.
        r.on_segment(Time::ZERO, s(7), 500, false, false);
        assert_eq!(blocks(&r), vec![(s(7), s(8)), (s(3), s(6)), (s(1), s(2))]);
        r.on_segment(Time::ZERO, s(1), 500, false, false); // duplicate of a SACKed segment
        assert_eq!(blocks(&r), vec![(s(1), s(2)), (s(7), s(8)), (s(3), s(6))]);
        // In-order segment 0 delivers 0..2 and drops the delivered block.
        let d = r.on_segment(Time::ZERO, s(0), 500, false, false);
        assert_eq!(d.delivered, 1000);
        assert_eq!(blocks(&r), vec![(s(7), s(8)), (s(3), s(6))]);
        assert_eq!(r.ooo_ranges(), vec![(s(3), s(6)), (s(7), s(8))]);
    }

    #[test]
    fn at_most_four_blocks_and_spare_slots_refilled() {
        let mut r = rx();
        let s = |i: u64| 1 + i * 500;
        for i in [1, 3, 5, 7, 9] {
            r.on_segment(Time::ZERO, s(i), 500, false, false);
        }
        assert_eq!(blocks(&r), vec![(s(9), s(10)), (s(7), s(8)), (s(5), s(6)), (s(3), s(4))]);
        // Filling the first hole delivers up to s(2); the unlisted block (s1) is gone, and
        // the list keeps the recent ones (there are exactly 4 ranges left).
        r.on_segment(Time::ZERO, s(0), 500, false, false);
        assert_eq!(r.rcv_nxt(), s(2));
        assert_eq!(blocks(&r), vec![(s(9), s(10)), (s(7), s(8)), (s(5), s(6)), (s(3), s(4))]);
        r.on_segment(Time::ZERO, s(2), 500, false, false);
        assert_eq!(blocks(&r), vec![(s(9), s(10)), (s(7), s(8)), (s(5), s(6))]);
    }

    #[test]
    fn delayed_ack_every_second_full_segment_or_timer() {
        let mut r = rx();
        let t = Time(1_000);
        r.on_segment(t, 1, 500, false, false);
        assert!(!r.ack_due());
        assert_eq!(r.delack_deadline(), Some(t + Dur::from_millis(40)));
        r.on_segment(t + Dur(5), 501, 500, false, false);
        assert!(r.ack_due());
        r.on_ack_sent();
        assert_eq!(r.delack_deadline(), None);
        // A short segment alone waits for the timer.
        r.on_segment(t, 1001, 100, false, false);
        assert!(!r.ack_due());
        assert!(r.delack_deadline().is_some());
    }

    #[test]
    fn ack_every_one_acks_everything() {
        let mut r = Receiver::new(1 << 20, Dur::from_millis(40));
        r.start(0, 500, 1, false, false, r.window());
        r.on_segment(Time::ZERO, 1, 10, false, false);
        assert!(r.ack_due());
        assert!(r.sack_blocks().is_empty());
    }

    #[test]
    fn duplicates_are_acked_and_fin_in_order_only() {
        let mut r = rx();
        r.on_segment(Time::ZERO, 1, 500, false, false);
        r.on_ack_sent();
        r.on_segment(Time::ZERO, 1, 500, false, false);
        assert!(r.ack_due(), "old duplicate");
        r.on_ack_sent();
        // FIN arrives before the data preceding it.
        let a = r.on_segment(Time::ZERO, 1001, 200, false, true);
        assert!(!a.fin && r.ack_due());
        assert_eq!(r.rcv_nxt(), 501);
        let b = r.on_segment(Time::ZERO, 501, 500, false, false);
        assert!(b.fin);
        assert_eq!(b.delivered, 700);
        assert_eq!(r.rcv_nxt(), 1202, "FIN consumes one sequence number");
        assert!(r.fin_received());
        // Retransmitted FIN: duplicate, acked, not reported again.
        r.on_ack_sent();
        let c = r.on_segment(Time::ZERO, 1001, 200, false, true);
        assert!(!c.fin && r.ack_due());
    }

    #[test]
    fn out_of_order_data_within_the_offered_window_is_kept() {
        // A fixed 2,000-byte buffer offers 2,000 bytes. The first segment is
        // lost; the next three fill the buffer out of order, and the fourth,
        // still within the window offered before any of them, is kept too:
        // Linux never moves the right edge back, so the sender, which sent
        // up to it, loses nothing at the receiver.
        let mut r = Receiver::new(2000, Dur::from_millis(40));
        r.start(0, 500, 2, true, false, r.window());
        r.on_ack_sent();
        assert_eq!(r.window(), 2000);
        for i in 1..4u64 {
            r.on_segment(Time::ZERO, 1 + i * 500, 500, false, false);
            r.on_ack_sent();
            // The window the next ACK offers: to the same right edge.
            assert_eq!(r.rcv_nxt() + r.window(), 2001);
        }
        assert_eq!(r.ooo_ranges(), vec![(501, 2001)]);
        // Beyond the edge: trimmed.
        r.on_segment(Time::ZERO, 2001, 500, false, false);
        assert_eq!(r.ooo_ranges(), vec![(501, 2001)]);
        let d = r.on_segment(Time::ZERO, 1, 500, false, false);
        assert_eq!(d.delivered, 2000);
        r.on_ack_sent();
        assert_eq!(r.rcv_nxt() + r.window(), 4001);
    }

    #[test]
    fn a_fixed_window_shrinks_by_the_bytes_held_out_of_order_unless_told_not_to() {
        // Segments 0 and 3 lost; 1, 2 and 4 held out of order. Whatever the rule, the
        // window never pulls its right edge back (1 + 19,200) while they wait.
        for (shrinks, want) in [(true, 19_200 - 960), (false, 19_200)] {
            let mut r = Receiver::new(19_200, Dur::from_millis(200));
            r.set_ooo_shrinks_window(shrinks);
            r.start(0, 960, 1, false, false, r.window());
            r.on_ack_sent();
            for i in [1, 2, 4] {
                r.on_segment(Time::ZERO, 1 + i * 960, 960, false, false);
                assert_eq!(r.rcv_nxt() + r.window(), 1 + 19_200, "ooo_shrinks_window {shrinks}");
                r.on_ack_sent();
            }
            // Segment 0 fills the first hole; segment 4 is still held. Linux's buffer
            // holds it, so the window leaves it out; ns-3's receiver offers the whole
            // buffer from rcv_nxt.
            r.on_segment(Time::ZERO, 1, 960, false, false);
            assert_eq!((r.rcv_nxt(), r.window()), (1 + 3 * 960, want), "ooo_shrinks_window {shrinks}");
        }
    }

    #[test]
    fn a_fixed_window_keeps_everything_sent_within_it_past_a_hole() {
        // A 20-segment window; the first segment is lost and the other 19
        // arrive. Holding them takes 19 segments of the buffer, but they lie
        // within the window advertised before, which a receiver never
        // shrinks: all are kept, and the duplicate ACKs keep offering the
        // same right edge, so filling the hole delivers all 20 at once.
        let mss = 1000u64;
        let mut r = Receiver::new(20 * mss, Dur::from_millis(40));
        r.start(0, mss as u32, 1, false, false, r.window());
        r.on_ack_sent();
        let edge = r.rcv_nxt() + r.window();
        assert_eq!(edge, 1 + 20 * mss);
        for i in 1..20 {
            r.on_segment(Time::ZERO, 1 + i * mss, mss as u32, false, false);
            assert_eq!(r.rcv_nxt() + r.window(), edge, "after segment {i} the right edge stays");
            r.on_ack_sent();
        }
        assert_eq!(r.ooo_ranges(), vec![(1 + mss, edge)]);
        let d = r.on_segment(Time::ZERO, 1, mss as u32, false, false);
        assert_eq!(d.delivered, 20 * mss);
        assert_eq!(r.window(), 20 * mss, "an empty buffer offers all of it again");
    }

    #[test]
    fn overlapping_segments_merge() {
        let mut r = rx();
        r.on_segment(Time::ZERO, 1001, 500, false, false);
        r.on_segment(Time::ZERO, 2001, 500, false, false);
        r.on_segment(Time::ZERO, 1201, 1000, false, false); // bridges both
        assert_eq!(r.ooo_ranges(), vec![(1001, 2501)]);
        assert_eq!(r.window(), 1 << 20);
        let d = r.on_segment(Time::ZERO, 1, 1100, false, false); // overlaps the range start
        assert_eq!(d.delivered, 2500);
        assert!(r.ooo_ranges().is_empty());
    }
}
