//! TCP connections rebuilt from packets, one pass, keyed by 5-tuple.
//!
//! * Client: the SYN's sender; else the SYN/ACK's receiver; for a
//!   connection already open at the start of the trace, the end not on the
//!   server port (a port listed in `opts.ports`, else the lower port).
//! * Bytes come from sequence numbers, not from captured lengths (traces
//!   are often header-only), and from the other side's ACKs where a
//!   direction's own packets are missing (one-directional traces).
//! * A data segment entirely below the highest sequence seen is a fill
//!   if it lands in a hole (a gap skipped earlier) and a retransmission
//!   otherwise. Fills are classified as loss or reordering at the end.
//! * End: FIN in both directions, RST, or `idle_timeout_s` of silence (end
//!   = last packet); a new SYN on the tuple starts a new connection. The
//!   tuple of a closed connection is remembered (a few bytes) for
//!   `idle_timeout_s` so that its last ACK, a retransmitted FIN or a late
//!   RST is absorbed instead of opening a new, data-less connection.
//! * Samples for the host parameters are taken here: handshake RTTs
//!   (SYN→SYN/ACK for the server's side, SYN/ACK→ACK for the client's, each
//!   skipped if its first packet was retransmitted: Karn), data→ACK RTTs
//!   for the acknowledging host (one timed segment per direction at a time,
//!   dropped if a retransmission overlaps it), packet pairs, MSS and loss
//!   counters.

use crate::classes::{ClassNames, TcpClasses};
use crate::exchanges::{Crossings, Exchanges, Pair};
use crate::flowkey::FlowKey;
use crate::grouping::{AduShape, ConnShape, GroupKey, Grouper};
use crate::growth::RoundTiming;
use crate::hosts::HostTable;
use crate::netparams::{AckHold, PAIR_MIN_PAYLOAD};
use crate::options::{secs, Compiled, DISORDER_NS};
use crate::record::{ConnRecord, EndReason};
use crate::sides::key_addr;
use crate::sink::{Sink, TcpStats};
use crate::slots::place;
use crate::stream::{Ask, Dir, Flight, LossReport, Seg};
use rustc_hash::FxHashMap;
use std::net::SocketAddr;
use swing::{RttSamples, SessionKey};
use units::Rng;
use wire::TcpInfo;

/// Handshake times and sequence numbers as seen at the link.
#[derive(Clone, Debug, Default)]
pub(crate) struct Handshake {
    syn: Option<i64>,
    syn_last: Option<i64>,
    syns: u32,
    isn: Option<u32>,
    synack: Option<i64>,
    synacks: u32,
    server_isn: Option<u32>,
    ack: Option<i64>,
    /// Window scale each side's SYN offered (client, server).
    wscale: [Option<u8>; 2],
    /// The MSS each side's SYN announced: the largest segment the other
    /// side sends it.
    mss: [Option<u16>; 2],
}

impl Handshake {
    /// A window field sent by side `d`, in bytes, when both SYNs were seen.
    fn window(&self, d: usize, field: u16) -> Option<u64> {
        if self.syn.is_none() || self.synack.is_none() {
            return None;
        }
        let shift = match self.wscale {
            [Some(a), Some(b)] => [a, b][d].min(14),
            _ => 0,
        };
        Some((field as u64) << shift)
    }

    /// The client's handshake ACK: when its application learnt it was connected.
    pub(crate) fn connected(&self) -> Option<i64> {
        self.ack
    }

    /// SYN to SYN/ACK, both seen once: the round trip from the capture to
    /// the server, which a response's first byte takes on top of the
    /// server's own time.
    pub(crate) fn server_rtt(&self) -> Option<i64> {
        match (self.syn, self.synack, self.syns, self.synacks) {
            (Some(s), Some(sa), 1, 1) if sa >= s => Some(sa - s),
            _ => None,
        }
    }

    /// SYN to the handshake's ACK, both seen once: the path's round trip.
    fn rtt(&self) -> Option<i64> {
        match (self.syn, self.ack, self.syns, self.synacks) {
            (Some(s), Some(a), 1, 1) => Some(a - s),
            _ => None,
        }
    }

    /// The path's round trip (`rtt`) and the part of it between the
    /// capture and side `d` (0: the client's, SYN/ACK to ACK; 1: the
    /// server's, SYN to SYN/ACK).
    fn rtts(&self, d: usize) -> Option<(i64, i64)> {
        let side = if d == 0 { self.ack? - self.synack? } else { self.server_rtt()? };
        Some((self.rtt()?, side))
    }
}

/// One TCP connection; direction 0 is client to server.
#[derive(Clone, Debug)]
pub(crate) struct Conn {
    pub key: FlowKey,
    pub client_lo: bool,
    /// Client, server.
    pub hosts: [u32; 2],
    pub ports: [u16; 2],
    pub class: u32,
    pub gkey: GroupKey,
    /// Grouping token of the current chunk (see `Sink::pair`).
    pub token: u64,
    pub chunk_pairs: u32,
    pub chunk_end: i64,
    pub start: i64,
    pub last: i64,
    pub hs: Handshake,
    pub fin: [bool; 2],
    pub dirs: [Dir; 2],
    pub ex: Exchanges,
    /// The previous pair's last packet, for think times.
    pub last_pair_end: Option<i64>,
    pub packets: [u64; 2],
    pub bytes: [u64; 2],
    pub log: Option<Vec<Pair>>,
    /// The current chunk's pairs, when whole sessions are kept.
    pub shape: ConnShape,
    /// Times a side sent while the other side's data was in flight
    /// (unacknowledged): `CONCURRENT_MIN_CROSSINGS` make it concurrent.
    pub crossings: Crossings,
    /// Each element's (first packet, direction, bytes), up to `ADU_CAP`.
    pub elems: Vec<(i64, u8, u64)>,
    /// Split into chunks, or too many pairs to hold: never concurrent.
    pub split: bool,
    /// The chunk's pairs (with their times) not yet sampled.
    pub held: Vec<Held>,
    /// The first FIN or RST seen, either way.
    pub closing_at: Option<i64>,
}

