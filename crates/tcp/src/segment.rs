//! The segment as exchanged between endpoints: header fields only, payload is a byte count.

/// TCP header flags, with the wire bit values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Flags(pub u8);

impl Flags {
    pub const NONE: Flags = Flags(0);
    pub const FIN: Flags = Flags(0x01);
    pub const SYN: Flags = Flags(0x02);
    pub const RST: Flags = Flags(0x04);
    pub const PSH: Flags = Flags(0x08);
    pub const ACK: Flags = Flags(0x10);
    /// ECN-Echo and Congestion Window Reduced (RFC 3168 §6.1).
    pub const ECE: Flags = Flags(0x40);
    pub const CWR: Flags = Flags(0x80);

    #[inline]
    pub const fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }
    #[inline]
    pub const fn union(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }
    #[inline]
    pub const fn bits(self) -> u8 {
        self.0
    }
}

impl std::ops::BitOr for Flags {
    type Output = Flags;
    fn bitor(self, rhs: Flags) -> Flags {
        self.union(rhs)
    }
}

impl std::ops::BitOrAssign for Flags {
    fn bitor_assign(&mut self, rhs: Flags) {
        self.0 |= rhs.0;
    }
}

/// The ECN field of the IP header that carries a segment (RFC 3168 §5), as
/// the sender set it and the network may have changed it (CE).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Ecn {
    #[default]
    NotEct = 0,
    Ect1 = 1,
    Ect0 = 2,
    Ce = 3,
}

impl Ecn {
    /// The codepoint's two bits.
    pub const fn bits(self) -> u8 {
        self as u8
    }
    /// ECT(0), ECT(1) or CE: a queue may mark it instead of dropping it.
    pub const fn capable(self) -> bool {
        !matches!(self, Ecn::NotEct)
    }
}

/// SACK blocks carried by a segment: `[start, end)` ranges, most recent first (RFC 2018).
/// Four fit because no timestamps option is used. The count comes first, so
/// that a segment without blocks is read without them (see [`Segment`]).
/// Only the first `n` blocks mean anything (see [`Segment::write_to`]).
#[derive(Clone, Copy, Debug, Default, Eq)]
#[repr(C)]
pub struct SackBlocks {
    pub n: u8,
    pub blocks: [(u64, u64); 4],
}

impl PartialEq for SackBlocks {
    fn eq(&self, o: &Self) -> bool {
        self.as_slice() == o.as_slice()
    }
}

impl SackBlocks {
    pub const MAX: usize = 4;

    pub fn as_slice(&self) -> &[(u64, u64)] {
        &self.blocks[..self.n as usize]
    }
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
    pub fn from_slice(bs: &[(u64, u64)]) -> SackBlocks {
        let mut s = SackBlocks::default();
        for &b in bs.iter().take(Self::MAX) {
            s.blocks[s.n as usize] = b;
            s.n += 1;
        }
        s
    }
}

/// SACK blocks an endpoint keeps between segments, held only while there
/// are any: most connections never see loss or reordering, and then never
/// hold them.
#[derive(Clone, Debug, Default)]
pub(crate) struct KeptBlocks(Option<Box<SackBlocks>>);

impl KeptBlocks {
    #[inline]
    pub(crate) fn get(&self) -> SackBlocks {
        self.0.as_deref().copied().unwrap_or_default()
    }

    #[inline]
    pub(crate) fn set(&mut self, b: SackBlocks) {
        match &mut self.0 {
            _ if b.is_empty() => self.0 = None,
            Some(kept) => **kept = b,
            None => self.0 = Some(Box::new(b)),
        }
    }

    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_none()
    }
}

/// Linux's `after()`: `a` comes after `b` in a 32-bit space that wraps, as Linux's
/// sequence numbers do (and here transmission counts, and sequence numbers kept in
/// 32 bits).
#[inline]
pub(crate) fn after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

/// Options negotiated on SYN and SYN-ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SynOptions {
    pub mss: u32,
    pub sack_permitted: bool,
    /// RFC 7323 timestamps offered.
    pub timestamps: bool,
}

/// Bytes of options on a SYN or SYN-ACK as Linux lays them out (see
/// `Segment::header_len`): MSS, window scale, and SACK-permitted and
/// timestamps together or either alone.
pub fn syn_option_bytes(sack_permitted: bool, timestamps: bool) -> u32 {
    4 + 4
        + if timestamps {
            12
        } else if sack_permitted {
            4
        } else {
            0
        }
}

/// In C order, with the SACK blocks last: every other field then lies in
/// the first 64 bytes, and a receiver reads the blocks' cache line only
/// when there are blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Segment {
    /// Absolute sequence number; the ISN is 0 and data starts at 1.
    pub seq: u64,
    /// Valid when `flags` has ACK.
    pub ack: u64,
    /// Advertised receive window, bytes.
    pub wnd: u64,
    /// Payload bytes (SYN/FIN not counted).
    pub len: u32,
    pub flags: Flags,
    /// Informational: carries already-sent data (stats, pcap comments).
    pub retransmit: bool,
    /// The IP header's ECN field.
    pub ecn: Ecn,
    /// RFC 7323 timestamps (TSval, TSecr), on every segment once negotiated.
    pub ts: Option<(u32, u32)>,
    /// Present on SYN and SYN-ACK.
    pub syn_opts: Option<SynOptions>,
    pub sack: SackBlocks,
}

