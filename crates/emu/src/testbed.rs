//! Two hosts across one bottleneck, each in a namespace of its own, with a
//! core between them: what the emulator's own tests and benchmarks
//! measure through.

use crate::core::{Core, CoreConfig};
use crate::network::{Network, SpacePlan};
use crate::{addr, sys};
use net::{Fabric, PathSpec, QueueLimit, Side};
use std::io;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use units::{Dur, Rate};

pub struct Testbed {
    pub net: Network,
    pub core: Core,
    /// Host 0 (space 0, left) and host 1 (space 1, right).
    pub left: IpAddr,
    pub right: IpAddr,
    /// CLOCK_MONOTONIC at the core's time zero.
    pub origin_ns: u64,
}

impl Testbed {
    /// Host 0 on the left and host 1 on the right of a `mbps`, `delay_ms`
    /// bottleneck each way with a queue of `queue` packets, on access links
    /// of `access_mbps` without delay.
    pub fn new(mbps: u64, delay_ms: u64, queue: u32, access_mbps: u64) -> io::Result<Testbed> {
        let neck = PathSpec::link(Rate::mbps(mbps), Dur::from_millis(delay_ms), QueueLimit::Packets(queue), 0.0, "unused");
        Testbed::with_bottleneck(neck, access_mbps, queue.max(1000), [vec![], vec![]])
    }

    /// Host 0 on the left and host 1 on the right of bottleneck `neck` each
    /// way, on access links of `access_mbps` without delay and `access_queue`
    /// packets; `sysctls` of each host's namespace (dotted keys).
    pub fn with_bottleneck(neck: PathSpec, access_mbps: u64, access_queue: u32, sysctls: [Vec<(String, String)>; 2]) -> io::Result<Testbed> {
        let mut fabric = Fabric::dumbbell(&[neck.clone(), neck], 1).map_err(|e| io::Error::other(e.to_string()))?;
        let access = PathSpec::link(Rate::mbps(access_mbps), Dur::ZERO, QueueLimit::Packets(access_queue), 0.0, "unused");
        for side in [Side::Left, Side::Right] {
            fabric.add_host(side, access.clone(), access.clone(), None, false).map_err(|e| io::Error::other(e.to_string()))?;
        }
        let (left, right) = (addr::host(Side::Left, 0, false), addr::host(Side::Right, 0, false));
        let [l, r] = sysctls;
        let space = |label: &str, a: IpAddr, sysctls| SpacePlan { label: label.into(), addrs: vec![a], sysctls, ..SpacePlan::default() };
        let net = Network::create(&[space("l", left, l), space("r", right, r)])?;
        let origin_ns = sys::monotonic_ns();
        let core = Core::new(fabric, &[(left, 0), (right, 1)], CoreConfig::default(), origin_ns);
        Ok(Testbed { net, core, left, right, origin_ns })
    }

    /// Measures the core's one-way overhead between the two hosts and
    /// takes it off their paths from then on.
    pub fn calibrate(&mut self) -> io::Result<crate::overhead::Overhead> {
        let o = crate::overhead::calibrate(&self.net, (self.left, 0), (self.right, 1), CoreConfig::default())?;
        self.core.set_overhead(o);
        Ok(o)
    }

    /// Runs `load` here while the core forwards on another thread; what
    /// `load` returned, or the core's error.
    pub fn with_core<T: Send>(&mut self, load: impl FnOnce(&Network) -> T + Send) -> io::Result<T> {
        let stop = AtomicBool::new(false);
        let (core, net) = (&mut self.core, &self.net);
        std::thread::scope(|s| {
            let fwd = s.spawn(|| core.run(net, None, &stop));
            let out = load(net);
            stop.store(true, Ordering::Relaxed);
            fwd.join().map_err(|_| io::Error::other("the core panicked"))??;
            Ok(out)
        })
    }
}

/// Leave to run a testbed: `None` (saying why on stderr) where the
/// emulator cannot run; otherwise a guard that keeps testbeds of this
/// process one at a time, since each core spins near departures and a
/// machine may have two cores.
pub fn exclusive() -> Option<std::sync::MutexGuard<'static, ()>> {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    if let Some(why) = crate::network::unavailable() {
        eprintln!("skipped: {why}");
        return None;
    }
    Some(ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner()))
}
