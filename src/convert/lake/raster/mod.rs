//! Havasu rasters (issue #37): raster columns of Iceberg tables and Parquet files into HDF5
//! arrays beside a Marquet footprint table, and back.
//!
//! A source column is a raster column when its type is Havasu's `v1` group (a struct with
//! `width`, `height`, `num_bands` and `geo_reference`; Iceberg marks it with
//! `havasu.raster-encoding: "v1"`). Each raster column `C` becomes, in the table:
//!
//! - `C`: the footprint, a polygon in OGC:CRS84 by the spec's raster-bounds rules
//!   (`footprint`) — a multipolygon of two parts across the antimeridian, all longitudes
//!   over a pole, null for null rasters and rasters without a CRS — indexed like any
//!   geometry column (R-tree, covering, block boxes);
//! - `C_array`: the HDF5 path of the raster's array, `<table>.rasters/C/<source row>`,
//!   a `bands × height × width` dataset of the in-db bands' pixel type (null when the raster
//!   is null or has no in-db band);
//! - `C_width`, `C_height`, `C_num_bands`, `C_crs_wkt`, and the six geo-reference numbers
//!   `C_scale_x`, `C_scale_y`, `C_skew_x`, `C_skew_y`, `C_upperleft_x`, `C_upperleft_y`;
//! - per band, as lists: `C_pixel_types` (names), `C_no_data` (the value as text, empty
//!   when none), `C_out_db_urls` (empty for in-db bands) and `C_out_db_band_nos` (-1 for
//!   in-db bands);
//!
//! and one `source_row` column (the row's position in the source) orders the way back.
//! The array's attributes are in [`crate::spec::names`] (`RASTER_*`).

internal_mod! {
    export;
    footprint;
    iceberg_out;
    model;
}
pub mod read;

use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{Float64Builder, Int32Builder, Int64Builder, ListBuilder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use super::{FoundColumn, LakeOptions, LakeReport, Source, SourceGeometry, TextOrBinary};
use crate::convert::hub::import::{import, ImportOptions, ImportReport};
use crate::convert::hub::target::ImportTarget;
use crate::error::{MarquetError, Result};
use crate::h5col::{File, Filter, Grid, GridAttr, GridSpec};
use crate::spec::names;
use footprint::Footprints;

/// Rows per batch read from a raster source: a batch holds its rasters' pixels.
pub const BATCH_ROWS: usize = 8;

pub use model::{Band, GeoReference, PixelType, Raster, COLUMN_SUFFIXES, SOURCE_ROW};

/// The group of a table's raster arrays.
pub fn arrays_group(table: &str) -> String {
    format!("{}{}", crate::h5col::normalize_table_path(table), names::RASTER_ARRAYS_SUFFIX)
}

/// The raster columns of `schema` (Havasu `v1` groups), by index.
pub fn raster_columns(schema: &Schema) -> Vec<usize> {
    schema.fields().iter().enumerate().filter(|(_, f)| model::is_raster_type(f.data_type())).map(|(i, _)| i).collect()
}

fn list_utf8() -> DataType {
    DataType::List(Arc::new(Field::new("item", DataType::Utf8, true)))
}

/// The no-data value of a band as text (empty: none): integers exactly, floats in their
/// shortest round-trip form.
pub fn no_data_text(t: PixelType, nd: Option<&[u8]>) -> String {
    match nd.and_then(|b| t.value(b)) {
        None => String::new(),
        Some(v) if t == PixelType::F32 => format!("{}", v as f32),
        Some(v) => format!("{v}"),
    }
}

/// Turns batches with raster columns into batches with footprints and raster facts, and
/// writes each raster's in-db bands as an array.
struct RasterStep<'a> {
    file: &'a File,
    group: String,
    cols: Vec<usize>,
    input: SchemaRef,
    output: SchemaRef,
    footprints: Footprints,
    window: Option<crate::spec::BBox>,
    path: String,
    row: u64,
    arrays: u64,
    no_crs: u64,
    failed: Vec<(u64, String)>,
    failed_n: u64,
}

