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

pub mod reader;

use std::ops::Range;

use geo::{Contains, Intersects, Within};

use crate::error::{MarquetError, Result};
use crate::h5col::ColumnKind;
use crate::index::geom_box::intersects;
use crate::index::packed_rtree;
use crate::marquet::bounds;
use crate::marquet::spatial_index::IndexState;
use crate::h5col::list::ListColumn;
use crate::h5col::{Column, ListValues};
use crate::marquet::{GeometryColumnInfo, MarquetTable, StorageForm};
use crate::spec::BBox;
use crate::wkb;

/// Rows read from a column in one piece at most.
pub const READ_ROWS: u64 = 65_536;

/// The query area.
#[derive(Debug, Clone, PartialEq)]
pub enum Window {
    /// A box (XY); `xmin > xmax` wraps around the antimeridian.
    BBox(BBox),
    /// A geometry, in the column's coordinates.
    Geometry(wkb::Geometry),
}

impl Window {
    /// A window from an ISO WKB value.
    pub fn from_wkb(bytes: &[u8]) -> Result<Window> {
        Ok(Window::Geometry(wkb::decode(bytes).map_err(|e| e.into_marquet("<query window>", None))?))
    }

    /// The window's XY box (a geometry window's vertex box; [`BBox::EMPTY`] when empty).
    pub fn bbox(&self) -> BBox {
        match self {
            Window::BBox(b) => BBox::xy(b.xmin, b.ymin, b.xmax, b.ymax),
            Window::Geometry(g) => {
                let w = wkb::encode(g, wkb::ByteOrder::LittleEndian);
                wkb::scan(&w).map(|i| if i.is_empty { BBox::EMPTY } else { i.bbox }).unwrap_or(BBox::EMPTY)
            }
        }
    }

    /// The window as a `geo` geometry for the exact predicates: a box becomes a `Rect`, a
    /// wrapping box the two rectangles `xmin..180` and `-180..xmax`.
    pub fn to_geo(&self) -> geo::Geometry<f64> {
        match self {
            Window::BBox(b) if b.xmin > b.xmax => geo::Geometry::MultiPolygon(geo::MultiPolygon(vec![
                geo::Rect::new((b.xmin, b.ymin), (180f64.max(b.xmin), b.ymax)).to_polygon(),
                geo::Rect::new(((-180f64).min(b.xmax), b.ymin), (b.xmax, b.ymax)).to_polygon(),
            ])),
            Window::BBox(b) => geo::Geometry::Rect(geo::Rect::new((b.xmin, b.ymin), (b.xmax, b.ymax))),
            Window::Geometry(g) => g.into(),
        }
    }
}

/// The spatial predicate, read as "the row's geometry *predicate* the window".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Predicate {
    /// The geometry and the window share at least one point.
    #[default]
    Intersects,
    /// The geometry lies within the window (OGC `Within`).
    Within,
    /// The geometry contains the window (OGC `Contains`).
    Contains,
    /// The geometry's box intersects the window's box.
    BBoxOnly,
}

impl Predicate {
    /// The exact planar predicate of two `geo` geometries (not `BBoxOnly`, which tests
    /// boxes).
    pub fn evaluate(&self, geometry: &geo::Geometry<f64>, window: &geo::Geometry<f64>) -> bool {
        match self {
            Predicate::Intersects => geometry.intersects(window),
            Predicate::Within => geometry.is_within(window),
            Predicate::Contains => geometry.contains(window),
            Predicate::BBoxOnly => {
                use geo::BoundingRect;
                match (geometry.bounding_rect(), window.bounding_rect()) {
                    (Some(a), Some(b)) => a.intersects(&b),
                    _ => false,
                }
            }
        }
    }
}

/// A spatial query (see the module documentation for the layers and semantics).
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    pub window: Window,
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
    pub fn with_predicate(mut self, p: Predicate) -> Self {
        self.predicate = p;
        self
    }
    pub fn with_indexes(mut self, on: bool) -> Self {
        self.use_indexes = on;
        self
    }
    pub fn with_block_index(mut self, on: bool) -> Self {
        self.use_block_index = on;
        self
    }
    pub fn with_rtree(mut self, on: bool) -> Self {
        self.use_rtree = on;
        self
    }
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
    pub used_block_index: bool,
    pub used_rtree: bool,
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
}

/// Matching rows, ascending, and how they were found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueryResult {
    pub rows: Vec<u64>,
    pub stats: QueryStats,
    /// The WKB of `rows`, in the same order, when the query asked for it
    /// ([`Query::with_wkb`]).
    pub wkb: Option<crate::marquet::WkbBuffer>,
}

