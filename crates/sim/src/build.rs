//! From resolved scenario settings to a world and its applications.

use crate::monitor::Monitor;
use crate::topology::{Host, NodeRef, PathSlot, Router, EPHEMERAL_FIRST};
use crate::world::{TcpTotals, World};
use net::{DelaySpec, DisciplineSpec, ElementSpec, LossModel, PathSpec, QueueLimit, RateSpec};
use scenario::{AppModel, BackgroundModel, Group, LinkParams, Resolved, Side, SwingModel};
use traffic::apps::{HttpApp, HttpConfig};
use traffic::background::{Greedy, GreedyConfig, RateSource, RateSourceConfig, RateTransport};
use traffic::background::{Structure, SwingConfig, SwingSource};
use traffic::{App, HostId};
use units::{Dur, Rate};
use units::{Rng, Time};

pub const BOTTLENECK_FWD: u32 = 0;
pub const BOTTLENECK_REV: u32 = 1;
const LEFT_ROUTER: u32 = 0;
const RIGHT_ROUTER: u32 = 1;

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
    seed: u64,
    world: World,
    side_count: [u32; 2],
}

/// A loss `total` of which `after` (at most all of it) happens beyond the
/// observed link, as the (before, after) probabilities that together lose
/// `total`.
fn split_loss(total: f64, after: f64) -> (f64, f64) {
    let after = after.clamp(0.0, total);
    (1.0 - (1.0 - total) / (1.0 - after), after)
}

/// The path of a link with these parameters: loss on arrival, a
/// drop-tail queue gated by the link's shapers and outages, bunching, delay.
/// Its random streams are named for the link, so that they do not depend
/// on what else the run holds (bunching has a stream of its own, so a
/// link's losses are the same with or without it).
fn link_spec(p: &LinkParams, name: &str) -> PathSpec {
    let mut elements = Vec::new();
    if p.loss > 0.0 {
        elements.push(ElementSpec::Loss { model: LossModel::Bernoulli { p: p.loss }, stream: format!("link/{name}"), handshakes: None });
    }
    elements.push(ElementSpec::Queue { rate: RateSpec::Fixed(p.rate), limit: p.queue, discipline: DisciplineSpec::DropTail });
    elements.extend(p.shapers.iter().map(|s| ElementSpec::Shaper(*s)));
    elements.extend(p.outages.iter().map(|o| ElementSpec::Outages(o.clone())));
    if p.bunching > 0.0 {
        elements.push(ElementSpec::Bunching { p: p.bunching, stream: format!("link/{name}/bunching") });
    }
    elements.push(ElementSpec::Delay(DelaySpec::Fixed(p.delay)));
    PathSpec { elements }
}

/// A host's loss of what it sends, at one place on its path (`where_`:
/// "before-link" or "after-link"): every packet but SYNs and SYN/ACKs at
/// `packets` (Swing's per-packet loss), handshakes at their own rate, since
/// a path that drops the tails of bursts passes lone SYNs, and one lost
/// costs a connection a whole second.
fn send_loss(host: HostId, where_: &str, packets: f64, handshakes: f64) -> ElementSpec {
    let bernoulli = |p: f64| LossModel::Bernoulli { p: p.clamp(0.0, 0.99) };
    ElementSpec::Loss {
        model: bernoulli(packets),
        stream: format!("h{host}/{where_}"),
        handshakes: Some((bernoulli(handshakes), format!("h{host}/{where_}/handshake"))),
    }
}

impl Builder {
    fn add_path(&mut self, name: String, spec: PathSpec, to: NodeRef) -> u32 {
        let path = spec.build(self.seed).unwrap_or_else(|e| panic!("path {name}: {e}"));
        self.world.paths.push(PathSlot { path, spec, to, name, monitor: None, wake_at: None });
        (self.world.paths.len() - 1) as u32
    }

    /// Adds `n` hosts on `side` sharing `group`'s access link and TCP settings.
    fn hosts(&mut self, side: Side, n: u32, group: &Group) -> Vec<HostId> {
        let cfg = self.tcp_cfg(group);
        (0..n).map(|_| self.host(side, &group.access, &group.access, cfg)).collect()
    }

    fn tcp_cfg(&mut self, group: &Group) -> u32 {
        self.world.tcp_cfgs.push(group.tcp.clone());
        (self.world.tcp_cfgs.len() - 1) as u32
    }

    /// Adds one host on `side` with its own access link up and down.
    fn host(&mut self, side: Side, up: &LinkParams, down: &LinkParams, tcp_cfg: u32) -> HostId {
        let id = self.world.hosts.len() as HostId;
        self.host_paths(side, link_spec(up, &format!("h{id}/up")), link_spec(down, &format!("h{id}/down")), tcp_cfg)
    }

