//! A transport for tests: no network, time moved by the test.
//!
//! [`Fake`] holds the applications under test and is their [`Transport`].
//! It records every call they make ([`Call`]: listens, connects, writes
//! with the bytes taken, marks, closes, aborts, datagrams, timers) with the
//! time it was made and the application that made it, every event it told
//! them ([`Told`]), every marked message with its bytes and when it was
//! delivered ([`Message`]) and every connection ([`Conn`]). Time moves only
//! when the test says ([`Fake::run_until`], [`Fake::advance`]); what falls
//! due fires in order of time, then of the order it was set, and events
//! reach the applications one at a time, in order, as in the simulator.
//!
//! Two ways to run it:
//!
//! - [`Fake::new`]: nothing moves by itself. A connect waits for
//!   [`Fake::establish`] (`Connected` to the client, `Accepted` to the
//!   application listening on the port, if any) or [`Fake::refuse`];
//!   written bytes, marks and the close or abort wait for
//!   [`Fake::deliver`]; and the test may tell an application anything
//!   ([`Fake::event`]).
//! - [`Fake::loopback`]: a perfect network with a fixed one-way delay
//!   (zero for instant delivery) between every pair of hosts. A connect to
//!   a listened port completes after it (any other is refused: `Reset`,
//!   also after it, as are connects to a port [`Fake::refuse_port`]
//!   named); bytes, marks, FINs, RSTs and datagrams to a bound port arrive
//!   after it. An application may talk to itself (the Swing source plays
//!   both clients and servers).
//!
//! Simpler than the simulator's TCP, on purpose: no loss, no bandwidth,
//! no handshake retries; the two ends of a connection are told `Closed`
//! together when the second FIN arrives; the send buffer takes everything
//! unless [`Fake::with_send_buffer`] sets a size (space frees when the
//! bytes arrive); an end that is reset or aborted sends nothing more, not
//! even what was on its way; `write_forever` is recorded and moves nothing.

use crate::{App, AppReport, ConnId, Event, HostId, Transport};
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use units::{Dur, Time};

/// One call an application made, and when.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    pub at: Time,
    /// The application's index (see [`Fake::add`]).
    pub app: usize,
    pub op: Op,
}

/// A [`Transport`] call and its arguments (`now` and `send_space` only read
/// and are not recorded).
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    Listen {
        host: HostId,
        port: u16,
    },
    Connect {
        conn: ConnId,
        from: HostId,
        to: HostId,
        port: u16,
    },
    /// `took` of `bytes` fitted in the send buffer.
    Write {
        conn: ConnId,
        bytes: u64,
        took: u64,
    },
    WriteForever {
        conn: ConnId,
    },
    Mark {
        conn: ConnId,
        msg: u64,
    },
    Close {
        conn: ConnId,
    },
    Abort {
        conn: ConnId,
    },
    BindUdp {
        host: HostId,
        port: u16,
    },
    SendUdp {
        from: HostId,
        src_port: u16,
        to: HostId,
        dst_port: u16,
        payload: u32,
    },
    SetTimer {
        at: Time,
        token: u64,
    },
}

/// An event told to an application, and when.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Told {
    pub at: Time,
    pub app: usize,
    pub event: Event,
}

/// A message: the bytes written on a connection since its previous mark,
/// and the mark that ends them.
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    /// The writer's end of the connection.
    pub conn: ConnId,
    /// Written by the connecting end (a request) or the accepting end (a response).
    pub client: bool,
    pub msg: u64,
    pub bytes: u64,
    /// Writes that carried its bytes (the part a short write took counts as one).
    pub writes: u32,
    /// Its first byte's write (the mark's time if it has no bytes).
    pub started: Time,
    pub marked: Time,
    /// When the peer application was told (`Event::Message`).
    pub delivered: Option<Time>,
}

