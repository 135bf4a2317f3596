//! Layer 4: the exact predicate on decoded geometries (the `geo` crate), and the
//! geometry column read run by run for it.

use geo::{Contains, Intersects, Within};
use crate::error::Result;
use crate::spatial::geom_box::intersects;
use crate::marquet::GeometryColumnInfo;
use crate::spec::BBox;

use super::*;

/// The spatial predicate, read as "the row's geometry *predicate* the window".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Predicate {
    /// The geometry and the window share at least one point.
    #[default]
    Intersects,
    /// The geometry lies within the window (OGC `Within`).
    Within,
    /// The geometry contains the window (OGC `Contains`).
    Contains,
    /// The geometry's box intersects the window's box.
    BBoxOnly,
}

impl Predicate {
    /// The exact planar predicate of two `geo` geometries (not `BBoxOnly`, which tests
    /// boxes).
    pub fn evaluate(&self, geometry: &geo::Geometry<f64>, window: &geo::Geometry<f64>) -> bool {
        match self {
            Predicate::Intersects => geometry.intersects(window),
            Predicate::Within => geometry.is_within(window),
            Predicate::Contains => geometry.contains(window),
            Predicate::BBoxOnly => {
                use geo::BoundingRect;
                match (geometry.bounding_rect(), window.bounding_rect()) {
                    (Some(a), Some(b)) => a.intersects(&b),
                    _ => false,
                }
            }
        }
    }
}

/// The exact predicate, kept by box should `geo` panic.
pub(super) fn exact(p: &Predicate, g: &geo::Geometry<f64>, w: &geo::Geometry<f64>, gbox: &BBox, wbox: &BBox, st: &mut QueryStats) -> bool {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| p.evaluate(g, w))) {
        Ok(b) => b,
        Err(_) => {
            st.predicate_fallbacks += 1;
            intersects(gbox, wbox)
        }
    }
}

/// Layer 4's decision for one row, the same for the one-shot query and the warm reader:
/// the query's window, predicate and the column's edge rules, fixed once per query.
pub(super) struct ExactTest<'a> {
    predicate: Predicate,
    wbox: BBox,
    window_geo: geo::Geometry<f64>,
    /// A box window not wrapping the antimeridian: it decides rows whose box lies inside
    /// it without the exact test (such a geometry intersects the window, and is within it
    /// when its box is inside the window's interior).
    box_window: Option<BBox>,
    planar: bool,
    model: crate::spatial::geodesic::EdgeModel,
    info: &'a GeometryColumnInfo,
}

