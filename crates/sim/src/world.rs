//! The simulated network in motion: packets through links and routers,
//! segments into TCP endpoints, and application events out.

use crate::capture::Capture;
use crate::engine::{Ev, EventQueue};
use crate::ip::{self, Fragment, Reassembly};
use crate::packet::{Body, Head, Pkt, Slab, NO_CONN, UDP_HEADER};
use crate::prefetch;
use crate::timers::AppTimers;
use crate::topology::{Host, EPHEMERAL_FIRST, EPHEMERAL_LAST};
use net::fabric::{Fabric, Next};
use net::monitor::Monitor;
use net::Packet;
use rundir::{ConnLog, ConnRow, TcpTotals};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use std::sync::Arc;
use tcp::{Notify, Segment, State, Tcp, TcpConfig, TcpStats};
use traffic::{ConnId, Event, HostId};
use units::{Dur, Opt, Time};

/// How long a connection that closed first (TIME-WAIT) keeps answering a
/// retransmitted FIN before its state is released.
pub const TIME_WAIT: Dur = Dur::from_secs(2);

/// Laid out in declaration order (`repr(C)`): the engine's fields lead,
/// those a segment is checked against (hosts, ports, the table's lead)
/// last, next to the endpoint, which is laid out likewise (see [`Tcp`]).
#[repr(C)]
pub struct Conn {
    pub opened: Time,
    /// The other end, which holds the marks for what we receive.
    pub peer: Opt<ConnId>,
    /// Bytes the app has written; marks are placed at this offset.
    pub written: u64,
    /// In-order bytes received.
    pub delivered: u64,
    /// The offset of the peer's first mark not yet reached here, if the
    /// peer has one: data below it is delivered without visiting the peer.
    next_mark: Opt<u64>,
    pub release_at: Opt<Time>,
    /// Our marks not yet reached by the peer: (offset, message).
    pub marks: VecDeque<(u64, u64)>,
    pub app: u32,
    pub host: HostId,
    pub rhost: HostId,
    pub lport: u16,
    pub rport: u16,
    /// Accepted from a listener (rather than opened by `connect`).
    pub passive: bool,
    pub greedy: bool,
    pub want_writable: bool,
    /// The demultiplexing table leads to it (it can lose its entry to a
    /// later connection of the same addresses and ports).
    routed: bool,
    /// Its host's IP header bytes, which every segment it sends needs: kept
    /// here, in room the fields above leave, so that sending reads no host.
    ip_header: u8,
    pub tcp: Tcp,
}

impl Conn {
    /// `peer` is known for an accepted connection (the connecting end); an
    /// active one learns it when the other end accepts.
    fn new(tcp: Tcp, app: u32, local: (HostId, u16), remote: (HostId, u16), peer: Option<ConnId>, now: Time) -> Conn {
        Conn {
            tcp,
            app,
            host: local.0,
            lport: local.1,
            rhost: remote.0,
            rport: remote.1,
            passive: peer.is_some(),
            peer: peer.into(),
            written: 0,
            delivered: 0,
            marks: VecDeque::new(),
            next_mark: Opt::NONE,
            greedy: false,
            want_writable: false,
            release_at: Opt::NONE,
            opened: now,
            routed: true,
            ip_header: 0,
        }
    }
}

/// What an open connection costs the engine, the contents of its buffers
/// aside: its state in its slot, its slot's pending deadline and
/// generation, and its demultiplexing entry (key, slot and the table's
/// control byte).
pub const CONNECTION_BYTES: usize =
    std::mem::size_of::<Option<Conn>>() + std::mem::size_of::<Opt<Time>>() + std::mem::size_of::<u32>() + std::mem::size_of::<(DemuxKey, u32)>() + 1;

/// A connection's record.
fn conn_row(c: &Conn, closed: Option<Time>) -> ConnRow {
    let s = c.tcp.stats();
    ConnRow {
        app: c.app,
        active: !c.passive,
        host: c.host,
        peer: c.rhost,
        local_port: c.lport,
        remote_port: c.rport,
        opened_s: c.opened.as_secs_f64(),
        closed_s: closed.map_or(f64::NAN, Time::as_secs_f64),
        bytes_acked: s.bytes_acked,
        bytes_received: c.delivered,
        segments_sent: s.segs_sent,
        retransmits: s.retransmits.into(),
        fast_recoveries: s.fast_recoveries.into(),
        rtos: s.rtos.into(),
        srtt_s: c.tcp.srtt().map_or(f64::NAN, |d| d.as_secs_f64()),
    }
}

