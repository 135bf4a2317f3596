//! Marquet's search-index datasets on HDF5 (HEP002 §10.1–10.4): building, rebuilding in
//! place, maintaining on append and truncation, dropping, and opening them for queries with
//! every check a consumer owes (HEP001 §12.2 validity tokens, HEP002 §17).
//!
//! * `BLOCK_BBOX` (§10.3): one entry per row block — `{xmin, ymin, [zmin], [mmin], xmax,
//!   ymax, [zmax], [mmax]: f64, n, null_count, empty_count: u64}`, Z/M fields only when every
//!   non-empty geometry of the column has that dimension (ruling R11) — and the attribute
//!   `block_length`. Extended in place on append: tokens first, then the entry of the last
//!   partial block is recomputed and entries for new blocks appended.
//! * `PACKED_RTREE` (§10.4): `{xmin, ymin, xmax, ymax: f64, index: u64}`, root first, with
//!   `node_size` (uint16) and `num_items` (uint64). Rebuilt in place on append or truncation
//!   when the table's [`RTreeOnAppend`] says so (tokens first), otherwise left stale.
//!
//! Rebuilding an index on an unchanged table is not a mutation (HEP001 §12.2): the index is
//! first disabled (its `SOURCE_GENERATION` removed), its content rewritten, and then its
//! tokens set to the current `GENERATION` and `NROWS`, so no reader ever sees a half-written
//! index that passes the validity check.

use crate::error::{MarquetError, Result};
use crate::h5::objects::{Elements, LibObjects, Objects};
use crate::h5::{self, DatasetSpec, Dtype, Field, Hid, Space};
use crate::h5col::search_index::{self as h5index, IndexInfo};
use crate::h5col::ColumnKind;
use crate::spatial::block_bbox::{self, BlockEntry, RowSummary};
use crate::spatial::geom_box::unwrap_box;
use crate::spatial::packed_rtree::{self, Entry, EntrySource, Layout};
use crate::spec::{names, BBox};

use super::{MarquetTable, RowInfo};

mod write_plan;
pub(crate) use write_plan::IndexPlan;

/// Rows scanned per read when an index is built from the column.
pub const SCAN_ROWS: u64 = 65_536;
/// Chunk length (entries) of a block bounding-box index dataset.
pub const BLOCK_INDEX_CHUNK: u64 = 1024;
/// Chunk length (entries, 40 bytes each) of an R-tree dataset.
pub const RTREE_CHUNK: u64 = 1024;
/// `SOURCE_NROWS` of an index dataset while its content is being rewritten: never equal to
/// any NROWS, so the index is stale until the real tokens are written (docs/RULINGS-LOCAL.md L13).
pub const DISABLED_SOURCE_NROWS: u64 = h5index::DISABLED_SOURCE_NROWS;

/// What an append or truncation does to a valid packed R-tree (HEP002 §10.4: it cannot be
/// updated incrementally).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RTreeOnAppend {
    /// Rebuild it in place, tokens first (the default).
    #[default]
    Rebuild,
    /// Leave it to be disabled by its validity tokens; [`MarquetTable::rebuild_indexes`]
    /// restores it later.
    LeaveStale,
}

/// The two index kinds HEP002 registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpatialIndexKind {
    /// `KIND = BLOCK_BBOX`: one box and counts per row block (HEP002 §10.3).
    BlockBBox,
    /// `KIND = PACKED_RTREE`: the packed Hilbert R-tree (HEP002 §10.4).
    PackedRTree,
}

impl SpatialIndexKind {
    /// The KIND value.
    pub fn kind(&self) -> &'static str {
        match self {
            SpatialIndexKind::BlockBBox => names::KIND_BLOCK_BBOX,
            SpatialIndexKind::PackedRTree => names::KIND_PACKED_RTREE,
        }
    }
    pub(crate) fn from_kind(k: Option<&str>) -> Option<SpatialIndexKind> {
        match k {
            Some(names::KIND_BLOCK_BBOX) => Some(SpatialIndexKind::BlockBBox),
            Some(names::KIND_PACKED_RTREE) => Some(SpatialIndexKind::PackedRTree),
            _ => None,
        }
    }
    /// The dataset name we give a new index of this kind on `column`.
    pub fn default_name(&self, column: &str) -> String {
        match self {
            SpatialIndexKind::BlockBBox => format!("{column}__block_bbox"),
            SpatialIndexKind::PackedRTree => format!("{column}__rtree"),
        }
    }
}

/// A Marquet index found on a geometry column.
#[derive(Debug, Clone, PartialEq)]
pub struct SpatialIndex {
    /// Which of the two kinds.
    pub kind: SpatialIndexKind,
    /// Its path, column and validity tokens.
    pub info: IndexInfo,
    /// The validity check of HEP001 §12.2 passed.
    pub valid: bool,
}

// ------------------------------------------------------------------ datatypes

/// The compound of a block bounding-box index (HEP002 §10.3).
pub fn block_bbox_dtype(z: bool, m: bool) -> Dtype {
    let mut fields = Vec::new();
    let mut off = 0;
    for n in super::types::box_field_names(z, m) {
        fields.push(Field { name: n.into(), offset: off, dtype: Dtype::F64 });
        off += 8;
    }
    for n in ["n", "null_count", "empty_count"] {
        fields.push(Field { name: n.into(), offset: off, dtype: Dtype::U64 });
        off += 8;
    }
    Dtype::Compound { size: off, fields }
}

/// The compound of a packed R-tree (HEP002 §10.4).
pub fn rtree_dtype() -> Dtype {
    let mut fields: Vec<Field> = ["xmin", "ymin", "xmax", "ymax"]
        .iter()
        .enumerate()
        .map(|(i, n)| Field { name: (*n).into(), offset: 8 * i, dtype: Dtype::F64 })
        .collect();
    fields.push(Field { name: "index".into(), offset: 32, dtype: Dtype::U64 });
    Dtype::Compound { size: 40, fields }
}

