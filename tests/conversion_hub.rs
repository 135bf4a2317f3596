//! Issue #32: every conversion goes through the hub — no import or export writes a file
//! but its output (and the staging file beside an HDF5 output that is renamed to it), and
//! what arrives is what the source holds.
//!
//! The oracle is `strace -f` of the whole process (every `openat(O_CREAT)`, `creat`,
//! `rename*`), and the rows of the result read back independently of the path they took.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use marquet::h5col::File;
use marquet::marquet::MarquetTable;

const COUNTRIES: &str = "testdata/peers/geoarrow-data/natural-earth/natural-earth_countries_geo.parquet";
const POINTS_CSV: &str = "testdata/lake/points.csv";

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn marquet(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_marquet")).args(args).output().unwrap();
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}



/// Run `marquet args` under strace; the files it created other than `outputs` (and
/// staging files renamed to one of them).
fn strays(strace: &Path, args: &[&str], outputs: &[&Path], log: &Path) -> Vec<String> {
    let st = Command::new(strace)
        .args(["-f", "-qq", "-e", "trace=openat,creat,rename,renameat,renameat2", "-o", &log.display().to_string(), env!("CARGO_BIN_EXE_marquet")])
        .args(args)
        .output()
        .unwrap();
    assert!(st.status.success(), "{args:?}: {}", String::from_utf8_lossy(&st.stderr));
    let log = std::fs::read_to_string(log).unwrap();
    let (created, renamed) = common::created_and_renamed(&log);
    let outs: Vec<String> = outputs.iter().map(|p| p.display().to_string()).collect();
    created
        .into_iter()
        .filter(|c| !outs.contains(c) && !renamed.iter().any(|(from, to)| from == c && outs.contains(to)))
        .collect()
}

/// Rows of table `table` in `h5`, as `dump --format csv` prints them, sorted.
fn rows(h5: &Path, table: &str) -> Vec<String> {
    let (code, out, err) = marquet(&["dump", &h5.display().to_string(), "--table", table, "--format", "csv"]);
    assert_eq!(code, 0, "{err}");
    let mut v: Vec<String> = out.lines().skip(1).map(String::from).collect();
    v.sort();
    v
}

#[test]
fn conversions_and_appends_create_no_file_but_their_output() {
    let _s = common::serial();
    let Some(strace) = common::strace() else { return };
    let dir = common::TempDir::new("hub-no-temp-files");
    let src = data(COUNTRIES);
    let s = src.display().to_string();
    let p = |n: &str| dir.join(n);
    let ds = |q: &Path| q.display().to_string();

    // GeoParquet → GeoJSON (two formats other than HDF5: the table lives in memory).
    let gj = p("countries.geojson");
    assert_eq!(strays(&strace, &["convert", &s, &ds(&gj)], &[&gj], &p("1.log")), Vec::<String>::new());
    // GeoJSON → HDF5.
    let a = p("a.h5");
    assert_eq!(strays(&strace, &["convert", &ds(&gj), &ds(&a), "--table", "/c"], &[&a], &p("2.log")), Vec::<String>::new());
    // GeoParquet → GeoPackage → HDF5 (a GIS source: features into the hub, no spool).
    let gpkg = p("countries.gpkg");
    assert_eq!(marquet(&["convert", &s, &ds(&gpkg)]).0, 0);
    let b = p("b.h5");
    let stray = strays(&strace, &["convert", &ds(&gpkg), &ds(&b), "--table", "/c"], &[&b], &p("3.log"));
    // SQLite may open its journal beside the GeoPackage it reads; nothing else.
    assert!(stray.iter().all(|f| f.starts_with(&ds(&gpkg))), "{stray:?}");
    // A lakehouse source (CSV with lon/lat) → HDF5, then appended.
    let csv = data(POINTS_CSV);
    let c = p("c.h5");
    assert_eq!(strays(&strace, &["convert", &ds(&csv), &ds(&c), "--table", "/p", "--lonlat", "lon,lat"], &[&c], &p("4.log")), Vec::<String>::new());
    let n = rows(&c, "/p").len();
    assert_eq!(strays(&strace, &["append", &ds(&c), "--table", "/p", "--from", &ds(&csv), "--lonlat", "lon,lat"], &[&c], &p("5.log")), Vec::<String>::new());
    assert_eq!(rows(&c, "/p").len(), 2 * n);
    // A GIS source appended.
    assert_eq!(strays(&strace, &["append", &ds(&b), "--table", "/c", "--from", &ds(&gpkg)], &[&b], &p("6.log")).iter().filter(|f| !f.starts_with(&ds(&gpkg))).count(), 0);

    // What arrived is what the source holds, whichever road it took.
    let direct = p("direct.h5");
    assert_eq!(marquet(&["convert", &s, &ds(&direct), "--table", "/c"]).0, 0);
    assert_eq!(rows(&a, "/c").len(), 177);
    let f = File::open(&b).unwrap();
    assert_eq!(MarquetTable::open(&f, "/c").unwrap().nrows().unwrap(), 2 * 177);
}

