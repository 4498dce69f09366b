//! The rate-process background models, sine, fgn and noise: their fields
//! (the schema) and how they resolve into a [`ProcessModel`].

use crate::error::ScenarioError;
use crate::resolve::{err, model_rate, Context, Placed};
use crate::resolve::{limits, Group, Side};
use crate::schema::{ModelSpec, Transport};
use crate::values::{RateOrShare, Size, TimeSpan};
use serde::{Deserialize, Serialize};
use traffic::background::process::{Fgn, Noise, RateProcess, Sine, Wave};
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

/// fgn: a rate per bin that is fractional Gaussian noise.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FgnSpec {
    pub transport: Transport,
    /// The mean rate, absolute or a share of the bottleneck.
    pub rate: RateOrShare,
    /// Standard deviation of the rate per bin.
    pub deviation: RateOrShare,
    /// Hurst parameter, above 0 and below 1.
    pub hurst: f64,
    /// Width of the bins the rate is held over (default 10 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bin: Option<TimeSpan>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packet_size: Option<Size>,
}

/// noise: band-limited white noise rate.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NoiseSpec {
    pub transport: Transport,
    pub rate: RateOrShare,
    pub deviation: RateOrShare,
    /// The band's upper edge, Hz.
    pub cutoff: f64,
    /// The band's lower edge, Hz (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub low: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packet_size: Option<Size>,
}

/// A rate process, resolved.
#[derive(Clone, Debug, PartialEq)]
pub enum Process {
    Sine(Sine),
    Fgn(Fgn),
    Noise(Noise),
}

impl Process {
    /// The process, its random parts drawn from `rng`.
    pub fn build(&self, rng: &mut Rng) -> Box<dyn RateProcess> {
        match self {
            Process::Sine(s) => Box::new(s.clone()),
            Process::Fgn(f) => Box::new(f.steps(rng)),
            Process::Noise(n) => Box::new(n.ramps(rng)),
        }
    }

    /// The mean rate asked for, bits per second.
    pub fn mean(&self) -> f64 {
        match self {
            Process::Sine(s) => s.mean(),
            Process::Fgn(f) => f.mean,
            Process::Noise(n) => n.mean,
        }
    }
}

/// A sine, fgn or noise background model, resolved.
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

fn model(f: &str, process: Process, t: Transport, size: Option<Size>, p: Placed) -> Res<ProcessModel> {
    let transport = transport(t);
    let packet_size = crate::resolve::packet_size(f, size, transport, &p.group)?;
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
    model(f, Process::Sine(Sine::new(mean, waves)), m.transport, m.packet_size, p)
}

/// Seconds the model is active.
fn span(p: &Placed) -> f64 {
    (p.stop - p.start).as_secs_f64()
}

pub(crate) fn fgn(at: &Context, f: &str, m: &FgnSpec, p: Placed) -> Res<ProcessModel> {
    let mean = model_rate(at, &format!("{f}.rate"), m.rate)?.as_f64();
    let deviation = model_rate(at, &format!("{f}.deviation"), m.deviation)?.as_f64();
    if !(m.hurst > 0.0 && m.hurst < 1.0) {
        return Err(err(format!("{f}.hurst"), format!("{} is out of range: expected a Hurst parameter above 0 and below 1", m.hurst)));
    }
    let bin_span = m.bin.map_or(units::Dur::from_secs_f64(crate::resolve::defaults::FGN_BIN_S), |b| b.0);
    let bin = bin_span.as_secs_f64();
    if bin < 1e-6 {
        return Err(err(format!("{f}.bin"), "must be at least 1us"));
    }
    let bins = (span(&p) / bin).ceil();
    if bins > limits::FGN_BINS as f64 {
        return Err(err(
            format!("{f}.bin"),
            format!("{} at {bin_span} bins is {bins:.0} bins: at most {} (a longer bin or a shorter span)", p.stop - p.start, limits::FGN_BINS),
        ));
    }
    let process = Process::Fgn(Fgn { mean, deviation, hurst: m.hurst, width: bin, bins: bins as usize });
    model(f, process, m.transport, m.packet_size, p)
}

pub(crate) fn noise(at: &Context, f: &str, m: &NoiseSpec, p: Placed) -> Res<ProcessModel> {
    let mean = model_rate(at, &format!("{f}.rate"), m.rate)?.as_f64();
    let deviation = model_rate(at, &format!("{f}.deviation"), m.deviation)?.as_f64();
    let cutoff = frequency(m.cutoff, &format!("{f}.cutoff"), false)?;
    let low = frequency(m.low.unwrap_or(0.0), &format!("{f}.low"), true)?;
    if low >= cutoff {
        return Err(err(format!("{f}.low"), format!("{low} Hz is not below the cutoff ({cutoff} Hz)")));
    }
    let n = Noise { mean, deviation, low, cutoff, span: span(&p) };
    if n.components().is_empty() {
        return Err(err(
            format!("{f}.cutoff"),
            format!("the band {low} to {cutoff} Hz holds no multiple of 1/{}s (the model's span): widen the band or lengthen the span", n.span),
        ));
    }
    if n.samples() > limits::NOISE_SAMPLES {
        return Err(err(
            format!("{f}.cutoff"),
            format!(
                "{cutoff} Hz over {}s needs {} samples of the rate: at most {} (a lower cutoff or a shorter span)",
                n.span,
                n.samples(),
                limits::NOISE_SAMPLES
            ),
        ));
    }
    model(f, Process::Noise(n), m.transport, m.packet_size, p)
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
        (ModelSpec::Fgn(m), Process::Fgn(f)) => {
            m.bin = Some(TimeSpan(units::Dur::from_secs_f64(f.width)));
            m.packet_size = size;
        }
        (ModelSpec::Noise(m), Process::Noise(n)) => {
            m.low = Some(n.low);
            m.packet_size = size;
        }
        _ => unreachable!("resolve keeps the kind of the background models"),
    }
}
