//! What a resolved scenario runs, for either engine: its applications and
//! background models as `traffic` state machines, and the hosts they need,
//! from the host plans of `traffic::plan`. The engine only makes each
//! planned host ([`Hosts`]) and then drives the applications.

use crate::{AppModel, BackgroundModel, Group, Resolved, Side, SwingModel};
use traffic::apps::{HttpApp, HttpConfig};
use traffic::background::{Arrivals, Greedy, GreedyConfig, Playback, PlaybackConfig, RateSource, RateSourceConfig, RateTransport};
use traffic::background::{Structure, SwingConfig, SwingSource, Web, WebConfig};
use traffic::plan::{self, HostPlan};
use traffic::{App, HostId};
use units::{Rng, Time};

/// Ports the generated traffic uses.
const BG_TCP_PORT: u16 = 5001;
const BG_UDP_PORT: u16 = 9;
/// Swing's generated servers listen on the class's own port plus this.
/// Swing used 20000 to keep clear of real services on its testbed hosts;
/// emulated hosts run nothing else, and keeping the port lets a capture of
/// the regenerated traffic be classified like the trace.
const SWING_PORT_BASE: u16 = 0;

/// How an engine makes the hosts a scenario plans.
pub trait Hosts {
    /// Makes a planned host; its number is the number of hosts before it.
    fn host(&mut self, plan: &HostPlan) -> HostId;
    /// The number the next host will have (plans name streams after it).
    fn next_host(&self) -> HostId;
    /// The hosts made from now on belong to the application or background
    /// model `name` (so an engine can tell whose a connection is).
    fn owner(&mut self, _name: &str) {}
}

/// A scenario's applications, in the order of its file (apps, then
/// background models), with their names, and its real programs.
pub struct Assembled {
    pub apps: Vec<Box<dyn App>>,
    pub names: Vec<String>,
    pub commands: Vec<Command>,
}

/// A `command` app: programs to run on two hosts of their own.
#[derive(Clone, Debug, PartialEq)]
pub struct Command {
    pub name: String,
    /// The scenario file's directory.
    pub here: std::path::PathBuf,
    pub server: HostId,
    pub client: HostId,
    pub server_command: Option<String>,
    pub client_command: String,
    pub start: Time,
    pub stop: Time,
}

fn port(transport: RateTransport) -> u16 {
    if transport == RateTransport::Udp {
        BG_UDP_PORT
    } else {
        BG_TCP_PORT
    }
}

fn make(hosts: &mut dyn Hosts, plans: &[HostPlan]) -> Vec<HostId> {
    plans.iter().map(|p| hosts.host(p)).collect()
}

/// `n` hosts on `side` sharing `group`'s access link and TCP settings.
fn group_hosts(hosts: &mut dyn Hosts, side: Side, n: u32, group: &Group) -> Vec<HostId> {
    let mut plans = plan::group(hosts.next_host(), side, n, &group.access, &group.tcp, group.line);
    for p in &mut plans {
        p.class = group.class;
    }
    make(hosts, &plans)
}

/// A swing model's virtual hosts, side A's and side B's (`SwingConfig`'s
/// fields of the same names).
struct SwingVirtual {
    hosts: [Vec<HostId>; 2],
    ipv6: [Vec<bool>; 2],
    copies: [Vec<Option<u32>>; 2],
}

/// A swing model's virtual hosts, whether each speaks IPv6, and the trace
/// host each copies.
fn swing_hosts(hosts: &mut dyn Hosts, m: &SwingModel, seed: u64) -> SwingVirtual {
    let p = plan::SwingPlan {
        name: &m.name,
        model: &m.model,
        hosts: m.hosts,
        side_a: m.side_a,
        rtt: m.rtt,
        access_cap: m.access_cap,
        stalls: m.stalls,
        start: m.start,
        access: &m.group.access,
        tcp: &m.group.tcp,
    };
    let plan::SwingHosts { plans, copies } = plan::swing_hosts(&p, seed, hosts.next_host());
    let ipv6 = plans.clone().map(|side| side.iter().map(|h| h.ipv6).collect());
    SwingVirtual { hosts: plans.map(|side| make(hosts, &side)), ipv6, copies }
}

/// IP and transport header bytes of a packet a rate or playback source
/// sends, so that its packets are the sizes asked for (TCP: plus the
/// timestamps option when the hosts use it).
fn header(transport: RateTransport, group: &Group) -> u32 {
    match transport {
        RateTransport::Udp => 28,
        RateTransport::Tcp => 40 + if group.tcp.timestamps { 12 } else { 0 },
    }
}

/// Source and sink host pairs: `n` hosts of `group` on side `sources`, then
/// `n` on the other side, those of `sink_group` (the sources' own, unless
/// the sinks differ).
fn pairs(maker: &mut dyn Hosts, sources: Side, n: u32, group: &Group, sink_group: &Group) -> Vec<(HostId, HostId)> {
    let src = group_hosts(maker, sources, n, group);
    let dst = group_hosts(maker, sources.other(), n, sink_group);
    src.into_iter().zip(dst).collect()
}

