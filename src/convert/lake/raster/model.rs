//! Havasu's raster data model (spec "Raster data model", "Parquet Data Type Mappings"):
//! pixel types, bands (in-db pixels or out-db references), the affine geo-reference, and
//! the `v1` Parquet group read from and written to Arrow.

use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, Float64Builder, Int32Builder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef, ListArray, StructArray};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{DataType, Field, Fields};

use crate::error::{MarquetError, Result};
use crate::h5col::Dtype;

/// The column of the row's position in the source.
pub const SOURCE_ROW: &str = "source_row";

/// Suffixes of the columns that describe raster column `C` (`C_<suffix>`), in order.
pub const COLUMN_SUFFIXES: [&str; 15] = [
    "array",
    "width",
    "height",
    "num_bands",
    "crs_wkt",
    "scale_x",
    "scale_y",
    "skew_x",
    "skew_y",
    "upperleft_x",
    "upperleft_y",
    "pixel_types",
    "no_data",
    "out_db_urls",
    "out_db_band_nos",
];

/// A Havasu pixel type (`pixel_type`, stored as its integer code).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PixelType {
    /// `PT_8BSI` (3): signed 8-bit integer.
    I8,
    /// `PT_8BUI` (4): unsigned 8-bit integer.
    U8,
    /// `PT_16BSI` (5): signed 16-bit integer.
    I16,
    /// `PT_16BUI` (6): unsigned 16-bit integer.
    U16,
    /// `PT_32BSI` (7): signed 32-bit integer.
    I32,
    /// `PT_32BUI` (8): unsigned 32-bit integer.
    U32,
    /// `PT_32BF` (10): IEEE 754 binary32.
    F32,
    /// `PT_64BF` (11): IEEE 754 binary64.
    F64,
}

/// Every pixel type, in code order.
pub const PIXEL_TYPES: [PixelType; 8] = [PixelType::I8, PixelType::U8, PixelType::I16, PixelType::U16, PixelType::I32, PixelType::U32, PixelType::F32, PixelType::F64];