/// Append row range `r` to `runs`, merging with the last run when adjacent.
fn push_run(runs: &mut Vec<Range<u64>>, r: Range<u64>) {
    if r.is_empty() {
        return;
    }
    match runs.last_mut() {
        Some(last) if last.end == r.start => last.end = r.end,
        _ => runs.push(r),
    }
}

/// Split runs into pieces of at most [`READ_ROWS`] rows.
fn pieces(runs: &[Range<u64>]) -> impl Iterator<Item = Range<u64>> + '_ {
    runs.iter().flat_map(|r| {
        let r = r.clone();
        (r.start..r.end).step_by(READ_ROWS as usize).map(move |s| s..(s + READ_ROWS).min(r.end))
    })
}

/// Group pieces whose gaps are at most [`crate::h5col::TAKE_GAP`] rows into one read of at
/// most [`READ_ROWS`] rows: each HDF5 read decompresses whole chunks, so a few unwanted
/// rows in between cost less than another read. Returns (rows to read, the pieces in it).
fn read_groups(runs: &[Range<u64>]) -> Vec<(Range<u64>, Vec<Range<u64>>)> {
    let mut out: Vec<(Range<u64>, Vec<Range<u64>>)> = Vec::new();
    for p in pieces(runs) {
        match out.last_mut() {
            Some((g, members)) if p.start - g.end <= crate::h5col::TAKE_GAP && p.end - g.start <= READ_ROWS => {
                g.end = p.end;
                members.push(p);
            }
            _ => out.push((p.clone(), vec![p])),
        }
    }
    out
}

