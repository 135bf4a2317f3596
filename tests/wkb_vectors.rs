//! Peer WKB test vectors (testdata/wkb, see its README.md): every valid ISO vector decodes to
//! its reference WKT, every EWKB / curve / TIN / malformed one is rejected, none panics, and
//! decode + encode reproduces every little-endian value byte for byte.

use std::path::PathBuf;

use marquet::wkb::{self, ByteOrder};
use serde_json::Value;

fn testdata(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/wkb")
        .join(name)
}

fn unhex(s: &str) -> Vec<u8> {
    assert_eq!(s.len() % 2, 0, "odd hex length");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    Num(f64),
    Open,
    Close,
    Comma,
}

/// WKT as tokens, so spacing ("POINT(0 0)" vs "POINT (0 0)", "2 ,10") and number spelling
/// ("1.0", "1", "1e0") do not matter.
fn tokens(wkt: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    let mut chars = wkt.chars().peekable();
    while let Some(&c) = chars.peek() {
        match c {
            '(' | ')' | ',' => {
                chars.next();
                out.push(match c {
                    '(' => Tok::Open,
                    ')' => Tok::Close,
                    _ => Tok::Comma,
                });
            }
            c if c.is_whitespace() => {
                chars.next();
            }
            _ => {
                let mut w = String::new();
                while let Some(&c) = chars.peek() {
                    if c == '(' || c == ')' || c == ',' || c.is_whitespace() {
                        break;
                    }
                    w.push(c);
                    chars.next();
                }
                match w.parse::<f64>() {
                    Ok(v) if !w.eq_ignore_ascii_case("nan") && !w.eq_ignore_ascii_case("inf") => {
                        out.push(Tok::Num(v))
                    }
                    _ => out.push(Tok::Word(w.to_ascii_uppercase())),
                }
            }
        }
    }
    out
}

fn close(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
}

/// Compare our WKT with a reference WKT token by token, numbers numerically.
/// `lenient_empty_dims`: the reference says "X Z EMPTY" where the WKB is an XY empty (the
/// geoarrow-c stream files, written by R sf, encode empties without Z).
fn same_wkt(ours: &str, reference: &str, lenient_empty_dims: bool) -> bool {
    let a = tokens(ours);
    let mut b = tokens(reference);
    if lenient_empty_dims && a.len() == 2 && b.len() == 3 && b[2] == Tok::Word("EMPTY".into()) {
        b.remove(1);
    }
    a.len() == b.len()
        && a.iter().zip(&b).all(|(x, y)| match (x, y) {
            (Tok::Num(x), Tok::Num(y)) => close(*x, *y),
            _ => x == y,
        })
}

const SEVEN: [&str; 7] = [
    "POINT",
    "LINESTRING",
    "POLYGON",
    "MULTIPOINT",
    "MULTILINESTRING",
    "MULTIPOLYGON",
    "GEOMETRYCOLLECTION",
];

/// Is `entry` (from either list) something a strict ISO reader must accept?
fn should_accept(entry: &Value, list: &str) -> bool {
    let s = |k: &str| entry.get(k).and_then(Value::as_str).unwrap_or("");
    if list == "malformed" {
        // Only `shapely-test_io-INVALID_WKB` is not "error...": structurally valid WKB whose
        // ring is unclosed — conformant by ruling R4.
        return !s("expected").starts_with("error");
    }
    let first = tokens(s("wkt")).into_iter().next();
    let seven = matches!(first, Some(Tok::Word(w)) if SEVEN.contains(&w.as_str()));
    seven && !s("flavor").starts_with("EWKB")
}

