//! A hint to the processor that memory is about to be read.

/// Asks the processor to bring the cache lines of `*r` into cache, so that
/// reading them soon after finds them there: for what the next events will
/// touch, when thousands of hosts and connections take turns and most of
/// their state is out of cache. A hint only: nothing else changes; on other
/// processors than x86-64 it does nothing.
#[inline(always)]
#[allow(unsafe_code)]
pub fn hint<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let start = (r as *const T).cast::<i8>();
        for offset in (0..std::mem::size_of::<T>()).step_by(64) {
            // SAFETY: a prefetch is a hint: it never faults (whatever the
            // address), reads nothing the program sees and writes no
            // memory; the addresses are within `*r` besides.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(start.wrapping_add(offset)) }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}
