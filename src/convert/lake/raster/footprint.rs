//! A raster's footprint in OGC:CRS84 by Havasu's "Raster bounds" rules: the envelope of the
//! raster in its own CRS, transformed to WGS84 longitude/latitude with each edge densified
//! (projection distortion), widened to all longitudes when it holds a pole, and given as a
//! box with `xmin > xmax` when it crosses the antimeridian. PROJ's `proj_trans_bounds`
//! implements exactly these three rules; the box is then padded outward by a hair
//! ([`PAD_DEGREES`] plus [`PAD_RELATIVE`] of its size) so that the curved edges between
//! densified points stay inside.

use std::collections::HashMap;

use super::model::Raster;
use crate::crs::{self, Transformer};
use crate::marquet::Crs;
use crate::spec::Dimensions;
use crate::wkb::{self, Coord, Geometry, MultiPolygon, Polygon};

/// Points per envelope edge handed to PROJ.
pub const DENSIFY: i32 = 101;
/// Outward padding of every footprint, in degrees (about 1 cm).
pub const PAD_DEGREES: f64 = 1e-7;
/// Outward padding of every footprint, relative to its size.
pub const PAD_RELATIVE: f64 = 1e-6;

/// The envelope of `r` in its own CRS, `[xmin, ymin, xmax, ymax]`: the outer corners of
/// its corner pixels (Havasu anchors the geo-reference at pixel centres).
pub fn native_envelope(r: &Raster) -> [f64; 4] {
    let (w, h) = (r.width as f64, r.height as f64);
    let pts = [r.geo.world(-0.5, -0.5), r.geo.world(w - 0.5, -0.5), r.geo.world(w - 0.5, h - 0.5), r.geo.world(-0.5, h - 0.5)];
    let mut b = [f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY];
    for (x, y) in pts {
        b[0] = b[0].min(x);
        b[1] = b[1].min(y);
        b[2] = b[2].max(x);
        b[3] = b[3].max(y);
    }
    b
}

/// Wrap a longitude into [-180, 180].
fn wrap(x: f64) -> f64 {
    if (-180.0..=180.0).contains(&x) {
        x
    } else {
        (x + 180.0).rem_euclid(360.0) - 180.0
    }
}

/// Pad, clamp and normalise a lon/lat box (`xmin > xmax`: crosses the antimeridian).
pub fn normalise(b: [f64; 4]) -> [f64; 4] {
    let [x0, y0, x1, y1] = b;
    let crossing = x0 > x1;
    let wx = if crossing { x1 + 360.0 - x0 } else { x1 - x0 };
    let px = PAD_DEGREES + PAD_RELATIVE * wx.abs();
    let py = PAD_DEGREES + PAD_RELATIVE * (y1 - y0).abs();
    let (y0, y1) = ((y0 - py).max(-90.0), (y1 + py).min(90.0));
    if wx + 2.0 * px >= 360.0 {
        return [-180.0, y0, 180.0, y1];
    }
    if crossing {
        return [x0 - px, y0, x1 + px, y1];
    }
    if x0 >= -180.0 && x1 <= 180.0 {
        return [(x0 - px).max(-180.0), y0, (x1 + px).min(180.0), y1];
    }
    // Outside [-180, 180] (e.g. a 0..360 grid): wrapped, which may cross.
    [wrap(x0 - px), y0, wrap(x1 + px), y1]
}

/// Computes footprints, keeping one transformation per CRS seen.
#[derive(Default)]
pub struct Footprints {
    cache: HashMap<String, std::result::Result<Option<Transformer>, String>>,
}

impl Footprints {
    /// The footprint box of `r` in OGC:CRS84 (`xmin > xmax` across the antimeridian);
    /// `Ok(None)` when the raster states no CRS; `Err` when its CRS does not resolve or
    /// the envelope does not transform.
    pub fn bounds(&mut self, r: &Raster) -> std::result::Result<Option<[f64; 4]>, String> {
        let Some(wkt) = r.crs_wkt.as_deref().filter(|w| !w.trim().is_empty()) else { return Ok(None) };
        let env = native_envelope(r);
        if env.iter().any(|v| !v.is_finite()) {
            return Err(format!("the geo-reference gives a non-finite envelope {env:?}"));
        }
        let t = self
            .cache
            .entry(wkt.to_string())
            .or_insert_with(|| {
                let c = crs::resolve(wkt)?;
                match c {
                    Crs::Default => Ok(None),
                    Crs::Unknown => Err("the CRS is unknown".to_string()),
                    c => Transformer::new(&c, &Crs::Default).map(Some),
                }
            })
            .as_ref()
            .map_err(|e| e.clone())?;
        let b = match t {
            None => env,
            Some(t) => t.transform_bounds(env, DENSIFY)?,
        };
        Ok(Some(normalise(b)))
    }
}

fn rect(x0: f64, y0: f64, x1: f64, y1: f64) -> Polygon {
    let c = |x, y| Coord::xy(x, y);
    Polygon { dims: Dimensions::Xy, rings: vec![vec![c(x0, y0), c(x1, y0), c(x1, y1), c(x0, y1), c(x0, y0)]] }
}

/// The footprint as ISO WKB: a rectangle, or across the antimeridian a multipolygon of
/// its two parts (`[xmin, 180]` and `[-180, xmax]`), as RFC 7946 §3.1.9 cuts them.
pub fn footprint_wkb(b: [f64; 4]) -> Vec<u8> {
    let g = if b[0] <= b[2] {
        Geometry::Polygon(rect(b[0], b[1], b[2], b[3]))
    } else {
        Geometry::MultiPolygon(MultiPolygon { dims: Dimensions::Xy, polygons: vec![rect(b[0], b[1], 180.0, b[3]), rect(-180.0, b[1], b[2], b[3])] })
    };
    wkb::encode(&g, wkb::ByteOrder::LittleEndian)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalisation() {
        let n = normalise([10.0, 20.0, 11.0, 21.0]);
        assert!(n[0] < 10.0 && n[0] > 9.9999 && n[2] > 11.0 && n[3] > 21.0);
        // Crossing boxes stay crossing, pole boxes clamp.
        let n = normalise([170.0, 80.0, -170.0, 90.0]);
        assert!(n[0] > n[2] && n[3] == 90.0);
        // A 0..360 grid is all longitudes; 170..190 crosses.
        assert_eq!(normalise([0.0, 0.0, 360.0, 1.0])[0], -180.0);
        let n = normalise([170.0, 0.0, 190.0, 1.0]);
        assert!(n[0] < 170.0 && n[2] > -170.0 && n[2] < -169.99 && n[0] > n[2], "{n:?}");
    }

    #[test]
    fn antimeridian_footprint_is_two_parts() {
        let w = footprint_wkb([170.0, 0.0, -170.0, 1.0]);
        match wkb::decode(&w).unwrap() {
            Geometry::MultiPolygon(m) => assert_eq!(m.polygons.len(), 2),
            g => panic!("{g:?}"),
        }
    }
}
