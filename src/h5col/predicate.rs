//! Column filters — equality, range and set membership — answered with HEP001's search
//! indexes when a valid one exists (§12.2 validity check), by a scan otherwise.
//!
//! Every path returns exactly the rows a full scan returns (property-tested in
//! `tests/h5col_filters.rs`): rows in `[0, NROWS)`, ascending, whose value is not missing
//! (canonical test, HEP001 §8.5) and satisfies the predicate. NaN satisfies nothing;
//! `-0 == +0`; strings compare byte-wise after stripping padding (HEP001 §11.5).
//!
//! Which index answers (when [`IndexChoice::Auto`]): equality and membership prefer
//! `BITMAP`, then `SORTED_ROWS`, `CHUNK_BLOOM`, `CHUNK_MINMAX`; ranges prefer
//! `SORTED_ROWS`, then an exhaustive `BITMAP`, then `CHUNK_MINMAX`. A valid index that is
//! structurally unsound is an error naming the index path and the rule (ruling R12).

use std::cmp::Ordering;
use std::ops::Bound;

use super::search_index::{self, bloom, cells, key_of, Cell, Key};
use super::{categorical, Array, ColumnKind, Table};
use crate::error::{MarquetError, Result};
use crate::h5::{self, Dtype, Space};
use crate::spec::names;

/// Rows read per step of a scan when the column is contiguous.
pub const DEFAULT_SCAN_ROWS: u64 = 65_536;

/// A value in a predicate. `Text` names a label: a categorical column's category
/// (HEP001 §8.7), an enum member (booleans: `"TRUE"`/`"FALSE"`), or a string value.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    /// An integer (exact for every integer column type).
    Int(i128),
    /// A float; NaN is refused (it equals nothing).
    Float(f64),
    /// A label or a string value.
    Text(String),
}

/// A predicate on one column.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnFilter {
    /// `value == x`.
    Eq(Scalar),
    /// `lo <(=) value <(=) hi`; `Bound::Unbounded` for an open end.
    Range {
        /// Lower end.
        lo: Bound<Scalar>,
        /// Upper end.
        hi: Bound<Scalar>,
    },
    /// `value` is one of the list.
    In(Vec<Scalar>),
}

/// Which index a filter may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexChoice {
    /// The best valid index (module doc), else a scan.
    Auto,
    /// Always a full scan.
    Scan,
    /// Only this `KIND` (scan when it is absent, stale or cannot answer).
    Kind(&'static str),
}

/// What a filter did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilterStats {
    /// `KIND` of the index that answered, `None` for a full scan.
    pub index_used: Option<String>,
    /// Column values read and tested (binary-search probes for `SORTED_ROWS`; 0 for `BITMAP`).
    pub rows_examined: u64,
    /// Column chunks in `[0, NROWS)` (of [`DEFAULT_SCAN_ROWS`] rows when contiguous).
    pub chunks_total: u64,
    /// Chunks a `CHUNK_MINMAX` or `CHUNK_BLOOM` index let the filter skip.
    pub chunks_skipped: u64,
    /// Indexes on the column that failed the validity check and were ignored.
    pub stale_indexes: usize,
}

/// Matching rows (ascending) and how they were found.
#[derive(Debug, Clone, PartialEq)]
pub struct FilterOutcome {
    /// Matching rows, ascending.
    pub rows: Vec<u64>,
    /// How they were found.
    pub stats: FilterStats,
}

/// The predicate in the column's domain: sorted, disjoint, inclusive intervals.
#[derive(Debug, Clone, PartialEq)]
struct Pred {
    ivs: Vec<(Key, Key)>,
}

