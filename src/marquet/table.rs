//! [`MarquetTable`]: a HEP002 table on an H5Col table. Every method of the type is defined
//! here, or delegates in one line to the file that holds its layer's code.

use crate::error::{MarquetError, Result};
use crate::h5;
use crate::h5col::{self, ColumnKind, ColumnSpec, ColumnValues, File, ScalarType, Table};
use crate::spec::names;
use crate::wkb;

use super::*;
use super::spatial_index::{BlockIndex, IndexState, RTreeIndex, SpatialIndex};
use crate::progress::Progress;

/// An open Marquet table.
pub struct MarquetTable {
    pub(super) table: Table,
    /// False when MARQUET_VERSION's MAJOR is higher than we implement (R16).
    pub(super) interpretable: bool,
    /// What [`MarquetTable::append`] does to valid packed R-trees (HEP002 §10.4).
    pub(super) rtree_on_append: spatial_index::RTreeOnAppend,
    /// What appends and updates do with rings that break ORIENTATION (HEP002 §9.2).
    pub(super) orientation_on_write: OrientationOnWrite,
}

/// Parse the Marquet version leniently; `None` if it is not MAJOR.MINOR[.PATCH].
pub fn marquet_major(table: &Table) -> Result<Option<u64>> {
    Ok(h5col::read_token(table.id(), names::MARQUET_VERSION)?.and_then(|v| h5col::parse_version(&v)).map(|v| v.0))
}

/// Is the group a Marquet table (CLASS=COLUMN_TABLE and MARQUET_VERSION present, §5.1)?
pub fn is_marquet_table(table: &Table) -> Result<bool> {
    h5::attr_exists(table.id(), names::MARQUET_VERSION)
}

impl MarquetTable {
    /// Create an empty Marquet table at `path`. MARQUET_VERSION and GEOMETRY_COLUMNS are
    /// written with the first geometry column (a table without one is not conformant).
    pub fn create(file: &File, path: &str) -> Result<MarquetTable> {
        let table = file.create_table(path)?;
        Ok(MarquetTable { table, interpretable: true, rtree_on_append: Default::default(), orientation_on_write: Default::default() })
    }

    /// Open a Marquet table (R16: a higher MAJOR opens, but geometry is not interpreted).
    pub fn open(file: &File, path: &str) -> Result<MarquetTable> {
        let table = file.table(path)?;
        MarquetTable::from_table(table)
    }

    /// Wrap an H5Col table that carries MARQUET_VERSION.
    pub fn from_table(table: Table) -> Result<MarquetTable> {
        if !is_marquet_table(&table)? {
            return Err(MarquetError::NotATable {
                path: table.path().to_string(),
                reason: "no MARQUET_VERSION attribute: an H5Col table but not a Marquet table".into(),
            });
        }
        let interpretable = match marquet_major(&table)? {
            Some(m) => m <= 1,
            None => {
                return Err(MarquetError::spec(table.path(), "HEP002 §5.1", "MARQUET_VERSION is not MAJOR.MINOR"))
            }
        };
        Ok(MarquetTable { table, interpretable, rtree_on_append: Default::default(), orientation_on_write: Default::default() })
    }

    internal_pub! {
        /// The underlying H5Col table.
        fn table(&self) -> &Table {
            &self.table
        }
    }

    /// Can this library interpret the geometry columns (R16)?
    pub fn is_interpretable(&self) -> bool {
        self.interpretable
    }

    /// HDF5 path of the table group.
    pub fn path(&self) -> &str {
        self.table.path()
    }

    /// Why geometry column `name` cannot be read as geometries, or `None` when it can: a
    /// MARQUET_VERSION whose MAJOR this library does not implement (ruling R16, HEP002
    /// §5.1), or a GEOMETRY_ENCODING it does not implement (§6.2). Such a column stays
    /// readable as ordinary H5Col data, and `info`, `dump` and export present it so instead
    /// of failing on the file.
    pub fn not_interpretable(&self, name: &str) -> Result<Option<String>> {
        if !self.interpretable {
            let v = h5col::read_token(self.table.id(), names::MARQUET_VERSION)?.unwrap_or_default();
            return Ok(Some(format!("marquet_version {v:?} is newer than this library implements (1.x, ruling r16)")));
        }
        let o = h5::object_open(self.table.id(), name)?;
        match h5col::read_token(o.id(), names::GEOMETRY_ENCODING)? {
            Some(e) if e != names::ENCODING_WKB && e != names::ENCODING_POINT => {
                Ok(Some(format!("geometry_encoding {e:?} is not implemented by this library (hep002 §6.2)")))
            }
            _ => Ok(None),
        }
    }

