//! Greedy flows: long-lived TCP connections that always have data to send
//! (bulk FTP in the DiffServ seed, BulkSend in ns-3).

use crate::{App, AppReport, ConnId, Event, HostId, Transport};
use units::{Dur, Rng, Time};

#[derive(Clone, Debug)]
pub struct GreedyConfig {
    pub name: String,
    /// (source, sink) host pairs; one flow each.
    pub pairs: Vec<(HostId, HostId)>,
    pub port: u16,
    /// Flows start at uniform random times in [start, start + spread).
    pub start: Time,
    pub spread: Dur,
    pub stop: Time,
}

pub struct Greedy {
    cfg: GreedyConfig,
    rng: Rng,
    conns: Vec<Option<ConnId>>,
    resets: u64,
}

impl Greedy {
    pub fn new(cfg: GreedyConfig, rng: Rng) -> Greedy {
        let n = cfg.pairs.len();
        Greedy { cfg, rng, conns: vec![None; n], resets: 0 }
    }
}

const STOP: u64 = u64::MAX;

impl App for Greedy {
    fn start(&mut self, tp: &mut dyn Transport) {
        for i in 0..self.cfg.pairs.len() {
            tp.listen(self.cfg.pairs[i].1, self.cfg.port);
            let at = self.cfg.start + Dur((self.rng.uniform() * self.cfg.spread.0 as f64) as u64);
            tp.set_timer(at, i as u64);
        }
        tp.set_timer(self.cfg.stop, STOP);
    }

    fn on_event(&mut self, ev: Event, tp: &mut dyn Transport) {
        match ev {
            Event::Timer(STOP) => {
                for c in self.conns.iter_mut().filter_map(Option::take) {
                    tp.close(c);
                }
            }
            Event::Timer(i) if tp.now() < self.cfg.stop => {
                let (src, dst) = self.cfg.pairs[i as usize];
                self.conns[i as usize] = Some(tp.connect(src, dst, self.cfg.port));
            }
            Event::Connected(c) => tp.write_forever(c),
            Event::PeerClosed(c) => tp.close(c),
            Event::Reset(c) => {
                self.resets += 1;
                for slot in self.conns.iter_mut() {
                    if *slot == Some(c) {
                        *slot = None;
                    }
                }
            }
            _ => {}
        }
    }

    fn report(&self) -> AppReport {
        AppReport {
            name: self.cfg.name.clone(),
            kind: "greedy",
            counters: vec![("flows", self.cfg.pairs.len() as f64), ("resets", self.resets as f64)],
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake::{Fake, Op};

    fn at(s: f64) -> Time {
        Time::from_secs_f64(s)
    }

    /// Three flows, 1 ms away, starting within 0.5 s of 1 s, until 5 s.
    fn started() -> Fake {
        let cfg = GreedyConfig {
            name: "bulk".into(),
            pairs: vec![(1, 11), (2, 12), (3, 13)],
            port: 5001,
            start: at(1.0),
            spread: Dur::from_millis(500),
            stop: at(5.0),
        };
        let mut f = Fake::loopback(Dur::from_millis(1));
        f.add(Greedy::new(cfg, Rng::stream(1, "greedy-test")));
        f.start();
        f
    }

    #[test]
    fn each_pair_opens_one_greedy_connection_within_the_spread_and_closes_it_at_the_stop() {
        let mut f = started();
        f.run_until(at(10.0));
        let mut conns: Vec<_> = f.connections().cloned().collect();
        conns.sort_by_key(|c| c.host);
        assert_eq!(conns.iter().map(|c| (c.host, c.remote, c.port)).collect::<Vec<_>>(), vec![(1, 11, 5001), (2, 12, 5001), (3, 13, 5001)]);
        for c in &conns {
            assert!(c.opened >= at(1.0) && c.opened < at(1.5), "{:?}", c.opened);
            // Writing for ever from the handshake on.
            let forever = f.calls().iter().find(|k| k.op == Op::WriteForever { conn: c.id }).expect("write_forever");
            assert_eq!(Some(forever.at), c.established);
            // Closed at the stop by the source, then by the sink.
            assert_eq!(c.closed, Some(at(5.0)));
            assert_eq!(f.conn(c.peer.expect("accepted")).closed, Some(at(5.001)));
            assert!(c.ended.is_some() && !c.reset);
        }
        assert_eq!((f.counter(0, "flows"), f.counter(0, "resets")), (3.0, 0.0));
    }

    #[test]
    fn a_reset_flow_is_counted_and_not_closed_at_the_stop() {
        let mut f = started();
        f.run_until(at(2.0));
        // The source's end gives up; the sink's hears nothing.
        let first = f.connections().next().expect("a connection").id;
        f.reset(first);
        f.run_until(at(10.0));
        assert_eq!(f.counter(0, "resets"), 1.0);
        let closes: Vec<_> = f.calls().iter().filter(|k| k.at == at(5.0) && matches!(k.op, Op::Close { .. })).map(|k| k.op.clone()).collect();
        assert_eq!(closes.len(), 2);
        assert!(!closes.contains(&Op::Close { conn: first }));
    }
}
