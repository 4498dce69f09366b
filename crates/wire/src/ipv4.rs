//! IPv4 headers: parse (options skipped, fragments flagged) and emit.

use crate::checksum;
use crate::decode::{DecodeError, IpInfo, Transport, Upper};
use crate::emit::{header, EmitError};
use std::net::{IpAddr, Ipv4Addr};

pub const HEADER_LEN: usize = 20;

/// Decodes the IPv4 header at `l3`. `frame_len` is the length of the whole
/// frame on the wire, used when the total length field is 0 (TSO).
#[inline]
pub(crate) fn parse(data: &[u8], l3: usize, frame_len: usize) -> Result<(IpInfo, Upper), DecodeError> {
    let d = data.get(l3..).unwrap_or(&[]);
    let h: &[u8; 20] = d.first_chunk().ok_or(DecodeError::Truncated("ipv4"))?;
    if h[0] >> 4 != 4 {
        return Err(DecodeError::Malformed("ip version does not match the link layer"));
    }
    let ihl = (h[0] & 0x0f) as u32 * 4;
    if ihl < 20 {
        return Err(DecodeError::Malformed("ipv4 header length below 20"));
    }
    let raw_total = u16::from_be_bytes([h[2], h[3]]) as u32;
    // Segmentation offload on the capture host leaves the length 0: take it
    // from the frame instead, and say so.
    let from_frame = raw_total == 0;
    let total_len = if from_frame { frame_len.saturating_sub(l3).try_into().unwrap_or(u32::MAX) } else { raw_total };
    let frag_offset = u16::from_be_bytes([h[6], h[7]]) & 0x1fff;
    let proto = h[9];
    let info = IpInfo {
        version: 4,
        src: IpAddr::V4(Ipv4Addr::new(h[12], h[13], h[14], h[15])),
        dst: IpAddr::V4(Ipv4Addr::new(h[16], h[17], h[18], h[19])),
        total_len,
        header_len: ihl as u16,
        ttl: h[8],
        ecn: h[1] & 3,
        proto,
        fragment: frag_offset != 0,
        len_from_frame: from_frame,
    };
    let upper = if info.fragment {
        Upper::Stop(Transport::Fragment(proto))
    } else if total_len < ihl {
        Upper::Stop(Transport::Malformed(proto))
    } else if d.len() < ihl as usize {
        Upper::Stop(Transport::Truncated(proto))
    } else {
        Upper::Parse(l3 + ihl as usize)
    };
    Ok((info, upper))
}

/// A 20-byte IPv4 header to emit (no options, DF set, TOS 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ipv4Repr {
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub protocol: u8,
    pub ttl: u8,
    pub ident: u16,
    /// Bytes after this header (transport header + payload).
    pub payload_len: u16,
}

impl Ipv4Repr {
    pub const HEADER_LEN: usize = HEADER_LEN;

    /// Writes the header with its checksum; returns 20.
    /// Writes the header of a whole packet (DF set).
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, EmitError> {
        self.emit_with(buf, 0x4000)
    }

    /// Writes the header of one fragment of a datagram, whose
    /// identification is `self.ident`: its data start `offset` bytes into
    /// the datagram's payload (a multiple of 8), `more` unless it is the
    /// last.
    pub fn emit_fragment(&self, buf: &mut [u8], offset: u32, more: bool) -> Result<usize, EmitError> {
        if !offset.is_multiple_of(8) || offset / 8 > 0x1fff {
            return Err(EmitError::LengthOverflow);
        }
        self.emit_with(buf, (offset / 8) as u16 | if more { 0x2000 } else { 0 })
    }

