//! `marquet_batch`: rows to append, column by column. Every setter copies the caller's
//! arrays, so they may be reused or freed as soon as the setter returns.
//!
//! Validity is a byte array, one `uint8_t` per row: 0 = null (missing), anything else
//! = valid. A NULL validity pointer means every row is valid.

use std::ffi::c_char;

use mq::h5col::{Array, ColumnValues};
use mq::{GeoBatch, GeometryValues};

use crate::ffi::{self, Handle, Kind};
use crate::options::dims_from_c;
use crate::panic::{guard, guard_void};
use crate::status::{FfiError, FfiResult};

/// Rows to append to a table (opaque): values for each column, set by name. Created by
/// `marquet_batch_new`, appended with `marquet_table_append` (which does not consume
/// it), freed by `marquet_batch_free`.
pub struct marquet_batch {
    pub(crate) batch: GeoBatch,
}

impl Handle for marquet_batch {
    const KIND: Kind = Kind::Batch;
    const NAME: &'static str = "batch";
}

/// Create an empty batch.
#[no_mangle]
pub unsafe extern "C" fn marquet_batch_new(out: *mut *mut marquet_batch) -> i32 {
    guard(|| {
        let out = ffi::out_ptr(out, "out")?;
        unsafe { ffi::write(out, ffi::into_handle(marquet_batch { batch: GeoBatch::new() })) };
        Ok(())
    })
}

/// Free a batch (NULL is a no-op).
#[no_mangle]
pub unsafe extern "C" fn marquet_batch_free(batch: *mut marquet_batch) {
    guard_void(|| unsafe { ffi::free_handle(batch) })
}

/// Remove every column's values (the batch can then be filled again).
#[no_mangle]
pub unsafe extern "C" fn marquet_batch_clear(batch: *mut marquet_batch) -> i32 {
    guard(|| {
        let b = unsafe { ffi::handle_mut(batch)? };
        b.batch = GeoBatch::new();
        Ok(())
    })
}

/// With `fill` 1, columns of the table that the batch gives no values for are appended
/// as missing (fill values, null lists and geometries); with 0 (the default) every
/// column must be given.
#[no_mangle]
pub unsafe extern "C" fn marquet_batch_set_missing_rest(batch: *mut marquet_batch, fill: i32) -> i32 {
    guard(|| {
        let b = unsafe { ffi::handle_mut(batch)? };
        b.batch.columns.missing_rest = ffi::flag_arg(fill, "fill")?;
        Ok(())
    })
}

/// Read `nrows` validity bytes (NULL = all valid).
unsafe fn validity(valid: *const u8, n: usize) -> FfiResult<Option<Vec<bool>>> {
    Ok(unsafe { ffi::opt_slice_arg(valid, n, "valid")? }.map(|v| v.iter().map(|&b| b != 0).collect()))
}

/// Check `nrows + 1` offsets into a buffer of `data_len` bytes: non-negative,
/// non-decreasing, the last at most `data_len` (the first need not be 0).
unsafe fn offsets_arg<'a>(offsets: *const i64, nrows: usize, data_len: usize) -> FfiResult<&'a [i64]> {
    let n1 = nrows.checked_add(1).ok_or_else(|| FfiError::invalid("nrows is too large"))?;
    let o = unsafe { ffi::slice_arg(offsets, n1, "offsets")? };
    let mut prev = 0i64;
    for (i, &v) in o.iter().enumerate() {
        if v < 0 || v < prev {
            return Err(FfiError::invalid(format!("offsets[{i}] = {v} is negative or below offsets[{}]", i.saturating_sub(1))));
        }
        prev = v;
    }
    if o[nrows] as u64 > data_len as u64 {
        return Err(FfiError::invalid(format!("offsets[{nrows}] = {} is past the {data_len}-byte data buffer", o[nrows])));
    }
    Ok(o)
}

