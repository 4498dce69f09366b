//! Applications over the hosts' kernel sockets, through the core between
//! two namespaces: downloads against the bottleneck's rate and delay, the
//! bytes on the wire against the bytes written, constant-rate sources,
//! refused connections, short writes and socket options. Skips, saying
//! why, without root or TUN.

use emu::sockets::{SocketHost, SocketOptions, SocketStats, Sockets, STAGING};
use emu::testbed::Testbed;
use emu::{addr, Core, Network};
use net::Side;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use traffic::apps::{HttpApp, HttpConfig};
use traffic::background::{Arrivals, RateSource, RateSourceConfig, RateTransport};
use traffic::{App, AppReport, ConnId, Event, Transport};
use units::{Dur, Rng, Time};

fn at(s: f64) -> Time {
    Time::from_secs_f64(s)
}

/// Host 0 on the left and host 1 on the right of a `mbps`, `delay_ms`
/// bottleneck (each way), on 1 Gbit/s access links without delay, each in
/// its own namespace; the core and the sockets share a time zero.
struct Rig {
    net: Network,
    core: Core,
    sockets: Sockets,
}

fn rig(mbps: u64, delay_ms: u64, options: SocketOptions) -> Rig {
    let Testbed { net, core, left, right, origin_ns } = Testbed::new(mbps, delay_ms, 1000, 1000).unwrap();
    let hosts = [(left, 0), (right, 1)].map(|(addr, space)| SocketHost { addr, space, options: options.clone() });
    let sockets = Sockets::new(&net, hosts.to_vec(), origin_ns).unwrap();
    Rig { net, core, sockets }
}

/// Forwards with the core on a thread while `apps` run over the sockets
/// here, until `until` or until `done(now)` says they are finished.
fn drive(r: &mut Rig, apps: &mut [Box<dyn App>], until: Time, done: &dyn Fn(Time) -> bool) -> SocketStats {
    let stop = AtomicBool::new(false);
    let (core, net, sockets) = (&mut r.core, &r.net, &mut r.sockets);
    std::thread::scope(|s| {
        let fwd = s.spawn(|| core.run(net, None, &stop));
        let stats = sockets.run(apps, until, &stop, &mut |now| !done(now));
        stop.store(true, Ordering::Relaxed);
        fwd.join().unwrap().unwrap();
        stats.unwrap()
    })
}

/// What an application was told, and when.
type Told = Rc<RefCell<Vec<(Time, Event)>>>;

/// An application that also tells the test every event it gets.
struct Watched<A> {
    app: A,
    told: Told,
}

fn watched<A: App + 'static>(app: A) -> (Box<dyn App>, Told) {
    let told = Told::default();
    (Box::new(Watched { app, told: told.clone() }), told)
}

impl<A: App> App for Watched<A> {
    fn start(&mut self, tp: &mut dyn Transport) {
        self.app.start(tp)
    }
    fn on_event(&mut self, ev: Event, tp: &mut dyn Transport) {
        self.told.borrow_mut().push((tp.now(), ev));
        self.app.on_event(ev, tp)
    }
    fn report(&self) -> AppReport {
        self.app.report()
    }
}

fn count(told: &Told, what: fn(&Event) -> bool) -> usize {
    told.borrow().iter().filter(|(_, e)| what(e)).count()
}

/// Bytes and packets the namespace's TUN has sent towards the core.
fn tun_sent(net: &Network, space: usize) -> (u64, u64) {
    let text = net.spaces[space].ns.within(|| std::fs::read_to_string("/proc/thread-self/net/dev")).unwrap();
    let line = text.lines().find_map(|l| l.split_once(':').filter(|(name, _)| name.trim() == emu::network::TUN)).unwrap().1;
    let f: Vec<u64> = line.split_whitespace().map(|x| x.parse().unwrap()).collect();
    (f[8], f[9])
}

/// TCP payload bytes among `bytes` of `packets` IPv4 segments: each has a
/// 20-byte IP header and a 32-byte TCP header (timestamps), but the SYN or
/// SYN-ACK, whose options take 8 bytes more.
fn tcp_payload((bytes, packets): (u64, u64)) -> u64 {
    bytes - 52 * packets - 8
}

fn http(sizes: &[u64], request: u64) -> HttpApp {
    HttpApp::new(HttpConfig {
        name: "web".into(),
        server: 1,
        clients: vec![0],
        port: 80,
        object_sizes: sizes.to_vec(),
        request_size: request,
        think_time: Dur::ZERO,
        start: at(0.05),
        stop: at(60.0),
        count: sizes.len() as u64,
    })
}

