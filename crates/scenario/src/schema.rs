//! The scenario schema. Field names are the TOML keys.
//!
//! Optional fields that have a default are `Option`s here so that a case or
//! a host group can leave them unset and inherit; [`with_defaults`](crate::with_defaults)
//! fills every default in, and that is what a run directory records.

use crate::path::PathElement;
use crate::process::{FgnSpec, NoiseSpec, SineSpec};
use crate::tagged::{self, Tagged};
use crate::values::{choice, Bandwidth, BufferSize, Fraction, QueueSize, RateOrShare, Size, TimeSpan};
use serde::de::{self, Deserializer, MapAccess};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The case of a scenario file this scenario was resolved from: written
    /// in a run directory's scenario.toml, so that running that file again
    /// records the same case. A file with `[cases]` cannot set it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case: Option<String>,
    /// Simulated time.
    pub duration: TimeSpan,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// What runs it: the simulator (the default) or the real-time emulator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<Engine>,
    pub topology: Topology,
    /// Default TCP settings for every host; host groups may override fields.
    #[serde(default)]
    pub tcp: TcpSpec,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub background: Vec<BackgroundSpec>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub apps: Vec<AppSpec>,
    /// How late the hosts' applications' timers fire; exactly on time if
    /// not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timer_lateness: Option<TimerLateness>,
    #[serde(default)]
    pub output: OutputSpec,
}

fn default_seed() -> u64 {
    1
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<TopologyKind>,
    pub bottleneck: BottleneckSpec,
    /// Access link of every host unless its group says otherwise.
    #[serde(default)]
    pub access: LinkSpec,
}

/// How late an application's timer fires on a real host (its wake-up
/// latency): a shifted exponential through this median and 99th
/// percentile. The simulator draws it for every application timer; the
/// emulator's timers are its hosts' own, late by what their kernel gives
/// (its summary reports how late they fired).
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TimerLateness {
    pub median: TimeSpan,
    pub p99: TimeSpan,
}

choice! {
    /// The engine a scenario runs in.
    Engine { Sim = "sim", Emu = "emu" }
}

choice! {
    /// The shape of the network: only the dumbbell for now.
    TopologyKind { Dumbbell = "dumbbell" }
}

/// The shared link, both directions alike unless `reverse` overrides: a
/// link of `rate`, `delay`, `queue` and `loss`, or a `path` of elements.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BottleneckSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Bandwidth>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<TimeSpan>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueSize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<Fraction>,
    /// Left to right as a sequence of elements, instead of the fields above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<Vec<PathElement>>,
    /// Overrides for the right-to-left direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse: Option<ReverseSpec>,
}

/// The right-to-left direction of the bottleneck: the fields it changes,
/// or a path of its own.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ReverseSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Bandwidth>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<TimeSpan>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueSize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<Fraction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<Vec<PathElement>>,
}

impl ReverseSpec {
    /// The link fields it sets.
    pub fn link(&self) -> LinkSpec {
        LinkSpec { rate: self.rate, delay: self.delay, queue: self.queue, loss: self.loss }
    }
}

/// A link whose fields may each be left to a default.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Bandwidth>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<TimeSpan>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueSize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<Fraction>,
}

impl LinkSpec {
    /// `self` with unset fields taken from `base`.
    pub fn over(&self, base: &LinkSpec) -> LinkSpec {
        LinkSpec { rate: self.rate.or(base.rate), delay: self.delay.or(base.delay), queue: self.queue.or(base.queue), loss: self.loss.or(base.loss) }
    }
}

