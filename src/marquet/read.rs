//! Reading geometry values (HEP002 §7): WKB of any storage form, point arrays, and the
//! per-row facts of stored values.

use crate::error::{MarquetError, Result};
use crate::h5::Dtype;
use crate::h5col::{self, Array, Table};
use crate::spec::{BBox, Dimensions, GeometryKind, GeometryType};
use crate::wkb::{self, WkbInfo};

use super::*;

/// A geometry column opened once for WKB reads ([`MarquetTable::read_wkb`],
/// [`MarquetTable::take_wkb`]).
pub(super) enum WkbSource {
    Var(h5col::list::ListColumn),
    Fixed(h5col::Column, usize),
    /// Points, encoded as little-endian ISO WKB with this type code.
    Point(h5col::Column, Dimensions, [u8; 4]),
}

impl WkbSource {
    pub(super) fn open(t: &Table, info: &GeometryColumnInfo) -> Result<WkbSource> {
        Ok(match info.form {
            StorageForm::VarWkb => WkbSource::Var(t.list_column(&info.name)?),
            StorageForm::FixedWkb { size } => WkbSource::Fixed(t.column(&info.name)?, size),
            StorageForm::Point { dims, .. } => {
                let code = GeometryType::new(GeometryKind::Point, dims).iso_code().to_le_bytes();
                WkbSource::Point(t.column(&info.name)?, dims, code)
            }
        })
    }

    /// Read rows `[start, end)` and append the WKB of rows `start + i` for each `i` of
    /// `picks` (ascending) to `out`. `path` names the column in errors.
    pub(super) fn push_span(&self, path: &str, start: u64, end: u64, picks: impl Iterator<Item = usize> + Clone, out: &mut WkbBuffer) -> Result<()> {
        match self {
            WkbSource::Var(lc) => {
                let l = lc.read(start, end)?;
                if !matches!(l.values, h5col::ListValues::Leaf(_)) {
                    return Err(MarquetError::spec(path, "HEP002 §7.2", "VALUES must be a uint8 dataset"));
                }
                for i in picks {
                    if l.is_null(i) {
                        out.push(None);
                        continue;
                    }
                    match l.bytes_of(i) {
                        Some(b) if !b.is_empty() => out.push(Some(b)),
                        _ => return Err(empty_wkb(path, start + i as u64)),
                    }
                }
            }
            WkbSource::Fixed(c, size) => {
                let a = c.read(start, end - start)?;
                let miss = a.missing(c.fill());
                for i in picks {
                    out.push(if miss[i] { None } else { Some(&a.bytes[i * size..(i + 1) * size]) });
                }
            }
            WkbSource::Point(c, dims, code) => {
                let a = c.read(start, end - start)?;
                let miss = a.missing(c.fill());
                if let Some(k) = f64_coords(&a, *dims) {
                    // Coordinates stored as WKB has them: copy each element after the header.
                    let (lo, hi) = (out.offsets.len(), out.valid.len());
                    match k {
                        2 => push_records::<2, 21>(&a.bytes, &miss, picks, code, out),
                        3 => push_records::<3, 29>(&a.bytes, &miss, picks, code, out),
                        _ => push_records::<4, 37>(&a.bytes, &miss, picks, code, out),
                    }
                    debug_assert_eq!(out.offsets.len() - lo, out.valid.len() - hi);
                    return Ok(());
                }
                let p = points_from(&a, &miss, *dims);
                for i in picks {
                    push_point_wkb(out, &p, i, code);
                }
            }
        }
        Ok(())
    }
}