/// One end of a connection.
#[derive(Clone, Debug)]
pub struct Conn {
    pub id: ConnId,
    pub app: usize,
    /// Opened by `connect` (else accepted).
    pub client: bool,
    /// This end's host, the other end's host, and the server's port.
    pub host: HostId,
    pub remote: HostId,
    pub port: u16,
    /// The other end, once the handshake completed to a listener.
    pub peer: Option<ConnId>,
    /// The connect call (or the accept).
    pub opened: Time,
    pub established: Option<Time>,
    /// Bytes the send buffer took, and of them those that reached the peer.
    pub written: u64,
    pub delivered: u64,
    /// When this end called `close`.
    pub closed: Option<Time>,
    /// When the handle stopped being valid: `Closed` or `Reset` told, or aborted.
    pub ended: Option<Time>,
    /// Ended by a reset or refusal (told `Reset`) or an abort.
    pub reset: bool,
    /// `write_forever` was called (and no `close` since).
    pub greedy: bool,
    aborted: bool,
    /// Marks not delivered yet: (bytes written before it, index in `messages`).
    marks: VecDeque<(u64, usize)>,
    /// The message being written: first write's time, bytes, writes.
    current: Option<(Time, u64, u32)>,
    want_writable: bool,
    /// Bytes (and whether the FIN) already on their way (loopback).
    sent: u64,
    fin_sent: bool,
    /// This end's FIN reached the other.
    fin_arrived: bool,
}

impl Conn {
    fn live(&self) -> bool {
        self.ended.is_none()
    }
}

/// A datagram an application sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Datagram {
    pub at: Time,
    pub from: HostId,
    pub src_port: u16,
    pub to: HostId,
    pub dst_port: u16,
    pub payload: u32,
}

/// What falls due at a time.
#[derive(Clone, Copy, Debug)]
enum Due {
    Timer {
        app: usize,
        token: u64,
    },
    Establish(ConnId),
    Refuse(ConnId),
    /// The sender's bytes up to `upto` (and its FIN, with `fin`) arrive.
    Arrive {
        conn: ConnId,
        upto: u64,
        fin: bool,
    },
    /// An RST reaches this end.
    Reset(ConnId),
    Tell {
        app: usize,
        event: Event,
    },
}

/// Items due at one instant before the fake gives up (an application that
/// keeps setting timers for now would otherwise spin for ever).
const SPIN_LIMIT: u64 = 10_000_000;

/// The state behind the transport; `app` is the application whose call it is.
#[derive(Default)]
struct Net {
    now: Time,
    delay: Option<Dur>,
    send_buffer: Option<u64>,
    /// How late every timer fires (a real-time engine's wake-ups).
    timer_lateness: Dur,
    app: usize,
    seq: u64,
    queue: BTreeMap<(Time, u64), Due>,
    pending: VecDeque<(usize, Event)>,
    conns: Vec<Conn>,
    listeners: HashMap<(HostId, u16), usize>,
    bound: HashMap<(HostId, u16), usize>,
    refused: HashSet<(HostId, u16)>,
    calls: Vec<Call>,
    told: Vec<Told>,
    messages: Vec<Message>,
}

/// The applications under test and their transport; see the module docs.
#[derive(Default)]
pub struct Fake {
    apps: Vec<Box<dyn App>>,
    net: Net,
}

impl Fake {
    /// A transport where nothing moves unless the test says.
    pub fn new() -> Fake {
        Fake::default()
    }

    /// A perfect network that carries everything after `delay`, one way.
    pub fn loopback(delay: Dur) -> Fake {
        Fake { net: Net { delay: Some(delay), ..Net::default() }, ..Fake::default() }
    }

    /// Send buffers of `bytes`: a write takes what fits, and `Writable`
    /// follows a short write once bytes arrive (or are delivered).
    pub fn with_send_buffer(mut self, bytes: u64) -> Fake {
        self.net.send_buffer = Some(bytes);
        self
    }

    /// Timers fire `late` after the time they were set for, as a real
    /// clock's wake-ups do (the emulator's event loop).
    pub fn with_timer_lateness(mut self, late: Dur) -> Fake {
        self.net.timer_lateness = late;
        self
    }

    /// Adds an application; returns its index. Start them with [`Fake::start`].
    pub fn add(&mut self, app: impl App + 'static) -> usize {
        self.apps.push(Box::new(app));
        self.apps.len() - 1
    }

    /// Calls every application's `start` (in order) now, then tells them what followed.
    pub fn start(&mut self) {
        for (i, app) in self.apps.iter_mut().enumerate() {
            self.net.app = i;
            app.start(&mut self.net);
        }
        self.drain();
    }

    pub fn now(&self) -> Time {
        self.net.now
    }

