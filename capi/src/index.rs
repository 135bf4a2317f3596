//! Spatial search indexes of a geometry column (HEP002 §10.3 BLOCK_BBOX, §10.4
//! PACKED_RTREE): build, rebuild, drop, list; the R-tree policy on append and
//! truncation; truncation itself. Thin over `MarquetTable`'s index methods.

use std::ffi::c_char;

use mq::{RTreeOnAppend, SpatialIndexKind};

use crate::ffi;
use crate::panic::guard;
use crate::status::{FfiError, FfiResult};
use crate::table::marquet_table;

/// The spatial index kinds HEP002 registers.
#[allow(non_camel_case_types)]
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum marquet_index_kind {
    /// One bounding box per block of consecutive rows (KIND "BLOCK_BBOX", §10.3).
    MARQUET_INDEX_BLOCK_BBOX = 1,
    /// A packed Hilbert R-tree over the rows' boxes (KIND "PACKED_RTREE", §10.4).
    MARQUET_INDEX_PACKED_RTREE = 2,
}

/// What appends and truncations do to a valid packed R-tree, which cannot be updated
/// incrementally (HEP002 §10.4). Block indexes are always maintained.
#[allow(non_camel_case_types)]
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum marquet_rtree_policy {
    /// Rebuild it in place, validity tokens first (the default).
    MARQUET_RTREE_REBUILD = 1,
    /// Leave it stale (its tokens no longer match, so readers ignore it);
    /// `marquet_table_rebuild_indexes` restores it later. Cheap appends of many small
    /// batches to a large table.
    MARQUET_RTREE_LEAVE_STALE = 2,
}

fn kind_arg(k: i32) -> FfiResult<SpatialIndexKind> {
    use marquet_index_kind::*;
    match k {
        x if x == MARQUET_INDEX_BLOCK_BBOX as i32 => Ok(SpatialIndexKind::BlockBBox),
        x if x == MARQUET_INDEX_PACKED_RTREE as i32 => Ok(SpatialIndexKind::PackedRTree),
        _ => Err(FfiError::invalid(format!("kind {k} is not a MARQUET_INDEX_* value"))),
    }
}

fn kind_out(k: SpatialIndexKind) -> i32 {
    match k {
        SpatialIndexKind::BlockBBox => marquet_index_kind::MARQUET_INDEX_BLOCK_BBOX as i32,
        SpatialIndexKind::PackedRTree => marquet_index_kind::MARQUET_INDEX_PACKED_RTREE as i32,
    }
}

/// Build (or rebuild in place) an index of `kind` on geometry column `column`.
/// `parameter` is the block length for `MARQUET_INDEX_BLOCK_BBOX` (rows per block, >= 1)
/// or the node size for `MARQUET_INDEX_PACKED_RTREE` (2..65535); 0 chooses the default
/// (a block length from the data, node size 16). The index records the table's
/// GENERATION and NROWS, so later changes made without libmarquet disable it.
#[no_mangle]
pub unsafe extern "C" fn marquet_table_build_index(
    table: *const marquet_table,
    column: *const c_char,
    column_len: usize,
    kind: i32,
    parameter: i64,
) -> i32 {
    guard(|| {
        let t = unsafe { ffi::handle(table)? }.lock();
        let name = unsafe { ffi::name_arg(column, column_len, "column")? };
        let kind = kind_arg(kind)?;
        let p = ffi::count_arg(parameter, "parameter")?;
        match kind {
            SpatialIndexKind::BlockBBox => {
                t.build_block_bbox(name, (p > 0).then_some(p))?;
            }
            SpatialIndexKind::PackedRTree => {
                let m = match p {
                    0 => None,
                    2..=65535 => Some(p as u16),
                    _ => return Err(FfiError::invalid(format!("node size {p} is outside 2..65535"))),
                };
                t.build_rtree(name, m)?;
            }
        }
        Ok(())
    })
}

/// Rebuild every spatial index of `column` in place, valid or stale, keeping its block
/// length or node size. `*rebuilt` (if not NULL) receives how many were rebuilt.
#[no_mangle]
pub unsafe extern "C" fn marquet_table_rebuild_indexes(
    table: *const marquet_table,
    column: *const c_char,
    column_len: usize,
    rebuilt: *mut i64,
) -> i32 {
    guard(|| {
        let t = unsafe { ffi::handle(table)? }.lock();
        let name = unsafe { ffi::name_arg(column, column_len, "column")? };
        let n = t.rebuild_indexes(name)?.len();
        unsafe { ffi::write_opt(rebuilt, n as i64) };
        Ok(())
    })
}

