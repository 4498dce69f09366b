//! Per-host network parameters: RTT, packet-pair capacity, loss, MSS.
//!
//! Samples are collected during the pass (by `tcpflow`) into bounded
//! per-host stores; the estimates are made at the end, because two of them
//! depend on the host's final RTT: capacity samples are filtered by the
//! RTT's 5th percentile, and a filled sequence hole counts as an upstream
//! loss only if the fill came at least one RTT after the hole opened (else
//! it was reordering), as Swing did after its pass (`getplr-rexmissions-flowid`).

use crate::growth::Growth;
use crate::reservoir::{percentile, sorted, Reservoir, HOST_RESERVOIR, MSS_RESERVOIR};
use crate::shaping::Sending;
use swing::{ExtractOptions, HostShaper, LossFormula, RttSamples};
use units::Rng;

/// Swing's fallback RTT for hole classification when a host has none.
const DEFAULT_RTT_S: f64 = 0.1;
/// Swing's packet-pair clamp (`emgip`).
pub(crate) const MIN_CAPACITY_BPS: f64 = 100e3;
pub(crate) const MAX_CAPACITY_BPS: f64 = 500e6;
/// Consecutive segments faster than this many times the host's capacity
/// arrived bunched.
pub(crate) const BUNCHED_FACTOR: f64 = 2.0;

/// Data→ACK RTT samples under this share of the host's fastest handshake
/// are dropped: a round trip to the host cannot take much less than its
/// handshake, so such a sample was acknowledged by a middlebox that splits
/// TCP (a NAT or proxy), which answers in a small part of the round trip.
/// Half, not nearer one, leaves room for a handshake slower than the path
/// (the server's SYN processing).
const SPLIT_RTT_SHARE: f64 = 0.5;

/// A host whose own handshake answers (its ACK of a SYN/ACK, or its
/// SYN/ACK to a SYN) came this soon after what they answered, at the 90th
/// percentile of at least `ON_HOST_HANDSHAKES`, is at the capture point:
/// its stack answers in tens of microseconds, and any hop between it and
/// the capture (a Wi-Fi link, a home router) adds a millisecond or more.
pub(crate) const ON_HOST_RTT_S: f64 = 0.5e-3;
pub(crate) const ON_HOST_HANDSHAKES: u64 = 3;

/// A host that was sent this many data segments of two or more times the
/// MSS it announced received them merged by its own receive offload (GRO,
/// LRO), which happens on the host, after every link: no sender sends more
/// than its receiver's MSS in one segment (two, not one, leave room for a
/// sender that overruns it by a few bytes). So where no host answered its
/// handshakes at the capture (a busy phone's stack, a VPN client's tunnel,
/// answer late at times), the capture was taken on that host.
pub(crate) const OFFLOAD_MERGED_MIN: u64 = 3;

/// Swing's minimum payload for a packet pair (`estimatecapacity3.c`).
pub(crate) const PAIR_MIN_PAYLOAD: u32 = 500;

#[derive(Clone, Debug, Default)]
pub(crate) struct NetAcc {
    /// RTT samples of the path between this host and the link, seconds.
    rtt: Reservoir<f64>,
    /// Of them, the handshakes' (a sample of them).
    hs: Reservoir<f64>,
    /// Packet pairs sent by this host: (bit/s, spacing in s).
    pairs: Reservoir<(f64, f64)>,
    /// Its first `HOST_RESERVOIR` pairs of any two sizes (`pair_sample`),
    /// for its side's pooled capacity (`side_pairs`).
    any_pairs: Vec<(f64, f64)>,
    /// Consecutive new-data segments of equal size it sent, over all its
    /// connections and whatever came between: their rate (bit/s), for the
    /// share that arrived bunched. (Packet pairs over-count bunched
    /// arrivals: a receiver that ACKs every segment sends an ACK between
    /// two that arrive spaced, which ends the pair, but none between two
    /// that arrive together.)
    arrivals: Reservoir<f64>,
    last_arrival: Option<(i64, u32)>,
    mss: Reservoir<u16>,
    /// First flights' segment counts (initial windows).
    iw: Reservoir<u32>,
    /// Windows it advertised while receiving data, bytes.
    windows: Reservoir<u64>,
    /// Delay from a hole opening in this host's data to its fill, seconds.
    fills: Reservoir<f64>,
    /// This host's pure ACKs of one segment alone (`AckHold`), and the
    /// bytes each acknowledged.
    ack_holds: Reservoir<(AckHold, u64)>,
    /// Data segments that carried new data (not below the highest sequence seen).
    pub new_segs: u64,
    /// Segments entirely below the highest sequence seen that filled no hole.
    pub retx_no_hole: u64,
    /// Loss episodes its receivers reported (`tcpflow::episode`), and the
    /// segments lost in them.
    pub episodes: u64,
    pub episode_losses: u64,
    /// The smallest handshake RTT sample.
    hs_min: Option<f64>,
    /// Pure ACKs this host sent in connections whose peer had sent data,
    /// and new-data segments it was sent.
    pub acks: u64,
    pub segs_received: u64,
    /// Of those, the segments of two or more times the MSS it announced
    /// (`OFFLOAD_MERGED_MIN`).
    pub merged_received: u64,
    /// New-data bytes it was sent in those segments, and those it
    /// acknowledged that the capture missed (it received them).
    pub bytes_received: u64,
    /// Of its pure ACKs and the bytes they acknowledged, those that
    /// answered losses its peers' `loss` holds (`tcpflow::episode`).
    pub answered: [f64; 2],
    /// SYNs and SYN/ACKs it sent, and of those, with timestamps and with
    /// SACK permitted.
    syns: u64,
    syns_ts: u64,
    syns_sack: u64,
    /// Its data segments' timing, for a shaper's rate and burst.
    pub sending: Sending,
    /// Completed handshakes whose SYN or SYN/ACK it sent, and how many of
    /// those it sent again.
    pub handshakes: u64,
    pub handshake_retx: u64,
    /// Its connections' slow-start rounds, pooled (`growth`).
    pub growth: Growth,
    /// The most segments a flight of its short segments held beyond those
    /// its receivers had acknowledged (`window_unit`).
    pub flight_over_acked: u32,
}

