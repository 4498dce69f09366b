//! A path: one direction of a link (or of a host's access) as a sequence
//! of elements, offered packets in order.

use crate::bunching::Bunching;
use crate::delay::Delay;
use crate::element::{DropReason, Element, Release, Verdict};
use crate::loss::Loss;
use crate::packet::{Colour, Packet};
use crate::queue::{Queue, QueueStats};
use units::{Dur, Time};

/// One element of a path. The kinds undertow has are variants, so that a
/// packet's way through a path is a match per element, not a virtual call;
/// any other [`Element`] fits as `Custom`.
#[derive(Debug)]
pub enum Stage {
    Loss(Loss),
    Queue(Queue),
    Bunching(Bunching),
    Delay(Delay),
    Custom(CustomElement),
}

/// A boxed element of another kind.
pub struct CustomElement(pub Box<dyn Element + Send>);

impl std::fmt::Debug for CustomElement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CustomElement(..)")
    }
}

macro_rules! each_stage {
    ($s:expr, $e:ident => $body:expr) => {
        match $s {
            Stage::Loss($e) => $body,
            Stage::Queue($e) => $body,
            Stage::Bunching($e) => $body,
            Stage::Delay($e) => $body,
            Stage::Custom(CustomElement($e)) => $body,
        }
    };
}

impl Element for Stage {
    #[inline(always)]
    fn offer(&mut self, now: Time, pkt: &mut Packet) -> Verdict {
        each_stage!(self, e => e.offer(now, pkt))
    }
    fn poll_at(&self) -> Option<Time> {
        each_stage!(self, e => e.poll_at())
    }
    fn wake(&mut self, now: Time, out: &mut Vec<Release>) {
        each_stage!(self, e => e.wake(now, out))
    }
    #[inline]
    fn passive(&self) -> bool {
        match self {
            Stage::Loss(_) | Stage::Bunching(_) | Stage::Delay(_) => true,
            Stage::Queue(q) => q.passive(),
            Stage::Custom(CustomElement(e)) => e.passive(),
        }
    }
}

/// Where a packet offered to a path stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Its last bit reaches the path's far end at this instant.
    Arrive(Time),
    /// Dropped by an element it reached at this instant (later than the
    /// offer when the element is behind a queue).
    Dropped(DropReason, Time),
    /// An element holds it; it comes back from [`Path::wake`].
    Held,
    /// It reaches element `stage`, which must see it at its own time, at
    /// `at`: the engine resumes it there then ([`Path::resume`]).
    Resume { stage: u32, at: Time },
}

/// Drops by reason, and the first queue's counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PathStats {
    pub drops: [u64; DropReason::ALL.len()],
    pub queue: QueueStats,
    /// Per class (and colour, for drops), on a path that counts them ([`Path::count_classes`]).
    pub classes: Option<Box<ClassCounts>>,
}

/// The DiffServ classes a path tells apart in its counters (0 to 7: the
/// class selector; a higher class is counted as 7).
pub const CLASSES: usize = 8;

/// What entered a path per class, and per class and colour (the one the
/// elements it crossed on entering gave it: a marker's verdict, for a
/// path that opens with one); what it dropped per class, colour (the one
/// the packet had when dropped) and reason. All are counted at the
/// engine's time whatever the path's elements, so a run's counts do not
/// depend on which elements hold packets.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClassCounts {
    pub offered: [u64; CLASSES],
    pub coloured: [[u64; 3]; CLASSES],
    pub drops: [[[u64; DropReason::ALL.len()]; 3]; CLASSES],
}

impl ClassCounts {
    #[inline]
    fn offered(&mut self, p: &Packet) {
        let class = (p.class as usize).min(CLASSES - 1);
        self.offered[class] += 1;
        self.coloured[class][p.colour.index()] += 1;
    }

    #[inline]
    fn dropped(&mut self, p: &Packet, r: DropReason) {
        self.drops[(p.class as usize).min(CLASSES - 1)][p.colour.index()][r.index()] += 1;
    }

