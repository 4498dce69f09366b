//! The core: one thread that reads every namespace's TUN, runs each packet
//! through the fabric's paths (the same elements the simulator runs) on
//! CLOCK_MONOTONIC, and writes it to its destination's TUN when it is due.
//!
//! Times given to the fabric are monotone: a packet read from a TUN enters
//! at the instant it was read; an event (a packet reaching the end of a
//! path or an element, a path's wake-up) is handled at the instant it was
//! scheduled for, before anything read later. So the elements compute
//! exactly what they compute in the simulator, and only the final write
//! can be late: the core measures by how much ([`Lateness`]). What the
//! core itself adds to every crossing (reading, writing, waking) it
//! measures at start-up and takes off each packet's route ([`Advance`]).

use crate::flows::Flows;
use crate::lateness::Lateness;
use crate::network::Network;
use crate::overhead::{Advance, Overhead};
use crate::spin::SpinBudget;
use crate::sys;
use net::fabric::{Fabric, HostId, Next};
use net::monitor::Monitor;
use net::{DropReason, Packet};
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use units::{Dur, Time};
use wire::{LinkType, Transport};

/// The largest packet a TUN hands over (its MTU is 1500).
const BUF_LEN: usize = 2048;
/// Packets read from one TUN before the core looks at its clock again.
const READ_BATCH: usize = 64;
/// The longest the core sleeps without checking whether it should stop.
const IDLE_WAIT_MS: i32 = 20;
const TIMER_TOKEN: u64 = u64::MAX;

/// How the core waits for a departure.
#[derive(Clone, Copy, Debug)]
pub struct CoreConfig {
    /// Wake this long before a departure and spin to it: the kernel wakes
    /// a sleeper some tens of microseconds late. Zero sleeps all the way.
    pub spin: Dur,
    /// Run the core under SCHED_FIFO at this priority (0: as an ordinary
    /// thread), so that the programs (ordinary threads) and generators
    /// (SCHED_FIFO below it) it serves cannot delay its departures. It
    /// sleeps between departures, so it takes the CPU only when one is due.
    pub realtime: i32,
    /// The share of its CPU beyond which the core stops spinning for a
    /// while ([`SpinBudget`]), so that the kernel never has to stop it.
    pub spin_share: f64,
}

impl Default for CoreConfig {
    fn default() -> Self {
        CoreConfig { spin: Dur::from_micros(50), realtime: 50, spin_share: 0.75 }
    }
}

/// What the core did.
#[derive(Clone, Debug, Default)]
pub struct CoreStats {
    /// Packets read from the TUNs.
    pub read: u64,
    /// Packets written to their destination's TUN.
    pub delivered: u64,
    /// Packets the paths dropped: loss, queue full, early, forced.
    pub dropped: [u64; 4],
    /// Packets with an address no host of the run has (or not IP).
    pub unroutable: u64,
    /// Writes the destination's kernel refused.
    pub write_errors: u64,
    /// Each delivery's lateness against its departure time.
    pub lateness: Lateness,
    /// CPU time of the core's thread, and the wall time it ran.
    pub cpu_ns: u64,
    pub wall_ns: u64,
    /// Windows of [`crate::spin::WINDOW_NS`] in which the core slept all
    /// the way to its departures, its CPU share having passed `spin_share`.
    pub spin_withheld: u64,
}

fn reason_index(r: DropReason) -> usize {
    match r {
        DropReason::Loss => 0,
        DropReason::QueueFull => 1,
        DropReason::Early => 2,
        DropReason::Forced => 3,
    }
}

/// A packet's bytes and what the paths see of it.
struct Buf {
    data: Box<[u8; BUF_LEN]>,
    len: usize,
    src: HostId,
    dst: HostId,
    meta: Packet,
    /// Its TCP header, if it is a TCP segment.
    tcp: Option<wire::TcpInfo>,
    /// Whether no path has taken the core's overhead off it yet.
    owes: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Arrive { path: u32, buf: u32 },
    Resume { path: u32, buf: u32, stage: u32 },
    Wake { path: u32 },
}

/// Something the core saw on an observed path.
pub trait Observer {
    /// A packet reached the end of observed path `monitor` at `at`.
    fn arrived(&mut self, monitor: u8, at: Time, ip: &[u8]);
    /// The run is over: write out what is buffered.
    fn finish(self: Box<Self>) -> io::Result<()>;
}