fn set_geometry(batch: *mut marquet_batch, column: *const c_char, column_len: usize, v: impl FnOnce() -> FfiResult<GeometryValues>) -> i32 {
    guard(|| {
        let b = unsafe { ffi::handle_mut(batch)? };
        let name = unsafe { ffi::name_arg(column, column_len, "column")? };
        let v = v()?;
        b.batch.columns.columns.remove(name);
        b.batch.geometries.insert(name.to_string(), v);
        Ok(())
    })
}

fn set_column(batch: *mut marquet_batch, column: *const c_char, column_len: usize, v: impl FnOnce() -> FfiResult<ColumnValues>) -> i32 {
    guard(|| {
        let b = unsafe { ffi::handle_mut(batch)? };
        let name = unsafe { ffi::name_arg(column, column_len, "column")? };
        let v = v()?;
        b.batch.geometries.remove(name);
        b.batch.columns.columns.insert(name.to_string(), v);
        Ok(())
    })
}

/// Set a geometry column's values as WKB: row `i` is `data[offsets[i] .. offsets[i+1]]`.
/// `offsets` has `nrows + 1` non-decreasing entries, the last at most `data_len`;
/// `valid` (NULL = all valid) has `nrows` bytes, 0 marking a null row (whose slice
/// is ignored). Values are checked when the batch is appended.
#[no_mangle]
pub unsafe extern "C" fn marquet_batch_set_wkb(
    batch: *mut marquet_batch,
    column: *const c_char,
    column_len: usize,
    data: *const u8,
    data_len: usize,
    offsets: *const i64,
    valid: *const u8,
    nrows: i64,
) -> i32 {
    set_geometry(batch, column, column_len, || {
        let n = ffi::len_arg(nrows, "nrows")?;
        let data = unsafe { ffi::slice_arg(data, data_len, "data")? };
        let o = unsafe { offsets_arg(offsets, n, data_len)? };
        let valid = unsafe { validity(valid, n)? };
        let rows = (0..n)
            .map(|i| {
                let ok = valid.as_ref().map(|v| v[i]).unwrap_or(true);
                ok.then(|| data[o[i] as usize..o[i + 1] as usize].to_vec())
            })
            .collect();
        Ok(GeometryValues::Wkb(rows))
    })
}

/// Set a geometry column's values as points: `x`, `y` (and `z` for XYZ / XYZM, `m` for
/// XYM / XYZM; otherwise pass NULL) hold `nrows` doubles; `dimensions` is a
/// `MARQUET_DIMENSIONS_*` value. An empty point is NaN x and y; `valid` (NULL = all
/// valid) marks null rows with 0.
#[no_mangle]
pub unsafe extern "C" fn marquet_batch_set_points(
    batch: *mut marquet_batch,
    column: *const c_char,
    column_len: usize,
    dimensions: i32,
    x: *const f64,
    y: *const f64,
    z: *const f64,
    m: *const f64,
    valid: *const u8,
    nrows: i64,
) -> i32 {
    set_geometry(batch, column, column_len, || {
        let n = ffi::len_arg(nrows, "nrows")?;
        let dims = dims_from_c(dimensions)?;
        let xs = unsafe { ffi::slice_arg(x, n, "x")? }.to_vec();
        let ys = unsafe { ffi::slice_arg(y, n, "y")? }.to_vec();
        let zs = unsafe { ffi::opt_slice_arg(z, n, "z")? }.map(|v| v.to_vec());
        let ms = unsafe { ffi::opt_slice_arg(m, n, "m")? }.map(|v| v.to_vec());
        if zs.is_some() != dims.has_z() {
            return Err(FfiError::invalid(format!("z must be {} for {dims:?} points", if dims.has_z() { "given" } else { "NULL" })));
        }
        if ms.is_some() != dims.has_m() {
            return Err(FfiError::invalid(format!("m must be {} for {dims:?} points", if dims.has_m() { "given" } else { "NULL" })));
        }
        let valid = unsafe { validity(valid, n)? };
        Ok(GeometryValues::Points { dims, x: xs, y: ys, z: zs, m: ms, valid })
    })
}

