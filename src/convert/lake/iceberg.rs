//! Iceberg tables in a local warehouse, read without a catalog: the table metadata JSON,
//! the snapshot's manifest list and manifests (Avro, read with `apache-avro`), then every
//! current Parquet data file (Iceberg spec, "Scan Planning").
//!
//! Why not the `iceberg` crate: it builds on its own Arrow major version (and tokio,
//! opendal), while the tree has one arrow/parquet, 60.1; the part of a scan plan a local
//! conversion needs — the current snapshot's live data files and their bounds — is a few
//! Avro records.
//!
//! Geometry columns (see `/work/shared/spec/related/havasu-iceberg-spatial.txt`):
//! - Havasu (format-version 1 and 2): a `binary` or `string` field with the property
//!   `havasu.geometry-encoding` (`wkb`, `ewkb`, `wkt`, `geojson`); no declared CRS (the
//!   EWKB SRIDs give one). File bounds: the manifest's `geom_lower_bounds` /
//!   `geom_upper_bounds` (field ids 1250 / 1280), WKB points.
//! - Iceberg v3 `geometry(C)` / `geography(C, A)`: ISO WKB with the CRS `C` (default
//!   `OGC:CRS84`; `projjson:<key>` names a table property) and edges `A` (default
//!   spherical). File bounds: `lower_bounds` / `upper_bounds` as x:y little-endian doubles.
//!
//! Not read (errors, never silently wrong): row-level deletes (v2 position / equality
//! delete files; compact the table first), data files other than Parquet. Havasu raster
//! columns (`havasu.raster-encoding: v1`) are read as their `v1` groups; `raster/` makes
//! arrays and footprints of them, and their manifest bounds prune like geometry bounds.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use apache_avro::types::Value as Avro;
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use parquet::arrow::ProjectionMask;
use serde_json::Value;

use super::decode::TextOrBinary;
use super::options::{FoundColumn, LakeOptions, Source, SourceGeometry, PARQUET_FIELD_ID};
use crate::error::{MarquetError, Result};
use crate::convert::{err_at, DEFAULT_BATCH_ROWS};
use super::options::{arrow_err, pq_err};
use crate::spec::BBox;

/// Field ids of Havasu's manifest extension (Havasu spec, "Manifests").
const HAVASU_GEOM_LOWER: &str = "geom_lower_bounds";
const HAVASU_GEOM_UPPER: &str = "geom_upper_bounds";

/// A live data file of the scan.
#[derive(Debug, Clone)]
pub struct DataFile {
    /// The Parquet data file, resolved against the warehouse directory.
    pub path: PathBuf,
    /// Rows in the file, as the manifest records them.
    pub record_count: i64,
    /// XY bounds per field id (Havasu geometry bounds or v3 geometry bounds).
    pub bounds: HashMap<i32, BBox>,
}

/// A table's current state: schema, geometry columns and live data files.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The `vN.metadata.json` the scan was planned from.
    pub metadata_file: PathBuf,
    /// Iceberg `format-version` (1, 2 or 3).
    pub format_version: i64,
    /// Top-level fields of the current schema: (id, name, type JSON, field JSON).
    pub fields: Vec<(i32, String, Value, Value)>,
    /// The geometry columns the schema declares (Havasu property, v3 types).
    pub geometry: SourceGeometry,
    /// The live data files of the current snapshot.
    pub files: Vec<DataFile>,
    /// What the planner skipped or could not honour (e.g. delete files, rasters).
    pub warnings: Vec<String>,
}

fn bad(path: &Path, m: impl std::fmt::Display) -> MarquetError {
    MarquetError::InvalidArgument(format!("{}: {m}", path.display()))
}

