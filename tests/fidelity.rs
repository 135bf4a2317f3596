//! Users' real files come back right (issue #32), each on a file written by its own tool.
//!
//! * Coverings of other producers: a bbox struct named by the `geo` covering key (any name,
//!   float32 or float64, any field order) or an undeclared box struct that contains the
//!   geometries (Overture's 1.0.0 metadata) becomes the Marquet covering column; the export
//!   never has two fields of one name. Every export is read back by pyarrow, geopandas and
//!   DuckDB and compared with the source: rows, geometries (as canonical WKB), covering
//!   boxes containing the geometries.
//! * CRS: DuckDB's GeoParquet 2.0 output states the CRS only in the Parquet logical type
//!   (`geo` without `crs`): the explicit statement wins over the implied OGC:CRS84; two
//!   different explicit CRSs are refused with a message naming `--crs`, which resolves it.
//!
//! Fixtures: testdata/peers (SOURCES.md) and testdata/duckdb (make.py, DuckDB 2.0.1).
#![cfg(all(feature = "geoparquet", feature = "proj"))]
#![cfg(marquet_fixtures)] // testdata/peers is not in the crates.io package (build.rs)

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use marquet::convert::{convert, ConvertOptions, CoveringChoice};
use marquet::h5col::{Dtype, File};
use marquet::marquet::{Crs, MarquetTable};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata").join(rel)
}

/// The test venv's python (scripts/pyvenv.sh) when it has pyarrow, geopandas and duckdb;
/// `None` (a notice) outside CI, a failure in CI.
fn python() -> Option<PathBuf> {
    common::venv_python_with("pyarrow, geopandas, duckdb, shapely", "the pyarrow/geopandas/DuckDB read-back")
}

fn run_py(py: &Path, script: &str, args: &[&str]) -> String {
    let o = Command::new(py).arg("-c").arg(script).args(args).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "python {args:?}:\n{out}{}", String::from_utf8_lossy(&o.stderr));
    out
}

/// Reads `out` (a Marquet export of `src`) with pyarrow, geopandas and DuckDB: unique field
/// names; the rows and geometries of `src` (canonical little-endian ISO WKB, as multisets:
/// the import orders rows along a Hilbert curve); the covering named in `geo` (argv[3], or
/// "-" for none) of the float width argv[4] containing each row's geometry, null for null
/// or empty ones; geopandas' bbox filter through the covering; the CRS geopandas reports
/// (argv[5]: "src" = the same as geopandas reports for `src`, else an authority code).
const ORACLE: &str = r#"
import sys, json
import pyarrow as pa, pyarrow.parquet as pq, geopandas as gpd, duckdb, shapely
src, out, cov_want, width, crs_want = sys.argv[1:6]

def canon(b):
    if b is None:
        return b""
    g = shapely.from_wkb(bytes(b))
    return shapely.to_wkb(g, byte_order=1, flavor="iso", output_dimension=4)

s = pq.read_table(src)
o = pq.read_table(out)
names = o.schema.names
assert len(names) == len(set(names)), f"two fields of one name: {names}"
assert o.num_rows == s.num_rows, (o.num_rows, s.num_rows)
sgeo = json.loads(s.schema.metadata[b"geo"]) if s.schema.metadata and b"geo" in s.schema.metadata else None
geo = json.loads(o.schema.metadata[b"geo"])
gcol = geo["primary_column"]
scol = sgeo["primary_column"] if sgeo else gcol
want = sorted(canon(b) for b in s.column(scol).to_pylist())
ogeom = o.column(gcol).to_pylist()
assert sorted(canon(b) for b in ogeom) == want, "pyarrow: geometries differ"

cov = geo["columns"][gcol].get("covering")
if cov_want == "-":
    assert cov is None, cov