impl PixelType {
    /// The type of a `pixel_type` code.
    pub fn from_code(c: i32) -> Option<PixelType> {
        PIXEL_TYPES.into_iter().find(|p| p.code() == c)
    }
    /// The type of a name (`PT_8BUI`, ...).
    pub fn from_name(s: &str) -> Option<PixelType> {
        PIXEL_TYPES.into_iter().find(|p| p.name() == s)
    }
    /// The spec's integer code.
    pub fn code(self) -> i32 {
        match self {
            PixelType::I8 => 3,
            PixelType::U8 => 4,
            PixelType::I16 => 5,
            PixelType::U16 => 6,
            PixelType::I32 => 7,
            PixelType::U32 => 8,
            PixelType::F32 => 10,
            PixelType::F64 => 11,
        }
    }
    /// The spec's name.
    pub fn name(self) -> &'static str {
        match self {
            PixelType::I8 => "PT_8BSI",
            PixelType::U8 => "PT_8BUI",
            PixelType::I16 => "PT_16BSI",
            PixelType::U16 => "PT_16BUI",
            PixelType::I32 => "PT_32BSI",
            PixelType::U32 => "PT_32BUI",
            PixelType::F32 => "PT_32BF",
            PixelType::F64 => "PT_64BF",
        }
    }
    /// Bytes per pixel.
    pub fn size(self) -> usize {
        match self {
            PixelType::I8 | PixelType::U8 => 1,
            PixelType::I16 | PixelType::U16 => 2,
            PixelType::I32 | PixelType::U32 | PixelType::F32 => 4,
            PixelType::F64 => 8,
        }
    }
    /// The HDF5 element type (little-endian).
    pub fn dtype(self) -> Dtype {
        match self {
            PixelType::I8 | PixelType::I16 | PixelType::I32 => Dtype::Int { size: self.size(), signed: true, big_endian: false },
            PixelType::U8 | PixelType::U16 | PixelType::U32 => Dtype::Int { size: self.size(), signed: false, big_endian: false },
            PixelType::F32 | PixelType::F64 => Dtype::Float { size: self.size(), big_endian: false },
        }
    }
    /// The pixel type of an HDF5 element type.
    pub fn from_dtype(d: &Dtype) -> Option<PixelType> {
        PIXEL_TYPES.into_iter().find(|p| p.dtype() == d.to_le())
    }
    /// One value (`size()` little-endian bytes) as a number.
    pub fn value(self, b: &[u8]) -> Option<f64> {
        if b.len() != self.size() {
            return None;
        }
        Some(match self {
            PixelType::I8 => b[0] as i8 as f64,
            PixelType::U8 => b[0] as f64,
            PixelType::I16 => i16::from_le_bytes([b[0], b[1]]) as f64,
            PixelType::U16 => u16::from_le_bytes([b[0], b[1]]) as f64,
            PixelType::I32 => i32::from_le_bytes(b.try_into().ok()?) as f64,
            PixelType::U32 => u32::from_le_bytes(b.try_into().ok()?) as f64,
            PixelType::F32 => f32::from_le_bytes(b.try_into().ok()?) as f64,
            PixelType::F64 => f64::from_le_bytes(b.try_into().ok()?),
        })
    }
    /// A number as one value's little-endian bytes; `None` when the type cannot hold it
    /// exactly (NaN fits the float types only).
    pub fn bytes(self, v: f64) -> Option<Vec<u8>> {
        let int = |lo: f64, hi: f64| v.fract() == 0.0 && v >= lo && v <= hi;
        Some(match self {
            PixelType::I8 if int(-128.0, 127.0) => vec![v as i8 as u8],
            PixelType::U8 if int(0.0, 255.0) => vec![v as u8],
            PixelType::I16 if int(-32768.0, 32767.0) => (v as i16).to_le_bytes().to_vec(),
            PixelType::U16 if int(0.0, 65535.0) => (v as u16).to_le_bytes().to_vec(),
            PixelType::I32 if int(-2147483648.0, 2147483647.0) => (v as i32).to_le_bytes().to_vec(),
            PixelType::U32 if int(0.0, 4294967295.0) => (v as u32).to_le_bytes().to_vec(),
            PixelType::F32 if v.is_nan() || (v as f32) as f64 == v => (v as f32).to_le_bytes().to_vec(),
            PixelType::F64 => v.to_le_bytes().to_vec(),
            _ => return None,
        })
    }
}

/// The affine geo-reference of a raster (Havasu `geo_reference`): the world coordinates of
/// pixel `(col, row)`'s *centre* are `(upperleft_x + col·scale_x + row·skew_x,
/// upperleft_y + col·skew_y + row·scale_y)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GeoReference {
    /// X size of a pixel.
    pub scale_x: f64,
    /// Y size of a pixel (negative for north-up rasters).
    pub scale_y: f64,
    /// X skew (rotation) term.
    pub skew_x: f64,
    /// Y skew (rotation) term.
    pub skew_y: f64,
    /// X of the upper-left pixel's centre.
    pub upperleft_x: f64,
    /// Y of the upper-left pixel's centre.
    pub upperleft_y: f64,
}

impl GeoReference {
    /// The six numbers in Havasu's order (scale_x, scale_y, skew_x, skew_y, upperleft_x,
    /// upperleft_y).
    pub fn to_array(&self) -> [f64; 6] {
        [self.scale_x, self.scale_y, self.skew_x, self.skew_y, self.upperleft_x, self.upperleft_y]
    }
    /// From the six numbers in Havasu's order.
    pub fn from_array(a: [f64; 6]) -> GeoReference {
        GeoReference { scale_x: a[0], scale_y: a[1], skew_x: a[2], skew_y: a[3], upperleft_x: a[4], upperleft_y: a[5] }
    }
    /// World coordinates of grid position `(col, row)` (pixel centres at integers).
    pub fn world(&self, col: f64, row: f64) -> (f64, f64) {
        (self.upperleft_x + col * self.scale_x + row * self.skew_x, self.upperleft_y + col * self.skew_y + row * self.scale_y)
    }
    /// GDAL's geotransform (corner-anchored: the upper-left *corner* of the upper-left
    /// pixel), `[x0, scale_x, skew_x, y0, skew_y, scale_y]`.
    pub fn gdal(&self) -> [f64; 6] {
        let (x0, y0) = self.world(-0.5, -0.5);
        [x0, self.scale_x, self.skew_x, y0, self.skew_y, self.scale_y]
    }
}

