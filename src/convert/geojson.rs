//! GeoJSON (RFC 7946) FeatureCollections in and out of Marquet tables.
//!
//! Import streams the features twice (a first pass infers each property's type and the
//! longest string; the second appends batches), so memory stays bounded by one batch.
//! Properties become columns: booleans → boolean, integers → int64, other numbers →
//! float64, strings → fixed-length UTF-8, anything mixed, nested or array-valued → its
//! JSON text. The feature `id` becomes a column `id`. Geometries become WKB (points of
//! one dimension → a point column). The CRS is OGC:CRS84 (RFC 7946 §4), or what a legacy
//! `crs` member states (super::geojson_crs); export reprojects to OGC:CRS84.

use std::io::{BufReader, BufWriter, Write};
use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::builder::BinaryBuilder;
use arrow_array::{Array, ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field};
use geojson::{Feature, FeatureReader};
use serde_json::Value;

use super::error::{code, err_at, Finding};
use super::hub::arrow::{ExportReport, Summary};
use super::hub::export::{ExportShape, ExportSource, TableSource};
use super::hub::import::{import, ImportOptions, ImportReport};
use super::hub::nested_json::ARROW_JSON;
use super::hub::source::{ArrowSource, Batches, GeoColumnMeta, GeoField, SourceSchema};
use super::hub::target::ImportTarget;
use super::hub::EXTENSION_NAME;
use crate::error::{MarquetError, Result};
use crate::h5col::File;
use crate::marquet::{MarquetTable, WkbBuffer};
use crate::wkb;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PType {
    Null,
    Bool,
    Int,
    Float,
    Str,
    Json,
}

fn join(a: PType, b: PType) -> PType {
    use PType::*;
    match (a, b) {
        (x, y) if x == y => x,
        (Null, x) | (x, Null) => x,
        (Int, Float) | (Float, Int) => Float,
        _ => Json,
    }
}

fn ptype(v: &Value) -> PType {
    match v {
        Value::Null => PType::Null,
        Value::Bool(_) => PType::Bool,
        Value::Number(n) if n.is_i64() => PType::Int,
        Value::Number(_) => PType::Float,
        Value::String(_) => PType::Str,
        _ => PType::Json,
    }
}

fn features(input: &Path) -> Result<impl Iterator<Item = Result<Feature>>> {
    let path = input.display().to_string();
    crate::error::check_regular_file(input)?; // a FIFO would block (issue #19)
    let f = std::fs::File::open(input).map_err(|e| MarquetError::Io { path: path.clone(), source: e })?;
    Ok(FeatureReader::from_reader(BufReader::new(f)).features().map(move |r| r.map_err(|e| err_at(&path, e))))
}

pub use super::hub::geojson_geometry::{from_geojson, to_geojson, to_geojson_json};

/// The rule a NaN ordinate breaks on GeoJSON export (issue #32, docs/FAULTS.md F6): JSON has
/// no NaN, serde_json would write `null`, and a position is an array of numbers.
pub const RULE_NAN_POSITION: &str = "RFC 7946 §3.1.1 (a position is an array of numbers; docs/FAULTS.md F6)";

