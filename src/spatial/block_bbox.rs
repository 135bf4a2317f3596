//! Row blocks and the block bounding-box index (HEP002 §10.2–10.3).
//!
//! Row block j holds rows `[j·B, min((j+1)·B, NROWS))`; the index has one [`BlockEntry`] per
//! block: a box containing every non-null, non-empty geometry of the block and the counts of
//! rows, nulls and empties. A block without geometries keeps [`BBox::EMPTY`] (+∞ minima, −∞
//! maxima), which intersects nothing.

use std::ops::Range;

use crate::error::{MarquetError, Result};
use crate::spatial::geom_box::{intersects, unwrap_box};
use crate::spec::BBox;

/// The block length used when the table has no chunked dataset to align with (HEP002 §10.2).
pub const DEFAULT_BLOCK_LENGTH: u64 = 4096;

/// One entry of a block bounding-box index (HEP002 §10.3).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlockEntry {
    /// Box of the block's non-null, non-empty geometries; Z/M bounds stay +∞/−∞ when no
    /// geometry has a non-NaN Z/M value; [`BBox::EMPTY`] when the block has no geometry.
    pub bbox: BBox,
    /// Rows in the block.
    pub n: u64,
    /// Rows whose geometry is null.
    pub null_count: u64,
    /// Rows whose geometry is empty (ruling R6).
    pub empty_count: u64,
}

impl BlockEntry {
    /// The entry of a block with no rows yet.
    pub const EMPTY: BlockEntry = BlockEntry {
        bbox: BBox::EMPTY,
        n: 0,
        null_count: 0,
        empty_count: 0,
    };

    /// Add one row to the block.
    pub fn add(&mut self, row: &RowSummary) {
        self.n += 1;
        match row {
            RowSummary::Null => self.null_count += 1,
            RowSummary::Geometry(b) if !b.is_empty() => self.bbox = self.bbox.union(&unwrap_box(b)),
            RowSummary::Empty | RowSummary::Geometry(_) => self.empty_count += 1,
        }
    }
}

/// The entries of block length `factor · B` from those of block length `B` (consecutive
/// runs of `factor` entries joined: boxes united, counts summed).
pub fn coarsen(entries: &[BlockEntry], factor: usize) -> Vec<BlockEntry> {
    entries
        .chunks(factor.max(1))
        .map(|run| {
            run.iter().fold(BlockEntry::EMPTY, |mut a, e| {
                a.bbox = a.bbox.union(&e.bbox);
                a.n += e.n;
                a.null_count += e.null_count;
                a.empty_count += e.empty_count;
                a
            })
        })
        .collect()
}

/// What the block index needs to know about one row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RowSummary {
    /// A null geometry.
    Null,
    /// An empty geometry (ruling R6).
    Empty,
    /// A geometry with this box (§6.4). An empty box counts as [`RowSummary::Empty`]. A
    /// wrapping box (`xmin > xmax`) is widened to the full longitude range, so block boxes
    /// built here never wrap.
    Geometry(BBox),
}

fn check_block_length(block_length: u64) -> Result<()> {
    if block_length == 0 {
        return Err(MarquetError::InvalidArgument(
            "block_length must be at least 1".to_string(),
        ));
    }
    Ok(())
}

/// Build the index entries for `rows` (rows 0, 1, … in order) with block length
/// `block_length` ≥ 1: `ceil(rows / B)` entries, the last possibly shorter.
pub fn build_blocks(
    rows: impl IntoIterator<Item = RowSummary>,
    block_length: u64,
) -> Result<Vec<BlockEntry>> {
    check_block_length(block_length)?;
    let mut out = Vec::new();
    let mut cur = BlockEntry::EMPTY;
    for row in rows {
        cur.add(&row);
        if cur.n == block_length {
            out.push(cur);
            cur = BlockEntry::EMPTY;
        }
    }
    if cur.n > 0 {
        out.push(cur);
    }
    Ok(out)
}

/// The first row of the block that was last (and possibly partial) before an append to a
/// table of `old_nrows` rows: `floor(old_nrows / B) · B`. [`extend_blocks`] wants the rows
/// from here on.
pub fn partial_block_start(old_nrows: u64, block_length: u64) -> Result<u64> {
    check_block_length(block_length)?;
    Ok(old_nrows / block_length * block_length)
}

