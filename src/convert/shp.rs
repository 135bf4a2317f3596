//! ESRI Shapefile in and out (issue #22), with the `shapefile` crate (and its `dbase`).
//!
//! Read: shapes and records one at a time (`.shp` + `.dbf`; the `.shx` when present), the
//! CRS from the `.prj` WKT resolved with PROJ. Polygons are regrouped into (multi)polygons
//! by the crate's ring rules (outer rings clockwise). Shapefile coordinates are XY here:
//! Z and M of `PointZ`/`PolylineZ`/… shapes are dropped with a finding. `.dbf` numeric
//! fields without decimals become integers, with decimals doubles; dates ISO text.
//!
//! Written: one shape type per file (points, multipoints, polylines or polygons; a table
//! mixing them is refused), `.prj` in ESRI's WKT 1 (PROJ), `.cpg` = UTF-8, field names cut
//! to dBase's 10 bytes (made unique, reported), text fields 254 bytes at most.

use std::io::{Read, Write};
use std::path::Path;

use shapefile::dbase::{self, FieldValue};

use super::hub::features::{Feature, FeatureSink, FeatureSource, Kind, SinkInfo, SourceInfo, V};
use super::ExportReport;
use crate::error::{MarquetError, Result};
use crate::marquet::Crs;
use crate::spec::GeometryKind;
use crate::wkb::{self, ByteOrder};

fn err(path: &str, e: impl std::fmt::Display) -> MarquetError {
    MarquetError::Io { path: path.to_string(), source: std::io::Error::other(format!("Shapefile: {e}")) }
}

/// Field names, types and decimal counts from a `.dbf` header (the `dbase` crate does
/// not expose the decimal count that tells integers from reals).
fn dbf_fields(path: &Path) -> Result<Vec<(String, u8, u8)>> {
    let p = path.display().to_string();
    let mut f = std::fs::File::open(path).map_err(|e| MarquetError::Io { path: p.clone(), source: e })?;
    let mut head = [0u8; 32];
    f.read_exact(&mut head).map_err(|e| err(&p, format!("dbf header: {e}")))?;
    let header_len = u16::from_le_bytes([head[8], head[9]]) as usize;
    if header_len < 33 {
        return Err(err(&p, format!("dbf header length {header_len} is too small")));
    }
    let mut rest = vec![0u8; header_len - 32];
    f.read_exact(&mut rest).map_err(|e| err(&p, format!("dbf field descriptors: {e}")))?;
    let mut out = Vec::new();
    for d in rest.chunks_exact(32) {
        if d[0] == 0x0D {
            break;
        }
        let name_end = d[..11].iter().position(|&b| b == 0).unwrap_or(11);
        let name = String::from_utf8_lossy(&d[..name_end]).trim().to_string();
        out.push((name, d[11], d[17]));
    }
    Ok(out)
}

type ShpReader = shapefile::Reader<std::io::BufReader<std::fs::File>, std::io::BufReader<std::fs::File>>;

/// A Shapefile as a [`FeatureSource`].
pub struct ShpSource {
    // The reader and its iterator: the iterator borrows the reader, so both live on the
    // heap and the iterator is recreated lazily (see `next_feature`).
    reader: Box<ShpReader>,
    index: usize,
    count: usize,
    names: Vec<String>,
    kinds: Vec<Kind>,
    path: String,
    dropped_zm: bool,
}

