//! Rates given by samples on a regular grid: held per bin ([`Steps`], the
//! fgn model's rate per bin) or joined by straight lines ([`Ramps`], the
//! noise model's band-limited rate between its samples). Both integrate in
//! closed form from running sums.

use super::RateProcess;

/// A rate held constant over each bin of `width` seconds; zero after the last.
#[derive(Clone, Debug, PartialEq)]
pub struct Steps {
    /// What summary.json calls a source of it over UDP and TCP.
    kinds: [&'static str; 2],
    rates: Vec<f64>,
    width: f64,
    /// Bits before each bin, and after the last.
    before: Vec<f64>,
    clipped: f64,
}

impl Steps {
    pub fn new(kinds: [&'static str; 2], rates: Vec<f64>, width: f64) -> Steps {
        let before = running(rates.iter().map(|r| r * width));
        Steps { kinds, rates, width, before, clipped: 0.0 }
    }

    /// The same, noting the share of bins whose rate was clipped at zero.
    pub fn with_clipped(self, clipped: f64) -> Steps {
        Steps { clipped, ..self }
    }

    pub fn rates(&self) -> &[f64] {
        &self.rates
    }

    /// The bin holding `t` and the time into it.
    fn at(&self, t: f64) -> Option<(usize, f64)> {
        let k = (t / self.width).floor();
        (t >= 0.0 && k < self.rates.len() as f64).then_some((k as usize, t - k * self.width))
    }
}

/// The share of values clipped at zero, and the mean and standard
/// deviation of the values (bins or samples) the rate was made of.
fn counters(values: &[f64], clipped: f64) -> Vec<(&'static str, f64)> {
    let n = values.len().max(1) as f64;
    let mean = values.iter().sum::<f64>() / n;
    let sd = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt();
    vec![("clipped", clipped), ("rate_mean_bps", mean), ("rate_sd_bps", sd)]
}

/// 0, x0, x0 + x1, …
fn running(xs: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut sum = 0.0;
    let mut out = vec![0.0];
    for x in xs {
        sum += x;
        out.push(sum);
    }
    out
}

impl RateProcess for Steps {
    fn kinds(&self) -> [&'static str; 2] {
        self.kinds
    }

    fn rate(&self, t: f64) -> f64 {
        self.at(t).map_or(0.0, |(k, _)| self.rates[k])
    }

    fn bits(&self, t: f64) -> f64 {
        match self.at(t) {
            Some((k, into)) => self.before[k] + self.rates[k] * into,
            None if t <= 0.0 => 0.0,
            None => *self.before.last().expect("one sum at least"),
        }
    }

    fn mean(&self) -> f64 {
        self.before.last().copied().unwrap_or(0.0) / (self.width * self.rates.len().max(1) as f64)
    }

    fn end(&self) -> f64 {
        self.width * self.rates.len() as f64
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        counters(&self.rates, self.clipped)
    }
}

/// A rate given at times 0, h, 2h, … and linear between them; zero after
/// the last sample.
#[derive(Clone, Debug, PartialEq)]
pub struct Ramps {
    /// What summary.json calls a source of it over UDP and TCP.
    kinds: [&'static str; 2],
    samples: Vec<f64>,
    step: f64,
    before: Vec<f64>,
    clipped: f64,
}

impl Ramps {
    pub fn new(kinds: [&'static str; 2], samples: Vec<f64>, step: f64) -> Ramps {
        let before = running(samples.windows(2).map(|w| 0.5 * (w[0] + w[1]) * step));
        Ramps { kinds, samples, step, before, clipped: 0.0 }
    }

    pub fn with_clipped(self, clipped: f64) -> Ramps {
        Ramps { clipped, ..self }
    }

    pub fn samples(&self) -> &[f64] {
        &self.samples
    }

    /// The segment holding `t`, its end values and the time into it.
    fn at(&self, t: f64) -> Option<(usize, f64, f64, f64)> {
        let k = (t / self.step).floor();
        (t >= 0.0 && k < (self.samples.len() - 1) as f64).then(|| {
            let k = k as usize;
            (k, self.samples[k], self.samples[k + 1], t - k as f64 * self.step)
        })
    }
}

impl RateProcess for Ramps {
    fn kinds(&self) -> [&'static str; 2] {
        self.kinds
    }

    fn rate(&self, t: f64) -> f64 {
        self.at(t).map_or(0.0, |(_, a, b, into)| a + (b - a) * into / self.step)
    }

    fn bits(&self, t: f64) -> f64 {
        match self.at(t) {
            Some((k, a, b, into)) => self.before[k] + a * into + (b - a) * into * into / (2.0 * self.step),
            None if t <= 0.0 => 0.0,
            None => *self.before.last().expect("one sum at least"),
        }
    }

    fn mean(&self) -> f64 {
        self.before.last().copied().unwrap_or(0.0) / self.end().max(1e-300)
    }

    fn end(&self) -> f64 {
        self.step * (self.samples.len().max(1) - 1) as f64
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        counters(&self.samples, self.clipped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_integrate_bin_by_bin_and_stop_after_the_last() {
        let s = Steps::new(["fgn-udp", "fgn-tcp"], vec![10.0, 0.0, 30.0], 0.5);
        assert_eq!(s.bits(0.25), 2.5);
        assert_eq!(s.bits(0.75), 5.0);
        assert_eq!(s.bits(1.25), 12.5);
        assert_eq!(s.bits(9.0), 20.0);
        assert_eq!((s.rate(1.1), s.rate(2.0)), (30.0, 0.0));
        assert_eq!(s.mean(), 20.0 / 1.5);
    }

    #[test]
    fn ramps_integrate_the_straight_lines_between_samples() {
        // 0 → 10 over the first second, 10 → 10 over the second.
        let r = Ramps::new(["noise-udp", "noise-tcp"], vec![0.0, 10.0, 10.0], 1.0);
        assert_eq!(r.rate(0.5), 5.0);
        assert_eq!(r.bits(0.5), 1.25);
        assert_eq!(r.bits(1.5), 10.0);
        assert_eq!(r.bits(7.0), 15.0);
        assert_eq!(r.end(), 2.0);
    }
}
