//! The playback model's fields: its trace read and cut, its defaults
//! written out, and every mistake refused in one line naming the field.

mod common;

use common::*;
use scenario::{BackgroundModel, ScenarioFile};
use std::path::{Path, PathBuf};
use units::Dur;
use wire::{Ipv4Repr, LinkType, PcapWriter, UdpRepr};

/// A directory holding a capture whose only traffic goes from private
/// 10.0.0.1 (side A) to public 1.1.1.1, three packets of 100, 200 and 300
/// bytes at 0, 1.5 ms and 2 s; and event lists.
fn files(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("undertow-scenario-playback-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let mut w = PcapWriter::new(Vec::new(), LinkType::RAW, 0).unwrap();
    for (t, size) in [(0u64, 100u16), (1_500_000, 200), (2_000_000_000, 300)] {
        let mut buf = [0u8; 28];
        let (src, dst) = ([10, 0, 0, 1], [1, 1, 1, 1]);
        Ipv4Repr { src, dst, protocol: 17, ttl: 64, ident: 0, payload_len: size - 20 }.emit(&mut buf).unwrap();
        UdpRepr { src_port: 5000, dst_port: 53, payload_len: size - 28 }.emit(&mut buf[20..], src, dst).unwrap();
        w.write_packet(1_700_000_000_000_000_000 + t, size as u32, &buf).unwrap();
    }
    std::fs::write(d.join("one-way.pcap"), w.into_inner().unwrap()).unwrap();
    std::fs::write(d.join("times.txt"), "0.5\n0.25\n1.0\n").unwrap();
    std::fs::write(d.join("sized.txt"), "0.5 1000\n0.25 64\n1.0 1500\n").unwrap();
    std::fs::write(d.join("bad.txt"), "0.5 1000\n0.75\n").unwrap();
    d
}

fn playback(fields: &str) -> String {
    format!("{BASE}[[background]]\nmodel = \"playback\"\ntransport = \"udp\"\n{fields}\n")
}

fn resolve(dir: &Path, text: &str) -> scenario::PlaybackModel {
    let f = ScenarioFile::parse("s.toml", dir, text).unwrap_or_else(|e| panic!("{e}"));
    match f.resolved(None, None).unwrap_or_else(|e| panic!("{e}")).1.background.remove(0) {
        BackgroundModel::Playback(m) => m,
        other => panic!("{other:?}"),
    }
}

/// `text` is refused in one short line holding every one of `wants`.
fn refused(dir: &Path, text: &str, wants: &[&str]) {
    let e = error_in(dir, text);
    assert!(!e.contains('\n') && e.len() < 400, "not one short line: {e}");
    for w in wants {
        assert!(e.contains(w), "message {e:?} lacks {w:?}");
    }
}

#[test]
fn a_captures_side_and_an_event_list_resolve_to_packets_timed_from_the_trace_start() {
    let d = files("ok");
    let m = resolve(&d, &playback("file = \"one-way.pcap\""));
    let t: Vec<(u64, u32)> = m.trace.packets.iter().map(|p| (p.at.0, p.size)).collect();
    assert_eq!(t, vec![(0, 100), (1_500_000, 200), (2_000_000_000, 300)]);
    assert!(m.trace.packets.iter().all(|p| p.flow == 0));
    // An event list is sorted, its packets numbered in time order, cut and sped up.
    let m = resolve(&d, &playback("file = \"sized.txt\"\noffset = \"250ms\"\nlength = \"500ms\"\nspeed = 2.0"));
    let t: Vec<(u64, u32, u32)> = m.trace.packets.iter().map(|p| (p.at.0, p.size, p.flow)).collect();
    assert_eq!(t, vec![(0, 64, 0), (125_000_000, 1000, 1)]);
    let m = resolve(&d, &playback("file = \"times.txt\"\npacket_size = 500"));
    assert_eq!(m.trace.packets.iter().map(|p| p.size).collect::<Vec<_>>(), vec![500; 3]);
    assert_eq!(m.trace.period, None, "played once by default");
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn a_looped_trace_repeats_every_length_sped_up_or_its_span_and_a_mean_gap() {
    let d = files("loop");
    let m = resolve(&d, &playback("file = \"sized.txt\"\noffset = \"250ms\"\nlength = \"500ms\"\nspeed = 2.0\nloop = true"));
    assert_eq!(m.trace.period, Some(Dur::from_millis(250)));
    // Three packets over 2 s: every 3 s.
    let m = resolve(&d, &playback("file = \"one-way.pcap\"\nloop = true"));
    assert_eq!(m.trace.period, Some(Dur::from_secs(3)));
    let m = resolve(&d, &playback("file = \"one-way.pcap\"\nloop = false"));
    assert_eq!(m.trace.period, None);
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn resolving_writes_every_default_out() {
    let d = files("defaults");
    let f = ScenarioFile::parse("s.toml", &d, &playback("file = \"one-way.pcap\"")).unwrap();
    let (s, r) = f.resolved(None, None).unwrap();
    let text = scenario::to_toml(&scenario::with_defaults(&s, &r));
    for want in ["side = \"a\"", "granularity = \"1ms\"", "offset = \"0s\"", "speed = 1.0", "loop = false", "hosts = 1", "one-way.pcap"] {
        assert!(text.contains(want), "{want} not in\n{text}");
    }
    // The filled scenario, read from anywhere, resolves to the same model.
    let g = ScenarioFile::parse("filled.toml", Path::new("/"), &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(g.resolved(None, None).unwrap().1, r);
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn mistakes_are_refused_naming_the_field_and_what_is_allowed() {
    let d = files("bad");
    let d = d.as_path();
    refused(d, &playback("file = \"nope.pcap\""), &["background[0].file", "\"nope.pcap\" not found"]);
    refused(d, &playback("file = \".\""), &["background[0].file", "is a directory"]);
    refused(
        d,
        &playback("file = \"one-way.pcap\"\nside = \"b\""),
        &["background[0].side", "no packets sent from side \"b\"", "of 3 IP packets", "side_a"],
    );
    refused(d, &playback("file = \"one-way.pcap\"\nside = \"c\""), &["background[0].side", "\"c\" is not allowed: expected \"a\" or \"b\""]);
    refused(d, &playback("file = \"one-way.pcap\"\nside_a = [\"10.0.0.0/33\"]"), &["background[0].side_a", "prefix length"]);
    refused(
        d,
        &playback("file = \"one-way.pcap\"\ngranularity = \"10ms\""),
        &["background[0].granularity", "\"10ms\" is not allowed", "\"exact\"", "\"1ms\""],
    );
    refused(d, &playback("file = \"one-way.pcap\"\npacket_size = 100"), &["background[0].packet_size", "is for event lists without sizes"]);
    refused(d, &playback("file = \"one-way.pcap\"\noffset = \"3s\""), &["background[0].offset", "holds no packets from offset on (3s)"]);
    refused(d, &playback("file = \"times.txt\""), &["background[0].packet_size", "times without sizes: give packet_size"]);
    refused(d, &playback("file = \"sized.txt\"\npacket_size = 100"), &["background[0].packet_size", "leave packet_size out"]);
    refused(d, &playback("file = \"times.txt\"\nside = \"a\""), &["background[0].side", "is an event list"]);
    refused(d, &playback("file = \"times.txt\"\npacket_size = 70000"), &["background[0].packet_size", "expected 1B to 65535B"]);
    refused(d, &playback("file = \"bad.txt\""), &["background[0].file", "bad.txt: line 2 has 1 columns where line 1 has 2", "'time' or 'time size'"]);
    refused(d, &playback("file = \"sized.txt\"\nspeed = 0.0"), &["background[0].speed", "expected a number above 0"]);
    refused(d, &playback("file = \"one-way.pcap\"\noffset = \"2s\"\nloop = true"), &["background[0].length", "plays one packet", "give length"]);
    refused(d, &playback("file = \"one-way.pcap\"\nloop = 1"), &["background[0].loop", "expected true or false"]);
    std::fs::remove_dir_all(d).unwrap();
}
