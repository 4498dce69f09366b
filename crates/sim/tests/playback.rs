//! The playback background model end to end, through the scenario layer:
//! a capture's direction and the Bellcore event lists played over UDP and
//! TCP, against the traces' own counts (the sender's exact timing is
//! checked against the transport in crates/traffic's unit tests).

use scenario::ScenarioFile;
use sim::build::Built;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use units::Rng;
use wire::{Ipv4Repr, LinkType, PcapWriter, UdpRepr};

fn simulate_in(dir: &Path, toml: &str) -> Built {
    let f = ScenarioFile::parse("test.toml", dir, toml).unwrap_or_else(|e| panic!("{e}"));
    let (_, r) = f.resolved(None, None).unwrap_or_else(|e| panic!("{e}"));
    sim::simulate(&r)
}

fn counter(b: &Built, name: &str) -> f64 {
    let r = b.apps.last().expect("the playback").report();
    r.counters.iter().find(|c| c.0 == name).unwrap_or_else(|| panic!("no counter {name} in {:?}", r.counters)).1
}

/// A fresh directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("undertow-playback-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A raw-IP capture of UDP between three private hosts (side A to
/// `undertow extract`: a NAT edge) and two public ones, both ways, with
/// times to the nanosecond. Returns each packet: (time since the first,
/// IP size, sent from side A).
fn synthetic_capture(path: &Path) -> Vec<(u64, u32, bool)> {
    let mut w = PcapWriter::new(Vec::new(), LinkType::RAW, 0).unwrap();
    let mut rng = Rng::stream(5, "playback-capture");
    let (private, public) = ([[10, 0, 0, 1], [10, 0, 0, 2], [10, 0, 0, 3]], [[93, 184, 216, 34], [1, 1, 1, 1]]);
    let t0 = 1_600_000_000_000_000_000u64;
    let mut t = 0u64;
    let mut out = Vec::new();
    for i in 0..600 {
        let (a, b) = (private[i % 3], public[(i / 3) % 2]);
        let from_a = rng.uniform() < 0.6;
        let (src, dst) = if from_a { (a, b) } else { (b, a) };
        let payload = (rng.uniform() * 1372.0) as u16;
        let mut buf = [0u8; 28];
        Ipv4Repr { src, dst, protocol: 17, ttl: 64, ident: 0, payload_len: 8 + payload }.emit(&mut buf).unwrap();
        UdpRepr { src_port: 40_000 + (i % 7) as u16, dst_port: 443, payload_len: payload }.emit(&mut buf[20..], src, dst).unwrap();
        w.write_packet(t0 + t, 28 + payload as u32, &buf).unwrap();
        out.push((t, 28 + payload as u32, from_a));
        t += 1 + rng.exponential(3e6) as u64;
    }
    std::fs::write(path, w.into_inner().unwrap()).unwrap();
    out
}

