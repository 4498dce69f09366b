//! Incoming side of the connection: handshake, ACK processing, data and FIN, RST, and
//! the retransmission timer.

use super::{Notify, State, Tcp, Xmit};
use crate::cc::{CongestionControl, Sample, Window};
use crate::ecn::EcnSetting;
use crate::recovery::{AckInfo, Loss};
use crate::rtt::Samples;
use crate::send::Sacked;
use crate::{Ecn, Flags, LossResponse, SackBlocks, Segment, SynOptions};
use units::{Dur, Opt, Time};

/// MSS assumed when the peer's SYN has no MSS option (RFC 9293 §3.7.1).
const DEFAULT_MSS: u32 = 536;

impl Tcp {
    pub(super) fn send_syn(&mut self, now: Time, out: &mut Vec<Segment>, retransmit: bool) {
        let synack = self.state == State::SynReceived;
        let (flags, ack, sack) = if synack { (Flags::SYN | Flags::ACK, self.rcv.rcv_nxt(), self.sack_ok) } else { (Flags::SYN, 0, self.cfg.sack) };
        let flags = flags | self.ecn.syn_flags(synack, EcnSetting::of(&self.cfg));
        // A SYN offers timestamps if configured; a SYN-ACK echoes them if agreed.
        let ts = if synack { self.ts_ok } else { self.cfg.timestamps };
        let wnd = self.syn_window(synack);
        out.push(Segment {
            seq: 0,
            ack,
            len: 0,
            flags,
            wnd,
            sack: SackBlocks::default(),
            syn_opts: Some(SynOptions { mss: self.cfg.mss, sack_permitted: sack, timestamps: ts }),
            ts: ts.then(|| (Self::tsval(now), self.ts_recent)),
            retransmit,
            ecn: Ecn::NotEct,
        });
        self.stats.segs_sent += 1;
        self.stats.retransmits += retransmit as u32;
        self.last_send = now;
        self.arm(now, self.rtt.rto(), Xmit::Retransmit);
    }

    /// The window a SYN-ACK (`synack`) or SYN offers, not scaled: what the
    /// starting buffer holds in whole segments of the MSS it announces, less
    /// the timestamps' 12 bytes once they are agreed, which only a SYN-ACK
    /// knows (Linux `tcp_openreq_init_rwin`; `tcp_connect_init` has no echo
    /// yet, so a SYN offers 44 segments of 1460 bytes where a SYN-ACK offers
    /// 45 of 1448).
    fn syn_window(&self, synack: bool) -> u64 {
        if !self.cfg.rcv_buf_auto {
            return self.cfg.rcv_buf;
        }
        let ts = synack && self.ts_ok;
        let mss = self.cfg.mss.saturating_sub(if ts { super::TIMESTAMP_OPTION as u32 } else { 0 });
        crate::rcv_space::initial_window(mss, self.cfg.rcv_buf_initial, self.cfg.rcv_buf)
    }

    pub(super) fn on_peer_syn(&mut self, syn: &Segment) {
        let (peer_mss, peer_sack, peer_ts) = syn.syn_opts.map_or((DEFAULT_MSS, false, false), |o| (o.mss, o.sack_permitted, o.timestamps));
        self.sack_ok = self.cfg.sack && peer_sack; // RFC 2018 §2: only if both offered
        self.ts_ok = self.cfg.timestamps && peer_ts; // RFC 7323 §3.2: likewise
        self.ecn.on_peer_syn(syn.flags, EcnSetting::of(&self.cfg));
        // The MSS option leaves out TCP options: with timestamps, full segments
        // carry 12 bytes less (Linux's 1448 for an MSS of 1460).
        let opts = if self.ts_ok { super::TIMESTAMP_OPTION as u32 } else { 0 };
        self.mss = self.cfg.mss.min(peer_mss).saturating_sub(opts).max(1);
        if self.cfg.packet_window {
            self.sb.count_packets(self.mss as u64);
        }
        if let Some((tsval, _)) = syn.ts {
            self.ts_recent = tsval;
        }
        self.rcv.set_quickack(self.cfg.quickack);
        self.rcv.set_ack_bytes(self.cfg.ack_bytes);
        self.rcv.set_ack_pushed(self.cfg.ack_pushed);
        self.rcv.set_fin_delays_ack(self.cfg.delayed_fin_ack && !self.fin_queued);
        self.rcv.set_ooo_shrinks_window(self.cfg.ooo_shrinks_window);
        if self.cfg.rcv_buf_auto {
            self.rcv.set_autotuning(self.cfg.rcv_buf_initial);
        }
        // A SYN-SENT end offered its SYN's window; a listener offers its SYN-ACK's.
        let offered = self.syn_window(self.state != State::SynSent);
        self.rcv.start(syn.seq, self.mss, self.cfg.ack_every, self.sack_ok, self.ts_ok, offered);
        self.snd_wnd = syn.wnd;
        self.snd_wl1 = syn.seq;
        self.snd_wl2 = 0;
    }

