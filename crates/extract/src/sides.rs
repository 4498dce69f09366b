//! Which side of the observed link each host is on.
//!
//! Sides are decided once, at the end of the pass, from per-host tallies:
//! connection direction comes from SYNs, so nothing during the pass needs
//! them. Rules (see `SideRule`):
//! * prefixes: inside any prefix is side A;
//! * MACs: a frame sent from a listed MAC comes from side A, so its source
//!   host votes A and its destination votes B (frames from other MACs vote
//!   the other way); each host takes the majority of its votes, as Swing
//!   assigned each IP by the majority of its packets;
//! * auto: (i) when frames carry MACs and one or two MACs send ≥ 90 % of
//!   them (a capture beside a host or between two routers), the MAC sending
//!   the most pure SYNs is the client-side access link and is side A, voted
//!   as above; (ii) else, when private/local and public hosts both exist and
//!   most packets cross between the two groups (a NAT or campus edge),
//!   private/local is side A, and so are public hosts that never talk to a
//!   private one but initiate more than they accept (as in (iii)): an edge
//!   where NATed IPv4 clients sit beside clients with global IPv6
//!   addresses. Crossing is required because anonymised backbone traces
//!   (CryptoPAn) map a few addresses into private ranges by chance; (iii)
//!   else a host is side A if it initiates more TCP connections than it
//!   accepts (ties: more UDP flows initiated than answered), otherwise B.

use crate::hosts::Host;
use rustc_hash::FxHashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use swing::Side;

/// Addresses as one integer: IPv4 as IPv4-mapped IPv6.
pub(crate) fn addr_key(ip: IpAddr) -> u128 {
    match ip {
        IpAddr::V4(v4) => 0xffff_0000_0000u128 | u32::from(v4) as u128,
        IpAddr::V6(v6) => u128::from(v6),
    }
}

pub(crate) fn key_addr(k: u128) -> IpAddr {
    if k >> 32 == 0xffff {
        IpAddr::V4(Ipv4Addr::from(k as u32))
    } else {
        IpAddr::V6(Ipv6Addr::from(k))
    }
}

/// The address as text; IPv4 written by hand because `Display` through
/// the formatting machinery dominated the end of the pass on traces with
/// many hosts.
pub(crate) fn key_string(k: u128) -> String {
    match key_addr(k) {
        IpAddr::V4(v) => {
            let mut s = String::with_capacity(15);
            for (i, o) in v.octets().into_iter().enumerate() {
                if i > 0 {
                    s.push('.');
                }
                if o >= 100 {
                    s.push((b'0' + o / 100) as char);
                }
                if o >= 10 {
                    s.push((b'0' + o / 10 % 10) as char);
                }
                s.push((b'0' + o % 10) as char);
            }
            s
        }
        v6 => v6.to_string(),
    }
}

/// A CIDR prefix over the 128-bit key space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Prefix {
    net: u128,
    len: u8,
}

impl Prefix {
    pub(crate) fn contains(&self, k: u128) -> bool {
        let mask = if self.len == 0 { 0 } else { u128::MAX << (128 - self.len as u32) };
        k & mask == self.net
    }
}

/// "10.0.0.0/8", "2001:db8::/32", or a bare address (a /32 or /128).
pub(crate) fn parse_prefix(s: &str) -> Result<Prefix, String> {
    let (a, l) = match s.trim().split_once('/') {
        Some((a, l)) => (a, Some(l)),
        None => (s.trim(), None),
    };
    let ip: IpAddr = a.parse().map_err(|_| format!("{a:?} is not an IPv4 or IPv6 address"))?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    let len: u32 = match l {
        None => max,
        Some(l) => l.parse().ok().filter(|n| *n <= max).ok_or_else(|| format!("prefix length {l:?} must be a whole number from 0 to {max}"))?,
    };
    let len = if ip.is_ipv4() { len + 96 } else { len } as u8;
    let mask = if len == 0 { 0 } else { u128::MAX << (128 - len as u32) };
    Ok(Prefix { net: addr_key(ip) & mask, len })
}

