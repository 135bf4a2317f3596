//! The `BITMAP` index of HEP001 §11.6: one bit row per distinct value, built whole and
//! verified.

use std::cmp::Ordering;

use crate::error::{MarquetError, Result};
use crate::h5::{self, DatasetSpec, Dtype, Filter, Space};
use crate::h5col::{Array, Table};
use crate::spec::names;

use super::*;

/// Largest number of distinct values a new `BITMAP` index holds (each value costs
/// `NROWS / 8` bytes).
pub const DEFAULT_BITMAP_MAX_VALUES: usize = 1024;
/// Largest `K` (values) of a `BITMAP` index a query or the validator reads; a larger one
/// is reported as malformed rather than allocated (extents are untrusted input).
pub const MAX_READ_BITMAP_VALUES: u64 = 1 << 20;
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
    let g = ensure_generation(t)?;
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
    link_index(t, column, ds.id(), &path, names::KIND_BITMAP)?;
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
    write_tokens(t, &path, g, n)?;
    Ok(path)
}

// ------------------------------------------------------------------ CHUNK_BLOOM

pub(super) fn verify_bitmap(t_id: hdf5_sys::h5i::hid_t, path: &str, col: &Array, fill: Option<&[u8]>, n: u64) -> Result<Vec<String>> {
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
