//! Coordinate reference systems from what users and files say (issue #22, HEP002 §8).
//!
//! HEP002 §8.1 stores a CRS only as PROJJSON. Files and users name CRSs in many other
//! ways: authority codes (`EPSG:3857`, `OGC:CRS84`, `ESRI:102100`), Parquet's `srid:N`,
//! OGC URNs and URLs (`urn:ogc:def:crs:EPSG::3857`, GeoJSON's legacy `crs` member), and
//! WKT 1 / WKT 2 (Shapefile `.prj`, FlatGeobuf, GeoPackage, pre-1.0 GeoParquet).
//! [`resolve`] turns any of them into the [`Crs`] Marquet stores, with PROJ (cargo
//! feature `proj`, on by default; see [`proj`] for why the C API is called directly).
//!
//! Rules:
//! - Never assign a CRS the source does not state: what cannot be resolved is an error
//!   here, and importers keep the text (column description), warn, and store an unknown
//!   CRS.
//! - OGC:CRS84 and EPSG:4326 (and every spelling of them) resolve to [`Crs::Default`],
//!   written as no attribute: the same coordinates under the axis-order rule of HEP002
//!   §8.3 / §8.4. So does any resolved document whose `id` names one of the two.
//! - Without PROJ only those built-in spellings (and PROJJSON documents) resolve; any
//!   other identifier is reported as needing PROJ.
//!
//! [`Transformer`] reprojects coordinates (PROJ only), used by `convert --to-crs`
//! ([`reproject_table`]) and by GeoJSON output, which RFC 7946 fixes to CRS84.

#[cfg(feature = "proj")]
pub mod proj;
mod reproject;

pub use reproject::{reproject_table, ReprojectReport, ValuesReprojection};

use crate::marquet::projjson::check_projjson_value;
use crate::marquet::types::parse_projjson;
use crate::marquet::Crs;
use crate::wkb::{self, ByteOrder, Coord, Geometry};

/// Longest CRS definition handed to PROJ (WKT of real CRSs is a few KiB; HEP002 §17 asks
/// consumers to limit what they parse).
pub const MAX_DEFINITION_BYTES: usize = 64 * 1024;

/// Was this build made with PROJ (cargo feature `proj`)?
pub fn proj_available() -> bool {
    cfg!(feature = "proj")
}

/// Spellings of OGC:CRS84 / EPSG:4326 known without PROJ (lowercase).
const CRS84_NAMES: &[&str] = &[
    "ogc:crs84",
    "crs84",
    "epsg:4326",
    "srid:4326",
    "urn:ogc:def:crs:ogc:1.3:crs84",
    "urn:ogc:def:crs:ogc::crs84",
    "urn:ogc:def:crs:epsg::4326",
    "urn:ogc:def:crs:epsg:6.6:4326",
    "http://www.opengis.net/def/crs/ogc/1.3/crs84",
    "http://www.opengis.net/def/crs/epsg/0/4326",
    "https://www.opengis.net/def/crs/ogc/1.3/crs84",
    "https://www.opengis.net/def/crs/epsg/0/4326",
];

/// Does a PROJJSON `id` name OGC:CRS84 or EPSG:4326?
fn is_crs84_id(v: &serde_json::Value) -> bool {
    let Some(id) = v.get("id") else { return false };
    let auth = id.get("authority").and_then(|a| a.as_str()).unwrap_or("");
    let code = match id.get("code") {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Number(n)) => n.to_string(),
        _ => return false,
    };
    (auth.eq_ignore_ascii_case("OGC") && code.eq_ignore_ascii_case("CRS84")) || (auth.eq_ignore_ascii_case("EPSG") && code == "4326")
}

/// A checked PROJJSON value as the [`Crs`] to store.
fn from_projjson_value(v: serde_json::Value) -> Result<Crs, String> {
    check_projjson_value(&v)?;
    if is_crs84_id(&v) {
        return Ok(Crs::Default);
    }
    Ok(Crs::ProjJson(v.to_string()))
}

