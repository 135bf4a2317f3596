//! `marquet_table`: a Marquet table in an open file: columns, append, and reads into
//! caller buffers.

use std::ffi::c_char;
use std::sync::{Arc, Mutex, MutexGuard};

use mq::h5col::{Array, ColumnSpec, ScalarType};
use mq::File;
use mq::ValueType;
use mq::Table as MarquetTable;
use mq::ColumnReaders;
use mq::query::{Query, QueryResult};

use crate::batch::marquet_batch;
use crate::ffi::{self, Handle, Kind};
use crate::file::marquet_file;
use crate::geometry_info::marquet_geometry_info;
use crate::options::marquet_geometry_column_options;
use crate::panic::{guard, guard_void};
use crate::status::{marquet_status, FfiError, FfiResult};

/// Value types of attribute columns.
#[allow(non_camel_case_types)]
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum marquet_type {
    /// Signed 32-bit integers (fill / missing value -2147483647).
    MARQUET_TYPE_INT32 = 1,
    /// Signed 64-bit integers (fill / missing value -9223372036854775807).
    MARQUET_TYPE_INT64 = 2,
    /// IEEE doubles (fill / missing value 9.969209968386869e36).
    MARQUET_TYPE_DOUBLE = 3,
    /// UTF-8 strings of bounded length (fill / missing value: the empty string).
    MARQUET_TYPE_STRING = 4,
    /// A geometry column (read with `marquet_table_read_wkb` / `_read_points`).
    MARQUET_TYPE_GEOMETRY = 5,
    /// Any other column (a covering column, a list column, other numeric types...).
    MARQUET_TYPE_OTHER = 99,
}

/// A Marquet table (opaque), from `marquet_table_create` or `marquet_table_open`;
/// released by `marquet_table_free`. It keeps its file open until freed.
pub struct marquet_table {
    /// The warm readers of the geometry columns queried so far (`ColumnReaders::query`:
    /// held when the file was opened read-only, issue #33).
    readers: ColumnReaders,
    inner: Mutex<MarquetTable>,
    /// The Arrow plans of the column selections streamed so far (`crate::arrow`; they
    /// hold opened columns, so they go before the file).
    #[cfg(feature = "geoparquet")]
    pub(crate) arrow_plans: mq::convert::PlanCache,
    _file: Arc<File>,
}

impl Handle for marquet_table {
    const KIND: Kind = Kind::Table;
    const NAME: &'static str = "table";
}

impl marquet_table {
    /// The file the table keeps open (a spatial reader keeps it open too).
    pub(crate) fn file(&self) -> Arc<File> {
        self._file.clone()
    }

    /// The table, locked for this call (a poisoned lock is recovered: every entry point
    /// leaves the table consistent or returns an error).
    pub fn lock(&self) -> MutexGuard<'_, MarquetTable> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Spatial query `q` of geometry column `col` (`ColumnReaders::query`).
    pub(crate) fn query(&self, col: &str, q: &Query) -> mq::Result<QueryResult> {
        self.readers.query(&self._file, &self.lock(), col, q)
    }
}

unsafe fn table_open(
    file: *const marquet_file,
    path: *const c_char,
    path_len: usize,
    out: *mut *mut marquet_table,
    how: fn(&File, &str) -> mq::Result<MarquetTable>,
) -> FfiResult {
    let out = ffi::out_ptr(out, "out")?;
    let fh = unsafe { ffi::handle(file)? };
    let f = fh.get()?;
    let path = fh.resolve(unsafe { ffi::name_arg(path, path_len, "path")? });
    let t = how(&f, &path)?;
    let h = ffi::into_handle(marquet_table {
        readers: ColumnReaders::new(),
        inner: Mutex::new(t),
        #[cfg(feature = "geoparquet")]
        arrow_plans: Default::default(),
        _file: f,
    });
    unsafe { ffi::write(out, h) };
    Ok(())
}

