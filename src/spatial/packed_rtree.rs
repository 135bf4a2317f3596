//! The packed Hilbert R-tree of HEP002 §10.4 in Marquet's layout.
//!
//! Level 0 holds the leaves (one per non-null, non-empty row), each level above groups the
//! one below into runs of `node_size` (M) entries, and the root is a single entry. The array
//! stores the **root level first and the leaves last**; level k starts at
//! `start_k = n_L + … + n_(k+1)`. A leaf's `index` is its row; an internal entry's `index` is
//! the position of its first child, `start_(k−1) + i·M` (checked on every read, §17).
//!
//! Everything here is pure: [`search`] reads the tree through an [`EntrySource`] so the HDF5
//! layer can read it lazily, level by level, in contiguous runs.

use std::fmt;

use crate::error::{MarquetError, Result};
use crate::spatial::geom_box::{intersects, is_wrapping};
use crate::spatial::hilbert::{extent_of, hilbert_of_box};
use crate::spec::BBox;

/// The node size producers use unless they have measured a better one (HEP002 §10.4).
pub const DEFAULT_NODE_SIZE: u16 = 16;

/// The rule cited by errors about a stored tree.
const RULE: &str = "HEP002 §17";

/// The most entries [`search`] asks its source for in one read (2.5 MiB of entries).
pub const MAX_READ_ENTRIES: u64 = 1 << 16;

/// How many findings [`verify`] collects before it stops with [`TreeFinding::Truncated`].
pub const MAX_FINDINGS: usize = 100;

/// One entry of the tree, laid out as the HDF5 compound `{xmin, ymin, xmax, ymax: f64,
/// index: u64}` (40 bytes, the layout of FlatGeobuf's `NodeItem`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Entry {
    /// Minimum x of the entry's box, in the column's CRS units (never wraps, HEP002 §10.4).
    pub xmin: f64,
    /// Minimum y of the entry's box.
    pub ymin: f64,
    /// Maximum x of the entry's box (≥ `xmin`; ±180 for an item crossing the antimeridian).
    pub xmax: f64,
    /// Maximum y of the entry's box.
    pub ymax: f64,
    /// Leaf: the row. Internal entry: the position of its first child.
    pub index: u64,
}

impl Entry {
    /// An entry holding the XY part of `b`.
    pub fn new(b: &BBox, index: u64) -> Entry {
        Entry {
            xmin: b.xmin,
            ymin: b.ymin,
            xmax: b.xmax,
            ymax: b.ymax,
            index,
        }
    }

    /// The entry's box (Z and M empty).
    pub fn bbox(&self) -> BBox {
        BBox::xy(self.xmin, self.ymin, self.xmax, self.ymax)
    }

    /// Widen this entry's box to hold `o`'s.
    pub fn expand(&mut self, o: &Entry) {
        self.xmin = self.xmin.min(o.xmin);
        self.ymin = self.ymin.min(o.ymin);
        self.xmax = self.xmax.max(o.xmax);
        self.ymax = self.ymax.max(o.ymax);
    }

    fn same_box(&self, o: &Entry) -> bool {
        self.xmin == o.xmin && self.ymin == o.ymin && self.xmax == o.xmax && self.ymax == o.ymax
    }
}

fn violation(message: String) -> MarquetError {
    MarquetError::spec("", RULE, message)
}

/// Level sizes `[n₀, n₁, …, n_L]`, leaves first (HEP002 §10.4): `n₀ = num_items`,
/// `n_(k+1) = ceil(n_k / M)` computed at least once and repeated until it is 1. Zero items
/// give no levels; one item gives two (a root above one leaf).
///
/// Errors: `node_size < 2` (a [`MarquetError::SpecViolation`] of §17).
pub fn level_sizes(num_items: u64, node_size: u16) -> Result<Vec<u64>> {
    if node_size < 2 {
        return Err(violation(format!("node_size {node_size} is less than 2")));
    }
    let m = u64::from(node_size);
    let mut sizes = Vec::new();
    if num_items == 0 {
        return Ok(sizes);
    }
    let mut n = num_items;
    sizes.push(n);
    loop {
        n = n.div_ceil(m); // m ≥ 2; cannot overflow
        sizes.push(n);
        if n == 1 {
            break;
        }
    }
    Ok(sizes)
}

/// Start positions of the levels, indexed like `sizes` (level 0 = leaves): `start_L = 0` for
/// the root, `start_k = n_L + … + n_(k+1)`. Errors if the positions overflow `u64`.
pub fn level_starts(sizes: &[u64]) -> Result<Vec<u64>> {
    let mut starts = vec![0u64; sizes.len()];
    let mut pos = 0u64;
    for k in (0..sizes.len()).rev() {
        starts[k] = pos;
        pos = pos
            .checked_add(sizes[k])
            .ok_or_else(|| violation("the tree has more than 2^64 entries".to_string()))?;
    }
    Ok(starts)
}

/// The number of entries `T = n₀ + … + n_L` of a tree (0 for no items).
pub fn total_entries(num_items: u64, node_size: u16) -> Result<u64> {
    Ok(Layout::try_new(num_items, node_size)?.total)
}

/// The level layout of a tree, computed from `num_items` and `node_size` (HEP002 §10.4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// The number of items n₀ (the `num_items` attribute).
    pub num_items: u64,
    /// The node size M ≥ 2 (the `node_size` attribute).
    pub node_size: u16,
    /// `sizes[k]` = number of entries of level k; level 0 = leaves, last = root.
    pub sizes: Vec<u64>,
    /// `starts[k]` = position of the first entry of level k.
    pub starts: Vec<u64>,
    /// Total number of entries T.
    pub total: u64,
}

impl Layout {
    /// Compute the layout; errors when `node_size < 2` or the entry count overflows.
    pub fn try_new(num_items: u64, node_size: u16) -> Result<Layout> {
        let sizes = level_sizes(num_items, node_size)?;
        let starts = level_starts(&sizes)?;
        let total = match (sizes.first(), starts.first()) {
            (Some(&n0), Some(&s0)) => s0.checked_add(n0).ok_or_else(|| {
                violation(format!(
                    "num_items {num_items} with node_size {node_size} gives more than 2^64 entries"
                ))
            })?,
            _ => 0,
        };
        Ok(Layout {
            num_items,
            node_size,
            sizes,
            starts,
            total,
        })
    }

