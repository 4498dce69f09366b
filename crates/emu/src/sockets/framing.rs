//! Message boundaries carried in a TCP byte stream.
//!
//! Applications write byte counts and mark message boundaries; the peer
//! application must be told each mark (`Event::Message`) once every byte
//! written before it has arrived. The stream carries that as frames:
//!
//! ```text
//! frame   = header filler [msg]
//! header  = LEB128 of (filler length << 1 | 1 if a msg follows)
//! filler  = that many zero bytes
//! msg     = LEB128 of the mark's number
//! ```
//!
//! A run of `n` bytes the application wrote (and the mark after it, if
//! any) becomes one frame of exactly `n` bytes: the header and the msg
//! count against the run, and the filler is what is left. A LEB128 number
//! may be padded with continuation bytes, so some header length always
//! makes the sum exact. Only a run shorter than its header and msg (a mark
//! after fewer than a few bytes) makes a longer frame, by those few bytes.
//! So what crosses the network is what the application wrote.
//!
//! Runs are framed as late as possible ([`Outgoing::next_bytes`]: when the
//! previous frames have all gone to the kernel), so that a mark placed
//! after its bytes were written, but before they could leave, still joins
//! their frame. The receiver ([`Incoming`]) parses frames incrementally:
//! the kernel may split a frame at any byte.

use std::collections::VecDeque;

/// The longest LEB128 encoding of a u64.
const MAX_VARINT: u64 = 10;

/// Bytes LEB128 takes for `v` at the least.
fn varint_len(v: u64) -> u64 {
    let bits = 64 - (v | 1).leading_zeros() as u64;
    bits.div_ceil(7)
}

/// Appends `v` as LEB128 in exactly `len` bytes (continuation bytes pad it
/// out), `len` being at least `varint_len(v)`.
fn put_varint(out: &mut Vec<u8>, mut v: u64, len: u64) {
    debug_assert!((varint_len(v)..=MAX_VARINT).contains(&len));
    for i in 0..len {
        let more = if i + 1 < len { 0x80 } else { 0 };
        out.push((v & 0x7f) as u8 | more);
        v >>= 7;
    }
}

/// The filler and header lengths of the frame that carries a run of
/// `bytes` followed by `mark`: the first header length whose value fits
/// with the filler that makes the frame exactly `bytes` long, or an empty
/// filler (a frame longer than the run) when the run is too short.
fn layout(bytes: u64, mark: Option<u64>) -> (u64, u64) {
    let msg = mark.map_or(0, varint_len);
    let flag = mark.is_some() as u64;
    for header in 1..=MAX_VARINT {
        let Some(filler) = bytes.checked_sub(header + msg) else { break };
        if varint_len(filler << 1 | flag) <= header {
            return (filler, header);
        }
    }
    (0, 1)
}

/// Appends the frame of a run of `bytes` followed by `mark`.
pub fn encode(out: &mut Vec<u8>, bytes: u64, mark: Option<u64>) {
    let (filler, header) = layout(bytes, mark);
    put_varint(out, filler << 1 | mark.is_some() as u64, header);
    out.resize(out.len() + filler as usize, 0);
    if let Some(m) = mark {
        put_varint(out, m, varint_len(m));
    }
}

/// Bytes an application wrote and the mark that ends them, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Run {
    bytes: u64,
    mark: Option<u64>,
}

/// One connection's outgoing stream: runs not framed yet, and framed bytes
/// the kernel has not taken yet.
#[derive(Debug, Default)]
pub struct Outgoing {
    runs: VecDeque<Run>,
    run_bytes: u64,
    wire: Vec<u8>,
    /// How much of `wire` the kernel took.
    sent: usize,
}

impl Outgoing {
    /// The application wrote `bytes` more.
    pub fn write(&mut self, bytes: u64) {
        if bytes == 0 {
            return;
        }
        self.run_bytes += bytes;
        match self.runs.back_mut() {
            Some(r) if r.mark.is_none() => r.bytes += bytes,
            _ => self.runs.push_back(Run { bytes, mark: None }),
        }
    }