/// A pair waiting for its connection's chunk to end, with the times that
/// go with it (ns; `None` where there is none).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Held {
    pub pair: Pair,
    /// From the previous pair's end: a client's think time.
    pub think_ns: Option<i64>,
    /// The connection's first request's wait after the handshake.
    pub wait_ns: Option<i64>,
    /// The server's time before its response.
    pub server_ns: Option<i64>,
}

/// Bytes in flight under which a sender cannot have been held back by its
/// window: three full segments, the smallest initial window (RFC 3390).
const UNIT_WINDOW: i64 = 4380;

/// Most data units kept of a concurrent connection (more: its pairs only).
pub(crate) const ADU_CAP: usize = 2_000;
impl Conn {
    pub(crate) fn hi(&self) -> [i64; 2] {
        [self.dirs[0].hi, self.dirs[1].hi]
    }

    /// The path's round trip: the handshake's, else (a SYN or SYN/ACK sent
    /// again leaves none, Karn, and a capture begun after the handshake
    /// shows none) the shortest data-to-ACK times each way, the capture's
    /// round trip to each side; one way's alone if the other sent nothing
    /// timed.
    fn path_rtt(&self) -> Option<i64> {
        self.hs.rtt().or_else(|| {
            let [a, b] = [self.dirs[0].rtt_min, self.dirs[1].rtt_min];
            a.or(b).map(|_| a.unwrap_or(0) + b.unwrap_or(0))
        })
    }

    /// A concurrent connection's data units, offsets from each side's start:
    /// the client's is its handshake ACK (it connected), the server's one
    /// handshake round trip after its SYN/ACK (it accepted); without a
    /// handshake, the first packet. `None` if the connection is not
    /// concurrent, was split or had too many elements.
    pub(crate) fn adus(&self) -> Option<Vec<AduShape>> {
        if !self.crossings.concurrent() || self.split || self.elems.len() > ADU_CAP {
            return None;
        }
        let client = self.hs.ack.unwrap_or(self.start);
        let server = match (self.hs.syn, self.hs.synack, self.hs.ack) {
            (Some(s), Some(sa), Some(a)) if a >= s => sa + (a - s),
            _ => self.start,
        };
        Some(self.elems.iter().map(|&(t, d, b)| ((t - if d == 0 { client } else { server }).max(0), d, b)).collect())
    }
}

/// What is remembered of a connection closed by FIN or RST.
#[derive(Clone, Copy, Debug)]
struct Closed {
    at: i64,
    client_lo: bool,
    hosts: [u32; 2],
    class: u32,
    server_isn: Option<u32>,
}

/// The options `on_packet` and its steps need.
#[derive(Clone, Copy)]
struct Knobs {
    rtt_max_s: f64,
    data_rtt: bool,
    /// `pause_gap_s` in ns.
    pause: Option<i64>,
    /// `unit_gap_s` in ns.
    unit_gap: Option<i64>,
    shaper_min_segments: u32,
}

pub(crate) struct Tcp {
    idle: i64,
    knobs: Knobs,
    per_server: bool,
    map: FxHashMap<FlowKey, u32>,
    conns: Vec<Conn>,
    free: Vec<u32>,
    closed: FxHashMap<FlowKey, Closed>,
    since_sweep: usize,
    now: i64,
    pub sink: Sink,
}

impl Tcp {
    pub(crate) fn new(o: &Compiled, record: bool) -> Tcp {
        Tcp {
            idle: o.idle,
            knobs: Knobs {
                rtt_max_s: o.o.rtt_max_s,
                data_rtt: o.o.rtt_samples != RttSamples::Handshake,
                pause: o.o.pause_gap_s.map(crate::options::ns),
                unit_gap: o.o.unit_gap_s.map(crate::options::ns),
                shaper_min_segments: o.o.shaper_min_segments,
            },
            per_server: o.o.session_key == SessionKey::ClientServer,
            map: FxHashMap::default(),
            conns: Vec::new(),
            free: Vec::new(),
            closed: FxHashMap::default(),
            since_sweep: 0,
            now: i64::MIN,
            sink: Sink {
                classes: TcpClasses { session_cap: o.o.session_structures as usize, ..Default::default() },
                grouper: Grouper::new(o.groups, o.o.session_structures > 0),
                rng: Rng::stream(0, "extract.classes"),
                records: record.then(Vec::new),
                stats: TcpStats::default(),
                t0: 0,
                max_pairs: o.o.max_pairs_per_conn,
                keep_shapes: o.o.session_structures > 0,
                late: Vec::new(),
            },
        }
    }

