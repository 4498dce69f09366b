//! A queue and its serialiser: where packets wait, and the discipline that
//! decides which wait, which are dropped and which go next.
//!
//! Two kinds of discipline fit behind the queue element:
//!
//! - a [`Discipline`] decides at arrival and serves in arrival order
//!   (drop-tail, RED, PIE, RIO): the departure of an accepted packet is
//!   then fixed at admission, since nothing arriving later can overtake it,
//!   and the queue keeps only the start-of-service times of the packets
//!   still waiting. No event is spent on the queue itself.
//! - a [`Scheduler`] decides at dequeue (CoDel, round-robin between
//!   classes): the queue holds its packets and the engine wakes it when the
//!   packet in service has left, to serve the next one the scheduler picks.
//!
//! Either way the serialiser sends at the queue's rate (fixed or scheduled),
//! gated by the token buckets ([`crate::Shaper`]) and outages
//! ([`crate::Outages`]) that follow the queue in its path.

mod codel;
mod droptail;
mod fifo;
mod occupancy;
mod pie;
mod red;
mod rio;
mod server;
mod waiting;
mod wrr;

pub use codel::{Codel, CodelParams};
pub use droptail::DropTail;
pub use fifo::Fifo;
pub use occupancy::Occupancy;
pub use pie::{Pie, PieParams};
pub use red::{AdaptiveRed, Red, RedCurve, RedEstimator, RedParams, RedRule, RedVerdict};
pub use rio::{Rio, RioFlavour, RioSpec};
pub(crate) use server::{Server, Transmit};
pub use wrr::{Wrr, WrrClass};

use crate::element::{DropReason, Element, Release, Verdict};
use crate::packet::Packet;
use units::{Dur, Time};
use waiting::Waiting;

/// How much a queue may hold while packets wait for the serialiser. The
/// packet being sent is not counted, as in ns-3's device queue and Linux
/// qdiscs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    Packets(u32),
    Bytes(u64),
}

impl QueueLimit {
    /// Whether `len` more bytes fit beside `packets` and `bytes` waiting.
    #[inline]
    pub fn admits(self, packets: usize, bytes: u64, len: u32) -> bool {
        match self {
            QueueLimit::Packets(n) => (packets as u64) < n as u64,
            QueueLimit::Bytes(b) => bytes + len as u64 <= b,
        }
    }
}

/// The queue as a discipline sees it when a packet arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backlog {
    /// Packets and bytes waiting (not in service).
    pub packets: usize,
    pub bytes: u64,
    /// How long the arriving packet would wait before its service starts
    /// (0: it would go straight into service).
    pub wait: Dur,
    /// Since when the queue has been empty and the serialiser idle, if it is.
    pub idle_since: Option<Time>,
}

/// A discipline's answer for an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    /// Keep it (a discipline that marks sets `Packet::ce` and keeps it).
    Accept,
    Drop(DropReason),
}

/// What an active discipline counts of its own.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AqmStats {
    /// Packets it marked CE instead of dropping.
    pub ecn_marks: u64,
    /// Its congestion estimate (RED's average queue, PIE's drop
    /// probability) summed over the arrivals it saw, and their number.
    pub estimate_sum: f64,
    pub arrivals: u64,
}

impl AqmStats {
    /// The mean of the estimate at arrivals, if it keeps one.
    pub fn mean_estimate(&self) -> Option<f64> {
        (self.arrivals > 0).then(|| self.estimate_sum / self.arrivals as f64)
    }
}

/// A discipline that decides at arrival and serves in arrival order.
pub trait Discipline {
    fn admit(&mut self, now: Time, pkt: &mut Packet, q: &Backlog) -> Admit;

    fn stats(&self) -> AqmStats {
        AqmStats::default()
    }
}

/// A discipline that decides at dequeue.
pub trait Scheduler {
    /// A packet arrives. Packets dropped to make room for it, or it itself
    /// if refused, go to `dropped` with the reason.
    fn enqueue(&mut self, now: Time, pkt: Packet, dropped: &mut Vec<(Packet, DropReason)>);
    /// The packet to serve next, if any, dropping on the way those the
    /// discipline decides to (pushed to `dropped`).
    fn dequeue(&mut self, now: Time, dropped: &mut Vec<(Packet, DropReason)>) -> Option<Packet>;
    /// Packets and bytes held.
    fn backlog(&self) -> (usize, u64);

