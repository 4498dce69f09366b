//! Linux's TSO deferral (`tcp_tso_should_defer`, "a kind of TSO Nagle test"):
//! new data leaves in skbs of up to the TSO autosize (at least two segments,
//! see `sndmem::tso_segs`), and when the windows leave room for less than
//! that, Linux holds the data back for the next ACK, which it expects soon,
//! rather than split off a short skb. So a Linux sender whose every ACK
//! frees one segment sends two every other ACK, and in slow start bursts of
//! the autosize: a queue shared with other traffic sees its packets in
//! pairs or more, not one by one. Linux does this whenever the device takes
//! GSO, which every device does in software, TUN and veth included.

use units::Dur;

/// Linux defers only if it sent something within the last millisecond.
const RECENT_SEND: Dur = Dur::from_millis(1);
/// Linux waits for an ACK expected at most this far ahead.
const DUE_WITHIN: Dur = Dur::from_millis(1);
/// `sysctl_tcp_tso_win_divisor`: a third of the window is worth sending.
const WIN_DIVISOR: u64 = 3;

/// What the deferral test looks at, in bytes.
pub(crate) struct Pending {
    /// Room the congestion window leaves (cwnd less what is in flight).
    pub cwnd_room: u64,
    /// Room the peer's window leaves beyond snd_nxt.
    pub rwnd_room: u64,
    /// The TSO autosize: what one sent skb may hold.
    pub tso_bytes: u64,
    /// The window the divisor applies to: min(peer's window, cwnd).
    pub window: u64,
    /// The unsent skb at the head of the queue (its payload).
    pub head_skb: u64,
    /// Whether that skb carries the FIN (it will get no more data).
    pub fin: bool,
    /// Since the last segment went out.
    pub since_send: Dur,
    /// Since the oldest unacknowledged segment went out; none if all is acked.
    /// Its ACK is expected an srtt after it left.
    pub head_age: Option<Dur>,
    /// Smoothed RTT (zero before a sample, as Linux's `srtt_us`).
    pub srtt: Dur,
}

/// `tcp_tso_should_defer` outside recovery, for an skb of more than one
/// segment: whether to hold it back until the next ACK.
pub(crate) fn should_defer(p: &Pending) -> bool {
    if p.since_send > RECENT_SEND {
        return false; // avoid a burst after a pause
    }
    let limit = p.cwnd_room.min(p.rwnd_room);
    if limit >= p.tso_bytes || limit >= p.window / WIN_DIVISOR {
        return false; // a full skb, or a third of the window, can go
    }
    // Wait only for an ACK due within a millisecond (or half an RTT, if
    // less): the oldest segment out must have left about an RTT ago
    // (Linux 6.18; before it, half an RTT ago was enough, which on long
    // paths deferred nearly every time).
    let due_within = Dur((p.srtt.0 / 2).min(DUE_WITHIN.0));
    match p.head_age {
        Some(age) if p.srtt.0.saturating_sub(age.0) <= due_within.0 => {}
        _ => return false,
    }
    let limited_by = if p.cwnd_room < p.rwnd_room { p.cwnd_room } else { p.rwnd_room };
    if limited_by <= p.head_skb {
        return true; // a window cuts the skb short
    }
    !p.fin
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1448;

    fn steady() -> Pending {
        // Congestion avoidance at cwnd 40 on a 93 ms path: one ACK has freed
        // one segment, the oldest segment out went a round trip ago.
        Pending {
            cwnd_room: MSS,
            rwnd_room: 200 * MSS,
            tso_bytes: 2 * MSS,
            window: 40 * MSS,
            head_skb: 20 * MSS,
            fin: false,
            since_send: Dur::from_micros(800),
            head_age: Some(Dur::from_millis(93)),
            srtt: Dur::from_millis(93),
        }
    }

    #[test]
    fn one_segment_of_room_waits_for_the_next_ack_to_send_two() {
        assert!(should_defer(&steady()));
        assert!(!should_defer(&Pending { cwnd_room: 2 * MSS, ..steady() }));
    }

    #[test]
    fn nothing_waits_after_a_pause_of_more_than_a_millisecond() {
        assert!(!should_defer(&Pending { since_send: Dur::from_micros(1_001), ..steady() }));
    }

    #[test]
    fn a_third_of_the_window_goes_whatever_the_autosize() {
        let p = Pending { tso_bytes: 20 * MSS, cwnd_room: 4 * MSS, window: 12 * MSS, ..steady() };
        assert!(!should_defer(&p));
        assert!(should_defer(&Pending { window: 13 * MSS, ..p }));
    }

    #[test]
    fn only_an_ack_due_within_a_millisecond_is_waited_for() {
        // The oldest segment left 92.2 ms ago on a 93 ms path: its ACK is
        // due in 0.8 ms.
        assert!(should_defer(&Pending { head_age: Some(Dur::from_micros(92_200)), ..steady() }));
        // Sent 1.2 ms after the one just acknowledged: not due for 1.2 ms.
        assert!(!should_defer(&Pending { head_age: Some(Dur::from_micros(91_800)), ..steady() }));
        assert!(!should_defer(&Pending { head_age: None, ..steady() }));
    }

    #[test]
    fn on_a_short_path_half_an_rtt_is_the_limit() {
        let short = Pending { srtt: Dur::from_micros(1_200), ..steady() };
        assert!(should_defer(&Pending { head_age: Some(Dur::from_micros(600)), ..short }));
        assert!(!should_defer(&Pending { head_age: Some(Dur::from_micros(590)), ..short }));
    }

    #[test]
    fn the_last_skb_waits_unless_it_carries_the_fin() {
        let tail = Pending { head_skb: MSS + 100, cwnd_room: MSS + 200, tso_bytes: 4 * MSS, ..steady() };
        assert!(should_defer(&tail), "an application may still add to it");
        assert!(!should_defer(&Pending { fin: true, ..tail }));
    }
}
