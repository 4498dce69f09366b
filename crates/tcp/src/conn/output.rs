//! Outgoing side of the connection: what to send, in which order, and building segments.

use super::{State, Tcp, Xmit};
use crate::cc::CongestionControl;
use crate::{Ecn, Flags, Segment};
use units::Time;

/// An skb of new data being sent: where its last segment is in the output
/// and how many segments it has.
#[derive(Default)]
struct Skb {
    last: usize,
    segments: u32,
}

impl Tcp {
    /// Send everything the windows allow: RFC 6675 NextSeg order (lost data, new data,
    /// then rule 3). No Nagle; sender SWS avoidance only holds back a partial segment
    /// that the *receive* window cuts short while data is in flight.
    pub(super) fn transmit(&mut self, now: Time, out: &mut Vec<Segment>) {
        if !self.state.can_send() {
            return;
        }
        let mss = self.mss as u64;
        // A window closed below one segment waits for its timer, not for a restart.
        if self.cfg.slow_start_after_idle && self.sb.outstanding() == 0 && self.write_end > self.sb.nxt() && !self.rec.window_closed(&self.w) {
            self.restart_after_idle(now);
        }
        let mut sent = false;
        let mut sent_new = false;
        let mut cwnd_limited = false;
        // Sending changes neither the window nor the recovery state.
        let wnd = self.rec.send_window(&self.w, self.cfg.limited_transmit, self.snd_wnd);
        let rule3 = self.rec.rule3_allowed();
        // New data still to send of the skb being cut (`tcp_write_xmit`),
        // and the skb sent so far: its last segment's place in `out`, its
        // segments.
        let mut skb_left = 0;
        let mut skb = Skb::default();
        loop {
            let room = wnd.saturating_sub(self.sb.pipe());
            let cand = if self.sb.lost() > 0 || rule3 { self.sb.next_candidate() } else { None };
            // 1. Data deemed lost.
            if let Some(c) = cand.filter(|c| c.lost && self.rec.resends_lost_at(c.start, &self.sb)) {
                if room < self.sb.charge(c.len.min(mss)) {
                    cwnd_limited = true;
                    break;
                }
                self.end_skb(&mut skb, out);
                self.send_retransmission(c.idx, now, out);
                sent = true;
                continue;
            }
            // 2. New data (and the FIN).
            let avail = self.unsent();
            if avail > 0 {
                let want = avail.min(mss);
                let len = want.min(self.rwnd_room());
                if len > 0 && (len == want || self.sb.outstanding() == 0) {
                    if room < self.sb.charge(len) {
                        cwnd_limited = true;
                        break;
                    }
                    if skb_left == 0 {
                        self.end_skb(&mut skb, out);
                        match self.next_skb(now, room, avail) {
                            Some(bytes) => skb_left = bytes,
                            None => {
                                cwnd_limited = room < self.rwnd_room();
                                break;
                            }
                        }
                    }
                    skb_left = skb_left.saturating_sub(len);
                    self.send_new_data(now, len, out);
                    skb = Skb { last: out.len() - 1, segments: skb.segments + 1 };
                    (sent, sent_new) = (true, true);
                    continue;
                }
            } else if self.fin_queued && !self.fin_sent {
                if room < self.sb.charge(1) {
                    cwnd_limited = true;
                    break;
                }
                self.send_new(now, 0, true, out);
                (sent, sent_new) = (true, true);
                continue;
            }
            // 3. RFC 6675 NextSeg rule 3: unSACKed data below the highest SACK.
            if let Some(c) = cand.filter(|c| rule3 && c.start < self.sb.high_sacked() && self.rec.rule3_with_unsent(avail)) {
                if room < self.sb.charge(c.len.min(mss)) {
                    cwnd_limited = true;
                    break;
                }
                self.end_skb(&mut skb, out);
                self.send_retransmission(c.idx, now, out);
                sent = true;
                continue;
            }
            break;
        }
        self.end_skb(&mut skb, out);
        if sent_new && !self.schedule_probe(now, false) && matches!(self.xmit(), Some((_, Xmit::Probe))) {
            // New data replaces a probe that may no longer run (Linux
            // `tcp_event_new_data_sent`).
            self.rearm_rto(now);
        }
        if sent || cwnd_limited {
            self.validate_cwnd(cwnd_limited);
        }
    }

