//! The connection: the RFC 9293 state machine tying together the receiver, the sender's
//! scoreboard, congestion control, loss recovery and the timers.

mod input;
mod output;
mod timers;

use crate::cc::{Cc, Window};
use crate::ecn::{EcnSender, EcnState};
use crate::rack::Rack;
use crate::recovery::Loss;
use crate::recv::Receiver;
use crate::rtt::Rto;
use crate::send::Scoreboard;
use crate::{sndmem, Flags, Segment, TcpConfig};
use std::sync::Arc;
use timers::Xmit;
use units::{Dur, Opt, Time};

/// Bytes the timestamp option takes from every segment (padded, RFC 7323).
const TIMESTAMP_OPTION: u64 = 12;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    SynSent,
    SynReceived,
    Established,
    FinWait1,
    FinWait2,
    Closing,
    TimeWait,
    CloseWait,
    LastAck,
    Closed,
}

impl State {
    /// States in which data or a FIN may still be (re)transmitted.
    fn can_send(self) -> bool {
        matches!(self, State::Established | State::CloseWait | State::FinWait1 | State::Closing | State::LastAck)
    }
}

/// What happened in one call, for the driver to turn into application events.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Notify {
    /// Became Established in this call.
    pub established: bool,
    /// New in-order payload bytes made available to the app.
    pub delivered: u64,
    /// The peer's FIN was received in order (end of stream) in this call.
    pub peer_fin: bool,
    /// Bytes of our data newly acknowledged (send buffer space freed).
    pub acked: u64,
    /// The send buffer gained room, by data acknowledged or by growing: a
    /// writer waiting for space looks again.
    pub space: bool,
    /// Reached Closed/TimeWait in this call; the endpoint can be discarded.
    pub closed: bool,
    /// Connection reset (RST received) or aborted (too many retransmissions).
    pub reset: bool,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct TcpStats {
    pub segs_sent: u64,
    pub data_segs_sent: u64,
    /// Payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    /// Retransmitted segments (SYN, data and FIN); 32 bits, as the counts below:
    /// four billion retransmissions, terabytes resent, are beyond any run.
    pub retransmits: u32,
    pub retrans_bytes: u64,
    /// Loss episodes started by duplicate ACKs or SACK (Tahoe: fast retransmits).
    /// 32 bits, as the timeouts: at most one a round trip, they cannot wrap in
    /// any run (and the state of a connection stays small).
    pub fast_recoveries: u32,
    /// Retransmission timer expirations (handshake included).
    pub rtos: u32,
    /// Tail loss probes sent (counted in `retransmits` too when they resend data).
    pub loss_probes: u32,
    pub dup_acks_rcvd: u64,
    pub segs_rcvd: u64,
    /// Payload bytes of ours acknowledged.
    pub bytes_acked: u64,
    /// Pure ACKs sent (no payload, SYN or FIN).
    pub acks_sent: u64,
}

/// Linux's cwnd-validation bookkeeping (tcp_cwnd_validate): the window may only grow
/// when the sender actually used it (RFC 7661 §4.3 spirit), else app-limited flows
/// would inflate cwnd without ever testing it. Beside it, whether the writer is held
/// back by the send buffer instead.
#[derive(Clone, Copy, Debug, Default)]
struct CwndUsage {
    limited: bool,
    /// The last write took less than it was offered: a writer waits for
    /// space (Linux's `SOCK_NOSPACE`).
    writer_waiting: bool,
    max_out: u64,
    until: u64,
}

impl CwndUsage {
    fn allows_growth(&self, w: &Window) -> bool {
        if w.in_slow_start() {
            w.cwnd < 2 * self.max_out
        } else {
            self.limited
        }
    }
}

