//! Connections into RREs and sessions, online.
//!
//! [`SessionBuilder`] applies the rules of Swing's released code
//! (`getparamsfromconnanalysis`) to one key's connections in start order,
//! with the thresholds from the options: a connection joins the current RRE
//! if it starts less than `rre_gap` after the RRE's end (the latest end of
//! its connections, so a connection still open keeps the RRE running) and
//! less than `rre_max_interconn` after the previous connection's start, and
//! the RRE has fewer than `max_conns`; else it starts a new RRE in the same
//! session if it starts less than `session_gap` after the RRE's end, the
//! session has fewer than `max_rres` RREs and (if set) started less than
//! `session_max` ago; else a new session.
//!
//! `Grouper` feeds each key's connections to a builder once their ends
//! are known: every connection is queued when it opens (in start order) and
//! the queue is drained from the front while its head has ended. A key is
//! retired once no later connection could still join its session. State is
//! per active key.
//!
//! Besides Swing's marginal samples, a builder can keep each session whole
//! ([`SessionShape`]): its RREs, their connections' start offsets and each
//! connection's request/response sizes and think times, so a generator can
//! replay the joint structure of a page load, not only its marginals.

use crate::options::{Thresholds, DISORDER_NS};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// Most pairs a kept session may hold; longer sessions are not kept whole
/// (they still give marginal samples), which bounds a builder's memory.
pub const SESSION_PAIR_CAP: usize = 2_000;

/// One exchange as a session shape keeps it: request bytes, response bytes,
/// the think time before the request (ns from the previous response's end
/// on the same connection; for a connection's first, from the client's
/// handshake ACK), the server's time before its response (ns, the
/// capture-to-server round trip taken out; -1 when unknown), and when the
/// request started (ns; with the think times and `ConnShape::last_end`,
/// when each response ended).
pub type PairShape = (u64, u64, i64, i64, i64);

/// A concurrent connection's application data units as a shape keeps them:
/// (offset in ns from the sending side's start, direction 0 from the
/// client, bytes). See `ConnSample::adus`.
pub type AduShape = (i64, u8, u64);

/// One connection of a kept session: its pairs, and its ADUs when both
/// sides sent at once (then the pairs are only what the marginals saw).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConnShape {
    pub pairs: Vec<PairShape>,
    /// When the last pair ended (its response's last packet), ns.
    pub last_end: i64,
    pub adus: Vec<AduShape>,
    /// The server's host id.
    pub server: u32,
    /// From the last pair's end to the close (ns; 0 when unknown).
    pub linger: i64,
}

impl ConnShape {
    /// Entries held, for the caps.
    pub fn size(&self) -> usize {
        self.pairs.len() + self.adus.len()
    }
}

/// One RRE of a kept session.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RreShape {
    /// From the previous RRE's end (0 for the first), floored at 0.
    pub gap: i64,
    /// Each connection's start offset from the RRE's first start, and its shape.
    pub conns: Vec<(i64, ConnShape)>,
}

/// A whole session.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionShape {
    pub start: i64,
    pub rres: Vec<RreShape>,
    pub pairs: usize,
}

/// What a builder reports, in order. Times in ns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sample {
    /// A session starts at this time (its first connection's start).
    SessionStart(i64),
    /// An RRE starts (the first of a session included).
    RreStart,
    RresPerSession(u32),
    /// Distinct servers the session's connections went to.
    ServersPerSession(u32),
    ConnsPerRre(u32),
    /// Between the starts of consecutive connections of an RRE.
    InterConn(i64),
    /// From the end of an RRE to the start of the next one in the session,
    /// floored at 0 (the client's RTT is subtracted later).
    InterRre(i64),
    /// A closed session, whole (when shapes are kept and it was not too long).
    Session(Box<SessionShape>),
    /// A closed session that was too long to keep whole.
    SessionTooLong,
}

