//! Pointer and length helpers: every raw pointer from C is checked here (NULL,
//! alignment, length overflow) before it becomes a Rust reference or slice, and every
//! handle is checked against the registry of live handles before it is dereferenced.

use std::collections::BTreeMap;
use std::ffi::c_char;
use std::sync::{Mutex, MutexGuard};

use crate::status::{marquet_status, FfiError, FfiResult};

// ---- handles -------------------------------------------------------------------------

/// Which kind of object a handle points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `marquet_file`: an open HDF5 file.
    File,
    /// `marquet_table`: an open Marquet table.
    Table,
    /// `marquet_geometry_column_options`: settings of a new geometry column.
    GeometryColumnOptions,
    /// `marquet_geometry_info`: the description of one geometry column.
    GeometryInfo,
    /// `marquet_batch`: rows to append.
    Batch,
    /// `marquet_report`: a validation report.
    Report,
    /// `marquet_query_result`: the rows and statistics of a query.
    QueryResult,
    /// `marquet_spatial_reader`: a geometry column opened for many queries.
    SpatialReader,
    /// `marquet_arrow_writer`: Arrow record batches on their way into a table.
    ArrowWriter,
}

/// An object handed to C as an opaque pointer.
pub trait Handle: Sized {
    /// The kind recorded in the registry of live handles for this type.
    const KIND: Kind;
    /// The C type name, for messages.
    const NAME: &'static str;
}

/// Addresses of the live handles and their kinds. A pointer that is not here (never
/// created, or already freed) is refused with `MARQUET_STATUS_INVALID_HANDLE` without
/// being dereferenced, and a second `_free` is a no-op. (An address reused by a later
/// allocation of the same kind cannot be told apart: the usual C rules still apply.)
// A BTreeMap rather than a HashMap: its nodes are pointed at from their start, so leak
// checkers (valgrind) see the registry as reachable rather than "possibly lost".
static LIVE: Mutex<BTreeMap<usize, Kind>> = Mutex::new(BTreeMap::new());

fn live() -> MutexGuard<'static, BTreeMap<usize, Kind>> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Box `v`, register it, and return the pointer for C.
pub fn into_handle<T: Handle>(v: T) -> *mut T {
    let p = Box::into_raw(Box::new(v));
    live().insert(p as usize, T::KIND);
    p
}

fn check_live<T: Handle>(p: *const T) -> FfiResult {
    if p.is_null() {
        return Err(FfiError::null(T::NAME));
    }
    let found = live().get(&(p as usize)).copied();
    match found {
        Some(k) if k == T::KIND => Ok(()),
        Some(k) => Err(FfiError::new(
            marquet_status::MARQUET_STATUS_INVALID_HANDLE,
            format!("{} argument is a {k:?} handle", T::NAME),
        )),
        None => Err(FfiError::new(
            marquet_status::MARQUET_STATUS_INVALID_HANDLE,
            format!("{} is not a live handle (already freed?)", T::NAME),
        )),
    }
}

/// Borrow a live handle.
///
/// # Safety
/// `p` is NULL or was returned by [`into_handle`]; the caller does not free it while
/// the reference lives (the C contract of every function).
pub unsafe fn handle<'a, T: Handle>(p: *const T) -> FfiResult<&'a T> {
    check_live(p)?;
    Ok(unsafe { &*p })
}

/// Borrow a live handle mutably (batches and options: one thread at a time).
///
/// # Safety
/// As [`handle`], and no other reference to the object exists during the call.
pub unsafe fn handle_mut<'a, T: Handle>(p: *mut T) -> FfiResult<&'a mut T> {
    check_live(p)?;
    Ok(unsafe { &mut *p })
}

/// Unregister and drop a handle; NULL, unknown and already-freed pointers are ignored.
///
/// # Safety
/// `p` is NULL or was returned by [`into_handle`] for a `T`.
pub unsafe fn free_handle<T: Handle>(p: *mut T) {
    if p.is_null() {
        return;
    }
    let removed = {
        let mut m = live();
        m.get(&(p as usize)) == Some(&T::KIND) && m.remove(&(p as usize)).is_some()
    };
    if removed {
        drop(unsafe { Box::from_raw(p) });
    }
}

/// Number of live handles of every kind (for leak tests).
pub fn live_count() -> usize {
    live().len()
}

// ---- inputs --------------------------------------------------------------------------

