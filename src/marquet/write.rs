//! Writing rows (HEP002 §11): encoding geometry values for their storage form, covering
//! values, widening the column summaries (BBOX, GEOMETRY_TYPES), and the append itself.

use std::collections::BTreeSet;
use crate::error::{MarquetError, Result};
use crate::h5::{self, Dtype, Space};
use crate::h5col::{Array, ColumnValues, ListArray};
use crate::spec::{names, BBox, Dimensions, GeometryKind, GeometryType};
use crate::wkb::{self, ByteOrder, WkbInfo};
use rayon::prelude::*;

use super::*;

/// Rows per block of the parallel per-row work in [`MarquetTable::prepare`].
pub(super) const PAR_BLOCK_ROWS: usize = 16_384;

/// `f(i)` for every row `i` in `0..n`, on all cores in blocks. Deterministic: the error of
/// the lowest failing row is returned, as a sequential loop would.
pub(super) fn par_rows<T: Send>(n: usize, f: impl Fn(usize) -> Result<T> + Sync) -> Result<Vec<T>> {
    let blocks: Vec<Result<Vec<T>>> = (0..n.div_ceil(PAR_BLOCK_ROWS))
        .into_par_iter()
        .map(|b| (b * PAR_BLOCK_ROWS..((b + 1) * PAR_BLOCK_ROWS).min(n)).map(&f).collect())
        .collect();
    let mut out = Vec::with_capacity(n);
    for b in blocks {
        out.extend(b?);
    }
    Ok(out)
}

/// Exact column summaries accumulated over rows.
#[derive(Debug, Clone)]
pub(crate) struct SummaryAcc {
    pub types: BTreeSet<GeometryType>,
    pub bbox: BBox,
    pub all_z: bool,
    pub all_m: bool,
    pub any: bool,
}

impl Default for SummaryAcc {
    fn default() -> Self {
        SummaryAcc { types: BTreeSet::new(), bbox: BBox::EMPTY, all_z: true, all_m: true, any: false }
    }
}

impl SummaryAcc {
    pub fn add(&mut self, rows: &[RowInfo]) {
        let mut last = None;
        for r in rows {
            if let RowInfo::Geometry(g) = r {
                // Rows of one type mostly follow each other: the set is asked only when the
                // type changes (a BTreeSet insert per row was 1 % of a point convert).
                if last != Some(g.geometry_type) {
                    self.types.insert(g.geometry_type);
                    last = Some(g.geometry_type);
                }
                if !g.is_empty {
                    self.any = true;
                    self.all_z &= g.geometry_type.dims.has_z();
                    self.all_m &= g.geometry_type.dims.has_m();
                    self.bbox = self.bbox.union(&g.bbox);
                }
            }
        }
    }
}

/// The body of [`MarquetTable::prepare`].
pub(crate) fn prepare(this: &MarquetTable, info: &GeometryColumnInfo, v: &GeometryValues) -> Result<(ColumnValues, Vec<RowInfo>)> {
    let _ = this;
    prepare_at(info, v, 0)
}