/// The core of one run.
pub struct Core {
    fabric: Fabric,
    hosts: FxHashMap<IpAddr, HostId>,
    /// The space (TUN) each host lives in.
    host_space: Vec<u32>,
    /// Each space's TUN, while running.
    tuns: Vec<i32>,
    heap: BinaryHeap<Reverse<(Time, u64, Ev)>>,
    seq: u64,
    bufs: Vec<Buf>,
    free: Vec<u32>,
    wake_at: Vec<Option<Time>>,
    released: Vec<(Packet, Next)>,
    /// The observed paths' series (monitor number order), if kept.
    pub monitors: Vec<Monitor>,
    pub observer: Option<Box<dyn Observer + Send>>,
    /// Per-connection records, if kept.
    pub flows: Option<Flows>,
    pub stats: CoreStats,
    cfg: CoreConfig,
    /// CLOCK_MONOTONIC at the core's time zero.
    origin_ns: u64,
    /// The core's own one-way overhead, as measured, and its removal.
    pub overhead: Overhead,
    advance: Advance,
}

impl Core {
    /// A core for `fabric`, whose host `i` has address `hosts[i].0` and
    /// lives in space `hosts[i].1` of the network it will run; its time
    /// zero is `origin_ns` on CLOCK_MONOTONIC.
    pub fn new(fabric: Fabric, hosts: &[(IpAddr, u32)], cfg: CoreConfig, origin_ns: u64) -> Core {
        assert_eq!(hosts.len(), fabric.hosts.len(), "one address per host of the fabric");
        let wake_at = vec![None; fabric.paths.len()];
        let advance = Advance::new(Dur::ZERO, &fabric.specs);
        Core {
            hosts: hosts.iter().enumerate().map(|(i, (a, _))| (*a, i as HostId)).collect(),
            host_space: hosts.iter().map(|h| h.1).collect(),
            fabric,
            tuns: Vec::new(),
            heap: BinaryHeap::new(),
            seq: 0,
            bufs: Vec::new(),
            free: Vec::new(),
            wake_at,
            released: Vec::new(),
            monitors: Vec::new(),
            observer: None,
            flows: None,
            stats: CoreStats::default(),
            cfg,
            origin_ns,
            overhead: Overhead::default(),
            advance,
        }
    }

    /// Takes `overhead` (measured by [`crate::overhead::calibrate`]) off
    /// every packet's route from now on.
    pub fn set_overhead(&mut self, overhead: Overhead) {
        self.advance = Advance::new(overhead.correction(), &self.fabric.specs);
        self.overhead = overhead;
    }

    /// What the core takes off each packet's route.
    pub fn correction(&self) -> Dur {
        self.advance.by()
    }

    pub fn fabric(&self) -> &Fabric {
        &self.fabric
    }

    /// The core's clock.
    pub fn now(&self) -> Time {
        Time(sys::monotonic_ns().saturating_sub(self.origin_ns))
    }