    /// One TCP segment; returns the (sender, receiver) host ids.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(crate) fn packet(
        &mut self,
        t: i64,
        src: u128,
        dst: u128,
        p: &TcpInfo,
        ip_len: u32,
        hosts: &mut HostTable,
        names: &mut ClassNames,
        rh: &mut Rng,
    ) -> (u32, u32) {
        self.sink.stats.packets += 1;
        self.now = self.now.max(t);
        self.since_sweep += 1;
        if self.since_sweep >= (self.map.len() + self.closed.len()).max(4096) {
            self.since_sweep = 0;
            self.sweep(self.now, hosts, names);
        }
        let (key, from_lo) = FlowKey::of(src, p.src_port, dst, p.dst_port);
        let pure_syn = p.flags.syn() && !p.flags.ack();
        let synack = p.flags.syn() && p.flags.ack();
        let idx = match self.map.get(&key).copied() {
            Some(i) => {
                let c = &self.conns[i as usize];
                let fresh = if t - c.last > self.idle {
                    Some(EndReason::Idle)
                } else if pure_syn {
                    // A retransmitted SYN, or the SYN of a connection first
                    // seen from its SYN/ACK (clock skew between two
                    // captures), is the same connection; any other SYN
                    // starts a new one.
                    let from_client = from_lo == c.client_lo;
                    let isn_next = Some(p.seq.wrapping_add(1));
                    let same = from_client && (c.hs.isn == Some(p.seq) || (c.hs.isn.is_none() && c.dirs[0].from_syn && c.dirs[0].base == isn_next));
                    (!same).then_some(EndReason::Reused)
                } else {
                    None
                };
                match fresh {
                    Some(why) => {
                        let last = c.last;
                        self.finish(i, last, why, hosts, names);
                        self.open(key, from_lo, t, src, dst, p, hosts, names)
                    }
                    None => i,
                }
            }
            None => {
                if let Some(cl) = self.closed.get(&key) {
                    // Packets after a close (the last ACK, a retransmitted
                    // FIN, a late RST) belong to it; a new SYN does not.
                    let reopen = pure_syn || (synack && cl.server_isn != Some(p.seq)) || t - cl.at > self.idle;
                    if !reopen {
                        let d = (from_lo != cl.client_lo) as usize;
                        let a = self.sink.classes.host(cl.class, cl.hosts[0]);
                        a.bytes[d] += ip_len as u64;
                        a.packets[d] += 1;
                        return (cl.hosts[d], cl.hosts[1 - d]);
                    }
                    self.closed.remove(&key);
                }
                self.open(key, from_lo, t, src, dst, p, hosts, names)
            }
        };
        let c = &mut self.conns[idx as usize];
        let d = (from_lo != c.client_lo) as usize;
        let ids = (c.hosts[d], c.hosts[1 - d]);
        let s = Packet { t, p, ip_len, d, from: ids.0, to: ids.1 };
        let mut cx = Ctx { hosts, rh, sink: &mut self.sink, k: self.knobs };
        if let Some(why) = on_packet(c, &s, &mut cx) {
            let c = &self.conns[idx as usize];
            let cl = Closed { at: t, client_lo: c.client_lo, hosts: c.hosts, class: c.class, server_isn: c.hs.server_isn };
            self.closed.insert(key, cl);
            self.finish(idx, t, why, hosts, names);
        }
        ids
    }

    #[allow(clippy::too_many_arguments)]
    fn open(&mut self, key: FlowKey, from_lo: bool, t: i64, src: u128, dst: u128, p: &TcpInfo, hosts: &mut HostTable, names: &mut ClassNames) -> u32 {
        let (sport, dport) = (p.src_port, p.dst_port);
        let client_is_src = if p.flags.syn() {
            !p.flags.ack()
        } else {
            let (ks, kd) = (names.is_known(sport), names.is_known(dport));
            match (ks, kd) {
                (false, true) => true,
                (true, false) => false,
                _ => dport <= sport,
            }
        };
        if !p.flags.syn() || p.flags.ack() {
            self.sink.stats.without_syn += 1;
        }
        let (client, server, sport_c, sport_s) = if client_is_src { (src, dst, sport, dport) } else { (dst, src, dport, sport) };
        let h = [hosts.id(client), hosts.id(server)];
        hosts.get(h[0]).tcp_initiated += 1;
        hosts.get(h[1]).tcp_accepted += 1;
        let class = names.tcp(sport_s);
        self.sink.classes.port(class, h[0], sport_s);
        let gkey = GroupKey { class, client: h[0], server: if self.per_server { h[1] } else { u32::MAX } };
        let token = self.sink.grouper.open(gkey, t);
        self.sink.pump();
        self.sink.stats.connections += 1;
        let c = Conn {
            key,
            client_lo: from_lo == client_is_src,
            hosts: h,
            ports: [sport_c, sport_s],
            class,
            gkey,
            token,
            chunk_pairs: 0,
            chunk_end: t,
            start: t,
            last: t,
            hs: Handshake::default(),
            fin: [false; 2],
            dirs: Default::default(),
            ex: Exchanges::default(),
            last_pair_end: None,
            packets: [0; 2],
            bytes: [0; 2],
            log: self.sink.records.is_some().then(Vec::new),
            shape: ConnShape::default(),
            crossings: Crossings::default(),
            elems: Vec::new(),
            split: false,
            held: Vec::new(),
            closing_at: None,
        };
        let idx = place(&mut self.conns, &mut self.free, c);
        self.map.insert(key, idx);
        let st = &mut self.sink.stats;
        st.peak_live = st.peak_live.max(self.map.len());
        st.peak_closed = st.peak_closed.max(self.closed.len());
        idx
    }

    /// Ends connection `idx` at `end`: its last pair, its chunk for the
    /// grouper, its class counts and record; frees its slot.
    fn finish(&mut self, idx: u32, end: i64, why: EndReason, hosts: &mut HostTable, names: &ClassNames) {
        let sink = &mut self.sink;
        let c = &mut self.conns[idx as usize];
        // A completed handshake: a SYN sent again was lost (or held) on its
        // way or its answer was; a SYN/ACK sent more often than the SYNs
        // asking for it, likewise. Each counts against the sender.
        if c.hs.syns > 0 && c.hs.synacks > 0 {
            let client = &mut hosts.get(c.hosts[0]).net;
            client.handshakes += 1;
            client.handshake_retx += (c.hs.syns - 1) as u64;
            let server = &mut hosts.get(c.hosts[1]).net;
            server.handshakes += 1;
            server.handshake_retx += c.hs.synacks.saturating_sub(c.hs.syns) as u64;
        }
        if let Some(p) = c.ex.finish(c.hi()) {
            sink.pair(c, p);
        }
        if c.chunk_pairs > 0 {
            let end = end.max(c.chunk_end);
            // How long the connection stayed open after its last exchange
            // (an idle keep-alive) before a side closed it: its first FIN
            // or RST, also when the other side's FIN never came before the
            // trace ended (a server closing on its keep-alive timer, a
            // client that lets the socket be); unknown when no side closed.
            let linger = c.closing_at.map(|f| (f - c.chunk_end).max(0));
            sink.end_chunk(c, end, linger);
        } else {
            sink.grouper.cancel(c.gkey, c.token);
            sink.pump();
            sink.stats.without_data += 1;
        }
        sink.stats.one_way += (c.packets[0] == 0 || c.packets[1] == 0) as u64;
        let a = sink.classes.host(c.class, c.hosts[0]);
        for d in 0..2 {
            a.bytes[d] += c.bytes[d];
            a.packets[d] += c.packets[d];
        }
        if let Some(recs) = &mut sink.records {
            let addr = |h: u32, port: u16| SocketAddr::new(key_addr(hosts.hosts[h as usize].addr), port);
            recs.push(ConnRecord {
                client: addr(c.hosts[0], c.ports[0]),
                server: addr(c.hosts[1], c.ports[1]),
                class: names.names[c.class as usize].clone(),
                start_ns: c.start,
                end_ns: end,
                end: why,
                syn_ns: c.hs.syn,
                last_syn_ns: c.hs.syn_last,
                syns: c.hs.syns,
                synack_ns: c.hs.synack,
                synacks: c.hs.synacks,
                ack_ns: c.hs.ack,
                packets: c.packets,
                bytes: c.bytes,
                payload: [c.dirs[0].hi.max(0) as u64, c.dirs[1].hi.max(0) as u64],
                retransmissions: [c.dirs[0].retx, c.dirs[1].retx],
                fills: [c.dirs[0].fills, c.dirs[1].fills],
                pairs: c.log.take().unwrap_or_default(),
            });
        }
        self.map.remove(&c.key);
        c.log = None;
        self.free.push(idx);
    }

    /// Ends idle connections and forgets old closed tuples; runs at most
    /// once per as many packets as there are entries, so it costs O(1) per
    /// packet.
    fn sweep(&mut self, now: i64, hosts: &mut HostTable, names: &ClassNames) {
        let limit = self.idle + DISORDER_NS;
        let mut idle: Vec<(i64, u64, u32)> = self
            .map
            .values()
            .filter_map(|&i| {
                let c = &self.conns[i as usize];
                (now - c.last > limit).then_some((c.start, c.token, i))
            })
            .collect();
        idle.sort_unstable();
        for (_, _, i) in idle {
            let last = self.conns[i as usize].last;
            self.finish(i, last, EndReason::Idle, hosts, names);
        }
        self.closed.retain(|_, c| now - c.at <= limit);
        self.sink.grouper.sweep(now);
        self.sink.pump();
    }

    /// End of input: every open connection ends at its last packet.
    pub(crate) fn finish_all(&mut self, hosts: &mut HostTable, names: &ClassNames) {
        let mut open: Vec<(i64, u64, u32)> = self
            .map
            .values()
            .map(|&i| {
                let c = &self.conns[i as usize];
                (c.start, c.token, i)
            })
            .collect();
        open.sort_unstable();
        for (_, _, i) in open {
            let last = self.conns[i as usize].last;
            self.finish(i, last, EndReason::TraceEnd, hosts, names);
        }
        self.sink.grouper.finish_all();
        self.sink.pump();
    }
}

