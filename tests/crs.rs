//! CRS done right (issue #22, part 1): CRSs stated by files that DuckDB, GDAL and geopandas
//! wrote are read (never replaced by OGC:CRS84), `convert --crs` states one, `--to-crs`
//! reprojects (values checked against pyproj's, BBOX and indexes rebuilt), GeoJSON output
//! is CRS84 or refused, the validator warns on geographic CRSs with projected coordinates,
//! and GeoParquet 2.0 export states the CRS in the Parquet logical type.
//!
//! Fixtures: testdata/crs/ (make_fixtures.py; expected.json holds pyproj's coordinates).
#![cfg(all(feature = "geoparquet", feature = "proj"))]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use marquet::convert::{convert, ConvertOptions};
use marquet::h5col::File;
use marquet::marquet::{Crs, MarquetTable};
use marquet::wkb::{self, Geometry};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/crs").join(name)
}

fn expected(key: &str) -> Vec<(f64, f64)> {
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(fixture("expected.json")).unwrap()).unwrap();
    v[key].as_array().unwrap().iter().map(|p| (p[0].as_f64().unwrap(), p[1].as_f64().unwrap())).collect()
}

fn cli(args: &[&str]) -> (bool, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_marquet")).args(args).output().unwrap();
    (o.status.success(), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// The primary geometry column's CRS and its points (x, y), ordered by the `id` column.
fn crs_and_points(h5: &Path) -> (Crs, Vec<(f64, f64)>) {
    let f = File::open(h5).unwrap();
    let tables = f.tables().unwrap();
    let t = MarquetTable::open(&f, &tables[0]).unwrap();
    let g = t.primary_geometry_column().unwrap();
    let crs = t.geometry_column(&g).unwrap().crs;
    let n = t.nrows().unwrap();
    let w = t.read_wkb(&g, 0, n).unwrap();
    let ids = t.table().column("id").unwrap().read(0, n).unwrap();
    let mut pts: Vec<(i64, (f64, f64))> = (0..n as usize)
        .map(|i| {
            let id: i64 = ids.display(i).parse().unwrap();
            let Geometry::Point(p) = wkb::decode(w.get(i).unwrap()).unwrap() else { panic!("not a point") };
            (id, (p.coord.x, p.coord.y))
        })
        .collect();
    pts.sort_by_key(|p| p.0);
    (crs, pts.into_iter().map(|p| p.1).collect())
}

fn close(a: &[(f64, f64)], b: &[(f64, f64)], tol: f64) {
    assert_eq!(a.len(), b.len());
    for (p, q) in a.iter().zip(b) {
        assert!((p.0 - q.0).abs() <= tol && (p.1 - q.1).abs() <= tol, "{p:?} vs {q:?} (tolerance {tol})");
    }
}

fn id(c: &Crs) -> Option<(String, String)> {
    c.id()
}

fn epsg(code: &str) -> Option<(String, String)> {
    Some(("EPSG".into(), code.into()))
}

fn import(src: &Path, dir: &common::TempDir, name: &str, opts: ConvertOptions) -> PathBuf {
    let out = dir.join(name);
    convert(src, &out, &opts).unwrap();
    out
}

#[test]
fn crs_of_files_written_by_gdal_geopandas_and_duckdb_is_kept() {
    let _s = common::serial();
    let dir = common::TempDir::new("crs-peers");
    // GDAL GeoJSON with the legacy member "urn:ogc:def:crs:EPSG::3857" (was read as CRS84).
    let (c, pts) = crs_and_points(&import(&fixture("gdal_3857.geojson"), &dir, "a.h5", Default::default()));
    assert_eq!(id(&c), epsg("3857"));
    close(&pts, &expected("merc3857"), 1e-6);
    // geopandas GeoParquet 1.0, UTM 32N PROJJSON in `geo`.
    let (c, pts) = crs_and_points(&import(&fixture("geopandas_25832.parquet"), &dir, "b.h5", Default::default()));
    assert_eq!(id(&c), epsg("25832"));
    close(&pts, &expected("utm25832"), 1e-6);
    // DuckDB, CRS only in the Parquet GEOMETRY logical type (PROJJSON), no `geo` key.
    let (c, pts) = crs_and_points(&import(&fixture("duckdb_3857.parquet"), &dir, "c.h5", Default::default()));
    assert_eq!(id(&c), epsg("3857"));
    close(&pts, &expected("merc3857"), 1e-6);
    for f in ["a.h5", "b.h5", "c.h5"] {
        let r = marquet::validate::validate_file(dir.join(f), &Default::default()).unwrap();
        assert_eq!(r.findings().count(), 0, "{f}: {:?}", r.findings().map(|x| x.message.clone()).collect::<Vec<_>>());
    }
}

/// A GeoParquet 2.0 file whose logical type names the CRS by identifier (as DuckDB's spatial
/// extension writes `EPSG:3857`), or `srid:N`, or whose pre-1.0 `geo` crs is WKT.
#[test]
fn identifiers_and_wkt_in_geoparquet_resolve() {
    let _s = common::serial();
    use arrow_array::{ArrayRef, BinaryArray, Int64Array, RecordBatch};
    use arrow_schema::{DataType, Field, Schema};
    let dir = common::TempDir::new("crs-ids");
    let merc = expected("merc3857");
    let wkbs: Vec<Vec<u8>> = merc
        .iter()
        .map(|&(x, y)| wkb::encode(&Geometry::Point(wkb::Point::new(marquet::Dimensions::Xy, wkb::Coord::xy(x, y))), wkb::ByteOrder::LittleEndian))
        .collect();
    let write = |name: &str, ext_crs: Option<&str>, geo: Option<String>| -> PathBuf {
        let mut g = Field::new("geom", DataType::Binary, true);
        if let Some(c) = ext_crs {
            g = g.with_metadata(std::collections::HashMap::from(
                [
                    ("ARROW:extension:name".to_string(), "geoarrow.wkb".to_string()),
                    ("ARROW:extension:metadata".to_string(), serde_json::json!({ "crs": c }).to_string()),
                ],
            ));
        }
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false), g]));
        let ids: ArrayRef = Arc::new(Int64Array::from((1..=5).collect::<Vec<i64>>()));
        let geoms: ArrayRef = Arc::new(BinaryArray::from_iter_values(wkbs.iter()));
        let b = RecordBatch::try_new(schema.clone(), vec![ids, geoms]).unwrap();
        let p = dir.join(name);
        let mut w = parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&p).unwrap(), schema, None).unwrap();
        w.write(&b).unwrap();
        if let Some(geo) = geo {
            w.append_key_value_metadata(parquet::file::metadata::KeyValue::new("geo".into(), geo));
        }
        w.close().unwrap();
        p
    };
    for (i, crs) in ["EPSG:3857", "srid:3857", "urn:ogc:def:crs:EPSG::3857"].iter().enumerate() {
        let p = write(&format!("lt{i}.parquet"), Some(crs), None);
        let (c, pts) = crs_and_points(&import(&p, &dir, &format!("lt{i}.h5"), Default::default()));
        assert_eq!(id(&c), epsg("3857"), "{crs}");
        close(&pts, &merc, 0.0);
    }
    // GeoParquet 0.4 with a WKT 1 crs string (GDAL 3.5 wrote these).
    let wkt = marquet::crs::to_wkt(&marquet::crs::resolve("EPSG:3857").unwrap(), marquet::crs::WktDialect::Wkt1Gdal).unwrap().unwrap();
    let geo = serde_json::json!({"version": "0.4.0", "primary_column": "geom", "columns": {"geom": {"encoding": "WKB", "geometry_types": ["Point"], "crs": wkt}}});
    let p = write("wkt.parquet", None, Some(geo.to_string()));
    let (c, _) = crs_and_points(&import(&p, &dir, "wkt.h5", Default::default()));
    assert_eq!(id(&c), epsg("3857"));
    // Unresolvable: never guessed; unknown, with the text kept in the description.
    let p = write("bad.parquet", Some("FOO:1234"), None);
    let out = dir.join("bad.h5");
    let r = convert(&p, &out, &Default::default()).unwrap();
    let imp = r.import.unwrap();
    assert!(imp.findings.iter().any(|f| f.message.contains("FOO:1234")), "{imp}");
    let (c, _) = crs_and_points(&out);
    assert_eq!(c, Crs::Unknown);
}

