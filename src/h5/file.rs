//! Files: create (with the crash-safe free-space strategy), open, flush, and files handed over by a caller's `hid_t`.
#![allow(unsafe_code)]


use hdf5::globals as g;
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5p::H5P_DEFAULT;
use hdf5_sys::{h5i, h5p};

use crate::error::{MarquetError, Result};

use super::*;

/// Flush the file that `loc` belongs to.
///
/// A flush must not run out of disk space half way (issue #38, docs/FAULTS.md "A full disk
/// inside a flush"): HDF5 writes its dirty metadata in address order, so a header that a
/// change rewrote *in place* reaches the disk before the new blocks it points to (a
/// continuation chunk, a new group, at the end of the file); when those writes fail
/// (ENOSPC, EFBIG), the file is left pointing past its end and the object is lost. So the
/// space is reserved first (`reserve_or_seal`): the file is extended with real blocks up
/// to HDF5's end of allocation plus what the flush itself may still allocate
/// (`flush_margin`: the chunks held in HDF5's chunk caches). When that fails, nothing is flushed
/// and the handle is sealed: no later write of this process (the flush at close included)
/// reaches the file, which keeps its last flushed state. A flush that fails anyway seals
/// the handle too.
pub fn flush(loc: hid_t) -> Result<()> {
    flush_then_pad(loc, true)
}

/// [`flush`] without the pad [`flush`] puts at the end of allocation afterwards: the pad
/// byte an earlier call put there becomes part of the file, so HDF5's end of allocation and
/// the file's length agree until something allocates. A flush in that state does not
/// truncate the file half way (HDF5 truncates to its end of allocation *between* writing
/// the metadata cache and its metadata accumulator, and shrinking the reservation of
/// [`reserve_or_seal`] is a slow system call): the append's flush of the new column extents
/// (local ruling L8) runs in this state, so a kill leaves some extents written and others
/// not only in the few `pwrite`s between the first and the last header (L9;
/// `tests/crash_append.rs` counts such trials).
pub(crate) fn flush_unpadded(loc: hid_t) -> Result<()> {
    flush_then_pad(loc, false)
}

fn flush_then_pad(loc: hid_t, pad: bool) -> Result<()> {
    let reserved = reserve_or_seal(loc)?;
    let r = locked(|| unsafe { check(hdf5_sys::h5f::H5Fflush(loc, hdf5_sys::h5f::H5F_scope_t::H5F_SCOPE_LOCAL), "<file>", "H5Fflush") })
        .map(|_| ())
        .map_err(|e| match e {
            // Name the file (a full disk fails here: "file write failed: File too large").
            MarquetError::Hdf5 { path, message, stack } if path == "<file>" => {
                MarquetError::Hdf5 { path: file_name(loc).unwrap_or(path), message, stack }
            }
            e => e,
        });
    match (&r, reserved) {
        (Err(_), _) => {
            if let Some((_, fd)) = sec2_fd(loc) {
                seal(loc, fd);
            }
        }
        (Ok(()), Some(r)) => r.release(loc),
        (Ok(()), None) => {}
    }
    if r.is_ok() && pad {
        pad_end(loc);
    }
    r
}

unsafe extern "C" {
    /// Set a file's end of allocation to max(EOA, EOF) + `increment` (HDF5 ≥ 1.10.2).
    fn H5Fincrement_filesize(file_id: hid_t, increment: u64) -> hdf5_sys::h5::herr_t;
}

/// Put one unused byte at the end of the file's allocation, so that no block that flushed
/// metadata points at ends there (issue #38, found by the model test's long run): HDF5
/// *shrinks* the file when a freed block ends at the end of allocation — even with
/// `H5F_FSPACE_STRATEGY_NONE` (`H5MF_xfree` tries `H5MF_try_shrink` first) — and the next
/// allocation then reuses those bytes, so an append that rewrites the partial last chunk of a
/// column lying at the end of the file wrote the new chunk over the committed one while the
/// on-disk chunk index still pointed at it: a kill before the next flush left the column's
/// chunk undecodable ("corrupt deflate data"). After a flush the aggregators are released,
/// so the next blocks start past the pad, adjacent to nothing flushed: local ruling L7
/// ("freed space is never reused") holds again. Called after every flush and before a
/// mutation's first write ([`crate::h5col`]'s `begin_mutation`). Files of other drivers
/// (MPI-IO: collective) are left alone.
pub fn pad_end(loc: hid_t) {
    let Some((fid, _)) = sec2_fd(loc) else { return };
    if !opened_for_writing(&fid) {
        return;
    }
    locked(|| unsafe { H5Fincrement_filesize(fid.0, 1) });
}