    fn stats(&self) -> AqmStats {
        AqmStats::default()
    }
}

/// The disciplines a queue can run.
pub enum DisciplineKind {
    DropTail(DropTail),
    /// Any other discipline deciding at arrival.
    Arrival(Box<dyn Discipline + Send>),
    /// Any discipline deciding at dequeue.
    Dequeue(Box<dyn Scheduler + Send>),
}

impl std::fmt::Debug for DisciplineKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DisciplineKind::DropTail(d) => write!(f, "{d:?}"),
            DisciplineKind::Arrival(_) => write!(f, "Arrival(..)"),
            DisciplineKind::Dequeue(_) => write!(f, "Dequeue(..)"),
        }
    }
}

/// Counters kept by a queue, at the moment of admission (or of service,
/// for the waiting time of a scheduled queue).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct QueueStats {
    pub accepted_pkts: u64,
    pub accepted_bytes: u64,
    /// Sum over accepted packets of the time spent waiting for the
    /// serialiser (not counting their own transmission).
    pub queue_delay_sum: Dur,
    /// The most packets waiting at once, for a watched queue
    /// ([`Queue::watch`]); 0 for another.
    pub max_backlog_pkts: u64,
    /// Packets the queue dropped, by reason.
    pub drops: [u64; DropReason::ALL.len()],
    /// What its discipline counts, if it is an active one.
    pub aqm: AqmStats,
}

impl QueueStats {
    pub fn drops(&self, r: DropReason) -> u64 {
        self.drops[r.index()]
    }
}

/// A queue that decides at arrival keeps its state inline; one that
/// decides at dequeue, boxed: most queues of a large run (every host's
/// access) are drop-tail, and stay a few cache lines.
#[derive(Debug)]
enum Mode {
    Fifo(InOrder),
    Scheduled(Box<Scheduled>),
}

/// A queue that serves in arrival order. Its discipline first, so that the
/// mode's and the discipline's tags share the queue's first cache line.
#[derive(Debug)]
#[repr(C)]
struct InOrder {
    discipline: FifoDiscipline,
    waiting: Waiting,
}

#[derive(Debug)]
struct Scheduled {
    scheduler: Box<dyn Scheduler + Send>,
    in_service: Option<(Packet, Time)>,
    pending: Vec<Release>,
    pending_at: Option<Time>,
}

/// What the queue counts of every packet it accepts.
#[derive(Clone, Copy, Debug, Default)]
struct Accepted {
    pkts: u64,
    bytes: u64,
    queue_delay_sum: Dur,
}

enum FifoDiscipline {
    DropTail(DropTail),
    Other(Box<dyn Discipline + Send>),
}

impl std::fmt::Debug for FifoDiscipline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FifoDiscipline::DropTail(d) => write!(f, "{d:?}"),
            FifoDiscipline::Other(_) => write!(f, "Discipline(..)"),
        }
    }
}

impl std::fmt::Debug for dyn Scheduler + Send {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Scheduler(..)")
    }
}

/// A queue and its serialiser: the element.
///
/// In this order, what a packet finding a drop-tail queue idle touches
/// (the serialiser, the end of its service, the counts of accepted
/// packets, the mode's tag) fills the first cache line of a path's
/// element (one inline in a path starts a line, [`crate::path::Path`]):
/// every host's access has a queue, and a run of many hosts finds most of
/// them out of cache.
#[derive(Debug)]
#[repr(C)]
pub struct Queue {
    server: Server,
    /// When the serialiser is done with what it accepted (arrival-order modes).
    busy_until: Time,
    accepted: Accepted,
    mode: Mode,
    /// Boxed, as few packets are dropped at most queues of a large run:
    /// the queue then fills two cache lines exactly, so that an element
    /// inline after it in a path starts a line too.
    drops: Box<[u64; DropReason::ALL.len()]>,
    /// How full the queue was, kept for a watched queue only.
    watch: Option<Box<Occupancy>>,
}

impl Queue {
    pub(crate) fn new(server: Server, discipline: DisciplineKind) -> Queue {
        let mode = match discipline {
            DisciplineKind::DropTail(d) => Mode::Fifo(InOrder { discipline: FifoDiscipline::DropTail(d), waiting: Waiting::default() }),
            DisciplineKind::Arrival(d) => Mode::Fifo(InOrder { discipline: FifoDiscipline::Other(d), waiting: Waiting::default() }),
            DisciplineKind::Dequeue(s) => {
                Mode::Scheduled(Box::new(Scheduled { scheduler: s, in_service: None, pending: Vec::new(), pending_at: None }))
            }
        };
        Queue { server, busy_until: Time::ZERO, accepted: Accepted::default(), mode, drops: Box::default(), watch: None }
    }

