//! httperf-style downloads: each client fetches objects back to back from
//! one server, one new connection per object, and records each download.
//!
//! A download starts when the client opens the connection and ends when the
//! last byte of the response arrives; its time includes the handshake, as
//! httperf's connection time does. The request's message boundary carries
//! the object size, so the server knows what to send.

use crate::{outbox, App, AppReport, Column, ConnId, Event, HostId, Records, Responder, Transport};
use std::collections::HashMap;
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
    fetches: HashMap<ConnId, Fetch>,
    server: Responder,
    next_index: Vec<u64>,
    log: Log,
    failed: u64,
}

impl HttpApp {
    pub fn new(cfg: HttpConfig) -> HttpApp {
        let n = cfg.clients.len();
        HttpApp { cfg, fetches: HashMap::new(), server: Responder::default(), next_index: vec![0; n], log: Log::default(), failed: 0 }
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
