//! Unit tests of the WKB codec with exact bytes.

use super::*;
use crate::spec::{BBox, Dimensions, GeometryKind, GeometryType};

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Hand-assembles WKB, one field at a time, in either byte order.
struct W {
    out: Vec<u8>,
    le: bool,
}

impl W {
    fn new(le: bool) -> W {
        W {
            out: Vec::new(),
            le,
        }
    }
    fn order(&mut self, le: bool) -> &mut Self {
        self.le = le;
        self
    }
    fn hdr(&mut self, code: u32) -> &mut Self {
        self.out.push(self.le as u8);
        self.u32(code)
    }
    fn u32(&mut self, v: u32) -> &mut Self {
        self.out.extend_from_slice(&if self.le {
            v.to_le_bytes()
        } else {
            v.to_be_bytes()
        });
        self
    }
    fn f(&mut self, vs: &[f64]) -> &mut Self {
        for v in vs {
            self.out.extend_from_slice(&if self.le {
                v.to_le_bytes()
            } else {
                v.to_be_bytes()
            });
        }
        self
    }
    fn raw(&mut self, b: &[u8]) -> &mut Self {
        self.out.extend_from_slice(b);
        self
    }
    fn bytes(&self) -> Vec<u8> {
        self.out.clone()
    }
}

fn err(bytes: &[u8]) -> String {
    let e = scan(bytes).unwrap_err();
    // Every entry point rejects the same way.
    assert_eq!(decode(bytes).unwrap_err(), e);
    assert_eq!(to_wkt(bytes).unwrap_err(), e);
    e.to_string()
}

fn t(kind: GeometryKind, dims: Dimensions) -> GeometryType {
    GeometryType::new(kind, dims)
}

#[test]
fn hep002_15_1_point_little_endian() {
    let bytes = hex("01 01000000 2bf697dd930f56c0 90a0f831e60e4440");
    let g = Geometry::Point(Point::new(Dimensions::Xy, Coord::xy(-88.2434, 40.1164)));
    assert_eq!(encode(&g, ByteOrder::LittleEndian), bytes);
    assert_eq!(
        encode(&decode(&bytes).unwrap(), ByteOrder::default()),
        bytes
    );
    assert_eq!(to_wkt(&bytes).unwrap(), "POINT (-88.2434 40.1164)");
    let info = scan(&bytes).unwrap();
    assert_eq!(info.geometry_type, t(GeometryKind::Point, Dimensions::Xy));
    assert_eq!(info.bbox, BBox::xy(-88.2434, 40.1164, -88.2434, 40.1164));
    assert!(!info.is_empty);
    assert_eq!(info.num_coords, 1);
    assert_eq!(bytes.len(), 21);
}

#[test]
fn hep002_15_1_point_empty() {
    let bytes = hex("01 01000000 000000000000f87f 000000000000f87f");
    let g = Geometry::Point(Point::empty(Dimensions::Xy));
    assert_eq!(encode(&g, ByteOrder::LittleEndian), bytes);
    assert_eq!(to_wkt(&bytes).unwrap(), "POINT EMPTY");
    let info = scan(&bytes).unwrap();
    assert!(info.is_empty);
    assert_eq!(info.bbox, BBox::EMPTY);
    assert_eq!(info.num_coords, 1);
    assert!(decode(&bytes).unwrap().is_empty());
}

#[test]
fn big_endian_and_nan_payloads_round_trip() {
    let be = hex("00 00000001 403E000000000000 4024000000000000");
    let g = decode(&be).unwrap();
    assert_eq!(g.to_string(), "POINT (30 10)");
    assert_eq!(encode(&g, ByteOrder::BigEndian), be);
    assert_eq!(
        encode(&g, ByteOrder::LittleEndian),
        hex("0101000000000000000000 3E40 0000000000002440")
    );
    // A signalling / negative NaN keeps its bits through decode + encode.
    let odd_nan = hex("01 01000000 010000000000f0ff 000000000000f8ff");
    assert_eq!(
        encode(&decode(&odd_nan).unwrap(), ByteOrder::LittleEndian),
        odd_nan
    );
    assert!(scan(&odd_nan).unwrap().is_empty);
}