/// The rate at which a segment of `payload` bytes (with 40 bytes of
/// headers, as Swing counted) follows the one before it `dt_s` earlier.
fn wire_bps(payload: u32, dt_s: f64) -> f64 {
    (payload as f64 + 40.0) * 8.0 / dt_s
}

/// Loss episodes needed for a host's burst length.
const BURST_MIN_EPISODES: u64 = 5;

/// Hosts sent fewer data segments get no segments-per-ACK.
pub(crate) const ACK_MIN: u64 = 20;

/// What the end of the pass makes of a host's samples.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct HostNet {
    pub rtt_s: Option<f64>,
    pub rtt_samples: u64,
    /// Data samples left out as a middlebox's ACKs.
    pub rtt_split: u64,
    pub capacity_bps: Option<f64>,
    pub capacity_samples: u64,
    /// Its pairs of any sizes spaced under its RTTs' 5th percentile, bit/s
    /// (none at the capture point): its side's capacity where no host of it
    /// has one (`model::pooled_capacities`).
    pub side_pairs: Vec<f64>,
    /// Of its back-to-back arrivals (at the capacity or faster), the share
    /// faster than `BUNCHED_FACTOR` times it.
    pub bunched: Option<f64>,
    pub loss: Option<f64>,
    pub loss_packets: u64,
    /// Segments lost per loss episode its receivers reported (at least 1).
    pub loss_burst: Option<f64>,
    pub mss: Option<u32>,
    /// Holes (upstream losses), reorderings and downstream retransmissions.
    pub holes: u64,
    pub segments_per_ack: Option<f64>,
    pub bytes_per_ack: Option<f64>,
    /// Its delayed-ACK timeout: the median hold of the ACKs it held.
    pub ack_delay_s: Option<f64>,
    /// The median of its first flights, segments.
    pub initial_window: Option<u32>,
    /// How its window grew in slow start: 0 by a segment per ACK, 1 by
    /// the bytes acknowledged (`growth`); and the pairs of rounds read.
    pub growth_per_byte: Option<f64>,
    pub growth_rounds: u64,
    /// False where its flights of short segments held more than a window
    /// counting packets could (`window_unit`): it counts bytes.
    pub packet_window: Option<bool>,
    /// The 90th percentile of the windows it advertised while receiving.
    pub rcv_window: Option<u64>,
    /// Whether most of its SYNs offered timestamps and SACK.
    pub timestamps: Option<bool>,
    pub sack: Option<bool>,
    /// A token bucket behind its capacity (`shaping`).
    pub shaper: Option<HostShaper>,
    pub acks: u64,
    /// The part of `loss` after the link (Swing formula only).
    pub loss_after: Option<f64>,
    pub handshakes: u64,
    pub handshake_retx: u64,
    /// Handshake answers of its own that were timed.
    pub handshake_answers: u64,
    /// Whether the capture was taken on this host (`ON_HOST_RTT_S`).
    pub at_capture: bool,
}

impl NetAcc {
    /// An RTT sample; `handshake` for SYN→SYN/ACK and SYN/ACK→ACK.
    pub(crate) fn rtt_sample(&mut self, s: f64, max_s: f64, handshake: bool, rng: &mut Rng) {
        if s > 0.0 && s <= max_s {
            self.rtt.push(s, HOST_RESERVOIR, rng);
            if handshake {
                self.hs_min = Some(self.hs_min.map_or(s, |m| m.min(s)));
                self.hs.push(s, HOST_RESERVOIR, rng);
            }
        }
    }

