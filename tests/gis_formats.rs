//! GIS formats in and out (issue #22, part 2): FlatGeobuf, GeoPackage and Shapefile files
//! written by GDAL (testdata/crs, make_fixtures.py) import with their coordinates,
//! attributes and CRS; Marquet writes each format so that our reader and GDAL (pyogrio,
//! with the test venv; required under CI) read the same features and CRS back; `append
//! --from` and `convert --to-crs` work with them.
#![cfg(all(feature = "gis", feature = "proj"))]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use marquet::convert::{append_file, convert, AppendOptions, ConvertOptions};
use marquet::h5col::File;
use marquet::marquet::{Crs, MarquetTable};
use marquet::wkb;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/crs").join(name)
}

fn expected(key: &str) -> Vec<(f64, f64)> {
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(fixture("expected.json")).unwrap()).unwrap();
    v[key].as_array().unwrap().iter().map(|p| (p[0].as_f64().unwrap(), p[1].as_f64().unwrap())).collect()
}

const NAMES: [&str; 5] = ["Köln", "Berlin", "München", "Hamburg", "Frankfurt"];
const POPS: [f64; 5] = [1.08, 3.6, 1.5, 1.9, 0.76];

/// One feature: id, WKT of the geometry, pop (if any), name.
type Row = (i64, String, Option<f64>, String);

/// The rows of the only table of `h5`, by id, and the CRS of its geometry.
fn rows(h5: &Path) -> (Crs, Vec<Row>) {
    let f = File::open(h5).unwrap();
    let tables = f.tables().unwrap();
    let t = MarquetTable::open(&f, &tables[0]).unwrap();
    let g = t.primary_geometry_column().unwrap();
    let crs = t.geometry_column(&g).unwrap().crs;
    let n = t.nrows().unwrap();
    let w = t.read_wkb(&g, 0, n).unwrap();
    let col = |name: &str| -> Option<Vec<String>> {
        let c = t.table().column(name).ok()?;
        let a = c.read(0, n).unwrap();
        Some((0..n as usize).map(|i| a.display(i)).collect())
    };
    let ids = col("id").unwrap();
    let pops = col("pop");
    let names = col("name").unwrap();
    let mut out: Vec<Row> = (0..n as usize)
        .map(|i| {
            (
                ids[i].parse().unwrap(),
                wkb::to_wkt(w.get(i).unwrap()).unwrap(),
                pops.as_ref().map(|p| p[i].parse().unwrap()),
                names[i].trim_end_matches('\0').to_string(),
            )
        })
        .collect();
    out.sort_by_key(|r| r.0);
    (crs, out)
}

fn point_rows(coords: &[(f64, f64)]) -> Vec<Row> {
    (0..5).map(|i| ((i + 1) as i64, format!("POINT ({} {})", coords[i].0, coords[i].1), Some(POPS[i]), NAMES[i].to_string())).collect()
}

fn epsg(c: &Crs) -> Option<String> {
    c.id().map(|(a, c)| format!("{a}:{c}"))
}

#[test]
fn files_gdal_wrote_import_with_coordinates_attributes_and_crs() {
    let _s = common::serial();
    let dir = common::TempDir::new("gis-import");
    let utm = point_rows(&expected("utm25832"));
    let lonlat = point_rows(&expected("lonlat"));
    for ext in ["fgb", "gpkg", "shp"] {
        let out = dir.join(&format!("utm_{ext}.h5"));
        convert(&fixture(&format!("gdal_25832.{ext}")), &out, &Default::default()).unwrap();
        let (crs, r) = rows(&out);
        assert_eq!(epsg(&crs).as_deref(), Some("EPSG:25832"), "{ext}");
        assert_eq!(r, utm, "{ext}");
        let out = dir.join(&format!("ll_{ext}.h5"));
        convert(&fixture(&format!("gdal_4326.{ext}")), &out, &Default::default()).unwrap();
        let (crs, r) = rows(&out);
        assert_eq!(crs, Crs::Default, "{ext}: EPSG:4326 is the default CRS");
        assert_eq!(r, lonlat, "{ext}");
        // Lines: the pyproj-projected cities joined in order.
        let out = dir.join(&format!("lines_{ext}.h5"));
        convert(&fixture(&format!("gdal_lines_25832.{ext}")), &out, &Default::default()).unwrap();
        let (crs, r) = rows(&out);
        assert_eq!(epsg(&crs).as_deref(), Some("EPSG:25832"), "{ext}");
        let u = expected("utm25832");
        for (i, row) in r.iter().enumerate() {
            // Shapefile polylines are MultiLineStrings of one part.
            let want = format!("({} {}, {} {})", u[i].0, u[i].1, u[i + 1].0, u[i + 1].1);
            assert!(row.1.contains(&want), "{ext}: {} vs {want}", row.1);
            assert_eq!(row.3, NAMES[i]);
        }
        let rep = marquet::validate::validate_file(&out, &Default::default()).unwrap();
        assert_eq!(rep.findings().count(), 0, "{ext}: {:?}", rep.findings().map(|f| f.message.clone()).collect::<Vec<_>>());
    }
}

