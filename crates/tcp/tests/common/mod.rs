//! A tiny deterministic network for driving two endpoints: fixed one-way delay, an
//! optional bottleneck (rate + drop-tail FIFO, same in both directions), and a drop
//! predicate. Events are ordered by (time, insertion order) in a BinaryHeap.
#![allow(dead_code)]

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::sync::Arc;
use tcp::{Dur, Notify, Segment, State, Tcp, TcpConfig, Time};
use units::Rate;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    A,
    B,
}

impl Side {
    pub fn idx(self) -> usize {
        self as usize
    }
    pub fn other(self) -> Side {
        match self {
            Side::A => Side::B,
            Side::B => Side::A,
        }
    }
}

/// Every segment an endpoint emitted.
#[derive(Clone, Copy, Debug)]
pub struct Wire {
    pub t: Time,
    pub from: Side,
    pub seg: Segment,
    pub dropped: bool,
}

/// A trivial application on each side.
#[derive(Clone, Debug, Default)]
pub struct App {
    pub to_send: u64,
    pub close_when_done: bool,
    pub close_on_fin: bool,
    pub delivered: u64,
    pub acked: u64,
    pub peer_fin: bool,
    pub established: Option<Time>,
    pub closed: Option<Time>,
    pub reset: bool,
    pub close_called: bool,
    /// A write came back short: like a blocking writer, wait until the
    /// endpoint says it is writable again.
    pub blocked: bool,
    /// (time, cumulative delivered bytes) at every delivery.
    pub deliveries: Vec<(Time, u64)>,
}

/// Per-event record of A's congestion state.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    pub t: Time,
    pub cwnd: u64,
    pub ssthresh: u64,
    pub recovery: bool,
    pub send_buffer: u64,
}

pub type DropFn = Box<dyn FnMut(Time, Side, &Segment) -> bool>;

pub struct Net {
    pub now: Time,
    pub delay: Dur,
    pub rate: Option<Rate>,
    pub queue_limit: usize,
    pub cfg: [TcpConfig; 2],
    pub tcp: [Option<Tcp>; 2],
    pub app: [App; 2],
    pub log: Vec<Wire>,
    pub trace: Vec<Sample>,
    pub states: [Vec<State>; 2],
    drop: DropFn,
    mark: DropFn,
    heap: BinaryHeap<Reverse<(Time, u64)>>,
    in_flight: HashMap<u64, (Side, Segment)>,
    next_id: u64,
    busy_until: [Time; 2],
    queue: [VecDeque<Time>; 2],
    out: Vec<Segment>,
}

pub const MSS: u64 = 1000;

/// A config with round numbers: MSS 1000.
/// A fixed 4 MiB send buffer, so tests can write whole transfers at once,
/// and no timestamps, quick ACKs or receive-window growth, so segments carry
/// exactly MSS bytes and ACKs follow the plain delayed-ACK rule; `buffers.rs` and `linux.rs` test
/// those features.
pub fn cfg(alg: tcp::Algorithm, sack: bool) -> TcpConfig {
    TcpConfig {
        algorithm: alg,
        sack,
        mss: MSS as u32,
        snd_buf_auto: false,
        rcv_buf_auto: false,
        timestamps: false,
        quickack: 0,
        ..TcpConfig::default()
    }
}

/// Sequence number of data segment `k` (MSS-sized segments from seq 1).
pub fn seg_seq(k: u64) -> u64 {
    1 + k * MSS
}

impl Net {
    pub fn new(a: TcpConfig, b: TcpConfig, delay: Dur) -> Net {
        Net {
            now: Time::ZERO,
            delay,
            rate: None,
            queue_limit: usize::MAX,
            cfg: [a, b],
            tcp: [None, None],
            app: [App::default(), App::default()],
            log: Vec::new(),
            trace: Vec::new(),
            states: [Vec::new(), Vec::new()],
            drop: Box::new(|_, _, _| false),
            mark: Box::new(|_, _, _| false),
            heap: BinaryHeap::new(),
            in_flight: HashMap::new(),
            next_id: 0,
            busy_until: [Time::ZERO; 2],
            queue: [VecDeque::new(), VecDeque::new()],
            out: Vec::new(),
        }
    }

