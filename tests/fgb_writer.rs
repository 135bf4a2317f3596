//! Issue #32: Marquet's own FlatGeobuf writer (src/convert/fgb.rs), which writes no
//! temporary file. Oracles:
//!
//! * the file's own structure, parsed here: the packed R-tree's leaves, in order, give each
//!   feature's exact byte offset and box, and the features follow one another in that order;
//! * the `flatgeobuf` crate's reader: every feature's WKB and attributes equal the table's,
//!   and `select_bbox` over many windows equals a full-scan box filter (index + offsets);
//! * the `flatgeobuf` crate's writer (`FgbWriter`, the writer Marquet used before, which
//!   buffers features in a temporary file), fed the same features: the same bytes for
//!   files of one geometry type;
//! * the in-memory path against the forced second pass (a tiny budget): the same bytes;
//! * GDAL (pyogrio, with the test venv; required under CI): feature count, values, WKB,
//!   CRS, and its spatial filter.
#![cfg(feature = "gis")]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use flatgeobuf::geozero::{ColumnValue, CoordDimensions, PropertyProcessor, ToWkb};
use flatgeobuf::packed_r_tree::NodeItem;
use flatgeobuf::{ColumnType, FallibleStreamingIterator, FeatureProperties, FgbCrs, FgbReader, FgbWriter, FgbWriterOptions, GeometryType};
use marquet::convert::hub::features::{export_features, FeatureSink, Kind, SinkInfo, V};
use marquet::convert::{convert, fgb};
use marquet::h5col::{Array, ColumnSpec, ColumnValues, Dtype, File};
use marquet::marquet::{Crs, GeoBatch, GeometryColumnSpec, GeometryValues, MarquetTable, StorageForm, WriteOptions};
use marquet::wkb::{self, ByteOrder, Coord, Geometry};
use marquet::Dimensions;

// ---- tables --------------------------------------------------------------------------

fn enc(g: Geometry) -> Vec<u8> {
    wkb::encode(&g, ByteOrder::LittleEndian)
}

fn ring(cx: f64, cy: f64, h: f64, dims: Dimensions) -> Vec<Coord> {
    let c = |x: f64, y: f64| Coord { x, y, z: if dims.has_z() { cx + y } else { f64::NAN }, m: if matches!(dims, Dimensions::Xym | Dimensions::Xyzm) { x * 2.0 } else { f64::NAN } };
    vec![c(cx - h, cy - h), c(cx + h, cy - h), c(cx + h, cy + h), c(cx - h, cy + h), c(cx - h, cy - h)]
}

fn polygon(cx: f64, cy: f64, h: f64, hole: bool, dims: Dimensions) -> wkb::Polygon {
    let mut rings = vec![ring(cx, cy, h, dims)];
    if hole {
        let mut r = ring(cx, cy, h / 3.0, dims);
        r.reverse();
        rings.push(r);
    }
    wkb::Polygon { dims, rings }
}

fn line(rng: &mut common::Rng, dims: Dimensions, n: usize) -> wkb::LineString {
    let (x0, y0) = (rng.f64() * 1000.0, rng.f64() * 1000.0);
    let coords = (0..n)
        .map(|i| {
            let (x, y) = (x0 + i as f64 * rng.f64() * 5.0, y0 + i as f64 * (rng.f64() - 0.5) * 5.0);
            Coord { x, y, z: if dims.has_z() { rng.f64() * 100.0 } else { f64::NAN }, m: if matches!(dims, Dimensions::Xym | Dimensions::Xyzm) { i as f64 } else { f64::NAN } }
        })
        .collect();
    wkb::LineString { dims, coords }
}

