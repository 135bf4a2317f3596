//! Model-based random test of the `marquet` CLI (issue #38, item 2): runs
//! tests/model/model_test.py with this build's binary. The script generates seeded random
//! GeoDataFrames and operation sequences (convert with random layout flags, append from
//! GeoParquet and from another table, appends that must be refused, index build/drop,
//! convert into the same file), mirrors each on an in-memory geopandas/shapely model, and
//! after every step checks `validate`, `query --count` for every predicate over random
//! windows (degenerate, whole world, antimeridian-wrapping) with and without `--no-index`
//! against shapely, and a full GeoParquet export against the model as a multiset of rows.
//!
//! CI mode (default): 20 trials of 9 operations (200 operations), quick checks.
//! Long mode: `MARQUET_MODEL_TRIALS=200 cargo test --test model_based -- --nocapture`
//! (full checks after every step; `MARQUET_MODEL_OPS`, `MARQUET_MODEL_SEED` also read).
//!
//! Needs the test venv of scripts/pyvenv.sh (geopandas, shapely, pyarrow); skipped with a
//! notice without it, failing under CI.
#![cfg(feature = "geoparquet")]

use std::path::Path;
use std::process::Command;

#[test]
fn model_based_random_sequences_agree_with_shapely_and_geopandas() {
    let home = std::env::var("HOME").unwrap_or_default();
    let py = Path::new(&home).join(".cache/marquet/pyvenv/bin/python");
    let ok = py.exists() && Command::new(&py).args(["-c", "import geopandas, shapely, pyarrow"]).status().map(|s| s.success()).unwrap_or(false);
    if !ok {
        assert!(std::env::var_os("CI").is_none(), "CI is set but the test venv has no geopandas: run scripts/pyvenv.sh");
        println!("NOTICE: skipping the model-based test (no geopandas in {}; run scripts/pyvenv.sh)", py.display());
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/model/model_test.py");
    let seed = std::env::var("MARQUET_MODEL_SEED").unwrap_or_else(|_| "1".into());
    let t0 = std::time::Instant::now();
    let o = Command::new(&py)
        .arg(&script)
        .args(["--marquet", env!("CARGO_BIN_EXE_marquet"), "--seed", &seed])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    println!("{stdout}{stderr}({:.1} s)", t0.elapsed().as_secs_f64());
    assert!(o.status.success(), "the model-based test failed:\n{stderr}");
    // The summary line names the counts; a run that compared nothing proves nothing.
    let line = stdout.lines().find(|l| l.starts_with("model test")).expect("no summary line");
    let count = |what: &str| -> u64 {
        let i = line.find(what).unwrap_or_else(|| panic!("no '{what}' in {line}"));
        line[i + what.len()..].split(|c: char| !c.is_ascii_digit()).find(|s| !s.is_empty()).unwrap().parse().unwrap()
    };
    assert!(count("operations ") >= 100, "{line}");
    assert!(count("query answers compared ") >= 1000, "{line}");
    assert!(count("exports compared ") >= 100, "{line}");
    assert_eq!(count("failures "), 0, "{line}");
}