    pub fn bottleneck(mut self, rate: Rate, queue_limit: usize) -> Net {
        self.rate = Some(rate);
        self.queue_limit = queue_limit;
        self
    }

    pub fn dropping(mut self, f: impl FnMut(Time, Side, &Segment) -> bool + 'static) -> Net {
        self.drop = Box::new(f);
        self
    }

    /// A queue on the way marks CE the ECN-capable segments `f` picks.
    pub fn marking(mut self, f: impl FnMut(Time, Side, &Segment) -> bool + 'static) -> Net {
        self.mark = Box::new(f);
        self
    }

    /// A sends `a_bytes` then closes; B sends `b_bytes`, closes when done and on A's FIN.
    pub fn transfer(mut self, a_bytes: u64, b_bytes: u64) -> Net {
        self.app[0] = App { to_send: a_bytes, close_when_done: true, ..App::default() };
        self.app[1] = App { to_send: b_bytes, close_when_done: b_bytes > 0, close_on_fin: true, ..App::default() };
        self
    }

    pub fn a(&self) -> &Tcp {
        self.tcp[0].as_ref().expect("A exists")
    }
    pub fn b(&self) -> &Tcp {
        self.tcp[1].as_ref().expect("B exists")
    }

    /// A connects at the current time.
    pub fn start(&mut self) {
        let t = Tcp::connect(&Arc::new(self.cfg[0].clone()), self.now, &mut self.out);
        self.tcp[0] = Some(t);
        self.after(Side::A, Notify::default());
    }

    pub fn run_until(&mut self, end: Time) {
        while self.step(end) {}
        self.now = self.now.max(end.min(self.next_event().unwrap_or(end)));
    }

    /// Run until nothing is scheduled (or `limit`); returns the time of the last event.
    pub fn run(&mut self, limit: Time) -> Time {
        while self.step(limit) {}
        self.now
    }

    fn next_event(&self) -> Option<Time> {
        let pkt = self.heap.peek().map(|r| r.0 .0);
        let timers = self.tcp.iter().flatten().filter_map(|t| t.poll_at());
        pkt.into_iter().chain(timers).min()
    }

    fn step(&mut self, limit: Time) -> bool {
        let Some(t) = self.next_event() else {
            return false;
        };
        if t > limit {
            return false;
        }
        self.now = t;
        if let Some(&Reverse((pt, id))) = self.heap.peek() {
            if pt == t {
                self.heap.pop();
                let (from, seg) = self.in_flight.remove(&id).expect("scheduled");
                self.deliver(from.other(), seg);
                return true;
            }
        }
        for side in [Side::A, Side::B] {
            let due = self.tcp[side.idx()].as_ref().and_then(|x| x.poll_at()).is_some_and(|d| d <= t);
            if due {
                let now = self.now;
                let n = self.tcp[side.idx()].as_mut().unwrap().on_timer(now, &mut self.out);
                self.after(side, n);
                return true;
            }
        }
        unreachable!("an event was due");
    }

    fn deliver(&mut self, to: Side, seg: Segment) {
        let now = self.now;
        let n = match &mut self.tcp[to.idx()] {
            Some(t) => t.on_segment(now, &seg, &mut self.out),
            None if seg.flags.contains(tcp::Flags::SYN) => {
                self.tcp[to.idx()] = Some(Tcp::accept(&Arc::new(self.cfg[to.idx()].clone()), now, &seg, &mut self.out));
                Notify::default()
            }
            None => return,
        };
        self.after(to, n);
    }