    /// Fires everything due up to `end` in order, then sets the clock to `end`.
    pub fn run_until(&mut self, end: Time) {
        self.drain();
        let mut spin = (self.net.now, 0u64);
        while let Some(entry) = self.net.queue.first_entry() {
            let at = entry.key().0;
            if at > end {
                break;
            }
            let due = entry.remove();
            spin = if at == spin.0 { (at, spin.1 + 1) } else { (at, 0) };
            assert!(spin.1 < SPIN_LIMIT, "fake transport: {SPIN_LIMIT} items due at {at} ns: an application sets timers for now for ever");
            self.net.now = at;
            self.net.fire(due);
            self.drain();
        }
        self.net.now = self.net.now.max(end);
    }

    /// [`Fake::run_until`] `d` from now.
    pub fn advance(&mut self, d: Dur) {
        self.run_until(self.net.now + d);
    }

    /// When the next timer or network event falls due.
    pub fn next_due(&self) -> Option<Time> {
        self.net.queue.keys().next().map(|k| k.0)
    }

    /// The handshake of `conn` completes now: `Connected` to its
    /// application, then `Accepted` to the one listening on its port, if
    /// any (without one, the connection has no peer and the test plays it).
    pub fn establish(&mut self, conn: ConnId) {
        self.net.establish(conn);
        self.drain();
    }

    /// The connect of `conn` is refused now: `Reset` to its application
    /// (in loopback too, while its handshake is on its way).
    pub fn refuse(&mut self, conn: ConnId) {
        self.net.refuse(conn);
        self.drain();
    }

    /// In loopback, connects to `host:port` are refused from now on.
    pub fn refuse_port(&mut self, host: HostId, port: u16) {
        self.net.refused.insert((host, port));
    }

    /// Everything written on `conn` so far, its marks and its close (or
    /// abort), arrives at its peer now.
    pub fn deliver(&mut self, conn: ConnId) {
        if let Some(c) = self.net.get(conn) {
            let (upto, fin, aborted, peer) = (c.written, c.closed.is_some(), c.aborted, c.peer);
            match (aborted, peer) {
                (true, Some(p)) => self.net.fire(Due::Reset(p)),
                (true, None) => {}
                (false, _) => self.net.fire(Due::Arrive { conn, upto, fin }),
            }
        }
        self.drain();
    }

    /// `Reset` to the end `conn` now, if it is still open: an RST reached
    /// it, or its TCP gave up (which, in the simulator as in Linux, sends
    /// none: its peer hears nothing unless the test resets it too).
    pub fn reset(&mut self, conn: ConnId) {
        self.net.fire(Due::Reset(conn));
        self.drain();
    }

    /// Tells application `app` `event` now (the test playing the network).
    pub fn event(&mut self, app: usize, event: Event) {
        self.net.pending.push_back((app, event));
        self.drain();
    }

    pub fn report(&self, app: usize) -> AppReport {
        self.apps[app].report()
    }

    /// A counter of `app`'s report; panics if it has none of that name.
    pub fn counter(&self, app: usize, name: &str) -> f64 {
        let r = self.report(app);
        r.counters.iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("{} has no counter {name}", r.kind)).1
    }

    /// Every call, in order.
    pub fn calls(&self) -> &[Call] {
        &self.net.calls
    }

    /// Every event told, in order.
    pub fn told(&self) -> &[Told] {
        &self.net.told
    }

    /// Every marked message, in the order of their marks.
    pub fn messages(&self) -> &[Message] {
        &self.net.messages
    }

    /// The end `id` (either side); panics if there is none.
    pub fn conn(&self, id: ConnId) -> &Conn {
        self.net.get(id).unwrap_or_else(|| panic!("no connection {id:?}"))
    }

    /// The connecting ends, in the order of their connects.
    pub fn connections(&self) -> impl Iterator<Item = &Conn> {
        self.net.conns.iter().filter(|c| c.client)
    }

    /// The bytes each write on `conn` took, in order.
    pub fn writes(&self, conn: ConnId) -> Vec<u64> {
        self.net.calls.iter().filter_map(|c| matches!(c.op, Op::Write { conn: w, .. } if w == conn).then_some(c.op.took())).collect()
    }

    /// Every datagram sent, in order.
    pub fn datagrams(&self) -> Vec<Datagram> {
        let of = |c: &Call| match c.op {
            Op::SendUdp { from, src_port, to, dst_port, payload } => Some(Datagram { at: c.at, from, src_port, to, dst_port, payload }),
            _ => None,
        };
        self.net.calls.iter().filter_map(of).collect()
    }

    /// Tells the applications what is pending, in order.
    fn drain(&mut self) {
        while let Some((app, event)) = self.net.pending.pop_front() {
            self.net.told.push(Told { at: self.net.now, app, event });
            if let Some(a) = self.apps.get_mut(app) {
                self.net.app = app;
                a.on_event(event, &mut self.net);
            }
        }
    }
}

