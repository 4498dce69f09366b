//! Application classes and the samples of their structural parameters.
//!
//! A class is named by server port (`opts.ports`, else `"tcp-<port>"`) and
//! split by the side its clients are on. Sides are only known at the end of
//! the pass, so values are stored once per class with the client host's
//! id (counted while that fits, `tally`) and split by side when the model
//! is written; the exact counts behind each distribution (`Dist::n`) are
//! kept per (class, client host).

use crate::grouping::{AduShape, ConnShape, PairShape, RreShape, SessionShape};
use crate::options::secs;
use crate::reservoir::{Reservoir, DIST_RESERVOIR};
use crate::tally::Values;
use rustc_hash::FxHashMap;
use swing::{AppClass, ClassCounts, ConnSample, RreSample, SessionSample, Side};
use units::Rng;

/// Class names interned to ids, with a port → id table for each protocol.
pub(crate) struct ClassNames {
    pub names: Vec<String>,
    by_name: FxHashMap<String, u32>,
    known: Vec<u32>,
    tcp: Vec<u32>,
    udp: Vec<u32>,
}

const NONE: u32 = u32::MAX;

impl ClassNames {
    pub(crate) fn new(ports: &[(u16, String)]) -> ClassNames {
        let mut c =
            ClassNames { names: Vec::new(), by_name: FxHashMap::default(), known: vec![NONE; 65536], tcp: vec![NONE; 65536], udp: vec![NONE; 65536] };
        for (p, n) in ports {
            let id = c.intern(n);
            c.known[*p as usize] = id;
        }
        c
    }

    fn intern(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.by_name.get(name) {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(name.to_string());
        self.by_name.insert(name.to_string(), id);
        id
    }

    /// True for ports listed in the options.
    #[inline]
    pub(crate) fn is_known(&self, port: u16) -> bool {
        self.known[port as usize] != NONE
    }

    #[inline]
    pub(crate) fn tcp(&mut self, port: u16) -> u32 {
        self.lookup(port, false)
    }

    #[inline]
    pub(crate) fn udp(&mut self, port: u16) -> u32 {
        self.lookup(port, true)
    }

    fn lookup(&mut self, port: u16, udp: bool) -> u32 {
        let id = if udp { self.udp[port as usize] } else { self.tcp[port as usize] };
        if id != NONE {
            return id;
        }
        let id = match self.known[port as usize] {
            NONE => self.intern(&format!("{}-{port}", if udp { "udp" } else { "tcp" })),
            k => k,
        };
        if udp {
            self.udp[port as usize] = id;
        } else {
            self.tcp[port as usize] = id;
        }
        id
    }
}

/// The bit that stands for `port` in a mask over a class's `ports` (the
/// port is added if new); 0 for ports past the 64th, which masks cannot hold.
pub(crate) fn port_bit(ports: &mut Vec<u16>, port: u16) -> u64 {
    let i = ports.iter().position(|&p| p == port).unwrap_or_else(|| {
        ports.push(port);
        ports.len() - 1
    });
    if i < 64 {
        1 << i
    } else {
        0
    }
}

/// The ports whose bits `mask` sets, sorted.
pub(crate) fn ports_in(ports: &[u16], mask: u64) -> Vec<u16> {
    let mut out: Vec<u16> = ports.iter().enumerate().filter(|&(i, _)| i < 64 && mask & (1 << i) != 0).map(|(_, &p)| p).collect();
    out.sort_unstable();
    out
}

/// The distributions of an `AppClass`, in a fixed order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Param {
    SessionStart,
    RresPerSession,
    InterRre,
    ConnsPerRre,
    InterConn,
    PairsPerConn,
    RequestBytes,
    ResponseBytes,
    Think,
    ServersPerSession,
    ConnectWait,
    ServerTime,
    CloseWait,
}
const NPARAM: usize = 13;

/// Data units in model units: [offset s, direction, bytes], each side's in
/// time order.
fn adus_secs(a: &[AduShape]) -> Vec<[f64; 3]> {
    let mut v: Vec<[f64; 3]> = a.iter().map(|&(t, d, b)| [secs(t), d as f64, b.max(1) as f64]).collect();
    v.sort_by(|x, y| x[1].total_cmp(&y[1]).then(x[0].total_cmp(&y[0])));
    v
}

