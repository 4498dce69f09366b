//! Per-direction binning of a trace agrees with the model's link counters.

use extract::{extract, series_for_model};
use std::path::PathBuf;

#[test]
fn binned_trace_totals_equal_the_link_stats() {
    for name in ["web-ynet-2013.pcap", "web-espn-2010.pcapng", "app-alexa.pcapng"] {
        let path: PathBuf = testdata::trace(name);
        let (m, _) = extract(std::slice::from_ref(&path), &Default::default(), &mut |_| true).unwrap();
        let s = series_for_model(std::slice::from_ref(&path), 0.001, &m).unwrap();
        assert_eq!(s.unplaced, 0, "{name}: every packet has a side");
        for d in 0..2 {
            let bytes: f64 = s.bytes[d].iter().sum();
            let packets: f64 = s.packets[d].iter().sum();
            assert_eq!(bytes as u64, m.link.dirs[d].bytes, "{name} dir {d} bytes");
            assert_eq!(packets as u64, m.link.dirs[d].packets, "{name} dir {d} packets");
        }
        // The bins span the trace's duration.
        let want = (m.link.duration_s / 0.001).floor() as usize + 1;
        assert!((s.bytes[0].len() as i64 - want as i64).abs() <= 1, "{name}: {} bins for {} s", s.bytes[0].len(), m.link.duration_s);
    }
}