    /// The table's row count, the `NROWS` attribute (HEP001 §7.3).
    pub fn nrows(&self) -> Result<u64> {
        self.table.nrows()
    }

    /// The table's columns in logical order, geometry and covering columns included: the
    /// `column-order` attribute when present, else HEP001 §8.2 discovery (sorted by name).
    pub fn column_names(&self) -> Result<Vec<String>> {
        self.table.column_names()
    }

    /// The column datasets HEP001 §8.2 discovery finds, sorted by name.
    pub fn discover_columns(&self) -> Result<Vec<String>> {
        self.table.discover_columns()
    }

    /// Is `name` a column dataset, a list column, or neither?
    pub fn kind_of(&self, name: &str) -> Result<Option<ColumnKind>> {
        self.table.kind_of(name)
    }

    /// The HDF5 path of member `name` of the table group (for messages).
    pub fn member_path(&self, name: &str) -> String {
        self.table.member_path(name)
    }

    /// Open the attribute column dataset `name`. Its writers refuse geometry and covering
    /// columns (HEP002 §11.1): those change through [`MarquetTable::update_geometries`].
    pub fn column(&self, name: &str) -> Result<h5col::Column> {
        self.table.column(name)
    }

    /// Rows `[start, end)` of the attribute column dataset `name`.
    pub fn read(&self, name: &str, start: u64, end: u64) -> Result<h5col::Array> {
        self.table.read(name, start, end)
    }

    /// Rows `[start, end)` of the attribute column dataset `name` and their missing flags
    /// (the canonical test against the fill value, HEP001 §8.5).
    pub fn read_with_missing(&self, name: &str, start: u64, end: u64) -> Result<(h5col::Array, Vec<bool>)> {
        self.table.read_with_missing(name, start, end)
    }

    /// The rows, ascending, that match every attribute filter (`COL OP VALUE`, parsed by
    /// [`h5col::predicate::parse_where`]), each answered by its best HEP001 index when
    /// `use_indexes`; with the statistics of each filter.
    pub fn filter_rows(
        &self,
        filters: &[(String, h5col::predicate::ColumnFilter)],
        use_indexes: bool,
    ) -> Result<(Vec<u64>, Vec<h5col::predicate::FilterStats>)> {
        h5col::predicate::filter_all(&self.table, filters, use_indexes)
    }

    /// Set the table's index columns (HEP001 §7.4 `INDEX_COLUMNS`, the row labels); a
    /// geometry column cannot be one (HEP002 §5.3).
    pub fn set_index_columns(&self, names: &[&str]) -> Result<()> {
        self.table.set_index_columns(names)
    }

    /// Does the table keep its rows in the order they were given (its producer chose so, e.g.
    /// `convert --keep-order`)? Then every write into it keeps the input order instead of
    /// sorting each batch along the Hilbert curve (the table attribute
    /// [`names::ROW_ORDER`], local ruling L19). Any other value, or none, is Hilbert order.
    pub fn keeps_input_order(&self) -> Result<bool> {
        Ok(h5col::read_token(self.table.id(), names::ROW_ORDER)?.as_deref() == Some(names::ROW_ORDER_INPUT))
    }

    pub(super) fn require_interpretable(&self) -> Result<()> {
        if self.interpretable {
            Ok(())
        } else {
            Err(MarquetError::UnsupportedVersion {
                path: self.path().to_string(),
                what: "MARQUET_VERSION",
                found: h5col::read_token(self.table.id(), names::MARQUET_VERSION)?.unwrap_or_default(),
                supported: "1.x",
            })
        }
    }

    /// Names of the geometry columns, primary first (GEOMETRY_COLUMNS).
    pub fn geometry_column_names(&self) -> Result<Vec<String>> {
        let Some((refs, _, _)) = h5::attr_read_refs(self.table.id(), names::GEOMETRY_COLUMNS)? else {
            return Ok(Vec::new());
        };
        refs.into_iter()
            .map(|r| {
                r.map(|p| p.rsplit('/').next().unwrap_or_default().to_string()).ok_or_else(|| {
                    MarquetError::spec(self.path(), "HEP002 §5.2", "GEOMETRY_COLUMNS holds a null or dangling reference")
                })
            })
            .collect()
    }

