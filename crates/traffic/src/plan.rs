//! Host plans: what a traffic model means for hosts and paths, decided
//! once, for both engines.
//!
//! A plan is a pure function of a model, the scenario's knobs and the seed:
//! which hosts exist, on which side, with which access paths up and down
//! (elements of `net`), which TCP settings and address family, and what
//! happens to their packets beyond the observed link. An engine only
//! instantiates plans: the simulator as simulated hosts and paths, the
//! emulator as addresses in namespaces behind its core.

use net::{DelaySpec, DisciplineSpec, ElementSpec, Fabric, LineSpec, LossModel, PathSpec, QueueLimit, RateSpec, SpecError};
use std::sync::Arc;
use tcp::TcpConfig;
use units::{Dur, Rate, Rng, Time};

use crate::HostId;

/// Left or right of the bottleneck (the fabric's).
pub use net::Side;

/// A link as a scenario names it: rate, propagation delay, drop-tail
/// queue and Bernoulli loss on arrival.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkParams {
    pub rate: Rate,
    pub delay: Dur,
    pub queue: QueueLimit,
    pub loss: f64,
}

impl LinkParams {
    /// The path of this link named `name`: its loss draws from the stream
    /// `link/NAME`.
    pub fn path(&self, name: &str) -> PathSpec {
        PathSpec::link(self.rate, self.delay, self.queue, self.loss, &format!("link/{name}"))
    }
}

/// A line the hosts of a group share (a scenario's `line = {...}`): a
/// drop-tail queue at `rate` each way between their access links and their
/// router.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LineParams {
    pub rate: Rate,
    pub queue: QueueLimit,
}

impl LineParams {
    /// The line named `name`.
    pub fn spec(&self, name: String) -> LineSpec {
        let path = |dir: &str| PathSpec::link(self.rate, Dur::ZERO, self.queue, 0.0, &format!("line/{name}/{dir}"));
        LineSpec { up: path("up"), down: path("down"), name }
    }
}

/// One host: where it sits, its access paths, what it sends meets beyond
/// the observed link, the line it shares, its TCP settings and address
/// family.
#[derive(Clone, Debug, PartialEq)]
pub struct HostPlan {
    pub side: Side,
    /// From the host to its side's router, and back.
    pub up: PathSpec,
    pub down: PathSpec,
    /// The path what it sends takes after crossing the observed link,
    /// before it is routed on (the host's loss beyond the link).
    pub beyond: Option<PathSpec>,
    /// Its uplink begins with the loss of what it sends (the host's own
    /// loss, counted apart from a link's).
    pub loses: bool,
    pub tcp: TcpConfig,
    pub ipv6: bool,
    /// The DiffServ class of what it sends (0: best effort).
    pub class: u8,
    /// The line it shares with other hosts of its side, if any (hosts of a
    /// plan that name one line share it).
    pub line: Option<Arc<LineSpec>>,
}

impl HostPlan {
    /// Makes this host's paths in `fabric` (its access, its path beyond
    /// the link, its line) and returns its number: what either engine
    /// does with a plan's network.
    pub fn attach(&self, fabric: &mut Fabric) -> Result<HostId, SpecError> {
        let id = fabric.add_host(self.side, self.up.clone(), self.down.clone(), self.beyond.clone(), self.loses)?;
        fabric.set_class(id, self.class);
        if let Some(l) = &self.line {
            fabric.join_line(id, l)?;
        }
        Ok(id)
    }
}

/// `n` hosts on `side`, each with the group's access link and TCP
/// settings, and behind one `line` of their own if given; `first` is the
/// number the first of them will have (its paths' random streams, and
/// the line, are named for it).
pub fn group(first: HostId, side: Side, n: u32, access: &LinkParams, tcp: &TcpConfig, line: Option<LineParams>) -> Vec<HostPlan> {
    let line = line.map(|l| Arc::new(l.spec(format!("h{first}"))));
    (first..first + n)
        .map(|id| HostPlan {
            side,
            up: access.path(&format!("h{id}/up")),
            down: access.path(&format!("h{id}/down")),
            beyond: None,
            loses: false,
            tcp: tcp.clone(),
            ipv6: false,
            class: 0,
            line: line.clone(),
        })
        .collect()
}