/// [`prepare`] for values that land at table row `base`: errors name the table row
/// `base + i` (issue #19: the row counted from the whole operation, not from its batch).
pub(crate) fn prepare_at(info: &GeometryColumnInfo, v: &GeometryValues, base: u64) -> Result<(ColumnValues, Vec<RowInfo>)> {
    let path = &info.path;
    match (info.form, v) {
        (StorageForm::Point { dims, f32 }, GeometryValues::Points { dims: d2, x, y, z, m, valid }) => {
            if *d2 != dims {
                return Err(MarquetError::InvalidArgument(format!(
                    "{path}: {d2:?} points cannot be stored in a {dims:?} point column; replace the column first (HEP002 §11.2)"
                )));
            }
            let n = x.len();
            let lens_ok = y.len() == n
                && z.as_ref().map(|v| v.len() == n).unwrap_or(!dims.has_z())
                && m.as_ref().map(|v| v.len() == n).unwrap_or(!dims.has_m())
                && valid.as_ref().map(|v| v.len() == n).unwrap_or(true);
            if !lens_ok {
                return Err(MarquetError::InvalidArgument(format!("{path}: coordinate arrays differ in length or miss Z/M")));
            }
            let dt = types::point_dtype(dims, f32);
            let gt = GeometryType::new(GeometryKind::Point, dims);
            let nd = dims.size();
            let es = dt.size();
            // Per row, on all cores in blocks, straight into the output buffers (no
            // allocation per point, no intermediate vectors): the summary, the bytes.
            let mut bytes = vec![0u8; n * es];
            let mut rows = vec![RowInfo::Null; n];
            let mut missing = vec![false; n];
            let row = |i: usize, out: &mut [u8], r: &mut RowInfo, miss: &mut bool| -> Result<()> {
                if !valid.as_ref().map(|v| v[i]).unwrap_or(true) {
                    *miss = true;
                    return Ok(());
                }
                let c = [x[i], y[i], z.as_ref().map(|v| v[i]).unwrap_or(f64::NAN), m.as_ref().map(|v| v[i]).unwrap_or(f64::NAN)];
                // Summaries of an f32 column from the values as stored (HEP002 §7.4).
                let c = if f32 { checks::stored_f32(c) } else { c };
                let empty = c[0].is_nan() && c[1].is_nan();
                if !empty && (c[0].is_nan() || c[1].is_nan()) {
                    return Err(MarquetError::InvalidArgument(format!(
                        "{path} row {}: a point needs both x and y, or neither (empty) (HEP002 §7.4)", base + i as u64
                    )));
                }
                if !empty && c.iter().any(|v| v.is_infinite()) {
                    return Err(checks::refused(
                        info,
                        base + i as u64,
                        checks::RULE_FINITE,
                        format!("point ({:?}, {:?}) has an infinite ordinate", c[0], c[1]),
                    ));
                }
                let mut bbox = BBox::EMPTY;
                let mut o = [f64::NAN; 4];
                if !empty {
                    bbox.add_xy(c[0], c[1]);
                    o[0] = c[0];
                    o[1] = c[1];
                    let mut k = 2;
                    if dims.has_z() {
                        o[k] = c[2];
                        bbox.add_z(c[2]);
                        k += 1;
                    }
                    if dims.has_m() {
                        o[k] = c[3];
                        bbox.add_m(c[3]);
                    }
                }
                // The fill value must not be a stored point (it would read as null).
                let fillv = names::FILL_F64;
                if !empty && c[0] == fillv && c[1] == fillv {
                    return Err(MarquetError::InvalidArgument(format!("{path} row {}: coordinates equal the fill value", base + i as u64)));
                }
                for (k, v) in o[..nd].iter().enumerate() {
                    if f32 {
                        out[4 * k..4 * k + 4].copy_from_slice(&(*v as f32).to_le_bytes());
                    } else {
                        out[8 * k..8 * k + 8].copy_from_slice(&v.to_le_bytes());
                    }
                }
                *r = RowInfo::Geometry(WkbInfo { geometry_type: gt, bbox, is_empty: empty, num_coords: 1 });
                Ok(())
            };
            if es > 0 {
                // Blocks in row order; the first error of the lowest block is the
                // lowest failing row, as a sequential loop would report.
                let results: Vec<Result<()>> = bytes
                    .par_chunks_mut(PAR_BLOCK_ROWS * es)
                    .zip(rows.par_chunks_mut(PAR_BLOCK_ROWS))
                    .zip(missing.par_chunks_mut(PAR_BLOCK_ROWS))
                    .enumerate()
                    .map(|(blk, ((bb, rr), mm))| {
                        for j in 0..rr.len() {
                            row(blk * PAR_BLOCK_ROWS + j, &mut bb[j * es..(j + 1) * es], &mut rr[j], &mut mm[j])?;
                        }
                        Ok(())
                    })
                    .collect();
                results.into_iter().collect::<Result<()>>()?;
            }
            Ok((ColumnValues::Array { values: Array { dtype: dt, bytes }, missing: Some(missing) }, rows))
        }
        (StorageForm::Point { dims, .. }, GeometryValues::Wkb(vals)) => {
            let points = points_from_wkb(vals.iter().map(|v| v.as_deref()), vals.len(), dims, path, base)?;
            prepare_at(info, &points, base)
        }
        (StorageForm::FixedWkb { size }, GeometryValues::Wkb(vals)) => {
            let mut bytes = Vec::with_capacity(vals.len() * size);
            let mut rows = Vec::with_capacity(vals.len());
            let mut missing = vec![false; vals.len()];
            for (i, v) in vals.iter().enumerate() {
                match v {
                    None => {
                        missing[i] = true;
                        bytes.extend(std::iter::repeat_n(0u8, size));
                        rows.push(RowInfo::Null);
                    }
                    Some(b) => {
                        if b.len() != size {
                            return Err(MarquetError::InvalidArgument(format!(
                                "{path} row {}: a {}-byte WKB value does not fit this {size}-byte fixed-length column; replace the column first (HEP002 §11.2)", base + i as u64,
                                b.len()
                            )));
                        }
                        let inf = checks::scan_and_refuse_non_finite(info, base + i as u64, b)?;
                        bytes.extend_from_slice(b);
                        rows.push(RowInfo::Geometry(inf));
                    }
                }
            }
            bounds::grow_rows(info, &mut rows, |i| vals[i].as_deref())?;
            let dt = Dtype::Opaque { size, tag: names::OPAQUE_TAG_WKB.into() };
            Ok((ColumnValues::Array { values: Array { dtype: dt, bytes }, missing: Some(missing) }, rows))
        }
        (StorageForm::FixedWkb { .. } | StorageForm::VarWkb, GeometryValues::Points { dims, x, y, z, m, valid }) => {
            let vals: Vec<Option<Vec<u8>>> = (0..x.len())
                .map(|i| {
                    if !valid.as_ref().map(|v| v[i]).unwrap_or(true) {
                        return None;
                    }
                    let c = wkb::Coord {
                        x: x[i],
                        y: y[i],
                        z: z.as_ref().map(|v| v[i]).unwrap_or(f64::NAN),
                        m: m.as_ref().map(|v| v[i]).unwrap_or(f64::NAN),
                    };
                    Some(wkb::encode(&wkb::Geometry::Point(wkb::Point { dims: *dims, coord: c }), ByteOrder::LittleEndian))
                })
                .collect();
            prepare_at(info, &GeometryValues::Wkb(vals), base)
        }
        (StorageForm::VarWkb, GeometryValues::Wkb(vals)) => {
            let mut rows = par_rows(vals.len(), |i| {
                Ok(match &vals[i] {
                    None => RowInfo::Null,
                    Some(b) => RowInfo::Geometry(checks::scan_and_refuse_non_finite(info, base + i as u64, b)?),
                })
            })?;
            bounds::grow_rows(info, &mut rows, |i| vals[i].as_deref())?;
            let list = ListArray::from_bytes_rows(vals.iter().map(|v| v.as_deref()));
            Ok((ColumnValues::List(list), rows))
        }
    }
}
/// The body of [`MarquetTable::covering_values`].
pub(crate) fn covering_values(this: &MarquetTable, cov: &str, rows: &[RowInfo]) -> Result<ColumnValues> {
    let c = this.table.column(cov)?;
    let dt = c.dtype().to_le();
    let Dtype::Compound { fields, .. } = &dt else {
        return Err(MarquetError::spec(&c.path, "HEP002 §10.5", "covering column is not a compound"));
    };
    let z = fields.iter().any(|f| f.name == "zmin");
    let f32 = matches!(fields[0].dtype, Dtype::Float { size: 4, .. });
    let mut bytes = Vec::with_capacity(rows.len() * dt.size());
    let mut missing = vec![false; rows.len()];
    for (i, r) in rows.iter().enumerate() {
        match r {
            RowInfo::Null => {
                missing[i] = true;
                bytes.extend(std::iter::repeat_n(0u8, dt.size()));
            }
            RowInfo::Geometry(g) => {
                let b = if g.is_empty { BBox::EMPTY } else { g.bbox };
                types::covering_bytes(&b, z, f32, &mut bytes);
            }
        }
    }
    Ok(ColumnValues::Array { values: Array { dtype: dt, bytes }, missing: Some(missing) })
}
/// The body of [`MarquetTable::widen_summaries`].
pub(crate) fn widen_summaries(this: &MarquetTable, info: &GeometryColumnInfo, rows: &[RowInfo]) -> Result<()> {
    let mut new = SummaryAcc::default();
    new.add(rows);
    widen_with(this, info, &new)
}