/// The applications of `r`, each host they need made by `maker`.
pub fn assemble(r: &Resolved, maker: &mut dyn Hosts) -> Assembled {
    let mut apps: Vec<Box<dyn App>> = Vec::new();
    let mut commands = Vec::new();
    let mut names = Vec::new();
    let stop_all = Time(r.duration.0);
    for a in &r.apps {
        maker.owner(a.name());
        match foreground(a, maker, stop_all) {
            Foreground::App(app) => {
                apps.push(app);
                names.push(a.name().to_string());
            }
            Foreground::Command(c) => commands.push(c),
        }
    }
    for bg in &r.background {
        maker.owner(bg.name());
        apps.push(background(bg, maker, r.seed));
        names.push(bg.name().to_string());
    }
    Assembled { apps, names, commands }
}

/// A foreground application: one of the engine's own, or programs to start.
enum Foreground {
    App(Box<dyn App>),
    Command(Command),
}

fn foreground(a: &AppModel, maker: &mut dyn Hosts, stop_all: Time) -> Foreground {
    match a {
        AppModel::Http { name, object_sizes, request_size, think_time, start, stop, count, clients, port, server_side, client, server } => {
            let srv = group_hosts(maker, *server_side, 1, server)[0];
            let cl = group_hosts(maker, server_side.other(), *clients, client);
            Foreground::App(Box::new(HttpApp::new(HttpConfig {
                name: name.clone(),
                server: srv,
                clients: cl,
                port: *port,
                object_sizes: object_sizes.clone(),
                request_size: *request_size,
                think_time: *think_time,
                start: *start,
                stop: (*stop).min(stop_all),
                count: *count,
            })))
        }
        AppModel::Command { name, here, server_command, client_command, start, stop, server_side, client, server } => {
            let srv = group_hosts(maker, *server_side, 1, server)[0];
            let cl = group_hosts(maker, server_side.other(), 1, client)[0];
            Foreground::Command(Command {
                name: name.clone(),
                here: here.clone(),
                server: srv,
                client: cl,
                server_command: server_command.clone(),
                client_command: client_command.clone(),
                start: *start,
                stop: (*stop).min(stop_all),
            })
        }
    }
}

/// A background model's source, its random streams named after it.
fn background(bg: &BackgroundModel, maker: &mut dyn Hosts, seed: u64) -> Box<dyn App> {
    let rng = |what: &str| Rng::stream(seed, &format!("bg/{}{what}", bg.name()));
    match bg {
        BackgroundModel::Rate { name, arrivals, transport, rate, packet_size, hosts, sources, start, stop, group } => {
            let cfg = RateSourceConfig {
                name: name.clone(),
                arrivals: *arrivals,
                transport: *transport,
                pairs: pairs(maker, *sources, *hosts, group, group),
                rate_bps: rate.as_f64(),
                packet_size: *packet_size,
                header: header(*transport, group),
                port: port(*transport),
                start: *start,
                stop: *stop,
            };
            Box::new(RateSource::new(cfg, rng("")))
        }
        BackgroundModel::Process(m) => {
            let cfg = RateSourceConfig {
                name: m.name.clone(),
                arrivals: Arrivals::Constant,
                transport: m.transport,
                pairs: pairs(maker, m.sources, m.hosts, &m.group, &m.group),
                rate_bps: m.process.mean(),
                packet_size: m.packet_size,
                header: header(m.transport, &m.group),
                port: port(m.transport),
                start: m.start,
                stop: m.stop,
            };
            // The rate's random parts from a stream of their own, so
            // that they do not depend on how the hosts draw theirs.
            let process = m.process.build(&mut rng("/rate"));
            Box::new(RateSource::paced(cfg, process, rng("")))
        }
        BackgroundModel::Swing(m) => {
            let SwingVirtual { hosts, ipv6, copies } = swing_hosts(maker, m, seed);
            let cfg = SwingConfig {
                name: m.name.clone(),
                model: m.model.clone(),
                hosts,
                ipv6,
                copies,
                start: m.start,
                stop: m.stop,
                session_scale: m.session_scale,
                response_scale: m.response_scale,
                zero_think: m.zero_think,
                port_base: SWING_PORT_BASE,
                structure: if m.whole_sessions { Structure::Sessions } else { Structure::Marginals },
            };
            Box::new(SwingSource::new(cfg, rng("")))
        }
        BackgroundModel::Playback(m) => {
            let cfg = PlaybackConfig {
                name: m.name.clone(),
                transport: m.transport,
                granularity: m.granularity,
                pairs: pairs(maker, m.sources, m.hosts, &m.group, &m.group),
                trace: m.trace.clone(),
                header: header(m.transport, &m.group),
                port: port(m.transport),
                start: m.start,
                stop: m.stop,
            };
            Box::new(Playback::new(cfg))
        }
        BackgroundModel::Web { name, hosts, sources, start, stop, flows_per_s, sizes, group } => {
            // The sinks are best effort: only the flows' data carries the class.
            let sink_group = Group { class: 0, ..group.clone() };
            let cfg = WebConfig {
                name: name.clone(),
                pairs: pairs(maker, *sources, *hosts, group, &sink_group),
                port: BG_TCP_PORT,
                flows_per_s: *flows_per_s,
                sizes: sizes.clone(),
                start: *start,
                stop: *stop,
            };
            Box::new(Web::new(cfg, rng("")))
        }
        BackgroundModel::Greedy { name, hosts, sources, start, spread, stop, group } => {
            let cfg = GreedyConfig {
                name: name.clone(),
                pairs: pairs(maker, *sources, *hosts, group, group),
                port: BG_TCP_PORT,
                start: *start,
                spread: *spread,
                stop: *stop,
            };
            Box::new(Greedy::new(cfg, rng("")))
        }
    }
}
