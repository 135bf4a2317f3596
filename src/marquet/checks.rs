//! Producer-side conformance checks: what [`MarquetTable`](super::MarquetTable) verifies
//! about geometry values before it writes them, so that the producer never writes a table
//! the validator rejects (HEP002 §2: a producer is conformant when every table it writes
//! is).
//!
//! * ORIENTATION = COUNTERCLOCKWISE (HEP002 §9.2, §12 req 13): a polygon ring wound the
//!   wrong way is refused with an error naming the row, or re-wound when the caller asks
//!   for it ([`OrientationOnWrite::Rewind`]). Rings are judged exactly as the validator
//!   judges them ([`ring_check`], ruling R9).
//! * Non-planar EDGES (HEP002 §9.1, §12 req 12): every coordinate must lie in longitude
//!   [−180, 180] and latitude [−90, 90].
//! * f32 point columns (HEP002 §7.4, §12 req 14, 16): summaries are computed from the
//!   coordinates as stored ([`stored_f32`]), not from the f64 input.
//!
//! Errors are [`MarquetError::Refused`]: the column path, the absolute row number in the
//! table and the rule.

use std::borrow::Cow;

use super::{GeometryColumnInfo, GeometryValues};
use crate::error::{MarquetError, Result};
use crate::wkb::{self, ByteOrder, Coord, Geometry};

/// The rule a wrongly wound ring breaks.
pub const RULE_ORIENTATION: &str = "HEP002 §9.2, §12 req 13";
/// The rule a coordinate outside longitude/latitude ranges breaks under non-planar edges.
pub const RULE_LONLAT_RANGE: &str = "HEP002 §9.1, §12 req 12";

/// What [`MarquetTable`](super::MarquetTable) does with a polygon ring that breaks its
/// column's `ORIENTATION = COUNTERCLOCKWISE` (HEP002 §9.2) on append or update.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OrientationOnWrite {
    /// Refuse the batch with [`MarquetError::Refused`] naming the row (the default).
    #[default]
    Refuse,
    /// Reverse every ring wound the wrong way (exterior rings counterclockwise, interior
    /// rings clockwise). The GeoParquet import uses this (docs/geoparquet-mapping.md).
    Rewind,
}

/// How one polygon ring compares with `ORIENTATION = COUNTERCLOCKWISE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RingCheck {
    /// Wound as required, or without area (fewer than three vertices, zero area).
    Ok,
    /// Wound the wrong way.
    Wrong,
    /// Not decidable from the planar signed area: under non-planar edges, a ring that
    /// crosses the antimeridian or winds around a pole (ruling R9).
    Unchecked,
}

/// Judge ring number `ring` of a polygon (0 = exterior) by its planar signed area (ruling
/// R9): an exterior ring must be counterclockwise, an interior ring clockwise. Vertices
/// with a NaN ordinate are skipped. Under non-planar edges (`planar == false`) a ring with
/// a longitude step over 180° or a net winding around the polar axis is
/// [`RingCheck::Unchecked`]. The producer and the validator both use this function.
pub fn ring_check(pts: &[(f64, f64)], ring: usize, planar: bool) -> RingCheck {
    let pts: Vec<(f64, f64)> = pts.iter().copied().filter(|(x, y)| !x.is_nan() && !y.is_nan()).collect();
    if pts.len() < 3 {
        return RingCheck::Ok;
    }
    if !planar {
        let mut wind = 0.0;
        for w in pts.windows(2) {
            let d = w[1].0 - w[0].0;
            if d.abs() > 180.0 {
                return RingCheck::Unchecked;
            }
            wind += d;
        }
        if wind.abs() > 180.0 {
            return RingCheck::Unchecked;
        }
    }
    let mut a = 0.0;
    let (x0, y0) = pts[0];
    for w in pts.windows(2) {
        a += (w[0].0 - x0) * (w[1].1 - y0) - (w[1].0 - x0) * (w[0].1 - y0);
    }
    if let (Some(l), Some(f)) = (pts.last(), pts.first()) {
        a += (l.0 - x0) * (f.1 - y0) - (f.0 - x0) * (l.1 - y0);
    }
    let wrong = if ring == 0 { a < 0.0 } else { a > 0.0 };
    if a != 0.0 && wrong {
        RingCheck::Wrong
    } else {
        RingCheck::Ok
    }
}

/// The first ring of a WKB value that breaks `ORIENTATION = COUNTERCLOCKWISE`, as
/// `(polygon, ring)` (polygons counted in order wherever nested, ring 0 = exterior).
pub fn first_wrong_ring(bytes: &[u8], planar: bool) -> std::result::Result<Option<(usize, usize)>, wkb::WkbError> {
    let mut wrong = None;
    let mut buf = Vec::new();
    wkb::for_each_polygon_ring(bytes, |p, r, seq| {
        if wrong.is_none() {
            buf.clear();
            buf.extend(seq.xy());
            if ring_check(&buf, r, planar) == RingCheck::Wrong {
                wrong = Some((p, r));
            }
        }
    })?;
    Ok(wrong)
}