/// Adds a connection's counters to its model's totals.
fn add_stats(t: &mut TcpTotals, s: &TcpStats) {
    t.segments += s.segs_sent;
    t.retransmits += u64::from(s.retransmits);
    t.fast_recoveries += u64::from(s.fast_recoveries);
    t.rtos += u64::from(s.rtos);
}

#[derive(Clone, Copy, Debug, Default)]
pub struct Counters {
    pub events: u64,
    /// TCP connections open now, and the most open at once.
    pub open_conns: u64,
    pub peak_open_conns: u64,
    /// Segments for which no connection or listener exists.
    pub stray_segments: u64,
    /// Datagrams to a port nobody bound.
    pub stray_datagrams: u64,
}

/// A connection's addresses and ports: 12 bytes, so that a table entry
/// with its slot is 16.
type DemuxKey = [u32; 3];

fn demux_key(host: HostId, lport: u16, rhost: HostId, rport: u16) -> DemuxKey {
    [host, rhost, (lport as u32) << 16 | rport as u32]
}

pub fn conn_id(idx: u32, gen: u32) -> ConnId {
    ConnId((gen as u64) << 32 | idx as u64)
}

/// The slot a handle names (live or not).
fn conn_slot(id: ConnId) -> u32 {
    (id.0 & 0xffff_ffff) as u32
}

/// What the elements of a path see of packet `idx`.
#[inline(always)]
fn meta(pkts: &Slab, idx: u32) -> Packet {
    let p = pkts.head(idx);
    let mut m = Packet::new(idx, p.size);
    m.handshake = p.handshake;
    m.ecn_capable = p.ecn_capable;
    m.ce = p.ce;
    m.flow = Packet::flow_of(p.src, p.dst, p.sport, p.dport);
    m
}

pub struct World {
    pub now: Time,
    pub events: EventQueue,
    pub pkts: Slab,
    /// The paths and routes packets take.
    pub fabric: Fabric,
    /// Each path's pending wake-up event, if any.
    wake_at: Vec<Option<Time>>,
    /// The hosts as endpoints: address, TCP settings, ports.
    pub hosts: Vec<Host>,
    /// Each distinct TCP setting once, shared by its hosts' connections.
    pub tcp_cfgs: Vec<Arc<TcpConfig>>,
    pub conns: Vec<Option<Conn>>,
    gens: Vec<u32>,
    /// Per connection slot, the time of its pending timer event, if any:
    /// apart from the connections, so that an event an earlier deadline
    /// superseded costs no visit to one.
    timer_at: Vec<Opt<Time>>,
    free_conns: Vec<u32>,
    demux: FxHashMap<DemuxKey, u32>,
    listeners: FxHashMap<(HostId, u16), u32>,
    udp: FxHashMap<(HostId, u16), u32>,
    /// Application events waiting to be delivered, in order.
    pub pending: VecDeque<(u32, Event)>,
    out: Vec<Segment>,
    pub monitors: Vec<Monitor>,
    pub capture: Option<Capture>,
    pub counters: Counters,
    /// Per application: TCP counters of its finished and live connections.
    pub app_tcp: Vec<TcpTotals>,
    pub conn_log: ConnLog,
    /// How late applications' timers fire, if not on time.
    pub app_timers: Option<AppTimers>,
    /// What elements let go when woken, reused.
    released: Vec<(Packet, Next)>,
    /// The number of the next datagram cut into fragments, and the
    /// receivers' fragments of incomplete ones.
    next_datagram: u32,
    reassembly: Reassembly,
}

impl World {
    /// A world whose network is `fabric` (hosts are added to both).
    pub fn new(fabric: Fabric) -> World {
        World {
            now: Time::ZERO,
            events: EventQueue::default(),
            pkts: Slab::default(),
            fabric,
            wake_at: Vec::new(),
            hosts: Vec::new(),
            tcp_cfgs: Vec::new(),
            conns: Vec::new(),
            gens: Vec::new(),
            timer_at: Vec::new(),
            free_conns: Vec::new(),
            demux: FxHashMap::default(),
            listeners: FxHashMap::default(),
            udp: FxHashMap::default(),
            pending: VecDeque::new(),
            out: Vec::with_capacity(64),
            monitors: Vec::new(),
            capture: None,
            counters: Counters::default(),
            app_tcp: Vec::new(),
            conn_log: ConnLog::default(),
            app_timers: None,
            released: Vec::new(),
            next_datagram: 0,
            reassembly: Reassembly::default(),
        }
    }

