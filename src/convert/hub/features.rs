//! FlatGeobuf, GeoPackage and Shapefile in and out of Marquet tables (issue #22, cargo
//! feature `gis`): what the three formats share.
//!
//! Each format reads into a [`FeatureSource`] (a declared attribute schema, the CRS the
//! file states, then one feature at a time) and writes from a [`FeatureSink`]. Import
//! turns the features into Arrow record batches of [`crate::convert::DEFAULT_BATCH_ROWS`]
//! rows, an [`super::source::ArrowSource`] of the hub ([`import_features`]): the same column
//! mapping, Hilbert order, indexes and covering columns as every other import, no
//! temporary file (the batches are kept in memory between the import's passes while they
//! fit its budget; the file is read again otherwise).
//! Export writes the record batches of an [`ExportSource`] ([`write_features`]; a table's
//! row blocks, [`TableSource`]), so memory is bounded by one block on both sides.
//!
//! Attribute types are the formats' common ground: 64-bit integers, doubles, booleans,
//! UTF-8 text and bytes ([`Kind`]). Dates and times are carried as ISO 8601 text. Columns a
//! format cannot hold (other geometry columns, lists, structs) are skipped and reported,
//! never silently dropped. The CRS is resolved to PROJJSON on import ([`crate::crs`]) and
//! written as the format's WKT / authority code on export.

use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, BooleanBuilder, Float64Builder, Int64Builder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use super::arrow::ExportReport;
use super::export::{ExportShape, ExportSource, TableSource};
use super::import::{import, ImportOptions, ImportReport};
use super::source::{Batches, Cached, GeoColumnMeta, GeoField, Reopen, SourceSchema};
use super::target::ImportTarget;
use crate::convert::{code, Finding, DEFAULT_BATCH_ROWS};
use crate::error::{MarquetError, Result};
use crate::h5col::File;
use crate::marquet::{Crs, MarquetTable};
use crate::spec::GeometryType;

/// An attribute type every GIS format here can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// 64-bit signed integer.
    Int,
    /// 64-bit float.
    Float,
    /// Boolean.
    Bool,
    /// UTF-8 text (also dates and timestamps, as ISO 8601).
    Str,
    /// Raw bytes.
    Bytes,
}

/// One attribute value.
#[derive(Debug, Clone, PartialEq)]
pub enum V {
    /// Missing.
    Null,
    /// An integer.
    I(i64),
    /// A float.
    F(f64),
    /// A boolean.
    B(bool),
    /// Text.
    S(String),
    /// Bytes.
    Bytes(Vec<u8>),
}

/// What a GIS file declares before its features.
#[derive(Debug, Clone)]
pub struct SourceInfo {
    /// Attribute columns in file order.
    pub fields: Vec<(String, Kind)>,
    /// The CRS the file states (resolved), [`Crs::Unknown`] when none or unresolvable.
    pub crs: Crs,
    /// Why the stated CRS could not be resolved (the text is kept here).
    pub crs_note: Option<String>,
}

/// One feature: its ISO WKB geometry (`None` = null) and one value per field.
pub type Feature = (Option<Vec<u8>>, Vec<V>);

/// A reader of features.
pub trait FeatureSource {
    /// The next feature, `None` at the end.
    fn next_feature(&mut self) -> Result<Option<Feature>>;
}

/// A writer of features.
pub trait FeatureSink {
    /// Write one feature: ISO WKB (or None) and one value per field given to the sink's
    /// constructor.
    fn write(&mut self, geometry: Option<&[u8]>, values: &[V]) -> Result<()>;
    /// Called after each pass over the features: `true` asks for all of them again, in the
    /// same order, and must be answered at most once (a sink that places each feature by what it learnt in the first pass,
    /// without keeping them: FlatGeobuf over its memory budget).
    fn second_pass(&mut self) -> Result<bool> {
        Ok(false)
    }
    /// Complete the file.
    fn finish(self: Box<Self>) -> Result<()>;
}

/// What an export hands to a format's sink constructor.
#[derive(Debug, Clone)]
pub struct SinkInfo {
    /// Attribute columns, in order.
    pub fields: Vec<(String, Kind)>,
    /// The CRS of the geometry column.
    pub crs: Crs,
    /// GEOMETRY_TYPES of the exported column (may be empty: unknown).
    pub types: Vec<GeometryType>,
    /// Rows that will be written.
    pub rows: u64,
}

/// The Arrow type of a [`Kind`].
fn arrow_type(k: Kind) -> DataType {
    match k {
        Kind::Int => DataType::Int64,
        Kind::Float => DataType::Float64,
        Kind::Bool => DataType::Boolean,
        Kind::Str => DataType::Utf8,
        Kind::Bytes => DataType::Binary,
    }
}

