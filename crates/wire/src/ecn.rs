//! The ECN field of an IP header (RFC 3168 §5): the low two bits of IPv4's TOS
//! byte and of IPv6's traffic class.

/// Not ECN-capable, ECT(1), ECT(0), Congestion Experienced.
pub const NOT_ECT: u8 = 0;
pub const ECT1: u8 = 1;
pub const ECT0: u8 = 2;
pub const CE: u8 = 3;

/// Sets the ECN field of the IP header that starts `ip` to `ecn` (two bits), as a
/// router marking CE does: IPv4's header checksum is updated incrementally (RFC
/// 1624 eqn. 3), so a header that was valid stays valid. Returns false, changing
/// nothing, if `ip` does not start with an IPv4 or IPv6 header.
pub fn set_ecn(ip: &mut [u8], ecn: u8) -> bool {
    let ecn = ecn & 3;
    match ip.first().map(|b| b >> 4) {
        Some(4) if ip.len() >= 20 => {
            let old = u16::from_be_bytes([ip[0], ip[1]]);
            ip[1] = (ip[1] & !3) | ecn;
            let new = u16::from_be_bytes([ip[0], ip[1]]);
            let hc = u16::from_be_bytes([ip[10], ip[11]]);
            // HC' = ~(~HC + ~m + m') in ones' complement arithmetic.
            let mut sum = (!hc) as u32 + (!old) as u32 + new as u32;
            while sum > 0xffff {
                sum = (sum & 0xffff) + (sum >> 16);
            }
            ip[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
            true
        }
        Some(6) if ip.len() >= 40 => {
            ip[1] = (ip[1] & !0x30) | ecn << 4;
            true
        }
        _ => false,
    }
}

/// The ECN field of the IP header that starts `ip`, if it is one.
pub fn ecn_of(ip: &[u8]) -> Option<u8> {
    match ip.first().map(|b| b >> 4) {
        Some(4) if ip.len() >= 20 => Some(ip[1] & 3),
        Some(6) if ip.len() >= 40 => Some(ip[1] >> 4 & 3),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{internet_checksum, Ipv4Repr, Ipv6Repr};

    #[test]
    fn marking_keeps_the_ipv4_checksum_valid_and_touches_only_the_two_bits() {
        let mut h = [0u8; 20];
        Ipv4Repr { src: [198, 18, 0, 1], dst: [198, 18, 1, 1], protocol: 6, ttl: 64, ident: 0xbeef, payload_len: 1480 }.emit(&mut h).unwrap();
        h[1] = 0xb8; // a DSCP (EF) that must survive
        let c = internet_checksum(&{
            let mut z = h;
            z[10..12].fill(0);
            z
        });
        h[10..12].copy_from_slice(&c.to_be_bytes());
        for ecn in [ECT0, CE, ECT1, NOT_ECT, CE] {
            assert!(set_ecn(&mut h, ecn));
            assert_eq!(ecn_of(&h), Some(ecn));
            assert_eq!(h[1] & !3, 0xb8);
            assert_eq!(internet_checksum(&h), 0, "a valid header sums to zero");
        }
    }

    #[test]
    fn ipv6_keeps_its_ecn_in_the_traffic_class() {
        let mut h = [0u8; 40];
        Ipv6Repr { src: [0x20; 16], dst: [0x20; 16], next_header: 6, hop_limit: 64, payload_len: 20 }.emit(&mut h).unwrap();
        h[1] |= 0x0f; // flow label bits
        assert!(set_ecn(&mut h, CE));
        assert_eq!(ecn_of(&h), Some(CE));
        assert_eq!((h[0], h[1] & 0x0f), (0x60, 0x0f));
        assert!(!set_ecn(&mut [0x45; 10], CE), "too short for a header");
        assert_eq!(ecn_of(&[0x11; 40]), None);
    }
}