/// Open a Shapefile (`x.shp` with `x.dbf`, optional `x.prj`).
pub fn open(input: &Path) -> Result<(SourceInfo, ShpSource)> {
    let path = input.display().to_string();
    let fields = dbf_fields(&input.with_extension("dbf"))?;
    let mut names = Vec::new();
    let mut info_fields = Vec::new();
    let mut kinds = Vec::new();
    for (n, t, dec) in fields {
        let k = match t {
            b'N' if dec == 0 => Kind::Int,
            b'N' | b'F' | b'O' | b'Y' => Kind::Float,
            b'I' | b'+' => Kind::Int,
            b'L' => Kind::Bool,
            _ => Kind::Str,
        };
        names.push(n.clone());
        kinds.push(k);
        info_fields.push((n, k));
    }
    let (crs, crs_note) = match std::fs::read(input.with_extension("prj")) {
        Err(_) => (Crs::Unknown, None),
        Ok(b) => {
            let w = String::from_utf8_lossy(&b).trim().to_string();
            match crate::crs::resolve(&w) {
                Ok(c) => (c, None),
                Err(why) => (Crs::Unknown, Some(format!("Shapefile .prj could not be resolved ({why}): stored as unknown; WKT: {w}"))),
            }
        }
    };
    let reader = shapefile::Reader::from_path(input).map_err(|e| err(&path, e))?;
    let count = reader.shape_count().map_err(|e| err(&path, e))?;
    Ok((
        SourceInfo { fields: info_fields, crs, crs_note },
        ShpSource { reader: Box::new(reader), index: 0, count, names, kinds, path, dropped_zm: false },
    ))
}

fn field_value(v: Option<&FieldValue>, k: Kind) -> V {
    match v {
        None => V::Null,
        Some(FieldValue::Character(s)) => s.clone().map(V::S).unwrap_or(V::Null),
        Some(FieldValue::Memo(s)) => V::S(s.clone()),
        Some(FieldValue::Numeric(x)) => match (x, k) {
            (Some(x), Kind::Int) if x.fract() == 0.0 => V::I(*x as i64),
            (Some(x), _) => V::F(*x),
            (None, _) => V::Null,
        },
        Some(FieldValue::Float(x)) => x.map(|x| V::F(x as f64)).unwrap_or(V::Null),
        Some(FieldValue::Logical(b)) => b.map(V::B).unwrap_or(V::Null),
        Some(FieldValue::Integer(i)) => V::I(*i as i64),
        Some(FieldValue::Double(x)) | Some(FieldValue::Currency(x)) => V::F(*x),
        Some(FieldValue::Date(d)) => d.map(|d| V::S(format!("{:04}-{:02}-{:02}", d.year(), d.month(), d.day()))).unwrap_or(V::Null),
        Some(FieldValue::DateTime(d)) => {
            let (dd, t) = (d.date(), d.time());
            V::S(format!("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", dd.year(), dd.month(), dd.day(), t.hours(), t.minutes(), t.seconds()))
        }
    }
}

impl ShpSource {
    /// Did any shape carry Z or M (dropped)?
    pub fn dropped_zm(&self) -> bool {
        self.dropped_zm
    }
}

impl FeatureSource for ShpSource {
    fn next_feature(&mut self) -> Result<Option<Feature>> {
        if self.index >= self.count {
            return Ok(None);
        }
        let i = self.index;
        self.index += 1;
        // Positioned reads: seek to the record (through the .shx), then read one.
        self.reader.seek(i).map_err(|e| err(&self.path, format!("record {i}: {e}")))?;
        let mut it = self.reader.iter_shapes_and_records();
        let Some(r) = it.next() else { return Ok(None) };
        let (shape, record) = r.map_err(|e| err(&self.path, format!("record {i}: {e}")))?;
        drop(it);
        use shapefile::Shape;
        if matches!(shape, Shape::PointM(_) | Shape::PointZ(_) | Shape::PolylineM(_) | Shape::PolylineZ(_) | Shape::PolygonM(_) | Shape::PolygonZ(_) | Shape::MultipointM(_) | Shape::MultipointZ(_) | Shape::Multipatch(_)) {
            self.dropped_zm = true;
        }
        let g = match shape {
            Shape::NullShape => None,
            s => {
                let gt: geo_types::Geometry<f64> = s.try_into().map_err(|e| err(&self.path, format!("record {i}: {e}")))?;
                Some(wkb::encode(&wkb::Geometry::from(&gt), ByteOrder::LittleEndian))
            }
        };
        let vals = self.names.iter().zip(&self.kinds).map(|(n, k)| field_value(record.get(n), *k)).collect();
        Ok(Some((g, vals)))
    }
}

