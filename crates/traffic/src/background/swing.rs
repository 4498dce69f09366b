//! Swing: responsive traffic regenerated from an extracted model.
//!
//! Per application class, sessions start at times drawn from the trace's
//! session-start distribution, repeated every trace-length period and
//! scaled in number by `session_scale`. A session picks a client host on
//! the class's client side and a server host on the other, then runs its
//! RREs one after another: each RRE opens its connections (spaced by
//! inter-connection gaps) and is over when all of them have closed; the next
//! RRE follows an inter-RRE think time. A connection carries its
//! request/response pairs in turn, separated by request think times. Every
//! byte goes over the engine's TCP, so the traffic responds to congestion.
//! UDP flows are replayed open loop from whole sampled flows. All draws go
//! through [`Deck`]s, so a run about as long as the trace reproduces the
//! trace's values closely.
//!
//! With [`Structure::Sessions`], a session is instead one of the model's
//! whole observed sessions (drawn through a deck, started at a time drawn
//! from the session-start distribution): its RREs, connection offsets,
//! pairs, sizes and think times stay together, so a page load's heavy early
//! connections stay early. Swing's independent draws are the default.

use super::replay::{Replays, UnitPlan};
use crate::responder::{parse_request, request_mark};
use crate::timers::{split, token, Slots};
use crate::{outbox, App, AppReport, ConnId, Event, HostId, Outbox, Responder, Transport};
use rustc_hash::FxHashMap;
use std::sync::Arc;
use swing::{AppClass, ConnSample, Deck, Dist, Model, RreSample, Side, UdpFlow};
use units::{Dur, Rng, Time};

/// How sessions are drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Structure {
    /// Every parameter from its own distribution (Swing).
    #[default]
    Marginals,
    /// Whole observed sessions, where the model keeps them; classes without
    /// kept sessions fall back to marginals.
    Sessions,
}

#[derive(Clone, Debug)]
pub struct SwingConfig {
    pub name: String,
    pub model: Arc<Model>,
    /// Virtual hosts standing in for the model's side A and side B, each
    /// side's in ascending order (as plans number them).
    pub hosts: [Vec<HostId>; 2],
    /// Which of them speak IPv6 (parallel to `hosts`; empty: none): a
    /// session's server is drawn among the hosts of its client's version.
    pub ipv6: [Vec<bool>; 2],
    /// The model host each copies, as its index in the model's `hosts`
    /// (parallel to `hosts`; empty: unknown): a replayed session reaches
    /// copies of its own trace hosts.
    pub copies: [Vec<Option<u32>>; 2],
    pub start: Time,
    pub stop: Time,
    /// Sessions (and UDP flows) per period: the trace's count times this.
    pub session_scale: f64,
    /// Response sizes times this.
    pub response_scale: f64,
    /// Think times (request and inter-RRE) set to zero.
    pub zero_think: bool,
    /// Servers listen on the class's first port plus this (Swing used 20000).
    pub port_base: u16,
    pub structure: Structure,
}

const KIND_PERIOD: u64 = 1;
const KIND_SESSION: u64 = 2;
const KIND_OPEN: u64 = 3;
const KIND_REQUEST: u64 = 4;
const KIND_RRE: u64 = 5;
const KIND_UDP: u64 = 6;
const KIND_UNIT: u64 = 7;
const KIND_RESPOND: u64 = 8;
const KIND_CLOSE: u64 = 9;

/// Per-class draws, each through its own deck.
#[derive(Default)]
struct ClassDecks {
    start: Deck,
    rres: Deck,
    inter_rre: Deck,
    conns: Deck,
    inter_conn: Deck,
    pairs: Deck,
    request: Deck,
    response: Deck,
    think: Deck,
    connect_wait: Deck,
    server_time: Deck,
    close_wait: Deck,
    session: Deck,
    concurrent: Deck,
    /// Whether a drawn connection is concurrent, through a deck of the
    /// trace's share (see `concurrent_share`).
    is_concurrent: Deck,
    servers: Deck,
}

struct Session {
    class: usize,
    client: HostId,
    /// Its servers in the order it reached them: a replayed session reaches
    /// as many as its trace session did; a drawn one, `server_count`.
    servers: Vec<HostId>,
    /// Servers a drawn session spreads its connections over, uniformly
    /// (Swing: one per session).
    server_count: u32,
    rres_left: u32,
    /// Connections of the current RRE still to open, and open ones.
    to_open: u32,
    open: u32,
    /// The kept session being replayed (an index into the class's
    /// `sessions`), its current RRE and the next connection to open in it.
    shape: Option<usize>,
    rre: usize,
    next_conn: usize,
    /// A replayed RRE's cross-connection order (`ConnSample::after`): when
    /// each (connection, pair)'s response completed, the connections
    /// closed, and requests waiting for a response that has not.
    done: FxHashMap<(u32, u32), Time>,
    closed: Vec<u32>,
    waiting: Vec<Waiter>,
}

/// A request waiting for a response on another connection: then `delay`
/// after it; `own` after now if that connection closes without it.
struct Waiter {
    on: (u32, u32),
    conn: ConnId,
    delay: Dur,
    own: Dur,
}

struct Conn {
    session: usize,
    pairs_left: u32,
    /// For a replayed session: the connection's (RRE, index) in it, and the
    /// index of its next pair.
    plan: Option<(usize, usize)>,
    pair: usize,
    out: Outbox,
    /// A concurrent connection's data units (its pairs are then unused).
    units: Option<Arc<UnitPlan>>,
}

