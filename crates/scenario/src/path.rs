//! A direction of a link as a path of elements, as a scenario writes it
//! (`path = [...]`), and its resolution into `net`'s descriptions.
//!
//! ```toml
//! [topology.bottleneck]
//! path = [
//!   { element = "queue", rate = "20Mbps", limit = "100p" },
//!   { element = "shaper", rate = "10Mbps", burst = "30KB" },
//!   { element = "delay", delay = "20ms" },
//! ]
//! ```
//!
//! Elements take packets in order. A shaper or a set of outages gates the
//! serialiser of the queue before it: packets wait in that queue.

use crate::discipline::{CodelTable, Discipline, Given, PieTable, RedTable};
use crate::error::ScenarioError;
use crate::tagged::{self, Tagged};
use crate::values::{choice, Bandwidth, Fraction, QueueSize, Size, TimeSpan};
use net::{DelaySpec, ElementSpec, LossModel, PathSpec, QueueLimit, RateSpec};
use serde::{Deserialize, Deserializer, Serialize};
use units::{Dur, Time};

/// One element of a path: `element` names it, the other fields are its own.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "element", rename_all = "snake_case")]
pub enum PathElement {
    /// Bernoulli loss on arrival.
    Loss(LossElement),
    /// Bursty loss: two states, as netem's `loss gemodel`.
    GilbertElliott(GilbertElliottElement),
    /// A queue and its serialiser.
    Queue(QueueElement),
    /// A token bucket on the serialiser of the queue before it.
    Shaper(ShaperElement),
    /// Windows in which the serialiser of the queue before them sends nothing.
    Outages(OutagesElement),
    /// Queued packets delivered in pairs.
    Bunching(BunchingElement),
    /// Propagation delay.
    Delay(DelayElement),
    /// The time sliding window three colour marker (RFC 2859).
    Tswtcm(TswtcmElement),
}

choice! {
    /// The `element` of a path's table.
    ElementKind {
        Loss = "loss",
        GilbertElliott = "gilbert_elliott",
        Queue = "queue",
        Shaper = "shaper",
        Outages = "outages",
        Bunching = "bunching",
        Delay = "delay",
        Tswtcm = "tswtcm",
    }
}

impl<'de> Deserialize<'de> for PathElement {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        tagged::deserialize(d)
    }
}

impl Tagged for PathElement {
    const TAG: &'static str = "element";
    type Kind = ElementKind;
    type Common = ();
    type Variant = PathElement;
    fn variant<'de, D: Deserializer<'de>>(kind: ElementKind, d: D) -> Result<PathElement, D::Error> {
        Ok(match kind {
            ElementKind::Loss => PathElement::Loss(LossElement::deserialize(d)?),
            ElementKind::GilbertElliott => PathElement::GilbertElliott(GilbertElliottElement::deserialize(d)?),
            ElementKind::Queue => PathElement::Queue(QueueElement::deserialize(d)?),
            ElementKind::Shaper => PathElement::Shaper(ShaperElement::deserialize(d)?),
            ElementKind::Outages => PathElement::Outages(OutagesElement::deserialize(d)?),
            ElementKind::Bunching => PathElement::Bunching(BunchingElement::deserialize(d)?),
            ElementKind::Delay => PathElement::Delay(DelayElement::deserialize(d)?),
            ElementKind::Tswtcm => PathElement::Tswtcm(TswtcmElement::deserialize(d)?),
        })
    }
    fn assemble((): (), e: PathElement) -> Self {
        e
    }
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LossElement {
    /// Each packet is lost with this probability (below 100%).
    pub rate: Fraction,
}

/// netem's four parameters, named for what they are.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GilbertElliottElement {
    /// Before each packet: good to bad (netem's p).
    pub enter_bad: Fraction,
    /// Bad to good (netem's r; default 100% minus `enter_bad`, as tc's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leave_bad: Option<Fraction>,
    /// Loss in the bad state (netem's 1-h; default 100%).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_in_bad: Option<Fraction>,
    /// Loss in the good state (netem's 1-k; default 0%).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_in_good: Option<Fraction>,
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct QueueElement {
    /// The serialiser's rate (or `rate_schedule`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Bandwidth>,
    /// A rate that changes: [offset, rate] pairs from the start of the run,
    /// the first at 0s, each holding until the next (a time-varying link).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_schedule: Option<Vec<(TimeSpan, Bandwidth)>>,
    /// The schedule repeats with this period (else its last rate holds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period: Option<TimeSpan>,
    /// Packets or bytes that may wait (default 100p).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<QueueSize>,
    /// What decides drops and order (default "droptail", or the
    /// discipline whose parameters are given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discipline: Option<Discipline>,
    /// rio: RED per drop precedence, green first (two or three).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precedences: Option<Vec<RioPrecedence>>,
    /// rio: a typical packet's size, for the averages' decay over idle
    /// time (default 1000B, ns-2's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_packet: Option<Size>,
    /// rio: whose RIO-C: "clark-fang" (the definition, the default) or
    /// "ns2" (ns-2 2.35's dsRED, with its departures from it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flavour: Option<RioFlavour>,
    /// wrr and rr: the classes served, each with its own sub-queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classes: Option<Vec<WrrClassElement>>,
    /// The discipline's parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub red: Option<Box<RedTable>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codel: Option<Box<CodelTable>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pie: Option<Box<PieTable>>,
}

impl QueueElement {
    fn given(&self) -> Given<'_> {
        Given { discipline: self.discipline, red: self.red.as_deref(), codel: self.codel.as_deref(), pie: self.pie.as_deref() }
    }
}

