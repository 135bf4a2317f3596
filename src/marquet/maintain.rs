//! Index maintenance on append for Marquet's index kinds (HEP002 §10.3, §10.4, §11).
//!
//! Called from [`super::MarquetTable::append`] after the rows are written and before
//! GENERATION and NROWS are committed. Indexes not maintained here are left to be
//! disabled by their validity tokens (HEP001 §12.3 step 4).

use super::{GeometryColumnInfo, MarquetTable, RowInfo};
use crate::error::Result;

/// Maintain the spatial indexes of one geometry column after `rows` were written at
/// `n_old..`.
pub fn after_append(_t: &MarquetTable, _info: &GeometryColumnInfo, _n_old: u64, _rows: &[RowInfo]) -> Result<()> {
    Ok(())
}
