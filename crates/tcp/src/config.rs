//! Endpoint configuration.

use units::Dur;

/// Congestion control and loss recovery flavour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// Slow start, congestion avoidance, fast retransmit followed by slow start (no fast recovery).
    Tahoe,
    /// RFC 5681 fast recovery: leaves recovery on the first ACK that advances `snd_una`.
    Reno,
    /// RFC 6582: stays in fast recovery until everything outstanding at entry is acked.
    NewReno,
    /// CUBIC window growth as Linux computes it; NewReno or SACK (RFC 6675 + PRR) recovery.
    Cubic,
}

/// What the sender does when it detects a loss, beyond the algorithm's own rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum LossResponse {
    /// RFC 5681/6582 as Linux does it: ssthresh from FlightSize, cut once per loss
    /// episode (a repeated timeout keeps it), a new fast retransmit as soon as the
    /// previous recovery has ended.
    #[default]
    Linux,
    /// ns-2 2.35's `Agent/TCP` family (`tcp.cc` `slowdown`, `tcp-reno.cc`
    /// `dupack_action`, `bug_fix_` true): ssthresh = half the congestion window in
    /// whole packets (at least 2), cut again at every timeout (a repeated one gives
    /// 2); a fast retransmit needs an ACK beyond everything sent when the previous
    /// fast retransmit or timeout happened, so Reno's further losses in one window
    /// wait for the timer; the fast retransmit restarts the timer and abandons the
    /// RTT measurement; the ACK that ends fast recovery also grows the window; after
    /// a timed-out SYN the transfer starts with one segment and ssthresh 2.
    Ns2,
    /// ns-3 3.44's `TcpSocketBase` with `TcpClassicRecovery` (`ns3_recovery.rs`):
    /// ssthresh = half of `pipe` at a fast retransmit and at every timeout; cwnd =
    /// ssthresh through recovery, sending while `pipe` allows; without SACK each
    /// duplicate ACK marks one more segment as received (`AddRenoSack`), marks that
    /// outlive recovery and leave the head marked lost once they reach it; a fast
    /// retransmit as soon as snd_una reaches `recover`; duplicates ignored after a
    /// timeout; an ACK of new data ends the timer's backoff; the window grows on
    /// every ACK, used or not; sending is bounded by min(cwnd, peer window) − `pipe`.
    /// Tahoe keeps its own recovery.
    Ns3,
}

/// Which partial ACKs of NewReno recovery restart the retransmission timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum PartialAckTimer {
    /// Every one (RFC 6582's "Slow-but-Steady" variant, RFC 6298 §5.3; Linux).
    #[default]
    Every,
    /// Only the first of a recovery (RFC 6582's "Impatient" variant): ns-2's
    /// `newreno_changes1_` and ns-3's `m_isFirstPartialAck`, so a window with many
    /// losses ends in a timeout rather than one repair per round trip.
    First,
}

/// How the retransmission timeout is estimated from RTT samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum RtoEstimator {
    /// Linux's `tcp_rtt_estimator`/`tcp_set_rto`: RTO = SRTT + max(deviation term,
    /// `min_rto`), about the RTT plus 200 ms, in whole jiffies; samples from the oldest
    /// segment each ACK delivers, SACKed ones and timestamp echoes included.
    #[default]
    Linux,
    /// RFC 6298: RTO = max(`min_rto`, SRTT + 4·RTTVAR); a sample from the newest segment
    /// each cumulative ACK covers, Karn's rule.
    Rfc6298,
}

