//! Whether a sender's window counts packets or bytes, read from its
//! flights of short segments.
//!
//! Linux counts its congestion window in segments (`snd_cwnd`,
//! `tcp_packets_in_flight`): a segment shorter than the MSS takes a whole
//! packet of it. Stacks that count bytes (the BSDs, Windows) let an
//! application's small writes go out one segment each, as many as fit the
//! window's bytes. A window of packets starts at the initial window and
//! grows by at most one packet per segment acknowledged (slow start adds
//! what an ACK delivers, congestion avoidance less), so a sender counting
//! packets never has more segments unacknowledged than its initial window,
//! plus the segments acknowledged so far, plus the one a tail loss probe
//! may send past it. A sender seen with more, all of them short, counts
//! bytes. The capture sees ACKs before the sender does, so the flight it
//! counts is never more than the sender's own, wherever it was taken.
//!
//! Only flights before any loss of the direction's data are read (recovery
//! counts lost and retransmitted segments apart), of connections whose
//! stream was seen from its SYN (acknowledgements before the capture began
//! would go uncounted), and while short segments make up the flight (its
//! bytes at most half of its segments' worth at the sender's MSS): a flight
//! of full segments past that count is a larger initial window, not bytes.

/// The segments whose acknowledgement is awaited that are kept; a flight
/// that outgrows them ends the reading of its connection.
const KEPT: usize = 32;

/// The least initial window a verdict allows for (RFC 6928, Linux's
/// default).
pub(crate) const DEFAULT_INITIAL_WINDOW: u32 = 10;

/// The segment a tail loss probe may send past the window (Linux's
/// `tcp_send_loss_probe`).
const PROBE_SEGMENTS: u32 = 1;

/// A direction's segments awaiting acknowledgement (their end offsets, the
/// low 32 bits, oldest first) and the segments acknowledged so far.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Outstanding {
    ends: [u32; KEPT],
    head: u8,
    len: u8,
    acked: i64,
    acked_segments: u32,
    stopped: bool,
}

impl Outstanding {
    /// Stops the reading for good (a loss, a retransmission, a stream not
    /// seen from its start, or a flight past `KEPT`).
    pub(crate) fn stop(&mut self) {
        self.stopped = true;
        self.len = 0;
    }

    /// A segment of new data ending at offset `end`. Returns the segments
    /// the flight then held beyond those acknowledged so far, when short
    /// segments make it up (`mss`: the sender's segment size).
    pub(crate) fn segment(&mut self, end: i64, mss: u32) -> Option<u32> {
        if self.stopped {
            return None;
        }
        if self.len as usize == KEPT {
            self.stop();
            return None;
        }
        self.ends[(self.head as usize + self.len as usize) % KEPT] = end as u32;
        self.len += 1;
        let n = self.len as i64;
        let short = 2 * (end - self.acked) <= n * mss as i64;
        short.then(|| (self.len as u32).saturating_sub(self.acked_segments))
    }

    /// An ACK up to offset `a`: the segments it covers are acknowledged.
    pub(crate) fn ack(&mut self, a: i64) {
        if self.stopped || a <= self.acked {
            return;
        }
        self.acked = a;
        while self.len > 0 && (self.ends[self.head as usize].wrapping_sub(a as u32) as i32) <= 0 {
            self.head = ((self.head as usize + 1) % KEPT) as u8;
            self.len -= 1;
            self.acked_segments += 1;
        }
    }
}

/// A host's verdict from the most segments its flights held beyond those
/// acknowledged (`over`) and its measured initial window: false (it
/// counts bytes) where no window of packets could have held them, else
/// unknown. The window is taken as at least Linux's default: a median of
/// first flights can be held below it by an application with little to
/// send, and a smaller one would read a window of packets as bytes.
pub(crate) fn packet_window(over: u32, initial_window: Option<u32>) -> Option<bool> {
    let iw = initial_window.unwrap_or(0).max(DEFAULT_INITIAL_WINDOW);
    (over > iw + PROBE_SEGMENTS).then_some(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1460;

    /// A sender at the capture writing `writes` messages of `len` bytes
    /// each round trip, its window `window(acked segments)` segments;
    /// every segment ACKed a round trip later, one ACK each. Returns the
    /// most its flights held beyond those acknowledged.
    fn run(len: u32, rounds: usize, writes: usize, window: impl Fn(u32) -> usize) -> u32 {
        let mut o = Outstanding::default();
        let (mut end, mut over, mut acked_segs) = (0i64, 0u32, 0u32);
        let mut queued = 0usize;
        let mut send = |o: &mut Outstanding, seg: u32, end: &mut i64| {
            *end += seg as i64;
            if let Some(n) = o.segment(*end, MSS) {
                over = over.max(n);
            }
        };
        for _ in 0..rounds {
            let mut pending = writes;
            while pending > 0 && queued < window(acked_segs) {
                send(&mut o, len, &mut end);
                (pending, queued) = (pending - 1, queued + 1);
            }
            // The flight's ACKs, a round trip later, one a segment.
            o.ack(end);
            acked_segs += queued as u32;
            queued = 0;
            // The writes the window held back go out on them, coalesced.
            if pending > 0 {
                send(&mut o, (pending as u32 * len).min(MSS), &mut end);
                queued = 1;
            }
        }
        over
    }

    #[test]
    fn small_writes_under_a_window_of_bytes_read_as_bytes() {
        // 20 writes of 23 bytes a round: a window of 14600 bytes holds them all.
        let over = run(23, 4, 20, |_| usize::MAX);
        assert_eq!(over, 20);
        assert_eq!(packet_window(over, None), Some(false));
        assert_eq!(packet_window(over, Some(4)), Some(false));
        // Not past a larger initial window the host was seen to send.
        assert_eq!(packet_window(over, Some(20)), None);
        assert_eq!(packet_window(11, Some(4)), None);
    }

    #[test]
    fn small_writes_under_a_window_of_packets_give_no_verdict() {
        // Linux: 10 packets, one more per segment acknowledged.
        let over = run(23, 4, 20, |acked| 10 + acked as usize);
        // The window held the flight: up to its 10 packets beyond those acknowledged.
        assert!((9..=10).contains(&over), "{over}");
        assert_eq!(packet_window(over, None), None);
    }

    #[test]
    fn full_segments_past_the_window_are_a_larger_initial_window() {
        // 30 full segments in a first flight (an initial window of 30).
        let mut o = Outstanding::default();
        let firsts: Vec<_> = (1..=30).filter_map(|i| o.segment(i * MSS as i64, MSS)).collect();
        assert!(firsts.is_empty(), "{firsts:?}");
    }

    #[test]
    fn a_flight_past_those_kept_or_a_loss_stops_the_reading() {
        let mut o = Outstanding::default();
        for i in 1..=KEPT as i64 {
            assert!(o.segment(i * 10, MSS).is_some());
        }
        assert_eq!(o.segment(KEPT as i64 * 10 + 10, MSS), None);
        o.ack(1000);
        assert_eq!(o.segment(1010, MSS), None);
        let mut o = Outstanding::default();
        o.stop();
        assert_eq!(o.segment(10, MSS), None);
    }

    #[test]
    fn acknowledgements_count_the_segments_they_cover() {
        let mut o = Outstanding::default();
        for i in 1..=5 {
            o.segment(i * 20, MSS);
        }
        o.ack(60);
        assert_eq!((o.len, o.acked_segments), (2, 3));
        // Not past a segment's end: it stays.
        o.ack(70);
        assert_eq!((o.len, o.acked_segments), (2, 3));
        assert_eq!(o.segment(120, MSS), Some(0));
    }
}
