//! Human units at the edges: "15Mbps", "30ms", "1MB", "66%".
//!
//! Decimal prefixes are powers of 1000 for rates (Mbps = 10^6 bit/s) and
//! sizes (MB = 10^6 bytes); binary sizes are spelled KiB, MiB, GiB. Every
//! error message says what was given and what is allowed.

use crate::{Dur, Rate};
use std::fmt;

/// A value that could not be read, with the reason and the accepted forms
/// (or, for a well-formed value that cannot be represented, its range).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitError {
    pub input: String,
    pub what: &'static str,
    pub allowed: &'static str,
    /// The value is well formed but outside what the type can hold: a
    /// number is never clamped or rounded to zero silently.
    pub out_of_range: bool,
}

impl UnitError {
    /// `input` is not a `what` at all: `allowed` lists the forms.
    pub fn malformed(input: &str, what: &'static str, allowed: &'static str) -> UnitError {
        UnitError { input: shown(input), what, allowed, out_of_range: false }
    }

    /// `input` is a `what`, but outside `range`.
    pub fn range(input: &str, what: &'static str, range: &'static str) -> UnitError {
        UnitError { input: shown(input), what, allowed: range, out_of_range: true }
    }
}

/// The input as quoted in a message: at most 40 characters of it, so that a
/// value pasted by mistake (a whole file) does not make a message of pages.
fn shown(input: &str) -> String {
    const MAX: usize = 40;
    match input.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}...", &input[..i]),
        None => input.to_string(),
    }
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.out_of_range {
            write!(f, "{:?} is out of range for a {}: expected {}", self.input, self.what, self.allowed)
        } else {
            write!(f, "{:?} is not a valid {}: expected {}", self.input, self.what, self.allowed)
        }
    }
}
impl std::error::Error for UnitError {}

pub const RATE_FORMS: &str = "a positive number followed by bps, Kbps, Mbps, Gbps or Tbps (e.g. \"15Mbps\")";
pub const DURATION_FORMS: &str = "a number followed by ns, us, ms, s, min or h (e.g. \"30ms\")";
pub const SIZE_FORMS: &str = "a number followed by B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024) (e.g. \"1MB\")";
pub const FRACTION_FORMS: &str = "a percentage from 0% to 100% (e.g. \"1%\")";

/// The largest rate, size and duration a value may name, and their
/// resolution: beyond these a number would be clamped or rounded away.
pub const RATE_MAX_BPS: f64 = 1e15;
pub const RATE_RANGE: &str = "1bps to 1000Tbps";
pub const SIZE_MAX_BYTES: f64 = 1e15;
pub const SIZE_RANGE: &str = "0B to 1000TB, in whole bytes";
pub const DURATION_MAX_NS: f64 = 1e6 * 3600e9;
pub const DURATION_RANGE: &str = "0s, or 1ns to 1000000h";

/// Splits "12.5 Mbps" into (12.5, "Mbps").
fn split(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_digit()
                || c == '.'
                || c == '-'
                || c == '+'
                || ((c == 'e' || c == 'E') && i > 0 && s[i + 1..].starts_with(|d: char| d.is_ascii_digit() || d == '-' || d == '+')))
        })
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    let num: f64 = s[..end].parse().ok()?;
    if !num.is_finite() {
        return None;
    }
    Some((num, s[end..].trim()))
}

/// Parses a rate; zero and negative rates are errors.
pub fn rate(s: &str) -> Result<Rate, UnitError> {
    let err = || UnitError::malformed(s, "rate", RATE_FORMS);
    let (v, unit) = split(s).ok_or_else(err)?;
    let mult = match unit {
        "bps" | "bit/s" => 1.0,
        "Kbps" | "kbps" | "Kbit/s" | "kbit/s" | "kbit" | "Kbit" => 1e3,
        "Mbps" | "mbps" | "Mbit/s" | "mbit" | "Mbit" => 1e6,
        "Gbps" | "gbps" | "Gbit/s" | "gbit" | "Gbit" => 1e9,
        "Tbps" | "tbps" | "Tbit/s" | "tbit" | "Tbit" => 1e12,
        _ => return Err(err()),
    };
    let bits = v * mult;
    if v <= 0.0 {
        return Err(err());
    }
    if !(1.0..=RATE_MAX_BPS).contains(&bits) {
        return Err(UnitError::range(s, "rate", RATE_RANGE));
    }
    Ok(Rate(bits.round() as u64))
}