    /// Makes room for the wake-ups of every path the fabric has.
    pub fn paths_added(&mut self) {
        self.wake_at.resize(self.fabric.paths.len(), None);
    }

    // ---- packets through the network ----

    /// What the elements of a path see of a packet.
    #[inline(always)]
    fn meta(&self, idx: u32) -> Packet {
        meta(&self.pkts, idx)
    }

    /// A host hands a packet to its access path.
    #[inline]
    fn inject(&mut self, host: HostId, p: Pkt) {
        let idx = self.pkts.insert(p);
        let mut m = self.meta(idx);
        let next = self.fabric.send(self.now, host, &mut m);
        self.carry_mark(&m);
        self.next(idx, next);
    }

    /// Does what the fabric says comes next for packet `pkt`.
    #[inline(always)]
    fn next(&mut self, pkt: u32, next: Next) {
        match next {
            Next::Arrive { path, at } => self.events.push(at, Ev::Arrive { path, pkt }),
            Next::Resume { path, stage, at } => self.events.push(at, Ev::Resume { path, pkt, stage }),
            Next::Held { path } => self.rearm_path(path),
            Next::Dropped { path, at, .. } => {
                if let Some(m) = self.fabric.paths[path as usize].monitor {
                    self.monitors[m as usize].dropped(at);
                }
                self.pkts.remove(pkt);
            }
            Next::Deliver { .. } => self.receive(pkt),
        }
    }

    /// Keeps one pending wake-up per path, at its elements' earliest.
    fn rearm_path(&mut self, path: u32) {
        if let Some(t) = self.fabric.poll_at(path) {
            let t = t.max(self.now);
            let w = &mut self.wake_at[path as usize];
            if w.is_none_or(|w| t < w) {
                *w = Some(t);
                self.events.push(t, Ev::Wake { path });
            }
        }
    }

    /// A packet reaches an element of `path` that sees it at its own time.
    pub fn resume(&mut self, path: u32, pkt: u32, stage: u32) {
        let mut m = self.meta(pkt);
        let src = self.pkts.head(pkt).src;
        let next = self.fabric.resume(self.now, path, stage, src, &mut m);
        self.carry_mark(&m);
        self.next(pkt, next);
    }

    /// Puts on the packet itself a CE mark an element set on what it saw.
    #[inline(always)]
    fn carry_mark(&mut self, m: &Packet) {
        if m.ce && !self.pkts.head(m.id).ce {
            self.pkts.mark_ce(m.id);
        }
    }

    /// Elements of `path` asked to be woken now.
    pub fn wake(&mut self, path: u32) {
        if self.wake_at[path as usize] != Some(self.now) {
            return; // superseded by an earlier wake-up
        }
        self.wake_at[path as usize] = None;
        let mut released = std::mem::take(&mut self.released);
        self.fabric.wake(self.now, path, &mut released);
        for (m, next) in released.drain(..) {
            self.carry_mark(&m);
            self.next(m.id, next);
        }
        self.released = released;
        self.rearm_path(path);
    }

    /// Brings into cache what event `ev` reads first: the packet's head and
    /// its path with its wiring, or the connection's pending deadline.
    #[inline]
    pub fn prefetch(&self, ev: Ev) {
        match ev {
            Ev::Arrive { path, pkt } | Ev::Resume { path, pkt, .. } => {
                prefetch::hint(self.pkts.head(pkt));
                prefetch::hint(&self.fabric.paths[path as usize]);
            }
            Ev::Tcp { conn } => prefetch::hint(&self.timer_at[conn as usize]),
            Ev::Wake { .. } | Ev::App { .. } => {}
        }
    }