fn encode_blocks(entries: &[BlockEntry], z: bool, m: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(entries.len() * block_bbox_dtype(z, m).size());
    for e in entries {
        out.extend_from_slice(&super::types::bbox_bytes(&e.bbox, z, m));
        for v in [e.n, e.null_count, e.empty_count] {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    out
}

/// Block entries from bytes in [`block_bbox_dtype`]`(z, m)`'s layout: the box fields of
/// [`super::types::box_field_names`], each a little-endian f64 in that order, then the
/// three counts. Each field's setter is resolved once: a cold query decodes a whole block
/// index (977 entries for 1,000,000 rows), and matching field names per entry cost ten
/// times the rest (issue #33).
fn decode_blocks(bytes: &[u8], z: bool, m: bool) -> Vec<BlockEntry> {
    let word = |e: &[u8], i: usize| <[u8; 8]>::try_from(&e[8 * i..8 * i + 8]).unwrap_or([0; 8]);
    if !z && !m {
        // The usual layout, {xmin, ymin, xmax, ymax, n, null_count, empty_count} (the order
        // of `box_field_names`): read at fixed offsets, without a setter call per field.
        // Every cold query decodes the whole index (977 entries for a million points).
        return bytes
            .chunks_exact(56)
            .map(|e| {
                let f = |i| f64::from_le_bytes(word(e, i));
                let u = |i| u64::from_le_bytes(word(e, i));
                BlockEntry { bbox: BBox::xy(f(0), f(1), f(2), f(3)), n: u(4), null_count: u(5), empty_count: u(6) }
            })
            .collect();
    }
    let setters: Vec<fn(&mut BBox, f64)> = super::types::box_field_names(z, m).into_iter().filter_map(super::types::box_field_setter).collect();
    let nb = setters.len() * 8;
    let u = |e: &[u8], i: usize| u64::from_le_bytes(e[nb + 8 * i..nb + 8 * i + 8].try_into().unwrap_or([0; 8]));
    bytes
        .chunks_exact(nb + 24)
        .map(|e| {
            let mut bbox = BBox::EMPTY;
            for (set, v) in setters.iter().zip(e.chunks_exact(8)) {
                set(&mut bbox, f64::from_le_bytes(v.try_into().unwrap_or([0; 8])));
            }
            BlockEntry { bbox, n: u(e, 0), null_count: u(e, 1), empty_count: u(e, 2) }
        })
        .collect()
}

fn encode_entries(entries: &[Entry]) -> Vec<u8> {
    let mut out = Vec::with_capacity(entries.len() * 40);
    for e in entries {
        for v in [e.xmin, e.ymin, e.xmax, e.ymax] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&e.index.to_le_bytes());
    }
    out
}

fn decode_entries(bytes: &[u8], out: &mut Vec<Entry>) {
    out.clear();
    out.extend(bytes.chunks_exact(ENTRY_BYTES).map(decode_entry));
}

/// Bytes of one stored R-tree entry (four doubles and a uint64, little-endian).
const ENTRY_BYTES: usize = 40;

/// One stored R-tree entry (`e` is [`ENTRY_BYTES`] long).
fn decode_entry(e: &[u8]) -> Entry {
    let f = |i: usize| f64::from_le_bytes(e[8 * i..8 * i + 8].try_into().unwrap_or([0; 8]));
    Entry { xmin: f(0), ymin: f(1), xmax: f(2), ymax: f(3), index: u64::from_le_bytes(e[32..40].try_into().unwrap_or([0; 8])) }
}

/// Which of the block-index fields a stored compound has: `Some((z, m))` when it has every
/// required field (by name, HEP002 §10.3: "consumers identify all fields by name") with
/// float box fields and integer counts.
fn block_layout(dt: &Dtype) -> Option<(bool, bool)> {
    let Dtype::Compound { fields, .. } = dt else { return None };
    let has = |n: &str, float: bool| {
        fields.iter().any(|f| {
            f.name == n
                && if float { matches!(f.dtype, Dtype::Float { .. }) } else { matches!(f.dtype, Dtype::Int { signed: false, .. }) }
        })
    };
    let req = ["xmin", "ymin", "xmax", "ymax"].iter().all(|n| has(n, true))
        && ["n", "null_count", "empty_count"].iter().all(|n| has(n, false));
    if !req {
        return None;
    }
    Some((has("zmin", true) && has("zmax", true), has("mmin", true) && has("mmax", true)))
}

fn rtree_layout_ok(dt: &Dtype) -> bool {
    let Dtype::Compound { fields, .. } = dt else { return false };
    let has = |n: &str, float: bool| {
        fields.iter().any(|f| {
            f.name == n
                && if float { matches!(f.dtype, Dtype::Float { .. }) } else { matches!(f.dtype, Dtype::Int { signed: false, .. }) }
        })
    };
    ["xmin", "ymin", "xmax", "ymax"].iter().all(|n| has(n, true)) && has("index", false)
}

/// A scalar integer count of any width and signedness, not negative (ruling R3: the
/// validator accepts a signed `node_size` or `block_length` with a warning, so do readers).
fn scalar_uint_at(o: &dyn Objects, path: &str, name: &str) -> Result<Option<u64>> {
    Ok(o.attr(path, name)?.and_then(|a| match (&a.dtype, &a.space) {
        (Dtype::Int { .. }, Space::Scalar) => a.as_u64(),
        _ => None,
    }))
}
fn scalar_uint(id: hdf5_sys::h5i::hid_t, name: &str) -> Result<Option<u64>> {
    Ok(h5::attr_read(id, name)?.and_then(|a| match (&a.dtype, &a.space) {
        (Dtype::Int { .. }, Space::Scalar) => a.as_u64(),
        _ => None,
    }))
}

// ------------------------------------------------------------------ row summaries

fn summary(r: &RowInfo) -> RowSummary {
    match r {
        RowInfo::Null => RowSummary::Null,
        RowInfo::Geometry(g) if g.is_empty => RowSummary::Empty,
        RowInfo::Geometry(g) => RowSummary::Geometry(item_box(&g.bbox)),
    }
}

/// The box of a non-empty geometry as an index item: never wrapping (−180..180 instead,
/// HEP002 §10.4, ruling R8), and an axis without any non-NaN ordinate made unbounded so the
/// row is never skipped.
fn item_box(b: &BBox) -> BBox {
    let mut u = unwrap_box(b);
    let ordered = |lo: f64, hi: f64| matches!(lo.partial_cmp(&hi), Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal));
    if !ordered(u.xmin, u.xmax) {
        u.xmin = f64::NEG_INFINITY;
        u.xmax = f64::INFINITY;
    }
    if !ordered(u.ymin, u.ymax) {
        u.ymin = f64::NEG_INFINITY;
        u.ymax = f64::INFINITY;
    }
    u
}

/// Z/M presence over rows: every non-empty geometry has Z (resp. M), ruling R11.
fn dims_of(rows: &[RowInfo], z: &mut bool, m: &mut bool, any: &mut bool) {
    for r in rows {
        if let RowInfo::Geometry(g) = r {
            if !g.is_empty {
                *any = true;
                *z &= g.geometry_type.dims.has_z();
                *m &= g.geometry_type.dims.has_m();
            }
        }
    }
}

/// The body of [`MarquetTable::scan_rows`].
pub(crate) fn scan_rows(this: &MarquetTable, col: &str, start: u64, end: u64) -> Result<Vec<RowInfo>> {
    let mut out = Vec::with_capacity(end.saturating_sub(start).min(1 << 24) as usize);
    let mut s = start;
    while s < end {
        let e = (s + SCAN_ROWS).min(end);
        out.extend(this.row_infos(col, s, e)?);
        s = e;
    }
    Ok(out)
}
/// The smallest block length the cloud layout gives a block index (issue #34): 128 point
/// rows are 2 KiB, two of the remote reader's 1 KiB blocks.
pub(crate) const CLOUD_MIN_BLOCK_LENGTH: u64 = 128;

/// A column's block index recomputed for the cloud layout (issue #34).
pub(crate) struct ResizedBlocks {
    /// The new block length.
    pub block_length: u64,
    /// The entries' datatype (HEP002 §10.3).
    pub dtype: Dtype,
    /// The number of entries.
    pub len: u64,
    /// The entries, little-endian in `dtype`'s layout.
    pub bytes: Vec<u8>,
}

