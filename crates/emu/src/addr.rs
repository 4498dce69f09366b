//! The addresses of emulated hosts: the benchmarking range 198.18.0.0/15
//! (RFC 2544) and a unique-local IPv6 prefix, never a trace's own
//! addresses, so nothing a run sends can reach a real network.

use net::Side;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Every emulated host's IPv4 address is in this /15.
pub const V4_NET: (Ipv4Addr, u8) = (Ipv4Addr::new(198, 18, 0, 0), 15);
/// And every IPv6 address in this /48 ("ut" in ASCII after fd).
pub const V6_NET: (Ipv6Addr, u8) = (Ipv6Addr::new(0xfd75, 0x7400, 0, 0, 0, 0, 0, 0), 48);

/// Hosts per side an IPv4 /16 can number (skipping .0.0 and .255.255).
pub const MAX_PER_SIDE: u32 = 65_534;

/// The address of the `index`th host of `side`: 198.18.x.y on the left,
/// 198.19.x.y on the right; fd75:7400:0:1::x:y and fd75:7400:0:2::x:y.
pub fn host(side: Side, index: u32, ipv6: bool) -> IpAddr {
    debug_assert!(index < MAX_PER_SIDE);
    let n = index + 1;
    let s = match side {
        Side::Left => 0,
        Side::Right => 1,
    };
    if ipv6 {
        Ipv6Addr::new(0xfd75, 0x7400, 0, s + 1, 0, 0, (n >> 16) as u16, n as u16).into()
    } else {
        Ipv4Addr::new(198, 18 + s as u8, (n >> 8) as u8, n as u8).into()
    }
}

/// The prefixes (IPv4, IPv6) every host of `side` has its address in, as
/// CIDR text (see `sim::topology::side_prefixes`).
pub fn side_prefixes(side: Side) -> Vec<String> {
    match side {
        Side::Left => vec!["198.18.0.0/16".into(), "fd75:7400:0:1::/64".into()],
        Side::Right => vec!["198.19.0.0/16".into(), "fd75:7400:0:2::/64".into()],
    }
}

/// Whether `a` is inside the emulator's ranges.
pub fn contained(a: IpAddr) -> bool {
    match a {
        IpAddr::V4(v4) => u32::from(v4) >> (32 - V4_NET.1) == u32::from(V4_NET.0) >> (32 - V4_NET.1),
        IpAddr::V6(v6) => u128::from(v6) >> (128 - V6_NET.1) == u128::from(V6_NET.0) >> (128 - V6_NET.1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_of_each_side_get_distinct_addresses_inside_the_benchmarking_range() {
        let mut seen = std::collections::HashSet::new();
        for side in [Side::Left, Side::Right] {
            for i in [0, 1, 255, 256, MAX_PER_SIDE - 1] {
                for v6 in [false, true] {
                    let a = host(side, i, v6);
                    assert!(contained(a), "{a}");
                    assert!(seen.insert(a), "{a} twice");
                }
            }
        }
        assert_eq!(host(Side::Left, 0, false), IpAddr::from([198, 18, 0, 1]));
        assert_eq!(host(Side::Right, MAX_PER_SIDE - 1, false), IpAddr::from([198, 19, 255, 254]));
    }

    #[test]
    fn every_host_address_lies_in_its_sides_prefixes() {
        for side in [Side::Left, Side::Right] {
            let [v4, v6] = [&side_prefixes(side)[0], &side_prefixes(side)[1]];
            for i in [0, 1, 255, 256, MAX_PER_SIDE - 1] {
                let a = host(side, i, false).to_string();
                let b = host(side, i, true).to_string();
                // 198.18.x.y within 198.18.0.0/16; fd75:7400:0:1::x:y within fd75:7400:0:1::/64.
                assert!(a.starts_with(v4.trim_end_matches("0.0/16")), "{a} {v4}");
                assert!(b.starts_with(v6.trim_end_matches(":/64")), "{b} {v6}");
            }
        }
    }

    #[test]
    fn addresses_outside_the_ranges_are_not_contained() {
        for a in ["198.17.255.255", "198.20.0.0", "10.0.0.1", "fd75:7401::1", "::1"] {
            assert!(!contained(a.parse().unwrap()), "{a}");
        }
    }
}
