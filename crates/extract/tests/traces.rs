//! Every shared trace: extracts, passes `Model::check`, round-trips through
//! JSON, is deterministic; sides follow the rules; header-only raw-IP
//! traces give sizes without handshakes; two direction files merge into
//! the same model as one file.

mod common;

use common::reader;
use extract::{extract, extract_readers, ExtractError};
use swing::{ExtractOptions, Model, Side, SideRule};
use testdata::{trace, traces_dir, PCAPS};

fn opts() -> ExtractOptions {
    ExtractOptions::default()
}

fn model(name: &str, o: &ExtractOptions) -> Model {
    extract(&[trace(name)], o, &mut |_| true).unwrap_or_else(|e| panic!("{name}: {e}")).0
}

#[test]
fn every_trace_extracts_checks_and_round_trips() {
    let mut seen = 0;
    for entry in std::fs::read_dir(traces_dir()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if name == "README.md" {
            continue;
        }
        let is_pcap = name.ends_with(".pcap") || name.ends_with(".pcapng");
        let res = extract(std::slice::from_ref(&path), &opts(), &mut |_| true);
        if !is_pcap {
            // .tl, .xz, .cvec: the trace header error, naming the file.
            match res {
                Err(ExtractError::Trace(e)) => {
                    let msg = e.to_string();
                    assert!(msg.starts_with(&path.display().to_string()) && msg.contains("offset 0"), "{msg}");
                }
                other => panic!("{name}: expected a trace header error, got {other:?}"),
            }
            continue;
        }
        let (packets, bytes) =
            PCAPS.iter().find(|p| p.0 == name).map(|p| (p.1, p.2)).unwrap_or_else(|| panic!("{name} is not in the README table this test knows"));
        seen += 1;
        let (m, r) = res.unwrap_or_else(|e| panic!("{name}: {e}"));
        m.check().unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!((m.traces[0].packets, m.traces[0].bytes), (packets, bytes), "{name}");
        assert_eq!((r.packets, r.skipped_records, r.decode_errors, r.truncated_tail_bytes), (packets, 0, 0, 0), "{name}");
        assert_eq!(m.traces[0].path, path.display().to_string());
        // Link statistics cover every IP packet, split by sender side.
        let d = &m.link.dirs;
        assert_eq!(d[0].packets + d[1].packets, r.ip_packets, "{name}");
        // Of them, frames the capture recorded twice are passed over: the
        // DHCP discover app-alexa's capture holds twice, 64 µs apart, with one
        // identification (its RSTs and retransmissions are packets of their own).
        assert_eq!(r.ip_packets + r.non_ip + r.duplicates, packets, "{name}");
        assert_eq!(r.duplicates, u64::from(name == "app-alexa.pcapng"), "{name}");
        assert_eq!((m.hosts.len() as u64, m.sides.hosts_a + m.sides.hosts_b), (r.hosts, r.hosts), "{name}");
        for dir in d {
            assert_eq!(dir.tcp_bytes + dir.udp_bytes + dir.other_bytes, dir.bytes, "{name}");
        }
        // Hosts are sorted by side, then bytes.
        assert!(m.hosts.windows(2).all(|w| (w[0].side, std::cmp::Reverse(w[0].bytes)) <= (w[1].side, std::cmp::Reverse(w[1].bytes))));
        // Class counts agree with their distributions.
        for c in &m.classes {
            // Concurrent connections are described by their data units, not
            // pairs (these traces are small enough to keep every one).
            let conc = c.counts.concurrent_connections;
            assert_eq!(c.concurrent.len() as u64, conc, "{name} {}", c.name);
            assert_eq!(c.pairs_per_conn.n, c.counts.connections - conc, "{name} {}", c.name);
            assert_eq!(c.request_bytes.n == c.counts.pairs, conc == 0, "{name} {}", c.name);
            assert!(c.request_bytes.n <= c.counts.pairs, "{name} {}", c.name);
            assert_eq!(c.session_start_s.n, c.counts.sessions, "{name} {}", c.name);
            assert_eq!(c.conns_per_rre.n, c.counts.rres, "{name} {}", c.name);
            assert_eq!(c.conns_per_rre.values.iter().sum::<f64>() as u64, c.counts.connections, "{name} {}", c.name);
            assert!(c.session_start_s.values.iter().all(|&s| s <= m.link.duration_s + 1e-9));
        }
        let json = serde_json::to_string_pretty(&m).unwrap();
        let back: Model = serde_json::from_str(&json).unwrap();
        assert_eq!(back, m, "{name}: JSON round trip");
    }
    assert_eq!(seen, PCAPS.len(), "every pcap of the README was found");
}

#[test]
fn same_input_same_json() {
    for name in ["web-ynet-2013.pcap", "auckland-atm-2000.pcap", "caida-nyc-2018.pcapng", "app-alexa.pcapng"] {
        let a = serde_json::to_string_pretty(&model(name, &opts())).unwrap();
        let b = serde_json::to_string_pretty(&model(name, &opts())).unwrap();
        assert!(a == b, "{name}: two runs differ");
    }
}