choice! {
    /// Whose RIO-C.
    RioFlavour { ClarkFang = "clark-fang", Ns2 = "ns2" }
}

/// One drop precedence of a rio queue.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RioPrecedence {
    /// Thresholds on the average, in packets.
    pub min_th: f64,
    pub max_th: f64,
    /// Drop probability at max_th.
    pub max_p: f64,
    /// The average's weight (default 0.002).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub w_q: Option<f64>,
}

/// One class of a wrr or rr queue.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WrrClassElement {
    /// The DiffServ class (0 to 7) its packets carry; a class not listed
    /// waits with the last listed.
    pub class: u8,
    /// Packets served a turn (wrr; default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<u32>,
    /// Its sub-queue's limit (default the queue's limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<QueueSize>,
}

choice! {
    /// A drop precedence.
    ColourName { Green = "green", Yellow = "yellow", Red = "red" }
}

/// tswtcm: colours packets by a rate profile.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TswtcmElement {
    /// Committed target rate (CTR).
    pub cir: Bandwidth,
    /// Peak target rate (PTR; default the CIR: two colours).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pir: Option<Bandwidth>,
    /// The rate estimator's window (default 1s, ns-2's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<TimeSpan>,
    /// A profile per flow instead of one for the aggregate (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_flow: Option<bool>,
    /// The class it meters (default every class).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<u8>,
    /// The colour of packets of other classes (default red).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others: Option<ColourName>,
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ShaperElement {
    /// Sustained rate.
    pub rate: Bandwidth,
    /// Bucket size: how far a burst may run ahead of the rate.
    pub burst: Size,
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OutagesElement {
    /// [start, end] offsets within each period.
    pub windows: Vec<(TimeSpan, TimeSpan)>,
    pub period: TimeSpan,
    /// When the first period starts (default 0s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<TimeSpan>,
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BunchingElement {
    /// A queued packet not completing a pair is held for the next with
    /// this probability.
    pub share: Fraction,
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DelayElement {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<TimeSpan>,
    /// A delay that changes: [offset, delay] pairs, as `rate_schedule`;
    /// packets keep their order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_schedule: Option<Vec<(TimeSpan, TimeSpan)>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period: Option<TimeSpan>,
}

/// The default queue limit of a path's queue (as the bottleneck's).
pub(crate) const QUEUE_LIMIT: QueueLimit = QueueLimit::Packets(100);

type Res<T> = Result<T, ScenarioError>;

fn err(field: impl Into<String>, msg: impl Into<String>) -> ScenarioError {
    ScenarioError::new("", field, msg)
}

fn below_one(f: Fraction, field: &str, what: &str) -> Res<f64> {
    if f.0 >= 1.0 {
        return Err(err(field, format!("{what} of 100% lets nothing through: expected less than 100%")));
    }
    Ok(f.0)
}

fn schedule<V: Copy, T: Copy>(steps: &[(TimeSpan, V)], value: fn(V) -> T, period: Option<TimeSpan>, field: &str) -> Res<net::Schedule<T>> {
    let steps = steps.iter().map(|(t, v)| (t.0, value(*v))).collect();
    net::Schedule::new(steps, period.map(|p| p.0), Time::ZERO).map_err(|e| err(field, e.to_string()))
}

/// The path `elements` at `field` describes; its random elements draw from
/// streams named `stream/INDEX`.
pub(crate) fn resolve(elements: &[PathElement], field: &str, stream: &str) -> Res<PathSpec> {
    let mut out = Vec::with_capacity(elements.len());
    for (i, e) in elements.iter().enumerate() {
        let f = format!("{field}[{i}]");
        let stream = format!("{stream}/{i}");
        out.push(match e {
            PathElement::Loss(l) => {
                let p = below_one(l.rate, &format!("{f}.rate"), "a loss")?;
                ElementSpec::Loss { model: LossModel::Bernoulli { p }, stream, handshakes: None }
            }
            PathElement::GilbertElliott(g) => {
                let model = LossModel::GilbertElliott {
                    p: g.enter_bad.0,
                    r: g.leave_bad.map_or(1.0 - g.enter_bad.0, |r| r.0),
                    loss_bad: g.loss_in_bad.map_or(1.0, |l| l.0),
                    loss_good: below_one(g.loss_in_good.unwrap_or(Fraction(0.0)), &format!("{f}.loss_in_good"), "a loss in the good state")?,
                };
                if let LossModel::GilbertElliott { r, .. } = model {
                    if r <= 0.0 && g.enter_bad.0 > 0.0 {
                        return Err(err(format!("{f}.leave_bad"), "0% never leaves the bad state: expected above 0%"));
                    }
                }
                ElementSpec::Loss { model, stream, handshakes: None }
            }
            PathElement::Queue(q) => {
                let rate = match (&q.rate, &q.rate_schedule) {
                    (Some(r), None) if q.period.is_none() => RateSpec::Fixed(r.0),
                    (Some(_), None) => return Err(err(format!("{f}.period"), "a period repeats a rate_schedule, and this queue has a fixed rate")),
                    (None, Some(s)) => RateSpec::Scheduled(schedule(s, |b: Bandwidth| b.0, q.period, &format!("{f}.rate_schedule"))?),
                    (Some(_), Some(_)) => return Err(err(f, "give either rate or rate_schedule, not both")),
                    (None, None) => return Err(err(f, "missing required field \"rate\" (or \"rate_schedule\")")),
                };
                let limit = q.limit.map_or(QUEUE_LIMIT, queue_limit);
                let discipline = match q.discipline {
                    Some(d @ (Discipline::Rio | Discipline::Wrr | Discipline::Rr)) => {
                        q.given().discipline(&f)?;
                        diffserv(q, d, limit, &f, &stream)?
                    }
                    _ => {
                        no_diffserv_fields(q, &f)?;
                        q.given().resolve(&f, stream)?
                    }
                };
                ElementSpec::Queue { rate, limit, discipline }
            }
            PathElement::Shaper(s) => {
                let burst = u32::try_from(s.burst.0).map_err(|_| err(format!("{f}.burst"), "expected at most 4294967295 bytes"))?;
                if burst == 0 {
                    return Err(err(format!("{f}.burst"), "must be at least 1 byte"));
                }
                ElementSpec::Shaper(net::Shaper { rate: s.rate.0, burst })
            }
            PathElement::Outages(o) => {
                let windows = o.windows.iter().map(|(a, b)| (a.0, b.0)).collect();
                match net::Outages::new(windows, o.period.0, Time(o.from.map_or(0, |t| t.0 .0))) {
                    Some(o) => ElementSpec::Outages(o),
                    None => {
                        return Err(err(
                            format!("{f}.windows"),
                            "no window is left inside the period: expected [start, end] pairs with start < end < period",
                        ))
                    }
                }
            }
            PathElement::Bunching(b) => ElementSpec::Bunching { p: b.share.0, stream },
            PathElement::Tswtcm(t) => tswtcm(t, &f, stream)?,
            PathElement::Delay(d) => ElementSpec::Delay(match (&d.delay, &d.delay_schedule) {
                (Some(t), None) if d.period.is_none() => DelaySpec::Fixed(t.0),
                (Some(_), None) => return Err(err(format!("{f}.period"), "a period repeats a delay_schedule, and this delay is fixed")),
                (None, Some(s)) => DelaySpec::Scheduled(schedule(s, |t: TimeSpan| t.0, d.period, &format!("{f}.delay_schedule"))?),
                (Some(_), Some(_)) => return Err(err(f, "give either delay or delay_schedule, not both")),
                (None, None) => return Err(err(f, "missing required field \"delay\" (or \"delay_schedule\")")),
            }),
        });
    }
    let path = PathSpec { elements: out };
    // A gate needs a queue before it: the path's own check, with the field named.
    path.build(0).map_err(|e| err(field, e.to_string()))?;
    Ok(path)
}

/// Fields of rio, wrr and rr on a queue of another discipline.
fn no_diffserv_fields(q: &QueueElement, f: &str) -> Res<()> {
    let kind = q.discipline.unwrap_or(Discipline::DropTail);
    for (field, present, wanted) in [
        ("precedences", q.precedences.is_some(), "\"rio\""),
        ("mean_packet", q.mean_packet.is_some(), "\"rio\""),
        ("flavour", q.flavour.is_some(), "\"rio\""),
        ("classes", q.classes.is_some(), "\"wrr\" and \"rr\""),
    ] {
        if present {
            return Err(err(format!("{f}.{field}"), format!("does not apply to discipline \"{kind}\" (only to {wanted})")));
        }
    }
    Ok(())
}

/// A rio, wrr or rr queue's discipline, its own fields checked against it.
fn diffserv(q: &QueueElement, kind: Discipline, limit: QueueLimit, f: &str, stream: &str) -> Res<net::DisciplineSpec> {
    let stray = |field: &str, present: bool, wanted: &str| -> Res<()> {
        if present {
            return Err(err(format!("{f}.{field}"), format!("does not apply to discipline \"{kind}\" (only to {wanted})")));
        }
        Ok(())
    };
    let rio = kind == Discipline::Rio;
    stray("precedences", q.precedences.is_some() && !rio, "\"rio\"")?;
    stray("mean_packet", q.mean_packet.is_some() && !rio, "\"rio\"")?;
    stray("flavour", q.flavour.is_some() && !rio, "\"rio\"")?;
    stray("classes", q.classes.is_some() && rio, "\"wrr\" and \"rr\"")?;
    Ok(match kind {
        Discipline::Rio => {
            let Some(precs) = &q.precedences else {
                return Err(err(f, "missing required field \"precedences\" (two or three of {min_th, max_th, max_p}) for discipline \"rio\""));
            };
            if !(2..=3).contains(&precs.len()) {
                return Err(err(format!("{f}.precedences"), format!("has {}: expected two or three drop precedences, green first", precs.len())));
            }
            let mut curves = Vec::new();
            for (i, p) in precs.iter().enumerate() {
                let g = format!("{f}.precedences[{i}]");
                let w_q = p.w_q.unwrap_or(0.002);
                if !(p.min_th.is_finite() && p.max_th.is_finite() && 0.0 <= p.min_th && p.min_th < p.max_th) {
                    return Err(err(g, format!("min_th {} and max_th {}: expected 0 <= min_th < max_th (packets)", p.min_th, p.max_th)));
                }
                if !(p.max_p > 0.0 && p.max_p <= 1.0) {
                    return Err(err(format!("{g}.max_p"), format!("{} is out of range: expected above 0 and at most 1", p.max_p)));
                }
                if !(w_q > 0.0 && w_q <= 1.0) {
                    return Err(err(format!("{g}.w_q"), format!("{w_q} is out of range: expected above 0 and at most 1")));
                }
                curves.push(net::queue::RedCurve { min_th: p.min_th, max_th: p.max_th, max_p: p.max_p, w_q });
            }
            let mean_packet = q.mean_packet.map_or(1000, |s| s.0);
            if !(20..=65535).contains(&mean_packet) {
                return Err(err(format!("{f}.mean_packet"), format!("{mean_packet} bytes is out of range: expected 20B to 65535B")));
            }
            let flavour = match q.flavour.unwrap_or(RioFlavour::ClarkFang) {
                RioFlavour::ClarkFang => net::queue::RioFlavour::ClarkFang,
                RioFlavour::Ns2 => net::queue::RioFlavour::Ns2,
            };
            net::DisciplineSpec::Rio { precedences: curves, mean_packet: mean_packet as u32, flavour, stream: stream.to_string() }
        }
        Discipline::Wrr | Discipline::Rr => {
            let classes = match &q.classes {
                Some(c) if !c.is_empty() => c,
                _ => {
                    return Err(err(f, format!("missing required field \"classes\" (a list of {{class, weight, limit}}) for discipline \"{kind}\"")))
                }
            };
            let mut out: Vec<net::queue::WrrClass> = Vec::new();
            for (i, c) in classes.iter().enumerate() {
                let g = format!("{f}.classes[{i}]");
                if c.class > 7 {
                    return Err(err(format!("{g}.class"), format!("{} is out of range: expected a DiffServ class from 0 to 7", c.class)));
                }
                if out.iter().any(|o| o.class == c.class) {
                    return Err(err(format!("{g}.class"), format!("class {} is listed twice", c.class)));
                }
                let weight = match (kind, c.weight) {
                    (Discipline::Rr, Some(w)) if w != 1 => {
                        return Err(err(format!("{g}.weight"), "rr serves every class one packet a turn: use discipline \"wrr\" for weights"))
                    }
                    (_, Some(0)) => return Err(err(format!("{g}.weight"), "must be at least 1")),
                    (_, w) => w.unwrap_or(1),
                };
                out.push(net::queue::WrrClass { class: c.class, weight, limit: c.limit.map_or(limit, queue_limit) });
            }
            net::DisciplineSpec::Wrr(out)
        }
        other => return Err(err(format!("{f}.discipline"), format!("\"{other}\" is not a DiffServ discipline"))),
    })
}

fn tswtcm(t: &TswtcmElement, f: &str, stream: String) -> Res<ElementSpec> {
    let cir = t.cir.0.as_f64();
    let pir = t.pir.map_or(cir, |p| p.0.as_f64());
    if pir < cir {
        return Err(err(
            format!("{f}.pir"),
            format!("{} is below the cir ({}): expected pir >= cir", t.pir.map(|p| p.0).unwrap_or_default(), t.cir.0),
        ));
    }
    let window = t.window.map_or(Dur::from_secs(1), |w| w.0);
    if window == Dur::ZERO {
        return Err(err(format!("{f}.window"), "must be above 0s"));
    }
    if let Some(k) = t.class.filter(|&k| k > 7) {
        return Err(err(format!("{f}.class"), format!("{k} is out of range: expected a DiffServ class from 0 to 7")));
    }
    let others = match t.others.unwrap_or(ColourName::Red) {
        ColourName::Green => net::Colour::Green,
        ColourName::Yellow => net::Colour::Yellow,
        ColourName::Red => net::Colour::Red,
    };
    let scope = if t.per_flow.unwrap_or(false) { net::marker::Scope::PerFlow } else { net::marker::Scope::Aggregate };
    let spec = net::marker::TswtcmSpec { ctr_bps: cir, ptr_bps: pir, window, scope, class: t.class, others };
    Ok(ElementSpec::Tswtcm { spec, stream })
}

pub(crate) fn queue_limit(q: QueueSize) -> QueueLimit {
    match q {
        QueueSize::Packets(n) => QueueLimit::Packets(n),
        QueueSize::Bytes(b) => QueueLimit::Bytes(b),
    }
}

/// `elements` with their defaults written out (a Gilbert-Elliott's
/// defaults are left to its reading: 100% less a percentage does not always
/// print back to the same number).
pub(crate) fn with_defaults(elements: &[PathElement]) -> Vec<PathElement> {
    elements
        .iter()
        .map(|e| match e {
            PathElement::Queue(q) => {
                let limit = Some(q.limit.unwrap_or(match QUEUE_LIMIT {
                    QueueLimit::Packets(n) => QueueSize::Packets(n),
                    QueueLimit::Bytes(b) => QueueSize::Bytes(b),
                }));
                let discipline = Some(q.given().discipline("").unwrap_or(Discipline::DropTail));
                PathElement::Queue(QueueElement { limit, discipline, ..q.clone() })
            }
            PathElement::Outages(o) => PathElement::Outages(OutagesElement { from: Some(o.from.unwrap_or(TimeSpan(Dur::ZERO))), ..o.clone() }),
            other => other.clone(),
        })
        .collect()
}
