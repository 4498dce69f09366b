//! The receive window as Linux grows it: the advertised window starts at
//! 64 KiB and opens by two segments per full-sized segment received
//! (`tcp_grow_window`, bounded by `rcv_ssthresh`) up to a clamp that
//! dynamic right-sizing raises once per receiver round trip to twice what
//! the application read in the last one, twice more in proportion to its
//! growth, and the span held out of order (`tcp_rcv_space_adjust` and
//! `tcp_rcvbuf_grow`, Linux 6.16 and later; an out-of-order segment raises
//! it too). While
//! the window opens, every segment is ACKed at once (`icsk_ack.quick |= 1`),
//! which shapes the sender's ACK clock in slow start: a train of an ACK per
//! segment rather than per two. How much of the buffer counts as window
//! Linux measures from the segments themselves (`scaling_ratio`, since 6.5):
//! a segment's payload over the memory its receive buffer takes, so the
//! window opens past 64 KiB from the first full-sized segment on. With
//! window scaling the advertised window is rounded up to the scale's unit
//! (`__tcp_select_window`'s `ALIGN`), not down to whole segments, and a
//! segment that opens the window is still in the buffer when the room is
//! measured (`tcp_grow_window` after `tcp_queue_rcv`), so the window stops
//! one segment's memory short of the buffer.

use units::{Dur, Opt, Time};

/// Linux's `tcp_rmem[1]`: the receive buffer a connection starts with.
pub const RCV_BUF_INITIAL: u64 = 128 << 10;
/// Linux's `TCP_INIT_CWND`, the first right-sizing measure in segments.
const INIT_SPACE_SEGMENTS: u64 = 10;
/// Segments smaller than this do not open the window (Linux: 128 bytes).
const GROW_MIN_LEN: u32 = 128;

/// The scaling ratio's unit: 1/256 (`TCP_RMEM_TO_WIN_SCALE`).
const RATIO_SCALE: u32 = 8;
/// Half of a buffer's bytes count as window until a segment is measured
/// (`TCP_DEFAULT_SCALING_RATIO`).
const DEFAULT_RATIO: u8 = 1 << (RATIO_SCALE - 1);
/// The memory Linux charges for a received segment (`skb->truesize`) when
/// the device hands it over in a 2 KiB buffer, as TUN does for a
/// 1500-byte packet and as most NIC drivers' page-fragment buffers do:
/// the buffer less its shared info, plus the `sk_buff` and shared info.
pub const RCV_TRUESIZE: u32 = 2304;

/// The window `space` bytes of buffer hold at `ratio`/256 (`tcp_win_from_space`).
fn win_from_space(space: u64, ratio: u8) -> u64 {
    (space * ratio as u64) >> RATIO_SCALE
}

/// The buffer that holds a window of `win` at `ratio`/256 (`tcp_space_from_win`).
fn space_from_win(win: u64, ratio: u8) -> u64 {
    (win << RATIO_SCALE) / ratio.max(1) as u64
}

/// The first window Linux offers (tcp_select_initial_window): what the
/// starting buffer holds, at most 64 KiB - 1, in whole segments of `mss`.
pub(crate) fn initial_window(mss: u32, initial_buf: u64, max_buf: u64) -> u64 {
    let mss = mss.max(1) as u64;
    (win_from_space(initial_buf.min(max_buf), DEFAULT_RATIO).min(u16::MAX as u64) / mss * mss).max(mss)
}

/// The window scale Linux chooses for a buffer that may grow to `max_buf`
/// (tcp_select_initial_window: the shift that lets 16 bits span it).
fn window_scale(max_buf: u64) -> u32 {
    (u64::BITS - 1 - max_buf.max(1).leading_zeros()).saturating_sub(15).min(14)
}

#[derive(Clone, Debug)]
pub(crate) struct RcvSpace {
    mss: u32,
    /// Window per buffer byte, in 1/256 (`scaling_ratio`).
    ratio: u8,
    /// The most the buffer may grow to (`tcp_rmem[2]`).
    max_buf: u64,
    /// The buffer now (`sk_rcvbuf`).
    buf: u64,
    /// What the window may open to (`rcv_ssthresh`).
    ssthresh: u64,
    /// Right-sizing: bytes read in the last measure (`rcvq_space.space`),
    /// and where and when it started.
    space: u64,
    space_seq: u64,
    /// None until data first arrives: a measure starts with the data.
    space_time: Opt<Time>,
    /// The receiver's round-trip estimate (`rcv_rtt_est`): a window's worth
    /// of data arriving, or a timestamp echoed.
    rtt: Opt<Dur>,
    rtt_seq: u64,
    rtt_time: Opt<Time>,
    last_tsecr: Option<u32>,
}

