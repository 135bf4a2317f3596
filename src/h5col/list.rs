//! List columns (HEP001 §9): `OFFSETS` / `VALUES` / `MASK`, nesting, `STRING_VALUES`.

use super::{array::recommended_fill, read_token, Array, Table};
use crate::error::{MarquetError, Result};
use crate::h5::{self, DatasetSpec, Dtype, Filter, Hid};
use crate::spec::names;

#[cfg(feature = "mpio")]
mod mpio;

/// Default chunk length of `OFFSETS` and `MASK` members.
pub const DEFAULT_OFFSETS_CHUNK: u64 = 65_536;

/// Default chunk length (elements) of byte `VALUES`/`CHARS` members: 1 MiB (HEP002 §7.2).
pub const DEFAULT_BYTES_CHUNK: u64 = 1 << 20;

/// Rows of a list column in memory (Arrow layout).
#[derive(Debug, Clone, PartialEq)]
pub struct ListArray {
    /// `len + 1` offsets starting at 0.
    pub offsets: Vec<u64>,
    /// `Some(flags)`, `true` = present, when any entry may be null.
    pub mask: Option<Vec<bool>>,
    /// The flattened elements: entry `i` is `values[offsets[i]..offsets[i + 1]]` (HEP001 §9.2).
    pub values: ListValues,
}

/// What a list's elements are.
#[derive(Debug, Clone, PartialEq)]
pub enum ListValues {
    /// A leaf dataset.
    Leaf(Array),
    /// A nested list level.
    List(Box<ListArray>),
    /// A `STRING_VALUES` group: UTF-8 strings (with their own mask).
    Strings {
        /// `n + 1` byte offsets into `chars`, starting at 0 (HEP001 §9.4).
        offsets: Vec<u64>,
        /// The UTF-8 bytes of all strings back to back.
        chars: Vec<u8>,
        /// `Some(flags)`, `true` = present, when any string may be null.
        mask: Option<Vec<bool>>,
    },
}

