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
    /// Address: 10.1.x.y on the left, 10.2.x.y on the right, and beyond
    /// the first 65,535 hosts of a side 10.3 and 10.5..., 10.4 and 10.6...
    /// (8 million a side); for IPv6 hosts fd00:0:0:1::x:y and fd00:0:0:2::x:y.
    pub fn addr(&self) -> std::net::IpAddr {
        let n = self.index + 1;
        let side = match self.side {
            Side::Left => 1,
            Side::Right => 2,
        };
        if self.ipv6 {
            std::net::Ipv6Addr::new(0xfd00, 0, 0, side, 0, 0, (n >> 16) as u16, n as u16).into()
        } else {
            std::net::Ipv4Addr::new(10, (side as u32 + 2 * (n >> 16)) as u8, (n >> 8) as u8, n as u8).into()
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

/// The prefixes every host of `side` has its address in, as CIDR text,
/// for as many hosts as a scenario may have: what re-extraction from a
/// capture needs to put hosts back on their sides.
pub fn side_prefixes(side: Side) -> Vec<String> {
    let s = match side {
        Side::Left => 1,
        Side::Right => 2,
    };
    let blocks = (scenario::limits::HOSTS + 1) >> 16;
    let mut out: Vec<String> = (0..=blocks).map(|k| format!("10.{}.0.0/16", s + 2 * k)).collect();
    out.push(format!("fd00:0:0:{s}::/64"));
    out
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
            for index in [0, 1, 255, 256, 65_533, 65_535, 199_999] {
                for ipv6 in [false, true] {
                    let a = Host { side, index, tcp_cfg: 0, next_port: 0, ipv6 }.addr();
                    assert!(side_prefixes(side).iter().any(|p| within(a, p)), "{a} outside {:?}", side_prefixes(side));
                    assert!(!side_prefixes(other).iter().any(|p| within(a, p)), "{a} inside {:?}", side_prefixes(other));
                }
            }
        }
    }

    #[test]
    fn hosts_beyond_a_16_bit_index_keep_distinct_addresses() {
        let host = |side, index| Host { side, index, tcp_cfg: 0, next_port: EPHEMERAL_FIRST, ipv6: false }.addr();
        assert_eq!(host(Side::Left, 0), std::net::Ipv4Addr::new(10, 1, 0, 1));
        assert_eq!(host(Side::Right, 65_534), std::net::Ipv4Addr::new(10, 2, 255, 255));
        assert_eq!(host(Side::Left, 65_535), std::net::Ipv4Addr::new(10, 3, 0, 0));
        assert_eq!(host(Side::Right, 99_999), std::net::Ipv4Addr::new(10, 4, 0x86, 0xa0));
        let mut all: Vec<_> = [Side::Left, Side::Right].iter().flat_map(|&s| (0..200_000).map(move |i| host(s, i))).collect();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), 400_000);
    }
}
