//! The ordinate rule a writer applies (issues #19 and #32, docs/FAULTS.md F6). NaN ordinates
//! are legal and kept: HEP002 §6.4 defines containment "ignoring coordinate values that are
//! NaN", and the Parquet geospatial statistics ignore NaN likewise, so every box (`BBOX`,
//! block boxes, R-tree items, covering values) is computed from the other values (local
//! ruling L2: a coordinate whose X and Y are both NaN is no coordinate at all). Two forms are
//! refused because no box can be written for them:
//! - an infinite ordinate (X, Y, Z or M) of a coordinate that is not all-NaN in X and Y: it
//!   would make boxes end at ±inf, which GeoParquet export writes as `null` and its import
//!   then refuses;
//! - a geometry in which some X is a number but every Y is NaN, or the reverse: it has a
//!   position on one axis only, so its box would be empty on the other axis (`+inf..-inf`,
//!   `xmin > xmax`, which §6.4 allows only as an antimeridian wrap).
//!
//! NaN X or Y in a non-empty point of a *point column* is refused separately (§7.4).

use super::reader::{scan_with, visit, CoordSeq, WkbInfo, WkbVisitor};
use super::WkbError;

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
    seen: u64,
    /// First coordinate with a non-NaN X (resp. Y), for the one-axis rule.
    first_x: Option<u64>,
    first_y: Option<u64>,
    bad: Option<NonFinite>,
}

impl WkbVisitor for FiniteVisitor {
    fn coords(&mut self, _ring: Option<usize>, seq: CoordSeq<'_>) {
        if self.bad.is_some() {
            return;
        }
        for (i, c) in seq.iter().enumerate() {
            let v = self.seen + i as u64;
            if c.x.is_nan() && c.y.is_nan() {
                continue;
            }
            if c.x.is_infinite() || c.y.is_infinite() || c.z.is_infinite() || c.m.is_infinite() {
                self.bad = Some(NonFinite { vertex: v, message: format!("vertex ({:?}, {:?}) has an infinite ordinate", c.x, c.y) });
                return;
            }
            if !c.x.is_nan() {
                self.first_x.get_or_insert(v);
            }
            if !c.y.is_nan() {
                self.first_y.get_or_insert(v);
            }
        }
        self.seen += seq.len() as u64;
    }
}

/// Check the ordinates of a WKB value (see the module doc): NaN anywhere is fine, an infinity
/// or a position on one axis only is not. A value that is not valid WKB passes: the
/// structural check reports it.
pub fn check_finite(bytes: &[u8]) -> Result<(), NonFinite> {
    let mut v = FiniteVisitor::default();
    if visit(bytes, &mut v).is_err() {
        return Ok(());
    }
    v.verdict()
}

/// [`super::scan`] and [`check_finite`] of a value in one walk: the structural error
/// first, then the ordinate verdict (what calling the two in turn gives).
pub(crate) fn scan_finite(bytes: &[u8]) -> Result<(WkbInfo, Result<(), NonFinite>), WkbError> {
    // A 2-D point with finite ordinates (the common value) has nothing to refuse.
    if let Some((x, y)) = super::reader::plain_point_xy(bytes) {
        return Ok((super::reader::plain_point_info(x, y), Ok(())));
    }
    let mut v = FiniteVisitor::default();
    let info = scan_with(bytes, &mut v)?;
    Ok((info, v.verdict()))
}

impl FiniteVisitor {
    /// The verdict once the walk is over: the first infinite ordinate, else a position on
    /// one axis only.
    fn verdict(self) -> Result<(), NonFinite> {
        if let Some(bad) = self.bad {
            return Err(bad);
        }
        match (self.first_x, self.first_y) {
            (Some(i), None) => Err(NonFinite { vertex: i, message: "every Y of the geometry is NaN but this vertex has an X: no box holds it".into() }),
            (None, Some(i)) => Err(NonFinite { vertex: i, message: "every X of the geometry is NaN but this vertex has a Y: no box holds it".into() }),
            _ => Ok(()),
        }
    }
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
    fn nan_passes_infinity_and_one_axis_positions_are_named() {
        assert_eq!(check_finite(&line(&[(0.0, 0.0), (1.0, 2.0)])), Ok(()));
        let e = check_finite(&line(&[(0.0, 0.0), (f64::INFINITY, 2.0)])).unwrap_err();
        assert_eq!(e.vertex, 1);
        assert!(e.message.contains("infinite"), "{}", e.message);
        // NaN ordinates are kept (issue #32): alone, in pairs, or in one axis of a vertex.
        assert_eq!(check_finite(&line(&[(0.0, 0.0), (1.0, 1.0), (f64::NAN, 2.0)])), Ok(()));
        assert_eq!(check_finite(&line(&[(f64::NAN, f64::NAN), (1.0, 1.0)])), Ok(()));
        assert_eq!(check_finite(&line(&[(f64::NAN, f64::NAN), (f64::NAN, f64::NAN)])), Ok(()));
        let e = check_finite(&line(&[(f64::NAN, f64::NAN), (f64::NAN, 1.0), (f64::NAN, 2.0)])).unwrap_err();
        assert_eq!(e.vertex, 1);
        assert!(e.message.contains("every X"), "{}", e.message);
        assert!(check_finite(&line(&[(3.0, f64::NAN)])).unwrap_err().message.contains("every Y"));
        let empty = encode(&Geometry::Point(Point { dims: Dimensions::Xy, coord: Coord::xy(f64::NAN, f64::NAN) }), ByteOrder::LittleEndian);
        assert_eq!(check_finite(&empty), Ok(()));
        let inf_pt = encode(&Geometry::Point(Point { dims: Dimensions::Xy, coord: Coord::xy(f64::NEG_INFINITY, 0.0) }), ByteOrder::LittleEndian);
        assert!(check_finite(&inf_pt).is_err());
        let inf_z = encode(&Geometry::Point(Point { dims: Dimensions::Xyz, coord: Coord { x: 1.0, y: 2.0, z: f64::INFINITY, m: f64::NAN } }), ByteOrder::LittleEndian);
        assert!(check_finite(&inf_z).is_err());
    }
}
