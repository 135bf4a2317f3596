//! Raw chunk I/O (`H5Dread_chunk` / `H5Dwrite_chunk`), chunk locations, and object identity for caches.
#![allow(unsafe_code)]

use std::os::raw::{c_uint, c_void};

use hdf5_sys::h5::hsize_t;
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5p::H5P_DEFAULT;
use hdf5_sys::{h5d, h5o};

use crate::error::{MarquetError, Result};

use super::*;

/// Where a stored chunk is: its filter mask and byte size, or `None` when unallocated.
pub fn chunk_info(ds: hid_t, offset: u64, path: &str) -> Result<Option<(u32, u64)>> {
    Ok(chunk_location(ds, offset, path)?.map(|(mask, _, size)| (mask, size)))
}

/// Where a stored chunk is: its filter mask, file address and byte size, or `None` when
/// unallocated.
///
/// HDF5's `H5Dget_chunk_info_by_coord` walks the dataset's whole chunk index on every call
/// (to find the filter mask), so reading a dataset of n chunks chunk by chunk cost O(n²)
/// (issue #38: `--values-chunk-bytes 100` made `validate` of 43k rows take minutes). With
/// HDF5 ≥ 1.14 the index is walked once by `H5Dchunk_iter` into a table kept per thread,
/// valid while this process writes nothing (the write generation of `h5`) for that open of
/// that dataset at that extent; other processes' writes are not seen by an open file anyway
/// (no SWMR). Older HDF5 asks per chunk.
pub fn chunk_location(ds: hid_t, offset: u64, path: &str) -> Result<Option<(u32, u64, u64)>> {
    Ok(chunk_place(ds, offset, path)?.0)
}

/// A stored chunk's filter mask, file address and byte size.
pub type ChunkLocation = (u32, u64, u64);

/// [`chunk_location`], and the [`ByOffset`] source its stored bytes can be read from.
pub fn chunk_place(ds: hid_t, offset: u64, path: &str) -> Result<(Option<ChunkLocation>, Option<ByOffset>)> {
    #[cfg(hdf5_1_14)]
    if let Some(t) = table::get(ds, path)? {
        return Ok((t.find(offset), t.by_offset));
    }
    Ok((chunk_location_by_coord(ds, offset, path)?, None))
}

/// A file whose chunks are read by file offset, without HDF5 (issue #33: `H5Dread_chunk`
/// descends the chunk index again for every chunk, although the chunk table already holds
/// its address): the descriptor of a file HDF5 opened read-only with its default (sec2)
/// driver and no user block. Its chunk addresses are then byte offsets in the file, and no
/// write of this process can be waiting in HDF5's caches (a process cannot open a file for
/// writing while it holds it open read-only). Other processes' writes are not seen by an
/// open file anyway (no SWMR). Valid while the dataset it was found for is open.
#[derive(Clone, Copy, Debug)]
pub struct ByOffset(i32);

impl ByOffset {
    /// The source of the chunks of the file that object `id` lies in, when the file
    /// qualifies (see [`ByOffset`]).
    pub(crate) fn of(id: hid_t) -> Option<ByOffset> {
        let (fid, fd) = sec2_fd(id)?;
        if opened_for_writing(&fid) {
            return None;
        }
        let no_user_block = locked(|| unsafe {
            let fcpl = hdf5_sys::h5f::H5Fget_create_plist(fid.0);
            if fcpl < 0 {
                return false;
            }
            let fcpl = Hid(fcpl);
            let mut size: hsize_t = 0;
            hdf5_sys::h5p::H5Pget_userblock(fcpl.0, &mut size) >= 0 && size == 0
        });
        no_user_block.then_some(ByOffset(fd))
    }