/// A multiple or fraction of a round trip, `num / den`, taken of one in
/// integer nanoseconds (`rtt * num / den`, rounded down).
#[derive(Clone, Copy, Debug)]
struct Rtts {
    num: i64,
    den: i64,
}

impl Rtts {
    #[inline]
    const fn of(self, rtt: i64) -> i64 {
        rtt * self.num / self.den
    }
}

/// A first flight is the segments within this much of a handshake round
/// trip of its first: no ACK of them can bring more before a round trip,
/// and stopping short of one keeps the next flight out when the data's
/// round trip runs a little faster than the handshake's.
const FLIGHT_SPAN: Rtts = Rtts { num: 8, den: 10 };
/// The quiet after the flight that shows the sender stopped to wait for
/// ACKs: a sender still sending leaves no such gap (nor does a line so slow
/// that every packet takes this long, which then gives no count).
const FLIGHT_PAUSE: Rtts = Rtts { num: 1, den: 4 };
/// The next segment must come at least this long after the flight's first:
/// it was sent on an ACK, which takes a round trip (less a margin for
/// jitter). Sooner, the pause was within a flight that the path spread
/// out, and the count would fall short.
const NEXT_FLIGHT_AFTER: Rtts = Rtts { num: 9, den: 10 };
/// A segment sent on an ACK reaches the capture the sender's side of the
/// round trip after the ACK did (`ON_ACK` of it, for jitter, plus
/// `ON_ACK_MARGIN_NS` for the sender's own reaction).
const ON_ACK: Rtts = Rtts { num: 3, den: 2 };
const ON_ACK_MARGIN_NS: i64 = 1_000_000;

/// A new data segment at offsets `s0..e0` at `t` in a direction: counts
/// its first window-limited flight, the segments that arrive within
/// `FLIGHT_SPAN` of the first of a flight begun with nothing
/// unacknowledged, in segments of the MSS the receiver announced (`mss`).
/// Returns the count once the flight is over, if a clear pause
/// (`FLIGHT_PAUSE`) followed it as the sender waited for ACKs and the next
/// segment came `NEXT_FLIGHT_AFTER` the first. A path that spreads the
/// flight over the whole RTT gives none, nor does a slow line whose every
/// packet takes longer than `FLIGHT_PAUSE`. A flight the peer's data ends
/// (see `data`) was all the application had, a request: the count waits
/// for a later flight, which a stack sends with the window it began with
/// (Linux, RFC 7661: a window grows only while it limits the sender; and a
/// sender idle for an RTO restarts from it, RFC 5681), unless a loss
/// shrank it in between. A later flight counts only if it ended with a
/// full segment and its next segment came on its first ACK, within
/// `ON_ACK` of the round trip between the capture and the sender: an
/// application writing a message now and then ends it short and sends at
/// other times. `rtts`: the path's round trip and the sender's part of it.
fn first_flight(dd: &mut Dir, t: i64, s0: i64, e0: i64, rtts: Option<(i64, i64)>, mss: Option<u16>) -> Option<u32> {
    if dd.flight_done {
        return None;
    }
    let Some((r, side)) = rtts.filter(|&(r, _)| r > 0) else {
        dd.flight_done = true;
        return None;
    };
    match &mut dd.flight {
        // Data of its own still unacknowledged, or a loss shown since its
        // first (which shrank the window): no flight starts here.
        None if dd.data_hi.is_some_and(|h| dd.acked < h || dd.loss_at.is_some()) => None,
        None => {
            let later = dd.data_hi.is_some();
            dd.flight =
                Some(Flight { start: t, from: s0, to: e0, max_len: (e0 - s0) as u32, last: t, later, acked_at: None, last_len: (e0 - s0) as u32 });
            None
        }
        Some(f) if t < f.start + FLIGHT_SPAN.of(r) => {
            f.from = f.from.min(s0);
            f.to = f.to.max(e0);
            f.max_len = f.max_len.max((e0 - s0) as u32);
            f.last = t;
            f.last_len = (e0 - s0) as u32;
            None
        }
        Some(f) => {
            let on_ack = !f.later || (f.ends_full(mss) && f.acked_at.is_some_and(|a| t >= a && t - a <= ON_ACK.of(side) + ON_ACK_MARGIN_NS));
            let waited = t - f.last >= FLIGHT_PAUSE.of(r) && t - f.start >= NEXT_FLIGHT_AFTER.of(r);
            if waited && !on_ack {
                // An application's own pause: look again at the next flight.
                dd.flight = None;
                return first_flight(dd, t, s0, e0, Some((r, side)), mss);
            }
            dd.flight_done = true;
            waited.then(|| f.segments(mss))
        }
    }
}