/// Each pair's server time in seconds, -1 where it is unknown; empty when
/// all are 0.
fn server_times(pairs: &[PairShape]) -> Vec<f64> {
    if pairs.iter().all(|p| p.3 == 0) {
        return Vec::new();
    }
    pairs.iter().map(|p| if p.3 < 0 { -1.0 } else { ns_round(secs(p.3)) }).collect()
}

/// Seconds rounded to whole nanoseconds (the trace's resolution), so sums
/// and differences print as the times they are.
pub(crate) fn ns_round(s: f64) -> f64 {
    (s * 1e9).round() / 1e9
}

/// Counts for one class and one client host.
#[derive(Clone, Debug, Default)]
pub(crate) struct ClassHostAcc {
    pub sessions: u64,
    /// Sessions that could not be kept whole.
    pub unkept: u64,
    pub rres: u64,
    pub connections: u64,
    pub concurrent: u64,
    pub pairs: u64,
    pub request_bytes: u64,
    pub response_bytes: u64,
    /// Client to server, server to client.
    pub bytes: [u64; 2],
    pub packets: [u64; 2],
    n: [u64; NPARAM],
    /// Bit i: the class's i-th port (`ClassAcc::ports`) was used.
    ports: u64,
}

#[derive(Default)]
pub(crate) struct ClassAcc {
    /// Each distribution's values with their client host.
    values: [Values; NPARAM],
    /// Requests' and responses' (bytes, application writes, client host).
    writes: [Reservoir<(u64, u32, u32)>; 2],
    /// Whole sessions with their client host.
    sessions: Reservoir<(Box<SessionShape>, u32)>,
    /// Concurrent connections' data units, with their client host.
    concurrent: Reservoir<(Vec<AduShape>, u32)>,
    ports: Vec<u16>,
}

/// What the end of the pass needs to turn samples into model values.
pub(crate) struct Finish<'a> {
    pub side_of: &'a [Side],
    /// Each host's RTT (s), and the median over each side's hosts, for
    /// subtracting from think times.
    pub host_rtt: &'a [Option<f64>],
    pub side_rtt: [Option<f64>; 2],
    pub think_minus_rtt: bool,
    /// Added to session starts: the time between the true start of the
    /// trace and the first packet read (which samples are relative to).
    pub start_shift_s: f64,
    /// The first packet read (ns), which session shapes' starts are absolute
    /// from.
    pub t0: i64,
    /// Each host's index in the model's `hosts`.
    pub host_index: &'a [u32],
}

/// A request is taken to follow another connection's response only if it
/// left within this long (ns) of it: a browser sets off the requests an
/// object names as soon as it arrives and is parsed, well within this; a
/// later one is as likely the user's or a timer's.
const FOLLOW_NS: i64 = 100_000_000;