#[test]
fn all_dimensions_and_wkt() {
    let cases: [(u32, &[f64], &str); 4] = [
        (1, &[1.0, 2.0], "POINT (1 2)"),
        (1001, &[1.0, 2.0, 3.0], "POINT Z (1 2 3)"),
        (2001, &[1.0, 2.0, 3.0], "POINT M (1 2 3)"),
        (3001, &[1.0, 2.0, 3.0, 4.5], "POINT ZM (1 2 3 4.5)"),
    ];
    for (code, ords, wkt) in cases {
        for le in [true, false] {
            let b = W::new(le).hdr(code).f(ords).bytes();
            assert_eq!(to_wkt(&b).unwrap(), wkt);
            let order = if le {
                ByteOrder::LittleEndian
            } else {
                ByteOrder::BigEndian
            };
            assert_eq!(encode(&decode(&b).unwrap(), order), b);
        }
    }
    let l = W::new(true).hdr(2).u32(0).bytes();
    assert_eq!(to_wkt(&l).unwrap(), "LINESTRING EMPTY");
    let l = W::new(true)
        .hdr(1002)
        .u32(2)
        .f(&[0.1, -0.5, 1e-7, 2.0, 3.0, 4.0])
        .bytes();
    assert_eq!(
        to_wkt(&l).unwrap(),
        "LINESTRING Z (0.1 -0.5 0.0000001, 2 3 4)"
    );
    let mp = W::new(true)
        .hdr(4)
        .u32(2)
        .hdr(1)
        .f(&[0.0, 0.0])
        .hdr(1)
        .f(&[f64::NAN, f64::NAN])
        .bytes();
    assert_eq!(to_wkt(&mp).unwrap(), "MULTIPOINT ((0 0), EMPTY)");
    let poly = W::new(true)
        .hdr(3)
        .u32(2)
        .u32(1)
        .f(&[0.0, 0.0])
        .u32(0)
        .bytes();
    assert_eq!(to_wkt(&poly).unwrap(), "POLYGON ((0 0), EMPTY)");
    let gc = W::new(true)
        .hdr(7)
        .u32(2)
        .hdr(1)
        .f(&[1.0, 2.0])
        .hdr(6)
        .u32(0)
        .bytes();
    assert_eq!(
        to_wkt(&gc).unwrap(),
        "GEOMETRYCOLLECTION (POINT (1 2), MULTIPOLYGON EMPTY)"
    );
}

#[test]
fn mixed_byte_order_in_collection() {
    // LE collection holding a BE point and an LE linestring Z (mixed dims, ruling R7).
    let b = W::new(true)
        .hdr(7)
        .u32(2)
        .order(false)
        .hdr(1)
        .f(&[5.0, -1.0])
        .order(true)
        .hdr(1002)
        .u32(2)
        .f(&[0.0, 0.0, 7.0, 1.0, 2.0, -7.0])
        .bytes();
    let info = scan(&b).unwrap();
    assert_eq!(
        info.geometry_type,
        t(GeometryKind::GeometryCollection, Dimensions::Xy)
    );
    assert_eq!(
        (
            info.bbox.xmin,
            info.bbox.ymin,
            info.bbox.xmax,
            info.bbox.ymax
        ),
        (0.0, -1.0, 5.0, 2.0)
    );
    assert_eq!((info.bbox.zmin, info.bbox.zmax), (-7.0, 7.0));
    assert!(!info.bbox.has_m());
    assert_eq!(info.num_coords, 3);
    assert_eq!(
        to_wkt(&b).unwrap(),
        "GEOMETRYCOLLECTION (POINT (5 -1), LINESTRING Z (0 0 7, 1 2 -7))"
    );
    // Re-encoding in one byte order gives a different but equivalent value.
    let le = encode(&decode(&b).unwrap(), ByteOrder::LittleEndian);
    assert_ne!(le, b);
    assert_eq!(scan(&le).unwrap(), info);
}

#[test]
fn bbox_with_z_m_and_nan_ordinates() {
    let b = W::new(true)
        .hdr(3002)
        .u32(3)
        .f(&[1.0, 2.0, 3.0, 4.0])
        .f(&[f64::NAN, f64::NAN, 100.0, 100.0]) // no XY: not a coordinate (R6), ignored
        .f(&[-1.0, f64::NAN, f64::NAN, -4.0])
        .bytes();
    let i = scan(&b).unwrap();
    assert_eq!(
        (i.bbox.xmin, i.bbox.xmax, i.bbox.ymin, i.bbox.ymax),
        (-1.0, 1.0, 2.0, 2.0)
    );
    assert_eq!(
        (i.bbox.zmin, i.bbox.zmax, i.bbox.mmin, i.bbox.mmax),
        (3.0, 3.0, -4.0, 4.0)
    );
    assert_eq!(i.num_coords, 3);
    assert!(!i.is_empty);
}

