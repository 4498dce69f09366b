//! IPv6 headers: parse, walking the extension headers in front of the
//! transport header; and emit a fixed 40-byte header.

use crate::decode::{DecodeError, IpInfo, Transport, Upper};
use crate::emit::{header, EmitError};
use std::net::{IpAddr, Ipv6Addr};

pub const HEADER_LEN: usize = 40;

const HOP_BY_HOP: u8 = 0;
const ROUTING: u8 = 43;
const FRAGMENT: u8 = 44;
const AH: u8 = 51;
const DEST_OPTS: u8 = 60;
/// Real packets carry two or three; more is taken as garbage.
const MAX_EXT_HEADERS: usize = 16;

/// Decodes the IPv6 header at `l3`; `frame_len` as for IPv4 (payload length
/// 0 means a jumbogram or offload: the length comes from the frame).
#[inline]
pub(crate) fn parse(data: &[u8], l3: usize, frame_len: usize) -> Result<(IpInfo, Upper), DecodeError> {
    let d = data.get(l3..).unwrap_or(&[]);
    let h: &[u8; 40] = d.first_chunk().ok_or(DecodeError::Truncated("ipv6"))?;
    if h[0] >> 4 != 6 {
        return Err(DecodeError::Malformed("ip version does not match the link layer"));
    }
    let plen = u16::from_be_bytes([h[4], h[5]]) as u32;
    let from_frame = plen == 0;
    let total_len = if from_frame { frame_len.saturating_sub(l3).try_into().unwrap_or(u32::MAX) } else { 40 + plen };
    let src: [u8; 16] = crate::field::array(h, 8).unwrap_or_default();
    let dst: [u8; 16] = crate::field::array(h, 24).unwrap_or_default();

    // Walk the extension headers within both the packet and the capture.
    let have = d.len().min(total_len as usize);
    let mut nh = h[6];
    let mut off = HEADER_LEN;
    let mut fragment = false;
    let mut stop = None;
    let mut hops = 0;
    while matches!(nh, HOP_BY_HOP | ROUTING | FRAGMENT | AH | DEST_OPTS) {
        hops += 1;
        let len_byte = d.get(off + 1).map(|&b| b as usize);
        let len = match (nh, len_byte) {
            (_, None) => None,
            (FRAGMENT, _) => Some(8),
            (AH, Some(l)) => Some((l + 2) * 4),
            (_, Some(l)) => Some((l + 1) * 8),
        };
        match len {
            _ if hops > MAX_EXT_HEADERS => stop = Some(Transport::Malformed(nh)),
            Some(l) if off + l > total_len as usize => stop = Some(Transport::Malformed(nh)),
            Some(l) if off + l <= have => {
                if nh == FRAGMENT {
                    fragment = crate::field::be16(d, off + 2).unwrap_or(0) >> 3 != 0;
                }
                nh = d.get(off).copied().unwrap_or(nh);
                off += l;
                if fragment {
                    stop = Some(Transport::Fragment(nh));
                }
            }
            _ => stop = Some(Transport::Truncated(nh)),
        }
        if stop.is_some() {
            break;
        }
    }
    let info = IpInfo {
        version: 6,
        src: IpAddr::V6(Ipv6Addr::from(src)),
        dst: IpAddr::V6(Ipv6Addr::from(dst)),
        total_len,
        header_len: off as u16,
        ttl: h[7],
        ecn: h[1] >> 4 & 3,
        proto: nh,
        fragment,
        len_from_frame: from_frame,
    };
    Ok((info, stop.map_or(Upper::Parse(l3 + off), Upper::Stop)))
}

/// A 40-byte IPv6 header to emit (traffic class and flow label 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ipv6Repr {
    pub src: [u8; 16],
    pub dst: [u8; 16],
    pub next_header: u8,
    pub hop_limit: u8,
    pub payload_len: u16,
}

impl Ipv6Repr {
    pub const HEADER_LEN: usize = HEADER_LEN;
    /// The next-header value of a fragment header.
    pub const FRAGMENT: u8 = FRAGMENT;

    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, EmitError> {
        let h: &mut [u8; 40] = header(buf)?;
        h[0..4].copy_from_slice(&[0x60, 0, 0, 0]);
        h[4..6].copy_from_slice(&self.payload_len.to_be_bytes());
        h[6] = self.next_header;
        h[7] = self.hop_limit;
        h[8..24].copy_from_slice(&self.src);
        h[24..40].copy_from_slice(&self.dst);
        Ok(HEADER_LEN)
    }

