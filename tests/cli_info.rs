//! `marquet info` and `marquet dump` on the HEP002 §15.1 stations file.

mod common;

use marquet_dev::stations;

use std::process::Command;

fn marquet(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_marquet")).args(args).output().unwrap();
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn dump_and_info_show_the_stations() {
    let _s = common::serial();
    let dir = common::TempDir::new("cli-info");
    let p = dir.join("stations.h5");
    stations::write_stations(&p.display().to_string()).unwrap();
    let ps = p.display().to_string();
    let (code, out, _) = marquet(&["dump", &ps, "--format", "csv"]);
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "location,location_wkb,location_wkb_list\n\
         POINT (-88.2434 40.1164),POINT (-88.2434 40.1164),POINT (-88.2434 40.1164)\n\
         ,,\n\
         POINT EMPTY,POINT EMPTY,POINT EMPTY\n"
    );
    let (code, out, _) = marquet(&["dump", &ps, "--rows", "1..2"]);
    assert_eq!((code, out.as_str()), (0, "location\tlocation_wkb\tlocation_wkb_list\nNULL\tNULL\tNULL\n"));
    let (code, out, _) = marquet(&["info", &ps, "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let t = &v["tables"][0];
    assert_eq!(t["path"], "/stations");
    assert_eq!(t["nrows"], 3);
    let g = t["geometry_columns"].as_array().unwrap();
    assert_eq!(g.len(), 3);
    assert_eq!(g[0]["storage_form"], "point xy float64");
    assert_eq!(g[1]["storage_form"], "fixed-length WKB (21 bytes)");
    assert_eq!(g[2]["storage_form"], "variable-length WKB");
    assert_eq!(g[2]["geometry_types"], serde_json::json!(["Point"]));
    assert_eq!(g[0]["bbox"], serde_json::json!([-88.2434, 40.1164, -88.2434, 40.1164]));
    let (code, _, err) = marquet(&["dump", "/nonexistent/x.h5"]);
    assert_eq!(code, 2);
    assert!(err.contains("no such file"), "{err}");
}