/// A TCP endpoint (sans-IO): feed it segments and timer ticks, collect segments to send.
///
/// Thousands of endpoints take turns, so a segment's arrival finds its
/// endpoint out of cache and pays a miss for each cache line it touches.
/// The fields are therefore laid out in declaration order (`repr(C)`),
/// grouped by who touches them: the receiver (whose seldom-read and
/// data-only fields lead), then what every segment in or out reads, then
/// the scoreboard (what every ACK reads first, then what only one that
/// acknowledges or SACKs data touches) and congestion control, which only
/// a sender's ACKs move. A pure ACK at a sender and a data segment at a
/// receiver each leave a few lines at one end untouched.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct Tcp {
    rcv: Receiver,
    /// Shared by the endpoints of one host or host group: a copy in each
    /// would be most of an idle connection's memory.
    cfg: Arc<TcpConfig>,
    /// 1 + bytes written by the app; the FIN (if any) has this sequence number.
    write_end: u64,
    snd_wnd: u64,
    snd_wl1: u64,
    snd_wl2: u64,
    /// The transmit timer: when, and for what (apart, so that the kind's byte packs
    /// with the other small fields; see [`Tcp::xmit`]).
    xmit_at: Opt<Time>,
    /// A tail loss probe is outstanding until snd_una reaches this (`tlp_high_seq`), and
    /// it was a retransmission (`tlp_retrans`).
    tlp_high: Opt<u64>,
    /// When the SYN (or SYN-ACK) last left during the handshake, and data after it.
    last_send: Time,
    /// Current send-buffer size (fixed, or autotuned up to `cfg.snd_buf`).
    sndbuf: u64,
    /// Time of the call being served (for the TSval of segments built in it).
    clock: Time,
    w: Window,
    usage: CwndUsage,
    rtt: Rto,
    rack: Rack,
    rec: Loss,
    stats: TcpStats,
    mss: u32,
    /// Consecutive data retransmission timeouts without progress.
    rto_count: u32,
    /// The peer's latest TSval to echo.
    ts_recent: u32,
    /// SYN (or SYN-ACK) timeouts, towards `syn_retries` (16 bits: with the backoff
    /// capped at `max_rto`, more than anyone waits for).
    syn_rtx: u16,
    /// SYN or SYN-ACK retransmissions of any cause (Linux's `total_retrans` then).
    syn_resent: u16,
    state: State,
    sack_ok: bool,
    /// ECN agreed, a CWR owed, a mark being echoed (one byte).
    ecn: EcnState,
    fin_queued: bool,
    fin_sent: bool,
    xmit_kind: Xmit,
    /// RFC 7323 timestamps agreed.
    ts_ok: bool,
    tlp_retrans: bool,
    sb: Scoreboard,
    cc: Cc,
}

impl Tcp {
    fn new(cfg: &Arc<TcpConfig>, state: State) -> Tcp {
        let mss = cfg.mss.max(1);
        let mut sb = Scoreboard::new(1);
        if cfg.loss_response == crate::LossResponse::Ns3 {
            sb.keep_retransmissions_when_sacked();
        }
        if cfg.packet_window {
            sb.count_packets(mss as u64);
        }
        Tcp {
            cfg: Arc::clone(cfg),
            state,
            mss,
            sack_ok: false,
            ecn: EcnState::default(),
            sb,
            write_end: 1,
            fin_queued: false,
            fin_sent: false,
            snd_wnd: 0,
            snd_wl1: 0,
            snd_wl2: 0,
            w: Window { cwnd: cfg.initial_cwnd.max(1) as u64 * mss as u64, ssthresh: cfg.initial_ssthresh, mss: mss as u64 },
            cc: Cc::new(cfg.algorithm, cfg.byte_counting, cfg.hystart),
            rec: Loss::new(cfg, false),
            rtt: Rto::new(cfg.rto_estimator, cfg.rto_tick, cfg.initial_rto, cfg.min_rto, cfg.max_rto),
            xmit_at: Opt::NONE,
            xmit_kind: Xmit::Retransmit,
            rack: Rack::default(),
            tlp_high: Opt::NONE,
            tlp_retrans: false,
            rto_count: 0,
            syn_rtx: 0,
            syn_resent: 0,
            last_send: Time::ZERO,
            usage: CwndUsage::default(),
            sndbuf: if cfg.snd_buf_auto { cfg.snd_buf_initial.min(cfg.snd_buf) } else { cfg.snd_buf },
            ts_ok: false,
            ts_recent: 0,
            clock: Time::ZERO,
            rcv: Receiver::new(cfg.rcv_buf, cfg.delack_timeout),
            stats: TcpStats::default(),
        }
    }

    /// Active open: returns the endpoint and pushes the SYN.
    pub fn connect(cfg: &Arc<TcpConfig>, now: Time, out: &mut Vec<Segment>) -> Tcp {
        let mut t = Tcp::new(cfg, State::SynSent);
        t.send_syn(now, out, false);
        t
    }

    /// Passive open from a received SYN: returns the endpoint and pushes the SYN-ACK.
    pub fn accept(cfg: &Arc<TcpConfig>, now: Time, syn: &Segment, out: &mut Vec<Segment>) -> Tcp {
        debug_assert!(syn.flags.contains(Flags::SYN), "accept needs a SYN");
        let mut t = Tcp::new(cfg, State::SynReceived);
        t.on_peer_syn(syn);
        t.send_syn(now, out, false);
        t
    }