    /// The primary geometry column's name.
    pub fn primary_geometry_column(&self) -> Result<String> {
        self.geometry_column_names()?
            .into_iter()
            .next()
            .ok_or_else(|| MarquetError::spec(self.path(), "HEP002 §5.2", "table has no geometry columns"))
    }

    /// Add an ordinary H5Col column.
    pub fn add_column(&self, name: &str, spec: &ColumnSpec) -> Result<h5col::Column> {
        self.table.add_column(name, spec)
    }

    /// What [`MarquetTable::append`] and [`MarquetTable::write`] do to valid packed
    /// R-trees: rebuild them in place (the default) or leave them stale.
    pub fn set_rtree_on_append(&mut self, v: spatial_index::RTreeOnAppend) {
        self.rtree_on_append = v;
    }

    /// The table-level R-tree policy on append.
    pub fn rtree_on_append(&self) -> spatial_index::RTreeOnAppend {
        self.rtree_on_append
    }

    /// What appends and updates do with polygon rings that break a column's
    /// `ORIENTATION = COUNTERCLOCKWISE` (HEP002 §9.2): refuse them (the default) or re-wind
    /// them.
    pub fn set_orientation_on_write(&mut self, v: OrientationOnWrite) {
        self.orientation_on_write = v;
    }

    /// The table's [`OrientationOnWrite`] policy.
    pub fn orientation_on_write(&self) -> OrientationOnWrite {
        self.orientation_on_write
    }

    /// What column `name` holds; an error naming the member path when it is not a column.
    pub fn value_type(&self, name: &str) -> Result<ValueType> {
        if self.geometry_column_names()?.iter().any(|n| n == name) {
            return Ok(ValueType::Geometry);
        }
        match self.table.kind_of(name)? {
            None => Err(MarquetError::InvalidArgument(format!("{} is not a column", self.table.member_path(name)))),
            Some(ColumnKind::List) => Ok(ValueType::Other),
            Some(ColumnKind::Dataset) => Ok(ScalarType::of(self.table.column(name)?.dtype()).map_or(ValueType::Other, ValueType::Scalar)),
        }
    }
}

/// What a column of a Marquet table holds, as callers outside Rust name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ValueType {
    /// A geometry column (HEP002 §6).
    Geometry,
    /// An attribute column dataset of one of the [`ScalarType`]s.
    Scalar(ScalarType),
    /// Any other attribute column: another datatype, or a list column.
    Other,
}

/// The operations of each layer, one line each (the code is in the file named above each group).
impl MarquetTable {
    // ---- Geometry columns (geometry_column.rs)
    /// Add a geometry column. With `spec.form == None` the form is chosen at the first
    /// append from the data; until then the column does not exist in the file.
    pub fn add_geometry_column(&mut self, name: &str, spec: &GeometryColumnSpec) -> Result<()> {
        super::geometry_column::add_geometry_column(self, name, spec)
    }

    /// Create the column and all its attributes; with `register` also GEOMETRY_ENCODING and
    /// the GEOMETRY_COLUMNS entry (without, it stays an ordinary H5Col column: §11.2 step 1).
    pub(crate) fn create_geometry_column(&mut self, name: &str, spec: &GeometryColumnSpec, register: bool) -> Result<()> {
        super::geometry_column::create_geometry_column(self, name, spec, register)
    }

    /// How geometry column `col`'s data is compressed, read from its stored filters (the
    /// point or fixed-WKB dataset, or the WKB `VALUES`); `None` when it uses filters that
    /// [`Compression`] does not describe. The column's PACKED_RTREE is compressed the same
    /// way when built.
    pub fn geometry_compression(&self, col: &str) -> Result<Option<Compression>> {
        super::geometry_column::geometry_compression(self, col)
    }

    /// Describe a geometry column.
    pub fn geometry_column(&self, name: &str) -> Result<GeometryColumnInfo> {
        super::geometry_column::geometry_column(self, name)
    }

