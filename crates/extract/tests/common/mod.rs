//! Helpers shared by the integration tests (and the `extract` example's
//! `--repeat`): a synthetic pcap builder and a reader that repeats a pcap
//! with shifted timestamps. The shared traces and tshark are `testdata`'s.
#![allow(dead_code)]

use std::io::{Cursor, Read};
use wire::{EthernetRepr, Ipv4Repr, LinkType, PcapWriter, TcpFlags, TcpRepr, UdpRepr};

pub fn reader(bytes: Vec<u8>) -> Box<dyn Read> {
    Box::new(Cursor::new(bytes))
}

/// One end of a synthetic connection.
#[derive(Clone, Copy, Debug)]
pub struct Ep {
    pub mac: [u8; 6],
    pub ip: [u8; 4],
    pub port: u16,
}

pub fn ep(host: u8, ip: [u8; 4], port: u16) -> Ep {
    Ep { mac: [2, 0, 0, 0, 0, host], ip, port }
}

/// Header-only synthetic captures (as real header traces are): every
/// record keeps its headers, the original length counts the payload.
pub struct Synth {
    w: PcapWriter<Vec<u8>>,
    raw: bool,
    /// The window field of the TCP packets written next.
    pub window: u16,
    /// Number each host's IPv4 datagrams (identification 1, 2, ...), as
    /// most stacks do; else identification 0.
    pub numbered: bool,
    /// Write every packet twice, the copy `twice` seconds after it, as a
    /// capture that records each frame twice (None: once).
    pub twice: Option<f64>,
    idents: std::collections::HashMap<[u8; 4], u16>,
}

impl Synth {
    fn new(link: LinkType) -> Synth {
        let w = PcapWriter::new(Vec::new(), link, 0).unwrap();
        Synth { w, raw: link == LinkType::RAW, window: 65535, numbered: false, twice: None, idents: Default::default() }
    }

    fn ident(&mut self, src: [u8; 4]) -> u16 {
        if !self.numbered {
            return 0;
        }
        let n = self.idents.entry(src).or_insert(0);
        *n = n.wrapping_add(1).max(1);
        *n
    }

    fn write(&mut self, t: f64, orig: u32, buf: &[u8]) {
        for at in [Some(t), self.twice.map(|d| t + d)].into_iter().flatten() {
            self.w.write_packet((at * 1e9).round() as u64, orig, buf).unwrap();
        }
    }

    pub fn ethernet() -> Synth {
        Synth::new(LinkType::ETHERNET)
    }

    pub fn raw_ip() -> Synth {
        Synth::new(LinkType::RAW)
    }

    #[allow(clippy::too_many_arguments)]
    pub fn tcp(&mut self, t: f64, from: Ep, to: Ep, seq: u32, ack: u32, flags: TcpFlags, len: u32, mss: Option<u16>) {
        let repr = TcpRepr { src_port: from.port, dst_port: to.port, seq, ack, flags, window: self.window, mss, ..Default::default() };
        self.segment(t, from, to, &repr, len);
    }

    /// A pure ACK with SACK blocks (wire sequence numbers).
    pub fn sack(&mut self, t: f64, from: Ep, to: Ep, seq: u32, ack: u32, blocks: &[(u32, u32)]) {
        let flags = TcpFlags::ACK;
        let repr = TcpRepr { src_port: from.port, dst_port: to.port, seq, ack, flags, window: self.window, sack: blocks, ..Default::default() };
        self.segment(t, from, to, &repr, 0);
    }

    fn segment(&mut self, t: f64, from: Ep, to: Ep, repr: &TcpRepr, len: u32) {
        let hl = repr.header_len();
        let mut buf = vec![0u8; 14 + 20 + hl];
        let l2 = if self.raw { 0 } else { EthernetRepr { src: from.mac, dst: to.mac, ethertype: 0x0800 }.emit(&mut buf).unwrap() };
        let ident = self.ident(from.ip);
        let ip = Ipv4Repr { src: from.ip, dst: to.ip, protocol: 6, ttl: 64, ident, payload_len: (hl as u32 + len) as u16 };
        ip.emit(&mut buf[l2..]).unwrap();
        repr.emit(&mut buf[l2 + 20..], std::net::Ipv4Addr::from(from.ip), std::net::Ipv4Addr::from(to.ip), len).unwrap();
        buf.truncate(l2 + 20 + hl);
        let orig = (l2 + 20 + hl) as u32 + len;
        self.write(t, orig, &buf);
    }

