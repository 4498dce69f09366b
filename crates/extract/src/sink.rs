//! Where a connection's results go as they appear: its request/response
//! pairs and finished parts into the class stores, its start and end into
//! the session grouper, the grouper's samples back into the class stores.

use crate::classes::{Param, TcpClasses};
use crate::exchanges::{Element, Pair};
use crate::grouping::{Grouper, Sample};
use crate::options::secs;
use crate::record::ConnRecord;
use crate::stalls::{LateAnswer, LATE_CAP};
use crate::tcpflow::{Conn, Held, ADU_CAP};
use units::Rng;

/// TCP counters for the report.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TcpStats {
    pub packets: u64,
    pub connections: u64,
    pub without_syn: u64,
    pub without_data: u64,
    /// Connections with packets in one direction only.
    pub one_way: u64,
    /// Connections in the model (long ones split into several).
    pub modelled: u64,
    pub pairs: u64,
    pub sessions: u64,
    pub peak_live: usize,
    pub peak_closed: usize,
}

/// Where finished pairs, connections and sessions go.
pub(crate) struct Sink {
    pub classes: TcpClasses,
    pub grouper: Grouper,
    pub rng: Rng,
    pub records: Option<Vec<ConnRecord>>,
    pub stats: TcpStats,
    /// The first packet's time: samples of session starts are relative to it.
    pub t0: i64,
    pub max_pairs: u32,
    /// Keep each connection's pairs for whole-session samples.
    pub keep_shapes: bool,
    /// Answers that came late (`stalls`), up to `LATE_CAP`.
    pub late: Vec<LateAnswer>,
}

impl Sink {
    /// `by` answered at `t` what was first sent at `asked` and last at
    /// `again` (ns); kept if late.
    #[inline]
    pub(crate) fn answer(&mut self, t: i64, asked: i64, again: i64, by: u32) {
        if t - asked > crate::stalls::LATE_NS && self.late.len() < LATE_CAP {
            self.late.push(LateAnswer { t, asked, again, by });
        }
    }

    /// Moves the grouper's samples into the class stores.
    pub(crate) fn pump(&mut self) {
        let mut out = std::mem::take(&mut self.grouper.out);
        for (k, s) in out.drain(..) {
            let (class, host) = (k.class, k.client);
            let (p, v) = match s {
                Sample::Session(shape) => {
                    self.classes.session(class, host, shape, &mut self.rng);
                    continue;
                }
                Sample::SessionTooLong => {
                    self.classes.sessions_too_long += 1;
                    self.classes.host(class, host).unkept += 1;
                    continue;
                }
                Sample::SessionStart(t) => {
                    self.classes.host(class, host).sessions += 1;
                    self.stats.sessions += 1;
                    (Param::SessionStart, secs(t - self.t0))
                }
                Sample::RreStart => {
                    self.classes.host(class, host).rres += 1;
                    continue;
                }
                Sample::RresPerSession(n) => (Param::RresPerSession, n as f64),
                Sample::ServersPerSession(n) => (Param::ServersPerSession, n as f64),
                Sample::ConnsPerRre(n) => (Param::ConnsPerRre, n as f64),
                Sample::InterConn(d) => (Param::InterConn, secs(d)),
                Sample::InterRre(d) => (Param::InterRre, secs(d)),
            };
            self.classes.sample(class, host, p, v, &mut self.rng);
        }
        self.grouper.out = out;
    }

