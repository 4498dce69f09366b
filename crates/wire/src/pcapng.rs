//! pcapng files: sections in either byte order, interfaces with their own
//! link type and timestamp resolution, and the three packet blocks (EPB,
//! SPB, obsolete PB). Other blocks (NRB, ISB, DSB, custom...) are skipped.

use crate::error::TraceErrorKind;
use crate::field::{array, Endian};
use crate::input::Input;
use crate::linktype::LinkType;
use crate::reader::{Meta, Stats, MAX_CAPLEN};
use std::io::{self, Read};

pub(crate) const SHB: [u8; 4] = [0x0a, 0x0d, 0x0d, 0x0a];
const IDB: u32 = 1;
const PB: u32 = 2;
const SPB: u32 = 3;
const NRB: u32 = 4;
const ISB: u32 = 5;
const EPB: u32 = 6;
const SYSTEMD: u32 = 9;
const DSB: u32 = 0x0a;
const CUSTOM: u32 = 0x0bad;
const CUSTOM_NOCOPY: u32 = 0x4000_0bad;
const SHB_TYPE: u32 = 0x0a0d_0d0a;

/// Larger blocks are taken as damage (Wireshark uses the same bound).
pub(crate) const MAX_BLOCK_LEN: u32 = 16 << 20;
/// SHB with no options: type, length, BOM, version, section length, length.
pub(crate) const MIN_SHB_LEN: u32 = 28;

/// The shortest block of a type this reader interprets (its fixed fields;
/// any other type: the 12 bytes of type and lengths). A block framed right
/// but shorter is damaged.
fn min_block_len(typ: u32) -> usize {
    match typ {
        SHB_TYPE => MIN_SHB_LEN as usize,
        // Link type, reserved, snaplen.
        IDB => 20,
        // Interface, timestamp, caplen, orig_len.
        EPB | PB => 32,
        // orig_len.
        SPB => 16,
        _ => 12,
    }
}

/// How raw timestamp units become nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scale {
    Mul(u64),
    /// Finer than 1 ns: the sub-nanosecond part is dropped.
    Div(u64),
    /// Units of 2^-n seconds.
    Shift(u32),
}