/// Append the WKB of the points `picks` of `bytes` (elements of `K` little-endian float64,
/// as [`f64_coords`] found them; `miss`: missing rows) to `out`: for each, the record `R`
/// = 5 + 8·K bytes long (byte order, `code`, the coordinates as stored). Flags, offsets
/// and records are written in passes of their own, each without a capacity check per
/// point (a whole-table read of 1,000,000 points spent 66 M instructions here when each
/// point was pushed field by field; issue #33 item 6).
fn push_records<const K: usize, const R: usize>(bytes: &[u8], miss: &[bool], picks: impl Iterator<Item = usize> + Clone, code: &[u8; 4], out: &mut WkbBuffer) {
    debug_assert_eq!(R, 5 + 8 * K);
    out.valid.extend(picks.clone().map(|i| !miss[i]));
    let base = out.bytes.len();
    let mut end = base as u64;
    out.offsets.extend(picks.clone().map(|i| {
        end += if miss[i] { 0 } else { R as u64 };
        end
    }));
    out.bytes.resize(end as usize, 0);
    let valid = picks.filter(|&i| !miss[i]);
    for (rec, i) in out.bytes[base..].chunks_exact_mut(R).zip(valid) {
        rec[0] = 1;
        rec[1..5].copy_from_slice(code);
        rec[5..].copy_from_slice(&bytes[i * 8 * K..(i + 1) * 8 * K]);
    }
}

/// The error for a non-null row of a WKB list column whose slice is empty (HEP002 §7.2).
pub(super) fn empty_wkb(path: &str, row: u64) -> MarquetError {
    MarquetError::InvalidWkb { path: path.to_string(), row: Some(row), message: "empty slice for a non-null row (HEP002 §7.2)".into() }
}

/// The number of coordinates of a point column whose elements are exactly its coordinates
/// as little-endian float64, back to back in WKB order (x, y[, z][, m]) — what Marquet
/// writes — so that an element's bytes are its WKB coordinates; `None` for other layouts.
fn f64_coords(a: &Array, dims: Dimensions) -> Option<usize> {
    let Dtype::Compound { fields, size } = &a.dtype else { return None };
    let k = 2 + usize::from(dims.has_z()) + usize::from(dims.has_m());
    let exact = fields.len() == k
        && *size == 8 * k
        && fields.iter().enumerate().all(|(i, f)| f.offset == 8 * i && matches!(f.dtype, Dtype::Float { size: 8, big_endian: false }));
    exact.then_some(k)
}

/// Coordinate arrays of the point-column elements in `a` (`miss`: missing rows).
pub(crate) fn points_from(a: &Array, miss: &[bool], dims: Dimensions) -> PointArrays {
    let k = a.len();
    if let Some(nc) = f64_coords(a, dims) {
        let k = k.min(miss.len());
        // Every field is a little-endian float64 at 8 * its index: read them straight.
        let f = |e: &[u8], j: usize| f64::from_le_bytes(e[8 * j..8 * j + 8].try_into().unwrap_or([0; 8]));
        let elems = a.bytes[..k * 8 * nc].chunks_exact(8 * nc);
        let col = |j: usize| elems.clone().map(|e| f(e, j)).collect::<Vec<f64>>();
        let zi = dims.has_z().then_some(2);
        let mi = dims.has_m().then_some(2 + usize::from(dims.has_z()));
        return PointArrays {
            x: col(0),
            y: col(1),
            z: zi.map(col),
            m: mi.map(col),
            valid: miss.iter().take(k).map(|m| !m).collect(),
        };
    }
    let mut p = PointArrays {
        x: Vec::with_capacity(k),
        y: Vec::with_capacity(k),
        z: dims.has_z().then(|| Vec::with_capacity(k)),
        m: dims.has_m().then(|| Vec::with_capacity(k)),
        valid: Vec::with_capacity(k),
    };
    let Dtype::Compound { fields, .. } = &a.dtype else { unreachable!("checked by point_layout") };
    for (i, &missing) in miss.iter().enumerate().take(k) {
        let e = a.element(i);
        let get = |fi: usize| -> f64 {
            let f = &fields[fi];
            let raw = &e[f.offset..f.offset + f.dtype.size()];
            if f.dtype.size() == 4 {
                f32::from_le_bytes(raw.try_into().unwrap_or([0; 4])) as f64
            } else {
                f64::from_le_bytes(raw.try_into().unwrap_or([0; 8]))
            }
        };
        p.valid.push(!missing);
        p.x.push(get(0));
        p.y.push(get(1));
        let mut fi = 2;
        if let Some(z) = p.z.as_mut() {
            z.push(get(fi));
            fi += 1;
        }
        if let Some(m) = p.m.as_mut() {
            m.push(get(fi));
        }
    }
    p
}