/// The metadata file of `input`: itself, or in `input/metadata/` the one
/// `version-hint.text` names, else the highest-numbered `*.metadata.json`.
pub fn metadata_file(input: &Path) -> Result<PathBuf> {
    if input.is_file() {
        return Ok(input.to_path_buf());
    }
    let dir = input.join("metadata");
    if let Ok(h) = std::fs::read_to_string(dir.join("version-hint.text")) {
        let v = h.trim();
        for cand in [format!("v{v}.metadata.json"), format!("{v}.metadata.json")] {
            if dir.join(&cand).is_file() {
                return Ok(dir.join(cand));
            }
        }
    }
    let mut best: Option<(u64, PathBuf)> = None;
    let rd = std::fs::read_dir(&dir).map_err(|e| MarquetError::Io { path: dir.display().to_string(), source: e })?;
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if !name.ends_with(".metadata.json") {
            continue;
        }
        // `vN.metadata.json` (Hadoop tables) or `NNNNN-<uuid>.metadata.json` (catalogs).
        let digits: String = name.trim_start_matches('v').chars().take_while(|c| c.is_ascii_digit()).collect();
        let n = digits.parse::<u64>().unwrap_or(0);
        if best.as_ref().is_none_or(|(b, _)| n >= *b) {
            best = Some((n, e.path()));
        }
    }
    best.map(|(_, p)| p).ok_or_else(|| bad(&dir, "no *.metadata.json: not an Iceberg table"))
}

/// A path from the metadata: `file://` URIs and plain paths; when the table has moved
/// (the path does not exist), re-rooted from the table's `location` to where it is now.
fn local_path(uri: &str, location: &str, table_dir: &Path) -> PathBuf {
    let strip = |s: &str| -> String {
        let s = s.strip_prefix("file://").or_else(|| s.strip_prefix("file:")).unwrap_or(s);
        s.to_string()
    };
    let p = PathBuf::from(strip(uri));
    if p.exists() {
        return p;
    }
    let loc = strip(location);
    let u = strip(uri);
    match u.strip_prefix(loc.trim_end_matches('/')) {
        Some(rest) => table_dir.join(rest.trim_start_matches('/')),
        None => p,
    }
}

fn unwrap_union(v: &Avro) -> &Avro {
    match v {
        Avro::Union(_, b) => b,
        v => v,
    }
}

fn field<'a>(v: &'a Avro, name: &str) -> Option<&'a Avro> {
    match unwrap_union(v) {
        Avro::Record(fs) => fs.iter().find(|(n, _)| n == name).map(|(_, v)| unwrap_union(v)),
        _ => None,
    }
}

fn as_i64(v: Option<&Avro>) -> Option<i64> {
    match v? {
        Avro::Int(i) => Some(*i as i64),
        Avro::Long(l) => Some(*l),
        _ => None,
    }
}

fn as_str(v: Option<&Avro>) -> Option<&str> {
    match v? {
        Avro::String(s) => Some(s),
        _ => None,
    }
}

/// An Iceberg `map<int, binary>` as Avro writes it (an array of key/value records).
fn int_bytes_map(v: Option<&Avro>) -> HashMap<i32, Vec<u8>> {
    let mut m = HashMap::new();
    match v {
        Some(Avro::Array(items)) => {
            for it in items {
                if let (Some(k), Some(Avro::Bytes(b))) = (as_i64(field(it, "key")), field(it, "value")) {
                    m.insert(k as i32, b.clone());
                }
            }
        }
        Some(Avro::Map(h)) => {
            for (k, v) in h {
                if let (Ok(k), Avro::Bytes(b)) = (k.parse::<i32>(), unwrap_union(v)) {
                    m.insert(k, b.clone());
                }
            }
        }
        _ => {}
    }
    m
}

/// XY of a bound: a WKB point (Havasu) or x:y[:z:m] little-endian doubles (Iceberg v3).
fn bound_xy(b: &[u8]) -> Option<(f64, f64)> {
    if (b.len() == 21 || b.len() == 29 || b.len() == 37) && b[0] <= 1 {
        if let Ok(crate::wkb::Geometry::Point(p)) = crate::wkb::decode(b) {
            return Some((p.coord.x, p.coord.y));
        }
    }
    if b.len() >= 16 && b.len().is_multiple_of(8) {
        let f = |i: usize| f64::from_le_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
        return Some((f(0), f(8)));
    }
    None
}

