//! Every `marquet` subcommand run as a process: output, exit code, and one bad input each
//! (issue #9). `validate` is covered in cli_validate.rs, `info`/`dump` on the §15.1 file in
//! cli_info.rs, `demo` end to end in cli_demo.rs.
#![cfg(feature = "geoparquet")]

mod common;

use std::path::Path;
use std::process::Command;

use marquet::h5;
use marquet::h5col::File;
use marquet::marquet::spatial_index::block_bbox_dtype;

const CITIES: &str = "testdata/peers/geoarrow-data/natural-earth/natural-earth_cities_geo.parquet";
const COUNTRIES: &str = "testdata/peers/geoarrow-data/natural-earth/natural-earth_countries_geo.parquet";
/// Western Europe: 33 of the 243 cities.
const WINDOW: &str = "-10,35,20,60";

fn marquet(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_marquet")).args(args).output().unwrap();
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

fn data(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel).display().to_string()
}

/// cities.parquet converted into `dir/cities.h5` as table /cities, rows in the source's
/// order and no index (the tests below count rows by position and build indexes
/// themselves; tests/default_layout.rs checks what a plain `convert` writes).
fn cities_h5(dir: &common::TempDir) -> String {
    let h5 = dir.join("cities.h5").display().to_string();
    let (code, out, err) = marquet(&["convert", &data(CITIES), &h5, "--table", "/cities", "--keep-order", "--no-index"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().next().unwrap(), format!("{} -> {h5} (table /cities)", data(CITIES)));
    assert!(out.contains("imported 243 rows into /cities"), "{out}");
    assert_eq!(err, "", "no progress bar when stderr is not a terminal");
    h5
}

fn count(h5: &str) -> String {
    let (code, out, err) = marquet(&["query", h5, "--bbox", WINDOW, "--count"]);
    assert_eq!(code, 0, "{err}");
    out
}

/// `query --format` prints each answer's rows exactly as `dump` prints them (issue #33 item
/// 1: the geometries are the ones the query returned, not read again): points (the
/// cities, no index: the libhdf5-free path over plain chunks) and polygons (the countries
/// as `convert` writes them by default: R-tree, blocks, covering), warm windows from a
/// file and each window opened afresh, every format; the oracle is `dump` of all rows.
#[test]
fn query_format_prints_each_answer_as_dump_prints_its_rows() {
    let dir = common::TempDir::new("cli-query-format");
    let cities = cities_h5(&dir);
    let countries = dir.join("countries.h5").display().to_string();
    let (code, _, err) = marquet(&["convert", &data(COUNTRIES), &countries, "--table", "/countries"]);
    assert_eq!(code, 0, "{err}");
    let windows = ["-10,35,20,60", "100,0,101,1", "-180,-90,180,90", "-80,-10,-40,15", "20,-35,35,-20"];
    let wf = dir.join("w.txt");
    std::fs::write(&wf, windows.join("\n")).unwrap();
    let wf = wf.display().to_string();
    let mut nonempty = 0;
    for h5 in [&cities, &countries] {
        // The rows of each window, from --json.
        let (code, out, err) = marquet(&["query", h5, "--bbox-file", &wf, "--json"]);
        assert_eq!(code, 0, "{err}");
        let answers: Vec<Vec<usize>> = out
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["rows"].as_array().unwrap().iter().map(|r| r.as_u64().unwrap() as usize).collect())
            .collect();
        assert_eq!(answers.len(), windows.len());
        nonempty += answers.iter().filter(|a| !a.is_empty()).count();
        for fmt in ["csv", "wkt"] {
            let (code, all, _) = marquet(&["dump", h5, "--format", fmt]);
            assert_eq!(code, 0);
            let all: Vec<&str> = all.lines().collect();
            // Each window's rows as dump prints them, after a header line.
            let expect: Vec<Vec<&str>> =
                answers.iter().map(|rows| std::iter::once(all[0]).chain(rows.iter().map(|&r| all[1 + r])).collect()).collect();
            for (w, want) in windows.iter().zip(&expect) {
                let (code, out, err) = marquet(&["query", h5, "--bbox", w, "--format", fmt]);
                assert_eq!(code, 0, "{err}");
                assert_eq!(&out.lines().collect::<Vec<_>>(), want, "{h5} {fmt} {w}");
            }
            // Every window opened afresh, in turn.
            let (code, out, err) = marquet(&["query", h5, "--bbox-file", &wf, "--reopen", "--format", fmt]);
            assert_eq!(code, 0, "{err}");
            assert_eq!(out.lines().collect::<Vec<_>>(), expect.concat(), "{h5} {fmt} --reopen");
        }
        let (code, all, _) = marquet(&["dump", h5, "--format", "geojson"]);
        assert_eq!(code, 0);
        let all: serde_json::Value = serde_json::from_str(&all).unwrap();
        for (w, rows) in windows.iter().zip(&answers) {
            let (code, out, err) = marquet(&["query", h5, "--bbox", w, "--format", "geojson"]);
            assert_eq!(code, 0, "{err}");
            let got: serde_json::Value = serde_json::from_str(&out).unwrap();
            let expect: Vec<&serde_json::Value> = rows.iter().map(|&r| &all["features"][r]).collect();
            assert_eq!(got["features"].as_array().unwrap().iter().collect::<Vec<_>>(), expect, "{h5} geojson {w}");
        }
    }
    assert!(nonempty >= 6, "the windows must find rows: {nonempty}");
}

