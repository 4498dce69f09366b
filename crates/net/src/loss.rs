//! Random loss: Bernoulli and Gilbert-Elliott, with handshakes apart.

use crate::element::{DropReason, Element, Verdict};
use crate::packet::Packet;
use units::{Rng, Time};

/// A loss process, as a description (see [`Loss`] for the element).
#[derive(Clone, Debug, PartialEq)]
pub enum LossModel {
    /// Each packet is lost independently with probability `p`.
    Bernoulli { p: f64 },
    /// Two states, good and bad, as netem's `loss gemodel p r 1-h 1-k`:
    /// before each packet the state moves good to bad with probability `p`
    /// and bad to good with `r`, and the packet is lost with the loss
    /// probability of the state it was in before that move (`loss_good`,
    /// 1-k; `loss_bad`, 1-h). Bursts of loss last 1/r packets on average.
    GilbertElliott { p: f64, r: f64, loss_good: f64, loss_bad: f64 },
}

impl LossModel {
    /// The long-run share of packets lost.
    pub fn mean(&self) -> f64 {
        match *self {
            LossModel::Bernoulli { p } => p,
            LossModel::GilbertElliott { p, r, loss_good, loss_bad } => {
                if p + r <= 0.0 {
                    return loss_good;
                }
                let bad = p / (p + r);
                (1.0 - bad) * loss_good + bad * loss_bad
            }
        }
    }

    /// Never loses anything.
    pub fn is_none(&self) -> bool {
        match *self {
            LossModel::Bernoulli { p } => p <= 0.0,
            LossModel::GilbertElliott { loss_good, loss_bad, .. } => loss_good <= 0.0 && loss_bad <= 0.0,
        }
    }
}

/// One loss process with its own random stream. In this order, a
/// Bernoulli process (its stream, its kind and probability) lies within
/// the first cache line of its element (see [`Loss`]).
#[derive(Clone, Debug)]
#[repr(C)]
struct Process {
    rng: Rng,
    model: LossModel,
    bad: bool,
}

impl Process {
    #[inline]
    fn drops(&mut self) -> bool {
        match self.model {
            LossModel::Bernoulli { p } => self.rng.bernoulli(p),
            LossModel::GilbertElliott { p, r, loss_good, loss_bad } => {
                // As netem: move, then lose by the state left.
                let was_bad = self.bad;
                if was_bad {
                    if self.rng.bernoulli(r) {
                        self.bad = false;
                    }
                    self.rng.bernoulli(loss_bad)
                } else {
                    if self.rng.bernoulli(p) {
                        self.bad = true;
                    }
                    self.rng.bernoulli(loss_good)
                }
            }
        }
    }
}

/// A loss element. Drops happen on arrival, before any queue behind it, so
/// a lost packet uses no capacity (as netem and dummynet drop). Handshakes
/// (SYNs and SYN/ACKs) may have a process of their own: a path that drops
/// the tails of bursts passes lone SYNs, and their loss is measured apart.
///
/// In this order, what an ordinary packet reads (`apart`, then a Bernoulli
/// `packets`) fills the first cache line of its path element: every swing
/// virtual host has a loss, and a run of many finds most out of cache.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct Loss {
    /// Handshakes follow `handshakes`, not `packets`.
    apart: bool,
    packets: Option<Process>,
    /// Boxed: handshakes are few, and every swing virtual host has a loss.
    handshakes: Option<Box<Process>>,
}

impl Loss {
    /// Every packet by `model`, drawn from `rng`. A model that never loses
    /// draws nothing.
    pub fn new(model: LossModel, rng: Rng) -> Loss {
        Loss { packets: process(model, rng), handshakes: None, apart: false }
    }

    /// Handshakes by `handshakes` (from `hs_rng`), everything else by `packets`.
    pub fn with_handshakes(packets: LossModel, rng: Rng, handshakes: LossModel, hs_rng: Rng) -> Loss {
        Loss { packets: process(packets, rng), handshakes: process(handshakes, hs_rng).map(Box::new), apart: true }
    }
}