    /// Brings into cache what event `ev` at `at` reads next, from what
    /// [`World::prefetch`] brought: the path a packet reaching the end of
    /// its path goes on to (its wiring and elements), or the segment
    /// and connection it is delivered to and the path the receiver answers
    /// on; the connection whose deadline is due.
    #[inline]
    pub fn prefetch_next(&self, at: Time, ev: Ev) {
        match ev {
            Ev::Arrive { path, pkt } => {
                let h = self.pkts.head(pkt);
                match self.fabric.next_path(path, h.src, h.dst) {
                    Some(on) => prefetch::hint(&self.fabric.paths[on as usize]),
                    None => {
                        prefetch::hint(&self.fabric.paths[self.fabric.uplink(h.dst) as usize]);
                        prefetch::hint(self.pkts.body(pkt));
                        if let Some(c) = self.conns.get(h.conn as usize) {
                            prefetch::hint(c);
                        }
                    }
                }
            }
            Ev::Tcp { conn } if self.timer_at[conn as usize].get() == Some(at) => prefetch::hint(&self.conns[conn as usize]),
            _ => {}
        }
    }

    /// A packet's last bit reached the far end of `path`.
    pub fn arrive(&mut self, path: u32, pkt: u32) {
        let Head { src, dst, size, .. } = *self.pkts.head(pkt);
        if let Some(m) = self.fabric.paths[path as usize].monitor {
            self.monitors[m as usize].arrived(self.now, size);
            if let Some(cap) = &mut self.capture {
                let (sa, da) = (self.hosts[src as usize].addr(), self.hosts[dst as usize].addr());
                cap.record(self.now, self.pkts.head(pkt), self.pkts.body(pkt), sa, da, m as usize);
            }
        }
        let (fabric, pkts) = (&mut self.fabric, &self.pkts);
        let (next, ce) = fabric.arrived(self.now, path, src, dst, || meta(pkts, pkt));
        if ce && !self.pkts.head(pkt).ce {
            self.pkts.mark_ce(pkt);
        }
        self.next(pkt, next);
    }

    /// Packet `pkt` reached its destination host; its slot is freed.
    fn receive(&mut self, pkt: u32) {
        let p = *self.pkts.head(pkt);
        let seg = match self.pkts.body(pkt) {
            Body::Tcp(seg) => seg,
            &Body::Udp { payload, frag } => {
                self.pkts.remove(pkt);
                let ipv6 = self.hosts[p.dst as usize].ipv6;
                if frag.is_some_and(|f| !self.reassembly.arrived(self.now, p.src, p.dst, f, ipv6)) {
                    return;
                }
                match self.udp.get(&(p.dst, p.dport)) {
                    Some(&app) => self.pending.push_back((app, Event::Datagram { host: p.dst, port: p.dport, from: p.src, bytes: payload })),
                    None => self.counters.stray_datagrams += 1,
                }
                return;
            }
        };
        if let Some(idx) = self.hinted(&p).or_else(|| self.demux.get(&demux_key(p.dst, p.dport, p.src, p.sport)).copied()) {
            let c = self.conns[idx as usize].as_mut().expect("demux points at a live connection");
            // The segment is read where it lies: most of its bytes (the
            // SACK blocks) are seldom used.
            let n = c.tcp.on_segment(self.now, seg, &mut self.out);
            self.pkts.remove(pkt);
            self.flush(idx);
            self.after(idx, n);
        } else if seg.flags.contains(tcp::Flags::SYN) && !seg.flags.contains(tcp::Flags::ACK) {
            let seg = *seg;
            self.pkts.remove(pkt);
            match self.listeners.get(&(p.dst, p.dport)) {
                Some(&app) => self.accept(app, &p, &seg),
                None => self.counters.stray_segments += 1,
            }
        } else {
            self.pkts.remove(pkt);
            self.counters.stray_segments += 1;
        }
    }

    /// The connection a packet's sender named, if it is the one the
    /// demultiplexing table gives: the same addresses and ports, and still
    /// in the table.
    #[inline]
    fn hinted(&self, p: &Head) -> Option<u32> {
        let c = self.conns.get(p.conn as usize)?.as_ref()?;
        (c.routed && (c.host, c.lport, c.rhost, c.rport) == (p.dst, p.dport, p.src, p.sport)).then_some(p.conn)
    }

    // ---- TCP connections ----

