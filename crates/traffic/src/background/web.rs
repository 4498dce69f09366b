//! Web-like flows: short TCP transfers arriving as a Poisson process, each
//! on a connection of its own from one of many source hosts, sizes drawn
//! from flow-length classes with weights or from a distribution (the
//! AF/BE study's traffic: "HTTP traffic crossing a DiffServ domain").
//!
//! A flow opens a connection from a source host, writes its bytes, marks
//! their end and closes. It is complete when its sink has received every
//! byte in order: its completion time runs from the connect (the SYN) to
//! that instant, handshake included (`completion_s`); `transfer_s` runs
//! from the handshake's end (what a simulator without handshakes, such as
//! ns-2's one-way TCP, measures from its first data packet).

use crate::{outbox, App, AppReport, Column, ConnId, Event, HostId, Outbox, Records, Transport};
use rustc_hash::FxHashMap;
use units::{Rng, Time};

/// Where a flow's size comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum FlowSizes {
    /// (bytes, weight) per flow-length class.
    Classes(Vec<(u64, f64)>),
    /// Pareto of shape `alpha` on [min, max] bytes.
    BoundedPareto { alpha: f64, min: f64, max: f64 },
    /// exp(N(mu, sigma)) bytes.
    Lognormal { mu: f64, sigma: f64 },
}

impl FlowSizes {
    /// The mean flow size in bytes.
    pub fn mean(&self) -> f64 {
        match self {
            FlowSizes::Classes(c) => {
                let w: f64 = c.iter().map(|(_, w)| w).sum();
                c.iter().map(|(b, x)| *b as f64 * x).sum::<f64>() / w
            }
            &FlowSizes::BoundedPareto { alpha, min, max } => {
                let (l, h) = (min, max);
                if (alpha - 1.0).abs() < 1e-12 {
                    return l * h / (h - l) * (h / l).ln();
                }
                let norm = 1.0 - (l / h).powf(alpha);
                alpha * l.powf(alpha) / norm * (h.powf(1.0 - alpha) - l.powf(1.0 - alpha)) / (1.0 - alpha)
            }
            &FlowSizes::Lognormal { mu, sigma } => (mu + sigma * sigma / 2.0).exp(),
        }
    }

    /// A size and its class (the index into `Classes`; -1 for a distribution).
    fn draw(&self, rng: &mut Rng) -> (u64, i64) {
        match self {
            FlowSizes::Classes(c) => {
                let total: f64 = c.iter().map(|(_, w)| w).sum();
                let mut x = rng.uniform() * total;
                for (i, (b, w)) in c.iter().enumerate() {
                    x -= w;
                    if x < 0.0 {
                        return (*b, i as i64);
                    }
                }
                (c[c.len() - 1].0, c.len() as i64 - 1)
            }
            &FlowSizes::BoundedPareto { alpha, min, max } => {
                // Inverse of the bounded Pareto's distribution function.
                let u = rng.uniform();
                let r = (min / max).powf(alpha);
                let x = min / (1.0 - u * (1.0 - r)).powf(1.0 / alpha);
                (x.round().max(1.0) as u64, -1)
            }
            &FlowSizes::Lognormal { mu, sigma } => ((mu + sigma * rng.normal()).exp().round().max(1.0) as u64, -1),
        }
    }
}

#[derive(Clone, Debug)]
pub struct WebConfig {
    pub name: String,
    /// (source, sink) host pairs: each flow goes from a source, drawn
    /// uniformly, to its sink.
    pub pairs: Vec<(HostId, HostId)>,
    pub port: u16,
    /// Flow arrivals per second (Poisson).
    pub flows_per_s: f64,
    pub sizes: FlowSizes,
    /// Flows arrive in [start, stop); those under way at the end are
    /// counted unfinished.
    pub start: Time,
    pub stop: Time,
}

struct Flow {
    index: u64,
    source: usize,
    bytes: u64,
    class: i64,
    start: Time,
    connected: Option<Time>,
}

#[derive(Default)]
struct Log {
    index: Vec<i64>,
    source: Vec<i64>,
    class: Vec<i64>,
    bytes: Vec<i64>,
    start_s: Vec<f64>,
    end_s: Vec<f64>,
    completion_s: Vec<f64>,
    transfer_s: Vec<f64>,
}

