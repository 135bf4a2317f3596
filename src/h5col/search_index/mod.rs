//! The search-index framework of HEP001 §11–§12: finding a column's indexes, their
//! validity tokens, creating, linking and dropping index datasets, maintenance after
//! mutations, and verification.
//!
//! Validity tokens: an index is used only when `SOURCE_GENERATION == GENERATION` and
//! `SOURCE_NROWS == NROWS` (§12.2). Appends and truncations write the future tokens
//! before the content; in-place updates bump GENERATION first and restore tokens after
//! the content (content-before-tokens).
//!
//! The kinds, one file each: [`chunk_minmax`] (§11.4), [`sorted_rows`] (§11.5),
//! [`bitmap`] (§11.6) and [`chunk_bloom`] (§11.7, hashing in [`bloom`]). Queries over all
//! four are in [`super::predicate`].
//!
//! Maintenance (HEP001 §12.3–§12.6): appends and truncations keep `CHUNK_BLOOM` current
//! (tokens first, then the entries of the chunks that changed), like `CHUNK_MINMAX`.
//! `SORTED_ROWS` and `BITMAP` would have to be rebuilt whole, so a mutation leaves them
//! with failing tokens — stale and therefore ignored — until the caller rebuilds them
//! with the same `build_*` call (which rewrites the datasets in place, §11.3).

use std::cmp::Ordering;

use crate::error::{MarquetError, Result};
use crate::h5::{self, DatasetSpec, Dtype, Hid, Space};
use crate::h5col::{read_token, Array, Column, Table};
use crate::spec::names;

pub mod bitmap;
pub mod bloom;
pub mod chunk_bloom;
pub mod chunk_minmax;
pub mod sorted_rows;

pub use bitmap::*;
pub use chunk_bloom::*;
pub use chunk_minmax::*;
pub use sorted_rows::*;

/// A search-index dataset as found through a column's `SEARCH_INDEX_LIST`.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexInfo {
    /// Absolute HDF5 path of the index dataset.
    pub path: String,
    /// The column it is linked from.
    pub column: String,
    /// The `KIND` attribute (`None` when missing): which search-index family (HEP001 §11.3).
    pub kind: Option<String>,
    /// The `SOURCE_GENERATION` validity token (HEP001 §12.2).
    pub source_generation: Option<u64>,
    /// The `SOURCE_NROWS` validity token (HEP001 §12.2).
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

/// `SOURCE_NROWS` of an index dataset while its content is being rewritten: never equal to
/// any NROWS, so the index is stale until the real tokens are written (docs/RULINGS-LOCAL.md L13).
pub const DISABLED_SOURCE_NROWS: u64 = u64::MAX;

