//! The write-layout policy: how every Marquet writer lays out a new table by default.
//!
//! One type, [`WriteLayout`], decides what HEP002 leaves to the producer and what decides
//! query speed: row order (§10.6, Hilbert order of the primary geometry column's box
//! centres), the spatial indexes (§10.3 BLOCK_BBOX, RECOMMENDED; §10.4 PACKED_RTREE), the
//! covering column (§10.5), chunk sizes and the R-tree policy on append. Every writer uses
//! it: `marquet convert` and [`crate::convert::import_geoparquet`] /
//! [`crate::convert::import_geojson`], [`MarquetTable::write`] ([`super::TableWriter`]), the C ABI's
//! `marquet_table_write`, `marquet demo` and `marquet bench` — so the benchmark measures the
//! file a user's first command writes.
//!
//! The defaults ([`WriteLayout::default`]) were chosen by measurement on the cross-format
//! benchmark's data (1,000,000 clustered points, 200,000 polygons, 200 windows; see
//! `docs/PERFORMANCE.md`, "Default layout"):
//! * rows in Hilbert order ([`WriteLayout::spatial_order`]);
//! * [`DEFAULT_CHUNK_ROWS`]-row (2,048) chunks and [`DEFAULT_VALUES_CHUNK_BYTES`]-byte
//!   (16 KiB) WKB value chunks: a window query decompresses small chunks;
//! * a BLOCK_BBOX index of [`DEFAULT_BLOCK_LENGTH`]-row blocks on every geometry column;
//! * a PACKED_RTREE on geometry columns that are not point columns ([`RTreeChoice::Auto`]):
//!   over Hilbert-ordered points a fine block index prunes as well at a fraction of the size;
//! * a covering column for geometry columns that are not point columns (HEP002 §10.5 says
//!   producers SHOULD NOT keep one for points);
//! * on append, a valid R-tree is rebuilt once per operation ([`RTreeOnAppend::Rebuild`]);
//! * shuffle + deflate, with the byte planes that do not compress stored inside the
//!   deflate stream (`h5::codec::deflate_shuffled`): a point chunk inflates several times
//!   faster at the same size.

use super::spatial_index::RTreeOnAppend;
use super::{Compression, GeometryColumnSpec, MarquetTable, StorageForm};
use crate::error::{MarquetError, Result};

/// Default chunk length in rows of point columns, WKB `OFFSETS`, covering and plain columns.
pub const DEFAULT_CHUNK_ROWS: u64 = super::GEOMETRY_CHUNK_ROWS;
/// Default chunk length in bytes of WKB `VALUES`.
pub const DEFAULT_VALUES_CHUNK_BYTES: u64 = super::GEOMETRY_VALUES_CHUNK_BYTES;
/// Default BLOCK_BBOX block length in rows: divides [`DEFAULT_CHUNK_ROWS`], so a block
/// never straddles two chunks of a point column (HEP002 §10.2).
pub const DEFAULT_BLOCK_LENGTH: u64 = 1024;
/// Default memory budget of the external Hilbert sort of streamed imports, in bytes of
/// decoded rows held at once (see `crate::convert::hub::sort`).
pub const DEFAULT_SORT_MEMORY: usize = 256 << 20;

/// When a packed R-tree is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RTreeChoice {
    /// For geometry columns that are not point columns (the default).
    #[default]
    Auto,
    /// For every geometry column.
    Always,
    /// Never.
    Never,
}

impl std::str::FromStr for RTreeChoice {
    type Err = MarquetError;
    fn from_str(s: &str) -> Result<RTreeChoice> {
        match s {
            "auto" => Ok(RTreeChoice::Auto),
            "on" | "always" => Ok(RTreeChoice::Always),
            "off" | "never" => Ok(RTreeChoice::Never),
            _ => Err(MarquetError::InvalidArgument(format!("R-tree choice {s:?}: use auto, on or off"))),
        }
    }
}

