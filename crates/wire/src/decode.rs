//! One call from link-layer bytes to a summary of the packet's headers.

use crate::ethernet::Vlans;
use crate::icmp::IcmpInfo;
use crate::linktype::LinkType;
use crate::tcp::TcpInfo;
use crate::udp::UdpInfo;
use crate::{ethernet, icmp, ipv4, ipv6, loopback, sll, tcp, udp};
use std::fmt;
use std::net::IpAddr;

/// What the headers of one packet say. Owned and `Copy`: decoding borrows
/// nothing and allocates nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketInfo {
    /// None for link types without MAC addresses (raw IP, loopback).
    pub src_mac: Option<[u8; 6]>,
    /// None also for Linux cooked captures, which record only the sender.
    pub dst_mac: Option<[u8; 6]>,
    /// Every 802.1Q/802.1ad tag, outermost first; see [`PacketInfo::vlan`].
    pub vlans: Vlans,
    pub ip: IpInfo,
    pub transport: Transport,
    /// Offset in the record's data of the IP header.
    pub ip_offset: usize,
    /// Offset in the record's data just past the decoded transport header
    /// (TCP, UDP: the payload; ICMP: after its 8-byte header). May lie past
    /// the captured bytes when the capture was cut.
    pub payload_offset: usize,
    /// The capture holds less than the IP packet the headers describe (a
    /// snaplen cut, as in header-only traces). Lengths above are still right.
    pub truncated: bool,
}

impl PacketInfo {
    /// The outermost VLAN id (the S-tag of a QinQ frame).
    pub fn vlan(&self) -> Option<u16> {
        self.vlans.outer()
    }
    pub fn tcp(&self) -> Option<&TcpInfo> {
        match &self.transport {
            Transport::Tcp(t) => Some(t),
            _ => None,
        }
    }
    pub fn udp(&self) -> Option<&UdpInfo> {
        match &self.transport {
            Transport::Udp(u) => Some(u),
            _ => None,
        }
    }
    /// Transport payload bytes according to the headers (not the capture).
    pub fn payload_len(&self) -> Option<u32> {
        match &self.transport {
            Transport::Tcp(t) => Some(t.payload_len),
            Transport::Udp(u) => Some(u.payload_len),
            _ => None,
        }
    }
}

/// The IP header of a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpInfo {
    /// 4 or 6.
    pub version: u8,
    pub src: IpAddr,
    pub dst: IpAddr,
    /// The IP packet's length from its header (IPv6: 40 + payload length),
    /// or from the frame when `len_from_frame`.
    pub total_len: u32,
    /// IPv4: IHL in bytes. IPv6: 40 plus the extension headers walked.
    pub header_len: u16,
    /// TTL, or the IPv6 hop limit.
    pub ttl: u8,
    /// The ECN field (RFC 3168 §5: 0 not ECN-capable, 1 and 2 ECT, 3 CE).
    pub ecn: u8,
    /// The transport protocol (IPv6: the last next-header reached).
    pub proto: u8,
    /// A fragment other than the first: it carries no transport header.
    pub fragment: bool,
    /// The length field was 0 (segmentation offload on the capturing host,
    /// or an IPv6 jumbogram), so `total_len` was taken from the frame's
    /// original length minus the link header.
    pub len_from_frame: bool,
}

/// The transport header, or why there is none to read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Tcp(TcpInfo),
    Udp(UdpInfo),
    /// ICMP (protocol 1) or ICMPv6 (58).
    Icmp(IcmpInfo),
    /// A protocol this crate does not parse (including IPv6's 59, no next header).
    Other(u8),
    /// A non-first fragment of the given protocol.
    Fragment(u8),
    /// The capture ends before the header of the given protocol does.
    Truncated(u8),
    /// The lengths in the IP or transport header contradict each other.
    Malformed(u8),
}

/// Why a record has no [`PacketInfo`]. Callers count these rather than stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    UnsupportedLinkType(LinkType),
    /// Not IPv4 or IPv6: ARP, LLDP, STP... The value is the EtherType (or
    /// 802.3 length, cooked-capture protocol, loopback address family).
    NotIp(u16),
    /// The capture ends inside the named link or IP header.
    Truncated(&'static str),
    /// The named header cannot be right (bad version, too many VLAN tags...).
    Malformed(&'static str),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::UnsupportedLinkType(l) => write!(f, "unsupported {l}"),
            DecodeError::NotIp(t) => write!(f, "not an IP packet (type 0x{t:04x})"),
            DecodeError::Truncated(h) => write!(f, "capture ends inside the {h} header"),
            DecodeError::Malformed(why) => write!(f, "malformed packet: {why}"),
        }
    }
}
impl std::error::Error for DecodeError {}

/// Which IP version the link layer announced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Net {
    V4,
    V6,
    /// Raw IP: the version nibble decides.
    #[default]
    Any,
}