    /// App writes `bytes`; returns how many the send buffer took. Allowed before
    /// Established (queued); refused after `close`.
    pub fn write(&mut self, now: Time, bytes: u64, out: &mut Vec<Segment>) -> u64 {
        self.clock = now;
        let open = matches!(self.state, State::SynSent | State::SynReceived | State::Established | State::CloseWait);
        if self.fin_queued || !open {
            return 0;
        }
        let n = if self.cfg.snd_buf_auto {
            self.write_skbs(now, bytes, out)
        } else {
            let n = bytes.min(self.send_space());
            self.write_end += n;
            n
        };
        self.usage.writer_waiting = n < bytes;
        if n > 0 {
            self.transmit(now, out);
        }
        n
    }

    /// Linux's write loop (`tcp_sendmsg_locked`): fill the last unsent skb to
    /// the size goal, start a new one only while the buffer is not full, and
    /// push each skb filled (`tcp_push_one`), so that what the window lets go
    /// at once is already charged as sent when the next skb is started.
    fn write_skbs(&mut self, now: Time, bytes: u64, out: &mut Vec<Segment>) -> u64 {
        let start = self.write_end;
        let mut left = bytes;
        while left > 0 {
            let goal = self.size_goal();
            let tail = self.unsent() % goal;
            let copy = if tail > 0 {
                (goal - tail).min(left)
            } else if self.sndmem() < self.sndbuf {
                goal.min(left)
            } else {
                break;
            };
            self.write_end += copy;
            left -= copy;
            if self.unsent().is_multiple_of(goal) {
                self.transmit(now, out);
            }
        }
        self.write_end - start
    }

    /// Free send-buffer space: what a write takes now if nothing is sent
    /// meanwhile. A fixed buffer counts payload bytes (written - acked); an
    /// autotuned one what Linux charges for them (see [`crate::sndmem`]),
    /// and a write may take more, up to the end of an skb.
    pub fn send_space(&self) -> u64 {
        self.sndbuf.saturating_sub(self.sndmem())
    }

    /// Whether a writer blocked on a full buffer should be woken: Linux wakes it
    /// once the free space is at least half of what is queued, i.e. a third of
    /// the buffer (`sk_stream_is_writeable`), not at the first freed byte.
    pub fn writable(&self) -> bool {
        let queued = self.sndmem();
        self.sndbuf.saturating_sub(queued) >= queued / 2
    }

    /// Whether a writer that keeps the buffer full should write now: an
    /// autotuned (Linux) buffer wakes it when [`Tcp::writable`]; a fixed one
    /// takes data as soon as any space is free (ns-3's bulk sender).
    pub fn refill_due(&self) -> bool {
        if self.cfg.snd_buf_auto {
            self.writable()
        } else {
            self.send_space() > 0
        }
    }

    /// What the queued data costs against the buffer: its payload, and with
    /// autotuning the heads of the skbs holding it (`sk_wmem_queued`).
    fn sndmem(&self) -> u64 {
        let sent = self.sb.nxt().min(self.write_end) - self.sb.una().min(self.write_end);
        let unsent = self.unsent();
        if !self.cfg.snd_buf_auto {
            return sent + unsent;
        }
        sndmem::charge(sent, unsent, self.tso_bytes(), self.size_goal())
    }

    /// What one sent skb holds (`tcp_tso_autosize` from the pacing rate).
    pub(super) fn tso_bytes(&self) -> u64 {
        let mss = self.mss as u64;
        let srtt_us = self.rtt.srtt().map_or(0, |d| d.0 / 1_000);
        let min_rtt_us = self.rack.min_rtt().map_or(srtt_us, |d| d.0 / 1_000);
        let out_segs = self.sb.outstanding().div_ceil(mss);
        let rate = sndmem::pacing_rate(mss, (self.w.cwnd / mss).max(out_segs), self.w.ssthresh / mss, srtt_us);
        sndmem::tso_segs(rate, min_rtt_us, mss) * mss
    }

    pub(super) fn size_goal(&self) -> u64 {
        sndmem::size_goal(self.snd_wnd, self.mss as u64)
    }

    /// Current send-buffer size in bytes.
    pub fn send_buffer(&self) -> u64 {
        self.sndbuf
    }

