//! The owned geometry model (keeps Z and M, byte-exact NaNs), `decode`, `encode` and WKT.

use std::fmt::{self, Write as _};

use crate::spec::{Dimensions, GeometryKind, GeometryType};

use super::error::WkbError;
use super::reader::{visit, CoordSeq, Header, WkbVisitor};
use super::ByteOrder;

/// One position. Ordinates a geometry's [`Dimensions`] do not include are NaN and ignored.
/// Bits are kept exactly as read, so NaN payloads survive decode + encode.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Coord {
    /// Easting or longitude (HEP002 §8.2), in CRS units.
    pub x: f64,
    /// Northing or latitude, in CRS units.
    pub y: f64,
    /// Z (height); NaN when the geometry has no Z.
    pub z: f64,
    /// M (measure); NaN when the geometry has no M.
    pub m: f64,
}

impl Coord {
    /// All-NaN: the coordinate of an empty point (HEP002 §7.1).
    pub const EMPTY: Coord = Coord {
        x: f64::NAN,
        y: f64::NAN,
        z: f64::NAN,
        m: f64::NAN,
    };

    /// An XY coordinate (Z and M NaN).
    pub const fn xy(x: f64, y: f64) -> Coord {
        Coord {
            x,
            y,
            z: f64::NAN,
            m: f64::NAN,
        }
    }
    /// An XYZ coordinate (M NaN).
    pub const fn xyz(x: f64, y: f64, z: f64) -> Coord {
        Coord {
            x,
            y,
            z,
            m: f64::NAN,
        }
    }
    /// An XYM coordinate (Z NaN).
    pub const fn xym(x: f64, y: f64, m: f64) -> Coord {
        Coord {
            x,
            y,
            z: f64::NAN,
            m,
        }
    }
    /// An XYZM coordinate.
    pub const fn xyzm(x: f64, y: f64, z: f64, m: f64) -> Coord {
        Coord { x, y, z, m }
    }

    /// True when X and Y are both NaN (an empty point's coordinate, ruling R6).
    pub fn is_empty(&self) -> bool {
        self.x.is_nan() && self.y.is_nan()
    }

    /// The ordinates stored for `dims`, in WKB order; returns how many of `out` were set.
    fn ordinates(&self, dims: Dimensions, out: &mut [f64; 4]) -> usize {
        out[0] = self.x;
        out[1] = self.y;
        match dims {
            Dimensions::Xy => 2,
            Dimensions::Xyz => {
                out[2] = self.z;
                3
            }
            Dimensions::Xym => {
                out[2] = self.m;
                3
            }
            Dimensions::Xyzm => {
                out[2] = self.z;
                out[3] = self.m;
                4
            }
        }
    }
}

/// A point (ISO code 1 + dimension offset); empty when its coordinate is all-NaN.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// The dimensions written for this point (and its type code).
    pub dims: Dimensions,
    /// All-NaN for `POINT EMPTY`.
    pub coord: Coord,
}

/// A line string (ISO code 2): any number of vertices, zero for `LINESTRING EMPTY`
/// (one-point lines are accepted, ruling R4).
#[derive(Debug, Clone, PartialEq)]
pub struct LineString {
    /// The dimensions written for this line (and its type code).
    pub dims: Dimensions,
    /// The vertices in order.
    pub coords: Vec<Coord>,
}

/// A polygon (ISO code 3): rings of vertices, none for `POLYGON EMPTY`.
#[derive(Debug, Clone, PartialEq)]
pub struct Polygon {
    /// The dimensions written for this polygon (and its type code).
    pub dims: Dimensions,
    /// Exterior ring first. Rings are not checked for closure or length (ruling R4).
    pub rings: Vec<Vec<Coord>>,
}

/// A multipoint (ISO code 4): each member is a WKB Point with its own header.
#[derive(Debug, Clone, PartialEq)]
pub struct MultiPoint {
    /// The dimensions of the multipoint's own type code.
    pub dims: Dimensions,
    /// Members keep their own dimensions (mixed dimensions are read, ruling R7).
    pub points: Vec<Point>,
}

/// A multilinestring (ISO code 5).
#[derive(Debug, Clone, PartialEq)]
pub struct MultiLineString {
    /// The dimensions of the multilinestring's own type code.
    pub dims: Dimensions,
    /// The member lines, each with its own dimensions (ruling R7).
    pub lines: Vec<LineString>,
}

