//! ICMP (IPv4, protocol 1) and ICMPv6 (protocol 58): type, code, and the
//! identifier and sequence number of echo requests and replies.

use crate::decode::Transport;

/// The fields read from an ICMP or ICMPv6 header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IcmpInfo {
    pub icmp_type: u8,
    pub code: u8,
    /// Present for echo request/reply when their 8-byte header was captured.
    pub echo: Option<Echo>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Echo {
    pub id: u16,
    pub seq: u16,
}

pub const PROTO_ICMP: u8 = 1;
pub const PROTO_ICMPV6: u8 = 58;

/// Decodes the header at the start of `seg`; returns the transport and the
/// header length (8: ICMP's fixed part, the rest depends on the type).
#[inline]
pub(crate) fn parse(seg: &[u8], proto: u8, ip_payload: u32) -> (Transport, usize) {
    if ip_payload < 4 {
        return (Transport::Malformed(proto), 0);
    }
    let Some(h) = seg.first_chunk::<4>() else {
        return (Transport::Truncated(proto), 0);
    };
    let is_echo = match proto {
        PROTO_ICMPV6 => matches!(h[0], 128 | 129),
        _ => matches!(h[0], 0 | 8),
    };
    let echo = match (is_echo, seg.first_chunk::<8>()) {
        (true, Some(e)) => Some(Echo { id: u16::from_be_bytes([e[4], e[5]]), seq: u16::from_be_bytes([e[6], e[7]]) }),
        _ => None,
    };
    (Transport::Icmp(IcmpInfo { icmp_type: h[0], code: h[1], echo }), 8)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        crate::test_hex(s)
    }

    #[test]
    fn echo_request_v4() {
        let (t, n) = parse(&hex("08 00 f7fc 1234 0005 6162"), PROTO_ICMP, 10);
        assert_eq!(n, 8);
        assert_eq!(t, Transport::Icmp(IcmpInfo { icmp_type: 8, code: 0, echo: Some(Echo { id: 0x1234, seq: 5 }) }));
    }

    #[test]
    fn echo_reply_v6_and_error_v4() {
        let (t, _) = parse(&hex("81 00 0000 0001 0002"), PROTO_ICMPV6, 8);
        assert_eq!(t, Transport::Icmp(IcmpInfo { icmp_type: 129, code: 0, echo: Some(Echo { id: 1, seq: 2 }) }));
        // Type 129 is not an echo in ICMPv4; port unreachable has no echo.
        let (t, _) = parse(&hex("81 00 0000 0001 0002"), PROTO_ICMP, 8);
        assert_eq!(t, Transport::Icmp(IcmpInfo { icmp_type: 129, code: 0, echo: None }));
        let (t, _) = parse(&hex("03 03 0000 00000000 45"), PROTO_ICMP, 36);
        assert_eq!(t, Transport::Icmp(IcmpInfo { icmp_type: 3, code: 3, echo: None }));
    }

    #[test]
    fn short_headers() {
        assert_eq!(parse(&hex("08 00 f7"), PROTO_ICMP, 64).0, Transport::Truncated(1));
        assert_eq!(parse(&hex("08 00 f7fc"), PROTO_ICMP, 3).0, Transport::Malformed(1));
        // Echo cut before its id: type and code still read, no echo fields.
        let (t, _) = parse(&hex("08 00 f7fc 12"), PROTO_ICMP, 64);
        assert_eq!(t, Transport::Icmp(IcmpInfo { icmp_type: 8, code: 0, echo: None }));
    }
}
