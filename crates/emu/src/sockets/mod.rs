//! The applications' transport over real kernel sockets.
//!
//! [`Sockets`] runs applications over `traffic::Transport` for real: every
//! connection, listener and UDP port is a non-blocking socket of its host's
//! namespace, bound to the host's address, and one thread drives them all
//! with epoll (`event_loop.rs`). Applications see what they see in the
//! simulator:
//!
//! - A write is a byte count; zeros go on the wire, framed so that message
//!   boundaries travel in the stream at no cost in bytes (`framing.rs`).
//! - Each connection stages at most [`STAGING`] bytes before the
//!   kernel takes them: writes beyond it are short and `Writable` follows,
//!   as with a bounded send buffer.
//! - `close` shuts the sending direction once the staged bytes are gone;
//!   `PeerClosed` comes with the peer's FIN, and `Closed` once both
//!   directions are shut (the kernel still delivers our last bytes and
//!   FIN, and answers the peer's, after that). `abort` resets (SO_LINGER
//!   0). A refused, reset or timed-out connection is told `Reset`.
//! - Timers fire on CLOCK_MONOTONIC, whose zero is shared with the core.
//! - Events are queued and told after each batch of I/O, in order, one at
//!   a time: an application is never re-entered.
//!
//! Network errors never stop a run: they become `Reset` events or counters
//! in [`SocketStats`]. Only setting up can fail.

mod event_loop;
mod framing;
mod open;
mod readiness;
mod tcp;
mod timers;
mod transport;
mod udp;

use crate::lateness::Lateness;
use crate::network::Network;
use crate::sys;
use event_loop::Loop;
use rundir::{ConnLog, TcpTotals};
use rustc_hash::FxHashMap;
use std::io;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use traffic::{App, HostId};
use units::Time;

pub use tcp::STAGING;

/// How often `run` reports progress, in wall-clock nanoseconds.
const PROGRESS_EVERY_NS: u64 = 50_000_000;
/// SCHED_FIFO priority of the thread driving the apps: below the core's
/// (`CoreConfig::realtime`), above every ordinary thread.
const APPS_PRIORITY: i32 = 40;

/// Socket options every TCP socket of a host gets (and UDP sockets the
/// buffer sizes); `None` leaves the namespace's default.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SocketOptions {
    /// TCP_CONGESTION: any algorithm in net.ipv4.tcp_available_congestion_control.
    pub congestion: Option<String>,
    /// TCP_MAXSEG, in bytes.
    pub mss: Option<u32>,
    /// SO_SNDBUF and SO_RCVBUF, in bytes as asked (the kernel doubles them).
    pub sndbuf: Option<u32>,
    pub rcvbuf: Option<u32>,
}

/// A host: its address, the namespace (space) it lives in, its options.
#[derive(Clone, Debug, PartialEq)]
pub struct SocketHost {
    pub addr: IpAddr,
    pub space: u32,
    pub options: SocketOptions,
}

/// Bytes of one application's TCP connections.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ByteTotals {
    /// What the application wrote (`write_forever` included).
    pub written: u64,
    /// What the kernel took: the frames, which differ from what was written
    /// only by marks after fewer bytes than they take.
    pub wire_sent: u64,
    /// What was read from the kernel.
    pub wire_received: u64,
}

/// What the sockets did over a run.
#[derive(Default)]
pub struct SocketStats {
    /// Per application (as in `run`'s `apps`): connections (each end
    /// counts), resets told, and segments and retransmissions as TCP_INFO
    /// counted them when each connection ended or the run did. Fast
    /// recoveries and RTOs are not known (TCP_INFO has no totals of them).
    pub app_tcp: Vec<TcpTotals>,
    pub app_bytes: Vec<ByteTotals>,
    /// One row per TCP endpoint.
    pub conn_log: ConnLog,
    pub datagrams_sent: u64,
    /// Datagrams told to an application.
    pub datagrams_received: u64,
    /// Datagrams to a port nobody bound, or from an address no host has.
    pub stray_datagrams: u64,
    /// UDP sockets that could not be opened, and sends the kernel refused.
    pub udp_errors: u64,
    /// Listeners that could not be opened, and accepts that failed.
    pub listen_errors: u64,
    /// Connections accepted from an address no host has (closed at once).
    pub stray_connections: u64,
    /// Connections whose peer sent bytes that are not frames (reset).
    pub framing_errors: u64,
    /// Events told to applications.
    pub events: u64,
    /// How late timers fired against their deadlines.
    pub timer_lateness: Lateness,
    /// CPU time of the event loop's thread, and the wall time it ran.
    pub cpu_ns: u64,
    pub wall_ns: u64,
}