    pub fn udp(&mut self, t: f64, from: Ep, to: Ep, len: u32) {
        let mut buf = vec![0u8; 14 + 20 + 8];
        let l2 = if self.raw { 0 } else { EthernetRepr { src: from.mac, dst: to.mac, ethertype: 0x0800 }.emit(&mut buf).unwrap() };
        let ident = self.ident(from.ip);
        let ip = Ipv4Repr { src: from.ip, dst: to.ip, protocol: 17, ttl: 64, ident, payload_len: (8 + len) as u16 };
        ip.emit(&mut buf[l2..]).unwrap();
        UdpRepr { src_port: from.port, dst_port: to.port, payload_len: len as u16 }
            .emit(&mut buf[l2 + 20..], std::net::Ipv4Addr::from(from.ip), std::net::Ipv4Addr::from(to.ip))
            .unwrap();
        buf.truncate(l2 + 28);
        self.write(t, (l2 + 28) as u32 + len, &buf);
    }

    pub fn bytes(self) -> Vec<u8> {
        self.w.into_inner().unwrap()
    }

    /// The capture so far, leaving the builder usable.
    pub fn clone_bytes(&mut self) -> Vec<u8> {
        self.w.get_mut().clone()
    }

    /// Wraps finished bytes, to pass to functions that take a builder.
    pub fn ethernet_from(bytes: Vec<u8>) -> Synth {
        let mut s = Synth::ethernet();
        *s.w.get_mut() = bytes;
        s
    }
}

pub const SYN: TcpFlags = TcpFlags::SYN;
pub const ACK: TcpFlags = TcpFlags::ACK;
pub const FIN: TcpFlags = TcpFlags(TcpFlags::FIN.0 | TcpFlags::ACK.0);
pub const SYNACK: TcpFlags = TcpFlags(TcpFlags::SYN.0 | TcpFlags::ACK.0);
pub const RST: TcpFlags = TcpFlags::RST;

/// A client–server conversation that keeps both sequence numbers.
pub struct Conv {
    pub c: Ep,
    pub s: Ep,
    pub cseq: u32,
    pub sseq: u32,
}

impl Conv {
    pub fn new(c: Ep, s: Ep, cisn: u32, sisn: u32) -> Conv {
        Conv { c, s, cseq: cisn, sseq: sisn }
    }

    /// SYN at `t`, SYN/ACK `server_rtt` later, ACK `client_rtt` after that.
    pub fn handshake(&mut self, x: &mut Synth, t: f64, server_rtt: f64, client_rtt: f64) {
        x.tcp(t, self.c, self.s, self.cseq, 0, SYN, 0, Some(1460));
        x.tcp(t + server_rtt, self.s, self.c, self.sseq, self.cseq.wrapping_add(1), SYNACK, 0, Some(1400));
        self.cseq = self.cseq.wrapping_add(1);
        self.sseq = self.sseq.wrapping_add(1);
        x.tcp(t + server_rtt + client_rtt, self.c, self.s, self.cseq, self.sseq, ACK, 0, None);
    }

    /// One data segment of `len` bytes from the client (or the server).
    pub fn data(&mut self, x: &mut Synth, t: f64, from_client: bool, len: u32) {
        if from_client {
            x.tcp(t, self.c, self.s, self.cseq, self.sseq, ACK, len, None);
            self.cseq = self.cseq.wrapping_add(len);
        } else {
            x.tcp(t, self.s, self.c, self.sseq, self.cseq, ACK, len, None);
            self.sseq = self.sseq.wrapping_add(len);
        }
    }