/// HDF5's end of allocation of the file that `loc` (any object in it) belongs to.
///
/// # Safety
/// `eoa` must point at writable memory; call inside `locked`.
pub(crate) unsafe fn file_eoa(loc: hid_t, eoa: *mut u64) -> hdf5_sys::h5::herr_t {
    // SAFETY: plain HDF5 calls on identifiers; `eoa` as the caller promises.
    unsafe {
        let fid = hdf5_sys::h5i::H5Iget_file_id(loc);
        if fid < 0 {
            return -1;
        }
        let fid = Hid(fid);
        H5Fget_eoa(fid.0, eoa)
    }
}

/// Bytes reserved past HDF5's end of allocation before a flush besides the chunk caches
/// (`flush_margin`): room for the chunk-index blocks and headers a flush may still
/// allocate.
pub const FLUSH_MARGIN: u64 = 64 << 10;

/// What a flush of the file of `fid` may allocate past its end of allocation: the dirty
/// chunks HDF5's chunk caches hold are allocated only inside the flush, so every open
/// dataset's cache size (`rdcc_nbytes`, 1 MiB by default; a filter may grow a chunk a
/// little: 1/64 more) plus 16 KiB of chunk-index blocks each, plus [`FLUSH_MARGIN`]. Writes
/// through this crate go to the file as whole chunks (`H5Dwrite_chunk`, written at once)
/// or through those caches.
fn flush_margin(fid: &Hid) -> u64 {
    let ids = locked(|| unsafe {
        let n = hdf5_sys::h5f::H5Fget_obj_count(fid.0, hdf5_sys::h5f::H5F_OBJ_DATASET);
        if n <= 0 {
            return Vec::new();
        }
        let mut ids = vec![0 as hid_t; n as usize];
        let got = hdf5_sys::h5f::H5Fget_obj_ids(fid.0, hdf5_sys::h5f::H5F_OBJ_DATASET, ids.len(), ids.as_mut_ptr());
        ids.truncate(got.max(0) as usize);
        ids
    });
    let mut margin = FLUSH_MARGIN;
    for id in ids {
        let cache = locked(|| unsafe {
            let dapl = hdf5_sys::h5d::H5Dget_access_plist(id);
            if dapl < 0 {
                return 1u64 << 20;
            }
            let dapl = Hid(dapl);
            let (mut slots, mut nbytes, mut w0) = (0usize, 0usize, 0f64);
            if h5p::H5Pget_chunk_cache(dapl.0, &mut slots, &mut nbytes, &mut w0) < 0 {
                return 1u64 << 20;
            }
            nbytes as u64
        });
        margin = margin.saturating_add(cache + cache / 64 + (16 << 10));
    }
    margin
}

unsafe extern "C" {
    /// HDF5's end-of-allocation address of a file (public since HDF5 1.10.2).
    fn H5Fget_eoa(file_id: hid_t, eoa: *mut hdf5_sys::h5::haddr_t) -> hdf5_sys::h5::herr_t;
}

/// The file (a reference of its own) and file descriptor of `loc`'s file when it was opened
/// with HDF5's default (sec2) driver; `None` for any
/// other driver (in memory, MPI-IO, a caller's own driver), whose space is not ours to manage.
pub(super) fn sec2_fd(loc: hid_t) -> Option<(Hid, i32)> {
    locked(|| unsafe {
        let fid = hdf5_sys::h5i::H5Iget_file_id(loc);
        if fid < 0 {
            return None;
        }
        let fid = Hid(fid);
        let fapl = hdf5_sys::h5f::H5Fget_access_plist(fid.0);
        if fapl < 0 {
            return None;
        }
        let fapl = Hid(fapl);
        if h5p::H5Pget_driver(fapl.0) != *g::H5FD_SEC2 {
            return None;
        }
        let mut handle: *mut std::ffi::c_void = std::ptr::null_mut();
        if hdf5_sys::h5f::H5Fget_vfd_handle(fid.0, fapl.0, &mut handle) < 0 || handle.is_null() {
            return None;
        }
        Some((fid, *(handle as *const i32)))
    })
}

