//! The rate-process background models (sine): their fields
//! (the schema) and how they resolve into a [`ProcessModel`].

use crate::error::ScenarioError;
use crate::resolve::{err, model_rate, Context, Placed};
use crate::resolve::{Group, Side};
use crate::schema::{ModelSpec, Transport};
use crate::values::{RateOrShare, Size};
use serde::{Deserialize, Serialize};
use traffic::background::process::{RateProcess, Sine, Wave};
use traffic::background::RateTransport;
use units::{Rng, Time};

/// sine: a rate m + A·sin(2πft + α), or the sum of two such waves.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SineSpec {
    pub transport: Transport,
    /// The mean m, absolute or a share of the bottleneck.
    pub rate: RateOrShare,
    /// A, absolute or a share of the bottleneck; m ≥ A (+ A2).
    pub amplitude: RateOrShare,
    /// f, Hz.
    pub frequency: f64,
    /// α, radians, the phase at the model's start (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<f64>,
    /// A second wave, its three fields together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amplitude2: Option<RateOrShare>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frequency2: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase2: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packet_size: Option<Size>,
}

/// A rate process, resolved.
#[derive(Clone, Debug, PartialEq)]
pub enum Process {
    Sine(Sine),
}

impl Process {
    /// The process, its random parts drawn from `rng`.
    pub fn build(&self, _rng: &mut Rng) -> Box<dyn RateProcess> {
        match self {
            Process::Sine(s) => Box::new(s.clone()),
        }
    }

    /// The mean rate asked for, bits per second.
    pub fn mean(&self) -> f64 {
        match self {
            Process::Sine(s) => s.mean(),
        }
    }
}

/// A background model timed by a rate process, resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct ProcessModel {
    pub name: String,
    pub process: Process,
    pub transport: RateTransport,
    pub packet_size: u32,
    pub hosts: u32,
    pub sources: Side,
    pub start: Time,
    pub stop: Time,
    pub group: Group,
}

type Res<T> = Result<T, ScenarioError>;

fn transport(t: Transport) -> RateTransport {
    match t {
        Transport::Udp => RateTransport::Udp,
        Transport::Tcp => RateTransport::Tcp,
    }
}

/// A frequency in Hz: finite, and above zero unless `zero_ok`.
fn frequency(v: f64, field: &str, zero_ok: bool) -> Res<f64> {
    let ok = v.is_finite() && (v > 0.0 || zero_ok && v == 0.0) && v <= MAX_FREQUENCY;
    if ok {
        Ok(v)
    } else {
        let from = if zero_ok { "0" } else { "above 0" };
        Err(err(field, format!("{v} is out of range: expected a frequency in Hz, {from}, at most {MAX_FREQUENCY:.0e}")))
    }
}

/// The highest frequency a model takes, Hz.
const MAX_FREQUENCY: f64 = 1e6;

fn phase(v: Option<f64>, field: &str) -> Res<f64> {
    match v {
        None => Ok(0.0),
        Some(x) if x.is_finite() => Ok(x),
        Some(x) => Err(err(field, format!("{x} is not a phase: expected a finite number of radians"))),
    }
}

fn model(at: &Context, f: &str, process: Process, t: Transport, size: Option<Size>, p: Placed) -> Res<ProcessModel> {
    let transport = transport(t);
    let packet_size = crate::resolve::packet_size(f, size, transport, &p.group)?;
    let _ = at;
    Ok(ProcessModel {
        name: p.name,
        process,
        transport,
        packet_size,
        hosts: p.hosts.unwrap_or(crate::resolve::defaults::RATE_HOSTS),
        sources: p.sources,
        start: p.start,
        stop: p.stop,
        group: p.group,
    })
}

pub(crate) fn sine(at: &Context, f: &str, m: &SineSpec, p: Placed) -> Res<ProcessModel> {
    let mean = model_rate(at, &format!("{f}.rate"), m.rate)?.as_f64();
    let mut waves = vec![Wave {
        amplitude: model_rate(at, &format!("{f}.amplitude"), m.amplitude)?.as_f64(),
        frequency: frequency(m.frequency, &format!("{f}.frequency"), false)?,
        phase: phase(m.phase, &format!("{f}.phase"))?,
    }];
    match (m.amplitude2, m.frequency2) {
        (Some(a), Some(fr)) => waves.push(Wave {
            amplitude: model_rate(at, &format!("{f}.amplitude2"), a)?.as_f64(),
            frequency: frequency(fr, &format!("{f}.frequency2"), false)?,
            phase: phase(m.phase2, &format!("{f}.phase2"))?,
        }),
        (None, None) if m.phase2.is_none() => {}
        (None, _) => {
            return Err(err(f, "a second wave needs \"amplitude2\" and \"frequency2\" (and optionally \"phase2\"): \"amplitude2\" is missing"))
        }
        (Some(_), None) => {
            return Err(err(f, "a second wave needs \"amplitude2\" and \"frequency2\" (and optionally \"phase2\"): \"frequency2\" is missing"))
        }
    }
    let swing: f64 = waves.iter().map(|w| w.amplitude).sum();
    if swing > mean {
        let sum = if waves.len() > 1 { "amplitude + amplitude2" } else { "amplitude" };
        return Err(err(
            format!("{f}.amplitude"),
            format!("the rate would go below zero: rate ({}) must be at least {sum} ({})", units::Rate(mean as u64), units::Rate(swing as u64)),
        ));
    }
    model(at, f, Process::Sine(Sine::new(mean, waves)), m.transport, m.packet_size, p)
}

/// `spec` with the defaults `p` resolved written in.
pub(crate) fn with_defaults(p: &ProcessModel, spec: &mut ModelSpec) {
    let size = Some(Size(p.packet_size as u64));
    match (spec, &p.process) {
        (ModelSpec::Sine(m), _) => {
            m.phase = m.phase.or(Some(0.0));
            m.phase2 = m.frequency2.and(m.phase2.or(Some(0.0)));
            m.packet_size = size;
        }
        _ => unreachable!("resolve keeps the kind of the background models"),
    }
}
