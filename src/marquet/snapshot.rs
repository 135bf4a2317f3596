//! One geometry column as the warm spatial reader holds it (issue #20).
//!
//! [`ColumnSnapshot`] reads what a query needs to know about a geometry column once — its
//! attributes ([`GeometryColumnInfo`]), NROWS, the index list with the validity tokens of
//! HEP001 §12.2, the block index's entries, the R-tree's attributes, the covering column's
//! datatype and fill value — and keeps every dataset a query reads open as a
//! [`CachedDataset`], whose decoded chunks stay in memory between queries: after the first
//! few windows, the R-tree's upper levels, the block boxes and the chunks a window touches
//! are served without any HDF5 call. Indexes are opened on first use, so a reader that
//! answers one window (the cold path) reads no more than the query needs.
//!
//! Every check of the one-shot query applies unchanged: the same structural checks of
//! HEP002 §17 on the indexes (done once, when the index is opened; the R-tree's per-entry
//! checks on every search), the same checks of HEP001 §9.2 on OFFSETS and MASK of every
//! range read, errors naming the dataset and row.
//!
//! A snapshot describes the table as it was when it was opened. It stays exact while the
//! file is unchanged; [`ColumnSnapshot::is_current`] says whether this process has written
//! through `crate::h5` since (the spatial reader then reopens it before its next query).

use std::sync::Arc;

use crate::error::{MarquetError, Result};
use crate::h5::cached::CachedDataset;
use crate::h5::Dtype;
use crate::h5col::ColumnKind;
use crate::spatial::packed_rtree::{Entry, EntrySource};
use crate::spec::{BBox, Dimensions};

use super::spatial_index::{rtree_dtype, BlockIndex, IndexState, SpatialIndex};
use super::facts::TableView;
use super::{GeometryColumnInfo, StorageForm};

/// Decoded R-tree chunks a reader keeps (the polygons of issue #10: 8.5 MB for the whole
/// tree, so every level stays in memory).
pub const RTREE_CACHE_BYTES: usize = 32 << 20;
/// Decoded geometry chunks a reader keeps (points, fixed WKB or WKB `VALUES`).
pub const DATA_CACHE_BYTES: usize = 64 << 20;
/// Decoded chunks of `OFFSETS`, `MASK` and the covering column a reader keeps, each.
pub const SIDE_CACHE_BYTES: usize = 16 << 20;

/// An R-tree opened for searching through a [`CachedDataset`].
#[derive(Debug)]
pub struct CachedRTree {
    /// The index dataset's path.
    pub path: String,
    /// The `num_items` attribute (HEP002 §10.4).
    pub num_items: u64,
    /// The `node_size` attribute.
    pub node_size: u16,
    data: CachedDataset,
    /// Bytes of entries read (40 per entry), counted as the one-shot query counts them.
    pub bytes_read: u64,
}

impl EntrySource for CachedRTree {
    fn len(&self) -> u64 {
        self.data.len()
    }

    fn read(&mut self, start: u64, count: u64, out: &mut Vec<Entry>) -> Result<()> {
        let end = start.checked_add(count).filter(|&e| e <= self.data.len()).ok_or_else(|| {
            MarquetError::InvalidArgument(format!("{}: entries {start}+{count} past {}", self.path, self.data.len()))
        })?;
        out.clear();
        let mut i = start;
        while i < end {
            let (piece, first) = self.data.piece_of(i)?;
            let hi = (first + (piece.len() / 40) as u64).min(end);
            let bytes = &piece[((i - first) * 40) as usize..((hi - first) * 40) as usize];
            out.extend(bytes.chunks_exact(40).map(|e| {
                let f = |k: usize| f64::from_le_bytes(e[8 * k..8 * k + 8].try_into().unwrap_or([0; 8]));
                Entry { xmin: f(0), ymin: f(1), xmax: f(2), ymax: f(3), index: u64::from_le_bytes(e[32..40].try_into().unwrap_or([0; 8])) }
            }));
            i = hi;
        }
        self.bytes_read += count * 40;
        Ok(())
    }
}

