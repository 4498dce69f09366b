//! Reading a whole input file with a bound on its size, so that a path to
//! a device or a huge file by mistake (`/dev/zero`, a capture named as a
//! scenario) ends in a message, not in memory exhaustion.

use std::io::Read;
use std::path::Path;

/// Why a file could not be read as text.
#[derive(Debug)]
pub enum ReadError {
    NotFound,
    /// A directory: a file was expected.
    Directory,
    /// More than the limit (in bytes).
    TooLarge(u64),
    /// Not UTF-8 text.
    NotText,
    Io(std::io::Error),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::NotFound => write!(f, "no such file"),
            ReadError::Directory => write!(f, "is a directory, not a file"),
            ReadError::TooLarge(limit) => write!(f, "larger than {}, the most this file may hold", crate::parse::format_size_binary(*limit)),
            ReadError::NotText => write!(f, "not a text file (not UTF-8)"),
            ReadError::Io(e) => write!(f, "cannot read: {e}"),
        }
    }
}

/// The file at `path` as text, if it holds at most `limit` bytes.
pub fn read_text(path: &Path, limit: u64) -> Result<String, ReadError> {
    let file = std::fs::File::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => ReadError::NotFound,
        _ => ReadError::Io(e),
    })?;
    if file.metadata().map(|m| m.is_dir()).unwrap_or(false) {
        return Err(ReadError::Directory);
    }
    let mut bytes = Vec::new();
    // One byte past the limit tells a file of exactly `limit` from a longer one.
    file.take(limit + 1).read_to_end(&mut bytes).map_err(|e| match e.raw_os_error() {
        Some(21) => ReadError::Directory, // EISDIR
        _ => ReadError::Io(e),
    })?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge(limit));
    }
    String::from_utf8(bytes).map_err(|_| ReadError::NotText)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_that_never_ends_is_refused_at_the_limit() {
        match read_text(Path::new("/dev/zero"), 1 << 20) {
            Err(ReadError::TooLarge(l)) => assert_eq!(l, 1 << 20),
            other => panic!("{other:?}"),
        }
        assert!(matches!(read_text(Path::new("/nonexistent/x"), 10), Err(ReadError::NotFound)));
        assert!(matches!(read_text(Path::new("/"), 10), Err(ReadError::Directory)));
        assert_eq!(ReadError::TooLarge(16 << 20).to_string(), "larger than 16MiB, the most this file may hold");
    }

    #[test]
    fn a_file_at_the_limit_is_read() {
        let p = std::env::temp_dir().join(format!("undertow-read-{}", std::process::id()));
        std::fs::write(&p, "x".repeat(100)).unwrap();
        assert_eq!(read_text(&p, 100).unwrap().len(), 100);
        assert!(matches!(read_text(&p, 99), Err(ReadError::TooLarge(99))));
        std::fs::write(&p, [0xff, 0xfe]).unwrap();
        assert!(matches!(read_text(&p, 99), Err(ReadError::NotText)));
        std::fs::remove_file(&p).unwrap();
    }
}