/// Resolve a CRS definition to the [`Crs`] Marquet stores (HEP002 §8.1): PROJJSON text,
/// an authority code (`EPSG:3857`, `OGC:CRS84`, `ESRI:102100`), Parquet's `srid:N` (an
/// EPSG code; `srid:0` is unknown), an OGC URN or URL, WKT 1 or WKT 2, or a PROJ string.
/// `unknown` states an unknown CRS. The error says why the definition was not resolved
/// (without PROJ: that it needs PROJ).
pub fn resolve(definition: &str) -> Result<Crs, String> {
    let t = definition.trim();
    if t.is_empty() {
        return Err("empty CRS definition".into());
    }
    if t.len() > MAX_DEFINITION_BYTES {
        return Err(format!("CRS definition of {} bytes exceeds the {MAX_DEFINITION_BYTES}-byte limit", t.len()));
    }
    if t.starts_with('{') {
        let v = parse_projjson(t)?;
        return match from_projjson_value(v) {
            Ok(c) => Ok(c),
            // An abbreviated document PROJ may still read (e.g. without `datum`).
            Err(why) => resolve_with_proj(t).map_err(|_| why),
        };
    }
    let lower = t.to_ascii_lowercase();
    if CRS84_NAMES.contains(&lower.as_str()) {
        return Ok(Crs::Default);
    }
    if lower == "srid:0" || lower == "unknown" {
        return Ok(Crs::Unknown);
    }
    // Parquet's `srid:N`: "a spatial reference identifier", customarily EPSG's.
    let t = match lower.strip_prefix("srid:") {
        Some(n) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => format!("EPSG:{n}"),
        Some(_) => return Err(format!("{t:?} is not srid:<number>")),
        None => t.to_string(),
    };
    resolve_with_proj(&t)
}

#[cfg(feature = "proj")]
fn resolve_with_proj(t: &str) -> Result<Crs, String> {
    let ctx = proj::Ctx::new()?;
    let p = ctx.create(t).map_err(|e| format!("PROJ cannot read {}: {e}", short(t)))?;
    if !p.is_crs() {
        return Err(format!("{} is not a coordinate reference system", short(t)));
    }
    let mut doc = p.projjson()?;
    let mut v = parse_projjson(&doc)?;
    // A WKT without an authority (ESRI's `.prj`): the EPSG CRS it is, when PROJ is sure.
    if v.get("id").is_none() && (t.contains('[') || t.contains('(')) {
        if let Some(e) = p.identify_epsg() {
            doc = e.projjson()?;
            v = parse_projjson(&doc)?;
        }
    }
    from_projjson_value(v).map_err(|e| format!("PROJ's PROJJSON for {} is not a CRS: {e}", short(t)))
}

#[cfg(not(feature = "proj"))]
fn resolve_with_proj(t: &str) -> Result<Crs, String> {
    Err(format!("resolving {} needs PROJ (this build has no `proj` feature)", short(t)))
}

/// A definition shortened for messages (WKT can be long).
fn short(t: &str) -> String {
    if t.len() <= 80 {
        format!("{t:?}")
    } else {
        let mut end = 60;
        while !t.is_char_boundary(end) {
            end -= 1;
        }
        format!("{:?}… ({} bytes)", &t[..end], t.len())
    }
}

/// The WKT 1 of OGC:CRS84 in ESRI's dialect, as GDAL writes it to a Shapefile `.prj`
/// (used without PROJ for the default CRS).
pub const CRS84_WKT1_ESRI: &str = r#"GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984",SPHEROID["WGS_1984",6378137.0,298.257223563]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]]"#;

/// WKT dialects [`to_wkt`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WktDialect {
    /// WKT 2 (ISO 19162:2019), for FlatGeobuf and GeoPackage.
    Wkt2,
    /// WKT 1 as GDAL writes it.
    Wkt1Gdal,
    /// WKT 1 in ESRI's dialect, for Shapefile `.prj` files.
    Wkt1Esri,
}

/// The CRS as WKT (`None` for an unknown CRS). Without PROJ only the default CRS has one
/// (in [`WktDialect::Wkt1Esri`], and as WKT 1 for the others).
pub fn to_wkt(crs: &Crs, dialect: WktDialect) -> Result<Option<String>, String> {
    let def = match crs {
        Crs::Unknown => return Ok(None),
        Crs::Default => "OGC:CRS84".to_string(),
        Crs::ProjJson(doc) => doc.clone(),
    };
    #[cfg(feature = "proj")]
    {
        let ctx = proj::Ctx::new()?;
        let p = ctx.create(&def)?;
        let kind = match dialect {
            WktDialect::Wkt2 => proj::WKT2_2019,
            WktDialect::Wkt1Gdal => proj::WKT1_GDAL,
            WktDialect::Wkt1Esri => proj::WKT1_ESRI,
        };
        p.wkt(kind).map(Some)
    }
    #[cfg(not(feature = "proj"))]
    {
        let _ = (dialect, def);
        match crs {
            Crs::Default => Ok(Some(CRS84_WKT1_ESRI.to_string())),
            _ => Err(format!("writing {} as WKT needs PROJ (this build has no `proj` feature)", crs.display_name())),
        }
    }
}

