//! Marquet geometry columns: the three storage forms, attributes, round trips.

use marquet::h5::{self, Dtype, Space};
use marquet::h5col::{Array, File};
use marquet::marquet::{choose_form, Crs, Edges, GeoBatch, GeometryColumnSpec, GeometryValues, MarquetTable, StorageForm};
use marquet::spec::names;
use marquet::{BBox, Dimensions, GeometryKind, GeometryType, Error as MarquetError};

mod common;

use marquet_dev::stations;

fn tmp(name: &str) -> String {
    let d = std::env::temp_dir().join(format!("marquet-forms-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name).display().to_string()
}

fn empty_point() -> Vec<u8> {
    let mut w = vec![0x01, 0x01, 0, 0, 0];
    w.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0xf8, 0x7f, 0, 0, 0, 0, 0, 0, 0xf8, 0x7f]);
    w
}

#[test]
fn stations_all_three_forms_read_back_bit_identical() {
    let _serial = common::serial(); // h5dump children inherit HDF5 file locks
    let p = tmp("stations.h5");
    stations::write_stations(&p).unwrap();
    let f = File::open(&p).unwrap();
    let t = MarquetTable::open(&f, "/stations").unwrap();
    assert_eq!(t.geometry_column_names().unwrap(), vec!["location", "location_wkb", "location_wkb_list"]);
    for name in ["location", "location_wkb", "location_wkb_list"] {
        let b = t.read_wkb(name, 0, 3).unwrap();
        assert_eq!(b.get(0).unwrap(), &stations::STATION_WKB[..], "{name}");
        assert_eq!(b.get(1), None, "{name}");
        assert_eq!(b.get(2).unwrap(), &empty_point()[..], "{name}");
        let info = t.geometry_column(name).unwrap();
        assert_eq!(info.types, Some(vec![GeometryType::new(GeometryKind::Point, Dimensions::Xy)]));
        let (bb, z, m) = info.bbox.unwrap();
        assert_eq!((bb.xmin, bb.ymin, bb.xmax, bb.ymax, z, m), (-88.2434, 40.1164, -88.2434, 40.1164, false, false));
        assert_eq!(info.crs, Crs::Default);
    }
    // The raw layout of §15.1.
    let tb = t.table();
    let off = tb.list_column("location_wkb_list").unwrap().offsets(0, 3).unwrap();
    assert_eq!(off, vec![0, 21, 21, 42]);
    assert_eq!(tb.list_column("location_wkb_list").unwrap().mask(0, 3).unwrap(), Some(vec![true, false, true]));
    let c = tb.column("location_wkb").unwrap();
    assert_eq!(c.fill().unwrap(), &names::opaque_fill(21)[..]);
    assert_eq!(c.dtype(), &Dtype::Opaque { size: 21, tag: "WKB".into() });
    let pc = tb.column("location").unwrap();
    assert_eq!(pc.fill().unwrap(), &[names::FILL_F64.to_le_bytes(), names::FILL_F64.to_le_bytes()].concat()[..]);
    let pts = t.read_points("location", 0, 3).unwrap();
    assert_eq!(pts.valid, vec![true, false, true]);
    assert_eq!(pts.x[0], -88.2434);
    assert!(pts.x[2].is_nan() && pts.y[2].is_nan());
    // VALUES has no user-defined fill value (HEP002 §7.2).
    let lc = tb.list_column("location_wkb_list").unwrap();
    assert_eq!(lc.values_info().unwrap().fill, None);
    // Marker attributes.
    let mv = h5::attr_read(tb.id(), names::MARQUET_VERSION).unwrap().unwrap();
    assert_eq!(mv.dtype, Dtype::FixedString { size: 4, utf8: false, nullterm: true, spacepad: false });
    assert_eq!(mv.as_str(), Some("1.0"));
    let gc = h5::attr_read(tb.id(), names::GEOMETRY_COLUMNS).unwrap().unwrap();
    assert_eq!((gc.dtype, gc.space), (Dtype::StdRef, Space::Simple(vec![3])));
}