/// The block index of column `col` (rows `[0, NROWS)`) with the smallest block length —
/// [`CLOUD_MIN_BLOCK_LENGTH`] times a power of two, at most `at_most` — whose entries, as
/// `stored_size` stores them, take at most `budget` bytes; `None` when none does.
///
/// Why (issue #34, docs/PERFORMANCE.md "The cloud layout"): a cold window over HTTP reads a
/// block index whole, then whole every block it does not skip. Shorter blocks read fewer
/// rows that a window does not want, and cost nothing while the index still lies inside the
/// bytes the open reads anyway. The rows are read in slabs of [`SCAN_ROWS`]; memory is one
/// entry per shortest block.
pub(crate) fn blocks_within(this: &MarquetTable, col: &str, at_most: u64, budget: usize, stored_size: impl Fn(&[u8], usize) -> Result<usize>) -> Result<Option<ResizedBlocks>> {
    let n = this.nrows()?;
    let (mut z, mut m, mut any) = (true, true, false);
    let mut finest = Vec::new();
    let mut s = 0;
    while s < n {
        // SCAN_ROWS is a multiple of the shortest block: every slab ends on a block boundary.
        let e = (s + SCAN_ROWS).min(n);
        let rows = this.row_infos(col, s, e)?;
        dims_of(&rows, &mut z, &mut m, &mut any);
        finest.extend(block_bbox::build_blocks(rows.iter().map(summary), CLOUD_MIN_BLOCK_LENGTH)?);
        s = e;
    }
    let (z, m) = (z && any, m && any);
    let dtype = block_bbox_dtype(z, m);
    let mut b = CLOUD_MIN_BLOCK_LENGTH;
    while b <= at_most {
        let entries = block_bbox::coarsen(&finest, (b / CLOUD_MIN_BLOCK_LENGTH) as usize);
        let bytes = encode_blocks(&entries, z, m);
        if stored_size(&bytes, dtype.size())? <= budget {
            return Ok(Some(ResizedBlocks { block_length: b, dtype, len: entries.len() as u64, bytes }));
        }
        b *= 2;
    }
    Ok(None)
}
/// The body of [`MarquetTable::spatial_indexes`].
pub(crate) fn spatial_indexes(this: &MarquetTable, col: &str) -> Result<Vec<SpatialIndex>> {
    this.geometry_column(col)?;
    this.spatial_indexes_unchecked(col)
}
/// The body of [`MarquetTable::spatial_indexes_unchecked`].
pub(crate) fn spatial_indexes_unchecked(this: &MarquetTable, col: &str) -> Result<Vec<SpatialIndex>> {
    let o = LibObjects(this.table().id());
    super::facts::TableView::of(&o, this.path(), this.is_interpretable()).spatial_indexes(col)
}
/// The body of [`MarquetTable::default_block_length`].
pub(crate) fn default_block_length(this: &MarquetTable) -> Result<u64> {
    let t = this.table();
    let mut counts = Vec::new();
    for c in t.discover_columns()? {
        match t.kind_of(&c)? {
            Some(ColumnKind::Dataset) => counts.push(t.column(&c)?.chunk_rows().unwrap_or(0)),
            Some(ColumnKind::List) => {
                let p = format!("{c}/{}", names::OFFSETS);
                let ds = h5::dataset_open(t.id(), &p)?;
                let info = h5::dataset_info(ds.id(), &t.member_path(&p))?;
                counts.push(info.chunk.and_then(|c| c.first().copied()).unwrap_or(0));
            }
            None => {}
        }
    }
    Ok(block_bbox::choose_block_length(&counts))
}
/// The body of [`MarquetTable::build_block_bbox`].
pub(crate) fn build_block_bbox(this: &MarquetTable, col: &str, block_length: Option<u64>) -> Result<String> {
    this.geometry_column(col)?;
    let existing = existing(this, col, SpatialIndexKind::BlockBBox)?;
    let b = match block_length {
        Some(0) => return Err(MarquetError::InvalidArgument("block_length must be at least 1".into())),
        Some(b) => b,
        None => this.default_block_length()?,
    };
    let g = h5index::ensure_generation(this.table())?;
    let n = this.nrows()?;
    write_block_index(this, col, existing.as_ref(), b, (g, n), false, None)
}
/// The body of [`MarquetTable::build_rtree`].
pub(crate) fn build_rtree(this: &MarquetTable, col: &str, node_size: Option<u16>) -> Result<String> {
    this.geometry_column(col)?;
    let existing = existing(this, col, SpatialIndexKind::PackedRTree)?;
    let m = node_size.unwrap_or(packed_rtree::DEFAULT_NODE_SIZE);
    if m < 2 {
        return Err(MarquetError::InvalidArgument(format!("node_size {m} is less than 2")));
    }
    let g = h5index::ensure_generation(this.table())?;
    let n = this.nrows()?;
    write_rtree(this, col, existing.as_ref(), m, (g, n), false, None)
}
/// The body of [`MarquetTable::rebuild_indexes`].
pub(crate) fn rebuild_indexes(this: &MarquetTable, col: &str) -> Result<Vec<String>> {
    rebuild_where(this, col, |_| true)
}
/// The body of [`MarquetTable::rebuild_rtrees`].
pub(crate) fn rebuild_rtrees(this: &MarquetTable, col: &str) -> Result<Vec<String>> {
    rebuild_where(this, col, |k| k == SpatialIndexKind::PackedRTree)
}
fn rebuild_where(this: &MarquetTable, col: &str, which: impl Fn(SpatialIndexKind) -> bool) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for idx in this.spatial_indexes(col)?.into_iter().filter(|i| which(i.kind)) {
        let o = h5::object_open(this.table().id(), &idx.info.path)?;
        match idx.kind {
            SpatialIndexKind::BlockBBox => {
                let b = scalar_uint(o.id(), names::BLOCK_LENGTH)?.filter(|&b| b > 0);
                drop(o);
                let g = h5index::ensure_generation(this.table())?;
                let n = this.nrows()?;
                let b = match b {
                    Some(b) => b,
                    None => this.default_block_length()?,
                };
                out.push(write_block_index(this, col, Some(&idx.info), b, (g, n), false, None)?);
            }
            SpatialIndexKind::PackedRTree => {
                let m = scalar_uint(o.id(), names::NODE_SIZE)?
                    .and_then(|m| u16::try_from(m).ok())
                    .filter(|&m| m >= 2)
                    .unwrap_or(packed_rtree::DEFAULT_NODE_SIZE);
                drop(o);
                let g = h5index::ensure_generation(this.table())?;
                let n = this.nrows()?;
                out.push(write_rtree(this, col, Some(&idx.info), m, (g, n), false, None)?);
            }
        }
    }
    Ok(out)
}
/// The body of [`MarquetTable::drop_index`].
pub(crate) fn drop_index(this: &MarquetTable, col: &str, kind: SpatialIndexKind) -> Result<usize> {
    let mut k = 0;
    for idx in this.spatial_indexes(col)? {
        if idx.kind == kind {
            h5index::drop_index(this.table(), &idx.info)?;
            k += 1;
        }
    }
    Ok(k)
}
fn existing(this: &MarquetTable, col: &str, kind: SpatialIndexKind) -> Result<Option<IndexInfo>> {
    Ok(this.spatial_indexes(col)?.into_iter().find(|i| i.kind == kind).map(|i| i.info))
}
/// Open (creating or, for a changed datatype, replacing) the dataset of an index.
/// Returns the dataset and its absolute path.
fn index_dataset(this: &MarquetTable, col: &str, existing: Option<&IndexInfo>, kind: SpatialIndexKind, dtype: &Dtype, chunk: u64) -> Result<(Hid, String)> {
    let t = this.table();
    let prefix = t.member_path(names::SEARCH_INDEXES) + "/";
    let name = match existing {
        Some(info) if info.path.starts_with(&prefix) => info.path[prefix.len()..].to_string(),
        _ => kind.default_name(col),
    };
    if let Some(info) = existing {
        let ds = h5::dataset_open(t.id(), &info.path)?;
        let di = h5::dataset_info(ds.id(), &info.path)?;
        // Not ours to rewrite in place (another layout, or outside SEARCH_INDEXES):
        // replace it. A layout change is rare (a Z dimension appearing or vanishing).
        // Nor one a full disk damaged (its chunk index past the end of the file, issue #38):
        // set aside by the drop, and built anew.
        if di.dtype.to_le() != *dtype || !info.path.starts_with(&prefix) || di.chunk.is_none() || !h5::chunk_index_intact(ds.id()) {
            drop(ds);
            h5index::drop_index(t, info)?;
        } else {
            return Ok((ds, info.path.clone()));
        }
    }
    // Index entries are stored unfiltered (issue #33 item 3, docs/PERFORMANCE.md "A
    // layout cheap to read cold"): a window reads a few R-tree chunks that no earlier
    // window decoded, and inflating them was 45 % of a cold polygon query; stored as they
    // are, a chunk is one byte range copied. Shuffle + deflate shrank the R-tree about
    // 2.5× (issue #10's polygons: 8.5 -> 3.4 MB), so the file grows by about 6 % of a
    // polygon table (28 bytes a row). Block indexes are small.
    // A column written with checksums has checksummed indexes too (docs/FAULTS.md F8).
    let stored = super::geometry_column::geometry_filters(this, col)?;
    let filters = super::checksummed(Vec::new(), stored.contains(&crate::h5::Filter::Fletcher32));
    let spec = DatasetSpec { dtype: dtype.clone(), len: 0, chunk: Some(chunk), filters, fill: None };
    let ds = h5index::create_index_dataset(t, col, &name, &spec, kind.kind())?;
    Ok((ds, t.member_path(&format!("{}/{}", names::SEARCH_INDEXES, name))))
}
/// Write a whole block index describing rows `[0, tokens.1)`. `tokens_first`: the
/// NROWS-gated order of appends/truncations (tokens, then content); otherwise the index is
/// disabled while its content is rewritten and the tokens written last. `new_rows`: rows
/// past the committed NROWS (an append in progress), which are not in the file's reach.
fn write_block_index(this: &MarquetTable, col: &str, existing: Option<&IndexInfo>, b: u64, tokens: (u64, u64), tokens_first: bool, new_rows: Option<&[RowInfo]>) -> Result<String> {
    let n_file = this.nrows()?.min(tokens.1);
    let mut rows = this.scan_rows(col, 0, n_file)?;
    if let Some(nr) = new_rows {
        rows.extend_from_slice(nr);
    }
    let (mut z, mut m, mut any) = (true, true, false);
    dims_of(&rows, &mut z, &mut m, &mut any);
    let (z, m) = (z && any, m && any);
    let entries = block_bbox::build_blocks(rows.iter().map(summary), b)?;
    write_block_entries(this, col, existing, b, tokens, tokens_first, &entries, (z, m))
}
/// Write a whole block index of `entries` (the blocks of rows `[0, tokens.1)`, with Z/M
/// fields as `zm` says), tokens ordered as [`write_block_index`] describes.
#[allow(clippy::too_many_arguments)]
fn write_block_entries(this: &MarquetTable, col: &str, existing: Option<&IndexInfo>, b: u64, tokens: (u64, u64), tokens_first: bool, entries: &[BlockEntry], (z, m): (bool, bool)) -> Result<String> {
    let dt = block_bbox_dtype(z, m);
    let (ds, path) = index_dataset(this, col, existing, SpatialIndexKind::BlockBBox, &dt, BLOCK_INDEX_CHUNK)?;
    // The kind's required attribute goes with the disabling tokens into the first flush:
    // a dataset that a kill leaves half-built is stale, and still conformant (ruling R12
    // checks a stale index's attributes; docs/FAULTS.md F2).
    h5::attr_write_u64(ds.id(), names::BLOCK_LENGTH, b)?;
    begin_write(this, &path, tokens, tokens_first)?;
    // Drop every old chunk first (extent 0), so the rewrite never reads one back: a write
    // that a full disk cut short can leave a chunk that no longer decompresses, and a
    // rebuild must still succeed (issue #19, docs/FAULTS.md F2).
    h5::dataset_set_len(ds.id(), 0, &path)?;
    h5::dataset_set_len(ds.id(), entries.len() as u64, &path)?;
    h5::dataset_write(ds.id(), 0, &dt, &encode_blocks(entries, z, m), &path)?;
    end_write(this, &path, tokens, tokens_first)?;
    Ok(path)
}
/// Before the content: the future tokens (NROWS-gated operations) or the index disabled
/// (rebuilds), flushed so they reach the file before any content does (local ruling L6).
/// Before rewriting an index dataset's content (or, for `tokens_first`, after writing the
/// tokens of the state about to be committed): make the dataset fail the validity
/// check until [`Self::end_write`], and flush.
fn begin_write(this: &MarquetTable, path: &str, tokens: (u64, u64), tokens_first: bool) -> Result<()> {
    if tokens_first {
        h5index::write_tokens(this.table(), path, tokens.0, tokens.1)?;
    } else {
        // Disabled while rewritten, yet never without its tokens (HEP001 §12.2: every
        // index dataset MUST carry both; a crash here must leave a conformant file):
        // SOURCE_NROWS = u64::MAX can never equal NROWS (an HDF5 extent is below
        // 2^64 - 1), so the validity check fails whatever GENERATION becomes
        // (docs/RULINGS-LOCAL.md L13).
        h5index::write_tokens(this.table(), path, tokens.0, DISABLED_SOURCE_NROWS)?;
    }
    h5::flush(this.table().id())
}
/// After the content of a rebuild: flushed content, then the tokens.
fn end_write(this: &MarquetTable, path: &str, tokens: (u64, u64), tokens_first: bool) -> Result<()> {
    if tokens_first {
        Ok(())
    } else {
        h5::flush(this.table().id())?;
        h5index::write_tokens(this.table(), path, tokens.0, tokens.1)?;
        // A build that returned is durable, like an append that returned.
        h5::flush(this.table().id())
    }
}
/// The R-tree items of rows scanned from the column: every non-null, non-empty row.
fn items_of(rows: &[RowInfo], first_row: u64) -> Vec<(BBox, u64)> {
    rows.iter()
        .enumerate()
        .filter_map(|(i, r)| match r {
            RowInfo::Geometry(g) if !g.is_empty => Some((item_box(&g.bbox), first_row + i as u64)),
            _ => None,
        })
        .collect()
}
/// Write a whole R-tree over rows `[0, tokens.1)` (see [`Self::write_block_index`]).
fn write_rtree(this: &MarquetTable, col: &str, existing: Option<&IndexInfo>, node_size: u16, tokens: (u64, u64), tokens_first: bool, new_rows: Option<&[RowInfo]>) -> Result<String> {
    let n_file = this.nrows()?.min(tokens.1);
    let mut items = items_of(&this.scan_rows(col, 0, n_file)?, 0);
    if let Some(nr) = new_rows {
        items.extend(items_of(nr, n_file));
    }
    write_rtree_items(this, col, existing, node_size, tokens, tokens_first, &items)
}
/// Write a whole R-tree over `items`, leaves in Hilbert order (ruling R13).
fn write_rtree_items(this: &MarquetTable, col: &str, existing: Option<&IndexInfo>, node_size: u16, tokens: (u64, u64), tokens_first: bool, items: &[(BBox, u64)]) -> Result<String> {
    let entries = packed_rtree::build(items, node_size)?;
    Layout::try_new(items.len() as u64, node_size)?;
    // Compressed entries (shuffle + deflate or zstd): small chunks, so a node read decompresses
    // 40 KB rather than the whole upper tree (measured in docs/PERFORMANCE.md).
    let chunk = RTREE_CHUNK;
    let dt = rtree_dtype();
    let (ds, path) = index_dataset(this, col, existing, SpatialIndexKind::PackedRTree, &dt, chunk)?;
    // node_size and num_items with the disabling tokens, before any content: a killed
    // build leaves a stale R-tree that is still conformant (never one without node_size;
    // issue #19, docs/FAULTS.md F2).
    h5::attr_write(ds.id(), names::NODE_SIZE, &Dtype::U16, &Space::Scalar, &node_size.to_le_bytes())?;
    h5::attr_write_u64(ds.id(), names::NUM_ITEMS, items.len() as u64)?;
    begin_write(this, &path, tokens, tokens_first)?;
    // Drop every old chunk first (extent 0), so the rewrite never reads one back: a write
    // that a full disk cut short can leave a chunk that no longer decompresses, and a
    // rebuild must still succeed (issue #19, docs/FAULTS.md F2).
    h5::dataset_set_len(ds.id(), 0, &path)?;
    h5::dataset_set_len(ds.id(), entries.len() as u64, &path)?;
    h5::dataset_write(ds.id(), 0, &dt, &encode_entries(&entries), &path)?;
    end_write(this, &path, tokens, tokens_first)?;
    Ok(path)
}

