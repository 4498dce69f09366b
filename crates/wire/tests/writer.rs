//! The simulator's output path: headers emitted by the `*Repr` types, written
//! with `PcapWriter`, read back by our reader and by tshark, which also
//! verifies every checksum.

use std::net::IpAddr;
use std::path::PathBuf;
use testdata::{have_tshark, tshark};
use wire::{ethertype, EthernetRepr, Ipv4Repr, Ipv6Repr, LinkType, PcapWriter, TcpFlags, TcpRepr, TraceReader, Transport, UdpRepr};

const V4: ([u8; 4], [u8; 4]) = ([10, 1, 0, 1], [10, 2, 0, 7]);
const V6: ([u8; 16], [u8; 16]) =
    ([0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);

/// One frame: Ethernet, IPv4 or IPv6, then TCP or UDP, then `payload`
/// zero bytes, which the headers' checksums already account for.
fn frame(v6: bool, tcp: Option<TcpRepr>, udp: Option<UdpRepr>, payload: usize) -> Vec<u8> {
    let l4_len = tcp.map_or(8, |t| t.header_len()) + payload;
    let ip_len = if v6 { 40 } else { 20 };
    let mut f = vec![0u8; 14 + ip_len + l4_len];
    let et = if v6 { ethertype::IPV6 } else { ethertype::IPV4 };
    EthernetRepr { src: [2, 0, 0, 0, 0, 1], dst: [2, 0, 0, 0, 0, 2], ethertype: et }.emit(&mut f).unwrap();
    let proto = if tcp.is_some() { 6 } else { 17 };
    let (src, dst): (IpAddr, IpAddr) = if v6 {
        Ipv6Repr { src: V6.0, dst: V6.1, next_header: proto, hop_limit: 61, payload_len: l4_len as u16 }.emit(&mut f[14..]).unwrap();
        (V6.0.into(), V6.1.into())
    } else {
        Ipv4Repr { src: V4.0, dst: V4.1, protocol: proto, ttl: 61, ident: 77, payload_len: l4_len as u16 }.emit(&mut f[14..]).unwrap();
        (V4.0.into(), V4.1.into())
    };
    let l4 = &mut f[14 + ip_len..];
    match (tcp, udp) {
        (Some(t), _) => t.emit(l4, src, dst, payload as u32).unwrap(),
        (_, Some(u)) => UdpRepr { payload_len: payload as u16, ..u }.emit(l4, src, dst).unwrap(),
        _ => unreachable!(),
    };
    f
}

const SACK: [(u32, u32); 3] = [(5000, 6000), (7000, 8000), (9000, 9100)];

fn frames() -> Vec<Vec<u8>> {
    let syn = TcpRepr {
        src_port: 40000,
        dst_port: 80,
        seq: 1,
        flags: TcpFlags::SYN,
        window: 65535,
        mss: Some(1460),
        window_scale: Some(7),
        sack_permitted: true,
        ..TcpRepr::default()
    };
    let data = TcpRepr {
        src_port: 80,
        dst_port: 40000,
        seq: 4_000_000_000,
        ack: 2,
        flags: TcpFlags::ACK | TcpFlags::PSH,
        window: 501,
        sack: &SACK,
        ..TcpRepr::default()
    };
    let udp = UdpRepr { src_port: 33333, dst_port: 44444, payload_len: 0 };
    vec![
        frame(false, Some(syn), None, 0),
        frame(false, Some(data), None, 1000),
        frame(false, None, Some(udp), 100),
        frame(true, Some(syn), None, 0),
        frame(true, Some(data), None, 1400),
        frame(true, None, Some(udp), 7),
    ]
}

fn temp_path(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!("wire-test-{}-{tag}.pcap", std::process::id()))
}

const T0: u64 = 1_700_000_000_123_456_789;

fn write(tag: &str, snaplen: u32) -> (PathBuf, Vec<Vec<u8>>) {
    let path = temp_path(tag);
    let frames = frames();
    let mut w = PcapWriter::create(&path, LinkType::ETHERNET, snaplen).unwrap();
    for (i, f) in frames.iter().enumerate() {
        w.write_packet(T0 + i as u64 * 1_000_001, f.len() as u32, f).unwrap();
    }
    w.into_inner().unwrap();
    (path, frames)
}