/// [`widen_summaries`] with the summaries of the new rows already accumulated.
pub(crate) fn widen_with(this: &MarquetTable, info: &GeometryColumnInfo, new: &SummaryAcc) -> Result<()> {
    let o = h5::object_open(this.table.id(), &info.name)?;
    let id = o.id();
    let n = this.table.nrows()?;
    let mut old_types: Option<BTreeSet<GeometryType>> =
        if n == 0 { Some(BTreeSet::new()) } else { info.types.as_ref().map(|v| v.iter().copied().collect()) };
    let mut old_box = info.bbox;
    if n > 0 && (old_types.is_none() || old_box.is_none()) {
        let mut ex = SummaryAcc::default();
        let mut s = 0;
        while s < n {
            let e = (s + 65_536).min(n);
            ex.add(&this.row_infos(&info.name, s, e)?);
            s = e;
        }
        old_types.get_or_insert_with(BTreeSet::new).extend(ex.types.iter().copied());
        if old_box.is_none() && ex.any {
            old_box = Some((ex.bbox, ex.all_z, ex.all_m));
        }
    }
    // Types: written when they grew, or when the attribute said "unknown" and the column's
    // types are now known.
    if let Some(old) = &old_types {
        let mut set = old.clone();
        set.extend(new.types.iter().copied());
        let attr_len = info.types.as_ref().map_or(0, |v| v.len());
        if set.len() != old.len() || attr_len != set.len() {
            let mut v: Vec<GeometryType> = set.into_iter().collect();
            v.sort_by_key(|t| t.iso_code());
            let bytes: Vec<u8> = v.iter().flat_map(|t| (t.iso_code() as u16).to_le_bytes()).collect();
            h5::attr_write(id, names::GEOMETRY_TYPES, &types::geometry_types_dtype(), &Space::Simple(vec![v.len() as u64]), &bytes)?;
        }
    }
    let (b, z, m) = match (old_box, new.any) {
        (None, false) => return Ok(()),
        (Some(old), false) => old,
        (None, true) => (new.bbox, new.all_z, new.all_m),
        // Z/M only when every non-empty geometry has them (R11).
        (Some((old, oz, om)), true) => (old.union_wrapping(&new.bbox), oz && new.all_z, om && new.all_m),
    };
    if info.bbox.map(|(o, oz, om)| o == b && oz == z && om == m).unwrap_or(false) {
        return Ok(());
    }
    h5::attr_write(id, names::BBOX, &types::bbox_dtype(z, m), &Space::Scalar, &types::bbox_bytes(&b, z, m))
}
/// The body of [`MarquetTable::tighten`].
pub(crate) fn tighten(this: &MarquetTable, name: &str) -> Result<()> {
    let info = this.geometry_column(name)?;
    let n = this.nrows()?;
    let mut acc = SummaryAcc::default();
    let step = 65_536;
    let mut s = 0;
    while s < n {
        let e = (s + step).min(n);
        acc.add(&this.row_infos(name, s, e)?);
        s = e;
    }
    this.write_exact_summaries(name, info.form, &acc)
}
/// The body of [`MarquetTable::write_exact_summaries`].
pub(crate) fn write_exact_summaries(this: &MarquetTable, name: &str, form: StorageForm, acc: &SummaryAcc) -> Result<()> {
    let o = h5::object_open(this.table.id(), name)?;
    let mut v: Vec<GeometryType> = acc.types.iter().copied().collect();
    if let StorageForm::Point { dims, .. } = form {
        v = vec![GeometryType::new(GeometryKind::Point, dims)];
    }
    v.sort_by_key(|t| t.iso_code());
    let bytes: Vec<u8> = v.iter().flat_map(|t| (t.iso_code() as u16).to_le_bytes()).collect();
    h5::attr_write(o.id(), names::GEOMETRY_TYPES, &types::geometry_types_dtype(), &Space::Simple(vec![v.len() as u64]), &bytes)?;
    if acc.any {
        let (z, m) = (acc.all_z, acc.all_m);
        h5::attr_write(o.id(), names::BBOX, &types::bbox_dtype(z, m), &Space::Scalar, &types::bbox_bytes(&acc.bbox, z, m))?;
    } else {
        h5::attr_delete(o.id(), names::BBOX)?;
    }
    Ok(())
}

