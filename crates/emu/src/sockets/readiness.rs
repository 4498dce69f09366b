//! What the kernel reported, turned into application events: connections
//! completed, bytes read and parsed into messages, FINs, resets, buffers
//! drained, connections accepted, datagrams received.

use super::event_loop::{conn_token, token, Loop, UDP};
use super::tcp::{Conn, Phase, Reading};
use std::io;
use std::net::{IpAddr, TcpStream};
use std::os::fd::AsRawFd;
use traffic::Event;
use units::Time;

impl Loop<'_> {
    /// Connection `idx`'s socket changed: its connect completed or failed,
    /// bytes or the FIN arrived, or the kernel took staged bytes.
    pub fn conn_ready(&mut self, idx: u32) {
        let id = self.conns.id(idx);
        let Some(c) = self.conns.get(idx) else { return };
        if c.phase == Phase::Connecting {
            match c.connect_result() {
                None => return,
                Some(Err(_)) => return self.fail(idx),
                Some(Ok(())) => {
                    c.phase = Phase::Open;
                    let app = c.app;
                    self.pending.push_back((app, Event::Connected(id)));
                }
            }
        }
        self.read_conn(idx);
        self.flush_conn(idx);
    }

    /// Reads what arrived; each message completed is told, then the FIN.
    fn read_conn(&mut self, idx: u32) {
        let id = self.conns.id(idx);
        let Some(c) = self.conns.get(idx) else { return };
        if c.rd_eof {
            return;
        }
        let mut marks = std::mem::take(&mut self.marks);
        let read = c.read(&mut self.buf, &mut marks);
        let app = c.app;
        self.pending.extend(marks.drain(..).map(|msg| (app, Event::Message { conn: id, msg })));
        self.marks = marks;
        match read {
            Reading::Drained => {}
            Reading::More => self.again.push(conn_token(id)),
            Reading::Eof => {
                c.rd_eof = true;
                self.pending.push_back((app, Event::PeerClosed(id)));
                self.finish_if_closed(idx);
            }
            Reading::Garbled => {
                self.stats.framing_errors += 1;
                c.linger_zero();
                self.fail(idx);
            }
            Reading::Failed => self.fail(idx),
        }
    }

    /// Sends what is staged (and the FIN after it, once closed); tells a
    /// blocked writer when there is room again.
    pub fn flush_conn(&mut self, idx: u32) {
        let id = self.conns.id(idx);
        let Some(c) = self.conns.get(idx) else { return };
        if c.flush().and_then(|()| c.shut_if_done()).is_err() {
            return self.fail(idx);
        }
        if c.writable_again() {
            let app = c.app;
            self.pending.push_back((app, Event::Writable(id)));
        }
        self.finish_if_closed(idx);
    }

    /// Both directions are shut: `Closed`, and the handle ends.
    fn finish_if_closed(&mut self, idx: u32) {
        let id = self.conns.id(idx);
        let Some(c) = self.conns.get(idx) else { return };
        if c.wr_shut && c.rd_eof {
            let app = c.app;
            self.pending.push_back((app, Event::Closed(id)));
            self.release(idx);
        }
    }

    /// The connection failed (refused, reset, timed out): `Reset`, and the
    /// handle ends.
    pub fn fail(&mut self, idx: u32) {
        let id = self.conns.id(idx);
        let Some(c) = self.conns.get(idx) else { return };
        let app = c.app;
        self.pending.push_back((app, Event::Reset(id)));
        if let Some(t) = self.stats.app_tcp.get_mut(app as usize) {
            t.resets += 1;
        }
        self.release(idx);
    }

    /// Ends the handle, counts what the connection did and closes its socket.
    pub fn release(&mut self, idx: u32) {
        if let Some(c) = self.conns.remove(idx) {
            let now = self.now();
            self.account(&c, Some(now));
        }
    }

    /// Adds a connection's counts to its application's totals and its row
    /// to the log; `closed` is when its handle ended.
    pub fn account(&mut self, c: &Conn, closed: Option<Time>) {
        let row = c.row(closed);
        if let Some(t) = self.stats.app_tcp.get_mut(c.app as usize) {
            t.segments += row.segments_sent;
            t.retransmits += row.retransmits;
        }
        if let Some(b) = self.stats.app_bytes.get_mut(c.app as usize) {
            b.written += c.written;
            b.wire_sent += c.wire_sent;
            b.wire_received += c.wire_received;
        }
        self.stats.conn_log.push(&row);
    }

    /// Accepts every connection waiting on listener `i`.
    pub fn accept_all(&mut self, i: u32) {
        loop {
            let Some(l) = self.listeners.get(i as usize) else { return };
            match l.sock.accept() {
                Ok((stream, from)) => self.accepted(i, stream, from.ip()),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if matches!(e.raw_os_error(), Some(libc::ECONNABORTED | libc::EINTR)) => {}
                Err(_) => {
                    self.stats.listen_errors += 1;
                    return;
                }
            }
        }
    }

    /// A connection from `from` to listener `i` completed its handshake.
    fn accepted(&mut self, i: u32, stream: TcpStream, from: IpAddr) {
        let l = &self.listeners[i as usize];
        let (host, port, app) = (l.host, l.port, l.app);
        let Some(&peer) = self.by_addr.get(&from) else {
            self.stats.stray_connections += 1;
            return;
        };
        if stream.set_nonblocking(true).and_then(|()| stream.set_nodelay(true)).is_err() {
            self.stats.listen_errors += 1;
            return;
        }
        let fd = stream.as_raw_fd();
        let idx = self.conns.insert(Conn::new(stream, app, host, peer, Phase::Open, self.now()));
        let id = self.conns.id(idx);
        if let Some(t) = self.stats.app_tcp.get_mut(app as usize) {
            t.connections += 1;
        }
        self.pending.push_back((app, Event::Accepted { conn: id, host, port, peer }));
        // Registering reports what arrived before it.
        if self.epoll.add_edge(fd, conn_token(id)).is_err() {
            self.fail(idx);
        }
    }

    /// Reads the datagrams waiting on UDP socket `i`; tells its application
    /// of those from known hosts.
    pub fn receive_udp(&mut self, i: u32) {
        let mut got = std::mem::take(&mut self.datagrams);
        let Some(s) = self.udp.get(i) else { return };
        let more = s.receive(&mut self.buf, &mut got);
        let (host, port, owner) = (s.host, s.port, s.owner);
        for (ip, bytes) in got.drain(..) {
            match (owner, self.by_addr.get(&ip)) {
                (Some(app), Some(&from)) => {
                    self.stats.datagrams_received += 1;
                    self.pending.push_back((app, Event::Datagram { host, port, from, bytes }));
                }
                _ => self.stats.stray_datagrams += 1,
            }
        }
        if more {
            self.again.push(token(UDP, i as u64));
        }
        self.datagrams = got;
    }
}
