//! The way back: a raster footprint table and its arrays as Havasu `v1` Parquet — rows in
//! source order (`source_row`), each raster column a `v1` group whose in-db bands are the
//! array's planes byte for byte, out-db bands their references, the other columns as the
//! Arrow export reads them (footprints, covering columns and the raster facts dropped).

use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, UInt32Array};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

use super::read::{raster_columns, read_rasters};
use super::{model, COLUMN_SUFFIXES, SOURCE_ROW};
use crate::convert::hub::arrow::ArrowPlan;
use crate::error::{MarquetError, Result};
use crate::h5col::File;
use crate::marquet::MarquetTable;

/// Rows per written batch and row group (each holds its rasters' pixels).
const BATCH: usize = 16;

/// What [`export_rasters`] wrote.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RasterExport {
    /// Rows written.
    pub rows: u64,
    /// The raster columns written as `v1` groups.
    pub raster_columns: Vec<String>,
    /// Non-null rasters written.
    pub rasters: u64,
}

/// Write the raster footprint table `table` of `file` as Havasu `v1` Parquet at `output`.
pub fn export_rasters(file: &File, table: &str, output: &Path) -> Result<RasterExport> {
    Ok(write_parquet(file, table, output, false)?.0)
}

/// The union of raster bounds (`xmin > xmax`: across the antimeridian) as one box in the
/// same convention: the plain union, or — when some box crosses — the union on the
/// longitudes shifted east of the crossing, whichever is narrower.
pub fn union_bounds(boxes: &[[f64; 4]]) -> Option<[f64; 4]> {
    let first = boxes.first()?;
    let (y0, y1) = boxes.iter().fold((first[1], first[3]), |(a, b), x| (a.min(x[1]), b.max(x[3])));
    let plain = boxes.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| if x[0] > x[2] { (-180f64, 180f64) } else { (a.min(x[0]), b.max(x[2])) });
    let mut best = [plain.0, y0, plain.1, y1];
    if boxes.iter().any(|x| x[0] > x[2]) {
        // Longitudes in [0, 360): a crossing box is [x0, x1 + 360]; a box west of 0 moves
        // east by 360; a box spanning 0 cannot be shifted.
        let mut lo = f64::INFINITY;
        let mut hi = f64::NEG_INFINITY;
        let mut ok = true;
        for x in boxes {
            let (a, b) = if x[0] > x[2] {
                (x[0], x[2] + 360.0)
            } else if x[2] < 0.0 {
                (x[0] + 360.0, x[2] + 360.0)
            } else if x[0] >= 0.0 {
                (x[0], x[2])
            } else {
                ok = false;
                break;
            };
            lo = lo.min(a);
            hi = hi.max(b);
        }
        if ok && hi - lo < best[2] - best[0] {
            best = [lo, y0, if hi > 180.0 { hi - 360.0 } else { hi }, y1];
        }
    }
    Some(best)
}

/// What [`write_parquet`] learnt besides the export: the Arrow fields written and, per
/// raster column, the union of its rasters' bounds.
pub(crate) struct Written {
    pub(crate) fields: Vec<Field>,
    pub(crate) bounds: std::collections::HashMap<String, Option<[f64; 4]>>,
}