/// A packet of a connection as the capture saw it: when, what, its IP
/// length, which way it went and between which hosts.
#[derive(Clone, Copy)]
struct Packet<'a> {
    t: i64,
    p: &'a TcpInfo,
    ip_len: u32,
    /// The sender's direction (0 = from the client); the receiver's is `o()`.
    d: usize,
    /// The sender's and the receiver's host ids.
    from: u32,
    to: u32,
}

impl Packet<'_> {
    /// The receiver's direction.
    fn o(&self) -> usize {
        1 - self.d
    }

    /// The sequence number of the packet's first data byte (a SYN takes one).
    fn data_seq(&self) -> u32 {
        self.p.seq.wrapping_add(self.p.flags.syn() as u32)
    }
}

/// What a packet updates beyond its connection, and the options that say
/// how: the hosts' samples, the sink of pairs and late answers.
struct Ctx<'a> {
    hosts: &'a mut HostTable,
    rh: &'a mut Rng,
    sink: &'a mut Sink,
    k: Knobs,
}

/// Updates `c` with a packet, in the order the packet's meanings depend on
/// one another. Returns why the connection closes, if it does.
#[inline]
fn on_packet(c: &mut Conn, s: &Packet, cx: &mut Ctx) -> Option<EndReason> {
    count(c, s, cx);
    handshake(c, s, cx);
    c.dirs[s.d].set_base(s.data_seq(), s.p.flags.syn());
    receive_window(c, s, cx);
    // What this packet acknowledges was sent before it: advance the other
    // direction first.
    if s.p.flags.ack() {
        ack(c, s, cx);
    }
    if s.p.payload_len > 0 {
        data(c, s, cx);
    } else {
        // A pure ACK, SYN or FIN between two data segments: not back to back.
        c.dirs[s.d].prev = None;
    }
    // Nor is a pair with a packet of the other direction between them.
    c.dirs[s.o()].prev = None;
    close(c, s)
}

/// Counts the packet against its connection and, if it carries data,
/// against the sender's sending envelope (`shaping`).
fn count(c: &mut Conn, s: &Packet, cx: &mut Ctx) {
    c.last = c.last.max(s.t);
    c.packets[s.d] += 1;
    c.bytes[s.d] += s.ip_len as u64;
    if s.p.payload_len > 0 {
        cx.hosts.get(s.from).net.sending.data(s.t, s.ip_len as u64, cx.k.shaper_min_segments);
    }
}

/// The handshake: the client's SYN, the server's SYN/ACK and the client's
/// ACK of it.
fn handshake(c: &mut Conn, s: &Packet, cx: &mut Ctx) {
    let f = s.p.flags;
    if f.syn() && !f.ack() {
        if s.d == 0 {
            on_syn(c, s, cx);
        }
    } else if f.syn() {
        if s.d == 1 {
            on_synack(c, s, cx);
        }
    } else if s.d == 0 && c.hs.ack.is_none() && c.hs.syns > 0 && f.ack() && !f.rst() {
        on_handshake_ack(c, s, cx);
    }
}

/// The client's SYN: the first one's time, sequence number and options; a
/// SYN sent again is only counted.
fn on_syn(c: &mut Conn, s: &Packet, cx: &mut Ctx) {
    let p = s.p;
    if c.hs.syns == 0 {
        c.hs.syn = Some(s.t);
        c.hs.isn = Some(p.seq);
        c.hs.wscale[0] = p.options.window_scale;
        c.hs.mss[0] = p.options.mss;
        cx.hosts.get(s.from).net.syn_options(&p.options, cx.rh);
        c.start = c.start.min(s.t);
    }
    c.hs.syns += 1;
    c.hs.syn_last = Some(s.t);
    c.dirs[0].set_base(p.seq.wrapping_add(1), true);
}

/// The server's SYN/ACK: the first one answers the SYN (`stalls`), sets
/// both streams' bases and, if it answers the only SYN, is the server
/// side's handshake RTT sample (Karn); one sent again is only counted.
fn on_synack(c: &mut Conn, s: &Packet, cx: &mut Ctx) {
    let (t, p) = (s.t, s.p);
    if c.hs.synacks == 0 {
        if let Some(syn) = c.hs.syn {
            cx.sink.answer(t, syn, c.hs.syn_last.unwrap_or(syn), s.from);
        }
        c.hs.synack = Some(t);
        c.hs.server_isn = Some(p.seq);
        c.hs.wscale[1] = p.options.window_scale;
        c.hs.mss[1] = p.options.mss;
        cx.hosts.get(s.from).net.syn_options(&p.options, cx.rh);
        c.dirs[1].set_base(p.seq.wrapping_add(1), true);
        c.dirs[0].set_base(p.ack, true);
        if let (1, Some(syn), Some(isn)) = (c.hs.syns, c.hs.syn, c.hs.isn) {
            if p.ack == isn.wrapping_add(1) {
                cx.hosts.get(c.hosts[1]).net.rtt_sample(secs(t - syn), cx.k.rtt_max_s, true, cx.rh);
            }
        }
    }
    c.hs.synacks += 1;
}

/// The client's ACK of the SYN/ACK: when it was connected and, if the
/// SYN/ACK was sent once, the client side's handshake RTT sample (Karn).
fn on_handshake_ack(c: &mut Conn, s: &Packet, cx: &mut Ctx) {
    match (c.hs.synack, c.hs.server_isn) {
        (Some(sa), Some(sisn)) => {
            if s.p.ack == sisn.wrapping_add(1) {
                c.hs.ack = Some(s.t);
                if c.hs.synacks == 1 {
                    cx.hosts.get(c.hosts[0]).net.rtt_sample(secs(s.t - sa), cx.k.rtt_max_s, true, cx.rh);
                }
            }
        }
        // The SYN/ACK went the other way of a one-direction capture:
        // SYN→ACK spans both sides of the path, so it is recorded but
        // is no host's sample.
        _ => c.hs.ack = Some(s.t),
    }
}

