//! Per-connection records: a debugging and testing view of what the
//! extractor reconstructed (see [`crate::connections`]). Not part of the
//! model; the layout may change with the extractor.

use crate::exchanges::Pair;
use std::net::SocketAddr;

/// Why a connection ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndReason {
    /// FIN seen in both directions (end = the second FIN).
    Fin,
    /// RST (end = the RST).
    Rst,
    /// No packet for `idle_timeout_s` (end = the last packet).
    Idle,
    /// A new SYN on the same 5-tuple (end = the last packet before it).
    Reused,
    /// Still open when the trace ended (end = the last packet).
    TraceEnd,
}

/// One reconstructed TCP connection. Times are ns since the Unix epoch;
/// index 0 of the arrays is client to server, 1 server to client.
#[derive(Clone, Debug, PartialEq)]
pub struct ConnRecord {
    pub client: SocketAddr,
    pub server: SocketAddr,
    /// Application class (by server port).
    pub class: String,
    /// First SYN, or the first packet seen for a connection already open.
    pub start_ns: i64,
    pub end_ns: i64,
    pub end: EndReason,
    /// First and last SYN, and how many SYNs (retransmissions included).
    pub syn_ns: Option<i64>,
    pub last_syn_ns: Option<i64>,
    pub syns: u32,
    pub synack_ns: Option<i64>,
    pub synacks: u32,
    /// The client's first ACK of the SYN/ACK (with no SYN/ACK captured,
    /// its first ACK after the SYN).
    pub ack_ns: Option<i64>,
    pub packets: [u64; 2],
    /// IP bytes.
    pub bytes: [u64; 2],
    /// Payload bytes from sequence (or acknowledgement) advance.
    pub payload: [u64; 2],
    /// Data segments entirely below the highest sequence already seen that
    /// filled no hole.
    pub retransmissions: [u64; 2],
    /// Segments that filled a hole (upstream loss or reordering).
    pub fills: [u64; 2],
    /// Request/response pairs in order, with raw element sizes (the model
    /// writes a missing element as 1 byte). All pairs, also beyond
    /// `max_pairs_per_conn` (the model splits such connections).
    pub pairs: Vec<Pair>,
}

impl ConnRecord {
    /// SYN to SYN/ACK at the link: the server's side of the path (the
    /// model takes it only when the SYN was sent once).
    pub fn server_rtt_s(&self) -> Option<f64> {
        Some((self.synack_ns? - self.last_syn_ns?) as f64 / 1e9)
    }

    /// SYN/ACK to the client's ACK: the client's side.
    pub fn client_rtt_s(&self) -> Option<f64> {
        Some((self.ack_ns? - self.synack_ns?) as f64 / 1e9)
    }

    /// Last SYN to the handshake's ACK: what tshark reports as
    /// `tcp.analysis.initial_rtt`.
    pub fn handshake_rtt_s(&self) -> Option<f64> {
        Some((self.ack_ns? - self.last_syn_ns?) as f64 / 1e9)
    }

    /// Raw think times, s: each pair's first packet minus the previous
    /// pair's last (before any RTT is subtracted).
    pub fn think_s(&self) -> Vec<f64> {
        self.pairs.windows(2).map(|w| (w[1].start() - w[0].end()) as f64 / 1e9).collect()
    }
}
