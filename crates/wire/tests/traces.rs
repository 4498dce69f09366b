//! The real traces in shared/traces: every file reads completely, with the
//! packet and byte totals of its README, and decodes to the protocol counts
//! tshark reports.

use std::path::Path;
use testdata::{have_tshark, traces_dir, tshark, PCAPS};
use wire::{Format, LinkType, TraceErrorKind, TraceReader, Transport};

/// What tshark 4.x reported (filters with `!icmp && !icmpv6`, since tshark
/// also matches the TCP/UDP headers quoted inside ICMP errors; ip.defragment
/// off): TCP, UDP, ICMP(v6), SYN set, SYN without ACK, non-first IPv4
/// fragments, IPv6 packets, and the sum of tcp.len.
#[derive(Debug, Default, PartialEq, Eq, Clone, Copy)]
struct Counts {
    tcp: u64,
    udp: u64,
    icmp: u64,
    syn: u64,
    syn_only: u64,
    fragments: u64,
    ipv6: u64,
    tcp_payload: u64,
}

/// Columns in the order of [`Counts`]' fields.
const TSHARK: &[(&str, [u64; 8])] = &[
    ("caida-nyc-2018.pcapng", [8098, 1890, 0, 246, 113, 12, 0, 7_443_274]),
    ("auckland-atm-2000.pcap", [27537, 3579, 133, 1754, 1333, 0, 0, 6_607_246]),
    ("web-ynet-2013.pcap", [4492, 139, 0, 130, 65, 0, 0, 3_426_041]),
    ("web-espn-2010.pcapng", [928, 28, 0, 50, 25, 0, 0, 587_340]),
    ("web-reddit-tls.pcap", [1942, 0, 0, 120, 60, 0, 1942, 546_888]),
    ("app-alexa.pcapng", [2993, 65, 14, 264, 145, 0, 12, 981_900]),
    ("video-netflix.pcap", [1748, 44, 0, 92, 46, 0, 0, 880_067]),
    ("http-bro-org.pcap", [751, 0, 0, 26, 13, 0, 0, 453_271]),
    ("tls-firefox.pcap", [667, 0, 0, 2, 1, 0, 0, 414_073]),
    ("quic-firefox-google.pcap", [0, 441, 0, 0, 0, 0, 0, 0]),
    ("dns-recursive.pcapng", [0, 4, 0, 0, 0, 0, 0, 0]),
];

fn our_counts(path: &Path) -> Counts {
    let mut r = TraceReader::open(path).unwrap();
    let mut c = Counts::default();
    while let Some(rec) = r.read_next().unwrap() {
        let Ok(p) = rec.decode() else { continue };
        c.ipv6 += (p.ip.version == 6) as u64;
        c.fragments += p.ip.fragment as u64;
        match p.transport {
            Transport::Tcp(t) => {
                c.tcp += 1;
                c.syn += t.flags.syn() as u64;
                c.syn_only += (t.flags.syn() && !t.flags.ack()) as u64;
                c.tcp_payload += t.payload_len as u64;
            }
            Transport::Udp(_) => c.udp += 1,
            Transport::Icmp(_) => c.icmp += 1,
            _ => {}
        }
    }
    c
}

#[test]
fn every_trace_reads_with_readme_totals() {
    let dir = traces_dir();
    for &(name, packets, bytes) in PCAPS {
        let mut r = TraceReader::open(dir.join(name)).unwrap_or_else(|e| panic!("{e}"));
        let mut n = 0u64;
        let mut sum = 0u64;
        let mut out_of_order = 0;
        let mut last = i64::MIN;
        while let Some(rec) = r.read_next().unwrap_or_else(|e| panic!("{e}")) {
            n += 1;
            sum += rec.orig_len as u64;
            assert_eq!(rec.caplen as usize, rec.data.len(), "{name} record {n}");
            assert!(rec.caplen <= rec.orig_len, "{name} record {n}: caplen over orig_len");
            out_of_order += (rec.ts_ns < last) as u32;
            last = rec.ts_ns;
        }
        let s = r.stats();
        assert_eq!((n, s.records), (packets, packets), "{name}: packet count");
        assert_eq!((sum, s.bytes), (bytes, bytes), "{name}: bytes on the wire");
        let damage = (s.skipped, s.truncated_tail, s.damage_offset);
        assert_eq!(damage, (0, 0, None), "{name}: damage reported in a good file");
        // The README notes exactly one packet out of time order here.
        let want_ooo = if name == "quic-firefox-google.pcap" { 1 } else { 0 };
        assert_eq!(out_of_order, want_ooo, "{name}: out-of-order timestamps");
    }
}