/// Per-endpoint settings. `Default` gives Linux-like values.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpConfig {
    pub algorithm: Algorithm,
    /// Offer/accept SACK; SACK-based recovery if both sides agree (and the algorithm is not Tahoe).
    pub sack: bool,
    /// Maximum payload per segment, bytes.
    pub mss: u32,
    /// Receive buffer, bytes. With `rcv_buf_auto` the ceiling of the
    /// autotuned buffer (Linux `tcp_rmem[2]`), of which half is window;
    /// without, the fixed advertised window, as when an application sets
    /// SO_RCVBUF.
    pub rcv_buf: u64,
    /// Linux receive-window growth and buffer autotuning (see
    /// `rcv_space.rs`): the window opens from 64 KiB as data arrives, each
    /// segment that opens it ACKed at once.
    pub rcv_buf_auto: bool,
    /// Starting receive buffer under autotuning (Linux `tcp_rmem[1]`).
    pub rcv_buf_initial: u64,
    /// A fixed window leaves out the bytes the receiver holds out of order
    /// (Linux, whose buffer holds them). Off: the whole of `rcv_buf` is
    /// offered from `rcv_nxt` on, as ns-3's receiver does (and ns-2's sender,
    /// whose `window_` caps `snd_nxt - snd_una`).
    pub ooo_shrinks_window: bool,
    /// Send buffer: most bytes written by the app but not yet acknowledged. With
    /// `snd_buf_auto` this is the ceiling of the autotuned buffer (Linux `tcp_wmem[2]`).
    pub snd_buf: u64,
    /// Linux send-buffer autotuning: start at `snd_buf_initial`, and whenever the
    /// buffer rather than cwnd limits sending, grow to twice the window. Off means a
    /// fixed `snd_buf`, as when an application sets SO_SNDBUF.
    pub snd_buf_auto: bool,
    /// Starting send buffer under autotuning (Linux `tcp_wmem[1]`).
    pub snd_buf_initial: u64,
    /// Initial window in segments (RFC 6928).
    pub initial_cwnd: u32,
    /// Initial slow-start threshold in bytes; `u64::MAX` = unlimited.
    pub initial_ssthresh: u64,
    /// Delayed ACK: ACK once more than `ack_every - 1` full segments are unacknowledged; 1 = ACK every segment.
    pub ack_every: u32,
    /// Reproduce a measured ACK frequency instead: ACK in-order data once
    /// per this many bytes on average (the remainder carries over, so a
    /// fractional number of segments per ACK comes out right); a delayed or
    /// piggybacked ACK starts the count again. Overrides `ack_every`; use
    /// with `quickack` 0, as the measurement includes the quick ACKs.
    pub ack_bytes: Option<u64>,
    pub delack_timeout: Dur,
    pub min_rto: Dur,
    pub max_rto: Dur,
    /// RTO before any RTT sample (RFC 6298: 1 s).
    pub initial_rto: Dur,
    pub dupthresh: u32,
    /// Data retransmissions by timeout before the connection is aborted (Linux `tcp_retries2`).
    pub max_retries: u32,
    /// SYN / SYN-ACK retransmissions before the open is abandoned (Linux `tcp_syn_retries`).
    pub syn_retries: u32,
    /// RFC 7323 timestamps, offered on SYN (Linux: on): every segment carries
    /// 12 more header bytes and full segments 12 fewer payload bytes.
    pub timestamps: bool,
    /// Linux quick-ACK mode: ACK each of the first this many data segments of
    /// a connection, and again after the receiver was idle longer than the
    /// RTO, instead of delaying (Linux TCP_MAX_QUICKACKS = 16). 0 = off.
    pub quickack: u32,
    /// RFC 3465 Appropriate Byte Counting: grow cwnd by the bytes each ACK
    /// acknowledges (Linux). Off: one SMSS per ACK in slow start and
    /// SMSS*SMSS/cwnd per ACK in congestion avoidance, as ns-2 and ns-3's
    /// NewReno do, which grows more slowly with delayed ACKs.
    pub byte_counting: bool,
    /// RFC 3042 Limited Transmit (non-SACK Reno family; SACK gets it through `pipe`).
    pub limited_transmit: bool,
    /// RFC 5681 §4.1: restart from min(IW, cwnd) after an idle period longer than the RTO.
    pub slow_start_after_idle: bool,
    /// CUBIC only: leave slow start early by Linux's HyStart (ACK-train and delay
    /// detection, `tcp_cubic.c`), as Linux does by default. Off: slow start runs until
    /// a loss or ssthresh.
    pub hystart: bool,
    /// RACK loss detection (RFC 8985, Linux's `tcp_recovery` = 1) with SACK: a segment is
    /// lost once one sent after it was delivered and its reordering window passed.
    /// Off: RFC 6675's IsLost (dupthresh segments SACKed above it).
    pub rack: bool,
    /// Tail loss probe (RFC 8985 §7, Linux's `tcp_early_retrans` = 3) with SACK: with
    /// nothing SACKed or retransmitted, about two RTTs after the last ACK send one new
    /// segment (or the last one again) so that a lost tail is found by RACK instead of
    /// the RTO.
    pub tlp: bool,
    /// Linux's TSO deferral (`tcp_tso_should_defer`, 6.18): outside recovery,
    /// when the windows leave room for less than the TSO autosize (at least
    /// two segments) and an ACK is due within a millisecond, new data waits
    /// for that ACK, so it leaves in pairs or more rather than one segment
    /// per ACK. Off: each segment goes as soon as the windows allow, as
    /// ns-2 and ns-3 send.
    pub tso_defer: bool,
    /// The window counts segments, as Linux's `snd_cwnd` and
    /// `tcp_packets_in_flight` do: every segment in flight takes one MSS of
    /// cwnd whatever its length, and growth counts the segments delivered.
    /// Off: bytes (RFC 5681), as ns-2's and ns-3's flavours keep it here. The
    /// two differ only for segments shorter than the MSS, such as those of an
    /// application writing less than a segment at a time.
    pub packet_window: bool,
    /// The receiver ACKs at once, once the application has read it, a
    /// segment that ends a write: one with PSH of exactly the sender's
    /// segment size as measured here, or a shorter one (Linux's
    /// `ICSK_ACK_PUSHED` and `tcp_cleanup_rbuf`, 6.6 and later and the
    /// stable kernels back to 5.15), unless the connection is interactive.
    /// Off: the delayed-ACK rule alone, as ns-2's and ns-3's receivers.
    pub ack_pushed: bool,
    /// A FIN that arrives before the application has closed makes the
    /// connection interactive, and its ACK waits for the delayed-ACK timer,
    /// so that an application closing in answer sends one segment, its FIN
    /// carrying the ACK (Linux's `tcp_fin` enters ping-pong mode). A FIN
    /// that arrives after the application closed is ACKed at once. Off:
    /// every FIN ACKed at once, as ns-3's `TcpSocketBase` does.
    pub delayed_fin_ack: bool,
    /// The RTO estimator, unless `rto_tick` is set.
    pub rto_estimator: RtoEstimator,
    /// `Some(tick)`: ns-2's coarse-clock estimator (`tcpTick_`) instead of
    /// `rto_estimator`: one timed segment per round trip, measured in ticks, backoff
    /// kept until a timed segment is acknowledged.
    pub rto_tick: Option<Dur>,
    pub loss_response: LossResponse,
    pub partial_ack_timer: PartialAckTimer,
    /// Request ECN on an active open (RFC 3168: ECE and CWR on the SYN; Linux's
    /// `tcp_ecn` = 1). Either way a passive end agrees when its peer asks, as
    /// Linux's default `tcp_ecn` = 2 and ns-2's TCPSink do. Once agreed, new data
    /// goes out ECT(0), a CE mark is echoed with ECE until the peer's CWR, and an
    /// ECE reduces the window once per window of data (see `recovery.rs`). With
    /// `LossResponse::Ns3`, which ignores ECE, the end neither asks nor agrees
    /// (ns-3's `UseEcn` Off): its data must never be ECT.
    pub ecn: bool,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            algorithm: Algorithm::Cubic,
            sack: true,
            mss: 1460,
            rcv_buf: 4 << 20,
            rcv_buf_auto: true,
            rcv_buf_initial: crate::rcv_space::RCV_BUF_INITIAL,
            ooo_shrinks_window: true,
            snd_buf: 4 << 20,
            snd_buf_auto: true,
            snd_buf_initial: 16 << 10,
            initial_cwnd: 10,
            initial_ssthresh: u64::MAX,
            ack_every: 2,
            ack_bytes: None,
            delack_timeout: Dur::from_millis(40),
            min_rto: Dur::from_millis(200),
            max_rto: Dur::from_secs(60),
            initial_rto: Dur::from_secs(1),
            dupthresh: 3,
            max_retries: 15,
            syn_retries: 6,
            timestamps: true,
            quickack: 16,
            byte_counting: true,
            limited_transmit: true,
            slow_start_after_idle: true,
            hystart: true,
            rack: true,
            tlp: true,
            tso_defer: true,
            packet_window: true,
            ack_pushed: true,
            delayed_fin_ack: true,
            rto_estimator: RtoEstimator::Linux,
            rto_tick: None,
            loss_response: LossResponse::Linux,
            partial_ack_timer: PartialAckTimer::Every,
            ecn: false,
        }
    }
}

