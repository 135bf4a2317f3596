//! Geometry values of "any column" as ISO WKB (HEP002 §7.1): EWKB (PostGIS, Sedona,
//! Havasu `ewkb`), WKB, WKT / EWKT (the `wkt` crate) and GeoJSON geometry text — and the
//! SRID → CRS mapping of EWKB and EWKT values ([`srid_crs`]).
//!
//! Every decoder is bounded: counts are checked against the bytes left before anything is
//! copied, nesting is limited to [`wkb::MAX_NESTING`], and the output is never longer than
//! the input plus the encoder's own size.

use crate::wkb;

/// How the values of a geometry column are encoded (the Havasu `havasu.geometry-encoding`
/// identifiers, plus `auto`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextOrBinary {
    /// ISO WKB (EWKB flags are tolerated and stripped as for [`TextOrBinary::Ewkb`]).
    Wkb,
    /// PostGIS extended WKB: Z/M/SRID flags in the type code, an SRID after it.
    Ewkb,
    /// Well-known text, optionally with an EWKT `SRID=n;` prefix.
    Wkt,
    /// A GeoJSON geometry object (RFC 7946 §3.1).
    GeoJson,
}

impl TextOrBinary {
    /// From `wkb`, `ewkb`, `wkt`, `geojson` (case-insensitive).
    pub fn parse(s: &str) -> Option<TextOrBinary> {
        Some(match s.to_ascii_lowercase().as_str() {
            "wkb" => TextOrBinary::Wkb,
            "ewkb" => TextOrBinary::Ewkb,
            "wkt" | "ewkt" => TextOrBinary::Wkt,
            "geojson" | "json" => TextOrBinary::GeoJson,
            _ => return None,
        })
    }

    /// The identifier (`wkb`, `ewkb`, `wkt`, `geojson`).
    pub fn name(self) -> &'static str {
        match self {
            TextOrBinary::Wkb => "wkb",
            TextOrBinary::Ewkb => "ewkb",
            TextOrBinary::Wkt => "wkt",
            TextOrBinary::GeoJson => "geojson",
        }
    }

    /// Is the encoding text (a string column)?
    pub fn is_text(self) -> bool {
        matches!(self, TextOrBinary::Wkt | TextOrBinary::GeoJson)
    }
}

/// One decoded value: ISO WKB and the SRID the value carried (EWKB / EWKT), if any.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    /// The value as ISO WKB (HEP002 §7.1): EWKB flags and SRID stripped, WKT encoded.
    pub wkb: Vec<u8>,
    /// `None` when the value carries no SRID or SRID 0 (PostGIS's "unknown").
    pub srid: Option<u32>,
}

/// Decode a binary value (WKB or EWKB) to ISO WKB.
pub fn decode_binary(b: &[u8]) -> Result<Decoded, String> {
    let mut w = EwkbWalker { b, pos: 0, out: Vec::with_capacity(b.len()), srid: None };
    w.geometry(0)?;
    if w.pos != b.len() {
        return Err(format!("{} bytes after the end of the geometry", b.len() - w.pos));
    }
    // The walker rewrote type codes; the ISO scanner is the final judge.
    wkb::scan(&w.out).map_err(|e| e.to_string())?;
    Ok(Decoded { wkb: w.out, srid: w.srid.filter(|&s| s != 0) })
}

/// Decode a text value in `enc` ([`TextOrBinary::Wkt`] or [`TextOrBinary::GeoJson`]).
pub fn decode_text(s: &str, enc: TextOrBinary) -> Result<Decoded, String> {
    match enc {
        TextOrBinary::GeoJson => {
            let g: geojson::Geometry = serde_json::from_str(s).map_err(|e| format!("not a GeoJSON geometry: {e}"))?;
            let geom = crate::convert::hub::geojson_geometry::from_geojson(&g.value);
            Ok(Decoded { wkb: wkb::encode(&geom, wkb::ByteOrder::LittleEndian), srid: None })
        }
        _ => wkt_to_wkb(s),
    }
}

const FLAG_Z: u32 = 0x8000_0000;
const FLAG_M: u32 = 0x4000_0000;
const FLAG_SRID: u32 = 0x2000_0000;

/// Rewrites EWKB (and ISO WKB) into ISO WKB in the input's byte order.
struct EwkbWalker<'a> {
    b: &'a [u8],
    pos: usize,
    out: Vec<u8>,
    srid: Option<u32>,
}

