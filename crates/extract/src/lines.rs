//! Hosts behind one line: several hosts of a side whose packets reached the
//! capture point serialised at one common rate.
//!
//! A line (a home's access link, an office uplink, a shared radio channel)
//! between a group of hosts and the capture point sends their packets one
//! after the other. A packet of one host that queued behind another host's
//! leaves exactly its own serialisation time after it, size / rate, and
//! no packet of the group, its own host's or another's, can follow one
//! closer than that. Hosts on lines of their own
//! interleave as they happen to: the gap from one's packet to the next of
//! another is anything from 0 up. So the *cross-host* gaps of a pair of
//! hosts (a packet of one, of at least `MIN_IP_BYTES`, and the latest
//! packet of the other sent since the first's previous one), as rates
//! size·8 / gap, show a shared line as a cluster at its rate with almost
//! none faster, and separate lines as a spread with most faster than any
//! cluster. A single host's bursts give no cross-host gap at all.
//!
//! Hosts on separate lines of one rate that stay backlogged keep a fixed
//! phase to each other, and then interleave exactly as hosts with access
//! links of that rate behind a faster shared line would (with nothing to
//! queue on it): the capture cannot tell the two apart, while neither
//! lasts. What a shared line does that they do not is carry a lone
//! member's burst back to back at the line's rate: a line also needs
//! `MIN_BACK_TO_BACK` of its members' *own* consecutive packets at its
//! rate, and few of them faster.
//!
//! What is seen is the side of the capture point the senders are on: a
//! line between the capture and a group of hosts spaces what they send
//! before it is captured, while what is sent to them is captured before it
//! crosses the line. So a line is found among the hosts whose packets it
//! carried towards the capture (a home's access link captured on its LAN
//! side is a line the far side's servers share), in that direction only.
//!
//! During the pass, each packet of `MIN_IP_BYTES` or more looks back over
//! the last few packets (`SCAN_PACKETS`, within `WINDOW_NS`) to the latest
//! one of each other sender since its own sender's previous packet, and
//! keeps the rate for that pair of hosts (`PAIR_SAMPLES` a pair, up to
//! `PAIR_CAP` pairs), and the gap from its sender's own previous packet
//! as that host's own rate. Packets between two hosts that talk to each
//! other cross in opposite directions and are skipped. At the end, hosts of
//! one side are joined into lines while the pooled cross-host rates between
//! two groups show a line (`evidence`) at the rates both already have.

use crate::reservoir::Reservoir;
use crate::sides::key_string;
use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, VecDeque};
use swing::Side;
use units::Rng;

/// Packets smaller than this (IP bytes) start no cross-host pair: a line's
/// framing, which its rate also carries, is a large part of an ACK.
pub(crate) const MIN_IP_BYTES: u32 = 540;
/// How far back a packet looks: a 1500-byte packet's time at 480 kbit/s.
const WINDOW_NS: i64 = 25_000_000;
/// ...and over how many packets, for how many other senders at most.
const SCAN_PACKETS: usize = 32;
const SCAN_SENDERS: usize = 8;
/// Cross-host rates kept per pair of hosts, and pairs of hosts kept.
const PAIR_SAMPLES: usize = 128;
const PAIR_CAP: usize = 8192;

/// A line's rate is the highest at which `MIN_BACK_TO_BACK` cross-host
/// rates lie within a factor `TIGHT` of it (back to back, with the framing
/// of packets of different sizes and a capture's clock between);
/// rates above `FASTER` times it followed closer than the line allows.
pub(crate) const TIGHT: f64 = 1.08;
pub(crate) const FASTER: f64 = 1.25;
pub(crate) const MIN_BACK_TO_BACK: u64 = 10;
/// At most this share of the back-to-back and faster rates may be faster.
/// Hosts that send independently give about five faster for each back to
/// back at any rate (gaps spread evenly near zero: below 0.8 of a packet
/// time four times as often as within 8% of it); a shared line none but
/// what a clock or a later queue disturbed.
pub(crate) const MAX_FASTER_SHARE: f64 = 1.0 / 3.0;
/// Lines from 100 kbit/s to 500 Mbit/s, as packet pairs: beyond, a
/// microsecond clock cannot tell back to back from faster.
pub(crate) const MIN_LINE_BPS: f64 = crate::netparams::MIN_CAPACITY_BPS;
pub(crate) const MAX_LINE_BPS: f64 = crate::netparams::MAX_CAPACITY_BPS;