/// "00:1b:21:3a:4f:01" (or with '-').
pub(crate) fn parse_mac(s: &str) -> Result<[u8; 6], String> {
    let parts: Vec<&str> = s.trim().split([':', '-']).collect();
    let mut mac = [0u8; 6];
    if parts.len() != 6 {
        return Err("must be six hex bytes like \"00:1b:21:3a:4f:01\"".into());
    }
    for (m, p) in mac.iter_mut().zip(&parts) {
        *m = u8::from_str_radix(p, 16)
            .ok()
            .filter(|_| p.len() <= 2)
            .ok_or_else(|| format!("{p:?} is not a hex byte; a MAC is six like \"00:1b:21:3a:4f:01\""))?;
    }
    Ok(mac)
}

pub(crate) fn fmt_mac(m: &[u8; 6]) -> String {
    m.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":")
}

/// RFC 1918, shared address space (100.64/10), IPv4 link-local
/// (169.254/16), unique-local (fc00::/7) and link-local (fe80::/10)
/// addresses: those behind an edge.
pub(crate) fn is_private(k: u128) -> bool {
    match key_addr(k) {
        IpAddr::V4(v) => {
            let o = v.octets();
            o[0] == 10
                || (o[0] == 172 && (16..32).contains(&o[1]))
                || (o[0] == 192 && o[1] == 168)
                || (o[0] == 100 && (64..128).contains(&o[1]))
                || (o[0] == 169 && o[1] == 254)
        }
        IpAddr::V6(v) => {
            let s = v.segments()[0];
            s & 0xfe00 == 0xfc00 || s & 0xffc0 == 0xfe80
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct MacStat {
    pub mac: [u8; 6],
    pub frames: u64,
    /// Pure SYNs (no ACK) and SYN/ACKs sent from this MAC.
    pub syns: u64,
    pub synacks: u64,
}

/// Source MACs seen, interned to small ids.
#[derive(Default)]
pub(crate) struct MacTable {
    map: FxHashMap<[u8; 6], u32>,
    pub stats: Vec<MacStat>,
    last: Option<([u8; 6], u32)>,
}

impl MacTable {
    /// Counts a frame (a pure SYN, a SYN/ACK or neither) and returns the
    /// MAC's id.
    #[inline]
    pub(crate) fn frame(&mut self, mac: [u8; 6], pure_syn: bool, synack: bool) -> u32 {
        let id = match self.last {
            Some((m, id)) if m == mac => id,
            _ => {
                let n = self.stats.len() as u32;
                let id = *self.map.entry(mac).or_insert(n);
                if id == n {
                    self.stats.push(MacStat { mac, frames: 0, syns: 0, synacks: 0 });
                }
                self.last = Some((mac, id));
                id
            }
        };
        let s = &mut self.stats[id as usize];
        s.frames += 1;
        s.syns += pure_syn as u64;
        s.synacks += synack as u64;
        id
    }
}

/// A host's frames per MAC: as sender (`src`) and as receiver (`dst`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct MacVote {
    pub mac: u32,
    pub src: u32,
    pub dst: u32,
}

pub(crate) const MAC_SLOTS: usize = 3;
pub(crate) const NO_MAC: MacVote = MacVote { mac: u32::MAX, src: 0, dst: 0 };

/// Records one frame for a host. Hosts rarely see more than two MACs (the
/// two ends of the link); frames from further MACs are not tallied.
#[inline]
pub(crate) fn vote(votes: &mut [MacVote; MAC_SLOTS], mac: u32, as_src: bool) {
    for v in votes.iter_mut() {
        if v.mac == u32::MAX {
            v.mac = mac;
        }
        if v.mac == mac {
            if as_src {
                v.src = v.src.saturating_add(1);
            } else {
                v.dst = v.dst.saturating_add(1);
            }
            return;
        }
    }
}

fn mac_side(h: &Host, is_a: &dyn Fn(u32) -> bool) -> Side {
    let (mut a, mut b) = (0u64, 0u64);
    for v in h.votes.iter().filter(|v| v.mac != u32::MAX) {
        if is_a(v.mac) {
            a += v.src as u64;
            b += v.dst as u64;
        } else {
            b += v.src as u64;
            a += v.dst as u64;
        }
    }
    if a > b {
        Side::A
    } else {
        Side::B
    }
}

pub(crate) struct Decision {
    pub side: Vec<Side>,
    pub decided_by: String,
}

/// Global tallies the auto rule needs besides the hosts.
pub(crate) struct Tallies {
    pub ip_packets: u64,
    /// Packets with exactly one private/local endpoint.
    pub crossing: u64,
}

pub(crate) fn decide(rule: &crate::options::Sides, hosts: &[Host], macs: &MacTable, t: &Tallies) -> Decision {
    use crate::options::Sides;
    match rule {
        Sides::Prefixes(ps) => Decision {
            side: hosts.iter().map(|h| if ps.iter().any(|p| p.contains(h.addr)) { Side::A } else { Side::B }).collect(),
            decided_by: "prefix rule: hosts inside the listed prefixes are side A".into(),
        },
        Sides::Macs(list) => {
            let a_ids: Vec<u32> = macs.stats.iter().enumerate().filter(|(_, s)| list.contains(&s.mac)).map(|(i, _)| i as u32).collect();
            let is_a = |m: u32| a_ids.contains(&m);
            Decision {
                side: hosts.iter().map(|h| mac_side(h, &is_a)).collect(),
                decided_by: format!(
                    "MAC rule: frames from {} come from side A ({} of {} source MACs seen are listed)",
                    list.iter().map(fmt_mac).collect::<Vec<_>>().join(", "),
                    a_ids.len(),
                    macs.stats.len()
                ),
            }
        }
        Sides::Auto => auto(hosts, macs, t),
    }
}

fn auto(hosts: &[Host], macs: &MacTable, t: &Tallies) -> Decision {
    // (i) One or two MACs dominate.
    let total: u64 = macs.stats.iter().map(|s| s.frames).sum();
    if total > 0 && total * 2 >= t.ip_packets {
        let mut order: Vec<u32> = (0..macs.stats.len() as u32).collect();
        order.sort_by(|&x, &y| {
            let (a, b) = (&macs.stats[x as usize], &macs.stats[y as usize]);
            b.frames.cmp(&a.frames).then(a.mac.cmp(&b.mac))
        });
        let top: Vec<u32> = order.iter().take(2).copied().collect();
        let share: u64 = top.iter().map(|&i| macs.stats[i as usize].frames).sum();
        if share * 10 >= total * 9 {
            let best = *top
                .iter()
                .max_by(|&&x, &&y| {
                    let (a, b) = (&macs.stats[x as usize], &macs.stats[y as usize]);
                    a.syns.cmp(&b.syns).then(a.frames.cmp(&b.frames)).then(b.mac.cmp(&a.mac))
                })
                .expect("two MACs at most, one at least");
            let s = &macs.stats[best as usize];
            // A MAC that also sent the SYN/ACKs answering its SYNs carries
            // both sides (a tunnel's or a host's made-up Ethernet header,
            // one address for every frame): it tells no side.
            if s.syns > 0 && s.synacks * 2 < s.syns {
                let syns: u64 = macs.stats.iter().map(|s| s.syns).sum();
                let names: Vec<String> = top.iter().map(|&i| fmt_mac(&macs.stats[i as usize].mac)).collect();
                return Decision {
                    side: hosts.iter().map(|h| mac_side(h, &|m| m == best)).collect(),
                    decided_by: format!(
                        "auto: MAC {} sent {:.1}% of frames; {} sent the most SYNs ({} of {}), so it is \
                         the client-side access link: hosts sending from it are side A",
                        names.join(" and "),
                        100.0 * share as f64 / total as f64,
                        fmt_mac(&s.mac),
                        s.syns,
                        syns
                    ),
                };
            }
        }
    }
    // (ii) Private behind public.
    let private = hosts.iter().filter(|h| h.private).count();
    let public = hosts.len() - private;
    if private > 0 && public > 0 && t.crossing * 2 >= t.ip_packets {
        let apart = hosts.iter().filter(|h| !h.private && !h.private_peer && initiator(h)).count();
        let also = match apart {
            0 => String::new(),
            1 => "; 1 public host that never talks to a private one but initiates more than it accepts is side A too".into(),
            n => format!("; {n} public hosts that never talk to a private one but initiate more than they accept are side A too"),
        };
        return Decision {
            side: hosts.iter().map(|h| if h.private || (!h.private_peer && initiator(h)) { Side::A } else { Side::B }).collect(),
            decided_by: format!(
                "auto: {private} private/local and {public} public hosts, {:.1}% of packets cross between \
                 them: private/local addresses are side A{also}",
                100.0 * t.crossing as f64 / t.ip_packets.max(1) as f64
            ),
        };
    }
    // (iii) Initiators.
    Decision {
        side: hosts.iter().map(|h| if initiator(h) { Side::A } else { Side::B }).collect(),
        decided_by: "auto: no dominant MAC pair and no private/public edge: hosts that initiate more TCP \
                     connections than they accept (then more UDP flows) are side A"
            .into(),
    }
}

/// Initiates more TCP connections than it accepts (ties: more UDP flows).
fn initiator(h: &Host) -> bool {
    h.tcp_initiated.cmp(&h.tcp_accepted).then(h.udp_initiated.cmp(&h.udp_accepted)).is_gt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_parse_and_match() {
        let p = parse_prefix("10.0.0.0/8").unwrap();
        assert!(p.contains(addr_key("10.200.1.1".parse().unwrap())));
        assert!(!p.contains(addr_key("11.0.0.1".parse().unwrap())));
        assert!(!p.contains(addr_key("::a00:1".parse().unwrap())));
        let p = parse_prefix("2001:db8::/32").unwrap();
        assert!(p.contains(addr_key("2001:db8:1::5".parse().unwrap())));
        assert!(!p.contains(addr_key("2001:db9::5".parse().unwrap())));
        let p = parse_prefix("192.168.1.7").unwrap();
        assert!(p.contains(addr_key("192.168.1.7".parse().unwrap())));
        assert!(!p.contains(addr_key("192.168.1.8".parse().unwrap())));
        assert!(parse_prefix("0.0.0.0/0").unwrap().contains(addr_key("8.8.8.8".parse().unwrap())));
        // Host bits beyond the prefix are ignored, as in routing tables.
        assert!(parse_prefix("10.1.2.3/8").unwrap().contains(addr_key("10.9.9.9".parse().unwrap())));
        assert!(parse_prefix("10.0.0.0/33").is_err());
        assert!(parse_prefix("10.0.0/8").is_err());
        assert!(parse_prefix("::/129").is_err());
    }

    #[test]
    fn macs_parse() {
        assert_eq!(parse_mac("00:1B:21:3a:4f:01").unwrap(), [0, 0x1b, 0x21, 0x3a, 0x4f, 1]);
        assert_eq!(parse_mac("00-1b-21-3a-4f-01").unwrap(), [0, 0x1b, 0x21, 0x3a, 0x4f, 1]);
        assert!(parse_mac("00:1b:21:3a:4f").is_err());
        assert!(parse_mac("00:1b:21:3a:4f:100").is_err());
        assert!(parse_mac("00:1b:21:3a:4f:zz").is_err());
        assert_eq!(fmt_mac(&[0, 0x1b, 0x21, 0x3a, 0x4f, 1]), "00:1b:21:3a:4f:01");
    }

    #[test]
    fn private_ranges() {
        for a in ["10.1.1.1", "172.16.0.1", "172.31.255.255", "192.168.0.1", "100.64.0.1", "169.254.3.4", "fd00::1", "fe80::1"] {
            assert!(is_private(addr_key(a.parse().unwrap())), "{a}");
        }
        for a in ["172.32.0.1", "100.128.0.1", "8.8.8.8", "2001:db8::1", "11.0.0.1"] {
            assert!(!is_private(addr_key(a.parse().unwrap())), "{a}");
        }
        assert_eq!(key_addr(addr_key("1.2.3.4".parse().unwrap())).to_string(), "1.2.3.4");
        for a in ["0.0.0.0", "10.0.100.9", "255.255.255.255", "192.168.1.10", "2001:db8::1", "::1"] {
            assert_eq!(key_string(addr_key(a.parse().unwrap())), a);
        }
        assert_eq!(key_addr(addr_key("2001:db8::1".parse().unwrap())).to_string(), "2001:db8::1");
    }

    #[test]
    fn votes_fill_slots_then_stop() {
        let mut v = [NO_MAC; MAC_SLOTS];
        vote(&mut v, 7, true);
        vote(&mut v, 7, true);
        vote(&mut v, 9, false);
        for m in 10..20 {
            vote(&mut v, m, true);
        }
        assert_eq!((v[0].mac, v[0].src, v[0].dst), (7, 2, 0));
        assert_eq!((v[1].mac, v[1].src, v[1].dst), (9, 0, 1));
        assert_eq!((v[2].mac, v[2].src), (10, 1));
    }
}