struct UdpSend {
    class: usize,
    dir: usize,
    from: HostId,
    to: HostId,
    port: u16,
    left: u64,
    /// Used when the class has no in-flow gaps or sizes to draw from.
    payload: u32,
    gap: Dur,
    /// Replaying a kept flow's own packets: the sample, the next packet,
    /// and the flow's start (`from` is then the initiator, `to` the
    /// responder, and `dir` unused).
    replay: Option<(usize, usize, Time)>,
}

/// Draws of one UDP class: packet gaps and sizes per direction.
#[derive(Default)]
struct UdpDecks {
    flows: Deck,
    gaps: [Deck; 2],
    sizes: [Deck; 2],
}

#[derive(Default)]
struct Counters {
    sessions: u64,
    sessions_done: u64,
    rres: u64,
    connections: u64,
    pairs: u64,
    request_bytes: u64,
    response_bytes: u64,
    udp_flows: u64,
    udp_packets: u64,
}

pub struct SwingSource {
    cfg: SwingConfig,
    rng: Rng,
    decks: Vec<ClassDecks>,
    /// Per class, `concurrent_share`.
    concurrent_shares: Vec<Dist>,
    udp_decks: Vec<UdpDecks>,
    sessions: Slots<Session>,
    conns: FxHashMap<ConnId, Conn>,
    udp: Vec<Option<UdpSend>>,
    /// Connections waiting out a think time before their next request, or
    /// an idle time before their close.
    thinking: Slots<ConnId>,
    server: Responder,
    /// The class served on each listening port.
    class_of_port: FxHashMap<u16, usize>,
    replays: Replays,
    n: Counters,
    period: Dur,
    /// Per side, its hosts of each IP version ([IPv4, IPv6]), in order.
    by_version: [[Vec<HostId>; 2]; 2],
    /// The virtual hosts copying each model host (`SwingConfig::copies`).
    by_copy: FxHashMap<u32, Vec<HostId>>,
}

impl SwingSource {
    pub fn new(cfg: SwingConfig, rng: Rng) -> SwingSource {
        let nc = cfg.model.classes.len();
        let nu = cfg.model.udp.len();
        let period = Dur::from_secs_f64(cfg.model.link.duration_s.max(1e-3));
        assert!(cfg.hosts.iter().all(|hs| hs.is_sorted_by(|a, b| a < b)), "a side's virtual hosts must be in ascending order");
        let by_version = [0, 1].map(|i| {
            let v6 = |k: usize| cfg.ipv6[i].get(k).copied().unwrap_or(false);
            [false, true].map(|want| cfg.hosts[i].iter().enumerate().filter(|&(k, _)| v6(k) == want).map(|(_, &h)| h).collect())
        });
        let mut by_copy: FxHashMap<u32, Vec<HostId>> = FxHashMap::default();
        for (hs, cs) in cfg.hosts.iter().zip(&cfg.copies) {
            for (&h, c) in hs.iter().zip(cs) {
                if let Some(c) = c {
                    by_copy.entry(*c).or_default().push(h);
                }
            }
        }
        SwingSource {
            by_version,
            by_copy,
            decks: (0..nc).map(|_| ClassDecks::default()).collect(),
            concurrent_shares: cfg.model.classes.iter().map(concurrent_share).collect(),
            udp_decks: (0..nu).map(|_| UdpDecks::default()).collect(),
            cfg,
            rng,
            sessions: Slots::default(),
            conns: FxHashMap::default(),
            udp: Vec::new(),
            thinking: Slots::default(),
            server: Responder::with_timers(KIND_RESPOND),
            class_of_port: FxHashMap::default(),
            replays: Replays::new(KIND_UNIT),
            n: Counters::default(),
            period,
        }
    }

    fn class(&self, c: usize) -> &AppClass {
        &self.cfg.model.classes[c]
    }

    fn side_hosts(&self, side: Side) -> &[HostId] {
        &self.cfg.hosts[side.index()]
    }

    /// A host of `side`, uniformly at random.
    fn pick(&mut self, side: Side) -> Option<HostId> {
        let hs = &self.cfg.hosts[side.index()];
        (!hs.is_empty()).then(|| hs[self.rng.below(hs.len() as u64) as usize])
    }

    /// A virtual host copying model host `trace` (one at random if
    /// several do), if any does.
    fn copy_of(&mut self, trace: Option<u32>) -> Option<HostId> {
        let copies = self.by_copy.get(&trace?)?;
        Some(copies[self.rng.below(copies.len() as u64) as usize])
    }

    /// The model hosts a replayed session reached (`SessionSample::hosts`).
    fn trace_hosts(&self, s: usize) -> Option<&[u32]> {
        let sess = self.sessions.get(s)?;
        Some(&self.cfg.model.classes[sess.class].sessions.get(sess.shape?)?.hosts)
    }