/// TCP settings; unset fields inherit (group → scenario → built-in default).
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TcpSpec {
    /// The stack whose settings the unset fields take: "linux" (the default), "ns2"
    /// (ns-2 2.35's Agent/TCP family with Agent/TCPSink; Reno unless set) or "ns3"
    /// (ns-3 3.44's TcpSocketBase with TcpNewReno and TcpClassicRecovery).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flavour: Option<TcpFlavour>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub congestion_control: Option<CongestionControl>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sack: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mss: Option<Size>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// "auto" (Linux receive-window growth and autotuning up to 4 MiB) or a fixed window.
    pub rcv_buf: Option<BufferSize>,
    /// "auto" (Linux autotuning from 16 KiB up to 4 MiB) or a fixed size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snd_buf: Option<BufferSize>,
    /// Initial window, in segments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_cwnd: Option<u32>,
    /// RFC 7323 timestamps (default true, as Linux).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamps: Option<bool>,
    /// Linux quick ACKs: segments ACKed at once at the start and after idle (default 16; 0 off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quickack: Option<u32>,
    /// RFC 3465 byte counting (default true); false grows per ACK as ns-2/ns-3 NewReno.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub byte_counting: Option<bool>,
    /// CUBIC leaves slow start by Linux's HyStart (default true); false: plain slow start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hystart: Option<bool>,
    /// Linux's TSO deferral (default true); false: every segment as soon as the windows allow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tso_defer: Option<bool>,
    /// The window counts packets, as Linux's (default true); false: bytes (RFC 5681).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packet_window: Option<bool>,
    /// The end of a write ACKed once the application has read it, as Linux
    /// does (default true); false: the delayed-ACK rule alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ack_pushed: Option<bool>,
    /// A FIN's ACK waits for the application's own FIN or the delayed-ACK
    /// timer, as Linux's does (default true); false: ACKed at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delayed_fin_ack: Option<bool>,
    /// Delayed ACKs: acknowledge every N full segments (1 = no delay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ack_every: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delack_timeout: Option<TimeSpan>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_rto: Option<TimeSpan>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rto: Option<TimeSpan>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_rto: Option<TimeSpan>,
    /// RFC 3042 Limited Transmit (ns-2's singledup_); default true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limited_transmit: Option<bool>,
    /// RFC 5681 §4.1 restart from the initial window after an idle RTO; default true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_restart: Option<bool>,
    /// RACK loss detection (RFC 8985) with SACK; false: RFC 6675's IsLost. Default true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rack: Option<bool>,
    /// Tail loss probe (RFC 8985 §7) with SACK. Default true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tlp: Option<bool>,
    /// "linux" or "rfc6298": how the retransmission timeout follows the RTT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rto_estimator: Option<RtoEstimatorSpec>,
    /// ns-2's coarse-clock RTO estimator with this tick (tcpTick_), instead of rto_estimator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rto_tick: Option<TimeSpan>,
    /// "linux", "ns2" or "ns3": how ssthresh, fast retransmit and recovery respond to a loss.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_response: Option<LossResponseSpec>,
    /// "every" (default) or "first": which partial ACKs of NewReno recovery restart the timer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial_ack_timer: Option<PartialAckTimerSpec>,
    /// A fixed receive window leaves out the bytes held out of order (default true);
    /// false: the whole buffer from the next expected byte, as ns-3's receiver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ooo_shrinks_window: Option<bool>,
    /// Ask for ECN on the connections it opens (RFC 3168; Linux's tcp_ecn = 1, ns-2's
    /// ecn_); default false. A host agrees whenever its peer asks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<bool>,
}

impl TcpSpec {
    /// `self` with unset fields taken from `base`.
    pub fn over(&self, base: &TcpSpec) -> TcpSpec {
        macro_rules! either {
            ($($field:ident),*) => {
                TcpSpec { $($field: self.$field.or(base.$field)),* }
            };
        }
        either!(
            flavour,
            congestion_control,
            sack,
            mss,
            rcv_buf,
            snd_buf,
            initial_cwnd,
            byte_counting,
            hystart,
            tso_defer,
            packet_window,
            ack_pushed,
            delayed_fin_ack,
            timestamps,
            quickack,
            ack_every,
            delack_timeout,
            min_rto,
            max_rto,
            initial_rto,
            limited_transmit,
            idle_restart,
            rack,
            tlp,
            rto_estimator,
            rto_tick,
            loss_response,
            ooo_shrinks_window,
            partial_ack_timer,
            ecn
        )
    }
}

choice! {
    /// The TCP stack a scenario's unset TCP fields follow.
    TcpFlavour { Linux = "linux", Ns2 = "ns2", Ns3 = "ns3" }
}

choice! {
    /// How the retransmission timeout is estimated (tcp::RtoEstimator).
    RtoEstimatorSpec { Linux = "linux", Rfc6298 = "rfc6298" }
}

choice! {
    /// How the sender responds to a loss (tcp::LossResponse).
    LossResponseSpec { Linux = "linux", Ns2 = "ns2", Ns3 = "ns3" }
}

choice! {
    /// Which partial ACKs restart the retransmission timer (tcp::PartialAckTimer).
    PartialAckTimerSpec { Every = "every", First = "first" }
}

choice! {
    /// The congestion control algorithm.
    CongestionControl { Tahoe = "tahoe", Reno = "reno", NewReno = "newreno", Cubic = "cubic" }
}

/// Access link and TCP settings of a group of hosts, and the line they share.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HostSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<LinkSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<TcpSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<SharedLine>,
}

/// One line a group's hosts share, behind their own access links (a home's
/// access link, an office uplink): a drop-tail queue each way.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SharedLine {
    pub rate: Bandwidth,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueSize>,
}

