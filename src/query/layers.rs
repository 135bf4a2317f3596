//! The one query engine (issue #33): the pruning layers in order (see [`super`]) — packed
//! R-tree, block boxes, covering column, then the exact predicate on the rows left, read
//! in runs of adjacent rows — over a [`ColumnSnapshot`] of the geometry column. A one-shot
//! query ([`super::TableQuery::query`]) takes a snapshot for itself; the warm
//! [`super::SpatialReader`] holds one.

use std::ops::Range;

use crate::error::{MarquetError, Result};
use crate::h5::cached::CachedDataset;
use crate::h5col::Array;
use crate::marquet::snapshot::{ColumnSnapshot, GeometryData};
use crate::marquet::spatial_index::IndexState;
use crate::marquet::facts::TableView;
use crate::marquet::WkbBuffer;
use crate::spatial::packed_rtree;
use crate::marquet::point_groups::{GroupBox, GroupTest, PointGroups, GROUP_ROWS};
use crate::spec::BBox;

use super::exact::{point_coord, ExactTest};
use super::{Predicate, Query, QueryResult, QueryStats, Window};

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


/// Layer 4 of a point column whose test is a box ([`ExactTest::point_box`]): the points of
/// `members` (rows within `group`) are tested on the cached
/// chunks' bytes in place — without the copy, the null mask and the call per point of the
/// general loop in [`run`], which were half of a warm point window (issue #33). Answers and
/// statistics are the general loop's: a null row (equal to the fill value) is neither
/// tested nor matched, a NaN coordinate never matches. The matches go to `rows` and, when
/// given, their WKB to `wkb`: only for `{x: f64, y: f64}` elements, which are the body of a
/// 2-D point's WKB.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn points_in_box(
    data: &mut CachedDataset,
    groups: &mut PointGroups,
    (x, y, f32): (usize, usize, bool),
    fill: Option<&[u8]>,
    group: Range<u64>,
    members: &[Range<u64>],
    (w, strict): (BBox, bool),
    (rows, mut wkb): (&mut Vec<u64>, Option<&mut WkbBuffer>),
    st: &mut QueryStats,
) -> Result<()> {
    let mut hit = |row: u64, el: &[u8]| {
        rows.push(row);
        if let Some(o) = wkb.as_deref_mut() {
            // Little-endian, type 1 (Point), the element's x and y. Written out: building
            // the 21 bytes for `WkbBuffer::push` made the loop 25 % dearer (callgrind).
            o.bytes.push(1);
            o.bytes.extend_from_slice(&1u32.to_le_bytes());
            o.bytes.extend_from_slice(el);
            o.valid.push(true);
            o.offsets.push(o.bytes.len() as u64);
        }
    };
    let es = data.elem_size();
    // The usual element, compared with the fill value as one integer.
    let xy = plain_xy(es, x, y, f32);
    let fill16 = fill.and_then(|f| <[u8; 16]>::try_from(f).ok()).map(u128::from_ne_bytes);
    let mut tested = 0u64;
    if xy && !fill16.is_some_and(|f| in_window::<false>(&w, xy_of(&f.to_ne_bytes()))) {
        // The usual case: tested by the groups of each chunk, whole chunks at a time.
        data.visit_pieces(group.start, group.end - group.start, |first, piece, rows| {
            let boxes = groups.of_piece(first, piece, fill16);
            for m in members {
                let (lo, hi) = (m.start.max(rows.start), m.end.min(rows.end));
                if lo < hi {
                    tested += if strict {
                        grouped_run::<true>(first, piece, &boxes, lo..hi, &w, fill16, &mut hit)
                    } else {
                        grouped_run::<false>(first, piece, &boxes, lo..hi, &w, fill16, &mut hit)
                    };
                }
            }
            Ok(())
        })?;
        st.exact_tested += tested;
        return Ok(());
    }
    data.visit(group.start, group.end - group.start, |first, bytes| {
        let last = first + (bytes.len() / es) as u64;
        for m in members {
            let (lo, hi) = (m.start.max(first), m.end.min(last));
            if lo >= hi {
                continue;
            }
            let run = &bytes[(lo - first) as usize * es..(hi - first) as usize * es];
            let els = run.chunks_exact(es);
            let null = |el: &[u8]| fill.is_some_and(|f| f == el);
            let coords = |el: &[u8]| (point_coord(el, x, f32), point_coord(el, y, f32));
            tested += match (xy, strict) {
                (true, false) => xy_run::<false>(lo, run, &w, fill16, &mut hit),
                (true, true) => xy_run::<true>(lo, run, &w, fill16, &mut hit),
                (false, false) => box_run::<false>(lo, els, &w, null, coords, &mut hit),
                (false, true) => box_run::<true>(lo, els, &w, null, coords, &mut hit),
            };
        }
        Ok(())
    })?;
    st.exact_tested += tested;
    Ok(())
}