    /// Adds one host on `side` whose access paths are `up` and `down`.
    fn host_paths(&mut self, side: Side, up: PathSpec, down: PathSpec, tcp_cfg: u32) -> HostId {
        let router = match side {
            Side::Left => LEFT_ROUTER,
            Side::Right => RIGHT_ROUTER,
        };
        let id = self.world.hosts.len() as HostId;
        let s = &mut self.side_count[(side == Side::Right) as usize];
        let index = *s;
        *s += 1;
        let uplink = self.add_path(format!("h{id}/up"), up, NodeRef::Router(router));
        let downlink = self.add_path(format!("h{id}/down"), down, NodeRef::Host(id));
        self.world.hosts.push(Host { side, index, uplink, beyond: None, loses: false, tcp_cfg, next_port: EPHEMERAL_FIRST, ipv6: false });
        // Routes: the host's own router sends down its access link, the other
        // router sends across the bottleneck.
        for (r, route) in self.world.routers.iter_mut().enumerate() {
            route.route.push(if r as u32 == router {
                downlink
            } else if router == LEFT_ROUTER {
                BOTTLENECK_REV
            } else {
                BOTTLENECK_FWD
            });
        }
        id
    }

    /// Virtual hosts for a swing model: each side's hosts get access links
    /// drawn (weighted by bytes) from the model's per-host tuples of that
    /// side. A host's RTT to the link becomes a one-way delay of half of it
    /// on each access direction; its loss rate applies to what it sends.
    /// Its queues hold twice the bandwidth-delay product of a typical path
    /// through it: its own RTT plus the other side's byte-weighted median,
    /// since the round trip of its flows is what its buffer must cover (a
    /// client next to the capture point has almost no RTT of its own).
    fn swing_hosts(&mut self, m: &SwingModel) -> [Vec<HostId>; 2] {
        let cfg = self.tcp_cfg(&m.group);
        let mut rng = Rng::stream(self.seed, &format!("bg/{}/hosts", m.name));
        let base = &m.group.access;
        let fallback = (2.0 * base.delay.as_secs_f64(), base.rate.as_f64(), base.loss);
        let mut out = [Vec::new(), Vec::new()];
        let sides = [swing::Side::A, swing::Side::B].map(|side| m.model.net_tuples(side, fallback));
        let median_rtt = |t: &[swing::NetTuple]| swing::weighted_median(t.iter().map(|t| (t.rtt_s, t.weight)).collect());
        // The trace's stalls, on every access link of the side whose path
        // stalled, both ways, in every period as its sessions are.
        let period = Dur::from_secs_f64(m.model.link.duration_s.max(1e-3));
        let outages = [swing::Side::A, swing::Side::B].map(|side| {
            let w = m.model.link.stalls.iter().filter(|s| m.stalls && s.side == side);
            let w = w.map(|s| (Dur::from_secs_f64(s.start_s.max(0.0)), Dur::from_secs_f64(s.end_s.max(0.0)))).collect();
            net::Outages::new(w, period, m.start)
        });
        for side in [swing::Side::A, swing::Side::B] {
            let tuples = &sides[side.index()];
            let far_rtt = median_rtt(&sides[side.other().index()]).unwrap_or(fallback.0);
            let total: f64 = tuples.iter().map(|t| t.weight).sum();
            let place = if side == swing::Side::A { m.side_a } else { other(m.side_a) };
            for _ in 0..m.hosts[side.index()] {
                let t = if tuples.is_empty() {
                    // No trace host to copy: the scenario's stack settings.
                    swing::NetTuple { rtt_s: fallback.0, capacity_bps: fallback.1, loss: fallback.2, weight: 1.0, ..Default::default() }
                } else {
                    let mut x = rng.uniform() * total;
                    tuples
                        .iter()
                        .find(|t| {
                            x -= t.weight;
                            x < 0.0
                        })
                        .unwrap_or(&tuples[tuples.len() - 1])
                        .clone()
                };
                let mut rate = Rate(t.capacity_bps.round().max(1.0) as u64);
                let mut bunched = t.bunched;
                if let Some(cap) = m.access_cap {
                    // A capped host has another access link: its trace
                    // path's bunching (relative to its own capacity) goes.
                    if cap < rate {
                        bunched = 0.0;
                    }
                    rate = rate.min(cap);
                }
                let own = host_tcp(&m.group.tcp, &t);
                // HighBurst sets the end-to-end RTT: a quarter of it on each of
                // the four access directions a round trip crosses. Otherwise
                // the trace's handshake RTT already held the handshake's
                // serialisation on this access link, once each way, so the
                // propagation delay is what remains (the re-extracted RTT is
                // then the trace's, not its plus 0.07 ms).
                let one_way = match m.rtt {
                    Some(r) => Dur(r.0 / 4),
                    None => {
                        let serialise = handshake_ip_bytes(&own, t.ipv6) as f64 * 8.0 / rate.as_f64();
                        Dur::from_secs_f64((t.rtt_s / 2.0 - serialise).max(0.0))
                    }
                };
                // Swing sized queues at twice the bandwidth-delay product.
                let path_rtt = match m.rtt {
                    Some(r) => r.as_secs_f64(),
                    None => t.rtt_s + far_rtt,
                };
                let bdp_pkts = rate.as_f64() * path_rtt / (1500.0 * 8.0);
                let queue = QueueLimit::Packets((1.0 + 2.0 * bdp_pkts).ceil().max(10.0) as u32);
                // The part of the loss after the link is dropped beyond it
                // (the link sees those packets, as the trace did); the rest
                // on the uplink, so that together they lose `loss`.
                // Handshakes are lost before and after the link in the same
                // proportion as other packets.
                let loss = t.loss.clamp(0.0, 0.99);
                let (before, after) = split_loss(loss, t.loss_after);
                let hs = t.handshake_loss.clamp(0.0, 0.99);
                let (hs_before, hs_after) = split_loss(hs, if loss > 0.0 { hs * after / loss } else { 0.0 });
                // Its sending is shaped as the trace host's was; what it
                // receives is not (that was the other end's sending).
                let shapers = t
                    .shaper
                    .iter()
                    .flat_map(|s| s.buckets())
                    .filter(|&(r, _)| r < rate.as_f64())
                    .map(|(r, b)| net::Shaper { rate: Rate(r.round().max(1.0) as u64), burst: b.clamp(1500, u32::MAX as u64) as u32 })
                    .collect();
                // Its packets arrive bunched as the trace host's did: that
                // was its path's delivery, on its sending direction here.
                // A share b of its pairs bunched: hold with p = b / (1 - b).
                let bunching = (bunched / (1.0 - bunched).max(1e-9)).clamp(0.0, 1.0);
                // Its loss is the host's own (`World::host_loss`), with
                // handshakes apart, not the link's.
                let up = LinkParams { rate, delay: one_way, queue, loss: 0.0, shapers, bunching, outages: outages[side.index()].clone() };
                let down = LinkParams { loss: 0.0, shapers: vec![], bunching: 0.0, ..up.clone() };
                // The group's settings sit at `cfg`; those of hosts that
                // differ (`host_tcp`) follow it, each made once.
                let cfg = match self.world.tcp_cfgs[cfg as usize..].iter().position(|c| *c == own) {
                    Some(k) => cfg + k as u32,
                    None => {
                        self.world.tcp_cfgs.push(own);
                        (self.world.tcp_cfgs.len() - 1) as u32
                    }
                };
                let id = self.world.hosts.len() as HostId;
                let mut up = link_spec(&up, &format!("h{id}/up"));
                let down = link_spec(&down, &format!("h{id}/down"));
                let loses = before > 0.0 || after > 0.0 || hs > 0.0;
                if loses {
                    up.elements.insert(0, send_loss(id, "before-link", before, hs_before));
                }
                let id = self.host_paths(place, up, down, cfg);
                if loses {
                    // Beyond the observed link: on to the far side's router.
                    let far = if place == Side::Left { RIGHT_ROUTER } else { LEFT_ROUTER };
                    let beyond = PathSpec { elements: vec![send_loss(id, "after-link", after, hs_after)] };
                    let b = self.add_path(format!("h{id}/beyond"), beyond, NodeRef::Router(far));
                    let h = &mut self.world.hosts[id as usize];
                    (h.loses, h.beyond) = (true, Some(b));
                }
                self.world.hosts[id as usize].ipv6 = t.ipv6;
                out[side.index()].push(id);
            }
        }
        // A connection needs both ends in one IP version: a version only one
        // side has becomes the other's.
        let has = |hosts: &[Host], side: &[HostId], v6: bool| side.iter().any(|&h| hosts[h as usize].ipv6 == v6);
        for v6 in [true, false] {
            let hosts = &self.world.hosts;
            if !(has(hosts, &out[0], v6) && has(hosts, &out[1], v6)) {
                for &h in out.iter().flatten() {
                    let host = &mut self.world.hosts[h as usize];
                    if host.ipv6 == v6 {
                        host.ipv6 = !v6;
                    }
                }
            }
        }
        out
    }
}