#[test]
fn formats_link_types_and_start_times() {
    let dir = traces_dir();
    // (file, pcapng?, link type, first timestamp as tshark's frame.time_epoch)
    let cases = [
        ("auckland-atm-2000.pcap", false, LinkType::RAW, 948_764_200_001_914_000),
        ("web-ynet-2013.pcap", false, LinkType::ETHERNET, 1_367_526_033_491_822_000),
        ("caida-nyc-2018.pcapng", true, LinkType::RAW, 1_521_118_773_289_502_000),
        ("web-espn-2010.pcapng", true, LinkType::ETHERNET, 1_270_661_369_782_934_000),
    ];
    for (name, ng, lt, first_ts) in cases {
        let mut r = TraceReader::open(dir.join(name)).unwrap();
        assert_eq!(matches!(r.format(), Format::PcapNg), ng, "{name}");
        if let Format::Pcap { nanosecond, big_endian, version, .. } = r.format() {
            assert_eq!((nanosecond, big_endian, version), (false, false, (2, 4)), "{name}");
        }
        let rec = r.read_next().unwrap().unwrap();
        assert_eq!(rec.linktype, lt, "{name}");
        if !ng {
            assert_eq!(rec.offset, 24, "{name}: first record follows the file header");
        }
        assert_eq!(rec.ts_ns, first_ts, "{name}: first timestamp");
    }
}

