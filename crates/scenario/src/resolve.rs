//! From the scenario as written to engine settings, with the semantic
//! checks that the schema alone cannot express. Built-in defaults live here.

use crate::error::ScenarioError;
use crate::process::ProcessModel;
use crate::schema::*;
use crate::values::{BufferSize, QueueSize, RateOrShare, Size};
use net::QueueLimit;
use std::path::Path;
use tcp::{Algorithm, LossResponse, PartialAckTimer, RtoEstimator, TcpConfig};
use traffic::background::{Arrivals, FlowSizes, RateTransport};
use units::{Dur, Rate, Time};

/// A link as a scenario names it: rate, delay, drop-tail queue, loss (the
/// host plans own it).
pub use traffic::plan::{LineParams, LinkParams};

/// Access link and TCP settings shared by a group of hosts.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub access: LinkParams,
    pub tcp: TcpConfig,
    /// The line its hosts share, if any.
    pub line: Option<LineParams>,
    /// The DiffServ class of what its hosts send.
    pub class: u8,
}

/// Left or right of the bottleneck (the host plans own it).
pub use traffic::plan::Side;

#[derive(Clone, Debug, PartialEq)]
pub enum BackgroundModel {
    Rate {
        name: String,
        arrivals: Arrivals,
        transport: RateTransport,
        rate: Rate,
        packet_size: u32,
        hosts: u32,
        sources: Side,
        start: Time,
        stop: Time,
        group: Group,
    },
    Greedy {
        name: String,
        hosts: u32,
        sources: Side,
        start: Time,
        spread: Dur,
        stop: Time,
        group: Group,
    },
    Swing(SwingModel),
    Playback(PlaybackModel),
    Web {
        name: String,
        hosts: u32,
        sources: Side,
        start: Time,
        stop: Time,
        flows_per_s: f64,
        sizes: FlowSizes,
        group: Group,
    },
    /// sine, fgn and noise: packets timed by a rate process.
    Process(ProcessModel),
}

/// A swing background model, resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct SwingModel {
    pub name: String,
    /// Absolute path of the model file.
    pub file: std::path::PathBuf,
    pub model: std::sync::Arc<swing::Model>,
    /// Virtual hosts for the model's side A and side B.
    pub hosts: [u32; 2],
    /// Where the model's side A sits (forward = left).
    pub side_a: Side,
    pub start: Time,
    pub stop: Time,
    pub session_scale: f64,
    pub response_scale: f64,
    pub zero_think: bool,
    /// Replay whole observed sessions instead of drawing each parameter.
    pub whole_sessions: bool,
    /// End-to-end RTT of every generated flow.
    pub rtt: Option<Dur>,
    pub access_cap: Option<Rate>,
    /// Replay the trace's path stalls.
    pub stalls: bool,
    /// TCP settings, and the access link used where the model has no values.
    pub group: Group,
}

/// A playback background model, resolved: its trace loaded and cut.
#[derive(Clone, Debug, PartialEq)]
pub struct PlaybackModel {
    pub name: String,
    /// Absolute path of the trace.
    pub file: std::path::PathBuf,
    /// The capture's side played (None: an event list).
    pub side: Option<TraceSide>,
    pub transport: RateTransport,
    pub granularity: traffic::background::Granularity,
    pub offset: Dur,
    pub speed: f64,
    /// The packets to play, timed from the model's start.
    pub trace: std::sync::Arc<traffic::background::PlaybackTrace>,
    pub hosts: u32,
    pub sources: Side,
    pub start: Time,
    pub stop: Time,
    pub group: Group,
}

#[derive(Clone, Debug, PartialEq)]
pub enum AppModel {
    Http {
        name: String,
        object_sizes: Vec<u64>,
        request_size: u64,
        think_time: Dur,
        start: Time,
        stop: Time,
        count: u64,
        clients: u32,
        port: u16,
        server_side: Side,
        client: Group,
        server: Group,
    },
    /// Real programs (the emulator only).
    Command {
        name: String,
        /// The scenario file's directory (`{here}` in a command line).
        here: std::path::PathBuf,
        server_command: Option<String>,
        client_command: String,
        start: Time,
        stop: Time,
        server_side: Side,
        client: Group,
        server: Group,
    },
}

impl BackgroundModel {
    pub fn name(&self) -> &str {
        match self {
            BackgroundModel::Rate { name, .. } | BackgroundModel::Greedy { name, .. } | BackgroundModel::Web { name, .. } => name,
            BackgroundModel::Swing(m) => &m.name,
            BackgroundModel::Playback(m) => &m.name,
            BackgroundModel::Process(m) => &m.name,
        }
    }

    /// The access, TCP settings and class of the model's hosts.
    pub fn group(&self) -> &Group {
        match self {
            BackgroundModel::Rate { group, .. } | BackgroundModel::Greedy { group, .. } | BackgroundModel::Web { group, .. } => group,
            BackgroundModel::Swing(m) => &m.group,
            BackgroundModel::Playback(m) => &m.group,
            BackgroundModel::Process(m) => &m.group,
        }
    }
}