/// The index of the first position [`to_geojson`] would write with a NaN X, Y or (when the
/// geometry has Z) Z, counted over the positions it writes; `None` when there is none. An
/// empty point (`POINT EMPTY`, alone or in a collection) is written as `[]` and is no
/// position; one that is a MultiPoint member has no GeoJSON spelling and counts. A NaN would
/// reach the output as `null` (serde_json), which RFC 7946 does not allow: [`FeatureWriter`]
/// refuses the row instead.
pub fn first_nan_position(g: &wkb::Geometry) -> Option<u64> {
    use wkb::{Coord, Geometry};
    fn walk(g: &Geometry, k: &mut u64) -> bool {
        let mut seq = |cs: &mut dyn Iterator<Item = &Coord>, z: bool| {
            for c in cs {
                if c.x.is_nan() || c.y.is_nan() || (z && c.z.is_nan()) {
                    return true;
                }
                *k += 1;
            }
            false
        };
        match g {
            Geometry::Point(p) if p.coord.is_empty() => false,
            Geometry::Point(p) => seq(&mut std::iter::once(&p.coord), p.dims.has_z()),
            Geometry::LineString(l) => seq(&mut l.coords.iter(), l.dims.has_z()),
            Geometry::Polygon(p) => seq(&mut p.rings.iter().flatten(), p.dims.has_z()),
            Geometry::MultiPoint(m) => seq(&mut m.points.iter().map(|p| &p.coord), m.dims.has_z()),
            Geometry::MultiLineString(m) => seq(&mut m.lines.iter().flat_map(|l| l.coords.iter()), m.dims.has_z()),
            Geometry::MultiPolygon(m) => seq(&mut m.polygons.iter().flat_map(|p| p.rings.iter().flatten()), m.dims.has_z()),
            Geometry::GeometryCollection(c) => c.geometries.iter().any(|g| walk(g, k)),
        }
    }
    let mut k = 0;
    walk(g, &mut k).then_some(k)
}

/// Import a GeoJSON FeatureCollection as a new Marquet table (geometry column `geometry`).
pub fn import_geojson(input: &Path, file: &File, opts: &ImportOptions) -> Result<ImportReport> {
    import_geojson_into(input, super::ImportTarget::New(file), opts)
}

/// [`import_geojson`] into a new table or appended to an existing one
/// ([`super::ImportTarget`]).
pub fn import_geojson_into(input: &Path, target: ImportTarget<'_>, opts: &ImportOptions) -> Result<ImportReport> {
    let mut src = GeoJsonSource::open(input, opts.layout.sort_memory)?;
    let mut report = import(&mut src, target, opts)?;
    if let (Some(n), None) = (&src.crs_note, &opts.crs) {
        report.findings.push(Finding::new(code::CRS_NOT_PROJJSON, Some("geometry"), n.clone()));
    }
    report.skipped.extend(src.skipped.iter().cloned());
    Ok(report)
}

/// A GeoJSON FeatureCollection as an Arrow source of the hub (issue #32). Opening reads the
/// features once to learn each property's type (and the feature id's): booleans →
/// `Boolean`, integers → `Int64`, other numbers → `Float64`, strings → `Utf8`, anything
/// mixed, nested or array-valued → its JSON text (`Utf8` with the `arrow.json` extension
/// type); properties that are null everywhere have no type and are skipped. Each pass of
/// the import reads the features again (memory: one batch). The geometry field is WKB in
/// the CRS of the legacy `crs` member, or OGC:CRS84 (RFC 7946 §4).
pub struct GeoJsonSource {
    input: std::path::PathBuf,
    described: SourceSchema,
    /// The property of each field after the geometry (`None`: the feature id).
    props: Vec<Option<String>>,
    crs_note: Option<String>,
    skipped: Vec<(String, String)>,
    /// Every row as record batches of the whole schema, when the file fit the budget.
    kept: Option<Vec<RecordBatch>>,
}

