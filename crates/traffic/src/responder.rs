//! The server side shared by request/response applications: every request's
//! message boundary says what to answer (the response's size, and how long
//! the server takes before it starts writing, see [`request_mark`]); the
//! responder writes that many bytes, marks their end, and closes when the
//! client does.

use crate::timers::{split, token, Slots};
use crate::{ConnId, Event, Outbox, Transport};
use rustc_hash::FxHashMap;
use units::Dur;

/// Bits of a request mark that hold the response size; the rest hold the
/// server's time in microseconds.
const SIZE_BITS: u32 = 36;
const SIZE_MAX: u64 = (1 << SIZE_BITS) - 1;
const DELAY_MAX_US: u64 = (1 << (64 - SIZE_BITS)) - 1;

/// The mark a request ends with, as a generator's request header would
/// carry it (Swing and Tmix tell their servers what to send back): a
/// response of `bytes` (at most 64 GiB) after `delay` (at most 268 s; both
/// are capped).
pub fn request_mark(bytes: u64, delay: Dur) -> u64 {
    let us = (delay.nanos() / 1000).min(DELAY_MAX_US);
    us << SIZE_BITS | bytes.min(SIZE_MAX)
}

/// The response size and server time a request mark asks for.
pub fn parse_request(mark: u64) -> (u64, Dur) {
    (mark & SIZE_MAX, Dur::from_micros(mark >> SIZE_BITS))
}

#[derive(Default)]
pub struct Responder {
    /// Each served connection's listening port and what is left to write.
    conns: FxHashMap<ConnId, (u16, Outbox)>,
    /// Responses waiting out their server time: (connection, size), by
    /// timer slot (`timers`); without a timer kind (`Responder::default()`)
    /// every response goes out at once.
    waiting: Slots<(ConnId, u64)>,
    kind: Option<u64>,
}

impl Responder {
    /// A responder that honours server times, with timer tokens of `kind`.
    pub fn with_timers(kind: u64) -> Responder {
        Responder { kind: Some(kind), ..Default::default() }
    }

    /// Handles `ev` if it concerns a connection this responder serves (or a
    /// new one accepted, or one of its timers); returns false for events
    /// that are not its own. `write_size(port, bytes)` gives the size of
    /// the application writes that send a response of `bytes` on a
    /// connection to `port` (`outbox::whole_message` for one write per
    /// response).
    pub fn on_event(&mut self, ev: &Event, tp: &mut dyn Transport, write_size: &mut dyn FnMut(u16, u64) -> u64) -> bool {
        match *ev {
            Event::Accepted { conn, port, .. } => {
                self.conns.insert(conn, (port, Outbox::default()));
            }
            Event::Message { conn, msg } => {
                if !self.conns.contains_key(&conn) {
                    return false;
                }
                let (bytes, delay) = parse_request(msg);
                match self.kind {
                    Some(kind) if delay > Dur::ZERO => {
                        let slot = self.waiting.put((conn, bytes));
                        tp.set_timer(tp.now() + delay, token(kind, slot as u64));
                    }
                    _ => self.respond(conn, bytes, tp, write_size),
                }
            }
            Event::Timer(t) if Some(split(t).0) == self.kind => {
                if let Some((conn, bytes)) = self.waiting.take(split(t).1 as usize) {
                    self.respond(conn, bytes, tp, write_size);
                }
            }
            Event::Writable(conn) => match self.conns.get_mut(&conn) {
                Some((_, out)) => {
                    out.flush(tp, conn);
                }
                None => return false,
            },
            Event::PeerClosed(conn) => {
                if !self.conns.contains_key(&conn) {
                    return false;
                }
                tp.close(conn);
            }
            Event::Closed(conn) | Event::Reset(conn) => {
                if self.conns.remove(&conn).is_none() {
                    return false;
                }
            }
            _ => return false,
        }
        true
    }

    /// Writes a response of `bytes` on `conn` (if it is still open),
    /// marked with its size.
    fn respond(&mut self, conn: ConnId, bytes: u64, tp: &mut dyn Transport, write_size: &mut dyn FnMut(u16, u64) -> u64) {
        if let Some((port, out)) = self.conns.get_mut(&conn) {
            out.send(tp, conn, bytes, Some(bytes), write_size(*port, bytes));
        }
    }

    pub fn serves(&self, conn: ConnId) -> bool {
        self.conns.contains_key(&conn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_marks_carry_size_and_server_time() {
        assert_eq!(parse_request(request_mark(12_345, Dur::from_micros(28_000))), (12_345, Dur::from_micros(28_000)));
        // A plain size (what the web-like flows mark) asks for no wait.
        assert_eq!(parse_request(5000), (5000, Dur::ZERO));
        // Sub-microsecond parts are dropped; both fields are capped.
        assert_eq!(parse_request(request_mark(1, Dur::from_nanos(1_999))).1, Dur::from_micros(1));
        let (b, d) = parse_request(request_mark(u64::MAX, Dur::from_secs(10_000)));
        assert_eq!((b, d), (SIZE_MAX, Dur::from_micros(DELAY_MAX_US)));
        assert!(d > Dur::from_secs(268) && b == (64 << 30) - 1);
    }
}
