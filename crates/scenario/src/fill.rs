//! The scenario with every default written out: what a run directory
//! records, so that a run can be repeated exactly even if defaults change.

use crate::resolve::{AppModel, BackgroundModel, LinkParams, Resolved, Side};
use crate::schema::{
    AppSpec, BackgroundCommon, BottleneckSpec, CongestionControl, Direction, LinkSpec, LossResponseSpec, ModelSpec, PartialAckTimerSpec,
    PlaybackGranularity, ReverseSpec, RtoEstimatorSpec, Scenario, ServerSide, Structure, TcpSpec, TopologyKind,
};
use crate::values::{Bandwidth, BufferSize, Fraction, QueueSize, Size, TimeSpan};
use net::QueueLimit;
use tcp::{Algorithm, LossResponse, PartialAckTimer, RtoEstimator, TcpConfig};
use units::Dur;

fn link_spec(p: &LinkParams) -> LinkSpec {
    LinkSpec {
        rate: Some(Bandwidth(p.rate)),
        delay: Some(TimeSpan(p.delay)),
        queue: Some(match p.queue {
            QueueLimit::Packets(n) => QueueSize::Packets(n),
            QueueLimit::Bytes(b) => QueueSize::Bytes(b),
        }),
        loss: Some(Fraction(p.loss)),
    }
}

fn tcp_spec(c: &TcpConfig) -> TcpSpec {
    let linux = TcpConfig::default();
    let mut spec = TcpSpec {
        flavour: None,
        congestion_control: Some(match c.algorithm {
            Algorithm::Tahoe => CongestionControl::Tahoe,
            Algorithm::Reno => CongestionControl::Reno,
            Algorithm::NewReno => CongestionControl::NewReno,
            Algorithm::Cubic => CongestionControl::Cubic,
        }),
        sack: Some(c.sack),
        mss: Some(Size(c.mss as u64)),
        rcv_buf: Some(if c.rcv_buf_auto { BufferSize::Auto } else { BufferSize::Fixed(c.rcv_buf) }),
        snd_buf: Some(if c.snd_buf_auto { BufferSize::Auto } else { BufferSize::Fixed(c.snd_buf) }),
        initial_cwnd: Some(c.initial_cwnd),
        byte_counting: Some(c.byte_counting),
        hystart: Some(c.hystart),
        timestamps: Some(c.timestamps),
        quickack: Some(c.quickack),
        ack_every: Some(c.ack_every),
        delack_timeout: Some(TimeSpan(c.delack_timeout)),
        min_rto: Some(TimeSpan(c.min_rto)),
        max_rto: Some(TimeSpan(c.max_rto)),
        initial_rto: Some(TimeSpan(c.initial_rto)),
        rto_estimator: (c.rto_estimator != linux.rto_estimator).then_some(match c.rto_estimator {
            RtoEstimator::Linux => RtoEstimatorSpec::Linux,
            RtoEstimator::Rfc6298 => RtoEstimatorSpec::Rfc6298,
        }),
        rto_tick: c.rto_tick.map(TimeSpan),
        loss_response: (c.loss_response != linux.loss_response).then_some(match c.loss_response {
            LossResponse::Linux => LossResponseSpec::Linux,
            LossResponse::Ns2 => LossResponseSpec::Ns2,
            LossResponse::Ns3 => LossResponseSpec::Ns3,
        }),
        partial_ack_timer: (c.partial_ack_timer != linux.partial_ack_timer).then_some(match c.partial_ack_timer {
            PartialAckTimer::Every => PartialAckTimerSpec::Every,
            PartialAckTimer::First => PartialAckTimerSpec::First,
        }),
        ecn: c.ecn.then_some(true),
        ..TcpSpec::default()
    };
    // Written only where they leave Linux's behaviour, so the scenarios
    // recorded before these settings existed read back unchanged.
    macro_rules! unless_linux {
        ($($setting:ident => $field:ident),* $(,)?) => {
            $(spec.$setting = (c.$field != linux.$field).then_some(c.$field);)*
        };
    }
    unless_linux!(
        limited_transmit => limited_transmit, idle_restart => slow_start_after_idle, rack => rack, tlp => tlp,
        tso_defer => tso_defer, packet_window => packet_window, ack_pushed => ack_pushed,
        delayed_fin_ack => delayed_fin_ack, ooo_shrinks_window => ooo_shrinks_window,
    );
    spec
}

fn span(t: units::Time) -> Option<TimeSpan> {
    Some(TimeSpan(Dur(t.0)))
}

fn direction(sources: Side) -> Option<Direction> {
    Some(if sources == Side::Left { Direction::Forward } else { Direction::Reverse })
}

/// The common fields of a background model as `model` resolved them.
fn placed(c: &mut BackgroundCommon, name: &str, hosts: Option<u32>, sources: Side, start: units::Time, stop: units::Time) {
    (c.name, c.hosts, c.direction, c.start, c.stop) = (Some(name.to_string()), hosts, direction(sources), span(start), span(stop));
}

/// The bottleneck with its defaults: a link's queue and loss, and the
/// reverse direction whole where it differs; a path's elements' defaults.
fn bottleneck(b: &mut BottleneckSpec) {
    if let Some(p) = &b.path {
        b.path = Some(crate::path::with_defaults(p));
        if let Some(r) = b.reverse.as_mut().and_then(|r| r.path.as_mut()) {
            *r = crate::path::with_defaults(r);
        }
        return;
    }
    let fwd_spec = LinkSpec { rate: b.rate, delay: b.delay, queue: b.queue.or(Some(crate::resolve::parse_queue_default())), loss: b.loss };
    let fwd = crate::resolve::link_defaults(&fwd_spec);
    let filled = link_spec(&fwd);
    (b.queue, b.loss) = (filled.queue, filled.loss);
    b.reverse = b.reverse.as_ref().map(|r| crate::resolve::link_defaults(&r.link().over(&fwd_spec))).filter(|rev| *rev != fwd).map(|rev| {
        let l = link_spec(&rev);
        ReverseSpec { rate: l.rate, delay: l.delay, queue: l.queue, loss: l.loss, path: None }
    });
}