#[derive(Clone, Copy, Debug)]
struct Sent {
    t: i64,
    src: u32,
    dst: u32,
}

/// The cross-host rates of every pair of hosts, gathered during the pass.
pub(crate) struct LineTracker {
    recent: VecDeque<Sent>,
    /// Per pair of hosts (the lower id in the high half), their rates.
    pairs: FxHashMap<u64, Reservoir<f32>>,
    /// Per host, the rates of its own consecutive packets.
    own: Vec<Reservoir<f32>>,
    /// Cross-host rates of pairs of hosts not kept because `PAIR_CAP`
    /// pairs were held already.
    pub dropped_samples: u64,
    rng: Rng,
    senders: Vec<u32>,
}

impl Default for LineTracker {
    fn default() -> Self {
        LineTracker {
            recent: VecDeque::with_capacity(SCAN_PACKETS + 1),
            pairs: FxHashMap::default(),
            own: Vec::new(),
            dropped_samples: 0,
            rng: Rng::stream(0, "extract.lines"),
            senders: Vec::with_capacity(SCAN_SENDERS),
        }
    }
}

/// The rate at which `ip_len` bytes follow a packet `gap` ns before them
/// (infinite for none: two packets at one instant).
fn rate(ip_len: u32, gap: i64) -> f32 {
    if gap > 0 {
        (ip_len as f64 * 8e9 / gap as f64) as f32
    } else {
        f32::INFINITY
    }
}

fn key(a: u32, b: u32) -> u64 {
    (a.min(b) as u64) << 32 | a.max(b) as u64
}

impl LineTracker {
    /// A packet of `ip_len` bytes from host `src` to `dst` at `t` (ns).
    #[inline]
    pub(crate) fn packet(&mut self, t: i64, src: u32, dst: u32, ip_len: u32) {
        if ip_len >= MIN_IP_BYTES {
            self.senders.clear();
            for k in (0..self.recent.len()).rev() {
                let q = self.recent[k];
                if t - q.t > WINDOW_NS || t < q.t {
                    break;
                }
                if q.src == src {
                    self.own_sample(src, rate(ip_len, t - q.t));
                    break;
                }
                // Its own peer's packets, and packets to it, cross the
                // other way; one sample per other sender, its latest.
                if q.src == dst || q.dst == src || self.senders.contains(&q.src) {
                    continue;
                }
                self.senders.push(q.src);
                self.sample(key(q.src, src), rate(ip_len, t - q.t));
                if self.senders.len() == SCAN_SENDERS {
                    break;
                }
            }
        }
        if self.recent.len() == SCAN_PACKETS {
            self.recent.pop_front();
        }
        self.recent.push_back(Sent { t, src, dst });
    }

    fn own_sample(&mut self, host: u32, rate: f32) {
        let h = host as usize;
        if self.own.len() <= h {
            self.own.resize_with(h + 1, Reservoir::new);
        }
        self.own[h].push(rate, PAIR_SAMPLES, &mut self.rng);
    }

    fn sample(&mut self, k: u64, rate: f32) {
        let n = self.pairs.len();
        match self.pairs.get_mut(&k) {
            Some(r) => r.push(rate, PAIR_SAMPLES, &mut self.rng),
            None if n < PAIR_CAP => {
                let mut r = Reservoir::new();
                r.push(rate, PAIR_SAMPLES, &mut self.rng);
                self.pairs.insert(k, r);
            }
            None => self.dropped_samples += 1,
        }
    }

    /// Pairs of hosts with cross-host rates kept.
    pub(crate) fn pairs(&self) -> usize {
        self.pairs.len()
    }

    /// Stored values, for the memory accounting.
    pub(crate) fn stored(&self) -> usize {
        self.pairs.values().map(|r| r.len()).sum::<usize>() + self.own.iter().map(|r| r.len()).sum::<usize>()
    }

