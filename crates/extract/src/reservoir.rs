//! Bounded sample stores and the percentile rule Swing used.

use units::Rng;

/// Values a class's distribution samples once too many to count
/// (`tally::Values`), and the kept (bytes, writes) pairs: twice the model's
/// `DIST_CAP` quantiles.
pub const DIST_RESERVOIR: usize = 8_192;
/// UDP flows kept per class (the model keeps `DIST_CAP` per class and
/// side), and the sample of a UDP class's gaps or sizes once too many to
/// count.
pub const UDP_RESERVOIR: usize = 8_192;
/// Per-host RTT, packet-pair and hole-fill samples kept (a median needs few).
pub const HOST_RESERVOIR: usize = 256;
/// Per-host MSS values kept.
pub const MSS_RESERVOIR: usize = 32;

/// Algorithm R: exact while fewer than `cap` items were pushed, then a
/// uniform sample of everything pushed. The caller's `Rng` is only drawn
/// from once the store is full, so small traces use no randomness at all.
#[derive(Clone, Debug)]
pub(crate) struct Reservoir<T> {
    items: Vec<T>,
    seen: u64,
}

impl<T> Default for Reservoir<T> {
    fn default() -> Self {
        Reservoir::new()
    }
}

impl<T> Reservoir<T> {
    pub(crate) const fn new() -> Self {
        Reservoir { items: Vec::new(), seen: 0 }
    }

    #[inline]
    pub(crate) fn push(&mut self, x: T, cap: usize, rng: &mut Rng) {
        self.seen += 1;
        if self.items.len() < cap {
            self.items.push(x);
        } else {
            let j = rng.below(self.seen) as usize;
            if j < cap {
                self.items[j] = x;
            }
        }
    }

    /// As `push`, returning the item that is not kept: the one replaced,
    /// or `x` itself when it is not taken.
    pub(crate) fn push_evict(&mut self, x: T, cap: usize, rng: &mut Rng) -> Option<T> {
        self.seen += 1;
        if self.items.len() < cap {
            self.items.push(x);
            None
        } else {
            let j = rng.below(self.seen) as usize;
            if j < cap {
                Some(std::mem::replace(&mut self.items[j], x))
            } else {
                Some(x)
            }
        }
    }

    /// Everything pushed, not only what is kept.
    pub(crate) fn seen(&self) -> u64 {
        self.seen
    }

    pub(crate) fn items(&self) -> &[T] {
        &self.items
    }

    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }
}

/// Swing's percentile (`vals_prctile.c`): the sorted value at index
/// ⌊p·(n−1)/100⌋, i.e. the lower neighbour, never an interpolation. `sorted`
/// must be non-empty and sorted ascending.
pub(crate) fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = (p.clamp(0.0, 100.0) * (sorted.len() - 1) as f64 / 100.0).floor() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Sorted copy without non-finite values.
pub(crate) fn sorted(v: impl IntoIterator<Item = f64>) -> Vec<f64> {
    let mut v: Vec<f64> = v.into_iter().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_below_the_cap_then_uniform() {
        let mut rng = Rng::stream(1, "r");
        let mut r = Reservoir::new();
        for i in 0..10 {
            r.push(i, 16, &mut rng);
        }
        assert_eq!(r.items(), &(0..10).collect::<Vec<_>>()[..]);
        // Past the cap every pushed value has the same chance to be kept:
        // the mean of the kept values stays near the mean of all values.
        let mut r = Reservoir::new();
        for i in 0..100_000u32 {
            r.push(i as f64, 1000, &mut rng);
        }
        assert_eq!((r.len(), r.seen()), (1000, 100_000));
        let mean = r.items().iter().sum::<f64>() / 1000.0;
        assert!((mean - 50_000.0).abs() < 3_000.0, "{mean}");
        // The early values are not all kept, nor all gone.
        let early = r.items().iter().filter(|&&x| x < 10_000.0).count();
        assert!((50..150).contains(&early), "{early}");
    }

    #[test]
    fn swing_percentile_takes_the_lower_neighbour() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile(&v, 50.0), 2.0);
        assert_eq!(percentile(&v, 75.0), 3.0);
        assert_eq!(percentile(&v, 100.0), 4.0);
        assert_eq!(percentile(&v, 0.0), 1.0);
        assert_eq!(percentile(&[7.0], 5.0), 7.0);
        assert_eq!(sorted([3.0, f64::NAN, 1.0]), vec![1.0, 3.0]);
    }
}