/// Update an index incrementally after an append (HEP002 §10.3): recompute the entry of the
/// last, partial block and append entries for the new blocks.
///
/// `existing` holds the index of the first `old_nrows` rows (extra entries, e.g. left over
/// from preallocation, are dropped). `rows` yields the rows from
/// [`partial_block_start`]`(old_nrows, B)` up to the new `NROWS`: the existing rows of the
/// partial block again, then the new rows. The result equals [`build_blocks`] over all rows.
/// On error, `existing` is unchanged.
pub fn extend_blocks(
    existing: &mut Vec<BlockEntry>,
    old_nrows: u64,
    rows: impl IntoIterator<Item = RowSummary>,
    block_length: u64,
) -> Result<()> {
    let start = partial_block_start(old_nrows, block_length)?;
    let full = start / block_length;
    if (existing.len() as u64) < full {
        return Err(MarquetError::InvalidArgument(format!(
            "block index has {} entries but {old_nrows} rows need at least {full} full blocks",
            existing.len()
        )));
    }
    let tail = build_blocks(rows, block_length)?;
    let supplied: u64 = tail.iter().map(|b| b.n).sum();
    if supplied < old_nrows - start {
        return Err(MarquetError::InvalidArgument(format!(
            "extend_blocks needs the {} existing rows from row {start} again, got {supplied} rows",
            old_nrows - start
        )));
    }
    existing.truncate(full as usize);
    existing.extend(tail);
    Ok(())
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Choose the block length B (HEP002 §10.2) from the rows per chunk of every column dataset
/// and OFFSETS dataset of the table: when all are powers of two, the smallest; otherwise their
/// greatest common divisor (for powers of two the two agree). Zero counts (unchunked
/// datasets) are ignored; with none left, [`DEFAULT_BLOCK_LENGTH`]. Never 0.
pub fn choose_block_length(chunk_row_counts: &[u64]) -> u64 {
    let g = chunk_row_counts
        .iter()
        .filter(|&&c| c > 0)
        .fold(0, |g, &c| gcd(g, c));
    if g == 0 {
        DEFAULT_BLOCK_LENGTH
    } else {
        g
    }
}

/// Row ranges to read for a spatial filter (HEP002 §10.3): the rows of every block whose box
/// intersects `query`, adjacent blocks merged, ascending. Block boxes may wrap around the
/// antimeridian (`xmin > xmax`: x ≥ xmin or x ≤ xmax), and so may the query; empty boxes are
/// skipped. Entries beyond `ceil(nrows / B)` are ignored.
///
/// Conservative on malformed input: blocks without an entry are read, and a `block_length` of
/// 0 reads every row.
pub fn blocks_to_read(
    entries: &[BlockEntry],
    block_length: u64,
    nrows: u64,
    query: &BBox,
) -> Vec<Range<u64>> {
    blocks_classified(entries, &[], block_length, nrows, query, false).read
}

/// Consecutive entries per box of [`entry_groups`].
pub(crate) const GROUP: usize = 16;

/// The XY box of each run of [`GROUP`] consecutive entries: the union of their boxes when
/// each is ordinary (minima at most maxima) or empty, `None` when one is neither (it wraps
/// around the antimeridian or has a NaN bound). [`blocks_classified`] passes over a group
/// whose box misses an ordinary window without looking at its entries: their boxes lie in
/// the group's, so none of them meets the window either (issue #33: testing each of the
/// 977 entries of the benchmark's points was 7–11 % of a warm window).
pub(crate) fn entry_groups(entries: &[BlockEntry]) -> Vec<Option<BBox>> {
    entries
        .chunks(GROUP)
        .map(|g| {
            g.iter().try_fold(BBox::EMPTY, |u, e| {
                let b = &e.bbox;
                if b.xmin <= b.xmax && b.ymin <= b.ymax {
                    Some(BBox::xy(u.xmin.min(b.xmin), u.ymin.min(b.ymin), u.xmax.max(b.xmax), u.ymax.max(b.ymax)))
                } else if b.is_empty() && !(b.xmin.is_nan() || b.ymin.is_nan() || b.xmax.is_nan() || b.ymax.is_nan()) {
                    Some(u)
                } else {
                    None
                }
            })
        })
        .collect()
}

/// [`blocks_to_read`], with the blocks whose every row is known to intersect `query`
/// set apart when `by_box`: a block whose entry counts all its rows (`n` = the rows of
/// its range), none null or empty, and whose box lies inside `query` (which must not wrap
/// the antimeridian): each of its geometries is non-empty and inside the window by its
/// box, so it intersects the window (HEP002 §10.3: the box of the block's geometries). The
/// second list holds those blocks' row ranges (ascending, merged); the first, the rows
/// still to test. Without `by_box` the second list is empty.
///
/// `groups` are [`entry_groups`] of `entries` (or empty: every entry is tested).
pub(crate) fn blocks_classified(
    entries: &[BlockEntry],
    groups: &[Option<BBox>],
    block_length: u64,
    nrows: u64,
    query: &BBox,
    by_box: bool,
) -> Classified {
    let mut c = Classified::default();
    let nblocks = if block_length == 0 { 0 } else { nrows.div_ceil(block_length) };
    // Entries beyond the blocks still count as met (the statistics of the query).
    let beyond = usize::try_from(nblocks).unwrap_or(usize::MAX).min(entries.len());
    c.met = entries[beyond..].iter().filter(|e| intersects(&e.bbox, query)).count() as u64;
    if nrows == 0 || query.is_empty() {
        return c;
    }
    if block_length == 0 {
        c.read.push(0..nrows);
        return c;
    }
    let push = |v: &mut Vec<Range<u64>>, r: Range<u64>| match v.last_mut() {
        Some(last) if last.end == r.start => last.end = r.end,
        _ => v.push(r),
    };
    let wraps = query.xmin > query.xmax;
    let ordinary = query.xmin <= query.xmax && query.ymin <= query.ymax;
    let mut j = 0;
    while j < beyond {
        if ordinary && j % GROUP == 0 && groups.get(j / GROUP).is_some_and(|g| g.as_ref().is_some_and(|g| !g.intersects_xy(query))) {
            j += GROUP;
            continue;
        }
        let e = &entries[j];
        j += 1;
        if intersects(&e.bbox, query) {
            c.met += 1;
            // j - 1 < nblocks, so (j - 1)·B < nrows.
            let start = (j as u64 - 1) * block_length;
            let r = start..nrows.min(start.saturating_add(block_length));
            let whole = e.n == r.end - r.start && e.null_count == 0 && e.empty_count == 0;
            if by_box && !wraps && whole && query.contains_xy(&e.bbox) {
                push(&mut c.whole, r);
            } else {
                push(&mut c.read, r);
            }
        }
    }
    let covered = entries.len() as u64;
    if covered < nblocks {
        push(&mut c.read, covered * block_length..nrows);
    }
    c
}

/// What [`blocks_classified`] finds.
#[derive(Debug, Default)]
pub(crate) struct Classified {
    /// The row ranges still to test (ascending, merged).
    pub read: Vec<Range<u64>>,
    /// The row ranges of the blocks answered by their entry (ascending, merged).
    pub whole: Vec<Range<u64>>,
    /// The entries whose box meets the query (all of them, also those beyond the blocks).
    pub met: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use RowSummary::{Empty, Geometry, Null};

    fn pt(x: f64, y: f64) -> RowSummary {
        Geometry(BBox::xy(x, y, x, y))
    }

    /// Joining runs of entries equals building with the longer block length, for every
    /// factor, a partial last block, nulls, empties and blocks without geometries.
    #[test]
    fn coarsen_equals_building_longer_blocks() {
        let rows: Vec<RowSummary> = (0..1000u32)
            .map(|i| match i % 37 {
                0 => Null,
                5 => Empty,
                _ if (300..340).contains(&i) => Null,
                _ => pt(f64::from(i % 91) - 45.0, f64::from(i / 7) * 0.5),
            })
            .collect();
        let fine = build_blocks(rows.iter().copied(), 8).unwrap();
        for factor in [1usize, 2, 3, 4, 16, 200] {
            let want = build_blocks(rows.iter().copied(), 8 * factor as u64).unwrap();
            assert_eq!(coarsen(&fine, factor), want, "factor {factor}");
        }
        assert!(coarsen(&[], 4).is_empty());
    }

    #[test]
    fn blocks_exact() {
        let rows = [
            pt(0.0, 0.0),
            Null,
            pt(2.0, -1.0),
            Empty,
            Null,
            Empty,
            pt(5.0, 5.0),
        ];
        let b = build_blocks(rows, 3).unwrap();
        assert_eq!(
            b,
            vec![
                BlockEntry {
                    bbox: BBox::xy(0.0, -1.0, 2.0, 0.0),
                    n: 3,
                    null_count: 1,
                    empty_count: 0
                },
                BlockEntry {
                    bbox: BBox::EMPTY,
                    n: 3,
                    null_count: 1,
                    empty_count: 2
                },
                BlockEntry {
                    bbox: BBox::xy(5.0, 5.0, 5.0, 5.0),
                    n: 1,
                    null_count: 0,
                    empty_count: 0
                },
            ]
        );
        // The all-null/empty block keeps +inf minima and -inf maxima.
        assert_eq!(b[1].bbox.xmin, f64::INFINITY);
        assert_eq!(b[1].bbox.mmax, f64::NEG_INFINITY);
        assert!(build_blocks([], 3).unwrap().is_empty());
        assert_eq!(build_blocks(rows, 7).unwrap().len(), 1);
        assert_eq!(build_blocks(rows, u64::MAX).unwrap().len(), 1);
        assert_eq!(build_blocks(rows, 1).unwrap().len(), 7);
        assert_eq!(
            build_blocks(rows, 0).unwrap_err().to_string(),
            "invalid argument: block_length must be at least 1"
        );
        // An empty box passed as Geometry counts as empty.
        let b = build_blocks([Geometry(BBox::EMPTY)], 4).unwrap();
        assert_eq!((b[0].bbox, b[0].empty_count), (BBox::EMPTY, 1));
    }

    #[test]
    fn z_and_m_bounds() {
        let mut z1 = BBox::xy(0.0, 0.0, 1.0, 1.0);
        z1.add_z(5.0);
        let mut z2 = BBox::xy(2.0, 2.0, 3.0, 3.0);
        z2.add_z(-1.0);
        z2.add_z(f64::NAN);
        let b = build_blocks([Geometry(z1), Geometry(z2)], 2).unwrap();
        assert_eq!((b[0].bbox.zmin, b[0].bbox.zmax), (-1.0, 5.0));
        // All M values NaN: M bounds stay +inf/-inf.
        assert_eq!(
            (b[0].bbox.mmin, b[0].bbox.mmax),
            (f64::INFINITY, f64::NEG_INFINITY)
        );
    }

    #[test]
    fn wrapping_geometry_widens_to_all_longitudes() {
        let w = Geometry(BBox::xy(170.0, 1.0, -170.0, 2.0));
        let b = build_blocks([w, pt(10.0, 3.0)], 4).unwrap();
        assert_eq!(b[0].bbox, BBox::xy(-180.0, 1.0, 180.0, 3.0));
    }

    #[test]
    fn extend_equals_rebuild() {
        let rows: Vec<RowSummary> = (0..23)
            .map(|i| {
                if i % 5 == 0 {
                    Null
                } else {
                    pt(i as f64, -(i as f64))
                }
            })
            .collect();
        for bl in [1u64, 2, 3, 4, 7, 23, 50] {
            for old in 0..=rows.len() {
                let mut idx = build_blocks(rows[..old].iter().copied(), bl).unwrap();
                // Preallocated leftovers are dropped.
                idx.push(BlockEntry::EMPTY);
                let start = partial_block_start(old as u64, bl).unwrap() as usize;
                extend_blocks(&mut idx, old as u64, rows[start..].iter().copied(), bl).unwrap();
                assert_eq!(
                    idx,
                    build_blocks(rows.iter().copied(), bl).unwrap(),
                    "B={bl} old={old}"
                );
            }
        }
    }

    #[test]
    fn extend_rejects_bad_input_unchanged() {
        let rows = [pt(0.0, 0.0), pt(1.0, 1.0), pt(2.0, 2.0)];
        let mut idx = build_blocks(rows, 2).unwrap();
        let before = idx.clone();
        // Rows of the partial block not supplied again.
        let e = extend_blocks(&mut idx, 3, [pt(3.0, 3.0)].into_iter().take(0), 2).unwrap_err();
        assert_eq!(e.to_string(), "invalid argument: extend_blocks needs the 1 existing rows from row 2 again, got 0 rows");
        assert_eq!(idx, before);
        let e = extend_blocks(&mut idx, 30, rows, 2).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid argument: block index has 2 entries but 30 rows need at least 15 full blocks"
        );
        assert!(extend_blocks(&mut idx, 3, rows, 0).is_err());
        assert_eq!(idx, before);
    }

    #[test]
    fn block_length_choice() {
        assert_eq!(choose_block_length(&[]), DEFAULT_BLOCK_LENGTH);
        assert_eq!(choose_block_length(&[0, 0]), DEFAULT_BLOCK_LENGTH);
        assert_eq!(choose_block_length(&[4096, 1024, 65536]), 1024);
        assert_eq!(choose_block_length(&[1 << 20]), 1 << 20);
        assert_eq!(choose_block_length(&[1000, 1500, 0]), 500);
        assert_eq!(choose_block_length(&[1000, 1024]), 8);
        assert_eq!(choose_block_length(&[7, 11]), 1);
        assert_eq!(choose_block_length(&[u64::MAX, u64::MAX]), u64::MAX);
    }

    #[test]
    fn ranges_to_read() {
        let rows = [
            pt(0.0, 0.0),
            pt(1.0, 1.0),
            Null,
            Null,
            pt(10.0, 10.0),
            pt(11.0, 11.0),
            pt(0.5, 0.5),
        ];
        let idx = build_blocks(rows, 2).unwrap();
        assert_eq!(idx.len(), 4);
        let q = BBox::xy(0.0, 0.0, 1.0, 1.0);
        assert_eq!(blocks_to_read(&idx, 2, 7, &q), vec![0..2, 6..7]);
        assert_eq!(
            blocks_to_read(&idx, 2, 7, &BBox::xy(-100.0, -100.0, 100.0, 100.0)),
            vec![0..2, 4..7]
        );
        assert_eq!(blocks_to_read(&idx, 2, 7, &BBox::EMPTY), vec![]);
        assert_eq!(blocks_to_read(&idx, 2, 0, &q), vec![]);
        // Entries past ceil(nrows / B) are ignored; missing entries are read.
        assert_eq!(blocks_to_read(&idx, 2, 4, &q), vec![0..2]);
        assert_eq!(
            blocks_to_read(&idx[..1], 2, 7, &BBox::xy(50.0, 50.0, 60.0, 60.0)),
            vec![2..7]
        );
        assert_eq!(blocks_to_read(&idx, 0, 7, &q), vec![0..7]);
        // Huge block length: one block.
        assert_eq!(blocks_to_read(&idx[..1], u64::MAX, 7, &q), vec![0..7]);
        // Stored wrapping block boxes (written by another producer).
        let wrap = [
            BlockEntry {
                bbox: BBox::xy(170.0, -10.0, -170.0, 10.0),
                n: 4,
                null_count: 0,
                empty_count: 0,
            },
            BlockEntry {
                bbox: BBox::xy(-10.0, -10.0, 10.0, 10.0),
                n: 4,
                null_count: 0,
                empty_count: 0,
            },
            BlockEntry {
                bbox: BBox::xy(175.0, -10.0, -175.0, 10.0),
                n: 2,
                null_count: 0,
                empty_count: 0,
            },
        ];
        assert_eq!(
            blocks_to_read(&wrap, 4, 10, &BBox::xy(-179.0, 0.0, -178.0, 1.0)),
            vec![0..4, 8..10]
        );
        assert_eq!(
            blocks_to_read(&wrap, 4, 10, &BBox::xy(171.0, 0.0, 172.0, 1.0)),
            vec![0..4]
        );
        assert_eq!(
            blocks_to_read(&wrap, 4, 10, &BBox::xy(0.0, 0.0, 1.0, 1.0)),
            vec![4..8]
        );
        assert_eq!(
            blocks_to_read(&wrap, 4, 10, &BBox::xy(0.0, 20.0, 1.0, 21.0)),
            vec![]
        );
    }
}