    /// Apply a Notify to the app, let the app act, then put emitted segments on the wire.
    fn after(&mut self, side: Side, n: Notify) {
        let now = self.now;
        let i = side.idx();
        let app = &mut self.app[i];
        app.delivered += n.delivered;
        if n.delivered > 0 {
            app.deliveries.push((now, app.delivered));
        }
        app.acked += n.acked;
        app.peer_fin |= n.peer_fin;
        app.reset |= n.reset;
        if n.established {
            app.established = Some(now);
        }
        if n.closed {
            app.closed = Some(now);
        }
        self.record_state(side);
        if let Some(t) = self.tcp[i].as_mut() {
            let app = &mut self.app[i];
            if matches!(t.state(), State::Established | State::CloseWait) || (app.established.is_none() && side == Side::A) {
                // A blocked writer looks again when the endpoint reports room.
                if app.to_send > 0 && (!app.blocked || (n.space && t.writable())) {
                    let took = t.write(now, app.to_send, &mut self.out);
                    app.blocked = took < app.to_send;
                    app.to_send -= took;
                }
                let want_close = (app.close_when_done && app.to_send == 0) || (app.close_on_fin && app.peer_fin && app.to_send == 0);
                if want_close && !app.close_called && app.established.is_some() {
                    app.close_called = true;
                    t.close(now, &mut self.out);
                }
            }
        }
        self.record_state(side);
        if side == Side::A {
            if let Some(a) = &self.tcp[0] {
                self.trace.push(Sample { t: now, cwnd: a.cwnd(), ssthresh: a.ssthresh(), recovery: a.in_recovery(), send_buffer: a.send_buffer() });
            }
        }
        let segs: Vec<Segment> = self.out.drain(..).collect();
        for s in segs {
            self.send(side, s);
        }
    }

    fn record_state(&mut self, side: Side) {
        if let Some(t) = &self.tcp[side.idx()] {
            let st = t.state();
            if self.states[side.idx()].last() != Some(&st) {
                self.states[side.idx()].push(st);
            }
        }
    }

    fn send(&mut self, from: Side, mut seg: Segment) {
        let now = self.now;
        if seg.ecn.capable() && (self.mark)(now, from, &seg) {
            seg.ecn = tcp::Ecn::Ce;
        }
        let dropped = (self.drop)(now, from, &seg);
        self.log.push(Wire { t: now, from, seg, dropped });
        if dropped {
            return;
        }
        let i = from.idx();
        let depart = match self.rate {
            None => now,
            Some(rate) => {
                let q = &mut self.queue[i];
                while q.front().is_some_and(|&d| d <= now) {
                    q.pop_front();
                }
                if q.len() >= self.queue_limit {
                    self.log.last_mut().unwrap().dropped = true;
                    return;
                }
                let bytes = seg.len as u64 + seg.header_len() as u64 + 20;
                let d = self.busy_until[i].max(now) + rate.tx_time(bytes);
                self.busy_until[i] = d;
                q.push_back(d);
                d
            }
        };
        let id = self.next_id;
        self.next_id += 1;
        self.in_flight.insert(id, (from, seg));
        self.heap.push(Reverse((depart + self.delay, id)));
    }

    /// The app on `side` writes `bytes` now (through the same path as `transfer`).
    pub fn app_write(&mut self, side: Side, bytes: u64) {
        self.app[side.idx()].to_send += bytes;
        self.after(side, Notify::default());
    }

    // ----- queries -----

    /// Puts segments an endpoint emitted outside the harness's own calls on the wire.
    pub fn inject(&mut self, from: Side, segs: Vec<Segment>) {
        for s in segs {
            self.send(from, s);
        }
    }

    pub fn sent_by(&self, side: Side) -> impl Iterator<Item = &Wire> {
        self.log.iter().filter(move |w| w.from == side)
    }
    /// Data segments sent by `side` (payload > 0).
    pub fn data_by(&self, side: Side) -> impl Iterator<Item = &Wire> {
        self.sent_by(side).filter(|w| w.seg.len > 0)
    }
    pub fn pure_acks_by(&self, side: Side) -> usize {
        self.sent_by(side).filter(|w| w.seg.len == 0 && w.seg.flags == tcp::Flags::ACK).count()
    }
    /// Bytes `side` had delivered by time `t`.
    pub fn delivered_at(&self, side: Side, t: Time) -> u64 {
        let d = &self.app[side.idx()].deliveries;
        let i = d.partition_point(|&(x, _)| x <= t);
        if i == 0 {
            0
        } else {
            d[i - 1].1
        }
    }
    pub fn retransmissions_by(&self, side: Side) -> Vec<&Wire> {
        self.sent_by(side).filter(|w| w.seg.retransmit).collect()
    }
}

/// Drop the first transmission of A's data segments with these indices.
pub fn drop_segments(idx: &'static [u64]) -> impl FnMut(Time, Side, &Segment) -> bool {
    move |_, side, seg| side == Side::A && seg.len > 0 && !seg.retransmit && idx.iter().any(|&k| seg.seq == seg_seq(k))
}