impl GeoJsonSource {
    /// Read `input` once to learn its properties' types. When the parsed features fit
    /// `budget` bytes (estimated as four times the file's size) they are kept, as record
    /// batches, for the import's passes; otherwise each pass parses the file again.
    pub fn open(input: &Path, budget: usize) -> Result<GeoJsonSource> {
        let path = input.display().to_string();
        let mut names: Vec<String> = Vec::new();
        let mut types: Vec<PType> = Vec::new();
        let mut id_type = PType::Null;
        let mut rows = 0u64;
        let size = std::fs::metadata(input).map(|m| m.len()).unwrap_or(u64::MAX);
        let mut keep: Option<Vec<Feature>> = (size.saturating_mul(4) <= budget as u64).then(Vec::new);
        for f in features(input)? {
            let f = f?;
            rows += 1;
            if let Some(id) = &f.id {
                id_type = join(
                    id_type,
                    match id {
                        geojson::feature::Id::String(_) => PType::Str,
                        geojson::feature::Id::Number(n) if n.is_i64() => PType::Int,
                        geojson::feature::Id::Number(_) => PType::Float,
                    },
                );
            }
            for (k, v) in f.properties_iter() {
                let i = match names.iter().position(|x| x == k) {
                    Some(i) => i,
                    None => {
                        names.push(k.clone());
                        types.push(PType::Null);
                        names.len() - 1
                    }
                };
                types[i] = join(types[i], ptype(v));
            }
            if let Some(k) = keep.as_mut() {
                k.push(f);
            }
        }
        // The legacy `crs` member, when there is one (issue #22, super::geojson_crs).
        let (crs, crs_note) = super::geojson_crs::geojson_crs(input)?;
        let mut fields = vec![Field::new("geometry", DataType::Binary, true)];
        let mut props = Vec::new();
        let mut skipped = Vec::new();
        let field = |name: &str, t: PType| -> Field {
            let f = Field::new(name, arrow_type(t), true);
            if t == PType::Json {
                f.with_metadata(std::collections::HashMap::from([(EXTENSION_NAME.to_string(), ARROW_JSON.to_string())]))
            } else {
                f
            }
        };
        if id_type != PType::Null {
            fields.push(field("id", id_type));
            props.push(None);
        }
        for (k, t) in names.iter().zip(&types) {
            if *t == PType::Null {
                skipped.push((k.clone(), "every value is null: no type to give the column".into()));
                continue;
            }
            fields.push(field(k, *t));
            props.push(Some(k.clone()));
        }
        let mut meta = GeoColumnMeta::wkb("geometry", crs);
        meta.crs_note = crs_note.clone();
        let described = SourceSchema {
            path,
            schema: Arc::new(arrow_schema::Schema::new(fields)),
            geometry: vec![GeoField { meta, source: "GeoJSON geometry".into(), crs_text: None }],
            rows: Some(rows),
            findings: Vec::new(),
            geoparquet_version: None,
            native_types: false,
        };
        let kept = match keep {
            Some(fs) => {
                let all: Vec<usize> = (0..described.schema.fields().len()).collect();
                let mut out = Vec::with_capacity(fs.len().div_ceil(crate::convert::DEFAULT_BATCH_ROWS));
                for chunk in fs.chunks(crate::convert::DEFAULT_BATCH_ROWS) {
                    out.push(batch_of(chunk, &all, &described.schema, &props, &described.path)?);
                }
                Some(out)
            }
            None => None,
        };
        Ok(GeoJsonSource { input: input.to_path_buf(), described, props, crs_note, skipped, kept })
    }
}

/// The fields `roots` of features `chunk` as a record batch of `schema` (the projected
/// schema); `props` names the property of each field after the geometry (`None`: the id).
fn batch_of(chunk: &[Feature], roots: &[usize], schema: &arrow_schema::SchemaRef, props: &[Option<String>], path: &str) -> Result<RecordBatch> {
    let mut cols: Vec<ArrayRef> = Vec::with_capacity(roots.len());
    for &c in roots {
        if c == 0 {
            let mut b = BinaryBuilder::new();
            for f in chunk {
                match &f.geometry {
                    Some(g) => b.append_value(wkb::encode(&from_geojson(&g.value), wkb::ByteOrder::LittleEndian)),
                    None => b.append_null(),
                }
            }
            cols.push(Arc::new(b.finish()));
            continue;
        }
        let vals: Vec<Value> = match &props[c - 1] {
            None => chunk
                .iter()
                .map(|f| match &f.id {
                    Some(geojson::feature::Id::String(s)) => Value::String(s.clone()),
                    Some(geojson::feature::Id::Number(n)) => Value::Number(n.clone()),
                    None => Value::Null,
                })
                .collect(),
            Some(name) => chunk.iter().map(|f| f.property(name).cloned().unwrap_or(Value::Null)).collect(),
        };
        cols.push(json_array(&vals, schema.field(cols.len()).data_type()));
    }
    RecordBatch::try_new(schema.clone(), cols).map_err(|e| MarquetError::Arrow { path: path.to_string(), source: e })
}