impl AppModel {
    pub fn name(&self) -> &str {
        match self {
            AppModel::Http { name, .. } | AppModel::Command { name, .. } => name,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct OutputParams {
    pub pcap: bool,
    pub pcap_snaplen: u32,
    /// The capture starts here: what comes before is warm-up.
    pub pcap_from: Dur,
    /// Share of data segments the capture misses, [fwd, rev].
    pub pcap_miss: [f64; 2],
    pub series_bin: Dur,
}

/// Everything an engine needs to build and run the scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    pub name: String,
    pub duration: Dur,
    pub seed: u64,
    pub engine: Engine,
    /// [left to right, right to left], as paths of elements.
    pub bottleneck: [net::PathSpec; 2],
    pub background: Vec<BackgroundModel>,
    pub apps: Vec<AppModel>,
    /// How late application timers fire (none: on time).
    pub timer_lateness: Option<TimerLateness>,
    pub output: OutputParams,
}

pub mod defaults {
    //! Built-in defaults; docs/scenario.md lists them.
    pub const BOTTLENECK_QUEUE: &str = "100p";
    pub const ACCESS_RATE: &str = "1Gbps";
    pub const ACCESS_DELAY: &str = "1ms";
    pub const ACCESS_QUEUE: &str = "1000p";
    /// A shared line's queue, packets (a home router's).
    pub const LINE_QUEUE: u32 = 100;
    pub const PACKET_SIZE: u64 = 1000;
    pub const RATE_HOSTS: u32 = 10;
    pub const GREEDY_HOSTS: u32 = 1;
    pub const GREEDY_SPREAD: &str = "1s";
    /// One host: the seed's TCP playback used a single connection.
    pub const PLAYBACK_HOSTS: u32 = 1;
    pub const WEB_HOSTS: u32 = 10;
    /// The bin an fgn rate is held over, seconds.
    pub const FGN_BIN_S: f64 = 0.01;
    pub const HTTP_REQUEST: u64 = 100;
    pub const HTTP_PORT: u16 = 80;
    pub const SNAPLEN: u64 = 96;
    pub const SERIES_BIN: &str = "1ms";
}

pub mod limits {
    //! What one run may ask for: beyond these a run would exhaust memory or
    //! never finish, so the scenario is refused before anything is
    //! allocated. docs/scenario.md lists them.

    /// Hosts of every model and application together (each has its own
    /// access links and route entries).
    pub const HOSTS: u64 = 200_000;
    /// Bins of the bottleneck series: duration / `output.series_bin`.
    pub const SERIES_BINS: u64 = 20_000_000;
    /// Packets a cbr or poisson source sends in its active span.
    pub const SOURCE_PACKETS: f64 = 1e9;
    /// Flows of one web model (each a connection and a record).
    pub const WEB_FLOWS: f64 = 1e8;
    /// Sessions and UDP flows a swing model starts per trace-length period
    /// (all are scheduled when the period begins).
    pub const SWING_SESSIONS_PER_PERIOD: f64 = 1e6;
    /// The largest scale factors of a swing model.
    pub const SWING_SCALE: f64 = 1e6;
    /// Packets a playback holds in memory (16 bytes each), and events an
    /// event list may hold.
    pub const PLAYBACK_PACKETS: usize = 20_000_000;
    /// The largest speed-up of a playback.
    pub const PLAYBACK_SPEED: f64 = 1e6;
    /// The largest sizes file read for an http application.
    pub const SIZES_FILE_BYTES: u64 = 64 << 20;
    /// Bins of an fgn rate (its generator transforms four times as many
    /// numbers, in two arrays of twice as many).
    pub const FGN_BINS: u64 = 1 << 22;
    /// Samples of a noise rate (a power of two, 20 per period of its cutoff).
    pub const NOISE_SAMPLES: usize = 1 << 23;
}

type Res<T> = Result<T, ScenarioError>;

/// A buffer setting `name` of `field`: None if unset, Some(None) for
/// "auto" (Linux autotuning), Some(Some(bytes)) for a fixed size.
fn buffer(field: &str, name: &str, b: Option<BufferSize>, mss: u32) -> Result<Option<Option<u64>>, ScenarioError> {
    match b {
        None => Ok(None),
        Some(BufferSize::Auto) => Ok(Some(None)),
        Some(BufferSize::Fixed(b)) if b < mss as u64 => {
            Err(err(format!("{field}.{name}"), format!("{b} bytes is smaller than one segment ({mss} bytes)")))
        }
        Some(BufferSize::Fixed(b)) if b > TCP_BUF_MAX => {
            Err(err(format!("{field}.{name}"), format!("{b} bytes is out of range: expected at most 1GiB")))
        }
        Some(BufferSize::Fixed(b)) => Ok(Some(Some(b))),
    }
}

pub(crate) fn err(field: impl Into<String>, msg: impl Into<String>) -> ScenarioError {
    // The file name is filled in by the caller, which knows it.
    ScenarioError::new("", field, msg)
}

fn queue(q: QueueSize) -> QueueLimit {
    match q {
        QueueSize::Packets(n) => QueueLimit::Packets(n),
        QueueSize::Bytes(b) => QueueLimit::Bytes(b),
    }
}

fn parse_default<T>(f: fn(&str) -> Result<T, units::parse::UnitError>, s: &str) -> T {
    f(s).unwrap_or_else(|e| panic!("built-in default {s:?} does not parse: {e}"))
}

/// A link with built-in defaults for unset fields (the spec must be valid).
pub(crate) fn link_defaults(spec: &LinkSpec) -> LinkParams {
    link(spec, "").expect("validated before")
}

/// TCP settings with built-in defaults for unset fields (the spec must be valid).
pub(crate) fn tcp_defaults(spec: &TcpSpec) -> TcpConfig {
    tcp(spec, "").expect("validated before")
}

fn link(spec: &LinkSpec, field: &str) -> Res<LinkParams> {
    let rate = spec.rate.map(|r| r.0).unwrap_or_else(|| parse_default(units::parse::rate, defaults::ACCESS_RATE));
    let delay = spec.delay.map(|d| d.0).unwrap_or_else(|| parse_default(units::parse::duration, defaults::ACCESS_DELAY));
    let q = spec.queue.map(queue).unwrap_or(QueueLimit::Packets(defaults::ACCESS_QUEUE.trim_end_matches('p').parse().expect("default queue")));
    let loss = spec.loss.map_or(0.0, |l| l.0);
    if loss >= 1.0 {
        return Err(err(format!("{field}.loss"), "a loss of 100% lets nothing through: expected less than 100%"));
    }
    Ok(LinkParams { rate, delay, queue: q, loss })
}

/// The largest TCP buffer: the most a scaled window can announce (2^30).
const TCP_BUF_MAX: u64 = 1 << 30;

fn tcp(spec: &TcpSpec, field: &str) -> Res<TcpConfig> {
    let mut c = match spec.flavour {
        Some(TcpFlavour::Ns2) => TcpConfig::ns2(),
        Some(TcpFlavour::Ns3) => TcpConfig::ns3(),
        Some(TcpFlavour::Linux) | None => TcpConfig::default(),
    };
    if let Some(cc) = spec.congestion_control {
        c.algorithm = match cc {
            CongestionControl::Tahoe => Algorithm::Tahoe,
            CongestionControl::Reno => Algorithm::Reno,
            CongestionControl::NewReno => Algorithm::NewReno,
            CongestionControl::Cubic => Algorithm::Cubic,
        };
    }
    // The settings taken as they are.
    macro_rules! as_given {
        ($($setting:ident => $field:ident),* $(,)?) => {
            $(if let Some(v) = spec.$setting {
                c.$field = v;
            })*
        };
    }
    as_given!(
        sack => sack, byte_counting => byte_counting, hystart => hystart, tso_defer => tso_defer,
        packet_window => packet_window, ack_pushed => ack_pushed, delayed_fin_ack => delayed_fin_ack,
        timestamps => timestamps, quickack => quickack, limited_transmit => limited_transmit,
        idle_restart => slow_start_after_idle, rack => rack, tlp => tlp,
        ooo_shrinks_window => ooo_shrinks_window, ecn => ecn,
    );
    for (span, field) in [
        (spec.delack_timeout, &mut c.delack_timeout),
        (spec.min_rto, &mut c.min_rto),
        (spec.max_rto, &mut c.max_rto),
        (spec.initial_rto, &mut c.initial_rto),
    ] {
        if let Some(t) = span {
            *field = t.0;
        }
    }
    if let Some(m) = spec.mss {
        if !(64..=65495).contains(&m.0) {
            return Err(err(format!("{field}.mss"), format!("{} bytes is out of range: expected 64B to 65495B", m.0)));
        }
        c.mss = m.0 as u32;
    }
    if let Some(b) = buffer(field, "rcv_buf", spec.rcv_buf, c.mss)? {
        c.rcv_buf_auto = b.is_none();
        c.rcv_buf = b.unwrap_or(c.rcv_buf);
    }
    if let Some(b) = buffer(field, "snd_buf", spec.snd_buf, c.mss)? {
        c.snd_buf_auto = b.is_none();
        c.snd_buf = b.unwrap_or(c.snd_buf);
    }
    if let Some(w) = spec.initial_cwnd {
        if !(1..=1000).contains(&w) {
            return Err(err(format!("{field}.initial_cwnd"), format!("{w} is out of range: expected 1 to 1000 segments")));
        }
        c.initial_cwnd = w;
    }
    if let Some(a) = spec.ack_every {
        if !(1..=64).contains(&a) {
            return Err(err(format!("{field}.ack_every"), format!("{a} is out of range: expected 1 (every segment) to 64")));
        }
        c.ack_every = a;
    }
    if let Some(e) = spec.rto_estimator {
        c.rto_estimator = match e {
            RtoEstimatorSpec::Linux => RtoEstimator::Linux,
            RtoEstimatorSpec::Rfc6298 => RtoEstimator::Rfc6298,
        };
    }
    if let Some(t) = spec.rto_tick {
        if !(Dur::from_micros(1)..=Dur::from_secs(1)).contains(&t.0) {
            return Err(err(format!("{field}.rto_tick"), format!("{} is out of range: expected 1us to 1s", t.0)));
        }
        c.rto_tick = Some(t.0);
    }
    if let Some(r) = spec.loss_response {
        c.loss_response = match r {
            LossResponseSpec::Linux => LossResponse::Linux,
            LossResponseSpec::Ns2 => LossResponse::Ns2,
            LossResponseSpec::Ns3 => LossResponse::Ns3,
        };
    }
    if let Some(p) = spec.partial_ack_timer {
        c.partial_ack_timer = match p {
            PartialAckTimerSpec::Every => PartialAckTimer::Every,
            PartialAckTimerSpec::First => PartialAckTimer::First,
        };
    }
    if c.ecn && c.loss_response == LossResponse::Ns3 {
        return Err(err(
            format!("{field}.ecn"),
            "ECN is not modelled with ns-3's loss response: expected false with flavour or loss_response \"ns3\"",
        ));
    }
    if c.min_rto > c.max_rto {
        return Err(err(format!("{field}.min_rto"), format!("min_rto ({}) is above max_rto ({})", c.min_rto, c.max_rto)));
    }
    if c.initial_rto == Dur::ZERO || c.max_rto == Dur::ZERO {
        return Err(err(format!("{field}.initial_rto"), "RTO bounds must be above zero"));
    }
    Ok(c)
}

fn group(s: &Scenario, h: &HostSpec, field: &str) -> Res<Group> {
    let a = h.access.clone().unwrap_or_default().over(&s.topology.access);
    let a_field = if h.access.is_some() { format!("{field}.access") } else { "topology.access".to_string() };
    let t = h.tcp.clone().unwrap_or_default().over(&s.tcp);
    let t_field = if h.tcp.is_some() { format!("{field}.tcp") } else { "tcp".to_string() };
    let line = h.line.as_ref().map(shared_line);
    Ok(Group { access: link(&a, &a_field)?, tcp: tcp(&t, &t_field)?, class: 0, line })
}

/// A group's shared line (its rate and queue are above zero, as every
/// rate and queue size parses).
fn shared_line(l: &SharedLine) -> LineParams {
    LineParams { rate: l.rate.0, queue: l.queue.map(queue).unwrap_or(QueueLimit::Packets(defaults::LINE_QUEUE)) }
}

fn span(start: Option<crate::TimeSpan>, stop: Option<crate::TimeSpan>, duration: Dur, field: &str) -> Res<(Time, Time)> {
    let start = Time(start.map_or(0, |d| d.0 .0));
    let stop = Time(stop.map_or(duration.0, |d| d.0 .0));
    if stop <= start {
        return Err(err(format!("{field}.stop"), format!("stop ({}) must be after start ({})", Dur(stop.0), Dur(start.0))));
    }
    Ok((start, stop))
}

/// Whether `n` can name a file in a run directory (a traffic model's
/// records, a case's directory): not a path, not hidden, not too long.
pub(crate) fn usable_name(n: &str) -> Result<(), &'static str> {
    let ok = !n.is_empty() && n.len() <= 64 && n.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c)) && !n.starts_with('.');
    if ok {
        Ok(())
    } else {
        Err("names hold 1 to 64 letters, digits, '_', '-' and '.', and do not start with '.' (they name files and directories of a run)")
    }
}