/// A swing model and the scenario's knobs on it.
#[derive(Clone, Copy, Debug)]
pub struct SwingPlan<'a> {
    /// The model's name in the scenario (its random streams are named for it).
    pub name: &'a str,
    pub model: &'a swing::Model,
    /// Virtual hosts for the model's side A and side B.
    pub hosts: [u32; 2],
    /// Where the model's side A sits.
    pub side_a: Side,
    /// Every flow's end-to-end RTT (the seed's HighBurst).
    pub rtt: Option<Dur>,
    /// A cap on every host's access capacity (the seed's Traffic2).
    pub access_cap: Option<Rate>,
    /// Replay the trace's path stalls, from `start`.
    pub stalls: bool,
    pub start: Time,
    /// The scenario's access link and TCP settings: what a host takes
    /// where the model has no value of its own.
    pub access: &'a LinkParams,
    pub tcp: &'a TcpConfig,
}

/// Virtual hosts for a swing model, side A's then side B's, numbered from
/// `first`: each copies a host of the model's side (drawn weighted by its
/// bytes from its network tuples). A host's RTT to the link becomes a
/// one-way delay of half of it on each access direction; its loss applies
/// to what it sends, before the link and beyond it as the trace saw. Its
/// queues hold twice the bandwidth-delay product of a typical path through
/// it: its own RTT plus the other side's byte-weighted median, since the
/// round trip of its flows is what its buffer must cover (a client next to
/// the capture point has almost no RTT of its own). Virtual hosts copying
/// hosts that shared a line share lines (`side_lines`).
pub fn swing(p: &SwingPlan, seed: u64, first: HostId) -> [Vec<HostPlan>; 2] {
    swing_hosts(p, seed, first).plans
}

/// A swing model's virtual hosts (`swing`), side A's then side B's, and
/// the trace host each copies.
#[derive(Clone, Debug, PartialEq)]
pub struct SwingHosts {
    pub plans: [Vec<HostPlan>; 2],
    /// Per virtual host, the index in the model's `hosts` of the trace
    /// host it copies (None: its side had none, it has the scenario's).
    pub copies: [Vec<Option<u32>>; 2],
}

/// [`swing`], with the trace host each virtual host copies.
pub fn swing_hosts(p: &SwingPlan, seed: u64, first: HostId) -> SwingHosts {
    let mut rng = Rng::stream(seed, &format!("bg/{}/hosts", p.name));
    let fallback = (2.0 * p.access.delay.as_secs_f64(), p.access.rate.as_f64(), p.access.loss);
    let sides = [swing::Side::A, swing::Side::B].map(|side| p.model.net_tuples(side, fallback));
    // The trace's stalls, on every access link of the side whose path
    // stalled, both ways, in every period as its sessions are.
    let period = Dur::from_secs_f64(p.model.link.duration_s.max(1e-3));
    let outages = [swing::Side::A, swing::Side::B].map(|side| {
        let w = p.model.link.stalls.iter().filter(|s| p.stalls && s.side == side);
        let w = w.map(|s| (Dur::from_secs_f64(s.start_s.max(0.0)), Dur::from_secs_f64(s.end_s.max(0.0)))).collect();
        net::Outages::new(w, period, p.start)
    });
    let mut id = first;
    let mut out = [Vec::new(), Vec::new()];
    let mut copies = [Vec::new(), Vec::new()];
    for side in [swing::Side::A, swing::Side::B] {
        let tuples = &sides[side.index()];
        let ctx = SideCtx {
            place: if side == swing::Side::A { p.side_a } else { p.side_a.other() },
            far_rtt: median_rtt(&sides[side.other().index()]).unwrap_or(fallback.0),
            outages: outages[side.index()].clone(),
        };
        // The model's index of each of the side's hosts (tuples are in its order).
        let index: Vec<u32> = (0..p.model.hosts.len() as u32).filter(|&i| p.model.hosts[i as usize].side == side).collect();
        let total: f64 = tuples.iter().map(|t| t.weight).sum();
        // The trace host each virtual host copies (none: the side has none).
        let drawn: Vec<Option<usize>> = (0..p.hosts[side.index()])
            .map(|_| {
                (!tuples.is_empty()).then(|| {
                    let mut x = rng.uniform() * total;
                    tuples
                        .iter()
                        .position(|t| {
                            x -= t.weight;
                            x < 0.0
                        })
                        .unwrap_or(tuples.len() - 1)
                })
            })
            .collect();
        let lines = side_lines(p, tuples, &drawn, ctx.far_rtt);
        for (d, line) in drawn.into_iter().zip(lines) {
            let t = match d {
                Some(i) => tuples[i].clone(),
                // No trace host to copy: the scenario's stack settings.
                None => swing::NetTuple { rtt_s: fallback.0, capacity_bps: fallback.1, loss: fallback.2, weight: 1.0, ..Default::default() },
            };
            out[side.index()].push(virtual_host(p, &t, &ctx, id, line));
            copies[side.index()].push(d.map(|i| index[i]));
            id += 1;
        }
    }
    one_ip_version(&mut out);
    SwingHosts { plans: out, copies }
}

