//! Marquet tables as in-memory Arrow record batches, and Arrow record batches into Marquet
//! tables — for bindings that hand tables around as Arrow (the Python package in
//! `python/`, through the Arrow C stream interface).
//!
//! - [`ArrowPlan`]: the Arrow schema of a Marquet table (the mapping of
//!   `docs/geoparquet-mapping.md` that [`crate::convert::export_geoparquet`] writes, which uses this
//!   plan too) and record batches of a row range or of chosen rows. Geometry columns are
//!   `Binary` WKB fields; with [`ArrowPlan::new`]'s `geoarrow` flag they carry the GeoArrow
//!   `geoarrow.wkb` extension type with the CRS (PROJJSON) and edges in its metadata.
//! - [`import_record_batches`]: record batches → a new Marquet table in the default layout
//!   (or appended, [`import_record_batches_into`]); the fields' GeoArrow extension metadata
//!   describes the geometry columns ([`describe_schema`]) and the hub's import does the rest
//!   ([`super::import::import`]): one column mapping, one layout policy for every writer.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use arrow_array::{ArrayRef, BinaryArray, RecordBatch, UInt32Array};
use arrow_buffer::{Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use super::import::{import, ImportOptions, ImportReport};
use super::meta;
use super::plan::{self, OutPlan};
use super::source::{Batches, Cached, Encoding, GeoField, SourceSchema};
use super::target::ImportTarget;
use crate::convert::err_at;
use crate::error::{MarquetError, Result};
use crate::h5col::Dtype;
use crate::h5col::{Column, ColumnKind, File};
use crate::marquet::{types, Crs, GeometryColumnInfo, MarquetTable, WkbBuffer};
use crate::spec::{names, BBox, GeometryType};
use crate::wkb;

/// What an export did (every format's writer reports this).
#[derive(Debug, Clone, Default)]
pub struct ExportReport {
    /// Rows written (the table's `NROWS`).
    pub rows: u64,
    /// Parquet row groups written.
    pub row_groups: usize,
    /// `geo` version written ("2.0.0", "1.1.0", "1.0.0"; "" for GeoJSON).
    pub version: String,
    /// Parquet GEOMETRY / GEOGRAPHY logical types were written.
    pub native_types: bool,
    /// Geometry columns with the exact types written.
    pub geometry_columns: Vec<(String, Vec<crate::spec::GeometryType>)>,
    /// Columns not written, with the reason.
    pub skipped: Vec<(String, String)>,
    /// Things a reader should know (e.g. M types in a 1.0 file).
    pub notes: Vec<String>,
}

impl std::fmt::Display for ExportReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "exported {} rows{}{}{}",
            self.rows,
            // Row groups are Parquet's: GeoJSON and the GIS formats have none (issue #38).
            if self.row_groups > 0 { format!(" in {} row group(s)", self.row_groups) } else { String::new() },
            if self.version.is_empty() { String::new() } else { format!(", geo version {}", self.version) },
            if self.native_types { ", Parquet GEOMETRY/GEOGRAPHY logical types" } else { "" }
        )?;
        for (c, t) in &self.geometry_columns {
            writeln!(f, "  geometry {c}: [{}]", t.iter().map(|t| t.name()).collect::<Vec<_>>().join(", "))?;
        }
        for (c, why) in &self.skipped {
            writeln!(f, "  skipped {c}: {why}")?;
        }
        for n in &self.notes {
            writeln!(f, "  note: {n}")?;
        }
        Ok(())
    }
}

/// Exact summary of a geometry column, accumulated while exporting.
pub(crate) struct Summary {
    pub types: BTreeSet<GeometryType>,
    pub bbox: BBox,
    pub all_z: bool,
    pub all_m: bool,
    pub any: bool,
    /// Edge model and orientation for boxes that contain geodesic edges (R8).
    pub edges: (crate::spatial::geodesic::EdgeModel, bool),
}

impl Summary {
    pub fn new() -> Summary {
        Summary {
            types: BTreeSet::new(),
            bbox: BBox::EMPTY,
            all_z: true,
            all_m: true,
            any: false,
            edges: (crate::spatial::geodesic::EdgeModel::Planar, false),
        }
    }
    /// A summary whose boxes follow the column's edges, like Marquet's own BBOX.
    pub fn for_column(info: &GeometryColumnInfo) -> Summary {
        Summary { edges: (crate::marquet::bounds::edge_model(&info.edges), info.orientation_ccw), ..Summary::new() }
    }
    pub fn add(&mut self, w: &[u8], path: &str, row: u64) -> Result<()> {
        let info = wkb::scan(w).map_err(|e| e.into_marquet(path.to_string(), Some(row)))?;
        self.types.insert(info.geometry_type);
        if !info.is_empty {
            self.any = true;
            self.all_z &= info.geometry_type.dims.has_z();
            self.all_m &= info.geometry_type.dims.has_m();
            let b = if self.edges.0 == crate::spatial::geodesic::EdgeModel::Planar {
                info.bbox
            } else {
                crate::marquet::bounds::geometry_box(w, self.edges.0, self.edges.1)
                    .map_err(|e| e.into_marquet(path.to_string(), Some(row)))?
            };
            self.bbox = self.bbox.union(&b);
        }
        Ok(())
    }
    pub fn sorted_types(&self) -> Vec<GeometryType> {
        let mut v: Vec<GeometryType> = self.types.iter().copied().collect();
        v.sort_by_key(|t| t.iso_code());
        v
    }
    /// GeoParquet `bbox`: 4 numbers, 6 with Z, 8 with Z and M (2.0 only).
    pub fn bbox_vec(&self, allow_zm: bool) -> Option<Vec<f64>> {
        if !self.any {
            return None;
        }
        let b = &self.bbox;
        Some(if self.all_z && self.all_m && allow_zm {
            vec![b.xmin, b.ymin, b.zmin, b.mmin, b.xmax, b.ymax, b.zmax, b.mmax]
        } else if self.all_z {
            vec![b.xmin, b.ymin, b.zmin, b.xmax, b.ymax, b.zmax]
        } else {
            vec![b.xmin, b.ymin, b.xmax, b.ymax]
        })
    }
}

