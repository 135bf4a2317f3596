//! Seeded property tests of the WKB codec: random geometries of every type and dimension
//! survive encode (both byte orders) + decode bit for bit, `scan` agrees with a brute-force
//! box over the decoded coordinates, and truncated or mutated bytes never panic.

use marquet::spec::{BBox, Dimensions};
use marquet::wkb::{
    self, ByteOrder, Coord, Geometry, GeometryCollection, LineString, MultiLineString, MultiPoint,
    MultiPolygon, Point, Polygon,
};

/// SplitMix64: a tiny deterministic generator, so the cases never change between builds.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }
    fn f64(&mut self) -> f64 {
        match self.below(12) {
            0 => f64::NAN,
            1 => -0.0,
            2 => f64::from_bits(self.next()), // any bit pattern, NaN payloads and infinities included
            3 => (self.below(2001) as f64) - 1000.0,
            _ => (self.next() as f64 / u64::MAX as f64 - 0.5) * 360.0,
        }
    }
    fn dims(&mut self) -> Dimensions {
        Dimensions::ALL[self.below(4) as usize]
    }
}

fn coord(r: &mut Rng) -> Coord {
    Coord::xyzm(r.f64(), r.f64(), r.f64(), r.f64())
}

fn coords(r: &mut Rng, max: u64) -> Vec<Coord> {
    (0..r.below(max + 1)).map(|_| coord(r)).collect()
}

fn point(r: &mut Rng, dims: Dimensions) -> Point {
    if r.chance(5) {
        Point::empty(dims)
    } else {
        Point::new(dims, coord(r))
    }
}

fn polygon(r: &mut Rng, dims: Dimensions) -> Polygon {
    Polygon {
        dims,
        rings: (0..r.below(4)).map(|_| coords(r, 6)).collect(),
    }
}

/// Members of multi-geometries and collections usually share the parent's dimensions and
/// sometimes not (ruling R7).
fn member_dims(r: &mut Rng, dims: Dimensions) -> Dimensions {
    if r.chance(6) {
        r.dims()
    } else {
        dims
    }
}

fn geometry(r: &mut Rng, depth: usize) -> Geometry {
    let dims = r.dims();
    let kinds = if depth >= 4 { 6 } else { 7 };
    match r.below(kinds) {
        0 => Geometry::Point(point(r, dims)),
        1 => Geometry::LineString(LineString {
            dims,
            coords: coords(r, 8),
        }),
        2 => Geometry::Polygon(polygon(r, dims)),
        3 => Geometry::MultiPoint(MultiPoint {
            dims,
            points: (0..r.below(5))
                .map(|_| {
                    let d = member_dims(r, dims);
                    point(r, d)
                })
                .collect(),
        }),
        4 => Geometry::MultiLineString(MultiLineString {
            dims,
            lines: (0..r.below(4))
                .map(|_| LineString {
                    dims: member_dims(r, dims),
                    coords: coords(r, 5),
                })
                .collect(),
        }),
        5 => Geometry::MultiPolygon(MultiPolygon {
            dims,
            polygons: (0..r.below(3))
                .map(|_| {
                    let d = member_dims(r, dims);
                    polygon(r, d)
                })
                .collect(),
        }),
        _ => Geometry::GeometryCollection(GeometryCollection {
            dims,
            geometries: (0..r.below(4)).map(|_| geometry(r, depth + 1)).collect(),
        }),
    }
}

/// Every stored coordinate of a geometry with its dimensions, for brute-force boxes.
fn all_coords(g: &Geometry, out: &mut Vec<(Coord, Dimensions)>) {
    let mut push = |cs: &[Coord], d: Dimensions| out.extend(cs.iter().map(|c| (*c, d)));
    match g {
        Geometry::Point(p) => push(&[p.coord], p.dims),
        Geometry::LineString(l) => push(&l.coords, l.dims),
        Geometry::Polygon(p) => p.rings.iter().for_each(|r| push(r, p.dims)),
        Geometry::MultiPoint(m) => m.points.iter().for_each(|p| push(&[p.coord], p.dims)),
        Geometry::MultiLineString(m) => m.lines.iter().for_each(|l| push(&l.coords, l.dims)),
        Geometry::MultiPolygon(m) => m
            .polygons
            .iter()
            .for_each(|p| p.rings.iter().for_each(|r| push(r, p.dims))),
        Geometry::GeometryCollection(c) => c.geometries.iter().for_each(|g| all_coords(g, out)),
    }
}