/// Fetch `bytes` of the file `ds` is read from by URL, in one round (nothing for a local
/// file or no bytes).
fn fetch(ds: &CachedDataset, bytes: &[(u64, u64)]) -> Result<()> {
    #[cfg(feature = "cloud")]
    if let (Some(r), false) = (ds.remote(), bytes.is_empty()) {
        return r.prefetch(bytes);
    }
    let _ = (ds, bytes);
    Ok(())
}

/// A packed R-tree searched together with its column's data (issue #34). Over a network,
/// each level's nodes are fetched in one round ([`EntrySource::prefetch`]), and with the
/// leaves the first bytes of the rows they most likely name — the offsets or points of row
/// `i` for leaf `i`, which is where a table written in Hilbert order keeps them (the
/// writer orders the rows and builds the tree from the same boxes) — so that the
/// candidates' geometries are one round away when the search ends. A guess that misses
/// costs bytes, not a round; local files are read as before.
#[derive(Debug)]
pub struct RTreeWithData<'a> {
    rt: &'a mut CachedRTree,
    data: &'a GeometryData,
}

impl RTreeWithData<'_> {
    /// The R-tree searched.
    pub fn rtree(&mut self) -> &mut CachedRTree {
        self.rt
    }
}

impl EntrySource for RTreeWithData<'_> {
    fn len(&self) -> u64 {
        self.rt.len()
    }

    fn read(&mut self, start: u64, count: u64, out: &mut Vec<Entry>) -> Result<()> {
        self.rt.read(start, count, out)
    }

    fn prefetch(&mut self, runs: &[(u64, u64)], leaves_from: Option<u64>) -> Result<()> {
        if !self.rt.data.is_remote() {
            return Ok(());
        }
        let mut bytes = self.rt.data.byte_ranges(runs)?;
        if let Some(s0) = leaves_from {
            let rows: Vec<(u64, u64)> = runs.iter().map(|&(a, b)| (a.saturating_sub(s0), b.saturating_sub(s0))).filter(|(a, b)| a < b).collect();
            bytes.extend(self.data.first_ranges(&rows)?);
        }
        fetch(&self.rt.data, &bytes)
    }
}

/// The covering column (HEP002 §10.5) with its decoded chunks.
#[derive(Debug)]
pub struct CachedCovering {
    /// The covering column's path.
    pub path: String,
    fill: Option<Vec<u8>>,
    data: CachedDataset,
}

impl CachedCovering {
    /// Bytes per covering element.
    pub fn elem_size(&self) -> usize {
        self.data.elem_size()
    }

    /// For each row of `[start, start + count)`: false when its covering box is the fill
    /// value (a null row) or misses `wbox`, true otherwise (also for a box that cannot be
    /// decoded, which leaves the row to the exact test).
    pub fn keep(&mut self, start: u64, count: u64, wbox: &BBox, out: &mut Vec<bool>) -> Result<()> {
        let end = start.checked_add(count).filter(|&e| e <= self.data.len()).ok_or_else(|| {
            MarquetError::spec(&self.path, "HEP002 §10.5", format!("rows {start}+{count} past the extent {}", self.data.len()))
        })?;
        let es = self.data.elem_size() as u64;
        let dt = self.data.dtype().clone();
        let mut i = start;
        while i < end {
            let (piece, first) = self.data.piece_of(i)?;
            let hi = (first + piece.len() as u64 / es).min(end);
            for r in i..hi {
                let e = &piece[((r - first) * es) as usize..((r - first + 1) * es) as usize];
                let is_fill = self.fill.as_deref().is_some_and(|f| f == e);
                out.push(
                    !is_fill
                        && match super::types::decode_box(&dt, e) {
                            Some((b, _, _)) => crate::spatial::geom_box::intersects(&b, wbox),
                            None => true,
                        },
                );
            }
            i = hi;
        }
        Ok(())
    }
}

