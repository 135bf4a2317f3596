//! The cross-format comparison harness (issue #10) at a tiny size: the Rust side
//! (`crate::bench::run`, i.e. `marquet bench`) must write the raw data exactly as
//! generated and return, for every window, exactly the ids a brute-force filter over all
//! rows finds; the Python side (`benches/compare/compare.py`), when its venv exists, must
//! find the same ids in GeoParquet, FlatGeobuf and GeoPackage.

use marquet_dev::bench;

mod common;

use common::synth;

use std::path::Path;

use geo::Intersects;
use crate::bench::BenchConfig;
use marquet::BBox;

const POINTS: usize = 4_000;
const POLYGONS: usize = 1_500;
const WINDOWS: usize = 24;

fn tiny(dir: &Path) -> BenchConfig {
    BenchConfig { points: POINTS, polygons: POLYGONS, windows: WINDOWS, reps: 1, seed: 7, ..BenchConfig::full(dir) }
}

fn brute_points(x: &[f64], y: &[f64], w: &BBox) -> Vec<u64> {
    (0..x.len()).filter(|&i| x[i] >= w.xmin && x[i] <= w.xmax && y[i] >= w.ymin && y[i] <= w.ymax).map(|i| i as u64).collect()
}

fn brute_polygons(polys: &[Vec<u8>], w: &BBox) -> Vec<u64> {
    let rect = geo_types::Rect::new(geo_types::coord! { x: w.xmin, y: w.ymin }, geo_types::coord! { x: w.xmax, y: w.ymax });
    (0..polys.len())
        .filter(|&i| {
            let g: geo_types::Geometry<f64> = (&marquet::wkb::decode(&polys[i]).expect("synthetic WKB decodes")).into();
            g.intersects(&rect)
        })
        .map(|i| i as u64)
        .collect()
}

fn read_raw(dir: &Path, name: &str) -> (Vec<u8>, Vec<u64>) {
    let bytes = std::fs::read(dir.join(format!("{name}.wkb"))).unwrap();
    let offs = std::fs::read(dir.join(format!("{name}.offsets"))).unwrap();
    assert_eq!(offs.len() % 8, 0);
    (bytes, offs.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect())
}

#[test]
fn rust_side_matches_brute_force_and_writes_the_raw_data_exactly() {
    let tmp = common::TempDir::new("bench-compare");
    let cfg = tiny(tmp.path());
    let report = bench::run(&cfg).expect("bench runs");

    // The raw form is the generated data, byte for byte.
    let (x, y) = synth::clustered_points(POINTS, 7);
    let point_wkb = bench::point_wkb(&x, &y);
    let polys = synth::polygons(POLYGONS, 7);
    for (name, values) in [("points", &point_wkb), ("polygons", &polys)] {
        let (bytes, offs) = read_raw(tmp.path(), name);
        assert_eq!(offs.len(), values.len() + 1, "{name}.offsets");
        assert_eq!(bytes, values.concat(), "{name}.wkb");
        let mut o = 0u64;
        for (i, v) in values.iter().enumerate() {
            assert_eq!(offs[i], o, "{name} offset {i}");
            o += v.len() as u64;
        }
        assert_eq!(offs[values.len()], o);
    }
    let windows = synth::windows(WINDOWS, 7, bench::DEFAULT_WINDOW_SIDE);
    assert_eq!(report.windows, windows);
    assert_eq!(std::fs::read_to_string(tmp.join("windows.txt")).unwrap(), bench::windows_text(&windows));

    // Every window's answer is the brute-force answer, and its WKB is what was written.
    assert_eq!(report.datasets.len(), 2);
    let mut matched = [0usize; 2];
    for (k, d) in report.datasets.iter().enumerate() {
        let values = if k == 0 { &point_wkb } else { &polys };
        assert_eq!(d.name, ["points", "polygons"][k]);
        assert_eq!(d.rows, values.len());
        assert_eq!(d.write_s.len(), 1);
        assert_eq!(d.read_s.len(), 1);
        assert_eq!(d.query_s.len(), WINDOWS);
        assert_eq!(d.size_bytes, std::fs::metadata(&d.path).unwrap().len());
        assert_eq!(d.read_wkb_bytes, values.iter().map(|v| v.len() as u64).sum::<u64>());
        for (i, w) in windows.iter().enumerate() {
            let want = if k == 0 { brute_points(&x, &y, w) } else { brute_polygons(&polys, w) };
            assert_eq!(d.query_ids[i], want, "{} window {i} {w:?}", d.name);
            let wkb: u64 = want.iter().map(|&r| values[r as usize].len() as u64).sum();
            assert_eq!(d.query_wkb_bytes[i], wkb, "{} window {i}: WKB bytes returned", d.name);
            matched[k] += want.len();
        }
    }
    // Not vacuous: the windows find data, and not everything.
    assert!(matched[0] > 0 && matched[0] < POINTS * WINDOWS, "points matched {}", matched[0]);
    assert!(matched[1] > 0 && matched[1] < POLYGONS * WINDOWS, "polygons matched {}", matched[1]);

    // The full read returns every id with its original WKB (rows are stored in Hilbert order).
    let (ids, wkb) = bench::read_marquet(&report.datasets[1].path).unwrap();
    assert_eq!(ids.len(), POLYGONS);
    for (r, &id) in ids.iter().enumerate() {
        assert_eq!(wkb.get(r).unwrap(), &polys[id as usize][..], "row {r} id {id}");
    }
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..POLYGONS as u64).collect::<Vec<_>>());

    // marquet.json carries the same answers for the Python side.
    let j: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(tmp.join("marquet.json")).unwrap()).unwrap();
    assert_eq!(j["config"]["points"], POINTS);
    assert_eq!(j["windows"].as_array().unwrap().len(), WINDOWS);
    for d in &report.datasets {
        let q: Vec<Vec<u64>> = serde_json::from_value(j["datasets"][&d.name]["query_ids"].clone()).unwrap();
        assert_eq!(q, d.query_ids);
        assert_eq!(j["datasets"][&d.name]["size_bytes"], d.size_bytes);
    }
}

/// The Python side on the same tiny data: every format returns Marquet's ids for every
/// window (compare.py exits 1 otherwise). Skipped when the venv of scripts/pyvenv.sh with
/// pyogrio is missing, unless `CI` is set.
#[test]
fn python_side_agrees_on_every_window() {
    let Some(py) = common::venv_python_with("pyarrow, pyogrio, shapely", "the Python side of the comparison") else { return };
    let _serial = common::serial();
    let tmp = common::TempDir::new("bench-compare-py");
    let report = bench::run(&tiny(tmp.path())).expect("bench runs");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/compare/compare.py");
    let json = tmp.join("out.json");
    let out = std::process::Command::new(&py)
        .arg(&script)
        .arg("--work")
        .arg(tmp.path())
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "compare.py failed\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("all formats returned the same ids for every window"), "{stdout}");
    let j: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(j["rows_agree"], true);
    for d in &report.datasets {
        let want: Vec<usize> = d.query_ids.iter().map(|v| v.len()).collect();
        for f in ["marquet", "geoparquet", "flatgeobuf", "geopackage"] {
            let got: Vec<usize> = serde_json::from_value(j["datasets"][&d.name]["formats"][f]["query_rows"].clone()).unwrap();
            assert_eq!(got, want, "{f} {}", d.name);
        }
    }
}
