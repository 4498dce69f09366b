//! One packet: `[link type selector, orig_len (2 bytes BE), packet...]`.
//! Selector bytes 0..10 pick the supported link types; any other value is
//! used as the link type number. Checks the decoded lengths are consistent.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wire::{decode, LinkType, Transport};

const LINKTYPES: [u16; 10] = [0, 1, 12, 14, 101, 108, 113, 228, 229, 276];

fuzz_target!(|data: &[u8]| {
    let [sel, a, b, pkt @ ..] = data else { return };
    let lt = LINKTYPES.get(*sel as usize).map_or(LinkType(*sel as u16), |&l| LinkType(l));
    let Ok(p) = decode(lt, pkt, u16::from_be_bytes([*a, *b]) as u32) else { return };
    assert!(p.ip_offset < pkt.len());
    if !p.truncated {
        assert!(p.ip_offset + p.ip.total_len as usize <= pkt.len());
    }
    let ip_payload = p.ip.total_len.saturating_sub(p.ip.header_len as u32);
    match p.transport {
        Transport::Tcp(t) => {
            assert!((20..=60).contains(&t.header_len));
            assert_eq!(t.payload_len + t.header_len as u32, ip_payload);
            assert!(t.options.sack().len() <= wire::MAX_SACK_BLOCKS);
        }
        Transport::Udp(u) => assert_eq!(u.payload_len + 8, ip_payload),
        Transport::Fragment(_) => assert!(p.ip.fragment),
        _ => {}
    }
});