/// What the virtual hosts of one side share: where they sit, the other
/// side's median RTT, the trace's stalls.
struct SideCtx {
    place: Side,
    far_rtt: f64,
    outages: Option<net::Outages>,
}

/// The byte-weighted median RTT of `t`.
fn median_rtt(t: &[swing::NetTuple]) -> Option<f64> {
    swing::weighted_median(t.iter().map(|t| (t.rtt_s, t.weight)).collect())
}

/// A line virtual hosts share, and its rate.
#[derive(Clone)]
struct VirtualLine {
    spec: Arc<LineSpec>,
    rate: Rate,
}

/// The line of each virtual host of a side (`drawn`: the index in `tuples`
/// of the trace host each copies). A trace line of g hosts from which k
/// virtual hosts were drawn becomes max(1, round(k / g)) lines, its virtual
/// hosts dealt to them in turn in the order drawn: each line carries about
/// as many hosts as the trace's did, so more hosts make more lines, not
/// fuller ones. A line sends at its measured rate both ways (the direction
/// away from the capture was not seen; as with a host's capacity, one rate
/// serves both) through Swing's queue: twice the bandwidth-delay product of
/// its hosts' median RTT plus the other side's.
fn side_lines(p: &SwingPlan, tuples: &[swing::NetTuple], drawn: &[Option<usize>], far_rtt: f64) -> Vec<Option<VirtualLine>> {
    let mut out: Vec<Option<VirtualLine>> = vec![None; drawn.len()];
    for (l, line) in p.model.lines.iter().enumerate() {
        let on: Vec<&swing::NetTuple> = tuples.iter().filter(|t| t.line == Some(l)).collect();
        let mine: Vec<usize> = (0..drawn.len()).filter(|&k| drawn[k].is_some_and(|i| tuples[i].line == Some(l))).collect();
        if on.is_empty() || mine.is_empty() {
            continue;
        }
        let n = ((mine.len() as f64 / on.len() as f64).round() as usize).max(1);
        let rate = Rate(line.rate_bps.round().max(1.0) as u64);
        let rtt = match p.rtt {
            Some(r) => r.as_secs_f64(),
            None => swing::weighted_median(on.iter().map(|t| (t.rtt_s, t.weight)).collect()).unwrap_or(0.0) + far_rtt,
        };
        let path = || PathSpec { elements: vec![swing_queue(rate, rtt)] };
        let specs: Vec<Arc<LineSpec>> =
            (0..n).map(|c| Arc::new(LineSpec { name: format!("{}/{l}/{c}", p.name), up: path(), down: path() })).collect();
        for (j, k) in mine.into_iter().enumerate() {
            out[k] = Some(VirtualLine { spec: specs[j % n].clone(), rate });
        }
    }
    out
}

/// Swing's access queue at `rate`: 1 + twice the bandwidth-delay product of
/// a path of `rtt_s`, at least 10 packets.
fn swing_queue(rate: Rate, rtt_s: f64) -> ElementSpec {
    let bdp_pkts = rate.as_f64() * rtt_s / (1500.0 * 8.0);
    ElementSpec::Queue {
        rate: RateSpec::Fixed(rate),
        limit: QueueLimit::Packets((1.0 + 2.0 * bdp_pkts).ceil().max(10.0) as u32),
        discipline: DisciplineSpec::DropTail,
    }
}