impl ListArray {
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }
    /// True when the list holds no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// `k` null entries over an empty leaf of `leaf`.
    pub fn nulls(k: usize, leaf: Dtype) -> ListArray {
        ListArray { offsets: vec![0; k + 1], mask: Some(vec![false; k]), values: ListValues::Leaf(Array::empty(leaf)) }
    }
    /// Build from per-row byte strings (`None` = null), e.g. WKB values.
    pub fn from_bytes_rows<'a>(rows: impl IntoIterator<Item = Option<&'a [u8]>>) -> ListArray {
        use rayon::prelude::*;
        let rows: Vec<Option<&[u8]>> = rows.into_iter().collect();
        let mut offsets = Vec::with_capacity(rows.len() + 1);
        offsets.push(0u64);
        let mut mask = Vec::with_capacity(rows.len());
        let mut total = 0u64;
        for r in &rows {
            total += r.map_or(0, |b| b.len() as u64);
            mask.push(r.is_some());
            offsets.push(total);
        }
        // The values sized once and copied on every core, a group of rows each: a batch of
        // WKB polygons is tens of MB, grown and copied on one thread before.
        const GROUP: usize = 4096;
        let mut bytes = vec![0u8; total as usize];
        type Group<'r, 'b> = (&'r [Option<&'b [u8]>], &'r mut [u8]);
        let mut groups: Vec<Group> = Vec::with_capacity(rows.len().div_ceil(GROUP));
        let mut rest: &mut [u8] = &mut bytes;
        for (g, rs) in rows.chunks(GROUP).enumerate() {
            let len = (offsets[(g * GROUP + rs.len()).min(rows.len())] - offsets[g * GROUP]) as usize;
            let (head, tail) = rest.split_at_mut(len);
            groups.push((rs, head));
            rest = tail;
        }
        groups.into_par_iter().for_each(|(rs, dst)| {
            let mut at = 0;
            for b in rs.iter().flatten() {
                dst[at..at + b.len()].copy_from_slice(b);
                at += b.len();
            }
        });
        let any_null = mask.iter().any(|m| !m);
        ListArray {
            offsets,
            mask: if any_null { Some(mask) } else { None },
            values: ListValues::Leaf(Array { dtype: Dtype::U8, bytes }),
        }
    }
    /// Build a list of strings per row.
    pub fn from_string_rows(rows: &[Option<Vec<&str>>]) -> ListArray {
        let mut offsets = vec![0u64];
        let mut mask = Vec::new();
        let mut s_off = vec![0u64];
        let mut chars = Vec::new();
        for r in rows {
            let n = offsets.last().copied().unwrap_or(0);
            match r {
                Some(v) => {
                    for s in v {
                        chars.extend_from_slice(s.as_bytes());
                        s_off.push(chars.len() as u64);
                    }
                    offsets.push(n + v.len() as u64);
                    mask.push(true);
                }
                None => {
                    offsets.push(n);
                    mask.push(false);
                }
            }
        }
        let any_null = mask.iter().any(|m| !m);
        ListArray {
            offsets,
            mask: if any_null { Some(mask) } else { None },
            values: ListValues::Strings { offsets: s_off, chars, mask: None },
        }
    }
    /// Is entry `i` null?
    pub fn is_null(&self, i: usize) -> bool {
        self.mask.as_ref().map(|m| !m[i]).unwrap_or(false)
    }
    /// The element range of entry `i`.
    pub fn range(&self, i: usize) -> std::ops::Range<usize> {
        self.offsets[i] as usize..self.offsets[i + 1] as usize
    }
    /// The bytes of entry `i` of a `uint8`-leaf list (None when null).
    pub fn bytes_of(&self, i: usize) -> Option<&[u8]> {
        if self.is_null(i) {
            return None;
        }
        match &self.values {
            ListValues::Leaf(a) if a.dtype.size() == 1 => Some(&a.bytes[self.range(i)]),
            _ => None,
        }
    }
    /// Concatenate two lists with leaf values of the same datatype.
    pub fn concat(&self, other: &ListArray) -> Result<ListArray> {
        let (ListValues::Leaf(a), ListValues::Leaf(b)) = (&self.values, &other.values) else {
            return Err(MarquetError::Unsupported("concatenating nested or string lists".into()));
        };
        let mut values = a.clone();
        values.extend(b)?;
        let base = self.child_len();
        let mut offsets = self.offsets.clone();
        offsets.extend(other.offsets.iter().skip(1).map(|o| o + base));
        let mask = match (&self.mask, &other.mask) {
            (None, None) => None,
            (m1, m2) => {
                let mut m = m1.clone().unwrap_or_else(|| vec![true; self.len()]);
                m.extend(m2.clone().unwrap_or_else(|| vec![true; other.len()]));
                Some(m)
            }
        };
        Ok(ListArray { offsets, mask, values: ListValues::Leaf(values) })
    }

    /// Number of elements at the next level.
    fn child_len(&self) -> u64 {
        self.offsets.last().copied().unwrap_or(0)
    }
}

/// How a list column's `VALUES` member is laid out.
#[derive(Debug, Clone)]
pub enum LeafSpec {
    /// A leaf dataset of `dtype`. `fill`: `None` = recommended fill, `Some(None)` = declare
    /// no fill value (required for WKB `VALUES`, HEP002 §7.2).
    Dataset {
        /// Element datatype of `VALUES`.
        dtype: Dtype,
        /// Fill value bytes (see above).
        fill: Option<Option<Vec<u8>>>,
        /// Chunk length of `VALUES`, in elements.
        chunk: u64,
        /// HDF5 filters of `VALUES`, applied in order.
        filters: Vec<Filter>,
    },
    /// A `STRING_VALUES` group.
    Strings,
    /// A nested list level.
    Nested(Box<ListSpec>),
}

/// Options for a new list column.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ListSpec {
    /// What the `VALUES` member is.
    pub leaf: LeafSpec,
    /// Create a `MASK` member from the start (it is created on demand otherwise).
    pub with_mask: bool,
    /// Chunk length of the top-level `OFFSETS` and `MASK`, in entries.
    pub offsets_chunk: u64,
    /// Filters of the top-level `OFFSETS` (default deflate 4).
    pub offsets_filters: Vec<Filter>,
    /// The `description` attribute of the column group (HEP001 §9.6).
    pub description: Option<String>,
    /// The `units` attribute, describing the leaf elements (HEP001 §9.6).
    pub units: Option<String>,
}