/// Retire the tokens of every stale index before a mutation (docs/FAULTS.md F1).
///
/// HEP001 §12.3 step 4 writes an index's *future* tokens `(g + 1, N + K)` before its
/// content. When the operation then fails (a full disk, an I/O error) or is killed before
/// its commit, the table stays at `(g, N)` and the index carries tokens of a state that was
/// never committed — stale, as it must be. But `GENERATION` only ever moves by one: the
/// next mutation that commits the same `NROWS` would make those tokens match again over
/// content that describes other rows. So before any mutation every index that fails the
/// validity check gets `SOURCE_GENERATION = GENERATION - 1` (modulo 2^64), a value the
/// table has already left and, moving by exactly one per mutation (§12.2), cannot reach
/// again before 2^64 - 1 further mutations. Indexes already disabled for good
/// (`SOURCE_NROWS` = [`DISABLED_SOURCE_NROWS`]) or already retired are not rewritten. The
/// rewrites are flushed before the caller's first write, so they reach the file before
/// the `GENERATION` bump that could otherwise revive a stale index.
///
/// Valid indexes are untouched (the mutation maintains them or leaves them to fail). A
/// table without `GENERATION` has no index that could pass (§12.2) and is left as it is.
pub(crate) fn retire_stale_tokens(t: &Table) -> Result<usize> {
    let Some(g) = t.generation()? else { return Ok(0) };
    let n = t.nrows()?;
    let past = g.wrapping_sub(1);
    let mut retired = 0;
    for info in all_indexes(t)? {
        if info.is_valid(Some(g), n) || info.source_generation == Some(past) {
            continue;
        }
        if info.source_nrows == Some(DISABLED_SOURCE_NROWS) && info.source_generation.is_some() {
            continue;
        }
        let o = h5::object_open(t.id(), &info.path)?;
        h5::attr_write_u64(o.id(), names::SOURCE_GENERATION, past)?;
        if info.source_nrows.is_none() {
            // Missing or mistyped (HEP001 §13 req 12): written so the index keeps both.
            h5::attr_write_u64(o.id(), names::SOURCE_NROWS, DISABLED_SOURCE_NROWS)?;
        }
        retired += 1;
    }
    if retired > 0 {
        h5::flush(t.id())?;
    }
    Ok(retired)
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

internal_pub! {
    /// Create (or, when it exists, resize in place — never delete-and-recreate, §11.3) the
    /// index dataset `SEARCH_INDEXES/<index_name>` for `column`, link it from the column's
    /// `SEARCH_INDEX_LIST`, and write its KIND. Tokens are the caller's job.
    fn create_index_dataset(t: &Table, column: &str, index_name: &str, spec: &DatasetSpec, kind: &str) -> Result<Hid> {
        if !h5::link_exists(t.id(), names::SEARCH_INDEXES)? {
            h5::group_create(t.id(), names::SEARCH_INDEXES)?;
        }
        let g = ensure_generation(t)?;
        let rel = format!("{}/{}", names::SEARCH_INDEXES, index_name);
        if h5::link_exists(t.id(), &rel)? && !h5::chunk_index_intact(h5::dataset_open(t.id(), &rel)?.id()) {
            // A full disk left its chunk index past the end of the file: not resizable, not
            // deletable; set aside and replaced (issue #38, docs/FAULTS.md F2).
            h5::link_delete_keeping_object(t.id(), &rel)?;
        }
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
            let ds = h5::dataset_create(t.id(), &rel, spec)?;
            // A new index is born stale, never without its tokens (HEP001 §13 req 12): a
            // writer killed before the caller's tokens leaves it conformant (docs/FAULTS.md F2).
            h5::attr_write_u64(ds.id(), names::SOURCE_GENERATION, g.wrapping_sub(1))?;
            h5::attr_write_u64(ds.id(), names::SOURCE_NROWS, DISABLED_SOURCE_NROWS)?;
            ds
        };
        link_index(t, column, ds.id(), &t.member_path(&rel), kind)?;
        Ok(ds)
    }
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

/// Remove an index: unlink it from its column's `SEARCH_INDEX_LIST` and delete it. An index
/// dataset whose chunk index a full disk left pointing past the end of the file (HDF5
/// cannot free it without reading that index) is unlinked and kept as unreachable bytes
/// instead (issue #38, docs/FAULTS.md F2).
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
    let intact = h5::dataset_open(t.id(), &info.path).map(|ds| h5::chunk_index_intact(ds.id())).unwrap_or(true);
    if intact {
        h5::link_delete(t.id(), &info.path)
    } else {
        h5::link_delete_keeping_object(t.id(), &info.path)
    }
}

// ---------------------------------------------------------------- CHUNK_MINMAX

