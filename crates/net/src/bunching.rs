//! Packets delivered in pairs.

use crate::element::{Element, Verdict};
use crate::packet::Packet;
use units::{Rng, Time};

/// Packets delivered in pairs, behind a queue: a packet that waited in the
/// queue and does not complete a pair is, with probability `p`, held back
/// until the packet after it has been serialised too, and both arrive at
/// once (a Wi-Fi aggregate, a receiver's batched interrupts). A share
/// p / (1 + p) of consecutive packets then arrive together; the average
/// rate is unchanged. Order is kept.
#[derive(Clone, Debug)]
pub struct Bunching {
    p: f64,
    rng: Rng,
    /// The last packet was held for the next.
    held: bool,
    /// When the last packet left: no later packet leaves earlier.
    last_out: Time,
}

impl Bunching {
    pub fn new(p: f64, rng: Rng) -> Bunching {
        Bunching { p, rng, held: false, last_out: Time::ZERO }
    }
}

impl Element for Bunching {
    #[inline]
    fn offer(&mut self, now: Time, pkt: &mut Packet) -> Verdict {
        // Held for one more packet of its size: the next one, when the
        // queue had it, leaves with it and completes the pair.
        self.held = !self.held && pkt.queued && self.rng.bernoulli(self.p);
        let out = if self.held { now + pkt.tx } else { now };
        self.last_out = out.max(self.last_out);
        Verdict::Deliver(self.last_out)
    }
}