    /// The 8-byte fragment header (next header [`Self::FRAGMENT`] in the header before
    /// it) of one fragment of datagram `ident`, whose data start `offset`
    /// bytes into the fragmentable part (a multiple of 8), `more` unless
    /// it is the last; `next_header` is the protocol of the datagram.
    pub fn emit_fragment_header(buf: &mut [u8], next_header: u8, ident: u32, offset: u32, more: bool) -> Result<usize, EmitError> {
        if !offset.is_multiple_of(8) || offset / 8 > 0x1fff {
            return Err(EmitError::LengthOverflow);
        }
        let h: &mut [u8; 8] = header(buf)?;
        h[0] = next_header;
        h[1] = 0;
        h[2..4].copy_from_slice(&(((offset / 8) as u16) << 3 | more as u16).to_be_bytes());
        h[4..8].copy_from_slice(&ident.to_be_bytes());
        Ok(8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        crate::test_hex(s)
    }

    const ADDRS: &str = "20010db8000000000000000000000001 20010db8000000000000000000000002";

    fn packet(plen: u16, nh: u8, ext: &str) -> Vec<u8> {
        hex(&format!("60000000 {plen:04x} {nh:02x} 40 {ADDRS} {ext}"))
    }

    #[test]
    fn plain_tcp() {
        let p = packet(20, 6, "");
        let (ip, up) = parse(&p, 0, 60).unwrap();
        assert_eq!(ip.src, "2001:db8::1".parse::<IpAddr>().unwrap());
        assert_eq!(ip.dst, "2001:db8::2".parse::<IpAddr>().unwrap());
        assert_eq!((ip.version, ip.total_len, ip.header_len, ip.ttl, ip.proto), (6, 60, 40, 64, 6));
        assert_eq!(up, Upper::Parse(40));
    }

    #[test]
    fn extension_chain_is_skipped() {
        // Hop-by-hop (8) -> routing (24) -> destination options (8) -> AH (16) -> UDP.
        let ext = "2b00 000000000000
                   3c02 0001 00000000 00000000000000000000000000000000
                   3300 0000 00000000
                   1102 0000 00000001 00000001 00000000
                   c350 0035 0008 0000";
        let p = packet(64, 0, ext);
        let (ip, up) = parse(&p, 0, p.len()).unwrap();
        assert_eq!((ip.proto, ip.header_len, ip.fragment), (17, 96, false));
        assert_eq!(up, Upper::Parse(96));
    }

    #[test]
    fn fragments_and_no_next_header() {
        let first = packet(16, 44, "0600 0001 deadbeef 0050 0050 00000000");
        let (ip, up) = parse(&first, 0, 56).unwrap();
        assert_eq!((ip.proto, ip.fragment, up), (6, false, Upper::Parse(48)));
        let later = packet(16, 44, "0600 05a8 deadbeef 00000000 00000000");
        let (ip, up) = parse(&later, 0, 56).unwrap();
        assert_eq!((ip.proto, ip.fragment, up), (6, true, Upper::Stop(Transport::Fragment(6))));
        let none = packet(0x10, 59, "00000000");
        assert_eq!(parse(&none, 0, 56).unwrap().1, Upper::Parse(40));
        assert_eq!(parse(&none, 0, 56).unwrap().0.proto, 59);
    }

    #[test]
    fn cut_and_bad_chains() {
        // Hop-by-hop header claims 16 bytes but only 8 were captured.
        let p = packet(40, 0, "0601 0000 00000000");
        let (ip, up) = parse(&p, 0, 80).unwrap();
        assert_eq!((ip.proto, up), (0, Upper::Stop(Transport::Truncated(0))));
        // ...and longer than the packet itself says.
        let p = packet(8, 0, "06ff 0000 00000000");
        assert_eq!(parse(&p, 0, 48).unwrap().1, Upper::Stop(Transport::Malformed(0)));
        // A loop of 17 destination-option headers.
        let p = packet(17 * 8, 60, &"3c00 000000000000 ".repeat(17));
        assert_eq!(parse(&p, 0, p.len()).unwrap().1, Upper::Stop(Transport::Malformed(60)));
        assert_eq!(parse(&p[..39], 0, 80), Err(DecodeError::Truncated("ipv6")));
    }

    #[test]
    fn zero_payload_length_falls_back_to_frame() {
        let p = packet(0, 6, "");
        let (ip, _) = parse(&p, 0, 9040).unwrap();
        assert_eq!((ip.total_len, ip.len_from_frame), (9040, true));
    }

    #[test]
    fn emit_round_trip() {
        let r = Ipv6Repr { src: [0xfe; 16], dst: [0x20; 16], next_header: 17, hop_limit: 7, payload_len: 8 };
        let mut b = [0u8; 48];
        assert_eq!(r.emit(&mut b), Ok(40));
        let (ip, up) = parse(&b, 0, 48).unwrap();
        assert_eq!((ip.src, ip.dst), (IpAddr::from(r.src), IpAddr::from(r.dst)));
        assert_eq!((ip.proto, ip.ttl, ip.total_len, up), (17, 7, 48, Upper::Parse(40)));
        assert!(r.emit(&mut [0; 39]).is_err());
    }
}
