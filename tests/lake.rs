//! Lakehouse sources (issue #24): CSV, plain Parquet (DuckDB, pyarrow), GeoMesa's Trino
//! layout and Iceberg tables written by pyiceberg (testdata/lake/, made by
//! testdata/lake/make_fixtures.py), into Marquet tables and back out. Every imported file
//! must validate; geometries are compared with what the tools wrote, read independently
//! (the Parquet crate, the CSV text).

mod common;

use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::{Array, RecordBatch};
use common::TempDir;
use marquet::convert::lake::geomesa::{xz2_hex, z2_hex};
use marquet::convert::lake::{GeometrySource, LakeOptions, TextOrBinary};
use marquet::convert::{append_file, convert, AppendOptions, ConvertOptions, ConvertReport, Format};
use marquet::h5col::File;
use marquet::marquet::{Crs, MarquetTable, WriteLayout};
use marquet::validate::{validate_file, Options, Status};
use marquet::{wkb, BBox};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

fn data(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/lake").join(p)
}

/// Options keeping the source's row order (so rows can be compared one by one).
fn opts(lake: LakeOptions) -> ConvertOptions {
    ConvertOptions { lake, layout: WriteLayout::default().with_spatial_order(false), ..ConvertOptions::default() }
}

fn geometry(col: &str, enc: Option<TextOrBinary>) -> LakeOptions {
    LakeOptions { geometry: vec![GeometrySource { column: col.into(), encoding: enc }], ..Default::default() }
}

fn assert_valid(h5: &Path) {
    let r = validate_file(h5, &Options::default()).unwrap();
    let errs: Vec<String> = r.errors().map(|f| f.to_string()).collect();
    assert_eq!(r.status, Status::Conformant, "{}: {errs:?}", h5.display());
}

/// WKT of every row of geometry column `col` of the file's only table.
fn wkts(h5: &Path, col: &str) -> (Vec<Option<String>>, marquet::marquet::GeometryColumnInfo) {
    let f = File::open(h5).unwrap();
    let t = MarquetTable::open(&f, &f.tables().unwrap()[0]).unwrap();
    let n = t.nrows().unwrap();
    let b = t.read_wkb(col, 0, n).unwrap();
    let out = (0..n as usize).map(|i| b.get(i).map(|w| wkb::to_wkt(w).unwrap())).collect();
    (out, t.geometry_column(col).unwrap())
}

fn read_parquet(p: &Path) -> Vec<RecordBatch> {
    let f = std::fs::File::open(p).unwrap();
    ParquetRecordBatchReaderBuilder::try_new(f).unwrap().build().unwrap().map(|b| b.unwrap()).collect()
}

fn strings(batches: &[RecordBatch], col: &str) -> Vec<Option<String>> {
    let mut v = Vec::new();
    for b in batches {
        let a = b.column_by_name(col).unwrap();
        let a = a.as_string::<i32>();
        for i in 0..a.len() {
            v.push((!a.is_null(i)).then(|| a.value(i).to_string()));
        }
    }
    v
}

#[test]
fn csv_lonlat_points() {
    let _serial = common::serial();
    let d = TempDir::new("lake-csv-pts");
    let h5 = d.join("p.h5");
    let lake = LakeOptions { lonlat: Some(("lon".into(), "lat".into())), ..Default::default() };
    let r = convert(&data("points.csv"), &h5, &opts(lake)).unwrap();
    assert_eq!(r.import.as_ref().unwrap().rows, 21);
    assert_valid(&h5);
    let (g, info) = wkts(&h5, "geometry");
    assert_eq!(info.crs, Crs::Default);
    // The CSV text, read here line by line.
    let text = std::fs::read_to_string(data("points.csv")).unwrap();
    for (i, line) in text.lines().skip(1).enumerate() {
        let c: Vec<&str> = line.split(',').collect();
        let num = |s: &str| s.parse::<f64>().unwrap();
        let want = if c[2].is_empty() { None } else { Some(format!("POINT ({} {})", num(c[2]), num(c[3]))) };
        assert_eq!(g[i], want, "row {i}");
    }
}