/// Parses a duration; negative values are errors, zero is allowed.
pub fn duration(s: &str) -> Result<Dur, UnitError> {
    let err = || UnitError::malformed(s, "duration", DURATION_FORMS);
    let (v, unit) = split(s).ok_or_else(err)?;
    let mult = match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" | "sec" => 1e9,
        "min" => 60e9,
        "h" => 3600e9,
        _ => return Err(err()),
    };
    if v < 0.0 {
        return Err(err());
    }
    let ns = v * mult;
    if ns > DURATION_MAX_NS || (ns > 0.0 && ns.round() < 1.0) {
        return Err(UnitError::range(s, "duration", DURATION_RANGE));
    }
    Ok(Dur(ns.round() as u64))
}

/// Parses a size in bytes; negative values are errors, zero is allowed.
pub fn size(s: &str) -> Result<u64, UnitError> {
    let err = || UnitError::malformed(s, "size", SIZE_FORMS);
    let (v, unit) = split(s).ok_or_else(err)?;
    let mult = size_unit(unit).ok_or_else(err)?;
    if v < 0.0 {
        return Err(err());
    }
    let b = v * mult;
    if b > SIZE_MAX_BYTES || (b.fract() != 0.0 && b < 1.0) {
        return Err(UnitError::range(s, "size", SIZE_RANGE));
    }
    Ok(b.round() as u64)
}

pub(crate) fn size_unit(unit: &str) -> Option<f64> {
    Some(match unit {
        "B" | "bytes" | "byte" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        "KiB" => 1024.0,
        "MiB" => 1048576.0,
        "GiB" => 1073741824.0,
        "TiB" => 1099511627776.0,
        _ => return None,
    })
}

/// Parses a fraction written as a percentage ("66%", "0.5%") into [0, 1].
pub fn fraction(s: &str) -> Result<f64, UnitError> {
    let err = || UnitError::malformed(s, "percentage", FRACTION_FORMS);
    let (v, unit) = split(s).ok_or_else(err)?;
    if unit != "%" || !(0.0..=100.0).contains(&v) {
        return Err(err());
    }
    Ok(v / 100.0)
}

pub(crate) fn fmt_duration(d: Dur, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let n = d.0;
    if n == 0 {
        write!(f, "0s")
    } else if n.is_multiple_of(1_000_000_000) {
        write!(f, "{}s", n / 1_000_000_000)
    } else if n.is_multiple_of(1_000_000) {
        write!(f, "{}ms", n / 1_000_000)
    } else if n.is_multiple_of(1_000) {
        write!(f, "{}us", n / 1_000)
    } else {
        write!(f, "{n}ns")
    }
}

pub(crate) fn fmt_rate(r: Rate, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let b = r.0;
    for (m, u) in [(1_000_000_000_000, "Tbps"), (1_000_000_000, "Gbps"), (1_000_000, "Mbps"), (1_000, "Kbps")] {
        if b >= m && b.is_multiple_of(m) {
            return write!(f, "{}{u}", b / m);
        }
    }
    if b >= 1_000_000 {
        write!(f, "{}Mbps", b as f64 / 1e6)
    } else {
        write!(f, "{b}bps")
    }
}

/// Formats a byte count the way [`size`] reads it back.
pub fn format_size(b: u64) -> String {
    for (m, u) in [(1_000_000_000, "GB"), (1_000_000, "MB"), (1_000, "KB")] {
        if b >= m && b.is_multiple_of(m) {
            return format!("{}{u}", b / m);
        }
    }
    format!("{b}B")
}

