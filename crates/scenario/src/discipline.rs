//! A queue's discipline as a scenario writes it, and its parameters in
//! the names ns-2 (RED) and the RFCs (CoDel, PIE) give them:
//!
//! ```toml
//! { element = "queue", rate = "10Mbps", limit = "50p", discipline = "red",
//!   red = { thresh = 5, maxthresh = 15, q_weight = 0.002, linterm = 10, gentle = false } }
//! ```
//!
//! A discipline's table may be left out (its defaults) and names the
//! discipline when `discipline` is.

use crate::error::ScenarioError;
use crate::values::{choice, Size, TimeSpan};
use net::queue::{CodelParams, PieParams, RedParams};
use net::DisciplineSpec;
use serde::{Deserialize, Serialize};

choice! {
    /// A queue's discipline.
    Discipline {
        /// Drop the arriving packet when the queue is full.
        DropTail = "droptail",
        /// RED, as ns-2 2.35's Queue/RED.
        Red = "red",
        /// CoDel (RFC 8289).
        Codel = "codel",
        /// PIE (RFC 8033).
        Pie = "pie",
        /// RIO-C: RED with In and Out, coupled, per drop precedence.
        Rio = "rio",
        /// Weighted round-robin between classes.
        Wrr = "wrr",
        /// Round-robin between classes.
        Rr = "rr",
    }
}

/// RED's parameters as ns-2's Queue/RED names them (without the trailing
/// underscore); ns-2 2.35's defaults.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RedTable {
    /// Lower and upper thresholds on the average, in packets (0: ns-2's
    /// automatic setting).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thresh: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maxthresh: Option<f64>,
    /// The average's weight (0, -1, -2: ns-2's automatic settings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub q_weight: Option<f64>,
    /// 1/max_p.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linterm: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gentle: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_in_bytes: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_pktsize: Option<Size>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<bool>,
    /// Mark ECN-capable packets instead of dropping them early.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setbit: Option<bool>,
    /// No forced drops past maxthresh, and marks only below mark_p.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub use_mark_p: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mark_p: Option<f64>,
    /// Adaptive RED: max_p moved by alpha and beta every interval, within
    /// [bottom, top] (bottom 0: ns-2's automatic setting).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adaptive: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beta: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<TimeSpan>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bottom: Option<f64>,
    /// The delay the automatic thresh is set for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targetdelay: Option<TimeSpan>,
}

/// CoDel's parameters as RFC 8289 names them.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CodelTable {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<TimeSpan>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<TimeSpan>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<bool>,
}

/// PIE's parameters as RFC 8033 names them.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PieTable {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<TimeSpan>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t_update: Option<TimeSpan>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beta: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_burst: Option<TimeSpan>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_pktsize: Option<Size>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub derandomize: Option<bool>,
}

/// A queue's discipline and the tables of parameters it was given.
pub(crate) struct Given<'a> {
    pub discipline: Option<Discipline>,
    pub red: Option<&'a RedTable>,
    pub codel: Option<&'a CodelTable>,
    pub pie: Option<&'a PieTable>,
}

type Res<T> = Result<T, ScenarioError>;

fn err(field: impl Into<String>, msg: impl Into<String>) -> ScenarioError {
    ScenarioError::new("", field, msg)
}

impl Given<'_> {
    /// The discipline named, or the one whose table is given (drop-tail
    /// without either); a table for another discipline is an error.
    pub(crate) fn discipline(&self, f: &str) -> Res<Discipline> {
        let tables = [(Discipline::Red, self.red.is_some()), (Discipline::Codel, self.codel.is_some()), (Discipline::Pie, self.pie.is_some())];
        let mut given = tables.iter().filter(|(_, g)| *g).map(|(d, _)| *d);
        let (first, second) = (given.next(), given.next());
        if let (Some(a), Some(b)) = (first, second) {
            return Err(err(format!("{f}.{b}"), format!("a queue has one discipline, and this one has {a} parameters too")));
        }
        match (self.discipline, first) {
            (Some(d), Some(t)) if d != t => {
                Err(err(format!("{f}.{t}"), format!("{t} parameters on a {d} queue: give {d}'s own, or discipline = \"{t}\"")))
            }
            (Some(d), _) => Ok(d),
            (None, Some(t)) => Ok(t),
            (None, None) => Ok(Discipline::DropTail),
        }
    }

    /// The discipline's description; `stream` names its random stream.
    pub(crate) fn resolve(&self, f: &str, stream: String) -> Res<DisciplineSpec> {
        Ok(match self.discipline(f)? {
            Discipline::DropTail => DisciplineSpec::DropTail,
            Discipline::Red => DisciplineSpec::Red { params: red(self.red.cloned().unwrap_or_default(), &format!("{f}.red"))?, stream },
            Discipline::Codel => DisciplineSpec::Codel(codel(self.codel.cloned().unwrap_or_default(), &format!("{f}.codel"))?),
            Discipline::Pie => DisciplineSpec::Pie { params: pie(self.pie.cloned().unwrap_or_default(), &format!("{f}.pie"))?, stream },
            d @ (Discipline::Rio | Discipline::Wrr | Discipline::Rr) => {
                return Err(err(format!("{f}.discipline"), format!("\"{d}\" takes its own fields, not a table (see docs/queues.md)")))
            }
        })
    }
}