/// `s` (as resolved into `r`) with all defaults filled in.
pub fn with_defaults(s: &Scenario, r: &Resolved) -> Scenario {
    let mut f = s.clone();
    f.seed = r.seed;
    f.engine = Some(r.engine);
    f.topology.kind = Some(TopologyKind::Dumbbell);
    bottleneck(&mut f.topology.bottleneck);
    // The scenario-wide access link and TCP settings, as any group without
    // overrides resolves them.
    let base_access = crate::resolve::link_defaults(&s.topology.access);
    f.topology.access = link_spec(&base_access);
    f.tcp = tcp_spec(&crate::resolve::tcp_defaults(&s.tcp));
    for (spec, model) in f.background.iter_mut().zip(&r.background) {
        match (model, &mut spec.model) {
            (BackgroundModel::Rate { name, packet_size, hosts, sources, start, stop, .. }, ModelSpec::Cbr(m) | ModelSpec::Poisson(m)) => {
                placed(&mut spec.common, name, Some(*hosts), *sources, *start, *stop);
                m.packet_size = Some(Size(*packet_size as u64));
            }
            (BackgroundModel::Process(p), spec_model) => {
                placed(&mut spec.common, &p.name, Some(p.hosts), p.sources, p.start, p.stop);
                crate::process::with_defaults(p, spec_model);
            }
            (BackgroundModel::Greedy { name, hosts, sources, start, spread, stop, .. }, ModelSpec::Greedy(m)) => {
                placed(&mut spec.common, name, Some(*hosts), *sources, *start, *stop);
                m.spread = Some(TimeSpan(*spread));
            }
            (BackgroundModel::Swing(sw), ModelSpec::Swing(m)) => {
                let hosts = (sw.hosts[0] == sw.hosts[1]).then_some(sw.hosts[0]);
                placed(&mut spec.common, &sw.name, hosts, sw.side_a, sw.start, sw.stop);
                m.file = sw.file.display().to_string();
                m.session_scale = Some(sw.session_scale);
                m.response_scale = Some(sw.response_scale);
                m.zero_think = Some(sw.zero_think);
                m.stalls = Some(sw.stalls);
                m.structure = Some(if sw.whole_sessions { Structure::Sessions } else { Structure::Marginals });
            }
            (BackgroundModel::Playback(pb), ModelSpec::Playback(m)) => {
                placed(&mut spec.common, &pb.name, Some(pb.hosts), pb.sources, pb.start, pb.stop);
                m.file = pb.file.display().to_string();
                m.side = pb.side;
                m.granularity = Some(match pb.granularity {
                    traffic::background::Granularity::Exact => PlaybackGranularity::Exact,
                    traffic::background::Granularity::Millisecond => PlaybackGranularity::Millisecond,
                });
                m.offset = Some(TimeSpan(pb.offset));
                m.speed = Some(pb.speed);
                m.repeat = Some(pb.trace.period.is_some());
            }
            (BackgroundModel::Web { name, hosts, sources, start, stop, .. }, ModelSpec::Web(_)) => {
                placed(&mut spec.common, name, Some(*hosts), *sources, *start, *stop);
            }
            _ => unreachable!("resolve keeps the order and the kind of the background models"),
        }
        spec.common.class = Some(model.group().class);
    }
    for (spec, model) in f.apps.iter_mut().zip(&r.apps) {
        let side = |s: &Side| Some(if *s == Side::Left { ServerSide::Left } else { ServerSide::Right });
        match (model, spec) {
            (AppModel::Http { name, request_size, think_time, start, stop, count, clients, port, server_side, .. }, AppSpec::Http(a)) => {
                a.name = Some(name.clone());
                a.request_size = Some(Size(*request_size));
                a.think_time = Some(TimeSpan(*think_time));
                a.start = span(*start);
                a.stop = span(*stop);
                a.count = Some(*count);
                a.clients = Some(*clients);
                a.port = Some(*port);
                a.server_side = side(server_side);
            }
            (AppModel::Command { name, start, stop, server_side, .. }, AppSpec::Command(c)) => {
                c.name = Some(name.clone());
                c.start = span(*start);
                c.stop = span(*stop);
                c.server_side = side(server_side);
            }
            _ => unreachable!("resolve keeps the order and the kind of the applications"),
        }
    }
    f.output.pcap = Some(r.output.pcap);
    f.output.pcap_snaplen = Some(Size(r.output.pcap_snaplen as u64));
    f.output.pcap_from = (r.output.pcap_from > Dur::ZERO).then_some(TimeSpan(r.output.pcap_from));
    let miss = |m: f64| (m > 0.0).then_some(Fraction(m));
    (f.output.pcap_miss_fwd, f.output.pcap_miss_rev) = (miss(r.output.pcap_miss[0]), miss(r.output.pcap_miss[1]));
    f.output.series_bin = Some(TimeSpan(r.output.series_bin));
    f
}

/// The filled scenario as TOML text.
pub fn to_toml(s: &Scenario) -> String {
    toml::to_string(s).unwrap_or_else(|e| format!("# could not write the scenario as TOML: {e}\n"))
}
