//! The geometry-type vocabulary of HEP002 §6.3 (Table 2, rebuilt by ruling R1).
//!
//! 28 members: seven type names, each alone and with the suffixes ` Z`, ` M`, ` ZM`;
//! values are the ISO WKB type codes 1–7 plus 1000 (Z), 2000 (M), 3000 (ZM).

use std::fmt;

/// One of the seven OGC Simple Features geometry kinds (HEP002 §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GeometryKind {
    /// A single position, ISO code 1.
    Point = 1,
    /// A sequence of positions joined by edges, ISO code 2.
    LineString = 2,
    /// An exterior ring and zero or more interior rings, ISO code 3.
    Polygon = 3,
    /// A collection of points, ISO code 4.
    MultiPoint = 4,
    /// A collection of line strings, ISO code 5.
    MultiLineString = 5,
    /// A collection of polygons, ISO code 6.
    MultiPolygon = 6,
    /// A collection of any geometries, possibly nested (ruling R5), ISO code 7.
    GeometryCollection = 7,
}

impl GeometryKind {
    /// All seven kinds in ISO code order.
    pub const ALL: [GeometryKind; 7] = [
        GeometryKind::Point,
        GeometryKind::LineString,
        GeometryKind::Polygon,
        GeometryKind::MultiPoint,
        GeometryKind::MultiLineString,
        GeometryKind::MultiPolygon,
        GeometryKind::GeometryCollection,
    ];

    /// The GeoParquet / HEP002 name, e.g. `"MultiPolygon"`.
    pub fn name(self) -> &'static str {
        match self {
            GeometryKind::Point => "Point",
            GeometryKind::LineString => "LineString",
            GeometryKind::Polygon => "Polygon",
            GeometryKind::MultiPoint => "MultiPoint",
            GeometryKind::MultiLineString => "MultiLineString",
            GeometryKind::MultiPolygon => "MultiPolygon",
            GeometryKind::GeometryCollection => "GeometryCollection",
        }
    }

    /// The kind for an ISO base code 1..=7.
    pub fn from_code(code: u32) -> Option<GeometryKind> {
        GeometryKind::ALL.get((code as usize).wrapping_sub(1)).copied()
    }
}

/// Coordinate dimensions of a geometry (HEP002 §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dimensions {
    /// Two ordinates, x and y.
    Xy,
    /// x, y and a Z (height) ordinate: suffix ` Z`, ISO offset 1000.
    Xyz,
    /// x, y and an M (measure) ordinate: suffix ` M`, ISO offset 2000.
    Xym,
    /// x, y, Z and M: suffix ` ZM`, ISO offset 3000.
    Xyzm,
}

impl Dimensions {
    /// All four dimensions in ISO offset order (XY, Z, M, ZM).
    pub const ALL: [Dimensions; 4] = [Dimensions::Xy, Dimensions::Xyz, Dimensions::Xym, Dimensions::Xyzm];

    /// Number of ordinates per coordinate (2, 3, 3 or 4).
    pub fn size(self) -> usize {
        match self {
            Dimensions::Xy => 2,
            Dimensions::Xyz | Dimensions::Xym => 3,
            Dimensions::Xyzm => 4,
        }
    }
    /// True for [`Dimensions::Xyz`] and [`Dimensions::Xyzm`].
    pub fn has_z(self) -> bool {
        matches!(self, Dimensions::Xyz | Dimensions::Xyzm)
    }
    /// True for [`Dimensions::Xym`] and [`Dimensions::Xyzm`].
    pub fn has_m(self) -> bool {
        matches!(self, Dimensions::Xym | Dimensions::Xyzm)
    }
    /// The dimensions with the given Z and M presence.
    pub fn from_zm(has_z: bool, has_m: bool) -> Dimensions {
        match (has_z, has_m) {
            (false, false) => Dimensions::Xy,
            (true, false) => Dimensions::Xyz,
            (false, true) => Dimensions::Xym,
            (true, true) => Dimensions::Xyzm,
        }
    }
    /// The ISO offset added to the base code: 0, 1000, 2000, 3000.
    pub fn iso_offset(self) -> u32 {
        match self {
            Dimensions::Xy => 0,
            Dimensions::Xyz => 1000,
            Dimensions::Xym => 2000,
            Dimensions::Xyzm => 3000,
        }
    }
    /// The name suffix: "", " Z", " M", " ZM" (one space, ruling R1).
    pub fn suffix(self) -> &'static str {
        match self {
            Dimensions::Xy => "",
            Dimensions::Xyz => " Z",
            Dimensions::Xym => " M",
            Dimensions::Xyzm => " ZM",
        }
    }
}

