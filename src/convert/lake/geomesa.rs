//! GeoMesa's Trino layout (GeoMesa user manual §22.1, "Trino Data Store Design"; see
//! `/work/shared/spec/related/geomesa-trino-design.txt`): each WKB geometry column `<col>`
//! has the companions `__<col>_bbox__` ROW(xmin, ymin, xmax, ymax) of REAL and a
//! hex-encoded space-filling-curve value, `__<col>_z2__` for points and `__<col>_xz2__`
//! for other geometries.
//!
//! The curves, as GeoMesa defines them (read in locationtech/geomesa, not copied):
//! - Z2: `geomesa-z3/.../curve/Z2SFC.scala` (31 bits per axis) over
//!   `NormalizedDimension.BitNormalizedDimension` — `floor((v - min) * (2^31 / (max -
//!   min)))`, `2^31 - 1` at `max` — lon in [-180, 180], lat in [-90, 90], interleaved by
//!   sfcurve's `Z2` (x in the even bits, y in the odd bits); out-of-range coordinates are
//!   clamped, as `interop/SpaceFillingCurves.scala` does.
//! - XZ2: `geomesa-z3/.../curve/XZ2SFC.scala` (Böhm, Klump, Kriegel, "XZ-Ordering"):
//!   sequence code of the box's lower-left corner, of length `l1` or `l1 + 1` where
//!   `l1 = floor(log(max extent) / log(0.5))`, at resolution `g = 12` (the Trino
//!   connector's `XZ2Transform.G`).
//! - Hex (the Trino connector's `iceberg/transforms/Z2Transform.java` and
//!   `XZ2Transform.java`): 16 lowercase hex digits of `z2 << 2` (so the first digit
//!   holds the four hemisphere bits) and of the XZ2 code unshifted. Note: the newer
//!   `interop/SpaceFillingCurves.scala` delegates to `XZ2SFC.hexEncode`, described as
//!   left-aligned; where the two disagree we follow the Trino connector that reads the
//!   column, and on import the value is dropped anyway (derived data).
//!
//! [`export_geomesa`] writes that layout, rows ordered by the primary column's curve value
//! so that each row group covers a narrow z-range (GeoMesa's three pruning layers:
//! z-prefix partitions, bbox column statistics, row bbox).