/// The link layer's part of a [`PacketInfo`], and where the IP header starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct L2 {
    pub src_mac: Option<[u8; 6]>,
    pub dst_mac: Option<[u8; 6]>,
    pub vlans: Vlans,
    pub net: Net,
    pub offset: usize,
}

/// What follows the IP header(s).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Upper {
    /// The transport header starts at this offset of the record data.
    Parse(usize),
    Stop(Transport),
}

/// Decodes one record: `data` is the captured bytes, `orig_len` the
/// length on the wire. Never panics, whatever the bytes.
pub fn decode(linktype: LinkType, data: &[u8], orig_len: u32) -> Result<PacketInfo, DecodeError> {
    let l2 = match linktype {
        LinkType::ETHERNET => ethernet::parse(data)?,
        LinkType::RAW | LinkType::RAW_12 | LinkType::RAW_14 => L2::default(),
        LinkType::IPV4 => L2 { net: Net::V4, ..L2::default() },
        LinkType::IPV6 => L2 { net: Net::V6, ..L2::default() },
        LinkType::NULL => loopback::parse(data, false)?,
        LinkType::LOOP => loopback::parse(data, true)?,
        LinkType::LINUX_SLL => sll::parse_sll(data)?,
        LinkType::LINUX_SLL2 => sll::parse_sll2(data)?,
        other => return Err(DecodeError::UnsupportedLinkType(other)),
    };
    let l3 = l2.offset;
    let frame_len = (orig_len as usize).max(data.len());
    let version = match (l2.net, data.get(l3)) {
        (_, None) => return Err(DecodeError::Truncated("ip")),
        (Net::V4, _) => 4,
        (Net::V6, _) => 6,
        (Net::Any, Some(b)) => b >> 4,
    };
    let (ip, upper) = match version {
        4 => ipv4::parse(data, l3, frame_len)?,
        6 => ipv6::parse(data, l3, frame_len)?,
        _ => return Err(DecodeError::Malformed("raw packet is neither IPv4 nor IPv6")),
    };
    let ip_end = l3.saturating_add(ip.total_len as usize);
    let (transport, payload_offset) = match upper {
        Upper::Stop(t) => (t, l3 + ip.header_len as usize),
        Upper::Parse(l4) => {
            // Bytes past the IP packet (Ethernet padding) are not transport.
            let seg = data.get(l4..ip_end.min(data.len())).unwrap_or(&[]);
            let ip_payload = ip.total_len.saturating_sub(ip.header_len as u32);
            let (t, hl) = match ip.proto {
                tcp::PROTO_TCP => tcp::parse(seg, ip_payload),
                udp::PROTO_UDP => udp::parse(seg, ip_payload),
                icmp::PROTO_ICMP | icmp::PROTO_ICMPV6 => icmp::parse(seg, ip.proto, ip_payload),
                p => (Transport::Other(p), 0),
            };
            (t, l4 + hl)
        }
    };
    let truncated = data.len() < ip_end || matches!(transport, Transport::Truncated(_));
    Ok(PacketInfo { src_mac: l2.src_mac, dst_mac: l2.dst_mac, vlans: l2.vlans, ip, transport, ip_offset: l3, payload_offset, truncated })
}

/// Counts of decode outcomes, for reporting what a trace held and what was
/// skipped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DecodeStats {
    pub packets: u64,
    pub ipv4: u64,
    pub ipv6: u64,
    pub tcp: u64,
    /// TCP packets with SYN set (SYN and SYN/ACK).
    pub tcp_syn: u64,
    pub udp: u64,
    pub icmp: u64,
    /// IP packets whose transport was not decoded: other protocols,
    /// non-first fragments, cut or malformed transport headers.
    pub other_ip: u64,
    /// Records with the capture ending before the IP packet does.
    pub truncated: u64,
    pub not_ip: u64,
    pub unsupported_link: u64,
    /// Link or IP header cut off or malformed.
    pub bad: u64,
}

