//! Do boxes contain geodesic edges? The validator's side of HEP002 §6.4, §10.1 and ruling
//! R8 under non-planar `EDGES`: a box must contain every point of every edge, not only the
//! vertices, and a polygon whose exterior ring winds around a pole must reach that pole
//! with every longitude.
//!
//! The required extent is computed exactly, without the producer's safety margins (so a box
//! from any producer that truly contains the edges passes):
//!
//! * `SPHERICAL`: the great-circle minor arc ([`geodesic::great_circle_lat_range`]).
//! * `VINCENTY`, `THOMAS`, `ANDOYER`, `KARNEY`: the geodesic on the WGS 84 ellipsoid
//!   (GeographicLib, Karney 2013); its poleward vertex from Clairaut's relation. The four
//!   algorithms approximate the same curve far more closely than the 1e-9° tolerance
//!   matters for; a near-antipodal edge (arc > 179°), whose geodesic is not unique, is not
//!   checked beyond its vertices.
//! * Longitudes: an edge sweeps the shorter way from its first vertex's longitude to its
//!   second's; an edge through a pole (or with end longitudes 180° apart) is checked at its
//!   vertices only, since it holds no longitudes between them.
//!
//! Vertices themselves are checked by the caller; tolerance is 1e-9° (ruling R8).

use geographiclib_rs::{Geodesic, InverseGeodesic};

use crate::spatial::geodesic::{self, great_circle_lat_range, lon_delta, ring_winding, EdgeModel};
use crate::spec::BBox;
use crate::wkb::{self, CoordSeq, WkbVisitor};

/// An edge: its two vertices (lon, lat).
type Edge = ((f64, f64), (f64, f64));

/// What the edges of one geometry require of a box that contains it.
#[derive(Debug, Clone, Default)]
pub(crate) struct EdgeNeeds {
    /// The latitude range of all edges, with an edge that realizes each bound.
    lat: Option<(f64, f64)>,
    lat_edges: [Edge; 2],
    /// Longitude intervals `(from, to)` swept by edges (an edge crossing ±180° gives two),
    /// with their edge.
    arcs: Vec<(f64, f64, Edge)>,
    /// An exterior ring winds around a pole: `Some(Some(true))` north, `Some(Some(false))`
    /// south, `Some(None)` either (orientation unknown).
    pole: Option<Option<bool>>,
}

/// The edge model and orientation of a column.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EdgeBoxes {
    pub model: EdgeModel,
    pub ccw: bool,
}

/// The latitude range of the geodesic between `p` and `q` (lon, lat) on the WGS 84
/// ellipsoid, or `None` for a near-antipodal pair.
fn ellipsoid_lat_range(p: (f64, f64), q: (f64, f64)) -> Option<(f64, f64)> {
    let g = Geodesic::wgs84();
    let (azi1, azi2, a12): (f64, f64, f64) = g.inverse(p.1, p.0, q.1, q.0);
    if a12.is_nan() || a12 > 179.0 {
        return None;
    }
    let (mut lo, mut hi) = (p.1.min(q.1), p.1.max(q.1));
    // Clairaut: cos(beta) sin(azi) is constant along a geodesic (beta the reduced latitude);
    // at the vertex azi = ±90°.
    let f1 = 1.0 - g.f;
    let beta1 = (f1 * p.1.to_radians().tan()).atan();
    let c = (azi1.to_radians().sin() * beta1.cos()).abs().min(1.0);
    let beta0 = c.acos();
    let lat0 = (beta0.tan() / f1).atan().to_degrees();
    let (c1, c2) = (azi1.to_radians().cos(), azi2.to_radians().cos());
    if c1 > 0.0 && c2 < 0.0 {
        hi = hi.max(lat0);
    }
    if c1 < 0.0 && c2 > 0.0 {
        lo = lo.min(-lat0);
    }
    Some((lo, hi))
}

impl EdgeBoxes {
    /// The latitude range of one edge under the model (`None`: not checked).
    fn lat_range(&self, p: (f64, f64), q: (f64, f64)) -> Option<(f64, f64)> {
        match self.model {
            EdgeModel::Planar => Some((p.1.min(q.1), p.1.max(q.1))),
            EdgeModel::Spherical => {
                let r = great_circle_lat_range(p.0, p.1, q.0, q.1);
                (r != (-90.0, 90.0) || geodesic::arc_length_deg(p.0, p.1, q.0, q.1) < 179.0).then_some(r)
            }
            EdgeModel::Ellipsoidal => ellipsoid_lat_range(p, q),
        }
    }

