//! Linux "cooked" captures (tcpdump -i any): SLL (LINKTYPE 113, 16-byte
//! header) and SLL2 (LINKTYPE 276, 20 bytes). Only the sender's address is
//! recorded, so there is no destination MAC.

use crate::decode::{DecodeError, L2};
use crate::ethernet::follow_ethertype;

const ARPHRD_ETHER: u16 = 1;
/// Netlink captures put a netlink family, not an EtherType, in the protocol.
const ARPHRD_NETLINK: u16 = 824;

pub(crate) fn parse_sll(data: &[u8]) -> Result<L2, DecodeError> {
    let h: &[u8; 16] = data.first_chunk().ok_or(DecodeError::Truncated("linux cooked header"))?;
    let hatype = u16::from_be_bytes([h[2], h[3]]);
    let halen = u16::from_be_bytes([h[4], h[5]]);
    let proto = u16::from_be_bytes([h[14], h[15]]);
    finish(data, hatype, halen, &h[6..14], proto, 16)
}

pub(crate) fn parse_sll2(data: &[u8]) -> Result<L2, DecodeError> {
    let h: &[u8; 20] = data.first_chunk().ok_or(DecodeError::Truncated("linux cooked v2 header"))?;
    let proto = u16::from_be_bytes([h[0], h[1]]);
    let hatype = u16::from_be_bytes([h[8], h[9]]);
    finish(data, hatype, h[11] as u16, &h[12..20], proto, 20)
}

fn finish(data: &[u8], hatype: u16, halen: u16, addr: &[u8], proto: u16, off: usize) -> Result<L2, DecodeError> {
    if hatype == ARPHRD_NETLINK {
        return Err(DecodeError::NotIp(proto));
    }
    let mut l2 = L2::default();
    if hatype == ARPHRD_ETHER && halen == 6 {
        l2.src_mac = crate::field::array(addr, 0);
    }
    (l2.net, l2.offset) = follow_ethertype(data, off, proto, &mut l2.vlans)?;
    Ok(l2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::Net;

    fn hex(s: &str) -> Vec<u8> {
        crate::test_hex(s)
    }

    #[test]
    fn sll_ipv4_from_ethernet_device() {
        let p = hex("0000 0001 0006 0a0b0c0d0e0f 0000 0800 45");
        let l2 = parse_sll(&p).unwrap();
        assert_eq!(l2.src_mac, Some([0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f]));
        assert_eq!(l2.dst_mac, None);
        assert_eq!((l2.net, l2.offset), (Net::V4, 16));
    }

    #[test]
    fn sll_tunnel_has_no_mac_and_vlan_is_followed() {
        let p = hex("0004 0300 0000 0000000000000000 8100 0005 86dd 60");
        let l2 = parse_sll(&p).unwrap();
        assert_eq!(l2.src_mac, None);
        assert_eq!(l2.vlans.ids(), &[5]);
        assert_eq!((l2.net, l2.offset), (Net::V6, 20));
    }

    #[test]
    fn sll_non_ip_and_truncated() {
        let arp = hex("0000 0001 0006 0a0b0c0d0e0f 0000 0806");
        assert_eq!(parse_sll(&arp), Err(DecodeError::NotIp(0x0806)));
        let nl = hex("0000 0338 0000 0000000000000000 0010");
        assert_eq!(parse_sll(&nl), Err(DecodeError::NotIp(0x0010)));
        assert!(matches!(parse_sll(&arp[..15]), Err(DecodeError::Truncated(_))));
    }

    #[test]
    fn sll2_ipv6() {
        let p = hex("86dd 0000 00000002 0001 00 06 0a0b0c0d0e0f0000 60");
        let l2 = parse_sll2(&p).unwrap();
        assert_eq!(l2.src_mac, Some([0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f]));
        assert_eq!((l2.net, l2.offset), (Net::V6, 20));
        let vlan = hex("8100 0000 00000002 0001 00 06 0a0b0c0d0e0f0000 0007 0800 45");
        let l2 = parse_sll2(&vlan).unwrap();
        assert_eq!((l2.net, l2.offset), (Net::V4, 24));
        assert_eq!(l2.vlans.ids(), &[7]);
        assert!(matches!(parse_sll2(&p[..19]), Err(DecodeError::Truncated(_))));
    }
}
