//! TCP headers: ports, sequence numbers, flags, window and the options the
//! model extractor needs (MSS, window scale, SACK, timestamps); and emitting
//! headers with a checksum over a conceptually zero payload.

use crate::checksum;
use crate::decode::Transport;
use crate::emit::{header, EmitError};
use std::net::IpAddr;
use std::ops::{BitOr, BitOrAssign};

pub const PROTO_TCP: u8 = 6;
pub const MAX_SACK_BLOCKS: usize = 4;

/// The nine flag bits (NS/AE in bit 8, then CWR..FIN).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TcpFlags(pub u16);

impl TcpFlags {
    pub const FIN: TcpFlags = TcpFlags(0x001);
    pub const SYN: TcpFlags = TcpFlags(0x002);
    pub const RST: TcpFlags = TcpFlags(0x004);
    pub const PSH: TcpFlags = TcpFlags(0x008);
    pub const ACK: TcpFlags = TcpFlags(0x010);
    pub const URG: TcpFlags = TcpFlags(0x020);
    pub const ECE: TcpFlags = TcpFlags(0x040);
    pub const CWR: TcpFlags = TcpFlags(0x080);
    pub const NS: TcpFlags = TcpFlags(0x100);

    pub fn contains(self, f: TcpFlags) -> bool {
        self.0 & f.0 == f.0
    }
    pub fn syn(self) -> bool {
        self.contains(Self::SYN)
    }
    pub fn ack(self) -> bool {
        self.contains(Self::ACK)
    }
    pub fn fin(self) -> bool {
        self.contains(Self::FIN)
    }
    pub fn rst(self) -> bool {
        self.contains(Self::RST)
    }
    pub fn psh(self) -> bool {
        self.contains(Self::PSH)
    }
}

impl BitOr for TcpFlags {
    type Output = TcpFlags;
    fn bitor(self, o: TcpFlags) -> TcpFlags {
        TcpFlags(self.0 | o.0)
    }
}
impl BitOrAssign for TcpFlags {
    fn bitor_assign(&mut self, o: TcpFlags) {
        self.0 |= o.0;
    }
}

/// Options found in the captured part of the header. Unknown options are
/// skipped; a malformed or cut option ends the scan with what was read so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpOptions {
    pub mss: Option<u16>,
    pub window_scale: Option<u8>,
    pub sack_permitted: bool,
    /// (TSval, TSecr).
    pub timestamp: Option<(u32, u32)>,
    sack: [(u32, u32); MAX_SACK_BLOCKS],
    sack_len: u8,
}

impl TcpOptions {
    /// SACK blocks as (left edge, right edge) wire values.
    pub fn sack(&self) -> &[(u32, u32)] {
        self.sack.get(..self.sack_len as usize).unwrap_or(&[])
    }

    #[inline]
    fn parse(opts: &[u8]) -> TcpOptions {
        let mut o = TcpOptions::default();
        let mut i = 0;
        while let Some(&kind) = opts.get(i) {
            match kind {
                0 => break,
                1 => {
                    i += 1;
                    continue;
                }
                _ => {}
            }
            let len = match opts.get(i + 1) {
                Some(&l) if l >= 2 => l as usize,
                _ => break,
            };
            let Some(body) = opts.get(i + 2..i + len) else { break };
            match (kind, body.len()) {
                (2, 2) => o.mss = Some(u16::from_be_bytes([body[0], body[1]])),
                (3, 1) => o.window_scale = Some(body[0]),
                (4, 0) => o.sack_permitted = true,
                (5, n) if n % 8 == 0 => {
                    for (slot, b) in o.sack.iter_mut().zip(body.chunks_exact(8)) {
                        *slot = (u32::from_be_bytes([b[0], b[1], b[2], b[3]]), u32::from_be_bytes([b[4], b[5], b[6], b[7]]));
                    }
                    o.sack_len = (n / 8).min(MAX_SACK_BLOCKS) as u8;
                }
                (8, 8) => {
                    o.timestamp =
                        Some((u32::from_be_bytes([body[0], body[1], body[2], body[3]]), u32::from_be_bytes([body[4], body[5], body[6], body[7]])))
                }
                _ => {}
            }
            i += len;
        }
        o
    }
}