#[test]
fn csv_wkt_polygons_and_bad_values() {
    let _serial = common::serial();
    let d = TempDir::new("lake-csv-wkt");
    let h5 = d.join("parcels.h5");
    convert(&data("parcels.csv"), &h5, &opts(geometry("wkt", Some(TextOrBinary::Wkt)))).unwrap();
    assert_valid(&h5);
    let (g, info) = wkts(&h5, "wkt");
    assert_eq!(info.crs, Crs::Unknown);
    assert!(info.covering.is_some(), "polygons get a covering column");
    let text = std::fs::read_to_string(data("parcels.csv")).unwrap();
    let src: Vec<Option<String>> = text
        .lines()
        .skip(1)
        .map(|l| {
            let w = l.splitn(3, ',').nth(2).unwrap().trim_matches('"');
            (!w.is_empty()).then(|| w.to_string())
        })
        .collect();
    assert_eq!(g, src);

    // A value that does not parse: refused with its row, or nulled when asked.
    let bad = d.join("bad.h5");
    let e = convert(&data("bad_wkt.csv"), &bad, &opts(geometry("wkt", None))).unwrap_err().to_string();
    assert!(e.contains("column \"wkt\" row 2: not WKT"), "{e}");
    assert!(!bad.exists(), "a failed import leaves no new file");
    let mut lake = geometry("wkt", None);
    lake.null_bad_geometry = true;
    let r = convert(&data("bad_wkt.csv"), &bad, &opts(lake)).unwrap();
    let w = &r.lake.as_ref().unwrap().warnings;
    assert!(w.iter().any(|w| w.contains("1 values that do not decode") && w.contains("row 2")), "{w:?}");
    assert_valid(&bad);
    let (g, _) = wkts(&bad, "wkt");
    assert_eq!(g, vec![Some("POINT (1 2)".into()), Some("POINT (3 4)".into()), None, Some("POINT (5 6)".into())]);
}

#[test]
fn duckdb_ewkb_and_pyarrow_geojson() {
    let _serial = common::serial();
    let d = TempDir::new("lake-pq");
    // Plain Parquet without a geometry named: refused, with the way out.
    let e = convert(&data("duckdb_ewkb.parquet"), &d.join("x.h5"), &ConvertOptions::default()).unwrap_err().to_string();
    assert!(e.contains("--geometry COL"), "{e}");
    let h5 = d.join("d.h5");
    let r = convert(&data("duckdb_ewkb.parquet"), &h5, &opts(geometry("geom", Some(TextOrBinary::Ewkb)))).unwrap();
    assert!(r.lake.as_ref().unwrap().geometry[0].1.contains("SRID 4326"));
    assert_valid(&h5);
    let (g, info) = wkts(&h5, "geom");
    // SRID 4326 → OGC:CRS84 (HEP002 §8.4), flags stripped to ISO WKB.
    assert_eq!(info.crs, Crs::Default);
    // DuckDB wrote the same polygons as WKT next to the EWKB.
    let src = strings(&read_parquet(&data("duckdb_ewkb.parquet")), "wkt");
    assert_eq!(g, src);

    let h5 = d.join("g.h5");
    let mut lake = geometry("gj", None);
    lake.geometry.push(GeometrySource { column: "merc".into(), encoding: None });
    let r = convert(&data("pyarrow_geojson.parquet"), &h5, &opts(lake)).unwrap();
    assert_valid(&h5);
    let (g, info) = wkts(&h5, "gj");
    assert_eq!(info.crs, Crs::Default, "GeoJSON is OGC:CRS84 (RFC 7946 §4)");
    for (i, w) in g.iter().enumerate() {
        let (x, y) = (i as f64 * 0.25, -(i as f64) * 0.5 + 0.0);
        assert_eq!(w.as_deref(), Some(format!("POINT ({x} {y})").as_str()));
    }
    // SRID 3857 in big- and little-endian EWKB: EPSG:3857 resolved with PROJ (issue #22);
    // without PROJ unknown + finding. A warning says how the SRID was read.
    let (m, info) = wkts(&h5, "merc");
    assert_eq!(m[3].as_deref(), Some("POINT (3000 6000)"));
    let ir = r.import.as_ref().unwrap();
    if marquet::crs::proj_available() {
        assert_eq!(info.crs.id(), Some(("EPSG".into(), "3857".into())));
        assert!(!ir.has_finding(marquet::convert::code::CRS_NOT_PROJJSON), "{ir}");
    } else {
        assert_eq!(info.crs, Crs::Unknown);
        assert!(ir.has_finding(marquet::convert::code::CRS_NOT_PROJJSON), "{ir}");
    }
    assert!(r.lake.as_ref().unwrap().warnings.iter().any(|w| w.contains("EPSG:3857")));
}