else:
    c = cov["bbox"]["xmin"][0]
    assert c == cov_want, (c, cov_want)
    assert all(cov["bbox"][k] == [c, k] for k in ("xmin", "ymin", "xmax", "ymax")), cov
    t = o.schema.field(c).type
    ft = pa.float32() if width == "f32" else pa.float64()
    assert [f.name for f in t][:4] == ["xmin", "ymin", "xmax", "ymax"] and all(f.type == ft for f in t), t
    n_boxes = 0
    for w, b in zip(ogeom, o.column(c).to_pylist()):
        g = None if w is None else shapely.from_wkb(w)
        if g is None or g.is_empty:
            assert b is None, (w, b)
            continue
        x0, y0, x1, y1 = shapely.bounds(g)
        assert b["xmin"] <= x0 and b["ymin"] <= y0 and b["xmax"] >= x1 and b["ymax"] >= y1, (b, (x0, y0, x1, y1))
        n_boxes += 1

gs = gpd.read_parquet(src)
go = gpd.read_parquet(out)
assert len(go) == len(gs)
assert sorted(canon(None if g is None else shapely.to_wkb(g)) for g in go.geometry) == want, "geopandas: geometries differ"
if crs_want == "src":
    assert go.crs == gs.crs, (go.crs, gs.crs)
else:
    assert go.crs is not None and go.crs.to_string() == crs_want, (go.crs, crs_want)
if cov_want != "-":
    xmin, ymin, xmax, ymax = go.total_bounds
    hit = gpd.read_parquet(out, bbox=(xmin, ymin, xmax, ymax))
    assert len(hit) == n_boxes, (len(hit), n_boxes)

con = duckdb.connect()
n = con.execute(f"SELECT count(*) FROM '{out}'").fetchone()[0]
assert n == s.num_rows
rows = con.execute(f'SELECT ST_AsWKB("{gcol}") FROM \'{out}\'').fetchall()
assert sorted(canon(r[0]) for r in rows) == want, "duckdb: geometries differ"
if cov_want != "-":
    bad = con.execute(f'SELECT count(*) FROM \'{out}\' WHERE "{gcol}" IS NOT NULL AND "{cov_want}" IS NOT NULL AND ("{cov_want}".xmin > "{cov_want}".xmax OR "{cov_want}".ymin > "{cov_want}".ymax)').fetchone()[0]
    assert bad == 0
crs = con.execute(f'SELECT ST_CRS("{gcol}") FROM \'{out}\' LIMIT 1').fetchone()[0]
if crs is not None and crs.startswith("{"):
    i = json.loads(crs).get("id")
    crs = f"{i['authority']}:{i['code']}" if i else "PROJJSON without id"
print("ok", o.num_rows, cov_want, f"duckdb_crs={crs}")
"#;

/// Imports `src` with the default options into `dir/<tag>.h5`: returns the file and the
/// primary geometry column's covering (name, float32?) as stored.
fn import(src: &Path, dir: &common::TempDir, tag: &str, opts: &ConvertOptions) -> (PathBuf, Option<(String, bool)>) {
    let h5 = dir.join(&format!("{tag}.h5"));
    convert(src, &h5, opts).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
    let f = File::open(&h5).unwrap();
    let t = MarquetTable::open(&f, &f.tables().unwrap()[0]).unwrap();
    let g = t.primary_geometry_column().unwrap();
    let cov = t.geometry_column(&g).unwrap().covering.map(|c| {
        let col = t.table().column(&c).unwrap();
        let f32 = match col.dtype() {
            Dtype::Compound { fields, .. } => {
                assert_eq!(fields.iter().map(|f| f.name.as_str()).collect::<Vec<_>>()[..4], ["xmin", "ymin", "xmax", "ymax"]);
                fields.iter().all(|f| matches!(f.dtype, Dtype::F32))
            }
            d => panic!("covering {c} is {d:?}"),
        };
        (c, f32)
    });
    let r = marquet::validate::validate_file(&h5, &Default::default()).unwrap();
    let errors: Vec<String> = r.findings().filter(|x| x.severity == marquet::validate::Severity::Error).map(|x| x.message.clone()).collect();
    assert!(errors.is_empty(), "{tag}: {errors:?}");
    (h5, cov)
}