impl ListSpec {
    /// A list of `dtype` elements with the recommended fill and deflate.
    pub fn of(dtype: Dtype) -> ListSpec {
        let chunk = if dtype.size() == 1 { DEFAULT_BYTES_CHUNK } else { DEFAULT_OFFSETS_CHUNK };
        ListSpec {
            leaf: LeafSpec::Dataset { dtype, fill: None, chunk, filters: vec![Filter::Deflate(4)] },
            with_mask: false,
            offsets_chunk: DEFAULT_OFFSETS_CHUNK,
            offsets_filters: vec![Filter::Deflate(4)],
            description: None,
            units: None,
        }
    }
    /// Raw bytes per row: `uint8` VALUES without a fill value (the WKB layout of HEP002 §7.2).
    pub fn bytes(filters: Vec<Filter>) -> ListSpec {
        ListSpec {
            leaf: LeafSpec::Dataset { dtype: Dtype::U8, fill: Some(None), chunk: DEFAULT_BYTES_CHUNK, filters },
            with_mask: false,
            offsets_chunk: DEFAULT_OFFSETS_CHUNK,
            offsets_filters: vec![Filter::Deflate(4)],
            description: None,
            units: None,
        }
    }
    /// A list of strings (`STRING_VALUES`).
    pub fn strings() -> ListSpec {
        ListSpec {
            leaf: LeafSpec::Strings,
            with_mask: false,
            offsets_chunk: DEFAULT_OFFSETS_CHUNK,
            offsets_filters: vec![Filter::Deflate(4)],
            description: None,
            units: None,
        }
    }
    /// A list of lists.
    pub fn nested(inner: ListSpec) -> ListSpec {
        ListSpec {
            leaf: LeafSpec::Nested(Box::new(inner)),
            with_mask: false,
            offsets_chunk: DEFAULT_OFFSETS_CHUNK,
            offsets_filters: vec![Filter::Deflate(4)],
            description: None,
            units: None,
        }
    }
    /// Create the `MASK` member with the column.
    pub fn with_mask(mut self) -> Self {
        self.with_mask = true;
        self
    }
    /// Set the `description` attribute.
    pub fn with_description(mut self, d: &str) -> Self {
        self.description = Some(d.into());
        self
    }
}

fn offsets_spec(chunk: u64, len: u64, filters: &[Filter]) -> DatasetSpec {
    DatasetSpec { dtype: Dtype::U64, len, chunk: Some(chunk), filters: filters.to_vec(), fill: None }
}

/// `MASK`'s layout; it is checksummed when its `OFFSETS` are (`offsets_filters`).
fn mask_spec(chunk: u64, len: u64, offsets_filters: &[Filter]) -> DatasetSpec {
    let mut filters = vec![Filter::Deflate(4)];
    if offsets_filters.contains(&Filter::Fletcher32) {
        filters.push(Filter::Fletcher32);
    }
    DatasetSpec { dtype: Dtype::hep001_bool(), len, chunk: Some(chunk), filters, fill: None }
}

/// Create a list level (group already created at `g`) with `entries` null/empty entries.
fn create_level(g: &Hid, spec: &ListSpec, entries: u64, class: &str) -> Result<()> {
    h5::attr_write_ascii(g.id(), names::CLASS, class)?;
    if class == names::LIST_COLUMN {
        h5::attr_write_ascii(g.id(), names::KIND, names::KIND_OFFSETS)?;
    }
    let off = h5::dataset_create(g.id(), names::OFFSETS, &offsets_spec(spec.offsets_chunk, entries + 1, &spec.offsets_filters))?;
    h5::dataset_write(off.id(), 0, &Dtype::U64, &vec![0u8; 8 * (entries as usize + 1)], names::OFFSETS)?;
    if spec.with_mask || entries > 0 {
        let m = h5::dataset_create(g.id(), names::MASK, &mask_spec(spec.offsets_chunk, entries, &spec.offsets_filters))?;
        h5::dataset_write(m.id(), 0, &Dtype::hep001_bool(), &vec![0u8; entries as usize], names::MASK)?;
    }
    match &spec.leaf {
        LeafSpec::Dataset { dtype, fill, chunk, filters } => {
            let fill = match fill {
                None => recommended_fill(dtype)?,
                Some(f) => f.clone(),
            };
            h5::dataset_create(
                g.id(),
                names::VALUES,
                &DatasetSpec { dtype: dtype.clone(), len: 0, chunk: Some(*chunk), filters: filters.clone(), fill },
            )?;
        }
        LeafSpec::Strings => {
            let sg = h5::group_create(g.id(), names::VALUES)?;
            h5::attr_write_ascii(sg.id(), names::CLASS, names::STRING_VALUES)?;
            // Checksummed when the column's OFFSETS are.
            let mut filters = vec![Filter::Deflate(4)];
            if spec.offsets_filters.contains(&Filter::Fletcher32) {
                filters.push(Filter::Fletcher32);
            }
            let o = h5::dataset_create(sg.id(), names::OFFSETS, &offsets_spec(spec.offsets_chunk, 1, &filters))?;
            h5::dataset_write(o.id(), 0, &Dtype::U64, &[0u8; 8], names::OFFSETS)?;
            h5::dataset_create(
                sg.id(),
                names::CHARS,
                &DatasetSpec {
                    dtype: Dtype::U8,
                    len: 0,
                    chunk: Some(DEFAULT_BYTES_CHUNK),
                    filters,
                    fill: None,
                },
            )?;
        }
        LeafSpec::Nested(inner) => {
            let ng = h5::group_create(g.id(), names::VALUES)?;
            create_level(&ng, inner, 0, names::LIST_COLUMN)?;
        }
    }
    Ok(())
}