    /// The session's `k`th server. A replayed session's is a copy of the
    /// trace server it reached; else each new one is another host of its
    /// first server's side and IP version, one it has not reached yet
    /// while there are any.
    fn server_of(&mut self, s: usize, k: u32) -> HostId {
        let sess = self.sessions.get(s).expect("live session");
        if let Some(&h) = sess.servers.get(k as usize) {
            return h;
        }
        let trace = self.trace_hosts(s).and_then(|h| h.get(k as usize + 1)).copied();
        if sess.servers.len() == k as usize {
            if let Some(h) = self.copy_of(trace) {
                self.sessions.get_mut(s).expect("live session").servers.push(h);
                return h;
            }
        }
        let sess = self.sessions.get(s).expect("live session");
        let side = self.class(sess.class).clients.other().index();
        let first = sess.servers[0];
        let v6 = self.by_version[side][1].contains(&first) as usize;
        let pool = if self.by_version[side][v6].is_empty() { &self.cfg.hosts[side] } else { &self.by_version[side][v6] };
        // A session keeps at most one server more than its side has hosts
        // (a model's count may name billions): an index past them draws
        // one of the side's hosts without keeping it.
        if k as usize > pool.len() {
            return pool[self.rng.below(pool.len() as u64) as usize];
        }
        // The pool without the servers reached, drawn from by index: a copy
        // of it per new server would cost as much as the side has hosts.
        let reached = positions(pool, &sess.servers);
        let fresh = pool.len() - reached.len();
        let mut h = first;
        let sess = self.sessions.get_mut(s).expect("live session");
        while sess.servers.len() <= k as usize {
            h = if fresh == 0 {
                pool[self.rng.below(pool.len() as u64) as usize]
            } else {
                pool[skipping(&reached, self.rng.below(fresh as u64) as usize)]
            };
            sess.servers.push(h);
        }
        h
    }

    /// A client on `side` and a peer on the other side of the same IP
    /// version (any peer when the other side has none of it).
    fn pick_pair(&mut self, side: Side) -> Option<(HostId, HostId)> {
        let i = side.index();
        let hs = &self.cfg.hosts[i];
        if hs.is_empty() {
            return None;
        }
        let k = self.rng.below(hs.len() as u64) as usize;
        let (client, v6) = (hs[k], self.cfg.ipv6[i].get(k).copied().unwrap_or(false));
        let same = &self.by_version[side.other().index()][v6 as usize];
        if same.is_empty() {
            return self.pick(side.other()).map(|s| (client, s));
        }
        Some((client, same[self.rng.below(same.len() as u64) as usize]))
    }

    fn port(&self, ports: &[u16]) -> u16 {
        self.cfg.port_base.wrapping_add(ports.first().copied().unwrap_or(0)).max(1)
    }

    /// A count from the trace scaled by `session_scale`, the fraction taken at random.
    fn scaled(&mut self, n: u64) -> u64 {
        let x = n as f64 * self.cfg.session_scale;
        x.floor() as u64 + self.rng.bernoulli(x.fract()) as u64
    }

    /// Bytes per application write for a request (`dir` 0) or response of
    /// `bytes` of `class`, cut as the trace cut elements of that size.
    fn write_size(model: &Model, rng: &mut Rng, class: usize, dir: usize, bytes: u64) -> u64 {
        let m = &model.classes[class];
        swing::write_size(if dir == 0 { &m.request_writes } else { &m.response_writes }, bytes, rng)
    }

    fn draw(deck: &mut Deck, d: &Dist, rng: &mut Rng, default: f64) -> f64 {
        deck.draw(d, rng).unwrap_or(default)
    }

    fn count(deck: &mut Deck, d: &Dist, rng: &mut Rng) -> u32 {
        Self::draw(deck, d, rng, 1.0).round().max(0.0) as u32
    }

    fn secs(deck: &mut Deck, d: &Dist, rng: &mut Rng, zero: bool) -> Dur {
        if zero {
            return Dur::ZERO;
        }
        Dur::from_secs_f64(Self::draw(deck, d, rng, 0.0).max(0.0))
    }

    /// Schedules the sessions and UDP flows of one trace-length period.
    fn period(&mut self, p: u64, tp: &mut dyn Transport) {
        let base = self.cfg.start + Dur(self.period.0.saturating_mul(p));
        if base >= self.cfg.stop {
            return;
        }
        let model = Arc::clone(&self.cfg.model);
        for (c, class) in model.classes.iter().enumerate() {
            let whole = self.cfg.structure == Structure::Sessions && !class.sessions.is_empty();
            let shapes = indices(if whole { class.sessions.len() } else { 0 });
            // Sessions too long to keep whole come from the marginals, as
            // often as the trace had them.
            let unkept = class.counts.sessions_unkept as f64 / class.counts.sessions.max(1) as f64;
            for _ in 0..self.scaled(class.counts.sessions) {
                let off = Self::draw(&mut self.decks[c].start, &class.session_start_s, &mut self.rng, 0.0);
                let kept = whole && !(unkept > 0.0 && self.rng.bernoulli(unkept.min(1.0)));
                let shape = kept.then(|| self.decks[c].session.draw(&shapes, &mut self.rng).unwrap_or(0.0) as usize);
                let at = base + Dur::from_secs_f64(off.max(0.0));
                if at < self.cfg.stop {
                    let s = self.new_session(c, shape);
                    tp.set_timer(at, token(KIND_SESSION, s as u64));
                }
            }
        }
        for (u, class) in model.udp.iter().enumerate() {
            if class.samples.is_empty() {
                continue;
            }
            for _ in 0..self.scaled(class.flows) {
                let i = self.udp_decks[u].flows.draw(&indices(class.samples.len()), &mut self.rng).unwrap_or(0.0) as usize;
                let at = base + Dur::from_secs_f64(class.samples[i].start_s.max(0.0));
                if at < self.cfg.stop {
                    self.start_udp(u, i, at, tp);
                }
            }
        }
        tp.set_timer(base + self.period, token(KIND_PERIOD, p + 1));
    }

