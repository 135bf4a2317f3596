//! The legacy `crs` member of a GeoJSON FeatureCollection (the 2008 GeoJSON
//! specification, still written by GDAL and QGIS for non-WGS 84 data), issue #22.
//!
//! RFC 7946 dropped the member and fixed the CRS to OGC:CRS84, but files that carry one
//! mean it: `{"type": "name", "properties": {"name": "urn:ogc:def:crs:EPSG::3857"}}`
//! describes projected coordinates, and reading them as longitude/latitude would be
//! silently wrong. The member is found by a byte scan of the top-level object (bounded:
//! the value is kept only up to [`MAX_CRS_MEMBER_BYTES`]), because the streaming feature
//! reader skips foreign members.

use std::io::{BufRead, BufReader};
use std::path::Path;

use crate::error::{MarquetError, Result};
use crate::marquet::Crs;

/// Longest `crs` member value kept (a named CRS is ~100 bytes; a linked one a few hundred).
pub const MAX_CRS_MEMBER_BYTES: usize = 64 * 1024;

/// The CRS a GeoJSON file states: `(Crs::Default, None)` without a `crs` member (RFC
/// 7946), the resolved CRS of a `name` / `EPSG` member, or an unknown CRS with a note
/// (kept in the column description) when the member cannot be resolved. `"crs": null`
/// means "no CRS can be assumed" (GeoJSON 2008): unknown.
pub fn geojson_crs(input: &Path) -> Result<(Crs, Option<String>)> {
    let path = input.display().to_string();
    let f = std::fs::File::open(input).map_err(|e| MarquetError::Io { path: path.clone(), source: e })?;
    let member = find_top_level_member(BufReader::with_capacity(1 << 16, f), "crs")
        .map_err(|e| MarquetError::Io { path: path.clone(), source: e })?;
    let Some(text) = member else { return Ok((Crs::Default, None)) };
    Ok(crs_of_member(&text))
}

/// The transformation a GeoJSON writer applies to a column in `crs` (RFC 7946: OGC:CRS84
/// only): `None` when it already is CRS84 / EPSG:4326; an error naming the column when
/// the CRS is unknown or PROJ is not available, so that nothing is written mislabelled.
pub fn to_crs84(crs: &Crs, column: &str) -> Result<Option<crate::crs::Transformer>> {
    if crate::crs::is_crs84(crs) {
        return Ok(None);
    }
    if *crs == Crs::Unknown {
        return Err(MarquetError::InvalidArgument(format!(
            "{column}: the CRS is unknown, and GeoJSON (RFC 7946) holds OGC:CRS84 coordinates only: state the CRS (convert --crs CODE) so they can be reprojected, or write GeoParquet"
        )));
    }
    crate::crs::Transformer::new(crs, &Crs::Default).map(Some).map_err(|e| {
        MarquetError::InvalidArgument(format!(
            "{column}: coordinates are in {}, and GeoJSON (RFC 7946) holds OGC:CRS84 only; they cannot be reprojected: {e}",
            crs.display_name()
        ))
    })
}

/// Interpret the text of a `crs` member.
pub fn crs_of_member(text: &str) -> (Crs, Option<String>) {
    let v: serde_json::Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return (Crs::Unknown, Some(format!("GeoJSON crs member is not valid JSON ({e}): stored as unknown"))),
    };
    if v.is_null() {
        return (Crs::Unknown, None);
    }
    let props = v.get("properties");
    let def = match v.get("type").and_then(|t| t.as_str()) {
        Some(t) if t.eq_ignore_ascii_case("name") => props.and_then(|p| p.get("name")).and_then(|n| n.as_str()).map(str::to_string),
        Some(t) if t.eq_ignore_ascii_case("EPSG") => props.and_then(|p| p.get("code")).map(|c| match c {
            serde_json::Value::String(s) => format!("EPSG:{s}"),
            other => format!("EPSG:{other}"),
        }),
        _ => None,
    };
    let shown = if text.len() > 200 { format!("{}…", &text[..text.char_indices().nth(200).map(|(i, _)| i).unwrap_or(text.len())]) } else { text.to_string() };
    match def {
        None => (Crs::Unknown, Some(format!("GeoJSON crs member {shown} names no CRS this reader understands: stored as unknown"))),
        Some(d) => match crate::crs::resolve(&d) {
            Ok(c) => (c, None),
            Err(why) => (Crs::Unknown, Some(format!("GeoJSON crs {d:?} could not be resolved ({why}): stored as unknown"))),
        },
    }
}