/// One band: in-db pixels or an out-db reference.
#[derive(Debug, Clone, PartialEq)]
pub struct Band {
    /// Pixel type.
    pub pixel_type: PixelType,
    /// The no-data value's bytes as stored (`None`: no no-data value).
    pub no_data: Option<Vec<u8>>,
    /// In-db pixels, row-major little-endian (`width·height·size` bytes); `None`: out-db.
    pub data: Option<Vec<u8>>,
    /// Out-db band number (0-based) in [`Band::out_db_url`].
    pub out_db_band_no: Option<i32>,
    /// Out-db raster file URI.
    pub out_db_url: Option<String>,
}

/// One raster value.
#[derive(Debug, Clone, PartialEq)]
pub struct Raster {
    /// Width in pixels.
    pub width: i32,
    /// Height in pixels.
    pub height: i32,
    /// The CRS as WKT (`None`: not stated).
    pub crs_wkt: Option<String>,
    /// The geo-reference.
    pub geo: GeoReference,
    /// The bands, in order (`band_1`..`band_4`, then `bands`).
    pub bands: Vec<Band>,
}

fn child<'a>(s: &'a StructArray, name: &str, what: &str) -> Result<&'a ArrayRef> {
    s.column_by_name(name).ok_or_else(|| MarquetError::InvalidArgument(format!("{what} has no field {name:?} (Havasu raster v1 group)")))
}

fn i32s(a: &ArrayRef, what: &str) -> Result<Vec<Option<i32>>> {
    match a.data_type() {
        DataType::Int32 => Ok(a.as_primitive::<Int32Type>().iter().collect()),
        DataType::Int64 => Ok(a.as_primitive::<Int64Type>().iter().map(|v| v.and_then(|v| i32::try_from(v).ok())).collect()),
        t => Err(MarquetError::InvalidArgument(format!("{what} is {t}, not INT32"))),
    }
}

fn f64s(a: &ArrayRef, what: &str) -> Result<Vec<Option<f64>>> {
    match a.data_type() {
        DataType::Float64 => Ok(a.as_primitive::<Float64Type>().iter().collect()),
        t => Err(MarquetError::InvalidArgument(format!("{what} is {t}, not DOUBLE"))),
    }
}

fn texts(a: &ArrayRef, what: &str) -> Result<Vec<Option<String>>> {
    if matches!(a.data_type(), DataType::Binary | DataType::LargeBinary | DataType::BinaryView) {
        return crate::convert::hub::plan::binaries(a)?
            .into_iter()
            .map(|v| v.map(|b| String::from_utf8(b).map_err(|_| MarquetError::InvalidArgument(format!("{what}: not UTF-8")))).transpose())
            .collect();
    }
    Ok(crate::convert::hub::plan::strings(a).map_err(|e| MarquetError::InvalidArgument(format!("{what}: {e}")))?.into_iter().map(|v| v.map(str::to_string)).collect())
}

/// Is `dt` a Havasu raster `v1` group (a struct with `width`, `height`, `num_bands` and
/// `geo_reference`)?
pub fn is_raster_type(dt: &DataType) -> bool {
    let DataType::Struct(fs) = dt else { return false };
    ["width", "height", "num_bands", "geo_reference"].iter().all(|n| fs.iter().any(|f| f.name() == n))
}

