//! What the reader could not read of a trace file, said in one line: a
//! model or a series from a file mostly lost must not pass for the file's.

use crate::input::Src;
use std::fmt;

/// The damage met in one trace file, once it was read to the end.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct TraceDamage {
    pub path: String,
    /// Bytes in the file, read or not.
    pub file_bytes: u64,
    /// Damaged records or blocks passed over, reading going on after them,
    /// and their bytes.
    pub skipped: u64,
    pub skipped_bytes: u64,
    /// Bytes at the end that could not be read, from `tail_offset` on.
    pub truncated_tail: u64,
    /// File offset of the first damage.
    pub offset: u64,
    /// File offset where reading stopped, if it stopped before the end.
    pub tail_offset: Option<u64>,
}

impl TraceDamage {
    /// The damage of a file read to the end; None if there was none.
    pub(crate) fn of(src: &Src) -> Option<TraceDamage> {
        let s = src.r.stats();
        Some(TraceDamage {
            path: src.name.clone(),
            // At the end of the input the offset is the file's length.
            file_bytes: src.r.offset(),
            skipped: s.skipped,
            skipped_bytes: s.skipped_bytes,
            truncated_tail: s.truncated_tail,
            offset: s.damage_offset?,
            tail_offset: s.tail_offset,
        })
    }

    pub fn unread_bytes(&self) -> u64 {
        self.skipped_bytes + self.truncated_tail
    }

    /// The share of the file's bytes read as headers and records.
    pub fn read_share(&self) -> f64 {
        match self.file_bytes {
            0 => 1.0,
            n => 1.0 - self.unread_bytes().min(n) as f64 / n as f64,
        }
    }

    /// Why a file read under `min_read_share` of its bytes cannot be
    /// modelled, in one line.
    pub fn refusal(&self, min_read_share: f64) -> String {
        format!(
            "{}: {} of its bytes could be read, below the {} required ({})",
            self.path,
            percent(self.read_share()),
            percent(min_read_share),
            self.place()
        )
    }

    /// Where the damage was: where it began and, if so, where reading stopped.
    fn place(&self) -> String {
        match (self.skipped, self.tail_offset) {
            (0, Some(t)) => format!("reading stopped at byte offset {t}"),
            (_, Some(t)) => {
                format!("damaged records from byte offset {}, reading stopped at byte offset {t}", self.offset)
            }
            (_, None) => format!("damaged records from byte offset {}", self.offset),
        }
    }
}

/// `bad.pcap: reading stopped at byte offset 49044: 457489 of 506533 bytes
/// (90.3%) could not be read`, with the damaged records skipped if any.
impl fmt::Display for TraceDamage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unread = self.unread_bytes();
        let share = percent(1.0 - self.read_share());
        write!(f, "{}: {}: {unread} of {} bytes ({share}) could not be read", self.path, self.place(), self.file_bytes)?;
        match (self.skipped, self.truncated_tail) {
            (0, _) => Ok(()),
            (n, 0) => write!(f, " ({n} damaged records skipped)"),
            (n, t) => write!(f, " ({n} damaged records skipped, {t} bytes at the end)"),
        }
    }
}

/// A share as a percentage to 0.1, never rounded to 0% or 100% when it is
/// not quite that.
fn percent(x: f64) -> String {
    match x {
        _ if x > 0.0 && x < 0.001 => "under 0.1%".into(),
        _ if x < 1.0 && x > 0.999 => "over 99.9%".into(),
        _ => format!("{:.1}%", x * 100.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn damage(skipped: u64, skipped_bytes: u64, tail: u64) -> TraceDamage {
        TraceDamage {
            path: "t.pcap".into(),
            file_bytes: 10_000,
            skipped,
            skipped_bytes,
            truncated_tail: tail,
            offset: 1000,
            tail_offset: (tail > 0).then_some(10_000 - tail),
        }
    }

    #[test]
    fn a_truncated_file_says_where_reading_stopped_and_how_much_was_lost() {
        let d = damage(0, 0, 9000);
        assert_eq!(d.to_string(), "t.pcap: reading stopped at byte offset 1000: 9000 of 10000 bytes (90.0%) could not be read");
        assert!((d.read_share() - 0.1).abs() < 1e-12);
        assert_eq!(d.refusal(0.9), "t.pcap: 10.0% of its bytes could be read, below the 90.0% required (reading stopped at byte offset 1000)");
    }

    #[test]
    fn skipped_records_say_where_the_damage_began_and_reading_went_on() {
        let d = damage(3, 216, 0);
        assert_eq!(
            d.to_string(),
            "t.pcap: damaged records from byte offset 1000: 216 of 10000 bytes (2.2%) could not be read (3 damaged records skipped)"
        );
        let d = damage(3, 216, 20);
        assert_eq!(
            d.to_string(),
            "t.pcap: damaged records from byte offset 1000, reading stopped at byte offset 9980: 236 of 10000 bytes (2.4%) \
             could not be read (3 damaged records skipped, 20 bytes at the end)"
        );
    }

    #[test]
    fn shares_are_never_rounded_to_none_or_all() {
        assert_eq!(damage(0, 0, 1).to_string().split(['(', ')']).nth(1), Some("under 0.1%"));
        assert_eq!(percent(0.9999), "over 99.9%");
        assert_eq!((percent(0.0), percent(1.0)), ("0.0%".into(), "100.0%".into()));
    }
}
