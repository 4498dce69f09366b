//! Linux's retransmission timeout (`tcp_rtt_estimator`, `tcp_set_rto` in
//! `net/ipv4/tcp_input.c`), which is not RFC 6298's: the variance term is floored at
//! `rto_min` rather than the whole RTO, so the timeout is about the RTT plus 200 ms.
//!
//! * SRTT is kept in µs × 8 and `mdev` (four mean deviations) in µs × 4, with Jacobson's
//!   gains, except that a sample *below* SRTT moves `mdev` with a gain of 1/32 rather
//!   than 1/4, so a falling RTT does not inflate the timeout;
//! * `rttvar` follows the largest `mdev` of each round trip (`mdev_max`, from `rto_min`
//!   up): it rises at once, and falls by a quarter of the gap once per round trip (when
//!   snd_una passes the snd_nxt of the last update);
//! * the first sample sets SRTT = R, `mdev` = 2R and `rttvar` = max(2R, `rto_min`);
//! * RTO = SRTT + `rttvar`, in whole jiffies rounded up, at most `max_rto`; a timeout
//!   doubles it (up to `max_rto`) until the next sample recomputes it.

use crate::jiffies::usecs_to_jiffies;
use crate::segment::after;
use units::Dur;

const US_PER_JIFFY: u64 = 1_000_000 / crate::jiffies::HZ;

#[derive(Clone, Debug)]
pub(crate) struct LinuxRto {
    /// SRTT in µs × 8; 0 = no sample yet (`srtt_us`). Linux's 32 bits, as the others.
    srtt8: u32,
    /// Four mean deviations, in µs (`mdev_us`, which holds 4 × the deviation).
    mdev: u32,
    /// The largest `mdev` this round trip, at least `rto_min` (`mdev_max_us`).
    mdev_max: u32,
    /// The variance term of the RTO (`rttvar_us`).
    rttvar: u32,
    /// The round trip ends when snd_una passes this (`rtt_seq`, 32 bits wrapping).
    rtt_seq: u32,
    /// `rto_min` in µs.
    min_us: u32,
    /// The current timeout, backoff included (`icsk_rto`).
    rto: Dur,
    max: Dur,
}

/// The longest RTT sample taken, in µs: SRTT × 8 then fits in 32 bits (536 s).
const MAX_SAMPLE_US: i64 = (u32::MAX >> 3) as i64;

impl LinuxRto {
    pub fn new(initial: Dur, min: Dur, max: Dur) -> Self {
        let min_us = (min.0 / 1000).min(u32::MAX as u64) as u32;
        LinuxRto { srtt8: 0, mdev: 0, mdev_max: 0, rttvar: 0, rtt_seq: 0, min_us, rto: initial.min(max), max }
    }

    /// One RTT sample (`tcp_rtt_estimator` then `tcp_set_rto`); `una` and `nxt` are
    /// snd_una after the ACK and snd_nxt.
    pub fn sample(&mut self, r: Dur, una: u64, nxt: u64) {
        let m = ((r.0 / 1000) as i64).min(MAX_SAMPLE_US);
        if self.srtt8 == 0 {
            self.srtt8 = (m as u32) << 3;
            self.mdev = (m as u32) << 1;
            self.rttvar = self.mdev.max(self.min_us);
            self.mdev_max = self.rttvar;
            self.rtt_seq = nxt as u32;
        } else {
            let mut err = m - (self.srtt8 >> 3) as i64;
            self.srtt8 = (self.srtt8 as i64 + err) as u32;
            let quarter = (self.mdev >> 2) as i64;
            err = if err < 0 {
                // Below SRTT: an eighth of the usual gain, and only past mdev / 4.
                let e = -err - quarter;
                if e > 0 {
                    e >> 3
                } else {
                    e
                }
            } else {
                err - quarter
            };
            self.mdev = (self.mdev as i64 + err) as u32;
            if self.mdev > self.mdev_max {
                self.mdev_max = self.mdev;
                self.rttvar = self.rttvar.max(self.mdev_max);
            }
            if after(una as u32, self.rtt_seq) {
                if self.mdev_max < self.rttvar {
                    self.rttvar -= (self.rttvar - self.mdev_max) >> 2;
                }
                self.rtt_seq = nxt as u32;
                self.mdev_max = self.min_us;
            }
        }
        self.srtt8 = self.srtt8.max(1);
        self.set_rto();
    }

    /// `tcp_set_rto`: SRTT + `rttvar` in whole jiffies, at most `max_rto`.
    fn set_rto(&mut self) {
        let us = (self.srtt8 >> 3) as u64 + self.rttvar as u64;
        self.rto = Dur(usecs_to_jiffies(Dur::from_micros(us)) * US_PER_JIFFY * 1000).min(self.max);
    }

    /// The RTO from the estimate again, without a sample (the backoff ends); before any
    /// sample there is no estimate, and the timeout stays as it is.
    pub fn end_backoff(&mut self) {
        if self.srtt8 > 0 {
            self.set_rto();
        }
    }

    /// After a retransmitted SYN with no RTT sample, 3 s (Linux `TCP_TIMEOUT_FALLBACK`).
    pub fn syn_timed_out(&mut self) {
        if self.srtt8 == 0 {
            self.rto = Dur::from_secs(3).min(self.max);
        }
    }

