//! Lakehouse batches into the hub: geometry columns of any encoding into ISO WKB, GeoMesa
//! companions checked, the source described to the hub (`lake_source`).

use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, Float32Builder, Float64Builder};
use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, StructArray};
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef};

use super::decode::{self, srid_crs, TextOrBinary};
use super::options::*;
use super::options::companion;
use super::source::open_source;
use crate::convert::hub::import::{import, ImportOptions, ImportReport};
use crate::convert::hub::source::{Batches, Cached, GeoField, Reopen, SourceSchema};
use crate::convert::hub::target::ImportTarget;
use crate::convert::err_at;
use crate::error::{MarquetError, Result};
use crate::h5col::File;
use crate::spec::BBox;
use crate::wkb;

/// How one geometry column's values are turned into WKB.
#[derive(Debug, Clone)]
enum Input {
    Binary,
    Text(Option<TextOrBinary>),
    LonLat { x: usize, y: usize },
}

/// One geometry column of the output.
#[derive(Debug, Clone)]
struct GeomCol {
    /// Output name.
    name: String,
    /// Input column index (`None` for lon/lat, which makes a new column).
    src: Option<usize>,
    input: Input,
    /// GeoMesa `__<name>_bbox__`: input index and whether its fields are float32.
    bbox: Option<(usize, bool)>,
    /// CRS fixed by the source (Iceberg type, GeoMesa, lon/lat, user); else from SRIDs.
    crs: Option<serde_json::Value>,
    edges: Option<String>,
    srid: Option<u32>,
    /// What to say in the report.
    how: String,
    nulled: u64,
    /// The first rows nulled (for the warning).
    bad: Vec<(u64, String)>,
    recomputed: u64,
    widened: u64,
}


fn is_binary(dt: &DataType) -> bool {
    matches!(dt, DataType::Binary | DataType::LargeBinary | DataType::BinaryView)
}