/// The outermost type and first coordinate of a WKB value, as the walker reports them.
#[derive(Default)]
struct OnePoint {
    top: Option<GeometryType>,
    coord: Option<wkb::Coord>,
}

impl wkb::WkbVisitor for OnePoint {
    fn begin_geometry(&mut self, h: &wkb::Header) {
        if h.level == 0 {
            self.top = Some(h.geometry_type);
        }
    }
    fn coords(&mut self, _ring: Option<usize>, seq: wkb::CoordSeq<'_>) {
        if self.coord.is_none() {
            self.coord = seq.get(0);
        }
    }
}

/// Point WKB values decoded into coordinates for a point column of `dims` (`None` = null
/// row); `path` and `base` (the first row's number) name a value that is not such a point.
/// The writer calls it for WKB handed to a point column, and the conversion hub on the
/// borrowed values of a record batch (no copy of each value, issue #31).
pub(crate) fn points_from_wkb<'a>(vals: impl Iterator<Item = Option<&'a [u8]>>, n: usize, dims: Dimensions, path: &str, base: u64) -> Result<GeometryValues> {
    let (mut x, mut y) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let mut z = dims.has_z().then(|| Vec::with_capacity(n));
    let mut m = dims.has_m().then(|| Vec::with_capacity(n));
    let mut valid = Vec::with_capacity(n);
    for (i, v) in vals.enumerate() {
        match v {
            None => {
                x.push(f64::NAN);
                y.push(f64::NAN);
                if let Some(v) = z.as_mut() {
                    v.push(f64::NAN);
                }
                if let Some(v) = m.as_mut() {
                    v.push(f64::NAN);
                }
                valid.push(false);
            }
            Some(b) => {
                // The common 2-D point read in place (what the walker below reads of it).
                if let (Dimensions::Xy, Some((px, py))) = (dims, wkb::plain_point_xy(b)) {
                    x.push(px);
                    y.push(py);
                    valid.push(true);
                    continue;
                }
                // The one walker (what `wkb::decode` accepts and refuses), without building a
                // geometry: a tenth of a 1,000,000-point convert went to decode's allocations.
                let mut one = OnePoint::default();
                wkb::visit(b, &mut one).map_err(|e| e.into_marquet(path.to_string(), Some(base + i as u64)))?;
                let gt = one.top.unwrap_or(GeometryType::new(GeometryKind::GeometryCollection, Dimensions::Xy));
                if gt.kind != GeometryKind::Point {
                    return Err(MarquetError::InvalidArgument(format!(
                        "{path} row {}: a {} cannot be stored in a point column; replace the column first (HEP002 §11.2)",
                        base + i as u64,
                        gt
                    )));
                }
                if gt.dims != dims {
                    return Err(MarquetError::InvalidArgument(format!(
                        "{path} row {}: {} cannot be stored in a {dims:?} point column; replace the column first (HEP002 §11.2)",
                        base + i as u64,
                        gt
                    )));
                }
                let c = one.coord.unwrap_or(wkb::Coord { x: f64::NAN, y: f64::NAN, z: f64::NAN, m: f64::NAN });
                x.push(c.x);
                y.push(c.y);
                if let Some(v) = z.as_mut() {
                    v.push(c.z);
                }
                if let Some(v) = m.as_mut() {
                    v.push(c.m);
                }
                valid.push(true);
            }
        }
    }
    Ok(GeometryValues::Points { dims, x, y, z, m, valid: Some(valid) })
}

