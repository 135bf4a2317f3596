//! The spatial indexes of one write, planned when the write begins and fed the boxes of
//! its rows as they are staged (issue #31): every row's box is computed once, by the
//! encoding of the row, and that box is what the block index and the R-tree receive. No
//! old row is decoded: a block index is extended from its last partial block (at most
//! `block_length − 1` old rows scanned), an R-tree is rebuilt from its stored leaves
//! ([`append_rtree`]), and the indexes a new table gets from its [`WriteLayout`] are
//! built at the commit from the boxes collected — never by reading back the column just
//! written.
//!
//! Memory: one [`BlockEntry`] per block of new rows, and for columns with an R-tree to
//! maintain or build one `(box, row)` item per new non-empty row. Nothing per row
//! otherwise (a 10,000,000-point write keeps about 9,800 block entries).

use super::*;
use crate::marquet::{GeometryColumnInfo, WriteLayout};

/// A block index the write extends or builds.
enum BlockTarget {
    /// A valid index of the table, extended in place.
    Extend(IndexInfo),
    /// A new index of this block length, built at the commit.
    Declare,
}

/// An R-tree the write maintains or builds.
enum RTreeTarget {
    /// A valid R-tree of the table, rebuilt from its stored leaves plus the new items.
    Rebuild(IndexInfo),
    /// A new R-tree, built at the commit from the new items.
    Declare,
}

/// The block entries of the rows written, in block order.
struct BlockAcc {
    target: BlockTarget,
    b: u64,
    /// Block number of `done[0]`.
    first: u64,
    done: Vec<BlockEntry>,
    cur: BlockEntry,
}

impl BlockAcc {
    fn add(&mut self, r: &RowSummary) {
        self.cur.add(r);
        if self.cur.n == self.b {
            self.done.push(self.cur);
            self.cur = BlockEntry::EMPTY;
        }
    }
    fn entries(&self) -> Vec<BlockEntry> {
        let mut v = self.done.clone();
        if self.cur.n > 0 {
            v.push(self.cur);
        }
        v
    }
}

/// What one write does to the spatial indexes of one geometry column.
pub(crate) struct IndexPlan {
    col: String,
    generation: Option<u64>,
    blocks: Vec<BlockAcc>,
    rtrees: Vec<(RTreeTarget, u16)>,
    /// R-tree items of the new rows (only when an R-tree is maintained or built).
    items: Option<Vec<(BBox, u64)>>,
    /// Do all non-empty new geometries have Z / M, and is there any?
    z: bool,
    m: bool,
    any: bool,
}

