//! Bbox coverings written by other producers, on import (issue #32): part of the hub, for
//! every source whose schema has box structs (GeoParquet, plain Parquet, GeoMesa).
//!
//! A covering becomes the Marquet covering column of its geometry column (HEP002 §10.5):
//! its name and float width are kept, its values are recomputed from the geometries (so
//! they contain them, float32 boxes rounded outward, `types::round_f32`), and the source
//! struct is not imported a second time as data. Two ways a struct is a covering:
//!
//! * **declared**: the `geo` key names it (`covering.bbox`, GeoParquet 1.1 / 2.0): any
//!   column name, float32 or float64, any field order (Overture writes
//!   `xmin, xmax, ymin, ymax`). A declared column that is not a box struct (four float
//!   fields `xmin ymin xmax ymax`, or six with `zmin zmax`, all float32 or all float64) is
//!   reported (`schema_validation_error`) and kept as data.
//! * **undeclared** (Overture's 1.0.0 `geo` key, DuckDB 1.4): a root struct named `bbox`
//!   (for the primary geometry column) or `<geometry>_bbox`, of the box shape above, for a
//!   geometry column without a declared covering, is its covering when every row's box
//!   contains the row's geometry: checked by one pass over the two columns before the table
//!   is defined (a float32 box may miss by one float32 step: writers round to nearest). A
//!   null box is allowed only for a null or empty geometry. Otherwise the struct stays data
//!   (`bbox.xmin` … columns) and the report says why.
//!
//! docs/geoparquet-mapping.md states these rules.

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type};
use arrow_array::{Array, ArrayRef, RecordBatch, StructArray};
use arrow_schema::{DataType, Schema};

use crate::convert::{code, Finding};
use crate::error::{MarquetError, Result};
use crate::marquet::{bounds, order, Edges, GeometryValues};
use crate::spec::BBox;

/// A box struct: which float width, with or without Z fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoxShape {
    /// All fields are float32.
    pub f32: bool,
    /// The struct has `zmin` and `zmax` too.
    pub z: bool,
}

/// The box shape of `dt`: a struct whose fields are exactly `xmin ymin xmax ymax` (or those
/// and `zmin zmax`), in any order, all float32 or all float64.
pub fn box_shape(dt: &DataType) -> Option<BoxShape> {
    let DataType::Struct(fs) = dt else { return None };
    let mut names: Vec<&str> = fs.iter().map(|f| f.name().as_str()).collect();
    names.sort_unstable();
    let z = match names.as_slice() {
        ["xmax", "xmin", "ymax", "ymin"] => false,
        ["xmax", "xmin", "ymax", "ymin", "zmax", "zmin"] => true,
        _ => return None,
    };
    let f32 = if fs.iter().all(|f| f.data_type() == &DataType::Float32) {
        true
    } else if fs.iter().all(|f| f.data_type() == &DataType::Float64) {
        false
    } else {
        return None;
    };
    Some(BoxShape { f32, z })
}

/// Reads the given root columns of the source in batches (in root order), handing each
/// batch to the visitor.
pub type ScanRoots<'a> = dyn FnMut(&[usize], &mut dyn FnMut(&RecordBatch) -> Result<()>) -> Result<()> + 'a;

/// A geometry column as [`find`] needs it.
pub struct GeomRef<'a> {
    /// The Parquet column name.
    pub name: &'a str,
    /// Its root index in the schema.
    pub root: usize,
    /// The covering column the source declares for it (GeoParquet: the `geo` key).
    pub declared: Option<&'a str>,
    /// Its edges (the box of a geometry is taken under them, ruling R8).
    pub edges: &'a Edges,
}

/// A covering column of the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceCovering {
    /// Root index of the struct in the schema.
    pub root: usize,
    /// Its Parquet name.
    pub name: String,
    /// Its shape.
    pub shape: BoxShape,
    /// Declared by the `geo` key (otherwise recognised by [`find`]'s rule).
    pub declared: bool,
}

