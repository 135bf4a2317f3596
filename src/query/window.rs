//! The query area (HEP002 §17): a box or a geometry, and the one rule that checks it.

use crate::error::{MarquetError, Result};
use crate::spec::BBox;
use crate::wkb;

/// The query area.
#[derive(Debug, Clone, PartialEq)]
pub enum Window {
    /// A box (XY); `xmin > xmax` wraps around the antimeridian.
    BBox(BBox),
    /// A geometry, in the column's coordinates.
    Geometry(wkb::Geometry),
}

impl Window {
    /// A box window, checked by [`Window::check`].
    pub fn try_bbox(xmin: f64, ymin: f64, xmax: f64, ymax: f64) -> Result<Window> {
        let w = Window::BBox(BBox::xy(xmin, ymin, xmax, ymax));
        w.check()?;
        Ok(w)
    }

    /// The one window rule, for every interface (library, CLI, C ABI, Python): a box
    /// window has no NaN bound and `ymin <= ymax`. `xmin > xmax` is a window that wraps
    /// around the antimeridian, which the query accepts only on a column with a
    /// geographic CRS (it knows the column; see [`crate::query`]).
    pub fn check(&self) -> Result<()> {
        if let Window::BBox(b) = self {
            if [b.xmin, b.ymin, b.xmax, b.ymax].iter().any(|v| v.is_nan()) {
                return Err(MarquetError::InvalidArgument(format!("window [{}, {}, {}, {}] has a NaN bound", b.xmin, b.ymin, b.xmax, b.ymax)));
            }
            if b.ymin > b.ymax {
                return Err(MarquetError::InvalidArgument(format!("window ymin {} > ymax {}", b.ymin, b.ymax)));
            }
        }
        Ok(())
    }

    /// A window from an ISO WKB value.
    pub fn from_wkb(bytes: &[u8]) -> Result<Window> {
        Ok(Window::Geometry(wkb::decode(bytes).map_err(|e| e.into_marquet("<query window>", None))?))
    }

    /// The window's XY box (a geometry window's vertex box; [`BBox::EMPTY`] when empty).
    pub fn bbox(&self) -> BBox {
        match self {
            Window::BBox(b) => BBox::xy(b.xmin, b.ymin, b.xmax, b.ymax),
            Window::Geometry(g) => {
                let w = wkb::encode(g, wkb::ByteOrder::LittleEndian);
                wkb::scan(&w).map(|i| if i.is_empty { BBox::EMPTY } else { i.bbox }).unwrap_or(BBox::EMPTY)
            }
        }
    }

    /// The window as a `geo` geometry for the exact predicates: a box becomes a `Rect`, a
    /// wrapping box the two rectangles `xmin..180` and `-180..xmax`. A box of zero area is
    /// the geometry it really is (issue #38; OGC/DE-9IM as shapely/GEOS read such a box):
    /// a `Line` when one side has zero length, a `Point` when both have — never a
    /// degenerate `Rect`, whose area-less "interior" made `within` answer wrongly.
    pub fn to_geo(&self) -> geo::Geometry<f64> {
        match self {
            Window::BBox(b) if b.xmin > b.xmax => {
                let parts = [box_geo(b.xmin, b.ymin, 180f64.max(b.xmin), b.ymax), box_geo((-180f64).min(b.xmax), b.ymin, b.xmax, b.ymax)];
                match parts {
                    [geo::Geometry::Rect(a), geo::Geometry::Rect(c)] => {
                        geo::Geometry::MultiPolygon(geo::MultiPolygon(vec![a.to_polygon(), c.to_polygon()]))
                    }
                    [a, c] => geo::Geometry::GeometryCollection(geo::GeometryCollection(vec![a, c])),
                }
            }
            Window::BBox(b) => box_geo(b.xmin, b.ymin, b.xmax, b.ymax),
            Window::Geometry(g) => g.into(),
        }
    }
}

/// The box `x0..x1 × y0..y1` (`x0 <= x1`, `y0 <= y1`) as the geometry of its dimension.
fn box_geo(x0: f64, y0: f64, x1: f64, y1: f64) -> geo::Geometry<f64> {
    match (x0 == x1, y0 == y1) {
        (true, true) => geo::Geometry::Point(geo::Point::new(x0, y0)),
        (true, false) | (false, true) => geo::Geometry::Line(geo::Line::new((x0, y0), (x1, y1))),
        (false, false) => geo::Geometry::Rect(geo::Rect::new((x0, y0), (x1, y1))),
    }
}
