//! Errors that stop a trace file from being read at all. Damaged records
//! are not errors: the reader skips and counts them (see [`crate::Stats`]).

use std::fmt;
use std::io;

/// A trace file that cannot be read, with where and why.
/// Displays as `web.pcap: offset 0: not a pcap or pcapng file (magic 0x3c68746d)`.
#[derive(Debug)]
pub struct TraceError {
    /// The path, or the display name given with the reader.
    pub file: String,
    /// Byte offset in the file where the problem is.
    pub offset: u64,
    pub kind: TraceErrorKind,
}

#[derive(Debug)]
pub enum TraceErrorKind {
    /// A zero-length file.
    Empty,
    /// Fewer than the 4 bytes of a magic number.
    TooShort(u64),
    /// The first 4 bytes (read big-endian) are no pcap or pcapng magic.
    BadMagic(u32),
    /// A file or section header cut off.
    TruncatedHeader {
        what: &'static str,
        expected: u64,
        found: u64,
    },
    UnsupportedVersion {
        what: &'static str,
        major: u16,
        minor: u16,
    },
    /// A pcapng section header whose byte-order magic is wrong.
    BadByteOrderMagic(u32),
    /// The first pcapng section header's length is impossible.
    BadSectionLength(u32),
    Io(io::Error),
}

impl TraceError {
    pub(crate) fn new(file: &str, offset: u64, kind: TraceErrorKind) -> TraceError {
        TraceError { file: file.to_string(), offset, kind }
    }
}

/// Names the usual culprits so the message says what to do.
fn magic_hint(m: u32) -> &'static str {
    match m {
        _ if m >> 16 == 0x1f8b => "; gzip-compressed: decompress it first",
        0xfd37_7a58 => "; xz-compressed: decompress it first",
        0x28b5_2ffd => "; zstd-compressed: decompress it first",
        _ if m >> 8 == 0x42_5a68 => "; bzip2-compressed: decompress it first",
        0xa1b2_cd34 | 0x34cd_b2a1 => "; modified (Kuznetzov) pcap is not supported",
        _ => "",
    }
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: offset {}: ", self.file, self.offset)?;
        match &self.kind {
            TraceErrorKind::Empty => write!(f, "empty file, expected a pcap or pcapng header"),
            TraceErrorKind::TooShort(n) => {
                write!(f, "file of {n} bytes is too short for a pcap or pcapng header")
            }
            TraceErrorKind::BadMagic(m) => {
                write!(f, "not a pcap or pcapng file (magic 0x{m:08x}{})", magic_hint(*m))
            }
            TraceErrorKind::TruncatedHeader { what, expected, found } => {
                write!(f, "truncated {what}: expected {expected} bytes, found {found}")
            }
            TraceErrorKind::UnsupportedVersion { what, major, minor } => {
                write!(f, "unsupported {what} version {major}.{minor}")
            }
            TraceErrorKind::BadByteOrderMagic(m) => {
                write!(f, "pcapng section header byte-order magic is 0x{m:08x}, expected 0x1a2b3c4d in either byte order")
            }
            TraceErrorKind::BadSectionLength(n) => {
                write!(f, "pcapng section header block length {n} is invalid (expected a multiple of 4, at least 28)")
            }
            TraceErrorKind::Io(e) => write!(f, "read error: {e}"),
        }
    }
}

impl std::error::Error for TraceError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            TraceErrorKind::Io(e) => Some(e),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_file_offset_and_expectation() {
        let e = TraceError::new("web.pcap", 0, TraceErrorKind::BadMagic(0x3c68_746d));
        assert_eq!(e.to_string(), "web.pcap: offset 0: not a pcap or pcapng file (magic 0x3c68746d)");
        let e = TraceError::new("t.xz", 0, TraceErrorKind::BadMagic(0xfd37_7a58));
        assert!(e.to_string().ends_with("(magic 0xfd377a58; xz-compressed: decompress it first)"), "{e}");
        let e = TraceError::new("a.pcap", 0, TraceErrorKind::TruncatedHeader { what: "pcap file header", expected: 24, found: 10 });
        assert_eq!(e.to_string(), "a.pcap: offset 0: truncated pcap file header: expected 24 bytes, found 10");
        let e = TraceError::new("b", 7, TraceErrorKind::Io(io::Error::other("gone")));
        assert!(std::error::Error::source(&e).is_some());
    }
}