pub use super::native::Coords;
pub use super::{EXTENSION_METADATA, EXTENSION_NAME};

/// How one output column is read.
#[derive(Debug, Clone)]
enum Col {
    Geom,
    /// A point column (XY or XYZ) read as GeoArrow `geoarrow.point`.
    NativePoint { z: bool, coords: Coords },
    /// A line or polygon column read in a GeoArrow native encoding ([`super::native`]).
    Native { kind: super::native::NativeKind, z: bool, coords: Coords },
    /// A covering column (HEP002 §9.4) read as a struct of box fields; `col` is the
    /// column, opened once by the plan.
    Covering { f32: bool, z: bool, col: Arc<Column> },
    /// Any other column; `col` the dataset column opened once by the plan (`None`: a
    /// list column, read through its VALUES and OFFSETS).
    Data { plan: OutPlan, col: Option<Arc<Column>> },
}

/// The GeoArrow `geoarrow.wkb` field metadata of a geometry column: `crs` as PROJJSON
/// (`OGC:CRS84` for the HEP002 default CRS, absent when unknown), `edges` when not
/// planar. Parquet's writer turns it into the GEOMETRY / GEOGRAPHY logical type.
pub fn wkb_extension(info: &GeometryColumnInfo) -> HashMap<String, String> {
    let mut m = serde_json::Map::new();
    match &info.crs {
        Crs::Default => {
            m.insert("crs".into(), serde_json::Value::String("OGC:CRS84".into()));
        }
        Crs::Unknown => {}
        Crs::ProjJson(doc) => {
            m.insert("crs".into(), serde_json::from_str(doc).unwrap_or(serde_json::Value::Null));
        }
    }
    if !info.edges.is_planar() {
        m.insert("edges".into(), serde_json::Value::String(info.edges.geoparquet_name()));
    }
    HashMap::from([
        (EXTENSION_NAME.to_string(), "geoarrow.wkb".to_string()),
        (EXTENSION_METADATA.to_string(), serde_json::Value::Object(m).to_string()),
    ])
}

/// A `Binary` array over the buffer's bytes (moved, not copied) with 32-bit offsets.
fn wkb_array(b: WkbBuffer, path: &str) -> Result<ArrayRef> {
    // Offsets index `bytes` as they are (WkbBuffer::get), so they stay absolute. One pass
    // for the largest, then a plain narrowing loop: both vectorise, where a checked
    // conversion per offset did not (issue #33 item 6). Decreasing offsets are refused
    // by `BinaryArray::try_new` below.
    if b.offsets.iter().copied().max().is_some_and(|o| o > i32::MAX as u64) {
        return Err(MarquetError::Unsupported(format!("{path}: more than 2 GiB of WKB in one batch")));
    }
    let offsets: Vec<i32> = b.offsets.iter().map(|&o| o as i32).collect();
    let nulls = b.valid.iter().any(|v| !v).then(|| NullBuffer::from(b.valid.clone()));
    let values = Buffer::from_vec(b.bytes);
    let a = BinaryArray::try_new(OffsetBuffer::new(ScalarBuffer::from(offsets)), values, nulls).map_err(|e| err_at(path, e))?;
    Ok(Arc::new(a))
}

/// The Arrow schema of a Marquet table and how each column is read. A plan holds the
/// table's attribute columns open (each opened once, when planned, not per read), so
/// HDF5 keeps the file open while a plan lives.
#[derive(Debug, Clone)]
pub struct ArrowPlan {
    schema: SchemaRef,
    cols: Vec<(String, Col)>,
    /// The interpretable geometry columns, primary first, with what the file says of them.
    pub geometry_columns: Vec<GeometryColumnInfo>,
    /// Columns that have no Arrow mapping here, with the reason.
    pub skipped: Vec<(String, String)>,
    /// Geometry columns this library cannot interpret (ruling R16, HEP002 §6.2), read as
    /// the ordinary H5Col data they also are; nested source columns kept as JSON text.
    pub notes: Vec<String>,
    /// The struct path of each column in `cols` (`arrow_field`), when it has one.
    paths: Vec<Option<Vec<String>>>,
    /// The output fields when struct columns are nested again ([`ArrowPlan::renested`]).
    shape: Option<Vec<super::renest::Node>>,
}

impl ArrowPlan {
    /// Plan the columns of `t` in `COLUMN_ORDER`, or only `columns` (in that order; a name
    /// that is not a column is an error). Geometry fields carry `geoarrow.wkb` extension
    /// metadata when `geoarrow` is set.
    pub fn new(t: &MarquetTable, columns: Option<&[String]>, geoarrow: bool) -> Result<ArrowPlan> {
        ArrowPlan::with_native_points(t, columns, geoarrow, false)
    }

