//! The search-index framework of HEP001 §11–§12 and the `CHUNK_MINMAX` kind (§11.4).
//!
//! Validity tokens: an index is used only when `SOURCE_GENERATION == GENERATION` and
//! `SOURCE_NROWS == NROWS` (§12.2). Appends and truncations write the future tokens
//! before the content; in-place updates bump GENERATION first and restore tokens after
//! the content (content-before-tokens).

use super::{read_token, Array, ColumnKind, Table};
use crate::error::{MarquetError, Result};
use crate::h5::{self, DatasetSpec, Dtype, Field, Filter, Hid, Space};
use crate::spec::names;

/// A search-index dataset as found through a column's `SEARCH_INDEX_LIST`.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexInfo {
    /// Absolute HDF5 path of the index dataset.
    pub path: String,
    /// The column it is linked from.
    pub column: String,
    pub kind: Option<String>,
    pub source_generation: Option<u64>,
    pub source_nrows: Option<u64>,
}

impl IndexInfo {
    /// The consumer validity check of HEP001 §12.2.
    pub fn is_valid(&self, generation: Option<u64>, nrows: u64) -> bool {
        matches!((self.source_generation, generation), (Some(a), Some(b)) if a == b) && self.source_nrows == Some(nrows)
    }
}

/// A validity token: a scalar integer of any width and signedness, not negative (ruling
/// R3; the validator accepts signed tokens with a warning, so readers read them).
fn token(id: hdf5_sys::h5i::hid_t, name: &str) -> Result<Option<u64>> {
    Ok(h5::attr_read(id, name)?.and_then(|a| match (&a.dtype, &a.space) {
        (Dtype::Int { .. }, Space::Scalar) => a.as_u64(),
        _ => None,
    }))
}

/// Read an index's KIND and tokens.
pub fn index_info(t: &Table, path: &str, column: &str) -> Result<IndexInfo> {
    let o = h5::object_open(t.id(), path)?;
    Ok(IndexInfo {
        path: path.to_string(),
        column: column.to_string(),
        kind: read_token(o.id(), names::KIND)?,
        source_generation: token(o.id(), names::SOURCE_GENERATION)?,
        source_nrows: token(o.id(), names::SOURCE_NROWS)?,
    })
}

/// The indexes linked from column `name` (dataset or list column).
pub fn indexes_of(t: &Table, name: &str) -> Result<Vec<IndexInfo>> {
    let o = h5::object_open(t.id(), name)?;
    let Some((refs, _, _)) = h5::attr_read_refs(o.id(), names::SEARCH_INDEX_LIST)? else { return Ok(Vec::new()) };
    let mut out = Vec::new();
    // A reference to an unlinked object resolves to an empty path: it names no index.
    for p in refs.into_iter().flatten().filter(|p| !p.is_empty()) {
        out.push(index_info(t, &p, name)?);
    }
    Ok(out)
}

/// Every index of the table, with the column linking it.
pub fn all_indexes(t: &Table) -> Result<Vec<IndexInfo>> {
    let mut out = Vec::new();
    for c in t.discover_columns()? {
        out.extend(indexes_of(t, &c)?);
    }
    Ok(out)
}

/// The valid index of `kind` on `column`, if any.
pub fn valid_index(t: &Table, column: &str, kind: &str) -> Result<Option<IndexInfo>> {
    let g = t.generation()?;
    let n = t.nrows()?;
    Ok(indexes_of(t, column)?.into_iter().find(|i| i.kind.as_deref() == Some(kind) && i.is_valid(g, n)))
}

/// Write `SOURCE_GENERATION` and `SOURCE_NROWS` on an index dataset.
pub fn write_tokens(t: &Table, path: &str, generation: u64, nrows: u64) -> Result<()> {
    let o = h5::object_open(t.id(), path)?;
    h5::attr_write_u64(o.id(), names::SOURCE_GENERATION, generation)?;
    h5::attr_write_u64(o.id(), names::SOURCE_NROWS, nrows)
}

/// Make sure the table carries `GENERATION` (0 when it did not, HEP001 §12.2).
pub fn ensure_generation(t: &Table) -> Result<u64> {
    match t.generation()? {
        Some(g) => Ok(g),
        None => {
            h5::attr_write_u64(t.id(), names::GENERATION, 0)?;
            Ok(0)
        }
    }
}

