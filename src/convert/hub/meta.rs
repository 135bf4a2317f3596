//! The `geo` vocabulary of geometry fields: GeoParquet's `geo` key-value metadata (all
//! versions 0.x – 2.0), the CRS forms of the Parquet GEOMETRY / GEOGRAPHY logical types
//! (HEP002 §14), and the same members in GeoArrow extension metadata — how every source
//! describes its geometry fields to the hub.
//!
//! Parsing is lenient where the GeoParquet versions differ (pre-1.0 `geometry_type`,
//! `schema_version`, explicit JSON nulls) and strict where a value would be misread
//! (missing `version`/`columns`, a `primary_column` that is not a column, a PROJJSON
//! object without `type`, an unknown major version).

use serde_json::{Map, Value};

use crate::convert::{code, fail, Finding};
use crate::error::Result;
use crate::marquet::{types::parse_projjson, Crs, Edges};
use crate::spec::GeometryType;

pub use crate::convert::hub::source::{Encoding, GeoColumnMeta};

/// The parsed `geo` key.
#[derive(Debug, Clone)]
pub struct GeoMeta {
    /// The `version` member as written, e.g. `"1.1.0"`.
    pub version: String,
    /// `primary_column`: always one of `columns`; becomes `GEOMETRY_COLUMNS[0]` (HEP002 §5.2).
    pub primary_column: String,
    /// Every geometry column, in the order of the `columns` object.
    pub columns: Vec<GeoColumnMeta>,
}

/// Parse "1.0.0", "1.0.0-beta.1", "2.0-dev", "0.4.0" → (major, minor).
pub fn parse_version(v: &str) -> Option<(u64, u64)> {
    let core = v.split(['-', '+']).next()?;
    let mut it = core.split('.');
    let major = it.next()?.trim().parse().ok()?;
    let minor = it.next().map(|s| s.trim().parse().ok()).unwrap_or(Some(0))?;
    Some((major, minor))
}

/// Highest GeoParquet major version this importer knows.
pub const MAX_KNOWN_MAJOR: u64 = 2;

fn get_str<'a>(o: &'a Map<String, Value>, k: &str) -> Option<&'a str> {
    o.get(k).and_then(|v| v.as_str())
}

/// Parse and validate the `geo` JSON. `path` names the input for messages; `kv` looks up
/// other key-value metadata (for `projjson:KEY` CRS references).
pub fn parse_geo(
    path: &str,
    json: &str,
    findings: &mut Vec<Finding>,
    kv: &dyn Fn(&str) -> Option<String>,
) -> Result<GeoMeta> {
    let v: Value = serde_json::from_str(json)
        .map_err(|e| fail(path, code::METADATA_INVALID_JSON, format!("`geo` metadata is not valid json: {e}")))?;
    let Value::Object(o) = v else {
        return Err(fail(path, code::SCHEMA_VALIDATION, "`geo` metadata is not a json object"));
    };
    // Pre-1.0 files (0.1) call it schema_version.
    let version = match get_str(&o, "version").or_else(|| get_str(&o, "schema_version")) {
        Some(v) => v.to_string(),
        None => return Err(fail(path, code::SCHEMA_VALIDATION, "`geo` metadata is missing the required `version`")),
    };
    match parse_version(&version) {
        Some((maj, _)) if maj <= MAX_KNOWN_MAJOR => {}
        _ => {
            return Err(fail(
                path,
                code::VERSION_UNKNOWN,
                format!("geoparquet version {version:?} is not a known version (this importer reads 0.x to {MAX_KNOWN_MAJOR}.x)"),
            ))
        }
    }
    let Some(primary) = get_str(&o, "primary_column") else {
        return Err(fail(path, code::SCHEMA_VALIDATION, "`geo` metadata is missing the required `primary_column`"));
    };
    let Some(Value::Object(cols)) = o.get("columns") else {
        return Err(fail(path, code::SCHEMA_VALIDATION, "`geo` metadata is missing the required `columns` object"));
    };
    if cols.is_empty() {
        return Err(fail(path, code::SCHEMA_VALIDATION, "`geo` metadata `columns` is empty"));
    }
    if !cols.contains_key(primary) {
        return Err(fail(
            path,
            code::SCHEMA_VALIDATION,
            format!("`primary_column` {primary:?} is not a key of `columns`"),
        ));
    }
    let mut columns = Vec::new();
    for (name, c) in cols {
        columns.push(parse_column(path, name, c, findings, kv)?);
    }
    // Primary first.
    columns.sort_by_key(|c| c.name != primary);
    Ok(GeoMeta { version, primary_column: primary.to_string(), columns })
}