/// The host copying network tuple `t`, numbered `id`, behind `line` if it
/// shares one (its own access keeps its own capacity: its packet pairs
/// came through the line when it sent alone).
fn virtual_host(p: &SwingPlan, t: &swing::NetTuple, ctx: &SideCtx, id: HostId, line: Option<VirtualLine>) -> HostPlan {
    let mut rate = Rate(t.capacity_bps.round().max(1.0) as u64);
    let mut bunched = t.bunched;
    if let Some(cap) = p.access_cap {
        // A capped host has another access link: its trace path's bunching
        // (relative to its own capacity) goes.
        if cap < rate {
            bunched = 0.0;
        }
        rate = rate.min(cap);
    }
    let tcp = host_tcp(p.tcp, t);
    // HighBurst sets the end-to-end RTT: a quarter of it on each of the
    // four access directions a round trip crosses. Otherwise the trace's
    // handshake RTT already held the handshake's serialisation on this
    // access link, once each way, so the propagation delay is what remains
    // (the re-extracted RTT is then the trace's, not its plus the
    // serialisation).
    // (A line's serialisation too.)
    let one_way = match p.rtt {
        Some(r) => Dur(r.0 / 4),
        None => {
            let bits = handshake_ip_bytes(&tcp, t.ipv6) as f64 * 8.0;
            let serialise = bits / rate.as_f64() + line.as_ref().map_or(0.0, |l| bits / l.rate.as_f64());
            Dur::from_secs_f64((t.rtt_s / 2.0 - serialise).max(0.0))
        }
    };
    // Swing sized queues at twice the bandwidth-delay product.
    let path_rtt = match p.rtt {
        Some(r) => r.as_secs_f64(),
        None => t.rtt_s + ctx.far_rtt,
    };
    let queue = swing_queue(rate, path_rtt);
    let delay = ElementSpec::Delay(DelaySpec::Fixed(one_way));

    // The part of the loss after the link is dropped beyond it (the link
    // sees those packets, as the trace did); the rest on the uplink, so
    // that together they lose `loss`. Handshakes are lost before and after
    // the link in the same proportion as other packets.
    let loss = t.loss.clamp(0.0, 0.99);
    let (before, after) = split_loss(loss, t.loss_after);
    let hs = t.handshake_loss.clamp(0.0, 0.99);
    let (hs_before, hs_after) = split_loss(hs, if loss > 0.0 { hs * after / loss } else { 0.0 });
    let loses = before > 0.0 || after > 0.0 || hs > 0.0;

    let mut up = Vec::new();
    if loses {
        up.push(send_loss(id, "before-link", (before, t.loss_burst), hs_before));
    }
    up.push(queue.clone());
    // Its sending is shaped as the trace host's was; what it receives is
    // not (that was the other end's sending).
    let shapers = t.shaper.iter().flat_map(|s| s.buckets()).filter(|&(r, _)| r < rate.as_f64());
    up.extend(
        shapers
            .map(|(r, b)| ElementSpec::Shaper(net::Shaper { rate: Rate(r.round().max(1.0) as u64), burst: b.clamp(1500, u32::MAX as u64) as u32 })),
    );
    let stalls = ctx.outages.clone().map(ElementSpec::Outages);
    up.extend(stalls.clone());
    // Its packets arrive bunched as the trace host's did: that was its
    // path's delivery, on its sending direction here. A share b of its
    // pairs bunched: hold with p = b / (1 - b).
    let bunching = (bunched / (1.0 - bunched).max(1e-9)).clamp(0.0, 1.0);
    if bunching > 0.0 {
        up.push(ElementSpec::Bunching { p: bunching, stream: format!("link/h{id}/up/bunching") });
    }
    up.push(delay.clone());
    let down = [Some(queue), stalls, Some(delay)].into_iter().flatten().collect();
    HostPlan {
        side: ctx.place,
        up: PathSpec { elements: up },
        down: PathSpec { elements: down },
        beyond: loses.then(|| PathSpec { elements: vec![send_loss(id, "after-link", (after, t.loss_burst), hs_after)] }),
        loses,
        tcp,
        ipv6: t.ipv6,
        class: 0,
        line: line.map(|l| l.spec),
    }
}

