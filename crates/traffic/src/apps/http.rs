//! httperf-style downloads: each client fetches objects back to back from
//! one server, one new connection per object, and records each download.
//!
//! A download starts when the client opens the connection and ends when the
//! last byte of the response arrives; its time includes the handshake, as
//! httperf's connection time does. The request's message boundary carries
//! the object size, so the server knows what to send.

use crate::{outbox, App, AppReport, Column, ConnId, Event, HostId, Records, Responder, Transport};
use rustc_hash::FxHashMap;
use units::{Dur, Time};

#[derive(Clone, Debug)]
pub struct HttpConfig {
    pub name: String,
    pub server: HostId,
    pub clients: Vec<HostId>,
    pub port: u16,
    /// Object sizes, fetched in this order, cycling.
    pub object_sizes: Vec<u64>,
    pub request_size: u64,
    pub think_time: Dur,
    pub start: Time,
    pub stop: Time,
    /// Fetches per client; 0 = until `stop`.
    pub count: u64,
}

#[derive(Clone, Debug)]
struct Fetch {
    client: usize,
    index: u64,
    size: u64,
    start: Time,
    connected: Option<Time>,
}

#[derive(Default)]
struct Log {
    client: Vec<i64>,
    index: Vec<i64>,
    size: Vec<i64>,
    start_s: Vec<f64>,
    end_s: Vec<f64>,
    connect_s: Vec<f64>,
    download_s: Vec<f64>,
}

pub struct HttpApp {
    cfg: HttpConfig,
    /// Client-side connections in progress.
    fetches: FxHashMap<ConnId, Fetch>,
    server: Responder,
    next_index: Vec<u64>,
    log: Log,
    failed: u64,
}

impl HttpApp {
    pub fn new(cfg: HttpConfig) -> HttpApp {
        let n = cfg.clients.len();
        HttpApp { cfg, fetches: FxHashMap::default(), server: Responder::default(), next_index: vec![0; n], log: Log::default(), failed: 0 }
    }

    fn begin(&mut self, client: usize, tp: &mut dyn Transport) {
        let now = tp.now();
        let index = self.next_index[client];
        if now >= self.cfg.stop || (self.cfg.count > 0 && index >= self.cfg.count) {
            return;
        }
        self.next_index[client] += 1;
        let sizes = &self.cfg.object_sizes;
        let size = sizes[(index % sizes.len() as u64) as usize];
        let conn = tp.connect(self.cfg.clients[client], self.cfg.server, self.cfg.port);
        self.fetches.insert(conn, Fetch { client, index, size, start: now, connected: None });
    }

    /// Starts the client's next fetch after its think time.
    fn next(&mut self, client: usize, tp: &mut dyn Transport) {
        if self.cfg.think_time == Dur::ZERO {
            self.begin(client, tp);
        } else {
            tp.set_timer(tp.now() + self.cfg.think_time, client as u64);
        }
    }
}

impl App for HttpApp {
    fn start(&mut self, tp: &mut dyn Transport) {
        tp.listen(self.cfg.server, self.cfg.port);
        for c in 0..self.cfg.clients.len() {
            tp.set_timer(self.cfg.start, c as u64);
        }
    }

    fn on_event(&mut self, ev: Event, tp: &mut dyn Transport) {
        if self.server.on_event(&ev, tp, &mut |_, _| outbox::whole_message()) {
            return;
        }
        match ev {
            Event::Timer(client) => self.begin(client as usize, tp),
            Event::Connected(conn) => {
                if let Some(f) = self.fetches.get_mut(&conn) {
                    f.connected = Some(tp.now());
                    let size = f.size;
                    tp.write(conn, self.cfg.request_size);
                    tp.mark(conn, size);
                }
            }
            Event::Message { conn, .. } => {
                if let Some(f) = self.fetches.remove(&conn) {
                    // The whole response is in.
                    let now = tp.now();
                    let l = &mut self.log;
                    l.client.push(f.client as i64);
                    l.index.push(f.index as i64);
                    l.size.push(f.size as i64);
                    l.start_s.push(f.start.as_secs_f64());
                    l.end_s.push(now.as_secs_f64());
                    l.connect_s.push(f.connected.map_or(f64::NAN, |c| (c - f.start).as_secs_f64()));
                    l.download_s.push((now - f.start).as_secs_f64());
                    tp.close(conn);
                    self.next(f.client, tp);
                }
            }
            Event::PeerClosed(conn) => {
                if let Some(f) = self.fetches.remove(&conn) {
                    // The server closed before the response was complete.
                    self.failed += 1;
                    tp.close(conn);
                    self.next(f.client, tp);
                }
            }
            Event::Reset(conn) => {
                if let Some(f) = self.fetches.remove(&conn) {
                    self.failed += 1;
                    self.next(f.client, tp);
                }
            }
            Event::Accepted { .. } | Event::Writable(_) | Event::Closed(_) | Event::Datagram { .. } => {}
        }
    }

