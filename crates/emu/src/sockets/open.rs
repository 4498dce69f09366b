//! Opening a host's sockets: in its namespace, bound to its address, with
//! its options.
//!
//! A socket belongs to the network namespace its creator was in when it
//! called socket(2), for good. So the event-loop thread steps into the
//! host's namespace for that one call and back into its own (a network
//! namespace is per thread); binding, connecting and everything after work
//! from anywhere.

use super::{SocketHost, SocketOptions};
use crate::network::Network;
use crate::sys;
use socket2::{Domain, SockAddr, Socket, Type};
use std::fs::File;
use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::AsFd;
use std::path::PathBuf;

/// Where iproute2 keeps named namespaces (`ip netns add`).
const NETNS_DIR: &str = "/run/netns";
/// Connections a listener queues before the application accepts them.
const BACKLOG: i32 = 4096;

/// The namespace files of a network's spaces.
pub fn space_paths(net: &Network) -> Vec<PathBuf> {
    net.spaces.iter().map(|s| PathBuf::from(format!("{NETNS_DIR}/{}", s.ns.name()))).collect()
}

/// The calling thread's own namespace and the spaces it opens sockets in.
/// Must be used on the thread that made it.
pub struct Spaces {
    home: File,
    spaces: Vec<File>,
}

impl Spaces {
    pub fn open(paths: &[PathBuf]) -> io::Result<Spaces> {
        let home = File::open("/proc/thread-self/ns/net")?;
        let open = |p: &PathBuf| File::open(p).map_err(|e| io::Error::new(e.kind(), format!("namespace {}: {e}", p.display())));
        let spaces = paths.iter().map(open).collect::<io::Result<Vec<File>>>()?;
        Ok(Spaces { home, spaces })
    }

    /// A non-blocking socket of namespace `space`.
    fn socket(&self, space: u32, addr: SocketAddr, ty: Type) -> io::Result<Socket> {
        let ns = self.spaces.get(space as usize).ok_or_else(|| io::Error::other(format!("no namespace {space}")))?;
        sys::enter_netns(ns.as_fd())?;
        let made = Socket::new(Domain::for_address(addr), ty.nonblocking(), None);
        // Should the way back fail, the thread would open every later socket
        // in the wrong namespace: a setup failure, not a connection's.
        sys::enter_netns(self.home.as_fd()).map_err(|e| io::Error::other(format!("cannot return to the event loop's namespace: {e}")))?;
        made
    }

    /// A TCP socket of `host` bound to `port` (0: ephemeral), options applied.
    fn tcp(&self, host: &SocketHost, port: u16) -> io::Result<Socket> {
        let addr = SocketAddr::new(host.addr, port);
        let s = self.socket(host.space, addr, Type::STREAM)?;
        apply_tcp(&s, &host.options)?;
        // No Nagle: the simulator's TCP has none, and a request written in
        // parts must not wait for the acknowledgement of its first part.
        s.set_tcp_nodelay(true)?;
        if port != 0 {
            s.set_reuse_address(true)?;
        }
        s.bind(&SockAddr::from(addr))?;
        Ok(s)
    }

    /// A connection from `host` to `to`, under way (connect(2) returned
    /// EINPROGRESS; the socket turns writable when it completes or fails).
    pub fn connect(&self, host: &SocketHost, to: SocketAddr) -> io::Result<TcpStream> {
        let s = self.tcp(host, 0)?;
        match s.connect(&SockAddr::from(to)) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
            Err(e) => return Err(e),
        }
        Ok(s.into())
    }

    /// A listener on `host:port`; connections it accepts inherit its options.
    pub fn listen(&self, host: &SocketHost, port: u16) -> io::Result<TcpListener> {
        let s = self.tcp(host, port)?;
        s.listen(BACKLOG)?;
        Ok(s.into())
    }

    /// A UDP socket of `host` bound to `port` (0: ephemeral).
    pub fn udp(&self, host: &SocketHost, port: u16) -> io::Result<UdpSocket> {
        let addr = SocketAddr::new(host.addr, port);
        let s = self.socket(host.space, addr, Type::DGRAM)?;
        apply_buffers(&s, &host.options)?;
        s.bind(&SockAddr::from(addr))?;
        Ok(s.into())
    }

    /// Opens a TCP and a UDP socket as `host`'s would be, so that options
    /// the kernel refuses fail the setup rather than every connection.
    pub fn check(&self, host: &SocketHost) -> io::Result<()> {
        self.tcp(host, 0)?;
        self.udp(host, 0)?;
        Ok(())
    }
}

/// An error naming the option and value the kernel refused.
fn refused(option: &str, value: impl std::fmt::Display, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{option} {value}: {e}"))
}

fn apply_tcp(s: &Socket, o: &SocketOptions) -> io::Result<()> {
    if let Some(cc) = &o.congestion {
        s.set_tcp_congestion(cc.as_bytes()).map_err(|e| refused("TCP_CONGESTION", cc, e))?;
    }
    if let Some(mss) = o.mss {
        s.set_tcp_mss(mss).map_err(|e| refused("TCP_MAXSEG", mss, e))?;
    }
    apply_buffers(s, o)
}

/// Sets the buffer sizes and reads them back: the kernel doubles what it
/// is given (for its own overheads) but silently caps it at
/// net.core.wmem_max or rmem_max, and a capped buffer must not pass for
/// the one asked for.
fn apply_buffers(s: &Socket, o: &SocketOptions) -> io::Result<()> {
    if let Some(b) = o.sndbuf {
        s.set_send_buffer_size(b as usize).map_err(|e| refused("SO_SNDBUF", b, e))?;
        confirm("SO_SNDBUF", b, s.send_buffer_size()?, "net.core.wmem_max")?;
    }
    if let Some(b) = o.rcvbuf {
        s.set_recv_buffer_size(b as usize).map_err(|e| refused("SO_RCVBUF", b, e))?;
        confirm("SO_RCVBUF", b, s.recv_buffer_size()?, "net.core.rmem_max")?;
    }
    Ok(())
}

fn confirm(option: &str, asked: u32, got: usize, cap: &str) -> io::Result<()> {
    if got as u64 == 2 * asked as u64 {
        return Ok(());
    }
    let why = format!("the kernel made it {got} bytes, not twice the value; {cap} caps it, and small values are raised");
    Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{option} {asked}: {why}")))
}