/// The geometries of the test tables, by name.
fn geometries(name: &str) -> Vec<Option<Vec<u8>>> {
    let mut rng = common::Rng::new(name.bytes().map(u64::from).sum());
    let xy = Dimensions::Xy;
    match name {
        // Points with repeated positions (ties in Hilbert order).
        "points" => (0..3000)
            .map(|i| {
                let p = if i % 10 == 0 { Coord::xy(50.0, 50.0) } else { Coord::xy((rng.f64() * 100.0).round() / 4.0, rng.f64() * 25.0) };
                Some(enc(Geometry::Point(wkb::Point { dims: xy, coord: p })))
            })
            .collect(),
        "polygons" => (0..1500).map(|i| Some(enc(Geometry::Polygon(polygon(rng.f64() * 360.0 - 180.0, rng.f64() * 170.0 - 85.0, 0.5 + rng.f64(), i % 3 == 0, xy))))).collect(),
        "multipolygons" => (0..800)
            .map(|i| {
                let n = 1 + i % 3;
                let (cx, cy) = (rng.f64() * 100.0, rng.f64() * 100.0);
                let polygons = (0..n).map(|k| polygon(cx + k as f64 * 3.0, cy, 1.0, k == 1, xy)).collect();
                Some(enc(Geometry::MultiPolygon(wkb::MultiPolygon { dims: xy, polygons })))
            })
            .collect(),
        "lines_z" => (0..1000).map(|i| Some(enc(Geometry::LineString(line(&mut rng, Dimensions::Xyz, 2 + i % 7))))).collect(),
        "multilines_m" => (0..600)
            .map(|i| {
                let lines = (0..1 + i % 3).map(|k| line(&mut rng, Dimensions::Xym, 2 + k)).collect();
                Some(enc(Geometry::MultiLineString(wkb::MultiLineString { dims: Dimensions::Xym, lines })))
            })
            .collect(),
        "multipoints_zm" => (0..500)
            .map(|i| {
                let points = (0..1 + i % 4).map(|k| wkb::Point { dims: Dimensions::Xyzm, coord: Coord::xyzm(rng.f64() * 10.0, rng.f64() * 10.0, k as f64, -(k as f64)) }).collect();
                Some(enc(Geometry::MultiPoint(wkb::MultiPoint { dims: Dimensions::Xyzm, points })))
            })
            .collect(),
        // Every kind, empty ones (which the crate's writer refuses, for points), collections with nested multi-geometries.
        "mixed" => (0..700)
            .map(|i| {
                let (cx, cy) = (rng.f64() * 500.0, rng.f64() * 500.0);
                let g = match i % 11 {
                    0 | 1 => Geometry::Point(wkb::Point { dims: xy, coord: Coord::xy(cx, cy) }),
                    2 => Geometry::LineString(line(&mut rng, xy, 3)),
                    3 => Geometry::Polygon(polygon(cx, cy, 2.0, i % 2 == 0, xy)),
                    4 => Geometry::MultiPoint(wkb::MultiPoint { dims: xy, points: vec![wkb::Point { dims: xy, coord: Coord::xy(cx, cy) }, wkb::Point { dims: xy, coord: Coord::xy(cx + 1.0, cy) }] }),
                    5 => Geometry::MultiLineString(wkb::MultiLineString { dims: xy, lines: vec![line(&mut rng, xy, 2), line(&mut rng, xy, 4)] }),
                    6 => Geometry::MultiPolygon(wkb::MultiPolygon { dims: xy, polygons: vec![polygon(cx, cy, 1.0, false, xy), polygon(cx + 5.0, cy, 1.0, true, xy)] }),
                    7 => Geometry::GeometryCollection(wkb::GeometryCollection {
                        dims: xy,
                        geometries: vec![
                            Geometry::Point(wkb::Point { dims: xy, coord: Coord::xy(cx, cy) }),
                            Geometry::MultiPolygon(wkb::MultiPolygon { dims: xy, polygons: vec![polygon(cx, cy, 1.0, true, xy), polygon(cx + 3.0, cy, 1.0, false, xy)] }),
                            Geometry::GeometryCollection(wkb::GeometryCollection { dims: xy, geometries: vec![Geometry::LineString(line(&mut rng, xy, 2))] }),
                        ],
                    }),
                    8 => Geometry::Polygon(wkb::Polygon { dims: xy, rings: vec![] }),
                    9 => Geometry::GeometryCollection(wkb::GeometryCollection { dims: xy, geometries: vec![] }),
                    _ if i % 2 == 0 => Geometry::Point(wkb::Point { dims: xy, coord: Coord::EMPTY }),
                    _ => Geometry::MultiPolygon(wkb::MultiPolygon { dims: xy, polygons: vec![] }),
                };
                Some(enc(g))
            })
            .collect(),
        "empty" => Vec::new(),
        _ => unreachable!("{name}"),
    }
}

fn crs_of(name: &str) -> Crs {
    match name {
        "points" | "lines_z" => marquet::crs::resolve("EPSG:25832").unwrap(),
        "polygons" => Crs::Default,
        _ => Crs::Unknown,
    }
}

