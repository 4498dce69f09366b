//! The core's precision and capacity, measured through real sockets
//! between two namespaces (root). Prints one JSON object.
//!
//! - delay: sparse UDP probes across a 100 Mbit/s, 20 ms link: one-way
//!   delay error against the configured delay and serialisation, where it
//!   goes (to the core's read, the core's lateness, from the departure to
//!   the arrival stamp), with the core's own overhead left in (`raw`) and
//!   taken out as a run does (`corrected`);
//! - rate: the same link kept busy by a UDP flood and by one TCP (cubic)
//!   transfer: the rate packets leave at against 100 Mbit/s;
//! - capacity: a 10 Gbit/s, 1 ms link offered rising UDP loads of
//!   1500-byte packets: the highest load forwarded whole with the core's
//!   p99 lateness under 100 us and no TUN drops.
//!
//! The load's threads run at
//! real-time priority below the core's (SCHED_FIFO 40), so that other
//! jobs on the machine do not break the sender's pacing into bursts no
//! link would deliver.
//!
//! Usage: core_bench [--quick] [--delay | --capacity (that measurement
//! alone)] [--capacity-secs S (each load's length; 5, quick 0.5)]

use emu::testbed::Testbed;
use emu::Network;
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

fn rig(mbps: u64, delay_ms: u64, queue: u32) -> Testbed {
    Testbed::new(mbps, delay_ms, queue, 100_000).unwrap()
}

fn quantile(v: &mut [f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    v[((v.len() - 1) as f64 * q).round() as usize]
}

/// Runs `load` with the two hosts' addresses while the core forwards.
fn with_core<T: Send>(r: &mut Testbed, load: impl FnOnce(&Network, IpAddr, IpAddr) -> T + Send) -> T {
    let (left, right) = (r.left, r.right);
    r.with_core(|net| load(net, left, right)).unwrap()
}

fn udp(net: &Network, space: usize, a: IpAddr, port: u16) -> UdpSocket {
    let s = net.spaces[space].ns.within(|| UdpSocket::bind(SocketAddr::new(a, port))).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(500))).unwrap();
    s
}

/// Receives datagrams stamped with their send time until none come for
/// the read timeout; (sent, arrived, read) ns each on CLOCK_MONOTONIC:
/// arrived as the kernel stamped it (when the core's write delivered it),
/// read when the receiving thread had woken and read it.
fn receive(rx: UdpSocket) -> Vec<(u64, u64, u64)> {
    use std::os::fd::AsRawFd;
    emu::sys::enable_rx_timestamps(rx.as_raw_fd()).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 2048];
    while let Ok((_, stamp)) = emu::sys::recv_stamped(rx.as_raw_fd(), &mut buf) {
        let (mono, real) = (emu::sys::monotonic_ns(), emu::sys::realtime_ns());
        let arrived = stamp.map_or(mono, |s| mono - (real - s).min(mono));
        got.push((u64::from_le_bytes(buf[..8].try_into().unwrap()), arrived, mono));
    }
    got
}

/// Sends `n` stamped datagrams of `size` payload bytes at `mbps` (of IP
/// bytes): what is due every 100 us goes in a burst, and the sender
/// sleeps between bursts (a spinning sender would take a core from the
/// core on a two-core machine).
fn send_paced(tx: &UdpSocket, to: SocketAddr, n: usize, size: usize, mbps: f64) {
    let gap_ns = (size + 28) as f64 * 8.0 / (mbps * 1e6) * 1e9;
    let mut payload = vec![0u8; size];
    let t0 = emu::sys::monotonic_ns();
    let mut i = 0;
    while i < n {
        let now = emu::sys::monotonic_ns();
        while i < n && t0 + (i as f64 * gap_ns) as u64 <= now {
            payload[..8].copy_from_slice(&emu::sys::monotonic_ns().to_le_bytes());
            let _ = tx.send_to(&payload, to);
            i += 1;
        }
        std::thread::sleep(Duration::from_micros(100));
    }
}

