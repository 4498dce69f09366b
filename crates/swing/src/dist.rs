//! Empirical distributions, stored as sorted values.
//!
//! Up to [`DIST_CAP`] samples are kept exactly; a larger sample is reduced to
//! that many equally spaced quantiles. Either way sampling is inverse-CDF
//! lookup on a step function, so the generator draws only values that the
//! trace showed (as Swing did).

use serde::{Deserialize, Serialize};
use units::Rng;

/// Values kept per distribution.
pub const DIST_CAP: usize = 4096;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dist {
    /// Number of samples observed.
    pub n: u64,
    /// Sorted values: all samples when `n` ≤ the cap, else equally spaced quantiles.
    pub values: Vec<f64>,
}

impl Dist {
    /// From raw samples (non-finite ones are dropped).
    pub fn from_samples(mut v: Vec<f64>) -> Dist {
        v.retain(|x| x.is_finite());
        v.sort_by(f64::total_cmp);
        let n = v.len() as u64;
        if v.len() > DIST_CAP {
            v = Dist::kept_ranks(n).map(|r| v[r as usize]).collect();
        }
        Dist { n, values: v }
    }

    /// The ranks (from 0) of `n` sorted samples that a distribution keeps:
    /// all of them up to the cap, else `DIST_CAP` equally spaced ones,
    /// the first and the last included.
    pub fn kept_ranks(n: u64) -> impl Iterator<Item = u64> {
        let last = n.saturating_sub(1) as f64;
        let kept = n.min(DIST_CAP as u64);
        (0..kept).map(move |i| if n <= DIST_CAP as u64 { i } else { (i as f64 * last / (DIST_CAP - 1) as f64).round() as u64 })
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Inverse-CDF draw; `None` if there are no values.
    pub fn sample(&self, rng: &mut Rng) -> Option<f64> {
        if self.values.is_empty() {
            return None;
        }
        Some(self.values[rng.below(self.values.len() as u64) as usize])
    }

    /// Quantile `q` in [0, 1] (lower step).
    pub fn quantile(&self, q: f64) -> Option<f64> {
        if self.values.is_empty() {
            return None;
        }
        let i = (q.clamp(0.0, 1.0) * (self.values.len() - 1) as f64).round() as usize;
        Some(self.values[i])
    }

    pub fn mean(&self) -> Option<f64> {
        (!self.values.is_empty()).then(|| self.values.iter().sum::<f64>() / self.values.len() as f64)
    }

    /// Two-sample Kolmogorov-Smirnov distance: the largest gap between the two
    /// empirical CDFs.
    pub fn ks_distance(&self, other: &Dist) -> Option<f64> {
        let (a, b) = (&self.values, &other.values);
        if a.is_empty() || b.is_empty() {
            return None;
        }
        let (mut i, mut j, mut d) = (0usize, 0usize, 0f64);
        while i < a.len() && j < b.len() {
            let x = a[i].min(b[j]);
            while i < a.len() && a[i] <= x {
                i += 1;
            }
            while j < b.len() && b[j] <= x {
                j += 1;
            }
            d = d.max((i as f64 / a.len() as f64 - j as f64 / b.len() as f64).abs());
        }
        Some(d)
    }
}

/// Two-sample Kolmogorov-Smirnov distance between weighted samples (value,
/// weight): the largest gap between the two weighted empirical CDFs.
/// Samples with a weight that is not positive and finite count for nothing.
pub fn weighted_ks_distance(a: &[(f64, f64)], b: &[(f64, f64)]) -> Option<f64> {
    weighted_ks_distance_within(a, b, 0.0, 0.0)
}

/// As [`weighted_ks_distance`], with values that differ by at most `rel` of
/// the larger or `abs` counted as equal: the largest F(x − δ) − G(x) or
/// G(x − δ) − F(x), δ = max(rel·x, abs). A measured quantity with a
/// resolution (an RTT estimate) needs it: a point mass copied with a
/// 4 µs error is a plain KS distance of its whole weight.
pub fn weighted_ks_distance_within(a: &[(f64, f64)], b: &[(f64, f64)], rel: f64, abs: f64) -> Option<f64> {
    // Sorted values with their cumulative share.
    let prep = |v: &[(f64, f64)]| {
        let mut v: Vec<(f64, f64)> = v.iter().copied().filter(|(x, w)| x.is_finite() && w.is_finite() && *w > 0.0).collect();
        v.sort_by(|x, y| x.0.total_cmp(&y.0));
        let total: f64 = v.iter().map(|p| p.1).sum();
        let mut acc = 0.0;
        v.iter()
            .map(|&(x, w)| {
                acc += w;
                (x, acc / total)
            })
            .collect::<Vec<_>>()
    };
    let (a, b) = (prep(a), prep(b));
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let cdf = |v: &[(f64, f64)], x: f64| match v.partition_point(|p| p.0 <= x) {
        0 => 0.0,
        k => v[k - 1].1,
    };
    // The x at which x − δ(x) reaches `y` (x − δ(x) increases with x).
    let (rel, abs) = (rel.clamp(0.0, 0.5), abs.max(0.0));
    let lift = |y: f64| if rel > 0.0 && y >= (1.0 - rel) * abs / rel { y / (1.0 - rel) } else { y + abs };
    // F(x − δ) − G(x) steps up only where x − δ(x) meets one of F's values,
    // and G only grows between: the largest gap is at those points.
    let gap = |f: &[(f64, f64)], g: &[(f64, f64)]| f.iter().map(|&(y, share)| share - cdf(g, lift(y))).fold(0.0, f64::max);
    Some(gap(&a, &b).max(gap(&b, &a)).clamp(0.0, 1.0))
}

/// Draws that go through the stored values in a random order, reshuffling
/// after each full pass: the marginal distribution is the same as
/// independent draws, but a run that draws about as many values as the
/// trace showed reproduces the trace's multiset closely (sampling without
/// replacement), which keeps small traces' validation meaningful.
#[derive(Clone, Debug)]
pub struct Deck {
    order: Vec<u32>,
    next: usize,
}

impl Deck {
    pub fn new() -> Deck {
        Deck { order: Vec::new(), next: 0 }
    }