/// Mark the descriptor HDF5 opened a file with close-on-exec. HDF5 opens files without
/// `O_CLOEXEC`: a process this one starts (a Python interpreter, a `marquet` command, any
/// `Command` of a program using the library) would inherit the descriptor, and with it the
/// file's `flock` lock, for as long as it lives — the file then stays locked against this
/// very process ("unable to lock file") after it closed it. Seen with the S3 test server
/// started by one test while another test thread wrote a file (issue #34).
fn close_on_exec(loc: hid_t) {
    if let Some((_, fd)) = sec2_fd(loc) {
        // SAFETY: fcntl on the driver's open descriptor.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
}

/// Was the file opened read-write (`H5Fget_intent`)?
pub(super) fn opened_for_writing(fid: &Hid) -> bool {
    let mut intent: u32 = 0;
    locked(|| unsafe { hdf5_sys::h5f::H5Fget_intent(fid.0, &mut intent) }) >= 0 && intent & hdf5_sys::h5f::H5F_ACC_RDWR != 0
}

/// Before a file handle is closed: HDF5's close flushes what a failed operation left dirty
/// (a write that failed for want of space returned before any [`flush`]). Reserve that
/// flush's space as [`flush`] does; when it cannot be reserved, seal the handle and drop the
/// metadata ([`discard_sealed`]) instead of letting the close rewrite headers in place that
/// would point past the end of the file (issue #38). A handle sealed earlier is discarded.
pub(crate) fn prepare_close(loc: hid_t) {
    // Only when HDF5 allocated space that never reached the disk (a clean handle needs none).
    if allocated_past_end(loc) {
        let _ = reserve_or_seal(loc);
    }
    // Writes to /dev/null only when no other handle of the file stays open to read through
    // it (a sealed descriptor is shared by every handle of the file).
    let others = locked(|| unsafe { hdf5_sys::h5f::H5Fget_obj_count(loc, hdf5_sys::h5f::H5F_OBJ_FILE) });
    if others <= 1 {
        discard_sealed(loc);
    }
}

/// Does HDF5's end of allocation lie past the file's length (space allocated, not written)?
fn allocated_past_end(loc: hid_t) -> bool {
    let Some((fid, fd)) = sec2_fd(loc) else { return false };
    let mut eoa: u64 = 0;
    if locked(|| unsafe { H5Fget_eoa(fid.0, &mut eoa) }) < 0 {
        return false;
    }
    // SAFETY: fstat on the driver's open descriptor.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        libc::fstat(fd, &mut st) == 0 && eoa > st.st_size as u64
    }
}

/// Space reserved by [`reserve_or_seal`]: the file's length before, to give back what the
/// flush did not use.
pub(crate) struct Reserved {
    fd: i32,
    before: u64,
}

impl Reserved {
    /// Give back the reserved bytes past what HDF5 allocated (never below the length
    /// the file had before).
    fn release(self, loc: hid_t) {
        let Some((fid, _)) = sec2_fd(loc) else { return };
        let mut eoa: u64 = 0;
        if locked(|| unsafe { H5Fget_eoa(fid.0, &mut eoa) }) < 0 {
            return;
        }
        let keep = eoa.max(self.before);
        // SAFETY: fstat/ftruncate on the driver's open descriptor, which HDF5 keeps open.
        unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            if libc::fstat(self.fd, &mut st) == 0 && (st.st_size as u64) > keep {
                libc::ftruncate(self.fd, keep as libc::off_t);
            }
        }
    }
}

