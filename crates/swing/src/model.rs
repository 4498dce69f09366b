//! The model file's schema.

use crate::Dist;
use serde::{Deserialize, Serialize};

/// The `format` field of the model files this version writes.
pub const FORMAT: &str = "undertow.swing-model/2";
/// Every format this version reads: `/1` files were written before shared
/// lines were detected, and load with none (each host on its own path, as
/// they were regenerated then); `/2` adds `lines`.
pub const FORMATS_READ: [&str; 2] = ["undertow.swing-model/1", FORMAT];

/// One side of the observed link. Direction 0 runs from side A to side B.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    A,
    B,
}

impl Side {
    pub fn other(self) -> Side {
        match self {
            Side::A => Side::B,
            Side::B => Side::A,
        }
    }
    pub fn index(self) -> usize {
        self as usize
    }
}

/// How connections are grouped into sessions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SessionKey {
    /// All connections of one client address (the Swing paper).
    Client,
    /// Connections of one client to one server (Swing's released code).
    ClientServer,
}

/// Which RTT samples feed a host's estimate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RttSamples {
    /// SYN to SYN/ACK and SYN/ACK to ACK only (Swing's released code).
    Handshake,
    /// Handshake plus data-to-ACK samples (the Swing paper).
    HandshakeAndData,
    /// Handshake samples where the host has `rtt_min_samples` of them, else
    /// handshake and data samples. A data sample includes the acknowledger's
    /// ACK policy (a server holds the ACK of a request for its response, a
    /// receiver delays ACKs), a handshake's answer comes from the kernel at
    /// once: data samples put a server that answers late further away than
    /// its path is.
    HandshakeElseData,
}

/// How a host's loss rate is computed from retransmissions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LossFormula {
    /// Swing: holes (loss before the link) and retransmissions without a hole
    /// (loss after it), combined as p_up + p_down - p_up * p_down.
    Swing,
    /// Retransmitted data segments over data segments sent.
    Retransmissions,
}

/// How hosts were assigned to the two sides of the link.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "method", deny_unknown_fields)]
pub enum SideRule {
    /// Decided from the trace (see `SideInfo::decided_by`).
    Auto,
    /// Hosts inside these prefixes are side A.
    Prefixes { a: Vec<String> },
    /// Frames sent from these MAC addresses come from side A.
    Macs { a: Vec<String> },
}

/// Every threshold and choice the extraction used, with its value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExtractOptions {
    pub session_key: SessionKey,
    /// A connection joins the current RRE if it starts less than this after
    /// the RRE's last connection ended (or while one is still open)...
    pub rre_gap_s: f64,
    /// ...and less than this after the previous connection of the RRE started.
    pub rre_max_interconn_s: f64,
    /// A new RRE stays in the session if it starts less than this after the
    /// previous RRE ended.
    pub session_gap_s: f64,
    /// Sessions are cut this long after they started, if set (Swing's code: 300 s).
    pub session_max_s: Option<f64>,
    pub max_rres_per_session: u32,
    pub max_conns_per_rre: u32,
    pub max_pairs_per_conn: u32,
    /// A TCP connection with no packet for this long is over.
    pub idle_timeout_s: f64,
    /// A sender that resumes after this long idle (and two handshake round
    /// trips), with all it sent acknowledged, starts a new element: an application pause (a server
    /// that answers late, pushes, or streams in chunks), which becomes the
    /// think time before a pair without a request. null: never.
    #[serde(default = "default_pause_gap_s")]
    pub pause_gap_s: Option<f64>,
    /// Inside a concurrent connection's run of one side's bytes, a sender
    /// with less than three segments in flight that resumes after this long
    /// starts a new data unit, replayed at its own offset (requests written
    /// one by one, a stream produced as it goes). null: units end only when
    /// the other side sends or at a pause.
    #[serde(default = "default_unit_gap_s")]
    pub unit_gap_s: Option<f64>,
    pub rtt_samples: RttSamples,
    /// Hosts with fewer RTT samples get no RTT of their own.
    pub rtt_min_samples: u32,
    /// RTT samples above this are discarded.
    pub rtt_max_s: f64,
    /// Percentile of a host's RTT samples taken as its RTT (models written
    /// before the option took the median).
    #[serde(default = "median")]
    pub rtt_percentile: f64,
    /// Percentile of a host's packet-pair samples taken as its capacity.
    pub capacity_percentile: f64,
    pub capacity_min_samples: u32,
    /// A host whose fastest sending stretch (data segments no further apart
    /// than about half its RTT, at least `shaper_min_segments` of them)
    /// stayed under this fraction of its capacity gets a token bucket
    /// behind the capacity (`HostParams::shaper`). null: never.
    #[serde(default = "default_shaper_max_fraction")]
    pub shaper_max_fraction: Option<f64>,
    #[serde(default = "default_shaper_min_segments")]
    pub shaper_min_segments: u32,
    pub loss_formula: LossFormula,
    /// Hosts that sent fewer data packets get no loss rate of their own.
    pub loss_min_packets: u64,
    /// Whole sessions kept per application class (a uniform sample when
    /// there are more), for generators that replay a session's joint
    /// structure; 0 keeps none.
    #[serde(default = "default_session_structures")]
    pub session_structures: u32,
    /// Subtract the client's RTT (`HostParams::rtt_s`) from think times and
    /// inter-RRE times (the generator's network adds it back).
    pub think_minus_rtt: bool,
    /// Server port to application class name; other ports make classes of
    /// their own ("tcp-8080", "udp-123").
    pub ports: Vec<(u16, String)>,
    pub sides: SideRule,
    /// Hosts behind one shared line were looked for (`Model::lines`).
    /// Models written before the detection load with false.
    #[serde(default)]
    pub lines: bool,
}

/// One input trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceInfo {
    pub path: String,
    pub packets: u64,
    /// Original (wire) bytes.
    pub bytes: u64,
    /// First timestamp, seconds since the Unix epoch.
    pub start_s: f64,
    pub duration_s: f64,
    /// Records the reader skipped as damaged or could not decode, and
    /// frames that were not IP.
    pub skipped: u64,
    pub non_ip: u64,
    /// Bytes at the end of the file that could not be read as records (an
    /// incomplete last record, or all that followed a record of impossible
    /// length). Models from before it was recorded load with 0.
    #[serde(default)]
    pub truncated_tail_bytes: u64,
    /// Records passed over as the capture's second copy of a frame (of
    /// `packets`): a frame recorded twice within microseconds. Models from
    /// before it was recorded load with 0.
    #[serde(default)]
    pub duplicates: u64,
}

/// Packets and bytes in one direction of the link.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirStats {
    pub packets: u64,
    /// IP bytes.
    pub bytes: u64,
    pub mean_rate_bps: f64,
    pub tcp_bytes: u64,
    pub udp_bytes: u64,
    pub other_bytes: u64,
    /// TCP payload acknowledged by the receivers but missing from the
    /// capture (capture loss; at least this much: a connection's holes
    /// beyond the last few are not tracked): the traffic carried this much more.
    #[serde(default)]
    pub unseen_bytes: u64,
    /// TCP payload the capture holds (retransmissions too): with
    /// `unseen_bytes`, the share of the payload it missed. None in models
    /// written before it was counted.
    #[serde(default)]
    pub tcp_payload_bytes: Option<u64>,
}

impl DirStats {
    /// Share of the TCP payload that crossed the link which the capture
    /// missed (0 without TCP). A model from before the payload was counted
    /// has it against its TCP bytes, headers included.
    pub fn capture_loss(&self) -> f64 {
        let all = self.tcp_payload_bytes.unwrap_or(self.tcp_bytes) + self.unseen_bytes;
        if all == 0 {
            0.0
        } else {
            self.unseen_bytes as f64 / all as f64
        }
    }
}