/// Create an empty table group at `path` (e.g. "/stations"; intermediate groups are
/// created; a path without a leading '/' is relative to the file handle's group, see
/// `marquet_file_from_hid`). It becomes a Marquet table when its first geometry column is added.
#[no_mangle]
pub unsafe extern "C" fn marquet_table_create(
    file: *const marquet_file,
    path: *const c_char,
    path_len: usize,
    out: *mut *mut marquet_table,
) -> i32 {
    guard(|| unsafe { table_open(file, path, path_len, out, MarquetTable::create) })
}

/// Open the Marquet table at `path`. A group that is not an H5Col table, or an H5Col
/// table without MARQUET_VERSION, gives `MARQUET_STATUS_NOT_A_TABLE`.
#[no_mangle]
pub unsafe extern "C" fn marquet_table_open(
    file: *const marquet_file,
    path: *const c_char,
    path_len: usize,
    out: *mut *mut marquet_table,
) -> i32 {
    guard(|| unsafe { table_open(file, path, path_len, out, MarquetTable::open) })
}

/// Free a table handle (NULL is a no-op).
#[no_mangle]
pub unsafe extern "C" fn marquet_table_free(table: *mut marquet_table) {
    guard_void(|| unsafe { ffi::free_handle(table) })
}

/// Number of committed rows (NROWS).
#[no_mangle]
pub unsafe extern "C" fn marquet_table_nrows(table: *const marquet_table, nrows: *mut i64) -> i32 {
    guard(|| {
        let out = ffi::out_ptr(nrows, "nrows")?;
        let t = unsafe { ffi::handle(table)? }.lock();
        let n = ffi::to_i64(t.nrows()?, "nrows")?;
        unsafe { ffi::write(out, n) };
        Ok(())
    })
}

/// The table's HDF5 path as a NUL-terminated string (see `marquet_file_table_name`
/// for the `buf` / `needed` convention).
#[no_mangle]
pub unsafe extern "C" fn marquet_table_path(
    table: *const marquet_table,
    buf: *mut c_char,
    buf_len: usize,
    needed: *mut usize,
) -> i32 {
    guard(|| {
        let t = unsafe { ffi::handle(table)? }.lock();
        unsafe { ffi::copy_str_out(t.path(), buf, buf_len, needed) }
    })
}

/// Add an attribute column of `value_type` `MARQUET_TYPE_INT32`, `_INT64` or `_DOUBLE`.
/// Rows already in the table read as missing.
#[no_mangle]
pub unsafe extern "C" fn marquet_table_add_column(
    table: *const marquet_table,
    name: *const c_char,
    name_len: usize,
    value_type: i32,
) -> i32 {
    guard(|| {
        let t = unsafe { ffi::handle(table)? }.lock();
        let name = unsafe { ffi::name_arg(name, name_len, "name")? };
        let ty = match value_type {
            1 => ScalarType::Int32,
            2 => ScalarType::Int64,
            3 => ScalarType::Float64,
            4 => return Err(FfiError::invalid("use marquet_table_add_string_column for strings")),
            _ => return Err(FfiError::invalid(format!("value_type {value_type} is not MARQUET_TYPE_INT32, _INT64 or _DOUBLE"))),
        };
        t.add_column(name, &ColumnSpec::new(ty.dtype()?))?;
        Ok(())
    })
}

/// Add a UTF-8 string attribute column holding values of at most `max_bytes` bytes
/// (stored as fixed-length, NUL-terminated strings of `max_bytes + 1` bytes; the empty
/// string is the missing value).
#[no_mangle]
pub unsafe extern "C" fn marquet_table_add_string_column(
    table: *const marquet_table,
    name: *const c_char,
    name_len: usize,
    max_bytes: i64,
) -> i32 {
    guard(|| {
        let t = unsafe { ffi::handle(table)? }.lock();
        let name = unsafe { ffi::name_arg(name, name_len, "name")? };
        let n = ffi::len_arg(max_bytes, "max_bytes")?;
        t.add_column(name, &ColumnSpec::new(ScalarType::String { max_bytes: n }.dtype()?))?;
        Ok(())
    })
}