/// Make sure the file of `loc` holds real blocks up to HDF5's end of allocation plus
/// [`flush_margin`], so that writing what HDF5 has allocated cannot fail for want of space
/// (`posix_fallocate`; on file systems without it glibc writes the blocks). On failure
/// (ENOSPC, EFBIG past a file-size limit, …) the handle is sealed ([`seal`]) and the error
/// names the file and the bytes it needed. `Ok(None)`: not a sec2 file, or nothing to reserve.
pub(crate) fn reserve_or_seal(loc: hid_t) -> Result<Option<Reserved>> {
    let Some((fid, fd)) = sec2_fd(loc) else { return Ok(None) };
    if !opened_for_writing(&fid) {
        return Ok(None);
    }
    let margin = flush_margin(&fid);
    let mut eoa: u64 = 0;
    if locked(|| unsafe { H5Fget_eoa(fid.0, &mut eoa) }) < 0 || eoa == hdf5_sys::h5::HADDR_UNDEF {
        return Ok(None);
    }
    // SAFETY: fstat on the driver's open descriptor.
    let before = unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &mut st) != 0 {
            return Ok(None);
        }
        st.st_size as u64
    };
    let want = eoa.saturating_add(margin);
    if want <= before {
        return Ok(Some(Reserved { fd, before }));
    }
    // SAFETY: posix_fallocate on the driver's open descriptor, past the bytes it wrote.
    let rc = unsafe { allocate(fd, before, want - before) };
    if rc == 0 {
        return Ok(Some(Reserved { fd, before }));
    }
    let source = std::io::Error::from_raw_os_error(rc);
    let path = file_name(loc).unwrap_or_else(|_| "<file>".into());
    seal(loc, fd);
    // SAFETY: give back what a partial allocation added (the sealed descriptor is read-only;
    // a descriptor of our own is opened for it).
    if let Ok(f) = std::fs::OpenOptions::new().write(true).open(&path) {
        if f.metadata().map(|m| m.len() > before).unwrap_or(false) {
            let _ = f.set_len(before);
        }
    }
    Err(MarquetError::Io {
        path,
        source: std::io::Error::new(
            source.kind(),
            format!(
                "{source}: cannot reserve {} bytes for the write (the file was left as it was; nothing of this operation was written after its last flush)",
                want - before
            ),
        ),
    })
}

/// Allocate real blocks for `[off, off + len)` of `fd`, extending it (0 or an errno value).
#[cfg(target_os = "linux")]
unsafe fn allocate(fd: i32, off: u64, len: u64) -> i32 {
    // SAFETY: the caller passes an open descriptor.
    unsafe { libc::posix_fallocate(fd, off as libc::off_t, len as libc::off_t) }
}

/// Elsewhere: write zeros past the end (the range holds nothing HDF5 wrote: it lies past
/// the file's length).
#[cfg(not(target_os = "linux"))]
unsafe fn allocate(fd: i32, off: u64, len: u64) -> i32 {
    let zeros = vec![0u8; 1 << 16];
    let mut done = 0u64;
    while done < len {
        let n = (len - done).min(zeros.len() as u64) as usize;
        // SAFETY: the caller passes an open descriptor; `zeros` holds `n` bytes.
        let w = unsafe { libc::pwrite(fd, zeros.as_ptr().cast(), n, (off + done) as libc::off_t) };
        if w <= 0 {
            return std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO);
        }
        done += w as u64;
    }
    0
}

/// Seal a sec2 file handle after a failed or impossible flush: its descriptor is replaced by
/// a read-only one of the same file (`dup2`), so every later write of HDF5 fails instead of
/// rewriting headers in place that would point at blocks that never reach the disk, while
/// reads through the handle still see the file. [`discard_sealed`] ends it at close.
fn seal(loc: hid_t, fd: i32) {
    let Ok(path) = file_name(loc) else { return };
    let Ok(c) = std::ffi::CString::new(path) else { return };
    // SAFETY: open/dup2/close of descriptors; `fd` stays a valid (read-only) descriptor.
    unsafe {
        let ro = libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if ro >= 0 {
            libc::dup2(ro, fd);
            libc::close(ro);
        }
    }
}

/// Before the last handle of a file is closed: when [`seal`] sealed it (HDF5 opened it for
/// writing, its descriptor is read-only: nothing else makes that pair), point its descriptor
/// at `/dev/null`, so that the flush `H5Fclose` makes "succeeds" without reaching the file
/// (HDF5 insists on a clean metadata cache when it closes a file; the operation's
/// metadata is dropped, which is the point). Nothing reads through the handle after it.
pub(crate) fn discard_sealed(loc: hid_t) {
    let Some((fid, fd)) = sec2_fd(loc) else { return };
    if !opened_for_writing(&fid) {
        return;
    }
    // SAFETY: fcntl on the driver's open descriptor.
    if unsafe { libc::fcntl(fd, libc::F_GETFL) } & libc::O_ACCMODE != libc::O_RDONLY {
        return;
    }
    // SAFETY: open/dup2/close of descriptors; `fd` stays valid until HDF5 closes it.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if null >= 0 {
            libc::dup2(null, fd);
            libc::close(null);
        }
    }
}

