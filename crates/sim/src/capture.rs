//! pcap capture of the bottleneck, built from the simulator's packets with
//! the wire layer's header emitters.
//!
//! The simulator carries no payload, so captured packets hold real IPv4 or
//! IPv6 and TCP/UDP headers followed by zeros, cut at the snap length, with their
//! original length recorded. Sequence numbers start from an initial
//! sequence number derived from the connection's addresses and the seed, so
//! the capture needs no per-connection state.

use crate::ip::Fragment;
use crate::packet::{Body, Head};
use rundir::CaptureMiss;
use std::fs::File;
use std::io::{self, BufWriter};
use std::net::IpAddr;
use std::path::Path;
use units::Time;
use wire::{Ipv4Repr, Ipv6Repr, LinkType, PcapWriter, TcpFlags, TcpRepr, UdpRepr};

/// Window scale announced on SYNs; windows on other segments are shifted by it.
const WSCALE: u8 = 7;
const PROTO_TCP: u8 = 6;
const PROTO_UDP: u8 = 17;

pub struct Capture {
    w: PcapWriter<BufWriter<File>>,
    buf: Vec<u8>,
    ident: u16,
    seed: u64,
    /// Packets before this are not written (the run's warm-up).
    from: Time,
    /// Which data segments are not written.
    miss: CaptureMiss,
    error: Option<io::Error>,
}

/// The initial sequence number of the sender `src:sport` towards `dst:dport`.
pub fn isn(seed: u64, src: u32, sport: u16, dst: u32, dport: u16) -> u32 {
    let mut h = seed ^ 0x9e37_79b9_7f4a_7c15;
    for v in [src as u64, sport as u64, dst as u64, dport as u64] {
        h = (h ^ v).wrapping_mul(0x0000_0100_0000_01b3).rotate_left(29);
    }
    (h ^ (h >> 32)) as u32
}

impl Capture {
    pub fn create(path: &Path, snaplen: u32, seed: u64, from: Time, miss: [f64; 2]) -> io::Result<Capture> {
        Ok(Capture {
            w: PcapWriter::create(path, LinkType::RAW, snaplen)?,
            buf: vec![0; snaplen as usize],
            ident: 0,
            seed,
            from,
            miss: CaptureMiss::new(seed, miss),
            error: None,
        })
    }

    /// Records `p` at `now`, crossing the bottleneck in direction `dir`
    /// (0 left to right); the first write error is kept for [`finish`].
    pub fn record(&mut self, now: Time, p: &Head, body: &Body, src: IpAddr, dst: IpAddr, dir: usize) {
        if self.error.is_some() || now < self.from {
            return;
        }
        if self.miss.skips(dir, || matches!(body, Body::Tcp(seg) if seg.len > 0)) {
            return;
        }
        if let Err(e) = self.write(now, p, body, src, dst) {
            self.error = Some(e);
        }
    }

