//! Swing model extraction: packet traces of one link to the structural
//! model `swing::Model` (users → sessions → RREs → connections →
//! request/response pairs, plus per-host RTT, capacity and loss).
//!
//! One streaming pass (`pipeline`) over the files merged in time order
//! (`input`): each decoded packet updates its host (`hosts`), its TCP
//! connection (`tcpflow`; each direction a byte stream, `stream`;
//! `exchanges` cutting request/response pairs) or UDP flow (`udp`). A
//! connection's pairs and parts go to its class (`classes`) and to its
//! session key's queue (`grouping`) through `sink`. What needs the whole
//! trace — sides (`sides`), RTT estimates, capacity filtering, loss
//! classification (`netparams`), hosts that shared a line (`lines`) — is
//! decided at the end (`model`).
//! Memory grows with concurrent connections, active session keys and
//! hosts; samples are held in reservoirs of fixed size (`reservoir`).
//!
//! Deterministic: the same inputs and options give byte-identical model
//! JSON (fixed-seed reservoirs, sorted traversals of every hash map).
//!
//! # Estimators, and where Swing's paper and code differ
//!
//! Options choose between the paper and the released code (Swing 0.3.1)
//! where the two differ; the rest follows the code unless noted.
//! * Sizes: sequence advance per direction (the other side's ACKs where a
//!   direction was not captured); an element missing from a pair (server
//!   speaks first, request unanswered) is 1 byte, Swing's minimum.
//! * Connections with no data (failed or idle handshakes) are not in the
//!   model, as Swing dropped "PAIRS 0"; those with more than
//!   `max_pairs_per_conn` pairs are split into consecutive connections
//!   (Swing's `filtermaxnumpairs`), so no pair is lost.
//! * Grouping: the code's rules with the options' thresholds; sessions are
//!   formed within one application class (Swing grouped each class's
//!   connections separately), so a session's class is its first
//!   connection's. Keys: `SessionKey::Client` (paper) or `ClientServer` (code).
//! * Think and inter-RRE times minus the client's RTT (the median of its
//!   side's hosts' if it has none, as `massage_reqthink`), floored at 0.
//! * RTT: `RttSamples::Handshake` (code), `HandshakeAndData` (paper) or
//!   `HandshakeElseData` (the default: handshakes where a host has enough);
//!   samples in (0, `rtt_max_s`]; Karn: retransmitted SYNs, SYN/ACKs and
//!   timed segments give none; the host's RTT is their `rtt_percentile`
//!   by Swing's lower rule (`vals_prctile`: the value at ⌊p·(n−1)/100⌋).
//! * Capacity: the code's packet pairs; pairs spaced at least the 5th
//!   percentile of the *sending* host's RTT are dropped (the code used the
//!   destination's); `capacity_percentile` (75 = the paper's "median of the
//!   upper half").
//! * Loss: the code's formula; a hole counts per filling segment (the code
//!   counted missing MSS-sized segments), classified against the sender's
//!   RTT (100 ms if none). Swing's forcing of loss to 0 for hosts
//!   under 500 kbit/s capacity is not applied.
//! * UDP (absent from Swing): whole flows, sampled.
//!
//! ```no_run
//! let opts = swing::ExtractOptions::default();
//! let (model, report) = extract::extract(&["trace.pcap".into()], &opts, &mut |_| true)?;
//! println!("{} classes from {} packets", model.classes.len(), report.packets);
//! # Ok::<(), extract::ExtractError>(())
//! ```

mod classes;
mod damage;
mod dedup;
mod direction;
mod error;
mod events;
mod exchanges;
mod flowkey;
pub mod grouping;
mod growth;
mod hosts;
mod input;
mod lines;
mod model;
mod netparams;
mod options;
mod pipeline;
mod record;
mod reservoir;
mod series;
mod shaping;
mod sides;
mod sink;
mod slots;
mod stalls;
mod stream;
mod tally;
mod tcpflow;
mod udp;
mod window_unit;

pub use damage::TraceDamage;
pub use direction::{direction, side_name, DirPacket, DirectionPackets};
pub use error::ExtractError;
pub use events::{read_events, EventList, EVENT_LINES};
pub use exchanges::{Element, Pair};
pub use options::Thresholds;
pub use record::{ConnRecord, EndReason};
pub use reservoir::{DIST_RESERVOIR, HOST_RESERVOIR, MSS_RESERVOIR, UDP_RESERVOIR};
pub use series::{host_sides, series, series_for_model, Series, MAX_BINS as SERIES_MAX_BINS};
pub use tally::TALLY_BUCKETS;

use input::{Merge, Src};
use options::Compiled;
use pipeline::Extractor;
use std::io::Read;
use std::path::PathBuf;
use swing::{ExtractOptions, Model};