/// Import the features of a GIS file (`first`, opened by `reopen` again when the import
/// reads it a second time and the batches did not fit the memory budget) into `target`;
/// `format` names the format in the report.
pub fn import_features<'a, S: FeatureSource + 'a>(
    input: &Path,
    format: &str,
    target: ImportTarget<'_>,
    info: SourceInfo,
    first: S,
    mut reopen: impl FnMut() -> Result<S> + 'a,
    opts: &ImportOptions,
) -> Result<ImportReport> {
    let path = input.display().to_string();
    let geom_name = {
        let mut g = "geometry".to_string();
        while info.fields.iter().any(|(n, _)| *n == g) {
            g.push('_');
        }
        g
    };
    let mut fields = vec![Field::new(&geom_name, DataType::Binary, true)];
    fields.extend(info.fields.iter().map(|(n, k)| Field::new(n, arrow_type(*k), true)));
    let schema: SchemaRef = Arc::new(Schema::new(fields));
    let kinds: Vec<Kind> = info.fields.iter().map(|(_, k)| *k).collect();
    let batch_rows = opts.batch_rows.clamp(1, DEFAULT_BATCH_ROWS);
    let mut meta = GeoColumnMeta::wkb(&geom_name, info.crs.clone());
    meta.crs_note = info.crs_note.clone();
    let described = SourceSchema {
        path: path.clone(),
        schema: schema.clone(),
        geometry: vec![GeoField { meta, source: format!("{format} geometry"), crs_text: None }],
        rows: None,
        findings: Vec::new(),
        geoparquet_version: None,
        native_types: false,
    };
    let (s2, k2, p2) = (schema.clone(), kinds.clone(), path.clone());
    let again: Reopen<'a> = Box::new(move || Ok(feature_batches(reopen()?, k2.clone(), s2.clone(), batch_rows, p2.clone())));
    let mut src = Cached::new(described, feature_batches(first, kinds, schema, batch_rows, path), Some(again), opts.layout.sort_memory);
    let mut report = import(&mut src, target, opts)?;
    if let (Some(n), None) = (&info.crs_note, &opts.crs) {
        report.findings.push(Finding::new(code::CRS_NOT_PROJJSON, Some(&geom_name), n.clone()));
    }
    Ok(report)
}

/// The features of `src` as record batches of `batch_rows` rows.
fn feature_batches<'a, S: FeatureSource + 'a>(mut src: S, kinds: Vec<Kind>, schema: SchemaRef, batch_rows: usize, path: String) -> Batches<'a> {
    let mut done = false;
    Box::new(std::iter::from_fn(move || {
        if done {
            return None;
        }
        let r = (|| -> Result<Option<RecordBatch>> {
            let mut g = BinaryBuilder::new();
            let mut cols: Vec<Col> = kinds.iter().map(|k| Col::new(*k)).collect();
            let mut n = 0;
            while n < batch_rows {
                let Some((geom, vals)) = src.next_feature()? else { break };
                if vals.len() != cols.len() {
                    return Err(MarquetError::InvalidArgument(format!("{path}: feature {n} has {} values for {} fields", vals.len(), cols.len())));
                }
                g.append_option(geom);
                for (c, v) in cols.iter_mut().zip(vals) {
                    c.push(v);
                }
                n += 1;
            }
            if n == 0 {
                return Ok(None);
            }
            let mut arrays: Vec<ArrayRef> = vec![Arc::new(g.finish())];
            arrays.extend(cols.into_iter().map(Col::finish));
            RecordBatch::try_new(schema.clone(), arrays).map(Some).map_err(|e| MarquetError::Arrow { path: path.clone(), source: e })
        })();
        match r {
            Ok(Some(b)) => Some(Ok(b)),
            Ok(None) => {
                done = true;
                None
            }
            Err(e) => {
                done = true;
                Some(Err(e))
            }
        }
    }))
}

/// An Arrow column being built.
enum Col {
    I(Int64Builder),
    F(Float64Builder),
    B(BooleanBuilder),
    S(StringBuilder),
    Y(BinaryBuilder),
}