    /// Keeps, from now on, the most packets waiting at once per `bin` of
    /// a run of `duration` ([`Queue::occupancy`]) and over the run
    /// (`max_backlog_pkts` in [`Queue::stats`]).
    pub fn watch(&mut self, bin: Dur, duration: Dur) {
        self.watch = Some(Box::new(Occupancy::new(bin, duration)));
    }

    /// The most packets waiting at once per bin, for a watched queue;
    /// bins after the last arrival see the packets still waiting served.
    pub fn occupancy(&self) -> Option<Vec<u32>> {
        let w = self.watch.as_deref()?;
        Some(match &self.mode {
            Mode::Fifo(InOrder { waiting, .. }) => waiting.drained(w).per_bin(),
            Mode::Scheduled(_) => w.per_bin(),
        })
    }

    pub fn stats(&self) -> QueueStats {
        let aqm = match &self.mode {
            Mode::Fifo(InOrder { discipline: FifoDiscipline::Other(d), .. }) => d.stats(),
            Mode::Fifo(_) => AqmStats::default(),
            Mode::Scheduled(s) => s.scheduler.stats(),
        };
        QueueStats {
            accepted_pkts: self.accepted.pkts,
            accepted_bytes: self.accepted.bytes,
            queue_delay_sum: self.accepted.queue_delay_sum,
            max_backlog_pkts: self.watch.as_ref().map_or(0, |w| w.max() as u64),
            drops: *self.drops,
            aqm,
        }
    }

    /// The serialiser's nominal rate (its first, for a schedule).
    pub fn rate(&self) -> units::Rate {
        self.server.nominal_rate()
    }

    pub(crate) fn server_mut(&mut self) -> &mut Server {
        &mut self.server
    }

    /// Packets waiting (not in service) at `now`.
    pub fn backlog_pkts(&mut self, now: Time) -> usize {
        match &mut self.mode {
            Mode::Fifo(InOrder { waiting, .. }) => {
                advance(waiting, now, &mut self.watch);
                waiting.packets()
            }
            Mode::Scheduled(s) => s.scheduler.backlog().0,
        }
    }

    /// Bytes waiting (not in service) at `now`.
    pub fn backlog_bytes(&mut self, now: Time) -> u64 {
        match &mut self.mode {
            Mode::Fifo(InOrder { waiting, .. }) => {
                advance(waiting, now, &mut self.watch);
                waiting.bytes()
            }
            Mode::Scheduled(s) => s.scheduler.backlog().1,
        }
    }

    #[inline(always)]
    fn offer_fifo(&mut self, now: Time, pkt: &mut Packet) -> Verdict {
        let Mode::Fifo(InOrder { discipline, waiting }) = &mut self.mode else { unreachable!() };
        let busy_until = &mut self.busy_until;
        let (start, finish) = self.server.plan(now.max(*busy_until), pkt.len);
        let waits = start > now;
        let admit = match discipline {
            // Drop-tail needs the backlog only for a packet that would wait.
            FifoDiscipline::DropTail(d) if !waits => d.admit_idle(),
            FifoDiscipline::DropTail(d) => {
                advance(waiting, now, &mut self.watch);
                d.admit_waiting(waiting.packets(), waiting.bytes(), pkt.len)
            }
            FifoDiscipline::Other(d) => {
                advance(waiting, now, &mut self.watch);
                let idle = (waiting.packets() == 0 && *busy_until <= now).then_some(*busy_until);
                let q = Backlog { packets: waiting.packets(), bytes: waiting.bytes(), wait: start - now, idle_since: idle };
                d.admit(now, pkt, &q)
            }
        };
        if let Admit::Drop(r) = admit {
            self.drops[r.index()] += 1;
            return Verdict::Drop(r);
        }
        if waits {
            waiting.push(start, pkt.len);
            if let Some(w) = &mut self.watch {
                w.changed(now, waiting.packets());
            }
        }
        *busy_until = finish;
        self.server.sent(finish, pkt.len);
        pkt.queued = waits;
        pkt.tx = finish - start;
        pkt.enqueued_at = now;
        self.accepted.pkts += 1;
        self.accepted.bytes += pkt.len as u64;
        self.accepted.queue_delay_sum += start - now;
        Verdict::Deliver(finish)
    }