#[test]
fn emptiness_ruling_r6() {
    let gc_point_empty = W::new(true)
        .hdr(7)
        .u32(1)
        .hdr(1)
        .f(&[f64::NAN, f64::NAN])
        .bytes();
    let i = scan(&gc_point_empty).unwrap();
    assert!(i.is_empty);
    assert_eq!(i.bbox, BBox::EMPTY);
    assert_eq!(
        to_wkt(&gc_point_empty).unwrap(),
        "GEOMETRYCOLLECTION (POINT EMPTY)"
    );
    assert!(decode(&gc_point_empty).unwrap().is_empty());
    for b in [
        W::new(true).hdr(2).u32(0).bytes(),
        W::new(true).hdr(3).u32(0).bytes(),
        W::new(true).hdr(3).u32(1).u32(0).bytes(),
        W::new(true).hdr(6).u32(1).hdr(3).u32(0).bytes(),
        W::new(true).hdr(7).u32(0).bytes(),
        W::new(true).hdr(3001).f(&[f64::NAN; 4]).bytes(),
    ] {
        assert!(scan(&b).unwrap().is_empty, "{}", to_wkt(&b).unwrap());
        assert!(decode(&b).unwrap().is_empty());
    }
    let nonempty = W::new(true)
        .hdr(7)
        .u32(2)
        .hdr(7)
        .u32(0)
        .hdr(2)
        .u32(1)
        .f(&[1.0, 1.0])
        .bytes();
    assert!(!scan(&nonempty).unwrap().is_empty);
    assert!(!decode(&nonempty).unwrap().is_empty());
}

#[test]
fn rejects_ewkb() {
    let srid = hex("0101000020E6100000000000000000F03F0000000000000040");
    assert_eq!(
        err(&srid),
        "ewkb srid flag in type 0x20000001 at offset 1 (iso wkb required)"
    );
    let z = hex("01010000800000000000003E4000000000000024400000000000000040");
    assert_eq!(
        err(&z),
        "ewkb z/m flag in type 0x80000001 at offset 1 (iso wkb required)"
    );
    let m = W::new(false).hdr(0x4000_0002).u32(0).bytes();
    assert_eq!(
        err(&m),
        "ewkb z/m flag in type 0x40000002 at offset 1 (iso wkb required)"
    );
    // Nested EWKB member: offset of the member's type code.
    let nested = W::new(true)
        .hdr(7)
        .u32(1)
        .hdr(0x2000_0001)
        .u32(4326)
        .f(&[1.0, 2.0])
        .bytes();
    assert_eq!(
        err(&nested),
        "ewkb srid flag in type 0x20000001 at offset 10 (iso wkb required)"
    );
}

#[test]
fn rejects_unknown_codes() {
    assert_eq!(
        err(&W::new(true).hdr(17).u32(0).bytes()),
        "unknown geometry type code 17 at offset 1 (triangle: not one of the seven simple feature types)"
    );
    assert_eq!(
        err(&W::new(true).hdr(1008).u32(0).bytes()),
        "unknown geometry type code 1008 at offset 1 (circularstring: not one of the seven simple feature types)"
    );
    for code in [0u32, 18, 1000, 4001, 257, 0x0100_0000] {
        assert_eq!(
            err(&W::new(true).hdr(code).u32(0).bytes()),
            format!("unknown geometry type code {code} at offset 1")
        );
    }
    assert_eq!(
        err(&hex("0201000000")),
        "invalid byte order 0x02 at offset 0 (expected 0x00 or 0x01)"
    );
    let bad_member = W::new(true)
        .hdr(4)
        .u32(1)
        .hdr(2)
        .u32(0)
        .raw(&[0; 12])
        .bytes();
    assert_eq!(
        err(&bad_member),
        "multipoint member at offset 9 has type code 2, expected point"
    );
    let bad_member = W::new(true).hdr(6).u32(1).hdr(7).u32(0).bytes();
    assert_eq!(
        err(&bad_member),
        "multipolygon member at offset 9 has type code 7, expected polygon"
    );
}