impl IndexPlan {
    /// Plan the index work of a write of rows from `n_old` on. The valid indexes of the
    /// column are maintained (R-trees only under [`RTreeOnAppend::Rebuild`]; stale ones are
    /// left to their tokens); an empty table whose column has no index at all gets those of
    /// `declare` (a write layout and the expected row count), built at the commit.
    pub(crate) fn new(
        this: &MarquetTable,
        info: &GeometryColumnInfo,
        n_old: u64,
        rtree: RTreeOnAppend,
        declare: Option<(&WriteLayout, Option<u64>)>,
    ) -> Result<IndexPlan> {
        let t = this.table();
        let col = info.name.clone();
        let all = h5index::indexes_of(t, &col)?;
        let declaring = declare.is_some() && all.is_empty() && n_old == 0;
        // A table about to get its first index carries GENERATION (HEP001 §12.2); the
        // commit bumps it, and the new indexes' tokens name that value.
        let generation = if declaring { Some(h5index::ensure_generation(t)?) } else { t.generation()? };
        let mut plan = IndexPlan { col: col.clone(), generation, blocks: Vec::new(), rtrees: Vec::new(), items: None, z: true, m: true, any: false };
        let Some(g_old) = generation else { return Ok(plan) };
        if declaring {
            if let Some((layout, rows)) = declare {
                if layout.block_index {
                    let b = layout.block_length_for(rows);
                    plan.blocks.push(BlockAcc { target: BlockTarget::Declare, b, first: 0, done: Vec::new(), cur: BlockEntry::EMPTY });
                }
                if layout.wants_rtree(&info.form) {
                    let m = layout.rtree_node_size.unwrap_or(packed_rtree::DEFAULT_NODE_SIZE);
                    plan.rtrees.push((RTreeTarget::Declare, m));
                }
            }
        }
        for idx in all {
            let Some(kind) = SpatialIndexKind::from_kind(idx.kind.as_deref()) else { continue };
            if !idx.is_valid(Some(g_old), n_old) {
                continue;
            }
            let o = h5::object_open(t.id(), &idx.path)?;
            match kind {
                SpatialIndexKind::BlockBBox => {
                    // Not an index we can extend (no usable block length): left to its tokens.
                    let Some(b) = scalar_uint(o.id(), names::BLOCK_LENGTH)?.filter(|&b| b > 0) else { continue };
                    drop(o);
                    let start = block_bbox::partial_block_start(n_old, b)?;
                    let cur = match stored_partial_block(this, &idx, b, start, n_old)? {
                        Some(e) => e,
                        None => {
                            // The stored entry does not describe those rows: recomputed from
                            // them (at most b − 1 rows decoded).
                            let mut e = BlockEntry::EMPTY;
                            for r in this.scan_rows(&col, start, n_old)? {
                                e.add(&summary(&r));
                            }
                            e
                        }
                    };
                    plan.blocks.push(BlockAcc { target: BlockTarget::Extend(idx), b, first: start / b, done: Vec::new(), cur });
                }
                SpatialIndexKind::PackedRTree if rtree == RTreeOnAppend::Rebuild => {
                    let m = scalar_uint(o.id(), names::NODE_SIZE)?
                        .and_then(|m| u16::try_from(m).ok())
                        .filter(|&m| m >= 2)
                        .unwrap_or(packed_rtree::DEFAULT_NODE_SIZE);
                    plan.rtrees.push((RTreeTarget::Rebuild(idx), m));
                }
                SpatialIndexKind::PackedRTree => {}
            }
        }
        if !plan.rtrees.is_empty() {
            plan.items = Some(Vec::new());
        }
        Ok(plan)
    }

    /// Take the boxes of rows staged at `first_row..` (in the order they were written).
    pub(crate) fn add(&mut self, rows: &[RowInfo], first_row: u64) {
        dims_of(rows, &mut self.z, &mut self.m, &mut self.any);
        for acc in self.blocks.iter_mut() {
            for r in rows {
                acc.add(&summary(r));
            }
        }
        if let Some(items) = self.items.as_mut() {
            items.extend(items_of(rows, first_row));
        }
    }

    /// Does the plan build a new index (so a write of no rows must still commit)?
    pub(crate) fn declares(&self) -> bool {
        self.blocks.iter().any(|b| matches!(b.target, BlockTarget::Declare)) || self.rtrees.iter().any(|(t, _)| matches!(t, RTreeTarget::Declare))
    }