/// The fields read from a TCP header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpInfo {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: TcpFlags,
    pub window: u16,
    /// Data offset in bytes (20..=60).
    pub header_len: u8,
    /// From the IP length, not from what was captured.
    pub payload_len: u32,
    pub options: TcpOptions,
}

/// Decodes the header at the start of `seg` (the captured bytes of the IP
/// payload); `ip_payload` is the IP payload length the IP header gives.
#[inline]
pub(crate) fn parse(seg: &[u8], ip_payload: u32) -> (Transport, usize) {
    if ip_payload < 20 {
        return (Transport::Malformed(PROTO_TCP), 0);
    }
    let Some(h) = seg.first_chunk::<20>() else {
        return (Transport::Truncated(PROTO_TCP), 0);
    };
    let doff = (h[12] >> 4) as usize * 4;
    if doff < 20 || doff as u32 > ip_payload {
        return (Transport::Malformed(PROTO_TCP), 0);
    }
    // Header-only captures may cut the options: read what is there.
    let options = TcpOptions::parse(seg.get(20..doff.min(seg.len())).unwrap_or(&[]));
    let info = TcpInfo {
        src_port: u16::from_be_bytes([h[0], h[1]]),
        dst_port: u16::from_be_bytes([h[2], h[3]]),
        seq: u32::from_be_bytes([h[4], h[5], h[6], h[7]]),
        ack: u32::from_be_bytes([h[8], h[9], h[10], h[11]]),
        flags: TcpFlags(u16::from_be_bytes([h[12] & 1, h[13]])),
        window: u16::from_be_bytes([h[14], h[15]]),
        header_len: doff as u8,
        payload_len: ip_payload - doff as u32,
        options,
    };
    (Transport::Tcp(info), doff)
}

/// A TCP header to emit. Options are written when set, each group padded to
/// a 4-byte word, in Linux's order: MSS; SACK-permitted and timestamps
/// together (or either after two NOPs); NOP, window scale; then NOP, NOP,
/// SACK blocks. A full Linux SYN is 20 option bytes; an ACK with timestamps 12.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpRepr<'a> {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: TcpFlags,
    pub window: u16,
    pub mss: Option<u16>,
    pub window_scale: Option<u8>,
    pub sack_permitted: bool,
    /// At most 4 blocks (3 when the SYN options are also set, or with timestamps).
    pub sack: &'a [(u32, u32)],
    /// RFC 7323 timestamps (TSval, TSecr).
    pub timestamps: Option<(u32, u32)>,
}

