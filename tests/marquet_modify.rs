//! HEP002 §11: in-place geometry updates, truncation, column replacement.

mod common;

use marquet::h5col::{Array, File};
use marquet::marquet::{GeoBatch, GeometryColumnSpec, GeometryValues, MarquetTable, StorageForm};
use marquet::wkb::{self, ByteOrder, Coord, Geometry, Point};
use marquet::{Dimensions, GeometryKind, GeometryType};

fn pt(x: f64, y: f64) -> Vec<u8> {
    wkb::encode(&Geometry::Point(Point { dims: Dimensions::Xy, coord: Coord::xy(x, y) }), ByteOrder::LittleEndian)
}
fn line(n: usize, x0: f64) -> Vec<u8> {
    let coords = (0..n).map(|i| Coord::xy(x0 + i as f64, i as f64)).collect();
    wkb::encode(&Geometry::LineString(wkb::LineString { dims: Dimensions::Xy, coords }), ByteOrder::LittleEndian)
}

#[test]
fn update_var_wkb_with_covering_keeps_everything_consistent() {
    let _s = common::serial();
    let dir = common::TempDir::new("modify-update");
    let f = File::create(dir.join("u.h5")).unwrap();
    let mut t = MarquetTable::create(&f, "/t").unwrap();
    t.add_geometry_column("g", &GeometryColumnSpec::default().with_form(StorageForm::VarWkb).with_covering("g_bbox")).unwrap();
    t.add_column("id", &marquet::h5col::ColumnSpec::new(marquet::h5::Dtype::I64)).unwrap();
    t.append(
        &GeoBatch::new()
            .with_array("id", Array::from_i64(&[0, 1, 2, 3]))
            .with_geometry("g", GeometryValues::Wkb(vec![Some(line(2, 0.0)), Some(line(3, 10.0)), None, Some(line(2, 20.0))])),
    )
    .unwrap();
    // Row 1 grows, row 2 becomes a point: the rows after are rewritten.
    t.update_geometries("g", 1, &GeometryValues::Wkb(vec![Some(line(6, 100.0)), Some(pt(-5.0, -5.0))])).unwrap();
    let w = t.read_wkb("g", 0, 4).unwrap();
    assert_eq!(w.get(0).unwrap(), &line(2, 0.0)[..]);
    assert_eq!(w.get(1).unwrap(), &line(6, 100.0)[..]);
    assert_eq!(w.get(2).unwrap(), &pt(-5.0, -5.0)[..]);
    assert_eq!(w.get(3).unwrap(), &line(2, 20.0)[..]);
    let info = t.geometry_column("g").unwrap();
    let (b, _, _) = info.bbox.unwrap();
    assert_eq!((b.xmin, b.ymin, b.xmax, b.ymax), (-5.0, -5.0, 105.0, 5.0));
    let names: Vec<String> = info.types.unwrap().iter().map(|t| t.name()).collect();
    assert_eq!(names, vec!["Point", "LineString"]);
    // Covering boxes were tightened to the new geometries.
    let cov = t.table().read("g_bbox", 1, 3).unwrap();
    assert_eq!(cov.display(0), "{xmin: 100, ymin: 0, xmax: 105, ymax: 5}");
    assert_eq!(cov.display(1), "{xmin: -5, ymin: -5, xmax: -5, ymax: -5}");
    // Tighten makes BBOX exact again after truncation.
    t.truncate(2).unwrap();
    t.tighten("g").unwrap();
    let (b, _, _) = t.geometry_column("g").unwrap().bbox.unwrap();
    assert_eq!((b.xmin, b.ymin, b.xmax, b.ymax), (0.0, 0.0, 105.0, 5.0));
    assert_eq!(t.table().read("id", 0, 2).unwrap().get_f64(1), Some(1.0));
    assert!(t.table().read("id", 0, 3).is_err());
}