    pub(super) fn on_segment_syn_sent(&mut self, now: Time, seg: &Segment, out: &mut Vec<Segment>, n: &mut Notify) {
        if !seg.flags.contains(Flags::SYN) {
            return;
        }
        self.on_peer_syn(seg);
        if seg.flags.contains(Flags::ACK) {
            if seg.ack != 1 {
                return;
            }
            self.establish(now, seg, n);
            // Third ACK of the handshake; data written meanwhile rides on it.
            self.rcv.force_ack();
            self.transmit(now, out);
            self.flush_ack(now, out);
        } else {
            // Simultaneous open (RFC 9293 §3.5): SYN-RECEIVED, answer with SYN-ACK.
            self.state = State::SynReceived;
            self.send_syn(now, out, false);
        }
    }

    /// The handshake completed with `seg` (the SYN-ACK, or the ACK of ours).
    pub(super) fn establish(&mut self, now: Time, seg: &Segment, n: &mut Notify) {
        let mss = self.mss as u64;
        // RFC 5681 §3.1 asks for an initial window of 1 after a lost SYN or SYN-ACK;
        // Linux (`tcp_init_transfer`), with RFC 6298's 1 s initial RTO, only after more
        // than one retransmission, and it restores ssthresh (`tcp_init_metrics`).
        // ns-2 after one (`tcp.cc` `timeout`, `bugfix_ss_`), and keeps the ssthresh its
        // timeout cut from the handshake's one-packet window: 2 packets.
        let ns2 = self.cfg.loss_response == LossResponse::Ns2 && self.syn_resent > 0;
        let iw = if self.syn_resent > 1 || ns2 { mss } else { self.cfg.initial_cwnd.max(1) as u64 * mss };
        let ssthresh = if ns2 { 2 * mss } else { self.cfg.initial_ssthresh };
        self.w = Window { cwnd: iw, ssthresh, mss };
        self.grow_sndbuf();
        self.rec = Loss::new(&self.cfg, self.sack_ok);
        if self.syn_resent == 0 {
            self.rtt.sample_syn(self.last_send, now, self.sb.nxt());
        } else if let Some(echo) = self.ts_echo(now, seg).filter(|_| self.rtt.samples_echoes()) {
            // Linux measures the handshake from the timestamp the peer echoed.
            self.rtt.sample_syn(now - echo, now, self.sb.nxt());
        } else {
            self.rtt.syn_timed_out(); // RFC 6298 5.7; Karn: no sample
        }
        self.xmit_at = Opt::NONE;
        self.last_send = now;
        self.state = if self.fin_queued { State::FinWait1 } else { State::Established };
        n.established = true;
    }

    pub(super) fn on_rst(&mut self, seg: &Segment, n: &mut Notify) {
        let ok = match self.state {
            State::SynSent => seg.flags.contains(Flags::ACK) && seg.ack == 1,
            _ => self.rcv.in_window(seg.seq),
        };
        if ok {
            self.enter_closed();
            n.reset = true;
            n.closed = true;
        }
    }

