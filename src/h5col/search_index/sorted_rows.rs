//! The `SORTED_ROWS` index of HEP001 §11.5: the row permutation that sorts a column
//! (values, then fill, then NaN), built whole and verified.


use crate::error::Result;
use crate::h5::{self, DatasetSpec, Dtype};
use crate::h5col::{Array, Table};
use crate::spec::names;

use super::*;

/// Chunk length (elements) of `SORTED_ROWS` datasets. Stored unfiltered: a query reads
/// single elements during its binary search, and a filtered chunk would have to be
/// decompressed whole for each.
pub const DEFAULT_SORTED_ROWS_CHUNK: u64 = 65_536;

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
    let g = ensure_generation(t)?;
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
    link_index(t, column, ds.id(), &path, names::KIND_SORTED_ROWS)?;
    h5::dataset_set_len(ds.id(), n, &path)?;
    let bytes: Vec<u8> = perm.iter().flat_map(|r| r.to_le_bytes()).collect();
    h5::dataset_write(ds.id(), 0, &Dtype::U64, &bytes, &path)?;
    h5::attr_write_u64(ds.id(), names::NAN_TAIL_LENGTH, nan_tail)?;
    h5::attr_write_u64(ds.id(), names::FILL_TAIL_LENGTH, fill_tail)?;
    write_bool_attr(ds.id(), names::ORDERED, true)?;
    write_tokens(t, &path, g, n)?; // content, then tokens
    Ok(path)
}

// ------------------------------------------------------------------ BITMAP

pub(super) fn verify_sorted_rows(t_id: hdf5_sys::h5i::hid_t, path: &str, col: &Array, fill: Option<&[u8]>, n: u64) -> Result<Vec<String>> {
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
