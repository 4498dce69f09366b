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

/// The prefixes (IPv4, IPv6) every host of `side` has its address in, as
/// CIDR text: what re-extraction from a capture needs to put hosts back on
/// their sides.
pub fn side_prefixes(side: Side) -> [&'static str; 2] {
    match side {
        Side::Left => ["10.1.0.0/16", "fd00:0:0:1::/64"],
        Side::Right => ["10.2.0.0/16", "fd00:0:0:2::/64"],
    }
}

pub const EPHEMERAL_FIRST: u16 = 32768;
pub const EPHEMERAL_LAST: u16 = 60999;

#[cfg(test)]
mod tests {
    use super::*;

    fn within(a: std::net::IpAddr, cidr: &str) -> bool {
        let (net, len) = cidr.split_once('/').unwrap();
        let len: u32 = len.parse().unwrap();
        match (a, net.parse::<std::net::IpAddr>().unwrap()) {
            (std::net::IpAddr::V4(a), std::net::IpAddr::V4(n)) => (u32::from(a) ^ u32::from(n)).checked_shr(32 - len).unwrap_or(0) == 0,
            (std::net::IpAddr::V6(a), std::net::IpAddr::V6(n)) => (u128::from(a) ^ u128::from(n)).checked_shr(128 - len).unwrap_or(0) == 0,
            _ => false,
        }
    }

    #[test]
    fn every_host_address_lies_in_its_sides_prefixes_and_not_the_others() {
        for side in [Side::Left, Side::Right] {
            let other = if side == Side::Left { Side::Right } else { Side::Left };
            for index in [0, 1, 255, 256, 65_533] {
                for ipv6 in [false, true] {
                    let a = Host { side, index, tcp_cfg: 0, next_port: 0, ipv6 }.addr();
                    assert!(side_prefixes(side).iter().any(|p| within(a, p)), "{a} outside {:?}", side_prefixes(side));
                    assert!(!side_prefixes(other).iter().any(|p| within(a, p)), "{a} inside {:?}", side_prefixes(other));
                }
            }
        }
    }
}
