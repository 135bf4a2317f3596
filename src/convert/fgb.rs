//! FlatGeobuf in and out (issue #22), with the format's reference Rust implementation,
//! the `flatgeobuf` crate (geometry to WKB through `geozero`).
//!
//! Read: features one at a time from the file (sequential, no index needed), the CRS
//! from the header (`org:code`, else its WKT) resolved to PROJJSON. Written: the
//! `flatgeobuf` writer keeps each encoded feature in a temporary file and only a 40-byte
//! index node per feature in memory, then writes the Hilbert-sorted features with the
//! packed R-tree; the header states the CRS as EPSG-style `org:code` plus WKT 2.

use std::io::{BufReader, BufWriter};
use std::path::Path;

use flatgeobuf::geozero::{ColumnValue, CoordDimensions, PropertyProcessor, ToWkb};
use flatgeobuf::{ColumnType, FallibleStreamingIterator, FeatureProperties, FgbCrs, FgbReader, FgbWriter, FgbWriterOptions, GeometryType};

use super::hub::features::{Feature, FeatureSink, FeatureSource, Kind, SinkInfo, SourceInfo, V};
use crate::error::{MarquetError, Result};
use crate::marquet::Crs;
use crate::spec::{Dimensions, GeometryKind};

fn err(path: &str, e: impl std::fmt::Display) -> MarquetError {
    MarquetError::Io { path: path.to_string(), source: std::io::Error::other(format!("FlatGeobuf: {e}")) }
}

type Iter = flatgeobuf::FeatureIter<BufReader<std::fs::File>, flatgeobuf::NotSeekable>;

/// A FlatGeobuf file as a [`FeatureSource`].
pub struct FgbSource {
    iter: Iter,
    path: String,
    kinds: Vec<Kind>,
    dims: CoordDimensions,
    row: u64,
}

fn column_kind(t: ColumnType) -> Kind {
    match t {
        ColumnType::Byte | ColumnType::UByte | ColumnType::Short | ColumnType::UShort | ColumnType::Int | ColumnType::UInt | ColumnType::Long => Kind::Int,
        ColumnType::ULong | ColumnType::Float | ColumnType::Double => Kind::Float,
        ColumnType::Bool => Kind::Bool,
        ColumnType::Binary => Kind::Bytes,
        _ => Kind::Str,
    }
}

/// Open a FlatGeobuf file: its schema and CRS, and a source of its features.
pub fn open(input: &Path) -> Result<(SourceInfo, FgbSource)> {
    let path = input.display().to_string();
    let f = std::fs::File::open(input).map_err(|e| MarquetError::Io { path: path.clone(), source: e })?;
    let reader = FgbReader::open(BufReader::with_capacity(1 << 16, f)).map_err(|e| err(&path, e))?;
    let h = reader.header();
    let mut fields = Vec::new();
    if let Some(cols) = h.columns() {
        for c in cols.iter() {
            fields.push((c.name().to_string(), column_kind(c.type_())));
        }
    }
    let (crs, crs_note) = match h.crs() {
        None => (Crs::Unknown, None),
        Some(c) => {
            let org = c.org().unwrap_or("EPSG");
            let code = c.code_string().map(str::to_string).or_else(|| (c.code() != 0).then(|| c.code().to_string()));
            let by_code = code.as_ref().map(|k| crate::crs::resolve(&format!("{org}:{k}")));
            match (by_code, c.wkt()) {
                (Some(Ok(crs)), _) => (crs, None),
                (_, Some(w)) if crate::crs::resolve(w).is_ok() => (crate::crs::resolve(w).unwrap_or(Crs::Unknown), None),
                (Some(Err(why)), _) => (Crs::Unknown, Some(format!("FlatGeobuf crs {org}:{} could not be resolved ({why}): stored as unknown", code.unwrap_or_default()))),
                (None, Some(w)) => (Crs::Unknown, Some(format!("FlatGeobuf crs WKT could not be resolved: stored as unknown; WKT: {w}"))),
                (None, None) => (Crs::Unknown, None),
            }
        }
    };
    let dims = match (h.has_z(), h.has_m()) {
        (true, true) => CoordDimensions::xyzm(),
        (true, false) => CoordDimensions::xyz(),
        (false, true) => CoordDimensions { z: false, m: true, t: false, tm: false },
        (false, false) => CoordDimensions::xy(),
    };
    let kinds = fields.iter().map(|(_, k)| *k).collect();
    let iter = reader.select_all_seq().map_err(|e| err(&path, e))?;
    Ok((SourceInfo { fields, crs, crs_note }, FgbSource { iter, path, kinds, dims, row: 0 }))
}

/// Collects one feature's properties by column index.
struct Props<'a> {
    out: &'a mut Vec<V>,
}

impl PropertyProcessor for Props<'_> {
    fn property(&mut self, i: usize, _name: &str, v: &ColumnValue) -> flatgeobuf::geozero::error::Result<bool> {
        let val = match v {
            ColumnValue::Byte(x) => V::I(*x as i64),
            ColumnValue::UByte(x) => V::I(*x as i64),
            ColumnValue::Bool(x) => V::B(*x),
            ColumnValue::Short(x) => V::I(*x as i64),
            ColumnValue::UShort(x) => V::I(*x as i64),
            ColumnValue::Int(x) => V::I(*x as i64),
            ColumnValue::UInt(x) => V::I(*x as i64),
            ColumnValue::Long(x) => V::I(*x),
            ColumnValue::ULong(x) => V::F(*x as f64),
            ColumnValue::Float(x) => V::F(*x as f64),
            ColumnValue::Double(x) => V::F(*x),
            ColumnValue::String(s) | ColumnValue::Json(s) | ColumnValue::DateTime(s) => V::S(s.to_string()),
            ColumnValue::Binary(b) => V::Bytes(b.to_vec()),
        };
        if let Some(slot) = self.out.get_mut(i) {
            *slot = val;
        }
        Ok(false)
    }
}