impl Col {
    fn new(k: Kind) -> Col {
        match k {
            Kind::Int => Col::I(Int64Builder::new()),
            Kind::Float => Col::F(Float64Builder::new()),
            Kind::Bool => Col::B(BooleanBuilder::new()),
            Kind::Str => Col::S(StringBuilder::new()),
            Kind::Bytes => Col::Y(BinaryBuilder::new()),
        }
    }
    /// Append `v`, converted to the column's kind where that is exact; otherwise null
    /// (a reader declares the kinds from the file's schema, so mismatches are rare:
    /// SQLite's dynamic typing).
    fn push(&mut self, v: V) {
        match (self, v) {
            (Col::I(b), V::I(x)) => b.append_value(x),
            (Col::I(b), V::F(x)) if x.fract() == 0.0 && x.abs() < 9.007_199_254_740_992e15 => b.append_value(x as i64),
            (Col::I(b), V::B(x)) => b.append_value(x as i64),
            (Col::I(b), _) => b.append_null(),
            (Col::F(b), V::F(x)) => b.append_value(x),
            (Col::F(b), V::I(x)) => b.append_value(x as f64),
            (Col::F(b), _) => b.append_null(),
            (Col::B(b), V::B(x)) => b.append_value(x),
            (Col::B(b), V::I(x)) => b.append_value(x != 0),
            (Col::B(b), _) => b.append_null(),
            (Col::S(b), V::S(x)) => b.append_value(x),
            (Col::S(b), V::I(x)) => b.append_value(x.to_string()),
            (Col::S(b), V::F(x)) => b.append_value(x.to_string()),
            (Col::S(b), V::B(x)) => b.append_value(x.to_string()),
            (Col::S(b), _) => b.append_null(),
            (Col::Y(b), V::Bytes(x)) => b.append_value(x),
            (Col::Y(b), V::S(x)) => b.append_value(x.as_bytes()),
            (Col::Y(b), _) => b.append_null(),
        }
    }
    fn finish(self) -> ArrayRef {
        match self {
            Col::I(mut b) => Arc::new(b.finish()),
            Col::F(mut b) => Arc::new(b.finish()),
            Col::B(mut b) => Arc::new(b.finish()),
            Col::S(mut b) => Arc::new(b.finish()),
            Col::Y(mut b) => Arc::new(b.finish()),
        }
    }
}

/// The [`Kind`] an Arrow column is written as, or why it cannot be.
fn kind_of(dt: &DataType) -> std::result::Result<Kind, String> {
    Ok(match dt {
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => Kind::Int,
        DataType::UInt8 | DataType::UInt16 | DataType::UInt32 => Kind::Int,
        DataType::UInt64 => Kind::Float,
        DataType::Float16 | DataType::Float32 | DataType::Float64 => Kind::Float,
        DataType::Boolean => Kind::Bool,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Kind::Str,
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView | DataType::FixedSizeBinary(_) => Kind::Bytes,
        DataType::Timestamp(_, _) | DataType::Date32 | DataType::Date64 | DataType::Dictionary(_, _) => Kind::Str,
        other => return Err(format!("{other} has no counterpart in this format")),
    })
}

/// Row `i` of Arrow array `a` as a [`V`] (of the [`Kind`] [`kind_of`] gives its type).
fn value(a: &ArrayRef, i: usize) -> V {
    if a.is_null(i) {
        return V::Null;
    }
    match a.data_type() {
        DataType::Int8 => V::I(a.as_primitive::<Int8Type>().value(i) as i64),
        DataType::Int16 => V::I(a.as_primitive::<Int16Type>().value(i) as i64),
        DataType::Int32 => V::I(a.as_primitive::<Int32Type>().value(i) as i64),
        DataType::Int64 => V::I(a.as_primitive::<Int64Type>().value(i)),
        DataType::UInt8 => V::I(a.as_primitive::<UInt8Type>().value(i) as i64),
        DataType::UInt16 => V::I(a.as_primitive::<UInt16Type>().value(i) as i64),
        DataType::UInt32 => V::I(a.as_primitive::<UInt32Type>().value(i) as i64),
        DataType::UInt64 => V::F(a.as_primitive::<UInt64Type>().value(i) as f64),
        DataType::Float16 => V::F(a.as_primitive::<Float16Type>().value(i).to_f64()),
        DataType::Float32 => V::F(a.as_primitive::<Float32Type>().value(i) as f64),
        DataType::Float64 => V::F(a.as_primitive::<Float64Type>().value(i)),
        DataType::Boolean => V::B(a.as_boolean().value(i)),
        DataType::Utf8 => V::S(a.as_string::<i32>().value(i).to_string()),
        DataType::LargeUtf8 => V::S(a.as_string::<i64>().value(i).to_string()),
        DataType::Utf8View => V::S(a.as_string_view().value(i).to_string()),
        DataType::Binary => V::Bytes(a.as_binary::<i32>().value(i).to_vec()),
        DataType::LargeBinary => V::Bytes(a.as_binary::<i64>().value(i).to_vec()),
        DataType::BinaryView => V::Bytes(a.as_binary_view().value(i).to_vec()),
        DataType::FixedSizeBinary(_) => V::Bytes(a.as_fixed_size_binary().value(i).to_vec()),
        DataType::Date32 => V::S(
            arrow_array::temporal_conversions::as_date::<Date32Type>(a.as_primitive::<Date32Type>().value(i) as i64)
                .map(|d| d.to_string())
                .unwrap_or_default(),
        ),
        DataType::Timestamp(u, _) => {
            let v = match u {
                arrow_schema::TimeUnit::Second => a.as_primitive::<TimestampSecondType>().value(i).saturating_mul(1_000_000),
                arrow_schema::TimeUnit::Millisecond => a.as_primitive::<TimestampMillisecondType>().value(i).saturating_mul(1000),
                arrow_schema::TimeUnit::Microsecond => a.as_primitive::<TimestampMicrosecondType>().value(i),
                arrow_schema::TimeUnit::Nanosecond => a.as_primitive::<TimestampNanosecondType>().value(i) / 1000,
            };
            match arrow_array::temporal_conversions::timestamp_us_to_datetime(v) {
                Some(d) => V::S(d.format("%Y-%m-%dT%H:%M:%S%.fZ").to_string()),
                None => V::Null,
            }
        }
        DataType::Dictionary(_, _) => {
            let d = a.as_any_dictionary();
            let key = d.normalized_keys()[i];
            value(d.values(), key)
        }
        _ => V::Null,
    }
}

