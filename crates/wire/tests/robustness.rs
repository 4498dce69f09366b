//! Damaged files: header damage is an error naming the file, offset and
//! expectation; record damage is skipped and counted.

mod common;

use common::{ipv4_syn, pcap_header, pcap_record, Ng};
use std::io::{self, Read};
use wire::{Stats, TraceError, TraceErrorKind, TraceReader};

fn open(bytes: &[u8]) -> Result<TraceReader<&[u8]>, TraceError> {
    TraceReader::new(bytes, "t.pcap")
}

/// Reads everything; returns the sequence numbers of the SYNs read, stats.
fn read_all(bytes: &[u8]) -> (Vec<u32>, Stats) {
    let mut r = open(bytes).unwrap_or_else(|e| panic!("{e}"));
    let mut seqs = Vec::new();
    while let Some(rec) = r.read_next().unwrap() {
        seqs.push(rec.decode().ok().and_then(|p| p.tcp().map(|t| t.seq)).unwrap_or(u32::MAX));
    }
    (seqs, r.stats())
}

fn three_records() -> Vec<u8> {
    let mut f = pcap_header(101, 65535);
    for i in 0..3 {
        f.extend(pcap_record(1000 + i, 0, 40, &ipv4_syn(i)));
    }
    f
}

#[test]
fn zero_length_file() {
    let e = open(&[]).err().unwrap();
    assert!(matches!(e.kind, TraceErrorKind::Empty));
    assert_eq!(e.to_string(), "t.pcap: offset 0: empty file, expected a pcap or pcapng header");
}

#[test]
fn wrong_magic() {
    let e = open(b"<html><body>Not Found</body></html>").err().unwrap();
    assert!(matches!(e.kind, TraceErrorKind::BadMagic(0x3c68_746d)));
    assert_eq!(e.to_string(), "t.pcap: offset 0: not a pcap or pcapng file (magic 0x3c68746d)");
    let e = open(&[0x1f, 0x8b, 8, 0, 0, 0]).err().unwrap();
    assert!(e.to_string().contains("gzip-compressed"), "{e}");
    let e = open(&[0xd4, 0xc3]).err().unwrap();
    assert_eq!(e.to_string(), "t.pcap: offset 0: file of 2 bytes is too short for a pcap or pcapng header");
}

#[test]
fn truncated_global_header() {
    let f = three_records();
    let e = open(&f[..10]).err().unwrap();
    assert_eq!(e.to_string(), "t.pcap: offset 0: truncated pcap file header: expected 24 bytes, found 10");
    let mut ng = Ng::new(false);
    ng.shb();
    for cut in [4, 11, 20, 27] {
        let e = open(&ng.out[..cut]).err().unwrap();
        assert!(matches!(e.kind, TraceErrorKind::TruncatedHeader { what: "pcapng section header block", expected: 28, .. }), "cut {cut}: {e}");
    }
}

#[test]
fn unsupported_versions_and_bad_section_headers() {
    let mut f = three_records();
    f[4] = 3;
    let e = open(&f).err().unwrap();
    assert_eq!(e.to_string(), "t.pcap: offset 0: unsupported pcap version 3.4");
    let mut ng = Ng::new(true);
    ng.shb();
    let mut v2 = ng.out.clone();
    v2[13] = 2;
    assert_eq!(open(&v2).err().unwrap().to_string(), "t.pcap: offset 0: unsupported pcapng version 2.0");
    let mut bom = ng.out.clone();
    bom[8] = 0;
    let e = open(&bom).err().unwrap();
    assert!(matches!(e.kind, TraceErrorKind::BadByteOrderMagic(0x002b_3c4d)), "{e}");
    let mut len = ng.out.clone();
    len[7] = 26;
    let e = open(&len).err().unwrap();
    assert!(matches!(e.kind, TraceErrorKind::BadSectionLength(26)), "{e}");
}

#[test]
fn truncated_last_record() {
    let f = three_records();
    // Cut inside the last record's data, then inside its header.
    for (cut, tail) in [(f.len() - 5, 51), (f.len() - 50, 6)] {
        let (seqs, s) = read_all(&f[..cut]);
        assert_eq!(seqs, [0, 1], "cut at {cut}");
        let at = Some(24 + 2 * 56);
        let want = Stats { records: 2, truncated_tail: tail, bytes: 80, ..Stats::default() };
        assert_eq!(s, Stats { damage_offset: at, tail_offset: at, ..want }, "cut at {cut}");
    }
    let (seqs, s) = read_all(&f);
    assert_eq!((seqs, s.truncated_tail), (vec![0, 1, 2], 0));
}