    /// Linux `tcp_new_space`: when an ACK leaves at least `least_room` of the
    /// window unsent, grow the buffer to twice the window (at least twice the
    /// initial window); true if it grew. It never shrinks. Linux looks only
    /// while a writer waits for space, but its small-queue limit (TSQ) keeps
    /// the window from filling at once where here it fills within the ACK's
    /// own call; on an ACK of new data, growing whenever the window is not
    /// full matches what Linux's rate-limited senders do (their time blocked
    /// on the buffer and the bytes they send, in the emulator).
    fn expand_sndbuf(&mut self, least_room: u64) -> bool {
        let before = self.sndbuf;
        if self.w.cwnd.saturating_sub(self.sb.pipe()) >= least_room {
            self.grow_sndbuf();
        }
        self.sndbuf > before
    }

    /// The expansion itself (`tcp_sndbuf_expand`); at establishment Linux
    /// applies it unconditionally (`tcp_init_buffer_space`): twice the larger
    /// of cwnd and the initial window, in segments, each budgeted as one skb
    /// (see [`crate::sndmem`]).
    pub(super) fn grow_sndbuf(&mut self) {
        if !self.cfg.snd_buf_auto {
            return;
        }
        let mss = self.mss as u64;
        let clamp = mss + if self.ts_ok { TIMESTAMP_OPTION } else { 0 };
        let segs = (self.w.cwnd / mss).max(self.cfg.initial_cwnd.max(1) as u64);
        let want = (2 * segs * sndmem::per_segment(clamp, mss)).min(self.cfg.snd_buf);
        self.sndbuf = self.sndbuf.max(want);
    }

    /// App closes: a FIN follows all written data (on the last data segment if unsent).
    pub fn close(&mut self, now: Time, out: &mut Vec<Segment>) {
        self.clock = now;
        if self.fin_queued {
            return;
        }
        match self.state {
            State::Established => self.state = State::FinWait1,
            State::CloseWait => self.state = State::LastAck,
            // The FIN waits for the handshake (RFC 9293 §3.10.4 queues it in SYN-RECEIVED).
            State::SynSent | State::SynReceived => {}
            _ => return,
        }
        self.fin_queued = true;
        // Linux's `tcp_fin` in FIN-WAIT: a FIN that arrives now is ACKed at once.
        self.rcv.set_fin_delays_ack(false);
        self.transmit(now, out);
    }

    /// Abort: send RST (unless no SYN-ACK was seen yet), go to Closed.
    pub fn abort(&mut self, now: Time, out: &mut Vec<Segment>) {
        self.clock = now;
        match self.state {
            State::Closed => return,
            State::SynSent => {}
            _ => {
                out.push(self.segment(self.sb.nxt(), 0, Flags::RST | Flags::ACK, false));
                self.stats.segs_sent += 1;
            }
        }
        self.enter_closed();
    }

    pub fn on_segment(&mut self, now: Time, seg: &Segment, out: &mut Vec<Segment>) -> Notify {
        let mut n = Notify::default();
        if self.state == State::Closed {
            return n;
        }
        self.clock = now;
        // RFC 7323 §4.3, simplified: echo the TSval of the latest segment
        // that is not beyond what we expect next.
        if let Some((tsval, _)) = seg.ts {
            if seg.seq <= self.rcv.rcv_nxt() || seg.flags.contains(Flags::SYN) {
                self.ts_recent = tsval;
            }
        }
        self.stats.segs_rcvd += 1;
        if seg.flags.contains(Flags::RST) {
            self.on_rst(seg, &mut n);
            return n;
        }
        let syn = seg.flags.contains(Flags::SYN);
        let ack = seg.flags.contains(Flags::ACK);
        match self.state {
            State::SynSent => {
                self.on_segment_syn_sent(now, seg, out, &mut n);
                return n;
            }
            State::SynReceived => {
                if syn && !ack {
                    // The peer retransmitted its SYN: our SYN-ACK was lost. Send it again
                    // and restart the timer (Linux `tcp_check_req`), so that the timer
                    // does not resend it once more right after.
                    self.syn_resent = self.syn_resent.saturating_add(1);
                    self.send_syn(now, out, true);
                    return n;
                }
                if !ack || seg.ack != 1 {
                    return n;
                }
                self.establish(now, seg, &mut n);
                if syn {
                    // Simultaneous open: the peer's SYN-ACK is a duplicate SYN; ACK it.
                    self.rcv.force_ack();
                    self.transmit(now, out);
                    self.flush_ack(now, out);
                    return n;
                }
            }
            _ if syn => {
                // Duplicate SYN-ACK: our handshake ACK was lost.
                self.rcv.force_ack();
                self.flush_ack(now, out);
                return n;
            }
            _ => {}
        }
        if !ack {
            return n;
        }
        if self.process_ack(now, seg, out, &mut n) {
            self.process_data(now, seg, &mut n);
        }
        self.transmit(now, out);
        self.flush_ack(now, out);
        // Linux (`tcp_data_snd_check`) looks at the buffer after every pure
        // ACK while a writer waits for space, a duplicate too (a data segment
        // that acknowledges nothing takes its fast path, which does not): a
        // recovery that has sent all that was written grows the buffer, and
        // the writer refills it. Linux counts the window in packets, so on
        // such an ACK it takes a whole segment of room left unsent, not the
        // fraction PRR leaves.
        let grew = if n.acked > 0 { self.expand_sndbuf(1) } else { self.usage.writer_waiting && seg.len == 0 && self.expand_sndbuf(self.mss as u64) };
        n.space = n.acked > 0 || grew;
        n
    }