/// One level of an open list column.
struct Level {
    g: Hid,
    path: String,
    offsets: Hid,
    mask: Option<Hid>,
    values: LevelValues,
}

enum LevelValues {
    Leaf { ds: Hid, info: h5::DatasetInfo },
    Nested(Box<Level>),
    Strings(Box<Level>),
}

impl Level {
    fn open(g: Hid, path: String, depth: usize) -> Result<Level> {
        if depth > 32 {
            return Err(MarquetError::spec(&path, "HEP001 §9.3", "list nesting deeper than 32 levels"));
        }
        let class = read_token(g.id(), names::CLASS)?.unwrap_or_default();
        let is_strings = class == names::STRING_VALUES;
        if !is_strings {
            if class != names::LIST_COLUMN {
                return Err(MarquetError::spec(&path, "HEP001 §9.1", format!("CLASS is {class:?}, not LIST_COLUMN")));
            }
            match read_token(g.id(), names::KIND)? {
                Some(k) if k == names::KIND_OFFSETS => {}
                Some(k) => {
                    return Err(MarquetError::Unsupported(format!("{path}: list column KIND {k:?} is not implemented")))
                }
                None => return Err(MarquetError::spec(&path, "HEP001 §9.1", "list column without KIND")),
            }
        }
        let p = |m: &str| format!("{path}/{m}");
        if !h5::link_exists(g.id(), names::OFFSETS)? {
            return Err(MarquetError::spec(&path, "HEP001 §9.2", "OFFSETS member missing"));
        }
        let offsets = h5::dataset_open(g.id(), names::OFFSETS)?;
        let oi = h5::dataset_info(offsets.id(), &p(names::OFFSETS))?;
        if oi.dims.len() != 1 || !matches!(oi.dtype, Dtype::Int { size: 8, signed: false, .. }) {
            return Err(MarquetError::spec(p(names::OFFSETS), "HEP001 §9.2", "OFFSETS must be a rank-1 uint64 dataset"));
        }
        let mask = if h5::link_exists(g.id(), names::MASK)? {
            let m = h5::dataset_open(g.id(), names::MASK)?;
            let mi = h5::dataset_info(m.id(), &p(names::MASK))?;
            if !mi.dtype.is_boolean() || mi.dims.len() != 1 {
                return Err(MarquetError::spec(p(names::MASK), "HEP001 §9.2", "MASK must be a rank-1 boolean dataset"));
            }
            Some(m)
        } else {
            None
        };
        let vname = if is_strings { names::CHARS } else { names::VALUES };
        if !h5::link_exists(g.id(), vname)? {
            return Err(MarquetError::spec(&path, "HEP001 §9.2", format!("{vname} member missing")));
        }
        let vo = h5::object_open(g.id(), vname)?;
        let values = if super::object_is_group(vo.id()) {
            if is_strings {
                return Err(MarquetError::spec(p(vname), "HEP001 §9.4", "CHARS must be a dataset"));
            }
            let sub = Level::open(vo, p(vname), depth + 1)?;
            if read_token(sub.g.id(), names::CLASS)?.as_deref() == Some(names::STRING_VALUES) {
                LevelValues::Strings(Box::new(sub))
            } else {
                LevelValues::Nested(Box::new(sub))
            }
        } else {
            let info = h5::dataset_info(vo.id(), &p(vname))?;
            if info.dims.len() != 1 {
                return Err(MarquetError::spec(p(vname), "HEP001 §9.2", "VALUES must be rank 1"));
            }
            if matches!(info.dtype, Dtype::VarString { .. }) {
                return Err(MarquetError::spec(p(vname), "HEP001 §9.5", "variable-length datatype below a list column"));
            }
            if is_strings && !matches!(info.dtype, Dtype::Int { size: 1, signed: false, .. }) {
                return Err(MarquetError::spec(p(vname), "HEP001 §9.4", "CHARS must be uint8"));
            }
            LevelValues::Leaf { ds: vo, info }
        };
        Ok(Level { g, path, offsets, mask, values })
    }

