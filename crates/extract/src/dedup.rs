//! Frames a capture recorded twice. A mirror port that copies both the
//! ingress and the egress of a switch, or a capture on a bridge and one of
//! its members, records every packet twice within microseconds; left in,
//! the copies double the link's rate and make every segment look
//! retransmitted (handshake loss, no RTT by Karn's rule).
//!
//! A frame is such a copy when its addresses, IP header fields, the first
//! 20 bytes of its transport header (whose checksum covers the rest:
//! options and payload) and its wire length equal those of a frame
//! captured at most [`WINDOW_NS`] before it among the last [`RECENT`], and
//! the two cannot be two packets:
//!
//! * an IPv4 packet with a nonzero identification: the sender numbers its
//!   datagrams and sends a retransmission as a new one;
//! * else (IPv6, or IPv4 identification 0) a TCP segment that takes
//!   sequence space (data, SYN, FIN) with nothing from its receiver
//!   between: sending it again needs a loss signal from the receiver or a
//!   retransmission timer (Linux's tail-loss probe waits at least 10 ms,
//!   its RTO 200 ms).
//!
//! Other identical frames are kept: a stack answers each arriving segment
//! of a closed connection with the same RST, and each out-of-order one
//! with the same duplicate ACK, microseconds apart.

use wire::{PacketInfo, Transport, PROTO_TCP};

/// How far apart a capture's two copies of a frame may be: a switch or a
/// bridge forwards in microseconds; a sender's own second copy waits for
/// a loss signal or a timer of 10 ms or more.
pub(crate) const WINDOW_NS: i64 = 1_000_000;

/// Frames remembered: a copy further back than this many frames is kept.
pub(crate) const RECENT: usize = 32;

#[derive(Clone, Copy, Debug)]
struct Seen {
    /// When it was captured; `i64::MIN` for a free slot.
    t: i64,
    /// Hash of the packet's headers and wire length, odd; 0 for a packet
    /// that cannot be told from a second one like it.
    key: u64,
    /// Its (source, destination) and (destination, source) addresses.
    hosts: u64,
    back: u64,
}

const FREE: Seen = Seen { t: i64::MIN, key: 0, hosts: 0, back: 0 };

/// The last [`RECENT`] IP frames of one capture.
#[derive(Clone, Debug)]
pub(crate) struct Recent {
    seen: [Seen; RECENT],
    next: usize,
}

impl Default for Recent {
    fn default() -> Self {
        Recent { seen: [FREE; RECENT], next: 0 }
    }
}

const MIX: u64 = 0x9e37_79b9_7f4a_7c15;

/// `N` (at most 8) bytes of `b` from `at`, little-endian; those past its
/// end (a short capture) read as 0.
#[inline]
fn word<const N: usize>(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    match b.get(at..at + N) {
        Some(x) => w[..N].copy_from_slice(x),
        None => {
            let x = b.get(at..).unwrap_or_default();
            w[..x.len()].copy_from_slice(x);
        }
    }
    u64::from_le_bytes(w)
}

#[inline]
fn mix(h: u64, w: u64) -> u64 {
    (h.rotate_left(5) ^ w).wrapping_mul(MIX)
}

impl Recent {
    /// Whether the frame `data` (decoded as `p`, captured at `t`, `orig_len`
    /// bytes on the wire) is a capture's second copy of a recent frame; it
    /// is remembered either way.
    pub(crate) fn is_copy(&mut self, t: i64, data: &[u8], orig_len: u32, p: &PacketInfo) -> bool {
        let Some(ip) = data.get(p.ip_offset..) else { return false };
        // The addresses, whole for IPv4, folded for IPv6.
        let (src, dst) = match p.ip.version {
            4 if ip.len() >= 20 => (word::<4>(ip, 12), word::<4>(ip, 16)),
            6 if ip.len() >= 40 => (word::<8>(ip, 8) ^ word::<8>(ip, 16).rotate_left(32), word::<8>(ip, 24) ^ word::<8>(ip, 32).rotate_left(32)),
            _ => return false,
        };
        let (hosts, back) = (src.rotate_left(32) ^ dst, dst.rotate_left(32) ^ src);
        let numbered = p.ip.version == 4 && ip[4..6] != [0, 0];
        let takes_sequence = matches!(&p.transport, Transport::Tcp(tcp) if tcp.payload_len > 0 || tcp.flags.syn() || tcp.flags.fin());
        let key = if numbered || (takes_sequence && p.ip.proto == PROTO_TCP) {
            // The IP header's fields (IPv4's checksum covers its options)
            // and the transport header's first 20 bytes, whose checksum
            // covers the rest of the packet (options and payload).
            let (fixed, at) = if p.ip.version == 4 { (word::<4>(ip, 8), p.ip.header_len as usize) } else { (0, p.ip.header_len as usize) };
            let mut h = mix(mix(orig_len as u64, word::<8>(ip, 0)), fixed);
            h = mix(mix(mix(h, word::<8>(ip, at)), word::<8>(ip, at + 8)), word::<4>(ip, at + 16));
            (h ^ h >> 29) | 1
        } else {
            0
        };
        let copy = key != 0 && self.earlier(t, key, hosts, numbered);
        self.seen[self.next] = Seen { t, key, hosts, back };
        self.next = (self.next + 1) % RECENT;
        copy
    }