/// Most virtual hosts per side (Swing subsampled to 1000).
pub const SWING_MAX_HOSTS: u32 = 1000;

pub(crate) fn resolve(s: &Scenario, dir: &Path) -> Res<Resolved> {
    if s.duration.0 == Dur::ZERO {
        return Err(err("duration", "must be longer than zero"));
    }
    let bottleneck = topology(&s.topology)?;
    tcp(&s.tcp, "tcp")?;
    let at = Context { s, dir, forward_rate: bottleneck[0].rate() };
    let background = s.background.iter().enumerate().map(|(i, bg)| background(&at, i, bg)).collect::<Res<Vec<_>>>()?;
    let apps = s.apps.iter().enumerate().map(|(i, a)| app(&at, i, a)).collect::<Res<Vec<_>>>()?;
    names(&background, &apps)?;
    let output = output(&s.output, s.duration.0)?;
    check_load(&background, &apps)?;
    let engine = s.engine.unwrap_or(Engine::Sim);
    let timer_lateness = s.timer_lateness.map(timer_lateness).transpose()?;
    Ok(Resolved {
        name: s.name.clone().unwrap_or_default(),
        duration: s.duration.0,
        seed: s.seed,
        engine,
        bottleneck,
        background,
        apps,
        timer_lateness,
        output,
    })
}

