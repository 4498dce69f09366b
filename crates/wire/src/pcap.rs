//! Classic libpcap files: reading (microsecond and nanosecond magic, either
//! byte order) and writing (nanosecond magic, for the simulator's output).

use crate::error::TraceErrorKind;
use crate::field::{array, Endian};
use crate::input::Input;
use crate::linktype::LinkType;
use crate::reader::{Meta, Stats, MAX_CAPLEN};
use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::Path;

pub(crate) const HEADER_LEN: usize = 24;
const RECORD_HEADER_LEN: usize = 16;

/// Magic numbers as the first four bytes read big-endian.
pub(crate) const MAGIC_US_LE: u32 = 0xd4c3_b2a1;
pub(crate) const MAGIC_US_BE: u32 = 0xa1b2_c3d4;
pub(crate) const MAGIC_NS_LE: u32 = 0x4d3c_b2a1;
pub(crate) const MAGIC_NS_BE: u32 = 0xa1b2_3c4d;

/// What the 24-byte file header says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    pub endian: Endian,
    pub nanosecond: bool,
    pub version: (u16, u16),
    pub snaplen: u32,
    pub linktype: LinkType,
}

/// Parses the file header; the magic was already recognised.
pub(crate) fn parse_header(h: &[u8; HEADER_LEN]) -> Result<Header, TraceErrorKind> {
    let magic = u32::from_be_bytes([h[0], h[1], h[2], h[3]]);
    let (endian, nanosecond) = match magic {
        MAGIC_US_LE => (Endian::Little, false),
        MAGIC_US_BE => (Endian::Big, false),
        MAGIC_NS_LE => (Endian::Little, true),
        MAGIC_NS_BE => (Endian::Big, true),
        m => return Err(TraceErrorKind::BadMagic(m)),
    };
    let major = endian.u16([h[4], h[5]]);
    let minor = endian.u16([h[6], h[7]]);
    // Every pcap since 1998 is 2.4; libpcap also reads other 2.x minors.
    if major != 2 {
        return Err(TraceErrorKind::UnsupportedVersion { what: "pcap", major, minor });
    }
    Ok(Header {
        endian,
        nanosecond,
        version: (major, minor),
        snaplen: endian.u32([h[16], h[17], h[18], h[19]]),
        linktype: LinkType::from_pcap_field(endian.u32([h[20], h[21], h[22], h[23]])),
    })
}

/// Reads the next record header and makes its data available.
///
/// A caplen above [`MAX_CAPLEN`] means the file is damaged, and a pcap
/// record header has no marker to search for, so nothing after it can be
/// trusted: the rest of the input, from the damaged record's header on, is
/// counted as `truncated_tail` and reading stops. A caplen above the file's
/// snaplen but within the limit is read as is (libpcap does the same; some
/// writers set snaplen low).
#[inline]
pub(crate) fn next<R: Read>(inp: &mut Input<R>, h: &Header, stats: &mut Stats) -> io::Result<Option<Meta>> {
    if !inp.fill(RECORD_HEADER_LEN)? {
        return stop(inp, stats);
    }
    let Some(r) = array::<RECORD_HEADER_LEN>(inp.avail(), 0) else { return Ok(None) };
    let e = h.endian;
    let caplen = e.u32([r[8], r[9], r[10], r[11]]);
    if caplen > MAX_CAPLEN {
        return stop(inp, stats);
    }
    let len = RECORD_HEADER_LEN + caplen as usize;
    if !inp.fill(len)? {
        return stop(inp, stats);
    }
    let secs = e.u32([r[0], r[1], r[2], r[3]]) as i64;
    let frac = e.u32([r[4], r[5], r[6], r[7]]) as i64;
    let meta = Meta {
        ts_ns: secs * 1_000_000_000 + if h.nanosecond { frac } else { frac * 1000 },
        orig_len: e.u32([r[12], r[13], r[14], r[15]]),
        caplen,
        linktype: h.linktype,
        interface: 0,
        start: inp.pos() + RECORD_HEADER_LEN,
        offset: inp.offset(),
    };
    inp.consume(len);
    Ok(Some(meta))
}

/// Ends reading at the current position: the rest of the input is the
/// truncated tail.
#[cold]
fn stop<R: Read>(inp: &mut Input<R>, stats: &mut Stats) -> io::Result<Option<Meta>> {
    let at = inp.offset();
    stats.tail(at, inp.skip_rest()?);
    Ok(None)
}

/// Writes a classic pcap file with nanosecond timestamps (magic a1b23c4d,
/// version 2.4, in little-endian order), which tcpdump, tshark and Wireshark
/// read.
pub struct PcapWriter<W: Write> {
    w: W,
    snaplen: u32,
}

