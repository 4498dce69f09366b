//! Release-only: extraction of a 5-million-packet trace (auckland played
//! 160 times in memory) reads every packet into a valid model; the speed
//! and peak RSS are printed, not asserted (a timed unit test fails on a
//! busy machine: `make bench` measures speed side by side). Its own test
//! binary, so no other test shares the core while it runs.

#![cfg(not(debug_assertions))]

mod common;

use common::Repeat;
use std::time::Instant;
use testdata::trace;

fn vm_hwm_mib() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok()).map_or(f64::NAN, |k| k / 1024.0)
}

#[test]
fn five_million_packets() {
    let bytes = std::fs::read(trace("auckland-atm-2000.pcap")).unwrap();
    let r = Repeat::new(bytes, 160, 400);
    let per_pass = r.records();
    let t = Instant::now();
    let (m, rep) = extract::extract_readers(vec![("auckland x160".into(), Box::new(r))], &swing::ExtractOptions::default(), &mut |_| true).unwrap();
    let s = t.elapsed().as_secs_f64();
    m.check().unwrap();
    assert_eq!(rep.packets, 160 * per_pass);
    let rate = rep.packets as f64 / s;
    eprintln!("{} packets in {s:.2} s: {:.2} M packets/s; peak RSS {:.1} MiB", rep.packets, rate / 1e6, vm_hwm_mib());
}
