//! The event queue: a binary heap ordered by (time, sequence number).
//!
//! The sequence number breaks ties in insertion order, so two events at the
//! same nanosecond always run in the same order and runs are deterministic.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use units::Time;

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

#[derive(Clone, Copy, Debug)]
struct Entry {
    time: u64,
    seq: u64,
    ev: Ev,
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

#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
}

impl EventQueue {
    #[inline]
    pub fn push(&mut self, at: Time, ev: Ev) {
        self.seq += 1;
        self.heap.push(Entry { time: at.0, seq: self.seq, ev });
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Ev)> {
        self.heap.pop().map(|e| (Time(e.time), e.ev))
    }

    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| Time(e.time))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