/// A string given as pointer + length (UTF-8, no NUL needed). NULL is accepted only
/// with length 0.
///
/// # Safety
/// `p` points at `len` readable bytes.
pub unsafe fn str_arg<'a>(p: *const c_char, len: usize, what: &str) -> FfiResult<&'a str> {
    let b = unsafe { slice_arg(p.cast::<u8>(), len, what)? };
    std::str::from_utf8(b).map_err(|e| FfiError::invalid(format!("{what} is not valid UTF-8: {e}")))
}

/// A non-empty name (column or table) given as pointer + length.
///
/// # Safety
/// As [`str_arg`].
pub unsafe fn name_arg<'a>(p: *const c_char, len: usize, what: &str) -> FfiResult<&'a str> {
    let s = unsafe { str_arg(p, len, what)? };
    if s.is_empty() {
        return Err(FfiError::invalid(format!("{what} is empty")));
    }
    if s.contains('\0') {
        return Err(FfiError::invalid(format!("{what} contains a NUL byte")));
    }
    Ok(s)
}

/// An optional name: NULL with length 0 is `None`, anything else as [`name_arg`].
///
/// # Safety
/// As [`str_arg`].
pub unsafe fn opt_name_arg<'a>(p: *const c_char, len: usize, what: &str) -> FfiResult<Option<&'a str>> {
    if p.is_null() && len == 0 {
        return Ok(None);
    }
    unsafe { name_arg(p, len, what) }.map(Some)
}

fn check_span<T>(p: *const T, len: usize, what: &str) -> FfiResult {
    if p.is_null() {
        if len == 0 {
            return Ok(());
        }
        return Err(FfiError::null(what));
    }
    if !(p as usize).is_multiple_of(std::mem::align_of::<T>()) {
        return Err(FfiError::invalid(format!("{what} is not aligned for its element type")));
    }
    match len.checked_mul(std::mem::size_of::<T>()) {
        Some(b) if b <= isize::MAX as usize => Ok(()),
        _ => Err(FfiError::invalid(format!("{what}: length {len} is too large"))),
    }
}