    pub fn rto(&self) -> Dur {
        self.rto
    }

    /// A timeout doubles the RTO, up to `max_rto` (`tcp_retransmit_timer`).
    pub fn back_off(&mut self) {
        self.rto = Dur(self.rto.0.saturating_mul(2)).min(self.max);
    }

    pub fn srtt(&self) -> Option<Dur> {
        (self.srtt8 > 0).then(|| Dur::from_micros((self.srtt8 >> 3) as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Dur {
        Dur::from_millis(x)
    }

    fn est() -> LinuxRto {
        LinuxRto::new(ms(1000), ms(200), ms(120_000))
    }

    #[test]
    fn the_timeout_is_the_rtt_plus_rto_min_not_rfc_6298s_max() {
        // First sample 42 ms: SRTT 42, mdev 84, rttvar max(84, 200) = 200, RTO 242 ms,
        // rounded up to whole 4 ms jiffies: 244 ms. RFC 6298 would give max(200, 126) = 200.
        let mut e = est();
        assert_eq!(e.rto(), ms(1000));
        e.sample(ms(42), 1, 100);
        assert_eq!((e.srtt(), e.rttvar, e.rto()), (Some(ms(42)), 200_000, ms(244)));
        // A long RTT: 300 ms gives mdev 600 ms above rto_min: RTO 300 + 600 = 900 ms.
        let mut e = est();
        e.sample(ms(300), 1, 100);
        assert_eq!(e.rto(), ms(900));
    }

    #[test]
    fn tcp_rtt_estimator_by_hand() {
        let mut e = est();
        e.sample(ms(100), 1, 1000); // srtt8 800000, mdev 200000, rttvar 200000, rtt_seq 1000
                                    // R = 140 ms: err = 140000 - 100000 = 40000; srtt8 = 840000 (SRTT 105 ms);
                                    // err - mdev/4 = 40000 - 50000 = -10000: mdev 190000. No new mdev_max
                                    // (200000); snd_una 500 has not passed rtt_seq 1000: rttvar stays 200000.
        e.sample(ms(140), 500, 2000);
        assert_eq!((e.srtt8, e.mdev, e.mdev_max, e.rttvar), (840_000, 190_000, 200_000, 200_000));
        assert_eq!(e.rto(), ms(308)); // 105 + 200 = 305 ms, 77 jiffies
                                      // R = 300 ms: err = 300000 - 105000 = 195000; srtt8 1035000 (SRTT 129.375 ms);
                                      // err - mdev/4 = 195000 - 47500 = 147500: mdev 337500 > mdev_max: rttvar 337500.
                                      // snd_una 1500 passes rtt_seq: rttvar stays (not above mdev_max), rtt_seq 3000,
                                      // mdev_max back to rto_min.
        e.sample(ms(300), 1500, 3000);
        assert_eq!((e.srtt8, e.mdev, e.mdev_max, e.rttvar, e.rtt_seq), (1_035_000, 337_500, 200_000, 337_500, 3000));
        assert_eq!(e.rto(), ms(468)); // 129 + 337.5 = 466.5 ms, 117 jiffies
                                      // R = 50 ms, below SRTT: err = 50000 - 129375 = -79375; srtt8 955625;
                                      // |err| - mdev/4 = 79375 - 84375 = -5000, kept as is (not divided): mdev 332500.
                                      // snd_una 3500 passes rtt_seq 3000: rttvar falls a quarter of the way to
                                      // mdev_max: 337500 - (337500 - 332500) / 4 = 336250.
        e.sample(ms(50), 3500, 4000);
        assert_eq!((e.srtt8, e.mdev, e.mdev_max, e.rttvar), (955_625, 332_500, 200_000, 336_250));
        // R = 10 ms: err = 10000 - 119453 = -109453; srtt8 846172; |err| - mdev/4 =
        // 109453 - 83125 = 26328 > 0, an eighth of it: 3291: mdev 335791 > mdev_max: rttvar
        // max(336250, 335791) stays.
        e.sample(ms(10), 3600, 4000);
        assert_eq!((e.srtt8, e.mdev, e.rttvar), (846_172, 335_791, 336_250));
        assert_eq!(e.rto(), ms(444)); // 105.77 + 336.25 = 442.0 ms, 111 jiffies
    }

    #[test]
    fn backoff_doubles_to_the_cap_and_a_sample_resets_it() {
        let mut e = LinuxRto::new(ms(1000), ms(200), ms(5000));
        e.sample(ms(40), 1, 10);
        let mut seen = vec![];
        for _ in 0..6 {
            seen.push(e.rto().0 / 1_000_000);
            e.back_off();
        }
        assert_eq!(seen, vec![240, 480, 960, 1920, 3840, 5000]);
        e.sample(ms(40), 20, 30);
        assert!(e.rto() < ms(300));
    }

    #[test]
    fn syn_timeout_without_a_sample_gives_three_seconds() {
        let mut e = est();
        e.back_off();
        e.syn_timed_out();
        assert_eq!(e.rto(), ms(3000));
        e.sample(ms(100), 1, 10);
        assert_eq!(e.rto(), ms(300));
    }
}
