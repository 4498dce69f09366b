//! Trace playback: a trace's packets sent again at their times, the
//! "playback" background of the first seed paper.
//!
//! Over **UDP** (open loop, the seed's UPB) every trace packet goes out at
//! its time after the model's start with its IP size, exactly or with
//! every packet of a millisecond at the start of that millisecond (the
//! seed's 1 ms granularity), whatever happens to it.
//!
//! Over **TCP** (the seed's responsive TPB) each source host holds one
//! connection and writes, per bin (a millisecond, or each distinct time in
//! exact mode), the payload of the trace packets of that bin: IP size less
//! `header`, as the cbr and poisson TCP variants count. A full send buffer
//! blocks the writer, and the rest of its schedule moves back by the time
//! it was blocked (the next write is due its trace gap after the blocked
//! one completes, as the rate sources do), so a congested path makes it
//! fall behind and stay behind. Completed writes are marked, so that the
//! sink counts what arrived.
//!
//! Trace packets are spread over the hosts by flow: flow `f` goes from
//! source host `f mod hosts` (see [`PlaybackTrace`]).
//!
//! A trace with a period plays again and again, pass `k` shifted by `k`
//! periods, until the model stops; a TCP writer's connection stays open
//! from one pass to the next.

use crate::timers::{split, token};
use crate::{App, AppReport, ConnId, Event, HostId, Transport};
use rustc_hash::FxHashMap;
use std::sync::Arc;
use units::{Dur, Time};

pub use super::rate::RateTransport as PlaybackTransport;

/// One packet of a trace to play.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TracePacket {
    /// When it is due, from the model's start.
    pub at: Dur,
    /// IP size.
    pub size: u32,
    /// Which host sends it: flow `f` from the model's host `f mod hosts`.
    /// A pcap's flows (addresses, protocol, ports) are numbered in order of
    /// first appearance, so each trace flow keeps one source host; an event
    /// list has no flows and numbers its packets, so they go round-robin.
    pub flow: u32,
}

/// The packets to play, in time order, and how often they play.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct PlaybackTrace {
    pub packets: Vec<TracePacket>,
    /// Played again every `period` until the model stops (`None`: once).
    /// A period is at least the last packet's time, and with 1 ms
    /// granularity whole milliseconds ([`Playback::new`] makes it so), so
    /// every pass's packets keep their places in the millisecond grid.
    pub period: Option<Dur>,
}

impl std::fmt::Debug for PlaybackTrace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let bytes: u64 = self.packets.iter().map(|p| p.size as u64).sum();
        let span = self.packets.last().map_or(Dur::ZERO, |p| p.at);
        write!(f, "PlaybackTrace({} packets, {bytes} bytes, over {span}", self.packets.len())?;
        match self.period {
            Some(p) => write!(f, ", every {p})"),
            None => write!(f, ")"),
        }
    }
}

/// How finely packet times are kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Granularity {
    /// Each packet at its own time, to the nanosecond.
    Exact,
    /// Every packet of a millisecond at the start of that millisecond.
    Millisecond,
}

impl Granularity {
    /// The time `at` is played at.
    pub fn due(self, at: Dur) -> Dur {
        match self {
            Granularity::Exact => at,
            Granularity::Millisecond => Dur(at.0 - at.0 % 1_000_000),
        }
    }

    /// The period a trace whose last packet is at `last` plays with: at
    /// least just past that packet, and on this granularity's grid.
    fn period(self, period: Dur, last: Dur) -> Dur {
        let p = period.max(last + Dur(1));
        match self {
            Granularity::Exact => p,
            Granularity::Millisecond => Dur(p.0.div_ceil(1_000_000) * 1_000_000),
        }
    }
}

/// Item `i` of a sequence of `n` items played every `period`: item
/// `i mod n`'s index and its shift, `i / n` periods; `None` past the end
/// of a sequence played once.
fn pass(i: u64, n: usize, period: Option<Dur>) -> Option<(usize, Dur)> {
    let pass = i.checked_div(n as u64)?;
    let shift = match period {
        None if pass > 0 => return None,
        None => Dur::ZERO,
        Some(p) => p.saturating_mul(pass),
    };
    Some(((i % n as u64) as usize, shift))
}