    fn new_session(&mut self, class: usize, shape: Option<usize>) -> usize {
        let s = Session {
            class,
            client: 0,
            servers: Vec::new(),
            server_count: 1,
            rres_left: 0,
            to_open: 0,
            open: 0,
            shape,
            rre: 0,
            next_conn: 0,
            done: FxHashMap::default(),
            closed: Vec::new(),
            waiting: Vec::new(),
        };
        self.sessions.put(s)
    }

    fn begin_session(&mut self, s: usize, tp: &mut dyn Transport) {
        let class = self.sessions.get(s).map(|x| x.class).expect("pending session");
        let side = self.class(class).clients;
        let Some((mut client, mut server)) = self.pick_pair(side) else {
            self.end_session(s);
            return;
        };
        // A replayed session's own client and first server, where copied.
        let trace = self.trace_hosts(s).map(|h| (h.first().copied(), h.get(1).copied()));
        if let Some((c, sv)) = trace {
            client = self.copy_of(c).unwrap_or(client);
            server = self.copy_of(sv).unwrap_or(server);
        }
        let shape = self.sessions.get(s).and_then(|x| x.shape);
        let rres = match shape {
            Some(i) => self.cfg.model.classes[class].sessions[i].rres.len().max(1) as u32,
            None => {
                let d = &self.cfg.model.classes[class].rres_per_session;
                Self::count(&mut self.decks[class].rres, d, &mut self.rng).max(1)
            }
        };
        let server_count = match shape {
            Some(_) => 1,
            None => {
                let d = &self.cfg.model.classes[class].servers_per_session;
                Self::count(&mut self.decks[class].servers, d, &mut self.rng).max(1)
            }
        };
        let sess = self.sessions.get_mut(s).expect("pending session");
        sess.client = client;
        sess.servers.push(server);
        sess.server_count = server_count;
        sess.rres_left = rres;
        self.n.sessions += 1;
        self.begin_rre(s, tp);
    }

    /// The current RRE of a replayed session.
    fn rre_plan(&self, s: usize) -> Option<&RreSample> {
        let sess = self.sessions.get(s)?;
        self.cfg.model.classes[sess.class].sessions.get(sess.shape?)?.rres.get(sess.rre)
    }

    /// A replayed connection's plan.
    fn conn_plan(&self, c: &Conn) -> Option<&ConnSample> {
        let (rre, i) = c.plan?;
        let sess = self.sessions.get(c.session)?;
        self.cfg.model.classes[sess.class].sessions.get(sess.shape?)?.rres.get(rre)?.conns.get(i)
    }

    fn begin_rre(&mut self, s: usize, tp: &mut dyn Transport) {
        let class = self.sessions.get(s).expect("live session").class;
        let conns = match self.rre_plan(s) {
            Some(r) => r.conns.len().max(1) as u32,
            None => {
                let d = &self.cfg.model.classes[class].conns_per_rre;
                Self::count(&mut self.decks[class].conns, d, &mut self.rng).max(1)
            }
        };
        self.n.rres += 1;
        let sess = self.sessions.get_mut(s).expect("live session");
        sess.to_open = conns;
        sess.next_conn = 0;
        sess.done.clear();
        sess.closed.clear();
        sess.waiting.clear();
        self.open_conn(s, tp);
    }

    fn open_conn(&mut self, s: usize, tp: &mut dyn Transport) {
        let sess = self.sessions.get_mut(s).expect("live session");
        sess.to_open -= 1;
        sess.open += 1;
        let i = sess.next_conn;
        sess.next_conn += 1;
        let (class, client, more, rre) = (sess.class, sess.client, sess.to_open > 0, sess.rre);
        let port = self.port(&self.cfg.model.classes[class].ports);
        // A replayed connection's pairs, the gap to the next one's start,
        // and which of the session's servers it went to.
        let planned = self.rre_plan(s).map(|r| {
            let at = |k: usize| r.conns.get(k).map_or(0.0, |c| c.at_s);
            let c = r.conns.get(i);
            (c.map_or(0, |c| c.pairs.len()) as u32, (at(i + 1) - at(i)).max(0.0), c.map_or(0, |c| c.server))
        });
        let k = match planned {
            Some((_, _, k)) => k,
            None => {
                let n = self.sessions.get(s).expect("live session").server_count;
                if n > 1 {
                    self.rng.below(n as u64) as u32
                } else {
                    0
                }
            }
        };
        let server = self.server_of(s, k);
        let pairs = match planned {
            Some((n, _, _)) => n,
            None => {
                let d = &self.cfg.model.classes[class].pairs_per_conn;
                Self::count(&mut self.decks[class].pairs, d, &mut self.rng)
            }
        };
        let units = match planned {
            Some(_) => {
                self.rre_plan(s).and_then(|r| r.conns.get(i)).filter(|c| !c.adus.is_empty()).map(|c| unit_plan(&self.cfg, class, &c.adus, c.close_s))
            }
            None => self.draw_concurrent(class),
        };
        let conn = tp.connect(client, server, port);
        if let Some(u) = &units {
            self.n.request_bytes += u.bytes(0);
            self.n.response_bytes += u.bytes(1);
        }
        self.replays.expect(conn, client, server, port, units.clone());
        let plan = planned.map(|_| (rre, i));
        self.conns.insert(conn, Conn { session: s, pairs_left: pairs, plan, pair: 0, out: Outbox::default(), units });
        self.n.connections += 1;
        if more {
            let gap = match planned {
                Some((_, g, _)) => Dur::from_secs_f64(g),
                None => {
                    let d = &self.cfg.model.classes[class].inter_conn_s;
                    Self::secs(&mut self.decks[class].inter_conn, d, &mut self.rng, false)
                }
            };
            tp.set_timer(tp.now() + gap, token(KIND_OPEN, s as u64));
        }
    }

