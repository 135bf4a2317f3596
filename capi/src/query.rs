//! `marquet_query_result`: spatial queries by box or WKB window and predicate
//! (`MarquetTable::query`, HEP002 §10), answered as ascending row numbers.

use std::ffi::c_char;
use std::sync::Arc;

use mq::query::{Predicate, Query, QueryResult, Window};
use mq::WkbBuffer;

use crate::ffi::{self, Handle, Kind};
use crate::panic::{guard, guard_void};
use crate::status::{FfiError, FfiResult};
use crate::table::marquet_table;

/// The spatial predicate of a query, read as "the row's geometry *predicate* the window".
/// Predicates are planar (XY; Z and M are ignored); null and empty geometries never
/// match. For a column whose EDGES are not planar every predicate is answered on boxes
/// grown to hold the geodesic edges (a superset; `marquet_query_result_approximate`).
#[allow(non_camel_case_types)]
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum marquet_predicate {
    /// The geometry and the window share at least one point.
    MARQUET_PREDICATE_INTERSECTS = 1,
    /// The geometry lies within the window (OGC Within).
    MARQUET_PREDICATE_WITHIN = 2,
    /// The geometry contains the window (OGC Contains).
    MARQUET_PREDICATE_CONTAINS = 3,
    /// The geometry's box intersects the window's box.
    MARQUET_PREDICATE_BBOX = 4,
}

pub(crate) fn predicate_arg(p: i32) -> FfiResult<Predicate> {
    use marquet_predicate::*;
    Ok(match p {
        x if x == MARQUET_PREDICATE_INTERSECTS as i32 => Predicate::Intersects,
        x if x == MARQUET_PREDICATE_WITHIN as i32 => Predicate::Within,
        x if x == MARQUET_PREDICATE_CONTAINS as i32 => Predicate::Contains,
        x if x == MARQUET_PREDICATE_BBOX as i32 => Predicate::BBoxOnly,
        _ => return Err(FfiError::invalid(format!("predicate {p} is not a MARQUET_PREDICATE_* value"))),
    })
}

/// Bits of the `flags` argument of the query functions (`marquet_table_query_*`,
/// `marquet_spatial_reader_query_*`), OR-ed together. 0 and 1 mean what the argument
/// meant when it was `use_indexes`.
#[allow(non_camel_case_types)]
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum marquet_query_flag {
    /// Prune the search with the column's valid search indexes and covering column
    /// (HEP002 §10); without it every row is read and tested.
    MARQUET_QUERY_USE_INDEXES = 1,
    /// Keep the matching rows' geometries (the WKB the query read to test them) in the
    /// result: `marquet_query_result_wkb` copies them out and
    /// `marquet_query_result_take_arrow` builds the geometry column from them instead of
    /// reading it again (issue #33: a query's answer is what it returned).
    MARQUET_QUERY_KEEP_GEOMETRY = 2,
}

/// The `flags` argument: `(use_indexes, keep_geometry)`; unknown bits are refused.
pub(crate) fn flags_arg(flags: i32) -> FfiResult<(bool, bool)> {
    use marquet_query_flag::*;
    let known = MARQUET_QUERY_USE_INDEXES as i32 | MARQUET_QUERY_KEEP_GEOMETRY as i32;
    if flags & !known != 0 {
        return Err(FfiError::invalid(format!("flags {flags} has bits that are not MARQUET_QUERY_* values")));
    }
    Ok((flags & MARQUET_QUERY_USE_INDEXES as i32 != 0, flags & MARQUET_QUERY_KEEP_GEOMETRY as i32 != 0))
}

/// The query a `flags` argument asks for, over `window` and `predicate`.
pub(crate) fn query_arg(window: Window, predicate: i32, flags: i32) -> FfiResult<Query> {
    let predicate = predicate_arg(predicate)?;
    let (use_indexes, keep) = flags_arg(flags)?;
    Ok(Query::new(window, predicate).with_indexes(use_indexes).with_wkb(keep))
}

/// The answer of a spatial query (opaque): matching row numbers, ascending, and with
/// `MARQUET_QUERY_KEEP_GEOMETRY` their geometries. From `marquet_table_query_box` /
/// `_query_wkb` or a spatial reader; released by `marquet_query_result_free`.
pub struct marquet_query_result {
    /// The rows and statistics (its `wkb` moved to `wkb`).
    result: QueryResult,
    /// The matching rows' WKB (`MARQUET_QUERY_KEEP_GEOMETRY`), shared with the Arrow
    /// streams that take the result's rows.
    wkb: Option<Arc<WkbBuffer>>,
    /// The queried geometry column's path (`/table/column`): a take of the result checks
    /// that it reads the same table.
    pub(crate) column_path: String,
}

impl marquet_query_result {
    /// A result handle's content: `result` of a query of the geometry column at
    /// `column_path`.
    pub(crate) fn new(mut result: QueryResult, column_path: String) -> marquet_query_result {
        let wkb = result.wkb.take().map(Arc::new);
        marquet_query_result { result, wkb, column_path }
    }

