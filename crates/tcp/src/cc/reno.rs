//! RFC 5681 window growth with Appropriate Byte Counting (RFC 3465).
//! Shared by Tahoe, Reno and NewReno, which differ only in loss recovery.

use super::{half_flight, slow_start, Ack, CongestionControl, Window};
use units::Time;

#[derive(Clone, Debug)]
pub(crate) struct Reno {
    /// RFC 3465 congestion-avoidance byte counter.
    bytes_acked: u64,
    byte_counting: bool,
    /// Per-ACK growth: the remainder of SMSS*SMSS not yet added (in units of 1/cwnd
    /// bytes), so the window grows by exactly one SMSS per window of ACKs, as ns-2's
    /// `cwnd_ += 1/cwnd_` in packets does, not by a truncated share of it.
    frac: u64,
}

impl Default for Reno {
    fn default() -> Self {
        Reno::new(true)
    }
}

impl Reno {
    pub(crate) fn new(byte_counting: bool) -> Reno {
        Reno { bytes_acked: 0, byte_counting, frac: 0 }
    }
}

impl CongestionControl for Reno {
    fn on_ack(&mut self, w: &mut Window, _now: Time, ack: &Ack) {
        if w.in_slow_start() {
            slow_start(w, ack.acked, ack.abc_limit, self.byte_counting);
            return;
        }
        if !self.byte_counting {
            // RFC 5681 equation (3), per ACK: cwnd += SMSS*SMSS/cwnd, the fraction of a
            // byte carried to the next ACK.
            let num = w.mss * w.mss + self.frac;
            self.frac = num % w.cwnd;
            w.cwnd += num / w.cwnd;
            return;
        }
        // RFC 3465 §2.1: one SMSS per cwnd bytes acknowledged.
        self.bytes_acked += ack.acked;
        if self.bytes_acked >= w.cwnd {
            self.bytes_acked -= w.cwnd;
            w.cwnd += w.mss;
        }
    }

    fn on_loss(&mut self, w: &mut Window, _now: Time, flight: u64) {
        w.ssthresh = half_flight(w, flight);
        self.bytes_acked = 0;
        self.frac = 0;
    }

    fn on_rto(&mut self, w: &mut Window, _now: Time, flight: u64, _nxt: u64, repeated: bool) {
        if !repeated {
            w.ssthresh = half_flight(w, flight);
        }
        w.cwnd = w.mss; // loss window LW = 1 segment
        self.bytes_acked = 0;
        self.frac = 0;
    }

    fn on_recovery_exit(&mut self, w: &mut Window, _now: Time) {
        w.cwnd = w.ssthresh;
    }

    fn on_idle_restart(&mut self, _w: &mut Window) {
        self.bytes_acked = 0;
        self.frac = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn ack(acked: u64) -> Ack {
        Ack { acked, delivered: acked, abc_limit: 2 * MSS }
    }

    #[test]
    fn slow_start_is_byte_counted_with_limit() {
        let mut r = Reno::default();
        let mut w = Window { cwnd: 10 * MSS, ssthresh: u64::MAX, mss: MSS };
        r.on_ack(&mut w, Time::ZERO, &ack(2 * MSS)); // delayed ACK: +2 MSS
        assert_eq!(w.cwnd, 12 * MSS);
        r.on_ack(&mut w, Time::ZERO, &ack(5 * MSS)); // stretch ACK: capped at L = 2 MSS
        assert_eq!(w.cwnd, 14 * MSS);
        r.on_ack(&mut w, Time::ZERO, &ack(300)); // partial: +300 bytes, not a full MSS
        assert_eq!(w.cwnd, 14 * MSS + 300);
    }

    #[test]
    fn congestion_avoidance_adds_one_mss_per_window() {
        let mut r = Reno::default();
        let mut w = Window { cwnd: 10 * MSS, ssthresh: 10 * MSS, mss: MSS };
        for i in 1..=9 {
            r.on_ack(&mut w, Time::ZERO, &ack(MSS));
            assert_eq!(w.cwnd, 10 * MSS, "after {i} acks");
        }
        r.on_ack(&mut w, Time::ZERO, &ack(MSS));
        assert_eq!(w.cwnd, 11 * MSS);
        // The next increase needs a full 11 MSS acked.
        for _ in 0..10 {
            r.on_ack(&mut w, Time::ZERO, &ack(MSS));
        }
        assert_eq!(w.cwnd, 11 * MSS);
        r.on_ack(&mut w, Time::ZERO, &ack(MSS));
        assert_eq!(w.cwnd, 12 * MSS);
    }

    #[test]
    fn without_byte_counting_growth_is_per_ack() {
        let mut r = Reno::new(false);
        let mut w = Window { cwnd: 10 * MSS, ssthresh: u64::MAX, mss: MSS };
        // Slow start: one MSS per ACK however much it acknowledges.
        r.on_ack(&mut w, Time::ZERO, &ack(2 * MSS));
        r.on_ack(&mut w, Time::ZERO, &ack(5 * MSS));
        assert_eq!(w.cwnd, 12 * MSS);
        // Congestion avoidance: MSS*MSS/cwnd per ACK, so delayed ACKs (one per
        // two segments) give half a segment per window.
        w.ssthresh = 12 * MSS;
        for _ in 0..6 {
            r.on_ack(&mut w, Time::ZERO, &ack(2 * MSS));
        }
        let grown = w.cwnd - 12 * MSS;
        assert!((480..=500).contains(&grown), "grew {grown} bytes over a window of 6 delayed ACKs");
    }

    #[test]
    fn loss_and_timeout_follow_equation_4() {
        let mut r = Reno::default();
        let mut w = Window { cwnd: 20 * MSS, ssthresh: u64::MAX, mss: MSS };
        r.on_loss(&mut w, Time::ZERO, 17 * MSS);
        assert_eq!(w.ssthresh, 8500);
        r.on_loss(&mut w, Time::ZERO, 3 * MSS);
        assert_eq!(w.ssthresh, 2 * MSS);
        r.on_rto(&mut w, Time::ZERO, 30 * MSS, 0, false);
        assert_eq!((w.cwnd, w.ssthresh), (MSS, 15 * MSS));
        r.on_rto(&mut w, Time::ZERO, 4 * MSS, 0, true); // repeated timeout holds ssthresh
        assert_eq!((w.cwnd, w.ssthresh), (MSS, 15 * MSS));
        r.on_recovery_exit(&mut w, Time::ZERO);
        assert_eq!(w.cwnd, 15 * MSS);
    }

    #[test]
    fn per_ack_growth_adds_exactly_one_segment_per_window_of_acks() {
        // 960-byte segments at 45 segments: 960²/43200 = 21.33 bytes per ACK, which
        // truncated would fall 15 bytes a window short of ns-2's cwnd_ += 1/cwnd_.
        let mss = 960;
        let mut r = Reno::new(false);
        let mut w = Window { cwnd: 45 * mss, ssthresh: 2 * mss, mss };
        for _ in 0..45 {
            r.on_ack(&mut w, Time::ZERO, &Ack { acked: mss, delivered: mss, abc_limit: 2 * mss });
        }
        // Exactly: 45 increments of 1/cwnd as cwnd grows from 45 to 46 segments.
        let exact: f64 = (0..45).fold(45.0, |c: f64, _| c + 1.0 / c) * mss as f64;
        assert!((w.cwnd as f64 - exact).abs() < 1.0, "cwnd {} bytes, exact {exact:.1}", w.cwnd);
    }
}
