//! Schemas kept (issue #22, part 4): dictionary columns become HEP001 categoricals and come
//! back as dictionaries; GeoParquet export writes the `pandas` metadata (geopandas gets its
//! dtypes back); nested Arrow columns are kept (structs flattened with their path recorded
//! and nested again on export, lists of structs / maps / nested lists as JSON text, or
//! refused); 1.1 / 1.0 exports carry a bbox covering column for non-point geometry columns.
//!
//! Fixtures: testdata/schemas/ (make_fixtures.py: geopandas, pyarrow and DuckDB wrote them).
#![cfg(feature = "geoparquet")]

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::DataType;
use marquet::convert::{export_geoparquet, import_geoparquet, CoveringChoice, ExportOptions, GeoParquetVersion, ImportOptions, NestedPolicy};
use marquet::h5col::categorical::{categories_of, read_labels};
use marquet::h5col::File;
use marquet::marquet::{MarquetTable, WriteLayout};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/schemas").join(name)
}

/// Import `name` in source row order (no Hilbert sort, no index, no covering column).
fn import_plain(name: &str, dir: &common::TempDir, nested: NestedPolicy) -> (PathBuf, marquet::Result<marquet::convert::ImportReport>) {
    let h5 = dir.join(&format!("{name}.h5"));
    let f = File::create(&h5).unwrap();
    let opts = ImportOptions { layout: WriteLayout::plain(), nested, ..ImportOptions::new("/t") };
    let r = import_geoparquet(&fixture(name), &f, &opts);
    (h5, r)
}

fn export(h5: &Path, out: &Path, version: GeoParquetVersion, covering: CoveringChoice) -> marquet::convert::ExportReport {
    let f = File::open(h5).unwrap();
    export_geoparquet(&f, "/t", out, &ExportOptions { version, covering, ..ExportOptions::default() }).unwrap()
}

/// Every row of a Parquet file as one batch, with its footer metadata.
fn read_parquet(p: &Path) -> (RecordBatch, HashMap<String, String>) {
    let b = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(p).unwrap()).unwrap();
    let kv: HashMap<String, String> = b
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .map(|v| v.iter().filter_map(|k| k.value.clone().map(|x| (k.key.clone(), x))).collect())
        .unwrap_or_default();
    let schema = b.schema().clone();
    let batches: Vec<RecordBatch> = b.build().unwrap().map(|r| r.unwrap()).collect();
    (arrow_select::concat::concat_batches(&schema, &batches).unwrap(), kv)
}

fn strings(a: &ArrayRef) -> Vec<Option<String>> {
    let s = arrow_cast::cast(a, &DataType::Utf8).unwrap();
    s.as_string::<i32>().iter().map(|x| x.map(str::to_string)).collect()
}

fn text_column(t: &MarquetTable, name: &str) -> Vec<Option<String>> {
    let n = t.nrows().unwrap();
    match t.table().kind_of(name).unwrap() {
        Some(marquet::h5col::ColumnKind::List) => {
            let l = t.table().read_list(name, 0, n).unwrap();
            (0..n as usize).map(|i| l.bytes_of(i).map(|b| String::from_utf8(b.to_vec()).unwrap())).collect()
        }
        _ => {
            let c = t.table().column(name).unwrap();
            let a = c.read(0, n).unwrap();
            let miss = a.missing(c.fill());
            (0..n as usize).map(|i| if miss[i] { None } else { a.get_str(i) }).collect()
        }
    }
}

const KINDS: [&str; 3] = ["forest", "lake", "road"];
const SIZES: [&str; 3] = ["small", "medium", "large"];
const GRADES: [&str; 3] = ["low", "mid", "high"];