/// The widest spread a shifted exponential through a median can have and
/// still start at zero or later: its 99th percentile over its median is at
/// most 1 + ln 50 / ln 2.
const TIMER_LATENESS_P99_OVER_MEDIAN: f64 = 6.64;

fn timer_lateness(t: TimerLateness) -> Res<TimerLateness> {
    let (median, p99) = (t.median.0, t.p99.0);
    if p99 < median || p99.0 as f64 > median.0 as f64 * TIMER_LATENESS_P99_OVER_MEDIAN {
        return Err(err(
            "timer_lateness.p99",
            format!(
                "{p99} against a median of {median}: expected from the median to {TIMER_LATENESS_P99_OVER_MEDIAN} times it \
                 (a shifted exponential through both, starting at zero or later)"
            ),
        ));
    }
    Ok(t)
}

/// What the traffic models of a scenario resolve against.
pub(crate) struct Context<'a> {
    s: &'a Scenario,
    /// Where relative file names start.
    dir: &'a Path,
    /// Of the bottleneck, left to right: what rate shares are shares of
    /// (its first queue's rate; a path without a queue has none).
    forward_rate: Option<units::Rate>,
}

/// The bottleneck, [left to right, right to left], and the default access link.
fn topology(t: &Topology) -> Res<[net::PathSpec; 2]> {
    let b = &t.bottleneck;
    let field = "topology.bottleneck";
    let fwd_link = LinkSpec { rate: b.rate, delay: b.delay, queue: b.queue.or(Some(parse_queue_default())), loss: b.loss };
    let fwd = match &b.path {
        Some(p) => {
            if let Some(f) = [("rate", b.rate.is_some()), ("delay", b.delay.is_some()), ("queue", b.queue.is_some()), ("loss", b.loss.is_some())]
                .iter()
                .find(|f| f.1)
            {
                return Err(err(format!("{field}.{}", f.0), "give a path of elements or the link's rate, delay, queue and loss, not both"));
            }
            crate::path::resolve(p, &format!("{field}.path"), "link/bottleneck/fwd")?
        }
        None => bottleneck_link(&fwd_link, field, "bottleneck/fwd")?,
    };
    let rev = match &b.reverse {
        None => match &b.path {
            Some(p) => crate::path::resolve(p, &format!("{field}.path"), "link/bottleneck/rev")?,
            None => bottleneck_link(&fwd_link, field, "bottleneck/rev")?,
        },
        Some(r) => match (&r.path, r.link() == LinkSpec::default()) {
            (Some(p), true) => crate::path::resolve(p, &format!("{field}.reverse.path"), "link/bottleneck/rev")?,
            (Some(_), false) => {
                return Err(err(format!("{field}.reverse"), "give a path of elements or the link's rate, delay, queue and loss, not both"))
            }
            (None, _) if b.path.is_some() => {
                return Err(err(format!("{field}.reverse"), "the forward direction is a path: give the reverse one a path too"))
            }
            (None, _) => bottleneck_link(&r.link().over(&fwd_link), &format!("{field}.reverse"), "bottleneck/rev")?,
        },
    };
    link(&t.access, "topology.access")?;
    Ok([fwd, rev])
}