impl MarquetTable {
    /// Run a spatial query on geometry column `col` (see [`crate::query`]). Rows in the
    /// result are ascending.
    pub fn query(&self, col: &str, q: &Query) -> Result<QueryResult> {
        let info = self.geometry_column(col)?;
        let n = self.nrows()?;
        let mut st = QueryStats { rows_total: n, ..Default::default() };
        let wbox = q.window.bbox();
        if let Window::BBox(b) = &q.window {
            if b.xmin > b.xmax && !info.crs.is_geographic() {
                return Err(MarquetError::InvalidArgument(format!(
                    "a window with xmin > xmax wraps around the antimeridian, which needs a geographic crs ({})",
                    info.path
                )));
            }
        }
        let planar = info.edges.is_planar();
        let predicate = if planar { q.predicate } else { Predicate::BBoxOnly };
        st.approximate = !planar && q.predicate != Predicate::BBoxOnly;
        if n == 0 || wbox.is_empty() || [wbox.xmin, wbox.ymin, wbox.xmax, wbox.ymax].iter().any(|v| v.is_nan()) {
            return Ok(QueryResult { rows: Vec::new(), stats: st, wkb: q.with_wkb.then(crate::marquet::WkbBuffer::new) });
        }

        // The column's indexes, listed once for both layers (a listing that fails leaves
        // the query to the layers below, reported as an ignored index).
        let listed = if q.use_indexes && (q.use_block_index || q.use_rtree) {
            self.spatial_indexes_unchecked(col).map_err(|e| e.to_string())
        } else {
            Ok(Vec::new())
        };
        fn invalid<T>(path: &str, reason: String) -> IndexState<T> {
            IndexState::Invalid { path: path.to_string(), reason }
        }

        // Layer 2, consulted first: the R-tree. A valid packed R-tree yields every candidate
        // row by the row's own box, so block boxes and the covering column could only
        // repeat its answer: when it answers, the query reads neither (issue #16: the default
        // layout has all three, and each costs a dataset open and a chunk read per query).
        // When it is absent, stale or damaged, the block index and the covering column are
        // the fallback.
        let mut runs: Vec<Range<u64>> = std::iter::once(0..n).collect();
        if q.use_indexes && q.use_rtree {
            let state = match &listed {
                Ok(all) => self.open_rtree_in(all).unwrap_or_else(|e| invalid(&info.path, e.to_string())),
                Err(e) => invalid(&info.path, e.clone()),
            };
            match state {
                IndexState::Usable(mut rt) => {
                    let (num_items, node_size) = (rt.num_items, rt.node_size);
                    let found = packed_rtree::search(&mut rt, num_items, node_size, n, &wbox);
                    st.bytes_read += rt.bytes_read;
                    match found {
                        Ok(rows) => {
                            st.used_rtree = true;
                            let mut kept = Vec::new();
                            let mut ri = 0;
                            for row in rows {
                                while ri < runs.len() && runs[ri].end <= row {
                                    ri += 1;
                                }
                                if ri < runs.len() && runs[ri].contains(&row) {
                                    push_run(&mut kept, row..row + 1);
                                    st.rtree_candidates += 1;
                                }
                            }
                            runs = kept;
                        }
                        Err(e) => st.ignored_indexes.push(format!("{}: {}", rt.path, crate::index::with_path(e, &rt.path))),
                    }
                }
                IndexState::Invalid { path, reason } => st.ignored_indexes.push(format!("{path}: {reason}")),
                IndexState::Stale { path } => st.stale_indexes.push(path),
                IndexState::Absent => {}
            }
        }

        // Layer 1: block boxes, when no R-tree answered.
        if q.use_indexes && q.use_block_index && !st.used_rtree {
            let state = match &listed {
                Ok(all) => self.open_block_index_in(all).unwrap_or_else(|e| invalid(&info.path, e.to_string())),
                Err(e) => invalid(&info.path, e.clone()),
            };
            match state {
                IndexState::Usable(bi) => {
                    st.used_block_index = true;
                    st.bytes_read += bi.bytes_read;
                    st.blocks_total = bi.entries.len() as u64;
                    let kept = bi.entries.iter().filter(|e| intersects(&e.bbox, &wbox)).count() as u64;
                    st.blocks_skipped = st.blocks_total - kept;
                    runs = crate::index::blocks_to_read(&bi.entries, bi.block_length, n, &wbox);
                }
                IndexState::Invalid { path, reason } => st.ignored_indexes.push(format!("{path}: {reason}")),
                IndexState::Stale { path } => st.stale_indexes.push(path),
                IndexState::Absent => {}
            }
        }

        // Layer 3: the covering column.
        if q.use_indexes && q.use_covering && !st.used_rtree && !runs.is_empty() {
            if let Some(cov) = &info.covering {
                if let Some(kept) = self.covering_filter(cov, &runs, &wbox, &mut st)? {
                    st.used_covering = true;
                    runs = kept;
                }
            }
        }

        // Layer 4: the exact predicate.
        let window_geo = q.window.to_geo();
        let mut rows = Vec::new();
        let model = bounds::edge_model(&info.edges);
        let src = GeomSource::open(self, &info)?;
        let mut wkb = q.with_wkb.then(crate::marquet::WkbBuffer::new);
        // A box window (not wrapping the antimeridian) decides rows whose box lies inside
        // it without the exact test: such a geometry intersects the window, and is within
        // it when its box is inside the window's interior.
        let box_window = match &q.window {
            Window::BBox(b) if b.xmin <= b.xmax => Some(*b),
            _ => None,
        };
        let inside = |g: &BBox, strict: bool| {
            box_window.as_ref().is_some_and(|w| {
                if strict {
                    g.xmin > w.xmin && g.xmax < w.xmax && g.ymin > w.ymin && g.ymax < w.ymax
                } else {
                    g.xmin >= w.xmin && g.xmax <= w.xmax && g.ymin >= w.ymin && g.ymax <= w.ymax
                }
            })
        };
        for (group, members) in read_groups(&runs) {
            let (s, e) = (group.start, group.end);
            // Offsets (relative to `s`) of the rows to test: the members, not the gaps.
            let wanted = members.iter().flat_map(|m| (m.start - s) as usize..(m.end - s) as usize);
            match &src {
                GeomSource::Point { col, x, y, f32, dims } => {
                    let a = col.read(s, e - s)?;
                    st.bytes_read += a.bytes.len() as u64;
                    let miss = a.missing(col.fill());
                    let mut points = None;
                    let code = crate::spec::GeometryType::new(crate::spec::GeometryKind::Point, *dims).iso_code().to_le_bytes();
                    let get = |el: &[u8], off: usize| -> f64 {
                        if *f32 {
                            el.get(off..off + 4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64).unwrap_or(f64::NAN)
                        } else {
                            el.get(off..off + 8)
                                .and_then(|b| b.try_into().ok())
                                .map(f64::from_le_bytes)
                                .unwrap_or(f64::NAN)
                        }
                    };
                    for i in wanted {
                        if miss[i] {
                            continue;
                        }
                        st.exact_tested += 1;
                        let el = a.element(i);
                        let (px, py) = (get(el, *x), get(el, *y));
                        if px.is_nan() || py.is_nan() {
                            continue; // empty point
                        }
                        let pbox = BBox::xy(px, py, px, py);
                        let hit = match predicate {
                            Predicate::BBoxOnly => intersects(&pbox, &wbox),
                            Predicate::Intersects if box_window.is_some() => inside(&pbox, false),
                            Predicate::Within if box_window.is_some() => inside(&pbox, true),
                            _ => {
                                let g = geo::Geometry::Point(geo::Point::new(px, py));
                                exact(&predicate, &g, &window_geo, &pbox, &wbox, &mut st)
                            }
                        };
                        if hit {
                            rows.push(s + i as u64);
                            if let Some(out) = wkb.as_mut() {
                                let p = points.get_or_insert_with(|| crate::marquet::points_from(&a, &miss, *dims));
                                crate::marquet::push_point_wkb(out, p, i, &code);
                            }
                        }
                    }
                }
                GeomSource::Fixed { .. } | GeomSource::Var { .. } => {
                    let values = src.read_wkb(s, e, &mut st)?;
                    for i in wanted {
                        let Some(w) = &values[i] else { continue };
                        st.exact_tested += 1;
                        let row = s + i as u64;
                        let scanned = wkb::scan(w).map_err(|e| e.into_marquet(info.path.clone(), Some(row)))?;
                        if scanned.is_empty {
                            continue;
                        }
                        let gbox = if planar {
                            scanned.bbox
                        } else {
                            bounds::geometry_box(w, model, info.orientation_ccw)
                                .map_err(|e| e.into_marquet(info.path.clone(), Some(row)))?
                        };
                        if !intersects(&gbox, &wbox) {
                            continue; // no predicate can hold
                        }
                        let hit = match predicate {
                            Predicate::BBoxOnly => true,
                            Predicate::Intersects if inside(&gbox, false) => true,
                            Predicate::Within if inside(&gbox, true) => true,
                            _ => {
                                let g: geo::Geometry<f64> = wkb::decode(w)
                                    .map_err(|e| e.into_marquet(info.path.clone(), Some(row)))?
                                    .into();
                                exact(&predicate, &g, &window_geo, &gbox, &wbox, &mut st)
                            }
                        };
                        if hit {
                            rows.push(row);
                            if let Some(out) = wkb.as_mut() {
                                out.push(Some(w));
                            }
                        }
                    }
                }
            }
        }
        st.rows_matched = rows.len() as u64;
        Ok(QueryResult { rows, stats: st, wkb })
    }