    /// A concurrent connection of `class` for the marginals: as often as
    /// the trace's connections were concurrent, one of its kept ones.
    fn draw_concurrent(&mut self, class: usize) -> Option<Arc<UnitPlan>> {
        let model = Arc::clone(&self.cfg.model);
        let m = &model.classes[class];
        if m.concurrent.is_empty() || m.counts.connections == 0 {
            return None;
        }
        // As many concurrent connections per trace's worth of connections as
        // the trace had: a coin per connection would leave a one-user
        // trace's rate to chance, its few concurrent connections often
        // carrying much of its bytes.
        if Self::draw(&mut self.decks[class].is_concurrent, &self.concurrent_shares[class], &mut self.rng, 0.0) < 0.5 {
            return None;
        }
        let i = Self::draw(&mut self.decks[class].concurrent, &indices(m.concurrent.len()), &mut self.rng, 0.0) as usize;
        Some(unit_plan(&self.cfg, class, &m.concurrent[i], 0.0))
    }

    /// Sends the next request of `conn`, whose boundary asks for the response size.
    fn request(&mut self, conn: ConnId, tp: &mut dyn Transport) {
        let Some(c) = self.conns.get(&conn) else { return };
        let class = self.sessions.get(c.session).expect("live session").class;
        let planned = self.conn_plan(c).and_then(|p| Some((*p.pairs.get(c.pair)?, p.server_s.get(c.pair).copied().unwrap_or(0.0))));
        let m = &self.cfg.model.classes[class];
        let d = &mut self.decks[class];
        let (req, rsp, server) = match planned {
            // A server time the trace could not measure is drawn.
            Some((p, server)) if server < 0.0 => (p[0], p[1], Self::secs(&mut d.server_time, &m.server_s, &mut self.rng, false)),
            Some((p, server)) => (p[0], p[1], Dur::from_secs_f64(server)),
            None => {
                let req = Self::draw(&mut d.request, &m.request_bytes, &mut self.rng, 1.0);
                let rsp = Self::draw(&mut d.response, &m.response_bytes, &mut self.rng, 1.0);
                (req, rsp, Self::secs(&mut d.server_time, &m.server_s, &mut self.rng, false))
            }
        };
        let (req, rsp) = (req.max(1.0) as u64, (rsp * self.cfg.response_scale).round().max(1.0) as u64);
        if let Some(c) = self.conns.get_mut(&conn) {
            c.pair += 1;
        }
        self.n.request_bytes += req;
        if let Some(c) = self.conns.get_mut(&conn) {
            let w = Self::write_size(&self.cfg.model, &mut self.rng, class, 0, req);
            c.out.send(tp, conn, req, Some(request_mark(rsp, server)), w);
        }
    }

    /// Sends `conn`'s next request after `own` (its think time or first
    /// wait), or, in a replayed RRE where the trace's request followed a
    /// response on another connection, `delay` after that response
    /// completes here: a page's requests that one response set off leave
    /// together, as in the trace, not each after its own connection's
    /// response (each connection's own think time would drift them apart).
    fn next_request(&mut self, conn: ConnId, own: Dur, tp: &mut dyn Transport) {
        let follow = self.conns.get(&conn).and_then(|c| {
            let (_, i) = c.plan?;
            let a = self.conn_plan(c)?.after.get(c.pair).copied().flatten()?;
            Some((c.session, i as u32, a))
        });
        if let Some((s, i, a)) = follow {
            let on = (a[0] as u32, a[1] as u32);
            let delay = if self.cfg.zero_think { Dur::ZERO } else { Dur::from_secs_f64(a[2].max(0.0)) };
            let now = tp.now();
            let sess = self.sessions.get_mut(s).expect("live session");
            if on.0 != i && !sess.closed.contains(&on.0) {
                match sess.done.get(&on) {
                    Some(&t) => {
                        let at = (t + delay).max(now);
                        return self.wait(conn, at - now, KIND_REQUEST, tp);
                    }
                    None => {
                        sess.waiting.push(Waiter { on, conn, delay, own });
                        return;
                    }
                }
            }
        }
        if own > Dur::ZERO {
            self.wait(conn, own, KIND_REQUEST, tp);
        } else {
            self.request(conn, tp);
        }
    }