impl<W: Write> PcapWriter<W> {
    /// Writes the file header. A `snaplen` of 0 means no limit (stored as
    /// 262144, the largest caplen readers accept).
    pub fn new(mut w: W, linktype: LinkType, snaplen: u32) -> io::Result<Self> {
        let snaplen = if snaplen == 0 { MAX_CAPLEN } else { snaplen };
        let mut h = [0u8; HEADER_LEN];
        h[0..4].copy_from_slice(&0xa1b2_3c4du32.to_le_bytes());
        h[4..6].copy_from_slice(&2u16.to_le_bytes());
        h[6..8].copy_from_slice(&4u16.to_le_bytes());
        // thiszone and sigfigs stay 0.
        h[16..20].copy_from_slice(&snaplen.to_le_bytes());
        h[20..24].copy_from_slice(&(linktype.0 as u32).to_le_bytes());
        w.write_all(&h)?;
        Ok(PcapWriter { w, snaplen })
    }

    /// Writes one record, keeping at most `snaplen` bytes of `data`.
    /// `orig_len` is the length on the wire; it is raised to the captured
    /// length if smaller, so the file stays valid. Timestamps past 2106
    /// (beyond the 32-bit seconds field) are an error.
    pub fn write_packet(&mut self, ts_ns: u64, orig_len: u32, data: &[u8]) -> io::Result<()> {
        let secs = u32::try_from(ts_ns / 1_000_000_000)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "timestamp beyond pcap's 32-bit seconds"))?;
        let caplen = data.len().min(self.snaplen as usize);
        let mut r = [0u8; RECORD_HEADER_LEN];
        r[0..4].copy_from_slice(&secs.to_le_bytes());
        r[4..8].copy_from_slice(&((ts_ns % 1_000_000_000) as u32).to_le_bytes());
        r[8..12].copy_from_slice(&(caplen as u32).to_le_bytes());
        r[12..16].copy_from_slice(&orig_len.max(caplen as u32).to_le_bytes());
        self.w.write_all(&r)?;
        self.w.write_all(data.get(..caplen).unwrap_or(data))
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }

    pub fn get_mut(&mut self) -> &mut W {
        &mut self.w
    }

    /// Flushes and returns the writer.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.w.flush()?;
        Ok(self.w)
    }
}

impl PcapWriter<BufWriter<File>> {
    /// Creates (or truncates) `path` and writes the file header.
    pub fn create(path: impl AsRef<Path>, linktype: LinkType, snaplen: u32) -> io::Result<Self> {
        PcapWriter::new(BufWriter::with_capacity(1 << 16, File::create(path)?), linktype, snaplen)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_variants() {
        let le = crate::test_hex("d4c3b2a1 0200 0400 00000000 00000000 ffff0000 01000000");
        let h = parse_header(le.first_chunk().unwrap()).unwrap();
        assert_eq!(h, Header { endian: Endian::Little, nanosecond: false, version: (2, 4), snaplen: 65535, linktype: LinkType::ETHERNET });
        let be = crate::test_hex("a1b23c4d 0002 0004 00000000 00000000 00000040 00000065");
        let h = parse_header(be.first_chunk().unwrap()).unwrap();
        assert_eq!((h.endian, h.nanosecond, h.snaplen, h.linktype), (Endian::Big, true, 64, LinkType::RAW));
        let v3 = crate::test_hex("a1b2c3d4 0003 0000 00000000 00000000 00000040 00000065");
        assert!(matches!(parse_header(v3.first_chunk().unwrap()), Err(TraceErrorKind::UnsupportedVersion { major: 3, minor: 0, .. })));
    }

    #[test]
    fn writer_layout() {
        let mut w = PcapWriter::new(Vec::new(), LinkType::RAW, 4).unwrap();
        w.write_packet(1_500_000_123, 9, &[1, 2, 3, 4, 5, 6]).unwrap();
        w.write_packet(0, 1, &[7, 8]).unwrap();
        let out = w.into_inner().unwrap();
        let want = crate::test_hex(
            "4d3cb2a1 0200 0400 00000000 00000000 04000000 65000000
             01000000 7b65cd1d 04000000 09000000 01020304
             00000000 00000000 02000000 02000000 0708",
        );
        assert_eq!(out, want);
        let mut w = PcapWriter::new(Vec::new(), LinkType::RAW, 0).unwrap();
        assert!(w.write_packet(u64::MAX, 1, &[]).is_err());
        assert_eq!(&w.get_mut()[16..20], &MAX_CAPLEN.to_le_bytes());
    }
}
