//! Memory on huge pages.
//!
//! A run at scale reads its hosts' paths, connections and packets, and its
//! event queue's buckets, at random over hundreds of megabytes: with 4 KiB
//! pages nearly every such read also misses the processor's cache of
//! address translations, and the page walk that follows misses the data
//! caches too. Linux backs memory with 2 MiB pages where a program asks
//! (`madvise(MADV_HUGEPAGE)`, when transparent huge pages are set to
//! `madvise`, as they usually are, or `always`), which makes those walks
//! 512 times rarer. So every program the engine runs in allocates through
//! [`HugePages`]: the system's allocator, which then asks for huge pages
//! for every allocation of 2 MiB or more and, from the first such one on,
//! for its heap as it grows (where the small allocations lie). A run of a
//! few hosts, whose state stays in cache, makes no allocation that large
//! and is left as it was. A hint only: what a run computes does not
//! change; it costs memory, since a huge page is backed whole once any
//! byte of it is touched; elsewhere than on Linux with the GNU C library
//! it is the system's allocator alone.

use std::alloc::{GlobalAlloc, Layout, System};

/// The system allocator, asking for huge pages.
pub struct HugePages;

/// A huge page on x86-64, and the size from which an allocation asks for
/// huge pages itself.
const HUGE: usize = 2 << 20;

#[allow(unsafe_code)]
// SAFETY: every call is the system allocator's, with the caller's own
// arguments; what else happens only advises the system on memory it
// returned.
unsafe impl GlobalAlloc for HugePages {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        advise(p, layout.size());
        p
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        advise(p, layout.size());
        p
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        advise(p, new_size);
        p
    }
}

/// After the system allocated `len` bytes at `p`: advises huge pages for
/// them if they are that large, and, from the first allocation that large
/// on, for the heap if it grew. A program whose allocations all stay
/// smaller (a run of a few hosts) keeps its memory as the system gives it.
#[inline]
fn advise(p: *mut u8, len: usize) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        if len >= HUGE && !p.is_null() {
            gnu::advise_range(p as usize, p as usize + len);
            gnu::advise_heap();
        } else if gnu::at_scale() {
            gnu::advise_heap();
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = (p, len);
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
mod gnu {
    use super::HUGE;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// What the heap grows by at least, and the size up to which
    /// allocations come from it.
    const HEAP_STEP: usize = 16 * HUGE;

    /// The end of the heap already advised (0: not yet seen, no allocation
    /// of a huge page or more yet).
    static HEAP_ADVISED: AtomicUsize = AtomicUsize::new(0);

    /// An allocation of a huge page or more was made.
    #[inline]
    pub(super) fn at_scale() -> bool {
        HEAP_ADVISED.load(Ordering::Relaxed) != 0
    }

    /// Advises huge pages for what the heap grew by since the last call.
    /// An extension of the heap is a mapping of its own, which advice
    /// given before does not cover, and memory touched before the advice
    /// stays on small pages: so the heap is set to grow by [`HEAP_STEP`]
    /// at least, of which an allocation touches only its first pages
    /// before this call. Allocations up to that size are set to come from
    /// the heap too, rather than from mappings of their own: an array
    /// that grows by reallocation (the connections, the packets) is then
    /// copied into advised memory each time, instead of being remapped
    /// with the small pages it had. Threads racing here at most advise a
    /// range twice.
    #[cold]
    #[inline(never)]
    pub(super) fn advise_heap() {
        // SAFETY: `sbrk(0)` only reads the current end of the heap.
        let end = unsafe { libc::sbrk(0) } as usize;
        let done = HEAP_ADVISED.load(Ordering::Relaxed);
        if done == 0 {
            // SAFETY: settings of the system allocator, made outside it.
            unsafe {
                libc::mallopt(libc::M_TOP_PAD, HEAP_STEP as libc::c_int);
                libc::mallopt(libc::M_MMAP_THRESHOLD, HEAP_STEP as libc::c_int);
            }
            HEAP_ADVISED.store(end, Ordering::Relaxed);
        } else if end > done {
            advise_range(done, end);
            HEAP_ADVISED.store(end, Ordering::Relaxed);
        }
    }

    /// Advises huge pages for the whole huge pages within `[from, to)`.
    #[cold]
    #[inline(never)]
    pub(super) fn advise_range(from: usize, to: usize) {
        let (start, end) = (from.next_multiple_of(HUGE), to / HUGE * HUGE);
        if end > start {
            // SAFETY: the range lies within memory the system allocator
            // mapped (an allocation just made, or the heap below its end);
            // MADV_HUGEPAGE changes how it is backed, never its contents,
            // and where it fails (no transparent huge pages) nothing changes.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    /// The mapping holding `addr`, as /proc/self/smaps describes it.
    fn mapping_of(addr: usize) -> Option<String> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut found: Option<String> = None;
        for line in smaps.lines() {
            let range = line.split_whitespace().next().and_then(|r| r.split_once('-'));
            if let Some((a, b)) = range.and_then(|(a, b)| Some((usize::from_str_radix(a, 16).ok()?, usize::from_str_radix(b, 16).ok()?))) {
                if found.is_some() {
                    break;
                }
                if (a..b).contains(&addr) {
                    found = Some(String::new());
                }
            }
            if let Some(f) = &mut found {
                f.push_str(line);
                f.push('\n');
            }
        }
        found
    }

    /// A large array, as the engine allocates its paths and connections,
    /// lies in memory that may be backed by huge pages.
    #[test]
    fn a_large_allocation_may_take_huge_pages() {
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
        if thp.is_empty() || thp.contains("[never]") {
            println!("skipped: transparent huge pages are off here ({})", thp.trim());
            return;
        }
        let v = vec![1u8; 8 * super::HUGE];
        let middle = v.as_ptr() as usize + v.len() / 2;
        let m = mapping_of(middle).expect("the array's mapping in /proc/self/smaps");
        assert!(m.lines().any(|l| l.split_whitespace().collect::<Vec<_>>() == ["THPeligible:", "1"]), "{m}");
    }
}