#[derive(Clone, Debug)]
pub struct PlaybackConfig {
    pub name: String,
    pub transport: PlaybackTransport,
    pub granularity: Granularity,
    /// (source, sink) host pairs.
    pub pairs: Vec<(HostId, HostId)>,
    pub trace: Arc<PlaybackTrace>,
    /// IP + transport header bytes: a UDP packet carries size - header of
    /// payload (none if smaller), a TCP write size - header per packet.
    pub header: u32,
    pub port: u16,
    pub start: Time,
    pub stop: Time,
}

/// A completed write is marked (so the sink can count what arrived) once
/// this many bytes are unmarked: the emulator carries a mark inside the
/// run of bytes before it, exactly, unless the run is shorter than a few bytes.
const MARK_MIN: u64 = 16;

/// Timer kinds (`timers::token`); the slot is a host.
const UDP_NEXT: u64 = 0;
const CONNECT: u64 = 1;
const WRITE: u64 = 2;
const STOP: u64 = 3;

/// One source host's TCP playback.
#[derive(Default)]
struct Writer {
    /// One pass's (due from the start of its timeline, payload bytes), in
    /// time order.
    bins: Vec<(Dur, u64)>,
    /// The next bin to write, counted over every pass.
    next: u64,
    conn: Option<ConnId>,
    /// Its timeline starts when its connection is established.
    origin: Time,
    /// How far the schedule has moved back, from writes that blocked.
    lag: Dur,
    /// Bytes of bin `next` the buffer has not taken yet.
    blocked: u64,
    blocked_since: Option<Time>,
    written: u64,
    /// Bytes written before the last mark.
    marked: u64,
    done: bool,
}

pub struct Playback {
    cfg: PlaybackConfig,
    /// The trace's period as played (see [`PlaybackTrace::period`]).
    period: Option<Dur>,
    /// UDP: the next trace packet to send, counted over every pass.
    next: u64,
    writers: Vec<Writer>,
    by_conn: FxHashMap<ConnId, usize>,
    /// Sink side: the last mark each connection delivered (bytes before it).
    delivered: FxHashMap<ConnId, u64>,
    sent_packets: u64,
    sent_bytes: u64,
    writes: u64,
    received_packets: u64,
    received_bytes: u64,
    blocked_total: Dur,
    /// Bytes the trace holds before the stop (IP bytes over UDP, payload over TCP).
    trace_bytes: u64,
}

impl Playback {
    pub fn new(cfg: PlaybackConfig) -> Playback {
        let span = cfg.stop - cfg.start;
        let g = cfg.granularity;
        let last = cfg.trace.packets.last().map_or(Dur::ZERO, |p| p.at);
        let period = cfg.trace.period.map(|p| g.period(p, last));
        let mut writers: Vec<Writer> = Vec::new();
        let trace_bytes = match cfg.transport {
            PlaybackTransport::Udp => {
                let packets = &cfg.trace.packets;
                (0..)
                    .map_while(|i| pass(i, packets.len(), period).map(|(k, shift)| (g.due(packets[k].at + shift), packets[k].size)))
                    .take_while(|&(at, _)| at < span)
                    .map(|(_, size)| size.max(cfg.header) as u64)
                    .sum()
            }
            PlaybackTransport::Tcp => {
                writers = (0..cfg.pairs.len()).map(|_| Writer::default()).collect();
                let n = cfg.pairs.len().max(1);
                // A trace played once is binned only where it plays.
                let end = if period.is_some() { Dur::MAX } else { span };
                for p in cfg.trace.packets.iter().filter(|p| g.due(p.at) < end) {
                    let bytes = p.size.saturating_sub(cfg.header) as u64;
                    let bins = &mut writers[p.flow as usize % n].bins;
                    match bins.last_mut() {
                        Some((at, b)) if *at == g.due(p.at) => *b += bytes,
                        _ => bins.push((g.due(p.at), bytes)),
                    }
                }
                for w in &mut writers {
                    w.bins.retain(|&(_, b)| b > 0);
                }
                writers
                    .iter()
                    .map(|w| (0..).map_while(|i| bin(&w.bins, i, period)).take_while(|&(at, _)| at < span).map(|(_, b)| b).sum::<u64>())
                    .sum()
            }
        };
        Playback {
            cfg,
            period,
            next: 0,
            writers,
            by_conn: FxHashMap::default(),
            delivered: FxHashMap::default(),
            sent_packets: 0,
            sent_bytes: 0,
            writes: 0,
            received_packets: 0,
            received_bytes: 0,
            blocked_total: Dur::ZERO,
            trace_bytes,
        }
    }