/// An R-tree that was valid for rows `[0, n_old)` before an append: the open dataset and its
/// layout — or `None` when the dataset does not pass every check an in-place rewrite relies
/// on (our datatype and chunking inside `SEARCH_INDEXES`, its `node_size`, `num_items` ≤
/// `n_old`, an extent of at least T; its leaves are checked as they are read,
/// [`scan_leaves`]). No write is made.
fn stored_tree(this: &MarquetTable, idx: &IndexInfo, node_size: u16, n_old: u64) -> Result<Option<(Hid, Layout)>> {
    let t = this.table();
    let prefix = t.member_path(names::SEARCH_INDEXES) + "/";
    if !idx.path.starts_with(&prefix) {
        return Ok(None);
    }
    let Ok(ds) = h5::dataset_open(t.id(), &idx.path) else { return Ok(None) };
    let Ok(di) = h5::dataset_info(ds.id(), &idx.path) else { return Ok(None) };
    if di.dtype.to_le() != rtree_dtype() || di.dims.len() != 1 || di.chunk.is_none() {
        return Ok(None);
    }
    if scalar_uint(ds.id(), names::NODE_SIZE)? != Some(u64::from(node_size)) {
        return Ok(None);
    }
    let Some(n0) = scalar_uint(ds.id(), names::NUM_ITEMS)?.filter(|&n| n <= n_old) else { return Ok(None) };
    let Ok(layout) = Layout::try_new(n0, node_size) else { return Ok(None) };
    if di.dims[0] < layout.total {
        return Ok(None);
    }
    Ok(Some((ds, layout)))
}

