//! `marquet query --bbox-file` answers every window through one `SpatialReader` (issue #20);
//! `--reopen` opens the file per window. Both print exactly the same rows, counts and JSON
//! statistics, and the rows of a full scan (`--no-index`).

use marquet_dev::synth;
use marquet_dev::bench;

use bench::write_marquet;
use std::process::Command;

use marquet::marquet::{GeometryValues, WriteLayout};
use marquet::Dimensions;

fn marquet(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_marquet")).args(args).output().unwrap();
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn bbox_file_warm_equals_reopen_and_full_scan() {
    let d = std::env::temp_dir().join(format!("marquet-cli-reader-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let (x, y) = synth::clustered_points(20_000, 3);
    let points = GeometryValues::Points { dims: Dimensions::Xy, x, y, z: None, m: None, valid: None };
    let polys = GeometryValues::Wkb(synth::polygons(3_000, 3).into_iter().map(Some).collect());
    let mut windows = bench::windows_text(&synth::windows(40, 3, 0.5));
    windows += &bench::windows_text(&synth::windows(5, 3, 8.0));
    let wf = d.join("w.txt");
    std::fs::write(&wf, &windows).unwrap();
    let wf = wf.display().to_string();
    for (name, values) in [("points", points), ("polygons", polys)] {
        let p = d.join(format!("{name}.h5"));
        write_marquet(&p, &values, &WriteLayout::default()).unwrap();
        let p = p.display().to_string();
        let run = |extra: &[&str]| {
            let mut args = vec!["query", p.as_str(), "--bbox-file", wf.as_str()];
            args.extend_from_slice(extra);
            let (code, out, err) = marquet(&args);
            assert_eq!(code, 0, "{args:?}: {err}");
            out
        };
        let warm = run(&["--json"]);
        assert_eq!(warm, run(&["--json", "--reopen"]), "{name}: warm and reopen differ");
        assert_eq!(warm.lines().count(), 45);
        let counts = run(&["--count"]);
        assert_eq!(counts, run(&["--count", "--reopen"]));
        let total: u64 = counts.lines().map(|l| l.parse::<u64>().unwrap()).sum();
        assert!(total > 100, "{name}: {total} rows matched");
        // The row numbers of the full scan, window by window.
        let rows: Vec<Vec<u64>> = warm
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["rows"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect())
            .collect();
        let scan: Vec<Vec<u64>> = run(&["--json", "--no-index"])
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["rows"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect())
            .collect();
        assert_eq!(rows, scan, "{name}");
    }
    // A window that cannot be parsed is an error naming it, in both modes.
    std::fs::write(d.join("bad.txt"), "0,0,1,1\n0,0,x,1\n").unwrap();
    let bad = d.join("bad.txt").display().to_string();
    let p = d.join("points.h5").display().to_string();
    for extra in [&[][..], &["--reopen"][..]] {
        let mut args = vec!["query", p.as_str(), "--bbox-file", bad.as_str(), "--count"];
        args.extend_from_slice(extra);
        let (code, _, err) = marquet(&args);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("bad window \"0,0,x,1\""), "{err}");
    }
}

/// `marquet bench` runs the native FlatGeobuf anchor (issue #20): both formats answer every
/// window in four modes and must return `marquet bench`'s ids (the run fails otherwise);
/// anchor.json holds one time per window and mode for both.
#[test]
fn bench_runs_the_flatgeobuf_anchor_cold_and_warm() {
    let d = std::env::temp_dir().join(format!("marquet-cli-anchor-{}", std::process::id()));
    let out = d.display().to_string();
    let (code, stdout, err) = marquet(&["bench", "--points", "3000", "--polygons", "600", "--windows", "9", "--reps", "1", "--out", &out]);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.contains("marquet vs native flatgeobuf"), "{stdout}");
    let a: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(d.join("anchor.json")).unwrap()).unwrap();
    for name in ["points", "polygons"] {
        assert!(d.join(format!("{name}.fgb")).exists());
        for mode in ["cold_count", "cold_ids_wkb", "warm_count", "warm_ids_wkb"] {
            let m = &a[name]["modes"][mode];
            assert_eq!(m["marquet_s"].as_array().unwrap().len(), 9, "{name} {mode}");
            assert_eq!(m["flatgeobuf_s"].as_array().unwrap().len(), 9, "{name} {mode}");
        }
        assert!(a[name]["flatgeobuf_size_bytes"].as_u64().unwrap() > 0);
    }
}
