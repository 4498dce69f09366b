//! A sinusoidal rate: r(t) = m + Σ A·sin(2πft + α), the background of
//! Kenesi et al. (one frequency, or the sum of two).

use super::RateProcess;
use std::f64::consts::TAU;

/// One sinusoid: amplitude (bits per second), frequency (Hz), phase at
/// the start (radians).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Wave {
    pub amplitude: f64,
    pub frequency: f64,
    pub phase: f64,
}

/// The mean `m` plus the waves. The caller keeps m ≥ Σ|A| so that the rate
/// never goes below zero.
#[derive(Clone, Debug, PartialEq)]
pub struct Sine {
    mean: f64,
    waves: Vec<Wave>,
}

impl Sine {
    pub fn new(mean: f64, waves: Vec<Wave>) -> Sine {
        Sine { mean, waves }
    }
}

impl RateProcess for Sine {
    fn kinds(&self) -> [&'static str; 2] {
        ["sine-udp", "sine-tcp"]
    }

    fn rate(&self, t: f64) -> f64 {
        self.mean + self.waves.iter().map(|w| w.amplitude * (TAU * w.frequency * t + w.phase).sin()).sum::<f64>()
    }

    /// m·t + Σ (A/ω)(cos α − cos(ωt + α)), ω = 2πf.
    fn bits(&self, t: f64) -> f64 {
        let waves: f64 = self
            .waves
            .iter()
            .map(|w| {
                let omega = TAU * w.frequency;
                w.amplitude / omega * (w.phase.cos() - (omega * t + w.phase).cos())
            })
            .sum();
        self.mean * t + waves
    }

    fn mean(&self) -> f64 {
        self.mean
    }
}

#[cfg(test)]
mod tests {
    use super::super::Pacer;
    use super::*;

    /// The seed's background: m = A = 500 kbit/s at 0.462 Hz, phase 1.
    fn kenesi(waves: usize) -> Sine {
        let w = [Wave { amplitude: 5e5, frequency: 0.462, phase: 1.0 }, Wave { amplitude: 2e5, frequency: 3.1, phase: 0.3 }];
        let m = w[..waves].iter().map(|w| w.amplitude).sum();
        Sine::new(m, w[..waves].to_vec())
    }

    #[test]
    fn the_integral_is_the_closed_form_of_the_rate() {
        // Against the trapezoidal rule on a fine grid.
        let s = kenesi(2);
        let (mut sum, dt) = (0.0, 1e-5);
        for k in 0..200_000 {
            let t = k as f64 * dt;
            sum += 0.5 * (s.rate(t) + s.rate(t + dt)) * dt;
        }
        assert!((sum - s.bits(2.0)).abs() < 1e-3, "{sum} {}", s.bits(2.0));
    }

    /// Packets per 1 s bin of 60 s from `hosts` hosts of 1000-byte packets.
    fn bins(s: Sine, hosts: usize) -> (Vec<usize>, Sine) {
        let mut p = Pacer::new(Box::new(s.clone()), hosts, 1000, units::Time(0));
        let mut counts = vec![0; 60];
        for i in 0..hosts {
            let mut t = p.first(i, 0.0);
            while let Some(at) = t.filter(|&at| at < 60e9) {
                counts[(at / 1e9) as usize] += 1;
                t = p.after(i, at);
            }
        }
        (counts, s)
    }

    #[test]
    fn packets_per_second_follow_the_integral_of_the_rate_within_one_packet() {
        // The ns-2 anchor's check of its own generator, for one and two
        // frequencies, from one host and from seven.
        for (waves, hosts) in [(1, 1), (1, 7), (2, 1), (2, 7)] {
            let (counts, s) = bins(kenesi(waves), hosts);
            for (k, &c) in counts.iter().enumerate() {
                let want = (s.bits(k as f64 + 1.0) - s.bits(k as f64)) / 8000.0;
                assert!((c as f64 - want).abs() <= 1.0, "{waves} waves, {hosts} hosts, second {k}: {c} packets, ∫BW = {want}");
            }
            // In all, the packets the integral holds (the j-th at F = j·8000).
            let total: usize = counts.iter().sum();
            assert_eq!(total, (s.bits(60.0) / 8000.0).floor() as usize);
        }
    }
}