#[test]
fn http_downloads_take_the_bottlenecks_serialisation_and_round_trips_and_not_much_more() {
    let Some(_one) = emu::testbed::exclusive() else { return };
    let mut r = rig(10, 10, SocketOptions::default());
    let sizes = [20_000, 200_000, 1_000_000];
    let (app, told) = watched(http(&sizes, 300));
    let mut apps = vec![app];
    // Each fetch ends with both ends closed.
    let stats = drive(&mut r, &mut apps, at(8.0), &|_| count(&told, |e| matches!(e, Event::Closed(_))) == 2 * sizes.len());
    let report = apps[0].report();
    let counter = |name| report.counters.iter().find(|c| c.0 == name).unwrap().1;
    assert_eq!((report.records.rows(), counter("failed"), counter("unfinished")), (3, 0.0, 0.0));
    let bytes = report.records.i64("bytes").unwrap();
    let took = report.records.f64("download_time_s").unwrap();
    for (&b, &t) in bytes.iter().zip(took) {
        // The handshake and the request each take a round trip (20 ms)
        // before the response's last byte can cross at 10 Mbit/s.
        let floor = b as f64 * 8.0 / 10e6 + 2.0 * 0.020;
        eprintln!("{b} bytes in {:.1} ms (floor {:.1} ms)", t * 1e3, floor * 1e3);
        assert!(t >= floor, "{b} bytes in {t} s, faster than the bottleneck allows ({floor} s)");
        assert!(t < 5.0 * floor, "{b} bytes in {t} s on an idle link");
    }
    let tcp = stats.app_tcp[0];
    assert_eq!((tcp.connections, tcp.resets), (6, 0), "three connections, both ends counted, none reset");
    let late = &stats.timer_lateness;
    eprintln!(
        "{} events; timers late by p50 {} µs, max {} µs; event loop CPU {:.1}% of {:.2} s",
        stats.events,
        late.quantile_ns(0.5).unwrap_or(0) / 1000,
        late.max_ns() / 1000,
        stats.cpu_ns as f64 / stats.wall_ns as f64 * 100.0,
        stats.wall_ns as f64 * 1e-9
    );
}

/// The client's segments as they crossed the bottleneck left to right, in
/// order: (source port, a SYN, a FIN).
#[derive(Clone, Default)]
struct LeftToRight(Arc<Mutex<Vec<(u16, bool, bool)>>>);

