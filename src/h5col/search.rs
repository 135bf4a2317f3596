//! The HEP001 §11.5–§11.7 search-index kinds — `SORTED_ROWS`, `BITMAP` and `CHUNK_BLOOM` —
//! built and rebuilt in place on the framework of [`super::index`] (tokens, linking).
//! `CHUNK_MINMAX` lives in `index.rs`. Queries over all four are in [`super::filter`].
//!
//! Maintenance (HEP001 §12.3–§12.6): appends and truncations keep `CHUNK_BLOOM` current
//! (tokens first, then the entries of the chunks that changed), like `CHUNK_MINMAX`.
//! `SORTED_ROWS` and `BITMAP` would have to be rebuilt whole, so a mutation leaves them
//! with failing tokens — stale and therefore ignored — until the caller rebuilds them
//! with the same `build_*` call (which rewrites the datasets in place, §11.3).

use std::cmp::Ordering;

use super::{bloom, index, Array, Table};
use crate::error::{MarquetError, Result};
use crate::h5::{self, DatasetSpec, Dtype, Filter, Hid, Space};
use crate::spec::names;

/// Largest number of distinct values a new `BITMAP` index holds (each value costs
/// `NROWS / 8` bytes).
pub const DEFAULT_BITMAP_MAX_VALUES: usize = 1024;
/// Largest `K` (values) of a `BITMAP` index a query or the validator reads; a larger one
/// is reported as malformed rather than allocated (extents are untrusted input).
pub const MAX_READ_BITMAP_VALUES: u64 = 1 << 20;
/// Largest `m_bits` of a `CHUNK_BLOOM` index a query or the validator reads (16 MiB a row).
pub const MAX_READ_BLOOM_M_BITS: u64 = 1 << 27;
/// Chunk length (elements) of `SORTED_ROWS` datasets. Stored unfiltered: a query reads
/// single elements during its binary search, and a filtered chunk would have to be
/// decompressed whole for each.
pub const DEFAULT_SORTED_ROWS_CHUNK: u64 = 65_536;

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
            if super::is_missing(&a.dtype, e, fill) {
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

/// A scalar HEP001 boolean attribute (§6; any 1-byte base, lenient read): `None` when
/// absent or not a boolean.
pub fn read_bool_attr(id: hdf5_sys::h5i::hid_t, name: &str) -> Result<Option<bool>> {
    Ok(h5::attr_read(id, name)?.and_then(|a| {
        (a.dtype.is_boolean() && a.space == Space::Scalar).then(|| a.data.first().copied()).flatten().and_then(|b| match b {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        })
    }))
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
fn read_column(t: &Table, column: &str, kind: &str) -> Result<(super::Column, Array, u64)> {
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

// ------------------------------------------------------------------ SORTED_ROWS

/// The HEP001 §11.5 permutation of `cells`: ordered values (ties by row), then the fill
/// tail, then the NaN tail. Returns `(permutation, nan_tail_length, fill_tail_length)`.
pub fn sorted_permutation(cells: &[Cell]) -> (Vec<u64>, u64, u64) {
    let mut vals: Vec<(u64, &Key)> = Vec::new();
    let (mut fills, mut nans) = (Vec::new(), Vec::new());
    for (r, c) in cells.iter().enumerate() {
        match c {
            Cell::Value(k) => vals.push((r as u64, k)),
            Cell::Missing => fills.push(r as u64),
            Cell::NaN => nans.push(r as u64),
        }
    }
    // Stable sort over rows in increasing order: ties stay by increasing row (§11.5).
    vals.sort_by(|a, b| a.1.cmp_total(b.1));
    let (nl, fl) = (nans.len() as u64, fills.len() as u64);
    let mut p: Vec<u64> = vals.into_iter().map(|(r, _)| r).collect();
    p.extend(fills);
    p.extend(nans);
    (p, nl, fl)
}

/// Build (or rebuild in place) a `SORTED_ROWS` index on `column` (HEP001 §11.5).
pub fn build_sorted_rows(t: &Table, column: &str) -> Result<String> {
    let (col, a, n) = read_column(t, column, names::KIND_SORTED_ROWS)?;
    let g = index::ensure_generation(t)?;
    let (perm, nan_tail, fill_tail) = sorted_permutation(&cells(&a, col.fill()));
    let rel = format!("{}/{column}__sorted_rows", names::SEARCH_INDEXES);
    let ds = open_or_create(t, &rel, &Dtype::U64, 1, || {
        h5::dataset_create(
            t.id(),
            &rel,
            &DatasetSpec { dtype: Dtype::U64, len: 0, chunk: Some(DEFAULT_SORTED_ROWS_CHUNK), filters: vec![], fill: None },
        )
    })?;
    let path = t.member_path(&rel);
    index::link_index(t, column, ds.id(), &path, names::KIND_SORTED_ROWS)?;
    h5::dataset_set_len(ds.id(), n, &path)?;
    let bytes: Vec<u8> = perm.iter().flat_map(|r| r.to_le_bytes()).collect();
    h5::dataset_write(ds.id(), 0, &Dtype::U64, &bytes, &path)?;
    h5::attr_write_u64(ds.id(), names::NAN_TAIL_LENGTH, nan_tail)?;
    h5::attr_write_u64(ds.id(), names::FILL_TAIL_LENGTH, fill_tail)?;
    write_bool_attr(ds.id(), names::ORDERED, true)?;
    index::write_tokens(t, &path, g, n)?; // content, then tokens
    Ok(path)
}

// ------------------------------------------------------------------ BITMAP

/// Build (or rebuild in place) a `BITMAP` index on `column` (HEP001 §11.6) listing every
/// distinct non-missing value in ascending order (`ordered` and `exhaustive` TRUE).
///
/// Choice (HEP001 is silent): NaN values are not listed — NaN equals nothing, so no
/// equality predicate can select them — and `exhaustive` still holds for every value a
/// query can name. `-0` and `+0` are one value. Refuses columns with more than
/// `max_values` distinct values.
pub fn build_bitmap(t: &Table, column: &str, max_values: usize) -> Result<String> {
    let (col, a, n) = read_column(t, column, names::KIND_BITMAP)?;
    let cells = cells(&a, col.fill());
    let mut distinct: Vec<(Key, usize)> = Vec::new(); // (value, first row holding it)
    {
        let mut ks: Vec<(&Key, usize)> =
            cells.iter().enumerate().filter_map(|(r, c)| if let Cell::Value(k) = c { Some((k, r)) } else { None }).collect();
        ks.sort_by(|x, y| x.0.cmp_total(y.0));
        ks.dedup_by(|x, y| x.0.cmp_total(y.0) == Ordering::Equal);
        if ks.len() > max_values {
            return Err(MarquetError::Unsupported(format!(
                "{}: {} distinct values, more than the BITMAP limit of {max_values}",
                col.path,
                ks.len()
            )));
        }
        distinct.extend(ks.into_iter().map(|(k, r)| (k.clone(), r)));
    }
    let g = index::ensure_generation(t)?;
    let kk = distinct.len() as u64;
    let nbytes = n.div_ceil(8);
    // Values dataset: the column's datatype, elements copied from a row holding each value
    // (so that strings keep the column's padding and floats their width).
    let elem = col.dtype().to_le();
    let vrel = format!("{}/{column}__bitmap__VALUES", names::SEARCH_INDEXES);
    let vds = open_or_create(t, &vrel, &elem, 1, || {
        h5::dataset_create(t.id(), &vrel, &DatasetSpec { dtype: elem.clone(), len: 0, chunk: Some(1024), filters: vec![], fill: None })
    })?;
    let vpath = t.member_path(&vrel);
    let mut vbytes = Vec::with_capacity(distinct.len() * elem.size());
    for (k, r) in &distinct {
        match k {
            // -0 and +0 are one value: store +0.
            Key::F(v) if *v == 0.0 => vbytes.extend_from_slice(&if elem.size() == 4 { 0f32.to_le_bytes().to_vec() } else { 0f64.to_le_bytes().to_vec() }),
            _ => vbytes.extend_from_slice(a.element(*r)),
        }
    }
    h5::dataset_set_len(vds.id(), kk, &vpath)?;
    h5::dataset_write(vds.id(), 0, &elem, &vbytes, &vpath)?;

    let rel = format!("{}/{column}__bitmap", names::SEARCH_INDEXES);
    let ds = open_or_create(t, &rel, &Dtype::U8, 2, || {
        h5::dataset_create_2d(t.id(), &rel, &Dtype::U8, [0, 0], [1, nbytes.clamp(1, 1 << 16)], &[Filter::Deflate(4)])
    })?;
    let path = t.member_path(&rel);
    index::link_index(t, column, ds.id(), &path, names::KIND_BITMAP)?;
    h5::dataset_set_extent_2d(ds.id(), [kk, nbytes], &path)?;
    if kk > 0 && nbytes > 0 {
        let mut bits = vec![0u8; (kk * nbytes) as usize];
        for (r, c) in cells.iter().enumerate() {
            if let Cell::Value(k) = c {
                let j = distinct.binary_search_by(|(d, _)| d.cmp_total(k)).unwrap_or(0);
                bits[j * nbytes as usize + r / 8] |= 1 << (r % 8); // padding bits stay 0
            }
        }
        h5::dataset_write_rows_2d(ds.id(), 0, nbytes, &Dtype::U8, &bits, &path)?;
    }
    h5::attr_write_refs(ds.id(), names::VALUES, &[vpath], true)?;
    write_bool_attr(ds.id(), names::ORDERED, true)?;
    write_bool_attr(ds.id(), names::EXHAUSTIVE, true)?;
    index::write_tokens(t, &path, g, n)?;
    Ok(path)
}

// ------------------------------------------------------------------ CHUNK_BLOOM

/// Parameters of a `CHUNK_BLOOM` index (HEP001 §11.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BloomParams {
    /// Hash functions per value (`k`).
    pub k: u16,
    /// Filter bits per chunk (`m_bits`, a multiple of 8).
    pub m_bits: u64,
    /// `MurmurHash3_x64_128` seed.
    pub seed: u32,
}

impl BloomParams {
    /// Our defaults for a column with chunks of `chunk_rows` rows.
    pub fn for_chunk(chunk_rows: u64) -> BloomParams {
        BloomParams { k: bloom::DEFAULT_BLOOM_K, m_bits: bloom::default_m_bits(chunk_rows), seed: 0 }
    }
}

/// The indexed chunk length of a column: its chunk length, or NROWS when contiguous.
fn chunk_len(col: &super::Column, nrows: u64) -> u64 {
    col.chunk_rows().unwrap_or(nrows).max(1)
}

/// Build (or rebuild in place) a `CHUNK_BLOOM` index on `column` (HEP001 §11.7);
/// `params` `None` = [`BloomParams::for_chunk`].
pub fn build_chunk_bloom(t: &Table, column: &str, params: Option<BloomParams>) -> Result<String> {
    let col = t.column(column)?;
    if !bloom::bloom_supported(col.dtype()) {
        return Err(MarquetError::Unsupported(format!("{}: no HEP001 canonical bytes for this datatype", col.path)));
    }
    let n = t.nrows()?;
    let p = params.unwrap_or_else(|| BloomParams::for_chunk(chunk_len(&col, n)));
    if p.m_bits == 0 || !p.m_bits.is_multiple_of(8) || p.m_bits > bloom::MAX_BLOOM_M_BITS || p.k == 0 {
        return Err(MarquetError::InvalidArgument(format!(
            "CHUNK_BLOOM needs k >= 1 and m_bits a non-zero multiple of 8 up to {} (got k={}, m_bits={})",
            bloom::MAX_BLOOM_M_BITS,
            p.k,
            p.m_bits
        )));
    }
    let g = index::ensure_generation(t)?;
    let m_bytes = p.m_bits / 8;
    let rel = format!("{}/{column}__chunk_bloom", names::SEARCH_INDEXES);
    let ds = open_or_create(t, &rel, &Dtype::U8, 2, || {
        h5::dataset_create_2d(t.id(), &rel, &Dtype::U8, [0, m_bytes], [1, m_bytes.min(1 << 20)], &[])
    })?;
    let path = t.member_path(&rel);
    index::link_index(t, column, ds.id(), &path, names::KIND_CHUNK_BLOOM)?;
    write_scalar(ds.id(), names::BLOOM_K, &Dtype::U16, &p.k.to_le_bytes())?;
    h5::attr_write_u64(ds.id(), names::BLOOM_M_BITS, p.m_bits)?;
    h5::attr_write_ascii(ds.id(), names::BLOOM_HASH_FAMILY, names::BLOOM_HASH_FAMILY_VALUE)?;
    write_scalar(ds.id(), names::BLOOM_SEED, &Dtype::Int { size: 4, signed: false, big_endian: false }, &p.seed.to_le_bytes())?;
    write_bloom_rows(t, &col, &ds, &path, &p, 0, n)?;
    index::write_tokens(t, &path, g, n)?;
    Ok(path)
}

/// One chunk's filter row.
fn bloom_row(a: &Array, fill: Option<&[u8]>, p: &BloomParams) -> Vec<u8> {
    let mut row = vec![0u8; (p.m_bits / 8) as usize];
    for i in 0..a.len() {
        let e = a.element(i);
        if super::is_missing(&a.dtype, e, fill) {
            continue; // missing values are not members (§11.7)
        }
        if let Some(b) = bloom::canonical_bytes(&a.dtype, e) {
            bloom::insert(&mut row, &b, p.k, p.seed);
        }
    }
    row
}

/// Recompute the rows of the chunks from the one holding `from_row` to the end of
/// `[0, nrows)` and size the dataset to the data-bearing chunk count.
fn write_bloom_rows(t: &Table, col: &super::Column, ds: &Hid, path: &str, p: &BloomParams, from_row: u64, nrows: u64) -> Result<()> {
    let _ = t;
    let chunk = chunk_len(col, nrows);
    let nchunks = if nrows == 0 { 0 } else { nrows.div_ceil(chunk) };
    let m_bytes = p.m_bits / 8;
    h5::dataset_set_extent_2d(ds.id(), [nchunks, m_bytes], path)?;
    let first = from_row / chunk;
    for c in first..nchunks {
        let start = c * chunk;
        let end = (start + chunk).min(nrows);
        let a = col.read(start, end - start)?;
        h5::dataset_write_rows_2d(ds.id(), c, m_bytes, &Dtype::U8, &bloom_row(&a, col.fill(), p), path)?;
    }
    Ok(())
}

/// Read and check the parameters of a `CHUNK_BLOOM` dataset (HEP001 §11.7), with its
/// shape `(rows, m_bytes)`.
pub fn bloom_params(t: &Table, path: &str) -> Result<(BloomParams, [u64; 2])> {
    let ds = h5::dataset_open(t.id(), path)?;
    let info = h5::dataset_info(ds.id(), path)?;
    let bad = |m: String| MarquetError::spec(path, "HEP001 §11.7", m);
    let uint = |name: &str| -> Result<Option<u64>> {
        Ok(h5::attr_read(ds.id(), name)?.and_then(|a| match (&a.dtype, &a.space) {
            (Dtype::Int { .. }, Space::Scalar) => a.as_u64(), // any width or sign (R3)
            _ => None,
        }))
    };
    let k = uint(names::BLOOM_K)?.ok_or_else(|| bad("k is missing or not a scalar unsigned integer".into()))?;
    let m_bits = uint(names::BLOOM_M_BITS)?.ok_or_else(|| bad("m_bits is missing or not a scalar unsigned integer".into()))?;
    let seed = uint(names::BLOOM_SEED)?.unwrap_or(0);
    let fam = super::read_token(ds.id(), names::BLOOM_HASH_FAMILY)?;
    if fam.as_deref() != Some(names::BLOOM_HASH_FAMILY_VALUE) {
        return Err(bad(format!("hash_family {fam:?} is not \"{}\"", names::BLOOM_HASH_FAMILY_VALUE)));
    }
    if k == 0 || k > u16::MAX as u64 {
        return Err(bad(format!("k {k} is not in 1..=65535")));
    }
    if seed > u32::MAX as u64 {
        return Err(bad(format!("seed {seed} does not fit uint32")));
    }
    if m_bits == 0 || m_bits % 8 != 0 {
        return Err(bad(format!("m_bits {m_bits} is not a non-zero multiple of 8")));
    }
    if m_bits > MAX_READ_BLOOM_M_BITS {
        return Err(bad(format!("m_bits {m_bits} is more than this reader accepts ({MAX_READ_BLOOM_M_BITS})")));
    }
    if info.dims.len() != 2 || info.dims[1] != m_bits / 8 || !matches!(info.dtype, Dtype::Int { size: 1, .. }) {
        return Err(bad(format!("dataset shape {:?} is not (n_chunks, m_bits / 8 = {}) of uint8", info.dims, m_bits / 8)));
    }
    Ok((BloomParams { k: k as u16, m_bits, seed: seed as u32 }, [info.dims[0], info.dims[1]]))
}

/// HEP001 §12.3 step 4 / §12.5 for `CHUNK_BLOOM`: tokens first, then the entries of the
/// chunks from the one holding `from_row` on.
pub(crate) fn maintain_bloom(t: &Table, info: &index::IndexInfo, from_row: u64, new_nrows: u64, new_gen: u64) -> Result<()> {
    let Ok((p, _)) = bloom_params(t, &info.path) else { return Ok(()) }; // malformed: left to go stale
    index::write_tokens(t, &info.path, new_gen, new_nrows)?;
    h5::flush(t.id())?; // tokens reach the file before any content does (local ruling L6)
    let col = t.column(&info.column)?;
    let ds = h5::dataset_open(t.id(), &info.path)?;
    let chunk = chunk_len(&col, new_nrows);
    write_bloom_rows(t, &col, &ds, &info.path, &p, (from_row / chunk) * chunk, new_nrows)
}

/// HEP001 §12.6 step 3 for `CHUNK_BLOOM` on the modified column: content, then tokens.
pub(crate) fn rebuild_bloom_after_update(t: &Table, info: &index::IndexInfo, new_gen: u64) -> Result<()> {
    let Ok((p, _)) = bloom_params(t, &info.path) else { return Ok(()) };
    let n = t.nrows()?;
    let col = t.column(&info.column)?;
    let ds = h5::dataset_open(t.id(), &info.path)?;
    write_bloom_rows(t, &col, &ds, &info.path, &p, 0, n)?;
    index::write_tokens(t, &info.path, new_gen, n)
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

// ------------------------------------------------------------------ verification

/// Check that a `SORTED_ROWS`, `BITMAP` or `CHUNK_BLOOM` index dataset (at `path`, open
/// as `ds`) correctly describes rows `[0, nrows)` of a column whose values are `col`
/// (fill `fill`, chunk length `chunk`) — HEP001 §13 req 9. Returns the problems found,
/// each naming the rule; never panics on malformed datasets.
pub fn verify_index(t_id: hdf5_sys::h5i::hid_t, kind: &str, path: &str, col: &Array, fill: Option<&[u8]>, chunk: u64, nrows: u64) -> Vec<String> {
    let r = match kind {
        k if k == names::KIND_SORTED_ROWS => verify_sorted_rows(t_id, path, col, fill, nrows),
        k if k == names::KIND_BITMAP => verify_bitmap(t_id, path, col, fill, nrows),
        k if k == names::KIND_CHUNK_BLOOM => verify_bloom(t_id, path, col, fill, chunk, nrows),
        _ => Ok(Vec::new()),
    };
    r.unwrap_or_else(|e| vec![e.to_string()])
}

fn verify_sorted_rows(t_id: hdf5_sys::h5i::hid_t, path: &str, col: &Array, fill: Option<&[u8]>, n: u64) -> Result<Vec<String>> {
    let ds = h5::dataset_open(t_id, path)?;
    let info = h5::dataset_info(ds.id(), path)?;
    if info.dims.len() != 1 || info.dims[0] < n || !matches!(info.dtype, Dtype::Int { signed: false, .. }) {
        return Ok(vec![format!("HEP001 §11.5: shape {:?} is not (NROWS = {n},) of an unsigned integer", info.dims)]);
    }
    let mut out = Vec::new();
    let attr = |name: &str| h5::attr_read(ds.id(), name).ok().flatten().and_then(|a| a.as_u64());
    let (want, want_nan, want_fill) = sorted_permutation(&cells(col, fill));
    for (name, v, w) in [(names::NAN_TAIL_LENGTH, attr(names::NAN_TAIL_LENGTH), want_nan), (names::FILL_TAIL_LENGTH, attr(names::FILL_TAIL_LENGTH), want_fill)] {
        if v != Some(w) {
            out.push(format!("HEP001 §11.5: {name} is {v:?}, the column has {w}"));
        }
    }
    if read_bool_attr(ds.id(), names::ORDERED).ok().flatten() != Some(true) {
        out.push("HEP001 §11.5: ordered is not TRUE".into());
    }
    let bytes = h5::dataset_read(ds.id(), 0, n, &Dtype::U64, path)?;
    let got = bytes.chunks_exact(8).map(|e| u64::from_le_bytes(e.try_into().unwrap_or([0; 8])));
    if let Some((rank, (g, w))) = got.zip(&want).enumerate().find(|(_, (g, w))| g != *w) {
        out.push(format!("HEP001 §11.5: rank {rank} holds row {g}, the order (ties by row) puts row {w} there"));
    }
    Ok(out)
}

fn verify_bitmap(t_id: hdf5_sys::h5i::hid_t, path: &str, col: &Array, fill: Option<&[u8]>, n: u64) -> Result<Vec<String>> {
    let ds = h5::dataset_open(t_id, path)?;
    let info = h5::dataset_info(ds.id(), path)?;
    let nbytes = n.div_ceil(8);
    if info.dims.len() != 2 || info.dims[1] < nbytes || !matches!(info.dtype, Dtype::Int { size: 1, .. }) {
        return Ok(vec![format!("HEP001 §11.6: shape {:?} is not (K, ceil(NROWS / 8) = {nbytes}) of uint8", info.dims)]);
    }
    let Some((refs, _, Space::Scalar)) = h5::attr_read_refs(ds.id(), names::VALUES)? else {
        return Ok(vec!["HEP001 §11.6: VALUES is not a scalar object reference".into()]);
    };
    let Some(vpath) = refs.into_iter().flatten().next().filter(|p| !p.is_empty()) else {
        return Ok(vec!["HEP001 §11.6: VALUES is a null reference".into()]);
    };
    let vds = h5::dataset_open(t_id, &vpath)?;
    let vi = h5::dataset_info(vds.id(), &vpath)?;
    let kk = info.dims[0];
    if kk > MAX_READ_BITMAP_VALUES {
        return Ok(vec![format!("HEP001 §11.6: {kk} values, more than this validator reads ({MAX_READ_BITMAP_VALUES})")]);
    }
    let mut out = Vec::new();
    if h5::attr_exists(vds.id(), names::KIND)? {
        out.push(format!("HEP001 §11.6: values dataset {vpath} carries KIND"));
    }
    if vi.dims.len() != 1 || vi.dims[0] != kk || vi.dtype.to_le() != col.dtype.to_le() {
        out.push(format!("HEP001 §11.6: values dataset {vpath} is not ({kk},) of the column's datatype"));
        return Ok(out);
    }
    let vals = Array { dtype: vi.dtype.to_le(), bytes: h5::dataset_read(vds.id(), 0, kk, &vi.dtype.to_le(), &vpath)? };
    let keys: Vec<Option<Key>> = (0..vals.len()).map(|i| key_of(&vals, i)).collect();
    let cells = cells(col, fill);
    for (j, k) in keys.iter().enumerate() {
        let row = h5::dataset_read_rows_2d(ds.id(), j as u64, 1, nbytes, &Dtype::U8, path)?;
        let first_bad = (0..n as usize).find(|&r| {
            let set = row[r / 8] & (1 << (r % 8)) != 0;
            let is = matches!((&cells[r], k), (Cell::Value(v), Some(k)) if v.cmp_total(k) == Ordering::Equal);
            set != is
        });
        if let Some(r) = first_bad {
            out.push(format!("HEP001 §11.6: bitmap row {j} (value {}) is wrong at table row {r}", vals.display(j)));
        }
    }
    if read_bool_attr(ds.id(), names::EXHAUSTIVE).ok().flatten() == Some(true) {
        if let Some(r) = cells.iter().position(|c| matches!(c, Cell::Value(v) if !keys.iter().any(|k| k.as_ref().is_some_and(|k| k.cmp_total(v) == Ordering::Equal)))) {
            out.push(format!("HEP001 §11.6: exhaustive is TRUE but the value of row {r} is not listed"));
        }
    }
    Ok(out)
}

fn verify_bloom(t_id: hdf5_sys::h5i::hid_t, path: &str, col: &Array, fill: Option<&[u8]>, chunk: u64, n: u64) -> Result<Vec<String>> {
    let ds = h5::dataset_open(t_id, path)?;
    let info = h5::dataset_info(ds.id(), path)?;
    let bad = |m: String| MarquetError::spec(path, "HEP001 §11.7", m);
    let uint = |name: &str| h5::attr_read(ds.id(), name).ok().flatten().filter(|a| matches!(a.dtype, Dtype::Int { .. }) && a.space == Space::Scalar).and_then(|a| a.as_u64());
    let (Some(k), Some(m_bits)) = (uint(names::BLOOM_K), uint(names::BLOOM_M_BITS)) else { return Err(bad("k or m_bits is missing or not a scalar unsigned integer".into())) };
    let seed = uint(names::BLOOM_SEED).unwrap_or(0);
    let fam = super::read_token(ds.id(), names::BLOOM_HASH_FAMILY)?;
    if fam.as_deref() != Some(names::BLOOM_HASH_FAMILY_VALUE) || k == 0 || k > u16::MAX as u64 || seed > u32::MAX as u64 || m_bits == 0 || m_bits % 8 != 0 || m_bits > MAX_READ_BLOOM_M_BITS {
        return Err(bad(format!("parameters k={k} m_bits={m_bits} seed={seed} hash_family={fam:?} are not valid")));
    }
    let nchunks = n.div_ceil(chunk.max(1));
    if info.dims.len() != 2 || info.dims[1] != m_bits / 8 || info.dims[0] < nchunks {
        return Err(bad(format!("shape {:?} is not (n_chunks = {nchunks}, m_bits / 8 = {})", info.dims, m_bits / 8)));
    }
    let mut out = Vec::new();
    for c in 0..nchunks {
        let row = h5::dataset_read_rows_2d(ds.id(), c, 1, info.dims[1], &Dtype::U8, path)?;
        let (s, e) = (c * chunk, ((c + 1) * chunk).min(n));
        for r in s..e {
            let el = col.element(r as usize);
            if super::is_missing(&col.dtype, el, fill) {
                continue;
            }
            if let Some(b) = bloom::canonical_bytes(&col.dtype, el) {
                if !bloom::may_contain(&row, &b, k as u16, seed as u32) {
                    out.push(format!("HEP001 §11.7: the filter of chunk {c} lacks the value of row {r} ({})", col.display(r as usize)));
                    break;
                }
            }
        }
    }
    Ok(out)
}