    /// Returns false if the segment must be dropped.
    pub(super) fn process_ack(&mut self, now: Time, seg: &Segment, out: &mut Vec<Segment>, n: &mut Notify) -> bool {
        let ack = seg.ack;
        let una = self.sb.una();
        if ack > self.sb.nxt() {
            self.rcv.force_ack(); // acks data never sent: ACK and drop (RFC 9293 §3.10.7.4)
            return false;
        }
        if ack < una {
            return true; // old ACK: ignore the ACK field
        }
        let prev_wnd = self.snd_wnd;
        if self.snd_wl1 < seg.seq || (self.snd_wl1 == seg.seq && self.snd_wl2 <= ack) {
            self.snd_wnd = seg.wnd;
            self.snd_wl1 = seg.seq;
            self.snd_wl2 = ack;
        }
        let sack = self.rec.uses_sack();
        let undelivered_before = self.sb.undelivered();
        let prior_fack = self.sb.high_sacked();
        let sacked = if sack && !seg.sack.is_empty() { self.sb.apply_sack(&seg.sack, &mut self.rack, now) } else { Sacked::default() };
        let newly_sacked = sacked.bytes;

        let mut acked = 0;
        let mut samples = Samples { sacked_first: sacked.first, sacked_last: sacked.last, ..Samples::default() };
        if ack > una {
            let a = self.sb.ack(ack, prior_fack, &mut self.rack, now);
            acked = a.bytes;
            (samples.acked_first, samples.acked_last) = (a.first, a.rtt_from);
            samples.ts_echo = self.ts_echo(now, seg);
            self.rto_count = 0;
            let data = ack.min(self.write_end) - una.min(self.write_end);
            n.acked += data;
            self.stats.bytes_acked += data;
        }
        (samples.una, samples.nxt) = (self.sb.una(), self.sb.nxt());
        let ece = self.ecn.echoed(seg.flags);
        let echo = self.rec.echo_timer(ece, acked > 0, &self.sb, &self.w);
        if echo.back_off {
            self.rtt.back_off();
        }
        if let Some(rtt) = self.rtt.on_ack(now, ack, acked > 0, &samples, echo.keep_backoff) {
            self.rack.on_rtt(rtt);
            let s = Sample { rtt, una: self.sb.una(), nxt: self.sb.nxt(), srtt: self.rtt.srtt() };
            self.cc.on_rtt_sample(&mut self.w, now, &s);
        }
        let not_dup = acked > 0 || seg.len > 0 || seg.wnd != prev_wnd;
        self.process_probe_ack(now, ack, acked > 0, newly_sacked > 0, not_dup);
        let mut reorder_at = None;
        let lost_before = self.sb.lost();
        let ns3 = self.cfg.loss_response == LossResponse::Ns3;
        if sack && self.cfg.rack {
            if self.rack.take_advanced() {
                reorder_at = self.detect_loss_by_rack(now);
            }
        } else if sack {
            let mss = self.mss as u64;
            if !ns3 {
                self.sb.detect_lost_retransmissions(self.cfg.dupthresh as u64 * mss);
            }
            self.sb.mark_lost_by_sack(self.cfg.dupthresh, mss);
        }
        let dup = if sack {
            // ns-3 counts any ACK that SACKs new data, whether or not it also advances.
            newly_sacked > 0 && (ack == una || ns3)
        } else {
            // RFC 5681 §2; a window *decrease* (data held out of order) still counts.
            ack == una && seg.len == 0 && !seg.flags.contains(Flags::FIN) && self.sb.outstanding() > 0 && seg.wnd <= prev_wnd
        };
        self.stats.dup_acks_rcvd += dup as u64;

        let info = AckInfo {
            acked,
            dup,
            delivered: undelivered_before.saturating_sub(self.sb.undelivered()),
            newly_lost: self.sb.lost() > lost_before,
            cwnd_limited: self.usage.allows_growth(&self.w),
            ece,
            snd_wnd: self.snd_wnd,
        };
        let o = self.rec.on_ack(now, &info, &mut self.sb, &mut self.w, &mut self.cc);
        self.stats.fast_recoveries += o.entered as u32;
        if o.entered || o.ecn_response {
            self.ecn.queue_cwr(); // RFC 3168 §6.1.2: CWR after any reduction
        }
        if o.entered && self.cfg.loss_response == LossResponse::Ns2 {
            // ns-2's reset_rtx_timer(1, 0) at a fast retransmit.
            self.rtt.cancel_timing();
            self.arm(now, self.rtt.rto(), Xmit::Retransmit);
        }
        if o.entered {
            self.tlp_high = Opt::NONE;
        }
        if let Some(at) = reorder_at {
            // RACK waits on a segment: the reordering timer, not the RTO (Linux clears
            // FLAG_SET_XMIT_TIMER).
            self.arm_reorder(now, at);
        } else if (acked > 0 && o.restart_timer) || (!ns3 && samples.sacked_first.is_some_and(|t| self.sb.head_sent().is_some_and(|h| t < h))) {
            // RFC 6298 5.2/5.3, but not for a partial ACK the recovery says leaves the
            // timer alone; Linux also for a SACK of data sent before the oldest segment
            // was last sent, and sets the probe instead where it may.
            if ns3 && self.sb.outstanding() > 0 {
                self.rtt.end_backoff(); // ns-3's NewAck
            }
            self.set_xmit_timer(now);
        }
        if o.retransmit_head {
            if let Some(idx) = self.sb.head_retransmittable() {
                self.send_retransmission(idx, now, out);
            }
        }
        if o.send_next {
            self.send_next_now(now, out);
        }
        if acked > 0 && self.fin_sent && self.sb.una() > self.write_end {
            self.on_fin_acked(n);
        }
        true
    }

