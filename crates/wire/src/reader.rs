//! [`TraceReader`]: one streaming reader for pcap and pcapng, chosen by the
//! file's magic number.

use crate::decode::{decode, DecodeError, PacketInfo};
use crate::error::{TraceError, TraceErrorKind};
use crate::field::{array, Endian};
use crate::input::Input;
use crate::linktype::LinkType;
use crate::pcap;
use crate::pcapng::{self, PcapNg};
use std::fs::File;
use std::io::Read;
use std::path::Path;

/// A caplen above this marks a damaged record (it is libpcap's largest
/// snaplen; no real capture stores more of one packet).
pub const MAX_CAPLEN: u32 = 256 * 1024;

/// One captured packet, borrowing the reader's buffer until the next read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record<'a> {
    /// Nanoseconds since the Unix epoch, UTC. pcapng timestamps that fall
    /// outside i64 (before 1677 or after 2262) saturate. Simple Packet Blocks
    /// carry none and get the previous record's. Not necessarily increasing.
    pub ts_ns: i64,
    /// Length on the wire.
    pub orig_len: u32,
    /// Bytes captured: `data.len()`.
    pub caplen: u32,
    pub linktype: LinkType,
    /// pcap: 0. pcapng: the interface's index counted across the whole file
    /// in order of appearance (so sections do not reuse numbers).
    pub interface: u32,
    /// File offset of the record header or block.
    pub offset: u64,
    pub data: &'a [u8],
}

impl Record<'_> {
    pub fn decode(&self) -> Result<PacketInfo, DecodeError> {
        decode(self.linktype, self.data, self.orig_len)
    }
}

/// What was read so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Records returned.
    pub records: u64,
    /// Damaged records or blocks passed over, reading going on after them:
    /// pcapng blocks whose lengths disagree or are impossible (followed by a
    /// resynchronising scan), blocks too short for their type's fields
    /// (an interface block's packets are then skipped too), packet blocks
    /// with an impossible caplen or an unknown interface.
    pub skipped: u64,
    /// Bytes of the skipped records and blocks, and of the damage the
    /// resynchronising scan passed over.
    pub skipped_bytes: u64,
    /// Bytes at the end of the input that could not be read as records: an
    /// incomplete last record, or everything after damage that could not be
    /// resynchronised (in pcap, a record with a caplen over [`MAX_CAPLEN`]).
    pub truncated_tail: u64,
    /// File offset of the first damage: the first skipped record or block,
    /// else the start of the truncated tail. None while there is none.
    pub damage_offset: Option<u64>,
    /// File offset where reading stopped, the start of the truncated tail;
    /// None without a tail.
    pub tail_offset: Option<u64>,
    /// Sum of `orig_len` over the records returned (bytes on the wire).
    pub bytes: u64,
}

impl Stats {
    /// Counts a damaged record or block of `len` bytes at `offset`, passed
    /// over with reading going on after it.
    pub(crate) fn skip(&mut self, offset: u64, len: u64) {
        self.skipped += 1;
        self.skipped_bytes += len;
        self.damage_offset.get_or_insert(offset);
    }

    /// Counts the `len` bytes from `offset` to the end of the input as the
    /// truncated tail (nothing when `len` is 0: the input ended cleanly).
    pub(crate) fn tail(&mut self, offset: u64, len: u64) {
        if len == 0 {
            return;
        }
        self.truncated_tail += len;
        self.tail_offset.get_or_insert(offset);
        self.damage_offset.get_or_insert(offset);
    }

    /// Bytes of the input that could not be read as records.
    pub fn unread_bytes(&self) -> u64 {
        self.skipped_bytes + self.truncated_tail
    }
}

/// The file format found, with the classic pcap header's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Pcap {
        nanosecond: bool,
        big_endian: bool,
        version: (u16, u16),
        snaplen: u32,
        linktype: LinkType,
    },
    /// Link types and resolutions are per interface, given on each record.
    PcapNg,
}

/// A record's place in the buffer and its fields.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Meta {
    pub ts_ns: i64,
    pub orig_len: u32,
    pub caplen: u32,
    pub linktype: LinkType,
    pub interface: u32,
    /// Buffer index of the first data byte.
    pub start: usize,
    pub offset: u64,
}

enum State {
    Pcap(pcap::Header),
    PcapNg(PcapNg),
    /// After the end of input or an error.
    Done,
}

