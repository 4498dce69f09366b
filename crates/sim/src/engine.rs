//! The event queue: events in (time, sequence number) order.
//!
//! The sequence number breaks ties in insertion order, so two events at the
//! same nanosecond always run in the same order and runs are deterministic.
//!
//! A run at scale holds hundreds of thousands of pending events, most of
//! them timers far ahead (retransmission timeouts, think times, session
//! starts), while the next events are a few packets' arrivals. One binary
//! heap of them all pays log(all pending) cache-missing steps per event.
//! Here events wait unsorted in a wheel of buckets (a calendar queue), and
//! those beyond the wheel's span in a second heap. When the events reached
//! run out, the next bucket is sorted, whole, and its events leave in turn;
//! those pushed into it after that (a packet crossing a short path) wait
//! beside it, sorted latest first: one goes in behind the events due before
//! it, which the vector's end holds, so it moves only those due sooner
//! still, and the next leaves from the end. Since every event reached is
//! earlier than every event outside, events leave in exactly the (time,
//! sequence) order one heap would give.
//!
//! Only the far heap keeps sequence numbers. A bucket's events are in
//! sequence order as pushed (the far heap hands over all of a bucket's
//! before any is pushed to it directly), so a stable sort by time orders
//! them; and an event pushed into a bucket already sorted is later in
//! sequence than all of them, so it goes first only if its time is
//! earlier. The wheel's
//! entries, which every event passes through, are a third smaller.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use units::Time;

/// A bucket spans 2^20 ns (about 1 ms): a few packet times at the rates
/// simulated, so a bucket holds few events while buckets move rarely.
const BUCKET_SHIFT: u32 = 20;
/// Buckets in the wheel: a span of 4.3 s, beyond most timers.
const BUCKETS: u64 = 4096;

/// What happens when an event fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ev {
    /// A packet's last bit reaches the far end of a path.
    Arrive { path: u32, pkt: u32 },
    /// A packet reaches an element of a path that must see it at its own time.
    Resume { path: u32, pkt: u32, stage: u32 },
    /// Elements of a path asked to be woken.
    Wake { path: u32 },
    /// A TCP endpoint's deadline (RTO, delayed ACK...) may have passed.
    Tcp { conn: u32 },
    /// An application timer.
    App { app: u32, token: u64 },
}

/// An event in a heap, with its sequence number.
#[derive(Clone, Copy, Debug)]
struct Entry {
    time: u64,
    seq: u64,
    ev: Ev,
}

/// An event in the wheel or a sorted bucket: the order of its vector stands
/// for its sequence number among equal times.
#[derive(Clone, Copy, Debug)]
struct Near {
    time: u64,
    ev: Ev,
}

impl From<Entry> for Near {
    #[inline]
    fn from(e: Entry) -> Near {
        Near { time: e.time, ev: e.ev }
    }
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    /// Reversed, so that the max-heap pops the earliest event.
    #[inline]
    fn cmp(&self, o: &Self) -> Ordering {
        (o.time, o.seq).cmp(&(self.time, self.seq))
    }
}

pub struct EventQueue {
    /// The events of the buckets already reached, sorted: the next is `run[head]`.
    run: Vec<Near>,
    head: usize,
    /// Events pushed into a bucket already reached, after it was sorted:
    /// latest first, and among equal times the last pushed first (the
    /// order of their pushes is their sequence), so the next is the last.
    late: Vec<Near>,
    /// Events of buckets `next .. next + BUCKETS`, bucket b at b % BUCKETS, unsorted.
    wheel: Vec<Vec<Near>>,
    in_wheel: usize,
    /// Events of later buckets.
    far: BinaryHeap<Entry>,
    /// The first bucket not yet moved into `run`.
    next: u64,
    seq: u64,
    /// Emptied storage, with its capacity, for the next buckets to fill.
    spare: Vec<Vec<Near>>,
    /// Room for sorting a bucket.
    scratch: Vec<Near>,
}

/// Buckets this close to the first unreached one take spare storage: they
/// fill with the packets in flight, while later ones hold a few timers.
const SPARE_REACH: u64 = 64;
/// Spare vectors kept at most: enough for every bucket in reach.
const SPARES: usize = SPARE_REACH as usize;

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            run: Vec::new(),
            head: 0,
            late: Vec::new(),
            wheel: (0..BUCKETS).map(|_| Vec::new()).collect(),
            in_wheel: 0,
            far: BinaryHeap::new(),
            next: 0,
            seq: 0,
            spare: Vec::new(),
            scratch: Vec::new(),
        }
    }
}

impl EventQueue {
    /// Inlined into its few callers, where most events go: the rest is calls.
    #[inline(always)]
    pub fn push(&mut self, at: Time, ev: Ev) {
        self.seq += 1;
        let b = at.0 >> BUCKET_SHIFT;
        // Most events go into the wheel: that path alone is inlined.
        if b.wrapping_sub(self.next) < BUCKETS {
            let v = &mut self.wheel[(b % BUCKETS) as usize];
            if v.len() == v.capacity() {
                self.make_room(b);
            }
            self.wheel[(b % BUCKETS) as usize].push(Near { time: at.0, ev });
            self.in_wheel += 1;
        } else {
            self.push_late_or_far(b, at, ev);
        }
    }