fn rewind_rings(rings: &mut [Vec<Coord>], planar: bool) {
    for (r, ring) in rings.iter_mut().enumerate() {
        let xy: Vec<(f64, f64)> = ring.iter().map(|c| (c.x, c.y)).collect();
        if ring_check(&xy, r, planar) == RingCheck::Wrong {
            ring.reverse();
        }
    }
}

fn rewind_geometry(g: &mut Geometry, planar: bool) {
    match g {
        Geometry::Polygon(p) => rewind_rings(&mut p.rings, planar),
        Geometry::MultiPolygon(m) => m.polygons.iter_mut().for_each(|p| rewind_rings(&mut p.rings, planar)),
        Geometry::GeometryCollection(c) => c.geometries.iter_mut().for_each(|g| rewind_geometry(g, planar)),
        _ => {}
    }
}

/// The value with every wrongly wound ring reversed (little-endian ISO WKB), or `None` when
/// every ring is already wound as `ORIENTATION = COUNTERCLOCKWISE` requires.
pub fn rewind(bytes: &[u8], planar: bool) -> std::result::Result<Option<Vec<u8>>, wkb::WkbError> {
    if first_wrong_ring(bytes, planar)?.is_none() {
        return Ok(None);
    }
    let mut g = wkb::decode(bytes)?;
    rewind_geometry(&mut g, planar);
    Ok(Some(wkb::encode(&g, ByteOrder::LittleEndian)))
}

/// A point coordinate as an f32 point column stores it (each ordinate rounded to the
/// nearest f32): the summaries of an f32 column are computed from these values, so that
/// BBOX, block boxes, R-tree items and covering rows contain what is stored (HEP002 §7.4,
/// §12 req 14, 16).
pub fn stored_f32(c: [f64; 4]) -> [f64; 4] {
    c.map(|v| v as f32 as f64)
}

/// Is the vertex box of a non-empty geometry inside longitude [−180, 180] × latitude
/// [−90, 90]?
fn in_lonlat(xmin: f64, ymin: f64, xmax: f64, ymax: f64) -> bool {
    (-180.0..=180.0).contains(&xmin) && (-180.0..=180.0).contains(&xmax) && (-90.0..=90.0).contains(&ymin) && (-90.0..=90.0).contains(&ymax)
}

pub(crate) fn refused(info: &GeometryColumnInfo, row: u64, rule: &'static str, message: String) -> MarquetError {
    MarquetError::Refused { path: info.path.clone(), row: Some(row), rule, message }
}

/// Check geometry values before they are encoded for column `info` at absolute rows
/// `base_row..`: coordinate ranges under non-planar edges, and ring orientation under
/// `ORIENTATION = COUNTERCLOCKWISE` (refused or re-wound as `orientation` says). Returns
/// the values to write: borrowed when nothing changed. Values that are not valid WKB are
/// passed through for [`MarquetTable::prepare`](super::MarquetTable::prepare) to report.
pub fn check_values<'a>(
    info: &GeometryColumnInfo,
    v: &'a GeometryValues,
    base_row: u64,
    orientation: OrientationOnWrite,
) -> Result<Cow<'a, GeometryValues>> {
    let planar = info.edges.is_planar();
    match v {
        GeometryValues::Points { x, y, valid, .. } => {
            if !planar {
                for i in 0..x.len().min(y.len()) {
                    if !valid.as_ref().and_then(|v| v.get(i).copied()).unwrap_or(true) || (x[i].is_nan() && y[i].is_nan()) {
                        continue;
                    }
                    if !in_lonlat(x[i], y[i], x[i], y[i]) {
                        return Err(refused(
                            info,
                            base_row + i as u64,
                            RULE_LONLAT_RANGE,
                            format!("point ({:?}, {:?}) is outside longitude [-180, 180] / latitude [-90, 90], which edges {} require", x[i], y[i], info.edges.name()),
                        ));
                    }
                }
            }
            Ok(Cow::Borrowed(v))
        }
        GeometryValues::Wkb(vals) => {
            if planar && !info.orientation_ccw {
                return Ok(Cow::Borrowed(v));
            }
            // Per row: None = unchanged, Some(bytes) = re-wound.
            let out = super::par_rows(vals.len(), |i| {
                let Some(b) = &vals[i] else { return Ok(None) };
                let row = base_row + i as u64;
                if !planar {
                    let Ok(s) = wkb::scan(b) else { return Ok(None) };
                    if !s.is_empty && !in_lonlat(s.bbox.xmin, s.bbox.ymin, s.bbox.xmax, s.bbox.ymax) {
                        return Err(refused(
                            info,
                            row,
                            RULE_LONLAT_RANGE,
                            format!(
                                "coordinates [{:?}, {:?}] x [{:?}, {:?}] leave longitude [-180, 180] / latitude [-90, 90], which edges {} require",
                                s.bbox.xmin, s.bbox.xmax, s.bbox.ymin, s.bbox.ymax, info.edges.name()
                            ),
                        ));
                    }
                }
                if !info.orientation_ccw {
                    return Ok(None);
                }
                match orientation {
                    OrientationOnWrite::Refuse => match first_wrong_ring(b, planar) {
                        Ok(Some((p, r))) => {
                            let want = if r == 0 { "counterclockwise (exterior ring)" } else { "clockwise (interior ring)" };
                            Err(refused(
                                info,
                                row,
                                RULE_ORIENTATION,
                                format!("polygon {p} ring {r} is not {want} as orientation counterclockwise requires; re-wind it or write with OrientationOnWrite::Rewind"),
                            ))
                        }
                        _ => Ok(None),
                    },
                    OrientationOnWrite::Rewind => Ok(rewind(b, planar).ok().flatten()),
                }
            })?;
            if out.iter().all(|o| o.is_none()) {
                return Ok(Cow::Borrowed(v));
            }
            Ok(Cow::Owned(GeometryValues::Wkb(
                out.into_iter().zip(vals).map(|(new, old)| new.or_else(|| old.clone())).collect(),
            )))
        }
    }
}

