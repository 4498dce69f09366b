//! Explicit Congestion Notification at the endpoints (RFC 3168 §6.1), in one byte of
//! connection state: whether both ends agreed, a CWR the sender owes, and a CE mark the
//! receiver is echoing. The window's response to an echo is loss recovery's
//! (`recovery.rs`).

use crate::{Ecn, Flags};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct EcnState(u8);

const OK: u8 = 1;
/// The window was reduced: the next segment that may carry CWR does (Linux
/// `TCP_ECN_QUEUE_CWR`, ns-2 `cong_action_`).
const QUEUE_CWR: u8 = 2;
/// A CE mark arrived: ECE on every segment until the peer's CWR (Linux
/// `TCP_ECN_DEMAND_CWR`, ns-2's `ecn_unacked_`).
const DEMAND_CWR: u8 = 4;
/// An ECT or CE data segment arrived (Linux `TCP_ECN_SEEN`): from then on a data
/// segment that is not ECN-capable is probably a retransmission.
const SEEN: u8 = 8;

/// What a host does about ECN on a connection's SYNs (Linux's `tcp_ecn`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EcnSetting {
    /// Neither asks nor agrees: ns-3's `TcpSocketBase` with `UseEcn` Off, the
    /// only way its recovery (which ignores ECN-Echo) can run.
    Off,
    /// Agrees when the peer asks (Linux's default `tcp_ecn` = 2, ns-2's TCPSink).
    Agree,
    /// Asks on its SYNs and agrees when asked (`tcp_ecn` = 1).
    Request,
}

impl EcnSetting {
    pub fn of(cfg: &crate::TcpConfig) -> EcnSetting {
        match (cfg.loss_response, cfg.ecn) {
            (crate::LossResponse::Ns3, _) => EcnSetting::Off,
            (_, false) => EcnSetting::Agree,
            (_, true) => EcnSetting::Request,
        }
    }
}

/// Which data segments go out ECN-capable and carry CWR.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EcnSender {
    /// Linux `tcp_ecn_send`: new data only (RFC 3168 §6.1.5: never a
    /// retransmission), CWR on the next new data segment.
    NewData,
    /// ns-2's `Agent/TCP` with `ecn_`: every data segment, CWR on the next one sent,
    /// retransmission or not (`SetCWRonRetransmit_` true).
    AllData,
}

impl EcnState {
    #[inline]
    fn has(self, bit: u8) -> bool {
        self.0 & bit != 0
    }
    #[inline]
    fn set(&mut self, bit: u8, on: bool) {
        if on {
            self.0 |= bit;
        } else {
            self.0 &= !bit;
        }
    }

    /// Both ends agreed on ECN.
    #[inline]
    pub fn ok(self) -> bool {
        self.has(OK)
    }

    /// The flags of our SYN (we ask for ECN if `setting` says so) or SYN-ACK (we agreed).
    pub fn syn_flags(self, synack: bool, setting: EcnSetting) -> Flags {
        match synack {
            false if setting == EcnSetting::Request => Flags::ECE | Flags::CWR,
            true if self.ok() => Flags::ECE,
            _ => Flags::NONE,
        }
    }

    /// The peer's SYN (ECE and CWR: it asks; we agree unless `setting` is off) or
    /// SYN-ACK (ECE without CWR: it agreed to what we asked).
    pub fn on_peer_syn(&mut self, flags: Flags, setting: EcnSetting) {
        let ece = flags.contains(Flags::ECE);
        let cwr = flags.contains(Flags::CWR);
        let ok = match setting {
            EcnSetting::Off => false,
            _ if flags.contains(Flags::ACK) => setting == EcnSetting::Request && ece && !cwr,
            _ => ece && cwr,
        };
        *self = EcnState(if ok { OK } else { 0 });
    }

    /// The window was reduced (an echo answered, a fast retransmit or a timeout).
    #[inline]
    pub fn queue_cwr(&mut self) {
        let ok = self.ok();
        self.set(QUEUE_CWR, ok);
    }

    /// The IP codepoint and the flags a data segment of `len` bytes goes out with.
    pub fn data(&mut self, sender: EcnSender, len: u64, retransmit: bool) -> (Ecn, Flags) {
        let capable = self.ok() && len > 0 && (sender == EcnSender::AllData || !retransmit);
        if !capable {
            return (Ecn::NotEct, Flags::NONE);
        }
        let cwr = self.has(QUEUE_CWR);
        self.set(QUEUE_CWR, false);
        (Ecn::Ect0, if cwr { Flags::CWR } else { Flags::NONE })
    }

    /// ECE on whatever we send while echoing a mark.
    #[inline]
    pub fn echo(self) -> Flags {
        if self.has(DEMAND_CWR) {
            Flags::ECE
        } else {
            Flags::NONE
        }
    }

    /// A segment with data arrived: its CWR ends the echo, then a CE mark starts it
    /// again (Linux `tcp_ecn_accept_cwr` then `__tcp_ecn_check_ce`, ns-2's TCPSink).
    /// Returns whether the receiver should ACK the next two data segments at once
    /// (Linux `tcp_enter_quickack_mode(sk, 2)`): a mark that starts an echo (the
    /// sender may be down to a very small window), or a segment that is not
    /// ECN-capable after ECN-capable ones (most likely a retransmission, which
    /// Linux's sender never sends ECT).
    pub fn on_data(&mut self, flags: Flags, ecn: Ecn) -> bool {
        if !self.ok() {
            return false;
        }
        if flags.contains(Flags::CWR) {
            self.set(DEMAND_CWR, false);
        }
        match ecn {
            Ecn::NotEct => self.has(SEEN),
            Ecn::Ce => {
                let start = !self.has(DEMAND_CWR);
                self.set(DEMAND_CWR | SEEN, true);
                start
            }
            Ecn::Ect0 | Ecn::Ect1 => {
                self.set(SEEN, true);
                false
            }
        }
    }

