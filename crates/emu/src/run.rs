//! A scenario run in real time: its hosts made as addresses in namespaces,
//! its network as the core's paths, its applications over real sockets,
//! and the run directory written as the simulator writes it.

use crate::addr;
use crate::capture::Capture;
use crate::core::{Core, CoreConfig};
use crate::flows::{Flows, Transfer};
use crate::lateness::Lateness;
use crate::network::{Network, SpacePlan};
use crate::overhead::{self, Overhead};
use crate::programs::{self, Ended, Shell};
use crate::settings::{self, Linux};
use crate::sockets::{SocketHost, SocketOptions, SocketStats, Sockets};
use crate::sys;
use net::fabric::Fabric;
use net::monitor;
use net::Side;
use rundir::{io_err, CaptureMiss, Facts, Link, RunError, RunReport, TcpTotals};
use scenario::Resolved;
use serde_json::{json, Value};
use std::net::IpAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use traffic::plan::HostPlan;
use traffic::{AppReport, Column, HostId, Records};
use units::Time;

/// A host as the emulator makes it.
struct Host {
    addr: IpAddr,
    /// The application or background model it belongs to (`Builder::owners`).
    owner: u32,
    /// Its namespace: hosts of one side with the same Linux settings share one.
    space: u32,
    linux: Linux,
}

/// Makes the hosts a scenario plans: paths in the fabric, an address and
/// a namespace each. The first error is kept (the `Hosts` trait cannot
/// return one) and reported after assembly.
struct Builder {
    fabric: Fabric,
    hosts: Vec<Host>,
    per_side: [u32; 2],
    /// Per namespace: its side and settings, in the order they appeared.
    spaces: Vec<(Side, Linux)>,
    /// Applications and background models, in the order they made hosts.
    owners: Vec<String>,
    /// Swing models: their hosts' TCP settings are measured from a trace,
    /// and Linux runs without those it cannot apply (counted, not refused).
    swing: Vec<String>,
    /// Per TCP field Linux could not apply: on how many swing hosts.
    not_applied: std::collections::BTreeMap<&'static str, u64>,
    error: Option<String>,
}

impl Builder {
    fn space(&mut self, side: Side, linux: &Linux) -> u32 {
        match self.spaces.iter().position(|(s, l)| *s == side && l == linux) {
            Some(i) => i as u32,
            None => {
                self.spaces.push((side, linux.clone()));
                (self.spaces.len() - 1) as u32
            }
        }
    }

    fn fail(&mut self, e: String) {
        self.error.get_or_insert(e);
    }

    /// Gives a host a namespace of its own (a real program's host).
    fn own_space(&mut self, host: HostId) {
        let side = self.fabric.hosts[host as usize].side;
        self.spaces.push((side, self.hosts[host as usize].linux.clone()));
        self.hosts[host as usize].space = (self.spaces.len() - 1) as u32;
    }
}

impl scenario::Hosts for Builder {
    fn next_host(&self) -> HostId {
        self.hosts.len() as HostId
    }

    fn owner(&mut self, name: &str) {
        self.owners.push(name.to_string());
    }

    fn host(&mut self, p: &HostPlan) -> HostId {
        let id = self.hosts.len() as HostId;
        if let Err(e) = p.attach(&mut self.fabric) {
            self.fail(format!("host {id}'s paths: {e}"));
        }
        let s = (p.side == Side::Right) as usize;
        let index = self.per_side[s];
        self.per_side[s] += 1;
        if index >= addr::MAX_PER_SIDE {
            let model = self.owners.last().map_or(String::new(), |o| format!("{o:?}: "));
            self.fail(format!(
                "{model}more than {} hosts on one side: the emulator numbers each side's hosts in a /16 of 198.18.0.0/15 (the simulator takes more; lower hosts or use engine = \"sim\")",
                addr::MAX_PER_SIDE
            ));
        }
        let measured = self.owners.last().is_some_and(|o| self.swing.contains(o));
        let linux = if measured {
            let (l, refused) = settings::translate(&p.tcp);
            for (field, _) in refused {
                *self.not_applied.entry(field).or_default() += 1;
            }
            l
        } else {
            settings::linux(&p.tcp).unwrap_or_else(|e| {
                self.fail(e);
                Linux::default()
            })
        };
        let space = self.space(p.side, &linux);
        let owner = self.owners.len().saturating_sub(1) as u32;
        self.hosts.push(Host { addr: addr::host(p.side, index.min(addr::MAX_PER_SIDE - 1), p.ipv6), owner, space, linux });
        id
    }
}