/// The Arrow type of a property type.
fn arrow_type(t: PType) -> DataType {
    match t {
        PType::Bool => DataType::Boolean,
        PType::Int => DataType::Int64,
        PType::Float => DataType::Float64,
        PType::Null | PType::Str | PType::Json => DataType::Utf8,
    }
}

impl ArrowSource for GeoJsonSource {
    fn describe(&self) -> &SourceSchema {
        &self.described
    }

    fn batches(&mut self, roots: &[usize], batch_rows: usize) -> Result<Batches<'_>> {
        let path = self.described.path.clone();
        if let Some(kept) = &self.kept {
            let roots = roots.to_vec();
            return Ok(Box::new(kept.iter().map(move |b| b.project(&roots).map_err(|e| MarquetError::Arrow { path: path.clone(), source: e }))));
        }
        let schema = Arc::new(self.described.schema.project(roots).map_err(|e| MarquetError::Arrow { path: path.clone(), source: e })?);
        let roots = roots.to_vec();
        let props = &self.props;
        let mut it = features(&self.input)?.fuse();
        Ok(Box::new(std::iter::from_fn(move || {
            let mut chunk: Vec<Feature> = Vec::with_capacity(batch_rows.clamp(1, 65_536));
            for f in it.by_ref() {
                match f {
                    Ok(f) => chunk.push(f),
                    Err(e) => return Some(Err(e)),
                }
                if chunk.len() >= batch_rows.max(1) {
                    break;
                }
            }
            if chunk.is_empty() {
                return None;
            }
            Some(batch_of(&chunk, &roots, &schema, props, &path))
        })))
    }
}

fn json_array(vals: &[Value], t: &DataType) -> ArrayRef {
    match t {
        DataType::Boolean => Arc::new(BooleanArray::from(vals.iter().map(|v| v.as_bool()).collect::<Vec<_>>())),
        DataType::Int64 => Arc::new(Int64Array::from(vals.iter().map(|v| v.as_i64()).collect::<Vec<_>>())),
        DataType::Float64 => Arc::new(Float64Array::from(vals.iter().map(|v| v.as_f64()).collect::<Vec<_>>())),
        _ => Arc::new(StringArray::from(
            vals.iter()
                .map(|v| match v {
                    Value::Null => None,
                    Value::String(s) => Some(s.clone()),
                    o => Some(o.to_string()),
                })
                .collect::<Vec<_>>(),
        )),
    }
}

fn cell(a: &ArrayRef, i: usize) -> Value {
    if a.is_null(i) {
        return Value::Null;
    }
    let num = |f: f64| serde_json::Number::from_f64(f).map(Value::Number).unwrap_or(Value::Null);
    match a.data_type() {
        DataType::Boolean => Value::Bool(a.as_boolean().value(i)),
        DataType::Int8 => a.as_primitive::<Int8Type>().value(i).into(),
        DataType::Int16 => a.as_primitive::<Int16Type>().value(i).into(),
        DataType::Int32 => a.as_primitive::<Int32Type>().value(i).into(),
        DataType::Int64 => a.as_primitive::<Int64Type>().value(i).into(),
        DataType::UInt8 => a.as_primitive::<UInt8Type>().value(i).into(),
        DataType::UInt16 => a.as_primitive::<UInt16Type>().value(i).into(),
        DataType::UInt32 => a.as_primitive::<UInt32Type>().value(i).into(),
        DataType::UInt64 => a.as_primitive::<UInt64Type>().value(i).into(),
        DataType::Float32 => num(a.as_primitive::<Float32Type>().value(i) as f64),
        DataType::Float64 => num(a.as_primitive::<Float64Type>().value(i)),
        DataType::Utf8 => Value::String(a.as_string::<i32>().value(i).to_string()),
        DataType::Binary => Value::String(a.as_binary::<i32>().value(i).iter().map(|b| format!("{b:02x}")).collect()),
        // ISO 8601 text (RFC 7946 leaves property values to the producer; text is what
        // GeoJSON readers parse as dates), e.g. 2024-05-01T12:00:00Z or 2024-05-01.
        // A named zone such as "UTC" needs chrono-tz to display (not built): UTC instants are
        // shown with the offset +00:00, which is the same instant.
        DataType::Timestamp(u, Some(tz)) if tz.as_ref() != "+00:00" => match arrow_cast::cast(a, &DataType::Timestamp(*u, Some("+00:00".into()))) {
            Ok(b) if matches!(tz.as_ref(), "UTC" | "utc" | "Etc/UTC" | "Z") => cell(&b, i),
            _ => arrow_cast::display::ArrayFormatter::try_new(a.as_ref(), &arrow_cast::display::FormatOptions::default())
                .map(|f| Value::String(f.value(i).to_string()))
                .unwrap_or(Value::Null),
        },
        DataType::Timestamp(_, _) | DataType::Date32 => arrow_cast::display::ArrayFormatter::try_new(a.as_ref(), &arrow_cast::display::FormatOptions::default())
            .map(|f| Value::String(f.value(i).to_string()))
            .unwrap_or(Value::Null),
        DataType::List(_) => {
            let l = a.as_list::<i32>();
            let v = l.value(i);
            Value::Array((0..v.len()).map(|j| cell(&v, j)).collect())
        }
        DataType::Dictionary(_, _) => {
            let d = a.as_any_dictionary();
            cell(d.values(), d.normalized_keys()[i])
        }
        _ => Value::Null,
    }
}