/// A Shapefile being written.
pub struct ShpSink {
    w: shapefile::Writer<std::io::BufWriter<std::fs::File>>,
    names: Vec<String>,
    kind: Option<GeometryKind>,
    path: String,
}

/// dBase field names: at most 10 bytes, unique.
fn dbf_names(fields: &[(String, Kind)], report: &mut ExportReport) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (n, _) in fields {
        let mut cut: String = String::new();
        for c in n.chars() {
            if cut.len() + c.len_utf8() > 10 {
                break;
            }
            cut.push(c);
        }
        let mut k = 1;
        let base = cut.clone();
        while out.contains(&cut) {
            let suffix = format!("_{k}");
            let mut b = base.clone();
            while b.len() + suffix.len() > 10 {
                b.pop();
            }
            cut = format!("{b}{suffix}");
            k += 1;
        }
        if cut != *n {
            report.notes.push(format!("column {n} written as dBase field {cut} (10-byte names)"));
        }
        out.push(cut);
    }
    out
}

/// Create `x.shp` (+ `.shx`, `.dbf`, `.prj`, `.cpg`).
pub fn create(output: &Path, info: &SinkInfo, report: &mut ExportReport) -> Result<ShpSink> {
    let path = output.display().to_string();
    let kinds: std::collections::BTreeSet<GeometryKind> = info.types.iter().map(|t| match t.kind {
        GeometryKind::MultiPolygon => GeometryKind::Polygon,
        GeometryKind::MultiLineString => GeometryKind::LineString,
        k => k,
    }).collect();
    if kinds.len() > 1 || kinds.contains(&GeometryKind::GeometryCollection) {
        return Err(MarquetError::InvalidArgument(format!(
            "{path}: a Shapefile holds one shape type, and the column has {}: write GeoPackage or FlatGeobuf",
            info.types.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ")
        )));
    }
    if info.types.iter().any(|t| t.dims.has_z() || t.dims.has_m()) {
        report.notes.push("Z / M coordinates are not written to the Shapefile (XY shapes)".into());
    }
    let names = dbf_names(&info.fields, report);
    let mut tb = dbase::TableWriterBuilder::with_encoding(dbase::encoding::UnicodeLossy);
    for (name, (_, k)) in names.iter().zip(&info.fields) {
        let fname = dbase::FieldName::try_from(name.as_str()).map_err(|e| err(&path, e))?;
        tb = match k {
            Kind::Int => tb.add_numeric_field(fname, 20, 0),
            Kind::Float => tb.add_numeric_field(fname, 24, 15),
            Kind::Bool => tb.add_logical_field(fname),
            Kind::Str | Kind::Bytes => tb.add_character_field(fname, 254),
        };
    }
    let w = shapefile::Writer::from_path(output, tb).map_err(|e| err(&path, e))?;
    // .prj (ESRI WKT 1) and .cpg.
    if let Some(wkt) = crate::crs::to_wkt(&info.crs, crate::crs::WktDialect::Wkt1Esri).map_err(|e| err(&path, e))? {
        std::fs::write(output.with_extension("prj"), wkt).map_err(|e| MarquetError::Io { path: path.clone(), source: e })?;
    }
    std::fs::write(output.with_extension("cpg"), "UTF-8").map_err(|e| MarquetError::Io { path: path.clone(), source: e })?;
    Ok(ShpSink { w, names, kind: kinds.into_iter().next(), path })
}

