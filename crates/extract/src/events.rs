//! Event lists: one packet a line, `time` or `time size` (seconds since
//! the trace's start; IP bytes), plain text or compressed with xz, gzip or
//! bzip2, as the
//! classic ITA traces come (Bellcore's `.TL`, the arrival-time lists of
//! shared/traces). The lines are those `undertow energy` reads
//! (python/undertow/analysis/series.py): whitespace-separated decimal
//! numbers, the same number of columns on every line, `#` comments and
//! blank lines ignored.
//!
//! The file is read as a stream, compressed or not, so its size is bounded only by
//! the events it may hold (`max_events`) and the length of a line.

use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::path::Path;

/// What a line may hold, for messages.
pub const EVENT_LINES: &str = "one event a line: 'time' or 'time size' (seconds since the trace's start, IP bytes; \
     decimal numbers, the same columns on every line), '#' comments and blank lines ignored";

/// The longest line read: an event list's are a few dozen bytes, and
/// anything else named by mistake must end in a message, not in memory.
const MAX_LINE: usize = 4096;

const XZ_MAGIC: [u8; 6] = [0xfd, b'7', b'z', b'X', b'Z', 0];

/// The events of a list, in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventList {
    /// Nanoseconds since the trace's start (decimal seconds are read exactly
    /// to the nanosecond; finer digits are truncated).
    pub times_ns: Vec<u64>,
    /// IP bytes per event, if the list has a second column.
    pub sizes: Option<Vec<u32>>,
}

/// Reads the event list at `path` (compressed if it starts with xz's,
/// gzip's or bzip2's magic). Errors are one line naming the file, and the
/// line where one is at fault.
pub fn read_events(path: &Path, max_events: usize) -> Result<EventList, String> {
    let name = path.display().to_string();
    let mut f = File::open(path).map_err(|e| format!("{name}: cannot open: {e}"))?;
    let mut head = [0u8; 6];
    let n = read_head(&mut f, &mut head).map_err(|e| format!("{name}: cannot read: {e}"))?;
    let mut sink = Lines { name: name.clone(), max_events, ..Lines::default() };
    let head = &head[..n];
    let input = BufReader::new(head.chain(f));
    let res = match compression(head) {
        Some(Compression::Xz) => lzma_rs::xz_decompress(&mut { input }, &mut sink).map_err(|e| match e {
            lzma_rs::error::Error::IoError(e) => e.to_string(),
            e => format!("xz data is damaged ({e})"),
        }),
        Some(Compression::Gzip) => decompress(flate2::bufread::MultiGzDecoder::new(input), &mut sink, "gzip"),
        Some(Compression::Bzip2) => decompress(bzip2::bufread::MultiBzDecoder::new(input), &mut sink, "bzip2"),
        Some(Compression::Zstd) => {
            return Err(format!("{name}: zstd-compressed: decompress it first (event lists are read plain or compressed with xz, gzip or bzip2)"))
        }
        None => io::copy(&mut { input }, &mut sink).map(|_| ()).map_err(|e| e.to_string()),
    };
    if let Some(e) = sink.err.take() {
        return Err(e);
    }
    res.map_err(|e| format!("{name}: cannot read: {e}"))?;
    sink.finish()
}

/// Copies what `input` decompresses into `sink`; an error of the data (not
/// of the sink, which keeps its own) names the format.
fn decompress(mut input: impl Read, sink: &mut Lines, format: &str) -> Result<(), String> {
    io::copy(&mut input, sink).map(|_| ()).map_err(|e| match e.kind() {
        io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData | io::ErrorKind::UnexpectedEof => format!("{format} data is damaged ({e})"),
        _ => e.to_string(),
    })
}