#[test]
fn dictionary_columns_become_categoricals_and_come_back() {
    let _s = common::serial();
    let dir = common::TempDir::new("schemas-cat");
    let (h5, r) = import_plain("geopandas_dtypes.parquet", &dir, NestedPolicy::Json);
    let r = r.unwrap();
    assert_eq!(r.rows, 200);
    let f = File::open(&h5).unwrap();
    let t = MarquetTable::open(&f, "/t").unwrap();
    let kind = categories_of(t.table(), "kind").unwrap().expect("kind is categorical");
    assert_eq!(kind.labels, KINDS);
    assert!(!kind.ordered);
    let size = categories_of(t.table(), "size").unwrap().expect("size is categorical");
    assert_eq!(size.labels, SIZES);
    assert!(size.ordered);
    let want_kind: Vec<Option<String>> = (0..200).map(|i| (i % 13 != 5).then(|| KINDS[i % 3].to_string())).collect();
    let want_size: Vec<Option<String>> = (0..200).map(|i| Some(SIZES[(i / 70).min(2)].to_string())).collect();
    let want_grade: Vec<Option<String>> = (0..200).map(|i| Some(GRADES[(i * 5) % 3].to_string())).collect();
    assert_eq!(read_labels(t.table(), "kind", 0, 200).unwrap(), want_kind);
    assert_eq!(read_labels(t.table(), "size", 0, 200).unwrap(), want_size);
    let grade = categories_of(t.table(), "grade").unwrap().expect("grade is categorical");
    assert_eq!(grade.labels, GRADES);
    assert!(grade.ordered);
    assert_eq!(read_labels(t.table(), "grade", 0, 200).unwrap(), want_grade);
    assert!(categories_of(t.table(), "name").unwrap().is_none());
    drop((t, f));
    let v = marquet::validate::validate_file(&h5, &Default::default()).unwrap();
    assert_eq!(v.errors().count(), 0, "{:?}", v.error_rules());

    // Out as dictionaries (ordered kept), in again as the same categoricals.
    for version in [GeoParquetVersion::V1_1, GeoParquetVersion::V2_0] {
        let out = dir.join(&format!("cat_{version:?}.parquet"));
        let er = export(&h5, &out, version, CoveringChoice::default());
        // Rows meet the grades out of order, so the dictionary page lists them out of order:
        // declared unordered rather than ordered wrongly.
        assert!(er.notes.iter().any(|n| n.starts_with("column grade: an ordered categorical")), "{er}");
        let (b, _) = read_parquet(&out);
        let k = b.column_by_name("kind").unwrap();
        assert!(matches!(k.data_type(), DataType::Dictionary(key, v) if **key == DataType::Int8 && **v == DataType::Utf8), "{}", k.data_type());
        assert_eq!(strings(k), want_kind);
        assert_eq!(strings(b.column_by_name("size").unwrap()), want_size);
        assert_eq!(b.schema().field_with_name("size").unwrap().dict_is_ordered(), Some(true));
        assert_eq!(b.schema().field_with_name("grade").unwrap().dict_is_ordered(), Some(false));
        assert_eq!(strings(b.column_by_name("grade").unwrap()), want_grade);
        let f2 = File::create(dir.join(&format!("cat_{version:?}.h5"))).unwrap();
        import_geoparquet(&out, &f2, &ImportOptions { layout: WriteLayout::plain(), ..ImportOptions::new("/t") }).unwrap();
        let t2 = MarquetTable::open(&f2, "/t").unwrap();
        assert_eq!(categories_of(t2.table(), "size").unwrap().unwrap().labels, SIZES);
        assert!(categories_of(t2.table(), "size").unwrap().unwrap().ordered);
        assert_eq!(read_labels(t2.table(), "kind", 0, 200).unwrap(), want_kind);
        let g2 = categories_of(t2.table(), "grade").unwrap().unwrap();
        assert_eq!(g2.labels, ["low", "high", "mid"]);
        assert!(!g2.ordered);
        assert_eq!(read_labels(t2.table(), "grade", 0, 200).unwrap(), want_grade);
    }
}