impl Scale {
    /// From if_tsresol: 10^-n seconds, or 2^-n if the top bit is set.
    fn from_tsresol(r: u8) -> Option<Scale> {
        let n = (r & 0x7f) as u32;
        match (r & 0x80 != 0, n) {
            (true, _) => Some(Scale::Shift(n)),
            (false, 0..=9) => Some(Scale::Mul(10u64.pow(9 - n))),
            (false, 10..=28) => Some(Scale::Div(10u64.pow(n - 9))),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Interface {
    linktype: LinkType,
    snaplen: u32,
    scale: Scale,
    /// if_tsoffset: seconds added to every timestamp.
    offset_s: i64,
    /// A damaged IDB still takes its index, so later ids stay right; its
    /// packets are skipped.
    valid: bool,
}

/// State across blocks: the current section and its interfaces.
pub(crate) struct PcapNg {
    endian: Endian,
    interfaces: Vec<Interface>,
    /// Global index of this section's interface 0: interfaces are numbered
    /// across the whole file in order of appearance.
    first_interface: u32,
    /// For SPBs, which carry no timestamp.
    last_ts: i64,
}

/// The byte order a section header's byte-order magic (at offset 8) gives.
fn byte_order(b: &[u8]) -> Result<Endian, u32> {
    let bom = array::<4>(b, 8).unwrap_or_default();
    match u32::from_le_bytes(bom) {
        0x1a2b_3c4d => Ok(Endian::Little),
        0x4d3c_2b1a => Ok(Endian::Big),
        _ => Err(u32::from_be_bytes(bom)),
    }
}

/// The section header's version, if this reader understands it: 1.0 is
/// current, 1.2 was written by some old tools and reads the same.
fn check_version(b: &[u8], e: Endian) -> Result<(), TraceErrorKind> {
    let major = e.u16_at(b, 12).unwrap_or(0);
    let minor = e.u16_at(b, 14).unwrap_or(0);
    if major == 1 {
        Ok(())
    } else {
        Err(TraceErrorKind::UnsupportedVersion { what: "pcapng", major, minor })
    }
}

impl PcapNg {
    /// Reads the section header block at the start of the file.
    pub(crate) fn open<R: Read>(inp: &mut Input<R>) -> Result<PcapNg, TraceErrorKind> {
        let truncated =
            |found: usize, expected: u64| TraceErrorKind::TruncatedHeader { what: "pcapng section header block", expected, found: found as u64 };
        inp.fill(12).map_err(TraceErrorKind::Io)?;
        let got = inp.avail().len();
        if got < 12 {
            return Err(truncated(got, MIN_SHB_LEN as u64));
        }
        let endian = byte_order(inp.avail()).map_err(TraceErrorKind::BadByteOrderMagic)?;
        let len = endian.u32_at(inp.avail(), 4).unwrap_or(0);
        if len < MIN_SHB_LEN || len % 4 != 0 || len > MAX_BLOCK_LEN {
            return Err(TraceErrorKind::BadSectionLength(len));
        }
        if !inp.fill(len as usize).map_err(TraceErrorKind::Io)? {
            return Err(truncated(inp.avail().len(), len as u64));
        }
        let b = inp.avail();
        check_version(b, endian)?;
        if endian.u32_at(b, len as usize - 4) != Some(len) {
            return Err(TraceErrorKind::BadSectionLength(len));
        }
        inp.consume(len as usize);
        Ok(PcapNg { endian, interfaces: Vec::new(), first_interface: 0, last_ts: 0 })
    }

    /// The next packet. Damaged blocks are skipped and counted; a new
    /// section of an unsupported version is an error (its blocks cannot be
    /// interpreted), reported with its file offset.
    pub(crate) fn next<R: Read>(&mut self, inp: &mut Input<R>, stats: &mut Stats) -> Result<Option<Meta>, (Option<u64>, TraceErrorKind)> {
        let io = |e| (None, TraceErrorKind::Io(e));
        loop {
            if !inp.fill(12).map_err(io)? {
                let at = inp.offset();
                stats.tail(at, inp.skip_rest().map_err(io)?);
                return Ok(None);
            }
            let Some((typ, len, endian)) = self.block_header(inp.avail()) else {
                self.resync(inp, stats).map_err(io)?;
                continue;
            };
            if !inp.fill(len).map_err(io)? || endian.u32_at(inp.avail(), len - 4) != Some(len as u32) {
                // Runs past the end of the input, or its two lengths differ.
                self.resync(inp, stats).map_err(io)?;
                continue;
            }
            let start = inp.pos();
            let offset = inp.offset();
            let b = inp.avail().get(..len).unwrap_or(&[]);
            if len < min_block_len(typ) {
                // Framed right but too short for its fields: an IDB still
                // takes its index (so later ids stay right), invalid.
                if typ == IDB {
                    self.interfaces.push(Interface { valid: false, ..self.interface(b) });
                }
                stats.skip(offset, len as u64);
                inp.consume(len);
                continue;
            }
            let meta = match typ {
                SHB_TYPE => {
                    check_version(b, endian).map_err(|k| (Some(offset), k))?;
                    self.first_interface = self.first_interface.saturating_add(self.interfaces.len() as u32);
                    self.interfaces.clear();
                    self.endian = endian;
                    None
                }
                IDB => {
                    self.interfaces.push(self.interface(b));
                    None
                }
                EPB | PB | SPB => {
                    let m = if typ == SPB { self.simple_packet(b, start, offset) } else { self.packet(typ, b, start, offset) };
                    if m.is_none() {
                        stats.skip(offset, len as u64);
                    }
                    m
                }
                _ => None,
            };
            inp.consume(len);
            if let Some(m) = meta {
                self.last_ts = m.ts_ns;
                return Ok(Some(m));
            }
        }
    }

    /// Type, total length and byte order of the block at the start of `b`
    /// (which holds at least 12 bytes), if the length is possible.
    #[inline]
    fn block_header(&self, b: &[u8]) -> Option<(u32, usize, Endian)> {
        let raw_type = array::<4>(b, 0)?;
        let endian = if raw_type == SHB { byte_order(b).ok()? } else { self.endian };
        let len = endian.u32_at(b, 4)?;
        let min = if raw_type == SHB { MIN_SHB_LEN } else { 12 };
        if len < min || len % 4 != 0 || len > MAX_BLOCK_LEN {
            return None;
        }
        Some((endian.u32(raw_type), len as usize, endian))
    }

    /// After a damaged block at the current position: steps forward 4 bytes
    /// at a time to the next place where a known block type starts with a
    /// possible length that its trailing copy confirms. If there is none, the
    /// rest of the input is the truncated tail.
    fn resync<R: Read>(&self, inp: &mut Input<R>, stats: &mut Stats) -> io::Result<()> {
        let from = inp.offset();
        loop {
            inp.consume(4);
            if !inp.fill(12)? {
                let passed = inp.offset() - from;
                stats.tail(from, passed + inp.skip_rest()?);
                return Ok(());
            }
            let Some((typ, len, endian)) = self.block_header(inp.avail()) else { continue };
            if !matches!(typ, SHB_TYPE | IDB | PB | SPB | NRB | ISB | EPB | SYSTEMD | DSB | CUSTOM | CUSTOM_NOCOPY) || len < min_block_len(typ) {
                continue;
            }
            if inp.fill(len)? && endian.u32_at(inp.avail(), len - 4) == Some(len as u32) {
                stats.skip(from, inp.offset() - from);
                return Ok(());
            }
        }
    }

    fn interface(&self, b: &[u8]) -> Interface {
        let e = self.endian;
        let mut iface = Interface {
            linktype: LinkType(e.u16_at(b, 8).unwrap_or(0)),
            snaplen: e.u32_at(b, 12).unwrap_or(0),
            scale: Scale::Mul(1000),
            offset_s: 0,
            valid: b.len() >= 20,
        };
        let opts = b.get(16..b.len().saturating_sub(4)).unwrap_or(&[]);
        let mut i = 0;
        while let (Some(code), Some(olen)) = (e.u16_at(opts, i), e.u16_at(opts, i + 2)) {
            let olen = olen as usize;
            let Some(v) = opts.get(i + 4..i + 4 + olen) else { break };
            match (code, olen) {
                (0, _) => break,
                (9, 1) => match Scale::from_tsresol(v[0]) {
                    Some(s) => iface.scale = s,
                    None => iface.valid = false,
                },
                (14, 8) => iface.offset_s = e.u64(array(v, 0).unwrap_or_default()) as i64,
                _ => {}
            }
            i += 4 + olen.next_multiple_of(4);
        }
        iface
    }

    /// EPB (32-bit interface id) or obsolete PB (16-bit id, then drops).
    fn packet(&self, typ: u32, b: &[u8], start: usize, offset: u64) -> Option<Meta> {
        let e = self.endian;
        let id = if typ == EPB { e.u32_at(b, 8)? } else { e.u16_at(b, 8)? as u32 };
        let raw_ts = (e.u32_at(b, 12)? as u64) << 32 | e.u32_at(b, 16)? as u64;
        let caplen = e.u32_at(b, 20)?;
        let orig_len = e.u32_at(b, 24)?;
        if caplen > MAX_CAPLEN || 28 + caplen as usize + 4 > b.len() {
            return None;
        }
        let iface = self.interfaces.get(id as usize).filter(|i| i.valid)?;
        Some(Meta {
            ts_ns: iface.ts_ns(raw_ts),
            orig_len,
            caplen,
            linktype: iface.linktype,
            interface: self.first_interface.saturating_add(id),
            start: start + 28,
            offset,
        })
    }

    /// SPB: interface 0, no timestamp (the previous record's is used), and
    /// the captured length implied by the block length and snaplen.
    fn simple_packet(&self, b: &[u8], start: usize, offset: u64) -> Option<Meta> {
        let iface = self.interfaces.first().filter(|i| i.valid)?;
        let orig_len = self.endian.u32_at(b, 8)?;
        let room = b.len().checked_sub(16)? as u32;
        let snap = if iface.snaplen == 0 { u32::MAX } else { iface.snaplen };
        let caplen = orig_len.min(room).min(snap);
        if caplen > MAX_CAPLEN {
            return None;
        }
        Some(Meta { ts_ns: self.last_ts, orig_len, caplen, linktype: iface.linktype, interface: self.first_interface, start: start + 12, offset })
    }
}

impl Interface {
    /// Nanoseconds since the epoch, saturating at i64's range (years
    /// 1677..2262) for nonsense values rather than wrapping.
    #[inline]
    fn ts_ns(&self, raw: u64) -> i64 {
        let ns = match self.scale {
            Scale::Mul(m) => raw as i128 * m as i128,
            Scale::Div(d) => (raw / d) as i128,
            Scale::Shift(s) => ((raw as u128 * 1_000_000_000) >> s) as i128,
        };
        let ns = ns + self.offset_s as i128 * 1_000_000_000;
        ns.clamp(i64::MIN as i128, i64::MAX as i128) as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamp_resolutions() {
        let iface = |r: u8, off: i64| Interface {
            linktype: LinkType::ETHERNET,
            snaplen: 0,
            scale: Scale::from_tsresol(r).unwrap(),
            offset_s: off,
            valid: true,
        };
        assert_eq!(iface(6, 0).ts_ns(1_234_567), 1_234_567_000);
        assert_eq!(iface(9, 0).ts_ns(42), 42);
        assert_eq!(iface(0, 0).ts_ns(3), 3_000_000_000);
        assert_eq!(iface(12, 0).ts_ns(5_000_999), 5_000);
        assert_eq!(iface(0x80 | 10, 0).ts_ns(1024 * 3), 3_000_000_000);
        assert_eq!(iface(0x80 | 20, 0).ts_ns(1 << 19), 500_000_000);
        assert_eq!(iface(6, -10).ts_ns(1_000_000), -9_000_000_000);
        assert_eq!(iface(0, 0).ts_ns(u64::MAX), i64::MAX);
        assert_eq!(Scale::from_tsresol(29), None);
        assert_eq!(Scale::from_tsresol(28), Some(Scale::Div(10u64.pow(19))));
    }
}
