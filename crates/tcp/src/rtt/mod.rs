//! The retransmission timer: which estimator runs it.

mod rfc6298;
mod ticks;

use rfc6298::RttEstimator;
use ticks::TickRto;
use units::{Dur, Time};

#[derive(Clone, Debug)]
pub(crate) enum Rto {
    /// RFC 6298 in nanoseconds, a sample from every ACK Karn's rule allows (Linux).
    Rfc6298(RttEstimator),
    /// ns-2's coarse clock: one timed segment per round trip, counted in ticks
    /// (boxed: larger than the other, and seldom used).
    Ticks(Box<TickRto>),
}

impl Rto {
    /// `tick`: `None` for RFC 6298, `Some` for ns-2's estimator with that clock.
    pub fn new(tick: Option<Dur>, initial: Dur, min: Dur, max: Dur) -> Rto {
        match tick {
            None => Rto::Rfc6298(RttEstimator::new(initial, min, max)),
            Some(t) => Rto::Ticks(Box::new(TickRto::new(t, initial, min, max))),
        }
    }

    /// The handshake's round trip (the SYN is the first timed segment in both).
    pub fn sample_syn(&mut self, sent: Time, now: Time) {
        match self {
            Rto::Rfc6298(e) => e.sample(now - sent),
            Rto::Ticks(e) => e.sample_between(sent, now),
        }
    }

    /// New data up to `end` left at `now` (only the tick estimator times it).
    #[inline]
    pub fn on_send(&mut self, now: Time, end: u64) {
        if let Rto::Ticks(e) = self {
            e.on_send(now, end);
        }
    }

    /// An ACK advanced snd_una to `ack`; `karn` is the send time of the newest
    /// never-retransmitted segment it covers. Returns the sample taken, if any.
    pub fn on_ack(&mut self, now: Time, ack: u64, karn: Option<Time>) -> Option<Dur> {
        match self {
            Rto::Rfc6298(e) => karn.map(|t| {
                e.sample(now - t);
                now - t
            }),
            Rto::Ticks(e) => e.on_ack(now, ack),
        }
    }

    /// A fast retransmit or timeout: ns-2 abandons the segment being timed.
    pub fn cancel_timing(&mut self) {
        if let Rto::Ticks(e) = self {
            e.cancel_timing();
        }
    }

    /// RFC 6298 §5.7: after a timed-out SYN, 3 s until a sample (RFC estimator only;
    /// ns-2 already starts from its 3 s `rtxcur_init_`).
    pub fn syn_timed_out(&mut self) {
        if let Rto::Rfc6298(e) = self {
            e.syn_timed_out();
        }
    }

    pub fn rto(&self) -> Dur {
        match self {
            Rto::Rfc6298(e) => e.rto(),
            Rto::Ticks(e) => e.rto(),
        }
    }

    /// ns-3's `NewAck`: an ACK of new data recomputes the RTO from the estimate, so
    /// the backoff ends without an RTT sample.
    pub fn end_backoff(&mut self) {
        match self {
            Rto::Rfc6298(e) => e.end_backoff(),
            Rto::Ticks(e) => e.end_backoff(),
        }
    }

    pub fn back_off(&mut self) {
        match self {
            Rto::Rfc6298(e) => e.back_off(),
            Rto::Ticks(e) => e.back_off(),
        }
    }

    pub fn srtt(&self) -> Option<Dur> {
        match self {
            Rto::Rfc6298(e) => e.srtt(),
            Rto::Ticks(e) => e.srtt(),
        }
    }
}