/// A multipolygon (ISO code 6).
#[derive(Debug, Clone, PartialEq)]
pub struct MultiPolygon {
    /// The dimensions of the multipolygon's own type code.
    pub dims: Dimensions,
    /// The member polygons, each with its own dimensions (ruling R7).
    pub polygons: Vec<Polygon>,
}

/// A geometry collection (ISO code 7), nested at most [`MAX_NESTING`](super::MAX_NESTING)
/// deep (ruling R5).
#[derive(Debug, Clone, PartialEq)]
pub struct GeometryCollection {
    /// The dimensions of the collection's own type code.
    pub dims: Dimensions,
    /// The members, of any type, possibly collections themselves.
    pub geometries: Vec<Geometry>,
}

/// A decoded geometry of one of the seven Simple Features types, with Z/M preserved.
/// `PartialEq` compares floats by IEEE rules (NaN ≠ NaN); compare encodings for bit equality.
#[derive(Debug, Clone, PartialEq)]
pub enum Geometry {
    /// ISO code 1.
    Point(Point),
    /// ISO code 2.
    LineString(LineString),
    /// ISO code 3.
    Polygon(Polygon),
    /// ISO code 4.
    MultiPoint(MultiPoint),
    /// ISO code 5.
    MultiLineString(MultiLineString),
    /// ISO code 6.
    MultiPolygon(MultiPolygon),
    /// ISO code 7.
    GeometryCollection(GeometryCollection),
}

impl Point {
    /// A point at `coord` written with `dims`; ordinates outside `dims` are ignored.
    pub fn new(dims: Dimensions, coord: Coord) -> Point {
        Point { dims, coord }
    }
    /// `POINT EMPTY` in `dims`: NaN in every ordinate.
    pub fn empty(dims: Dimensions) -> Point {
        Point {
            dims,
            coord: Coord::EMPTY,
        }
    }
}

impl Geometry {
    /// The kind of the outermost geometry (members of collections are not looked at).
    pub fn kind(&self) -> GeometryKind {
        match self {
            Geometry::Point(_) => GeometryKind::Point,
            Geometry::LineString(_) => GeometryKind::LineString,
            Geometry::Polygon(_) => GeometryKind::Polygon,
            Geometry::MultiPoint(_) => GeometryKind::MultiPoint,
            Geometry::MultiLineString(_) => GeometryKind::MultiLineString,
            Geometry::MultiPolygon(_) => GeometryKind::MultiPolygon,
            Geometry::GeometryCollection(_) => GeometryKind::GeometryCollection,
        }
    }

    /// The dimensions of the outermost geometry's type code (members may differ, ruling R7).
    pub fn dims(&self) -> Dimensions {
        match self {
            Geometry::Point(g) => g.dims,
            Geometry::LineString(g) => g.dims,
            Geometry::Polygon(g) => g.dims,
            Geometry::MultiPoint(g) => g.dims,
            Geometry::MultiLineString(g) => g.dims,
            Geometry::MultiPolygon(g) => g.dims,
            Geometry::GeometryCollection(g) => g.dims,
        }
    }

    /// The type listed for this value in `GEOMETRY_TYPES` (HEP002 §6.3): outer kind and
    /// dimensions, e.g. `Polygon Z`.
    pub fn geometry_type(&self) -> GeometryType {
        GeometryType::new(self.kind(), self.dims())
    }

    /// Ruling R6: true when no coordinate anywhere has a non-NaN X or Y.
    pub fn is_empty(&self) -> bool {
        let none = |cs: &[Coord]| cs.iter().all(Coord::is_empty);
        match self {
            Geometry::Point(p) => p.coord.is_empty(),
            Geometry::LineString(l) => none(&l.coords),
            Geometry::Polygon(p) => p.rings.iter().all(|r| none(r)),
            Geometry::MultiPoint(m) => m.points.iter().all(|p| p.coord.is_empty()),
            Geometry::MultiLineString(m) => m.lines.iter().all(|l| none(&l.coords)),
            Geometry::MultiPolygon(m) => m.polygons.iter().all(|p| p.rings.iter().all(|r| none(r))),
            Geometry::GeometryCollection(c) => c.geometries.iter().all(Geometry::is_empty),
        }
    }