fn python() -> Option<PathBuf> {
    common::venv_python_with("pyogrio", "the GDAL (pyogrio) read-back")
}

#[test]
fn written_files_read_back_by_marquet_and_gdal() {
    let _s = common::serial();
    let dir = common::TempDir::new("gis-export");
    let utm = point_rows(&expected("utm25832"));
    let src = dir.join("src.h5");
    convert(&fixture("geopandas_25832.parquet"), &src, &Default::default()).unwrap();
    let lines = dir.join("lines.h5");
    convert(&fixture("gdal_lines_25832.gpkg"), &lines, &Default::default()).unwrap();
    let mut outs = Vec::new();
    for ext in ["fgb", "gpkg", "shp"] {
        let out = dir.join(&format!("cities.{ext}"));
        let r = convert(&src, &out, &Default::default()).unwrap();
        assert_eq!(r.export.unwrap().rows, 5);
        let back = dir.join(&format!("back_{ext}.h5"));
        convert(&out, &back, &Default::default()).unwrap();
        let (crs, rr) = rows(&back);
        assert_eq!(epsg(&crs).as_deref(), Some("EPSG:25832"), "{ext}");
        assert_eq!(rr, utm, "{ext}");
        outs.push(out);
        let out = dir.join(&format!("roads.{ext}"));
        convert(&lines, &out, &Default::default()).unwrap();
        outs.push(out);
    }
    let Some(py) = python() else { return };
    let script = r#"
import sys, json, pyogrio
exp = json.loads(sys.argv[1])
for path in sys.argv[2:]:
    df = pyogrio.read_dataframe(path)
    assert df.crs.to_epsg() == 25832, (path, df.crs)
    df = df.sort_values("id")
    if "cities" in path:
        got = [[int(r["id"]), r.geometry.x, r.geometry.y, float(r["pop"]), r["name"]] for _, r in df.iterrows()]
        want = [[i + 1, x, y, p, n] for i, ((x, y), p, n) in enumerate(zip(exp["utm"], exp["pop"], exp["names"]))]
        assert got == want, (path, got, want)
    else:
        assert len(df) == 4 and list(df["name"]) == exp["names"][:4], (path, df)
        for i, g in enumerate(df.geometry):
            xy = list(g.coords) if g.geom_type == "LineString" else list(g.geoms[0].coords)
            assert xy == [tuple(exp["utm"][i]), tuple(exp["utm"][i + 1])], (path, xy)
print("ok")
"#;
    let exp = serde_json::json!({"utm": expected("utm25832"), "pop": POPS, "names": NAMES});
    let mut cmd = Command::new(py);
    cmd.args(["-c", script, &exp.to_string()]);
    for o in &outs {
        cmd.arg(o);
    }
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
}

#[test]
fn append_from_gis_files_and_reproject_into_them() {
    let _s = common::serial();
    let dir = common::TempDir::new("gis-append");
    let h5 = dir.join("t.h5");
    convert(&fixture("gdal_25832.gpkg"), &h5, &Default::default()).unwrap();
    let f = File::open_rw(&h5).unwrap();
    for ext in ["fgb", "shp"] {
        let r = append_file(&f, "/gdal_25832", &fixture(&format!("gdal_25832.{ext}")), &AppendOptions::default()).unwrap();
        assert_eq!(r.rows, 5, "{ext}");
    }
    drop(f);
    let (_, r) = rows(&h5);
    assert_eq!(r.len(), 15);
    let mut want: Vec<Row> = point_rows(&expected("utm25832")).into_iter().flat_map(|x| [x.clone(), x.clone(), x]).collect();
    want.sort_by_key(|x| x.0);
    assert_eq!(r, want);
    let rep = marquet::validate::validate_file(&h5, &Default::default()).unwrap();
    assert_eq!(rep.errors().count(), 0);
    // GeoPackage (UTM) to FlatGeobuf in longitude/latitude.
    let out = dir.join("ll.fgb");
    convert(&fixture("gdal_25832.gpkg"), &out, &ConvertOptions { to_crs: Some("EPSG:4326".into()), ..Default::default() }).unwrap();
    let back = dir.join("ll.h5");
    convert(&out, &back, &Default::default()).unwrap();
    let (crs, r) = rows(&back);
    assert_eq!(crs, Crs::Default);
    let ll = expected("lonlat");
    for (i, row) in r.iter().enumerate() {
        let g = wkb::to_wkt(&wkb::encode(&wkb::Geometry::Point(wkb::Point::new(marquet::Dimensions::Xy, wkb::Coord::xy(ll[i].0, ll[i].1))), wkb::ByteOrder::LittleEndian)).unwrap();
        let parse = |s: &str| -> (f64, f64) {
            let v: Vec<f64> = s.trim_start_matches("POINT (").trim_end_matches(')').split(' ').map(|x| x.parse().unwrap()).collect();
            (v[0], v[1])
        };
        let (a, b) = (parse(&row.1), parse(&g));
        assert!((a.0 - b.0).abs() < 1e-9 && (a.1 - b.1).abs() < 1e-9, "{a:?} vs {b:?}");
    }
}