    /// Number of levels (0 for an empty tree, otherwise at least 2).
    pub fn num_levels(&self) -> usize {
        self.sizes.len()
    }

    /// Position of the first leaf (`T − num_items`).
    pub fn leaf_start(&self) -> u64 {
        self.starts.first().copied().unwrap_or(0)
    }

    /// Positions of the children of entry `i` of level `k ≥ 1`; the first is the index that
    /// entry must hold. `None` when `k` is 0 or out of range or `i ≥ n_k`.
    pub fn children(&self, k: usize, i: u64) -> Option<std::ops::Range<u64>> {
        if k == 0 || k >= self.sizes.len() || i >= self.sizes[k] {
            return None;
        }
        let m = u64::from(self.node_size);
        let lower_start = self.starts[k - 1];
        let lower_end = lower_start + self.sizes[k - 1];
        // i < ceil(n_(k−1) / M), so i·M < n_(k−1) and nothing overflows.
        let first = lower_start + i * m;
        Some(first..lower_end.min(first.saturating_add(m)))
    }
}

/// Build a tree (HEP002 §10.4) from `(box, row)` items: leaves sorted by the Hilbert index of
/// the box centre over the extent of all items, ties by row (ruling R13), then the internal
/// levels. Returns the `T` entries in storage order (root first).
///
/// Items must be the non-null, non-empty rows with non-wrapping, NaN-free boxes (a geometry
/// crossing the antimeridian is passed as −180..180 by the caller); otherwise, or when
/// `node_size < 2`, the result is [`MarquetError::InvalidArgument`].
pub fn build(items: &[(BBox, u64)], node_size: u16) -> Result<Vec<Entry>> {
    check_items(items, node_size)?;
    let extent = extent_of(items.iter().map(|(b, _)| b));
    build_levels(hilbert_leaves(items, &extent), node_size)
}

/// Refuse items [`build`] cannot take (see there): an empty box, a NaN bound, a wrapping or
/// upside-down box, or `node_size < 2`.
pub fn check_items(items: &[(BBox, u64)], node_size: u16) -> Result<()> {
    if node_size < 2 {
        return Err(MarquetError::InvalidArgument(format!(
            "r-tree node_size {node_size} is less than 2"
        )));
    }
    for (i, (b, row)) in items.iter().enumerate() {
        let problem = if b.is_empty() {
            "an empty box"
        } else if [b.xmin, b.ymin, b.xmax, b.ymax].iter().any(|v| v.is_nan()) {
            "a NaN bound"
        } else if is_wrapping(b) || b.ymin > b.ymax {
            "xmin > xmax or ymin > ymax"
        } else {
            continue;
        };
        return Err(MarquetError::InvalidArgument(format!(
            "r-tree item {i} (row {row}) has {problem}"
        )));
    }
    Ok(())
}

/// The leaves of `items` in ascending Hilbert order of their box centres on the grid over
/// `extent`, ties by row (HEP002 §10.4, ruling R13).
pub fn hilbert_leaves(items: &[(BBox, u64)], extent: &BBox) -> Vec<Entry> {
    let mut order: Vec<(u32, u64, usize)> = items
        .iter()
        .enumerate()
        .map(|(i, (b, row))| (hilbert_of_box(b, extent), *row, i))
        .collect();
    order.sort_unstable();
    order.into_iter().map(|(_, row, i)| Entry::new(&items[i].0, row)).collect()
}

/// The whole tree over `leaves` kept in the order given (HEP002 §10.4: "the leaves MAY
/// appear in any order"): the `T` entries in storage order, root first, each internal entry
/// the smallest box of its children with the position of its first child. The leaves must
/// satisfy [`check_items`]' rules (the caller's duty: [`build`] checks them, an append
/// takes them from a tree that passed its checks).
pub fn build_levels(leaves: Vec<Entry>, node_size: u16) -> Result<Vec<Entry>> {
    if node_size < 2 {
        return Err(MarquetError::InvalidArgument(format!(
            "r-tree node_size {node_size} is less than 2"
        )));
    }
    let num_items = u64::try_from(leaves.len())
        .map_err(|_| MarquetError::InvalidArgument("too many r-tree items".to_string()))?;
    let layout = Layout::try_new(num_items, node_size)
        .map_err(|e| MarquetError::InvalidArgument(e.to_string()))?;
    if num_items == 0 {
        return Ok(Vec::new());
    }
    let total = usize::try_from(layout.total).map_err(|_| {
        MarquetError::InvalidArgument(format!(
            "r-tree of {} entries does not fit in memory",
            layout.total
        ))
    })?;
    let placeholder = Entry {
        xmin: f64::INFINITY,
        ymin: f64::INFINITY,
        xmax: f64::NEG_INFINITY,
        ymax: f64::NEG_INFINITY,
        index: 0,
    };
    // Positions below are all < T, which fits in usize.
    let leaf_start = layout.leaf_start() as usize;
    let mut entries = Vec::with_capacity(total);
    entries.resize(leaf_start, placeholder);
    entries.extend(leaves);
    fill_levels(&mut entries, &layout, 1);
    Ok(entries)
}

/// An internal entry with no child yet: the empty box (every child widens it).
const EMPTY_NODE: Entry = Entry { xmin: f64::INFINITY, ymin: f64::INFINITY, xmax: f64::NEG_INFINITY, ymax: f64::NEG_INFINITY, index: 0 };