#[test]
fn garbage_after_a_valid_header() {
    let mut f = pcap_header(1, 65535);
    f.extend([0xff; 100]);
    let (seqs, s) = read_all(&f);
    assert!(seqs.is_empty());
    let at = Some(24);
    assert_eq!(s, Stats { truncated_tail: 100, damage_offset: at, tail_offset: at, ..Stats::default() });
}

#[test]
fn huge_caplen_stops_and_counts_the_rest() {
    let mut f = three_records();
    let second = 24 + 56;
    f[second + 8..second + 12].copy_from_slice(&0x7fff_ffffu32.to_le_bytes());
    let (seqs, s) = read_all(&f);
    assert_eq!(seqs, [0]);
    let at = Some(second as u64);
    let want = Stats { records: 1, truncated_tail: 2 * 56, bytes: 40, ..Stats::default() };
    assert_eq!(s, Stats { damage_offset: at, tail_offset: at, ..want });
    // Just over the 256 KiB limit is damage too; at the limit it is a record.
    let mut f = pcap_header(101, 0);
    f.extend(pcap_record(1, 0, 300_000, &vec![0x45; wire::MAX_CAPLEN as usize]));
    assert_eq!(read_all(&f).1.records, 1);
    let mut f = pcap_header(101, 0);
    f.extend(pcap_record(1, 0, 300_000, &vec![0x45; wire::MAX_CAPLEN as usize + 1]));
    assert_eq!(read_all(&f).1.truncated_tail, 16 + wire::MAX_CAPLEN as u64 + 1);
}

#[test]
fn a_caplen_of_2_to_the_31_in_record_101_ends_reading_there_and_counts_the_rest_as_the_tail() {
    let mut f = pcap_header(101, 65535);
    for i in 0..1000 {
        f.extend(pcap_record(1000 + i, 0, 40, &ipv4_syn(i)));
    }
    let at = 24 + 100 * 56;
    f[at + 8..at + 12].copy_from_slice(&(1u32 << 31).to_le_bytes());
    let (seqs, s) = read_all(&f);
    assert_eq!(seqs, (0..100).collect::<Vec<_>>());
    let rest = (f.len() - at) as u64;
    assert_eq!((s.records, s.skipped, s.skipped_bytes, s.truncated_tail), (100, 0, 0, rest));
    assert_eq!((s.damage_offset, s.tail_offset), (Some(at as u64), Some(at as u64)));
    assert_eq!(s.unread_bytes(), 900 * 56);
}

/// SHB, an IDB (raw IP), and EPBs with sequence numbers 0..n.
fn ng_file(big: bool, n: u32) -> Ng {
    let mut ng = Ng::new(big);
    ng.shb().idb(101, 0, None, None);
    for i in 0..n {
        ng.epb(0, i as u64, 40, &ipv4_syn(i));
    }
    ng
}

#[test]
fn pcapng_inconsistent_block_length_resynchronises() {
    for big in [false, true] {
        let ng = ng_file(big, 4);
        let epb_len = 28 + 40 + 4;
        let first_epb = ng.out.len() - 4 * epb_len;
        // Corrupt the second EPB's trailing length: it is skipped, the rest read.
        let mut f = ng.out.clone();
        let trailer = first_epb + 2 * epb_len - 4;
        f[trailer..trailer + 4].copy_from_slice(&[9, 9, 9, 9]);
        let (seqs, s) = read_all(&f);
        assert_eq!(seqs, [0, 2, 3], "big-endian {big}");
        assert_eq!((s.skipped, s.skipped_bytes, s.truncated_tail), (1, epb_len as u64, 0));
        assert_eq!(s.damage_offset, Some((first_epb + epb_len) as u64));
        // A length that is not a multiple of 4, and one far past the end.
        for bad in [70u32, 0x00ff_fff0] {
            let mut f = ng.out.clone();
            let at = first_epb + epb_len + 4;
            f[at..at + 4].copy_from_slice(&ng.u32(bad));
            let (seqs, s) = read_all(&f);
            assert_eq!(seqs, [0, 2, 3], "length {bad}");
            assert_eq!((s.skipped, s.truncated_tail), (1, 0), "length {bad}");
        }
    }
}

#[test]
fn pcapng_garbage_between_blocks_and_at_the_end() {
    let ng = ng_file(false, 2);
    let split = ng.out.len() - 72;
    let mut f = ng.out[..split].to_vec();
    f.extend([0xee; 64]);
    f.extend(&ng.out[split..]);
    f.extend([0xee; 10]);
    let (seqs, s) = read_all(&f);
    assert_eq!(seqs, [0, 1]);
    assert_eq!((s.skipped, s.skipped_bytes, s.truncated_tail), (1, 64, 10));
    assert_eq!((s.damage_offset, s.tail_offset), (Some(split as u64), Some(f.len() as u64 - 10)));
    // Garbage straight after the section header, nothing to resync on.
    let mut f = ng_file(false, 0).out;
    f.extend([0xee; 999]);
    let (seqs, s) = read_all(&f);
    assert!(seqs.is_empty());
    assert_eq!((s.skipped, s.truncated_tail), (0, 999));
}