/// A connection needs both ends in one IP version: a version only one side
/// has becomes the other's.
fn one_ip_version(sides: &mut [Vec<HostPlan>; 2]) {
    for v6 in [true, false] {
        let has = |side: &[HostPlan]| side.iter().any(|h| h.ipv6 == v6);
        if !(has(&sides[0]) && has(&sides[1])) {
            for h in sides.iter_mut().flatten().filter(|h| h.ipv6 == v6) {
                h.ipv6 = !v6;
            }
        }
    }
}

/// A loss `total` of which `after` (at most all of it) happens beyond the
/// observed link, as the (before, after) probabilities that together lose
/// `total`.
fn split_loss(total: f64, after: f64) -> (f64, f64) {
    let after = after.clamp(0.0, total);
    (1.0 - (1.0 - total) / (1.0 - after), after)
}

/// A host's loss of what it sends, at one place on its path (`place`:
/// "before-link" or "after-link"): every packet but SYNs and SYN/ACKs at
/// `packets`, a (share, mean run) pair, handshakes at their own rate, since
/// a path that drops the tails of bursts passes lone SYNs, and one lost
/// costs a connection a whole second.
fn send_loss(host: HostId, place: &str, packets: (f64, f64), handshakes: f64) -> ElementSpec {
    let bernoulli = |p: f64| LossModel::Bernoulli { p: p.clamp(0.0, 0.99) };
    ElementSpec::Loss {
        model: runs(packets.0, packets.1),
        stream: format!("h{host}/{place}"),
        handshakes: Some((bernoulli(handshakes), format!("h{host}/{place}/handshake"))),
    }
}

/// Loss of a share `mean` of packets in runs of `burst` on average: each
/// packet alone (Swing's per-packet loss) for runs of 1, else a
/// Gilbert-Elliott process that loses every packet in its bad state,
/// leaves it with 1/`burst` (runs of that mean length) and enters it as
/// often as `mean` needs. TCP recovers once per run, so at one share of
/// loss the runs set how many recoveries, halvings and loss reports
/// there are.
fn runs(mean: f64, burst: f64) -> LossModel {
    let mean = mean.clamp(0.0, 0.99);
    if burst <= 1.0 || mean <= 0.0 {
        return LossModel::Bernoulli { p: mean };
    }
    let r = 1.0 / burst;
    LossModel::GilbertElliott { p: (r * mean / (1.0 - mean)).min(1.0), r, loss_good: 0.0, loss_bad: 1.0 }
}

/// A virtual host's TCP: the group's, with what its trace host showed.
///
/// ACKs: the host's bytes received per pure ACK sent, reproduced as a
/// running count (`TcpConfig::ack_bytes`) with quick ACKs off, since the
/// measurement includes them. Initial window: its first flights'; window
/// growth per ACK or per byte acknowledged: its slow start's. MSS,
/// timestamps and SACK: what the host's own SYNs offered, so header and
/// segment sizes are the trace's (the smaller end's MSS wins and an option
/// is used only if both ends offer it, as in TCP).
fn host_tcp(group: &TcpConfig, t: &swing::NetTuple) -> TcpConfig {
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
    if let Some(g) = t.growth_per_byte {
        // Nearer one than the other: its stack's rule.
        c.byte_counting = g >= 0.5;
    }
    if let Some(p) = t.packet_window {
        // Its flights of short segments showed the unit of its window.
        c.packet_window = p;
    }
    if let Some(w) = t.rcv_window {
        // The window the host was seen to offer, fixed.
        c.rcv_buf = w.clamp(4 << 10, 64 << 20);
        c.rcv_buf_auto = false;
    }
    c
}

/// IP size of a host's SYN (its SYN/ACK is within a few bytes).
fn handshake_ip_bytes(c: &TcpConfig, ipv6: bool) -> u32 {
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
fn host_ack_every(c: &mut TcpConfig, segments_per_ack: Option<f64>) {
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

#[cfg(test)]
mod tests;