/// Compute levels `from..` of `layout` in `entries` (storage order, positions absolute),
/// each internal entry from the entries of the level below it, which must be in place.
fn fill_levels(entries: &mut [Entry], layout: &Layout, from: usize) {
    let m = layout.node_size as usize;
    for k in from..layout.num_levels() {
        let lower_start = layout.starts[k - 1] as usize;
        let lower_end = lower_start + layout.sizes[k - 1] as usize;
        let start = layout.starts[k] as usize;
        for i in 0..layout.sizes[k] as usize {
            let first = lower_start + i * m;
            let mut node = Entry { index: first as u64, ..EMPTY_NODE };
            for child in &entries[first..lower_end.min(first + m)] {
                node.expand(child);
            }
            entries[start + i] = node;
        }
    }
}

/// The level-1 entries of a tree of `layout` before any leaf is seen: empty boxes holding
/// the positions of their first children. Widen entry `p / node_size` with leaf `p`
/// ([`Entry::expand`]) as the leaves go by, then [`levels_above`] — an append builds its
/// upper levels while streaming the stored leaves instead of holding them (issue #31).
pub fn empty_level1(layout: &Layout) -> Vec<Entry> {
    let (Some(&n1), Some(&s0)) = (layout.sizes.get(1), layout.starts.first()) else { return Vec::new() };
    let m = u64::from(layout.node_size);
    (0..n1).map(|i| Entry { index: s0 + i * m, ..EMPTY_NODE }).collect()
}

/// The entries `[0, leaf_start)` of a tree of `layout` — every level above the leaves, in
/// storage order, root first — from its level 1 (as [`empty_level1`] starts it).
pub fn levels_above(layout: &Layout, level1: &[Entry]) -> Result<Vec<Entry>> {
    let n1 = layout.sizes.get(1).copied().unwrap_or(0);
    if level1.len() as u64 != n1 {
        return Err(MarquetError::InvalidArgument(format!("{} level-1 entries for a level of {n1}", level1.len())));
    }
    let leaf_start = usize::try_from(layout.leaf_start()).map_err(|_| MarquetError::InvalidArgument("r-tree too large".into()))?;
    let mut entries = vec![EMPTY_NODE; leaf_start];
    if n1 > 0 {
        let s1 = layout.starts[1] as usize;
        entries[s1..s1 + level1.len()].copy_from_slice(level1);
        fill_levels(&mut entries, layout, 2);
    }
    Ok(entries)
}

/// Where [`search`] reads entries from: a slice, or a lazily read HDF5 dataset.
pub trait EntrySource {
    /// The number of entries available (the dataset's extent, which may exceed T).
    fn len(&self) -> u64;

    /// True when there are no entries.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Replace the contents of `out` with the `count` entries at positions
    /// `start..start + count`. [`search`] only asks for ranges below `len()`.
    fn read(&mut self, start: u64, count: u64, out: &mut Vec<Entry>) -> Result<()>;

    /// Told, before a level is read, every run `(start, end)` of positions [`search`] will
    /// read at that level, so that a source read over a network fetches them in one round
    /// (issue #34). `leaves_from` is the leaf level's first position when the runs are
    /// leaves. Does nothing by default.
    fn prefetch(&mut self, runs: &[(u64, u64)], leaves_from: Option<u64>) -> Result<()> {
        let _ = (runs, leaves_from);
        Ok(())
    }
}

impl EntrySource for &[Entry] {
    fn len(&self) -> u64 {
        <[Entry]>::len(self) as u64
    }

    fn read(&mut self, start: u64, count: u64, out: &mut Vec<Entry>) -> Result<()> {
        let range = usize::try_from(start)
            .ok()
            .and_then(|s| Some(s..s.checked_add(usize::try_from(count).ok()?)?))
            .filter(|r| r.end <= <[Entry]>::len(self))
            .ok_or_else(|| {
                MarquetError::InvalidArgument(format!(
                    "entries {start}..{start}+{count} are outside the {} entries",
                    <[Entry]>::len(self)
                ))
            })?;
        out.clear();
        out.extend_from_slice(&self[range]);
        Ok(())
    }
}

impl<S: EntrySource + ?Sized> EntrySource for &mut S {
    fn len(&self) -> u64 {
        (**self).len()
    }

    fn read(&mut self, start: u64, count: u64, out: &mut Vec<Entry>) -> Result<()> {
        (**self).read(start, count, out)
    }

    fn prefetch(&mut self, runs: &[(u64, u64)], leaves_from: Option<u64>) -> Result<()> {
        (**self).prefetch(runs, leaves_from)
    }
}

/// The checks HEP002 §17 requires before descending; returns the layout.
fn check_header(len: u64, num_items: u64, node_size: u16, nrows: u64) -> Result<Layout> {
    if node_size < 2 {
        return Err(violation(format!("node_size {node_size} is less than 2")));
    }
    if num_items > nrows {
        return Err(violation(format!(
            "num_items {num_items} exceeds nrows {nrows}"
        )));
    }
    let layout = Layout::try_new(num_items, node_size)?;
    if layout.total > len {
        return Err(violation(format!(
            "num_items {num_items} with node_size {node_size} needs {} entries but the dataset has {len}",
            layout.total
        )));
    }
    Ok(layout)
}

/// Find the rows whose leaf boxes intersect `query` (HEP002 §10.4 "Searching"): candidate
/// rows, ascending and without duplicates, still to be tested with the exact predicate.
///
/// `query` may wrap around the antimeridian (`xmin > xmax`). The tree is read level by
/// level, each level's needed entries in contiguous runs of at most [`MAX_READ_ENTRIES`].
///
/// Before descending, checks that `node_size ≥ 2`, `num_items ≤ nrows` and `T ≤ src.len()`;
/// while descending, that every internal entry read holds the index the layout prescribes and
/// every leaf read holds a row below `nrows` (§17). Any failure is a
/// [`MarquetError::SpecViolation`] citing "HEP002 §17" with an empty path (see
/// [`crate::spatial::with_path`]). Memory is bounded by T; the descent ends after at most
/// as many reads as there are entries, whatever the file holds.
pub fn search<S: EntrySource>(src: S, num_items: u64, node_size: u16, nrows: u64, query: &BBox) -> Result<Vec<u64>> {
    let mut rows = Vec::new();
    search_leaves(src, num_items, node_size, nrows, query, |e| rows.push(e.index))?;
    rows.sort_unstable();
    rows.dedup();
    Ok(rows)
}

