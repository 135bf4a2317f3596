//! The lakehouse sources as record-batch streams: CSV / TSV (arrow-csv, schema inferred
//! in a first pass), plain Parquet (and Parquet with GeoMesa companions), Iceberg tables
//! ([`super::iceberg`]).

use std::path::Path;

use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::LogicalType;

use super::options::{geomesa_columns, LakeOptions, Source, SourceGeometry, SourceKind};
use crate::error::{MarquetError, Result};
use crate::convert::DEFAULT_BATCH_ROWS;
use super::options::{arrow_err, pq_err};


fn ext(p: &Path) -> String {
    p.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase()
}

/// The kind of `input` when the lakehouse reader handles it, `None` when the GeoParquet /
/// GeoJSON / HDF5 paths do.
pub fn kind_of(input: &Path, opts: &LakeOptions) -> Result<Option<SourceKind>> {
    if input.is_dir() {
        return Ok(input.join("metadata").is_dir().then_some(SourceKind::Iceberg));
    }
    let name = input.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if name.ends_with(".metadata.json") {
        return Ok(Some(SourceKind::Iceberg));
    }
    match ext(input).as_str() {
        "csv" | "tsv" => Ok(Some(SourceKind::Csv)),
        "parquet" | "pq" | "geoparquet" => {
            let f = std::fs::File::open(input).map_err(|e| MarquetError::Io { path: input.display().to_string(), source: e })?;
            let b = ParquetRecordBatchReaderBuilder::try_new(f).map_err(|e| pq_err(&input.display().to_string(), e))?;
            let has_geo = b.metadata().file_metadata().key_value_metadata().is_some_and(|kv| kv.iter().any(|k| k.key == "geo"));
            let native = b.parquet_schema().root_schema().get_fields().iter().any(|f| {
                f.is_primitive() && matches!(f.get_basic_info().logical_type_ref(), Some(LogicalType::Geometry(_) | LogicalType::Geography(_)))
            });
            let named = !opts.geometry.is_empty() || opts.lonlat.is_some();
            let geomesa = !geomesa_columns(b.schema()).is_empty();
            Ok((named || geomesa || !(has_geo || native)).then_some(SourceKind::Parquet))
        }
        _ => Ok(None),
    }
}

/// Open `input` as a record-batch stream.
pub fn open_source(input: &Path, opts: &LakeOptions) -> Result<Source> {
    open_source_batched(input, opts, DEFAULT_BATCH_ROWS)
}

/// [`open_source`] with Parquet and Iceberg batches of `batch_rows` rows (rasters: a few
/// rows per batch bound the memory a batch of pixels takes).
pub fn open_source_batched(input: &Path, opts: &LakeOptions, batch_rows: usize) -> Result<Source> {
    let path = input.display().to_string();
    match kind_of(input, opts)? {
        Some(SourceKind::Iceberg) => super::iceberg::open_batched(input, opts, batch_rows),
        Some(SourceKind::Csv) => open_csv(input, opts),
        Some(SourceKind::Parquet) => {
            let f = std::fs::File::open(input).map_err(|e| MarquetError::Io { path: path.clone(), source: e })?;
            let b = ParquetRecordBatchReaderBuilder::try_new(f).map_err(|e| pq_err(&path, e))?;
            let schema = b.schema().clone();
            let reader = b.with_batch_size(batch_rows.max(1)).build().map_err(|e| pq_err(&path, e))?;
            let p2 = path.clone();
            Ok(Source {
                path: path.clone(),
                schema,
                batches: Box::new(reader.map(move |r| r.map_err(|e| arrow_err(&p2, e)))),
                geometry: SourceGeometry::default(),
                describe: "parquet".into(),
                files_total: 0,
                files_skipped: 0,
                warnings: Vec::new(),
            })
        }
        None => Err(MarquetError::InvalidArgument(format!("{path}: not a CSV, Parquet or Iceberg source"))),
    }
}

fn open_csv(input: &Path, opts: &LakeOptions) -> Result<Source> {
    use arrow_csv::reader::{Format, ReaderBuilder};
    let path = input.display().to_string();
    let open = || std::fs::File::open(input).map_err(|e| MarquetError::Io { path: path.clone(), source: e });
    let mut format = Format::default().with_header(true);
    if ext(input) == "tsv" {
        format = format.with_delimiter(b'\t');
    }
    // Pass 1: the schema, inferred from every record (streamed).
    let (inferred, _) = format.infer_schema(std::io::BufReader::new(open()?), None).map_err(|e| arrow_err(&path, e))?;
    // Geometry text stays text; lon/lat are numbers even when some cells are empty.
    let geoms: Vec<&str> = opts.geometry.iter().map(|g| g.column.as_str()).collect();
    let (lon, lat) = opts.lonlat.clone().unwrap_or_default();
    let fields: Vec<Field> = inferred
        .fields()
        .iter()
        .map(|f| {
            if geoms.contains(&f.name().as_str()) {
                Field::new(f.name(), DataType::Utf8, true)
            } else if f.name() == &lon || f.name() == &lat {
                Field::new(f.name(), DataType::Float64, true)
            } else {
                f.as_ref().clone()
            }
        })
        .collect();
    let schema = std::sync::Arc::new(Schema::new(fields));
    let reader = ReaderBuilder::new(schema.clone())
        .with_format(format)
        .with_batch_size(DEFAULT_BATCH_ROWS)
        .build(std::io::BufReader::new(open()?))
        .map_err(|e| arrow_err(&path, e))?;
    let p2 = path.clone();
    Ok(Source {
        path: path.clone(),
        schema,
        batches: Box::new(reader.map(move |r| r.map_err(|e| arrow_err(&p2, e)))),
        geometry: SourceGeometry::default(),
        describe: "csv".into(),
        files_total: 0,
        files_skipped: 0,
        warnings: Vec::new(),
    })
}