/// The namespaces to make: one per side and distinct Linux settings.
fn space_plans(b: &Builder) -> Vec<SpacePlan> {
    b.spaces
        .iter()
        .enumerate()
        .map(|(i, (side, linux))| SpacePlan {
            label: format!("{}{i}", if *side == Side::Left { 'l' } else { 'r' }),
            addrs: b.hosts.iter().filter(|h| h.space == i as u32).map(|h| h.addr).collect(),
            sysctls: linux.sysctls.clone(),
            route: linux.route.clone(),
        })
        .collect()
}

fn options(l: &Linux) -> SocketOptions {
    SocketOptions { congestion: Some(l.congestion.clone()), mss: l.mss, sndbuf: l.sndbuf, rcvbuf: l.rcvbuf }
}

/// Runs `r` in real time and writes its run directory `dir` (see
/// `sim::run_scenario` for the arguments).
pub fn run_scenario(
    r: &Resolved,
    scenario_toml: &str,
    case: Option<&str>,
    dir: &Path,
    progress: &mut dyn FnMut(f64) -> bool,
) -> Result<RunReport, RunError> {
    run(r, scenario_toml, case, dir, None, progress)
}

/// Runs `r` with `shell` in place of a command app's client, until the
/// shell exits (or the scenario's duration ends); writes the run
/// directory `dir`.
pub fn run_shell(
    r: &Resolved,
    scenario_toml: &str,
    case: Option<&str>,
    dir: &Path,
    shell: &Shell,
    progress: &mut dyn FnMut(f64) -> bool,
) -> Result<RunReport, RunError> {
    run(r, scenario_toml, case, dir, Some(shell), progress)
}