/// [`search`], each candidate row with whether its leaf box lies inside `query` (closed,
/// XY; never for a `query` that wraps the antimeridian): a row whose box — which contains
/// its geometry (HEP002 §10.4) — lies inside the window intersects the window without its
/// geometry being read (issue #33). A row listed twice by a damaged tree is inside only if
/// every box of it is.
pub fn search_classified<S: EntrySource>(src: S, num_items: u64, node_size: u16, nrows: u64, query: &BBox) -> Result<Vec<(u64, bool)>> {
    let wraps = query.xmin > query.xmax;
    let mut rows = Vec::new();
    search_leaves(src, num_items, node_size, nrows, query, |e| rows.push((e.index, !wraps && query.contains_xy(&e.bbox()))))?;
    rows.sort_unstable_by_key(|r| r.0);
    rows.dedup_by(|later, kept| {
        let same = later.0 == kept.0;
        if same {
            kept.1 &= later.1;
        }
        same
    });
    Ok(rows)
}

/// The descent of [`search`]: `on_leaf` gets every leaf entry whose box intersects `query`.
fn search_leaves<S: EntrySource>(mut src: S, num_items: u64, node_size: u16, nrows: u64, query: &BBox, mut on_leaf: impl FnMut(&Entry)) -> Result<()> {
    let layout = check_header(src.len(), num_items, node_size, nrows)?;
    if layout.num_levels() == 0 || query.is_empty() {
        return Ok(());
    }
    let m = u64::from(node_size);
    let mut level = layout.num_levels() - 1;
    // Disjoint, ascending position ranges to visit at `level`.
    let mut runs: Vec<(u64, u64)> = vec![(0, 1)];
    let mut next: Vec<(u64, u64)> = Vec::new();
    let mut buf = Vec::new();
    loop {
        let start = layout.starts[level];
        let (lower_start, lower_end) = if level > 0 {
            (
                layout.starts[level - 1],
                layout.starts[level - 1] + layout.sizes[level - 1],
            )
        } else {
            (0, 0)
        };
        next.clear();
        src.prefetch(&runs, (level == 0).then_some(start))?;
        for &(run_start, run_end) in &runs {
            let mut p = run_start;
            while p < run_end {
                let count = (run_end - p).min(MAX_READ_ENTRIES);
                src.read(p, count, &mut buf)?;
                if buf.len() as u64 != count {
                    return Err(MarquetError::InvalidArgument(format!(
                        "entry source returned {} entries for a read of {count}",
                        buf.len()
                    )));
                }
                for (pos, e) in (p..).zip(&buf) {
                    if level == 0 {
                        if e.index >= nrows {
                            return Err(violation(format!(
                                "leaf entry {pos} index {} >= nrows {nrows}",
                                e.index
                            )));
                        }
                        if intersects(&e.bbox(), query) {
                            on_leaf(e);
                        }
                        continue;
                    }
                    // pos − start < n_level, so the product stays below n_(level−1) + M.
                    let expected = lower_start.saturating_add((pos - start).saturating_mul(m));
                    if e.index != expected {
                        return Err(violation(format!(
                            "internal entry {pos} index {} != {expected}",
                            e.index
                        )));
                    }
                    if intersects(&e.bbox(), query) {
                        let end = lower_end.min(expected.saturating_add(m));
                        match next.last_mut() {
                            Some(last) if last.1 == expected => last.1 = end,
                            _ => next.push((expected, end)),
                        }
                    }
                }
                p += count;
            }
        }
        if level == 0 || next.is_empty() {
            break;
        }
        std::mem::swap(&mut runs, &mut next);
        level -= 1;
    }
    Ok(())
}

/// A problem [`verify`] found in a tree whose header checks passed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TreeFinding {
    /// An internal entry's index is not the position of its first child.
    InternalIndex {
    /// Position of the entry in the dataset (root = 0).
        pos: u64,
        /// The index stored.
        found: u64,
        /// `start_(k−1) + i·M`, the position of its first child.
        expected: u64,
    },
    /// An internal entry's box is not exactly the union of its children's boxes.
    InternalBox {
    /// Position of the entry in the dataset (root = 0).
        pos: u64,
    },
    /// A leaf's index is not a row below `nrows`.
    LeafRowOutOfRange {
    /// Position of the entry in the dataset (root = 0).
        pos: u64,
        /// The row the leaf names.
        row: u64,
        /// The table's `NROWS`.
        nrows: u64,
    },
    /// A leaf's box does not contain its row's geometry box.
    LeafBoxMissesGeometry {
    /// Position of the entry in the dataset (root = 0).
        pos: u64,
        /// The row the leaf names.
        row: u64,
    },
    /// A leaf refers to a row whose geometry is null or empty.
    LeafForNullOrEmptyRow {
    /// Position of the entry in the dataset (root = 0).
        pos: u64,
        /// The row the leaf names.
        row: u64,
    },
    /// A row has more than one leaf.
    DuplicateRow {
        /// The row named twice.
        row: u64,
        /// Position of the second leaf naming it.
        pos: u64,
    },
    /// A non-null, non-empty row has no leaf.
    MissingRow {
        /// The row without a leaf.
        row: u64,
    },
    /// `num_items` differs from the number of non-null, non-empty rows.
    ItemCount {
        /// The `num_items` attribute.
        num_items: u64,
        /// Rows in `[0, NROWS)` with a non-null, non-empty geometry.
        rows: u64,
    },
    /// More findings were left out after [`MAX_FINDINGS`].
    Truncated,
}

