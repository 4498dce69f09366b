//! The Swing model: what `undertow extract` learns from a packet trace and
//! what the `swing` background model regenerates.
//!
//! Following Swing (Vishwanath and Vahdat), traffic is described in layers:
//! users start **sessions**; a session is a sequence of **RREs**
//! (request-response exchanges) separated by think times; an RRE opens one
//! or more **connections**, in parallel; a connection carries one or more
//! **request/response pairs**. Each layer's parameters are kept per
//! application class and direction as empirical distributions, never fitted
//! to analytic forms. The network is described per host: the round-trip
//! time, capacity and loss rate of the path between the host and the
//! observed link.
//!
//! The model file is JSON (`format` = [`FORMAT`]) so people can read it and
//! the simulator can load it; see docs/swing-model.md.

mod compare;
mod dist;
pub mod example;
mod model;
mod writes;

pub use compare::{compare, compare_over, Comparison, Ks, MixShare, Pair};
pub use dist::{weighted_ks_distance, weighted_ks_distance_within, Deck, Dist, DIST_CAP};
pub use model::*;
pub use writes::{thin, write_size};
