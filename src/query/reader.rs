//! The warm spatial reader (issue #20): open a table's geometry column once, answer many
//! windows.
//!
//! [`SpatialReader`] holds what every query of [`TableQuery::query`](crate::query::TableQuery::query)
//! otherwise reads again: the column's attributes, NROWS, the index list and its validity
//! tokens, the block index's entries, the R-tree's attributes, the covering column's
//! datatype, and the open geometry, index and covering datasets with their decoded chunks
//! ([`crate::marquet::snapshot`]). After the first windows the R-tree's upper levels and
//! the block boxes are in memory and a query makes HDF5 calls only for chunks it has not
//! seen yet.
//!
//! The answers are the one-shot query's, row for row, layer for layer (the same
//! [`QueryStats`], the same WKB): the same four layers (R-tree first; block boxes and the
//! covering column when no R-tree answered; the exact predicate with `geo`), the same
//! checks of every index (HEP001 §12.2 tokens, HEP002 §17 structure) and of every range
//! read (HEP001 §9.2), the same semantics (module [`crate::query`]).
//!
//! The reader sees the table as it was when opened. When this process writes through the
//! library in the meantime (any write: an append, an index build, another file), the next
//! query reopens the reader first, so answers stay exact for changes made through this
//! process; [`SpatialReader::refresh`] does so on demand, e.g. after another process
//! changed the file.

use std::ops::Range;

use crate::error::{MarquetError, Result};
use crate::h5col::Array;
use crate::spatial::geom_box::intersects;
use crate::spatial::packed_rtree;
use crate::marquet::snapshot::{ColumnSnapshot, GeometryData};
use super::exact::{point_coord, ExactTest};
use crate::marquet::spatial_index::IndexState;
use crate::marquet::{MarquetTable, WkbBuffer};

use super::layers::{pieces, push_run, read_groups};
use super::{Predicate, Query, QueryResult, QueryStats, Window};

/// A geometry column opened once for many spatial queries (see the module documentation).
pub struct SpatialReader {
    table: MarquetTable,
    column: String,
    snap: ColumnSnapshot,
    /// Queries answered since the reader was opened or last refreshed.
    queries: u64,
}

impl std::fmt::Debug for SpatialReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpatialReader").field("column", &self.snap.info.path).field("queries", &self.queries).finish()
    }
}

impl SpatialReader {
    /// A reader of geometry column `column` of `table` (`None`: the primary geometry
    /// column). The reader keeps the table open.
    pub fn new(table: MarquetTable, column: Option<&str>) -> Result<SpatialReader> {
        let column = match column {
            Some(c) => c.to_string(),
            None => table.primary_geometry_column()?,
        };
        let snap = ColumnSnapshot::open(&table, &column)?;
        Ok(SpatialReader { table, column, snap, queries: 0 })
    }

    /// Open table `table` of `file` and a reader of its geometry column `column`
    /// (`None`: the primary one).
    pub fn open(file: &crate::marquet::File, table: &str, column: Option<&str>) -> Result<SpatialReader> {
        SpatialReader::new(MarquetTable::open(file, table)?, column)
    }

    /// The geometry column's name.
    pub fn column(&self) -> &str {
        &self.column
    }

    /// The table the reader queries.
    pub fn table(&self) -> &MarquetTable {
        &self.table
    }

    /// NROWS when the reader was opened (or last refreshed).
    pub fn nrows(&self) -> u64 {
        self.snap.nrows
    }

    /// Forget everything read and read the column's metadata again (after another process
    /// changed the file; changes through this process are seen without it).
    pub fn refresh(&mut self) -> Result<()> {
        self.snap = ColumnSnapshot::open(&self.table, &self.column)?;
        self.queries = 0;
        Ok(())
    }