/// A table `/NAME` in `h5` with the geometries of `name` and attributes id (int), val
/// (float, some missing), label (text), flag (boolean).
fn make_table(h5: &Path, name: &str) -> usize {
    let geoms = geometries(name);
    let n = geoms.len();
    let f = File::create(h5).unwrap();
    let mut t = MarquetTable::create(&f, &format!("/{name}")).unwrap();
    t.add_geometry_column("geometry", &GeometryColumnSpec::default().with_form(StorageForm::VarWkb).with_crs(crs_of(name))).unwrap();
    t.add_column("id", &ColumnSpec::new(Dtype::I64)).unwrap();
    t.add_column("val", &ColumnSpec::new(Dtype::F64).with_fill(f64::NAN.to_le_bytes().to_vec())).unwrap();
    t.add_column("label", &ColumnSpec::new(Dtype::FixedString { size: 12, utf8: true, nullterm: true, spacepad: false })).unwrap();
    t.add_column("flag", &ColumnSpec::new(Dtype::hep001_bool())).unwrap();
    if n == 0 {
        return 0;
    }
    let ids: Vec<i64> = (0..n as i64).collect();
    let vals: Vec<f64> = (0..n).map(|i| i as f64 * 0.5 - 7.25).collect();
    let labels: Vec<String> = (0..n).map(|i| format!("f{i}ü")).collect();
    let label_refs: Vec<&str> = labels.iter().map(String::as_str).collect();
    let flags: Vec<bool> = (0..n).map(|i| i % 3 == 0).collect();
    let batch = GeoBatch::new()
        .with_geometry("geometry", GeometryValues::Wkb(geoms))
        .with_array("id", Array::from_i64(&ids))
        .with_column("val", ColumnValues::Array { values: Array::from_f64(&vals), missing: Some((0..n).map(|i| i % 7 == 3).collect()) })
        .with_array("label", Array::from_strings_sized(&label_refs, true, 12).unwrap())
        .with_array("flag", Array::from_bools(&flags));
    t.write(&batch, WriteOptions::default()).unwrap();
    n
}

// ---- sinks -----------------------------------------------------------------------------

/// One exported feature: WKB (None = null) and attribute values.
type Row = (Option<Vec<u8>>, Vec<V>);

/// Records what `export_features` hands a sink: the table's features.
struct Recorder(std::rc::Rc<std::cell::RefCell<Vec<Row>>>);

impl FeatureSink for Recorder {
    fn write(&mut self, geometry: Option<&[u8]>, values: &[V]) -> marquet::Result<()> {
        self.0.borrow_mut().push((geometry.map(<[u8]>::to_vec), values.to_vec()));
        Ok(())
    }
    fn finish(self: Box<Self>) -> marquet::Result<()> {
        Ok(())
    }
}

/// The writer Marquet used before (the `flatgeobuf` crate's, with the same options), as an
/// oracle for the bytes.
struct CrateSink {
    w: FgbWriter<'static>,
    out: PathBuf,
    fields: Vec<(String, Kind)>,
}

impl FeatureSink for CrateSink {
    fn write(&mut self, geometry: Option<&[u8]>, values: &[V]) -> marquet::Result<()> {
        let fields = &self.fields;
        let g = geometry.expect("the crate's writer has no null geometry");
        self.w
            .add_feature_geom(flatgeobuf::geozero::wkb::Wkb(g), |f| {
                for (i, ((name, _), v)) in fields.iter().zip(values).enumerate() {
                    let cv = match v {
                        V::Null => continue,
                        V::I(x) => ColumnValue::Long(*x),
                        V::F(x) => ColumnValue::Double(*x),
                        V::B(x) => ColumnValue::Bool(*x),
                        V::S(s) => ColumnValue::String(s),
                        V::Bytes(b) => ColumnValue::Binary(b),
                    };
                    f.property(i, name, &cv).unwrap();
                }
            })
            .map_err(|e| marquet::Error::InvalidArgument(e.to_string()))
    }
    fn finish(self: Box<Self>) -> marquet::Result<()> {
        let s = *self;
        let mut out = std::io::BufWriter::new(std::fs::File::create(&s.out).unwrap());
        s.w.write(&mut out).unwrap();
        Ok(())
    }
}

