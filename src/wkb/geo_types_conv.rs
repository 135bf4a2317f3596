//! Conversions between the owned model and `geo_types` (XY only).

use crate::spec::Dimensions;

use super::geometry::{
    Coord, Geometry, GeometryCollection, LineString, MultiLineString, MultiPoint, MultiPolygon,
    Point, Polygon,
};

fn gt_coord(c: &Coord) -> geo_types::Coord<f64> {
    geo_types::Coord { x: c.x, y: c.y }
}

fn gt_line(cs: &[Coord]) -> geo_types::LineString<f64> {
    geo_types::LineString(cs.iter().map(gt_coord).collect())
}

fn gt_polygon(p: &Polygon) -> geo_types::Polygon<f64> {
    let mut rings = p.rings.iter();
    let exterior = rings
        .next()
        .map(|r| gt_line(r))
        .unwrap_or_else(|| geo_types::LineString(Vec::new()));
    // geo_types closes rings that are not closed; WKB rings are kept as they are otherwise.
    geo_types::Polygon::new(exterior, rings.map(|r| gt_line(r)).collect())
}

/// To `geo_types`, dropping Z and M. An empty point becomes `Point(NaN, NaN)`, the usual
/// geo_types spelling; note that `geo_types::Polygon` closes unclosed rings.
impl From<&Geometry> for geo_types::Geometry<f64> {
    fn from(g: &Geometry) -> geo_types::Geometry<f64> {
        use geo_types::Geometry as G;
        match g {
            Geometry::Point(p) => G::Point(geo_types::Point(gt_coord(&p.coord))),
            Geometry::LineString(l) => G::LineString(gt_line(&l.coords)),
            Geometry::Polygon(p) => G::Polygon(gt_polygon(p)),
            Geometry::MultiPoint(m) => G::MultiPoint(geo_types::MultiPoint(
                m.points
                    .iter()
                    .map(|p| geo_types::Point(gt_coord(&p.coord)))
                    .collect(),
            )),
            Geometry::MultiLineString(m) => G::MultiLineString(geo_types::MultiLineString(
                m.lines.iter().map(|l| gt_line(&l.coords)).collect(),
            )),
            Geometry::MultiPolygon(m) => G::MultiPolygon(geo_types::MultiPolygon(
                m.polygons.iter().map(gt_polygon).collect(),
            )),
            Geometry::GeometryCollection(c) => G::GeometryCollection(
                geo_types::GeometryCollection(c.geometries.iter().map(Into::into).collect()),
            ),
        }
    }
}

impl From<Geometry> for geo_types::Geometry<f64> {
    fn from(g: Geometry) -> geo_types::Geometry<f64> {
        (&g).into()
    }
}

const XY: Dimensions = Dimensions::Xy;

fn coord(c: &geo_types::Coord<f64>) -> Coord {
    Coord::xy(c.x, c.y)
}

fn point(p: &geo_types::Point<f64>) -> Point {
    Point::new(XY, coord(&p.0))
}

fn line(l: &geo_types::LineString<f64>) -> LineString {
    LineString {
        dims: XY,
        coords: l.0.iter().map(coord).collect(),
    }
}

fn polygon(p: &geo_types::Polygon<f64>) -> Polygon {
    let ext = p.exterior();
    let mut rings = Vec::with_capacity(1 + p.interiors().len());
    // geo_types has no empty-polygon distinction: an empty exterior is POLYGON EMPTY.
    if !ext.0.is_empty() {
        rings.push(ext.0.iter().map(coord).collect());
        rings.extend(
            p.interiors()
                .iter()
                .map(|r| r.0.iter().map(coord).collect()),
        );
    }
    Polygon { dims: XY, rings }
}

/// From `geo_types` as XY. `Line` becomes a two-point LineString, `Rect` and `Triangle`
/// become Polygons (as geo_types converts them).
impl From<&geo_types::Geometry<f64>> for Geometry {
    fn from(g: &geo_types::Geometry<f64>) -> Geometry {
        use geo_types::Geometry as G;
        match g {
            G::Point(p) => Geometry::Point(point(p)),
            G::Line(l) => Geometry::LineString(LineString {
                dims: XY,
                coords: vec![coord(&l.start), coord(&l.end)],
            }),
            G::LineString(l) => Geometry::LineString(line(l)),
            G::Polygon(p) => Geometry::Polygon(polygon(p)),
            G::MultiPoint(m) => Geometry::MultiPoint(MultiPoint {
                dims: XY,
                points: m.0.iter().map(point).collect(),
            }),
            G::MultiLineString(m) => Geometry::MultiLineString(MultiLineString {
                dims: XY,
                lines: m.0.iter().map(line).collect(),
            }),
            G::MultiPolygon(m) => Geometry::MultiPolygon(MultiPolygon {
                dims: XY,
                polygons: m.0.iter().map(polygon).collect(),
            }),
            G::GeometryCollection(c) => Geometry::GeometryCollection(GeometryCollection {
                dims: XY,
                geometries: c.0.iter().map(Geometry::from).collect(),
            }),
            G::Rect(r) => Geometry::Polygon(polygon(&r.to_polygon())),
            G::Triangle(t) => Geometry::Polygon(polygon(&t.to_polygon())),
        }
    }
}

impl From<geo_types::Geometry<f64>> for Geometry {
    fn from(g: geo_types::Geometry<f64>) -> Geometry {
        (&g).into()
    }
}