    /// As [`ArrowPlan::new`]; with `native_points` (and `geoarrow`), point columns (HEP002
    /// §7.4, XY or XYZ) are read as the GeoArrow native `geoarrow.point` type, a struct of
    /// `x`, `y`[, `z`] float64 arrays (null rows are null structs, empty points NaN
    /// coordinates), which readers such as geopandas turn into geometries without parsing
    /// WKB; and WKB columns whose `GEOMETRY_TYPES` are one kind of LineString, Polygon,
    /// MultiLineString or MultiPolygon, all XY or all XYZ, as `geoarrow.linestring`,
    /// `geoarrow.polygon`, … (lists of such coordinate structs; issue #33 item 6). Other
    /// columns stay `geoarrow.wkb`.
    pub fn with_native_points(t: &MarquetTable, columns: Option<&[String]>, geoarrow: bool, native_points: bool) -> Result<ArrowPlan> {
        ArrowPlan::with_native(t, columns, geoarrow, native_points.then_some(Coords::Separated))
    }

    /// As [`ArrowPlan::with_native_points`], the native encodings' coordinates laid out as
    /// `native` says (`None`: every geometry column WKB).
    pub fn with_native(t: &MarquetTable, columns: Option<&[String]>, geoarrow: bool, native: Option<Coords>) -> Result<ArrowPlan> {
        let native_points = native.is_some();
        let coords = native.unwrap_or(Coords::Separated);
        let mut notes = Vec::new();
        let mut skipped = Vec::new();
        let mut geo_names = Vec::new();
        for g in t.geometry_column_names()? {
            match t.not_interpretable(&g)? {
                None => geo_names.push(g),
                Some(why) => notes.push(format!("column {g}: not interpretable as geometry ({why}): exported as ordinary data")),
            }
        }
        let mut infos: HashMap<String, GeometryColumnInfo> = HashMap::new();
        let mut geometry_columns = Vec::new();
        for g in &geo_names {
            let info = t.geometry_column(g)?;
            geometry_columns.push(info.clone());
            infos.insert(g.clone(), info);
        }
        let coverings: HashMap<String, String> =
            infos.values().filter_map(|i| i.covering.clone().map(|c| (c, i.name.clone()))).collect();
        let mut order = t.table().column_names()?;
        if order.is_empty() {
            order = t.table().discover_columns()?;
        }
        for g in &geo_names {
            if !order.contains(g) {
                order.push(g.clone());
            }
        }
        if let Some(want) = columns {
            for c in want {
                if !order.contains(c) {
                    return Err(MarquetError::InvalidArgument(format!(
                        "{}: no column {c:?} (columns: {})",
                        t.path(),
                        order.join(", ")
                    )));
                }
            }
            order = want.to_vec();
            geometry_columns.retain(|g| order.contains(&g.name));
        }
        let mut cols: Vec<(String, Col)> = Vec::new();
        let mut fields: Vec<Field> = Vec::new();
        for name in &order {
            if let Some(info) = infos.get(name) {
                if let (true, true, crate::marquet::StorageForm::Point { dims, .. }) = (geoarrow, native_points, &info.form) {
                    if matches!(dims, crate::spec::Dimensions::Xy | crate::spec::Dimensions::Xyz) {
                        let z = *dims == crate::spec::Dimensions::Xyz;
                        let mut m = wkb_extension(info);
                        m.insert(EXTENSION_NAME.to_string(), "geoarrow.point".to_string());
                        fields.push(Field::new(name, coords.data_type(z), true).with_metadata(m));
                        cols.push((name.clone(), Col::NativePoint { z, coords }));
                        continue;
                    }
                }
                if let (true, true, Some(types)) = (geoarrow, native_points, &info.types) {
                    let wkb_form = matches!(info.form, crate::marquet::StorageForm::VarWkb | crate::marquet::StorageForm::FixedWkb { .. });
                    if let (true, Some((kind, z))) = (wkb_form, super::native::NativeKind::for_types(types)) {
                        let mut m = wkb_extension(info);
                        m.insert(EXTENSION_NAME.to_string(), kind.extension_name().to_string());
                        fields.push(Field::new(name, kind.data_type(z, coords), true).with_metadata(m));
                        cols.push((name.clone(), Col::Native { kind, z, coords }));
                        continue;
                    }
                }
                let mut f = Field::new(name, DataType::Binary, true);
                if geoarrow {
                    f = f.with_metadata(wkb_extension(info));
                }
                fields.push(f);
                cols.push((name.clone(), Col::Geom));
                continue;
            }
            let kind = t.table().kind_of(name)?;
            if coverings.contains_key(name) {
                let c = t.table().column(name)?;
                let Dtype::Compound { fields: cf, .. } = c.dtype().to_le() else {
                    skipped.push((name.clone(), "covering column is not a compound".into()));
                    continue;
                };
                let f32 = matches!(cf[0].dtype, Dtype::Float { size: 4, .. });
                let z = cf.iter().any(|f| f.name == "zmin");
                let bnames = types::box_field_names(z, false);
                let ft = if f32 { DataType::Float32 } else { DataType::Float64 };
                let sf: Vec<Field> = bnames.iter().map(|n| Field::new(*n, ft.clone(), true)).collect();
                fields.push(Field::new(name, DataType::Struct(sf.into()), true));
                cols.push((name.clone(), Col::Covering { f32, z, col: Arc::new(c) }));
                continue;
            }
            match kind {
                Some(ColumnKind::Dataset) => {
                    let c = t.table().column(name)?;
                    // A categorical column (HEP001 §8.7) is a dictionary of its labels (issue #22).
                    if let Some(cats) = crate::h5col::categorical::categories_of(t.table(), name)? {
                        let (plan, dt) = plan::categorical_out_plan(c.dtype(), &cats.labels);
                        fields.push(Field::new(name, dt, true).with_dict_is_ordered(cats.ordered));
                        cols.push((name.clone(), Col::Data { plan, col: Some(Arc::new(c)) }));
                        continue;
                    }
                    let units = c.text_attr(names::UNITS)?;
                    match plan::out_plan(c.dtype(), false, units.as_deref(), None, false) {
                        Ok((plan, dt)) => {
                            fields.push(Field::new(name, dt, true));
                            cols.push((name.clone(), Col::Data { plan, col: Some(Arc::new(c)) }));
                        }
                        Err(why) => skipped.push((name.clone(), why)),
                    }
                }
                Some(ColumnKind::List) => {
                    let lc = t.table().list_column(name)?;
                    let desc = lc.text_attr(names::DESCRIPTION)?;
                    let strings = match lc.values_info() {
                        Some(_) => false,
                        None => lc.is_string_list()?,
                    };
                    if lc.values_info().is_none() && !strings {
                        skipped.push((name.clone(), "nested list columns are not exported".into()));
                        continue;
                    }
                    match plan::out_plan(&lc.leaf_dtype()?, true, None, desc.as_deref(), strings) {
                        Ok((plan, dt)) => {
                            fields.push(Field::new(name, dt, true));
                            cols.push((name.clone(), Col::Data { plan, col: None }));
                        }
                        Err(why) => skipped.push((name.clone(), why)),
                    }
                }
                None => skipped.push((name.clone(), "not a column".into())),
            }
        }
        // What the import recorded of nested Arrow sources (issue #22): struct paths, JSON text.
        let mut paths: Vec<Option<Vec<String>>> = vec![None; cols.len()];
        for (k, (name, c)) in cols.iter().enumerate() {
            if !matches!(c, Col::Data { .. }) {
                continue;
            }
            let Some(a) = t.table().column_text_attr(name, names::ARROW_FIELD)? else { continue };
            let Ok(v) = serde_json::from_str::<serde_json::Value>(&a) else { continue };
            paths[k] = v.get("path").and_then(|p| p.as_array()).map(|p| p.iter().filter_map(|s| s.as_str().map(str::to_string)).collect());
            if let (Some(j), DataType::Utf8) = (v.get("json").and_then(|j| j.as_str()), fields[k].data_type()) {
                let f = fields[k].clone().with_metadata(HashMap::from([(EXTENSION_NAME.to_string(), super::nested_json::ARROW_JSON.to_string())]));
                fields[k] = f;
                if j != super::nested_json::ARROW_JSON {
                    notes.push(format!("column {name}: JSON text of the source's {j} (HEP001 cannot hold it), written as arrow.json text"));
                }
            }
        }
        Ok(ArrowPlan { schema: Arc::new(Schema::new(fields)), cols, geometry_columns, skipped, notes, paths, shape: None })
    }