fn run(
    r: &Resolved,
    scenario_toml: &str,
    case: Option<&str>,
    dir: &Path,
    shell: Option<&Shell>,
    progress: &mut dyn FnMut(f64) -> bool,
) -> Result<RunReport, RunError> {
    if let Some(why) = crate::network::unavailable() {
        return Err(RunError::Engine(why));
    }
    let Planned { builder, mut apps, names, commands } = plan(r, shell)?;
    rundir::begin(dir, scenario_toml)?;
    let net = Network::create(&space_plans(&builder)).map_err(|e| RunError::Engine(format!("cannot make the emulated network: {e}")))?;
    let Builder { fabric, hosts, owners: makers, not_applied, .. } = builder;
    let overhead = measure_overhead(&net, &hosts)?;
    let origin = sys::monotonic_ns();
    let pcap = dir.join("bottleneck.pcap");
    let mut core = make_core(r, fabric, &hosts, !commands.is_empty(), &pcap, origin)?;
    core.set_overhead(overhead);
    let socket_hosts = hosts.iter().map(|h| SocketHost { addr: h.addr, space: h.space, options: options(&h.linux) }).collect();
    let mut sockets = Sockets::new(&net, socket_hosts, origin).map_err(|e| RunError::Engine(format!("cannot open the hosts' sockets: {e}")))?;
    let ns_of = |h: u32| net.spaces[hosts[h as usize].space as usize].ns.name().to_string();
    let progs = programs::programs(&commands, |h| hosts[h as usize].addr, ns_of, dir, shell);

    let end = Time(r.duration.0);
    let started = std::time::Instant::now();
    let clock = || Time(sys::monotonic_ns().saturating_sub(origin));
    let Ran { forwarded, driven, ends, cancelled } = drive(&mut core, &net, &mut sockets, &mut apps, &progs, dir, clock, end, progress);
    let wall = started.elapsed().as_secs_f64();
    // A shell may end the run early: what it reports covers what ran.
    let ran = clock().min(end);
    let mut r = r.clone();
    if ran < end {
        r.duration = units::Dur(ran.0);
        core.monitors.iter_mut().for_each(|m| m.truncate(ran));
    }
    let r = &r;
    let forwarded = forwarded.map_err(|_| RunError::Engine("the core stopped unexpectedly".into()))?;
    if let Some(o) = core.observer.take() {
        o.finish().map_err(|e| io_err(&pcap, e))?;
    }
    if cancelled {
        return Err(RunError::Cancelled);
    }
    forwarded.map_err(|e| RunError::Engine(format!("the core failed: {e}")))?;
    let mut stats = driven.map_err(|e| RunError::Engine(format!("the hosts' sockets failed: {e}")))?;
    let tun = net.counters().map_err(|e| RunError::Engine(format!("cannot read the TUN counters: {e}")))?;
    let tun_dropped: u64 = tun.iter().map(|c| c.tx_dropped).sum();
    drop(net);

    let mut owned = Owned { reports: apps.iter().map(|a| a.report()).collect(), app_tcp: stats.app_tcp.clone(), owners: names };
    if let Some(flows) = &core.flows {
        let owner_of = |h: u32| &makers[hosts[h as usize].owner as usize];
        add_commands(&mut owned, &mut stats.conn_log, flows, &commands, &ends_per_command(&commands, &progs, &ends), owner_of);
    }
    let mut engine = engine_section(&core, &hosts, &stats, tun_dropped, wall);
    engine["tcp_not_applied"] = json!(not_applied);
    let link = |i: usize| Link::new(&core.monitors[i], &core.fabric().paths[i].path, r.bottleneck[i].rate());
    let facts = Facts {
        reports: owned.reports,
        app_names: &owned.owners,
        app_tcp: &owned.app_tcp,
        links: [link(0), link(1)],
        conn_log: &stats.conn_log,
        engine,
    };
    let summary = rundir::summary(r, case, &facts);
    rundir::write_tables(dir, &facts).map_err(RunError::Output)?;
    let timing = json!({
        "wall_s": wall,
        "core_cpu_s": core.stats.cpu_ns as f64 * 1e-9,
        "bottleneck_packets": core.monitors[0].total_pkts + core.monitors[1].total_pkts,
    });
    rundir::finish(dir, summary, timing)
}

/// What a scenario runs, with its hosts made: before anything is created.
struct Planned {
    builder: Builder,
    apps: Vec<Box<dyn traffic::App>>,
    names: Vec<String>,
    commands: Vec<scenario::Command>,
}

/// Plans the run: the fabric and its hosts, their namespaces (real
/// programs' hosts each in one of their own) and the apps; the first error
/// in any of them.
fn plan(r: &Resolved, shell: Option<&Shell>) -> Result<Planned, RunError> {
    let fabric = Fabric::dumbbell(&r.bottleneck, r.seed).map_err(|e| RunError::Engine(format!("bottleneck: {e}")))?;
    let swing = r.background.iter().filter(|m| matches!(m, scenario::BackgroundModel::Swing(_))).map(|m| m.name().to_string()).collect();
    let mut b = Builder {
        fabric,
        hosts: Vec::new(),
        per_side: [0, 0],
        spaces: Vec::new(),
        owners: Vec::new(),
        swing,
        not_applied: Default::default(),
        error: None,
    };
    let scenario::Assembled { apps, names, commands } = scenario::assemble(r, &mut b);
    if let Some(e) = b.error.take() {
        return Err(RunError::Engine(e));
    }
    if let Some(sh) = shell {
        programs::shell_app(&commands, sh).map_err(RunError::Engine)?;
    }
    for c in &commands {
        b.own_space(c.server);
        b.own_space(c.client);
    }
    Ok(Planned { builder: b, apps, names, commands })
}

/// The core's one-way overhead, measured between the first host and the
/// first host of another namespace (none with a single namespace).
fn measure_overhead(net: &Network, hosts: &[Host]) -> Result<Overhead, RunError> {
    let Some(a) = hosts.first() else { return Ok(Overhead::default()) };
    let Some(b) = hosts.iter().find(|h| h.space != a.space) else { return Ok(Overhead::default()) };
    overhead::calibrate(net, (a.addr, a.space), (b.addr, b.space), CoreConfig::default())
        .map_err(|e| RunError::Engine(format!("cannot measure the core's own overhead: {e}")))
}