/// The bottleneck as a link of rate, delay, queue and loss: the path of
/// loss, drop-tail queue and delay named `name`.
fn bottleneck_link(spec: &LinkSpec, field: &str, name: &str) -> Res<net::PathSpec> {
    for (f, missing) in [("rate", spec.rate.is_none()), ("delay", spec.delay.is_none())] {
        if missing {
            return Err(err(field, format!("missing required field {f:?} (or a \"path\" of elements)")));
        }
    }
    Ok(link(spec, field)?.path(name))
}

/// What every background model resolves alike.
pub(crate) struct Placed {
    pub name: String,
    pub group: Group,
    /// As written: each model has its own default.
    pub hosts: Option<u32>,
    /// Where the sources (swing: the model's side A) sit.
    pub sources: Side,
    pub start: Time,
    pub stop: Time,
}

fn background(at: &Context, i: usize, bg: &BackgroundSpec) -> Res<BackgroundModel> {
    let f = format!("background[{i}]");
    let c = &bg.common;
    let name = c.name.clone().unwrap_or_else(|| format!("{}{i}", bg.model.kind()));
    let hs = HostSpec { access: c.access.clone(), tcp: c.tcp.clone(), line: c.line.clone() };
    let mut group = group(at.s, &hs, &f)?;
    group.class = match c.class {
        Some(k) if k > 7 => {
            return Err(err(format!("{f}.class"), format!("{k} is out of range: expected a DiffServ class from 0 (best effort) to 7")))
        }
        k => k.unwrap_or(0),
    };
    let sources = match c.direction {
        None | Some(Direction::Forward) => Side::Left,
        Some(Direction::Reverse) => Side::Right,
    };
    let (start, stop) = span(c.start, c.stop, at.s.duration.0, &f)?;
    if c.hosts == Some(0) {
        return Err(err(format!("{f}.hosts"), "must be at least 1"));
    }
    let placed = Placed { name, group, hosts: c.hosts, sources, start, stop };
    match &bg.model {
        ModelSpec::Cbr(m) => rate_model(at, &f, Arrivals::Constant, m, placed),
        ModelSpec::Poisson(m) => rate_model(at, &f, Arrivals::Poisson, m, placed),
        ModelSpec::Greedy(m) => Ok(greedy_model(m, placed)),
        ModelSpec::Swing(m) => swing_model(at.dir, &f, m, placed).map(BackgroundModel::Swing),
        ModelSpec::Playback(m) => crate::playback::resolve(at.dir, &f, m, placed).map(BackgroundModel::Playback),
        ModelSpec::Web(m) => web_model(at, &f, m, placed),
        ModelSpec::Sine(m) => crate::process::sine(at, &f, m, placed).map(BackgroundModel::Process),
        ModelSpec::Fgn(m) => crate::process::fgn(at, &f, m, placed).map(BackgroundModel::Process),
        ModelSpec::Noise(m) => crate::process::noise(at, &f, m, placed).map(BackgroundModel::Process),
    }
}

fn web_sizes(f: &str, m: &WebSpec) -> Res<FlowSizes> {
    let finite = |x: f64| x.is_finite();
    match (&m.flow_sizes, &m.pareto, &m.lognormal) {
        (Some(c), None, None) => {
            if c.is_empty() {
                return Err(err(format!("{f}.flow_sizes"), "is empty: expected [size, weight] pairs such as [[\"1460B\", 1.0]]"));
            }
            for (i, (size, w)) in c.iter().enumerate() {
                if size.0 == 0 || !finite(*w) || *w <= 0.0 {
                    return Err(err(format!("{f}.flow_sizes[{i}]"), "expected a size of at least 1 byte and a weight above 0"));
                }
            }
            Ok(FlowSizes::Classes(c.iter().map(|(s, w)| (s.0, *w)).collect()))
        }
        (None, Some(p), None) => {
            if !finite(p.alpha) || p.alpha <= 0.0 || p.min.0 == 0 || p.max.0 <= p.min.0 {
                return Err(err(format!("{f}.pareto"), "expected alpha above 0 and 0 < min < max"));
            }
            Ok(FlowSizes::BoundedPareto { alpha: p.alpha, min: p.min.0 as f64, max: p.max.0 as f64 })
        }
        (None, None, Some(l)) => {
            if l.median.0 == 0 || !finite(l.sigma) || l.sigma < 0.0 || l.sigma > 10.0 {
                return Err(err(format!("{f}.lognormal"), "expected a median of at least 1 byte and sigma from 0 to 10"));
            }
            Ok(FlowSizes::Lognormal { mu: (l.median.0 as f64).ln(), sigma: l.sigma })
        }
        (None, None, None) => Err(err(f, "missing the flow sizes: give flow_sizes, pareto or lognormal")),
        _ => Err(err(f, "give one of flow_sizes, pareto and lognormal")),
    }
}