    /// The application marked `msg` after everything written so far.
    pub fn mark(&mut self, msg: u64) {
        match self.runs.back_mut() {
            Some(r) if r.mark.is_none() => r.mark = Some(msg),
            _ => self.runs.push_back(Run { bytes: 0, mark: Some(msg) }),
        }
    }

    /// Bytes held here: written and not yet taken by the kernel.
    pub fn unsent(&self) -> u64 {
        self.run_bytes + (self.wire.len() - self.sent) as u64
    }

    pub fn is_empty(&self) -> bool {
        self.runs.is_empty() && self.sent == self.wire.len()
    }

    /// The next bytes to hand to the kernel. Frames the runs written so far
    /// only when every framed byte has gone (see the module docs).
    pub fn next_bytes(&mut self) -> &[u8] {
        if self.sent == self.wire.len() {
            self.wire.clear();
            self.sent = 0;
            for r in self.runs.drain(..) {
                encode(&mut self.wire, r.bytes, r.mark);
            }
            self.run_bytes = 0;
        }
        &self.wire[self.sent..]
    }

    /// The kernel took `n` of the bytes [`Outgoing::next_bytes`] gave.
    pub fn consumed(&mut self, n: usize) {
        debug_assert!(self.sent + n <= self.wire.len());
        self.sent += n;
    }
}

/// Bytes that are not frames (only a peer that is not undertow sends them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Garbled;

/// Which part of a frame the next byte belongs to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Part {
    #[default]
    Header,
    Filler,
    Msg,
}

/// One connection's incoming stream, parsed as it arrives.
#[derive(Debug, Default)]
pub struct Incoming {
    part: Part,
    /// The LEB128 number being read, and the bit its next byte fills.
    value: u64,
    shift: u32,
    filler_left: u64,
    marked: bool,
}

impl Incoming {
    /// Parses `data`, the stream's next bytes; calls `message` with each
    /// mark whose frame ends within them, in order.
    pub fn feed(&mut self, mut data: &[u8], message: &mut impl FnMut(u64)) -> Result<(), Garbled> {
        while let Some(&b) = data.first() {
            if self.part == Part::Filler {
                let n = self.filler_left.min(data.len() as u64);
                self.filler_left -= n;
                data = &data[n as usize..];
                if self.filler_left == 0 {
                    self.part = if self.marked { Part::Msg } else { Part::Header };
                }
                continue;
            }
            data = &data[1..];
            if let Some(v) = self.varint_byte(b)? {
                self.number_read(v, message);
            }
        }
        Ok(())
    }

    /// Adds one byte to the number being read; the number once complete.
    fn varint_byte(&mut self, b: u8) -> Result<Option<u64>, Garbled> {
        // The tenth byte may hold only the top bit of a u64.
        if self.shift > 63 || (self.shift == 63 && b & 0x7e != 0) {
            return Err(Garbled);
        }
        self.value |= u64::from(b & 0x7f) << self.shift;
        if b & 0x80 != 0 {
            self.shift += 7;
            return Ok(None);
        }
        let v = self.value;
        (self.value, self.shift) = (0, 0);
        Ok(Some(v))
    }