/// How a writer lays out a new table (see the module documentation for the defaults).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct WriteLayout {
    /// Order rows along a Hilbert curve through the primary geometry column's box centres
    /// (HEP002 §10.6).
    pub spatial_order: bool,
    /// Build a BLOCK_BBOX index on every geometry column (HEP002 §10.3).
    pub block_index: bool,
    /// Block length of the block index.
    pub block_length: u64,
    /// Which geometry columns get a packed R-tree (HEP002 §10.4).
    pub rtree: RTreeChoice,
    /// Node size of the packed R-tree (`None`: [`crate::spatial::packed_rtree::DEFAULT_NODE_SIZE`]).
    pub rtree_node_size: Option<u16>,
    /// Give geometry columns that are not point columns a covering column (HEP002 §10.5).
    pub covering: bool,
    /// Chunk length in rows of geometry, covering and plain columns.
    pub chunk_rows: u64,
    /// Chunk length in bytes of WKB `VALUES`.
    pub values_chunk_bytes: u64,
    /// Compression of geometry, covering and R-tree data, and of the attribute columns an
    /// import creates (default: shuffle + deflate, which every HDF5 reader opens without
    /// plugins; [`Compression`]).
    pub compression: Compression,
    /// What appends do to a valid packed R-tree: rebuild it once per operation, or leave it
    /// stale (queries then use the block index) until `marquet index --build`.
    pub rtree_on_append: RTreeOnAppend,
    /// Memory budget in bytes of the external Hilbert sort of streamed imports.
    pub sort_memory: usize,
    /// HDF5's Fletcher-32 checksum on every chunked dataset written (geometry, covering,
    /// attribute columns, spatial indexes): a damaged chunk then reads as an error, never
    /// as other values (docs/FAULTS.md F8). Off by default: it costs 4 bytes a chunk and
    /// sends those datasets through HDF5's serial filter pipeline instead of the parallel
    /// direct chunk I/O.
    pub checksums: bool,
}

impl Default for WriteLayout {
    fn default() -> Self {
        WriteLayout {
            spatial_order: true,
            block_index: true,
            block_length: DEFAULT_BLOCK_LENGTH,
            rtree: RTreeChoice::Auto,
            rtree_node_size: None,
            covering: true,
            chunk_rows: DEFAULT_CHUNK_ROWS,
            values_chunk_bytes: DEFAULT_VALUES_CHUNK_BYTES,
            compression: Compression::default(),
            rtree_on_append: RTreeOnAppend::Rebuild,
            sort_memory: DEFAULT_SORT_MEMORY,
            checksums: false,
        }
    }
}

impl WriteLayout {
    /// The layout of a plain append: input order, no index, no covering column (what the
    /// library did before the layout policy; for tests and experiments).
    pub fn plain() -> WriteLayout {
        WriteLayout { spatial_order: false, block_index: false, rtree: RTreeChoice::Never, covering: false, ..WriteLayout::default() }
    }
    /// Keep the rows in input order.
    pub fn with_spatial_order(mut self, on: bool) -> Self {
        self.spatial_order = on;
        self
    }
    /// Build (or not) the block index.
    pub fn with_block_index(mut self, on: bool) -> Self {
        self.block_index = on;
        self
    }
    /// Block length of the block index (at least 1).
    pub fn with_block_length(mut self, n: u64) -> Self {
        self.block_length = n.max(1);
        self
    }
    /// Which columns get a packed R-tree.
    pub fn with_rtree(mut self, r: RTreeChoice) -> Self {
        self.rtree = r;
        self
    }
    /// No spatial index at all.
    pub fn without_indexes(mut self) -> Self {
        self.block_index = false;
        self.rtree = RTreeChoice::Never;
        self
    }
    /// Covering columns for non-point geometry columns, or none.
    pub fn with_covering(mut self, on: bool) -> Self {
        self.covering = on;
        self
    }
    /// Chunk length in rows (at least 1).
    pub fn with_chunk_rows(mut self, n: u64) -> Self {
        self.chunk_rows = n.max(1);
        self
    }
    /// Chunk length in bytes of WKB `VALUES` (at least 1).
    pub fn with_values_chunk_bytes(mut self, n: u64) -> Self {
        self.values_chunk_bytes = n.max(1);
        self
    }
    /// Compression of geometry, covering and R-tree data.
    pub fn with_compression(mut self, c: Compression) -> Self {
        self.compression = c;
        self
    }
    /// Checksum every chunked dataset written ([`WriteLayout::checksums`]).
    pub fn with_checksums(mut self, on: bool) -> Self {
        self.checksums = on;
        self
    }
    /// What appends do to a valid packed R-tree.
    pub fn with_rtree_on_append(mut self, r: RTreeOnAppend) -> Self {
        self.rtree_on_append = r;
        self
    }
    /// Memory budget of the external sort (at least 1 MiB).
    pub fn with_sort_memory(mut self, bytes: usize) -> Self {
        self.sort_memory = bytes.max(1 << 20);
        self
    }

    /// Does a column of `form` get a packed R-tree?
    pub fn wants_rtree(&self, form: &StorageForm) -> bool {
        match self.rtree {
            RTreeChoice::Always => true,
            RTreeChoice::Never => false,
            RTreeChoice::Auto => !matches!(form, StorageForm::Point { .. }),
        }
    }

    /// Does a column of `form` get a covering column?
    pub fn wants_covering(&self, form: &StorageForm) -> bool {
        self.covering && !matches!(form, StorageForm::Point { .. })
    }

