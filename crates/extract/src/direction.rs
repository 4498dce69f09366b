//! One direction of a trace: the packets its side's hosts sent, in time
//! order, each with its time since the trace's start, its IP size and its
//! flow, for a generator that plays them back.
//!
//! The side of a packet is its source host's, else the opposite of its
//! destination's, from a model's host list (as [`crate::series`] bins
//! them), so that a direction means what `undertow extract` calls it.

use crate::damage::TraceDamage;
use crate::error::ExtractError;
use crate::input::{self, Merge};
use rustc_hash::FxHashMap;
use std::collections::HashMap;
use std::net::IpAddr;
use std::path::PathBuf;
use swing::Side;
use wire::Transport;

/// One packet of a direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirPacket {
    /// Nanoseconds since the trace's start.
    pub t_ns: u64,
    /// IP packet size, from its header.
    pub size: u32,
    /// Its flow (addresses, protocol and ports), numbered in order of first
    /// appearance from 0.
    pub flow: u32,
}

/// The packets one side sent, and what the pass saw.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DirectionPackets {
    /// In time order (ties in file order).
    pub packets: Vec<DirPacket>,
    /// Distinct flows among them.
    pub flows: u32,
    /// IP packets read in both directions.
    pub ip_packets: u64,
    /// IP packets neither of whose hosts has a side.
    pub unplaced: u64,
    /// Each file with damaged records or a truncated tail.
    pub damaged: Vec<TraceDamage>,
}

type FlowTuple = (IpAddr, IpAddr, u8, u16, u16);

/// The packets of `paths` (merged in time order as one link) sent from
/// side `side`, timed from `start_ns` (the trace's first packet if None;
/// earlier packets count from 0). More than `max_packets` is refused with
/// the limit named.
pub fn direction(
    paths: &[PathBuf],
    sides: &HashMap<IpAddr, Side>,
    side: Side,
    start_ns: Option<i64>,
    max_packets: usize,
) -> Result<DirectionPackets, ExtractError> {
    let srcs = paths.iter().map(|p| input::open(p)).collect::<Result<Vec<_>, _>>()?;
    let mut merge = Merge { srcs };
    let mut out = DirectionPackets::default();
    let mut flows: FxHashMap<FlowTuple, u32> = FxHashMap::default();
    let mut start = start_ns;
    while let Some(h) = merge.next()? {
        let Ok(p) = &h.res else { continue };
        out.ip_packets += 1;
        let t0 = *start.get_or_insert(h.ts);
        let from = match (sides.get(&p.ip.src), sides.get(&p.ip.dst)) {
            (Some(s), _) => *s,
            (None, Some(s)) => s.other(),
            (None, None) => {
                out.unplaced += 1;
                continue;
            }
        };
        if from != side {
            continue;
        }
        if out.packets.len() >= max_packets {
            return Err(ExtractError::Limit(format!(
                "side {} sent more than {max_packets} packets, the most a playback holds: play a part of the trace",
                side_name(side)
            )));
        }
        let (sport, dport) = match p.transport {
            Transport::Tcp(t) => (t.src_port, t.dst_port),
            Transport::Udp(u) => (u.src_port, u.dst_port),
            _ => (0, 0),
        };
        let next = flows.len() as u32;
        let flow = *flows.entry((p.ip.src, p.ip.dst, p.ip.proto, sport, dport)).or_insert(next);
        out.packets.push(DirPacket { t_ns: (h.ts - t0).max(0) as u64, size: p.ip.total_len, flow });
    }
    // Records a little out of time order within a file take their place.
    out.packets.sort_by_key(|p| p.t_ns);
    out.flows = flows.len() as u32;
    out.damaged = merge.srcs.iter().filter_map(TraceDamage::of).collect();
    Ok(out)
}

/// "a" or "b", as models and scenarios write sides.
pub fn side_name(side: Side) -> &'static str {
    match side {
        Side::A => "a",
        Side::B => "b",
    }
}