/// A virtual host's TCP: the group's, with what its trace host showed.
///
/// ACKs: the host's bytes received per pure ACK sent, reproduced as a
/// running count (`TcpConfig::ack_bytes`) with quick ACKs off, since the
/// measurement includes them. Initial window: its first flights'. MSS,
/// timestamps and SACK: what the host's own
/// SYNs offered, so header and segment sizes are the trace's (the smaller
/// end's MSS wins and an option is used only if both ends offer it, as in
/// TCP).
fn host_tcp(group: &tcp::TcpConfig, t: &swing::NetTuple) -> tcp::TcpConfig {
    let mut c = group.clone();
    if let Some(b) = t.bytes_per_ack {
        // The measured frequency, quick ACKs included.
        c.ack_bytes = Some(b.round().max(1.0) as u64);
        c.quickack = 0;
    } else {
        // Models written before bytes per ACK: the nearest stack behaviour.
        host_ack_every(&mut c, t.segments_per_ack);
    }
    if let Some(d) = t.ack_delay_s {
        c.delack_timeout = Dur::from_secs_f64(d.clamp(0.005, 0.5));
    }
    if let Some(mss) = t.mss {
        c.mss = mss.clamp(536, 9000);
    }
    c.timestamps = t.timestamps.unwrap_or(c.timestamps);
    c.sack = t.sack.unwrap_or(c.sack);
    if let Some(w) = t.initial_window {
        c.initial_cwnd = w.clamp(1, 100);
    }
    if let Some(w) = t.rcv_window {
        c.rcv_buf = w.clamp(4 << 10, 64 << 20);
    }
    c
}