/// The observed link: [A to B, B to A].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkStats {
    pub duration_s: f64,
    pub dirs: [DirStats; 2],
    /// TCP connections, and those seen in one direction only (asymmetric
    /// routing, or a capture of one direction).
    #[serde(default)]
    pub tcp_connections: u64,
    #[serde(default)]
    pub tcp_one_way: u64,
    /// Times the path held every packet, then let them through at once
    /// (`stalls` in the extract crate), seconds from the trace's start.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stalls: Vec<Stall>,
    /// Where the capture was taken, as its handshakes show.
    #[serde(default)]
    pub capture_point: CapturePoint,
}

/// Where a trace was captured. On a host, that host's own handshake
/// answers take microseconds (`HostParams::at_capture`): nothing between it
/// and the capture queues, drops or spaces what it sends. On a link, every
/// host answered from further away.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CapturePoint {
    OnHost,
    Link,
    /// Too few hosts' handshakes were seen whole to tell.
    #[default]
    Unknown,
}

/// The path to `side`'s hosts held every packet from `start_s` to `end_s`:
/// what was sent towards them in that time, and what they sent, went
/// through together at its end.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stall {
    pub side: Side,
    pub start_s: f64,
    pub end_s: f64,
    /// Late answers released together at its end.
    pub answers: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SideInfo {
    pub rule: SideRule,
    /// What decided it, in words (e.g. "frames from MAC 00:1b:..:01 are side A").
    pub decided_by: String,
    pub hosts_a: u64,
    pub hosts_b: u64,
    /// Each side's capacity, A's then B's, where none of its hosts sent
    /// packet pairs enough for an estimate of its own: the
    /// `capacity_percentile` of the pairs of any two sizes that all its
    /// hosts sent, pooled (more than `capacity_min_samples` of them). Its
    /// hosts take it as they take the side's median where some have one.
    #[serde(default, skip_serializing_if = "no_pooled_capacity")]
    pub pooled_capacity_bps: [Option<f64>; 2],
}

fn no_pooled_capacity(c: &[Option<f64>; 2]) -> bool {
    c.iter().all(Option::is_none)
}

/// Counts behind a TCP application class.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassCounts {
    pub sessions: u64,
    /// Of the sessions, those not kept whole (too long, or over the
    /// memory budget): whole-session replay draws that share from the
    /// marginals, so the long sessions it cannot replay are not lost.
    #[serde(default)]
    pub sessions_unkept: u64,
    pub rres: u64,
    pub connections: u64,
    /// Of the connections, those whose two sides sent at once.
    #[serde(default)]
    pub concurrent_connections: u64,
    pub pairs: u64,
    pub request_bytes: u64,
    pub response_bytes: u64,
    /// IP bytes of the class's packets, A to B and B to A.
    pub bytes: [u64; 2],
    pub packets: [u64; 2],
}

/// The structural model of one TCP application class in one direction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppClass {
    /// e.g. "HTTP", "HTTPS", "tcp-8080".
    pub name: String,
    /// Server ports seen for this class.
    pub ports: Vec<u16>,
    /// The side the clients are on: requests flow from it.
    pub clients: Side,
    pub counts: ClassCounts,
    /// Session start times, seconds from the start of the trace.
    pub session_start_s: Dist,
    pub rres_per_session: Dist,
    /// Distinct servers a session's connections went to.
    #[serde(default)]
    pub servers_per_session: Dist,
    /// From the end of an RRE (its last connection's end) to the next RRE's
    /// first connection, seconds.
    pub inter_rre_s: Dist,
    pub conns_per_rre: Dist,
    /// Between the starts of consecutive connections of an RRE, seconds.
    pub inter_conn_s: Dist,
    pub pairs_per_conn: Dist,
    pub request_bytes: Dist,
    pub response_bytes: Dist,
    /// Request think time: from the end of a response to the next request on
    /// the same connection, seconds.
    pub think_s: Dist,
    /// From a connection's handshake to its first request, seconds (a
    /// browser's preconnect waits for the page that needs it). Empty in
    /// models written before it was measured: no wait.
    #[serde(default)]
    pub connect_wait_s: Dist,
    /// The server's time before it answers: from a request's last packet to
    /// its response's first, less the capture-to-server round trip of the
    /// connection's handshake, seconds. Empty: the server answers at once.
    #[serde(default)]
    pub server_s: Dist,
    /// How long a connection that closed with FIN or RST stayed open after
    /// its last exchange (an idle keep-alive), seconds. Empty: it closes
    /// at once.
    #[serde(default)]
    pub close_wait_s: Dist,
    /// Requests and responses as observed `[bytes, application writes]`
    /// (writes end at PSH flags), sorted by bytes; see `write_size`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub request_writes: Vec<[f64; 2]>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub response_writes: Vec<[f64; 2]>,
    /// Concurrent connections, whole (a uniform sample of at most 1000):
    /// each as [offset s from its side's start (the client's connect, the
    /// server's accept), direction (0: client to server), bytes] per data
    /// unit (a run of one side's bytes), sorted by offset within each side.
    /// Request/response pairs cannot describe a connection whose two sides
    /// send at once: its responses do not wait for its requests.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub concurrent: Vec<Vec<[f64; 3]>>,
    /// Whole sessions (up to `ExtractOptions::session_structures`), sorted by
    /// start; the marginals above describe all sessions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sessions: Vec<SessionSample>,
}

/// One observed session, whole: what Swing's marginals draw independently,
/// kept together (a page load's heavy first connections stay first).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionSample {
    /// Seconds from the start of the trace.
    pub start_s: f64,
    pub rres: Vec<RreSample>,
    /// The trace hosts it reached, as indices into the model's `hosts`:
    /// its client, then each server in the order it reached them
    /// (`ConnSample::server` k is `hosts[k + 1]`). Empty in models from
    /// before it was recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<u32>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RreSample {
    /// From the end of the previous RRE (0 for the first), seconds, less the
    /// client's RTT as for `inter_rre_s`.
    pub gap_s: f64,
    pub conns: Vec<ConnSample>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConnSample {
    /// From the RRE's first connection's start, seconds.
    pub at_s: f64,
    /// [request bytes, response bytes, think time before the request in
    /// seconds (less the client's RTT; for the first, its wait after the
    /// handshake)].
    pub pairs: Vec<[f64; 3]>,
    /// Each pair's server time, seconds (see `AppClass::server_s`); -1
    /// where it could not be measured (the handshake was missed, or the
    /// request was retransmitted), for the generator to draw; empty when
    /// all are 0.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_s: Vec<f64>,
    /// From the last pair's end to the close, seconds (see
    /// `AppClass::close_wait_s`; 0 when the trace did not see it close).
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub close_s: f64,
    /// A concurrent connection (both sides sent at once: HTTP/2,
    /// pipelining): each side's data units at their own times, as Tmix
    /// replays them, instead of the pairs (see `AppClass::concurrent`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub adus: Vec<[f64; 3]>,
    /// Which of the session's servers: 0 for the first it reached, 1 for
    /// the second, and so on (a page load fetches from several).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub server: u32,
    /// Per pair, the response on another connection of the RRE its request
    /// followed: [that connection's index in the RRE, its pair's index,
    /// seconds from that response's end to this request, less the client's
    /// RTT], when that response ended after this connection's own last (a
    /// browser fires requests on several connections at once when one
    /// response arrives); null otherwise; empty when no pair has one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<Option<[f64; 3]>>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_zero_f64(x: &f64) -> bool {
    *x == 0.0
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

/// One observed UDP flow (sampled as a whole, so its parts stay consistent).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UdpFlow {
    /// Offset of the flow's start from the start of the trace, seconds.
    pub start_s: f64,
    pub duration_s: f64,
    /// From the initiator, and back (IP packets and bytes).
    pub packets: [u64; 2],
    pub bytes: [u64; 2],
    /// From the flow's first packet to the responder's first, seconds.
    #[serde(default)]
    pub reply_s: f64,
    /// Every packet, when kept (flows of up to `UDP_SEQUENCE_CAP` packets,
    /// with `session_structures` above 0): [offset from the flow's start in
    /// seconds, direction (0 from the initiator, 1 back), IP bytes].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sequence: Vec<[f64; 3]>,
}

