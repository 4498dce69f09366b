//! Packets in flight, kept in a slab so events carry a 4-byte index.

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

#[derive(Clone, Copy, Debug)]
pub struct Pkt {
    pub src: HostId,
    pub dst: HostId,
    pub sport: u16,
    pub dport: u16,
    /// IP packet size: what links serialise and count.
    pub size: u32,
    pub body: Body,
}

/// Reuses freed slots so the working set stays the packets in flight.
#[derive(Default)]
pub struct Slab {
    slots: Vec<Pkt>,
    free: Vec<u32>,
}

impl Slab {
    #[inline]
    pub fn insert(&mut self, p: Pkt) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = p;
                i
            }
            None => {
                self.slots.push(p);
                (self.slots.len() - 1) as u32
            }
        }
    }

    #[inline]
    pub fn get(&self, i: u32) -> &Pkt {
        &self.slots[i as usize]
    }

    #[inline]
    pub fn remove(&mut self, i: u32) -> Pkt {
        self.free.push(i);
        self.slots[i as usize]
    }

    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}
