//! The strict, bounded WKB walker (HEP002 §7.1, §17) and the zero-allocation scan.
//!
//! One recursive walker validates every value and reports it to a [`WkbVisitor`]; `scan`,
//! `decode`, `to_wkt` and `for_each_polygon_ring` are all visitors of it, so they accept and
//! reject exactly the same inputs. The walker itself never allocates.

use crate::spec::{BBox, Dimensions, GeometryKind, GeometryType};

use super::error::{WkbError, WkbErrorKind};
use super::{ByteOrder, Coord, MAX_NESTING};

/// Smallest encoded member of each container, used to bound counts before anything is
/// allocated: a ring is at least its 4-byte point count, a Point at least 1+4+16 bytes, any
/// other geometry at least 1+4+4 bytes (header and an empty count).
const MIN_RING: u64 = 4;
const MIN_POINT: u64 = 21;
const MIN_GEOMETRY: u64 = 9;

/// The header of one (possibly nested) geometry, as reported to a [`WkbVisitor`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The type code read, as kind and dimensions (only the 28 ISO codes are accepted).
    pub geometry_type: GeometryType,
    /// The byte order this geometry's header declares (nested members may differ).
    pub byte_order: ByteOrder,
    /// Points of a LineString, rings of a Polygon, members of a multi-geometry or collection;
    /// always 1 for a Point (whose coordinate may be all-NaN, i.e. empty).
    pub count: usize,
    /// Byte offset of the header's byte-order flag.
    pub offset: usize,
    /// 0 for the outermost geometry, +1 for each enclosing geometry.
    pub level: usize,
}

/// A validated run of coordinates inside a WKB value, read without copying.
#[derive(Debug, Clone, Copy)]
pub struct CoordSeq<'a> {
    bytes: &'a [u8],
    order: ByteOrder,
    dims: Dimensions,
}

impl<'a> CoordSeq<'a> {
    /// Number of coordinates.
    pub fn len(&self) -> usize {
        self.bytes.len() / (8 * self.dims.size())
    }
    /// True when the run holds no coordinate (e.g. `LINESTRING EMPTY`).
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
    /// The dimensions of the enclosing geometry, i.e. ordinates per coordinate.
    pub fn dims(&self) -> Dimensions {
        self.dims
    }
    /// The byte order the coordinates are stored in.
    pub fn byte_order(&self) -> ByteOrder {
        self.order
    }

    #[inline]
    fn ordinate(&self, i: usize) -> f64 {
        let b = &self.bytes[8 * i..8 * i + 8];
        let a = [b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]];
        match self.order {
            ByteOrder::LittleEndian => f64::from_le_bytes(a),
            ByteOrder::BigEndian => f64::from_be_bytes(a),
        }
    }

    /// The `i`-th coordinate (absent Z/M are NaN); `None` past the end.
    pub fn get(&self, i: usize) -> Option<Coord> {
        if i >= self.len() {
            return None;
        }
        let n = self.dims.size();
        let base = i * n;
        let x = self.ordinate(base);
        let y = self.ordinate(base + 1);
        Some(match self.dims {
            Dimensions::Xy => Coord::xy(x, y),
            Dimensions::Xyz => Coord::xyz(x, y, self.ordinate(base + 2)),
            Dimensions::Xym => Coord::xym(x, y, self.ordinate(base + 2)),
            Dimensions::Xyzm => Coord::xyzm(x, y, self.ordinate(base + 2), self.ordinate(base + 3)),
        })
    }

    /// All coordinates in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Coord> + 'a {
        // One slice per coordinate (no index arithmetic or bounds check per ordinate): every
        // box, check and exact test walks coordinates through here.
        let (dims, order) = (self.dims, self.order);
        self.bytes.chunks_exact(8 * dims.size()).map(move |c| {
            let o = |k: usize| ordinate_at(c, k, order);
            match dims {
                Dimensions::Xy => Coord::xy(o(0), o(1)),
                Dimensions::Xyz => Coord::xyz(o(0), o(1), o(2)),
                Dimensions::Xym => Coord::xym(o(0), o(1), o(2)),
                Dimensions::Xyzm => Coord::xyzm(o(0), o(1), o(2), o(3)),
            }
        })
    }

    /// Just X and Y, e.g. for ring orientation.
    pub fn xy(&self) -> impl ExactSizeIterator<Item = (f64, f64)> + 'a {
        let order = self.order;
        self.bytes.chunks_exact(8 * self.dims.size()).map(move |c| (ordinate_at(c, 0, order), ordinate_at(c, 1, order)))
    }
    /// Append ordinate `k` (0 = x, 1 = y, …, below [`Dimensions::size`]) of every
    /// coordinate to `out`: one pass without a capacity check per coordinate, with the
    /// byte order decided once (the GeoArrow native read of 200,000 polygons pushed each
    /// ordinate; issue #33 item 6).
    /// An ordinate the coordinates do not have reads as NaN.
    pub fn extend_ordinate(&self, k: usize, out: &mut Vec<f64>) {
        let cs = self.bytes.chunks_exact(8 * self.dims.size());
        if k >= self.dims.size() {
            return out.extend(cs.map(|_| f64::NAN));
        }
        match self.order {
            ByteOrder::LittleEndian => out.extend(cs.map(|c| ordinate_at(c, k, ByteOrder::LittleEndian))),
            ByteOrder::BigEndian => out.extend(cs.map(|c| ordinate_at(c, k, ByteOrder::BigEndian))),
        }
    }
    /// Append every ordinate of every coordinate to `out`, in order (x, y[, z][, m] of the
    /// first coordinate, then of the next): GeoArrow's interleaved coordinates, which is how
    /// WKB lays them out, so a little-endian run is read as one array of doubles.
    pub fn extend_interleaved(&self, out: &mut Vec<f64>) {
        let ws = self.bytes.chunks_exact(8);
        match self.order {
            ByteOrder::LittleEndian => out.extend(ws.map(|w| f64::from_le_bytes(w.try_into().unwrap_or([0; 8])))),
            ByteOrder::BigEndian => out.extend(ws.map(|w| f64::from_be_bytes(w.try_into().unwrap_or([0; 8])))),
        }
    }
}