fn web_model(at: &Context, f: &str, m: &WebSpec, p: Placed) -> Res<BackgroundModel> {
    let sizes = web_sizes(f, m)?;
    let flows_per_s = match (m.flows_per_s, m.load) {
        (Some(r), None) if r.is_finite() && r > 0.0 => r,
        (Some(r), None) => return Err(err(format!("{f}.flows_per_s"), format!("{r} is out of range: expected flows per second above 0"))),
        (None, Some(RateOrShare::Share(_))) if at.forward_rate.is_none() => {
            return Err(err(
                format!("{f}.load"),
                "a share of the bottleneck needs a queue in its forward path (its rate): give a rate such as \"10Mbps\"",
            ))
        }
        (None, Some(l)) => l.resolve(at.forward_rate.unwrap_or(Rate(0))).as_f64() / (8.0 * sizes.mean()),
        (None, None) => return Err(err(f, "missing the arrival rate: give flows_per_s or load")),
        (Some(_), Some(_)) => return Err(err(f, "give either flows_per_s or load, not both")),
    };
    Ok(BackgroundModel::Web {
        name: p.name,
        hosts: p.hosts.unwrap_or(defaults::WEB_HOSTS),
        sources: p.sources,
        start: p.start,
        stop: p.stop,
        flows_per_s,
        sizes,
        group: p.group,
    })
}

fn rate_model(at: &Context, f: &str, arrivals: Arrivals, m: &RateSpec, p: Placed) -> Res<BackgroundModel> {
    let transport = match m.transport {
        Transport::Udp => RateTransport::Udp,
        Transport::Tcp => RateTransport::Tcp,
    };
    let packet_size = packet_size(f, m.packet_size, transport, &p.group)?;
    let rate = model_rate(at, &format!("{f}.rate"), m.rate)?;
    Ok(BackgroundModel::Rate {
        name: p.name,
        arrivals,
        transport,
        rate,
        packet_size,
        hosts: p.hosts.unwrap_or(defaults::RATE_HOSTS),
        sources: p.sources,
        start: p.start,
        stop: p.stop,
        group: p.group,
    })
}

/// A model's IP packet size: at least one payload byte after the headers
/// (TCP timestamps add 12).
pub(crate) fn packet_size(f: &str, size: Option<Size>, transport: RateTransport, group: &Group) -> Res<u32> {
    let packet_size = size.map_or(defaults::PACKET_SIZE, |p| p.0);
    let min = match transport {
        RateTransport::Tcp => 41 + if group.tcp.timestamps { 12 } else { 0 },
        RateTransport::Udp => 29,
    };
    if !(min..=65535).contains(&packet_size) {
        return Err(err(format!("{f}.packet_size"), format!("{packet_size} bytes is out of range: expected {min}B to 65535B (IP packet size)")));
    }
    Ok(packet_size as u32)
}

/// A traffic model's rate: absolute, or a share of the forward bottleneck.
pub(crate) fn model_rate(at: &Context, field: &str, r: RateOrShare) -> Res<Rate> {
    match (r, at.forward_rate) {
        (RateOrShare::Share(_), None) => {
            Err(err(field, "a share of the bottleneck needs a queue in its forward path (its rate): give a rate such as \"10Mbps\""))
        }
        (r, bottleneck) => Ok(r.resolve(bottleneck.unwrap_or(Rate(0)))),
    }
}

fn greedy_model(m: &GreedySpec, p: Placed) -> BackgroundModel {
    BackgroundModel::Greedy {
        name: p.name,
        hosts: p.hosts.unwrap_or(defaults::GREEDY_HOSTS),
        sources: p.sources,
        start: p.start,
        spread: m.spread.map_or_else(|| parse_default(units::parse::duration, defaults::GREEDY_SPREAD), |d| d.0),
        stop: p.stop,
        group: p.group,
    }
}

fn swing_model(dir: &Path, f: &str, m: &SwingSpec, p: Placed) -> Res<SwingModel> {
    if p.group.line.is_some() {
        return Err(err(format!("{f}.line"), "a swing model's virtual hosts share the lines its model file holds (`lines`): remove line"));
    }
    let (path, model) = swing_file(dir, &m.file, &format!("{f}.file"))?;
    let scale = |v: Option<f64>, name: &str| -> Res<f64> {
        match v {
            None => Ok(1.0),
            Some(x) if x.is_finite() && x > 0.0 && x <= limits::SWING_SCALE => Ok(x),
            Some(x) => Err(err(format!("{f}.{name}"), format!("{x} is out of range: expected a number above 0, at most {}", limits::SWING_SCALE))),
        }
    };
    let session_scale = scale(m.session_scale, "session_scale")?;
    let response_scale = scale(m.response_scale, "response_scale")?;
    let per_period =
        (model.classes.iter().map(|c| c.counts.sessions).sum::<u64>() + model.udp.iter().map(|u| u.flows).sum::<u64>()) as f64 * session_scale;
    if per_period > limits::SWING_SESSIONS_PER_PERIOD {
        return Err(err(
            format!("{f}.session_scale"),
            format!(
                "{session_scale} times the model's {} sessions and UDP flows starts {per_period:.3e} per period: at most {:.0e} (lower session_scale)",
                (per_period / session_scale).round(),
                limits::SWING_SESSIONS_PER_PERIOD
            ),
        ));
    }
    if m.rtt.is_some_and(|r| r.0 == Dur::ZERO) {
        return Err(err(format!("{f}.rtt"), "must be longer than zero"));
    }
    let whole_sessions = m.structure == Some(Structure::Sessions);
    if whole_sessions && !model.classes.is_empty() && model.classes.iter().all(|c| c.sessions.is_empty()) {
        return Err(err(
            format!("{f}.structure"),
            format!("\"sessions\" needs whole sessions in the model, and {} has none (extract it again with session_structures above 0)", m.file),
        ));
    }
    let per_side = |side: swing::Side| model.hosts.iter().filter(|h| h.side == side).count() as u32;
    let hosts = match p.hosts {
        Some(n) => [n, n],
        None => [per_side(swing::Side::A).clamp(1, SWING_MAX_HOSTS), per_side(swing::Side::B).clamp(1, SWING_MAX_HOSTS)],
    };
    Ok(SwingModel {
        name: p.name,
        file: path,
        model: std::sync::Arc::new(model),
        hosts,
        side_a: p.sources,
        start: p.start,
        stop: p.stop,
        session_scale,
        response_scale,
        whole_sessions,
        zero_think: m.zero_think.unwrap_or(false),
        rtt: m.rtt.map(|r| r.0),
        access_cap: m.access_cap.map(|c| c.0),
        stalls: m.stalls.unwrap_or(false),
        group: p.group,
    })
}

