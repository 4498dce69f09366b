//! A class's distribution of one parameter, with each value's client host:
//! counted, not sampled, while that fits.
//!
//! The host goes with each value because sides (and each client's RTT,
//! subtracted from think times) are only known at the end of the pass.
//! [`Tally`] keeps, per (host, value), a bucket with its count, sum, least
//! and greatest value. While there are at most [`TALLY_BUCKETS`] of them
//! each distinct value has a bucket of its own and the distribution is
//! exact. Past that, a host's values share buckets of relative width 2^-7
//! (the same sign, binary exponent and first 7 bits of mantissa, as an HDR
//! histogram's): the count and the least and greatest value stay exact,
//! and a value read at a rank is exact in a bucket of one distinct value,
//! else within its bucket. Nothing is random: the same values give the
//! same buckets in any order.
//!
//! Only when even those buckets are too many (many clients, each with many
//! different values) is the tally turned into a uniform sample of
//! `DIST_RESERVOIR` values ([`Values`]), as Swing's stores were from the
//! start. Memory: at most `TALLY_BUCKETS` buckets of 48 bytes in a hash
//! map of at most 32,768 slots (1.6 MB), or the sample's 8,192 values
//! (128 kB); a class's 13 distributions at most 21 MB, reached only by a
//! class with thousands of clients.

use crate::reservoir::Reservoir;
use rustc_hash::FxHashMap;
use units::Rng;

/// Buckets counted before sampling: room for 8,192 clients with two
/// distinct values each, or a few clients with the model's `DIST_CAP`
/// quantiles' worth of values several times over.
pub const TALLY_BUCKETS: usize = 16_384;
/// Key bits dropped for buckets of relative width 2^-7 (f64 has 52
/// mantissa bits).
const FINE_SHIFT: u32 = 52 - 7;

#[derive(Clone, Copy, Debug)]
struct Bucket {
    count: u64,
    sum: f64,
    min: f64,
    max: f64,
}

impl Bucket {
    fn merge(&mut self, o: &Bucket) {
        self.count += o.count;
        self.sum += o.sum;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
    }

    /// The value at `rank` (from 0) of the bucket's `count` values: the
    /// least and greatest are known, the others are placed on a power
    /// curve between them whose mean is the bucket's, so that reading
    /// every rank keeps the sum.
    fn at(&self, rank: u64) -> f64 {
        if self.min >= self.max || self.count < 2 {
            return self.min;
        }
        let t = rank.min(self.count - 1) as f64 / (self.count - 1) as f64;
        let span = self.max - self.min;
        let mean = (self.sum / self.count as f64).clamp(self.min + span * 1e-6, self.max - span * 1e-6);
        let gamma = (self.max - mean) / (mean - self.min);
        (self.min + span * t.powf(gamma)).clamp(self.min, self.max)
    }
}