/// The name of the file that `loc` (any object in it) belongs to, as it was opened
/// (`H5Fget_name`).
pub fn file_name(loc: hid_t) -> Result<String> {
    locked(|| unsafe {
        let n = check(hdf5_sys::h5f::H5Fget_name(loc, std::ptr::null_mut(), 0), "<file>", "H5Fget_name")?;
        let mut buf = vec![0u8; n as usize + 1];
        check(hdf5_sys::h5f::H5Fget_name(loc, buf.as_mut_ptr().cast(), buf.len()), "<file>", "H5Fget_name")?;
        buf.truncate(n as usize);
        Ok(String::from_utf8_lossy(&buf).into_owned())
    })
}

/// Create (truncate) a file whose freed file space is never reused.
///
/// HEP001 §12.3's crash guarantee assumes that a killed writer leaves the committed
/// state readable. With HDF5's default free-space managers, rewriting a compressed
/// partial chunk frees its old location, and a later allocation in the same session may
/// overwrite those bytes while the on-disk chunk index (last flushed) still points at
/// them. `H5F_FSPACE_STRATEGY_NONE` allocates only at the end of the file, so flushed
/// metadata never points at overwritten bytes; the cost is that rewritten chunks leave
/// holes (reclaimed by `h5repack`).
pub fn file_create(path: &str) -> Result<hdf5::File> {
    register_filters()?;
    let c = cstr(path)?;
    let id = locked(|| unsafe {
        let fcpl = Hid::new(h5p::H5Pcreate(*g::H5P_FILE_CREATE), path, "H5Pcreate")?;
        check(
            h5p::H5Pset_file_space_strategy(fcpl.0, hdf5_sys::h5f::H5F_fspace_strategy_t::H5F_FSPACE_STRATEGY_NONE, 0, 1),
            path,
            "H5Pset_file_space_strategy",
        )?;
        check(hdf5_sys::h5f::H5Fcreate(c.as_ptr(), hdf5_sys::h5f::H5F_ACC_TRUNC, fcpl.0, H5P_DEFAULT), path, "H5Fcreate")
    })?;
    close_on_exec(id);
    // SAFETY: `id` is a fresh file id that the returned File owns.
    unsafe { hdf5::from_id(id) }.map_err(|e| MarquetError::hdf5(path, e))
}

/// Create a file that lives in memory only (HDF5's core driver without a backing store):
/// nothing reaches a disk, and everything is gone when it is closed. `name` only names it
/// in errors. Used to hold a table's column definitions without writing a file (an
/// import's plan checked against the table it appends to, issue #31).
pub fn file_create_in_memory(name: &str) -> Result<hdf5::File> {
    register_filters()?;
    let c = cstr(name)?;
    let id = locked(|| unsafe {
        let fapl = Hid::new(h5p::H5Pcreate(*g::H5P_FILE_ACCESS), name, "H5Pcreate")?;
        check(h5p::H5Pset_fapl_core(fapl.0, 1 << 20, 0), name, "H5Pset_fapl_core")?;
        check(hdf5_sys::h5f::H5Fcreate(c.as_ptr(), hdf5_sys::h5f::H5F_ACC_TRUNC, H5P_DEFAULT, fapl.0), name, "H5Fcreate")
    })?;
    // SAFETY: `id` is a fresh file id that the returned File owns.
    unsafe { hdf5::from_id(id) }.map_err(|e| MarquetError::hdf5(name, e))
}

/// Open, read-only, a file whose bytes are in memory (HDF5's core driver over a copy of
/// `bytes`, without a backing store): a file fetched whole from a web server or object
/// store (issue #34) for the commands that read every byte. `name` names it in errors.
pub fn file_open_image(name: &str, bytes: &[u8]) -> Result<hdf5::File> {
    register_filters()?;
    let c = cstr(name)?;
    let id = locked(|| unsafe {
        let fapl = Hid::new(h5p::H5Pcreate(*g::H5P_FILE_ACCESS), name, "H5Pcreate")?;
        check(h5p::H5Pset_fapl_core(fapl.0, 1 << 20, 0), name, "H5Pset_fapl_core")?;
        // HDF5 copies the image (no callbacks are set), so `bytes` need not outlive the file.
        check(h5p::H5Pset_file_image(fapl.0, bytes.as_ptr() as *mut std::ffi::c_void, bytes.len()), name, "H5Pset_file_image")?;
        check(hdf5_sys::h5f::H5Fopen(c.as_ptr(), hdf5_sys::h5f::H5F_ACC_RDONLY, fapl.0), name, "H5Fopen")
    })?;
    // SAFETY: `id` is a fresh file id that the returned File owns.
    unsafe { hdf5::from_id(id) }.map_err(|e| MarquetError::hdf5(name, e))
}

