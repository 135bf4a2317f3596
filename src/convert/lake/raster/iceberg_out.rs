//! The way back as an Iceberg table (format-version 2, a local warehouse directory, no
//! catalog): one Havasu `v1` Parquet data file with field ids, a manifest whose data-file
//! entry carries the raster bounds of each raster column as `geom_lower_bounds` /
//! `geom_upper_bounds` (Havasu spec, "Manifests" and "Raster bounds": WKB points of the
//! union of the rasters' WGS84 MBRs, `xmin > xmax` across the antimeridian), the snapshot's
//! manifest list, `v1.metadata.json` and `version-hint.text`. The schema marks raster
//! columns with `havasu.raster-encoding: "v1"` on an empty struct.

use std::path::Path;

use apache_avro::types::Value as Avro;
use arrow_schema::{DataType, TimeUnit};
use serde_json::json;

use super::export::{write_parquet, RasterExport};
use crate::error::{MarquetError, Result};
use crate::h5col::File;

/// Iceberg v2 `manifest_entry` (the fields this writer fills) with Havasu's bounds.
const MANIFEST_SCHEMA: &str = r#"{"type":"record","name":"manifest_entry","fields":[
 {"name":"status","type":"int","field-id":0},
 {"name":"snapshot_id","type":["null","long"],"default":null,"field-id":1},
 {"name":"sequence_number","type":["null","long"],"default":null,"field-id":3},
 {"name":"file_sequence_number","type":["null","long"],"default":null,"field-id":4},
 {"name":"data_file","field-id":2,"type":{"type":"record","name":"r2","fields":[
  {"name":"content","type":"int","field-id":134},
  {"name":"file_path","type":"string","field-id":100},
  {"name":"file_format","type":"string","field-id":101},
  {"name":"partition","type":{"type":"record","name":"r102","fields":[]},"field-id":102},
  {"name":"record_count","type":"long","field-id":103},
  {"name":"file_size_in_bytes","type":"long","field-id":104},
  {"name":"geom_lower_bounds","default":null,"field-id":1250,"type":["null",{"type":"array","logicalType":"map","items":{"type":"record","name":"k1260_v1270","fields":[{"name":"key","type":"int","field-id":1260},{"name":"value","type":"bytes","field-id":1270}]}}]},
  {"name":"geom_upper_bounds","default":null,"field-id":1280,"type":["null",{"type":"array","logicalType":"map","items":{"type":"record","name":"k1290_v1300","fields":[{"name":"key","type":"int","field-id":1290},{"name":"value","type":"bytes","field-id":1300}]}}]}
 ]}}
]}"#;

/// Iceberg v2 `manifest_file` (manifest list entry).
const MANIFEST_LIST_SCHEMA: &str = r#"{"type":"record","name":"manifest_file","fields":[
 {"name":"manifest_path","type":"string","field-id":500},
 {"name":"manifest_length","type":"long","field-id":501},
 {"name":"partition_spec_id","type":"int","field-id":502},
 {"name":"content","type":"int","field-id":517},
 {"name":"sequence_number","type":"long","field-id":515},
 {"name":"min_sequence_number","type":"long","field-id":516},
 {"name":"added_snapshot_id","type":"long","field-id":503},
 {"name":"added_files_count","type":"int","field-id":504},
 {"name":"existing_files_count","type":"int","field-id":505},
 {"name":"deleted_files_count","type":"int","field-id":506},
 {"name":"added_rows_count","type":"long","field-id":512},
 {"name":"existing_rows_count","type":"long","field-id":513},
 {"name":"deleted_rows_count","type":"long","field-id":514}
]}"#;

/// The snapshot id written (one snapshot; fixed, so that the output is reproducible).
const SNAPSHOT: i64 = 1;

fn avro_err(path: &Path, e: apache_avro::Error) -> MarquetError {
    crate::convert::err_at(&path.display().to_string(), e)
}

fn io(path: &Path, e: std::io::Error) -> MarquetError {
    MarquetError::Io { path: path.display().to_string(), source: e }
}

