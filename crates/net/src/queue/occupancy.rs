//! How full a queue was over a run: the most packets waiting at once, per
//! time bin, for a queue someone watches (the observed link's).

use units::{Dur, Time};

/// The most packets waiting (not in service) per time bin, and over the
/// run. The queue tells it of every change of its count, in time order
/// (each packet's admission and each start of service), so every bin is
/// exact: a bin in which nothing changed holds what the change before it
/// left.
#[derive(Clone, Debug)]
pub struct Occupancy {
    bin: Dur,
    most: Vec<u32>,
    /// The bin of the latest change, and the count it left.
    last: usize,
    held: u32,
    max: u32,
}

impl Occupancy {
    pub fn new(bin: Dur, duration: Dur) -> Occupancy {
        let bin = Dur(bin.0.max(1));
        let n = duration.0.div_ceil(bin.0) as usize;
        Occupancy { bin, most: vec![0; n], last: 0, held: 0, max: 0 }
    }

    /// From `t` on, `waiting` packets wait.
    #[inline]
    pub(crate) fn changed(&mut self, t: Time, waiting: usize) {
        let waiting = waiting.min(u32::MAX as usize) as u32;
        self.max = self.max.max(waiting);
        // Most changes fall in the bin of the one before.
        if t.0 < (self.last as u64 + 1) * self.bin.0 {
            if let Some(m) = self.most.get_mut(self.last) {
                *m = (*m).max(waiting);
            }
            self.held = waiting;
            return;
        }
        self.changed_in_a_later_bin(t, waiting);
    }

    #[cold]
    fn changed_in_a_later_bin(&mut self, t: Time, waiting: u32) {
        let i = (t.0 / self.bin.0) as usize;
        let n = self.most.len();
        // The bins since the last change held its count throughout; this
        // one held it until `t`.
        self.most[(self.last + 1).min(n)..i.min(n)].fill(self.held);
        if i < n {
            self.most[i] = if t.0 > i as u64 * self.bin.0 { self.held.max(waiting) } else { waiting };
        }
        self.last = i;
        self.held = waiting;
    }

    /// The most packets waiting at once in each bin.
    pub fn per_bin(&self) -> Vec<u32> {
        let mut most = self.most.clone();
        let n = most.len();
        most[(self.last + 1).min(n)..].fill(self.held);
        most
    }

    /// The most packets waiting at once over the run.
    pub fn max(&self) -> u32 {
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn each_bin_holds_the_most_packets_waiting_at_once_within_it() {
        let mut o = Occupancy::new(Dur(MS), Dur(8 * MS));
        o.changed(Time(MS + 10), 1);
        o.changed(Time(MS + 20), 2);
        o.changed(Time(MS + 30), 1);
        // Bins 2 and 3 hold the one left; bin 4 too, until it empties.
        o.changed(Time(4 * MS + 5), 0);
        // A change on a bin's first instant: the bin never held the count before.
        o.changed(Time(6 * MS), 3);
        assert_eq!(o.per_bin(), vec![0, 2, 1, 1, 1, 0, 3, 3]);
        assert_eq!(o.max(), 3);
    }

    #[test]
    fn changes_after_the_last_bin_are_counted_in_the_maximum_only() {
        let mut o = Occupancy::new(Dur(MS), Dur(2 * MS));
        o.changed(Time(MS / 2), 4);
        o.changed(Time(5 * MS), 9);
        assert_eq!(o.per_bin(), vec![4, 4]);
        assert_eq!(o.max(), 9);
    }
}