    /// Layer 3: keep the rows of `runs` whose covering box meets `wbox`. `None` when the
    /// covering column cannot be used (not a column dataset with float box fields).
    fn covering_filter(
        &self,
        cov: &str,
        runs: &[Range<u64>],
        wbox: &BBox,
        st: &mut QueryStats,
    ) -> Result<Option<Vec<Range<u64>>>> {
        let t = self.table();
        if t.kind_of(cov)? != Some(ColumnKind::Dataset) {
            st.ignored_indexes.push(format!("{}: the covering column is not a column dataset", t.member_path(cov)));
            return Ok(None);
        }
        let c = t.column(cov)?;
        let dt = c.dtype().to_le();
        let ok = matches!(&dt, crate::h5::Dtype::Compound { fields, .. }
            if ["xmin", "ymin", "xmax", "ymax"].iter().all(|n| fields.iter().any(|f| f.name == *n && matches!(f.dtype, crate::h5::Dtype::Float { .. }))));
        if !ok {
            st.ignored_indexes.push(format!("{}: the covering column lacks the fields of HEP002 §10.5", c.path));
            return Ok(None);
        }
        let fill = c.fill().map(|f| f.to_vec());
        let es = dt.size();
        let mut kept = Vec::new();
        for piece in pieces(runs) {
            let a = c.read(piece.start, piece.end - piece.start)?;
            st.bytes_read += (piece.end - piece.start) * es as u64;
            for i in 0..a.len() {
                let e = a.element(i);
                let row = piece.start + i as u64;
                let is_fill = fill.as_deref().is_some_and(|f| f == e);
                let keep = !is_fill
                    && match crate::marquet::types::decode_box(&dt, e) {
                        Some((b, _, _)) => intersects(&b, wbox),
                        None => true,
                    };
                if keep {
                    push_run(&mut kept, row..row + 1);
                } else {
                    st.covering_rejected += 1;
                }
            }
        }
        Ok(Some(kept))
    }
}