impl RcvSpace {
    /// A connection whose buffer may grow to `max_buf`, starting at
    /// `initial_buf`, from sequence number `rcv_nxt` on, whose SYN (or
    /// SYN-ACK) offered `offered`; `mss` is the segment size it receives.
    pub fn new(mss: u32, initial_buf: u64, max_buf: u64, rcv_nxt: u64, offered: u64) -> RcvSpace {
        let mss = mss.max(1);
        let buf = initial_buf.min(max_buf);
        // tcp_init_buffer_space: the window's clamp keeps one segment of
        // the buffer in reserve (`tcp_app_win`).
        let clamp = win_from_space(buf, DEFAULT_RATIO).saturating_sub(mss as u64).max(2 * mss as u64);
        let ssthresh = offered.min(clamp);
        RcvSpace {
            mss,
            ratio: DEFAULT_RATIO,
            max_buf,
            buf,
            ssthresh,
            space: (INIT_SPACE_SEGMENTS * mss as u64).min(ssthresh),
            space_seq: rcv_nxt,
            space_time: Opt::NONE,
            rtt: Opt::NONE,
            rtt_seq: 0,
            rtt_time: Opt::NONE,
            last_tsecr: None,
        }
    }

    /// The window the buffer allows with `ooo_bytes` held out of order.
    fn free(&self, ooo_bytes: u64) -> u64 {
        win_from_space(self.buf, self.ratio).saturating_sub(ooo_bytes)
    }

    /// The window to advertise (before the no-shrink rule): free space up
    /// to `rcv_ssthresh`, rounded up to the window scale's unit (without
    /// scaling, down to whole segments).
    pub fn window(&self, ooo_bytes: u64) -> u64 {
        let w = self.free(ooo_bytes).min(self.ssthresh);
        let mss = self.mss as u64;
        if window_scale(self.max_buf) > 0 {
            self.align(w)
        } else if w >= mss {
            w / mss * mss
        } else {
            w
        }
    }

    /// `w` rounded up to the window scale's unit, as a window that is kept
    /// rather than shrunk is advertised (`tcp_select_window`).
    pub fn align(&self, w: u64) -> u64 {
        let unit = 1u64 << window_scale(self.max_buf);
        w.div_ceil(unit) * unit
    }

    /// A segment of `len` bytes arrived: opens the window if there is room
    /// with the segment itself still in the buffer; true if it did, when
    /// Linux ACKs the segment at once.
    pub fn grow(&mut self, len: u32, ooo_bytes: u64) -> bool {
        if len < GROW_MIN_LEN {
            return false;
        }
        let held = win_from_space(RCV_TRUESIZE as u64, self.ratio);
        let room = self.free(ooo_bytes).saturating_sub(held).saturating_sub(self.ssthresh);
        if room == 0 {
            return false;
        }
        self.ssthresh += room.min((2 * self.mss as u64).max(2 * len as u64));
        true
    }

    /// An in-order segment of a new size, at least the segment size
    /// measured so far ([`crate::rcv_mss::RcvMss::measure`]), sets the ratio
    /// to its payload over its buffer's memory (`tcp_measure_rcv_mss`), and
    /// the window's clamp to what the buffer holds at that ratio
    /// (`tcp_set_window_clamp`): a lower clamp lowers `rcv_ssthresh`, a
    /// higher one raises it to the window last advertised, `advertised`.
    pub fn remeasure(&mut self, len: u32, advertised: u64) {
        let r = ((len as u64) << RATIO_SCALE) / RCV_TRUESIZE as u64;
        let old = self.ratio;
        self.ratio = r.clamp(1, u8::MAX as u64) as u8;
        let clamp = win_from_space(self.buf, self.ratio);
        if self.ratio > old {
            self.ssthresh = self.ssthresh.max(advertised.min(clamp));
        } else {
            self.ssthresh = self.ssthresh.min(clamp);
        }
        self.space = self.space.min(clamp);
    }

