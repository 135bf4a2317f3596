//! Every format writer consumes record batches (issue #32): a source of Arrow batches that
//! is not a Marquet table — batches held in memory here — is written to GeoParquet, GeoJSON
//! and GeoPackage, and what comes back (the parquet crate's reader, serde_json, the
//! GeoPackage import) equals the batches exactly. The source is re-readable, and counts how
//! often it is read.
#![cfg(feature = "geoparquet")]

use std::sync::Arc;

mod common;

use arrow_array::{Array, ArrayRef, BinaryArray, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use marquet::convert::hub::source::Batches;
use marquet::convert::{write_geojson, write_geoparquet, ExportOptions, ExportSource};
use marquet::marquet::{Crs, Edges, GeometryColumnInfo, StorageForm};

/// Little-endian WKB of a polygon with one ring.
fn polygon(ring: &[(f64, f64)]) -> Vec<u8> {
    let mut w = vec![1u8];
    w.extend(3u32.to_le_bytes());
    w.extend(1u32.to_le_bytes());
    w.extend((ring.len() as u32).to_le_bytes());
    for (x, y) in ring {
        w.extend(x.to_le_bytes());
        w.extend(y.to_le_bytes());
    }
    w
}

/// A square of side `s` at (`x`, `y`), closed.
fn square(x: f64, y: f64, s: f64) -> Vec<u8> {
    polygon(&[(x, y), (x + s, y), (x + s, y + s), (x, y + s), (x, y)])
}

struct MemSource {
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
    geometry: Vec<GeometryColumnInfo>,
    reads: usize,
}

impl ExportSource for MemSource {
    fn path(&self) -> &str {
        "memory"
    }
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
    fn geometry_columns(&self) -> &[GeometryColumnInfo] {
        &self.geometry
    }
    fn rows(&self) -> u64 {
        self.batches.iter().map(|b| b.num_rows() as u64).sum()
    }
    fn notes(&self) -> &[String] {
        &[]
    }
    fn skipped(&self) -> &[(String, String)] {
        &[]
    }
    fn batches(&mut self, _batch_rows: usize) -> marquet::Result<Batches<'_>> {
        self.reads += 1;
        Ok(Box::new(self.batches.clone().into_iter().map(Ok)))
    }
}

/// 3 batches of 50 rows: squares along a diagonal, every 7th geometry null, every 5th
/// name null.
type Rows = (Vec<Option<Vec<u8>>>, Vec<Option<String>>);

fn source() -> (MemSource, Rows) {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
        Field::new("geometry", DataType::Binary, true),
    ]));
    let mut batches = Vec::new();
    let (mut all_g, mut all_n) = (Vec::new(), Vec::new());
    for b in 0..3 {
        let ids: Vec<i64> = (0..50).map(|i| b * 50 + i).collect();
        let names: Vec<Option<String>> = ids.iter().map(|i| (i % 5 != 0).then(|| format!("f{i}"))).collect();
        let geoms: Vec<Option<Vec<u8>>> = ids.iter().map(|&i| (i % 7 != 3).then(|| square(i as f64 * 0.5, -(i as f64) * 0.25, 0.125))).collect();
        let cols: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(ids.clone())),
            Arc::new(StringArray::from(names.clone())),
            Arc::new(BinaryArray::from_iter(geoms.iter().map(|g| g.as_deref()))),
        ];
        batches.push(RecordBatch::try_new(schema.clone(), cols).unwrap());
        all_g.extend(geoms);
        all_n.extend(names);
    }
    let info = GeometryColumnInfo {
        name: "geometry".into(),
        path: "memory/geometry".into(),
        form: StorageForm::VarWkb,
        types: None,
        bbox: None,
        crs: Crs::Default,
        epoch: None,
        edges: Edges::Planar,
        orientation_ccw: false,
        covering: None,
    };
    (MemSource { schema, batches, geometry: vec![info], reads: 0 }, (all_g, all_n))
}