/// A swing model file, loaded and checked, and its absolute path.
fn swing_file(dir: &Path, file: &str, field: &str) -> Res<(std::path::PathBuf, swing::Model)> {
    let path = dir.join(file);
    let model = swing::Model::load(&path).map_err(|e| match e {
        swing::LoadError::Read(units::read::ReadError::NotFound) => err(field, format!("file {file:?} not found (looked for {})", path.display())),
        e => err(field, format!("{file}: {e}")),
    })?;
    Ok((std::fs::canonicalize(&path).unwrap_or(path), model))
}

fn app(at: &Context, i: usize, a: &AppSpec) -> Res<AppModel> {
    match a {
        AppSpec::Http(h) => http_app(at, i, h),
        AppSpec::Command(c) => command_app(at, i, c),
    }
}

fn server_side(s: Option<ServerSide>) -> Side {
    match s {
        None | Some(ServerSide::Left) => Side::Left,
        Some(ServerSide::Right) => Side::Right,
    }
}

fn command_app(at: &Context, i: usize, a: &CommandSpec) -> Res<AppModel> {
    let f = format!("apps[{i}]");
    let name = a.name.clone().unwrap_or_else(|| if i == 0 { "command".into() } else { format!("command{i}") });
    let (start, stop) = span(a.start, a.stop, at.s.duration.0, &f)?;
    let line = |c: &str, field: &str| -> Res<String> {
        if c.trim().is_empty() {
            return Err(err(format!("{f}.{field}"), "must name a program"));
        }
        Ok(c.to_string())
    };
    let client = a.client.clone().unwrap_or_default();
    let server = a.server.clone().unwrap_or_default();
    Ok(AppModel::Command {
        name,
        here: std::fs::canonicalize(at.dir).unwrap_or_else(|_| at.dir.to_path_buf()),
        server_command: a.server_command.as_deref().map(|c| line(c, "server_command")).transpose()?,
        client_command: line(&a.client_command, "client_command")?,
        start,
        stop,
        server_side: server_side(a.server_side),
        client: group(at.s, &client, &format!("{f}.client"))?,
        server: group(at.s, &server, &format!("{f}.server"))?,
    })
}

fn http_app(at: &Context, i: usize, a: &HttpSpec) -> Res<AppModel> {
    let f = format!("apps[{i}]");
    let name = a.name.clone().unwrap_or_else(|| if i == 0 { "http".into() } else { format!("http{i}") });
    let object_sizes = match (&a.object_size, &a.sizes_file) {
        (Some(sz), None) => {
            if sz.0 == 0 {
                return Err(err(format!("{f}.object_size"), "must be at least 1 byte"));
            }
            vec![sz.0]
        }
        (None, Some(file)) => sizes_file(at.dir, file, &format!("{f}.sizes_file"))?,
        (Some(_), Some(_)) => return Err(err(f, "give either object_size or sizes_file, not both")),
        (None, None) => return Err(err(f, "missing required field \"object_size\" (or \"sizes_file\")")),
    };
    let (start, stop) = span(a.start, a.stop, at.s.duration.0, &f)?;
    let clients = a.clients.unwrap_or(1);
    if clients == 0 {
        return Err(err(format!("{f}.clients"), "must be at least 1"));
    }
    let port = a.port.unwrap_or(defaults::HTTP_PORT);
    if port == 0 {
        return Err(err(format!("{f}.port"), "must be 1 to 65535"));
    }
    let client = a.client.clone().unwrap_or_default();
    let server = a.server.clone().unwrap_or_default();
    Ok(AppModel::Http {
        name,
        object_sizes,
        request_size: a.request_size.map_or(defaults::HTTP_REQUEST, |r| r.0).max(1),
        think_time: a.think_time.map_or(Dur::ZERO, |t| t.0),
        start,
        stop,
        count: a.count.unwrap_or(0),
        clients,
        port,
        server_side: server_side(a.server_side),
        client: group(at.s, &client, &format!("{f}.client"))?,
        server: group(at.s, &server, &format!("{f}.server"))?,
    })
}

/// Traffic models name files of a run: each name usable, none reserved, no two alike.
fn names(background: &[BackgroundModel], apps: &[AppModel]) -> Res<()> {
    let background = background.iter().map(|b| b.name());
    let names: Vec<&str> = background.chain(apps.iter().map(|a| a.name())).collect();
    for n in &names {
        if let Err(why) = usable_name(n) {
            return Err(err("", format!("{n:?} is not a usable name: {why}")));
        }
        if *n == "connections" {
            return Err(err("", "\"connections\" is reserved (records/connections.parquet): choose another name"));
        }
    }
    let mut sorted = names.clone();
    sorted.sort();
    if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
        return Err(err("", format!("two traffic models are named {:?}: names must be unique", w[0])));
    }
    Ok(())
}

