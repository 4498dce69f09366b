//! Arbitrary bytes as a trace file: open, read every record, decode each.
//! Beyond not panicking, checks the reader's bookkeeping.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wire::TraceReader;

fuzz_target!(|data: &[u8]| {
    let Ok(mut r) = TraceReader::new(data, "fuzz") else { return };
    let mut n = 0u64;
    let mut bytes = 0u64;
    loop {
        match r.read_next() {
            Ok(Some(rec)) => {
                assert_eq!(rec.caplen as usize, rec.data.len());
                assert!(rec.caplen <= wire::MAX_CAPLEN);
                assert!(rec.offset < data.len() as u64);
                n += 1;
                bytes += rec.orig_len as u64;
                let _ = rec.decode();
            }
            Ok(None) => {
                // Every byte was either read or counted as the tail.
                assert_eq!(r.offset(), data.len() as u64);
                break;
            }
            Err(_) => break,
        }
    }
    let s = r.stats();
    assert_eq!((s.records, s.bytes), (n, bytes));
    assert!(s.unread_bytes() <= data.len() as u64);
    // Damage is placed: the tail runs from where reading stopped to the end.
    assert_eq!(s.damage_offset.is_some(), s.skipped > 0 || s.truncated_tail > 0);
    assert_eq!(s.tail_offset.map(|t| t + s.truncated_tail), (s.truncated_tail > 0).then_some(data.len() as u64));
    assert!(s.damage_offset <= s.tail_offset.or(s.damage_offset));
    assert!(r.read_next().unwrap().is_none(), "a finished reader stays finished");
});