    fn write(&mut self, now: Time, p: &Head, body: &Body, src: IpAddr, dst: IpAddr) -> io::Result<()> {
        let ip_len = if src.is_ipv6() { Ipv6Repr::HEADER_LEN } else { Ipv4Repr::HEADER_LEN };
        let bad = |e: wire::EmitError| io::Error::new(io::ErrorKind::InvalidData, format!("cannot emit a header: {e:?}"));
        // Headers are at most 20 + 60 bytes; write them in a scratch buffer
        // at least that long, then keep the snap length.
        // Room for the largest headers whatever the snap length.
        if self.buf.len() < 128 {
            self.buf.resize(128, 0);
        }
        self.buf.fill(0);
        self.ident = self.ident.wrapping_add(1);
        if let Body::Udp { payload, frag: Some(f) } = *body {
            return self.write_fragment(now, p, payload, f, src, dst);
        }
        let (proto, l4) = match *body {
            Body::Tcp(seg) => {
                let mine = isn(self.seed, p.src, p.sport, p.dst, p.dport);
                let theirs = isn(self.seed, p.dst, p.dport, p.src, p.sport);
                let mut flags = 0u16;
                for (has, bit) in [
                    (tcp::Flags::FIN, TcpFlags::FIN),
                    (tcp::Flags::SYN, TcpFlags::SYN),
                    (tcp::Flags::RST, TcpFlags::RST),
                    (tcp::Flags::PSH, TcpFlags::PSH),
                    (tcp::Flags::ACK, TcpFlags::ACK),
                    (tcp::Flags::ECE, TcpFlags::ECE),
                    (tcp::Flags::CWR, TcpFlags::CWR),
                ] {
                    if seg.flags.contains(has) {
                        flags |= bit.0;
                    }
                }
                let syn = seg.flags.contains(tcp::Flags::SYN);
                let window = if syn { seg.wnd.min(65535) } else { (seg.wnd >> WSCALE).min(65535) } as u16;
                let mut sack = [(0u32, 0u32); 4];
                let n = seg.sack.n as usize;
                for (dst_block, &(l, r)) in sack.iter_mut().zip(&seg.sack.blocks[..n]) {
                    *dst_block = (theirs.wrapping_add(l as u32), theirs.wrapping_add(r as u32));
                }
                let repr = TcpRepr {
                    src_port: p.sport,
                    dst_port: p.dport,
                    seq: mine.wrapping_add(seg.seq as u32),
                    ack: if seg.flags.contains(tcp::Flags::ACK) { theirs.wrapping_add(seg.ack as u32) } else { 0 },
                    flags: TcpFlags(flags),
                    window,
                    mss: seg.syn_opts.map(|o| o.mss.min(65535) as u16),
                    window_scale: seg.syn_opts.map(|_| WSCALE),
                    sack_permitted: seg.syn_opts.is_some_and(|o| o.sack_permitted),
                    sack: &sack[..n],
                    timestamps: seg.ts,
                };
                let hl = repr.emit(&mut self.buf[ip_len..], src, dst, seg.len).map_err(bad)?;
                // The simulator sized the packet with the same option layout.
                debug_assert_eq!(hl as u32, seg.header_len());
                (PROTO_TCP, hl)
            }
            Body::Udp { payload, .. } => {
                let repr = UdpRepr { src_port: p.sport, dst_port: p.dport, payload_len: payload.min(65507) as u16 };
                let hl = repr.emit(&mut self.buf[ip_len..], src, dst).map_err(bad)?;
                (PROTO_UDP, hl)
            }
        };
        let payload_len = (p.size - ip_len as u32) as u16;
        match (src, dst) {
            (IpAddr::V4(s), IpAddr::V4(d)) => {
                let ip = Ipv4Repr { src: s.octets(), dst: d.octets(), protocol: proto, ttl: 64, ident: self.ident, payload_len };
                ip.emit(&mut self.buf[..ip_len]).map_err(bad)?;
            }
            (IpAddr::V6(s), IpAddr::V6(d)) => {
                let ip = Ipv6Repr { src: s.octets(), dst: d.octets(), next_header: proto, hop_limit: 64, payload_len };
                ip.emit(&mut self.buf[..ip_len]).map_err(bad)?;
            }
            _ => return Err(bad(wire::EmitError::MixedAddressFamilies)),
        }
        if let Body::Tcp(seg) = body {
            wire::set_ecn(&mut self.buf[..ip_len], seg.ecn.bits());
        }
        let _ = l4;
        self.w.write_packet(now.0, p.size, &self.buf[..(p.size as usize).min(self.buf.len())])
    }

    /// One fragment of a datagram larger than the MTU, as the sender's IP
    /// layer cut it: the datagram's UDP header in the first only.
    fn write_fragment(&mut self, now: Time, p: &Head, payload: u32, f: Fragment, src: IpAddr, dst: IpAddr) -> io::Result<()> {
        let bad = |e: wire::EmitError| io::Error::new(io::ErrorKind::InvalidData, format!("cannot emit a fragment's headers: {e:?}"));
        let ip_len = match (src, dst) {
            (IpAddr::V4(s), IpAddr::V4(d)) => {
                let payload_len = (p.size - Ipv4Repr::HEADER_LEN as u32) as u16;
                let ip = Ipv4Repr { src: s.octets(), dst: d.octets(), protocol: PROTO_UDP, ttl: 64, ident: f.datagram as u16, payload_len };
                ip.emit_fragment(&mut self.buf, f.offset, f.more()).map_err(bad)?
            }
            (IpAddr::V6(s), IpAddr::V6(d)) => {
                let payload_len = (p.size - Ipv6Repr::HEADER_LEN as u32) as u16;
                let ip = Ipv6Repr { src: s.octets(), dst: d.octets(), next_header: Ipv6Repr::FRAGMENT, hop_limit: 64, payload_len };
                let l = ip.emit(&mut self.buf).map_err(bad)?;
                l + Ipv6Repr::emit_fragment_header(&mut self.buf[l..], PROTO_UDP, f.datagram, f.offset, f.more()).map_err(bad)?
            }
            _ => return Err(bad(wire::EmitError::MixedAddressFamilies)),
        };
        if f.index == 0 {
            let udp = UdpRepr { src_port: p.sport, dst_port: p.dport, payload_len: payload.min(65507) as u16 };
            udp.emit(&mut self.buf[ip_len..], src, dst).map_err(bad)?;
        }
        self.w.write_packet(now.0, p.size, &self.buf[..(p.size as usize).min(self.buf.len())])
    }

    pub fn finish(self) -> io::Result<()> {
        if let Some(e) = self.error {
            return Err(e);
        }
        self.w.into_inner().map(|_| ())
    }
}