fn crate_sink(out: &Path, info: &SinkInfo) -> CrateSink {
    let kinds: std::collections::BTreeSet<_> = info.types.iter().map(|t| t.kind).collect();
    let gt = match (kinds.len(), kinds.iter().next().map(|k| k.name())) {
        (1, Some("Point")) => GeometryType::Point,
        (1, Some("LineString")) => GeometryType::LineString,
        (1, Some("Polygon")) => GeometryType::Polygon,
        (1, Some("MultiPoint")) => GeometryType::MultiPoint,
        (1, Some("MultiLineString")) => GeometryType::MultiLineString,
        (1, Some("MultiPolygon")) => GeometryType::MultiPolygon,
        (1, _) => GeometryType::GeometryCollection,
        _ => GeometryType::Unknown,
    };
    let has_z = !info.types.is_empty() && info.types.iter().all(|t| t.dims.has_z());
    let has_m = !info.types.is_empty() && info.types.iter().all(|t| matches!(t.dims, Dimensions::Xym | Dimensions::Xyzm));
    let (org, code) = marquet::crs::epsg_like_code(&info.crs).unwrap_or_default();
    let wkt = marquet::crs::to_wkt(&info.crs, marquet::crs::WktDialect::Wkt2).ok().flatten();
    let crs = match info.crs {
        Crs::Unknown => FgbCrs::default(),
        _ => FgbCrs { org: (!org.is_empty()).then_some(org.as_str()), code, wkt: wkt.as_deref(), ..Default::default() },
    };
    let opts = FgbWriterOptions { write_index: true, detect_type: false, promote_to_multi: false, crs, has_z, has_m, ..Default::default() };
    let name = out.file_stem().unwrap().to_str().unwrap().to_string();
    let mut w = FgbWriter::create_with_options(&name, gt, opts).unwrap();
    for (n, k) in &info.fields {
        let t = match k {
            Kind::Int => ColumnType::Long,
            Kind::Float => ColumnType::Double,
            Kind::Bool => ColumnType::Bool,
            Kind::Str => ColumnType::String,
            Kind::Bytes => ColumnType::Binary,
        };
        w.add_column(n, t, |_, c| c.nullable = true);
    }
    CrateSink { w, out: out.to_path_buf(), fields: info.fields.clone() }
}

/// The features of table `/name` of `h5`, in table order.
fn table_rows(h5: &Path, name: &str) -> (SinkInfo, Vec<Row>) {
    let f = File::open(h5).unwrap();
    let rows = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let mut info = None;
    let r2 = rows.clone();
    export_features("test", &f, &format!("/{name}"), |i, _| {
        info = Some(i.clone());
        Ok(Box::new(Recorder(r2)))
    })
    .unwrap();
    let v = rows.borrow().clone();
    (info.unwrap(), v)
}

/// Export `/name` of `h5` to `out` with Marquet's writer and a memory budget.
fn export_with_budget(h5: &Path, name: &str, out: &Path, budget: usize) {
    let f = File::open(h5).unwrap();
    export_features("FlatGeobuf", &f, &format!("/{name}"), |i, _| Ok(Box::new(fgb::create_with_budget(out, i, budget)?))).unwrap();
}

// ---- reading ----------------------------------------------------------------------------

struct Props<'a>(&'a mut Vec<V>);

impl PropertyProcessor for Props<'_> {
    fn property(&mut self, i: usize, _: &str, v: &ColumnValue) -> flatgeobuf::geozero::error::Result<bool> {
        self.0[i] = match v {
            ColumnValue::Long(x) => V::I(*x),
            ColumnValue::Double(x) => V::F(*x),
            ColumnValue::Bool(x) => V::B(*x),
            ColumnValue::String(s) => V::S(s.to_string()),
            ColumnValue::Binary(b) => V::Bytes(b.to_vec()),
            other => panic!("unexpected {other:?}"),
        };
        Ok(false)
    }
}

fn dims_of(h: &flatgeobuf::Header) -> CoordDimensions {
    CoordDimensions { z: h.has_z(), m: h.has_m(), t: false, tm: false }
}

/// Every feature of an FGB file through the crate's reader, in file order.
fn read_all(path: &Path) -> Vec<Row> {
    let r = FgbReader::open(std::io::BufReader::new(std::fs::File::open(path).unwrap())).unwrap();
    let dims = dims_of(&r.header());
    let ncols = r.header().columns().map(|c| c.len()).unwrap_or(0);
    let mut it = r.select_all().unwrap();
    let mut out = Vec::new();
    while let Some(f) = it.next().unwrap() {
        let g = f.geometry().map(|_| f.to_wkb(dims).unwrap());
        let mut vals = vec![V::Null; ncols];
        f.process_properties(&mut Props(&mut vals)).unwrap();
        out.push((g, vals));
    }
    out
}

/// The ids (attribute 0) of the features `select_bbox` finds.
fn select_ids(path: &Path, w: [f64; 4]) -> Vec<i64> {
    let r = FgbReader::open(std::io::BufReader::new(std::fs::File::open(path).unwrap())).unwrap();
    let ncols = r.header().columns().map(|c| c.len()).unwrap_or(0);
    let mut it = r.select_bbox(w[0], w[1], w[2], w[3]).unwrap();
    let mut ids = Vec::new();
    while let Some(f) = it.next().unwrap() {
        let mut vals = vec![V::Null; ncols];
        f.process_properties(&mut Props(&mut vals)).unwrap();
        let V::I(id) = vals[0] else { panic!("no id") };
        ids.push(id);
    }
    ids.sort();
    ids
}

