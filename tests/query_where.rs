//! Spatial queries combined with attribute filters (`MarquetTable::query_where`) and the
//! CLI's `marquet query --where`, checked against brute force on a small seeded table.

mod common;

use std::ops::Bound;
use std::process::Command;

use marquet::h5::Dtype;
use marquet::h5col::predicate::{ColumnFilter, Scalar};
use marquet::h5col::search_index::build_bitmap;
use marquet::h5col::{search_index as index, Array, ColumnSpec, File};
use marquet::marquet::{GeoBatch, GeometryColumnSpec, GeometryValues, MarquetTable, StorageForm};
use marquet::query::{Query, TableQuery};
use marquet::{BBox, Dimensions};

const N: usize = 400;

fn marquet(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_marquet")).args(args).output().unwrap();
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// Points on a 20 x 20 grid (x = i % 20, y = i / 20), `pop` = i * 10, `kind` = i % 3.
fn write(path: &std::path::Path) {
    let f = File::create(path).unwrap();
    let mut t = MarquetTable::create(&f, "/pts").unwrap();
    t.add_geometry_column("g", &GeometryColumnSpec::default().with_form(StorageForm::Point { dims: Dimensions::Xy, f32: false }).with_chunk_rows(64))
        .unwrap();
    t.table().add_column("pop", &ColumnSpec::new(Dtype::I64).with_chunk_rows(64)).unwrap();
    t.table().add_column("kind", &ColumnSpec::new(Dtype::I8).with_chunk_rows(64)).unwrap();
    let x: Vec<f64> = (0..N).map(|i| (i % 20) as f64).collect();
    let y: Vec<f64> = (0..N).map(|i| (i / 20) as f64).collect();
    t.append(
        &GeoBatch::new()
            .with_geometry("g", GeometryValues::Points { dims: Dimensions::Xy, x, y, z: None, m: None, valid: None })
            .with_array("pop", Array::from_i64(&(0..N as i64).map(|i| i * 10).collect::<Vec<_>>()))
            .with_array("kind", Array::from_i8(&(0..N).map(|i| (i % 3) as i8).collect::<Vec<_>>())),
    )
    .unwrap();
    index::build_chunk_minmax(t.table(), "pop").unwrap();
    build_bitmap(t.table(), "kind", 16).unwrap();
}

fn brute(x0: f64, y0: f64, x1: f64, y1: f64, pop_ge: i64, kind: i8) -> Vec<u64> {
    (0..N as u64)
        .filter(|&i| {
            let (x, y) = ((i % 20) as f64, (i / 20) as f64);
            x >= x0 && x <= x1 && y >= y0 && y <= y1 && (i as i64) * 10 >= pop_ge && (i % 3) as i8 == kind
        })
        .collect()
}

#[test]
fn spatial_and_attribute_filters_combine() {
    let _serial = common::serial();
    let dir = common::TempDir::new("query-where");
    let p = dir.join("pts.h5");
    write(&p);
    let f = File::open(&p).unwrap();
    let t = MarquetTable::open(&f, "/pts").unwrap();
    let filters = vec![
        ("pop".to_string(), ColumnFilter::Range { lo: Bound::Included(Scalar::Int(2000)), hi: Bound::Unbounded }),
        ("kind".to_string(), ColumnFilter::Eq(Scalar::Int(1))),
    ];
    let q = Query::bbox(BBox::xy(2.5, 5.0, 8.0, 15.5));
    let r = t.query_where("g", &q, &filters).unwrap();
    assert_eq!(r.rows, brute(2.5, 5.0, 8.0, 15.5, 2000, 1));
    assert!(!r.rows.is_empty());
    assert_eq!(r.wkb, None, "WKB only when asked for");
    // With the rows' WKB (what `query --format` prints): the WKB of exactly the rows kept
    // after the attribute filters, as an independent read of those rows gives it.
    let rw = t.query_where("g", &q.clone().with_wkb(true), &filters).unwrap();
    assert_eq!(rw.rows, r.rows);
    assert_eq!(rw.wkb.as_ref(), Some(&t.take_wkb("g", &r.rows).unwrap()));
    let mut reader = marquet::SpatialReader::open(&f, "/pts", None).unwrap();
    let rr = reader.query_where(&q.clone().with_wkb(true), &filters).unwrap();
    assert_eq!((rr.rows, rr.wkb), (rw.rows.clone(), rw.wkb.clone()));
    assert_eq!(r.attributes[0].index_used.as_deref(), Some("CHUNK_MINMAX"));
    assert_eq!((r.attributes[0].chunks_total, r.attributes[0].chunks_skipped), (7, 3)); // rows 0..192 hold pop < 2000
    assert_eq!(r.attributes[1].index_used.as_deref(), Some("BITMAP"));
    // Without indexes: the same rows, every filter a scan.
    let r2 = t.query_where("g", &q.clone().with_indexes(false), &filters).unwrap();
    assert_eq!(r2.rows, r.rows);
    assert!(r2.attributes.iter().all(|s| s.index_used.is_none() && s.rows_examined == N as u64));
    // Attribute filters that match nothing skip the spatial query.
    let none = vec![("pop".to_string(), ColumnFilter::Eq(Scalar::Int(5)))];
    let r3 = t.query_where("g", &q, &none).unwrap();
    assert!(r3.rows.is_empty() && r3.spatial.is_none());
}

#[test]
fn cli_where() {
    let _serial = common::serial();
    let dir = common::TempDir::new("cli-where");
    let p = dir.join("pts.h5");
    write(&p);
    let ps = p.display().to_string();
    let want = brute(2.5, 5.0, 8.0, 15.5, 2000, 1);
    let (code, out, err) = marquet(&["query", &ps, "--bbox", "2.5,5,8,15.5", "--where", "pop >= 2000", "--where", "kind = 1", "--stats"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, want.iter().map(|r| format!("{r}\n")).collect::<String>());
    assert!(err.contains("where pop: CHUNK_MINMAX examined 208 rows, skipped 3/7 chunks"), "{err}");
    assert!(err.contains("where kind: BITMAP examined 0 rows, skipped 0/7 chunks"), "{err}");
    assert!(err.contains(&format!("| matched {}", want.len())), "{err}");
    // --format with filters prints the rows as `dump` prints them (the geometry from the
    // query's answer, the other columns read).
    let (code, all, _) = marquet(&["dump", &ps, "--format", "csv"]);
    assert_eq!(code, 0);
    let all: Vec<&str> = all.lines().collect();
    let mut expect = vec![all[0]];
    expect.extend(want.iter().map(|&r| all[1 + r as usize]));
    let (code, out, err) = marquet(&["query", &ps, "--bbox", "2.5,5,8,15.5", "--where", "pop >= 2000", "--where", "kind = 1", "--format", "csv"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().collect::<Vec<_>>(), expect);
    // --where alone; `in`; --no-index gives the same answer by scans.
    let (code, out, _) = marquet(&["query", &ps, "--where", "pop < 100", "--where", "kind in (0, 2)"]);
    assert_eq!(code, 0);
    assert_eq!(out, "0\n2\n3\n5\n6\n8\n9\n");
    let (code, out2, err) = marquet(&["query", &ps, "--where", "pop < 100", "--where", "kind in (0, 2)", "--no-index", "--stats"]);
    assert_eq!((code, out2), (0, out));
    assert!(err.contains("where pop: scan examined 400 rows"), "{err}");
    // Bad predicates and unknown columns are usage errors (exit 2).
    let (code, _, err) = marquet(&["query", &ps, "--where", "pop ~ 3"]);
    assert_eq!(code, 2);
    assert!(err.contains("expected \"COLUMN OP VALUE\""), "{err}");
    let (code, _, _) = marquet(&["query", &ps, "--where", "nope = 3"]);
    assert_eq!(code, 2);
}

/// `FeatureWriter::write_rows_given` (what `marquet query --format geojson` runs) builds the
/// geometry of each feature from the WKB it is given and reads the other columns: given
/// the WKB of other rows, the features carry those geometries and their own rows' `pop`,
/// so the stored geometry was not read (issue #33 item 1).
#[cfg(feature = "geoparquet")]
#[test]
fn features_take_the_geometry_they_are_given() {
    let _serial = common::serial();
    let dir = common::TempDir::new("features-given");
    let p = dir.join("pts.h5");
    write(&p);
    let f = File::open(&p).unwrap();
    let t = MarquetTable::open(&f, "/pts").unwrap();
    let rows = [3u64, 7, 20, 399];
    let other = t.take_wkb("g", &[100, 101, 102, 103, 104]).unwrap();
    let features = |given: Option<(&str, &marquet::WkbBuffer, usize)>| -> marquet::Result<Vec<serde_json::Value>> {
        let mut fw = marquet::convert::FeatureWriter::new(&t)?;
        let mut buf = Vec::new();
        fw.begin(&mut buf).unwrap();
        fw.write_rows_given(&mut buf, &rows, given)?;
        fw.end(&mut buf).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&buf).unwrap();
        Ok(v["features"].as_array().unwrap().clone())
    };
    let stored = features(None).unwrap();
    let given = features(Some(("g", &other, 1))).unwrap();
    assert_eq!(stored.len(), 4);
    assert_eq!(given.len(), 4);
    for (k, (s, g)) in stored.iter().zip(&given).enumerate() {
        let r = rows[k];
        assert_eq!(s["properties"]["pop"], r * 10);
        assert_eq!(g["properties"], s["properties"]);
        assert_eq!(s["geometry"]["coordinates"], serde_json::json!([(r % 20) as f64, (r / 20) as f64]));
        let o = 101 + k as u64;
        assert_eq!(g["geometry"]["coordinates"], serde_json::json!([(o % 20) as f64, (o / 20) as f64]));
    }
    // Fewer values than rows: a typed error naming the column, no panic.
    let e = features(Some(("g", &other, 2))).unwrap_err();
    assert!(e.to_string().contains("/pts/g: 5 WKB values given for 4 rows from value 2"), "{e}");
}