    /// The matching rows, ascending.
    pub(crate) fn rows(&self) -> &[u64] {
        &self.result.rows
    }

    /// The kept geometries (`None`: a result made without `MARQUET_QUERY_KEEP_GEOMETRY`).
    pub(crate) fn kept(&self) -> Option<&Arc<WkbBuffer>> {
        self.wkb.as_ref()
    }
}

impl Handle for marquet_query_result {
    const KIND: Kind = Kind::QueryResult;
    const NAME: &'static str = "result";
}

unsafe fn run_query(
    table: *const marquet_table,
    column: *const c_char,
    column_len: usize,
    window: impl FnOnce() -> FfiResult<Window>,
    predicate: i32,
    flags: i32,
    out: *mut *mut marquet_query_result,
) -> FfiResult {
    let out = ffi::out_ptr(out, "out")?;
    let t = unsafe { ffi::handle(table)? };
    let name = unsafe { ffi::name_arg(column, column_len, "column")? };
    let q = query_arg(window()?, predicate, flags)?;
    let result = t.query(name, &q)?;
    let column_path = format!("{}/{name}", t.lock().path().trim_end_matches('/'));
    unsafe { ffi::write(out, ffi::into_handle(marquet_query_result::new(result, column_path))) };
    Ok(())
}

/// Find the rows of geometry column `column` whose geometry satisfies `predicate` (a
/// `MARQUET_PREDICATE_*` value) against the box `[xmin, xmax] x [ymin, ymax]`. `flags`
/// is 0 or `MARQUET_QUERY_*` bits OR-ed: with `MARQUET_QUERY_USE_INDEXES` (1) the
/// column's valid search indexes and covering column prune the search (HEP002 §10),
/// without it every row is read and tested; with `MARQUET_QUERY_KEEP_GEOMETRY` (2) the
/// result keeps the matching rows' WKB (`marquet_query_result_wkb`,
/// `marquet_query_result_take_arrow`). Other bits are refused. `xmin > xmax` wraps around
/// the antimeridian (geographic CRS only). NaN bounds or `ymin > ymax` are refused.
/// A table of a file opened read-only keeps what its queries read (the column's metadata,
/// index nodes and chunks, by byte range) for its next queries, as a spatial reader does.
/// On success `*out` receives a result to free with `marquet_query_result_free`.
#[no_mangle]
pub unsafe extern "C" fn marquet_table_query_box(
    table: *const marquet_table,
    column: *const c_char,
    column_len: usize,
    xmin: f64,
    ymin: f64,
    xmax: f64,
    ymax: f64,
    predicate: i32,
    flags: i32,
    out: *mut *mut marquet_query_result,
) -> i32 {
    guard(|| unsafe {
        let window = || Ok(Window::try_bbox(xmin, ymin, xmax, ymax)?);
        run_query(table, column, column_len, window, predicate, flags, out)
    })
}

/// As `marquet_table_query_box`, with the window given as one ISO WKB geometry
/// (`wkb_len` bytes, in the column's coordinates). Malformed WKB gives
/// `MARQUET_STATUS_INVALID_WKB`.
#[no_mangle]
pub unsafe extern "C" fn marquet_table_query_wkb(
    table: *const marquet_table,
    column: *const c_char,
    column_len: usize,
    wkb: *const u8,
    wkb_len: usize,
    predicate: i32,
    flags: i32,
    out: *mut *mut marquet_query_result,
) -> i32 {
    guard(|| unsafe {
        let bytes = ffi::slice_arg(wkb, wkb_len, "wkb")?;
        run_query(table, column, column_len, || Ok(Window::from_wkb(bytes)?), predicate, flags, out)
    })
}

/// Free a query result (NULL is a no-op).
#[no_mangle]
pub unsafe extern "C" fn marquet_query_result_free(result: *mut marquet_query_result) {
    guard_void(|| unsafe { ffi::free_handle(result) })
}

/// Number of matching rows.
#[no_mangle]
pub unsafe extern "C" fn marquet_query_result_count(result: *const marquet_query_result, count: *mut i64) -> i32 {
    guard(|| {
        let out = ffi::out_ptr(count, "count")?;
        let r = unsafe { ffi::handle(result)? };
        let n = ffi::to_i64(r.rows().len() as u64, "count")?;
        unsafe { ffi::write(out, n) };
        Ok(())
    })
}

/// Copy the matching row numbers (0-based, ascending) into `rows`, which holds
/// `rows_len` elements. `rows_len` below the count gives
/// `MARQUET_STATUS_BUFFER_TOO_SMALL` and writes nothing; `rows` may be NULL when the
/// count is 0.
#[no_mangle]
pub unsafe extern "C" fn marquet_query_result_rows(result: *const marquet_query_result, rows: *mut i64, rows_len: usize) -> i32 {
    guard(|| {
        let r = unsafe { ffi::handle(result)? };
        let out = unsafe { ffi::out_slice(rows, rows_len, "rows")? };
        let need = r.rows().len();
        if rows_len < need {
            return Err(FfiError::new(
                crate::status::marquet_status::MARQUET_STATUS_BUFFER_TOO_SMALL,
                format!("rows holds {rows_len} elements, {need} rows matched"),
            ));
        }
        for (d, &s) in out.iter_mut().zip(r.rows()) {
            *d = ffi::to_i64(s, "row")?;
        }
        Ok(())
    })
}