    /// The plan with the struct columns that import flattened (`parent.child` columns with
    /// an `arrow_field` path) nested again (`super::renest`), as the GeoParquet export
    /// writes them.
    pub fn renested(mut self) -> ArrowPlan {
        if self.paths.iter().all(|p| p.as_ref().is_none_or(|p| p.len() < 2)) {
            return self;
        }
        let fields: Vec<Field> = self.schema.fields().iter().map(|f| f.as_ref().clone()).collect();
        let shape = super::renest::nest(&fields, &self.paths);
        self.schema = Arc::new(Schema::new(shape.iter().map(super::renest::Node::field).collect::<Vec<_>>()));
        self.shape = Some(shape);
        self
    }

    /// The Arrow schema of the batches.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// Rows `[start, end)` as one record batch.
    pub fn read_range(&self, t: &MarquetTable, start: u64, end: u64) -> Result<RecordBatch> {
        let arrays = (0..self.cols.len()).map(|k| self.read_column(t, k, start, end)).collect::<Result<Vec<_>>>()?;
        let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some((end - start) as usize));
        let arrays = match &self.shape {
            Some(shape) => shape.iter().map(|n| n.array(&arrays)).collect::<Result<Vec<_>>>()?,
            None => arrays,
        };
        RecordBatch::try_new_with_options(self.schema.clone(), arrays, &opts).map_err(|e| err_at(t.path(), e))
    }

    /// Every row of the table as record batches of at most `batch_rows` rows, the batches
    /// read in parallel (rayon): HDF5's calls stay serialized by its lock, and while one
    /// thread is in them the others decode chunks and build arrays (issue #33 item 6).
    pub fn read_all(&self, t: &MarquetTable, batch_rows: usize) -> Result<Vec<RecordBatch>> {
        use rayon::prelude::*;
        let n = t.nrows()?;
        let step = batch_rows.max(1) as u64;
        let ranges: Vec<(u64, u64)> = (0..n).step_by(step as usize).map(|s| (s, (s + step).min(n))).collect();
        ranges.par_iter().map(|&(s, e)| self.read_range(t, s, e)).collect()
    }

    /// Rows `[start, end)` of the fields `fields` (indexes into [`ArrowPlan::schema`]) as one
    /// record batch, reading only those columns; `None` when the plan nests columns again
    /// ([`ArrowPlan::renested`]: a field may be made of several columns).
    pub fn read_fields(&self, t: &MarquetTable, fields: &[usize], start: u64, end: u64) -> Result<Option<RecordBatch>> {
        if self.shape.is_some() {
            return Ok(None);
        }
        let schema = Arc::new(self.schema.project(fields).map_err(|e| err_at(t.path(), e))?);
        let arrays = fields.iter().map(|&k| self.read_column(t, k, start, end)).collect::<Result<Vec<_>>>()?;
        let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some((end - start) as usize));
        RecordBatch::try_new_with_options(schema, arrays, &opts).map(Some).map_err(|e| err_at(t.path(), e))
    }

    /// Column `k` of the plan, rows `[start, end)`.
    fn read_column(&self, t: &MarquetTable, k: usize, start: u64, end: u64) -> Result<ArrayRef> {
        let (name, c) = &self.cols[k];
        Ok(match c {
            Col::Geom => wkb_array(t.read_wkb(name, start, end)?, t.path())?,
            Col::Native { kind, z, coords } => {
                let path = format!("{}/{name}", t.path().trim_end_matches('/'));
                super::native::native_array(&t.read_wkb(name, start, end)?, *kind, *z, *coords, &path, start)?
            }
            Col::NativePoint { z, coords } => point_array(t.read_points(name, start, end)?, *z, *coords, t.path())?,
            Col::Covering { f32, z, col } => {
                let a = col.read(start, end - start)?;
                let miss = a.missing(col.fill());
                let bnames = types::box_field_names(*z, false);
                let mut vals: Vec<Vec<f64>> = vec![Vec::with_capacity(a.len()); bnames.len()];
                for i in 0..a.len() {
                    let (bx, _, _) = types::decode_box(&a.dtype, a.element(i)).unwrap_or((BBox::EMPTY, false, false));
                    let fields = [bx.xmin, bx.ymin, bx.zmin, bx.xmax, bx.ymax, bx.zmax];
                    let pick: Vec<f64> = if *z { fields.to_vec() } else { vec![fields[0], fields[1], fields[3], fields[4]] };
                    for (k, v) in pick.into_iter().enumerate() {
                        vals[k].push(v);
                    }
                }
                plan::covering_struct(&bnames, *f32, vals, &miss)?
            }
            Col::Data { plan, col: Some(col) } => {
                let a = col.read(start, end - start)?;
                let miss = a.missing(col.fill());
                plan::out_array(plan, &a, &miss)?
            }
            Col::Data { plan, col: None } => {
                let l = t.table().read_list(name, start, end)?;
                plan::out_list_array(plan, &l)?
            }
        })
    }

    /// The rows `rows` (strictly ascending, each below NROWS), in that order, as record
    /// batches of at most `batch_rows` rows: nearby rows are read in one span
    /// ([`crate::h5col::take_spans`]) and picked with Arrow's `take`.
    pub fn take(&self, t: &MarquetTable, rows: &[u64], batch_rows: usize) -> Result<Vec<RecordBatch>> {
        self.take_given(t, rows, batch_rows, None)
    }

    /// [`ArrowPlan::take`], with the WKB values of one geometry column already in hand
    /// (`given`: the column, its values, and the index in them of `rows[0]`'s; e.g. a
    /// query's answer with [`crate::query::Query::with_wkb`]): that column is built from
    /// them and not read (issue #33 item 1: `marquet query --format` prints what the query
    /// returned), as WKB or in the GeoArrow native encoding the plan reads it in. With
    /// columns nested again ([`ArrowPlan::renested`]) the column is read as usual.
    pub fn take_given(&self, t: &MarquetTable, rows: &[u64], batch_rows: usize, given: Option<(&str, &WkbBuffer, usize)>) -> Result<Vec<RecordBatch>> {
        let n = t.nrows()?;
        if let Some(&last) = rows.last() {
            if last >= n {
                return Err(MarquetError::InvalidArgument(format!("{}: row {last} out of range for {n} rows", t.path())));
            }
        }
        let given = match given {
            Some((c, w, first)) if self.shape.is_none() => match self.cols.iter().position(|(n, col)| n == c && matches!(col, Col::Geom | Col::Native { .. } | Col::NativePoint { .. })) {
                Some(k) if w.len() >= first + rows.len() => Some((k, w, first)),
                Some(_) => {
                    return Err(MarquetError::InvalidArgument(format!(
                        "{}/{c}: {} WKB values given for {} rows from value {first}",
                        t.path().trim_end_matches('/'),
                        w.len(),
                        rows.len()
                    )))
                }
                None => None,
            },
            _ => None,
        };
        let spans = crate::h5col::take_spans(rows, t.path())?;
        let mut parts: Vec<RecordBatch> = Vec::new();
        let mut out = Vec::new();
        let mut held = 0usize;
        for sp in spans {
            // A span is at most a few rows wider than the rows it holds, but may be long.
            let mut s = sp.start;
            let mut i = sp.first;
            while s < sp.end {
                let e = (s + crate::convert::DEFAULT_BATCH_ROWS as u64).min(sp.end);
                let j = i + rows[i..sp.last].iter().take_while(|&&r| r < e).count();
                let idx = UInt32Array::from_iter_values(rows[i..j].iter().map(|&r| (r - s) as u32));
                let picked = match given {
                    None => arrow_select::take::take_record_batch(&self.read_range(t, s, e)?, &idx).map_err(|e| err_at(t.path(), e))?,
                    Some((g, w, first)) => {
                        let arrays = (0..self.cols.len())
                            .map(|k| match k == g {
                                true => self.given_column(g, w, first + i..first + j, rows[i], t.path()),
                                false => arrow_select::take::take(&self.read_column(t, k, s, e)?, &idx, None).map_err(|e| err_at(t.path(), e)),
                            })
                            .collect::<Result<Vec<_>>>()?;
                        let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(j - i));
                        RecordBatch::try_new_with_options(self.schema.clone(), arrays, &opts).map_err(|e| err_at(t.path(), e))?
                    }
                };
                held += picked.num_rows();
                parts.push(picked);
                if held >= batch_rows {
                    out.push(arrow_select::concat::concat_batches(&self.schema, &parts).map_err(|e| err_at(t.path(), e))?);
                    parts.clear();
                    held = 0;
                }
                s = e;
                i = j;
            }
        }
        if !parts.is_empty() {
            out.push(arrow_select::concat::concat_batches(&self.schema, &parts).map_err(|e| err_at(t.path(), e))?);
        }
        Ok(out)
    }
}

