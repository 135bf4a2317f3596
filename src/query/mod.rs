//! Spatial queries in layers (HEP002 §10, §17).
//!
//! [`MarquetTable::query`] answers "which rows of geometry column `col` satisfy `predicate`
//! against `window`" and prunes in four layers, each optional and each checked before use,
//! like the layered pruning of GeoParquet engines (whole groups of rows, then rows by box,
//! then exact geometry):
//!
//! 1. **Packed R-tree** (`PACKED_RTREE`, §10.4), consulted first: only rows whose leaf box
//!    meets the window's box remain candidates. A leaf box is the row's own box, so when the
//!    R-tree answers, layers 2 and 3 could only repeat it and are not read (issue #16).
//! 2. **Block boxes** (`BLOCK_BBOX`, §10.3), when no R-tree answered: row blocks whose box
//!    misses the window's box are skipped without reading any of their rows.
//! 3. **Covering column** (§10.5), when no R-tree answered: a candidate whose stored box
//!    misses the window's box is rejected without reading its geometry.
//! 4. **Exact predicate** on the decoded geometry (the `geo` crate).
//!
//! Only rows that layer 3 keeps are read from the geometry column, in runs of adjacent rows;
//! skipped blocks cost no I/O at all. An index is used only when it passes the validity
//! check of HEP001 §12.2 (a stale index is ignored silently) and the structural checks of
//! HEP002 §17 (an index that fails one is ignored and named in
//! [`QueryStats::ignored_indexes`]); a broken index therefore costs speed, never answers.
//! Indexes are derivative data an adversary can falsify (§17): [`Query::use_indexes`] =
//! `false` trusts none of them (nor the covering column) and tests every row.
//!
//! # Semantics
//!
//! * Predicates are evaluated in planar XY with `geo` (Z and M are ignored). Null and empty
//!   geometries never match, whatever the predicate.
//! * [`Predicate::BBoxOnly`] matches the rows whose geometry's box (computed from the
//!   geometry, ruling R8 boxes for non-planar edges) intersects the window's box.
//! * **Geodesic predicates are not implemented.** For a column whose `EDGES` is not `PLANAR`,
//!   every predicate falls back to bbox-only semantics on the grown boxes that contain the
//!   geodesic edges (ruling R8): the answer is a superset of the true geodesic answer for
//!   `Intersects`, `Within` and `Contains`, and [`QueryStats::approximate`] is set.
//! * A window box with `xmin > xmax` wraps around the antimeridian (geographic CRS only): it
//!   stands for the two boxes `xmin..180` and `-180..xmax`.
//! * Should `geo` panic on a degenerate geometry (our decoder accepts e.g. one-point rings,
//!   ruling R4), the row is kept by its box and counted in
//!   [`QueryStats::predicate_fallbacks`].
//!
//! # Example
//!
//! 100 points on a grid, with both spatial indexes; a box query answered by the R-tree
//! agrees with the full scan, and a triangle window keeps exactly the points on or inside it.
//!
//! ```
//! use marquet::h5col::File;
//! use marquet::marquet::{GeoBatch, GeometryColumnSpec, GeometryValues, MarquetTable, StorageForm};
//! use marquet::query::{Predicate, Query, TableQuery, Window};
//! use marquet::wkb::{Coord, Geometry, Polygon};
//! use marquet::{BBox, Dimensions};
//!
//! let path = std::env::temp_dir().join(format!("marquet-doc-query-{}.h5", std::process::id()));
//! let file = File::create(&path)?;
//! let mut t = MarquetTable::create(&file, "/grid")?;
//! let form = StorageForm::Point { dims: Dimensions::Xy, f32: false };
//! t.add_geometry_column("location", &GeometryColumnSpec::default().with_form(form))?;
//! // Row i is the point (i % 10, i / 10).
//! let x = (0..100).map(|i| (i % 10) as f64).collect();
//! let y = (0..100).map(|i| (i / 10) as f64).collect();
//! let points = GeometryValues::Points { dims: Dimensions::Xy, x, y, z: None, m: None, valid: None };
//! t.append(&GeoBatch::new().with_geometry("location", points))?;
//! t.build_block_bbox("location", Some(10))?;
//! t.build_rtree("location", None)?;
//!
//! let q = Query::bbox(BBox::xy(2.5, 3.5, 4.5, 5.5));
//! let r = t.query("location", &q)?;
//! assert_eq!(r.rows, vec![43, 44, 53, 54]);
//! assert!(r.stats.used_rtree);
//! let scan = t.query("location", &q.clone().with_indexes(false))?; // trusts no index (§17)
//! assert_eq!(scan.rows, r.rows);
//!
//! let triangle = vec![Coord::xy(0.0, 0.0), Coord::xy(9.0, 0.0), Coord::xy(0.0, 9.0), Coord::xy(0.0, 0.0)];
//! let window = Window::Geometry(Geometry::Polygon(Polygon { dims: Dimensions::Xy, rings: vec![triangle] }));
//! let r = t.query("location", &Query::new(window, Predicate::Intersects))?;
//! let expected: Vec<u64> = (0..100).filter(|i| i % 10 + i / 10 <= 9).collect();
//! assert_eq!(r.rows, expected);
//! assert_eq!(r.rows.len(), 55);
//! # drop((t, file));
//! # std::fs::remove_file(&path).ok();
//! # Ok::<(), marquet::Error>(())
//! ```