    /// A header or a msg was read whole.
    fn number_read(&mut self, v: u64, message: &mut impl FnMut(u64)) {
        match self.part {
            Part::Header => {
                (self.filler_left, self.marked) = (v >> 1, v & 1 == 1);
                self.part = match (self.filler_left > 0, self.marked) {
                    (true, _) => Part::Filler,
                    (false, true) => Part::Msg,
                    (false, false) => Part::Header,
                };
            }
            Part::Msg => {
                message(v);
                self.part = Part::Header;
            }
            Part::Filler => unreachable!("filler bytes are not numbers"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses `wire` fed in pieces of `step` bytes; the marks it holds.
    fn parse(wire: &[u8], step: usize) -> Result<Vec<u64>, Garbled> {
        let mut inc = Incoming::default();
        let mut got = Vec::new();
        for piece in wire.chunks(step) {
            inc.feed(piece, &mut |m| got.push(m))?;
        }
        Ok(got)
    }

    fn frame(bytes: u64, mark: Option<u64>) -> Vec<u8> {
        let mut out = Vec::new();
        encode(&mut out, bytes, mark);
        out
    }

    #[test]
    fn a_run_at_least_as_long_as_its_header_and_mark_becomes_a_frame_of_its_own_length() {
        let marks = [None, Some(0), Some(127), Some(128), Some(1_000_000), Some(u64::MAX)];
        for mark in marks {
            let least = 1 + mark.map_or(0, varint_len);
            for bytes in (least..300).chain([16_383, 16_384, 16_385, 65_536, 1 << 21, (1 << 21) + 1]) {
                assert_eq!(frame(bytes, mark).len() as u64, bytes, "{bytes} bytes, mark {mark:?}");
            }
        }
    }

    #[test]
    fn a_run_shorter_than_its_header_and_mark_grows_by_the_difference_only() {
        assert_eq!(frame(0, Some(5)), vec![0b1, 5], "an empty header saying a mark follows, and the mark");
        assert_eq!(frame(1, Some(300)).len(), 3, "one header byte and two mark bytes for one written byte");
        assert_eq!(frame(3, Some(300)).len(), 3);
    }

    #[test]
    fn every_frame_parses_back_to_its_mark_however_the_kernel_splits_it() {
        let runs = [(0, Some(7)), (1, None), (65, Some(1)), (66, None), (200, Some(1 << 40)), (130, Some(0)), (40_000, Some(u64::MAX))];
        let mut wire = Vec::new();
        for (bytes, mark) in runs {
            encode(&mut wire, bytes, mark);
        }
        let want: Vec<u64> = runs.iter().filter_map(|r| r.1).collect();
        for step in [1, 2, 3, 7, 64, 1000, wire.len()] {
            assert_eq!(parse(&wire, step), Ok(want.clone()), "pieces of {step}");
        }
    }

    #[test]
    fn a_mark_is_told_only_when_the_last_byte_of_its_frame_arrives() {
        let wire = frame(1000, Some(42));
        let mut inc = Incoming::default();
        let mut got = Vec::new();
        inc.feed(&wire[..999], &mut |m| got.push(m)).unwrap();
        assert!(got.is_empty());
        inc.feed(&wire[999..], &mut |m| got.push(m)).unwrap();
        assert_eq!(got, vec![42]);
    }

    #[test]
    fn a_number_longer_than_a_u64_is_garbled() {
        assert_eq!(parse(&[0xff; 11], 1), Err(Garbled));
        let mut top = vec![0x80; 9];
        top.push(0x02);
        assert_eq!(parse(&top, 4), Err(Garbled), "a tenth byte beyond bit 63");
    }

    #[test]
    fn a_mark_placed_before_its_bytes_leave_joins_their_frame() {
        let mut out = Outgoing::default();
        out.write(100);
        out.write(100);
        out.mark(9);
        assert_eq!(out.unsent(), 200);
        let wire = out.next_bytes().to_vec();
        assert_eq!((wire.len(), parse(&wire, 50)), (200, Ok(vec![9])));
    }

    #[test]
    fn runs_written_while_the_kernel_holds_a_partly_sent_frame_wait_for_it_to_go() {
        let mut out = Outgoing::default();
        out.write(500);
        let first = out.next_bytes().len();
        out.consumed(123);
        out.write(300);
        out.mark(1);
        // The rest of the first frame comes before the second is made.
        assert_eq!(out.next_bytes().len(), first - 123);
        assert_eq!(out.unsent(), 300 + (first - 123) as u64);
        out.consumed(first - 123);
        let second = out.next_bytes().to_vec();
        assert_eq!((second.len(), parse(&second, 1)), (300, Ok(vec![1])));
        out.consumed(second.len());
        assert!(out.is_empty() && out.next_bytes().is_empty());
    }

    #[test]
    fn marks_in_a_row_each_get_their_own_frame() {
        let mut out = Outgoing::default();
        out.write(10);
        out.mark(1);
        out.mark(2);
        let wire = out.next_bytes().to_vec();
        assert_eq!(parse(&wire, 3), Ok(vec![1, 2]));
        assert_eq!(wire.len(), 10 + 2, "the second mark's frame has no bytes of its own");
    }
}