    // ---- Writing rows (write.rs)
    internal_pub! {
        /// Encode and summarize geometry values for column `info`; returns the H5Col values
        /// and per-row summaries. Nothing is written; a value that does not fit the form is
        /// refused here, before the file changes (HEP002 §11.2).
        fn prepare(&self, info: &GeometryColumnInfo, v: &GeometryValues) -> Result<(ColumnValues, Vec<RowInfo>)> {
            super::write::prepare(self, info, v)
        }
    }

    internal_pub! {
        /// Covering rows for summaries (fill for null, empty box for empty).
        fn covering_values(&self, cov: &str, rows: &[RowInfo]) -> Result<ColumnValues> {
            super::write::covering_values(self, cov, rows)
        }
    }

    internal_pub! {
        /// Widen BBOX and GEOMETRY_TYPES to cover `rows` (HEP002 §11.1). Only ever grows.
        ///
        /// When the column already holds rows but its attributes do not describe them (an empty
        /// GEOMETRY_TYPES, no BBOX: e.g. every row written so far was null or empty, or another
        /// producer omitted them), the existing rows are scanned once, so the attributes written
        /// now describe the whole column. A BBOX that wraps the antimeridian stays a box that
        /// contains the old and the new geometries ([`crate::BBox::union_wrapping`]).
        fn widen_summaries(&self, info: &GeometryColumnInfo, rows: &[RowInfo]) -> Result<()> {
            super::write::widen_summaries(self, info, rows)
        }
    }

    /// Rescan a geometry column and make BBOX and GEOMETRY_TYPES exact (HEP002 §11.1
    /// allows tightening after a full scan).
    pub fn tighten(&self, name: &str) -> Result<()> {
        super::write::tighten(self, name)
    }

    /// Overwrite BBOX and GEOMETRY_TYPES of `name` with exact values from `acc`.
    pub(crate) fn write_exact_summaries(&self, name: &str, form: StorageForm, acc: &SummaryAcc) -> Result<()> {
        super::write::write_exact_summaries(self, name, form, acc)
    }

    // ---- Reading geometries (read.rs)
    /// Read rows `[start, end)` of a geometry column as WKB (points are encoded as
    /// little-endian point WKB; empty points as NaN coordinates).
    pub fn read_wkb(&self, name: &str, start: u64, end: u64) -> Result<WkbBuffer> {
        super::read::read_wkb(self, name, start, end)
    }

    /// Read rows of a point column as coordinate arrays.
    pub fn read_points(&self, name: &str, start: u64, end: u64) -> Result<PointArrays> {
        super::read::read_points(self, name, start, end)
    }

    /// The WKB values of `rows` (strictly ascending, each below NROWS), in that order, for
    /// any storage form (points as little-endian ISO WKB). One read per span of nearby rows
    /// ([`h5col::take_spans`]) and the column opened once: what a query's caller needs to
    /// fetch its answer.
    pub fn take_wkb(&self, name: &str, rows: &[u64]) -> Result<WkbBuffer> {
        super::read::take_wkb(self, name, rows)
    }

    /// Read rows as decoded geometries (`None` = null).
    pub fn read_geometries(&self, name: &str, start: u64, end: u64) -> Result<Vec<Option<wkb::Geometry>>> {
        super::read::read_geometries(self, name, start, end)
    }

    /// Read rows as geo-types geometries (XY only; Z/M dropped).
    pub fn read_geo(&self, name: &str, start: u64, end: u64) -> Result<Vec<Option<geo_types::Geometry<f64>>>> {
        super::read::read_geo(self, name, start, end)
    }

    internal_pub! {
        /// Summaries of rows `[start, end)` of a geometry column (type, box, emptiness).
        fn row_infos(&self, name: &str, start: u64, end: u64) -> Result<Vec<RowInfo>> {
            super::read::row_infos(self, name, start, end)
        }
    }

    // ---- Spatial indexes, HEP002 §10 (spatial_index.rs)
    /// Row summaries of `[start, end)` read in pieces of [`SCAN_ROWS`], with boxes under the
    /// column's edges (ruling R8).
    pub(crate) fn scan_rows(&self, col: &str, start: u64, end: u64) -> Result<Vec<RowInfo>> {
        super::spatial_index::scan_rows(self, col, start, end)
    }

    /// The Marquet indexes linked from a geometry column, with their validity.
    pub fn spatial_indexes(&self, col: &str) -> Result<Vec<SpatialIndex>> {
        super::spatial_index::spatial_indexes(self, col)
    }