    fn offer_scheduled(&mut self, now: Time, pkt: &mut Packet) -> Verdict {
        let Mode::Scheduled(s) = &mut self.mode else { unreachable!() };
        let Scheduled { scheduler, in_service, pending, pending_at } = &mut **s;
        pkt.enqueued_at = now;
        let mut dropped = Vec::new();
        scheduler.enqueue(now, *pkt, &mut dropped);
        let mut verdict = Verdict::Hold;
        for (p, r) in dropped {
            self.drops[r.index()] += 1;
            if p.id == pkt.id && verdict == Verdict::Hold {
                verdict = Verdict::Drop(r);
            } else {
                pending.push(Release::Drop(p, r));
                *pending_at = Some(now);
            }
        }
        if verdict == Verdict::Hold {
            self.accepted.pkts += 1;
            self.accepted.bytes += pkt.len as u64;
        }
        if in_service.is_none() {
            self.start_next(now);
        }
        self.saw_scheduled(now);
        verdict
    }

    /// Serves the next packet the scheduler picks, if the serialiser is free.
    fn start_next(&mut self, now: Time) {
        let Mode::Scheduled(s) = &mut self.mode else { return };
        let Scheduled { scheduler, in_service, pending, pending_at } = &mut **s;
        let mut dropped = Vec::new();
        if let Some(mut p) = scheduler.dequeue(now, &mut dropped) {
            let (start, finish) = self.server.plan(now, p.len);
            self.server.sent(finish, p.len);
            p.queued = start > p.enqueued_at;
            p.tx = finish - start;
            self.accepted.queue_delay_sum += start - p.enqueued_at;
            *in_service = Some((p, finish));
        }
        let taken = !dropped.is_empty() || in_service.is_some();
        if !dropped.is_empty() {
            for (_, r) in &dropped {
                self.drops[r.index()] += 1;
            }
            pending.extend(dropped.into_iter().map(|(p, r)| Release::Drop(p, r)));
            *pending_at = Some(now);
        }
        if taken {
            self.saw_scheduled(now);
        }
    }

    /// Tells a watched scheduled queue's occupancy what waits at `now`.
    fn saw_scheduled(&mut self, now: Time) {
        if let (Some(w), Mode::Scheduled(s)) = (&mut self.watch, &self.mode) {
            w.changed(now, s.scheduler.backlog().0);
        }
    }
}

/// Forgets the packets of `waiting` whose service has started by `now`,
/// telling a watched queue's occupancy of each.
#[inline(always)]
fn advance(waiting: &mut Waiting, now: Time, watch: &mut Option<Box<Occupancy>>) {
    match watch {
        None => waiting.advance(now),
        Some(w) => waiting.advance_seen(now, w),
    }
}

impl Element for Queue {
    #[inline(always)]
    fn offer(&mut self, now: Time, pkt: &mut Packet) -> Verdict {
        match self.mode {
            Mode::Fifo(_) => self.offer_fifo(now, pkt),
            Mode::Scheduled(_) => self.offer_scheduled(now, pkt),
        }
    }

    fn poll_at(&self) -> Option<Time> {
        match &self.mode {
            Mode::Fifo(_) => None,
            Mode::Scheduled(s) => match (&s.pending_at, &s.in_service) {
                (Some(a), Some((_, b))) => Some((*a).min(*b)),
                (a, b) => a.or(b.map(|(_, t)| t)),
            },
        }
    }

    fn wake(&mut self, now: Time, out: &mut Vec<Release>) {
        loop {
            let Mode::Scheduled(s) = &mut self.mode else { return };
            let Scheduled { in_service, pending, pending_at, .. } = &mut **s;
            out.append(pending);
            *pending_at = None;
            match *in_service {
                Some((p, finish)) if finish <= now => {
                    *in_service = None;
                    out.push(Release::Pass(p));
                    self.start_next(finish);
                }
                _ => return,
            }
        }
    }

    #[inline]
    fn passive(&self) -> bool {
        matches!(self.mode, Mode::Fifo(_))
    }
}

#[cfg(test)]
mod tests;
