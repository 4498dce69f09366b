//! Streaming: the state kept while extracting does not grow with the length
//! of the trace. auckland-atm-2000.pcap (the largest trace by packets) is
//! played N times in memory, each pass 400 s after the previous one
//! (beyond the 300 s idle timeout, so each pass opens new connections
//! between the same 1,048 hosts).

mod common;

use common::Repeat;
use extract::{extract_readers, ExtractError, Report, DIST_RESERVOIR, HOST_RESERVOIR, MSS_RESERVOIR, TALLY_BUCKETS, UDP_RESERVOIR};
use swing::{ExtractOptions, Model};
use testdata::trace;

fn run(times: u32) -> (Model, Report) {
    let bytes = std::fs::read(trace("auckland-atm-2000.pcap")).unwrap();
    let r = Repeat::new(bytes, times, 400);
    extract_readers(vec![(format!("auckland x{times}"), Box::new(r))], &ExtractOptions::default(), &mut |_| true).unwrap()
}

#[test]
fn state_stays_flat_as_the_trace_grows() {
    let (m1, r1) = run(1);
    let (_, r3) = run(3);
    let (m24, r24) = run(24);
    for (n, r) in [(3, &r3), (24, &r24)] {
        eprintln!(
            "x{n}: {} packets; peak: {} open TCP, {} closed tuples, {} UDP flows, {} session keys, {} queued; {} hosts; {} stored samples",
            r.packets, r.peak_tcp_entries, r.peak_closed_tuples, r.peak_udp_flows, r.peak_group_keys, r.peak_pending, r.hosts, r.stored_values
        );
    }
    assert_eq!(r24.packets, 24 * r1.packets);
    // Every pass is rebuilt the same way: counts scale exactly.
    assert_eq!((r24.tcp_connections, r24.pairs, r24.udp_flows), (24 * r1.tcp_connections, 24 * r1.pairs, 24 * r1.udp_flows));
    let http = |m: &Model| m.classes.iter().find(|c| c.name == "HTTP" && c.clients == swing::Side::A).unwrap().counts.clone();
    assert_eq!(http(&m24).connections, 24 * http(&m1).connections);
    // Peak state depends on the traffic, not on how long it lasts. (Idle
    // state is retired by sweeps every few thousand packets, whose phase
    // within a pass differs from pass to pass: peaks may differ by a few.)
    assert_eq!((r24.hosts, r24.class_host_entries), (r3.hosts, r3.class_host_entries));
    let peaks = |r: &Report| [r.peak_tcp_entries, r.peak_closed_tuples, r.peak_udp_flows, r.peak_group_keys, r.peak_pending];
    for (a, b) in peaks(&r24).into_iter().zip(peaks(&r3)) {
        assert!(a <= b + b / 50 + 16, "peak {a} after 24 passes, {b} after 3");
    }
    // Samples are bounded by the reservoir and tally sizes, which do not
    // depend on the trace's length either.
    assert_eq!((r24.tcp_classes, r24.udp_classes), (r3.tcp_classes, r3.udp_classes));
    let bound = r24.tcp_classes * 9 * TALLY_BUCKETS.max(DIST_RESERVOIR) as u64
        + r24.udp_classes * (UDP_RESERVOIR + 4 * TALLY_BUCKETS) as u64
        + r24.hosts * (3 * HOST_RESERVOIR + MSS_RESERVOIR) as u64;
    assert!(r24.stored_values <= bound, "{} > {bound}", r24.stored_values);
    // The largest class's stores are full, and the model still holds at
    // most DIST_CAP values; they were counted, not sampled: the trace
    // read 24 times over has the distribution of the trace read once.
    let h = m24.classes.iter().find(|c| c.name == "HTTP").unwrap();
    let h1 = m1.classes.iter().find(|c| c.name == "HTTP").unwrap();
    assert!(h.request_bytes.n > DIST_RESERVOIR as u64);
    assert!(h.request_bytes.values.len() <= swing::DIST_CAP);
    for (d24, d1) in [(&h.request_bytes, &h1.request_bytes), (&h.response_bytes, &h1.response_bytes)] {
        let ks = d24.ks_distance(d1).unwrap();
        assert!(ks <= 1.0 / d1.values.len().min(swing::DIST_CAP) as f64 + 1e-9, "KS {ks}");
    }
}

#[test]
fn the_progress_callback_can_cancel() {
    let bytes = std::fs::read(trace("auckland-atm-2000.pcap")).unwrap();
    let mut calls = vec![];
    let r = extract_readers(vec![("x3".into(), Box::new(Repeat::new(bytes, 3, 400)))], &ExtractOptions::default(), &mut |n| {
        calls.push(n);
        false
    });
    assert!(matches!(r, Err(ExtractError::Cancelled)), "{r:?}");
    assert_eq!(calls, vec![extract::PROGRESS_EVERY]);
}
