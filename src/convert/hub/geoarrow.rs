//! GeoArrow "separated" native encodings of GeoParquet 1.1 (point, linestring, polygon,
//! multipoint, multilinestring, multipolygon) to Marquet values (HEP002 §14.3): points map
//! field for field to a point column, every other encoding is written as ISO WKB.

use arrow_array::{Array, ArrayRef, Float32Array, Float64Array, LargeListArray, ListArray, StructArray};
use arrow_schema::DataType;

use crate::error::{MarquetError, Result};
use crate::marquet::GeometryValues;
use crate::spec::{Dimensions, GeometryKind, GeometryType};

fn err(col: &str, m: impl Into<String>) -> MarquetError {
    MarquetError::Unsupported(format!("column {col:?}: geoarrow native encoding: {}", m.into()))
}

/// Coordinates of a separated coordinate struct `{x, y[, z][, m]}`.
struct Coords {
    cols: Vec<Vec<f64>>,
    dims: Dimensions,
}

fn float_values(a: &ArrayRef) -> Option<Vec<f64>> {
    if let Some(f) = a.as_any().downcast_ref::<Float64Array>() {
        return Some(f.values().to_vec());
    }
    a.as_any().downcast_ref::<Float32Array>().map(|f| f.values().iter().map(|v| *v as f64).collect())
}

fn coords(col: &str, a: &dyn Array) -> Result<Coords> {
    let s = a
        .as_any()
        .downcast_ref::<StructArray>()
        .ok_or_else(|| err(col, format!("coordinates are {:?}, not a struct of x, y[, z][, m]", a.data_type())))?;
    let names: Vec<String> = s.column_names().iter().map(|n| n.to_ascii_lowercase()).collect();
    let dims = match names.iter().map(|s| s.as_str()).collect::<Vec<_>>().as_slice() {
        ["x", "y"] => Dimensions::Xy,
        ["x", "y", "z"] => Dimensions::Xyz,
        ["x", "y", "m"] => Dimensions::Xym,
        ["x", "y", "z", "m"] => Dimensions::Xyzm,
        other => return Err(err(col, format!("coordinate fields {other:?} are not x, y[, z][, m]"))),
    };
    let cols = s
        .columns()
        .iter()
        .map(|c| float_values(c).ok_or_else(|| err(col, format!("coordinate field of type {:?}", c.data_type()))))
        .collect::<Result<Vec<_>>>()?;
    Ok(Coords { cols, dims })
}

/// `(offsets, values, validity)` of a List or LargeList array.
fn list_parts(col: &str, a: &dyn Array) -> Result<(Vec<usize>, ArrayRef)> {
    if let Some(l) = a.as_any().downcast_ref::<ListArray>() {
        return Ok((l.value_offsets().iter().map(|&o| o as usize).collect(), l.values().clone()));
    }
    if let Some(l) = a.as_any().downcast_ref::<LargeListArray>() {
        return Ok((l.value_offsets().iter().map(|&o| o as usize).collect(), l.values().clone()));
    }
    Err(err(col, format!("expected a list, found {:?}", a.data_type())))
}

fn header(out: &mut Vec<u8>, kind: GeometryKind, dims: Dimensions) {
    out.push(1);
    out.extend_from_slice(&GeometryType::new(kind, dims).iso_code().to_le_bytes());
}

fn count(out: &mut Vec<u8>, n: usize) -> Result<()> {
    let n = u32::try_from(n).map_err(|_| MarquetError::InvalidArgument("more than 2^32-1 parts in one geometry".into()))?;
    out.extend_from_slice(&n.to_le_bytes());
    Ok(())
}

fn coord(out: &mut Vec<u8>, c: &Coords, i: usize) {
    for v in &c.cols {
        out.extend_from_slice(&v[i].to_le_bytes());
    }
}

fn write_seq(out: &mut Vec<u8>, c: &Coords, a: usize, b: usize) -> Result<()> {
    count(out, b - a)?;
    for i in a..b {
        coord(out, c, i);
    }
    Ok(())
}

fn check(col: &str, offs: &[usize], len: usize) -> Result<()> {
    if offs.windows(2).any(|w| w[0] > w[1]) || offs.last().is_some_and(|&l| l > len) {
        return Err(err(col, "list offsets out of range"));
    }
    Ok(())
}

