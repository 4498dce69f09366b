//! Nodes, links and routes of the simulated network.
//!
//! A host has one access link up to its router and one down from it. Routers
//! forward by destination host through a table indexed by host number, which
//! stays a plain array lookup with thousands of hosts.

use net::Link;
use scenario::Side;
use traffic::HostId;

/// Where a link leads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeRef {
    Host(HostId),
    Router(u32),
}

pub struct Host {
    pub side: Side,
    /// Index of this host among the hosts of its side (for its address).
    pub index: u32,
    pub uplink: u32,
    pub tcp_cfg: u32,
    pub next_port: u16,
}

impl Host {
    /// IPv4 address: 10.1.x.y on the left, 10.2.x.y on the right.
    pub fn addr(&self) -> [u8; 4] {
        let n = self.index + 1;
        let side = match self.side {
            Side::Left => 1,
            Side::Right => 2,
        };
        [10, side, (n >> 8) as u8, n as u8]
    }
}

pub struct Router {
    /// Outgoing link for each destination host.
    pub route: Vec<u32>,
}

/// A link direction as the engine sees it: the model plus wiring.
pub struct LinkSlot {
    pub link: Link,
    pub to: NodeRef,
    pub name: String,
    /// Index into the monitors, if this link is observed.
    pub monitor: Option<u8>,
}

pub const EPHEMERAL_FIRST: u16 = 32768;
pub const EPHEMERAL_LAST: u16 = 60999;