pub struct Web {
    cfg: WebConfig,
    rng: Rng,
    next_index: u64,
    /// Flows by their source's connection, until the sink has it all.
    flows: FxHashMap<ConnId, Flow>,
    /// What a source still has to write, by connection.
    outboxes: FxHashMap<ConnId, Outbox>,
    /// The sinks' connections.
    sinks: FxHashMap<ConnId, ()>,
    log: Log,
    failed: u64,
}

const ARRIVAL: u64 = 0;

impl Web {
    pub fn new(cfg: WebConfig, rng: Rng) -> Web {
        Web {
            cfg,
            rng,
            next_index: 0,
            flows: FxHashMap::default(),
            outboxes: FxHashMap::default(),
            sinks: FxHashMap::default(),
            log: Log::default(),
            failed: 0,
        }
    }

    fn schedule(&mut self, from: Time, tp: &mut dyn Transport) {
        let gap = self.rng.exponential(1e9 / self.cfg.flows_per_s.max(1e-12));
        let at = Time(from.0.saturating_add(gap.round() as u64));
        if at < self.cfg.stop {
            tp.set_timer(at, ARRIVAL);
        }
    }

    fn arrive(&mut self, tp: &mut dyn Transport) {
        let now = tp.now();
        let source = self.rng.below(self.cfg.pairs.len() as u64) as usize;
        let (bytes, class) = self.cfg.sizes.draw(&mut self.rng);
        let (src, dst) = self.cfg.pairs[source];
        let conn = tp.connect(src, dst, self.cfg.port);
        self.flows.insert(conn, Flow { index: self.next_index, source, bytes, class, start: now, connected: None });
        self.next_index += 1;
        self.schedule(now, tp);
    }

    fn complete(&mut self, f: Flow, now: Time) {
        let l = &mut self.log;
        l.index.push(f.index as i64);
        l.source.push(f.source as i64);
        l.class.push(f.class);
        l.bytes.push(f.bytes as i64);
        l.start_s.push(f.start.as_secs_f64());
        l.end_s.push(now.as_secs_f64());
        l.completion_s.push((now - f.start).as_secs_f64());
        l.transfer_s.push(f.connected.map_or(f64::NAN, |c| (now - c).as_secs_f64()));
    }
}

impl App for Web {
    fn start(&mut self, tp: &mut dyn Transport) {
        let mut sinks: Vec<HostId> = self.cfg.pairs.iter().map(|p| p.1).collect();
        sinks.sort_unstable();
        sinks.dedup();
        for s in sinks {
            tp.listen(s, self.cfg.port);
        }
        let start = self.cfg.start;
        self.schedule(start, tp);
    }

    fn on_event(&mut self, ev: Event, tp: &mut dyn Transport) {
        match ev {
            Event::Timer(ARRIVAL) => self.arrive(tp),
            Event::Connected(conn) => {
                if let Some(f) = self.flows.get_mut(&conn) {
                    f.connected = Some(tp.now());
                    // The mark carries the flow's own connection id, so the
                    // sink's end can name the flow it completes.
                    let mut out = Outbox::default();
                    out.send(tp, conn, f.bytes, Some(conn.0), outbox::whole_message());
                    self.outboxes.insert(conn, out);
                }
            }
            Event::Writable(conn) => {
                if let Some(out) = self.outboxes.get_mut(&conn) {
                    if out.flush(tp, conn) {
                        self.outboxes.remove(&conn);
                    }
                }
            }
            Event::Accepted { conn, .. } => {
                self.sinks.insert(conn, ());
            }
            Event::Message { conn, msg } if self.sinks.contains_key(&conn) => {
                if let Some(f) = self.flows.remove(&ConnId(msg)) {
                    self.complete(f, tp.now());
                    self.outboxes.remove(&ConnId(msg));
                    tp.close(ConnId(msg));
                }
            }
            Event::PeerClosed(conn) => tp.close(conn),
            Event::Reset(conn) => {
                self.sinks.remove(&conn);
                self.outboxes.remove(&conn);
                if self.flows.remove(&conn).is_some() {
                    self.failed += 1;
                }
            }
            Event::Closed(conn) => {
                self.sinks.remove(&conn);
            }
            _ => {}
        }
    }