/// One background traffic model: the fields every model takes, and the
/// model's own. In the file it is one table, `model` naming the model; a
/// field of another model is refused with the fields this one allows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BackgroundSpec {
    #[serde(flatten)]
    pub model: ModelSpec,
    #[serde(flatten)]
    pub common: BackgroundCommon,
}

impl<'de> Deserialize<'de> for BackgroundSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        tagged::deserialize(d)
    }
}

impl Tagged for BackgroundSpec {
    const TAG: &'static str = "model";
    type Kind = ModelName;
    type Common = BackgroundCommon;
    type Variant = ModelSpec;
    fn variant<'de, D: Deserializer<'de>>(kind: ModelName, d: D) -> Result<ModelSpec, D::Error> {
        Ok(match kind {
            ModelName::Cbr => ModelSpec::Cbr(RateSpec::deserialize(d)?),
            ModelName::Poisson => ModelSpec::Poisson(RateSpec::deserialize(d)?),
            ModelName::Greedy => ModelSpec::Greedy(GreedySpec::deserialize(d)?),
            ModelName::Swing => ModelSpec::Swing(SwingSpec::deserialize(d)?),
            ModelName::Playback => ModelSpec::Playback(PlaybackSpec::deserialize(d)?),
            ModelName::Sine => ModelSpec::Sine(SineSpec::deserialize(d)?),
            ModelName::Fgn => ModelSpec::Fgn(FgnSpec::deserialize(d)?),
            ModelName::Noise => ModelSpec::Noise(NoiseSpec::deserialize(d)?),
            ModelName::Web => ModelSpec::Web(WebSpec::deserialize(d)?),
        })
    }
    fn assemble(common: BackgroundCommon, model: ModelSpec) -> Self {
        BackgroundSpec { model, common }
    }
}

choice! {
    /// The `model` of a background table.
    ModelName {
        Cbr = "cbr", Poisson = "poisson", Greedy = "greedy", Swing = "swing", Playback = "playback", Sine = "sine", Fgn = "fgn",
        Noise = "noise", Web = "web"
    }
}

/// A background model and its own fields.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "model", rename_all = "lowercase")]
pub enum ModelSpec {
    /// Constant bit rate: equally spaced packets.
    Cbr(RateSpec),
    /// Exponential gaps between packets.
    Poisson(RateSpec),
    /// Bulk TCP flows, always backlogged.
    Greedy(GreedySpec),
    /// Traffic regenerated from a Swing model.
    Swing(SwingSpec),
    /// A trace's packets sent again at their times.
    Playback(PlaybackSpec),
    /// A sinusoidal rate (one or two waves), exact per-packet timing.
    Sine(SineSpec),
    /// A rate per bin that is fractional Gaussian noise.
    Fgn(FgnSpec),
    /// A band-limited white noise rate.
    Noise(NoiseSpec),
    /// Web-like flows: Poisson arrivals, a connection each.
    Web(WebSpec),
}

impl ModelSpec {
    pub fn kind(&self) -> ModelName {
        match self {
            ModelSpec::Cbr(_) => ModelName::Cbr,
            ModelSpec::Poisson(_) => ModelName::Poisson,
            ModelSpec::Greedy(_) => ModelName::Greedy,
            ModelSpec::Swing(_) => ModelName::Swing,
            ModelSpec::Playback(_) => ModelName::Playback,
            ModelSpec::Sine(_) => ModelName::Sine,
            ModelSpec::Fgn(_) => ModelName::Fgn,
            ModelSpec::Noise(_) => ModelName::Noise,
            ModelSpec::Web(_) => ModelName::Web,
        }
    }
}

/// The fields every background model takes.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct BackgroundCommon {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Number of source hosts, each with its own sink host on the other side
    /// (swing: virtual hosts per side).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hosts: Option<u32>,
    /// forward (left to right, the default) or reverse.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub direction: Option<Direction>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<TimeSpan>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<TimeSpan>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access: Option<LinkSpec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcp: Option<TcpSpec>,
    /// A line the model's sources share, and another its sinks share.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<SharedLine>,
    /// The DiffServ class its sources' packets carry (0 to 7; 0, best
    /// effort, by default): what markers meter and schedulers serve by.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class: Option<u8>,
}