/// Each probe's send stamp and the instant it reached the end of the
/// bottleneck, from the core: when the core read it follows (the paths'
/// times before that end are exact).
#[derive(Clone, Default)]
struct Reads(std::sync::Arc<std::sync::Mutex<Vec<(u64, u64)>>>);

impl emu::core::Observer for Reads {
    fn arrived(&mut self, _monitor: u8, at: units::Time, ip: &[u8]) {
        // A probe's payload follows 20 bytes of IPv4 and 8 of UDP.
        if let Some(p) = ip.get(28..36) {
            self.0.lock().unwrap().push((u64::from_le_bytes(p.try_into().unwrap()), at.0));
        }
    }
    fn finish(self: Box<Self>) -> std::io::Result<()> {
        Ok(())
    }
}

/// The delay measurement, with the core's overhead taken out if `corrected`.
fn delay(quick: bool, corrected: bool) -> serde_json::Value {
    let mut r = rig(100, 20, 1000);
    let overhead = if corrected { Some(r.calibrate().unwrap()) } else { None };
    let n = if quick { 500 } else { 2000 };
    let reads = Reads::default();
    r.core.observer = Some(Box::new(reads.clone()));
    let got = with_core(&mut r, |net, left, right| {
        let (tx, rx) = (udp(net, 0, left, 0), udp(net, 1, right, 9000));
        std::thread::scope(|s| {
            let h = s.spawn(move || receive(rx));
            for _ in 0..n {
                let mut p = [0u8; 172];
                p[..8].copy_from_slice(&emu::sys::monotonic_ns().to_le_bytes());
                tx.send_to(&p, SocketAddr::new(right, 9000)).unwrap();
                std::thread::sleep(Duration::from_micros(1000));
            }
            h.join().unwrap()
        })
    });
    // 200 IP bytes: 16 us at 100 Mbit/s, next to nothing on the access links.
    let expected = 20e-3 + 16e-6;
    let mut err: Vec<f64> = got.iter().map(|(s, r, _)| (r - s) as f64 * 1e-9 - expected).collect();
    let mut read_err: Vec<f64> = got.iter().map(|(s, _, r)| (r - s) as f64 * 1e-9 - expected).collect();
    // Where the error goes: the sender's kernel to the core's read (the
    // end of the bottleneck less its 20 ms and 16 us, the access link's
    // 16 ns aside), and from the departure (the read plus the path) to
    // the receiving kernel's stamp: the core's lateness, its write, and
    // the receiving stack up to the stamp.
    // The bottleneck hands each probe on earlier by the correction.
    let (origin, taken) = (r.origin_ns, r.core.correction().0);
    let ends: std::collections::HashMap<u64, u64> = reads.0.lock().unwrap().iter().map(|&(s, at)| (s, origin + at)).collect();
    let (mut to_read, mut after_departure) = (Vec::new(), Vec::new());
    for (s, arrived, _) in &got {
        if let Some(&end) = ends.get(s) {
            to_read.push((end + taken) as f64 * 1e-9 - 20_016e-6 - *s as f64 * 1e-9);
            after_departure.push((*arrived as f64 - end as f64) * 1e-9);
        }
    }
    let late = &r.core.stats.lateness;
    serde_json::json!({
        "link": "100 Mbit/s, 20 ms",
        "overhead_taken_out_us": overhead.map(|o| o.correction().0 as f64 / 1e3),
        "overhead_measured_us": overhead.map(|o| serde_json::json!({ "p10": o.p10_ns as f64 / 1e3, "p50": o.p50_ns as f64 / 1e3, "p99": o.p99_ns as f64 / 1e3 })),
        "send_to_core_read_us": { "p50": quantile(&mut to_read, 0.5) * 1e6, "p99": quantile(&mut to_read, 0.99) * 1e6 },
        "departure_to_arrival_stamp_us": { "p50": quantile(&mut after_departure, 0.5) * 1e6, "p99": quantile(&mut after_departure, 0.99) * 1e6 },
        "probes": n, "received": got.len(),
        "delay_error_us": { "min": quantile(&mut err, 0.0) * 1e6, "p50": quantile(&mut err, 0.5) * 1e6, "p99": quantile(&mut err, 0.99) * 1e6 },
        "delay_error_at_read_us": { "p50": quantile(&mut read_err, 0.5) * 1e6, "p99": quantile(&mut read_err, 0.99) * 1e6 },
        "core_lateness_us": { "p50": late.quantile_ns(0.5).unwrap_or(0) as f64 / 1e3, "p99": late.quantile_ns(0.99).unwrap_or(0) as f64 / 1e3 },
    })
}