/// The hosts' sockets, ready to run applications.
pub struct Sockets {
    hosts: Vec<SocketHost>,
    by_addr: FxHashMap<IpAddr, HostId>,
    spaces: Vec<PathBuf>,
    origin_ns: u64,
}

impl Sockets {
    /// `hosts[i]` is traffic HostId `i`; `origin_ns` is CLOCK_MONOTONIC at
    /// time zero (shared with the core). Opens a socket of each host with
    /// its options, so that an option the kernel refuses is an error here.
    pub fn new(net: &Network, hosts: Vec<SocketHost>, origin_ns: u64) -> io::Result<Sockets> {
        let mut by_addr = FxHashMap::default();
        for (i, h) in hosts.iter().enumerate() {
            check_host(net, i, h)?;
            if by_addr.insert(h.addr, i as HostId).is_some() {
                return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("address {} is given to two hosts", h.addr)));
            }
        }
        let spaces = open::space_paths(net);
        let probe = open::Spaces::open(&spaces)?;
        for (i, h) in hosts.iter().enumerate() {
            probe.check(h).map_err(|e| io::Error::new(e.kind(), format!("host {i} ({}): {e}", h.addr)))?;
        }
        Ok(Sockets { hosts, by_addr, spaces, origin_ns })
    }

    /// Starts every application (`App::start`) and drives them until the
    /// clock reaches `until`, `stop` is set or `progress(now)` (called
    /// every 50 ms of wall time) returns false.
    pub fn run(
        &mut self,
        apps: &mut [Box<dyn App>],
        until: Time,
        stop: &AtomicBool,
        progress: &mut dyn FnMut(Time) -> bool,
    ) -> io::Result<SocketStats> {
        let _ = sys::set_timer_slack_ns(1);
        // Under SCHED_FIFO, below the core, so that other work on the
        // machine does not delay the apps' wake-ups by milliseconds (their
        // requests and answers, which a download's time includes); without
        // the privilege they run as an ordinary thread.
        let _fifo = sys::Fifo::enter(APPS_PRIORITY);
        let (cpu0, wall0) = (sys::thread_cpu_ns(), sys::monotonic_ns());
        let mut lp = Loop::new(&self.hosts, &self.by_addr, &self.spaces, self.origin_ns, apps.len())?;
        lp.start(apps);
        let mut report_at = wall0 + PROGRESS_EVERY_NS;
        loop {
            let now = lp.now();
            if stop.load(Ordering::Relaxed) || now >= until {
                break;
            }
            if sys::monotonic_ns() >= report_at {
                report_at = sys::monotonic_ns() + PROGRESS_EVERY_NS;
                if !progress(now) {
                    break;
                }
            }
            lp.turn(apps, until)?;
        }
        let mut stats = lp.finish();
        stats.cpu_ns = sys::thread_cpu_ns() - cpu0;
        stats.wall_ns = sys::monotonic_ns() - wall0;
        Ok(stats)
    }
}

/// A host lives in a space of the network that holds its address.
fn check_host(net: &Network, i: usize, h: &SocketHost) -> io::Result<()> {
    let Some(space) = net.spaces.get(h.space as usize) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("host {i} lives in space {}; the network has {}", h.space, net.spaces.len()),
        ));
    };
    if !space.addrs.contains(&h.addr) {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("host {i}'s address {} is not in space {}", h.addr, h.space)));
    }
    Ok(())
}
