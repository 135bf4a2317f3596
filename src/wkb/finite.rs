//! The finite-vertex rule a writer applies (issue #19, docs/FAULTS.md F6): every vertex of a
//! non-empty geometry has finite X and Y (and a Z or M that is finite or NaN). The one
//! NaN form accepted is the WKB spelling of an empty point — a Point (alone or a member of
//! a MultiPoint or collection) whose X and Y are both NaN. An infinite ordinate would
//! make `BBOX`, block boxes and R-tree items end at ±inf (which GeoParquet export writes as
//! `null`, which its import then refuses); a NaN vertex in a line or ring has no position.

use super::reader::{visit, CoordSeq, Header, WkbVisitor};
use crate::spec::GeometryKind;

/// The first offending vertex: `(vertex index in the value, what is wrong)`.
#[derive(Debug, Clone, PartialEq)]
pub struct NonFinite {
    /// Index of the vertex in the value, counted over all its coordinates.
    pub vertex: u64,
    /// What is wrong with it.
    pub message: String,
}

#[derive(Default)]
struct FiniteVisitor {
    kind: Option<GeometryKind>,
    seen: u64,
    bad: Option<NonFinite>,
}

impl WkbVisitor for FiniteVisitor {
    fn begin_geometry(&mut self, header: &Header) {
        self.kind = Some(header.geometry_type.kind);
    }
    fn coords(&mut self, _ring: Option<usize>, seq: CoordSeq<'_>) {
        if self.bad.is_some() {
            return;
        }
        let point = self.kind == Some(GeometryKind::Point);
        for (i, c) in seq.iter().enumerate() {
            let v = self.seen + i as u64;
            let msg = if c.x.is_nan() && c.y.is_nan() {
                (!point).then(|| "a vertex with NaN x and y (only an empty point may be all-NaN)".to_string())
            } else if c.x.is_nan() || c.y.is_nan() {
                Some(format!("vertex ({:?}, {:?}) has a NaN ordinate", c.x, c.y))
            } else if c.x.is_infinite() || c.y.is_infinite() || c.z.is_infinite() || c.m.is_infinite() {
                Some(format!("vertex ({:?}, {:?}) has an infinite ordinate", c.x, c.y))
            } else {
                None
            };
            if let Some(message) = msg {
                self.bad = Some(NonFinite { vertex: v, message });
                return;
            }
        }
        self.seen += seq.len() as u64;
    }
}

/// Check that every vertex of a WKB value is finite (see the module doc). A value that is
/// not valid WKB passes: the structural check reports it.
pub fn check_finite(bytes: &[u8]) -> Result<(), NonFinite> {
    let mut v = FiniteVisitor::default();
    if visit(bytes, &mut v).is_err() {
        return Ok(());
    }
    v.bad.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Dimensions;
    use crate::wkb::{encode, ByteOrder, Coord, Geometry, LineString, Point};

    fn line(pts: &[(f64, f64)]) -> Vec<u8> {
        let coords = pts.iter().map(|&(x, y)| Coord::xy(x, y)).collect();
        encode(&Geometry::LineString(LineString { dims: Dimensions::Xy, coords }), ByteOrder::LittleEndian)
    }

    #[test]
    fn finite_vertices_pass_and_others_are_named() {
        assert_eq!(check_finite(&line(&[(0.0, 0.0), (1.0, 2.0)])), Ok(()));
        let e = check_finite(&line(&[(0.0, 0.0), (f64::INFINITY, 2.0)])).unwrap_err();
        assert_eq!(e.vertex, 1);
        assert!(e.message.contains("infinite"), "{}", e.message);
        let e = check_finite(&line(&[(0.0, 0.0), (1.0, 1.0), (f64::NAN, 2.0)])).unwrap_err();
        assert_eq!(e.vertex, 2);
        assert!(check_finite(&line(&[(f64::NAN, f64::NAN), (1.0, 1.0)])).is_err());
        // POINT EMPTY is the accepted all-NaN form.
        let empty = encode(&Geometry::Point(Point { dims: Dimensions::Xy, coord: Coord::xy(f64::NAN, f64::NAN) }), ByteOrder::LittleEndian);
        assert_eq!(check_finite(&empty), Ok(()));
        let inf_pt = encode(&Geometry::Point(Point { dims: Dimensions::Xy, coord: Coord::xy(f64::NEG_INFINITY, 0.0) }), ByteOrder::LittleEndian);
        assert!(check_finite(&inf_pt).is_err());
    }
}
