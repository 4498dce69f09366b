//! Canonical 5-tuple keys (the protocol is implied by the table).

/// The two endpoints ordered so that both directions of a flow give the
/// same key; `from_lo` says whether a packet was sent by the lower one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct FlowKey {
    pub lo: u128,
    pub hi: u128,
    pub lo_port: u16,
    pub hi_port: u16,
}

impl FlowKey {
    /// The key of a packet and whether its sender is the `lo` endpoint.
    #[inline]
    pub(crate) fn of(src: u128, sport: u16, dst: u128, dport: u16) -> (FlowKey, bool) {
        if (src, sport) <= (dst, dport) {
            (FlowKey { lo: src, hi: dst, lo_port: sport, hi_port: dport }, true)
        } else {
            (FlowKey { lo: dst, hi: src, lo_port: dport, hi_port: sport }, false)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_directions_share_a_key() {
        let (k1, a) = FlowKey::of(5, 1000, 9, 80);
        let (k2, b) = FlowKey::of(9, 80, 5, 1000);
        assert_eq!(k1, k2);
        assert!(a && !b);
        // Same address both ends: the ports decide.
        let (k3, c) = FlowKey::of(5, 80, 5, 1000);
        assert_eq!((k3.lo_port, c), (80, true));
    }
}