use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::StringBuilder;
use arrow_array::{Array, ArrayRef, BinaryArray, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::arrow_writer::ArrowWriterOptions;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

use super::converter::{bbox_array, bbox_type, f32_down, f32_up};
use crate::error::{MarquetError, Result};
use crate::convert::hub::arrow::ArrowPlan;
use crate::convert::ExportReport;
use crate::convert::hub::sort::HilbertSorter;
use crate::convert::{err_at, DEFAULT_BATCH_ROWS};
use super::options::{arrow_err, pq_err};
use crate::h5col::File;
use crate::marquet::{Crs, MarquetTable};
use crate::spec::{BBox, GeometryKind};
use crate::wkb;

/// Bits per axis of GeoMesa's default Z2 curve.
pub const Z2_BITS: u32 = 31;
/// Resolution of the XZ2 curve in GeoMesa's Trino layout.
pub const XZ2_G: u32 = 12;

/// GeoMesa's `BitNormalizedDimension.normalize`, with the interop facade's clamping.
fn normalize(v: f64, min: f64, max: f64, bits: u32) -> u64 {
    let bins = 1u64 << bits;
    let v = v.clamp(min, max);
    if v >= max {
        return bins - 1;
    }
    let normalizer = bins as f64 / (max - min);
    (((v - min) * normalizer).floor() as u64).min(bins - 1)
}

/// Spread the low 31 bits of `x` to the even bits (sfcurve `Z2.split`).
fn split(x: u64) -> u64 {
    let mut x = x & 0x7fff_ffff;
    x = (x | x << 16) & 0x0000_ffff_0000_ffff;
    x = (x | x << 8) & 0x00ff_00ff_00ff_00ff;
    x = (x | x << 4) & 0x0f0f_0f0f_0f0f_0f0f;
    x = (x | x << 2) & 0x3333_3333_3333_3333;
    x = (x | x << 1) & 0x5555_5555_5555_5555;
    x
}

/// GeoMesa `Z2SFC.index(lon, lat)` (62-bit value).
pub fn z2_index(lon: f64, lat: f64) -> u64 {
    let x = normalize(lon, -180.0, 180.0, Z2_BITS);
    let y = normalize(lat, -90.0, 90.0, Z2_BITS);
    split(x) | split(y) << 1
}

/// The `__<col>_z2__` value of a point: 16 hex digits of `z2 << 2`.
pub fn z2_hex(lon: f64, lat: f64) -> String {
    format!("{:016x}", z2_index(lon, lat) << 2)
}

/// GeoMesa `XZ2SFC(g).index(xmin, ymin, xmax, ymax)` on lon/lat (clamped).
pub fn xz2_index(b: &BBox, g: u32) -> u64 {
    let nx0 = (b.xmin.clamp(-180.0, 180.0) + 180.0) / 360.0;
    let ny0 = (b.ymin.clamp(-90.0, 90.0) + 90.0) / 180.0;
    let nx1 = (b.xmax.clamp(-180.0, 180.0) + 180.0) / 360.0;
    let ny1 = (b.ymax.clamp(-90.0, 90.0) + 90.0) / 180.0;
    let max_dim = (nx1 - nx0).max(ny1 - ny0);
    // floor(log(0) / log(0.5)) = +inf: a point takes the full length, as in Scala's toInt.
    let l1f = (max_dim.ln() / 0.5f64.ln()).floor();
    let l1: i64 = if l1f.is_nan() { 0 } else if l1f >= g as f64 { g as i64 } else { l1f as i64 };
    let length = if l1 >= g as i64 {
        g as i64
    } else {
        let w2 = 0.5f64.powi((l1 + 1) as i32);
        let fits = |min: f64, max: f64| max <= (min / w2).floor() * w2 + 2.0 * w2;
        if fits(nx0, nx1) && fits(ny0, ny1) {
            l1 + 1
        } else {
            l1
        }
    };
    sequence_code(nx0, ny0, length.max(0) as u32, g)
}

/// XZ2SFC `sequenceCode` (Definition 2 of the XZ-ordering paper).
fn sequence_code(x: f64, y: f64, length: u32, g: u32) -> u64 {
    let (mut xmin, mut ymin, mut xmax, mut ymax) = (0.0f64, 0.0f64, 1.0f64, 1.0f64);
    let mut cs = 0u64;
    for i in 0..length {
        let xc = (xmin + xmax) / 2.0;
        let yc = (ymin + ymax) / 2.0;
        let step = (4u64.pow(g - i) - 1) / 3;
        match (x < xc, y < yc) {
            (true, true) => {
                cs += 1;
                xmax = xc;
                ymax = yc;
            }
            (false, true) => {
                cs += 1 + step;
                xmin = xc;
                ymax = yc;
            }
            (true, false) => {
                cs += 1 + 2 * step;
                xmax = xc;
                ymin = yc;
            }
            (false, false) => {
                cs += 1 + 3 * step;
                xmin = xc;
                ymin = yc;
            }
        }
    }
    cs
}

/// The `__<col>_xz2__` value of a box: 16 hex digits of the XZ2 code (g = 12).
pub fn xz2_hex(b: &BBox) -> String {
    format!("{:016x}", xz2_index(b, XZ2_G))
}

/// Options for [`export_geomesa`].
#[derive(Debug, Clone)]
pub struct GeoMesaOptions {
    /// Rows per row group.
    pub row_group_rows: usize,
    /// Memory budget of the sort by curve value.
    pub sort_memory: usize,
    /// Hears the rows written so far.
    pub progress: crate::Progress,
}

impl Default for GeoMesaOptions {
    fn default() -> Self {
        GeoMesaOptions { row_group_rows: DEFAULT_BATCH_ROWS, sort_memory: 256 << 20, progress: crate::Progress::default() }
    }
}

struct GeomOut {
    name: String,
    /// Index of the WKB field in the plan's batches.
    idx: usize,
    points: bool,
}

/// Curve key and box of one WKB value (`None` for null / empty).
fn key_of(v: Option<&[u8]>, points: bool) -> Result<Option<(u64, BBox)>> {
    let Some(v) = v else { return Ok(None) };
    let info = wkb::scan(v).map_err(|e| MarquetError::InvalidArgument(e.to_string()))?;
    if info.is_empty {
        return Ok(None);
    }
    let b = info.bbox;
    Ok(Some((if points { z2_index(b.xmin, b.ymin) } else { xz2_index(&b, XZ2_G) }, b)))
}

/// Export table `table` of `file` as Parquet in GeoMesa's Trino layout (see the module
/// doc): geometry columns as WKB with their companions, covering columns replaced by the
/// `__<col>_bbox__` companions, other columns as [`super::super::export_geoparquet`]
/// maps them; rows in the primary column's curve order; a GeoParquet 1.1 `geo` key
/// naming the bbox companions as coverings, so GeoParquet readers see the same file.
pub fn export_geomesa(file: &File, table: &str, output: &Path, opts: &GeoMesaOptions) -> Result<ExportReport> {
    let path = output.display().to_string();
    let t = MarquetTable::open(file, table)?;
    let plan = ArrowPlan::new(&t, None, false)?;
    let mut report = ExportReport { version: "1.1.0".into(), ..Default::default() };
    report.skipped.extend(plan.skipped.iter().cloned());
    let coverings: Vec<String> = plan.geometry_columns.iter().filter_map(|g| g.covering.clone()).collect();
    let schema = plan.schema();
    let mut geoms: Vec<GeomOut> = Vec::new();
    for g in &plan.geometry_columns {
        let lonlat = matches!(g.crs, Crs::Default) || g.crs.id().is_some_and(|(a, c)| (a == "EPSG" && c == "4326") || (a == "OGC" && c == "CRS84"));
        if !lonlat {
            return Err(MarquetError::Unsupported(format!(
                "{}: column {}: CRS {} — GeoMesa's Z2/XZ2 curves are defined on longitude/latitude (EPSG:4326); import with --crs OGC:CRS84 when the coordinates are longitude/latitude",
                t.path(),
                g.name,
                g.crs.display_name()
            )));
        }
        let idx = schema.index_of(&g.name).map_err(|e| arrow_err(&path, e))?;
        let points = g.types.as_ref().is_some_and(|ts| !ts.is_empty() && ts.iter().all(|t| t.kind == GeometryKind::Point));
        geoms.push(GeomOut { name: g.name.clone(), idx, points });
    }
    let Some(primary) = geoms.first() else {
        return Err(MarquetError::InvalidArgument(format!("{}: no geometry column to index", t.path())));
    };
    let n = t.nrows()?;
    // Pass 1: the primary column's curve keys (nulls and empties last).
    let mut keys: Vec<u64> = Vec::with_capacity(n.min(1 << 28) as usize);
    let step = DEFAULT_BATCH_ROWS as u64;
    let mut s = 0;
    while s < n {
        let e = (s + step).min(n);
        let w = t.read_wkb(&primary.name, s, e)?;
        for i in 0..(e - s) as usize {
            keys.push(key_of(w.get(i), primary.points)?.map_or(u64::MAX, |k| k.0));
        }
        s = e;
    }
    // Output schema.
    let mut fields: Vec<Field> = Vec::new();
    for (i, f) in schema.fields().iter().enumerate() {
        if coverings.contains(f.name()) {
            let of = plan.geometry_columns.iter().find(|g| g.covering.as_deref() == Some(f.name().as_str())).map(|g| g.name.clone()).unwrap_or_default();
            report.skipped.push((f.name().clone(), format!("covering column: replaced by the companion __{of}_bbox__")));
            continue;
        }
        fields.push(f.as_ref().clone());
        if let Some(g) = geoms.iter().find(|g| g.idx == i) {
            fields.push(Field::new(format!("__{}_bbox__", g.name), bbox_type(true), true));
            fields.push(Field::new(format!("__{}_{}__", g.name, if g.points { "z2" } else { "xz2" }), DataType::Utf8, true));
        }
    }
    let out_schema = Arc::new(Schema::new(fields));
    let mut geo_cols = serde_json::Map::new();
    for g in &plan.geometry_columns {
        let c = format!("__{}_bbox__", g.name);
        let mut m = serde_json::Map::new();
        m.insert("encoding".into(), "WKB".into());
        m.insert("geometry_types".into(), serde_json::json!(g.types.clone().unwrap_or_default().iter().map(|t| t.name()).collect::<Vec<_>>()));
        m.insert("covering".into(), serde_json::json!({"bbox": {"xmin": [c, "xmin"], "ymin": [c, "ymin"], "xmax": [c, "xmax"], "ymax": [c, "ymax"]}}));
        geo_cols.insert(g.name.clone(), serde_json::Value::Object(m));
        report.geometry_columns.push((g.name.clone(), g.types.clone().unwrap_or_default()));
    }
    let geo = serde_json::json!({"version": "1.1.0", "primary_column": primary.name, "columns": geo_cols}).to_string();

    let f = std::fs::File::create(output).map_err(|e| MarquetError::Io { path: path.clone(), source: e })?;
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_max_row_group_row_count(Some(opts.row_group_rows.max(1)))
        .build();
    let wopts = ArrowWriterOptions::new().with_properties(props).with_skip_arrow_metadata(true);
    let mut w = ArrowWriter::try_new_with_options(f, out_schema.clone(), wopts).map_err(|e| pq_err(&path, e))?;
    // Pass 2: rows into curve order (bounded memory), then the companions.
    let mut sorter = HilbertSorter::new(keys, opts.sort_memory, crate::convert::hub::import::spill_dir(file));
    let mut s = 0;
    while s < n {
        let e = (s + step).min(n);
        sorter.push(plan.read_range(&t, s, e)?)?;
        s = e;
    }
    let mut done = 0u64;
    for b in sorter.finish(opts.row_group_rows.max(1))? {
        let b = b?;
        let mut cols: Vec<ArrayRef> = Vec::new();
        for (i, f) in schema.fields().iter().enumerate() {
            if coverings.contains(f.name()) {
                continue;
            }
            cols.push(b.column(i).clone());
            if let Some(g) = geoms.iter().find(|g| g.idx == i) {
                let a = b.column(i).as_any().downcast_ref::<BinaryArray>().ok_or_else(|| err_at(&path, "geometry column is not binary"))?;
                let mut bx: [Vec<Option<f64>>; 4] = Default::default();
                let mut hex = StringBuilder::new();
                for r in 0..a.len() {
                    let v = (!a.is_null(r)).then(|| a.value(r));
                    match key_of(v, g.points).map_err(|e| err_at(&path, format!("column {} row {r}: {e}", g.name)))? {
                        Some((k, bb)) => {
                            // REAL bounds rounded outward, so each row's box contains it.
                            bx[0].push(Some(f32_down(bb.xmin) as f64));
                            bx[1].push(Some(f32_down(bb.ymin) as f64));
                            bx[2].push(Some(f32_up(bb.xmax) as f64));
                            bx[3].push(Some(f32_up(bb.ymax) as f64));
                            hex.append_value(if g.points { format!("{:016x}", k << 2) } else { format!("{k:016x}") });
                        }
                        None => {
                            bx.iter_mut().for_each(|c| c.push(None));
                            hex.append_null();
                        }
                    }
                }
                cols.push(bbox_array(&bx, true)?);
                cols.push(Arc::new(hex.finish()));
            }
        }
        let ob = RecordBatch::try_new(out_schema.clone(), cols).map_err(|e| arrow_err(&path, e))?;
        w.write(&ob).map_err(|e| pq_err(&path, e))?;
        // One row group per sorted batch: each holds a contiguous z-range.
        w.flush().map_err(|e| pq_err(&path, e))?;
        done += ob.num_rows() as u64;
        opts.progress.report(done, Some(n));
    }
    w.append_key_value_metadata(KeyValue::new("geo".to_string(), geo));
    let md = w.close().map_err(|e| pq_err(&path, e))?;
    report.rows = done;
    report.row_groups = md.num_row_groups();
    report.notes.push(format!(
        "GeoMesa Trino layout: {} (rows in {} curve order)",
        geoms.iter().map(|g| format!("{} + __{}_bbox__ + __{}_{}__", g.name, g.name, g.name, if g.points { "z2" } else { "xz2" })).collect::<Vec<_>>().join(", "),
        if primary.points { "Z2" } else { "XZ2" }
    ));
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn z2_values() {
        // The corners and the centre, derived from Z2SFC's definition: 31 bits per axis,
        // interleaved x-first, shifted left by 2 for the hex column.
        assert_eq!(z2_index(-180.0, -90.0), 0);
        assert_eq!(z2_hex(-180.0, -90.0), "0000000000000000");
        assert_eq!(z2_index(180.0, 90.0), (1u64 << 62) - 1);
        assert_eq!(z2_hex(180.0, 90.0), "fffffffffffffffc");
        assert_eq!(z2_hex(0.0, 0.0), "c000000000000000");
        // The first hex digit is the hemisphere quadrant pair (Z2Transform: truncate(1) is
        // a 4x4 grid): lon in [-90, 0) -> x bits 01, lat in [45, 90) -> y bits 11.
        assert_eq!(&z2_hex(-45.0, 60.0)[..1], "b");
        // sfcurve Z2Test "split" cases: every bit b of the input lands at 2b.
        for l in [0xff_ffffu64, 0, 1, 0x0c0f02, 0x802] {
            let mut want = 0u64;
            for b in 0..31 {
                if l >> b & 1 == 1 {
                    want |= 1 << (2 * b);
                }
            }
            assert_eq!(split(l), want, "{l:#x}");
        }
        // Out of range clamps (SpaceFillingCurvesTest).
        assert_eq!(z2_index(-180.0000001, 39.0), z2_index(-180.0, 39.0));
        assert_eq!(z2_index(116.0, 90.0000001), z2_index(116.0, 90.0));
    }

    #[test]
    fn xz2_values() {
        // The whole world: l1 = 0, but the box fits the extended element of the first
        // level-1 quadrant (1 <= floor(0 / 0.5) * 0.5 + 2 * 0.5), so length 1, code 1.
        assert_eq!(xz2_index(&BBox::xy(-180.0, -90.0, 180.0, 90.0), 12), 1);
        // A point at the lower-left corner: length g, quadrant 0 at every level: 12.
        assert_eq!(xz2_index(&BBox::xy(-180.0, -90.0, -180.0, -90.0), 12), 12);
        assert_eq!(xz2_hex(&BBox::xy(-180.0, -90.0, -180.0, -90.0)), "000000000000000c");
        // At the upper-right corner: quadrant 3 at every level, the largest code,
        // (4^13 - 4) / 3 = 22,369,620 — "roughly [0, 22M]" (XZ2Transform's doc).
        assert_eq!(xz2_index(&BBox::xy(180.0, 90.0, 180.0, 90.0), 12), 22_369_620);
        // A 1x1 degree box near Washington (SpaceFillingCurvesTest's): its largest extent
        // in normalised units is 1/180, so l1 = 7 and the length is 7 or 8 by the fit test:
        let b = BBox::xy(-77.0, 38.0, -76.0, 39.0);
        let code = xz2_index(&b, 12);
        let (nx, ny) = ((-77.0 + 180.0) / 360.0, (38.0 + 90.0) / 180.0);
        let l = {
            let w2 = 0.5f64.powi(8);
            let fits = |min: f64, max: f64| max <= (min / w2).floor() * w2 + 2.0 * w2;
            if fits(nx, (-76.0 + 180.0) / 360.0) && fits(ny, (39.0 + 90.0) / 180.0) {
                8
            } else {
                7
            }
        };
        assert_eq!(code, sequence_code(nx, ny, l, 12));
        // A point's code is at full length and grows with the quadrant order.
        assert!(xz2_index(&BBox::xy(-1.0, -1.0, -1.0, -1.0), 12) < xz2_index(&BBox::xy(1.0, -1.0, 1.0, -1.0), 12));
    }
}
