//! GeoJSON (RFC 7946) FeatureCollections in and out of Marquet tables.
//!
//! Import streams the features twice (a first pass infers each property's type and the
//! longest string; the second appends batches), so memory stays bounded by one batch.
//! Properties become columns: booleans → boolean, integers → int64, other numbers →
//! float64, strings → fixed-length UTF-8, anything mixed, nested or array-valued → its
//! JSON text. The feature `id` becomes a column `id`. Geometries become WKB (points of
//! one dimension → a point column). The CRS is OGC:CRS84 (RFC 7946 §4), or what a legacy
//! `crs` member states (super::geojson_crs); export reprojects to OGC:CRS84.

use std::collections::BTreeSet;
use std::io::{BufReader, BufWriter, Write};
use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, BinaryArray, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field};
use geojson::{Feature, FeatureReader, GeometryValue, Position};
use serde_json::Value;

use super::hub::plan::{self, Plan, Planned, StrStats};
use super::geoparquet::export::{ExportReport, Summary};
use super::hub::import::{GeometryImport, ImportOptions, ImportReport, PointForm};
use super::hub::sort::{HilbertSorter, KeyCollector};
use crate::spatial::geodesic::EdgeModel;
use super::io_err;
use crate::error::{MarquetError, Result};
use crate::h5col::Dtype;
use crate::h5col::{ColumnKind, File};
use crate::marquet::{choose_form, GeoBatch, GeometryColumnSpec, GeometryValues, MarquetTable, StorageForm};
use crate::spec::{names, BBox, Dimensions, GeometryKind};
use crate::wkb::{self, Coord, Geometry};

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
    Ok(FeatureReader::from_reader(BufReader::new(f)).features().map(move |r| r.map_err(|e| io_err(&path, e))))
}

fn pos_coord(p: &Position, dims: Dimensions) -> Coord {
    let s = p.as_slice();
    let g = |i: usize| s.get(i).copied().unwrap_or(f64::NAN);
    match dims {
        Dimensions::Xyz => Coord::xyz(g(0), g(1), g(2)),
        _ => Coord::xy(g(0), g(1)),
    }
}

fn max_dim(v: &GeometryValue) -> usize {
    fn m(ps: &[Position]) -> usize {
        ps.iter().map(|p| p.len()).max().unwrap_or(2)
    }
    match v {
        GeometryValue::Point { coordinates } => coordinates.len().max(2),
        GeometryValue::MultiPoint { coordinates } | GeometryValue::LineString { coordinates } => m(coordinates),
        GeometryValue::MultiLineString { coordinates } | GeometryValue::Polygon { coordinates } => {
            coordinates.iter().map(|r| m(r)).max().unwrap_or(2)
        }
        GeometryValue::MultiPolygon { coordinates } => {
            coordinates.iter().flat_map(|p| p.iter().map(|r| m(r))).max().unwrap_or(2)
        }
        GeometryValue::GeometryCollection { geometries } => geometries.iter().map(|g| max_dim(&g.value)).max().unwrap_or(2),
    }
}

/// A GeoJSON geometry as a WKB-model geometry (XY, or XYZ when any position has 3 values).
pub fn from_geojson(v: &GeometryValue) -> Geometry {
    let dims = if max_dim(v) >= 3 { Dimensions::Xyz } else { Dimensions::Xy };
    build(v, dims)
}

