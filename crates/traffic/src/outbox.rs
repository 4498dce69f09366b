//! Writing whole messages through a send buffer that may take them in parts.

use crate::{ConnId, Transport};
use std::collections::VecDeque;

/// Bytes still to write on one connection, with the marks that follow them.
/// Feed it `Writable` events; it writes as much as the buffer takes and
/// places each mark right after the last byte of its message.
#[derive(Clone, Debug, Default)]
pub struct Outbox {
    /// (bytes left of this message, mark to place after it)
    pending: VecDeque<(u64, Option<u64>)>,
}

impl Outbox {
    /// Queue a message of `bytes` followed by `mark` (if any) and write what fits now.
    pub fn send(&mut self, tp: &mut dyn Transport, conn: ConnId, bytes: u64, mark: Option<u64>) {
        self.pending.push_back((bytes, mark));
        self.flush(tp, conn);
    }

    /// Write as much as the send buffer accepts. Returns true when nothing is left.
    pub fn flush(&mut self, tp: &mut dyn Transport, conn: ConnId) -> bool {
        while let Some(&mut (ref mut left, mark)) = self.pending.front_mut() {
            if *left > 0 {
                *left -= tp.write(conn, *left);
                if *left > 0 {
                    return false;
                }
            }
            if let Some(m) = mark {
                tp.mark(conn, m);
            }
            self.pending.pop_front();
        }
        true
    }

    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }
}
