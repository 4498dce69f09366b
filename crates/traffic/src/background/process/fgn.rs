//! Fractional Gaussian noise: the rate per bin of the fgn model, generated
//! exactly by circulant embedding (Davies & Harte 1987; Wood & Chan 1994),
//! the method of the project's Python `analysis.energy.fgn`.

use super::fft::fft;
use super::Steps;
use units::Rng;

/// γ(k) = ½(|k+1|^2H − 2|k|^2H + |k−1|^2H): the autocovariance of
/// unit-variance fGn at lag `k`.
pub fn autocovariance(k: f64, hurst: f64) -> f64 {
    let h2 = 2.0 * hurst;
    0.5 * ((k + 1.0).abs().powf(h2) - 2.0 * k.abs().powf(h2) + (k - 1.0).abs().powf(h2))
}

/// `n` samples of unit-variance fGn with Hurst parameter `hurst` (0 < H < 1).
pub fn unit_fgn(n: usize, hurst: f64, rng: &mut Rng) -> Vec<f64> {
    Embedding::new(n, hurst).sample(rng)
}

/// The circulant embedding of fGn's covariance for `n` samples.
///
/// The autocovariance up to lag M (M the power of two ≥ n) is embedded in
/// a circulant of size 2M, whose eigenvalues λ are non-negative for fGn.
/// With Z complex standard normal, Y = FFT(√(λ/2M)·Z) has E[YY*] = 2C and
/// E[YYᵀ] = 0, so Re Y has exactly the circulant's covariance and its first
/// n points are fGn.
pub struct Embedding {
    n: usize,
    /// √(λ/2M).
    scale: Vec<f64>,
}

impl Embedding {
    pub fn new(n: usize, hurst: f64) -> Embedding {
        let m = 2 * n.max(1).next_power_of_two();
        let mut re: Vec<f64> = (0..m).map(|k| autocovariance(k.min(m - k) as f64, hurst)).collect();
        let mut im = vec![0.0; m];
        fft(&mut re, &mut im);
        // Rounding can leave an eigenvalue a hair below zero.
        let scale = re.iter().map(|&l| (l.max(0.0) / m as f64).sqrt()).collect();
        Embedding { n, scale }
    }

    /// One series of n samples.
    pub fn sample(&self, rng: &mut Rng) -> Vec<f64> {
        let (mut re, mut im): (Vec<f64>, Vec<f64>) = self.scale.iter().map(|&s| (s * rng.normal(), s * rng.normal())).unzip();
        fft(&mut re, &mut im);
        re.truncate(self.n);
        re
    }
}

/// The fgn model's rate: `bins` bins of `width` seconds, mean `mean` and
/// standard deviation `deviation` (bits per second), clipped at zero.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fgn {
    pub mean: f64,
    pub deviation: f64,
    pub hurst: f64,
    pub width: f64,
    pub bins: usize,
}

impl Fgn {
    pub fn steps(&self, rng: &mut Rng) -> Steps {
        let x = unit_fgn(self.bins, self.hurst, rng);
        let rates: Vec<f64> = x.iter().map(|x| self.mean + self.deviation * x).collect();
        let clipped = rates.iter().filter(|&&r| r < 0.0).count() as f64 / rates.len().max(1) as f64;
        Steps::new(["fgn-udp", "fgn-tcp"], rates.into_iter().map(|r| r.max(0.0)).collect(), self.width).with_clipped(clipped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::background::process::RateProcess;

    #[test]
    fn the_generator_has_the_autocovariance_of_fgn() {
        // Lags 0 to 8, averaged over 1600 series of 1024 samples. For a
        // Gaussian series the estimate's variance is about 2·Σ_{|j|<n} γ(j)²
        // / n per series (Bartlett), so the tolerance is four standard
        // errors of that: 0.005 at H = 0.6, 0.013 at 0.8, 0.046 at 0.9.
        for hurst in [0.6, 0.8, 0.9] {
            let mut rng = Rng::stream(7, "fgn-test");
            let (n, runs) = (1024, 1600);
            let embedding = Embedding::new(n, hurst);
            let sum_sq: f64 = (1 - n as i64..n as i64).map(|j| autocovariance(j as f64, hurst).powi(2)).sum();
            let tolerance = 4.0 * (2.0 * sum_sq / (n * runs) as f64).sqrt();
            let mut sums = [0.0; 9];
            for _ in 0..runs {
                let x = embedding.sample(&mut rng);
                for (k, s) in sums.iter_mut().enumerate() {
                    *s += x.iter().zip(&x[k..]).map(|(a, b)| a * b).sum::<f64>() / (n - k) as f64;
                }
            }
            for (k, s) in sums.iter().enumerate() {
                let (got, want) = (s / runs as f64, autocovariance(k as f64, hurst));
                assert!((got - want).abs() < tolerance, "H {hurst}, lag {k}: {got} against {want} (± {tolerance})");
            }
        }
    }

    #[test]
    fn the_rate_has_the_mean_and_deviation_asked_for() {
        // A long series (2^18 bins) of modest H: the sample mean's standard
        // error σ·N^(H−1) is 0.5% of the mean here, and the sample variance
        // of fGn is biased low by the factor 1 − N^(2H−2).
        let (n, hurst) = (1 << 18, 0.7);
        let f = Fgn { mean: 1e6, deviation: 2e5, hurst, width: 0.01, bins: n };
        let s = f.steps(&mut Rng::stream(3, "fgn-test"));
        let r = s.rates();
        let mean = r.iter().sum::<f64>() / n as f64;
        let sd = (r.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
        let expect_sd = 2e5 * (1.0 - (n as f64).powf(2.0 * hurst - 2.0)).sqrt();
        assert!((mean / 1e6 - 1.0).abs() < 0.02, "{mean}");
        assert!((sd / expect_sd - 1.0).abs() < 0.02, "{sd} {expect_sd}");
        // Five deviations above zero: nothing clipped.
        assert_eq!(s.counters()[0], ("clipped", 0.0));
        assert!((s.mean() - mean).abs() < 1e-6 * mean);
    }

    #[test]
    fn rates_below_zero_are_clipped_and_counted() {
        // Mean one deviation above zero: about Φ(−1) ≈ 15.9% of bins clip.
        let f = Fgn { mean: 1e5, deviation: 1e5, hurst: 0.6, width: 0.01, bins: 1 << 16 };
        let s = f.steps(&mut Rng::stream(4, "fgn-test"));
        let clipped = s.counters()[0].1;
        assert!((clipped - 0.1587).abs() < 0.02, "{clipped}");
        assert!(s.rates().iter().all(|&r| r >= 0.0));
    }
}