impl TcpRepr<'_> {
    pub fn header_len(&self) -> usize {
        let sack = if self.sack.is_empty() { 0 } else { 4 + 8 * self.sack.len() };
        let perm_ts = match (self.sack_permitted, self.timestamps.is_some()) {
            (_, true) => 12,
            (true, false) => 4,
            (false, false) => 0,
        };
        20 + 4 * (self.mss.is_some() as usize + self.window_scale.is_some() as usize) + perm_ts + sack
    }

    /// Writes the header into `buf` and returns its length. The checksum
    /// covers the pseudo-header for `src_ip`/`dst_ip` (both IPv4 or both
    /// IPv6), the header and `payload_len` zero bytes, which add nothing to a
    /// one's-complement sum and so are never materialised.
    pub fn emit(&self, buf: &mut [u8], src_ip: impl Into<IpAddr>, dst_ip: impl Into<IpAddr>, payload_len: u32) -> Result<usize, EmitError> {
        if self.sack.len() > MAX_SACK_BLOCKS {
            return Err(EmitError::TooManySackBlocks(self.sack.len()));
        }
        let hl = self.header_len();
        if hl > 60 {
            return Err(EmitError::OptionsTooLong(hl - 20));
        }
        let (src_ip, dst_ip) = (src_ip.into(), dst_ip.into());
        let seg_len = payload_len.checked_add(hl as u32).ok_or(EmitError::LengthOverflow)?;
        if src_ip.is_ipv4() && seg_len > 0xffff {
            return Err(EmitError::LengthOverflow);
        }
        let acc = checksum::pseudo(src_ip, dst_ip, PROTO_TCP, seg_len).ok_or(EmitError::MixedAddressFamilies)?;
        let have = buf.len();
        let h = buf.get_mut(..hl).ok_or(EmitError::BufferTooSmall { need: hl, have })?;
        let fixed: &mut [u8; 20] = header(h)?;
        fixed[0..2].copy_from_slice(&self.src_port.to_be_bytes());
        fixed[2..4].copy_from_slice(&self.dst_port.to_be_bytes());
        fixed[4..8].copy_from_slice(&self.seq.to_be_bytes());
        fixed[8..12].copy_from_slice(&self.ack.to_be_bytes());
        fixed[12] = ((hl / 4) as u8) << 4 | (self.flags.0 >> 8) as u8 & 1;
        fixed[13] = self.flags.0 as u8;
        fixed[14..16].copy_from_slice(&self.window.to_be_bytes());
        fixed[16..20].fill(0); // checksum, urgent pointer
        let mut opts = OptWriter { buf: &mut h[20..], at: 0 };
        if let Some(mss) = self.mss {
            let [a, b] = mss.to_be_bytes();
            opts.put(&[2, 4, a, b]);
        }
        match (self.sack_permitted, self.timestamps) {
            (perm, Some((val, ecr))) => {
                opts.put(if perm { &[4, 2, 8, 10] } else { &[1, 1, 8, 10] });
                opts.put(&val.to_be_bytes());
                opts.put(&ecr.to_be_bytes());
            }
            (true, None) => opts.put(&[1, 1, 4, 2]),
            (false, None) => {}
        }
        if let Some(ws) = self.window_scale {
            opts.put(&[1, 3, 3, ws]);
        }
        if !self.sack.is_empty() {
            opts.put(&[1, 1, 5, 2 + 8 * self.sack.len() as u8]);
            for &(l, r) in self.sack {
                opts.put(&l.to_be_bytes());
                opts.put(&r.to_be_bytes());
            }
        }
        let c = checksum::finish(checksum::sum(acc, h));
        h[16..18].copy_from_slice(&c.to_be_bytes());
        Ok(hl)
    }
}

/// Appends option bytes; the caller sized the buffer from `header_len`.
struct OptWriter<'b> {
    buf: &'b mut [u8],
    at: usize,
}