    fn new_conn(&mut self, mut c: Conn) -> u32 {
        c.ip_header = self.hosts[c.host as usize].ip_header() as u8;
        let key = demux_key(c.host, c.lport, c.rhost, c.rport);
        let idx = match self.free_conns.pop() {
            Some(i) => {
                self.conns[i as usize] = Some(c);
                i
            }
            None => {
                self.conns.push(Some(c));
                self.gens.push(0);
                self.timer_at.push(Opt::NONE);
                (self.conns.len() - 1) as u32
            }
        };
        if let Some(old) = self.demux.insert(key, idx) {
            self.conn(old).routed = false;
        }
        self.counters.open_conns += 1;
        self.counters.peak_open_conns = self.counters.peak_open_conns.max(self.counters.open_conns);
        self.app_tcp[self.conns[idx as usize].as_ref().map_or(0, |c| c.app) as usize].connections += 1;
        idx
    }

    fn id(&self, idx: u32) -> ConnId {
        conn_id(idx, self.gens[idx as usize])
    }

    /// The live connection behind a handle, if it is still valid.
    pub fn index(&self, id: ConnId) -> Option<u32> {
        let idx = conn_slot(id);
        let gen = (id.0 >> 32) as u32;
        (self.gens.get(idx as usize) == Some(&gen) && self.conns[idx as usize].is_some()).then_some(idx)
    }

    fn conn(&mut self, idx: u32) -> &mut Conn {
        self.conns[idx as usize].as_mut().expect("live connection")
    }

    fn accept(&mut self, app: u32, p: &Head, syn: &Segment) {
        let cfg = &self.tcp_cfgs[self.hosts[p.dst as usize].tcp_cfg as usize];
        let tcp = Tcp::accept(cfg, self.now, syn, &mut self.out);
        let client = self.demux.get(&demux_key(p.src, p.sport, p.dst, p.dport)).copied();
        let peer = client.map(|i| self.id(i));
        let idx = self.new_conn(Conn::new(tcp, app, (p.dst, p.dport), (p.src, p.sport), peer, self.now));
        if let Some(ci) = client {
            let me = self.id(idx);
            let c = self.conn(ci);
            c.peer = Opt::some(me);
            let first = c.marks.front().map(|m| m.0);
            self.conn(idx).next_mark = first.into();
        }
        self.flush(idx);
        self.rearm(idx);
    }

    pub fn connect(&mut self, app: u32, from: HostId, to: HostId, port: u16) -> ConnId {
        let lport = self.ephemeral_port(from, to, port);
        let cfg = &self.tcp_cfgs[self.hosts[from as usize].tcp_cfg as usize];
        let tcp = Tcp::connect(cfg, self.now, &mut self.out);
        let idx = self.new_conn(Conn::new(tcp, app, (from, lport), (to, port), None, self.now));
        self.flush(idx);
        self.rearm(idx);
        self.id(idx)
    }

    fn ephemeral_port(&mut self, from: HostId, to: HostId, port: u16) -> u16 {
        let span = (EPHEMERAL_LAST - EPHEMERAL_FIRST) as u32 + 1;
        for _ in 0..span {
            let h = &mut self.hosts[from as usize];
            let p = h.next_port;
            h.next_port = if p >= EPHEMERAL_LAST { EPHEMERAL_FIRST } else { p + 1 };
            if !self.demux.contains_key(&demux_key(from, p, to, port)) {
                return p;
            }
        }
        // Every ephemeral port to this destination is busy: reuse the next
        // one, as a host out of ports would fail; the old connection loses
        // its demux entry. Not reachable with the scenarios we build.
        self.hosts[from as usize].next_port
    }

    /// Sends the segments an endpoint produced.
    fn flush(&mut self, idx: u32) {
        if self.out.is_empty() {
            return;
        }
        let mut out = std::mem::take(&mut self.out);
        let c = self.conns[idx as usize].as_ref().expect("live connection");
        let (src, dst, sport, dport) = (c.host, c.rhost, c.lport, c.rport);
        let peer = c.peer.get().map_or(NO_CONN, conn_slot);
        let ip = u32::from(c.ip_header);
        for seg in out.drain(..) {
            let size = ip + seg.header_len() + seg.len;
            let mut p = Pkt::new(src, dst, sport, dport, size, Body::Tcp(seg));
            p.head.conn = peer;
            self.inject(src, p);
        }
        self.out = out;
    }