impl Pred {
    fn matches(&self, k: &Key) -> bool {
        // Few intervals in practice; binary search on the upper ends.
        let i = self.ivs.partition_point(|(_, hi)| hi.cmp_total(k) == Ordering::Less);
        i < self.ivs.len() && self.ivs[i].0.cmp_total(k) != Ordering::Greater
    }
    fn overlaps(&self, lo: &Key, hi: &Key) -> bool {
        self.ivs.iter().any(|(a, b)| a.cmp_total(hi) != Ordering::Greater && b.cmp_total(lo) != Ordering::Less)
    }
    /// The points, when every interval is one value.
    fn points(&self) -> Option<Vec<&Key>> {
        self.ivs.iter().map(|(a, b)| (a == b).then_some(a)).collect()
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Domain {
    Int,
    Float,
    Bytes,
}

fn domain(d: &Dtype) -> Option<Domain> {
    match d {
        Dtype::Int { .. } | Dtype::Enum { .. } => Some(Domain::Int),
        Dtype::Float { size: 4 | 8, .. } => Some(Domain::Float),
        // Variable-length strings are read as fixed-length ones (`Column::read`).
        Dtype::FixedString { .. } | Dtype::VarString { .. } | Dtype::Opaque { .. } => Some(Domain::Bytes),
        _ => None,
    }
}

/// Next float up/down (the crate's MSRV predates `f64::next_up`).
fn next_f64(x: f64, up: bool) -> f64 {
    if x.is_nan() || (up && x == f64::INFINITY) || (!up && x == f64::NEG_INFINITY) {
        return x;
    }
    if x == 0.0 {
        let tiny = f64::from_bits(1);
        return if up { tiny } else { -tiny };
    }
    let b = x.to_bits();
    f64::from_bits(if (x > 0.0) == up { b + 1 } else { b - 1 })
}

/// How a label resolves for this column: category code, enum member code, or itself.
struct Resolver {
    domain: Domain,
    categories: Option<categorical::Categories>,
    members: Option<Vec<(String, i64)>>,
    path: String,
}

impl Resolver {
    fn new(t: &Table, column: &str, dtype: &Dtype, path: &str) -> Result<Resolver> {
        let domain = domain(dtype).ok_or_else(|| {
            MarquetError::Unsupported(format!("{path}: filters are implemented for integer, enum, float, fixed-length string and opaque columns"))
        })?;
        let members = match dtype {
            Dtype::Enum { members, .. } => Some(members.clone()),
            _ => None,
        };
        Ok(Resolver { domain, categories: categorical::categories_of(t, column)?, members, path: path.to_string() })
    }

    /// `Some(key)`, or `None` when the value cannot occur in the column (e.g. 2.5 in an
    /// integer column, an unknown label): then an equality matches nothing.
    fn point(&self, s: &Scalar) -> Result<Option<Key>> {
        Ok(match (self.domain, s) {
            (Domain::Int, Scalar::Int(v)) => Some(Key::I(*v)),
            (Domain::Int, Scalar::Float(x)) => {
                if x.is_nan() {
                    return Err(self.nan());
                }
                (x.fract() == 0.0 && x.abs() < 1.7e38).then_some(Key::I(*x as i128))
            }
            (Domain::Int, Scalar::Text(label)) => {
                if let Some(c) = &self.categories {
                    c.code_of(label).map(|c| Key::I(c as i128))
                } else if let Some(m) = &self.members {
                    m.iter().find(|(n, _)| n == label).map(|(_, v)| Key::I(*v as i128))
                } else {
                    return Err(MarquetError::InvalidArgument(format!(
                        "{}: label {label:?} given for a numeric column that is neither categorical nor an enum",
                        self.path
                    )));
                }
            }
            (Domain::Float, Scalar::Int(v)) => Some(Key::F(*v as f64)),
            (Domain::Float, Scalar::Float(x)) => {
                if x.is_nan() {
                    return Err(self.nan());
                }
                Some(Key::F(if *x == 0.0 { 0.0 } else { *x }))
            }
            (Domain::Bytes, Scalar::Text(s)) => Some(Key::S(s.as_bytes().to_vec())),
            (Domain::Float, Scalar::Text(_)) | (Domain::Bytes, Scalar::Int(_) | Scalar::Float(_)) => {
                return Err(MarquetError::InvalidArgument(format!("{}: value {s:?} does not fit the column's type", self.path)))
            }
        })
    }

    fn nan(&self) -> MarquetError {
        MarquetError::InvalidArgument(format!("{}: NaN in a predicate (NaN equals nothing)", self.path))
    }

    /// The inclusive key of a range end (`lower`: the lower end), in the column's domain.
    fn bound(&self, b: &Bound<Scalar>, lower: bool) -> Result<BoundKey> {
        let (s, incl) = match b {
            Bound::Unbounded => return Ok(BoundKey::Open),
            Bound::Included(s) => (s, true),
            Bound::Excluded(s) => (s, false),
        };
        if let Scalar::Text(label) = s {
            if let Some(c) = &self.categories {
                if !c.ordered {
                    return Err(MarquetError::InvalidArgument(format!(
                        "{}: range on a categorical column whose categories are not ordered (HEP001 §8.7)",
                        self.path
                    )));
                }
                let Some(code) = c.code_of(label) else { return Err(MarquetError::InvalidArgument(format!("{}: unknown category {label:?}", self.path))) };
                return self.bound(&if incl { Bound::Included(Scalar::Int(code as i128)) } else { Bound::Excluded(Scalar::Int(code as i128)) }, lower);
            }
        }
        Ok(match (self.domain, s) {
            (Domain::Int, Scalar::Int(v)) => BoundKey::At(Key::I(match (incl, lower) {
                (true, _) => *v,
                (false, true) => v.saturating_add(1),
                (false, false) => v.saturating_sub(1),
            })),
            (Domain::Int, Scalar::Float(x)) => {
                if x.is_nan() {
                    return Err(self.nan());
                }
                if x.is_infinite() {
                    return Ok(if (*x < 0.0) == lower { BoundKey::Open } else { BoundKey::Empty });
                }
                let v = if lower {
                    if incl { x.ceil() } else { x.floor() + 1.0 }
                } else if incl {
                    x.floor()
                } else {
                    x.ceil() - 1.0
                };
                BoundKey::At(Key::I(v.clamp(-1.7e38, 1.7e38) as i128))
            }
            (Domain::Float, Scalar::Int(_) | Scalar::Float(_)) => {
                let x = match s {
                    Scalar::Int(v) => *v as f64,
                    Scalar::Float(x) => *x,
                    Scalar::Text(_) => unreachable!("matched above"),
                };
                if x.is_nan() {
                    return Err(self.nan());
                }
                // Nothing lies above +inf or below -inf.
                if !incl && x.is_infinite() && (x > 0.0) == lower {
                    return Ok(BoundKey::Empty);
                }
                BoundKey::At(Key::F(if incl { x } else { next_f64(x, lower) }))
            }
            (Domain::Int, Scalar::Text(_)) => match self.point(s)? {
                Some(Key::I(v)) => return self.bound(&if incl { Bound::Included(Scalar::Int(v)) } else { Bound::Excluded(Scalar::Int(v)) }, lower),
                _ => return Err(MarquetError::InvalidArgument(format!("{}: unknown label {s:?}", self.path))),
            },
            (Domain::Bytes, Scalar::Text(t)) => {
                let b = t.as_bytes().to_vec();
                if incl {
                    BoundKey::At(Key::S(b))
                } else if lower {
                    // The successor of b in byte order is b + [0].
                    let mut b = b;
                    b.push(0);
                    BoundKey::At(Key::S(b))
                } else {
                    BoundKey::Below(Key::S(b))
                }
            }
            _ => return Err(MarquetError::InvalidArgument(format!("{}: bound {s:?} does not fit the column's type", self.path))),
        })
    }

    fn pred(&self, f: &ColumnFilter) -> Result<Pred> {
        let mut ivs: Vec<(Key, Key)> = match f {
            ColumnFilter::Eq(s) => self.point(s)?.map(|k| vec![(k.clone(), k)]).unwrap_or_default(),
            ColumnFilter::In(v) => {
                let mut ks = Vec::new();
                for s in v {
                    if let Some(k) = self.point(s)? {
                        ks.push(k);
                    }
                }
                ks.sort_by(|a, b| a.cmp_total(b));
                ks.dedup();
                ks.into_iter().map(|k| (k.clone(), k)).collect()
            }
            ColumnFilter::Range { lo, hi } => {
                let lo = self.bound(lo, true)?;
                let hi = self.bound(hi, false)?;
                let min = match self.domain {
                    Domain::Int => Key::I(i128::MIN),
                    Domain::Float => Key::F(f64::NEG_INFINITY),
                    Domain::Bytes => Key::S(Vec::new()),
                };
                let lo = match lo {
                    BoundKey::Open => Some(min),
                    BoundKey::At(k) => Some(k),
                    BoundKey::Empty | BoundKey::Below(_) => None,
                };
                match (lo, hi) {
                    (None, _) | (_, BoundKey::Empty) => Vec::new(),
                    (Some(lo), BoundKey::Open) => vec![(lo, max_key(self.domain))],
                    (Some(lo), BoundKey::At(h)) => {
                        if lo.cmp_total(&h) == Ordering::Greater {
                            Vec::new()
                        } else {
                            vec![(lo, h)]
                        }
                    }
                    (Some(lo), BoundKey::Below(h)) => {
                        // Strings strictly below h have no largest member: keep [lo, h] here
                        // and exclude h itself through `Compiled::strict_upper`.
                        if lo.cmp_total(&h) != Ordering::Less {
                            Vec::new()
                        } else {
                            vec![(lo, h)]
                        }
                    }
                }
            }
        };
        ivs.retain(|(a, b)| a.cmp_total(b) != Ordering::Greater);
        Ok(Pred { ivs })
    }
}

enum BoundKey {
    Open,
    Empty,
    At(Key),
    /// Strictly below this key (strings only).
    Below(Key),
}

fn max_key(d: Domain) -> Key {
    match d {
        Domain::Int => Key::I(i128::MAX),
        Domain::Float => Key::F(f64::INFINITY),
        // No largest byte string: 64 KiB of 0xff is above any fixed-length string we read.
        Domain::Bytes => Key::S(vec![0xff; 1 << 16]),
    }
}

/// The compiled filter: interval predicate plus an optional strict upper bound (strings).
struct Compiled {
    pred: Pred,
    strict_upper: Option<Key>,
}

impl Compiled {
    fn test(&self, k: &Key) -> bool {
        self.pred.matches(k) && self.strict_upper.as_ref().is_none_or(|h| k.cmp_total(h) == Ordering::Less)
    }
}

fn compile(r: &Resolver, f: &ColumnFilter) -> Result<Compiled> {
    let pred = r.pred(f)?;
    let strict_upper = match f {
        ColumnFilter::Range { hi: Bound::Excluded(s @ Scalar::Text(_)), .. } if r.domain == Domain::Bytes => r.point(s)?,
        _ => None,
    };
    Ok(Compiled { pred, strict_upper })
}

/// Rows of column dataset `column` satisfying `filter`, using the best valid index.
pub fn filter_rows(t: &Table, column: &str, filter: &ColumnFilter) -> Result<FilterOutcome> {
    filter_rows_with(t, column, filter, IndexChoice::Auto)
}

/// Like [`filter_rows`], with control over which index may answer.
pub fn filter_rows_with(t: &Table, column: &str, filter: &ColumnFilter, choice: IndexChoice) -> Result<FilterOutcome> {
    if t.kind_of(column)? == Some(ColumnKind::List) {
        let lc = t.list_column(column)?;
        if lc.is_text()? {
            return filter_text_bytes(t, &lc, column, filter);
        }
    }
    if t.kind_of(column)? != Some(ColumnKind::Dataset) {
        return Err(MarquetError::InvalidArgument(format!("{} is not a column dataset", t.member_path(column))));
    }
    let col = t.column(column)?;
    let r = Resolver::new(t, column, col.dtype(), &col.path)?;
    let c = compile(&r, filter)?;
    let nrows = t.nrows()?;
    let chunk = col.chunk_rows().unwrap_or(DEFAULT_SCAN_ROWS).max(1);
    let nchunks = nrows.div_ceil(chunk);
    let mut stats = FilterStats { chunks_total: nchunks, ..Default::default() };

    let g = t.generation()?;
    let all = search_index::indexes_of(t, column)?;
    stats.stale_indexes = all.iter().filter(|i| !i.is_valid(g, nrows)).count();
    let valid: Vec<&search_index::IndexInfo> = all.iter().filter(|i| i.is_valid(g, nrows)).collect();
    let find = |kind: &str| valid.iter().find(|i| i.kind.as_deref() == Some(kind)).copied();
    let order: Vec<&str> = match choice {
        IndexChoice::Scan => vec![],
        IndexChoice::Kind(k) => vec![k],
        IndexChoice::Auto if c.pred.points().is_some() => {
            vec![names::KIND_BITMAP, names::KIND_SORTED_ROWS, names::KIND_CHUNK_BLOOM, names::KIND_CHUNK_MINMAX]
        }
        IndexChoice::Auto => vec![names::KIND_SORTED_ROWS, names::KIND_BITMAP, names::KIND_CHUNK_MINMAX],
    };
    for kind in order {
        let Some(info) = find(kind) else { continue };
        let answer = match kind {
            k if k == names::KIND_SORTED_ROWS => sorted_rows(t, &col, info, &c, nrows, &mut stats)?,
            k if k == names::KIND_BITMAP => bitmap(t, &col, info, &c, nrows, &mut stats)?,
            k if k == names::KIND_CHUNK_BLOOM => {
                let keep = bloom_chunks(t, &col, info, &c, nchunks)?;
                keep.map(|keep| scan(&col, &c, nrows, chunk, Some(&keep), &mut stats)).transpose()?
            }
            k if k == names::KIND_CHUNK_MINMAX => {
                let keep = minmax_chunks(t, &col, info, &c, nchunks)?;
                keep.map(|keep| scan(&col, &c, nrows, chunk, Some(&keep), &mut stats)).transpose()?
            }
            _ => None,
        };
        if let Some(rows) = answer {
            stats.index_used = Some(kind.to_string());
            return Ok(FilterOutcome { rows, stats });
        }
    }
    let rows = scan(&col, &c, nrows, chunk, None, &mut stats)?;
    Ok(FilterOutcome { rows, stats })
}

/// A filter on text stored as a list of bytes (local ruling L17): a scan that compares each
/// row's bytes as a string column's value would be compared (no index applies).
fn filter_text_bytes(t: &Table, lc: &super::list::ListColumn, column: &str, filter: &ColumnFilter) -> Result<FilterOutcome> {
    let dt = Dtype::FixedString { size: 2, utf8: true, nullterm: true, spacepad: false };
    let c = compile(&Resolver::new(t, column, &dt, &lc.path)?, filter)?;
    let nrows = t.nrows()?;
    let mut stats = FilterStats { chunks_total: nrows.div_ceil(DEFAULT_SCAN_ROWS), ..Default::default() };
    let mut rows = Vec::new();
    let mut start = 0;
    while start < nrows {
        let end = start.saturating_add(DEFAULT_SCAN_ROWS).min(nrows);
        let l = lc.read(start, end)?;
        stats.rows_examined += end - start;
        for i in 0..l.len() {
            if l.bytes_of(i).is_some_and(|b| c.test(&Key::S(b.to_vec()))) {
                rows.push(start + i as u64);
            }
        }
        start = end;
    }
    Ok(FilterOutcome { rows, stats })
}

/// Read chunk after chunk (those `keep` allows) and test every value.
fn scan(col: &super::Column, c: &Compiled, nrows: u64, chunk: u64, keep: Option<&[bool]>, stats: &mut FilterStats) -> Result<Vec<u64>> {
    let mut rows = Vec::new();
    for (ci, start) in (0..nrows).step_by(chunk as usize).enumerate() {
        if keep.is_some_and(|k| !k.get(ci).copied().unwrap_or(true)) {
            stats.chunks_skipped += 1;
            continue;
        }
        let n = chunk.min(nrows - start);
        let a = col.read(start, n)?;
        stats.rows_examined += n;
        test_array(&a, col.fill(), c, start, &mut rows);
    }
    Ok(rows)
}

fn test_array(a: &Array, fill: Option<&[u8]>, c: &Compiled, start: u64, rows: &mut Vec<u64>) {
    // Fast paths for the common numeric layouts; the generic path handles the rest.
    match &a.dtype {
        Dtype::Int { size: 8, signed: true, .. } | Dtype::Float { size: 8, .. } => {
            let is_f = matches!(a.dtype, Dtype::Float { .. });
            for (i, e) in a.bytes.chunks_exact(8).enumerate() {
                if fill.is_some_and(|f| super::is_missing(&a.dtype, e, Some(f))) {
                    continue;
                }
                let b: [u8; 8] = e.try_into().unwrap_or([0; 8]);
                let k = if is_f {
                    let v = f64::from_le_bytes(b);
                    if v.is_nan() {
                        continue;
                    }
                    Key::F(v)
                } else {
                    Key::I(i64::from_le_bytes(b) as i128)
                };
                if c.test(&k) {
                    rows.push(start + i as u64);
                }
            }
        }
        _ => {
            for (i, cell) in cells(a, fill).into_iter().enumerate() {
                if let Cell::Value(k) = cell {
                    if c.test(&k) {
                        rows.push(start + i as u64);
                    }
                }
            }
        }
    }
}

fn u64_attr(ds: hdf5_sys::h5i::hid_t, name: &str) -> Result<Option<u64>> {
    Ok(h5::attr_read(ds, name)?.and_then(|a| match (&a.dtype, &a.space) {
        // Any integer width and signedness, not negative (ruling R3).
        (Dtype::Int { .. }, Space::Scalar) => a.as_u64(),
        _ => None,
    }))
}

/// `SORTED_ROWS` (HEP001 §11.5): binary searches over the permutation, one column value
/// read per probe; the matching rank ranges are read whole and sorted.
fn sorted_rows(t: &Table, col: &super::Column, info: &search_index::IndexInfo, c: &Compiled, n: u64, stats: &mut FilterStats) -> Result<Option<Vec<u64>>> {
    let path = &info.path;
    let ds = h5::dataset_open(t.id(), path)?;
    let di = h5::dataset_info(ds.id(), path)?;
    let bad = |m: String| MarquetError::spec(path.as_str(), "HEP001 §11.5", m);
    if di.dims.len() != 1 || di.dims[0] < n || !matches!(di.dtype, Dtype::Int { signed: false, .. }) {
        return Err(bad(format!("shape {:?} of {:?} is not ({n},) of an unsigned integer", di.dims, di.dtype)));
    }
    let nan = u64_attr(ds.id(), names::NAN_TAIL_LENGTH)?.ok_or_else(|| bad("nan_tail_length is missing".into()))?;
    let fill = u64_attr(ds.id(), names::FILL_TAIL_LENGTH)?.ok_or_else(|| bad("fill_tail_length is missing".into()))?;
    let ordered_len = nan.checked_add(fill).and_then(|tails| n.checked_sub(tails)).ok_or_else(|| bad(format!("tails {nan} + {fill} exceed NROWS {n}")))?;
    let read_ranks = |a: u64, b: u64| -> Result<Vec<u64>> {
        let bytes = h5::dataset_read(ds.id(), a, b - a, &Dtype::U64, path)?;
        let rows: Vec<u64> = bytes.chunks_exact(8).map(|e| u64::from_le_bytes(e.try_into().unwrap_or([0; 8]))).collect();
        if let Some(r) = rows.iter().find(|&&r| r >= n) {
            return Err(bad(format!("row {r} is not below NROWS {n}")));
        }
        Ok(rows)
    };
    let mut probes = 0u64;
    // A filtered (compressed) column decompresses a whole chunk for every element read,
    // and HDF5's default chunk cache holds about one: keep the chunks the binary search has
    // touched (at most ~2·log2(NROWS) of them). Unfiltered columns read single elements.
    let cached = !col.info.filters.is_empty();
    let chunk = col.chunk_rows().unwrap_or(n).max(1);
    let mut cache: std::collections::HashMap<u64, Array> = std::collections::HashMap::new();
    let mut key_at = |rank: u64| -> Result<Option<Key>> {
        probes += 1;
        let row = read_ranks(rank, rank + 1)?[0];
        if !cached {
            return Ok(key_of(&col.read(row, 1)?, 0));
        }
        let ci = row / chunk;
        if let std::collections::hash_map::Entry::Vacant(e) = cache.entry(ci) {
            let start = ci * chunk;
            e.insert(col.read(start, chunk.min(n - start))?);
        }
        Ok(cache.get(&ci).and_then(|a| key_of(a, (row - ci * chunk) as usize)))
    };
    // First rank in [0, ordered_len) whose key is not `before` the target.
    let mut lower = |pred: &dyn Fn(&Key) -> bool| -> Result<u64> {
        let (mut lo, mut hi) = (0u64, ordered_len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match key_at(mid)? {
                Some(k) if pred(&k) => lo = mid + 1,
                _ => hi = mid,
            }
        }
        Ok(lo)
    };
    let mut ranges = Vec::new();
    for (a, b) in &c.pred.ivs {
        let r0 = lower(&|k: &Key| k.cmp_total(a) == Ordering::Less)?;
        let r1 = lower(&|k: &Key| k.cmp_total(b) != Ordering::Greater)?;
        if r1 > r0 {
            ranges.push((r0, r1));
        }
    }
    stats.rows_examined += probes;
    let mut rows = Vec::new();
    for (a, b) in ranges {
        rows.extend(read_ranks(a, b)?);
    }
    if let Some(h) = &c.strict_upper {
        // `< "s"` on strings: drop rows equal to s (one more read per candidate row).
        let mut keep = Vec::with_capacity(rows.len());
        for r in rows {
            if col.read(r, 1).ok().and_then(|a| key_of(&a, 0)).is_some_and(|k| k.cmp_total(h) == Ordering::Less) {
                keep.push(r);
            }
        }
        rows = keep;
    }
    rows.sort_unstable();
    rows.dedup();
    Ok(Some(rows))
}

/// `BITMAP` (HEP001 §11.6): the rows of every listed value that satisfies the filter.
/// Answers only when the list provably covers the filter: `exhaustive` TRUE, or (for
/// equality and membership) every queried value listed.
fn bitmap(t: &Table, col: &super::Column, info: &search_index::IndexInfo, c: &Compiled, n: u64, stats: &mut FilterStats) -> Result<Option<Vec<u64>>> {
    let _ = stats;
    let path = &info.path;
    let ds = h5::dataset_open(t.id(), path)?;
    let di = h5::dataset_info(ds.id(), path)?;
    let bad = |m: String| MarquetError::spec(path.as_str(), "HEP001 §11.6", m);
    let nbytes = n.div_ceil(8);
    if di.dims.len() != 2 || di.dims[1] < nbytes || !matches!(di.dtype, Dtype::Int { size: 1, .. }) {
        return Err(bad(format!("shape {:?} is not (K, ceil(NROWS / 8) = {nbytes}) of uint8", di.dims)));
    }
    let Some((refs, _, _)) = h5::attr_read_refs(ds.id(), names::VALUES)? else { return Err(bad("VALUES reference is missing".into())) };
    let vpath = refs.into_iter().flatten().next().filter(|p| !p.is_empty()).ok_or_else(|| bad("VALUES is a null reference".into()))?;
    let vds = h5::dataset_open(t.id(), &vpath)?;
    let vi = h5::dataset_info(vds.id(), &vpath)?;
    let kk = di.dims[0];
    if kk > search_index::MAX_READ_BITMAP_VALUES {
        return Err(bad(format!("{kk} values, more than this reader accepts ({})", search_index::MAX_READ_BITMAP_VALUES)));
    }
    if vi.dims.len() != 1 || vi.dims[0] != kk || vi.dtype.to_le() != col.dtype().to_le() {
        return Err(bad(format!("values dataset {vpath} is not ({kk},) of the column's datatype")));
    }
    let exhaustive = search_index::read_bool_attr(ds.id(), names::EXHAUSTIVE)? == Some(true);
    let vals = Array { dtype: vi.dtype.to_le(), bytes: h5::dataset_read(vds.id(), 0, kk, &vi.dtype.to_le(), &vpath)? };
    let keys: Vec<Option<Key>> = (0..vals.len()).map(|i| key_of(&vals, i)).collect();
    if !exhaustive {
        let Some(points) = c.pred.points() else { return Ok(None) };
        if !points.iter().all(|p| keys.iter().any(|k| k.as_ref() == Some(*p))) {
            return Ok(None);
        }
    }
    let mut bits = vec![0u8; nbytes as usize];
    for (j, k) in keys.iter().enumerate() {
        if k.as_ref().is_some_and(|k| c.test(k)) {
            let row = h5::dataset_read_rows_2d(ds.id(), j as u64, 1, nbytes, &Dtype::U8, path)?;
            for (b, r) in bits.iter_mut().zip(&row) {
                *b |= r;
            }
        }
    }
    let mut rows = Vec::new();
    for (i, &b) in bits.iter().enumerate() {
        let mut b = b;
        while b != 0 {
            let bit = b.trailing_zeros() as u64;
            let r = i as u64 * 8 + bit;
            if r < n {
                rows.push(r); // padding bits past NROWS are ignored (§11.6)
            }
            b &= b - 1;
        }
    }
    Ok(Some(rows))
}

/// `CHUNK_BLOOM` (HEP001 §11.7): which chunks may hold one of the queried values.
/// Only for equality and membership; `None` for ranges.
fn bloom_chunks(t: &Table, col: &super::Column, info: &search_index::IndexInfo, c: &Compiled, nchunks: u64) -> Result<Option<Vec<bool>>> {
    let Some(points) = c.pred.points() else { return Ok(None) };
    let (p, dims) = search_index::bloom_params(t, &info.path)?;
    if dims[0] < nchunks {
        return Err(MarquetError::spec(info.path.as_str(), "HEP001 §11.7", format!("{} filter rows for {nchunks} chunks", dims[0])));
    }
    // Canonical bytes of each queried value at the column's storage width; a value the
    // column cannot hold (300 in an int8 column, 0.1 in a float32 one) is in no chunk.
    let dt = col.dtype().to_le();
    let mut queries = Vec::new();
    for k in points {
        if let Some(b) = encode_key(&dt, k) {
            if let Some(cb) = bloom::canonical_bytes(&dt, &b) {
                queries.push(cb);
            }
        }
    }
    let ds = h5::dataset_open(t.id(), &info.path)?;
    let mut keep = vec![false; nchunks as usize];
    if queries.is_empty() {
        return Ok(Some(keep));
    }
    for (ci, kp) in keep.iter_mut().enumerate() {
        let row = h5::dataset_read_rows_2d(ds.id(), ci as u64, 1, dims[1], &Dtype::U8, &info.path)?;
        *kp = queries.iter().any(|q| bloom::may_contain(&row, q, p.k, p.seed));
    }
    Ok(Some(keep))
}

/// `k` as one element of `dt` (little-endian), if the type can hold it exactly.
fn encode_key(dt: &Dtype, k: &Key) -> Option<Vec<u8>> {
    match (dt, k) {
        (Dtype::Int { size, signed, .. }, Key::I(v)) => int_bytes(*v, *size, *signed),
        (Dtype::Enum { base, .. }, Key::I(v)) => match &**base {
            Dtype::Int { size, signed, .. } => int_bytes(*v, *size, *signed),
            _ => None,
        },
        (Dtype::Float { size: 8, .. }, Key::F(v)) => Some(v.to_le_bytes().to_vec()),
        (Dtype::Float { size: 4, .. }, Key::F(v)) => ((*v as f32) as f64 == *v).then(|| (*v as f32).to_le_bytes().to_vec()),
        (Dtype::FixedString { size, .. }, Key::S(s)) => {
            (s.len() <= *size && !s.contains(&0)).then(|| {
                let mut b = s.clone();
                b.resize(*size, 0);
                b
            })
        }
        (Dtype::Opaque { size, .. }, Key::S(s)) => (s.len() == *size).then(|| s.clone()),
        _ => None,
    }
}

fn int_bytes(v: i128, size: usize, signed: bool) -> Option<Vec<u8>> {
    let bits = (size * 8) as u32;
    let ok = if signed {
        bits >= 128 || (v >= -(1i128 << (bits - 1)) && v < (1i128 << (bits - 1)))
    } else {
        v >= 0 && (bits >= 128 || v < (1i128 << bits))
    };
    ok.then(|| v.to_le_bytes()[..size].to_vec())
}

/// `CHUNK_MINMAX` (HEP001 §11.4): which chunks' `[min, max]` overlap the predicate.
fn minmax_chunks(t: &Table, col: &super::Column, info: &search_index::IndexInfo, c: &Compiled, nchunks: u64) -> Result<Option<Vec<bool>>> {
    let dt = search_index::chunk_minmax_dtype(col.dtype());
    let ds = h5::dataset_open(t.id(), &info.path)?;
    let di = h5::dataset_info(ds.id(), &info.path)?;
    if di.dims.len() != 1 || di.dims[0] < nchunks || di.dtype.to_le() != dt {
        return Err(MarquetError::spec(
            info.path.as_str(),
            "HEP001 §11.4",
            format!("shape {:?} / datatype is not ({nchunks},) of {{min, max, nan_count, fill_count, n}}", di.dims),
        ));
    }
    let es = col.dtype().size();
    let e = Array { dtype: dt.clone(), bytes: h5::dataset_read(ds.id(), 0, nchunks, &dt, &info.path)? };
    let is_float = matches!(col.dtype(), Dtype::Float { .. });
    let mut keep = Vec::with_capacity(nchunks as usize);
    for i in 0..nchunks as usize {
        let b = e.element(i);
        let cnt = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap_or([0; 8]));
        let (nan, fillc, n) = (cnt(2 * es), cnt(2 * es + 8), cnt(2 * es + 16));
        let none = if is_float { fillc.saturating_add(nan) >= n } else { fillc >= n };
        if none {
            keep.push(false);
            continue;
        }
        let mm = Array { dtype: col.dtype().to_le(), bytes: b[..2 * es].to_vec() };
        // A NaN bound (a damaged entry) never prunes (local ruling L4).
        keep.push(match (key_of(&mm, 0), key_of(&mm, 1)) {
            (Some(lo), Some(hi)) => c.pred.overlaps(&lo, &hi),
            _ => true,
        });
    }
    Ok(Some(keep))
}

/// Rows whose row labels (HEP001 §10, `INDEX_COLUMNS`, outermost first) equal `labels`
/// level by level; fewer labels than levels match on the outer levels only.
pub fn rows_with_labels(t: &Table, labels: &[Scalar]) -> Result<Vec<u64>> {
    let levels = t.index_columns()?;
    if levels.is_empty() {
        return Err(MarquetError::InvalidArgument(format!("{}: the table has no row index columns (INDEX_COLUMNS)", t.path())));
    }
    if labels.len() > levels.len() {
        return Err(MarquetError::InvalidArgument(format!("{} labels for {} index levels", labels.len(), levels.len())));
    }
    let mut rows: Option<Vec<u64>> = None;
    for (col, l) in levels.iter().zip(labels) {
        let r = filter_rows(t, col, &ColumnFilter::Eq(l.clone()))?.rows;
        rows = Some(match rows {
            None => r,
            Some(prev) => intersect(&prev, &r),
        });
    }
    Ok(rows.unwrap_or_default())
}

/// Intersection of two ascending row lists.
pub fn intersect(a: &[u64], b: &[u64]) -> Vec<u64> {
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            Ordering::Less => i += 1,
            Ordering::Greater => j += 1,
            Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_bounds_round_inward() {
        let r = Resolver { domain: Domain::Int, categories: None, members: None, path: "/t/c".into() };
        let p = r.pred(&ColumnFilter::Range { lo: Bound::Excluded(Scalar::Float(1.5)), hi: Bound::Excluded(Scalar::Int(5)) }).unwrap();
        assert_eq!(p.ivs, vec![(Key::I(2), Key::I(4))]);
        let p = r.pred(&ColumnFilter::Range { lo: Bound::Included(Scalar::Float(1.5)), hi: Bound::Included(Scalar::Float(1.7)) }).unwrap();
        assert!(p.ivs.is_empty());
        assert!(r.pred(&ColumnFilter::Eq(Scalar::Float(2.5))).unwrap().ivs.is_empty());
        let p = r.pred(&ColumnFilter::In(vec![Scalar::Int(3), Scalar::Int(1), Scalar::Int(3)])).unwrap();
        assert_eq!(p.ivs, vec![(Key::I(1), Key::I(1)), (Key::I(3), Key::I(3))]);
        assert!(r.pred(&ColumnFilter::Eq(Scalar::Float(f64::NAN))).is_err());
    }

    #[test]
    fn float_exclusive_bounds_step_one_ulp() {
        let r = Resolver { domain: Domain::Float, categories: None, members: None, path: "/t/c".into() };
        let c = compile(&r, &ColumnFilter::Range { lo: Bound::Excluded(Scalar::Float(1.0)), hi: Bound::Unbounded }).unwrap();
        assert!(!c.test(&Key::F(1.0)));
        assert!(c.test(&Key::F(next_f64(1.0, true))));
        assert!(c.test(&Key::F(f64::INFINITY)));
        let c = compile(&r, &ColumnFilter::Eq(Scalar::Float(-0.0))).unwrap();
        assert!(c.test(&Key::F(0.0)));
    }

    #[test]
    fn int_bytes_respects_width_and_sign() {
        assert_eq!(int_bytes(-1, 1, true), Some(vec![0xff]));
        assert_eq!(int_bytes(128, 1, true), None);
        assert_eq!(int_bytes(255, 1, false), Some(vec![0xff]));
        assert_eq!(int_bytes(-1, 8, false), None);
        assert_eq!(intersect(&[1, 3, 5, 7], &[3, 4, 7]), vec![3, 7]);
    }
}

/// Parse a simple predicate `"COLUMN OP VALUE"` (the CLI's `--where`): OP is one of `=`,
/// `==`, `<`, `<=`, `>`, `>=`, or `in` followed by a comma-separated list; VALUE is an
/// integer, else a float, else text (single or double quotes are stripped, and quoting
/// forces text: `code = '42'`). The column name may not contain spaces or operator characters.
pub fn parse_where(s: &str) -> Result<(String, ColumnFilter)> {
    let bad = || MarquetError::InvalidArgument(format!("--where {s:?}: expected \"COLUMN OP VALUE\" with OP one of = == < <= > >= in"));
    let s = s.trim();
    let name_end = s.find(|c: char| c.is_whitespace() || "=<>".contains(c)).ok_or_else(bad)?;
    let (col, rest) = s.split_at(name_end);
    let rest = rest.trim_start();
    let (op, val) = if let Some(v) = rest.strip_prefix("in ").or_else(|| rest.strip_prefix("IN ")) {
        ("in", v)
    } else {
        let ops = ["==", "<=", ">=", "=", "<", ">"];
        let op = ops.iter().find(|o| rest.starts_with(**o)).ok_or_else(bad)?;
        (*op, &rest[op.len()..])
    };
    let val = val.trim();
    if col.is_empty() || val.is_empty() {
        return Err(bad());
    }
    let f = match op {
        "in" => ColumnFilter::In(val.trim_matches(|c| c == '(' || c == ')').split(',').map(|v| parse_scalar(v.trim())).collect()),
        "=" | "==" => ColumnFilter::Eq(parse_scalar(val)),
        "<" => ColumnFilter::Range { lo: Bound::Unbounded, hi: Bound::Excluded(parse_scalar(val)) },
        "<=" => ColumnFilter::Range { lo: Bound::Unbounded, hi: Bound::Included(parse_scalar(val)) },
        ">" => ColumnFilter::Range { lo: Bound::Excluded(parse_scalar(val)), hi: Bound::Unbounded },
        _ => ColumnFilter::Range { lo: Bound::Included(parse_scalar(val)), hi: Bound::Unbounded },
    };
    Ok((col.to_string(), f))
}

/// An integer, else a (non-NaN) float, else text; quotes force text.
pub fn parse_scalar(v: &str) -> Scalar {
    for q in ['\'', '"'] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return Scalar::Text(v[1..v.len() - 1].to_string());
        }
    }
    if let Ok(i) = v.parse::<i128>() {
        return Scalar::Int(i);
    }
    match v.parse::<f64>() {
        Ok(x) if !x.is_nan() => Scalar::Float(x),
        _ => Scalar::Text(v.to_string()),
    }
}