    /// The peer echoed a mark on a segment other than its SYN.
    #[inline]
    pub fn echoed(self, flags: Flags) -> bool {
        self.ok() && flags.contains(Flags::ECE) && !flags.contains(Flags::SYN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agreed() -> EcnState {
        let mut e = EcnState::default();
        e.on_peer_syn(Flags::SYN | Flags::ECE | Flags::CWR, EcnSetting::Agree);
        e
    }

    #[test]
    fn negotiation_needs_ece_and_cwr_on_the_syn_and_ece_alone_on_the_syn_ack() {
        let mut e = EcnState::default();
        assert_eq!(e.syn_flags(false, EcnSetting::Request), Flags::ECE | Flags::CWR);
        assert_eq!(e.syn_flags(false, EcnSetting::Agree), Flags::NONE);
        assert_eq!(e.syn_flags(false, EcnSetting::Off), Flags::NONE);
        e.on_peer_syn(Flags::SYN | Flags::ACK | Flags::ECE, EcnSetting::Request);
        assert!(e.ok());
        e.on_peer_syn(Flags::SYN | Flags::ACK | Flags::ECE | Flags::CWR, EcnSetting::Request);
        assert!(!e.ok(), "a SYN-ACK with both flags is not an agreement");
        e.on_peer_syn(Flags::SYN | Flags::ACK | Flags::ECE, EcnSetting::Agree);
        assert!(!e.ok(), "agreed only if we asked");
        e.on_peer_syn(Flags::SYN | Flags::ECE, EcnSetting::Agree);
        assert!(!e.ok(), "a SYN needs both flags");
        e.on_peer_syn(Flags::SYN | Flags::ECE | Flags::CWR, EcnSetting::Off);
        assert!(!e.ok(), "a host with ECN off does not agree");
        let e = agreed();
        assert!(e.ok());
        assert_eq!(e.syn_flags(true, EcnSetting::Agree), Flags::ECE);
        assert_eq!(EcnState::default().syn_flags(true, EcnSetting::Request), Flags::NONE);
    }

    #[test]
    fn new_data_is_ect_and_carries_the_queued_cwr_once() {
        let mut e = agreed();
        assert_eq!(e.data(EcnSender::NewData, 0, false), (Ecn::NotEct, Flags::NONE), "pure ACKs are not ECT");
        e.queue_cwr();
        assert_eq!(e.data(EcnSender::NewData, 100, true), (Ecn::NotEct, Flags::NONE), "nor retransmissions, in Linux");
        assert_eq!(e.data(EcnSender::NewData, 100, false), (Ecn::Ect0, Flags::CWR));
        assert_eq!(e.data(EcnSender::NewData, 100, false), (Ecn::Ect0, Flags::NONE));
        e.queue_cwr();
        assert_eq!(e.data(EcnSender::AllData, 100, true), (Ecn::Ect0, Flags::CWR), "ns-2 marks retransmissions too");
        let mut off = EcnState::default();
        off.queue_cwr();
        assert_eq!(off.data(EcnSender::AllData, 100, false), (Ecn::NotEct, Flags::NONE));
    }

    #[test]
    fn the_receiver_echoes_from_a_ce_mark_until_cwr() {
        let mut e = agreed();
        assert!(!e.on_data(Flags::ACK, Ecn::Ect0));
        assert_eq!(e.echo(), Flags::NONE);
        assert!(e.on_data(Flags::ACK, Ecn::Ce));
        assert!(!e.on_data(Flags::ACK, Ecn::Ce), "only the first mark of an echo hurries the ACK");
        assert!(!e.on_data(Flags::ACK, Ecn::Ect0));
        assert_eq!(e.echo(), Flags::ECE, "the echo lasts until CWR");
        assert!(!e.on_data(Flags::ACK | Flags::CWR, Ecn::Ect0));
        assert_eq!(e.echo(), Flags::NONE);
        assert!(e.on_data(Flags::ACK | Flags::CWR, Ecn::Ce), "CWR then a new mark on the same segment");
        assert_eq!(e.echo(), Flags::ECE);
        assert!(e.echoed(Flags::ACK | Flags::ECE) && !e.echoed(Flags::SYN | Flags::ACK | Flags::ECE));
        let mut off = EcnState::default();
        assert!(!off.on_data(Flags::ACK, Ecn::Ce));
        assert_eq!(off.echo(), Flags::NONE);
    }

    #[test]
    fn a_segment_not_ect_after_ect_ones_is_acked_at_once_as_a_retransmission() {
        let mut e = agreed();
        assert!(!e.on_data(Flags::ACK, Ecn::NotEct), "nothing ECN-capable seen yet");
        assert!(!e.on_data(Flags::ACK, Ecn::Ect0));
        assert!(e.on_data(Flags::ACK, Ecn::NotEct), "Linux: probably a retransmission");
        assert_eq!(e.echo(), Flags::NONE, "which is no mark");
    }
}
