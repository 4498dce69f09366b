//! Background traffic models: the traffic the foreground competes with.

mod greedy;
mod rate;

pub use greedy::{Greedy, GreedyConfig};
pub use rate::{Arrivals, RateSource, RateSourceConfig, RateTransport};