    /// Driver tick at or after `poll_at`; early or spurious calls do nothing.
    pub fn on_timer(&mut self, now: Time, out: &mut Vec<Segment>) -> Notify {
        let mut n = Notify::default();
        if self.state == State::Closed {
            return n;
        }
        self.clock = now;
        if self.rcv.delack_deadline().is_some_and(|t| t <= now) {
            self.rcv.on_delack_timer();
            self.flush_ack(now, out);
        }
        if let Some((_, kind)) = self.xmit().filter(|&(t, _)| t <= now) {
            self.on_xmit_timer(now, kind, out, &mut n);
        }
        n
    }

    /// Earliest deadline: the transmit timer or the delayed ACK.
    pub fn poll_at(&self) -> Option<Time> {
        if self.state == State::Closed {
            return None;
        }
        match (self.xmit_at.get(), self.rcv.delack_deadline()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    pub fn state(&self) -> State {
        self.state
    }
    pub fn stats(&self) -> &TcpStats {
        &self.stats
    }
    pub fn cwnd(&self) -> u64 {
        self.w.cwnd
    }
    pub fn ssthresh(&self) -> u64 {
        self.w.ssthresh
    }
    pub fn srtt(&self) -> Option<Dur> {
        self.rtt.srtt()
    }
    /// Current retransmission timeout, backoff included.
    pub fn rto(&self) -> Dur {
        self.rtt.rto()
    }
    /// RFC 6675 pipe: bytes believed to be in the network.
    pub fn bytes_in_flight(&self) -> u64 {
        self.sb.pipe()
    }
    /// Effective MSS (minimum of ours and the peer's).
    pub fn mss(&self) -> u32 {
        self.mss
    }
    /// Both ends agreed on SACK.
    pub fn sack_enabled(&self) -> bool {
        self.sack_ok
    }
    /// Both ends agreed on timestamps.
    pub fn timestamps_enabled(&self) -> bool {
        self.ts_ok
    }
    /// Both ends agreed on ECN.
    pub fn ecn_enabled(&self) -> bool {
        self.ecn.ok()
    }
    /// Which data segments go out ECN-capable: ns-2's rules under its loss response.
    fn ecn_sender(&self) -> EcnSender {
        if self.cfg.loss_response == crate::LossResponse::Ns2 {
            EcnSender::AllData
        } else {
            EcnSender::NewData
        }
    }
    /// The TSval clock: milliseconds (Linux's tcp_time_stamp granularity).
    pub(crate) fn tsval(now: Time) -> u32 {
        (now.0 / 1_000_000) as u32
    }
    /// In fast recovery (Reno, NewReno or SACK)?
    pub fn in_recovery(&self) -> bool {
        self.rec.phase() == crate::recovery::Phase::Recovery
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    /// What only a receiver's data touches leads the endpoint, what only a
    /// sender's ACKs touch (the scoreboard's tail, congestion control)
    /// ends it, so that each visit leaves the lines at one end alone.
    #[test]
    fn the_receiver_leads_an_endpoint_and_congestion_control_ends_it() {
        assert_eq!(offset_of!(Tcp, rcv), 0);
        assert_eq!(offset_of!(Tcp, sb) + size_of::<Scoreboard>(), offset_of!(Tcp, cc));
        assert_eq!(offset_of!(Tcp, cc) + size_of::<Cc>(), size_of::<Tcp>());
    }
}
