//! Path stalls: a network that held every packet for a while, then let them
//! through at once (a Wi-Fi or cellular link that stopped and resumed).
//!
//! The signature is the release. Answers (a SYN/ACK, or an ACK of a segment
//! sent with nothing before it unacknowledged) to several sends made at
//! different times arrive at the capture together, each far later than the
//! answering host's round trip. A slow server or a long poll delays one
//! answer, or several by their own times; it does not line up answers to
//! sends tens of milliseconds apart within a few milliseconds. Nor does a
//! loss: the answer to a send that was lost comes a round trip after it was
//! sent again, while a held path holds the copies sent again too. A busy
//! link's many recoveries from loss would otherwise line up by chance.

use crate::options::secs;
use swing::{Side, Stall};

/// Answers later than this (ns) are kept as candidates.
pub(crate) const LATE_NS: i64 = 300_000_000;
/// Candidates kept at most: a path stalled all along would give one per
/// send, and what the first hundred thousand show is enough.
pub(crate) const LATE_CAP: usize = 100_000;
/// An answer is late only if it also took this many of the answering
/// host's round trips: an answer comes a round trip after its send, so on
/// a long path `LATE_NS` alone would take ordinary answers for late ones;
/// three leaves room for queueing and a delayed ACK.
const LATE_RTTS: f64 = 3.0;
/// Answers this close together (ns) arrived in one release...
const RELEASE_NS: i64 = 10_000_000;
/// ...if at least two answered sends at least this far apart (ns).
const SPREAD_NS: i64 = 20_000_000;

/// Host `by` answered at `t` a send first made at `asked` and last at
/// `again` (ns).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct LateAnswer {
    pub t: i64,
    pub asked: i64,
    pub again: i64,
    pub by: u32,
}

/// The stalls the late answers show, in time order, seconds from `t0`:
/// from the first held send to the release less the answering host's round
/// trip (the packet reached it then), on the side of the answering hosts.
pub(crate) fn find(late: &[LateAnswer], side_of: &[Side], rtt: &[Option<f64>], t0: i64) -> Vec<Stall> {
    let rtt_ns = |h: u32| rtt.get(h as usize).copied().flatten().map_or(0, |r| (r * 1e9) as i64);
    // Late by the host's round trips, from the first send and from the last.
    let late_by = |a: &LateAnswer, from: i64| (a.t - from) as f64 > LATE_RTTS * rtt_ns(a.by) as f64;
    let mut v: Vec<LateAnswer> = late.iter().copied().filter(|a| late_by(a, a.asked) && late_by(a, a.again)).collect();
    v.sort_by_key(|a| (a.t, a.asked));
    let mut out: Vec<Stall> = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i + 1;
        while j < v.len() && v[j].t - v[j - 1].t <= RELEASE_NS {
            j += 1;
        }
        let g = &v[i..j];
        i = j;
        let first = g.iter().map(|a| a.asked).min().unwrap_or(0);
        let last = g.iter().map(|a| a.asked).max().unwrap_or(0);
        if g.len() < 2 || last - first < SPREAD_NS {
            continue;
        }
        // The side most of the answers came from.
        let b = g.iter().filter(|a| side_of.get(a.by as usize) == Some(&Side::B)).count();
        let side = if 2 * b >= g.len() { Side::B } else { Side::A };
        let release = g.iter().map(|a| a.t).min().unwrap_or(0);
        let trip = g.iter().filter(|a| side_of.get(a.by as usize) == Some(&side)).map(|a| rtt_ns(a.by)).min().unwrap_or(0);
        let (start, end) = (secs(first - t0), secs(release - trip - t0));
        if end <= start {
            continue;
        }
        match out.iter_mut().rev().find(|s| s.side == side) {
            Some(s) if start <= s.end_s => {
                s.end_s = s.end_s.max(end);
                s.answers += g.len() as u32;
            }
            _ => out.push(Stall { side, start_s: start, end_s: end, answers: g.len() as u32 }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: f64) -> i64 {
        (x * 1e6) as i64
    }

    /// An answer to a send made once.
    fn late(t: f64, asked: f64, by: u32) -> LateAnswer {
        LateAnswer { t: ms(t), asked: ms(asked), again: ms(asked), by }
    }

    #[test]
    fn answers_to_spread_sends_released_together_are_a_stall() {
        let sides = [Side::A, Side::B, Side::B];
        let rtt = [Some(0.001), Some(0.050), Some(0.080)];
        // Sends at 1000-1500 ms answered within 2 ms of 2200 ms by both
        // servers: held from 1000 ms to the release less 50 ms.
        let v = [late(2200.0, 1000.0, 1), late(2201.0, 1200.0, 2), late(2202.0, 1500.0, 1)];
        let s = find(&v, &sides, &rtt, 0);
        assert_eq!(s.len(), 1);
        assert_eq!((s[0].side, s[0].answers), (Side::B, 3));
        assert!((s[0].start_s - 1.0).abs() < 1e-9 && (s[0].end_s - 2.15).abs() < 1e-9, "{:?}", s[0]);
    }

    #[test]
    fn one_slow_answer_or_answers_to_one_burst_are_not() {
        let sides = [Side::A, Side::B];
        let rtt = [None, Some(0.050)];
        // One late answer (a slow server, a long poll).
        assert!(find(&[late(2200.0, 1000.0, 1)], &sides, &rtt, 0).is_empty());
        // Two answers together to sends made together (one slow exchange).
        assert!(find(&[late(2200.0, 1000.0, 1), late(2200.5, 1005.0, 1)], &sides, &rtt, 0).is_empty());
        // Answers to spread sends, but each at its own time.
        assert!(find(&[late(2200.0, 1000.0, 1), late(2400.0, 1200.0, 1)], &sides, &rtt, 0).is_empty());
        // Late by the clock but not by the host's round trips (0.4 s on a
        // 200 ms path).
        let slow = [None, Some(0.200)];
        assert!(find(&[late(1400.0, 1000.0, 1), late(1401.0, 1050.0, 1)], &sides, &slow, 0).is_empty());
    }

    #[test]
    fn answers_to_sends_made_again_are_loss_unless_late_after_those_too() {
        let sides = [Side::A, Side::B, Side::B];
        let rtt = [None, Some(0.050), Some(0.080)];
        let stall = [late(2200.0, 1000.0, 1), late(2201.0, 1200.0, 2)];
        assert_eq!(find(&stall, &sides, &rtt, 0).len(), 1);
        // Both sent again and answered a round trip later: two recoveries
        // from loss that happen to end together.
        let mut q = stall;
        q[0].again = ms(2140.0);
        q[1].again = ms(2110.0);
        assert!(find(&q, &sides, &rtt, 0).is_empty());
        // Sent again during the stall and held too: still a stall.
        q[0].again = ms(1900.0);
        q[1].again = ms(1900.0);
        assert_eq!(find(&q, &sides, &rtt, 0).len(), 1);
    }

    #[test]
    fn overlapping_releases_merge() {
        let sides = [Side::A, Side::B];
        let rtt = [None, Some(0.010)];
        let v = [late(2000.0, 1000.0, 1), late(2001.0, 1100.0, 1), late(2500.0, 1900.0, 1), late(2501.0, 2100.0, 1)];
        let s = find(&v, &sides, &rtt, ms(500.0));
        assert_eq!(s.len(), 1, "{s:?}");
        assert!((s[0].start_s - 0.5).abs() < 1e-9 && (s[0].end_s - 1.99).abs() < 1e-9 && s[0].answers == 4, "{:?}", s[0]);
    }
}