    /// The skb of new data `skb` describes has gone: Linux forces PSH on
    /// every packet it sends of more than one segment, to flush the
    /// receiver's GRO at once (`__tcp_transmit_skb`), and GSO leaves it on
    /// the last segment; a single segment keeps what its write gave it. The
    /// receiver ACKs such a segment as soon as it is read (`ack_pushed`), so
    /// this sets where a Linux receiver's ACKs fall. Only with `tso_defer`,
    /// the model in which new data leaves in skbs at all.
    fn end_skb(&self, skb: &mut Skb, out: &mut [Segment]) {
        if self.cfg.tso_defer && skb.segments > 1 {
            out[skb.last].flags |= Flags::PSH;
        }
        *skb = Skb::default();
    }

    /// A tail loss probe of new data: one segment, whatever cwnd says, if the peer's
    /// window has room for it (Linux `tcp_write_xmit` with `push_one` = 2). Returns
    /// whether it went out.
    pub(super) fn send_probe_new(&mut self, now: Time, out: &mut Vec<Segment>) -> bool {
        let len = self.unsent().min(self.mss as u64);
        if len == 0 || len > self.rwnd_room() {
            return false;
        }
        self.send_new_data(now, len, out);
        true
    }

    /// The payload of the next skb of new data, the TSO autosize with
    /// `tso_defer` (no bound without), or none if it waits for the next
    /// ACK rather than leave shorter than that (Linux's deferral never
    /// applies in recovery, nor to an skb of one segment).
    fn next_skb(&self, now: Time, room: u64, avail: u64) -> Option<u64> {
        use crate::recovery::Phase;
        if !self.cfg.tso_defer {
            return Some(u64::MAX);
        }
        let tso_bytes = self.tso_bytes();
        if avail <= self.mss as u64 || matches!(self.rec.phase(), Phase::Recovery | Phase::Loss) {
            return Some(tso_bytes);
        }
        let head_skb = avail.min(self.size_goal());
        let p = crate::tso_defer::Pending {
            cwnd_room: room,
            rwnd_room: self.rwnd_room(),
            tso_bytes,
            window: self.snd_wnd.min(self.w.cwnd),
            head_skb,
            fin: self.fin_queued && head_skb == avail,
            since_send: now - self.last_send,
            head_age: self.sb.head_sent().map(|t| now - t),
            srtt: self.rtt.srtt().unwrap_or(units::Dur::ZERO),
        };
        (!crate::tso_defer::should_defer(&p)).then_some(tso_bytes)
    }

    /// Bytes written but not sent yet.
    pub(super) fn unsent(&self) -> u64 {
        self.write_end - self.sb.nxt().min(self.write_end)
    }

    /// What the peer's window leaves beyond snd_nxt.
    fn rwnd_room(&self) -> u64 {
        (self.sb.una() + self.snd_wnd).saturating_sub(self.sb.nxt())
    }

    /// `len` new bytes, with the FIN if they are the last written and it is due.
    fn send_new_data(&mut self, now: Time, len: u64, out: &mut Vec<Segment>) {
        let fin = self.fin_queued && !self.fin_sent && self.sb.nxt() + len == self.write_end;
        self.send_new(now, len, fin, out);
    }

    /// Linux `tcp_slow_start_after_idle_check` and `tcp_cwnd_restart`: after more
    /// than an RTO without sending, ssthresh keeps at least 3/4 of the window
    /// (`tcp_current_ssthresh`) and cwnd halves once per further RTO of idleness,
    /// down to no less than the initial window (RFC 5681 §4.1 goes straight there).
    fn restart_after_idle(&mut self, now: Time) {
        let rto = self.rtt.rto();
        let mut idle = now - self.last_send;
        if idle <= rto {
            return;
        }
        let mss = self.w.mss;
        let mut cwnd = self.w.cwnd / mss;
        if self.rec.phase() == crate::recovery::Phase::Open {
            self.w.ssthresh = self.w.ssthresh.max(((cwnd >> 1) + (cwnd >> 2)) * mss);
        }
        let restart = (self.cfg.initial_cwnd.max(1) as u64).min(cwnd);
        while idle > rto && cwnd > restart {
            idle -= rto;
            cwnd >>= 1;
        }
        self.w.cwnd = cwnd.max(restart) * mss;
        self.cc.on_idle_restart(&mut self.w);
    }