/// The total order of f64 as an integer order: negative values below
/// positive ones, each by magnitude.
fn order_key(v: f64) -> i64 {
    let b = v.to_bits() as i64;
    if b < 0 {
        b ^ i64::MAX
    } else {
        b
    }
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Tally {
    /// (host, `order_key >> shift`) → bucket.
    buckets: FxHashMap<(u32, i64), Bucket>,
    /// 0 while every distinct value has its bucket, then `FINE_SHIFT`.
    shift: u32,
}

impl Tally {
    /// Counts `v` of `host`; false (nothing counted) when the buckets of
    /// 2^-7 would be more than `TALLY_BUCKETS`.
    #[inline]
    fn push(&mut self, v: f64, host: u32) -> bool {
        let one = Bucket { count: 1, sum: v, min: v, max: v };
        self.buckets.entry((host, order_key(v) >> self.shift)).and_modify(|b| b.merge(&one)).or_insert(one);
        if self.buckets.len() <= TALLY_BUCKETS {
            return true;
        }
        if self.shift == 0 {
            let mut fine: FxHashMap<(u32, i64), Bucket> = FxHashMap::default();
            for ((h, k), b) in self.buckets.drain() {
                fine.entry((h, k >> FINE_SHIFT)).and_modify(|w| w.merge(&b)).or_insert(b);
            }
            self.buckets = fine;
            self.shift = FINE_SHIFT;
        }
        self.buckets.len() <= TALLY_BUCKETS
    }

    /// Buckets in key order, for a result that does not depend on the
    /// map's.
    fn sorted(&self) -> Vec<((u32, i64), Bucket)> {
        let mut v: Vec<((u32, i64), Bucket)> = self.buckets.iter().map(|(&k, &b)| (k, b)).collect();
        v.sort_unstable_by_key(|e| e.0);
        v
    }

    /// The model's distribution of the values of the hosts `keep` takes,
    /// each read through `f(value, host)` (which must not decrease in the
    /// value).
    fn dist(&self, keep: impl Fn(u32) -> bool, f: impl Fn(f64, u32) -> f64) -> swing::Dist {
        let mut groups: Vec<Bucket> = self
            .sorted()
            .into_iter()
            .filter(|((h, _), _)| keep(*h))
            .map(|((h, _), b)| Bucket { count: b.count, sum: f(b.sum / b.count as f64, h) * b.count as f64, min: f(b.min, h), max: f(b.max, h) })
            .collect();
        groups.sort_by(|a, b| a.min.total_cmp(&b.min).then(a.max.total_cmp(&b.max)));
        let n: u64 = groups.iter().map(|b| b.count).sum();
        let mut values = Vec::new();
        // `below`: values in the groups before `i`.
        let (mut i, mut below) = (0usize, 0u64);
        for r in swing::Dist::kept_ranks(n) {
            while below + groups[i].count <= r {
                below += groups[i].count;
                i += 1;
            }
            values.push(groups[i].at(r - below));
        }
        // Buckets of different hosts may overlap: the values read are
        // each within their bucket, not always in order.
        values.sort_by(f64::total_cmp);
        swing::Dist { n, values }
    }

    /// A uniform sample of `cap` of the values counted, as a reservoir fed
    /// them one by one would hold.
    fn sample(&self, cap: usize, rng: &mut Rng) -> Reservoir<(f64, u32)> {
        let mut r = Reservoir::new();
        for ((h, _), b) in self.sorted() {
            for k in 0..b.count {
                r.push((b.at(k), h), cap, rng);
            }
        }
        r
    }
}

/// A distribution's values with their hosts: counted while the tally
/// holds them, sampled after.
#[derive(Clone, Debug)]
pub(crate) enum Values {
    Counted(Tally),
    Sampled(Reservoir<(f64, u32)>),
}

impl Default for Values {
    fn default() -> Self {
        Values::Counted(Tally::default())
    }
}

impl Values {
    /// Adds `v` of `host` (non-finite values are left out); `cap` is the
    /// sample's size should counting stop.
    #[inline]
    pub(crate) fn push(&mut self, v: f64, host: u32, cap: usize, rng: &mut Rng) {
        if !v.is_finite() {
            return;
        }
        match self {
            Values::Counted(t) => {
                if !t.push(v, host) {
                    *self = Values::Sampled(t.sample(cap, rng));
                }
            }
            Values::Sampled(r) => r.push((v, host), cap, rng),
        }
    }

    /// The model's distribution of the values of the hosts `keep` takes,
    /// each read through `f(value, host)`, which must not decrease in the
    /// value.
    pub(crate) fn dist(&self, keep: impl Fn(u32) -> bool, f: impl Fn(f64, u32) -> f64) -> swing::Dist {
        match self {
            Values::Counted(t) => t.dist(keep, f),
            Values::Sampled(r) => swing::Dist::from_samples(r.items().iter().filter(|(_, h)| keep(*h)).map(|&(v, h)| f(v, h)).collect()),
        }
    }

    /// Values or buckets held.
    pub(crate) fn stored(&self) -> usize {
        match self {
            Values::Counted(t) => t.buckets.len(),
            Values::Sampled(r) => r.len(),
        }
    }

    /// True while the values are counted exactly, each distinct one alone.
    #[cfg(test)]
    fn is_exact(&self) -> bool {
        matches!(self, Values::Counted(t) if t.shift == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reservoir::DIST_RESERVOIR;
    use swing::Dist;

    fn all(_: u32) -> bool {
        true
    }

    fn same(v: f64, _: u32) -> f64 {
        v
    }

    #[test]
    fn exact_under_its_capacity() {
        // As many distinct (host, value) as buckets, many times over and
        // in a shuffled order: the model's quantiles are those of every
        // value, for all hosts and for some.
        let mut rng = Rng::stream(1, "t");
        let mut t = Values::default();
        let mut vals = Vec::new();
        for i in 0..60_000u64 {
            let k = i * 7_919 % TALLY_BUCKETS as u64;
            let (v, h) = ((k / 4) as f64 * 0.37 - 900.0, (k % 4) as u32);
            t.push(v, h, DIST_RESERVOIR, &mut rng);
            vals.push((v, h));
        }
        assert!(t.is_exact() && t.stored() == TALLY_BUCKETS);
        assert_eq!(t.dist(all, same), Dist::from_samples(vals.iter().map(|p| p.0).collect()));
        // Split by host, each read through its own shift.
        let shift = |v: f64, h: u32| (v - h as f64 * 100.0).max(0.0);
        let want = Dist::from_samples(vals.iter().filter(|p| p.1 != 2).map(|&(v, h)| shift(v, h)).collect());
        assert_eq!(t.dist(|h| h != 2, shift), want);
        // Under the model's cap every value is there.
        let mut small = Values::default();
        for v in [5.0, 1.0, 5.0, f64::NAN, 3.0] {
            small.push(v, 0, DIST_RESERVOIR, &mut rng);
        }
        assert_eq!(small.dist(all, same), Dist { n: 4, values: vec![1.0, 3.0, 5.0, 5.0] });
    }

    #[test]
    fn past_its_capacity_within_the_bucket_width() {
        // 200,000 sizes from 1 B to 10 MB, log-uniform, of 3 hosts, with
        // one large value repeated: buckets of 2^-7 hold them.
        let mut rng = Rng::stream(1, "t");
        let mut t = Values::default();
        let mut vals = Vec::new();
        for i in 0..200_000u64 {
            let v = match 10f64.powf(7.0 * (i as f64 * 0.618_034).fract()).round() {
                _ if i % 50 == 0 => 251_900.0,
                v if (v / 251_900.0 - 1.0).abs() < 0.01 => continue,
                v => v,
            };
            t.push(v, (i % 3) as u32, DIST_RESERVOIR, &mut rng);
            vals.push(v);
        }
        assert!(!t.is_exact() && t.stored() <= TALLY_BUCKETS);
        // The buckets' sums keep the values' sum, so their mean, exactly
        // (whole bytes add exactly in f64).
        let Values::Counted(tally) = &t else { panic!("sampled") };
        assert_eq!(tally.buckets.values().map(|b| b.sum).sum::<f64>(), vals.iter().sum::<f64>());
        vals.sort_by(f64::total_cmp);
        let d = t.dist(all, same);
        assert_eq!(d.n, vals.len() as u64);
        for (r, got) in Dist::kept_ranks(d.n).zip(&d.values) {
            let want = vals[r as usize];
            assert!((got - want).abs() <= want / 128.0, "rank {r}: {got} for {want}");
        }
        // The repeated value alone in its buckets is read exactly, as
        // often as it was seen; the quantiles' mean is near the values'.
        let copies = d.values.iter().filter(|&&v| v == 251_900.0).count();
        assert!((80..=84).contains(&copies), "{copies}");
        let (dm, mean) = (d.mean().unwrap(), vals.iter().sum::<f64>() / vals.len() as f64);
        assert!((dm - mean).abs() < 0.005 * mean, "{dm} for {mean}");
    }

    #[test]
    fn the_same_values_in_any_order_give_the_same_buckets() {
        let vals: Vec<f64> = (0..30_000u32).map(|i| (i as f64 * 1.7).sin() * 1e4 + (i % 7) as f64).collect();
        let mut rng = Rng::stream(1, "t");
        let (mut a, mut b) = (Values::default(), Values::default());
        vals.iter().for_each(|&v| a.push(v, 0, DIST_RESERVOIR, &mut rng));
        vals.iter().rev().for_each(|&v| b.push(v, 0, DIST_RESERVOIR, &mut rng));
        assert!(!a.is_exact() && a.stored() == b.stored());
        let (da, db) = (a.dist(all, same), b.dist(all, same));
        assert!(da.values.iter().zip(&db.values).all(|(x, y)| (x - y).abs() <= 1e-9 * x.abs().max(1.0)));
    }

    #[test]
    fn too_many_hosts_and_values_to_count_are_sampled() {
        // 20,000 clients of distinct sizes each: a uniform sample of all
        // values, those counted before included.
        let mut rng = Rng::stream(1, "t");
        let mut t = Values::default();
        for i in 0..100_000u32 {
            t.push((i % 1000) as f64 * 1000.0 + 1.0, i % 20_000, 1_000, &mut rng);
        }
        let Values::Sampled(r) = &t else { panic!("still counted") };
        assert_eq!((r.len(), r.seen()), (1_000, 100_000));
        let mean = r.items().iter().map(|p| p.0).sum::<f64>() / 1000.0;
        assert!((mean - 499_501.0).abs() < 30_000.0, "{mean}");
    }
}
