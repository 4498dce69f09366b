//! One reusable read buffer over any `Read`. Records are parsed in place and
//! handed out as slices of it, so reading allocates nothing per record.

use std::io::{self, Read};

/// Big enough that read syscalls are rare (one per ~1000 records), small
/// enough to stay in cache and to allocate cheaply per reader.
const INITIAL_BUFFER: usize = 1 << 17;

pub(crate) struct Input<R> {
    src: R,
    buf: Vec<u8>,
    /// First unread byte.
    pos: usize,
    /// End of the bytes read into `buf`.
    end: usize,
    /// File offset of `buf[0]`.
    base: u64,
    eof: bool,
}

impl<R: Read> Input<R> {
    pub(crate) fn new(src: R) -> Self {
        Input { src, buf: vec![0; INITIAL_BUFFER], pos: 0, end: 0, base: 0, eof: false }
    }

    /// The unread bytes in the buffer.
    #[inline]
    pub(crate) fn avail(&self) -> &[u8] {
        self.buf.get(self.pos..self.end).unwrap_or(&[])
    }

    /// `len` bytes at buffer index `start` (a [`Input::pos`] taken earlier
    /// and not yet overwritten by a [`Input::fill`]).
    #[inline]
    pub(crate) fn slice(&self, start: usize, len: usize) -> &[u8] {
        self.buf.get(start..start.saturating_add(len)).unwrap_or(&[])
    }

    #[inline]
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// File offset of the first unread byte.
    #[inline]
    pub(crate) fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    #[inline]
    pub(crate) fn consume(&mut self, n: usize) {
        self.pos = self.pos.saturating_add(n).min(self.end);
    }

    /// Makes at least `n` unread bytes available; false if the input ends
    /// first (what there is stays available). The buffer only grows while
    /// it is full of real data, so a length field that lies cannot make it
    /// allocate more than twice what the input holds.
    #[inline]
    pub(crate) fn fill(&mut self, n: usize) -> io::Result<bool> {
        if self.end - self.pos >= n {
            return Ok(true);
        }
        self.fill_slow(n)
    }

    #[cold]
    fn fill_slow(&mut self, n: usize) -> io::Result<bool> {
        while self.end - self.pos < n {
            if self.eof {
                return Ok(false);
            }
            if self.end == self.buf.len() {
                if self.pos > 0 {
                    // Keep only the unread tail (at most one partial record).
                    self.buf.copy_within(self.pos..self.end, 0);
                    self.base += self.pos as u64;
                    self.end -= self.pos;
                    self.pos = 0;
                } else {
                    let len = self.buf.len();
                    self.buf.resize((len * 2).min(n.max(len + 1)), 0);
                }
                continue;
            }
            let room = self.buf.len() - self.end;
            match self.src.read(self.buf.get_mut(self.end..).unwrap_or(&mut [])) {
                Ok(0) => self.eof = true,
                // min: a faulty `Read` may claim more than it was given room for.
                Ok(k) => self.end += k.min(room),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// Discards everything left, in the buffer and in the source; returns
    /// how many bytes that was.
    pub(crate) fn skip_rest(&mut self) -> io::Result<u64> {
        let buffered = (self.end - self.pos) as u64;
        self.pos = self.end;
        let mut rest = 0;
        if !self.eof {
            rest = io::copy(&mut self.src, &mut io::sink())?;
            self.eof = true;
            self.base += rest; // keeps offset() at the end of the input
        }
        Ok(buffered + rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hands out at most 3 bytes per read, to exercise refills.
    struct Trickle<'a>(&'a [u8]);
    impl Read for Trickle<'_> {
        fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
            let n = b.len().min(3).min(self.0.len());
            b[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn fills_across_small_reads_and_reports_the_end() {
        let data: Vec<u8> = (0..=255).collect();
        let mut inp = Input::new(Trickle(&data));
        assert!(inp.fill(10).unwrap());
        assert_eq!(&inp.avail()[..10], &data[..10]);
        assert!(inp.fill(250).unwrap());
        inp.consume(250);
        assert_eq!(inp.offset(), 250);
        assert!(!inp.fill(7).unwrap());
        assert_eq!(inp.avail(), &data[250..]);
        assert_eq!(inp.skip_rest().unwrap(), 6);
        assert_eq!(inp.offset(), 256);
        assert!(inp.avail().is_empty());
    }

    #[test]
    fn compacts_and_grows_past_the_initial_buffer() {
        let data: Vec<u8> = (0..3 * INITIAL_BUFFER as u32).map(|i| (i % 251) as u8).collect();
        let mut inp = Input::new(&data[..]);
        inp.consume(0);
        assert!(inp.fill(100).unwrap());
        inp.consume(INITIAL_BUFFER - 50);
        // Needs bytes beyond the buffer: compacts, then reads on.
        assert!(inp.fill(2 * INITIAL_BUFFER).unwrap());
        let at = inp.offset() as usize;
        assert_eq!(&inp.avail()[..2 * INITIAL_BUFFER], &data[at..at + 2 * INITIAL_BUFFER]);
        assert!(!inp.fill(usize::MAX / 2).unwrap());
        assert_eq!(inp.avail().len(), data.len() - at);
    }

    #[test]
    fn read_errors_surface() {
        struct Broken;
        impl Read for Broken {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::Error::other("disk on fire"))
            }
        }
        assert!(Input::new(Broken).fill(1).is_err());
    }
}
