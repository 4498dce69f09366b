//! The dumbbell as paths and routes: where a packet goes after each path,
//! written once for both engines.
//!
//! A [`Fabric`] holds every path of a run (the bottleneck each way, every
//! host's access up and down, and a host's path beyond the observed link)
//! and the two routers between them. An engine hands it a packet when a
//! host sends one and each time the packet reaches the end of a path, and
//! gets back what to do next ([`Next`]): schedule its arrival at the end of
//! the next path, resume it at an element at its own time, wake a path
//! whose element holds it, count it dropped, or deliver it to a host. The
//! engine owns time, packet storage and I/O; the fabric owns the topology
//! and the order of paths a packet takes.
//!
//! Observed paths (the bottleneck, both ways) carry a monitor number: the
//! engine records what arrives at their end, and what they drop, in its
//! series and capture.
//!
//! Hosts of one side may share a line ([`LineSpec`]: a home's access link,
//! an office uplink) between their own access paths and their router: what
//! they send crosses its `up` path after their uplinks, what is sent to
//! them its `down` path before their downlinks.

use crate::element::DropReason;
use crate::packet::Packet;
use crate::path::{Outcome, Path};
use crate::spec::{PathSpec, SpecError};
use std::collections::HashMap;
use units::Time;

/// A host, as numbered by the fabric (in the order they were added).
pub type HostId = u32;

/// Left or right of the bottleneck. Forward traffic flows left to right.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Left,
    Right,
}

impl Side {
    pub fn other(self) -> Side {
        match self {
            Side::Left => Side::Right,
            Side::Right => Side::Left,
        }
    }

    fn router(self) -> u32 {
        match self {
            Side::Left => 0,
            Side::Right => 1,
        }
    }
}

/// Where the end of a path leads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeRef {
    Host(HostId),
    /// The left (0) or right (1) router.
    Router(u32),
    /// On to this path (a host's uplink into its line).
    Path(u32),
    /// On to the destination host's downlink (the end of a line's `down`).
    Downlink,
}

/// A line several hosts of one side share, as data: hosts that name the
/// same line (`name`, unique in a run) share one pair of paths.
#[derive(Clone, Debug, PartialEq)]
pub struct LineSpec {
    pub name: String,
    /// From the hosts' uplinks to their router, and from the router to
    /// their downlinks.
    pub up: PathSpec,
    pub down: PathSpec,
}

/// A line's paths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Line {
    pub side: Side,
    pub up: u32,
    pub down: u32,
}

/// A path with its wiring, on cache lines of its own: the wiring and the
/// path's own fields fill the first, and its first elements, inline, start
/// the next (see [`Path`]), so that a packet crossing one of many hosts'
/// paths finds each line it reads at an address known from the path's
/// number.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct PathSlot {
    pub to: NodeRef,
    /// The monitor of an observed path (the bottleneck: 0 forward, 1 back).
    pub monitor: Option<u8>,
    pub path: Path,
}

/// A host's paths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attachment {
    pub side: Side,
    pub uplink: u32,
    pub downlink: u32,
    /// The path what it sends takes after the observed link, if any.
    pub beyond: Option<u32>,
    /// Its uplink starts with the loss of what it sends.
    pub loses: bool,
    /// The DiffServ class of what it sends (`Packet::class`), stamped on
    /// its packets at each path they enter.
    pub class: u8,
    /// The line it shares, an index into `Fabric::lines`.
    pub line: Option<u32>,
}

/// What the engine does next with a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Its last bit reaches the end of `path` at `at`: hand it to
    /// [`Fabric::arrived`] then.
    Arrive { path: u32, at: Time },
    /// It reaches element `stage` of `path` at `at`: hand it to
    /// [`Fabric::resume`] then.
    Resume { path: u32, stage: u32, at: Time },
    /// An element of `path` holds it: wake the path at
    /// [`Fabric::poll_at`] ([`Fabric::wake`] returns it).
    Held { path: u32 },
    /// An element of `path` dropped it at `at`.
    Dropped { path: u32, reason: DropReason, at: Time },
    /// It reached `host`.
    Deliver { host: HostId },
}

/// Packets lost by hosts' own loss (`Attachment::loses`, beyond paths), as
/// swing virtual hosts lose what they send.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostLosses {
    /// Before the host's access link.
    pub before_link: u64,
    /// Beyond the observed link (the link carried the lost copies).
    pub after_link: u64,
}

pub const BOTTLENECK_FWD: u32 = 0;
pub const BOTTLENECK_REV: u32 = 1;