fn export(h5: &Path, out: &Path, covering: CoveringChoice) {
    convert(h5, out, &ConvertOptions { covering, ..Default::default() }).unwrap();
}

/// One table column of `h5` starting with `prefix`?
fn has_column_starting(h5: &Path, prefix: &str) -> bool {
    let f = File::open(h5).unwrap();
    let t = MarquetTable::open(&f, &f.tables().unwrap()[0]).unwrap();
    t.table().column_names().unwrap().iter().any(|c| c.starts_with(prefix))
}

/// geoparquet-spec's 1.1 example with its float64 `bbox` covering (fields xmax, xmin, ymax,
/// ymin) renamed to `extent` and narrowed to float32 in the order ymax, xmin, xmax, ymin:
/// a declared covering of any name, width and field order.
fn renamed_f32_covering(out: &Path) {
    use arrow_array::{Array, ArrayRef, RecordBatch, StructArray};
    use arrow_schema::{DataType, Field, Fields, Schema};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let src = std::fs::File::open(data("peers/geoparquet-spec/example_v1.1.0.parquet")).unwrap();
    let b = ParquetRecordBatchReaderBuilder::try_new(src).unwrap();
    let schema = b.schema().clone();
    let mut md = schema.metadata().clone();
    let mut geo: serde_json::Value = serde_json::from_str(&md["geo"]).unwrap();
    geo["columns"]["geometry"]["covering"] =
        serde_json::json!({"bbox": {"xmin": ["extent", "xmin"], "ymin": ["extent", "ymin"], "xmax": ["extent", "xmax"], "ymax": ["extent", "ymax"]}});
    md.insert("geo", geo.to_string());
    let order = ["ymax", "xmin", "xmax", "ymin"];
    let sf: Fields = order.iter().map(|n| Field::new(*n, DataType::Float32, true)).collect();
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| if f.name() == "bbox" { Field::new("extent", DataType::Struct(sf.clone()), true) } else { f.as_ref().clone() })
        .collect();
    let new_schema = Arc::new(Schema::new_with_metadata(fields, md));
    let mut w = parquet::arrow::ArrowWriter::try_new(std::fs::File::create(out).unwrap(), new_schema.clone(), None).unwrap();
    w.append_key_value_metadata(parquet::file::metadata::KeyValue::new("geo".into(), geo.to_string()));
    for batch in b.build().unwrap() {
        let batch = batch.unwrap();
        let cols: Vec<ArrayRef> = schema
            .fields()
            .iter()
            .enumerate()
            .map(|(i, f)| {
                if f.name() != "bbox" {
                    return batch.column(i).clone();
                }
                let s = batch.column(i).as_any().downcast_ref::<StructArray>().unwrap();
                let kids: Vec<ArrayRef> =
                    order.iter().map(|n| arrow_cast::cast(s.column_by_name(n).unwrap(), &DataType::Float32).unwrap()).collect();
                Arc::new(StructArray::new(sf.clone(), kids, s.nulls().cloned())) as ArrayRef
            })
            .collect();
        w.write(&RecordBatch::try_new(new_schema.clone(), cols).unwrap()).unwrap();
    }
    w.close().unwrap();
}