/// Leaves read at once while streaming a stored tree (2.6 MB).
const LEAF_SLAB: u64 = 1 << 16;

/// Hand every leaf of the stored tree `ds` (of `layout`) to `f` with its number, reading
/// them a slab at a time, and check each: a row below `n_old`, an ordered NaN-free box, no
/// row twice. `false` (and nothing more handed over) at the first leaf that fails or a read
/// that fails: the tree is then not one an append can build on.
fn scan_leaves(ds: &Hid, path: &str, layout: &Layout, n_old: u64, mut f: impl FnMut(u64, &Entry)) -> Result<bool> {
    let n0 = layout.num_items;
    let mut seen = vec![0u64; (n_old as usize).div_ceil(64)];
    let ordered = |lo: f64, hi: f64| lo <= hi; // false for NaN
    // One buffer for every slab: a fresh 2.6 MB allocation per slab was zeroed and
    // faulted in anew each time (a third of a 10,000,000-row append's leaf read).
    let mut bytes = Vec::new();
    let dt = rtree_dtype();
    let mut j = 0u64;
    while j < n0 {
        let n = LEAF_SLAB.min(n0 - j);
        bytes.resize(n as usize * ENTRY_BYTES, 0);
        if h5::dataset_read_into(ds.id(), layout.leaf_start() + j, n, &dt, path, &mut bytes).is_err() {
            return Ok(false);
        }
        for e in bytes.chunks_exact(ENTRY_BYTES).map(decode_entry) {
            let e = &e;
            if e.index >= n_old || !ordered(e.xmin, e.xmax) || !ordered(e.ymin, e.ymax) {
                return Ok(false);
            }
            let (w, b) = ((e.index / 64) as usize, e.index % 64);
            if seen[w] & (1 << b) != 0 {
                return Ok(false);
            }
            seen[w] |= 1 << b;
            f(j, e);
            j += 1;
        }
    }
    Ok(true)
}