/// The window a receiver advertises while data comes to it: what its
/// stack let the sender have in flight (scaled when both SYNs offered
/// scaling; a connection whose SYNs were missed gives none).
fn receive_window(c: &Conn, s: &Packet, cx: &mut Ctx) {
    let f = s.p.flags;
    if f.ack() && !f.syn() && c.dirs[s.o()].data_hi.is_some() {
        if let Some(w) = c.hs.window(s.d, s.p.window) {
            cx.hosts.get(s.from).net.window_sample(w, cx.rh);
        }
    }
}

/// The packet's ACK, which moves the other direction's stream: the answers
/// and RTT samples it completes, the sender's ACK habits, the losses it
/// reports and the data it covers that the capture never held.
fn ack(c: &mut Conn, s: &Packet, cx: &mut Ctx) {
    let f = s.p.flags;
    let od = &mut c.dirs[s.o()];
    if od.base.is_none() {
        od.set_base(s.p.ack, false);
        return;
    }
    let mut a = od.off(s.p.ack);
    if let Some(fo) = od.fin_off {
        a = a.min(fo);
    }
    answered(od, a, s, cx);
    let pure_ack = s.p.payload_len == 0 && !f.syn() && !f.fin() && !f.rst();
    ack_habits(od, a, pure_ack, s, cx);
    reported_loss(od, a, pure_ack, c.hs.mss[s.d], s, cx);
    if let Some(fl) = od.flight.as_mut().filter(|fl| a > fl.from && fl.acked_at.is_none()) {
        fl.acked_at = Some(s.t);
    }
    od.rounds.ack(s.t, od.acked, a);
    od.outstanding.ack(a);
    if a > od.acked {
        od.acked = a;
        od.acked_t = s.t;
    }
    acked_unseen(c, a, s, cx);
}

/// An ACK up to offset `a` that covers the direction's asked-for segment
/// is its answer (`stalls`), and one that covers its timed segment is the
/// acknowledging host's data→ACK RTT sample.
fn answered(od: &mut Dir, a: i64, s: &Packet, cx: &mut Ctx) {
    if let Some(ask) = od.ask {
        if a >= ask.end {
            cx.sink.answer(s.t, ask.first, ask.last, s.from);
            od.ask = None;
        }
    }
    if let Some((end, t_sent)) = od.timing {
        if a >= end {
            od.rtt_min = Some(od.rtt_min.map_or(s.t - t_sent, |m| m.min(s.t - t_sent)));
            if cx.k.data_rtt {
                cx.hosts.get(s.from).net.rtt_sample(secs(s.t - t_sent), cx.k.rtt_max_s, false, cx.rh);
            }
            od.timing = None;
        }
    }
}

/// Segments sent this close together reach the receiver together.
const SAME_BURST: i64 = 1_000_000;

/// Pure ACKs once the peer has sent data: how often this host
/// acknowledges, on the wire (window updates and duplicates too). One of a
/// segment alone, everything before it acknowledged already, was held by
/// the delayed-ACK timer (or sent at once): the latest segment's delay, the
/// round trip included; or the odd segment a flight left, sent with the
/// one the previous ACK covered, its hold past that ACK, and how long
/// after the next segment it came (that segment may have brought it);
/// with the bytes it acknowledged.
fn ack_habits(od: &Dir, a: i64, pure_ack: bool, s: &Packet, cx: &mut Ctx) {
    if pure_ack && od.data_hi.is_some() {
        cx.hosts.get(s.from).net.acks += 1;
        let Some(seg) = od.recent.ending_at(a).filter(|g| od.acked >= g.start && a > od.acked) else {
            return;
        };
        let hold = match seg.next_t {
            None => Some(AckHold::Latest(secs(s.t - seg.t))),
            Some(next) => seg
                .prev_t
                .filter(|&p| seg.t - p <= SAME_BURST && seg.t <= od.acked_t)
                .map(|_| AckHold::Odd { past_ack: secs(s.t - od.acked_t), after_next: secs(s.t - next) }),
        };
        if let Some(h) = hold {
            cx.hosts.get(s.from).net.ack_hold(h, (a - od.acked) as u64, cx.rh);
        }
    }
}

/// A duplicate or selective ACK while data is out: the receiver reports a
/// loss. It and the ACK that moves past such a report (the retransmission
/// came just before it) mark when the direction last showed a loss, and
/// that ACK ends the loss episode (`episode`). A repeated ACK that changes
/// the window is a window update, not a duplicate.
fn reported_loss(od: &mut Dir, a: i64, pure_ack: bool, mss: Option<u16>, s: &Packet, cx: &mut Ctx) {
    let p = s.p;
    let sack = p.options.sack();
    let reported = (pure_ack && a == od.acked && od.hi > a && p.window == od.rwnd) || !sack.is_empty();
    if reported {
        let mut r = od.report.unwrap_or(LossReport { resent: od.retx + od.fills, ..LossReport::default() });
        r.lacked += od.lacked(a, sack);
        r.dup |= sack.is_empty();
        r.count(pure_ack, od.acked, a);
        od.report = Some(r);
        od.loss_at = Some(s.t);
    } else if a > od.acked {
        if let Some(mut r) = od.report.take() {
            od.loss_at = Some(s.t);
            r.count(pure_ack, od.acked, a);
            episode(od, r, mss, s, cx);
        }
    }
    od.rwnd = p.window;
}