fn build(v: &GeometryValue, dims: Dimensions) -> Geometry {
    let seq = |ps: &[Position]| ps.iter().map(|p| pos_coord(p, dims)).collect::<Vec<_>>();
    match v {
        GeometryValue::Point { coordinates } => Geometry::Point(if coordinates.is_empty() {
            wkb::Point::empty(dims)
        } else {
            wkb::Point::new(dims, pos_coord(coordinates, dims))
        }),
        GeometryValue::LineString { coordinates } => Geometry::LineString(wkb::LineString { dims, coords: seq(coordinates) }),
        GeometryValue::Polygon { coordinates } => {
            Geometry::Polygon(wkb::Polygon { dims, rings: coordinates.iter().map(|r| seq(r)).collect() })
        }
        GeometryValue::MultiPoint { coordinates } => Geometry::MultiPoint(wkb::MultiPoint {
            dims,
            points: coordinates.iter().map(|p| wkb::Point::new(dims, pos_coord(p, dims))).collect(),
        }),
        GeometryValue::MultiLineString { coordinates } => Geometry::MultiLineString(wkb::MultiLineString {
            dims,
            lines: coordinates.iter().map(|l| wkb::LineString { dims, coords: seq(l) }).collect(),
        }),
        GeometryValue::MultiPolygon { coordinates } => Geometry::MultiPolygon(wkb::MultiPolygon {
            dims,
            polygons: coordinates
                .iter()
                .map(|p| wkb::Polygon { dims, rings: p.iter().map(|r| seq(r)).collect() })
                .collect(),
        }),
        GeometryValue::GeometryCollection { geometries } => Geometry::GeometryCollection(wkb::GeometryCollection {
            dims,
            geometries: geometries.iter().map(|g| build(&g.value, dims)).collect(),
        }),
    }
}

fn position(c: &Coord, dims: Dimensions) -> Position {
    if dims.has_z() {
        Position::from(vec![c.x, c.y, c.z])
    } else {
        Position::from(vec![c.x, c.y])
    }
}

/// A WKB-model geometry as GeoJSON (Z kept, M dropped; POINT EMPTY → empty coordinates).
pub fn to_geojson(g: &Geometry) -> GeometryValue {
    let seq = |cs: &[Coord], d: Dimensions| cs.iter().map(|c| position(c, d)).collect::<Vec<_>>();
    match g {
        Geometry::Point(p) => GeometryValue::Point {
            coordinates: if p.coord.is_empty() { Position::from(Vec::<f64>::new()) } else { position(&p.coord, p.dims) },
        },
        Geometry::LineString(l) => GeometryValue::LineString { coordinates: seq(&l.coords, l.dims) },
        Geometry::Polygon(p) => GeometryValue::Polygon { coordinates: p.rings.iter().map(|r| seq(r, p.dims)).collect() },
        Geometry::MultiPoint(m) => {
            GeometryValue::MultiPoint { coordinates: m.points.iter().map(|p| position(&p.coord, p.dims)).collect() }
        }
        Geometry::MultiLineString(m) => {
            GeometryValue::MultiLineString { coordinates: m.lines.iter().map(|l| seq(&l.coords, l.dims)).collect() }
        }
        Geometry::MultiPolygon(m) => GeometryValue::MultiPolygon {
            coordinates: m.polygons.iter().map(|p| p.rings.iter().map(|r| seq(r, p.dims)).collect()).collect(),
        },
        Geometry::GeometryCollection(c) => GeometryValue::GeometryCollection {
            geometries: c.geometries.iter().map(|g| geojson::Geometry::new(to_geojson(g))).collect(),
        },
    }
}

/// A geometry as a GeoJSON geometry object (RFC 7946 §3.1), as JSON.
pub fn to_geojson_json(g: &Geometry) -> serde_json::Value {
    serde_json::to_value(geojson::Geometry::new(to_geojson(g))).unwrap_or(serde_json::Value::Null)
}

/// Import a GeoJSON FeatureCollection as a new Marquet table (geometry column `geometry`).
pub fn import_geojson(input: &Path, file: &File, opts: &ImportOptions) -> Result<ImportReport> {
    import_geojson_into(input, super::ImportTarget::New(file), opts)
}

/// [`import_geojson`] into a new table or appended to an existing one
/// ([`super::ImportTarget`]).
pub fn import_geojson_into(input: &Path, target: super::ImportTarget<'_>, opts: &ImportOptions) -> Result<ImportReport> {
    target.or_nothing(&opts.table, || import_geojson_inner(input, target, opts))
}