    /// Response `pair` of a replayed RRE's connection `i` completed, or
    /// (`pair` None) the connection closed: the requests waiting on it go.
    fn release(&mut self, s: usize, i: u32, pair: Option<u32>, tp: &mut dyn Transport) {
        let now = tp.now();
        let Some(sess) = self.sessions.get_mut(s) else { return };
        match pair {
            Some(l) => {
                sess.done.insert((i, l), now);
            }
            None => sess.closed.push(i),
        }
        let (go, keep): (Vec<Waiter>, Vec<Waiter>) =
            std::mem::take(&mut sess.waiting).into_iter().partition(|w| w.on.0 == i && pair.is_none_or(|l| w.on.1 == l));
        sess.waiting = keep;
        for w in go {
            if self.conns.contains_key(&w.conn) {
                let after = if pair.is_some() { w.delay } else { w.own };
                self.wait(w.conn, after, KIND_REQUEST, tp);
            }
        }
    }

    /// After `think`, sends `conn`'s next request (`KIND_REQUEST`) or
    /// closes it (`KIND_CLOSE`).
    fn wait(&mut self, conn: ConnId, think: Dur, kind: u64, tp: &mut dyn Transport) {
        let slot = self.thinking.put(conn);
        tp.set_timer(tp.now() + think, token(kind, slot as u64));
    }

    fn conn_done(&mut self, conn: ConnId, tp: &mut dyn Transport) {
        let Some(c) = self.conns.remove(&conn) else { return };
        self.replays.forget(conn);
        let s = c.session;
        if let Some((_, i)) = c.plan {
            self.release(s, i as u32, None, tp);
        }
        let sess = self.sessions.get_mut(s).expect("live session");
        sess.open -= 1;
        if sess.open > 0 || sess.to_open > 0 {
            return;
        }
        sess.rres_left -= 1;
        if sess.rres_left == 0 {
            self.n.sessions_done += 1;
            self.end_session(s);
            return;
        }
        sess.rre += 1;
        let class = sess.class;
        let gap = match self.rre_plan(s).map(|r| r.gap_s) {
            Some(_) if self.cfg.zero_think => Dur::ZERO,
            Some(g) => Dur::from_secs_f64(g.max(0.0)),
            None => {
                let d = &self.cfg.model.classes[class].inter_rre_s;
                Self::secs(&mut self.decks[class].inter_rre, d, &mut self.rng, self.cfg.zero_think)
            }
        };
        tp.set_timer(tp.now() + gap, token(KIND_RRE, s as u64));
    }

    fn end_session(&mut self, s: usize) {
        self.sessions.take(s);
    }

    fn start_udp(&mut self, u: usize, i: usize, at: Time, tp: &mut dyn Transport) {
        let model = Arc::clone(&self.cfg.model);
        let f: &UdpFlow = &model.udp[u].samples[i];
        let side = self.cfg.model.udp[u].initiators;
        let Some((from, to)) = self.pick_pair(side) else { return };
        let port = self.port(&self.cfg.model.udp[u].ports);
        self.n.udp_flows += 1;
        if self.cfg.structure == Structure::Sessions && !f.sequence.is_empty() {
            // The flow's own packets, at their own offsets.
            let first = at + Dur::from_secs_f64(f.sequence[0][0].max(0.0));
            let send = UdpSend { class: u, dir: 0, from, to, port, left: 0, payload: 0, gap: Dur::ZERO, replay: Some((i, 0, at)) };
            self.udp.push(Some(send));
            tp.set_timer(first, token(KIND_UDP, (self.udp.len() - 1) as u64));
            return;
        }
        for (dir, (src, dst)) in [(from, to), (to, from)].into_iter().enumerate() {
            let pkts = f.packets[dir];
            if pkts == 0 {
                continue;
            }
            // Without in-flow samples: the flow's mean size, evenly spaced.
            let size = (f.bytes[dir] / pkts).max(29);
            let gap = if pkts > 1 { Dur::from_secs_f64(f.duration_s.max(0.0) / (pkts - 1) as f64) } else { Dur::ZERO };
            let send = UdpSend { class: u, dir, from: src, to: dst, port, left: pkts, payload: (size - 28) as u32, gap, replay: None };
            // The reply direction starts when the trace's did.
            let first = if dir == 0 { at } else { at + Dur::from_secs_f64(f.reply_s.max(0.0)) };
            self.udp.push(Some(send));
            tp.set_timer(first, token(KIND_UDP, (self.udp.len() - 1) as u64));
        }
    }

    /// Sends one packet of a UDP flow and schedules the next: size and gap
    /// drawn from the class's in-flow distributions of that direction.
    fn udp_packet(&mut self, i: usize, tp: &mut dyn Transport) {
        let Some(Some(s)) = self.udp.get_mut(i) else { return };
        if let Some((sample, pos, start)) = s.replay {
            let seq = &self.cfg.model.udp[s.class].samples[sample].sequence;
            let [_, dir, bytes] = seq[pos];
            let (src, dst) = if dir == 0.0 { (s.from, s.to) } else { (s.to, s.from) };
            tp.send_udp(src, s.port, dst, s.port, (bytes.round() as u32).max(29) - 28);
            self.n.udp_packets += 1;
            match seq.get(pos + 1) {
                Some(next) => {
                    s.replay = Some((sample, pos + 1, start));
                    tp.set_timer(start + Dur::from_secs_f64(next[0].max(0.0)), token(KIND_UDP, i as u64));
                }
                None => self.udp[i] = None,
            }
            return;
        }
        let class = &self.cfg.model.udp[s.class];
        let decks = &mut self.udp_decks[s.class];
        let size = decks.sizes[s.dir].draw(&class.packet_bytes[s.dir], &mut self.rng);
        let payload = size.map_or(s.payload, |b| (b.round() as u32).max(29) - 28);
        tp.send_udp(s.from, s.port, s.to, s.port, payload);
        self.n.udp_packets += 1;
        s.left -= 1;
        if s.left > 0 {
            let gap = decks.gaps[s.dir].draw(&class.packet_gap_s[s.dir], &mut self.rng).map_or(s.gap, |g| Dur::from_secs_f64(g.max(0.0)));
            tp.set_timer(tp.now() + gap, token(KIND_UDP, i as u64));
        } else {
            self.udp[i] = None;
        }
    }
}