/// The geometry data of a column, by storage form (HEP002 §7).
// One per reader, built once and never moved on a query's path: variant sizes do not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum GeometryData {
    /// A point column.
    Point {
        /// The column dataset.
        data: CachedDataset,
        /// Byte offset of the x field in an element.
        x: usize,
        /// Byte offset of the y field.
        y: usize,
        /// The coordinates are 32-bit floats.
        f32: bool,
        /// The column's dimensions.
        dims: Dimensions,
        /// The fill value (a null row).
        fill: Option<Vec<u8>>,
        /// Boxes of small groups of the chunks' rows, made as chunks are tested
        /// (`crate::marquet::point_groups`).
        groups: crate::marquet::point_groups::PointGroups,
    },
    /// Fixed-size WKB.
    Fixed {
        /// The column dataset.
        data: CachedDataset,
        /// Bytes per value.
        size: usize,
        /// The fill value (a null row).
        fill: Option<Vec<u8>>,
    },
    /// Variable-length WKB: a list column with a `uint8` leaf.
    Var {
        /// `OFFSETS` (uint64).
        offsets: CachedDataset,
        /// `MASK`, when the column has one.
        mask: Option<CachedDataset>,
        /// `VALUES` (the WKB bytes).
        values: CachedDataset,
        /// The list column's path.
        path: String,
    },
}

/// Rows `[s, e)` of a variable-length WKB column without their bytes: the offsets into
/// `VALUES` (`e - s + 1` of them, as stored) and the mask (`None`: no MASK, every row
/// present). A row's WKB is then taken alone with [`GeometryData::wkb_value`], so that a
/// query reads (and decodes) the chunks of the rows it tests, not of every row between.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WkbSpans {
    /// `e - s + 1` offsets into `VALUES`: row `s + i` is `offsets[i]..offsets[i + 1]`.
    pub offsets: Vec<u64>,
    /// Row present (`None`: no MASK, every row present).
    pub mask: Option<Vec<bool>>,
}

impl GeometryData {
    /// Elements `[s, e)` of a point or fixed-WKB column, as stored (little-endian).
    pub fn read_elements(&mut self, s: u64, e: u64) -> Result<Vec<u8>> {
        match self {
            GeometryData::Point { data, .. } | GeometryData::Fixed { data, .. } => data.read(s, e - s),
            GeometryData::Var { path, .. } => Err(MarquetError::InvalidArgument(format!("{path} is a list column"))),
        }
    }

    /// Fetch ahead, together, what reading the row ranges `(s, e)` will need (a file read
    /// by URL, issue #34: one round of concurrent range requests for the points, or for the
    /// offsets and the mask, one for the WKB values they point to); nothing for a local
    /// file. Offsets that do not make sense are left to the checked read that follows.
    pub fn prefetch(&mut self, groups: &[(u64, u64)]) -> Result<()> {
        match self {
            GeometryData::Point { data, .. } | GeometryData::Fixed { data, .. } => data.prefetch(groups),
            GeometryData::Var { offsets, .. } if !offsets.is_remote() => Ok(()),
            GeometryData::Var { offsets, mask, values, .. } => {
                let with_next: Vec<(u64, u64)> = groups.iter().map(|&(s, e)| (s, e + 1)).collect();
                let mut bytes = offsets.byte_ranges(&with_next)?;
                if let Some(m) = mask {
                    bytes.extend(m.byte_ranges(groups)?);
                }
                fetch(offsets, &bytes)?;
                let mut spans = Vec::with_capacity(groups.len());
                for &(s, e) in groups {
                    if e < offsets.len() {
                        let (a, b) = (offsets.read(s, 1)?, offsets.read(e, 1)?);
                        let word = |x: &[u8]| u64::from_le_bytes(x.try_into().unwrap_or([0; 8]));
                        spans.push((word(&a), word(&b)));
                    }
                }
                values.prefetch(&spans)
            }
        }
    }

