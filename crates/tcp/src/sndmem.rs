//! The send buffer's memory as Linux charges it (`sk_wmem_queued` against
//! `sk_sndbuf`), for autotuned send buffers.
//!
//! Linux does not count payload bytes against the send buffer but the socket
//! buffers (skbs) holding them: each skb costs its payload plus a fixed head
//! (`truesize`). Data an application writes is packed into skbs of up to
//! `size_goal` bytes (half the peer's largest window, at most 64 KiB); once
//! sent, an skb is cut into pieces of the TSO autosize (at least two
//! segments), each with a head of its own. A write checks the buffer only
//! when it needs a new skb, and then fills it whole (`tcp_sendmsg_locked`),
//! so it may go past the buffer by up to one skb.
//!
//! The sizes are those of a kernel built without wireless or tunnel drivers
//! (`LL_MAX_HEADER` 32, so `MAX_TCP_HEADER` 192; x86-64, 17 page fragments):
//! a 1448-byte segment budgets 2,304 bytes and an skb head costs 832.
//! Distribution kernels with those drivers have `MAX_TCP_HEADER` 320: 4,352
//! and 896.

/// `MAX_TCP_HEADER`: `L1_CACHE_ALIGN(128 + MAX_HEADER)`.
const MAX_TCP_HEADER: u64 = 192;
/// `SKB_DATA_ALIGN(sizeof(struct skb_shared_info))` with 17 fragments.
const SHARED_INFO: u64 = 320;
/// `SKB_DATA_ALIGN(sizeof(struct sk_buff))`.
const SK_BUFF: u64 = 256;
/// `sk_gso_max_size` of a TUN or veth device (`GSO_LEGACY_MAX_SIZE`).
const GSO_MAX_SIZE: u64 = 65_536;
/// `sysctl_tcp_min_tso_segs`.
const MIN_TSO_SEGS: u64 = 2;

/// `truesize` of an skb before its payload: the small head cache's object
/// (`SKB_HEAD_ALIGN(MAX_TCP_HEADER)`, moved off a power of two by a cache
/// line) less the shared info it holds, plus the `sk_buff` and shared info.
pub(crate) const SKB_HEAD: u64 = {
    let head = MAX_TCP_HEADER + SHARED_INFO;
    let cache = if head.is_power_of_two() { head + 64 } else { head };
    cache - SHARED_INFO + SK_BUFF + SHARED_INFO
};

/// `tcp_sndbuf_expand`'s budget per segment: the worst case of one skb per
/// segment with a power-of-two head. `mss_clamp` is the peer's MSS option.
pub(crate) fn per_segment(mss_clamp: u64, mss: u64) -> u64 {
    (mss_clamp.max(mss) + MAX_TCP_HEADER + SHARED_INFO).next_power_of_two() + SK_BUFF
}

/// `tcp_xmit_size_goal`: the payload a written skb holds, from the largest
/// window the peer offered (`tcp_bound_to_half_wnd`), whole segments, at
/// least one.
pub(crate) fn size_goal(max_window: u64, mss: u64) -> u64 {
    let cutoff = if max_window > 536 { max_window / 2 } else { max_window };
    let bytes = if cutoff > 0 { GSO_MAX_SIZE.min(cutoff) } else { GSO_MAX_SIZE };
    (bytes / mss).max(1) * mss
}

/// `tcp_tso_autosize`: segments per sent skb from the pacing rate (bytes per
/// second, Linux's `sk_pacing_rate`; about a millisecond's worth, as
/// `sk_pacing_shift` is 10) and the least RTT (short paths get more).
pub(crate) fn tso_segs(pacing_rate: u64, min_rtt_us: u64, mss: u64) -> u64 {
    let mut bytes = pacing_rate >> 10;
    let r = min_rtt_us >> 9; // sysctl_tcp_tso_rtt_log
    if r < 32 {
        bytes += GSO_MAX_SIZE >> r;
    }
    (bytes.min(GSO_MAX_SIZE) / mss).max(MIN_TSO_SEGS)
}

/// `tcp_update_pacing_rate`: cwnd (or what is out, if more) segments per
/// smoothed RTT, doubled while cwnd is under half of ssthresh
/// (`tcp_pacing_ss_ratio` 200%) and 1.2 times after (`tcp_pacing_ca_ratio`).
pub(crate) fn pacing_rate(mss: u64, cwnd_segs: u64, ssthresh_segs: u64, srtt_us: u64) -> u64 {
    let ratio = if cwnd_segs < ssthresh_segs / 2 { 200 } else { 120 };
    (mss * cwnd_segs * ratio * 10_000).checked_div(srtt_us).unwrap_or(0)
}

/// What the queued data costs: payload plus one head per skb, the sent
/// bytes in skbs of `sent_skb` bytes, the unsent in skbs of `size_goal`.
pub(crate) fn charge(sent: u64, unsent: u64, sent_skb: u64, size_goal: u64) -> u64 {
    sent + unsent + SKB_HEAD * (sent.div_ceil(sent_skb.max(1)) + unsent.div_ceil(size_goal.max(1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_size_segment_budgets_a_2_kib_head_and_an_skb() {
        assert_eq!(per_segment(1460, 1448), 2304);
        assert_eq!(SKB_HEAD, 832);
    }

    #[test]
    fn written_skbs_hold_half_the_peers_window_up_to_64_kib() {
        assert_eq!(size_goal(64_256, 1448), 22 * 1448);
        assert_eq!(size_goal(1 << 20, 1448), 45 * 1448);
        assert_eq!(size_goal(0, 1448), 45 * 1448);
        assert_eq!(size_goal(1000, 1448), 1448);
    }

    #[test]
    fn sent_skbs_hold_a_millisecond_of_the_pacing_rate_and_at_least_two_segments() {
        // 5 Mbit/s is 625 kB/s: 610 bytes a millisecond, under one segment.
        assert_eq!(tso_segs(625_000, 100_000, 1448), 2);
        // 100 Mbit/s: 12.2 kB a millisecond, 8 segments.
        assert_eq!(tso_segs(12_500_000, 100_000, 1448), 8);
        // Under half a millisecond of RTT the whole 64 KiB.
        assert_eq!(tso_segs(0, 100, 1448), 45);
    }

    #[test]
    fn the_pacing_rate_is_twice_the_window_per_rtt_early_in_slow_start() {
        assert_eq!(pacing_rate(1448, 10, u64::MAX / 1448, 100_000), 2 * 144_800);
        assert_eq!(pacing_rate(1448, 100, 100, 100_000), 1_737_600);
        assert_eq!(pacing_rate(1448, 10, 100, 0), 0);
    }

    #[test]
    fn charge_counts_a_head_per_skb() {
        // Linux's own figures for one download (ss -m): 20 segments out in
        // pairs and two segments unsent cost 41,008 bytes.
        assert_eq!(charge(20 * 1448, 2896, 2 * 1448, 22 * 1448), 41_008);
        assert_eq!(charge(0, 0, 2896, 31_856), 0);
    }
}