/// The core for `hosts`: the bottleneck's series, per-connection records
/// when real programs run (`flows`), the capture if asked.
fn make_core(r: &Resolved, mut fabric: Fabric, hosts: &[Host], flows: bool, pcap: &Path, origin: u64) -> Result<Core, RunError> {
    let addrs: Vec<(IpAddr, u32)> = hosts.iter().map(|h| (h.addr, h.space)).collect();
    let monitors = monitor::observe(&mut fabric, r.output.series_bin, r.duration);
    let mut core = Core::new(fabric, &addrs, CoreConfig::default(), origin);
    core.monitors = monitors;
    if flows {
        core.flows = Some(Flows::default());
    }
    if r.output.pcap {
        let cap = Capture::create(pcap, r.output.pcap_snaplen, Time(r.output.pcap_from.0), CaptureMiss::new(r.seed, r.output.pcap_miss))
            .map_err(|e| io_err(pcap, e))?;
        core.observer = Some(Box::new(cap));
    }
    Ok(core)
}

/// How the run's three threads ended.
struct Ran {
    forwarded: std::thread::Result<std::io::Result<()>>,
    driven: std::io::Result<SocketStats>,
    ends: Vec<Ended>,
    cancelled: bool,
}

/// Runs until `end` (or a shell's exit, or `progress` says stop): the core
/// forwarding, the programs supervised, and the apps driven over the
/// hosts' sockets on this thread.
#[allow(clippy::too_many_arguments)]
fn drive(
    core: &mut Core,
    net: &Network,
    sockets: &mut Sockets,
    apps: &mut [Box<dyn traffic::App>],
    progs: &[programs::Program],
    dir: &Path,
    clock: impl Fn() -> Time + Send + Sync,
    end: Time,
    progress: &mut dyn FnMut(f64) -> bool,
) -> Ran {
    let stop = AtomicBool::new(false);
    let mut cancelled = false;
    let (forwarded, driven, ends) = std::thread::scope(|s| {
        let stop = &stop;
        let fwd = s.spawn(move || core.run(net, None, stop));
        let supervisor = s.spawn(move || programs::supervise(progs, dir, clock, stop));
        let mut tick = |t: Time| {
            let go = progress(t.as_secs_f64() / end.as_secs_f64());
            cancelled |= !go;
            go
        };
        let driven = sockets.run(apps, end, stop, &mut tick);
        stop.store(true, Ordering::Relaxed);
        let ends = supervisor.join().unwrap_or_default();
        (fwd.join(), driven, ends)
    });
    Ran { forwarded, driven, ends, cancelled }
}

/// The reports, TCP totals and names of the run's owners of hosts, in
/// summary order: apps and background models, then command apps.
struct Owned {
    reports: Vec<AppReport>,
    app_tcp: Vec<TcpTotals>,
    owners: Vec<String>,
}

/// The command apps' connections as the core saw them, after the apps':
/// a report each, and their clients' rows in the connection log.
fn add_commands<'a>(
    owned: &mut Owned,
    conn_log: &mut rundir::ConnLog,
    flows: &Flows,
    commands: &[scenario::Command],
    ends: &[[Option<Ended>; 2]],
    owner_of: impl Fn(u32) -> &'a String,
) {
    let transfers = flows.transfers();
    for (c, ended) in commands.iter().zip(ends) {
        let mine: Vec<&Transfer> = transfers.iter().filter(|t| t.opener == c.client).collect();
        owned.reports.push(command_report(&c.name, &mine, ended));
        owned.app_tcp.push(TcpTotals {
            connections: mine.len() as u64,
            retransmits: mine.iter().map(|t| t.retransmits).sum(),
            ..TcpTotals::default()
        });
        owned.owners.push(c.name.clone());
    }
    let owners = &owned.owners;
    let owner_index = |h: u32| owners.iter().position(|n| n == owner_of(h)).unwrap_or(0) as u32;
    for row in flows.rows(owner_index).iter().filter(|row| commands.iter().any(|c| c.client == row.host)) {
        conn_log.push(row);
    }
}