/// Add a geometry column described by `options` (NULL = the defaults of
/// `marquet_geometry_column_options_new`). The options are not consumed.
#[no_mangle]
pub unsafe extern "C" fn marquet_table_add_geometry_column(
    table: *const marquet_table,
    name: *const c_char,
    name_len: usize,
    options: *const marquet_geometry_column_options,
) -> i32 {
    guard(|| {
        let h = unsafe { ffi::handle(table)? };
        let name = unsafe { ffi::name_arg(name, name_len, "name")? };
        let spec = if options.is_null() {
            mq::GeometryColumnSpec::default().with_form(mq::StorageForm::VarWkb)
        } else {
            unsafe { ffi::handle(options)? }.spec.clone()
        };
        h.lock().add_geometry_column(name, &spec)?;
        Ok(())
    })
}

fn names_of(table: *const marquet_table, geometry: bool) -> FfiResult<Vec<String>> {
    let t = unsafe { ffi::handle(table)? }.lock();
    Ok(if geometry { t.geometry_column_names()? } else { t.column_names()? })
}

fn name_at(names: &[String], index: i64) -> FfiResult<&str> {
    let i = ffi::count_arg(index, "index")?;
    names.get(i as usize).map(|s| s.as_str()).ok_or_else(|| {
        FfiError::new(marquet_status::MARQUET_STATUS_OUT_OF_RANGE, format!("column index {index} of {} columns", names.len()))
    })
}

/// Number of columns of every kind (COLUMN_ORDER: attribute, geometry and covering).
#[no_mangle]
pub unsafe extern "C" fn marquet_table_column_count(table: *const marquet_table, count: *mut i64) -> i32 {
    guard(|| {
        let out = ffi::out_ptr(count, "count")?;
        let n = names_of(table, false)?.len();
        unsafe { ffi::write(out, n as i64) };
        Ok(())
    })
}

/// The name of column `index` (0-based, COLUMN_ORDER) as a NUL-terminated string (see
/// `marquet_file_table_name` for the `buf` / `needed` convention).
#[no_mangle]
pub unsafe extern "C" fn marquet_table_column_name(
    table: *const marquet_table,
    index: i64,
    buf: *mut c_char,
    buf_len: usize,
    needed: *mut usize,
) -> i32 {
    guard(|| {
        let names = names_of(table, false)?;
        unsafe { ffi::copy_str_out(name_at(&names, index)?, buf, buf_len, needed) }
    })
}

/// Number of geometry columns.
#[no_mangle]
pub unsafe extern "C" fn marquet_table_geometry_column_count(table: *const marquet_table, count: *mut i64) -> i32 {
    guard(|| {
        let out = ffi::out_ptr(count, "count")?;
        let n = names_of(table, true)?.len();
        unsafe { ffi::write(out, n as i64) };
        Ok(())
    })
}

/// The name of geometry column `index` (0 = the primary one, GEOMETRY_COLUMNS order).
#[no_mangle]
pub unsafe extern "C" fn marquet_table_geometry_column_name(
    table: *const marquet_table,
    index: i64,
    buf: *mut c_char,
    buf_len: usize,
    needed: *mut usize,
) -> i32 {
    guard(|| {
        let names = names_of(table, true)?;
        unsafe { ffi::copy_str_out(name_at(&names, index)?, buf, buf_len, needed) }
    })
}

