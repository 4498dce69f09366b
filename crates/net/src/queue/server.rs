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

/// What may hold a packet back from starting: token buckets and outages.
#[derive(Clone, Debug, Default)]
struct Gates {
    buckets: Vec<Bucket>,
    outages: Option<Outages>,
}

/// The serialiser: its rate, and what may hold a packet back from starting
/// (token buckets, outages). Integer nanoseconds throughout, so both
/// engines agree exactly. The gates, which few queues have, are boxed so
/// that the tens of thousands of access queues of a large run stay small.
#[derive(Clone, Debug)]
pub(crate) struct Server {
    transmit: Transmit,
    gates: Option<Box<Gates>>,
}

impl Server {
    pub(crate) fn new(transmit: Transmit) -> Server {
        Server { transmit, gates: None }
    }

    fn gates(&mut self) -> &mut Gates {
        self.gates.get_or_insert_with(Default::default)
    }

    pub(crate) fn add_shaper(&mut self, s: Shaper) {
        self.gates().buckets.push(Bucket::new(s));
    }

    /// Outages of the path after the queue: several merge into one set of windows.
    pub(crate) fn set_outages(&mut self, o: Outages) {
        self.gates().outages = Some(o);
    }

    pub(crate) fn has_outages(&self) -> bool {
        self.gates.as_ref().is_some_and(|g| g.outages.is_some())
    }

    pub(crate) fn nominal_rate(&self) -> Rate {
        match &self.transmit {
            Transmit::Rate(r) => *r,
            Transmit::Schedule(s) => s.at(Time::ZERO).0,
        }
    }

    /// When a packet of `len` bytes that could start at `from` starts and
    /// has its last bit out. Its last bit leaves once every bucket holds the
    /// packet, and not in an outage.
    #[inline(always)]
    pub(crate) fn plan(&self, from: Time, len: u32) -> (Time, Time) {
        let tx = match &self.transmit {
            Transmit::Rate(r) => r.tx_time(len as u64),
            Transmit::Schedule(s) => s.finish(from, len) - from,
        };
        let mut start = from;
        if let Some(g) = &self.gates {
            for b in &g.buckets {
                let ready = b.ready(len);
                if ready > start + tx {
                    start = ready - tx;
                }
            }
            if let Some(o) = &g.outages {
                start = o.resume(start);
            }
        }
        let finish = match &self.transmit {
            Transmit::Rate(_) => start + tx,
            Transmit::Schedule(s) => s.finish(start, len),
        };
        (start, finish)
    }

    /// A packet of `len` bytes had its last bit out at `finish`.
    #[inline(always)]
    pub(crate) fn sent(&mut self, finish: Time, len: u32) {
        if let Some(g) = &mut self.gates {
            for b in &mut g.buckets {
                b.sent(finish, len);
            }
        }
    }
}