fn import_geojson_inner(input: &Path, target: super::ImportTarget<'_>, opts: &ImportOptions) -> Result<ImportReport> {
    let mut report = ImportReport { table: opts.table.clone(), ..Default::default() };
    // Pass 1: property types, string lengths, geometry kinds.
    let mut names: Vec<String> = Vec::new();
    let mut types: Vec<PType> = Vec::new();
    let mut stats: Vec<StrStats> = Vec::new();
    let mut id_type = PType::Null;
    let mut id_stats = StrStats::default();
    let (mut all_points, mut dims_seen) = (true, BTreeSet::new());
    let mut nfeat = 0u64;
    // The legacy `crs` member, when there is one (issue #22, super::geojson_crs).
    let (crs, crs_note) = match &opts.crs {
        Some(c) => (c.clone(), None),
        None => super::geojson_crs::geojson_crs(input)?,
    };
    // `--to-crs`: every geometry reprojected before it is boxed, ordered or stored (issue #31).
    let reproj = match &opts.to_crs {
        Some(to) if !(crs == *to || (crate::crs::is_crs84(&crs) && crate::crs::is_crs84(to))) => {
            report.reprojected.push(("geometry".into(), crs.display_name(), to.display_name()));
            Some(crate::crs::ValuesReprojection::new(&crs, to, &format!("{}: geometry", input.display()))?)
        }
        _ => None,
    };
    let wkb_of = |g: &geojson::Geometry| -> Result<Vec<u8>> {
        let w = wkb::encode(&from_geojson(&g.value), wkb::ByteOrder::LittleEndian);
        match &reproj {
            None => Ok(w),
            Some(r) => r.apply_wkb(&w),
        }
    };
    // Hilbert keys of the geometries (HEP002 §10.6; see super::hub::sort).
    let mut keys = opts.layout.spatial_order.then(KeyCollector::default);
    for f in features(input)? {
        let f = f?;
        nfeat += 1;
        if let Some(k) = keys.as_mut() {
            let b = match &f.geometry {
                None => BBox::EMPTY,
                Some(g) => {
                    let w = wkb_of(g)?;
                    crate::marquet::bounds::geometry_box(&w, EdgeModel::Planar, false)
                        .map_err(|e| e.into_marquet(format!("{}: feature {}", input.display(), nfeat - 1), None))?
                }
            };
            k.push(&b);
        }
        if let Some(id) = &f.id {
            match id {
                geojson::feature::Id::String(s) => {
                    id_type = join(id_type, PType::Str);
                    id_stats.add(s);
                }
                geojson::feature::Id::Number(n) => {
                    id_type = join(id_type, if n.is_i64() { PType::Int } else { PType::Float });
                    id_stats.add(&n.to_string());
                }
            }
        }
        if let Some(g) = &f.geometry {
            let wg = from_geojson(&g.value);
            if wg.kind() != GeometryKind::Point {
                all_points = false;
            }
            dims_seen.insert(wg.dims());
        }
        for (k, v) in f.properties_iter() {
            let i = match names.iter().position(|x| x == k) {
                Some(i) => i,
                None => {
                    names.push(k.clone());
                    types.push(PType::Null);
                    stats.push(StrStats::default());
                    names.len() - 1
                }
            };
            types[i] = join(types[i], ptype(v));
            match v {
                Value::String(s) => stats[i].add(s),
                Value::Null => {}
                other => stats[i].add(&other.to_string()),
            }
        }
    }
    // Column plans.
    let mut used: BTreeSet<String> = BTreeSet::from(["geometry".to_string()]);
    let text_bytes = opts.text_as_bytes || target.text_as_bytes()?;
    let mk = |name: String, t: PType, st: &StrStats, used: &mut BTreeSet<String>| -> Option<Planned> {
        let plan = match t {
            PType::Null => return None,
            PType::Bool => Plan::Bool { nullable: true },
            PType::Int => Plan::Int(Dtype::I64),
            PType::Float => Plan::Float { f16: false, f32: false },
            PType::Str | PType::Json => Plan::FixedStr { size: 2 },
        };
        let n = super::hub::import::sanitize_name(&name, used);
        used.insert(n.clone());
        let mut p = Planned {
            name: n,
            path: vec![0],
            plan,
            spec_units: None,
            description: (t == PType::Json).then(|| "JSON text of mixed or nested GeoJSON property values".to_string()),
            needs_str_stats: matches!(t, PType::Str | PType::Json),
            dictionary: None,
            json: None,
            to_json: false,
            struct_path: None,
        };
        let d = p.description.clone();
        p.finish_strings(st, opts.max_fixed_string, text_bytes);
        if d.is_some() && p.description.is_none() {
            p.description = d;
        }
        Some(p)
    };
    let id_plan = mk("id".into(), id_type, &id_stats, &mut used);
    let mut plans: Vec<(usize, Planned)> = Vec::new();
    for (i, k) in names.iter().enumerate() {
        match mk(k.clone(), types[i], &stats[i], &mut used) {
            Some(p) => plans.push((i, p)),
            None => report.skipped.push((k.clone(), "every value is null: no type to give the column".into())),
        }
    }
    let form = if all_points && dims_seen.len() == 1 {
        let d = *dims_seen.iter().next().unwrap_or(&Dimensions::Xy);
        match opts.point_form {
            PointForm::Native => StorageForm::Point { dims: d, f32: false },
            PointForm::FixedWkb => StorageForm::FixedWkb { size: 5 + 8 * d.size() },
            PointForm::VarWkb => StorageForm::VarWkb,
        }
    } else {
        let _ = choose_form;
        StorageForm::VarWkb
    };
    let (_template_file, mut t) = target.define(&opts.table)?;
    let mut spec = GeometryColumnSpec::default().with_form(form);
    spec.crs = opts.to_crs.clone().unwrap_or(crs);
    if let Some(n) = &crs_note {
        report.findings.push(super::Finding::new(super::code::CRS_NOT_PROJJSON, Some("geometry"), n.clone()));
        spec.description = Some(format!("source CRS (not PROJJSON, HEP002 §8.1): {n}"));
    }
    let cov = crate::marquet::layout::covering_name("geometry", true, &|n| used.contains(n));
    let spec = opts.layout.geometry_spec(spec, &cov);
    t.add_geometry_column("geometry", &spec)?;
    if let Some(p) = &id_plan {
        p.create(&t, opts.layout.chunk_rows, opts.layout.checksums)?;
        report.columns.push((p.name.clone(), "feature id".into()));
    }
    for (i, p) in &plans {
        p.create(&t, opts.layout.chunk_rows, opts.layout.checksums)?;
        report.columns.push((p.name.clone(), format!("property {:?} ({:?})", names[*i], types[*i])));
    }
    // Pass 2: record batches of the geometry (WKB) and the planned columns, in Hilbert
    // order through the sorter when the layout orders rows.
    let mut fields = vec![Field::new("geometry", DataType::Binary, true)];
    let mut col_plans: Vec<&Planned> = Vec::new();
    if let Some(p) = &id_plan {
        col_plans.push(p);
    }
    col_plans.extend(plans.iter().map(|(_, p)| p));
    let spill = super::hub::import::spill_dir_of(&target.file_name()?);
    let mut sorter = keys.map(|k| HilbertSorter::new(k.keys(), opts.layout.sort_memory, spill));
    let mut w = target.writer(&t, &opts.layout, Some(nfeat), &opts.progress)?;
    let mut schema: Option<arrow_schema::SchemaRef> = None;
    let mut it = features(input)?.fuse();
    loop {
        let mut chunk: Vec<Feature> = Vec::with_capacity(opts.batch_rows.min(65_536));
        for f in it.by_ref() {
            chunk.push(f?);
            if chunk.len() >= opts.batch_rows {
                break;
            }
        }
        if chunk.is_empty() {
            break;
        }
        let geoms: BinaryArray = chunk
            .iter()
            .map(|f| f.geometry.as_ref().map(&wkb_of).transpose())
            .collect::<Result<_>>()?;
        let mut cols: Vec<ArrayRef> = vec![Arc::new(geoms)];
        if let Some(p) = &id_plan {
            let vals: Vec<Value> = chunk
                .iter()
                .map(|f| match &f.id {
                    Some(geojson::feature::Id::String(s)) => Value::String(s.clone()),
                    Some(geojson::feature::Id::Number(n)) => Value::Number(n.clone()),
                    None => Value::Null,
                })
                .collect();
            cols.push(json_array(&vals, &p.plan));
        }
        for (i, p) in &plans {
            let vals: Vec<Value> = chunk.iter().map(|f| f.property(&names[*i]).cloned().unwrap_or(Value::Null)).collect();
            cols.push(json_array(&vals, &p.plan));
        }
        let sch = schema
            .get_or_insert_with(|| {
                for (k, c) in cols.iter().enumerate().skip(1) {
                    fields.push(Field::new(format!("c{k}"), c.data_type().clone(), true));
                }
                Arc::new(arrow_schema::Schema::new(std::mem::take(&mut fields)))
            })
            .clone();
        let batch = RecordBatch::try_new(sch, cols).map_err(|e| io_err(&input.display().to_string(), e))?;
        match sorter.as_mut() {
            Some(s) => s.push(batch)?,
            // Unsorted: append as we go (memory bounded by one batch).
            None => append_geojson_batch(&mut w, &batch, &col_plans)?,
        }
    }
    if let Some(s) = sorter {
        for b in s.finish(opts.batch_rows)? {
            append_geojson_batch(&mut w, &b?, &col_plans)?;
        }
    }
    report.rows = w.staged_rows();
    debug_assert_eq!(report.rows, nfeat);
    w.finish()?;
    let t: &MarquetTable = match target {
        super::ImportTarget::Append { table, .. } => table,
        super::ImportTarget::New(_) => &t,
    };
    let info = t.geometry_column("geometry")?;
    report.geometry_columns.push(GeometryImport {
        name: "geometry".into(),
        source: "GeoJSON geometry".into(),
        form: info.form,
        crs: info.crs.clone(),
        edges: info.edges.clone(),
        types: info.types.clone().unwrap_or_default(),
        covering: info.covering.clone(),
    });
    Ok(report)
}