fn poly(x0: f64, y0: f64, z: f64) -> Vec<u8> {
    // POLYGON Z ((x0 y0 z, x0+1 y0 z, x0+1 y0+1 z, x0 y0 z))
    let mut w = vec![0x01];
    w.extend_from_slice(&1003u32.to_le_bytes());
    w.extend_from_slice(&1u32.to_le_bytes());
    w.extend_from_slice(&4u32.to_le_bytes());
    for (x, y) in [(x0, y0), (x0 + 1.0, y0), (x0 + 1.0, y0 + 1.0), (x0, y0)] {
        for v in [x, y, z] {
            w.extend_from_slice(&v.to_le_bytes());
        }
    }
    w
}

#[test]
fn var_wkb_with_covering_widens_summaries_on_append() {
    let _serial = common::serial(); // h5dump children inherit HDF5 file locks
    let p = tmp("lakes.h5");
    let f = File::create(&p).unwrap();
    let mut t = MarquetTable::create(&f, "/lakes").unwrap();
    t.add_column("lake_id", &marquet::h5col::ColumnSpec::new(Dtype::U64)).unwrap();
    let utm = r#"{"type":"ProjectedCRS","name":"NAD83(CSRS) / UTM zone 20N","base_crs":{"name":"NAD83(CSRS)","datum":{"type":"GeodeticReferenceFrame","name":"NAD83 Canadian Spatial Reference System","ellipsoid":{"name":"GRS 1980","semi_major_axis":6378137,"inverse_flattening":298.257222101}}},"conversion":{"name":"UTM zone 20N","method":{"name":"Transverse Mercator","id":{"authority":"EPSG","code":9807}}},"coordinate_system":{"subtype":"Cartesian","axis":[{"name":"Easting","abbreviation":"E","direction":"east","unit":"metre"},{"name":"Northing","abbreviation":"N","direction":"north","unit":"metre"}]},"id":{"authority":"EPSG","code":2961}}"#;
    t.add_geometry_column(
        "shoreline",
        &GeometryColumnSpec::default()
            .with_form(StorageForm::VarWkb)
            .with_crs(Crs::ProjJson(utm.into()))
            .with_orientation_ccw()
            .with_covering("shoreline_bbox"),
    )
    .unwrap();
    t.table().set_index_columns(&["lake_id"]).unwrap();
    t.append(
        &GeoBatch::new()
            .with_array("lake_id", Array::from_u64(&[1, 2]))
            .with_geometry("shoreline", GeometryValues::Wkb(vec![Some(poly(0.0, 0.0, 5.0)), Some(poly(10.0, 3.0, 7.0))])),
    )
    .unwrap();
    let info = t.geometry_column("shoreline").unwrap();
    let (b, z, m) = info.bbox.unwrap();
    assert_eq!((b.xmin, b.ymin, b.zmin, b.xmax, b.ymax, b.zmax, z, m), (0.0, 0.0, 5.0, 11.0, 4.0, 7.0, true, false));
    assert_eq!(info.types.unwrap(), vec![GeometryType::new(GeometryKind::Polygon, Dimensions::Xyz)]);
    assert_eq!(info.covering.as_deref(), Some("shoreline_bbox"));
    assert!(info.orientation_ccw);
    assert_eq!(info.crs.id(), Some(("EPSG".into(), "2961".into())));
    // A 2-D multipoint and a null: types grow, Z bounds drop (R11), covering gets fill.
    let mut mp = vec![0x01];
    mp.extend_from_slice(&4u32.to_le_bytes());
    mp.extend_from_slice(&1u32.to_le_bytes());
    mp.extend_from_slice(&[0x01, 1, 0, 0, 0]);
    mp.extend_from_slice(&(-5.0f64).to_le_bytes());
    mp.extend_from_slice(&(2.0f64).to_le_bytes());
    t.append(
        &GeoBatch::new()
            .with_array("lake_id", Array::from_u64(&[3, 4]))
            .with_geometry("shoreline", GeometryValues::Wkb(vec![Some(mp.clone()), None])),
    )
    .unwrap();
    let info = t.geometry_column("shoreline").unwrap();
    let (b, z, _) = info.bbox.unwrap();
    assert_eq!((b.xmin, b.ymin, b.xmax, b.ymax, z), (-5.0, 0.0, 11.0, 4.0, false));
    let names: Vec<String> = info.types.unwrap().iter().map(|t| t.name()).collect();
    assert_eq!(names, vec!["MultiPoint", "Polygon Z"]);
    let cov = t.table().read("shoreline_bbox", 0, 4).unwrap();
    let cc = t.table().column("shoreline_bbox").unwrap();
    assert_eq!(cov.missing(cc.fill()), vec![false, false, false, true]);
    let w = t.read_wkb("shoreline", 0, 4).unwrap();
    assert_eq!(w.get(1).unwrap(), &poly(10.0, 3.0, 7.0)[..]);
    assert_eq!(w.get(2).unwrap(), &mp[..]);
    assert_eq!(w.get(3), None);
    assert!(t.table().list_column("shoreline").unwrap().has_mask());
}