impl tagged::Common for BackgroundCommon {
    const FIELDS: &'static [&'static str] = &["name", "hosts", "direction", "start", "stop", "access", "tcp", "line", "class"];
    fn read<'de, A: MapAccess<'de>>(&mut self, field: &str, map: &mut A) -> Result<(), A::Error> {
        match field {
            "name" => self.name = Some(map.next_value()?),
            "hosts" => self.hosts = Some(map.next_value()?),
            "direction" => self.direction = Some(map.next_value()?),
            "start" => self.start = Some(map.next_value()?),
            "stop" => self.stop = Some(map.next_value()?),
            "access" => self.access = Some(map.next_value()?),
            "tcp" => self.tcp = Some(map.next_value()?),
            "line" => self.line = Some(map.next_value()?),
            "class" => self.class = Some(map.next_value()?),
            _ => return Err(de::Error::unknown_field(field, Self::FIELDS)),
        }
        Ok(())
    }
}

choice! {
    /// Which way a background model's traffic flows.
    Direction {
        /// Left to right: sources on the left.
        Forward = "forward",
        /// Right to left: sources on the right.
        Reverse = "reverse",
    }
}

/// cbr and poisson: packets at a mean rate.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RateSpec {
    pub transport: Transport,
    /// Mean rate of IP bytes, absolute or a share of the bottleneck.
    pub rate: RateOrShare,
    /// IP packet size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packet_size: Option<Size>,
}

choice! {
    /// How a cbr, poisson, sine, fgn or noise source sends.
    Transport {
        /// Open loop: every packet on schedule.
        Udp = "udp",
        /// Responsive: one connection per host, written to on schedule.
        Tcp = "tcp",
    }
}

/// greedy: bulk TCP flows.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GreedySpec {
    /// Flows start at random times within this span after `start`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<TimeSpan>,
}

/// web: web-like TCP flows, Poisson arrivals, a connection each.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WebSpec {
    /// Flow arrivals per second (or `load`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flows_per_s: Option<f64>,
    /// Offered load: a rate or a share of the bottleneck, over the mean
    /// flow size (payload bytes) gives the arrival rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<RateOrShare>,
    /// Flow-length classes: [size, weight] pairs (or `pareto`, `lognormal`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow_sizes: Option<Vec<(Size, f64)>>,
    /// Bounded Pareto sizes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pareto: Option<ParetoSpec>,
    /// Lognormal sizes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lognormal: Option<LognormalSpec>,
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ParetoSpec {
    pub alpha: f64,
    pub min: Size,
    pub max: Size,
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LognormalSpec {
    /// The median size (exp(mu)).
    pub median: Size,
    pub sigma: f64,
}

/// swing: traffic regenerated from a model of a trace.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SwingSpec {
    /// The model file (from `undertow extract`), relative to the scenario.
    pub file: String,
    /// Sessions (and UDP flows) per trace-length period, times this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_scale: Option<f64>,
    /// Response sizes times this (the seed's RSP2, RSP4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_scale: Option<f64>,
    /// Every generated flow's round-trip time (the seed's HighBurst: "4ms").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt: Option<TimeSpan>,
    /// Think times zero (the seed's Traffic1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zero_think: Option<bool>,
    /// Cap every virtual host's access capacity (the seed's Traffic2: "2Mbps").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_cap: Option<Bandwidth>,
    /// Replay the trace's path stalls (`link.stalls`) on the access links of
    /// the side that stalled (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stalls: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structure: Option<Structure>,
}

choice! {
    /// How a swing model draws its sessions.
    Structure {
        /// Every parameter drawn on its own, as Swing did (the default).
        Marginals = "marginals",
        /// Whole observed sessions replayed.
        Sessions = "sessions",
    }
}

/// playback: a trace's packets sent again at their times (UDP), or its
/// bytes per bin written into one connection per host (TCP).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PlaybackSpec {
    /// A pcap or pcapng capture, or an event list ('time' or 'time size'
    /// a line, plain or xz-compressed), relative to the scenario.
    pub file: String,
    pub transport: Transport,
    /// Captures: play the packets the hosts of this side sent, sides as
    /// `undertow extract` decides them (default "a").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side: Option<TraceSide>,
    /// Captures: addresses in these prefixes are side A (default: decided
    /// from the trace, as `undertow extract` does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side_a: Option<Vec<String>>,
    /// Event lists without sizes: every packet's IP size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packet_size: Option<Size>,
    /// "1ms" (the seed's, the default) or "exact".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub granularity: Option<PlaybackGranularity>,
    /// Where in the trace playing begins (default its start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<TimeSpan>,
    /// How much of the trace is played (default all of it from `offset`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length: Option<TimeSpan>,
    /// Played this many times faster: every time in the trace divided by
    /// it, so its rate is multiplied by it (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed: Option<f64>,
    /// Played again and again until the model stops, every `length` (or,
    /// without one, the span of the packets played and one mean gap more);
    /// default false: played once.
    #[serde(default, rename = "loop", skip_serializing_if = "Option::is_none")]
    pub repeat: Option<bool>,
}