impl<'a> ExactTest<'a> {
    /// The test of `q` on column `info` (`predicate`: `q.predicate`, or `BBoxOnly` under
    /// non-planar edges).
    pub(super) fn new(q: &Query, predicate: Predicate, info: &'a GeometryColumnInfo) -> ExactTest<'a> {
        ExactTest {
            predicate,
            wbox: q.window.bbox(),
            window_geo: q.window.to_geo(),
            box_window: match &q.window {
                Window::BBox(b) if b.xmin <= b.xmax => Some(*b),
                _ => None,
            },
            planar: info.edges.is_planar(),
            model: crate::marquet::bounds::edge_model(&info.edges),
            info,
        }
    }

    fn inside(&self, g: &BBox, strict: bool) -> bool {
        self.box_window.as_ref().is_some_and(|w| {
            if strict {
                g.xmin > w.xmin && g.xmax < w.xmax && g.ymin > w.ymin && g.ymax < w.ymax
            } else {
                g.xmin >= w.xmin && g.xmax <= w.xmax && g.ymin >= w.ymin && g.ymax <= w.ymax
            }
        })
    }

    /// The box a point must lie in to match, when that decides it: `(window, strict)` for
    /// an intersects or box test of a box window not wrapping the antimeridian (closed
    /// intervals) and for `Within` a box window with area (its interior, `strict`). What
    /// [`ExactTest::point`] decides in those cases, for a caller testing many points.
    pub(super) fn point_box(&self) -> Option<(BBox, bool)> {
        match self.predicate {
            Predicate::BBoxOnly | Predicate::Intersects => self.box_window.map(|w| (w, false)),
            Predicate::Within => self.box_window.filter(|w| w.xmin < w.xmax && w.ymin < w.ymax).map(|w| (w, true)),
            Predicate::Contains => None,
        }
    }

    /// Does the point `(px, py)` match? (A NaN coordinate, an empty point, never does.)
    pub(super) fn point(&self, px: f64, py: f64, st: &mut QueryStats) -> bool {
        st.exact_tested += 1;
        if px.is_nan() || py.is_nan() {
            return false;
        }
        let pbox = BBox::xy(px, py, px, py);
        match self.predicate {
            Predicate::BBoxOnly => intersects(&pbox, &self.wbox),
            Predicate::Intersects if self.box_window.is_some() => self.inside(&pbox, false),
            // Strictly inside a box *with area* is its interior. A zero-area window is a
            // line or a point (issue #38): a point on the line's interior or equal to the
            // point window is within it, so those go to the exact test below.
            Predicate::Within if self.box_window.is_some_and(|w| w.xmin < w.xmax && w.ymin < w.ymax) => self.inside(&pbox, true),
            _ => {
                let g = geo::Geometry::Point(geo::Point::new(px, py));
                exact(&self.predicate, &g, &self.window_geo, &pbox, &self.wbox, st)
            }
        }
    }

    /// Does the WKB value of table row `row` match? The box first (under the column's
    /// edges), then the box shortcut of a box window, then `geo`.
    pub(super) fn wkb(&self, w: &[u8], row: u64, st: &mut QueryStats) -> Result<bool> {
        st.exact_tested += 1;
        let path = &self.info.path;
        // Intersects with a box window under planar edges: a vertex inside the (closed)
        // window is a point the geometry shares with it, so the row matches without the
        // geometry being built and tested (issue #33: most of a polygon window's candidates
        // cross its edge with some vertex inside). Looked for in the walk that boxes it.
        let mut vertex = match (&self.predicate, &self.box_window) {
            (Predicate::Intersects, Some(b)) if self.planar => Some(VertexIn { w: *b, found: false }),
            _ => None,
        };
        let scanned = match vertex.as_mut() {
            Some(v) => crate::wkb::scan_with(w, v),
            None => crate::wkb::scan(w),
        }
        .map_err(|e| e.into_marquet(path.clone(), Some(row)))?;
        if scanned.is_empty {
            return Ok(false);
        }
        if vertex.is_some_and(|v| v.found) {
            return Ok(true);
        }
        let gbox = if self.planar {
            scanned.bbox
        } else {
            crate::marquet::bounds::geometry_box(w, self.model, self.info.orientation_ccw)
                .map_err(|e| e.into_marquet(path.clone(), Some(row)))?
        };
        if !intersects(&gbox, &self.wbox) {
            return Ok(false); // no predicate can hold
        }
        Ok(match self.predicate {
            Predicate::BBoxOnly => true,
            Predicate::Intersects if self.inside(&gbox, false) => true,
            Predicate::Within if self.inside(&gbox, true) => true,
            _ => {
                let mut g = crate::wkb::decode(w).map_err(|e| e.into_marquet(path.clone(), Some(row)))?;
                strip_nan(&mut g);
                let g: geo::Geometry<f64> = g.into();
                exact(&self.predicate, &g, &self.window_geo, &gbox, &self.wbox, st)
            }
        })
    }
}

/// Whether some vertex (a coordinate with X and Y not NaN) lies in the closed box `w`.
struct VertexIn {
    w: BBox,
    found: bool,
}

impl crate::wkb::WkbVisitor for VertexIn {
    fn coords(&mut self, _ring: Option<usize>, seq: crate::wkb::CoordSeq<'_>) {
        if !self.found {
            let w = &self.w;
            self.found = seq.xy().any(|(x, y)| x >= w.xmin && x <= w.xmax && y >= w.ymin && y <= w.ymax);
        }
    }
}

/// Remove every coordinate with a NaN X or Y (and every point member that is one): the
/// predicates see the geometry "ignoring coordinate values that are NaN" (HEP002 §6.4,
/// issue #32), as its boxes do — a NaN vertex of a line is skipped, its neighbours joined.
pub(crate) fn strip_nan(g: &mut crate::wkb::Geometry) {
    use crate::wkb::{Coord, Geometry as G};
    let keep = |c: &Coord| !c.x.is_nan() && !c.y.is_nan();
    match g {
        G::Point(_) => {}
        G::LineString(l) => l.coords.retain(keep),
        G::Polygon(p) => p.rings.iter_mut().for_each(|r| r.retain(keep)),
        G::MultiPoint(m) => m.points.retain(|p| keep(&p.coord)),
        G::MultiLineString(m) => m.lines.iter_mut().for_each(|l| l.coords.retain(keep)),
        G::MultiPolygon(m) => m.polygons.iter_mut().flat_map(|p| p.rings.iter_mut()).for_each(|r| r.retain(keep)),
        G::GeometryCollection(c) => c.geometries.iter_mut().for_each(strip_nan),
    }
}

/// Coordinate `off` (a byte offset) of a point element stored as f32 or f64
/// little-endian; NaN when the element is too short.
#[inline]
pub(super) fn point_coord(el: &[u8], off: usize, f32: bool) -> f64 {
    if f32 {
        el.get(off..off + 4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64).unwrap_or(f64::NAN)
    } else {
        el.get(off..off + 8).and_then(|b| b.try_into().ok()).map(f64::from_le_bytes).unwrap_or(f64::NAN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wkb::{encode, ByteOrder, Coord, Geometry, LineString, MultiPolygon, Point, Polygon};

    /// Whenever the walk finds a vertex inside the window, `geo`'s intersects test (what the
    /// row would get otherwise) says the geometry and the window intersect: the fast path
    /// answers no row differently. Windows share edges and corners with vertices, and
    /// vertices may be NaN (ignored by both, `strip_nan`).
    #[test]
    fn a_vertex_in_the_window_is_what_geo_calls_intersecting() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let (mut found, mut not_found) = (0, 0);
        const XY: crate::spec::Dimensions = crate::spec::Dimensions::Xy;
        for round in 0..3000 {
            let k = next(4);
            let (x0, y0) = (next(9) as f64 * 0.5, next(9) as f64 * 0.5);
            let b = BBox::xy(x0, y0, x0 + next(4) as f64 * 0.5, y0 + next(4) as f64 * 0.5);
            // Coordinates on a coarse grid, so that vertices fall on window edges.
            let mut c = || {
                if next(40) == 0 {
                    Coord::xy(f64::NAN, next(9) as f64)
                } else {
                    Coord::xy(next(9) as f64 * 0.5, next(9) as f64 * 0.5)
                }
            };
            let ring = |c: &mut dyn FnMut() -> Coord, n: u64| {
                let mut r: Vec<Coord> = (0..3 + n).map(|_| c()).collect();
                r.push(r[0]);
                r
            };
            let g = match round % 4 {
                0 => Geometry::Point(Point { coord: c(), dims: XY }),
                1 => Geometry::LineString(LineString { coords: (0..2 + k).map(|_| c()).collect(), dims: XY }),
                2 => Geometry::Polygon(Polygon { rings: vec![ring(&mut c, k)], dims: XY }),
                _ => Geometry::MultiPolygon(MultiPolygon {
                    polygons: (0..1 + k % 2).map(|_| Polygon { rings: vec![ring(&mut c, k)], dims: XY }).collect(),
                    dims: XY,
                }),
            };
            let w = encode(&g, ByteOrder::LittleEndian);
            let mut v = VertexIn { w: b, found: false };
            crate::wkb::scan_with(&w, &mut v).unwrap();
            if !v.found {
                not_found += 1;
                continue;
            }
            found += 1;
            let mut d = crate::wkb::decode(&w).unwrap();
            strip_nan(&mut d);
            let gg: geo::Geometry<f64> = d.into();
            let wg = crate::query::Window::BBox(b).to_geo();
            assert!(Predicate::Intersects.evaluate(&gg, &wg), "round {round}: {g:?} and {b:?}");
        }
        assert!(found > 500 && not_found > 500, "found {found}, not found {not_found}");
    }
}
