//! A local file as `hdf5-reader`'s byte source, read into buffers that are not zeroed first.
//!
//! `hdf5_reader::storage::FileStorage` reads each range into `vec![0; len]`: the zeroing
//! is a write of every byte the read then writes again. In a cold window it was about 5 %
//! of the instructions (callgrind of 40 point windows opened afresh, session 23: 4.7 M of
//! 104 M in `calloc`), for the metadata blocks and every stored chunk. Here `pread(2)`
//! writes straight into the vector's spare capacity, and the length is set to what it
//! wrote. No crate offers a positioned read into uninitialised memory on stable Rust
//! (`std::io::BorrowedBuf` is unstable; `FileExt::read_at` wants an initialised slice), so
//! this is the one `unsafe` block, kept in the shim.
//!
//! Small reads — object headers, heaps, B-tree nodes: the open of a table makes about forty
//! of 4 to 500 bytes, most within the file's first few KiB — are served from aligned
//! blocks of [`BLOCK`] bytes, each read once and kept (at most [`MAX_BLOCKS`]): a cold
//! one-window query made 45 `pread` calls, a syscall each, for what a few blocks hold.
//!
//! Reads land in buffers of [`super::pool`], which go back to it when dropped.
#![allow(unsafe_code)]

use std::collections::HashMap;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::sync::{Arc, Mutex};

use hdf5_reader::error::{Error, Result};
use hdf5_reader::storage::{Storage, StorageBuffer};

use super::pool::Recycled;

/// Bytes of a block of small reads (see the module documentation); a read of at most half
/// a block that lies within one is served from it.
pub const BLOCK: u64 = 8 << 10;
/// Blocks kept at most (4 MiB); when full, the kept blocks are dropped.
pub const MAX_BLOCKS: usize = 512;

/// A read-only local file; reads may run on many threads at once (`pread` keeps no offset).
pub struct LocalStorage {
    file: File,
    len: u64,
    /// Blocks read for small reads, by block number.
    blocks: Mutex<HashMap<u64, Arc<Recycled>>>,
}

impl LocalStorage {
    /// The file as it is now: its length is read once, as `FileStorage` does.
    pub fn new(file: File) -> std::io::Result<LocalStorage> {
        let len = file.metadata()?.len();
        Ok(LocalStorage { file, len, blocks: Mutex::new(HashMap::new()) })
    }

    /// Block `b` (the file's bytes from `b · BLOCK`, shorter at the end of the file), read
    /// at the first call.
    fn block(&self, b: u64) -> Result<Arc<Recycled>> {
        let lock = || self.blocks.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(d) = lock().get(&b) {
            return Ok(d.clone());
        }
        let start = b * BLOCK;
        let d = Arc::new(self.pread(start, BLOCK.min(self.len - start) as usize)?);
        let mut m = lock();
        if m.len() >= MAX_BLOCKS {
            m.clear();
        }
        m.insert(b, d.clone());
        Ok(d)
    }

    /// `len` bytes at `offset`, which the caller has checked lie within the file.
    fn pread(&self, offset: u64, len: usize) -> Result<Recycled> {
        let mut r = Recycled::with_capacity(len);
        let buf = r.vec_mut();
        let mut done = 0usize;
        while done < len {
            let at = libc::off_t::try_from(offset + done as u64).map_err(|_| Error::OffsetOutOfBounds(offset))?;
            // SAFETY: the destination is the vector's allocation from `done` on, of
            // `len - done` bytes, within its capacity of at least `len`; the descriptor is open for
            // as long as `self` is.
            let n = unsafe { libc::pread(self.file.as_raw_fd(), buf.as_mut_ptr().add(done).cast(), len - done, at) };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(Error::Io(e));
            }
            if n == 0 {
                // The file shrank since the open.
                return Err(Error::UnexpectedEof { offset, needed: len as u64, available: done as u64 });
            }
            done += n as usize;
        }
        // SAFETY: `pread` wrote the first `len` bytes (the loop ends only when `done` is
        // `len`).
        unsafe { buf.set_len(len) };
        Ok(r)
    }
}

impl Storage for LocalStorage {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_range(&self, offset: u64, len: usize) -> Result<StorageBuffer> {
        let end = u64::try_from(len).ok().and_then(|n| offset.checked_add(n)).ok_or(Error::OffsetOutOfBounds(offset))?;
        if end > self.len {
            return Err(Error::UnexpectedEof { offset, needed: len as u64, available: self.len.saturating_sub(offset) });
        }
        // The range lies within the length read at the open, so `len` is bounded by the
        // file's size: no allocation beyond what the file holds.
        let b = offset / BLOCK;
        if len > 0 && len as u64 <= BLOCK / 2 && (end - 1) / BLOCK == b {
            let owner: Arc<dyn AsRef<[u8]> + Send + Sync> = self.block(b)?;
            return StorageBuffer::from_shared_owner(owner, (offset - b * BLOCK) as usize, len);
        }
        let owner: Arc<dyn AsRef<[u8]> + Send + Sync> = Arc::new(self.pread(offset, len)?);
        StorageBuffer::from_shared_owner(owner, 0, len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_exact_ranges_and_refuses_what_lies_past_the_end() {
        let dir = std::env::temp_dir().join(format!("marquet-local-storage-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("f.bin");
        let bytes: Vec<u8> = (0..100_000u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
        std::fs::write(&p, &bytes).unwrap();
        let s = LocalStorage::new(File::open(&p).unwrap()).unwrap();
        assert_eq!(s.len(), 100_000);
        let b = BLOCK as usize;
        // Small reads within a block, across a block boundary, at the file's last (short)
        // block, of exactly half a block, and large ones; each twice (the second from a kept
        // block).
        let cases = [(0u64, 0usize), (0, 1), (17, 4096), (99_999, 1), (0, 100_000), (50_000, 50_000), (b as u64 - 3, 6), (b as u64, b / 2), (b as u64 + 1, b / 2), (3 * b as u64 - 100, 100), (99_990, 10), (12 * b as u64, 100_000 - 12 * b)];
        for (off, len) in cases.into_iter().chain(cases) {
            let r = s.read_range(off, len).unwrap();
            assert_eq!(&r[..], &bytes[off as usize..off as usize + len], "{off} {len}");
        }
        for (off, len) in [(99_999u64, 2usize), (100_001, 0), (u64::MAX, 1), (0, usize::MAX)] {
            assert!(s.read_range(off, len).is_err(), "{off} {len}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