    /// [`MarquetTable::spatial_indexes`] for a caller that has already checked that `col` is
    /// a geometry column (a query reads its attributes once).
    pub(crate) fn spatial_indexes_unchecked(&self, col: &str) -> Result<Vec<SpatialIndex>> {
        super::spatial_index::spatial_indexes_unchecked(self, col)
    }

    /// The block length a new block index gets by default (HEP002 §10.2): aligned with the
    /// chunk row counts of every column dataset and every list column's `OFFSETS`
    /// ([`crate::spatial::block_bbox::choose_block_length`]).
    pub fn default_block_length(&self) -> Result<u64> {
        super::spatial_index::default_block_length(self)
    }

    /// Build (or rebuild in place) the block bounding-box index of geometry column `col`
    /// (HEP002 §10.3), with block length `block_length` or, by default,
    /// [`MarquetTable::default_block_length`]. Returns the index dataset's path.
    pub fn build_block_bbox(&self, col: &str, block_length: Option<u64>) -> Result<String> {
        super::spatial_index::build_block_bbox(self, col, block_length)
    }

    /// Build (or rebuild in place) the packed Hilbert R-tree of geometry column `col`
    /// (HEP002 §10.4) with node size `node_size` (default
    /// [`crate::spatial::packed_rtree::DEFAULT_NODE_SIZE`]). Returns the index dataset's path.
    pub fn build_rtree(&self, col: &str, node_size: Option<u16>) -> Result<String> {
        super::spatial_index::build_rtree(self, col, node_size)
    }

    /// Rebuild every Marquet index of `col` in place, valid or stale, keeping its block length
    /// or node size. Returns the paths rebuilt.
    pub fn rebuild_indexes(&self, col: &str) -> Result<Vec<String>> {
        super::spatial_index::rebuild_indexes(self, col)
    }

    /// Rebuild the packed R-trees of `col` in place, valid or stale, keeping their node size
    /// (an append operation's single rebuild, issue #16). Returns the paths rebuilt.
    pub fn rebuild_rtrees(&self, col: &str) -> Result<Vec<String>> {
        super::spatial_index::rebuild_rtrees(self, col)
    }

    /// Delete the Marquet indexes of `kind` on `col` (and their `SEARCH_INDEX_LIST`
    /// references). Returns how many were deleted.
    pub fn drop_index(&self, col: &str, kind: SpatialIndexKind) -> Result<usize> {
        super::spatial_index::drop_index(self, col, kind)
    }

    /// HEP001 §12.3 step 4 for Marquet's kinds, called before GENERATION and NROWS are
    /// committed: `new_rows` were written at `n_old..`. Only indexes that were valid before
    /// the append are maintained; stale ones are left alone.
    pub(crate) fn maintain_indexes_after_append(&self, col: &str, n_old: u64, new_rows: &[RowInfo], rtree: RTreeOnAppend) -> Result<()> {
        super::spatial_index::maintain_indexes_after_append(self, col, n_old, new_rows, rtree)
    }

    /// Logical truncation (HEP002 §11, HEP001 §12.5) that maintains the Marquet indexes
    /// valid before it: block indexes are cut and their last partial block recomputed
    /// (tokens first); R-trees are rebuilt or left stale as `rtree` says. BBOX and
    /// GEOMETRY_TYPES are left as they are (§11.1).
    pub fn truncate_with_options(&self, new_nrows: u64, rtree: RTreeOnAppend) -> Result<()> {
        super::spatial_index::truncate_with_options(self, new_nrows, rtree)
    }

    internal_pub! {
        /// The block index of `col` if it passes the validity check and the structural checks:
        /// `block_length` a scalar unsigned integer ≥ 1, the required fields present, at least
        /// `ceil(NROWS / B)` entries, every entry's `n` equal to its block's row count, counts
        /// consistent, and no block with geometries holding the empty box.
        fn open_block_index(&self, col: &str) -> Result<IndexState<BlockIndex>> {
            super::spatial_index::open_block_index(self, col)
        }
    }

    /// [`MarquetTable::open_block_index`] from a column's index list.
    pub(crate) fn open_block_index_in(&self, all: &[SpatialIndex]) -> Result<IndexState<BlockIndex>> {
        super::spatial_index::open_block_index_in(self, all)
    }