    fn report(&self) -> AppReport {
        let l = &self.log;
        AppReport {
            name: self.cfg.name.clone(),
            kind: "web",
            metric: Some("completion_s"),
            records: Records {
                columns: vec![
                    ("flow", Column::I64(l.index.clone())),
                    ("source", Column::I64(l.source.clone())),
                    ("class", Column::I64(l.class.clone())),
                    ("bytes", Column::I64(l.bytes.clone())),
                    ("start_s", Column::F64(l.start_s.clone())),
                    ("end_s", Column::F64(l.end_s.clone())),
                    ("completion_s", Column::F64(l.completion_s.clone())),
                    // From the handshake's end: the data's own time.
                    ("transfer_s", Column::F64(l.transfer_s.clone())),
                ],
            },
            counters: vec![
                ("flows", self.next_index as f64),
                ("failed", self.failed as f64),
                ("unfinished", self.flows.len() as f64),
                ("flows_per_s", self.cfg.flows_per_s),
                ("mean_bytes", self.cfg.sizes.mean()),
            ],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake::Fake;
    use units::Dur;

    fn at(s: f64) -> Time {
        Time::from_secs_f64(s)
    }

    fn config(sizes: FlowSizes, flows_per_s: f64, secs: f64) -> WebConfig {
        WebConfig { name: "web".into(), pairs: (0..20).map(|i| (i, 100 + i)).collect(), port: 80, flows_per_s, sizes, start: at(0.0), stop: at(secs) }
    }

    #[test]
    fn arrivals_and_the_size_mix_follow_the_configuration_within_5_percent() {
        // 50 flows/s for 200 s (10,000 flows) over three classes weighted
        // 5:3:2. Poisson counts: 1% sd; class shares: within 1.5% sd.
        let classes = vec![(1460, 5.0), (14_600, 3.0), (131_400, 2.0)];
        let mut f = Fake::loopback(Dur::from_millis(5));
        f.add(Web::new(config(FlowSizes::Classes(classes), 50.0, 200.0), Rng::stream(1, "web-test")));
        f.start();
        f.run_until(at(210.0));
        let r = f.report(0);
        let flows = f.counter(0, "flows");
        assert!((flows / 10_000.0 - 1.0).abs() < 0.05, "{flows} flows");
        assert_eq!(f.counter(0, "unfinished"), 0.0);
        let class = r.records.i64("class").expect("class");
        for (k, w) in [0.5, 0.3, 0.2].iter().enumerate() {
            let share = class.iter().filter(|&&c| c == k as i64).count() as f64 / class.len() as f64;
            assert!((share / w - 1.0).abs() < 0.05, "class {k}: {share}");
        }
        // Each flow its own connection, from sources spread over the 20.
        assert_eq!(f.connections().filter(|c| c.host < 100).count() as f64, flows);
        let sources = r.records.i64("source").expect("source");
        assert!((0..20).all(|s| sources.contains(&s)));
    }

    #[test]
    fn a_flow_completes_when_its_sink_has_every_byte_from_its_connect() {
        // The fake delivers a write one delay later: handshake (5 ms) plus
        // the data (5 ms).
        let mut f = Fake::loopback(Dur::from_millis(5));
        f.add(Web::new(config(FlowSizes::Classes(vec![(5000, 1.0)]), 1.0, 30.0), Rng::stream(2, "web-test")));
        f.start();
        f.run_until(at(40.0));
        let r = f.report(0);
        let c = r.records.f64("completion_s").expect("completion");
        assert!(!c.is_empty() && c.iter().all(|&x| (x - 0.010).abs() < 1e-9), "{c:?}");
        let t = r.records.f64("transfer_s").expect("transfer");
        assert!(t.iter().all(|&x| (x - 0.005).abs() < 1e-9), "{t:?}");
        assert!(f.connections().all(|c| c.ended.is_some()));
    }

    #[test]
    fn distributions_have_their_means() {
        let mut rng = Rng::stream(3, "web-sizes");
        for d in [FlowSizes::BoundedPareto { alpha: 1.2, min: 1000.0, max: 1e6 }, FlowSizes::Lognormal { mu: 9.0, sigma: 1.0 }] {
            let n = 400_000;
            let mean = (0..n).map(|_| d.draw(&mut rng).0 as f64).sum::<f64>() / n as f64;
            assert!((mean / d.mean() - 1.0).abs() < 0.03, "{d:?}: {mean} against {}", d.mean());
        }
    }
}
