//! Random loss applied to packets as they arrive at a link.

use units::Rng;

/// A loss model. Drops happen before the queue, so a lost packet uses no
/// capacity (as netem and dummynet do).
#[derive(Clone, Debug)]
pub enum Loss {
    None,
    /// Each packet is lost independently with probability `p`.
    Bernoulli {
        p: f64,
        rng: Rng,
    },
}

impl Loss {
    pub fn bernoulli(p: f64, rng: Rng) -> Loss {
        if p > 0.0 {
            Loss::Bernoulli { p, rng }
        } else {
            Loss::None
        }
    }

    #[inline]
    pub fn drops(&mut self) -> bool {
        match self {
            Loss::None => false,
            Loss::Bernoulli { p, rng } => rng.bernoulli(*p),
        }
    }

    pub fn rate(&self) -> f64 {
        match self {
            Loss::None => 0.0,
            Loss::Bernoulli { p, .. } => *p,
        }
    }
}