#[test]
fn geomesa_import_checks_the_bbox_companion() {
    let _serial = common::serial();
    let d = TempDir::new("lake-gm");
    let h5 = d.join("gm.h5");
    let r = convert(&data("geomesa.parquet"), &h5, &opts(LakeOptions::default())).unwrap();
    assert_valid(&h5);
    let l = r.lake.as_ref().unwrap();
    assert_eq!(l.dropped, vec!["__geom_z2__".to_string()]);
    // Row 3's REAL box was rounded to nearest: widened, not refused.
    assert!(l.warnings.iter().any(|w| w.contains("1 float32 boxes were rounded to nearest")), "{l}");
    let (g, info) = wkts(&h5, "geom");
    assert_eq!(info.crs, Crs::Default);
    assert_eq!(g.len(), 16);
    // The Python writer computed __geom_z2__ from GeoMesa's Z2SFC definition on its own.
    let src = read_parquet(&data("geomesa.parquet"));
    let z2 = strings(&src, "__geom_z2__");
    for (i, w) in g.iter().enumerate() {
        let wkb::Geometry::Point(p) = wkb::decode(&to_wkb(w.as_deref().unwrap())).unwrap() else { panic!("row {i} is not a point") };
        assert_eq!(z2_hex(p.coord.x, p.coord.y), z2[i].clone().unwrap(), "row {i}");
    }
    // A box that misses its point: refused with the row, or recomputed when asked.
    let bad = d.join("bad.h5");
    let e = convert(&data("geomesa_badbox.parquet"), &bad, &opts(LakeOptions::default())).unwrap_err().to_string();
    assert!(e.contains("__geom_bbox__ row 5") && e.contains("does not contain"), "{e}");
    let lake = LakeOptions { recompute_bbox: true, ..Default::default() };
    let r = convert(&data("geomesa_badbox.parquet"), &bad, &opts(lake)).unwrap();
    assert!(r.lake.unwrap().warnings.iter().any(|w| w.contains("1 rows' bbox")));
    assert_valid(&bad);
}

fn to_wkb(wkt: &str) -> Vec<u8> {
    marquet::convert::lake::decode::wkt_to_wkb(wkt).unwrap().wkb
}