#[derive(Clone, Debug)]
struct State {
    sess_start: i64,
    rres: u32,
    rre_end: i64,
    rre_conns: u32,
    rre_start: i64,
    prev_start: i64,
    /// Distinct servers so far (at most `MAX_SERVERS` counted).
    servers: Vec<u32>,
    /// The session so far, while it is kept whole.
    shape: Option<SessionShape>,
}

/// Distinct servers counted per session.
const MAX_SERVERS: usize = 1000;

impl State {
    fn server(&mut self, h: u32) {
        if self.servers.len() < MAX_SERVERS && !self.servers.contains(&h) {
            self.servers.push(h);
        }
    }
}

/// One key's sessions, fed connections in start order.
#[derive(Clone, Debug)]
pub struct SessionBuilder {
    th: Thresholds,
    keep_shapes: bool,
    s: Option<State>,
}

impl SessionBuilder {
    /// `keep_shapes`: also report each session whole.
    pub fn new(th: Thresholds, keep_shapes: bool) -> SessionBuilder {
        SessionBuilder { th, keep_shapes, s: None }
    }

    fn new_session(&mut self, start: i64, end: i64, pairs: ConnShape, out: &mut Vec<Sample>) {
        out.push(Sample::SessionStart(start));
        out.push(Sample::RreStart);
        let servers = vec![pairs.server];
        let shape = self.keep_shapes.then(|| SessionShape { start, pairs: pairs.size(), rres: vec![RreShape { gap: 0, conns: vec![(0, pairs)] }] });
        self.s = Some(State {
            sess_start: start,
            rres: 1,
            rre_end: end,
            rre_conns: 1,
            rre_start: start,
            prev_start: start,
            servers,
            shape: shape.filter(|s| s.pairs <= SESSION_PAIR_CAP),
        });
    }

    /// A connection from `start` to `end` (ns) carrying `pairs` (only kept
    /// when shapes are).
    pub fn add(&mut self, start: i64, end: i64, pairs: ConnShape, out: &mut Vec<Sample>) {
        let th = self.th;
        let Some(s) = &mut self.s else {
            return self.new_session(start, end, pairs, out);
        };
        let server = pairs.server;
        if start - s.rre_end < th.rre_gap && start - s.prev_start < th.rre_max_interconn && s.rre_conns < th.max_conns {
            s.server(server);
            s.rre_conns += 1;
            s.rre_end = s.rre_end.max(end);
            out.push(Sample::InterConn((start - s.prev_start).max(0)));
            s.prev_start = start;
            if let Some(sh) = &mut s.shape {
                sh.pairs += pairs.size();
                if let Some(r) = sh.rres.last_mut() {
                    r.conns.push(((start - s.rre_start).max(0), pairs));
                }
            }
        } else if start - s.rre_end < th.session_gap && s.rres < th.max_rres && th.session_max.is_none_or(|m| start - s.sess_start < m) {
            let gap = (start - s.rre_end).max(0);
            out.push(Sample::ConnsPerRre(s.rre_conns));
            out.push(Sample::InterRre(gap));
            out.push(Sample::RreStart);
            s.server(server);
            s.rres += 1;
            s.rre_conns = 1;
            s.rre_end = end;
            s.rre_start = start;
            s.prev_start = start;
            if let Some(sh) = &mut s.shape {
                sh.pairs += pairs.size();
                sh.rres.push(RreShape { gap, conns: vec![(0, pairs)] });
            }
        } else {
            self.finish(out);
            self.new_session(start, end, pairs, out);
            return;
        }
        if s.shape.as_ref().is_some_and(|sh| sh.pairs > SESSION_PAIR_CAP) {
            s.shape = None;
        }
    }

    /// Closes the open session, if any.
    pub fn finish(&mut self, out: &mut Vec<Sample>) {
        if let Some(s) = self.s.take() {
            out.push(Sample::ConnsPerRre(s.rre_conns));
            out.push(Sample::RresPerSession(s.rres));
            out.push(Sample::ServersPerSession(s.servers.len() as u32));
            if self.keep_shapes {
                out.push(match s.shape {
                    Some(sh) => Sample::Session(Box::new(sh)),
                    None => Sample::SessionTooLong,
                });
            }
        }
    }