    /// What the edges of the WKB value require; `None` for planar edges or an unreadable
    /// value.
    pub(crate) fn needs(&self, bytes: &[u8]) -> Option<EdgeNeeds> {
        if self.model == EdgeModel::Planar {
            return None;
        }
        struct V<'a> {
            e: &'a EdgeBoxes,
            n: EdgeNeeds,
            buf: Vec<(f64, f64)>,
        }
        impl WkbVisitor for V<'_> {
            fn coords(&mut self, ring: Option<usize>, seq: CoordSeq<'_>) {
                self.buf.clear();
                self.buf.extend(seq.xy().filter(|(x, y)| !x.is_nan() && !y.is_nan()));
                let pts = std::mem::take(&mut self.buf);
                for w in pts.windows(2) {
                    self.edge(w[0], w[1]);
                }
                if ring.is_some() && pts.len() > 1 {
                    self.edge(pts[pts.len() - 1], pts[0]);
                }
                if ring == Some(0) {
                    let w = ring_winding(&pts);
                    if w != 0 {
                        self.n.pole = Some(if self.e.ccw { Some(w > 0) } else { None });
                    }
                }
                self.buf = pts;
            }
        }
        impl V<'_> {
            fn edge(&mut self, p: (f64, f64), q: (f64, f64)) {
                let Some((lo, hi)) = self.e.lat_range(p, q) else { return };
                let n = &mut self.n;
                match &mut n.lat {
                    None => {
                        n.lat = Some((lo, hi));
                        n.lat_edges = [(p, q), (p, q)];
                    }
                    Some((l, h)) => {
                        if lo < *l {
                            *l = lo;
                            n.lat_edges[0] = (p, q);
                        }
                        if hi > *h {
                            *h = hi;
                            n.lat_edges[1] = (p, q);
                        }
                    }
                }
                // Longitudes: none between the vertices for an edge through a pole or with
                // end longitudes 180° apart.
                let d = lon_delta(p.0, q.0);
                if lo <= -90.0 + 1e-9 || hi >= 90.0 - 1e-9 || d.abs() >= 180.0 || d == 0.0 {
                    return;
                }
                let (a, b) = (p.0.min(p.0 + d), p.0.max(p.0 + d));
                let parts = if b > 180.0 {
                    [(a, 180.0), (-180.0, b - 360.0)]
                } else if a < -180.0 {
                    [(a + 360.0, 180.0), (-180.0, b)]
                } else {
                    [(a, b), (0.0, 0.0)]
                };
                // A part that is only the antimeridian is a vertex, checked by the caller.
                for (u, v) in parts {
                    if u < v {
                        n.arcs.push((u, v, (p, q)));
                    }
                }
            }
        }
        let mut v = V { e: self, n: EdgeNeeds::default(), buf: Vec::new() };
        wkb::visit(bytes, &mut v).ok()?;
        Some(v.n)
    }
}

/// Does box `b` (possibly wrapping, `xmin > xmax`) hold longitudes `[u, v]`?
fn holds_lon(b: &BBox, u: f64, v: f64, tol: f64) -> bool {
    if b.xmin > b.xmax {
        (u >= b.xmin - tol && v <= 180.0 + tol) || (u >= -180.0 - tol && v <= b.xmax + tol)
    } else {
        b.xmin <= u + tol && v <= b.xmax + tol
    }
}