fn parse_column(
    path: &str,
    name: &str,
    c: &Value,
    findings: &mut Vec<Finding>,
    kv: &dyn Fn(&str) -> Option<String>,
) -> Result<GeoColumnMeta> {
    let bad = |m: String| fail(path, code::SCHEMA_VALIDATION, format!("column {name:?}: {m}"));
    let Value::Object(o) = c else { return Err(bad("column metadata is not an object".into())) };
    let encoding = match get_str(o, "encoding") {
        Some(e) => Encoding::parse(e).ok_or_else(|| bad(format!("unknown encoding {e:?}")))?,
        None => return Err(bad("missing the required `encoding`".into())),
    };
    // geometry_types (1.0+) or geometry_type (0.x; string or list).
    let types_v = o.get("geometry_types").or_else(|| o.get("geometry_type"));
    let geometry_types = match types_v {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(vec![parse_type_name(s).ok_or_else(|| bad(format!("unknown geometry type {s:?}")))?]),
        Some(Value::Array(a)) => {
            let mut v = Vec::new();
            for t in a {
                let s = t.as_str().ok_or_else(|| bad("geometry_types element is not a string".into()))?;
                let gt = parse_type_name(s).ok_or_else(|| bad(format!("unknown geometry type {s:?}")))?;
                if !v.contains(&gt) {
                    v.push(gt);
                }
            }
            if v.is_empty() {
                None
            } else {
                Some(v)
            }
        }
        Some(_) => return Err(bad("geometry_types is not a list".into())),
    };
    let mut crs_note = None;
    let crs = match o.get("crs") {
        None => Crs::Default,
        Some(Value::Null) => Crs::Unknown,
        Some(Value::Object(m)) => {
            if !m.get("type").is_some_and(|t| t.is_string()) {
                return Err(bad("crs is json but not PROJJSON: the required `type` member is missing".into()));
            }
            let doc = serde_json::to_string(m).unwrap_or_default();
            parse_projjson(&doc).map_err(|e| bad(format!("crs: {e}")))?;
            // Only a PROJJSON coordinate reference system is written to CRS (HEP002 §8.1);
            // any other object is kept in the column description, the CRS stored as unknown.
            let id = Crs::ProjJson(doc.clone()).id();
            let crs84 = matches!(id.as_ref().map(|(a, c)| (a.as_str(), c.as_str())), Some(("OGC", "CRS84") | ("EPSG", "4326")));
            match crate::marquet::projjson::check_projjson(&doc) {
                Ok(_) => Crs::ProjJson(doc),
                // An abbreviated document naming OGC:CRS84 / EPSG:4326 (the same
                // coordinates, HEP002 §8.4): the default CRS, written as no attribute. Nothing
                // is lost, so no finding.
                Err(_) if crs84 => Crs::Default,
                // An abbreviated document with an authority id (issue #22): the full
                // PROJJSON of that id, when PROJ has it.
                Err(_) if id.as_ref().is_some_and(|(a, c)| crate::crs::resolve(&format!("{a}:{c}")).is_ok()) => {
                    let (a, c) = id.clone().unwrap_or_default();
                    crate::crs::resolve(&format!("{a}:{c}")).unwrap_or(Crs::Unknown)
                }
                Err(why) => {
                    let n = format!("crs {doc} is not a projjson coordinate reference system ({why}): stored as unknown, kept in the column description");
                    findings.push(Finding::new(code::CRS_NOT_PROJJSON, Some(name), n.clone()));
                    crs_note = Some(n);
                    Crs::Unknown
                }
            }
        }
        Some(Value::String(s)) => {
            // Pre-1.0 writers (GDAL 3.5, sfarrow) put WKT here; 1.0+ requires PROJJSON.
            let (crs, note) = crs_from_string(s, kv);
            if let Some(n) = &note {
                findings.push(Finding::new(code::CRS_NOT_PROJJSON, Some(name), n.clone()));
            } else if !matches!(crs, Crs::Unknown | Crs::Default) && !s.trim_start().starts_with('{') && !s.starts_with("projjson:") {
                // Resolved (issue #22), but still not what GeoParquet 1.0+ allows here.
                findings.push(Finding::new(
                    code::CRS_NOT_PROJJSON,
                    Some(name),
                    format!("crs is the string {:?}, not PROJJSON; resolved to {}", if s.len() > 60 { "(WKT)" } else { s.as_str() }, crs.display_name()),
                ));
            }
            crs_note = note;
            crs
        }
        Some(_) => return Err(bad("crs is neither PROJJSON nor null".into())),
    };
    let edges = match o.get("edges") {
        None | Some(Value::Null) => Edges::Planar,
        Some(Value::String(s)) => match Edges::from_name(&s.to_ascii_uppercase()) {
            Edges::Unknown(_) => return Err(bad(format!("unknown edges {s:?}"))),
            e => e,
        },
        Some(_) => return Err(bad("edges is not a string".into())),
    };
    let orientation_ccw = match o.get("orientation") {
        None | Some(Value::Null) => false,
        Some(Value::String(s)) if s == "counterclockwise" => true,
        Some(v) => return Err(bad(format!("unknown orientation {v}"))),
    };
    let epoch = match o.get("epoch") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => n.as_f64(),
        Some(_) => return Err(bad("epoch is not a number".into())),
    };
    let bbox = match o.get("bbox") {
        None | Some(Value::Null) => None,
        Some(Value::Array(a)) => {
            let v: Option<Vec<f64>> = a.iter().map(|x| x.as_f64()).collect();
            match v {
                Some(v) if matches!(v.len(), 4 | 6 | 8) => Some(v),
                _ => return Err(bad("bbox must hold 4, 6 or 8 numbers".into())),
            }
        }
        Some(_) => return Err(bad("bbox is not a list".into())),
    };
    let covering = match o.get("covering") {
        None | Some(Value::Null) => None,
        Some(Value::Object(cov)) => match cov.get("bbox") {
            Some(Value::Object(b)) => {
                let mut col: Option<String> = None;
                for key in ["xmin", "ymin", "xmax", "ymax"] {
                    let p = b.get(key).and_then(|p| p.as_array()).ok_or_else(|| bad(format!("covering.bbox.{key} missing")))?;
                    let (Some(c), Some(f)) = (p.first().and_then(|x| x.as_str()), p.get(1).and_then(|x| x.as_str())) else {
                        return Err(bad(format!("covering.bbox.{key} is not [column, field]")));
                    };
                    if f != key || p.len() != 2 {
                        return Err(bad(format!("covering.bbox.{key} must be [column, {key:?}]")));
                    }
                    match &col {
                        None => col = Some(c.to_string()),
                        Some(x) if x != c => return Err(bad("covering.bbox names more than one column".into())),
                        _ => {}
                    }
                }
                col
            }
            _ => None,
        },
        Some(_) => return Err(bad("covering is not an object".into())),
    };
    if let Some(e) = epoch {
        if !crs_supports_epoch(&crs) {
            findings.push(Finding::new(
                code::EPOCH_UNSUPPORTED,
                Some(name),
                format!("epoch {e} is set on {}, a CRS without a dynamic datum (kept as EPOCH)", crs.display_name()),
            ));
        }
    }
    Ok(GeoColumnMeta {
        name: name.to_string(),
        encoding,
        geometry_types,
        crs,
        crs_explicit: o.contains_key("crs"),
        crs_conflict: None,
        crs_note,
        edges,
        orientation_ccw,
        epoch,
        bbox,
        covering,
        native_type: false,
    })
}