fn is_string(dt: &DataType) -> bool {
    matches!(dt, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

fn bbox_field_type(dt: &DataType) -> Option<bool> {
    let DataType::Struct(fs) = dt else { return None };
    let names: Vec<&str> = fs.iter().map(|f| f.name().as_str()).collect();
    for n in ["xmin", "ymin", "xmax", "ymax"] {
        if !names.contains(&n) {
            return None;
        }
    }
    if fs.iter().all(|f| f.data_type() == &DataType::Float32) {
        Some(true)
    } else if fs.iter().all(|f| matches!(f.data_type(), DataType::Float32 | DataType::Float64)) {
        Some(false)
    } else {
        None
    }
}

/// Turns source batches into batches with ISO WKB geometry columns (see the module doc).
pub struct Converter {
    output: SchemaRef,
    geoms: Vec<GeomCol>,
    /// Output column → where it comes from.
    plan: Vec<Out>,
    dropped: Vec<String>,
    null_bad: bool,
    recompute: bool,
    window: Option<BBox>,
    path: String,
    /// Rows seen so far (for error messages) and kept.
    row: u64,
    kept: u64,
}

/// Where an output column of a converted batch comes from.
#[derive(Debug, Clone, Copy)]
enum Out {
    Geom(usize),
    Bbox(usize),
    Copy(usize),
}

impl Converter {
    /// Plan the conversion of batches of `schema` (from `path`, for messages).
    pub fn new(path: &str, schema: SchemaRef, opts: &LakeOptions, found: &SourceGeometry) -> Result<Converter> {
        let bad = |m: String| MarquetError::InvalidArgument(format!("{path}: {m}"));
        let user_crs = opts.crs.as_ref().map(|c| match serde_json::from_str::<serde_json::Value>(c) {
            Ok(v @ serde_json::Value::Object(_)) => v,
            _ => serde_json::Value::String(c.clone()),
        });
        let mut geoms: Vec<GeomCol> = Vec::new();
        let mut add = |name: &str, enc: Option<TextOrBinary>, crs: Option<serde_json::Value>, edges: Option<String>, how: String| -> Result<()> {
            let Some((i, f)) = schema.column_with_name(name) else {
                let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
                return Err(bad(format!("no column {name:?} (columns: {})", names.join(", "))));
            };
            let input = if is_binary(f.data_type()) {
                if enc.is_some_and(|e| e.is_text()) {
                    return Err(bad(format!("column {name:?} is {} but the encoding {} is text", f.data_type(), enc.map(|e| e.name()).unwrap_or(""))));
                }
                Input::Binary
            } else if is_string(f.data_type()) {
                if enc.is_some_and(|e| !e.is_text()) {
                    return Err(bad(format!("column {name:?} is {} but the encoding {} is binary", f.data_type(), enc.map(|e| e.name()).unwrap_or(""))));
                }
                Input::Text(enc)
            } else {
                return Err(bad(format!("geometry column {name:?} is {}: expected binary (WKB, EWKB) or text (WKT, GeoJSON)", f.data_type())));
            };
            if geoms.iter().any(|g| g.name == name) {
                return Ok(());
            }
            geoms.push(GeomCol {
                name: name.to_string(),
                src: Some(i),
                input,
                bbox: None,
                crs: user_crs.clone().or(crs),
                edges,
                srid: None,
                how,
                nulled: 0,
                bad: Vec::new(),
                recomputed: 0,
                widened: 0,
            });
            Ok(())
        };
        for g in &opts.geometry {
            add(&g.column, g.encoding, None, None, format!("--geometry {}", g.encoding.map(|e| e.name()).unwrap_or("(auto)")))?;
        }
        for c in &found.columns {
            add(&c.column, c.encoding, c.crs.clone(), c.edges.clone(), c.how.clone())?;
        }
        let gm = geomesa_columns(&schema);
        for c in &gm {
            add(c, Some(TextOrBinary::Wkb), Some(serde_json::Value::String("OGC:CRS84".into())), None, "GeoMesa Trino geometry (WKB, EPSG:4326)".into())?;
        }
        if let Some((x, y)) = &opts.lonlat {
            let col = |n: &str| -> Result<usize> {
                let (i, f) = schema.column_with_name(n).ok_or_else(|| bad(format!("--lonlat: no column {n:?}")))?;
                if !f.data_type().is_numeric() {
                    return Err(bad(format!("--lonlat: column {n:?} is {}, not a number", f.data_type())));
                }
                Ok(i)
            };
            let (xi, yi) = (col(x)?, col(y)?);
            let mut name = "geometry".to_string();
            while schema.column_with_name(&name).is_some() || geoms.iter().any(|g| g.name == name) {
                name.push('_');
            }
            geoms.push(GeomCol {
                name,
                src: None,
                input: Input::LonLat { x: xi, y: yi },
                bbox: None,
                crs: Some(user_crs.clone().unwrap_or(serde_json::Value::String("OGC:CRS84".into()))),
                edges: None,
                srid: None,
                how: format!("points from --lonlat {x},{y}"),
                nulled: 0,
                bad: Vec::new(),
                recomputed: 0,
                widened: 0,
            });
        }
        if geoms.is_empty() {
            return Err(MarquetError::InvalidArgument(format!(
                "{path}: no geometry column: not a GeoParquet file and nothing names one; give --geometry COL[:wkb|ewkb|wkt|geojson] or --lonlat XCOL,YCOL"
            )));
        }
        // GeoMesa companions.
        let mut dropped = Vec::new();
        let mut consumed: Vec<usize> = Vec::new();
        for g in geoms.iter_mut() {
            if let Some((i, f)) = schema.column_with_name(&companion(&g.name, "bbox")) {
                match bbox_field_type(f.data_type()) {
                    Some(f32) => {
                        g.bbox = Some((i, f32));
                        consumed.push(i);
                    }
                    None => return Err(bad(format!("{} is {}, not a ROW(xmin, ymin, xmax, ymax) of floats", f.name(), f.data_type()))),
                }
            }
            for w in ["z2", "xz2"] {
                if let Some((i, f)) = schema.column_with_name(&companion(&g.name, w)) {
                    consumed.push(i);
                    dropped.push(f.name().clone());
                }
            }
        }
        let mut plan = Vec::new();
        let mut fields: Vec<Field> = Vec::new();
        for (gi, g) in geoms.iter().enumerate() {
            if g.src.is_none() {
                plan.push(Out::Geom(gi));
                fields.push(Field::new(&g.name, DataType::Binary, true));
            }
        }
        for (i, f) in schema.fields().iter().enumerate() {
            if consumed.contains(&i) {
                if let Some(gi) = geoms.iter().position(|g| g.bbox.map(|b| b.0) == Some(i)) {
                    let f32 = geoms[gi].bbox.map(|b| b.1).unwrap_or(false);
                    plan.push(Out::Bbox(gi));
                    fields.push(Field::new(f.name(), bbox_type(f32), true));
                }
                continue;
            }
            if let Some(gi) = geoms.iter().position(|g| g.src == Some(i)) {
                plan.push(Out::Geom(gi));
                fields.push(Field::new(f.name(), DataType::Binary, true));
                continue;
            }
            plan.push(Out::Copy(i));
            // Field metadata (Parquet field ids) is not carried into the spool.
            fields.push(Field::new(f.name(), f.data_type().clone(), f.is_nullable()));
        }
        Ok(Converter {
            output: Arc::new(Schema::new(fields)),
            geoms,
            plan,
            dropped,
            null_bad: opts.null_bad_geometry,
            recompute: opts.recompute_bbox,
            window: opts.bbox,
            path: path.to_string(),
            row: 0,
            kept: 0,
        })
    }

    /// The schema of the converted batches.
    pub fn schema(&self) -> SchemaRef {
        self.output.clone()
    }

    /// Convert one batch of the input schema.
    pub fn convert(&mut self, batch: &RecordBatch) -> Result<RecordBatch> {
        let n = batch.num_rows();
        let mut geo_arrays: Vec<ArrayRef> = Vec::with_capacity(self.geoms.len());
        let mut bbox_arrays: Vec<Option<ArrayRef>> = Vec::with_capacity(self.geoms.len());
        let mut keep = vec![true; n];
        let mut any_window_drop = false;
        for gi in 0..self.geoms.len() {
            let (wkbs, boxes) = self.geometry_values(gi, batch)?;
            if gi == 0 {
                if let Some(w) = &self.window {
                    for (r, b) in boxes.iter().enumerate() {
                        if !b.is_some_and(|b| b.intersects_xy(w)) {
                            keep[r] = false;
                            any_window_drop = true;
                        }
                    }
                }
            }
            let bbox = match self.geoms[gi].bbox {
                Some((bi, f32)) => Some(self.check_bbox(gi, batch.column(bi), &boxes, f32)?),
                None => None,
            };
            // WKT decodes to up to ~5x its length: a batch must still fit Binary's 32-bit offsets.
            let bytes: usize = wkbs.iter().map(|w| w.as_ref().map_or(0, |v| v.len())).sum();
            if bytes > i32::MAX as usize {
                return Err(MarquetError::Unsupported(format!(
                    "{}: column {:?} rows {}..{}: {bytes} bytes of WKB in one batch (at most 2 GiB)",
                    self.path,
                    self.geoms[gi].name,
                    self.row,
                    self.row + n as u64
                )));
            }
            let mut b = BinaryBuilder::with_capacity(n, bytes);
            for w in &wkbs {
                match w {
                    Some(v) => b.append_value(v),
                    None => b.append_null(),
                }
            }
            geo_arrays.push(Arc::new(b.finish()));
            bbox_arrays.push(bbox);
        }
        let mut cols: Vec<ArrayRef> = Vec::with_capacity(self.plan.len());
        for o in &self.plan {
            cols.push(match *o {
                Out::Geom(gi) => geo_arrays[gi].clone(),
                Out::Bbox(gi) => bbox_arrays[gi].clone().unwrap_or_else(|| arrow_array::new_null_array(&bbox_type(false), n)),
                Out::Copy(i) => batch.column(i).clone(),
            });
        }
        self.row += n as u64;
        let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(n));
        let out = RecordBatch::try_new_with_options(self.output.clone(), cols, &opts).map_err(|e| arrow_err(&self.path, e))?;
        let out = if any_window_drop {
            arrow_select::filter::filter_record_batch(&out, &BooleanArray::from(keep)).map_err(|e| arrow_err(&self.path, e))?
        } else {
            out
        };
        self.kept += out.num_rows() as u64;
        Ok(out)
    }

    /// WKB values and their XY boxes (`None` for null or empty) of geometry `gi`.
    #[allow(clippy::type_complexity)]
    fn geometry_values(&mut self, gi: usize, batch: &RecordBatch) -> Result<(Vec<Option<Vec<u8>>>, Vec<Option<BBox>>)> {
        let n = batch.num_rows();
        let base = self.row;
        let g = &mut self.geoms[gi];
        let mut out: Vec<Option<Vec<u8>>> = Vec::with_capacity(n);
        let mut boxes: Vec<Option<BBox>> = Vec::with_capacity(n);
        let path = &self.path;
        let null_bad = self.null_bad;
        let handle = |g: &mut GeomCol, r: usize, res: std::result::Result<decode::Decoded, String>, out: &mut Vec<Option<Vec<u8>>>| -> Result<()> {
            match res {
                Ok(d) => {
                    if let Some(s) = d.srid {
                        match g.srid {
                            None => g.srid = Some(s),
                            Some(p) if p != s => {
                                return Err(MarquetError::InvalidArgument(format!(
                                    "{path}: column {:?} row {}: SRID {s} differs from SRID {p} of earlier rows (one CRS per column, HEP002 §8)",
                                    g.name,
                                    base + r as u64
                                )))
                            }
                            _ => {}
                        }
                    }
                    out.push(Some(d.wkb));
                }
                Err(why) if null_bad => {
                    g.nulled += 1;
                    if g.bad.len() < 5 {
                        g.bad.push((base + r as u64, why));
                    }
                    out.push(None);
                }
                Err(why) => {
                    return Err(MarquetError::InvalidArgument(format!(
                        "{path}: column {:?} row {}: {why} (--null-bad-geometry makes such values null)",
                        g.name,
                        base + r as u64
                    )))
                }
            }
            Ok(())
        };
        match g.input.clone() {
            Input::Binary => {
                let a = batch.column(g.src.unwrap_or(0));
                let vals = crate::convert::hub::cells::binaries(a)?;
                for (r, v) in vals.into_iter().enumerate() {
                    match v {
                        None => out.push(None),
                        Some(v) => handle(g, r, decode::decode_binary(&v), &mut out)?,
                    }
                }
            }
            Input::Text(enc) => {
                let a = batch.column(g.src.unwrap_or(0));
                let vals = crate::convert::hub::cells::strings(a)?;
                for (r, v) in vals.into_iter().enumerate() {
                    match v.map(str::trim) {
                        None | Some("") => out.push(None),
                        Some(s) => {
                            let e = enc.unwrap_or(if s.starts_with('{') { TextOrBinary::GeoJson } else { TextOrBinary::Wkt });
                            if e == TextOrBinary::GeoJson && g.crs.is_none() {
                                // RFC 7946 §4: GeoJSON coordinates are OGC:CRS84.
                                g.crs = Some(serde_json::Value::String("OGC:CRS84".into()));
                            }
                            handle(g, r, decode::decode_text(s, e), &mut out)?
                        }
                    }
                }
            }
            Input::LonLat { x, y } => {
                let xs = f64_values(batch.column(x), &self.path)?;
                let ys = f64_values(batch.column(y), &self.path)?;
                for (xv, yv) in xs.into_iter().zip(ys) {
                    match (xv, yv) {
                        (Some(x), Some(y)) if !x.is_nan() && !y.is_nan() => {
                            let p = wkb::Geometry::Point(wkb::Point::new(crate::spec::Dimensions::Xy, wkb::Coord::xy(x, y)));
                            out.push(Some(wkb::encode(&p, wkb::ByteOrder::LittleEndian)));
                        }
                        _ => out.push(None),
                    }
                }
            }
        }
        for v in &out {
            boxes.push(match v {
                Some(w) => {
                    let info = wkb::scan(w).map_err(|e| err_at(&self.path, e))?;
                    (!info.is_empty).then_some(info.bbox)
                }
                None => None,
            });
        }
        Ok((out, boxes))
    }

    /// The covering rows of geometry `gi`: the companion's box when it contains the
    /// geometry (float32 boxes rounded to nearest are widened outward by one ulp), else an
    /// error naming the row, or with `recompute_bbox` the geometry's own box.
    fn check_bbox(&mut self, gi: usize, a: &ArrayRef, boxes: &[Option<BBox>], f32: bool) -> Result<ArrayRef> {
        let s = a.as_any().downcast_ref::<StructArray>().ok_or_else(|| err_at(&self.path, "bbox companion is not a struct"))?;
        let field = |n: &str| -> Result<Vec<Option<f64>>> { f64_values(s.column_by_name(n).ok_or_else(|| err_at(&self.path, format!("bbox has no {n}")))?, &self.path) };
        let (x0, y0, x1, y1) = (field("xmin")?, field("ymin")?, field("xmax")?, field("ymax")?);
        let g = &mut self.geoms[gi];
        let mut outb: [Vec<Option<f64>>; 4] = Default::default();
        for (r, b) in boxes.iter().enumerate() {
            let Some(b) = b else {
                for o in outb.iter_mut() {
                    o.push(None);
                }
                continue;
            };
            let src = if s.is_null(r) { None } else { Some([x0[r], y0[r], x1[r], y1[r]]) };
            let want = [b.xmin, b.ymin, b.xmax, b.ymax];
            let ok = match src {
                Some([Some(a0), Some(a1), Some(a2), Some(a3)]) => {
                    let contains = a0 <= b.xmin && a1 <= b.ymin && a2 >= b.xmax && a3 >= b.ymax;
                    // A REAL box rounded to nearest instead of outward: one ulp inside.
                    let near = f32 && [a0, a1, a2, a3].iter().zip(want).all(|(&v, w)| v == (w as f32) as f64);
                    if !contains && near {
                        g.widened += 1;
                    }
                    contains || near
                }
                _ => false,
            };
            if !ok {
                if !self.recompute {
                    return Err(MarquetError::InvalidArgument(format!(
                        "{}: column {} row {}: bbox {} does not contain the geometry's box [{}, {}, {}, {}] (--recompute-bbox recomputes such rows)",
                        self.path,
                        companion(&g.name, "bbox"),
                        self.row + r as u64,
                        match src {
                            Some(v) => format!("[{}]", v.iter().map(|x| x.map_or("null".to_string(), |x| x.to_string())).collect::<Vec<_>>().join(", ")),
                            None => "null".into(),
                        },
                        b.xmin,
                        b.ymin,
                        b.xmax,
                        b.ymax
                    )));
                }
                g.recomputed += 1;
            }
            // The stored covering contains the geometry in the column's precision
            // (HEP002 §10.5): the geometry's box, rounded outward for float32.
            let kept = match (ok, src) {
                (true, Some([Some(a0), Some(a1), Some(a2), Some(a3)])) => [a0.min(b.xmin), a1.min(b.ymin), a2.max(b.xmax), a3.max(b.ymax)],
                _ => want,
            };
            for (k, v) in kept.into_iter().enumerate() {
                outb[k].push(Some(if f32 { if k < 2 { f32_down(v) as f64 } else { f32_up(v) as f64 } } else { v }));
            }
        }
        bbox_array(&outb, f32)
    }

    /// What was learnt, for the report and the `geo` key.
    fn finish(&self, report: &mut LakeReport) -> Result<String> {
        let mut columns = serde_json::Map::new();
        for g in &self.geoms {
            let crs = match &g.crs {
                Some(c) => c.clone(),
                None => {
                    let (v, w) = srid_crs(g.srid);
                    if let Some(w) = w {
                        report.warnings.push(format!("column {}: {w}", g.name));
                    }
                    v
                }
            };
            let mut how = g.how.clone();
            if let Some(s) = g.srid {
                how.push_str(&format!(", SRID {s}"));
            }
            report.geometry.push((g.name.clone(), how));
            let mut o = serde_json::Map::new();
            o.insert("encoding".into(), "WKB".into());
            o.insert("geometry_types".into(), serde_json::Value::Array(Vec::new()));
            o.insert("crs".into(), crs);
            if let Some(e) = &g.edges {
                o.insert("edges".into(), e.clone().into());
            }
            if g.bbox.is_some() {
                let c = companion(&g.name, "bbox");
                o.insert(
                    "covering".into(),
                    serde_json::json!({"bbox": {"xmin": [c, "xmin"], "ymin": [c, "ymin"], "xmax": [c, "xmax"], "ymax": [c, "ymax"]}}),
                );
            }
            columns.insert(g.name.clone(), serde_json::Value::Object(o));
            if g.nulled > 0 {
                let rows: Vec<String> = g.bad.iter().map(|(r, why)| format!("row {r}: {why}")).collect();
                report.warnings.push(format!(
                    "column {}: {} values that do not decode were stored as null ({}{})",
                    g.name,
                    g.nulled,
                    rows.join("; "),
                    if g.nulled > g.bad.len() as u64 { "; ..." } else { "" }
                ));
            }
            if g.recomputed > 0 {
                report.warnings.push(format!("column {}: {} rows' bbox did not contain the geometry and were recomputed", companion(&g.name, "bbox"), g.recomputed));
            }
            if g.widened > 0 {
                report.warnings.push(format!(
                    "column {}: {} float32 boxes were rounded to nearest and have been widened outward by one ulp",
                    companion(&g.name, "bbox"),
                    g.widened
                ));
            }
        }
        report.dropped.extend(self.dropped.iter().cloned());
        report.rows_read += self.row;
        report.rows_kept += self.kept;
        Ok(serde_json::json!({"version": "1.1.0", "primary_column": self.geoms[0].name, "columns": columns}).to_string())
    }
}

pub(crate) fn bbox_type(f32: bool) -> DataType {
    let t = if f32 { DataType::Float32 } else { DataType::Float64 };
    DataType::Struct(Fields::from(["xmin", "ymin", "xmax", "ymax"].iter().map(|n| Field::new(*n, t.clone(), true)).collect::<Vec<_>>()))
}

pub(crate) fn bbox_array(v: &[Vec<Option<f64>>; 4], f32: bool) -> Result<ArrayRef> {
    let DataType::Struct(fields) = bbox_type(f32) else { unreachable!("bbox_type is a struct") };
    let mut arrays: Vec<ArrayRef> = Vec::new();
    for col in v.iter() {
        arrays.push(if f32 {
            let mut b = Float32Builder::with_capacity(col.len());
            col.iter().for_each(|x| b.append_option(x.map(|x| x as f32)));
            Arc::new(b.finish())
        } else {
            let mut b = Float64Builder::with_capacity(col.len());
            col.iter().for_each(|x| b.append_option(*x));
            Arc::new(b.finish())
        });
    }
    let nulls: Vec<bool> = v[0].iter().map(|x| x.is_some()).collect();
    let nb = nulls.iter().any(|v| !v).then(|| arrow_buffer::NullBuffer::from(nulls));
    Ok(Arc::new(StructArray::try_new(fields, arrays, nb).map_err(|e| arrow_err("bbox", e))?))
}

/// Largest float32 not above `v`.
pub(crate) fn f32_down(v: f64) -> f32 {
    let f = v as f32;
    if (f as f64) > v {
        f.next_down()
    } else {
        f
    }
}

/// Smallest float32 not below `v`.
pub(crate) fn f32_up(v: f64) -> f32 {
    let f = v as f32;
    if (f as f64) < v {
        f.next_up()
    } else {
        f
    }
}

/// Numbers of any Arrow numeric type as f64.
fn f64_values(a: &ArrayRef, path: &str) -> Result<Vec<Option<f64>>> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::*;
    macro_rules! prim {
        ($t:ty) => {
            a.as_primitive::<$t>().iter().map(|v| v.map(|x| x as f64)).collect()
        };
    }
    Ok(match a.data_type() {
        DataType::Float64 => a.as_primitive::<Float64Type>().iter().collect(),
        DataType::Float32 => prim!(Float32Type),
        DataType::Int8 => prim!(Int8Type),
        DataType::Int16 => prim!(Int16Type),
        DataType::Int32 => prim!(Int32Type),
        DataType::Int64 => prim!(Int64Type),
        DataType::UInt8 => prim!(UInt8Type),
        DataType::UInt16 => prim!(UInt16Type),
        DataType::UInt32 => prim!(UInt32Type),
        DataType::UInt64 => prim!(UInt64Type),
        t => return Err(err_at(path, format!("expected numbers, found {t}"))),
    })
}