/// The rule an infinite ordinate breaks (issues #19, #32): boxes (`BBOX`, block boxes,
/// R-tree items, covering values) are finite doubles computed ignoring NaN (§6.4).
pub const RULE_FINITE: &str = "HEP002 §6.4 (finite boxes: no infinite ordinate, NaN ignored; docs/FAULTS.md F6)";

/// The box of a WKB value, refusing, with the table row, a geometry with an infinite
/// ordinate or with a position on one axis only (every X NaN but some Y not, or the
/// reverse); NaN ordinates are kept ([`crate::wkb::check_finite`]). One walk of the
/// value: the structural error first, then a refused ordinate.
pub(crate) fn scan_and_refuse_non_finite(info: &GeometryColumnInfo, row: u64, wkb: &[u8]) -> Result<crate::wkb::WkbInfo> {
    let (scan, verdict) = crate::wkb::scan_finite(wkb).map_err(|e| e.into_marquet(info.path.clone(), Some(row)))?;
    refuse_verdict(info, row, verdict)?;
    Ok(scan)
}

fn refuse_verdict(info: &GeometryColumnInfo, row: u64, v: std::result::Result<(), crate::wkb::NonFinite>) -> Result<()> {
    v.map_err(|e| refused(info, row, RULE_FINITE, format!("vertex {}: {}", e.vertex, e.message)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn square(ccw: bool) -> Vec<(f64, f64)> {
        let mut r = vec![(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0), (0.0, 0.0)];
        if !ccw {
            r.reverse();
        }
        r
    }

    #[test]
    fn rings_are_judged_by_signed_area() {
        assert_eq!(ring_check(&square(true), 0, true), RingCheck::Ok);
        assert_eq!(ring_check(&square(false), 0, true), RingCheck::Wrong);
        assert_eq!(ring_check(&square(false), 1, true), RingCheck::Ok);
        assert_eq!(ring_check(&square(true), 1, true), RingCheck::Wrong);
        let across = [(179.0, 0.0), (-179.0, 0.0), (-179.0, 1.0), (179.0, 1.0), (179.0, 0.0)];
        assert_eq!(ring_check(&across, 0, false), RingCheck::Unchecked);
        assert_eq!(ring_check(&[(0.0, 0.0), (1.0, 1.0)], 0, true), RingCheck::Ok);
    }

    #[test]
    fn rewind_reverses_only_wrong_rings() {
        use crate::spec::Dimensions;
        use crate::wkb::{MultiPolygon, Polygon};
        let c = |r: Vec<(f64, f64)>| r.into_iter().map(|(x, y)| Coord::xy(x, y)).collect::<Vec<_>>();
        let hole: Vec<(f64, f64)> = square(false).into_iter().map(|(x, y)| (x * 0.5 + 0.2, y * 0.5 + 0.2)).collect();
        let good = Polygon { dims: Dimensions::Xy, rings: vec![c(square(true)), c(hole.clone())] };
        let bad = Polygon { dims: Dimensions::Xy, rings: vec![c(square(false)), c(hole.iter().rev().copied().collect())] };
        let g = Geometry::MultiPolygon(MultiPolygon { dims: Dimensions::Xy, polygons: vec![good.clone(), bad] });
        let w = wkb::encode(&g, ByteOrder::BigEndian);
        assert_eq!(first_wrong_ring(&w, true).unwrap(), Some((1, 0)));
        let fixed = rewind(&w, true).unwrap().unwrap();
        assert_eq!(first_wrong_ring(&fixed, true).unwrap(), None);
        let want = Geometry::MultiPolygon(MultiPolygon { dims: Dimensions::Xy, polygons: vec![good.clone(), good] });
        assert_eq!(fixed, wkb::encode(&want, ByteOrder::LittleEndian));
        assert_eq!(rewind(&fixed, true).unwrap(), None);
    }

    #[test]
    fn stored_f32_rounds_like_the_column() {
        let c = stored_f32([0.1, -88.2434, f64::NAN, 1e300]);
        assert_eq!(c[0], 0.1f32 as f64);
        assert_eq!(c[1], -88.2434f32 as f64);
        assert!(c[2].is_nan());
        assert_eq!(c[3], f64::INFINITY);
    }
}

