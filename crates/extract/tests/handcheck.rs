//! Connections of http-bro-org.pcap checked by hand against tshark.
//!
//! The expected numbers were read from
//! `tshark -r http-bro-org.pcap -Y 'tcp.stream==N' -T fields -e frame.number
//!  -e frame.time_relative -e tcp.srcport -e tcp.seq -e tcp.ack -e tcp.len
//!  -e tcp.flags.str`
//! (relative sequence numbers; the first frame of the file is stream 0's
//! SYN, so `frame.time_relative` is time since that SYN). Pairs are runs
//! of data in one direction: the client's `tcp.len` summed until the server
//! sends data is a request, the server's until the client sends again a
//! response. The trace has no retransmissions, so summed `tcp.len` equals
//! sequence advance.

use extract::{ConnRecord, EndReason};
use swing::ExtractOptions;
use testdata::trace;

fn recs() -> Vec<ConnRecord> {
    extract::connections(&[trace("http-bro-org.pcap")], &ExtractOptions::default()).unwrap()
}

/// (request bytes, request start s, response bytes, response first and last packet s).
type P = (u64, f64, u64, f64, f64);

fn check(r: &ConnRecord, t0: i64, want: &[P]) {
    let rel = |t: i64| (t - t0) as f64 / 1e9;
    assert_eq!(r.pairs.len(), want.len(), "{}", r.client);
    for (p, w) in r.pairs.iter().zip(want) {
        let (q, s) = (p.req.unwrap(), p.resp.unwrap());
        assert_eq!((q.bytes, s.bytes), (w.0, w.2), "{}", r.client);
        assert!((rel(q.start) - w.1).abs() < 1e-9, "{} {} {}", r.client, rel(q.start), w.1);
        assert!((rel(s.start) - w.3).abs() < 1e-9 && (rel(s.end) - w.4).abs() < 1e-9, "{}", r.client);
    }
}

#[test]
fn stream_0_persistent_http() {
    let all = recs();
    assert_eq!(all.len(), 13);
    let r = &all[0];
    let t0 = r.start_ns;
    // Frame 1 (SYN, 55079 → 80), frame 2 (SYN/ACK, 0.078046), frame 3
    // (ACK, 0.078091): tshark's iRTT 0.078091.
    assert_eq!((r.client.to_string().as_str(), r.server.to_string().as_str()), ("10.0.2.15:55079", "192.150.187.43:80"));
    assert_eq!((r.syns, r.synacks), (1, 1));
    assert!((r.server_rtt_s().unwrap() - 0.078046).abs() < 1e-9);
    assert!((r.client_rtt_s().unwrap() - 0.000045).abs() < 1e-9);
    assert!((r.handshake_rtt_s().unwrap() - 0.078091).abs() < 1e-9);
    // Seven pairs. Requests: frame 4 (seq 1, len 275), frame 40 (276, 272)
    // ...; the first response runs from frame 6 (0.158962, seq 1) to frame
    // 38 (0.234497, seq 15901 len 363): 16263 bytes.
    check(
        r,
        t0,
        &[
            (275, 0.078331, 16263, 0.158962, 0.234497),
            (272, 0.235248, 3240, 0.310502, 0.310593),
            (259, 0.311207, 9192, 0.386116, 0.386638),
            (256, 0.386799, 4130, 0.462653, 0.462744),
            (290, 0.494113, 46701, 0.574297, 0.655621),
            (303, 0.672788, 454, 0.754686, 0.754686),
            (277, 3.207112, 3477, 3.299301, 3.299409),
        ],
    );
    // Think: each request's start minus the previous response's last packet.
    let want = [0.235248 - 0.234497, 0.311207 - 0.310593, 0.386799 - 0.386638, 0.494113 - 0.462744, 0.672788 - 0.655621, 3.207112 - 0.754686];
    // Application writes: the segments with PSH in each element (tshark's
    // tcp.flags.push); every element ends with one, so there is no tail.
    let writes: Vec<(u32, u32)> = r.pairs.iter().map(|p| (p.req.unwrap().writes, p.resp.unwrap().writes)).collect();
    assert_eq!(writes, [(1, 5), (1, 1), (1, 2), (1, 1), (1, 11), (1, 1), (1, 2)]);
    let got = r.think_s();
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < 1e-9, "{g} {w}");
    }
    // Server FIN frame 682 (seq 83458: 83457 bytes), client FIN frame 684
    // (8.303572, seq 1933: 1932 bytes).
    assert_eq!(r.payload, [1932, 83457]);
    assert_eq!((r.end, (r.end_ns - t0) as f64 / 1e9), (EndReason::Fin, 8.303572));
    assert_eq!(r.packets[0] + r.packets[1], 132, "133 frames in stream 0, the last ACK after both FINs");
}

#[test]
fn stream_6_two_pairs() {
    let all = recs();
    let r = all.iter().find(|r| r.client.port() == 55120).unwrap();
    let t0 = all[0].start_ns;
    // Frames 690 (SYN, 8.529252), 691 (SYN/ACK, 8.646813), 692 (ACK, 8.646861).
    assert!((r.server_rtt_s().unwrap() - (8.646813 - 8.529252)).abs() < 1e-9);
    assert!((r.handshake_rtt_s().unwrap() - (8.646861 - 8.529252)).abs() < 1e-9);
    // 693: 364 B request; 695: 1136 B response; 697: 290 B; 699 + 701:
    // 1420 + 29 = 1449 B.
    check(r, t0, &[(364, 8.647088, 1136, 8.771157, 8.771157), (290, 8.817267, 1449, 8.934619, 8.934734)]);
    assert!((r.think_s()[0] - (8.817267 - 8.771157)).abs() < 1e-9);
    // FINs: 721 (server, 13.940292), 722 (client, 13.940570).
    assert_eq!((r.end, (r.end_ns - t0) as f64 / 1e9), (EndReason::Fin, 13.940570));
    assert_eq!((r.class.as_str(), r.payload), ("HTTP", [654, 2585]));
}

#[test]
fn handshake_only_connections_are_not_modelled() {
    let all = recs();
    // Streams 8–12 (ports 55128–55132): SYN, SYN/ACK, ACK, then FINs at
    // the end of the trace, no data.
    let empty: Vec<u16> = all.iter().filter(|r| r.pairs.is_empty()).map(|r| r.client.port()).collect();
    assert_eq!(empty, vec![55128, 55129, 55130, 55131, 55132]);
    let (m, rep) = extract::extract(&[trace("http-bro-org.pcap")], &ExtractOptions::default(), &mut |_| true).unwrap();
    assert_eq!((rep.tcp_connections, rep.tcp_without_data, rep.tcp_modelled), (13, 5, 8));
    assert_eq!(m.classes[0].counts.connections, 8);
    assert_eq!(m.classes[0].counts.pairs, all.iter().map(|r| r.pairs.len() as u64).sum::<u64>());
}
