//! UDP flows: a canonical 5-tuple until it is idle for `UDP_IDLE_S` (or the
//! TCP idle timeout if shorter). The first packet's sender is the
//! initiator. Swing modelled no UDP; these flows are kept whole (start,
//! duration, packets and bytes each way) so a generator can replay their
//! shape.
//!
//! Class: the port of either end listed in `opts.ports` (the responder's
//! first), else a port below 1024 (the responder's first), else the
//! responder's port, as `"udp-<port>"`.

use crate::classes::{ns_round, port_bit, ports_in, ClassNames};
use crate::flowkey::FlowKey;
use crate::hosts::HostTable;
use crate::netparams::PAIR_MIN_PAYLOAD;
use crate::options::{secs, DISORDER_NS};
use crate::reservoir::{Reservoir, UDP_RESERVOIR};
use crate::slots::place;
use crate::tally::Values;
use rustc_hash::FxHashMap;
use swing::{Side, UdpClass, UdpFlow, DIST_CAP, UDP_SEQUENCE_CAP};
use units::Rng;

#[derive(Clone, Debug)]
struct Flow {
    key: FlowKey,
    /// The initiator is the key's `lo` endpoint.
    init_lo: bool,
    /// Initiator, responder.
    hosts: [u32; 2],
    class: u32,
    port: u16,
    start: i64,
    last: i64,
    /// Last packet in each direction, for the in-flow gaps.
    last_dir: [i64; 2],
    /// The responder's first packet.
    reply: Option<i64>,
    /// Size of the last packet in each direction (pairs need equal sizes).
    last_len: [u32; 2],
    packets: [u64; 2],
    bytes: [u64; 2],
    /// Every packet (ns from the start, direction, IP bytes) while the flow
    /// is short enough and the budget allows.
    seq: Option<Vec<(i64, u8, u32)>>,
}

/// Packets held in flow sequences at once, open flows and stored ones
/// together (16 bytes each): past it, flows are kept without theirs.
const SEQUENCE_BUDGET: usize = 100_000;

#[derive(Default)]
struct ClassAcc {
    res: Reservoir<(UdpFlow, u32)>,
    ports: Vec<u16>,
    /// Per direction: in-flow gaps (s) and packet sizes, each with the
    /// flow's initiator so they can be split by side at the end.
    gaps: [Values; 2],
    sizes: [Values; 2],
}

pub(crate) struct UdpTable {
    idle: i64,
    map: FxHashMap<FlowKey, u32>,
    flows: Vec<Flow>,
    free: Vec<u32>,
    acc: Vec<ClassAcc>,
    /// (class, initiator host) → (flows, bit mask of the class's ports).
    per_host: FxHashMap<(u32, u32), (u64, u64)>,
    pub total: u64,
    pub peak_live: usize,
    since_sweep: usize,
    /// Keep flows' packet sequences (`session_structures` > 0).
    keep_seq: bool,
    /// Packets held in sequences now.
    held: usize,
}

impl UdpTable {
    pub(crate) fn new(idle: i64, keep_seq: bool) -> UdpTable {
        UdpTable {
            keep_seq,
            held: 0,
            idle,
            map: FxHashMap::default(),
            flows: Vec::new(),
            free: Vec::new(),
            acc: Vec::new(),
            per_host: FxHashMap::default(),
            total: 0,
            peak_live: 0,
            since_sweep: 0,
        }
    }

