//! The `CHUNK_BLOOM` index of HEP001 §11.7: one Bloom filter per chunk (hashing in
//! [`super::bloom`]), kept current on append/truncate and rebuilt after updates.


use crate::error::{MarquetError, Result};
use crate::h5::{self, Dtype, Hid, Space};
use crate::h5col::{Array, Column, Table};
use crate::spec::names;

use super::*;

/// Largest `m_bits` of a `CHUNK_BLOOM` index a query or the validator reads (16 MiB a row).
pub const MAX_READ_BLOOM_M_BITS: u64 = 1 << 27;
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
pub(super) fn chunk_len(col: &Column, nrows: u64) -> u64 {
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
    let g = ensure_generation(t)?;
    let m_bytes = p.m_bits / 8;
    let rel = format!("{}/{column}__chunk_bloom", names::SEARCH_INDEXES);
    let ds = open_or_create(t, &rel, &Dtype::U8, 2, || {
        h5::dataset_create_2d(t.id(), &rel, &Dtype::U8, [0, m_bytes], [1, m_bytes.min(1 << 20)], &[])
    })?;
    let path = t.member_path(&rel);
    link_index(t, column, ds.id(), &path, names::KIND_CHUNK_BLOOM)?;
    write_scalar(ds.id(), names::BLOOM_K, &Dtype::U16, &p.k.to_le_bytes())?;
    h5::attr_write_u64(ds.id(), names::BLOOM_M_BITS, p.m_bits)?;
    h5::attr_write_ascii(ds.id(), names::BLOOM_HASH_FAMILY, names::BLOOM_HASH_FAMILY_VALUE)?;
    write_scalar(ds.id(), names::BLOOM_SEED, &Dtype::Int { size: 4, signed: false, big_endian: false }, &p.seed.to_le_bytes())?;
    write_bloom_rows(t, &col, &ds, &path, &p, 0, n)?;
    write_tokens(t, &path, g, n)?;
    Ok(path)
}

/// One chunk's filter row.
pub(super) fn bloom_row(a: &Array, fill: Option<&[u8]>, p: &BloomParams) -> Vec<u8> {
    let mut row = vec![0u8; (p.m_bits / 8) as usize];
    for i in 0..a.len() {
        let e = a.element(i);
        if crate::h5col::is_missing(&a.dtype, e, fill) {
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
pub(super) fn write_bloom_rows(t: &Table, col: &Column, ds: &Hid, path: &str, p: &BloomParams, from_row: u64, nrows: u64) -> Result<()> {
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
pub(crate) fn maintain_bloom(t: &Table, info: &IndexInfo, from_row: u64, new_nrows: u64, new_gen: u64) -> Result<()> {
    let Ok((p, _)) = bloom_params(t, &info.path) else { return Ok(()) }; // malformed: left to go stale
    write_tokens(t, &info.path, new_gen, new_nrows)?;
    h5::flush(t.id())?; // tokens reach the file before any content does (local ruling L6)
    let col = t.column(&info.column)?;
    let ds = h5::dataset_open(t.id(), &info.path)?;
    let chunk = chunk_len(&col, new_nrows);
    write_bloom_rows(t, &col, &ds, &info.path, &p, (from_row / chunk) * chunk, new_nrows)
}

/// HEP001 §12.6 step 3 for `CHUNK_BLOOM` on the modified column: content, then tokens.
pub(crate) fn rebuild_bloom_after_update(t: &Table, info: &IndexInfo, new_gen: u64) -> Result<()> {
    let Ok((p, _)) = bloom_params(t, &info.path) else { return Ok(()) };
    let n = t.nrows()?;
    let col = t.column(&info.column)?;
    let ds = h5::dataset_open(t.id(), &info.path)?;
    write_bloom_rows(t, &col, &ds, &info.path, &p, 0, n)?;
    write_tokens(t, &info.path, new_gen, n)
}

pub(super) fn verify_bloom(t_id: hdf5_sys::h5i::hid_t, path: &str, col: &Array, fill: Option<&[u8]>, chunk: u64, n: u64) -> Result<Vec<String>> {
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
            if crate::h5col::is_missing(&col.dtype, el, fill) {
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