/// Ordinate `k` of the coordinate `c` (a slice of whole coordinates).
#[inline(always)]
fn ordinate_at(c: &[u8], k: usize, order: ByteOrder) -> f64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&c[8 * k..8 * k + 8]);
    match order {
        ByteOrder::LittleEndian => f64::from_le_bytes(a),
        ByteOrder::BigEndian => f64::from_be_bytes(a),
    }
}

/// Receives the structure of a WKB value from [`visit`], outermost first, in byte order.
///
/// Callbacks fire while the walk validates; if [`visit`] returns an error, the callbacks made
/// before it described a prefix of an invalid value. Every `count` in a [`Header`] has already
/// been checked against the bytes that remain, so it is safe to preallocate from it.
pub trait WkbVisitor {
    /// A geometry begins (after its count, if any, was read and checked).
    fn begin_geometry(&mut self, _header: &Header) {}
    /// The coordinates of the current Point (one coordinate), LineString, or of ring
    /// `ring` (0 = exterior) of the current Polygon.
    fn coords(&mut self, _ring: Option<usize>, _seq: CoordSeq<'_>) {}
    /// The geometry begun by the matching `begin_geometry` ends.
    fn end_geometry(&mut self, _header: &Header) {}
}

/// A byte cursor that never reads past its slice.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn left(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], WkbError> {
        let left = self.left();
        if n > left {
            return Err(WkbError::new(
                self.pos,
                WkbErrorKind::UnexpectedEnd {
                    what,
                    needed: n,
                    left,
                },
            ));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn u32(&mut self, order: ByteOrder, what: &'static str) -> Result<u32, WkbError> {
        let b = self.take(4, what)?;
        let a = [b[0], b[1], b[2], b[3]];
        Ok(match order {
            ByteOrder::LittleEndian => u32::from_le_bytes(a),
            ByteOrder::BigEndian => u32::from_be_bytes(a),
        })
    }

    /// Read a count and check that `count` elements of at least `min_size` bytes each fit in
    /// what remains — before the caller allocates anything for them (§17).
    fn count(
        &mut self,
        order: ByteOrder,
        what: &'static str,
        field: &'static str,
        min_size: u64,
    ) -> Result<usize, WkbError> {
        let count = self.u32(order, field)?;
        let left = self.left();
        if u64::from(count) * min_size > left as u64 {
            return Err(WkbError::new(
                self.pos,
                WkbErrorKind::CountTooLarge { what, count, left },
            ));
        }
        // count * min_size <= left <= usize::MAX and min_size >= 1, so this cannot fail.
        usize::try_from(count)
            .map_err(|_| WkbError::new(self.pos, WkbErrorKind::CountTooLarge { what, count, left }))
    }

    fn coords(
        &mut self,
        order: ByteOrder,
        dims: Dimensions,
        n: usize,
    ) -> Result<CoordSeq<'a>, WkbError> {
        let len = n * 8 * dims.size(); // n was bounded by `count` against the input length
        let bytes = self.take(len, "coordinates")?;
        Ok(CoordSeq { bytes, order, dims })
    }
}