    fn report(&self) -> AppReport {
        let l = &self.log;
        AppReport {
            name: self.cfg.name.clone(),
            kind: "http",
            metric: Some("download_time_s"),
            records: Records {
                columns: vec![
                    ("client", Column::I64(l.client.clone())),
                    ("index", Column::I64(l.index.clone())),
                    ("bytes", Column::I64(l.size.clone())),
                    ("start_s", Column::F64(l.start_s.clone())),
                    ("end_s", Column::F64(l.end_s.clone())),
                    ("connect_time_s", Column::F64(l.connect_s.clone())),
                    ("download_time_s", Column::F64(l.download_s.clone())),
                ],
            },
            counters: vec![("failed", self.failed as f64), ("unfinished", self.fetches.len() as f64)],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake::Fake;

    fn at(s: f64) -> Time {
        Time::from_secs_f64(s)
    }

    /// Two clients (hosts 1 and 2) fetch 1000- and 5000-byte objects in
    /// turn from host 100, three each, from 1 s, 5 ms from the server.
    fn config() -> HttpConfig {
        HttpConfig {
            name: "web".into(),
            server: 100,
            clients: vec![1, 2],
            port: 80,
            object_sizes: vec![1000, 5000],
            request_size: 200,
            think_time: Dur::ZERO,
            start: at(1.0),
            stop: at(60.0),
            count: 3,
        }
    }

    fn started(cfg: HttpConfig) -> Fake {
        let mut f = Fake::loopback(Dur::from_millis(5));
        f.add(HttpApp::new(cfg));
        f.start();
        f
    }

    fn f64s<'a>(r: &'a AppReport, name: &str) -> &'a [f64] {
        r.records.f64(name).unwrap_or_else(|| panic!("no column {name}"))
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn downloads_run_back_to_back_and_are_recorded_from_connect_to_last_byte() {
        let mut f = started(config());
        f.run_until(at(10.0));
        let r = f.report(0);
        assert_eq!(r.records.rows(), 6);
        for client in 0..2 {
            let rows: Vec<usize> = (0..6).filter(|&i| r.records.i64("client").expect("client")[i] == client).collect();
            assert_eq!(rows.len(), 3);
            let (start, end) = (f64s(&r, "start_s"), f64s(&r, "end_s"));
            let bytes = r.records.i64("bytes").expect("bytes");
            assert_eq!(rows.iter().map(|&i| bytes[i]).collect::<Vec<_>>(), vec![1000, 5000, 1000], "sizes in turn");
            for (k, &i) in rows.iter().enumerate() {
                // The handshake (5 ms), the request out (5 ms), the response
                // back (5 ms); the next download opens at the last byte.
                assert!(close(start[i], 1.0 + 0.015 * k as f64), "{}", start[i]);
                assert!(close(end[i], start[i] + 0.015));
                assert!(close(f64s(&r, "connect_time_s")[i], 0.005) && close(f64s(&r, "download_time_s")[i], 0.015));
            }
        }
        // Each request's mark asks for the object; the server sends it.
        let msgs = f.messages();
        assert_eq!(msgs.len(), 12);
        for (q, a) in msgs.iter().filter(|m| m.client).zip(msgs.iter().filter(|m| !m.client)) {
            assert_eq!((q.bytes, q.msg, a.bytes), (200, a.bytes, a.bytes));
        }
        // Every connection closed at both ends; nothing failed or unfinished.
        assert!(f.connections().all(|c| c.ended.is_some() && !c.reset));
        assert_eq!((f.counter(0, "failed"), f.counter(0, "unfinished")), (0.0, 0.0));
    }

    #[test]
    fn think_time_separates_downloads_and_none_starts_after_the_stop() {
        let mut f = started(HttpConfig { think_time: Dur::from_millis(100), count: 0, stop: at(1.5), clients: vec![1], ..config() });
        f.run_until(at(10.0));
        let r = f.report(0);
        let (start, end) = (f64s(&r, "start_s"), f64s(&r, "end_s"));
        // A download every 115 ms from 1 s; the fifth would start at 1.46
        // and the sixth at 1.575, after the stop.
        assert_eq!(start.len(), 5);
        for i in 1..start.len() {
            assert!(close(start[i] - end[i - 1], 0.1), "{start:?} {end:?}");
        }
        assert!(f.connections().all(|c| c.opened < at(1.5)));
    }

    #[test]
    fn a_reset_download_is_counted_as_failed_and_the_next_one_starts() {
        let mut f = started(HttpConfig { clients: vec![1], ..config() });
        f.run_until(at(1.008));
        let first = f.connections().next().expect("a connection").id;
        f.reset(first);
        f.run_until(at(10.0));
        let r = f.report(0);
        // Three fetches: the first failed, the two others recorded, the
        // second opened when the first was reset.
        assert_eq!((f.counter(0, "failed"), r.records.rows()), (1.0, 2));
        assert_eq!(r.records.i64("index"), Some(&[1, 2][..]));
        assert!(close(f64s(&r, "start_s")[0], 1.008));
    }
}