/// HEP001 §12.3 step 4 for the kinds this module maintains.
pub(crate) fn maintain_after_append(t: &Table, n_old: u64, n_new: u64, new_gen: Option<u64>) -> Result<()> {
    let g_old = t.generation()?;
    for info in all_indexes(t)? {
        if !info.is_valid(g_old, n_old) {
            continue;
        }
        let Some(g) = new_gen else { continue };
        if info.kind.as_deref() == Some(names::KIND_CHUNK_BLOOM) {
            maintain_bloom(t, &info, n_old, n_new, g)?;
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
            maintain_bloom(t, &info, new_nrows, new_nrows, g)?;
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
                rebuild_bloom_after_update(t, &info, new_gen)?;
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
    /// Data-bearing chunks of the column (`ceil(NROWS / chunk length)`, HEP001 §11.4).
    pub chunks_total: u64,
    /// Chunks the index proved cannot match, which were therefore not read.
    pub chunks_skipped: u64,
    /// A valid search index was used (HEP001 §12.2 check passed).
    pub used_index: bool,
}

/// The value of one column element in HEP001's order (§11.5): integers and enum codes
/// exactly, floats by IEEE value (`-0 == +0`), strings byte-wise after stripping padding.
#[derive(Debug, Clone, PartialEq, PartialOrd)]
pub enum Key {
    /// Integer or enum code.
    I(i128),
    /// Floating point (never NaN once built by [`key_of`]).
    F(f64),
    /// String or opaque bytes.
    S(Vec<u8>),
}

impl Key {
    /// Total order within one variant (NaN-free floats); variants never mix in a column.
    pub fn cmp_total(&self, o: &Key) -> Ordering {
        self.partial_cmp(o).unwrap_or(Ordering::Equal)
    }
}

/// Can the crate order and compare values of `dtype` (the HEP001 §11.5 list, minus
/// float16 and variable-length strings, which the crate does not read as columns)?
pub fn orderable(dtype: &Dtype) -> bool {
    matches!(dtype, Dtype::Int { .. } | Dtype::Enum { .. } | Dtype::Float { size: 4 | 8, .. } | Dtype::FixedString { .. } | Dtype::Opaque { .. })
}

/// Key of element `i`; `None` for NaN (unordered) and unsupported types.
pub fn key_of(a: &Array, i: usize) -> Option<Key> {
    match &a.dtype {
        Dtype::Int { .. } | Dtype::Enum { .. } => a.get_i128(i).map(Key::I),
        Dtype::Float { .. } => a.get_f64(i).filter(|v| !v.is_nan()).map(|v| Key::F(if v == 0.0 { 0.0 } else { v })),
        Dtype::FixedString { .. } | Dtype::Opaque { .. } => bloom::canonical_bytes(&a.dtype, a.element(i)).map(Key::S),
        _ => None,
    }
}

/// What a row holds for the purposes of an index: a value, a missing value (the canonical
/// test of HEP001 §8.5) or a non-missing NaN.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// A value with a place in the order.
    Value(Key),
    /// Flagged by the canonical missing-value test (and not NaN).
    Missing,
    /// A NaN (missing or not).
    NaN,
}

/// Classify every element of `a` (a column's rows, `fill` its fill value).
pub fn cells(a: &Array, fill: Option<&[u8]>) -> Vec<Cell> {
    (0..a.len())
        .map(|i| {
            let e = a.element(i);
            let is_nan = matches!(a.dtype, Dtype::Float { .. }) && a.get_f64(i).is_some_and(f64::is_nan);
            if crate::h5col::is_missing(&a.dtype, e, fill) {
                // A NaN row is in the NaN tail even when the fill is NaN (§11.5).
                if is_nan {
                    Cell::NaN
                } else {
                    Cell::Missing
                }
            } else if is_nan {
                Cell::NaN
            } else {
                key_of(a, i).map(Cell::Value).unwrap_or(Cell::Missing)
            }
        })
        .collect()
}

internal_pub! {
    /// A scalar HEP001 boolean attribute (§6; any 1-byte base, lenient read): `None` when
    /// absent or not a boolean.
    fn read_bool_attr(id: hdf5_sys::h5i::hid_t, name: &str) -> Result<Option<bool>> {
        Ok(h5::attr_read(id, name)?.and_then(|a| {
            (a.dtype.is_boolean() && a.space == Space::Scalar).then(|| a.data.first().copied()).flatten().and_then(|b| match b {
                0 => Some(false),
                1 => Some(true),
                _ => None,
            })
        }))
    }
}

fn write_bool_attr(id: hdf5_sys::h5i::hid_t, name: &str, v: bool) -> Result<()> {
    h5::attr_write(id, name, &Dtype::hep001_bool(), &Space::Scalar, &[v as u8])
}

fn write_scalar(id: hdf5_sys::h5i::hid_t, name: &str, dtype: &Dtype, bytes: &[u8]) -> Result<()> {
    h5::attr_write(id, name, dtype, &Space::Scalar, bytes)
}

/// Open `SEARCH_INDEXES/<name>` for an in-place rebuild, or create it with `create`.
/// An existing dataset of another datatype or rank is refused (never deleted, §11.3).
fn open_or_create(t: &Table, rel: &str, dtype: &Dtype, rank: usize, create: impl FnOnce() -> Result<Hid>) -> Result<Hid> {
    if !h5::link_exists(t.id(), names::SEARCH_INDEXES)? {
        h5::group_create(t.id(), names::SEARCH_INDEXES)?;
    }
    if h5::link_exists(t.id(), rel)? {
        let ds = h5::dataset_open(t.id(), rel)?;
        let info = h5::dataset_info(ds.id(), rel)?;
        if info.dtype.to_le() != dtype.to_le() || info.dims.len() != rank || info.chunk.is_none() {
            return Err(MarquetError::InvalidArgument(format!(
                "{}: an index of another layout exists at this name",
                t.member_path(rel)
            )));
        }
        Ok(ds)
    } else {
        create()
    }
}

/// Read rows `[0, NROWS)` of column dataset `column`, checking the kind applies.
fn read_column(t: &Table, column: &str, kind: &str) -> Result<(Column, Array, u64)> {
    let col = t.column(column)?;
    if !orderable(col.dtype()) {
        return Err(MarquetError::Unsupported(format!(
            "{}: {kind} is implemented for integer, enum, float, fixed-length string and opaque columns",
            col.path
        )));
    }
    let n = t.nrows()?;
    let a = col.read(0, n)?;
    Ok((col, a, n))
}


// ------------------------------------------------------------------ verification

internal_pub! {
    /// Check that a `SORTED_ROWS`, `BITMAP` or `CHUNK_BLOOM` index dataset (at `path`, open
    /// as `ds`) correctly describes rows `[0, nrows)` of a column whose values are `col`
    /// (fill `fill`, chunk length `chunk`) — HEP001 §13 req 9. Returns the problems found,
    /// each naming the rule; never panics on malformed datasets.
    fn verify_index(t_id: hdf5_sys::h5i::hid_t, kind: &str, path: &str, col: &Array, fill: Option<&[u8]>, chunk: u64, nrows: u64) -> Vec<String> {
        let r = match kind {
            k if k == names::KIND_SORTED_ROWS => verify_sorted_rows(t_id, path, col, fill, nrows),
            k if k == names::KIND_BITMAP => verify_bitmap(t_id, path, col, fill, nrows),
            k if k == names::KIND_CHUNK_BLOOM => verify_bloom(t_id, path, col, fill, chunk, nrows),
            _ => Ok(Vec::new()),
        };
        r.unwrap_or_else(|e| vec![e.to_string()])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_orders_values_then_fill_then_nan() {
        // rows: 3.0, NaN, fill, -0.0, 1.0, +0.0, NaN, 1.0
        let c = vec![
            Cell::Value(Key::F(3.0)),
            Cell::NaN,
            Cell::Missing,
            Cell::Value(Key::F(0.0)),
            Cell::Value(Key::F(1.0)),
            Cell::Value(Key::F(0.0)),
            Cell::NaN,
            Cell::Value(Key::F(1.0)),
        ];
        let (p, nan, fill) = sorted_permutation(&c);
        assert_eq!(p, vec![3, 5, 4, 7, 0, 2, 1, 6]);
        assert_eq!((nan, fill), (2, 1));
    }

    #[test]
    fn cells_follow_the_canonical_missing_test() {
        let a = Array::from_f64(&[f64::NAN, 9.969_209_968_386_869e36, -0.0, 2.0]);
        let fill = names::FILL_F64.to_le_bytes();
        assert_eq!(cells(&a, Some(&fill)), vec![Cell::NaN, Cell::Missing, Cell::Value(Key::F(0.0)), Cell::Value(Key::F(2.0))]);
        // With a NaN fill every NaN is missing and goes to the NaN tail.
        let nan_fill = f64::NAN.to_le_bytes();
        assert_eq!(cells(&a, Some(&nan_fill))[0], Cell::NaN);
        let s = Array::from_strings(&["b", "", "a"], true);
        assert_eq!(cells(&s, Some(&[0, 0])), vec![Cell::Value(Key::S(b"b".to_vec())), Cell::Missing, Cell::Value(Key::S(b"a".to_vec()))]);
    }
}