    /// Now minus the TSval the peer echoed (Linux's fallback RTT sample, in ms), if
    /// timestamps are on and it echoed one.
    pub(super) fn ts_echo(&self, now: Time, seg: &Segment) -> Option<Dur> {
        let (_, tsecr) = seg.ts.filter(|&(_, e)| self.ts_ok && e != 0)?;
        let ms = Self::tsval(now).wrapping_sub(tsecr).max(1);
        (ms < 1 << 31).then(|| Dur::from_millis(ms as u64))
    }

    pub(super) fn on_fin_acked(&mut self, n: &mut Notify) {
        match self.state {
            State::FinWait1 => self.state = State::FinWait2,
            State::Closing => {
                self.state = State::TimeWait;
                n.closed = true;
            }
            State::LastAck => {
                self.enter_closed();
                n.closed = true;
            }
            _ => {}
        }
    }

    pub(super) fn process_data(&mut self, now: Time, seg: &Segment, n: &mut Notify) {
        let fin = seg.flags.contains(Flags::FIN);
        if seg.len == 0 && !fin {
            return;
        }
        if seg.len > 0 {
            self.rcv.data_arrives(now, self.rtt.rto());
            if self.ecn.on_data(seg.flags, seg.ecn) {
                // Linux `tcp_enter_quickack_mode(sk, 2)`: after a new mark the
                // sender may be down to a window of one segment.
                self.rcv.enter_quickack(2);
            }
        }
        if let Some((_, tsecr)) = seg.ts.filter(|_| seg.len >= self.mss) {
            let ms = Self::tsval(now).wrapping_sub(tsecr);
            self.rcv.rtt_from_echo(tsecr, Dur::from_millis(ms as u64));
        }
        let rx = self.rcv.on_segment(now, seg.seq, seg.len, seg.flags.contains(Flags::PSH), fin);
        n.delivered += rx.delivered;
        if rx.fin {
            n.peer_fin = true;
            match self.state {
                State::Established => self.state = State::CloseWait,
                State::FinWait1 => self.state = State::Closing,
                State::FinWait2 => {
                    // No 2MSL wait in the simulator: TIME-WAIT is final.
                    self.state = State::TimeWait;
                    n.closed = true;
                }
                _ => {}
            }
        }
    }

    pub(super) fn on_rto(&mut self, now: Time, out: &mut Vec<Segment>, n: &mut Notify) {
        match self.state {
            State::SynSent | State::SynReceived => {
                self.stats.rtos += 1;
                if self.syn_rtx as u32 >= self.cfg.syn_retries {
                    self.fail(n);
                    return;
                }
                self.syn_rtx = self.syn_rtx.saturating_add(1);
                self.syn_resent = self.syn_resent.saturating_add(1);
                self.rtt.back_off();
                self.send_syn(now, out, true);
            }
            _ if self.sb.outstanding() == 0 => {
                if self.rec.window_closed(&self.w) {
                    // ns-2's timeout() with nothing outstanding: one segment again,
                    // the timer restarted without backing off.
                    self.rec.on_rto(now, false, self.snd_wnd, &mut self.sb, &mut self.w, &mut self.cc);
                    self.ecn.queue_cwr();
                    self.rtt.cancel_timing();
                    self.transmit(now, out);
                    self.arm(now, self.rtt.rto(), Xmit::Retransmit);
                }
            }
            _ => {
                self.stats.rtos += 1;
                if self.rto_count >= self.cfg.max_retries {
                    self.fail(n);
                    return;
                }
                let repeated = self.rto_count > 0;
                self.rto_count += 1;
                self.tlp_high = Opt::NONE;
                self.rec.on_rto(now, repeated, self.snd_wnd, &mut self.sb, &mut self.w, &mut self.cc);
                self.ecn.queue_cwr();
                self.rtt.cancel_timing();
                self.rtt.back_off(); // RFC 6298 5.5
                                     // 5.4: retransmit the earliest unacknowledged segment, whatever its size.
                if let Some(idx) = self.sb.head_retransmittable() {
                    self.send_retransmission(idx, now, out);
                }
                self.transmit(now, out);
                self.arm(now, self.rtt.rto(), Xmit::Retransmit); // 5.6
            }
        }
    }

    /// Give up after too many timeouts (Linux sends no RST here).
    pub(super) fn fail(&mut self, n: &mut Notify) {
        self.enter_closed();
        n.reset = true;
        n.closed = true;
    }

    pub(super) fn enter_closed(&mut self) {
        self.state = State::Closed;
        self.xmit_at = Opt::NONE;
        self.rcv.on_ack_sent();
    }
}