    /// The byte ranges that reading the rows `(s, e)` would start with — the points, or
    /// the offsets — for a prefetch joined with an R-tree level's (empty for a local file).
    /// Only for data read by the piece (stored without filters, as in the cloud layout):
    /// a guess at compressed chunks would fetch whole chunks the window may not need.
    fn first_ranges(&self, rows: &[(u64, u64)]) -> Result<Vec<(u64, u64)>> {
        let first = match self {
            GeometryData::Point { data, .. } | GeometryData::Fixed { data, .. } => data,
            GeometryData::Var { offsets, .. } => offsets,
        };
        if !first.info.filters.is_empty() {
            return Ok(Vec::new());
        }
        match self {
            GeometryData::Point { data, .. } | GeometryData::Fixed { data, .. } => data.byte_ranges(rows),
            GeometryData::Var { offsets, .. } => offsets.byte_ranges(&rows.iter().map(|&(s, e)| (s, e + 1)).collect::<Vec<_>>()),
        }
    }

    /// The offsets and mask of rows `[s, e)` of a variable-length WKB column, with the
    /// checks of HEP001 §9.2 (`ListColumn::read`'s): `OFFSETS[0] = 0`, offsets never
    /// decrease and stay within VALUES, MASK entries are 0 or 1, a null row has an empty
    /// slice.
    pub fn wkb_spans(&mut self, s: u64, e: u64) -> Result<WkbSpans> {
        let GeometryData::Var { offsets, mask, values, path } = self else {
            return Err(MarquetError::InvalidArgument("not a list column".into()));
        };
        let op = format!("{path}/OFFSETS");
        if e >= offsets.len() {
            return Err(MarquetError::spec(&op, "HEP001 §9.2", format!("OFFSETS extent {} < {} needed", offsets.len(), e + 1)));
        }
        let raw = offsets.read(s, e - s + 1)?;
        let off: Vec<u64> = raw.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect();
        if s == 0 && off.first().copied() != Some(0) {
            return Err(MarquetError::spec(&op, "HEP001 §9.2", format!("OFFSETS[0] is {}, not 0", off[0])));
        }
        for (i, w) in off.windows(2).enumerate() {
            if w[1] < w[0] {
                return Err(MarquetError::spec(&op, "HEP001 §9.2", format!("offsets decrease at entry {}: {} then {}", s + i as u64, w[0], w[1])));
            }
        }
        let m = match mask {
            None => None,
            Some(md) => {
                let mp = format!("{path}/MASK");
                if e > md.len() {
                    return Err(MarquetError::spec(&mp, "HEP001 §9.2", format!("MASK extent {} < {e}", md.len())));
                }
                let b = md.read(s, e - s)?;
                let mut v = Vec::with_capacity(b.len());
                for (i, &x) in b.iter().enumerate() {
                    let present = match x {
                        0 => false,
                        1 => true,
                        x => return Err(MarquetError::spec(&mp, "HEP001 §8.8", format!("entry {} holds {x}, not FALSE or TRUE", s + i as u64))),
                    };
                    if !present && off[i + 1] != off[i] {
                        return Err(MarquetError::spec(&mp, "HEP001 §9.2", format!("null entry {} has a non-empty slice", s + i as u64)));
                    }
                    v.push(present);
                }
                Some(v)
            }
        };
        let b = off[off.len() - 1];
        if b > values.len() {
            return Err(MarquetError::spec(format!("{path}/VALUES"), "HEP001 §9.2", format!("offsets run to {b}, past VALUES extent {}", values.len())));
        }
        Ok(WkbSpans { offsets: off, mask: m })
    }

    /// Bytes `[lo, hi)` of a variable-length WKB column's `VALUES` (one row's WKB, whose
    /// span [`GeometryData::wkb_spans`] checked): the cached chunk itself and the range in
    /// it when the row lies in one chunk, else a copy (issue #33: a warm polygon window
    /// copied every row between its candidates, and decoded their chunks).
    pub fn wkb_value(&mut self, lo: u64, hi: u64) -> Result<(Arc<Vec<u8>>, std::ops::Range<usize>)> {
        let GeometryData::Var { values, .. } = self else {
            return Err(MarquetError::InvalidArgument("not a list column".into()));
        };
        values.shared(lo, hi.saturating_sub(lo))
    }
}