impl Op {
    fn took(&self) -> u64 {
        match *self {
            Op::Write { took, .. } => took,
            _ => 0,
        }
    }
}

impl Net {
    fn get(&self, id: ConnId) -> Option<&Conn> {
        self.conns.get((id.0 as usize).wrapping_sub(1))
    }

    fn get_mut(&mut self, id: ConnId) -> Option<&mut Conn> {
        self.conns.get_mut((id.0 as usize).wrapping_sub(1))
    }

    fn live_mut(&mut self, id: ConnId) -> Option<&mut Conn> {
        self.get_mut(id).filter(|c| c.live())
    }

    fn record(&mut self, op: Op) {
        self.calls.push(Call { at: self.now, app: self.app, op });
    }

    fn schedule(&mut self, at: Time, due: Due) {
        self.seq += 1;
        self.queue.insert((at.max(self.now), self.seq), due);
    }

    /// In loopback, after the delay.
    fn later(&mut self, due: Due) {
        if let Some(d) = self.delay {
            self.schedule(self.now + d, due);
        }
    }

    fn tell(&mut self, app: usize, event: Event) {
        self.pending.push_back((app, event));
    }

    fn new_conn(&mut self, app: usize, client: bool, host: HostId, remote: HostId, port: u16) -> ConnId {
        let id = ConnId(self.conns.len() as u64 + 1);
        self.conns.push(Conn {
            id,
            app,
            client,
            host,
            remote,
            port,
            peer: None,
            opened: self.now,
            established: None,
            written: 0,
            delivered: 0,
            closed: None,
            ended: None,
            reset: false,
            greedy: false,
            aborted: false,
            marks: VecDeque::new(),
            current: None,
            want_writable: false,
            sent: 0,
            fin_sent: false,
            fin_arrived: false,
        });
        id
    }

    fn space(&self, c: &Conn) -> u64 {
        self.send_buffer.map_or(u64::MAX, |b| b.saturating_sub(c.written - c.delivered))
    }

    /// In loopback, puts what `conn` wrote (and its FIN) on its way.
    fn flush(&mut self, conn: ConnId) {
        if self.delay.is_none() {
            return;
        }
        let Some(c) = self.live_mut(conn) else { return };
        if c.established.is_none() || (c.sent == c.written && c.fin_sent == c.closed.is_some()) {
            return;
        }
        (c.sent, c.fin_sent) = (c.written, c.closed.is_some());
        let due = Due::Arrive { conn, upto: c.written, fin: c.fin_sent };
        self.later(due);
    }

    fn establish(&mut self, conn: ConnId) {
        let now = self.now;
        let Some(c) = self.live_mut(conn).filter(|c| c.client && c.established.is_none()) else { return };
        c.established = Some(now);
        let (app, from, to, port) = (c.app, c.host, c.remote, c.port);
        self.tell(app, Event::Connected(conn));
        if let Some(&server) = self.listeners.get(&(to, port)) {
            let s = self.new_conn(server, false, to, from, port);
            let sc = self.get_mut(s).expect("just made");
            (sc.established, sc.peer) = (Some(now), Some(conn));
            self.get_mut(conn).expect("live").peer = Some(s);
            self.tell(server, Event::Accepted { conn: s, host: to, port, peer: from });
        }
        self.flush(conn);
    }

    fn refuse(&mut self, conn: ConnId) {
        if self.get(conn).is_some_and(|c| c.established.is_none()) {
            self.fire(Due::Reset(conn));
        }
    }

