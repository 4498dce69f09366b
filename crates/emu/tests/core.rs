//! The core between two namespaces, measured from outside with real UDP
//! sockets: a probe's one-way delay and a burst's rate against the path's
//! configured delay and rate. Skips, saying why, without root or TUN.

use emu::testbed::Testbed;
use emu::Network;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::time::Duration;

/// One host each side of a `mbps`, `delay_ms` bottleneck (each way, 1000
/// packets), on 1 Gbit/s access links without delay.
fn rig(mbps: u64, delay_ms: u64) -> Testbed {
    Testbed::new(mbps, delay_ms, 1000, 1000).unwrap()
}

/// A socket of namespace `space` bound to `a:port`.
fn socket(net: &Network, space: usize, a: IpAddr, port: u16) -> UdpSocket {
    let s = net.spaces[space].ns.within(|| UdpSocket::bind(SocketAddr::new(a, port))).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    s
}

/// Sends `n` datagrams of `size` payload bytes, `gap` apart (back to back
/// if zero), each stamped with its send time; returns each one's (send,
/// receive) times in ns, in arrival order.
fn exchange(r: &mut Testbed, n: usize, size: usize, gap: Duration) -> Vec<(u64, u64)> {
    let tx = socket(&r.net, 0, r.left, 0);
    let rx = socket(&r.net, 1, r.right, 9000);
    let to = SocketAddr::new(r.right, 9000);
    r.with_core(|_| {
        std::thread::scope(|s| {
            let recv = s.spawn(move || {
                let mut got = Vec::new();
                let mut buf = [0u8; 2048];
                while got.len() < n {
                    match rx.recv(&mut buf) {
                        Ok(_) => got.push((u64::from_le_bytes(buf[..8].try_into().unwrap()), emu::sys::monotonic_ns())),
                        Err(_) => break,
                    }
                }
                got
            });
            let mut payload = vec![0u8; size];
            for _ in 0..n {
                payload[..8].copy_from_slice(&emu::sys::monotonic_ns().to_le_bytes());
                tx.send_to(&payload, to).unwrap();
                if !gap.is_zero() {
                    std::thread::sleep(gap);
                }
            }
            recv.join().unwrap()
        })
    })
    .unwrap()
}

fn quantile(v: &mut [f64], q: f64) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[((v.len() - 1) as f64 * q).round() as usize]
}

#[test]
fn a_probe_takes_the_paths_delay_and_serialisation_within_a_fraction_of_a_millisecond() {
    let Some(_one) = emu::testbed::exclusive() else { return };
    let mut r = rig(100, 10);
    // As a run does: the core's own overhead measured and taken out.
    let overhead = r.calibrate().unwrap();
    assert!(overhead.probes >= 90, "{} of 100 calibration probes came through", overhead.probes);
    let got = exchange(&mut r, 200, 172, Duration::from_millis(2));
    assert_eq!(got.len(), 200, "every probe arrives");
    // 200 IP bytes: 1.6 µs on each 1 Gbit/s access link, 16 µs at 100 Mbit/s.
    let expected = 10e-3 + 2.0 * 1.6e-6 + 16e-6;
    let mut err: Vec<f64> = got.iter().map(|(s, r)| (r - s) as f64 * 1e-9 - expected).collect();
    let (p50, p99) = (quantile(&mut err, 0.5), quantile(&mut err, 0.99));
    let late = &r.core.stats.lateness;
    eprintln!(
        "one-way delay error p50 {:.0} µs p99 {:.0} µs (overhead taken out {} µs); core lateness p50 {} µs p99 {} µs",
        p50 * 1e6,
        p99 * 1e6,
        r.core.correction().0 / 1000,
        late.quantile_ns(0.5).unwrap() / 1000,
        late.quantile_ns(0.99).unwrap() / 1000
    );
    // Hardly ever early: what is taken out is what nearly every crossing
    // pays (its low quantile), so only the spread below it shows.
    assert!(err[0] > -20e-6, "a probe arrived {:.0} µs early", -err[0] * 1e6);
    // Late by the kernels' send and receive paths and wake-ups only.
    assert!(p50 < 300e-6, "median error {:.0} µs", p50 * 1e6);
    assert_eq!(r.core.stats.delivered, 200);
    assert_eq!(r.core.stats.unroutable, 0);
}

#[test]
fn a_burst_leaves_the_bottleneck_at_its_rate() {
    let Some(_one) = emu::testbed::exclusive() else { return };
    let mut r = rig(100, 5);
    let n = 300;
    let got = exchange(&mut r, n, 1472, Duration::ZERO);
    assert_eq!(got.len(), n, "every packet of the burst arrives (the queue holds 1000)");
    let span = (got[n - 1].1 - got[0].1) as f64 * 1e-9;
    let rate = (n - 1) as f64 * 1500.0 * 8.0 / span;
    eprintln!("burst rate {:.2} Mbit/s", rate / 1e6);
    assert!((rate / 100e6 - 1.0).abs() < 0.02, "rate {:.2} Mbit/s against 100", rate / 1e6);
    let counters = r.net.counters().unwrap();
    assert_eq!(counters[0].tx_dropped, 0, "the left TUN dropped nothing");
}

#[test]
fn the_namespaces_are_gone_when_the_network_is_dropped() {
    let Some(_one) = emu::testbed::exclusive() else { return };
    let r = rig(10, 1);
    let names: Vec<String> = r.net.spaces.iter().map(|s| s.ns.name().to_string()).collect();
    assert!(names.iter().all(|n| emu::netns::list().contains(n)));
    drop(r);
    let now = emu::netns::list();
    assert!(names.iter().all(|n| !now.contains(n)), "{now:?} still holds some of {names:?}");
}
