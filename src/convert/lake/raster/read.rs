//! Rasters read back from a footprint table and its arrays: the facts of each row, its
//! pixels as the array `bands × height × width`, and the rasters a window finds.

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef, RecordBatch};

use super::model::{Band, GeoReference, PixelType, Raster};
use super::model::{COLUMN_SUFFIXES, SOURCE_ROW};
use crate::convert::hub::arrow::ArrowPlan;
use crate::error::{MarquetError, Result};
use crate::h5col::{File, Grid};
use crate::marquet::MarquetTable;
use crate::query::{Query, TableQuery};
use crate::spec::BBox;

/// One row of a raster footprint table, read back.
#[derive(Debug, Clone, PartialEq)]
pub struct TableRaster {
    /// The row in the footprint table.
    pub row: u64,
    /// The row's position in the source (`source_row`), when the table has the column.
    pub source_row: Option<i64>,
    /// The HDF5 path of the raster's array (`None`: a null raster or no in-db band).
    pub array_path: Option<String>,
    /// The array: the in-db bands, `bands × height × width`, of their pixel type.
    pub array: Option<Grid>,
    /// The raster rebuilt from the row's facts and the array (in-db bands hold their
    /// pixels, out-db bands their reference); `None` for a null raster.
    pub raster: Option<Raster>,
}

/// The raster columns of a footprint table: geometry columns `C` with every `C_<suffix>`
/// column of [`COLUMN_SUFFIXES`].
pub fn raster_columns(t: &MarquetTable) -> Result<Vec<String>> {
    let cols = t.table().column_names()?;
    Ok(t.geometry_column_names()?.into_iter().filter(|g| COLUMN_SUFFIXES.iter().all(|s| cols.contains(&format!("{g}_{s}")))).collect())
}

fn bad(t: &MarquetTable, m: String) -> MarquetError {
    MarquetError::InvalidArgument(format!("{}: {m}", t.path()))
}

fn strs(a: &ArrayRef) -> Result<Vec<Option<String>>> {
    Ok(crate::convert::hub::plan::strings(a)?.into_iter().map(|v| v.map(str::to_string)).collect())
}

fn list_strs(a: &ArrayRef, r: usize) -> Result<Option<Vec<String>>> {
    let l = a.as_list_opt::<i32>().ok_or_else(|| MarquetError::InvalidArgument(format!("expected a list column, found {}", a.data_type())))?;
    if l.is_null(r) {
        return Ok(None);
    }
    Ok(Some(strs(&l.value(r))?.into_iter().map(|v| v.unwrap_or_default()).collect()))
}

fn list_i32(a: &ArrayRef, r: usize) -> Result<Option<Vec<i32>>> {
    let l = a.as_list_opt::<i32>().ok_or_else(|| MarquetError::InvalidArgument(format!("expected a list column, found {}", a.data_type())))?;
    if l.is_null(r) {
        return Ok(None);
    }
    let v = l.value(r);
    let v = arrow_cast::cast(&v, &arrow_schema::DataType::Int32).map_err(|e| crate::convert::err_at("list", e))?;
    Ok(Some(v.as_primitive::<Int32Type>().iter().map(|x| x.unwrap_or(-1)).collect()))
}

fn num<T: arrow_array::types::ArrowPrimitiveType>(b: &RecordBatch, name: &str, dt: &arrow_schema::DataType) -> Result<Vec<Option<T::Native>>> {
    let a = b.column_by_name(name).ok_or_else(|| MarquetError::InvalidArgument(format!("no column {name}")))?;
    let a = arrow_cast::cast(a, dt).map_err(|e| crate::convert::err_at(name, e))?;
    Ok(a.as_primitive::<T>().iter().collect())
}

