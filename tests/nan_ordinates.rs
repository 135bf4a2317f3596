//! Issue #32: NaN ordinates are kept (docs/FAULTS.md F6). HEP002 §6.4 defines containment
//! "ignoring coordinate values that are NaN" and the Parquet geospatial statistics ignore
//! NaN, so a WKB value with NaN ordinates is stored exactly as given, left out of every box
//! (BBOX, block boxes, R-tree items, covering values, Hilbert keys, export statistics),
//! seen by the query predicates as if its NaN vertices were not there, exported to
//! GeoParquet and imported again with equal bytes, and refused by the GeoJSON export (JSON
//! has no NaN). The real file is Apache parquet-testing's `geospatial-with-nan.parquet`
//! (testdata/peers/SOURCES.md); the independent readers are the `parquet` crate's
//! metadata, pyarrow and shapely (the test venv of scripts/pyvenv.sh).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use arrow_array::{Array as _, BinaryArray, RecordBatch, StringArray};
use marquet::convert::{convert, ConvertOptions};
use marquet::h5col::File;
use marquet::marquet::spatial_index::IndexState;
use marquet::marquet::{GeoBatch, GeometryColumnSpec, GeometryValues, MarquetTable, StorageForm, WriteLayout};
use marquet::query::{Predicate, Query, TableQuery, Window};
use marquet::wkb::{self, ByteOrder, Coord, Geometry, LineString};
use marquet::{BBox, Dimensions, Error as MarquetError};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

const NAN_FILE: &str = "testdata/peers/parquet-testing-geospatial/geospatial-with-nan.parquet";