/// Longest UDP flow whose packets are kept one by one.
pub const UDP_SEQUENCE_CAP: usize = 1000;

/// UDP flows of one class in one direction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UdpClass {
    pub name: String,
    pub ports: Vec<u16>,
    /// The side that sent each flow's first packet.
    pub initiators: Side,
    pub flows: u64,
    /// Up to `DIST_CAP` flows (all of them for smaller traces).
    pub samples: Vec<UdpFlow>,
    /// Gaps between consecutive packets of a flow in one direction (from
    /// the initiator, back), seconds: how bursty the flows are inside.
    #[serde(default)]
    pub packet_gap_s: [Dist; 2],
    /// IP packet sizes in each direction.
    #[serde(default)]
    pub packet_bytes: [Dist; 2],
}

/// The path between one host and the observed link.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostParams {
    pub addr: String,
    pub side: Side,
    /// Round-trip time between the host and the link: the
    /// `ExtractOptions::rtt_percentile` of its samples.
    pub rtt_s: Option<f64>,
    pub rtt_samples: u64,
    /// Data-to-ACK samples left out of `rtt_s` for coming in under half the
    /// host's fastest handshake: ACKs from a middlebox that splits TCP (a
    /// NAT or proxy) between the capture and the host, which then also
    /// paced what the capture shows of the host's sending.
    #[serde(default)]
    pub rtt_samples_split: u64,
    /// Passive packet-pair estimate of the host's access capacity.
    pub capacity_bps: Option<f64>,
    pub capacity_samples: u64,
    /// Of its consecutive equal-size segments that arrived at the capacity
    /// or faster, the share that arrived more than twice as fast: the path
    /// delivered packets together (frame aggregation, receive batching).
    /// See `net::LinkConfig::bunching`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bunched: Option<f64>,
    pub loss: Option<f64>,
    /// The part of `loss` that happened after the link (retransmissions of
    /// segments the capture saw; Swing's p_down): the link carries the lost
    /// copies too. The rest happened before it.
    #[serde(default)]
    pub loss_after_link: Option<f64>,
    /// Data packets the loss estimate is based on.
    pub loss_packets: u64,
    /// Segments lost per loss episode (a run of its receivers' duplicate
    /// and selective ACKs until the data lacked arrived), at least 1: how
    /// `loss` came, one segment at a time or in bursts (a queue overflowing
    /// drops several of one flight), which TCP answers with one recovery
    /// each. Its virtual host loses in runs of this mean length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_burst: Option<f64>,
    /// Completed handshakes whose SYN (client) or SYN/ACK (server) the host
    /// sent, and how many of those it sent again: a SYN repeated, or a
    /// SYN/ACK repeated more often than the SYN asking for it. The loss of
    /// handshakes, which `loss` (measured on data segments) does not
    /// describe: a path that drops the tails of bursts passes lone SYNs.
    #[serde(default)]
    pub handshakes: u64,
    #[serde(default)]
    pub handshake_retx: u64,
    /// Median MSS seen on the host's SYNs.
    pub mss: Option<u32>,
    /// IP bytes and packets the host sent across the link (its weight).
    pub bytes: u64,
    pub packets: u64,
    /// Most bytes the host sent or received in any 10 ms, as a rate: what
    /// its path carried at least, whatever the packet pairs say.
    #[serde(default)]
    pub peak_rate_bps: f64,
    /// Full-sized segments acknowledged per pure ACK the host sent (about 1
    /// for a receiver that ACKs every segment, 2 for delayed ACKs), when it
    /// sent enough ACKs to tell.
    #[serde(default)]
    pub segments_per_ack: Option<f64>,
    /// New-data bytes the host received per pure ACK it sent (same hosts):
    /// what its virtual host reproduces.
    #[serde(default)]
    pub bytes_per_ack: Option<f64>,
    /// The host's delayed-ACK timeout, seconds: the median hold of its ACKs
    /// of one segment (not sent again) that waited for a timer, less its
    /// round trip.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ack_delay_s: Option<f64>,
    /// Whether most of the host's SYNs offered TCP timestamps (12 header
    /// bytes on every segment when both ends do) and SACK.
    #[serde(default)]
    pub timestamps: Option<bool>,
    #[serde(default)]
    pub sack: Option<bool>,
    /// The median first flight of its connections, segments: its initial
    /// window (counted when a pause of a quarter RTT followed the flight).
    #[serde(default)]
    pub initial_window: Option<u32>,
    /// How its window grew in slow start, from the pairs of rounds of its
    /// first data that showed it (`growth_rounds`): 0 by one segment per
    /// ACK, 1 by the bytes each ACK acknowledged (RFC 3465, Linux), in
    /// between a share of the way. Models without it: byte counting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub growth_per_byte: Option<f64>,
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub growth_rounds: u64,
    /// False where its flights of short segments held more segments than
    /// a window counting packets (Linux's) could: its window counts bytes.
    /// Absent otherwise (the group's TCP decides).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packet_window: Option<bool>,
    /// The 90th percentile of the windows it advertised while receiving
    /// data (scaled), bytes, from at least 20: the most its stack let a
    /// sender have in flight, which caps a flow at window / RTT.
    #[serde(default)]
    pub rcv_window: Option<u64>,
    /// The most it sustained while sending back to back, when that was well
    /// below its capacity: a token bucket in its path.
    #[serde(default)]
    pub shaper: Option<HostShaper>,
    /// The capture was taken on this host (see `CapturePoint`): it has no
    /// loss before the capture, capacity, bunching or shaper of its own;
    /// the path beyond is in its peers' estimates, and its `loss` is its
    /// segments lost beyond the capture, all of them `loss_after_link`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub at_capture: bool,
}

/// Hosts of one side whose packets reached the capture serialised at one
/// common rate: a line (a home's access link, an office uplink, a shared
/// radio channel) between them and the capture point, which sent each
/// packet of one host that queued behind another's exactly its own
/// serialisation time later, and none closer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Line {
    pub side: Side,
    /// Its hosts' addresses, as in `hosts` (at least two, all of `side`).
    pub hosts: Vec<String>,
    /// Bit/s of IP bytes at which it sent their packets towards the
    /// capture point: the direction it was seen in. The other direction
    /// crosses it after the capture and is not measured.
    pub rate_bps: f64,
    /// Packets of one host that followed another host's within a tolerance
    /// of one serialisation at `rate_bps` (the evidence), and those that
    /// followed closer than the line could send them.
    pub back_to_back: u64,
    pub faster: u64,
}

/// A host whose bursts left at its capacity but whose longer sends did not
/// exceed a lower rate: bursts of up to `burst_bytes` above `rate_bps`,
/// and at the shorter scales no more than each of `peaks` allows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostShaper {
    pub rate_bps: f64,
    pub burst_bytes: u64,
    /// Sending stretches the rate was measured on.
    pub stretches: u64,
    /// Faster buckets, [bit/s, bytes]: the pieces of the concave hull of
    /// the most the host sent in 1-32 ms windows steeper than `rate_bps`,
    /// so no window of the regenerated host's sending holds more than the
    /// trace host's did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub peaks: Vec<[f64; 2]>,
}

