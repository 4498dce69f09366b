//! UDP sockets: one per (host, port), made by the first `bind_udp` or
//! `send_udp` that names it, so that a source sends from the port it
//! says and a sink's replies (if any) come from its bound port.

use rustc_hash::FxHashMap;
use std::io;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use traffic::HostId;

/// A datagram's payload: zeros, as many as the application asks for (IPv4
/// carries at most 65,507).
static ZEROS: [u8; 65_536] = [0; 65_536];
/// Datagrams read from one socket per turn of the loop.
const READS_PER_TURN: usize = 256;

pub struct UdpSock {
    sock: UdpSocket,
    pub host: HostId,
    /// The port asked for (0: ephemeral), as the application names it.
    pub port: u16,
    /// The application that bound it, told what arrives; none for a socket
    /// made only to send.
    pub owner: Option<u32>,
}

#[derive(Default)]
pub struct Udp {
    socks: Vec<UdpSock>,
    by_key: FxHashMap<(HostId, u16), u32>,
}

impl Udp {
    pub fn find(&self, host: HostId, port: u16) -> Option<u32> {
        self.by_key.get(&(host, port)).copied()
    }

    pub fn add(&mut self, sock: UdpSocket, host: HostId, port: u16) -> u32 {
        self.socks.push(UdpSock { sock, host, port, owner: None });
        let idx = (self.socks.len() - 1) as u32;
        self.by_key.insert((host, port), idx);
        idx
    }

    pub fn get(&mut self, idx: u32) -> Option<&mut UdpSock> {
        self.socks.get_mut(idx as usize)
    }

    pub fn raw_fd(&self, idx: u32) -> i32 {
        use std::os::fd::AsRawFd;
        self.socks[idx as usize].sock.as_raw_fd()
    }
}

impl UdpSock {
    /// Sends `payload` zero bytes to `to`.
    pub fn send(&self, to: SocketAddr, payload: u32) -> io::Result<()> {
        let bytes = ZEROS
            .get(..payload as usize)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, format!("{payload} bytes is over a datagram")))?;
        self.sock.send_to(bytes, to)?;
        Ok(())
    }

    /// Reads waiting datagrams (a batch at most) as (source, payload
    /// bytes); whether there may be more.
    pub fn receive(&self, buf: &mut [u8], out: &mut Vec<(IpAddr, u32)>) -> bool {
        for _ in 0..READS_PER_TURN {
            match self.sock.recv_from(buf) {
                Ok((n, from)) => out.push((from.ip(), n as u32)),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // Would block, or an error queued by an earlier send (ICMP):
                // nothing more to read now.
                Err(_) => return false,
            }
        }
        true
    }
}
