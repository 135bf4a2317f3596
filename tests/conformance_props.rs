//! Property test (issue 18): random tables and random operation sequences, and the
//! validator finds nothing wrong after every step. The producer never writes a file the
//! validator rejects.
//!
//! Each case draws a table — a variable-length WKB column `g` (CRS geographic, projected or
//! unknown; planar, spherical or ellipsoidal edges; ORIENTATION or not; a covering column,
//! f64 or f32, with or without Z), a point column `pt` (XY/XYZ/XYM/XYZM, f32 or f64), a
//! fixed-length WKB point column `fx` and a point column `wrap` whose BBOX is kept in the
//! antimeridian-wrapping form — and applies 6–12 operations: appends and default-layout
//! writes (`write_table`: Hilbert order, indexes and covering declared) (nulls, empties of
//! every kind, mixed types and dimensions, NaN Z/M, big-endian WKB, antimeridian
//! crossings, rings around a pole), in-place updates, truncations, a column replacement,
//! index builds, R-tree policies and re-winding. After each operation the file is closed
//! and validated.
//!
//! `MARQUET_PROPTEST_CASES` (default 16, bounded for CI) sets the number of cases and
//! `MARQUET_PROPTEST_SEED` the first seed; a failure prints the seed and the operations.

use marquet_dev::synth;

use std::path::{Path, PathBuf};

use marquet::h5::{self, Space};
use marquet::h5col::{Array, ColumnSpec, File};
use marquet::marquet::{types, Crs, Edges, GeoBatch, GeometryColumnSpec, GeometryValues, MarquetTable, OrientationOnWrite, RTreeOnAppend, StorageForm, WriteOptions};
use marquet::spec::names;
use crate::synth::SplitMix64;
use marquet::validate::{validate_file, Options};
use marquet::wkb::{self, ByteOrder, Coord, Geometry, GeometryCollection, LineString, MultiLineString, MultiPoint, MultiPolygon, Point, Polygon};
use marquet::{BBox, Dimensions};

const UTM: &str = r#"{"type":"ProjectedCRS","name":"NAD83(CSRS) / UTM zone 20N","base_crs":{"name":"NAD83(CSRS)","datum":{"type":"GeodeticReferenceFrame","name":"NAD83 Canadian Spatial Reference System","ellipsoid":{"name":"GRS 1980","semi_major_axis":6378137,"inverse_flattening":298.257222101}}},"conversion":{"name":"UTM zone 20N","method":{"name":"Transverse Mercator"}},"coordinate_system":{"subtype":"Cartesian","axis":[{"name":"Easting","abbreviation":"E","direction":"east","unit":"metre"},{"name":"Northing","abbreviation":"N","direction":"north","unit":"metre"}]},"id":{"authority":"EPSG","code":2961}}"#;

const T: &str = "/t";

/// How the `g` column was drawn.
#[derive(Debug, Clone)]
struct Config {
    crs: Crs,
    geographic: bool,
    edges: Option<Edges>,
    ccw: bool,
    covering: bool,
    covering_f32: bool,
    covering_z: bool,
    pt_dims: Dimensions,
    pt_f32: bool,
    pt_edges: Option<Edges>,
}

impl Config {
    fn draw(r: &mut SplitMix64) -> Config {
        let (crs, geographic) = match r.int(0, 2) {
            0 => (Crs::Default, true),
            1 => (Crs::ProjJson(UTM.into()), false),
            _ => (Crs::Unknown, false),
        };
        let edges = if geographic {
            match r.int(0, 3) {
                0 => None,
                1 => Some(Edges::Planar),
                2 => Some(Edges::Spherical),
                _ => Some(Edges::Karney),
            }
        } else {
            None
        };
        let covering = r.chance(0.6);
        Config {
            crs,
            geographic,
            edges,
            ccw: r.chance(0.5),
            covering,
            covering_f32: covering && r.chance(0.4),
            covering_z: covering && r.chance(0.3),
            pt_dims: [Dimensions::Xy, Dimensions::Xyz, Dimensions::Xym, Dimensions::Xyzm][r.int(0, 3) as usize],
            pt_f32: r.chance(0.5),
            pt_edges: if geographic && r.chance(0.3) { Some(Edges::Spherical) } else { None },
        }
    }
    fn planar(&self) -> bool {
        self.edges.as_ref().is_none_or(|e| e.is_planar())
    }
    fn g_spec(&self) -> GeometryColumnSpec {
        let mut s = GeometryColumnSpec::default().with_form(StorageForm::VarWkb).with_crs(self.crs.clone()).with_chunk_rows(16);
        s.edges = self.edges.clone();
        s.orientation_ccw = self.ccw;
        if self.covering {
            s = if self.covering_z { s.with_covering_z("g_bbox") } else { s.with_covering("g_bbox") };
            s.covering_f32 = self.covering_f32;
        }
        s
    }
}