/// The GeoJSON writer (RFC 7946): features from record batches in the hub's form
/// ([`crate::convert::hub::export`]) — the one GeoJSON rendering of `marquet convert`,
/// `marquet dump` and `marquet query --format geojson`. The primary geometry column is the
/// feature geometry; every other column is a property (other geometry columns as WKT text;
/// covering columns are not in the batches), rendered by its Arrow type: booleans as JSON
/// booleans, numbers as numbers, timestamps and dates as ISO 8601 text, lists as arrays.
pub struct GeoJsonWriter {
    /// The primary geometry field.
    primary: usize,
    pinfo: crate::marquet::GeometryColumnInfo,
    /// Property fields: (field, name, a geometry column written as WKT).
    props: Vec<(usize, String, bool)>,
    summary: Summary,
    first: bool,
    rows: u64,
    /// The reprojection to OGC:CRS84 of a column in another CRS.
    to_crs84: Option<crate::crs::Transformer>,
    /// What the export left out or changed (notes, skipped columns).
    pub report: ExportReport,
}

impl GeoJsonWriter {
    /// Plan the features of batches of `schema` whose geometry fields are `geometry`
    /// (primary first); `source` names the source in messages.
    pub fn new(source: &str, schema: &arrow_schema::Schema, geometry: &[crate::marquet::GeometryColumnInfo]) -> Result<GeoJsonWriter> {
        let Some(pinfo) = geometry.first().cloned() else {
            return Err(MarquetError::InvalidArgument(format!("{source}: no geometry column to write as GeoJSON")));
        };
        let mut report = ExportReport::default();
        // RFC 7946 fixes GeoJSON to OGC:CRS84: other coordinates are reprojected, or the
        // output refused; never written mislabelled (issue #22, super::geojson_crs).
        let to_crs84 = super::geojson_crs::to_crs84(&pinfo.crs, &pinfo.path)?;
        if to_crs84.is_some() {
            report.notes.push(format!("coordinates reprojected from {} to OGC:CRS84 (RFC 7946)", pinfo.crs.display_name()));
        }
        let mut primary = None;
        let mut props = Vec::new();
        for (i, f) in schema.fields().iter().enumerate() {
            if *f.name() == pinfo.name {
                primary = Some(i);
            } else if geometry.iter().any(|g| g.name == *f.name()) {
                report.notes.push(format!("geometry column {} written as WKT text properties", f.name()));
                props.push((i, f.name().clone(), true));
            } else {
                props.push((i, f.name().clone(), false));
            }
        }
        let primary = primary.ok_or_else(|| MarquetError::InvalidArgument(format!("{source}: geometry column {} is not in the batches", pinfo.name)))?;
        Ok(GeoJsonWriter { primary, pinfo, props, summary: Summary::new(), first: true, rows: 0, to_crs84, report })
    }