/// An `(authority, code)` pair with an integer code (EPSG's), for formats that store one
/// (FlatGeobuf, GeoPackage): `("EPSG", 4326)` for the default CRS.
pub fn epsg_like_code(crs: &Crs) -> Option<(String, i32)> {
    match crs {
        Crs::Default => Some(("EPSG".into(), 4326)),
        Crs::Unknown => None,
        Crs::ProjJson(_) => {
            let (a, c) = crs.id()?;
            Some((a, c.parse().ok()?))
        }
    }
}

/// Is the CRS OGC:CRS84 or an equivalent (EPSG:4326 under the axis rule of HEP002 §8.3)?
pub fn is_crs84(crs: &Crs) -> bool {
    match crs {
        Crs::Default => true,
        Crs::Unknown => false,
        Crs::ProjJson(doc) => parse_projjson(doc).map(|v| is_crs84_id(&v)).unwrap_or(false),
    }
}

/// Tolerance of [`outside_geographic_range`], in degrees (ruling R8's 1e-9°).
const RANGE_TOLERANCE: f64 = 1e-9;

/// Why a box is not one of longitudes and latitudes in degrees (−180..180, −90..90, with
/// ruling R8's tolerance; a wrapping box, xmin > xmax, is allowed), or `None`.
pub fn outside_geographic_range(b: &crate::BBox) -> Option<String> {
    let lim = |v: f64, m: f64| v.is_finite() && v.abs() > m + RANGE_TOLERANCE;
    if lim(b.xmin, 180.0) || lim(b.xmax, 180.0) {
        return Some(format!("x spans {}..{}, outside the longitudes -180..180", b.xmin, b.xmax));
    }
    if lim(b.ymin, 90.0) || lim(b.ymax, 90.0) {
        return Some(format!("y spans {}..{}, outside the latitudes -90..90", b.ymin, b.ymax));
    }
    None
}

/// Reprojects coordinates from one CRS to another with PROJ, easting/longitude first on
/// both sides (HEP002 §8.3). Not `Sync`: one per thread.
pub struct Transformer {
    #[cfg(feature = "proj")]
    op: proj::Pj,
    // Dropped after `op`, which lives in it.
    #[cfg(feature = "proj")]
    _ctx: proj::Ctx,
    from: String,
    to: String,
}

impl std::fmt::Debug for Transformer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Transformer({} -> {})", self.from, self.to)
    }
}

impl Transformer {
    /// The transformation from `from` to `to`. An unknown CRS on either side is an error
    /// (nothing says what the coordinates are), as is a build without PROJ.
    pub fn new(from: &Crs, to: &Crs) -> Result<Transformer, String> {
        let def = |c: &Crs, side: &str| match c {
            Crs::Unknown => Err(format!("the {side} CRS is unknown: state it first (convert --crs CODE)")),
            Crs::Default => Ok("OGC:CRS84".to_string()),
            Crs::ProjJson(d) => Ok(d.clone()),
        };
        let (f, t) = (def(from, "source")?, def(to, "target")?);
        #[cfg(feature = "proj")]
        {
            let ctx = proj::Ctx::new()?;
            let a = ctx.create(&f)?;
            let b = ctx.create(&t)?;
            let op = ctx.crs_to_crs(&a, &b).map_err(|e| format!("no transformation from {} to {}: {e}", from.display_name(), to.display_name()))?;
            drop((a, b));
            Ok(Transformer { op, _ctx: ctx, from: from.display_name(), to: to.display_name() })
        }
        #[cfg(not(feature = "proj"))]
        {
            let _ = (f, t);
            Err(format!(
                "reprojecting from {} to {} needs PROJ (this build has no `proj` feature)",
                from.display_name(),
                to.display_name()
            ))
        }
    }

    /// Transform coordinates in place; `z` empty or as long as `x`. Any coordinate PROJ
    /// cannot transform (outside the projection's domain) is an error naming it.
    pub fn transform(&self, x: &mut [f64], y: &mut [f64], z: &mut [f64]) -> Result<(), String> {
        #[cfg(feature = "proj")]
        {
            self.op.trans(x, y, z)?;
            if let Some(i) = x.iter().zip(y.iter()).position(|(a, b)| !a.is_finite() || !b.is_finite()) {
                return Err(format!("coordinate {} of {} cannot be transformed from {} to {}", i + 1, x.len(), self.from, self.to));
            }
            Ok(())
        }
        #[cfg(not(feature = "proj"))]
        {
            let _ = (x, y, z);
            Err("reprojection needs PROJ".into())
        }
    }