impl Finish<'_> {
    /// Subtracts the client's RTT (else its side's median), floored at 0
    /// (Swing's `massage_reqthink`).
    pub(crate) fn minus_rtt(&self, v: f64, host: u32) -> f64 {
        if !self.think_minus_rtt {
            return v.max(0.0);
        }
        let rtt = self.host_rtt[host as usize].or(self.side_rtt[self.side_of[host as usize].index()]);
        ns_round((v - rtt.unwrap_or(0.0)).max(0.0))
    }

    /// A value of `p` of `host`'s in model units: think times and RRE gaps
    /// less the client's RTT, session starts from the true start of the
    /// trace.
    fn value(&self, p: Param, v: f64, host: u32) -> f64 {
        match p {
            Param::Think | Param::InterRre => self.minus_rtt(v, host),
            Param::SessionStart => ns_round(v + self.start_shift_s).max(0.0),
            _ => v,
        }
    }

    /// Per connection of the RRE, per pair, the response on another
    /// connection its request followed (`ConnSample::after`): the last to
    /// end before the request, if it ended after the connection was ready
    /// (its previous response's end, or its handshake plus the wait) and
    /// at most `FOLLOW_NS` before the request. Not for concurrent
    /// connections, whose data units replay on their own.
    fn followed(&self, r: &RreShape, host: u32) -> Vec<Vec<Option<[f64; 3]>>> {
        let pairwise = |c: &ConnShape| c.adus.is_empty() && !c.pairs.is_empty();
        // Every response's end: (end, connection, pair), in time order. A
        // pair ended its successor's think time before that one started.
        let mut ends: Vec<(i64, usize, usize)> = r
            .conns
            .iter()
            .enumerate()
            .filter(|(_, (_, c))| pairwise(c))
            .flat_map(|(k, (_, c))| {
                let n = c.pairs.len();
                (0..n).map(move |l| (if l + 1 < n { c.pairs[l + 1].4 - c.pairs[l + 1].2 } else { c.last_end }, k, l))
            })
            .collect();
        ends.sort_unstable();
        r.conns
            .iter()
            .enumerate()
            .map(|(i, (_, c))| {
                if !pairwise(c) {
                    return Vec::new();
                }
                let v: Vec<Option<[f64; 3]>> = c
                    .pairs
                    .iter()
                    .map(|p| {
                        let start = p.4;
                        let ready = (start - p.2.max(0)).max(start - FOLLOW_NS);
                        let n = ends.partition_point(|e| e.0 <= start);
                        let &(end, k, l) = ends[..n].iter().rev().take_while(|e| e.0 > ready).find(|e| e.1 != i)?;
                        (p.0 > 0).then(|| [k as f64, l as f64, self.minus_rtt(secs(start - end), host)])
                    })
                    .collect();
                if v.iter().all(Option::is_none) {
                    Vec::new()
                } else {
                    v
                }
            })
            .collect()
    }

    /// A kept session in model units, think times and RRE gaps less the
    /// client's RTT as for the marginals.
    pub(crate) fn session(&self, sh: &SessionShape, host: u32) -> SessionSample {
        // Servers as the order the session first reached them in.
        let mut servers: Vec<u32> = Vec::new();
        let mut ordinal = |h: u32| match servers.iter().position(|&s| s == h) {
            Some(k) => k as u32,
            None => {
                servers.push(h);
                servers.len() as u32 - 1
            }
        };
        let mut sample = SessionSample {
            start_s: ns_round(secs(sh.start - self.t0) + self.start_shift_s).max(0.0),
            rres: sh
                .rres
                .iter()
                .enumerate()
                .map(|(i, r)| RreSample {
                    gap_s: if i == 0 { 0.0 } else { self.minus_rtt(secs(r.gap), host) },
                    conns: r
                        .conns
                        .iter()
                        .zip(self.followed(r, host))
                        .map(|((at, conn), after)| ConnSample {
                            after,
                            at_s: secs(*at),
                            server: ordinal(conn.server),
                            adus: adus_secs(&conn.adus),
                            pairs: conn
                                .pairs
                                .iter()
                                .enumerate()
                                .map(|(j, &(req, rsp, think, _, _))| {
                                    // A first request's wait was measured at the client's side.
                                    let t = if j == 0 { ns_round(secs(think).max(0.0)) } else { self.minus_rtt(secs(think), host) };
                                    [req.max(1) as f64, rsp.max(1) as f64, t]
                                })
                                .collect(),
                            server_s: server_times(&conn.pairs),
                            close_s: ns_round(secs(conn.linger)),
                        })
                        .collect(),
                })
                .collect(),
            hosts: vec![],
        };
        sample.hosts = std::iter::once(host).chain(servers).map(|h| self.host_index[h as usize]).collect();
        sample
    }
}

#[derive(Default)]
pub(crate) struct TcpClasses {
    pub(crate) acc: Vec<ClassAcc>,
    pub(crate) per_host: FxHashMap<(u32, u32), ClassHostAcc>,
    /// Whole sessions kept per class (`ExtractOptions::session_structures`).
    pub session_cap: usize,
    /// Sessions too long to keep whole (`grouping::SESSION_PAIR_CAP`).
    pub sessions_too_long: u64,
    /// Pairs held in kept sessions, and sessions not kept for the budget.
    pub(crate) held_pairs: usize,
    /// Data units held in kept concurrent connections.
    pub(crate) held_adus: usize,
    pub sessions_over_budget: u64,
}

