//! Options checked once and turned into integer nanoseconds and parsed rules.

use crate::error::ExtractError;
use crate::sides::{parse_mac, parse_prefix, Prefix};
use swing::{ExtractOptions, SideRule};

/// UDP flows end after this much silence (or the TCP idle timeout if that
/// is shorter): UDP has no close, and 60 s is the usual middlebox timeout,
/// while 300 s (the TCP default) would merge a host's successive DNS or
/// QUIC flows on a reused port into one.
pub(crate) const UDP_IDLE_S: f64 = 60.0;
/// Timestamps may run backwards by up to about this much: state is only
/// retired when it is this much older than the timeout requires.
pub(crate) const DISORDER_NS: i64 = 1_000_000_000;

pub(crate) fn ns(s: f64) -> i64 {
    (s * 1e9).round() as i64
}

pub(crate) fn secs(ns: i64) -> f64 {
    ns as f64 / 1e9
}

#[derive(Clone, Debug)]
pub(crate) enum Sides {
    Auto,
    Prefixes(Vec<Prefix>),
    Macs(Vec<[u8; 6]>),
}

/// Grouping thresholds in ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Thresholds {
    pub rre_gap: i64,
    pub rre_max_interconn: i64,
    pub session_gap: i64,
    pub session_max: Option<i64>,
    pub max_rres: u32,
    pub max_conns: u32,
}

