//! The server side shared by request/response applications: every request's
//! message boundary carries the size of the response to send back; the
//! responder writes that many bytes, marks their end, and closes when the
//! client does.

use crate::{ConnId, Event, Outbox, Transport};
use std::collections::HashMap;

#[derive(Default)]
pub struct Responder {
    /// Each served connection's listening port and what is left to write.
    conns: HashMap<ConnId, (u16, Outbox)>,
}

impl Responder {
    /// Handles `ev` if it concerns a connection this responder serves (or a
    /// new one accepted); returns false for events that are not its own.
    /// `write_size(port, bytes)` gives the size of the application writes
    /// that send a response of `bytes` on a connection to `port`
    /// (`outbox::whole_message` for one write per response).
    pub fn on_event(&mut self, ev: &Event, tp: &mut dyn Transport, write_size: &mut dyn FnMut(u16, u64) -> u64) -> bool {
        match *ev {
            Event::Accepted { conn, port, .. } => {
                self.conns.insert(conn, (port, Outbox::default()));
            }
            Event::Message { conn, msg } => match self.conns.get_mut(&conn) {
                Some((port, out)) => out.send(tp, conn, msg, Some(msg), write_size(*port, msg)),
                None => return false,
            },
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

    pub fn serves(&self, conn: ConnId) -> bool {
        self.conns.contains_key(&conn)
    }
}