/// Export table `table` to a GIS format named `format` ([`write_features`]).
pub fn export_features(
    format: &str,
    file: &File,
    table: &str,
    create: impl FnOnce(&SinkInfo, &mut ExportReport) -> Result<Box<dyn FeatureSink>>,
) -> Result<ExportReport> {
    let t = MarquetTable::open(file, table)?;
    write_features(format, &mut TableSource::for_export(&t, shape())?, create)
}

/// The columns as the GIS writers want them: plain WKB fields, flat columns, no covering
/// columns.
pub fn shape() -> ExportShape {
    ExportShape { geoarrow: false, renest: false, coverings: false }
}

/// The GIS writers' common half: the batches of `src` (the hub's form, in [`shape`]) as
/// features of the sink `create` makes for format `format`. The primary geometry column is
/// the feature geometry; ordinary columns of a [`Kind`] become attributes; other columns
/// are skipped and reported.
pub fn write_features(
    format: &str,
    src: &mut dyn ExportSource,
    create: impl FnOnce(&SinkInfo, &mut ExportReport) -> Result<Box<dyn FeatureSink>>,
) -> Result<ExportReport> {
    let mut report = ExportReport::default();
    report.notes.extend(src.notes().iter().cloned());
    report.skipped.extend(src.skipped().iter().cloned());
    let geometry = src.geometry_columns().to_vec();
    let Some(g) = geometry.first().cloned() else {
        return Err(MarquetError::InvalidArgument(format!("{}: no geometry column to write as {format}", src.path())));
    };
    let schema = src.schema();
    let mut cols: Vec<(usize, String, Kind)> = Vec::new();
    let mut gi = None;
    for (i, f) in schema.fields().iter().enumerate() {
        if *f.name() == g.name {
            gi = Some(i);
            continue;
        }
        if geometry.iter().any(|c| c.name == *f.name()) {
            report.skipped.push((f.name().clone(), format!("a second geometry column: {format} holds one per feature")));
            continue;
        }
        match kind_of(f.data_type()) {
            Ok(k) => cols.push((i, f.name().clone(), k)),
            Err(why) => report.skipped.push((f.name().clone(), why)),
        }
    }
    let gi = gi.ok_or_else(|| MarquetError::InvalidArgument(format!("{}: geometry column {} not read", src.path(), g.name)))?;
    let n = src.rows();
    let info = SinkInfo { fields: cols.iter().map(|(_, n, k)| (n.clone(), *k)).collect(), crs: g.crs.clone(), types: g.types.clone().unwrap_or_default(), rows: n };
    let mut sink = create(&info, &mut report)?;
    let mut vals: Vec<V> = Vec::with_capacity(cols.len());
    let mut s;
    loop {
        s = 0u64;
        for b in src.batches(DEFAULT_BATCH_ROWS)? {
            let b = b?;
            let ga = b.column(gi).as_binary_opt::<i32>().ok_or_else(|| MarquetError::InvalidArgument(format!("{}: the geometry field is not WKB binary", g.path)))?;
            for r in 0..b.num_rows() {
                vals.clear();
                for (ci, _, _) in &cols {
                    vals.push(value(b.column(*ci), r));
                }
                let w = (!ga.is_null(r)).then(|| ga.value(r));
                sink.write(w, &vals).map_err(|e| match e {
                    MarquetError::InvalidArgument(m) => MarquetError::InvalidArgument(format!("{}: row {}: {m}", g.path, s + r as u64)),
                    e => e,
                })?;
            }
            s += b.num_rows() as u64;
        }
        // The sink may ask for every feature again, once (ExportSource::batches may be
        // called twice).
        if !sink.second_pass()? {
            break;
        }
    }
    sink.finish()?;
    report.rows = s;
    report.geometry_columns.push((g.name.clone(), g.types.clone().unwrap_or_default()));
    Ok(report)
}