/// Geometries equal: the same bytes, or both empty of the same kind (FlatGeobuf has one
/// encoding for POLYGON EMPTY and a polygon of one empty ring; readers give the latter).
fn same_geometry(got: &Option<Vec<u8>>, want: &Option<Vec<u8>>) -> bool {
    match (got, want) {
        (Some(g), Some(w)) if g != w => {
            let (a, b) = (wkb::scan(g).unwrap(), wkb::scan(w).unwrap());
            a.is_empty && b.is_empty && a.geometry_type == b.geometry_type
        }
        _ => got == want,
    }
}

fn id_of(r: &Row) -> i64 {
    let V::I(id) = r.1[0] else { panic!("no id: {r:?}") };
    id
}

/// The XY box FlatGeobuf indexes a feature by (infinite/empty for null and empty).
fn node_box(g: &Option<Vec<u8>>) -> [f64; 4] {
    let mut n = NodeItem::create(0);
    if let Some(w) = g {
        let b = wkb::scan(w).unwrap().bbox;
        if !b.is_empty() {
            n.expand_xy(b.xmin, b.ymin);
            n.expand_xy(b.xmax, b.ymax);
        }
    }
    [n.min_x, n.min_y, n.max_x, n.max_y]
}

/// Check the file's layout directly: magic, header, the index's node count, each leaf's
/// offset equal to where its feature starts (features back to back in leaf order) and its
/// box equal to that feature's geometry box; returns the header's feature count.
fn check_layout(bytes: &[u8], expected: &BTreeMap<i64, Row>) -> u64 {
    assert_eq!(&bytes[..8], b"fgb\x03fgb\x00");
    let hlen = u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize;
    let header = flatgeobuf::size_prefixed_root_as_header(&bytes[8..12 + hlen]).unwrap();
    let n = header.features_count() as usize;
    assert_eq!(n, expected.len());
    let mut at = 12 + hlen;
    if n == 0 {
        assert_eq!((header.index_node_size(), header.envelope().is_none()), (0, true), "no index, no envelope");
        assert_eq!(at, bytes.len(), "an empty file is magic and header only");
        return 0;
    }
    assert_eq!(header.index_node_size(), 16);
    let nodes = flatgeobuf::packed_r_tree::PackedRTree::index_size(n, 16) / 40;
    let leaves_at = at + (nodes - n) * 40;
    let data = at + nodes * 40;
    // The envelope is the union of the leaves.
    let env: Vec<f64> = header.envelope().unwrap().iter().collect();
    let mut union = NodeItem::create(0);
    at = data;
    for k in 0..n {
        let l = &bytes[leaves_at + k * 40..leaves_at + (k + 1) * 40];
        let f = |i: usize| f64::from_le_bytes(l[i * 8..i * 8 + 8].try_into().unwrap());
        let off = u64::from_le_bytes(l[32..40].try_into().unwrap()) as usize;
        assert_eq!(data + off, at, "leaf {k}: its offset is where the feature starts");
        let size = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        let feat = flatgeobuf::size_prefixed_root_as_feature(&bytes[at..at + 4 + size]).unwrap();
        let id = i64::from_le_bytes(feat.properties().unwrap().bytes()[2..10].try_into().unwrap());
        let want = node_box(&expected[&id].0);
        let got = [f(0), f(1), f(2), f(3)];
        assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits), "leaf {k} (feature id {id}): box");
        union.expand(&NodeItem::bounds(got[0], got[1], got[2], got[3]));
        at += 4 + size;
    }
    assert_eq!(at, bytes.len(), "the features end the file");
    assert_eq!(env, vec![union.min_x, union.min_y, union.max_x, union.max_y]);
    n as u64
}

fn windows(rows: &[Row]) -> Vec<[f64; 4]> {
    let mut env = NodeItem::create(0);
    for r in rows {
        let b = node_box(&r.0);
        if b[0] <= b[2] {
            env.expand(&NodeItem::bounds(b[0], b[1], b[2], b[3]));
        }
    }
    let mut rng = common::Rng::new(7);
    let mut w = vec![[env.min_x, env.min_y, env.max_x, env.max_y], [env.max_x + 1.0, env.max_y + 1.0, env.max_x + 2.0, env.max_y + 2.0]];
    for _ in 0..60 {
        let (x, y) = (env.min_x + rng.f64() * env.width(), env.min_y + rng.f64() * env.height());
        let s = rng.f64() * 0.3;
        w.push([x, y, x + s * env.width(), y + s * env.height()]);
    }
    // A window on a point exactly (closed intervals).
    if let Some(b) = rows.iter().map(|r| node_box(&r.0)).find(|b| b[0] <= b[2]) {
        w.push(b);
    }
    w
}

