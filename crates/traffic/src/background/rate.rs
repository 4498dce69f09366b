//! Constant-bit-rate and Poisson sources, and sources whose packets a
//! rate process times (sine, fgn, noise), over UDP or TCP.
//!
//! Each source host sends to its own sink host across the bottleneck, and
//! the hosts share the model's mean rate equally. Over UDP every packet is
//! sent on schedule whatever happens to it (open loop). Over TCP each host
//! holds one long connection and writes one packet's worth of payload per
//! scheduled arrival; when the send buffer is full the writer blocks, and
//! its next write is scheduled one gap after the blocked write completes,
//! as a sleeping writer thread would do. So the TCP variants fall behind
//! when the path is congested: they are responsive.

use super::process::{Pacer, RateProcess};
use crate::timers::{split, token};
use crate::{App, AppReport, ConnId, Event, HostId, Transport};
use rustc_hash::FxHashMap;
use units::{Dur, Rng, Time};

/// Timer kinds (`timers::token`): a host's next send (the slot alone), its connect.
const CONNECT: u64 = 1;

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
    /// How packets are spaced (a source timed by a rate process, made
    /// by [`RateSource::paced`], ignores it).
    pub arrivals: Arrivals,
    pub transport: RateTransport,
    /// (source, sink) host pairs.
    pub pairs: Vec<(HostId, HostId)>,
    /// Mean rate of the whole model, in IP-layer bits per second (of a
    /// paced source: what staggers its connections' opening).
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
    /// A rate process's packet times, instead of the arrivals' gaps.
    pacer: Option<Pacer>,
    /// Mean gap per host, ns.
    gap_ns: f64,
    /// Next scheduled send per host (CBR keeps exact fractional times).
    next_ns: Vec<f64>,
    conns: Vec<Option<ConnId>>,
    by_conn: FxHashMap<ConnId, usize>,
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
            pacer: None,
            gap_ns,
            next_ns: vec![0.0; n],
            conns: vec![None; n],
            by_conn: FxHashMap::default(),
            blocked: vec![0; n],
            blocked_since: vec![None; n],
            blocked_total: Dur::ZERO,
            sent_bytes: 0,
            sent_writes: 0,
        }
    }

    /// A source whose packets leave where `process`'s integral reaches
    /// each packet's bits (see [`super::process`]).
    pub fn paced(cfg: RateSourceConfig, process: Box<dyn RateProcess>, rng: Rng) -> RateSource {
        let pacer = Pacer::new(process, cfg.pairs.len(), cfg.packet_size, cfg.start);
        RateSource { pacer: Some(pacer), ..RateSource::new(cfg, rng) }
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
        let at = match &mut self.pacer {
            Some(p) => p.after(i, from_ns).unwrap_or(f64::INFINITY),
            None => from_ns + self.gap(),
        };
        self.next_ns[i] = at;
        if at < self.cfg.stop.0 as f64 {
            tp.set_timer(Time(at.ceil() as u64), i as u64);
        }
    }

    fn first(&mut self, i: usize, tp: &mut dyn Transport) {
        let base = tp.now().0.max(self.cfg.start.0) as f64;
        self.next_ns[i] = match &mut self.pacer {
            Some(p) => p.first(i, base).unwrap_or(f64::INFINITY),
            None => {
                base + match self.cfg.arrivals {
                    Arrivals::Constant => self.rng.uniform() * self.gap_ns,
                    Arrivals::Poisson => self.rng.exponential(self.gap_ns),
                }
            }
        };
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
            // The next write is due one gap after this one was due, or after
            // the unblocking if the writer was stuck. A timer that fired late
            // (the emulator's clock is real) does not push the schedule back.
            let from = match self.blocked_since[i].take() {
                Some(since) => {
                    self.blocked_total += tp.now() - since;
                    self.next_ns[i].max(tp.now().0 as f64)
                }
                None => self.next_ns[i],
            };
            self.blocked[i] = 0;
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
                    tp.set_timer(at, token(CONNECT, i as u64));
                    let _ = src;
                }
            }
        }
    }

    fn on_event(&mut self, ev: Event, tp: &mut dyn Transport) {
        match ev {
            Event::Timer(t) if split(t).0 == CONNECT => {
                let i = split(t).1 as usize;
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
        let kind = match (&self.pacer, self.cfg.arrivals, self.cfg.transport) {
            (Some(p), _, t) => p.process().kinds()[(t == RateTransport::Tcp) as usize],
            (None, Arrivals::Constant, RateTransport::Udp) => "cbr-udp",
            (None, Arrivals::Constant, RateTransport::Tcp) => "cbr-tcp",
            (None, Arrivals::Poisson, RateTransport::Udp) => "poisson-udp",
            (None, Arrivals::Poisson, RateTransport::Tcp) => "poisson-tcp",
        };
        let mut counters = vec![("sent_bytes", self.sent_bytes as f64), ("writes", self.sent_writes as f64)];
        if self.cfg.transport == RateTransport::Tcp {
            counters.push(("blocked_s", self.blocked_total.as_secs_f64()));
        }
        if let Some(p) = &self.pacer {
            counters.extend(p.process().counters());
        }
        AppReport { name: self.cfg.name.clone(), kind, metric: None, counters, ..Default::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake::{Fake, Op};

    fn at(s: f64) -> Time {
        Time::from_secs_f64(s)
    }

    /// 8 Mbit/s of 1000-byte packets over two pairs (hosts 1 and 2 to 101
    /// and 102): 4 Mbit/s, a packet every 2 ms, per source; from 1 s to 3 s.
    fn config(arrivals: Arrivals, transport: RateTransport) -> RateSourceConfig {
        RateSourceConfig {
            name: "bg".into(),
            arrivals,
            transport,
            pairs: vec![(1, 101), (2, 102)],
            rate_bps: 8e6,
            packet_size: 1000,
            header: if transport == RateTransport::Udp { 28 } else { 52 },
            port: 9,
            start: at(1.0),
            stop: at(3.0),
        }
    }

    fn run(cfg: RateSourceConfig, tp: Fake, until: f64) -> Fake {
        let mut f = tp;
        f.add(RateSource::new(cfg, Rng::stream(1, "rate-test")));
        f.start();
        f.run_until(at(until));
        f
    }

    /// Gaps between consecutive times, ns.
    fn gaps(t: &[Time]) -> Vec<u64> {
        t.windows(2).map(|w| (w[1] - w[0]).nanos()).collect()
    }

    #[test]
    fn cbr_over_udp_sends_equally_spaced_packets_at_the_rate() {
        let f = run(config(Arrivals::Constant, RateTransport::Udp), Fake::loopback(Dur::ZERO), 5.0);
        let sent = f.datagrams();
        for (src, dst) in [(1, 101), (2, 102)] {
            let t: Vec<Time> = sent.iter().filter(|d| d.from == src).map(|d| d.at).collect();
            assert!(sent.iter().filter(|d| d.from == src).all(|d| (d.to, d.dst_port, d.payload) == (dst, 9, 972)));
            // A random phase within the first gap, then every 2 ms (to the
            // nanosecond the times are rounded up to) until the stop.
            assert!(t[0] >= at(1.0) && t[0] < at(1.002), "{:?}", t[0]);
            assert!(gaps(&t).iter().all(|g| g.abs_diff(2_000_000) <= 1), "{src}: {:?}", gaps(&t));
            assert!(*t.last().expect("sent") < at(3.0) && *t.last().expect("sent") >= at(2.998));
            assert!((999..=1000).contains(&t.len()), "{}", t.len());
        }
        // 8 Mbit/s over the 2 s, in IP bytes.
        let rate = f.counter(0, "sent_bytes") * 8.0 / 2.0;
        assert!((rate / 8e6 - 1.0).abs() < 0.002, "{rate}");
        assert_eq!(f.counter(0, "writes") as usize, sent.len());
        // The sinks listen: every datagram arrives.
        assert_eq!(f.told().iter().filter(|t| matches!(t.event, Event::Datagram { .. })).count(), sent.len());
    }

    #[test]
    fn poisson_over_udp_has_exponential_gaps_with_the_mean_rate() {
        let cfg = RateSourceConfig { pairs: vec![(1, 101)], rate_bps: 4e6, stop: at(101.0), ..config(Arrivals::Poisson, RateTransport::Udp) };
        let f = run(cfg, Fake::loopback(Dur::ZERO), 102.0);
        let t: Vec<Time> = f.datagrams().iter().map(|d| d.at).collect();
        let g: Vec<f64> = gaps(&t).iter().map(|&g| g as f64 / 1e6).collect();
        // About 50,000 gaps: mean 2 ms, standard deviation equal to the
        // mean, and 1 - 1/e of them below it.
        let n = g.len() as f64;
        let mean = g.iter().sum::<f64>() / n;
        let sd = (g.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
        let below = g.iter().filter(|&&x| x < 2.0).count() as f64 / n;
        assert!((49_000.0..51_000.0).contains(&n), "{n}");
        assert!((mean - 2.0).abs() < 0.03, "{mean}");
        assert!((sd / mean - 1.0).abs() < 0.03, "{sd}");
        assert!((below - (1.0 - (-1.0f64).exp())).abs() < 0.01, "{below}");
    }

    /// Each write on the connection from `src`: (time, bytes asked, bytes taken).
    fn writes(f: &Fake, src: HostId) -> Vec<(Time, u64, u64)> {
        let conn = f.connections().find(|c| c.host == src).expect("a connection").id;
        f.calls()
            .iter()
            .filter_map(|c| if let Op::Write { conn: w, bytes, took } = c.op { (w == conn).then_some((c.at, bytes, took)) } else { None })
            .collect()
    }

    #[test]
    fn cbr_over_tcp_writes_a_packets_payload_per_arrival_on_one_connection() {
        let f = run(config(Arrivals::Constant, RateTransport::Tcp), Fake::loopback(Dur::from_millis(1)), 5.0);
        let mut conns: Vec<_> = f.connections().cloned().collect();
        conns.sort_by_key(|c| c.host);
        assert_eq!(conns.iter().map(|c| (c.host, c.remote, c.port)).collect::<Vec<_>>(), vec![(1, 101, 9), (2, 102, 9)]);
        for c in &conns {
            // Opened within the first gap after the start; closed at the stop.
            assert!(c.opened >= at(1.0) && c.opened < at(1.002));
            assert_eq!(c.closed, Some(at(3.0)));
            assert!(c.ended.is_some() && !c.reset);
            let w = writes(&f, c.host);
            assert!(w.iter().all(|&(_, b, took)| b == 948 && took == 948));
            let t: Vec<Time> = w.iter().map(|w| w.0).collect();
            assert!(t[0] >= c.established.expect("established"));
            assert!(gaps(&t).iter().all(|g| g.abs_diff(2_000_000) <= 1), "{:?}", gaps(&t));
        }
        assert_eq!(f.counter(0, "blocked_s"), 0.0);
    }

    /// The seed's sine background, m = A = 4 Mbit/s at 0.7 Hz from phase 1,
    /// from 1 s to 3 s.
    fn sine() -> Box<dyn RateProcess> {
        let wave = crate::background::process::Wave { amplitude: 4e6, frequency: 0.7, phase: 1.0 };
        Box::new(crate::background::process::Sine::new(4e6, vec![wave]))
    }

    #[test]
    fn a_sine_over_udp_sends_each_packet_where_the_integral_of_the_rate_reaches_its_bits() {
        let mut f = Fake::loopback(Dur::ZERO);
        let cfg = RateSourceConfig { rate_bps: 4e6, ..config(Arrivals::Constant, RateTransport::Udp) };
        f.add(RateSource::paced(cfg, sine(), Rng::stream(1, "rate-test")));
        f.start();
        f.run_until(at(5.0));
        let p = sine();
        // Packet j of the model (either host's) at F(t) = j·8000 bits from
        // the start, to the nanosecond its timer is rounded up to.
        let sent = f.datagrams();
        let t: Vec<f64> = sent.iter().map(|d| (d.at - at(1.0)).as_secs_f64()).collect();
        assert_eq!(t.len(), (p.bits(2.0) / 8000.0).floor() as usize);
        for (j, &tj) in t.iter().enumerate() {
            let due = crate::background::process::time_of(p.as_ref(), 0.0, (j + 1) as f64 * 8000.0).expect("due");
            assert!(tj >= due - 1e-10 && tj < due + 1.1e-9, "{j}: {tj} {due}");
        }
        // The hosts take turns.
        assert!(sent.iter().enumerate().all(|(j, d)| d.from == [1, 2][j % 2] && d.payload == 972));
        assert_eq!(f.report(0).kind, "sine-udp");
    }

    #[test]
    fn a_sine_over_tcp_writes_one_packets_payload_at_each_scheduled_time() {
        let mut f = Fake::loopback(Dur::from_millis(1));
        let cfg = RateSourceConfig { pairs: vec![(1, 101)], rate_bps: 4e6, ..config(Arrivals::Constant, RateTransport::Tcp) };
        f.add(RateSource::paced(cfg, sine(), Rng::stream(1, "rate-test")));
        f.start();
        f.run_until(at(5.0));
        let w = writes(&f, 1);
        assert!(w.iter().all(|&(_, b, took)| b == 948 && took == 948));
        // The first write is the first packet due once the connection is
        // up, and every write after it the next packet.
        let p = sine();
        let secs = |t: Time| (t - at(1.0)).as_secs_f64();
        let up = f.connections().next().expect("a connection").established.expect("established");
        let k0 = (p.bits(secs(up)) / 8000.0).ceil();
        for (j, &(t, _, _)) in w.iter().enumerate() {
            let due = crate::background::process::time_of(p.as_ref(), 0.0, (k0 + j as f64) * 8000.0).expect("due");
            assert!((secs(t) - due).abs() < 1.1e-9, "{j}: {} {due}", secs(t));
        }
        assert_eq!(w.len() as f64, (p.bits(2.0) / 8000.0).floor() - k0 + 1.0);
        assert_eq!(f.report(0).kind, "sine-tcp");
    }

    #[test]
    fn over_tcp_a_blocked_writer_falls_behind_and_writes_again_a_gap_after_it_unblocks() {
        // A 3000-byte send buffer and 50 ms to the sink: the buffer frees
        // far slower than one 948-byte write every 2 ms fills it.
        let cfg = RateSourceConfig { pairs: vec![(1, 101)], rate_bps: 4e6, ..config(Arrivals::Constant, RateTransport::Tcp) };
        let f = run(cfg, Fake::loopback(Dur::from_millis(50)).with_send_buffer(3000), 5.0);
        let w = writes(&f, 1);
        let short = w.iter().position(|&(_, b, took)| took < b).expect("a short write");
        // The rest of the blocked write goes when space frees (a `Writable`),
        // the next packet one gap later.
        let (resumed, rest) = (w[short + 1], w[short + 2]);
        assert_eq!(resumed.1, 948 - w[short].2);
        let writable = f.told().iter().find(|t| matches!(t.event, Event::Writable(_)) && t.at > w[short].0).expect("writable");
        assert_eq!(resumed.0, writable.at);
        assert!(((rest.0 - resumed.0).nanos()).abs_diff(2_000_000) <= 1, "{resumed:?} {rest:?}");
        // Responsive: what went is what the buffer let through, about 3000
        // bytes every 50 ms, not the 948 every 2 ms asked for.
        let sent = f.counter(0, "sent_bytes");
        assert!(sent < 2.0 * 3000.0 * 40.0 + 3000.0, "{sent}");
        assert!(f.counter(0, "blocked_s") > 1.0);
    }

    #[test]
    fn over_tcp_late_timers_do_not_slow_the_writer_down() {
        // Every wake-up 300 us late against a write every 2 ms: a schedule
        // taken from the wake-ups would lose 13% of the rate.
        let f =
            run(config(Arrivals::Constant, RateTransport::Tcp), Fake::loopback(Dur::from_millis(1)).with_timer_lateness(Dur::from_micros(300)), 5.0);
        for host in [1, 2] {
            let t: Vec<Time> = writes(&f, host).iter().map(|w| w.0).collect();
            // 2 s at 500 writes a second, less the handshake's share of a gap.
            assert!((t.len() as i64 - 1000).abs() <= 2, "{} writes", t.len());
            assert!(gaps(&t).iter().all(|g| g.abs_diff(2_000_000) <= 1), "{:?}", gaps(&t));
        }
        assert_eq!(f.counter(0, "blocked_s"), 0.0);
    }
}