/// A read-only array given as pointer + element count. NULL is accepted only with
/// length 0 (giving an empty slice).
///
/// # Safety
/// `p` points at `len` readable, initialized elements.
pub unsafe fn slice_arg<'a, T>(p: *const T, len: usize, what: &str) -> FfiResult<&'a [T]> {
    check_span(p, len, what)?;
    if len == 0 {
        return Ok(&[]);
    }
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// An optional read-only array: NULL gives `None`.
///
/// # Safety
/// As [`slice_arg`].
pub unsafe fn opt_slice_arg<'a, T>(p: *const T, len: usize, what: &str) -> FfiResult<Option<&'a [T]>> {
    if p.is_null() {
        return Ok(None);
    }
    unsafe { slice_arg(p, len, what).map(Some) }
}

/// A writable array given as pointer + element count (NULL only with length 0).
///
/// # Safety
/// `p` points at `len` writable elements not aliased during the call.
pub unsafe fn out_slice<'a, T>(p: *mut T, len: usize, what: &str) -> FfiResult<&'a mut [T]> {
    check_span(p, len, what)?;
    if len == 0 {
        return Ok(&mut []);
    }
    Ok(unsafe { std::slice::from_raw_parts_mut(p, len) })
}

/// An optional writable array: NULL gives `None`.
///
/// # Safety
/// As [`out_slice`].
pub unsafe fn opt_out_slice<'a, T>(p: *mut T, len: usize, what: &str) -> FfiResult<Option<&'a mut [T]>> {
    if p.is_null() {
        return Ok(None);
    }
    unsafe { out_slice(p, len, what).map(Some) }
}

/// Check that an output pointer is not NULL (before any work is done).
pub fn out_ptr<T>(p: *mut T, what: &str) -> FfiResult<*mut T> {
    if p.is_null() {
        return Err(FfiError::null(what));
    }
    if !(p as usize).is_multiple_of(std::mem::align_of::<T>()) {
        return Err(FfiError::invalid(format!("{what} is not aligned")));
    }
    Ok(p)
}

/// Write an output value through a pointer checked by [`out_ptr`].
///
/// # Safety
/// `p` came from [`out_ptr`] and is writable.
pub unsafe fn write<T>(p: *mut T, v: T) {
    unsafe { p.write(v) }
}

/// Write an optional output (`needed` arguments): NULL means the caller does not want it.
///
/// # Safety
/// `p` is NULL or writable and aligned.
pub unsafe fn write_opt<T>(p: *mut T, v: T) {
    if !p.is_null() {
        unsafe { p.write(v) }
    }
}

/// A count or row number from C (`int64_t`) as `u64`; negative values are refused.
pub fn count_arg(v: i64, what: &str) -> FfiResult<u64> {
    u64::try_from(v).map_err(|_| FfiError::invalid(format!("{what} is negative ({v})")))
}

/// A count from C as `usize` (for in-memory lengths).
pub fn len_arg(v: i64, what: &str) -> FfiResult<usize> {
    let u = count_arg(v, what)?;
    usize::try_from(u).map_err(|_| FfiError::invalid(format!("{what} ({v}) does not fit in memory")))
}

/// A count from Rust as `int64_t`.
pub fn to_i64(v: u64, what: &str) -> FfiResult<i64> {
    i64::try_from(v).map_err(|_| FfiError::new(marquet_status::MARQUET_STATUS_INTERNAL, format!("{what} {v} exceeds int64_t")))
}

/// A `0`/`1` flag from C; other values are refused.
pub fn flag_arg(v: i32, what: &str) -> FfiResult<bool> {
    match v {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(FfiError::invalid(format!("{what} must be 0 or 1, got {v}"))),
    }
}

// ---- outputs -------------------------------------------------------------------------

/// The `BUFFER_TOO_SMALL` error for a buffer of `len` where `need` is required.
pub fn too_small(what: &str, len: usize, need: usize) -> FfiError {
    FfiError::new(
        marquet_status::MARQUET_STATUS_BUFFER_TOO_SMALL,
        format!("{what} holds {len} bytes, {need} are needed"),
    )
}

/// Copy `s` NUL-terminated into `buf` (`len` bytes). `*needed` = `s.len() + 1` is
/// written (if `needed` is not NULL) on success and on `BUFFER_TOO_SMALL`; `buf` is
/// written only on success.
///
/// # Safety
/// `buf` points at `len` writable bytes; `needed` is NULL or writable.
pub unsafe fn copy_str_out(s: &str, buf: *mut c_char, len: usize, needed: *mut usize) -> FfiResult {
    let need = s.len() + 1;
    if !needed.is_null() && !(needed as usize).is_multiple_of(std::mem::align_of::<usize>()) {
        return Err(FfiError::invalid("needed is not aligned"));
    }
    let out = unsafe { out_slice(buf.cast::<u8>(), len, "buf")? };
    unsafe { write_opt(needed, need) };
    if len < need {
        return Err(too_small("buf", len, need));
    }
    out[..s.len()].copy_from_slice(s.as_bytes());
    out[s.len()] = 0;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_is_only_accepted_with_length_zero() {
        unsafe {
            assert_eq!(slice_arg::<u8>(std::ptr::null(), 0, "x").unwrap(), &[] as &[u8]);
            assert_eq!(slice_arg::<u8>(std::ptr::null(), 1, "x").unwrap_err().status, marquet_status::MARQUET_STATUS_NULL_POINTER);
            let v = [1u64, 2];
            let p = (v.as_ptr() as *const u8).add(1) as *const u64;
            assert_eq!(slice_arg(p, 1, "x").unwrap_err().status, marquet_status::MARQUET_STATUS_INVALID_ARGUMENT);
            assert_eq!(slice_arg(v.as_ptr(), usize::MAX, "x").unwrap_err().status, marquet_status::MARQUET_STATUS_INVALID_ARGUMENT);
        }
    }

    #[test]
    fn copy_str_out_reports_the_size_and_writes_only_on_success() {
        let mut buf = [b'x' as c_char; 4];
        let mut need = 0usize;
        unsafe {
            let e = copy_str_out("hello", buf.as_mut_ptr(), buf.len(), &mut need).unwrap_err();
            assert_eq!((e.status, need), (marquet_status::MARQUET_STATUS_BUFFER_TOO_SMALL, 6));
            assert_eq!(buf, [b'x' as c_char; 4]);
            copy_str_out("abc", buf.as_mut_ptr(), buf.len(), &mut need).unwrap();
            assert_eq!((buf, need), ([b'a' as c_char, b'b' as c_char, b'c' as c_char, 0], 4));
        }
    }

    #[test]
    fn negative_counts_are_refused() {
        assert!(count_arg(-1, "n").is_err());
        assert_eq!(count_arg(5, "n").unwrap(), 5);
        assert!(flag_arg(2, "f").is_err());
    }
}