/// Formats a byte count in binary units when it is a whole number of them
/// (limits such as 16MiB).
pub fn format_size_binary(b: u64) -> String {
    for (m, u) in [(1u64 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")] {
        if b >= m && b.is_multiple_of(m) {
            return format!("{}{u}", b / m);
        }
    }
    format!("{b}B")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        assert_eq!(rate("15Mbps").unwrap(), Rate(15_000_000));
        assert_eq!(rate("1.5 Gbps").unwrap(), Rate(1_500_000_000));
        assert_eq!(rate("64kbps").unwrap(), Rate(64_000));
        assert_eq!(rate("100bps").unwrap(), Rate(100));
        for bad in ["0Mbps", "-5Mbps", "15", "15MBps", "fast", "", "Mbps", "nanMbps", "infMbps"] {
            assert!(rate(bad).is_err(), "{bad} accepted");
        }
        let e = rate("15Mbs").unwrap_err().to_string();
        assert!(e.contains("\"15Mbs\"") && e.contains("Mbps"), "{e}");
    }

    #[test]
    fn values_beyond_a_types_range_are_refused_not_clamped() {
        for (r, what) in [
            (rate("1e30Mbps"), "rate"),
            (rate("1e-30bps"), "rate"),
            (rate("0.4bps"), "rate"),
            (size("1e30B").map(Rate), "size"),
            (size("0.5B").map(Rate), "size"),
            (duration("1e-30s").map(|d| Rate(d.0)), "duration"),
            (duration("1e300h").map(|d| Rate(d.0)), "duration"),
        ] {
            let e = r.unwrap_err();
            assert!(e.out_of_range, "{e}");
            let m = e.to_string();
            assert!(m.contains("out of range for a ") && m.contains(what) && m.contains(" to "), "{m}");
        }
        assert_eq!(rate("1000Tbps").unwrap(), Rate(1_000_000_000_000_000));
        assert_eq!(duration("1ns").unwrap(), Dur(1));
        assert_eq!(duration("0.6ns").unwrap(), Dur(1));
        assert_eq!(size("1000TB").unwrap(), 1_000_000_000_000_000);
        // A long input is quoted in part.
        let e = rate(&"9".repeat(5000)).unwrap_err().to_string();
        assert!(e.len() < 200, "{e}");
    }

    #[test]
    fn durations() {
        assert_eq!(duration("30ms").unwrap(), Dur::from_millis(30));
        assert_eq!(duration("1.5s").unwrap(), Dur(1_500_000_000));
        assert_eq!(duration("250us").unwrap(), Dur(250_000));
        assert_eq!(duration("10min").unwrap(), Dur::from_secs(600));
        assert_eq!(duration("0s").unwrap(), Dur(0));
        assert_eq!(duration("1e-3s").unwrap(), Dur::from_millis(1));
        for bad in ["-1ms", "30", "30 sec s", "ms"] {
            assert!(duration(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(size("1MB").unwrap(), 1_000_000);
        assert_eq!(size("1MiB").unwrap(), 1_048_576);
        assert_eq!(size("1500B").unwrap(), 1500);
        assert_eq!(size("1.5KB").unwrap(), 1500);
        for bad in ["-1B", "1Mb", "12", "0.5B"] {
            assert!(size(bad).is_err(), "{bad} accepted");
        }
        assert_eq!(format_size(1_000_000), "1MB");
        assert_eq!(format_size(1460), "1460B");
    }

    #[test]
    fn fractions() {
        assert_eq!(fraction("66%").unwrap(), 0.66);
        assert_eq!(fraction("0%").unwrap(), 0.0);
        for bad in ["101%", "-1%", "0.5", "5 percent"] {
            assert!(fraction(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn display_round_trips() {
        assert_eq!(Dur::from_millis(30).to_string(), "30ms");
        assert_eq!(Rate::mbps(15).to_string(), "15Mbps");
        assert_eq!(rate(&Rate(2_500_000_000).to_string()).unwrap(), Rate(2_500_000_000));
    }
}
