//! Bounded ISO WKB decode/encode and the zero-allocation bounds scan (HEP002 §7.1, §17).
//!
//! - [`scan`] validates a value (exactly one ISO WKB geometry, no trailing bytes) and returns
//!   its type, bounding box and emptiness without allocating: the validator's check and the
//!   source of `BBOX`, covering columns and index items.
//! - [`visit`] / [`WkbVisitor`] and [`for_each_polygon_ring`] walk a value without building
//!   it (ring orientation, custom statistics).
//! - [`decode`] / [`encode`] convert to and from the owned [`Geometry`], which keeps Z, M,
//!   member dimensions and NaN bits, so `encode(&decode(b)?, LittleEndian) == b` for every
//!   little-endian value. [`to_wkt`] renders a value as WKT. `geo_types` conversions are XY.
//!
//! # Strictness (what is rejected, and why not the `wkb` crate)
//!
//! Accepted: the seven types with ISO codes 1–7, +1000 (Z), +2000 (M), +3000 (ZM); either
//! byte order, also differing between nested members; empty geometries; `POINT EMPTY` as
//! NaN coordinates; mixed dimensions inside multi-geometries and collections (ruling R7);
//! rings of any length, closed or not (ruling R4).
//!
//! Rejected, with the byte offset in the message: a byte-order flag other than 0/1; EWKB type
//! codes (SRID flag 0x20000000, Z/M flags 0x80000000/0x40000000); any other code, including
//! the ISO curve, surface and TIN codes 8–17; a multi-geometry member of the wrong kind;
//! truncated input; any count that cannot fit in the bytes left (checked *before* anything
//! is allocated, using each element's minimum encoded size); bytes after the value; and
//! GeometryCollections nested more than [`MAX_NESTING`] deep (ruling R5).
//!
//! We write this walker ourselves instead of using georust's `wkb` crate: the versions we
//! examined accept EWKB SRIDs and Z/M flag bits, leave trailing bytes to the caller,
//! preallocate collection members from the unchecked count, and recurse into nested
//! collections without a depth limit — each a MUST or SHOULD of HEP002 §7.1/§17 that we would
//! have to re-check in a second pass over every value. One small walker that does all checks
//! in the same pass is simpler to prove (unit, property and fuzz tests in this crate).
//!
//! Nesting (ruling R5, our reading): the limit counts GeometryCollections on the path from
//! the outermost geometry, including it; 64 nested collections are accepted, 65 are not.
//! Members of MultiPoint/MultiLineString/MultiPolygon cannot nest further, so recursion
//! depth is at most `MAX_NESTING + 2`.
//!
//! Emptiness (ruling R6, our reading): a coordinate whose X and Y are both NaN is no
//! coordinate (it is how WKB spells an empty point); a geometry is empty when every
//! coordinate in it is such, so `is_empty` agrees with an empty XY box.
//!
//! Memory: besides the output, [`decode`] allocates at most a small constant times the input
//! length (coordinates are 32 bytes in memory, ≥ 16 on the wire; a `Vec` per ring of ≥ 4
//! bytes on the wire).
//!
//! # Example
//!
//! Decode the point of HEP002 §15.1, scan it, write it back, and see an EWKB value refused:
//!
//! ```
//! use marquet::wkb::{self, ByteOrder, Geometry, WkbErrorKind};
//!
//! let bytes: [u8; 21] = [
//!     0x01, // little-endian
//!     0x01, 0x00, 0x00, 0x00, // type 1 = Point
//!     0x2b, 0xf6, 0x97, 0xdd, 0x93, 0x0f, 0x56, 0xc0, // x = -88.2434
//!     0x90, 0xa0, 0xf8, 0x31, 0xe6, 0x0e, 0x44, 0x40, // y = 40.1164
//! ];
//! let g = wkb::decode(&bytes)?;
//! let Geometry::Point(p) = &g else { unreachable!() };
//! assert_eq!((p.coord.x, p.coord.y), (-88.2434, 40.1164));
//! assert_eq!(g.geometry_type().name(), "Point");
//! assert_eq!(wkb::encode(&g, ByteOrder::LittleEndian), bytes);
//! assert_eq!(wkb::to_wkt(&bytes)?, "POINT (-88.2434 40.1164)");
//!
//! // The allocation-free scan gives what BBOX, covering columns and indexes need.
//! let info = wkb::scan(&bytes)?;
//! assert_eq!((info.bbox.xmin, info.bbox.ymax), (-88.2434, 40.1164));
//! assert!(!info.is_empty);
//!
//! // The same point with the EWKB SRID flag (0x20000000) is not ISO WKB (HEP002 §7.1).
//! let mut ewkb = bytes;
//! ewkb[4] = 0x20;
//! let err = wkb::decode(&ewkb).unwrap_err();
//! assert_eq!(err.kind, WkbErrorKind::EwkbSrid(0x2000_0001));
//! assert_eq!(err.offset, 1);
//! # Ok::<(), marquet::wkb::WkbError>(())
//! ```

mod error;
mod finite;
mod geo_types_conv;
mod geometry;
mod reader;

pub use error::{WkbError, WkbErrorKind};
pub use finite::{check_finite, NonFinite};
pub(crate) use finite::scan_finite;
pub(crate) use reader::plain_point_xy;
pub use geometry::{
    decode, encode, Coord, Geometry, GeometryCollection, LineString, MultiLineString, MultiPoint,
    MultiPolygon, Point, Polygon,
};
pub use reader::{
    for_each_polygon_ring, scan, scan_prefix, visit, visit_prefix, CoordSeq, Header, WkbInfo,
    WkbVisitor,
};
pub(crate) use reader::scan_with;

/// Deepest GeometryCollection nesting accepted (ruling R5, HEP002 §17).
pub const MAX_NESTING: usize = 64;

/// The byte-order flag that starts every WKB geometry; its value is the flag byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ByteOrder {
    /// 0x00, XDR.
    BigEndian = 0,
    /// 0x01, NDR: what producers SHOULD write (HEP002 §7.1).
    #[default]
    LittleEndian = 1,
}

/// Decode one ISO WKB value and render it as WKT (`POINT (1 2)`, `POINT Z (1 2 3)`,
/// `POINT EMPTY`, `LINESTRING EMPTY`); numbers use Rust's shortest round-trip form.
pub fn to_wkt(bytes: &[u8]) -> Result<String, WkbError> {
    Ok(decode(bytes)?.to_string())
}

#[cfg(test)]
mod tests;
