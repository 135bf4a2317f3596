//! Issue #19, deterministic part: what a failure leaves behind (docs/FAULTS.md).
//!
//! * F1 — a failed append leaves indexes with the tokens of a state never committed; the
//!   next append of the same size must not make them match (they would describe rows that
//!   were never committed);
//! * F2 — an append of many batches is all-or-nothing, and its errors name the table row;
//! * F3 — writes refuse a table whose `NROWS` exceeds its columns;
//! * F6 — infinite ordinates (and positions on one axis only) are refused with the row
//!   named; NaN ordinates are kept (issue #32).

mod common;

use marquet::h5::Dtype;
use marquet::h5col::search_index::{self as index, range_filter};
use marquet::h5col::{Array, Batch, ColumnSpec, File};
use marquet::marquet::{GeoBatch, GeometryColumnSpec, GeometryValues, MarquetTable, StorageForm};
use marquet::query::{Query, TableQuery};
use marquet::wkb::{self, ByteOrder, Coord, Geometry, LineString};
use marquet::{validate, BBox, Dimensions, Error as MarquetError};

fn line(x0: f64, y0: f64) -> Vec<u8> {
    let coords = vec![Coord::xy(x0, y0), Coord::xy(x0 + 1.0, y0 + 0.5)];
    wkb::encode(&Geometry::LineString(LineString { dims: Dimensions::Xy, coords }), ByteOrder::LittleEndian)
}

fn lines(ids: std::ops::Range<u64>, shift: f64) -> GeoBatch {
    let g = ids.clone().map(|i| Some(line((i % 97) as f64 + shift, (i % 41) as f64))).collect();
    let id: Vec<i64> = ids.map(|i| i as i64).collect();
    GeoBatch::new().with_array("id", Array::from_i64(&id)).with_geometry("g", GeometryValues::Wkb(g))
}

fn new_table(f: &File) -> MarquetTable {
    let mut t = MarquetTable::create(f, "/t").unwrap();
    t.add_geometry_column("g", &GeometryColumnSpec::default().with_form(StorageForm::VarWkb).with_covering("g_bbox")).unwrap();
    t.add_column("id", &ColumnSpec::new(Dtype::I64)).unwrap();
    t
}

fn assert_conformant(path: &std::path::Path) {
    let r = validate::validate_file(path, &validate::Options::default()).unwrap();
    let errs: Vec<String> = r.errors().map(|e| e.to_string()).collect();
    assert!(errs.is_empty(), "validator: {errs:?}");
}

/// Every indexed query equals a full scan.
fn assert_indexes_honest(t: &MarquetTable) {
    for w in [BBox::xy(0.0, 0.0, 30.0, 20.0), BBox::xy(40.5, 3.0, 41.0, 40.0), BBox::xy(-10.0, -10.0, 200.0, 200.0)] {
        let scan = t.query("g", &Query::bbox(w).with_indexes(false)).unwrap();
        let with = t.query("g", &Query::bbox(w)).unwrap();
        assert_eq!(with.rows, scan.rows, "window {w:?}");
    }
}

#[test]
fn f1_tokens_of_a_failed_append_never_match_a_later_state() {
    let _s = common::serial();
    let dir = common::TempDir::new("faults-f1");
    let f = File::create(dir.join("t.h5")).unwrap();
    let t = f.create_table("/t").unwrap();
    t.add_column("ts", &ColumnSpec::new(Dtype::I64).with_chunk_rows(4)).unwrap();
    t.append(&Batch::new().with_array("ts", Array::from_i64(&(0..10).collect::<Vec<_>>()))).unwrap();
    let ip = index::build_chunk_minmax(&t, "ts").unwrap();
    // An append that fails after step 4 (tokens and content of the index written for the
    // state it never commits), as a full disk in its flush would.
    let err = t
        .append_with(&Batch::new().with_array("ts", Array::from_i64(&[1000, 1001])), &mut |_, _, _| {
            Err(MarquetError::InvalidArgument("injected failure before the commit".into()))
        })
        .unwrap_err();
    assert!(err.to_string().contains("injected"), "{err}");
    assert_eq!(t.nrows().unwrap(), 10);
    let info = index::index_info(&t, &ip, "ts").unwrap();
    assert_eq!((info.source_generation, info.source_nrows), (Some(t.generation().unwrap().unwrap() + 1), Some(12)));
    // The next append of the same size: before issue #19 it committed exactly the tokens
    // the failed one wrote, and the index (describing 1000, 1001) looked valid.
    t.append(&Batch::new().with_array("ts", Array::from_i64(&[5, 6]))).unwrap();
    assert_eq!(t.nrows().unwrap(), 12);
    let info = index::index_info(&t, &ip, "ts").unwrap();
    assert!(!info.is_valid(t.generation().unwrap(), 12), "a stale index revived: {info:?}");
    let (rows, st) = range_filter(&t, "ts", 999.0, 1002.0).unwrap();
    assert_eq!(rows, Vec::<u64>::new());
    assert!(!st.used_index);
    let (rows, _) = range_filter(&t, "ts", 5.0, 6.0).unwrap();
    assert_eq!(rows, vec![5, 6, 10, 11]);
    // A rebuild makes it valid again, and correct.
    index::build_chunk_minmax(&t, "ts").unwrap();
    let (rows, st) = range_filter(&t, "ts", 5.0, 6.0).unwrap();
    assert_eq!(rows, vec![5, 6, 10, 11]);
    assert!(st.used_index);
    drop(t);
    drop(f);
    assert_conformant(&dir.join("t.h5"));
}