    /// A pure ACK of everything the other side sent.
    pub fn ack(&mut self, x: &mut Synth, t: f64, from_client: bool) {
        if from_client {
            x.tcp(t, self.c, self.s, self.cseq, self.sseq, ACK, 0, None);
        } else {
            x.tcp(t, self.s, self.c, self.sseq, self.cseq, ACK, 0, None);
        }
    }

    /// FIN from the client at `t`, the server's FIN at `t + d`, last ACK.
    pub fn close(&mut self, x: &mut Synth, t: f64, d: f64) {
        x.tcp(t, self.c, self.s, self.cseq, self.sseq, FIN, 0, None);
        self.cseq = self.cseq.wrapping_add(1);
        x.tcp(t + d, self.s, self.c, self.sseq, self.cseq, FIN, 0, None);
        self.sseq = self.sseq.wrapping_add(1);
        x.tcp(t + 2.0 * d, self.c, self.s, self.cseq, self.sseq, ACK, 0, None);
    }

    /// A response of `len` bytes in MSS-sized segments `gap` s apart.
    pub fn response(&mut self, x: &mut Synth, t: f64, len: u32, gap: f64) -> f64 {
        let mut left = len;
        let mut at = t;
        while left > 0 {
            let n = left.min(1460);
            self.data(x, at, false, n);
            left -= n;
            if left > 0 {
                at += gap;
            }
        }
        at
    }
}

/// A classic pcap (either byte order, µs or ns) played `times` times, each
/// pass `period_s` seconds later than the one before: a long trace with
/// the same hosts, built in memory.
pub struct Repeat {
    data: Vec<u8>,
    big: bool,
    times: u32,
    period_s: u32,
    pass: u32,
    pos: usize,
    out: Vec<u8>,
    out_pos: usize,
}

impl Repeat {
    pub fn new(data: Vec<u8>, times: u32, period_s: u32) -> Repeat {
        let magic = u32::from_le_bytes(data[0..4].try_into().unwrap());
        let big = match magic {
            0xa1b2_c3d4 | 0xa1b2_3c4d => false,
            0xd4c3_b2a1 | 0x4d3c_b2a1 => true,
            m => panic!("not a classic pcap (magic {m:08x})"),
        };
        let out = data[..24].to_vec();
        Repeat { data, big, times, period_s, pass: 0, pos: 24, out, out_pos: 0 }
    }

    /// Records in one pass.
    pub fn records(&self) -> u64 {
        let mut n = 0;
        let mut p = 24;
        while p + 16 <= self.data.len() {
            p += 16 + self.u32(p + 8) as usize;
            n += 1;
        }
        n
    }

    fn u32(&self, at: usize) -> u32 {
        let b: [u8; 4] = self.data[at..at + 4].try_into().unwrap();
        if self.big {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }
    }

    fn put(&mut self, v: u32) {
        self.out.extend(if self.big { v.to_be_bytes() } else { v.to_le_bytes() });
    }

    /// Fills `out` with the next record (or returns false at the end).
    fn next_record(&mut self) -> bool {
        if self.pos + 16 > self.data.len() {
            self.pass += 1;
            self.pos = 24;
        }
        if self.pass >= self.times {
            return false;
        }
        let p = self.pos;
        let caplen = self.u32(p + 8) as usize;
        // Seconds come first in both µs and ns records.
        let sec = self.u32(p) + self.pass * self.period_s;
        self.out.clear();
        self.out_pos = 0;
        self.put(sec);
        let rest = self.data[p + 4..p + 16 + caplen].to_vec();
        self.out.extend(rest);
        self.pos = p + 16 + caplen;
        true
    }
}

impl Read for Repeat {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.out_pos >= self.out.len() && !self.next_record() {
            return Ok(0);
        }
        let n = buf.len().min(self.out.len() - self.out_pos);
        buf[..n].copy_from_slice(&self.out[self.out_pos..self.out_pos + n]);
        self.out_pos += n;
        Ok(n)
    }
}