#[test]
fn geomesa_export_round_trip() {
    let _serial = common::serial();
    let d = TempDir::new("lake-gm-out");
    // Polygons (XZ2) and points (Z2).
    for (src, col, lake, curve) in [
        ("parcels.csv", "wkt", geometry("wkt", None), "xz2"),
        ("points.csv", "geometry", LakeOptions { lonlat: Some(("lon".into(), "lat".into())), ..Default::default() }, "z2"),
    ] {
        let h5 = d.join(&format!("{col}.h5"));
        let mut o = opts(lake);
        o.lake.crs = Some("OGC:CRS84".into());
        convert(&data(src), &h5, &o).unwrap();
        let (orig, _) = wkts(&h5, col);
        let pq = d.join(&format!("{col}.parquet"));
        let go = ConvertOptions { lake: LakeOptions { geomesa_export: true, ..Default::default() }, ..ConvertOptions::default() };
        let r: ConvertReport = convert(&h5, &pq, &go).unwrap();
        assert_eq!(r.export.as_ref().unwrap().rows, orig.len() as u64);
        // Read back with the Parquet crate: companions, row order by curve value.
        let b = read_parquet(&pq);
        let names: Vec<String> = b[0].schema().fields().iter().map(|f| f.name().clone()).collect();
        let (bb, cv) = (format!("__{col}_bbox__"), format!("__{col}_{curve}__"));
        assert!(names.contains(&bb) && names.contains(&cv), "{names:?}");
        let hex = strings(&b, &cv);
        let present: Vec<&String> = hex.iter().flatten().collect();
        assert!(present.windows(2).all(|w| w[0] <= w[1]), "rows in curve order");
        let mut row = 0;
        for batch in &b {
            let g = batch.column_by_name(col).unwrap().as_binary::<i32>();
            let bx = batch.column_by_name(&bb).unwrap().as_struct();
            let f = |n: &str| bx.column_by_name(n).unwrap().as_primitive::<arrow_array::types::Float32Type>().clone();
            let (x0, y0, x1, y1) = (f("xmin"), f("ymin"), f("xmax"), f("ymax"));
            for i in 0..batch.num_rows() {
                if g.is_null(i) {
                    assert!(hex[row].is_none() && bx.is_null(i));
                } else {
                    let info = wkb::scan(g.value(i)).unwrap();
                    let b = info.bbox;
                    assert!((x0.value(i) as f64) <= b.xmin && (y0.value(i) as f64) <= b.ymin);
                    assert!((x1.value(i) as f64) >= b.xmax && (y1.value(i) as f64) >= b.ymax);
                    let want = if curve == "z2" { z2_hex(b.xmin, b.ymin) } else { xz2_hex(&BBox::xy(b.xmin, b.ymin, b.xmax, b.ymax)) };
                    assert_eq!(hex[row].as_deref(), Some(want.as_str()));
                }
                row += 1;
            }
        }
        // And back in: the companion becomes the covering (non-points), geometries kept.
        let back = d.join(&format!("{col}_back.h5"));
        let r = convert(&pq, &back, &ConvertOptions::default()).unwrap();
        assert_valid(&back);
        let (mut again, info) = wkts(&back, col);
        assert_eq!(info.crs, Crs::Default);
        if curve == "xz2" {
            assert_eq!(info.covering.as_deref(), Some(bb.as_str()), "{}", r.import.unwrap());
        }
        let mut orig = orig;
        orig.sort();
        again.sort();
        assert_eq!(again, orig);
    }
}

fn warehouse(t: &str) -> PathBuf {
    data("warehouse/db").join(t)
}