#[test]
fn f2_a_many_batch_append_is_all_or_nothing_and_names_the_table_row() {
    let _s = common::serial();
    let dir = common::TempDir::new("faults-f2");
    let p = dir.join("t.h5");
    let f = File::create(&p).unwrap();
    let t = new_table(&f);
    t.append(&lines(0..100, 0.0)).unwrap();
    let before_bbox = t.geometry_column("g").unwrap().bbox;
    let before_gen = t.table().generation().unwrap();
    // Three batches; the second holds an infinite vertex at its 17th row.
    let mut s = t.writer(marquet::marquet::WriteOptions::in_order()).unwrap();
    s.write(&lines(100..150, 500.0)).unwrap();
    let mut bad = lines(150..200, 500.0);
    if let Some(GeometryValues::Wkb(v)) = bad.geometries.get_mut("g") {
        v[17] = Some(line(f64::INFINITY, 1.0));
    }
    let err = s.write(&bad).unwrap_err();
    drop(s);
    match &err {
        MarquetError::Refused { row, rule, .. } => {
            assert_eq!(*row, Some(167), "{err}");
            assert!(rule.contains("finite"), "{err}");
        }
        e => panic!("expected a refusal, got {e}"),
    }
    // Nothing of the first batch is visible: rows, summaries, GENERATION as before.
    assert_eq!(t.nrows().unwrap(), 100);
    assert_eq!(t.geometry_column("g").unwrap().bbox, before_bbox);
    assert_eq!(t.table().generation().unwrap(), before_gen);
    assert_indexes_honest(&t);
    // A retry overwrites the unused tail and commits once.
    let mut s = t.writer(marquet::marquet::WriteOptions::in_order()).unwrap();
    for b in 0..3u64 {
        s.write(&lines(100 + 50 * b..150 + 50 * b, 0.25)).unwrap();
    }
    assert_eq!(s.staged_rows(), 150);
    assert_eq!(s.finish().unwrap(), 250);
    let ids = t.table().read("id", 0, 250).unwrap();
    assert_eq!((0..250).map(|i| ids.get_i128(i).unwrap()).collect::<Vec<_>>(), (0..250).collect::<Vec<i128>>());
    assert_indexes_honest(&t);
    drop(t);
    drop(f);
    assert_conformant(&p);
}

#[test]
fn f3_writes_refuse_a_table_whose_nrows_exceeds_its_columns() {
    let _s = common::serial();
    let dir = common::TempDir::new("faults-f3");
    let p = dir.join("t.h5");
    {
        let f = File::create(&p).unwrap();
        let t = new_table(&f);
        t.append(&lines(0..4, 0.0)).unwrap();
        marquet::h5::attr_write_u64(t.table().id(), "NROWS", 1 << 31).unwrap();
    }
    let f = File::open_rw(&p).unwrap();
    let t = MarquetTable::open(&f, "/t").unwrap();
    let start = std::time::Instant::now();
    for e in [t.append(&lines(4..6, 0.0)).unwrap_err(), t.truncate(3).unwrap_err()] {
        match &e {
            MarquetError::Refused { rule, message, .. } => {
                assert_eq!(*rule, "HEP001 §13 req 2");
                assert!(message.contains("NROWS") && message.contains("not conformant; no write was made"), "{e}");
            }
            e => panic!("expected a refusal, got {e}"),
        }
    }
    assert!(start.elapsed().as_secs() < 10);
    assert_eq!(t.nrows().unwrap(), 1 << 31, "nothing written");
}