fn read_head(f: &mut File, head: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

enum Compression {
    Xz,
    Gzip,
    Bzip2,
    Zstd,
}

/// The compression a file's first bytes announce.
fn compression(head: &[u8]) -> Option<Compression> {
    match head {
        h if h == XZ_MAGIC => Some(Compression::Xz),
        [0x1f, 0x8b, ..] => Some(Compression::Gzip),
        [b'B', b'Z', b'h', ..] => Some(Compression::Bzip2),
        [0x28, 0xb5, 0x2f, 0xfd, ..] => Some(Compression::Zstd),
        _ => None,
    }
}

/// A writer that parses the lines written into it.
#[derive(Default)]
struct Lines {
    name: String,
    max_events: usize,
    /// The line being assembled.
    partial: Vec<u8>,
    line: u64,
    columns: Option<(usize, u64)>,
    list: EventList,
    /// The first problem, said in full (the writer's error only stops the copy).
    err: Option<String>,
}

impl Write for Lines {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.err.is_some() {
            return Err(io::Error::other("stopped"));
        }
        let mut rest = buf;
        while let Some(i) = rest.iter().position(|&b| b == b'\n') {
            self.partial.extend_from_slice(&rest[..i]);
            rest = &rest[i + 1..];
            self.take_line()?;
        }
        self.partial.extend_from_slice(rest);
        if self.partial.len() > MAX_LINE {
            return self.fail(format!("line {} is longer than {MAX_LINE} bytes", self.line + 1));
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Lines {
    fn fail<T>(&mut self, what: String) -> io::Result<T> {
        self.err = Some(format!("{}: {what}; expected {EVENT_LINES}", self.name));
        Err(io::Error::other("stopped"))
    }

    fn take_line(&mut self) -> io::Result<()> {
        self.line += 1;
        let line = std::mem::take(&mut self.partial);
        let text = line.split(|&b| b == b'#').next().unwrap_or(&[]);
        let Ok(text) = std::str::from_utf8(text) else {
            return self.fail(format!("line {} is not text", self.line));
        };
        let tokens: Vec<&str> = text.split_ascii_whitespace().collect();
        if tokens.is_empty() {
            return Ok(());
        }
        match self.columns {
            None if tokens.len() > 2 => return self.fail(format!("line {} has {} columns", self.line, tokens.len())),
            None => {
                self.columns = Some((tokens.len(), self.line));
                if tokens.len() == 2 {
                    self.list.sizes = Some(Vec::new());
                }
            }
            Some((n, first)) if n != tokens.len() => {
                return self.fail(format!("line {} has {} columns where line {first} has {n}", self.line, tokens.len()))
            }
            Some(_) => {}
        }
        if self.list.times_ns.len() >= self.max_events {
            return self.fail(format!("more than {} events, the most a list may hold here", self.max_events));
        }
        let Some(t) = seconds_ns(tokens[0]) else {
            return self.fail(format!("line {}: the time is not a number of seconds from 0 to 10^10", self.line));
        };
        self.list.times_ns.push(t);
        if let (Some(sizes), Some(s)) = (self.list.sizes.as_mut(), tokens.get(1)) {
            match s.parse::<f64>() {
                Ok(v) if v.fract() == 0.0 && (0.0..=65535.0).contains(&v) => sizes.push(v as u32),
                _ => return self.fail(format!("line {}: the size is not a whole number of bytes from 0 to 65535", self.line)),
            }
        }
        Ok(())
    }

    fn finish(mut self) -> Result<EventList, String> {
        if !self.partial.is_empty() {
            self.take_line().map_err(|_| self.err.take().unwrap_or_default())?;
        }
        if self.list.times_ns.is_empty() {
            return Err(format!("{}: no events; expected {EVENT_LINES}", self.name));
        }
        Ok(self.list)
    }
}

/// Seconds as written ("0.001340", "12", "1.5e-3") to nanoseconds: plain
/// decimals exactly (digits past the ninth truncated), others through a
/// float. None if negative, not finite, or beyond 10^10 s.
fn seconds_ns(s: &str) -> Option<u64> {
    const MAX_S: u64 = 10_000_000_000;
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let digits = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
    if digits(int) && digits(frac) && !(int.is_empty() && frac.is_empty()) {
        let whole: u64 = if int.is_empty() { 0 } else { int.parse().ok()? };
        if whole > MAX_S {
            return None;
        }
        let ns = frac.bytes().chain(std::iter::repeat(b'0')).take(9).fold(0u64, |a, b| a * 10 + (b - b'0') as u64);
        return Some(whole * 1_000_000_000 + ns);
    }
    let v: f64 = s.parse().ok()?;
    (v.is_finite() && (0.0..=MAX_S as f64).contains(&v)).then(|| (v * 1e9).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!("undertow-events-{}-{name}", std::process::id()));
        std::fs::write(&p, bytes).unwrap();
        p
    }

    #[test]
    fn seconds_are_read_exactly_to_the_nanosecond() {
        assert_eq!(seconds_ns("0.001340"), Some(1_340_000));
        assert_eq!(seconds_ns("3142.821736"), Some(3_142_821_736_000));
        assert_eq!(seconds_ns("12"), Some(12_000_000_000));
        assert_eq!(seconds_ns(".5"), Some(500_000_000));
        assert_eq!(seconds_ns("1.0000000019"), Some(1_000_000_001));
        assert_eq!(seconds_ns("1.5e-3"), Some(1_500_000));
        for bad in ["-1", "x", "nan", "inf", ".", "1e11", "1.2.3"] {
            assert_eq!(seconds_ns(bad), None, "{bad}");
        }
    }

    #[test]
    fn two_column_lists_with_comments_read_in_file_order() {
        let p = write("two.txt", b"# Bellcore\n0.5 1090\n\n  0.25   64  # out of order is kept\n1 1518");
        let l = read_events(&p, 10).unwrap();
        assert_eq!(l.times_ns, vec![500_000_000, 250_000_000, 1_000_000_000]);
        assert_eq!(l.sizes, Some(vec![1090, 64, 1518]));
        std::fs::remove_file(p).unwrap();
    }

    #[test]
    fn an_xz_list_reads_as_its_plain_text() {
        let text = b"0.001340\n0.001508\n0.004176\n";
        let mut xz = Vec::new();
        lzma_rs::xz_compress(&mut &text[..], &mut xz).unwrap();
        let p = write("one.xz", &xz);
        let l = read_events(&p, 10).unwrap();
        assert_eq!(l.times_ns, vec![1_340_000, 1_508_000, 4_176_000]);
        assert_eq!(l.sizes, None);
        // Damaged xz data is said to be.
        let p2 = write("cut.xz", &xz[..xz.len() - 8]);
        let e = read_events(&p2, 10).unwrap_err();
        assert!(e.starts_with(&p2.display().to_string()) && e.contains("xz"), "{e}");
        for p in [p, p2] {
            std::fs::remove_file(p).unwrap();
        }
    }

    #[test]
    fn gzip_and_bzip2_lists_read_as_their_plain_text_and_damage_is_said() {
        let text = b"0.001340 40\n0.001508 1500\n";
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(text).unwrap();
        let gz = gz.finish().unwrap();
        let mut bz = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
        bz.write_all(text).unwrap();
        let bz = bz.finish().unwrap();
        for (name, data) in [("one.gz", gz), ("one.bz2", bz)] {
            let p = write(name, &data);
            let l = read_events(&p, 10).unwrap();
            assert_eq!((l.times_ns, l.sizes), (vec![1_340_000, 1_508_000], Some(vec![40, 1500])), "{name}");
            let cut = write(&format!("cut-{name}"), &data[..data.len() / 2]);
            let e = read_events(&cut, 10).unwrap_err();
            let format = if name.ends_with("gz") { "gzip" } else { "bzip2" };
            assert!(e.starts_with(&cut.display().to_string()) && e.contains(format) && !e.contains('\n'), "{e}");
            for p in [p, cut] {
                std::fs::remove_file(p).unwrap();
            }
        }
    }

    #[test]
    fn bad_lists_are_refused_naming_the_file_and_line() {
        let cases: [(&[u8], &str); 7] = [
            (b"0.1 100\n0.2\n", "line 2 has 1 columns where line 1 has 2"),
            (b"0.1 100 7\n", "line 1 has 3 columns"),
            (b"0.1\n-0.2\n", "line 2: the time is not"),
            (b"0.1 1.5\n", "line 1: the size is not a whole number"),
            (b"0.1 70000\n", "line 1: the size is not a whole number"),
            (b"# nothing\n\n", "no events"),
            (b"\x28\xb5\x2f\xfd\x00", "zstd-compressed: decompress it first"),
        ];
        for (i, (text, want)) in cases.iter().enumerate() {
            let p = write(&format!("bad{i}"), text);
            let e = read_events(&p, 10).unwrap_err();
            assert!(e.starts_with(&p.display().to_string()) && e.contains(want), "{e}");
            std::fs::remove_file(p).unwrap();
        }
        let p = write("many", b"1\n2\n3\n");
        assert!(read_events(&p, 2).unwrap_err().contains("more than 2 events"));
        std::fs::remove_file(p).unwrap();
        // A device that never ends stops at the first over-long line.
        assert!(read_events(Path::new("/dev/zero"), 10).unwrap_err().contains("longer than 4096 bytes"));
    }
}
