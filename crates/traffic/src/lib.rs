//! Traffic written once for both engines.
//!
//! Background models and foreground applications are state machines driven
//! through the small [`Transport`] trait: they open connections, write byte
//! counts, mark message boundaries, send datagrams and set timers, and they
//! are told what happened through [`Event`]s. The simulator implements the
//! trait over its own TCP and UDP; the emulator will implement it over real
//! sockets. Nothing here reads a clock or touches the network.
//!
//! Payload is never materialised: a write is a byte count. A message
//! boundary ([`Transport::mark`]) carries a number to the peer application
//! once every byte written before it has been delivered in order, which is
//! how a request tells the server how large a response to send (Swing's
//! clients put the same number in a request header).
//!
//! [`fake`] is a transport for tests: no network, time moved by the test.

pub mod apps;
pub mod background;
pub mod fake;
mod outbox;
pub mod plan;
mod records;
mod responder;
mod timers;
mod transport;

pub use outbox::Outbox;
pub use records::{AppReport, Column, Records};
pub use responder::Responder;
pub use transport::{App, ConnId, Event, HostId, Transport};