/// The Iceberg type of a written Arrow field.
fn iceberg_type(name: &str, dt: &DataType) -> Result<serde_json::Value> {
    Ok(json!(match dt {
        DataType::Boolean => "boolean",
        DataType::Int32 => "int",
        DataType::Int64 => "long",
        DataType::Float32 => "float",
        DataType::Float64 => "double",
        DataType::Utf8 | DataType::LargeUtf8 => "string",
        DataType::Binary | DataType::LargeBinary => "binary",
        DataType::Date32 => "date",
        DataType::Timestamp(TimeUnit::Microsecond, None) => "timestamp",
        DataType::Timestamp(TimeUnit::Microsecond, Some(_)) => "timestamptz",
        t => return Err(MarquetError::Unsupported(format!("column {name}: {t} has no Iceberg type here (the Iceberg way back writes flat columns; write Parquet instead)"))),
    }))
}

fn wkb_point(x: f64, y: f64) -> Vec<u8> {
    let mut b = vec![1u8, 1, 0, 0, 0];
    b.extend_from_slice(&x.to_le_bytes());
    b.extend_from_slice(&y.to_le_bytes());
    b
}

fn bounds_map(entries: &[(i32, Vec<u8>)]) -> Avro {
    if entries.is_empty() {
        return Avro::Union(0, Box::new(Avro::Null));
    }
    let items = entries.iter().map(|(k, v)| Avro::Record(vec![("key".into(), Avro::Int(*k)), ("value".into(), Avro::Bytes(v.clone()))])).collect();
    Avro::Union(1, Box::new(Avro::Array(items)))
}