#[test]
fn convert_crs_states_and_to_crs_reprojects() {
    let _s = common::serial();
    let dir = common::TempDir::new("crs-convert");
    let merc = expected("merc3857");
    let utm = expected("utm25832");
    let lonlat = expected("lonlat");
    // --to-crs: GDAL's Web Mercator GeoJSON to UTM 32N (pyproj's values within 1 mm).
    let out = import(&fixture("gdal_3857.geojson"), &dir, "utm.h5", ConvertOptions { to_crs: Some("EPSG:25832".into()), ..Default::default() });
    let (c, pts) = crs_and_points(&out);
    assert_eq!(id(&c), epsg("25832"));
    close(&pts, &utm, 1e-3);
    let f = File::open(&out).unwrap();
    let t = MarquetTable::open(&f, "/gdal_3857").unwrap();
    let info = t.geometry_column("geometry").unwrap();
    let (b, _, _) = info.bbox.unwrap();
    let xmin = utm.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let ymax = utm.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
    assert!((b.xmin - xmin).abs() < 1e-3 && (b.ymax - ymax).abs() < 1e-3, "{b:?}");
    let idx = t.spatial_indexes("geometry").unwrap();
    assert!(!idx.is_empty() && idx.iter().all(|i| i.valid), "{idx:?}");
    drop(t);
    drop(f);
    let r = marquet::validate::validate_file(&out, &Default::default()).unwrap();
    assert_eq!(r.findings().count(), 0, "{:?}", r.findings().map(|x| x.message.clone()).collect::<Vec<_>>());
    // HDF5 to HDF5 with --to-crs (the input stays as it was).
    let back = dir.join("lonlat.h5");
    let (ok, _, err) = cli(&["convert", out.to_str().unwrap(), back.to_str().unwrap(), "--to-crs", "OGC:CRS84"]);
    assert!(ok, "{err}");
    let (c, pts) = crs_and_points(&back);
    assert_eq!(c, Crs::Default);
    close(&pts, &lonlat, 1e-9);
    assert_eq!(id(&crs_and_points(&out).0), epsg("25832"));
    // --crs states a missing CRS (coordinates unchanged): a GeoJSON without a crs member
    // holding Web Mercator coordinates.
    let text = std::fs::read_to_string(fixture("gdal_3857.geojson")).unwrap();
    let nocrs: String = text.lines().filter(|l| !l.starts_with("\"crs\"")).collect::<Vec<_>>().join("\n");
    let src = dir.join("nocrs.geojson");
    std::fs::write(&src, nocrs).unwrap();
    let (c, _) = crs_and_points(&import(&src, &dir, "plain.h5", Default::default()));
    assert_eq!(c, Crs::Default, "RFC 7946 default");
    let stated = dir.join("stated.h5");
    let (ok, _, err) = cli(&["convert", src.to_str().unwrap(), stated.to_str().unwrap(), "--crs", "EPSG:3857"]);
    assert!(ok, "{err}");
    let (c, pts) = crs_and_points(&stated);
    assert_eq!(id(&c), epsg("3857"));
    close(&pts, &merc, 1e-6);
    // An unresolvable --crs is an error naming it; nothing is written.
    let none = dir.join("none.h5");
    let (ok, _, err) = cli(&["convert", src.to_str().unwrap(), none.to_str().unwrap(), "--crs", "EPSG:999999"]);
    assert!(!ok && err.contains("EPSG:999999"), "{err}");
    assert!(!none.exists());
    // Reprojecting from an unknown CRS is refused.
    let unk = dir.join("unk.h5");
    let (ok, _, err) = cli(&["convert", src.to_str().unwrap(), unk.to_str().unwrap(), "--crs", "unknown"]);
    assert!(ok, "{err}");
    let (ok, _, err) = cli(&["convert", unk.to_str().unwrap(), dir.join("x.h5").to_str().unwrap(), "--to-crs", "EPSG:4326"]);
    assert!(!ok && err.contains("unknown"), "{err}");
}