impl FeatureSink for ShpSink {
    fn write(&mut self, geometry: Option<&[u8]>, values: &[V]) -> Result<()> {
        let mut rec = dbase::Record::default();
        for (n, v) in self.names.iter().zip(values) {
            let fv = match v {
                V::Null => FieldValue::Character(None),
                V::I(x) => FieldValue::Numeric(Some(*x as f64)),
                V::F(x) => FieldValue::Numeric(Some(*x)),
                V::B(b) => FieldValue::Logical(Some(*b)),
                V::S(s) => FieldValue::Character(Some(truncate(s, 254))),
                V::Bytes(b) => FieldValue::Character(Some(truncate(&String::from_utf8_lossy(b), 254))),
            };
            rec.insert(n.clone(), fv);
        }
        let shape = match geometry {
            None => {
                return Err(MarquetError::InvalidArgument(
                    "a null geometry: the Shapefile writer writes one shape type per file and no null shapes; write GeoPackage or FlatGeobuf".into(),
                ))
            }
            Some(w) => {
                let g = wkb::decode(w).map_err(|e| MarquetError::InvalidArgument(e.to_string()))?;
                let gt = geo_types::Geometry::<f64>::from(&g);
                if g.is_empty() {
                    return Err(MarquetError::InvalidArgument("an empty geometry has no Shapefile shape; write GeoPackage or FlatGeobuf".into()));
                } else {
                    match (self.kind, gt) {
                        (_, geo_types::Geometry::Point(p)) => shapefile::Shape::Point(p.into()),
                        (_, geo_types::Geometry::MultiPoint(m)) => shapefile::Shape::Multipoint(m.into()),
                        (_, geo_types::Geometry::LineString(l)) => shapefile::Shape::Polyline(l.into()),
                        (_, geo_types::Geometry::MultiLineString(l)) => shapefile::Shape::Polyline(l.into()),
                        (_, geo_types::Geometry::Polygon(p)) => shapefile::Shape::Polygon(p.into()),
                        (_, geo_types::Geometry::MultiPolygon(p)) => shapefile::Shape::Polygon(p.into()),
                        (_, other) => {
                            return Err(MarquetError::InvalidArgument(format!("{:?} has no Shapefile shape", geometry_name(&other))));
                        }
                    }
                }
            }
        };
        // Mixed-dimension nulls aside, the record's values must match the dBase fields.
        if values.len() != self.names.len() {
            return Err(err(&self.path, "values do not match the fields"));
        }
        write_shape(&mut self.w, &shape, &rec).map_err(|e| err(&self.path, e))
    }

    fn finish(self: Box<Self>) -> Result<()> {
        let s = *self;
        let path = s.path.clone();
        drop(s.w);
        // The writer completes the headers when dropped; check the result is readable.
        let mut f = std::fs::File::open(&path).map_err(|e| MarquetError::Io { path: path.clone(), source: e })?;
        let mut h = [0u8; 4];
        f.read_exact(&mut h).map_err(|e| err(&path, e))?;
        std::io::sink().flush().ok();
        Ok(())
    }
}

fn write_shape(w: &mut shapefile::Writer<std::io::BufWriter<std::fs::File>>, shape: &shapefile::Shape, rec: &dbase::Record) -> std::result::Result<(), shapefile::Error> {
    use shapefile::Shape;
    match shape {
        Shape::Point(p) => w.write_shape_and_record(p, rec),
        Shape::Multipoint(p) => w.write_shape_and_record(p, rec),
        Shape::Polyline(p) => w.write_shape_and_record(p, rec),
        Shape::Polygon(p) => w.write_shape_and_record(p, rec),
        other => Err(shapefile::Error::IoError(std::io::Error::other(format!("{other} is not written")))),
    }
}

fn geometry_name(g: &geo_types::Geometry<f64>) -> &'static str {
    match g {
        geo_types::Geometry::GeometryCollection(_) => "GeometryCollection",
        geo_types::Geometry::Rect(_) => "Rect",
        geo_types::Geometry::Triangle(_) => "Triangle",
        geo_types::Geometry::Line(_) => "Line",
        _ => "geometry",
    }
}

fn truncate(s: &str, max: usize) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if out.len() + c.len_utf8() > max {
            break;
        }
        out.push(c);
    }
    out
}