/// A member of the Marquet geometry-type enumeration: kind plus dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GeometryType {
    /// The geometry kind (ISO base code 1–7).
    pub kind: GeometryKind,
    /// The coordinate dimensions (ISO offset 0, 1000, 2000 or 3000).
    pub dims: Dimensions,
}

impl GeometryType {
    /// The type of `kind` with `dims`, e.g. `Polygon Z`.
    pub const fn new(kind: GeometryKind, dims: Dimensions) -> GeometryType {
        GeometryType { kind, dims }
    }

    /// The ISO WKB type code (1–7, 1001–1007, 2001–2007, 3001–3007).
    pub fn iso_code(self) -> u32 {
        self.kind as u32 + self.dims.iso_offset()
    }

    /// Decode an ISO WKB type code; `None` for anything else (EWKB flags included).
    pub fn from_iso_code(code: u32) -> Option<GeometryType> {
        let dims = match code / 1000 {
            0 => Dimensions::Xy,
            1 => Dimensions::Xyz,
            2 => Dimensions::Xym,
            3 => Dimensions::Xyzm,
            _ => return None,
        };
        let kind = GeometryKind::from_code(code % 1000)?;
        Some(GeometryType { kind, dims })
    }

    /// The enumeration member name, e.g. `"Polygon Z"`.
    pub fn name(self) -> String {
        format!("{}{}", self.kind.name(), self.dims.suffix())
    }

    /// Parse a member name exactly as HEP002 spells it.
    pub fn from_name(name: &str) -> Option<GeometryType> {
        all_geometry_types().into_iter().find(|t| t.name() == name)
    }
}

impl fmt::Display for GeometryType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.kind.name(), self.dims.suffix())
    }
}

/// The 28 members in the order we write them into the enumeration datatype:
/// dimension-major (XY, Z, M, ZM), then ISO code order.
pub fn all_geometry_types() -> Vec<GeometryType> {
    let mut v = Vec::with_capacity(28);
    for dims in Dimensions::ALL {
        for kind in GeometryKind::ALL {
            v.push(GeometryType { kind, dims });
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twenty_eight_members_with_iso_codes() {
        let all = all_geometry_types();
        assert_eq!(all.len(), 28);
        let codes: Vec<u32> = all.iter().map(|t| t.iso_code()).collect();
        assert_eq!(&codes[..7], &[1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(&codes[21..], &[3001, 3002, 3003, 3004, 3005, 3006, 3007]);
        for t in &all {
            assert_eq!(GeometryType::from_iso_code(t.iso_code()), Some(*t));
            assert_eq!(GeometryType::from_name(&t.name()), Some(*t));
        }
        assert_eq!(GeometryType::from_iso_code(1006).unwrap().name(), "MultiPolygon Z");
        assert_eq!(GeometryType::from_iso_code(2001).unwrap().name(), "Point M");
        assert_eq!(GeometryType::from_iso_code(3007).unwrap().name(), "GeometryCollection ZM");
    }

    #[test]
    fn rejects_non_iso_codes() {
        for code in [0, 8, 999, 1000, 1008, 4001, 0x2000_0001, 0x8000_0001] {
            assert_eq!(GeometryType::from_iso_code(code), None, "code {code}");
        }
        assert_eq!(GeometryType::from_name("Polygon  Z"), None);
        assert_eq!(GeometryType::from_name("POLYGON"), None);
    }
}