/// How each command's server and client ended, from the programs' order.
fn ends_per_command(commands: &[scenario::Command], progs: &[programs::Program], ends: &[Ended]) -> Vec<[Option<Ended>; 2]> {
    commands
        .iter()
        .map(|c| {
            let find = |role: &str| {
                let label = format!("{}/{role}", c.name);
                progs.iter().position(|p| p.label == label).and_then(|i| ends.get(i).cloned())
            };
            [find("server"), find("client")]
        })
        .collect()
}

/// An exit as a summary counter: the exit code, minus the signal that
/// killed it, or NaN if undertow stopped it (or it never ran).
fn exit_counter(e: &Option<Ended>) -> f64 {
    match e {
        Some(Ended::Exited(c)) => *c as f64,
        Some(Ended::Signalled(s)) => -(*s as f64),
        _ => f64::NAN,
    }
}

/// A command app's report: each connection its client opened, from its
/// SYN to its last data byte.
fn command_report(name: &str, transfers: &[&Transfer], ended: &[Option<Ended>; 2]) -> AppReport {
    let f = |g: fn(&Transfer) -> f64| Column::F64(transfers.iter().map(|t| g(t)).collect());
    let i = |g: fn(&Transfer) -> u64| Column::I64(transfers.iter().map(|t| g(t) as i64).collect());
    let records = Records {
        columns: vec![
            ("opened_s", f(|t| t.opened.as_secs_f64())),
            ("duration_s", f(|t| t.duration_s)),
            ("bytes_out", i(|t| t.bytes_out)),
            ("bytes_back", i(|t| t.bytes_back)),
            ("retransmits", i(|t| t.retransmits)),
        ],
    };
    AppReport {
        name: name.to_string(),
        kind: "command",
        metric: Some("duration_s"),
        records,
        counters: vec![("connections", transfers.len() as f64), ("server_exit", exit_counter(&ended[0])), ("client_exit", exit_counter(&ended[1]))],
    }
}

/// The core's own one-way overhead as start-up measured it, and what it
/// takes off each packet's route.
fn overhead_section(core: &Core) -> Value {
    let o = &core.overhead;
    let us = |ns: u64| ns as f64 / 1e3;
    json!({ "probes": o.probes, "p10": us(o.p10_ns), "p50": us(o.p50_ns), "p99": us(o.p99_ns), "correction": us(core.correction().0) })
}

/// A lateness histogram as the summary gives it, in microseconds.
fn lateness_section(late: &Lateness) -> Value {
    let us = |q: f64| late.quantile_ns(q).map_or(Value::Null, |ns| json!(ns as f64 / 1e3));
    let (bins, over) = late.bins_us();
    json!({
        "p50": us(0.5), "p99": us(0.99), "max": late.max_ns() as f64 / 1e3, "count": late.count(),
        "histogram": bins, "over_10ms": over,
    })
}

/// The emulator's section of the summary: how faithfully it ran.
fn engine_section(core: &Core, hosts: &[Host], sockets: &SocketStats, tun_dropped: u64, wall_s: f64) -> Value {
    let s = &core.stats;
    json!({
        "name": "emu",
        "hosts": hosts.len(),
        "namespaces": hosts.iter().map(|h| h.space).max().map_or(0, |m| m + 1),
        "packets_read": s.read,
        "packets_delivered": s.delivered,
        "unroutable": s.unroutable,
        "write_errors": s.write_errors,
        "tun_dropped": tun_dropped,
        "lateness_us": lateness_section(&s.lateness),
        "timer_lateness_us": lateness_section(&sockets.timer_lateness),
        "overhead_us": overhead_section(core),
        "core_cpu_share": if wall_s > 0.0 { s.cpu_ns as f64 * 1e-9 / wall_s } else { 0.0 },
        "core_spin_withheld_s": s.spin_withheld as f64 * crate::spin::WINDOW_NS as f64 * 1e-9,
        "stray_datagrams": sockets.stray_datagrams,
        "lost_before_link": core.fabric().losses.before_link,
        "lost_after_link": core.fabric().losses.after_link,
    })
}