/// The value type of a column (a `MARQUET_TYPE_*` value).
#[no_mangle]
pub unsafe extern "C" fn marquet_table_column_type(
    table: *const marquet_table,
    column: *const c_char,
    column_len: usize,
    value_type: *mut i32,
) -> i32 {
    guard(|| {
        let out = ffi::out_ptr(value_type, "value_type")?;
        let t = unsafe { ffi::handle(table)? }.lock();
        let name = unsafe { ffi::name_arg(column, column_len, "column")? };
        use marquet_type::*;
        let ty = match t.value_type(name)? {
            ValueType::Geometry => MARQUET_TYPE_GEOMETRY,
            ValueType::Scalar(ScalarType::Int32) => MARQUET_TYPE_INT32,
            ValueType::Scalar(ScalarType::Int64) => MARQUET_TYPE_INT64,
            ValueType::Scalar(ScalarType::Float64) => MARQUET_TYPE_DOUBLE,
            ValueType::Scalar(ScalarType::String { .. }) => MARQUET_TYPE_STRING,
            _ => MARQUET_TYPE_OTHER,
        };
        unsafe { ffi::write(out, ty as i32) };
        Ok(())
    })
}

/// Append the batch's rows (HEP002 §11.1): every value is checked before the file
/// changes; BBOX, GEOMETRY_TYPES and covering columns are maintained; NROWS is
/// committed last. On success `*nrows` (if not NULL) receives the new row count. The
/// batch is not consumed.
#[no_mangle]
pub unsafe extern "C" fn marquet_table_append(table: *const marquet_table, batch: *const marquet_batch, nrows: *mut i64) -> i32 {
    guard(|| {
        let t = unsafe { ffi::handle(table)? };
        let b = unsafe { ffi::handle(batch)? };
        let n = t.lock().append(&b.batch)?;
        let n = ffi::to_i64(n, "nrows")?;
        unsafe { ffi::write_opt(nrows, n) };
        Ok(())
    })
}

/// What this table handle's appends and geometry updates do with polygon rings wound
/// against a column's `ORIENTATION = COUNTERCLOCKWISE` (HEP002 §9.2): `rewind` 0 refuses
/// them with `MARQUET_STATUS_INVALID_ARGUMENT`, naming the row (the default); 1 reverses
/// them (exterior rings counterclockwise, holes clockwise).
#[no_mangle]
pub unsafe extern "C" fn marquet_table_set_rewind_rings(table: *const marquet_table, rewind: i32) -> i32 {
    guard(|| {
        let v = match rewind {
            0 => mq::OrientationOnWrite::Refuse,
            1 => mq::OrientationOnWrite::Rewind,
            _ => return Err(FfiError::invalid(format!("rewind {rewind} is neither 0 nor 1"))),
        };
        unsafe { ffi::handle(table)? }.lock().set_orientation_on_write(v);
        Ok(())
    })
}

/// Write the batch's rows the fast, default way (`MarquetTable::write`, the one writer): rows in
/// Hilbert order of the primary geometry column (HEP002 §10.6) — in the order given when the
/// table keeps its input order (converted with `--keep-order`); written into an empty table
/// whose geometry columns have no spatial index, the default layout's indexes are declared
/// first (a BLOCK_BBOX, plus a PACKED_RTREE for non-point columns; §10.3, §10.4) and built
/// by this write. Otherwise as `marquet_table_append`: every value is checked before the
/// file changes, NROWS is committed last, and a valid R-tree is rebuilt once. On success
/// `*nrows` (if not NULL) receives the new row count. The batch is not consumed.
#[no_mangle]
pub unsafe extern "C" fn marquet_table_write(table: *const marquet_table, batch: *const marquet_batch, nrows: *mut i64) -> i32 {
    guard(|| {
        let t = unsafe { ffi::handle(table)? };
        let b = unsafe { ffi::handle(batch)? };
        let n = t.lock().write(&b.batch, mq::WriteOptions::default())?;
        let n = ffi::to_i64(n, "nrows")?;
        unsafe { ffi::write_opt(nrows, n) };
        Ok(())
    })
}