    /// Turns what an endpoint reported into application events.
    fn after(&mut self, idx: u32, n: Notify) {
        let id = self.id(idx);
        let c = self.conns[idx as usize].as_mut().expect("live connection");
        let app = c.app;
        if n.established {
            let ev = if c.passive { Event::Accepted { conn: id, host: c.host, port: c.lport, peer: c.rhost } } else { Event::Connected(id) };
            self.pending.push_back((app, ev));
        }
        if n.delivered > 0 {
            c.delivered += n.delivered;
            self.deliver_marks(idx);
        }
        let c = self.conns[idx as usize].as_mut().expect("live connection");
        if n.space {
            if c.greedy {
                if c.tcp.refill_due() {
                    c.written += c.tcp.write(self.now, u64::MAX, &mut self.out);
                }
            } else if c.want_writable && c.tcp.writable() {
                c.want_writable = false;
                self.pending.push_back((app, Event::Writable(id)));
            }
        }
        if n.peer_fin {
            self.pending.push_back((app, Event::PeerClosed(id)));
        }
        if n.reset {
            self.app_tcp[app as usize].resets += 1;
            self.pending.push_back((app, Event::Reset(id)));
            self.release(idx);
            return;
        }
        if n.closed {
            self.pending.push_back((app, Event::Closed(id)));
            if c.tcp.state() == State::TimeWait {
                c.release_at = Opt::some(self.now + TIME_WAIT);
            } else {
                self.release(idx);
                return;
            }
        }
        self.flush(idx);
        self.rearm(idx);
    }

    /// Messages whose last byte has now arrived at connection `idx`.
    fn deliver_marks(&mut self, idx: u32) {
        let c = self.conns[idx as usize].as_ref().expect("live connection");
        if c.next_mark.get().is_none_or(|off| off > c.delivered) {
            return;
        }
        let (delivered, app, me) = (c.delivered, c.app, self.id(idx));
        let Some(peer) = c.peer.get().and_then(|p| self.index(p)) else { return };
        let pc = self.conns[peer as usize].as_mut().expect("live peer");
        while let Some(&(off, msg)) = pc.marks.front() {
            if off > delivered {
                break;
            }
            pc.marks.pop_front();
            self.pending.push_back((app, Event::Message { conn: me, msg }));
        }
        if pc.marks.is_empty() {
            // An idle connection keeps no storage for marks.
            pc.marks = VecDeque::new();
        }
        let next = pc.marks.front().map(|m| m.0);
        self.conn(idx).next_mark = next.into();
    }

