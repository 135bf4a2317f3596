//! `marquet_file`: an open HDF5 file.

use std::ffi::c_char;
use std::sync::{Arc, Mutex};

use mq::File;

use crate::ffi::{self, Handle, Kind};
use crate::panic::{guard, guard_void};
use crate::status::{marquet_status, FfiError, FfiResult};

/// An open HDF5 file (opaque). Created by `marquet_file_create`, `marquet_file_open` or
/// `marquet_file_open_rw`; released by `marquet_file_free`. Tables opened from a file
/// keep it open until they are freed too, so the handles may be freed in any order.
pub struct marquet_file {
    inner: Mutex<Option<Arc<File>>>,
    /// The group that relative table paths start from: "/" except for a handle made by
    /// `marquet_file_from_hid` from a group identifier.
    base: String,
}

impl Handle for marquet_file {
    const KIND: Kind = Kind::File;
    const NAME: &'static str = "file";
}

impl marquet_file {
    /// The open file, or `CLOSED`.
    pub fn get(&self) -> FfiResult<Arc<File>> {
        self.inner
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .ok_or_else(|| FfiError::new(marquet_status::MARQUET_STATUS_CLOSED, "file handle is closed"))
    }

    /// A table path as given by the caller, made absolute: paths starting with '/' are
    /// kept, others are relative to the handle's group.
    pub fn resolve(&self, path: &str) -> String {
        if path.starts_with('/') {
            path.to_string()
        } else if self.base.ends_with('/') {
            format!("{}{path}", self.base)
        } else {
            format!("{}/{path}", self.base)
        }
    }
}

/// A new handle owning `f` (the MPI entry points of `crate::mpi`).
#[cfg(feature = "mpio")]
pub(crate) fn file_handle(f: File) -> *mut marquet_file {
    ffi::into_handle(marquet_file { inner: Mutex::new(Some(Arc::new(f))), base: "/".into() })
}

unsafe fn open_with(
    path: *const c_char,
    path_len: usize,
    out: *mut *mut marquet_file,
    how: fn(&str) -> mq::Result<File>,
) -> FfiResult {
    let out = ffi::out_ptr(out, "out")?;
    let path = unsafe { ffi::name_arg(path, path_len, "path")? };
    let f = how(path)?;
    let h = ffi::into_handle(marquet_file { inner: Mutex::new(Some(Arc::new(f))), base: "/".into() });
    unsafe { ffi::write(out, h) };
    Ok(())
}

/// Create (truncate) the file at `path` (`path_len` bytes of UTF-8, no NUL needed) and
/// open it read-write. On success `*out` receives a new handle to free with
/// `marquet_file_free`.
#[no_mangle]
pub unsafe extern "C" fn marquet_file_create(path: *const c_char, path_len: usize, out: *mut *mut marquet_file) -> i32 {
    guard(|| unsafe { open_with(path, path_len, out, |p| File::create(p)) })
}

/// Open the existing file at `path` read-only.
#[no_mangle]
pub unsafe extern "C" fn marquet_file_open(path: *const c_char, path_len: usize, out: *mut *mut marquet_file) -> i32 {
    guard(|| unsafe { open_with(path, path_len, out, |p| File::open(p)) })
}

/// Open, read-only, the file at `url` (`url_len` bytes of UTF-8): `http://`, `https://`,
/// `s3://`, `gs://`, `az://` or `file://` (credentials from the environment; README "Files
/// on a web server or in object storage"). The object is fetched whole into memory, for
/// reads of every row; window queries read by range through
/// `marquet_spatial_reader_open_url` instead. Errors of the server or store give
/// `MARQUET_STATUS_REMOTE`; a library built without the `cloud` feature gives
/// `MARQUET_STATUS_UNSUPPORTED`.
#[no_mangle]
pub unsafe extern "C" fn marquet_file_open_url(url: *const c_char, url_len: usize, out: *mut *mut marquet_file) -> i32 {
    guard(|| unsafe { open_with(url, url_len, out, open_url) })
}

#[cfg(feature = "cloud")]
fn open_url(url: &str) -> mq::Result<File> {
    File::open_url(url)
}

#[cfg(not(feature = "cloud"))]
fn open_url(url: &str) -> mq::Result<File> {
    Err(mq::Error::Unsupported(format!("{url}: this libmarquet was built without the `cloud` feature")))
}

/// Open the existing file at `path` read-write.
#[no_mangle]
pub unsafe extern "C" fn marquet_file_open_rw(path: *const c_char, path_len: usize, out: *mut *mut marquet_file) -> i32 {
    guard(|| {
        let out = ffi::out_ptr(out, "out")?;
        let p = unsafe { ffi::name_arg(path, path_len, "path")? };
        if !std::path::Path::new(p).exists() {
            return Err(FfiError::new(marquet_status::MARQUET_STATUS_IO, format!("{p}: no such file")));
        }
        unsafe { open_with(path, path_len, out, |p| File::open_rw(p)) }
    })
}

