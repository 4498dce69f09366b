//! The simulated hosts as endpoints: their addresses, TCP settings and
//! ports. Their paths and the routes between them are the fabric's
//! (`net::fabric`), under the same numbers.

use scenario::Side;

pub struct Host {
    pub side: Side,
    /// Index of this host among the hosts of its side (for its address).
    pub index: u32,
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

pub const EPHEMERAL_FIRST: u16 = 32768;
pub const EPHEMERAL_LAST: u16 = 60999;