/// Decode band structs (one per row; `None` where the struct is null).
fn decode_bands(a: &ArrayRef, what: &str) -> Result<Vec<Option<Band>>> {
    let s = a.as_struct_opt().ok_or_else(|| MarquetError::InvalidArgument(format!("{what} is {}, not a band group", a.data_type())))?;
    let pt = i32s(child(s, "pixel_type", what)?, &format!("{what}.pixel_type"))?;
    let nd = match s.column_by_name("no_data") {
        Some(c) => crate::convert::hub::plan::binaries(c)?,
        None => vec![None; s.len()],
    };
    let data = match s.column_by_name("data") {
        Some(c) => crate::convert::hub::plan::binaries(c)?,
        None => vec![None; s.len()],
    };
    let no = match s.column_by_name("out_db_band_no") {
        Some(c) => i32s(c, &format!("{what}.out_db_band_no"))?,
        None => vec![None; s.len()],
    };
    let url = match s.column_by_name("out_db_url") {
        Some(c) => texts(c, &format!("{what}.out_db_url"))?,
        None => vec![None; s.len()],
    };
    let mut out = Vec::with_capacity(s.len());
    for (i, ((((pt, nd), data), no), url)) in pt.into_iter().zip(nd).zip(data).zip(no).zip(url).enumerate() {
        if s.is_null(i) {
            out.push(None);
            continue;
        }
        let code = pt.ok_or_else(|| MarquetError::InvalidArgument(format!("{what} row {i}: pixel_type is null (required)")))?;
        let pixel_type = PixelType::from_code(code).ok_or_else(|| MarquetError::InvalidArgument(format!("{what} row {i}: pixel_type {code} is not a Havasu pixel type (3..8, 10, 11)")))?;
        out.push(Some(Band { pixel_type, no_data: nd, data, out_db_band_no: no, out_db_url: url }));
    }
    Ok(out)
}