#[test]
fn values_that_do_not_fit_the_form_are_refused_without_changing_the_file() {
    let _serial = common::serial(); // h5dump children inherit HDF5 file locks
    let p = tmp("refuse.h5");
    let f = File::create(&p).unwrap();
    let mut t = MarquetTable::create(&f, "/t").unwrap();
    t.add_geometry_column("pt", &GeometryColumnSpec::default().with_form(StorageForm::Point { dims: Dimensions::Xy, f32: false })).unwrap();
    let p3 = {
        let mut w = vec![0x01];
        w.extend_from_slice(&1001u32.to_le_bytes());
        for v in [1.0f64, 2.0, 3.0] {
            w.extend_from_slice(&v.to_le_bytes());
        }
        w
    };
    let e = t.append(&GeoBatch::new().with_geometry("pt", GeometryValues::Wkb(vec![Some(p3.clone())]))).unwrap_err();
    assert!(e.to_string().contains("replace the column first"), "{e}");
    assert_eq!(t.nrows().unwrap(), 0);
    // Bad WKB is refused with row number.
    let e = t.append(&GeoBatch::new().with_geometry("pt", GeometryValues::Wkb(vec![None, Some(vec![1, 1, 0])]))).unwrap_err();
    assert!(matches!(e, MarquetError::InvalidWkb { row: Some(1), .. }), "{e}");
    assert_eq!(t.nrows().unwrap(), 0);
    assert_eq!(choose_form(&GeometryValues::Wkb(vec![Some(p3.clone()), None])).unwrap(), StorageForm::Point { dims: Dimensions::Xyz, f32: false });
    assert_eq!(choose_form(&GeometryValues::Wkb(vec![Some(p3), Some(poly(0.0, 0.0, 1.0))])).unwrap(), StorageForm::VarWkb);
    // Non-planar edges need a geographic CRS.
    let e = t
        .add_geometry_column(
            "g",
            &GeometryColumnSpec::default().with_form(StorageForm::VarWkb).with_crs(Crs::Unknown).with_edges(Edges::Spherical),
        )
        .unwrap_err();
    assert!(e.to_string().contains("geographic"), "{e}");
    let _ = BBox::EMPTY;
}

/// Under `scripts/test.sh` (`MARQUET_REQUIRE_H5DUMP=1`) and CI a golden-DDL test without
/// h5dump fails instead of skipping (issue 18).
#[test]
fn golden_ddl_tests_fail_without_h5dump_when_required() {
    assert!(common::h5dump_decision("t", None, true).unwrap_err().contains("no h5dump found"));
    assert_eq!(common::h5dump_decision("t", None, false), Ok(None));
    let p = std::path::PathBuf::from("/x/h5dump");
    assert_eq!(common::h5dump_decision("t", Some(p.clone()), true), Ok(Some(p)));
    let script = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/test.sh")).unwrap();
    assert!(script.lines().any(|l| l.trim() == "export MARQUET_REQUIRE_H5DUMP=1"), "scripts/test.sh must require h5dump");
    if std::env::var("MARQUET_REQUIRE_H5DUMP").is_ok_and(|v| v == "1") {
        assert!(common::find_h5dump().is_some(), "MARQUET_REQUIRE_H5DUMP=1 but no h5dump");
    }
}