/// Reconcile the CRS of `geo` column `c` with the `crs` of its Parquet logical type
/// (issue #32): `native` is the logical type's string (`None`: omitted, the implied
/// OGC:CRS84), `resolved` what [`crs_from_string`] made of it. The rule
/// (docs/geoparquet-mapping.md): an explicit statement wins over an implied default; a
/// known CRS wins over an explicitly unknown one (`crs: null`, `srid:0`, an unresolvable
/// string), reported as `crs_mismatch`; two different known CRSs are a conflict
/// ([`GeoColumnMeta::crs_conflict`]), refused by [`check_crs_conflicts`] unless the user
/// states the CRS.
pub fn reconcile_crs(c: &mut GeoColumnMeta, native: Option<&str>, resolved: (Crs, Option<String>), findings: &mut Vec<Finding>) {
    let Some(text) = native else { return }; // implied: `geo` decides
    let (crs, note) = resolved;
    if same_crs(&crs, &c.crs) && note.is_none() {
        return;
    }
    let col = c.name.clone();
    let short = |t: &str| if t.len() > 60 { format!("{}…", &t[..t.char_indices().nth(57).map_or(t.len(), |(i, _)| i)]) } else { t.to_string() };
    let native_name = if note.is_some() { format!("{:?} (not resolvable)", short(text)) } else { crs.display_name() };
    let native_known = !matches!(crs, Crs::Unknown);
    let geo_known = c.crs_explicit && !matches!(c.crs, Crs::Unknown);
    if !c.crs_explicit || (c.crs == Crs::Unknown && native_known) {
        // The logical type states it; `geo` implies the default or says "unknown".
        if c.crs_explicit {
            findings.push(Finding::new(
                code::CRS_MISMATCH,
                Some(&col),
                format!("`geo` crs is null (unknown) but the Parquet logical type states {native_name}: the logical type's is taken"),
            ));
        }
        if let Some(n) = &note {
            findings.push(Finding::new(code::CRS_NOT_PROJJSON, Some(&col), n.clone()));
        }
        c.crs = crs;
        c.crs_note = note;
        c.crs_explicit = true;
        return;
    }
    if !native_known || !geo_known {
        // One of the two is explicitly unknown: the known one (or the `geo` one) is kept.
        findings.push(Finding::new(
            code::CRS_MISMATCH,
            Some(&col),
            format!("`geo` crs {} differs from the Parquet logical type's {native_name}: the `geo` crs is taken", c.crs.display_name()),
        ));
        return;
    }
    c.crs_conflict = Some(format!(
        "`geo` crs {} and the Parquet logical type crs {native_name} are two different explicit CRSs",
        c.crs.display_name()
    ));
}