fn read_avro(path: &Path) -> Result<Vec<Avro>> {
    let f = std::fs::File::open(path).map_err(|e| MarquetError::Io { path: path.display().to_string(), source: e })?;
    let r = apache_avro::Reader::new(std::io::BufReader::new(f)).map_err(|e| err_at(&path.display().to_string(), e))?;
    r.map(|v| v.map_err(|e| err_at(&path.display().to_string(), e))).collect()
}

/// The geometry meaning of one schema field: Havasu property or v3 type.
fn field_geometry(f: &Value, props: &serde_json::Map<String, Value>) -> Option<FoundColumn> {
    let column = f.get("name")?.as_str()?.to_string();
    if let Some(e) = f.get("havasu.geometry-encoding").and_then(|e| e.as_str()) {
        return Some(FoundColumn { column, encoding: TextOrBinary::parse(e), crs: None, edges: None, how: format!("Havasu havasu.geometry-encoding={e}") });
    }
    let t = f.get("type")?.as_str()?.trim();
    let (kind, args) = match t.split_once('(') {
        Some((k, a)) => (k.trim().to_ascii_lowercase(), a.trim_end_matches(')').to_string()),
        None => (t.to_ascii_lowercase(), String::new()),
    };
    if kind != "geometry" && kind != "geography" {
        return None;
    }
    let mut parts = args.splitn(2, ',').map(|s| s.trim().to_string());
    let crs_s = parts.next().filter(|s| !s.is_empty()).unwrap_or_else(|| "OGC:CRS84".into());
    let crs = match crs_s.strip_prefix("projjson:") {
        Some(key) => match props.get(key).and_then(|v| v.as_str()).and_then(|s| serde_json::from_str::<Value>(s).ok()) {
            Some(doc) => doc,
            None => Value::String(crs_s.clone()),
        },
        None => Value::String(crs_s.clone()),
    };
    let edges = (kind == "geography").then(|| parts.next().filter(|s| !s.is_empty()).unwrap_or_else(|| "spherical".into()).to_ascii_lowercase());
    Some(FoundColumn { column, encoding: Some(TextOrBinary::Wkb), crs: Some(crs), edges, how: format!("Iceberg v3 {t}") })
}