/// HEP002 §15.1 checked against a real h5dump ≥ 1.12 (golden DDL in testdata/golden).
#[test]
fn stations_h5dump_matches_golden_ddl() {
    let _serial = common::serial();
    let dir = common::TempDir::new("hep002-15-1");
    let file = dir.join("stations.h5");
    stations::write_stations(&file.display().to_string()).unwrap();
    let Some(h5dump) = common::h5dump_or_skip("hep002_15_1_stations") else { return };
    let ddl = common::run_h5dump(&h5dump, &["-p"], &file);
    // The three spec facts of §15.1, checked independently of the golden file.
    assert!(ddl.contains("(0): 01:01:00:00:00:2b:f6:97:dd:93:0f:56:c0:90:a0:f8:31:e6:0e:44:40"), "{ddl}");
    assert!(ddl.contains("(1): 46:49:4c:4c:01:02:03:04:05:06:07:08:09:0a:0b:0c:0d:0e:0f:10:11"), "{ddl}");
    assert!(ddl.contains("DATATYPE  H5T_REFERENCE { H5T_STD_REF }"), "{ddl}");
    assert!(ddl.contains("H5T_OPAQUE {\n"), "opaque type missing");
    common::check_golden("hep002_15_1_stations", &common::normalize_ddl(&ddl, &file));
}

/// `take_wkb` and `Column::take` return exactly what row-by-row reads return, for every
/// storage form, with nulls, rows spanning chunks and spans, and refuse bad row lists.
#[test]
fn take_matches_row_reads_in_every_form() {
    let p = tmp("take.h5");
    let _ = std::fs::remove_file(&p);
    let f = File::create(&p).unwrap();
    let mut t = MarquetTable::create(&f, "/take").unwrap();
    let n = 3_000u64;
    t.add_column("id", &marquet::h5col::ColumnSpec::new(Dtype::U64).with_chunk_rows(256)).unwrap();
    let forms = [
        ("pt", StorageForm::Point { dims: Dimensions::Xy, f32: false }),
        ("fixed", StorageForm::FixedWkb { size: 21 }),
        ("var", StorageForm::VarWkb),
    ];
    for (name, form) in forms {
        let spec = GeometryColumnSpec::default().with_form(form).with_chunk_rows(256).with_values_chunk_bytes(1000);
        t.add_geometry_column(name, &spec).unwrap();
    }
    let point = |i: u64| {
        let mut w = vec![1u8, 1, 0, 0, 0];
        w.extend_from_slice(&(i as f64).to_le_bytes());
        w.extend_from_slice(&(-(i as f64) / 2.0).to_le_bytes());
        w
    };
    let vals: Vec<Option<Vec<u8>>> = (0..n).map(|i| (i % 7 != 3).then(|| point(i))).collect();
    let mut batch = GeoBatch::new().with_array("id", Array::from_u64(&(0..n).map(|i| i * 10).collect::<Vec<_>>()));
    for (name, _) in forms {
        batch = batch.with_geometry(name, GeometryValues::Wkb(vals.clone()));
    }
    t.append(&batch).unwrap();
    let mut rng = common::Rng::new(7);
    let mut rows: Vec<u64> = (0..n).filter(|_| rng.next_u64().is_multiple_of(5)).collect();
    rows.extend([0, n - 1]);
    rows.sort_unstable();
    rows.dedup();
    for (name, _) in forms {
        let got = t.take_wkb(name, &rows).unwrap();
        assert_eq!(got.len(), rows.len(), "{name}");
        for (k, &r) in rows.iter().enumerate() {
            assert_eq!(got.get(k), vals[r as usize].as_deref(), "{name} row {r}");
        }
        assert!(t.take_wkb(name, &[]).unwrap().is_empty());
        let e = t.take_wkb(name, &[5, 4]).unwrap_err().to_string();
        assert!(e.contains(&format!("/take/{name}: rows to take must be strictly ascending (5 then 4)")), "{e}");
        let e = t.take_wkb(name, &[1, n]).unwrap_err().to_string();
        assert!(e.contains(&format!("row {n} out of range for {n} rows")), "{e}");
    }
    let ids = t.table().column("id").unwrap().take(&rows).unwrap();
    let want: Vec<u8> = rows.iter().flat_map(|r| (r * 10).to_le_bytes()).collect();
    assert_eq!(ids.bytes, want);
}