impl fmt::Display for TreeFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TreeFinding::InternalIndex {
                pos,
                found,
                expected,
            } => {
                write!(f, "internal entry {pos} index {found} != {expected}")
            }
            TreeFinding::InternalBox { pos } => {
                write!(
                    f,
                    "internal entry {pos} box is not the union of its children"
                )
            }
            TreeFinding::LeafRowOutOfRange { pos, row, nrows } => {
                write!(f, "leaf entry {pos} index {row} >= nrows {nrows}")
            }
            TreeFinding::LeafBoxMissesGeometry { pos, row } => {
                write!(
                    f,
                    "leaf entry {pos} box does not contain the geometry of row {row}"
                )
            }
            TreeFinding::LeafForNullOrEmptyRow { pos, row } => {
                write!(
                    f,
                    "leaf entry {pos} refers to row {row}, whose geometry is null or empty"
                )
            }
            TreeFinding::DuplicateRow { row, pos } => {
                write!(f, "row {row} has a second leaf at entry {pos}")
            }
            TreeFinding::MissingRow { row } => write!(f, "row {row} has no leaf"),
            TreeFinding::ItemCount { num_items, rows } => {
                write!(
                    f,
                    "num_items {num_items} but {rows} rows are non-null and non-empty"
                )
            }
            TreeFinding::Truncated => write!(f, "more findings not shown"),
        }
    }
}

struct Findings(Vec<TreeFinding>);

impl Findings {
    fn push(&mut self, f: TreeFinding) {
        if self.0.len() < MAX_FINDINGS {
            self.0.push(f);
        } else if self.0.len() == MAX_FINDINGS {
            self.0.push(TreeFinding::Truncated);
        }
    }
}

/// Does leaf box `l` contain geometry box `g` within `tol`? A wrapping `g` needs a leaf
/// spanning −180..180 (HEP002 §10.4, ruling R8).
fn leaf_contains(l: &Entry, g: &BBox, tol: f64) -> bool {
    let x_ok = if is_wrapping(g) {
        l.xmin <= -180.0 + tol && l.xmax >= 180.0 - tol
    } else {
        l.xmin <= g.xmin + tol && l.xmax >= g.xmax - tol
    };
    x_ok && l.ymin <= g.ymin + tol && l.ymax >= g.ymax - tol
}