/// Random geometries for `g`.
struct Gen<'a> {
    r: &'a mut SplitMix64,
    cfg: &'a Config,
    /// Draw rings against the orientation (the table re-winds them).
    wrong_rings: bool,
}

impl Gen<'_> {
    fn dims(&mut self) -> Dimensions {
        [Dimensions::Xy, Dimensions::Xyz, Dimensions::Xym, Dimensions::Xyzm][self.r.int(0, 3) as usize]
    }
    fn coord(&mut self, d: Dimensions, x: f64, y: f64) -> Coord {
        let z = if self.r.chance(0.1) { f64::NAN } else { self.r.range(-100.0, 100.0) };
        let m = if self.r.chance(0.1) { f64::NAN } else { self.r.range(0.0, 10.0) };
        match d {
            Dimensions::Xy => Coord::xy(x, y),
            Dimensions::Xyz => Coord::xyz(x, y, z),
            Dimensions::Xym => Coord::xym(x, y, m),
            Dimensions::Xyzm => Coord::xyzm(x, y, z, m),
        }
    }
    /// A centre and a radius in the column's coordinates.
    fn place(&mut self) -> (f64, f64, f64) {
        if self.cfg.geographic {
            (self.r.range(-179.0, 179.0), self.r.range(-80.0, 80.0), self.r.range(0.01, 20.0))
        } else {
            (self.r.range(0.0, 1e6), self.r.range(0.0, 1e6), self.r.range(1.0, 1e4))
        }
    }
    /// A star-shaped ring around (cx, cy); counterclockwise when `ccw`.
    fn ring(&mut self, d: Dimensions, cx: f64, cy: f64, rad: f64, ccw: bool) -> Vec<Coord> {
        let n = self.r.int(3, 9) as usize;
        let mut pts: Vec<Coord> = (0..n)
            .map(|i| {
                let a = std::f64::consts::TAU * i as f64 / n as f64;
                let rr = rad * self.r.range(0.5, 1.0);
                let (x, y) = (cx + rr * a.cos(), cy + rr * a.sin());
                let (x, y) = if self.cfg.geographic { (x.clamp(-180.0, 180.0), y.clamp(-90.0, 90.0)) } else { (x, y) };
                self.coord(d, x, y)
            })
            .collect();
        pts.push(pts[0]);
        if !ccw {
            pts.reverse();
        }
        pts
    }
    fn polygon(&mut self, d: Dimensions) -> Polygon {
        let (cx, cy, rad) = self.place();
        let wrong = self.wrong_rings && self.r.chance(0.5);
        let ext_ccw = if self.cfg.ccw { !wrong } else { self.r.chance(0.5) };
        let mut rings = vec![self.ring(d, cx, cy, rad, ext_ccw)];
        if self.r.chance(0.4) {
            let hole_ccw = if self.cfg.ccw { wrong } else { self.r.chance(0.5) };
            rings.push(self.ring(d, cx, cy, rad * 0.3, hole_ccw));
        }
        Polygon { dims: d, rings }
    }
    fn line(&mut self, d: Dimensions) -> LineString {
        let (cx, cy, rad) = self.place();
        let n = self.r.int(1, 6) as usize;
        let mut coords: Vec<Coord> = (0..n)
            .map(|_| {
                let (x, y) = (cx + self.r.range(-rad, rad), cy + self.r.range(-rad, rad));
                let (x, y) = if self.cfg.geographic { (x.clamp(-180.0, 180.0), y.clamp(-90.0, 90.0)) } else { (x, y) };
                self.coord(d, x, y)
            })
            .collect();
        if self.cfg.geographic && self.r.chance(0.15) {
            // Across the antimeridian.
            let y = self.r.range(-60.0, 60.0);
            coords = vec![self.coord(d, 178.5, y), self.coord(d, -179.0, y + 1.0)];
        }
        LineString { dims: d, coords }
    }
    fn empty(&mut self, d: Dimensions) -> Geometry {
        match self.r.int(0, 4) {
            0 => Geometry::Point(Point::empty(d)),
            1 => Geometry::LineString(LineString { dims: d, coords: vec![] }),
            2 => Geometry::Polygon(Polygon { dims: d, rings: vec![] }),
            3 => Geometry::MultiPolygon(MultiPolygon { dims: d, polygons: vec![] }),
            _ => Geometry::GeometryCollection(GeometryCollection { dims: d, geometries: vec![Geometry::Point(Point::empty(d))] }),
        }
    }
    fn geometry(&mut self) -> Option<Vec<u8>> {
        if self.r.chance(0.1) {
            return None;
        }
        let d = self.dims();
        let g = match self.r.int(0, 9) {
            0 => self.empty(d),
            1 => {
                let (x, y, _) = self.place();
                Geometry::Point(Point::new(d, self.coord(d, x, y)))
            }
            2 | 3 => Geometry::LineString(self.line(d)),
            4 | 5 => Geometry::Polygon(self.polygon(d)),
            6 => Geometry::MultiPoint(MultiPoint {
                dims: d,
                points: (0..self.r.int(1, 4)).map(|_| {
                    let (x, y, _) = self.place();
                    Point::new(d, self.coord(d, x, y))
                }).collect(),
            }),
            7 => Geometry::MultiLineString(MultiLineString { dims: d, lines: (0..self.r.int(1, 3)).map(|_| self.line(d)).collect() }),
            8 => Geometry::MultiPolygon(MultiPolygon { dims: d, polygons: (0..self.r.int(1, 3)).map(|_| self.polygon(d)).collect() }),
            _ if self.cfg.geographic && !self.cfg.planar() => {
                // A ring around a pole (eastward: the north pole under ORIENTATION).
                let lat = self.r.range(60.0, 85.0);
                let north = if self.cfg.ccw { true } else { self.r.chance(0.5) };
                let (lat, east) = if north { (lat, true) } else { (-lat, !self.cfg.ccw || self.r.chance(0.5)) };
                let mut ring: Vec<Coord> = (0..8).map(|i| self.coord(d, -180.0 + 45.0 * i as f64, lat)).collect();
                ring.push(ring[0]);
                if !east {
                    ring.reverse();
                }
                Geometry::Polygon(Polygon { dims: d, rings: vec![ring] })
            }
            _ => Geometry::GeometryCollection(GeometryCollection {
                dims: d,
                geometries: vec![Geometry::LineString(self.line(d)), Geometry::Polygon(self.polygon(d))],
            }),
        };
        let order = if self.r.chance(0.2) { ByteOrder::BigEndian } else { ByteOrder::LittleEndian };
        Some(wkb::encode(&g, order))
    }
}