    /// The receiver's round-trip sample from a timestamp echo: `delta` since
    /// the segment's TSecr (full-sized segments with a new echo only).
    pub fn rtt_from_echo(&mut self, tsecr: u32, delta: Dur) {
        if self.last_tsecr == Some(tsecr) {
            return;
        }
        self.last_tsecr = Some(tsecr);
        if delta.0 > 0 {
            // tcp_rcv_rtt_update without window dependence: a smaller sample
            // is taken at once, a larger one enters an EWMA of 1/8, so the
            // estimate follows the path's floor and not the queue building
            // in slow start.
            self.rtt = Opt::some(match self.rtt.get() {
                Some(r) if delta >= r => Dur((r.0 as i64 + (delta.0 as i64 - r.0 as i64) / 8) as u64),
                _ => delta,
            });
        }
    }

    /// Without timestamps, the time a window's worth of data takes to
    /// arrive, the smallest such (tcp_rcv_rtt_measure).
    pub fn rtt_from_window(&mut self, now: Time, rcv_nxt: u64, window: u64) {
        match self.rtt_time.get() {
            Some(t) if rcv_nxt >= self.rtt_seq => {
                let d = now.saturating_since(t);
                if d.0 > 0 && self.rtt.get().is_none_or(|r| d < r) {
                    self.rtt = Opt::some(d);
                }
            }
            Some(_) => return,
            None => {}
        }
        self.rtt_seq = rcv_nxt + window;
        self.rtt_time = Opt::some(now);
    }

    /// The application has read everything up to `rcv_nxt` at `now`, with
    /// `ooo_span` bytes from `rcv_nxt` to the end of what is held out of
    /// order: once per receiver round trip, a read of more than the last
    /// measure grows the buffer (tcp_rcv_space_adjust).
    pub fn adjust(&mut self, now: Time, rcv_nxt: u64, ooo_span: u64) {
        let Some(since) = self.space_time.get() else {
            self.space_time = Opt::some(now);
            return;
        };
        let Some(rtt) = self.rtt.get() else { return };
        if now.saturating_since(since) < rtt {
            return;
        }
        let copied = rcv_nxt - self.space_seq;
        if copied > self.space {
            self.grow_buf(copied, ooo_span);
        }
        self.space_seq = rcv_nxt;
        self.space_time = Opt::some(now);
    }

    /// A segment was queued out of order, the held data now spanning
    /// `ooo_span` bytes from `rcv_nxt`: the buffer grows to hold it beside
    /// twice the last measure (tcp_data_queue_ofo), so that the memory the
    /// hole holds does not cut the sender's window.
    pub fn out_of_order(&mut self, ooo_span: u64) {
        self.grow_buf(self.space, ooo_span);
    }

    /// Linux `tcp_rcvbuf_grow`: the measure becomes `space`, and the buffer
    /// grows to hold twice it (right-sizing is a round trip late), twice
    /// more in proportion to its growth over the last measure (a sender in
    /// slow start doubles each round trip), and `ooo_span`, up to the
    /// maximum; it never shrinks.
    fn grow_buf(&mut self, space: u64, ooo_span: u64) {
        let old = self.space.max(1);
        self.space = space;
        let mut rcvwin = 2 * space;
        rcvwin += 2 * (rcvwin as u128 * space.saturating_sub(old) as u128 / old as u128) as u64;
        rcvwin += ooo_span;
        let buf = space_from_win(rcvwin, self.ratio).min(self.max_buf);
        if buf > self.buf {
            self.buf = buf;
        }
    }

    /// Whether round trips come from timestamp echoes.
    pub fn timestamped(&self) -> bool {
        self.last_tsecr.is_some()
    }