/// Open, read-only, the file `remote` reads by URL: by range through the driver of
/// `range_driver` (libhdf5 reads only the objects and chunks asked for) when it is laid out
/// for that (the cloud layout: its metadata in the open's first read, no chunk index) or
/// is at least `RemoteOptions::whole_below` bytes; else fetched whole into memory (also
/// with HDF5 older than 1.14). libhdf5 reads a chunked file's chunk indexes one node at a
/// time: `marquet info` of a 413 MB polygon table of the default layout made 258 requests.
#[cfg(feature = "cloud")]
pub fn file_open_remote(remote: std::sync::Arc<crate::remote::RemoteFile>) -> Result<hdf5::File> {
    #[cfg(hdf5_1_14)]
    if remote.len() >= remote.options().whole_below || super::pure::PureFile::held_layout_is_plain(&remote) {
        let url = remote.url().to_string();
        return file_open_ranged(&url, remote);
    }
    file_open_image(remote.url(), &remote.read_all()?)
}

/// Open an existing file read-only or read-write, with the filters this crate registers
/// (zstd 32015) available to its reads, like every file entry point of this module.
///
/// Only regular files are opened (a FIFO would block, issue #19). When another process holds
/// HDF5's file lock, the open is retried with a growing pause (5 ms doubling to 250 ms)
/// until [`lock_timeout`] has passed (docs/FAULTS.md F5).
pub fn file_open(path: &std::path::Path, rw: bool) -> Result<hdf5::File> {
    register_filters()?;
    // A file named by URL (issue #34) is read by range through the driver of
    // `range_driver` (HDF5 1.14), else whole into memory. Window queries read it by range
    // without libhdf5 (`crate::query::reader::SpatialReader::open_url`).
    #[cfg(feature = "cloud")]
    if let Some(url) = path.to_str().filter(|s| crate::remote::is_url(s)) {
        if rw {
            return Err(MarquetError::Unsupported(format!("{url}: files named by URL are read-only")));
        }
        return file_open_remote(crate::remote::RemoteFile::open(url)?);
    }
    crate::error::check_regular_file(path)?;
    let open = || {
        with_lock_retry(|| {
            let r = if rw { hdf5::File::open_rw(path) } else { hdf5::File::open(path) };
            r.map_err(|e| MarquetError::hdf5(path.display().to_string(), e))
        })
    };
    let f = match open() {
        Err(e) if rw && restore_eof(path, &e)? => open(),
        r => r,
    }?;
    close_on_exec(f.id());
    Ok(f)
}

/// A write that ran out of disk space (ENOSPC, or EFBIG past a file-size limit) can leave
/// the superblock's end-of-file address beyond the bytes that reached the disk: HDF5 then
/// refuses the file ("truncated file: eof = X, …, stored_eof = Y"). Files we create
/// allocate only at the end (local ruling L7), so `[X, Y)` is space the failed operation
/// allocated — the reserved tail of a staged append, never committed rows. The next writer
/// restores the length with a sparse extension (no disk space needed) and opens the file
/// in its last committed state (issue #19, docs/FAULTS.md F2). Returns whether it did.
fn restore_eof(path: &std::path::Path, e: &MarquetError) -> Result<bool> {
    let MarquetError::Hdf5 { message, .. } = e else { return Ok(false) };
    let num = |key: &str| -> Option<u64> {
        let i = message.find(key)? + key.len();
        message[i..].chars().take_while(|c| c.is_ascii_digit()).collect::<String>().parse().ok()
    };
    let (Some(eof), Some(stored)) = (num("truncated file: eof = "), num("stored_eof = ")) else { return Ok(false) };
    let actual = std::fs::metadata(path).map_err(|e| MarquetError::Io { path: path.display().to_string(), source: e })?.len();
    // Only the plain case: the file is exactly HDF5's eof long and short of a bounded tail.
    if actual != eof || stored <= eof || stored - eof > (1 << 40) {
        return Ok(false);
    }
    let f = std::fs::OpenOptions::new().write(true).open(path).map_err(|e| MarquetError::Io { path: path.display().to_string(), source: e })?;
    f.set_len(stored).map_err(|e| MarquetError::Io { path: path.display().to_string(), source: e })?;
    Ok(true)
}