/// The exact error for each malformed vector (ids from wkb_vectors.json).
const PINNED: &[(&str, &str)] = &[
    (
        "geoarrow-c-short_point1",
        "unexpected end of input at offset 0: byte order needs 1 bytes, 0 left",
    ),
    (
        "geoarrow-c-short_point2",
        "unexpected end of input at offset 1: geometry type needs 4 bytes, 3 left",
    ),
    (
        "geoarrow-c-short_point3",
        "unexpected end of input at offset 5: coordinates needs 16 bytes, 15 left",
    ),
    // The entry says 257, but its bytes are 01 01010101: code 0x01010101.
    (
        "geoarrow-c-bad_point",
        "unknown geometry type code 16843009 at offset 1",
    ),
    (
        "georust-wkb-test_wkb_invalid_byte_order",
        "invalid byte order 0x02 at offset 0 (expected 0x00 or 0x01)",
    ),
    (
        "georust-wkb-test_wkb_buffer_too_short_for_header",
        "unexpected end of input at offset 1: geometry type needs 4 bytes, 2 left",
    ),
    (
        "georust-wkb-test_wkb_point_xy_buffer_too_short_for_coords",
        "unexpected end of input at offset 5: coordinates needs 16 bytes, 8 left",
    ),
    (
        "georust-wkb-test_wkb_point_xyz_buffer_too_short_for_coords",
        "unexpected end of input at offset 5: coordinates needs 24 bytes, 16 left",
    ),
    (
        "georust-wkb-test_wkb_linestring_buffer_too_short_for_num_points",
        "unexpected end of input at offset 5: point count needs 4 bytes, 0 left",
    ),
    (
        "georust-wkb-test_wkb_linestring_num_points_too_large_for_buffer",
        "point count 10 exceeds the 16 bytes left at offset 9",
    ),
    (
        "georust-wkb-test_wkb_linestring_invalid_num_points_value",
        "point count 4294967295 exceeds the 0 bytes left at offset 9",
    ),
    (
        "georust-wkb-test_wkb_polygon_buffer_too_short_for_num_rings",
        "unexpected end of input at offset 5: ring count needs 4 bytes, 0 left",
    ),
    (
        "georust-wkb-test_wkb_polygon_buffer_too_short_for_ring_num_points",
        "ring count 1 exceeds the 0 bytes left at offset 9",
    ),
    (
        "georust-wkb-test_wkb_polygon_ring_num_points_too_large_for_buffer",
        "point count 4 exceeds the 16 bytes left at offset 13",
    ),
    (
        "georust-wkb-test_wkb_multipoint_buffer_too_short_for_num_multipoints_header",
        "unexpected end of input at offset 5: member count needs 4 bytes, 0 left",
    ),
    (
        "georust-wkb-test_wkb_multipoint_buffer_too_short_for_contained_point_header",
        "member count 1 exceeds the 0 bytes left at offset 9",
    ),
    (
        "georust-wkb-test_wkb_multipoint_buffer_too_short_for_contained_point_coords",
        "member count 1 exceeds the 13 bytes left at offset 9",
    ),
    (
        "georust-wkb-test_wkb_multilinestring_buffer_too_short_for_num_multilinestrings_header",
        "unexpected end of input at offset 5: member count needs 4 bytes, 0 left",
    ),
    (
        "georust-wkb-test_wkb_multilinestring_buffer_too_short_for_contained_linestring_header",
        "member count 1 exceeds the 0 bytes left at offset 9",
    ),
    (
        "georust-wkb-test_wkb_multilinestring_buffer_too_short_for_contained_linestring_num_points",
        "member count 1 exceeds the 5 bytes left at offset 9",
    ),
    (
        "georust-wkb-test_wkb_multipolygon_buffer_too_short_for_num_multipolygons_header",
        "unexpected end of input at offset 5: member count needs 4 bytes, 0 left",
    ),
    (
        "georust-wkb-test_wkb_multipolygon_buffer_too_short_for_contained_polygon_header",
        "member count 1 exceeds the 0 bytes left at offset 9",
    ),
    (
        "georust-wkb-test_wkb_geomcollection_buffer_too_short_for_num_geometries_header",
        "unexpected end of input at offset 5: member count needs 4 bytes, 0 left",
    ),
    (
        "georust-wkb-test_wkb_geomcollection_buffer_too_short_for_contained_geometry_header",
        "member count 1 exceeds the 0 bytes left at offset 9",
    ),
    (
        "shapely-test_io-truncated-point",
        "unexpected end of input at offset 5: coordinates needs 16 bytes, 1 left",
    ),
    (
        "shapely-test_io-empty",
        "unexpected end of input at offset 0: byte order needs 1 bytes, 0 left",
    ),
    (
        "geoparquet-testing-bad_data-wkb-with-srid-prefix-row0",
        "ewkb srid flag in type 0x20000001 at offset 1 (iso wkb required)",
    ),
];

