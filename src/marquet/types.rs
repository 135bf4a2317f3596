//! HEP002 datatypes and attribute vocabularies: geometry-type, edges and orientation
//! enumerations, BBOX / covering / point compounds, and the CRS states.

use crate::error::{MarquetError, Result};
use crate::h5::{Dtype, Field, RawAttr, Space};
use crate::spec::{all_geometry_types, names, BBox, Dimensions, GeometryType};

/// The 28-member geometry-type enumeration, base `H5T_STD_U16LE` (HEP002 §6.3, R1).
pub fn geometry_types_dtype() -> Dtype {
    Dtype::Enum {
        base: Box::new(Dtype::U16),
        members: all_geometry_types().into_iter().map(|t| (t.name(), t.iso_code() as i64)).collect(),
    }
}

/// The edges enumeration, base `H5T_STD_U8LE` (HEP002 §9.1, R2).
pub fn edges_dtype() -> Dtype {
    Dtype::Enum {
        base: Box::new(Dtype::U8),
        members: names::EDGES_MEMBERS.iter().map(|(n, v)| (n.to_string(), *v as i64)).collect(),
    }
}

/// The orientation enumeration, base `H5T_STD_U8LE`, one member (HEP002 §9.2, R2).
pub fn orientation_dtype() -> Dtype {
    let (n, v) = names::ORIENTATION_COUNTERCLOCKWISE;
    Dtype::Enum { base: Box::new(Dtype::U8), members: vec![(n.to_string(), v as i64)] }
}

/// Field names of a box with optional Z and M (HEP002 §6.4 order).
pub fn box_field_names(z: bool, m: bool) -> Vec<&'static str> {
    let mut v = vec!["xmin", "ymin"];
    if z {
        v.push("zmin");
    }
    if m {
        v.push("mmin");
    }
    v.extend(["xmax", "ymax"]);
    if z {
        v.push("zmax");
    }
    if m {
        v.push("mmax");
    }
    v
}

/// The BBOX compound (all f64).
pub fn bbox_dtype(z: bool, m: bool) -> Dtype {
    Dtype::f64_compound(&box_field_names(z, m))
}

/// Encode a box as the BBOX compound bytes.
pub fn bbox_bytes(b: &BBox, z: bool, m: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for n in box_field_names(z, m) {
        out.extend_from_slice(&box_field(b, n).to_le_bytes());
    }
    out
}

fn box_field(b: &BBox, n: &str) -> f64 {
    match n {
        "xmin" => b.xmin,
        "ymin" => b.ymin,
        "zmin" => b.zmin,
        "mmin" => b.mmin,
        "xmax" => b.xmax,
        "ymax" => b.ymax,
        "zmax" => b.zmax,
        _ => b.mmax,
    }
}

fn set_box_field(b: &mut BBox, n: &str, v: f64) {
    if let Some(set) = box_field_setter(n) {
        set(b, v);
    }
}

/// The setter of the box field named `n` (one of [`box_field_names`]), resolved once so
/// that a decoder of many boxes does not match names per box; `None` for any other name.
pub fn box_field_setter(n: &str) -> Option<fn(&mut BBox, f64)> {
    Some(match n {
        "xmin" => |b, v| b.xmin = v,
        "ymin" => |b, v| b.ymin = v,
        "zmin" => |b, v| b.zmin = v,
        "mmin" => |b, v| b.mmin = v,
        "xmax" => |b, v| b.xmax = v,
        "ymax" => |b, v| b.ymax = v,
        "zmax" => |b, v| b.zmax = v,
        "mmax" => |b, v| b.mmax = v,
        _ => return None,
    })
}