/// IP size of a host's SYN (its SYN/ACK is within a few bytes).
fn handshake_ip_bytes(c: &tcp::TcpConfig, ipv6: bool) -> u32 {
    let ip = if ipv6 { wire::Ipv6Repr::HEADER_LEN } else { wire::Ipv4Repr::HEADER_LEN } as u32;
    ip + 20 + tcp::syn_option_bytes(c.sack, c.timestamps)
}

/// Segments per ACK (models without bytes per ACK): fewer than 1.25 ACKs
/// every segment; 1.25 to 1.9 is Linux's delayed ACKs with quick ACKs at
/// the start of flows (the group's settings); 1.9 to 2.5 is strict delayed
/// ACKs, every second segment from the first (quick ACKs off, as Windows
/// and macOS do); 2.5 or more is stretch ACKs (receive offload) or a server
/// that piggybacks every ACK on its responses: every that many (at most 8),
/// quick ACKs off.
fn host_ack_every(c: &mut tcp::TcpConfig, segments_per_ack: Option<f64>) {
    match segments_per_ack {
        Some(s) if s < 1.25 => c.ack_every = 1,
        Some(s) if (1.9..2.5).contains(&s) => {
            c.ack_every = 2;
            c.quickack = 0;
        }
        Some(s) if s >= 2.5 => {
            c.ack_every = (s.round() as u32).min(8);
            c.quickack = 0;
        }
        _ => {}
    }
}

fn other(s: Side) -> Side {
    match s {
        Side::Left => Side::Right,
        Side::Right => Side::Left,
    }
}

pub fn build(r: &Resolved) -> Built {
    let mut b = Builder { seed: r.seed, world: World::new(), side_count: [0, 0] };
    b.world.routers = vec![Router { route: Vec::new() }, Router { route: Vec::new() }];
    let fwd = b.add_path("bottleneck/fwd".into(), link_spec(&r.bottleneck[0], "bottleneck/fwd"), NodeRef::Router(RIGHT_ROUTER));
    let rev = b.add_path("bottleneck/rev".into(), link_spec(&r.bottleneck[1], "bottleneck/rev"), NodeRef::Router(LEFT_ROUTER));
    debug_assert_eq!((fwd, rev), (BOTTLENECK_FWD, BOTTLENECK_REV));
    for (m, l) in [fwd, rev].into_iter().enumerate() {
        b.world.paths[l as usize].monitor = Some(m as u8);
        b.world.monitors.push(Monitor::new(r.output.series_bin, r.duration));
    }

    let mut apps: Vec<Box<dyn App>> = Vec::new();
    let mut names = Vec::new();
    let stop_all = Time(r.duration.0);
    for a in &r.apps {
        match a {
            AppModel::Http { name, object_sizes, request_size, think_time, start, stop, count, clients, port, server_side, client, server } => {
                let srv = b.hosts(*server_side, 1, server)[0];
                let cl = b.hosts(other(*server_side), *clients, client);
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
                let src = b.hosts(*sources, *hosts, group);
                let dst = b.hosts(other(*sources), *hosts, group);
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
                let src = b.hosts(*sources, *hosts, group);
                let dst = b.hosts(other(*sources), *hosts, group);
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
    Built { world: b.world, apps, app_names: names }
}