/// Rows `rows` of the chunk of `{x: f64, y: f64}` elements `piece` (its first row
/// `first`, its groups' boxes `boxes`) against window `w`, whose interior (`STRICT`) or
/// closed box a null cannot meet: a group the window misses is passed over, a group inside
/// it is matched whole, and the points of the others are tested by [`xy_run`]. Returns the
/// non-null rows, as [`xy_run`] does: the answers and statistics are its own.
fn grouped_run<const STRICT: bool>(
    first: u64,
    piece: &[u8],
    boxes: &[GroupBox],
    rows: Range<u64>,
    w: &BBox,
    fill16: Option<u128>,
    hit: &mut dyn FnMut(u64, &[u8]),
) -> u64 {
    const G: u64 = GROUP_ROWS as u64;
    let mut tested = 0;
    let mut r = rows.start;
    while r < rows.end {
        let g = (r - first) / G;
        let (g_lo, g_hi) = (first + g * G, (first + (g + 1) * G).min(first + (piece.len() / 16) as u64));
        let hi = g_hi.min(rows.end);
        let bytes = &piece[(r - first) as usize * 16..(hi - first) as usize * 16];
        let whole = r == g_lo && hi == g_hi;
        match boxes.get(g as usize).map(|b| (b, b.test(w, STRICT))) {
            Some((b, GroupTest::Outside)) if whole => tested += u64::from(b.nonnull),
            Some((_, GroupTest::Outside)) => tested += bytes.chunks_exact(16).filter(|e| !is_fill(e, fill16)).count() as u64,
            Some((b, GroupTest::Inside)) => {
                for (row, el) in (r..).zip(bytes.chunks_exact(16)) {
                    hit(row, el);
                }
                tested += if whole { u64::from(b.nonnull) } else { hi - r };
            }
            _ => tested += xy_run::<STRICT>(r, bytes, w, fill16, hit),
        }
        r = hi;
    }
    tested
}

/// Whether a 16-byte element equals the fill value.
#[inline(always)]
fn is_fill(el: &[u8], fill16: Option<u128>) -> bool {
    fill16.is_some_and(|f| <[u8; 16]>::try_from(el).is_ok_and(|e| u128::from_ne_bytes(e) == f))
}

/// Whether a point element is `{x: f64, y: f64}` (16 bytes, x first): a 2-D point whose
/// element is the body of its WKB.
fn plain_xy(es: usize, x: usize, y: usize, f32: bool) -> bool {
    (es, x, y, f32) == (16, 0, 8, false)
}

/// One run of [`points_in_box`]: the elements `els` of rows `lo…`, each match given to
/// `hit` (row, element); returns the rows tested (not null). The strictness is a constant
/// and the tests are inlined, so each caller gets its own tight loop.
#[inline(always)]
fn box_run<'a, const STRICT: bool>(
    lo: u64,
    els: impl Iterator<Item = &'a [u8]>,
    w: &BBox,
    null: impl Fn(&[u8]) -> bool,
    coords: impl Fn(&[u8]) -> (f64, f64),
    hit: &mut impl FnMut(u64, &[u8]),
) -> u64 {
    let mut tested = 0;
    for (row, el) in (lo..).zip(els) {
        if null(el) {
            continue;
        }
        if in_window::<STRICT>(w, coords(el)) {
            hit(row, el);
        }
        tested += 1;
    }
    tested
}