impl<'a> RasterStep<'a> {
    fn new(file: &'a File, table: &str, path: &str, input: SchemaRef, cols: Vec<usize>, window: Option<crate::spec::BBox>) -> Result<RasterStep<'a>> {
        let mut fields: Vec<Field> = Vec::new();
        for (i, f) in input.fields().iter().enumerate() {
            if !cols.contains(&i) {
                fields.push(Field::new(f.name(), f.data_type().clone(), true));
                continue;
            }
            let c = f.name();
            fields.push(Field::new(c, DataType::Binary, true));
            for s in COLUMN_SUFFIXES {
                let t = match s {
                    "array" | "crs_wkt" => DataType::Utf8,
                    "width" | "height" | "num_bands" => DataType::Int32,
                    "pixel_types" | "no_data" | "out_db_urls" => list_utf8(),
                    "out_db_band_nos" => DataType::List(Arc::new(Field::new("item", DataType::Int32, true))),
                    _ => DataType::Float64,
                };
                fields.push(Field::new(format!("{c}_{s}"), t, true));
            }
        }
        if fields.iter().any(|f| f.name() == SOURCE_ROW) {
            return Err(MarquetError::InvalidArgument(format!("{path}: a column is named {SOURCE_ROW:?}, the name the raster import gives the source row")));
        }
        let mut seen = std::collections::HashSet::new();
        for f in &fields {
            if !seen.insert(f.name().clone()) {
                return Err(MarquetError::InvalidArgument(format!("{path}: column {:?} of a raster column's facts is also a source column", f.name())));
            }
        }
        fields.push(Field::new(SOURCE_ROW, DataType::Int64, false));
        Ok(RasterStep {
            file,
            group: arrays_group(table),
            cols,
            input,
            output: Arc::new(Schema::new(fields)),
            footprints: Footprints::default(),
            window,
            path: path.to_string(),
            row: 0,
            arrays: 0,
            no_crs: 0,
            failed: Vec::new(),
            failed_n: 0,
        })
    }

    /// Write the array of raster `r` (row `row` of column `col`); its path, or `None` when
    /// it has no in-db band.
    fn write_array(&mut self, col: &str, row: u64, r: &Raster) -> Result<Option<String>> {
        let indb: Vec<(usize, &model::Band)> = r.bands.iter().enumerate().filter(|(_, b)| b.data.is_some()).collect();
        let Some((_, first)) = indb.first() else { return Ok(None) };
        let t = first.pixel_type;
        if let Some((k, b)) = indb.iter().find(|(_, b)| b.pixel_type != t) {
            return Err(MarquetError::Unsupported(format!(
                "{}: column {col} row {row}: in-db band {} is {} but band {} is {}: one array holds one pixel type (the spec: all bands \"should have the same cell data type\")",
                self.path,
                k + 1,
                b.pixel_type.name(),
                indb[0].0 + 1,
                t.name()
            )));
        }
        let (w, h) = (r.width as u64, r.height as u64);
        let mut bytes = Vec::with_capacity((w * h) as usize * t.size() * indb.len());
        for (_, b) in &indb {
            bytes.extend_from_slice(b.data.as_deref().unwrap_or_default());
        }
        let path = format!("{}/{}/{}", self.group, col, row);
        let grid = Grid { dtype: t.dtype(), dims: vec![indb.len() as u64, h, w], bytes };
        let nds: Vec<Option<&Vec<u8>>> = indb.iter().map(|(_, b)| b.no_data.as_ref()).collect();
        let common = nds.first().copied().flatten().filter(|f| nds.iter().all(|n| *n == Some(*f))).cloned();
        let mut filters = Vec::new();
        if t.size() > 1 {
            filters.push(Filter::Shuffle);
        }
        filters.push(Filter::Deflate(4));
        let spec = GridSpec { chunk: Some(vec![1, h.min(256), w.min(256)]), filters, fill: common.clone() };
        let mut attrs: Vec<(&str, GridAttr)> = Vec::new();
        if let Some(wkt) = &r.crs_wkt {
            attrs.push((names::RASTER_SPATIAL_REF, GridAttr::Text(wkt.clone())));
        }
        let gt = r.geo.gdal().iter().map(|v| format!("{v}")).collect::<Vec<_>>().join(" ");
        attrs.push((names::RASTER_GEOTRANSFORM, GridAttr::Text(gt)));
        attrs.push((names::RASTER_GEO_REFERENCE, GridAttr::F64(r.geo.to_array().to_vec())));
        attrs.push((names::RASTER_PIXEL_TYPE, GridAttr::Text(t.name().to_string())));
        attrs.push((names::RASTER_BAND_INDEX, GridAttr::I64(indb.iter().map(|(k, _)| *k as i64).collect())));
        attrs.push((names::RASTER_NO_DATA, GridAttr::Texts(indb.iter().map(|(_, b)| no_data_text(t, b.no_data.as_deref())).collect())));
        if let Some(f) = common {
            attrs.push((names::RASTER_FILL_VALUE, GridAttr::Value(t.dtype(), f)));
        }
        self.file.write_grid(&path, &grid, &spec, &attrs)?;
        self.arrays += 1;
        Ok(Some(path))
    }

    fn step(&mut self, batch: RecordBatch) -> Result<RecordBatch> {
        let n = batch.num_rows();
        let mut out: Vec<ArrayRef> = Vec::with_capacity(self.output.fields().len());
        for i in 0..batch.num_columns() {
            if !self.cols.contains(&i) {
                out.push(batch.column(i).clone());
                continue;
            }
            let col = self.input.field(i).name().clone();
            let rasters = model::decode_column(batch.column(i), &format!("{}: column {col}", self.path), self.row)?;
            let mut fp = arrow_array::builder::BinaryBuilder::new();
            let mut arr = StringBuilder::new();
            let mut ints: Vec<Int32Builder> = (0..3).map(|_| Int32Builder::with_capacity(n)).collect();
            let mut crs = StringBuilder::new();
            let mut geo: Vec<Float64Builder> = (0..6).map(|_| Float64Builder::with_capacity(n)).collect();
            let mut lists: Vec<ListBuilder<StringBuilder>> = (0..3).map(|_| ListBuilder::new(StringBuilder::new())).collect();
            let mut band_nos = ListBuilder::new(Int32Builder::new());
            for (k, r) in rasters.iter().enumerate() {
                let row = self.row + k as u64;
                let Some(r) = r else {
                    fp.append_null();
                    arr.append_null();
                    ints.iter_mut().for_each(|b| b.append_null());
                    crs.append_null();
                    geo.iter_mut().for_each(|b| b.append_null());
                    lists.iter_mut().for_each(|b| b.append_null());
                    band_nos.append_null();
                    continue;
                };
                let foot = match self.footprints.bounds(r) {
                    Ok(Some(b)) => Some(footprint::footprint_wkb(b)),
                    Ok(None) => {
                        self.no_crs += 1;
                        None
                    }
                    Err(e) => {
                        self.failed_n += 1;
                        if self.failed.len() < 5 {
                            self.failed.push((row, e));
                        }
                        None
                    }
                };
                // Rows the window will drop need no array (the converter drops them).
                let kept = match (&self.window, &foot) {
                    (Some(w), Some(f)) => crate::wkb::scan(f).map(|s| s.bbox.intersects_xy(w)).unwrap_or(true),
                    (Some(_), None) => false,
                    (None, _) => true,
                };
                let path = if kept { self.write_array(&col, row, r)? } else { None };
                fp.append_option(foot);
                arr.append_option(path);
                ints[0].append_value(r.width);
                ints[1].append_value(r.height);
                ints[2].append_value(r.bands.len() as i32);
                crs.append_option(r.crs_wkt.as_deref());
                for (g, v) in geo.iter_mut().zip(r.geo.to_array()) {
                    g.append_value(v);
                }
                for b in &r.bands {
                    lists[0].values().append_value(b.pixel_type.name());
                    lists[1].values().append_value(no_data_text(b.pixel_type, b.no_data.as_deref()));
                    lists[2].values().append_value(if b.data.is_some() { "" } else { b.out_db_url.as_deref().unwrap_or("") });
                    band_nos.values().append_value(if b.data.is_some() { -1 } else { b.out_db_band_no.unwrap_or(-1) });
                }
                lists.iter_mut().for_each(|b| b.append(true));
                band_nos.append(true);
            }
            out.push(Arc::new(fp.finish()));
            out.push(Arc::new(arr.finish()));
            for mut b in ints {
                out.push(Arc::new(b.finish()));
            }
            out.push(Arc::new(crs.finish()));
            for mut b in geo {
                out.push(Arc::new(b.finish()));
            }
            for mut b in lists {
                out.push(Arc::new(b.finish()));
            }
            out.push(Arc::new(band_nos.finish()));
        }
        let mut sr = Int64Builder::with_capacity(n);
        for k in 0..n {
            sr.append_value((self.row + k as u64) as i64);
        }
        out.push(Arc::new(sr.finish()));
        self.row += n as u64;
        let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(n));
        RecordBatch::try_new_with_options(self.output.clone(), out, &opts).map_err(|e| super::arrow_err(&self.path, e))
    }