    fn offsets_len(&self) -> Result<u64> {
        Ok(h5::dataset_info(self.offsets.id(), &self.path)?.dims[0])
    }

    /// Read offsets `[start, end]` (inclusive end), checked.
    fn read_offsets(&self, start: u64, end: u64) -> Result<Vec<u64>> {
        let p = format!("{}/{}", self.path, names::OFFSETS);
        let ext = self.offsets_len()?;
        if end >= ext {
            return Err(MarquetError::spec(&p, "HEP001 §9.2", format!("OFFSETS extent {ext} < {} needed", end + 1)));
        }
        let b = h5::dataset_read(self.offsets.id(), start, end - start + 1, &Dtype::U64, &p)?;
        let v: Vec<u64> = b.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect();
        if start == 0 && v.first().copied() != Some(0) {
            return Err(MarquetError::spec(&p, "HEP001 §9.2", format!("OFFSETS[0] is {}, not 0", v[0])));
        }
        for (i, w) in v.windows(2).enumerate() {
            if w[1] < w[0] {
                return Err(MarquetError::spec(
                    &p,
                    "HEP001 §9.2",
                    format!("offsets decrease at entry {}: {} then {}", start + i as u64, w[0], w[1]),
                ));
            }
        }
        Ok(v)
    }

    fn read_mask(&self, start: u64, end: u64) -> Result<Option<Vec<bool>>> {
        let Some(m) = &self.mask else { return Ok(None) };
        let p = format!("{}/{}", self.path, names::MASK);
        let ext = h5::dataset_info(m.id(), &p)?.dims[0];
        if end > ext {
            return Err(MarquetError::spec(&p, "HEP001 §9.2", format!("MASK extent {ext} < {end}")));
        }
        let b = h5::dataset_read(m.id(), start, end - start, &Dtype::hep001_bool().to_le(), &p)?;
        b.iter()
            .enumerate()
            .map(|(i, &x)| match x {
                0 => Ok(false),
                1 => Ok(true),
                v => Err(MarquetError::spec(&p, "HEP001 §8.8", format!("entry {} holds {v}, not FALSE or TRUE", start + i as u64))),
            })
            .collect::<Result<Vec<bool>>>()
            .map(Some)
    }

    /// Read entries `[start, end)` re-based to offset 0.
    fn read(&self, start: u64, end: u64) -> Result<ListArray> {
        let off = self.read_offsets(start, end)?;
        let mask = self.read_mask(start, end)?;
        if let Some(m) = &mask {
            for (i, present) in m.iter().enumerate() {
                if !present && off[i + 1] != off[i] {
                    return Err(MarquetError::spec(
                        format!("{}/{}", self.path, names::MASK),
                        "HEP001 §9.2",
                        format!("null entry {} has a non-empty slice", start + i as u64),
                    ));
                }
            }
        }
        let (a, b) = (off[0], off[off.len() - 1]);
        let offsets: Vec<u64> = off.iter().map(|o| o - a).collect();
        let values = match &self.values {
            LevelValues::Leaf { ds, info } => {
                let p = format!("{}/{}", self.path, names::VALUES);
                if b > info.dims[0] {
                    return Err(MarquetError::spec(&p, "HEP001 §9.2", format!("offsets run to {b}, past VALUES extent {}", info.dims[0])));
                }
                let mem = info.dtype.to_le();
                let bytes = h5::dataset_read(ds.id(), a, b - a, &mem, &p)?;
                ListValues::Leaf(Array { dtype: mem, bytes })
            }
            LevelValues::Nested(l) => ListValues::List(Box::new(l.read(a, b)?)),
            LevelValues::Strings(l) => {
                let s = l.read(a, b)?;
                let ListValues::Leaf(chars) = s.values else {
                    return Err(MarquetError::spec(&l.path, "HEP001 §9.4", "STRING_VALUES without CHARS"));
                };
                ListValues::Strings { offsets: s.offsets, chars: chars.bytes, mask: s.mask }
            }
        };
        Ok(ListArray { offsets, mask, values })
    }