    /// A packet pair spaced `dt` seconds apart, its second segment of
    /// `payload` bytes, `equal` when the first was of the same size. Queued
    /// back to back at a link, two segments leave it the second's
    /// serialisation apart whatever the first's size; Swing took equal
    /// sizes only, and so do the host's own estimates. Pairs of any sizes
    /// count only towards its side's pooled capacity, and only the first
    /// `HOST_RESERVOIR` of them, so that they draw nothing from `rng`.
    pub(crate) fn pair_sample(&mut self, payload: u32, dt: f64, equal: bool, rng: &mut Rng) {
        if dt > 0.0 {
            let bps = wire_bps(payload, dt).clamp(MIN_CAPACITY_BPS, MAX_CAPACITY_BPS);
            if equal {
                self.pairs.push((bps, dt), HOST_RESERVOIR, rng);
            }
            if self.any_pairs.len() < HOST_RESERVOIR {
                self.any_pairs.push((bps, dt));
            }
        }
    }

    /// A new-data segment of `payload` bytes from this host arrived at `t` (ns).
    pub(crate) fn arrival(&mut self, payload: u32, t: i64, rng: &mut Rng) {
        if payload < PAIR_MIN_PAYLOAD {
            return;
        }
        if let Some((t0, len)) = self.last_arrival {
            if len == payload && t > t0 {
                self.arrivals.push(wire_bps(payload, (t - t0) as f64 * 1e-9), HOST_RESERVOIR, rng);
            }
        }
        self.last_arrival = Some((t, payload));
    }

    /// A window of `bytes` the host advertised while receiving data.
    pub(crate) fn window_sample(&mut self, bytes: u64, rng: &mut Rng) {
        self.windows.push(bytes, HOST_RESERVOIR, rng);
    }

    /// A first flight of `n` segments the host sent.
    pub(crate) fn initial_window(&mut self, n: u32, rng: &mut Rng) {
        self.iw.push(n, MSS_RESERVOIR, rng);
    }

    /// The options of a SYN or SYN/ACK the host sent.
    pub(crate) fn syn_options(&mut self, o: &wire::TcpOptions, rng: &mut Rng) {
        if let Some(m) = o.mss {
            self.mss.push(m, MSS_RESERVOIR, rng);
        }
        self.syns += 1;
        self.syns_ts += o.timestamp.is_some() as u64;
        self.syns_sack += o.sack_permitted as u64;
    }

    pub(crate) fn ack_hold(&mut self, h: AckHold, bytes: u64, rng: &mut Rng) {
        self.ack_holds.push((h, bytes), HOST_RESERVOIR, rng);
    }

    pub(crate) fn fill(&mut self, delay_s: f64, rng: &mut Rng) {
        self.fills.push(delay_s.max(0.0), HOST_RESERVOIR, rng);
    }

    /// Stored values, for the memory accounting.
    pub(crate) fn stored(&self) -> usize {
        self.rtt.len()
            + self.hs.len()
            + self.pairs.len()
            + self.any_pairs.len()
            + self.arrivals.len()
            + self.mss.len()
            + self.fills.len()
            + self.ack_holds.len()
    }

    /// What the pass's samples give, the host at the capture point if its
    /// handshakes put it there (the unit tests' shorthand).
    #[cfg(test)]
    pub(crate) fn finish(&self, o: &ExtractOptions) -> HostNet {
        self.finish_as(o, self.at_capture())
    }