    /// UDP: sends every packet now due, then waits for the next.
    fn send_due(&mut self, tp: &mut dyn Transport) {
        let n = self.cfg.pairs.len();
        let packets = &self.cfg.trace.packets;
        while let Some((k, shift)) = pass(self.next, packets.len(), self.period) {
            let p = packets[k];
            let at = self.cfg.start + self.cfg.granularity.due(p.at + shift);
            if at >= self.cfg.stop {
                return;
            }
            if at > tp.now() {
                tp.set_timer(at, token(UDP_NEXT, 0));
                return;
            }
            let (src, dst) = self.cfg.pairs[p.flow as usize % n];
            tp.send_udp(src, self.cfg.port, dst, self.cfg.port, p.size.saturating_sub(self.cfg.header));
            self.sent_packets += 1;
            self.sent_bytes += p.size.max(self.cfg.header) as u64;
            self.next += 1;
        }
    }

    /// TCP: host `i`'s next write is due its bin's time after its timeline
    /// started, plus the lag; once all is written it ends its connection.
    fn schedule(&mut self, i: usize, tp: &mut dyn Transport) {
        let w = &self.writers[i];
        match bin(&w.bins, w.next, self.period) {
            Some((at, _)) => {
                let due = w.origin + w.lag + at;
                if due < self.cfg.stop {
                    tp.set_timer(due, token(WRITE, i as u64));
                }
            }
            None => self.finish(i, tp),
        }
    }

    /// Marks what host `i` has written since its last mark, if at least
    /// `min` bytes: the sink counts them delivered when the mark arrives.
    fn mark(&mut self, i: usize, min: u64, tp: &mut dyn Transport) {
        let w = &mut self.writers[i];
        if let Some(c) = w.conn {
            if w.written - w.marked >= min.max(1) {
                w.marked = w.written;
                tp.mark(c, w.written);
            }
        }
    }

    /// Marks everything written and closes host `i`'s connection.
    fn finish(&mut self, i: usize, tp: &mut dyn Transport) {
        if self.writers[i].done {
            return;
        }
        self.mark(i, 1, tp);
        let w = &mut self.writers[i];
        w.done = true;
        if let Some(c) = w.conn {
            tp.close(c);
        }
    }

    /// Hands `bytes` of host `i`'s current bin to TCP; a short write blocks.
    fn write(&mut self, i: usize, bytes: u64, tp: &mut dyn Transport) {
        let Some(conn) = self.writers[i].conn else { return };
        let took = tp.write(conn, bytes);
        self.sent_bytes += took;
        let now = tp.now();
        let w = &mut self.writers[i];
        w.written += took;
        if took < bytes {
            w.blocked = bytes - took;
            w.blocked_since.get_or_insert(now);
            return;
        }
        w.blocked = 0;
        if let Some(since) = w.blocked_since.take() {
            self.blocked_total += now - since;
            // The rest of the schedule moves back: the next write is due
            // its trace gap after this one completed.
            if let Some((at, _)) = bin(&w.bins, w.next, self.period) {
                w.lag = now - w.origin - at;
            }
        }
        w.next += 1;
        self.mark(i, MARK_MIN, tp);
        self.schedule(i, tp);
    }

    fn behind(&self) -> Dur {
        self.writers.iter().map(|w| w.lag).max().unwrap_or(Dur::ZERO)
    }
}

/// Bin `i` of a writer, counted over every pass: (due, payload bytes).
fn bin(bins: &[(Dur, u64)], i: u64, period: Option<Dur>) -> Option<(Dur, u64)> {
    pass(i, bins.len(), period).map(|(k, shift)| (bins[k].0 + shift, bins[k].1))
}