#[test]
fn pcapng_truncated_last_block() {
    let ng = ng_file(false, 3);
    let f = &ng.out[..ng.out.len() - 30];
    let (seqs, s) = read_all(f);
    assert_eq!(seqs, [0, 1]);
    assert_eq!((s.records, s.skipped, s.truncated_tail), (2, 0, 72 - 30));
}

#[test]
fn pcapng_bad_packet_blocks_are_skipped() {
    let mut ng = ng_file(false, 1);
    // Interface 5 does not exist; caplen larger than the block.
    ng.epb(5, 0, 40, &ipv4_syn(7));
    let mut bad_caplen = Ng::new(false);
    bad_caplen.epb(0, 0, 40, &ipv4_syn(8));
    bad_caplen.out[20..24].copy_from_slice(&100u32.to_le_bytes());
    ng.out.extend(&bad_caplen.out);
    ng.epb(0, 0, 40, &ipv4_syn(9));
    let (seqs, s) = read_all(&ng.out);
    assert_eq!(seqs, [0, 9]);
    assert_eq!((s.skipped, s.truncated_tail), (2, 0));
}

#[test]
fn a_pcapng_interface_block_of_length_0_is_damage_and_so_are_the_packets_of_its_interface() {
    let ng = ng_file(false, 3);
    let (idb, epbs) = (28, 28 + 20);
    let mut f = ng.out.clone();
    f[idb + 4..idb + 8].copy_from_slice(&0u32.to_le_bytes());
    let (seqs, s) = read_all(&f);
    assert!(seqs.is_empty());
    // The scan passes over the interface block to the first packet block;
    // the packets name an interface that was never read.
    assert_eq!((s.records, s.skipped, s.truncated_tail), (0, 1 + 3, 0));
    assert_eq!(s.skipped_bytes, (f.len() - idb) as u64);
    assert_eq!((s.damage_offset, s.tail_offset), (Some(idb as u64), None));
    assert_eq!(epbs + 3 * 72, f.len());
}

#[test]
fn a_pcapng_interface_block_framed_right_but_too_short_is_skipped_and_keeps_its_index() {
    // Interface 0 is a bare 12-byte block, interface 1 a good one.
    let mut ng = Ng::new(false);
    ng.shb().block(1, &[]).idb(101, 0, None, None).epb(0, 0, 40, &ipv4_syn(1)).epb(1, 0, 40, &ipv4_syn(2));
    let (seqs, s) = read_all(&ng.out);
    assert_eq!(seqs, [2]);
    assert_eq!((s.records, s.skipped, s.skipped_bytes, s.truncated_tail), (1, 2, 12 + 72, 0));
    assert_eq!(s.damage_offset, Some(28));
}

#[test]
fn pcapng_later_section_of_unknown_version_is_an_error() {
    let mut ng = ng_file(false, 1);
    let at = ng.out.len() as u64;
    ng.shb();
    let n = ng.out.len();
    ng.out[n - 28 + 12] = 9;
    let mut r = open(&ng.out).unwrap();
    assert!(r.read_next().unwrap().is_some());
    let e = r.read_next().err().unwrap();
    assert_eq!(e.offset, at);
    assert_eq!(e.to_string(), format!("t.pcap: offset {at}: unsupported pcapng version 9.0"));
    assert!(r.read_next().unwrap().is_none(), "reading stops after an error");
}

#[test]
fn read_errors_carry_the_offset() {
    struct FailAfter(Vec<u8>, usize);
    impl Read for FailAfter {
        fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
            if self.1 >= self.0.len() {
                return Err(io::Error::other("cable unplugged"));
            }
            let n = b.len().min(self.0.len() - self.1).min(60);
            b[..n].copy_from_slice(&self.0[self.1..self.1 + n]);
            self.1 += n;
            Ok(n)
        }
    }
    let mut r = TraceReader::new(FailAfter(three_records(), 0), "net.pcap").unwrap();
    let mut n = 0;
    let e = loop {
        match r.read_next() {
            Ok(Some(_)) => n += 1,
            Ok(None) => panic!("error swallowed"),
            Err(e) => break e,
        }
    };
    assert_eq!(n, 3);
    assert!(matches!(e.kind, TraceErrorKind::Io(_)));
    assert_eq!(e.to_string(), "net.pcap: offset 192: read error: cable unplugged");
}

#[test]
fn open_reports_missing_files_by_path() {
    let e = TraceReader::open("/nonexistent/dir/x.pcap").err().unwrap();
    assert!(e.to_string().starts_with("/nonexistent/dir/x.pcap: offset 0: read error:"), "{e}");
}