    /// The opening of the FeatureCollection.
    pub fn begin(&mut self, w: &mut dyn Write) -> std::io::Result<()> {
        w.write_all(b"{\"type\":\"FeatureCollection\",\"features\":[\n")
    }

    /// The closing of the FeatureCollection; the report of what was written.
    pub fn end(mut self, w: &mut dyn Write) -> std::io::Result<ExportReport> {
        w.write_all(b"\n]}\n")?;
        self.report.rows = self.rows;
        self.report.geometry_columns.push((self.pinfo.name.clone(), self.summary.sorted_types()));
        Ok(self.report)
    }

    /// The features of batch `b`, whose row `i` is row `row_of(i)` of the source (for
    /// messages).
    pub fn write_batch(&mut self, w: &mut dyn Write, b: &RecordBatch, row_of: &dyn Fn(usize) -> u64) -> Result<()> {
        let io = |er: std::io::Error| MarquetError::Io { path: "<geojson output>".into(), source: er };
        let geoms = b.column(self.primary).as_binary_opt::<i32>().ok_or_else(|| {
            MarquetError::InvalidArgument(format!("{}: the geometry field is {}, not WKB binary", self.pinfo.path, b.column(self.primary).data_type()))
        })?;
        for i in 0..b.num_rows() {
            let row = row_of(i);
            let geometry = match (!geoms.is_null(i)).then(|| geoms.value(i)) {
                Some(wb) => {
                    self.summary.add(wb, &self.pinfo.path, row)?;
                    let mut g = wkb::decode(wb).map_err(|er| er.into_marquet(self.pinfo.path.clone(), Some(row)))?;
                    if let Some(k) = first_nan_position(&g) {
                        return Err(MarquetError::Refused {
                            path: self.pinfo.path.clone(),
                            row: Some(row),
                            rule: RULE_NAN_POSITION,
                            message: format!("position {k} has a NaN ordinate, which GeoJSON cannot hold; GeoParquet, FlatGeobuf and GeoPackage keep it"),
                        });
                    }
                    if let Some(tr) = &self.to_crs84 {
                        tr.transform_geometry(&mut g).map_err(|er| MarquetError::InvalidArgument(format!("{}: row {row}: {er}", self.pinfo.path)))?;
                    }
                    Some(geojson::Geometry::new(to_geojson(&g)))
                }
                None => None,
            };
            let mut p = serde_json::Map::new();
            for (k, name, wkt) in &self.props {
                let a = b.column(*k);
                let v = match (wkt, a.as_binary_opt::<i32>()) {
                    (true, Some(g)) => (!g.is_null(i)).then(|| wkb::to_wkt(g.value(i)).ok()).flatten().map(Value::String).unwrap_or(Value::Null),
                    _ => cell(a, i),
                };
                p.insert(name.clone(), v);
            }
            let feat = Feature { geometry, properties: Some(p), ..Default::default() };
            if !self.first {
                w.write_all(b",\n").map_err(io)?;
            }
            self.first = false;
            serde_json::to_writer(&mut *w, &feat).map_err(|er| MarquetError::Io { path: "<geojson output>".into(), source: er.into() })?;
            self.rows += 1;
        }
        Ok(())
    }
}

/// Writes rows of a Marquet table as GeoJSON features with a `GeoJsonWriter`: whole row
/// ranges or chosen rows (a query's answer, `marquet dump`). Rows are read in ranges, so
/// memory stays bounded by one range.
pub struct FeatureWriter<'a> {
    src: TableSource<'a>,
    inner: GeoJsonWriter,
}

