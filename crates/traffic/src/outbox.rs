//! Writing whole messages through a send buffer that may take them in parts,
//! as the application's own writes.

use crate::{ConnId, Transport};
use std::collections::VecDeque;

/// A message still being written.
#[derive(Clone, Copy, Debug)]
struct Msg {
    left: u64,
    /// Bytes per write, and left of the write in progress.
    write: u64,
    write_left: u64,
    mark: Option<u64>,
}

/// Bytes still to write on one connection, with the marks that follow them.
/// Feed it `Writable` events; it writes as much as the buffer takes and
/// places each mark right after the last byte of its message.
///
/// A message goes out as a series of writes of `write_size` bytes. The transport sends each write at once while the window
/// has room, so a write ends in a short segment as the application's did;
/// writes queued behind a full window merge into full segments, as in a
/// real stack.
#[derive(Clone, Debug, Default)]
pub struct Outbox {
    pending: VecDeque<Msg>,
}

/// One write per message.
pub fn whole_message() -> u64 {
    u64::MAX
}

impl Outbox {
    /// Queue a message of `bytes` followed by `mark` (if any) and write what fits now.
    pub fn send(&mut self, tp: &mut dyn Transport, conn: ConnId, bytes: u64, mark: Option<u64>, write_size: u64) {
        self.pending.push_back(Msg { left: bytes, write: write_size.max(1), write_left: 0, mark });
        self.flush(tp, conn);
    }

    /// Write as much as the send buffer accepts. Returns true when nothing is left.
    pub fn flush(&mut self, tp: &mut dyn Transport, conn: ConnId) -> bool {
        while let Some(m) = self.pending.front_mut() {
            while m.left > 0 {
                if m.write_left == 0 {
                    m.write_left = m.write.min(m.left);
                }
                let n = tp.write(conn, m.write_left);
                m.write_left -= n;
                m.left -= n;
                if m.write_left > 0 {
                    return false;
                }
            }
            if let Some(mark) = m.mark {
                tp.mark(conn, mark);
            }
            self.pending.pop_front();
        }
        true
    }

    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }
}
