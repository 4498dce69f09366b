//! The serialiser of a queue and the gates on it.

use crate::outage::Outages;
use crate::schedule::RateSchedule;
use crate::shaper::{Bucket, Shaper};
use units::{Rate, Time};

/// How fast the serialiser sends.
#[derive(Clone, Debug, PartialEq)]
pub enum Transmit {
    Rate(Rate),
    /// A rate that follows a schedule (a time-varying link), boxed: most
    /// links have a fixed rate, and every host's access has a queue.
    Schedule(Box<RateSchedule>),
}

/// What few serialisers have: a rate that follows a schedule, and what may
/// hold a packet back from starting (token buckets, outages).
#[derive(Clone, Debug)]
pub(crate) struct Rare {
    /// The rate, or the schedule's first.
    rate: Rate,
    schedule: Option<RateSchedule>,
    buckets: Vec<Bucket>,
    outages: Option<Outages>,
}

/// The serialiser: its rate, and what may hold a packet back from starting
/// (token buckets, outages). Integer nanoseconds throughout, so both
/// engines agree exactly. A rate schedule and the gates, which few queues
/// have, are boxed so that the tens of thousands of access queues of a
/// large run stay small; the variant's tag leaves the queue's first word
/// room for the tag of the element it is.
#[derive(Clone, Debug)]
pub(crate) enum Server {
    Fixed(Rate),
    Rare(Box<Rare>),
}

impl Server {
    pub(crate) fn new(transmit: Transmit) -> Server {
        match transmit {
            Transmit::Rate(r) => Server::Fixed(r),
            Transmit::Schedule(s) => {
                Server::Rare(Box::new(Rare { rate: s.at(Time::ZERO).0, schedule: Some(*s), buckets: Vec::new(), outages: None }))
            }
        }
    }

    fn rare(&mut self) -> &mut Rare {
        if let Server::Fixed(rate) = *self {
            *self = Server::Rare(Box::new(Rare { rate, schedule: None, buckets: Vec::new(), outages: None }));
        }
        match self {
            Server::Rare(g) => g,
            Server::Fixed(_) => unreachable!("made rare above"),
        }
    }

    pub(crate) fn add_shaper(&mut self, s: Shaper) {
        self.rare().buckets.push(Bucket::new(s));
    }

    /// Outages of the path after the queue: several merge into one set of windows.
    pub(crate) fn set_outages(&mut self, o: Outages) {
        self.rare().outages = Some(o);
    }

    pub(crate) fn has_outages(&self) -> bool {
        matches!(self, Server::Rare(g) if g.outages.is_some())
    }

    pub(crate) fn nominal_rate(&self) -> Rate {
        match self {
            Server::Fixed(r) => *r,
            Server::Rare(g) => g.rate,
        }
    }

    /// When a packet of `len` bytes that could start at `from` starts and
    /// has its last bit out. Its last bit leaves once every bucket holds the
    /// packet, and not in an outage.
    #[inline(always)]
    pub(crate) fn plan(&self, from: Time, len: u32) -> (Time, Time) {
        let g = match self {
            Server::Fixed(r) => return (from, from + r.tx_time(len as u64)),
            Server::Rare(g) => g,
        };
        let tx = match &g.schedule {
            None => g.rate.tx_time(len as u64),
            Some(s) => s.finish(from, len) - from,
        };
        let mut start = from;
        for b in &g.buckets {
            let ready = b.ready(len);
            if ready > start + tx {
                start = ready - tx;
            }
        }
        if let Some(o) = &g.outages {
            start = o.resume(start);
        }
        let finish = match &g.schedule {
            None => start + tx,
            Some(s) => s.finish(start, len),
        };
        (start, finish)
    }

    /// A packet of `len` bytes had its last bit out at `finish`.
    #[inline(always)]
    pub(crate) fn sent(&mut self, finish: Time, len: u32) {
        if let Server::Rare(g) = self {
            for b in &mut g.buckets {
                b.sent(finish, len);
            }
        }
    }
}