    /// Room for one more event in bucket `b`'s full vector.
    #[cold]
    #[inline(never)]
    fn make_room(&mut self, b: u64) {
        let v = &mut self.wheel[(b % BUCKETS) as usize];
        if b < self.next + SPARE_REACH {
            // A near bucket about to grow (most already hold a timer
            // or two when they come near) moves into spare storage
            // instead of growing by reallocation, step by step.
            if let Some(s) = self.spare.last_mut().filter(|s| s.capacity() > v.len()) {
                s.extend_from_slice(v);
                std::mem::swap(v, s);
                self.spare.pop();
                return;
            }
        }
        v.reserve(1);
    }

    /// An event before the wheel's first bucket (into the late events) or
    /// beyond its span (into the far heap).
    #[inline(never)]
    fn push_late_or_far(&mut self, b: u64, at: Time, ev: Ev) {
        if b < self.next {
            // Latest first: it leaves after every late event due at its
            // time or before (those were pushed before it).
            let e = Near { time: at.0, ev };
            if self.late.last().is_none_or(|l| l.time > at.0) {
                self.late.push(e);
            } else {
                let i = self.late.partition_point(|l| l.time > at.0);
                self.late.insert(i, e);
            }
        } else {
            self.far.push(Entry { time: at.0, seq: self.seq, ev });
        }
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Ev)> {
        if self.head == self.run.len() && self.late.is_empty() {
            self.refill();
        }
        // A late event is later in sequence than every one in `run`.
        let e = match (self.run.get(self.head), self.late.last()) {
            (Some(r), Some(l)) if l.time < r.time => self.late.pop(),
            (Some(r), _) => {
                self.head += 1;
                Some(*r)
            }
            (None, _) => self.late.pop(),
        };
        e.map(|e| (Time(e.time), e.ev))
    }

    /// The event `k` places after the next in the sorted bucket, if it has
    /// that many: a guess at what comes soon (a late event may come
    /// between, and the next bucket is not sorted yet), for prefetching.
    #[inline]
    pub fn ahead(&self, k: usize) -> Option<(Time, Ev)> {
        self.run.get(self.head + k).map(|e| (Time(e.time), e.ev))
    }

    /// Moves the next bucket that holds events into `run` (both `run` and
    /// `late` are exhausted), sorted.
    #[cold]
    fn refill(&mut self) {
        if self.in_wheel == 0 {
            let Some(first) = self.far.peek() else { return };
            self.next = self.next.max(first.time >> BUCKET_SHIFT);
            self.pull_far();
        }
        loop {
            let slot = (self.next % BUCKETS) as usize;
            let found = !self.wheel[slot].is_empty();
            if found {
                let mut bucket = std::mem::take(&mut self.wheel[slot]);
                self.in_wheel -= bucket.len();
                sort_bucket(&mut bucket, &mut self.scratch);
                let mut used = std::mem::replace(&mut self.run, bucket);
                self.head = 0;
                if self.spare.len() < SPARES {
                    used.clear();
                    self.spare.push(used);
                }
            }
            // The slot is empty now, and takes the span's new last bucket.
            self.next += 1;
            self.pull_far();
            if found {
                return;
            }
        }
    }

    /// Moves the far events that the wheel's span now reaches into it.
    #[inline]
    fn pull_far(&mut self) {
        while let Some(e) = self.far.peek() {
            let b = e.time >> BUCKET_SHIFT;
            if b >= self.next + BUCKETS {
                return;
            }
            let e = self.far.pop().expect("peeked");
            // Far events were beyond the span when pushed, and the span
            // moves a bucket at a time: none is before `next`.
            debug_assert!(b >= self.next);
            self.wheel[(b % BUCKETS) as usize].push(e.into());
            self.in_wheel += 1;
        }
    }