/// Create (or, when it exists, resize in place — never delete-and-recreate, §11.3) the
/// index dataset `SEARCH_INDEXES/<index_name>` for `column`, link it from the column's
/// `SEARCH_INDEX_LIST`, and write its KIND. Tokens are the caller's job.
pub fn create_index_dataset(t: &Table, column: &str, index_name: &str, spec: &DatasetSpec, kind: &str) -> Result<Hid> {
    if !h5::link_exists(t.id(), names::SEARCH_INDEXES)? {
        h5::group_create(t.id(), names::SEARCH_INDEXES)?;
    }
    ensure_generation(t)?;
    let rel = format!("{}/{}", names::SEARCH_INDEXES, index_name);
    let ds = if h5::link_exists(t.id(), &rel)? {
        let ds = h5::dataset_open(t.id(), &rel)?;
        let info = h5::dataset_info(ds.id(), &rel)?;
        if info.dtype.to_le() != spec.dtype.to_le() {
            return Err(MarquetError::InvalidArgument(format!(
                "{}: an index of another layout exists at this name",
                t.member_path(&rel)
            )));
        }
        ds
    } else {
        h5::dataset_create(t.id(), &rel, spec)?
    };
    link_index(t, column, ds.id(), &t.member_path(&rel), kind)?;
    Ok(ds)
}

/// Write an index dataset's `KIND` and link it (absolute path `abs`) from the column's
/// `SEARCH_INDEX_LIST` (HEP001 §11.2), once.
pub(crate) fn link_index(t: &Table, column: &str, ds: hdf5_sys::h5i::hid_t, abs: &str, kind: &str) -> Result<()> {
    h5::attr_write_ascii(ds, names::KIND, kind)?;
    let col = h5::object_open(t.id(), column)?;
    let mut targets: Vec<String> = match h5::attr_read_refs(col.id(), names::SEARCH_INDEX_LIST)? {
        Some((refs, _, _)) => refs.into_iter().flatten().collect(),
        None => Vec::new(),
    };
    if !targets.iter().any(|p| p == abs) {
        targets.push(abs.to_string());
        h5::attr_write_refs(col.id(), names::SEARCH_INDEX_LIST, &targets, false)?;
    }
    Ok(())
}

/// Remove an index: unlink it from its column's `SEARCH_INDEX_LIST` and delete it.
pub fn drop_index(t: &Table, info: &IndexInfo) -> Result<()> {
    let col = h5::object_open(t.id(), &info.column)?;
    if let Some((refs, _, _)) = h5::attr_read_refs(col.id(), names::SEARCH_INDEX_LIST)? {
        let rest: Vec<String> = refs.into_iter().flatten().filter(|p| *p != info.path).collect();
        if rest.is_empty() {
            h5::attr_delete(col.id(), names::SEARCH_INDEX_LIST)?;
        } else {
            h5::attr_write_refs(col.id(), names::SEARCH_INDEX_LIST, &rest, false)?;
        }
    }
    h5::link_delete(t.id(), &info.path)
}

// ---------------------------------------------------------------- CHUNK_MINMAX

/// The compound datatype of a CHUNK_MINMAX index over a column of `elem` (HEP001 §11.4).
pub fn chunk_minmax_dtype(elem: &Dtype) -> Dtype {
    let es = elem.size();
    let mut fields = vec![
        Field { name: "min".into(), offset: 0, dtype: elem.to_le() },
        Field { name: "max".into(), offset: es, dtype: elem.to_le() },
    ];
    for (i, n) in ["nan_count", "fill_count", "n"].iter().enumerate() {
        fields.push(Field { name: (*n).into(), offset: 2 * es + 8 * i, dtype: Dtype::U64 });
    }
    Dtype::Compound { size: 2 * es + 24, fields }
}

fn numeric_order_supported(d: &Dtype) -> bool {
    matches!(d, Dtype::Int { .. } | Dtype::Float { .. }) || matches!(d, Dtype::Enum { .. })
}

/// One CHUNK_MINMAX entry computed from the rows of one chunk.
fn minmax_entry(a: &Array, fill: Option<&[u8]>) -> Vec<u8> {
    let es = a.dtype.size();
    let is_float = matches!(a.dtype, Dtype::Float { .. });
    let mut nan = 0u64;
    let mut fillc = 0u64;
    let mut best: Option<(usize, usize)> = None; // indices of min and max
    for i in 0..a.len() {
        let e = a.element(i);
        let v = a.get_f64(i).unwrap_or(0.0);
        let missing = super::is_missing(&a.dtype, e, fill);
        if is_float && v.is_nan() {
            nan += 1;
            if missing {
                fillc += 1;
            }
            continue;
        }
        if missing {
            fillc += 1;
            continue;
        }
        best = Some(match best {
            None => (i, i),
            Some((lo, hi)) => {
                let (lo_v, hi_v) = (cmp_key(a, lo), cmp_key(a, hi));
                let k = cmp_key(a, i);
                (if k < lo_v { i } else { lo }, if k > hi_v { i } else { hi })
            }
        });
    }
    let mut out = Vec::with_capacity(2 * es + 24);
    match best {
        Some((lo, hi)) => {
            out.extend_from_slice(a.element(lo));
            out.extend_from_slice(a.element(hi));
        }
        None => {
            // Placeholders: the fill value (HEP001 §11.4); consumers detect such chunks by counts.
            let f = fill.map(|f| f.to_vec()).unwrap_or_else(|| vec![0u8; es]);
            out.extend_from_slice(&f);
            out.extend_from_slice(&f);
        }
    }
    out.extend_from_slice(&nan.to_le_bytes());
    out.extend_from_slice(&fillc.to_le_bytes());
    out.extend_from_slice(&(a.len() as u64).to_le_bytes());
    out
}