#[test]
fn coverings_of_other_producers_become_the_covering_column() {
    let _s = common::serial();
    let dir = common::TempDir::new("fidelity-cov");
    let py = python();
    let renamed = dir.join("extent_f32.parquet");
    renamed_f32_covering(&renamed);
    // (source, tag, covering stored in the table (name, f32), covering of the default
    // export (name, width)). Point columns keep none (HEP002 §10.5 SHOULD NOT).
    type Case<'a> = (PathBuf, &'a str, Option<(&'a str, bool)>, (&'a str, &'a str));
    let cases: Vec<Case<'_>> = vec![
        // Overture (geoarrow-rs fixture): float32 xmin, xmax, ymin, ymax; `geo` 1.0.0
        // without a covering key; big-endian WKB.
        (data("peers/geoarrow-rs/overture_infrastructure.parquet"), "overture", Some(("bbox", true)), ("bbox", "f32")),
        // geoparquet-spec 1.1 example: declared float64 covering, fields xmax, xmin, ymax, ymin.
        (data("peers/geoparquet-spec/example_v1.1.0.parquet"), "spec11", Some(("bbox", false)), ("bbox", "f64")),
        // The same renamed `extent`, float32, fields ymax, xmin, xmax, ymin.
        (renamed.clone(), "extent", Some(("extent", true)), ("extent", "f32")),
        // gpq: a 1.1.0 `geo` key without covering, an undeclared float64 `bbox`.
        (data("peers/gpq/example-v1.1.0-partitioned.parquet"), "gpq", Some(("bbox", false)), ("bbox", "f64")),
        // geoparquet-io, points: declared float32 covering (Guatemala, Overture places via
        // gpio) and an undeclared float64 one (places_test, DuckDB 1.4.1): not kept.
        (data("peers/geoparquet-io/Guatemala.parquet"), "guatemala", None, ("-", "-")),
        (data("peers/geoparquet-io/places_test.parquet"), "places", None, ("-", "-")),
        // geoparquet-io, polygons without a bbox struct: the export computes one.
        (data("peers/geoparquet-io/buildings_test.parquet"), "buildings", Some(("bbox", false)), ("bbox", "f64")),
    ];
    for (src, tag, stored, (out_cov, width)) in cases {
        let (h5, cov) = import(&src, &dir, tag, &ConvertOptions::default());
        assert_eq!(cov.as_ref().map(|(n, f)| (n.as_str(), *f)), stored, "{tag}: covering in the table");
        // The source struct is not kept a second time as data.
        assert!(!has_column_starting(&h5, &format!("{}.", stored.map_or("bbox", |s| s.0))), "{tag}: box struct flattened");
        let out = dir.join(&format!("{tag}.out.parquet"));
        export(&h5, &out, CoveringChoice::default());
        if let Some(py) = &py {
            let o = run_py(py, ORACLE, &[src.to_str().unwrap(), out.to_str().unwrap(), out_cov, width, "src"]);
            println!("{tag}: {o}");
            assert!(o.starts_with("ok"), "{tag}: {o}");
        }
    }
    // Point columns with `--covering`: a float64 box per point, read back alike.
    let (h5, _) = import(&data("peers/geoparquet-io/Guatemala.parquet"), &dir, "guatemala2", &ConvertOptions::default());
    let out = dir.join("guatemala_cov.parquet");
    export(&h5, &out, CoveringChoice::All);
    if let Some(py) = &py {
        let src = data("peers/geoparquet-io/Guatemala.parquet");
        run_py(py, ORACLE, &[src.to_str().unwrap(), out.to_str().unwrap(), "bbox", "f64", "src"]);
    }
}