    /// Length of [`encode`]'s output for this geometry.
    pub fn encoded_len(&self) -> usize {
        let cs = |dims: Dimensions| 8 * dims.size();
        match self {
            Geometry::Point(p) => 5 + cs(p.dims),
            Geometry::LineString(l) => 9 + l.coords.len() * cs(l.dims),
            Geometry::Polygon(p) => polygon_len(p),
            Geometry::MultiPoint(m) => 9 + m.points.iter().map(|p| 5 + cs(p.dims)).sum::<usize>(),
            Geometry::MultiLineString(m) => {
                9 + m
                    .lines
                    .iter()
                    .map(|l| 9 + l.coords.len() * cs(l.dims))
                    .sum::<usize>()
            }
            Geometry::MultiPolygon(m) => 9 + m.polygons.iter().map(polygon_len).sum::<usize>(),
            Geometry::GeometryCollection(c) => {
                9 + c
                    .geometries
                    .iter()
                    .map(Geometry::encoded_len)
                    .sum::<usize>()
            }
        }
    }

    /// ISO WKB in `order` (see [`encode`]).
    pub fn to_wkb(&self, order: ByteOrder) -> Vec<u8> {
        encode(self, order)
    }

    /// WKT as used by dumps and peer comparisons (see [`to_wkt`](super::to_wkt)).
    pub fn to_wkt(&self) -> String {
        self.to_string()
    }
}

fn polygon_len(p: &Polygon) -> usize {
    9 + p
        .rings
        .iter()
        .map(|r| 4 + r.len() * 8 * p.dims.size())
        .sum::<usize>()
}

// ---------------------------------------------------------------------------------------
// decode

/// Builds the owned model from the walker's events. Every count it preallocates from was
/// checked by the walker against the bytes left, so memory stays proportional to the input.
#[derive(Default)]
struct Builder {
    stack: Vec<Geometry>,
    done: Option<Geometry>,
}

fn read_coords(seq: CoordSeq<'_>) -> Vec<Coord> {
    let mut v = Vec::with_capacity(seq.len());
    v.extend(seq.iter());
    v
}

impl WkbVisitor for Builder {
    fn begin_geometry(&mut self, h: &Header) {
        let dims = h.geometry_type.dims;
        let n = h.count;
        let g = match h.geometry_type.kind {
            GeometryKind::Point => Geometry::Point(Point::empty(dims)),
            GeometryKind::LineString => Geometry::LineString(LineString {
                dims,
                coords: Vec::new(),
            }),
            GeometryKind::Polygon => Geometry::Polygon(Polygon {
                dims,
                rings: Vec::with_capacity(n),
            }),
            GeometryKind::MultiPoint => Geometry::MultiPoint(MultiPoint {
                dims,
                points: Vec::with_capacity(n),
            }),
            GeometryKind::MultiLineString => Geometry::MultiLineString(MultiLineString {
                dims,
                lines: Vec::with_capacity(n),
            }),
            GeometryKind::MultiPolygon => Geometry::MultiPolygon(MultiPolygon {
                dims,
                polygons: Vec::with_capacity(n),
            }),
            GeometryKind::GeometryCollection => Geometry::GeometryCollection(GeometryCollection {
                dims,
                geometries: Vec::with_capacity(n),
            }),
        };
        self.stack.push(g);
    }

    fn coords(&mut self, ring: Option<usize>, seq: CoordSeq<'_>) {
        match (self.stack.last_mut(), ring) {
            (Some(Geometry::Point(p)), None) => p.coord = seq.get(0).unwrap_or(Coord::EMPTY),
            (Some(Geometry::LineString(l)), None) => l.coords = read_coords(seq),
            (Some(Geometry::Polygon(p)), Some(_)) => p.rings.push(read_coords(seq)),
            _ => debug_assert!(false, "walker event out of order"),
        }
    }

    fn end_geometry(&mut self, _h: &Header) {
        let Some(g) = self.stack.pop() else {
            debug_assert!(false, "unbalanced end_geometry");
            return;
        };
        match (self.stack.last_mut(), g) {
            (None, g) => self.done = Some(g),
            (Some(Geometry::MultiPoint(m)), Geometry::Point(p)) => m.points.push(p),
            (Some(Geometry::MultiLineString(m)), Geometry::LineString(l)) => m.lines.push(l),
            (Some(Geometry::MultiPolygon(m)), Geometry::Polygon(p)) => m.polygons.push(p),
            (Some(Geometry::GeometryCollection(c)), g) => c.geometries.push(g),
            _ => debug_assert!(false, "walker nested a member of the wrong kind"),
        }
    }
}

