//! A sans-IO TCP endpoint for the undertow packet-level simulator.
//!
//! # Model
//!
//! [`Tcp`] is one end of a connection. It never reads a clock and never does I/O: every
//! call takes the current [`Time`] and appends the segments it wants sent to a
//! caller-owned `Vec<Segment>`. Deadlines (retransmission, delayed ACK) are published
//! through [`Tcp::poll_at`]; the driver calls [`Tcp::on_timer`] at or after that time,
//! and early or spurious calls are harmless. Payload is never materialised: a
//! [`Segment`] carries a byte count and the application layer tracks message boundaries
//! from the `delivered` counts in [`Notify`]. Sequence numbers are absolute `u64`s with
//! the SYN at 0 and data from 1, so there is no wrap-around arithmetic anywhere.
//!
//! # Faithfulness
//!
//! Results are compared with the Mathis formula, ns-3 and Linux, so each mechanism
//! follows its RFC, cited next to the code:
//!
//! * handshake with MSS and SACK-permitted negotiation (RFC 9293, RFC 2018); more than
//!   one retransmitted SYN or SYN-ACK gives an initial window of one segment (Linux; RFC
//!   5681 says after one), and without a timestamp echo to time it a 3 s RTO until the
//!   first sample (RFC 6298 5.7);
//! * receiver with out-of-order reassembly, RFC 2018 SACK block order and RFC 1122/5681
//!   delayed ACKs (immediate ACKs for out-of-order data, hole fills, FIN and duplicates);
//! * retransmission timer by Linux's estimator (RTO about the RTT plus `min_rto`, on
//!   Linux's timer wheel) or RFC 6298's, with Karn's rule, exponential backoff and abort
//!   after `max_retries`; the tail loss probe (RFC 8985 §7);
//! * congestion control (`cc`): RFC 5681 with RFC 3465 byte counting, or CUBIC as Linux
//!   computes it (`tcp_cubic.c`, in whole packets);
//! * loss recovery (`recovery`): Tahoe, Reno, NewReno (RFC 6582) with Limited Transmit
//!   (RFC 3042), and SACK-based recovery (RFC 6675 scoreboard) paced by PRR (RFC 6937)
//!   whenever both ends agreed on SACK, losses found by RACK (RFC 8985, `rack`) or RFC
//!   6675's IsLost;
//! * ECN (RFC 3168) when asked for on the SYN and agreed: new data ECT(0), CE echoed
//!   with ECE until CWR, the window reduced once per window of data on an echo
//!   (Linux's CWR state; ns-2's `ecn_` rules under its loss response);
//! * close with FIN_WAIT/CLOSING/LAST_ACK and RST. TIME_WAIT is entered and reported at
//!   once (no 2MSL wait), though the endpoint still answers a retransmitted FIN if kept.
//!
//! Where the RFCs leave room, the crate does what Linux does: the window only grows
//! while the sender is cwnd-limited, an idle connection restarts from the initial window
//! (RFC 5681 §4.1), a lost retransmission is detected from later SACKs instead of waiting
//! for the timer, and a timeout inside a loss episode does not cut ssthresh again. The
//! defaults follow Linux 6.18 where it differs from the RFCs (CUBIC's arithmetic, the
//! RTO estimator, RACK-TLP, PRR's details, the handshake's losses), checked against the
//! emulator's real Linux stacks (docs/engines.md).
//!
//! # Speed
//!
//! The simulator pushes millions of packets per second through these endpoints, so the
//! hot path allocates nothing per segment: the retransmission queue and the receiver's
//! out-of-order ranges are `VecDeque`s that keep their capacity, SACK blocks are a fixed
//! array, and congestion control is an enum rather than a boxed trait object. Per-ACK
//! work is O(1) amortised; SACK processing costs O(log n) plus the segments newly
//! SACKed, because blocks seen on the previous ACK are skipped, and loss marking and
//! retransmission selection run from cursors that only move forward.

mod cc;
mod config;
mod conn;
mod ecn;
mod jiffies;
mod ns3_recovery;
mod rack;
mod rcv_mss;
mod rcv_space;
mod recovery;
mod recv;
mod rtt;
mod segment;
mod send;
mod sndmem;
mod tso_defer;

pub use config::{Algorithm, LossResponse, PartialAckTimer, RtoEstimator, TcpConfig};
pub use conn::{Notify, State, Tcp, TcpStats};
pub use segment::{syn_option_bytes, Ecn, Flags, SackBlocks, Segment, SynOptions};
pub use units::{Dur, Time};
