//! Antimeridian-aware box tests shared by the spatial indexes (HEP002 §6.4, §10.3).
//!
//! A non-empty box with `xmin > xmax` is the wrapping form: it covers `x ≥ xmin` or
//! `x ≤ xmax` (for a geographic CRS, from `xmin` east through 180 and from −180 east to
//! `xmax`). The tests use unbounded half-lines rather than ±180 so that they stay
//! conservative for coordinates slightly outside the longitude range.

use crate::spec::BBox;

/// True when a box is the antimeridian-wrapping form: not empty and `xmin > xmax`.
#[inline]
pub fn is_wrapping(b: &BBox) -> bool {
    b.xmin > b.xmax && !b.is_empty()
}

/// The X intervals a box covers: one, or two for a wrapping box. A NaN bound (only found in
/// malformed files) is read as unbounded on that side, so such a box is never skipped.
#[inline]
fn x_intervals(b: &BBox) -> ([(f64, f64); 2], usize) {
    let lo = if b.xmin.is_nan() {
        f64::NEG_INFINITY
    } else {
        b.xmin
    };
    let hi = if b.xmax.is_nan() {
        f64::INFINITY
    } else {
        b.xmax
    };
    if lo > hi {
        ([(lo, f64::INFINITY), (f64::NEG_INFINITY, hi)], 2)
    } else {
        ([(lo, hi), (lo, hi)], 1)
    }
}

#[inline]
fn y_interval(b: &BBox) -> (f64, f64) {
    let lo = if b.ymin.is_nan() {
        f64::NEG_INFINITY
    } else {
        b.ymin
    };
    let hi = if b.ymax.is_nan() {
        f64::INFINITY
    } else {
        b.ymax
    };
    (lo, hi)
}

/// XY intersection of two boxes with closed intervals, either of which may wrap around the
/// antimeridian (`xmin > xmax`). An empty box (HEP002 §10.3 placeholder, +∞ minima and −∞
/// maxima) intersects nothing. A NaN bound is treated as unbounded (conservative).
///
/// For two non-wrapping boxes without NaN this equals [`BBox::intersects_xy`].
#[inline]
pub fn intersects(stored: &BBox, query: &BBox) -> bool {
    // Two ordinary boxes (minima at most maxima: neither NaN, wrapping nor empty), the
    // common case of every block entry and point a window meets: the closed-interval test
    // itself (the general one below gives the same answer; a unit test compares them).
    let (a, b) = (stored, query);
    if a.xmin <= a.xmax && a.ymin <= a.ymax && b.xmin <= b.xmax && b.ymin <= b.ymax {
        return a.intersects_xy(b);
    }
    intersects_general(stored, query)
}

/// [`intersects`] for any two boxes (wrapping, empty or with NaN bounds).
#[inline(never)]
fn intersects_general(stored: &BBox, query: &BBox) -> bool {
    if stored.is_empty() || query.is_empty() {
        return false;
    }
    let (sy0, sy1) = y_interval(stored);
    let (qy0, qy1) = y_interval(query);
    if !(sy0 <= qy1 && qy0 <= sy1) {
        return false;
    }
    let (sx, sn) = x_intervals(stored);
    let (qx, qn) = x_intervals(query);
    for &(a0, a1) in &sx[..sn] {
        for &(b0, b1) in &qx[..qn] {
            if a0 <= b1 && b0 <= a1 {
                return true;
            }
        }
    }
    false
}

