//! A counting global allocator: the system allocator with atomic counters of the bytes live now
//! and the most live at once, so `bplab bench` can report what a broad phase really holds.
//!
//! The lab library does not install it; a binary does (`bplab` and the bench test do):
//!
//! ```
//! use broadphase_lab::alloc::{self, Counting};
//!
//! #[global_allocator]
//! static ALLOC: Counting = Counting;
//!
//! fn main() {
//!     let before = alloc::current();
//!     let block = vec![7u8; 10_000];
//!     assert!(alloc::active());
//!     assert!(alloc::current() >= before + 10_000);
//!     drop(block);
//! }
//! ```
//!
//! [`active`] then says the counters are live. The counters are process-wide: figures taken
//! around a piece of work count every thread's allocations, rayon's workers included.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// The system allocator, counting the bytes it hands out and takes back.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counting;

impl Counting {
    fn grew(size: usize) {
        let now = CURRENT.fetch_add(size, Ordering::Relaxed) + size;
        PEAK.fetch_max(now, Ordering::Relaxed);
        if !ACTIVE.load(Ordering::Relaxed) {
            ACTIVE.store(true, Ordering::Relaxed);
        }
    }

    fn shrank(size: usize) {
        CURRENT.fetch_sub(size, Ordering::Relaxed);
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so the
// memory handed out, its layout and its lifetime are exactly the system allocator's, which
// upholds `GlobalAlloc`'s contract. The counters are plain atomics: they never allocate
// (which would recurse) and never unwind. A failed allocation (null) is not counted.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is `System.alloc`'s.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            Self::grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            Self::grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, that is from `System`, with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        Self::shrank(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from `System` with `layout`; the caller guarantees `new_size`.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            // On failure the old block stays allocated and counted.
            Self::shrank(layout.size());
            Self::grew(new_size);
        }
        p
    }
}

/// Whether a [`Counting`] allocator is installed (it has counted an allocation).
pub fn active() -> bool {
    ACTIVE.load(Ordering::Relaxed)
}

/// The bytes allocated and not yet freed, all threads together.
pub fn current() -> usize {
    CURRENT.load(Ordering::Relaxed)
}

/// The most bytes live at once since the last [`reset_peak`].
pub fn peak() -> usize {
    PEAK.load(Ordering::Relaxed)
}

/// Starts a new peak from the bytes live now, and returns them.
pub fn reset_peak() -> usize {
    let now = current();
    PEAK.store(now, Ordering::Relaxed);
    now
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_allocation_is_counted_and_its_release_too() {
        // This test binary keeps the system allocator: the counters move only by the calls
        // made here (no other test uses `Counting`).
        let layout = Layout::from_size_align(4096, 16).unwrap();
        let before = current();
        // SAFETY: `layout` has a non-zero size; the block is freed with the same layout.
        unsafe {
            let p = Counting.alloc(layout);
            assert!(!p.is_null());
            assert_eq!(current(), before + 4096);
            assert!(peak() >= before + 4096);
            let q = Counting.realloc(p, layout, 8192);
            assert!(!q.is_null());
            assert_eq!(current(), before + 8192);
            Counting.dealloc(q, Layout::from_size_align(8192, 16).unwrap());
        }
        assert_eq!(current(), before);
        assert!(active());
        assert_eq!(reset_peak(), before);
        assert_eq!(peak(), before);
    }
}
