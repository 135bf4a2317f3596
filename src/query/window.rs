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
    /// wrapping box the two rectangles `xmin..180` and `-180..xmax`.
    pub fn to_geo(&self) -> geo::Geometry<f64> {
        match self {
            Window::BBox(b) if b.xmin > b.xmax => geo::Geometry::MultiPolygon(geo::MultiPolygon(vec![
                geo::Rect::new((b.xmin, b.ymin), (180f64.max(b.xmin), b.ymax)).to_polygon(),
                geo::Rect::new(((-180f64).min(b.xmax), b.ymin), (b.xmax, b.ymax)).to_polygon(),
            ])),
            Window::BBox(b) => geo::Geometry::Rect(geo::Rect::new((b.xmin, b.ymin), (b.xmax, b.ymax))),
            Window::Geometry(g) => g.into(),
        }
    }
}
