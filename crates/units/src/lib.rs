//! Units shared by every undertow crate, and bounded reading of input files.
//!
//! Inside the core, time is an integer count of nanoseconds ([`Time`] for an
//! instant, [`Dur`] for a span), rates are integer bits per second ([`Rate`])
//! and sizes integer bytes. Human units ("15Mbps", "30ms", "1MB", "66%") are
//! parsed only at the edges, by the functions in [`parse`].
//!
//! Randomness comes from [`Rng`], a small fixed algorithm (xoshiro256**) seeded
//! per component from the run seed and a stream label, so that adding a
//! component never shifts the random numbers another component sees, and the
//! same seed gives the same bits on every platform and release.

mod opt;
pub mod parse_units;
pub mod read;
mod rng;
mod time;

pub use opt::{Bits, Opt};
pub use parse_units as parse;
pub use rng::Rng;
pub use time::{Dur, Rate, Time};
