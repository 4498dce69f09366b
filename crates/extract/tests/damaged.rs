//! Damaged captures: what could not be read is in the model's trace entry
//! and in the report, with where it was and what share of the file it cost.

mod common;

use common::*;
use extract::extract_readers;
use swing::ExtractOptions;

/// A capture of `n` UDP packets (a little-endian nanosecond pcap).
fn udp_capture(n: u32) -> Vec<u8> {
    let mut x = Synth::ethernet();
    for i in 0..n {
        x.udp(1.0 + i as f64 * 0.01, ep(1, [10, 0, 0, 1], 5000), ep(2, [10, 0, 0, 2], 53), 100);
    }
    x.bytes()
}

/// File offset of record `k` (from 0) of a pcap.
fn record_offset(pcap: &[u8], k: usize) -> usize {
    let mut at = 24;
    for _ in 0..k {
        let caplen = u32::from_le_bytes(pcap[at + 8..at + 12].try_into().unwrap());
        at += 16 + caplen as usize;
    }
    at
}

#[test]
fn a_record_of_impossible_length_is_reported_with_its_offset_and_the_share_lost() {
    let mut f = udp_capture(200);
    let at = record_offset(&f, 100);
    f[at + 8..at + 12].copy_from_slice(&(1u32 << 31).to_le_bytes());
    let o = ExtractOptions::default();
    let (m, r) = extract_readers(vec![("bad.pcap".into(), reader(f.clone()))], &o, &mut |_| true).unwrap();
    let lost = (f.len() - at) as u64;
    assert_eq!((m.traces[0].packets, m.traces[0].truncated_tail_bytes, m.traces[0].skipped), (100, lost, 0));
    assert_eq!(r.truncated_tail_bytes, lost);
    let [d] = &r.damaged[..] else { panic!("{:?}", r.damaged) };
    let (size, at) = (f.len() as u64, at as u64);
    assert_eq!((d.path.as_str(), d.file_bytes, d.offset, d.tail_offset), ("bad.pcap", size, at, Some(at)));
    assert!((d.read_share() - at as f64 / size as f64).abs() < 1e-12);
    let want = format!("bad.pcap: reading stopped at byte offset {at}: {lost} of {size} bytes");
    assert!(d.to_string().starts_with(&want), "{d}");
}

#[test]
fn an_undamaged_capture_reports_no_damage() {
    let f = udp_capture(20);
    let o = ExtractOptions::default();
    let (m, r) = extract_readers(vec![("good.pcap".into(), reader(f))], &o, &mut |_| true).unwrap();
    assert_eq!((m.traces[0].truncated_tail_bytes, r.damaged.len()), (0, 0));
}