/// Parse a type code strictly: ISO codes of the seven types only.
fn parse_type(code: u32, offset: usize) -> Result<GeometryType, WkbError> {
    if code & 0x2000_0000 != 0 {
        return Err(WkbError::new(offset, WkbErrorKind::EwkbSrid(code)));
    }
    if code & 0xC000_0000 != 0 {
        return Err(WkbError::new(offset, WkbErrorKind::EwkbFlags(code)));
    }
    GeometryType::from_iso_code(code).ok_or(WkbError::new(offset, WkbErrorKind::UnknownType(code)))
}

fn kind_label(kind: GeometryKind) -> &'static str {
    match kind {
        GeometryKind::Point => "point",
        GeometryKind::LineString => "linestring",
        GeometryKind::Polygon => "polygon",
        GeometryKind::MultiPoint => "multipoint",
        GeometryKind::MultiLineString => "multilinestring",
        GeometryKind::MultiPolygon => "multipolygon",
        GeometryKind::GeometryCollection => "geometrycollection",
    }
}

/// Walk one geometry starting at `r.pos`. `gc_depth` is the number of enclosing
/// GeometryCollections; `member_of` the multi-geometry kind that encloses this one, if any.
fn walk<V: WkbVisitor + ?Sized>(
    r: &mut Reader<'_>,
    v: &mut V,
    level: usize,
    gc_depth: usize,
    member_of: Option<GeometryKind>,
) -> Result<(), WkbError> {
    let offset = r.pos;
    let order = match r.take(1, "byte order")?[0] {
        0 => ByteOrder::BigEndian,
        1 => ByteOrder::LittleEndian,
        b => return Err(WkbError::new(offset, WkbErrorKind::InvalidByteOrder(b))),
    };
    let code_offset = r.pos;
    let code = r.u32(order, "geometry type")?;
    let ty = parse_type(code, code_offset)?;
    if let Some(parent) = member_of {
        let expected = match parent {
            GeometryKind::MultiPoint => GeometryKind::Point,
            GeometryKind::MultiLineString => GeometryKind::LineString,
            _ => GeometryKind::Polygon,
        };
        if ty.kind != expected {
            return Err(WkbError::new(
                offset,
                WkbErrorKind::WrongMemberType {
                    parent: kind_label(parent),
                    expected: kind_label(expected),
                    code,
                },
            ));
        }
    }
    let dims = ty.dims;
    let coord_size = 8 * dims.size() as u64;
    let mut header = Header {
        geometry_type: ty,
        byte_order: order,
        count: 1,
        offset,
        level,
    };
    match ty.kind {
        GeometryKind::Point => {
            let seq = r.coords(order, dims, 1)?;
            v.begin_geometry(&header);
            v.coords(None, seq);
        }
        GeometryKind::LineString => {
            let n = r.count(order, "point", "point count", coord_size)?;
            let seq = r.coords(order, dims, n)?;
            header.count = n;
            v.begin_geometry(&header);
            v.coords(None, seq);
        }
        GeometryKind::Polygon => {
            header.count = r.count(order, "ring", "ring count", MIN_RING)?;
            v.begin_geometry(&header);
            for ring in 0..header.count {
                let n = r.count(order, "point", "point count", coord_size)?;
                let seq = r.coords(order, dims, n)?;
                v.coords(Some(ring), seq);
            }
        }
        GeometryKind::MultiPoint | GeometryKind::MultiLineString | GeometryKind::MultiPolygon => {
            let min = if ty.kind == GeometryKind::MultiPoint {
                MIN_POINT
            } else {
                MIN_GEOMETRY
            };
            header.count = r.count(order, "member", "member count", min)?;
            v.begin_geometry(&header);
            for _ in 0..header.count {
                walk(r, v, level + 1, gc_depth, Some(ty.kind))?;
            }
        }
        GeometryKind::GeometryCollection => {
            if gc_depth >= MAX_NESTING {
                return Err(WkbError::new(
                    offset,
                    WkbErrorKind::NestingLimit(MAX_NESTING),
                ));
            }
            header.count = r.count(order, "member", "member count", MIN_GEOMETRY)?;
            v.begin_geometry(&header);
            for _ in 0..header.count {
                walk(r, v, level + 1, gc_depth + 1, None)?;
            }
        }
    }
    v.end_geometry(&header);
    Ok(())
}