    pub fn len(&self) -> usize {
        self.run.len() - self.head + self.late.len() + self.in_wheel + self.far.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Buckets of at least this many events are sorted by radix.
const RADIX_MIN: usize = 64;
/// Bits of the time sorted per radix pass: three passes cover a bucket's span.
const DIGIT: u32 = 7;
const PASSES: usize = BUCKET_SHIFT.div_ceil(DIGIT) as usize;

/// Sorts a bucket's events into (time, sequence) order. A bucket's events
/// are in sequence order among equal times (pushes append, and the far
/// heap hands its events over in order), so a stable sort by the time
/// within the bucket does it: a radix sort, in a few linear passes, for
/// the hundreds of events a busy link puts in a bucket.
fn sort_bucket(v: &mut Vec<Near>, scratch: &mut Vec<Near>) {
    if v.len() < RADIX_MIN {
        v.sort_by_key(|e| e.time);
        return;
    }
    const R: usize = 1 << DIGIT;
    let digit = |t: u64, pass: usize| ((t >> (pass as u32 * DIGIT)) as usize) & (R - 1);
    let mut counts = [[0u32; R]; PASSES];
    for e in v.iter() {
        for (pass, c) in counts.iter_mut().enumerate() {
            c[digit(e.time, pass)] += 1;
        }
    }
    for (pass, c) in counts.iter_mut().enumerate() {
        let mut sum = 0;
        for n in c.iter_mut() {
            (*n, sum) = (sum, sum + *n);
        }
        scratch.clear();
        scratch.resize(v.len(), v[0]);
        for e in v.iter() {
            let at = &mut c[digit(e.time, pass)];
            scratch[*at as usize] = *e;
            *at += 1;
        }
        std::mem::swap(v, scratch);
    }
    debug_assert!(v.windows(2).all(|w| w[0].time <= w[1].time));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every event passes through the wheel: its entries stay 24 bytes.
    #[test]
    fn a_wheel_entry_is_24_bytes() {
        assert_eq!(std::mem::size_of::<Near>(), 24);
    }

    #[test]
    fn pops_in_time_then_insertion_order() {
        let mut q = EventQueue::default();
        q.push(Time(5), Ev::App { app: 0, token: 1 });
        q.push(Time(3), Ev::App { app: 0, token: 2 });
        q.push(Time(5), Ev::App { app: 0, token: 3 });
        q.push(Time(3), Ev::App { app: 0, token: 4 });
        let order: Vec<u64> = std::iter::from_fn(|| q.pop())
            .map(|(_, e)| match e {
                Ev::App { token, .. } => token,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(order, vec![2, 4, 1, 3]);
    }

    /// One binary heap of every event: the order the queue must keep.
    #[derive(Default)]
    struct OneHeap {
        heap: BinaryHeap<Entry>,
        seq: u64,
    }

    impl OneHeap {
        fn push(&mut self, at: Time, ev: Ev) {
            self.seq += 1;
            self.heap.push(Entry { time: at.0, seq: self.seq, ev });
        }
        fn pop(&mut self) -> Option<(Time, Ev)> {
            self.heap.pop().map(|e| (Time(e.time), e.ev))
        }
    }

    #[test]
    fn pops_as_one_heap_would_with_near_far_and_tied_events_pushed_while_popping() {
        let mut rng = units::Rng::stream(7, "engine/test");
        let (mut q, mut one) = (EventQueue::default(), OneHeap::default());
        let bucket = 1u64 << BUCKET_SHIFT;
        let mut now = 0u64;
        let mut token = 0u64;
        for round in 0..200_000u64 {
            // A few pushes ahead of now: exact ties, within the bucket, the
            // next buckets, around the end of the wheel's span, far beyond it.
            let pushes = if round % 3 == 0 { 0 } else { 1 + rng.below(3) };
            for _ in 0..pushes {
                let ahead = match rng.below(6) {
                    0 => 0,
                    1 => rng.below(bucket),
                    2 => rng.below(50 * bucket),
                    3 => BUCKETS * bucket - bucket + rng.below(3 * bucket),
                    4 => rng.below(20 * BUCKETS * bucket),
                    _ => (rng.below(4) + 1) * bucket,
                };
                token += 1;
                let ev = Ev::App { app: 0, token };
                q.push(Time(now + ahead), ev);
                one.push(Time(now + ahead), ev);
            }
            let (a, b) = (q.pop(), one.pop());
            assert_eq!(a, b, "round {round}");
            match a {
                Some((t, _)) => now = t.0,
                None => now += rng.below(10 * BUCKETS * bucket),
            }
            assert_eq!(q.len(), one.heap.len());
        }
        while let Some(b) = one.pop() {
            assert_eq!(q.pop(), Some(b));
        }
        assert_eq!(q.pop(), None);
    }

    /// Busy buckets (hundreds of events, many at the same nanosecond) are
    /// radix-sorted: their order is still one heap's.
    #[test]
    fn pops_as_one_heap_would_with_hundreds_of_events_per_bucket() {
        let mut rng = units::Rng::stream(8, "engine/test");
        let (mut q, mut one) = (EventQueue::default(), OneHeap::default());
        let bucket = 1u64 << BUCKET_SHIFT;
        let mut now = 0u64;
        let mut token = 0u64;
        for _ in 0..300 {
            for _ in 0..rng.below(800) {
                let ahead = match rng.below(4) {
                    0 => rng.below(16),
                    1 => rng.below(3 * bucket),
                    2 => 2 * bucket + rng.below(4) * 1000,
                    _ => rng.below(2 * BUCKETS * bucket),
                };
                token += 1;
                let ev = Ev::App { app: 0, token };
                q.push(Time(now + ahead), ev);
                one.push(Time(now + ahead), ev);
            }
            for _ in 0..rng.below(800) {
                let (a, b) = (q.pop(), one.pop());
                assert_eq!(a, b);
                if let Some((t, _)) = a {
                    now = t.0;
                }
            }
        }
        while let Some(b) = one.pop() {
            assert_eq!(q.pop(), Some(b));
        }
        assert_eq!(q.pop(), None);
    }
}