impl TcpConfig {
    /// ns-2 2.35's `Agent/TCP/Reno` with `Agent/TCPSink` and the defaults it ships
    /// (`ns-default.tcl`): one ACK per segment, no SACK, no timestamps, no quick
    /// ACKs, an initial window of 2 (`windowInit_`), per-ACK growth counted in
    /// packets, Limited Transmit (`singledup_`), the 10 ms tick RTO estimator
    /// starting at 3 s (`rtxcur_init_`) with `minrto_` 200 ms and `maxrto_` 60 s,
    /// ns-2's loss response, no restart after idle, and NewReno's timer restarted
    /// by the first partial ACK only (`newreno_changes1_`). ns-2 has no HyStart,
    /// RACK, tail loss probe or pacing, and its `maxburst_` 0 is no limit, as here. ns-2's `window_` is a
    /// packet count that caps `snd_nxt - snd_una`, fixed: set `rcv_buf` to window_ ×
    /// MSS, a window that data held out of order does not shrink.
    pub fn ns2() -> TcpConfig {
        TcpConfig {
            algorithm: Algorithm::Reno,
            sack: false,
            timestamps: false,
            quickack: 0,
            ack_every: 1,
            initial_cwnd: 2,
            byte_counting: false,
            limited_transmit: true,
            slow_start_after_idle: false,
            min_rto: Dur::from_millis(200),
            max_rto: Dur::from_secs(60),
            initial_rto: Dur::from_secs(3),
            rto_tick: Some(Dur::from_millis(10)),
            loss_response: LossResponse::Ns2,
            partial_ack_timer: PartialAckTimer::First,
            rcv_buf_auto: false,
            ooo_shrinks_window: false,
            rack: false,
            tlp: false,
            tso_defer: false,
            packet_window: false,
            ack_pushed: false,
            delayed_fin_ack: false,
            ..TcpConfig::default()
        }
    }