/// The rasters of `rows` of raster column `col` (any order; returned in that order).
pub fn read_rasters(file: &File, t: &MarquetTable, col: &str, rows: &[u64]) -> Result<Vec<TableRaster>> {
    if !raster_columns(t)?.iter().any(|c| c == col) {
        return Err(bad(t, format!("{col} is not a raster footprint column (it needs the columns {col}_array, {col}_pixel_types, ...)")));
    }
    let mut sorted: Vec<u64> = rows.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut names: Vec<String> = COLUMN_SUFFIXES.iter().map(|s| format!("{col}_{s}")).collect();
    let has_source_row = t.table().column_names()?.iter().any(|c| c == SOURCE_ROW);
    if has_source_row {
        names.push(SOURCE_ROW.to_string());
    }
    let plan = ArrowPlan::new(t, Some(&names), false)?;
    let batches = plan.take(t, &sorted, usize::MAX)?;
    let mut by_row = std::collections::HashMap::new();
    let mut k = 0usize;
    for b in &batches {
        let c = |s: &str| format!("{col}_{s}");
        let array = strs(b.column_by_name(&c("array")).ok_or_else(|| bad(t, "no array column".into()))?)?;
        let crs = strs(b.column_by_name(&c("crs_wkt")).ok_or_else(|| bad(t, "no crs_wkt column".into()))?)?;
        let i32t = arrow_schema::DataType::Int32;
        let (w, h, nb) = (num::<Int32Type>(b, &c("width"), &i32t)?, num::<Int32Type>(b, &c("height"), &i32t)?, num::<Int32Type>(b, &c("num_bands"), &i32t)?);
        let mut geo: Vec<Vec<Option<f64>>> = Vec::new();
        for s in ["scale_x", "scale_y", "skew_x", "skew_y", "upperleft_x", "upperleft_y"] {
            geo.push(num::<Float64Type>(b, &c(s), &arrow_schema::DataType::Float64)?);
        }
        let src = if has_source_row { num::<Int64Type>(b, SOURCE_ROW, &arrow_schema::DataType::Int64)? } else { vec![None; b.num_rows()] };
        let (pt, nd, urls, nos) = (b.column_by_name(&c("pixel_types")), b.column_by_name(&c("no_data")), b.column_by_name(&c("out_db_urls")), b.column_by_name(&c("out_db_band_nos")));
        let (Some(pt), Some(nd), Some(urls), Some(nos)) = (pt, nd, urls, nos) else { return Err(bad(t, format!("{col}: band list columns missing"))) };
        for r in 0..b.num_rows() {
            let row = sorted[k];
            k += 1;
            let grid = match &array[r] {
                Some(p) if !p.is_empty() => {
                    // The shape the row states, checked before anything is read.
                    let (_, dims) = file.grid_shape(p)?;
                    let (wr, hr) = (w[r].map(|v| v as u64), h[r].map(|v| v as u64));
                    if dims.len() != 3 || Some(dims[1]) != hr || Some(dims[2]) != wr {
                        return Err(bad(t, format!("row {row}: {col}: the array {p} has shape {dims:?}, the row says {hr:?} x {wr:?}")));
                    }
                    Some(file.read_grid(p)?)
                }
                _ => None,
            };
            let raster = match (w[r], h[r], nb[r], list_strs(pt, r)?) {
                (Some(width), Some(height), Some(n), Some(types)) => {
                    let g: Vec<f64> = geo.iter().map(|c| c[r].unwrap_or(f64::NAN)).collect();
                    let nds = list_strs(nd, r)?.unwrap_or_default();
                    let us = list_strs(urls, r)?.unwrap_or_default();
                    let ns = list_i32(nos, r)?.unwrap_or_default();
                    if types.len() != n as usize || nds.len() != types.len() || us.len() != types.len() || ns.len() != types.len() {
                        return Err(bad(t, format!("row {row}: {col}: {n} bands but band lists of {}, {}, {}, {} entries", types.len(), nds.len(), us.len(), ns.len())));
                    }
                    let mut bands = Vec::new();
                    let mut indb = 0u64;
                    for b in 0..types.len() {
                        let pixel_type = PixelType::from_name(&types[b]).ok_or_else(|| bad(t, format!("row {row}: {col}: pixel type {:?}", types[b])))?;
                        let no_data = if nds[b].is_empty() {
                            None
                        } else {
                            let v: f64 = nds[b].parse().map_err(|_| bad(t, format!("row {row}: {col}: no-data {:?} is not a number", nds[b])))?;
                            Some(pixel_type.bytes(v).ok_or_else(|| bad(t, format!("row {row}: {col}: no-data {v} does not fit {}", pixel_type.name())))?)
                        };
                        let band = if us[b].is_empty() {
                            let gr = grid.as_ref().ok_or_else(|| bad(t, format!("row {row}: {col}: band {} is in-db but the row has no array", b + 1)))?;
                            let plane = (width as usize) * (height as usize) * pixel_type.size();
                            if gr.dims.len() != 3 || gr.dims[0] <= indb || PixelType::from_dtype(&gr.dtype) != Some(pixel_type) || gr.bytes.len() != plane * gr.dims[0] as usize {
                                return Err(bad(t, format!("row {row}: {col}: the array {:?} does not hold band {} ({} of {width}x{height})", array[r], b + 1, pixel_type.name())));
                            }
                            let s = indb as usize * plane;
                            indb += 1;
                            Band { pixel_type, no_data, data: Some(gr.bytes[s..s + plane].to_vec()), out_db_band_no: None, out_db_url: None }
                        } else {
                            Band { pixel_type, no_data, data: None, out_db_band_no: Some(ns[b]), out_db_url: Some(us[b].clone()) }
                        };
                        bands.push(band);
                    }
                    Some(Raster { width, height, crs_wkt: crs[r].clone(), geo: GeoReference::from_array([g[0], g[1], g[2], g[3], g[4], g[5]]), bands })
                }
                _ => None,
            };
            by_row.insert(row, TableRaster { row, source_row: src[r], array_path: array[r].clone().filter(|p| !p.is_empty()), array: grid, raster });
        }
    }
    rows.iter().map(|r| by_row.get(r).cloned().ok_or_else(|| bad(t, format!("row {r} not read")))).collect()
}

