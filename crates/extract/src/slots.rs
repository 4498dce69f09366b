//! Connection and flow tables: entries in a vector, freed slots reused, so
//! an entry is named by a 4-byte index and memory follows the peak number
//! of live entries.

/// Puts `x` in a free slot of `slots` (or a new one) and returns its index.
#[inline]
pub(crate) fn place<T>(slots: &mut Vec<T>, free: &mut Vec<u32>, x: T) -> u32 {
    match free.pop() {
        Some(i) => {
            slots[i as usize] = x;
            i
        }
        None => {
            slots.push(x);
            (slots.len() - 1) as u32
        }
    }
}