    /// True when no connection starting at `now` or later could join the
    /// open session (or there is none).
    fn done_at(&self, now: i64) -> bool {
        self.s.as_ref().is_none_or(|s| now - s.rre_end > self.th.session_gap.max(self.th.rre_gap) + DISORDER_NS)
    }
}

/// Whose connections form sessions: an application class and a client,
/// and the server too for `SessionKey::ClientServer` (else `u32::MAX`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct GroupKey {
    pub class: u32,
    pub client: u32,
    pub server: u32,
}

#[derive(Clone, Debug)]
struct Pending {
    start: i64,
    end: Option<i64>,
    token: u64,
    pairs: ConnShape,
}

struct KeyState {
    pending: VecDeque<Pending>,
    b: SessionBuilder,
}

/// A key with this many queued connections behind one still open treats
/// the open ones at the front as ending now: a guard against one
/// connection that lasts the whole trace holding back everything after it.
const MAX_PENDING: usize = 4096;

pub(crate) struct Grouper {
    th: Thresholds,
    keep_shapes: bool,
    keys: FxHashMap<GroupKey, KeyState>,
    next_token: u64,
    scratch: Vec<Sample>,
    /// Samples produced, with their key, for the caller to take.
    pub out: Vec<(GroupKey, Sample)>,
    pending: usize,
    pub peak_keys: usize,
    pub peak_pending: usize,
}

impl Grouper {
    /// `keep_shapes`: report whole sessions too (`Sample::Session`).
    pub(crate) fn new(th: Thresholds, keep_shapes: bool) -> Grouper {
        Grouper {
            th,
            keep_shapes,
            keys: FxHashMap::default(),
            next_token: 0,
            scratch: Vec::new(),
            out: Vec::new(),
            pending: 0,
            peak_keys: 0,
            peak_pending: 0,
        }
    }

    /// Queues a connection starting at `start`; returns its token.
    pub(crate) fn open(&mut self, key: GroupKey, start: i64) -> u64 {
        let token = self.next_token;
        self.next_token += 1;
        let (th, keep) = (self.th, self.keep_shapes);
        let ks = self.keys.entry(key).or_insert_with(|| KeyState { pending: VecDeque::new(), b: SessionBuilder::new(th, keep) });
        // Keep start order; input disorder and split connections can place
        // a start before the last one queued.
        let at = ks.pending.iter().rposition(|p| p.start <= start).map_or(0, |i| i + 1);
        ks.pending.insert(at, Pending { start, end: None, token, pairs: ConnShape::default() });
        self.pending += 1;
        if ks.pending.len() > MAX_PENDING {
            for p in ks.pending.iter_mut().take_while(|p| p.end.is_none()) {
                p.end = Some(start.max(p.start));
            }
        }
        self.peak_keys = self.peak_keys.max(self.keys.len());
        self.peak_pending = self.peak_pending.max(self.pending);
        self.drain(key);
        token
    }

    /// The connection ended at `end`, having carried `pairs` (empty unless
    /// shapes are kept).
    pub(crate) fn close(&mut self, key: GroupKey, token: u64, end: i64, pairs: ConnShape) {
        if let Some(ks) = self.keys.get_mut(&key) {
            if let Some(p) = ks.pending.iter_mut().find(|p| p.token == token) {
                p.end = Some(end.max(p.start));
                p.pairs = pairs;
            }
        }
        self.drain(key);
    }

    /// The connection carried no data: it is not part of the model (Swing
    /// dropped connections with no request/response pair).
    pub(crate) fn cancel(&mut self, key: GroupKey, token: u64) {
        if let Some(ks) = self.keys.get_mut(&key) {
            if let Some(i) = ks.pending.iter().position(|p| p.token == token) {
                ks.pending.remove(i);
                self.pending -= 1;
            }
        }
        self.drain(key);
    }