    /// `spec` with this layout's chunking and filters, and a covering column named
    /// `covering_name` when the layout wants one and `spec` has none. `spec.form` must be set.
    pub fn geometry_spec(&self, spec: GeometryColumnSpec, covering_name: &str) -> GeometryColumnSpec {
        let mut s = spec.with_chunk_rows(self.chunk_rows).with_values_chunk_bytes(self.values_chunk_bytes).with_compression(self.compression).with_checksum(self.checksums);
        if s.covering.is_none() && s.form.as_ref().is_some_and(|f| self.wants_covering(f)) {
            s.covering = Some(covering_name.to_string());
        }
        s
    }

    /// The block length for a write of about `rows` rows: [`WriteLayout::block_length`], or
    /// for a small table a power of two from 16 up giving it at least 16 blocks (a 243-row
    /// table in one 1,024-row block could never skip anything). Powers of two up to the
    /// block length divide the chunk length, so blocks stay inside chunks (§10.2).
    pub fn block_length_for(&self, rows: Option<u64>) -> u64 {
        match rows {
            Some(n) if n / 16 < self.block_length => (n / 16).max(1).next_power_of_two().clamp(16.min(self.block_length), self.block_length),
            _ => self.block_length,
        }
    }

    /// Declare the indexes of geometry column `col` of `t` (normally still empty) for a
    /// write of about `rows` rows ([`WriteLayout::block_length_for`]): they are then
    /// maintained from memory by every append. A streamed write of many batches declares
    /// only the block index (`with_rtree` false: an R-tree cannot be extended, so each batch
    /// would rebuild it) and builds the R-tree with [`WriteLayout::finish`]; a write of one
    /// batch declares both.
    pub fn declare_indexes(&self, t: &MarquetTable, col: &str, with_rtree: bool, rows: Option<u64>) -> Result<()> {
        if self.block_index {
            t.build_block_bbox(col, Some(self.block_length_for(rows)))?;
        }
        if with_rtree && self.wants_rtree(&t.geometry_column(col)?.form) {
            t.build_rtree(col, self.rtree_node_size)?;
        }
        Ok(())
    }

    /// Build the packed R-tree of `col` when the layout wants one and `col` has no valid one
    /// (after the last append of a streamed write).
    pub fn finish(&self, t: &MarquetTable, col: &str) -> Result<()> {
        let info = t.geometry_column(col)?;
        if !self.wants_rtree(&info.form) {
            return Ok(());
        }
        let idx = t.spatial_indexes(col)?;
        if !idx.iter().any(|i| i.kind == super::SpatialIndexKind::PackedRTree && i.valid) {
            t.build_rtree(col, self.rtree_node_size)?;
        }
        Ok(())
    }

    /// [`WriteLayout::declare_indexes`] for every geometry column of `t`.
    pub fn declare_all(&self, t: &MarquetTable, with_rtree: bool, rows: Option<u64>) -> Result<()> {
        for c in t.geometry_column_names()? {
            self.declare_indexes(t, &c, with_rtree, rows)?;
        }
        Ok(())
    }

    /// [`WriteLayout::finish`] for every geometry column of `t`.
    pub fn finish_all(&self, t: &MarquetTable) -> Result<()> {
        for c in t.geometry_column_names()? {
            self.finish(t, &c)?;
        }
        Ok(())
    }
}

/// The name of the covering column a layout gives geometry column `col`: `bbox` for the
/// primary column (the GeoParquet 1.1 convention) when no column has that name, otherwise
/// `<col>_bbox` (with `_` appended until it is free).
pub fn covering_name(col: &str, primary: bool, taken: &dyn Fn(&str) -> bool) -> String {
    if primary && !taken("bbox") {
        return "bbox".into();
    }
    let mut n = format!("{col}_bbox");
    while taken(&n) {
        n.push('_');
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_tables_get_at_least_sixteen_blocks() {
        let l = WriteLayout::default();
        assert_eq!(l.block_length_for(None), 1024);
        assert_eq!(l.block_length_for(Some(10_000_000)), 1024);
        assert_eq!(l.block_length_for(Some(16_384)), 1024);
        assert_eq!(l.block_length_for(Some(16_383)), 1024);
        assert_eq!(l.block_length_for(Some(10_000)), 1024);
        assert_eq!(l.block_length_for(Some(5_000)), 512);
        assert_eq!(l.block_length_for(Some(243)), 16);
        assert_eq!(l.block_length_for(Some(0)), 16);
        assert_eq!(WriteLayout::default().with_block_length(8).block_length_for(Some(100)), 8);
    }
}
