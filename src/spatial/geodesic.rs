//! Boxes that truly contain geodesic edges (HEP002 §6.4, §9.1, §10.1; ruling R8). Pure math,
//! no I/O.
//!
//! Under non-planar `EDGES`, the edge between two vertices is the shortest path on the
//! sphere (`SPHERICAL`) or on the ellipsoid (`VINCENTY`, `THOMAS`, `ANDOYER`, `KARNEY`),
//! and it bulges poleward of its end points: the edge from (0°, 60°) to (90°, 60°) reaches
//! 67.79° at 45° E. A box that holds only the vertices would not contain such an edge.
//!
//! * Spherical edges: the great circle through the two vertices has its northernmost point
//!   (its *vertex*) in the direction of the polar axis projected onto the circle's plane; it
//!   bounds the edge when it lies on the minor arc between the end points (closed form, no
//!   iteration).
//! * Ellipsoidal edges: the spherical range, widened by a safety margin of 2 % of the edge's
//!   angular length, at most [`ELLIPSOIDAL_MARGIN_MAX_DEG`] and at least
//!   [`ELLIPSOIDAL_MARGIN_MIN_DEG`]. The geodesic on an ellipsoid of flattening
//!   f ≈ 1/298 departs from the great circle through the same geodetic coordinates by an
//!   amount of order f times the edge length (0.34 %), so the margin is about six times the
//!   largest departure. Boxes may be larger than necessary (§6.4), never smaller.
//! * Edges whose longitudes cross ±180° (the shorter way round) make the box span every
//!   longitude, −180..180: boxes built here never wrap, which R-tree items require (§10.4).
//! * Antipodal end points have no unique shortest path: the edge gets the whole globe.
//! * A ring that winds once around the polar axis encloses a pole: the box reaches that pole
//!   and spans every longitude. With `ORIENTATION = COUNTERCLOCKWISE` the pole is the one on
//!   the left of the ring (an eastward ring encloses the north pole); without it, the pole
//!   nearer to the ring (by mean latitude), the smaller of the two caps.
//! * Every box grown here is grown outward by [`OUTWARD_DEG`] more, then clamped to
//!   −180..180 × −90..90 (ruling R8 asks for at least 1e-9°).

use crate::spec::BBox;

/// How far every non-planar box is grown outward (degrees), on top of the edge bulges.
pub const OUTWARD_DEG: f64 = 1e-9;
/// The least margin added to an ellipsoidal edge's latitude range (degrees).
pub const ELLIPSOIDAL_MARGIN_MIN_DEG: f64 = 1e-7;
/// The largest margin added to an ellipsoidal edge's latitude range (degrees).
pub const ELLIPSOIDAL_MARGIN_MAX_DEG: f64 = 0.5;
/// The ellipsoidal margin as a fraction of the edge's angular length.
pub const ELLIPSOIDAL_MARGIN_FRACTION: f64 = 0.02;

/// The shape of an edge (HEP002 §9.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeModel {
    /// Straight lines in the coordinate space: boxes are vertex boxes.
    Planar,
    /// Great-circle arcs on the sphere.
    Spherical,
    /// Geodesics on the ellipsoid (any of the ellipsoidal algorithms).
    Ellipsoidal,
}