    /// Write the planned indexes for the rows `[0, n_new)`, tokens first (HEP001 §12.3 step
    /// 4): called by the commit before `GENERATION` and `NROWS`. A kill leaves each index
    /// stale (its tokens name a state that is never committed), never wrong.
    pub(crate) fn commit(self, this: &MarquetTable, n_old: u64, n_new: u64) -> Result<()> {
        let Some(g_old) = self.generation else { return Ok(()) };
        let tokens = (g_old.wrapping_add(1), n_new);
        let col = &self.col;
        for acc in &self.blocks {
            let entries = acc.entries();
            match &acc.target {
                BlockTarget::Declare => {
                    let (z, m) = (self.z && self.any, self.m && self.any);
                    write_block_entries(this, col, None, acc.b, tokens, true, &entries, (z, m))?;
                }
                BlockTarget::Extend(idx) => extend_block_entries(this, col, idx, acc, entries, (self.z, self.m), tokens)?,
            }
        }
        let items = self.items.unwrap_or_default();
        for (target, m) in &self.rtrees {
            match target {
                RTreeTarget::Declare => {
                    write_rtree_items(this, col, None, *m, tokens, true, &items)?;
                }
                RTreeTarget::Rebuild(idx) => {
                    if !append_rtree(this, col, idx, *m, tokens, n_old, &items)? {
                        // The stored tree failed a check of the fast path: from the rows.
                        let mut all = items_of(&this.scan_rows(col, 0, n_old)?, 0);
                        all.extend_from_slice(&items);
                        write_rtree_items(this, col, Some(idx), *m, tokens, true, &all)?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// The stored entry of the last, partial block of a valid block index — rows `[start,
/// n_old)` — to extend with the new rows: HEP002 §10.3 has the producer recompute that
/// entry, and the union of its box with the new rows' boxes (and the sum of the counts) is
/// that recomputation without decoding a single old row (issue #31: at 10,000,000 polygons,
/// reading those rows' WKB walked the 125,000-chunk index of the geometry column).
/// [`BlockEntry::EMPTY`] when there is no partial block; `None` when the entry cannot be
/// used (another datatype, or counts that do not match the rows), and the rows are then
/// read instead.
fn stored_partial_block(this: &MarquetTable, idx: &IndexInfo, b: u64, start: u64, n_old: u64) -> Result<Option<BlockEntry>> {
    if start == n_old {
        return Ok(Some(BlockEntry::EMPTY));
    }
    let block = start / b;
    let ds = h5::dataset_open(this.table().id(), &idx.path)?;
    let di = h5::dataset_info(ds.id(), &idx.path)?;
    let Some((z, m)) = block_layout(&di.dtype) else { return Ok(None) };
    let dt = block_bbox_dtype(z, m);
    if di.dtype.to_le() != dt || di.dims.first().is_none_or(|&len| len <= block) {
        return Ok(None);
    }
    let Some(e) = decode_blocks(&h5::dataset_read(ds.id(), block, 1, &dt, &idx.path)?, z, m).pop() else { return Ok(None) };
    let counts_fit = e.n == n_old - start && e.null_count.saturating_add(e.empty_count) <= e.n;
    Ok(counts_fit.then_some(e))
}

/// Extend a valid block index with the entries from block `acc.first` on (HEP002 §10.3),
/// tokens first. An index whose Z/M fields no longer fit the data (ruling R11) is written
/// whole: its full blocks before `acc.first` are read back from the index itself.
fn extend_block_entries(this: &MarquetTable, col: &str, idx: &IndexInfo, acc: &BlockAcc, tail: Vec<BlockEntry>, dims: (bool, bool), tokens: (u64, u64)) -> Result<()> {
    let t = this.table();
    let ds = h5::dataset_open(t.id(), &idx.path)?;
    let di = h5::dataset_info(ds.id(), &idx.path)?;
    let Some((z, m)) = block_layout(&di.dtype) else { return Ok(()) };
    if (z && !dims.0) || (m && !dims.1) || di.dtype.to_le() != block_bbox_dtype(z, m) {
        let full = decode_blocks(&h5::dataset_read(ds.id(), 0, acc.first, &block_bbox_dtype(z, m), &idx.path)?, z, m);
        drop(ds);
        let mut entries = full;
        entries.extend(tail);
        // The new layout: Z/M only when every block with a geometry has them (R11).
        let (z, m) = (z && dims.0, m && dims.1);
        write_block_entries(this, col, Some(idx), acc.b, tokens, true, &entries, (z, m))?;
        return Ok(());
    }
    h5index::write_tokens(t, &idx.path, tokens.0, tokens.1)?;
    h5::flush(t.id())?; // tokens reach the file before content (local ruling L6)
    let total = acc.first + tail.len() as u64;
    if di.dims[0] < total {
        h5::dataset_set_len(ds.id(), total, &idx.path)?;
    }
    h5::dataset_write(ds.id(), acc.first, &block_bbox_dtype(z, m), &encode_blocks(&tail, z, m), &idx.path)
}
