//! Band-limited white noise: the rate of the noise model, a sum of
//! equal-amplitude sinusoids at every frequency k/T from `low` up to
//! `cutoff` (T the model's active span), each with a uniform random phase:
//! the wide-band background of Kenesi et al. Its spectrum is flat on
//! [low, cutoff] and empty outside, and over the span its mean and standard
//! deviation are exactly those asked for (before clipping at zero).

use super::fft::fft;
use super::Ramps;
use std::f64::consts::TAU;
use units::Rng;

/// Samples per period of the cut-off frequency. Between samples the rate
/// is a straight line, which adds images of the band near multiples of
/// the sample rate; at 20 samples per period their power is below 1e-5 of
/// the band's, and the band's top is attenuated by sinc²(1/20), under 1%.
pub const SAMPLES_PER_PERIOD: f64 = 20.0;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Noise {
    pub mean: f64,
    pub deviation: f64,
    /// The band, Hz.
    pub low: f64,
    pub cutoff: f64,
    /// The model's active span, seconds.
    pub span: f64,
}

impl Noise {
    /// The frequencies k/span in the band, as the range of k (empty if the
    /// band holds none).
    pub fn components(&self) -> std::ops::RangeInclusive<usize> {
        // The band's edges are in it: 0.1 Hz × 60 s is 6, not 6.000000000000001.
        let (low, high) = (self.low * self.span, self.cutoff * self.span);
        let first = (low - 1e-9 * low).ceil().max(1.0) as usize;
        let last = (high + 1e-9 * high).floor() as usize;
        first..=last
    }

    /// Samples of the rate over the span: a power of two, at least
    /// [`SAMPLES_PER_PERIOD`] per period of the cut-off.
    pub fn samples(&self) -> usize {
        ((SAMPLES_PER_PERIOD * self.cutoff * self.span).ceil() as usize).max(16).next_power_of_two()
    }

    /// The rate: exact at the samples (one inverse FFT of the sinusoids'
    /// coefficients), straight lines between them, clipped at zero.
    pub fn ramps(&self, rng: &mut Rng) -> Ramps {
        let m = self.samples();
        let ks = self.components();
        let count = ks.clone().count().max(1) as f64;
        // K sinusoids of amplitude a have variance K·a²/2.
        let a = self.deviation * (2.0 / count).sqrt();
        let (mut re, mut im) = (vec![0.0; m], vec![0.0; m]);
        for k in ks {
            let (s, c) = (TAU * rng.uniform()).sin_cos();
            (re[k], im[k]) = (a * c, a * s);
        }
        fft(&mut re, &mut im);
        // Periodic over the span: the last sample is the first again.
        re.push(re[0]);
        let clipped = re.iter().filter(|&&x| self.mean + x < 0.0).count() as f64 / re.len() as f64;
        let rates = re.iter().map(|x| (self.mean + x).max(0.0)).collect();
        Ramps::new(["noise-udp", "noise-tcp"], rates, self.span / m as f64).with_clipped(clipped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::background::process::RateProcess;

    /// The one-sided periodogram of `x`: the power at each frequency k/T,
    /// k < len/2 (a sinusoid of amplitude a shows a²/2 at its k).
    fn periodogram(x: &[f64]) -> Vec<f64> {
        let n = x.len();
        let mean = x.iter().sum::<f64>() / n as f64;
        let (mut re, mut im): (Vec<f64>, Vec<f64>) = x.iter().map(|v| (v - mean, 0.0)).unzip();
        fft(&mut re, &mut im);
        (0..n / 2).map(|k| 2.0 * (re[k] * re[k] + im[k] * im[k]) / (n as f64).powi(2)).collect()
    }

    /// The rate sampled every millisecond over the span, as a run's 1 ms
    /// series would see it (mean rate per bin).
    fn per_ms(r: &Ramps, span: f64) -> Vec<f64> {
        let bins = (span * 1000.0) as usize;
        (0..bins).map(|b| (r.bits((b + 1) as f64 / 1000.0) - r.bits(b as f64 / 1000.0)) * 1000.0).collect()
    }

    #[test]
    fn the_spectrum_is_flat_up_to_the_cutoff_and_empty_above() {
        // 0.1 to 30 Hz (the seed's widest band) over 2^16 ms, mean 500
        // kbit/s, deviation 100 kbit/s.
        let n = Noise { mean: 5e5, deviation: 1e5, low: 0.1, cutoff: 30.0, span: 65.536 };
        let r = n.ramps(&mut Rng::stream(5, "noise-test"));
        let p = periodogram(&per_ms(&r, n.span));
        let band: Vec<f64> = n.components().map(|k| p[k]).collect();
        let each = 1e10 / band.len() as f64;
        // Every component carries its share of the variance: the sum of
        // sinusoids is flat by construction, and averaging over 1 ms bins
        // (here the samples' own spacing) attenuates 30 Hz by cos²(0.03π),
        // under 1%.
        assert!(band.iter().all(|&b| (b / each - 1.0).abs() < 0.015), "{:?}", band.iter().map(|b| b / each).collect::<Vec<_>>());
        // Above the cut-off and below the low edge, all but nothing.
        let outside: f64 = p.iter().enumerate().filter(|(k, _)| !n.components().contains(k)).map(|(_, v)| v).sum();
        assert!(outside < 1e-5 * 1e10, "{outside}");
        assert_eq!(r.counters()[0], ("clipped", 0.0));
    }

    #[test]
    fn the_band_includes_its_edges() {
        // 0.1 Hz × 60 s is 6 in decimal, a hair above in binary.
        let n = Noise { mean: 1.0, deviation: 1.0, low: 0.1, cutoff: 0.3, span: 60.0 };
        assert_eq!(n.components(), 6..=18);
    }

    #[test]
    fn the_mean_and_deviation_over_the_span_are_those_asked_for() {
        let n = Noise { mean: 1e6, deviation: 3e5, low: 0.0, cutoff: 5.0, span: 100.0 };
        let x = per_ms(&n.ramps(&mut Rng::stream(6, "noise-test")), 100.0);
        let mean = x.iter().sum::<f64>() / x.len() as f64;
        let sd = (x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / x.len() as f64).sqrt();
        assert!((mean / 1e6 - 1.0).abs() < 1e-6, "{mean}");
        assert!((sd / 3e5 - 1.0).abs() < 0.01, "{sd}");
        // Near Gaussian (500 components): 95% within two deviations.
        let within = x.iter().filter(|v| (*v - mean).abs() < 2.0 * sd).count() as f64 / x.len() as f64;
        assert!((within - 0.9545).abs() < 0.02, "{within}");
    }
}