impl<'a> FeatureWriter<'a> {
    /// Plan the properties of `t`'s features.
    pub fn new(t: &'a MarquetTable) -> Result<FeatureWriter<'a>> {
        let src = TableSource::for_export(t, shape())?;
        let mut inner = GeoJsonWriter::new(t.path(), &src.schema(), src.geometry_columns())?;
        inner.report.notes.extend(src.notes().iter().cloned());
        inner.report.skipped.extend(src.skipped().iter().cloned());
        Ok(FeatureWriter { src, inner })
    }

    /// What the export left out or changed so far.
    pub fn report(&self) -> &ExportReport {
        &self.inner.report
    }

    /// The opening of the FeatureCollection.
    pub fn begin(&mut self, w: &mut dyn Write) -> std::io::Result<()> {
        self.inner.begin(w)
    }

    /// The closing of the FeatureCollection; the report of what was written.
    pub fn end(self, w: &mut dyn Write) -> std::io::Result<ExportReport> {
        self.inner.end(w)
    }

    /// The features of rows `[start, end)`.
    pub fn write_range(&mut self, w: &mut dyn Write, start: u64, end: u64) -> Result<()> {
        let b = self.src.range(start, end)?;
        self.inner.write_batch(w, &b, &|i| start + i as u64)
    }

    /// The features of `rows` (strictly ascending, each below NROWS; e.g. a query's
    /// answer), one read per span of nearby rows.
    pub fn write_rows(&mut self, w: &mut dyn Write, rows: &[u64]) -> Result<()> {
        self.write_rows_given(w, rows, None)
    }

    /// [`FeatureWriter::write_rows`] with the WKB values of geometry column `given.0`
    /// already in hand — `given.1.get(given.2 + i)` is `rows[i]`'s, e.g. a query's answer
    /// ([`crate::query::CombinedResult::wkb`]) —: that column is not read again.
    pub fn write_rows_given(&mut self, w: &mut dyn Write, rows: &[u64], given: Option<(&str, &WkbBuffer, usize)>) -> Result<()> {
        let mut done = 0usize;
        for b in self.src.take_given(rows, super::DEFAULT_BATCH_ROWS, given)? {
            let first = done;
            self.inner.write_batch(w, &b, &|i| rows[first + i])?;
            done += b.num_rows();
        }
        Ok(())
    }
}

/// The columns as the GeoJSON writer wants them: plain WKB fields, flat columns, no
/// covering columns.
pub fn shape() -> ExportShape {
    ExportShape { geoarrow: false, renest: false, coverings: false }
}

/// Write the batches of `src` (the hub's form, in `shape`) as a GeoJSON
/// FeatureCollection at `output` with a `GeoJsonWriter`.
pub fn write_geojson(src: &mut dyn ExportSource, output: &Path) -> Result<ExportReport> {
    let out_path = output.display().to_string();
    let mut gw = GeoJsonWriter::new(src.path(), &src.schema(), src.geometry_columns())?;
    gw.report.notes.extend(src.notes().iter().cloned());
    gw.report.skipped.extend(src.skipped().iter().cloned());
    let f = std::fs::File::create(output).map_err(|e| MarquetError::Io { path: out_path.clone(), source: e })?;
    let mut w = BufWriter::new(f);
    let io = |e: std::io::Error| MarquetError::Io { path: out_path.clone(), source: e };
    gw.begin(&mut w).map_err(io)?;
    let mut s = 0u64;
    for b in src.batches(super::DEFAULT_BATCH_ROWS)? {
        let b = b?;
        gw.write_batch(&mut w, &b, &|i| s + i as u64).map_err(|er| match er {
            MarquetError::Io { source, .. } => io(source),
            other => other,
        })?;
        s += b.num_rows() as u64;
    }
    let report = gw.end(&mut w).map_err(io)?;
    w.flush().map_err(io)?;
    Ok(report)
}

/// Export a Marquet table as a GeoJSON FeatureCollection ([`write_geojson`]).
pub fn export_geojson(file: &File, table: &str, output: &Path) -> Result<ExportReport> {
    let t = MarquetTable::open(file, table)?;
    write_geojson(&mut TableSource::for_export(&t, shape())?, output)
}
