//! The `marquet validate` command: exit codes 0 / 1 / 2, human lines and `--json`.

use std::path::Path;
use std::process::Command;

#[path = "../examples/stations.rs"]
#[allow(dead_code)]
mod stations;

/// HDF5 locks files with flock on descriptors that a child forked by another test thread
/// would inherit; spawning and HDF5 writes are therefore serialized.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn marquet(args: &[&str]) -> (i32, String, String) {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let o = Command::new(env!("CARGO_BIN_EXE_marquet")).args(args).output().unwrap();
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

fn tmp(name: &str) -> String {
    let d = std::env::temp_dir().join(format!("marquet-cli-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name).display().to_string()
}

fn bad(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/bad").join(name).display().to_string()
}

#[test]
fn conformant_file_exits_0() {
    let p = tmp("stations.h5");
    {
        let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        stations::write_stations(&p).unwrap();
    }
    let (code, out, err) = marquet(&["validate", &p]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("conformant (1 tables, 0 errors, 0 warnings)"), "{out}");
    let (code, _, _) = marquet(&["validate", &p, "--table", "/stations", "--strict"]);
    assert_eq!(code, 0);
}

#[test]
#[cfg_attr(not(marquet_fixtures), ignore = "testdata/bad is not in the crates.io package (build.rs)")]
fn non_conformant_file_exits_1_with_one_line_per_finding() {
    let (code, out, _) = marquet(&["validate", &bad("m014_bbox_too_small.h5")]);
    assert_eq!(code, 1, "{out}");
    let first = out.lines().next().unwrap();
    assert_eq!(
        first,
        "error: HEP002 §12 req 14: /lakes/shoreline row 9: bbox xmax 500921.0 does not contain geometry xmax 500925.0"
    );
}

#[test]
fn unreadable_or_missing_file_exits_2() {
    let p = tmp("not_hdf5.txt");
    std::fs::write(&p, b"hello").unwrap();
    assert_eq!(marquet(&["validate", &p]).0, 2);
    assert_eq!(marquet(&["validate", &tmp("does_not_exist.h5")]).0, 2);
    let (code, out, _) = marquet(&["validate", &p, "--json"]);
    assert_eq!(code, 2);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["status"], "unreadable");
}

#[test]
#[cfg_attr(not(marquet_fixtures), ignore = "testdata/bad is not in the crates.io package (build.rs)")]
fn json_report_parses() {
    let (code, out, _) = marquet(&["validate", &bad("h013_boolean_value_2.h5"), "--json"]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["status"], "non-conformant");
    let f = &v["tables"][0]["findings"][0];
    assert_eq!(f["rule"], "HEP001 §13 req 13");
    assert_eq!(f["path"], "/lakes/flag");
    assert_eq!(f["row"], 3);
    assert_eq!(f["severity"], "error");
    assert_eq!(v["tables"][0]["is_marquet"], true);
}

#[test]
fn usage_errors_are_reported_by_clap() {
    let (code, _, err) = marquet(&["validate"]);
    assert_eq!(code, 2);
    assert!(err.to_lowercase().contains("usage"), "{err}");
}

/// Every file of the malformed-file registry (testdata/bad) makes `marquet validate` exit 1,
/// and every error it reports names its rule and its registered sub-check (issue 18).
#[test]
#[cfg_attr(not(marquet_fixtures), ignore = "testdata/bad is not in the crates.io package (build.rs)")]
fn every_bad_file_is_reported_with_a_named_rule_and_check() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/bad");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().and_then(|x| x.to_str()) != Some("h5") {
            continue;
        }
        n += 1;
        let (code, out, err) = marquet(&["validate", p.to_str().unwrap(), "--json"]);
        assert_eq!(code, 1, "{}: {out}{err}", p.display());
        let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
        let errors: Vec<&serde_json::Value> = v["tables"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|t| t["findings"].as_array().unwrap())
            .filter(|f| f["severity"] == "error")
            .collect();
        assert!(!errors.is_empty(), "{}", p.display());
        for f in errors {
            let rule = f["rule"].as_str().unwrap_or("");
            let check = f["check"].as_str().unwrap_or("");
            assert!(rule.starts_with("HEP00") || check == "unreadable", "{}: {f}", p.display());
            assert!(marquet::validate::checks::by_id(check).is_some(), "{}: unregistered check in {f}", p.display());
        }
    }
    assert!(n >= marquet::validate::checks::ALL.len(), "{n} bad files");
}