/// Whether point `(px, py)` lies in window `w`: its interior when `STRICT`, else the closed
/// box (a NaN coordinate never does).
#[inline(always)]
fn in_window<const STRICT: bool>(w: &BBox, (px, py): (f64, f64)) -> bool {
    if STRICT {
        px > w.xmin && px < w.xmax && py > w.ymin && py < w.ymax
    } else {
        px >= w.xmin && px <= w.xmax && py >= w.ymin && py <= w.ymax
    }
}

/// The `(x, y)` of a plain `{x: f64, y: f64}` element.
#[inline(always)]
fn xy_of(el: &[u8]) -> (f64, f64) {
    (point_coord(el, 0, false), point_coord(el, 8, false))
}

/// [`box_run`] for plain `{x: f64, y: f64}` elements (16 bytes each, `run` holds whole
/// elements), the usual point column: a function of its own, so that the hot loop of a
/// point window is compiled the same wherever its caller is inlined (when
/// `points_in_box`'s closure was inlined into `CachedDataset::visit`, the loop inlined
/// there cost 45 % more instructions).
///
/// When the fill value's coordinates are outside the window, a null element (equal to the
/// fill value) cannot match, so the window test needs no null test in front of it: four
/// elements are tested at a time without a branch, and the nulls are only counted (for the
/// rows tested). Otherwise, each element is tested as [`box_run`] does.
#[inline(never)]
fn xy_run<const STRICT: bool>(lo: u64, run: &[u8], w: &BBox, fill16: Option<u128>, hit: &mut dyn FnMut(u64, &[u8])) -> u64 {
    if fill16.is_some_and(|f| in_window::<STRICT>(w, xy_of(&f.to_ne_bytes()))) {
        return box_run::<STRICT>(lo, run.chunks_exact(16), w, |el| is_fill(el, fill16), xy_of, &mut |row, el| hit(row, el));
    }
    let mut nulls = 0u64;
    let mut row = lo;
    let quads = run.chunks_exact(64);
    let rest = quads.remainder();
    for quad in quads {
        let (mut m, n) = xy_quad::<STRICT>(quad, w, fill16);
        nulls += u64::from(n);
        while m != 0 {
            let i = m.trailing_zeros() as usize;
            hit(row + i as u64, &quad[i * 16..i * 16 + 16]);
            m &= m - 1;
        }
        row += 4;
    }
    for el in rest.chunks_exact(16) {
        if in_window::<STRICT>(w, xy_of(el)) {
            hit(row, el);
        }
        nulls += u64::from(is_fill(el, fill16));
        row += 1;
    }
    (run.len() / 16) as u64 - nulls
}