choice! {
    /// A side of a trace, as `undertow extract` names them.
    TraceSide { A = "a", B = "b" }
}

choice! {
    /// How finely a playback keeps packet times.
    PlaybackGranularity {
        /// Each packet at its own time, to the nanosecond.
        Exact = "exact",
        /// Every packet of a millisecond at the start of that millisecond.
        Millisecond = "1ms",
    }
}

/// One foreground application; in the file, `kind` names it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum AppSpec {
    /// httperf-like downloads.
    Http(HttpSpec),
    /// Real programs, a server and a client (the emulator only).
    Command(CommandSpec),
}

impl<'de> Deserialize<'de> for AppSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        tagged::deserialize(d)
    }
}

impl Tagged for AppSpec {
    const TAG: &'static str = "kind";
    type Kind = AppKind;
    type Common = ();
    type Variant = AppSpec;
    fn variant<'de, D: Deserializer<'de>>(kind: AppKind, d: D) -> Result<AppSpec, D::Error> {
        match kind {
            AppKind::Http => HttpSpec::deserialize(d).map(AppSpec::Http),
            AppKind::Command => CommandSpec::deserialize(d).map(AppSpec::Command),
        }
    }
    fn assemble((): (), app: AppSpec) -> Self {
        app
    }
}

choice! {
    /// The `kind` of an application table.
    AppKind { Http = "http", Command = "command" }
}

/// http: downloads, one connection per object.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HttpSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Size of every object (or use sizes_file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_size: Option<Size>,
    /// File of object sizes, one per line, fetched in order and cycled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes_file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_size: Option<Size>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think_time: Option<TimeSpan>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<TimeSpan>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<TimeSpan>,
    /// Fetches per client; 0 or unset = until stop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// Client hosts fetching in parallel from the one server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clients: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// Side of the dumbbell the server sits on: left (default: responses
    /// travel left to right, with forward background) or right.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_side: Option<ServerSide>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<HostSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<HostSpec>,
}

/// command: a server and a client program, unmodified, each on a host of
/// its own (in a network namespace of its own), started and stopped by
/// the run. `{server}` and `{client}` in a command line become the hosts'
/// addresses, `{dir}` the run directory, `{here}` the scenario file's
/// directory.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CommandSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The server's command line, started at time zero (none: the client
    /// talks to nothing the run starts, e.g. a probe's own echo).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_command: Option<String>,
    /// The client's command line, started at `start`.
    pub client_command: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<TimeSpan>,
    /// Both programs are stopped (SIGTERM, then SIGKILL) here or at the end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<TimeSpan>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_side: Option<ServerSide>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<HostSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<HostSpec>,
}

choice! {
    /// Where an application's server sits.
    ServerSide { Left = "left", Right = "right" }
}

/// Puts the tag of every `[[background]]` and `[[apps]]` table of a
/// scenario first, so that errors inside it keep their paths (see
/// [`tagged`](crate::tagged)).
pub(crate) fn tags_first(scenario: &mut toml::Table) {
    fn each(list: Option<&mut toml::Value>, tag: &str) {
        if let Some(toml::Value::Array(items)) = list {
            for item in items {
                if let toml::Value::Table(t) = item {
                    tagged::tag_first(t, tag);
                }
            }
        }
    }
    for (list, tag) in [("background", BackgroundSpec::TAG), ("apps", AppSpec::TAG)] {
        each(scenario.get_mut(list), tag);
    }
    fn table(v: Option<&mut toml::Value>) -> Option<&mut toml::Table> {
        match v {
            Some(toml::Value::Table(t)) => Some(t),
            _ => None,
        }
    }
    if let Some(b) = table(scenario.get_mut("topology")).and_then(|t| table(t.get_mut("bottleneck"))) {
        each(b.get_mut("path"), PathElement::TAG);
        if let Some(r) = table(b.get_mut("reverse")) {
            each(r.get_mut("path"), PathElement::TAG);
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OutputSpec {
    /// Capture the bottleneck (both directions) to bottleneck.pcap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcap: Option<bool>,
    /// Bytes kept of each captured packet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcap_snaplen: Option<Size>,
    /// When the capture starts (what comes before is warm-up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcap_from: Option<TimeSpan>,
    /// Share of the TCP segments carrying data left to right (`fwd`) and
    /// right to left (`rev`) that the capture does not write: a capture
    /// point that loses packets, to compare with a trace whose capture did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcap_miss_fwd: Option<Fraction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcap_miss_rev: Option<Fraction>,
    /// Bin width of the bottleneck series.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series_bin: Option<TimeSpan>,
}
