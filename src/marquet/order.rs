//! Spatial ordering of rows on write (HEP002 §10.6).
//!
//! Block bounding boxes (§10.3) skip rows only when the rows of a block lie close together,
//! so bulk writes order the rows of a batch along a Hilbert curve through the centres of the
//! primary geometry column's boxes ([`crate::spatial::hilbert_order`], the order R-tree leaves
//! use, ruling R13): null and empty geometries last, ties by input position. Every column of
//! the batch is permuted alike. The order is not recorded in the file (§10.6).

use std::ops::Range;

use crate::error::{MarquetError, Result};
use crate::h5col::{Array, ColumnValues, ListArray, ListValues};
use crate::spatial::geodesic::EdgeModel;
use crate::spatial::hilbert_order;
use crate::spec::BBox;

use super::bounds;
use super::{GeoBatch, GeometryValues};

/// The boxes of geometry values (empty box for null and empty rows).
pub fn value_boxes(v: &GeometryValues, model: EdgeModel) -> Result<Vec<BBox>> {
    match v {
        GeometryValues::Wkb(vals) => wkb_boxes(&vals.iter().map(|w| w.as_deref()).collect::<Vec<_>>(), model),
        GeometryValues::Points { x, y, valid, .. } => Ok((0..x.len())
            .map(|i| {
                let mut b = BBox::EMPTY;
                if valid.as_ref().is_none_or(|v| v.get(i).copied().unwrap_or(false)) {
                    b.add_xy(x[i], y.get(i).copied().unwrap_or(f64::NAN));
                }
                if b.xmin > b.xmax || b.ymin > b.ymax {
                    BBox::EMPTY
                } else {
                    b
                }
            })
            .collect()),
    }
}

/// The box of each WKB value (`None`, a null row: empty), computed on every core; the
/// first value that fails, in row order, is the error. [`value_boxes`] of WKB values, and
/// the import's survey over the borrowed values of a record batch (issue #31).
pub fn wkb_boxes(vals: &[Option<&[u8]>], model: EdgeModel) -> Result<Vec<BBox>> {
    use rayon::prelude::*;
    let boxes: Vec<std::result::Result<BBox, crate::wkb::WkbError>> = vals
        .par_iter()
        .map(|w| match w {
            None => Ok(BBox::EMPTY),
            Some(b) => bounds::geometry_box(b, model, false),
        })
        .collect();
    boxes.into_iter().enumerate().map(|(i, b)| b.map_err(|e| e.into_marquet("<batch>", Some(i as u64)))).collect()
}

/// Hilbert order of geometry values (HEP002 §10.6): positions, null/empty last.
pub fn spatial_order(v: &GeometryValues, model: EdgeModel) -> Result<Vec<usize>> {
    Ok(hilbert_order(&value_boxes(v, model)?))
}

fn take<T: Clone>(v: &[T], order: &[usize]) -> Vec<T> {
    order.iter().map(|&i| v[i].clone()).collect()
}

/// Permute geometry values: row `k` of the result is row `order[k]` of `v`.
pub fn permute_geometry_values(v: &GeometryValues, order: &[usize]) -> GeometryValues {
    match v {
        GeometryValues::Wkb(vals) => GeometryValues::Wkb(take(vals, order)),
        GeometryValues::Points { dims, x, y, z, m, valid } => GeometryValues::Points {
            dims: *dims,
            x: take(x, order),
            y: take(y, order),
            z: z.as_ref().map(|v| take(v, order)),
            m: m.as_ref().map(|v| take(v, order)),
            valid: valid.as_ref().map(|v| take(v, order)),
        },
    }
}

fn take_array(a: &Array, runs: &[Range<usize>]) -> Array {
    let es = a.dtype.size();
    let mut bytes = Vec::with_capacity(runs.iter().map(|r| r.len() * es).sum());
    for r in runs {
        bytes.extend_from_slice(&a.bytes[r.start * es..r.end * es]);
    }
    Array { dtype: a.dtype.clone(), bytes }
}

