//! The command's allocator: mimalloc for the commands that only read, glibc's `malloc` for
//! the ones that write (issue #33; docs/PERFORMANCE.md, "Session 32: the command's
//! allocator").
//!
//! A query parses object headers and builds small values by the thousand (about 900
//! allocations a cold point window, most inside `hdf5-reader`): mimalloc makes the query
//! processes of `marquet bench`'s files 0.79–0.91× their time. A convert gains nothing
//! from it and its peak grows by half (mimalloc keeps freed pages a while, a heap a
//! thread), so the writing commands keep glibc's allocator as `tune_malloc` sets it. The
//! choice is made in `main`, from the subcommand's name, before any thread starts; blocks
//! allocated before it (by the runtime, reading the arguments) were glibc's, and every
//! block is freed or resized by the allocator it came from (`mi_is_in_heap_region`), so the
//! moment of the choice does not matter for soundness.
//!
//! Hand-written because the `mimalloc` crate offers the allocator for a whole process
//! only; this is its `GlobalAlloc` with the choice in front. The library never sets an
//! allocator: a program that links it (and the Python extension, which compiles this
//! command without the `mimalloc` feature) keeps its own.

use std::alloc::{GlobalAlloc, Layout, System};
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};

use libmimalloc_sys as mi;

/// Whether new blocks come from mimalloc.
static MIMALLOC: AtomicBool = AtomicBool::new(false);

/// glibc's `malloc` until [`use_mimalloc`], mimalloc after it; frees go to the owner.
pub struct CommandAllocator;

#[global_allocator]
static GLOBAL: CommandAllocator = CommandAllocator;

/// From now on, new blocks come from mimalloc (called once, in `main`).
pub fn use_mimalloc() {
    MIMALLOC.store(true, Ordering::Relaxed);
}

/// Whether `p` is a block of mimalloc's (else glibc's). The switch only ever goes on, so
/// while it is off no block can be mimalloc's and the writing commands' frees skip the
/// lookup.
fn from_mimalloc(p: *mut u8) -> bool {
    // SAFETY: a lookup in mimalloc's own maps of its arenas and segments; any address may
    // be asked about, and glibc's blocks are never inside them.
    #[allow(unsafe_code)]
    let lookup = || unsafe { mi::mi_is_in_heap_region(p as *const c_void) };
    MIMALLOC.load(Ordering::Relaxed) && lookup()
}

// SAFETY: each method forwards to mimalloc's or glibc's implementation of the same
// contract (`System` is glibc's `malloc` here); a block is freed and resized by the
// allocator that gave it (`from_mimalloc`), and mimalloc's aligned calls honour `align`.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for CommandAllocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if MIMALLOC.load(Ordering::Relaxed) {
            // SAFETY: mimalloc's aligned allocation for a non-zero size (GlobalAlloc's
            // caller guarantees it).
            unsafe { mi::mi_malloc_aligned(layout.size(), layout.align()) as *mut u8 }
        } else {
            // SAFETY: the same contract, forwarded.
            unsafe { System.alloc(layout) }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if MIMALLOC.load(Ordering::Relaxed) {
            // SAFETY: as in `alloc`; the block comes zeroed.
            unsafe { mi::mi_zalloc_aligned(layout.size(), layout.align()) as *mut u8 }
        } else {
            // SAFETY: the same contract, forwarded.
            unsafe { System.alloc_zeroed(layout) }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if from_mimalloc(ptr) {
            // SAFETY: `ptr` is a live block of mimalloc's (the caller's contract).
            unsafe { mi::mi_free(ptr as *mut c_void) }
        } else {
            // SAFETY: `ptr` is a live block of glibc's with this layout.
            unsafe { System.dealloc(ptr, layout) }
        }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if from_mimalloc(ptr) {
            // SAFETY: a live block of mimalloc's, resized with its alignment kept.
            unsafe { mi::mi_realloc_aligned(ptr as *mut c_void, new_size, layout.align()) as *mut u8 }
        } else {
            // SAFETY: a live block of glibc's stays glibc's.
            unsafe { System.realloc(ptr, layout, new_size) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks made before the switch are freed and resized by glibc after it, blocks made
    /// after it by mimalloc; contents survive a resize either way. (The switch is the test
    /// binary's own: later blocks of its other tests come from mimalloc, freed by owner.)
    #[test]
    fn each_block_goes_back_to_its_allocator() {
        let a = CommandAllocator;
        let layout = Layout::from_size_align(100, 16).unwrap();
        // SAFETY: valid layouts; every block is written within its size and freed once.
        #[allow(unsafe_code)]
        unsafe {
            let before = a.alloc(layout);
            assert!(!from_mimalloc(before));
            before.write_bytes(7, 100);
            use_mimalloc();
            let mine = a.alloc(layout);
            assert!(from_mimalloc(mine));
            mine.write_bytes(9, 100);
            let before = a.realloc(before, layout, 5000);
            assert!(!from_mimalloc(before));
            assert_eq!(*before.add(99), 7);
            let mine = a.realloc(mine, layout, 5000);
            assert!(from_mimalloc(mine));
            assert_eq!(*mine.add(99), 9);
            let big = Layout::from_size_align(5000, 16).unwrap();
            a.dealloc(before, big);
            a.dealloc(mine, big);
            let z = a.alloc_zeroed(Layout::from_size_align(1 << 20, 64).unwrap());
            assert_eq!(z as usize % 64, 0);
            assert!((0..1 << 20).step_by(4096).all(|i| *z.add(i) == 0));
            a.dealloc(z, Layout::from_size_align(1 << 20, 64).unwrap());
        }
    }
}
