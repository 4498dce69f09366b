//! From resolved scenario settings to a world and its applications: each
//! model's hosts come from its host plans (`traffic::plan`); this module
//! only instantiates them as simulated hosts and paths.

use crate::topology::{Host, EPHEMERAL_FIRST};
use crate::world::{TcpTotals, World};
use net::fabric::Fabric;
use net::monitor::Monitor;
use scenario::{AppModel, BackgroundModel, Group, Resolved, Side, SwingModel};
use traffic::apps::{HttpApp, HttpConfig};
use traffic::background::{Greedy, GreedyConfig, RateSource, RateSourceConfig, RateTransport};
use traffic::background::{Structure, SwingConfig, SwingSource};
use traffic::plan::{self, HostPlan};
use traffic::{App, HostId};
use units::{Rng, Time};

pub use net::fabric::{BOTTLENECK_FWD, BOTTLENECK_REV};

/// Ports the generated traffic uses.
const BG_TCP_PORT: u16 = 5001;
const BG_UDP_PORT: u16 = 9;
/// Swing's generated servers listen on the class's own port plus this.
/// Swing used 20000 to keep clear of real services on its testbed hosts;
/// simulated hosts run nothing else, and keeping the port lets a capture of
/// the regenerated traffic be classified like the trace.
const SWING_PORT_BASE: u16 = 0;

pub struct Built {
    pub world: World,
    pub apps: Vec<Box<dyn App>>,
    pub app_names: Vec<String>,
}

struct Builder {
    world: World,
    side_count: [u32; 2],
}

impl Builder {
    /// The number the next host will have (plans name streams after it).
    fn next_host(&self) -> HostId {
        self.world.hosts.len() as HostId
    }

    /// The index of TCP settings `c`, each distinct one kept once.
    fn tcp_cfg(&mut self, c: &tcp::TcpConfig) -> u32 {
        match self.world.tcp_cfgs.iter().position(|x| x == c) {
            Some(i) => i as u32,
            None => {
                self.world.tcp_cfgs.push(c.clone());
                (self.world.tcp_cfgs.len() - 1) as u32
            }
        }
    }

    /// Makes a planned host: its paths and routes (the fabric's), its TCP
    /// settings and address (the world's).
    fn host(&mut self, p: &HostPlan) -> HostId {
        let id =
            self.world.fabric.add_host(p.side, p.up.clone(), p.down.clone(), p.beyond.clone(), p.loses).unwrap_or_else(|e| panic!("host plan: {e}"));
        debug_assert_eq!(id as usize, self.world.hosts.len());
        let s = &mut self.side_count[(p.side == Side::Right) as usize];
        let index = *s;
        *s += 1;
        let tcp_cfg = self.tcp_cfg(&p.tcp);
        self.world.hosts.push(Host { side: p.side, index, tcp_cfg, next_port: EPHEMERAL_FIRST, ipv6: p.ipv6 });
        id
    }

    fn hosts(&mut self, plans: &[HostPlan]) -> Vec<HostId> {
        plans.iter().map(|p| self.host(p)).collect()
    }

    /// `n` hosts on `side` sharing `group`'s access link and TCP settings.
    fn group(&mut self, side: Side, n: u32, group: &Group) -> Vec<HostId> {
        let plans = plan::group(self.next_host(), side, n, &group.access, &group.tcp);
        self.hosts(&plans)
    }

    /// A swing model's virtual hosts, side A's and side B's.
    fn swing_hosts(&mut self, m: &SwingModel) -> [Vec<HostId>; 2] {
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
        let plans = plan::swing(&p, self.world.fabric.seed(), self.next_host());
        plans.map(|side| self.hosts(&side))
    }
}

pub fn build(r: &Resolved) -> Built {
    let fabric = Fabric::dumbbell(&r.bottleneck, r.seed).unwrap_or_else(|e| panic!("bottleneck: {e}"));
    let mut b = Builder { world: World::new(fabric), side_count: [0, 0] };
    b.world.monitors = (0..2).map(|_| Monitor::new(r.output.series_bin, r.duration)).collect();

    let mut apps: Vec<Box<dyn App>> = Vec::new();
    let mut names = Vec::new();
    let stop_all = Time(r.duration.0);
    for a in &r.apps {
        match a {
            AppModel::Http { name, object_sizes, request_size, think_time, start, stop, count, clients, port, server_side, client, server } => {
                let srv = b.group(*server_side, 1, server)[0];
                let cl = b.group(server_side.other(), *clients, client);
                apps.push(Box::new(HttpApp::new(HttpConfig {
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
                })));
                names.push(name.clone());
            }
        }
    }
    for bg in &r.background {
        match bg {
            BackgroundModel::Rate { name, arrivals, transport, rate, packet_size, hosts, sources, start, stop, group } => {
                let src = b.group(*sources, *hosts, group);
                let dst = b.group(sources.other(), *hosts, group);
                // IP and transport headers, so that packets are `packet_size`
                // (TCP: plus the timestamps option when the hosts use it).
                let header = match transport {
                    RateTransport::Udp => 28,
                    RateTransport::Tcp => 40 + if group.tcp.timestamps { 12 } else { 0 },
                };
                let cfg = RateSourceConfig {
                    name: name.clone(),
                    arrivals: *arrivals,
                    transport: *transport,
                    pairs: src.into_iter().zip(dst).collect(),
                    rate_bps: rate.as_f64(),
                    packet_size: *packet_size,
                    header,
                    port: if *transport == RateTransport::Udp { BG_UDP_PORT } else { BG_TCP_PORT },
                    start: *start,
                    stop: *stop,
                };
                apps.push(Box::new(RateSource::new(cfg, Rng::stream(r.seed, &format!("bg/{name}")))));
                names.push(name.clone());
            }
            BackgroundModel::Swing(m) => {
                let hosts = b.swing_hosts(m);
                let ipv6 = hosts.clone().map(|hs| hs.iter().map(|&h| b.world.hosts[h as usize].ipv6).collect());
                let cfg = SwingConfig {
                    name: m.name.clone(),
                    model: m.model.clone(),
                    hosts,
                    ipv6,
                    start: m.start,
                    stop: m.stop,
                    session_scale: m.session_scale,
                    response_scale: m.response_scale,
                    zero_think: m.zero_think,
                    port_base: SWING_PORT_BASE,
                    structure: if m.whole_sessions { Structure::Sessions } else { Structure::Marginals },
                };
                apps.push(Box::new(SwingSource::new(cfg, Rng::stream(r.seed, &format!("bg/{}", m.name)))));
                names.push(m.name.clone());
            }
            BackgroundModel::Greedy { name, hosts, sources, start, spread, stop, group } => {
                let src = b.group(*sources, *hosts, group);
                let dst = b.group(sources.other(), *hosts, group);
                let cfg = GreedyConfig {
                    name: name.clone(),
                    pairs: src.into_iter().zip(dst).collect(),
                    port: BG_TCP_PORT,
                    start: *start,
                    spread: *spread,
                    stop: *stop,
                };
                apps.push(Box::new(Greedy::new(cfg, Rng::stream(r.seed, &format!("bg/{name}")))));
                names.push(name.clone());
            }
        }
    }
    b.world.app_tcp = vec![TcpTotals::default(); apps.len()];
    b.world.paths_added();
    Built { world: b.world, apps, app_names: names }
}