/// Plan the scan of the table at `input`: schema, geometry columns, live data files
/// (those whose bounds miss `window` left out when the bounds are known).
pub fn plan(input: &Path, window: Option<&BBox>, primary: Option<&str>) -> Result<(Plan, usize)> {
    let mf = metadata_file(input)?;
    let text = std::fs::read_to_string(&mf).map_err(|e| MarquetError::Io { path: mf.display().to_string(), source: e })?;
    let meta: Value = serde_json::from_str(&text).map_err(|e| bad(&mf, format!("not JSON: {e}")))?;
    let table_dir = mf.parent().and_then(|p| p.parent()).map(Path::to_path_buf).unwrap_or_default();
    let location = meta.get("location").and_then(|v| v.as_str()).unwrap_or("").to_string();
    let format_version = meta.get("format-version").and_then(|v| v.as_i64()).ok_or_else(|| bad(&mf, "no format-version: not Iceberg table metadata"))?;
    let schema = match meta.get("current-schema-id").and_then(|v| v.as_i64()) {
        Some(id) => meta
            .get("schemas")
            .and_then(|s| s.as_array())
            .and_then(|a| a.iter().find(|s| s.get("schema-id").and_then(|v| v.as_i64()) == Some(id)))
            .cloned(),
        None => meta.get("schema").cloned(),
    }
    .ok_or_else(|| bad(&mf, "no current schema"))?;
    let props = meta.get("properties").and_then(|p| p.as_object()).cloned().unwrap_or_default();
    let mut fields = Vec::new();
    let mut geometry = SourceGeometry::default();
    let warnings = Vec::new();
    let mut rasters: Vec<i32> = Vec::new();
    for f in schema.get("fields").and_then(|f| f.as_array()).ok_or_else(|| bad(&mf, "schema has no fields"))? {
        let id = f.get("id").and_then(|v| v.as_i64()).ok_or_else(|| bad(&mf, "schema field without id"))? as i32;
        let name = f.get("name").and_then(|v| v.as_str()).ok_or_else(|| bad(&mf, "schema field without name"))?.to_string();
        if let Some(e) = f.get("havasu.raster-encoding") {
            // Rasters: arrays beside a footprint table (issue #37, raster/mod.rs).
            if e.as_str() != Some("v1") {
                return Err(MarquetError::Unsupported(format!("{}: column {name}: havasu.raster-encoding {e} (known: v1)", mf.display())));
            }
            rasters.push(id);
            fields.push((id, name, Value::String(RASTER_TYPE.into()), f.clone()));
            continue;
        }
        if let Some(c) = field_geometry(f, &props) {
            if c.encoding.is_none() {
                let e = f.get("havasu.geometry-encoding").cloned().unwrap_or_default();
                return Err(MarquetError::Unsupported(format!(
                    "{}: column {name}: havasu.geometry-encoding {e} (known: wkb, ewkb, wkt, geojson)",
                    mf.display()
                )));
            }
            geometry.columns.push(c);
        }
        fields.push((id, name, f.get("type").cloned().unwrap_or(Value::Null), f.clone()));
    }
    let prim_name = primary.map(str::to_string).or_else(|| geometry.columns.first().map(|c| c.column.clone()));
    // Without a geometry column the first raster column's bounds prune.
    let prim_id = prim_name.and_then(|n| fields.iter().find(|f| f.1 == n).map(|f| f.0)).or_else(|| rasters.first().copied());

    // The current snapshot's manifests.
    let snap_id = meta.get("current-snapshot-id").and_then(|v| v.as_i64()).filter(|&s| s >= 0);
    let mut manifests: Vec<PathBuf> = Vec::new();
    if let Some(sid) = snap_id {
        let snap = meta
            .get("snapshots")
            .and_then(|s| s.as_array())
            .and_then(|a| a.iter().find(|s| s.get("snapshot-id").and_then(|v| v.as_i64()) == Some(sid)))
            .ok_or_else(|| bad(&mf, format!("current snapshot {sid} not in snapshots")))?;
        if let Some(list) = snap.get("manifest-list").and_then(|v| v.as_str()) {
            let lp = local_path(list, &location, &table_dir);
            for m in read_avro(&lp)? {
                let path = as_str(field(&m, "manifest_path")).ok_or_else(|| bad(&lp, "manifest list entry without manifest_path"))?;
                if as_i64(field(&m, "content")).unwrap_or(0) != 0 {
                    return Err(MarquetError::Unsupported(format!(
                        "{}: the table has row-level delete files (merge-on-read); they are not applied here — compact the table (rewrite_data_files) first",
                        mf.display()
                    )));
                }
                manifests.push(local_path(path, &location, &table_dir));
            }
        } else if let Some(a) = snap.get("manifests").and_then(|v| v.as_array()) {
            for m in a.iter().filter_map(|m| m.as_str()) {
                manifests.push(local_path(m, &location, &table_dir));
            }
        }
    }
    let mut files = Vec::new();
    let mut skipped = 0usize;
    for mp in &manifests {
        for e in read_avro(mp)? {
            // status 2 = DELETED: not part of the snapshot.
            if as_i64(field(&e, "status")) == Some(2) {
                continue;
            }
            let df = field(&e, "data_file").ok_or_else(|| bad(mp, "manifest entry without data_file"))?;
            if as_i64(field(df, "content")).unwrap_or(0) != 0 {
                return Err(MarquetError::Unsupported(format!("{}: delete files are not applied here; compact the table first", mp.display())));
            }
            let fmt = as_str(field(df, "file_format")).unwrap_or("PARQUET");
            if !fmt.eq_ignore_ascii_case("parquet") {
                return Err(MarquetError::Unsupported(format!("{}: data file format {fmt} (only Parquet is read)", mp.display())));
            }
            let path = as_str(field(df, "file_path")).ok_or_else(|| bad(mp, "data file without file_path"))?;
            let mut bounds = HashMap::new();
            for (lo_k, hi_k) in [(HAVASU_GEOM_LOWER, HAVASU_GEOM_UPPER), ("lower_bounds", "upper_bounds")] {
                let lo = int_bytes_map(field(df, lo_k));
                let hi = int_bytes_map(field(df, hi_k));
                for (id, l) in &lo {
                    let is_geom = rasters.contains(id) || geometry.columns.iter().any(|g| fields.iter().any(|f| f.0 == *id && f.1 == g.column));
                    if !is_geom || bounds.contains_key(id) {
                        continue;
                    }
                    if let (Some((x0, y0)), Some((x1, y1))) = (bound_xy(l), hi.get(id).and_then(|h| bound_xy(h))) {
                        bounds.insert(*id, BBox::xy(x0, y0, x1, y1));
                    }
                }
            }
            let file = DataFile { path: local_path(path, &location, &table_dir), record_count: as_i64(field(df, "record_count")).unwrap_or(0), bounds };
            if let (Some(w), Some(id)) = (window, prim_id) {
                if let Some(b) = file.bounds.get(&id) {
                    // x lower > upper: an antimeridian-crossing box (Havasu raster bounds),
                    // tested as its two parts [xmin, 180] and [-180, xmax].
                    let misses = if b.xmin <= b.xmax {
                        !b.intersects_xy(w)
                    } else {
                        w.xmin <= w.xmax && !BBox::xy(b.xmin, b.ymin, 180.0, b.ymax).intersects_xy(w) && !BBox::xy(-180.0, b.ymin, b.xmax, b.ymax).intersects_xy(w)
                    };
                    if misses {
                        skipped += 1;
                        continue;
                    }
                }
            }
            files.push(file);
        }
    }
    Ok((Plan { metadata_file: mf, format_version, fields, geometry, files, warnings }, skipped))
}

