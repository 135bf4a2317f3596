//! The shape of a PROJJSON coordinate reference system (HEP002 §8.1, §12 req 11).
//!
//! HEP002 asks for "a PROJJSON document … describing the coordinate reference system". A
//! full PROJJSON parser is out of scope; this module checks what a consumer without one can
//! rely on: the document is a JSON object (size and depth limited, §17), its `type` is one of
//! the coordinate-reference-system types of the PROJJSON schema, and it has the members the
//! schema requires for that type (for geodetic, geographic and vertical CRSs exactly one of
//! `datum` and `datum_ensemble`). The same check serves the producer (a CRS attribute that
//! fails it is never written) and the validator (it is reported under req 11).
//!
//! Member requirements follow `https://proj.org/schemas/v0.7/projjson.schema.json`
//! (`required` and the `one_and_only_one_of_datum_or_datum_ensemble` rule of each CRS
//! definition). Nested objects (`base_crs`, `components`, …) are not checked further.

use serde_json::Value;

use super::types::parse_projjson;

/// The PROJJSON CRS `type` values and the members each requires (beyond `type`).
pub const CRS_TYPES: &[(&str, &[&str])] = &[
    ("GeographicCRS", &["name"]),
    ("GeodeticCRS", &["name"]),
    ("ProjectedCRS", &["name", "base_crs", "conversion", "coordinate_system"]),
    ("CompoundCRS", &["name", "components"]),
    ("BoundCRS", &["source_crs", "target_crs", "transformation"]),
    ("VerticalCRS", &["name"]),
    ("EngineeringCRS", &["name", "datum"]),
    ("TemporalCRS", &["name", "datum"]),
    ("ParametricCRS", &["name", "datum"]),
    ("DerivedGeographicCRS", &["name", "base_crs", "conversion", "coordinate_system"]),
    ("DerivedGeodeticCRS", &["name", "base_crs", "conversion", "coordinate_system"]),
    ("DerivedProjectedCRS", &["name", "base_crs", "conversion", "coordinate_system"]),
    ("DerivedVerticalCRS", &["name", "base_crs", "conversion", "coordinate_system"]),
    ("DerivedEngineeringCRS", &["name", "base_crs", "conversion", "coordinate_system"]),
    ("DerivedTemporalCRS", &["name", "base_crs", "conversion", "coordinate_system"]),
    ("DerivedParametricCRS", &["name", "base_crs", "conversion", "coordinate_system"]),
];

/// CRS types that need exactly one of `datum` and `datum_ensemble`.
const ONE_DATUM: &[&str] = &["GeographicCRS", "GeodeticCRS", "VerticalCRS"];

/// Parse `doc` (with the §17 limits of [`parse_projjson`]) and check that it is a PROJJSON
/// coordinate reference system: a JSON object whose `type` names a CRS type and which has
/// the members that type requires. The error is lowercase and says what is missing.
pub fn check_projjson(doc: &str) -> Result<Value, String> {
    let v = parse_projjson(doc)?;
    check_projjson_value(&v)?;
    Ok(v)
}

/// [`check_projjson`] for an already parsed value.
pub fn check_projjson_value(v: &Value) -> Result<(), String> {
    let Some(o) = v.as_object() else { return Err("projjson document is not a json object".into()) };
    let t = match o.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(_) => return Err("projjson member \"type\" is not a string".into()),
        None => return Err("projjson document has no \"type\" member".into()),
    };
    let Some((_, required)) = CRS_TYPES.iter().find(|(n, _)| *n == t) else {
        return Err(format!("projjson \"type\" {t:?} is not a coordinate reference system type"));
    };
    let missing: Vec<&str> = required.iter().copied().filter(|m| !o.contains_key(*m)).collect();
    if !missing.is_empty() {
        return Err(format!("projjson {t} lacks the required member(s) {}", missing.join(", ")));
    }
    if let Some(Value::String(_)) | None = o.get("name") {
    } else {
        return Err(format!("projjson {t} member \"name\" is not a string"));
    }
    if ONE_DATUM.contains(&t) {
        match (o.contains_key("datum"), o.contains_key("datum_ensemble")) {
            (true, false) | (false, true) => {}
            (false, false) => return Err(format!("projjson {t} has neither \"datum\" nor \"datum_ensemble\"; it needs exactly one")),
            (true, true) => return Err(format!("projjson {t} has both \"datum\" and \"datum_ensemble\"; it needs exactly one")),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::marquet::types::CRS84_PROJJSON;

    #[test]
    fn crs84_and_full_documents_pass() {
        check_projjson(CRS84_PROJJSON).unwrap();
        let utm = r#"{"type":"ProjectedCRS","name":"UTM","base_crs":{},"conversion":{},"coordinate_system":{}}"#;
        check_projjson(utm).unwrap();
    }

    #[test]
    fn shapes_that_are_not_a_crs_fail_with_the_reason() {
        assert!(check_projjson(r#"{"a":1}"#).unwrap_err().contains("no \"type\""));
        assert!(check_projjson(r#"{"type":"Ellipsoid","name":"x"}"#).unwrap_err().contains("not a coordinate reference system type"));
        assert!(check_projjson(r#"{"type":"ProjectedCRS","name":"x"}"#).unwrap_err().contains("base_crs, conversion, coordinate_system"));
        assert!(check_projjson(r#"{"type":"GeographicCRS","name":"x"}"#).unwrap_err().contains("neither"));
        assert!(check_projjson(r#"{"type":"GeographicCRS","name":"x","datum":{},"datum_ensemble":{}}"#).unwrap_err().contains("both"));
        assert!(check_projjson(r#"{"type":7}"#).unwrap_err().contains("not a string"));
        assert!(check_projjson("[1]").unwrap_err().contains("object"));
    }
}
