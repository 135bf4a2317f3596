//! Issue 18, producer and reader halves: the producer never writes a file the validator
//! rejects (ring orientation, f32 point summaries, wrapping BBOX unions, non-planar
//! coordinate ranges, PROJJSON CRS, the H5Col layer on Marquet tables, summaries after
//! all-null first appends), and readers read what the validator accepts (signed scalar
//! counts, ruling R3; uninterpretable geometry columns, ruling R16 and HEP002 §6.2).

use marquet_dev::info;
use marquet_dev::dump;

use std::path::PathBuf;

use marquet::h5::{self, Dtype, Space};
use marquet::h5col::{Array, Batch, ColumnSpec, ColumnValues, File};
use marquet::marquet::{types, Crs, Edges, GeoBatch, GeometryColumnSpec, GeometryValues, MarquetTable, OrientationOnWrite, SpatialIndexKind, StorageForm};
use marquet::query::{Predicate, Query, Window, TableQuery};
use marquet::spec::names;
use marquet::validate::{validate_file, Options, Status};
use marquet::wkb::{self, ByteOrder, Coord, Geometry, Polygon};
use marquet::{BBox, Dimensions, GeometryKind, GeometryType, Error as MarquetError};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("marquet-conformance-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

/// The validator's errors (empty = conformant).
fn errors(p: &PathBuf) -> Vec<String> {
    validate_file(p, &Options::default()).unwrap().errors().map(|f| format!("[{}] {f}", f.check.unwrap_or("?"))).collect()
}

const UTM: &str = r#"{"type":"ProjectedCRS","name":"UTM","base_crs":{"name":"NAD83(CSRS)"},"conversion":{"name":"UTM zone 20N"},"coordinate_system":{"subtype":"Cartesian"}}"#;

fn ring(pts: &[(f64, f64)], ccw: bool) -> Vec<Coord> {
    let mut r: Vec<Coord> = pts.iter().map(|&(x, y)| Coord::xy(x, y)).collect();
    if !ccw {
        r.reverse();
    }
    r
}

fn square(x0: f64, y0: f64, s: f64) -> Vec<(f64, f64)> {
    vec![(x0, y0), (x0 + s, y0), (x0 + s, y0 + s), (x0, y0 + s), (x0, y0)]
}

/// A polygon with a hole; `ccw` = the exterior counterclockwise and the hole clockwise.
fn polygon(x0: f64, y0: f64, ccw: bool) -> Vec<u8> {
    let g = Geometry::Polygon(Polygon { dims: Dimensions::Xy, rings: vec![ring(&square(x0, y0, 10.0), ccw), ring(&square(x0 + 2.0, y0 + 2.0, 3.0), !ccw)] });
    wkb::encode(&g, ByteOrder::LittleEndian)
}

fn ccw_table(p: &PathBuf) -> (File, MarquetTable) {
    let f = File::create(p).unwrap();
    let mut t = MarquetTable::create(&f, "/t").unwrap();
    t.add_geometry_column(
        "g",
        &GeometryColumnSpec::default().with_form(StorageForm::VarWkb).with_crs(Crs::ProjJson(UTM.into())).with_orientation_ccw().with_covering("g_bbox"),
    )
    .unwrap();
    (f, t)
}

fn refused_row(e: MarquetError) -> (Option<u64>, &'static str, String) {
    match e {
        MarquetError::Refused { row, rule, message, .. } => (row, rule, message),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn clockwise_rings_are_refused_with_their_absolute_row() {
    let p = tmp("cw_refused.h5");
    let (_f, t) = ccw_table(&p);
    t.append(&GeoBatch::new().with_geometry("g", GeometryValues::Wkb(vec![Some(polygon(0.0, 0.0, true)), None, Some(polygon(20.0, 0.0, true))]))).unwrap();
    let bad = GeoBatch::new().with_geometry("g", GeometryValues::Wkb(vec![Some(polygon(40.0, 0.0, true)), Some(polygon(60.0, 0.0, false))]));
    let e = t.append(&bad).unwrap_err();
    let msg = e.to_string();
    let (row, rule, m) = refused_row(e);
    assert_eq!((row, rule), (Some(4), "HEP002 §9.2, §12 req 13"), "{msg}");
    assert!(m.contains("polygon 0 ring 0 is not counterclockwise"), "{m}");
    assert!(msg.starts_with("/t/g row 4: HEP002 §9.2, §12 req 13"), "{msg}");
    assert_eq!(t.nrows().unwrap(), 3, "nothing was written");
    // An update is refused the same way, naming the table row.
    let e = t.update_geometries("g", 1, &GeometryValues::Wkb(vec![Some(polygon(0.0, 0.0, false))])).unwrap_err();
    assert_eq!(refused_row(e).0, Some(1));
    // A wrong hole alone is refused too.
    let hole_wrong = wkb::encode(
        &Geometry::Polygon(Polygon { dims: Dimensions::Xy, rings: vec![ring(&square(0.0, 0.0, 10.0), true), ring(&square(2.0, 2.0, 3.0), true)] }),
        ByteOrder::LittleEndian,
    );
    let (_, _, m) = refused_row(t.append(&GeoBatch::new().with_geometry("g", GeometryValues::Wkb(vec![Some(hole_wrong)]))).unwrap_err());
    assert!(m.contains("ring 1 is not clockwise"), "{m}");
    drop((_f, t));
    assert!(errors(&p).is_empty(), "{:#?}", errors(&p));
}

#[test]
fn rings_are_rewound_when_asked() {
    let p = tmp("cw_rewound.h5");
    let (f, mut t) = ccw_table(&p);
    t.set_orientation_on_write(OrientationOnWrite::Rewind);
    t.append(&GeoBatch::new().with_geometry("g", GeometryValues::Wkb(vec![Some(polygon(0.0, 0.0, false)), Some(polygon(20.0, 0.0, true))]))).unwrap();
    t.update_geometries("g", 1, &GeometryValues::Wkb(vec![Some(polygon(30.0, 0.0, false))])).unwrap();
    let got = t.read_wkb("g", 0, 2).unwrap();
    assert_eq!(got.get(0).unwrap(), polygon(0.0, 0.0, true).as_slice());
    assert_eq!(got.get(1).unwrap(), polygon(30.0, 0.0, true).as_slice());
    drop((f, t));
    assert!(errors(&p).is_empty(), "{:#?}", errors(&p));
}

/// The GeoParquet import re-winds (docs/geoparquet-mapping.md): a file that declares
/// `orientation: counterclockwise` over clockwise rings imports conformant.
#[cfg(feature = "geoparquet")]
#[test]
fn geoparquet_import_rewinds_declared_orientation() {
    use marquet::convert::{export_geoparquet, import_geoparquet, ExportOptions, ImportOptions};
    let src = tmp("cw_src.h5");
    {
        let f = File::create(&src).unwrap();
        let mut t = MarquetTable::create(&f, "/t").unwrap();
        t.add_geometry_column("g", &GeometryColumnSpec::default().with_form(StorageForm::VarWkb)).unwrap();
        t.append(&GeoBatch::new().with_geometry("g", GeometryValues::Wkb(vec![Some(polygon(0.0, 0.0, false))]))).unwrap();
        // Another producer's claim: ORIENTATION over a clockwise ring.
        let g = h5::object_open(t.table().id(), "g").unwrap();
        h5::attr_write(g.id(), names::ORIENTATION, &types::orientation_dtype(), &Space::Scalar, &[1]).unwrap();
    }
    let pq = tmp("cw.parquet");
    {
        let f = File::open(&src).unwrap();
        export_geoparquet(&f, "/t", &pq, &ExportOptions::default()).unwrap();
    }
    let out = tmp("cw_imported.h5");
    {
        let f = File::create(&out).unwrap();
        import_geoparquet(&pq, &f, &ImportOptions::new("/t")).unwrap();
        let t = MarquetTable::open(&f, "/t").unwrap();
        assert!(t.geometry_column("g").unwrap().orientation_ccw);
        assert_eq!(t.read_wkb("g", 0, 1).unwrap().get(0).unwrap(), polygon(0.0, 0.0, true).as_slice());
    }
    assert!(errors(&out).is_empty(), "{:#?}", errors(&out));
}

/// f32 point columns: BBOX, block boxes, R-tree items are computed from the stored
/// (rounded) values, so they contain what is stored.
#[test]
fn f32_point_summaries_contain_the_stored_values() {
    let p = tmp("f32.h5");
    let xs = [100.1, 200.3, 300.7, -50.9];
    let ys = [10.1, -20.7, 30.7, 40.9];
    {
        let f = File::create(&p).unwrap();
        let mut t = MarquetTable::create(&f, "/t").unwrap();
        t.add_geometry_column("pt", &GeometryColumnSpec::default().with_form(StorageForm::Point { dims: Dimensions::Xy, f32: true }).with_crs(Crs::ProjJson(UTM.into()))).unwrap();
        t.append(&GeoBatch::new().with_geometry("pt", GeometryValues::Points { dims: Dimensions::Xy, x: xs.to_vec(), y: ys.to_vec(), z: None, m: None, valid: None })).unwrap();
        t.build_block_bbox("pt", Some(2)).unwrap();
        t.build_rtree("pt", None).unwrap();
        let (b, _, _) = t.geometry_column("pt").unwrap().bbox.unwrap();
        let r = |v: f64| v as f32 as f64;
        assert_eq!((b.xmin, b.ymin, b.xmax, b.ymax), (r(-50.9), r(-20.7), r(300.7), r(40.9)));
        // The f64 input is not what is stored: a box from it would miss stored values.
        assert!(r(300.7) > 300.7 && r(-20.7) < -20.7 && r(40.9) > 40.9);
        t.append(&GeoBatch::new().with_geometry("pt", GeometryValues::Points { dims: Dimensions::Xy, x: vec![400.3], y: vec![50.7], z: None, m: None, valid: None })).unwrap();
    }
    assert!(errors(&p).is_empty(), "{:#?}", errors(&p));
}

/// Appending to a column whose BBOX wraps the antimeridian keeps a box that holds the old
/// and the new geometries.
#[test]
fn wrapping_bbox_stays_a_container_on_append() {
    let p = tmp("wrap.h5");
    let pt = |x: f64, y: f64| GeometryValues::Points { dims: Dimensions::Xy, x: vec![x], y: vec![y], z: None, m: None, valid: None };
    {
        let f = File::create(&p).unwrap();
        let mut t = MarquetTable::create(&f, "/t").unwrap();
        t.add_geometry_column("pt", &GeometryColumnSpec::default().with_form(StorageForm::Point { dims: Dimensions::Xy, f32: false })).unwrap();
        t.append(&GeoBatch::new().with_geometry("pt", GeometryValues::Points { dims: Dimensions::Xy, x: vec![175.0, -178.0], y: vec![0.0, 1.0], z: None, m: None, valid: None })).unwrap();
        // A compact wrapping BBOX, as another producer (or a GeoParquet bbox) may write it.
        let g = h5::object_open(t.table().id(), "pt").unwrap();
        let w = BBox::xy(175.0, 0.0, -178.0, 1.0);
        h5::attr_write(g.id(), names::BBOX, &types::bbox_dtype(false, false), &Space::Scalar, &types::bbox_bytes(&w, false, false)).unwrap();
        drop(g);
        t.append(&GeoBatch::new().with_geometry("pt", pt(-179.0, 2.0))).unwrap();
        let (b, _, _) = t.geometry_column("pt").unwrap().bbox.unwrap();
        assert_eq!((b.xmin, b.xmax, b.ymin, b.ymax), (175.0, -178.0, 0.0, 2.0), "still the compact wrapping box");
        t.append(&GeoBatch::new().with_geometry("pt", pt(10.0, 3.0))).unwrap();
        let (b, _, _) = t.geometry_column("pt").unwrap().bbox.unwrap();
        assert_eq!((b.xmin, b.xmax), (10.0, -178.0), "the larger of the two gaps is left out");
    }
    assert!(errors(&p).is_empty(), "{:#?}", errors(&p));
}

/// Non-planar edges: coordinates outside longitude [-180, 180] / latitude [-90, 90] are
/// refused on write, naming the row.
#[test]
fn lonlat_ranges_are_enforced_under_non_planar_edges() {
    let p = tmp("ranges.h5");
    let f = File::create(&p).unwrap();
    let mut t = MarquetTable::create(&f, "/t").unwrap();
    t.add_geometry_column("l", &GeometryColumnSpec::default().with_form(StorageForm::VarWkb).with_edges(Edges::Spherical)).unwrap();
    t.add_geometry_column("pt", &GeometryColumnSpec::default().with_form(StorageForm::Point { dims: Dimensions::Xy, f32: false }).with_edges(Edges::Spherical)).unwrap();
    let line = |y: f64| wkb::encode(&Geometry::LineString(wkb::LineString { dims: Dimensions::Xy, coords: vec![Coord::xy(0.0, 60.0), Coord::xy(60.0, y)] }), ByteOrder::LittleEndian);
    let pts = |x: f64| GeometryValues::Points { dims: Dimensions::Xy, x: vec![0.0, x], y: vec![0.0, 0.0], z: None, m: None, valid: None };
    t.append(&GeoBatch::new().with_geometry("l", GeometryValues::Wkb(vec![Some(line(60.0)), Some(line(61.0))])).with_geometry("pt", pts(1.0))).unwrap();
    let e = t.append(&GeoBatch::new().with_geometry("l", GeometryValues::Wkb(vec![Some(line(60.0)), Some(line(95.0))])).with_geometry("pt", pts(1.0))).unwrap_err();
    let (row, rule, m) = refused_row(e);
    assert_eq!((row, rule), (Some(3), "HEP002 §9.1, §12 req 12"));
    assert!(m.contains("95.0"), "{m}");
    let e = t.append(&GeoBatch::new().with_geometry("l", GeometryValues::Wkb(vec![Some(line(60.0)), Some(line(60.0))])).with_geometry("pt", pts(200.0))).unwrap_err();
    assert_eq!(refused_row(e).0, Some(3));
    assert_eq!(t.nrows().unwrap(), 2);
    drop((f, t));
    assert!(errors(&p).is_empty(), "{:#?}", errors(&p));
}

/// A CRS attribute is written only for a PROJJSON coordinate reference system.
#[test]
fn crs_must_be_projjson() {
    let p = tmp("crs.h5");
    let f = File::create(&p).unwrap();
    let mut t = MarquetTable::create(&f, "/t").unwrap();
    for bad in [r#"{"a":1}"#, r#"{"type":"ProjectedCRS","name":"x"}"#, r#"{"type":"GeographicCRS","name":"x"}"#] {
        let e = t.add_geometry_column("g", &GeometryColumnSpec::default().with_form(StorageForm::VarWkb).with_crs(Crs::ProjJson(bad.into()))).unwrap_err();
        match e {
            MarquetError::Refused { path, rule, .. } => assert_eq!((path.as_str(), rule), ("/t/g", "HEP002 §8.1, §12 req 11")),
            other => panic!("{bad}: {other:?}"),
        }
        assert!(!h5::link_exists(t.table().id(), "g").unwrap(), "nothing written for {bad}");
    }
    t.add_geometry_column("g", &GeometryColumnSpec::default().with_form(StorageForm::VarWkb).with_crs(Crs::ProjJson(UTM.into()))).unwrap();
}

/// The H5Col layer refuses to append to a Marquet table or to update its geometry or
/// covering columns (HEP002 §11.1), and `set_index_columns` refuses geometry columns
/// (§5.3); other columns stay writable and truncation stays allowed.
#[test]
fn h5col_layer_refuses_marquet_geometry_writes() {
    let p = tmp("guard.h5");
    let f = File::create(&p).unwrap();
    let mut t = MarquetTable::create(&f, "/t").unwrap();
    t.add_column("id", &ColumnSpec::new(Dtype::U64)).unwrap();
    t.add_geometry_column("g", &GeometryColumnSpec::default().with_form(StorageForm::VarWkb).with_crs(Crs::ProjJson(UTM.into())).with_covering("g_bbox")).unwrap();
    t.add_geometry_column("pt", &GeometryColumnSpec::default().with_form(StorageForm::Point { dims: Dimensions::Xy, f32: false })).unwrap();
    let pts = GeometryValues::Points { dims: Dimensions::Xy, x: vec![1.0, 2.0], y: vec![1.0, 2.0], z: None, m: None, valid: None };
    t.append(&GeoBatch::new().with_array("id", Array::from_u64(&[1, 2])).with_geometry("g", GeometryValues::Wkb(vec![Some(polygon(0.0, 0.0, true)), None])).with_geometry("pt", pts)).unwrap();
    let h = t.table();
    let rule = |e: MarquetError| match e {
        MarquetError::Refused { rule, path, .. } => (rule, path),
        other => panic!("{other:?}"),
    };
    let e = h.append(&Batch::new().with_array("id", Array::from_u64(&[3]))).unwrap_err();
    assert_eq!(rule(e), ("HEP002 §11.1", "/t".to_string()));
    let far = |x: f64| {
        let mut b = x.to_le_bytes().to_vec();
        b.extend_from_slice(&x.to_le_bytes());
        ColumnValues::array(Array { dtype: types::point_dtype(Dimensions::Xy, false), bytes: b })
    };
    assert_eq!(rule(h.update("pt", 0, &far(1e6)).unwrap_err()).1, "/t/pt");
    assert_eq!(rule(h.write_rows_unchecked("pt", 0, &far(1e6)).unwrap_err()).1, "/t/pt");
    let cov = t.covering_values("g_bbox", &[marquet::marquet::RowInfo::Null]).unwrap();
    assert_eq!(rule(h.update("g_bbox", 1, &cov).unwrap_err()).1, "/t/g_bbox");
    let l = marquet::h5col::ListArray::from_bytes_rows([Some(&polygon(50.0, 0.0, true)[..])]);
    assert_eq!(rule(h.update_list_with("g", 0, &l, &mut |_| Ok(())).unwrap_err()).1, "/t/g");
    assert_eq!(rule(h.list_column("g").unwrap().append_rows_public(0, &l).unwrap_err()).1, "/t/g");
    let e = h.set_index_columns(&["pt"]).unwrap_err();
    assert_eq!(rule(e), ("HEP002 §5.3, §12 req 4", "/t/pt".to_string()));
    // Other columns and truncation are fine.
    h.update("id", 0, &ColumnValues::array(Array::from_u64(&[7]))).unwrap();
    h.set_index_columns(&["id"]).unwrap();
    drop((f, t));
    assert!(errors(&p).is_empty(), "{:#?}", errors(&p));
    let f = File::open_rw(&p).unwrap();
    f.table("/t").unwrap().truncate(1).unwrap();
    drop(f);
    assert!(errors(&p).is_empty(), "{:#?}", errors(&p));
}

/// A column whose first append holds only null or empty rows gets exact GEOMETRY_TYPES and
/// a BBOX from the later appends.
#[test]
fn summaries_after_an_all_null_first_append() {
    let p = tmp("all_null_first.h5");
    let f = File::create(&p).unwrap();
    let mut t = MarquetTable::create(&f, "/t").unwrap();
    t.add_geometry_column("g", &GeometryColumnSpec::default().with_form(StorageForm::VarWkb).with_crs(Crs::ProjJson(UTM.into()))).unwrap();
    t.add_geometry_column("pt", &GeometryColumnSpec::default().with_form(StorageForm::Point { dims: Dimensions::Xy, f32: false })).unwrap();
    let nan_pts = GeometryValues::Points { dims: Dimensions::Xy, x: vec![f64::NAN, 0.0], y: vec![f64::NAN, 0.0], z: None, m: None, valid: Some(vec![true, false]) };
    t.append(&GeoBatch::new().with_geometry("g", GeometryValues::Wkb(vec![None, None])).with_geometry("pt", nan_pts)).unwrap();
    let g = t.geometry_column("g").unwrap();
    assert_eq!((g.types.clone(), g.bbox), (None, None));
    let pts = GeometryValues::Points { dims: Dimensions::Xy, x: vec![5.0], y: vec![6.0], z: None, m: None, valid: None };
    t.append(&GeoBatch::new().with_geometry("g", GeometryValues::Wkb(vec![Some(polygon(0.0, 0.0, true))])).with_geometry("pt", pts)).unwrap();
    let g = t.geometry_column("g").unwrap();
    assert_eq!(g.types, Some(vec![GeometryType::new(GeometryKind::Polygon, Dimensions::Xy)]));
    assert_eq!(g.bbox.map(|b| b.0), Some(BBox::xy(0.0, 0.0, 10.0, 10.0)));
    let pt = t.geometry_column("pt").unwrap();
    assert_eq!(pt.bbox.map(|b| b.0), Some(BBox::xy(5.0, 6.0, 5.0, 6.0)));
    drop((f, t));
    assert!(errors(&p).is_empty(), "{:#?}", errors(&p));
}

/// Ruling R3: scalar counts and validity tokens stored with signed integer types are read
/// (the validator accepts them with a warning), so the indexes stay in use.
#[test]
fn signed_counts_and_tokens_are_read() {
    let p = tmp("signed.h5");
    {
        let f = File::create(&p).unwrap();
        let mut t = MarquetTable::create(&f, "/t").unwrap();
        t.add_geometry_column("g", &GeometryColumnSpec::default().with_form(StorageForm::VarWkb).with_crs(Crs::ProjJson(UTM.into()))).unwrap();
        let v: Vec<Option<Vec<u8>>> = (0..40).map(|i| Some(polygon(20.0 * i as f64, 0.0, true))).collect();
        t.append(&GeoBatch::new().with_geometry("g", GeometryValues::Wkb(v))).unwrap();
        t.build_block_bbox("g", Some(8)).unwrap();
        t.build_rtree("g", Some(4)).unwrap();
        let tb = t.table();
        let i64_attr = |o: &h5::Hid, n: &str, v: i64| h5::attr_write(o.id(), n, &Dtype::I64, &Space::Scalar, &v.to_le_bytes()).unwrap();
        for idx in t.spatial_indexes("g").unwrap() {
            let o = h5::object_open(tb.id(), &idx.info.path).unwrap();
            let sg = idx.info.source_generation.unwrap() as i64;
            i64_attr(&o, names::SOURCE_GENERATION, sg);
            i64_attr(&o, names::SOURCE_NROWS, 40);
            if h5::attr_exists(o.id(), names::NODE_SIZE).unwrap() {
                h5::attr_write(o.id(), names::NODE_SIZE, &Dtype::Int { size: 2, signed: true, big_endian: false }, &Space::Scalar, &4i16.to_le_bytes()).unwrap();
                i64_attr(&o, names::NUM_ITEMS, 40);
            } else {
                h5::attr_write(o.id(), names::BLOCK_LENGTH, &Dtype::Int { size: 4, signed: true, big_endian: false }, &Space::Scalar, &8i32.to_le_bytes()).unwrap();
            }
        }
        let g = h5::object_open(tb.id(), ".").unwrap();
        i64_attr(&g, names::NROWS, 40);
    }
    let r = validate_file(&p, &Options::default()).unwrap();
    assert_eq!(r.status, Status::Conformant, "{:#?}", r.errors().collect::<Vec<_>>());
    let f = File::open_rw(&p).unwrap();
    let t = MarquetTable::open(&f, "/t").unwrap();
    assert_eq!(t.nrows().unwrap(), 40);
    assert!(t.spatial_indexes("g").unwrap().iter().all(|i| i.valid));
    let q = Query::new(Window::BBox(BBox::xy(101.0, 1.0, 102.0, 2.0)), Predicate::Intersects);
    let res = t.query("g", &q).unwrap();
    assert_eq!(res.rows, vec![5]);
    assert!(res.stats.used_rtree, "{:?}", res.stats);
    assert!(res.stats.ignored_indexes.is_empty() && res.stats.stale_indexes.is_empty(), "{:?}", res.stats);
    // Without the R-tree the block index (signed block_length) answers.
    t.drop_index("g", SpatialIndexKind::PackedRTree).unwrap();
    let res = t.query("g", &q).unwrap();
    assert_eq!(res.rows, vec![5]);
    assert!(res.stats.used_block_index && res.stats.blocks_skipped == 4, "{:?}", res.stats);
}

/// A table to read as plain H5Col: geometry column `g` (WKB) and `pt` (points) plus `id`.
fn plain_readable_table(p: &PathBuf) {
    let f = File::create(p).unwrap();
    let mut t = MarquetTable::create(&f, "/t").unwrap();
    t.add_column("id", &ColumnSpec::new(Dtype::U64)).unwrap();
    t.add_geometry_column("g", &GeometryColumnSpec::default().with_form(StorageForm::VarWkb)).unwrap();
    t.add_geometry_column("pt", &GeometryColumnSpec::default().with_form(StorageForm::Point { dims: Dimensions::Xy, f32: false })).unwrap();
    let pts = GeometryValues::Points { dims: Dimensions::Xy, x: vec![1.5, 2.5], y: vec![3.5, 4.5], z: None, m: None, valid: None };
    t.append(&GeoBatch::new().with_array("id", Array::from_u64(&[10, 20])).with_geometry("g", GeometryValues::Wkb(vec![Some(polygon(0.0, 0.0, true)), None])).with_geometry("pt", pts)).unwrap();
}

/// Ruling R16: MARQUET_VERSION 2.0 is read as plain H5Col by info, dump and export, with
/// the geometry columns reported as not interpretable.
#[test]
fn newer_major_version_reads_as_plain_h5col() {
    let p = tmp("v2.h5");
    plain_readable_table(&p);
    {
        let f = File::open_rw(&p).unwrap();
        h5::attr_write_ascii(f.table("/t").unwrap().id(), names::MARQUET_VERSION, "2.0").unwrap();
    }
    let v = crate::info::describe_file(&p, None).unwrap();
    let geoms = v["tables"][0]["geometry_columns"].as_array().unwrap();
    assert_eq!(geoms.len(), 2);
    assert!(geoms.iter().all(|g| g["interpretable"] == false && g["reason"].as_str().unwrap().contains("2.0")), "{geoms:?}");
    assert!(crate::info::render_text(&v).contains("geometry g: not interpretable"));
    let f = File::open(&p).unwrap();
    let d = crate::dump::dump_rows(&f, "/t", 0, 2, crate::dump::DumpFormat::Csv).unwrap();
    let lines: Vec<&str> = d.lines().collect();
    assert_eq!(lines[0], "id,g,pt");
    assert!(lines[1].starts_with("10,[1 3 0 0 0"), "the WKB bytes as plain list data: {d}");
    #[cfg(feature = "geoparquet")]
    {
        let out = tmp("v2.parquet");
        let rep = marquet::convert::export_geoparquet(&f, "/t", &out, &Default::default()).unwrap();
        assert!(rep.notes.iter().any(|n| n.contains("column g: not interpretable")), "{:?}", rep.notes);
        assert!(rep.notes.iter().any(|n| n.contains("without `geo` metadata")), "{:?}", rep.notes);
        assert_eq!(rep.rows, 2);
    }
}

/// HEP002 §6.2: a column with an unknown GEOMETRY_ENCODING is presented as a geometry
/// column that cannot be decoded; the rest of the table reads normally.
#[test]
fn unknown_encoding_column_reads_as_plain_h5col() {
    let p = tmp("unknown_encoding.h5");
    plain_readable_table(&p);
    {
        let f = File::open_rw(&p).unwrap();
        let t = f.table("/t").unwrap();
        let g = h5::object_open(t.id(), "g").unwrap();
        h5::attr_write_ascii(g.id(), names::GEOMETRY_ENCODING, "POLYGON").unwrap();
    }
    let v = crate::info::describe_file(&p, None).unwrap();
    let geoms = v["tables"][0]["geometry_columns"].as_array().unwrap();
    assert_eq!(geoms[0]["interpretable"], false);
    assert!(geoms[0]["reason"].as_str().unwrap().contains("\"POLYGON\""));
    assert_eq!(geoms[1]["interpretable"], true);
    assert_eq!(geoms[1]["storage_form"], "point xy float64");
    let f = File::open(&p).unwrap();
    let d = crate::dump::dump_rows(&f, "/t", 0, 2, crate::dump::DumpFormat::Wkt).unwrap();
    assert!(d.lines().nth(1).unwrap().ends_with("POINT (1.5 3.5)"), "{d}");
    #[cfg(feature = "geoparquet")]
    {
        let out = tmp("unknown_encoding.parquet");
        let rep = marquet::convert::export_geoparquet(&f, "/t", &out, &Default::default()).unwrap();
        assert!(rep.notes.iter().any(|n| n.contains("column g: not interpretable")), "{:?}", rep.notes);
        assert_eq!(rep.geometry_columns.iter().map(|g| g.0.as_str()).collect::<Vec<_>>(), ["pt"]);
    }
}