/// A loss episode over: the segments lost in it, what the receiver lacked
/// (its SACK blocks, in segments of its MSS, Ethernet's if its SYN was not
/// seen; a duplicate ACK without them, one) or what the capture saw sent
/// again meanwhile, whichever is more (a capture that missed packets
/// misses retransmissions too). A report of copies alone (D-SACK) is none.
///
/// The share of those segments the capture saw sent again is in the
/// sender's `loss`, which its regenerated peer answers with loss reports of
/// its own: that share of the episode's ACKs, and of the bytes they
/// acknowledged, is the receiver's answer to a loss the model repeats, not
/// its delayed-ACK policy (`NetAcc::answered`). The rest answered losses
/// the capture did not see, which the model does not repeat either.
fn episode(od: &Dir, r: LossReport, mss: Option<u16>, s: &Packet, cx: &mut Ctx) {
    let seg = mss.unwrap_or(1460).max(1) as i64;
    let lacked = ((r.lacked + seg - 1) / seg) as u64;
    let resent = od.retx + od.fills - r.resent;
    let lost = lacked.max(r.dup as u64).max(resent);
    if lost > 0 {
        let net = &mut cx.hosts.get(s.to).net;
        net.episodes += 1;
        net.episode_losses += lost;
        let repeated = resent as f64 / lost as f64;
        let rx = &mut cx.hosts.get(s.from).net;
        rx.answered[0] += repeated * r.acks as f64;
        rx.answered[1] += repeated * r.bytes as f64;
    }
}

/// What the ACK up to `a` covers that the capture never held: the holes
/// it closed, and bytes past the highest seen (which also end the other
/// direction's element there). Counted against the capture and as bytes
/// the acknowledging host received.
fn acked_unseen(c: &mut Conn, a: i64, s: &Packet, cx: &mut Ctx) {
    let o = s.o();
    let od = &mut c.dirs[o];
    // Holes the receiver now acknowledged: the capture lost those
    // segments (or their retransmissions); they reached it.
    let mut unseen = od.acked_holes(od.acked);
    // An ACK one byte past everything seen is most likely the
    // peer's FIN, which is not data.
    if a > od.hi && (od.fin_off.is_some() || a > od.hi + 1) && a - od.hi < 1 << 30 {
        let from = od.hi;
        // Acknowledged data that a capture showing this direction's
        // data never showed: the capture lost it.
        if od.data_hi.is_some() {
            unseen += a - from;
        }
        od.hi = a;
        if let Some(pair) = c.ex.advance(o as u8, from, s.t, c.hi(), None, None) {
            cx.sink.pair(c, pair);
        }
    }
    if unseen > 0 {
        cx.hosts.get(s.to).unseen_bytes += unseen as u64;
        cx.hosts.get(s.from).net.bytes_received += unseen as u64;
    }
}

/// A data segment: a resend (below the highest data seen) or new data.
fn data(c: &mut Conn, s: &Packet, cx: &mut Ctx) {
    let o = s.o();
    // The other side's data is in flight, unacknowledged, as this side
    // sends: the two sides do not take turns.
    let other_in_flight = c.dirs[o].data_hi.is_some() && c.dirs[o].hi > c.dirs[o].acked;
    if c.dirs[o].flight.take().is_some() {
        // The other side's flight is over once this side speaks: it sent
        // what its application had (a request) and waited for an answer,
        // not for ACKs. Its window shows at a later flight.
    }
    cx.hosts.get(s.from).tcp_payload += s.p.payload_len as u64;
    let dd = &mut c.dirs[s.d];
    let s0 = dd.off(s.data_seq());
    let e0 = s0 + s.p.payload_len as i64;
    // Bytes below `floor` were sent before: the highest data seen, else
    // the stream's start if its SYN was seen, else none.
    let floor = match dd.data_hi {
        Some(h) => h,
        None if dd.from_syn => 0,
        None => s0,
    };
    if s0 < floor {
        // Sent again: when its answer was last asked for.
        if let Some(ask) = dd.ask.as_mut().filter(|a| s0 < a.end) {
            ask.last = s.t;
        }
    }
    if e0 <= floor {
        resent(dd, s0, e0, s, cx);
    } else {
        new_data(c, s0, e0, floor, other_in_flight, s, cx);
    }
}

/// A segment wholly below the highest data seen: a fill if it lands in a
/// hole (classified as loss or reordering at the end), else a
/// retransmission. Either is a sign of loss, and the segment is neither
/// timed (Karn) nor half of a packet pair, nor is the next ACK's delay a
/// hold of the delayed-ACK timer: it may answer either copy.
fn resent(dd: &mut Dir, s0: i64, e0: i64, s: &Packet, cx: &mut Ctx) {
    dd.recovered_at = Some(s.t);
    dd.loss_at = Some(s.t);
    if let Some(delay) = dd.fill(s0, e0, s.t) {
        dd.fills += 1;
        cx.hosts.get(s.from).net.fill(secs(delay), cx.rh);
    } else {
        dd.retx += 1;
        cx.hosts.get(s.from).net.retx_no_hole += 1;
    }
    dd.timing = None;
    dd.prev = None;
    dd.recent.clear();
}

/// A segment with new data at offsets `s0..e0` (its part below `floor`
/// sent before): holes it skips, the answer it asks for, overlap with the
/// other side's data, the first flight, the receiver's counts, timing and
/// packet pairs, and the elements it extends or starts.
fn new_data(c: &mut Conn, s0: i64, e0: i64, floor: i64, other_in_flight: bool, s: &Packet, cx: &mut Ctx) {
    let (t, o) = (s.t, s.o());
    let dd = &mut c.dirs[s.d];
    // Skipped bytes are a hole unless the receiver acknowledged
    // them already (then only the capture missed them).
    let g0 = floor.max(dd.hi);
    if s0 > g0 {
        dd.open_gap(g0, s0, t);
    }
    cx.hosts.get(s.from).net.new_segs += 1;
    if dd.ask.is_none() && dd.acked >= s0 {
        dd.ask = Some(Ask { end: e0, first: t, last: t });
    }
    c.crossings.segment(s.d as u8, other_in_flight);
    slow_start_round(dd, &c.hs, s0, e0, s, cx);
    flight_count(dd, c.hs.mss[o], s0 > g0 || s0 < floor, e0, s, cx);
    if let Some(n) = first_flight(dd, t, s0, e0, c.hs.rtts(s.d), c.hs.mss[o]) {
        cx.hosts.get(s.from).net.initial_window(n, cx.rh);
    }
    let rx = &mut cx.hosts.get(s.to).net;
    rx.segs_received += 1;
    rx.merged_received += c.hs.mss[o].is_some_and(|m| s.p.payload_len >= 2 * m as u32) as u64;
    rx.bytes_received += (e0 - s0.max(floor)) as u64;
    timing_and_pairs(dd, s0, e0, floor, s, cx);
    dd.data_hi = Some(e0);
    // Partly sent before: its ACK's delay is no hold either (Karn).
    if s0 >= floor {
        dd.recent.push(s0, e0, t);
    } else {
        dd.recent.clear();
    }
    if e0 > dd.hi {
        past_highest(c, e0, s, cx);
    }
}