/// Ordering key for numeric elements: exact for integers (i128), IEEE for floats.
#[derive(PartialEq, PartialOrd)]
enum Key {
    I(i128),
    F(f64),
}

fn cmp_key(a: &Array, i: usize) -> Key {
    match a.dtype {
        Dtype::Float { .. } => Key::F(a.get_f64(i).unwrap_or(0.0)),
        _ => Key::I(a.get_i128(i).unwrap_or(0)),
    }
}

/// Build (or rebuild in place) a CHUNK_MINMAX index on column dataset `column`.
pub fn build_chunk_minmax(t: &Table, column: &str) -> Result<String> {
    let col = t.column(column)?;
    if !numeric_order_supported(col.dtype()) {
        return Err(MarquetError::Unsupported(format!(
            "{}: CHUNK_MINMAX is implemented for integer, float and enum columns",
            col.path
        )));
    }
    let nrows = t.nrows()?;
    let g = ensure_generation(t)?;
    let dt = chunk_minmax_dtype(col.dtype());
    let name = format!("{column}__chunk_minmax");
    let ds = create_index_dataset(
        t,
        column,
        &name,
        &DatasetSpec { dtype: dt.clone(), len: 0, chunk: Some(1024), filters: vec![Filter::Deflate(4)], fill: None },
        names::KIND_CHUNK_MINMAX,
    )?;
    let path = t.member_path(&format!("{}/{}", names::SEARCH_INDEXES, name));
    // Content, then tokens (building on an unchanged table is not a mutation, §12.2).
    write_minmax_entries(t, column, &ds, &path, 0, nrows)?;
    write_tokens(t, &path, g, nrows)?;
    Ok(path)
}

/// Recompute entries for the chunks from the one containing `from_row` to the end of
/// `[0, nrows)`, and size the index dataset to exactly the number of data-bearing chunks.
fn write_minmax_entries(t: &Table, column: &str, ds: &Hid, path: &str, from_row: u64, nrows: u64) -> Result<()> {
    let col = t.column(column)?;
    let chunk = col.chunk_rows().unwrap_or(nrows.max(1));
    let nchunks = if nrows == 0 { 0 } else { nrows.div_ceil(chunk) };
    let first = from_row / chunk;
    let dt = chunk_minmax_dtype(col.dtype());
    h5::dataset_set_len(ds.id(), nchunks, path)?;
    let mut bytes = Vec::new();
    for c in first..nchunks {
        let start = c * chunk;
        let end = (start + chunk).min(nrows);
        let a = col.read(start, end - start)?;
        bytes.extend_from_slice(&minmax_entry(&a, col.fill()));
    }
    h5::dataset_write(ds.id(), first, &dt, &bytes, path)
}

/// HEP001 §12.3 step 4 for the kinds this module maintains.
pub(crate) fn maintain_after_append(t: &Table, n_old: u64, n_new: u64, new_gen: Option<u64>) -> Result<()> {
    let g_old = t.generation()?;
    for info in all_indexes(t)? {
        if !info.is_valid(g_old, n_old) {
            continue;
        }
        let Some(g) = new_gen else { continue };
        if info.kind.as_deref() == Some(names::KIND_CHUNK_BLOOM) {
            super::search::maintain_bloom(t, &info, n_old, n_new, g)?;
            continue;
        }
        if info.kind.as_deref() != Some(names::KIND_CHUNK_MINMAX) {
            continue; // SORTED_ROWS, BITMAP: left to be disabled by their tokens (or maintained by a layered HEP).
        }
        write_tokens(t, &info.path, g, n_new)?; // tokens before content
        h5::flush(t.id())?; // the tokens must reach the file before any content does
        let ds = h5::dataset_open(t.id(), &info.path)?;
        write_minmax_entries(t, &info.column, &ds, &info.path, n_old, n_new)?;
    }
    Ok(())
}