    fn emit_with(&self, buf: &mut [u8], flags_offset: u16) -> Result<usize, EmitError> {
        let total = self.payload_len.checked_add(HEADER_LEN as u16).ok_or(EmitError::LengthOverflow)?;
        let h: &mut [u8; 20] = header(buf)?;
        h[0] = 0x45;
        h[1] = 0;
        h[2..4].copy_from_slice(&total.to_be_bytes());
        h[4..6].copy_from_slice(&self.ident.to_be_bytes());
        h[6..8].copy_from_slice(&flags_offset.to_be_bytes());
        h[8] = self.ttl;
        h[9] = self.protocol;
        h[10..12].fill(0);
        h[12..16].copy_from_slice(&self.src);
        h[16..20].copy_from_slice(&self.dst);
        let c = checksum::internet_checksum(h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        Ok(HEADER_LEN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        crate::test_hex(s)
    }

    #[test]
    fn fixture_with_options() {
        // IHL 6 (one 4-byte option: router alert), TCP, 1.2.3.4 -> 5.6.7.8.
        let p = hex("46000030 abcd0000 4006 0000 01020304 05060708 94040000 c350");
        let (ip, up) = parse(&p, 0, p.len()).unwrap();
        assert_eq!(ip.src, IpAddr::from([1, 2, 3, 4]));
        assert_eq!(ip.dst, IpAddr::from([5, 6, 7, 8]));
        assert_eq!((ip.version, ip.total_len, ip.header_len, ip.ttl, ip.proto), (4, 0x30, 24, 64, 6));
        assert!(!ip.fragment && !ip.len_from_frame);
        assert_eq!(up, Upper::Parse(24));
    }

    #[test]
    fn fragments() {
        // MF set, offset 0: the first fragment carries the transport header.
        let first = hex("45000030 00012000 4011 0000 01020304 05060708");
        let (ip, up) = parse(&first, 0, 48).unwrap();
        assert!(!ip.fragment);
        assert_eq!(up, Upper::Parse(20));
        let later = hex("45000030 000100b9 4011 0000 01020304 05060708");
        let (ip, up) = parse(&later, 0, 48).unwrap();
        assert!(ip.fragment);
        assert_eq!(up, Upper::Stop(Transport::Fragment(17)));
    }

    #[test]
    fn zero_total_length_falls_back_to_frame() {
        let p = hex("45000000 00004000 4006 0000 01020304 05060708");
        let (ip, _) = parse(&p, 0, 2920).unwrap();
        assert_eq!((ip.total_len, ip.len_from_frame), (2920, true));
        // Behind a 14-byte link header the link bytes are not IP bytes.
        let framed = [&[0u8; 14][..], &p].concat();
        assert_eq!(parse(&framed, 14, 2934).unwrap().0.total_len, 2920);
    }

    #[test]
    fn bad_and_short_headers() {
        let p = hex("45000030 00000000 4006 0000 01020304 05060708");
        assert_eq!(parse(&p[..19], 0, 48), Err(DecodeError::Truncated("ipv4")));
        assert_eq!(parse(&p, 1, 48), Err(DecodeError::Truncated("ipv4")));
        assert_eq!(parse(&p, 99, 48), Err(DecodeError::Truncated("ipv4")));
        let mut v = p.clone();
        v[0] = 0x44;
        assert!(matches!(parse(&v, 0, 48), Err(DecodeError::Malformed(_))));
        v[0] = 0x65;
        assert!(matches!(parse(&v, 0, 48), Err(DecodeError::Malformed(_))));
        // Total length shorter than the header itself.
        let mut v = p.clone();
        v[3] = 10;
        assert_eq!(parse(&v, 0, 48).unwrap().1, Upper::Stop(Transport::Malformed(6)));
        // IHL 15 but only 20 bytes captured: addresses kept, transport cut.
        let mut v = p.clone();
        v[0] = 0x4f;
        v[3] = 100;
        let (ip, up) = parse(&v, 0, 100).unwrap();
        assert_eq!((ip.header_len, up), (60, Upper::Stop(Transport::Truncated(6))));
    }

    #[test]
    fn emit_round_trip_and_checksum() {
        let r = Ipv4Repr { src: [10, 0, 0, 1], dst: [10, 0, 0, 2], protocol: 6, ttl: 64, ident: 0x1234, payload_len: 1480 };
        let mut b = [0u8; 20];
        assert_eq!(r.emit(&mut b), Ok(20));
        assert_eq!(checksum::internet_checksum(&b), 0);
        assert_eq!(&b[..10], &hex("45 00 05dc 1234 4000 40 06")[..]);
        let (ip, _) = parse(&b, 0, 1500).unwrap();
        assert_eq!((ip.src, ip.dst), (IpAddr::from(r.src), IpAddr::from(r.dst)));
        assert_eq!((ip.total_len, ip.ttl, ip.proto, ip.fragment), (1500, 64, 6, false));
        assert_eq!(r.emit(&mut [0; 19]), Err(EmitError::BufferTooSmall { need: 20, have: 19 }));
        let big = Ipv4Repr { payload_len: 65516, ..r };
        assert_eq!(big.emit(&mut b), Err(EmitError::LengthOverflow));
    }
}
