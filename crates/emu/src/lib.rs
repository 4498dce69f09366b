//! The real-time engine.
//!
//! Real programs and real Linux TCP/IP stacks run in network namespaces
//! that this crate makes ([`network`]); each namespace reaches the others
//! only through a TUN device whose other end is the [`core`], which runs
//! every packet through the same paths as the simulator (`net::Fabric`)
//! on CLOCK_MONOTONIC and writes it out when it is due.
//!
//! Addresses come from the benchmarking range ([`addr`]); namespaces carry
//! run-unique names and are removed when their run ends, or by the next
//! run when it was killed ([`netns`]). All unsafe code is in [`sys`].

pub mod addr;
pub mod capture;
pub mod core;
pub mod flows;
pub mod lateness;
pub mod netns;
pub mod network;
pub mod overhead;
pub mod programs;
pub mod run;
pub mod settings;
pub mod sockets;
pub mod spin;
pub mod sys;
pub mod testbed;

pub use crate::core::{Core, CoreConfig, CoreStats};
pub use lateness::Lateness;
pub use network::{Network, SpacePlan, TunCounters};
