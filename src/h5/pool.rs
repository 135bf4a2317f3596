//! Byte buffers kept for reuse, per thread (session 30).
//!
//! A cold window — a reader opened, one query, the reader dropped — read its stored chunks,
//! its block index and its metadata blocks into fresh allocations and decoded its chunks
//! into fresh ones. When the reader was dropped, glibc gave the top of the heap back to the
//! kernel (its trim threshold is 128 KiB), and the next window's buffers were new pages
//! again: 13 page faults and two `brk` calls a point window, about half of its kernel time
//! (`perf stat -e page-faults` of `examples/query_profile … count`). A library must not set
//! the process's `mallopt` tunables, so it keeps its own buffers: the byte-range reader's
//! reads ([`Recycled`], `super::local`) and decoded chunks (`super::pure`, handed back by
//! `super::cached`) take a buffer from the pool of the thread they run on and give it back
//! to the pool of the thread that drops them. At most [`POOL_BYTES`] bytes are kept per
//! thread, by power-of-two size classes; a thread's buffers are freed when it ends.
#![forbid(unsafe_code)]

use std::cell::RefCell;

/// Bytes kept per thread at most; a larger buffer is not kept.
pub const POOL_BYTES: usize = 4 << 20;
/// Bytes kept per size class at most (a class keeps at least two buffers within
/// [`POOL_BYTES`]): a cold polygon window holds dozens of 4 KiB R-tree pieces and a few
/// 16 KiB chunks, and a pool of one kind must not crowd out the other.
const CLASS_BYTES: usize = 256 << 10;
/// The smallest buffer kept (`2^MIN_CLASS` bytes); smaller requests go to the allocator.
const MIN_CLASS: u32 = 12;
/// Size classes: buffers of at least `2^(MIN_CLASS + i)` bytes, up to [`POOL_BYTES`].
const CLASSES: usize = (POOL_BYTES.trailing_zeros() - MIN_CLASS + 1) as usize;

/// One thread's buffers, by size class, and their bytes.
struct Pool {
    classes: [Vec<Vec<u8>>; CLASSES],
    bytes: usize,
}

thread_local! {
    static POOL: RefCell<Pool> = const { RefCell::new(Pool { classes: [const { Vec::new() }; CLASSES], bytes: 0 }) };
}

#[cfg(test)]
thread_local! {
    /// Requests of a kept size that this thread's pool could not serve.
    static MISSES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Requests of a kept size that this thread's pool could not serve so far (tests).
#[cfg(test)]
pub fn misses() -> u64 {
    MISSES.with(|m| m.get())
}

/// An empty vector with room for `len` bytes: a kept buffer of `len`'s size class (`len`
/// rounded up to a power of two, so that requests of about one size — a dataset's stored
/// chunks differ by a few hundred bytes — share buffers), else a new one of that size.
pub fn take(len: usize) -> Vec<u8> {
    if !(1 << MIN_CLASS..=POOL_BYTES).contains(&len) {
        return Vec::with_capacity(len);
    }
    let c = len.next_power_of_two();
    let i = (c.trailing_zeros() - MIN_CLASS) as usize;
    let kept = POOL
        .try_with(|p| {
            let mut p = p.try_borrow_mut().ok()?;
            let b = p.classes[i].pop()?;
            p.bytes -= b.capacity();
            Some(b)
        })
        .ok()
        .flatten();
    kept.unwrap_or_else(|| {
        #[cfg(test)]
        MISSES.with(|m| m.set(m.get() + 1));
        Vec::with_capacity(c)
    })
}

/// Keep `b`'s allocation for a later [`take`] on this thread, when the pool has room;
/// otherwise free it.
pub fn give_back(mut b: Vec<u8>) {
    let cap = b.capacity();
    if !(1 << MIN_CLASS..=POOL_BYTES).contains(&cap) {
        return;
    }
    b.clear();
    // The class whose every request `b` can serve.
    let i = (usize::BITS - 1 - cap.leading_zeros() - MIN_CLASS) as usize;
    // A thread that is ending (its pool gone) or a pool in use frees the buffer.
    let _ = POOL.try_with(|p| {
        if let Ok(mut p) = p.try_borrow_mut() {
            let class: usize = p.classes[i].iter().map(Vec::capacity).sum();
            if p.bytes + cap <= POOL_BYTES && (class + cap <= CLASS_BYTES || p.classes[i].len() < 2) {
                p.bytes += cap;
                p.classes[i].push(b);
            }
        }
    });
}

/// Bytes whose allocation goes back to the pool when dropped (an owner for
/// `hdf5_reader::storage::StorageBuffer`).
pub struct Recycled(Vec<u8>);

impl Recycled {
    /// An empty buffer with room for `len` bytes ([`take`]).
    pub fn with_capacity(len: usize) -> Recycled {
        Recycled(take(len))
    }

    /// The vector, to fill.
    pub fn vec_mut(&mut self) -> &mut Vec<u8> {
        &mut self.0
    }
}

impl AsRef<[u8]> for Recycled {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Drop for Recycled {
    fn drop(&mut self) {
        give_back(std::mem::take(&mut self.0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept() -> (Vec<usize>, usize) {
        POOL.with(|p| {
            let p = p.borrow();
            (p.classes.iter().map(Vec::len).collect(), p.bytes)
        })
    }

    #[test]
    fn a_buffer_given_back_is_taken_again_and_the_pool_stays_bounded() {
        // A thread of its own: the pool is per thread.
        std::thread::spawn(|| {
            let b = take(5000);
            assert!(b.is_empty() && b.capacity() == 8192, "rounded to a power of two: {}", b.capacity());
            let p = b.as_ptr();
            give_back(b);
            assert_eq!(kept().1, 8192);
            // A request of the same class gets it back, emptied.
            let again = take(6000);
            assert_eq!((again.as_ptr(), again.len()), (p, 0));
            assert_eq!(kept().1, 0);
            // Small and too large buffers are not kept; neither are small requests served.
            give_back(Vec::with_capacity(4095));
            give_back(Vec::with_capacity(POOL_BYTES + 1));
            assert_eq!(kept().1, 0);
            assert_eq!(take(100).capacity(), 100);
            // A buffer of 12,000 bytes serves requests of 8 KiB or less, not of 16 KiB.
            give_back(Vec::with_capacity(12_000));
            assert_eq!(take(16_000).capacity(), 16_384);
            assert!(take(8192).capacity() == 12_000);
            // A class keeps at most CLASS_BYTES (4 KiB buffers: 64 of them) ...
            for _ in 0..100 {
                give_back(Vec::with_capacity(4096));
            }
            assert_eq!(kept().0[0], CLASS_BYTES / 4096);
            // ... and at least two buffers of a larger class, within POOL_BYTES in all.
            for _ in 0..3 {
                give_back(Vec::with_capacity(1 << 20));
            }
            assert_eq!(kept().0[8], 2);
            give_back(Vec::with_capacity(POOL_BYTES));
            let (classes, bytes) = kept();
            assert_eq!(classes[CLASSES - 1], 0, "past POOL_BYTES in all");
            assert_eq!(bytes, CLASS_BYTES + (2 << 20));
            drop(again);
        })
        .join()
        .unwrap();
    }
}