impl emu::core::Observer for LeftToRight {
    fn arrived(&mut self, monitor: u8, _: Time, ip: &[u8]) {
        let Ok(p) = wire::decode(wire::LinkType::RAW, ip, ip.len() as u32) else { return };
        if let (0, Some(t)) = (monitor, p.tcp()) {
            self.0.lock().unwrap().push((t.src_port, t.flags.syn(), t.flags.fin()));
        }
    }
    fn finish(self: Box<Self>) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_closed_connections_fin_leaves_before_the_next_connections_syn() {
    // The http client closes each finished download and opens the next in
    // the same callback, in that order: its FIN crosses the bottleneck
    // first, as the simulator sends it (writes wait for the callback's
    // end; a close does not).
    let Some(_one) = emu::testbed::exclusive() else { return };
    let mut r = rig(50, 5, SocketOptions::default());
    let seen = LeftToRight::default();
    r.core.observer = Some(Box::new(seen.clone()));
    let sizes = [30_000, 30_000, 30_000, 30_000];
    let (app, told) = watched(http(&sizes, 300));
    let mut apps = vec![app];
    drive(&mut r, &mut apps, at(5.0), &|_| count(&told, |e| matches!(e, Event::Closed(_))) == 2 * sizes.len());
    let seen = seen.0.lock().unwrap().clone();
    let syns: Vec<(usize, u16)> = seen.iter().enumerate().filter(|(_, s)| s.1).map(|(i, s)| (i, s.0)).collect();
    assert_eq!(syns.len(), sizes.len());
    for w in syns.windows(2) {
        let fin = seen.iter().position(|s| s.0 == w[0].1 && s.2).expect("the client closed");
        assert!(fin < w[1].0, "the FIN of port {} came after the next SYN: {seen:?}", w[0].1);
    }
}

#[test]
fn the_bytes_on_the_wire_are_the_bytes_the_application_wrote() {
    let Some(_one) = emu::testbed::exclusive() else { return };
    let mut r = rig(10, 10, SocketOptions::default());
    let before = [tun_sent(&r.net, 0), tun_sent(&r.net, 1)];
    let (app, told) = watched(http(&[1_000_000], 300));
    let stats = drive(&mut r, &mut [app], at(5.0), &|_| count(&told, |e| matches!(e, Event::Closed(_))) == 2);
    let after = [tun_sent(&r.net, 0), tun_sent(&r.net, 1)];
    let sent = |i: usize| tcp_payload((after[i].0 - before[i].0, after[i].1 - before[i].1));
    let (request, response) = (sent(0), sent(1));
    eprintln!("TCP payload on the wire: request {request} bytes, response {response} bytes");
    assert_eq!(stats.app_tcp[0].retransmits, 0, "nothing was sent twice");
    assert!(request.abs_diff(300) <= 1, "a 300-byte request with its mark took {request} bytes");
    assert!(response.abs_diff(1_000_000) <= 1_000, "a 1 MB response with its mark took {response} bytes");
    // The frames' own count agrees to the byte.
    let b = stats.app_bytes[0];
    assert_eq!((b.written, b.wire_sent, b.wire_received), (1_000_300, 1_000_300, 1_000_300));
}

fn rate(transport: RateTransport) -> RateSource {
    RateSource::new(rate_config(transport), Rng::stream(1, "sockets-test"))
}

/// 2 Mbit/s from 0.1 s to 1.1 s, host 0 to host 1.
fn rate_config(transport: RateTransport) -> RateSourceConfig {
    RateSourceConfig {
        name: "cbr".into(),
        arrivals: Arrivals::Constant,
        transport,
        pairs: vec![(0, 1)],
        rate_bps: 2e6,
        packet_size: 1000,
        header: if transport == RateTransport::Udp { 28 } else { 52 },
        port: 9,
        start: at(0.1),
        stop: at(1.1),
    }
}

#[test]
fn constant_rate_udp_delivers_the_datagrams_its_rate_asks_for() {
    let Some(_one) = emu::testbed::exclusive() else { return };
    let mut r = rig(10, 5, SocketOptions::default());
    let (app, told) = watched(rate(RateTransport::Udp));
    let stats = drive(&mut r, &mut [app], at(1.2), &|_| false);
    // 2 Mbit/s of 1000-byte packets for 1 s.
    let expected = 2e6 / 8000.0;
    let got: Vec<Event> = told.borrow().iter().map(|t| t.1).filter(|e| matches!(e, Event::Datagram { .. })).collect();
    eprintln!("{} datagrams of {expected}", got.len());
    assert!((got.len() as f64 / expected - 1.0).abs() <= 0.02, "{} datagrams of {expected}", got.len());
    assert!(got.iter().all(|&e| e == Event::Datagram { host: 1, port: 9, from: 0, bytes: 972 }), "{:?}", got[0]);
    assert_eq!((stats.datagrams_received, stats.stray_datagrams, stats.udp_errors), (got.len() as u64, 0, 0));
}

#[test]
fn a_sine_rate_over_udp_delivers_the_integral_of_its_rate() {
    let Some(_one) = emu::testbed::exclusive() else { return };
    let mut r = rig(10, 5, SocketOptions::default());
    // m = A = 1 Mbit/s at 1.5 Hz from phase 0: ∫ over the 1 s is
    // m·1 s + (A/ω)(1 − cos 3π) = 1 Mbit + 2/(3π) Mbit.
    let wave = traffic::background::process::Wave { amplitude: 1e6, frequency: 1.5, phase: 0.0 };
    let sine = Box::new(traffic::background::process::Sine::new(1e6, vec![wave]));
    let cfg = RateSourceConfig { name: "sine".into(), ..rate_config(RateTransport::Udp) };
    let (app, told) = watched(RateSource::paced(cfg, sine, Rng::stream(1, "sockets-test")));
    drive(&mut r, &mut [app], at(1.2), &|_| false);
    let expected = ((1e6 + 2e6 / (3.0 * std::f64::consts::PI)) / 8000.0).floor();
    let got = count(&told, |e| matches!(e, Event::Datagram { .. }));
    eprintln!("{got} datagrams of {expected}");
    assert!((got as f64 - expected).abs() <= 1.0, "{got} datagrams of {expected}");
}

#[test]
fn constant_rate_tcp_delivers_the_bytes_its_rate_asks_for() {
    let Some(_one) = emu::testbed::exclusive() else { return };
    let mut r = rig(10, 5, SocketOptions::default());
    let (app, told) = watched(rate(RateTransport::Tcp));
    let mut apps = vec![app];
    // The source closes at its stop, the sink when it sees the FIN.
    let stats = drive(&mut r, &mut apps, at(2.0), &|_| count(&told, |e| matches!(e, Event::Closed(_))) == 2);
    // 2 Mbit/s of 1000-byte packets for 1 s, 948 payload bytes each; the
    // sending starts a handshake (10 ms) after the start.
    let expected = 2e6 / 8000.0 * 948.0;
    let received = stats.app_bytes[0].wire_received;
    eprintln!("{received} bytes of {expected}");
    assert!((received as f64 / expected - 1.0).abs() <= 0.05, "{received} bytes of {expected}");
    let report = apps[0].report();
    let written = report.counters.iter().find(|c| c.0 == "sent_bytes").unwrap().1;
    assert_eq!(received as f64, written, "every byte written arrived, and nothing else");
    assert_eq!(count(&told, |e| matches!(e, Event::Reset(_))), 0);
}

/// When and with which handle an application connected.
type Opened = Rc<RefCell<Option<(Time, ConnId)>>>;

/// Connects from host 0 to host 1's `port` at the start.
struct Prober {
    port: u16,
    opened: Opened,
}

impl App for Prober {
    fn start(&mut self, tp: &mut dyn Transport) {
        *self.opened.borrow_mut() = Some((tp.now(), tp.connect(0, 1, self.port)));
    }
    fn on_event(&mut self, _: Event, _: &mut dyn Transport) {}
    fn report(&self) -> AppReport {
        AppReport::default()
    }
}

#[test]
fn a_connect_to_a_port_nobody_listens_on_is_reset_a_round_trip_later() {
    let Some(_one) = emu::testbed::exclusive() else { return };
    let mut r = rig(10, 10, SocketOptions::default());
    let opened = Opened::default();
    let (app, told) = watched(Prober { port: 4444, opened: opened.clone() });
    let stats = drive(&mut r, &mut [app], at(2.0), &|_| !told.borrow().is_empty());
    let (start, conn) = opened.borrow().expect("connected at the start");
    let told = told.borrow();
    assert_eq!(told.iter().map(|t| t.1).collect::<Vec<_>>(), vec![Event::Reset(conn)]);
    // The SYN and the RST that answers it each cross the 10 ms bottleneck.
    let took = told[0].0 - start;
    assert!(took >= Dur::from_millis(20) && took < Dur::from_millis(500), "reset after {took}");
    assert_eq!((stats.app_tcp[0].connections, stats.app_tcp[0].resets), (1, 1));
}

/// Listens on host 1 and connects to itself from host 0; aborts the
/// connection as soon as it is established.
struct Aborter {
    conn: Option<ConnId>,
}

impl App for Aborter {
    fn start(&mut self, tp: &mut dyn Transport) {
        tp.listen(1, 7001);
        self.conn = Some(tp.connect(0, 1, 7001));
    }
    fn on_event(&mut self, ev: Event, tp: &mut dyn Transport) {
        if let Event::Connected(c) = ev {
            tp.abort(c);
        }
    }
    fn report(&self) -> AppReport {
        AppReport::default()
    }
}

#[test]
fn an_aborted_connection_is_reset_at_its_peer_and_ends_quietly_at_its_own_end() {
    let Some(_one) = emu::testbed::exclusive() else { return };
    let mut r = rig(10, 10, SocketOptions::default());
    let (app, told) = watched(Aborter { conn: None });
    // On for 100 ms after the reset: the aborting end must be told nothing more.
    let done = |now: Time| told.borrow().iter().any(|&(t, e)| matches!(e, Event::Reset(_)) && now > t + Dur::from_millis(100));
    let stats = drive(&mut r, &mut [app], at(2.0), &done);
    let events: Vec<Event> = told.borrow().iter().map(|t| t.1).collect();
    let [Event::Connected(client), Event::Accepted { conn: server, host: 1, port: 7001, peer: 0 }, Event::Reset(reset)] = events[..] else {
        panic!("told {events:?}")
    };
    assert_eq!(reset, server, "the reset is the accepting end's");
    assert_ne!(client, server);
    assert_eq!((stats.app_tcp[0].connections, stats.app_tcp[0].resets), (2, 1));
}

/// Each write: free space before it, bytes asked, bytes taken.
type Writes = Rc<RefCell<Vec<(u64, u64, u64)>>>;

/// Writes `left` bytes from host 0 to a listener of its own on host 1 as
/// fast as the send buffer takes them, then marks 77 and closes; the
/// server end closes when the client has.
struct Pusher {
    left: u64,
    conn: Option<ConnId>,
    writes: Writes,
}

impl Pusher {
    fn push(&mut self, c: ConnId, tp: &mut dyn Transport) {
        while self.left > 0 {
            let space = tp.send_space(c);
            let took = tp.write(c, self.left);
            self.writes.borrow_mut().push((space, self.left, took));
            let short = took < self.left;
            self.left -= took;
            if short {
                return;
            }
        }
        tp.mark(c, 77);
        tp.close(c);
    }
}

impl App for Pusher {
    fn start(&mut self, tp: &mut dyn Transport) {
        tp.listen(1, 7000);
        self.conn = Some(tp.connect(0, 1, 7000));
    }
    fn on_event(&mut self, ev: Event, tp: &mut dyn Transport) {
        match ev {
            Event::Connected(c) | Event::Writable(c) if Some(c) == self.conn && self.left > 0 => self.push(c, tp),
            Event::PeerClosed(c) if Some(c) != self.conn => tp.close(c),
            _ => {}
        }
    }
    fn report(&self) -> AppReport {
        AppReport::default()
    }
}

#[test]
fn writing_more_than_the_send_buffer_holds_gives_short_writes_each_followed_by_writable() {
    let Some(_one) = emu::testbed::exclusive() else { return };
    let options = SocketOptions { congestion: Some("reno".into()), mss: Some(1000), sndbuf: Some(64 * 1024), rcvbuf: None };
    let mut r = rig(100, 1, options);
    let before = tun_sent(&r.net, 0);
    let (total, writes) = (2_000_000, Writes::default());
    let (app, told) = watched(Pusher { left: total, conn: None, writes: writes.clone() });
    let stats = drive(&mut r, &mut [app], at(5.0), &|_| count(&told, |e| matches!(e, Event::Closed(_))) == 2);
    let writes = writes.borrow();
    // Nothing has left before the first callback returns: the first write
    // fills the staging buffer exactly.
    assert_eq!(writes[0], (STAGING, total, STAGING));
    assert!(writes.iter().all(|&(space, asked, took)| took == asked.min(space)), "send_space tells what a write takes");
    let short = writes.iter().filter(|w| w.2 < w.1).count();
    eprintln!("{} writes, {short} short", writes.len());
    assert!(short >= 5, "{short} short writes");
    assert_eq!(count(&told, |e| matches!(e, Event::Writable(_))), short, "one Writable per short write");
    assert_eq!(writes.iter().map(|w| w.2).sum::<u64>(), total);
    assert_eq!(count(&told, |e| matches!(e, Event::Message { msg: 77, .. })), 1, "the mark after the last byte");
    assert_eq!(stats.app_bytes[0].wire_received, total);
    // TCP_MAXSEG 1000 took: segments carry 988 bytes (1000 less the
    // timestamps option), not the 1448 of a 1500-byte MTU.
    let after = tun_sent(&r.net, 0);
    let (bytes, packets) = (after.0 - before.0, after.1 - before.1);
    let per_packet = tcp_payload((bytes, packets)) as f64 / packets as f64;
    eprintln!("{packets} packets, {per_packet:.1} payload bytes each");
    assert!(per_packet > 900.0 && per_packet <= 988.0, "{per_packet:.0} payload bytes per packet");
}

#[test]
fn an_option_the_kernel_refuses_is_an_error_naming_it_and_its_value() {
    let Some(_one) = emu::testbed::exclusive() else { return };
    let a = addr::host(Side::Left, 0, false);
    let net = Network::create(&[emu::SpacePlan { label: "o".into(), addrs: vec![a], ..emu::SpacePlan::default() }]).unwrap();
    let open = |options: SocketOptions| Sockets::new(&net, vec![SocketHost { addr: a, space: 0, options }], 0);
    let good = SocketOptions { congestion: Some("reno".into()), mss: Some(1000), sndbuf: Some(65_536), rcvbuf: Some(65_536) };
    assert!(open(good).is_ok());
    let bad = [
        (SocketOptions { congestion: Some("no-such-cc".into()), ..Default::default() }, "TCP_CONGESTION no-such-cc"),
        (SocketOptions { mss: Some(10), ..Default::default() }, "TCP_MAXSEG 10"),
        (SocketOptions { sndbuf: Some(1 << 30), ..Default::default() }, "SO_SNDBUF 1073741824"),
        (SocketOptions { rcvbuf: Some(1 << 30), ..Default::default() }, "SO_RCVBUF 1073741824"),
    ];
    for (options, named) in bad {
        let e = open(options).err().unwrap_or_else(|| panic!("{named} accepted"));
        eprintln!("{e}");
        assert!(e.to_string().contains(named), "{e}");
    }
}