impl SwingSource {
    /// Events of concurrent connections' replayed sides; true when handled.
    fn replay_event(&mut self, ev: &Event, tp: &mut dyn Transport) -> bool {
        let (model, rng) = (&self.cfg.model, &mut self.rng);
        let mut ws = |c: usize, d: usize, b: u64| Self::write_size(model, rng, c, d, b);
        match *ev {
            Event::Accepted { conn, host, port, peer } => self.replays.accepted(conn, host, port, peer, tp, &mut ws),
            Event::Timer(t) if split(t).0 == KIND_UNIT => {
                self.replays.on_timer(split(t).1 as usize, tp, &mut ws);
                true
            }
            Event::Writable(conn) => self.replays.writable(conn, tp, &mut ws),
            Event::PeerClosed(conn) => self.replays.peer_closed(conn, tp, &mut ws),
            // A client's connection also ends its part of the session.
            Event::Closed(conn) | Event::Reset(conn) => self.replays.closed(conn) && !self.conns.contains_key(&conn),
            _ => false,
        }
    }
}

/// Data units [offset s, direction, bytes] as each side's (offset, bytes),
/// with the knobs applied: responses scaled, offsets dropped with
/// `zero_think` (each side sends as fast as TCP takes it).
/// Where the hosts of `these` are in `pool` (ascending host numbers, as
/// plans number them), sorted, each once.
fn positions(pool: &[HostId], these: &[HostId]) -> Vec<usize> {
    let mut at: Vec<usize> = these.iter().filter_map(|h| pool.binary_search(h).ok()).collect();
    at.sort_unstable();
    at.dedup();
    at
}

/// The index in the pool of its `r`th host not at one of the sorted
/// positions `skip`.
fn skipping(skip: &[usize], r: usize) -> usize {
    let mut i = r;
    for &p in skip {
        if p > i {
            break;
        }
        i += 1;
    }
    i
}

/// `close_s`: how long the trace's connection stayed open after its last
/// exchange (a replayed session's; 0 for a drawn one).
fn unit_plan(cfg: &SwingConfig, class: usize, adus: &[[f64; 3]], close_s: f64) -> Arc<UnitPlan> {
    let mut units: [Vec<(Dur, u64)>; 2] = Default::default();
    for &[at, dir, bytes] in adus {
        let d = (dir as usize).min(1);
        let scale = if d == 1 { cfg.response_scale } else { 1.0 };
        let at = if cfg.zero_think { Dur::ZERO } else { Dur::from_secs_f64(at.max(0.0)) };
        units[d].push((at, (bytes * scale).round().max(1.0) as u64));
    }
    for u in &mut units {
        u.sort_by_key(|&(at, _)| at);
    }
    let linger = if cfg.zero_think { Dur::ZERO } else { Dur::from_secs_f64(close_s.max(0.0)) };
    Arc::new(UnitPlan { class, units, linger })
}

/// The indices 0..n as a distribution, so a deck can shuffle whole flows
/// or sessions.
/// A class's connections as 1 (concurrent) or 0, scaled to at most
/// `DIST_CAP` values.
fn concurrent_share(m: &swing::AppClass) -> Dist {
    let n = m.counts.connections.max(1);
    let scale = (swing::DIST_CAP as f64 / n as f64).min(1.0);
    let total = (n as f64 * scale).round().max(1.0) as usize;
    let ones = ((m.counts.concurrent_connections.min(n) as f64 * scale).round() as usize).min(total);
    let mut values = vec![0.0; total - ones];
    values.resize(total, 1.0);
    Dist { n, values }
}

fn indices(n: usize) -> Dist {
    Dist { n: n as u64, values: (0..n).map(|i| i as f64).collect() }
}

impl App for SwingSource {
    fn start(&mut self, tp: &mut dyn Transport) {
        let model = Arc::clone(&self.cfg.model);
        for (i, class) in model.classes.iter().enumerate() {
            let port = self.port(&class.ports);
            self.class_of_port.entry(port).or_insert(i);
            for &h in self.side_hosts(class.clients.other()).to_vec().iter() {
                tp.listen(h, port);
            }
        }
        for class in &model.udp {
            let port = self.port(&class.ports);
            for side in [Side::A, Side::B] {
                for &h in self.side_hosts(side).to_vec().iter() {
                    tp.bind_udp(h, port);
                }
            }
        }
        tp.set_timer(self.cfg.start, token(KIND_PERIOD, 0));
    }