#[test]
fn json_vectors() {
    let text = std::fs::read_to_string(testdata("wkb_vectors.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let (mut accepted, mut rejected, mut round_trips) = (0, 0, 0);
    let mut pinned_seen = 0;
    for list in ["valid", "malformed"] {
        for e in doc[list].as_array().unwrap() {
            let id = e["id"].as_str().unwrap();
            let accept = should_accept(e, list);
            let wkt = e.get("wkt").and_then(Value::as_str);
            let mut wkts = Vec::new();
            for (key, order) in [
                ("ndr_hex", Some(ByteOrder::LittleEndian)),
                ("xdr_hex", Some(ByteOrder::BigEndian)),
                ("hex", None),
            ] {
                let Some(h) = e.get(key).and_then(Value::as_str) else {
                    continue;
                };
                let bytes = unhex(h);
                let scanned = wkb::scan(&bytes);
                let decoded = wkb::decode(&bytes);
                assert_eq!(scanned.is_ok(), decoded.is_ok(), "{id} {key}");
                if !accept {
                    let err = decoded.unwrap_err().to_string();
                    assert_eq!(scanned.unwrap_err().to_string(), err);
                    if let Some((_, msg)) = PINNED.iter().find(|(k, _)| *k == id) {
                        assert_eq!(err, *msg, "{id}");
                        pinned_seen += 1;
                    } else if e["flavor"].as_str().unwrap_or("").starts_with("EWKB") {
                        assert!(err.starts_with("ewkb "), "{id}: {err}");
                    } else {
                        assert!(
                            err.starts_with("unknown geometry type code "),
                            "{id}: {err}"
                        );
                        assert!(
                            err.contains("not one of the seven simple feature types"),
                            "{id}: {err}"
                        );
                    }
                    rejected += 1;
                    continue;
                }
                let g = decoded.unwrap_or_else(|err| panic!("{id} {key}: {err}"));
                let info = scanned.unwrap();
                assert_eq!(info.geometry_type, g.geometry_type(), "{id}");
                assert_eq!(info.is_empty, g.is_empty(), "{id}");
                let ours = wkb::to_wkt(&bytes).unwrap();
                if let Some(reference) = wkt {
                    assert!(
                        same_wkt(&ours, reference, false),
                        "{id} {key}: ours {ours:?} vs {reference:?}"
                    );
                }
                wkts.push(ours);
                let order = order.unwrap_or(if bytes[0] == 1 {
                    ByteOrder::LittleEndian
                } else {
                    ByteOrder::BigEndian
                });
                assert_eq!(wkb::encode(&g, order), bytes, "{id} {key}: round trip");
                round_trips += 1;
                accepted += 1;
            }
            wkts.dedup();
            assert!(
                wkts.len() <= 1,
                "{id}: byte orders decode differently: {wkts:?}"
            );
        }
    }
    assert_eq!(pinned_seen, PINNED.len());
    // valid: 59 ISO entries x 2 byte orders + 7 single-hex ISO; malformed: 1 (ruling R4).
    assert_eq!(accepted, 126);
    // valid: 42 curve/surface/TIN entries x 2 byte orders + 5 EWKB; malformed: 27.
    assert_eq!(rejected, 116);
    assert_eq!(round_trips, 126);
}

/// Split a concatenated WKB stream into values.
fn split_stream(mut bytes: &[u8]) -> Vec<Result<Vec<u8>, String>> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        match wkb::scan_prefix(bytes) {
            Ok((_, len)) => {
                out.push(Ok(bytes[..len].to_vec()));
                bytes = &bytes[len..];
            }
            Err(e) => {
                out.push(Err(e.to_string()));
                break;
            }
        }
    }
    out
}

#[test]
fn geoarrow_c_streams() {
    let names = [
        "point",
        "point_z",
        "linestring",
        "linestring_z",
        "polygon",
        "polygon_z",
        "multipoint",
        "multipoint_z",
        "multilinestring",
        "multilinestring_z",
        "multipolygon",
        "multipolygon_z",
        "geometrycollection",
        "geometrycollection_z",
        "nc",
    ];
    let mut values = 0;
    let mut empties = 0;
    for name in names {
        let bytes = std::fs::read(testdata(&format!("geoarrow-c-testing/{name}.wkb"))).unwrap();
        let wkt =
            std::fs::read_to_string(testdata(&format!("geoarrow-c-testing/{name}.wkt"))).unwrap();
        let lines: Vec<&str> = wkt.lines().filter(|l| !l.trim().is_empty()).collect();
        let vals = split_stream(&bytes);
        assert_eq!(vals.len(), lines.len(), "{name}");
        let mut bbox = marquet::BBox::EMPTY;
        for (v, line) in vals.iter().zip(&lines) {
            let v = v.as_ref().unwrap_or_else(|e| panic!("{name}: {e}"));
            let ours = wkb::to_wkt(v).unwrap();
            assert!(
                same_wkt(&ours, line, true),
                "{name}: ours {ours:?} vs {line:?}"
            );
            let g = wkb::decode(v).unwrap();
            let order = if v[0] == 1 {
                ByteOrder::LittleEndian
            } else {
                ByteOrder::BigEndian
            };
            assert_eq!(&wkb::encode(&g, order), v, "{name}: round trip");
            let info = wkb::scan(v).unwrap();
            empties += info.is_empty as usize;
            bbox = bbox.union(&info.bbox);
            values += 1;
        }
        if name == "nc" {
            // SOURCES.md: data extent [-84.3239, 33.882, -75.457, 36.5896].
            let r = |v: f64| (v * 1e4).round() / 1e4;
            assert_eq!(
                (r(bbox.xmin), r(bbox.ymin), r(bbox.xmax), r(bbox.ymax)),
                (-84.3239, 33.882, -75.457, 36.5896)
            );
        }
    }
    // point, linestring: 2 each; polygon, multilinestring: 3; multipoint, multipolygon: 4;
    // geometrycollection: 8 (each also _z); nc: 100.
    assert_eq!(values, 2 * (2 + 2 + 3 + 4 + 3 + 4 + 8) + 100);
    // One empty per file except nc.
    assert_eq!(empties, 14);
    // The EWKB twin of linestring_z is rejected at its first value.
    let ewkb = std::fs::read(testdata("geoarrow-c-testing/linestring_z.ewkb")).unwrap();
    let vals = split_stream(&ewkb);
    assert_eq!(vals.len(), 1);
    assert_eq!(
        vals[0].as_ref().unwrap_err(),
        "ewkb z/m flag in type 0x80000002 at offset 1 (iso wkb required)"
    );
}
