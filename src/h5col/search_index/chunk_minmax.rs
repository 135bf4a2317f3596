//! The `CHUNK_MINMAX` index of HEP001 §11.4: per-chunk minimum and maximum of a numeric
//! column, built, kept current on append/truncate, and used to skip chunks for ranges.


use crate::error::{MarquetError, Result};
use crate::h5::{self, DatasetSpec, Dtype, Field, Filter, Hid};
use crate::h5col::{Array, ColumnKind, Table};
use crate::spec::names;

use super::*;

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

pub(super) fn numeric_order_supported(d: &Dtype) -> bool {
    matches!(d, Dtype::Int { .. } | Dtype::Float { .. }) || matches!(d, Dtype::Enum { .. })
}

/// One CHUNK_MINMAX entry computed from the rows of one chunk.
pub(super) fn minmax_entry(a: &Array, fill: Option<&[u8]>) -> Vec<u8> {
    let es = a.dtype.size();
    let is_float = matches!(a.dtype, Dtype::Float { .. });
    let mut nan = 0u64;
    let mut fillc = 0u64;
    let mut best: Option<(usize, usize)> = None; // indices of min and max
    for i in 0..a.len() {
        let e = a.element(i);
        let v = a.get_f64(i).unwrap_or(0.0);
        let missing = crate::h5col::is_missing(&a.dtype, e, fill);
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
pub(super) fn write_minmax_entries(t: &Table, column: &str, ds: &Hid, path: &str, from_row: u64, nrows: u64) -> Result<()> {
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
        for (i, _) in miss.iter().enumerate().filter(|(_, &m)| !m) {
            let v = a.get_f64(i).unwrap_or(f64::NAN);
            if v >= lo && v <= hi {
                rows.push(start + i as u64);
            }
        }
    }
    Ok((rows, stats))
}