#[test]
fn iceberg_havasu_ewkb_with_bounds() {
    let _serial = common::serial();
    let d = TempDir::new("lake-ice");
    let h5 = d.join("h.h5");
    let r = convert(&warehouse("havasu_ewkb"), &h5, &opts(LakeOptions::default())).unwrap();
    assert_valid(&h5);
    let l = r.lake.as_ref().unwrap();
    assert_eq!((l.files_read, l.files_skipped, l.rows_read), (2, 0, 12));
    let (all, info) = wkts(&h5, "geom");
    assert_eq!(info.crs, Crs::Default, "EWKB SRID 4326");
    assert_eq!(all.len(), 12);
    // --bbox: Havasu's geom_lower/upper_bounds skip the eastern file; the rows equal the
    // full scan's rows in the window.
    let win = BBox::xy(-110.0, 30.0, -90.0, 50.0);
    let h5w = d.join("w.h5");
    let lake = LakeOptions { bbox: Some(win), ..Default::default() };
    let r = convert(&warehouse("havasu_ewkb"), &h5w, &opts(lake)).unwrap();
    let l = r.lake.as_ref().unwrap();
    assert_eq!((l.files_read, l.files_skipped), (1, 1));
    let (some, _) = wkts(&h5w, "geom");
    let want: Vec<Option<String>> = all
        .iter()
        .filter(|w| {
            let b = wkb::scan(&to_wkb(w.as_deref().unwrap())).unwrap().bbox;
            b.intersects_xy(&win)
        })
        .cloned()
        .collect();
    assert_eq!(some, want);
    assert_eq!(some.len(), 5);
    // A window in the east reads the other file only.
    let lake = LakeOptions { bbox: Some(BBox::xy(99.0, -31.0, 101.5, -29.0)), ..Default::default() };
    let r = convert(&warehouse("havasu_ewkb"), &d.join("e.h5"), &opts(lake)).unwrap();
    let l = r.lake.unwrap();
    assert_eq!((l.files_read, l.files_skipped, l.rows_kept), (1, 1, 2));

    // The metadata file itself, and append into the table.
    let mf = std::fs::read_dir(warehouse("havasu_ewkb").join("metadata"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".metadata.json"))
        .max()
        .unwrap();
    let h5m = d.join("m.h5");
    convert(&mf, &h5m, &opts(LakeOptions::default())).unwrap();
    let f = File::open_rw(&h5m).unwrap();
    let r = append_file(&f, "/havasu_ewkb", &warehouse("havasu_ewkb"), &AppendOptions::default()).unwrap();
    assert_eq!((r.rows, r.nrows), (12, 24));
    drop(f);
    assert_valid(&h5m);
}

#[test]
fn iceberg_havasu_wkt_and_v3_geometry() {
    let _serial = common::serial();
    let d = TempDir::new("lake-ice2");
    let h5 = d.join("w.h5");
    convert(&warehouse("havasu_wkt"), &h5, &opts(LakeOptions::default())).unwrap();
    assert_valid(&h5);
    let (g, info) = wkts(&h5, "shape");
    assert_eq!(info.crs, Crs::Unknown, "Havasu columns declare no CRS");
    assert_eq!(g[0].as_deref(), Some("POLYGON ((0 0, 1 0, 1 1, 0 1, 0 0))"));
    assert_eq!(g[6].as_deref(), Some("LINESTRING (0 0, 5 5)"));

    let h5 = d.join("v3.h5");
    let r = convert(&warehouse("v3_geometry"), &h5, &opts(LakeOptions::default())).unwrap();
    assert_valid(&h5);
    assert!(r.lake.as_ref().unwrap().geometry[0].1.contains("geometry(EPSG:3857)"));
    assert!(r.import.as_ref().unwrap().has_finding(marquet::convert::code::CRS_NOT_PROJJSON));
    let (g, _) = wkts(&h5, "g");
    assert_eq!(g, vec![Some("POINT (0 0)".into()), Some("POINT (100000 200000)".into()), Some("POINT (200000 400000)".into())]);
}

#[test]
fn round_trip_keeps_geometries_and_crs() {
    let _serial = common::serial();
    // CSV → HDF5 → GeoParquet 2.0 → HDF5: same WKB, same CRS.
    let d = TempDir::new("lake-rt");
    let h5 = d.join("a.h5");
    let mut o = opts(geometry("wkt", None));
    o.lake.crs = Some("EPSG:4326".into());
    convert(&data("parcels.csv"), &h5, &o).unwrap();
    let pq = d.join("a.parquet");
    convert(&h5, &pq, &ConvertOptions::default()).unwrap();
    let h5b = d.join("b.h5");
    convert(&pq, &h5b, &ConvertOptions { format: Some(Format::GeoParquet), ..opts(LakeOptions::default()) }).unwrap();
    let (a, ia) = wkts(&h5, "wkt");
    let (b, ib) = wkts(&h5b, "wkt");
    assert_eq!(a, b);
    assert_eq!((ia.crs, ib.crs), (Crs::Default, Crs::Default));
}