    /// The box of `b` (`[xmin, ymin, xmax, ymax]`) after the transformation, each edge
    /// densified with `densify` points (PROJ's `proj_trans_bounds`): a pole inside the box
    /// widens a lon/lat result to all longitudes, an antimeridian crossing comes back as
    /// `xmin > xmax` (issue #37, Havasu's raster bounds).
    pub fn transform_bounds(&self, b: [f64; 4], densify: i32) -> Result<[f64; 4], String> {
        #[cfg(feature = "proj")]
        {
            self.op.trans_bounds(b, densify).map_err(|e| format!("the box {b:?} cannot be transformed from {} to {}: {e}", self.from, self.to))
        }
        #[cfg(not(feature = "proj"))]
        {
            let _ = (b, densify);
            Err("reprojection needs PROJ".into())
        }
    }

    /// Transform every coordinate of a decoded geometry (X, Y, and Z when present; M is
    /// kept). Empty points (NaN) stay empty.
    pub fn transform_geometry(&self, g: &mut Geometry) -> Result<(), String> {
        let mut coords: Vec<&mut Coord> = Vec::new();
        collect(g, &mut coords);
        let live: Vec<&mut Coord> = coords.into_iter().filter(|c| !(c.x.is_nan() && c.y.is_nan())).collect();
        if live.is_empty() {
            return Ok(());
        }
        // X and Y transform together: one without the other has no position to transform
        // (issue #32: NaN ordinates are kept, but not invented or dropped).
        if let Some(i) = live.iter().position(|c| c.x.is_nan() || c.y.is_nan()) {
            let c = &live[i];
            return Err(format!(
                "coordinate {} of {} ({:?}, {:?}) has one NaN ordinate and cannot be transformed from {} to {}",
                i + 1,
                live.len(),
                c.x,
                c.y,
                self.from,
                self.to
            ));
        }
        let with_z = live.iter().all(|c| !c.z.is_nan());
        let mut x: Vec<f64> = live.iter().map(|c| c.x).collect();
        let mut y: Vec<f64> = live.iter().map(|c| c.y).collect();
        let mut z: Vec<f64> = if with_z { live.iter().map(|c| c.z).collect() } else { Vec::new() };
        self.transform(&mut x, &mut y, &mut z)?;
        for (i, c) in live.into_iter().enumerate() {
            c.x = x[i];
            c.y = y[i];
            if with_z {
                c.z = z[i];
            }
        }
        Ok(())
    }

    /// Transform one WKB value (little-endian ISO WKB out).
    pub fn transform_wkb(&self, w: &[u8]) -> Result<Vec<u8>, String> {
        let mut g = wkb::decode(w).map_err(|e| e.to_string())?;
        self.transform_geometry(&mut g)?;
        Ok(wkb::encode(&g, ByteOrder::LittleEndian))
    }
}