/// A box struct named `bbox` whose boxes do not contain the geometries is not a covering:
/// it stays data (`bbox.xmin` …) and the export, which adds its own covering `bbox`, never
/// writes two fields named `bbox` (the flattened columns stay flat).
#[test]
fn a_bbox_struct_that_is_not_a_covering_stays_data_and_names_stay_unique() {
    use arrow_array::{ArrayRef, BinaryArray, Float64Array, RecordBatch, StructArray};
    use arrow_schema::{DataType, Field, Fields, Schema};
    let _s = common::serial();
    let dir = common::TempDir::new("fidelity-notcov");
    let lines: Vec<Vec<u8>> = (0..20)
        .map(|i| {
            let c = |x: f64, y: f64| marquet::wkb::Coord::xy(x, y);
            let l = marquet::wkb::LineString { dims: marquet::Dimensions::Xy, coords: vec![c(i as f64, 0.0), c(i as f64 + 1.0, 2.0)] };
            marquet::wkb::encode(&marquet::wkb::Geometry::LineString(l), marquet::wkb::ByteOrder::LittleEndian)
        })
        .collect();
    let sf: Fields = ["xmin", "ymin", "xmax", "ymax"].iter().map(|n| Field::new(*n, DataType::Float64, true)).collect();
    // Row 7's box misses its geometry.
    let col = |k: usize| -> ArrayRef {
        Arc::new(Float64Array::from((0..20).map(|i| [i as f64, 0.0, i as f64 + 1.0, if i == 7 { 1.0 } else { 2.0 }][k]).collect::<Vec<_>>()))
    };
    let bbox = StructArray::new(sf.clone(), (0..4).map(col).collect(), None);
    let geo = r#"{"version":"1.0.0","primary_column":"geometry","columns":{"geometry":{"encoding":"WKB","geometry_types":["LineString"]}}}"#;
    let schema = Arc::new(Schema::new_with_metadata(
        vec![Field::new("geometry", DataType::Binary, true), Field::new("bbox", DataType::Struct(sf), true)],
        std::collections::HashMap::from([("geo".to_string(), geo.to_string())]),
    ));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![Arc::new(BinaryArray::from_iter_values(lines.iter())) as ArrayRef, Arc::new(bbox) as ArrayRef],
    )
    .unwrap();
    let src = dir.join("notcov.parquet");
    let mut w = parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&src).unwrap(), schema, None).unwrap();
    w.append_key_value_metadata(parquet::file::metadata::KeyValue::new("geo".into(), geo.to_string()));
    w.write(&batch).unwrap();
    w.close().unwrap();
    let h5 = dir.join("notcov.h5");
    let r = convert(&src, &h5, &ConvertOptions::default()).unwrap();
    let imp = r.import.unwrap();
    assert!(imp.warnings.iter().any(|w| w.contains("row 7") && w.contains("kept as data")), "{:?}", imp.warnings);
    assert!(has_column_starting(&h5, "bbox.xmin"));
    let cov = imp.geometry_columns[0].covering.clone().unwrap();
    assert_eq!(cov, "bbox", "the table's own covering takes the free name");
    let out = dir.join("notcov.out.parquet");
    export(&h5, &out, CoveringChoice::default());
    let rd = parquet::file::reader::SerializedFileReader::new(std::fs::File::open(&out).unwrap()).unwrap();
    use parquet::file::reader::FileReader;
    let names: Vec<String> = rd.metadata().file_metadata().schema_descr().root_schema().get_fields().iter().map(|f| f.name().to_string()).collect();
    assert_eq!(names, ["geometry", "bbox", "bbox.xmin", "bbox.ymin", "bbox.xmax", "bbox.ymax"]);
    if let Some(py) = python() {
        let o = run_py(py.as_path(), ORACLE, &[src.to_str().unwrap(), out.to_str().unwrap(), "bbox", "f64", "src"]);
        assert!(o.starts_with("ok"), "{o}");
    }
}

/// The primary geometry column's CRS and WKB, in `id` order.
fn primary(h5: &Path) -> (Crs, Vec<Option<Vec<u8>>>) {
    let f = File::open(h5).unwrap();
    let t = MarquetTable::open(&f, &f.tables().unwrap()[0]).unwrap();
    let g = t.primary_geometry_column().unwrap();
    let n = t.nrows().unwrap();
    let w = t.read_wkb(&g, 0, n).unwrap();
    let ids = t.table().column("id").unwrap().read(0, n).unwrap();
    let mut rows: Vec<(i64, Option<Vec<u8>>)> =
        (0..n as usize).map(|i| (ids.display(i).parse().unwrap(), w.get(i).map(|v| v.to_vec()))).collect();
    rows.sort_by_key(|r| r.0);
    (t.geometry_column(&g).unwrap().crs, rows.into_iter().map(|r| r.1).collect())
}

/// The source's WKB by `id`, read with the parquet crate.
fn source_wkb(src: &Path) -> Vec<Option<Vec<u8>>> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int32Type;
    use arrow_array::Array;
    let b = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(src).unwrap()).unwrap();
    let mut rows = Vec::new();
    for batch in b.build().unwrap() {
        let batch = batch.unwrap();
        let id = batch.column_by_name("id").unwrap().as_primitive::<Int32Type>().clone();
        let g = batch.column_by_name("geometry").unwrap().as_binary::<i32>().clone();
        for i in 0..batch.num_rows() {
            rows.push((id.value(i), g.is_valid(i).then(|| g.value(i).to_vec())));
        }
    }
    rows.sort_by_key(|r| r.0);
    rows.into_iter().map(|r| r.1).collect()
}