/// Pairs held in kept sessions at once, over all classes (24 bytes each);
/// the same bound holds for concurrent connections' data units.
pub const SESSION_PAIR_BUDGET: usize = 100_000;
/// Concurrent connections kept whole per class.
pub const CONCURRENT_KEPT: usize = 1_000;

impl TcpClasses {
    fn class(&mut self, class: u32) -> &mut ClassAcc {
        let i = class as usize;
        if self.acc.len() <= i {
            self.acc.resize_with(i + 1, ClassAcc::default);
        }
        &mut self.acc[i]
    }

    #[inline]
    pub(crate) fn host(&mut self, class: u32, host: u32) -> &mut ClassHostAcc {
        self.per_host.entry((class, host)).or_default()
    }

    pub(crate) fn port(&mut self, class: u32, host: u32, port: u16) {
        let bit = port_bit(&mut self.class(class).ports, port);
        self.host(class, host).ports |= bit;
    }

    #[inline]
    pub(crate) fn sample(&mut self, class: u32, host: u32, p: Param, v: f64, rng: &mut Rng) {
        self.samples(class, host, &[(p, v)], rng);
    }

    /// A request (`dir` 0) or response of `bytes` sent in `writes` writes.
    pub(crate) fn writes(&mut self, class: u32, host: u32, dir: usize, bytes: u64, writes: u32, rng: &mut Rng) {
        self.class(class).writes[dir].push((bytes, writes, host), DIST_RESERVOIR, rng);
    }

    /// Several samples of one (class, client host), with one lookup of its
    /// counters; returns them for more updates.
    pub(crate) fn samples(&mut self, class: u32, host: u32, s: &[(Param, f64)], rng: &mut Rng) -> &mut ClassHostAcc {
        let c = self.class(class);
        for &(p, v) in s {
            c.values[p as usize].push(v, host, DIST_RESERVOIR, rng);
        }
        let a = self.per_host.entry((class, host)).or_default();
        for &(p, _) in s {
            a.n[p as usize] += 1;
        }
        a
    }

    /// A whole session of `host`'s.
    /// A whole session of `host`'s. The stores of all classes hold at most
    /// `SESSION_PAIR_BUDGET` pairs: a session that would exceed it is not
    /// kept (it stays in the marginals), so memory is bounded whatever the
    /// trace's length.
    pub(crate) fn session(&mut self, class: u32, host: u32, shape: Box<SessionShape>, rng: &mut Rng) {
        let cap = self.session_cap;
        let pairs = shape.pairs;
        if self.held_pairs + pairs > SESSION_PAIR_BUDGET {
            self.sessions_over_budget += 1;
            self.host(class, host).unkept += 1;
            return;
        }
        self.held_pairs += pairs;
        if let Some((gone, _)) = self.class(class).sessions.push_evict((shape, host), cap, rng) {
            self.held_pairs -= gone.pairs;
        }
    }

    /// A concurrent connection of `host`'s, whole. At most
    /// `CONCURRENT_KEPT` per class and `SESSION_PAIR_BUDGET` data units in
    /// all are held; beyond, the connection is counted but not kept.
    pub(crate) fn concurrent(&mut self, class: u32, host: u32, adus: Vec<AduShape>, rng: &mut Rng) {
        self.host(class, host).concurrent += 1;
        if self.held_adus + adus.len() > SESSION_PAIR_BUDGET {
            return;
        }
        self.held_adus += adus.len();
        if let Some((gone, _)) = self.class(class).concurrent.push_evict((adus, host), CONCURRENT_KEPT, rng) {
            self.held_adus -= gone.len();
        }
    }