/// Decode a raster column (`v1` group) into rasters, `None` for null rows. Every rule of
/// the spec that a reader relies on is checked; an error names `what` and the row
/// (`row0` + index).
pub fn decode_column(a: &ArrayRef, what: &str, row0: u64) -> Result<Vec<Option<Raster>>> {
    let s = a.as_struct_opt().ok_or_else(|| MarquetError::InvalidArgument(format!("{what} is {}, not a Havasu raster group", a.data_type())))?;
    let bad = |r: usize, m: String| MarquetError::InvalidArgument(format!("{what} row {}: {m}", row0 + r as u64));
    let w = i32s(child(s, "width", what)?, &format!("{what}.width"))?;
    let h = i32s(child(s, "height", what)?, &format!("{what}.height"))?;
    let nb = i32s(child(s, "num_bands", what)?, &format!("{what}.num_bands"))?;
    let crs = match s.column_by_name("crs_wkt") {
        Some(c) => texts(c, &format!("{what}.crs_wkt"))?,
        None => vec![None; s.len()],
    };
    let gr = child(s, "geo_reference", what)?.as_struct_opt().ok_or_else(|| MarquetError::InvalidArgument(format!("{what}.geo_reference is not a group")))?;
    let mut geo: Vec<Vec<Option<f64>>> = Vec::new();
    for n in ["scale_x", "scale_y", "skew_x", "skew_y", "upperleft_x", "upperleft_y"] {
        geo.push(f64s(child(gr, n, &format!("{what}.geo_reference"))?, &format!("{what}.geo_reference.{n}"))?);
    }
    let mut fixed: Vec<Vec<Option<Band>>> = Vec::new();
    for k in 1..=4 {
        fixed.push(match s.column_by_name(&format!("band_{k}")) {
            Some(c) => decode_bands(c, &format!("{what}.band_{k}"))?,
            None => vec![None; s.len()],
        });
    }
    let extra: Option<(&ListArray, Vec<Option<Band>>)> = match s.column_by_name("bands") {
        Some(c) => {
            let l = c.as_list_opt::<i32>().ok_or_else(|| MarquetError::InvalidArgument(format!("{what}.bands is {}, not a repeated band group", c.data_type())))?;
            let vals = decode_bands(l.values(), &format!("{what}.bands"))?;
            Some((l, vals))
        }
        None => None,
    };
    let mut out = Vec::with_capacity(s.len());
    for r in 0..s.len() {
        if s.is_null(r) {
            out.push(None);
            continue;
        }
        let (Some(width), Some(height), Some(num_bands)) = (w[r], h[r], nb[r]) else {
            return Err(bad(r, "width, height and num_bands are required".into()));
        };
        if width < 0 || height < 0 || num_bands < 0 {
            return Err(bad(r, format!("negative size {width}x{height}, {num_bands} bands")));
        }
        let mut g = [0f64; 6];
        for (k, col) in geo.iter().enumerate() {
            g[k] = col[r].filter(|_| !gr.is_null(r)).ok_or_else(|| bad(r, "geo_reference fields are required".into()))?;
        }
        let mut bands = Vec::new();
        for (k, f) in fixed.iter().enumerate() {
            match (&f[r], (k as i32) < num_bands) {
                (Some(b), true) => bands.push(b.clone()),
                (None, true) => return Err(bad(r, format!("num_bands is {num_bands} but band_{} is null", k + 1))),
                (Some(_), false) => return Err(bad(r, format!("num_bands is {num_bands} but band_{} is set", k + 1))),
                (None, false) => {}
            }
        }
        if let Some((l, vals)) = &extra {
            if !l.is_null(r) {
                let (a, b) = (l.value_offsets()[r] as usize, l.value_offsets()[r + 1] as usize);
                for (j, v) in vals[a..b].iter().enumerate() {
                    bands.push(v.clone().ok_or_else(|| bad(r, format!("bands[{j}] is null")))?);
                }
            }
        }
        if bands.len() != num_bands as usize {
            return Err(bad(r, format!("num_bands is {num_bands} but {} bands are stored", bands.len())));
        }
        let npix = (width as u64) * (height as u64);
        for (k, b) in bands.iter().enumerate() {
            match &b.data {
                Some(d) => {
                    let want = npix * b.pixel_type.size() as u64;
                    if d.len() as u64 != want {
                        return Err(bad(r, format!("band {} ({}) holds {} bytes of data; width·height·{} = {want}", k + 1, b.pixel_type.name(), d.len(), b.pixel_type.size())));
                    }
                }
                None => {
                    if b.out_db_url.is_none() || b.out_db_band_no.is_none() {
                        return Err(bad(r, format!("band {} has no data and no out_db_url/out_db_band_no (an out-db band needs both)", k + 1)));
                    }
                }
            }
            if let Some(nd) = &b.no_data {
                if nd.len() != b.pixel_type.size() {
                    return Err(bad(r, format!("band {} no_data has {} bytes, {} needs {}", k + 1, nd.len(), b.pixel_type.name(), b.pixel_type.size())));
                }
            }
        }
        out.push(Some(Raster { width, height, crs_wkt: crs[r].clone(), geo: GeoReference::from_array(g), bands }));
    }
    Ok(out)
}

/// The Arrow type of a band group.
pub fn band_type() -> DataType {
    DataType::Struct(Fields::from(vec![
        Field::new("pixel_type", DataType::Int32, false),
        Field::new("no_data", DataType::Binary, true),
        Field::new("data", DataType::Binary, true),
        Field::new("out_db_band_no", DataType::Int32, true),
        Field::new("out_db_url", DataType::Utf8, true),
    ]))
}

/// The Arrow type of the `v1` raster group (spec "Parquet Data Type Mappings").
pub fn raster_type() -> DataType {
    let geo = DataType::Struct(Fields::from(
        ["scale_x", "scale_y", "skew_x", "skew_y", "upperleft_x", "upperleft_y"].iter().map(|n| Field::new(*n, DataType::Float64, false)).collect::<Vec<_>>(),
    ));
    DataType::Struct(Fields::from(vec![
        Field::new("width", DataType::Int32, false),
        Field::new("height", DataType::Int32, false),
        Field::new("num_bands", DataType::Int32, false),
        Field::new("crs_wkt", DataType::Utf8, true),
        Field::new("geo_reference", geo, false),
        Field::new("band_1", band_type(), true),
        Field::new("band_2", band_type(), true),
        Field::new("band_3", band_type(), true),
        Field::new("band_4", band_type(), true),
        Field::new("bands", DataType::List(Arc::new(Field::new("element", band_type(), false))), true),
    ]))
}