/// Refuse columns whose CRS is stated twice, differently ([`reconcile_crs`]), unless the user
/// states the CRS (`user_crs`, `convert --crs`), which replaces both: then a `crs_mismatch`
/// finding.
pub fn check_crs_conflicts(path: &str, cols: &[GeoColumnMeta], user_crs: bool, findings: &mut Vec<Finding>) -> Result<()> {
    for c in cols {
        let Some(msg) = &c.crs_conflict else { continue };
        if user_crs {
            findings.push(Finding::new(code::CRS_MISMATCH, Some(&c.name), format!("{msg}; replaced by --crs")));
            continue;
        }
        return Err(fail(
            path,
            code::CRS_MISMATCH,
            format!(
                "column {:?}: {msg}: refused, as either could be wrong; state the CRS of the coordinates with --crs (e.g. --crs EPSG:4326)",
                c.name
            ),
        ));
    }
    Ok(())
}

/// Do `a` and `b` name the same CRS? The same authority id, or both OGC:CRS84 / EPSG:4326
/// (the same coordinates, HEP002 §8.4); when one has no id, documents equal but for
/// `$schema`, or of one `name` (a writer may normalize the text).
fn same_crs(a: &Crs, b: &Crs) -> bool {
    if a == b || (crate::crs::is_crs84(a) && crate::crs::is_crs84(b)) {
        return true;
    }
    match (a.id(), b.id(), a, b) {
        (Some(x), Some(y), _, _) => x == y,
        (_, _, Crs::ProjJson(x), Crs::ProjJson(y)) => {
            let doc = |t: &str| {
                let mut v: Value = serde_json::from_str(t).unwrap_or(Value::Null);
                if let Value::Object(o) = &mut v {
                    o.remove("$schema");
                }
                v
            };
            let (x, y) = (doc(x), doc(y));
            x == y || (x.get("name").is_some() && x.get("name") == y.get("name"))
        }
        _ => false,
    }
}