/// The key of a cached plan: the column selection, `geoarrow`, the native encodings'
/// coordinates.
type PlanKey = (Option<Vec<String>>, bool, Option<Coords>);

/// Arrow plans of one table by column selection, for a holder that reads the table again
/// and again (a C table handle's Arrow streams, a Python `Table`'s reads): a read of a
/// selection read before reuses its plan — the column facts and the opened columns, which
/// cost more than a small window's rows (libhdf5 opens every column and reads its
/// attributes). Plans are kept only for files opened read-only from a path or URL
/// ([`crate::File::byte_range_source`]), whose columns this library cannot change under a
/// plan; at most eight, the oldest dropped first.
#[derive(Debug, Default)]
pub struct PlanCache(std::sync::Mutex<Vec<(PlanKey, Arc<ArrowPlan>)>>);

impl PlanCache {
    /// Plans kept at most.
    const KEPT: usize = 8;

    /// No plan yet.
    pub fn new() -> PlanCache {
        PlanCache::default()
    }

    /// [`ArrowPlan::with_native`] of `t` (a table of `file`), from the cache when the same
    /// selection was planned before.
    pub fn plan(&self, file: &crate::marquet::File, t: &MarquetTable, columns: Option<&[String]>, geoarrow: bool, native: Option<Coords>) -> Result<Arc<ArrowPlan>> {
        if file.byte_range_source().is_none() {
            return Ok(Arc::new(ArrowPlan::with_native(t, columns, geoarrow, native)?));
        }
        let key: PlanKey = (columns.map(<[String]>::to_vec), geoarrow, native);
        let mut plans = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, p)) = plans.iter().find(|(k, _)| *k == key) {
            return Ok(p.clone());
        }
        let p = Arc::new(ArrowPlan::with_native(t, columns, geoarrow, native)?);
        if plans.len() == Self::KEPT {
            plans.remove(0);
        }
        plans.push((key, p.clone()));
        Ok(p)
    }
}