/// Convert a native-encoded column to Marquet values: points → [`GeometryValues::Points`],
/// others → [`GeometryValues::Wkb`] (little-endian ISO WKB).
pub fn to_values(col: &str, kind: GeometryKind, a: &ArrayRef) -> Result<GeometryValues> {
    let n = a.len();
    let valid = |i: usize| a.is_valid(i);
    if kind == GeometryKind::Point {
        let c = coords(col, a.as_ref())?;
        let get = |k: usize| -> Vec<f64> { c.cols[k].clone() };
        let (z, m) = match c.dims {
            Dimensions::Xy => (None, None),
            Dimensions::Xyz => (Some(get(2)), None),
            Dimensions::Xym => (None, Some(get(2))),
            Dimensions::Xyzm => (Some(get(2)), Some(get(3))),
        };
        return Ok(GeometryValues::Points {
            dims: c.dims,
            x: get(0),
            y: get(1),
            z,
            m,
            valid: Some((0..n).map(valid).collect()),
        });
    }
    let mut out: Vec<Option<Vec<u8>>> = Vec::with_capacity(n);
    match kind {
        GeometryKind::LineString | GeometryKind::MultiPoint => {
            let (offs, vals) = list_parts(col, a.as_ref())?;
            let c = coords(col, vals.as_ref())?;
            check(col, &offs, vals.len())?;
            for i in 0..n {
                if !valid(i) {
                    out.push(None);
                    continue;
                }
                let mut w = Vec::new();
                header(&mut w, kind, c.dims);
                if kind == GeometryKind::LineString {
                    write_seq(&mut w, &c, offs[i], offs[i + 1])?;
                } else {
                    count(&mut w, offs[i + 1] - offs[i])?;
                    for j in offs[i]..offs[i + 1] {
                        header(&mut w, GeometryKind::Point, c.dims);
                        coord(&mut w, &c, j);
                    }
                }
                out.push(Some(w));
            }
        }
        GeometryKind::Polygon | GeometryKind::MultiLineString => {
            let (o1, v1) = list_parts(col, a.as_ref())?;
            let (o2, v2) = list_parts(col, v1.as_ref())?;
            let c = coords(col, v2.as_ref())?;
            check(col, &o1, v1.len())?;
            check(col, &o2, v2.len())?;
            for i in 0..n {
                if !valid(i) {
                    out.push(None);
                    continue;
                }
                let mut w = Vec::new();
                header(&mut w, kind, c.dims);
                count(&mut w, o1[i + 1] - o1[i])?;
                for r in o1[i]..o1[i + 1] {
                    if kind == GeometryKind::MultiLineString {
                        header(&mut w, GeometryKind::LineString, c.dims);
                    }
                    write_seq(&mut w, &c, o2[r], o2[r + 1])?;
                }
                out.push(Some(w));
            }
        }
        GeometryKind::MultiPolygon => {
            let (o1, v1) = list_parts(col, a.as_ref())?;
            let (o2, v2) = list_parts(col, v1.as_ref())?;
            let (o3, v3) = list_parts(col, v2.as_ref())?;
            let c = coords(col, v3.as_ref())?;
            check(col, &o1, v1.len())?;
            check(col, &o2, v2.len())?;
            check(col, &o3, v3.len())?;
            for i in 0..n {
                if !valid(i) {
                    out.push(None);
                    continue;
                }
                let mut w = Vec::new();
                header(&mut w, kind, c.dims);
                count(&mut w, o1[i + 1] - o1[i])?;
                for p in o1[i]..o1[i + 1] {
                    header(&mut w, GeometryKind::Polygon, c.dims);
                    count(&mut w, o2[p + 1] - o2[p])?;
                    for r in o2[p]..o2[p + 1] {
                        write_seq(&mut w, &c, o3[r], o3[r + 1])?;
                    }
                }
                out.push(Some(w));
            }
        }
        _ => return Err(err(col, "geometrycollection has no native encoding")),
    }
    Ok(GeometryValues::Wkb(out))
}

/// Is `dt` plausibly a native encoding of `kind` (nesting depth check only)?
pub fn matches_kind(dt: &DataType, kind: GeometryKind) -> bool {
    fn depth(dt: &DataType) -> usize {
        match dt {
            DataType::List(f) | DataType::LargeList(f) => 1 + depth(f.data_type()),
            _ => 0,
        }
    }
    let want = match kind {
        GeometryKind::Point => 0,
        GeometryKind::LineString | GeometryKind::MultiPoint => 1,
        GeometryKind::Polygon | GeometryKind::MultiLineString => 2,
        GeometryKind::MultiPolygon => 3,
        GeometryKind::GeometryCollection => return false,
    };
    depth(dt) == want
}