    fn on_event(&mut self, ev: Event, tp: &mut dyn Transport) {
        if self.replay_event(&ev, tp) {
            return;
        }
        let (model, rng, ports) = (&self.cfg.model, &mut self.rng, &self.class_of_port);
        let mut server_write = |port: u16, bytes: u64| match ports.get(&port) {
            Some(&class) => Self::write_size(model, rng, class, 1, bytes),
            None => outbox::whole_message(),
        };
        if self.server.on_event(&ev, tp, &mut server_write) {
            if let Event::Message { msg, .. } = ev {
                self.n.response_bytes += parse_request(msg).0;
            }
            return;
        }
        match ev {
            Event::Timer(t) => {
                let (kind, idx) = split(t);
                match kind {
                    KIND_PERIOD => self.period(idx, tp),
                    KIND_SESSION => self.begin_session(idx as usize, tp),
                    KIND_OPEN => self.open_conn(idx as usize, tp),
                    KIND_RRE => self.begin_rre(idx as usize, tp),
                    KIND_REQUEST | KIND_CLOSE => {
                        if let Some(conn) = self.thinking.take(idx as usize) {
                            if kind == KIND_REQUEST {
                                self.request(conn, tp);
                            } else if self.conns.contains_key(&conn) {
                                tp.close(conn);
                            }
                        }
                    }
                    KIND_UDP => self.udp_packet(idx as usize, tp),
                    _ => {}
                }
            }
            Event::Connected(conn) => match self.conns.get(&conn) {
                Some(Conn { units: Some(u), .. }) => {
                    let u = Arc::clone(u);
                    let (model, rng) = (&self.cfg.model, &mut self.rng);
                    self.replays.start(conn, u, tp, &mut |c, d, b| Self::write_size(model, rng, c, d, b));
                }
                Some(c) if c.pairs_left == 0 => tp.close(conn),
                Some(c) => {
                    // The first request waits after the handshake as the trace's did.
                    let wait = match self.conn_plan(c).and_then(|p| p.pairs.first()) {
                        _ if self.cfg.zero_think => Dur::ZERO,
                        Some(p) => Dur::from_secs_f64(p[2].max(0.0)),
                        None => {
                            let class = self.sessions.get(c.session).expect("live session").class;
                            let d = &self.cfg.model.classes[class].connect_wait_s;
                            Self::secs(&mut self.decks[class].connect_wait, d, &mut self.rng, false)
                        }
                    };
                    self.next_request(conn, wait, tp);
                }
                None => {}
            },
            Event::Message { conn, .. } => {
                // A response is complete at the client.
                let Some(c) = self.conns.get_mut(&conn) else { return };
                self.n.pairs += 1;
                c.pairs_left = c.pairs_left.saturating_sub(1);
                if let Some((_, i)) = c.plan {
                    let (s, l) = (c.session, c.pair.saturating_sub(1) as u32);
                    self.release(s, i as u32, Some(l), tp);
                }
                let Some(c) = self.conns.get_mut(&conn) else { return };
                if c.pairs_left == 0 {
                    // Open a while longer, idle, as the trace's connection
                    // was before it closed (keep-alive): the RRE ends then.
                    let c = &self.conns[&conn];
                    let class = self.sessions.get(c.session).expect("live session").class;
                    let linger = match self.conn_plan(c).map(|p| p.close_s) {
                        _ if self.cfg.zero_think => Dur::ZERO,
                        Some(s) => Dur::from_secs_f64(s.max(0.0)),
                        None => {
                            let d = &self.cfg.model.classes[class].close_wait_s;
                            Self::secs(&mut self.decks[class].close_wait, d, &mut self.rng, false)
                        }
                    };
                    if linger > Dur::ZERO {
                        self.wait(conn, linger, KIND_CLOSE, tp);
                    } else {
                        tp.close(conn);
                    }
                    return;
                }
                let session = c.session;
                let Some(c) = self.conns.get(&conn) else { return };
                let class = self.sessions.get(session).expect("live session").class;
                let planned = self.conn_plan(c).and_then(|p| p.pairs.get(c.pair)).map(|p| p[2]);
                let think = match planned {
                    Some(_) if self.cfg.zero_think => Dur::ZERO,
                    Some(t) => Dur::from_secs_f64(t.max(0.0)),
                    None => {
                        let d = &self.cfg.model.classes[class].think_s;
                        Self::secs(&mut self.decks[class].think, d, &mut self.rng, self.cfg.zero_think)
                    }
                };
                self.next_request(conn, think, tp);
            }
            Event::Writable(conn) => {
                if let Some(c) = self.conns.get_mut(&conn) {
                    c.out.flush(tp, conn);
                }
            }
            Event::PeerClosed(conn) => {
                if self.conns.contains_key(&conn) {
                    tp.close(conn);
                }
            }
            Event::Closed(conn) | Event::Reset(conn) => self.conn_done(conn, tp),
            Event::Accepted { .. } | Event::Datagram { .. } => {}
        }
    }

    fn report(&self) -> AppReport {
        let n = &self.n;
        AppReport {
            name: self.cfg.name.clone(),
            kind: "swing",
            counters: vec![
                ("sessions", n.sessions as f64),
                ("sessions_completed", n.sessions_done as f64),
                ("rres", n.rres as f64),
                ("connections", n.connections as f64),
                ("pairs", n.pairs as f64),
                ("request_bytes", n.request_bytes as f64),
                ("response_bytes", n.response_bytes as f64),
                ("udp_flows", n.udp_flows as f64),
                ("udp_packets", n.udp_packets as f64),
            ],
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests;