impl HostParams {
    /// A host that sent `bytes` and has no estimate of anything (a base
    /// for hand-built models).
    pub fn unmeasured(addr: &str, side: Side, bytes: u64) -> HostParams {
        HostParams {
            addr: addr.into(),
            side,
            rtt_s: None,
            rtt_samples: 0,
            rtt_samples_split: 0,
            capacity_bps: None,
            capacity_samples: 0,
            bunched: None,
            loss: None,
            loss_after_link: None,
            loss_packets: 0,
            loss_burst: None,
            handshakes: 0,
            handshake_retx: 0,
            mss: None,
            bytes,
            packets: 0,
            peak_rate_bps: 0.0,
            segments_per_ack: None,
            bytes_per_ack: None,
            ack_delay_s: None,
            timestamps: None,
            sack: None,
            initial_window: None,
            growth_per_byte: None,
            growth_rounds: 0,
            packet_window: None,
            rcv_window: None,
            shaper: None,
            at_capture: false,
        }
    }
}

impl HostShaper {
    /// Every bucket, (bit/s, bytes): the sustained one and the peaks.
    pub fn buckets(&self) -> impl Iterator<Item = (f64, u64)> + '_ {
        std::iter::once((self.rate_bps, self.burst_bytes)).chain(self.peaks.iter().map(|p| (p[0], p[1] as u64)))
    }
}

/// The whole model file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Model {
    pub format: String,
    pub traces: Vec<TraceInfo>,
    pub options: ExtractOptions,
    pub link: LinkStats,
    pub sides: SideInfo,
    pub classes: Vec<AppClass>,
    pub udp: Vec<UdpClass>,
    pub hosts: Vec<HostParams>,
    /// Hosts that shared a line (none in `/1` files).
    #[serde(default)]
    pub lines: Vec<Line>,
}

/// Completed handshakes a host (or else its side) needs for a handshake
/// loss rate of its own.
pub const HANDSHAKES_MIN: u64 = 10;

/// A host whose RTT to the observed link is at most this (s) is at the
/// capture point (the capturing machine itself, or beside it)...
pub const AT_CAPTURE_RTT_S: f64 = 100e-6;
/// ...and, without a packet-pair capacity of its own, gets an access link
/// of this rate (bit/s), a network interface's, not its peak rate.
pub const AT_CAPTURE_BPS: f64 = 1e9;

/// A host's network parameters with gaps filled, for generation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NetTuple {
    pub rtt_s: f64,
    pub capacity_bps: f64,
    pub loss: f64,
    /// Of `loss`, what happens after the link (0 when not measured).
    pub loss_after: f64,
    /// Mean run of segments lost together (1: each loss alone).
    pub loss_burst: f64,
    /// Loss of its SYNs or SYN/ACKs (`loss` applies to its other packets).
    pub handshake_loss: f64,
    /// Sampling weight: the host's bytes.
    pub weight: f64,
    /// The host's own ACK behaviour, if measured (no side fill: ACK
    /// behaviour is a property of each host's stack).
    pub segments_per_ack: Option<f64>,
    pub bytes_per_ack: Option<f64>,
    pub ack_delay_s: Option<f64>,
    pub timestamps: Option<bool>,
    pub sack: Option<bool>,
    pub initial_window: Option<u32>,
    /// Its slow start's growth per byte acknowledged (no side fill: a
    /// property of its stack).
    pub growth_per_byte: Option<f64>,
    /// Whether its window counts packets, where the trace showed it did not.
    pub packet_window: Option<bool>,
    pub rcv_window: Option<u64>,
    pub shaper: Option<HostShaper>,
    /// Share of its packets its path delivered bunched (no side fill).
    pub bunched: f64,
    /// The host's SYN MSS, if seen (no side fill either).
    pub mss: Option<u32>,
    /// The host has an IPv6 address.
    pub ipv6: bool,
    /// The line it shared (an index into `Model::lines`).
    pub line: Option<usize>,
}

/// The value at half the total weight of (value, weight) pairs.
pub fn weighted_median(mut v: Vec<(f64, f64)>) -> Option<f64> {
    v.retain(|(x, w)| x.is_finite() && *w > 0.0);
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let half = v.iter().map(|(_, w)| w).sum::<f64>() / 2.0;
    let mut acc = 0.0;
    for (x, w) in &v {
        acc += w;
        if acc >= half {
            return Some(*x);
        }
    }
    v.last().map(|(x, _)| *x)
}

/// The largest model file read: a long trace's model runs to tens of MB.
pub const MODEL_MAX_BYTES: u64 = 1 << 30;

/// Why a model file could not be loaded.
#[derive(Debug)]
pub enum LoadError {
    Read(units::read::ReadError),
    /// Not JSON, or not a model's fields: serde's message.
    Parse(String),
    /// A model whose values are out of range (`Model::check`).
    Invalid(String),
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Read(e) => write!(f, "{e}"),
            LoadError::Parse(e) => write!(f, "not a swing model: {e} (make one with `undertow extract TRACE -o MODEL.json`)"),
            LoadError::Invalid(e) => write!(f, "{e}"),
        }
    }
}

impl Model {
    /// Reads, parses and checks a model file.
    pub fn load(path: &std::path::Path) -> Result<Model, LoadError> {
        let text = units::read::read_text(path, MODEL_MAX_BYTES).map_err(LoadError::Read)?;
        let m: Model = serde_json::from_str(&text).map_err(|e| {
            // Another kind of JSON file, or another version of the format,
            // is named as such rather than by its first odd field.
            #[derive(Deserialize)]
            struct Tag {
                format: Option<serde_json::Value>,
            }
            match serde_json::from_str::<Tag>(&text).map(|t| t.format) {
                Ok(Some(serde_json::Value::String(f))) if FORMATS_READ.contains(&f.as_str()) => LoadError::Parse(parse_message(&e)),
                Ok(Some(serde_json::Value::String(f))) => LoadError::Invalid(unsupported(&f)),
                Ok(_) => {
                    LoadError::Invalid(format!("not a swing model (no \"format\": {FORMAT:?}; make one with `undertow extract TRACE -o MODEL.json`)"))
                }
                Err(_) => LoadError::Parse(parse_message(&e)),
            }
        })?;
        m.check().map_err(LoadError::Invalid)?;
        Ok(m)
    }