    /// What the pass's samples give, the host at the capture point or not
    /// as the whole trace decided (`model::host_nets`).
    pub(crate) fn finish_as(&self, o: &ExtractOptions, at_capture: bool) -> HostNet {
        let floor = self.hs_min.map_or(0.0, |m| m * SPLIT_RTT_SHARE);
        let rtts = sorted(self.rtt.items().iter().copied().filter(|&s| s >= floor));
        let rtt_split = scale(self.rtt.len() - rtts.len(), self.rtt.len(), self.rtt.seen());
        // Handshakes alone where there are enough of them (see RttSamples).
        let hs_enough = o.rtt_samples == RttSamples::HandshakeElseData && self.hs.seen() >= o.rtt_min_samples as u64;
        let (rtts, rtt_seen) = if hs_enough {
            (sorted(self.hs.items().iter().copied()), self.hs.seen())
        } else {
            let n = scale(rtts.len(), self.rtt.len(), self.rtt.seen());
            (rtts, n)
        };
        let rtt_s = (!rtts.is_empty() && rtt_seen >= o.rtt_min_samples as u64).then(|| percentile(&rtts, o.rtt_percentile));

        // Capacity: drop pairs spaced as widely as the host's shortest RTTs
        // (they were not sent back to back), then take Swing's percentile.
        let p5 = rtt_s.map(|_| percentile(&rtts, 5.0));
        // A host at the capture point shows its own sending there, before
        // any link that could space it: no pairs, no bunching, no shaper.
        let pairs: &[(f64, f64)] = if at_capture { &[] } else { self.pairs.items() };
        let kept = sorted(pairs.iter().filter(|(_, dt)| p5.is_none_or(|p| *dt < p)).map(|(b, _)| *b));
        let capacity_samples = if at_capture { 0 } else { scale(kept.len(), self.pairs.len(), self.pairs.seen()) };
        let capacity_bps = (capacity_samples > o.capacity_min_samples as u64 && !kept.is_empty()).then(|| percentile(&kept, o.capacity_percentile));
        let side_pairs =
            if at_capture { vec![] } else { self.any_pairs.iter().filter(|(_, dt)| p5.is_none_or(|p| *dt < p)).map(|(b, _)| *b).collect() };
        // Of its consecutive segments that arrived at the capacity or
        // faster (sent back to back), those closer than half a packet's
        // time at it: the path delivered them together (frame aggregation,
        // receive batching), which a link of that capacity cannot do.
        let bunched = capacity_bps.and_then(|c| {
            let a = self.arrivals.items();
            let fast = a.iter().filter(|&&b| b > BUNCHED_FACTOR * c).count();
            let paced = a.iter().filter(|&&b| b <= BUNCHED_FACTOR * c && b >= c / 1.5).count();
            (fast + paced > 0).then(|| fast as f64 / (fast + paced) as f64)
        });

        // Everything a host at the capture point sent was seen before any
        // loss: a hole in its data is the capture's disorder, never a loss
        // upstream (its near-zero RTT would otherwise count every one).
        let thr = rtt_s.unwrap_or(DEFAULT_RTT_S);
        let late = if at_capture { 0 } else { self.fills.items().iter().filter(|d| **d >= thr).count() };
        let holes = scale(late, self.fills.len(), self.fills.seen());
        let reordered = self.fills.seen() - holes;
        let (loss, loss_after, loss_packets) = match o.loss_formula {
            LossFormula::Swing => {
                // Swing counts reordered segments as ordinary packets and
                // hole fills as the retransmissions they are.
                let n = self.new_segs + reordered;
                let enough = n >= o.loss_min_packets && n > 0;
                let up = holes as f64 / (n + holes).max(1) as f64;
                let down = (self.retx_no_hole as f64 / n.max(1) as f64).min(1.0);
                let loss = enough.then(|| (up + down - up * down).min(1.0));
                (loss, enough.then_some(down), n)
            }
            LossFormula::Retransmissions => {
                let n = self.new_segs + self.retx_no_hole + self.fills.seen();
                let loss = (n >= o.loss_min_packets && n > 0).then(|| (self.retx_no_hole + holes) as f64 / n as f64);
                (loss, None, n)
            }
        };
        // Segments lost per episode: TCP recovers once per episode, so its
        // receivers' loss reports and its sender's halvings go with
        // episodes, not with segments lost.
        let loss_burst = (loss.is_some() && self.episodes >= BURST_MIN_EPISODES).then(|| self.episode_losses as f64 / self.episodes as f64);
        let mss = {
            let m = sorted(self.mss.items().iter().map(|&m| m as f64));
            (!m.is_empty()).then(|| percentile(&m, 50.0) as u32)
        };
        // A host sent at least ACK_MIN segments: a server that piggybacks
        // its ACKs on responses sends few pure ACKs of its own.
        let segments_per_ack = (self.segs_received >= ACK_MIN).then(|| self.segs_received as f64 / self.acks.max(1) as f64);
        // Bytes, which receive offload does not change: a capture on the
        // receiving host shows merged segments but every ACK it sent.
        let ack_delay_s = ack_delay(self.ack_holds.items(), p5);
        let initial_window = {
            let w = sorted(self.iw.items().iter().map(|&n| n as f64));
            (!w.is_empty()).then(|| percentile(&w, 50.0) as u32)
        };
        let bytes_per_ack = (self.segs_received >= ACK_MIN).then(|| self.bytes_per_ack(p5.filter(|_| ack_delay_s.is_some()), mss));
        HostNet {
            rtt_s,
            rtt_samples: rtt_seen,
            rtt_split,
            capacity_bps,
            capacity_samples,
            side_pairs,
            bunched,
            loss,
            loss_packets,
            loss_burst,
            mss,
            holes,
            segments_per_ack,
            bytes_per_ack,
            ack_delay_s,
            rcv_window: {
                let w = sorted(self.windows.items().iter().map(|&n| n as f64));
                (w.len() >= ACK_MIN as usize).then(|| percentile(&w, 90.0) as u64)
            },
            initial_window,
            packet_window: crate::window_unit::packet_window(self.flight_over_acked, initial_window),
            growth_per_byte: self.growth.per_byte(),
            growth_rounds: self.growth.pairs,
            timestamps: (self.syns > 0).then_some(2 * self.syns_ts >= self.syns),
            sack: (self.syns > 0).then_some(2 * self.syns_sack >= self.syns),
            shaper: if at_capture { None } else { self.sending.shaper(rtt_s, capacity_bps, o.shaper_min_segments, o.shaper_max_fraction) },
            acks: self.acks,
            loss_after,
            handshakes: self.handshakes,
            handshake_retx: self.handshake_retx,
            handshake_answers: self.hs.seen(),
            at_capture,
        }
    }

