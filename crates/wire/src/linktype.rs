//! Link-layer header types, as numbered by tcpdump.org's LINKTYPE_* list
//! (the numbers stored in pcap and pcapng files).

use std::fmt;

/// The link type of a record. The pcap header field is 32 bits, but its upper
/// bits carry FCS information; only the lower 16 name the link type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LinkType(pub u16);

impl LinkType {
    /// BSD loopback: a 4-byte address family in the writer's byte order.
    pub const NULL: LinkType = LinkType(0);
    pub const ETHERNET: LinkType = LinkType(1);
    /// DLT_RAW's number on most systems; old tools wrote it into files.
    pub const RAW_12: LinkType = LinkType(12);
    /// DLT_RAW's number on OpenBSD.
    pub const RAW_14: LinkType = LinkType(14);
    /// Raw IP, version taken from the first nibble.
    pub const RAW: LinkType = LinkType(101);
    /// OpenBSD loopback: like NULL but the family is in network byte order.
    pub const LOOP: LinkType = LinkType(108);
    pub const LINUX_SLL: LinkType = LinkType(113);
    pub const IPV4: LinkType = LinkType(228);
    pub const IPV6: LinkType = LinkType(229);
    pub const LINUX_SLL2: LinkType = LinkType(276);

    /// Takes the link type out of a pcap header's 32-bit field.
    pub fn from_pcap_field(v: u32) -> LinkType {
        LinkType(v as u16)
    }

    /// Whether [`crate::decode`] understands this link type.
    pub fn is_supported(self) -> bool {
        self.name().is_some()
    }

    /// The LINKTYPE_ name without its prefix, for supported types.
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            LinkType::NULL => "NULL",
            LinkType::ETHERNET => "ETHERNET",
            LinkType::RAW_12 | LinkType::RAW_14 | LinkType::RAW => "RAW",
            LinkType::LOOP => "LOOP",
            LinkType::LINUX_SLL => "LINUX_SLL",
            LinkType::IPV4 => "IPV4",
            LinkType::IPV6 => "IPV6",
            LinkType::LINUX_SLL2 => "LINUX_SLL2",
            _ => return None,
        })
    }
}

impl fmt::Display for LinkType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{n} ({})", self.0),
            None => write!(f, "link type {}", self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_fcs_bits() {
        assert_eq!(LinkType::from_pcap_field(0x1000_0001), LinkType::ETHERNET);
        assert_eq!(LinkType::RAW_12.to_string(), "RAW (12)");
        assert_eq!(LinkType(147).to_string(), "link type 147");
        assert!(!LinkType(147).is_supported());
        assert!(LinkType::LINUX_SLL2.is_supported());
    }
}