#[test]
fn f6_non_finite_vertices_are_refused_with_the_row() {
    let _s = common::serial();
    let dir = common::TempDir::new("faults-f6");
    let f = File::create(dir.join("t.h5")).unwrap();
    let t = new_table(&f);
    t.append(&lines(0..10, 0.0)).unwrap();
    let one_axis = wkb::encode(
        &Geometry::LineString(LineString { dims: Dimensions::Xy, coords: vec![Coord::xy(f64::NAN, 1.0), Coord::xy(f64::NAN, 2.0)] }),
        ByteOrder::LittleEndian,
    );
    for bad in [line(1.0, f64::NEG_INFINITY), line(f64::INFINITY, f64::INFINITY), one_axis] {
        let mut b = lines(10..13, 0.0);
        if let Some(GeometryValues::Wkb(v)) = b.geometries.get_mut("g") {
            v[2] = Some(bad);
        }
        let e = t.append(&b).unwrap_err();
        assert!(matches!(&e, MarquetError::Refused { row: Some(12), .. }), "{e}");
    }
    assert_eq!(t.nrows().unwrap(), 10);
    // A NaN ordinate is kept (issue #32): LINESTRING (NaN 1, 2 3) is stored as given.
    let kept = wkb::encode(
        &Geometry::LineString(LineString { dims: Dimensions::Xy, coords: vec![Coord::xy(f64::NAN, 1.0), Coord::xy(2.0, 3.0)] }),
        ByteOrder::LittleEndian,
    );
    let mut b = lines(10..13, 0.0);
    if let Some(GeometryValues::Wkb(v)) = b.geometries.get_mut("g") {
        v[2] = Some(kept.clone());
    }
    t.append(&b).unwrap();
    assert_eq!(t.read_wkb("g", 12, 13).unwrap().get(0), Some(&kept[..]));
    t.truncate(10).unwrap();
    // Points: an empty point (both NaN) is fine, one NaN or an infinity is not.
    let mut pts = MarquetTable::create(&f, "/p").unwrap();
    pts.add_geometry_column("g", &GeometryColumnSpec::default().with_form(StorageForm::Point { dims: Dimensions::Xy, f32: false })).unwrap();
    let pb = |x: f64, y: f64| GeoBatch::new().with_geometry("g", GeometryValues::Points { dims: Dimensions::Xy, x: vec![0.0, x], y: vec![0.0, y], z: None, m: None, valid: None });
    assert_eq!(pts.append(&pb(f64::NAN, f64::NAN)).unwrap(), 2);
    let e = pts.append(&pb(f64::INFINITY, 1.0)).unwrap_err();
    assert!(matches!(&e, MarquetError::Refused { row: Some(3), .. }), "{e}");
    assert!(pts.append(&pb(f64::NAN, 1.0)).is_err());
    assert_eq!(pts.nrows().unwrap(), 2);
    assert_eq!(t.nrows().unwrap(), 10);
}

#[test]
fn remove_table_undoes_a_table_and_keeps_the_file_conformant() {
    let _s = common::serial();
    let dir = common::TempDir::new("faults-remove");
    let p = dir.join("t.h5");
    let f = File::create(&p).unwrap();
    let t = new_table(&f);
    t.append(&lines(0..10, 0.0)).unwrap();
    let mut u = MarquetTable::create(&f, "/half/built").unwrap();
    u.add_geometry_column("g", &GeometryColumnSpec::default().with_form(StorageForm::VarWkb)).unwrap();
    assert_eq!(f.tables().unwrap(), vec!["/t".to_string(), "/half/built".to_string()]);
    drop(u);
    f.remove_table("//half/built/").unwrap();
    assert_eq!(f.tables().unwrap(), vec!["/t".to_string()]);
    assert!(f.remove_table("/").is_err());
    assert!(f.remove_table("/nope").is_err());
    drop(t);
    drop(f);
    assert_conformant(&p);
}

/// Issue #19 point 5: a list column whose `KIND` is not `OFFSETS` is an error in a table
/// that declares HEP001 1.0 (where `OFFSETS` is the only kind), and a warning ("present but
/// unreadable") in one that declares a later revision that may define it.
#[test]
fn an_unknown_list_kind_is_an_error_under_the_declared_revision() {
    use marquet::h5col::list::ListSpec;
    use marquet::h5col::{ColumnValues, ListArray, ListValues};
    let dir = common::TempDir::new("faults-kind");
    for (version, error) in [("1.0", true), ("1.7", false)] {
        let p = dir.join(&format!("kind-{version}.h5"));
        {
            let f = File::create(&p).unwrap();
            let t = f.create_table("/h").unwrap();
            t.add_list_column("readings", &ListSpec::of(Dtype::F32)).unwrap();
            let l = ListArray { offsets: vec![0, 2, 3], mask: None, values: ListValues::Leaf(Array::from_f32(&[1.0, 2.0, 3.0])) };
            t.append(&Batch::new().with("readings", ColumnValues::List(l))).unwrap();
        }
        let r = validate::validate_file(&p, &validate::Options::default()).unwrap();
        assert_eq!(r.errors().count(), 0, "{:?}", r.errors().map(|e| e.to_string()).collect::<Vec<_>>());
        {
            let f = File::open_rw(&p).unwrap();
            let g = marquet::h5::object_open(f.id(), "/h/readings").unwrap();
            marquet::h5::attr_write_ascii(g.id(), "KIND", "OFFSETZ").unwrap();
            let t = marquet::h5::object_open(f.id(), "/h").unwrap();
            marquet::h5::attr_write_ascii(t.id(), "VERSION", version).unwrap();
        }
        let r = validate::validate_file(&p, &validate::Options::default()).unwrap();
        let errs: Vec<String> = r.errors().map(|e| e.to_string()).collect();
        let all: Vec<String> = r.findings().map(|e| e.to_string()).collect();
        let named = all.iter().filter(|e| e.contains("/h/readings") && e.contains("\"OFFSETZ\"")).count();
        assert_eq!(named, 1, "{version}: {all:?}");
        if error {
            assert_eq!(errs.len(), 1, "{errs:?}");
            assert!(errs[0].contains("HEP001 §13 req 10") || errs[0].contains("§9"), "{errs:?}");
        } else {
            assert!(errs.is_empty(), "{errs:?}");
        }
    }
}