    /// Packets of `class` offered and coloured `colour` on entering.
    pub fn offered_with(&self, class: usize, colour: Colour) -> u64 {
        self.coloured[class][colour.index()]
    }

    /// Classes that carried anything, in order.
    pub fn used(&self) -> impl Iterator<Item = usize> + '_ {
        (0..CLASSES).filter(|&c| self.offered[c] > 0)
    }
}

impl PathStats {
    pub fn drops(&self, r: DropReason) -> u64 {
        self.drops[r.index()]
    }

    pub fn total_drops(&self) -> u64 {
        self.drops.iter().sum()
    }
}

/// How many elements a path holds inline: a host's access is a queue, or
/// a loss and a queue, before the fixed delay folded into its tail.
const INLINE: usize = 2;

/// The elements of one direction, in order.
///
/// A packet goes through as many elements as it can at once: a passive
/// element (one that decides from the order and times of its packets
/// alone) may be offered a packet at the instant the element before it
/// delivers it, ahead of the engine's clock, since a chain of passive
/// elements keeps their order. So a path of loss, drop-tail queue, shapers
/// and delay costs the engine one event per packet, as one link did. An
/// element that holds packets or needs waking sees each packet at the
/// engine's time: the path stops there ([`Outcome::Resume`]).
#[derive(Debug, Default)]
#[repr(C)]
pub struct Path {
    /// A fixed delay that ends the path, folded out of the elements: added
    /// to every arrival, it costs the hot path nothing (most links end so).
    tail: Dur,
    classes: Option<Box<ClassCounts>>,
    /// What a packet crossing the path seldom needs, apart.
    rare: Box<Rare>,
    /// The elements after the first [`INLINE`] (a shaper, bunching), in order.
    more: Box<[Stage]>,
    /// How many elements the path has: kept here, so that a packet through
    /// a path of one element reads no line of an empty second place.
    len: u32,
    /// The first elements, inline and last: a packet entering a path finds
    /// them at an address known from the path's own, so their misses
    /// overlap that of the path's fields instead of waiting for a pointer
    /// read from them. A path's owner that puts 16 bytes of its own before
    /// it ([`crate::fabric::PathSlot`]) starts the first element on a cache
    /// line, and each element fills two lines or fewer (the next starts
    /// one), with what a packet usually reads of it ([`Queue`], [`Loss`])
    /// in the first.
    pub(crate) head: [Option<Stage>; INLINE],
}

#[derive(Debug, Default)]
struct Rare {
    drops: [u64; DropReason::ALL.len()],
    /// What woken elements let go, reused.
    released: Vec<Release>,
}

impl Path {
    pub fn new(mut stages: Vec<Stage>) -> Path {
        let tail = match stages.last() {
            Some(Stage::Delay(Delay::Fixed(d))) => *d,
            _ => Dur::ZERO,
        };
        if tail > Dur::ZERO || matches!(stages.last(), Some(Stage::Delay(Delay::Fixed(_)))) {
            stages.pop();
        }
        let len = stages.len() as u32;
        let mut stages = stages.into_iter();
        let head = std::array::from_fn(|_| stages.next());
        Path { head, more: stages.collect(), len, tail, classes: None, rare: Box::default() }
    }

    /// Counts what enters per class and what is dropped per class and
    /// colour from now on (the fabric counts its bottleneck's).
    pub fn count_classes(&mut self) {
        self.classes.get_or_insert_with(Default::default);
    }

    pub fn stages(&self) -> impl Iterator<Item = &Stage> {
        self.head.iter().flatten().chain(self.more.iter())
    }

    /// Element `i`, if the path has that many.
    #[inline(always)]
    fn stage_mut(&mut self, i: usize) -> Option<&mut Stage> {
        if i >= self.len as usize {
            return None;
        }
        match self.head.get_mut(i) {
            Some(s) => s.as_mut(),
            None => self.more.get_mut(i - INLINE),
        }
    }

