//! Propagation delay, fixed or following a schedule.

use crate::element::{Element, Verdict};
use crate::packet::Packet;
use crate::schedule::Schedule;
use units::{Dur, Time};

/// Propagation delay. A scheduled delay is the value at the instant a
/// packet enters; packets keep their order (a packet never overtakes one
/// that entered before it when the delay falls), as a path's queue would.
#[derive(Clone, Debug)]
pub enum Delay {
    Fixed(Dur),
    Scheduled { delays: Schedule<Dur>, last_out: Time },
}

impl Delay {
    pub fn fixed(d: Dur) -> Delay {
        Delay::Fixed(d)
    }

    pub fn scheduled(delays: Schedule<Dur>) -> Delay {
        Delay::Scheduled { delays, last_out: Time::ZERO }
    }
}

impl Element for Delay {
    #[inline]
    fn offer(&mut self, now: Time, _pkt: &mut Packet) -> Verdict {
        match self {
            Delay::Fixed(d) => Verdict::Deliver(now + *d),
            Delay::Scheduled { delays, last_out } => {
                *last_out = (*last_out).max(now + delays.at(now).0);
                Verdict::Deliver(*last_out)
            }
        }
    }
}