#[test]
fn a_marquet_input_with_a_new_crs_is_read_as_a_source() {
    let _s = common::serial();
    if !marquet::crs::proj_available() {
        eprintln!("skipped: built without PROJ");
        return;
    }
    let Some(strace) = common::strace() else { return };
    let dir = common::TempDir::new("hub-marquet-source");
    let s = data(COUNTRIES).display().to_string();
    let a = dir.join("a.h5");
    assert_eq!(marquet(&["convert", &s, &a.display().to_string(), "--table", "/c"]).0, 0);
    // HDF5 → HDF5 in another CRS, and HDF5 → GeoParquet with a stated CRS: the input is
    // read as an Arrow source (before: exported to a temporary GeoParquet file first).
    let b = dir.join("b.h5");
    let stray = strays(&strace, &["convert", &a.display().to_string(), &b.display().to_string(), "--to-crs", "EPSG:3857"], &[&b], &dir.join("1.log"));
    assert_eq!(stray, Vec::<String>::new());
    let pq = dir.join("c.parquet");
    let stray = strays(&strace, &["convert", &a.display().to_string(), &pq.display().to_string(), "--crs", "EPSG:4326"], &[&pq], &dir.join("2.log"));
    assert_eq!(stray, Vec::<String>::new());
    let f = File::open(&b).unwrap();
    let t = MarquetTable::open(&f, "/c").unwrap();
    assert_eq!(t.nrows().unwrap(), 177);
    let info = t.geometry_column("geometry").unwrap();
    assert!(info.crs.display_name().contains("3857"), "{}", info.crs.display_name());
    let (b0, _, _) = info.bbox.unwrap();
    assert!(b0.xmax > 1.0e7 && b0.xmin < -1.0e7, "{b0:?}");
    // Every other column came through unchanged: the GeoJSON export of both, without
    // their geometries, is the same multiset of features.
    let props = |h5: &Path| {
        let gj = h5.with_extension("geojson");
        assert_eq!(marquet(&["convert", &h5.display().to_string(), &gj.display().to_string()]).0, 0);
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&gj).unwrap()).unwrap();
        let mut p: Vec<String> = v["features"].as_array().unwrap().iter().map(|f| f["properties"].to_string()).collect();
        p.sort();
        p
    };
    assert_eq!(props(&a), props(&b));
}

#[cfg(feature = "gis")]
#[test]
fn flatgeobuf_exports_create_no_file_but_their_output() {
    // The FlatGeobuf writer is Marquet's own (src/convert/fgb.rs): the `flatgeobuf` crate's
    // writer kept every feature in a temporary file (`O_TMPFILE`), which the trace shows.
    let _s = common::serial();
    let Some(strace) = common::strace() else { return };
    let dir = common::TempDir::new("hub-fgb-no-temp-files");
    let s = data(COUNTRIES).display().to_string();
    let ds = |q: &Path| q.display().to_string();
    let h5 = dir.join("c.h5");
    assert_eq!(marquet(&["convert", &s, &ds(&h5), "--table", "/c"]).0, 0);
    // HDF5 → FlatGeobuf, and GeoParquet → FlatGeobuf (through a table in memory).
    let a = dir.join("a.fgb");
    assert_eq!(strays(&strace, &["convert", &ds(&h5), &ds(&a)], &[&a], &dir.join("1.log")), Vec::<String>::new());
    let b = dir.join("b.fgb");
    assert_eq!(strays(&strace, &["convert", &s, &ds(&b)], &[&b], &dir.join("2.log")), Vec::<String>::new());
    // Both hold the 177 countries' geometries, read back by the hub.
    let wkbs = |h: &Path| {
        let f = File::open(h).unwrap();
        let t = MarquetTable::open(&f, "/c").unwrap();
        let n = t.nrows().unwrap();
        let w = t.read_wkb(&t.primary_geometry_column().unwrap(), 0, n).unwrap();
        let mut v: Vec<Vec<u8>> = (0..n as usize).map(|i| w.get(i).unwrap().to_vec()).collect();
        v.sort();
        v
    };
    let want = wkbs(&h5);
    assert_eq!(want.len(), 177);
    for (f, n) in [(&a, "a"), (&b, "b")] {
        let back = dir.join(&format!("{n}.h5"));
        assert_eq!(marquet(&["convert", &ds(f), &ds(&back), "--table", "/c"]).0, 0);
        assert!(wkbs(&back) == want, "{n}: other geometries came back");
    }
}