#[test]
fn geojson_output_is_crs84_or_refused() {
    let _s = common::serial();
    let dir = common::TempDir::new("crs-geojson");
    let lonlat = expected("lonlat");
    let h5 = import(&fixture("gdal_3857.geojson"), &dir, "m.h5", Default::default());
    let coords_of = |text: &str| -> Vec<(f64, f64)> {
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        let mut f: Vec<(i64, (f64, f64))> = v["features"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                let c = &f["geometry"]["coordinates"];
                (f["properties"]["id"].as_i64().unwrap(), (c[0].as_f64().unwrap(), c[1].as_f64().unwrap()))
            })
            .collect();
        f.sort_by_key(|x| x.0);
        f.into_iter().map(|x| x.1).collect()
    };
    let out = dir.join("m.geojson");
    let (ok, stdout, err) = cli(&["convert", h5.to_str().unwrap(), out.to_str().unwrap()]);
    assert!(ok && stdout.contains("reprojected"), "{stdout}{err}");
    close(&coords_of(&std::fs::read_to_string(&out).unwrap()), &lonlat, 1e-9);
    let (ok, dump, err) = cli(&["dump", h5.to_str().unwrap(), "--format", "geojson"]);
    assert!(ok, "{err}");
    close(&coords_of(&dump), &lonlat, 1e-9);
    let (ok, q, err) = cli(&["query", h5.to_str().unwrap(), "--bbox", "-1e8,-1e8,1e8,1e8", "--format", "geojson"]);
    assert!(ok, "{err}");
    close(&coords_of(&q), &lonlat, 1e-9);
    // Unknown CRS: refused with a clear error, no file left behind.
    let unk = import(&fixture("gdal_3857.geojson"), &dir, "u.h5", ConvertOptions { crs: Some("unknown".into()), ..Default::default() });
    let out = dir.join("u.geojson");
    let (ok, _, err) = cli(&["convert", unk.to_str().unwrap(), out.to_str().unwrap()]);
    assert!(!ok && err.contains("RFC 7946") && err.contains("--crs"), "{err}");
    assert!(!out.exists());
    let (ok, _, err) = cli(&["dump", unk.to_str().unwrap(), "--format", "geojson"]);
    assert!(!ok && err.contains("RFC 7946"), "{err}");
}