/// A non-wrapping box containing `b`: a wrapping box is widened to the full longitude range
/// (at least −180..180), any other box is returned unchanged.
#[inline]
pub fn unwrap_box(b: &BBox) -> BBox {
    if is_wrapping(b) {
        BBox {
            xmin: b.xmax.min(-180.0),
            xmax: b.xmin.max(180.0),
            ..*b
        }
    } else {
        *b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_boxes_match_intersects_xy() {
        let a = BBox::xy(0.0, 0.0, 1.0, 1.0);
        for (q, expect) in [
            (BBox::xy(1.0, 1.0, 2.0, 2.0), true), // touching corner: closed intervals
            (BBox::xy(1.5, 0.0, 2.0, 1.0), false),
            (BBox::xy(-1.0, -1.0, 0.5, 0.5), true),
            (BBox::xy(0.2, 2.0, 0.3, 3.0), false),
            (BBox::EMPTY, false),
        ] {
            assert_eq!(intersects(&a, &q), expect, "{q:?}");
            assert_eq!(intersects(&q, &a), expect, "{q:?}");
            assert_eq!(a.intersects_xy(&q), expect);
        }
        assert!(!intersects(
            &BBox::EMPTY,
            &BBox::xy(-1e308, -1e308, 1e308, 1e308)
        ));
    }

    #[test]
    fn wrapping_boxes() {
        let w = BBox::xy(170.0, -10.0, -170.0, 10.0);
        assert!(is_wrapping(&w));
        assert!(intersects(&w, &BBox::xy(175.0, 0.0, 176.0, 1.0)));
        assert!(intersects(&w, &BBox::xy(-179.0, 0.0, -175.0, 1.0)));
        assert!(intersects(&w, &BBox::xy(-170.0, 0.0, -160.0, 1.0))); // touching
        assert!(!intersects(&w, &BBox::xy(-169.0, 0.0, 169.0, 1.0)));
        assert!(!intersects(&w, &BBox::xy(175.0, 11.0, 176.0, 12.0)));
        // Two wrapping boxes always meet in x.
        assert!(intersects(&w, &BBox::xy(179.0, 0.0, -179.0, 1.0)));
        // A wrapping query against plain boxes.
        assert!(intersects(&BBox::xy(0.0, 0.0, 175.0, 1.0), &w));
        assert!(!intersects(&BBox::xy(0.0, 0.0, 160.0, 1.0), &w));
        let u = unwrap_box(&w);
        assert_eq!(
            (u.xmin, u.xmax, u.ymin, u.ymax),
            (-180.0, 180.0, -10.0, 10.0)
        );
        assert_eq!(unwrap_box(&BBox::EMPTY), BBox::EMPTY);
    }

    /// The ordinary-box shortcut of `intersects` answers as the general test, over every
    /// pair of boxes built from edge values (NaN, ±∞, signed zeros, wrapping, empty).
    #[test]
    fn shortcut_equals_the_general_test() {
        let v = [f64::NAN, f64::NEG_INFINITY, -180.0, -1.0, -0.0, 0.0, 0.5, 1.0, 180.0, f64::INFINITY];
        let mut boxes = vec![BBox::EMPTY];
        for &x0 in &v {
            for &x1 in &v {
                for (y0, y1) in [(0.0, 1.0), (-0.0, 0.0), (1.0, 0.0), (f64::NAN, 1.0), (0.5, f64::INFINITY)] {
                    boxes.push(BBox::xy(x0, y0, x1, y1));
                }
            }
        }
        let mut plain = 0;
        for a in &boxes {
            for b in &boxes {
                assert_eq!(intersects(a, b), intersects_general(a, b), "{a:?} {b:?}");
                plain += usize::from(a.xmin <= a.xmax && a.ymin <= a.ymax && b.xmin <= b.xmax && b.ymin <= b.ymax);
            }
        }
        assert!(plain > 1000, "the shortcut was taken {plain} times");
    }

    #[test]
    fn nan_bounds_are_conservative() {
        let q = BBox::xy(5.0, 5.0, 6.0, 6.0);
        assert!(!intersects(&BBox::xy(f64::NAN, 0.0, 1.0, 1.0e9), &q));
        assert!(intersects(&BBox::xy(0.0, 0.0, f64::NAN, 10.0), &q));
        assert!(intersects(&BBox::xy(0.0, f64::NAN, 10.0, f64::NAN), &q));
        // All-NaN is what BBox::is_empty calls empty: it intersects nothing.
        assert!(!intersects(
            &BBox::xy(f64::NAN, f64::NAN, f64::NAN, f64::NAN),
            &q
        ));
    }
}