/// Check a whole tree for a validator (HEP002 §12 requirement 16, §10.4).
///
/// Errors (the tree cannot be checked) are the header checks of [`search`]. Otherwise the
/// result lists findings, at most [`MAX_FINDINGS`] (then [`TreeFinding::Truncated`]); empty
/// means the tree is correct: every internal entry holds its prescribed index and exactly the
/// union of its children's boxes, every leaf refers to a row below `nrows` whose geometry its
/// box contains (within `tolerance`, ruling R8), and every non-null, non-empty row has
/// exactly one leaf. Leaf order is not checked (ruling R13).
///
/// `row_box(r)` is called once for each row `r` in `0..nrows`, in ascending order, and
/// returns the row's geometry box, or `None` for a null or empty geometry.
pub fn verify(
    entries: &[Entry],
    num_items: u64,
    node_size: u16,
    nrows: u64,
    tolerance: f64,
    mut row_box: impl FnMut(u64) -> Result<Option<BBox>>,
) -> Result<Vec<TreeFinding>> {
    let layout = check_header(entries.len() as u64, num_items, node_size, nrows)?;
    let mut out = Findings(Vec::new());
    // All positions are < T ≤ entries.len(), so the casts below are lossless.
    for k in 1..layout.num_levels() {
        for i in 0..layout.sizes[k] {
            let pos = layout.starts[k] + i;
            let Some(children) = layout.children(k, i) else {
                continue;
            };
            let e = &entries[pos as usize];
            if e.index != children.start {
                out.push(TreeFinding::InternalIndex {
                    pos,
                    found: e.index,
                    expected: children.start,
                });
            }
            let mut union = Entry {
                xmin: f64::INFINITY,
                ymin: f64::INFINITY,
                xmax: f64::NEG_INFINITY,
                ymax: f64::NEG_INFINITY,
                index: 0,
            };
            for c in &entries[children.start as usize..children.end as usize] {
                union.expand(c);
            }
            if !e.same_box(&union) {
                out.push(TreeFinding::InternalBox { pos });
            }
        }
    }
    let leaf_start = layout.leaf_start();
    let mut leaves: Vec<(u64, u64)> = Vec::new();
    for pos in leaf_start..layout.total {
        let row = entries[pos as usize].index;
        if row >= nrows {
            out.push(TreeFinding::LeafRowOutOfRange { pos, row, nrows });
        } else {
            leaves.push((row, pos));
        }
    }
    leaves.sort_unstable();
    let mut li = 0;
    let mut item_rows = 0u64;
    for row in 0..nrows {
        let g = row_box(row)?.filter(|b| !b.is_empty());
        let first = li;
        while li < leaves.len() && leaves[li].0 == row {
            li += 1;
        }
        let here = &leaves[first..li];
        match g {
            None => {
                for &(_, pos) in here {
                    out.push(TreeFinding::LeafForNullOrEmptyRow { pos, row });
                }
            }
            Some(g) => {
                item_rows += 1;
                if here.is_empty() {
                    out.push(TreeFinding::MissingRow { row });
                }
                for (j, &(_, pos)) in here.iter().enumerate() {
                    if j > 0 {
                        out.push(TreeFinding::DuplicateRow { row, pos });
                    }
                    if !leaf_contains(&entries[pos as usize], &g, tolerance) {
                        out.push(TreeFinding::LeafBoxMissesGeometry { pos, row });
                    }
                }
            }
        }
    }
    if item_rows != num_items {
        out.push(TreeFinding::ItemCount {
            num_items,
            rows: item_rows,
        });
    }
    Ok(out.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spatial::with_path;

    fn pt(x: f64, y: f64) -> BBox {
        BBox::xy(x, y, x, y)
    }

    fn msg(r: Result<impl fmt::Debug>) -> String {
        r.expect_err("expected an error").to_string()
    }

    #[test]
    fn layout_of_the_lakes_example() {
        // HEP002 §15.2: N = 10,000, M = 16.
        assert_eq!(
            level_sizes(10_000, 16).unwrap(),
            vec![10_000, 625, 40, 3, 1]
        );
        let l = Layout::try_new(10_000, 16).unwrap();
        assert_eq!(l.total, 10_669);
        assert_eq!(total_entries(10_000, 16).unwrap(), 10_669);
        assert_eq!(l.starts, vec![669, 44, 4, 1, 0]);
        assert_eq!(level_starts(&l.sizes).unwrap(), l.starts);
        assert_eq!(l.leaf_start(), 669);
        assert_eq!(l.children(4, 0), Some(1..4));
        assert_eq!(l.children(3, 2), Some(36..44));
        assert_eq!(l.children(1, 624), Some(669 + 624 * 16..10_669));
        assert_eq!(l.children(1, 625), None);
        assert_eq!(l.children(0, 0), None);
    }

    #[test]
    fn layout_small_and_exact_multiples() {
        assert_eq!(level_sizes(0, 16).unwrap(), Vec::<u64>::new());
        assert_eq!(total_entries(0, 16).unwrap(), 0);
        assert_eq!(level_sizes(1, 16).unwrap(), vec![1, 1]);
        assert_eq!(Layout::try_new(1, 16).unwrap().starts, vec![1, 0]);
        assert_eq!(total_entries(1, 2).unwrap(), 2);
        assert_eq!(level_sizes(16, 16).unwrap(), vec![16, 1]);
        assert_eq!(level_sizes(17, 16).unwrap(), vec![17, 2, 1]);
        assert_eq!(level_sizes(256, 16).unwrap(), vec![256, 16, 1]);
        assert_eq!(level_sizes(8, 2).unwrap(), vec![8, 4, 2, 1]);
        assert_eq!(level_sizes(9, 3).unwrap(), vec![9, 3, 1]);
        assert_eq!(total_entries(9, 3).unwrap(), 13);
        assert_eq!(level_sizes(u64::MAX, 2).unwrap().len(), 65);
        assert_eq!(
            msg(total_entries(u64::MAX, 2)),
            ": HEP002 §17: the tree has more than 2^64 entries"
        );
        assert_eq!(
            msg(level_sizes(5, 1)),
            ": HEP002 §17: node_size 1 is less than 2"
        );
        assert_eq!(
            msg(level_sizes(0, 0)),
            ": HEP002 §17: node_size 0 is less than 2"
        );
    }

    #[test]
    fn build_exact_small_tree() {
        // Four points on the diagonal, node size 2: Hilbert order is along the diagonal.
        let items = [
            (pt(3.0, 3.0), 10),
            (pt(0.0, 0.0), 11),
            (pt(2.0, 2.0), 12),
            (pt(1.0, 1.0), 13),
        ];
        let e = build(&items, 2).unwrap();
        let exp = |x0: f64, y0: f64, x1: f64, y1: f64, index: u64| Entry {
            xmin: x0,
            ymin: y0,
            xmax: x1,
            ymax: y1,
            index,
        };
        assert_eq!(
            e,
            vec![
                exp(0.0, 0.0, 3.0, 3.0, 1),
                exp(0.0, 0.0, 1.0, 1.0, 3),
                exp(2.0, 2.0, 3.0, 3.0, 5),
                exp(0.0, 0.0, 0.0, 0.0, 11),
                exp(1.0, 1.0, 1.0, 1.0, 13),
                exp(2.0, 2.0, 2.0, 2.0, 12),
                exp(3.0, 3.0, 3.0, 3.0, 10),
            ]
        );
        assert_eq!(
            search(&e[..], 4, 2, 14, &BBox::xy(0.5, 0.5, 2.0, 2.0)).unwrap(),
            vec![12, 13]
        );
        let f = verify(&e, 4, 2, 14, 0.0, |r| {
            Ok(items.iter().find(|i| i.1 == r).map(|i| i.0))
        })
        .unwrap();
        assert!(f.is_empty(), "{f:?}");
    }

    #[test]
    fn build_one_and_zero_items() {
        let b = BBox::xy(1.0, 2.0, 3.0, 4.0);
        let e = build(&[(b, 7)], 16).unwrap();
        assert_eq!(e, vec![Entry::new(&b, 1), Entry::new(&b, 7)]);
        assert_eq!(search(&e[..], 1, 16, 8, &pt(2.0, 3.0)).unwrap(), vec![7]);
        assert!(search(&e[..], 1, 16, 8, &pt(5.0, 3.0)).unwrap().is_empty());
        assert!(build(&[], 16).unwrap().is_empty());
        let empty: &[Entry] = &[];
        assert!(search(empty, 0, 16, 0, &pt(0.0, 0.0)).unwrap().is_empty());
    }

    #[test]
    fn ties_are_broken_by_row() {
        let b = pt(1.0, 1.0);
        let e = build(&[(b, 5), (b, 2), (b, 9), (pt(0.0, 0.0), 1)], 16).unwrap();
        let leaves: Vec<u64> = e[1..].iter().map(|e| e.index).collect();
        assert_eq!(leaves, vec![1, 2, 5, 9]);
    }

    #[test]
    fn build_rejects_bad_items() {
        let ok = pt(0.0, 0.0);
        assert_eq!(
            msg(build(&[(ok, 0)], 1)),
            "invalid argument: r-tree node_size 1 is less than 2"
        );
        assert_eq!(
            msg(build(&[(ok, 0), (BBox::EMPTY, 4)], 16)),
            "invalid argument: r-tree item 1 (row 4) has an empty box"
        );
        assert_eq!(
            msg(build(&[(BBox::xy(f64::NAN, 0.0, 1.0, 1.0), 3)], 16)),
            "invalid argument: r-tree item 0 (row 3) has a NaN bound"
        );
        assert_eq!(
            msg(build(&[(BBox::xy(170.0, 0.0, -170.0, 1.0), 3)], 16)),
            "invalid argument: r-tree item 0 (row 3) has xmin > xmax or ymin > ymax"
        );
    }

    fn tree(n: u64, m: u16) -> Vec<Entry> {
        let items: Vec<(BBox, u64)> = (0..n)
            .map(|i| (pt((i % 100) as f64, (i / 100) as f64), i))
            .collect();
        build(&items, m).unwrap()
    }

    #[test]
    fn header_checks() {
        let e = tree(20, 4);
        let all = BBox::xy(-1.0, -1.0, 1e9, 1e9);
        assert_eq!(
            search(&e[..], 20, 4, 20, &all).unwrap(),
            (0..20).collect::<Vec<_>>()
        );
        assert_eq!(
            msg(search(&e[..], 20, 1, 20, &all)),
            ": HEP002 §17: node_size 1 is less than 2"
        );
        assert_eq!(
            msg(search(&e[..], 20, 4, 19, &all)),
            ": HEP002 §17: num_items 20 exceeds nrows 19"
        );
        assert_eq!(
            msg(search(&e[..e.len() - 1], 20, 4, 20, &all)),
            ": HEP002 §17: num_items 20 with node_size 4 needs 28 entries but the dataset has 27"
        );
        // A larger node size needs fewer entries: the header passes, the descent catches it.
        assert_eq!(
            msg(search(&e[..], 20, 16, 20, &all)),
            ": HEP002 §17: internal entry 2 index 7 != 19"
        );
        let err = search(&e[..], u64::MAX, 2, u64::MAX, &all).unwrap_err();
        assert_eq!(
            err.to_string(),
            ": HEP002 §17: the tree has more than 2^64 entries"
        );
        assert_eq!(
            with_path(err, "/t/SEARCH_INDEXES/g__rtree").to_string(),
            "/t/SEARCH_INDEXES/g__rtree: HEP002 §17: the tree has more than 2^64 entries"
        );
        // Extra entries past T are ignored.
        let mut longer = e.clone();
        longer.push(Entry::new(&pt(0.0, 0.0), u64::MAX));
        assert_eq!(search(&longer[..], 20, 4, 20, &all).unwrap().len(), 20);
    }

    #[test]
    fn descent_checks() {
        let all = BBox::xy(-1.0, -1.0, 1e9, 1e9);
        // 20 items, M = 4: levels 20, 5, 2, 1 → starts 8, 3, 1, 0; T = 28.
        let good = tree(20, 4);
        let mut e = good.clone();
        e[3].index = 7;
        assert_eq!(
            msg(search(&e[..], 20, 4, 20, &all)),
            ": HEP002 §17: internal entry 3 index 7 != 8"
        );
        // Cycles: an entry pointing back at the root or at itself.
        e = good.clone();
        e[1].index = 0;
        assert_eq!(
            msg(search(&e[..], 20, 4, 20, &all)),
            ": HEP002 §17: internal entry 1 index 0 != 3"
        );
        e = good.clone();
        e[0].index = 0;
        assert_eq!(
            msg(search(&e[..], 20, 4, 20, &all)),
            ": HEP002 §17: internal entry 0 index 0 != 1"
        );
        e = good.clone();
        e[27].index = 20;
        assert_eq!(
            msg(search(&e[..], 20, 4, 20, &all)),
            ": HEP002 §17: leaf entry 27 index 20 >= nrows 20"
        );
        e[27].index = u64::MAX;
        assert_eq!(
            msg(search(&e[..], 20, 4, 20, &all)),
            ": HEP002 §17: leaf entry 27 index 18446744073709551615 >= nrows 20"
        );
        // Entries that are read are checked even when their box misses the query.
        e = good.clone();
        assert_eq!(e[8].index, 0);
        e[9].index = 20;
        assert_eq!(
            msg(search(&e[..], 20, 4, 20, &pt(0.0, 0.0))),
            ": HEP002 §17: leaf entry 9 index 20 >= nrows 20"
        );
        // A garbage box is harmless: it only changes candidates.
        e = good.clone();
        e[2] = Entry {
            xmin: f64::NAN,
            ymin: f64::NAN,
            xmax: f64::NAN,
            ymax: f64::NAN,
            index: e[2].index,
        };
        assert_eq!(search(&e[..], 20, 4, 20, &all).unwrap().len(), 16);
        // Duplicate rows in leaves are reported once.
        e = good.clone();
        e[9].index = e[8].index;
        assert_eq!(search(&e[..], 20, 4, 20, &all).unwrap().len(), 19);
    }

    /// Counts reads, to prove the tree is read in runs.
    struct Counting<'a> {
        entries: &'a [Entry],
        reads: Vec<(u64, u64)>,
    }

    impl EntrySource for Counting<'_> {
        fn len(&self) -> u64 {
            self.entries.len() as u64
        }
        fn read(&mut self, start: u64, count: u64, out: &mut Vec<Entry>) -> Result<()> {
            self.reads.push((start, count));
            let mut s = self.entries;
            s.read(start, count, out)
        }
    }

    #[test]
    fn reads_whole_levels_in_runs() {
        let items: Vec<(BBox, u64)> = (0..10_000u64)
            .map(|i| (pt((i % 100) as f64, (i / 100) as f64), i))
            .collect();
        let e = build(&items, 16).unwrap();
        assert_eq!(e.len(), 10_669);
        let mut src = Counting {
            entries: &e,
            reads: Vec::new(),
        };
        let rows = search(
            &mut src,
            10_000,
            16,
            10_000,
            &BBox::xy(-1.0, -1.0, 100.0, 100.0),
        )
        .unwrap();
        assert_eq!(rows.len(), 10_000);
        assert_eq!(
            src.reads,
            vec![(0, 1), (1, 3), (4, 40), (44, 625), (669, 10_000)]
        );
        // A point query reads one node per level.
        src.reads.clear();
        let rows = search(&mut src, 10_000, 16, 10_000, &pt(42.0, 17.0)).unwrap();
        assert_eq!(rows, vec![1742]);
        let read: u64 = src.reads.iter().map(|&(_, c)| c).sum();
        assert!(read <= 1 + 3 + 4 * 16, "{:?}", src.reads);
    }

    struct Short<'a>(&'a [Entry]);
    impl EntrySource for Short<'_> {
        fn len(&self) -> u64 {
            self.0.len() as u64
        }
        fn read(&mut self, _start: u64, _count: u64, out: &mut Vec<Entry>) -> Result<()> {
            out.clear();
            Ok(())
        }
    }

    #[test]
    fn misbehaving_source_is_an_error() {
        let e = tree(5, 2);
        assert_eq!(
            msg(search(Short(&e), 5, 2, 5, &pt(0.0, 0.0))),
            "invalid argument: entry source returned 0 entries for a read of 1"
        );
        let mut s: &[Entry] = &e;
        let mut out = Vec::new();
        assert!(s.read(e.len() as u64, 1, &mut out).is_err());
        assert!(s.read(u64::MAX, 2, &mut out).is_err());
        assert!(s.read(0, e.len() as u64, &mut out).is_ok());
    }

    fn row_boxes(n: u64) -> impl Fn(u64) -> Result<Option<BBox>> {
        move |r| Ok((r < n).then(|| pt((r % 100) as f64, (r / 100) as f64)))
    }

    #[test]
    fn verify_findings() {
        let good = tree(20, 4);
        assert_eq!(
            verify(&good, 20, 4, 20, 0.0, row_boxes(20)).unwrap(),
            vec![]
        );
        // Extra rows without geometry are fine.
        assert_eq!(
            verify(&good, 20, 4, 25, 0.0, row_boxes(20)).unwrap(),
            vec![]
        );

        let mut e = good.clone();
        e[3].index = 7;
        e[1].xmax += 1.0;
        let f = verify(&e, 20, 4, 20, 0.0, row_boxes(20)).unwrap();
        assert_eq!(
            f,
            vec![
                TreeFinding::InternalIndex {
                    pos: 3,
                    found: 7,
                    expected: 8
                },
                TreeFinding::InternalBox { pos: 1 }
            ]
        );
        assert_eq!(f[0].to_string(), "internal entry 3 index 7 != 8");

        e = good.clone();
        let (r8, r9) = (e[8].index, e[9].index);
        e[9].index = r8;
        let f = verify(&e, 20, 4, 20, 0.0, row_boxes(20)).unwrap();
        assert_eq!(f.len(), 3, "{f:?}");
        assert!(f.contains(&TreeFinding::DuplicateRow { row: r8, pos: 9 }));
        assert!(
            f.contains(&TreeFinding::LeafBoxMissesGeometry { pos: 9, row: r8 })
                || good[9].bbox() == good[8].bbox()
        );
        assert!(f.contains(&TreeFinding::MissingRow { row: r9 }));

        let f = verify(&good, 20, 4, 21, 0.0, row_boxes(21)).unwrap();
        assert_eq!(
            f,
            vec![
                TreeFinding::MissingRow { row: 20 },
                TreeFinding::ItemCount {
                    num_items: 20,
                    rows: 21
                }
            ]
        );
        assert_eq!(
            f[1].to_string(),
            "num_items 20 but 21 rows are non-null and non-empty"
        );

        let f = verify(&good, 20, 4, 20, 0.0, |r| {
            Ok((r != 5).then(|| pt((r % 100) as f64, 0.0)))
        })
        .unwrap();
        let pos5 = 8 + good[8..].iter().position(|e| e.index == 5).unwrap() as u64;
        assert_eq!(
            f,
            vec![
                TreeFinding::LeafForNullOrEmptyRow { pos: pos5, row: 5 },
                TreeFinding::ItemCount {
                    num_items: 20,
                    rows: 19
                }
            ]
        );

        // Boxes grown by more than the tolerance are reported; within it, accepted.
        let grown = |d: f64| {
            move |r: u64| {
                Ok(Some(BBox::xy(
                    (r % 100) as f64 - d,
                    0.0,
                    (r % 100) as f64,
                    0.0,
                )))
            }
        };
        assert!(verify(&good, 20, 4, 20, 1e-9, grown(1e-10))
            .unwrap()
            .is_empty());
        assert_eq!(
            verify(&good, 20, 4, 20, 1e-9, grown(1e-6)).unwrap().len(),
            20
        );

        e = good.clone();
        e[27].index = 99;
        let f = verify(&e, 20, 4, 20, 0.0, row_boxes(20)).unwrap();
        assert_eq!(
            f[0],
            TreeFinding::LeafRowOutOfRange {
                pos: 27,
                row: 99,
                nrows: 20
            }
        );

        // Header problems are errors; callback errors propagate; findings are capped.
        assert!(verify(&good, 20, 1, 20, 0.0, row_boxes(20)).is_err());
        assert!(verify(&good, 21, 4, 21, 0.0, row_boxes(21)).is_err());
        assert!(
            verify(&good, 20, 4, 20, 0.0, |_| Err(MarquetError::Unsupported(
                "x".into()
            )))
            .is_err()
        );
        let f = verify(&good, 20, 4, 1000, 0.0, |_| Ok(Some(pt(-5.0, -5.0)))).unwrap();
        assert_eq!(f.len(), MAX_FINDINGS + 1);
        assert_eq!(f[MAX_FINDINGS], TreeFinding::Truncated);
    }

    #[test]
    fn verify_antimeridian_leaf() {
        // A geometry that crosses ±180 has a wrapping geometry box and a −180..180 leaf.
        let leaf = BBox::xy(-180.0, 10.0, 180.0, 20.0);
        let e = build(&[(leaf, 0)], 16).unwrap();
        let wrap = BBox::xy(170.0, 10.0, -170.0, 20.0);
        assert!(verify(&e, 1, 16, 1, 1e-9, |_| Ok(Some(wrap)))
            .unwrap()
            .is_empty());
        let narrow = build(&[(BBox::xy(-170.0, 10.0, 170.0, 20.0), 0)], 16).unwrap();
        assert_eq!(
            verify(&narrow, 1, 16, 1, 1e-9, |_| Ok(Some(wrap)))
                .unwrap()
                .len(),
            1
        );
        // A wrapping query finds it.
        assert_eq!(
            search(&e[..], 1, 16, 1, &BBox::xy(179.0, 15.0, -179.0, 16.0)).unwrap(),
            vec![0]
        );
    }

    #[test]
    fn entry_is_forty_bytes() {
        assert_eq!(std::mem::size_of::<Entry>(), 40);
        assert_eq!(std::mem::align_of::<Entry>(), 8);
    }
}