/// `*approximate` = 1 when the column's edges are not planar and the predicate was
/// answered on (geodesically grown) boxes, so the rows are a superset of the exact
/// answer; 0 when the answer is exact.
#[no_mangle]
pub unsafe extern "C" fn marquet_query_result_approximate(result: *const marquet_query_result, approximate: *mut i32) -> i32 {
    guard(|| {
        let out = ffi::out_ptr(approximate, "approximate")?;
        let r = unsafe { ffi::handle(result)? };
        unsafe { ffi::write(out, r.result.stats.approximate as i32) };
        Ok(())
    })
}

/// How the query was answered, as counts: `stats` receives up to `stats_len` of, in
/// this order, rows in the table, row blocks of the block index used, blocks skipped,
/// R-tree candidates, rows the covering column rejected, rows whose geometry was read
/// and tested, rows matched, bytes read (HEP002 §10 layers; `marquet query --stats`),
/// R-tree candidates answered by their box (inside a box window, not tested). Counts added
/// later come at the end. `*needed` (if not NULL) receives 9, the number of counts there
/// are.
#[no_mangle]
pub unsafe extern "C" fn marquet_query_result_stats(
    result: *const marquet_query_result,
    stats: *mut i64,
    stats_len: usize,
    needed: *mut usize,
) -> i32 {
    guard(|| {
        let r = unsafe { ffi::handle(result)? };
        let out = unsafe { ffi::out_slice(stats, stats_len, "stats")? };
        let s = &r.result.stats;
        let all = s.counters();
        let mut vals = [0i64; 9];
        for (d, (_, v)) in vals.iter_mut().zip(all) {
            *d = ffi::to_i64(v, "stat")?;
        }
        for (d, v) in out.iter_mut().zip(vals) {
            *d = v;
        }
        unsafe { ffi::write_opt(needed, vals.len()) };
        Ok(())
    })
}

/// Copy the geometries a query kept (`MARQUET_QUERY_KEEP_GEOMETRY`), one per matching
/// row in the order of `marquet_query_result_rows`, as ISO WKB laid out as
/// `marquet_table_read_wkb` lays out rows: `buf` holds the values back to back,
/// `offsets` (count + 1 entries) gives match `i` as `buf[offsets[i] .. offsets[i+1]]`
/// with `offsets[0] = 0`, and `valid` (count bytes; may be NULL) is 0 for null
/// geometries. `*needed` (if not NULL) receives the byte size of the values, on success
/// and on `MARQUET_STATUS_BUFFER_TOO_SMALL`; pass `buf` NULL and `buf_len` 0 to ask for
/// it. A result made without the flag gives `MARQUET_STATUS_INVALID_ARGUMENT`.
#[no_mangle]
pub unsafe extern "C" fn marquet_query_result_wkb(
    result: *const marquet_query_result,
    buf: *mut u8,
    buf_len: usize,
    offsets: *mut i64,
    valid: *mut u8,
    needed: *mut usize,
) -> i32 {
    guard(|| {
        let r = unsafe { ffi::handle(result)? };
        let Some(w) = r.kept() else {
            return Err(FfiError::invalid(format!("{}: the query did not keep the geometries (flags without MARQUET_QUERY_KEEP_GEOMETRY)", r.column_path)));
        };
        unsafe { crate::table::copy_wkb_out(w, buf, buf_len, offsets, valid, needed) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predicates_map_one_to_one_and_others_are_refused() {
        assert_eq!(predicate_arg(1).unwrap(), Predicate::Intersects);
        assert_eq!(predicate_arg(2).unwrap(), Predicate::Within);
        assert_eq!(predicate_arg(3).unwrap(), Predicate::Contains);
        assert_eq!(predicate_arg(4).unwrap(), Predicate::BBoxOnly);
        for bad in [0, 5, -1, i32::MAX] {
            let e = predicate_arg(bad).unwrap_err();
            assert_eq!(e.status, crate::status::marquet_status::MARQUET_STATUS_INVALID_ARGUMENT);
            assert_eq!(e.message, format!("predicate {bad} is not a MARQUET_PREDICATE_* value"));
        }
    }

    #[test]
    fn flags_are_the_old_use_indexes_values_plus_keep_geometry() {
        assert_eq!(flags_arg(0).unwrap(), (false, false));
        assert_eq!(flags_arg(1).unwrap(), (true, false));
        assert_eq!(flags_arg(2).unwrap(), (false, true));
        assert_eq!(flags_arg(3).unwrap(), (true, true));
        for bad in [4, 5, -1, i32::MIN] {
            let e = flags_arg(bad).unwrap_err();
            assert_eq!(e.status, crate::status::marquet_status::MARQUET_STATUS_INVALID_ARGUMENT);
            assert_eq!(e.message, format!("flags {bad} has bits that are not MARQUET_QUERY_* values"));
        }
    }
}
