//! Index maintenance on append for Marquet's index kinds (HEP002 §10.3, §10.4, §11).
//!
//! Called from [`super::MarquetTable::append`] after the rows are written and before
//! GENERATION and NROWS are committed. Only indexes that were valid before the append are
//! maintained, tokens first (HEP001 §12.3 step 4): block bounding-box indexes are extended
//! incrementally, packed R-trees rebuilt in place or left stale as `rtree` says. Stale
//! indexes are left alone, to be disabled by their validity tokens.

use super::spatial_index::RTreeOnAppend;
use super::{GeometryColumnInfo, MarquetTable, RowInfo};
use crate::error::Result;

/// Maintain the spatial indexes of one geometry column after `rows` were written at
/// `n_old..`.
pub fn after_append(
    t: &MarquetTable,
    info: &GeometryColumnInfo,
    n_old: u64,
    rows: &[RowInfo],
    rtree: RTreeOnAppend,
) -> Result<()> {
    t.maintain_indexes_after_append(&info.name, n_old, rows, rtree)
}