    /// An equal frame within the window, newest first; unless `numbered`,
    /// with nothing from the receiver after it.
    fn earlier(&self, t: i64, key: u64, hosts: u64, numbered: bool) -> bool {
        for i in 1..=RECENT {
            let s = &self.seen[(self.next + RECENT - i) % RECENT];
            if t.saturating_sub(s.t) > WINDOW_NS {
                return false;
            }
            if s.key == key && s.hosts == hosts {
                return true;
            }
            if !numbered && s.back == hosts {
                return false;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::{decode, EthernetRepr, Ipv4Repr, LinkType, TcpFlags, TcpRepr};

    const A: [u8; 4] = [10, 0, 0, 1];
    const B: [u8; 4] = [10, 0, 0, 2];

    /// An Ethernet frame of a TCP segment from `src` to `dst` with `len`
    /// bytes of payload (header-only, as the capture keeps it).
    fn frame(src: [u8; 4], dst: [u8; 4], ident: u16, flags: TcpFlags, seq: u32, len: u32) -> (Vec<u8>, u32) {
        let repr = TcpRepr { src_port: 40000, dst_port: 443, seq, ack: 1, flags, window: 500, ..Default::default() };
        let hl = repr.header_len();
        let mut buf = vec![0u8; 14 + 20 + hl];
        EthernetRepr { src: [2, 0, 0, 0, 0, src[3]], dst: [2, 0, 0, 0, 0, dst[3]], ethertype: 0x0800 }.emit(&mut buf).unwrap();
        Ipv4Repr { src, dst, protocol: 6, ttl: 64, ident, payload_len: (hl as u32 + len) as u16 }.emit(&mut buf[14..]).unwrap();
        repr.emit(&mut buf[34..], src, dst, len).unwrap();
        let orig = buf.len() as u32 + len;
        (buf, orig)
    }

    fn copy(r: &mut Recent, t_us: i64, f: &(Vec<u8>, u32)) -> bool {
        let p = decode(LinkType::ETHERNET, &f.0, f.1).unwrap();
        r.is_copy(t_us * 1000, &f.0, f.1, &p)
    }

    #[test]
    fn a_numbered_datagram_seen_again_within_the_window_is_a_copy() {
        let mut r = Recent::default();
        let ack = frame(A, B, 7, TcpFlags::ACK, 100, 0);
        assert!(!copy(&mut r, 0, &ack));
        assert!(copy(&mut r, 1, &ack), "1 µs later: the capture's second copy");
        // Sent again after a timer, the same datagram is a new observation.
        assert!(!copy(&mut r, 1_001_000, &ack));
        // A frame in between does not hide the copy.
        let data = frame(B, A, 9, TcpFlags::ACK, 1, 1448);
        assert!(!copy(&mut r, 1_001_010, &data));
        assert!(copy(&mut r, 1_001_020, &ack));
        // Another identification is another datagram.
        assert!(!copy(&mut r, 1_001_030, &frame(A, B, 8, TcpFlags::ACK, 100, 0)));
    }

    #[test]
    fn unnumbered_answers_are_kept_and_unnumbered_data_is_a_copy_unless_the_receiver_spoke() {
        let mut r = Recent::default();
        // Three RSTs answering three segments of a closed connection.
        let rst = frame(A, B, 0, TcpFlags::RST, 100, 0);
        assert!(!copy(&mut r, 0, &rst));
        assert!(!copy(&mut r, 3, &rst) && !copy(&mut r, 5, &rst));
        // A data segment without identification, captured twice.
        let data = frame(B, A, 0, TcpFlags::ACK, 1, 1448);
        assert!(!copy(&mut r, 10, &data));
        assert!(copy(&mut r, 11, &data));
        // Its receiver answered (a duplicate ACK): the next copy is a
        // retransmission, however soon.
        assert!(!copy(&mut r, 20, &frame(A, B, 0, TcpFlags::ACK, 100, 0)));
        assert!(!copy(&mut r, 30, &data));
        // SYNs and FINs take sequence space too.
        let syn = frame(A, B, 0, TcpFlags::SYN, 5000, 0);
        assert!(!copy(&mut r, 40, &syn) && copy(&mut r, 41, &syn));
    }

    #[test]
    fn only_the_last_frames_are_compared() {
        let mut r = Recent::default();
        let ack = frame(A, B, 7, TcpFlags::ACK, 100, 0);
        assert!(!copy(&mut r, 0, &ack));
        for i in 0..RECENT as u32 {
            assert!(!copy(&mut r, 1, &frame(B, A, 100 + i as u16, TcpFlags::ACK, 1 + i, 0)));
        }
        assert!(!copy(&mut r, 2, &ack), "too many frames between");
    }
}
