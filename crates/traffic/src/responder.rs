//! The server side shared by request/response applications: every request's
//! message boundary carries the size of the response to send back; the
//! responder writes that many bytes, marks their end, and closes when the
//! client does.

use crate::{ConnId, Event, Outbox, Transport};
use std::collections::HashMap;

#[derive(Default)]
pub struct Responder {
    conns: HashMap<ConnId, Outbox>,
}

impl Responder {
    /// Handles `ev` if it concerns a connection this responder serves (or a
    /// new one accepted); returns false for events that are not its own.
    pub fn on_event(&mut self, ev: &Event, tp: &mut dyn Transport) -> bool {
        match *ev {
            Event::Accepted { conn, .. } => {
                self.conns.insert(conn, Outbox::default());
            }
            Event::Message { conn, msg } => match self.conns.get_mut(&conn) {
                Some(out) => out.send(tp, conn, msg, Some(msg)),
                None => return false,
            },
            Event::Writable(conn) => match self.conns.get_mut(&conn) {
                Some(out) => {
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