    /// ns-3 3.44's `TcpSocketBase` with `TcpNewReno` and `TcpClassicRecovery`, the
    /// congestion control and recovery the ns-3 anchors set (ns-3's own defaults,
    /// `TcpCubic` and `TcpPrrRecovery`, are not reproduced), and the `TcpSocket`
    /// defaults: SACK and timestamps on, an ACK every 2 segments with a 200 ms
    /// timer and no quick ACKs, an initial window of 10 grown per ACK, Limited
    /// Transmit, `MinRto` 1 s, 3 s for the SYN (`ConnTimeout`), 128 KiB buffers
    /// fixed whose window data held out of order does not shrink, no restart after
    /// idle, the timer restarted by the first partial ACK only, and ns-3's loss
    /// response; RFC 6298's RTO estimator (`RttMeanDeviation`), RFC 6675's loss
    /// detection and no tail loss probe, as ns-3 has neither RACK nor TLP. ns-3 gives
    /// up after 6 data retransmissions (`DataRetries`), this model after `max_retries`.
    pub fn ns3() -> TcpConfig {
        TcpConfig {
            algorithm: Algorithm::NewReno,
            sack: true,
            timestamps: true,
            quickack: 0,
            ack_every: 2,
            delack_timeout: Dur::from_millis(200),
            initial_cwnd: 10,
            byte_counting: false,
            limited_transmit: true,
            slow_start_after_idle: false,
            min_rto: Dur::from_secs(1),
            max_rto: Dur::from_secs(60),
            initial_rto: Dur::from_secs(3),
            loss_response: LossResponse::Ns3,
            partial_ack_timer: PartialAckTimer::First,
            rcv_buf: 128 << 10,
            rcv_buf_auto: false,
            snd_buf: 128 << 10,
            snd_buf_auto: false,
            ooo_shrinks_window: false,
            rack: false,
            tlp: false,
            tso_defer: false,
            packet_window: false,
            ack_pushed: false,
            delayed_fin_ack: false,
            rto_estimator: RtoEstimator::Rfc6298,
            ..TcpConfig::default()
        }
    }
}
