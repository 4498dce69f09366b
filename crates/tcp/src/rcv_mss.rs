//! The receiver's estimate of the sender's segment size (Linux's
//! `icsk_ack.rcv_mss`, measured by `tcp_measure_rcv_mss`) and what each
//! in-order segment says against it.
//!
//! A segment of exactly that size carrying PSH, or a shorter one, likely
//! ends an application write, after which the sender may be waiting for an
//! ACK: Linux marks it (`ICSK_ACK_PUSHED`) and ACKs as soon as the
//! application has read everything (`tcp_cleanup_rbuf`), unless the
//! connection is interactive (ping-pong: it sent data within the
//! delayed-ACK timeout of data arriving), where only a second such mark
//! (`ICSK_ACK_PUSHED2`) does. The state is Linux's `icsk_ack` fields for
//! it, in six bytes: every connection carries it. Linux 6.6 and the stable kernels back to
//! 5.15 mark a segment of exactly the estimate ("tcp: fix delayed ACKs for
//! MSS boundary condition"), so a sender writing the same short size again
//! and again has each segment ACKed, not every second one.

/// Linux's first guess at the sender's segment size (`TCP_MSS_DEFAULT`).
pub(crate) const RCV_MSS_DEFAULT: u32 = 536;
/// The smallest segment size Linux measures (`TCP_MIN_MSS`).
const MIN_MSS: u32 = 88;
/// A TCP header without options.
const TCP_HEADER: u32 = 20;

/// `flags`: the `ICSK_ACK_PUSHED` marks since the last ACK sent (0, 1 or 2).
const PUSHED: u8 = 0b11;
/// `flags`: segments carry timestamps (12 more header bytes).
const TIMESTAMPS: u8 = 1 << 2;
/// `flags`: the connection is interactive (`icsk_ack.pingpong`).
const PINGPONG: u8 = 1 << 3;

#[derive(Clone, Copy, Debug)]
pub(crate) struct RcvMss {
    /// The estimate (an MSS fits 16 bits).
    rcv_mss: u16,
    /// The last short segment's size, if it was measured (`last_seg_size`).
    last_short: u16,
    flags: u8,
}

impl RcvMss {
    /// Linux `tcp_initialize_rcv_mss`: our MSS, at most 536 bytes.
    pub fn new(advmss: u32, timestamps: bool) -> RcvMss {
        RcvMss { rcv_mss: advmss.clamp(MIN_MSS, RCV_MSS_DEFAULT) as u16, last_short: 0, flags: if timestamps { TIMESTAMPS } else { 0 } }
    }

    #[cfg(test)]
    pub fn get(&self) -> u32 {
        self.rcv_mss as u32
    }

    /// An in-order segment of `len` payload bytes; true if it is at least the
    /// estimate and of another size, when Linux also measures the receive
    /// buffer's ratio of window to memory again.
    pub fn measure(&mut self, len: u32, psh: bool) -> bool {
        let last_short = std::mem::take(&mut self.last_short) as u32;
        if len >= self.rcv_mss as u32 {
            // Linux bounds it by our own MSS, which a segment never exceeds here.
            let resized = len != self.rcv_mss as u32;
            self.rcv_mss = len.min(u16::MAX as u32) as u16;
            if psh {
                self.push();
            }
            return resized;
        }
        // A short segment is measured only if it is not an obvious remnant
        // (PSH marks the end of a write): the same size twice is the size.
        let header = TCP_HEADER + if self.flags & TIMESTAMPS != 0 { 12 } else { 0 };
        let seg = len + header;
        if seg >= RCV_MSS_DEFAULT + TCP_HEADER || (seg >= MIN_MSS + TCP_HEADER && !psh) {
            self.last_short = len as u16;
            if len == last_short {
                self.rcv_mss = len as u16;
                return false;
            }
        }
        self.push();
        false
    }

    fn push(&mut self) {
        let n = ((self.flags & PUSHED) + 1).min(2);
        self.flags = self.flags & !PUSHED | n;
    }

    /// Whether the application's read of everything received calls for an
    /// ACK at once (Linux `tcp_cleanup_rbuf`).
    pub fn ack_on_read(&self) -> bool {
        let pushed = self.flags & PUSHED;
        pushed == 2 || (pushed == 1 && self.flags & PINGPONG == 0)
    }

    /// An ACK went out (it clears `icsk_ack.pending`).
    pub fn on_ack_sent(&mut self) {
        self.flags &= !PUSHED;
    }

    /// Whether the connection is interactive: entered when it sends data
    /// within the delayed-ACK timeout of data arriving (Linux
    /// `tcp_event_data_sent`, `tcp_pingpong_thresh` 1), left when the
    /// delayed-ACK timer fires (`tcp_delack_timer_handler`).
    pub fn set_pingpong(&mut self, on: bool) {
        self.flags = if on { self.flags | PINGPONG } else { self.flags & !PINGPONG };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_takes_six_bytes() {
        assert_eq!(std::mem::size_of::<RcvMss>(), 6);
    }

    #[test]
    fn the_estimate_starts_at_536_and_follows_larger_segments_up_to_our_mss() {
        let mut m = RcvMss::new(1448, true);
        assert_eq!(m.get(), 536);
        assert!(!m.measure(300, false), "an unmarked short segment is measured, but once is not a size");
        assert_eq!(m.get(), 536);
        assert!(m.ack_on_read(), "and it is marked");
        m.on_ack_sent();
        assert!(m.measure(1000, false));
        assert_eq!(m.get(), 1000);
        assert!(m.measure(1448, false));
        assert!(!m.measure(1448, false), "the same size: nothing to measure again");
        assert_eq!(m.get(), 1448);
        assert!(!m.ack_on_read(), "full segments without PSH wait for the delayed-ACK rule");
    }

    #[test]
    fn a_short_size_seen_twice_in_a_row_becomes_the_estimate() {
        // A sender writing 948 bytes at a time after full segments.
        let mut m = RcvMss::new(1448, true);
        m.measure(1448, false);
        m.measure(948, true);
        assert_eq!(m.get(), 1448, "once is a remnant");
        assert!(m.ack_on_read());
        m.on_ack_sent();
        m.measure(948, false);
        m.measure(948, false);
        assert_eq!(m.get(), 948, "twice without PSH is the size");
        // From then on a 948-byte segment with PSH is exactly the estimate:
        // marked, so an application that reads it has it ACKed at once.
        m.on_ack_sent();
        m.measure(948, true);
        assert!(m.ack_on_read());
        m.set_pingpong(true);
        assert!(!m.ack_on_read(), "an interactive connection waits for a second mark");
        m.measure(948, true);
        assert!(m.ack_on_read());
        m.on_ack_sent();
        m.set_pingpong(false);
        assert!(!m.ack_on_read());
    }

    #[test]
    fn a_tiny_segment_is_never_measured_but_always_marked() {
        let mut m = RcvMss::new(1460, false);
        for _ in 0..3 {
            m.measure(50, false);
        }
        assert_eq!(m.get(), 536);
        m.set_pingpong(true);
        assert!(m.ack_on_read(), "two marks: even an interactive connection ACKs");
    }
}
