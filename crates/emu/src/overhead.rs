//! The core's own one-way overhead, and the rule that takes it out of the
//! emulated paths.
//!
//! A packet crossing the core spends time no path element accounts for:
//! from the sender's kernel to the core's read of the TUN, the core's
//! lateness against the departure time, and the TUN write that runs the
//! receiving stack up to its arrival stamp. The core measures that sum at
//! start-up ([`calibrate`]: probes through its own TUNs across a path of
//! no delay) and hands each packet to the end of the first path of its
//! route whose propagation delay covers it that much earlier
//! ([`Advance`]), so that the path as a whole adds its configured delay.

use crate::core::{Core, CoreConfig};
use crate::network::Network;
use crate::sys;
use net::{Fabric, PathSpec, QueueLimit, Side};
use std::io;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use units::{Dur, Rate, Time};

/// Probes sent at start-up, and their spacing: sparse, as a path's
/// exchanges mostly are, and over in a tenth of a second.
const PROBES: usize = 100;
const PROBE_GAP: Duration = Duration::from_micros(1000);
/// The quantile of the probes' overhead taken out: low, so that what is
/// taken out is what every packet pays, and only the spread above it
/// (wake-ups, other work on the machine) remains as lateness.
const QUANTILE: f64 = 0.1;

/// What start-up measured of the core's one-way overhead.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Overhead {
    /// Probes that came through.
    pub probes: usize,
    /// Each probe's time from its send to the receiving kernel's arrival
    /// stamp, beyond what its path took: p10, p50, p99 in ns.
    pub p10_ns: u64,
    pub p50_ns: u64,
    pub p99_ns: u64,
}

impl Overhead {
    /// What the core takes out of each packet's path.
    pub fn correction(&self) -> Dur {
        Dur(self.p10_ns)
    }
}

/// The rule: each packet owes the correction once, to the first path of
/// its route whose fixed propagation delay is at least the correction; that
/// path hands it on that much earlier, never before the instant it was
/// scheduled at and never before a packet that reached the path's end
/// before it. A path with less delay takes nothing off, so a route shorter
/// than the overhead keeps all of it.
#[derive(Clone, Debug)]
pub struct Advance {
    by: Dur,
    /// Per path: its fixed delay covers the correction.
    covers: Vec<bool>,
    /// Per path: the latest instant a packet was handed to its end.
    last_out: Vec<Time>,
}

impl Advance {
    /// The rule for paths built from `specs`, taking `by` off.
    pub fn new(by: Dur, specs: &[PathSpec]) -> Advance {
        let covers = specs.iter().map(|s| by > Dur::ZERO && fixed_delay(s) >= by).collect();
        Advance { by, covers, last_out: vec![Time::ZERO; specs.len()] }
    }

    pub fn by(&self) -> Dur {
        self.by
    }

    /// When a packet whose last bit reaches the end of `path` at `at`, as
    /// worked out at `now`, is handed on; `owes` is whether it still owes
    /// the correction, cleared when this path takes it.
    pub fn end_of_path(&mut self, path: u32, now: Time, at: Time, owes: &mut bool) -> Time {
        let p = path as usize;
        let mut t = at;
        if *owes && self.covers[p] {
            t = Time(at.0.saturating_sub(self.by.0)).max(now);
            *owes = false;
        }
        t = t.max(self.last_out[p]);
        self.last_out[p] = t;
        t
    }
}

/// A path's propagation delay that holds at every instant: its fixed
/// delays (a scheduled delay may fall to nothing).
fn fixed_delay(spec: &PathSpec) -> Dur {
    spec.elements
        .iter()
        .map(|e| match e {
            net::ElementSpec::Delay(net::DelaySpec::Fixed(d)) => *d,
            _ => Dur::ZERO,
        })
        .fold(Dur::ZERO, |a, b| a + b)
}

/// Measures the core's one-way overhead between two hosts of `net`, `from`
/// and `to` (address and space), with a core of configuration `cfg` across
/// a path of no delay, before the run's own core starts.
pub fn calibrate(net: &Network, from: (IpAddr, u32), to: (IpAddr, u32), cfg: CoreConfig) -> io::Result<Overhead> {
    // 100 Gbit/s: a probe's serialisation is a few nanoseconds.
    let path = PathSpec::link(Rate::mbps(100_000), Dur::ZERO, QueueLimit::Packets(1000), 0.0, "unused");
    let mut fabric = Fabric::dumbbell(&[path.clone(), path.clone()], 1).map_err(|e| io::Error::other(e.to_string()))?;
    for side in [Side::Left, Side::Right] {
        fabric.add_host(side, path.clone(), path.clone(), None, false).map_err(|e| io::Error::other(e.to_string()))?;
    }
    let mut core = Core::new(fabric, &[from, to], cfg, sys::monotonic_ns());
    let tx = net.spaces[from.1 as usize].ns.within(|| UdpSocket::bind(SocketAddr::new(from.0, 0)))?;
    let rx = net.spaces[to.1 as usize].ns.within(|| UdpSocket::bind(SocketAddr::new(to.0, 0)))?;
    rx.set_read_timeout(Some(Duration::from_millis(200)))?;
    sys::enable_rx_timestamps(std::os::fd::AsRawFd::as_raw_fd(&rx))?;
    let dest = rx.local_addr()?;
    let stop = AtomicBool::new(false);
    let extra = std::thread::scope(|s| {
        let fwd = s.spawn(|| core.run(net, None, &stop));
        let recv = s.spawn(|| receive(&rx));
        let mut p = [0u8; 64];
        for _ in 0..PROBES {
            p[..8].copy_from_slice(&sys::monotonic_ns().to_le_bytes());
            let _ = tx.send_to(&p, dest);
            std::thread::sleep(PROBE_GAP);
        }
        let got = recv.join().map_err(|_| io::Error::other("the calibration's receiver panicked"));
        stop.store(true, Ordering::Relaxed);
        fwd.join().map_err(|_| io::Error::other("the core panicked"))??;
        got
    })?;
    Ok(summarise(extra))
}