    internal_pub! {
        /// The R-tree of `col` if it passes the validity check and its attributes can be read
        /// (`node_size`, `num_items` scalar unsigned integers, the required fields present). The
        /// §17 checks of the layout and of every entry read happen in
        /// [`crate::spatial::packed_rtree::search`].
        fn open_rtree(&self, col: &str) -> Result<IndexState<RTreeIndex>> {
            super::spatial_index::open_rtree(self, col)
        }
    }

    /// [`MarquetTable::open_rtree`] from a column's index list.
    pub(crate) fn open_rtree_in(&self, all: &[SpatialIndex]) -> Result<IndexState<RTreeIndex>> {
        super::spatial_index::open_rtree_in(self, all)
    }

    // ---- Modification, HEP002 §11 (modify.rs)
    /// Update the geometries of rows `[start, start + values.len())` in place (HEP002 §11.1):
    /// values that do not fit the column's form are refused before anything changes; BBOX
    /// and GEOMETRY_TYPES are widened first; with a covering column, a box holding the old
    /// and the new geometry is written before the geometry, and tightened after it.
    pub fn update_geometries(&self, name: &str, start: u64, values: &GeometryValues) -> Result<()> {
        super::modify::update_geometries(self, name, start, values)
    }

    /// Logical truncation to `nrows` rows (HEP001 §12.5). BBOX and GEOMETRY_TYPES stay
    /// (they may now be wider than needed, which §6.3/§6.4 allow). Valid block
    /// bounding-box indexes are maintained; valid R-trees are rebuilt or left stale as the
    /// table's [`super::RTreeOnAppend`] policy says
    /// ([`MarquetTable::truncate_with_options`]).
    pub fn truncate(&self, nrows: u64) -> Result<()> {
        super::modify::truncate(self, nrows)
    }

    /// Replace geometry column `name` with a new one in the form `spec` describes (HEP002
    /// §11.2), optionally transforming every geometry (e.g. a reprojection, with the CRS in
    /// `spec`). The four steps: (1) write the new column in full with every attribute but
    /// GEOMETRY_ENCODING; (2) write GEOMETRY_ENCODING and swap the GEOMETRY_COLUMNS entry at
    /// the same position; (3) indexes are the caller's to rebuild; (4) delete the old column
    /// with its covering column and its search indexes, then rename the new column to the
    /// old name (references follow renames) and fix column-order.
    pub fn replace_geometry_column(&mut self, name: &str, spec: &GeometryColumnSpec, transform: Option<&dyn Fn(wkb::Geometry) -> Result<wkb::Geometry>>) -> Result<()> {
        super::modify::replace_geometry_column(self, name, spec, transform)
    }

    // ---- Appending another table (append_from.rs)
    internal_pub! {
        /// Check that the rows of `src` can be appended to this table: the same columns by name
        /// (covering columns aside), geometry columns in the same places, list columns where
        /// this table has list columns. Datatypes are checked by the first append, before it
        /// changes the file.
        fn check_append_source(&self, src: &MarquetTable) -> Result<()> {
            super::append_from::check_append_source(self, src)
        }
    }

    /// Append every row of `src` to this table, `batch_rows` rows per append (HEP002 §11.1
    /// over HEP001 §12.3), R-trees treated as `rtree` says; `progress` hears the rows
    /// appended so far after each batch. Returns the rows appended.
    ///
    /// The whole operation is one write ([`TableWriter`]): every batch is
    /// staged past `NROWS` and all are committed at once, so an error in any batch (a value
    /// that does not fit this table's datatypes, named by its table row) or a kill leaves
    /// the table exactly as it was. The column sets are compared first
    /// (`MarquetTable::check_append_source`).
    ///
    /// Packed R-trees cannot be extended (HEP002 §10.4): one commit means at most one
    /// rebuild (`rtree` = [`RTreeOnAppend::Rebuild`]) or the R-trees left stale. Block
    /// indexes, BBOX, GEOMETRY_TYPES and covering rows are maintained by the commit.
    pub fn append_from(&self, src: &MarquetTable, batch_rows: u64, rtree: RTreeOnAppend, progress: &Progress) -> Result<u64> {
        super::append_from::append_from(self, src, batch_rows, rtree, progress)
    }
}