#[test]
fn every_subcommand_has_help_with_examples() {
    for sub in ["info", "dump", "validate", "convert", "query", "index", "append", "demo"] {
        let (code, out, err) = marquet(&[sub, "--help"]);
        assert_eq!(code, 0, "{sub}: {err}");
        assert!(out.contains(&format!("Examples:\n  marquet {sub} ")), "{sub}: {out}");
        assert!(out.contains("Exit 0 "), "{sub} --help states its exit codes: {out}");
    }
    // Usage errors exit 2.
    assert_eq!(marquet(&[]).0, 2);
    assert_eq!(marquet(&["frobnicate"]).0, 2);
    assert_eq!(marquet(&["query", "x.h5", "--predicate", "touches", "--bbox", "0,0,1,1"]).0, 2);
}

#[test]
fn convert_and_dump() {
    let _s = common::serial();
    let dir = common::TempDir::new("cli-convert");
    let h5 = cities_h5(&dir);
    // Back out to GeoJSON and GeoParquet.
    let gj = dir.join("cities.geojson").display().to_string();
    let (code, out, err) = marquet(&["convert", &h5, &gj]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().next().unwrap(), format!("{h5} -> {gj} (table /cities)"));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&gj).unwrap()).unwrap();
    assert_eq!(v["features"].as_array().unwrap().len(), 243);
    // The GeoJSON appended back lands in the same columns.
    let (code, out, err) = marquet(&["append", &h5, "--from", &gj]);
    assert_eq!((code, out), (0, format!("appended 243 rows from {gj} to /cities (now 486 rows)\n")), "{err}");
    assert_eq!(count(&h5), "66\n");
    // dump: rows as WKT, CSV and GeoJSON.
    let (code, out, _) = marquet(&["dump", &h5, "--rows", "0..2"]);
    assert_eq!(
        (code, out.as_str()),
        (0, "name\tgeometry\nVatican City\tPOINT (12.4533865 41.9032822)\nSan Marino\tPOINT (12.4417702 43.9360958)\n")
    );
    let (code, out, _) = marquet(&["dump", &h5, "--rows", "2..3", "--format", "csv"]);
    assert_eq!((code, out.as_str()), (0, "name,geometry\nVaduz,POINT (9.5166695 47.1337238)\n"));
    let (code, out, _) = marquet(&["dump", &h5, "--rows", "0..1", "--format", "geojson"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"type": "FeatureCollection", "features": [{"type": "Feature",
            "geometry": {"type": "Point", "coordinates": [12.4533865, 41.9032822]},
            "properties": {"name": "Vatican City"}}]})
    );
    // Bad input: a format no extension names; rows that are not a range.
    let (code, out, err) = marquet(&["convert", &data(CITIES), &dir.join("cities.txt").display().to_string()]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(err.contains("cannot tell the output format from the extension"), "{err}");
    let (code, _, err) = marquet(&["dump", &h5, "--rows", "x"]);
    assert_eq!((code, err.as_str()), (2, "error: --rows \"x\" is not A..B\n"));
}