mod exact;
pub mod reader;
mod layers;
mod window;

pub use exact::Predicate;
pub use layers::READ_ROWS;
pub use window::Window;


use crate::error::Result;
use crate::marquet::MarquetTable;
use crate::spec::BBox;

/// A spatial query (see the module documentation for the layers and semantics).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Query {
    /// The query area.
    pub window: Window,
    /// The spatial predicate tested exactly on the candidate rows.
    pub predicate: Predicate,
    /// Use search indexes and the covering column at all (default `true`). `false` is the
    /// verify-nothing full scan of HEP002 §17: every row is read and tested.
    pub use_indexes: bool,
    /// Use a block bounding-box index (when `use_indexes`).
    pub use_block_index: bool,
    /// Use a packed R-tree (when `use_indexes`).
    pub use_rtree: bool,
    /// Use the covering column (when `use_indexes`).
    pub use_covering: bool,
    /// Also return the WKB of the matching rows ([`QueryResult::wkb`]), taken from the
    /// reads the exact layer makes anyway.
    pub with_wkb: bool,
}

impl Query {
    /// A query with every layer on.
    pub fn new(window: Window, predicate: Predicate) -> Query {
        Query { window, predicate, use_indexes: true, use_block_index: true, use_rtree: true, use_covering: true, with_wkb: false }
    }
    /// Rows whose geometry intersects the box.
    pub fn bbox(b: BBox) -> Query {
        Query::new(Window::BBox(b), Predicate::Intersects)
    }
    /// Use predicate `p`.
    pub fn with_predicate(mut self, p: Predicate) -> Self {
        self.predicate = p;
        self
    }
    /// Use search indexes and the covering column at all (see [`Query::use_indexes`]).
    pub fn with_indexes(mut self, on: bool) -> Self {
        self.use_indexes = on;
        self
    }
    /// Use a block bounding-box index when one is valid (see [`Query::use_block_index`]).
    pub fn with_block_index(mut self, on: bool) -> Self {
        self.use_block_index = on;
        self
    }
    /// Use a packed R-tree when one is valid.
    pub fn with_rtree(mut self, on: bool) -> Self {
        self.use_rtree = on;
        self
    }
    /// Use the covering column to reject rows before reading their geometry.
    pub fn with_covering(mut self, on: bool) -> Self {
        self.use_covering = on;
        self
    }
    /// Return the matching rows' WKB too (points as little-endian ISO WKB).
    pub fn with_wkb(mut self, on: bool) -> Self {
        self.with_wkb = on;
        self
    }
}