/// Decode one box element of any compound with box field names (fields by name, any
/// float width); returns the box and whether Z / M fields were present.
pub fn decode_box(dtype: &Dtype, bytes: &[u8]) -> Option<(BBox, bool, bool)> {
    let Dtype::Compound { fields, .. } = dtype else { return None };
    let mut b = BBox::EMPTY;
    let (mut z, mut m) = (false, false);
    for f in fields {
        let raw = bytes.get(f.offset..f.offset + f.dtype.size())?;
        let v = match f.dtype {
            Dtype::Float { size: 8, .. } => f64::from_le_bytes(raw.try_into().ok()?),
            Dtype::Float { size: 4, .. } => f32::from_le_bytes(raw.try_into().ok()?) as f64,
            _ => return None,
        };
        z |= f.name.starts_with('z');
        m |= f.name.starts_with('m');
        set_box_field(&mut b, &f.name, v);
    }
    Some((b, z, m))
}

/// Does the compound have exactly the BBOX fields, in order, all f64 (HEP002 §6.4)?
pub fn is_strict_bbox_dtype(dtype: &Dtype) -> Option<(bool, bool)> {
    let Dtype::Compound { fields, .. } = dtype else { return None };
    for (z, m) in [(false, false), (true, false), (false, true), (true, true)] {
        let want = box_field_names(z, m);
        if fields.len() == want.len()
            && fields.iter().zip(&want).all(|(f, w)| f.name == *w && matches!(f.dtype, Dtype::Float { size: 8, .. }))
        {
            return Some((z, m));
        }
    }
    None
}

/// The covering-column compound: `xmin, ymin, [zmin,] xmax, ymax[, zmax]` of f64 or f32 (§10.5).
pub fn covering_dtype(z: bool, f32: bool) -> Dtype {
    let names = box_field_names(z, false);
    let w = if f32 { 4 } else { 8 };
    Dtype::Compound {
        size: w * names.len(),
        fields: names
            .iter()
            .enumerate()
            .map(|(i, n)| Field { name: n.to_string(), offset: w * i, dtype: if f32 { Dtype::F32 } else { Dtype::F64 } })
            .collect(),
    }
}