fn full_scan(rows: &[Row], w: [f64; 4]) -> Vec<i64> {
    let mut ids: Vec<i64> = rows
        .iter()
        .filter(|r| {
            let b = node_box(&r.0);
            b[0] <= b[2] && !(b[2] < w[0] || b[3] < w[1] || b[0] > w[2] || b[1] > w[3])
        })
        .map(id_of)
        .collect();
    ids.sort();
    ids
}

const TABLES: [&str; 8] = ["points", "polygons", "multipolygons", "lines_z", "multilines_m", "multipoints_zm", "mixed", "empty"];

/// Tables whose features the crate's writer writes as Marquet's does, byte for byte (one
/// declared type, no null geometry).
const SAME_AS_CRATE: [&str; 6] = ["points", "polygons", "multipolygons", "lines_z", "multilines_m", "multipoints_zm"];

#[test]
fn written_files_read_back_exactly_with_a_correct_index() {
    let _s = common::serial();
    let dir = common::TempDir::new("fgb-writer");
    for name in TABLES {
        let h5 = dir.join(&format!("{name}.h5"));
        let n = make_table(&h5, name);
        let (info, rows) = table_rows(&h5, name);
        assert_eq!(rows.len(), n);
        let expected: BTreeMap<i64, Row> = rows.iter().map(|r| (id_of(r), r.clone())).collect();
        assert_eq!(expected.len(), n);
        // In memory, then with a budget so small every feature is encoded twice.
        std::fs::create_dir_all(dir.join("mem")).unwrap();
        std::fs::create_dir_all(dir.join("two")).unwrap();
        std::fs::create_dir_all(dir.join("crate")).unwrap();
        let mem = dir.join("mem").join(format!("{name}.fgb"));
        let two = dir.join("two").join(format!("{name}.fgb"));
        export_with_budget(&h5, name, &mem, 256 << 20);
        export_with_budget(&h5, name, &two, 0);
        let bytes = std::fs::read(&mem).unwrap();
        assert!(bytes == std::fs::read(&two).unwrap(), "{name}: the second pass wrote other bytes");
        assert_eq!(check_layout(&bytes, &expected), n as u64, "{name}");

        // The crate's reader: header, every feature, and the index.
        let r = FgbReader::open(std::io::BufReader::new(std::fs::File::open(&mem).unwrap())).unwrap();
        let h = r.header();
        assert_eq!(h.features_count(), n as u64);
        let cols: Vec<(String, ColumnType, bool)> = h.columns().unwrap().iter().map(|c| (c.name().to_string(), c.type_(), c.nullable())).collect();
        assert_eq!(
            cols,
            vec![("id".into(), ColumnType::Long, true), ("val".into(), ColumnType::Double, true), ("label".into(), ColumnType::String, true), ("flag".into(), ColumnType::Bool, true)],
            "{name}"
        );
        let (org, code) = match (crs_of(name), h.crs()) {
            (Crs::Unknown, Some(c)) => (c.org().map(str::to_string), c.code()),
            (_, Some(c)) => (c.org().map(str::to_string), c.code()),
            (_, None) => (None, 0),
        };
        let want_code = match name {
            "points" | "lines_z" => 25832,
            "polygons" => 4326,
            _ => 0,
        };
        assert_eq!((org.is_some(), code), (want_code != 0, want_code), "{name}: CRS");
        let gt = match name {
            "points" => GeometryType::Point,
            "polygons" => GeometryType::Polygon,
            "multipolygons" => GeometryType::MultiPolygon,
            "lines_z" => GeometryType::LineString,
            "multilines_m" => GeometryType::MultiLineString,
            "multipoints_zm" => GeometryType::MultiPoint,
            _ => GeometryType::Unknown,
        };
        assert_eq!((h.geometry_type(), h.has_z(), h.has_m()), (gt, name.ends_with("_z") || name.ends_with("_zm"), name.ends_with("_m") || name.ends_with("_zm")), "{name}");
        drop(r);
        let back = read_all(&mem);
        assert_eq!(back.len(), n);
        let mut seen = std::collections::BTreeSet::new();
        for row in &back {
            let id = id_of(row);
            assert!(seen.insert(id), "{name}: feature {id} twice");
            let want = &expected[&id];
            assert!(same_geometry(&row.0, &want.0), "{name}: feature {id}: geometry {:?} for {:?}", row.0, want.0);
            assert_eq!(format!("{:?}", row.1), format!("{:?}", want.1), "{name}: feature {id}: attributes");
        }
        if n > 0 {
            for w in windows(&rows) {
                assert_eq!(select_ids(&mem, w), full_scan(&rows, w), "{name}: window {w:?}");
            }
        }

        // The crate's writer, fed the same features, writes the same bytes.
        if SAME_AS_CRATE.contains(&name) {
            let theirs = dir.join("crate").join(format!("{name}.fgb"));
            let f = File::open(&h5).unwrap();
            export_features("FlatGeobuf", &f, &format!("/{name}"), |i, _| Ok(Box::new(crate_sink(&theirs, i)))).unwrap();
            let t = std::fs::read(&theirs).unwrap();
            assert_eq!(t.len(), bytes.len(), "{name}: size against the crate's writer");
            let first = t.iter().zip(&bytes).position(|(a, b)| a != b);
            assert_eq!(first, None, "{name}: first byte different from the crate's writer");
        }
        let _ = info;
    }
}