impl App for Playback {
    fn start(&mut self, tp: &mut dyn Transport) {
        match self.cfg.transport {
            PlaybackTransport::Udp => {
                for &(_, dst) in &self.cfg.pairs {
                    tp.bind_udp(dst, self.cfg.port);
                }
                self.send_due(tp);
            }
            PlaybackTransport::Tcp => {
                for (i, &(_, dst)) in self.cfg.pairs.iter().enumerate() {
                    tp.listen(dst, self.cfg.port);
                    // A host with nothing to play opens no connection.
                    if !self.writers[i].bins.is_empty() {
                        tp.set_timer(self.cfg.start, token(CONNECT, i as u64));
                    }
                }
                tp.set_timer(self.cfg.stop, token(STOP, 0));
            }
        }
    }

    fn on_event(&mut self, ev: Event, tp: &mut dyn Transport) {
        match ev {
            Event::Timer(t) => {
                let (kind, i) = split(t);
                let i = i as usize;
                match kind {
                    UDP_NEXT => self.send_due(tp),
                    CONNECT => {
                        let (src, dst) = self.cfg.pairs[i];
                        let c = tp.connect(src, dst, self.cfg.port);
                        self.writers[i].conn = Some(c);
                        self.by_conn.insert(c, i);
                    }
                    WRITE if self.writers[i].blocked == 0 && !self.writers[i].done => {
                        let w = &self.writers[i];
                        if let Some((_, bytes)) = bin(&w.bins, w.next, self.period) {
                            self.writes += 1;
                            self.write(i, bytes, tp);
                        }
                    }
                    STOP => {
                        for i in 0..self.writers.len() {
                            self.finish(i, tp);
                        }
                    }
                    _ => {}
                }
            }
            Event::Connected(c) => {
                if let Some(&i) = self.by_conn.get(&c) {
                    self.writers[i].origin = tp.now();
                    if tp.now() >= self.cfg.stop {
                        self.finish(i, tp);
                    } else {
                        self.schedule(i, tp);
                    }
                }
            }
            Event::Writable(c) => {
                if let Some(&i) = self.by_conn.get(&c) {
                    let left = self.writers[i].blocked;
                    if left > 0 && !self.writers[i].done {
                        self.write(i, left, tp);
                    }
                }
            }
            Event::Message { conn, msg } => {
                let last = self.delivered.insert(conn, msg).unwrap_or(0);
                self.received_bytes += msg.saturating_sub(last);
            }
            Event::Datagram { bytes, .. } => {
                self.received_packets += 1;
                self.received_bytes += (bytes + self.cfg.header) as u64;
            }
            Event::PeerClosed(c) => {
                // Sink side: the source is done.
                if !self.by_conn.contains_key(&c) {
                    tp.close(c);
                }
            }
            Event::Closed(c) | Event::Reset(c) => {
                self.delivered.remove(&c);
                if let Some(i) = self.by_conn.remove(&c) {
                    self.writers[i].conn = None;
                    self.writers[i].done = true;
                }
            }
            Event::Accepted { .. } => {}
        }
    }

    fn report(&self) -> AppReport {
        let mut counters = vec![("trace_bytes", self.trace_bytes as f64), ("sent_bytes", self.sent_bytes as f64)];
        let kind = match self.cfg.transport {
            PlaybackTransport::Udp => {
                counters.extend([("sent_packets", self.sent_packets as f64), ("received_packets", self.received_packets as f64)]);
                "playback-udp"
            }
            PlaybackTransport::Tcp => {
                counters.extend([
                    ("writes", self.writes as f64),
                    ("blocked_s", self.blocked_total.as_secs_f64()),
                    ("behind_s", self.behind().as_secs_f64()),
                ]);
                "playback-tcp"
            }
        };
        counters.push(("received_bytes", self.received_bytes as f64));
        AppReport { name: self.cfg.name.clone(), kind, metric: None, counters, ..Default::default() }
    }
}

#[cfg(test)]
mod tests;