fn finite(v: f64, field: String, what: &str) -> Res<f64> {
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(err(field, format!("{v} is not allowed: expected {what}")))
    }
}

fn positive(t: TimeSpan, field: String) -> Res<units::Dur> {
    if t.0 > units::Dur::ZERO {
        Ok(t.0)
    } else {
        Err(err(field, "must be above 0s"))
    }
}

fn pktsize(s: Size, field: String) -> Res<u32> {
    match u32::try_from(s.0) {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(err(field, format!("{} bytes is not allowed: expected 1 to 4294967295 bytes", s.0))),
    }
}

fn red(t: RedTable, f: &str) -> Res<RedParams> {
    let d = RedParams::default();
    let thresh = finite(t.thresh.unwrap_or(d.thresh), format!("{f}.thresh"), "packets, 0 or more (0: ns-2's automatic setting)")?;
    let maxthresh = finite(t.maxthresh.unwrap_or(d.maxthresh), format!("{f}.maxthresh"), "packets, 0 or more (0: three times thresh)")?;
    if maxthresh > 0.0 && maxthresh <= thresh {
        return Err(err(format!("{f}.maxthresh"), format!("{maxthresh} is not above thresh ({thresh}): expected maxthresh > thresh, or 0")));
    }
    let q_weight = t.q_weight.unwrap_or(d.q_weight);
    if !(q_weight > 0.0 && q_weight <= 1.0 || [0.0, -1.0, -2.0].contains(&q_weight)) {
        return Err(err(format!("{f}.q_weight"), format!("{q_weight} is not allowed: expected a weight in (0, 1], or ns-2's automatic 0, -1 or -2")));
    }
    let linterm = t.linterm.unwrap_or(d.linterm);
    if !(linterm.is_finite() && linterm >= 1.0) {
        return Err(err(format!("{f}.linterm"), format!("{linterm} is not allowed: expected 1/max_p, 1 or more")));
    }
    Ok(RedParams {
        thresh,
        maxthresh,
        q_weight,
        linterm,
        gentle: t.gentle.unwrap_or(d.gentle),
        bytes: t.bytes.unwrap_or(d.bytes),
        queue_in_bytes: t.queue_in_bytes.unwrap_or(d.queue_in_bytes),
        mean_pktsize: t.mean_pktsize.map_or(Ok(d.mean_pktsize), |s| pktsize(s, format!("{f}.mean_pktsize")))?,
        wait: t.wait.unwrap_or(d.wait),
        setbit: t.setbit.unwrap_or(d.setbit),
        use_mark_p: t.use_mark_p.unwrap_or(d.use_mark_p),
        mark_p: probability(t.mark_p.unwrap_or(d.mark_p), format!("{f}.mark_p"), "a probability in (0, 1]")?,
        adaptive: t.adaptive.unwrap_or(d.adaptive),
        alpha: probability(t.alpha.unwrap_or(d.alpha), format!("{f}.alpha"), "an increase of max_p in (0, 1]")?,
        beta: probability(t.beta.unwrap_or(d.beta), format!("{f}.beta"), "a factor in (0, 1]")?,
        interval: t.interval.map_or(Ok(d.interval), |v| positive(v, format!("{f}.interval")))?,
        targetdelay: t.targetdelay.map_or(Ok(d.targetdelay), |v| positive(v, format!("{f}.targetdelay")))?,
        top: probability(t.top.unwrap_or(d.top), format!("{f}.top"), "a probability in (0, 1]")?,
        bottom: match t.bottom.unwrap_or(d.bottom) {
            0.0 => 0.0,
            b => probability(b, format!("{f}.bottom"), "a probability in (0, 1], or 0 (ns-2's automatic setting)")?,
        },
    })
}

/// A probability (or a share) above 0 and at most 1.
fn probability(v: f64, field: String, what: &str) -> Res<f64> {
    if v > 0.0 && v <= 1.0 {
        Ok(v)
    } else {
        Err(err(field, format!("{v} is not allowed: expected {what}")))
    }
}

fn codel(t: CodelTable, f: &str) -> Res<CodelParams> {
    let d = CodelParams::default();
    Ok(CodelParams {
        target: t.target.map_or(Ok(d.target), |v| positive(v, format!("{f}.target")))?,
        interval: t.interval.map_or(Ok(d.interval), |v| positive(v, format!("{f}.interval")))?,
        ecn: t.ecn.unwrap_or(d.ecn),
    })
}

fn pie(t: PieTable, f: &str) -> Res<PieParams> {
    let d = PieParams::default();
    Ok(PieParams {
        target: t.target.map_or(Ok(d.target), |v| positive(v, format!("{f}.target")))?,
        t_update: t.t_update.map_or(Ok(d.t_update), |v| positive(v, format!("{f}.t_update")))?,
        alpha: finite(t.alpha.unwrap_or(d.alpha), format!("{f}.alpha"), "a gain per second, 0 or more")?,
        beta: finite(t.beta.unwrap_or(d.beta), format!("{f}.beta"), "a gain per second, 0 or more")?,
        max_burst: t.max_burst.map_or(d.max_burst, |v| v.0),
        mean_pktsize: t.mean_pktsize.map_or(Ok(d.mean_pktsize), |s| pktsize(s, format!("{f}.mean_pktsize")))?,
        ecn: t.ecn.unwrap_or(d.ecn),
        derandomize: t.derandomize.unwrap_or(d.derandomize),
    })
}