/// Walk the one WKB value at the start of `bytes`; returns its length in bytes.
/// Bytes after it are not looked at (for concatenated streams).
pub fn visit_prefix<V: WkbVisitor + ?Sized>(
    bytes: &[u8],
    visitor: &mut V,
) -> Result<usize, WkbError> {
    let mut r = Reader { buf: bytes, pos: 0 };
    walk(&mut r, visitor, 0, 0, None)?;
    Ok(r.pos)
}

/// Walk `bytes`, which must hold exactly one ISO WKB value, reporting it to `visitor`.
pub fn visit<V: WkbVisitor + ?Sized>(bytes: &[u8], visitor: &mut V) -> Result<(), WkbError> {
    let len = visit_prefix(bytes, visitor)?;
    if len != bytes.len() {
        return Err(WkbError::new(
            len,
            WkbErrorKind::TrailingBytes(bytes.len() - len),
        ));
    }
    Ok(())
}

/// What [`scan`] learns about a WKB value without building it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WkbInfo {
    /// Type and dimensions of the outermost geometry (what `GEOMETRY_TYPES` lists, ruling R7).
    pub geometry_type: GeometryType,
    /// Box of every coordinate that is not empty, with Z and M ranges where present.
    /// NaN ordinates are ignored; [`BBox::EMPTY`] for an empty geometry.
    pub bbox: BBox,
    /// Ruling R6: no coordinate anywhere has a non-NaN X or Y.
    pub is_empty: bool,
    /// Coordinate tuples stored in the value, including all-NaN ones (a `POINT EMPTY`
    /// counts 1). Use `is_empty`, not `num_coords == 0`, to test emptiness.
    pub num_coords: u64,
}

#[derive(Default)]
struct ScanVisitor {
    top: Option<GeometryType>,
    bbox: Option<BBox>,
    num_coords: u64,
}

impl WkbVisitor for ScanVisitor {
    fn begin_geometry(&mut self, header: &Header) {
        if self.top.is_none() {
            self.top = Some(header.geometry_type);
        }
    }
    fn coords(&mut self, _ring: Option<usize>, seq: CoordSeq<'_>) {
        self.num_coords += seq.len() as u64;
        let bbox = self.bbox.get_or_insert(BBox::EMPTY);
        if seq.dims() == Dimensions::Xy {
            // No Z or M to add (they are NaN): X and Y alone, in locals (a query's exact
            // test boxes every candidate; this loop was a twentieth of a cold window).
            let (mut x0, mut y0, mut x1, mut y1) = (bbox.xmin, bbox.ymin, bbox.xmax, bbox.ymax);
            for (x, y) in seq.xy() {
                // NaN is ignored by min/max, as by `add_xy`; an all-NaN pair is an empty point.
                x0 = x0.min(x);
                x1 = x1.max(x);
                y0 = y0.min(y);
                y1 = y1.max(y);
            }
            (bbox.xmin, bbox.ymin, bbox.xmax, bbox.ymax) = (x0, y0, x1, y1);
            return;
        }
        for c in seq.iter() {
            // A coordinate whose X and Y are both NaN is an empty point (§7.1), not a vertex.
            if c.x.is_nan() && c.y.is_nan() {
                continue;
            }
            bbox.add_xy(c.x, c.y);
            bbox.add_z(c.z);
            bbox.add_m(c.m);
        }
    }
}

fn finish_scan(v: ScanVisitor) -> WkbInfo {
    let bbox = v.bbox.unwrap_or(BBox::EMPTY);
    let is_empty = !(bbox.xmin <= bbox.xmax || bbox.ymin <= bbox.ymax);
    WkbInfo {
        // `top` is set by the first callback, which always precedes a successful return.
        geometry_type: v.top.unwrap_or(GeometryType::new(
            GeometryKind::GeometryCollection,
            Dimensions::Xy,
        )),
        bbox,
        is_empty,
        num_coords: v.num_coords,
    }
}