/// The type recorded for Havasu raster fields (their Iceberg type is an empty struct).
const RASTER_TYPE: &str = "havasu.raster v1";

/// The Arrow type of an Iceberg primitive type (for columns a data file lacks).
fn arrow_type(t: &Value) -> Option<DataType> {
    let s = t.as_str()?;
    if s == RASTER_TYPE {
        return Some(super::raster::model::raster_type());
    }
    let k = s.split('(').next().unwrap_or(s).trim();
    Some(match k {
        "boolean" => DataType::Boolean,
        "int" => DataType::Int32,
        "long" => DataType::Int64,
        "float" => DataType::Float32,
        "double" => DataType::Float64,
        "string" => DataType::Utf8,
        "binary" | "fixed" | "uuid" | "geometry" | "geography" => DataType::Binary,
        "date" => DataType::Date32,
        "timestamp" => DataType::Timestamp(TimeUnit::Microsecond, None),
        "timestamptz" => DataType::Timestamp(TimeUnit::Microsecond, Some("+00:00".into())),
        "timestamp_ns" => DataType::Timestamp(TimeUnit::Nanosecond, None),
        "timestamptz_ns" => DataType::Timestamp(TimeUnit::Nanosecond, Some("+00:00".into())),
        _ => return None,
    })
}

/// Root columns of a data file matched to the table's fields by field id (then by name).
fn match_columns(file_schema: &Schema, fields: &[(i32, String, Value, Value)]) -> Vec<Option<usize>> {
    fields
        .iter()
        .map(|(id, name, _, _)| {
            let by_id = file_schema
                .fields()
                .iter()
                .position(|f| f.metadata().get(PARQUET_FIELD_ID).and_then(|v| v.parse::<i32>().ok()) == Some(*id));
            by_id.or_else(|| {
                let any_ids = file_schema.fields().iter().any(|f| f.metadata().contains_key(PARQUET_FIELD_ID));
                (!any_ids).then(|| file_schema.index_of(name).ok()).flatten()
            })
        })
        .collect()
}

