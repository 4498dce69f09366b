//! The retransmission timer: which estimator runs it, and which RTT samples it takes.

mod linux;
mod rfc6298;
mod ticks;

use crate::RtoEstimator;
use linux::LinuxRto;
use rfc6298::RttEstimator;
use ticks::TickRto;
use units::{Dur, Time};

#[derive(Clone, Debug)]
pub(crate) enum Rto {
    /// Linux's estimator in µs: RTO = SRTT + max(deviation, `min_rto`).
    Linux(LinuxRto),
    /// RFC 6298 in nanoseconds, a sample from every ACK Karn's rule allows (boxed, as
    /// the next: larger than Linux's, and chosen only by name or by the ns-3 flavour).
    Rfc6298(Box<RttEstimator>),
    /// ns-2's coarse clock: one timed segment per round trip, counted in ticks.
    Ticks(Box<TickRto>),
}

/// What one ACK tells about round-trip times: the send times of the segments it newly
/// delivered that were never retransmitted (Karn's rule), and the timestamp echo.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Samples {
    /// The earliest and the latest cumulatively acknowledged, unless the ACK also covered
    /// a retransmitted segment; the earliest leaves out segments SACKed before.
    pub acked_first: Option<Time>,
    pub acked_last: Option<Time>,
    /// The earliest and the latest newly SACKed.
    pub sacked_first: Option<Time>,
    pub sacked_last: Option<Time>,
    /// Now minus the echoed TSval (ms resolution), for an ACK that advanced snd_una.
    pub ts_echo: Option<Dur>,
    /// snd_una after the ACK, and snd_nxt.
    pub una: u64,
    pub nxt: u64,
}

impl Rto {
    /// `tick`: ns-2's estimator with that clock; otherwise `kind`.
    pub fn new(kind: RtoEstimator, tick: Option<Dur>, initial: Dur, min: Dur, max: Dur) -> Rto {
        match (tick, kind) {
            (Some(t), _) => Rto::Ticks(Box::new(TickRto::new(t, initial, min, max))),
            (None, RtoEstimator::Linux) => Rto::Linux(LinuxRto::new(initial, min, max)),
            (None, RtoEstimator::Rfc6298) => Rto::Rfc6298(Box::new(RttEstimator::new(initial, min, max))),
        }
    }

    /// The handshake's round trip (the SYN is the first timed segment in all), measured
    /// when snd_nxt is `nxt`.
    pub fn sample_syn(&mut self, sent: Time, now: Time, nxt: u64) {
        match self {
            Rto::Linux(e) => e.sample(now - sent, 0, nxt),
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

    /// An ACK with `s`, which advanced snd_una to `ack` if `advanced`. Returns the
    /// sample congestion control takes, if any. `keep_backoff`: the tick estimator's
    /// sample leaves its backoff as it is (ns-2 backing off on ECN-Echo).
    pub fn on_ack(&mut self, now: Time, ack: u64, advanced: bool, s: &Samples, keep_backoff: bool) -> Option<Dur> {
        match self {
            // Linux (`tcp_ack_update_rtt`): the estimator takes the oldest segment
            // delivered (cumulatively, else by SACK, else the timestamp echo), so as
            // not to shorten the timeout; congestion control the newest.
            Rto::Linux(e) => {
                let since = |t: Time| now - t;
                let seq = s.acked_first.or(s.sacked_first).map(since).or(s.ts_echo.filter(|_| advanced));
                let ca = s.sacked_last.or(s.acked_last).map(since).or(seq);
                if let Some(r) = seq {
                    e.sample(r, s.una, s.nxt);
                }
                ca
            }
            Rto::Rfc6298(e) => s.acked_last.filter(|_| advanced).map(|t| {
                e.sample(now - t);
                now - t
            }),
            Rto::Ticks(e) => advanced.then(|| e.on_ack(now, ack, keep_backoff)).flatten(),
        }
    }

    /// A fast retransmit or timeout: ns-2 abandons the segment being timed.
    pub fn cancel_timing(&mut self) {
        if let Rto::Ticks(e) = self {
            e.cancel_timing();
        }
    }

    /// Whether the estimator takes a timestamp echo as a sample (Linux's does, where
    /// Karn's rule allows none).
    pub fn samples_echoes(&self) -> bool {
        matches!(self, Rto::Linux(_))
    }

    /// RFC 6298 §5.7 (Linux's `TCP_TIMEOUT_FALLBACK`): after a timed-out SYN, 3 s until
    /// a sample (ns-2 already starts from its 3 s `rtxcur_init_`).
    pub fn syn_timed_out(&mut self) {
        match self {
            Rto::Linux(e) => e.syn_timed_out(),
            Rto::Rfc6298(e) => e.syn_timed_out(),
            Rto::Ticks(_) => {}
        }
    }

    /// When a timer armed at `now` for `delay` runs: on Linux's timer wheel with Linux's
    /// estimator, exactly then with the others.
    pub fn timer_at(&self, now: Time, delay: Dur) -> Time {
        match self {
            Rto::Linux(_) => crate::jiffies::timer_at(now, delay),
            Rto::Rfc6298(_) | Rto::Ticks(_) => now + delay,
        }
    }

    pub fn rto(&self) -> Dur {
        match self {
            Rto::Linux(e) => e.rto(),
            Rto::Rfc6298(e) => e.rto(),
            Rto::Ticks(e) => e.rto(),
        }
    }

    /// ns-3's `NewAck`: an ACK of new data recomputes the RTO from the estimate, so
    /// the backoff ends without an RTT sample.
    pub fn end_backoff(&mut self) {
        match self {
            Rto::Linux(e) => e.end_backoff(),
            Rto::Rfc6298(e) => e.end_backoff(),
            Rto::Ticks(e) => e.end_backoff(),
        }
    }

    pub fn back_off(&mut self) {
        match self {
            Rto::Linux(e) => e.back_off(),
            Rto::Rfc6298(e) => e.back_off(),
            Rto::Ticks(e) => e.back_off(),
        }
    }

    pub fn srtt(&self) -> Option<Dur> {
        match self {
            Rto::Linux(e) => e.srtt(),
            Rto::Rfc6298(e) => e.srtt(),
            Rto::Ticks(e) => e.srtt(),
        }
    }
}