/// What a query did, layer by layer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueryStats {
    /// NROWS.
    pub rows_total: u64,
    /// Row blocks of the block index used (0 when none was used).
    pub blocks_total: u64,
    /// Row blocks skipped through their boxes.
    pub blocks_skipped: u64,
    /// Rows the R-tree returned within the blocks kept (0 when no R-tree was used).
    pub rtree_candidates: u64,
    /// Rows the covering column rejected.
    pub covering_rejected: u64,
    /// Non-null rows whose geometry was read and tested.
    pub exact_tested: u64,
    /// Rows in the answer.
    pub rows_matched: u64,
    /// Bytes of dataset elements read: index entries, covering rows, geometry rows (for a
    /// variable-length WKB column: the OFFSETS and MASK elements and the WKB bytes).
    pub bytes_read: u64,
    /// A valid block bounding-box index was used.
    pub used_block_index: bool,
    /// A valid packed R-tree was used.
    pub used_rtree: bool,
    /// The covering column was used.
    pub used_covering: bool,
    /// Indexes that passed the validity check but failed a structural check (HEP002 §17),
    /// as "path: reason"; they were ignored.
    pub ignored_indexes: Vec<String>,
    /// Indexes skipped because their validity tokens did not match (HEP001 §12.2).
    pub stale_indexes: Vec<String>,
    /// True when the column's edges are not planar and the predicate was evaluated on boxes.
    pub approximate: bool,
    /// Rows kept by their box because the exact predicate failed on them.
    pub predicate_fallbacks: u64,
    /// Rows answered by a box inside the (box) window of an intersects query — an R-tree
    /// candidate's leaf box, or the box of a block whose rows are all non-null and
    /// non-empty: their geometry was not tested (nor read, unless WKB was wanted).
    pub rows_by_box: u64,
}

impl QueryStats {
    /// The counters, by name, in the one order every interface reports them: the C ABI's
    /// `marquet_query_result_stats` array and the `stats` object of `marquet query --json`.
    /// New counters are added at the end.
    pub fn counters(&self) -> [(&'static str, u64); 9] {
        [
            ("rows_total", self.rows_total),
            ("blocks_total", self.blocks_total),
            ("blocks_skipped", self.blocks_skipped),
            ("rtree_candidates", self.rtree_candidates),
            ("covering_rejected", self.covering_rejected),
            ("exact_tested", self.exact_tested),
            ("rows_matched", self.rows_matched),
            ("bytes_read", self.bytes_read),
            ("rows_by_box", self.rows_by_box),
        ]
    }
}

/// Matching rows, ascending, and how they were found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueryResult {
    /// The matching rows, ascending, without duplicates.
    pub rows: Vec<u64>,
    /// What each pruning layer did.
    pub stats: QueryStats,
    /// The WKB of `rows`, in the same order, when the query asked for it
    /// ([`Query::with_wkb`]).
    pub wkb: Option<crate::marquet::WkbBuffer>,
}

/// A spatial query combined with attribute filters (AND), and how each part ran.
#[derive(Debug, Clone, PartialEq)]
pub struct CombinedResult {
    /// Matching rows, ascending.
    pub rows: Vec<u64>,
    /// The spatial part (`None` when the attribute filters already matched nothing and
    /// the spatial query was skipped).
    pub spatial: Option<QueryStats>,
    /// One entry per attribute filter, in order: which index answered, rows examined.
    pub attributes: Vec<crate::h5col::predicate::FilterStats>,
    /// The WKB of `rows`, in the same order, when the spatial query asked for it
    /// ([`Query::with_wkb`]) and ran; what `marquet query --format` prints, so the rows'
    /// geometries are not read a second time (issue #33 item 1).
    pub wkb: Option<crate::marquet::WkbBuffer>,
}

/// Spatial queries on a [`MarquetTable`]: the query layer's methods, in scope with
/// `use marquet::query::TableQuery`. A trait rather than inherent methods so that the
/// storage layer (`marquet`) never depends on the query layer above it (docs/ARCHITECTURE.md).
pub trait TableQuery {
    /// Run a spatial query on geometry column `col` (see [`crate::query`]). Rows in the
    /// result are ascending.
    fn query(&self, col: &str, q: &Query) -> Result<QueryResult>;

    /// Rows of geometry column `col` that satisfy the spatial query `q` *and* every
    /// attribute filter. Attribute filters run first, each with its own best valid
    /// HEP001 index (`q.use_indexes` false: by scans); the spatial query runs with its
    /// own layers only when some row is left, and the two row sets are intersected.
    fn query_where(&self, col: &str, q: &Query, filters: &[(String, crate::h5col::predicate::ColumnFilter)]) -> Result<CombinedResult>;
}