#[test]
fn the_crate_writer_differs_only_in_part_types_of_mixed_files() {
    let _s = common::serial();
    // Without nulls, GeometryCollections and empty multi-geometries (which the crate's writer
    // cannot write faithfully), a file of mixed types differs from the crate's only in the
    // type byte of multipolygon parts: Polygon here (as GDAL writes), MultiPolygon there.
    let dir = common::TempDir::new("fgb-writer-mixed");
    let h5 = dir.join("m.h5");
    let f = File::create(&h5).unwrap();
    let mut t = MarquetTable::create(&f, "/m").unwrap();
    t.add_geometry_column("geometry", &GeometryColumnSpec::default().with_form(StorageForm::VarWkb)).unwrap();
    t.add_column("id", &ColumnSpec::new(Dtype::I64)).unwrap();
    let xy = Dimensions::Xy;
    let geoms: Vec<Option<Vec<u8>>> = (0..300)
        .map(|i| {
            let (cx, cy) = ((i % 20) as f64 * 3.0, (i / 20) as f64 * 3.0);
            Some(enc(match i % 3 {
                0 => Geometry::Point(wkb::Point { dims: xy, coord: Coord::xy(cx, cy) }),
                1 => Geometry::Polygon(polygon(cx, cy, 1.0, true, xy)),
                _ => Geometry::MultiPolygon(wkb::MultiPolygon { dims: xy, polygons: vec![polygon(cx, cy, 1.0, false, xy)] }),
            }))
        })
        .collect();
    let ids: Vec<i64> = (0..300).collect();
    t.write(&GeoBatch::new().with_geometry("geometry", GeometryValues::Wkb(geoms)).with_array("id", Array::from_i64(&ids)), WriteOptions::default()).unwrap();
    drop(t);
    drop(f);
    std::fs::create_dir_all(dir.join("a")).unwrap();
    std::fs::create_dir_all(dir.join("b")).unwrap();
    let ours = dir.join("a").join("m.fgb");
    let theirs = dir.join("b").join("m.fgb");
    export_with_budget(&h5, "m", &ours, 1 << 30);
    let f = File::open(&h5).unwrap();
    export_features("FlatGeobuf", &f, "/m", |i, _| Ok(Box::new(crate_sink(&theirs, i)))).unwrap();
    let (a, b) = (std::fs::read(&ours).unwrap(), std::fs::read(&theirs).unwrap());
    assert_eq!(a.len(), b.len());
    let diffs: Vec<usize> = (0..a.len()).filter(|&i| a[i] != b[i]).collect();
    assert_eq!(diffs.len(), 100, "one byte per multipolygon part");
    for i in diffs {
        assert_eq!((a[i], b[i]), (GeometryType::Polygon.0, GeometryType::MultiPolygon.0), "byte {i}");
    }
}

// ---- GDAL --------------------------------------------------------------------------------

fn python() -> Option<PathBuf> {
    common::venv_python_with("pyogrio", "the GDAL (pyogrio) read-back")
}