    /// Network tuples of the hosts on `side`. A host without its own value
    /// gets the median of the side's hosts that have one, each weighted by
    /// its bytes (Swing gave such hosts the others' median; weighting lets
    /// the hosts that carry the traffic, whose estimates rest on the most
    /// samples, speak for the side); a side none of whose hosts has a
    /// capacity uses its pooled one (`SideInfo::pooled_capacity_bps`). A
    /// side with no value at all uses `fallback` (rtt s, capacity bit/s,
    /// loss), except that a host without a capacity estimate is never
    /// given less than its observed peak rate, and a side with no estimate
    /// at all uses its hosts' peak rates.
    pub fn net_tuples(&self, side: Side, fallback: (f64, f64, f64)) -> Vec<NetTuple> {
        let hosts: Vec<&HostParams> = self.hosts.iter().filter(|h| h.side == side).collect();
        let fill = |f: fn(&HostParams) -> Option<f64>, default: f64| {
            weighted_median(hosts.iter().filter_map(|h| f(h).map(|x| (x, h.bytes.max(1) as f64))).collect()).unwrap_or(default)
        };
        let rtt = fill(|h| h.rtt_s, fallback.0);
        let side_cap = weighted_median(hosts.iter().filter_map(|h| h.capacity_bps.map(|x| (x, h.bytes.max(1) as f64))).collect())
            .or(self.sides.pooled_capacity_bps[side.index()]);
        let loss = fill(|h| h.loss, fallback.2);
        let burst = fill(|h| h.loss_burst, 1.0);
        // Handshake loss rests on few samples per host: a host with fewer
        // than HANDSHAKES_MIN takes its side's pooled rate; a side with too
        // few (or a model from before the counts) the host's `loss`.
        let (n, r) = hosts.iter().fold((0, 0), |(n, r), h| (n + h.handshakes, r + h.handshake_retx));
        let side_hs = (n >= HANDSHAKES_MIN).then(|| r as f64 / n as f64);
        // Initial windows go with the era of the stacks a side runs: a host
        // whose flights could not be counted takes its side's median.
        let iw = weighted_median(hosts.iter().filter_map(|h| h.initial_window.map(|w| (w as f64, h.bytes.max(1) as f64))).collect());
        let line_of: std::collections::HashMap<&str, usize> =
            self.lines.iter().enumerate().filter(|(_, l)| l.side == side).flat_map(|(i, l)| l.hosts.iter().map(move |a| (a.as_str(), i))).collect();
        hosts
            .iter()
            .map(|h| NetTuple {
                rtt_s: h.rtt_s.unwrap_or(rtt),
                // What reached a host at the capture point had crossed every
                // link of its path already: another serialisation after the
                // observed link, at its peak rate, would spread the bursts it
                // received, and the ACKs they set off, thinning the finest
                // scales of its sending.
                capacity_bps: h.capacity_bps.unwrap_or_else(|| match side_cap {
                    _ if h.at_capture || h.rtt_s.is_some_and(|r| r <= AT_CAPTURE_RTT_S) => AT_CAPTURE_BPS.max(h.peak_rate_bps),
                    Some(c) => c.max(h.peak_rate_bps),
                    None if h.peak_rate_bps > 0.0 => h.peak_rate_bps,
                    None => fallback.1,
                }),
                // A host at the capture point lost nothing before it: without
                // segments enough to measure, it is given none, not its side's.
                loss: h.loss.unwrap_or(if h.at_capture { 0.0 } else { loss }),
                loss_after: h.loss.and(h.loss_after_link).unwrap_or(0.0),
                loss_burst: h.loss_burst.unwrap_or(burst),
                handshake_loss: if h.handshakes >= HANDSHAKES_MIN {
                    h.handshake_retx as f64 / h.handshakes as f64
                } else {
                    side_hs.unwrap_or(h.loss.unwrap_or(loss))
                }
                .clamp(0.0, 1.0),
                weight: h.bytes.max(1) as f64,
                segments_per_ack: h.segments_per_ack,
                bytes_per_ack: h.bytes_per_ack,
                ack_delay_s: h.ack_delay_s,
                timestamps: h.timestamps,
                sack: h.sack,
                initial_window: h.initial_window.or(iw.map(|w| w as u32)),
                growth_per_byte: h.growth_per_byte,
                packet_window: h.packet_window,
                rcv_window: h.rcv_window,
                shaper: h.shaper.clone(),
                bunched: h.bunched.unwrap_or(0.0).clamp(0.0, 1.0),
                mss: h.mss,
                ipv6: h.addr.contains(':'),
                line: line_of.get(h.addr.as_str()).copied(),
            })
            .collect()
    }

    /// Checks the format tag and that every value is within the ranges
    /// extraction produces, so that a model edited by hand (or damaged)
    /// is refused on load with the field named, not run with degenerate
    /// traffic. Every reader of model files (the scenario, `inspect`,
    /// `validate`) loads through this.
    pub fn check(&self) -> Result<(), String> {
        if !FORMATS_READ.contains(&self.format.as_str()) {
            return Err(unsupported(&self.format));
        }
        if self.format != FORMAT && !self.lines.is_empty() {
            return Err(format!("lines: format {:?} has no lines (they came with {FORMAT:?})", self.format));
        }
        self.check_lines()?;
        for (c, side) in self.sides.pooled_capacity_bps.iter().zip(["a", "b"]) {
            if let Some(c) = *c {
                if !(c.is_finite() && (1.0..=MAX_BPS).contains(&c)) {
                    return Err(format!("sides.pooled_capacity_bps ({side}) is {c}: expected 1 to {MAX_BPS:e} bit/s"));
                }
            }
        }
        let l = &self.link;
        seconds(l.duration_s, "link.duration_s")?;
        for (i, st) in l.stalls.iter().enumerate() {
            seconds(st.start_s, &format!("link.stalls[{i}].start_s"))?;
            seconds(st.end_s, &format!("link.stalls[{i}].end_s"))?;
            if st.end_s < st.start_s {
                return Err(format!("link.stalls[{i}]: end_s is before start_s"));
            }
        }
        for (i, c) in self.classes.iter().enumerate() {
            c.check().map_err(|e| format!("classes[{i}] ({:?}): {e}", c.name))?;
        }
        for (i, u) in self.udp.iter().enumerate() {
            u.check().map_err(|e| format!("udp[{i}] ({:?}): {e}", u.name))?;
        }
        for (i, h) in self.hosts.iter().enumerate() {
            h.check().map_err(|e| format!("hosts[{i}] ({}): {e}", short(&h.addr)))?;
        }
        for (i, c) in self.classes.iter().enumerate() {
            for (j, s) in c.sessions.iter().enumerate() {
                self.check_session_hosts(s).map_err(|e| format!("classes[{i}] ({:?}): sessions[{j}].hosts: {e}", c.name))?;
            }
        }
        Ok(())
    }

    /// A kept session's hosts are the model's: its client and one for each
    /// server its connections name.
    fn check_session_hosts(&self, s: &SessionSample) -> Result<(), String> {
        if s.hosts.is_empty() {
            return Ok(());
        }
        if let Some(&h) = s.hosts.iter().find(|&&h| h as usize >= self.hosts.len()) {
            return Err(format!("index {h} is past the model's {} hosts", self.hosts.len()));
        }
        let servers = s.rres.iter().flat_map(|r| r.conns.iter().map(|k| k.server as usize + 1)).max().unwrap_or(0);
        if s.hosts.len() <= servers {
            return Err(format!("{} hosts for a client and {servers} servers", s.hosts.len()));
        }
        Ok(())
    }
}

/// Why a format tag is refused.
fn unsupported(f: &str) -> String {
    format!("format {:?} is not supported: expected {}", short(f), FORMATS_READ.map(|f| format!("{f:?}")).join(" or "))
}

impl Model {
    /// Each line's hosts are hosts of its side in `hosts`, each on one line
    /// at most, two or more a line, at a rate a model may hold.
    fn check_lines(&self) -> Result<(), String> {
        let side_of: std::collections::HashMap<&str, Side> = self.hosts.iter().map(|h| (h.addr.as_str(), h.side)).collect();
        let mut taken = std::collections::HashSet::new();
        for (i, l) in self.lines.iter().enumerate() {
            let name = format!("lines[{i}]");
            if !(l.rate_bps.is_finite() && (1.0..=MAX_BPS).contains(&l.rate_bps)) {
                return Err(format!("{name}.rate_bps is {}: expected 1 to {MAX_BPS:e} bit/s", l.rate_bps));
            }
            if l.hosts.len() < 2 {
                return Err(format!("{name}.hosts holds {} host: a line is shared by two or more", l.hosts.len()));
            }
            for a in &l.hosts {
                match side_of.get(a.as_str()) {
                    None => return Err(format!("{name}.hosts: {} is not in hosts", short(a))),
                    Some(s) if *s != l.side => return Err(format!("{name}.hosts: {} is not a host of side {:?}", short(a), l.side)),
                    _ => {}
                }
                if !taken.insert(a.as_str()) {
                    return Err(format!("{name}.hosts: {} is on another line too: a host shares one line", short(a)));
                }
            }
        }
        Ok(())
    }
}