/// Describe geometry column `column`; free the result with `marquet_geometry_info_free`.
#[no_mangle]
pub unsafe extern "C" fn marquet_table_geometry_info(
    table: *const marquet_table,
    column: *const c_char,
    column_len: usize,
    out: *mut *mut marquet_geometry_info,
) -> i32 {
    guard(|| {
        let out = ffi::out_ptr(out, "out")?;
        let t = unsafe { ffi::handle(table)? }.lock();
        let name = unsafe { ffi::name_arg(column, column_len, "column")? };
        let info = t.geometry_column(name)?;
        unsafe { ffi::write(out, ffi::into_handle(marquet_geometry_info { info })) };
        Ok(())
    })
}

// ---- reads -----------------------------------------------------------------------------

/// Check `[start, end)` against NROWS; returns `(start, end, end - start)`.
fn range(t: &MarquetTable, start: i64, end: i64) -> FfiResult<(u64, u64, usize)> {
    let n = t.nrows()?;
    let s = ffi::count_arg(start, "start")?;
    let e = ffi::count_arg(end, "end")?;
    if s > e || e > n {
        return Err(FfiError::new(
            marquet_status::MARQUET_STATUS_OUT_OF_RANGE,
            format!("{}: rows {start}..{end} out of range for {n} rows", t.path()),
        ));
    }
    let k = usize::try_from(e - s).map_err(|_| FfiError::invalid("row range does not fit in memory"))?;
    Ok((s, e, k))
}

/// Write `valid` flags as bytes.
fn put_valid(out: Option<&mut [u8]>, valid: impl Iterator<Item = bool>) {
    if let Some(o) = out {
        for (d, v) in o.iter_mut().zip(valid) {
            *d = v as u8;
        }
    }
}

/// Read rows `[start, end)` of a geometry column as ISO WKB (point columns are encoded
/// as little-endian point WKB; an empty point has NaN coordinates).
///
/// On success `buf` holds the values back to back, `offsets` (`end - start + 1`
/// entries) gives row `i` as `buf[offsets[i] .. offsets[i+1]]` with `offsets[0] = 0`,
/// and `valid` (`end - start` bytes; may be NULL) is 0 for null rows (whose slice is
/// empty). `*needed` (if not NULL) receives the byte size of the values, on success and
/// on `MARQUET_STATUS_BUFFER_TOO_SMALL`; pass `buf` NULL and `buf_len` 0 to query it.
/// Nothing else is written unless the call succeeds.
#[no_mangle]
pub unsafe extern "C" fn marquet_table_read_wkb(
    table: *const marquet_table,
    column: *const c_char,
    column_len: usize,
    start: i64,
    end: i64,
    buf: *mut u8,
    buf_len: usize,
    offsets: *mut i64,
    valid: *mut u8,
    needed: *mut usize,
) -> i32 {
    guard(|| {
        let t = unsafe { ffi::handle(table)? }.lock();
        let name = unsafe { ffi::name_arg(column, column_len, "column")? };
        let (s, e, k) = range(&t, start, end)?;
        unsafe { ffi::out_slice(offsets, k + 1, "offsets")? };
        unsafe { ffi::opt_out_slice(valid, k, "valid")? };
        unsafe { ffi::out_slice(buf, buf_len, "buf")? };
        let w = t.read_wkb(name, s, e)?;
        unsafe { copy_wkb_out(&w, buf, buf_len, offsets, valid, needed) }
    })
}

/// Copy `w` out as `marquet_table_read_wkb` and `marquet_query_result_wkb` lay it out:
/// values into `buf`, `w.len() + 1` offsets from 0, `w.len()` valid bytes (optional),
/// the values' size into `*needed` (optional) also when `buf` is too small.
///
/// # Safety
/// As those functions' arguments.
pub(crate) unsafe fn copy_wkb_out(w: &mq::WkbBuffer, buf: *mut u8, buf_len: usize, offsets: *mut i64, valid: *mut u8, needed: *mut usize) -> FfiResult {
    let k = w.len();
    let offsets = unsafe { ffi::out_slice(offsets, k + 1, "offsets")? };
    let valid = unsafe { ffi::opt_out_slice(valid, k, "valid")? };
    let buf = unsafe { ffi::out_slice(buf, buf_len, "buf")? };
    let base = w.offsets.first().copied().unwrap_or(0);
    let need = w.bytes.len();
    unsafe { ffi::write_opt(needed, need) };
    if buf_len < need {
        return Err(ffi::too_small("buf", buf_len, need));
    }
    buf[..need].copy_from_slice(&w.bytes);
    for (d, o) in offsets.iter_mut().zip(&w.offsets) {
        *d = (o - base) as i64;
    }
    put_valid(valid, w.valid.iter().copied());
    Ok(())
}