#[test]
fn pandas_metadata_names_the_dtypes() {
    let _s = common::serial();
    let dir = common::TempDir::new("schemas-pandas");
    let (h5, r) = import_plain("geopandas_dtypes.parquet", &dir, NestedPolicy::Json);
    r.unwrap();
    let out = dir.join("pandas.parquet");
    export(&h5, &out, GeoParquetVersion::V1_1, CoveringChoice::default());
    let (_, kv) = read_parquet(&out);
    let p: serde_json::Value = serde_json::from_str(&kv["pandas"]).unwrap();
    assert_eq!(p["index_columns"], serde_json::json!([]));
    let cols: HashMap<String, serde_json::Value> =
        p["columns"].as_array().unwrap().iter().map(|c| (c["name"].as_str().unwrap().to_string(), c.clone())).collect();
    let ty = |c: &str| (cols[c]["pandas_type"].as_str().unwrap().to_string(), cols[c]["numpy_type"].as_str().unwrap().to_string());
    assert_eq!(ty("count"), ("int32".into(), "Int32".into()));
    assert_eq!(ty("flag"), ("bool".into(), "boolean".into()));
    assert_eq!(ty("kind"), ("categorical".into(), "int8".into()));
    assert_eq!(cols["kind"]["metadata"], serde_json::json!({"num_categories": 3, "ordered": false}));
    assert_eq!(cols["size"]["metadata"], serde_json::json!({"num_categories": 3, "ordered": true}));
    assert_eq!(cols["grade"]["metadata"], serde_json::json!({"num_categories": 3, "ordered": false}));
    assert_eq!(ty("seen"), ("datetimetz".into(), "datetime64[us]".into()));
    assert_eq!(cols["seen"]["metadata"], serde_json::json!({"timezone": "UTC"}));
    assert_eq!(ty("name"), ("unicode".into(), "object".into()));
    assert!(kv.contains_key("ARROW:schema") && kv.contains_key("geo"));
}