    /// Forwards until `stop` is set or the clock reaches `until`.
    pub fn run(&mut self, net: &Network, until: Option<Time>, stop: &AtomicBool) -> io::Result<()> {
        let tuns: Vec<i32> = net.spaces.iter().map(|s| s.tun()).collect();
        self.tuns = tuns.clone();
        if let Some(&s) = self.host_space.iter().find(|&&s| s as usize >= tuns.len()) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("a host lives in space {s}; the network has {}", tuns.len())));
        }
        let _ = sys::set_timer_slack_ns(1);
        if self.cfg.realtime > 0 {
            // Without the privilege the core runs as an ordinary thread;
            // its lateness histogram shows what that costs.
            let _ = sys::set_realtime(self.cfg.realtime);
        }
        let epoll = sys::Epoll::new()?;
        let timer = sys::TimerFd::new()?;
        for (i, &fd) in tuns.iter().enumerate() {
            epoll.add(fd, i as u64)?;
        }
        epoll.add(timer.raw(), TIMER_TOKEN)?;
        let (cpu0, wall0) = (sys::thread_cpu_ns(), sys::monotonic_ns());
        let mut ready = Vec::new();
        let mut armed = None;
        let mut budget = SpinBudget::new(self.cfg.spin_share);
        loop {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let now = self.now();
            if until.is_some_and(|u| now >= u) {
                break;
            }
            self.run_due(now);
            let mut got = 0;
            for &fd in &tuns {
                got += self.read_from(fd, self.now())?;
            }
            if got > 0 {
                continue;
            }
            let now = self.now();
            let next = self.heap.peek().map(|Reverse((t, _, _))| *t);
            let spin = if budget.may_spin(now.0, sys::thread_cpu_ns) { self.cfg.spin } else { Dur::ZERO };
            match next {
                Some(t) if t <= now + spin => {
                    // Close to a departure: poll the TUNs until it is due.
                    while self.now() < t {
                        let mut got = 0;
                        for &fd in &tuns {
                            got += self.read_from(fd, self.now())?;
                        }
                        if got > 0 {
                            break;
                        }
                        std::hint::spin_loop();
                    }
                }
                _ => {
                    let wake = next.map(|t| t - spin);
                    let mut timeout = IDLE_WAIT_MS;
                    if let Some(w) = wake {
                        if armed != Some(w) {
                            timer.set(self.origin_ns + w.0)?;
                            armed = Some(w);
                        }
                        // The timer ends the wait; the timeout only bounds
                        // how long a stop request can go unseen.
                        timeout = IDLE_WAIT_MS.min(((w.0 - now.0) / 1_000_000) as i32 + 1);
                    }
                    epoll.wait(&mut ready, timeout)?;
                    if ready.contains(&TIMER_TOKEN) {
                        timer.clear();
                        armed = None;
                    }
                }
            }
        }
        self.stats.spin_withheld += budget.withheld;
        self.stats.cpu_ns += sys::thread_cpu_ns() - cpu0;
        self.stats.wall_ns += sys::monotonic_ns() - wall0;
        Ok(())
    }

    /// Handles every event due by `now`, in order, each at its own time.
    fn run_due(&mut self, now: Time) {
        while let Some(&Reverse((t, _, ev))) = self.heap.peek() {
            if t > now {
                break;
            }
            self.heap.pop();
            match ev {
                Ev::Arrive { path, buf } => self.arrive(t, path, buf),
                Ev::Resume { path, buf, stage } => {
                    let (src, mut m) = (self.bufs[buf as usize].src, self.bufs[buf as usize].meta);
                    let next = self.fabric.resume(t, path, stage, src, &mut m);
                    self.carry_mark(&m);
                    self.next(t, buf, next);
                }
                Ev::Wake { path } => self.wake(t, path),
            }
        }
    }

    fn push(&mut self, at: Time, ev: Ev) {
        self.seq += 1;
        self.heap.push(Reverse((at, self.seq, ev)));
    }

    /// Reads what `fd` has waiting (a batch at most); how many packets.
    fn read_from(&mut self, fd: i32, now: Time) -> io::Result<usize> {
        for n in 0..READ_BATCH {
            let idx = self.alloc();
            let len = match sys::read(fd, &mut self.bufs[idx as usize].data[..]) {
                Ok(Some(len)) => len,
                Ok(None) => {
                    self.free.push(idx);
                    return Ok(n);
                }
                Err(e) => {
                    self.free.push(idx);
                    return Err(e);
                }
            };
            self.stats.read += 1;
            if !self.classify(idx, len) {
                self.stats.unroutable += 1;
                self.free.push(idx);
                continue;
            }
            let b = &self.bufs[idx as usize];
            let (src, mut m) = (b.src, b.meta);
            if let (Some(f), Some(t)) = (&mut self.flows, &b.tcp) {
                f.sent(now, src, b.dst, t);
            }
            let next = self.fabric.send(now, src, &mut m);
            self.carry_mark(&m);
            self.next(now, idx, next);
        }
        Ok(READ_BATCH)
    }

    fn alloc(&mut self) -> u32 {
        match self.free.pop() {
            Some(i) => i,
            None => {
                let meta = Packet::new(0, 0);
                self.bufs.push(Buf { data: Box::new([0; BUF_LEN]), len: 0, src: 0, dst: 0, meta, tcp: None, owes: false });
                (self.bufs.len() - 1) as u32
            }
        }
    }

    /// Reads buffer `idx`'s headers: its hosts and what paths see of it.
    /// False if it is not between two hosts of the run.
    fn classify(&mut self, idx: u32, len: usize) -> bool {
        let b = &mut self.bufs[idx as usize];
        b.len = len;
        let Ok(info) = wire::decode(LinkType::RAW, &b.data[..len], len as u32) else {
            return false;
        };
        let (Some(&src), Some(&dst)) = (self.hosts.get(&info.ip.src), self.hosts.get(&info.ip.dst)) else {
            return false;
        };
        b.tcp = None;
        let (sport, dport, syn) = match info.transport {
            Transport::Tcp(t) => {
                b.tcp = Some(t);
                (t.src_port, t.dst_port, t.flags.syn())
            }
            Transport::Udp(u) => (u.src_port, u.dst_port, false),
            _ => (0, 0, false),
        };
        let mut m = Packet::new(idx, len as u32);
        m.flow = Packet::flow_of(src, dst, sport, dport);
        m.handshake = syn;
        m.ecn_capable = info.ip.ecn != wire::NOT_ECT;
        m.ce = info.ip.ecn == wire::CE;
        b.src = src;
        b.dst = dst;
        b.meta = m;
        b.owes = true;
        true
    }

    /// Does what the fabric says comes next for buffer `buf` at `now`.
    fn next(&mut self, now: Time, buf: u32, next: Next) {
        match next {
            Next::Arrive { path, at } => {
                let at = self.advance.end_of_path(path, now, at, &mut self.bufs[buf as usize].owes);
                self.push(at, Ev::Arrive { path, buf })
            }
            Next::Resume { path, stage, at } => self.push(at, Ev::Resume { path, buf, stage }),
            Next::Held { path } => self.rearm(now, path),
            Next::Dropped { path, reason, at } => {
                if let Some(m) = self.fabric.paths[path as usize].monitor {
                    if let Some(mon) = self.monitors.get_mut(m as usize) {
                        mon.dropped(at);
                    }
                }
                self.stats.dropped[reason_index(reason)] += 1;
                self.free.push(buf);
            }
            Next::Deliver { host } => {
                let b = &self.bufs[buf as usize];
                let fd = self.tuns[self.host_space[host as usize] as usize];
                match sys::write(fd, &b.data[..b.len]) {
                    Ok(_) => self.stats.delivered += 1,
                    Err(_) => self.stats.write_errors += 1,
                }
                if let (Some(f), Some(t)) = (&mut self.flows, &b.tcp) {
                    f.arrived(now, b.src, b.dst, t);
                }
                let late = self.now().0.saturating_sub(now.0);
                self.stats.lateness.record(late);
                self.free.push(buf);
            }
        }
    }

    fn arrive(&mut self, t: Time, path: u32, buf: u32) {
        let b = &self.bufs[buf as usize];
        if let Some(m) = self.fabric.paths[path as usize].monitor {
            if let Some(mon) = self.monitors.get_mut(m as usize) {
                mon.arrived(t, b.len as u32);
            }
            if let Some(o) = &mut self.observer {
                o.arrived(m, t, &b.data[..b.len]);
            }
        }
        let (src, dst, meta) = (b.src, b.dst, b.meta);
        let (next, ce) = self.fabric.arrived(t, path, src, dst, || meta);
        if ce {
            self.carry_mark(&Packet { ce, ..meta });
        }
        self.next(t, buf, next);
    }

    /// A queue marked what it saw of a packet CE: mark the packet itself, in its
    /// IP header (the checksum kept valid), as a router does.
    #[inline]
    fn carry_mark(&mut self, m: &Packet) {
        let b = &mut self.bufs[m.id as usize];
        if m.ce && !b.meta.ce {
            b.meta.ce = true;
            wire::set_ecn(&mut b.data[..b.len], wire::CE);
        }
    }

    /// Keeps one pending wake-up per path, at its elements' earliest.
    fn rearm(&mut self, now: Time, path: u32) {
        if let Some(t) = self.fabric.poll_at(path) {
            let t = t.max(now);
            let w = &mut self.wake_at[path as usize];
            if w.is_none_or(|w| t < w) {
                *w = Some(t);
                self.push(t, Ev::Wake { path });
            }
        }
    }

    fn wake(&mut self, t: Time, path: u32) {
        if self.wake_at[path as usize] != Some(t) {
            return; // superseded by an earlier wake-up
        }
        self.wake_at[path as usize] = None;
        let mut released = std::mem::take(&mut self.released);
        self.fabric.wake(t, path, &mut released);
        for (m, next) in released.drain(..) {
            self.carry_mark(&m);
            self.next(t, m.id, next);
        }
        self.released = released;
        self.rearm(t, path);
    }
}
