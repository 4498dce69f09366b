//! Paths of elements, written once for both engines.
//!
//! A direction of a link (or of a host's access) is a [`Path`]: a sequence
//! of elements behind one small trait, [`Element`], sans-IO with time
//! passed in. An element is offered a packet ([`Packet`]: its size, flow,
//! class, whether it is a handshake; never its bytes) and answers deliver
//! at an instant, hold, or drop ([`Verdict`]), and says when it next needs
//! waking. The simulator turns a path's answer into one event; the
//! emulator holds the packet until the wall clock gets there.
//!
//! The elements, one file each:
//!
//! - [`loss`]: Bernoulli and Gilbert-Elliott loss, handshakes apart if asked;
//! - [`queue`]: a queue and its serialiser, with a discipline behind the
//!   [`queue::Discipline`] trait (decided at arrival, e.g. drop-tail in
//!   packets or bytes) or the [`queue::Scheduler`] trait (decided at
//!   dequeue, held packets and wake-ups);
//! - [`shaper`] and [`outage`]: token buckets and outage windows that gate
//!   the serialiser of the queue before them;
//! - [`schedule`]: rates and delays that follow a schedule (a time-varying
//!   link);
//! - [`marker`]: the TSWTCM marker (RFC 2859), which colours packets by
//!   a rate profile;
//! - [`bunching`]: packets delivered in pairs;
//! - [`delay`]: propagation delay.
//!
//! [`spec`] describes paths as data ([`PathSpec`]), which scenarios and
//! host plans produce and either engine builds. [`fabric`] holds every path
//! of a dumbbell and its routes: where a packet goes after each path, for
//! both engines. [`monitor`] counts what an observed path carries, per bin.
//!
//! A new queue discipline is a type implementing `Discipline` or
//! `Scheduler` in `queue/`, named by a `DisciplineSpec` variant; a new
//! element kind implements `Element` (and, for speed, gets a `Stage`
//! variant). Neither touches an engine.

pub mod bunching;
pub mod delay;
pub mod element;
pub mod fabric;
pub mod loss;
pub mod marker;
pub mod monitor;
pub mod outage;
pub mod packet;
pub mod path;
pub mod queue;
pub mod schedule;
pub mod shaper;
pub mod spec;

pub use element::{DropReason, Element, Release, Verdict};
pub use fabric::{Fabric, HostId, LineSpec, Next, Side};
pub use loss::{Loss, LossModel};
pub use outage::Outages;
pub use packet::{Colour, Packet, MTU};
pub use path::{ClassCounts, Outcome, Path, PathStats, Stage};
pub use queue::{QueueLimit, QueueStats};
pub use schedule::{RateSchedule, Schedule};
pub use shaper::Shaper;
pub use spec::{DelaySpec, DisciplineSpec, ElementSpec, PathSpec, RateSpec, SpecError};