    /// A descriptor of its own for the same open file (close-on-exec), e.g. for the
    /// byte-range parser (`super::pure::PureFile::of_object`).
    pub(crate) fn dup(self) -> std::io::Result<std::fs::File> {
        use std::os::fd::FromRawFd;
        // SAFETY: fcntl on a descriptor HDF5 holds open; the new descriptor is owned by the
        // returned File alone.
        let fd = unsafe { libc::fcntl(self.0, libc::F_DUPFD_CLOEXEC, 0) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(unsafe { std::fs::File::from_raw_fd(fd) })
    }

    /// Read the stored chunk at file address `addr` into `buf` (its stored size long).
    fn read(self, addr: u64, buf: &mut [u8], path: &str, offset: u64) -> Result<()> {
        let len = buf.len();
        let past_end = || MarquetError::spec(path, "HDF5 chunk", format!("chunk at element {offset} lies past the end of the file (address {addr}, {len} bytes)"));
        let mut done = 0;
        while done < buf.len() {
            let at = addr.checked_add(done as u64).and_then(|a| libc::off_t::try_from(a).ok()).ok_or_else(past_end)?;
            let rest = &mut buf[done..];
            // SAFETY: pread into `rest`, which is `rest.len()` bytes of writable memory, on the
            // descriptor of a file open while the caller's dataset is.
            let n = unsafe { libc::pread(self.0, rest.as_mut_ptr() as *mut c_void, rest.len(), at) };
            match n {
                0 => return Err(past_end()),
                n if n > 0 => done += n as usize,
                _ => {
                    let e = std::io::Error::last_os_error();
                    if e.kind() != std::io::ErrorKind::Interrupted {
                        return Err(MarquetError::spec(path, "HDF5 chunk", format!("chunk at element {offset}: {e}")));
                    }
                }
            }
        }
        count(READ_BY_OFFSET);
        Ok(())
    }
}

thread_local! {
    /// This thread's counts for I/O-pattern tests: [`chunk_index_walks`] and
    /// [`chunks_read_by_offset`].
    static COUNTS: std::cell::Cell<[u64; 2]> = const { std::cell::Cell::new([0; 2]) };
}
const WALKS: usize = 0;
const READ_BY_OFFSET: usize = 1;

fn count(k: usize) {
    COUNTS.with(|c| {
        let mut v = c.get();
        v[k] += 1;
        c.set(v);
    });
}

fn counted(k: usize) -> u64 {
    COUNTS.with(|c| c.get()[k])
}

/// How many chunks this thread has read by file offset ([`ByOffset`]) so far, for tests
/// that must know which path read.
pub fn chunks_read_by_offset() -> u64 {
    counted(READ_BY_OFFSET)
}

/// Read the stored bytes of the chunk at element `offset` of `ds`, located at `loc`
/// (filter mask, address, size: from [`chunk_place`] / [`chunk_locations`]), into `buf`
/// (`loc`'s size long), returning the filter mask: by file offset when `by` is given,
/// else `H5Dread_chunk`.
pub fn chunk_read_located(ds: hid_t, offset: u64, loc: ChunkLocation, by: Option<ByOffset>, path: &str, buf: &mut [u8]) -> Result<u32> {
    match by {
        Some(f) => f.read(loc.1, buf, path, offset).map(|_| loc.0),
        None => chunk_read_raw_to(ds, offset, path, buf),
    }
}

/// [`chunk_location`] of each chunk at element offsets `offsets`, the dataset's chunk table
/// looked up once (a large read asks for many chunks: asking one by one cost a
/// `dataset_info` and an `object_identity` per chunk, issue #33 item 6), and the
/// [`ByOffset`] source of their bytes.
pub fn chunk_locations(ds: hid_t, offsets: &[u64], path: &str) -> Result<(Vec<Option<ChunkLocation>>, Option<ByOffset>)> {
    #[cfg(hdf5_1_14)]
    if let Some(t) = table::get(ds, path)? {
        return Ok((offsets.iter().map(|&o| t.find(o)).collect(), t.by_offset));
    }
    Ok((offsets.iter().map(|&o| chunk_location_by_coord(ds, o, path)).collect::<Result<_>>()?, None))
}

/// How many times this thread has had HDF5 walk a dataset's whole chunk index (each
/// `H5Dget_chunk_info_by_coord` does, and each chunk table of [`chunk_location`] is one
/// walk): for I/O-pattern tests that reading n chunks costs O(n), not O(n²) (issue #38).
pub fn chunk_index_walks() -> u64 {
    counted(WALKS)
}

fn walked() {
    count(WALKS);
}

/// One chunk's location, asked of HDF5 directly (O(chunks) per call, see [`chunk_location`]).
fn chunk_location_by_coord(ds: hid_t, offset: u64, path: &str) -> Result<Option<(u32, u64, u64)>> {
    walked();
    locked(|| unsafe {
        let mut mask: c_uint = 0;
        let mut addr: hdf5_sys::h5::haddr_t = 0;
        let mut size: hsize_t = 0;
        check(
            h5d::H5Dget_chunk_info_by_coord(ds, &offset, &mut mask, &mut addr, &mut size),
            path,
            "H5Dget_chunk_info_by_coord",
        )?;
        Ok(if addr == hdf5_sys::h5::HADDR_UNDEF || size == 0 { None } else { Some((mask, addr, size)) })
    })
}

/// Which object `id` is, for the life of this process: the serial number HDF5 gives each
/// file open (`fileno`, never reused within a process) and the object's token (address)
/// in that file.
pub fn object_identity(id: hid_t, path: &str) -> Result<(u64, [u8; 16])> {
    locked(|| unsafe {
        let mut info = std::mem::MaybeUninit::<h5o::H5O_info2_t>::uninit();
        check(h5o::H5Oget_info3(id, info.as_mut_ptr(), h5o::H5O_INFO_BASIC), path, "H5Oget_info3")?;
        let info = info.assume_init();
        // SAFETY: H5O_token_t is a repr(C) struct holding H5O_MAX_TOKEN_SIZE (16) bytes.
        let token: [u8; 16] = std::mem::transmute::<h5o::H5O_token_t, [u8; 16]>(info.token);
        // c_ulong: 64 bits here, 32 on Windows.
        #[allow(clippy::unnecessary_cast)]
        Ok((info.fileno as u64, token))
    })
}

/// Read the stored (still filtered) bytes of the chunk at element `offset`
/// (`H5Dread_chunk`): `size` must come from [`chunk_info`].
pub fn chunk_read_raw(ds: hid_t, offset: u64, size: u64, path: &str) -> Result<(u32, Vec<u8>)> {
    let mut buf = Vec::new();
    let mask = chunk_read_raw_into(ds, offset, size, path, &mut buf)?;
    Ok((mask, buf))
}

/// [`chunk_read_raw`] into `buf` (resized to the chunk's size; a buffer reused across
/// chunks of one read is zeroed only where it grows), returning the filter mask.
pub fn chunk_read_raw_into(ds: hid_t, offset: u64, size: u64, path: &str, buf: &mut Vec<u8>) -> Result<u32> {
    let len = usize::try_from(size).map_err(|_| MarquetError::spec(path, "HDF5 chunk", format!("chunk of {size} bytes")))?;
    buf.resize(len, 0);
    chunk_read_raw_to(ds, offset, path, buf)
}

/// [`chunk_read_raw`] into `buf`, whose length must be the stored size [`chunk_info`]
/// gives, returning the filter mask. An unfiltered chunk read this way lands in its final
/// place without a copy.
pub fn chunk_read_raw_to(ds: hid_t, offset: u64, path: &str, buf: &mut [u8]) -> Result<u32> {
    let len = buf.len();
    let mut mask: u32 = 0;
    #[allow(unused_mut)]
    let mut got: usize = len;
    // HDF5 2.0's H5Dread_chunk2 checks the buffer size; 1.12 / 1.14 (a shared HDF5, see
    // build.rs) have only the unchecked call, whose buffer `chunk_info`'s size fits.
    #[cfg(hdf5_2)]
    locked(|| unsafe {
        check(
            h5d::H5Dread_chunk2(ds, H5P_DEFAULT, &offset, &mut mask, buf.as_mut_ptr() as *mut c_void, &mut got),
            path,
            "H5Dread_chunk",
        )
    })?;
    #[cfg(not(hdf5_2))]
    locked(|| unsafe {
        check(h5d::H5Dread_chunk1(ds, H5P_DEFAULT, &offset, &mut mask, buf.as_mut_ptr() as *mut c_void), path, "H5Dread_chunk")
    })?;
    if got != len {
        return Err(MarquetError::spec(path, "HDF5 chunk", format!("chunk at element {offset} holds {got} bytes, its index says {len}")));
    }
    Ok(mask)
}

/// Write already filtered bytes as the chunk at element `offset` (`H5Dwrite_chunk`,
/// filter mask 0: every filter of the pipeline was applied).
pub fn chunk_write_raw(ds: hid_t, offset: u64, data: &[u8], path: &str) -> Result<()> {
    wrote(locked(|| unsafe {
        check(
            h5d::H5Dwrite_chunk(ds, H5P_DEFAULT, 0, &offset, data.len(), data.as_ptr() as *const c_void),
            path,
            "H5Dwrite_chunk",
        )
    }))
    .map(|_| ())
}

/// The chunk tables of [`chunk_location`] (HDF5 ≥ 1.14).
#[cfg(hdf5_1_14)]
mod table {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// Tables kept per thread (the datasets a query or a scan reads at once).
    const KEEP: usize = 32;
    /// Larger indexes are asked chunk by chunk (32 bytes of table per chunk).
    const MAX_CHUNKS: u64 = 1 << 22;