/// The R-tree of an append (HEP002 §10.4, issue #31), rebuilt from the boxes already
/// stored — the old tree's leaves — and the new rows' boxes; the old rows' geometries are
/// never read. Most of the dataset is not even rewritten: the levels above the leaves grow
/// by `d` entries, so the leaf level starts `d` positions later; the old leaves `d..` stay
/// where they are (now leaves `0..`), the first `d` old leaves move to the end, followed by
/// the new items in Hilbert order (the leaves "MAY appear in any order"; docs/RULINGS-LOCAL.md
/// L18). Only the upper levels and that tail are written: about `n/15 + d + k` entries for
/// `k` new items. The stored leaves are streamed a slab at a time into the new level 1
/// ([`packed_rtree::empty_level1`]): memory is level 1 (`n/16` entries), not the tree
/// (a 10,000,000-row table held 870 MB for it before). When the tree is too small for that
/// (`d` ≥ its items) it is rebuilt whole from the same boxes. Returns `false`, having
/// written nothing, when the stored tree does not pass [`scan_leaves`]' checks; the caller
/// then builds it from the rows.
fn append_rtree(this: &MarquetTable, col: &str, idx: &IndexInfo, node_size: u16, tokens: (u64, u64), n_old: u64, added: &[(BBox, u64)]) -> Result<bool> {
    let Some((ds, old)) = stored_tree(this, idx, node_size, n_old)? else { return Ok(false) };
    packed_rtree::check_items(added, node_size)?;
    let n0_old = old.num_items;
    let n0_new = n0_old + added.len() as u64;
    let new = Layout::try_new(n0_new, node_size)?;
    let (s_old, s_new) = (old.leaf_start(), new.leaf_start());
    let d = s_new.saturating_sub(s_old);
    let path = &idx.path;
    if d >= n0_old {
        // The old leaves would all move: one whole rebuild from the stored boxes.
        let mut items: Vec<(BBox, u64)> = Vec::new();
        if !scan_leaves(&ds, path, &old, n_old, |_, e| items.push((e.bbox(), e.index)))? {
            return Ok(false);
        }
        items.extend_from_slice(added);
        drop(ds);
        write_rtree_items(this, col, Some(idx), node_size, tokens, true, &items)?;
        return Ok(true);
    }
    // One pass over the stored leaves: the extent, the level-1 boxes of the new
    // arrangement (old leaf j is new leaf j − d, or n0_old − d + j for the first d), and
    // the first d leaves, which move to the tail.
    let m = u64::from(node_size);
    let mut level1 = packed_rtree::empty_level1(&new);
    let mut extent = packed_rtree::Entry { xmin: f64::INFINITY, ymin: f64::INFINITY, xmax: f64::NEG_INFINITY, ymax: f64::NEG_INFINITY, index: 0 };
    let mut head = Vec::with_capacity(d as usize);
    // Leaf j's new position p (j − d, or n0_old − d + j for j < d) and its parent p / m,
    // kept as a running (p / m, p % m): a division per leaf was a tenth of the scan.
    let p0 = if d == 0 { 0 } else { n0_old - d };
    let (mut parent, mut within) = (p0 / m, p0 % m);
    let ok = scan_leaves(&ds, path, &old, n_old, |j, e| {
        extent.expand(e);
        if j < d {
            head.push(*e);
        }
        if j == d {
            (parent, within) = (0, 0);
        }
        level1[parent as usize].expand(e);
        within += 1;
        if within == m {
            (parent, within) = (parent + 1, 0);
        }
    })?;
    if !ok {
        return Ok(false);
    }
    let extent = extent.bbox().union(&crate::spatial::hilbert::extent_of(added.iter().map(|(b, _)| b)));
    let fresh = packed_rtree::hilbert_leaves(added, &extent);
    for (q, e) in fresh.iter().enumerate() {
        level1[((n0_old + q as u64) / m) as usize].expand(e);
    }
    let upper = packed_rtree::levels_above(&new, &level1)?;
    drop(level1);
    let dt = rtree_dtype();
    // Tokens of the state being committed first, flushed (HEP001 §12.3 step 4, local ruling
    // L6); then num_items and the content. A kill anywhere after leaves a stale tree.
    begin_write(this, path, tokens, true)?;
    h5::attr_write_u64(ds.id(), names::NUM_ITEMS, n0_new)?;
    let di = h5::dataset_info(ds.id(), path)?;
    if di.dims[0] < new.total {
        h5::dataset_set_len(ds.id(), new.total, path)?;
    }
    // Entries [s_new, s_old + n0_old) are the old leaves d.., already in place; the tail
    // (new leaves n0_old − d..) is the first d old leaves, then the new items.
    h5::dataset_write(ds.id(), 0, &dt, &encode_entries(&upper), path)?;
    head.extend(fresh);
    h5::dataset_write(ds.id(), s_old + n0_old, &dt, &encode_entries(&head), path)?;
    Ok(true)
}
/// The body of [`MarquetTable::maintain_indexes_after_append`]: one [`IndexPlan`] fed
/// every new row at once.
pub(crate) fn maintain_indexes_after_append(this: &MarquetTable, col: &str, n_old: u64, new_rows: &[RowInfo], rtree: RTreeOnAppend) -> Result<()> {
    let info = this.geometry_column(col)?;
    let mut plan = IndexPlan::new(this, &info, n_old, rtree, None)?;
    plan.add(new_rows, n_old);
    plan.commit(this, n_old, n_old + new_rows.len() as u64)
}
/// The body of [`MarquetTable::truncate_with_options`].
pub(crate) fn truncate_with_options(this: &MarquetTable, new_nrows: u64, rtree: RTreeOnAppend) -> Result<()> {
    this.geometry_column_names()?;
    let t = this.table();
    let n_old = this.nrows()?;
    if new_nrows > n_old {
        return Err(MarquetError::InvalidArgument(format!("cannot truncate {n_old} rows to {new_nrows}")));
    }
    if new_nrows == n_old {
        return Ok(());
    }
    // Refuse a non-conformant table, retire stale tokens (docs/FAULTS.md F1, F3).
    t.begin_mutation()?;
    if let Some(g_old) = t.generation()? {
        let tokens = (g_old.wrapping_add(1), new_nrows);
        for col in this.geometry_column_names()? {
            for idx in this.spatial_indexes(&col)? {
                if !idx.valid {
                    continue;
                }
                match idx.kind {
                    SpatialIndexKind::BlockBBox => {
                        let ds = h5::dataset_open(t.id(), &idx.info.path)?;
                        let di = h5::dataset_info(ds.id(), &idx.info.path)?;
                        let b = scalar_uint(ds.id(), names::BLOCK_LENGTH)?.filter(|&b| b > 0);
                        let (Some(b), Some((z, m))) = (b, block_layout(&di.dtype)) else { continue };
                        if di.dtype.to_le() != block_bbox_dtype(z, m) {
                            continue;
                        }
                        h5index::write_tokens(t, &idx.info.path, tokens.0, tokens.1)?;
                        h5::flush(t.id())?; // local ruling L6
                        let start = block_bbox::partial_block_start(new_nrows, b)?;
                        let rows = this.scan_rows(&col, start, new_nrows)?;
                        let tail = block_bbox::build_blocks(rows.iter().map(summary), b)?;
                        let first = start / b;
                        h5::dataset_set_len(ds.id(), first + tail.len() as u64, &idx.info.path)?;
                        h5::dataset_write(ds.id(), first, &block_bbox_dtype(z, m), &encode_blocks(&tail, z, m), &idx.info.path)?;
                    }
                    SpatialIndexKind::PackedRTree if rtree == RTreeOnAppend::Rebuild => {
                        let o = h5::object_open(t.id(), &idx.info.path)?;
                        let m = scalar_uint(o.id(), names::NODE_SIZE)?
                            .and_then(|m| u16::try_from(m).ok())
                            .filter(|&m| m >= 2)
                            .unwrap_or(packed_rtree::DEFAULT_NODE_SIZE);
                        drop(o);
                        // Rows [0, new_nrows) are all below the committed NROWS.
                        write_rtree(this, &col, Some(&idx.info), m, tokens, true, None)?;
                    }
                    SpatialIndexKind::PackedRTree => {}
                }
            }
        }
    }
    t.truncate_unchecked(new_nrows)
}
fn first_of_kind(all: &[SpatialIndex], kind: SpatialIndexKind) -> Option<&SpatialIndex> {
    // Prefer a valid one when a column (unusually) links several of a kind.
    all.iter().find(|i| i.kind == kind && i.valid).or_else(|| all.iter().find(|i| i.kind == kind))
}
/// The body of [`MarquetTable::open_block_index`].
pub(crate) fn open_block_index(this: &MarquetTable, col: &str) -> Result<IndexState<BlockIndex>> {
    this.open_block_index_in(&this.spatial_indexes(col)?)
}
/// The body of [`MarquetTable::open_block_index_in`].
pub(crate) fn open_block_index_in(this: &MarquetTable, all: &[SpatialIndex]) -> Result<IndexState<BlockIndex>> {
    open_block_index_with(&LibObjects(this.table().id()), all, this.nrows()?)
}
/// The block index among `all` of a table of `n` rows, checked and read through either
/// read path (`super::facts`).
pub(crate) fn open_block_index_with(o: &dyn Objects, all: &[SpatialIndex], n: u64) -> Result<IndexState<BlockIndex>> {
    let Some(idx) = first_of_kind(all, SpatialIndexKind::BlockBBox) else { return Ok(IndexState::Absent) };
    let path = idx.info.path.clone();
    if !idx.valid {
        return Ok(IndexState::Stale { path });
    }
    let invalid = |reason: String| Ok(IndexState::Invalid { path: path.clone(), reason });
    let ds = match o.dataset(&path) {
        Ok(d) => d,
        Err(e) => return invalid(e.to_string()),
    };
    let Some(b) = scalar_uint_at(o, &path, names::BLOCK_LENGTH)? else {
        return invalid("block_length is missing or not a scalar unsigned integer".into());
    };
    if b == 0 {
        return invalid("block_length is 0".into());
    }
    let Some((z, m)) = block_layout(&ds.info.dtype) else {
        return invalid("the datatype lacks a required field of HEP002 §10.3".into());
    };
    if ds.info.dims.len() != 1 {
        return invalid("the dataset is not rank 1".into());
    }
    let nblocks = n.div_ceil(b);
    if ds.info.dims[0] < nblocks {
        return invalid(format!("{} entries for {nblocks} row blocks", ds.info.dims[0]));
    }
    let dt = block_bbox_dtype(z, m);
    ds.check_readable(&dt)?;
    let bytes = match ds.read(0, nblocks, &dt) {
        Ok(b) => b,
        Err(e @ MarquetError::Unsupported(_)) => return Err(e),
        Err(e) => return invalid(e.to_string()),
    };
    let entries = decode_blocks(&bytes, z, m);
    for (j, e) in entries.iter().enumerate() {
        let j = j as u64;
        let want = b.min(n - j * b);
        if e.n != want {
            return invalid(format!("entry {j} has n = {} but its block has {want} rows", e.n));
        }
        let missing = e.null_count.checked_add(e.empty_count);
        if missing.is_none_or(|k| k > e.n) {
            return invalid(format!("entry {j} counts more null and empty rows than rows"));
        }
        if missing != Some(e.n) && e.bbox.is_empty() {
            return invalid(format!("entry {j} has geometries but an empty box"));
        }
    }
    let groups = crate::spatial::block_bbox::entry_groups(&entries);
    let bytes_read = bytes.len() as u64;
    // Every cold query reads the whole index: its buffer goes back for the next one.
    crate::h5::pool::give_back(bytes);
    Ok(IndexState::Usable(BlockIndex { path, block_length: b, entries, groups, bytes_read }))
}
/// The body of [`MarquetTable::open_rtree`].
pub(crate) fn open_rtree(this: &MarquetTable, col: &str) -> Result<IndexState<RTreeIndex>> {
    this.open_rtree_in(&this.spatial_indexes(col)?)
}
/// The body of [`MarquetTable::open_rtree_in`].
pub(crate) fn open_rtree_in(this: &MarquetTable, all: &[SpatialIndex]) -> Result<IndexState<RTreeIndex>> {
    open_rtree_with(&LibObjects(this.table().id()), all)
}
/// The R-tree among `all`, checked, through either read path (`super::facts`).
pub(crate) fn open_rtree_with(o: &dyn Objects, all: &[SpatialIndex]) -> Result<IndexState<RTreeIndex>> {
    let Some(idx) = first_of_kind(all, SpatialIndexKind::PackedRTree) else { return Ok(IndexState::Absent) };
    let path = idx.info.path.clone();
    if !idx.valid {
        return Ok(IndexState::Stale { path });
    }
    let invalid = |reason: String| Ok(IndexState::Invalid { path: path.clone(), reason });
    let ds = match o.dataset(&path) {
        Ok(d) => d,
        Err(e) => return invalid(e.to_string()),
    };
    if !rtree_layout_ok(&ds.info.dtype) || ds.info.dims.len() != 1 {
        return invalid("the datatype lacks a required field of HEP002 §10.4".into());
    }
    let Some(node_size) = scalar_uint_at(o, &path, names::NODE_SIZE)? else {
        return invalid("node_size is missing or not a scalar unsigned integer".into());
    };
    let Ok(node_size) = u16::try_from(node_size) else {
        return invalid(format!("node_size {node_size} does not fit uint16"));
    };
    let Some(num_items) = scalar_uint_at(o, &path, names::NUM_ITEMS)? else {
        return invalid("num_items is missing or not a scalar unsigned integer".into());
    };
    ds.check_readable(&rtree_dtype())?;
    Ok(IndexState::Usable(RTreeIndex { path, num_items, node_size, len: ds.info.dims[0], ds, bytes_read: 0 }))
}