/// Every coordinate of `g`, in order.
fn collect<'a>(g: &'a mut Geometry, out: &mut Vec<&'a mut Coord>) {
    match g {
        Geometry::Point(p) => out.push(&mut p.coord),
        Geometry::LineString(l) => out.extend(l.coords.iter_mut()),
        Geometry::Polygon(p) => out.extend(p.rings.iter_mut().flatten()),
        Geometry::MultiPoint(m) => out.extend(m.points.iter_mut().map(|p| &mut p.coord)),
        Geometry::MultiLineString(m) => out.extend(m.lines.iter_mut().flat_map(|l| l.coords.iter_mut())),
        Geometry::MultiPolygon(m) => out.extend(m.polygons.iter_mut().flat_map(|p| p.rings.iter_mut().flatten())),
        Geometry::GeometryCollection(c) => {
            for g in c.geometries.iter_mut() {
                collect(g, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_crs84_spellings_need_no_proj() {
        for s in ["OGC:CRS84", "EPSG:4326", "srid:4326", "urn:ogc:def:crs:EPSG::4326", "urn:ogc:def:crs:OGC:1.3:CRS84", " crs84 "] {
            assert_eq!(resolve(s).unwrap(), Crs::Default, "{s}");
        }
        assert_eq!(resolve("srid:0").unwrap(), Crs::Unknown);
        assert!(resolve("").is_err());
        assert!(resolve("srid:abc").unwrap_err().contains("srid:<number>"));
        let crs84 = crate::marquet::types::CRS84_PROJJSON;
        assert_eq!(resolve(crs84).unwrap(), Crs::Default);
    }

    #[cfg(not(feature = "proj"))]
    #[test]
    fn without_proj_other_codes_say_so() {
        assert!(resolve("EPSG:3857").unwrap_err().contains("needs PROJ"));
    }

    #[cfg(feature = "proj")]
    #[test]
    fn authority_codes_urns_and_wkt_resolve_with_proj() {
        let by_code = resolve("EPSG:3857").unwrap();
        assert_eq!(by_code.id(), Some(("EPSG".to_string(), "3857".to_string())));
        assert!(!by_code.is_geographic());
        assert_eq!(resolve("urn:ogc:def:crs:EPSG::3857").unwrap(), by_code);
        assert_eq!(resolve("srid:3857").unwrap(), by_code);
        assert_eq!(resolve("http://www.opengis.net/def/crs/EPSG/0/3857").unwrap(), by_code);
        let Crs::ProjJson(doc) = &by_code else { panic!() };
        assert!(doc.contains("\"type\":\"ProjectedCRS\""), "{doc}");
        // WKT 1 with an AUTHORITY, as a Shapefile .prj or GDAL writes it.
        let wkt = to_wkt(&by_code, WktDialect::Wkt1Gdal).unwrap().unwrap();
        assert!(wkt.starts_with("PROJCS["), "{wkt}");
        assert_eq!(resolve(&wkt).unwrap().id(), by_code.id());
        let wkt2 = to_wkt(&by_code, WktDialect::Wkt2).unwrap().unwrap();
        assert_eq!(resolve(&wkt2).unwrap().id(), by_code.id());
        // UTM 32N; a geographic CRS other than WGS 84.
        assert_eq!(resolve("EPSG:25832").unwrap().id(), Some(("EPSG".into(), "25832".into())));
        assert!(resolve("EPSG:4269").unwrap().is_geographic());
        // Spellings of 4326 that need PROJ still become the default.
        assert_eq!(resolve("urn:ogc:def:crs:EPSG:9.1:4326").unwrap(), Crs::Default);
        // Unresolvable: an error with PROJ's reason, never a guess.
        assert!(resolve("EPSG:999999").unwrap_err().contains("EPSG:999999"));
        assert!(resolve("not a crs").is_err());
        // A projection method alone is not a CRS.
        assert!(resolve("+proj=merc +a=1 +type=crs").is_ok());
        assert!(resolve("+proj=pipeline +step +proj=axisswap +order=2,1").unwrap_err().contains("not a coordinate reference system"));
    }

    #[cfg(feature = "proj")]
    #[test]
    fn transformer_reprojects_wkb_and_round_trips() {
        let merc = resolve("EPSG:3857").unwrap();
        let fwd = Transformer::new(&Crs::Default, &merc).unwrap();
        let back = Transformer::new(&merc, &Crs::Default).unwrap();
        let (mut x, mut y) = (vec![10.0, -180.0], vec![50.0, 0.0]);
        fwd.transform(&mut x, &mut y, &mut []).unwrap();
        // Spherical Mercator: x = R·λ, y = R·ln(tan(π/4 + φ/2)), R = 6378137.
        let r = 6378137.0_f64;
        assert!((x[0] - r * 10f64.to_radians()).abs() < 1e-6, "{}", x[0]);
        assert!((y[0] - r * (std::f64::consts::FRAC_PI_4 + 25f64.to_radians()).tan().ln()).abs() < 1e-6, "{}", y[0]);
        assert!((x[1] + r * std::f64::consts::PI).abs() < 1e-6);
        let line = wkb::encode(
            &Geometry::LineString(wkb::LineString { dims: crate::Dimensions::Xy, coords: vec![Coord::xy(10.0, 50.0), Coord::xy(11.5, 51.25)] }),
            ByteOrder::LittleEndian,
        );
        let there = fwd.transform_wkb(&line).unwrap();
        let again = back.transform_wkb(&there).unwrap();
        let Geometry::LineString(l) = wkb::decode(&again).unwrap() else { panic!() };
        assert!((l.coords[1].x - 11.5).abs() < 1e-9 && (l.coords[1].y - 51.25).abs() < 1e-9);
        // Mercator is undefined at the poles: an error, not infinities in the data.
        let (mut x, mut y) = (vec![0.0], vec![91.0]);
        let r = fwd.transform(&mut x, &mut y, &mut []);
        assert!(r.is_err(), "{r:?} {x:?} {y:?}");
        assert!(Transformer::new(&Crs::Unknown, &merc).unwrap_err().contains("unknown"));
    }
}
