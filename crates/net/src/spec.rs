//! Paths as descriptions: what a scenario or a host plan asks for, built
//! into elements by either engine.

use crate::bunching::Bunching;
use crate::delay::Delay;
use crate::loss::{Loss, LossModel};
use crate::marker::{Tswtcm, TswtcmSpec};
use crate::outage::Outages;
use crate::path::CustomElement;
use crate::path::{Path, Stage};
use crate::queue::{
    Codel, CodelParams, DisciplineKind, DropTail, Fifo, Pie, PieParams, Queue, QueueLimit, Red, RedCurve, RedParams, Rio, RioFlavour, RioSpec,
    Server, Transmit, Wrr, WrrClass,
};
use crate::schedule::{RateSchedule, Schedule};
use crate::shaper::Shaper;
use units::{Dur, Rate, Rng};

/// How a queue chooses what waits, what is dropped and what goes next.
#[derive(Clone, Debug, PartialEq)]
pub enum DisciplineSpec {
    /// Drop-tail, decided at arrival.
    DropTail,
    /// Drop-tail served through the scheduled (held, woken) path: the same
    /// behaviour, one wake-up per packet; see [`crate::queue::Fifo`].
    ScheduledFifo,
    /// RED as ns-2's Queue/RED, drawing from the random stream `stream`.
    Red { params: RedParams, stream: String },
    /// CoDel (RFC 8289), decided at dequeue.
    Codel(CodelParams),
    /// PIE (RFC 8033), drawing from the random stream `stream`.
    Pie { params: PieParams, stream: String },
    /// Round-robin between classes, `weight` packets a turn, each class
    /// its own sub-queue and limit ([`crate::queue::Wrr`]).
    Wrr(Vec<WrrClass>),
    /// RIO-C on the queue's limit (in packets) and rate
    /// ([`crate::queue::Rio`]); its drops draw from `stream`.
    Rio { precedences: Vec<RedCurve>, mean_packet: u32, flavour: RioFlavour, stream: String },
}

impl DisciplineSpec {
    /// The discipline for a queue of `limit` sending at `rate` on a link
    /// of propagation `delay` (what RED's automatic settings read).
    fn build(&self, limit: QueueLimit, rate: Rate, delay: Dur, seed: u64) -> DisciplineKind {
        match self {
            DisciplineSpec::DropTail => DisciplineKind::DropTail(DropTail::new(limit)),
            DisciplineSpec::ScheduledFifo => DisciplineKind::Dequeue(Box::new(Fifo::new(limit))),
            DisciplineSpec::Red { params, stream } => {
                let red = Red::new(params.estimator(rate, delay), limit, params.setbit, Rng::stream(seed, stream));
                DisciplineKind::Arrival(Box::new(red.with_adaptive(params.adaptive(rate))))
            }
            DisciplineSpec::Codel(p) => DisciplineKind::Dequeue(Box::new(Codel::new(*p, limit))),
            DisciplineSpec::Pie { params, stream } => DisciplineKind::Arrival(Box::new(Pie::new(*params, limit, Rng::stream(seed, stream)))),
            DisciplineSpec::Wrr(classes) => DisciplineKind::Dequeue(Box::new(Wrr::new(classes))),
            DisciplineSpec::Rio { precedences, mean_packet, flavour, stream } => {
                let limit = match limit {
                    QueueLimit::Packets(n) => n,
                    QueueLimit::Bytes(b) => (b / (*mean_packet).max(1) as u64).min(u32::MAX as u64) as u32,
                };
                let spec = RioSpec { precedences: precedences.clone(), limit, rate, mean_packet: *mean_packet, flavour: *flavour };
                DisciplineKind::Arrival(Box::new(Rio::new(&spec, Rng::stream(seed, stream))))
            }
        }
    }
}

/// A rate, fixed or following a schedule.
#[derive(Clone, Debug, PartialEq)]
pub enum RateSpec {
    Fixed(Rate),
    Scheduled(RateSchedule),
}

/// A delay, fixed or following a schedule.
#[derive(Clone, Debug, PartialEq)]
pub enum DelaySpec {
    Fixed(Dur),
    Scheduled(Schedule<Dur>),
}

/// One element of a path. Random elements name their random stream, so
/// that a run's numbers do not depend on what else the run holds.
#[derive(Clone, Debug, PartialEq)]
pub enum ElementSpec {
    /// Loss of every packet by `model`; of handshakes by their own model
    /// when given.
    Loss {
        model: LossModel,
        stream: String,
        handshakes: Option<(LossModel, String)>,
    },
    /// A queue and its serialiser.
    Queue {
        rate: RateSpec,
        limit: QueueLimit,
        discipline: DisciplineSpec,
    },
    /// A token bucket on the serialiser of the queue before it.
    Shaper(Shaper),
    /// Outage windows on the serialiser of the queue before them.
    Outages(Outages),
    /// Packets delivered in pairs (after a queue: it pairs packets that waited there).
    Bunching {
        p: f64,
        stream: String,
    },
    Delay(DelaySpec),
    /// The TSWTCM marker (RFC 2859), its draws from `stream`.
    Tswtcm {
        spec: TswtcmSpec,
        stream: String,
    },
}

