//! Geometries between the GeoJSON model (the `geojson` crate, RFC 7946 §3.1) and the WKB
//! model: for GeoJSON files and for GeoJSON geometry text in lakehouse columns.

use geojson::{GeometryValue, Position};

use crate::spec::Dimensions;
use crate::wkb::{self, Coord, Geometry};

fn pos_coord(p: &Position, dims: Dimensions) -> Coord {
    let s = p.as_slice();
    let g = |i: usize| s.get(i).copied().unwrap_or(f64::NAN);
    match dims {
        Dimensions::Xyz => Coord::xyz(g(0), g(1), g(2)),
        _ => Coord::xy(g(0), g(1)),
    }
}

fn max_dim(v: &GeometryValue) -> usize {
    fn m(ps: &[Position]) -> usize {
        ps.iter().map(|p| p.len()).max().unwrap_or(2)
    }
    match v {
        GeometryValue::Point { coordinates } => coordinates.len().max(2),
        GeometryValue::MultiPoint { coordinates } | GeometryValue::LineString { coordinates } => m(coordinates),
        GeometryValue::MultiLineString { coordinates } | GeometryValue::Polygon { coordinates } => {
            coordinates.iter().map(|r| m(r)).max().unwrap_or(2)
        }
        GeometryValue::MultiPolygon { coordinates } => {
            coordinates.iter().flat_map(|p| p.iter().map(|r| m(r))).max().unwrap_or(2)
        }
        GeometryValue::GeometryCollection { geometries } => geometries.iter().map(|g| max_dim(&g.value)).max().unwrap_or(2),
    }
}

/// A GeoJSON geometry as a WKB-model geometry (XY, or XYZ when any position has 3 values).
pub fn from_geojson(v: &GeometryValue) -> Geometry {
    let dims = if max_dim(v) >= 3 { Dimensions::Xyz } else { Dimensions::Xy };
    build(v, dims)
}

fn build(v: &GeometryValue, dims: Dimensions) -> Geometry {
    let seq = |ps: &[Position]| ps.iter().map(|p| pos_coord(p, dims)).collect::<Vec<_>>();
    match v {
        GeometryValue::Point { coordinates } => Geometry::Point(if coordinates.is_empty() {
            wkb::Point::empty(dims)
        } else {
            wkb::Point::new(dims, pos_coord(coordinates, dims))
        }),
        GeometryValue::LineString { coordinates } => Geometry::LineString(wkb::LineString { dims, coords: seq(coordinates) }),
        GeometryValue::Polygon { coordinates } => {
            Geometry::Polygon(wkb::Polygon { dims, rings: coordinates.iter().map(|r| seq(r)).collect() })
        }
        GeometryValue::MultiPoint { coordinates } => Geometry::MultiPoint(wkb::MultiPoint {
            dims,
            points: coordinates.iter().map(|p| wkb::Point::new(dims, pos_coord(p, dims))).collect(),
        }),
        GeometryValue::MultiLineString { coordinates } => Geometry::MultiLineString(wkb::MultiLineString {
            dims,
            lines: coordinates.iter().map(|l| wkb::LineString { dims, coords: seq(l) }).collect(),
        }),
        GeometryValue::MultiPolygon { coordinates } => Geometry::MultiPolygon(wkb::MultiPolygon {
            dims,
            polygons: coordinates
                .iter()
                .map(|p| wkb::Polygon { dims, rings: p.iter().map(|r| seq(r)).collect() })
                .collect(),
        }),
        GeometryValue::GeometryCollection { geometries } => Geometry::GeometryCollection(wkb::GeometryCollection {
            dims,
            geometries: geometries.iter().map(|g| build(&g.value, dims)).collect(),
        }),
    }
}

fn position(c: &Coord, dims: Dimensions) -> Position {
    if dims.has_z() {
        Position::from(vec![c.x, c.y, c.z])
    } else {
        Position::from(vec![c.x, c.y])
    }
}

/// A WKB-model geometry as GeoJSON (Z kept, M dropped; POINT EMPTY → empty coordinates).
pub fn to_geojson(g: &Geometry) -> GeometryValue {
    let seq = |cs: &[Coord], d: Dimensions| cs.iter().map(|c| position(c, d)).collect::<Vec<_>>();
    match g {
        Geometry::Point(p) => GeometryValue::Point {
            coordinates: if p.coord.is_empty() { Position::from(Vec::<f64>::new()) } else { position(&p.coord, p.dims) },
        },
        Geometry::LineString(l) => GeometryValue::LineString { coordinates: seq(&l.coords, l.dims) },
        Geometry::Polygon(p) => GeometryValue::Polygon { coordinates: p.rings.iter().map(|r| seq(r, p.dims)).collect() },
        Geometry::MultiPoint(m) => {
            GeometryValue::MultiPoint { coordinates: m.points.iter().map(|p| position(&p.coord, p.dims)).collect() }
        }
        Geometry::MultiLineString(m) => {
            GeometryValue::MultiLineString { coordinates: m.lines.iter().map(|l| seq(&l.coords, l.dims)).collect() }
        }
        Geometry::MultiPolygon(m) => GeometryValue::MultiPolygon {
            coordinates: m.polygons.iter().map(|p| p.rings.iter().map(|r| seq(r, p.dims)).collect()).collect(),
        },
        Geometry::GeometryCollection(c) => GeometryValue::GeometryCollection {
            geometries: c.geometries.iter().map(|g| geojson::Geometry::new(to_geojson(g))).collect(),
        },
    }
}

/// A geometry as a GeoJSON geometry object (RFC 7946 §3.1), as JSON.
pub fn to_geojson_json(g: &Geometry) -> serde_json::Value {
    serde_json::to_value(geojson::Geometry::new(to_geojson(g))).unwrap_or(serde_json::Value::Null)
}

