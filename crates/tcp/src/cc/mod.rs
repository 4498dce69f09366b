//! Congestion control: window growth and the reductions applied on loss.
//!
//! The algorithms only own the window arithmetic. *When* a loss is declared, how much is
//! sent during recovery and how the window is inflated (Reno) or paced (PRR) belong to
//! `recovery.rs`. Dispatch is a closed enum so the per-ACK call is a direct, inlinable match.

mod cubic;
mod reno;

pub(crate) use cubic::Cubic;
pub(crate) use reno::Reno;

use crate::Algorithm;
use units::{Dur, Time};

/// The window state shared between congestion control and loss recovery (bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Window {
    pub cwnd: u64,
    pub ssthresh: u64,
    pub mss: u64,
}

impl Window {
    /// RFC 5681: slow start while cwnd < ssthresh (either is allowed at equality; we use CA).
    #[inline]
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }
}

/// One ACK that advanced `snd_una` while not in fast recovery.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ack {
    /// Newly cumulatively acknowledged bytes.
    pub acked: u64,
    /// Bytes newly delivered by this ACK, cumulatively or by SACK (RFC 6937
    /// DeliveredData, Linux's `acked_sacked`).
    pub delivered: u64,
    /// RFC 3465 limit L on slow-start growth per ACK (2 MSS, 1 MSS after an RTO).
    pub abc_limit: u64,
}

/// An RTT sample from an ACK that advanced `snd_una` (Linux `pkts_acked`): measured from
/// the newest segment it acknowledged, and only if none was ever retransmitted (Karn).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sample {
    pub rtt: Dur,
    /// snd_una after the ACK and snd_nxt (highest sent + 1), sequence space.
    pub una: u64,
    pub nxt: u64,
    /// Smoothed RTT including this sample.
    pub srtt: Option<Dur>,
}

pub(crate) trait CongestionControl {
    /// Every RTT sample, whether or not the window may grow (before `on_ack` for the
    /// same ACK, as Linux calls `pkts_acked` before `cong_avoid`).
    fn on_rtt_sample(&mut self, _w: &mut Window, _now: Time, _s: &Sample) {}
    /// Grow the window for an ACK in the open state (or in slow start after an RTO).
    fn on_ack(&mut self, w: &mut Window, now: Time, ack: &Ack);
    /// A loss detected by duplicate ACKs/SACK: set ssthresh (the caller sets cwnd).
    /// `flight` is RFC 5681 FlightSize (snd_max - snd_una).
    fn on_loss(&mut self, w: &mut Window, now: Time, flight: u64);
    /// Retransmission timeout: cwnd = 1 MSS. `repeated` = still the same loss episode
    /// (a repeated timeout, or one during recovery), in which case ssthresh is held.
    /// `nxt` is snd_nxt (highest sent + 1).
    fn on_rto(&mut self, w: &mut Window, now: Time, flight: u64, nxt: u64, repeated: bool);
    /// Fast recovery finished: deflate to ssthresh.
    fn on_recovery_exit(&mut self, w: &mut Window, now: Time);
    /// The window restarted after idle (the caller has set cwnd and ssthresh as
    /// Linux's `tcp_cwnd_restart` does): the algorithm's own state.
    fn on_idle_restart(&mut self, w: &mut Window);
    /// Data leaves with nothing in flight, the last data having left at `last_send`
    /// (Linux `CA_EVENT_TX_START`).
    fn on_tx_start(&mut self, _now: Time, _last_send: Time) {}
}

/// Slow start with Appropriate Byte Counting (RFC 3465): cwnd += min(acked, L).
/// Without byte counting, one SMSS per ACK that acknowledges new data.
#[inline]
pub(crate) fn slow_start(w: &mut Window, acked: u64, limit: u64, byte_counting: bool) {
    w.cwnd += if byte_counting { acked.min(limit) } else { w.mss };
}

/// RFC 5681 equation (4): ssthresh = max(FlightSize / 2, 2 * SMSS).
#[inline]
pub(crate) fn half_flight(w: &Window, flight: u64) -> u64 {
    (flight / 2).max(2 * w.mss)
}

#[derive(Clone, Debug)]
pub(crate) enum Cc {
    Reno(Reno),
    Cubic(Cubic),
}

impl Cc {
    /// `byte_counting` = RFC 3465 (grow by bytes acknowledged); without it the
    /// window grows per ACK, as in ns-2 and ns-3's NewReno. `hystart`: CUBIC leaves
    /// slow start by Linux's HyStart.
    pub fn new(alg: Algorithm, byte_counting: bool, hystart: bool) -> Cc {
        match alg {
            Algorithm::Tahoe | Algorithm::Reno | Algorithm::NewReno => Cc::Reno(Reno::new(byte_counting)),
            Algorithm::Cubic => Cc::Cubic(Cubic::new(byte_counting, hystart)),
        }
    }
}

macro_rules! dispatch {
    ($self:ident, $c:ident => $e:expr) => {
        match $self {
            Cc::Reno($c) => $e,
            Cc::Cubic($c) => $e,
        }
    };
}

impl CongestionControl for Cc {
    #[inline]
    fn on_rtt_sample(&mut self, w: &mut Window, now: Time, s: &Sample) {
        dispatch!(self, c => c.on_rtt_sample(w, now, s))
    }
    #[inline]
    fn on_ack(&mut self, w: &mut Window, now: Time, ack: &Ack) {
        dispatch!(self, c => c.on_ack(w, now, ack))
    }
    fn on_loss(&mut self, w: &mut Window, now: Time, flight: u64) {
        dispatch!(self, c => c.on_loss(w, now, flight))
    }
    fn on_rto(&mut self, w: &mut Window, now: Time, flight: u64, nxt: u64, repeated: bool) {
        dispatch!(self, c => c.on_rto(w, now, flight, nxt, repeated))
    }
    fn on_recovery_exit(&mut self, w: &mut Window, now: Time) {
        dispatch!(self, c => c.on_recovery_exit(w, now))
    }
    fn on_idle_restart(&mut self, w: &mut Window) {
        dispatch!(self, c => c.on_idle_restart(w))
    }
    fn on_tx_start(&mut self, now: Time, last_send: Time) {
        dispatch!(self, c => c.on_tx_start(now, last_send))
    }
}