    fn fire(&mut self, due: Due) {
        match due {
            Due::Timer { app, token } => self.tell(app, Event::Timer(token)),
            Due::Tell { app, event } => self.tell(app, event),
            Due::Establish(conn) => self.establish(conn),
            Due::Refuse(conn) => self.refuse(conn),
            Due::Reset(conn) => {
                let now = self.now;
                if let Some(c) = self.live_mut(conn) {
                    (c.ended, c.reset) = (Some(now), true);
                    let app = c.app;
                    self.tell(app, Event::Reset(conn));
                }
            }
            Due::Arrive { conn, upto, fin } => self.arrive(conn, upto, fin),
        }
    }

    /// `conn`'s bytes up to `upto` reached its peer, and its FIN with `fin`.
    fn arrive(&mut self, conn: ConnId, upto: u64, fin: bool) {
        let now = self.now;
        let Some(c) = self.get(conn).filter(|c| c.live()) else { return };
        let to = c.peer.and_then(|p| self.get(p)).filter(|p| p.live()).map(|p| (p.id, p.app, p.fin_arrived));
        let c = self.get_mut(conn).expect("live");
        c.delivered = c.delivered.max(upto.min(c.written));
        // Marks wait while there is no peer to tell (before the handshake).
        let mut marks = Vec::new();
        while c.peer.is_some() && c.marks.front().is_some_and(|&(off, _)| off <= c.delivered) {
            marks.push(c.marks.pop_front().expect("a mark").1);
        }
        let writable = c.want_writable && self.space(self.get(conn).expect("live")) > 0;
        let c = self.get_mut(conn).expect("live");
        c.want_writable &= !writable;
        let (app, newly_fin) = (c.app, fin && !c.fin_arrived);
        c.fin_arrived |= fin;
        if let Some((p, papp, _)) = to {
            for i in marks {
                self.messages[i].delivered = Some(now);
                let msg = self.messages[i].msg;
                self.tell(papp, Event::Message { conn: p, msg });
            }
        }
        if writable {
            self.tell(app, Event::Writable(conn));
        }
        if let (true, Some((p, papp, both))) = (newly_fin, to) {
            self.tell(papp, Event::PeerClosed(p));
            if both {
                self.get_mut(p).expect("live").ended = Some(now);
                self.get_mut(conn).expect("live").ended = Some(now);
                self.tell(papp, Event::Closed(p));
                self.tell(app, Event::Closed(conn));
            }
        }
    }
}

impl Transport for Net {
    fn now(&self) -> Time {
        self.now
    }

    fn listen(&mut self, host: HostId, port: u16) {
        self.record(Op::Listen { host, port });
        self.listeners.insert((host, port), self.app);
    }

    fn connect(&mut self, from: HostId, to: HostId, port: u16) -> ConnId {
        let conn = self.new_conn(self.app, true, from, to, port);
        self.record(Op::Connect { conn, from, to, port });
        if self.listeners.contains_key(&(to, port)) && !self.refused.contains(&(to, port)) {
            self.later(Due::Establish(conn));
        } else {
            self.later(Due::Refuse(conn));
        }
        conn
    }

    fn write(&mut self, conn: ConnId, bytes: u64) -> u64 {
        let now = self.now;
        let space = self.get(conn).filter(|c| c.live() && c.closed.is_none()).map_or(0, |c| self.space(c));
        let took = bytes.min(space);
        self.record(Op::Write { conn, bytes, took });
        if let Some(c) = self.get_mut(conn).filter(|c| c.live() && c.closed.is_none()) {
            c.written += took;
            c.want_writable = took < bytes;
            if took > 0 {
                let (start, b, w) = c.current.unwrap_or((now, 0, 0));
                c.current = Some((start, b + took, w + 1));
            }
        }
        self.flush(conn);
        took
    }

    fn send_space(&self, conn: ConnId) -> u64 {
        self.get(conn).filter(|c| c.live() && c.closed.is_none()).map_or(0, |c| self.space(c))
    }

    fn write_forever(&mut self, conn: ConnId) {
        self.record(Op::WriteForever { conn });
        if let Some(c) = self.live_mut(conn) {
            c.greedy = true;
        }
    }