/// Decode exactly one ISO WKB value (either byte order, mixed within collections).
pub fn decode(bytes: &[u8]) -> Result<Geometry, WkbError> {
    let mut b = Builder::default();
    visit(bytes, &mut b)?;
    // A successful walk always ends its outermost geometry.
    Ok(b.done
        .unwrap_or(Geometry::GeometryCollection(GeometryCollection {
            dims: Dimensions::Xy,
            geometries: Vec::new(),
        })))
}

// ---------------------------------------------------------------------------------------
// encode

struct Writer {
    out: Vec<u8>,
    order: ByteOrder,
}

impl Writer {
    fn header(&mut self, kind: GeometryKind, dims: Dimensions) {
        self.out.push(self.order as u8);
        self.u32(GeometryType::new(kind, dims).iso_code());
    }
    fn u32(&mut self, v: u32) {
        match self.order {
            ByteOrder::LittleEndian => self.out.extend_from_slice(&v.to_le_bytes()),
            ByteOrder::BigEndian => self.out.extend_from_slice(&v.to_be_bytes()),
        }
    }
    /// Counts come from `Vec` lengths; WKB cannot express more than `u32::MAX` (such a
    /// geometry would need > 64 GiB of coordinates), so saturate rather than panic.
    fn count(&mut self, n: usize) {
        self.u32(u32::try_from(n).unwrap_or(u32::MAX));
    }
    fn coord(&mut self, c: &Coord, dims: Dimensions) {
        let mut o = [0.0; 4];
        let n = c.ordinates(dims, &mut o);
        for v in &o[..n] {
            match self.order {
                ByteOrder::LittleEndian => self.out.extend_from_slice(&v.to_le_bytes()),
                ByteOrder::BigEndian => self.out.extend_from_slice(&v.to_be_bytes()),
            }
        }
    }
    fn coords(&mut self, cs: &[Coord], dims: Dimensions) {
        self.count(cs.len());
        for c in cs {
            self.coord(c, dims);
        }
    }
    fn point(&mut self, p: &Point) {
        self.header(GeometryKind::Point, p.dims);
        self.coord(&p.coord, p.dims);
    }
    fn line(&mut self, l: &LineString) {
        self.header(GeometryKind::LineString, l.dims);
        self.coords(&l.coords, l.dims);
    }
    fn polygon(&mut self, p: &Polygon) {
        self.header(GeometryKind::Polygon, p.dims);
        self.count(p.rings.len());
        for r in &p.rings {
            self.coords(r, p.dims);
        }
    }
    fn geometry(&mut self, g: &Geometry) {
        match g {
            Geometry::Point(p) => self.point(p),
            Geometry::LineString(l) => self.line(l),
            Geometry::Polygon(p) => self.polygon(p),
            Geometry::MultiPoint(m) => {
                self.header(GeometryKind::MultiPoint, m.dims);
                self.count(m.points.len());
                m.points.iter().for_each(|p| self.point(p));
            }
            Geometry::MultiLineString(m) => {
                self.header(GeometryKind::MultiLineString, m.dims);
                self.count(m.lines.len());
                m.lines.iter().for_each(|l| self.line(l));
            }
            Geometry::MultiPolygon(m) => {
                self.header(GeometryKind::MultiPolygon, m.dims);
                self.count(m.polygons.len());
                m.polygons.iter().for_each(|p| self.polygon(p));
            }
            Geometry::GeometryCollection(c) => {
                self.header(GeometryKind::GeometryCollection, c.dims);
                self.count(c.geometries.len());
                c.geometries.iter().for_each(|g| self.geometry(g));
            }
        }
    }
}

