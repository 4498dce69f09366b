//! UDP headers: parse, and emit with a checksum over a conceptually zero
//! payload (the simulator carries lengths, not bytes).

use crate::checksum;
use crate::decode::Transport;
use crate::emit::{header, EmitError};
use std::net::IpAddr;

pub const PROTO_UDP: u8 = 17;
pub const HEADER_LEN: usize = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdpInfo {
    pub src_port: u16,
    pub dst_port: u16,
    /// The header's length field (header + payload), as sent.
    pub length: u16,
    /// Payload bytes according to the IP header, which is what counts when
    /// the two disagree (or the capture is truncated).
    pub payload_len: u32,
}

#[inline]
pub(crate) fn parse(seg: &[u8], ip_payload: u32) -> (Transport, usize) {
    if ip_payload < HEADER_LEN as u32 {
        return (Transport::Malformed(PROTO_UDP), 0);
    }
    let Some(h) = seg.first_chunk::<8>() else {
        return (Transport::Truncated(PROTO_UDP), 0);
    };
    let info = UdpInfo {
        src_port: u16::from_be_bytes([h[0], h[1]]),
        dst_port: u16::from_be_bytes([h[2], h[3]]),
        length: u16::from_be_bytes([h[4], h[5]]),
        payload_len: ip_payload - HEADER_LEN as u32,
    };
    (Transport::Udp(info), HEADER_LEN)
}

/// A UDP header to emit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UdpRepr {
    pub src_port: u16,
    pub dst_port: u16,
    pub payload_len: u16,
}

impl UdpRepr {
    pub const HEADER_LEN: usize = HEADER_LEN;

    /// Writes the 8-byte header. The checksum covers the pseudo-header, this
    /// header and `payload_len` zero bytes, which add nothing to the sum.
    pub fn emit(&self, buf: &mut [u8], src_ip: impl Into<IpAddr>, dst_ip: impl Into<IpAddr>) -> Result<usize, EmitError> {
        let len = (HEADER_LEN as u16).checked_add(self.payload_len).ok_or(EmitError::LengthOverflow)?;
        let h: &mut [u8; 8] = header(buf)?;
        let acc = checksum::pseudo(src_ip.into(), dst_ip.into(), PROTO_UDP, len as u32).ok_or(EmitError::MixedAddressFamilies)?;
        h[0..2].copy_from_slice(&self.src_port.to_be_bytes());
        h[2..4].copy_from_slice(&self.dst_port.to_be_bytes());
        h[4..6].copy_from_slice(&len.to_be_bytes());
        h[6..8].fill(0);
        // Zero means "no checksum" in UDP, so a computed zero is sent as ffff.
        let c = match checksum::finish(checksum::sum(acc, h)) {
            0 => 0xffff,
            c => c,
        };
        h[6..8].copy_from_slice(&c.to_be_bytes());
        Ok(HEADER_LEN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_fixture() {
        // A DNS query: port 50852 -> 53, length 45.
        let h = crate::test_hex("c6a4 0035 002d 1f3e");
        let (t, n) = parse(&h, 45);
        assert_eq!(n, 8);
        assert_eq!(t, Transport::Udp(UdpInfo { src_port: 0xc6a4, dst_port: 53, length: 45, payload_len: 37 }));
        assert_eq!(parse(&h[..7], 45).0, Transport::Truncated(17));
        assert_eq!(parse(&h, 7).0, Transport::Malformed(17));
    }

    #[test]
    fn emit_checksum_matches_materialised_payload() {
        let r = UdpRepr { src_port: 5000, dst_port: 53, payload_len: 100 };
        let (s, d) = ([10, 0, 0, 1], [10, 0, 0, 2]);
        let mut pkt = vec![0u8; 8 + 100];
        assert_eq!(r.emit(&mut pkt, s, d), Ok(8));
        // Independent check: pseudo-header + the whole datagram sums to zero.
        let mut pseudo = vec![10, 0, 0, 1, 10, 0, 0, 2, 0, 17];
        pseudo.extend(108u16.to_be_bytes());
        pseudo.extend(&pkt);
        assert_eq!(checksum::internet_checksum(&pseudo), 0);
        let (t, _) = parse(&pkt, 108);
        assert_eq!(t, Transport::Udp(UdpInfo { src_port: 5000, dst_port: 53, length: 108, payload_len: 100 }));
    }

    #[test]
    fn emit_errors() {
        let r = UdpRepr { src_port: 1, dst_port: 2, payload_len: 65528 };
        assert_eq!(r.emit(&mut [0; 8], [1, 1, 1, 1], [2, 2, 2, 2]), Err(EmitError::LengthOverflow));
        let r = UdpRepr { payload_len: 0, ..r };
        assert_eq!(r.emit(&mut [0; 8], [1, 1, 1, 1], [0u8; 16]), Err(EmitError::MixedAddressFamilies));
        assert_eq!(r.emit(&mut [0; 7], [1, 1, 1, 1], [2, 2, 2, 2]), Err(EmitError::BufferTooSmall { need: 8, have: 7 }));
    }
}