#[test]
fn query_json_and_bad_windows() {
    let _s = common::serial();
    let dir = common::TempDir::new("cli-query");
    let h5 = cities_h5(&dir);
    let (code, plain, _) = marquet(&["query", &h5, "--bbox", WINDOW]);
    assert_eq!(code, 0);
    let rows: Vec<u64> = plain.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(rows.len(), 33);
    assert_eq!(&rows[..3], &[0, 1, 2], "Vatican City, San Marino, Vaduz");
    let (code, out, _) = marquet(&["query", &h5, "--bbox", WINDOW, "--json"]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), 1);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["bbox"], serde_json::json!([-10.0, 35.0, 20.0, 60.0]));
    assert_eq!(v["count"], 33);
    assert_eq!(v["rows"], serde_json::json!(rows));
    assert_eq!(v["stats"]["rows_total"], 243);
    assert_eq!(v["stats"]["rows_matched"], 33);
    // Many windows, --count: one JSON line each, no rows.
    let wf = dir.join("w.txt");
    std::fs::write(&wf, "-10,35,20,60\n\n100,0,101,1\n").unwrap();
    let (code, out, _) = marquet(&["query", &h5, "--bbox-file", &wf.display().to_string(), "--count", "--json"]);
    assert_eq!(code, 0);
    let counts: Vec<(u64, bool)> = out
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|v| (v["count"].as_u64().unwrap(), v.get("rows").is_some()))
        .collect();
    assert_eq!(counts, vec![(33, false), (0, false)]);
    // --format: the matching rows themselves, as `dump` prints them.
    let (code, csv, _) = marquet(&["query", &h5, "--bbox", WINDOW, "--format", "csv"]);
    assert_eq!(code, 0);
    assert_eq!(csv.lines().count(), 1 + 33, "{csv}");
    let (_, dumped, _) = marquet(&["dump", &h5, "--rows", "0..3", "--format", "csv"]);
    assert_eq!(csv.lines().take(4).collect::<Vec<_>>(), dumped.lines().collect::<Vec<_>>());
    let (code, gj, _) = marquet(&["query", &h5, "--bbox", WINDOW, "--format", "geojson"]);
    assert_eq!(code, 0);
    let fc: serde_json::Value = serde_json::from_str(&gj).unwrap();
    assert_eq!(fc["features"].as_array().unwrap().len(), 33);
    assert_eq!(fc["features"][0]["geometry"]["type"], "Point");
    let (code, wkt, _) = marquet(&["query", &h5, "--bbox", "100,0,101,1", "--format", "wkt"]);
    assert_eq!((code, wkt.lines().count()), (0, 1), "header only: {wkt}");
    let (code, _, err) = marquet(&["query", &h5, "--bbox", WINDOW, "--format", "csv", "--count"]);
    assert_eq!(code, 2, "--format and --count conflict: {err}");
    // Bad input: three numbers; a window file that does not exist.
    let (code, out, err) = marquet(&["query", &h5, "--bbox", "1,2,3"]);
    assert_eq!((code, out.as_str(), err.as_str()), (2, "", "error: a window is XMIN,YMIN,XMAX,YMAX, got \"1,2,3\"\n"));
    let (code, _, err) = marquet(&["query", &h5, "--bbox-file", "/nonexistent/w.txt"]);
    assert_eq!(code, 2);
    assert!(err.starts_with("error: /nonexistent/w.txt: "), "{err}");
}