#[cfg(test)]
mod point_tests {
    use super::*;
    use crate::wkb::{Coord, Geometry, LineString, Point};

    fn enc(g: &Geometry, order: ByteOrder) -> Vec<u8> {
        wkb::encode(g, order)
    }

    /// `points_from_wkb` reads what `wkb::decode` reads — both byte orders, Z and M, empty
    /// points, nulls — and refuses, naming the row, a value of another kind or dimension
    /// and a value the walker refuses.
    #[test]
    fn point_wkb_becomes_the_coordinates_decode_gives() {
        let pts = [
            Point::new(Dimensions::Xyz, Coord { x: 1.5, y: -2.0, z: 7.0, m: f64::NAN }),
            Point::new(Dimensions::Xyz, Coord { x: -180.0, y: 90.0, z: 0.0, m: f64::NAN }),
            Point::empty(Dimensions::Xyz),
        ];
        let mut vals: Vec<Option<Vec<u8>>> = Vec::new();
        for (i, p) in pts.iter().enumerate() {
            vals.push(Some(enc(&Geometry::Point(p.clone()), if i % 2 == 0 { ByteOrder::LittleEndian } else { ByteOrder::BigEndian })));
            vals.push(None);
        }
        let got = points_from_wkb(vals.iter().map(|v| v.as_deref()), vals.len(), Dimensions::Xyz, "/t/g", 10).unwrap();
        let GeometryValues::Points { x, y, z, m, valid, .. } = got else { panic!("not points") };
        assert_eq!(valid, Some(vec![true, false, true, false, true, false]));
        assert!(m.is_none());
        let z = z.unwrap();
        for (k, v) in vals.iter().enumerate().filter_map(|(k, v)| v.as_ref().map(|v| (k, v))) {
            let Geometry::Point(p) = wkb::decode(v).unwrap() else { panic!("not a point") };
            let same = |a: f64, b: f64| a.to_bits() == b.to_bits();
            assert!(same(x[k], p.coord.x) && same(y[k], p.coord.y) && same(z[k], p.coord.z), "row {k}");
        }
        let line = enc(&Geometry::LineString(LineString { dims: Dimensions::Xy, coords: vec![Coord::xy(0.0, 0.0), Coord::xy(1.0, 1.0)] }), ByteOrder::LittleEndian);
        let xy = enc(&Geometry::Point(Point::new(Dimensions::Xy, Coord::xy(1.0, 2.0))), ByteOrder::LittleEndian);
        let refused = |v: &[u8]| points_from_wkb(std::iter::once(Some(v)), 1, Dimensions::Xyz, "/t/g", 41).unwrap_err().to_string();
        assert!(refused(&line).contains("/t/g row 41: a LineString cannot be stored in a point column"), "{}", refused(&line));
        assert!(refused(&xy).contains("/t/g row 41: Point cannot be stored in a Xyz point column"), "{}", refused(&xy));
        match points_from_wkb(std::iter::once(Some(&xy[..20])), 1, Dimensions::Xy, "/t/g", 41) {
            Err(MarquetError::InvalidWkb { row: Some(41), .. }) => {}
            other => panic!("{other:?}"),
        }
    }
}