fn side_of(m: &Model, addr: &str) -> Side {
    m.hosts.iter().find(|h| h.addr == addr).unwrap_or_else(|| panic!("no host {addr}")).side
}

#[test]
fn auto_sides_put_the_capturing_client_on_a() {
    let m = model("web-ynet-2013.pcap", &opts());
    assert_eq!(side_of(&m, "10.0.0.6"), Side::A);
    assert!(m.sides.decided_by.contains("08:00:27:19:1c:78"), "{}", m.sides.decided_by);
    // Besides the client only its LAN's broadcast address (which receives
    // frames from the router's MAC); every public host is B.
    let a: Vec<&str> = m.hosts.iter().filter(|h| h.side == Side::A).map(|h| h.addr.as_str()).collect();
    assert_eq!(a, ["10.0.0.6", "10.0.0.255"]);
    let http = m.classes.iter().find(|c| c.name == "HTTP").unwrap();
    assert_eq!(http.clients, Side::A);
    assert!(m.link.dirs[1].bytes > 10 * m.link.dirs[0].bytes, "downloads flow B to A");
    for name in ["web-espn-2010.pcapng", "web-reddit-tls.pcap", "video-netflix.pcap", "app-alexa.pcapng"] {
        let m = model(name, &opts());
        assert!(m.classes.iter().all(|c| c.clients == Side::A), "{name}: clients are on the capture side");
    }
}

#[test]
fn prefix_and_mac_rules() {
    let o = ExtractOptions { sides: SideRule::Prefixes { a: vec!["192.150.187.0/24".into()] }, ..opts() };
    let m = model("http-bro-org.pcap", &o);
    assert_eq!((side_of(&m, "192.150.187.43"), side_of(&m, "10.0.2.15")), (Side::A, Side::B));
    assert_eq!(m.classes[0].clients, Side::B);
    assert!(m.link.dirs[0].bytes > m.link.dirs[1].bytes, "the server's side sends the bulk");
    assert_eq!(m.options.sides, o.sides, "options are echoed");

    let o = ExtractOptions { sides: SideRule::Macs { a: vec!["08:00:27:ef:1f:74".into()] }, ..opts() };
    let m = model("http-bro-org.pcap", &o);
    assert_eq!((side_of(&m, "10.0.2.15"), side_of(&m, "192.150.187.43")), (Side::A, Side::B));
    let o = ExtractOptions { sides: SideRule::Macs { a: vec!["52:54:00:12:35:02".into()] }, ..opts() };
    let m = model("http-bro-org.pcap", &o);
    assert_eq!((side_of(&m, "10.0.2.15"), side_of(&m, "192.150.187.43")), (Side::B, Side::A));
    assert!(m.sides.decided_by.starts_with("MAC rule"), "{}", m.sides.decided_by);
}

#[test]
fn header_only_raw_ip_traces_give_sizes_without_handshakes() {
    for name in ["auckland-atm-2000.pcap", "caida-nyc-2018.pcapng"] {
        let (m, r) = extract(&[trace(name)], &opts(), &mut |_| true).unwrap();
        // One direction of the link: no connection shows both its SYN and
        // SYN/ACK, nor data and its ACK, so no host has an RTT sample.
        assert!(m.hosts.iter().all(|h| h.rtt_samples == 0 && h.rtt_s.is_none()), "{name}");
        assert!(r.pairs > 100, "{name}: {} pairs", r.pairs);
        let http = m.classes.iter().find(|c| c.name == "HTTP").unwrap_or_else(|| panic!("{name}: no HTTP"));
        assert!(http.request_bytes.values.len() > 10 && http.response_bytes.values.len() > 10, "{name}");
        // Sizes from sequence numbers are far above the ≤ 64 bytes captured.
        assert!(*http.response_bytes.values.last().unwrap() > 10_000.0, "{name}");
        assert!(m.sides.decided_by.starts_with("auto: no dominant MAC"), "{name}: raw IP has no MACs");
        let recs = extract::connections(&[trace(name)], &opts()).unwrap();
        assert!(recs.iter().any(|c| c.syn_ns.is_none() && c.payload.iter().sum::<u64>() > 0), "{name}");
    }
    // Auckland: responses of the connections whose SYN/ACK is in the
    // captured direction come from sequence numbers; requests of the others
    // from the client's ACKs of them.
    let recs = extract::connections(&[trace("auckland-atm-2000.pcap")], &opts()).unwrap();
    let from_acks = recs.iter().filter(|c| c.packets[1] == 0 && c.payload[1] > 0).count();
    let from_seq = recs.iter().filter(|c| c.packets[0] == 0 && c.payload[1] > 0).count();
    assert!(from_acks > 100 && from_seq > 100, "{from_acks} {from_seq}");
}

