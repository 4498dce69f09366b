//! The emulated network's namespaces: each holds a TUN device whose other
//! end is the core, the addresses of the hosts that live there, and a
//! route for the emulator's ranges through the TUN. Nothing else: no
//! route leads to the machine's own interfaces.

use crate::addr;
use crate::netns::{self, Namespace};
use crate::sys;
use std::io;
use std::net::IpAddr;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

/// The TUN device's name inside each namespace.
pub const TUN: &str = "ut0";
/// Packets the kernel may queue towards the core before the TUN drops
/// (its default of 500 is soon overrun by a burst).
const TUN_TXQUEUELEN: u32 = 10_000;

/// One namespace to make: a label for its name, and the hosts in it.
#[derive(Clone, Debug, Default)]
pub struct SpacePlan {
    pub label: String,
    pub addrs: Vec<IpAddr>,
    /// Per-namespace sysctls (dotted keys), such as TCP settings.
    pub sysctls: Vec<(String, String)>,
    /// Attributes of the route through the TUN (`initcwnd 4`, `rto_min 1000ms`).
    pub route: Vec<String>,
}

/// A namespace with its TUN. The TUN closes before the namespace goes.
#[derive(Debug)]
pub struct Space {
    tun: OwnedFd,
    pub ns: Namespace,
    pub addrs: Vec<IpAddr>,
}

impl Space {
    pub fn tun(&self) -> RawFd {
        self.tun.as_raw_fd()
    }
}

/// Counters of a namespace's TUN, as its kernel saw them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TunCounters {
    /// Packets the core wrote (the namespace received).
    pub rx_packets: u64,
    /// Packets the namespace sent towards the core.
    pub tx_packets: u64,
    /// Packets the namespace sent that the TUN dropped because the core
    /// had not read its queue in time.
    pub tx_dropped: u64,
}

/// Every namespace of a run; removed (with their devices, addresses and
/// routes) when dropped.
#[derive(Debug)]
pub struct Network {
    pub tag: String,
    pub spaces: Vec<Space>,
}

/// Why the emulator cannot run here.
pub fn unavailable() -> Option<String> {
    if !sys::is_root() {
        return Some("the emulator needs root (CAP_NET_ADMIN) to make network namespaces and TUN devices".into());
    }
    if !std::path::Path::new("/dev/net/tun").exists() {
        return Some("the emulator needs TUN devices and /dev/net/tun is missing".into());
    }
    if netns::ip(&["-V"], None).is_err() {
        return Some("the emulator needs iproute2's `ip` command".into());
    }
    None
}

impl Network {
    /// Makes the namespaces of `plans`, after removing what killed runs
    /// left behind.
    pub fn create(plans: &[SpacePlan]) -> io::Result<Network> {
        if let Some(why) = unavailable() {
            return Err(io::Error::new(io::ErrorKind::PermissionDenied, why));
        }
        netns::clean_orphans()?;
        let tag = netns::run_tag();
        let mut net = Network { tag, spaces: Vec::with_capacity(plans.len()) };
        for p in plans {
            let space = make_space(&net.tag, p)?;
            net.spaces.push(space);
        }
        Ok(net)
    }

    /// Each namespace's TUN counters.
    pub fn counters(&self) -> io::Result<Vec<TunCounters>> {
        self.spaces.iter().map(|s| s.ns.within(read_counters)).collect()
    }
}

fn make_space(tag: &str, p: &SpacePlan) -> io::Result<Space> {
    if let Some(a) = p.addrs.iter().find(|a| !addr::contained(**a)) {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("address {a} is outside the emulator's ranges")));
    }
    let ns = Namespace::create(&format!("{tag}-{}", p.label))?;
    let tun = ns.within(|| sys::open_tun(TUN))?;
    if !p.addrs.iter().any(|a| a.is_ipv6()) {
        // Else the TUN's coming up sends router solicitations and listener
        // reports towards the core.
        ns.sysctl(&format!("net.ipv6.conf.{TUN}.disable_ipv6"), "1")?;
    } else {
        // No router answers on a TUN: the solicitations would only reach
        // the core as packets of no host.
        ns.sysctl(&format!("net.ipv6.conf.{TUN}.router_solicitations"), "0")?;
    }
    let (v4, v6) = (addr::V4_NET, addr::V6_NET);
    let mut lines = vec!["link set lo up".to_string(), format!("link set {TUN} mtu {} txqueuelen {TUN_TXQUEUELEN} up", net::MTU)];
    for a in &p.addrs {
        match a {
            IpAddr::V4(_) => lines.push(format!("address add {a}/32 dev {TUN}")),
            IpAddr::V6(_) => lines.push(format!("address add {a}/128 dev {TUN} nodad")),
        }
    }
    let attrs = p.route.join(" ");
    lines.push(format!("route add {}/{} dev {TUN} {attrs}", v4.0, v4.1));
    if p.addrs.iter().any(|a| a.is_ipv6()) {
        // `ip` takes the family from the prefix; `-6` is not a batch command.
        lines.push(format!("route add {}/{} dev {TUN} {attrs}", v6.0, v6.1));
    }
    ns.ip_batch(&lines)?;
    for (k, v) in &p.sysctls {
        ns.sysctl(k, v)?;
    }
    Ok(Space { tun, ns, addrs: p.addrs.clone() })
}

/// The TUN's line of /proc/net/dev as the calling thread's namespace sees it.
fn read_counters() -> io::Result<TunCounters> {
    let text = std::fs::read_to_string("/proc/thread-self/net/dev")?;
    for line in text.lines() {
        if let Some((name, rest)) = line.split_once(':') {
            if name.trim() == TUN {
                let f: Vec<u64> = rest.split_whitespace().filter_map(|x| x.parse().ok()).collect();
                if f.len() >= 12 {
                    return Ok(TunCounters { rx_packets: f[1], tx_packets: f[9], tx_dropped: f[11] });
                }
            }
        }
    }
    Err(io::Error::other(format!("no {TUN} in /proc/net/dev")))
}
