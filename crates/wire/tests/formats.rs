//! Format variants built byte by byte: pcap in both byte orders and both
//! resolutions, and pcapng sections, interfaces, resolutions and blocks.

mod common;

use common::{ipv4_syn, Ng};
use wire::{Format, LinkType, TraceReader};

/// (ts_ns, orig_len, caplen, linktype, interface, data) of every record.
fn records(bytes: &[u8]) -> Vec<(i64, u32, u32, LinkType, u32, Vec<u8>)> {
    let mut r = TraceReader::new(bytes, "test").unwrap_or_else(|e| panic!("{e}"));
    let mut v = Vec::new();
    while let Some(rec) = r.read_next().unwrap() {
        v.push((rec.ts_ns, rec.orig_len, rec.caplen, rec.linktype, rec.interface, rec.data.to_vec()));
    }
    assert_eq!((r.stats().skipped, r.stats().truncated_tail), (0, 0));
    v
}

#[test]
fn pcap_all_four_magics() {
    let data = ipv4_syn(1);
    for (big, nano) in [(false, false), (true, false), (false, true), (true, true)] {
        let magic: u32 = if nano { 0xa1b2_3c4d } else { 0xa1b2_c3d4 };
        let w32 = |v: u32| if big { v.to_be_bytes() } else { v.to_le_bytes() };
        let w16 = |v: u16| if big { v.to_be_bytes() } else { v.to_le_bytes() };
        let mut f = [&w32(magic)[..], &w16(2), &w16(4), &[0; 8], &w32(96), &w32(228)].concat();
        f.extend([&w32(1_600_000_000)[..], &w32(123_456), &w32(40), &w32(1500), &data].concat());
        let r = TraceReader::new(&f[..], "x").unwrap();
        assert_eq!(r.format(), Format::Pcap { nanosecond: nano, big_endian: big, version: (2, 4), snaplen: 96, linktype: LinkType::IPV4 });
        let frac = if nano { 123_456 } else { 123_456_000 };
        let got = records(&f);
        assert_eq!(got, [(1_600_000_000_000_000_000 + frac, 1500, 40, LinkType::IPV4, 0, data.clone())]);
    }
}

#[test]
fn pcapng_interfaces_resolutions_and_offsets() {
    let d = ipv4_syn(5);
    let mut ng = Ng::new(false);
    ng.shb()
        .idb(101, 0, None, None) // default microseconds
        .idb(228, 0, Some(9), None) // nanoseconds
        .idb(101, 0, Some(0x80 | 10), Some(1_000_000_000)) // 1/1024 s, +1e9 s
        .epb(0, 1_500_000, 40, &d)
        .epb(1, 1_500_000_007, 40, &d)
        .epb(2, 2048 + 512, 40, &d);
    let got = records(&ng.out);
    let ts: Vec<(i64, LinkType, u32)> = got.iter().map(|r| (r.0, r.3, r.4)).collect();
    assert_eq!(ts, [(1_500_000_000, LinkType::RAW, 0), (1_500_000_007, LinkType::IPV4, 1), (1_000_000_002_500_000_000, LinkType::RAW, 2),]);
    assert!(got.iter().all(|r| r.5 == d));
}

#[test]
fn pcapng_sections_in_both_byte_orders_number_interfaces_globally() {
    let d = ipv4_syn(1);
    let mut le = Ng::new(false);
    le.shb().idb(1, 0, None, None).idb(101, 0, None, None).epb(1, 10, 40, &d);
    let mut be = Ng::new(true);
    be.shb().idb(101, 0, Some(9), None).epb(0, 20, 40, &d);
    let f = [le.out.clone(), be.out, le.out].concat();
    let got: Vec<(i64, LinkType, u32)> = records(&f).iter().map(|r| (r.0, r.3, r.4)).collect();
    assert_eq!(got, [(10_000, LinkType::RAW, 1), (20, LinkType::RAW, 2), (10_000, LinkType::RAW, 4)]);
}

#[test]
fn pcapng_simple_and_obsolete_packet_blocks() {
    let d = ipv4_syn(3);
    let mut ng = Ng::new(true);
    ng.shb()
        .idb(101, 32, None, None)
        .pb(0, 7_000_000, 1500, &d)
        .spb(1500, &d) // snaplen 32 cuts it; no timestamp: the previous one
        .spb(20, &d[..20]);
    let got = records(&ng.out);
    assert_eq!(got[0], (7_000_000_000, 1500, 40, LinkType::RAW, 0, d.clone()));
    assert_eq!(got[1], (7_000_000_000, 1500, 32, LinkType::RAW, 0, d[..32].to_vec()));
    assert_eq!(got[2], (7_000_000_000, 20, 20, LinkType::RAW, 0, d[..20].to_vec()));
}

#[test]
fn pcapng_skips_other_blocks() {
    let d = ipv4_syn(2);
    let mut ng = Ng::new(false);
    ng.shb()
        .block(4, &[1, 0, 8, 0, 10, 0, 0, 1, b'h', b'o', b's', b't', 0, 0, 0, 0]) // NRB
        .idb(101, 0, None, None)
        .block(0x0a, &[0; 20]) // DSB
        .epb(0, 1, 40, &d)
        .block(5, &[0; 12]) // ISB
        .block(0x0bad, &[1, 2, 3, 4, 5]) // custom
        .block(0x7777, &[]) // unknown
        .epb(0, 2, 40, &d);
    let got = records(&ng.out);
    assert_eq!(got.iter().map(|r| r.0).collect::<Vec<_>>(), [1000, 2000]);
}

#[test]
fn record_decode_uses_the_interface_link_type() {
    let mut eth = vec![0u8; 12];
    eth.extend([0x08, 0x00]);
    eth.extend(ipv4_syn(42));
    let mut ng = Ng::new(false);
    ng.shb().idb(1, 0, None, None).idb(101, 0, None, None).epb(0, 0, 54, &eth).epb(1, 0, 40, &ipv4_syn(43));
    let mut r = TraceReader::new(&ng.out[..], "x").unwrap();
    let mut seqs = Vec::new();
    while let Some(rec) = r.read_next().unwrap() {
        seqs.push(rec.decode().unwrap().tcp().unwrap().seq);
    }
    assert_eq!(seqs, [42, 43]);
}