/// Band groups of `bands` (`None` = a null group).
fn encode_bands(bands: &[Option<&Band>]) -> Result<ArrayRef> {
    let n = bands.len();
    let mut pt = Int32Builder::with_capacity(n);
    let mut nd = BinaryBuilder::new();
    let mut data = BinaryBuilder::new();
    let mut no = Int32Builder::with_capacity(n);
    let mut url = StringBuilder::new();
    for b in bands {
        match b {
            Some(b) => {
                pt.append_value(b.pixel_type.code());
                nd.append_option(b.no_data.as_deref());
                data.append_option(b.data.as_deref());
                no.append_option(b.out_db_band_no);
                url.append_option(b.out_db_url.as_deref());
            }
            None => {
                pt.append_value(0);
                nd.append_null();
                data.append_null();
                no.append_null();
                url.append_null();
            }
        }
    }
    let DataType::Struct(fields) = band_type() else { unreachable!("band_type is a struct") };
    let valid: Vec<bool> = bands.iter().map(|b| b.is_some()).collect();
    let nulls = valid.iter().any(|v| !v).then(|| NullBuffer::from(valid));
    let cols: Vec<ArrayRef> = vec![Arc::new(pt.finish()), Arc::new(nd.finish()), Arc::new(data.finish()), Arc::new(no.finish()), Arc::new(url.finish())];
    Ok(Arc::new(StructArray::try_new(fields, cols, nulls).map_err(|e| super::super::arrow_err("bands", e))?))
}