    pub fn draw(&mut self, d: &Dist, rng: &mut Rng) -> Option<f64> {
        let n = d.values.len();
        if n == 0 {
            return None;
        }
        if self.next >= self.order.len() || self.order.len() != n {
            self.order = (0..n as u32).collect();
            for i in (1..n).rev() {
                let j = rng.below(i as u64 + 1) as usize;
                self.order.swap(i, j);
            }
            self.next = 0;
        }
        let v = d.values[self.order[self.next] as usize];
        self.next += 1;
        Some(v)
    }
}

impl Default for Deck {
    fn default() -> Self {
        Deck::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_small_samples_exactly_and_caps_large_ones() {
        let d = Dist::from_samples(vec![3.0, 1.0, f64::NAN, 2.0]);
        assert_eq!((d.n, d.values.clone()), (3, vec![1.0, 2.0, 3.0]));
        let big = Dist::from_samples((0..100_000).map(|i| i as f64).collect());
        assert_eq!(big.n, 100_000);
        assert_eq!(big.values.len(), DIST_CAP);
        assert_eq!((big.values[0], *big.values.last().unwrap()), (0.0, 99_999.0));
        assert!((big.quantile(0.5).unwrap() - 50_000.0).abs() < 30.0);
    }

    #[test]
    fn weighted_ks_reduces_to_the_plain_one_and_follows_the_weights() {
        let a = Dist::from_samples(vec![1.0, 2.0, 3.0, 4.0]);
        let b = Dist::from_samples(vec![2.5, 3.5]);
        let w = |d: &Dist| d.values.iter().map(|&x| (x, 1.0)).collect::<Vec<_>>();
        assert_eq!(weighted_ks_distance(&w(&a), &w(&b)), a.ks_distance(&b));
        // 1 carries 3/4 of the weight on one side, 1/4 on the other.
        let d = weighted_ks_distance(&[(1.0, 3.0), (2.0, 1.0)], &[(1.0, 1.0), (2.0, 3.0)]).unwrap();
        assert!((d - 0.5).abs() < 1e-12, "{d}");
        assert_eq!(weighted_ks_distance(&[(1.0, 0.0)], &[(1.0, 1.0)]), None);
    }

    #[test]
    fn a_tolerance_forgives_small_shifts_only() {
        let a = [(16.882, 3.0), (100.0, 1.0)];
        let b = [(16.878, 3.0), (100.0, 1.0)];
        assert_eq!(weighted_ks_distance(&a, &b), Some(0.75));
        assert_eq!(weighted_ks_distance_within(&a, &b, 0.02, 0.0), Some(0.0));
        assert_eq!(weighted_ks_distance_within(&b, &a, 0.02, 0.0), Some(0.0));
        // 20 ms against 16.9 ms is a real difference.
        let c = [(20.0, 3.0), (100.0, 1.0)];
        assert_eq!(weighted_ks_distance_within(&a, &c, 0.02, 0.0), Some(0.75));
        // Near zero the absolute tolerance decides: 6 µs against 44 µs.
        assert_eq!(weighted_ks_distance_within(&[(6e-6, 1.0)], &[(44e-6, 1.0)], 0.02, 1e-4), Some(0.0));
        assert_eq!(weighted_ks_distance_within(&[(6e-6, 1.0)], &[(44e-6, 1.0)], 0.02, 1e-5), Some(1.0));
        // Random samples: the plain distance agrees with the unweighted one.
        let mut rng = Rng::stream(3, "ks");
        let x: Vec<f64> = (0..200).map(|_| rng.uniform()).collect();
        let y: Vec<f64> = (0..150).map(|_| rng.uniform() * 1.2).collect();
        let w = |v: &[f64]| v.iter().map(|&x| (x, 1.0)).collect::<Vec<_>>();
        let plain = Dist::from_samples(x.clone()).ks_distance(&Dist::from_samples(y.clone())).unwrap();
        assert!((weighted_ks_distance(&w(&x), &w(&y)).unwrap() - plain).abs() < 1e-12);
        assert!(weighted_ks_distance_within(&w(&x), &w(&y), 0.05, 0.0).unwrap() <= plain);
    }

    #[test]
    fn ks_distance_matches_hand_values() {
        let a = Dist::from_samples(vec![1.0, 2.0, 3.0, 4.0]);
        let b = Dist::from_samples(vec![3.0, 4.0, 5.0, 6.0]);
        assert_eq!(a.ks_distance(&b), Some(0.5));
        assert_eq!(a.ks_distance(&a), Some(0.0));
        let c = Dist::from_samples(vec![10.0]);
        assert_eq!(a.ks_distance(&c), Some(1.0));
    }

    #[test]
    fn deck_reproduces_the_multiset_each_pass() {
        let d = Dist::from_samples(vec![5.0, 1.0, 1.0, 9.0, 2.0]);
        let mut rng = Rng::stream(1, "deck");
        let mut deck = Deck::new();
        for _ in 0..3 {
            let mut pass: Vec<f64> = (0..5).map(|_| deck.draw(&d, &mut rng).unwrap()).collect();
            pass.sort_by(f64::total_cmp);
            assert_eq!(pass, d.values);
        }
    }

    #[test]
    fn sample_is_inverse_cdf_of_the_values() {
        let d = Dist::from_samples(vec![1.0, 2.0, 3.0, 4.0]);
        let mut rng = Rng::stream(2, "s");
        let mut counts = [0u32; 4];
        for _ in 0..40_000 {
            counts[d.sample(&mut rng).unwrap() as usize - 1] += 1;
        }
        assert!(counts.iter().all(|&c| (9_500..10_500).contains(&c)), "{counts:?}");
    }
}
