//! Ethernet II / IEEE 802.3 frames and 802.1Q / 802.1ad VLAN tags.

use crate::decode::{DecodeError, Net, L2};
use crate::field::array;

/// EtherType values this crate knows.
pub mod ethertype {
    pub const IPV4: u16 = 0x0800;
    pub const ARP: u16 = 0x0806;
    pub const VLAN: u16 = 0x8100;
    pub const IPV6: u16 = 0x86dd;
    pub const QINQ: u16 = 0x88a8;
    /// Pre-standard QinQ tags some switches still emit.
    pub const QINQ_9100: u16 = 0x9100;
    pub const QINQ_9200: u16 = 0x9200;
}

/// Deeper stacks than this are taken as garbage rather than followed.
pub const MAX_VLAN_DEPTH: usize = 8;

/// The VLAN ids of a frame, outermost (first on the wire) first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Vlans {
    ids: [u16; MAX_VLAN_DEPTH],
    len: u8,
}

impl Vlans {
    pub fn ids(&self) -> &[u16] {
        self.ids.get(..self.len as usize).unwrap_or(&[])
    }
    /// The outermost tag: the service (S-) tag of a QinQ frame.
    pub fn outer(&self) -> Option<u16> {
        self.ids().first().copied()
    }
    /// The innermost tag: the customer (C-) tag of a QinQ frame.
    pub fn inner(&self) -> Option<u16> {
        self.ids().last().copied()
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// False once full.
    pub(crate) fn push(&mut self, id: u16) -> bool {
        match self.ids.get_mut(self.len as usize) {
            Some(slot) => {
                *slot = id;
                self.len += 1;
                true
            }
            None => false,
        }
    }
}

/// The 14-byte Ethernet II header, for the simulator's pcaps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EthernetRepr {
    pub src: [u8; 6],
    pub dst: [u8; 6],
    pub ethertype: u16,
}

impl EthernetRepr {
    pub const HEADER_LEN: usize = 14;

    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, crate::EmitError> {
        let h: &mut [u8; 14] = crate::emit::header(buf)?;
        h[0..6].copy_from_slice(&self.dst);
        h[6..12].copy_from_slice(&self.src);
        h[12..14].copy_from_slice(&self.ethertype.to_be_bytes());
        Ok(Self::HEADER_LEN)
    }
}

#[inline]
pub(crate) fn parse(data: &[u8]) -> Result<L2, DecodeError> {
    let h: &[u8; 14] = data.first_chunk().ok_or(DecodeError::Truncated("ethernet"))?;
    let mut l2 = L2 { dst_mac: array(h, 0), src_mac: array(h, 6), ..L2::default() };
    let et = u16::from_be_bytes([h[12], h[13]]);
    (l2.net, l2.offset) = follow_ethertype(data, 14, et, &mut l2.vlans)?;
    Ok(l2)
}