    fn drain(&mut self, key: GroupKey) {
        let Some(ks) = self.keys.get_mut(&key) else { return };
        while ks.pending.front().is_some_and(|p| p.end.is_some()) {
            let p = ks.pending.pop_front().expect("front checked");
            self.pending -= 1;
            ks.b.add(p.start, p.end.unwrap_or(p.start), p.pairs, &mut self.scratch);
        }
        self.out.extend(self.scratch.drain(..).map(|s| (key, s)));
        if ks.pending.is_empty() && ks.b.s.is_none() {
            self.keys.remove(&key);
        }
    }

    /// Closes the sessions that nothing starting from `now` on could join.
    pub(crate) fn sweep(&mut self, now: i64) {
        let mut done: Vec<GroupKey> = self.keys.iter().filter(|(_, ks)| ks.pending.is_empty() && ks.b.done_at(now)).map(|(k, _)| *k).collect();
        done.sort_unstable();
        for k in done {
            self.retire(k);
        }
    }

    fn retire(&mut self, key: GroupKey) {
        if let Some(mut ks) = self.keys.remove(&key) {
            for p in ks.pending.drain(..) {
                self.pending -= 1;
                ks.b.add(p.start, p.end.unwrap_or(p.start), p.pairs, &mut self.scratch);
            }
            ks.b.finish(&mut self.scratch);
            self.out.extend(self.scratch.drain(..).map(|s| (key, s)));
        }
    }

    /// End of input: closes every session, in key order.
    pub(crate) fn finish_all(&mut self) {
        let mut keys: Vec<GroupKey> = self.keys.keys().copied().collect();
        keys.sort_unstable();
        for k in keys {
            self.retire(k);
        }
    }