/// The rate of a busy 100 Mbit/s link under a UDP flood.
fn rate_udp(quick: bool) -> serde_json::Value {
    let mut r = rig(100, 20, 1000);
    let n = if quick { 4000 } else { 20000 };
    let got = with_core(&mut r, |net, left, right| {
        let (tx, rx) = (udp(net, 0, left, 0), udp(net, 1, right, 9000));
        std::thread::scope(|s| {
            let h = s.spawn(move || receive(rx));
            // 20% more than the link: the queue stays busy, and overflows.
            send_paced(&tx, SocketAddr::new(right, 9000), n, 1472, 120.0);
            h.join().unwrap()
        })
    });
    // The middle of the run: after the queue filled, before it drained.
    let (a, b) = (got.len() / 10, got.len() * 9 / 10);
    let span = (got[b].1 - got[a].1) as f64 * 1e-9;
    let rate = (b - a) as f64 * 1500.0 * 8.0 / span;
    serde_json::json!({ "offered_mbps": 120.0, "measured_mbps": rate / 1e6, "rate_error": rate / 100e6 - 1.0 })
}

/// The goodput of one TCP transfer through the 100 Mbit/s link, and the
/// rate the link carried while it ran.
fn rate_tcp(quick: bool) -> serde_json::Value {
    let mut r = rig(100, 20, 1000);
    let secs = if quick { 3.0 } else { 8.0 };
    let received = AtomicU64::new(0);
    let span = with_core(&mut r, |net, left, right| {
        let l = net.spaces[1].ns.within(|| TcpListener::bind(SocketAddr::new(right, 5001))).unwrap();
        let c = net.spaces[0].ns.within(|| {
            let s = std::net::TcpStream::connect_timeout(&SocketAddr::new(right, 5001), Duration::from_secs(2))?;
            Ok(s)
        });
        let _ = left;
        let mut c: TcpStream = c.unwrap();
        let (mut srv, _) = l.accept().unwrap();
        std::thread::scope(|s| {
            let rcv = &received;
            let h = s.spawn(move || {
                let mut buf = vec![0u8; 1 << 16];
                let t0 = Instant::now();
                let mut t1 = t0;
                while let Ok(n) = srv.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    rcv.fetch_add(n as u64, Ordering::Relaxed);
                    t1 = Instant::now();
                }
                (t1 - t0).as_secs_f64()
            });
            let buf = vec![0u8; 1 << 16];
            let t0 = Instant::now();
            while t0.elapsed().as_secs_f64() < secs {
                if c.write_all(&buf).is_err() {
                    break;
                }
            }
            drop(c);
            h.join().unwrap()
        })
    });
    let goodput = received.load(Ordering::Relaxed) as f64 * 8.0 / span;
    serde_json::json!({ "seconds": span, "goodput_mbps": goodput / 1e6, "goodput_share_of_link": goodput / 100e6 })
}