/// The ordinates of `bytes` when it is the commonest WKB value of all, a 2-D point with
/// finite ordinates: 21 bytes, either byte order, ISO type 1. Anything else (another type
/// or length, a NaN or infinite ordinate) is `None` and goes to the walker, which decides
/// what it accepts and refuses; for the values this answers, the walker's answer is the
/// same (unit test `plain_points_read_as_the_walker_reads_them`). A million-point convert
/// spent a sixth of its CPU time walking 21-byte values (issue #31, session 20).
#[inline]
pub(crate) fn plain_point_xy(bytes: &[u8]) -> Option<(f64, f64)> {
    let b: &[u8; 21] = bytes.try_into().ok()?;
    let f = |r: &[u8], le: bool| {
        let a: [u8; 8] = r.try_into().unwrap_or([0xff; 8]);
        if le {
            f64::from_le_bytes(a)
        } else {
            f64::from_be_bytes(a)
        }
    };
    let le = match (b[0], [b[1], b[2], b[3], b[4]]) {
        (1, [1, 0, 0, 0]) => true,
        (0, [0, 0, 0, 1]) => false,
        _ => return None,
    };
    let (x, y) = (f(&b[5..13], le), f(&b[13..21], le));
    (x.is_finite() && y.is_finite()).then_some((x, y))
}

/// What [`scan`] returns for the point [`plain_point_xy`] read.
pub(super) fn plain_point_info(x: f64, y: f64) -> WkbInfo {
    let mut bbox = BBox::EMPTY;
    bbox.add_xy(x, y);
    WkbInfo { geometry_type: GeometryType::new(GeometryKind::Point, Dimensions::Xy), bbox, is_empty: false, num_coords: 1 }
}

/// Validate `bytes` as exactly one ISO WKB value and return its type, box and emptiness,
/// without allocating (HEP002 §7.1, §12 requirement 7).
pub fn scan(bytes: &[u8]) -> Result<WkbInfo, WkbError> {
    if let Some((x, y)) = plain_point_xy(bytes) {
        return Ok(plain_point_info(x, y));
    }
    scan_walked(bytes)
}

/// [`scan`] by the walker alone.
fn scan_walked(bytes: &[u8]) -> Result<WkbInfo, WkbError> {
    let mut v = ScanVisitor::default();
    visit(bytes, &mut v)?;
    Ok(finish_scan(v))
}

/// [`scan`] and another visitor `other` in one walk of `bytes` (e.g. the writer's ordinate
/// check, `super::finite::scan_finite`): each value is walked once.
pub(crate) fn scan_with<V: WkbVisitor>(bytes: &[u8], other: &mut V) -> Result<WkbInfo, WkbError> {
    struct Pair<'a, V> {
        s: ScanVisitor,
        o: &'a mut V,
    }
    impl<V: WkbVisitor> WkbVisitor for Pair<'_, V> {
        fn begin_geometry(&mut self, h: &Header) {
            self.s.begin_geometry(h);
            self.o.begin_geometry(h);
        }
        fn coords(&mut self, ring: Option<usize>, seq: CoordSeq<'_>) {
            self.s.coords(ring, seq);
            self.o.coords(ring, seq);
        }
        fn end_geometry(&mut self, h: &Header) {
            self.s.end_geometry(h);
            self.o.end_geometry(h);
        }
    }
    let mut p = Pair { s: ScanVisitor::default(), o: other };
    visit(bytes, &mut p)?;
    Ok(finish_scan(p.s))
}

/// Like [`scan`] for the WKB value at the start of `bytes`, ignoring what follows it;
/// also returns the value's length. For concatenated WKB streams.
pub fn scan_prefix(bytes: &[u8]) -> Result<(WkbInfo, usize), WkbError> {
    let mut v = ScanVisitor::default();
    let len = visit_prefix(bytes, &mut v)?;
    Ok((finish_scan(v), len))
}