/// Row 2 of the source as pyarrow reads it: `LINESTRING ZM (90 100 110 120, NaN NaN NaN NaN,
/// 130 140 150 160)`, little-endian ISO WKB with the quiet NaN `0x7ff8000000000000`.
const LINE_HEX: &str = "01ba0b000003000000000000000080564000000000000059400000000000805b400000000000005e40\
000000000000f87f000000000000f87f000000000000f87f000000000000f87f000000000040604000000000008061400000000000c062400000000000006440";

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(NAN_FILE)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn cli(args: &[&str]) -> (bool, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_marquet")).args(args).output().unwrap();
    (o.status.success(), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

fn read_parquet(p: &Path) -> Vec<RecordBatch> {
    let f = std::fs::File::open(p).unwrap();
    ParquetRecordBatchReaderBuilder::try_new(f).unwrap().build().unwrap().map(|b| b.unwrap()).collect()
}

/// (wkt truth, WKB) of every row of a parquet file with `wkt` and `geometry` columns,
/// sorted (the default layout reorders rows by Hilbert key).
fn parquet_rows(p: &Path) -> Vec<(String, String)> {
    let mut v = Vec::new();
    for b in read_parquet(p) {
        let w = b.column_by_name("wkt").unwrap().as_any().downcast_ref::<StringArray>().unwrap().clone();
        let g = b.column_by_name("geometry").unwrap().as_any().downcast_ref::<BinaryArray>().unwrap().clone();
        for i in 0..b.num_rows() {
            v.push((w.value(i).to_string(), hex(g.value(i))));
        }
    }
    v.sort();
    v
}

/// The same pairs from a Marquet table.
fn table_rows(t: &MarquetTable) -> Vec<(String, String)> {
    let n = t.nrows().unwrap();
    let g = t.read_wkb("geometry", 0, n).unwrap();
    let w = t.table().read("wkt", 0, n).unwrap();
    let size = w.bytes.len() / n as usize;
    let mut v: Vec<(String, String)> = (0..n as usize)
        .map(|i| {
            let s = &w.bytes[i * size..(i + 1) * size];
            let s = String::from_utf8_lossy(&s[..s.iter().position(|&c| c == 0).unwrap_or(size)]).into_owned();
            (s, hex(g.get(i).unwrap()))
        })
        .collect();
    v.sort();
    v
}

fn conformant(p: &Path) {
    let opts = marquet::validate::Options { full: true, ..Default::default() };
    let r = marquet::validate::validate_file(p, &opts).unwrap();
    let errors: Vec<String> = r.errors().map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{}: {errors:?}", p.display());
}

fn python() -> Option<PathBuf> {
    common::venv_python_with("pyarrow, shapely", "the pyarrow/shapely read-back")
}

#[test]
fn the_parquet_testing_nan_file_is_kept_exactly_and_ignored_by_every_box() {
    let _s = common::serial();
    let dir = common::TempDir::new("nan-real");
    let want = parquet_rows(&src());
    assert_eq!(want.len(), 3);
    assert!(want.iter().any(|(w, g)| w.contains("nan nan nan nan") && g == LINE_HEX), "{want:?}");

    // Import with the default layout (Hilbert order, block index, R-tree, covering).
    let h5 = dir.join("nan.h5");
    let (ok, out, err) = cli(&["convert", src().to_str().unwrap(), h5.to_str().unwrap(), "--table", "/t"]);
    assert!(ok, "{err}");
    assert!(out.contains("imported 3 rows"), "{out}");
    conformant(&h5);
    let (ok, out, _) = cli(&["validate", "--full", h5.to_str().unwrap()]);
    assert!(ok && out.contains("conformant"), "{out}");
    let f = File::open(&h5).unwrap();
    let t = MarquetTable::open(&f, "/t").unwrap();
    assert_eq!(table_rows(&t), want, "stored exactly, NaN bits included");
    let info = t.geometry_column("geometry").unwrap();
    let (b, z, m) = info.bbox.unwrap();
    assert!(z && m);
    assert_eq!([b.xmin, b.ymin, b.zmin, b.mmin, b.xmax, b.ymax, b.zmax, b.mmax], [10.0, 20.0, 30.0, 40.0, 130.0, 140.0, 150.0, 160.0]);
    // The line's covering value and the block box leave the NaN vertex out.
    let cov = info.covering.clone().unwrap();
    let n = t.nrows().unwrap();
    let c = t.table().read(&cov, 0, n).unwrap();
    let g = t.read_wkb("geometry", 0, n).unwrap();
    let line_row = (0..n as usize).find(|&i| hex(g.get(i).unwrap()) == LINE_HEX).unwrap();
    let boxv: Vec<f64> = c.bytes[line_row * 32..line_row * 32 + 32].chunks(8).map(|b| f64::from_le_bytes(b.try_into().unwrap())).collect();
    assert_eq!(boxv, [90.0, 100.0, 130.0, 140.0]);
    let IndexState::Usable(bi) = t.open_block_index("geometry").unwrap() else { panic!("block index") };
    assert_eq!(bi.entries.len(), 1);
    let e = bi.entries[0];
    assert_eq!([e.bbox.xmin, e.bbox.ymin, e.bbox.xmax, e.bbox.ymax, e.bbox.zmin, e.bbox.mmax], [10.0, 20.0, 130.0, 140.0, 30.0, 160.0]);
    assert_eq!((e.n, e.null_count, e.empty_count), (3, 0, 0));
    // R-tree and predicates: the line is found at its vertices and, its NaN vertex
    // ignored, on the segment that joins them; nothing is found where there is nothing.
    let l = vec![line_row as u64];
    for (w, exact, boxed) in [
        (BBox::xy(129.0, 139.0, 131.0, 141.0), l.clone(), l.clone()),
        (BBox::xy(109.0, 119.0, 111.0, 121.0), l.clone(), l.clone()),
        // Inside the line's box, off the line.
        (BBox::xy(120.0, 100.0, 125.0, 105.0), vec![], l.clone()),
        (BBox::xy(0.0, 0.0, 5.0, 5.0), vec![], vec![]),
    ] {
        for (p, rows) in [(Predicate::Intersects, exact), (Predicate::BBoxOnly, boxed)] {
            for q in [Query::new(Window::BBox(w), p), Query::new(Window::BBox(w), p).with_indexes(false)] {
                let r = t.query("geometry", &q).unwrap();
                assert_eq!(r.rows, rows, "{w:?} {p:?} indexes {}", q.use_indexes);
            }
        }
    }
    drop(t);
    drop(f);

    // Export to GeoParquet 2.0: the same bytes; bbox, covering and statistics without NaN.
    let pq = dir.join("nan.parquet");
    let (ok, _, err) = cli(&["convert", h5.to_str().unwrap(), pq.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert_eq!(parquet_rows(&pq), want);
    let meta = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&pq).unwrap()).unwrap().metadata().clone();
    let geo = meta.file_metadata().key_value_metadata().unwrap().iter().find(|k| k.key == "geo").unwrap().value.clone().unwrap();
    let geo: serde_json::Value = serde_json::from_str(&geo).unwrap();
    assert_eq!(geo["columns"]["geometry"]["bbox"], serde_json::json!([10.0, 20.0, 30.0, 40.0, 130.0, 140.0, 150.0, 160.0]));
    // Re-import: equal bytes again.
    let back = dir.join("back.h5");
    let (ok, _, err) = cli(&["convert", pq.to_str().unwrap(), back.to_str().unwrap(), "--table", "/t"]);
    assert!(ok, "{err}");
    conformant(&back);
    let f = File::open(&back).unwrap();
    assert_eq!(table_rows(&MarquetTable::open(&f, "/t").unwrap()), want);
    drop(f);

    // GeoJSON cannot hold NaN: refused with the row named, no file left behind.
    let gj = dir.join("nan.geojson");
    let (ok, _, err) = cli(&["convert", h5.to_str().unwrap(), gj.to_str().unwrap()]);
    assert!(!ok);
    assert!(err.contains(&format!("/t/geometry row {line_row}")) && err.contains("RFC 7946") && err.contains("NaN"), "{err}");
    assert!(!gj.exists());

    // pyarrow reads the export, its geospatial statistics ignore NaN, and shapely reads
    // every geometry as the source's wkt says.
    if let Some(py) = python() {
        let script = r#"
import sys, pyarrow.parquet as pq, shapely
f = pq.ParquetFile(sys.argv[1])
t = f.read()
s = f.metadata.row_group(0).column(t.schema.get_field_index("geometry")).geo_statistics
print([s.xmin, s.ymin, s.zmin, s.mmin, s.xmax, s.ymax, s.zmax, s.mmax])
print(sorted(t["geometry_bbox" if "geometry_bbox" in t.column_names else "bbox"].to_pylist(), key=lambda b: b["xmin"]))
for w, g in zip(t["wkt"].to_pylist(), t["geometry"].to_pylist()):
    a, b = shapely.from_wkt(w), shapely.from_wkb(bytes(g))
    assert shapely.to_wkt(a) == shapely.to_wkt(b), (w, shapely.to_wkt(b))
print("ok")
"#;
        let o = Command::new(py).args(["-c", script, pq.to_str().unwrap()]).output().unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{out}{}", String::from_utf8_lossy(&o.stderr));
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "[10.0, 20.0, 30.0, 40.0, 130.0, 140.0, 150.0, 160.0]");
        assert_eq!(
            lines[1],
            "[{'xmin': 10.0, 'ymin': 20.0, 'xmax': 10.0, 'ymax': 20.0}, {'xmin': 50.0, 'ymin': 60.0, 'xmax': 50.0, 'ymax': 60.0}, {'xmin': 90.0, 'ymin': 100.0, 'xmax': 130.0, 'ymax': 140.0}]"
        );
        assert_eq!(lines[2], "ok");
    }
}

fn line(pts: &[(f64, f64)]) -> Vec<u8> {
    let coords = pts.iter().map(|&(x, y)| Coord::xy(x, y)).collect();
    wkb::encode(&Geometry::LineString(LineString { dims: Dimensions::Xy, coords }), ByteOrder::LittleEndian)
}

/// A geometry whose every vertex is all-NaN has no position: no box, no R-tree item, counted
/// as empty (local ruling L2), and the Hilbert sort puts it with the empty geometries.
#[test]
fn an_all_nan_geometry_is_ordered_and_counted_like_an_empty_one() {
    let _s = common::serial();
    let dir = common::TempDir::new("nan-keys");
    let nan = f64::NAN;
    let rows = [
        line(&[(nan, nan), (nan, nan)]),
        line(&[(0.0, 0.0), (1.0, 1.0)]),
        line(&[]),
        line(&[(5.0, 5.0), (nan, nan), (6.0, nan), (7.0, 7.0)]),
    ];
    let plain = dir.join("plain.h5");
    {
        let f = File::create(&plain).unwrap();
        let mut t = MarquetTable::create(&f, "/t").unwrap();
        t.add_geometry_column("geometry", &GeometryColumnSpec::default().with_form(StorageForm::VarWkb)).unwrap();
        t.append(&GeoBatch::new().with_geometry("geometry", GeometryValues::Wkb(rows.iter().cloned().map(Some).collect()))).unwrap();
    }
    conformant(&plain);
    let pq = dir.join("t.parquet");
    convert(&plain, &pq, &ConvertOptions::default()).unwrap();
    let sorted = dir.join("sorted.h5");
    convert(&pq, &sorted, &ConvertOptions { table: Some("/t".into()), layout: WriteLayout::default(), ..Default::default() }).unwrap();
    conformant(&sorted);
    let f = File::open(&sorted).unwrap();
    let t = MarquetTable::open(&f, "/t").unwrap();
    let g = t.read_wkb("geometry", 0, 4).unwrap();
    let got: Vec<Vec<u8>> = (0..4).map(|i| g.get(i).unwrap().to_vec()).collect();
    // Positioned rows first in Hilbert order, then the all-NaN and the empty row in input order.
    assert_eq!(got, vec![rows[1].clone(), rows[3].clone(), rows[0].clone(), rows[2].clone()]);
    let IndexState::Usable(bi) = t.open_block_index("geometry").unwrap() else { panic!("block index") };
    assert_eq!(bi.entries[0].empty_count, 2);
    assert_eq!([bi.entries[0].bbox.xmin, bi.entries[0].bbox.ymin, bi.entries[0].bbox.xmax, bi.entries[0].bbox.ymax], [0.0, 0.0, 7.0, 7.0]);
    let IndexState::Usable(rt) = t.open_rtree("geometry").unwrap() else { panic!("r-tree") };
    assert_eq!(rt.num_items, 2);
    // A point column still refuses NaN x or y in a non-empty point (HEP002 §7.4).
    let f = File::open_rw(&plain).unwrap();
    let mut p = MarquetTable::create(&f, "/p").unwrap();
    p.add_geometry_column("g", &GeometryColumnSpec::default().with_form(StorageForm::Point { dims: Dimensions::Xy, f32: false })).unwrap();
    let pb = |x: f64, y: f64| GeoBatch::new().with_geometry("g", GeometryValues::Points { dims: Dimensions::Xy, x: vec![x], y: vec![y], z: None, m: None, valid: None });
    let e = p.append(&pb(nan, 1.0)).unwrap_err();
    assert!(e.to_string().contains("§7.4"), "{e}");
    assert!(matches!(p.append(&pb(f64::INFINITY, 1.0)).unwrap_err(), MarquetError::Refused { row: Some(0), .. }));
    assert_eq!(p.append(&pb(nan, nan)).unwrap(), 1);
}

/// Reprojection (`--to-crs`) keeps an all-NaN vertex as it is and refuses a vertex with one
/// NaN ordinate, which has no position to transform.
#[test]
fn reprojection_keeps_nan_vertices_and_refuses_half_positions() {
    let _s = common::serial();
    let dir = common::TempDir::new("nan-crs");
    let nan = f64::NAN;
    for (k, (row, ok)) in [(line(&[(10.0, 20.0), (nan, nan), (30.0, 40.0)]), true), (line(&[(10.0, 20.0), (nan, 25.0), (30.0, 40.0)]), false)].into_iter().enumerate() {
        let plain = dir.join(&format!("p{k}.h5"));
        {
            let f = File::create(&plain).unwrap();
            let mut t = MarquetTable::create(&f, "/t").unwrap();
            t.add_geometry_column("geometry", &GeometryColumnSpec::default().with_form(StorageForm::VarWkb)).unwrap();
            t.append(&GeoBatch::new().with_geometry("geometry", GeometryValues::Wkb(vec![Some(row.clone())]))).unwrap();
        }
        let out = dir.join(&format!("m{k}.h5"));
        let r = convert(&plain, &out, &ConvertOptions { to_crs: Some("EPSG:3857".into()), ..Default::default() });
        if !ok {
            let e = r.unwrap_err().to_string();
            assert!(e.contains("one NaN ordinate"), "{e}");
            assert!(!out.exists());
            continue;
        }
        r.unwrap();
        conformant(&out);
        let f = File::open(&out).unwrap();
        let t = MarquetTable::open(&f, "/t").unwrap();
        let g = wkb::decode(t.read_wkb("geometry", 0, 1).unwrap().get(0).unwrap()).unwrap();
        let Geometry::LineString(l) = g else { panic!("{g:?}") };
        assert_eq!(l.coords[1].x.to_bits(), nan.to_bits());
        assert!(l.coords[1].y.is_nan());
        assert!((l.coords[0].x - 1_113_194.907_932_735_7).abs() < 1e-6, "{:?}", l.coords[0]);
    }
}
