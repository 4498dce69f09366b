//! An optional instant, span or count in 8 bytes.

use crate::{Dur, Time};
use std::fmt;
use std::marker::PhantomData;

/// A value held as its 64 bits.
pub trait Bits: Copy {
    fn to_bits(self) -> u64;
    fn from_bits(b: u64) -> Self;
}

impl Bits for Time {
    fn to_bits(self) -> u64 {
        self.0
    }
    fn from_bits(b: u64) -> Self {
        Time(b)
    }
}

impl Bits for Dur {
    fn to_bits(self) -> u64 {
        self.0
    }
    fn from_bits(b: u64) -> Self {
        Dur(b)
    }
}

impl Bits for u64 {
    fn to_bits(self) -> u64 {
        self
    }
    fn from_bits(b: u64) -> Self {
        b
    }
}

/// `Option<T>` in the 8 bytes of `T` instead of 16: `u64::MAX` stands for
/// none. For state kept per connection, where the difference is much of an
/// idle connection's memory; only for values that never reach `u64::MAX`
/// (an instant 584 years into a run, a sequence number past 2^64).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Opt<T>(u64, PhantomData<T>);

impl<T: Bits> Opt<T> {
    pub const NONE: Opt<T> = Opt(u64::MAX, PhantomData);

    #[inline]
    pub fn some(v: T) -> Opt<T> {
        let b = v.to_bits();
        debug_assert_ne!(b, u64::MAX, "an Opt cannot hold u64::MAX");
        Opt(b, PhantomData)
    }

    #[inline]
    pub fn get(self) -> Option<T> {
        (self.0 != u64::MAX).then(|| T::from_bits(self.0))
    }

    #[inline]
    pub fn is_some(self) -> bool {
        self.0 != u64::MAX
    }

    #[inline]
    pub fn is_none(self) -> bool {
        self.0 == u64::MAX
    }

    #[inline]
    pub fn set(&mut self, v: Option<T>) {
        *self = v.into();
    }

    #[inline]
    pub fn take(&mut self) -> Option<T> {
        std::mem::replace(self, Opt::NONE).get()
    }
}

impl<T: Bits> Default for Opt<T> {
    fn default() -> Self {
        Opt::NONE
    }
}

impl<T: Bits> From<Option<T>> for Opt<T> {
    #[inline]
    fn from(v: Option<T>) -> Self {
        v.map_or(Opt::NONE, Opt::some)
    }
}

impl<T: Bits + fmt::Debug> fmt::Debug for Opt<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.get().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_what_an_option_holds_in_eight_bytes() {
        assert_eq!(std::mem::size_of::<Opt<Time>>(), 8);
        for v in [None, Some(Time::ZERO), Some(Time(7)), Some(Time(u64::MAX - 1))] {
            let mut o = Opt::from(v);
            assert_eq!((o.get(), o.is_some(), o.is_none()), (v, v.is_some(), v.is_none()));
            assert_eq!(o.take(), v);
            assert_eq!(o, Opt::NONE);
        }
        assert_eq!(Opt::<Dur>::default().get(), None);
    }
}
