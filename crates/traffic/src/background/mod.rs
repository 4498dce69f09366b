//! Background traffic models: the traffic the foreground competes with.

mod greedy;
pub mod process;
mod rate;
mod replay;
mod swing;
mod web;

pub use greedy::{Greedy, GreedyConfig};
pub use rate::{Arrivals, RateSource, RateSourceConfig, RateTransport};
pub use swing::{Structure, SwingConfig, SwingSource};
pub use web::{FlowSizes, Web, WebConfig};