    /// The buffer's current size (Linux `sk_rcvbuf`).
    #[cfg(test)]
    pub fn buf(&self) -> u64 {
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1448;

    /// What a Linux 6.18 client's SYN offers on a 1500-byte path: 44
    /// segments of 1460 bytes.
    const SYN_WINDOW: u64 = 64_240;

    #[test]
    fn a_window_kept_from_the_syn_is_rounded_up_to_the_scales_unit() {
        let s = RcvSpace::new(MSS, RCV_BUF_INITIAL, 4 << 20, 0, SYN_WINDOW);
        // A 4 MiB buffer takes a scale of 7 (128-byte units). Until data
        // arrives the clamp keeps a segment of the 64 KiB in reserve
        // (65,536 - 1448), and what the SYN offered is kept, rounded up:
        // Linux's handshake ACK offers 64,256.
        assert_eq!(s.window(0), 64_128);
        assert_eq!(s.align(SYN_WINDOW), 64_256);
        let unscaled = RcvSpace::new(MSS, 16 << 10, 32 << 10, 0, 8 * MSS as u64);
        assert_eq!(unscaled.window(0), 8 * MSS as u64 / 2, "no scale: 8,192 less a segment, in whole segments");
    }

    #[test]
    fn the_window_opens_two_segments_per_segment_as_linux_opened_it() {
        // A Linux 6.18 client's ACKs of a download's first segments, from
        // the emulator's capture: 67,200, 70,144, 72,960, 75,904 and 78,848,
        // then 80,512 from the sixth on. The first full-sized segment is
        // measured (1448 bytes in 2304 of memory, a ratio of 160/256), which
        // raises the clamp to the 81,920 the 128 KiB buffer holds and
        // `rcv_ssthresh` to the 64,256 last offered; each segment adds two
        // (2,896) and the window is rounded up to 128 bytes.
        let mut s = RcvSpace::new(MSS, RCV_BUF_INITIAL, 4 << 20, 0, SYN_WINDOW);
        s.remeasure(MSS, 64_256);
        for want in [67_200, 70_144, 72_960, 75_904, 78_848, 80_512] {
            assert!(s.grow(MSS, 0));
            assert_eq!(s.window(0), want);
        }
        // The room is measured with the arriving segment in the buffer:
        // 81,920 less its 1,440 bytes' worth of memory.
        assert_eq!(s.ssthresh, 80_480);
        assert!(!s.grow(MSS, 0), "no room left: the window stays and ACKs are delayed again");
        // Right-sizing makes room: each segment then opens two more.
        s.rtt_from_echo(1, Dur::from_millis(40));
        s.adjust(Time::ZERO, 0, 0);
        s.adjust(Time(50 * 1_000_000), 100 * MSS as u64, 0);
        let before = s.ssthresh;
        assert!(s.grow(MSS, 0));
        assert_eq!(s.ssthresh, before + 2 * MSS as u64);
        assert!(!s.grow(100, 0), "small segments do not open the window");
    }

    #[test]
    fn a_lower_ratio_lowers_the_window_and_a_higher_one_raises_it_only_to_what_was_offered() {
        let mut s = RcvSpace::new(MSS, RCV_BUF_INITIAL, 4 << 20, 0, SYN_WINDOW);
        // 600 bytes in 2304: 66/256, a clamp of 33,792.
        s.remeasure(600, 64_256);
        assert_eq!(s.ssthresh, 33_792);
        s.remeasure(MSS, 40_000);
        assert_eq!(s.ssthresh, 40_000, "raised to the window last offered, not to the new clamp");
    }

    #[test]
    fn the_ratio_is_measured_on_each_larger_segment_size_and_never_on_a_smaller_one() {
        let mut s = RcvSpace::new(MSS, RCV_BUF_INITIAL, 4 << 20, 0, SYN_WINDOW);
        let mut m = crate::rcv_mss::RcvMss::new(MSS, true);
        let mut arrive = |s: &mut RcvSpace, len: u32| {
            if m.measure(len, false) {
                s.remeasure(len, SYN_WINDOW);
            }
            s.grow(len, 0);
        };
        // Below Linux's first guess of 536 bytes nothing is measured.
        arrive(&mut s, 300);
        assert_eq!(s.ratio, DEFAULT_RATIO);
        // A 600-byte segment is: 600·256/2304.
        arrive(&mut s, 600);
        assert_eq!(s.ratio, 66);
        // So is a full-sized one, whose ratio then stays.
        arrive(&mut s, MSS);
        assert_eq!(s.ratio, 160);
        arrive(&mut s, 600);
        assert_eq!(s.ratio, 160);
        // At the lower ratio the window could not exceed what the buffer
        // held then; a buffer right-sized at 160/256 holds the window it
        // was sized for.
        assert_eq!(win_from_space(space_from_win(100_000, 160), 160), 100_000);
    }

    #[test]
    fn right_sizing_grows_the_buffer_as_linux_does_in_slow_start() {
        let mut s = RcvSpace::new(MSS, RCV_BUF_INITIAL, 32 << 20, 0, SYN_WINDOW);
        s.remeasure(MSS, SYN_WINDOW);
        // The first data starts the first measure.
        s.adjust(Time::ZERO, 0, 0);
        s.adjust(Time(100 * 1_000_000), 50_000, 0);
        assert_eq!(s.buf(), RCV_BUF_INITIAL, "no round-trip estimate yet: nothing to measure against");
        s.rtt_from_echo(7, Dur::from_millis(45));
        s.adjust(Time(30 * 1_000_000), 14_000, 0);
        assert_eq!(s.buf(), RCV_BUF_INITIAL, "within a round trip of the last measure");
        // Linux 6.18's `tcp_rcvbuf_grow` trace of a download on a 45 ms
        // path (1448-byte segments at a ratio of 160/256): reads of 11, 20
        // and 40 segments in successive round trips leave the buffer at
        // 131,072, then raise it to 244,316 (window clamp 152,697) and
        // 556,032 (347,520): twice the read, twice more in proportion to
        // its growth, and no cushion beyond.
        let mut read = 0;
        for (t, segments, buf) in [(45, 11, 131_072), (90, 20, 244_316), (135, 40, 556_032)] {
            read += segments * MSS as u64;
            s.adjust(Time(t * 1_000_000), read, 0);
            assert_eq!(s.buf(), buf, "after {segments} segments");
        }
        assert_eq!(win_from_space(s.buf(), s.ratio), 347_520);
        // The same amount again: the buffer stays.
        s.adjust(Time(180 * 1_000_000), read + 40 * MSS as u64, 0);
        assert_eq!(s.buf(), 556_032);
        let mut small = RcvSpace::new(MSS, RCV_BUF_INITIAL, 1 << 20, 0, SYN_WINDOW);
        small.rtt_from_echo(1, Dur::from_millis(40));
        small.adjust(Time::ZERO, 0, 0);
        for i in 1..20u64 {
            small.adjust(Time(50 * i * 1_000_000), 20_000 * (1 << i.min(10)), 0);
        }
        assert_eq!(small.buf(), 1 << 20, "never past the maximum");
    }

    #[test]
    fn data_held_out_of_order_grows_the_buffer_by_its_span() {
        // The first measure is the initial window's ten segments; the
        // 128 KiB buffer holds 56 segments of window.
        let mut s = RcvSpace::new(MSS, RCV_BUF_INITIAL, 32 << 20, 0, SYN_WINDOW);
        s.remeasure(MSS, SYN_WINDOW);
        // Twice the measure and a hole of ten segments fit: nothing changes.
        s.out_of_order(10 * MSS as u64);
        assert_eq!(s.buf(), RCV_BUF_INITIAL);
        // A hole of sixty does not: the buffer grows to hold 20 + 60 segments.
        s.out_of_order(60 * MSS as u64);
        assert_eq!(s.buf(), space_from_win(80 * MSS as u64, s.ratio));
        // A read round trip counts what is still held the same way.
        let mut t = RcvSpace::new(MSS, RCV_BUF_INITIAL, 32 << 20, 0, SYN_WINDOW);
        t.remeasure(MSS, SYN_WINDOW);
        t.rtt_from_echo(1, Dur::from_millis(45));
        t.adjust(Time::ZERO, 0, 0);
        t.adjust(Time(45 * 1_000_000), 20 * MSS as u64, 60 * MSS as u64);
        // space 14,480 → 28,960: 2·20 + 2·40·(10/10) = 120 segments, + 60 held.
        assert_eq!(t.buf(), space_from_win(180 * MSS as u64, t.ratio));
    }

    #[test]
    fn the_receivers_round_trip_takes_a_smaller_echo_at_once_and_smooths_a_larger_one() {
        let mut s = RcvSpace::new(MSS, RCV_BUF_INITIAL, 4 << 20, 0, SYN_WINDOW);
        s.rtt_from_echo(1, Dur::from_millis(44));
        s.rtt_from_echo(2, Dur::from_millis(60));
        assert_eq!(s.rtt.get(), Some(Dur::from_millis(46)), "44 + (60 - 44) / 8");
        s.rtt_from_echo(3, Dur::from_millis(45));
        assert_eq!(s.rtt.get(), Some(Dur::from_millis(45)), "not 46 - 1/8: Linux keeps the floor");
        s.rtt_from_echo(3, Dur::from_millis(1));
        assert_eq!(s.rtt.get(), Some(Dur::from_millis(45)), "an echo already used is not used again");
    }

    #[test]
    fn without_timestamps_the_round_trip_is_a_windows_arrival() {
        let mut s = RcvSpace::new(MSS, RCV_BUF_INITIAL, 4 << 20, 0, SYN_WINDOW);
        s.rtt_from_window(Time::ZERO, 0, 65_160);
        s.rtt_from_window(Time(20 * 1_000_000), 30_000, 65_160);
        assert_eq!(s.rtt.get(), None);
        s.rtt_from_window(Time(45 * 1_000_000), 65_160, 65_160);
        assert_eq!(s.rtt.get(), Some(Dur::from_millis(45)));
    }
}