fn output(o: &OutputSpec, duration: Dur) -> Res<OutputParams> {
    let snaplen = o.pcap_snaplen.map_or(defaults::SNAPLEN, |v| v.0);
    if !(40..=65535).contains(&snaplen) {
        return Err(err("output.pcap_snaplen", format!("{snaplen} bytes is out of range: expected 40B to 65535B")));
    }
    let series_bin = o.series_bin.map_or_else(|| parse_default(units::parse::duration, defaults::SERIES_BIN), |d| d.0);
    if series_bin < Dur::from_micros(1) {
        return Err(err("output.series_bin", "must be at least 1us"));
    }
    let pcap_from = o.pcap_from.map_or(Dur::ZERO, |d| d.0);
    if pcap_from >= duration {
        return Err(err("output.pcap_from", format!("{pcap_from} is not before the end of the run ({duration}): nothing would be captured")));
    }
    let mut pcap_miss = [0.0; 2];
    for (m, (v, field)) in pcap_miss.iter_mut().zip([(o.pcap_miss_fwd, "output.pcap_miss_fwd"), (o.pcap_miss_rev, "output.pcap_miss_rev")]) {
        *m = v.map_or(0.0, |f| f.0);
        if *m >= 1.0 {
            return Err(err(field, "a capture that misses 100% writes nothing: expected less than 100%"));
        }
    }
    let bins = duration.0.div_ceil(series_bin.0);
    if bins > limits::SERIES_BINS {
        return Err(err(
            "output.series_bin",
            format!(
                "{duration} at {series_bin} bins is {bins} bins per direction: at most {} (a longer series_bin, or a shorter duration)",
                limits::SERIES_BINS
            ),
        ));
    }
    Ok(OutputParams { pcap: o.pcap.unwrap_or(false), pcap_snaplen: snaplen as u32, pcap_from, pcap_miss, series_bin })
}

/// Refuses models whose hosts or packets would exhaust memory or time.
fn check_load(background: &[BackgroundModel], apps: &[AppModel]) -> Res<()> {
    let mut hosts = 0u64;
    for (i, b) in background.iter().enumerate() {
        let f = format!("background[{i}]");
        hosts += match b {
            BackgroundModel::Rate { hosts, rate, packet_size, start, stop, .. } => {
                source_packets(&f, *rate, *packet_size, *start, *stop)?;
                2 * *hosts as u64
            }
            BackgroundModel::Greedy { hosts, .. } => 2 * *hosts as u64,
            BackgroundModel::Web { hosts, flows_per_s, start, stop, .. } => {
                let flows = flows_per_s * (*stop - *start).as_secs_f64();
                if flows > limits::WEB_FLOWS {
                    return Err(err(
                        format!("{f}.flows_per_s"),
                        format!("{flows:.3e} flows in the run: at most {:.0e} (a lower rate or a shorter span)", limits::WEB_FLOWS),
                    ));
                }
                2 * *hosts as u64
            }
            BackgroundModel::Process(m) => {
                source_packets(&f, units::Rate(m.process.mean() as u64), m.packet_size, m.start, m.stop)?;
                2 * m.hosts as u64
            }
            BackgroundModel::Swing(m) => m.hosts[0] as u64 + m.hosts[1] as u64,
            BackgroundModel::Playback(m) => 2 * m.hosts as u64,
        };
    }
    for a in apps {
        hosts += match a {
            AppModel::Http { clients, .. } => *clients as u64 + 1,
            AppModel::Command { .. } => 2,
        };
    }
    if hosts > limits::HOSTS {
        return Err(err(
            "",
            format!("the scenario has {hosts} hosts (background hosts count twice, a source and a sink): at most {}", limits::HOSTS),
        ));
    }
    Ok(())
}

/// Refuses a source of more than [`limits::SOURCE_PACKETS`] packets.
fn source_packets(f: &str, rate: Rate, packet_size: u32, start: Time, stop: Time) -> Res<()> {
    let packets = rate.as_f64() * (stop - start).as_secs_f64() / (8.0 * packet_size as f64);
    if packets > limits::SOURCE_PACKETS {
        return Err(err(
            format!("{f}.rate"),
            format!(
                "{rate} in {packet_size}B packets for {} is {packets:.3e} packets: at most {:.0e} per source (a lower rate, larger packets or a shorter span)",
                stop - start,
                limits::SOURCE_PACKETS
            ),
        ));
    }
    Ok(())
}

pub(crate) fn parse_queue_default() -> QueueSize {
    QueueSize::Packets(defaults::BOTTLENECK_QUEUE.trim_end_matches('p').parse().expect("default queue"))
}

/// Object sizes from a file: one size per line ("1MB" or bytes), `#` comments.
fn sizes_file(dir: &Path, file: &str, field: &str) -> Res<Vec<u64>> {
    let path = dir.join(file);
    let text = units::read::read_text(&path, limits::SIZES_FILE_BYTES).map_err(|e| match e {
        units::read::ReadError::NotFound => err(field, format!("file {file:?} not found (looked for {})", path.display())),
        e => err(field, format!("{}: {e}", path.display())),
    })?;
    let mut sizes = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let v = line.parse::<u64>().ok().or_else(|| units::parse::size(line).ok());
        match v {
            Some(b) if b > 0 => sizes.push(b),
            // The line is not quoted: the file may be anything the user
            // named by mistake, and its contents are not ours to print.
            _ => {
                return Err(err(
                    field,
                    format!("{file} line {} is not a size: expected one size per line, a positive number of bytes or a size such as \"1MB\"", n + 1),
                ))
            }
        }
    }
    if sizes.is_empty() {
        return Err(err(field, format!("{file} holds no sizes")));
    }
    Ok(sizes)
}
