//! Packets in flight, kept in a slab so events carry a 4-byte index.
//!
//! Links and routers read a packet's addresses, ports and size at every
//! hop, the transport part only at the host that receives it. So the slab
//! keeps the two apart: heads packed several to a cache line, bodies each
//! on lines of their own, and a hop touches one line of packet memory.

use crate::ip::Fragment;
use tcp::Segment;
use traffic::HostId;

pub const UDP_HEADER: u32 = 8;

#[derive(Clone, Copy, Debug)]
pub enum Body {
    Tcp(Segment),
    /// A UDP datagram's payload bytes; `frag` if the datagram was larger
    /// than the MTU and this packet is one piece of it.
    Udp {
        payload: u32,
        frag: Option<Fragment>,
    },
}

/// What the network reads of a packet at each hop.
#[derive(Clone, Copy, Debug)]
pub struct Head {
    pub src: HostId,
    pub dst: HostId,
    pub sport: u16,
    pub dport: u16,
    /// IP packet size: what links serialise and count.
    pub size: u32,
    /// A SYN or SYN/ACK (which loss elements may treat apart).
    pub handshake: bool,
    /// Its IP header's ECN field: ECN-capable, and marked CE on the way.
    pub ecn_capable: bool,
    pub ce: bool,
    /// The receiving connection's slot as the sender knows it, or
    /// [`NO_CONN`]: spares the receiver its demultiplexing lookup.
    pub conn: u32,
}

/// A packet whose receiving connection is not known to its sender.
pub const NO_CONN: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
pub struct Pkt {
    pub head: Head,
    pub body: Body,
}

impl Pkt {
    pub fn new(src: HostId, dst: HostId, sport: u16, dport: u16, size: u32, body: Body) -> Pkt {
        let (handshake, ecn) = match &body {
            Body::Tcp(s) => (s.flags.contains(tcp::Flags::SYN), s.ecn),
            Body::Udp { .. } => (false, tcp::Ecn::NotEct),
        };
        let head = Head { src, dst, sport, dport, size, handshake, ecn_capable: ecn.capable(), ce: ecn == tcp::Ecn::Ce, conn: NO_CONN };
        Pkt { head, body }
    }
}

/// A body on cache lines of its own: a segment's fields fill its first
/// line, and its SACK blocks, rarely present, the second, which is
/// written only when there are blocks.
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
struct BodySlot(Body);

/// Reuses freed slots so the working set stays the packets in flight.
#[derive(Default)]
pub struct Slab {
    heads: Vec<Head>,
    bodies: Vec<BodySlot>,
    free: Vec<u32>,
}

impl Slab {
    #[inline]
    pub fn insert(&mut self, p: Pkt) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.heads[i as usize] = p.head;
                // A segment over a segment leaves the blocks' line alone
                // when it has no blocks: most have none.
                match (&mut self.bodies[i as usize].0, &p.body) {
                    (Body::Tcp(old), Body::Tcp(seg)) => seg.write_to(old),
                    (slot, body) => *slot = *body,
                }
                i
            }
            None => {
                self.heads.push(p.head);
                self.bodies.push(BodySlot(p.body));
                (self.heads.len() - 1) as u32
            }
        }
    }

    #[inline]
    pub fn head(&self, i: u32) -> &Head {
        &self.heads[i as usize]
    }

    #[inline]
    pub fn body(&self, i: u32) -> &Body {
        &self.bodies[i as usize].0
    }

    /// A queue marked packet `i` CE (RFC 3168 §5): in its head, which the
    /// network reads, and in the segment, which the receiver reads.
    #[inline]
    pub fn mark_ce(&mut self, i: u32) {
        self.heads[i as usize].ce = true;
        if let Body::Tcp(seg) = &mut self.bodies[i as usize].0 {
            seg.ecn = tcp::Ecn::Ce;
        }
    }

    /// Frees slot `i`.
    #[inline]
    pub fn remove(&mut self, i: u32) {
        self.free.push(i);
    }

    pub fn live(&self) -> usize {
        self.heads.len() - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_head_stays_24_bytes_with_its_ecn_bits() {
        // Links read a packet's head at every hop, several to a cache line.
        assert_eq!(std::mem::size_of::<super::Head>(), 24);
    }
}