fn process(model: LossModel, rng: Rng) -> Option<Process> {
    (!model.is_none()).then_some(Process { model, rng, bad: false })
}

impl Element for Loss {
    #[inline]
    fn offer(&mut self, now: Time, pkt: &mut Packet) -> Verdict {
        let p = if self.apart && pkt.handshake { self.handshakes.as_deref_mut() } else { self.packets.as_mut() };
        match p.map(Process::drops) {
            Some(true) => Verdict::Drop(DropReason::Loss),
            _ => Verdict::Deliver(now),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lost(l: &mut Loss, n: u64, handshake: bool) -> f64 {
        let mut pkt = Packet { handshake, ..Packet::new(0, 100) };
        (0..n).filter(|&i| l.offer(Time(i), &mut pkt) == Verdict::Drop(DropReason::Loss)).count() as f64 / n as f64
    }

    #[test]
    fn bernoulli_loses_its_share_and_handshakes_apart_their_own() {
        let mut l = Loss::new(LossModel::Bernoulli { p: 0.02 }, Rng::stream(3, "loss"));
        assert!((lost(&mut l, 200_000, false) - 0.02).abs() < 0.001);
        assert!((lost(&mut l, 200_000, true) - 0.02).abs() < 0.001, "without a model of their own, handshakes share the packets'");
        let mut l = Loss::with_handshakes(LossModel::Bernoulli { p: 1.0 }, Rng::stream(1, "p"), LossModel::Bernoulli { p: 0.0 }, Rng::stream(1, "h"));
        assert_eq!((lost(&mut l, 1000, false), lost(&mut l, 1000, true)), (1.0, 0.0));
    }

    #[test]
    fn gilbert_elliott_loses_its_stationary_share_in_bursts_of_one_over_r() {
        // netem's `loss gemodel 1% 10% 70% 0.1%`.
        let m = LossModel::GilbertElliott { p: 0.01, r: 0.1, loss_good: 0.001, loss_bad: 0.7 };
        let mean = m.mean();
        assert!((mean - (0.909_09 * 0.001 + 0.090_91 * 0.7)).abs() < 1e-4, "{mean}");
        let mut l = Loss::new(m, Rng::stream(9, "ge"));
        let mut pkt = Packet::new(0, 100);
        let n = 2_000_000u64;
        let drops: Vec<bool> = (0..n).map(|i| l.offer(Time(i), &mut pkt) != Verdict::Deliver(Time(i))).collect();
        let share = drops.iter().filter(|&&d| d).count() as f64 / n as f64;
        assert!((share - mean).abs() < 0.003, "{share} against {mean}");
        // Losses come in bursts: after a loss, the next packet is lost far
        // more often than on average (in the bad state, 0.7 x 0.9 + ...).
        let pairs = drops.windows(2).filter(|w| w[0]).count() as f64;
        let after = drops.windows(2).filter(|w| w[0] && w[1]).count() as f64 / pairs;
        assert!(after > 0.55 && after < 0.7, "{after}");
    }

    /// After the element's tag (8 bytes), `apart` and a Bernoulli process
    /// (its stream, its kind and probability) lie in the element's first
    /// cache line.
    #[test]
    fn an_ordinary_packet_reads_the_first_cache_line_of_its_loss() {
        use std::mem::{offset_of, size_of};
        let model_end = offset_of!(Process, model) + size_of::<u64>() + size_of::<f64>();
        assert_eq!(offset_of!(Loss, apart), 0);
        assert_eq!(offset_of!(Process, rng), 0);
        assert!(8 + offset_of!(Loss, packets) + model_end <= 64);
    }

    #[test]
    fn a_loss_that_never_loses_draws_nothing() {
        let mut l = Loss::new(LossModel::Bernoulli { p: 0.0 }, Rng::stream(1, "x"));
        assert!(l.packets.is_none());
        assert_eq!(lost(&mut l, 10, false), 0.0);
    }
}