/// Why a path description cannot be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpecError {
    /// A shaper or outages with no queue before them in the path.
    GateWithoutQueue(&'static str),
    /// Two sets of outage windows on one queue.
    TwoOutages,
    /// A host joined a line of the other side, or a second line.
    Line(String),
}

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SpecError::GateWithoutQueue(what) => write!(f, "a {what} gates the serialiser of the queue before it, and this path has none"),
            SpecError::TwoOutages => write!(f, "one queue takes one set of outage windows"),
            SpecError::Line(name) => write!(f, "line {name:?}: a host shares one line, with hosts of its own side"),
        }
    }
}

impl std::error::Error for SpecError {}

/// One direction of a link as a sequence of element descriptions.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PathSpec {
    pub elements: Vec<ElementSpec>,
}

impl PathSpec {
    /// The classic link: Bernoulli loss on arrival (its stream `stream`),
    /// a drop-tail queue at `rate`, propagation `delay`.
    pub fn link(rate: Rate, delay: Dur, limit: QueueLimit, loss: f64, stream: &str) -> PathSpec {
        let mut elements = Vec::with_capacity(3);
        if loss > 0.0 {
            elements.push(ElementSpec::Loss { model: LossModel::Bernoulli { p: loss }, stream: stream.to_string(), handshakes: None });
        }
        elements.push(ElementSpec::Queue { rate: RateSpec::Fixed(rate), limit, discipline: DisciplineSpec::DropTail });
        elements.push(ElementSpec::Delay(DelaySpec::Fixed(delay)));
        PathSpec { elements }
    }

    /// The nominal rate of the path's first queue (a schedule's first
    /// rate), if it has a queue.
    pub fn rate(&self) -> Option<Rate> {
        self.elements.iter().find_map(|e| match e {
            ElementSpec::Queue { rate: RateSpec::Fixed(r), .. } => Some(*r),
            ElementSpec::Queue { rate: RateSpec::Scheduled(s), .. } => Some(s.at(units::Time::ZERO).0),
            _ => None,
        })
    }

    /// The fixed propagation delay between element `i` and the next queue
    /// (the link's delay, to a queue that needs it).
    fn delay_after(&self, i: usize) -> Dur {
        self.elements[i + 1..]
            .iter()
            .take_while(|e| !matches!(e, ElementSpec::Queue { .. }))
            .map(|e| match e {
                ElementSpec::Delay(DelaySpec::Fixed(d)) => *d,
                _ => Dur::ZERO,
            })
            .fold(Dur::ZERO, |a, b| a + b)
    }

    /// Builds the elements, each random one on its own stream of `seed`.
    pub fn build(&self, seed: u64) -> Result<Path, SpecError> {
        let mut stages: Vec<Stage> = Vec::with_capacity(self.elements.len());
        for (i, e) in self.elements.iter().enumerate() {
            let stage = match e {
                ElementSpec::Loss { model, stream, handshakes: None } => Stage::Loss(Loss::new(model.clone(), Rng::stream(seed, stream))),
                ElementSpec::Loss { model, stream, handshakes: Some((hs, hs_stream)) } => {
                    Stage::Loss(Loss::with_handshakes(model.clone(), Rng::stream(seed, stream), hs.clone(), Rng::stream(seed, hs_stream)))
                }
                ElementSpec::Queue { rate, limit, discipline } => {
                    let transmit = match rate {
                        RateSpec::Fixed(r) => Transmit::Rate(*r),
                        RateSpec::Scheduled(s) => Transmit::Schedule(Box::new(s.clone())),
                    };
                    let server = Server::new(transmit);
                    let d = discipline.build(*limit, server.nominal_rate(), self.delay_after(i), seed);
                    Stage::Queue(Queue::new(server, d))
                }
                ElementSpec::Shaper(s) => {
                    last_queue(&mut stages, "shaper")?.add_shaper(*s);
                    continue;
                }
                ElementSpec::Outages(o) => {
                    let server = last_queue(&mut stages, "set of outages")?;
                    if server.has_outages() {
                        return Err(SpecError::TwoOutages);
                    }
                    server.set_outages(o.clone());
                    continue;
                }
                ElementSpec::Bunching { p, stream } => Stage::Bunching(Bunching::new(*p, Rng::stream(seed, stream))),
                ElementSpec::Delay(DelaySpec::Fixed(d)) => Stage::Delay(Delay::fixed(*d)),
                ElementSpec::Delay(DelaySpec::Scheduled(s)) => Stage::Delay(Delay::scheduled(s.clone())),
                ElementSpec::Tswtcm { spec, stream } => Stage::Custom(CustomElement(Box::new(Tswtcm::new(spec.clone(), Rng::stream(seed, stream))))),
            };
            stages.push(stage);
        }
        Ok(Path::new(stages))
    }
}

/// The serialiser of the last queue built, which a gate applies to.
fn last_queue<'a>(stages: &'a mut [Stage], what: &'static str) -> Result<&'a mut Server, SpecError> {
    match stages.iter_mut().rev().find(|s| matches!(s, Stage::Queue(_))) {
        Some(Stage::Queue(q)) => Ok(q.server_mut()),
        _ => Err(SpecError::GateWithoutQueue(what)),
    }
}