    /// Values held in the stores (memory accounting): one per sample, three
    /// per kept pair.
    pub(crate) fn stored(&self) -> usize {
        self.acc
            .iter()
            .map(|c| {
                c.values.iter().map(|v| v.stored()).sum::<usize>()
                    + c.sessions.items().iter().map(|(s, _)| 3 * s.pairs).sum::<usize>()
                    + c.concurrent.items().iter().map(|(a, _)| 3 * a.len()).sum::<usize>()
            })
            .sum()
    }

    /// Classes with sample stores.
    pub(crate) fn count(&self) -> usize {
        self.acc.iter().filter(|c| c.values.iter().any(|v| v.stored() > 0)).count()
    }

    /// Distinct (class, client host) entries.
    pub(crate) fn entries(&self) -> usize {
        self.per_host.len()
    }

    /// One `AppClass` per (class, client side) with modelled connections.
    pub(crate) fn build(&self, names: &ClassNames, f: &Finish) -> Vec<AppClass> {
        let mut sums: FxHashMap<(u32, Side), (ClassHostAcc, u64)> = FxHashMap::default();
        for (&(class, host), a) in &self.per_host {
            let (s, ports) = sums.entry((class, f.side_of[host as usize])).or_default();
            s.sessions += a.sessions;
            s.unkept += a.unkept;
            s.rres += a.rres;
            s.connections += a.connections;
            s.concurrent += a.concurrent;
            s.pairs += a.pairs;
            s.request_bytes += a.request_bytes;
            s.response_bytes += a.response_bytes;
            for i in 0..2 {
                s.bytes[i] += a.bytes[i];
                s.packets[i] += a.packets[i];
            }
            for i in 0..NPARAM {
                s.n[i] += a.n[i];
            }
            *ports |= a.ports;
        }
        let mut keys: Vec<(u32, Side)> = sums.keys().copied().filter(|k| sums[k].0.connections > 0).collect();
        keys.sort_unstable();
        keys.into_iter()
            .map(|(class, side)| {
                let (s, mask) = &sums[&(class, side)];
                let acc = &self.acc[class as usize];
                let dist = |p: Param| {
                    let mut d = acc.values[p as usize].dist(|h| f.side_of[h as usize] == side, |v, h| f.value(p, v, h));
                    d.n = s.n[p as usize];
                    d
                };
                let writes = |dir: usize| {
                    let mut v: Vec<[f64; 2]> = acc.writes[dir]
                        .items()
                        .iter()
                        .filter(|(_, _, h)| f.side_of[*h as usize] == side)
                        .map(|&(b, w, _)| [b as f64, w as f64])
                        .collect();
                    v.sort_by(|a, b| a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1])));
                    swing::thin(v)
                };
                let mut sessions: Vec<SessionSample> =
                    acc.sessions.items().iter().filter(|(_, h)| f.side_of[*h as usize] == side).map(|(sh, h)| f.session(sh, *h)).collect();
                sessions.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
                let ports = ports_in(&acc.ports, *mask);
                // Class bytes by link direction: clients' packets go from
                // the clients' side to the other.
                let (c2s, s2c) = match side {
                    Side::A => (0, 1),
                    Side::B => (1, 0),
                };
                let mut bytes = [0; 2];
                let mut packets = [0; 2];
                bytes[c2s] = s.bytes[0];
                bytes[s2c] = s.bytes[1];
                packets[c2s] = s.packets[0];
                packets[s2c] = s.packets[1];
                AppClass {
                    name: names.names[class as usize].clone(),
                    ports,
                    clients: side,
                    counts: ClassCounts {
                        sessions: s.sessions,
                        sessions_unkept: s.unkept,
                        rres: s.rres,
                        connections: s.connections,
                        concurrent_connections: s.concurrent,
                        pairs: s.pairs,
                        request_bytes: s.request_bytes,
                        response_bytes: s.response_bytes,
                        bytes,
                        packets,
                    },
                    session_start_s: dist(Param::SessionStart),
                    rres_per_session: dist(Param::RresPerSession),
                    servers_per_session: dist(Param::ServersPerSession),
                    inter_rre_s: dist(Param::InterRre),
                    conns_per_rre: dist(Param::ConnsPerRre),
                    inter_conn_s: dist(Param::InterConn),
                    pairs_per_conn: dist(Param::PairsPerConn),
                    request_bytes: dist(Param::RequestBytes),
                    response_bytes: dist(Param::ResponseBytes),
                    think_s: dist(Param::Think),
                    connect_wait_s: dist(Param::ConnectWait),
                    server_s: dist(Param::ServerTime),
                    close_wait_s: dist(Param::CloseWait),
                    concurrent: acc.concurrent.items().iter().filter(|(_, h)| f.side_of[*h as usize] == side).map(|(a, _)| adus_secs(a)).collect(),
                    request_writes: writes(0),
                    response_writes: writes(1),
                    sessions,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_port_table() {
        let mut c = ClassNames::new(&[(80, "HTTP".into()), (8080, "HTTP".into()), (53, "DNS".into())]);
        assert_eq!(c.tcp(80), c.tcp(8080));
        let ids = [c.tcp(80), c.tcp(9999), c.udp(9999), c.udp(53)];
        let names: Vec<&str> = ids.iter().map(|&i| c.names[i as usize].as_str()).collect();
        assert_eq!(names, ["HTTP", "tcp-9999", "udp-9999", "DNS"]);
        assert!(c.is_known(8080) && !c.is_known(9999));
    }

    #[test]
    fn kept_sessions_stay_within_the_pair_budget() {
        use crate::grouping::SessionShape;
        let mut t = TcpClasses { session_cap: 2, ..Default::default() };
        let mut rng = Rng::stream(0, "t");
        let shape = |pairs| Box::new(SessionShape { start: 0, rres: vec![], pairs });
        t.session(0, 0, shape(10), &mut rng);
        t.session(0, 0, shape(20), &mut rng);
        assert_eq!(t.held_pairs, 30);
        // A third replaces one of the two or is dropped: the count follows.
        t.session(0, 0, shape(5), &mut rng);
        let kept: usize = t.acc[0].sessions.items().iter().map(|(s, _)| s.pairs).sum();
        assert_eq!(t.held_pairs, kept);
        // One that would go over the budget is not kept.
        t.session(1, 0, shape(SESSION_PAIR_BUDGET), &mut rng);
        assert_eq!((t.sessions_over_budget, t.held_pairs), (1, kept));
        // ...and is counted against its class, for replay to draw from the
        // marginals as often.
        assert_eq!((t.per_host[&(1, 0)].unkept, t.per_host.get(&(0, 0)).map_or(0, |a| a.unkept)), (1, 0));
    }

    #[test]
    fn samples_split_by_client_side_with_exact_counts() {
        let names = ClassNames::new(&[(80, "HTTP".into())]);
        let mut t = TcpClasses::default();
        let mut rng = Rng::stream(0, "t");
        // Host 0 on side A, host 1 on side B; both HTTP clients.
        for (h, bytes) in [(0u32, 100.0), (0, 300.0), (1, 7.0)] {
            t.sample(0, h, Param::RequestBytes, bytes, &mut rng);
            t.host(0, h).connections += 1;
        }
        t.sample(0, 0, Param::Think, 0.5, &mut rng);
        t.port(0, 0, 80);
        t.host(0, 1).bytes = [10, 20];
        let side_of = [Side::A, Side::B];
        let f = Finish {
            side_of: &side_of,
            host_rtt: &[Some(0.25), None],
            side_rtt: [Some(0.25), None],
            think_minus_rtt: true,
            start_shift_s: 0.0,
            t0: 0,
            host_index: &[0, 1],
        };
        let out = t.build(&names, &f);
        assert_eq!(out.len(), 2);
        assert_eq!((out[0].clients, out[0].request_bytes.values.clone()), (Side::A, vec![100.0, 300.0]));
        assert_eq!(out[0].think_s.values, vec![0.25]);
        assert_eq!(out[0].ports, vec![80]);
        assert_eq!((out[1].clients, out[1].request_bytes.n, out[1].counts.connections), (Side::B, 1, 1));
        // Side-B clients send B to A: their request bytes are dirs[1].
        assert_eq!(out[1].counts.bytes, [20, 10]);
        assert!(out[1].ports.is_empty());
    }
}
