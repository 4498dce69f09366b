//! Timer tokens and the slots they name. A token is `kind << 56 | slot`,
//! so an application's timers of several kinds share the transport's one
//! number; a slot holds what the timer is for, and freed slots are reused,
//! so memory follows the peak number waiting.

const KIND_SHIFT: u32 = 56;

/// The token of timer `slot` of `kind`.
pub(crate) fn token(kind: u64, slot: u64) -> u64 {
    kind << KIND_SHIFT | slot
}

/// A token's (kind, slot).
pub(crate) fn split(token: u64) -> (u64, u64) {
    (token >> KIND_SHIFT, token & ((1 << KIND_SHIFT) - 1))
}

/// Values by slot.
pub(crate) struct Slots<T> {
    items: Vec<Option<T>>,
    free: Vec<usize>,
}

impl<T> Default for Slots<T> {
    fn default() -> Self {
        Slots { items: Vec::new(), free: Vec::new() }
    }
}

impl<T> Slots<T> {
    /// Puts `x` in a free slot and returns it.
    pub(crate) fn put(&mut self, x: T) -> usize {
        match self.free.pop() {
            Some(i) => {
                self.items[i] = Some(x);
                i
            }
            None => {
                self.items.push(Some(x));
                self.items.len() - 1
            }
        }
    }

    /// Takes what `slot` holds, freeing it.
    pub(crate) fn take(&mut self, slot: usize) -> Option<T> {
        let x = self.items.get_mut(slot).and_then(Option::take);
        if x.is_some() {
            self.free.push(slot);
        }
        x
    }

    pub(crate) fn get(&self, slot: usize) -> Option<&T> {
        self.items.get(slot).and_then(Option::as_ref)
    }

    pub(crate) fn get_mut(&mut self, slot: usize) -> Option<&mut T> {
        self.items.get_mut(slot).and_then(Option::as_mut)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_and_slots_are_reused() {
        assert_eq!(split(token(7, 12345)), (7, 12345));
        let mut s = Slots::default();
        let (a, b) = (s.put("a"), s.put("b"));
        assert_eq!((a, b), (0, 1));
        assert_eq!((s.take(a), s.take(a)), (Some("a"), None));
        assert_eq!(s.put("c"), 0);
        assert_eq!(s.get_mut(1), Some(&mut "b"));
    }
}