/// GeoParquet type names ("Point", "Polygon Z", "MultiPoint ZM"); also tolerates the
/// 0.x spelling "Geometry" (→ unknown, `None`) — callers treat a failure as an error.
fn parse_type_name(s: &str) -> Option<GeometryType> {
    GeometryType::from_name(s.trim())
}

/// Ruling (docs/geoparquet-mapping.md, "epoch"): an epoch is meaningful only for a CRS
/// whose datum is not the WGS 84 datum ensemble: OGC:CRS84, EPSG:4326 and any PROJJSON
/// with a `datum_ensemble` do not support one.
pub fn crs_supports_epoch(crs: &Crs) -> bool {
    match crs {
        Crs::Default | Crs::Unknown => false,
        Crs::ProjJson(doc) => {
            if let Some((a, c)) = crs.id() {
                if (a == "OGC" && c == "CRS84") || (a == "EPSG" && c == "4326") {
                    return false;
                }
            }
            !doc.contains("\"datum_ensemble\"")
        }
    }
}

/// A CRS given as a string: Parquet forms (`srid:N`, `projjson:KEY`, `AUTH:CODE`, inline
/// PROJJSON) and the WKT strings of pre-1.0 GeoParquet. Returns the CRS and, when it could
/// not be stored as PROJJSON, a note.
pub fn crs_from_string(s: &str, kv: &dyn Fn(&str) -> Option<String>) -> (Crs, Option<String>) {
    let t = s.trim();
    if t.starts_with('{') {
        return match parse_projjson(t) {
            // Normalized like `geo` PROJJSON objects, so every path stores the same text;
            // OGC:CRS84 / EPSG:4326 documents are the default CRS (as in `geo`).
            Ok(v) if crate::marquet::projjson::check_projjson_value(&v).is_ok() => match crate::crs::resolve(t) {
                Ok(c) => (c, None),
                Err(_) => (Crs::ProjJson(v.to_string()), None),
            },
            _ => (Crs::Unknown, Some(format!("crs {t:?} is json but not a PROJJSON coordinate reference system; stored as unknown"))),
        };
    }
    if let Some(key) = t.strip_prefix("projjson:") {
        return match kv(key) {
            Some(doc) => crs_from_string(&doc, &|_| None),
            None => (Crs::Unknown, Some(format!("crs {t:?} names key-value metadata {key:?} that the file does not have"))),
        };
    }
    let lower = t.to_ascii_lowercase();
    if lower == "srid:0" || t.is_empty() {
        return (Crs::Unknown, None);
    }
    // Authority codes, URNs, `srid:N` and WKT: resolved to PROJJSON (issue #22, src/crs/);
    // what cannot be resolved is never guessed but kept as text with an unknown CRS.
    match crate::crs::resolve(t) {
        Ok(crs) => (crs, None),
        Err(why) => {
            if lower.starts_with("srid:") || (t.contains(':') && !t.contains('[') && t.len() < 64) {
                return (
                    Crs::Unknown,
                    Some(format!("crs {t:?} could not be resolved to PROJJSON ({why}); stored as unknown, kept in the column description")),
                );
            }
            (
                Crs::Unknown,
                Some(format!(
                    "crs is a {}-byte non-PROJJSON string (WKT?) that could not be resolved ({why}); HEP002 §8.1 allows only PROJJSON: stored as unknown, kept in the column description",
                    t.len()
                )),
            )
        }
    }
}