static LOCK_TIMEOUT_MS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How long opening a file waits for another process's HDF5 file lock (default: not at all,
/// the first lock error is returned). Process-wide, like HDF5's own file-locking setting.
pub fn set_lock_timeout(d: std::time::Duration) {
    LOCK_TIMEOUT_MS.store(d.as_millis().min(u64::MAX as u128) as u64, std::sync::atomic::Ordering::Relaxed);
}

/// The wait set by [`set_lock_timeout`].
pub fn lock_timeout() -> std::time::Duration {
    std::time::Duration::from_millis(LOCK_TIMEOUT_MS.load(std::sync::atomic::Ordering::Relaxed))
}

/// Is this the error of an open refused by another process's file lock?
pub fn is_lock_error(e: &MarquetError) -> bool {
    matches!(e, MarquetError::Hdf5 { message, .. } if message.contains("unable to lock file"))
}

/// A lock error as a user should read it (issue #38): another process has the file open
/// (a writer, or a reader while this one wants to write), how long this one waited, and the
/// knob that sets it — HDF5's "unable to lock file: Resource temporarily unavailable"
/// stays at the end (and [`is_lock_error`] still recognises it).
fn explain_lock_error(e: MarquetError) -> MarquetError {
    match e {
        MarquetError::Hdf5 { path, message, stack } => {
            let waited = lock_timeout().as_secs_f64();
            MarquetError::Hdf5 {
                message: format!(
                    "another process has this file open (HDF5's file lock); waited {waited} s for it (the command's --lock-timeout SECONDS, marquet::h5col::set_lock_timeout): {message}"
                ),
                path,
                stack,
            }
        }
        e => e,
    }
}

/// Run `open` until it succeeds, fails for another reason than a file lock, or
/// [`lock_timeout`] has passed.
fn with_lock_retry<T>(mut open: impl FnMut() -> Result<T>) -> Result<T> {
    let deadline = std::time::Instant::now() + lock_timeout();
    let mut pause = std::time::Duration::from_millis(5);
    loop {
        match open() {
            Err(e) if is_lock_error(&e) => {
                let now = std::time::Instant::now();
                if now >= deadline {
                    return Err(explain_lock_error(e));
                }
                std::thread::sleep(pause.min(deadline - now));
                pause = (pause * 2).min(std::time::Duration::from_millis(250));
            }
            r => return r,
        }
    }
}

/// Take a reference to the file of an identifier that the caller opened with its own calls
/// to the *same* HDF5 library (a program linking a shared libhdf5 that libmarquet also
/// links; HEP002 §1.1 "arrays and features in one open file").
///
/// `id` must be a live file or group identifier. Returns the file, holding a reference of
/// its own (`H5Iget_file_id`), so the caller may close `id` before or after dropping it,
/// and the group's path (`"/"` for a file identifier). Anything else is refused with
/// [`MarquetError::InvalidArgument`], without dereferencing anything: `H5Iis_valid` and
/// `H5Iget_type` only look the number up in HDF5's id tables.
pub fn file_from_caller_id(id: hid_t) -> Result<(hdf5::File, String)> {
    register_filters()?;
    let what = format!("<hid_t {id}>");
    let (fid, is_group) = locked(|| unsafe {
        if h5i::H5Iis_valid(id) <= 0 {
            return Err(MarquetError::InvalidArgument(format!("hid_t {id} is not a live HDF5 identifier")));
        }
        let is_group = match h5i::H5Iget_type(id) {
            h5i::H5I_type_t::H5I_FILE => false,
            h5i::H5I_type_t::H5I_GROUP => true,
            t => {
                return Err(MarquetError::InvalidArgument(format!(
                    "hid_t {id} is a {t:?} identifier, not a file or group"
                )))
            }
        };
        Ok((check(h5i::H5Iget_file_id(id), &what, "H5Iget_file_id")?, is_group))
    })?;
    // SAFETY: H5Iget_file_id returned a new reference that the File owns.
    let file: hdf5::File = unsafe { hdf5::from_id(fid) }.map_err(|e| MarquetError::hdf5(&what, e))?;
    let path = if is_group { object_path(id)? } else { "/".to_string() };
    Ok((file, path))
}