    fn leaf_dtype(&self) -> Dtype {
        match &self.values {
            LevelValues::Leaf { info, .. } => info.dtype.to_le(),
            LevelValues::Nested(l) | LevelValues::Strings(l) => l.leaf_dtype(),
        }
    }

    fn check(&self, v: &ListArray) -> Result<()> {
        if v.offsets.first().copied() != Some(0) || v.offsets.windows(2).any(|w| w[1] < w[0]) {
            return Err(MarquetError::InvalidArgument(format!("{}: offsets must start at 0 and not decrease", self.path)));
        }
        if let Some(m) = &v.mask {
            if m.len() != v.len() {
                return Err(MarquetError::InvalidArgument(format!("{}: mask length mismatch", self.path)));
            }
            for (i, p) in m.iter().enumerate() {
                if !p && v.offsets[i + 1] != v.offsets[i] {
                    return Err(MarquetError::InvalidArgument(format!("{}: null entry {i} must be empty", self.path)));
                }
            }
        }
        let n = v.child_len();
        match (&self.values, &v.values) {
            (LevelValues::Leaf { info, .. }, ListValues::Leaf(a)) => {
                if a.dtype.to_le() != info.dtype.to_le() {
                    return Err(MarquetError::InvalidArgument(format!("{}: element type mismatch", self.path)));
                }
                if a.len() as u64 != n {
                    return Err(MarquetError::InvalidArgument(format!("{}: {} values for offsets ending at {n}", self.path, a.len())));
                }
            }
            (LevelValues::Nested(l), ListValues::List(inner)) => {
                if inner.len() as u64 != n {
                    return Err(MarquetError::InvalidArgument(format!("{}: nested entry count mismatch", self.path)));
                }
                l.check(inner)?;
            }
            (LevelValues::Strings(_), ListValues::Strings { offsets, chars, mask }) => {
                if offsets.len() as u64 != n + 1 || offsets.first().copied() != Some(0) || offsets.last().copied() != Some(chars.len() as u64) {
                    return Err(MarquetError::InvalidArgument(format!("{}: string offsets mismatch", self.path)));
                }
                if offsets.windows(2).any(|w| w[1] < w[0]) {
                    return Err(MarquetError::InvalidArgument(format!("{}: string offsets decrease", self.path)));
                }
                if mask.as_ref().is_some_and(|m| m.len() as u64 != n) {
                    return Err(MarquetError::InvalidArgument(format!("{}: string mask length mismatch", self.path)));
                }
                for w in offsets.windows(2) {
                    if std::str::from_utf8(&chars[w[0] as usize..w[1] as usize]).is_err() {
                        return Err(MarquetError::InvalidArgument(format!("{}: string is not UTF-8", self.path)));
                    }
                }
            }
            _ => return Err(MarquetError::InvalidArgument(format!("{}: list values do not match the column's nesting", self.path))),
        }
        Ok(())
    }

    /// The layout of a `MASK` created on demand with `len` entries: checksummed when this
    /// level's `OFFSETS` are.
    fn new_mask_spec(&self, len: u64) -> Result<DatasetSpec> {
        let off_path = format!("{}/{}", self.path, names::OFFSETS);
        let off_filters = h5::dataset_info(self.offsets.id(), &off_path)?.filters;
        Ok(mask_spec(DEFAULT_OFFSETS_CHUNK, len, &off_filters))
    }