/// Point coordinates for `pt`, `fx` and `wrap`: x, y, z, m and validity; NaN x/y = empty.
#[derive(Default)]
struct Pts(Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>, Vec<bool>);

fn points(r: &mut SplitMix64, n: usize, geographic: bool, wrap: bool) -> Pts {
    let mut out = Pts::default();
    for _ in 0..n {
        let valid = !r.chance(0.1);
        let empty = r.chance(0.1);
        let (x, y) = if empty {
            (f64::NAN, f64::NAN)
        } else if wrap {
            let x = if r.chance(0.5) { r.range(160.0, 180.0) } else { r.range(-180.0, -160.0) };
            (x, r.range(-10.0, 10.0))
        } else if geographic {
            (r.range(-180.0, 180.0), r.range(-90.0, 90.0))
        } else {
            // Values an f32 cannot hold exactly.
            (r.range(0.0, 1e6) + 0.1, r.range(0.0, 1e6) + 0.3)
        };
        out.0.push(x);
        out.1.push(y);
        out.2.push(if empty { f64::NAN } else { r.range(-5.0, 5.0) });
        out.3.push(if empty { f64::NAN } else { r.range(0.0, 1.0) });
        out.4.push(valid);
    }
    out
}

fn point_values(dims: Dimensions, p: Pts) -> GeometryValues {
    GeometryValues::Points {
        dims,
        x: p.0,
        y: p.1,
        z: dims.has_z().then_some(p.2),
        m: dims.has_m().then_some(p.3),
        valid: Some(p.4),
    }
}

