//! The element trait: one step of a path.

use crate::packet::Packet;
use units::Time;

/// Why a packet did not make it across an element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DropReason {
    /// A loss element discarded it.
    Loss,
    /// The queue was full (tail drop, overflow).
    QueueFull,
    /// An active queue dropped it before the queue was full (RED's early
    /// drop, PIE, CoDel).
    Early,
    /// An active queue dropped it because its average was past its upper
    /// threshold (RED's forced drop).
    Forced,
}

impl DropReason {
    pub const ALL: [DropReason; 4] = [DropReason::Loss, DropReason::QueueFull, DropReason::Early, DropReason::Forced];

    /// The name used in summaries.
    pub fn name(self) -> &'static str {
        match self {
            DropReason::Loss => "loss",
            DropReason::QueueFull => "overflow",
            DropReason::Early => "early",
            DropReason::Forced => "forced",
        }
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// What an element answers for a packet it is offered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The packet leaves the element at this instant (its last bit, for a
    /// serialiser), no earlier than it was offered.
    Deliver(Time),
    /// The element keeps the packet and releases it when woken
    /// ([`Element::poll_at`], [`Element::wake`]).
    Hold,
    Drop(DropReason),
}

/// What an element gives back when woken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Release {
    /// A held packet leaves now.
    Pass(Packet),
    /// A held packet is dropped now (an active queue dropping at dequeue).
    Drop(Packet, DropReason),
}

/// One step of a path: sans-IO, time passed in.
///
/// An element sees its offers and wake-ups in non-decreasing time. It
/// answers an offered packet at once (deliver at, hold, drop); a packet it
/// holds comes back through [`Element::wake`] at or after
/// [`Element::poll_at`], which the engine schedules like any other event.
pub trait Element {
    fn offer(&mut self, now: Time, pkt: &mut Packet) -> Verdict;

    /// When the element next needs waking, if it does.
    fn poll_at(&self) -> Option<Time> {
        None
    }

    /// Woken at `now` (at or after `poll_at`): pushes what leaves or is
    /// dropped now.
    fn wake(&mut self, _now: Time, _out: &mut Vec<Release>) {}

    /// The element decides from the order and times of its packets alone,
    /// never holds one and never needs waking: a path may then offer it a
    /// packet at the instant the element before it delivers, ahead of the
    /// engine's clock, so that a chain of such elements costs one event.
    fn passive(&self) -> bool {
        true
    }
}