    /// The lines among hosts whose side is `side_of[i]`; hosts with
    /// `excluded[i]` (at the capture point: nothing between them and it)
    /// are on none. Addresses from `addr`.
    pub(crate) fn lines(&self, side_of: &[Side], excluded: &[bool], addr: &[u128]) -> Vec<swing::Line> {
        // Pairs of hosts that may share a line, in a fixed order.
        let mut pairs: Vec<(u32, u32, &[f32])> = self
            .pairs
            .iter()
            .map(|(&k, r)| ((k >> 32) as u32, k as u32, r.items()))
            .filter(|&(a, b, _)| side_of[a as usize] == side_of[b as usize] && !excluded[a as usize] && !excluded[b as usize])
            .collect();
        pairs.sort_unstable_by_key(|&(a, b, _)| (a, b));
        let own = |h: u32| self.own.get(h as usize).map_or(&[][..], |r| r.items());
        let mut groups = join(&pairs, &own);
        groups.sort_by_key(|g| (side_of[g.hosts[0] as usize], g.hosts[0]));
        groups
            .into_iter()
            .map(|g| swing::Line {
                side: side_of[g.hosts[0] as usize],
                hosts: g.hosts.iter().map(|&h| key_string(addr[h as usize])).collect(),
                rate_bps: g.evidence.rate_bps,
                back_to_back: g.evidence.back_to_back,
                faster: g.evidence.faster,
            })
            .collect()
    }
}

/// What a set of cross-host rates shows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Evidence {
    /// The median of the back-to-back rates.
    pub rate_bps: f64,
    pub back_to_back: u64,
    pub faster: u64,
}

impl Evidence {
    /// Few enough faster to be one line.
    fn shared(&self) -> bool {
        few_faster(self.back_to_back, self.faster)
    }

    fn agrees(&self, rate: Option<f64>) -> bool {
        rate.is_none_or(|r| (r / TIGHT..=r * TIGHT).contains(&self.rate_bps))
    }
}

/// Of `rates`, how many lie within `TIGHT` of `rate` (back to back at it)
/// and how many above `FASTER` times it.
fn at_rate(rates: &[f32], rate: f64) -> (u64, u64) {
    let (lo, hi) = (rate / TIGHT, rate * TIGHT);
    rates.iter().map(|&x| x as f64).fold((0, 0), |(b, f), x| (b + (lo..=hi).contains(&x) as u64, f + (x > rate * FASTER) as u64))
}

/// Few enough of `faster` against `back_to_back` for one line.
fn few_faster(back_to_back: u64, faster: u64) -> bool {
    faster as f64 <= MAX_FASTER_SHARE * (faster + back_to_back) as f64
}

/// The line `rates` show, if any: from the highest rate within
/// `MIN_LINE_BPS..=MAX_LINE_BPS` that at least `MIN_BACK_TO_BACK` of them
/// lie within `TIGHT` of, down to `FASTER` below it, the rate the most lie
/// within `TIGHT` of (a few stray gaps above a busy line's own, which a
/// faster link after it moves by the difference of two packets' times
/// there, are not its rate); its window's rates are back to back, its
/// median the rate, and those above `FASTER` times it faster. None when no
/// rate has so many near it.
pub(crate) fn evidence(rates: &[f32]) -> Option<Evidence> {
    if (rates.len() as u64) < MIN_BACK_TO_BACK {
        return None;
    }
    let mut r: Vec<f64> = rates.iter().map(|&x| x as f64).filter(|x| !x.is_nan()).collect();
    r.sort_unstable_by(|a, b| b.total_cmp(a));
    // In descending order, how many are above `x`, and how many at least `x`.
    let above = |x: f64| r.partition_point(|&y| y > x);
    let at_least = |x: f64| r.partition_point(|&y| y >= x);
    let near = |x: f64| (above(x * TIGHT), at_least(x / TIGHT));
    let in_range = |x: &f64| (MIN_LINE_BPS..=MAX_LINE_BPS).contains(x);
    let top = r.iter().copied().filter(in_range).find(|&x| {
        let (hi, lo) = near(x);
        (lo - hi) as u64 >= MIN_BACK_TO_BACK
    })?;
    // The densest window from there down (the highest of equals).
    let (mut best, mut most) = (top, 0);
    for &x in r.iter().filter(|&&x| x <= top && x >= top / FASTER && in_range(&x)) {
        let (hi, lo) = near(x);
        if lo - hi > most {
            (best, most) = (x, lo - hi);
        }
    }
    let (hi, lo) = near(best);
    let window = &r[hi..lo];
    Some(Evidence { rate_bps: window[window.len() / 2], back_to_back: window.len() as u64, faster: above(window[window.len() / 2] * FASTER) as u64 })
}

/// A line found: its hosts and what the cross-host rates among them show.
struct Group {
    hosts: Vec<u32>,
    evidence: Evidence,
}

/// A group being formed: its hosts, the cross-host rates among them, its
/// members' own rates and the line those show.
struct Forming {
    hosts: Vec<u32>,
    rates: Vec<f32>,
    own: Vec<f32>,
    rate: Option<f64>,
}

