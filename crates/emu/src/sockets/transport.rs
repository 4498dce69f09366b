//! The transport as one application sees it, and what its calls do: open
//! sockets, stage bytes and marks, set timers. Nothing here tells an
//! application anything directly; events are queued (a connection that
//! fails at once is told `Reset` after the callback, like any other).

use super::event_loop::{conn_token, token, Listener, Loop, LISTENER, UDP};
use super::tcp::{Conn, Phase};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use traffic::{ConnId, Event, HostId, Transport};
use units::Time;

/// The loop as application `app` sees it: its calls are made as `app`.
pub struct View<'a, 's> {
    pub lp: &'a mut Loop<'s>,
    pub app: u32,
}

impl Transport for View<'_, '_> {
    fn now(&self) -> Time {
        self.lp.now()
    }
    fn listen(&mut self, host: HostId, port: u16) {
        self.lp.listen(self.app, host, port)
    }
    fn connect(&mut self, from: HostId, to: HostId, port: u16) -> ConnId {
        self.lp.connect(self.app, from, to, port)
    }
    fn write(&mut self, conn: ConnId, bytes: u64) -> u64 {
        self.lp.with_conn(conn, |c| c.write(bytes)).unwrap_or(0)
    }
    fn send_space(&self, conn: ConnId) -> u64 {
        self.lp.send_space(conn)
    }
    fn write_forever(&mut self, conn: ConnId) {
        self.lp.with_conn(conn, |c| c.greedy = !c.closing);
    }
    fn mark(&mut self, conn: ConnId, msg: u64) {
        self.lp.with_conn(conn, |c| {
            if !c.closing {
                c.out.mark(msg)
            }
        });
    }
    fn close(&mut self, conn: ConnId) {
        // As a program's close(): the FIN leaves now, after what is staged
        // and before whatever the application does next in this callback (a
        // new connection's SYN), in the order the simulator sends them. An
        // error, and the handle's end, are the flush after the callback's.
        self.lp.with_conn(conn, |c| {
            (c.closing, c.greedy) = (true, false);
            let _ = c.flush().and_then(|()| c.shut_if_done());
        });
    }
    fn abort(&mut self, conn: ConnId) {
        self.lp.abort(conn)
    }
    fn bind_udp(&mut self, host: HostId, port: u16) {
        self.lp.bind_udp(self.app, host, port)
    }
    fn send_udp(&mut self, from: HostId, src_port: u16, to: HostId, dst_port: u16, payload: u32) {
        self.lp.send_udp(from, src_port, to, dst_port, payload)
    }
    fn set_timer(&mut self, at: Time, token: u64) {
        let now = self.lp.now();
        self.lp.timers.set(self.app, at.max(now), token)
    }
}

impl Loop<'_> {
    /// Applies `f` to the live connection behind `id` and queues it to be
    /// flushed after the callback; `None` for a handle no longer valid.
    fn with_conn<T>(&mut self, id: ConnId, f: impl FnOnce(&mut Conn) -> T) -> Option<T> {
        let idx = self.conns.index(id)?;
        let c = self.conns.get(idx)?;
        let out = f(c);
        if !c.dirty {
            c.dirty = true;
            self.dirty.push(idx);
        }
        Some(out)
    }

    fn send_space(&self, id: ConnId) -> u64 {
        self.conns.index(id).and_then(|idx| self.conns.peek(idx)).map_or(0, Conn::space)
    }

    fn listen(&mut self, app: u32, host: HostId, port: u16) {
        if let Some(&i) = self.listener_at.get(&(host, port)) {
            self.listeners[i as usize].app = app;
            return;
        }
        let Some(h) = self.hosts.get(host as usize) else {
            self.stats.listen_errors += 1;
            return;
        };
        let i = self.listeners.len() as u32;
        match self.spaces.listen(h, port) {
            Ok(sock) if self.epoll.add_edge(sock.as_raw_fd(), token(LISTENER, i as u64)).is_ok() => {
                self.listeners.push(Listener { sock, host, port, app });
                self.listener_at.insert((host, port), i);
            }
            _ => self.stats.listen_errors += 1,
        }
    }

    fn connect(&mut self, app: u32, from: HostId, to: HostId, port: u16) -> ConnId {
        if let Some(t) = self.stats.app_tcp.get_mut(app as usize) {
            t.connections += 1;
        }
        let opened = self.now();
        let stream = match (self.hosts.get(from as usize), self.hosts.get(to as usize)) {
            (Some(h), Some(dst)) => self.spaces.connect(h, SocketAddr::new(dst.addr, port)),
            _ => Err(std::io::Error::other("no such host")),
        };
        let Ok(stream) = stream else {
            // Told `Reset` after the callback, as a refused connection is.
            let id = self.conns.dead_id();
            if let Some(t) = self.stats.app_tcp.get_mut(app as usize) {
                t.resets += 1;
            }
            self.pending.push_back((app, Event::Reset(id)));
            return id;
        };
        let fd = stream.as_raw_fd();
        let idx = self.conns.insert(Conn::new(stream, app, from, to, Phase::Connecting, opened));
        let id = self.conns.id(idx);
        if self.epoll.add_edge(fd, conn_token(id)).is_err() {
            self.fail(idx);
        }
        id
    }

    /// Resets the connection (SO_LINGER 0, then close): the peer is told
    /// `Reset`; this end's handle ends without an event, as in the simulator.
    fn abort(&mut self, id: ConnId) {
        if let Some(idx) = self.conns.index(id) {
            if let Some(c) = self.conns.get(idx) {
                c.linger_zero();
            }
            self.release(idx);
        }
    }

    /// The socket of `host:port`, opened (and watched) on first use.
    fn udp_socket(&mut self, host: HostId, port: u16) -> Option<u32> {
        if let Some(i) = self.udp.find(host, port) {
            return Some(i);
        }
        let sock = self.spaces.udp(self.hosts.get(host as usize)?, port).ok()?;
        let i = self.udp.add(sock, host, port);
        self.epoll.add_edge(self.udp.raw_fd(i), token(UDP, i as u64)).ok()?;
        Some(i)
    }

    fn bind_udp(&mut self, app: u32, host: HostId, port: u16) {
        match self.udp_socket(host, port).and_then(|i| self.udp.get(i)) {
            Some(s) => s.owner = Some(app),
            None => self.stats.udp_errors += 1,
        }
    }

    fn send_udp(&mut self, from: HostId, sport: u16, to: HostId, dport: u16, payload: u32) {
        let Some(dst) = self.hosts.get(to as usize).map(|h| SocketAddr::new(h.addr, dport)) else {
            self.stats.udp_errors += 1;
            return;
        };
        let sent = self.udp_socket(from, sport).and_then(|i| self.udp.get(i)).map(|s| s.send(dst, payload));
        match sent {
            Some(Ok(())) => self.stats.datagrams_sent += 1,
            _ => self.stats.udp_errors += 1,
        }
    }
}