/// Follows VLAN tags and LLC/SNAP encapsulation from `et` (found just before
/// `off`) to the network layer. Shared with Linux cooked captures.
pub(crate) fn follow_ethertype(data: &[u8], mut off: usize, mut et: u16, vlans: &mut Vlans) -> Result<(Net, usize), DecodeError> {
    use ethertype::*;
    loop {
        match et {
            IPV4 => return Ok((Net::V4, off)),
            IPV6 => return Ok((Net::V6, off)),
            VLAN | QINQ | QINQ_9100 | QINQ_9200 => {
                let tag: [u8; 4] = array(data, off).ok_or(DecodeError::Truncated("802.1Q tag"))?;
                if !vlans.push(u16::from_be_bytes([tag[0], tag[1]]) & 0x0fff) {
                    return Err(DecodeError::Malformed("more than 8 VLAN tags"));
                }
                et = u16::from_be_bytes([tag[2], tag[3]]);
                off += 4;
            }
            // An 802.3 length: only SNAP with a zero OUI carries an EtherType.
            0..=1500 => {
                match array::<3>(data, off) {
                    Some([0xaa, 0xaa, 0x03]) => {}
                    Some(_) => return Err(DecodeError::NotIp(et)),
                    None => return Err(DecodeError::Truncated("802.2 LLC")),
                }
                match array::<5>(data, off + 3) {
                    Some([0, 0, 0, a, b]) => et = u16::from_be_bytes([a, b]),
                    Some(_) => return Err(DecodeError::NotIp(et)),
                    None => return Err(DecodeError::Truncated("SNAP")),
                }
                off += 8;
            }
            _ => return Err(DecodeError::NotIp(et)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        crate::test_hex(s)
    }

    #[test]
    fn plain_frame() {
        let f = hex("001122334455 66778899aabb 0800 45");
        let l2 = parse(&f).unwrap();
        assert_eq!(l2.dst_mac, Some([0x00, 0x11, 0x22, 0x33, 0x44, 0x55]));
        assert_eq!(l2.src_mac, Some([0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb]));
        assert_eq!((l2.net, l2.offset), (Net::V4, 14));
        assert!(l2.vlans.is_empty());
    }

    #[test]
    fn qinq_keeps_both_ids() {
        let f = hex("001122334455 66778899aabb 88a8 0064 8100 e00a 86dd 60");
        let l2 = parse(&f).unwrap();
        assert_eq!(l2.vlans.ids(), &[100, 10]);
        assert_eq!((l2.vlans.outer(), l2.vlans.inner()), (Some(100), Some(10)));
        assert_eq!((l2.net, l2.offset), (Net::V6, 22));
    }

    #[test]
    fn vlan_depth_is_limited() {
        let mut f = hex("001122334455 66778899aabb");
        for _ in 0..9 {
            f.extend(hex("8100 0001"));
        }
        f.extend(hex("0800 45"));
        assert_eq!(parse(&f), Err(DecodeError::Malformed("more than 8 VLAN tags")));
        let eight = [&f[..12], &f[16..]].concat();
        assert_eq!(parse(&eight).unwrap().vlans.ids(), &[1; 8]);
    }

    #[test]
    fn snap_and_non_ip() {
        let snap = hex("001122334455 66778899aabb 0030 aaaa03 000000 0800 45");
        assert_eq!(parse(&snap).unwrap().offset, 22);
        let stp = hex("0180c2000000 66778899aabb 0026 424203 000000 0000");
        assert_eq!(parse(&stp), Err(DecodeError::NotIp(0x26)));
        let arp = hex("ffffffffffff 66778899aabb 0806 0001");
        assert_eq!(parse(&arp), Err(DecodeError::NotIp(ethertype::ARP)));
    }

    #[test]
    fn truncated_frames() {
        assert_eq!(parse(&hex("001122334455 66778899aabb 08")), Err(DecodeError::Truncated("ethernet")));
        assert_eq!(parse(&hex("001122334455 66778899aabb 8100 00")), Err(DecodeError::Truncated("802.1Q tag")));
        assert_eq!(parse(&hex("001122334455 66778899aabb 0030 aaaa")), Err(DecodeError::Truncated("802.2 LLC")));
        assert_eq!(parse(&hex("001122334455 66778899aabb 0030 aaaa03 00")), Err(DecodeError::Truncated("SNAP")));
        // A 20-byte LLC XID frame is complete and simply not IP.
        assert_eq!(parse(&hex("ffffffffffff 66778899aabb 0006 000103 818001")), Err(DecodeError::NotIp(6)));
    }

    #[test]
    fn emit_round_trips() {
        let r = EthernetRepr { src: [2, 0, 0, 0, 0, 1], dst: [2, 0, 0, 0, 0, 2], ethertype: ethertype::IPV4 };
        let mut b = [0u8; 15];
        assert_eq!(r.emit(&mut b), Ok(14));
        let l2 = parse(&b).unwrap();
        assert_eq!((l2.src_mac, l2.dst_mac), (Some(r.src), Some(r.dst)));
        assert!(r.emit(&mut [0u8; 13]).is_err());
    }
}