#[test]
fn geoparquet_from_batches() {
    let dir = common::TempDir::new("writers-gp");
    let out = dir.join("w.parquet");
    let (mut src, (geoms, names)) = source();
    let r = write_geoparquet(&mut src, &out, &ExportOptions::default()).unwrap();
    assert_eq!(r.rows, 150);
    assert_eq!(src.reads, 1);
    let f = std::fs::File::open(&out).unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f).unwrap();
    let geo = reader
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .unwrap()
        .iter()
        .find(|kv| kv.key == "geo")
        .and_then(|kv| kv.value.clone())
        .unwrap();
    let geo: serde_json::Value = serde_json::from_str(&geo).unwrap();
    // The exact box of the non-null squares: x from 0 to 149·0.5 + 0.125, y from −149·0.25.
    let (lo, hi) = geoms.iter().enumerate().filter(|(_, g)| g.is_some()).fold((f64::MAX, f64::MIN), |(lo, hi), (i, _)| {
        (lo.min(i as f64 * 0.5), hi.max(i as f64 * 0.5 + 0.125))
    });
    let bbox = geo["columns"]["geometry"]["bbox"].as_array().unwrap();
    assert_eq!(bbox[0].as_f64().unwrap(), lo);
    assert_eq!(bbox[2].as_f64().unwrap(), hi);
    assert_eq!(geo["columns"]["geometry"]["geometry_types"], serde_json::json!(["Polygon"]));
    assert_eq!(geo["columns"]["geometry"]["covering"]["bbox"]["xmin"], serde_json::json!(["bbox", "xmin"]));
    let mut row = 0;
    for b in reader.build().unwrap() {
        let b = b.unwrap();
        let g = b.column_by_name("geometry").unwrap().as_any().downcast_ref::<BinaryArray>().unwrap();
        let n = b.column_by_name("name").unwrap().as_any().downcast_ref::<StringArray>().unwrap();
        let id = b.column_by_name("id").unwrap().as_any().downcast_ref::<Int64Array>().unwrap();
        for i in 0..b.num_rows() {
            assert_eq!(id.value(i), row as i64);
            assert_eq!((!g.is_null(i)).then(|| g.value(i).to_vec()), geoms[row], "row {row}");
            assert_eq!((!n.is_null(i)).then(|| n.value(i).to_string()), names[row], "row {row}");
            row += 1;
        }
    }
    assert_eq!(row, 150);
}

#[test]
fn geojson_from_batches() {
    let dir = common::TempDir::new("writers-gj");
    let out = dir.join("w.geojson");
    let (mut src, (geoms, names)) = source();
    let r = write_geojson(&mut src, &out).unwrap();
    assert_eq!(r.rows, 150);
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let feats = v["features"].as_array().unwrap();
    assert_eq!(feats.len(), 150);
    for (i, f) in feats.iter().enumerate() {
        assert_eq!(f["properties"]["id"], serde_json::json!(i));
        assert_eq!(f["properties"]["name"], names[i].as_ref().map(|s| serde_json::json!(s)).unwrap_or(serde_json::Value::Null));
        match &geoms[i] {
            None => assert!(f["geometry"].is_null(), "feature {i}"),
            Some(_) => {
                let x = i as f64 * 0.5;
                let y = -(i as f64) * 0.25;
                assert_eq!(f["geometry"]["type"], "Polygon");
                assert_eq!(f["geometry"]["coordinates"][0][2], serde_json::json!([x + 0.125, y + 0.125]), "feature {i}");
            }
        }
    }
}

/// The GIS writers' half too: a GeoPackage from the batches, imported again.
#[cfg(feature = "gis")]
#[test]
fn geopackage_from_batches() {
    let dir = common::TempDir::new("writers-gpkg");
    let out = dir.join("w.gpkg");
    let (mut src, (geoms, names)) = source();
    let r = marquet::convert::hub::features::write_features("GeoPackage", &mut src, |info, _| {
        Ok(Box::new(marquet::convert::gpkg::create(&out, "w", info)?))
    })
    .unwrap();
    assert_eq!(r.rows, 150);
    let h5 = dir.join("w.h5");
    marquet::convert::convert(&out, &h5, &marquet::convert::ConvertOptions { table: Some("/w".into()), ..Default::default() }).unwrap();
    let f = marquet::h5col::File::open(&h5).unwrap();
    let t = marquet::marquet::MarquetTable::open(&f, "/w").unwrap();
    assert_eq!(t.nrows().unwrap(), 150);
    // Rows come back in the import's Hilbert order: compare as sets keyed by id.
    let plan = marquet::convert::ArrowPlan::new(&t, Some(&["id".into(), "name".into(), "geometry".into()]), false).unwrap();
    let b = plan.read_range(&t, 0, 150).unwrap();
    let id = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
    let n = b.column(1).as_any().downcast_ref::<StringArray>().unwrap();
    let g = b.column(2).as_any().downcast_ref::<BinaryArray>().unwrap();
    let mut seen = [false; 150];
    for i in 0..150 {
        let k = id.value(i) as usize;
        seen[k] = true;
        assert_eq!((!g.is_null(i)).then(|| g.value(i).to_vec()), geoms[k], "id {k}");
        assert_eq!((!n.is_null(i)).then(|| n.value(i).to_string()), names[k], "id {k}");
    }
    assert!(seen.iter().all(|s| *s));
}