/// A step run on each source batch before the geometry conversion, with the schema of
/// the batches it returns (the raster import's footprints, `raster.rs`).
pub(crate) type PreStep<'a> = (SchemaRef, &'a mut dyn FnMut(RecordBatch) -> Result<RecordBatch>);

/// A lakehouse source as an Arrow source of the hub. The source is read once through the
/// [`Converter`], which learns each geometry column's CRS from its values (SRIDs) and its
/// covering from GeoMesa companions; the converted batches are kept in memory while they
/// fit `budget` bytes, and read and converted again otherwise (`reopen`: a source with a
/// `pre` step is kept whole — its step has effects). Nothing is written to a temporary
/// file.
pub(crate) fn lake_source<'a>(
    mut source: Source,
    reopen: Option<Box<dyn FnMut() -> Result<Source> + 'a>>,
    opts: &'a LakeOptions,
    budget: usize,
    report: &mut LakeReport,
    mut pre: Option<PreStep<'_>>,
) -> Result<Cached<'a>> {
    let path = source.path.clone();
    let in_schema = pre.as_ref().map(|p| p.0.clone()).unwrap_or_else(|| source.schema.clone());
    let mut conv = Converter::new(&path, in_schema.clone(), opts, &source.geometry)?;
    let budget = if pre.is_some() || reopen.is_none() { usize::MAX } else { budget };
    let mut kept: Option<Vec<RecordBatch>> = Some(Vec::new());
    let mut size = 0usize;
    let mut rows = 0u64;
    for b in source.batches.by_ref() {
        let b = match pre.as_mut() {
            Some((_, f)) => f(b?)?,
            None => b?,
        };
        let b = conv.convert(&b)?;
        if b.num_rows() == 0 {
            continue;
        }
        rows += b.num_rows() as u64;
        if let Some(k) = kept.as_mut() {
            size = size.saturating_add(b.get_array_memory_size());
            if size <= budget {
                k.push(b);
            } else {
                kept = None;
            }
        }
    }
    report.source = source.describe.clone();
    report.files_read = source.files_read();
    report.files_skipped = source.files_skipped;
    report.warnings.extend(source.warnings.iter().cloned());
    let geo = conv.finish(report)?;
    let mut findings = Vec::new();
    let g = crate::convert::hub::meta::parse_geo(&path, &geo, &mut findings, &|_| None)?;
    let geometry = g
        .columns
        .into_iter()
        .map(|m| {
            let how = report.geometry.iter().find(|(n, _)| *n == m.name).map(|(_, h)| h.clone()).unwrap_or_else(|| "WKB".into());
            GeoField { meta: m, source: how, crs_text: None }
        })
        .collect();
    let described = SourceSchema { path: path.clone(), schema: conv.schema(), geometry, rows: Some(rows), findings, geoparquet_version: None, native_types: false };
    let again: Option<Reopen<'a>> = match (kept.is_some(), reopen) {
        (false, Some(mut open)) => {
            let found = source.geometry.clone();
            Some(Box::new(move || {
                let s = open()?;
                let mut c = Converter::new(&s.path, s.schema.clone(), opts, &found)?;
                let it = s.batches.map(move |b| c.convert(&b?)).filter(|b| !matches!(b, Ok(b) if b.num_rows() == 0));
                Ok(Box::new(it) as Batches<'a>)
            }))
        }
        _ => None,
    };
    Ok(Cached::from_read(described, kept, again))
}