#[test]
fn first_timestamps_match_tshark() {
    if !have_tshark() {
        return;
    }
    let dir = traces_dir();
    for &(name, _, _) in PCAPS {
        let path = dir.join(name);
        let want: Vec<i64> = tshark(&path, &["-c", "5", "-T", "fields", "-e", "frame.time_epoch"])
            .iter()
            .map(|s| {
                let (sec, frac) = s.split_once('.').unwrap();
                let frac = format!("{frac:0<9}");
                sec.parse::<i64>().unwrap() * 1_000_000_000 + frac[..9].parse::<i64>().unwrap()
            })
            .collect();
        let mut r = TraceReader::open(&path).unwrap();
        let mut got = Vec::new();
        while let (true, Some(rec)) = (got.len() < want.len(), r.read_next().unwrap()) {
            got.push(rec.ts_ns);
        }
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn protocol_counts_match_recorded_tshark_numbers() {
    let dir = traces_dir();
    for &(name, [tcp, udp, icmp, syn, syn_only, fragments, ipv6, tcp_payload]) in TSHARK {
        let want = Counts { tcp, udp, icmp, syn, syn_only, fragments, ipv6, tcp_payload };
        assert_eq!(our_counts(&dir.join(name)), want, "{name}");
    }
}

#[test]
fn per_packet_fields_match_live_tshark() {
    if !have_tshark() {
        return;
    }
    let dir = traces_dir();
    let fields = [
        "tcp.srcport",
        "tcp.dstport",
        "tcp.seq_raw",
        "tcp.ack_raw",
        "tcp.flags",
        "tcp.window_size_value",
        "tcp.len",
        "tcp.options.mss_val",
        "tcp.options.wscale.shift",
        "udp.srcport",
        "udp.dstport",
        "udp.length",
        "icmp.type",
        "icmpv6.type",
        "ip.ttl",
        "ipv6.hlim",
    ];
    let mut args = vec!["-T", "fields", "-E", "occurrence=f"];
    for f in &fields {
        args.extend(["-e", f]);
    }
    for &(name, _, _) in PCAPS {
        let path = dir.join(name);
        let lines = tshark(&path, &args);
        let mut r = TraceReader::open(&path).unwrap();
        let mut n = 0;
        while let Some(rec) = r.read_next().unwrap() {
            let t: Vec<&str> = lines[n].split('\t').collect();
            n += 1;
            let Ok(p) = rec.decode() else {
                assert!(t.iter().all(|f| f.is_empty()), "{name} frame {n}: tshark decoded {t:?}");
                continue;
            };
            let ttl = if p.ip.version == 4 { t[14] } else { t[15] };
            assert_eq!(p.ip.ttl.to_string(), ttl, "{name} frame {n}: ttl");
            // tshark also decodes headers quoted in ICMP errors; compare those
            // packets' ICMP type only.
            if !t[12].is_empty() || !t[13].is_empty() {
                let Transport::Icmp(i) = p.transport else { panic!("{name} frame {n}: not ICMP: {p:?}") };
                assert_eq!(i.icmp_type.to_string(), if t[12].is_empty() { t[13] } else { t[12] }, "{name} frame {n}");
                continue;
            }
            let ours: Vec<String> = match p.transport {
                Transport::Tcp(tcp) => {
                    let o = |v: Option<u32>| v.map(|v| v.to_string()).unwrap_or_default();
                    vec![
                        tcp.src_port.to_string(),
                        tcp.dst_port.to_string(),
                        tcp.seq.to_string(),
                        tcp.ack.to_string(),
                        format!("0x{:04x}", tcp.flags.0),
                        tcp.window.to_string(),
                        tcp.payload_len.to_string(),
                        o(tcp.options.mss.map(u32::from)),
                        o(tcp.options.window_scale.map(u32::from)),
                        String::new(),
                        String::new(),
                        String::new(),
                    ]
                }
                Transport::Udp(u) => {
                    let mut v = vec![String::new(); 9];
                    v.extend([u.src_port.to_string(), u.dst_port.to_string(), u.length.to_string()]);
                    v
                }
                _ => vec![String::new(); 12],
            };
            let theirs: Vec<String> = t[..12]
                .iter()
                .enumerate()
                .map(|(i, s)| match (i, s.strip_prefix("0x")) {
                    (4, Some(h)) => format!("0x{:04x}", u16::from_str_radix(h, 16).unwrap()),
                    _ => s.to_string(),
                })
                .collect();
            assert_eq!(ours, theirs, "{name} frame {n}");
        }
        assert_eq!(n, lines.len(), "{name}: tshark saw a different number of packets");
    }
}

#[test]
fn header_only_traces_are_truncated_but_sized_from_ip() {
    let dir = traces_dir();
    for name in ["caida-nyc-2018.pcapng", "auckland-atm-2000.pcap"] {
        let mut r = TraceReader::open(dir.join(name)).unwrap();
        let (mut cut, mut ip_bytes) = (0, 0u64);
        while let Some(rec) = r.read_next().unwrap() {
            let p = rec.decode().unwrap();
            assert!(rec.caplen <= 64, "{name}: caplen {}", rec.caplen);
            assert!(p.ip.total_len <= rec.orig_len, "{name}: IP length beyond the wire length");
            cut += p.truncated as u32;
            ip_bytes += p.ip.total_len as u64;
            assert!(!p.ip.len_from_frame);
        }
        // Auckland's wire length is the IP length (its README says so);
        // CAIDA's counts 4-14 link bytes more.
        if name.starts_with("auckland") {
            assert_eq!(ip_bytes, r.stats().bytes, "{name}");
        } else {
            assert_eq!(ip_bytes, 9_215_114, "{name}: sum of ip.len from tshark");
        }
        // Packets with caplen below ip.len, as tshark counts them.
        let want_cut = if name.starts_with("auckland") { 14_037 } else { 8_129 };
        assert_eq!(cut, want_cut, "{name}: truncated packets");
    }
}

#[test]
fn offload_segments_bigger_than_the_mtu() {
    let dir = traces_dir();
    let mut r = TraceReader::open(dir.join("web-reddit-tls.pcap")).unwrap();
    let mut big = 0;
    while let Some(rec) = r.read_next().unwrap() {
        let p = rec.decode().unwrap();
        if p.ip.total_len > 1500 {
            big += 1;
            assert_eq!(p.ip.total_len as usize + 14, rec.data.len());
            assert!(!p.truncated);
        }
    }
    assert!(big > 0, "the README says this trace has segments over 1514 bytes");
}

#[test]
fn non_trace_files_are_rejected_with_the_header_error() {
    let dir = traces_dir();
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if ext == "pcap" || ext == "pcapng" {
            continue;
        }
        seen += 1;
        let err = match TraceReader::open(&path) {
            Ok(_) => panic!("{} accepted as a trace", path.display()),
            Err(e) => e,
        };
        assert!(matches!(err.kind, TraceErrorKind::BadMagic(_)), "{err}");
        let msg = err.to_string();
        let prefix = format!("{}: offset 0: not a pcap or pcapng file (magic 0x", path.display());
        assert!(msg.starts_with(&prefix), "{msg}");
        if ext == "xz" {
            assert!(msg.contains("xz-compressed"), "{msg}");
        }
    }
    assert!(seen >= 5, "expected the .tl, .xz, .cvec and README files, saw {seen}");
}
