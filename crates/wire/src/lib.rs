//! The stateless wire layer of undertow: packet headers and trace files.
//!
//! * Parsing: [`decode`] turns one captured frame (Ethernet with any VLAN
//!   tags, raw IP, Linux cooked SLL/SLL2, BSD loopback) into a
//!   [`PacketInfo`]: addresses, IP lengths, and the TCP, UDP or ICMP header.
//!   Lengths come from the IP header, not from what was captured, so
//!   header-only traces give the real sizes. Every read is checked: no input
//!   makes it panic, and it allocates nothing.
//! * Emitting: [`Ipv4Repr`], [`Ipv6Repr`], [`TcpRepr`], [`UdpRepr`] and
//!   [`EthernetRepr`] write headers with correct checksums for the
//!   simulator's pcaps, whose payloads are conceptually zero bytes.
//! * Trace files: [`TraceReader`] streams pcap and pcapng from any `Read`
//!   through one reused buffer, skipping and counting damaged records;
//!   [`PcapWriter`] writes nanosecond pcap.
//!
//! Header modules follow smoltcp's split, one file per format.
//!
//! Choices worth knowing:
//! * Timestamps are `i64` nanoseconds since the Unix epoch (UTC), which
//!   covers 1677..2262; pcapng values outside saturate. Resolutions finer
//!   than 1 ns are truncated. Records are returned in file order, which need
//!   not be time order.
//! * VLANs: [`PacketInfo::vlans`] keeps every tag (up to [`MAX_VLAN_DEPTH`],
//!   deeper stacks are malformed), outermost first; [`PacketInfo::vlan`] is
//!   the outermost.
//! * A damaged file header is a [`TraceError`] naming the file, the offset
//!   and what was expected. A damaged record is skipped and counted in
//!   [`Stats`]: pcapng resynchronises on the next block whose leading and
//!   trailing lengths agree; classic pcap has nothing to resynchronise on, so
//!   an impossible caplen ends the file and the rest is counted as the
//!   truncated tail.
//! * Lengths come from IP headers. When an IPv4 total length or IPv6
//!   payload length is 0 (segmentation offload on the capturing host), the
//!   frame's original length is used and [`IpInfo::len_from_frame`] is set.

mod checksum;
mod decode;
mod ecn;
mod emit;
mod error;
mod ethernet;
mod field;
mod icmp;
mod input;
mod ipv4;
mod ipv6;
mod linktype;
mod loopback;
mod pcap;
mod pcapng;
mod reader;
mod sll;
mod tcp;
mod udp;

pub use checksum::internet_checksum;
pub use decode::{decode, DecodeError, DecodeStats, IpInfo, PacketInfo, Transport};
pub use ecn::{ecn_of, set_ecn, CE, ECT0, ECT1, NOT_ECT};
pub use emit::EmitError;
pub use error::{TraceError, TraceErrorKind};
pub use ethernet::{ethertype, EthernetRepr, Vlans, MAX_VLAN_DEPTH};
pub use icmp::{Echo, IcmpInfo, PROTO_ICMP, PROTO_ICMPV6};
pub use ipv4::Ipv4Repr;
pub use ipv6::Ipv6Repr;
pub use linktype::LinkType;
pub use pcap::PcapWriter;
pub use reader::{Format, Record, Stats, TraceReader, MAX_CAPLEN};
pub use tcp::{TcpFlags, TcpInfo, TcpOptions, TcpRepr, MAX_SACK_BLOCKS, PROTO_TCP};
pub use udp::{UdpInfo, UdpRepr, PROTO_UDP};

/// Hex fixture to bytes; whitespace is ignored.
#[cfg(test)]
pub(crate) fn test_hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    assert_eq!(s.len() % 2, 0, "odd hex fixture: {s}");
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}
