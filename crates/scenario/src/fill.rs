//! The scenario with every default written out: what a run directory
//! records, so that a run can be repeated exactly even if defaults change.

use crate::resolve::{AppModel, BackgroundModel, LinkParams, Resolved, Side};
use crate::schema::{CongestionControl, Direction, LinkSpec, Scenario, ServerSide, Structure, TcpSpec, TopologyKind};
use crate::values::{Bandwidth, BufferSize, Fraction, QueueSize, Size, TimeSpan};
use net::QueueLimit;
use tcp::{Algorithm, TcpConfig};
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
    TcpSpec {
        congestion_control: Some(match c.algorithm {
            Algorithm::Tahoe => CongestionControl::Tahoe,
            Algorithm::Reno => CongestionControl::Reno,
            Algorithm::NewReno => CongestionControl::NewReno,
            Algorithm::Cubic => CongestionControl::Cubic,
        }),
        sack: Some(c.sack),
        mss: Some(Size(c.mss as u64)),
        rcv_buf: Some(Size(c.rcv_buf)),
        snd_buf: Some(if c.snd_buf_auto { BufferSize::Auto } else { BufferSize::Fixed(c.snd_buf) }),
        initial_cwnd: Some(c.initial_cwnd),
        byte_counting: Some(c.byte_counting),
        timestamps: Some(c.timestamps),
        quickack: Some(c.quickack),
        ack_every: Some(c.ack_every),
        delack_timeout: Some(TimeSpan(c.delack_timeout)),
        min_rto: Some(TimeSpan(c.min_rto)),
        max_rto: Some(TimeSpan(c.max_rto)),
        initial_rto: Some(TimeSpan(c.initial_rto)),
    }
}

fn span(t: units::Time) -> Option<TimeSpan> {
    Some(TimeSpan(Dur(t.0)))
}

fn direction(sources: Side) -> Option<Direction> {
    Some(if sources == Side::Left { Direction::Forward } else { Direction::Reverse })
}

/// `s` (as resolved into `r`) with all defaults filled in.
pub fn with_defaults(s: &Scenario, r: &Resolved) -> Scenario {
    let mut f = s.clone();
    f.seed = r.seed;
    f.topology.kind = Some(TopologyKind::Dumbbell);
    let fwd = link_spec(&r.bottleneck[0]);
    f.topology.bottleneck.queue = fwd.queue;
    f.topology.bottleneck.loss = fwd.loss;
    if r.bottleneck[1] != r.bottleneck[0] {
        f.topology.bottleneck.reverse = Some(link_spec(&r.bottleneck[1]));
    }
    // The scenario-wide access link and TCP settings, as any group without
    // overrides resolves them.
    let base_access = crate::resolve::link_defaults(&s.topology.access);
    f.topology.access = link_spec(&base_access);
    f.tcp = tcp_spec(&crate::resolve::tcp_defaults(&s.tcp));
    for (spec, model) in f.background.iter_mut().zip(&r.background) {
        match model {
            BackgroundModel::Rate { name, packet_size, hosts, sources, start, stop, .. } => {
                spec.name = Some(name.clone());
                spec.packet_size = Some(Size(*packet_size as u64));
                spec.hosts = Some(*hosts);
                spec.direction = direction(*sources);
                spec.start = span(*start);
                spec.stop = span(*stop);
            }
            BackgroundModel::Swing(m) => {
                spec.name = Some(m.name.clone());
                spec.file = Some(m.file.display().to_string());
                spec.hosts = (m.hosts[0] == m.hosts[1]).then_some(m.hosts[0]);
                spec.direction = direction(m.side_a);
                spec.start = span(m.start);
                spec.stop = span(m.stop);
                spec.session_scale = Some(m.session_scale);
                spec.response_scale = Some(m.response_scale);
                spec.zero_think = Some(m.zero_think);
                spec.stalls = Some(m.stalls);
                spec.structure = Some(if m.whole_sessions { Structure::Sessions } else { Structure::Marginals });
            }
            BackgroundModel::Greedy { name, hosts, sources, start, spread, stop, .. } => {
                spec.name = Some(name.clone());
                spec.hosts = Some(*hosts);
                spec.direction = direction(*sources);
                spec.start = span(*start);
                spec.stop = span(*stop);
                spec.spread = Some(TimeSpan(*spread));
            }
        }
    }
    for (spec, model) in f.apps.iter_mut().zip(&r.apps) {
        let AppModel::Http { name, request_size, think_time, start, stop, count, clients, port, server_side, .. } = model;
        spec.name = Some(name.clone());
        spec.request_size = Some(Size(*request_size));
        spec.think_time = Some(TimeSpan(*think_time));
        spec.start = span(*start);
        spec.stop = span(*stop);
        spec.count = Some(*count);
        spec.clients = Some(*clients);
        spec.port = Some(*port);
        spec.server_side = Some(if *server_side == Side::Left { ServerSide::Left } else { ServerSide::Right });
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