/// Counts from one extraction (no wall-clock values, so reports of two runs
/// compare equal). Serializes to JSON for callers that pass it on.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Report {
    /// Records read, and their wire bytes.
    pub packets: u64,
    pub bytes: u64,
    pub ip_packets: u64,
    pub tcp_packets: u64,
    pub udp_packets: u64,
    pub other_ip_packets: u64,
    /// Damaged records the reader skipped, and bytes it could not read at
    /// the end of files.
    pub skipped_records: u64,
    pub truncated_tail_bytes: u64,
    /// Each file with damaged records or a truncated tail: where, and how
    /// much of it could not be read.
    pub damaged: Vec<TraceDamage>,
    /// Frames that were not IP (ARP, LLDP, ...) or of an unsupported link type.
    pub non_ip: u64,
    /// Frames the capture recorded twice (`dedup`): passed over.
    pub duplicates: u64,
    /// IP frames whose headers could not be decoded.
    pub decode_errors: u64,
    /// Packets earlier than one already processed.
    pub out_of_order: u64,
    pub hosts: u64,
    /// TCP connections reconstructed (a reused 5-tuple counts each time).
    pub tcp_connections: u64,
    /// ...of which first seen without their SYN (open at the trace start, or
    /// SYN not captured).
    pub tcp_without_syn: u64,
    /// ...of which carried no data: not in the model.
    pub tcp_without_data: u64,
    /// Connections in the model (those with more than `max_pairs_per_conn`
    /// pairs count once per part).
    pub tcp_modelled: u64,
    pub pairs: u64,
    pub sessions: u64,
    /// Sessions with more pairs than `grouping::SESSION_PAIR_CAP`, kept only
    /// as marginal samples, never whole.
    pub sessions_too_long: u64,
    /// Sessions not kept whole because `SESSION_PAIR_BUDGET` pairs were
    /// held already (they are in the marginals).
    pub sessions_over_budget: u64,
    pub udp_flows: u64,
    /// Peak state: open TCP connections, closed tuples remembered, UDP
    /// flows, session keys, connections waiting for grouping.
    pub peak_tcp_entries: u64,
    pub peak_closed_tuples: u64,
    pub peak_udp_flows: u64,
    pub peak_group_keys: u64,
    pub peak_pending: u64,
    /// Values held at the end (classes, UDP flows, hosts): at most
    /// `TALLY_BUCKETS` buckets or `DIST_RESERVOIR` samples per class and
    /// distribution, `UDP_RESERVOIR` flows and 4 tallies per UDP class,
    /// 5 × `HOST_RESERVOIR` + `MSS_RESERVOIR` per host.
    pub stored_values: u64,
    pub tcp_classes: u64,
    pub udp_classes: u64,
    /// Pairs of hosts whose cross-host gaps were kept for line detection,
    /// and samples of pairs beyond that cap, not kept.
    pub line_pairs: u64,
    pub line_samples_dropped: u64,
    /// (class, client host) counters kept.
    pub class_host_entries: u64,
}

/// How often (in packets) the progress callback is called.
pub const PROGRESS_EVERY: u64 = 1 << 16;

/// Extracts the model from trace files (pcap or pcapng), merged in time
/// order as one observation of the link. `progress` is called with the
/// packet count every [`PROGRESS_EVERY`] packets; returning false cancels.
pub fn extract(paths: &[PathBuf], opts: &ExtractOptions, progress: &mut dyn FnMut(u64) -> bool) -> Result<(Model, Report), ExtractError> {
    let srcs = paths.iter().map(|p| input::open(p)).collect::<Result<Vec<_>, _>>()?;
    let (m, r, _) = run(srcs, opts, progress, false)?;
    Ok((m, r))
}

/// As [`extract`], from readers of pcap or pcapng bytes, each with the
/// name used in messages and `TraceInfo::path`.
pub fn extract_readers(
    sources: Vec<(String, Box<dyn Read>)>,
    opts: &ExtractOptions,
    progress: &mut dyn FnMut(u64) -> bool,
) -> Result<(Model, Report), ExtractError> {
    let (m, r, _) = run(readers(sources)?, opts, progress, false)?;
    Ok((m, r))
}

/// Debugging and testing view: every TCP connection the extractor
/// rebuilt, sorted by start, client and server. Not part of the model; its
/// fields may change with the extractor.
pub fn connections(paths: &[PathBuf], opts: &ExtractOptions) -> Result<Vec<ConnRecord>, ExtractError> {
    let srcs = paths.iter().map(|p| input::open(p)).collect::<Result<Vec<_>, _>>()?;
    Ok(run(srcs, opts, &mut |_| true, true)?.2)
}

/// [`connections`] from readers.
pub fn connections_readers(sources: Vec<(String, Box<dyn Read>)>, opts: &ExtractOptions) -> Result<Vec<ConnRecord>, ExtractError> {
    Ok(run(readers(sources)?, opts, &mut |_| true, true)?.2)
}

fn readers(sources: Vec<(String, Box<dyn Read>)>) -> Result<Vec<Src>, ExtractError> {
    sources.into_iter().map(|(name, r)| Ok(Src::new(name.clone(), wire::TraceReader::new(r, name)?))).collect()
}

fn run(
    srcs: Vec<Src>,
    opts: &ExtractOptions,
    progress: &mut dyn FnMut(u64) -> bool,
    record: bool,
) -> Result<(Model, Report, Vec<ConnRecord>), ExtractError> {
    let o = Compiled::new(opts)?;
    if srcs.is_empty() {
        return Err(ExtractError::Options("no trace given: pass at least one pcap or pcapng file".into()));
    }
    let mut ex = Extractor::new(o, record);
    let mut merge = Merge { srcs };
    let mut n: u64 = 0;
    while let Some(h) = merge.next()? {
        n += 1;
        if let Ok(p) = &h.res {
            ex.packet(h.ts, p);
        }
        if n.is_multiple_of(PROGRESS_EVERY) && !progress(n) {
            return Err(ExtractError::Cancelled);
        }
    }
    progress(n);
    ex.finish_flows();
    let mut recs = ex.tcp.sink.records.take().unwrap_or_default();
    let (model, report) = model::assemble(ex, &merge.srcs);
    recs.sort_by_key(|r| (r.start_ns, r.client, r.server));
    Ok((model, report, recs))
}