    fn mark(&mut self, conn: ConnId, msg: u64) {
        let now = self.now;
        self.record(Op::Mark { conn, msg });
        let index = self.messages.len();
        let Some(c) = self.live_mut(conn) else { return };
        let (started, bytes, writes) = c.current.take().unwrap_or((now, 0, 0));
        let m = Message { conn, client: c.client, msg, bytes, writes, started, marked: now, delivered: None };
        c.marks.push_back((c.written, index));
        let ready = c.delivered >= c.written;
        self.messages.push(m);
        // The peer already holds every byte before the mark.
        if ready {
            self.arrive(conn, 0, false);
        }
    }

    fn close(&mut self, conn: ConnId) {
        let now = self.now;
        self.record(Op::Close { conn });
        if let Some(c) = self.live_mut(conn).filter(|c| c.closed.is_none()) {
            c.closed = Some(now);
            c.greedy = false;
            self.flush(conn);
        }
    }

    fn abort(&mut self, conn: ConnId) {
        let now = self.now;
        self.record(Op::Abort { conn });
        if let Some(c) = self.live_mut(conn) {
            (c.ended, c.reset, c.aborted) = (Some(now), true, true);
            if let Some(p) = c.peer {
                self.later(Due::Reset(p));
            }
        }
    }

    fn bind_udp(&mut self, host: HostId, port: u16) {
        self.record(Op::BindUdp { host, port });
        self.bound.insert((host, port), self.app);
    }

    fn send_udp(&mut self, from: HostId, src_port: u16, to: HostId, dst_port: u16, payload: u32) {
        self.record(Op::SendUdp { from, src_port, to, dst_port, payload });
        if let Some(&app) = self.bound.get(&(to, dst_port)) {
            self.later(Due::Tell { app, event: Event::Datagram { host: to, port: dst_port, from, bytes: payload } });
        }
    }

    fn set_timer(&mut self, at: Time, token: u64) {
        self.record(Op::SetTimer { at, token });
        let app = self.app;
        self.schedule(at + self.timer_lateness, Due::Timer { app, token });
    }
}