fn fixed_values(p: Pts) -> GeometryValues {
    GeometryValues::Wkb(
        (0..p.0.len())
            .map(|i| p.4[i].then(|| wkb::encode(&Geometry::Point(Point::new(Dimensions::Xy, Coord::xy(p.0[i], p.1[i]))), ByteOrder::LittleEndian)))
            .collect(),
    )
}

/// The compact antimeridian-wrapping box of the `wrap` column's points, written as its BBOX
/// (as another producer may write it, HEP002 §6.4): later appends must keep a container.
fn write_wrapping_bbox(t: &MarquetTable) {
    let n = t.nrows().unwrap();
    let p = t.read_points("wrap", 0, n).unwrap();
    let (mut east, mut west) = (f64::INFINITY, f64::NEG_INFINITY);
    let (mut ymin, mut ymax) = (f64::INFINITY, f64::NEG_INFINITY);
    for i in 0..p.x.len() {
        if !p.valid[i] || p.x[i].is_nan() {
            continue;
        }
        if p.x[i] >= 0.0 {
            east = east.min(p.x[i]);
        } else {
            west = west.max(p.x[i]);
        }
        ymin = ymin.min(p.y[i]);
        ymax = ymax.max(p.y[i]);
    }
    if east.is_finite() && west.is_finite() {
        let b = BBox::xy(east, ymin, west, ymax);
        let o = h5::object_open(t.table().id(), "wrap").unwrap();
        h5::attr_write(o.id(), names::BBOX, &types::bbox_dtype(false, false), &Space::Scalar, &types::bbox_bytes(&b, false, false)).unwrap();
    }
}

fn create(path: &Path, cfg: &Config) {
    let f = File::create(path).unwrap();
    let mut t = MarquetTable::create(&f, T).unwrap();
    t.add_column("id", &ColumnSpec::new(marquet::h5::Dtype::U64).with_chunk_rows(16)).unwrap();
    t.add_geometry_column("g", &cfg.g_spec()).unwrap();
    let mut pt = GeometryColumnSpec::default().with_form(StorageForm::Point { dims: cfg.pt_dims, f32: cfg.pt_f32 }).with_crs(cfg.crs.clone()).with_chunk_rows(16);
    pt.edges = cfg.pt_edges.clone();
    t.add_geometry_column("pt", &pt).unwrap();
    let mut fx = GeometryColumnSpec::default().with_form(StorageForm::FixedWkb { size: 21 }).with_crs(cfg.crs.clone()).with_chunk_rows(16);
    fx.edges = cfg.pt_edges.clone();
    t.add_geometry_column("fx", &fx).unwrap();
    t.add_geometry_column("wrap", &GeometryColumnSpec::default().with_form(StorageForm::Point { dims: Dimensions::Xy, f32: false }).with_chunk_rows(16)).unwrap();
}