impl OptWriter<'_> {
    fn put(&mut self, b: &[u8]) {
        if let Some(dst) = self.buf.get_mut(self.at..self.at + b.len()) {
            dst.copy_from_slice(b);
        }
        self.at += b.len();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        crate::test_hex(s)
    }

    fn tcp(t: Transport) -> TcpInfo {
        match t {
            Transport::Tcp(t) => t,
            other => panic!("not TCP: {other:?}"),
        }
    }

    #[test]
    fn syn_with_linux_options() {
        // A Linux SYN: MSS 1460, SACK-permitted, timestamps, NOP, WS 7.
        let h = hex("c350 0050 00000064 00000000 a002 faf0 0000 0000
                     020405b4 0402 080a 0001e240 00000000 01 030307");
        let (t, n) = parse(&h, 40);
        let t = tcp(t);
        assert_eq!(n, 40);
        assert_eq!((t.src_port, t.dst_port, t.seq, t.ack), (50000, 80, 100, 0));
        assert_eq!(t.flags, TcpFlags::SYN);
        assert_eq!((t.window, t.header_len, t.payload_len), (64240, 40, 0));
        assert_eq!(t.options.mss, Some(1460));
        assert_eq!(t.options.window_scale, Some(7));
        assert!(t.options.sack_permitted);
        assert_eq!(t.options.timestamp, Some((123456, 0)));
        assert!(t.options.sack().is_empty());
    }

    #[test]
    fn ack_with_sack_blocks_and_payload() {
        let h = hex("0050 c350 00001000 00002000 a010 01f5 0000 0000
                     0101 0512 00003000 00003100 00004000 00004200");
        let t = tcp(parse(&h, 40 + 1000).0);
        assert_eq!(t.flags, TcpFlags::ACK);
        assert_eq!(t.options.sack(), &[(0x3000, 0x3100), (0x4000, 0x4200)]);
        assert_eq!(t.payload_len, 1000);
    }

    #[test]
    fn ns_bit_and_all_flags() {
        let h = hex("0001 0002 00000000 00000000 51ff 0000 0000 0000");
        let t = tcp(parse(&h, 20).0);
        assert_eq!(t.flags.0, 0x1ff);
        assert!(t.flags.contains(TcpFlags::NS | TcpFlags::CWR | TcpFlags::FIN));
    }

    #[test]
    fn cut_options_keep_what_was_captured() {
        // 52-byte snaplen: MSS read, timestamp option cut after 2 bytes.
        let h = hex("c350 0050 00000064 00000000 a002 faf0 0000 0000 020405b4 0402 080a");
        let t = tcp(parse(&h, 40).0);
        assert_eq!(t.options.mss, Some(1460));
        assert!(t.options.sack_permitted);
        assert_eq!(t.options.timestamp, None);
        assert_eq!(t.header_len, 40);
    }

    #[test]
    fn malformed_options_stop_the_scan() {
        // Zero-length option: stop without looping.
        let h = hex("0001 0002 00000000 00000000 6002 0000 0000 0000 0200 0000");
        let t = tcp(parse(&h, 24).0);
        assert_eq!(t.options, TcpOptions::default());
        // SACK with a length that is not 2+8n is ignored.
        let h = hex("0001 0002 00000000 00000000 7010 0000 0000 0000 0505 0000 0000 0000");
        assert!(tcp(parse(&h, 28).0).options.sack().is_empty());
    }

    #[test]
    fn bad_headers() {
        let h = hex("0001 0002 00000000 00000000 4002 0000 0000 0000");
        assert_eq!(parse(&h, 20).0, Transport::Malformed(6), "data offset 16");
        let h = hex("0001 0002 00000000 00000000 6002 0000 0000 0000");
        assert_eq!(parse(&h, 20).0, Transport::Malformed(6), "offset past the IP payload");
        assert_eq!(parse(&h[..19], 40).0, Transport::Truncated(6));
        assert_eq!(parse(&h, 19).0, Transport::Malformed(6));
    }

    fn verify(seg: &[u8], src: IpAddr, dst: IpAddr) -> u16 {
        // Independent check: materialise the pseudo-header and sum it all.
        let mut p = Vec::new();
        match (src, dst) {
            (IpAddr::V4(s), IpAddr::V4(d)) => {
                p.extend(s.octets());
                p.extend(d.octets());
                p.extend([0, 6]);
                p.extend((seg.len() as u16).to_be_bytes());
            }
            (IpAddr::V6(s), IpAddr::V6(d)) => {
                p.extend(s.octets());
                p.extend(d.octets());
                p.extend((seg.len() as u32).to_be_bytes());
                p.extend([0, 0, 0, 6]);
            }
            _ => unreachable!(),
        }
        p.extend(seg);
        checksum::internet_checksum(&p)
    }

    #[test]
    fn emit_syn_layout_and_round_trip() {
        let r = TcpRepr {
            src_port: 40000,
            dst_port: 443,
            seq: 0xdead_beef,
            flags: TcpFlags::SYN,
            window: 65535,
            mss: Some(1460),
            window_scale: Some(7),
            sack_permitted: true,
            ..TcpRepr::default()
        };
        assert_eq!(r.header_len(), 32);
        let mut seg = [0u8; 32];
        let (s, d): (IpAddr, IpAddr) = ([192, 168, 1, 2].into(), [93, 184, 216, 34].into());
        assert_eq!(r.emit(&mut seg, s, d, 0), Ok(32));
        assert_eq!(&seg[20..], &hex("020405b4 01010402 01030307")[..]);
        assert_eq!(verify(&seg, s, d), 0);
        let t = tcp(parse(&seg, 32).0);
        assert_eq!((t.src_port, t.dst_port, t.seq, t.ack), (40000, 443, 0xdead_beef, 0));
        assert_eq!((t.flags, t.window, t.header_len), (TcpFlags::SYN, 65535, 32));
        assert_eq!((t.options.mss, t.options.window_scale, t.options.sack_permitted), (Some(1460), Some(7), true));
    }

    #[test]
    fn emit_linux_syn_and_ack_with_timestamps() {
        let (s, d): (IpAddr, IpAddr) = ([10, 1, 0, 1].into(), [10, 2, 0, 1].into());
        let syn = TcpRepr {
            src_port: 32768,
            dst_port: 80,
            flags: TcpFlags::SYN,
            window: 65535,
            mss: Some(1460),
            window_scale: Some(7),
            sack_permitted: true,
            timestamps: Some((0x0102_0304, 0)),
            ..TcpRepr::default()
        };
        assert_eq!(syn.header_len(), 40);
        let mut seg = [0u8; 40];
        assert_eq!(syn.emit(&mut seg, s, d, 0), Ok(40));
        // Linux's SYN: MSS, SACK-permitted + timestamps, NOP + window scale.
        assert_eq!(&seg[20..], &hex("020405b4 0402080a 01020304 00000000 01030307")[..]);
        assert_eq!(verify(&seg, s, d), 0);
        let t = tcp(parse(&seg, 40).0);
        assert_eq!(t.options.timestamp, Some((0x0102_0304, 0)));
        let blocks = [(10, 20), (30, 40), (50, 60)];
        let ack = TcpRepr { flags: TcpFlags::ACK, ack: 5, timestamps: Some((7, 6)), sack: &blocks, ..TcpRepr::default() };
        assert_eq!(ack.header_len(), 60);
        let mut seg = [0u8; 60];
        assert_eq!(ack.emit(&mut seg, s, d, 0), Ok(60));
        assert_eq!(&seg[20..32], &hex("0101080a 00000007 00000006")[..]);
        let t = tcp(parse(&seg, 60).0);
        assert_eq!((t.options.timestamp, t.options.sack()), (Some((7, 6)), &blocks[..]));
        assert_eq!(verify(&seg, s, d), 0);
    }

    #[test]
    fn emit_sack_with_zero_payload_checksum() {
        let blocks = [(1000, 2000), (3000, 4000), (5000, 6000), (7000, 8000)];
        let r = TcpRepr {
            src_port: 1,
            dst_port: 2,
            seq: 7,
            ack: 999,
            flags: TcpFlags::ACK | TcpFlags::NS,
            window: 1024,
            sack: &blocks,
            ..TcpRepr::default()
        };
        assert_eq!(r.header_len(), 20 + 4 + 32);
        let (s, d): (IpAddr, IpAddr) = ("2001:db8::1".parse().unwrap(), "2001:db8::2".parse().unwrap());
        // The payload is never written; the check below materialises it.
        let payload = 1448;
        let mut seg = vec![0u8; 56 + payload];
        assert_eq!(r.emit(&mut seg, s, d, payload as u32), Ok(56));
        assert_eq!(&seg[20..24], &[1, 1, 5, 34]);
        assert_eq!(verify(&seg, s, d), 0);
        let t = tcp(parse(&seg, seg.len() as u32).0);
        assert_eq!(t.options.sack(), &blocks);
        assert_eq!((t.flags, t.payload_len), (TcpFlags::ACK | TcpFlags::NS, 1448));
    }

    #[test]
    fn emit_errors() {
        let five = [(0, 1); 5];
        let r = TcpRepr { sack: &five, ..TcpRepr::default() };
        let (a, b) = ([1, 1, 1, 1], [2, 2, 2, 2]);
        assert_eq!(r.emit(&mut [0; 80], a, b, 0), Err(EmitError::TooManySackBlocks(5)));
        let four = [(0, 1); 4];
        let r = TcpRepr { sack: &four, mss: Some(1), window_scale: Some(1), sack_permitted: true, ..TcpRepr::default() };
        assert_eq!(r.emit(&mut [0; 80], a, b, 0), Err(EmitError::OptionsTooLong(48)));
        let r = TcpRepr { mss: Some(1), ..TcpRepr::default() };
        assert_eq!(r.emit(&mut [0; 23], a, b, 0), Err(EmitError::BufferTooSmall { need: 24, have: 23 }));
        assert_eq!(r.emit(&mut [0; 24], a, b, 65512), Err(EmitError::LengthOverflow));
        assert_eq!(r.emit(&mut [0; 24], a, b, 65511), Ok(24));
        assert_eq!(r.emit(&mut [0; 24], a, [0u8; 16], 0), Err(EmitError::MixedAddressFamilies));
    }
}
