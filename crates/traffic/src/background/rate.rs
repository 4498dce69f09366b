//! Constant-bit-rate and Poisson sources, over UDP or TCP.
//!
//! Each source host sends to its own sink host across the bottleneck, and
//! the hosts share the model's mean rate equally. Over UDP every packet is
//! sent on schedule whatever happens to it (open loop). Over TCP each host
//! holds one long connection and writes one packet's worth of payload per
//! scheduled arrival; when the send buffer is full the writer blocks, and
//! its next write is scheduled one gap after the blocked write completes,
//! as a sleeping writer thread would do. So the TCP variants fall behind
//! when the path is congested: they are responsive.

use crate::{App, AppReport, ConnId, Event, HostId, Transport};
use std::collections::HashMap;
use units::{Dur, Rng, Time};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrivals {
    /// Equally spaced, with a random phase per host.
    Constant,
    /// Exponential gaps.
    Poisson,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateTransport {
    Udp,
    Tcp,
}

#[derive(Clone, Debug)]
pub struct RateSourceConfig {
    pub name: String,
    pub arrivals: Arrivals,
    pub transport: RateTransport,
    /// (source, sink) host pairs.
    pub pairs: Vec<(HostId, HostId)>,
    /// Mean rate of the whole model, in IP-layer bits per second.
    pub rate_bps: f64,
    /// IP packet size.
    pub packet_size: u32,
    /// IP + transport header bytes, so that payload = packet_size - header.
    pub header: u32,
    pub port: u16,
    pub start: Time,
    pub stop: Time,
}

pub struct RateSource {
    cfg: RateSourceConfig,
    rng: Rng,
    /// Mean gap per host, ns.
    gap_ns: f64,
    /// Next scheduled send per host (CBR keeps exact fractional times).
    next_ns: Vec<f64>,
    conns: Vec<Option<ConnId>>,
    by_conn: HashMap<ConnId, usize>,
    /// Payload bytes a blocked TCP writer still has to hand over.
    blocked: Vec<u64>,
    blocked_since: Vec<Option<Time>>,
    blocked_total: Dur,
    sent_bytes: u64,
    sent_writes: u64,
}

impl RateSource {
    pub fn new(cfg: RateSourceConfig, rng: Rng) -> RateSource {
        let n = cfg.pairs.len();
        let per_host = cfg.rate_bps / n.max(1) as f64;
        let gap_ns = cfg.packet_size as f64 * 8.0 * 1e9 / per_host;
        RateSource {
            cfg,
            rng,
            gap_ns,
            next_ns: vec![0.0; n],
            conns: vec![None; n],
            by_conn: HashMap::new(),
            blocked: vec![0; n],
            blocked_since: vec![None; n],
            blocked_total: Dur::ZERO,
            sent_bytes: 0,
            sent_writes: 0,
        }
    }

    fn payload(&self) -> u32 {
        self.cfg.packet_size.saturating_sub(self.cfg.header).max(1)
    }

    fn gap(&mut self) -> f64 {
        match self.cfg.arrivals {
            Arrivals::Constant => self.gap_ns,
            Arrivals::Poisson => self.rng.exponential(self.gap_ns),
        }
    }

    /// Schedules host `i`'s next send `gap` after `from_ns`.
    fn schedule(&mut self, i: usize, from_ns: f64, tp: &mut dyn Transport) {
        let at = from_ns + self.gap();
        self.next_ns[i] = at;
        if at < self.cfg.stop.0 as f64 {
            tp.set_timer(Time(at.ceil() as u64), i as u64);
        }
    }

    fn first(&mut self, i: usize, tp: &mut dyn Transport) {
        let base = tp.now().0.max(self.cfg.start.0) as f64;
        let phase = match self.cfg.arrivals {
            Arrivals::Constant => self.rng.uniform() * self.gap_ns,
            Arrivals::Poisson => self.rng.exponential(self.gap_ns),
        };
        self.next_ns[i] = base + phase;
        if self.next_ns[i] < self.cfg.stop.0 as f64 {
            tp.set_timer(Time(self.next_ns[i].ceil() as u64), i as u64);
        }
    }

    fn send(&mut self, i: usize, tp: &mut dyn Transport) {
        let (src, dst) = self.cfg.pairs[i];
        match self.cfg.transport {
            RateTransport::Udp => {
                tp.send_udp(src, self.cfg.port, dst, self.cfg.port, self.payload());
                self.sent_bytes += self.cfg.packet_size as u64;
                self.sent_writes += 1;
                let from = self.next_ns[i];
                self.schedule(i, from, tp);
            }
            RateTransport::Tcp => {
                let Some(conn) = self.conns[i] else { return };
                self.sent_writes += 1;
                self.write(i, conn, self.payload() as u64, tp);
            }
        }
    }

    /// Hands `bytes` to TCP; blocks if the buffer takes only part.
    fn write(&mut self, i: usize, conn: ConnId, bytes: u64, tp: &mut dyn Transport) {
        let took = tp.write(conn, bytes);
        self.sent_bytes += took;
        if took < bytes {
            self.blocked_since[i].get_or_insert(tp.now());
            self.blocked[i] = bytes - took;
        } else {
            if let Some(since) = self.blocked_since[i].take() {
                self.blocked_total += tp.now() - since;
            }
            self.blocked[i] = 0;
            // The next write is due one gap after this one (or after the
            // unblocking, if the writer was stuck).
            let from = self.next_ns[i].max(tp.now().0 as f64);
            self.schedule(i, from, tp);
        }
    }
}

impl App for RateSource {
    fn start(&mut self, tp: &mut dyn Transport) {
        let pairs = self.cfg.pairs.clone();
        for (i, &(src, dst)) in pairs.iter().enumerate() {
            match self.cfg.transport {
                RateTransport::Udp => {
                    tp.bind_udp(dst, self.cfg.port);
                    self.first(i, tp);
                }
                RateTransport::Tcp => {
                    tp.listen(dst, self.cfg.port);
                    // Connections open at the start time, staggered over one
                    // mean gap; sending starts when each handshake completes.
                    let at = self.cfg.start + Dur((self.rng.uniform() * self.gap_ns) as u64);
                    tp.set_timer(at, (1 << 32) | i as u64);
                    let _ = src;
                }
            }
        }
    }

    fn on_event(&mut self, ev: Event, tp: &mut dyn Transport) {
        match ev {
            Event::Timer(t) if t >> 32 == 1 => {
                let i = (t & 0xffff_ffff) as usize;
                let (src, dst) = self.cfg.pairs[i];
                let c = tp.connect(src, dst, self.cfg.port);
                self.conns[i] = Some(c);
                self.by_conn.insert(c, i);
            }
            Event::Timer(t) => {
                let i = t as usize;
                if tp.now() >= self.cfg.stop {
                    if let Some(c) = self.conns[i].take() {
                        tp.close(c);
                    }
                    return;
                }
                if self.blocked[i] == 0 {
                    self.send(i, tp);
                }
            }
            Event::Connected(c) => {
                if let Some(&i) = self.by_conn.get(&c) {
                    self.first(i, tp);
                    tp.set_timer(self.cfg.stop, i as u64);
                }
            }
            Event::Writable(c) => {
                if let Some(&i) = self.by_conn.get(&c) {
                    if self.blocked[i] > 0 {
                        let left = self.blocked[i];
                        self.write(i, c, left, tp);
                    }
                }
            }
            Event::PeerClosed(c) => {
                // Sink side: the source is done.
                if !self.by_conn.contains_key(&c) {
                    tp.close(c);
                }
            }
            Event::Closed(c) | Event::Reset(c) => {
                if let Some(i) = self.by_conn.remove(&c) {
                    self.conns[i] = None;
                }
            }
            Event::Accepted { .. } | Event::Message { .. } | Event::Datagram { .. } => {}
        }
    }

    fn report(&self) -> AppReport {
        let kind = match (self.cfg.arrivals, self.cfg.transport) {
            (Arrivals::Constant, RateTransport::Udp) => "cbr-udp",
            (Arrivals::Constant, RateTransport::Tcp) => "cbr-tcp",
            (Arrivals::Poisson, RateTransport::Udp) => "poisson-udp",
            (Arrivals::Poisson, RateTransport::Tcp) => "poisson-tcp",
        };
        let mut counters = vec![("sent_bytes", self.sent_bytes as f64), ("writes", self.sent_writes as f64)];
        if self.cfg.transport == RateTransport::Tcp {
            counters.push(("blocked_s", self.blocked_total.as_secs_f64()));
        }
        AppReport { name: self.cfg.name.clone(), kind, metric: None, counters, ..Default::default() }
    }
}