    fn finish(&self, report: &mut LakeReport) {
        let names: Vec<&str> = self.cols.iter().map(|&i| self.input.field(i).name().as_str()).collect();
        report.source.push_str(&format!("; Havasu raster columns {}: {} arrays written to {}", names.join(", "), self.arrays, self.group));
        if self.no_crs > 0 {
            report.warnings.push(format!("{} rasters state no CRS: their footprint is null (they are found by no window)", self.no_crs));
        }
        if self.failed_n > 0 {
            let rows: Vec<String> = self.failed.iter().map(|(r, e)| format!("row {r}: {e}")).collect();
            report.warnings.push(format!(
                "{} rasters' envelopes could not be transformed to OGC:CRS84: their footprint is null ({}{})",
                self.failed_n,
                rows.join("; "),
                if self.failed_n > self.failed.len() as u64 { "; ..." } else { "" }
            ));
        }
    }
}

/// Import a source with Havasu raster columns `cols` (see the module doc) as the table
/// `iopts.table` of `file`, its arrays beside it.
pub fn import_rasters(source: Source, cols: Vec<usize>, file: &File, iopts: &ImportOptions, opts: &LakeOptions) -> Result<(ImportReport, LakeReport)> {
    let mut source = source;
    let mut step = RasterStep::new(file, &iopts.table, &source.path, source.schema.clone(), cols.clone(), opts.bbox)?;
    if file.exists(&step.group)? {
        return Err(MarquetError::InvalidArgument(format!("{}: {} already exists", file.filename(), step.group)));
    }
    // Footprints first (the primary geometry), then the source's own geometry columns.
    let mut found = SourceGeometry::default();
    for &i in &cols {
        found.columns.push(FoundColumn {
            column: source.schema.field(i).name().clone(),
            encoding: Some(TextOrBinary::Wkb),
            crs: Some(serde_json::Value::String("OGC:CRS84".into())),
            edges: None,
            how: "footprint of a Havasu raster (OGC:CRS84, the spec's raster-bounds rules)".into(),
        });
    }
    found.columns.extend(source.geometry.columns.iter().cloned());
    source.geometry = found;
    let mut report = LakeReport::default();
    let schema = step.output.clone();
    let mut src = {
        let mut f = |b: RecordBatch| step.step(b);
        super::lake_source(source, None, opts, usize::MAX, &mut report, Some((schema, &mut f)))?
    };
    step.finish(&mut report);
    let r = import(&mut src, ImportTarget::New(file), iopts)?;
    Ok((r, report))
}