// ------------------------------------------------------------------ reading for queries

/// Why an index was not used.
#[derive(Debug, Clone, PartialEq)]
pub enum IndexState<T> {
    /// No index of the kind on the column.
    Absent,
    /// Its validity tokens do not match (HEP001 §12.2): ignored silently.
    Stale {
        /// HDF5 path of the index dataset.
        path: String,
    },
    /// It passed the tokens but failed a structural check (HEP002 §17): ignored, reported.
    Invalid {
        /// HDF5 path of the index dataset.
        path: String,
        /// The check it failed.
        reason: String,
    },
    /// It passed every check.
    Usable(T),
}

/// A block index that passed every check, with its entries for the current row blocks.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockIndex {
    /// HDF5 path of the index dataset.
    pub path: String,
    /// The row-block length B (`block_length`, HEP002 §10.2).
    pub block_length: u64,
    /// Exactly `ceil(NROWS / B)` entries.
    pub entries: Vec<BlockEntry>,
    /// The boxes of runs of entries (`crate::spatial::block_bbox::entry_groups`).
    pub(crate) groups: Vec<Option<BBox>>,
    /// Bytes of index elements read.
    pub bytes_read: u64,
}

/// An R-tree dataset open for searching: an [`EntrySource`] that counts what it reads.
pub struct RTreeIndex {
    /// HDF5 path of the index dataset.
    pub path: String,
    /// The number of leaves n₀ (`num_items`).
    pub num_items: u64,
    /// The node size M (`node_size`).
    pub node_size: u16,
    ds: Elements,
    len: u64,
    /// Bytes of index elements read so far.
    pub bytes_read: u64,
}

impl RTreeIndex {
    /// The open dataset, for readers that keep its decoded chunks (`super::snapshot`).
    pub(crate) fn into_dataset(self) -> Elements {
        self.ds
    }
}

impl EntrySource for RTreeIndex {
    fn len(&self) -> u64 {
        self.len
    }
    fn read(&mut self, start: u64, count: u64, out: &mut Vec<Entry>) -> Result<()> {
        if start.checked_add(count).is_none_or(|e| e > self.len) {
            return Err(MarquetError::InvalidArgument(format!("{}: entries {start}+{count} past {}", self.path, self.len)));
        }
        let bytes = self.ds.read(start, count, &rtree_dtype())?;
        self.bytes_read += bytes.len() as u64;
        decode_entries(&bytes, out);
        Ok(())
    }
}



