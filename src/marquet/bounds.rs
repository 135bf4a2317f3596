//! Boxes that contain geometries under the column's edge interpretation (HEP002 §6.4, §9.1,
//! ruling R8): the WKB side of [`crate::spatial::geodesic`].
//!
//! Under `PLANAR` edges a geometry's box is its vertex box ([`wkb::scan`]). Under any other
//! `EDGES` value the box also holds every geodesic edge, the pole enclosed by a ring, and is
//! grown outward by at least 1e-9°; a geometry crossing ±180° gets every longitude. These
//! boxes feed `BBOX`, covering columns, block boxes and R-tree items alike.

use crate::spatial::geodesic::{self, EdgeModel};
use crate::spec::BBox;
use crate::wkb::{self, CoordSeq, WkbError, WkbInfo, WkbVisitor};

use super::{Edges, GeometryColumnInfo, RowInfo};

/// The edge model of an `EDGES` value. An unrecognized member is treated as ellipsoidal
/// (the widest boxes), never as planar (HEP002 §9.1).
pub fn edge_model(e: &Edges) -> EdgeModel {
    match e {
        Edges::Planar => EdgeModel::Planar,
        Edges::Spherical => EdgeModel::Spherical,
        Edges::Vincenty | Edges::Thomas | Edges::Andoyer | Edges::Karney | Edges::Unknown(_) => {
            EdgeModel::Ellipsoidal
        }
    }
}

struct EdgeVisitor {
    model: EdgeModel,
    ccw: bool,
    xy: BBox,
    buf: Vec<(f64, f64)>,
}

impl WkbVisitor for EdgeVisitor {
    fn coords(&mut self, ring: Option<usize>, seq: CoordSeq<'_>) {
        self.buf.clear();
        self.buf.extend(seq.xy());
        match ring {
            Some(r) => geodesic::add_ring(&mut self.xy, &self.buf, self.model, self.ccw, r == 0),
            None => geodesic::add_line(&mut self.xy, &self.buf, self.model),
        }
    }
}

/// The box of one WKB value under `model`: Z and M from the vertices, X and Y grown for the
/// edges (see the module doc). Equals [`wkb::scan`]'s box for [`EdgeModel::Planar`].
pub fn geometry_box(bytes: &[u8], model: EdgeModel, ccw: bool) -> Result<BBox, WkbError> {
    box_of_scanned(bytes, &wkb::scan(bytes)?, model, ccw)
}

/// [`geometry_box`] of a value `info` already scanned (`info` is `wkb::scan(bytes)`).
pub fn box_of_scanned(bytes: &[u8], info: &WkbInfo, model: EdgeModel, ccw: bool) -> Result<BBox, WkbError> {
    Ok(grown_box(bytes, info, model, ccw)?.unwrap_or(info.bbox))
}

/// The grown box for a value already scanned, or `None` when nothing changes (planar edges,
/// points, empty geometries).
fn grown_box(bytes: &[u8], info: &WkbInfo, model: EdgeModel, ccw: bool) -> Result<Option<BBox>, WkbError> {
    if model == EdgeModel::Planar || info.is_empty || info.geometry_type.kind == crate::GeometryKind::Point {
        return Ok(None);
    }
    let mut v = EdgeVisitor { model, ccw, xy: BBox::EMPTY, buf: Vec::new() };
    wkb::visit(bytes, &mut v)?;
    let g = geodesic::finish(&v.xy);
    let mut b = info.bbox;
    b.xmin = g.xmin;
    b.ymin = g.ymin;
    b.xmax = g.xmax;
    b.ymax = g.ymax;
    Ok(Some(b))
}

/// Replace the boxes of `rows` by boxes that contain the geometries under the column's
/// edges; `value(i)` gives row `i`'s WKB. A no-op for planar columns.
pub fn grow_rows<'a>(
    info: &GeometryColumnInfo,
    rows: &mut [RowInfo],
    value: impl Fn(usize) -> Option<&'a [u8]>,
) -> crate::Result<()> {
    let model = edge_model(&info.edges);
    if model == EdgeModel::Planar {
        return Ok(());
    }
    for (i, r) in rows.iter_mut().enumerate() {
        if let (RowInfo::Geometry(g), Some(bytes)) = (r, value(i)) {
            if let Some(b) = grown_box(bytes, g, model, info.orientation_ccw)
                .map_err(|e| e.into_marquet(info.path.clone(), Some(i as u64)))?
            {
                g.bbox = b;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Dimensions;
    use crate::wkb::{encode, ByteOrder, Coord, Geometry, LineString, Polygon};

    #[test]
    fn planar_equals_scan_and_spherical_grows() {
        let l = Geometry::LineString(LineString {
            dims: Dimensions::Xyz,
            coords: vec![Coord::xyz(0.0, 60.0, 5.0), Coord::xyz(90.0, 60.0, 7.0)],
        });
        let w = encode(&l, ByteOrder::LittleEndian);
        assert_eq!(geometry_box(&w, EdgeModel::Planar, false).unwrap(), wkb::scan(&w).unwrap().bbox);
        let b = geometry_box(&w, EdgeModel::Spherical, false).unwrap();
        assert!(b.ymax > 67.79 && b.ymax < 67.80);
        assert!(b.xmin < 0.0 && b.xmax > 90.0 && b.ymin < 60.0);
        assert_eq!((b.zmin, b.zmax), (5.0, 7.0));
    }

    #[test]
    fn polygon_around_the_pole() {
        let ring: Vec<Coord> = (0..=8).map(|i| Coord::xy(-180.0 + 45.0 * (i % 8) as f64, 70.0)).collect();
        let p = Geometry::Polygon(Polygon { dims: Dimensions::Xy, rings: vec![ring] });
        let w = encode(&p, ByteOrder::LittleEndian);
        let b = geometry_box(&w, EdgeModel::Spherical, true).unwrap();
        assert_eq!((b.xmin, b.xmax, b.ymax), (-180.0, 180.0, 90.0));
        assert!(b.ymin < 70.0 && b.ymin > 69.9);
        let planar = geometry_box(&w, EdgeModel::Planar, true).unwrap();
        assert_eq!((planar.ymin, planar.ymax), (70.0, 70.0));
    }
}
