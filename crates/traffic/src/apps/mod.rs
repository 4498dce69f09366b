//! Foreground applications: the programs whose experience is measured.

mod http;

pub use http::{HttpApp, HttpConfig};