/// The test's own calls, made as application 0's (for code tested
/// without an [`App`] around it).
impl Transport for Fake {
    fn now(&self) -> Time {
        self.net.now
    }
    fn listen(&mut self, host: HostId, port: u16) {
        self.net.app = 0;
        self.net.listen(host, port)
    }
    fn connect(&mut self, from: HostId, to: HostId, port: u16) -> ConnId {
        self.net.app = 0;
        self.net.connect(from, to, port)
    }
    fn write(&mut self, conn: ConnId, bytes: u64) -> u64 {
        self.net.app = 0;
        self.net.write(conn, bytes)
    }
    fn send_space(&self, conn: ConnId) -> u64 {
        self.net.send_space(conn)
    }
    fn write_forever(&mut self, conn: ConnId) {
        self.net.app = 0;
        self.net.write_forever(conn)
    }
    fn mark(&mut self, conn: ConnId, msg: u64) {
        self.net.app = 0;
        self.net.mark(conn, msg)
    }
    fn close(&mut self, conn: ConnId) {
        self.net.app = 0;
        self.net.close(conn)
    }
    fn abort(&mut self, conn: ConnId) {
        self.net.app = 0;
        self.net.abort(conn)
    }
    fn bind_udp(&mut self, host: HostId, port: u16) {
        self.net.app = 0;
        self.net.bind_udp(host, port)
    }
    fn send_udp(&mut self, from: HostId, src_port: u16, to: HostId, dst_port: u16, payload: u32) {
        self.net.app = 0;
        self.net.send_udp(from, src_port, to, dst_port, payload)
    }
    fn set_timer(&mut self, at: Time, token: u64) {
        self.net.app = 0;
        self.net.set_timer(at, token)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::responder::request_mark;
    use crate::Responder;

    fn ms(n: u64) -> Time {
        Time::ZERO + Dur::from_millis(n)
    }

    /// An application made of a closure: told `None` at its start.
    struct Script<F>(F);

    impl<F: FnMut(Option<Event>, &mut dyn Transport)> App for Script<F> {
        fn start(&mut self, tp: &mut dyn Transport) {
            (self.0)(None, tp)
        }
        fn on_event(&mut self, ev: Event, tp: &mut dyn Transport) {
            (self.0)(Some(ev), tp)
        }
        fn report(&self) -> AppReport {
            AppReport::default()
        }
    }

    /// Host 1 asks host 2 (port 80) for 500 bytes with a 100-byte request,
    /// and closes once they are in; host 2 answers through a `Responder`.
    fn fetch() -> impl App {
        let mut server = Responder::default();
        Script(move |ev: Option<Event>, tp: &mut dyn Transport| match ev {
            None => {
                tp.listen(2, 80);
                tp.connect(1, 2, 80);
            }
            Some(ev) if server.on_event(&ev, tp, &mut |_, b| b) => {}
            Some(Event::Connected(c)) => {
                tp.write(c, 100);
                tp.mark(c, request_mark(500, Dur::ZERO));
            }
            Some(Event::Message { conn, .. } | Event::PeerClosed(conn)) => tp.close(conn),
            Some(_) => {}
        })
    }

    #[test]
    fn loopback_carries_a_request_and_its_response_each_after_the_delay() {
        let mut f = Fake::loopback(Dur::from_millis(10));
        f.add(fetch());
        f.start();
        f.run_until(ms(1000));
        let c = f.connections().next().expect("a connection").clone();
        assert_eq!((c.host, c.remote, c.port, c.opened, c.established), (1, 2, 80, ms(0), Some(ms(10))));
        let s = f.conn(c.peer.expect("accepted")).clone();
        assert!(!s.client && s.peer == Some(c.id) && s.written == 500);
        let m = f.messages();
        assert_eq!(m.len(), 2);
        assert_eq!((m[0].client, m[0].bytes, m[0].writes, m[0].started, m[0].delivered), (true, 100, 1, ms(10), Some(ms(20))));
        assert_eq!((m[1].client, m[1].bytes, m[1].msg, m[1].marked, m[1].delivered), (false, 500, 500, ms(20), Some(ms(30))));
        // The client closes at 30 ms; its FIN reaches the server at 40,
        // which closes; that FIN at 50 ends both.
        let told: Vec<(Time, Event)> = f.told().iter().map(|t| (t.at, t.event)).collect();
        let (cc, sc) = (c.id, s.id);
        assert_eq!(
            told,
            vec![
                (ms(10), Event::Connected(cc)),
                (ms(10), Event::Accepted { conn: sc, host: 2, port: 80, peer: 1 }),
                (ms(20), Event::Message { conn: sc, msg: request_mark(500, Dur::ZERO) }),
                (ms(30), Event::Message { conn: cc, msg: 500 }),
                (ms(40), Event::PeerClosed(sc)),
                (ms(50), Event::PeerClosed(cc)),
                (ms(50), Event::Closed(cc)),
                (ms(50), Event::Closed(sc)),
            ]
        );
        assert_eq!((f.conn(cc).closed, f.conn(cc).ended, f.conn(sc).ended), (Some(ms(30)), Some(ms(50)), Some(ms(50))));
        // The client's second close (on PeerClosed) is recorded, and harmless.
        assert_eq!(f.calls().iter().filter(|k| k.op == Op::Close { conn: cc }).count(), 2);
        assert_eq!(f.now(), ms(1000));
    }

    #[test]
    fn in_manual_mode_nothing_moves_until_the_test_says() {
        let mut f = Fake::new();
        f.add(fetch());
        f.start();
        f.run_until(ms(100));
        let c = f.connections().next().expect("a connection").id;
        assert!(f.told().is_empty() && f.next_due().is_none());
        f.establish(c);
        let s = f.conn(c).peer.expect("accepted");
        assert_eq!(f.messages().len(), 1, "the request is written and waits");
        f.run_until(ms(200));
        f.deliver(c);
        assert_eq!(f.messages()[0].delivered, Some(ms(200)));
        assert_eq!(f.messages()[1].delivered, None, "the response waits too");
        f.deliver(s);
        assert_eq!(f.messages()[1].delivered, Some(ms(200)));
        f.deliver(c);
        assert_eq!(f.told().last().map(|t| t.event), Some(Event::PeerClosed(s)));
        f.deliver(s);
        assert_eq!(f.conn(c).ended, Some(ms(200)));
        // A refused connect, and a reset connection, are told to their ends.
        let mut f = Fake::new();
        f.add(fetch());
        f.start();
        f.refuse(ConnId(1));
        assert_eq!(f.told()[0].event, Event::Reset(ConnId(1)));
        assert!(f.conn(ConnId(1)).reset);
        let mut f = Fake::new();
        f.add(fetch());
        f.start();
        f.establish(ConnId(1));
        f.reset(ConnId(1));
        f.reset(ConnId(2));
        let resets: Vec<Event> = f.told().iter().skip(2).map(|t| t.event).collect();
        assert_eq!(resets, vec![Event::Reset(ConnId(1)), Event::Reset(ConnId(2))]);
    }

    #[test]
    fn connects_to_a_port_nobody_listens_on_or_a_refused_one_are_reset() {
        let mut f = Fake::loopback(Dur::from_millis(5));
        f.add(Script(|ev: Option<Event>, tp: &mut dyn Transport| {
            if ev.is_none() {
                tp.listen(2, 80);
                tp.connect(1, 2, 81);
                tp.connect(1, 3, 80);
                tp.connect(1, 2, 80);
            }
        }));
        f.refuse_port(3, 80);
        f.start();
        f.run_until(ms(10));
        let told: Vec<(Time, Event)> = f.told().iter().map(|t| (t.at, t.event)).take(3).collect();
        assert_eq!(told, vec![(ms(5), Event::Reset(ConnId(1))), (ms(5), Event::Reset(ConnId(2))), (ms(5), Event::Connected(ConnId(3)))]);
    }

    #[test]
    fn timers_fire_in_time_order_then_in_the_order_they_were_set() {
        let mut f = Fake::loopback(Dur::ZERO);
        f.add(Script(|ev: Option<Event>, tp: &mut dyn Transport| match ev {
            None => {
                tp.set_timer(ms(30), 1);
                tp.set_timer(ms(10), 2);
                tp.set_timer(ms(10), 3);
            }
            // A timer set for the past fires now, after those already due.
            Some(Event::Timer(2)) => tp.set_timer(ms(5), 4),
            Some(_) => {}
        }));
        f.start();
        f.run_until(ms(20));
        let fired: Vec<(Time, Event)> = f.told().iter().map(|t| (t.at, t.event)).collect();
        assert_eq!(fired, vec![(ms(10), Event::Timer(2)), (ms(10), Event::Timer(3)), (ms(10), Event::Timer(4))]);
        assert_eq!((f.now(), f.next_due()), (ms(20), Some(ms(30))));
        f.advance(Dur::from_millis(10));
        assert_eq!(f.told().last().map(|t| (t.at, t.event)), Some((ms(30), Event::Timer(1))));
    }

    #[test]
    fn a_short_write_is_followed_by_writable_once_bytes_arrive() {
        // No application: the test's own calls, as application 0's.
        let mut f = Fake::loopback(Dur::from_millis(1)).with_send_buffer(1000);
        f.listen(2, 80);
        let c = f.connect(1, 2, 80);
        assert_eq!(f.write(c, 2500), 1000, "before the handshake, into the buffer");
        assert_eq!(f.send_space(c), 0);
        f.run_until(ms(1));
        assert_eq!(f.conn(c).established, Some(ms(1)));
        f.run_until(ms(2));
        assert_eq!(f.told().last().map(|t| (t.app, t.event)), Some((0, Event::Writable(c))));
        assert_eq!((f.write(c, 1500), f.write(c, 500)), (1000, 0));
        f.mark(c, 9);
        f.run_until(ms(3));
        assert_eq!(f.writes(c), vec![1000, 1000, 0]);
        let m = &f.messages()[0];
        assert_eq!((m.bytes, m.writes, m.started, m.delivered), (2000, 2, ms(0), Some(ms(3))));
    }

    #[test]
    fn datagrams_reach_a_bound_port_after_the_delay() {
        let mut f = Fake::loopback(Dur::from_millis(3));
        f.bind_udp(2, 53);
        f.send_udp(1, 1000, 2, 53, 40);
        f.send_udp(1, 1000, 2, 54, 40);
        f.run_until(ms(10));
        assert_eq!(f.datagrams().len(), 2);
        let told: Vec<(Time, Event)> = f.told().iter().map(|t| (t.at, t.event)).collect();
        assert_eq!(told, vec![(ms(3), Event::Datagram { host: 2, port: 53, from: 1, bytes: 40 })]);
    }
}
