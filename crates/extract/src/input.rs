//! Trace files as one time-ordered packet stream.
//!
//! Several files are one observation of the link (e.g. its two directions
//! captured apart, Swing's file0/file1): a k-way merge on timestamps, one
//! decoded record read ahead per file. Within a file records come in file
//! order, which may be slightly out of time order; nothing downstream
//! assumes sorted input. A frame the capture recorded twice (`dedup`) is
//! counted and passed over.

use crate::dedup::Recent;
use crate::error::ExtractError;
use std::fs::File;
use std::io::Read;
use std::path::Path;
use wire::{DecodeError, PacketInfo, TraceError, TraceReader};

pub(crate) type Reader = TraceReader<Box<dyn Read>>;

/// Per-file counts for `TraceInfo`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SrcInfo {
    pub packets: u64,
    pub bytes: u64,
    pub tmin: Option<i64>,
    pub tmax: Option<i64>,
    pub non_ip: u64,
    pub decode_errors: u64,
    /// Records passed over as the capture's second copy of a frame.
    pub duplicates: u64,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Head {
    pub ts: i64,
    pub res: Result<PacketInfo, DecodeError>,
}

pub(crate) struct Src {
    pub name: String,
    pub r: Reader,
    head: Option<Head>,
    done: bool,
    pub info: SrcInfo,
    recent: Recent,
}

impl Src {
    pub(crate) fn new(name: String, r: Reader) -> Src {
        Src { name, r, head: None, done: false, info: SrcInfo::default(), recent: Recent::default() }
    }

    #[inline]
    fn pull(&mut self) -> Result<Option<Head>, TraceError> {
        loop {
            let Some(rec) = self.r.read_next()? else {
                self.done = true;
                return Ok(None);
            };
            let res = rec.decode();
            let i = &mut self.info;
            i.packets += 1;
            i.bytes += rec.orig_len as u64;
            match &res {
                Err(DecodeError::NotIp(_) | DecodeError::UnsupportedLinkType(_)) => i.non_ip += 1,
                Err(_) => i.decode_errors += 1,
                Ok(p) if self.recent.is_copy(rec.ts_ns, rec.data, rec.orig_len, p) => {
                    i.duplicates += 1;
                    continue;
                }
                Ok(_) => {}
            }
            i.tmin = Some(i.tmin.map_or(rec.ts_ns, |t| t.min(rec.ts_ns)));
            i.tmax = Some(i.tmax.map_or(rec.ts_ns, |t| t.max(rec.ts_ns)));
            return Ok(Some(Head { ts: rec.ts_ns, res }));
        }
    }
}

/// Opens a file: a missing or unreadable file is `Io`, a bad header `Trace`.
pub(crate) fn open(path: &Path) -> Result<Src, ExtractError> {
    let f = File::open(path).map_err(|err| ExtractError::Io { path: path.to_path_buf(), err })?;
    let name = path.display().to_string();
    let r = TraceReader::new(Box::new(f) as Box<dyn Read>, name.clone())?;
    Ok(Src::new(name, r))
}

pub(crate) struct Merge {
    pub srcs: Vec<Src>,
}

impl Merge {
    /// The next record across all files, earliest timestamp first (ties:
    /// the earlier file).
    #[inline]
    pub(crate) fn next(&mut self) -> Result<Option<Head>, TraceError> {
        if let [one] = &mut self.srcs[..] {
            return one.pull();
        }
        let mut best: Option<(usize, i64)> = None;
        for (i, s) in self.srcs.iter_mut().enumerate() {
            if s.head.is_none() && !s.done {
                s.head = s.pull()?;
            }
            if let Some(h) = &s.head {
                if best.is_none_or(|(_, t)| h.ts < t) {
                    best = Some((i, h.ts));
                }
            }
        }
        Ok(best.and_then(|(i, _)| self.srcs[i].head.take()))
    }
}