impl DecodeStats {
    pub fn add(&mut self, r: &Result<PacketInfo, DecodeError>) {
        self.packets += 1;
        let p = match r {
            Ok(p) => p,
            Err(DecodeError::NotIp(_)) => return self.not_ip += 1,
            Err(DecodeError::UnsupportedLinkType(_)) => return self.unsupported_link += 1,
            Err(_) => return self.bad += 1,
        };
        match p.ip.version {
            4 => self.ipv4 += 1,
            _ => self.ipv6 += 1,
        }
        self.truncated += p.truncated as u64;
        match &p.transport {
            Transport::Tcp(t) => {
                self.tcp += 1;
                self.tcp_syn += t.flags.syn() as u64;
            }
            Transport::Udp(_) => self.udp += 1,
            Transport::Icmp(_) => self.icmp += 1,
            _ => self.other_ip += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::TcpFlags;

    fn hex(s: &str) -> Vec<u8> {
        crate::test_hex(s)
    }

    const ETH: &str = "001122334455 66778899aabb";
    const TCP_SYN: &str = "c350 0050 00000064 00000000 6002 faf0 0000 0000 020405b4";

    #[test]
    fn ethernet_ipv4_tcp_with_padding() {
        // 44-byte IP packet padded to a 60-byte frame: padding is not payload.
        let f = hex(&format!("{ETH} 0800 4500002c 00004000 4006 0000 0a000001 0a000002 {TCP_SYN} 0000"));
        let p = decode(LinkType::ETHERNET, &f, 60).unwrap();
        assert_eq!(p.src_mac, Some([0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb]));
        assert_eq!((p.ip.total_len, p.ip_offset, p.payload_offset), (44, 14, 58));
        let t = p.tcp().unwrap();
        assert_eq!((t.flags, t.options.mss, t.payload_len), (TcpFlags::SYN, Some(1460), 0));
        assert!(!p.truncated);
        assert_eq!(p.vlan(), None);
    }

    #[test]
    fn raw_header_only_capture_is_flagged_truncated() {
        // 1500-byte packet of which 44 bytes were kept.
        let f = hex(&format!("450005dc 00004000 4006 0000 0a000001 0a000002 {TCP_SYN}"));
        let p = decode(LinkType::RAW, &f, 1500).unwrap();
        assert!(p.truncated);
        assert_eq!(p.tcp().unwrap().payload_len, 1500 - 44);
        assert_eq!(p.payload_len(), Some(1456));
        // A 30-byte cut loses the TCP header itself.
        let p = decode(LinkType::RAW, &f[..30], 1500).unwrap();
        assert_eq!(p.transport, Transport::Truncated(6));
        assert!(p.truncated);
    }

    #[test]
    fn link_types_reach_the_same_ip_packet() {
        let ip = format!("4500002c 00004000 4006 0000 0a000001 0a000002 {TCP_SYN}");
        let cases = [
            (LinkType::RAW_12, ip.clone()),
            (LinkType::RAW_14, ip.clone()),
            (LinkType::IPV4, ip.clone()),
            (LinkType::NULL, format!("02000000 {ip}")),
            (LinkType::LOOP, format!("00000002 {ip}")),
            (LinkType::LINUX_SLL, format!("0000 0001 0006 0a0b0c0d0e0f 0000 0800 {ip}")),
            (LinkType::LINUX_SLL2, format!("0800 0000 00000001 0001 00 06 0a0b0c0d0e0f0000 {ip}")),
            (LinkType::ETHERNET, format!("{ETH} 8100 0064 0800 {ip}")),
        ];
        for (lt, h) in cases {
            let d = hex(&h);
            let p = decode(lt, &d, d.len() as u32).unwrap_or_else(|e| panic!("{lt}: {e}"));
            assert_eq!(p.ip.src, IpAddr::from([10, 0, 0, 1]), "{lt}");
            assert_eq!(p.tcp().unwrap().dst_port, 80, "{lt}");
            assert_eq!(p.ip_offset + 44, d.len(), "{lt}");
        }
    }

    #[test]
    fn ipv6_udp_and_icmpv6() {
        let addrs = "20010db8000000000000000000000001 20010db8000000000000000000000002";
        let f = hex(&format!("{ETH} 86dd 60000000 000c 11 40 {addrs} 1234 0035 000c 0000 61626364"));
        let p = decode(LinkType::ETHERNET, &f, f.len() as u32).unwrap();
        assert_eq!(p.ip.version, 6);
        assert_eq!(p.udp().unwrap().payload_len, 4);
        assert_eq!(p.payload_offset, 14 + 48);
        let f = hex(&format!("60000000 0008 3a ff {addrs} 8000 0000 0007 0001"));
        let p = decode(LinkType::IPV6, &f, 48).unwrap();
        let Transport::Icmp(i) = p.transport else { panic!("{p:?}") };
        assert_eq!((i.icmp_type, i.echo.map(|e| (e.id, e.seq))), (128, Some((7, 1))));
    }

    #[test]
    fn errors() {
        let arp = hex(&format!("{ETH} 0806 0001 0800"));
        assert_eq!(decode(LinkType::ETHERNET, &arp, 60), Err(DecodeError::NotIp(0x0806)));
        assert_eq!(decode(LinkType(147), &arp, 60), Err(DecodeError::UnsupportedLinkType(LinkType(147))));
        assert_eq!(decode(LinkType::RAW, &[], 0), Err(DecodeError::Truncated("ip")));
        let ip_frame = hex(&format!("{ETH} 0800 45"));
        assert_eq!(decode(LinkType::ETHERNET, &ip_frame[..14], 60), Err(DecodeError::Truncated("ip")));
        assert_eq!(decode(LinkType::ETHERNET, &ip_frame, 60), Err(DecodeError::Truncated("ipv4")));
        assert!(matches!(decode(LinkType::RAW, &[0x55; 40], 40), Err(DecodeError::Malformed(_))));
        // The EtherType says IPv4, the version nibble says 6.
        let f = hex(&format!("{ETH} 0800 60000000 0000 3b 40 {}", "00".repeat(32)));
        assert!(matches!(decode(LinkType::ETHERNET, &f, 74), Err(DecodeError::Malformed(_))));
        assert!(decode(LinkType::IPV6, &f[14..], 60).is_ok());
        assert!(matches!(decode(LinkType::IPV4, &f[14..], 60), Err(DecodeError::Malformed(_))));
    }

    #[test]
    fn other_protocol_and_fragment_offsets() {
        // GRE (47): no transport decoded, payload offset right after IP.
        let f = hex("45000018 00000000 402f 0000 0a000001 0a000002 00000800");
        let p = decode(LinkType::RAW, &f, 24).unwrap();
        assert_eq!((p.transport, p.payload_offset), (Transport::Other(47), 20));
        let f = hex("45000018 00000010 4011 0000 0a000001 0a000002 00000800");
        assert_eq!(decode(LinkType::RAW, &f, 24).unwrap().transport, Transport::Fragment(17));
    }

    #[test]
    fn emitted_fragments_decode_as_a_udp_header_then_fragments_of_udp() {
        use crate::{Ipv4Repr, Ipv6Repr, UdpRepr};
        let udp = UdpRepr { src_port: 5000, dst_port: 53, payload_len: 2000 };
        // IPv4: 1480 bytes of the datagram, then the remaining 528.
        let v4 = |offset: u32, len: u16, more: bool| {
            let mut b = vec![0u8; 20 + len as usize];
            let ip = Ipv4Repr { src: [10, 0, 0, 1], dst: [10, 0, 0, 2], protocol: 17, ttl: 64, ident: 9, payload_len: len };
            ip.emit_fragment(&mut b, offset, more).unwrap();
            if offset == 0 {
                udp.emit(&mut b[20..], [10, 0, 0, 1], [10, 0, 0, 2]).unwrap();
            }
            decode(LinkType::RAW, &b, b.len() as u32).unwrap()
        };
        let first = v4(0, 1480, true);
        assert_eq!(first.transport, Transport::Udp(crate::UdpInfo { src_port: 5000, dst_port: 53, length: 2008, payload_len: 1472 }));
        assert!(!first.ip.fragment);
        let last = v4(1480, 528, false);
        assert!(last.ip.fragment && last.transport == Transport::Fragment(17));
        assert!(Ipv4Repr { src: [0; 4], dst: [0; 4], protocol: 17, ttl: 1, ident: 0, payload_len: 8 }.emit_fragment(&mut [0; 20], 3, false).is_err());
        // IPv6: the fragment header after the fixed one.
        let v6 = |offset: u32, len: u16, more: bool| {
            let (s, d) = ([0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
            let mut b = vec![0u8; 48 + len as usize];
            Ipv6Repr { src: s, dst: d, next_header: Ipv6Repr::FRAGMENT, hop_limit: 64, payload_len: 8 + len }.emit(&mut b).unwrap();
            Ipv6Repr::emit_fragment_header(&mut b[40..], 17, 77, offset, more).unwrap();
            if offset == 0 {
                udp.emit(&mut b[48..], std::net::Ipv6Addr::from(s), std::net::Ipv6Addr::from(d)).unwrap();
            }
            decode(LinkType::RAW, &b, b.len() as u32).unwrap()
        };
        assert!(matches!(v6(0, 1448, true).transport, Transport::Udp(u) if u.length == 2008));
        let last = v6(1448, 560, false);
        assert!(last.ip.fragment && last.transport == Transport::Fragment(17));
    }

    #[test]
    fn stats_count_each_outcome() {
        let mut s = DecodeStats::default();
        let syn = hex(&format!("4500002c 00004000 4006 0000 0a000001 0a000002 {TCP_SYN}"));
        s.add(&decode(LinkType::RAW, &syn, 1500));
        s.add(&decode(LinkType::RAW, &syn[..30], 44));
        s.add(&Err(DecodeError::NotIp(0x0806)));
        s.add(&Err(DecodeError::UnsupportedLinkType(LinkType(9))));
        s.add(&Err(DecodeError::Truncated("ipv4")));
        let want = DecodeStats {
            packets: 5,
            ipv4: 2,
            tcp: 1,
            tcp_syn: 1,
            other_ip: 1,
            truncated: 1,
            not_ip: 1,
            unsupported_link: 1,
            bad: 1,
            ..DecodeStats::default()
        };
        assert_eq!(s, want);
    }
}