#[test]
fn counts_checked_before_allocation() {
    let b = W::new(true).hdr(3).u32(u32::MAX).raw(&[0; 12]).bytes();
    assert_eq!(
        err(&b),
        "ring count 4294967295 exceeds the 12 bytes left at offset 9"
    );
    let b = hex("0102000000FFFFFFFF");
    assert_eq!(
        err(&b),
        "point count 4294967295 exceeds the 0 bytes left at offset 9"
    );
    // 10 points need 160 bytes.
    let b = hex("01020000000A000000000000000000F03F0000000000000040");
    assert_eq!(
        err(&b),
        "point count 10 exceeds the 16 bytes left at offset 9"
    );
    // A multipoint member needs >= 21 bytes: 2 members in 41 bytes is too many.
    let b = W::new(true).hdr(4).u32(2).raw(&[0; 41]).bytes();
    assert_eq!(
        err(&b),
        "member count 2 exceeds the 41 bytes left at offset 9"
    );
    let b = W::new(false).hdr(7).u32(1_000_000).raw(&[0; 100]).bytes();
    assert_eq!(
        err(&b),
        "member count 1000000 exceeds the 100 bytes left at offset 9"
    );
    // Counts of nested members are checked against what is left at their own offset.
    let b = W::new(true).hdr(5).u32(1).hdr(2).u32(5).bytes();
    assert_eq!(
        err(&b),
        "point count 5 exceeds the 0 bytes left at offset 18"
    );
    let b = W::new(true).hdr(3).u32(2).u32(0).u32(1).f(&[1.0]).bytes();
    assert_eq!(
        err(&b),
        "point count 1 exceeds the 8 bytes left at offset 17"
    );
}

#[test]
fn truncation_messages() {
    assert_eq!(
        err(&[]),
        "unexpected end of input at offset 0: byte order needs 1 bytes, 0 left"
    );
    assert_eq!(
        err(&hex("01010000")),
        "unexpected end of input at offset 1: geometry type needs 4 bytes, 3 left"
    );
    assert_eq!(
        err(&hex("01010000000000000000003E4000000000000024")),
        "unexpected end of input at offset 5: coordinates needs 16 bytes, 15 left"
    );
    assert_eq!(
        err(&hex("0103000000")),
        "unexpected end of input at offset 5: ring count needs 4 bytes, 0 left"
    );
}

#[test]
fn rejects_trailing_bytes() {
    let mut b = hex("01 01000000 2bf697dd930f56c0 90a0f831e60e4440");
    b.extend_from_slice(&[0, 0, 0]);
    assert_eq!(err(&b), "trailing bytes: 3 after offset 21");
    let (info, len) = scan_prefix(&b).unwrap();
    assert_eq!(len, 21);
    assert_eq!(info.geometry_type.kind, GeometryKind::Point);
}

fn nested_collections(levels: usize) -> Vec<u8> {
    let mut w = W::new(true);
    for i in 0..levels {
        w.hdr(7).u32(if i + 1 == levels { 0 } else { 1 });
    }
    w.bytes()
}

#[test]
fn nesting_limit_ruling_r5() {
    let ok = nested_collections(MAX_NESTING);
    let info = scan(&ok).unwrap();
    assert!(info.is_empty);
    let wkt = to_wkt(&ok).unwrap();
    assert_eq!(wkt.matches("GEOMETRYCOLLECTION").count(), 64);
    assert_eq!(encode(&decode(&ok).unwrap(), ByteOrder::LittleEndian), ok);
    // Multi-geometry members inside the deepest collection are fine.
    let mut w = W::new(true);
    for _ in 0..MAX_NESTING {
        w.hdr(7).u32(1);
    }
    let ok2 = w.hdr(6).u32(1).hdr(3).u32(1).u32(1).f(&[1.0, 2.0]).bytes();
    assert!(scan(&ok2).is_ok());
    let deep = nested_collections(MAX_NESTING + 1);
    assert_eq!(err(&deep), "nesting limit 64 exceeded at offset 576");
    // Very deep input fails fast instead of overflowing the stack.
    let very_deep = nested_collections(200_000);
    assert!(err(&very_deep).contains("nesting limit"));
    assert!(for_each_polygon_ring(&very_deep, |_, _, _| {}).is_err());
}