/// A new segment, for its sender's window growth (`growth`): rounds of
/// flights begun with nothing unacknowledged, up to the first loss, in
/// its own segments (at most the MSS its receiver announced), the rounds
/// told apart by the handshake's round trip as first flights are.
fn slow_start_round(dd: &mut Dir, hs: &Handshake, s0: i64, e0: i64, s: &Packet, cx: &mut Ctx) {
    let (Some(mss), Some((r, side))) = (hs.mss[s.o()], hs.rtts(s.d).filter(|&(r, _)| r > 0)) else {
        dd.rounds.stop();
        return;
    };
    if dd.loss_at.is_some() {
        dd.rounds.stop();
    }
    let k = RoundTiming {
        mss: mss as i64,
        rwnd: hs.window(s.o(), dd.rwnd).filter(|&w| w > 0).map(|w| w as i64),
        span: FLIGHT_SPAN.of(r),
        pause: FLIGHT_PAUSE.of(r),
        next_after: NEXT_FLIGHT_AFTER.of(r),
        on_ack: ON_ACK.of(side) + ON_ACK_MARGIN_NS,
    };
    let fresh = dd.from_syn && dd.data_hi.is_none_or(|h| dd.acked >= h);
    if let Some(p) = dd.rounds.segment(s.t, s0, e0, fresh, k) {
        cx.hosts.get(s.from).net.growth.add(p);
    }
}

/// A new segment, for whether its sender's window counts packets
/// (`window_unit`): read from the stream's start (its SYN seen), with the
/// receiver's MSS, until a loss or a segment the capture missed (`gap`:
/// this one skips bytes or resends some).
fn flight_count(dd: &mut Dir, mss: Option<u16>, gap: bool, e0: i64, s: &Packet, cx: &mut Ctx) {
    let Some(mss) = mss.filter(|_| dd.from_syn && dd.loss_at.is_none() && !gap) else {
        dd.outstanding.stop();
        return;
    };
    if let Some(n) = dd.outstanding.segment(e0, mss as u32) {
        let net = &mut cx.hosts.get(s.from).net;
        net.flight_over_acked = net.flight_over_acked.max(n);
    }
}

/// A new segment's samples: the data→ACK RTT timing (one segment at a
/// time), the sender's arrivals and its packet pairs (consecutive
/// segments with the same ACK; of equal sizes for its own capacity). A segment partly sent before gives none
/// and ends any pair.
fn timing_and_pairs(dd: &mut Dir, s0: i64, e0: i64, floor: i64, s: &Packet, cx: &mut Ctx) {
    let (t, len, ack) = (s.t, s.p.payload_len, s.p.ack);
    if s0 < floor {
        // Partly retransmitted: neither timed (Karn) nor a pair.
        dd.timing = None;
        dd.prev = None;
    } else {
        if dd.timing.is_none() {
            dd.timing = Some((e0, t));
        }
        cx.hosts.get(s.from).net.arrival(len, t, cx.rh);
        if let Some(pv) = dd.prev {
            if pv.len.min(len) >= PAIR_MIN_PAYLOAD && pv.ack == ack && t > pv.t {
                cx.hosts.get(s.from).net.pair_sample(len, secs(t - pv.t), pv.len == len, cx.rh);
            }
        }
        dd.prev = Some(Seg { t, len, ack });
    }
}

/// A sender's wait counts as a pause only if it also lasted this many
/// round trips (`Conn::path_rtt`): a sender whose window emptied resumes a round
/// trip after its last send (more if the ACK was delayed), which on a long
/// path can outlast the pause gap.
const PAUSE_MIN_RTTS: Rtts = Rtts { num: 2, den: 1 };

/// Data past the highest offset seen, up to `e0`: it extends the sender's
/// element, or starts a new one after the other side's, after a pause or,
/// in a concurrent connection, after an application gap; a PSH ends a write.
fn past_highest(c: &mut Conn, e0: i64, s: &Packet, cx: &mut Ctx) {
    let (t, d) = (s.t, s.d);
    let rtt = c.path_rtt().unwrap_or(0);
    let dd = &mut c.dirs[d];
    let from = dd.hi;
    dd.hi = e0;
    // A pause only if everything sent before it was acknowledged (a
    // sender stalled by its window or a loss is not pausing), and longer
    // than `PAUSE_MIN_RTTS` too. Nor is a sender that lost a segment
    // within it: its retransmission timer, not its application, kept it
    // waiting.
    let pause = cx.k.pause.filter(|_| dd.acked >= from).map(|p| p.max(PAUSE_MIN_RTTS.of(rtt))).filter(|&p| dd.loss_at.is_none_or(|r| t - r > p));
    // A gap is the application's if the window cannot have
    // held the sender back: less than any initial window out.
    let gap = cx.k.unit_gap.filter(|_| from - dd.acked < UNIT_WINDOW);
    if let Some(pair) = c.ex.advance(d as u8, from, t, c.hi(), pause, gap) {
        cx.sink.pair(c, pair);
    }
    if s.p.flags.psh() {
        c.ex.push(d as u8, e0);
    }
}

/// FIN and RST: where the sender's stream ends, when the connection began
/// to close, and whether it is over (an RST, or a FIN each way).
fn close(c: &mut Conn, s: &Packet) -> Option<EndReason> {
    let f = s.p.flags;
    if f.fin() {
        let dd = &mut c.dirs[s.d];
        if dd.fin_off.is_none() {
            dd.fin_off = Some(dd.off(s.data_seq()) + s.p.payload_len as i64);
        }
        c.fin[s.d] = true;
    }
    if (f.fin() || f.rst()) && c.closing_at.is_none() {
        c.closing_at = Some(s.t);
    }
    if f.rst() {
        Some(EndReason::Rst)
    } else if c.fin[0] && c.fin[1] {
        Some(EndReason::Fin)
    } else {
        None
    }
}
