//! What a path element knows of a packet.

use units::{Dur, Time};

/// The largest IP packet a link carries, in both engines (Ethernet's; the
/// emulator's TUNs): larger UDP datagrams cross as fragments.
pub const MTU: u32 = 1500;

/// A packet as path elements see it: enough to serialise, classify and
/// mark it, never its bytes. The engine keeps the packet itself and gives
/// elements its handle, which they hand back when they let it go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// The engine's handle (a slot in the simulator's packet slab, a
    /// buffer in the emulator): elements carry it and never read it.
    pub id: u32,
    /// IP bytes: what a queue counts and a serialiser sends.
    pub len: u32,
    /// A label of the packet's flow (its addresses and ports), for
    /// per-flow disciplines and markers.
    pub flow: u32,
    /// Its DiffServ class (the codepoint's class: 0 best effort), as its
    /// sending host sets it; schedulers between classes serve by it.
    pub class: u8,
    /// Its drop precedence ([`Colour`]): green unless a marker coloured it.
    pub colour: Colour,
    /// A SYN or SYN/ACK: a loss element may lose handshakes at a rate of
    /// their own.
    pub handshake: bool,
    /// The sender can take a congestion mark instead of a drop (ECT), and
    /// whether a queue has marked it (CE).
    pub ecn_capable: bool,
    pub ce: bool,
    /// Set by the last queue it crossed: it waited there for service, and
    /// took this long to serialise (what bunching pairs and holds it by).
    pub queued: bool,
    pub tx: Dur,
    /// When it entered the last queue it crossed.
    pub enqueued_at: Time,
}

/// A drop precedence, as a marker colours a packet (RFC 2597's low,
/// medium and high; RFC 2859's green, yellow and red). One byte.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Colour {
    #[default]
    Green = 0,
    Yellow = 1,
    Red = 2,
}

impl Colour {
    pub const ALL: [Colour; 3] = [Colour::Green, Colour::Yellow, Colour::Red];

    pub fn index(self) -> usize {
        self as usize
    }

    /// The name used in scenarios and summaries.
    pub fn name(self) -> &'static str {
        match self {
            Colour::Green => "green",
            Colour::Yellow => "yellow",
            Colour::Red => "red",
        }
    }
}

impl Packet {
    /// A packet of `len` bytes with handle `id`, everything else unset.
    pub fn new(id: u32, len: u32) -> Packet {
        Packet {
            id,
            len,
            flow: 0,
            class: 0,
            colour: Colour::Green,
            handshake: false,
            ecn_capable: false,
            ce: false,
            queued: false,
            tx: Dur::ZERO,
            enqueued_at: Time::ZERO,
        }
    }

    /// The flow label both engines give a packet between hosts `src` and
    /// `dst` (as the fabric numbers them) and ports `sport`, `dport`.
    #[inline]
    pub fn flow_of(src: u32, dst: u32, sport: u16, dport: u16) -> u32 {
        src ^ dst.rotate_left(16) ^ (sport as u32) << 8 ^ dport as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packet_stays_five_words_with_its_class_and_colour() {
        // The simulator copies one per element offer: the colour fits in
        // the padding beside the other one-byte fields.
        assert_eq!(std::mem::size_of::<Packet>(), 40);
        assert_eq!(std::mem::size_of::<Colour>(), 1);
    }
}