#[test]
fn written_pcap_round_trips_through_our_reader() {
    let (path, frames) = write("ours", 0);
    let mut r = TraceReader::open(&path).unwrap();
    assert!(matches!(r.format(), wire::Format::Pcap { nanosecond: true, linktype: LinkType::ETHERNET, .. }));
    let mut i = 0;
    while let Some(rec) = r.read_next().unwrap() {
        assert_eq!(rec.ts_ns, (T0 + i as u64 * 1_000_001) as i64);
        assert_eq!(rec.data, &frames[i][..]);
        let p = rec.decode().unwrap();
        assert_eq!(p.ip.ttl, 61);
        assert!(!p.truncated);
        match (i, p.transport) {
            (0 | 3, Transport::Tcp(t)) => {
                assert_eq!((t.flags, t.options.mss, t.options.window_scale), (TcpFlags::SYN, Some(1460), Some(7)));
                assert!(t.options.sack_permitted);
            }
            (1 | 4, Transport::Tcp(t)) => {
                assert_eq!((t.seq, t.ack, t.window), (4_000_000_000, 2, 501));
                assert_eq!(t.options.sack(), &SACK);
                assert_eq!(t.payload_len, if i == 1 { 1000 } else { 1400 });
            }
            (2 | 5, Transport::Udp(u)) => {
                assert_eq!((u.src_port, u.dst_port, u.payload_len), (33333, 44444, if i == 2 { 100 } else { 7 }))
            }
            other => panic!("frame {i}: {other:?}"),
        }
        i += 1;
    }
    assert_eq!(i, frames.len());
    std::fs::remove_file(path).unwrap();
}

#[test]
fn snaplen_truncates_but_keeps_the_wire_length() {
    let (path, frames) = write("snap", 64);
    let mut r = TraceReader::open(&path).unwrap();
    let mut i = 0;
    while let Some(rec) = r.read_next().unwrap() {
        assert_eq!(rec.data, &frames[i][..frames[i].len().min(64)]);
        assert_eq!(rec.orig_len as usize, frames[i].len());
        let p = rec.decode().unwrap();
        assert!(p.truncated);
        assert_eq!(p.ip_offset + p.ip.total_len as usize, frames[i].len());
        // The IPv6 TCP headers do not fit in 64 bytes.
        match p.payload_len() {
            Some(n) => assert_eq!(n as usize + p.payload_offset, frames[i].len()),
            None => assert!(matches!((i, p.transport), (3 | 4, Transport::Truncated(6))), "{i}: {p:?}"),
        }
        i += 1;
    }
    assert_eq!(i, 6);
    std::fs::remove_file(path).unwrap();
}

#[test]
fn tshark_reads_the_file_and_verifies_every_checksum() {
    if !have_tshark() {
        return;
    }
    let (path, frames) = write("tshark", 0);
    let lines = tshark(
        &path,
        &[
            "-o",
            "tcp.relative_sequence_numbers:FALSE",
            "-o",
            "ip.check_checksum:TRUE",
            "-o",
            "tcp.check_checksum:TRUE",
            "-o",
            "udp.check_checksum:TRUE",
            "-T",
            "fields",
            "-e",
            "frame.time_epoch",
            "-e",
            "frame.len",
            "-e",
            "ip.checksum.status",
            "-e",
            "tcp.checksum.status",
            "-e",
            "udp.checksum.status",
            "-e",
            "tcp.options.sack_le",
            "-e",
            "_ws.expert.message",
        ],
    );
    assert_eq!(lines.len(), frames.len(), "{lines:?}");
    for (i, l) in lines.iter().enumerate() {
        let f: Vec<&str> = l.split('\t').collect();
        let ns = T0 + i as u64 * 1_000_001;
        assert_eq!(f[0], format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000), "frame {i} time");
        assert_eq!(f[1], frames[i].len().to_string());
        // Checksum status 1 is "good"; IPv6 has no header checksum.
        assert_eq!(f[2], if i < 3 { "1" } else { "" }, "frame {i} IPv4 checksum: {l}");
        assert_eq!(f[3..5].concat(), "1", "frame {i} TCP/UDP checksum: {l}");
        if i == 1 || i == 4 {
            assert_eq!(f[5], "5000,7000,9000", "frame {i} SACK left edges");
        }
        assert!(!f[6].contains("alformed"), "frame {i}: {l}");
    }
    std::fs::remove_file(path).unwrap();
}