#[test]
fn validator_warns_on_projected_coordinates_under_a_geographic_crs() {
    let _s = common::serial();
    let dir = common::TempDir::new("crs-validate");
    let wrong = import(&fixture("gdal_3857.geojson"), &dir, "w.h5", ConvertOptions { crs: Some("EPSG:4326".into()), ..Default::default() });
    let r = marquet::validate::validate_file(&wrong, &Default::default()).unwrap();
    let w: Vec<String> = r.findings().map(|f| f.message.clone()).collect();
    assert!(w.iter().any(|m| m.contains("outside the longitudes -180..180")), "{w:?}");
    assert_eq!(r.errors().count(), 0);
    let right = import(&fixture("gdal_3857.geojson"), &dir, "r.h5", Default::default());
    assert_eq!(marquet::validate::validate_file(&right, &Default::default()).unwrap().findings().count(), 0);
}

/// The CRS in the GEOMETRY logical type of a 2.0 export: OGC:CRS84 stated (DuckDB's
/// ST_CRS read NULL without it), EPSG:3857 as its PROJJSON; read back by the parquet crate
/// and, with the test venv, by DuckDB.
#[test]
fn geoparquet_2_export_states_the_crs_in_the_logical_type() {
    let _s = common::serial();
    use parquet::basic::LogicalType;
    use parquet::file::reader::FileReader;
    let dir = common::TempDir::new("crs-lt");
    let merc = import(&fixture("gdal_3857.geojson"), &dir, "m.h5", Default::default());
    let ll = import(&fixture("gdal_3857.geojson"), &dir, "l.h5", ConvertOptions { to_crs: Some("EPSG:4326".into()), ..Default::default() });
    let mut outs = Vec::new();
    for (h5, want) in [(merc, "\"code\":3857"), (ll, "\"code\":\"CRS84\"")] {
        let out = h5.with_extension("parquet");
        convert(&h5, &out, &Default::default()).unwrap();
        let r = parquet::file::reader::SerializedFileReader::new(std::fs::File::open(&out).unwrap()).unwrap();
        let schema = r.metadata().file_metadata().schema_descr_ptr();
        let geom = schema.root_schema().get_fields().iter().find(|f| f.name() == "geometry").unwrap().clone();
        match geom.get_basic_info().logical_type_ref() {
            Some(LogicalType::Geometry(g)) => assert!(g.crs.as_deref().unwrap_or("").contains(want), "{:?}", g.crs),
            other => panic!("{other:?}"),
        }
        outs.push(out);
    }
    let Some(py) = common::venv_python_with("duckdb", "the DuckDB ST_CRS check") else { return };
    let script = r#"
import sys, json, duckdb
con = duckdb.connect()
for path, want in zip(sys.argv[1::2], sys.argv[2::2]):
    crs = con.sql(f"SELECT ST_CRS(geometry) FROM '{path}'").fetchall()[0][0]
    assert crs is not None, path
    got = json.loads(crs)["id"] if crs.startswith("{") else crs
    got = got if isinstance(got, str) else f"{got['authority']}:{got['code']}"
    assert got == want, (path, got, want)
print("ok")
"#;
    let o = Command::new(&py)
        .args(["-c", script, outs[0].to_str().unwrap(), "EPSG:3857", outs[1].to_str().unwrap(), "OGC:CRS84"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
}

/// An append whose CRS differs from the table's is refused and leaves the table as it was
/// (issue #38: an EPSG:3857 GeoParquet appended to a CRS84 table was stored under the CRS84
/// label; found again by tests/model/model_test.py in both directions). The same CRS, or a
/// source CRS stated equal with `--crs`, appends.
#[test]
fn append_with_another_crs_is_refused() {
    let _s = common::serial();
    let dir = common::TempDir::new("crs-append");
    let h5 = dir.join("t.h5");
    let src = fixture("duckdb_3857.parquet");
    let (ok, _, err) = cli(&["convert", src.to_str().unwrap(), h5.to_str().unwrap(), "--table", "/t"]);
    assert!(ok, "{err}");
    let rows = |h5: &Path| MarquetTable::open(&File::open(h5).unwrap(), "/t").unwrap().nrows().unwrap();
    let n = rows(&h5);
    // The same rows reprojected to CRS84, and labelled EPSG:25832 (coordinates unchanged).
    for (other, flag) in [("OGC:CRS84", "--to-crs"), ("EPSG:25832", "--crs")] {
        let o = dir.join(&format!("other_{}.parquet", other.replace(':', "_")));
        let (ok, _, err) = cli(&["convert", src.to_str().unwrap(), o.to_str().unwrap(), flag, other]);
        assert!(ok, "{err}");
        let before = std::fs::read(&h5).unwrap();
        let (ok, _, err) = cli(&["append", h5.to_str().unwrap(), "--table", "/t", "--from", o.to_str().unwrap()]);
        assert!(!ok, "append of {other} rows into an EPSG:3857 table succeeded");
        assert!(err.contains("has crs") && err.contains("3857"), "{err}");
        assert_eq!(rows(&h5), n);
        assert_eq!(std::fs::read(&h5).unwrap(), before, "a refused append changed the file");
    }
    // The same file again appends.
    let (ok, _, err) = cli(&["append", h5.to_str().unwrap(), "--table", "/t", "--from", src.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert_eq!(rows(&h5), 2 * n);
}

/// An unknown CRS (HEP002 §8.1's null dataspace) equals only an unknown CRS (issue #38, local
/// ruling L20): a source that declares no CRS is not appended into a table that states one —
/// it would be stored under a CRS nobody stated — nor rows that state one into a table whose
/// CRS is unknown (the column would mix systems). Both refusals leave the file byte for byte;
/// unknown into unknown appends, and a lakehouse source whose CRS is stated with `--crs`
/// appends. Before this rule an unknown source took the table's CRS silently.
#[test]
fn append_with_an_unknown_crs_is_refused_both_ways() {
    let _s = common::serial();
    let dir = common::TempDir::new("crs-append-unknown");
    let s = |p: &Path| p.display().to_string();
    let src = fixture("duckdb_3857.parquet");
    let unk = dir.join("unknown.parquet");
    let (ok, _, err) = cli(&["convert", &s(&src), &s(&unk), "--crs", "unknown"]);
    assert!(ok, "{err}");
    let rows = |h5: &Path| MarquetTable::open(&File::open(h5).unwrap(), "/t").unwrap().nrows().unwrap();
    // Unknown into EPSG:3857: refused.
    let stated = dir.join("stated.h5");
    let (ok, _, err) = cli(&["convert", &s(&src), &s(&stated), "--table", "/t"]);
    assert!(ok, "{err}");
    let before = std::fs::read(&stated).unwrap();
    let (ok, _, err) = cli(&["append", &s(&stated), "--table", "/t", "--from", &s(&unk)]);
    assert!(!ok, "an unknown-CRS source was appended into an EPSG:3857 table");
    assert!(err.contains("declares no CRS") && err.contains("3857") && err.contains("L20"), "{err}");
    assert_eq!(std::fs::read(&stated).unwrap(), before, "a refused append changed the file");
    // EPSG:3857 into unknown: refused.
    let unknown = dir.join("unknown.h5");
    let (ok, _, err) = cli(&["convert", &s(&src), &s(&unknown), "--table", "/t", "--crs", "unknown"]);
    assert!(ok, "{err}");
    let before = std::fs::read(&unknown).unwrap();
    let (ok, _, err) = cli(&["append", &s(&unknown), "--table", "/t", "--from", &s(&src)]);
    assert!(!ok, "EPSG:3857 rows were appended into a table whose CRS is unknown");
    assert!(err.contains("has an unknown CRS") && err.contains("3857"), "{err}");
    assert_eq!(std::fs::read(&unknown).unwrap(), before, "a refused append changed the file");
    // The same table file as the source (h5 -> h5) is refused alike.
    let (ok, _, err) = cli(&["append", &s(&stated), "--table", "/t", "--from", &s(&unknown), "--from-table", "/t"]);
    assert!(!ok && err.contains("declares no CRS"), "{err}");
    // Unknown into unknown appends.
    let n = rows(&unknown);
    let (ok, _, err) = cli(&["append", &s(&unknown), "--table", "/t", "--from", &s(&unk)]);
    assert!(ok, "{err}");
    assert_eq!(rows(&unknown), 2 * n);

    // A CSV of WKT declares no CRS: refused into a stated table until `--crs` states it.
    let parcels = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/lake/parcels.csv");
    let p = dir.join("parcels.h5");
    let (ok, _, err) = cli(&["convert", &s(&parcels), &s(&p), "--table", "/t", "--geometry", "wkt", "--crs", "EPSG:3857"]);
    assert!(ok, "{err}");
    let n = rows(&p);
    let (ok, _, err) = cli(&["append", &s(&p), "--table", "/t", "--from", &s(&parcels), "--geometry", "wkt"]);
    assert!(!ok && err.contains("declares no CRS"), "{err}");
    assert_eq!(rows(&p), n);
    let (ok, _, err) = cli(&["append", &s(&p), "--table", "/t", "--from", &s(&parcels), "--geometry", "wkt", "--crs", "EPSG:3857"]);
    assert!(ok, "{err}");
    assert_eq!(rows(&p), 2 * n);
}

/// What Python's `marquet.append(h5, pyarrow.parquet.read_table(X), geometry="geometry")`
/// hands the library: a GeoParquet file as Arrow batches whose geometry is a plain binary
/// column and whose CRS is in the schema's `geo` key. That CRS is the source's (EPSG:4326
/// here), so the append into a table converted from the same file is not refused as an
/// unknown-CRS source (local ruling L20); with the `geo` key removed it is.
#[test]
fn an_arrow_stream_of_a_geoparquet_file_keeps_its_crs_for_an_append() {
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let _s = common::serial();
    let dir = common::TempDir::new("crs-append-arrow");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/peers/geoarrow-data/natural-earth/natural-earth_countries_geo.parquet");
    let h5 = dir.join("c.h5");
    let (ok, _, err) = cli(&["convert", src.to_str().unwrap(), h5.to_str().unwrap(), "--table", "/countries"]);
    assert!(ok, "{err}");
    // As pyarrow reads it: the file's key-value metadata (its `geo` key) on the schema.
    let read = || {
        let b = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&src).unwrap()).unwrap();
        let geo = b.metadata().file_metadata().key_value_metadata().unwrap().iter().find(|kv| kv.key == "geo").unwrap().value.clone().unwrap();
        // The fields without their GeoArrow extension metadata (this file has it; a plain
        // binary column has none): only the `geo` key tells the CRS.
        let fields: Vec<arrow_schema::Field> = b.schema().fields().iter().map(|f| f.as_ref().clone().with_metadata(std::collections::HashMap::new())).collect();
        let schema = Arc::new(arrow_schema::Schema::new(fields).with_metadata(std::collections::HashMap::from([("geo".to_string(), geo)])));
        let r = b.build().unwrap();
        let s2 = schema.clone();
        let batches: Vec<_> = r
            .map(move |b| b.map(|b| arrow_array::RecordBatch::try_new(s2.clone(), b.columns().to_vec()).unwrap()).map_err(|e| marquet::Error::InvalidArgument(e.to_string())))
            .collect();
        (schema, batches)
    };
    let (schema, batches) = read();
    let f = File::open_rw(&h5).unwrap();
    let geometry = ["geometry".to_string()];
    let r = marquet::convert::append_record_batches(&f, "/countries", schema.clone(), batches, &geometry, &Default::default()).unwrap();
    assert_eq!(r.nrows, 354);
    // Without the `geo` key the column's CRS is unknown: refused, nothing appended.
    let bare = Arc::new(schema.as_ref().clone().with_metadata(std::collections::HashMap::new()));
    let batches: Vec<_> = read()
        .1
        .into_iter()
        .map(|b| b.map(|b| arrow_array::RecordBatch::try_new(bare.clone(), b.columns().to_vec()).unwrap()))
        .collect();
    let e = marquet::convert::append_record_batches(&f, "/countries", bare, batches, &geometry, &Default::default()).unwrap_err();
    assert!(e.to_string().contains("declares no CRS"), "{e}");
    assert_eq!(MarquetTable::open(&f, "/countries").unwrap().nrows().unwrap(), 354);
}