const _: () = assert!(
    std::mem::offset_of!(Segment, sack) + std::mem::offset_of!(SackBlocks, blocks) == 64,
    "a segment's fields but its SACK blocks fit in its first 64 bytes"
);

impl Segment {
    /// Writes this segment over `dst`, its blocks only as many as it has:
    /// a segment kept where it waits (the simulator's packets in flight)
    /// then costs the cache line of its blocks only when it carries some.
    #[inline]
    pub fn write_to(&self, dst: &mut Segment) {
        let Segment { seq, ack, wnd, len, flags, retransmit, ecn, ts, syn_opts, sack } = *self;
        dst.seq = seq;
        dst.ack = ack;
        dst.wnd = wnd;
        dst.len = len;
        dst.flags = flags;
        dst.retransmit = retransmit;
        dst.ecn = ecn;
        dst.ts = ts;
        dst.syn_opts = syn_opts;
        dst.sack.n = sack.n;
        dst.sack.blocks[..sack.n as usize].copy_from_slice(sack.as_slice());
    }

    /// TCP header length in bytes with options as Linux lays them out, each
    /// padded to 4: SYN: MSS (4), SACK-permitted and timestamps (2 + 10, or
    /// either with 2 NOPs), NOP and window scale (4); timestamps: 2 NOPs + 10;
    /// SACK: 2 NOPs + 2 + 8n. The `wire` crate emits the same layout.
    pub fn header_len(&self) -> u32 {
        let ts = self.ts.is_some();
        let mut opts = 0;
        if let Some(o) = self.syn_opts {
            opts += syn_option_bytes(o.sack_permitted, ts);
        } else if ts {
            opts += 12;
        }
        if self.sack.n > 0 {
            opts += 4 + 8 * self.sack.n as u32;
        }
        20 + opts
    }

    /// Sequence space consumed: payload + SYN + FIN.
    pub fn seq_len(&self) -> u64 {
        self.len as u64 + self.flags.contains(Flags::SYN) as u64 + self.flags.contains(Flags::FIN) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(flags: Flags) -> Segment {
        Segment { seq: 0, ack: 0, len: 0, flags, wnd: 0, sack: SackBlocks::default(), syn_opts: None, ts: None, retransmit: false, ecn: Ecn::NotEct }
    }

    #[test]
    fn header_lengths_match_wire_layout() {
        let mut s = seg(Flags::SYN);
        s.syn_opts = Some(SynOptions { mss: 1460, sack_permitted: true, timestamps: false });
        assert_eq!(s.header_len(), 32);
        s.syn_opts = Some(SynOptions { mss: 1460, sack_permitted: false, timestamps: false });
        assert_eq!(s.header_len(), 28);
        // Linux's SYN: MSS, SACK-permitted + timestamps, NOP + window scale.
        s.syn_opts = Some(SynOptions { mss: 1460, sack_permitted: true, timestamps: true });
        s.ts = Some((1, 0));
        assert_eq!(s.header_len(), 40);
        let mut a = seg(Flags::ACK);
        assert_eq!(a.header_len(), 20);
        a.sack = SackBlocks::from_slice(&[(1, 2)]);
        assert_eq!(a.header_len(), 32);
        a.sack = SackBlocks::from_slice(&[(1, 2), (3, 4), (5, 6), (7, 8)]);
        assert_eq!(a.header_len(), 56);
        // With timestamps: a 52-byte ACK (IP included), at most 3 SACK blocks in 60 bytes.
        a.ts = Some((5, 4));
        a.sack = SackBlocks::default();
        assert_eq!(a.header_len(), 32);
        a.sack = SackBlocks::from_slice(&[(1, 2), (3, 4), (5, 6)]);
        assert_eq!(a.header_len(), 60);
    }

    #[test]
    fn seq_len_counts_syn_and_fin() {
        let mut s = seg(Flags::SYN | Flags::ACK);
        assert_eq!(s.seq_len(), 1);
        s.flags = Flags::ACK | Flags::FIN;
        s.len = 100;
        assert_eq!(s.seq_len(), 101);
        assert!(s.flags.contains(Flags::FIN) && !s.flags.contains(Flags::SYN));
    }

    #[test]
    fn a_segment_written_over_another_is_equal_to_it_whatever_blocks_were_there() {
        let mut old = seg(Flags::ACK);
        old.sack = SackBlocks::from_slice(&[(10, 20), (30, 40), (50, 60)]);
        let mut new = seg(Flags::ACK | Flags::FIN);
        new.seq = 7;
        new.len = 100;
        new.ts = Some((3, 4));
        new.sack = SackBlocks::from_slice(&[(70, 80)]);
        new.write_to(&mut old);
        assert_eq!(old, new);
        assert_eq!(old.sack.as_slice(), &[(70, 80)]);
        let plain = seg(Flags::ACK);
        plain.write_to(&mut old);
        assert_eq!(old, plain);
        assert!(old.sack.is_empty());
    }
}