#[test]
fn cli_paths() {
    let _serial = common::serial();
    let d = TempDir::new("lake-cli");
    let m = env!("CARGO_BIN_EXE_marquet");
    let run = |args: &[&str]| {
        let o = std::process::Command::new(m).args(args).output().unwrap();
        (o.status.code(), String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr))
    };
    let h5 = d.join("p.h5");
    let (c, out) = run(&["convert", data("points.csv").to_str().unwrap(), h5.to_str().unwrap(), "--lonlat", "lon,lat"]);
    assert_eq!(c, Some(0), "{out}");
    assert!(out.contains("imported 21 rows"), "{out}");
    let (c, out) = run(&["validate", h5.to_str().unwrap()]);
    assert_eq!(c, Some(0), "{out}");
    let (c, out) = run(&["append", h5.to_str().unwrap(), "--from", data("points.csv").to_str().unwrap(), "--lonlat", "lon,lat"]);
    assert_eq!(c, Some(0), "{out}");
    assert!(out.contains("appended 21 rows") && out.contains("now 42 rows"), "{out}");
    let pq = d.join("p.parquet");
    let (c, out) = run(&["convert", h5.to_str().unwrap(), pq.to_str().unwrap(), "--layout", "geomesa"]);
    assert_eq!(c, Some(0), "{out}");
    assert!(out.contains("__geometry_z2__"), "{out}");
    let ice = d.join("i.h5");
    let w = warehouse("havasu_ewkb");
    let (c, out) = run(&["convert", w.to_str().unwrap(), ice.to_str().unwrap(), "--bbox", "-110,30,-90,50"]);
    assert_eq!(c, Some(0), "{out}");
    assert!(out.contains("data files read 1, skipped by bounds 1"), "{out}");
    let (c, out) = run(&["convert", data("bad_wkt.csv").to_str().unwrap(), d.join("b.h5").to_str().unwrap(), "--geometry", "wkt:wkt"]);
    assert_eq!(c, Some(2));
    assert!(out.contains("row 2"), "{out}");
}

/// The GeoMesa-layout file read by pyarrow (the test venv of scripts/pyvenv.sh): the
/// companion types GeoMesa's Trino connector expects (ROW of REAL, VARCHAR) and the `geo`
/// covering. Skipped with a notice without the venv, failing under CI.
#[test]
fn geomesa_export_read_by_pyarrow() {
    let _serial = common::serial();
    let Some(py) = common::venv_python_with("pyarrow", "the pyarrow check") else { return };
    let d = TempDir::new("lake-gm-py");
    let h5 = d.join("w.h5");
    let mut o = opts(geometry("wkt", None));
    o.lake.crs = Some("OGC:CRS84".into());
    convert(&data("parcels.csv"), &h5, &o).unwrap();
    let pq = d.join("w.parquet");
    convert(&h5, &pq, &ConvertOptions { lake: LakeOptions { geomesa_export: true, ..Default::default() }, ..ConvertOptions::default() }).unwrap();
    let script = r#"
import sys, json
import pyarrow as pa, pyarrow.parquet as pq
t = pq.read_table(sys.argv[1])
s = t.schema
assert s.field("wkt").type == pa.binary(), s
assert s.field("__wkt_bbox__").type == pa.struct([(n, pa.float32()) for n in ("xmin", "ymin", "xmax", "ymax")]), s
assert s.field("__wkt_xz2__").type == pa.string(), s
z = [v for v in t.column("__wkt_xz2__").to_pylist() if v is not None]
assert all(len(v) == 16 for v in z) and z == sorted(z), z
geo = json.loads(pq.read_metadata(sys.argv[1]).metadata[b"geo"])
assert geo["columns"]["wkt"]["covering"]["bbox"]["xmin"] == ["__wkt_bbox__", "xmin"], geo
print(t.num_rows)
"#;
    let o = std::process::Command::new(&py).arg("-c").arg(script).arg(&pq).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "14");
}