#[test]
fn every_truncation_and_byte_flip_is_an_error_or_ok_never_a_panic() {
    let b = W::new(true)
        .hdr(7)
        .u32(3)
        .hdr(1003)
        .u32(2)
        .u32(4)
        .f(&[0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0])
        .u32(0)
        .order(false)
        .hdr(5)
        .u32(1)
        .hdr(2)
        .u32(1)
        .f(&[3.0, 4.0])
        .order(true)
        .hdr(4)
        .u32(1)
        .hdr(1)
        .f(&[9.0, 9.0])
        .bytes();
    assert!(scan(&b).is_ok());
    for n in 0..b.len() {
        assert!(scan(&b[..n]).is_err(), "prefix {n}");
        assert!(decode(&b[..n]).is_err());
    }
    for i in 0..b.len() {
        for v in [0u8, 1, 2, 0x20, 0x80, 0xff] {
            let mut m = b.clone();
            m[i] = v;
            let s = scan(&m);
            let d = decode(&m);
            assert_eq!(s.is_ok(), d.is_ok());
            if let Ok(g) = d {
                assert_eq!(encode(&g, ByteOrder::LittleEndian).len(), m.len());
            }
        }
    }
}

#[test]
fn polygon_rings_visitor() {
    let b = W::new(true)
        .hdr(7)
        .u32(2)
        .hdr(3)
        .u32(1)
        .u32(4)
        .f(&[0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0])
        .order(false)
        .hdr(6)
        .u32(2)
        .hdr(1003)
        .u32(2)
        .u32(1)
        .f(&[5.0, 6.0, 7.0])
        .u32(2)
        .f(&[8.0, 9.0, 10.0, 11.0, 12.0, 13.0])
        .hdr(3)
        .u32(0)
        .bytes();
    let mut seen = Vec::new();
    for_each_polygon_ring(&b, |poly, ring, seq| {
        seen.push((poly, ring, seq.len(), seq.xy().collect::<Vec<_>>()));
    })
    .unwrap();
    assert_eq!(
        seen,
        vec![
            (
                0,
                0,
                4,
                vec![(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 0.0)]
            ),
            (1, 0, 1, vec![(5.0, 6.0)]),
            (1, 1, 2, vec![(8.0, 9.0), (11.0, 12.0)]),
        ]
    );
    // A generic visitor sees every header, with levels and counts.
    struct Headers(Vec<(u32, usize, usize, ByteOrder)>);
    impl WkbVisitor for Headers {
        fn begin_geometry(&mut self, h: &Header) {
            self.0
                .push((h.geometry_type.iso_code(), h.level, h.count, h.byte_order));
        }
    }
    let mut h = Headers(Vec::new());
    visit(&b, &mut h).unwrap();
    use ByteOrder::*;
    assert_eq!(
        h.0,
        vec![
            (7, 0, 2, LittleEndian),
            (3, 1, 1, LittleEndian),
            (6, 1, 2, BigEndian),
            (1003, 2, 2, BigEndian),
            (3, 2, 0, BigEndian)
        ]
    );
    let g = decode(&b).unwrap();
    let Geometry::GeometryCollection(gc) = &g else {
        panic!()
    };
    let Geometry::MultiPolygon(mp) = &gc.geometries[1] else {
        panic!()
    };
    assert_eq!(mp.polygons[0].rings[1][1].z, 13.0);
}