/// Delete the indexes of `kind` on `column` (datasets and their SEARCH_INDEX_LIST
/// references). `*dropped` (if not NULL) receives how many were deleted (0 is not an
/// error).
#[no_mangle]
pub unsafe extern "C" fn marquet_table_drop_index(
    table: *const marquet_table,
    column: *const c_char,
    column_len: usize,
    kind: i32,
    dropped: *mut i64,
) -> i32 {
    guard(|| {
        let t = unsafe { ffi::handle(table)? }.lock();
        let name = unsafe { ffi::name_arg(column, column_len, "column")? };
        let kind = kind_arg(kind)?;
        let n = t.drop_index(name, kind)?;
        unsafe { ffi::write_opt(dropped, n as i64) };
        Ok(())
    })
}

/// Number of spatial indexes on `column` (valid or stale).
#[no_mangle]
pub unsafe extern "C" fn marquet_table_index_count(
    table: *const marquet_table,
    column: *const c_char,
    column_len: usize,
    count: *mut i64,
) -> i32 {
    guard(|| {
        let out = ffi::out_ptr(count, "count")?;
        let t = unsafe { ffi::handle(table)? }.lock();
        let name = unsafe { ffi::name_arg(column, column_len, "column")? };
        let n = t.spatial_indexes(name)?.len();
        unsafe { ffi::write(out, n as i64) };
        Ok(())
    })
}

/// Index `index` (0-based, SEARCH_INDEX_LIST order) of `column`: `*kind` receives its
/// `MARQUET_INDEX_*` value and `*valid` 1 when its validity tokens match the table
/// (HEP001 §12.2), 0 when it is stale and queries ignore it.
#[no_mangle]
pub unsafe extern "C" fn marquet_table_index_info(
    table: *const marquet_table,
    column: *const c_char,
    column_len: usize,
    index: i64,
    kind: *mut i32,
    valid: *mut i32,
) -> i32 {
    guard(|| {
        let kind = ffi::out_ptr(kind, "kind")?;
        let valid = ffi::out_ptr(valid, "valid")?;
        let t = unsafe { ffi::handle(table)? }.lock();
        let name = unsafe { ffi::name_arg(column, column_len, "column")? };
        let all = t.spatial_indexes(name)?;
        let i = ffi::len_arg(index, "index")?;
        let idx = all.get(i).ok_or_else(|| {
            FfiError::new(
                crate::status::marquet_status::MARQUET_STATUS_OUT_OF_RANGE,
                format!("index {i} is out of range: {name} has {} spatial indexes", all.len()),
            )
        })?;
        unsafe {
            ffi::write(kind, kind_out(idx.kind));
            ffi::write(valid, idx.valid as i32);
        }
        Ok(())
    })
}

/// Set what this table handle's appends and truncations do to valid packed R-trees
/// (`MARQUET_RTREE_*`; the default is `MARQUET_RTREE_REBUILD`).
#[no_mangle]
pub unsafe extern "C" fn marquet_table_set_rtree_policy(table: *const marquet_table, policy: i32) -> i32 {
    guard(|| {
        use marquet_rtree_policy::*;
        let p = match policy {
            x if x == MARQUET_RTREE_REBUILD as i32 => RTreeOnAppend::Rebuild,
            x if x == MARQUET_RTREE_LEAVE_STALE as i32 => RTreeOnAppend::LeaveStale,
            _ => return Err(FfiError::invalid(format!("policy {policy} is not a MARQUET_RTREE_* value"))),
        };
        unsafe { ffi::handle(table)? }.lock().set_rtree_on_append(p);
        Ok(())
    })
}

/// Remove the rows from `nrows` on (HEP001 §12.5): NROWS first, then the data; BBOX
/// and GEOMETRY_TYPES stay valid supersets (HEP002 §11.1), block indexes are cut, valid
/// R-trees follow the table's R-tree policy. `nrows` larger than the table is refused.
#[no_mangle]
pub unsafe extern "C" fn marquet_table_truncate(table: *const marquet_table, nrows: i64) -> i32 {
    guard(|| {
        let t = unsafe { ffi::handle(table)? }.lock();
        let n = ffi::count_arg(nrows, "nrows")?;
        let have = t.nrows()?;
        if n > have {
            return Err(FfiError::new(
                crate::status::marquet_status::MARQUET_STATUS_OUT_OF_RANGE,
                format!("nrows {n} is larger than the table's {have} rows"),
            ));
        }
        t.truncate(n)?;
        Ok(())
    })
}