/// The same geometry: equal WKB, or equal once decoded (a point column re-encodes).
fn same_geometries(a: &[Option<Vec<u8>>], b: &[Option<Vec<u8>>]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        match (x, y) {
            (Some(x), Some(y)) => {
                let canon = |w: &[u8]| marquet::wkb::encode(&marquet::wkb::decode(w).unwrap(), marquet::wkb::ByteOrder::LittleEndian);
                assert_eq!(canon(x), canon(y));
            }
            (x, y) => assert_eq!(x, y),
        }
    }
}

#[test]
fn duckdb_v2_crs_in_the_logical_type_wins_over_the_implied_default() {
    let _s = common::serial();
    let dir = common::TempDir::new("fidelity-crs");
    let py = python();
    for (file, want_id, geopandas) in
        [("duckdb/v2_epsg3857.parquet", Some(("EPSG", "3857")), "EPSG:3857"), ("duckdb/v2_crs84.parquet", None, "OGC:CRS84")]
    {
        let src = data(file);
        let h5 = dir.join(&format!("{}.h5", want_id.map_or("crs84", |w| w.1)));
        let r = convert(&src, &h5, &ConvertOptions::default()).unwrap();
        let imp = r.import.unwrap();
        assert!(!imp.has_finding(marquet::convert::code::CRS_MISMATCH), "{file}: {imp}");
        let (crs, wkb) = primary(&h5);
        match want_id {
            Some((a, c)) => {
                assert!(matches!(crs, Crs::ProjJson(_)), "{file}: {crs:?}");
                assert_eq!(crs.id(), Some((a.to_string(), c.to_string())), "{file}");
                assert!(!crs.is_geographic());
            }
            None => assert_eq!(crs, Crs::Default, "{file}"),
        }
        // Coordinates unchanged.
        same_geometries(&wkb, &source_wkb(&src));
        let out = h5.with_extension("parquet");
        export(&h5, &out, CoveringChoice::default());
        if let Some(py) = &py {
            let o = run_py(py, ORACLE, &[src.to_str().unwrap(), out.to_str().unwrap(), "bbox", "f64", geopandas]);
            assert!(o.starts_with("ok"), "{file}: {o}");
            println!("{file}: {o}");
            let want = want_id.map_or("OGC:CRS84".to_string(), |(a, c)| format!("{a}:{c}"));
            assert!(o.contains(&format!("duckdb_crs={want}")), "{file}: DuckDB ST_CRS: {o}");
        }
    }
}

#[test]
fn two_explicit_crss_are_refused_and_crs_resolves_them() {
    let _s = common::serial();
    let dir = common::TempDir::new("fidelity-crs2");
    let src = data("duckdb/crs_conflict.parquet");
    let h5 = dir.join("c.h5");
    let e = convert(&src, &h5, &ConvertOptions::default()).unwrap_err().to_string();
    assert!(e.contains("crs_mismatch") && e.contains("--crs") && e.contains("EPSG:4326") && e.contains("EPSG:3857"), "{e}");
    assert!(!h5.exists(), "a refused import left a file");
    // The CLI says the same, and --crs resolves it.
    let bin = env!("CARGO_BIN_EXE_marquet");
    let o = Command::new(bin).args(["convert", src.to_str().unwrap(), h5.to_str().unwrap()]).output().unwrap();
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("--crs"));
    let o = Command::new(bin).args(["convert", src.to_str().unwrap(), h5.to_str().unwrap(), "--crs", "EPSG:3857"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (crs, wkb) = primary(&h5);
    assert_eq!(crs.id(), Some(("EPSG".into(), "3857".into())));
    same_geometries(&wkb, &source_wkb(&src));
}