/// Encode one covering row. 32-bit boxes round minima down and maxima up (§10.5).
pub fn covering_bytes(b: &BBox, z: bool, f32: bool, out: &mut Vec<u8>) {
    for n in box_field_names(z, false) {
        let v = box_field(b, n);
        if f32 {
            let is_min = n.ends_with("min");
            out.extend_from_slice(&round_f32(v, is_min).to_le_bytes());
        } else {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
}

/// Round `v` to f32 toward −∞ (`down`) or +∞.
pub fn round_f32(v: f64, down: bool) -> f32 {
    let f = v as f32;
    if v.is_nan() || v.is_infinite() || f as f64 == v {
        return f;
    }
    if down {
        if f as f64 > v {
            next_down(f)
        } else {
            f
        }
    } else if (f as f64) < v {
        next_up(f)
    } else {
        f
    }
}

fn next_up(f: f32) -> f32 {
    if f.is_nan() || f == f32::INFINITY {
        return f;
    }
    if f == 0.0 {
        return f32::from_bits(1);
    }
    let b = f.to_bits();
    f32::from_bits(if f > 0.0 { b + 1 } else { b - 1 })
}

fn next_down(f: f32) -> f32 {
    -next_up(-f)
}

/// The point-column compound `{x, y[, z][, m]}` (HEP002 §7.4).
pub fn point_dtype(dims: Dimensions, f32: bool) -> Dtype {
    let mut n = vec!["x", "y"];
    if dims.has_z() {
        n.push("z");
    }
    if dims.has_m() {
        n.push("m");
    }
    let w = if f32 { 4 } else { 8 };
    Dtype::Compound {
        size: w * n.len(),
        fields: n
            .iter()
            .enumerate()
            .map(|(i, x)| Field { name: x.to_string(), offset: w * i, dtype: if f32 { Dtype::F32 } else { Dtype::F64 } })
            .collect(),
    }
}

/// Read a point compound's dimensions and width; `None` if it is not a valid point type.
pub fn point_layout(dtype: &Dtype) -> Option<(Dimensions, bool)> {
    let Dtype::Compound { fields, .. } = dtype else { return None };
    let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
    let dims = match names.as_slice() {
        ["x", "y"] => Dimensions::Xy,
        ["x", "y", "z"] => Dimensions::Xyz,
        ["x", "y", "m"] => Dimensions::Xym,
        ["x", "y", "z", "m"] => Dimensions::Xyzm,
        _ => return None,
    };
    let w = fields[0].dtype.clone();
    if !matches!(w, Dtype::Float { size: 4 | 8, .. }) || fields.iter().any(|f| f.dtype.to_le() != w.to_le()) {
        return None;
    }
    Some((dims, w.size() == 4))
}

/// Geometry types from a GEOMETRY_TYPES attribute, by member name (R1). Unknown names are
/// returned as errors so the validator can report them.
pub fn read_geometry_types(a: &RawAttr) -> std::result::Result<Vec<GeometryType>, String> {
    if !matches!(a.space, Space::Simple(ref d) if d.len() == 1) {
        return Err("GEOMETRY_TYPES must be one-dimensional".into());
    }
    let names = a.enum_names().ok_or_else(|| "GEOMETRY_TYPES is not an enumeration".to_string())?;
    names
        .into_iter()
        .map(|n| {
            let n = n.ok_or_else(|| "GEOMETRY_TYPES element has no member name".to_string())?;
            GeometryType::from_name(&n).ok_or_else(|| format!("unknown geometry type member {n:?}"))
        })
        .collect()
}

/// Edge interpretation (HEP002 §9.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edges {
    /// `PLANAR` (code 0): straight lines in coordinate space; the meaning of an absent `EDGES`
    /// and of Parquet GEOMETRY.
    Planar,
    /// `SPHERICAL` (code 1): great-circle arcs on the sphere (Parquet GEOGRAPHY, spherical).
    Spherical,
    /// `VINCENTY` (code 2): ellipsoidal geodesics by Vincenty's algorithm.
    Vincenty,
    /// `THOMAS` (code 3): ellipsoidal geodesics by Thomas's algorithm.
    Thomas,
    /// `ANDOYER` (code 4): ellipsoidal geodesics by Andoyer's algorithm.
    Andoyer,
    /// `KARNEY` (code 5): exact ellipsoidal geodesics (Karney 2013).
    Karney,
    /// A member name this library does not know (reported, never assumed planar).
    Unknown(String),
}

impl Edges {
    /// The enumeration member name (ruling R2), e.g. `"SPHERICAL"`, or the unknown name as read.
    pub fn name(&self) -> &str {
        match self {
            Edges::Planar => "PLANAR",
            Edges::Spherical => "SPHERICAL",
            Edges::Vincenty => "VINCENTY",
            Edges::Thomas => "THOMAS",
            Edges::Andoyer => "ANDOYER",
            Edges::Karney => "KARNEY",
            Edges::Unknown(s) => s,
        }
    }
    /// The interpretation named by an `EDGES` member name (case-sensitive); any other name
    /// gives [`Edges::Unknown`].
    pub fn from_name(n: &str) -> Edges {
        match n {
            "PLANAR" => Edges::Planar,
            "SPHERICAL" => Edges::Spherical,
            "VINCENTY" => Edges::Vincenty,
            "THOMAS" => Edges::Thomas,
            "ANDOYER" => Edges::Andoyer,
            "KARNEY" => Edges::Karney,
            o => Edges::Unknown(o.to_string()),
        }
    }
    /// The lowercase GeoParquet spelling (`planar`, `spherical`, …).
    pub fn geoparquet_name(&self) -> String {
        self.name().to_ascii_lowercase()
    }
    /// True for [`Edges::Planar`] only (an unknown name is not planar, HEP002 §9.1).
    pub fn is_planar(&self) -> bool {
        *self == Edges::Planar
    }
    /// The enum code we write (R2).
    pub fn code(&self) -> Option<u8> {
        names::EDGES_MEMBERS.iter().find(|(n, _)| *n == self.name()).map(|(_, v)| *v)
    }
}

/// A column's coordinate reference system (HEP002 §8.1).
#[derive(Debug, Clone, PartialEq)]
pub enum Crs {
    /// Attribute absent: OGC:CRS84.
    Default,
    /// A PROJJSON document.
    ProjJson(String),
    /// Null dataspace: undefined / unknown.
    Unknown,
}

/// Largest PROJJSON document we parse (HEP002 §17 SHOULD limit size).
pub const MAX_PROJJSON_BYTES: usize = 1 << 20;
/// Deepest JSON nesting we accept in a PROJJSON document.
pub const MAX_PROJJSON_DEPTH: usize = 64;

/// Parse a PROJJSON document with size and depth limits.
pub fn parse_projjson(doc: &str) -> std::result::Result<serde_json::Value, String> {
    if doc.len() > MAX_PROJJSON_BYTES {
        return Err(format!("projjson document of {} bytes exceeds the {} byte limit", doc.len(), MAX_PROJJSON_BYTES));
    }
    // Check depth before handing to serde_json (which recurses).
    let mut depth = 0usize;
    let mut in_str = false;
    let mut esc = false;
    for c in doc.bytes() {
        if in_str {
            match (esc, c) {
                (true, _) => esc = false,
                (false, b'\\') => esc = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_str = true,
            b'{' | b'[' => {
                depth += 1;
                if depth > MAX_PROJJSON_DEPTH {
                    return Err(format!("projjson nesting exceeds {MAX_PROJJSON_DEPTH} levels"));
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    let v: serde_json::Value = serde_json::from_str(doc).map_err(|e| format!("projjson is not valid json: {e}"))?;
    if !v.is_object() {
        return Err("projjson document is not a json object".into());
    }
    Ok(v)
}

impl Crs {
    /// `(authority, code)` from the PROJJSON `id` member (or OGC/CRS84 for the default).
    pub fn id(&self) -> Option<(String, String)> {
        match self {
            Crs::Default => Some(("OGC".into(), "CRS84".into())),
            Crs::Unknown => None,
            Crs::ProjJson(doc) => {
                let v = parse_projjson(doc).ok()?;
                let id = v.get("id")?;
                let auth = id.get("authority")?.as_str()?.to_string();
                let code = match id.get("code")? {
                    serde_json::Value::String(s) => s.clone(),
                    serde_json::Value::Number(n) => n.to_string(),
                    _ => return None,
                };
                Some((auth, code))
            }
        }
    }
    /// A short human name: the PROJJSON `name`, or the authority code.
    pub fn display_name(&self) -> String {
        match self {
            Crs::Default => "OGC:CRS84 (default)".into(),
            Crs::Unknown => "unknown".into(),
            Crs::ProjJson(doc) => {
                let v = parse_projjson(doc).ok();
                let name = v.as_ref().and_then(|v| v.get("name")).and_then(|n| n.as_str()).map(|s| s.to_string());
                match (name, self.id()) {
                    (Some(n), Some((a, c))) => format!("{n} ({a}:{c})"),
                    (Some(n), None) => n,
                    (None, Some((a, c))) => format!("{a}:{c}"),
                    _ => "PROJJSON".into(),
                }
            }
        }
    }
    /// Geographic (longitude/latitude)? The default is; an unknown CRS is not (R10);
    /// a PROJJSON document is when its type is GeographicCRS or its id is OGC:CRS84 /
    /// EPSG:4326 (HEP002 §8.4).
    pub fn is_geographic(&self) -> bool {
        match self {
            Crs::Default => true,
            Crs::Unknown => false,
            Crs::ProjJson(doc) => {
                if let Some((a, c)) = self.id() {
                    if (a == "OGC" && c == "CRS84") || (a == "EPSG" && c == "4326") {
                        return true;
                    }
                }
                parse_projjson(doc)
                    .ok()
                    .and_then(|v| v.get("type").and_then(|t| t.as_str()).map(|t| t == "GeographicCRS"))
                    .unwrap_or(false)
            }
        }
    }
}

/// The PROJJSON of OGC:CRS84 as GeoParquet gives it (HEP002 §8.4).
pub const CRS84_PROJJSON: &str = r#"{"$schema":"https://proj.org/schemas/v0.5/projjson.schema.json","type":"GeographicCRS","name":"WGS 84 longitude-latitude","datum":{"type":"GeodeticReferenceFrame","name":"World Geodetic System 1984","ellipsoid":{"name":"WGS 84","semi_major_axis":6378137,"inverse_flattening":298.257223563}},"coordinate_system":{"subtype":"ellipsoidal","axis":[{"name":"Geodetic longitude","abbreviation":"Lon","direction":"east","unit":"degree"},{"name":"Geodetic latitude","abbreviation":"Lat","direction":"north","unit":"degree"}]},"id":{"authority":"OGC","code":"CRS84"}}"#;

/// The storage form of a geometry column (HEP002 §7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageForm {
    /// A list column of WKB bytes (§7.2).
    VarWkb,
    /// An opaque column of `size`-byte WKB values (§7.3).
    FixedWkb {
        /// Bytes per value, the opaque datatype's size (21 for a 2-D point).
        size: usize,
    },
    /// A compound point column (§7.4).
    Point {
        /// The coordinate fields: `x, y[, z][, m]`.
        dims: Dimensions,
        /// 32-bit fields instead of the recommended 64-bit ones.
        f32: bool,
    },
}

impl StorageForm {
    /// The GEOMETRY_ENCODING token.
    pub fn encoding(&self) -> &'static str {
        match self {
            StorageForm::VarWkb | StorageForm::FixedWkb { .. } => names::ENCODING_WKB,
            StorageForm::Point { .. } => names::ENCODING_POINT,
        }
    }
    /// Human description.
    pub fn describe(&self) -> String {
        match self {
            StorageForm::VarWkb => "variable-length WKB".into(),
            StorageForm::FixedWkb { size } => format!("fixed-length WKB ({size} bytes)"),
            StorageForm::Point { dims, f32 } => {
                format!("point {:?} {}", dims, if *f32 { "float32" } else { "float64" }).to_lowercase()
            }
        }
    }
}

/// Unused-result guard for `Result` imports in some builds.
#[allow(dead_code)]
fn _r() -> Result<()> {
    Err(MarquetError::Unsupported(String::new()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::bool_assert_comparison)]
    fn f32_rounding_is_outward() {
        let v = 0.1f64;
        let lo = round_f32(v, true);
        let hi = round_f32(v, false);
        assert!((lo as f64) <= v && (hi as f64) >= v);
        assert!(lo < hi);
        assert_eq!(round_f32(1.5, true), 1.5);
        assert_eq!(round_f32(-0.1, false) as f64 >= -0.1, true);
        assert_eq!(round_f32(f64::INFINITY, true), f32::INFINITY);
    }

    #[test]
    fn projjson_limits() {
        let deep = "[".repeat(100) + &"]".repeat(100);
        assert!(parse_projjson(&deep).unwrap_err().contains("nesting"));
        assert!(parse_projjson("[1]").unwrap_err().contains("object"));
        assert!(Crs::ProjJson(CRS84_PROJJSON.into()).is_geographic());
        assert_eq!(Crs::ProjJson(CRS84_PROJJSON.into()).id(), Some(("OGC".into(), "CRS84".into())));
        let utm = r#"{"type":"ProjectedCRS","name":"UTM","id":{"authority":"EPSG","code":2961}}"#;
        assert!(!Crs::ProjJson(utm.into()).is_geographic());
        assert_eq!(Crs::ProjJson(utm.into()).id(), Some(("EPSG".into(), "2961".into())));
    }

    #[test]
    fn point_layouts() {
        assert_eq!(point_layout(&point_dtype(Dimensions::Xyzm, false)), Some((Dimensions::Xyzm, false)));
        assert_eq!(point_layout(&point_dtype(Dimensions::Xym, true)), Some((Dimensions::Xym, true)));
        assert_eq!(point_layout(&bbox_dtype(false, false)), None);
        assert_eq!(is_strict_bbox_dtype(&bbox_dtype(true, true)), Some((true, true)));
        assert_eq!(box_field_names(true, true), vec!["xmin", "ymin", "zmin", "mmin", "xmax", "ymax", "zmax", "mmax"]);
    }
}