fn open_file(p: &Path) -> Result<ParquetRecordBatchReaderBuilder<std::fs::File>> {
    let f = std::fs::File::open(p).map_err(|e| MarquetError::Io { path: p.display().to_string(), source: e })?;
    ParquetRecordBatchReaderBuilder::try_new(f).map_err(|e| pq_err(&p.display().to_string(), e))
}

/// Open the table at `input` as a record-batch stream over its live data files.
pub fn open(input: &Path, opts: &LakeOptions) -> Result<Source> {
    open_batched(input, opts, DEFAULT_BATCH_ROWS)
}

/// [`open`] with batches of `batch_rows` rows.
pub fn open_batched(input: &Path, opts: &LakeOptions, batch_rows: usize) -> Result<Source> {
    let primary = opts.geometry.first().map(|g| g.column.as_str());
    let (plan, skipped) = plan(input, opts.bbox.as_ref(), primary)?;
    let path = plan.metadata_file.display().to_string();
    // The output schema: the table's field names, types from the first data file (or
    // from the Iceberg types when no file has the column).
    let first = match plan.files.first() {
        Some(f) => Some(open_file(&f.path)?.schema().clone()),
        None => None,
    };
    let mut out_fields = Vec::new();
    let firstcols = first.as_ref().map(|s| match_columns(s, &plan.fields));
    for (k, (_, name, t, _)) in plan.fields.iter().enumerate() {
        let dt = match (&first, firstcols.as_ref().and_then(|c| c[k])) {
            (Some(s), Some(i)) => s.field(i).data_type().clone(),
            _ => arrow_type(t).ok_or_else(|| MarquetError::Unsupported(format!("{path}: column {name}: type {t} is not read when a data file lacks it")))?,
        };
        out_fields.push(Field::new(name, dt, true));
    }
    let schema: SchemaRef = Arc::new(Schema::new(out_fields));
    let total = plan.files.len() + skipped;
    let describe = format!(
        "iceberg format-version {} ({}), {} live data files",
        plan.format_version,
        plan.metadata_file.display(),
        total
    );
    let batches = IcebergBatches { files: plan.files.iter().map(|f| f.path.clone()).collect(), current: None, fields: plan.fields.clone(), schema: schema.clone(), batch_rows: batch_rows.max(1) };
    Ok(Source {
        path,
        schema,
        batches: Box::new(batches),
        geometry: plan.geometry.clone(),
        describe,
        files_total: total,
        files_skipped: skipped,
        warnings: plan.warnings.clone(),
    })
}

/// Batches of every data file in turn, conformed to the table schema.
struct IcebergBatches {
    files: VecDeque<PathBuf>,
    current: Option<(PathBuf, ParquetRecordBatchReader, Vec<Option<usize>>)>,
    fields: Vec<(i32, String, Value, Value)>,
    schema: SchemaRef,
    batch_rows: usize,
}

impl IcebergBatches {
    fn next_file(&mut self) -> Result<bool> {
        let Some(p) = self.files.pop_front() else { return Ok(false) };
        let b = open_file(&p)?;
        let cols = match_columns(b.schema(), &self.fields);
        let roots: Vec<usize> = cols.iter().flatten().copied().collect();
        let mask = ProjectionMask::roots(b.parquet_schema(), roots.iter().copied());
        let mut sorted = roots.clone();
        sorted.sort_unstable();
        // Positions of the projected columns in the projected batches.
        let pos: Vec<Option<usize>> = cols.iter().map(|c| c.and_then(|i| sorted.iter().position(|&r| r == i))).collect();
        let r = b.with_batch_size(self.batch_rows).with_projection(mask).build().map_err(|e| pq_err(&p.display().to_string(), e))?;
        self.current = Some((p, r, pos));
        Ok(true)
    }