impl ArrowPlan {
    /// Geometry column `k` of rows whose WKB values are `w[r]` (the first of them row
    /// `row`, for messages), built from them in the plan's encoding instead of read.
    fn given_column(&self, k: usize, w: &WkbBuffer, r: std::ops::Range<usize>, row: u64, table: &str) -> Result<ArrayRef> {
        let (name, c) = &self.cols[k];
        let path = || format!("{}/{name}", table.trim_end_matches('/'));
        Ok(match c {
            Col::Native { kind, z, coords } => {
                let mut sub = WkbBuffer::new();
                for v in r {
                    sub.push(w.get(v));
                }
                super::native::native_array(&sub, *kind, *z, *coords, &path(), row)?
            }
            Col::NativePoint { z, coords } => {
                // The column's own WKB, read by the writer's one point walker (an Xy or Xyz
                // column: the only ones planned as geoarrow.point).
                let dims = if *z { crate::spec::Dimensions::Xyz } else { crate::spec::Dimensions::Xy };
                let n = r.len();
                let crate::marquet::GeometryValues::Points { x, y, z: zs, m, valid, .. } = crate::marquet::points_from_wkb(r.map(|v| w.get(v)), n, dims, &path(), row)? else {
                    unreachable!("points_from_wkb returns points")
                };
                let valid = valid.unwrap_or_else(|| vec![true; n]);
                point_array(crate::marquet::PointArrays { x, y, z: zs, m, valid }, *z, *coords, table)?
            }
            _ => Arc::new(BinaryArray::from_iter(r.map(|v| w.get(v)))),
        })
    }
}

/// A GeoArrow `geoarrow.point` array (x, y[, z] separated or interleaved; null rows
/// null) of `p` (`z`: with the z ordinate; NaN where `p` has none).
fn point_array(p: crate::marquet::PointArrays, z: bool, coords: Coords, table: &str) -> Result<ArrayRef> {
    let n = p.valid.len();
    let nulls = p.valid.iter().any(|v| !v).then(|| NullBuffer::from(p.valid));
    let zs = z.then(|| p.z.unwrap_or_else(|| vec![f64::NAN; n]));
    let ordinates = match (coords, zs) {
        (Coords::Separated, None) => vec![p.x, p.y],
        (Coords::Separated, Some(zs)) => vec![p.x, p.y, zs],
        (Coords::Interleaved, zs) => {
            let mut v = Vec::with_capacity(n * if zs.is_some() { 3 } else { 2 });
            match zs {
                None => p.x.iter().zip(&p.y).for_each(|(&x, &y)| v.extend_from_slice(&[x, y])),
                Some(zs) => p.x.iter().zip(&p.y).zip(&zs).for_each(|((&x, &y), &z)| v.extend_from_slice(&[x, y, z])),
            }
            vec![v]
        }
    };
    coords.array(z, ordinates, nulls, table)
}