    /// Append entries after the first `l_old` entries, leaf first (HEP001 §12.3 step 3).
    fn append(&mut self, l_old: u64, v: &ListArray) -> Result<()> {
        let k = v.len() as u64;
        let base = self.read_offsets(l_old, l_old)?[0];
        let child_old = base;
        // Leaf / nested values first.
        match (&mut self.values, &v.values) {
            (LevelValues::Leaf { ds, info }, ListValues::Leaf(a)) => {
                let p = format!("{}/{}", self.path, names::VALUES);
                let need = base + a.len() as u64;
                let cur = h5::dataset_info(ds.id(), &p)?.dims[0];
                if cur < need {
                    h5::dataset_set_len(ds.id(), need, &p)?;
                }
                h5::dataset_write(ds.id(), base, &info.dtype.to_le(), &a.bytes, &p)?;
            }
            (LevelValues::Nested(l), ListValues::List(inner)) => l.append(child_old, inner)?,
            (LevelValues::Strings(l), ListValues::Strings { offsets, chars, mask }) => {
                let inner = ListArray {
                    offsets: offsets.clone(),
                    mask: mask.clone(),
                    values: ListValues::Leaf(Array { dtype: Dtype::U8, bytes: chars.clone() }),
                };
                l.append(child_old, &inner)?;
            }
            _ => return Err(MarquetError::InvalidArgument(format!("{}: list values do not match", self.path))),
        }
        // MASK (create on demand when nulls first appear).
        let any_null = v.mask.as_ref().is_some_and(|m| m.iter().any(|p| !p));
        if self.mask.is_none() && any_null {
            let m = h5::dataset_create(self.g.id(), names::MASK, &self.new_mask_spec(l_old)?)?;
            h5::dataset_write(m.id(), 0, &Dtype::hep001_bool(), &vec![1u8; l_old as usize], names::MASK)?;
            self.mask = Some(m);
        }
        if let Some(m) = &self.mask {
            let p = format!("{}/{}", self.path, names::MASK);
            let cur = h5::dataset_info(m.id(), &p)?.dims[0];
            if cur < l_old + k {
                h5::dataset_set_len(m.id(), l_old + k, &p)?;
            }
            let flags: Vec<u8> = match &v.mask {
                Some(f) => f.iter().map(|&x| x as u8).collect(),
                None => vec![1u8; k as usize],
            };
            h5::dataset_write(m.id(), l_old, &Dtype::hep001_bool(), &flags, &p)?;
        }
        // OFFSETS last.
        let p = format!("{}/{}", self.path, names::OFFSETS);
        let cur = self.offsets_len()?;
        if cur < l_old + k + 1 {
            h5::dataset_set_len(self.offsets.id(), l_old + k + 1, &p)?;
        }
        let mut bytes = Vec::with_capacity(8 * k as usize);
        for o in &v.offsets[1..] {
            bytes.extend_from_slice(&(base + o).to_le_bytes());
        }
        h5::dataset_write(self.offsets.id(), l_old + 1, &Dtype::U64, &bytes, &p)?;
        Ok(())
    }
}

/// An open list column.
pub struct ListColumn {
    top: Level,
    /// The column name (the group's link name in the table group).
    pub name: String,
    /// HDF5 path of the list-column group.
    pub path: String,
}

impl ListColumn {
    pub(crate) fn create(t: &Table, name: &str, spec: &ListSpec) -> Result<()> {
        let g = h5::group_create(t.id(), name)?;
        let nrows = t.extent()?.unwrap_or(t.nrows()?);
        // Existing rows of a new list column are null (needs a MASK) — or none exist.
        let mut s = spec.clone();
        if nrows > 0 {
            s.with_mask = true;
        }
        create_level(&g, &s, nrows, names::LIST_COLUMN)?;
        if let Some(d) = &spec.description {
            h5::attr_write_utf8(g.id(), names::DESCRIPTION, d)?;
        }
        if let Some(u) = &spec.units {
            h5::attr_write_utf8(g.id(), names::UNITS, u)?;
        }
        Ok(())
    }

    pub(crate) fn open(t: &Table, name: &str) -> Result<ListColumn> {
        let path = t.member_path(name);
        let g = h5::object_open(t.id(), name)?;
        let top = Level::open(g, path.clone(), 0)?;
        Ok(ListColumn { top, name: name.to_string(), path })
    }

    internal_pub! {
        /// The group id.
        fn id(&self) -> hdf5_sys::h5i::hid_t {
            self.top.g.id()
        }
    }

    /// A text attribute of the list column's group (`DESCRIPTION`, ...; HEP001 §9),
    /// `None` when absent or not text.
    pub fn text_attr(&self, name: &str) -> Result<Option<String>> {
        Ok(h5::attr_read(self.id(), name)?.and_then(|a| a.as_str().map(|s| s.to_string())))
    }

    /// True when this is a list of bytes that holds UTF-8 text, one string per row (its
    /// `description` is [`names::TEXT_BYTES_DESCRIPTION`], local ruling L17): readers show
    /// its rows as text.
    pub fn is_text(&self) -> Result<bool> {
        Ok(self.text_attr(names::DESCRIPTION)?.as_deref() == Some(names::TEXT_BYTES_DESCRIPTION) && self.leaf_dtype()?.size() == 1)
    }