impl TableQuery for MarquetTable {
    fn query(&self, col: &str, q: &Query) -> Result<QueryResult> {
        // A one-shot query is the one engine on a snapshot taken for it (issue #33): by
        // byte range when libhdf5 has the file open read-only from a disk (the snapshot
        // then costs the bytes it reads, not libhdf5's object opens: about 0.3 M
        // instructions against 20 M and more, docs/PERFORMANCE.md "Session 19"), through
        // libhdf5 otherwise. A query the byte-range path fails (what it does not read, a
        // damaged file) is answered through libhdf5, so errors stay libhdf5's.
        q.window.check()?;
        let id = self.table().id();
        if let Ok(Some(file)) = crate::h5::pure::PureFile::of_object(id, &crate::h5::file_name(id).unwrap_or_default()) {
            let tv = crate::marquet::facts::TableView::of(&file as &dyn crate::h5::objects::Objects, self.path(), self.is_interpretable());
            let r = crate::marquet::snapshot::ColumnSnapshot::open(&tv, col).and_then(|mut snap| layers::run(&tv, &mut snap, q));
            if r.is_ok() {
                return r;
            }
        }
        let o = crate::h5::objects::LibObjects(id);
        let tv = crate::marquet::facts::TableView::of(&o, self.path(), self.is_interpretable());
        let mut snap = crate::marquet::snapshot::ColumnSnapshot::open(&tv, col)?;
        layers::run(&tv, &mut snap, q)
    }

    fn query_where(&self, col: &str, q: &Query, filters: &[(String, crate::h5col::predicate::ColumnFilter)]) -> Result<CombinedResult> {
        let attributes = attribute_rows(self, q, filters)?;
        combine(attributes, || self.query(col, q))
    }
}

/// The rows every attribute filter keeps (AND), each filter with its own best valid HEP001
/// index (`q.use_indexes` false: by scans), and how each ran; `None` without filters.
pub(crate) fn attribute_rows(
    t: &MarquetTable,
    q: &Query,
    filters: &[(String, crate::h5col::predicate::ColumnFilter)],
) -> Result<Option<(Vec<u64>, Vec<crate::h5col::predicate::FilterStats>)>> {
    if filters.is_empty() {
        // Nothing to intersect with: no list of every row to build.
        return Ok(None);
    }
    crate::h5col::predicate::filter_all(t.table(), filters, q.use_indexes).map(Some)
}

/// A spatial query combined with the rows of [`attribute_rows`]: the spatial query runs
/// only when some row is left, and the two row sets are intersected.
pub(crate) fn combine(
    attributes: Option<(Vec<u64>, Vec<crate::h5col::predicate::FilterStats>)>,
    spatial: impl FnOnce() -> Result<QueryResult>,
) -> Result<CombinedResult> {
    let Some((attr_rows, attributes)) = attributes else {
        let r = spatial()?;
        return Ok(CombinedResult { rows: r.rows, spatial: Some(r.stats), attributes: Vec::new(), wkb: r.wkb });
    };
    if attr_rows.is_empty() {
        return Ok(CombinedResult { rows: attr_rows, spatial: None, attributes, wkb: None });
    }
    let r = spatial()?;
    let rows = crate::h5col::predicate::intersect(&r.rows, &attr_rows);
    let wkb = r.wkb.map(|w| kept_wkb(&r.rows, &w, &rows));
    Ok(CombinedResult { rows, spatial: Some(r.stats), attributes, wkb })
}

/// The values of `wkb` (one per row of `all`) of the rows `kept`, a subsequence of `all`
/// (both ascending).
fn kept_wkb(all: &[u64], wkb: &crate::marquet::WkbBuffer, kept: &[u64]) -> crate::marquet::WkbBuffer {
    let mut out = crate::marquet::WkbBuffer::new();
    let mut i = 0;
    for &r in kept {
        let Some(p) = all[i..].iter().position(|&a| a == r) else { break };
        i += p;
        out.push(wkb.get(i));
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_rows_keep_their_own_wkb() {
        let mut w = crate::marquet::WkbBuffer::new();
        for v in [Some(&b"a"[..]), None, Some(b"ccc"), Some(b"dd"), Some(b"e")] {
            w.push(v);
        }
        let all = [2, 5, 7, 9, 11];
        let kept = kept_wkb(&all, &w, &[5, 9, 11]);
        assert_eq!(kept.len(), 3);
        assert_eq!((kept.get(0), kept.get(1), kept.get(2)), (None, Some(&b"dd"[..]), Some(&b"e"[..])));
        assert_eq!(kept.bytes, b"dde");
        let none = kept_wkb(&all, &w, &[]);
        assert!(none.is_empty());
        assert_eq!(none.offsets, vec![0]);
    }
}