/// Call `f(polygon_index, ring_index, ring)` for every ring of every Polygon in the value,
/// wherever it is nested (MultiPolygon members, collections). `polygon_index` counts Polygons
/// in the order they appear; ring 0 of a Polygon is its exterior ring. The whole value is
/// validated; `f` may have been called for a prefix when an error is returned.
pub fn for_each_polygon_ring<F>(bytes: &[u8], f: F) -> Result<(), WkbError>
where
    F: FnMut(usize, usize, CoordSeq<'_>),
{
    struct Rings<F> {
        f: F,
        polygons: usize,
    }
    impl<F: FnMut(usize, usize, CoordSeq<'_>)> WkbVisitor for Rings<F> {
        fn coords(&mut self, ring: Option<usize>, seq: CoordSeq<'_>) {
            if let Some(ring) = ring {
                (self.f)(self.polygons, ring, seq);
            }
        }
        fn end_geometry(&mut self, header: &Header) {
            if header.geometry_type.kind == GeometryKind::Polygon {
                self.polygons += 1;
            }
        }
    }
    visit(bytes, &mut Rings { f, polygons: 0 })
}

#[cfg(test)]
mod plain_point_tests {
    use super::*;

    /// A 21-byte value: byte order, type, two ordinates.
    fn raw(le: bool, ty: u32, x: f64, y: f64) -> Vec<u8> {
        let mut v = vec![u8::from(le)];
        if le {
            v.extend(ty.to_le_bytes());
            v.extend(x.to_le_bytes());
            v.extend(y.to_le_bytes());
        } else {
            v.extend(ty.to_be_bytes());
            v.extend(x.to_be_bytes());
            v.extend(y.to_be_bytes());
        }
        v
    }

    #[test]
    fn plain_points_read_as_the_walker_reads_them() {
        let ords = [0.0, -0.0, 1.5, -179.99, 1e308, -1e308, f64::MIN_POSITIVE, 5e-324, f64::NAN, f64::INFINITY, f64::NEG_INFINITY];
        let mut taken = 0;
        for le in [true, false] {
            for ty in [1u32, 2, 1001, 0x2000_0001, 0] {
                for &x in &ords {
                    for &y in &ords {
                        let v = raw(le, ty, x, y);
                        let walked = scan_walked(&v);
                        match plain_point_xy(&v) {
                            Some((px, py)) => {
                                taken += 1;
                                assert!(ty == 1 && x.is_finite() && y.is_finite(), "{v:?}");
                                assert_eq!((px.to_bits(), py.to_bits()), (x.to_bits(), y.to_bits()));
                                // What scan answers is what the walker answers, bit for bit.
                                let (fast, slow) = (scan(&v).unwrap(), walked.unwrap());
                                assert_eq!(fast, slow, "{v:?}");
                                let b = |i: &WkbInfo| [i.bbox.xmin, i.bbox.ymin, i.bbox.xmax, i.bbox.ymax].map(f64::to_bits);
                                assert_eq!(b(&fast), b(&slow));
                                let crate::wkb::Geometry::Point(p) = crate::wkb::decode(&v).unwrap() else { panic!("{v:?}") };
                                assert_eq!((p.dims, p.coord.x.to_bits(), p.coord.y.to_bits()), (Dimensions::Xy, x.to_bits(), y.to_bits()));
                            }
                            // Left to the walker: scan is the walker's answer.
                            None => assert_eq!(format!("{:?}", scan(&v)), format!("{walked:?}"), "{v:?}"),
                        }
                    }
                }
            }
        }
        assert_eq!(taken, 2 * 8 * 8);
        // Other lengths never take the plain path.
        let mut long = raw(true, 1, 1.0, 2.0);
        long.push(0);
        assert_eq!(plain_point_xy(&long), None);
        assert!(scan(&long).is_err());
        assert_eq!(plain_point_xy(&long[..20]), None);
    }

    /// The X/Y loop of `ScanVisitor` boxes as `BBox::add_xy` over every coordinate that
    /// is not an empty point does, NaN ordinates and signed zeros included.
    #[test]
    fn xy_boxes_are_add_xy_boxes() {
        use crate::wkb::{encode, ByteOrder, Geometry, LineString};
        let vals = [0.0, -0.0, 3.5, -2.25, f64::NAN, 1e300, -1e-300];
        let mut seed = 7u64;
        for n in 1..40 {
            let coords: Vec<Coord> = (0..n)
                .map(|_| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    Coord::xy(vals[(seed >> 33) as usize % vals.len()], vals[(seed >> 40) as usize % vals.len()])
                })
                .collect();
            let mut want = BBox::EMPTY;
            for c in &coords {
                if !(c.x.is_nan() && c.y.is_nan()) {
                    want.add_xy(c.x, c.y);
                }
            }
            for order in [ByteOrder::LittleEndian, ByteOrder::BigEndian] {
                let v = encode(&Geometry::LineString(LineString { dims: Dimensions::Xy, coords: coords.clone() }), order);
                let got = scan(&v).unwrap().bbox;
                let bits = |b: &BBox| [b.xmin, b.ymin, b.xmax, b.ymax, b.zmin, b.zmax, b.mmin, b.mmax].map(f64::to_bits);
                assert_eq!(bits(&got), bits(&want), "{coords:?}");
            }
        }
    }
}