    /// New-data bytes received per pure ACK of its delayed-ACK policy.
    ///
    /// Loss reports answer the path's losses, which a regenerated receiver
    /// answers again by TCP's own rules: those of the losses `loss` holds
    /// are left out, or they would be sent twice. So are the ACKs its
    /// delayed-ACK timer held (given `rtt_p5` when the model has its
    /// timer, `ack_delay`) of less than an ACK's worth of bytes: the
    /// regenerated timer sends those again, while one of more would be
    /// sent at once by the count. Which those are depends on the count, so
    /// it is found as a fixed point (each step leaves out more of them and
    /// raises the count; a few steps settle it). A receiver ACKs at once
    /// when more than a full segment (its `mss`) waits (RFC 1122 4.2.3.2;
    /// Linux, Windows): one held with more waited for something else (a
    /// window its application had not yet opened), which the regenerated
    /// timer does not repeat, so it stays. Nor does leaving them out raise
    /// the count past two full segments, which a receiver ACKs at once
    /// (RFC 1122 4.2.3.2) unless its figure was above that already: the
    /// bytes answered by data rather than a pure ACK (a server's requests)
    /// count with no ACK of their own, and without the timer's ACKs beside
    /// them they would pass for a count of many segments.
    fn bytes_per_ack(&self, rtt_p5: Option<f64>, mss: Option<u32>) -> f64 {
        let [acks, bytes] = [self.acks as f64 - self.answered[0], self.bytes_received as f64 - self.answered[1]];
        if acks < 1.0 || bytes <= 0.0 {
            return self.bytes_received as f64 / self.acks.max(1) as f64;
        }
        let one_segment = |b: u64| mss.is_none_or(|m| b <= m as u64);
        let held: Vec<u64> = match rtt_p5 {
            Some(rtt) => self.ack_holds.items().iter().filter(|&&(h, b)| h.timer_hold(rtt).is_some() && one_segment(b)).map(|&(_, b)| b).collect(),
            None => Vec::new(),
        };
        // Each stored hold stands for this many of the host's.
        let k = self.ack_holds.seen() as f64 / self.ack_holds.len().max(1) as f64;
        let mut per = bytes / acks;
        let most = mss.map_or(f64::INFINITY, |m| 2.0 * m as f64).max(per);
        for _ in 0..TIMER_FIXED_POINT_STEPS {
            let (n, b) = held.iter().filter(|&&b| (b as f64) < per).fold((0.0, 0.0), |(n, s), &b| (n + k, s + k * b as f64));
            if acks - n < 1.0 {
                break;
            }
            let next = ((bytes - b) / (acks - n)).min(most);
            if next == per {
                break;
            }
            per = next;
        }
        per
    }

    /// Whether its own handshake answers put this host at the capture
    /// point (`ON_HOST_RTT_S`).
    pub(crate) fn at_capture(&self) -> bool {
        let hs = sorted(self.hs.items().iter().copied());
        self.hs.seen() >= ON_HOST_HANDSHAKES && !hs.is_empty() && percentile(&hs, 90.0) <= ON_HOST_RTT_S
    }
}

/// An ACK held at least this long past the round trip waited for its timer.
const ACK_HOLD_MIN_S: f64 = 0.005;
/// ...and at most this long (longer waits are for something else).
const ACK_HOLD_MAX_S: f64 = 1.0;
/// Held ACKs needed for an estimate.
const ACK_HOLD_MIN_SAMPLES: usize = 5;
/// Steps at most to the fixed point of `bytes_per_ack`.
const TIMER_FIXED_POINT_STEPS: usize = 8;

/// A pure ACK of one segment alone, everything before it acknowledged,
/// seconds.
#[derive(Clone, Copy, Debug)]
pub(crate) enum AckHold {
    /// Of the latest segment sent: from that segment to the ACK, the round
    /// trip included.
    Latest(f64),
    /// Of a flight's odd segment, sent with the one the previous ACK
    /// covered (they reached the receiver together): from that ACK to this
    /// one, and from the next segment sent to this ACK.
    Odd { past_ack: f64, after_next: f64 },
}

/// A host's delayed-ACK timeout from its ACKs of one segment alone: the
/// latest segment's delay less the host's short round trips (`rtt_p5`),
/// or an odd segment's hold past its companion's ACK where the next
/// segment, sent less than that round trip before, cannot have brought it;
/// the ACKs sent at once left out, the median of those the timer held.
/// Stacks differ (Linux 40 ms and up, macOS 100 ms, Windows 200 ms), and a
/// receiver whose segments arrive further apart than its timeout ACKs each
/// one: a generator with the wrong timer sends the wrong number of ACKs,
/// and spaces a window-limited upload's flights wrongly (the odd segment
/// of each flight waits for it, and the next flight for its ACK).
fn ack_delay(holds: &[(AckHold, u64)], rtt_p5: Option<f64>) -> Option<f64> {
    let rtt = rtt_p5?;
    let held = sorted(holds.iter().filter_map(|(h, _)| h.timer_hold(rtt)));
    (held.len() >= ACK_HOLD_MIN_SAMPLES).then(|| percentile(&held, 50.0))
}