/// The covering column of each geometry column of `geoms` (primary first), declared or
/// recognised (module doc). `scan` reads the given root columns of the file in batches
/// (in root order); `values` gives geometry column `g`'s values of one batch's array.
/// Findings go to `findings`, and why a candidate stays data to `notes`.
pub fn find(
    path: &str,
    schema: &Schema,
    geoms: &[GeomRef<'_>],
    scan: &mut ScanRoots<'_>,
    values: &dyn Fn(usize, &ArrayRef) -> Result<GeometryValues>,
    findings: &mut Vec<Finding>,
    notes: &mut Vec<String>,
) -> Result<Vec<Option<SourceCovering>>> {
    let geom_roots: Vec<usize> = geoms.iter().map(|g| g.root).collect();
    let mut out: Vec<Option<SourceCovering>> = vec![None; geoms.len()];
    for (k, g) in geoms.iter().enumerate() {
        let Some(cov) = g.declared else { continue };
        let Some((root, field)) = schema.column_with_name(cov) else {
            return Err(crate::convert::fail(path, code::SCHEMA_VALIDATION, format!("covering column {cov:?} is not a column of the file")));
        };
        match box_shape(field.data_type()) {
            Some(shape) if !geom_roots.contains(&root) => out[k] = Some(SourceCovering { root, name: cov.to_string(), shape, declared: true }),
            _ => findings.push(Finding::new(
                code::SCHEMA_VALIDATION,
                Some(g.name),
                format!(
                    "covering column {cov:?} is {}, not a struct of float32 or float64 xmin, ymin, xmax, ymax (GeoParquet 1.1): kept as data",
                    field.data_type()
                ),
            )),
        }
    }
    // Undeclared candidates: by name and shape, each struct for one geometry column.
    let mut cand: Vec<(usize, SourceCovering)> = Vec::new();
    for (k, g) in geoms.iter().enumerate() {
        if out[k].is_some() || g.declared.is_some() {
            continue;
        }
        let mut names = vec![format!("{}_bbox", g.name)];
        if k == 0 {
            names.insert(0, "bbox".to_string());
        }
        for n in names {
            let Some((root, field)) = schema.column_with_name(&n) else { continue };
            let taken = geom_roots.contains(&root)
                || out.iter().flatten().any(|c| c.root == root)
                || cand.iter().any(|(_, c)| c.root == root);
            if let (Some(shape), false) = (box_shape(field.data_type()), taken) {
                cand.push((k, SourceCovering { root, name: n, shape, declared: false }));
                break;
            }
        }
    }
    if cand.is_empty() {
        return Ok(out);
    }
    // One pass: does every box contain its geometry?
    let mut roots: Vec<usize> = cand.iter().flat_map(|(k, c)| [geoms[*k].root, c.root]).collect();
    roots.sort_unstable();
    roots.dedup();
    let pos = |r: usize| roots.iter().position(|x| *x == r).unwrap_or(0);
    let mut why: Vec<Option<String>> = vec![None; cand.len()];
    let mut row0: u64 = 0;
    scan(&roots.clone(), &mut |b: &RecordBatch| {
        for (ci, (k, c)) in cand.iter().enumerate() {
            if why[ci].is_some() {
                continue;
            }
            let v = values(*k, b.column(pos(geoms[*k].root)))?;
            let boxes = order::value_boxes(&v, bounds::edge_model(geoms[*k].edges))
                .map_err(|e| MarquetError::InvalidArgument(format!("{path}: column {:?}: {e}", geoms[*k].name)))?;
            why[ci] = first_outside(b.column(pos(c.root)), &boxes, c.shape.f32)
                .map(|(r, m)| format!("row {}: {m}", row0 + r as u64));
        }
        row0 += b.num_rows() as u64;
        Ok(())
    })?;
    for ((k, c), w) in cand.into_iter().zip(why) {
        match w {
            None => out[k] = Some(c),
            Some(w) => notes.push(format!(
                "column {:?}: a box struct like a bbox covering of {:?}, but not declared one and not containing the geometries ({w}): kept as data",
                c.name, geoms[k].name
            )),
        }
    }
    Ok(out)
}

/// The first row whose box in `a` does not contain `boxes[row]`, with the reason.
/// A null geometry's box is empty ([`order::value_boxes`]): any box, or none, is allowed.
fn first_outside(a: &ArrayRef, boxes: &[BBox], f32: bool) -> Option<(usize, String)> {
    let s: &StructArray = a.as_struct_opt()?;
    let col = |n: &str| -> Option<Vec<Option<f64>>> {
        let c = s.column_by_name(n)?;
        Some(if f32 {
            c.as_primitive::<Float32Type>().iter().map(|v| v.map(f64::from)).collect()
        } else {
            c.as_primitive::<Float64Type>().iter().collect()
        })
    };
    let (Some(x0), Some(y0), Some(x1), Some(y1)) = (col("xmin"), col("ymin"), col("xmax"), col("ymax")) else {
        return Some((0, "not a box struct".into()));
    };
    // A float32 box rounded to nearest instead of outward misses by at most one step.
    let tol = |v: f64| if f32 { (v.abs() as f32).max(f32::MIN_POSITIVE) as f64 * f32::EPSILON as f64 } else { 0.0 };
    for (r, g) in boxes.iter().enumerate() {
        let empty = g.xmin == f64::INFINITY || g.ymin == f64::INFINITY;
        if empty {
            continue; // any box (or none) for a null or empty geometry
        }
        let vals = (s.is_valid(r)).then(|| (x0[r], y0[r], x1[r], y1[r]));
        let Some((Some(bx0), Some(by0), Some(bx1), Some(by1))) = vals else {
            return Some((r, "null box for a geometry".into()));
        };
        let ok_y = by0 <= g.ymin + tol(g.ymin) && by1 >= g.ymax - tol(g.ymax);
        let ok_x = if g.xmin > g.xmax {
            // A geometry box across the antimeridian (geodesic edges): the source box wraps
            // too and contains it, or spans every longitude.
            (bx0 > bx1 && bx0 <= g.xmin + tol(g.xmin) && bx1 >= g.xmax - tol(g.xmax)) || (bx0 <= -180.0 && bx1 >= 180.0)
        } else {
            bx0 <= g.xmin + tol(g.xmin) && bx1 >= g.xmax - tol(g.xmax)
        };
        if !(ok_x && ok_y) {
            return Some((r, format!("box [{bx0}, {by0}, {bx1}, {by1}] does not contain [{}, {}, {}, {}]", g.xmin, g.ymin, g.xmax, g.ymax)));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_schema::{Field, Fields};

    fn st(names: &[&str], t: DataType) -> DataType {
        DataType::Struct(names.iter().map(|n| Field::new(*n, t.clone(), true)).collect::<Fields>())
    }

    #[test]
    fn shapes() {
        let f32b = st(&["xmin", "xmax", "ymin", "ymax"], DataType::Float32);
        assert_eq!(box_shape(&f32b), Some(BoxShape { f32: true, z: false }));
        let z = st(&["xmin", "ymin", "zmin", "xmax", "ymax", "zmax"], DataType::Float64);
        assert_eq!(box_shape(&z), Some(BoxShape { f32: false, z: true }));
        assert_eq!(box_shape(&st(&["xmin", "ymin", "xmax"], DataType::Float64)), None);
        assert_eq!(box_shape(&st(&["xmin", "ymin", "xmax", "ymax", "extra"], DataType::Float64)), None);
        assert_eq!(box_shape(&st(&["xmin", "ymin", "xmax", "ymax"], DataType::Int32)), None);
        assert_eq!(box_shape(&DataType::Float64), None);
    }

    #[test]
    fn containment_with_f32_rounding() {
        use arrow_array::Float32Array;
        use std::sync::Arc;
        let fields: Fields = ["xmin", "ymin", "xmax", "ymax"].iter().map(|n| Field::new(*n, DataType::Float32, true)).collect();
        // Geometry box [0.1, 0.2, 0.3, 0.4]; 0.1f32 > 0.1 (round to nearest): one step off, accepted.
        let cols: Vec<ArrayRef> = [0.1f32, 0.2, 0.3, 0.4].iter().map(|v| Arc::new(Float32Array::from(vec![*v])) as ArrayRef).collect();
        let a: ArrayRef = Arc::new(StructArray::new(fields.clone(), cols, None));
        let mut g = BBox::EMPTY;
        g.add_xy(0.1, 0.2);
        g.add_xy(0.3, 0.4);
        assert_eq!(first_outside(&a, &[g], true), None);
        // A box off by far more than a step is not a covering.
        let mut g2 = BBox::EMPTY;
        g2.add_xy(0.05, 0.2);
        g2.add_xy(0.3, 0.4);
        assert!(first_outside(&a, &[g2], true).is_some());
        // Null or empty geometry: anything goes.
        assert_eq!(first_outside(&a, &[BBox::EMPTY], true), None);
    }
}