/// Four `{x: f64, y: f64}` elements (64 bytes) against window `w` (closed, or open when
/// `STRICT`): a bit per element inside (bit i for element i; a NaN coordinate is never
/// inside), and how many equal `fill16`.
#[inline(always)]
fn xy_quad<const STRICT: bool>(quad: &[u8], w: &BBox, fill16: Option<u128>) -> (u32, u32) {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: SSE2 is part of every x86-64 processor (the target's baseline), so the
        // feature `xy_quad_sse2` enables is always present; its body is safe code.
        #[allow(unsafe_code)]
        unsafe {
            xy_quad_sse2::<STRICT>(quad, w, fill16)
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let mut m = 0u32;
        let mut n = 0u32;
        for (i, el) in quad.chunks_exact(16).enumerate() {
            m |= u32::from(in_window::<STRICT>(w, xy_of(el))) << i;
            n += u32::from(fill16.is_some_and(|f| <[u8; 16]>::try_from(el).is_ok_and(|e| u128::from_ne_bytes(e) == f)));
        }
        (m, n)
    }
}

/// [`xy_quad`] with SSE2: the x of two elements compared as one pair with the window's
/// x range, their y with its y range, and their bytes with the fill value's as four 32-bit
/// lanes (the loop the compiler made of the scalar tests branched on every coordinate,
/// issue #33).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn xy_quad_sse2<const STRICT: bool>(quad: &[u8], w: &BBox, fill16: Option<u128>) -> (u32, u32) {
    use std::arch::x86_64::{
        __m128i, _mm_and_pd, _mm_and_si128, _mm_castsi128_pd, _mm_cmpeq_epi32, _mm_cmple_pd, _mm_cmplt_pd, _mm_movemask_pd, _mm_set1_epi64x,
        _mm_set1_pd, _mm_set_epi64x, _mm_shuffle_epi32, _mm_unpackhi_epi64, _mm_unpacklo_epi64,
    };
    let word = |b: &[u8]| i64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
    let load = |b: &[u8]| -> __m128i { _mm_set_epi64x(word(&b[8..16]), word(&b[..8])) };
    let (x0, x1, y0, y1) = (_mm_set1_pd(w.xmin), _mm_set1_pd(w.xmax), _mm_set1_pd(w.ymin), _mm_set1_pd(w.ymax));
    let f = fill16.unwrap_or(0).to_le_bytes();
    let (fx, fy) = (_mm_set1_epi64x(word(&f[..8])), _mm_set1_epi64x(word(&f[8..])));
    let mut m = 0u32;
    let mut n = 0u32;
    for (k, pair) in quad.chunks_exact(32).enumerate() {
        let (a, b) = (load(&pair[..16]), load(&pair[16..]));
        // The two elements' x, and their y.
        let (xs, ys) = (_mm_unpacklo_epi64(a, b), _mm_unpackhi_epi64(a, b));
        let (px, py) = (_mm_castsi128_pd(xs), _mm_castsi128_pd(ys));
        let ok = if STRICT {
            _mm_and_pd(_mm_and_pd(_mm_cmplt_pd(x0, px), _mm_cmplt_pd(px, x1)), _mm_and_pd(_mm_cmplt_pd(y0, py), _mm_cmplt_pd(py, y1)))
        } else {
            _mm_and_pd(_mm_and_pd(_mm_cmple_pd(x0, px), _mm_cmple_pd(px, x1)), _mm_and_pd(_mm_cmple_pd(y0, py), _mm_cmple_pd(py, y1)))
        };
        m |= (_mm_movemask_pd(ok) as u32) << (2 * k);
        // 32-bit lanes equal to the fill value's; a 64-bit lane all equal when it and its
        // neighbour lane are.
        let eq = _mm_and_si128(_mm_cmpeq_epi32(xs, fx), _mm_cmpeq_epi32(ys, fy));
        let eq = _mm_and_si128(eq, _mm_shuffle_epi32::<0b10_11_00_01>(eq));
        let e = _mm_movemask_pd(_mm_castsi128_pd(eq)) as u32;
        n += (e & 1) + (e >> 1);
    }
    (m, if fill16.is_some() { n } else { 0 })
}

/// The union of two ascending, disjoint row lists, ascending.
fn merge_sorted(a: &[u64], b: &[u64]) -> Vec<u64> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i] <= b[j] {
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[j]);
            j += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// The one query engine: query `q` on the geometry column `snap` holds, the