    /// ns-3's `DoRetransmit` at a partial ACK: one segment now, whatever the window
    /// says: the first lost one, else new data the peer's window allows, else the
    /// head again. With SACK nothing is sent if the head's retransmission is still
    /// out (`IsRetransmittedDataAcked`).
    pub(super) fn send_next_now(&mut self, now: Time, out: &mut Vec<Segment>) {
        if !self.state.can_send() || (self.sack_ok && self.sb.head_retransmitted()) {
            return;
        }
        if let Some(c) = self.sb.next_candidate().filter(|c| c.lost && self.rec.resends_lost_at(c.start, &self.sb)) {
            self.send_retransmission(c.idx, now, out);
            return;
        }
        let len = self.unsent().min(self.mss as u64).min(self.rwnd_room());
        if len > 0 {
            self.send_new_data(now, len, out);
        } else if self.sb.outstanding() > 0 {
            self.send_retransmission(0, now, out);
        }
    }

    /// Linux tcp_cwnd_validate, in the window's units.
    pub(super) fn validate_cwnd(&mut self, limited: bool) {
        let out = self.sb.flight();
        let u = &mut self.usage;
        if self.sb.una() >= u.until || limited || (!u.limited && out > u.max_out) {
            u.limited = limited;
            u.max_out = out;
            u.until = self.sb.nxt();
        }
    }

    pub(super) fn send_new(&mut self, now: Time, len: u64, fin: bool, out: &mut Vec<Segment>) {
        let seq = self.sb.nxt();
        let end = seq + len + fin as u64;
        if self.sb.pipe() == 0 {
            self.cc.on_tx_start(now, self.last_send);
        }
        self.sb.on_send(seq, end, now, fin);
        self.rtt.on_send(now, end);
        self.fin_sent |= fin;
        self.rec.on_sent(self.sb.charge(end - seq));
        self.emit_data(now, seq, len, fin, false, out);
    }

    pub(super) fn send_retransmission(&mut self, idx: usize, now: Time, out: &mut Vec<Segment>) {
        let (start, end, fin) = self.sb.seg(idx);
        self.sb.mark_retransmitted(idx, now);
        if self.cfg.rack && start == self.sb.una() && self.xmit().is_none_or(|(_, k)| k != Xmit::Reorder) {
            // Linux (`tcp_xmit_retransmit_queue`) restarts the RTO when it resends the
            // oldest segment, unless RACK's reordering timer is running.
            self.arm(now, self.rtt.rto(), Xmit::Retransmit);
        }
        self.rec.on_sent(self.sb.charge(end - start));
        let len = end - start - fin as u64;
        self.stats.retransmits += 1;
        self.stats.retrans_bytes += len;
        self.emit_data(now, start, len, fin, true, out);
    }

    pub(super) fn emit_data(&mut self, now: Time, seq: u64, len: u64, fin: bool, retransmit: bool, out: &mut Vec<Segment>) {
        let mut flags = Flags::ACK;
        if fin {
            flags |= Flags::FIN;
        }
        if len > 0 && seq + len == self.write_end {
            flags |= Flags::PSH;
        }
        let (ecn, cwr) = self.ecn.data(self.ecn_sender(), len, retransmit);
        let mut seg = self.segment(seq, len as u32, flags | cwr, retransmit);
        seg.ecn = ecn;
        out.push(seg);
        self.rcv.on_ack_sent();
        if len > 0 {
            self.rcv.on_data_sent(now);
        }
        self.stats.segs_sent += 1;
        self.stats.data_segs_sent += (len > 0) as u64;
        self.stats.bytes_sent += len;
        self.last_send = now;
        self.arm_rto_if_idle(now); // RFC 6298 5.1
    }

    /// Send a pure ACK if the receiver wants one now.
    pub(super) fn flush_ack(&mut self, _now: Time, out: &mut Vec<Segment>) {
        if self.rcv.ack_due() && self.state != State::Closed {
            out.push(self.segment(self.sb.nxt(), 0, Flags::ACK, false));
            self.rcv.on_ack_sent();
            self.stats.segs_sent += 1;
            self.stats.acks_sent += 1;
        }
    }

    pub(super) fn segment(&self, seq: u64, len: u32, flags: Flags, retransmit: bool) -> Segment {
        Segment {
            seq,
            ack: self.rcv.rcv_nxt(),
            len,
            flags: flags | self.ecn.echo(),
            wnd: self.rcv.window(),
            sack: self.rcv.sack_blocks(),
            syn_opts: None,
            ts: self.ts_ok.then(|| (Self::tsval(self.clock), self.ts_recent)),
            retransmit,
            ecn: Ecn::NotEct,
        }
    }
}
