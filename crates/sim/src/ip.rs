//! The hosts' IP layer for datagrams larger than the MTU: the sender cuts
//! them into fragments as Linux's IPv4 and IPv6 output does, the receiver
//! hands a datagram up once every fragment has arrived, and forgets an
//! incomplete one after the kernel's reassembly timeout. TCP never needs
//! it (its segments fit the MTU); UDP sources may send any size, and the
//! emulator's kernels fragment them, so the simulator must too.

use net::MTU;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use traffic::HostId;
use units::{Dur, Time};

/// IPv6's fragment header.
const V6_FRAGMENT_HEADER: u32 = 8;
/// How long a receiver keeps the fragments of an incomplete datagram:
/// Linux's `ipfrag_time` and `ip6frag_time` defaults.
const REASSEMBLY_TIMEOUT_V4: Dur = Dur::from_secs(30);
const REASSEMBLY_TIMEOUT_V6: Dur = Dur::from_secs(60);

/// Where a packet sits in the datagram it was cut from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fragment {
    /// The sender's number for the datagram (Linux's IP ID).
    pub datagram: u32,
    pub index: u16,
    pub count: u16,
    /// Bytes of the datagram's IP payload (UDP header included) before
    /// this fragment's.
    pub offset: u32,
}

impl Fragment {
    pub fn more(&self) -> bool {
        self.index + 1 < self.count
    }
}

/// The IP sizes of the packets a datagram of `udp_len` bytes (UDP header
/// and payload) leaves as, with `ip_header` bytes of IP header: one packet
/// if it fits the MTU, else fragments of the largest multiple of 8 bytes
/// that fits (1480 for IPv4, 1448 for IPv6 after its fragment header), in
/// order, each with the offset of its data.
pub fn fragment_sizes(ip_header: u32, udp_len: u32) -> impl Iterator<Item = (u32, u32)> {
    let whole = ip_header + udp_len <= MTU;
    let extra = if whole || ip_header == 20 { 0 } else { V6_FRAGMENT_HEADER };
    let chunk = if whole { udp_len.max(1) } else { (MTU - ip_header - extra) & !7 };
    let count = udp_len.div_ceil(chunk).max(1);
    (0..count).map(move |i| {
        let offset = i * chunk;
        (ip_header + extra + (udp_len - offset).min(chunk), offset)
    })
}

/// A receiving side's fragments of datagrams not yet complete.
#[derive(Default)]
pub struct Reassembly {
    /// Fragments arrived per (sender, receiver, datagram).
    partial: FxHashMap<(HostId, HostId, u32), u16>,
    /// When each datagram's first fragment arrived, oldest first.
    started: VecDeque<(Time, (HostId, HostId, u32))>,
    /// Datagrams given up after the timeout with fragments missing.
    pub timed_out: u64,
}

impl Reassembly {
    /// One fragment from `src` to `dst` arrived at `now`: true when it
    /// completes its datagram.
    pub fn arrived(&mut self, now: Time, src: HostId, dst: HostId, f: Fragment, ipv6: bool) -> bool {
        self.expire(now, ipv6);
        let key = (src, dst, f.datagram);
        let n = self.partial.entry(key).or_insert_with(|| {
            self.started.push_back((now, key));
            0
        });
        *n += 1;
        if *n < f.count {
            return false;
        }
        self.partial.remove(&key);
        true
    }

    fn expire(&mut self, now: Time, ipv6: bool) {
        let timeout = if ipv6 { REASSEMBLY_TIMEOUT_V6 } else { REASSEMBLY_TIMEOUT_V4 };
        while let Some(&(t, key)) = self.started.front() {
            if t + timeout > now {
                break;
            }
            self.started.pop_front();
            if self.partial.remove(&key).is_some() {
                self.timed_out += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_datagram_that_fits_the_mtu_leaves_whole() {
        assert_eq!(fragment_sizes(20, 1480).collect::<Vec<_>>(), vec![(1500, 0)]);
        assert_eq!(fragment_sizes(40, 8).collect::<Vec<_>>(), vec![(48, 0)]);
    }

    #[test]
    fn ipv4_cuts_1480_bytes_a_fragment_and_ipv6_1448_after_its_fragment_header() {
        // A 1518-byte IPv4 packet: 1498 bytes of UDP.
        assert_eq!(fragment_sizes(20, 1498).collect::<Vec<_>>(), vec![(1500, 0), (38, 1480)]);
        assert_eq!(fragment_sizes(20, 4000).collect::<Vec<_>>(), vec![(1500, 0), (1500, 1480), (1060, 2960)]);
        assert_eq!(fragment_sizes(40, 1478).collect::<Vec<_>>(), vec![(1496, 0), (78, 1448)]);
    }

    fn frag(datagram: u32, index: u16, count: u16) -> Fragment {
        Fragment { datagram, index, count, offset: 0 }
    }

    #[test]
    fn a_datagram_is_complete_when_its_last_missing_fragment_arrives_in_any_order() {
        let mut r = Reassembly::default();
        let t = Time::ZERO + Dur::from_millis(1);
        assert!(!r.arrived(t, 1, 2, frag(7, 2, 3), false));
        assert!(!r.arrived(t, 1, 2, frag(7, 0, 3), false));
        // Another sender's datagram with the same number is its own.
        assert!(!r.arrived(t, 3, 2, frag(7, 0, 2), false));
        assert!(r.arrived(t, 1, 2, frag(7, 1, 3), false));
        assert!(r.arrived(t, 3, 2, frag(7, 1, 2), false));
        assert_eq!(r.timed_out, 0);
    }

    #[test]
    fn an_incomplete_datagram_is_forgotten_after_the_reassembly_timeout() {
        let mut r = Reassembly::default();
        assert!(!r.arrived(Time::ZERO, 1, 2, frag(1, 0, 2), false));
        // Its second fragment after 30 s starts a new datagram, which waits.
        assert!(!r.arrived(Time::ZERO + Dur::from_secs(30), 1, 2, frag(1, 1, 2), false));
        assert_eq!(r.timed_out, 1);
        assert!(r.partial.len() == 1 && r.started.len() == 1);
    }
}