impl AckHold {
    /// How long the receiver's delayed-ACK timer held this ACK, given the
    /// host's short round trip: none if it was sent at once, waited for
    /// something else, or may have been brought by the next segment.
    fn timer_hold(&self, rtt: f64) -> Option<f64> {
        let h = match *self {
            AckHold::Latest(d) => d - rtt,
            AckHold::Odd { past_ack, after_next } => (after_next < rtt).then_some(past_ack)?,
        };
        (ACK_HOLD_MIN_S..=ACK_HOLD_MAX_S).contains(&h).then_some(h)
    }
}

/// `part` of the `kept` stored values, scaled to the `seen` total.
fn scale(part: usize, kept: usize, seen: u64) -> u64 {
    if kept as u64 == seen || kept == 0 {
        part as u64
    } else {
        (part as f64 * seen as f64 / kept as f64).round() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> ExtractOptions {
        ExtractOptions::default()
    }

    #[test]
    fn rtt_needs_enough_samples_in_range() {
        let mut rng = Rng::stream(1, "t");
        let mut h = NetAcc::default();
        h.rtt_sample(0.030, 1.5, false, &mut rng);
        assert_eq!(h.finish(&opts()).rtt_s, None, "one sample is below rtt_min_samples = 2");
        h.rtt_sample(0.010, 1.5, false, &mut rng);
        h.rtt_sample(2.0, 1.5, false, &mut rng); // above rtt_max_s: dropped
        h.rtt_sample(0.0, 1.5, false, &mut rng); // not positive: dropped
        let n = h.finish(&opts());
        assert_eq!((n.rtt_s, n.rtt_samples), (Some(0.010), 2));
    }

    #[test]
    fn rtt_percentile_picks_among_the_samples() {
        let mut rng = Rng::stream(1, "t");
        let mut h = NetAcc::default();
        for s in [0.020, 0.100, 0.090, 0.022, 0.095] {
            h.rtt_sample(s, 1.5, true, &mut rng);
        }
        // The default 10th percentile: the idle handshakes, not the queue.
        assert_eq!(h.finish(&opts()).rtt_s, Some(0.020));
        let median = ExtractOptions { rtt_percentile: 50.0, ..opts() };
        assert_eq!(h.finish(&median).rtt_s, Some(0.090));
        let low = ExtractOptions { rtt_percentile: 0.0, ..opts() };
        assert_eq!(h.finish(&low).rtt_s, Some(0.020));
        let high = ExtractOptions { rtt_percentile: 100.0, ..opts() };
        assert_eq!(h.finish(&high).rtt_s, Some(0.100));
    }

    #[test]
    fn data_samples_far_below_the_handshake_are_a_middlebox() {
        // A NAT that terminates TCP acknowledges data in 0.3 ms while the
        // server's handshake takes 80-110 ms: the data samples are dropped.
        let mut rng = Rng::stream(1, "t");
        let mut h = NetAcc::default();
        for s in [0.080, 0.110, 0.100] {
            h.rtt_sample(s, 1.5, true, &mut rng);
        }
        for _ in 0..20 {
            h.rtt_sample(0.0003, 1.5, false, &mut rng);
        }
        let median = ExtractOptions { rtt_percentile: 50.0, ..opts() };
        let n = h.finish(&median);
        assert_eq!((n.rtt_s, n.rtt_samples, n.rtt_split), (Some(0.100), 3, 20));
        // Data samples around the handshake (delayed ACKs) count with all
        // samples pooled; by default three handshakes are enough alone.
        h.rtt_sample(0.300, 1.5, false, &mut rng);
        h.rtt_sample(0.300, 1.5, false, &mut rng);
        let pooled = ExtractOptions { rtt_samples: RttSamples::HandshakeAndData, ..median.clone() };
        assert_eq!(h.finish(&pooled).rtt_s, Some(0.110));
        assert_eq!((h.finish(&median).rtt_s, h.finish(&median).rtt_samples), (Some(0.100), 3));
        // With fewer handshakes than `rtt_min_samples`, every sample.
        let few = ExtractOptions { rtt_min_samples: 4, ..median };
        assert_eq!((h.finish(&few).rtt_s, h.finish(&few).rtt_samples), (Some(0.110), 5));
    }

    #[test]
    fn segments_per_ack_counts_full_segments_acknowledged() {
        let mut h = NetAcc::default();
        (h.acks, h.segs_received) = (40, 80);
        let n = h.finish(&opts());
        assert_eq!((n.segments_per_ack, n.acks), (Some(2.0), 40));
        let mut few = NetAcc::default();
        (few.acks, few.segs_received) = (1, 19);
        assert_eq!(few.finish(&opts()).segments_per_ack, None);
    }

    /// A host with four 20 ms handshake RTTs, and the stream to feed it.
    fn with_rtts() -> (NetAcc, Rng) {
        let mut rng = Rng::stream(1, "t");
        let mut h = NetAcc::default();
        for _ in 0..4 {
            h.rtt_sample(0.020, 1.5, true, &mut rng);
        }
        (h, rng)
    }

    #[test]
    fn delayed_ack_timeout_is_the_median_hold_past_the_round_trip() {
        let (mut h, mut rng) = with_rtts();
        // ACKs sent at once (a round trip after the segment), and held 100
        // ms more (macOS's timer); one that waited for something else.
        for d in [0.020, 0.0201, 0.020, 0.120, 0.121, 0.119, 0.120, 3.0] {
            h.ack_hold(AckHold::Latest(d), 1460, &mut rng);
        }
        assert_eq!(h.finish(&opts()).ack_delay_s, None, "four held ACKs are too few");
        h.ack_hold(AckHold::Latest(0.122), 1460, &mut rng);
        let d = h.finish(&opts()).ack_delay_s.unwrap();
        assert!((d - 0.100).abs() < 1e-9, "{d}");
        // Without an RTT the round trip cannot be taken out.
        let mut n = NetAcc::default();
        for _ in 0..10 {
            n.ack_hold(AckHold::Latest(0.1), 1460, &mut rng);
        }
        assert_eq!(n.finish(&opts()).ack_delay_s, None);
    }

    #[test]
    fn an_odd_segments_hold_counts_where_the_next_segment_cannot_have_brought_it() {
        // A flight's odd segment ACKed 15 ms after its companion's ACK, the
        // next segment sent 15 ms before (less than the 20 ms round trip):
        // the timer's. One ACKed 25 ms on, the next segment sent 25 ms
        // before: its arrival may have brought the ACK, so it is no hold.
        let (mut h, mut rng) = with_rtts();
        for _ in 0..4 {
            h.ack_hold(AckHold::Odd { past_ack: 0.015, after_next: 0.015 }, 1460, &mut rng);
        }
        for _ in 0..6 {
            h.ack_hold(AckHold::Odd { past_ack: 0.025, after_next: 0.025 }, 1460, &mut rng);
        }
        assert_eq!(h.finish(&opts()).ack_delay_s, None, "four holds are too few");
        h.ack_hold(AckHold::Odd { past_ack: 0.016, after_next: 0.0161 }, 1460, &mut rng);
        let d = h.finish(&opts()).ack_delay_s.unwrap();
        assert!((d - 0.015).abs() < 1e-9, "{d}");
    }

    #[test]
    fn bytes_per_ack_leaves_out_the_timers_acks_of_less_than_a_count() {
        // 60,000 bytes in 30 ACKs, to a host with the given MSS: ten ACKs
        // the timer held (100 ms past the 20 ms round trip) of 500 bytes,
        // which the regenerated timer sends again; five of 5,000, which its
        // count would send at once; one sent at once and an odd segment the
        // next one may have brought, neither held by the timer.
        let host = |mss: Option<u16>| {
            let (mut h, mut rng) = with_rtts();
            (h.acks, h.segs_received, h.bytes_received) = (30, 60, 60_000);
            for _ in 0..10 {
                h.ack_hold(AckHold::Latest(0.120), 500, &mut rng);
            }
            for _ in 0..5 {
                h.ack_hold(AckHold::Latest(0.120), 5_000, &mut rng);
            }
            h.ack_hold(AckHold::Latest(0.021), 500, &mut rng);
            h.ack_hold(AckHold::Odd { past_ack: 0.1, after_next: 0.05 }, 500, &mut rng);
            let mut o = wire::TcpOptions::default();
            o.mss = mss;
            h.syn_options(&o, &mut rng);
            h.finish(&opts())
        };
        let n = host(Some(1460));
        assert!((n.ack_delay_s.unwrap() - 0.100).abs() < 1e-9);
        assert_eq!(n.bytes_per_ack, Some(55_000.0 / 20.0));
        // A receiver of 400-byte segments ACKs at once when more than one
        // waits: its 500-byte ACKs held waited for something else (its
        // window), which the regenerated timer does not repeat.
        assert_eq!(host(Some(400)).bytes_per_ack, Some(2_000.0));
        // One of 900-byte segments ACKs at least every 1,800 bytes: leaving
        // out its timer's ACKs raises its 2,000 no further.
        assert_eq!(host(Some(900)).bytes_per_ack, Some(2_000.0));
        // ...and one of 1,200-byte segments to 2,400 at most.
        assert_eq!(host(Some(1200)).bytes_per_ack, Some(2_400.0));
        // Without the timer in the model, every ACK counts.
        let mut few = NetAcc::default();
        let mut rng = Rng::stream(1, "t");
        (few.acks, few.segs_received, few.bytes_received) = (30, 60, 60_000);
        few.ack_hold(AckHold::Latest(0.120), 500, &mut rng);
        assert_eq!(few.finish(&opts()).bytes_per_ack, Some(2_000.0));
    }

    #[test]
    fn bunched_share_of_segments_sent_back_to_back() {
        let (mut h, mut rng) = with_rtts();
        // Capacity 12 Mbit/s: 1460-byte pairs 1 ms apart.
        for _ in 0..12 {
            h.pair_sample(1460, 1e-3, true, &mut rng);
        }
        // After a first segment, 30 a packet time apart, 10 within 10 µs
        // of the one before, 5 a long way after theirs (not sent back to
        // back), and small ones that do not count.
        let ms = 1_000_000;
        let mut t = 0;
        for i in 0..46 {
            t += if i <= 30 {
                ms
            } else if i <= 40 {
                10_000
            } else {
                50 * ms
            };
            h.arrival(1460, t, &mut rng);
            h.arrival(100, t, &mut rng);
        }
        let n = h.finish(&opts());
        assert_eq!(n.capacity_bps, Some(1500.0 * 8.0 / 1e-3));
        assert_eq!(n.bunched, Some(0.25));
        // Without a capacity, nothing to compare with.
        assert_eq!(NetAcc::default().finish(&opts()).bunched, None);
    }

    #[test]
    fn capacity_filters_by_rtt_then_takes_the_chosen_percentile() {
        let (mut h, mut rng) = with_rtts();
        // 12 pairs of 1460 B 1 ms apart (12 Mbit/s) ... 12 ms apart (1 Mbit/s).
        for i in 1..=12 {
            h.pair_sample(1460, i as f64 * 1e-3, true, &mut rng);
        }
        // Two pairs spaced beyond the RTT's 5th percentile (20 ms) are dropped.
        h.pair_sample(1460, 0.020, true, &mut rng);
        h.pair_sample(1460, 0.5, true, &mut rng);
        let n = h.finish(&ExtractOptions { capacity_percentile: 75.0, ..opts() });
        assert_eq!(n.capacity_samples, 12);
        // Kept bit rates sorted: 1500*8/k ms for k = 12..1; index ⌊0.75·11⌋ = 8 → k = 4
        // (Swing's choice).
        assert_eq!(n.capacity_bps, Some(1500.0 * 8.0 / 4e-3));
        // The default, the median: index ⌊0.50·11⌋ = 5 → k = 7.
        assert_eq!(h.finish(&opts()).capacity_bps, Some(1500.0 * 8.0 / 7e-3));
        // At capacity_min_samples = 12 (needs more than 12), no estimate.
        let n = h.finish(&ExtractOptions { capacity_min_samples: 12, ..opts() });
        assert_eq!((n.capacity_bps, n.bunched), (None, None));
    }

    #[test]
    fn pair_samples_are_clamped() {
        let mut rng = Rng::stream(1, "t");
        let mut h = NetAcc::default();
        h.pair_sample(1000, 1e-9, true, &mut rng);
        h.pair_sample(1000, 10.0, true, &mut rng);
        h.pair_sample(1000, -1.0, true, &mut rng); // not a pair
        let v: Vec<f64> = h.pairs.items().iter().map(|p| p.0).collect();
        assert_eq!(v, vec![MAX_CAPACITY_BPS, MIN_CAPACITY_BPS]);
    }

    #[test]
    fn swing_loss_splits_fills_by_rtt() {
        let mut rng = Rng::stream(1, "t");
        let mut h = NetAcc::default();
        h.rtt_sample(0.05, 1.5, true, &mut rng);
        h.rtt_sample(0.05, 1.5, true, &mut rng);
        h.new_segs = 196;
        h.retx_no_hole = 10;
        h.fill(0.2, &mut rng); // after an RTT: a hole (upstream loss)
        h.fill(0.3, &mut rng);
        h.fill(0.001, &mut rng); // quicker than an RTT: reordering
        h.fill(0.002, &mut rng);
        let n = h.finish(&opts());
        // n = 196 + 2 reordered = 198; up = 2/200; down = 10/198.
        let (up, down) = (2.0 / 200.0, 10.0 / 198.0);
        assert_eq!(n.loss_packets, 198);
        assert!((n.loss.unwrap() - (up + down - up * down)).abs() < 1e-12);
        assert_eq!(n.holes, 2);
        let r = h.finish(&ExtractOptions { loss_formula: LossFormula::Retransmissions, ..opts() });
        assert_eq!(r.loss_packets, 210);
        assert!((r.loss.unwrap() - 12.0 / 210.0).abs() < 1e-12);
        // Below loss_min_packets: no loss of its own.
        assert_eq!(h.finish(&ExtractOptions { loss_min_packets: 1000, ..opts() }).loss, None);
    }

    #[test]
    fn unknown_rtt_classifies_fills_with_100_ms() {
        let mut rng = Rng::stream(1, "t");
        let mut h = NetAcc::default();
        h.fill(0.099, &mut rng);
        h.fill(0.1, &mut rng);
        assert_eq!(h.finish(&opts()).holes, 1);
    }

    #[test]
    fn mss_is_the_median_of_syn_options_and_options_the_majority() {
        let mut rng = Rng::stream(1, "t");
        let mut h = NetAcc::default();
        assert_eq!((h.finish(&opts()).timestamps, h.finish(&opts()).sack), (None, None));
        for (m, ts) in [(1460, true), (1380, false), (1460, true)] {
            let mut o = wire::TcpOptions::default();
            (o.mss, o.timestamp) = (Some(m), ts.then_some((1, 0)));
            h.syn_options(&o, &mut rng);
        }
        let n = h.finish(&opts());
        assert_eq!((n.mss, n.timestamps, n.sack), (Some(1460), Some(true), Some(false)));
    }
}
