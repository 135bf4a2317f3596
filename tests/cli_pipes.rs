//! A CLI scripts can trust (issue #22): every subcommand that prints, piped into
//! `head -1`, ends quietly — exit status 0 and nothing on stderr — however much output the
//! reader left unread, and the streamed formats keep their memory bounded.

mod common;

use std::process::Command;

use marquet::h5col::{Array, ColumnSpec, Dtype, File};
use marquet::marquet::{GeoBatch, GeometryColumnSpec, GeometryValues, MarquetTable, StorageForm, WriteOptions};
use marquet::Dimensions;

/// Rows of the test table: its dump is several MB, far more than a pipe buffers.
const ROWS: usize = 200_000;

/// A Marquet table of `ROWS` points with an integer and a string column.
fn table(path: &std::path::Path) {
    let f = File::create(path).unwrap();
    let mut t = MarquetTable::create(&f, "/pts").unwrap();
    let form = StorageForm::Point { dims: Dimensions::Xy, f32: false };
    t.add_geometry_column("geom", &GeometryColumnSpec::default().with_form(form)).unwrap();
    t.add_column("id", &ColumnSpec::new(Dtype::U64)).unwrap();
    let x: Vec<f64> = (0..ROWS).map(|i| (i % 360) as f64 - 180.0 + 0.5).collect();
    let y: Vec<f64> = (0..ROWS).map(|i| ((i / 360) % 180) as f64 - 90.0 + 0.5).collect();
    let ids: Vec<u64> = (0..ROWS as u64).collect();
    let geom = GeometryValues::Points { dims: Dimensions::Xy, x, y, z: None, m: None, valid: None };
    let batch = GeoBatch::new().with_geometry("geom", geom).with_array("id", Array::from_u64(&ids));
    t.write(&batch, WriteOptions::default()).unwrap();
}

/// Run `marquet ARGS | head -1` in bash; marquet's own exit status, its stderr, and the
/// line `head` printed.
fn into_head(args: &[&str]) -> (i32, String, String) {
    let dir = common::TempDir::new("cli-pipes-err");
    let err = dir.join("stderr.txt");
    let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    let script = format!(
        "'{}' {} 2>'{}' | head -1; exit ${{PIPESTATUS[0]}}",
        env!("CARGO_BIN_EXE_marquet"),
        quoted.join(" "),
        err.display()
    );
    // This test process may still hold the file it wrote open (HDF5 closes a file when its
    // last object is released); readers in other processes need not lock it.
    let o = Command::new("bash").arg("-c").arg(&script).env("HDF5_USE_FILE_LOCKING", "FALSE").output().unwrap();
    let stderr = std::fs::read_to_string(&err).unwrap_or_default();
    (o.status.code().unwrap_or(-1), stderr, String::from_utf8_lossy(&o.stdout).into_owned())
}

#[test]
fn every_printing_subcommand_ends_quietly_into_head() {
    let dir = common::TempDir::new("cli-pipes");
    let h5 = dir.join("pts.h5");
    table(&h5);
    let p = h5.display().to_string();
    let windows = dir.join("windows.txt");
    std::fs::write(&windows, "-180,-90,180,90\n".repeat(20)).unwrap();
    let w = windows.display().to_string();
    let cases: Vec<Vec<&str>> = vec![
        vec!["dump", &p],
        vec!["dump", &p, "--format", "csv"],
        vec!["dump", &p, "--format", "geojson"],
        vec!["query", &p, "--bbox", "-180,-90,180,90"],
        vec!["query", &p, "--bbox", "-180,-90,180,90", "--format", "wkt"],
        vec!["query", &p, "--bbox", "-180,-90,180,90", "--format", "csv"],
        vec!["query", &p, "--bbox", "-180,-90,180,90", "--format", "geojson"],
        vec!["query", &p, "--bbox", "-180,-90,180,90", "--json"],
        vec!["query", &p, "--bbox-file", &w],
        vec!["info", &p],
        vec!["info", &p, "--json"],
        vec!["validate", &p],
        vec!["--help"],
        vec!["query", "--help"],
    ];
    for args in cases {
        let (code, err, first) = into_head(&args);
        assert_eq!((code, err.as_str()), (0, ""), "marquet {args:?} | head -1 printed {first:?}");
        assert!(!first.is_empty(), "marquet {args:?} printed nothing");
    }
}

#[test]
fn streamed_geojson_is_one_valid_collection_with_every_row() {
    let dir = common::TempDir::new("cli-pipes-geojson");
    let h5 = dir.join("pts.h5");
    table(&h5);
    let o = Command::new(env!("CARGO_BIN_EXE_marquet"))
        .args(["dump", &h5.display().to_string(), "--format", "geojson"])
        .env("HDF5_USE_FILE_LOCKING", "FALSE")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let feats = v["features"].as_array().unwrap();
    assert_eq!(feats.len(), ROWS);
    // Hilbert order moved the rows; each feature still pairs its id with its point.
    for f in feats.iter().step_by(997) {
        let id = f["properties"]["id"].as_i64().unwrap() as usize;
        let c = &f["geometry"]["coordinates"];
        assert_eq!(c[0].as_f64().unwrap(), (id % 360) as f64 - 180.0 + 0.5);
        assert_eq!(c[1].as_f64().unwrap(), ((id / 360) % 180) as f64 - 90.0 + 0.5);
    }
}