/// Encode as ISO WKB in `order` (producers write [`ByteOrder::LittleEndian`], HEP002 §7.1).
/// Each member is written with its own dimensions; an empty point as all-NaN.
/// `encode(&decode(b)?, LittleEndian) == b` for every little-endian ISO WKB value `b`.
/// Note: a collection built in code deeper than [`MAX_NESTING`](super::MAX_NESTING) encodes,
/// but [`decode`] will reject it.
pub fn encode(g: &Geometry, order: ByteOrder) -> Vec<u8> {
    let mut w = Writer {
        out: Vec::with_capacity(g.encoded_len()),
        order,
    };
    w.geometry(g);
    w.out
}

// ---------------------------------------------------------------------------------------
// WKT

fn tag(f: &mut fmt::Formatter<'_>, kind: GeometryKind, dims: Dimensions) -> fmt::Result {
    let name = match kind {
        GeometryKind::Point => "POINT",
        GeometryKind::LineString => "LINESTRING",
        GeometryKind::Polygon => "POLYGON",
        GeometryKind::MultiPoint => "MULTIPOINT",
        GeometryKind::MultiLineString => "MULTILINESTRING",
        GeometryKind::MultiPolygon => "MULTIPOLYGON",
        GeometryKind::GeometryCollection => "GEOMETRYCOLLECTION",
    };
    f.write_str(name)?;
    f.write_str(match dims {
        Dimensions::Xy => "",
        Dimensions::Xyz => " Z",
        Dimensions::Xym => " M",
        Dimensions::Xyzm => " ZM",
    })
}

fn wkt_coord(f: &mut fmt::Formatter<'_>, c: &Coord, dims: Dimensions) -> fmt::Result {
    let mut o = [0.0; 4];
    let n = c.ordinates(dims, &mut o);
    for (i, v) in o[..n].iter().enumerate() {
        if i > 0 {
            f.write_char(' ')?;
        }
        // Rust's shortest round-trip formatting; integers print without ".0".
        write!(f, "{v}")?;
    }
    Ok(())
}

fn wkt_coords(f: &mut fmt::Formatter<'_>, cs: &[Coord], dims: Dimensions) -> fmt::Result {
    if cs.is_empty() {
        return f.write_str("EMPTY");
    }
    f.write_char('(')?;
    for (i, c) in cs.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        wkt_coord(f, c, dims)?;
    }
    f.write_char(')')
}

fn wkt_point_body(f: &mut fmt::Formatter<'_>, p: &Point) -> fmt::Result {
    if p.coord.is_empty() {
        // Only all-NaN XY is written EMPTY; a NaN Z or M alone is printed as NaN.
        return f.write_str("EMPTY");
    }
    f.write_char('(')?;
    wkt_coord(f, &p.coord, p.dims)?;
    f.write_char(')')
}

fn wkt_polygon_body(f: &mut fmt::Formatter<'_>, p: &Polygon) -> fmt::Result {
    wkt_list(f, &p.rings, |f, r| wkt_coords(f, r, p.dims))
}

fn wkt_list<T>(
    f: &mut fmt::Formatter<'_>,
    items: &[T],
    mut each: impl FnMut(&mut fmt::Formatter<'_>, &T) -> fmt::Result,
) -> fmt::Result {
    if items.is_empty() {
        return f.write_str("EMPTY");
    }
    f.write_char('(')?;
    for (i, it) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        each(f, it)?;
    }
    f.write_char(')')
}

/// WKT: `POINT (1 2)`, `POINT Z (1 2 3)`, `POINT EMPTY`, `MULTIPOINT ((0 0), EMPTY)`,
/// `GEOMETRYCOLLECTION (POINT (1 2), LINESTRING EMPTY)`.
impl fmt::Display for Geometry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        tag(f, self.kind(), self.dims())?;
        f.write_char(' ')?;
        match self {
            Geometry::Point(p) => wkt_point_body(f, p),
            Geometry::LineString(l) => wkt_coords(f, &l.coords, l.dims),
            Geometry::Polygon(p) => wkt_polygon_body(f, p),
            Geometry::MultiPoint(m) => wkt_list(f, &m.points, wkt_point_body),
            Geometry::MultiLineString(m) => {
                wkt_list(f, &m.lines, |f, l| wkt_coords(f, &l.coords, l.dims))
            }
            Geometry::MultiPolygon(m) => wkt_list(f, &m.polygons, wkt_polygon_body),
            Geometry::GeometryCollection(c) => {
                wkt_list(f, &c.geometries, |f, g| fmt::Display::fmt(g, f))
            }
        }
    }
}