/// GeoArrow extension names this module reads as geometry, with their GeoParquet
/// `encoding`.
fn geo_encoding(ext: &str) -> Option<&'static str> {
    Some(match ext {
        "geoarrow.wkb" | "ogc.wkb" => "WKB",
        "geoarrow.point" => "point",
        "geoarrow.linestring" => "linestring",
        "geoarrow.polygon" => "polygon",
        "geoarrow.multipoint" => "multipoint",
        "geoarrow.multilinestring" => "multilinestring",
        "geoarrow.multipolygon" => "multipolygon",
        _ => return None,
    })
}

/// The entry of column `name` in the schema's GeoParquet `geo` metadata, when there is one.
fn geoparquet_column(schema: &Schema, name: &str) -> Option<serde_json::Value> {
    let geo: serde_json::Value = serde_json::from_str(schema.metadata().get("geo")?).ok()?;
    geo.get("columns")?.get(name).filter(|c| c.is_object()).cloned()
}

/// The GeoParquet `geo` key for a schema: every field with a GeoArrow extension type
/// (`geoarrow.wkb` and the native encodings) and every binary field named in `geometry`
/// (read as WKB) is a geometry column; the first one is primary. Its extension metadata
/// gives `crs` (absent → unknown, as GeoArrow says; GeoParquet's absent would mean
/// OGC:CRS84) and `edges`; a binary field without one takes them from the schema's own
/// GeoParquet `geo` key when it lists the field (a GeoParquet file read as Arrow).
pub fn geo_metadata(schema: &Schema, geometry: &[String]) -> Result<String> {
    let mut columns = serde_json::Map::new();
    let mut primary: Option<String> = None;
    for name in geometry {
        if schema.field_with_name(name).is_err() {
            return Err(MarquetError::InvalidArgument(format!("geometry column {name:?} is not a field of the input")));
        }
    }
    for f in schema.fields() {
        let ext = f.metadata().get(EXTENSION_NAME).map(String::as_str);
        let encoding = match ext.and_then(geo_encoding) {
            Some(e) => e,
            None if geometry.contains(f.name()) => {
                if !matches!(f.data_type(), DataType::Binary | DataType::LargeBinary | DataType::BinaryView) {
                    return Err(MarquetError::InvalidArgument(format!(
                        "geometry column {:?} is {} (expected WKB in a binary column)",
                        f.name(),
                        f.data_type()
                    )));
                }
                "WKB"
            }
            None => {
                if let Some(e) = ext.filter(|e| e.starts_with("geoarrow.")) {
                    return Err(MarquetError::Unsupported(format!("column {:?}: extension type {e} (convert to geoarrow.wkb)", f.name())));
                }
                continue;
            }
        };
        let meta: serde_json::Value = match f.metadata().get(EXTENSION_METADATA) {
            Some(s) if !s.trim().is_empty() => serde_json::from_str(s).map_err(|e| {
                MarquetError::InvalidArgument(format!("column {:?}: {EXTENSION_METADATA} is not JSON: {e}", f.name()))
            })?,
            _ => serde_json::Value::Object(Default::default()),
        };
        // A plain binary column of a GeoParquet file read as Arrow (pyarrow's `read_table`
        // keeps the file's `geo` key): its CRS is what that key says, absent meaning
        // OGC:CRS84 as in GeoParquet — not unknown, which an append refuses into a table
        // that states a CRS (issue #38, local ruling L20).
        let parquet_geo = if ext.is_none() { geoparquet_column(schema, f.name()) } else { None };
        let crs = match (&parquet_geo, meta.get("crs")) {
            (_, Some(c)) => Some(c.clone()),
            (Some(g), None) => g.get("crs").cloned(),
            (None, None) => Some(serde_json::Value::Null),
        };
        let mut o = serde_json::Map::new();
        o.insert("encoding".into(), encoding.into());
        o.insert("geometry_types".into(), serde_json::Value::Array(Vec::new()));
        if let Some(c) = crs {
            o.insert("crs".into(), c);
        }
        let edges = meta.get("edges").or_else(|| parquet_geo.as_ref().and_then(|g| g.get("edges")));
        if let Some(e) = edges.filter(|e| e.as_str() != Some("planar")) {
            o.insert("edges".into(), e.clone());
        }
        columns.insert(f.name().clone(), serde_json::Value::Object(o));
        primary.get_or_insert_with(|| f.name().clone());
    }
    let Some(primary) = primary else {
        return Err(MarquetError::InvalidArgument(
            "the input has no geometry column (no field with the geoarrow.wkb extension type; name one with `geometry`)".into(),
        ));
    };
    Ok(serde_json::json!({"version": "1.1.0", "primary_column": primary, "columns": columns}).to_string())
}

/// The geometry fields of `schema` (see [`geo_metadata`]), described as the hub reads them.
pub fn describe_schema(path: &str, schema: SchemaRef, geometry: &[String]) -> Result<SourceSchema> {
    let geo = geo_metadata(&schema, geometry)?;
    let mut findings = Vec::new();
    let g = meta::parse_geo(path, &geo, &mut findings, &|_| None)?;
    let geometry = g
        .columns
        .into_iter()
        .map(|m| {
            let source = match m.encoding {
                Encoding::Wkb => "WKB (Arrow binary)".to_string(),
                e => format!("geoarrow {}", e.name()),
            };
            GeoField { meta: m, source, crs_text: None }
        })
        .collect();
    Ok(SourceSchema { path: path.to_string(), schema, geometry, rows: None, findings, geoparquet_version: None, native_types: false })
}