#[test]
fn index_build_verify_and_a_tampered_block() {
    let _s = common::serial();
    let dir = common::TempDir::new("cli-index");
    let h5 = cities_h5(&dir);
    let (code, out, _) = marquet(&["index", &h5]);
    assert_eq!((code, out.as_str()), (0, ""), "convert builds no index");
    let (code, out, _) = marquet(&["index", &h5, "--verify"]);
    assert_eq!((code, out.as_str()), (0, "/cities column geometry: no spatial index\n"));
    let (code, out, err) = marquet(&["index", &h5, "--build", "block_bbox,packed_rtree"]);
    assert_eq!(code, 0, "{err}");
    let bb = "/cities/SEARCH_INDEXES/geometry__block_bbox";
    let rt = "/cities/SEARCH_INDEXES/geometry__rtree";
    assert_eq!(out, format!("built {bb}\nbuilt {rt}\nBLOCK_BBOX {bb} (valid)\nPACKED_RTREE {rt} (valid)\n"));
    let (code, out, _) = marquet(&["index", &h5, "--verify"]);
    assert_eq!((code, out), (0, format!("BLOCK_BBOX {bb}: matches\nPACKED_RTREE {rt}: matches\n")));
    let (code, out, _) = marquet(&["index", &h5, "--verify", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["table"], "/cities");
    assert_eq!(v["column"], "geometry");
    assert_eq!(v["verify"][0], serde_json::json!({"kind": "BLOCK_BBOX", "path": bb, "verdict": "matches", "findings": []}));
    assert_eq!(v["verify"][1]["verdict"], "matches");
    assert_eq!(v["indexes"][1], serde_json::json!({"kind": "PACKED_RTREE", "path": rt, "valid": true}));
    // Tamper: block 0's xmax far west of its rows. The tokens stay valid; the content lies.
    {
        let f = File::open_rw(&h5).unwrap();
        let dt = block_bbox_dtype(false, false);
        let ds = h5::dataset_open(f.id(), bb).unwrap();
        let mut e = h5::dataset_read(ds.id(), 0, 1, &dt, bb).unwrap();
        let h5::Dtype::Compound { fields, .. } = &dt else { panic!() };
        let off = fields.iter().find(|x| x.name == "xmax").unwrap().offset;
        e[off..off + 8].copy_from_slice(&(-170.0f64).to_le_bytes());
        h5::dataset_write(ds.id(), 0, &dt, &e, bb).unwrap();
    }
    let (code, out, _) = marquet(&["index", &h5, "--verify"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.starts_with(&format!("BLOCK_BBOX {bb}: mismatch\n  error: HEP002 §12 req 16: {bb} ")), "{out}");
    assert!(out.ends_with(&format!("PACKED_RTREE {rt}: matches\n")), "{out}");
    // Rebuilding repairs it.
    assert_eq!(marquet(&["index", &h5, "--build", "block_bbox"]).0, 0);
    assert_eq!(marquet(&["index", &h5, "--verify"]).0, 0);
    let (code, out, _) = marquet(&["index", &h5, "--drop", "packed_rtree"]);
    assert_eq!((code, out), (0, format!("dropped 1 index(es)\nBLOCK_BBOX {bb} (valid)\n")));
    // Bad input: an unknown kind (the file is untouched); --verify with --build.
    let (code, out, err) = marquet(&["index", &h5, "--build", "quadtree"]);
    assert_eq!((code, out.as_str(), err.as_str()), (2, "", "error: unknown index kind \"quadtree\" (block_bbox, packed_rtree)\n"));
    assert_eq!(marquet(&["index", &h5, "--verify", "--build", "block_bbox"]).0, 2);
}

#[test]
fn append_from_geoparquet_and_marquet_keeps_indexes() {
    let _s = common::serial();
    let dir = common::TempDir::new("cli-append");
    let h5 = cities_h5(&dir);
    let other = dir.join("other.h5").display().to_string();
    assert_eq!(marquet(&["convert", &data(CITIES), &other, "--table", "/more"]).0, 0);
    assert_eq!(marquet(&["index", &h5, "--build", "block_bbox,packed_rtree"]).0, 0);
    assert_eq!(count(&h5), "33\n");
    // From GeoParquet: the R-tree is rebuilt, the block index extended.
    let (code, out, err) = marquet(&["append", &h5, "--table", "/cities", "--from", &data(CITIES)]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, format!("appended 243 rows from {} to /cities (now 486 rows)\n", data(CITIES)));
    assert_eq!(err, "");
    assert_eq!(count(&h5), "66\n");
    let (code, out, _) = marquet(&["index", &h5, "--verify"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out.matches(": matches\n").count(), 2, "{out}");
    // From another Marquet file, R-tree left stale: verify says so and exits 1.
    let (code, out, err) = marquet(&["append", &h5, "--from", &other, "--rtree", "stale", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v, serde_json::json!({"source": other, "table": "/cities", "rows_appended": 243, "nrows": 729}));
    assert_eq!(count(&h5), "99\n");
    let (code, out, _) = marquet(&["index", &h5, "--verify"]);
    assert_eq!(code, 1);
    assert!(out.contains("BLOCK_BBOX /cities/SEARCH_INDEXES/geometry__block_bbox: matches\n"), "{out}");
    assert!(out.contains("PACKED_RTREE /cities/SEARCH_INDEXES/geometry__rtree: stale\n  its validity tokens"), "{out}");
    assert_eq!(marquet(&["index", &h5, "--build", "packed_rtree"]).0, 0);
    assert_eq!(marquet(&["index", &h5, "--verify"]).0, 0);
    let (code, _, _) = marquet(&["validate", &h5]);
    assert_eq!(code, 0);
    // Bad input: countries have a column cities lack; nothing is appended.
    let (code, out, err) = marquet(&["append", &h5, "--from", &data(COUNTRIES)]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(err.contains("columns differ from the source") && err.contains("only in the target: none; only in the source: continent"), "{err}");
    let (code, _, err) = marquet(&["append", &h5, "--from", "/nonexistent/x.parquet"]);
    assert_eq!(code, 2);
    assert!(err.contains("/nonexistent/x.parquet"), "{err}");
    assert_eq!(count(&h5), "99\n");
    let (_, out, _) = marquet(&["info", &h5, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["tables"][0]["nrows"], 729);
}

#[test]
fn info_and_demo_refuse_bad_input() {
    let _s = common::serial();
    let dir = common::TempDir::new("cli-bad");
    let notes = dir.join("notes.h5");
    std::fs::write(&notes, "not hdf5").unwrap();
    let (code, out, err) = marquet(&["info", &notes.display().to_string()]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(err.starts_with("error: "), "{err}");
    // --out names a file, not a directory.
    let (code, out, err) = marquet(&["demo", "--out", &notes.display().to_string()]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(err.starts_with("error: ") && err.contains("notes.h5"), "{err}");
}

#[test]
fn bench_writes_the_layout_it_is_given() {
    let _s = common::serial();
    let dir = common::TempDir::new("cli-bench");
    let out_dir = dir.join("b").display().to_string();
    let small = ["bench", "--points", "300", "--polygons", "40", "--windows", "5", "--reps", "1", "--out", &out_dir];
    let (code, out, err) = marquet(&small);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("marquet points         300 rows: write "), "{out}");
    assert!(out.contains("marquet polygons        40 rows: write "), "{out}");
    // Process start (issue #33 item 5): three commands as whole processes, their counts
    // checked against the in-process answer by the bench itself.
    for c in ["marquet --version", "marquet query points --count", "marquet query polygons --count"] {
        assert!(out.lines().any(|l| l.starts_with(c) && l.ends_with("<= 3") | l.ends_with("<= 2")), "{c}: {out}");
    }
    let ps: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(format!("{out_dir}/process_start.json")).unwrap()).unwrap();
    for k in ["--version", "query points --count", "query polygons --count"] {
        assert_eq!(ps[k]["wall_s"].as_array().map(Vec::len), Some(41), "{k}: {ps}");
        assert!(ps[k]["median_s"].as_f64().is_some_and(|s| s > 0.0), "{k}: {ps}");
    }
    // The default layout (what `marquet convert` writes): a block index for points, a block
    // index and an R-tree for polygons.
    let idx = |name: &str| marquet(&["index", &format!("{out_dir}/{name}.h5")]).1;
    assert_eq!(idx("points"), "BLOCK_BBOX /bench/SEARCH_INDEXES/geometry__block_bbox (valid)\n");
    assert_eq!(
        idx("polygons"),
        "BLOCK_BBOX /bench/SEARCH_INDEXES/geometry__block_bbox (valid)\nPACKED_RTREE /bench/SEARCH_INDEXES/geometry__rtree (valid)\n"
    );
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(format!("{out_dir}/marquet.json")).unwrap()).unwrap();
    assert_eq!(
        json["config"]["marquet_layout"],
        serde_json::json!({"default": true, "spatial_order": true, "chunk_rows": 2048, "values_chunk_bytes": 16384,
            "block_index": true, "block_length": 1024, "rtree": "auto", "covering": true, "compression": "deflate:4"})
    );
    // Layout options reach the files.
    let (code, _, err) = marquet(&[&small[..], &["--rtree", "on", "--chunk-rows", "100"]].concat());
    assert_eq!(code, 0, "{err}");
    assert!(idx("points").contains("PACKED_RTREE") && idx("points").contains("BLOCK_BBOX"), "{}", idx("points"));
    let f = File::open(format!("{out_dir}/points.h5")).unwrap();
    assert_eq!(f.table("/bench").unwrap().column("id").unwrap().chunk_rows(), Some(100));
    drop(f);
    let (code, _, err) = marquet(&[&small[..], &["--no-index"]].concat());
    assert_eq!(code, 0, "{err}");
    assert_eq!(idx("polygons"), "");
    // --compression reaches the geometry column; a bad value is refused.
    let (code, _, err) = marquet(&[&small[..], &["--compression", "zstd:1"]].concat());
    assert_eq!(code, 0, "{err}");
    let info = marquet(&["info", &format!("{out_dir}/polygons.h5")]).1;
    assert!(info.contains("zstd(1)"), "{info}");
    let (code, _, err) = marquet(&[&small[..], &["--compression", "lzma"]].concat());
    assert_eq!(code, 2);
    assert!(err.contains("--compression: unknown compression"), "{err}");
    // Bad input: an unknown R-tree choice.
    let (code, out, err) = marquet(&[&small[..], &["--rtree", "sideways"]].concat());
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(err.contains("invalid value 'sideways' for '--rtree"), "{err}");
}

/// Issue #38: no writer makes a table inside a table group (HEP001 §7.6): `convert --table
/// /cities/sub` into a file whose `/cities` is a table is refused with the rule named, and
/// the file is left byte for byte as it was and conformant. A path held by a plain group is
/// refused as "not a table", not as "table already exists".
#[test]
fn no_table_inside_a_table_and_clear_already_exists() {
    let dir = common::TempDir::new("cli-nested-table");
    let h5 = cities_h5(&dir);
    let before = std::fs::read(&h5).unwrap();
    let (code, _, err) = marquet(&["convert", &data(COUNTRIES), &h5, "--table", "/cities/sub"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("/cities is a table") && err.contains("HEP001 §7.6"), "{err}");
    assert_eq!(std::fs::read(&h5).unwrap(), before, "a refused convert leaves the file as it was");
    let (code, out, err) = marquet(&["validate", &h5]);
    assert_eq!(code, 0, "{out}{err}");
    // A plain group at the path: said as such.
    {
        let f = File::open_rw(&h5).unwrap();
        h5::group_create(f.id(), "/plain").unwrap();
    }
    let (code, _, err) = marquet(&["convert", &data(COUNTRIES), &h5, "--table", "/plain"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("/plain already exists and is not a table"), "{err}");
    // The library's own table creation says the same.
    let f = File::open_rw(&h5).unwrap();
    let e = f.create_table("/cities/deeper/t").err().expect("refused").to_string();
    assert!(e.contains("/cities is a table"), "{e}");
    // A table group that another producer put inside the table is a stray object for the
    // validator, and discovery does not list it (no search below a table group), by
    // libhdf5 and by byte range alike; a table below a plain group is found.
    {
        let g = h5::group_create(f.id(), "/cities/inner").unwrap();
        h5::attr_write_ascii(g.id(), "CLASS", "COLUMN_TABLE").unwrap();
        let g = h5::group_create(f.id(), "/plain/t2").unwrap();
        h5::attr_write_ascii(g.id(), "CLASS", "COLUMN_TABLE").unwrap();
    }
    let listed = f.tables().unwrap();
    drop(f);
    assert_eq!(listed, ["/cities", "/plain/t2"]);
    assert_eq!(marquet::query::reader::table_paths(Path::new(&h5)).unwrap(), listed);
    let (code, out, _) = marquet(&["validate", &h5]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("/cities/inner") && out.contains("a table group inside a table group"), "{out}");
}

/// Issue #38: `dump` tells a missing value from an empty text and from the text "NULL":
/// CSV writes a missing value as an empty field and `''` as `""`; the WKT format writes a
/// missing value as NULL and the text "NULL" quoted. The values are read back with
/// Python's csv module's rules by hand here: four rows, each cell exactly.
#[test]
fn dump_tells_null_from_empty_and_from_the_text_null() {
    let dir = common::TempDir::new("cli-dump-null");
    let gj = dir.join("t.geojson");
    let feats: Vec<String> = [r#""""#, "null", r#""NULL""#, r#""a,\"b\"""#]
        .iter()
        .enumerate()
        .map(|(i, v)| format!(r#"{{"type":"Feature","properties":{{"id":{i},"name":{v}}},"geometry":{{"type":"Point","coordinates":[{i},0]}}}}"#))
        .collect();
    std::fs::write(&gj, format!(r#"{{"type":"FeatureCollection","features":[{}]}}"#, feats.join(","))).unwrap();
    let h5 = dir.join("t.h5").display().to_string();
    let (code, _, err) = marquet(&["convert", &gj.display().to_string(), &h5, "--table", "/t", "--keep-order"]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = marquet(&["dump", &h5, "--format", "csv"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 5, "{out}");
    assert_eq!(lines[0], "geometry,id,name", "{out}");
    assert_eq!(lines[1], r#"POINT (0 0),0,"""#, "'' is quoted: {out}");
    assert_eq!(lines[2], "POINT (1 0),1,", "null is an empty field: {out}");
    assert_eq!(lines[3], "POINT (2 0),2,NULL", "{out}");
    assert_eq!(lines[4], r#"POINT (3 0),3,"a,""b""""#, "{out}");
    let (code, out, err) = marquet(&["dump", &h5, "--format", "wkt"]);
    assert_eq!(code, 0, "{err}");
    let cells: Vec<Vec<&str>> = out.lines().map(|l| l.split('\t').collect()).collect();
    let name = cells[0].iter().position(|c| *c == "name").expect("a name column");
    assert_eq!(cells[1][name], "");
    assert_eq!(cells[2][name], "NULL");
    assert_eq!(cells[3][name], r#""NULL""#);
    assert_eq!(cells[4][name], r#"a,"b""#);
}