#[test]
fn a_3d_point_needs_a_replaced_column() {
    let _s = common::serial();
    let dir = common::TempDir::new("modify-replace");
    let f = File::create(dir.join("r.h5")).unwrap();
    let mut t = MarquetTable::create(&f, "/t").unwrap();
    t.add_column("id", &marquet::h5col::ColumnSpec::new(marquet::h5::Dtype::I64)).unwrap();
    t.add_geometry_column("loc", &GeometryColumnSpec::default().with_form(StorageForm::Point { dims: Dimensions::Xy, f32: false })).unwrap();
    t.append(
        &GeoBatch::new()
            .with_array("id", Array::from_i64(&[7, 8, 9]))
            .with_geometry("loc", GeometryValues::Wkb(vec![Some(pt(1.0, 2.0)), None, Some(pt(3.0, 4.0))])),
    )
    .unwrap();
    let p3 = wkb::encode(&Geometry::Point(Point { dims: Dimensions::Xyz, coord: Coord::xyz(5.0, 6.0, 7.0) }), ByteOrder::LittleEndian);
    let e = t.append(&GeoBatch::new().with_array("id", Array::from_i64(&[10])).with_geometry("loc", GeometryValues::Wkb(vec![Some(p3.clone())]))).unwrap_err();
    assert!(e.to_string().contains("replace the column first"), "{e}");
    // Replace with variable-length WKB (HEP002 §11.2), with a transform shifting x by 1000.
    let shift = |g: Geometry| -> marquet::Result<Geometry> {
        Ok(match g {
            Geometry::Point(mut p) => {
                p.coord.x += 1000.0;
                Geometry::Point(p)
            }
            o => o,
        })
    };
    t.replace_geometry_column("loc", &GeometryColumnSpec::default().with_form(StorageForm::VarWkb), Some(&shift)).unwrap();
    assert_eq!(t.geometry_column_names().unwrap(), vec!["loc"]);
    assert_eq!(t.table().column_names().unwrap(), vec!["id", "loc"]);
    let info = t.geometry_column("loc").unwrap();
    assert_eq!(info.form, StorageForm::VarWkb);
    t.append(&GeoBatch::new().with_array("id", Array::from_i64(&[10])).with_geometry("loc", GeometryValues::Wkb(vec![Some(p3.clone())]))).unwrap();
    let w = t.read_wkb("loc", 0, 4).unwrap();
    assert_eq!(w.get(0).unwrap(), &pt(1001.0, 2.0)[..]);
    assert_eq!(w.get(1), None);
    assert_eq!(w.get(3).unwrap(), &p3[..]);
    let info = t.geometry_column("loc").unwrap();
    let mut ty = info.types.unwrap();
    ty.sort();
    assert_eq!(ty, vec![GeometryType::new(GeometryKind::Point, Dimensions::Xy), GeometryType::new(GeometryKind::Point, Dimensions::Xyz)]);
    assert!(!marquet::h5::link_exists(t.table().id(), "loc__replacing").unwrap());
}

/// A replacement killed during step 1 leaves its new column behind as an ordinary H5Col
/// column (HEP002 §11.2); the next replacement deletes it and succeeds.
#[test]
fn replacement_removes_the_leftover_of_a_crashed_one() {
    let _s = common::serial();
    let dir = common::TempDir::new("modify-leftover");
    let path = dir.join("l.h5");
    let f = File::create(&path).unwrap();
    let mut t = MarquetTable::create(&f, "/t").unwrap();
    t.add_geometry_column("p", &GeometryColumnSpec::default().with_form(StorageForm::Point { dims: Dimensions::Xy, f32: false })).unwrap();
    t.append(&GeoBatch::new().with_geometry("p", GeometryValues::Wkb(vec![Some(pt(1.0, 2.0)), None, Some(pt(3.0, 4.0))]))).unwrap();
    // What a crash in step 1 leaves: a plain column named `<name>__replacing`.
    t.table().add_column("p__replacing", &marquet::h5col::ColumnSpec::new(marquet::h5::Dtype::F64)).unwrap();
    assert!(t.table().column_names().unwrap().contains(&"p__replacing".to_string()));
    t.replace_geometry_column("p", &GeometryColumnSpec::default().with_form(StorageForm::FixedWkb { size: 21 }), None).unwrap();
    assert_eq!(t.table().column_names().unwrap(), vec!["p"]);
    assert_eq!(t.geometry_column("p").unwrap().form, StorageForm::FixedWkb { size: 21 });
    let w = t.read_wkb("p", 0, 3).unwrap();
    assert_eq!((w.get(0), w.get(1), w.get(2)), (Some(&pt(1.0, 2.0)[..]), None, Some(&pt(3.0, 4.0)[..])));
    drop(t);
    drop(f);
    let r = marquet::validate::validate_file(&path, &Default::default()).unwrap();
    assert_eq!(r.errors().count(), 0, "{:?}", r.errors().map(|e| e.to_string()).collect::<Vec<_>>());
}