    fn conform(&self, p: &Path, b: &RecordBatch, pos: &[Option<usize>]) -> Result<RecordBatch> {
        let mut cols: Vec<ArrayRef> = Vec::with_capacity(pos.len());
        for (k, f) in self.schema.fields().iter().enumerate() {
            let a = match pos[k] {
                Some(i) => {
                    let a = b.column(i).clone();
                    if a.data_type() == f.data_type() {
                        a
                    } else {
                        // Iceberg type promotion (int → long, float → double, ...).
                        arrow_cast::cast(&a, f.data_type()).map_err(|e| err_at(&p.display().to_string(), format!("column {}: {e}", f.name())))?
                    }
                }
                None => arrow_array::new_null_array(f.data_type(), b.num_rows()),
            };
            cols.push(a);
        }
        let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(b.num_rows()));
        RecordBatch::try_new_with_options(self.schema.clone(), cols, &opts).map_err(|e| arrow_err(&p.display().to_string(), e))
    }
}

impl Iterator for IcebergBatches {
    type Item = Result<RecordBatch>;
    fn next(&mut self) -> Option<Result<RecordBatch>> {
        loop {
            if self.current.is_none() {
                match self.next_file() {
                    Ok(true) => {}
                    Ok(false) => return None,
                    Err(e) => return Some(Err(e)),
                }
            }
            let (p, r, pos) = self.current.as_mut()?;
            match r.next() {
                Some(Ok(b)) => {
                    let (p, pos) = (p.clone(), pos.clone());
                    return Some(self.conform(&p, &b, &pos));
                }
                Some(Err(e)) => return Some(Err(arrow_err(&p.display().to_string(), e))),
                None => self.current = None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_fields() {
        let props: serde_json::Map<String, Value> =
            serde_json::from_str(r#"{"crs.utm": "{\"type\":\"ProjectedCRS\",\"name\":\"x\"}"}"#).unwrap();
        let f = |j: &str| field_geometry(&serde_json::from_str(j).unwrap(), &props);
        let g = f(r#"{"id":1,"name":"g","type":"geometry"}"#).unwrap();
        assert_eq!((g.encoding, g.crs, g.edges), (Some(TextOrBinary::Wkb), Some(Value::String("OGC:CRS84".into())), None));
        let g = f(r#"{"id":1,"name":"g","type":"geography(EPSG:4326, karney)"}"#).unwrap();
        assert_eq!((g.crs, g.edges.as_deref()), (Some(Value::String("EPSG:4326".into())), Some("karney")));
        let g = f(r#"{"id":1,"name":"g","type":"geography"}"#).unwrap();
        assert_eq!(g.edges.as_deref(), Some("spherical"));
        let g = f(r#"{"id":1,"name":"g","type":"geometry(projjson:crs.utm)"}"#).unwrap();
        assert_eq!(g.crs.unwrap()["type"], "ProjectedCRS");
        let g = f(r#"{"id":1,"name":"g","type":"binary","havasu.geometry-encoding":"ewkb"}"#).unwrap();
        assert_eq!((g.encoding, g.crs), (Some(TextOrBinary::Ewkb), None));
        assert!(f(r#"{"id":1,"name":"g","type":"binary"}"#).is_none());
    }

    #[test]
    fn bounds() {
        // Havasu: WKB points; Iceberg v3: x:y little-endian doubles.
        let mut p = vec![1u8, 1, 0, 0, 0];
        p.extend_from_slice(&1.5f64.to_le_bytes());
        p.extend_from_slice(&(-2.0f64).to_le_bytes());
        assert_eq!(bound_xy(&p), Some((1.5, -2.0)));
        assert_eq!(bound_xy(&p[5..]), Some((1.5, -2.0)));
        assert_eq!(bound_xy(&[0u8; 7]), None);
    }

    #[test]
    fn moved_tables_are_re_rooted() {
        let d = std::env::temp_dir().join(format!("marquet-ice-{}", std::process::id()));
        let p = local_path("file:///old/wh/db/t/data/a.parquet", "file:///old/wh/db/t", &d);
        assert_eq!(p, d.join("data/a.parquet"));
        assert_eq!(local_path("/elsewhere/x.avro", "file:///old/wh/db/t", &d), PathBuf::from("/elsewhere/x.avro"));
    }
}
