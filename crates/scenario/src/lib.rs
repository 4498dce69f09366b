//! The scenario file: what to simulate, in TOML with human units.
//!
//! This crate is the one owner of the schema. Every other layer (the
//! simulator, the Python command line) loads scenarios through it, so a
//! field is declared once and checked once. Loading reports the first
//! problem as a [`ScenarioError`] naming the file, the field's path and what
//! is allowed.
//!
//! A file may hold named `[cases.NAME]` tables: each is a partial scenario
//! merged over the base (tables merge key by key, everything else is
//! replaced), so one file can describe an experiment and its variants, and
//! `baseline` names the case the others are compared against.

mod assemble;
mod discipline;
mod error;
mod file;
mod fill;
mod path;
mod playback;
mod process;
mod resolve;
mod schema;
mod tagged;
mod values;

pub use assemble::{assemble, Assembled, Command, Hosts};
pub use discipline::{CodelTable, Discipline, PieTable, RedTable};
pub use error::ScenarioError;
pub use file::ScenarioFile;
pub use fill::{to_toml, with_defaults};
pub use path::{
    BunchingElement, DelayElement, ElementKind, GilbertElliottElement, LossElement, OutagesElement, PathElement, QueueElement, ShaperElement,
};
pub use process::{FgnSpec, NoiseSpec, Process, ProcessModel, SineSpec};
pub use resolve::limits;
pub use resolve::{
    AppModel, BackgroundModel, Group, LineParams, LinkParams, OutputParams, PlaybackModel, Resolved, Side, SwingModel, SWING_MAX_HOSTS,
};
pub use schema::*;
pub use values::{Bandwidth, BufferSize, Fraction, QueueSize, RateOrShare, Size, TimeSpan};