/// Import a lakehouse source (see [`open_source`]) into `target`.
pub fn import_lake_into(input: &Path, target: ImportTarget<'_>, iopts: &ImportOptions, opts: &LakeOptions) -> Result<(ImportReport, LakeReport)> {
    let source = open_source(input, opts)?;
    let mut report = LakeReport::default();
    let reopen: Box<dyn FnMut() -> Result<Source> + '_> = Box::new(move || open_source(input, opts));
    let mut src = lake_source(source, Some(reopen), opts, iopts.layout.sort_memory, &mut report, None)?;
    let r = import(&mut src, target, iopts)?;
    Ok((r, report))
}

/// Import a lakehouse source (see [`open_source`]) as a new Marquet table.
pub fn import_lake(input: &Path, file: &File, iopts: &ImportOptions, opts: &LakeOptions) -> Result<(ImportReport, LakeReport)> {
    import_lake_into(input, ImportTarget::New(file), iopts, opts)
}


/// Does `input` need the lakehouse reader (see the module doc)?
pub fn wants_lake(input: &Path, opts: &LakeOptions) -> Result<bool> {
    Ok(super::source::kind_of(input, opts)?.is_some())
}

/// The table name for a lakehouse source: the table directory's name for Iceberg.
pub(crate) fn table_name(input: &Path) -> String {
    let name = input.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if name.ends_with(".metadata.json") {
        if let Some(t) = input.parent().and_then(|m| m.parent()) {
            return crate::convert::format::default_table_name(&t.with_extension("x"));
        }
    }
    if input.is_dir() {
        return crate::convert::format::default_table_name(&input.with_extension("x"));
    }
    crate::convert::format::default_table_name(input)
}

