//! What a path element knows of a packet.

use units::{Dur, Time};

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
    /// Its class or drop precedence: 0 unless a marker or the sender set it.
    pub class: u8,
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

impl Packet {
    /// A packet of `len` bytes with handle `id`, everything else unset.
    pub fn new(id: u32, len: u32) -> Packet {
        Packet { id, len, flow: 0, class: 0, handshake: false, ecn_capable: false, ce: false, queued: false, tx: Dur::ZERO, enqueued_at: Time::ZERO }
    }

    /// The flow label both engines give a packet between hosts `src` and
    /// `dst` (as the fabric numbers them) and ports `sport`, `dport`.
    #[inline]
    pub fn flow_of(src: u32, dst: u32, sport: u16, dport: u16) -> u32 {
        src ^ dst.rotate_left(16) ^ (sport as u32) << 8 ^ dport as u32
    }
}