/// serde's message, without a quoted value long enough to be a file's contents.
fn parse_message(e: &serde_json::Error) -> String {
    let m = e.to_string();
    if m.len() <= 240 {
        return m;
    }
    let cut: String = m.chars().take(200).collect();
    format!("{cut}... (line {}, column {})", e.line(), e.column())
}

/// A host address as quoted in a message (it may be anything in a damaged file).
fn short(s: &str) -> String {
    let mut t: String = s.chars().take(48).collect();
    if t.len() < s.len() {
        t.push_str("...");
    }
    t
}

/// Seconds: finite and not negative.
fn seconds(v: f64, name: &str) -> Result<(), String> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(format!("{name} is {v}: expected seconds, 0 or more"))
    }
}

/// A value within [lo, hi].
fn within(v: f64, lo: f64, hi: f64, name: &str) -> Result<(), String> {
    if v.is_finite() && (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err(format!("{name} is {v}: expected {lo} to {hi}"))
    }
}

/// Sorted, finite, non-negative values.
fn check_dist(d: &Dist, name: &str) -> Result<(), String> {
    if d.values.windows(2).any(|w| w[0] > w[1]) || d.values.iter().any(|v| !v.is_finite() || *v < 0.0) {
        return Err(format!("{name} must hold sorted, finite, non-negative values"));
    }
    Ok(())
}

/// The most a rate in a model may be (bit/s): as a scenario's rates.
const MAX_BPS: f64 = 1e15;

impl AppClass {
    fn check(&self) -> Result<(), String> {
        // Concurrent connections are data units, not pairs.
        let pairs = self.counts.connections > self.counts.concurrent_connections;
        for (name, d, needed) in [
            ("session_start_s", &self.session_start_s, true),
            ("rres_per_session", &self.rres_per_session, true),
            ("servers_per_session", &self.servers_per_session, false),
            ("inter_rre_s", &self.inter_rre_s, false),
            ("conns_per_rre", &self.conns_per_rre, true),
            ("inter_conn_s", &self.inter_conn_s, false),
            ("pairs_per_conn", &self.pairs_per_conn, pairs),
            ("request_bytes", &self.request_bytes, pairs),
            ("response_bytes", &self.response_bytes, pairs),
            ("think_s", &self.think_s, false),
            ("connect_wait_s", &self.connect_wait_s, false),
            ("server_s", &self.server_s, false),
            ("close_wait_s", &self.close_wait_s, false),
        ] {
            if d.values.is_empty() && self.counts.connections > 0 && needed {
                return Err(format!("{name} has no values"));
            }
            check_dist(d, name)?;
        }
        for (name, w) in [("request_writes", &self.request_writes), ("response_writes", &self.response_writes)] {
            if w.iter().any(|e| !(e[0].is_finite() && e[0] >= 1.0 && e[1].is_finite() && e[1] >= 1.0)) || w.windows(2).any(|p| p[0][0] > p[1][0]) {
                return Err(format!("{name} must hold [bytes ≥ 1, writes ≥ 1] sorted by bytes"));
            }
        }
        for s in &self.sessions {
            seconds(s.start_s, "a session's start_s")?;
            for r in &s.rres {
                seconds(r.gap_s, "a session RRE's gap_s")?;
                for k in &r.conns {
                    k.check(r)?;
                }
            }
        }
        let units = self.concurrent.iter().chain(self.sessions.iter().flat_map(|s| s.rres.iter().flat_map(|r| r.conns.iter().map(|k| &k.adus))));
        for u in units.flatten() {
            if !(u[0].is_finite() && u[0] >= 0.0 && (u[1] == 0.0 || u[1] == 1.0) && u[2].is_finite() && u[2] >= 1.0) {
                return Err(format!("data unit {u:?} must be [offset s ≥ 0, direction 0 or 1, bytes ≥ 1]"));
            }
        }
        Ok(())
    }
}

impl ConnSample {
    /// A connection of RRE `rre`, whole.
    fn check(&self, rre: &RreSample) -> Result<(), String> {
        seconds(self.at_s, "a session connection's at_s")?;
        for p in &self.pairs {
            if !p.iter().all(|v| v.is_finite() && *v >= 0.0) {
                return Err(format!("a session connection's pair {p:?} must be [request bytes ≥ 0, response bytes ≥ 0, think s ≥ 0]"));
            }
        }
        if !self.after.is_empty() && self.after.len() != self.pairs.len() {
            return Err(format!("a session connection has {} pairs but {} `after` entries", self.pairs.len(), self.after.len()));
        }
        for a in self.after.iter().flatten() {
            let conn = rre.conns.get(a[0] as usize).filter(|_| a[0].fract() == 0.0 && a[0] >= 0.0);
            let pair_ok = conn.is_some_and(|o| a[1].fract() == 0.0 && a[1] >= 0.0 && (a[1] as usize) < o.pairs.len());
            if !(pair_ok && a[2].is_finite() && a[2] >= 0.0) {
                return Err("`after` entries must name a connection of the RRE and one of its pairs, with seconds ≥ 0".into());
            }
        }
        if !self.server_s.is_empty() && self.server_s.len() != self.pairs.len() {
            return Err(format!("a session connection has {} pairs but {} server times", self.pairs.len(), self.server_s.len()));
        }
        if self.server_s.iter().any(|&v| !(v.is_finite() && (v >= 0.0 || v == -1.0))) {
            return Err("server_s must hold seconds ≥ 0, or -1 for unknown".into());
        }
        seconds(self.close_s, "close_s")
    }
}

impl UdpClass {
    fn check(&self) -> Result<(), String> {
        for f in &self.samples {
            seconds(f.start_s, "a flow's start_s")?;
            seconds(f.duration_s, "a flow's duration_s")?;
            seconds(f.reply_s, "a flow's reply_s")?;
            for p in &f.sequence {
                if !(p[0].is_finite() && p[0] >= 0.0 && (p[1] == 0.0 || p[1] == 1.0) && p[2].is_finite() && p[2] >= 1.0) {
                    return Err(format!("packet {p:?} must be [offset s ≥ 0, direction 0 or 1, bytes ≥ 1]"));
                }
            }
        }
        for (k, d) in self.packet_gap_s.iter().enumerate() {
            check_dist(d, &format!("packet_gap_s[{k}]"))?;
        }
        for (k, d) in self.packet_bytes.iter().enumerate() {
            check_dist(d, &format!("packet_bytes[{k}]"))?;
        }
        Ok(())
    }
}

