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
    /// Speaks IPv6 (40-byte headers): swing virtual hosts of IPv6 trace hosts.
    pub ipv6: bool,
}

impl Host {
    /// Address: 10.1.x.y on the left, 10.2.x.y on the right; for IPv6
    /// hosts fd00:0:0:1::x:y and fd00:0:0:2::x:y.
    pub fn addr(&self) -> std::net::IpAddr {
        let n = self.index + 1;
        let side = match self.side {
            Side::Left => 1,
            Side::Right => 2,
        };
        if self.ipv6 {
            std::net::Ipv6Addr::new(0xfd00, 0, 0, side, 0, 0, (n >> 16) as u16, n as u16).into()
        } else {
            std::net::Ipv4Addr::new(10, side as u8, (n >> 8) as u8, n as u8).into()
        }
    }

    /// IP header bytes of its packets.
    pub fn ip_header(&self) -> u32 {
        if self.ipv6 {
            40
        } else {
            20
        }
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