    /// Is this a list of strings (its `VALUES` member is itself a string list,
    /// `CLASS = STRING_VALUES`, HEP001 §9.4)?
    pub fn is_string_list(&self) -> Result<bool> {
        let v = h5::object_open(self.id(), names::VALUES)?;
        Ok(read_token(v.id(), names::CLASS)?.as_deref() == Some(names::STRING_VALUES))
    }

    /// The datatype of the innermost elements.
    pub fn leaf_dtype(&self) -> Result<Dtype> {
        Ok(self.top.leaf_dtype())
    }

    /// The extents of the top-level `OFFSETS` and `MASK` (if any) members, for the checks a
    /// writer makes before trusting `NROWS` (`guard::refuse_nonconformant`).
    pub(crate) fn member_extents(&self) -> Result<(u64, Option<u64>)> {
        let mask = match &self.top.mask {
            Some(m) => Some(h5::dataset_info(m.id(), &self.path)?.dims[0]),
            None => None,
        };
        Ok((self.top.offsets_len()?, mask))
    }

    /// Does the column have a `MASK` member?
    pub fn has_mask(&self) -> bool {
        self.top.mask.is_some()
    }

    /// Read entries `[start, end)` (the caller bounds them by NROWS).
    pub fn read(&self, start: u64, end: u64) -> Result<ListArray> {
        self.top.read(start, end)
    }

    /// Read top-level offsets `[start, end]`.
    pub fn offsets(&self, start: u64, end: u64) -> Result<Vec<u64>> {
        self.top.read_offsets(start, end)
    }

    /// Read top-level mask `[start, end)` (None when there is no MASK).
    pub fn mask(&self, start: u64, end: u64) -> Result<Option<Vec<bool>>> {
        self.top.read_mask(start, end)
    }

    /// Read raw leaf bytes `[a, b)` of a `uint8` leaf (for WKB columns).
    pub fn leaf_bytes(&self, a: u64, b: u64) -> Result<Vec<u8>> {
        match &self.top.values {
            LevelValues::Leaf { ds, info } => {
                let p = format!("{}/{}", self.path, names::VALUES);
                if b > info.dims[0] || a > b {
                    return Err(MarquetError::spec(&p, "HEP001 §9.2", format!("offsets run to {b}, past VALUES extent {}", info.dims[0])));
                }
                h5::dataset_read(ds.id(), a, b - a, &info.dtype.to_le(), &p)
            }
            _ => Err(MarquetError::InvalidArgument(format!("{} is nested", self.path))),
        }
    }

    /// The `VALUES` leaf dataset's info (top level only).
    pub fn values_info(&self) -> Option<&h5::DatasetInfo> {
        match &self.top.values {
            LevelValues::Leaf { info, .. } => Some(info),
            _ => None,
        }
    }

    pub(crate) fn check_values(&self, v: &ListArray) -> Result<()> {
        self.top.check(v)
    }

    pub(crate) fn append_rows(&self, n_old: u64, v: &ListArray) -> Result<()> {
        // Re-open so member handles (e.g. a MASK created on demand) are fresh.
        let mut lvl = Level::open(h5::object_open(self.top.g.id(), ".")?, self.path.clone(), 0)?;
        lvl.append(n_old, v)
    }

    /// Write entries from entry `start` on (leaf first, then MASK, then OFFSETS); the
    /// caller keeps NROWS and the procedures of HEP001 §12 in order.
    pub fn append_rows_public(&self, start: u64, v: &ListArray) -> Result<()> {
        super::guard::refuse_list_write(self.id(), &self.path)?;
        self.check_values(v)?;
        self.append_rows(start, v)
    }

    pub(crate) fn ensure_rows(&self, rows: u64) -> Result<()> {
        let p = format!("{}/{}", self.path, names::OFFSETS);
        if self.top.offsets_len()? < rows + 1 {
            h5::dataset_set_len(self.top.offsets.id(), rows + 1, &p)?;
        }
        if let Some(m) = &self.top.mask {
            let mp = format!("{}/{}", self.path, names::MASK);
            if h5::dataset_info(m.id(), &mp)?.dims[0] < rows {
                h5::dataset_set_len(m.id(), rows, &mp)?;
            }
        }
        Ok(())
    }
}