fn to_vec(lon: f64, lat: f64) -> [f64; 3] {
    let (lo, la) = (lon.to_radians(), lat.to_radians());
    [la.cos() * lo.cos(), la.cos() * lo.sin(), la.sin()]
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn norm(a: [f64; 3]) -> f64 {
    dot(a, a).sqrt()
}

/// Longitude difference `b − a` normalized to (−180, 180].
pub fn lon_delta(a: f64, b: f64) -> f64 {
    let mut d = (b - a) % 360.0;
    if d > 180.0 {
        d -= 360.0;
    } else if d <= -180.0 {
        d += 360.0;
    }
    d
}

/// The latitude range `(min, max)` of the great-circle minor arc from `(lon1, lat1)` to
/// `(lon2, lat2)` (degrees). Antipodal end points (no unique arc) give `(-90, 90)`.
pub fn great_circle_lat_range(lon1: f64, lat1: f64, lon2: f64, lat2: f64) -> (f64, f64) {
    let mut lo = lat1.min(lat2);
    let mut hi = lat1.max(lat2);
    let a = to_vec(lon1, lat1);
    let b = to_vec(lon2, lat2);
    let n = cross(a, b);
    let nn = norm(n);
    if nn < 1e-12 {
        // Same point (no bulge) or antipodal (every great circle through both).
        if dot(a, b) < 0.0 {
            return (-90.0, 90.0);
        }
        return (lo, hi);
    }
    let n = [n[0] / nn, n[1] / nn, n[2] / nn];
    // Northernmost point of the circle: the polar axis projected onto the plane.
    let v = [-n[2] * n[0], -n[2] * n[1], 1.0 - n[2] * n[2]];
    let vn = norm(v);
    if vn < 1e-15 {
        // The circle is the equator: no bulge.
        return (lo, hi);
    }
    let v = [v[0] / vn, v[1] / vn, v[2] / vn];
    let vertex_lat = v[2].clamp(-1.0, 1.0).asin().to_degrees();
    // V lies on the minor arc a→b when a×V and V×b both point along n.
    let on_arc = |p: [f64; 3]| dot(cross(a, p), n) >= 0.0 && dot(cross(p, b), n) >= 0.0;
    if on_arc(v) {
        hi = hi.max(vertex_lat);
    }
    if on_arc([-v[0], -v[1], -v[2]]) {
        lo = lo.min(-vertex_lat);
    }
    (lo, hi)
}

/// The angular length of the great-circle arc between two points, in degrees.
pub fn arc_length_deg(lon1: f64, lat1: f64, lon2: f64, lat2: f64) -> f64 {
    let a = to_vec(lon1, lat1);
    let b = to_vec(lon2, lat2);
    norm(cross(a, b)).atan2(dot(a, b)).to_degrees()
}

/// Grow `b` to contain the edge from `p` to `q` (lon/lat degrees) under `model`. NaN
/// coordinates are skipped (empty points are not vertices, ruling R6).
pub fn add_edge(b: &mut BBox, p: (f64, f64), q: (f64, f64), model: EdgeModel) {
    let ok = |c: (f64, f64)| !c.0.is_nan() && !c.1.is_nan();
    match (ok(p), ok(q)) {
        (true, true) => {}
        (true, false) => return b.add_xy(p.0, p.1),
        (false, true) => return b.add_xy(q.0, q.1),
        (false, false) => return,
    }
    b.add_xy(p.0, p.1);
    b.add_xy(q.0, q.1);
    if model == EdgeModel::Planar {
        return;
    }
    let (mut lo, mut hi) = great_circle_lat_range(p.0, p.1, q.0, q.1);
    if model == EdgeModel::Ellipsoidal {
        let len = arc_length_deg(p.0, p.1, q.0, q.1);
        let margin =
            (len * ELLIPSOIDAL_MARGIN_FRACTION).clamp(ELLIPSOIDAL_MARGIN_MIN_DEG, ELLIPSOIDAL_MARGIN_MAX_DEG);
        lo -= margin;
        hi += margin;
        // A near-antipodal pair may take a quite different path on the ellipsoid.
        if len > 179.0 {
            lo = -90.0;
            hi = 90.0;
        }
    }
    b.add_xy(p.0, lo.max(-90.0));
    b.add_xy(p.0, hi.min(90.0));
    // Longitudes: the minor arc runs from p eastward by lon_delta(p, q) and its longitude
    // changes monotonically. If that passes ±180 the box must span every longitude (boxes
    // built here never wrap). An arc that reaches a pole is given every longitude too: in
    // exact arithmetic it holds only its two end longitudes, but a rounding error would put
    // it just beside the pole, sweeping through all of them.
    let d = lon_delta(p.0, q.0);
    let end = p.0 + d;
    let reaches_pole = lo <= -90.0 + 1e-9 || hi >= 90.0 - 1e-9;
    if reaches_pole || !(-180.0..=180.0).contains(&end) {
        let y = b.ymin;
        b.add_xy(-180.0, y);
        b.add_xy(180.0, y);
    }
}

/// The winding of a closed ring around the polar axis: the sum of its longitude steps
/// (each normalized to (−180, 180]) divided by 360, rounded: +1 for a ring going once
/// eastward around a pole, −1 westward, 0 for a ring that encloses no pole. The ring is
/// closed implicitly (last vertex back to the first, ruling R4). NaN vertices are skipped.
pub fn ring_winding(ring: &[(f64, f64)]) -> i64 {
    let pts: Vec<&(f64, f64)> = ring.iter().filter(|c| !c.0.is_nan() && !c.1.is_nan()).collect();
    if pts.len() < 2 {
        return 0;
    }
    let mut sum = 0.0;
    for i in 0..pts.len() {
        let a = pts[i];
        let b = pts[(i + 1) % pts.len()];
        sum += lon_delta(a.0, b.0);
    }
    (sum / 360.0).round() as i64
}

/// Grow `b` for a polygon ring under non-planar edges: every edge (closing edge included),
/// and a pole with all longitudes when the ring winds around the polar axis. `ccw` tells
/// the ring's orientation is known to be counterclockwise for exterior rings (ORIENTATION);
/// `exterior` whether the ring is its polygon's first.
pub fn add_ring(b: &mut BBox, ring: &[(f64, f64)], model: EdgeModel, ccw: bool, exterior: bool) {
    add_line(b, ring, model);
    if let (Some(first), Some(last)) = (ring.first(), ring.last()) {
        add_edge(b, *last, *first, model);
    }
    if model == EdgeModel::Planar || !exterior {
        // Holes lie inside their exterior ring, whose box holds them.
        return;
    }
    let w = ring_winding(ring);
    if w == 0 {
        return;
    }
    let north = if ccw {
        w > 0
    } else {
        let lats: Vec<f64> = ring.iter().map(|c| c.1).filter(|v| !v.is_nan()).collect();
        lats.iter().sum::<f64>() / lats.len().max(1) as f64 >= 0.0
    };
    let pole = if north { 90.0 } else { -90.0 };
    b.add_xy(-180.0, pole);
    b.add_xy(180.0, pole);
}

/// Grow `b` for a line's edges.
pub fn add_line(b: &mut BBox, line: &[(f64, f64)], model: EdgeModel) {
    if line.len() == 1 {
        b.add_xy(line[0].0, line[0].1);
    }
    for w in line.windows(2) {
        add_edge(b, w[0], w[1], model);
    }
}

/// The final outward growth and clamping of a non-planar box (ruling R8). An empty box is
/// returned unchanged.
pub fn finish(b: &BBox) -> BBox {
    if b.is_empty() {
        return *b;
    }
    let mut o = *b;
    o.xmin = (o.xmin - OUTWARD_DEG).max(-180.0);
    o.xmax = (o.xmax + OUTWARD_DEG).min(180.0);
    o.ymin = (o.ymin - OUTWARD_DEG).max(-90.0);
    o.ymax = (o.ymax + OUTWARD_DEG).min(90.0);
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Dense sampling of the great-circle arc by spherical interpolation.
    fn sampled_lat_range(p: (f64, f64), q: (f64, f64)) -> (f64, f64) {
        let a = to_vec(p.0, p.1);
        let b = to_vec(q.0, q.1);
        let omega = dot(a, b).clamp(-1.0, 1.0).acos();
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for i in 0..=20_000 {
            let t = i as f64 / 20_000.0;
            let (s0, s1) = if omega.abs() < 1e-12 {
                (1.0 - t, t)
            } else {
                (((1.0 - t) * omega).sin() / omega.sin(), (t * omega).sin() / omega.sin())
            };
            let v = [s0 * a[0] + s1 * b[0], s0 * a[1] + s1 * b[1], s0 * a[2] + s1 * b[2]];
            let lat = (v[2] / norm(v)).asin().to_degrees();
            lo = lo.min(lat);
            hi = hi.max(lat);
        }
        (lo, hi)
    }

    #[test]
    fn edge_over_the_pole() {
        let (lo, hi) = great_circle_lat_range(-90.0, 45.0, 90.0, 45.0);
        assert_eq!(lo, 45.0);
        assert!((hi - 90.0).abs() < 1e-9, "{hi}");
        let mut b = BBox::EMPTY;
        add_edge(&mut b, (-90.0, 45.0), (90.0, 45.0), EdgeModel::Spherical);
        assert!((b.ymax - 90.0).abs() < 1e-9 && b.ymin == 45.0);
        // Reaching the pole: every longitude (conservative about rounding near the pole).
        assert_eq!((b.xmin, b.xmax), (-180.0, 180.0));
    }

    #[test]
    fn edge_along_a_parallel_bulges_poleward() {
        // tan φ at 45° E = 2·tan 60°·sin 45° = √6, φ = 67.7923°.
        let expected = 6f64.sqrt().atan().to_degrees();
        let (lo, hi) = great_circle_lat_range(0.0, 60.0, 90.0, 60.0);
        assert_eq!(lo, 60.0);
        assert!((hi - expected).abs() < 1e-9, "{hi} vs {expected}");
        assert!((hi - 67.7923).abs() < 1e-4);
        let (slo, shi) = sampled_lat_range((0.0, 60.0), (90.0, 60.0));
        assert!(shi <= hi + 1e-9 && slo >= lo - 1e-9);
        // Southern hemisphere mirrors.
        let (lo, hi) = great_circle_lat_range(0.0, -60.0, 90.0, -60.0);
        assert!((lo + expected).abs() < 1e-9 && hi == -60.0);
        // Reversed direction gives the same range.
        assert_eq!(great_circle_lat_range(90.0, 60.0, 0.0, 60.0).1, great_circle_lat_range(0.0, 60.0, 90.0, 60.0).1);
    }

    #[test]
    fn no_bulge_when_the_vertex_is_off_the_arc() {
        // A meridian segment and an equator segment: no bulge.
        assert_eq!(great_circle_lat_range(10.0, 10.0, 10.0, 20.0), (10.0, 20.0));
        assert_eq!(great_circle_lat_range(0.0, 0.0, 50.0, 0.0), (0.0, 0.0));
        // A rising edge whose vertex lies beyond its end.
        let (lo, hi) = great_circle_lat_range(0.0, 0.0, 30.0, 40.0);
        assert_eq!((lo, hi), (0.0, 40.0));
        // Antipodal: the whole globe.
        assert_eq!(great_circle_lat_range(0.0, 0.0, 180.0, 0.0), (-90.0, 90.0));
    }

    #[test]
    fn lat_range_matches_dense_sampling() {
        let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        };
        for _ in 0..300 {
            let p = (next() * 360.0 - 180.0, next() * 170.0 - 85.0);
            let q = (p.0 + next() * 120.0 - 60.0, (p.1 + next() * 60.0 - 30.0).clamp(-89.0, 89.0));
            let (lo, hi) = great_circle_lat_range(p.0, p.1, q.0, q.1);
            let (slo, shi) = sampled_lat_range(p, q);
            assert!(lo <= slo + 1e-9 && hi >= shi - 1e-9, "{p:?} {q:?}: {lo},{hi} vs {slo},{shi}");
            assert!((lo - slo).abs() < 1e-3 && (hi - shi).abs() < 1e-3, "{p:?} {q:?}: too loose");
        }
    }

    #[test]
    fn antimeridian_edge_spans_all_longitudes() {
        let mut b = BBox::EMPTY;
        add_edge(&mut b, (170.0, 0.0), (-170.0, 1.0), EdgeModel::Spherical);
        assert_eq!((b.xmin, b.xmax), (-180.0, 180.0));
        // Planar edges: the vertex box.
        let mut b = BBox::EMPTY;
        add_edge(&mut b, (170.0, 0.0), (-170.0, 1.0), EdgeModel::Planar);
        assert_eq!((b.xmin, b.xmax), (-170.0, 170.0));
        // An edge not crossing keeps its longitudes.
        let mut b = BBox::EMPTY;
        add_edge(&mut b, (10.0, 0.0), (20.0, 0.0), EdgeModel::Spherical);
        assert_eq!((b.xmin, b.xmax), (10.0, 20.0));
    }

    #[test]
    fn ring_around_the_north_pole() {
        let ring: Vec<(f64, f64)> = (0..8).map(|i| (-180.0 + 45.0 * i as f64, 80.0)).collect();
        assert_eq!(ring_winding(&ring), 1);
        let rev: Vec<(f64, f64)> = ring.iter().rev().copied().collect();
        assert_eq!(ring_winding(&rev), -1);
        let mut b = BBox::EMPTY;
        add_ring(&mut b, &ring, EdgeModel::Spherical, true, true);
        assert_eq!((b.xmin, b.xmax, b.ymax), (-180.0, 180.0, 90.0));
        assert!(b.ymin >= 79.0 && b.ymin <= 80.0);
        // Counterclockwise orientation and a westward ring: the interior is the south cap.
        let mut b = BBox::EMPTY;
        add_ring(&mut b, &rev, EdgeModel::Spherical, true, true);
        assert_eq!((b.xmin, b.xmax, b.ymin), (-180.0, 180.0, -90.0));
        assert!(b.ymax > 80.0 && b.ymax < 81.0, "{}", b.ymax);
        // Without orientation: the smaller cap (north here).
        let mut b = BBox::EMPTY;
        add_ring(&mut b, &rev, EdgeModel::Spherical, false, true);
        assert!(b.ymin > 79.0 && b.ymax == 90.0);
        // A small ring encloses no pole.
        let small = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0), (0.0, 0.0)];
        assert_eq!(ring_winding(&small), 0);
        let mut b = BBox::EMPTY;
        add_ring(&mut b, &small, EdgeModel::Spherical, true, true);
        assert!(b.xmin == 0.0 && b.xmax == 1.0 && b.ymin == 0.0 && b.ymax > 1.0 && b.ymax < 1.001);
    }

    /// The ellipsoidal margin holds every point of the WGS84 geodesic (GeographicLib, via
    /// `geo::Geodesic`) for random edges up to ~120° long.
    #[test]
    fn ellipsoidal_boxes_contain_wgs84_geodesics() {
        use geo::{Geodesic, InterpolatePoint, Point};
        let mut s: u64 = 7;
        let mut next = || {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        };
        for k in 0..200 {
            let p = (next() * 300.0 - 150.0, next() * 160.0 - 80.0);
            let span = if k % 2 == 0 { 2.0 } else { 60.0 };
            let q = ((p.0 + next() * 2.0 * span - span).clamp(-179.0, 179.0), (p.1 + next() * span - span / 2.0).clamp(-85.0, 85.0));
            let mut b = BBox::EMPTY;
            add_edge(&mut b, p, q, EdgeModel::Ellipsoidal);
            let b = finish(&b);
            let mut sb = BBox::EMPTY;
            add_edge(&mut sb, p, q, EdgeModel::Spherical);
            let sb = finish(&sb);
            let pts: Vec<Point> = Geodesic.points_along_line(Point::new(p.0, p.1), Point::new(q.0, q.1), 20_000.0, true).collect();
            assert!(pts.len() >= 2);
            for pt in pts {
                let (x, y) = (pt.x(), pt.y());
                let full_lon = b.xmin <= -180.0 && b.xmax >= 180.0;
                assert!(y >= b.ymin && y <= b.ymax, "{p:?}->{q:?}: lat {y} outside {b:?}");
                assert!(full_lon || (x >= b.xmin - 1e-9 && x <= b.xmax + 1e-9), "{p:?}->{q:?}: lon {x} outside {b:?}");
            }
            // The margin stays modest next to the spherical box.
            assert!(b.ymax - sb.ymax <= ELLIPSOIDAL_MARGIN_MAX_DEG + 1e-9);
        }
    }

    #[test]
    fn ellipsoidal_margin_and_outward_growth() {
        let mut s = BBox::EMPTY;
        add_edge(&mut s, (0.0, 60.0), (90.0, 60.0), EdgeModel::Spherical);
        let mut e = BBox::EMPTY;
        add_edge(&mut e, (0.0, 60.0), (90.0, 60.0), EdgeModel::Ellipsoidal);
        assert!(e.ymax > s.ymax + 0.4 && e.ymin < s.ymin);
        let f = finish(&s);
        assert!(f.xmin < s.xmin && f.ymax > s.ymax && f.xmax > s.xmax);
        assert!(finish(&BBox::EMPTY).is_empty());
        let full = finish(&BBox::xy(-180.0, -90.0, 180.0, 90.0));
        assert_eq!(full, BBox::xy(-180.0, -90.0, 180.0, 90.0));
    }
}