/// A classic little-endian pcap split by the frames' source MAC.
fn split_by_mac(bytes: &[u8], mac: [u8; 6]) -> (Vec<u8>, Vec<u8>) {
    let (mut a, mut b) = (bytes[..24].to_vec(), bytes[..24].to_vec());
    let mut p = 24;
    while p + 16 <= bytes.len() {
        let caplen = u32::from_le_bytes(bytes[p + 8..p + 12].try_into().unwrap()) as usize;
        let rec = &bytes[p..p + 16 + caplen];
        if rec[16 + 6..16 + 12] == mac {
            a.extend_from_slice(rec);
        } else {
            b.extend_from_slice(rec);
        }
        p += 16 + caplen;
    }
    (a, b)
}

#[test]
fn two_direction_files_merge_into_one_observation() {
    let path = trace("http-bro-org.pcap");
    let whole = model("http-bro-org.pcap", &opts());
    let (a, b) = split_by_mac(&std::fs::read(&path).unwrap(), [0x08, 0x00, 0x27, 0xef, 0x1f, 0x74]);
    // The server's file first: the merge, not the file order, must decide.
    let srcs = vec![("to-client.pcap".to_string(), reader(b)), ("to-server.pcap".to_string(), reader(a))];
    let (m, r) = extract_readers(srcs, &opts(), &mut |_| true).unwrap();
    assert_eq!(r.out_of_order, 0);
    assert_eq!(m.traces.len(), 2);
    assert_eq!(m.traces[0].packets + m.traces[1].packets, whole.traces[0].packets);
    assert_eq!((&m.classes, &m.link, &m.sides), (&whole.classes, &whole.link, &whole.sides));
    // Packets of the two files with equal timestamps (the capture's clock
    // gives a few) come earlier file first, not necessarily as in the
    // original, which can move a packet pair or a data→ACK sample; the
    // estimates stay the same.
    for (x, y) in m.hosts.iter().zip(&whole.hosts) {
        assert_eq!((&x.addr, x.rtt_s, x.capacity_bps, x.loss, x.bytes), (&y.addr, y.rtt_s, y.capacity_bps, y.loss, y.bytes));
        assert!(x.capacity_samples.abs_diff(y.capacity_samples) <= 3, "{x:?} {y:?}");
        assert!(x.rtt_samples.abs_diff(y.rtt_samples) <= 3, "{x:?} {y:?}");
    }
}

#[test]
fn the_report_serializes() {
    let (_, r) = extract(&[trace("web-espn-2010.pcapng")], &opts(), &mut |_| true).unwrap();
    let v: serde_json::Value = serde_json::to_value(&r).unwrap();
    assert_eq!(v["packets"], 956);
    assert_eq!(v["tcp_connections"], 25);
}

#[test]
fn a_receivers_window_is_its_scaled_advertisement() {
    // tshark -r tls-firefox.pcap -Y 'ip.src==192.168.1.13 && frame.number>5'
    //   -T fields -e tcp.window_size: 313 windows (scale 2^5), 90th
    // percentile 190112.
    let m = model("tls-firefox.pcap", &opts());
    let h = m.hosts.iter().find(|h| h.addr == "192.168.1.13").unwrap();
    assert_eq!(h.rcv_window, Some(190_112));
}

#[test]
fn a_host_that_bursts_at_its_capacity_but_sustains_less_gets_a_token_bucket() {
    // tshark -r tls-firefox.pcap -Y 'ip.src==178.62.197.130 && tcp.len>0'
    //   -T fields -e frame.time_epoch -e ip.len: with its 38.6 ms RTT,
    // stretches end at gaps over 16 ms; four have 16 segments or more, at
    // 14.1, 14.8, 17.8 and 21.1 Mbit/s, against 97 Mbit/s packet pairs.
    let m = model("tls-firefox.pcap", &opts());
    let h = m.hosts.iter().find(|h| h.addr == "178.62.197.130").unwrap();
    let s = h.shaper.clone().expect("a shaper");
    assert_eq!(s.stretches, 4);
    assert!((s.rate_bps / 21.1e6 - 1.0).abs() < 0.01, "{s:?}");
    // Its trains are about 40 kB.
    assert!((30_000..50_000).contains(&s.burst_bytes), "{s:?}");
    // The client sent no stretch at all; web-espn-2010's main server sent
    // its long stretches at its capacity.
    assert_eq!(m.hosts.iter().find(|h| h.addr == "192.168.1.13").unwrap().shaper, None);
    let m = model("web-espn-2010.pcapng", &opts());
    let h = m.hosts.iter().find(|h| h.addr == "205.234.218.129").unwrap();
    assert!(h.capacity_bps.is_some() && h.shaper.is_none(), "{h:?}");
    // Switched off, nobody has one.
    let m = model("tls-firefox.pcap", &ExtractOptions { shaper_max_fraction: None, ..opts() });
    assert!(m.hosts.iter().all(|h| h.shaper.is_none()));
}