#[test]
fn geo_types_round_trip() {
    use geo_types::{line_string, point, polygon};
    let gt: geo_types::Geometry<f64> =
        geo_types::Geometry::GeometryCollection(geo_types::GeometryCollection(vec![
            point!(x: 1.0, y: 2.0).into(),
            line_string![(x: 0.0, y: 0.0), (x: 1.5, y: -2.0)].into(),
            polygon![(x: 0.0, y: 0.0), (x: 4.0, y: 0.0), (x: 4.0, y: 4.0), (x: 0.0, y: 0.0)].into(),
            geo_types::MultiPoint(vec![point!(x: 3.0, y: 3.0)]).into(),
        ]));
    let g = Geometry::from(&gt);
    let bytes = encode(&g, ByteOrder::LittleEndian);
    assert_eq!(
        to_wkt(&bytes).unwrap(),
        "GEOMETRYCOLLECTION (POINT (1 2), LINESTRING (0 0, 1.5 -2), POLYGON ((0 0, 4 0, 4 4, 0 0)), MULTIPOINT ((3 3)))"
    );
    let back: geo_types::Geometry<f64> = decode(&bytes).unwrap().into();
    assert_eq!(back, gt);
    // Z and M are dropped on the way to geo_types.
    let z = W::new(true).hdr(1001).f(&[1.0, 2.0, 3.0]).bytes();
    let p: geo_types::Geometry<f64> = decode(&z).unwrap().into();
    assert_eq!(p, geo_types::Geometry::Point(point!(x: 1.0, y: 2.0)));
    // Rect becomes a polygon; an empty polygon stays empty.
    let r = geo_types::Geometry::Rect(geo_types::Rect::new((0.0, 0.0), (1.0, 1.0)));
    assert_eq!(Geometry::from(&r).kind(), GeometryKind::Polygon);
    let empty = geo_types::Geometry::Polygon(geo_types::Polygon::new(
        geo_types::LineString(vec![]),
        vec![],
    ));
    assert_eq!(Geometry::from(&empty).to_string(), "POLYGON EMPTY");
}

#[test]
fn marquet_error_conversion() {
    let e = scan(&hex("0201000000")).unwrap_err();
    let m = e.clone().into_marquet("/t/geometry", Some(1234));
    assert_eq!(
        m.to_string(),
        "/t/geometry row 1234: invalid wkb: invalid byte order 0x02 at offset 0 (expected 0x00 or 0x01)"
    );
    let m: crate::error::MarquetError = e.into();
    assert!(matches!(
        m,
        crate::error::MarquetError::InvalidWkb { row: None, .. }
    ));
}

#[test]
fn encoded_len_matches() {
    let b = W::new(true)
        .hdr(7)
        .u32(2)
        .hdr(2003)
        .u32(1)
        .u32(2)
        .f(&[0.0; 6])
        .hdr(3004)
        .u32(1)
        .hdr(3001)
        .f(&[1.0; 4])
        .bytes();
    let g = decode(&b).unwrap();
    assert_eq!(g.encoded_len(), b.len());
    assert_eq!(
        g.geometry_type(),
        t(GeometryKind::GeometryCollection, Dimensions::Xy)
    );
    assert_eq!(encode(&g, ByteOrder::LittleEndian), b);
}

/// `CoordSeq::extend_ordinate` gives each ordinate as `CoordSeq::iter` does, in both byte
/// orders and for every dimension, and NaN for an ordinate the coordinates lack.
#[test]
fn extend_ordinate_equals_iter() {
    for le in [true, false] {
        for (code, n) in [(2u32, 2usize), (1002, 3), (2002, 3), (3002, 4)] {
            let vals: Vec<f64> = (0..3 * n).map(|i| i as f64 * 0.75 - 2.0).collect();
            let b = W::new(le).hdr(code).u32(3).f(&vals).bytes();
            struct Cols(Vec<Vec<f64>>, Vec<[f64; 4]>);
            impl WkbVisitor for Cols {
                fn coords(&mut self, _ring: Option<usize>, seq: CoordSeq<'_>) {
                    for k in 0..5 {
                        seq.extend_ordinate(k, &mut self.0[k]);
                    }
                    self.1.extend(seq.iter().map(|c| [c.x, c.y, c.z, c.m]));
                }
            }
            let mut c = Cols(vec![Vec::new(); 5], Vec::new());
            visit(&b, &mut c).unwrap();
            assert_eq!(c.1.len(), 3);
            for (i, want) in c.1.iter().enumerate() {
                assert_eq!(c.0[0][i], want[0], "x, code {code}, le {le}");
                assert_eq!(c.0[1][i], want[1], "y, code {code}, le {le}");
            }
            assert!(c.0[4].iter().all(|v| v.is_nan()) && c.0[4].len() == 3, "5th ordinate, code {code}");
            let third: Vec<f64> = (0..3).map(|i| if n > 2 { vals[i * n + 2] } else { f64::NAN }).collect();
            assert_eq!(c.0[2].iter().map(|v| v.to_bits()).collect::<Vec<_>>(), third.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), "code {code}");
        }
    }
}