/// The exact predicate, kept by box should `geo` panic.
fn exact(p: &Predicate, g: &geo::Geometry<f64>, w: &geo::Geometry<f64>, gbox: &BBox, wbox: &BBox, st: &mut QueryStats) -> bool {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| p.evaluate(g, w))) {
        Ok(b) => b,
        Err(_) => {
            st.predicate_fallbacks += 1;
            intersects(gbox, wbox)
        }
    }
}

/// The geometry column, opened once per query and read run by run.
enum GeomSource {
    Var { lc: ListColumn, mask: bool, path: String },
    Fixed { col: Column, size: usize },
    /// Byte offsets of the x and y fields, whether they are 32-bit, and the dimensions.
    Point { col: Column, x: usize, y: usize, f32: bool, dims: crate::spec::Dimensions },
}

impl GeomSource {
    fn open(t: &MarquetTable, info: &GeometryColumnInfo) -> Result<GeomSource> {
        Ok(match info.form {
            StorageForm::VarWkb => {
                let lc = t.table().list_column(&info.name)?;
                GeomSource::Var { mask: lc.has_mask(), lc, path: info.path.clone() }
            }
            StorageForm::FixedWkb { size } => GeomSource::Fixed { col: t.table().column(&info.name)?, size },
            StorageForm::Point { f32, dims } => {
                let col = t.table().column(&info.name)?;
                let field = |n: &str| match col.dtype() {
                    crate::h5::Dtype::Compound { fields, .. } => fields.iter().find(|f| f.name == n).map(|f| f.offset),
                    _ => None,
                };
                let (Some(x), Some(y)) = (field("x"), field("y")) else {
                    return Err(MarquetError::spec(&info.path, "HEP002 §7.4", "a point column without x and y fields"));
                };
                GeomSource::Point { col, x, y, f32, dims }
            }
        })
    }

    /// The WKB values of rows `[s, e)` (`None` = null) of a WKB column.
    fn read_wkb(&self, s: u64, e: u64, st: &mut QueryStats) -> Result<Vec<Option<Vec<u8>>>> {
        match self {
            GeomSource::Var { lc, mask, path } => {
                let l = lc.read(s, e)?;
                let ListValues::Leaf(a) = &l.values else {
                    return Err(MarquetError::spec(path, "HEP002 §7.2", "VALUES must be a uint8 dataset"));
                };
                st.bytes_read += (e - s + 1) * 8 + if *mask { e - s } else { 0 } + a.bytes.len() as u64;
                (0..l.len())
                    .map(|i| {
                        if l.is_null(i) {
                            return Ok(None);
                        }
                        match l.bytes_of(i) {
                            Some(b) if !b.is_empty() => Ok(Some(b.to_vec())),
                            _ => Err(MarquetError::InvalidWkb {
                                path: path.clone(),
                                row: Some(s + i as u64),
                                message: "empty slice for a non-null row (HEP002 §7.2)".into(),
                            }),
                        }
                    })
                    .collect()
            }
            GeomSource::Fixed { col, size } => {
                let a = col.read(s, e - s)?;
                st.bytes_read += a.bytes.len() as u64;
                let miss = a.missing(col.fill());
                Ok((0..a.len()).map(|i| (!miss[i]).then(|| a.bytes[i * size..(i + 1) * size].to_vec())).collect())
            }
            GeomSource::Point { .. } => Err(MarquetError::InvalidArgument("a point column holds no wkb".into())),
        }
    }
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
    pub attributes: Vec<crate::h5col::filter::FilterStats>,
}

impl MarquetTable {
    /// Rows of geometry column `col` that satisfy the spatial query `q` *and* every
    /// attribute filter. Attribute filters run first, each with its own best valid
    /// HEP001 index (`q.use_indexes` false: by scans); the spatial query runs with its
    /// own layers only when some row is left, and the two row sets are intersected.
    pub fn query_where(&self, col: &str, q: &Query, filters: &[(String, crate::h5col::filter::ColumnFilter)]) -> Result<CombinedResult> {
        if filters.is_empty() {
            // Nothing to intersect with: no list of every row to build.
            let r = self.query(col, q)?;
            return Ok(CombinedResult { rows: r.rows, spatial: Some(r.stats), attributes: Vec::new() });
        }
        let (attr_rows, attributes) = crate::h5col::filter::filter_all(self.table(), filters, q.use_indexes)?;
        if attr_rows.is_empty() {
            return Ok(CombinedResult { rows: attr_rows, spatial: None, attributes });
        }
        let r = self.query(col, q)?;
        let rows = crate::h5col::filter::intersect(&r.rows, &attr_rows);
        Ok(CombinedResult { rows, spatial: Some(r.stats), attributes })
    }
}