#[test]
fn gdal_reads_the_features_the_crs_and_filters_by_the_index() {
    let _s = common::serial();
    let dir = common::TempDir::new("fgb-writer-gdal");
    let mut files = Vec::new();
    for name in TABLES {
        let h5 = dir.join(&format!("{name}.h5"));
        make_table(&h5, name);
        let out = dir.join(&format!("{name}.fgb"));
        convert(&h5, &out, &Default::default()).unwrap();
        let (_, rows) = table_rows(&h5, name);
        files.push((name, out, rows));
    }
    let Some(py) = python() else { return };
    // pyogrio (GDAL's FlatGeobuf driver): every feature as [id, val, label, flag, WKB hex],
    // the layer's CRS, and the ids its bbox filter (the index) returns for each window.
    let script = r#"
import sys, json, pyogrio
path, windows = sys.argv[1], json.loads(sys.argv[2])
info = pyogrio.read_info(path, force_feature_count=True)
meta, t = pyogrio.read_arrow(path)
g = meta["geometry_name"] or "wkb_geometry"
rows = []
for r in t.to_pylist() if info["features"] != 0 else []:
    w = r[g]
    rows.append([r["id"], r["val"], r["label"], r["flag"], None if w is None else w.hex()])
sel = []
for w in windows:
    # (read_dataframe: read_arrow of pyogrio 0.11 returns 65536 rows of zeros for an
    # empty result, whoever wrote the file)
    df = pyogrio.read_dataframe(path, bbox=tuple(w), columns=["id"])
    sel.append(sorted(int(i) for i in df["id"]))
print(json.dumps({"crs": meta["crs"], "n": info["features"], "got": len(rows), "rows": rows, "sel": sel, "type": meta["geometry_type"]}))
"#;
    for (name, out, rows) in files {
        // GDAL's bbox filter keeps a feature when its geometry meets the window; for points
        // (and an outside window) that is the box test.
        let wins: Vec<[f64; 4]> = if name == "points" { windows(&rows) } else if rows.is_empty() { vec![] } else { windows(&rows)[1..2].to_vec() };
        let o = Command::new(&py).args(["-c", script, &out.display().to_string(), &serde_json::to_string(&wins).unwrap()]).output().unwrap();
        assert!(o.status.success(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!((v["n"].as_u64(), v["got"].as_u64()), (Some(rows.len() as u64), Some(rows.len() as u64)), "{name}: feature count");
        let want_crs = match name {
            "points" | "lines_z" => Some("EPSG:25832"),
            "polygons" => Some("EPSG:4326"),
            _ => None,
        };
        assert_eq!(v["crs"].as_str().filter(|c| !c.is_empty()), want_crs, "{name}: CRS");
        let by_id: BTreeMap<i64, &Row> = rows.iter().map(|r| (id_of(r), r)).collect();
        for g in v["rows"].as_array().unwrap() {
            let id = g[0].as_i64().unwrap();
            let want = by_id[&id];
            let val = match &want.1[1] {
                V::F(x) => serde_json::json!(x),
                _ => serde_json::Value::Null,
            };
            let label = match &want.1[2] {
                V::S(s) => s.clone(),
                other => panic!("{other:?}"),
            };
            assert_eq!((&g[1], g[2].as_str(), g[3].as_bool()), (&val, Some(label.as_str()), Some(matches!(want.1[3], V::B(true)))), "{name}: feature {id}");
            let got: Option<Vec<u8>> = g[4].as_str().map(|h| (0..h.len()).step_by(2).map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap()).collect());
            assert!(same_geometry(&got, &want.0), "{name}: feature {id}: geometry {got:?} for {:?}", want.0);
        }
        for (k, w) in wins.iter().enumerate() {
            let got: Vec<i64> = v["sel"][k].as_array().unwrap().iter().map(|x| x.as_i64().unwrap()).collect();
            assert_eq!(got, full_scan(&rows, *w), "{name}: GDAL bbox filter, window {w:?}");
        }
    }
}

// ---- refusals ------------------------------------------------------------------------------

#[test]
fn a_geometry_the_writer_cannot_encode_is_a_located_error_and_no_file() {
    let _s = common::serial();
    let dir = common::TempDir::new("fgb-writer-bad");
    let bad = |f: &str| Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/bad").join(f);
    // Row 0 of /lakes/shoreline holds EWKB (an SRID flag): not ISO WKB.
    let out = dir.join("ewkb.fgb");
    let e = convert(&bad("m007_ewkb_value.h5"), &out, &Default::default()).unwrap_err();
    let m = e.to_string();
    assert!(matches!(e, marquet::Error::InvalidArgument(_)), "{e:?}");
    assert!(m.contains("/lakes/shoreline: row 0:") && m.contains("ewkb srid flag"), "{m}");
    assert!(!out.exists(), "the output is removed");
    // A null geometry at row 4 (before the MultiPolygon that GEOMETRY_TYPES misses, row 9:
    // the unit tests of src/convert/fgb.rs refuse that one).
    let out = dir.join("types.fgb");
    let m = convert(&bad("m006_types_miss_multipolygon.h5"), &out, &Default::default()).unwrap_err().to_string();
    assert!(m.contains("/lakes/shoreline: row 4:") && m.contains("null geometry"), "{m}");
    assert!(!out.exists(), "the output is removed");
    // Same with the second pass (over a budget of nothing): the error comes in pass 1.
    let f = File::open(bad("m007_ewkb_value.h5")).unwrap();
    let out = dir.join("ewkb2.fgb");
    let m = export_features("FlatGeobuf", &f, "/lakes", |i, _| Ok(Box::new(fgb::create_with_budget(&out, i, 0)?))).err().unwrap().to_string();
    assert!(m.contains("/lakes/shoreline: row 0:"), "{m}");
}