/// Append one record batch of [`import_geojson`]'s pass 2: column 0 is the geometry, then
/// one column per plan.
fn append_geojson_batch(w: &mut super::hub::target::ImportSink<'_>, b: &RecordBatch, plans: &[&Planned]) -> Result<()> {
    let mut gb = GeoBatch::new().with_geometry("geometry", GeometryValues::Wkb(plan::binaries(b.column(0))?));
    for (k, p) in plans.iter().enumerate() {
        gb.columns.columns.insert(p.name.clone(), p.values(b.column(k + 1))?);
    }
    w.write(gb)?;
    Ok(())
}

fn json_array(vals: &[Value], plan: &Plan) -> ArrayRef {
    match plan {
        Plan::Bool { .. } => Arc::new(BooleanArray::from(vals.iter().map(|v| v.as_bool()).collect::<Vec<_>>())),
        Plan::Int(_) => Arc::new(Int64Array::from(vals.iter().map(|v| v.as_i64()).collect::<Vec<_>>())),
        Plan::Float { .. } => Arc::new(Float64Array::from(vals.iter().map(|v| v.as_f64()).collect::<Vec<_>>())),
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

/// Writes rows of a Marquet table as GeoJSON features (RFC 7946): the one GeoJSON
/// rendering of `marquet convert`, `marquet dump` and `marquet query --format geojson`.
/// The primary geometry column is the feature geometry; every other column is a property
/// (other geometry columns as WKT text; covering columns left out), rendered by its Arrow
/// mapping: booleans as JSON booleans, numbers as numbers, timestamps and dates as ISO 8601
/// text. Rows are read in ranges, so memory stays bounded by one range.
pub struct FeatureWriter<'a> {
    t: &'a MarquetTable,
    primary: String,
    pinfo: crate::marquet::GeometryColumnInfo,
    cols: Vec<(String, Option<(plan::OutPlan, bool)>)>,
    summary: Summary,
    first: bool,
    rows: u64,
    /// The reprojection to OGC:CRS84 of a column in another CRS.
    to_crs84: Option<crate::crs::Transformer>,
    /// What the export left out or changed (notes, skipped columns).
    pub report: ExportReport,
}

impl<'a> FeatureWriter<'a> {
    /// Plan the properties of `t`'s features.
    pub fn new(t: &'a MarquetTable) -> Result<FeatureWriter<'a>> {
        let primary = t.primary_geometry_column()?;
        let geo_names = t.geometry_column_names()?;
        let pinfo = t.geometry_column(&primary)?;
        let mut report = ExportReport::default();
        // RFC 7946 fixes GeoJSON to OGC:CRS84: other coordinates are reprojected, or the
        // output refused; never written mislabelled (issue #22, super::geojson_crs).
        let to_crs84 = super::geojson_crs::to_crs84(&pinfo.crs, &pinfo.path)?;
        if to_crs84.is_some() {
            report.notes.push(format!("coordinates reprojected from {} to OGC:CRS84 (RFC 7946)", pinfo.crs.display_name()));
        }
        let coverings: BTreeSet<String> =
            geo_names.iter().filter_map(|g| t.geometry_column(g).ok().and_then(|i| i.covering)).collect();
        let mut order = t.table().column_names()?;
        if order.is_empty() {
            order = t.table().discover_columns()?;
        }
        let mut cols: Vec<(String, Option<(plan::OutPlan, bool)>)> = Vec::new();
        for name in order {
            if name == primary || coverings.contains(&name) {
                continue;
            }
            if geo_names.contains(&name) {
                report.notes.push(format!("geometry column {name} written as WKT text properties"));
                cols.push((name, None));
                continue;
            }
            let kind = t.table().kind_of(&name)?;
            let plan = match kind {
                Some(ColumnKind::Dataset) => {
                    let c = t.table().column(&name)?;
                    let units = c.text_attr(names::UNITS)?;
                    // A categorical column's labels, not its codes (HEP001 §8.7, issue #22).
                    match crate::h5col::categorical::categories_of(t.table(), &name)? {
                        Some(cats) => Ok((plan::categorical_out_plan(c.dtype(), &cats.labels).0, false)),
                        None => plan::out_plan(c.dtype(), false, units.as_deref(), None, false).map(|(p, _)| (p, false)),
                    }
                }
                Some(ColumnKind::List) => {
                    let lc = t.table().list_column(&name)?;
                    let desc = lc.text_attr(names::DESCRIPTION)?;
                    match lc.values_info() {
                        Some(_) => plan::out_plan(&lc.leaf_dtype()?, true, None, desc.as_deref(), false).map(|(p, _)| (p, true)),
                        None => plan::out_plan(&lc.leaf_dtype()?, true, None, None, true).map(|(p, _)| (p, true)),
                    }
                }
                None => Err("not a column".into()),
            };
            match plan {
                Ok(p) => cols.push((name, Some(p))),
                Err(why) => report.skipped.push((name, why)),
            }
        }
        Ok(FeatureWriter { t, primary, pinfo, cols, summary: Summary::new(), first: true, rows: 0, to_crs84, report })
    }

    /// The opening of the FeatureCollection.
    pub fn begin(&mut self, w: &mut dyn Write) -> std::io::Result<()> {
        w.write_all(b"{\"type\":\"FeatureCollection\",\"features\":[\n")
    }

    /// The features of rows `[start, end)`.
    pub fn write_range(&mut self, w: &mut dyn Write, start: u64, end: u64) -> Result<()> {
        self.write_span(w, start, end, None)
    }

    /// The features of `rows` (strictly ascending, each below NROWS; e.g. a query's
    /// answer), one read per span of nearby rows.
    pub fn write_rows(&mut self, w: &mut dyn Write, rows: &[u64]) -> Result<()> {
        let n = self.t.nrows()?;
        if let Some(&last) = rows.last() {
            if last >= n {
                return Err(MarquetError::InvalidArgument(format!("row {last} out of range for {n} rows")));
            }
        }
        for sp in crate::h5col::take_spans(rows, self.t.path())? {
            let picks: Vec<usize> = rows[sp.first..sp.last].iter().map(|&r| (r - sp.start) as usize).collect();
            self.write_span(w, sp.start, sp.end, Some(&picks))?;
        }
        Ok(())
    }

    /// The closing of the FeatureCollection; the report of what was written.
    pub fn end(mut self, w: &mut dyn Write) -> std::io::Result<ExportReport> {
        w.write_all(b"\n]}\n")?;
        self.report.rows = self.rows;
        self.report.geometry_columns.push((self.primary.clone(), self.summary.sorted_types()));
        Ok(self.report)
    }

    fn write_span(&mut self, w: &mut dyn Write, s: u64, e: u64, picks: Option<&[usize]>) -> Result<()> {
        let t = self.t;
        let io = |er: std::io::Error| MarquetError::Io { path: "<geojson output>".into(), source: er };
        let geoms = t.read_wkb(&self.primary, s, e)?;
        let mut props: Vec<(&str, Vec<Value>)> = Vec::new();
        for (name, plan) in &self.cols {
            let vals: Vec<Value> = match plan {
                None => {
                    let b = t.read_wkb(name, s, e)?;
                    (0..b.len())
                        .map(|i| b.get(i).and_then(|w| wkb::to_wkt(w).ok()).map(Value::String).unwrap_or(Value::Null))
                        .collect()
                }
                Some((p, false)) => {
                    let c = t.table().column(name)?;
                    let a = c.read(s, e - s)?;
                    let miss = a.missing(c.fill());
                    let arr = plan::out_array(p, &a, &miss)?;
                    (0..arr.len()).map(|i| cell(&arr, i)).collect()
                }
                Some((p, true)) => {
                    let l = t.table().read_list(name, s, e)?;
                    let arr = plan::out_list_array(p, &l)?;
                    (0..arr.len()).map(|i| cell(&arr, i)).collect()
                }
            };
            props.push((name.as_str(), vals));
        }
        let all: Vec<usize>;
        let picks = match picks {
            Some(p) => p,
            None => {
                all = (0..geoms.len()).collect();
                &all
            }
        };
        for &i in picks {
            let row = s + i as u64;
            let geometry = match geoms.get(i) {
                Some(wb) => {
                    self.summary.add(wb, &self.pinfo.path, row)?;
                    let mut g = wkb::decode(wb).map_err(|er| er.into_marquet(self.pinfo.path.clone(), Some(row)))?;
                    if let Some(tr) = &self.to_crs84 {
                        tr.transform_geometry(&mut g).map_err(|er| MarquetError::InvalidArgument(format!("{}: row {row}: {er}", self.pinfo.path)))?;
                    }
                    Some(geojson::Geometry::new(to_geojson(&g)))
                }
                None => None,
            };
            let mut p = serde_json::Map::new();
            for (name, vals) in &props {
                p.insert(name.to_string(), vals.get(i).cloned().unwrap_or(Value::Null));
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

/// Export a Marquet table as a GeoJSON FeatureCollection with a [`FeatureWriter`]: the
/// primary geometry column is the feature geometry; other columns (other geometry columns
/// as WKT) are properties.
pub fn export_geojson(file: &File, table: &str, output: &Path) -> Result<ExportReport> {
    let t = MarquetTable::open(file, table)?;
    let out_path = output.display().to_string();
    let mut fw = FeatureWriter::new(&t)?;
    let f = std::fs::File::create(output).map_err(|e| MarquetError::Io { path: out_path.clone(), source: e })?;
    let mut w = BufWriter::new(f);
    let io = |e: std::io::Error| MarquetError::Io { path: out_path.clone(), source: e };
    fw.begin(&mut w).map_err(io)?;
    let n = t.nrows()?;
    let step = super::DEFAULT_BATCH_ROWS as u64;
    let mut s = 0;
    while s < n {
        let e = (s + step).min(n);
        fw.write_range(&mut w, s, e).map_err(|er| match er {
            MarquetError::Io { source, .. } => io(source),
            other => other,
        })?;
        s = e;
    }
    let report = fw.end(&mut w).map_err(io)?;
    w.flush().map_err(io)?;
    Ok(report)
}