fn column_values(a: Array, valid: Option<Vec<bool>>) -> ColumnValues {
    // Always with flags, so a present value equal to the fill is refused (issue #38), never
    // stored as missing.
    let n = a.len();
    ColumnValues::Array { values: a, missing: Some(valid.map(|v| v.into_iter().map(|b| !b).collect()).unwrap_or_else(|| vec![false; n])) }
}

/// Set an attribute column's values from `nrows` int32 values; `valid` (NULL = all
/// valid) marks missing rows with 0 (written as the column's fill value).
#[no_mangle]
pub unsafe extern "C" fn marquet_batch_set_int32(
    batch: *mut marquet_batch,
    column: *const c_char,
    column_len: usize,
    values: *const i32,
    valid: *const u8,
    nrows: i64,
) -> i32 {
    set_column(batch, column, column_len, || {
        let n = ffi::len_arg(nrows, "nrows")?;
        let v = unsafe { ffi::slice_arg(values, n, "values")? };
        Ok(column_values(Array::from_i32(v), unsafe { validity(valid, n)? }))
    })
}

/// Set an attribute column's values from `nrows` int64 values (see
/// `marquet_batch_set_int32`).
#[no_mangle]
pub unsafe extern "C" fn marquet_batch_set_int64(
    batch: *mut marquet_batch,
    column: *const c_char,
    column_len: usize,
    values: *const i64,
    valid: *const u8,
    nrows: i64,
) -> i32 {
    set_column(batch, column, column_len, || {
        let n = ffi::len_arg(nrows, "nrows")?;
        let v = unsafe { ffi::slice_arg(values, n, "values")? };
        Ok(column_values(Array::from_i64(v), unsafe { validity(valid, n)? }))
    })
}

/// Set an attribute column's values from `nrows` doubles (see `marquet_batch_set_int32`).
#[no_mangle]
pub unsafe extern "C" fn marquet_batch_set_double(
    batch: *mut marquet_batch,
    column: *const c_char,
    column_len: usize,
    values: *const f64,
    valid: *const u8,
    nrows: i64,
) -> i32 {
    set_column(batch, column, column_len, || {
        let n = ffi::len_arg(nrows, "nrows")?;
        let v = unsafe { ffi::slice_arg(values, n, "values")? };
        Ok(column_values(Array::from_f64(v), unsafe { validity(valid, n)? }))
    })
}

/// Set a string column's values: row `i` is the UTF-8 text `chars[offsets[i] ..
/// offsets[i+1]]` (no NUL bytes inside); `offsets` has `nrows + 1` non-decreasing
/// entries, the last at most `chars_len`; `valid` as for `marquet_batch_set_int32`.
#[no_mangle]
pub unsafe extern "C" fn marquet_batch_set_strings(
    batch: *mut marquet_batch,
    column: *const c_char,
    column_len: usize,
    chars: *const c_char,
    chars_len: usize,
    offsets: *const i64,
    valid: *const u8,
    nrows: i64,
) -> i32 {
    set_column(batch, column, column_len, || {
        let n = ffi::len_arg(nrows, "nrows")?;
        let data = unsafe { ffi::slice_arg(chars.cast::<u8>(), chars_len, "chars")? };
        let o = unsafe { offsets_arg(offsets, n, chars_len)? };
        let valid = unsafe { validity(valid, n)? };
        let mut strs = Vec::with_capacity(n);
        for i in 0..n {
            let ok = valid.as_ref().map(|v| v[i]).unwrap_or(true);
            let s = if ok {
                let b = &data[o[i] as usize..o[i + 1] as usize];
                let s = std::str::from_utf8(b).map_err(|e| FfiError::invalid(format!("string row {i} is not valid UTF-8: {e}")))?;
                if s.contains('\0') {
                    return Err(FfiError::invalid(format!("string row {i} contains a NUL byte")));
                }
                s
            } else {
                ""
            };
            strs.push(s);
        }
        Ok(column_values(Array::from_strings(&strs, true), valid))
    })
}