impl Forming {
    /// Its members' own packets allow a line at `rate`: few faster.
    fn own_allow(&self, rate: f64) -> bool {
        let (b, f) = at_rate(&self.own, rate);
        few_faster(b, f)
    }
}

/// Joins hosts into lines: from single hosts, the two groups whose pooled
/// cross-host rates show a line most firmly (most back to back), at a rate
/// that agrees with both groups' own lines and that neither's members' own
/// packets came faster than, are joined, until no two are. A group of two
/// or more hosts is a line if its members' own packets were also back to
/// back at its rate `MIN_BACK_TO_BACK` times (it carried a lone member's
/// burst). `own(h)`: host h's own rates.
fn join<'a>(pairs: &[(u32, u32, &[f32])], own: &dyn Fn(u32) -> &'a [f32]) -> Vec<Group> {
    let mut group_of: BTreeMap<u32, usize> = BTreeMap::new();
    let mut groups: Vec<Option<Forming>> = Vec::new();
    for &(a, b, _) in pairs {
        for h in [a, b] {
            group_of.entry(h).or_insert_with(|| {
                groups.push(Some(Forming { hosts: vec![h], rates: Vec::new(), own: own(h).to_vec(), rate: None }));
                groups.len() - 1
            });
        }
    }
    // Pooled rates between groups (lower index first), and their verdicts.
    let mut between: BTreeMap<(usize, usize), Vec<f32>> = BTreeMap::new();
    for &(a, b, r) in pairs {
        let (x, y) = (group_of[&a], group_of[&b]);
        between.entry((x.min(y), x.max(y))).or_default().extend_from_slice(r);
    }
    let mut verdicts: BTreeMap<(usize, usize), Option<Evidence>> = between.iter().map(|(&k, r)| (k, evidence(r))).collect();
    loop {
        let fits = |g: usize, e: &Evidence| groups[g].as_ref().is_some_and(|g| e.agrees(g.rate) && g.own_allow(e.rate_bps));
        let best = verdicts
            .iter()
            .filter_map(|(&k, e)| e.filter(|e| e.shared() && fits(k.0, e) && fits(k.1, e)).map(|e| (k, e)))
            .max_by(|a, b| a.1.back_to_back.cmp(&b.1.back_to_back).then(b.0.cmp(&a.0)));
        let Some(((x, y), _)) = best else { break };
        // y joins x: its hosts, the rates among them and between the two.
        let gy = groups[y].take().expect("a live group");
        let across = between.remove(&(x, y)).unwrap_or_default();
        verdicts.remove(&(x, y));
        let gx = groups[x].as_mut().expect("a live group");
        gx.hosts.extend(gy.hosts);
        gx.rates.extend(gy.rates);
        gx.rates.extend(across);
        gx.own.extend(gy.own);
        gx.rate = evidence(&gx.rates).map(|e| e.rate_bps);
        // Every other group's rates with y are now with x.
        let others: Vec<(usize, usize)> = between.keys().copied().filter(|&(a, b)| a == y || b == y || a == x || b == x).collect();
        for k in others {
            let o = if k.0 == x || k.0 == y { k.1 } else { k.0 };
            let r = between.remove(&k).unwrap_or_default();
            verdicts.remove(&k);
            between.entry((x.min(o), x.max(o))).or_default().extend(r);
        }
        for (&k, r) in &between {
            if k.0 == x || k.1 == x {
                verdicts.insert(k, evidence(r));
            }
        }
    }
    groups
        .into_iter()
        .flatten()
        .filter(|g| g.hosts.len() >= 2)
        .filter_map(|mut g| {
            let e = evidence(&g.rates).filter(Evidence::shared)?;
            let (b, f) = at_rate(&g.own, e.rate_bps);
            if b < MIN_BACK_TO_BACK || !few_faster(b, f) {
                return None;
            }
            g.hosts.sort_unstable();
            Some(Group { hosts: g.hosts, evidence: e })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    /// Rates of a line at `bps` and slower.
    fn line_rates(bps: f32, n: usize) -> Vec<f32> {
        (0..n).map(|i| if i % 2 == 0 { bps * (1.0 - 0.001 * (i % 7) as f32) } else { bps / (2.0 + i as f32) }).collect()
    }

    #[test]
    fn a_cluster_with_nothing_faster_is_a_line_at_its_rate() {
        let e = evidence(&line_rates(8e6, 40)).unwrap();
        assert!(e.shared(), "{e:?}");
        assert_eq!(e.back_to_back, 20);
        assert_eq!(e.faster, 0);
        assert!((e.rate_bps / 8e6 - 1.0).abs() < 0.01, "{e:?}");
        // Nine near it are too few.
        assert_eq!(evidence(&line_rates(8e6, 18)), None);
    }

    #[test]
    fn gaps_spread_evenly_near_zero_are_no_line_at_any_rate() {
        // Two hosts each paced at 8 Mbit/s on lines of their own: gaps
        // between one's packet and the other's uniform over a packet time.
        let t = 1500.0 * 8.0 / 8e6;
        let rates: Vec<f32> = (1..=400).map(|i| (1500.0 * 8.0 / (t * i as f64 / 400.0)) as f32).collect();
        let e = evidence(&rates).unwrap();
        assert!(!e.shared(), "{e:?}");
    }

    #[test]
    fn a_few_stray_rates_above_a_busy_line_are_not_its_rate() {
        // 200 back to back at 100 Mbit/s, 12 spread just above it (a faster
        // link after the line moved them): the line is at 100 Mbit/s.
        let mut r = vec![100e6f32; 200];
        r.extend((0..12).map(|i| 112e6 + 1e5 * i as f32));
        let e = evidence(&r).unwrap();
        assert_eq!((e.rate_bps, e.back_to_back, e.faster), (100e6, 200, 0));
    }

    #[test]
    fn faster_than_the_cluster_counts_against_it() {
        // Faster rates spread out (no ten of them together): a third of
        // the back-to-back and faster ones still passes, more does not.
        let spread = |k: usize| (0..k).map(|i| 12e6 * 1.3f32.powi(i as i32));
        let mut r = line_rates(8e6, 40);
        r.extend(spread(10));
        assert_eq!((evidence(&r).unwrap().back_to_back, evidence(&r).unwrap().faster), (20, 10));
        assert!(evidence(&r).unwrap().shared());
        let mut r = line_rates(8e6, 40);
        r.extend(spread(12));
        assert!(!evidence(&r).unwrap().shared());
        // Rates beyond a line's range count as faster, never as a line.
        let mut r = line_rates(8e6, 40);
        r.extend(std::iter::repeat_n(f32::INFINITY, 30));
        assert_eq!(evidence(&r).unwrap().faster, 30);
    }

    /// A tracker fed the packets `(t ms, src, dst, bytes)`.
    fn track(pkts: &[(f64, u32, u32, u32)]) -> LineTracker {
        let mut l = LineTracker::default();
        for &(t, s, d, n) in pkts {
            l.packet((t * MS as f64) as i64, s, d, n);
        }
        l
    }

    #[test]
    fn a_packet_pairs_with_the_latest_of_each_other_sender_since_its_own() {
        // Host 0 to 9 at 0 ms, host 1 to 8 at 0.5 and 1 ms, host 9 to 0 at
        // 1.2 ms, host 0 again at 1.5 ms.
        let l = track(&[(0.0, 0, 9, 1500), (0.5, 1, 8, 1500), (1.0, 1, 8, 1500), (1.2, 9, 0, 1500), (1.5, 0, 9, 1500)]);
        // (0, 1): host 1's first after host 0's, and host 0's second after
        // host 1's latest; host 1's second has its own first in between.
        let r = l.pairs[&key(0, 1)].items();
        assert_eq!(r, [(1500.0 * 8.0 / 0.5e-3) as f32; 2]);
        // Host 9's packet follows host 1's (they may share nothing, which
        // their sides will say), but host 0's packets to 9 and 9's to 0
        // cross each other.
        assert_eq!(l.pairs[&key(1, 9)].items().len(), 1);
        assert!(!l.pairs.contains_key(&key(0, 9)));
        // Small packets start no pair; and nothing older than the window.
        let l = track(&[(0.0, 0, 9, 1500), (0.5, 1, 8, 100), (40.0, 2, 8, 1500)]);
        assert!(l.pairs.is_empty());
    }

    /// Packets of hosts `hosts` (to host 99) through one line of `bps`:
    /// each host sends bursts of `burst` 1500-byte packets at random, one
    /// every `every` ms on average, `n` each.
    fn through_line(bps: f64, hosts: &[u32], every: f64, burst: u32, n: u32, rng: &mut Rng) -> Vec<(f64, u32, u32, u32)> {
        let mut sent: Vec<(f64, u32)> = Vec::new();
        for &h in hosts {
            for _ in 0..n {
                let t = rng.uniform() * every * n as f64;
                sent.extend(std::iter::repeat_n((t, h), burst as usize));
            }
        }
        sent.sort_by(|a, b| a.0.total_cmp(&b.0));
        let tx = 1500.0 * 8.0 / bps * 1e3;
        let mut free = 0.0f64;
        sent.into_iter()
            .map(|(t, h)| {
                free = free.max(t) + tx;
                (free, h, 99, 1500)
            })
            .collect()
    }

    /// Packets of all `sets`, in time order.
    fn merged(sets: Vec<Vec<(f64, u32, u32, u32)>>) -> Vec<(f64, u32, u32, u32)> {
        let mut pkts: Vec<_> = sets.into_iter().flatten().collect();
        pkts.sort_by(|a, b| a.0.total_cmp(&b.0));
        pkts
    }

    fn addrs(n: u32) -> Vec<u128> {
        (0..n).map(|i| 0xffff_0a00_0000 + i as u128).collect()
    }

    #[test]
    fn hosts_through_one_line_are_found_at_its_rate_and_hosts_beside_them_are_not() {
        let rng = &mut Rng::stream(1, "t");
        let (side, none, addr) = (vec![Side::A; 5], vec![false; 5], addrs(5));
        // Hosts 0, 1, 2 share an 8 Mbit/s line; hosts 3 and 4 each have
        // their own (the same traffic, never queued behind each other).
        let l = track(&merged(vec![
            through_line(8e6, &[0, 1, 2], 20.0, 4, 100, rng),
            through_line(8e6, &[3], 20.0, 4, 100, rng),
            through_line(8e6, &[4], 20.0, 4, 100, rng),
        ]));
        let lines = l.lines(&side, &none, &addr);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert_eq!(lines[0].hosts, ["10.0.0.0", "10.0.0.1", "10.0.0.2"]);
        assert!((lines[0].rate_bps / 8e6 - 1.0).abs() < 0.01, "{:?}", lines[0]);
        assert_eq!(lines[0].faster, 0);
        // A host at the capture point shares nothing; nor do hosts of two sides.
        let mut at = none.clone();
        at[1] = true;
        assert_eq!(l.lines(&side, &at, &addr)[0].hosts, ["10.0.0.0", "10.0.0.2"]);
        let mut split = side.clone();
        split[1] = Side::B;
        let lines = l.lines(&split, &none, &addr);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert_eq!(lines[0].hosts, ["10.0.0.0", "10.0.0.2"]);
    }

    #[test]
    fn hosts_on_lines_of_their_own_in_a_fixed_phase_are_no_line() {
        // Two hosts, each sending back to back at 8 Mbit/s (1.5 ms a
        // packet) on its own line, host 1 always 0.6 ms after host 0: the
        // gaps between them (0.6 and 0.9 ms) are as steady as a 20 Mbit/s
        // line's, but neither host's own packets ever left at 20 Mbit/s.
        let pkts: Vec<_> = (0..400).map(|i| (1.5 * (i / 2) as f64 + 0.6 * (i % 2) as f64, (i % 2) as u32, 99, 1500)).collect();
        let l = track(&pkts);
        let cross = evidence(l.pairs[&key(0, 1)].items()).unwrap();
        assert!(cross.shared() && (cross.rate_bps / 20e6 - 1.0).abs() < 0.01, "{cross:?}");
        assert!(l.lines(&[Side::A; 2], &[false; 2], &addrs(2)).is_empty());
    }

    #[test]
    fn a_single_hosts_bursts_are_no_line() {
        let l = track(&through_line(8e6, &[0], 20.0, 10, 100, &mut Rng::stream(1, "t")));
        assert!(l.pairs.is_empty());
        assert!(l.lines(&[Side::A; 1], &[false; 1], &addrs(1)).is_empty());
    }

    #[test]
    fn two_lines_at_different_rates_stay_apart() {
        let rng = &mut Rng::stream(1, "t");
        let pkts = merged(vec![through_line(8e6, &[0, 1], 20.0, 4, 100, rng), through_line(20e6, &[2, 3], 20.0, 4, 100, rng)]);
        let lines = track(&pkts).lines(&[Side::A; 4], &[false; 4], &addrs(4));
        let got: Vec<(Vec<String>, f64)> = lines.iter().map(|l| (l.hosts.clone(), (l.rate_bps / 1e6).round())).collect();
        assert_eq!(got, [(vec!["10.0.0.0".to_string(), "10.0.0.1".into()], 8.0), (vec!["10.0.0.2".into(), "10.0.0.3".into()], 20.0)]);
    }
}
