//! Background traffic models: the traffic the foreground competes with.

mod greedy;
mod playback;
pub mod process;
mod rate;
mod replay;
mod swing;
mod web;

pub use greedy::{Greedy, GreedyConfig};
pub use playback::{Granularity, Playback, PlaybackConfig, PlaybackTrace, PlaybackTransport, TracePacket};
pub use rate::{Arrivals, RateSource, RateSourceConfig, RateTransport};
pub use swing::{Structure, SwingConfig, SwingSource};
pub use web::{FlowSizes, Web, WebConfig};