    /// A packet enters the path at `now`.
    #[inline]
    pub fn offer(&mut self, now: Time, pkt: &mut Packet) -> Outcome {
        let out = self.run(0, now, pkt);
        // Counted once the elements it crossed on entering (a marker) have
        // coloured it; a drop among them was counted as it happened.
        if let Some(c) = &mut self.classes {
            c.offered(pkt);
        }
        out
    }

    /// A packet that [`Outcome::Resume`]d reaches its element at `now`.
    pub fn resume(&mut self, now: Time, stage: u32, pkt: &mut Packet) -> Outcome {
        self.run(stage as usize, now, pkt)
    }

    #[inline(always)]
    fn run(&mut self, from: usize, now: Time, pkt: &mut Packet) -> Outcome {
        let mut t = now;
        let mut i = from;
        while let Some(st) = self.stage_mut(i) {
            if t > now && !st.passive() {
                return Outcome::Resume { stage: i as u32, at: t };
            }
            match st.offer(t, pkt) {
                Verdict::Deliver(at) => t = at,
                Verdict::Hold => return Outcome::Held,
                Verdict::Drop(r) => {
                    self.rare.drops[r.index()] += 1;
                    if let Some(c) = &mut self.classes {
                        c.dropped(pkt, r);
                    }
                    return Outcome::Dropped(r, t);
                }
            }
            i += 1;
        }
        Outcome::Arrive(t + self.tail)
    }

    /// When an element of the path next needs waking.
    pub fn poll_at(&self) -> Option<Time> {
        self.stages().filter_map(|s| s.poll_at()).min()
    }

    /// Wakes the elements due at `now`; what they let go continues down
    /// the path, and each packet's outcome is pushed to `out`.
    pub fn wake(&mut self, now: Time, out: &mut Vec<(Packet, Outcome)>) {
        let mut released = std::mem::take(&mut self.rare.released);
        let mut i = 0;
        while let Some(st) = self.stage_mut(i) {
            i += 1;
            if st.poll_at().is_none_or(|t| t > now) {
                continue;
            }
            st.wake(now, &mut released);
            for r in released.drain(..) {
                match r {
                    Release::Pass(mut p) => {
                        let o = self.run(i, now, &mut p);
                        out.push((p, o));
                    }
                    Release::Drop(p, reason) => {
                        self.rare.drops[reason.index()] += 1;
                        if let Some(c) = &mut self.classes {
                            c.dropped(&p, reason);
                        }
                        out.push((p, Outcome::Dropped(reason, now)));
                    }
                }
            }
        }
        self.rare.released = released;
    }

    /// Drops by reason, and the first queue's counters.
    pub fn stats(&self) -> PathStats {
        PathStats { drops: self.rare.drops, queue: self.queue().map(|q| q.stats()).unwrap_or_default(), classes: self.classes.clone() }
    }

    /// The first queue of the path, if it has one.
    pub fn queue(&self) -> Option<&Queue> {
        self.stages().find_map(|s| match s {
            Stage::Queue(q) => Some(q),
            _ => None,
        })
    }

    pub fn queue_mut(&mut self) -> Option<&mut Queue> {
        self.head.iter_mut().flatten().chain(self.more.iter_mut()).find_map(|s| match s {
            Stage::Queue(q) => Some(q),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    /// An element's kind's tag lives in a niche of the queue's first word,
    /// so the fields each kind orders first lead it, and an empty inline
    /// place costs no tag of its own either.
    #[test]
    fn an_element_is_its_queue_or_loss_untagged() {
        assert_eq!(std::mem::size_of::<super::Stage>(), std::mem::size_of::<super::Queue>());
        assert_eq!(std::mem::size_of::<Option<super::Stage>>(), std::mem::size_of::<super::Stage>());
        // Two cache lines, so that each inline element starts one.
        assert_eq!(std::mem::size_of::<super::Stage>(), 128);
    }
}