/// Make a handle for the file that the caller's HDF5 file or group identifier `hid`
/// (a `hid_t`) belongs to, so that a program using HDF5 itself keeps its own arrays and
/// Marquet tables in one open file (HEP002 §1.1). Table paths without a leading '/' are
/// then relative to the group (`hid` a group) or to the root group (`hid` a file).
///
/// The handle holds a reference of its own to the file: the caller still closes `hid`
/// (before or after freeing the handle), and the file stays open until both are done.
/// Only a libmarquet built against the caller's shared HDF5 (`cargo build -p
/// marquet-capi --no-default-features` with HDF5_DIR, see docs/FFI.md) shares HDF5's
/// identifiers with the caller; the default build, whose HDF5 is linked statically
/// inside it, returns `MARQUET_STATUS_UNSUPPORTED`. An `hid` that is not a live file or
/// group identifier gives `MARQUET_STATUS_INVALID_ARGUMENT`.
#[no_mangle]
pub unsafe extern "C" fn marquet_file_from_hid(hid: i64, out: *mut *mut marquet_file) -> i32 {
    guard(|| {
        let out = ffi::out_ptr(out, "out")?;
        if cfg!(feature = "static-hdf5") {
            return Err(FfiError::new(
                marquet_status::MARQUET_STATUS_UNSUPPORTED,
                format!(
                    "hid_t {hid}: this libmarquet links its own static HDF5, whose identifiers are not the caller's; \
                     build it against the caller's shared HDF5 (cargo build -p marquet-capi --no-default-features, HDF5_DIR)"
                ),
            ));
        }
        let (f, base) = File::from_caller_id(hid)?;
        let h = ffi::into_handle(marquet_file { inner: Mutex::new(Some(Arc::new(f))), base });
        unsafe { ffi::write(out, h) };
        Ok(())
    })
}

/// Close the file handle: later calls with it return `MARQUET_STATUS_CLOSED`. The HDF5
/// file itself closes when tables opened from it are freed as well. Closing a closed
/// handle is OK. The handle must still be freed with `marquet_file_free`.
#[no_mangle]
pub unsafe extern "C" fn marquet_file_close(file: *mut marquet_file) -> i32 {
    guard(|| {
        let f = unsafe { ffi::handle(file)? };
        let taken = f.inner.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(h) = taken {
            h.flush()?;
        }
        Ok(())
    })
}

/// Free a file handle (NULL, and a handle already freed, are ignored).
#[no_mangle]
pub unsafe extern "C" fn marquet_file_free(file: *mut marquet_file) {
    guard_void(|| unsafe { ffi::free_handle(file) })
}

/// Flush the file's buffers to disk.
#[no_mangle]
pub unsafe extern "C" fn marquet_file_flush(file: *const marquet_file) -> i32 {
    guard(|| {
        let f = unsafe { ffi::handle(file)? }.get()?;
        f.flush()?;
        Ok(())
    })
}

/// Number of table groups in the file (a full traversal, HEP001 §1.3).
#[no_mangle]
pub unsafe extern "C" fn marquet_file_table_count(file: *const marquet_file, count: *mut i64) -> i32 {
    guard(|| {
        let count = ffi::out_ptr(count, "count")?;
        let f = unsafe { ffi::handle(file)? }.get()?;
        let n = f.tables()?.len();
        unsafe { ffi::write(count, n as i64) };
        Ok(())
    })
}

/// The path of table `index` (0-based, in traversal order) as a NUL-terminated string
/// in `buf`. `*needed` receives the size including the NUL on success and on
/// `MARQUET_STATUS_BUFFER_TOO_SMALL` (pass `buf` NULL and `buf_len` 0 to query it).
#[no_mangle]
pub unsafe extern "C" fn marquet_file_table_name(
    file: *const marquet_file,
    index: i64,
    buf: *mut c_char,
    buf_len: usize,
    needed: *mut usize,
) -> i32 {
    guard(|| {
        let f = unsafe { ffi::handle(file)? }.get()?;
        let names = f.tables()?;
        let i = ffi::count_arg(index, "index")?;
        let name = names.get(i as usize).ok_or_else(|| {
            FfiError::new(marquet_status::MARQUET_STATUS_OUT_OF_RANGE, format!("table index {index} of {} tables", names.len()))
        })?;
        unsafe { ffi::copy_str_out(name, buf, buf_len, needed) }
    })
}