    /// Keeps one pending timer event per connection, at its earliest deadline.
    fn rearm(&mut self, idx: u32) {
        let c = self.conns[idx as usize].as_mut().expect("live connection");
        let due = match (c.tcp.poll_at(), c.release_at.get()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if let Some(t) = due {
            let t = t.max(self.now);
            let at = &mut self.timer_at[idx as usize];
            if at.get().is_none_or(|p| t < p) {
                *at = Opt::some(t);
                self.events.push(t, Ev::Tcp { conn: idx });
            }
        }
    }

    pub fn tcp_timer(&mut self, idx: u32) {
        let now = self.now;
        // Superseded by an earlier deadline, or the connection is gone:
        // decided without touching the connection.
        if self.timer_at[idx as usize].get() != Some(now) {
            return;
        }
        self.timer_at[idx as usize] = Opt::NONE;
        let c = self.conns[idx as usize].as_mut().expect("a connection with a deadline is live");
        if c.release_at.get().is_some_and(|t| t <= now) {
            self.release(idx);
            return;
        }
        let n = c.tcp.on_timer(now, &mut self.out);
        self.flush(idx);
        self.after(idx, n);
    }

    fn release(&mut self, idx: u32) {
        let c = self.conns[idx as usize].take().expect("live connection");
        // The entry goes, even one a later connection of the same
        // addresses and ports took over.
        if let Some(j) = self.demux.remove(&demux_key(c.host, c.lport, c.rhost, c.rport)) {
            if j != idx {
                self.conn(j).routed = false;
            }
        }
        add_stats(&mut self.app_tcp[c.app as usize], c.tcp.stats());
        self.conn_log.push(&conn_row(&c, Some(self.now)));
        self.gens[idx as usize] = self.gens[idx as usize].wrapping_add(1);
        self.timer_at[idx as usize] = Opt::NONE;
        self.free_conns.push(idx);
        self.counters.open_conns -= 1;
    }

    /// Adds the counters of connections still open at the end of the run.
    pub fn finish_tcp_totals(&mut self) {
        for c in self.conns.iter().flatten() {
            add_stats(&mut self.app_tcp[c.app as usize], c.tcp.stats());
            self.conn_log.push(&conn_row(c, None));
        }
    }

    // ---- the transport operations, for applications ----

    pub fn listen(&mut self, app: u32, host: HostId, port: u16) {
        self.listeners.insert((host, port), app);
    }

    pub fn bind_udp(&mut self, app: u32, host: HostId, port: u16) {
        self.udp.insert((host, port), app);
    }

    /// Sends a datagram, in fragments if it is larger than the MTU.
    pub fn send_udp(&mut self, from: HostId, sport: u16, to: HostId, dport: u16, payload: u32) {
        let ip = self.hosts[from as usize].ip_header();
        let udp_len = UDP_HEADER + payload;
        if ip + udp_len <= net::MTU {
            self.inject(from, Pkt::new(from, to, sport, dport, ip + udp_len, Body::Udp { payload, frag: None }));
            return;
        }
        let (datagram, count) = (self.next_datagram, ip::fragment_sizes(ip, udp_len).count() as u16);
        self.next_datagram = self.next_datagram.wrapping_add(1);
        for (index, (size, offset)) in ip::fragment_sizes(ip, udp_len).enumerate() {
            let frag = Some(Fragment { datagram, index: index as u16, count, offset });
            self.inject(from, Pkt::new(from, to, sport, dport, size, Body::Udp { payload, frag }));
        }
    }

    pub fn write(&mut self, id: ConnId, bytes: u64) -> u64 {
        let Some(idx) = self.index(id) else { return 0 };
        let c = self.conns[idx as usize].as_mut().expect("live connection");
        let took = c.tcp.write(self.now, bytes, &mut self.out);
        c.written += took;
        if took < bytes {
            c.want_writable = true;
        }
        self.flush(idx);
        self.rearm(idx);
        took
    }

    pub fn send_space(&self, id: ConnId) -> u64 {
        self.index(id).and_then(|i| self.conns[i as usize].as_ref()).map_or(0, |c| c.tcp.send_space())
    }

    pub fn write_forever(&mut self, id: ConnId) {
        let Some(idx) = self.index(id) else { return };
        self.conn(idx).greedy = true;
        self.write(id, u64::MAX);
    }

    pub fn mark(&mut self, id: ConnId, msg: u64) {
        let Some(idx) = self.index(id) else { return };
        let c = self.conn(idx);
        let off = c.written;
        c.marks.push_back((off, msg));
        // The peer may already hold every byte before the mark.
        if let Some(peer) = c.peer.get().and_then(|p| self.index(p)) {
            let pc = self.conn(peer);
            if pc.next_mark.is_none() {
                pc.next_mark = Opt::some(off);
            }
            self.deliver_marks(peer);
        }
    }

    pub fn close(&mut self, id: ConnId) {
        let Some(idx) = self.index(id) else { return };
        let c = self.conns[idx as usize].as_mut().expect("live connection");
        c.greedy = false;
        c.tcp.close(self.now, &mut self.out);
        self.flush(idx);
        self.rearm(idx);
    }

    pub fn abort(&mut self, id: ConnId) {
        let Some(idx) = self.index(id) else { return };
        let c = self.conns[idx as usize].as_mut().expect("live connection");
        c.tcp.abort(self.now, &mut self.out);
        self.flush(idx);
        self.release(idx);
    }

    pub fn set_timer(&mut self, app: u32, at: Time, token: u64) {
        // A deadline already reached needs no wake-up: the program is running.
        let at = match &mut self.app_timers {
            Some(t) if at > self.now => at + t.late(app),
            _ => at,
        };
        self.events.push(at.max(self.now), Ev::App { app, token });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An open connection stays under 1 KiB in the engine, so that
    /// hundreds of thousands fit; this fails if its state grows past that.
    #[test]
    fn an_open_connection_costs_under_a_kibibyte() {
        const { assert!(CONNECTION_BYTES < 1024, "an open connection costs 1 KiB or more") };
        assert_eq!(std::mem::size_of::<(DemuxKey, u32)>(), 16);
    }
}
