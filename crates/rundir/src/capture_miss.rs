//! A capture point that misses packets, as the trace's did: both engines'
//! bottleneck captures leave out the same share of data segments, drawn
//! from the same stream, so a regenerated capture is seen as the trace was.

use units::Rng;

/// Which data segments a capture leaves out, per bottleneck direction.
pub struct CaptureMiss {
    share: [f64; 2],
    rng: Rng,
}

impl CaptureMiss {
    /// Misses `share[dir]` of the TCP data segments crossing direction
    /// `dir` (0 left to right), drawn from the run's "capture.miss" stream.
    pub fn new(seed: u64, share: [f64; 2]) -> CaptureMiss {
        CaptureMiss { share, rng: Rng::stream(seed, "capture.miss") }
    }

    /// Whether the capture leaves out a packet crossing `dir`, which
    /// `tcp_data` tells is a TCP data segment (asked only where a share is
    /// missed). A lossy capture point misses data segments, the packets a
    /// capturing host's buffers overflow on, not the ACKs and handshakes
    /// between them.
    #[inline]
    pub fn skips(&mut self, dir: usize, tcp_data: impl FnOnce() -> bool) -> bool {
        let p = self.share.get(dir).copied().unwrap_or(0.0);
        p > 0.0 && tcp_data() && self.rng.bernoulli(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capture_misses_its_share_of_data_segments_and_nothing_else() {
        let mut m = CaptureMiss::new(7, [0.2, 0.0]);
        let n = 100_000;
        let missed = (0..n).filter(|_| m.skips(0, || true)).count() as f64 / n as f64;
        // Binomial: sd = sqrt(0.2 * 0.8 / n) = 0.0013; five of them.
        assert!((missed - 0.2).abs() < 0.0065, "{missed}");
        assert!((0..1000).all(|_| !m.skips(0, || false)), "ACKs are never missed");
        assert!((0..1000).all(|_| !m.skips(1, || true)), "a direction with no share misses nothing");
    }
}