/// The `geo` column metadata we write for one column (HEP002 §14.2).
#[derive(Debug, Clone)]
pub struct WriteColumn {
    /// The Parquet column name.
    pub name: String,
    /// `geometry_types`, from `GEOMETRY_TYPES`; GeoParquet requires the list to be exact.
    pub types: Vec<GeometryType>,
    /// Written as `crs`: omitted for the default, `null` for unknown, else the PROJJSON object.
    pub crs: Crs,
    /// Written as `edges` when not planar.
    pub edges: Edges,
    /// Writes `"orientation": "counterclockwise"`.
    pub orientation_ccw: bool,
    /// Written as `epoch` (decimal years).
    pub epoch: Option<f64>,
    /// Written as `bbox`: 4, 6 or 8 numbers in GeoParquet order (all minima, then all maxima).
    pub bbox: Option<Vec<f64>>,
    /// Name of the covering struct column, written as `covering.bbox` (in 1.0 output too).
    pub covering: Option<String>,
    /// The `encoding` string, e.g. `"WKB"` or `"point"`.
    pub encoding: &'static str,
}

/// Build the `geo` JSON for `version` ("2.0.0", "1.1.0", "1.0.0").
pub fn write_geo(version: &str, primary: &str, cols: &[WriteColumn]) -> String {
    let mut columns = Map::new();
    for c in cols {
        let mut o = Map::new();
        o.insert("encoding".into(), Value::String(c.encoding.into()));
        o.insert(
            "geometry_types".into(),
            Value::Array(c.types.iter().map(|t| Value::String(t.name())).collect()),
        );
        match &c.crs {
            Crs::Default => {}
            Crs::Unknown => {
                o.insert("crs".into(), Value::Null);
            }
            Crs::ProjJson(doc) => {
                o.insert("crs".into(), serde_json::from_str(doc).unwrap_or(Value::Null));
            }
        }
        if !c.edges.is_planar() {
            o.insert("edges".into(), Value::String(c.edges.geoparquet_name()));
        }
        if c.orientation_ccw {
            o.insert("orientation".into(), Value::String("counterclockwise".into()));
        }
        if let Some(e) = c.epoch {
            o.insert("epoch".into(), serde_json::json!(e));
        }
        if let Some(b) = &c.bbox {
            o.insert("bbox".into(), serde_json::json!(b));
        }
        // Also in 1.0 output, which has no such key: 1.0 readers ignore it, others (geopandas'
        // `read_parquet(bbox=…)`) use it (issue #22).
        if let Some(cov) = &c.covering {
            o.insert(
                "covering".into(),
                serde_json::json!({"bbox": {
                    "xmin": [cov, "xmin"], "ymin": [cov, "ymin"], "xmax": [cov, "xmax"], "ymax": [cov, "ymax"]
                }}),
            );
        }
        columns.insert(c.name.clone(), Value::Object(o));
    }
    let mut root = Map::new();
    root.insert("version".into(), Value::String(version.into()));
    root.insert("primary_column".into(), Value::String(primary.into()));
    root.insert("columns".into(), Value::Object(columns));
    root.insert(
        "creator".into(),
        serde_json::json!({"library": "marquet", "version": env!("CARGO_PKG_VERSION")}),
    );
    Value::Object(root).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(parse_version("1.0.0-beta.1"), Some((1, 0)));
        assert_eq!(parse_version("2.0-dev"), Some((2, 0)));
        assert_eq!(parse_version("0.4.0"), Some((0, 4)));
        assert_eq!(parse_version("99.0.0"), Some((99, 0)));
        assert_eq!(parse_version("x"), None);
    }

    #[test]
    fn crs_strings() {
        let none = |_: &str| None;
        assert_eq!(crs_from_string("srid:0", &none).0, Crs::Unknown);
        assert_eq!(crs_from_string("OGC:CRS84", &none).0, Crs::Default);
        // Unresolvable: kept as text, never guessed (issue #22).
        let (c, n) = crs_from_string("srid:999999", &none);
        assert_eq!(c, Crs::Unknown);
        assert!(n.unwrap().contains("srid:999999"));
        #[cfg(feature = "proj")]
        {
            let (c, n) = crs_from_string("srid:5070", &none);
            assert_eq!((c.id(), n), (Some(("EPSG".into(), "5070".into())), None));
            let (c, _) = crs_from_string("EPSG:3857", &none);
            assert!(matches!(c, Crs::ProjJson(_)) && !c.is_geographic());
        }
        let kv = |k: &str| match k {
            "k" => Some(r#"{"type":"ProjectedCRS","name":"x","base_crs":{},"conversion":{},"coordinate_system":{}}"#.to_string()),
            "short" => Some(r#"{"type":"ProjectedCRS","name":"x"}"#.to_string()),
            _ => None,
        };
        assert!(matches!(crs_from_string("projjson:k", &kv).0, Crs::ProjJson(_)));
        // Not a PROJJSON CRS (HEP002 §8.1): never written as one (issue 18).
        let (c, n) = crs_from_string("projjson:short", &kv);
        assert_eq!(c, Crs::Unknown);
        assert!(n.unwrap().contains("not a PROJJSON coordinate reference system"));
    }

    fn col(crs: Crs, explicit: bool) -> GeoColumnMeta {
        GeoColumnMeta { crs_explicit: explicit, native_type: true, ..GeoColumnMeta::wkb("g", crs) }
    }

    #[test]
    fn explicit_crs_wins_over_implied_and_two_explicit_are_refused() {
        let merc = Crs::ProjJson(r#"{"type":"ProjectedCRS","name":"m","id":{"authority":"EPSG","code":3857}}"#.into());
        let utm = Crs::ProjJson(r#"{"type":"ProjectedCRS","name":"u","id":{"authority":"EPSG","code":32618}}"#.into());
        let mut f = Vec::new();
        // `geo` without crs, logical type EPSG:3857 (DuckDB V2): the logical type's, silently.
        let mut c = col(Crs::Default, false);
        reconcile_crs(&mut c, Some("EPSG:3857"), (merc.clone(), None), &mut f);
        assert_eq!((c.crs.clone(), f.len(), c.crs_conflict.is_none()), (merc.clone(), 0, true));
        // Logical type without crs: `geo` decides.
        let mut c = col(utm.clone(), true);
        reconcile_crs(&mut c, None, (Crs::Default, None), &mut f);
        assert_eq!((c.crs.clone(), f.len()), (utm.clone(), 0));
        // The same CRS twice (OGC:CRS84 stated in `geo`, its PROJJSON in the type): fine.
        let mut c = col(Crs::Default, true);
        reconcile_crs(&mut c, Some("OGC:CRS84"), (Crs::Default, None), &mut f);
        assert!(f.is_empty() && c.crs_conflict.is_none());
        // `crs: null` and a known logical-type CRS: the known one, reported.
        let mut c = col(Crs::Unknown, true);
        reconcile_crs(&mut c, Some("EPSG:3857"), (merc.clone(), None), &mut f);
        assert_eq!(c.crs, merc);
        assert_eq!(f.pop().map(|x| x.code), Some(code::CRS_MISMATCH));
        // Two explicit, different CRSs: refused naming --crs; with --crs, a finding.
        for geo in [utm, Crs::Default] {
            let mut c = col(geo, true);
            reconcile_crs(&mut c, Some("EPSG:3857"), (merc.clone(), None), &mut f);
            assert!(c.crs_conflict.is_some());
            let e = check_crs_conflicts("p", std::slice::from_ref(&c), false, &mut f).unwrap_err();
            assert_eq!(crate::convert::failure_code(&e), Some(code::CRS_MISMATCH));
            assert!(e.to_string().contains("--crs"), "{e}");
            check_crs_conflicts("p", &[c], true, &mut f).unwrap();
            assert_eq!(f.pop().map(|x| x.code), Some(code::CRS_MISMATCH));
        }
    }

    #[test]
    fn epoch_rule() {
        assert!(!crs_supports_epoch(&Crs::Default));
        assert!(!crs_supports_epoch(&Crs::ProjJson(r#"{"type":"GeographicCRS","id":{"authority":"EPSG","code":4326}}"#.into())));
        assert!(crs_supports_epoch(&Crs::ProjJson(r#"{"type":"GeographicCRS","id":{"authority":"EPSG","code":7843}}"#.into())));
    }
}