/// [`export_rasters`], with Parquet field ids (1, 2, ... for the root columns) when
/// `ids`, and the facts an Iceberg table needs.
pub(crate) fn write_parquet(file: &File, table: &str, output: &Path, ids: bool) -> Result<(RasterExport, Written)> {
    let t = MarquetTable::open(file, table)?;
    let rcols = raster_columns(&t)?;
    if rcols.is_empty() {
        return Err(MarquetError::InvalidArgument(format!("{table}: no raster footprint column (a table written by the raster import)")));
    }
    let all = ArrowPlan::new(&t, None, false)?;
    let mut drop: Vec<String> = vec![SOURCE_ROW.to_string()];
    for g in &all.geometry_columns {
        if let Some(c) = &g.covering {
            drop.push(c.clone());
        }
    }
    for c in &rcols {
        drop.extend(COLUMN_SUFFIXES.iter().map(|s| format!("{c}_{s}")));
    }
    let names: Vec<String> = all.schema().fields().iter().map(|f| f.name().clone()).filter(|n| !drop.contains(n)).collect();
    let plan = ArrowPlan::new(&t, Some(&names), false)?;
    let mut fields: Vec<Field> = Vec::new();
    for (i, f) in plan.schema().fields().iter().enumerate() {
        let mut nf = if rcols.contains(f.name()) { Field::new(f.name(), model::raster_type(), true) } else { f.as_ref().clone() };
        if ids {
            let mut md = nf.metadata().clone();
            md.insert(super::super::PARQUET_FIELD_ID.to_string(), (i + 1).to_string());
            nf = nf.with_metadata(md);
        }
        fields.push(nf);
    }
    let mut boxes: std::collections::HashMap<String, Vec<[f64; 4]>> = rcols.iter().map(|c| (c.clone(), Vec::new())).collect();
    let mut fp = super::footprint::Footprints::default();
    let schema = Arc::new(Schema::new(fields));
    // Rows in source order.
    let n = t.nrows()?;
    let mut order: Vec<u64> = (0..n).collect();
    if t.table().column_names()?.iter().any(|c| c == SOURCE_ROW) {
        let sp = ArrowPlan::new(&t, Some(&[SOURCE_ROW.to_string()]), false)?;
        let mut src: Vec<i64> = Vec::with_capacity(n as usize);
        let mut s = 0u64;
        while s < n {
            let e = (s + 65_536).min(n);
            let b = sp.read_range(&t, s, e)?;
            let a = arrow_cast::cast(b.column(0), &DataType::Int64).map_err(|e| crate::convert::err_at(table, e))?;
            src.extend(arrow_array::cast::AsArray::as_primitive::<arrow_array::types::Int64Type>(&a).iter().map(|v| v.unwrap_or(i64::MAX)));
            s = e;
        }
        order.sort_by_key(|&r| (src[r as usize], r));
    }
    let p = output.display().to_string();
    let f = std::fs::File::create(output).map_err(|e| MarquetError::Io { path: p.clone(), source: e })?;
    let props = WriterProperties::builder().set_compression(Compression::ZSTD(Default::default())).set_max_row_group_row_count(Some(BATCH)).build();
    let mut w = ArrowWriter::try_new(f, schema.clone(), Some(props)).map_err(|e| super::super::pq_err(&p, e))?;
    let mut out = RasterExport { raster_columns: rcols.clone(), ..Default::default() };
    for chunk in order.chunks(BATCH) {
        let mut sorted = chunk.to_vec();
        sorted.sort_unstable();
        let parts = plan.take(&t, &sorted, usize::MAX)?;
        let b = match parts.len() {
            0 => RecordBatch::new_empty(plan.schema()),
            1 => parts.into_iter().next().unwrap_or_else(|| RecordBatch::new_empty(plan.schema())),
            _ => arrow_select::concat::concat_batches(&plan.schema(), &parts).map_err(|e| crate::convert::err_at(table, e))?,
        };
        // Back to the chunk's (source) order.
        let pos: Vec<u32> = chunk.iter().map(|r| sorted.binary_search(r).unwrap_or(0) as u32).collect();
        let b = arrow_select::take::take_record_batch(&b, &UInt32Array::from(pos)).map_err(|e| crate::convert::err_at(table, e))?;
        let mut cols: Vec<ArrayRef> = Vec::with_capacity(schema.fields().len());
        for (i, f) in plan.schema().fields().iter().enumerate() {
            if rcols.contains(f.name()) {
                let rs = read_rasters(file, &t, f.name(), chunk)?;
                let rasters: Vec<Option<model::Raster>> = rs.into_iter().map(|r| r.raster).collect();
                for r in rasters.iter().flatten() {
                    if let Ok(Some(b)) = fp.bounds(r) {
                        boxes.entry(f.name().clone()).or_default().push(b);
                    }
                }
                out.rasters += rasters.iter().filter(|r| r.is_some()).count() as u64;
                cols.push(model::encode_column(&rasters)?);
            } else {
                cols.push(b.column(i).clone());
            }
        }
        let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(chunk.len()));
        let rb = RecordBatch::try_new_with_options(schema.clone(), cols, &opts).map_err(|e| super::super::arrow_err(&p, e))?;
        w.write(&rb).map_err(|e| super::super::pq_err(&p, e))?;
        out.rows += chunk.len() as u64;
    }
    w.close().map_err(|e| super::super::pq_err(&p, e))?;
    let bounds = boxes.into_iter().map(|(c, b)| (c, union_bounds(&b))).collect();
    Ok((out, Written { fields: schema.fields().iter().map(|f| f.as_ref().clone()).collect(), bounds }))
}

#[cfg(test)]
mod tests {
    use super::union_bounds;

    #[test]
    fn unions() {
        assert_eq!(union_bounds(&[]), None);
        assert_eq!(union_bounds(&[[0.0, 0.0, 1.0, 1.0], [5.0, -1.0, 6.0, 0.5]]), Some([0.0, -1.0, 6.0, 1.0]));
        // A crossing box and one just east of the antimeridian: still crossing, narrow.
        assert_eq!(union_bounds(&[[170.0, 0.0, -170.0, 1.0], [-175.0, 0.0, -160.0, 1.0]]), Some([170.0, 0.0, -160.0, 1.0]));
        // A box spanning 0 next to a crossing one: every longitude.
        assert_eq!(union_bounds(&[[170.0, 0.0, -170.0, 1.0], [-10.0, 0.0, 10.0, 1.0]]), Some([-180.0, 0.0, 180.0, 1.0]));
    }
}