/// The rasters of column `col` whose footprint meets `window` (OGC:CRS84; `xmin > xmax`
/// crosses the antimeridian), in row order, with their arrays.
pub fn query_rasters(file: &File, t: &MarquetTable, col: &str, window: BBox) -> Result<Vec<TableRaster>> {
    let w = crate::query::Window::try_bbox(window.xmin, window.ymin, window.xmax, window.ymax)?;
    let hits = t.query(col, &Query::new(w, crate::query::Predicate::Intersects))?;
    read_rasters(file, t, col, &hits.rows)
}

impl TableRaster {
    /// The raster as one JSON object: `row`, `source_row`, `array` (its HDF5 path), `width`,
    /// `height`, `crs_wkt`, `geo_reference` (Havasu's six numbers), `geotransform` (GDAL's),
    /// `bands` (pixel type, no-data, out-db reference of each) and, with `pixels`, `dtype`,
    /// `shape` and `values` (the array as nested lists `[band][row][column]`; NaN and
    /// infinities, which JSON cannot hold, as null).
    pub fn to_json(&self, pixels: bool) -> serde_json::Value {
        let mut o = serde_json::json!({ "row": self.row, "source_row": self.source_row, "array": self.array_path });
        let Some(r) = &self.raster else {
            o["raster"] = serde_json::Value::Null;
            return o;
        };
        o["width"] = r.width.into();
        o["height"] = r.height.into();
        o["crs_wkt"] = r.crs_wkt.clone().into();
        o["geo_reference"] = serde_json::json!(r.geo.to_array());
        o["geotransform"] = serde_json::json!(r.geo.gdal());
        o["bands"] = r
            .bands
            .iter()
            .map(|b| {
                serde_json::json!({
                    "pixel_type": b.pixel_type.name(),
                    "no_data": b.no_data.as_deref().and_then(|v| b.pixel_type.value(v)).filter(|v| v.is_finite()),
                    "in_db": b.data.is_some(),
                    "out_db_url": b.out_db_url,
                    "out_db_band_no": b.out_db_band_no,
                })
            })
            .collect();
        if let (true, Some(g)) = (pixels, &self.array) {
            if let Some(t) = PixelType::from_dtype(&g.dtype) {
                let float = matches!(t, PixelType::F32 | PixelType::F64);
                let num = |v: f64| if float { serde_json::json!(v) } else { serde_json::json!(v as i64) };
                let vals: Vec<serde_json::Value> = g.bytes.chunks_exact(t.size()).map(|c| t.value(c).filter(|v| v.is_finite()).map_or(serde_json::Value::Null, num)).collect();
                let (h, w) = (g.dims[1] as usize, g.dims[2] as usize);
                let nested: Vec<serde_json::Value> = vals
                    .chunks(h.max(1) * w.max(1))
                    .map(|band| serde_json::Value::Array(band.chunks(w.max(1)).map(|row| serde_json::Value::Array(row.to_vec())).collect()))
                    .collect();
                o["dtype"] = t.name().into();
                o["shape"] = serde_json::json!(g.dims);
                o["values"] = serde_json::Value::Array(nested);
            }
        }
        o
    }
}