/// The batches of a stream, each checked against (and given) the stream's `schema`:
/// batches of a stream may differ from it in metadata only.
pub fn conformed<'a, I>(path: &str, schema: SchemaRef, batches: I) -> Batches<'a>
where
    I: IntoIterator<Item = Result<RecordBatch>>,
    I::IntoIter: 'a,
{
    let path = path.to_string();
    Box::new(batches.into_iter().map(move |b| {
        let b = b?;
        if b.schema() == schema {
            return Ok(b);
        }
        RecordBatch::try_new(schema.clone(), b.columns().to_vec()).map_err(|e| MarquetError::Arrow { path: path.clone(), source: e })
    }))
}

/// Import Arrow record batches of `schema` as a new Marquet table `opts.table` of `file`,
/// exactly as [`crate::convert::import_geoparquet`] imports a GeoParquet file (same column
/// mapping, same layout: [`ImportOptions::layout`]). Geometry columns: fields with a
/// GeoArrow extension type, and the binary WKB fields named in `geometry` (see
/// `geo_metadata`). The stream is read once and held in memory for the import's two
/// passes (it was handed over in memory); nothing is written beside the output.
pub fn import_record_batches<I>(file: &File, schema: SchemaRef, batches: I, geometry: &[String], opts: &ImportOptions) -> Result<ImportReport>
where
    I: IntoIterator<Item = Result<RecordBatch>>,
{
    import_record_batches_into(ImportTarget::New(file), schema, batches, geometry, opts)
}

/// [`import_record_batches`] into a new table or appended to an existing one
/// ([`ImportTarget`]).
pub fn import_record_batches_into<I>(target: ImportTarget<'_>, schema: SchemaRef, batches: I, geometry: &[String], opts: &ImportOptions) -> Result<ImportReport>
where
    I: IntoIterator<Item = Result<RecordBatch>>,
{
    let path = "Arrow stream";
    let described = describe_schema(path, schema.clone(), geometry)?;
    let mut src = Cached::new(described, conformed(path, schema, batches), None, opts.layout.sort_memory);
    import(&mut src, target, opts)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GeoParquet file read as Arrow (pyarrow's `read_table`): its `geo` key gives the
    /// CRS of a plain binary column — absent is OGC:CRS84 (GeoParquet), not unknown, so an
    /// append of it into a CRS84 table is not refused (issue #38, local ruling L20).
    #[test]
    fn geo_metadata_of_a_plain_column_from_the_schemas_geo_key() {
        let schema = |geo: &str| {
            Schema::new(vec![Field::new("geometry", DataType::Binary, true)])
                .with_metadata(HashMap::from([("geo".to_string(), geo.to_string())]))
        };
        let g = |geo: &str| -> serde_json::Value {
            serde_json::from_str(&geo_metadata(&schema(geo), &["geometry".into()]).unwrap()).unwrap()
        };
        let v = g(r#"{"version":"1.0.0","primary_column":"geometry","columns":{"geometry":{"encoding":"WKB","geometry_types":[]}}}"#);
        assert!(v["columns"]["geometry"].get("crs").is_none(), "{v}");
        let v = g(r#"{"columns":{"geometry":{"encoding":"WKB","crs":{"id":{"authority":"EPSG","code":3857}},"edges":"spherical"}}}"#);
        assert_eq!(v["columns"]["geometry"]["crs"]["id"]["code"], 3857);
        assert_eq!(v["columns"]["geometry"]["edges"], "spherical");
        let v = g(r#"{"columns":{"geometry":{"encoding":"WKB","crs":null}}}"#);
        assert_eq!(v["columns"]["geometry"]["crs"], serde_json::Value::Null);
        // Not listed (or no `geo` key): unknown, as before.
        let v = g(r#"{"columns":{"other":{"encoding":"WKB"}}}"#);
        assert_eq!(v["columns"]["geometry"]["crs"], serde_json::Value::Null);
    }

    #[test]
    fn geo_metadata_from_extension_fields() {
        let crs = r#"{"crs":{"type":"GeographicCRS","name":"x"},"edges":"spherical"}"#;
        let g = Field::new("g", DataType::Binary, true).with_metadata(HashMap::from([
            (EXTENSION_NAME.to_string(), "geoarrow.wkb".to_string()),
            (EXTENSION_METADATA.to_string(), crs.to_string()),
        ]));
        let h = Field::new("h", DataType::Binary, true);
        let s = Schema::new(vec![Field::new("a", DataType::Int32, true), h, g]);
        let v: serde_json::Value = serde_json::from_str(&geo_metadata(&s, &[]).unwrap()).unwrap();
        assert_eq!(v["primary_column"], "g");
        assert_eq!(v["columns"]["g"]["crs"]["name"], "x");
        assert_eq!(v["columns"]["g"]["edges"], "spherical");
        assert!(v["columns"].get("h").is_none());
        let v: serde_json::Value = serde_json::from_str(&geo_metadata(&s, &["h".into()]).unwrap()).unwrap();
        assert_eq!(v["primary_column"], "h");
        assert_eq!(v["columns"]["h"]["crs"], serde_json::Value::Null);
        let e = geo_metadata(&Schema::new(vec![Field::new("a", DataType::Int32, true)]), &[]).unwrap_err();
        assert!(e.to_string().contains("no geometry column"), "{e}");
        let e = geo_metadata(&s, &["a".into()]).unwrap_err();
        assert!(e.to_string().contains("geometry column \"a\" is Int32"), "{e}");
    }
}