    /// One UDP packet; returns the (sender, receiver) host ids.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(crate) fn packet(
        &mut self,
        t: i64,
        t0: i64,
        src: u128,
        sport: u16,
        dst: u128,
        dport: u16,
        ip_len: u32,
        hosts: &mut HostTable,
        names: &mut ClassNames,
        rng: &mut Rng,
    ) -> (u32, u32) {
        let (key, from_lo) = FlowKey::of(src, sport, dst, dport);
        let idx = match self.map.get(&key) {
            Some(&i) if t - self.flows[i as usize].last <= self.idle => i,
            Some(&i) => {
                self.end(i, t0, rng);
                self.open(key, from_lo, t, src, sport, dst, dport, hosts, names)
            }
            None => self.open(key, from_lo, t, src, sport, dst, dport, hosts, names),
        };
        let f = &mut self.flows[idx as usize];
        let d = (from_lo != f.init_lo) as usize;
        f.last = f.last.max(t);
        let gap = (f.packets[d] > 0).then(|| secs((t - f.last_dir[d]).max(0)));
        // Back-to-back datagrams of one direction are packet pairs: UDP has
        // no ACK clock, so their spacing is what the sender's path allowed
        // (the same timestamp: faster than the capture's 1 µs clock).
        if gap.is_some() && ip_len >= PAIR_MIN_PAYLOAD + 28 && f.last_len[d] == ip_len {
            let dt = (t - f.last_dir[d]).max(1_000);
            hosts.get(f.hosts[d]).net.pair_sample(ip_len - 40, secs(dt), true, rng);
        }
        f.last_len[d] = ip_len;
        f.last_dir[d] = f.last_dir[d].max(t);
        if d == 1 && f.reply.is_none() {
            f.reply = Some(t);
        }
        f.packets[d] += 1;
        f.bytes[d] += ip_len as u64;
        if let Some(s) = &mut f.seq {
            if s.len() < UDP_SEQUENCE_CAP {
                s.push(((t - f.start).max(0), d as u8, ip_len));
                self.held += 1;
            } else {
                self.held -= s.len();
                f.seq = None;
            }
        }
        let (class, init, out) = (f.class as usize, f.hosts[0], (f.hosts[d], f.hosts[1 - d]));
        let c = &mut self.acc[class];
        if let Some(g) = gap {
            c.gaps[d].push(g, init, UDP_RESERVOIR, rng);
        }
        c.sizes[d].push(ip_len as f64, init, UDP_RESERVOIR, rng);
        out
    }

    #[allow(clippy::too_many_arguments)]
    fn open(
        &mut self,
        key: FlowKey,
        from_lo: bool,
        t: i64,
        src: u128,
        sport: u16,
        dst: u128,
        dport: u16,
        hosts: &mut HostTable,
        names: &mut ClassNames,
    ) -> u32 {
        let port = if names.is_known(dport) {
            dport
        } else if names.is_known(sport) {
            sport
        } else if dport < 1024 {
            dport
        } else if sport < 1024 {
            sport
        } else {
            dport
        };
        let h = [hosts.id(src), hosts.id(dst)];
        hosts.get(h[0]).udp_initiated += 1;
        hosts.get(h[1]).udp_accepted += 1;
        let f = Flow {
            key,
            init_lo: from_lo,
            hosts: h,
            class: names.udp(port),
            port,
            start: t,
            last: t,
            last_dir: [t; 2],
            reply: None,
            last_len: [0; 2],
            packets: [0; 2],
            bytes: [0; 2],
            seq: (self.keep_seq && self.held < SEQUENCE_BUDGET).then(Vec::new),
        };
        if self.acc.len() <= f.class as usize {
            self.acc.resize_with(f.class as usize + 1, ClassAcc::default);
        }
        let idx = place(&mut self.flows, &mut self.free, f);
        self.map.insert(key, idx);
        self.total += 1;
        self.peak_live = self.peak_live.max(self.map.len());
        idx
    }

    fn end(&mut self, idx: u32, t0: i64, rng: &mut Rng) {
        let seq = self.flows[idx as usize].seq.take();
        let f = self.flows[idx as usize].clone();
        self.map.remove(&f.key);
        self.free.push(idx);
        let c = &mut self.acc[f.class as usize];
        let bit = port_bit(&mut c.ports, f.port);
        let mut rec = UdpFlow {
            start_s: secs(f.start - t0),
            duration_s: secs(f.last - f.start),
            packets: f.packets,
            bytes: f.bytes,
            reply_s: f.reply.map_or(0.0, |r| secs(r - f.start)),
            sequence: seq.map(|s| s.into_iter().map(|(t, d, b)| [secs(t), d as f64, b as f64]).collect()).unwrap_or_default(),
        };
        // The store holds the sequence from now on, unless over budget;
        // whatever the store lets go of is no longer held.
        if self.held > SEQUENCE_BUDGET {
            self.held -= rec.sequence.len();
            rec.sequence = Vec::new();
        }
        if let Some((gone, _)) = c.res.push_evict((rec, f.hosts[0]), UDP_RESERVOIR, rng) {
            self.held -= gone.sequence.len();
        }
        let e = self.per_host.entry((f.class, f.hosts[0])).or_default();
        e.0 += 1;
        e.1 |= bit;
    }

    /// Ends idle flows, at most once per as many packets as flows are live
    /// so the scan costs O(1) per packet.
    pub(crate) fn maybe_sweep(&mut self, now: i64, t0: i64, rng: &mut Rng) {
        self.since_sweep += 1;
        if self.since_sweep < self.map.len().max(4096) {
            return;
        }
        self.since_sweep = 0;
        let mut idle: Vec<(i64, u32)> = self
            .map
            .values()
            .filter(|&&i| now - self.flows[i as usize].last > self.idle + DISORDER_NS)
            .map(|&i| (self.flows[i as usize].start, i))
            .collect();
        idle.sort_unstable_by_key(|&(s, i)| (s, self.flows[i as usize].key.lo, self.flows[i as usize].key.hi));
        for (_, i) in idle {
            self.end(i, t0, rng);
        }
    }

    pub(crate) fn finish_all(&mut self, t0: i64, rng: &mut Rng) {
        let mut all: Vec<u32> = self.map.values().copied().collect();
        all.sort_unstable_by_key(|&i| {
            let f = &self.flows[i as usize];
            (f.start, f.key.lo, f.key.hi, f.key.lo_port, f.key.hi_port)
        });
        for i in all {
            self.end(i, t0, rng);
        }
    }

    /// Classes with flows.
    pub(crate) fn classes(&self) -> usize {
        self.acc.iter().filter(|c| c.res.seen() > 0).count()
    }

    /// Values held: kept flows, and the gaps' and sizes' values or buckets.
    pub(crate) fn stored(&self) -> usize {
        self.acc.iter().map(|c| c.res.len() + c.gaps.iter().chain(&c.sizes).map(Values::stored).sum::<usize>()).sum()
    }

    /// One `UdpClass` per (class, initiator side).
    pub(crate) fn build(&self, names: &ClassNames, side_of: &[Side], start_shift_s: f64) -> Vec<UdpClass> {
        let mut sums: FxHashMap<(u32, Side), (u64, u64)> = FxHashMap::default();
        for (&(class, host), &(n, mask)) in &self.per_host {
            let e = sums.entry((class, side_of[host as usize])).or_default();
            e.0 += n;
            e.1 |= mask;
        }
        let mut keys: Vec<(u32, Side)> = sums.keys().copied().collect();
        keys.sort_unstable();
        keys.into_iter()
            .map(|(class, side)| {
                let (flows, mask) = sums[&(class, side)];
                let acc = &self.acc[class as usize];
                let mut samples: Vec<UdpFlow> = acc
                    .res
                    .items()
                    .iter()
                    .filter(|(_, h)| side_of[*h as usize] == side)
                    .map(|(f, _)| UdpFlow { start_s: ns_round(f.start_s + start_shift_s).max(0.0), ..f.clone() })
                    .collect();
                samples.sort_by(|a, b| a.start_s.total_cmp(&b.start_s).then(b.bytes.cmp(&a.bytes)));
                if samples.len() > DIST_CAP {
                    // The store is already a uniform sample; thin it evenly
                    // in time to the model's cap.
                    let n = samples.len();
                    samples = (0..DIST_CAP).map(|i| samples[i * n / DIST_CAP].clone()).collect();
                }
                let ports = ports_in(&acc.ports, mask);
                let of_side = |v: &Values| v.dist(|h| side_of[h as usize] == side, |x, _| x);
                UdpClass {
                    name: names.names[class as usize].clone(),
                    ports,
                    initiators: side,
                    flows,
                    samples,
                    packet_gap_s: [of_side(&acc.gaps[0]), of_side(&acc.gaps[1])],
                    packet_bytes: [of_side(&acc.sizes[0]), of_side(&acc.sizes[1])],
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flows_split_on_idle_and_classify_by_port() {
        let mut names = ClassNames::new(&swing::default_ports());
        let mut hosts = HostTable::default();
        let mut rng = Rng::stream(0, "u");
        let mut u = UdpTable::new(60_000_000_000, false);
        let s = 1_000_000_000;
        // A DNS query and answer, then the same 5-tuple 61 s later.
        u.packet(0, 0, 1, 40000, 2, 53, 60, &mut hosts, &mut names, &mut rng);
        u.packet(s / 10, 0, 2, 53, 1, 40000, 200, &mut hosts, &mut names, &mut rng);
        u.packet(61 * s + s / 10, 0, 1, 40000, 2, 53, 70, &mut hosts, &mut names, &mut rng);
        // Two ephemeral ports: named by the responder's.
        u.packet(s, 0, 3, 50000, 4, 40001, 100, &mut hosts, &mut names, &mut rng);
        u.finish_all(0, &mut rng);
        assert_eq!(u.total, 3);
        let side = vec![Side::A, Side::B, Side::A, Side::B];
        let out = u.build(&names, &side, 0.0);
        let dns = out.iter().find(|c| c.name == "DNS").unwrap();
        assert_eq!((dns.flows, dns.initiators, dns.ports.clone()), (2, Side::A, vec![53]));
        assert_eq!(dns.samples[0], UdpFlow { start_s: 0.0, duration_s: 0.1, packets: [1, 1], bytes: [60, 200], reply_s: 0.1, sequence: vec![] });
        // One packet a direction per flow: sizes, but no in-flow gaps.
        assert_eq!(dns.packet_bytes[0].values, vec![60.0, 70.0]);
        assert_eq!(dns.packet_bytes[1].values, vec![200.0]);
        assert!(dns.packet_gap_s[0].is_empty());
        assert_eq!(dns.samples[1].packets, [1, 0]);
        assert!(out.iter().any(|c| c.name == "udp-40001"));
        assert_eq!(hosts.hosts[0].udp_initiated, 2);
        assert_eq!(hosts.hosts[1].udp_accepted, 2);
    }
}