fn brute_force_box(g: &Geometry) -> (BBox, u64) {
    let mut cs = Vec::new();
    all_coords(g, &mut cs);
    let mut b = BBox::EMPTY;
    for (c, d) in &cs {
        if c.x.is_nan() && c.y.is_nan() {
            continue;
        }
        b.add_xy(c.x, c.y);
        if d.has_z() {
            b.add_z(c.z);
        }
        if d.has_m() {
            b.add_m(c.m);
        }
    }
    (b, cs.len() as u64)
}

fn same_box(a: &BBox, b: &BBox) -> bool {
    let f = |b: &BBox| {
        [
            b.xmin, b.ymin, b.zmin, b.mmin, b.xmax, b.ymax, b.zmax, b.mmax,
        ]
        .map(f64::to_bits)
    };
    f(a) == f(b)
}

#[test]
fn random_geometries_round_trip_in_both_byte_orders() {
    let mut r = Rng(0x4d61_7271_7565_7401);
    let mut kinds = [0usize; 7];
    for _ in 0..3000 {
        let g = geometry(&mut r, 0);
        kinds[g.kind() as usize - 1] += 1;
        let le = wkb::encode(&g, ByteOrder::LittleEndian);
        let be = wkb::encode(&g, ByteOrder::BigEndian);
        assert_eq!(le.len(), g.encoded_len());
        assert_eq!(be.len(), le.len());
        let from_le = wkb::decode(&le).unwrap();
        let from_be = wkb::decode(&be).unwrap();
        // Bit equality (NaN payloads included) through the encodings.
        assert_eq!(wkb::encode(&from_le, ByteOrder::LittleEndian), le);
        assert_eq!(wkb::encode(&from_be, ByteOrder::LittleEndian), le);
        assert_eq!(wkb::encode(&from_le, ByteOrder::BigEndian), be);
        // WKT agrees too (it prints absent ordinates not at all).
        assert_eq!(from_le.to_string(), g.to_string());
        let info = wkb::scan(&le).unwrap();
        assert_eq!(wkb::scan(&be).unwrap().num_coords, info.num_coords);
        assert_eq!(info.geometry_type, g.geometry_type());
        assert_eq!(info.is_empty, g.is_empty());
        let (b, n) = brute_force_box(&g);
        assert!(same_box(&info.bbox, &b), "{g}: {:?} vs {:?}", info.bbox, b);
        assert_eq!(info.num_coords, n);
        assert_eq!(info.is_empty, b.xmin > b.xmax && b.ymin > b.ymax);
    }
    assert!(
        kinds.iter().all(|&k| k > 100),
        "every kind generated: {kinds:?}"
    );
}

#[test]
fn truncated_and_mutated_values_never_panic() {
    let mut r = Rng(7);
    let (mut ok, mut bad) = (0u32, 0u32);
    for _ in 0..400 {
        let g = geometry(&mut r, 0);
        let order = if r.chance(2) {
            ByteOrder::LittleEndian
        } else {
            ByteOrder::BigEndian
        };
        let bytes = wkb::encode(&g, order);
        for n in 0..bytes.len() {
            assert!(wkb::scan(&bytes[..n]).is_err());
            assert!(wkb::decode(&bytes[..n]).is_err());
        }
        let mut extended = bytes.clone();
        extended.push(0);
        assert!(wkb::scan(&extended)
            .unwrap_err()
            .to_string()
            .starts_with("trailing bytes: 1 after offset"));
        for _ in 0..20 {
            let mut m = bytes.clone();
            for _ in 0..1 + r.below(3) {
                let i = r.below(m.len() as u64) as usize;
                m[i] = match r.below(4) {
                    0 => r.next() as u8,
                    1 => m[i] ^ (1 << r.below(8)),
                    2 => 0xff,
                    _ => 0,
                };
            }
            let s = wkb::scan(&m);
            let d = wkb::decode(&m);
            assert_eq!(s.is_ok(), d.is_ok());
            match d {
                Ok(g2) => {
                    ok += 1;
                    let o = if m[0] == 1 {
                        ByteOrder::LittleEndian
                    } else {
                        ByteOrder::BigEndian
                    };
                    // Re-encoding a mutated-but-valid value in its outer byte order gives the
                    // same length and scan result (member byte orders may differ).
                    let again = wkb::encode(&g2, o);
                    assert_eq!(again.len(), m.len());
                    assert_eq!(wkb::scan(&again).unwrap().num_coords, s.unwrap().num_coords);
                }
                Err(e) => {
                    bad += 1;
                    assert_eq!(s.unwrap_err(), e);
                }
            }
        }
    }
    assert!(
        ok > 100 && bad > 100,
        "mutations exercise both paths: {ok} ok, {bad} rejected"
    );
}