/// Append row `i` of `p` as little-endian ISO point WKB (`code`: its type code), or a null.
pub(crate) fn push_point_wkb(out: &mut WkbBuffer, p: &PointArrays, i: usize, code: &[u8; 4]) {
    if p.valid[i] {
        out.bytes.push(1);
        out.bytes.extend_from_slice(code);
        out.bytes.extend_from_slice(&p.x[i].to_le_bytes());
        out.bytes.extend_from_slice(&p.y[i].to_le_bytes());
        if let Some(z) = &p.z {
            out.bytes.extend_from_slice(&z[i].to_le_bytes());
        }
        if let Some(m) = &p.m {
            out.bytes.extend_from_slice(&m[i].to_le_bytes());
        }
    }
    out.valid.push(p.valid[i]);
    out.offsets.push(out.bytes.len() as u64);
}

/// The body of [`MarquetTable::read_wkb`].
pub(crate) fn read_wkb(this: &MarquetTable, name: &str, start: u64, end: u64) -> Result<WkbBuffer> {
    this.require_interpretable()?;
    let n = this.nrows()?;
    if end > n || start > end {
        return Err(MarquetError::InvalidArgument(format!("rows {start}..{end} out of range for {n} rows")));
    }
    let info = this.geometry_column(name)?;
    let mut out = WkbBuffer::default();
    out.offsets.push(0);
    match info.form {
        StorageForm::VarWkb => {
            let l = this.table.list_column(name)?.read(start, end)?;
            out.valid = (0..l.len()).map(|i| !l.is_null(i)).collect();
            let h5col::ListValues::Leaf(a) = l.values else {
                return Err(MarquetError::spec(&info.path, "HEP002 §7.2", "VALUES must be a uint8 dataset"));
            };
            out.offsets = l.offsets;
            out.bytes = a.bytes;
            for i in 0..out.len() {
                if out.valid[i] && out.offsets[i] == out.offsets[i + 1] {
                    return Err(empty_wkb(&info.path, start + i as u64));
                }
            }
        }
        StorageForm::FixedWkb { .. } | StorageForm::Point { .. } => {
            WkbSource::open(&this.table, &info)?.push_span(&info.path, start, end, 0..(end - start) as usize, &mut out)?;
        }
    }
    Ok(out)
}
/// The body of [`MarquetTable::read_points`].
pub(crate) fn read_points(this: &MarquetTable, name: &str, start: u64, end: u64) -> Result<PointArrays> {
    let info = this.geometry_column(name)?;
    let StorageForm::Point { dims, .. } = info.form else {
        return Err(MarquetError::InvalidArgument(format!("{} is not a point column", info.path)));
    };
    let n = this.nrows()?;
    if end > n || start > end {
        return Err(MarquetError::InvalidArgument(format!("rows {start}..{end} out of range for {n} rows")));
    }
    let c = this.table.column(name)?;
    let a = c.read(start, end - start)?;
    Ok(points_from(&a, &a.missing(c.fill()), dims))
}
/// The body of [`MarquetTable::take_wkb`].
pub(crate) fn take_wkb(this: &MarquetTable, name: &str, rows: &[u64]) -> Result<WkbBuffer> {
    this.require_interpretable()?;
    let n = this.nrows()?;
    if let Some(&last) = rows.last() {
        if last >= n {
            return Err(MarquetError::InvalidArgument(format!(
                "row {last} out of range for {n} rows"
            )));
        }
    }
    let info = this.geometry_column(name)?;
    let spans = h5col::take_spans(rows, &info.path)?;
    let src = WkbSource::open(&this.table, &info)?;
    let mut out = WkbBuffer::new();
    for sp in spans {
        let picks = rows[sp.first..sp.last].iter().map(|&r| (r - sp.start) as usize);
        src.push_span(&info.path, sp.start, sp.end, picks, &mut out)?;
    }
    Ok(out)
}
/// The body of [`MarquetTable::read_geometries`].
pub(crate) fn read_geometries(this: &MarquetTable, name: &str, start: u64, end: u64) -> Result<Vec<Option<wkb::Geometry>>> {
    let b = this.read_wkb(name, start, end)?;
    let path = this.table.member_path(name);
    (0..b.len())
        .map(|i| {
            b.get(i)
                .map(|w| wkb::decode(w).map_err(|e| e.into_marquet(path.clone(), Some(start + i as u64))))
                .transpose()
        })
        .collect()
}
/// The body of [`MarquetTable::read_geo`].
pub(crate) fn read_geo(this: &MarquetTable, name: &str, start: u64, end: u64) -> Result<Vec<Option<geo_types::Geometry<f64>>>> {
    Ok(this.read_geometries(name, start, end)?.into_iter().map(|g| g.map(geo_types::Geometry::from)).collect())
}
/// The body of [`MarquetTable::row_infos`].
pub(crate) fn row_infos(this: &MarquetTable, name: &str, start: u64, end: u64) -> Result<Vec<RowInfo>> {
    let info = this.geometry_column(name)?;
    if let StorageForm::Point { dims, .. } = info.form {
        let p = this.read_points(name, start, end)?;
        let gt = GeometryType::new(GeometryKind::Point, dims);
        return Ok((0..p.valid.len())
            .map(|i| {
                if !p.valid[i] {
                    return RowInfo::Null;
                }
                let mut b = BBox::EMPTY;
                let empty = p.x[i].is_nan() && p.y[i].is_nan();
                if !empty {
                    b.add_xy(p.x[i], p.y[i]);
                    if let Some(z) = &p.z {
                        b.add_z(z[i]);
                    }
                    if let Some(m) = &p.m {
                        b.add_m(m[i]);
                    }
                }
                RowInfo::Geometry(WkbInfo { geometry_type: gt, bbox: b, is_empty: empty, num_coords: 1 })
            })
            .collect());
    }
    let b = this.read_wkb(name, start, end)?;
    let mut rows = (0..b.len())
        .map(|i| match b.get(i) {
            None => Ok(RowInfo::Null),
            Some(w) => wkb::scan(w)
                .map(RowInfo::Geometry)
                .map_err(|e| e.into_marquet(info.path.clone(), Some(start + i as u64))),
        })
        .collect::<Result<Vec<_>>>()?;
    bounds::grow_rows(&info, &mut rows, |i| b.get(i))?;
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The record writer gives the bytes, offsets and flags of the field-by-field writer
    /// (`push_point_wkb` over `PointArrays`) for 2, 3 and 4 ordinates, missing rows among
    /// the picks, picks that skip rows, and a buffer that already holds values.
    #[test]
    fn records_equal_point_by_point() {
        for k in 2..=4usize {
            let rows = 37usize;
            let bytes: Vec<u8> = (0..rows * k).flat_map(|i| (i as f64 * 1.5 - 7.25).to_le_bytes()).collect();
            let miss: Vec<bool> = (0..rows).map(|i| i % 5 == 3 || i == 0).collect();
            let code = [0xE9u8, 0x03, 0, 0];
            let col = |j: usize| (0..rows).map(|i| f64::from_le_bytes(bytes[(i * k + j) * 8..(i * k + j) * 8 + 8].try_into().unwrap())).collect::<Vec<f64>>();
            let p = PointArrays { x: col(0), y: col(1), z: (k > 2).then(|| col(2)), m: (k > 3).then(|| col(3)), valid: miss.iter().map(|m| !m).collect() };
            for picks in [(0..rows).collect::<Vec<usize>>(), (0..rows).filter(|i| i % 3 != 1).collect()] {
                let mut want = WkbBuffer::new();
                want.push(Some(b"\x01\x01\x00\x00\x00"));
                let mut got = want.clone();
                for &i in &picks {
                    push_point_wkb(&mut want, &p, i, &code);
                }
                match k {
                    2 => push_records::<2, 21>(&bytes, &miss, picks.iter().copied(), &code, &mut got),
                    3 => push_records::<3, 29>(&bytes, &miss, picks.iter().copied(), &code, &mut got),
                    _ => push_records::<4, 37>(&bytes, &miss, picks.iter().copied(), &code, &mut got),
                }
                assert_eq!(got.bytes, want.bytes, "k {k}");
                assert_eq!(got.offsets, want.offsets, "k {k}");
                assert_eq!(got.valid, want.valid, "k {k}");
            }
        }
    }
}
