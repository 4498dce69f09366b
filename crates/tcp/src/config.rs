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
    /// RFC 9438 window growth; NewReno or SACK (RFC 6675 + PRR) recovery.
    Cubic,
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
        }
    }
}