impl HostParams {
    fn check(&self) -> Result<(), String> {
        if self.addr.parse::<std::net::IpAddr>().is_err() {
            return Err("addr is not an IPv4 or IPv6 address".into());
        }
        if let Some(r) = self.rtt_s {
            within(r, 0.0, 3600.0, "rtt_s")?;
        }
        if let Some(c) = self.capacity_bps {
            if !(c.is_finite() && (1.0..=MAX_BPS).contains(&c)) {
                return Err(format!("capacity_bps is {c}: expected 1 to {MAX_BPS:e} bit/s"));
            }
        }
        within(self.peak_rate_bps, 0.0, MAX_BPS, "peak_rate_bps")?;
        for (name, v) in [("loss", self.loss), ("loss_after_link", self.loss_after_link), ("bunched", self.bunched)] {
            if let Some(v) = v {
                within(v, 0.0, 1.0, name)?;
            }
        }
        if let Some(b) = self.loss_burst {
            within(b, 1.0, 1e6, "loss_burst")?;
        }
        if self.handshake_retx > self.handshakes.saturating_mul(1000) {
            return Err("handshake_retx is more than a thousand per handshake".into());
        }
        if let Some(m) = self.mss {
            if !(1..=65535).contains(&m) {
                return Err(format!("mss is {m}: expected 1 to 65535 bytes"));
            }
        }
        for (name, v) in [("segments_per_ack", self.segments_per_ack), ("bytes_per_ack", self.bytes_per_ack)] {
            if let Some(v) = v {
                if !(v.is_finite() && v > 0.0) {
                    return Err(format!("{name} is {v}: expected a number above 0"));
                }
            }
        }
        if let Some(d) = self.ack_delay_s {
            within(d, 0.0, 60.0, "ack_delay_s")?;
        }
        if self.initial_window == Some(0) {
            return Err("initial_window is 0: expected at least 1 segment".into());
        }
        if let Some(g) = self.growth_per_byte {
            within(g, 0.0, 1.0, "growth_per_byte")?;
        }
        if self.rcv_window == Some(0) {
            return Err("rcv_window is 0: expected at least 1 byte".into());
        }
        if let Some(sh) = &self.shaper {
            for (rate, burst) in sh.buckets() {
                if !(rate.is_finite() && (1.0..=MAX_BPS).contains(&rate)) || burst == 0 {
                    return Err(format!("shaper bucket ({rate} bit/s, {burst} bytes): expected 1 to {MAX_BPS:e} bit/s and at least 1 byte"));
                }
            }
        }
        Ok(())
    }
}

fn default_pause_gap_s() -> Option<f64> {
    Some(0.2)
}

fn default_unit_gap_s() -> Option<f64> {
    Some(0.001)
}

fn default_shaper_max_fraction() -> Option<f64> {
    Some(0.5)
}

fn default_shaper_min_segments() -> u32 {
    16
}

fn default_session_structures() -> u32 {
    1000
}

impl Default for ExtractOptions {
    /// The documented defaults (docs/swing-model.md says why each).
    fn default() -> Self {
        ExtractOptions {
            session_key: SessionKey::Client,
            rre_gap_s: 2.0,
            rre_max_interconn_s: 30.0,
            session_gap_s: 300.0,
            session_max_s: None,
            max_rres_per_session: 100,
            max_conns_per_rre: 100,
            max_pairs_per_conn: 200,
            idle_timeout_s: 300.0,
            pause_gap_s: default_pause_gap_s(),
            unit_gap_s: default_unit_gap_s(),
            rtt_samples: RttSamples::HandshakeElseData,
            rtt_min_samples: 2,
            rtt_max_s: 1.5,
            rtt_percentile: default_rtt_percentile(),
            capacity_percentile: 50.0,
            capacity_min_samples: 10,
            shaper_max_fraction: default_shaper_max_fraction(),
            shaper_min_segments: default_shaper_min_segments(),
            loss_formula: LossFormula::Swing,
            loss_min_packets: 100,
            session_structures: default_session_structures(),
            think_minus_rtt: true,
            ports: default_ports(),
            sides: SideRule::Auto,
            lines: true,
        }
    }
}

/// The 10th percentile: a host's RTT as propagation delay with little
/// queueing (see docs/swing-model.md).
fn default_rtt_percentile() -> f64 {
    10.0
}

fn median() -> f64 {
    50.0
}