impl EdgeNeeds {
    /// `None` when `b` holds every edge and an enclosed pole; else what lies outside.
    pub(crate) fn outside(&self, b: &BBox, tol: f64) -> Option<String> {
        let show = |e: &Edge| format!("({:?}, {:?})-({:?}, {:?})", e.0 .0, e.0 .1, e.1 .0, e.1 .1);
        if let Some((lo, hi)) = self.lat {
            if b.ymin > lo + tol {
                return Some(format!("ymin {:?} does not contain the geodesic edge {} reaching latitude {lo:?}", b.ymin, show(&self.lat_edges[0])));
            }
            if b.ymax < hi - tol {
                return Some(format!("ymax {:?} does not contain the geodesic edge {} reaching latitude {hi:?}", b.ymax, show(&self.lat_edges[1])));
            }
        }
        for (u, v, e) in &self.arcs {
            if !holds_lon(b, *u, *v, tol) {
                return Some(format!(
                    "[xmin {:?}, xmax {:?}] does not contain longitudes [{u:?}, {v:?}] of the edge {}",
                    b.xmin,
                    b.xmax,
                    show(e)
                ));
            }
        }
        if let Some(which) = self.pole {
            let all_lons = b.xmin <= b.xmax && b.xmin <= -180.0 + tol && b.xmax >= 180.0 - tol;
            let north = b.ymax >= 90.0 - tol;
            let south = b.ymin <= -90.0 + tol;
            let pole_ok = match which {
                Some(true) => north,
                Some(false) => south,
                None => north || south,
            };
            if !all_lons || !pole_ok {
                let pole = match which {
                    Some(true) => "the north pole",
                    Some(false) => "the south pole",
                    None => "a pole",
                };
                return Some(format!("an exterior ring winds around {pole}, but the box does not reach it with every longitude (-180..180)"));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::marquet::bounds::geometry_box;
    use crate::spec::Dimensions;
    use crate::wkb::{encode, ByteOrder, Coord, Geometry, LineString, Polygon};

    fn line(pts: &[(f64, f64)]) -> Vec<u8> {
        encode(&Geometry::LineString(LineString { dims: Dimensions::Xy, coords: pts.iter().map(|&(x, y)| Coord::xy(x, y)).collect() }), ByteOrder::LittleEndian)
    }

    #[test]
    fn vertex_box_misses_the_bulge_and_the_producer_box_holds_it() {
        let w = line(&[(0.0, 60.0), (90.0, 60.0)]);
        let vertex = wkb::scan(&w).unwrap().bbox;
        for model in [EdgeModel::Spherical, EdgeModel::Ellipsoidal] {
            let e = EdgeBoxes { model, ccw: false };
            let n = e.needs(&w).unwrap();
            assert!(n.outside(&vertex, 1e-9).unwrap().contains("ymax"), "{model:?}");
            let produced = geometry_box(&w, model, false).unwrap();
            assert_eq!(n.outside(&produced, 1e-9), None, "{model:?}");
        }
        // The ellipsoidal geodesic peaks a little away from the great circle (~67.9°).
        let (lo, hi) = ellipsoid_lat_range((0.0, 60.0), (90.0, 60.0)).unwrap();
        assert_eq!(lo, 60.0);
        assert!((hi - 67.79).abs() < 0.2, "{hi}");
    }

    #[test]
    fn antimeridian_edges_need_both_sides_and_poles_all_longitudes() {
        let w = line(&[(179.0, 10.0), (-179.0, 10.0)]);
        let e = EdgeBoxes { model: EdgeModel::Spherical, ccw: false };
        let n = e.needs(&w).unwrap();
        let mut wrap = BBox::xy(179.0, 9.0, -179.0, 11.0);
        assert_eq!(n.outside(&wrap, 1e-9), None);
        assert_eq!(n.outside(&BBox::xy(-180.0, 9.0, 180.0, 11.0), 1e-9), None);
        assert!(n.outside(&BBox::xy(-179.0, 9.0, 179.0, 11.0), 1e-9).is_some());
        wrap.xmin = 179.5;
        assert!(n.outside(&wrap, 1e-9).is_some());
        // A ring around the north pole, eastward (counterclockwise seen from above it).
        let ring: Vec<Coord> = (0..=8).map(|i| Coord::xy(-180.0 + 45.0 * (i % 8) as f64, 70.0)).collect();
        let p = encode(&Geometry::Polygon(Polygon { dims: Dimensions::Xy, rings: vec![ring] }), ByteOrder::LittleEndian);
        let e = EdgeBoxes { model: EdgeModel::Spherical, ccw: true };
        let n = e.needs(&p).unwrap();
        assert!(n.outside(&BBox::xy(-180.0, 69.0, 180.0, 75.0), 1e-9).unwrap().contains("north pole"));
        assert_eq!(n.outside(&geometry_box(&p, EdgeModel::Spherical, true).unwrap(), 1e-9), None);
    }
}