impl<'a> EwkbWalker<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let left = self.b.len() - self.pos;
        if n > left {
            return Err(format!("{n} bytes needed at offset {} but {left} left", self.pos));
        }
        let s = &self.b[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn u32(&mut self, le: bool) -> Result<u32, String> {
        let s = self.take(4)?;
        let a = [s[0], s[1], s[2], s[3]];
        Ok(if le { u32::from_le_bytes(a) } else { u32::from_be_bytes(a) })
    }

    fn put_u32(&mut self, v: u32, le: bool) {
        self.out.extend_from_slice(&if le { v.to_le_bytes() } else { v.to_be_bytes() });
    }

    fn copy(&mut self, n: usize) -> Result<(), String> {
        let s = self.take(n)?;
        self.out.extend_from_slice(s);
        Ok(())
    }

    /// A count and then `count * coord` bytes of coordinates.
    fn coords(&mut self, le: bool, coord: usize) -> Result<(), String> {
        let at = self.pos;
        let n = self.u32(le)?;
        self.put_u32(n, le);
        let bytes = (n as usize).checked_mul(coord).ok_or_else(|| format!("point count {n} at offset {at} overflows"))?;
        self.copy(bytes).map_err(|_| format!("point count {n} at offset {at} exceeds the {} bytes left", self.b.len() - self.pos))
    }

    fn geometry(&mut self, depth: usize) -> Result<(), String> {
        if depth > wkb::MAX_NESTING {
            return Err(format!("collections nested more than {} deep", wkb::MAX_NESTING));
        }
        let at = self.pos;
        let order = self.take(1)?[0];
        if order > 1 {
            return Err(format!("byte order flag {order} at offset {at}"));
        }
        let le = order == 1;
        self.out.push(order);
        let code = self.u32(le)?;
        let flags = code & (FLAG_Z | FLAG_M | FLAG_SRID);
        let rest = code & !(FLAG_Z | FLAG_M | FLAG_SRID);
        let (kind, iso_z, iso_m) = match rest / 1000 {
            0 => (rest, false, false),
            1 => (rest % 1000, true, false),
            2 => (rest % 1000, false, true),
            3 => (rest % 1000, true, true),
            _ => return Err(format!("geometry type code {code:#x} at offset {}", at + 1)),
        };
        if flags & (FLAG_Z | FLAG_M) != 0 && rest >= 1000 {
            return Err(format!("type code {code:#x} at offset {} mixes EWKB flags and ISO dimensions", at + 1));
        }
        let z = iso_z || flags & FLAG_Z != 0;
        let m = iso_m || flags & FLAG_M != 0;
        if !(1..=7).contains(&kind) {
            return Err(format!("geometry type code {code:#x} at offset {}", at + 1));
        }
        let iso = kind + if z { 1000 } else { 0 } + if m { 2000 } else { 0 };
        self.put_u32(iso, le);
        if flags & FLAG_SRID != 0 {
            let s = self.u32(le)?;
            // PostGIS writes the SRID on the outermost geometry only; a member's is dropped.
            if depth == 0 {
                self.srid = Some(s);
            }
        }
        let coord = 8 * (2 + z as usize + m as usize);
        match kind {
            1 => self.copy(coord),
            2 => self.coords(le, coord),
            3 => {
                let n = self.u32(le)?;
                self.put_u32(n, le);
                for _ in 0..n {
                    self.coords(le, coord)?;
                }
                Ok(())
            }
            _ => {
                let n = self.u32(le)?;
                self.put_u32(n, le);
                for _ in 0..n {
                    self.geometry(depth + 1)?;
                }
                Ok(())
            }
        }
    }
}

