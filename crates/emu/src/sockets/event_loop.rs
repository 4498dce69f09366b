//! The event loop: one thread waits on every socket and on the timers'
//! timerfd with epoll, turns what the kernel reports into application
//! events ([`super::readiness`]), and tells them in order once each batch
//! of I/O is done, as the simulator does after each step of its engine.
//! Application calls ([`super::transport`]) only record what to do; the
//! bytes go out after the callback returns, when it is known whether a
//! mark follows them.

use super::open::Spaces;
use super::tcp::Conns;
use super::timers::{Alarm, Timers};
use super::transport::View;
use super::udp::Udp;
use super::{ByteTotals, SocketHost, SocketStats};
use crate::sys::{self, Epoll};
use rundir::TcpTotals;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use std::io;
use std::net::{IpAddr, TcpListener};
use std::path::PathBuf;
use traffic::{App, ConnId, Event, HostId};
use units::Time;

/// The longest the loop waits without checking whether it should stop.
const IDLE_WAIT_MS: i32 = 20;
/// Bytes read from a socket at once (a datagram fits whole).
const READ_BUF: usize = 256 * 1024;

/// What an epoll token names: its kind in the top byte.
const KIND_SHIFT: u32 = 56;
pub const TIMER: u64 = 0;
pub const CONN: u64 = 1;
pub const LISTENER: u64 = 2;
pub const UDP: u64 = 3;

pub fn token(kind: u64, index: u64) -> u64 {
    kind << KIND_SHIFT | index & ((1 << KIND_SHIFT) - 1)
}

/// A connection's token: its index and the low bits of its generation.
pub fn conn_token(id: ConnId) -> u64 {
    token(CONN, id.0)
}

pub struct Listener {
    pub sock: TcpListener,
    pub host: HostId,
    pub port: u16,
    pub app: u32,
}

/// Everything the loop drives, apart from the applications.
pub struct Loop<'s> {
    pub hosts: &'s [SocketHost],
    pub by_addr: &'s FxHashMap<IpAddr, HostId>,
    pub spaces: Spaces,
    origin_ns: u64,
    pub epoll: Epoll,
    alarm: Alarm,
    pub timers: Timers,
    pub conns: Conns,
    pub listeners: Vec<Listener>,
    pub listener_at: FxHashMap<(HostId, u16), u32>,
    pub udp: Udp,
    /// Events to tell, in order: (application, event).
    pub pending: VecDeque<(u32, Event)>,
    /// Connections written to, closed or marked during a callback.
    pub dirty: Vec<u32>,
    /// Tokens with more to read than one turn reads.
    pub again: Vec<u64>,
    ready: Vec<u64>,
    pub buf: Vec<u8>,
    pub marks: Vec<u64>,
    pub datagrams: Vec<(IpAddr, u32)>,
    pub stats: SocketStats,
}

impl<'s> Loop<'s> {
    pub fn new(
        hosts: &'s [SocketHost],
        by_addr: &'s FxHashMap<IpAddr, HostId>,
        spaces: &[PathBuf],
        origin_ns: u64,
        apps: usize,
    ) -> io::Result<Loop<'s>> {
        let epoll = Epoll::new()?;
        let alarm = Alarm::new(origin_ns)?;
        epoll.add(alarm.raw(), token(TIMER, 0))?;
        let stats = SocketStats { app_tcp: vec![TcpTotals::default(); apps], app_bytes: vec![ByteTotals::default(); apps], ..Default::default() };
        Ok(Loop {
            hosts,
            by_addr,
            spaces: Spaces::open(spaces)?,
            origin_ns,
            epoll,
            alarm,
            timers: Timers::default(),
            conns: Conns::default(),
            listeners: Vec::new(),
            listener_at: FxHashMap::default(),
            udp: Udp::default(),
            pending: VecDeque::new(),
            dirty: Vec::new(),
            again: Vec::new(),
            ready: Vec::new(),
            buf: vec![0; READ_BUF],
            marks: Vec::new(),
            datagrams: Vec::new(),
            stats,
        })
    }

    /// The clock shared with the core.
    pub fn now(&self) -> Time {
        Time(sys::monotonic_ns().saturating_sub(self.origin_ns))
    }

    /// Starts every application, then tells what their starts caused.
    pub fn start(&mut self, apps: &mut [Box<dyn App>]) {
        for (i, app) in apps.iter_mut().enumerate() {
            app.start(&mut View { lp: self, app: i as u32 });
            self.flush_dirty();
        }
        self.deliver(apps);
    }

    /// One turn: due timers, a wait for the kernel, what it reported; each
    /// followed by telling the events it caused.
    pub fn turn(&mut self, apps: &mut [Box<dyn App>], until: Time) -> io::Result<()> {
        self.fire_timers();
        self.deliver(apps);
        self.wait(until)?;
        let ready = std::mem::take(&mut self.ready);
        for &t in &ready {
            self.dispatch(t);
        }
        self.ready = ready;
        self.deliver(apps);
        Ok(())
    }

    fn fire_timers(&mut self) {
        let now = self.now();
        while let Some(d) = self.timers.pop_due(now) {
            self.stats.timer_lateness.record(now.0.saturating_sub(d.at.0));
            self.pending.push_back((d.app, Event::Timer(d.token)));
        }
    }

    /// Waits for the kernel, the next timer or `until`, or not at all when
    /// something is left to read; `ready` holds the tokens to handle.
    fn wait(&mut self, until: Time) -> io::Result<()> {
        let again = std::mem::take(&mut self.again);
        let deadline = self.timers.next().map_or(until, |t| t.min(until));
        let timeout = if !again.is_empty() || deadline <= self.now() {
            0
        } else {
            // The alarm ends the wait on time; the timeout only bounds how
            // long a stop request can go unseen.
            self.alarm.arm(deadline)?;
            IDLE_WAIT_MS
        };
        self.epoll.wait(&mut self.ready, timeout)?;
        self.ready.extend(again);
        Ok(())
    }

    fn dispatch(&mut self, t: u64) {
        let index = t & ((1 << KIND_SHIFT) - 1);
        match t >> KIND_SHIFT {
            TIMER => self.alarm.fired(),
            CONN => {
                if let Some(idx) = self.conns.by_token(index as u32, (index >> 32) as u32) {
                    self.conn_ready(idx);
                }
            }
            LISTENER => self.accept_all(index as u32),
            UDP => self.receive_udp(index as u32),
            _ => {}
        }
    }

    /// Tells the queued events one at a time, sending what each callback
    /// wrote before the next; until none is left.
    pub fn deliver(&mut self, apps: &mut [Box<dyn App>]) {
        while let Some((app, ev)) = self.pending.pop_front() {
            self.stats.events += 1;
            if let Some(a) = apps.get_mut(app as usize) {
                a.on_event(ev, &mut View { lp: self, app });
            }
            self.flush_dirty();
        }
    }

    fn flush_dirty(&mut self) {
        while let Some(idx) = self.dirty.pop() {
            if let Some(c) = self.conns.get(idx) {
                c.dirty = false;
                self.flush_conn(idx);
            }
        }
    }

    /// The run is over: counts what the connections still open did.
    pub fn finish(mut self) -> SocketStats {
        let conns: Vec<_> = self.conns.drain().collect();
        for c in &conns {
            self.account(c, None);
        }
        self.stats
    }
}