#[test]
fn nested_pyarrow_columns_are_kept_and_nested_again() {
    let _s = common::serial();
    let dir = common::TempDir::new("schemas-nested");
    // Refused on request, naming the column.
    let (_, r) = import_plain("pyarrow_nested.parquet", &dir, NestedPolicy::Refuse);
    let e = r.unwrap_err().to_string();
    assert!(e.contains("column \"names.common\"") && e.contains("map<string, string>") && e.contains("--nested json"), "{e}");

    let dir = common::TempDir::new("schemas-nested2");
    let (h5, r) = import_plain("pyarrow_nested.parquet", &dir, NestedPolicy::Json);
    let r = r.unwrap();
    let warned: Vec<&str> = r.warnings.iter().map(|w| w.split('"').nth(1).unwrap()).collect();
    assert_eq!(warned, ["names.common", "names.rules", "sources", "tags", "grid"]);
    assert!(r.skipped.is_empty(), "{r}");
    let f = File::open(&h5).unwrap();
    let t = MarquetTable::open(&f, "/t").unwrap();
    let attr = |c: &str| t.table().column_text_attr(c, marquet::spec::names::ARROW_FIELD).unwrap();
    assert_eq!(attr("names.primary").as_deref(), Some(r#"{"path":["names","primary"]}"#));
    assert_eq!(attr("sources").as_deref(), Some(r#"{"json":"list<struct<property: string, dataset: string, confidence: float64>>"}"#));
    assert_eq!(attr("id"), None);
    assert_eq!(
        text_column(&t, "sources")[0].as_deref(),
        Some(r#"[{"confidence":0.5,"dataset":"OpenStreetMap","property":""},{"confidence":null,"dataset":"meta","property":"/name"}]"#)
    );
    assert_eq!(text_column(&t, "names.common")[0].as_deref(), Some(r#"{"de":"Ort 0","en":"Place 0"}"#));
    assert_eq!(text_column(&t, "names.common")[2], None);
    assert_eq!(text_column(&t, "names.rules")[1].as_deref(), Some("[]"));
    assert_eq!(text_column(&t, "tags")[3].as_deref(), Some(r#"{"height":9,"levels":3}"#));
    assert_eq!(text_column(&t, "tags")[1], None);
    assert_eq!(text_column(&t, "grid")[2].as_deref(), Some("[[2,3],[4]]"));
    assert_eq!(text_column(&t, "grid")[3], None);
    assert_eq!(categories_of(t.table(), "class").unwrap().unwrap().labels, ["a", "b", "c"]);
    assert_eq!(t.table().read_list("categories.alternate", 0, 6).unwrap().len(), 6);
    drop((t, f));
    let v = marquet::validate::validate_file(&h5, &Default::default()).unwrap();
    assert_eq!(v.errors().count(), 0, "{:?}", v.error_rules());

    let out = dir.join("nested.parquet");
    let er = export(&h5, &out, GeoParquetVersion::V1_1, CoveringChoice::default());
    assert_eq!(er.notes.iter().filter(|n| n.contains("written as arrow.json text")).count(), 5, "{er}");
    let (b, _) = read_parquet(&out);
    let names: Vec<String> = b.schema().fields().iter().map(|f| f.name().clone()).collect();
    assert_eq!(names, ["id", "names", "sources", "categories", "tags", "grid", "class", "geometry"]);
    let n = b.column_by_name("names").unwrap().as_struct();
    assert_eq!(n.fields().iter().map(|f| f.name().as_str()).collect::<Vec<_>>(), ["primary", "common", "rules"]);
    assert_eq!(strings(n.column(0))[0].as_deref(), Some("place 0"));
    assert!(n.is_null(4) && n.is_valid(2), "a null struct comes back null, a struct with a null child does not");
    assert_eq!(strings(n.column(1))[0].as_deref(), Some(r#"{"de":"Ort 0","en":"Place 0"}"#));
    let s = b.schema();
    let src = s.field_with_name("sources").unwrap();
    assert_eq!(src.metadata().get("ARROW:extension:name").map(String::as_str), Some("arrow.json"));
    let c = b.column_by_name("categories").unwrap().as_struct();
    assert!(matches!(c.column(1).data_type(), DataType::List(_)));
    assert_eq!(c.column(1).as_list::<i32>().value(1).as_string::<i32>().iter().flatten().collect::<Vec<_>>(), ["food", "x"]);
}

#[test]
fn nested_duckdb_columns_are_kept() {
    let _s = common::serial();
    let dir = common::TempDir::new("schemas-duck");
    let (h5, r) = import_plain("duckdb_nested.parquet", &dir, NestedPolicy::Json);
    let r = r.unwrap();
    assert_eq!(r.warnings.len(), 2, "{:?}", r.warnings);
    let f = File::open(&h5).unwrap();
    let t = MarquetTable::open(&f, "/t").unwrap();
    assert_eq!(text_column(&t, "counts"), [Some(r#"{"k1":10,"k2":20}"#.into()), Some(r#"{"k3":30}"#.into()), None]);
    assert_eq!(text_column(&t, "items"), [Some(r#"[{"s":"p","v":"1.5"}]"#.into()), Some("[]".into()), None]);
    // A DuckDB ENUM is a plain string in Parquet: it stays one.
    assert_eq!(text_column(&t, "mood"), [Some("ok".into()), Some("happy".into()), None]);
    assert_eq!(text_column(&t, "rec.b"), [Some("x".into()), None, None]);
    drop((t, f));
    let out = dir.join("duck.parquet");
    export(&h5, &out, GeoParquetVersion::V2_0, CoveringChoice::default());
    let (b, _) = read_parquet(&out);
    let rec = b.column_by_name("rec").unwrap().as_struct();
    assert!(rec.is_valid(0) && rec.is_valid(1) && rec.is_null(2));
    assert_eq!(rec.column(0).as_primitive::<arrow_array::types::Int32Type>().values()[..2], [1, 2]);
    assert_eq!(strings(rec.column(1))[..2], [Some("x".into()), None]);
}

/// The (xmin, ymin, xmax, ymax) of each row's WKB, `None` for a null or empty geometry.
fn wkb_boxes(a: &ArrayRef) -> Vec<Option<[f64; 4]>> {
    a.as_binary::<i32>()
        .iter()
        .map(|w| {
            w.and_then(|w| {
                let s = marquet::wkb::scan(w).unwrap();
                (!s.is_empty).then_some([s.bbox.xmin, s.bbox.ymin, s.bbox.xmax, s.bbox.ymax])
            })
        })
        .collect()
}

fn covering_boxes(a: &ArrayRef) -> Vec<Option<[f64; 4]>> {
    let s = a.as_struct();
    let v = |k: usize, i: usize| s.column(k).as_primitive::<arrow_array::types::Float64Type>().value(i);
    (0..s.len()).map(|i| s.is_valid(i).then(|| [v(0, i), v(1, i), v(2, i), v(3, i)])).collect()
}

#[test]
fn covering_columns_in_every_version() {
    let _s = common::serial();
    let dir = common::TempDir::new("schemas-cover");
    // A table without a covering column (plain layout): the export computes one.
    let (h5, r) = import_plain("geopandas_dtypes.parquet", &dir, NestedPolicy::Json);
    r.unwrap();
    assert_eq!(MarquetTable::open(&File::open(&h5).unwrap(), "/t").unwrap().geometry_column("geometry").unwrap().covering, None);
    // A table with its own (the default layout).
    let own = dir.join("own.h5");
    import_geoparquet(&fixture("geopandas_dtypes.parquet"), &File::create(&own).unwrap(), &ImportOptions::new("/t")).unwrap();
    for (src, tag) in [(&h5, "computed"), (&own, "own")] {
        for version in [GeoParquetVersion::V1_0, GeoParquetVersion::V1_1, GeoParquetVersion::V2_0] {
            let out = dir.join(&format!("{tag}_{version:?}.parquet"));
            export(src, &out, version, CoveringChoice::default());
            let (b, kv) = read_parquet(&out);
            let geo: serde_json::Value = serde_json::from_str(&kv["geo"]).unwrap();
            assert_eq!(geo["version"], version.geo_version());
            assert_eq!(
                geo["columns"]["geometry"]["covering"],
                serde_json::json!({"bbox": {"xmin": ["bbox", "xmin"], "ymin": ["bbox", "ymin"], "xmax": ["bbox", "xmax"], "ymax": ["bbox", "ymax"]}}),
                "{tag} {version:?}"
            );
            let want = wkb_boxes(b.column_by_name("geometry").unwrap());
            assert_eq!(want.iter().filter(|b| b.is_none()).count(), 2, "a null and an empty geometry");
            assert_eq!(covering_boxes(b.column_by_name("bbox").unwrap()), want, "{tag} {version:?}");
        }
        let out = dir.join(&format!("{tag}_none.parquet"));
        export(src, &out, GeoParquetVersion::V1_1, CoveringChoice::None);
        let (b, kv) = read_parquet(&out);
        assert!(b.column_by_name("bbox").is_none());
        assert!(!kv["geo"].contains("covering"));
    }
    // Points: none by default, one on request.
    let (pts, r) = import_plain("pyarrow_nested.parquet", &dir, NestedPolicy::Json);
    r.unwrap();
    let out = dir.join("points.parquet");
    export(&pts, &out, GeoParquetVersion::V1_1, CoveringChoice::default());
    assert!(read_parquet(&out).0.column_by_name("bbox").is_none());
    export(&pts, &out, GeoParquetVersion::V1_1, CoveringChoice::All);
    let (b, kv) = read_parquet(&out);
    assert!(kv["geo"].contains("covering"));
    assert_eq!(covering_boxes(b.column_by_name("bbox").unwrap()), wkb_boxes(b.column_by_name("geometry").unwrap()));
}

fn cli(args: &[&str]) -> (bool, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_marquet")).args(args).output().unwrap();
    (o.status.success(), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn cli_flags_nested_and_covering() {
    let _s = common::serial();
    let dir = common::TempDir::new("schemas-cli");
    let src = fixture("duckdb_nested.parquet");
    let h5 = dir.join("d.h5");
    let (ok, _, err) = cli(&["convert", src.to_str().unwrap(), h5.to_str().unwrap(), "--nested", "refuse"]);
    assert!(!ok && err.contains("column \"counts\"") && err.contains("map<string, int32>"), "{err}");
    assert!(!h5.exists(), "a failed convert leaves no file");
    let (ok, _, err) = cli(&["convert", src.to_str().unwrap(), h5.to_str().unwrap(), "--no-covering"]);
    assert!(ok, "{err}");
    assert_eq!(err.lines().filter(|l| l.starts_with("warning: column")).count(), 2, "{err}");
    let out = dir.join("d.parquet");
    let (ok, _, err) = cli(&["convert", h5.to_str().unwrap(), out.to_str().unwrap(), "--geoparquet-version", "1.1", "--no-covering"]);
    assert!(ok, "{err}");
    assert!(read_parquet(&out).0.column_by_name("bbox").is_none());
    let (ok, _, err) = cli(&["convert", h5.to_str().unwrap(), out.to_str().unwrap(), "--geoparquet-version", "1.0"]);
    assert!(ok, "{err}");
    assert!(read_parquet(&out).1["geo"].contains("covering"));
}

/// geopandas reads our exports with its dtypes and filters by `bbox=` as a full scan says.
#[test]
fn geopandas_reads_dtypes_and_bbox() {
    let _s = common::serial();
    let Some(py) = common::venv_python_with("geopandas, pyarrow", "the geopandas check") else { return };
    let dir = common::TempDir::new("schemas-gpd");
    let (h5, r) = import_plain("geopandas_dtypes.parquet", &dir, NestedPolicy::Json);
    r.unwrap();
    let mut outs = Vec::new();
    for version in [GeoParquetVersion::V1_1, GeoParquetVersion::V1_0] {
        let out = dir.join(&format!("gpd_{version:?}.parquet"));
        export(&h5, &out, version, CoveringChoice::default());
        outs.push(out.to_str().unwrap().to_string());
    }
    let (nh5, r) = import_plain("pyarrow_nested.parquet", &dir, NestedPolicy::Json);
    r.unwrap();
    let nested = dir.join("nested.parquet");
    export(&nh5, &nested, GeoParquetVersion::V1_1, CoveringChoice::default());
    let script = r#"
import sys
import geopandas as gpd, pandas as pd, pyarrow as pa, pyarrow.parquet as pq
orig = gpd.read_parquet(sys.argv[1])
for path in sys.argv[3:]:
    df = gpd.read_parquet(path)
    want = {"count": "Int32", "flag": "boolean", "kind": "category", "size": "category", "grade": "category", "seen": "datetime64[us, UTC]"}
    got = {c: str(df[c].dtype) for c in want}
    assert got == want, (path, got)
    assert df["size"].cat.ordered and list(df["size"].cat.categories) == ["small", "medium", "large"], path
    assert not df["grade"].cat.ordered and set(df["grade"].cat.categories) == {"low", "mid", "high"}, path
    pd.testing.assert_series_equal(df["size"], orig["size"], obj=f"{path} size")
    for c in ["count", "flag", "kind", "size", "grade", "seen", "name"]:
        pd.testing.assert_series_equal(df[c], orig[c], check_dtype=False, check_categorical=False, obj=f"{path} {c}")
    assert df.geometry.equals(orig.geometry), path
    b = df.geometry.bounds
    for box in [(0, 5_000_000, 300_000, 5_400_000), (500_000, 5_500_000, 520_000, 5_520_000), (-10, -10, -5, -5), (0, 0, 2e6, 7e6)]:
        full = ((b.minx <= box[2]) & (b.maxx >= box[0]) & (b.miny <= box[3]) & (b.maxy >= box[1])).sum()
        got = len(gpd.read_parquet(path, bbox=box))
        assert got == full, (path, box, got, full)
        print(path.rsplit("/", 1)[-1], box, got)
t = pq.read_table(sys.argv[2])
assert pa.types.is_struct(t.schema.field("names").type), t.schema
assert t.schema.field("names").type.field("primary").type == pa.string()
assert str(t.schema.field("sources").type) == "extension<arrow.json>", t.schema.field("sources").type
assert str(gpd.read_parquet(sys.argv[2])["class"].dtype) == "category"
print("ok")
"#;
    let orig = fixture("geopandas_dtypes.parquet");
    let mut args = vec!["-c", script, orig.to_str().unwrap(), nested.to_str().unwrap()];
    args.extend(outs.iter().map(String::as_str));
    let o = Command::new(&py).args(&args).output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{stdout}{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout.trim_end().ends_with("ok"), "{stdout}");
    println!("{stdout}");
}

/// GeoJSON output (the writer `convert`, `dump` and `query` share) gives a categorical's
/// labels, not its codes, and UTC timestamps as ISO 8601 text.
#[test]
fn geojson_writes_labels_and_utc_timestamps() {
    let _s = common::serial();
    let dir = common::TempDir::new("schemas-geojson");
    let (h5, r) = import_plain("geopandas_dtypes.parquet", &dir, NestedPolicy::Json);
    r.unwrap();
    let out = dir.join("d.geojson");
    marquet::convert::export_geojson(&File::open(&h5).unwrap(), "/t", &out).unwrap();
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let p = |i: usize, k: &str| v["features"][i]["properties"][k].clone();
    assert_eq!((p(0, "kind"), p(0, "size"), p(0, "grade")), ("forest".into(), "small".into(), "low".into()));
    assert_eq!(p(5, "kind"), serde_json::Value::Null);
    assert_eq!(p(1, "seen"), serde_json::json!("2020-09-13T13:26:40Z"));
}

/// Appending carries categorical codes over by label: our own export (whose dictionary
/// pages list the grades in another order) appends back with the right labels; a label the
/// target does not have is refused, naming it.
#[test]
fn append_recodes_categoricals_by_label() {
    let _s = common::serial();
    let dir = common::TempDir::new("schemas-append");
    let (h5, r) = import_plain("geopandas_dtypes.parquet", &dir, NestedPolicy::Json);
    r.unwrap();
    let out = dir.join("again.parquet");
    export(&h5, &out, GeoParquetVersion::V1_1, CoveringChoice::None);
    let f = File::open_rw(&h5).unwrap();
    let rep = marquet::convert::append_file(&f, "/t", &out, &Default::default()).unwrap();
    assert_eq!(rep.nrows, 400);
    let t = MarquetTable::open(&f, "/t").unwrap();
    // The staged rows are in Hilbert order: compare by name.
    let names = text_column(&t, "name");
    for c in ["grade", "kind", "size"] {
        let labels = read_labels(t.table(), c, 0, 400).unwrap();
        let by_name = |range: std::ops::Range<usize>| {
            let mut v: Vec<(Option<String>, Option<String>)> = range.map(|i| (names[i].clone(), labels[i].clone())).collect();
            v.sort();
            v
        };
        assert_eq!(by_name(200..400), by_name(0..200), "{c}");
    }
    drop(t);

    // A label the target does not know.
    let (b, kv) = read_parquet(&out);
    let kinds: Vec<Option<&str>> = (0..b.num_rows()).map(|i| Some(if i == 3 { "swamp" } else { "lake" })).collect();
    let kind: ArrayRef = std::sync::Arc::new(arrow_array::DictionaryArray::<arrow_array::types::Int8Type>::from_iter(kinds));
    let idx = b.schema().index_of("kind").unwrap();
    let mut cols = b.columns().to_vec();
    cols[idx] = kind;
    let mut fields: Vec<arrow_schema::Field> = b.schema().fields().iter().map(|f| f.as_ref().clone()).collect();
    fields[idx] = arrow_schema::Field::new("kind", cols[idx].data_type().clone(), true);
    let schema = std::sync::Arc::new(arrow_schema::Schema::new(fields));
    let bad = dir.join("bad.parquet");
    let mut w = parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&bad).unwrap(), schema.clone(), None).unwrap();
    w.write(&RecordBatch::try_new(schema, cols).unwrap()).unwrap();
    w.append_key_value_metadata(parquet::file::metadata::KeyValue::new("geo".into(), kv["geo"].clone()));
    w.close().unwrap();
    let e = marquet::convert::append_file(&f, "/t", &bad, &Default::default()).unwrap_err().to_string();
    assert!(e.contains("column 'kind'") && e.contains("\"swamp\""), "{e}");
    assert_eq!(MarquetTable::open(&f, "/t").unwrap().nrows().unwrap(), 400, "a refused append adds nothing");
}

/// JSON text longer than the fixed-string limit is stored as UTF-8 bytes and still comes
/// back as `arrow.json` text, the same documents.
#[test]
fn long_json_text_round_trips() {
    let _s = common::serial();
    let dir = common::TempDir::new("schemas-longjson");
    let h5 = dir.join("long.h5");
    let f = File::create(&h5).unwrap();
    let opts = ImportOptions { layout: WriteLayout::plain(), max_fixed_string: 20, ..ImportOptions::new("/t") };
    import_geoparquet(&fixture("pyarrow_nested.parquet"), &f, &opts).unwrap();
    let t = MarquetTable::open(&f, "/t").unwrap();
    assert_eq!(t.table().kind_of("sources").unwrap(), Some(marquet::h5col::ColumnKind::List));
    let stored = text_column(&t, "sources");
    drop((t, f));
    let out = dir.join("long.parquet");
    export(&h5, &out, GeoParquetVersion::V2_0, CoveringChoice::default());
    let (b, _) = read_parquet(&out);
    let s = b.schema();
    assert_eq!(s.field_with_name("sources").unwrap().metadata().get("ARROW:extension:name").map(String::as_str), Some("arrow.json"));
    assert_eq!(strings(b.column_by_name("sources").unwrap()), stored);
    assert!(stored[0].as_deref().unwrap().starts_with(r#"[{"confidence":0.5,"#));
}