/// WKT (or EWKT with an `SRID=n;` prefix) → ISO WKB, little-endian.
pub fn wkt_to_wkb(s: &str) -> Result<Decoded, String> {
    let mut t = s.trim();
    let mut srid = None;
    if t.len() > 5 && t[..5].eq_ignore_ascii_case("SRID=") {
        let Some((n, rest)) = t[5..].split_once(';') else { return Err("EWKT SRID= prefix without ';'".into()) };
        srid = Some(n.trim().parse::<u32>().map_err(|_| format!("EWKT SRID {n:?} is not a number"))?).filter(|&s| s != 0);
        t = rest.trim_start();
    }
    // The parser recurses per parenthesis: refuse hostile nesting before parsing.
    let mut depth = 0usize;
    for c in t.bytes() {
        match c {
            b'(' => {
                depth += 1;
                if depth > wkb::MAX_NESTING + 3 {
                    return Err(format!("parentheses nested more than {} deep", wkb::MAX_NESTING + 3));
                }
            }
            b')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    let w: wkt::Wkt<f64> = t.parse().map_err(|e: &str| format!("not WKT: {e}"))?;
    let g = from_wkt(&w);
    Ok(Decoded { wkb: wkb::encode(&g, wkb::ByteOrder::LittleEndian), srid })
}

fn dims(d: wkt::types::Dimension) -> crate::spec::Dimensions {
    use crate::spec::Dimensions;
    match d {
        wkt::types::Dimension::XY => Dimensions::Xy,
        wkt::types::Dimension::XYZ => Dimensions::Xyz,
        wkt::types::Dimension::XYM => Dimensions::Xym,
        wkt::types::Dimension::XYZM => Dimensions::Xyzm,
    }
}

fn coord(c: &wkt::types::Coord<f64>) -> wkb::Coord {
    wkb::Coord { x: c.x, y: c.y, z: c.z.unwrap_or(f64::NAN), m: c.m.unwrap_or(f64::NAN) }
}

fn point(p: &wkt::types::Point<f64>) -> wkb::Point {
    let d = dims(p.dimension());
    match p.coord() {
        Some(c) => wkb::Point::new(d, coord(c)),
        None => wkb::Point::empty(d),
    }
}

fn line(l: &wkt::types::LineString<f64>) -> wkb::LineString {
    wkb::LineString { dims: dims(l.dimension()), coords: l.coords().iter().map(coord).collect() }
}

fn polygon(p: &wkt::types::Polygon<f64>) -> wkb::Polygon {
    wkb::Polygon { dims: dims(p.dimension()), rings: p.rings().iter().map(|r| r.coords().iter().map(coord).collect()).collect() }
}

/// The `wkt` crate's model → ours (Z and M kept).
fn from_wkt(w: &wkt::Wkt<f64>) -> wkb::Geometry {
    use wkt::Wkt;
    match w {
        Wkt::Point(p) => wkb::Geometry::Point(point(p)),
        Wkt::LineString(l) => wkb::Geometry::LineString(line(l)),
        Wkt::Polygon(p) => wkb::Geometry::Polygon(polygon(p)),
        Wkt::MultiPoint(m) => {
            wkb::Geometry::MultiPoint(wkb::MultiPoint { dims: dims(m.dimension()), points: m.points().iter().map(point).collect() })
        }
        Wkt::MultiLineString(m) => wkb::Geometry::MultiLineString(wkb::MultiLineString {
            dims: dims(m.dimension()),
            lines: m.line_strings().iter().map(line).collect(),
        }),
        Wkt::MultiPolygon(m) => wkb::Geometry::MultiPolygon(wkb::MultiPolygon {
            dims: dims(m.dimension()),
            polygons: m.polygons().iter().map(polygon).collect(),
        }),
        Wkt::GeometryCollection(c) => wkb::Geometry::GeometryCollection(wkb::GeometryCollection {
            dims: dims(c.dimension()),
            geometries: c.geometries().iter().map(from_wkt).collect(),
        }),
    }
}

/// The GeoParquet `geo` `crs` value for an SRID found in EWKB / EWKT values or named by
/// a source, and a warning. The one place where an SRID becomes a CRS: 4326 is OGC:CRS84
/// (HEP002 §8.4; x = longitude in EWKB as in every GeoParquet file), 0 or none is unknown
/// (`null`), and any other SRID is taken as `EPSG:<srid>` (said in the warning), resolved
/// to its PROJJSON with PROJ (issue #22, [`crate::crs::resolve`]). When it cannot be
/// resolved the identifier is kept, which the import stores as an unknown CRS with the
/// identifier in the column description (meta::crs_from_string, a `crs_not_projjson`
/// finding).
pub fn srid_crs(srid: Option<u32>) -> (serde_json::Value, Option<String>) {
    match srid {
        None | Some(0) => (serde_json::Value::Null, None),
        Some(4326) => (serde_json::Value::String("OGC:CRS84".into()), None),
        Some(n) => match crate::crs::resolve(&format!("EPSG:{n}")) {
            Ok(crate::marquet::Crs::ProjJson(doc)) => match serde_json::from_str(&doc) {
                Ok(v) => (v, Some(format!("SRID {n} taken as EPSG:{n}"))),
                Err(_) => (serde_json::Value::String(format!("EPSG:{n}")), Some(format!("SRID {n} taken as EPSG:{n}"))),
            },
            Ok(_) => (serde_json::Value::String(format!("EPSG:{n}")), Some(format!("SRID {n} taken as EPSG:{n}"))),
            Err(why) => (
                serde_json::Value::String(format!("EPSG:{n}")),
                Some(format!("SRID {n} taken as EPSG:{n}, which could not be resolved to PROJJSON ({why}): the CRS is stored as unknown, the identifier kept in the column description")),
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    #[test]
    fn ewkb_point_srid_to_iso() {
        // PostGIS: SELECT ST_AsEWKB('SRID=4326;POINT(1 2)'::geometry) (little-endian).
        let e = hex("0101000020E6100000000000000000F03F0000000000000040");
        let d = decode_binary(&e).unwrap();
        assert_eq!(d.srid, Some(4326));
        assert_eq!(d.wkb, hex("0101000000000000000000F03F0000000000000040"));
        // SRID=3857;POINT Z (1 2 3), big-endian: 0xA0000001.
        let e = hex("00A000000100000F11") ;
        assert!(decode_binary(&e).is_err());
        let mut e = vec![0u8, 0xA0, 0, 0, 1, 0, 0, 0x0F, 0x11];
        for v in [1.0f64, 2.0, 3.0] {
            e.extend_from_slice(&v.to_be_bytes());
        }
        let d = decode_binary(&e).unwrap();
        assert_eq!(d.srid, Some(3857));
        assert_eq!(&d.wkb[..5], &[0, 0, 0, 0x03, 0xE9]); // 1001 = Point Z
        assert_eq!(wkb::to_wkt(&d.wkb).unwrap(), "POINT Z (1 2 3)");
    }

    #[test]
    fn ewkb_polygon_zm_and_collection() {
        let g = wkt_to_wkb("GEOMETRYCOLLECTION ZM (POINT ZM (1 2 3 4), POLYGON ZM ((0 0 0 0, 1 0 0 0, 1 1 0 0, 0 0 0 0)))").unwrap();
        // Re-encode as EWKB by hand: flags instead of ISO thousands, SRID on the outer.
        let mut e = Vec::new();
        e.push(1u8);
        e.extend_from_slice(&(7u32 | FLAG_Z | FLAG_M | FLAG_SRID).to_le_bytes());
        e.extend_from_slice(&2154u32.to_le_bytes());
        e.extend_from_slice(&g.wkb[5..9]); // count
        let rest = &g.wkb[9..];
        // members: rewrite their codes 3001 -> 1|Z|M and 3003 -> 3|Z|M.
        let mut r = rest.to_vec();
        r[1..5].copy_from_slice(&(1u32 | FLAG_Z | FLAG_M).to_le_bytes());
        let second = 5 + 32;
        r[second + 1..second + 5].copy_from_slice(&(3u32 | FLAG_Z | FLAG_M).to_le_bytes());
        e.extend_from_slice(&r);
        let d = decode_binary(&e).unwrap();
        assert_eq!(d.srid, Some(2154));
        assert_eq!(d.wkb, g.wkb);
    }

    #[test]
    fn ewkb_refusals() {
        assert!(decode_binary(&[]).is_err());
        assert!(decode_binary(&[1, 2, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]).unwrap_err().contains("exceeds"));
        let e = hex("0101000000000000000000F03F000000000000004000");
        assert!(decode_binary(&e).unwrap_err().contains("after the end"));
        assert!(decode_binary(&hex("0109000000")).is_err());
    }

    #[test]
    fn wkt_and_geojson() {
        let d = wkt_to_wkb("SRID=4326;POINT(1 2)").unwrap();
        assert_eq!(d.srid, Some(4326));
        assert_eq!(wkb::to_wkt(&d.wkb).unwrap(), "POINT (1 2)");
        let d = wkt_to_wkb("MULTIPOLYGON (((0 0, 1 0, 1 1, 0 0)), EMPTY)").unwrap();
        assert_eq!(wkb::to_wkt(&d.wkb).unwrap(), "MULTIPOLYGON (((0 0, 1 0, 1 1, 0 0)), EMPTY)");
        assert!(wkt_to_wkb("POINT (1)").is_err());
        let deep = "GEOMETRYCOLLECTION (".repeat(1000) + &")".repeat(1000);
        assert!(wkt_to_wkb(&deep).unwrap_err().contains("nested"));
        let d = decode_text(r#"{"type":"LineString","coordinates":[[1,2],[3,4,5]]}"#, TextOrBinary::GeoJson).unwrap();
        assert_eq!(wkb::to_wkt(&d.wkb).unwrap(), "LINESTRING Z (1 2 NaN, 3 4 5)");
        assert!(decode_text("{\"type\":\"Nope\"}", TextOrBinary::GeoJson).is_err());
    }

    #[test]
    fn srid_mapping() {
        assert_eq!(srid_crs(Some(4326)).0, "OGC:CRS84");
        assert_eq!(srid_crs(None).0, serde_json::Value::Null);
        let (v, w) = srid_crs(Some(3857));
        if crate::crs::proj_available() {
            assert_eq!(v["id"]["code"], 3857);
        } else {
            assert_eq!(v, "EPSG:3857");
        }
        assert!(w.unwrap().contains("EPSG:3857"));
    }
}