/// One random operation on the table; returns its description.
fn step(path: &Path, cfg: &Config, r: &mut SplitMix64, next_id: &mut u64) -> String {
    let f = File::open_rw(path).unwrap();
    let mut t = MarquetTable::open(&f, T).unwrap();
    let n = t.nrows().unwrap();
    let rewind = r.chance(0.3);
    if rewind {
        t.set_orientation_on_write(OrientationOnWrite::Rewind);
    }
    t.set_rtree_on_append(if r.chance(0.5) { RTreeOnAppend::Rebuild } else { RTreeOnAppend::LeaveStale });
    let op = r.int(0, 9);
    match op {
        0..=3 => {
            let k = r.int(0, 24) as usize;
            let g: Vec<Option<Vec<u8>>> = {
                let mut gen = Gen { r, cfg, wrong_rings: rewind };
                (0..k).map(|_| gen.geometry()).collect()
            };
            let ids: Vec<u64> = (0..k as u64).map(|i| *next_id + i).collect();
            *next_id += k as u64;
            let pt = point_values(cfg.pt_dims, points(r, k, cfg.geographic, false));
            let fx = fixed_values(points(r, k, cfg.geographic, false));
            let wrap = point_values(Dimensions::Xy, points(r, k, true, true));
            let b = GeoBatch::new()
                .with_array("id", Array::from_u64(&ids))
                .with_geometry("g", GeometryValues::Wkb(g))
                .with_geometry("pt", pt)
                .with_geometry("fx", fx)
                .with_geometry("wrap", wrap);
            // The plain append, or the default write path (Hilbert order, default layout).
            let sorted = r.chance(0.3);
            if sorted {
                t.write(&b, WriteOptions::default()).unwrap();
            } else {
                t.append(&b).unwrap();
            }
            if r.chance(0.5) {
                write_wrapping_bbox(&t);
            }
            format!("{} {k} rows (rewind {rewind})", if sorted { "write_table" } else { "append" })
        }
        4 | 5 if n > 0 => {
            let start = r.int(0, n - 1);
            let k = r.int(1, (n - start).min(8));
            match r.int(0, 2) {
                0 => {
                    let g: Vec<Option<Vec<u8>>> = {
                        let mut gen = Gen { r, cfg, wrong_rings: rewind };
                        (0..k).map(|_| gen.geometry()).collect()
                    };
                    t.update_geometries("g", start, &GeometryValues::Wkb(g)).unwrap();
                    format!("update g rows {start}..+{k} (rewind {rewind})")
                }
                1 => {
                    t.update_geometries("pt", start, &point_values(cfg.pt_dims, points(r, k as usize, cfg.geographic, false))).unwrap();
                    format!("update pt rows {start}..+{k}")
                }
                _ => {
                    t.update_geometries("fx", start, &fixed_values(points(r, k as usize, cfg.geographic, false))).unwrap();
                    format!("update fx rows {start}..+{k}")
                }
            }
        }
        6 => {
            let to = r.int(0, n);
            t.truncate(to).unwrap();
            format!("truncate {n} -> {to}")
        }
        7 => {
            let col = ["g", "pt", "fx", "wrap"][r.int(0, 3) as usize];
            if r.chance(0.5) {
                let b = r.int(1, 8);
                t.build_block_bbox(col, Some(b)).unwrap();
                format!("block index on {col}, B {b}")
            } else {
                let m = r.int(2, 6) as u16;
                t.build_rtree(col, Some(m)).unwrap();
                format!("r-tree on {col}, node size {m}")
            }
        }
        8 => {
            t.replace_geometry_column("g", &cfg.g_spec(), None).unwrap();
            "replace g".into()
        }
        _ => {
            t.tighten("g").unwrap();
            "tighten g".into()
        }
    }
}

fn check(path: &Path, seed: u64, log: &[String]) {
    let r = validate_file(path, &Options::default()).unwrap();
    let errors: Vec<String> = r.errors().map(|f| format!("[{}] {f}", f.check.unwrap_or("?"))).collect();
    assert!(
        errors.is_empty(),
        "seed {seed}: the validator rejects what the producer wrote after:\n  {}\nerrors:\n  {}",
        log.join("\n  "),
        errors.join("\n  ")
    );
}

fn run_case(dir: &Path, seed: u64) {
    let mut r = SplitMix64::new(seed);
    let cfg = Config::draw(&mut r);
    let path: PathBuf = dir.join(format!("case-{seed}.h5"));
    create(&path, &cfg);
    let mut log = vec![format!("{cfg:?}")];
    check(&path, seed, &log);
    let mut next_id = 0;
    for _ in 0..r.int(6, 12) {
        let op = step(&path, &cfg, &mut r, &mut next_id);
        log.push(op);
        check(&path, seed, &log);
    }
    let _ = std::fs::remove_file(&path);
}

#[test]
fn random_tables_and_operations_stay_conformant() {
    let cases: u64 = std::env::var("MARQUET_PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(16);
    let first: u64 = std::env::var("MARQUET_PROPTEST_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x5eed);
    let dir = std::env::temp_dir().join(format!("marquet-props-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let t0 = std::time::Instant::now();
    for seed in first..first + cases {
        run_case(&dir, seed);
    }
    println!("{cases} cases in {:.1} s", t0.elapsed().as_secs_f64());
}