/// Encode rasters as a `v1` raster group column ([`raster_type`]).
pub fn encode_column(rasters: &[Option<Raster>]) -> Result<ArrayRef> {
    let n = rasters.len();
    let mut w = Int32Builder::with_capacity(n);
    let mut h = Int32Builder::with_capacity(n);
    let mut nb = Int32Builder::with_capacity(n);
    let mut crs = StringBuilder::new();
    let mut geo: Vec<Float64Builder> = (0..6).map(|_| Float64Builder::with_capacity(n)).collect();
    let mut fixed: Vec<Vec<Option<&Band>>> = (0..4).map(|_| Vec::with_capacity(n)).collect();
    let mut extra: Vec<Option<&Band>> = Vec::new();
    let mut offsets: Vec<i32> = vec![0];
    let mut extra_valid: Vec<bool> = Vec::with_capacity(n);
    for r in rasters {
        match r {
            Some(r) => {
                w.append_value(r.width);
                h.append_value(r.height);
                nb.append_value(r.bands.len() as i32);
                crs.append_option(r.crs_wkt.as_deref());
                for (k, v) in r.geo.to_array().into_iter().enumerate() {
                    geo[k].append_value(v);
                }
                for (k, f) in fixed.iter_mut().enumerate() {
                    f.push(r.bands.get(k));
                }
                if r.bands.len() > 4 {
                    extra.extend(r.bands[4..].iter().map(Some));
                    extra_valid.push(true);
                } else {
                    extra_valid.push(false);
                }
            }
            None => {
                w.append_value(0);
                h.append_value(0);
                nb.append_value(0);
                crs.append_null();
                for g in geo.iter_mut() {
                    g.append_value(0.0);
                }
                for f in fixed.iter_mut() {
                    f.push(None);
                }
                extra_valid.push(false);
            }
        }
        offsets.push(i32::try_from(extra.len()).map_err(|_| MarquetError::Unsupported("more than 2^31 extra bands in one batch".into()))?);
    }
    let DataType::Struct(fields) = raster_type() else { unreachable!("raster_type is a struct") };
    let DataType::Struct(geo_fields) = fields[4].data_type().clone() else { unreachable!("geo_reference is a struct") };
    let geo_cols: Vec<ArrayRef> = geo.into_iter().map(|mut b| Arc::new(b.finish()) as ArrayRef).collect();
    let geo_arr: ArrayRef = Arc::new(StructArray::try_new(geo_fields, geo_cols, None).map_err(|e| super::super::arrow_err("geo_reference", e))?);
    let mut cols: Vec<ArrayRef> = vec![Arc::new(w.finish()), Arc::new(h.finish()), Arc::new(nb.finish()), Arc::new(crs.finish()), geo_arr];
    for f in &fixed {
        cols.push(encode_bands(f)?);
    }
    let DataType::List(item) = fields[9].data_type().clone() else { unreachable!("bands is a list") };
    let list = ListArray::try_new(item, OffsetBuffer::new(offsets.into()), encode_bands(&extra)?, Some(NullBuffer::from(extra_valid))).map_err(|e| super::super::arrow_err("bands", e))?;
    cols.push(Arc::new(list));
    let valid: Vec<bool> = rasters.iter().map(|r| r.is_some()).collect();
    let nulls = valid.iter().any(|v| !v).then(|| NullBuffer::from(valid));
    Ok(Arc::new(StructArray::try_new(fields, cols, nulls).map_err(|e| super::super::arrow_err("raster", e))?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pixel_types() {
        for p in PIXEL_TYPES {
            assert_eq!(PixelType::from_code(p.code()), Some(p));
            assert_eq!(PixelType::from_name(p.name()), Some(p));
            assert_eq!(PixelType::from_dtype(&p.dtype()), Some(p));
            assert_eq!(p.dtype().size(), p.size());
            let b = p.bytes(7.0).unwrap();
            assert_eq!(p.value(&b), Some(7.0));
        }
        assert_eq!(PixelType::U8.bytes(-1.0), None);
        assert_eq!(PixelType::I32.bytes(0.5), None);
        assert_eq!(PixelType::F32.bytes(0.1), None);
        assert!(PixelType::F64.value(&PixelType::F64.bytes(f64::NAN).unwrap()).unwrap().is_nan());
        assert_eq!(PixelType::from_code(9), None);
    }

    #[test]
    fn column_round_trip() {
        let band = |t: PixelType, data: Option<Vec<u8>>| Band { pixel_type: t, no_data: t.bytes(0.0), data, out_db_band_no: None, out_db_url: None };
        let mut bands: Vec<Band> = (0..6).map(|k| band(PixelType::U16, Some(vec![k as u8; 2 * 6]))).collect();
        bands[2] = Band { pixel_type: PixelType::U16, no_data: None, data: None, out_db_band_no: Some(3), out_db_url: Some("s3://b/x.tif".into()) };
        let r = Raster { width: 3, height: 2, crs_wkt: Some("WKT".into()), geo: GeoReference::from_array([1.0, -1.0, 0.0, 0.0, 10.0, 20.0]), bands };
        let small = Raster { bands: vec![band(PixelType::I8, Some(vec![1; 6]))], crs_wkt: None, ..r.clone() };
        let col = vec![Some(r), None, Some(small)];
        let a = encode_column(&col).unwrap();
        assert!(is_raster_type(a.data_type()));
        assert_eq!(decode_column(&a, "rast", 0).unwrap(), col);
    }

    #[test]
    fn bad_values_name_the_row() {
        let r = Raster { width: 2, height: 2, crs_wkt: None, geo: GeoReference::from_array([1.0; 6]), bands: vec![Band { pixel_type: PixelType::U8, no_data: None, data: Some(vec![0; 3]), out_db_band_no: None, out_db_url: None }] };
        let a = encode_column(&[None, Some(r)]).unwrap();
        let e = decode_column(&a, "rast", 10).unwrap_err().to_string();
        assert!(e.contains("rast row 11") && e.contains("3 bytes"), "{e}");
    }

    #[test]
    fn gdal_geotransform_is_corner_anchored() {
        let g = GeoReference::from_array([2.0, -3.0, 0.0, 0.0, 100.0, 50.0]);
        assert_eq!(g.gdal(), [99.0, 2.0, 0.0, 51.5, 0.0, -3.0]);
    }
}