/// Read rows `[start, end)` of a point column as coordinate arrays of `end - start`
/// doubles each. `x` and `y` are required; `z` and `m` may be NULL (and receive NaN
/// when the column has no such ordinate); `valid` may be NULL. Null rows have
/// valid = 0 and unspecified coordinates; empty points are NaN x and y.
#[no_mangle]
pub unsafe extern "C" fn marquet_table_read_points(
    table: *const marquet_table,
    column: *const c_char,
    column_len: usize,
    start: i64,
    end: i64,
    x: *mut f64,
    y: *mut f64,
    z: *mut f64,
    m: *mut f64,
    valid: *mut u8,
) -> i32 {
    guard(|| {
        let t = unsafe { ffi::handle(table)? }.lock();
        let name = unsafe { ffi::name_arg(column, column_len, "column")? };
        let (s, e, k) = range(&t, start, end)?;
        let xo = unsafe { ffi::out_slice(x, k, "x")? };
        let yo = unsafe { ffi::out_slice(y, k, "y")? };
        let zo = unsafe { ffi::opt_out_slice(z, k, "z")? };
        let mo = unsafe { ffi::opt_out_slice(m, k, "m")? };
        let vo = unsafe { ffi::opt_out_slice(valid, k, "valid")? };
        let p = t.read_points(name, s, e)?;
        xo.copy_from_slice(&p.x);
        yo.copy_from_slice(&p.y);
        for (o, src) in [(zo, &p.z), (mo, &p.m)] {
            if let Some(o) = o {
                match src {
                    Some(v) => o.copy_from_slice(v),
                    None => o.fill(f64::NAN),
                }
            }
        }
        put_valid(vo, p.valid.iter().copied());
        Ok(())
    })
}

/// Read an attribute column's rows and their missing flags (missing = fill value).
fn read_attr(t: &MarquetTable, name: &str, s: u64, e: u64) -> FfiResult<(Array, Vec<bool>)> {
    Ok(t.read_with_missing(name, s, e)?)
}

/// The body of the numeric reads: convert every row with `conv` before writing.
#[allow(clippy::too_many_arguments)]
unsafe fn read_numeric<T: Copy>(
    table: *const marquet_table,
    column: *const c_char,
    column_len: usize,
    start: i64,
    end: i64,
    values: *mut T,
    valid: *mut u8,
    type_name: &str,
    conv: fn(&Array, usize) -> Option<T>,
) -> i32 {
    guard(|| {
        let t = unsafe { ffi::handle(table)? }.lock();
        let name = unsafe { ffi::name_arg(column, column_len, "column")? };
        let (s, e, k) = range(&t, start, end)?;
        let vo = unsafe { ffi::out_slice(values, k, "values")? };
        let va = unsafe { ffi::opt_out_slice(valid, k, "valid")? };
        let (a, miss) = read_attr(&t, name, s, e)?;
        let mut tmp = Vec::with_capacity(k);
        for i in 0..k {
            tmp.push(conv(&a, i).ok_or_else(|| {
                FfiError::invalid(format!(
                    "{} row {}: a {:?} value cannot be read as {type_name}",
                    t.member_path(name),
                    s + i as u64,
                    a.dtype
                ))
            })?);
        }
        vo.copy_from_slice(&tmp);
        put_valid(va, miss.iter().map(|m| !m));
        Ok(())
    })
}