/// four layers in order. A one-shot query ([`crate::query::TableQuery::query`]) runs it on
/// a snapshot taken for that query; the warm [`SpatialReader`] on the snapshot it holds.
pub(crate) fn run(t: &TableView<'_>, snap: &mut ColumnSnapshot, q: &Query) -> Result<QueryResult> {
    q.window.check()?;
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
    // the covering column are not consulted). A candidate whose leaf box lies inside a box
    // window intersects it — the box contains the geometry (HEP002 §10.4), and the exact
    // test would find the geometry's box inside the window and say yes — so it is answered
    // without its geometry being tested, or read at all when no WKB is wanted (issue #33).
    let by_box = matches!(predicate, Predicate::Intersects | Predicate::BBoxOnly) && matches!(&q.window, Window::BBox(b) if b.xmin <= b.xmax);
    let mut inside: Vec<u64> = Vec::new();
    let mut runs: Vec<Range<u64>> = std::iter::once(0..n).collect();
    if q.use_indexes && q.use_rtree {
        match snap.rtree(t)? {
            IndexState::Usable(_) => {}
            IndexState::Invalid { path, reason } => st.ignored_indexes.push(format!("{path}: {reason}")),
            IndexState::Stale { path } => st.stale_indexes.push(path.clone()),
            IndexState::Absent => {}
        }
        // Searched with the column's data at hand: over a network the leaves come with the
        // offsets of the rows they name (`RTreeWithData`, issue #34).
        if let Some(mut src) = snap.rtree_with_data() {
            let rt = src.rtree();
            let (num_items, node_size) = (rt.num_items, rt.node_size);
            rt.bytes_read = 0;
            let found = packed_rtree::search_classified(&mut src, num_items, node_size, n, &wbox);
            let rt = src.rtree();
            st.bytes_read += rt.bytes_read;
            match found {
                Ok(rows) => {
                    st.used_rtree = true;
                    let mut kept = Vec::new();
                    for (row, box_inside) in rows {
                        if row >= n {
                            continue;
                        }
                        st.rtree_candidates += 1;
                        if by_box && box_inside {
                            inside.push(row);
                            st.rows_by_box += 1;
                            if !q.with_wkb {
                                continue;
                            }
                        }
                        push_run(&mut kept, row..row + 1);
                    }
                    runs = kept;
                }
                Err(e) => st.ignored_indexes.push(format!("{}: {}", rt.path, crate::spatial::with_path(e, &rt.path))),
            }
        }
    }

    // Layer 2: block boxes, when no R-tree answered.
    if q.use_indexes && q.use_block_index && !st.used_rtree {
        match snap.block_index(t)? {
            IndexState::Usable(bi) => {
                st.used_block_index = true;
                st.bytes_read += bi.bytes_read;
                st.blocks_total = bi.entries.len() as u64;
                // A block whose rows all intersect the window by its entry is answered like
                // the R-tree's inside leaves: without its geometry being tested, or read at
                // all when no WKB is wanted (issue #33: a wide window over dense points spent
                // most of its time inflating the chunks of such blocks).
                let c = crate::spatial::blocks_classified(&bi.entries, &bi.groups, bi.block_length, n, &wbox, by_box);
                st.blocks_skipped = st.blocks_total - c.met;
                runs = c.read;
                for r in c.whole {
                    st.rows_by_box += r.end - r.start;
                    inside.extend(r.clone());
                    if q.with_wkb {
                        push_run(&mut runs, r);
                    }
                }
                if q.with_wkb {
                    // The inside blocks' rows are read for their WKB, in row order.
                    runs.sort_by_key(|r| r.start);
                    runs = std::mem::take(&mut runs).into_iter().fold(Vec::new(), |mut v, r| {
                        push_run(&mut v, r);
                        v
                    });
                }
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
    // Rows read only for their WKB: matched without the test.
    let known = |row: u64| q.with_wkb && inside.binary_search(&row).is_ok();
    let groups = read_groups(&runs);
    snap.data.prefetch(&groups.iter().map(|(g, _)| (g.start, g.end)).collect::<Vec<_>>())?;
    for (group, members) in groups {
        let (s, e) = (group.start, group.end);
        let wanted = members.iter().flat_map(|m| (m.start - s) as usize..(m.end - s) as usize);
        match &mut snap.data {
            GeometryData::Point { data, x, y, f32, dims, fill, groups } => {
                let (x, y, f32, dims) = (*x, *y, *f32, *dims);
                // With WKB only for plain 2-D points, whose element is the WKB's body, and
                // when no row is answered by its block's box (those are not tested).
                let xy = plain_xy(data.elem_size(), x, y, f32);
                if let (true, Some(test_box)) = (!q.with_wkb || (xy && inside.is_empty()), test.point_box()) {
                    st.bytes_read += (e - s) * data.elem_size() as u64;
                    points_in_box(data, groups, (x, y, f32), fill.as_deref(), s..e, &members, test_box, (&mut rows, out.as_mut()), &mut st)?;
                    continue;
                }
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
                    if known(s + i as u64) || test.point(point_coord(el, x, f32), point_coord(el, y, f32), &mut st) {
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
                    if known(s + i as u64) || test.wkb(w, s + i as u64, &mut st)? {
                        rows.push(s + i as u64);
                        if let Some(o) = out.as_mut() {
                            o.push(Some(w));
                        }
                    }
                }
            }
            d @ GeometryData::Var { .. } => {
                let mask = matches!(d, GeometryData::Var { mask: Some(_), .. });
                let r = d.wkb_spans(s, e)?;
                st.bytes_read += (e - s + 1) * 8 + if mask { e - s } else { 0 };
                for i in wanted {
                    if r.mask.as_ref().is_some_and(|m| !m[i]) {
                        continue;
                    }
                    // Only the rows tested are read: the chunks between candidates are
                    // neither copied nor decoded.
                    let (lo, hi) = (r.offsets[i], r.offsets[i + 1]);
                    let (piece, at) = d.wkb_value(lo, hi)?;
                    let w = &piece[at];
                    st.bytes_read += w.len() as u64;
                    if w.is_empty() {
                        return Err(MarquetError::InvalidWkb {
                            path: info.path.clone(),
                            row: Some(s + i as u64),
                            message: "empty slice for a non-null row (HEP002 §7.2)".into(),
                        });
                    }
                    if known(s + i as u64) || test.wkb(w, s + i as u64, &mut st)? {
                        rows.push(s + i as u64);
                        if let Some(o) = out.as_mut() {
                            o.push(Some(w));
                        }
                    }
                }
            }
        }
    }
    if !q.with_wkb && !inside.is_empty() {
        // The rows answered by their box were not read: merged in, ascending.
        rows = merge_sorted(&rows, &inside);
    }
    st.rows_matched = rows.len() as u64;
    Ok(QueryResult { rows, stats: st, wkb: out })
}


#[cfg(test)]
mod tests {
    use super::*;

    /// The four-at-a-time point loop against the element-at-a-time one: the same rows hit,
    /// with the same bytes, and the same rows tested, for closed and open windows, points
    /// on every edge, NaN coordinates, and fill values inside and outside the window.
    #[test]
    fn xy_run_equals_box_run() {
        let w = BBox::xy(-1.0, 2.0, 3.0, 5.0);
        let vals = [-1.0, 3.0, 2.0, 5.0, 0.5, 4.0, -2.0, 6.0, f64::NAN, -0.0, f64::INFINITY, 9.96921e36];
        let mut state = 0x1234_5678_9abc_def0u64;
        let mut pick = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let fills: [Option<(f64, f64)>; 4] = [None, Some((9.96921e36, 9.96921e36)), Some((0.5, 4.0)), Some((f64::NAN, f64::NAN))];
        for round in 0..400 {
            let n = pick(23);
            let fill = fills[round % 4];
            let fill_el = fill.map(|(x, y)| [x.to_le_bytes(), y.to_le_bytes()].concat());
            let mut run = Vec::new();
            for _ in 0..n {
                match &fill_el {
                    Some(f) if pick(4) == 0 => run.extend_from_slice(f),
                    _ => {
                        run.extend_from_slice(&vals[pick(vals.len())].to_le_bytes());
                        run.extend_from_slice(&vals[pick(vals.len())].to_le_bytes());
                    }
                }
            }
            let fill16 = fill_el.as_deref().map(|f| u128::from_ne_bytes(f.try_into().unwrap()));
            let lo = pick(1000) as u64;
            for strict in [false, true] {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                let ta = if strict {
                    xy_run::<true>(lo, &run, &w, fill16, &mut |r, el| a.push((r, el.to_vec())))
                } else {
                    xy_run::<false>(lo, &run, &w, fill16, &mut |r, el| a.push((r, el.to_vec())))
                };
                let null = |el: &[u8]| fill_el.as_deref() == Some(el);
                let coords = |el: &[u8]| (point_coord(el, 0, false), point_coord(el, 8, false));
                let mut hit = |r: u64, el: &[u8]| b.push((r, el.to_vec()));
                let tb = if strict {
                    box_run::<true>(lo, run.chunks_exact(16), &w, null, coords, &mut hit)
                } else {
                    box_run::<false>(lo, run.chunks_exact(16), &w, null, coords, &mut hit)
                };
                assert_eq!((ta, &a), (tb, &b), "round {round} strict {strict} fill {fill:?}");
            }
        }
    }

    /// The grouped loop against the element-at-a-time one on whole chunks: the same rows
    /// hit, with the same bytes, and the same rows tested, for runs that start and end
    /// inside groups or on their bounds, groups all inside, all outside or across the window,
    /// with nulls, NaN and points on every edge, closed and open. It fails when a group
    /// with a null or a NaN is taken whole, or when an outside group's nulls are counted.
    #[test]
    fn grouped_run_equals_box_run() {
        let w = BBox::xy(-1.0, 2.0, 3.0, 5.0);
        let vals = [-1.0, 3.0, 2.0, 5.0, 0.5, 4.0, -2.0, 6.0, f64::NAN, -0.0];
        let mut rng = crate::test_rng::SplitMix64::new(11);
        let mut pick = |n: usize| (rng.next_u64() % n as u64) as usize;
        let fills: [Option<(f64, f64)>; 3] = [None, Some((9.96921e36, 9.96921e36)), Some((f64::NAN, f64::NAN))];
        let mut kinds = [0usize; 3];
        for round in 0..300 {
            let n = 1 + pick(5 * GROUP_ROWS);
            let fill = fills[round % 3];
            let fill_el = fill.map(|(x, y)| [x.to_le_bytes(), y.to_le_bytes()].concat());
            // Runs of points all inside, all outside, or of any value, so that groups of
            // every kind occur.
            let mut piece = Vec::new();
            let (mut mode, mut odd) = (0, false);
            for i in 0..n {
                if i % GROUP_ROWS == 0 {
                    (mode, odd) = (pick(3), pick(3) == 0);
                }
                let (x, y) = match mode {
                    0 => (vals[4], vals[5]),
                    1 => (vals[6], vals[7]),
                    _ => (vals[pick(vals.len())], vals[pick(vals.len())]),
                };
                // Some groups of each kind get a few nulls or NaN.
                let (x, y) = if odd && pick(16) == 0 {
                    match &fill_el {
                        Some(f) if pick(2) == 0 => {
                            piece.extend_from_slice(f);
                            continue;
                        }
                        _ => (f64::NAN, y),
                    }
                } else {
                    (x, y)
                };
                piece.extend_from_slice(&x.to_le_bytes());
                piece.extend_from_slice(&y.to_le_bytes());
            }
            let fill16 = fill_el.as_deref().map(|f| u128::from_ne_bytes(f.try_into().unwrap()));
            let boxes = crate::marquet::point_groups::group_boxes(&piece, fill16);
            let first = 4096 * pick(3) as u64;
            let a = pick(n);
            let b = a + 1 + pick(n - a);
            let rows = first + a as u64..first + b as u64;
            for strict in [false, true] {
                for g in &boxes {
                    kinds[g.test(&w, strict) as usize] += 1;
                }
                let (mut got, mut want) = (Vec::new(), Vec::new());
                let tg = if strict {
                    grouped_run::<true>(first, &piece, &boxes, rows.clone(), &w, fill16, &mut |r, el| got.push((r, el.to_vec())))
                } else {
                    grouped_run::<false>(first, &piece, &boxes, rows.clone(), &w, fill16, &mut |r, el| got.push((r, el.to_vec())))
                };
                let null = |el: &[u8]| fill_el.as_deref() == Some(el);
                let coords = |el: &[u8]| (point_coord(el, 0, false), point_coord(el, 8, false));
                let mut hit = |r: u64, el: &[u8]| want.push((r, el.to_vec()));
                let run = piece[a * 16..b * 16].chunks_exact(16);
                let tw = if strict {
                    box_run::<true>(rows.start, run, &w, null, coords, &mut hit)
                } else {
                    box_run::<false>(rows.start, run, &w, null, coords, &mut hit)
                };
                assert_eq!((tg, &got), (tw, &want), "round {round} strict {strict} fill {fill:?} rows {rows:?}");
            }
        }
        assert!(kinds.iter().all(|&k| k > 100), "group kinds met: {kinds:?}");
    }
}