#[test]
fn udp_playback_of_a_capture_delivers_one_sides_packets_and_bytes() {
    let dir = scratch("capture");
    let packets = synthetic_capture(&dir.join("edge.pcap"));
    for (side, from_a) in [("a", true), ("b", false)] {
        let b = simulate_in(
            &dir,
            &format!(
                r#"
                duration = "4s"
                [topology.bottleneck]
                rate = "1Gbps"
                delay = "10ms"
                [[background]]
                model = "playback"
                file = "edge.pcap"
                side = "{side}"
                transport = "udp"
                granularity = "exact"
                hosts = 3
                start = "1s"
                "#
            ),
        );
        let mine: Vec<_> = packets.iter().filter(|p| p.2 == from_a).collect();
        let bytes: u64 = mine.iter().map(|p| p.1 as u64).sum();
        assert!(mine.len() > 150 && mine.last().unwrap().0 < 2_500_000_000, "{}", mine.len());
        assert_eq!(counter(&b, "sent_packets") as usize, mine.len(), "side {side}");
        assert_eq!(counter(&b, "sent_bytes") as u64, bytes);
        // Uncongested: all of it crosses the bottleneck and reaches the sinks.
        let fwd = &b.world.monitors[0];
        assert_eq!((fwd.total_pkts, fwd.total_bytes, fwd.total_drops), (mine.len() as u64, bytes, 0));
        assert_eq!(b.world.monitors[1].total_pkts, 0);
        assert_eq!(counter(&b, "received_bytes") as u64, bytes);
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// Times (ns) and sizes of a shared event list, read independently of
/// the model: `xz -dc` for the compressed one.
fn bellcore(name: &str) -> Vec<(u64, u32)> {
    let path = testdata::trace(name);
    let text = if name.ends_with(".xz") {
        let out = std::process::Command::new("xz").arg("-dc").arg(&path).output().expect("xz runs");
        String::from_utf8(out.stdout).unwrap()
    } else {
        std::fs::read_to_string(&path).unwrap()
    };
    let ns = |s: &str| (s.parse::<f64>().unwrap() * 1e6).round() as u64 * 1000;
    text.lines()
        .filter_map(|l| {
            let mut c = l.split_whitespace();
            let t = c.next()?;
            Some((ns(t), c.next().map_or(0, |s| s.parse().unwrap())))
        })
        .collect()
}

/// Packets and bytes per millisecond.
fn per_ms(items: impl Iterator<Item = (u64, u64)>) -> BTreeMap<u64, (u64, u64)> {
    let mut m = BTreeMap::new();
    for (t, b) in items {
        let e = m.entry(t / 1_000_000).or_insert((0, 0));
        e.0 += 1;
        e.1 += b;
    }
    m
}

#[test]
fn udp_playback_at_1ms_of_bellcore_arrives_in_the_traces_milliseconds_a_path_delay_later() {
    // Times only, 1000-byte packets; 100 s into the trace, 60 s of it.
    let trace = bellcore("bc-paug89-times.txt.xz");
    let b = simulate_in(
        Path::new(&testdata::traces_dir()),
        r#"
        duration = "62s"
        [topology.bottleneck]
        rate = "1Gbps"
        delay = "10ms"
        [[background]]
        model = "playback"
        file = "bc-paug89-times.txt.xz"
        transport = "udp"
        granularity = "1ms"
        packet_size = 1000
        offset = "100s"
        length = "60s"
        hosts = 4
        "#,
    );
    let window: Vec<u64> =
        trace.iter().map(|p| p.0).filter(|t| (100_000_000_000..160_000_000_000).contains(t)).map(|t| t - 100_000_000_000).collect();
    let want = per_ms(window.iter().map(|&t| (t, 1000)));
    assert!(window.len() > 20_000 && want.values().filter(|v| v.0 >= 3).count() > 100, "{}", window.len());
    assert_eq!(counter(&b, "sent_packets") as usize, window.len());
    assert_eq!(counter(&b, "received_bytes") as usize, 1000 * window.len());
    // Every millisecond's packets leave together at its start; a burst
    // clears a 1 Gbps link within the millisecond, so each arrives at the
    // far end of the bottleneck the same whole number of milliseconds
    // later (the access link's 1 ms and the bottleneck's 10 ms).
    let m = &b.world.monitors[0];
    let got: BTreeMap<u64, (u64, u64)> =
        m.pkts.iter().zip(&m.bytes).enumerate().filter(|(_, (&n, _))| n > 0).map(|(i, (&n, &b))| (i as u64 - 11, (n as u64, b as u64))).collect();
    assert_eq!(got, want);
}

#[test]
fn tcp_playback_of_bellcore_writes_and_delivers_all_the_traces_payload() {
    // Times and Ethernet frame sizes (64 to 1518 bytes), the first 60 s.
    let trace = bellcore("bc-paug89-100k.tl");
    let b = simulate_in(
        Path::new(&testdata::traces_dir()),
        r#"
        duration = "64s"
        [topology.bottleneck]
        rate = "100Mbps"
        delay = "10ms"
        [[background]]
        model = "playback"
        file = "bc-paug89-100k.tl"
        transport = "tcp"
        length = "60s"
        hosts = 2
        "#,
    );
    // Payload = IP size less 52 bytes of headers (timestamps on, as by
    // default); packets are dealt to the two hosts in time order.
    let window: Vec<&(u64, u32)> = trace.iter().filter(|p| p.0 < 60_000_000_000).collect();
    let payload: u64 = window.iter().map(|p| p.1.saturating_sub(52) as u64).sum();
    let bins: usize = (0..2)
        .map(|h| per_ms(window.iter().skip(h).step_by(2).map(|p| (p.0, p.1.saturating_sub(52) as u64))).values().filter(|v| v.1 > 0).count())
        .sum();
    assert!(payload > 8_000_000, "{payload}");
    assert_eq!(counter(&b, "trace_bytes") as u64, payload);
    assert_eq!(counter(&b, "sent_bytes") as u64, payload);
    assert_eq!(counter(&b, "received_bytes") as u64, payload);
    // One write per host and millisecond that holds payload (a blocked one
    // would add writes for its rest).
    assert_eq!(counter(&b, "writes") as usize, bins);
    assert_eq!(counter(&b, "behind_s"), 0.0);
}

#[test]
fn on_a_congested_path_udp_playback_sends_everything_and_tcp_playback_falls_behind() {
    // The Bellcore trace at four times its speed (about 5.9 Mbit/s) into 2 Mbit/s.
    let run = |transport: &str| {
        simulate_in(
            Path::new(&testdata::traces_dir()),
            &format!(
                r#"
                duration = "30s"
                [topology.bottleneck]
                rate = "2Mbps"
                delay = "10ms"
                [[background]]
                model = "playback"
                file = "bc-paug89-100k.tl"
                transport = "{transport}"
                speed = 4.0
                "#
            ),
        )
    };
    let udp = run("udp");
    eprintln!(
        "udp: sent {:.0} of {:.0} trace bytes, {:.0} received",
        counter(&udp, "sent_bytes"),
        counter(&udp, "trace_bytes"),
        counter(&udp, "received_bytes")
    );
    assert_eq!(counter(&udp, "sent_bytes"), counter(&udp, "trace_bytes"));
    // The link carries its 2 Mbit/s for the 30 s (7.5 MB of IP bytes) and
    // drops the rest; the datagrams that lost a fragment (1518-byte frames
    // cross as two) carried some of it in vain.
    let carried = udp.world.monitors[0].bytes.iter().map(|&b| b as f64).sum::<f64>();
    assert!((carried / 7.5e6 - 1.0).abs() < 0.01, "{carried}");
    assert!(counter(&udp, "received_bytes") < carried);
    assert!(counter(&udp, "received_bytes") < 0.45 * counter(&udp, "trace_bytes"));
    let tcp = run("tcp");
    let (sent, trace) = (counter(&tcp, "sent_bytes"), counter(&tcp, "trace_bytes"));
    eprintln!(
        "tcp: sent {sent:.0} of {trace:.0} trace bytes, {:.0} received, blocked {:.1} s, behind {:.1} s",
        counter(&tcp, "received_bytes"),
        counter(&tcp, "blocked_s"),
        counter(&tcp, "behind_s")
    );
    // Written no faster than the link drains (plus the buffers' worth).
    assert!(sent < 0.5 * trace, "{sent} of {trace}");
    assert!(counter(&tcp, "behind_s") > 10.0 && counter(&tcp, "blocked_s") > 10.0);
    // Yet it fills the link: its payload delivered is most of the 7.5 MB
    // (less headers and slow start).
    assert!(counter(&tcp, "received_bytes") > 0.85 * 7.5e6, "{}", counter(&tcp, "received_bytes"));
}

#[test]
fn datagrams_larger_than_the_mtu_cross_as_fragments_and_arrive_only_whole() {
    // 4000-byte datagrams: 1500 + 1500 + 1040 bytes on the wire (1480,
    // 1480 and 1020 bytes of the UDP datagram behind 20-byte headers).
    let scenario = |loss: &str| {
        format!(
            r#"
            duration = "12s"
            [topology.bottleneck]
            rate = "1Gbps"
            delay = "10ms"
            loss = "{loss}"
            [[background]]
            model = "playback"
            file = "bc-paug89-times.txt.xz"
            transport = "udp"
            packet_size = 4000
            length = "10s"
            "#
        )
    };
    let b = simulate_in(Path::new(&testdata::traces_dir()), &scenario("0%"));
    let sent = counter(&b, "sent_packets");
    assert!(sent > 2000.0, "{sent}");
    let m = &b.world.monitors[0];
    assert_eq!(m.pkts.iter().sum::<u32>() as f64, 3.0 * sent);
    assert_eq!(m.bytes.iter().map(|&x| x as u64).sum::<u64>() as f64, 4040.0 * sent);
    assert_eq!((counter(&b, "received_packets"), counter(&b, "received_bytes")), (sent, 4000.0 * sent));
    // A lost fragment loses its datagram: 0.9^3 of them arrive.
    let b = simulate_in(Path::new(&testdata::traces_dir()), &scenario("10%"));
    let (n, p) = (counter(&b, "sent_packets"), 0.9f64.powi(3));
    let got = counter(&b, "received_packets");
    assert!((got - n * p).abs() < 4.0 * (n * p * (1.0 - p)).sqrt(), "{got} of {n}, expected {}", n * p);
}