    #[cfg(test)]
    pub(crate) fn live_keys(&self) -> usize {
        self.keys.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Sample::*;

    const S: i64 = 1_000_000_000;

    fn th() -> Thresholds {
        Thresholds::from_options(&swing::ExtractOptions::default())
    }

    /// Runs (start, end) connections in seconds through a builder.
    fn run(th: Thresholds, conns: &[(f64, f64)]) -> Vec<Sample> {
        let mut b = SessionBuilder::new(th, false);
        let mut out = vec![];
        for &(s, e) in conns {
            b.add((s * 1e9) as i64, (e * 1e9) as i64, ConnShape::default(), &mut out);
        }
        b.finish(&mut out);
        out.retain(|s| *s != RreStart);
        out
    }

    #[test]
    fn rre_gap_joins_and_splits() {
        // 1.9 s after the RRE's end joins it; 2 s after starts a new RRE.
        let out = run(th(), &[(0.0, 1.0), (2.9, 3.0), (5.0, 6.0)]);
        assert_eq!(
            out,
            vec![SessionStart(0), InterConn(29 * S / 10), ConnsPerRre(2), InterRre(2 * S), ConnsPerRre(1), RresPerSession(2), ServersPerSession(1)]
        );
    }

    #[test]
    fn an_open_connection_keeps_the_rre_running() {
        // The first connection runs until 50 s, so one starting at 20 s is in
        // its RRE (20 − 50 < 2). At 51 s the 30 s interconnection cap (from
        // the start at 20 s) makes a new RRE, 1 s after the RRE's end.
        let out = run(th(), &[(0.0, 50.0), (20.0, 21.0), (51.0, 52.0)]);
        assert_eq!(
            out,
            vec![SessionStart(0), InterConn(20 * S), ConnsPerRre(2), InterRre(S), ConnsPerRre(1), RresPerSession(2), ServersPerSession(1)]
        );
        // Cut by the cap while the RRE is still running: the gap floors at 0.
        let out = run(th(), &[(0.0, 50.0), (45.0, 46.0)]);
        assert_eq!(out, vec![SessionStart(0), ConnsPerRre(1), InterRre(0), ConnsPerRre(1), RresPerSession(2), ServersPerSession(1)]);
    }

    #[test]
    fn interconn_cap() {
        let t = Thresholds { rre_gap: 100 * S, rre_max_interconn: 5 * S, ..th() };
        let out = run(t, &[(0.0, 0.5), (4.0, 4.5), (10.0, 10.5)]);
        assert_eq!(
            out,
            vec![SessionStart(0), InterConn(4 * S), ConnsPerRre(2), InterRre(55 * S / 10), ConnsPerRre(1), RresPerSession(2), ServersPerSession(1)]
        );
    }

    #[test]
    fn session_gap_starts_a_new_session() {
        // 299 s after the RRE's end: same session; 300 s: a new one.
        let out = run(th(), &[(0.0, 1.0), (300.0, 301.0), (601.0, 602.0)]);
        assert_eq!(
            out,
            vec![
                SessionStart(0),
                ConnsPerRre(1),
                InterRre(299 * S),
                ConnsPerRre(1),
                RresPerSession(2),
                ServersPerSession(1),
                SessionStart(601 * S),
                ConnsPerRre(1),
                RresPerSession(1),
                ServersPerSession(1)
            ]
        );
    }

    #[test]
    fn session_length_cap() {
        let t = Thresholds { session_max: Some(100 * S), ..th() };
        // The cap applies to new RREs only: 100.5 s still joins the RRE
        // started at 99 s; 103 s would be a new RRE 103 s into the session.
        let out = run(t, &[(0.0, 1.0), (50.0, 51.0), (99.0, 99.5), (100.5, 101.0), (103.0, 104.0)]);
        let starts: Vec<&Sample> = out.iter().filter(|s| matches!(s, SessionStart(_))).collect();
        assert_eq!(starts, vec![&SessionStart(0), &SessionStart(103 * S)]);
        assert!(out.contains(&RresPerSession(3)));
    }

    #[test]
    fn count_caps() {
        let t = Thresholds { max_conns: 2, max_rres: 2, ..th() };
        // Four connections 0.1 s apart: 2 per RRE; then the third RRE would
        // exceed max_rres, so a new session starts.
        let out = run(t, &[(0.0, 0.05), (0.1, 0.15), (0.2, 0.25), (0.3, 0.35), (0.4, 0.45)]);
        assert_eq!(
            out,
            vec![
                SessionStart(0),
                InterConn(S / 10),
                ConnsPerRre(2),
                InterRre(S / 20),
                InterConn(S / 10),
                ConnsPerRre(2),
                RresPerSession(2),
                ServersPerSession(1),
                SessionStart(4 * S / 10),
                ConnsPerRre(1),
                RresPerSession(1),
                ServersPerSession(1)
            ]
        );
    }

    #[test]
    fn whole_sessions_keep_rres_offsets_and_pairs() {
        let mut b = SessionBuilder::new(th(), true);
        let mut out = vec![];
        // Two connections in one RRE (the second 0.5 s after the first),
        // then an RRE 3 s after the first one's end, then a new session.
        let c = |pairs: Vec<PairShape>| ConnShape { pairs, ..Default::default() };
        b.add(0, S, c(vec![(300, 5000, 0, 0, 0)]), &mut out);
        b.add(S / 2, 2 * S, c(vec![(200, 100, 0, 0, 0), (250, 90_000, S / 10, 0, 0)]), &mut out);
        b.add(5 * S, 6 * S, c(vec![(100, 10, 0, 0, 0)]), &mut out);
        b.add(1000 * S, 1001 * S, c(vec![(1, 1, 0, 0, 0)]), &mut out);
        b.finish(&mut out);
        let shapes: Vec<&SessionShape> = out
            .iter()
            .filter_map(|s| match s {
                Session(sh) => Some(&**sh),
                _ => None,
            })
            .collect();
        assert_eq!(shapes.len(), 2);
        assert_eq!(
            shapes[0],
            &SessionShape {
                start: 0,
                pairs: 4,
                rres: vec![
                    RreShape {
                        gap: 0,
                        conns: vec![(0, c(vec![(300, 5000, 0, 0, 0)])), (S / 2, c(vec![(200, 100, 0, 0, 0), (250, 90_000, S / 10, 0, 0)]))]
                    },
                    RreShape { gap: 3 * S, conns: vec![(0, c(vec![(100, 10, 0, 0, 0)]))] },
                ],
            }
        );
        assert_eq!((shapes[1].start, shapes[1].pairs), (1000 * S, 1));
        // The marginal samples are the same as without shapes.
        let mut plain = SessionBuilder::new(th(), false);
        let mut out2 = vec![];
        for (a, e) in [(0, S), (S / 2, 2 * S), (5 * S, 6 * S), (1000 * S, 1001 * S)] {
            plain.add(a, e, ConnShape::default(), &mut out2);
        }
        plain.finish(&mut out2);
        out.retain(|s| !matches!(s, Session(_)));
        assert_eq!(out, out2);
    }

    #[test]
    fn sessions_over_the_pair_cap_are_not_kept_whole() {
        let mut b = SessionBuilder::new(th(), true);
        let mut out = vec![];
        b.add(0, S, ConnShape { pairs: vec![(1, 1, 0, 0, 0); SESSION_PAIR_CAP], ..Default::default() }, &mut out);
        b.add(S / 2, S, ConnShape { pairs: vec![(1, 1, 0, 0, 0)], ..Default::default() }, &mut out);
        b.finish(&mut out);
        assert!(out.contains(&SessionTooLong));
        assert!(!out.iter().any(|s| matches!(s, Session(_))));
    }

    #[test]
    fn grouper_waits_for_ends_and_keeps_start_order() {
        let mut g = Grouper::new(th(), false);
        let k = GroupKey { class: 0, client: 1, server: u32::MAX };
        let a = g.open(k, 0);
        let b = g.open(k, S);
        g.close(k, b, 2 * S, ConnShape::default());
        assert!(g.out.is_empty(), "b waits for a");
        // A connection split off later but starting earlier goes before b.
        let c = g.open(k, S / 2);
        g.close(k, c, S, ConnShape::default());
        g.close(k, a, 10 * S, ConnShape::default());
        let got: Vec<Sample> = g.out.drain(..).map(|(_, s)| s).filter(|s| *s != RreStart).collect();
        assert_eq!(got, vec![SessionStart(0), InterConn(S / 2), InterConn(S / 2)]);
        // Not retired while a later connection could still join.
        g.sweep(100 * S);
        assert_eq!(g.live_keys(), 1);
        g.sweep(400 * S);
        assert_eq!(g.live_keys(), 0);
        let got: Vec<Sample> = g.out.drain(..).map(|(_, s)| s).collect();
        assert_eq!(got, vec![ConnsPerRre(3), RresPerSession(1), ServersPerSession(1)]);
    }

    #[test]
    fn keys_are_independent_and_cancelled_connections_vanish() {
        let mut g = Grouper::new(th(), false);
        let k1 = GroupKey { class: 0, client: 1, server: 2 };
        let k2 = GroupKey { class: 0, client: 1, server: 3 };
        let a = g.open(k1, 0);
        let b = g.open(k2, S);
        let c = g.open(k1, S);
        g.cancel(k1, a);
        g.close(k1, c, 2 * S, ConnShape::default());
        g.close(k2, b, 2 * S, ConnShape::default());
        g.finish_all();
        let mut per: Vec<(u32, Sample)> = g.out.drain(..).map(|(k, s)| (k.server, s)).filter(|s| s.1 != RreStart).collect();
        per.sort_by_key(|(k, _)| *k);
        assert_eq!(
            per,
            vec![
                (2, SessionStart(S)),
                (2, ConnsPerRre(1)),
                (2, RresPerSession(1)),
                (2, ServersPerSession(1)),
                (3, SessionStart(S)),
                (3, ConnsPerRre(1)),
                (3, RresPerSession(1)),
                (3, ServersPerSession(1))
            ]
        );
    }
}