/// The name of the file a conversion is staged for (the staging file is
/// `.<name>.marquet-<pid>-<nanos>.partial.h5` beside it, `convert/stage.rs`).
fn staged_for(output: &Path) -> Option<std::path::PathBuf> {
    let name = output.file_name()?.to_str()?;
    let inner = name.strip_prefix('.')?.strip_suffix(".partial.h5")?;
    let (target, _) = inner.rsplit_once(".marquet-")?;
    Some(output.with_file_name(target))
}

/// [`super::convert_hook`]'s raster branch: a lakehouse source with raster columns into a
/// new HDF5 file. `None` when the source has no raster column.
pub(crate) fn convert_hook(
    input: &Path,
    output: &Path,
    opts: &crate::convert::ConvertOptions,
    fin: Option<crate::convert::Format>,
    fout: Option<crate::convert::Format>,
) -> Result<Option<crate::convert::ConvertReport>> {
    use crate::convert::Format;
    // An output without extension that is new or an empty directory: an Iceberg table.
    let iceberg_out = fout.is_none() && output.extension().is_none() && (!output.exists() || std::fs::read_dir(output).is_ok_and(|mut d| d.next().is_none()));
    if fin == Some(Format::Marquet) && (fout == Some(Format::GeoParquet) || iceberg_out) && !opts.lake.geomesa_export {
        let file = File::open(input)?;
        let table = match &opts.table {
            Some(t) => t.clone(),
            None => crate::convert::hub::tables::single_table_of(&file)?,
        };
        let t = crate::marquet::MarquetTable::open(&file, &table)?;
        if read::raster_columns(&t)?.is_empty() {
            return Ok(None);
        }
        drop(t);
        let existed = output.exists();
        let r = if iceberg_out { iceberg_out::export_iceberg(&file, &table, output) } else { export::export_rasters(&file, &table, output) };
        if r.is_err() {
            if !iceberg_out {
                let _ = std::fs::remove_file(output);
            } else if !existed {
                let _ = std::fs::remove_dir_all(output);
            }
        }
        let r = r?;
        let what = if iceberg_out { "an Iceberg table (format-version 2, raster bounds in the manifest) of Havasu v1 Parquet" } else { "Havasu v1 Parquet" };
        let lake = LakeReport {
            source: format!("{what}: raster columns {} ({} rasters) from the arrays of {}", r.raster_columns.join(", "), r.rasters, arrays_group(&table)),
            rows_read: r.rows,
            rows_kept: r.rows,
            ..Default::default()
        };
        return Ok(Some(crate::convert::ConvertReport { input: input.into(), output: output.into(), table, lake: Some(lake), ..Default::default() }));
    }
    if opts.format.is_some() || opts.lake.geomesa_export || !super::wants_lake(input, &opts.lake)? {
        return Ok(None);
    }
    let source = super::open_source_batched(input, &opts.lake, BATCH_ROWS)?;
    let cols = raster_columns(&source.schema);
    if cols.is_empty() {
        return Ok(None);
    }
    if fout != Some(Format::Marquet) {
        return Err(MarquetError::InvalidArgument(format!("{}: a table with Havasu rasters converts to an HDF5 file (.h5)", input.display())));
    }
    // The arrays live beside the table, and publishing into an existing file copies tables
    // only (convert/stage.rs): rasters go to a new file.
    if let Some(t) = staged_for(output).filter(|t| t.exists()) {
        return Err(MarquetError::InvalidArgument(format!(
            "{}: exists; a table with Havasu rasters converts into a new HDF5 file (its arrays are published with the file)",
            t.display()
        )));
    }
    let iopts = ImportOptions {
        table: opts.table.clone().unwrap_or_else(|| super::table_name(input)),
        strict: opts.strict,
        point_form: opts.point_form.unwrap_or_default(),
        progress: opts.progress.clone(),
        layout: opts.layout.clone(),
        ..ImportOptions::default()
    };
    let file = File::create(output)?;
    let r = import_rasters(source, cols, &file, &iopts, &opts.lake);
    drop(file);
    crate::convert::ConvertReport::of_new_file(input, output, r).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staging_names() {
        let p = Path::new("/d/.out.h5.marquet-12-345.partial.h5");
        assert_eq!(staged_for(p), Some(std::path::PathBuf::from("/d/out.h5")));
        assert_eq!(staged_for(Path::new("/d/out.h5")), None);
    }

    #[test]
    fn no_data_texts() {
        assert_eq!(no_data_text(PixelType::F32, Some(&0.1f32.to_le_bytes())), "0.1");
        assert_eq!(no_data_text(PixelType::I16, Some(&(-9999i16).to_le_bytes())), "-9999");
        assert_eq!(no_data_text(PixelType::U8, None), "");
    }
}