    /// (file serial number, object token, write generation, extent, chunk length).
    type Key = (u64, [u8; 16], u64, u64, u64);

    /// Every stored chunk of one 1-D dataset: element offset → (filter mask, address, size),
    /// sorted by offset.
    pub(super) struct Table {
        entries: Vec<(u64, (u32, u64, u64))>,
        /// Where the chunks can be read by file offset, if the file allows it.
        pub(super) by_offset: Option<ByOffset>,
    }

    impl Table {
        pub(super) fn find(&self, offset: u64) -> Option<(u32, u64, u64)> {
            self.entries.binary_search_by_key(&offset, |e| e.0).ok().map(|i| self.entries[i].1)
        }
    }

    thread_local! {
        static TABLES: RefCell<Vec<(Key, Rc<Table>)>> = const { RefCell::new(Vec::new()) };
    }

    /// The table of `ds`, built on first use; `None` for what it does not serve (not 1-D,
    /// not chunked, too many chunks), which is then asked chunk by chunk.
    pub(super) fn get(ds: hid_t, path: &str) -> Result<Option<Rc<Table>>> {
        let info = dataset_info(ds, path)?;
        let (Some(chunk), [extent]) = (info.chunk.as_ref().and_then(|c| (c.len() == 1).then(|| c[0])), info.dims.as_slice()) else {
            return Ok(None);
        };
        if chunk == 0 || extent.div_ceil(chunk) > MAX_CHUNKS {
            return Ok(None);
        }
        let (fileno, token) = object_identity(ds, path)?;
        let key: Key = (fileno, token, write_generation(), *extent, chunk);
        if let Some(t) = TABLES.with(|c| c.borrow().iter().find(|(k, _)| *k == key).map(|(_, t)| t.clone())) {
            return Ok(Some(t));
        }
        let mut entries: Vec<(u64, (u32, u64, u64))> = Vec::new();
        unsafe extern "C" fn cb(offset: *const hsize_t, mask: c_uint, addr: hdf5_sys::h5::haddr_t, size: hsize_t, data: *mut c_void) -> std::os::raw::c_int {
            // SAFETY: `data` is the `entries` vector below, alive for the whole iteration;
            // `offset` points at the chunk's rank (1) coordinates.
            let v = unsafe { &mut *(data as *mut Vec<(u64, (u32, u64, u64))>) };
            let o = unsafe { *offset };
            if addr != hdf5_sys::h5::HADDR_UNDEF && size != 0 {
                v.push((o, (mask, addr, size)));
            }
            0
        }
        walked();
        locked(|| unsafe {
            check(
                h5d::H5Dchunk_iter(ds, H5P_DEFAULT, Some(cb), &mut entries as *mut _ as *mut c_void),
                path,
                "H5Dchunk_iter",
            )
        })?;
        entries.sort_unstable_by_key(|e| e.0);
        let t = Rc::new(Table { entries, by_offset: ByOffset::of(ds) });
        TABLES.with(|c| {
            let mut c = c.borrow_mut();
            c.retain(|(k, _)| !(k.0 == key.0 && k.1 == key.1));
            if c.len() >= KEEP {
                c.remove(0);
            }
            c.push((key, t.clone()));
        });
        Ok(Some(t))
    }
}

/// Can HDF5 walk the chunk index of dataset `ds`, and does every chunk it lists lie inside
/// the file's allocation? `false` for a chunked dataset whose index a full disk left
/// pointing past the end of the file (issue #38): resizing or deleting it would read that
/// index and fail, so such a dataset is set aside instead ([`link_delete_keeping_object`]).
/// A contiguous or compact dataset has no chunk index: `true`.
pub fn chunk_index_intact(ds: hid_t) -> bool {
    let chunked = locked(|| unsafe {
        let dcpl = h5d::H5Dget_create_plist(ds);
        if dcpl < 0 {
            return None;
        }
        let dcpl = Hid(dcpl);
        Some(hdf5_sys::h5p::H5Pget_layout(dcpl.0) == hdf5_sys::h5d::H5D_layout_t::H5D_CHUNKED)
    });
    match chunked {
        None => return false,
        Some(false) => return true,
        Some(true) => {}
    }
    let mut eoa: u64 = 0;
    if locked(|| unsafe { file_eoa(ds, &mut eoa) }) < 0 {
        return false;
    }
    unsafe extern "C" fn cb(_offset: *const hsize_t, _mask: c_uint, addr: hdf5_sys::h5::haddr_t, size: hsize_t, data: *mut c_void) -> std::os::raw::c_int {
        // SAFETY: `data` is the `eoa` below, alive for the whole iteration.
        let eoa = unsafe { *(data as *const u64) };
        if addr != hdf5_sys::h5::HADDR_UNDEF && addr.saturating_add(size) > eoa {
            return -1;
        }
        0
    }
    // HDF5 prints nothing: errors are collected by `check`'s callers only; this one is a probe.
    locked(|| unsafe { h5d::H5Dchunk_iter(ds, H5P_DEFAULT, Some(cb), &mut eoa as *mut u64 as *mut c_void) }) >= 0
}