#[test]
fn what_a_format_cannot_hold_is_refused_or_reported() {
    let _s = common::serial();
    let dir = common::TempDir::new("gis-limits");
    // A Shapefile without .prj: unknown CRS, not CRS84.
    for e in ["shp", "shx", "dbf", "cpg"] {
        std::fs::copy(fixture(&format!("gdal_25832.{e}")), dir.join(&format!("noprj.{e}"))).unwrap();
    }
    let h5 = dir.join("noprj.h5");
    convert(&dir.join("noprj.shp"), &h5, &Default::default()).unwrap();
    assert_eq!(rows(&h5).0, Crs::Unknown);
    // --crs states it.
    let h5b = dir.join("stated.h5");
    convert(&dir.join("noprj.shp"), &h5b, &ConvertOptions { crs: Some("EPSG:25832".into()), ..Default::default() }).unwrap();
    assert_eq!(epsg(&rows(&h5b).0).as_deref(), Some("EPSG:25832"));
    // Mixed geometry types do not fit one Shapefile.
    let mixed = dir.join("mixed.geojson");
    std::fs::write(
        &mixed,
        r#"{"type":"FeatureCollection","features":[
{"type":"Feature","properties":{"id":1},"geometry":{"type":"Point","coordinates":[1,2]}},
{"type":"Feature","properties":{"id":2},"geometry":{"type":"LineString","coordinates":[[1,2],[3,4]]}}]}"#,
    )
    .unwrap();
    let e = convert(&mixed, &dir.join("mixed.shp"), &Default::default()).unwrap_err().to_string();
    assert!(e.contains("one shape type"), "{e}");
    // ...but do in a GeoPackage and a FlatGeobuf, read back the same.
    for ext in ["gpkg", "fgb"] {
        let out = dir.join(&format!("mixed.{ext}"));
        convert(&mixed, &out, &Default::default()).unwrap();
        let back = dir.join(&format!("mixed_{ext}.h5"));
        convert(&out, &back, &Default::default()).unwrap();
        let f = File::open(&back).unwrap();
        let t = MarquetTable::open(&f, "/mixed").unwrap();
        let w = t.read_wkb("geometry", 0, 2).unwrap();
        let mut got: Vec<String> = (0..2).map(|i| wkb::to_wkt(w.get(i).unwrap()).unwrap()).collect();
        got.sort();
        assert_eq!(got, vec!["LINESTRING (1 2, 3 4)", "POINT (1 2)"], "{ext}");
    }
    // A null geometry: kept by GeoPackage, refused by the FlatGeobuf and Shapefile writers
    // (never written as something else).
    let nulls = dir.join("nulls.geojson");
    std::fs::write(
        &nulls,
        r#"{"type":"FeatureCollection","features":[
{"type":"Feature","properties":{"id":1},"geometry":{"type":"Point","coordinates":[1,2]}},
{"type":"Feature","properties":{"id":2},"geometry":null}]}"#,
    )
    .unwrap();
    for ext in ["fgb", "shp"] {
        let e = convert(&nulls, &dir.join(&format!("nulls.{ext}")), &Default::default()).unwrap_err().to_string();
        assert!(e.contains("null geometry") && e.contains("row 1"), "{ext}: {e}");
    }
    let out = dir.join("nulls.gpkg");
    convert(&nulls, &out, &Default::default()).unwrap();
    let back = dir.join("nulls_gpkg.h5");
    convert(&out, &back, &Default::default()).unwrap();
    let f = File::open(&back).unwrap();
    let t = MarquetTable::open(&f, "/nulls").unwrap();
    let w = t.read_wkb("geometry", 0, 2).unwrap();
    assert_eq!((0..2).filter(|&i| w.get(i).is_none()).count(), 1);
    drop(t);
    drop(f);
    // Not a GeoPackage: a clear error, no panic.
    let bad = dir.join("bad.gpkg");
    std::fs::write(&bad, b"not sqlite at all, just text").unwrap();
    assert!(convert(&bad, &dir.join("bad.h5"), &Default::default()).is_err());
    let bad = dir.join("bad.fgb");
    std::fs::write(&bad, b"fgb\x03fgb\x00garbage").unwrap();
    assert!(convert(&bad, &dir.join("bad2.h5"), &Default::default()).is_err());
}
