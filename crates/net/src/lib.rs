//! The link model, written once for both engines.
//!
//! A [`Link`] is one direction of a wire: a loss element, a queue, a
//! serialiser running at the link rate and a propagation delay, in that
//! order, with an optional token bucket behind the serialiser. It never
//! reads a clock: [`Link::offer`] takes the packet's arrival
//! time and answers either that the packet was dropped (and why) or the
//! instant its last bit reaches the far end. The simulator turns that instant
//! into one event; the emulator holds the packet until the wall clock gets
//! there.
//!
//! For first-in first-out service the departure instant is known the moment
//! a packet is accepted, because nothing that arrives later can overtake it.
//! The queue therefore keeps only the start-of-service times of the packets
//! still waiting, which is enough to decide drop-tail admission exactly and
//! to measure queueing delay.

mod link;
mod loss;
mod queue;

pub use link::{Bunching, Link, LinkConfig, LinkStats, Outages, Shaper, Verdict};
pub use loss::Loss;
pub use queue::{DropReason, QueueLimit};
