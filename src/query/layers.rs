//! The pruning layers in order (see [`super`]): packed R-tree, block boxes, covering
//! column, then the exact predicate on the rows left, read in runs of adjacent rows.

use std::ops::Range;
use crate::error::{MarquetError, Result};
use crate::h5col::ColumnKind;
use crate::spatial::geom_box::intersects;
use crate::spatial::packed_rtree;
use crate::marquet::spatial_index::IndexState;
use crate::marquet::MarquetTable;
use crate::spec::BBox;

use super::*;
use super::exact::{point_coord, ExactTest, GeomSource};

/// Rows read from a column in one piece at most.
pub const READ_ROWS: u64 = 65_536;

/// Append row range `r` to `runs`, merging with the last run when adjacent.
pub(super) fn push_run(runs: &mut Vec<Range<u64>>, r: Range<u64>) {
    if r.is_empty() {
        return;
    }
    match runs.last_mut() {
        Some(last) if last.end == r.start => last.end = r.end,
        _ => runs.push(r),
    }
}

/// Split runs into pieces of at most [`READ_ROWS`] rows.
pub(super) fn pieces(runs: &[Range<u64>]) -> impl Iterator<Item = Range<u64>> + '_ {
    runs.iter().flat_map(|r| {
        let r = r.clone();
        (r.start..r.end).step_by(READ_ROWS as usize).map(move |s| s..(s + READ_ROWS).min(r.end))
    })
}

/// Group pieces whose gaps are at most [`crate::h5col::TAKE_GAP`] rows into one read of at
/// most [`READ_ROWS`] rows: each HDF5 read decompresses whole chunks, so a few unwanted
/// rows in between cost less than another read. Returns (rows to read, the pieces in it).
pub(super) fn read_groups(runs: &[Range<u64>]) -> Vec<(Range<u64>, Vec<Range<u64>>)> {
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

/// The body of [`MarquetTable::query`].
pub(crate) fn query(this: &MarquetTable, col: &str, q: &Query) -> Result<QueryResult> {
    q.window.check()?;
    let info = this.geometry_column(col)?;
    let n = this.nrows()?;
    // Every run, block list and candidate list below is sized by NROWS (issue #19).
    this.table().check_rows_held(col, n)?;
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
        this.spatial_indexes_unchecked(col).map_err(|e| e.to_string())
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
            Ok(all) => this.open_rtree_in(all).unwrap_or_else(|e| invalid(&info.path, e.to_string())),
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
                    Err(e) => st.ignored_indexes.push(format!("{}: {}", rt.path, crate::spatial::with_path(e, &rt.path))),
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
            Ok(all) => this.open_block_index_in(all).unwrap_or_else(|e| invalid(&info.path, e.to_string())),
            Err(e) => invalid(&info.path, e.clone()),
        };
        match state {
            IndexState::Usable(bi) => {
                st.used_block_index = true;
                st.bytes_read += bi.bytes_read;
                st.blocks_total = bi.entries.len() as u64;
                let kept = bi.entries.iter().filter(|e| intersects(&e.bbox, &wbox)).count() as u64;
                st.blocks_skipped = st.blocks_total - kept;
                runs = crate::spatial::blocks_to_read(&bi.entries, bi.block_length, n, &wbox);
            }
            IndexState::Invalid { path, reason } => st.ignored_indexes.push(format!("{path}: {reason}")),
            IndexState::Stale { path } => st.stale_indexes.push(path),
            IndexState::Absent => {}
        }
    }

    // Layer 3: the covering column.
    if q.use_indexes && q.use_covering && !st.used_rtree && !runs.is_empty() {
        if let Some(cov) = &info.covering {
            if let Some(kept) = covering_filter(this, cov, &runs, &wbox, &mut st)? {
                st.used_covering = true;
                runs = kept;
            }
        }
    }

    // Layer 4: the exact predicate.
    let test = ExactTest::new(q, predicate, &info);
    let mut rows = Vec::new();
    let src = GeomSource::open(this, &info)?;
    let mut wkb = q.with_wkb.then(crate::marquet::WkbBuffer::new);
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
                for i in wanted {
                    if miss[i] {
                        continue;
                    }
                    let el = a.element(i);
                    if test.point(point_coord(el, *x, *f32), point_coord(el, *y, *f32), &mut st) {
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
                    if test.wkb(w, s + i as u64, &mut st)? {
                        rows.push(s + i as u64);
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
pub(super) fn covering_filter(this: &MarquetTable, cov: &str, runs: &[Range<u64>], wbox: &BBox, st: &mut QueryStats) -> Result<Option<Vec<Range<u64>>>> {
    let t = this.table();
    if t.kind_of(cov)? != Some(ColumnKind::Dataset) {
        st.ignored_indexes.push(format!("{}: the covering column is not a column dataset", t.member_path(cov)));
        return Ok(None);
    }
    let c = t.column(cov)?;
    let dt = c.dtype().to_le();
    let ok = matches!(&dt, crate::h5col::Dtype::Compound { fields, .. }
        if ["xmin", "ymin", "xmax", "ymax"].iter().all(|n| fields.iter().any(|f| f.name == *n && matches!(f.dtype, crate::h5col::Dtype::Float { .. }))));
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