/// Read rows `[start, end)` of an integer column into `values` (`end - start`
/// entries); values that do not fit int32 are refused. `valid` (may be NULL) is 0 for
/// missing rows, whose value is the column's fill value.
#[no_mangle]
pub unsafe extern "C" fn marquet_table_read_int32(
    table: *const marquet_table,
    column: *const c_char,
    column_len: usize,
    start: i64,
    end: i64,
    values: *mut i32,
    valid: *mut u8,
) -> i32 {
    unsafe {
        read_numeric(table, column, column_len, start, end, values, valid, "int32", |a, i| {
            a.get_i128(i).and_then(|v| i32::try_from(v).ok())
        })
    }
}

/// Read rows `[start, end)` of an integer column as int64 (see
/// `marquet_table_read_int32`).
#[no_mangle]
pub unsafe extern "C" fn marquet_table_read_int64(
    table: *const marquet_table,
    column: *const c_char,
    column_len: usize,
    start: i64,
    end: i64,
    values: *mut i64,
    valid: *mut u8,
) -> i32 {
    unsafe {
        read_numeric(table, column, column_len, start, end, values, valid, "int64", |a, i| {
            a.get_i128(i).and_then(|v| i64::try_from(v).ok())
        })
    }
}

/// Read rows `[start, end)` of a numeric column as doubles (see
/// `marquet_table_read_int32`).
#[no_mangle]
pub unsafe extern "C" fn marquet_table_read_double(
    table: *const marquet_table,
    column: *const c_char,
    column_len: usize,
    start: i64,
    end: i64,
    values: *mut f64,
    valid: *mut u8,
) -> i32 {
    unsafe { read_numeric(table, column, column_len, start, end, values, valid, "double", |a, i| a.get_f64(i)) }
}

/// Read rows `[start, end)` of a string column: row `i` is the UTF-8 text
/// `chars[offsets[i] .. offsets[i+1]]` (not NUL-terminated); `offsets` has
/// `end - start + 1` entries starting at 0; `valid` (may be NULL) is 0 for missing
/// rows (whose text is empty). `*needed` receives the byte size of the text as for
/// `marquet_table_read_wkb`.
#[no_mangle]
pub unsafe extern "C" fn marquet_table_read_strings(
    table: *const marquet_table,
    column: *const c_char,
    column_len: usize,
    start: i64,
    end: i64,
    chars: *mut c_char,
    chars_len: usize,
    offsets: *mut i64,
    valid: *mut u8,
    needed: *mut usize,
) -> i32 {
    guard(|| {
        let t = unsafe { ffi::handle(table)? }.lock();
        let name = unsafe { ffi::name_arg(column, column_len, "column")? };
        let (s, e, k) = range(&t, start, end)?;
        let offsets = unsafe { ffi::out_slice(offsets, k + 1, "offsets")? };
        let valid = unsafe { ffi::opt_out_slice(valid, k, "valid")? };
        let buf = unsafe { ffi::out_slice(chars.cast::<u8>(), chars_len, "chars")? };
        let (a, miss) = read_attr(&t, name, s, e)?;
        let strs = a.to_string_vec().ok_or_else(|| {
            FfiError::invalid(format!("{} is not a string column ({:?})", t.member_path(name), a.dtype))
        })?;
        let need: usize = strs.iter().zip(&miss).map(|(s, m)| if *m { 0 } else { s.len() }).sum();
        unsafe { ffi::write_opt(needed, need) };
        if chars_len < need {
            return Err(ffi::too_small("chars", chars_len, need));
        }
        let mut pos = 0usize;
        offsets[0] = 0;
        for (i, (s, m)) in strs.iter().zip(&miss).enumerate() {
            if !m {
                buf[pos..pos + s.len()].copy_from_slice(s.as_bytes());
                pos += s.len();
            }
            offsets[i + 1] = pos as i64;
        }
        put_valid(valid, miss.iter().map(|m| !m));
        Ok(())
    })
}