/// Every path of a dumbbell, and its routes.
#[derive(Debug)]
pub struct Fabric {
    pub paths: Vec<PathSlot>,
    /// What each path was built from, by path number.
    pub specs: Vec<PathSpec>,
    pub hosts: Vec<Attachment>,
    pub lines: Vec<Line>,
    /// Each line's index by its name.
    line_names: HashMap<String, u32>,
    /// Per router (left, right): the path towards each host.
    routes: [Vec<u32>; 2],
    seed: u64,
    pub losses: HostLosses,
    /// What a woken path's elements let go, reused.
    scratch: Vec<(Packet, Outcome)>,
}

impl Fabric {
    /// A dumbbell whose bottleneck is `bottleneck` [left to right, right to
    /// left], observed as monitors 0 and 1; random elements draw from
    /// streams of `seed`.
    pub fn dumbbell(bottleneck: &[PathSpec; 2], seed: u64) -> Result<Fabric, SpecError> {
        let mut f = Fabric {
            paths: Vec::new(),
            specs: Vec::new(),
            hosts: Vec::new(),
            lines: Vec::new(),
            line_names: HashMap::new(),
            routes: [Vec::new(), Vec::new()],
            seed,
            losses: HostLosses::default(),
            scratch: Vec::new(),
        };
        let fwd = f.add_path(bottleneck[0].clone(), NodeRef::Router(1))?;
        let rev = f.add_path(bottleneck[1].clone(), NodeRef::Router(0))?;
        debug_assert_eq!((fwd, rev), (BOTTLENECK_FWD, BOTTLENECK_REV));
        for (path, monitor) in [(fwd, 0), (rev, 1)] {
            f.paths[path as usize].monitor = Some(monitor);
            f.paths[path as usize].path.count_classes();
        }
        Ok(f)
    }

    fn add_path(&mut self, spec: PathSpec, to: NodeRef) -> Result<u32, SpecError> {
        let path = spec.build(self.seed)?;
        self.paths.push(PathSlot { to, monitor: None, path });
        self.specs.push(spec);
        Ok((self.paths.len() - 1) as u32)
    }

    /// Adds a host on `side` whose access is `up` and `down`, and whose
    /// packets take `beyond` after the observed link. Its number is the
    /// number of hosts before it.
    pub fn add_host(&mut self, side: Side, up: PathSpec, down: PathSpec, beyond: Option<PathSpec>, loses: bool) -> Result<HostId, SpecError> {
        let id = self.hosts.len() as HostId;
        let uplink = self.add_path(up, NodeRef::Router(side.router()))?;
        let downlink = self.add_path(down, NodeRef::Host(id))?;
        let beyond = match beyond {
            // On to the far side's router.
            Some(b) => Some(self.add_path(b, NodeRef::Router(side.other().router()))?),
            None => None,
        };
        self.hosts.push(Attachment { side, uplink, downlink, beyond, loses, class: 0, line: None });
        // The host's own router sends down its access link, the other across
        // the bottleneck towards the host's side.
        let across = if side == Side::Left { BOTTLENECK_REV } else { BOTTLENECK_FWD };
        self.routes[side.router() as usize].push(downlink);
        self.routes[side.other().router() as usize].push(across);
        Ok(id)
    }

    /// Puts `host` behind line `line` (made when the first host names it):
    /// what it sends crosses the line's `up` after its uplink, and its
    /// router sends what is for it down the line's `down`.
    pub fn join_line(&mut self, host: HostId, line: &LineSpec) -> Result<u32, SpecError> {
        let side = self.hosts[host as usize].side;
        let l = match self.line_names.get(&line.name) {
            Some(&l) => l,
            None => {
                let up = self.add_path(line.up.clone(), NodeRef::Router(side.router()))?;
                let down = self.add_path(line.down.clone(), NodeRef::Downlink)?;
                self.lines.push(Line { side, up, down });
                let l = (self.lines.len() - 1) as u32;
                self.line_names.insert(line.name.clone(), l);
                l
            }
        };
        let ln = self.lines[l as usize];
        if ln.side != side || self.hosts[host as usize].line.is_some() {
            return Err(SpecError::Line(line.name.clone()));
        }
        let h = &mut self.hosts[host as usize];
        h.line = Some(l);
        self.paths[h.uplink as usize].to = NodeRef::Path(ln.up);
        self.routes[side.router() as usize][host as usize] = ln.down;
        Ok(l)
    }

    /// What `host` sends carries DiffServ class `class` (0, best effort,
    /// unless set).
    pub fn set_class(&mut self, host: HostId, class: u8) {
        self.hosts[host as usize].class = class;
    }

    /// `host` sends a packet at `now`.
    #[inline]
    pub fn send(&mut self, now: Time, host: HostId, pkt: &mut Packet) -> Next {
        let h = self.hosts[host as usize];
        pkt.class = h.class;
        let next = self.offer(now, h.uplink, pkt);
        if h.loses && matches!(next, Next::Dropped { reason: DropReason::Loss, .. }) {
            self.losses.before_link += 1;
        }
        next
    }