/// The entries of `l` in `runs` (entry ranges), concatenated, at every nesting level.
fn take_list(l: &ListArray, runs: &[Range<usize>]) -> ListArray {
    let mut offsets = vec![0u64];
    let mut mask = Vec::new();
    let mut child = Vec::new();
    for r in runs {
        for i in r.clone() {
            let cr = l.range(i);
            offsets.push(offsets[offsets.len() - 1] + cr.len() as u64);
            mask.push(!l.is_null(i));
            child.push(cr);
        }
    }
    let values = match &l.values {
        ListValues::Leaf(a) => ListValues::Leaf(take_array(a, &child)),
        ListValues::List(inner) => ListValues::List(Box::new(take_list(inner, &child))),
        ListValues::Strings { offsets: so, chars, mask: sm } => {
            let mut o2 = vec![0u64];
            let mut c2 = Vec::new();
            let mut m2 = sm.as_ref().map(|_| Vec::new());
            for r in &child {
                for j in r.clone() {
                    c2.extend_from_slice(&chars[so[j] as usize..so[j + 1] as usize]);
                    o2.push(c2.len() as u64);
                    if let (Some(m2), Some(sm)) = (m2.as_mut(), sm.as_ref()) {
                        m2.push(sm[j]);
                    }
                }
            }
            ListValues::Strings { offsets: o2, chars: c2, mask: m2 }
        }
    };
    ListArray { offsets, mask: l.mask.as_ref().map(|_| mask), values }
}

/// Permute H5Col column values: row `k` of the result is row `order[k]` of `v`.
pub fn permute_column_values(v: &ColumnValues, order: &[usize]) -> ColumnValues {
    let runs: Vec<Range<usize>> = order.iter().map(|&i| i..i + 1).collect();
    match v {
        ColumnValues::Array { values, missing } => ColumnValues::Array {
            values: take_array(values, &runs),
            missing: missing.as_ref().map(|m| take(m, order)),
        },
        ColumnValues::List(l) => ColumnValues::List(take_list(l, &runs)),
    }
}

impl GeoBatch {
    /// Number of rows (every column must agree).
    pub fn nrows(&self) -> Result<usize> {
        let mut n: Option<(usize, &str)> = None;
        let lens = self
            .geometries
            .iter()
            .map(|(k, v)| (k.as_str(), v.len()))
            .chain(self.columns.columns.iter().map(|(k, v)| (k.as_str(), column_len(v))));
        for (name, len) in lens {
            match n {
                None => n = Some((len, name)),
                Some((m, other)) if m != len => {
                    return Err(MarquetError::InvalidArgument(format!(
                        "column '{name}' has {len} rows in the batch, '{other}' has {m}"
                    )))
                }
                _ => {}
            }
        }
        Ok(n.map(|x| x.0).unwrap_or(0))
    }

    /// Every column permuted: row `k` of the result is row `order[k]` of `self`.
    pub fn permuted(&self, order: &[usize]) -> Result<GeoBatch> {
        let n = self.nrows()?;
        if order.len() != n || order.iter().any(|&i| i >= n) {
            return Err(MarquetError::InvalidArgument(format!("an order of {} positions for {n} rows", order.len())));
        }
        let mut out = GeoBatch { geometries: Default::default(), columns: self.columns.clone() };
        for (k, v) in &self.geometries {
            out.geometries.insert(k.clone(), permute_geometry_values(v, order));
        }
        for (k, v) in &self.columns.columns {
            out.columns.columns.insert(k.clone(), permute_column_values(v, order));
        }
        Ok(out)
    }

    /// The batch with its rows in Hilbert order of geometry column `col`'s boxes (HEP002
    /// §10.6), with the boxes computed for `model` edges.
    pub fn sorted_spatially(&self, col: &str, model: EdgeModel) -> Result<GeoBatch> {
        let v = self
            .geometries
            .get(col)
            .ok_or_else(|| MarquetError::InvalidArgument(format!("batch has no values for geometry column '{col}'")))?;
        self.permuted(&spatial_order(v, model)?)
    }
}

fn column_len(v: &ColumnValues) -> usize {
    match v {
        ColumnValues::Array { values, .. } => values.len(),
        ColumnValues::List(l) => l.len(),
    }
}