/// Well-known server ports and their class names.
pub fn default_ports() -> Vec<(u16, String)> {
    [
        (20, "FTP-DATA"),
        (21, "FTP"),
        (22, "SSH"),
        (23, "TELNET"),
        (25, "SMTP"),
        (53, "DNS"),
        (80, "HTTP"),
        (110, "POP3"),
        (119, "NNTP"),
        (123, "NTP"),
        (143, "IMAP"),
        (443, "HTTPS"),
        (554, "RTSP"),
        (873, "RSYNC"),
        (993, "IMAPS"),
        (995, "POP3S"),
        (1935, "RTMP"),
        (3128, "SQUID"),
        (5228, "GCM"),
        (6881, "BITTORRENT"),
        (8080, "HTTP-ALT"),
        (8443, "HTTPS-ALT"),
    ]
    .into_iter()
    .map(|(p, n)| (p, n.to_string()))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(side: Side, rtt: Option<f64>, cap: Option<f64>, bytes: u64) -> HostParams {
        HostParams { rtt_s: rtt, capacity_bps: cap, ..HostParams::unmeasured("10.0.0.1", side, bytes) }
    }

    #[test]
    fn capture_loss_is_the_unseen_share_of_the_payload() {
        let d = DirStats { tcp_bytes: 1500, unseen_bytes: 1000, tcp_payload_bytes: Some(3000), ..Default::default() };
        assert_eq!(d.capture_loss(), 0.25);
        // A model written before the payload was counted: its TCP bytes.
        let old: DirStats = serde_json::from_str(
            r#"{"packets": 3, "bytes": 1600, "mean_rate_bps": 0.0, "tcp_bytes": 1500, "udp_bytes": 0, "other_bytes": 100, "unseen_bytes": 500}"#,
        )
        .unwrap();
        assert_eq!((old.tcp_payload_bytes, old.capture_loss()), (None, 0.25));
        assert_eq!(DirStats::default().capture_loss(), 0.0);
    }

    #[test]
    fn a_trace_entry_written_before_truncated_tails_were_recorded_loads_with_none() {
        let old: TraceInfo =
            serde_json::from_str(r#"{"path": "t.pcap", "packets": 3, "bytes": 180, "start_s": 1.0, "duration_s": 0.5, "skipped": 0, "non_ip": 0}"#)
                .unwrap();
        assert_eq!(old.truncated_tail_bytes, 0);
    }

    #[test]
    fn a_model_written_before_lines_loads_with_none_and_says_none_were_looked_for() {
        // A `/1` file from before line detection (the fuzzing corpus keeps one).
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/model_loader/simulated.json");
        let m = Model::load(&path).unwrap();
        assert_eq!(m.format, "undertow.swing-model/1");
        assert!(m.lines.is_empty() && !m.options.lines);
        assert!(m.net_tuples(Side::A, (0.1, 1e9, 0.0)).iter().all(|t| t.line.is_none()));
        // Written again, it is a `/2` file that says so.
        let again: Model = serde_json::from_str(&serde_json::to_string(&Model { format: FORMAT.into(), ..m }).unwrap()).unwrap();
        again.check().unwrap();
        assert!(again.lines.is_empty() && !again.options.lines);
    }

    #[test]
    fn a_hosts_line_is_in_its_network_tuple() {
        let mut m = crate::example::four_sessions();
        m.lines = vec![Line { side: Side::B, hosts: vec!["192.0.2.2".into(), "192.0.2.1".into()], rate_bps: 5e6, back_to_back: 10, faster: 0 }];
        m.check().unwrap();
        let b = m.net_tuples(Side::B, (0.1, 1e9, 0.0));
        assert_eq!(b.iter().map(|t| t.line).collect::<Vec<_>>(), [Some(0), Some(0)]);
        assert_eq!(m.net_tuples(Side::A, (0.1, 1e9, 0.0))[0].line, None);
    }

    #[test]
    fn weighted_median_follows_the_bytes() {
        assert_eq!(weighted_median(vec![(500.0, 1.0), (31.0, 90.0), (18.0, 4.0), (500.0, 1.0)]), Some(31.0));
        assert_eq!(weighted_median(vec![(1.0, 1.0), (2.0, 1.0), (3.0, 1.0)]), Some(2.0));
        assert_eq!(weighted_median(vec![]), None);
    }

    #[test]
    fn missing_host_values_take_the_side_median() {
        let m = Model {
            format: FORMAT.into(),
            traces: vec![],
            options: ExtractOptions::default(),
            link: LinkStats::default(),
            sides: SideInfo { rule: SideRule::Auto, decided_by: String::new(), hosts_a: 3, hosts_b: 1, pooled_capacity_bps: [None, None] },
            classes: vec![],
            udp: vec![],
            hosts: vec![
                host(Side::A, Some(0.010), Some(1e6), 10),
                host(Side::A, Some(0.030), None, 20),
                host(Side::A, None, Some(3e6), 0),
                host(Side::B, None, None, 5),
            ],
            lines: vec![],
        };
        let a = m.net_tuples(Side::A, (0.1, 1e9, 0.0));
        assert_eq!(a.len(), 3);
        // Capacity: 1 Mbps (weight 10) and 3 Mbps (weight 1): the bytes pick 1 Mbps.
        assert_eq!(a[1].capacity_bps, 1e6);
        // RTT: 10 ms (weight 10) and 30 ms (weight 20): 30 ms.
        assert_eq!(a[2].rtt_s, 0.030);
        assert_eq!(a[2].weight, 1.0);
        let b = m.net_tuples(Side::B, (0.1, 1e9, 0.0));
        assert_eq!((b[0].rtt_s, b[0].capacity_bps, b[0].loss), (0.1, 1e9, 0.0));
        // Observed peak rates bound capacities from below where nothing is estimated.
        let mut m = m;
        m.hosts[3].peak_rate_bps = 5e6;
        m.hosts[1].peak_rate_bps = 9e6;
        assert_eq!(m.net_tuples(Side::B, (0.1, 1e9, 0.0))[0].capacity_bps, 5e6);
        // A side none of whose hosts has a capacity takes its pooled one,
        // still no less than a host's peak rate.
        m.sides.pooled_capacity_bps = [Some(2e6), Some(80e6)];
        assert_eq!(m.net_tuples(Side::B, (0.1, 1e9, 0.0))[0].capacity_bps, 80e6);
        m.sides.pooled_capacity_bps[1] = Some(1e6);
        assert_eq!(m.net_tuples(Side::B, (0.1, 1e9, 0.0))[0].capacity_bps, 5e6);
        // Side A's hosts have capacities of their own: their median stands.
        assert_eq!(m.net_tuples(Side::A, (0.1, 1e9, 0.0))[1].capacity_bps, 9e6);
        m.sides.pooled_capacity_bps = [None, None];
        assert_eq!(m.net_tuples(Side::A, (0.1, 1e9, 0.0))[1].capacity_bps, 9e6);
        // A host at the capture point (6 µs away) without packet pairs gets
        // an interface's rate, not its peak; one with pairs keeps them.
        m.hosts[1].rtt_s = Some(6e-6);
        assert_eq!(m.net_tuples(Side::A, (0.1, 1e9, 0.0))[1].capacity_bps, AT_CAPTURE_BPS);
        m.hosts[1].capacity_bps = Some(20e6);
        assert_eq!(m.net_tuples(Side::A, (0.1, 1e9, 0.0))[1].capacity_bps, 20e6);
        m.hosts[1].capacity_bps = None;
        m.hosts[1].rtt_s = Some(0.030);
        // Initial windows: the side's byte-weighted median where not counted.
        m.hosts[0].initial_window = Some(4);
        m.hosts[1].initial_window = Some(10);
        let a = m.net_tuples(Side::A, (0.1, 1e9, 0.0));
        assert_eq!(a.iter().map(|t| t.initial_window).collect::<Vec<_>>(), [Some(4), Some(10), Some(10)]);
        assert_eq!(m.net_tuples(Side::B, (0.1, 1e9, 0.0))[0].initial_window, None);
    }

    #[test]
    fn handshake_loss_is_the_hosts_own_else_its_sides_else_its_loss() {
        let hs = |side, n, r, loss| HostParams { handshakes: n, handshake_retx: r, loss: Some(loss), ..host(side, None, None, 1) };
        let mut m = Model {
            format: FORMAT.into(),
            traces: vec![],
            options: ExtractOptions::default(),
            link: LinkStats::default(),
            sides: SideInfo { rule: SideRule::Auto, decided_by: String::new(), hosts_a: 2, hosts_b: 1, pooled_capacity_bps: [None, None] },
            classes: vec![],
            udp: vec![],
            // Side A: 20 handshakes, 1 sent again; and 4, 2 sent again.
            hosts: vec![hs(Side::A, 20, 1, 0.25), hs(Side::A, 4, 2, 0.25), hs(Side::B, 5, 0, 0.07)],
            lines: vec![],
        };
        let a = m.net_tuples(Side::A, (0.1, 1e9, 0.0));
        assert_eq!((a[0].handshake_loss, a[0].loss), (0.05, 0.25));
        // Too few of its own: its side's 3 of 24.
        assert_eq!(a[1].handshake_loss, 3.0 / 24.0);
        // A side with too few: the host's loss, as models before the counts.
        assert_eq!(m.net_tuples(Side::B, (0.1, 1e9, 0.0))[0].handshake_loss, 0.07);
        m.hosts[2].handshakes = 10;
        assert_eq!(m.net_tuples(Side::B, (0.1, 1e9, 0.0))[0].handshake_loss, 0.0);
    }

    #[test]
    fn loss_bursts_are_the_hosts_own_else_its_sides_else_single_losses() {
        let mut m = crate::example::four_sessions();
        let bursts = |m: &Model, side| m.net_tuples(side, (0.1, 1e9, 0.0)).iter().map(|t| t.loss_burst).collect::<Vec<_>>();
        assert_eq!(bursts(&m, Side::B), [1.0, 1.0]);
        assert_eq!(m.hosts[1].side, Side::B);
        m.hosts[1].loss_burst = Some(3.0);
        assert_eq!(bursts(&m, Side::B), [3.0, 3.0], "its own, and its side's for the other");
        m.hosts[2].loss_burst = Some(1.5);
        assert_eq!(bursts(&m, Side::B), [3.0, 1.5]);
        assert_eq!(bursts(&m, Side::A), [1.0], "not the other side's");
    }

    #[test]
    fn options_round_trip_through_json() {
        let o = ExtractOptions { sides: SideRule::Prefixes { a: vec!["10.0.0.0/8".into()] }, ..Default::default() };
        let s = serde_json::to_string(&o).unwrap();
        assert!(s.contains("\"method\":\"prefixes\""), "{s}");
        let back: ExtractOptions = serde_json::from_str(&s).unwrap();
        assert_eq!(back, o);
    }

    #[test]
    fn models_written_before_the_timing_fields_still_load() {
        // A session connection and a class as an earlier version wrote
        // them: no server times, waits or closes.
        let conn: ConnSample = serde_json::from_str(r#"{"at_s": 0.5, "pairs": [[300, 5000, 0], [200, 100, 0.1]]}"#).unwrap();
        assert!(conn.server_s.is_empty() && conn.close_s == 0.0 && conn.server == 0);
        let empty = r#"{"n": 0, "values": []}"#;
        let fields = [
            "session_start_s",
            "rres_per_session",
            "inter_rre_s",
            "conns_per_rre",
            "inter_conn_s",
            "pairs_per_conn",
            "request_bytes",
            "response_bytes",
            "think_s",
        ];
        let dists: Vec<String> = fields.iter().map(|f| format!("\"{f}\": {empty}")).collect();
        let class = format!(
            r#"{{"name": "HTTP", "ports": [80], "clients": "a", "counts": {{"sessions": 0, "rres": 0, "connections": 0, "pairs": 0, "request_bytes": 0, "response_bytes": 0, "bytes": [0, 0], "packets": [0, 0]}}, {}}}"#,
            dists.join(", ")
        );
        let c: AppClass = serde_json::from_str(&class).unwrap_or_else(|e| panic!("{e}: {class}"));
        assert!(c.connect_wait_s.is_empty() && c.server_s.is_empty() && c.close_wait_s.is_empty());
    }
}