    /// A request/response pair of `c`. Connections with more pairs than
    /// `max_pairs_per_conn` are split into consecutive connections of at
    /// most that many pairs, each starting at its first request, as Swing's
    /// `filtermaxnumpairs` did, so no pair is lost.
    pub(crate) fn pair(&mut self, c: &mut Conn, p: Pair) {
        if c.chunk_pairs == self.max_pairs {
            c.split = true;
            // Queue the next chunk before closing this one so the grouper
            // keeps start order.
            let token = self.grouper.open(c.gkey, p.start());
            let end = c.chunk_end;
            self.end_chunk(c, end, None);
            c.token = token;
            c.chunk_pairs = 0;
        }
        c.chunk_pairs += 1;
        c.chunk_end = p.end();
        let req = p.req.map_or(0, |e| e.bytes);
        let resp = p.resp.map_or(0, |e| e.bytes);
        // From the end of the previous pair to this one's first packet: a
        // client's think time, or a server's pause before a pair it starts.
        let think_ns = c.last_pair_end.map(|prev| p.start() - prev);
        // A connection's first request may wait after the handshake (a
        // browser's preconnect). Both ends of that wait pass the capture
        // from the client, so it needs no RTT correction.
        let wait_ns = match (c.last_pair_end, p.req, c.hs.connected()) {
            (None, Some(r), Some(a)) => Some((r.start - a).max(0)),
            _ => None,
        };
        // The server's time: from the request's last packet to the
        // response's first, less the capture-to-server round trip. Not
        // when the request was retransmitted before the response came: the
        // wait was then the loss recovery's, which the simulator adds itself
        // (counted here too, a lossy path's recoveries would be replayed twice).
        let recovered = |q: Element, r: Element| c.dirs[0].recovered_at.is_some_and(|t| t >= q.start && t <= r.start);
        let server_ns = match (p.req, p.resp, c.hs.server_rtt()) {
            (Some(q), Some(r), Some(rtt)) if !recovered(q, r) => Some((r.start - q.end - rtt).max(0)),
            _ => None,
        };
        c.last_pair_end = Some(p.end());
        if self.keep_shapes {
            c.shape.pairs.push((req, resp, think_ns.or(wait_ns).unwrap_or(0), server_ns.unwrap_or(-1), p.start()));
            c.shape.last_end = p.end();
        }
        for (dir, e) in [p.req, p.resp].into_iter().enumerate() {
            let Some(e) = e else { continue };
            // Data units, while the connection may still be kept whole.
            if !c.split && c.elems.len() <= ADU_CAP {
                c.elems.extend(c.ex.units.iter().filter(|u| u.1 == dir as u8));
                c.elems.push((e.unit_start, dir as u8, e.unit_bytes));
            }
            // Write sizes are the application's, concurrent or not.
            if e.writes > 0 {
                self.classes.writes(c.class, c.hosts[0], dir, e.bytes, e.writes, &mut self.rng);
            }
        }
        c.ex.units.clear();
        let a = self.classes.host(c.class, c.hosts[0]);
        a.pairs += 1;
        a.request_bytes += req;
        a.response_bytes += resp;
        self.stats.pairs += 1;
        // The pair's samples wait for the chunk's end: a connection that
        // turns out concurrent is described by its data units instead.
        c.held.push(Held { pair: p, think_ns, wait_ns, server_ns });
        if c.held.len() > ADU_CAP {
            c.split = true;
            self.flush_pairs(c);
        }
        if let Some(log) = &mut c.log {
            log.push(p);
        }
    }

    /// The held pairs' samples into the marginals.
    fn flush_pairs(&mut self, c: &mut Conn) {
        let (class, host) = (c.class, c.hosts[0]);
        for h in c.held.drain(..) {
            let req = h.pair.req.map_or(0, |e| e.bytes);
            let resp = h.pair.resp.map_or(0, |e| e.bytes);
            let mut s = [
                (Param::RequestBytes, req.max(1) as f64),
                (Param::ResponseBytes, resp.max(1) as f64),
                (Param::Think, 0.0),
                (Param::Think, 0.0),
                (Param::Think, 0.0),
            ];
            let mut n = 2;
            for (p, t) in [(Param::Think, h.think_ns), (Param::ConnectWait, h.wait_ns), (Param::ServerTime, h.server_ns)] {
                if let Some(t) = t {
                    s[n] = (p, secs(t));
                    n += 1;
                }
            }
            self.classes.samples(class, host, &s[..n], &mut self.rng);
        }
    }

    /// Ends the current chunk of `c` at `end`; `linger` (ns): from its last
    /// pair's end to its close, for the connection's last chunk when a side
    /// closed it with FIN or RST. A concurrent connection keeps it in its
    /// whole session only (its units are drawn without a close).
    pub(crate) fn end_chunk(&mut self, c: &mut Conn, end: i64, linger: Option<i64>) {
        match c.adus() {
            Some(adus) => {
                if self.keep_shapes {
                    c.shape.adus = adus.clone();
                }
                c.shape.linger = linger.unwrap_or(0);
                self.classes.concurrent(c.class, c.hosts[0], adus, &mut self.rng);
                c.held.clear();
                self.classes.host(c.class, c.hosts[0]).connections += 1;
            }
            None => {
                self.flush_pairs(c);
                let s = [(Param::PairsPerConn, c.chunk_pairs as f64), (Param::CloseWait, linger.map_or(0.0, secs))];
                let n = if linger.is_some() { 2 } else { 1 };
                self.classes.samples(c.class, c.hosts[0], &s[..n], &mut self.rng).connections += 1;
                c.shape.linger = linger.unwrap_or(0);
            }
        }
        c.shape.server = c.hosts[1];
        self.grouper.close(c.gkey, c.token, end, std::mem::take(&mut c.shape));
        self.stats.modelled += 1;
        self.pump();
    }
}
