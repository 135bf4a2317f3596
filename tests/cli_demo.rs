//! `marquet demo`, `query`, `index` and `convert` end to end on the bundled Natural Earth data.
#![cfg(feature = "geoparquet")]

mod common;

use std::process::Command;

fn marquet(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_marquet")).args(args).output().unwrap();
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn demo_then_query_index_and_convert() {
    let _s = common::serial();
    let dir = common::TempDir::new("cli-demo");
    let out = dir.join("demo");
    let (code, text, err) = marquet(&["demo", "--out", &out.display().to_string()]);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("imported 177 rows"), "{text}");
    assert!(text.contains("imported 243 rows"), "{text}");
    assert!(text.contains("/countries: 29 of 177 rows intersect"), "{text}");
    assert!(text.contains("/cities: 33 of 243 rows intersect"), "{text}");
    assert!(text.contains(": conformant (0 errors)"), "{text}");
    assert!(text.contains("exported 177 rows of /countries"), "{text}");
    // The map: the window, 29 country outlines and 33 labelled city dots.
    assert!(text.contains(&format!("map of the window: {} (29 countries, 33 cities)", out.join("window.svg").display())), "{text}");
    let svg = std::fs::read_to_string(out.join("window.svg")).unwrap();
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"720\" height=\"600\""), "{svg}");
    assert_eq!(svg.matches("<path ").count(), 29);
    assert_eq!(svg.matches("<circle ").count(), 33);
    assert!(svg.contains("<title>France</title>") && svg.contains(">Paris</text>"), "{svg}");
    assert!(svg.ends_with("</svg>\n"));
    let h5 = out.join("natural_earth.h5").display().to_string();
    // Many windows in one process, one count per line in input order; indexes on and off agree.
    let wf = dir.join("windows.txt");
    std::fs::write(&wf, "-10,35,20,60\n100,0,101,1\n-180,-90,180,90\n").unwrap();
    let wfs = wf.display().to_string();
    let (code, counts, _) = marquet(&["query", &h5, "--table", "/cities", "--bbox-file", &wfs, "--count"]);
    assert_eq!((code, counts.as_str()), (0, "33\n0\n243\n"));
    let (_, counts2, _) = marquet(&["query", &h5, "--table", "/cities", "--bbox-file", &wfs, "--count", "--no-index"]);
    assert_eq!(counts, counts2);
    let (code, _, stats) = marquet(&["query", &h5, "--table", "/cities", "--bbox", "-10,35,20,60", "--count", "--stats"]);
    assert_eq!(code, 0);
    assert!(stats.contains("matched 33"), "{stats}");
    // Without --table a file with two tables is an error that lists them.
    let (code, _, err) = marquet(&["query", &h5, "--bbox", "0,0,1,1"]);
    assert_eq!(code, 2);
    assert!(err.contains("/cities") && err.contains("/countries"), "{err}");
    let (code, list, _) = marquet(&["index", &h5, "--table", "/cities", "--drop", "packed_rtree"]);
    assert_eq!(code, 0);
    assert!(list.contains("BLOCK_BBOX") && !list.contains("PACKED_RTREE"), "{list}");
    // GeoParquet -> GeoJSON through convert.
    let pq = out.join("countries.parquet").display().to_string();
    let gj = dir.join("countries.geojson").display().to_string();
    let (code, _, err) = marquet(&["convert", &pq, &gj]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&gj).unwrap()).unwrap();
    assert_eq!(v["features"].as_array().unwrap().len(), 177);
}