    /// Answer one query (see [`crate::query`] for its semantics); rows ascending.
    pub fn query(&mut self, q: &Query) -> Result<QueryResult> {
        q.window.check()?;
        if !self.snap.is_current() {
            self.refresh()?;
        }
        self.queries += 1;
        let t = &self.table;
        let snap = &mut self.snap;
        let n = snap.nrows;
        let mut st = QueryStats { rows_total: n, ..Default::default() };
        let wbox = q.window.bbox();
        if let Window::BBox(b) = &q.window {
            if b.xmin > b.xmax && !snap.info.crs.is_geographic() {
                return Err(MarquetError::InvalidArgument(format!(
                    "a window with xmin > xmax wraps around the antimeridian, which needs a geographic crs ({})",
                    snap.info.path
                )));
            }
        }
        let planar = snap.info.edges.is_planar();
        let predicate = if planar { q.predicate } else { Predicate::BBoxOnly };
        st.approximate = !planar && q.predicate != Predicate::BBoxOnly;
        if n == 0 || wbox.is_empty() || [wbox.xmin, wbox.ymin, wbox.xmax, wbox.ymax].iter().any(|v| v.is_nan()) {
            return Ok(QueryResult { rows: Vec::new(), stats: st, wkb: q.with_wkb.then(WkbBuffer::new) });
        }

        // Layer 1: the R-tree (see MarquetTable::query: when it answers, block boxes and
        // the covering column are not consulted).
        let mut runs: Vec<Range<u64>> = std::iter::once(0..n).collect();
        if q.use_indexes && q.use_rtree {
            match snap.rtree(t) {
                IndexState::Usable(rt) => {
                    let (num_items, node_size) = (rt.num_items, rt.node_size);
                    rt.bytes_read = 0;
                    let found = packed_rtree::search(&mut *rt, num_items, node_size, n, &wbox);
                    st.bytes_read += rt.bytes_read;
                    match found {
                        Ok(rows) => {
                            st.used_rtree = true;
                            let mut kept = Vec::new();
                            for row in rows {
                                if row < n {
                                    push_run(&mut kept, row..row + 1);
                                    st.rtree_candidates += 1;
                                }
                            }
                            runs = kept;
                        }
                        Err(e) => st.ignored_indexes.push(format!("{}: {}", rt.path, crate::spatial::with_path(e, &rt.path))),
                    }
                }
                IndexState::Invalid { path, reason } => st.ignored_indexes.push(format!("{path}: {reason}")),
                IndexState::Stale { path } => st.stale_indexes.push(path.clone()),
                IndexState::Absent => {}
            }
        }

        // Layer 2: block boxes, when no R-tree answered.
        if q.use_indexes && q.use_block_index && !st.used_rtree {
            match snap.block_index(t) {
                IndexState::Usable(bi) => {
                    st.used_block_index = true;
                    st.bytes_read += bi.bytes_read;
                    st.blocks_total = bi.entries.len() as u64;
                    let kept = bi.entries.iter().filter(|e| intersects(&e.bbox, &wbox)).count() as u64;
                    st.blocks_skipped = st.blocks_total - kept;
                    runs = crate::spatial::blocks_to_read(&bi.entries, bi.block_length, n, &wbox);
                }
                IndexState::Invalid { path, reason } => st.ignored_indexes.push(format!("{path}: {reason}")),
                IndexState::Stale { path } => st.stale_indexes.push(path.clone()),
                IndexState::Absent => {}
            }
        }

        // Layer 3: the covering column.
        if q.use_indexes && q.use_covering && !st.used_rtree && !runs.is_empty() {
            match snap.covering(t)? {
                None => {}
                Some(Err(reason)) => st.ignored_indexes.push(reason),
                Some(Ok(cov)) => {
                    st.used_covering = true;
                    let es = cov.elem_size() as u64;
                    let mut kept = Vec::new();
                    let mut keep = Vec::new();
                    for piece in pieces(&runs) {
                        keep.clear();
                        cov.keep(piece.start, piece.end - piece.start, &wbox, &mut keep)?;
                        st.bytes_read += (piece.end - piece.start) * es;
                        for (row, &k) in piece.clone().zip(&keep) {
                            if k {
                                push_run(&mut kept, row..row + 1);
                            } else {
                                st.covering_rejected += 1;
                            }
                        }
                    }
                    runs = kept;
                }
            }
        }

        // Layer 4: the exact predicate.
        let info = &snap.info;
        let test = ExactTest::new(q, predicate, info);
        let mut rows = Vec::new();
        let mut out = q.with_wkb.then(WkbBuffer::new);
        for (group, members) in read_groups(&runs) {
            let (s, e) = (group.start, group.end);
            let wanted = members.iter().flat_map(|m| (m.start - s) as usize..(m.end - s) as usize);
            match &mut snap.data {
                GeometryData::Point { data, x, y, f32, dims, fill } => {
                    let (x, y, f32, dims) = (*x, *y, *f32, *dims);
                    let a = Array { dtype: data.dtype().clone(), bytes: data.read(s, e - s)? };
                    st.bytes_read += a.bytes.len() as u64;
                    let miss = a.missing(fill.as_deref());
                    let mut points = None;
                    let code = crate::spec::GeometryType::new(crate::spec::GeometryKind::Point, dims).iso_code().to_le_bytes();
                    for i in wanted {
                        if miss[i] {
                            continue;
                        }
                        let el = a.element(i);
                        if test.point(point_coord(el, x, f32), point_coord(el, y, f32), &mut st) {
                            rows.push(s + i as u64);
                            if let Some(o) = out.as_mut() {
                                let p = points.get_or_insert_with(|| crate::marquet::points_from(&a, &miss, dims));
                                crate::marquet::push_point_wkb(o, p, i, &code);
                            }
                        }
                    }
                }
                GeometryData::Fixed { data, size, fill } => {
                    let size = *size;
                    let a = Array { dtype: data.dtype().clone(), bytes: data.read(s, e - s)? };
                    st.bytes_read += a.bytes.len() as u64;
                    let miss = a.missing(fill.as_deref());
                    for i in wanted {
                        if miss[i] {
                            continue;
                        }
                        let w = &a.bytes[i * size..(i + 1) * size];
                        if test.wkb(w, s + i as u64, &mut st)? {
                            rows.push(s + i as u64);
                            if let Some(o) = out.as_mut() {
                                o.push(Some(w));
                            }
                        }
                    }
                }
                d @ GeometryData::Var { .. } => {
                    let mask = matches!(d, GeometryData::Var { mask: Some(_), .. });
                    let r = d.read_wkb_rows(s, e)?;
                    st.bytes_read += (e - s + 1) * 8 + if mask { e - s } else { 0 } + r.values.len() as u64;
                    for i in wanted {
                        if r.mask.as_ref().is_some_and(|m| !m[i]) {
                            continue;
                        }
                        let w = &r.values[r.offsets[i] as usize..r.offsets[i + 1] as usize];
                        if w.is_empty() {
                            return Err(MarquetError::InvalidWkb {
                                path: info.path.clone(),
                                row: Some(s + i as u64),
                                message: "empty slice for a non-null row (HEP002 §7.2)".into(),
                            });
                        }
                        if test.wkb(w, s + i as u64, &mut st)? {
                            rows.push(s + i as u64);
                            if let Some(o) = out.as_mut() {
                                o.push(Some(w));
                            }
                        }
                    }
                }
            }
        }
        st.rows_matched = rows.len() as u64;
        Ok(QueryResult { rows, stats: st, wkb: out })
    }
}

impl SpatialReader {
    /// [`TableQuery::query_where`](crate::query::TableQuery::query_where) through the reader: the attribute
    /// filters (AND) first, each with its best valid HEP001 index, then the spatial query
    /// when some row is left; the two row sets intersected.
    pub fn query_where(&mut self, q: &Query, filters: &[(String, crate::h5col::predicate::ColumnFilter)]) -> Result<super::CombinedResult> {
        if filters.is_empty() {
            let r = self.query(q)?;
            return Ok(super::CombinedResult { rows: r.rows, spatial: Some(r.stats), attributes: Vec::new() });
        }
        let (attr_rows, attributes) = crate::h5col::predicate::filter_all(self.table.table(), filters, q.use_indexes)?;
        if attr_rows.is_empty() {
            return Ok(super::CombinedResult { rows: attr_rows, spatial: None, attributes });
        }
        let r = self.query(q)?;
        let rows = crate::h5col::predicate::intersect(&r.rows, &attr_rows);
        Ok(super::CombinedResult { rows, spatial: Some(r.stats), attributes })
    }
}