/// Reads pcap and pcapng files record by record through one reused buffer.
///
/// ```no_run
/// let mut r = wire::TraceReader::open("trace.pcap")?;
/// while let Some(rec) = r.read_next()? {
///     if let Ok(p) = rec.decode() {
///         println!("{} {} -> {}", rec.ts_ns, p.ip.src, p.ip.dst);
///     }
/// }
/// println!("{:?}", r.stats());
/// # Ok::<(), wire::TraceError>(())
/// ```
pub struct TraceReader<R> {
    input: Input<R>,
    name: String,
    format: Format,
    state: State,
    stats: Stats,
}

impl TraceReader<File> {
    /// Opens a file; errors name the path.
    pub fn open(path: impl AsRef<Path>) -> Result<TraceReader<File>, TraceError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        match File::open(path) {
            Ok(f) => TraceReader::new(f, name),
            Err(e) => Err(TraceError { file: name, offset: 0, kind: TraceErrorKind::Io(e) }),
        }
    }
}

impl<R: Read> TraceReader<R> {
    /// Reads the file header. `name` is used in error messages.
    pub fn new(src: R, name: impl Into<String>) -> Result<TraceReader<R>, TraceError> {
        let name = name.into();
        let mut input = Input::new(src);
        let at0 = |kind| TraceError::new(&name, 0, kind);
        input.fill(pcap::HEADER_LEN).map_err(|e| at0(TraceErrorKind::Io(e)))?;
        let head = input.avail();
        let Some(magic) = array::<4>(head, 0).map(u32::from_be_bytes) else {
            return Err(at0(match head.len() {
                0 => TraceErrorKind::Empty,
                n => TraceErrorKind::TooShort(n as u64),
            }));
        };
        let (format, state) = match magic {
            pcap::MAGIC_US_LE | pcap::MAGIC_US_BE | pcap::MAGIC_NS_LE | pcap::MAGIC_NS_BE => {
                let Some(h) = head.first_chunk::<{ pcap::HEADER_LEN }>() else {
                    return Err(at0(TraceErrorKind::TruncatedHeader {
                        what: "pcap file header",
                        expected: pcap::HEADER_LEN as u64,
                        found: head.len() as u64,
                    }));
                };
                let h = pcap::parse_header(h).map_err(at0)?;
                input.consume(pcap::HEADER_LEN);
                let format = Format::Pcap {
                    nanosecond: h.nanosecond,
                    big_endian: h.endian == Endian::Big,
                    version: h.version,
                    snaplen: h.snaplen,
                    linktype: h.linktype,
                };
                (format, State::Pcap(h))
            }
            m if m.to_be_bytes() == pcapng::SHB => (Format::PcapNg, State::PcapNg(PcapNg::open(&mut input).map_err(at0)?)),
            m => return Err(at0(TraceErrorKind::BadMagic(m))),
        };
        Ok(TraceReader { input, name, format, state, stats: Stats::default() })
    }

    /// The next record, `Ok(None)` at the end. Damaged records are skipped
    /// and counted in [`TraceReader::stats`]; errors are read failures and
    /// pcapng sections of an unsupported version. After an error or the
    /// end, returns `Ok(None)`.
    #[inline]
    pub fn read_next(&mut self) -> Result<Option<Record<'_>>, TraceError> {
        let got = match &mut self.state {
            State::Pcap(h) => pcap::next(&mut self.input, h, &mut self.stats).map_err(|e| (None, TraceErrorKind::Io(e))),
            State::PcapNg(ng) => ng.next(&mut self.input, &mut self.stats),
            State::Done => Ok(None),
        };
        let meta = match got {
            Ok(Some(m)) => m,
            Ok(None) => {
                self.state = State::Done;
                return Ok(None);
            }
            Err((offset, kind)) => {
                self.state = State::Done;
                let offset = offset.unwrap_or(self.input.offset());
                return Err(TraceError::new(&self.name, offset, kind));
            }
        };
        self.stats.records += 1;
        self.stats.bytes += meta.orig_len as u64;
        Ok(Some(Record {
            ts_ns: meta.ts_ns,
            orig_len: meta.orig_len,
            caplen: meta.caplen,
            linktype: meta.linktype,
            interface: meta.interface,
            offset: meta.offset,
            data: self.input.slice(meta.start, meta.caplen as usize),
        }))
    }

    pub fn stats(&self) -> Stats {
        self.stats
    }

    pub fn format(&self) -> Format {
        self.format
    }

    /// The display name used in errors.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// File offset of the next unread byte.
    pub fn offset(&self) -> u64 {
        self.input.offset()
    }
}