impl Thresholds {
    pub fn from_options(o: &ExtractOptions) -> Thresholds {
        Thresholds {
            rre_gap: ns(o.rre_gap_s),
            rre_max_interconn: ns(o.rre_max_interconn_s),
            session_gap: ns(o.session_gap_s),
            session_max: o.session_max_s.map(ns),
            max_rres: o.max_rres_per_session,
            max_conns: o.max_conns_per_rre,
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Compiled {
    pub o: ExtractOptions,
    pub groups: Thresholds,
    pub idle: i64,
    pub udp_idle: i64,
    pub sides: Sides,
}

fn bad(name: &str, v: impl std::fmt::Debug, allowed: &str) -> ExtractError {
    ExtractError::Options(format!("{name} = {v:?}: {allowed}"))
}

impl Compiled {
    pub(crate) fn new(o: &ExtractOptions) -> Result<Compiled, ExtractError> {
        for (name, v) in [("rre_gap_s", o.rre_gap_s), ("rre_max_interconn_s", o.rre_max_interconn_s), ("session_gap_s", o.session_gap_s)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(bad(name, v, "must be a finite number of seconds, 0 or more"));
            }
        }
        for (name, v) in [("idle_timeout_s", o.idle_timeout_s), ("rtt_max_s", o.rtt_max_s)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(bad(name, v, "must be a finite number of seconds above 0"));
            }
        }
        for (name, v) in [("session_max_s", o.session_max_s), ("pause_gap_s", o.pause_gap_s), ("unit_gap_s", o.unit_gap_s)] {
            if v.is_some_and(|v| !(v.is_finite() && v > 0.0)) {
                return Err(bad(name, v, "must be null or a finite number of seconds above 0"));
            }
        }
        for (name, v) in [
            ("max_rres_per_session", o.max_rres_per_session),
            ("max_conns_per_rre", o.max_conns_per_rre),
            ("max_pairs_per_conn", o.max_pairs_per_conn),
        ] {
            if v == 0 {
                return Err(bad(name, v, "must be at least 1"));
            }
        }
        if !(0.0..=100.0).contains(&o.rtt_percentile) {
            return Err(bad("rtt_percentile", o.rtt_percentile, "must be a percentile from 0 to 100"));
        }
        if !(0.0..=100.0).contains(&o.capacity_percentile) {
            return Err(bad("capacity_percentile", o.capacity_percentile, "must be a percentile from 0 to 100"));
        }
        if let Some(f) = o.shaper_max_fraction.filter(|f| !(*f > 0.0 && *f <= 1.0)) {
            return Err(bad("shaper_max_fraction", f, "must be null or a fraction above 0, at most 1"));
        }
        if o.shaper_min_segments < 2 {
            return Err(bad("shaper_min_segments", o.shaper_min_segments, "must be at least 2"));
        }
        let mut seen = std::collections::BTreeMap::new();
        for (port, name) in &o.ports {
            if name.trim().is_empty() {
                return Err(bad("ports", port, "every port needs a non-empty class name"));
            }
            if let Some(prev) = seen.insert(*port, name) {
                if prev != name {
                    return Err(bad("ports", port, &format!("is given two class names ({prev:?} and {name:?}); give each port one")));
                }
            }
        }
        let sides = match &o.sides {
            SideRule::Auto => Sides::Auto,
            SideRule::Prefixes { a } if a.is_empty() => {
                return Err(bad("sides.a", a, "the prefixes rule needs at least one CIDR prefix, e.g. \"10.0.0.0/8\""))
            }
            SideRule::Prefixes { a } => {
                Sides::Prefixes(a.iter().map(|s| parse_prefix(s).map_err(|e| bad("sides.a", s, &e))).collect::<Result<_, _>>()?)
            }
            SideRule::Macs { a } if a.is_empty() => {
                return Err(bad("sides.a", a, "the MAC rule needs at least one MAC address, e.g. \"00:1b:21:3a:4f:01\""))
            }
            SideRule::Macs { a } => Sides::Macs(a.iter().map(|s| parse_mac(s).map_err(|e| bad("sides.a", s, &e))).collect::<Result<_, _>>()?),
        };
        Ok(Compiled {
            o: o.clone(),
            groups: Thresholds::from_options(o),
            idle: ns(o.idle_timeout_s),
            udp_idle: ns(o.idle_timeout_s.min(UDP_IDLE_S)),
            sides,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(o: ExtractOptions) -> String {
        match Compiled::new(&o) {
            Err(ExtractError::Options(m)) => m,
            other => panic!("expected an options error, got {other:?}"),
        }
    }

    #[test]
    fn defaults_compile() {
        let c = Compiled::new(&ExtractOptions::default()).unwrap();
        assert_eq!(c.groups.rre_gap, 2_000_000_000);
        assert_eq!(c.udp_idle, 60_000_000_000);
        assert_eq!(c.idle, 300_000_000_000);
    }

    #[test]
    fn bad_values_name_the_option_and_what_is_allowed() {
        let m = err(ExtractOptions { rre_gap_s: -1.0, ..Default::default() });
        assert!(m.starts_with("rre_gap_s = -1.0") && m.contains("0 or more"), "{m}");
        let m = err(ExtractOptions { rtt_percentile: -1.0, ..Default::default() });
        assert!(m.contains("rtt_percentile") && m.contains("0 to 100"), "{m}");
        let m = err(ExtractOptions { capacity_percentile: 120.0, ..Default::default() });
        assert!(m.contains("capacity_percentile") && m.contains("0 to 100"), "{m}");
        let m = err(ExtractOptions { max_pairs_per_conn: 0, ..Default::default() });
        assert!(m.contains("max_pairs_per_conn") && m.contains("at least 1"), "{m}");
        let m = err(ExtractOptions { idle_timeout_s: f64::NAN, ..Default::default() });
        assert!(m.contains("idle_timeout_s"), "{m}");
        let m = err(ExtractOptions { sides: SideRule::Prefixes { a: vec!["10.0.0.0/33".into()] }, ..Default::default() });
        assert!(m.contains("sides.a") && m.contains("10.0.0.0/33"), "{m}");
        let m = err(ExtractOptions { sides: SideRule::Macs { a: vec!["00:11:22".into()] }, ..Default::default() });
        assert!(m.contains("sides.a") && m.contains("00:11:22"), "{m}");
        let mut ports = swing::default_ports();
        ports.push((80, "WEB".into()));
        let m = err(ExtractOptions { ports, ..Default::default() });
        assert!(m.contains("ports = 80") && m.contains("\"WEB\""), "{m}");
    }
}
