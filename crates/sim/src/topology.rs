//! Nodes, paths and routes of the simulated network.
//!
//! A host has one access path up to its router and one down from it, and
//! may have a path its packets take beyond the observed link (its loss
//! there). Routers forward by destination host through a table indexed by
//! host number, which stays a plain array lookup with thousands of hosts.

use net::{Path, PathSpec};
use scenario::Side;
use traffic::HostId;
use units::Time;

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
    /// The path up to its router.
    pub uplink: u32,
    /// The path what it sends takes after crossing the observed link
    /// (before its router routes it on), if it has one.
    pub beyond: Option<u32>,
    /// Its uplink starts with the loss of what it sends (counted as
    /// `lost_before_link`).
    pub loses: bool,
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

/// A path as the engine sees it: the elements, what they were built from,
/// and wiring.
pub struct PathSlot {
    pub path: Path,
    pub spec: PathSpec,
    pub to: NodeRef,
    pub name: String,
    /// Index into the monitors, if this path is observed.
    pub monitor: Option<u8>,
    /// The wake-up event pending for the path's elements, if any.
    pub wake_at: Option<Time>,
}

pub const EPHEMERAL_FIRST: u16 = 32768;
pub const EPHEMERAL_LAST: u16 = 60999;