/// A geometry column as a warm reader holds it (see the module documentation).
#[derive(Debug)]
pub struct ColumnSnapshot {
    /// The column's attributes.
    pub info: GeometryColumnInfo,
    /// NROWS when the snapshot was opened.
    pub nrows: u64,
    generation: u64,
    indexes: Option<std::result::Result<Vec<SpatialIndex>, String>>,
    rtree: Option<IndexState<CachedRTree>>,
    block: Option<IndexState<BlockIndex>>,
    covering: Option<std::result::Result<CachedCovering, String>>,
    /// The geometry data.
    pub data: GeometryData,
}

impl ColumnSnapshot {
    /// Read geometry column `col` of the table `t` views: its attributes, NROWS, and its
    /// geometry datasets opened (indexes and the covering column are opened on first use).
    /// Through either read path ([`super::facts`]); a dataset the byte-range path cannot
    /// read is refused with [`MarquetError::Unsupported`] before any data is read.
    pub fn open(t: &TableView<'_>, col: &str) -> Result<ColumnSnapshot> {
        let generation = crate::h5::write_generation();
        let info = t.geometry_column(col)?;
        let nrows = t.nrows()?;
        // Queries size runs and candidate lists by NROWS: checked against the column once,
        // when the snapshot is taken (issue #19, docs/FAULTS.md F4).
        t.check_rows_held(&info.name, nrows)?;
        let data = match info.form {
            StorageForm::VarWkb => {
                let path = info.path.clone();
                let Some((o, m, v)) = t.list_leaf(&info.name)? else {
                    return Err(MarquetError::spec(&info.path, "HEP002 §7.2", "VALUES must be a uint8 dataset"));
                };
                if v.info.dtype.size() != 1 {
                    return Err(MarquetError::spec(&info.path, "HEP002 §7.2", "VALUES must be a uint8 dataset"));
                }
                GeometryData::Var {
                    offsets: CachedDataset::from_elements(o, Some(Dtype::U64), SIDE_CACHE_BYTES)?,
                    mask: match m {
                        Some(m) => Some(CachedDataset::from_elements(m, Some(Dtype::hep001_bool().to_le()), SIDE_CACHE_BYTES)?),
                        None => None,
                    },
                    values: CachedDataset::from_elements(v, None, DATA_CACHE_BYTES)?,
                    path,
                }
            }
            StorageForm::FixedWkb { size } => {
                let c = t.column(&info.name)?;
                let fill = c.info.fill.clone();
                GeometryData::Fixed { data: CachedDataset::from_elements(c, None, DATA_CACHE_BYTES)?, size, fill }
            }
            StorageForm::Point { f32, dims } => {
                let c = t.column(&info.name)?;
                let field = |n: &str| match &c.info.dtype {
                    Dtype::Compound { fields, .. } => fields.iter().find(|f| f.name == n).map(|f| f.offset),
                    _ => None,
                };
                let (Some(x), Some(y)) = (field("x"), field("y")) else {
                    return Err(MarquetError::spec(&info.path, "HEP002 §7.4", "a point column without x and y fields"));
                };
                let fill = c.info.fill.clone();
                GeometryData::Point { data: CachedDataset::from_elements(c, None, DATA_CACHE_BYTES)?, x, y, f32, dims, fill, groups: Default::default() }
            }
        };
        Ok(ColumnSnapshot { info, nrows, generation, indexes: None, rtree: None, block: None, covering: None, data })
    }

    /// False once this process has written through `crate::h5` since the snapshot was
    /// opened (any dataset, any file: the check is one counter, no I/O).
    pub fn is_current(&self) -> bool {
        crate::h5::write_generation() == self.generation
    }

    fn indexes(&mut self, t: &TableView<'_>) -> std::result::Result<&[SpatialIndex], String> {
        if self.indexes.is_none() {
            self.indexes = Some(t.spatial_indexes(&self.info.name).map_err(|e| e.to_string()));
        }
        match self.indexes.as_ref() {
            Some(Ok(v)) => Ok(v),
            Some(Err(e)) => Err(e.clone()),
            None => Ok(&[]),
        }
    }