impl FeatureSource for FgbSource {
    fn next_feature(&mut self) -> Result<Option<Feature>> {
        let Some(f) = self.iter.next().map_err(|e| err(&self.path, e))? else { return Ok(None) };
        let row = self.row;
        self.row += 1;
        let g = match f.geometry() {
            None => None,
            Some(_) => Some(f.to_wkb(self.dims).map_err(|e| err(&self.path, format!("feature {row}: {e}")))?),
        };
        let mut vals = vec![V::Null; self.kinds.len()];
        f.process_properties(&mut Props { out: &mut vals }).map_err(|e| err(&self.path, format!("feature {row}: {e}")))?;
        Ok(Some((g, vals)))
    }
}

/// A FlatGeobuf file being written.
pub struct FgbSink {
    w: FgbWriter<'static>,
    out: std::fs::File,
    path: String,
    fields: Vec<(String, Kind)>,
}

fn fgb_type(types: &[crate::spec::GeometryType]) -> (GeometryType, bool, bool) {
    let kinds: std::collections::BTreeSet<GeometryKind> = types.iter().map(|t| t.kind).collect();
    let z = !types.is_empty() && types.iter().all(|t| t.dims.has_z());
    let m = !types.is_empty() && types.iter().all(|t| matches!(t.dims, Dimensions::Xym | Dimensions::Xyzm));
    let gt = if kinds.len() == 1 {
        match kinds.iter().next() {
            Some(GeometryKind::Point) => GeometryType::Point,
            Some(GeometryKind::LineString) => GeometryType::LineString,
            Some(GeometryKind::Polygon) => GeometryType::Polygon,
            Some(GeometryKind::MultiPoint) => GeometryType::MultiPoint,
            Some(GeometryKind::MultiLineString) => GeometryType::MultiLineString,
            Some(GeometryKind::MultiPolygon) => GeometryType::MultiPolygon,
            _ => GeometryType::GeometryCollection,
        }
    } else {
        GeometryType::Unknown
    };
    (gt, z, m)
}

/// Create a FlatGeobuf file for `info`'s features.
pub fn create(output: &Path, info: &SinkInfo) -> Result<FgbSink> {
    let path = output.display().to_string();
    let (gt, has_z, has_m) = fgb_type(&info.types);
    // The header's CRS: authority and integer code (GDAL reads these), plus WKT 2.
    let (org, code) = crate::crs::epsg_like_code(&info.crs).unwrap_or_default();
    let wkt = crate::crs::to_wkt(&info.crs, crate::crs::WktDialect::Wkt2).ok().flatten();
    // (The writer copies these strings into its header at creation.)
    let crs = match info.crs {
        Crs::Unknown => FgbCrs::default(),
        _ => FgbCrs { org: (!org.is_empty()).then_some(org.as_str()), code, wkt: wkt.as_deref(), ..Default::default() },
    };
    let opts = FgbWriterOptions { write_index: true, detect_type: false, promote_to_multi: false, crs, has_z, has_m, ..Default::default() };
    let name = output.file_stem().and_then(|s| s.to_str()).unwrap_or("layer").to_string();
    let mut w = FgbWriter::create_with_options(&name, gt, opts).map_err(|e| err(&path, e))?;
    for (n, k) in &info.fields {
        let t = match k {
            Kind::Int => ColumnType::Long,
            Kind::Float => ColumnType::Double,
            Kind::Bool => ColumnType::Bool,
            Kind::Str => ColumnType::String,
            Kind::Bytes => ColumnType::Binary,
        };
        w.add_column(n, t, |_, c| c.nullable = true);
    }
    let out = std::fs::File::create(output).map_err(|e| MarquetError::Io { path: path.clone(), source: e })?;
    Ok(FgbSink { w, out, path, fields: info.fields.clone() })
}

/// Write one feature's properties (nulls are left out, as FlatGeobuf encodes them).
fn put<P: PropertyProcessor>(f: &mut P, fields: &[(String, Kind)], values: &[V]) {
    for (i, ((name, _), v)) in fields.iter().zip(values).enumerate() {
        let cv = match v {
            V::Null => continue,
            V::I(x) => ColumnValue::Long(*x),
            V::F(x) => ColumnValue::Double(*x),
            V::B(x) => ColumnValue::Bool(*x),
            V::S(s) => ColumnValue::String(s),
            V::Bytes(b) => ColumnValue::Binary(b),
        };
        let _ = f.property(i, name, &cv);
    }
}

impl FeatureSink for FgbSink {
    fn write(&mut self, geometry: Option<&[u8]>, values: &[V]) -> Result<()> {
        let fields = &self.fields;
        let r = match geometry {
            Some(w) => self.w.add_feature_geom(flatgeobuf::geozero::wkb::Wkb(w), |f| put(f, fields, values)),
            // The `flatgeobuf` writer always writes a geometry: a null would come back as an
            // empty one, so it is refused rather than changed silently.
            None => {
                return Err(MarquetError::InvalidArgument(
                    "a null geometry: this FlatGeobuf writer cannot write one (it would read back as empty); write GeoPackage".into(),
                ))
            }
        };
        r.map_err(|e| err(&self.path, e))
    }

    fn finish(self: Box<Self>) -> Result<()> {
        let s = *self;
        let mut out = BufWriter::new(s.out);
        s.w.write(&mut out).map_err(|e| err(&s.path, e))?;
        use std::io::Write;
        out.flush().map_err(|e| MarquetError::Io { path: s.path.clone(), source: e })
    }
}