/// The raw text of member `key` of the top-level JSON object, if present (the first
/// occurrence). Reads until found or to the end; never keeps more than
/// [`MAX_CRS_MEMBER_BYTES`] of it (a longer value is returned cut, and then fails to parse).
fn find_top_level_member<R: BufRead>(r: R, key: &str) -> std::io::Result<Option<String>> {
    let mut depth = 0usize;
    let mut in_str = false;
    let mut esc = false;
    // The last string closed at depth 1, and whether a ':' followed it (it was a key).
    let mut cur = Vec::new();
    let mut last_key: Option<Vec<u8>> = None;
    let mut capture: Option<Vec<u8>> = None;
    for b in r.bytes() {
        let b = b?;
        if let Some(buf) = capture.as_mut() {
            // Inside the value: it ends at a ',' at depth 1 or at the top-level object's '}'.
            if in_str {
                match (esc, b) {
                    (true, _) => esc = false,
                    (false, b'\\') => esc = true,
                    (false, b'"') => in_str = false,
                    _ => {}
                }
            } else {
                match b {
                    b'"' => in_str = true,
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            return Ok(Some(String::from_utf8_lossy(buf).trim().to_string()));
                        }
                    }
                    b',' if depth == 1 => return Ok(Some(String::from_utf8_lossy(buf).trim().to_string())),
                    _ => {}
                }
            }
            if buf.len() < MAX_CRS_MEMBER_BYTES {
                buf.push(b);
            }
            continue;
        }
        if in_str {
            match (esc, b) {
                (true, _) => {
                    esc = false;
                    cur.push(b);
                }
                (false, b'\\') => esc = true,
                (false, b'"') => {
                    in_str = false;
                    if depth == 1 {
                        last_key = Some(std::mem::take(&mut cur));
                    }
                }
                _ => {
                    if depth == 1 && cur.len() < 64 {
                        cur.push(b);
                    }
                }
            }
            continue;
        }
        match b {
            b'"' => {
                in_str = true;
                cur.clear();
            }
            b':' if depth == 1 && last_key.as_deref() == Some(key.as_bytes()) => capture = Some(Vec::new()),
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Ok(None);
                }
            }
            b',' => last_key = None,
            _ => {}
        }
    }
    Ok(capture.map(|v| String::from_utf8_lossy(&v).trim().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(s: &str) -> Option<String> {
        find_top_level_member(s.as_bytes(), "crs").unwrap()
    }

    #[test]
    fn finds_the_top_level_member_only() {
        let named = r#"{"type":"name","properties":{"name":"urn:ogc:def:crs:EPSG::3857"}}"#;
        let doc = format!(r#"{{"type":"FeatureCollection","name":"x","crs":{named},"features":[]}}"#);
        assert_eq!(member(&doc).as_deref(), Some(named));
        // After the features, last member, and a "crs" property inside a feature ignored.
        let doc = format!(r#"{{"type":"FeatureCollection","features":[{{"type":"Feature","properties":{{"crs":"EPSG:1"}},"geometry":null}}],"crs" : {named} }}"#);
        assert_eq!(member(&doc).as_deref(), Some(named));
        assert_eq!(member(r#"{"type":"FeatureCollection","crs":null,"features":[]}"#).as_deref(), Some("null"));
        assert_eq!(member(r#"{"type":"FeatureCollection","features":[{"properties":{"crs":1}}]}"#), None);
        assert_eq!(member(r#"{"a":"crs","b":{"crs":2}}"#), None);
    }

    #[test]
    fn member_values() {
        assert_eq!(crs_of_member("null").0, Crs::Unknown);
        let (c, n) = crs_of_member(r#"{"type":"name","properties":{"name":"urn:ogc:def:crs:OGC:1.3:CRS84"}}"#);
        assert_eq!((c, n), (Crs::Default, None));
        let (c, n) = crs_of_member(r#"{"type":"link","properties":{"href":"http://x/crs.proj4","type":"proj4"}}"#);
        assert_eq!(c, Crs::Unknown);
        assert!(n.unwrap().contains("names no CRS"));
        #[cfg(feature = "proj")]
        {
            let (c, n) = crs_of_member(r#"{"type":"name","properties":{"name":"urn:ogc:def:crs:EPSG::3857"}}"#);
            assert_eq!((c.id(), n), (Some(("EPSG".into(), "3857".into())), None));
            let (c, _) = crs_of_member(r#"{"type":"EPSG","properties":{"code":32632}}"#);
            assert_eq!(c.id(), Some(("EPSG".into(), "32632".into())));
        }
    }
}
