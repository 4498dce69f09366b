//! Every address seen, with what it sent and the tallies that decide its side.

use crate::netparams::NetAcc;
use crate::sides::{is_private, MacVote, MAC_SLOTS, NO_MAC};
use rustc_hash::FxHashMap;

#[derive(Clone, Debug)]
pub(crate) struct Host {
    pub addr: u128,
    pub private: bool,
    /// A public host that exchanged packets with a private/local one: the
    /// far side of a NAT or campus edge.
    pub private_peer: bool,
    /// IP packets and bytes sent, split by protocol for the link statistics.
    pub packets: u64,
    pub bytes: u64,
    pub tcp_bytes: u64,
    pub udp_bytes: u64,
    /// TCP payload bytes captured (retransmissions too).
    pub tcp_payload: u64,
    /// TCP payload this host sent that its peers acknowledged but the
    /// capture never showed (capture loss), in bytes.
    pub unseen_bytes: u64,
    pub votes: [MacVote; MAC_SLOTS],
    pub tcp_initiated: u64,
    pub tcp_accepted: u64,
    pub udp_initiated: u64,
    pub udp_accepted: u64,
    pub net: NetAcc,
    /// Most bytes sent, and received, in one `PEAK_WINDOW_NS` window: the
    /// path carried at least that much each way, a lower bound on the
    /// host's capacity where packet pairs give no estimate.
    pub peak: PeakRate,
    pub peak_rx: PeakRate,
}

/// Window over which a host's peak sending rate is measured.
pub(crate) const PEAK_WINDOW_NS: i64 = 10_000_000;

/// Packets a window must hold to count toward a peak rate.
pub(crate) const PEAK_MIN_PACKETS: u32 = 5;

#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PeakRate {
    window: Option<i64>,
    bytes: u64,
    first: u64,
    packets: u32,
    max_bytes: u64,
}

impl PeakRate {
    /// A window's bytes less its first packet count: that packet may have
    /// been on the wire before the window began. And only a window of at
    /// least `PEAK_MIN_PACKETS`: two or three packets that arrived
    /// together (a Wi-Fi aggregate, a capture's batched timestamps) say
    /// nothing of the rate: counted whole, they read as far faster than
    /// the line they came through.
    #[inline]
    pub(crate) fn add(&mut self, t: i64, bytes: u64) {
        let w = t.div_euclid(PEAK_WINDOW_NS);
        if self.window != Some(w) {
            self.window = Some(w);
            self.bytes = 0;
            self.packets = 0;
            self.first = bytes;
        }
        self.bytes += bytes;
        self.packets += 1;
        if self.packets >= PEAK_MIN_PACKETS {
            self.max_bytes = self.max_bytes.max(self.bytes - self.first);
        }
    }

    pub(crate) fn bps(&self) -> f64 {
        self.max_bytes as f64 * 8.0 / (PEAK_WINDOW_NS as f64 * 1e-9)
    }
}

/// Hosts are interned to dense ids so that connections refer to them by
/// index and per-packet updates need no lookup.
#[derive(Default)]
pub(crate) struct HostTable {
    map: FxHashMap<u128, u32>,
    pub hosts: Vec<Host>,
}

impl HostTable {
    #[inline]
    pub(crate) fn id(&mut self, addr: u128) -> u32 {
        let n = self.hosts.len() as u32;
        let id = *self.map.entry(addr).or_insert(n);
        if id == n {
            self.hosts.push(Host {
                addr,
                private: is_private(addr),
                private_peer: false,
                packets: 0,
                bytes: 0,
                tcp_bytes: 0,
                udp_bytes: 0,
                tcp_payload: 0,
                unseen_bytes: 0,
                votes: [NO_MAC; MAC_SLOTS],
                tcp_initiated: 0,
                tcp_accepted: 0,
                udp_initiated: 0,
                udp_accepted: 0,
                net: NetAcc::default(),
                peak: PeakRate::default(),
                peak_rx: PeakRate::default(),
            });
        }
        id
    }

    #[inline]
    pub(crate) fn get(&mut self, id: u32) -> &mut Host {
        &mut self.hosts[id as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peak_rates_need_a_few_packets_and_leave_out_the_first() {
        let mut p = PeakRate::default();
        // Three packets together: an aggregate, not a rate.
        for i in 0..3 {
            p.add(1_000_000 + i, 1500);
        }
        assert_eq!(p.bps(), 0.0);
        // Five in the next window: four after the first, in 10 ms.
        for i in 0..5 {
            p.add(PEAK_WINDOW_NS + i * 1_000_000, 1500);
        }
        assert_eq!(p.bps(), 4.0 * 1500.0 * 8.0 / 0.010);
    }
}
