//! The Internet checksum (RFC 1071): one's-complement sum of 16-bit words.

use std::net::IpAddr;

/// Adds `data` as big-endian 16-bit words (an odd last byte is padded with
/// zero) to a running 32-bit accumulator; fold with [`finish`].
pub(crate) fn sum(mut acc: u64, data: &[u8]) -> u64 {
    let mut words = data.chunks_exact(2);
    for w in &mut words {
        acc += u16::from_be_bytes([w[0], w[1]]) as u64;
    }
    if let [last] = words.remainder() {
        acc += (*last as u64) << 8;
    }
    acc
}

/// Folds the carries and complements: the value to store in the header.
pub(crate) fn finish(mut acc: u64) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    !(acc as u16)
}

/// The pseudo-header sum for TCP/UDP over IPv4 or IPv6. `len` is the
/// transport length (header + payload); the caller checks it fits.
pub(crate) fn pseudo(src: IpAddr, dst: IpAddr, proto: u8, len: u32) -> Option<u64> {
    let acc = match (src, dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => sum(sum(0, &s.octets()), &d.octets()),
        (IpAddr::V6(s), IpAddr::V6(d)) => sum(sum(0, &s.octets()), &d.octets()),
        _ => return None,
    };
    Some(acc + proto as u64 + (len >> 16) as u64 + (len & 0xffff) as u64)
}

/// Checksum of a whole buffer, e.g. an IPv4 header with its checksum field
/// zeroed; a header with a correct checksum in place gives 0.
pub fn internet_checksum(data: &[u8]) -> u16 {
    finish(sum(0, data))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1071_example() {
        // RFC 1071 section 3: the sum of these words is ddf2, checksum 220d.
        let d = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(internet_checksum(&d), !0xddf2);
    }

    #[test]
    fn known_ipv4_header() {
        // A captured header whose checksum (b861) is known to be right.
        let mut h = [0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7];
        assert_eq!(internet_checksum(&h), 0xb861);
        h[10] = 0xb8;
        h[11] = 0x61;
        assert_eq!(internet_checksum(&h), 0);
    }

    #[test]
    fn odd_length_pads_with_zero() {
        assert_eq!(internet_checksum(&[0x12]), !0x1200);
        assert_eq!(internet_checksum(&[]), 0xffff);
    }

    #[test]
    fn mixed_families_have_no_pseudo_header() {
        let v4: IpAddr = [1, 2, 3, 4].into();
        let v6: IpAddr = [0u8; 16].into();
        assert!(pseudo(v4, v6, 6, 20).is_none());
        assert_eq!(pseudo(v4, v4, 6, 0x1_0002), Some(0x0102 * 2 + 0x0304 * 2 + 6 + 1 + 2));
    }
}