/// HEP001 §12.5 for the kinds this module maintains.
pub(crate) fn maintain_after_truncate(t: &Table, new_nrows: u64, new_gen: Option<u64>) -> Result<()> {
    let g_old = t.generation()?;
    let n_old = t.nrows()?;
    for info in all_indexes(t)? {
        if !info.is_valid(g_old, n_old) {
            continue;
        }
        let Some(g) = new_gen else { continue };
        if info.kind.as_deref() == Some(names::KIND_CHUNK_BLOOM) {
            super::search::maintain_bloom(t, &info, new_nrows, new_nrows, g)?;
            continue;
        }
        if info.kind.as_deref() != Some(names::KIND_CHUNK_MINMAX) {
            continue;
        }
        write_tokens(t, &info.path, g, new_nrows)?;
        h5::flush(t.id())?;
        let ds = h5::dataset_open(t.id(), &info.path)?;
        let chunk = t.column(&info.column)?.chunk_rows().unwrap_or(1);
        let from = (new_nrows / chunk) * chunk;
        write_minmax_entries(t, &info.column, &ds, &info.path, from, new_nrows)?;
    }
    Ok(())
}

/// HEP001 §12.6 step 3: rebuild indexes of the modified column (content, then tokens);
/// restore the tokens of indexes on other columns that were valid before the update.
pub(crate) fn restore_after_update(t: &Table, column: &str, new_gen: u64) -> Result<()> {
    let n = t.nrows()?;
    let g_old = new_gen.wrapping_sub(1);
    for info in all_indexes(t)? {
        if !info.is_valid(Some(g_old), n) {
            continue;
        }
        if info.column == column {
            if info.kind.as_deref() == Some(names::KIND_CHUNK_MINMAX) {
                let ds = h5::dataset_open(t.id(), &info.path)?;
                write_minmax_entries(t, column, &ds, &info.path, 0, n)?;
                write_tokens(t, &info.path, new_gen, n)?;
            } else if info.kind.as_deref() == Some(names::KIND_CHUNK_BLOOM) {
                super::search::rebuild_bloom_after_update(t, &info, new_gen)?;
            }
        } else {
            let o = h5::object_open(t.id(), &info.path)?;
            h5::attr_write_u64(o.id(), names::SOURCE_GENERATION, new_gen)?;
        }
    }
    Ok(())
}

/// What a filter did: how many chunks it could skip through an index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilterStats {
    pub chunks_total: u64,
    pub chunks_skipped: u64,
    pub used_index: bool,
}

/// Rows in `[0, NROWS)` of a numeric column whose non-missing value `v` satisfies
/// `lo <= v <= hi`, using a valid CHUNK_MINMAX index to skip chunks. NaN never matches.
pub fn range_filter(t: &Table, column: &str, lo: f64, hi: f64) -> Result<(Vec<u64>, FilterStats)> {
    if t.kind_of(column)? != Some(ColumnKind::Dataset) {
        return Err(MarquetError::InvalidArgument(format!("{} is not a column dataset", t.member_path(column))));
    }
    let col = t.column(column)?;
    let nrows = t.nrows()?;
    let chunk = col.chunk_rows().unwrap_or(nrows.max(1));
    let nchunks = if nrows == 0 { 0 } else { nrows.div_ceil(chunk) };
    let mut stats = FilterStats { chunks_total: nchunks, ..Default::default() };
    let entries = match valid_index(t, column, names::KIND_CHUNK_MINMAX)? {
        Some(info) => {
            let ds = h5::dataset_open(t.id(), &info.path)?;
            let di = h5::dataset_info(ds.id(), &info.path)?;
            let dt = chunk_minmax_dtype(col.dtype());
            if di.dtype.to_le() != dt || di.dims[0] < nchunks {
                None // structurally unusable: behave as if absent
            } else {
                stats.used_index = true;
                Some(Array { dtype: dt.clone(), bytes: h5::dataset_read(ds.id(), 0, nchunks, &dt, &info.path)? })
            }
        }
        None => None,
    };
    let es = col.dtype().size();
    let mut rows = Vec::new();
    for c in 0..nchunks {
        if let Some(e) = &entries {
            let b = e.element(c as usize);
            let cnt = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap_or([0; 8]));
            let (nan, fillc, n) = (cnt(2 * es), cnt(2 * es + 8), cnt(2 * es + 16));
            let is_float = matches!(col.dtype(), Dtype::Float { .. });
            let none = if is_float { fillc + nan >= n } else { fillc >= n };
            let mm = Array { dtype: col.dtype().to_le(), bytes: b[..2 * es].to_vec() };
            let (mn, mx) = (mm.get_f64(0).unwrap_or(f64::NAN), mm.get_f64(1).unwrap_or(f64::NAN));
            if none || mx < lo || mn > hi {
                stats.chunks_skipped += 1;
                continue;
            }
        }
        let start = c * chunk;
        let end = (start + chunk).min(nrows);
        let a = col.read(start, end - start)?;
        let miss = a.missing(col.fill());
        for i in 0..a.len() {
            if miss[i] {
                continue;
            }
            let v = a.get_f64(i).unwrap_or(f64::NAN);
            if v >= lo && v <= hi {
                rows.push(start + i as u64);
            }
        }
    }
    Ok((rows, stats))
}