/// The highest offered load the core forwards whole on time.
fn capacity(quick: bool, secs: f64) -> serde_json::Value {
    let loads: &[f64] = if quick { &[250.0, 500.0, 1000.0] } else { &[250.0, 500.0, 750.0, 1000.0, 1500.0, 2000.0, 2500.0, 3000.0] };
    let mut rows = Vec::new();
    let mut best = 0.0;
    for &mbps in loads {
        let mut r = rig(10_000, 1, 10_000);
        let before = r.net.counters().unwrap();
        let n = (mbps * 1e6 / (1500.0 * 8.0) * secs) as usize;
        let got = with_core(&mut r, |net, left, right| {
            let (tx, rx) = (udp(net, 0, left, 0), udp(net, 1, right, 9000));
            std::thread::scope(|s| {
                let h = s.spawn(move || receive(rx));
                send_paced(&tx, SocketAddr::new(right, 9000), n, 1472, mbps);
                h.join().unwrap()
            })
        });
        let after = r.net.counters().unwrap();
        let drops = after[0].tx_dropped - before[0].tx_dropped;
        let p99 = r.core.stats.lateness.quantile_ns(0.99).unwrap_or(0) as f64 / 1e3;
        // What the core forwarded (the receiving socket may drop more).
        let whole = r.core.stats.delivered as f64 / n as f64;
        // The rate the load actually kept, at the receiver.
        let span = got.last().zip(got.first()).map_or(0, |(l, f)| l.1 - f.1) as f64 * 1e-9;
        let carried = got.len() as f64 * 1500.0 * 8.0 / span / 1e6;
        // A stall (the kernel throttling real-time threads, say) shows as
        // a gap in the arrivals far beyond the load's 100 us bursts.
        let gap = got.windows(2).map(|w| w[1].1.saturating_sub(w[0].1)).max().unwrap_or(0) as f64 / 1e6;
        let ok = drops == 0 && p99 <= 100.0 && whole >= 0.999;
        if ok && mbps > best {
            best = mbps;
        }
        let cpu = r.core.stats.cpu_ns as f64 / r.core.stats.wall_ns.max(1) as f64;
        rows.push(serde_json::json!({ "offered_mbps": mbps, "carried_mbps": carried, "delivered_share": whole, "tun_drops": drops, "core_lateness_p99_us": p99, "core_cpu_share": cpu, "longest_gap_ms": gap, "ok": ok }));
    }
    serde_json::json!({ "load_s": secs, "loads": rows, "highest_ok_mbps": best })
}

fn main() {
    if let Some(why) = emu::network::unavailable() {
        println!("{}", serde_json::json!({ "skipped": why }));
        return;
    }
    let quick = std::env::args().any(|a| a == "--quick");
    let args: Vec<String> = std::env::args().collect();
    let delay_only = args.iter().any(|a| a == "--delay");
    let capacity_only = args.iter().any(|a| a == "--capacity");
    // Each load lasts several of the kernel's real-time periods (1 s), so
    // that a core which would exhaust its real-time budget shows it.
    let secs = match args.iter().position(|a| a == "--capacity-secs").and_then(|i| args.get(i + 1)) {
        Some(v) => match v.parse::<f64>() {
            Ok(s) if s > 0.0 && s <= 60.0 => s,
            _ => {
                eprintln!("core_bench: --capacity-secs takes seconds in (0, 60], not {v:?}");
                std::process::exit(2);
            }
        },
        None if quick => 0.5,
        None => 5.0,
    };
    // Threads spawned from here inherit it.
    let load_priority = match emu::sys::set_realtime(40) {
        Ok(()) => "SCHED_FIFO 40".to_string(),
        Err(e) => format!("ordinary ({e})"),
    };
    if capacity_only {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ "load_priority": load_priority, "capacity": capacity(quick, secs) })).unwrap()
        );
        return;
    }
    if delay_only {
        println!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({ "load_priority": load_priority, "delay": { "raw": delay(quick, false), "corrected": delay(quick, true) } })
            )
            .unwrap()
        );
        return;
    }
    let out = serde_json::json!({
        "load_priority": load_priority,
        "delay": { "raw": delay(quick, false), "corrected": delay(quick, true) },
        "rate_udp": rate_udp(quick),
        "rate_tcp": rate_tcp(quick),
        "capacity": capacity(quick, secs),
    });
    println!("{}", serde_json::to_string_pretty(&out).unwrap());
}
