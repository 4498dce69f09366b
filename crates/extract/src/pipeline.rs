//! The single pass: each decoded packet updates hosts, TCP connections or
//! UDP flows; everything that needs the whole trace (sides, RTT estimates)
//! waits for `model::assemble`.

use crate::classes::ClassNames;
use crate::hosts::HostTable;
use crate::lines::LineTracker;
use crate::options::Compiled;
use crate::sides::{addr_key, vote, MacTable};
use crate::tcpflow::Tcp;
use crate::udp::UdpTable;
use units::Rng;
use wire::{PacketInfo, Transport};

pub(crate) struct Extractor {
    pub o: Compiled,
    pub hosts: HostTable,
    pub macs: MacTable,
    pub names: ClassNames,
    pub tcp: Tcp,
    pub udp: UdpTable,
    /// Cross-host gaps, for hosts that share a line (when looked for).
    pub lines: Option<LineTracker>,
    pub rng_hosts: Rng,
    pub rng_udp: Rng,
    /// First packet's time: the origin of samples taken during the pass.
    pub t0: Option<i64>,
    /// Latest time seen (input may run slightly backwards).
    pub now: i64,
    pub ip_packets: u64,
    pub udp_packets: u64,
    pub other_packets: u64,
    /// Packets with exactly one private/local endpoint.
    pub crossing: u64,
    pub out_of_order: u64,
}

impl Extractor {
    pub(crate) fn new(o: Compiled, record: bool) -> Extractor {
        Extractor {
            hosts: HostTable::default(),
            macs: MacTable::default(),
            names: ClassNames::new(&o.o.ports),
            tcp: Tcp::new(&o, record),
            udp: UdpTable::new(o.udp_idle, o.o.session_structures > 0),
            lines: o.o.lines.then(LineTracker::default),
            rng_hosts: Rng::stream(0, "extract.hosts"),
            rng_udp: Rng::stream(0, "extract.udp"),
            t0: None,
            now: i64::MIN,
            ip_packets: 0,
            udp_packets: 0,
            other_packets: 0,
            crossing: 0,
            out_of_order: 0,
            o,
        }
    }

    #[inline]
    pub(crate) fn packet(&mut self, t: i64, p: &PacketInfo) {
        // Damaged pcapng timestamps can saturate at the ends of i64; within
        // ±2^62 ns (±146 years) every difference of two times fits.
        let t = t.clamp(-(1 << 62), 1 << 62);
        let t0 = *self.t0.get_or_insert_with(|| {
            self.tcp.sink.t0 = t;
            t
        });
        if t < self.now {
            self.out_of_order += 1;
        } else {
            self.now = t;
        }
        self.ip_packets += 1;
        let (src, dst) = (addr_key(p.ip.src), addr_key(p.ip.dst));
        let len = p.ip.total_len;
        let (mut pure_syn, mut synack) = (false, false);
        let (s, d) = match &p.transport {
            Transport::Tcp(tcp) => {
                pure_syn = tcp.flags.syn() && !tcp.flags.ack();
                synack = tcp.flags.syn() && tcp.flags.ack();
                self.tcp.packet(t, src, dst, tcp, len, &mut self.hosts, &mut self.names, &mut self.rng_hosts)
            }
            Transport::Udp(u) => {
                self.udp_packets += 1;
                let ids = self.udp.packet(t, t0, src, u.src_port, dst, u.dst_port, len, &mut self.hosts, &mut self.names, &mut self.rng_udp);
                self.udp.maybe_sweep(self.now, t0, &mut self.rng_udp);
                ids
            }
            _ => {
                self.other_packets += 1;
                (self.hosts.id(src), self.hosts.id(dst))
            }
        };
        if let Some(l) = &mut self.lines {
            l.packet(t, s, d, len);
        }
        let h = self.hosts.get(s);
        h.packets += 1;
        h.bytes += len as u64;
        h.peak.add(t, len as u64);
        self.hosts.get(d).peak_rx.add(t, len as u64);
        let h = self.hosts.get(s);
        match p.ip.proto {
            wire::PROTO_TCP => h.tcp_bytes += len as u64,
            wire::PROTO_UDP => h.udp_bytes += len as u64,
            _ => {}
        }
        let private_src = h.private;
        if let Some(mac) = p.src_mac {
            let id = self.macs.frame(mac, pure_syn, synack);
            vote(&mut self.hosts.get(s).votes, id, true);
            vote(&mut self.hosts.get(d).votes, id, false);
        }
        if private_src != self.hosts.get(d).private {
            self.crossing += 1;
            self.hosts.get(if private_src { d } else { s }).private_peer = true;
        }
    }

    /// End of input: closes every connection, flow and session.
    pub(crate) fn finish_flows(&mut self) {
        let t0 = self.t0.unwrap_or(0);
        self.tcp.finish_all(&mut self.hosts, &self.names);
        self.udp.finish_all(t0, &mut self.rng_udp);
    }
}