#[cfg(test)]
mod tests {
    use super::*;
    use crate::h5col::File;
    use crate::marquet::{GeoBatch, GeometryColumnSpec, GeometryValues, StorageForm};
    use crate::spatial::packed_rtree::verify;
    use crate::wkb::{self, ByteOrder, Coord, Geometry, Polygon};
    use crate::Dimensions;

    #[test]
    fn block_entries_decode_as_the_generic_box_decoder_reads_them() {
        let mut r = crate::test_rng::SplitMix64::new(17);
        for (z, m) in [(false, false), (true, false), (false, true), (true, true)] {
            let dt = block_bbox_dtype(z, m);
            let es = dt.size();
            let bytes: Vec<u8> = (0..5 * es).map(|_| r.next_u64() as u8).collect();
            let got = decode_blocks(&bytes, z, m);
            assert_eq!(got.len(), 5);
            let nb = crate::marquet::types::box_field_names(z, m).len() * 8;
            let boxdt = crate::marquet::types::bbox_dtype(z, m);
            for (g, e) in got.iter().zip(bytes.chunks_exact(es)) {
                let (b, _, _) = crate::marquet::types::decode_box(&boxdt, &e[..nb]).unwrap();
                let bits = |b: &BBox| [b.xmin, b.ymin, b.zmin, b.mmin, b.xmax, b.ymax, b.zmax, b.mmax].map(f64::to_bits);
                assert_eq!(bits(&g.bbox), bits(&b), "z {z} m {m}");
                let u = |i: usize| u64::from_le_bytes(e[nb + 8 * i..nb + 8 * i + 8].try_into().unwrap());
                assert_eq!((g.n, g.null_count, g.empty_count), (u(0), u(1), u(2)));
            }
            // A trailing partial entry is not an entry.
            assert_eq!(decode_blocks(&bytes[..2 * es - 1], z, m).len(), 1);
        }
    }

    /// A counter-clockwise square of side `s` at `(x, y)`, with its box.
    fn square(x: f64, y: f64, s: f64) -> (Vec<u8>, BBox) {
        let c = |x: f64, y: f64| Coord { x, y, z: f64::NAN, m: f64::NAN };
        let ring = vec![c(x, y), c(x + s, y), c(x + s, y + s), c(x, y + s), c(x, y)];
        let g = Geometry::Polygon(Polygon { dims: Dimensions::Xy, rings: vec![ring] });
        (wkb::encode(&g, ByteOrder::LittleEndian), BBox::xy(x, y, x + s, y + s))
    }

    /// `n` squares (every seventh row null) from a seeded stream.
    fn squares(n: usize, seed: u64, boxes: &mut Vec<Option<BBox>>) -> GeometryValues {
        let mut r = crate::test_rng::SplitMix64::new(seed);
        let mut f = move || (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let v = (0..n)
            .map(|i| {
                if i % 7 == 3 {
                    boxes.push(None);
                    return None;
                }
                let (w, b) = square(f() * 100.0 - 50.0, f() * 60.0 - 30.0, 0.01 + f());
                boxes.push(Some(b));
                Some(w)
            })
            .collect();
        GeometryValues::Wkb(v)
    }

    fn entries(t: &MarquetTable, col: &str) -> (u64, u16, Vec<Entry>) {
        let IndexState::Usable(ix) = t.open_rtree(col).unwrap() else { panic!("the R-tree is not usable") };
        let mut src = ix;
        let (n0, m, len) = (src.num_items, src.node_size, src.len());
        let mut out = Vec::new();
        src.read(0, len, &mut out).unwrap();
        (n0, m, out)
    }

    /// Issue #31: an append rebuilds the R-tree from the stored leaves and the new rows'
    /// boxes, never from the old rows' WKB. The old rows' WKB is overwritten with bytes
    /// that do not decode; every append must still succeed with a tree that the verifier
    /// (against the boxes kept in memory here) finds complete and exact, and the whole
    /// rebuild — which reads the rows — must fail on the same table.
    #[test]
    fn append_rebuilds_the_rtree_from_stored_boxes_not_old_geometries() {
        let path = std::env::temp_dir().join(format!("marquet-unit-append-rtree-{}.h5", std::process::id()));
        let f = File::create(&path).unwrap();
        let mut t = MarquetTable::create(&f, "/t").unwrap();
        t.add_geometry_column("g", &GeometryColumnSpec::default().with_form(StorageForm::VarWkb)).unwrap();
        let mut boxes = Vec::new();
        t.append(&GeoBatch::new().with_geometry("g", squares(3000, 1, &mut boxes))).unwrap();
        t.build_rtree("g", Some(4)).unwrap();
        // Damage every old row's WKB: the first byte of the values becomes 0xFF (no byte order).
        let vpath = t.table().member_path(&format!("g/{}", names::VALUES));
        let ds = h5::dataset_open(t.table().id(), &format!("g/{}", names::VALUES)).unwrap();
        let di = h5::dataset_info(ds.id(), &vpath).unwrap();
        assert_eq!(di.dtype.size(), 1);
        h5::dataset_write(ds.id(), 0, &di.dtype, &vec![0xFFu8; di.dims[0] as usize], &vpath).unwrap();
        drop(ds);
        assert!(t.row_infos("g", 0, 1).is_err(), "the damaged rows must not decode");
        // Appends whose upper levels grow by less and by more than one chunk of leaves,
        // and one larger than the table (every old leaf moves).
        for (seed, k) in (2u64..).zip([1usize, 2, 3, 4, 5, 16, 17, 300, 1024, 5000, 40_000]) {
            let n_old = t.nrows().unwrap();
            let before = entries(&t, "g");
            t.append(&GeoBatch::new().with_geometry("g", squares(k, seed, &mut boxes))).unwrap();
            let n = t.nrows().unwrap();
            assert_eq!(n, n_old + k as u64);
            let (n0, m, e) = entries(&t, "g");
            assert_eq!(m, 4);
            assert_eq!(n0, boxes.iter().filter(|b| b.is_some()).count() as u64);
            let found = verify(&e, n0, m, n, 0.0, |row| Ok(boxes[row as usize])).unwrap();
            assert!(found.is_empty(), "after appending {k} rows: {found:?}");
            // Most old leaves stay where they were (the tree is not rebuilt whole).
            let lay_old = Layout::try_new(before.0, 4).unwrap();
            let lay_new = Layout::try_new(n0, 4).unwrap();
            let d = (lay_new.leaf_start() - lay_old.leaf_start()) as usize;
            if d < before.0 as usize {
                let s = lay_old.leaf_start() as usize;
                assert_eq!(&before.2[s + d..s + before.0 as usize], &e[s + d..s + before.0 as usize]);
            }
        }
        // The oracle: a rebuild from the rows decodes them, and fails.
        let e = t.rebuild_rtrees("g").unwrap_err();
        assert!(e.to_string().to_lowercase().contains("byte order") || e.to_string().contains("WKB"), "{e}");
        drop(t);
        drop(f);
        let _ = std::fs::remove_file(&path);
    }
}
