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
            Event::Timer(i) => {
                if tp.now() < self.cfg.stop {
                    let (src, dst) = self.cfg.pairs[i as usize];
                    self.conns[i as usize] = Some(tp.connect(src, dst, self.cfg.port));
                }
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