/// Write the raster footprint table `table` of `file` as an Iceberg table in the new (or
/// empty) directory `dir`.
pub fn export_iceberg(file: &File, table: &str, dir: &Path) -> Result<RasterExport> {
    if dir.exists() && std::fs::read_dir(dir).map_err(|e| io(dir, e))?.next().is_some() {
        return Err(MarquetError::InvalidArgument(format!("{}: not empty; an Iceberg table is written into a new directory", dir.display())));
    }
    let (data, meta) = (dir.join("data"), dir.join("metadata"));
    std::fs::create_dir_all(&data).map_err(|e| io(&data, e))?;
    std::fs::create_dir_all(&meta).map_err(|e| io(&meta, e))?;
    let abs = std::fs::canonicalize(dir).map_err(|e| io(dir, e))?;
    let loc = format!("file://{}", abs.display());
    let data_name = "00000-0-marquet.parquet";
    let data_path = data.join(data_name);
    let (export, written) = write_parquet(file, table, &data_path, true)?;
    // The schema: field ids 1.. in the order written (the Parquet field ids).
    let mut fields = Vec::new();
    let mut lower = Vec::new();
    let mut upper = Vec::new();
    for (i, f) in written.fields.iter().enumerate() {
        let id = (i + 1) as i32;
        if export.raster_columns.contains(f.name()) {
            fields.push(json!({"id": id, "name": f.name(), "required": false, "type": {"type": "struct", "fields": []}, "havasu.raster-encoding": "v1"}));
            if let Some(Some(b)) = written.bounds.get(f.name()) {
                lower.push((id, wkb_point(b[0], b[1])));
                upper.push((id, wkb_point(b[2], b[3])));
            }
        } else {
            fields.push(json!({"id": id, "name": f.name(), "required": false, "type": iceberg_type(f.name(), f.data_type())?}));
        }
    }
    let schema = json!({"type": "struct", "schema-id": 0, "identifier-field-ids": [], "fields": fields});
    let size = std::fs::metadata(&data_path).map_err(|e| io(&data_path, e))?.len();
    // The manifest.
    let ms = apache_avro::Schema::parse_str(MANIFEST_SCHEMA).map_err(|e| avro_err(&meta, e))?;
    let man_path = meta.join("marquet-m0.avro");
    let mut w = apache_avro::Writer::with_codec(&ms, Vec::new(), apache_avro::Codec::Null).map_err(|e| avro_err(&man_path, e))?;
    for (k, v) in [("schema", schema.to_string()), ("schema-id", "0".into()), ("partition-spec", "[]".into()), ("partition-spec-id", "0".into()), ("format-version", "2".into()), ("content", "data".into())] {
        w.add_user_metadata(k.to_string(), v).map_err(|e| avro_err(&man_path, e))?;
    }
    let entry = Avro::Record(vec![
        ("status".into(), Avro::Int(1)),
        ("snapshot_id".into(), Avro::Union(1, Box::new(Avro::Long(SNAPSHOT)))),
        ("sequence_number".into(), Avro::Union(0, Box::new(Avro::Null))),
        ("file_sequence_number".into(), Avro::Union(0, Box::new(Avro::Null))),
        (
            "data_file".into(),
            Avro::Record(vec![
                ("content".into(), Avro::Int(0)),
                ("file_path".into(), Avro::String(format!("{loc}/data/{data_name}"))),
                ("file_format".into(), Avro::String("PARQUET".into())),
                ("partition".into(), Avro::Record(vec![])),
                ("record_count".into(), Avro::Long(export.rows as i64)),
                ("file_size_in_bytes".into(), Avro::Long(size as i64)),
                ("geom_lower_bounds".into(), bounds_map(&lower)),
                ("geom_upper_bounds".into(), bounds_map(&upper)),
            ]),
        ),
    ]);
    w.append_value(entry).map_err(|e| avro_err(&man_path, e))?;
    let bytes = w.into_inner().map_err(|e| avro_err(&man_path, e))?;
    std::fs::write(&man_path, &bytes).map_err(|e| io(&man_path, e))?;
    // The manifest list.
    let ls = apache_avro::Schema::parse_str(MANIFEST_LIST_SCHEMA).map_err(|e| avro_err(&meta, e))?;
    let list_path = meta.join(format!("snap-{SNAPSHOT}-0-marquet.avro"));
    let mut w = apache_avro::Writer::with_codec(&ls, Vec::new(), apache_avro::Codec::Null).map_err(|e| avro_err(&list_path, e))?;
    for (k, v) in [("format-version", "2".to_string()), ("snapshot-id", SNAPSHOT.to_string()), ("sequence-number", "1".into())] {
        w.add_user_metadata(k.to_string(), v).map_err(|e| avro_err(&list_path, e))?;
    }
    let rows = export.rows as i64;
    w.append_value(Avro::Record(vec![
        ("manifest_path".into(), Avro::String(format!("{loc}/metadata/marquet-m0.avro"))),
        ("manifest_length".into(), Avro::Long(bytes.len() as i64)),
        ("partition_spec_id".into(), Avro::Int(0)),
        ("content".into(), Avro::Int(0)),
        ("sequence_number".into(), Avro::Long(1)),
        ("min_sequence_number".into(), Avro::Long(1)),
        ("added_snapshot_id".into(), Avro::Long(SNAPSHOT)),
        ("added_files_count".into(), Avro::Int(1)),
        ("existing_files_count".into(), Avro::Int(0)),
        ("deleted_files_count".into(), Avro::Int(0)),
        ("added_rows_count".into(), Avro::Long(rows)),
        ("existing_rows_count".into(), Avro::Long(0)),
        ("deleted_rows_count".into(), Avro::Long(0)),
    ]))
    .map_err(|e| avro_err(&list_path, e))?;
    let list_bytes = w.into_inner().map_err(|e| avro_err(&list_path, e))?;
    std::fs::write(&list_path, list_bytes).map_err(|e| io(&list_path, e))?;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0);
    let metadata = json!({
        "format-version": 2,
        "table-uuid": format!("00000000-0000-4000-8000-{:012x}", now as u64 & 0xffff_ffff_ffff),
        "location": loc,
        "last-sequence-number": 1,
        "last-updated-ms": now,
        "last-column-id": written.fields.len(),
        "current-schema-id": 0,
        "schemas": [schema],
        "default-spec-id": 0,
        "partition-specs": [{"spec-id": 0, "fields": []}],
        "last-partition-id": 999,
        "default-sort-order-id": 0,
        "sort-orders": [{"order-id": 0, "fields": []}],
        "properties": {"havasu.format-version": "0.1.0"},
        "current-snapshot-id": SNAPSHOT,
        "refs": {"main": {"snapshot-id": SNAPSHOT, "type": "branch"}},
        "snapshots": [{
            "snapshot-id": SNAPSHOT,
            "sequence-number": 1,
            "timestamp-ms": now,
            "manifest-list": format!("{loc}/metadata/snap-{SNAPSHOT}-0-marquet.avro"),
            "summary": {"operation": "append", "added-data-files": "1", "added-records": rows.to_string()},
            "schema-id": 0,
        }],
        "snapshot-log": [{"snapshot-id": SNAPSHOT, "timestamp-ms": now}],
        "metadata-log": [],
    });
    let mp = meta.join("v1.metadata.json");
    std::fs::write(&mp, serde_json::to_string_pretty(&metadata).unwrap_or_default()).map_err(|e| io(&mp, e))?;
    let hint = meta.join("version-hint.text");
    std::fs::write(&hint, "1").map_err(|e| io(&hint, e))?;
    Ok(export)
}