/// Rows satisfying every filter (AND), each answered with its best valid index
/// (`use_indexes` false: every one by a scan). Returns the rows and each filter's stats.
pub fn filter_all(t: &Table, filters: &[(String, ColumnFilter)], use_indexes: bool) -> Result<(Vec<u64>, Vec<FilterStats>)> {
    let choice = if use_indexes { IndexChoice::Auto } else { IndexChoice::Scan };
    let mut rows: Option<Vec<u64>> = None;
    let mut stats = Vec::new();
    for (col, f) in filters {
        let out = filter_rows_with(t, col, f, choice)?;
        stats.push(out.stats);
        rows = Some(match rows {
            None => out.rows,
            Some(prev) => intersect(&prev, &out.rows),
        });
    }
    let all = match rows {
        Some(r) => r,
        None => (0..t.nrows()?).collect(),
    };
    Ok((all, stats))
}

#[cfg(test)]
mod parse_tests {
    use super::*;

    #[test]
    fn where_clauses() {
        assert_eq!(parse_where("pop >= 1000").unwrap(), ("pop".into(), ColumnFilter::Range { lo: Bound::Included(Scalar::Int(1000)), hi: Bound::Unbounded }));
        assert_eq!(parse_where("x<2.5").unwrap(), ("x".into(), ColumnFilter::Range { lo: Bound::Unbounded, hi: Bound::Excluded(Scalar::Float(2.5)) }));
        assert_eq!(parse_where("name = 'Lake Erie'").unwrap(), ("name".into(), ColumnFilter::Eq(Scalar::Text("Lake Erie".into()))));
        assert_eq!(parse_where("code == \"42\"").unwrap(), ("code".into(), ColumnFilter::Eq(Scalar::Text("42".into()))));
        assert_eq!(
            parse_where("kind in (a, 2, 3.5)").unwrap(),
            ("kind".into(), ColumnFilter::In(vec![Scalar::Text("a".into()), Scalar::Int(2), Scalar::Float(3.5)]))
        );
        assert_eq!(parse_where("v > -3").unwrap().1, ColumnFilter::Range { lo: Bound::Excluded(Scalar::Int(-3)), hi: Bound::Unbounded });
        for bad in ["", "x", "x ~ 3", "x =", "= 3"] {
            assert!(parse_where(bad).is_err(), "{bad:?}");
        }
    }
}