    /// A packet from `src` to `dst` reached the end of `path` at `now`;
    /// `meta` gives what its next path's elements see of it (asked for only
    /// if it goes on). Also returns whether an element it was offered to
    /// marked it CE, for the engine to carry on the packet itself.
    #[inline]
    pub fn arrived(&mut self, now: Time, path: u32, src: HostId, dst: HostId, meta: impl FnOnce() -> Packet) -> (Next, bool) {
        let slot = &self.paths[path as usize];
        let (to, monitored) = (slot.to, slot.monitor.is_some());
        if let NodeRef::Host(host) = to {
            return (Next::Deliver { host }, false);
        }
        let pkt = &mut meta();
        pkt.class = self.hosts[src as usize].class;
        let next = match to {
            NodeRef::Path(on) => self.offer(now, on, pkt),
            NodeRef::Downlink => self.offer(now, self.hosts[dst as usize].downlink, pkt),
            NodeRef::Router(r) => self.route(now, r, monitored, (src, dst), pkt),
            NodeRef::Host(_) => unreachable!("delivered above"),
        };
        (next, pkt.ce)
    }

    /// The path a packet from `src` to `dst` that reached the end of `path`
    /// is offered to next, if it is not delivered to a host.
    #[inline]
    pub fn next_path(&self, path: u32, src: HostId, dst: HostId) -> Option<u32> {
        let slot = &self.paths[path as usize];
        match slot.to {
            NodeRef::Host(_) => None,
            NodeRef::Path(on) => Some(on),
            NodeRef::Downlink => Some(self.hosts[dst as usize].downlink),
            NodeRef::Router(r) => match (slot.monitor, self.hosts[src as usize].beyond) {
                (Some(_), Some(beyond)) => Some(beyond),
                _ => Some(self.routes[r as usize][dst as usize]),
            },
        }
    }

    /// A packet from `src` to `dst` at router `r`, having crossed the
    /// observed link if `monitored`.
    #[inline]
    fn route(&mut self, now: Time, r: u32, monitored: bool, (src, dst): (HostId, HostId), pkt: &mut Packet) -> Next {
        // Past the observed link, a packet takes its sender's path
        // beyond it, if it has one, before it is routed on.
        if monitored {
            if let Some(beyond) = self.hosts[src as usize].beyond {
                match self.paths[beyond as usize].path.offer(now, pkt) {
                    Outcome::Arrive(at) if at == now => {}
                    Outcome::Dropped(DropReason::Loss, at) => {
                        self.losses.after_link += 1;
                        return Next::Dropped { path: beyond, reason: DropReason::Loss, at };
                    }
                    o => return next(beyond, o),
                }
            }
        }
        let on = self.routes[r as usize][dst as usize];
        self.offer(now, on, pkt)
    }

    #[inline]
    fn offer(&mut self, now: Time, path: u32, pkt: &mut Packet) -> Next {
        let o = self.paths[path as usize].path.offer(now, pkt);
        next(path, o)
    }

    /// A packet from `src` that was to resume at element `stage` of `path`
    /// reached it.
    pub fn resume(&mut self, now: Time, path: u32, stage: u32, src: HostId, pkt: &mut Packet) -> Next {
        pkt.class = self.hosts[src as usize].class;
        let o = self.paths[path as usize].path.resume(now, stage, pkt);
        next(path, o)
    }

    /// When an element of `path` next needs waking.
    pub fn poll_at(&self, path: u32) -> Option<Time> {
        self.paths[path as usize].path.poll_at()
    }

    /// Wakes `path`'s elements due at `now`; each packet they let go or
    /// drop is pushed to `out` with what comes next for it.
    pub fn wake(&mut self, now: Time, path: u32, out: &mut Vec<(Packet, Next)>) {
        self.paths[path as usize].path.wake(now, &mut self.scratch);
        out.extend(self.scratch.drain(..).map(|(p, o)| (p, next(path, o))));
    }

    /// The seed its random elements draw from.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The path a host sends into.
    pub fn uplink(&self, host: HostId) -> u32 {
        self.hosts[host as usize].uplink
    }
}

fn next(path: u32, o: Outcome) -> Next {
    match o {
        Outcome::Arrive(at) => Next::Arrive { path, at },
        Outcome::Dropped(reason, at) => Next::Dropped { path, reason, at },
        Outcome::Held => Next::Held { path },
        Outcome::Resume { stage, at } => Next::Resume { path, stage, at },
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_path_slots_wiring_and_fields_fill_its_first_line_and_its_first_element_starts_the_next() {
        let first = std::mem::offset_of!(super::PathSlot, path) + std::mem::offset_of!(super::Path, head);
        assert_eq!(first, 64);
        assert_eq!(std::mem::align_of::<super::PathSlot>(), 64);
        // Each inline element two lines, the second starting the fourth.
        assert_eq!(std::mem::size_of::<super::PathSlot>(), 64 + 2 * 128);
    }
}