/// Each probe's send-to-stamp time in ns, until the probes stop coming.
fn receive(rx: &UdpSocket) -> Vec<u64> {
    let fd = std::os::fd::AsRawFd::as_raw_fd(rx);
    let mut got = Vec::with_capacity(PROBES);
    let mut buf = [0u8; 128];
    while got.len() < PROBES {
        let Ok((n, stamp)) = sys::recv_stamped(fd, &mut buf) else { break };
        if n < 8 {
            continue;
        }
        // The stamp is on CLOCK_REALTIME: carried over to CLOCK_MONOTONIC.
        let (mono, real) = (sys::monotonic_ns(), sys::realtime_ns());
        let arrived = stamp.map_or(mono, |s| mono - real.saturating_sub(s).min(mono));
        got.push(arrived.saturating_sub(u64::from_le_bytes(buf[..8].try_into().unwrap())));
    }
    got
}

fn summarise(mut v: Vec<u64>) -> Overhead {
    if v.is_empty() {
        return Overhead::default();
    }
    v.sort_unstable();
    let q = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    Overhead { probes: v.len(), p10_ns: q(QUANTILE), p50_ns: q(0.5), p99_ns: q(0.99) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn specs(delays_us: &[u64]) -> Vec<PathSpec> {
        delays_us.iter().map(|&d| PathSpec::link(Rate::mbps(100), Dur::from_micros(d), QueueLimit::Packets(10), 0.0, "x")).collect()
    }

    const US: u64 = 1_000;

    #[test]
    fn a_packet_pays_the_correction_once_on_the_first_path_that_covers_it() {
        // Path 0 has 10 µs of delay, path 1 has 20 ms: a 30 µs correction.
        let mut a = Advance::new(Dur::from_micros(30), &specs(&[10, 20_000]));
        let mut owes = true;
        assert_eq!(a.end_of_path(0, Time(0), Time(12 * US), &mut owes), Time(12 * US), "too short a path keeps it");
        assert!(owes);
        let at = Time(12 * US + 20_016 * US);
        assert_eq!(a.end_of_path(1, Time(12 * US), at, &mut owes), Time(at.0 - 30 * US));
        assert!(!owes, "paid");
        // Paid: a later path takes nothing more off.
        let mut b = Advance::new(Dur::from_micros(30), &specs(&[20_000, 20_000]));
        let mut owes = false;
        assert_eq!(b.end_of_path(1, Time(0), Time(20_000 * US), &mut owes), Time(20_000 * US));
    }

    #[test]
    fn never_before_the_packet_was_scheduled_nor_before_one_ahead_of_it() {
        let mut a = Advance::new(Dur::from_micros(30), &specs(&[40]));
        let mut owes = true;
        assert_eq!(a.end_of_path(0, Time(100 * US), Time(145 * US), &mut owes), Time(115 * US));
        // One that paid already is not handed on ahead of it, and one that
        // pays here would overtake it by 30 µs: it waits for it instead.
        let mut paid = false;
        assert_eq!(a.end_of_path(0, Time(101 * US), Time(113 * US), &mut paid), Time(115 * US), "no overtaking");
        let mut owes = true;
        assert_eq!(a.end_of_path(0, Time(102 * US), Time(150 * US), &mut owes), Time(120 * US));
        // Never before the instant it was worked out at.
        let mut owes = true;
        assert_eq!(a.end_of_path(0, Time(200 * US), Time(210 * US), &mut owes), Time(200 * US));
    }

    #[test]
    fn no_correction_leaves_every_time_alone() {
        let mut a = Advance::new(Dur::ZERO, &specs(&[20_000]));
        let mut owes = true;
        assert_eq!(a.end_of_path(0, Time(0), Time(20_000 * US), &mut owes), Time(20_000 * US));
        assert!(owes);
    }

    #[test]
    fn the_correction_is_the_low_quantile_of_the_probes() {
        let o = summarise((1..=100).map(|i| i * 1_000).collect());
        assert_eq!((o.probes, o.p10_ns, o.p50_ns, o.p99_ns), (100, 11_000, 51_000, 99_000));
        assert_eq!(o.correction(), Dur(11_000));
        assert_eq!(summarise(Vec::new()).correction(), Dur::ZERO);
    }
}
