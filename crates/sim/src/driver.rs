//! The event loop, and the transport seen by applications.

use crate::build::Built;
use crate::engine::Ev;
use crate::world::World;
use traffic::{App, ConnId, Event, HostId, Transport};
use units::Time;

/// The world as one application sees it.
struct Ctx<'a> {
    world: &'a mut World,
    app: u32,
}

impl Transport for Ctx<'_> {
    fn now(&self) -> Time {
        self.world.now
    }
    fn listen(&mut self, host: HostId, port: u16) {
        self.world.listen(self.app, host, port)
    }
    fn connect(&mut self, from: HostId, to: HostId, port: u16) -> ConnId {
        self.world.connect(self.app, from, to, port)
    }
    fn write(&mut self, conn: ConnId, bytes: u64) -> u64 {
        self.world.write(conn, bytes)
    }
    fn send_space(&self, conn: ConnId) -> u64 {
        self.world.send_space(conn)
    }
    fn write_forever(&mut self, conn: ConnId) {
        self.world.write_forever(conn)
    }
    fn mark(&mut self, conn: ConnId, msg: u64) {
        self.world.mark(conn, msg)
    }
    fn close(&mut self, conn: ConnId) {
        self.world.close(conn)
    }
    fn abort(&mut self, conn: ConnId) {
        self.world.abort(conn)
    }
    fn bind_udp(&mut self, host: HostId, port: u16) {
        self.world.bind_udp(self.app, host, port)
    }
    fn send_udp(&mut self, from: HostId, src_port: u16, to: HostId, dst_port: u16, payload: u32) {
        self.world.send_udp(from, src_port, to, dst_port, payload)
    }
    fn set_timer(&mut self, at: Time, token: u64) {
        self.world.set_timer(self.app, at, token)
    }
}

/// Why a run stopped before its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cancelled;

/// How many events ahead of the one run the world prefetches what an event
/// reads first, and then (from that) what it reads next: far enough that
/// the memory arrives in time, near enough that it is still in cache when
/// used.
const PREFETCH_AHEAD: usize = 3;
const PREFETCH_NEXT_AHEAD: usize = 1;
/// Runs with fewer paths than this are not prefetched for: their hosts'
/// state stays in cache, and the hints would only cost instructions.
const PREFETCH_MIN_PATHS: usize = 4096;

/// Starts the applications and runs until `end`. `progress` is called now
/// and then with the simulated time reached; returning false stops the run.
pub fn run(b: &mut Built, end: Time, progress: &mut dyn FnMut(Time) -> bool) -> Result<(), Cancelled> {
    let Built { world, apps, .. } = b;
    for (i, app) in apps.iter_mut().enumerate() {
        app.start(&mut Ctx { world, app: i as u32 });
    }
    deliver(world, apps);
    let mut last_report = std::time::Instant::now();
    let prefetch = world.fabric.paths.len() >= PREFETCH_MIN_PATHS;
    while let Some((t, ev)) = world.events.pop() {
        if t > end {
            break;
        }
        world.now = t;
        world.counters.events += 1;
        if prefetch {
            if let Some((_, soon)) = world.events.ahead(PREFETCH_AHEAD) {
                world.prefetch(soon);
            }
            if let Some((at, soon)) = world.events.ahead(PREFETCH_NEXT_AHEAD) {
                world.prefetch_next(at, soon);
            }
        }
        match ev {
            Ev::Arrive { path, pkt } => world.arrive(path, pkt),
            Ev::Resume { path, pkt, stage } => world.resume(path, pkt, stage),
            Ev::Wake { path } => world.wake(path),
            Ev::Tcp { conn } => world.tcp_timer(conn),
            Ev::App { app, token } => world.pending.push_back((app, Event::Timer(token))),
        }
        if !world.pending.is_empty() {
            deliver(world, apps);
        }
        // The wall clock is read only to pace progress reports.
        if world.counters.events & 0xffff == 0 && last_report.elapsed().as_millis() >= 200 {
            last_report = std::time::Instant::now();
            if !progress(t) {
                return Err(Cancelled);
            }
        }
    }
    world.now = end;
    progress(end);
    Ok(())
}

fn deliver(world: &mut World, apps: &mut [Box<dyn App>]) {
    while let Some((app, ev)) = world.pending.pop_front() {
        apps[app as usize].on_event(ev, &mut Ctx { world, app });
    }
}