    /// The R-tree of the column, opened (and checked) on first use.
    pub fn rtree(&mut self, t: &TableView<'_>) -> Result<&mut IndexState<CachedRTree>> {
        if self.rtree.is_none() {
            let path = self.info.path.clone();
            let invalid = |reason: String| IndexState::Invalid { path: path.clone(), reason };
            let state = match self.indexes(t) {
                Err(e) => invalid(e),
                Ok(all) => match t.open_rtree_in(all) {
                    Err(e @ MarquetError::Unsupported(_)) => return Err(e),
                    Err(e) => invalid(e.to_string()),
                    Ok(IndexState::Usable(rt)) => {
                        let (p, num_items, node_size) = (rt.path.clone(), rt.num_items, rt.node_size);
                        match CachedDataset::from_elements(rt.into_dataset(), Some(rtree_dtype()), RTREE_CACHE_BYTES) {
                            Ok(data) => IndexState::Usable(CachedRTree { path: p, num_items, node_size, data, bytes_read: 0 }),
                            Err(e @ MarquetError::Unsupported(_)) => return Err(e),
                            Err(e) => IndexState::Invalid { path: p, reason: e.to_string() },
                        }
                    }
                    Ok(IndexState::Absent) => IndexState::Absent,
                    Ok(IndexState::Stale { path }) => IndexState::Stale { path },
                    Ok(IndexState::Invalid { path, reason }) => IndexState::Invalid { path, reason },
                },
            };
            self.rtree = Some(state);
        }
        Ok(self.rtree.get_or_insert(IndexState::Absent))
    }

    /// The R-tree [`ColumnSnapshot::rtree`] opened, when usable, borrowed together with the
    /// column's data for a search that fetches ahead ([`RTreeWithData`]).
    pub fn rtree_with_data(&mut self) -> Option<RTreeWithData<'_>> {
        match &mut self.rtree {
            Some(IndexState::Usable(rt)) => Some(RTreeWithData { rt, data: &self.data }),
            _ => None,
        }
    }

    /// The block index of the column, opened, checked and read on first use.
    pub fn block_index(&mut self, t: &TableView<'_>) -> Result<&IndexState<BlockIndex>> {
        if self.block.is_none() {
            let path = self.info.path.clone();
            let state = match self.indexes(t) {
                Err(e) => IndexState::Invalid { path, reason: e },
                Ok(all) => match t.open_block_index_in(all) {
                    Err(e @ MarquetError::Unsupported(_)) => return Err(e),
                    Err(e) => IndexState::Invalid { path, reason: e.to_string() },
                    Ok(s) => s,
                },
            };
            self.block = Some(state);
        }
        Ok(self.block.get_or_insert(IndexState::Absent))
    }

    /// The covering column, opened and checked on first use: `Ok(None)` when the column
    /// declares none, `Err(reason)` when it cannot be used (not a column dataset, or
    /// without the float box fields of HEP002 §10.5).
    pub fn covering(&mut self, t: &TableView<'_>) -> Result<Option<std::result::Result<&mut CachedCovering, String>>> {
        let Some(cov) = self.info.covering.clone() else { return Ok(None) };
        if self.covering.is_none() {
            let c = if t.kind_of(&cov)? != Some(ColumnKind::Dataset) {
                Err(format!("{}: the covering column is not a column dataset", t.member_path(&cov)))
            } else {
                let c = t.column(&cov)?;
                let dt = c.info.dtype.to_le();
                let ok = matches!(&dt, Dtype::Compound { fields, .. }
                    if ["xmin", "ymin", "xmax", "ymax"].iter().all(|n| fields.iter().any(|f| f.name == *n && matches!(f.dtype, Dtype::Float { .. }))));
                if ok {
                    let fill = c.info.fill.clone();
                    let path = c.path.clone();
                    Ok(CachedCovering { data: CachedDataset::from_elements(c, None, SIDE_CACHE_BYTES)?, path, fill })
                } else {
                    Err(format!("{}: the covering column lacks the fields of HEP002 §10.5", c.path))
                }
            };
            self.covering = Some(c);
        }
        Ok(self.covering.as_mut().map(|c| c.as_mut().map_err(|e| e.clone())))
    }
}
