//! How late the core let packets go against their departure times.

/// A histogram of lateness at 1 µs resolution up to 10 ms, and a count of
/// what was later still.
#[derive(Clone, Debug)]
pub struct Lateness {
    bins: Vec<u64>,
    over: u64,
    max_ns: u64,
    count: u64,
}

const BIN_NS: u64 = 1_000;
const BINS: usize = 10_000;

impl Default for Lateness {
    fn default() -> Self {
        Lateness { bins: vec![0; BINS], over: 0, max_ns: 0, count: 0 }
    }
}

impl Lateness {
    pub fn record(&mut self, late_ns: u64) {
        self.count += 1;
        self.max_ns = self.max_ns.max(late_ns);
        match self.bins.get_mut((late_ns / BIN_NS) as usize) {
            Some(b) => *b += 1,
            None => self.over += 1,
        }
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn max_ns(&self) -> u64 {
        self.max_ns
    }

    /// The `q` quantile (0..=1) in nanoseconds, as the upper edge of its
    /// bin; `None` with no samples. Past the histogram: the maximum.
    pub fn quantile_ns(&self, q: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, n) in self.bins.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return Some((i as u64 + 1) * BIN_NS);
            }
        }
        Some(self.max_ns)
    }

    /// Non-empty bins as (upper edge in µs, count), and the count past 10 ms.
    pub fn bins_us(&self) -> (Vec<(u64, u64)>, u64) {
        let b = self.bins.iter().enumerate().filter(|(_, n)| **n > 0).map(|(i, n)| (i as u64 + 1, *n)).collect();
        (b, self.over)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_the_upper_edges_of_the_bins_they_fall_in() {
        let mut l = Lateness::default();
        for ns in [500, 1_500, 2_500, 3_500] {
            l.record(ns);
        }
        assert_eq!(l.quantile_ns(0.5), Some(2_000));
        assert_eq!(l.quantile_ns(1.0), Some(4_000));
        assert_eq!(l.quantile_ns(0.0), Some(1_000));
        l.record(50_000_000);
        assert_eq!(l.quantile_ns(1.0), Some(50_000_000));
        assert_eq!(l.bins_us().1, 1);
    }

    #[test]
    fn an_empty_histogram_has_no_quantiles() {
        assert_eq!(Lateness::default().quantile_ns(0.5), None);
    }
}
