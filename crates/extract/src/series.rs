//! A trace as bytes and packets per time bin, in each direction of the
//! link: what the wavelet energy analysis of a trace reads.
//!
//! The direction of a packet is the side of its source host, taken from a
//! model's host list, so that a trace and the model extracted from it (and
//! the traffic regenerated from that model) agree on what "A to B" means.

use crate::damage::TraceDamage;
use crate::error::ExtractError;
use crate::input::{self, Merge};
use std::collections::HashMap;
use std::net::IpAddr;
use std::path::PathBuf;
use swing::{Model, Side};

/// The most bins a series holds (each direction's bytes and packets): a
/// finer bin over a longer trace would exhaust memory, so it is refused.
pub const MAX_BINS: usize = 20_000_000;

/// Per-bin counts from the start of the trace. Index 0 is A to B.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Series {
    pub bin_s: f64,
    /// Timestamp of bin 0, nanoseconds since the Unix epoch.
    pub start_ns: i64,
    pub bytes: [Vec<f64>; 2],
    pub packets: [Vec<f64>; 2],
    /// IP packets neither of whose hosts has a side (not counted in a bin).
    pub unplaced: u64,
    /// Frames the capture recorded twice, passed over as extraction does.
    pub duplicates: u64,
    /// Each file with damaged records or a truncated tail: the bins hold
    /// only what could be read.
    pub damaged: Vec<TraceDamage>,
}

/// The side of each host of `model`.
pub fn host_sides(model: &Model) -> HashMap<IpAddr, Side> {
    model.hosts.iter().filter_map(|h| h.addr.parse().ok().map(|a| (a, h.side))).collect()
}

/// Bins `paths` (merged in time order as one link) into `bin_s` bins, the
/// direction of each packet from `sides` (by source host, else by the
/// destination's opposite). Bins start at the model's first timestamp if
/// given, else at the first packet.
pub fn series(paths: &[PathBuf], bin_s: f64, sides: &HashMap<IpAddr, Side>, start_s: Option<f64>) -> Result<Series, ExtractError> {
    if !(bin_s > 0.0 && bin_s.is_finite()) {
        return Err(ExtractError::Options(format!("bin {bin_s} s: expected a positive duration")));
    }
    let srcs = paths.iter().map(|p| input::open(p)).collect::<Result<Vec<_>, _>>()?;
    let mut merge = Merge { srcs };
    let bin_ns = (bin_s * 1e9).round().max(1.0) as i64;
    let mut s = Series { bin_s: bin_ns as f64 * 1e-9, ..Default::default() };
    let mut start = start_s.map(|t| (t * 1e9).round() as i64);
    while let Some(h) = merge.next()? {
        let Ok(p) = &h.res else { continue };
        let t0 = *start.get_or_insert(h.ts);
        let dir = match (sides.get(&p.ip.src), sides.get(&p.ip.dst)) {
            (Some(side), _) => side.index(),
            (None, Some(side)) => side.other().index(),
            (None, None) => {
                s.unplaced += 1;
                continue;
            }
        };
        // Slightly out-of-order packets before the start go into bin 0.
        let i = ((h.ts - t0).max(0) / bin_ns) as usize;
        if i >= MAX_BINS {
            return Err(ExtractError::Limit(format!(
                "bins of {} s: the trace's first {:.6} s already need more than {MAX_BINS}, the most a series holds: use a longer bin",
                s.bin_s,
                (h.ts - t0) as f64 * 1e-9
            )));
        }
        for v in [&mut s.bytes[dir], &mut s.packets[dir]] {
            if v.len() <= i {
                v.resize(i + 1, 0.0);
            }
        }
        s.bytes[dir][i] += p.ip.total_len as f64;
        s.packets[dir][i] += 1.0;
    }
    s.start_ns = start.unwrap_or(0);
    s.damaged = merge.srcs.iter().filter_map(TraceDamage::of).collect();
    s.duplicates = merge.srcs.iter().map(|x| x.info.duplicates).sum();
    let n = s.bytes.iter().map(Vec::len).max().unwrap_or(0);
    for v in s.bytes.iter_mut().chain(s.packets.iter_mut()) {
        v.resize(n, 0.0);
    }
    Ok(s)
}

/// [`series`] with the sides and start of a model extracted from the same traces.
pub fn series_for_model(paths: &[PathBuf], bin_s: f64, model: &Model) -> Result<Series, ExtractError> {
    let start = model.traces.iter().map(|t| t.start_s).reduce(f64::min);
    series(paths, bin_s, &host_sides(model), start)
}
