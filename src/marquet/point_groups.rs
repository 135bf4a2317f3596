//! Boxes of small groups of rows of a point column's decoded chunks, kept by a held reader
//! (issue #33: warm point windows).
//!
//! A point window tests every point of each row block its box meets: 1,024 points a block
//! by default, about 3,400 a window of `marquet bench` for some 240 matches. A held reader
//! (the warm `SpatialReader`) keeps the decoded chunks and comes back to them in later
//! windows, and then tested the same points again, from memory the decoder wrote windows
//! before. The first time a chunk's points are tested, the box of each run of
//! [`GROUP_ROWS`] rows of the chunk is computed alongside (one pass over the chunk, which
//! the decoder has just written); a later window skips the groups its window misses,
//! takes the groups inside it whole and tests only the points of the groups across its
//! edge. Nothing is stored in the file: the boxes live as long as the snapshot that made
//! them, and at most [`GROUP_BYTES`] of them are kept.
//!
//! Only `{x: f64, y: f64}` elements (16 bytes, x first: the usual point column) are
//! grouped, and only when a null row, equal to the fill value, cannot match the window:
//! the loop of `crate::query` that these boxes shorten.

use std::collections::HashMap;
use std::sync::Arc;

use crate::spec::BBox;

/// Rows a group.
pub const GROUP_ROWS: usize = 64;
/// Bytes of boxes kept per column at most (about 1/40 of the decoded chunks they describe);
/// past it the boxes are dropped and made again as chunks are visited.
pub const GROUP_BYTES: usize = 4 << 20;

/// The box of one group of rows: of its points that are neither null (equal to the fill
/// value) nor have a NaN coordinate (`+∞`/`−∞` when there is none), with the group's count
/// of non-null rows and whether every row is such a point (`clean`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GroupBox {
    /// Least x.
    pub xmin: f64,
    /// Least y.
    pub ymin: f64,
    /// Greatest x.
    pub xmax: f64,
    /// Greatest y.
    pub ymax: f64,
    /// Rows of the group that are not null.
    pub nonnull: u32,
    /// Every row of the group is a non-null point without a NaN coordinate.
    pub clean: bool,
}

/// What a group is to a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupTest {
    /// No point of the group lies in the window.
    Outside,
    /// Every row of the group is a point in the window.
    Inside,
    /// Its points must be tested one by one.
    Across,
}

impl GroupBox {
    /// The group against window `w` (its interior when `strict`, else the closed box; `w`
    /// an ordinary box: minima at most maxima, no NaN).
    #[inline]
    pub fn test(&self, w: &BBox, strict: bool) -> GroupTest {
        let outside = if strict {
            self.xmax <= w.xmin || self.xmin >= w.xmax || self.ymax <= w.ymin || self.ymin >= w.ymax
        } else {
            self.xmax < w.xmin || self.xmin > w.xmax || self.ymax < w.ymin || self.ymin > w.ymax
        };
        if outside {
            return GroupTest::Outside;
        }
        let inside = if strict {
            w.xmin < self.xmin && self.xmax < w.xmax && w.ymin < self.ymin && self.ymax < w.ymax
        } else {
            w.xmin <= self.xmin && self.xmax <= w.xmax && w.ymin <= self.ymin && self.ymax <= w.ymax
        };
        if inside && self.clean {
            GroupTest::Inside
        } else {
            GroupTest::Across
        }
    }
}

/// The group boxes of a point column's chunks, by the first row of the chunk (see the
/// module documentation).
#[derive(Debug, Default)]
pub struct PointGroups {
    pieces: HashMap<u64, Arc<[GroupBox]>>,
    bytes: usize,
}

impl PointGroups {
    /// The boxes of the groups of the chunk whose first row is `first` and whose decoded
    /// `{x: f64, y: f64}` elements are `bytes`: made now when not held yet. Group `g` holds
    /// rows `first + g·GROUP_ROWS …`; the last one may be short.
    pub fn of_piece(&mut self, first: u64, bytes: &[u8], fill16: Option<u128>) -> Arc<[GroupBox]> {
        if let Some(b) = self.pieces.get(&first) {
            return b.clone();
        }
        let boxes: Arc<[GroupBox]> = group_boxes(bytes, fill16).into();
        let size = boxes.len() * std::mem::size_of::<GroupBox>() + 64;
        if self.bytes + size > GROUP_BYTES {
            self.pieces.clear();
            self.bytes = 0;
        }
        self.bytes += size;
        self.pieces.insert(first, boxes.clone());
        boxes
    }
}

/// The boxes of the groups of `bytes`, whole `{x: f64, y: f64}` elements (see
/// [`GroupBox`]).
pub fn group_boxes(bytes: &[u8], fill16: Option<u128>) -> Vec<GroupBox> {
    bytes.chunks(GROUP_ROWS * 16).map(|g| group_box(g, fill16)).collect()
}

/// One group's box. The bounds are taken over every row at first, which a NaN coordinate
/// does not move (see [`bounds`]); a group with a NaN coordinate, or whose box holds the fill
/// value's point (it may hold a null row), is boxed again row by row, which is rare.
fn group_box(g: &[u8], fill16: Option<u128>) -> GroupBox {
    let n = (g.len() / 16) as u32;
    let ([xmin, ymin], [xmax, ymax], nan) = bounds(g);
    let coord = |b: &[u8]| f64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
    let fill_inside = fill16.is_some_and(|f| {
        let f = f.to_le_bytes();
        let (fx, fy) = (coord(&f[..8]), coord(&f[8..]));
        // A fill value with a NaN coordinate is never within the bounds: looked for row
        // by row.
        fx.is_nan() || fy.is_nan() || (xmin <= fx && fx <= xmax && ymin <= fy && fy <= ymax)
    });
    if !nan && !fill_inside {
        return GroupBox { xmin, ymin, xmax, ymax, nonnull: n, clean: true };
    }
    let mut b = GroupBox { xmin: f64::INFINITY, ymin: f64::INFINITY, xmax: f64::NEG_INFINITY, ymax: f64::NEG_INFINITY, nonnull: 0, clean: true };
    for el in g.chunks_exact(16) {
        if fill16.is_some_and(|f| u128::from_le_bytes(el.try_into().unwrap_or([0; 16])) == f) {
            b.clean = false;
            continue;
        }
        b.nonnull += 1;
        let (x, y) = (coord(&el[..8]), coord(&el[8..]));
        if x.is_nan() || y.is_nan() {
            b.clean = false;
            continue;
        }
        b.xmin = b.xmin.min(x);
        b.xmax = b.xmax.max(x);
        b.ymin = b.ymin.min(y);
        b.ymax = b.ymax.max(y);
    }
    b
}

/// The least and greatest x and y of the `{x: f64, y: f64}` elements `g`, ignoring NaN
/// coordinates (`+∞`/`−∞` when every one is NaN), and whether there was a NaN.
fn bounds(g: &[u8]) -> ([f64; 2], [f64; 2], bool) {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: SSE2 is part of every x86-64 processor (the target's baseline), so the
        // feature `bounds_sse2` enables is always present; its body is safe code.
        #[allow(unsafe_code)]
        unsafe {
            bounds_sse2(g)
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let coord = |b: &[u8]| f64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
        let (mut lo, mut hi, mut nan) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2], false);
        for el in g.chunks_exact(16) {
            for (k, c) in [coord(&el[..8]), coord(&el[8..])].into_iter().enumerate() {
                // A NaN fails both comparisons and leaves the bounds alone.
                lo[k] = if c < lo[k] { c } else { lo[k] };
                hi[k] = if c > hi[k] { c } else { hi[k] };
                nan |= c.is_nan();
            }
        }
        (lo, hi, nan)
    }
}

/// [`bounds`] with SSE2: an element's `(x, y)` is one register, taken into the running
/// minimum and maximum of both at once (`minpd`/`maxpd` keep their second operand, the
/// running bound, when the element's coordinate is NaN); two elements an iteration. About
/// 3 instructions a row, where the loop the compiler made of the scalar code took 21.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn bounds_sse2(g: &[u8]) -> ([f64; 2], [f64; 2], bool) {
    use std::arch::x86_64::{_mm_cmpunord_pd, _mm_cvtsd_f64, _mm_max_pd, _mm_min_pd, _mm_movemask_pd, _mm_or_pd, _mm_set1_pd, _mm_set_pd, _mm_setzero_pd, _mm_unpackhi_pd};
    let coord = |b: &[u8]| f64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
    let (mut lo0, mut hi0) = (_mm_set1_pd(f64::INFINITY), _mm_set1_pd(f64::NEG_INFINITY));
    let (mut lo1, mut hi1, mut nan) = (lo0, hi0, _mm_setzero_pd());
    let pairs = g.chunks_exact(32);
    let rest = pairs.remainder();
    for p in pairs {
        let a = _mm_set_pd(coord(&p[8..16]), coord(&p[..8]));
        let b = _mm_set_pd(coord(&p[24..32]), coord(&p[16..24]));
        lo0 = _mm_min_pd(a, lo0);
        hi0 = _mm_max_pd(a, hi0);
        lo1 = _mm_min_pd(b, lo1);
        hi1 = _mm_max_pd(b, hi1);
        nan = _mm_or_pd(nan, _mm_or_pd(_mm_cmpunord_pd(a, a), _mm_cmpunord_pd(b, b)));
    }
    for el in rest.chunks_exact(16) {
        let a = _mm_set_pd(coord(&el[8..16]), coord(&el[..8]));
        lo0 = _mm_min_pd(a, lo0);
        hi0 = _mm_max_pd(a, hi0);
        nan = _mm_or_pd(nan, _mm_cmpunord_pd(a, a));
    }
    let lanes = |v| [_mm_cvtsd_f64(v), _mm_cvtsd_f64(_mm_unpackhi_pd(v, v))];
    (lanes(_mm_min_pd(lo0, lo1)), lanes(_mm_max_pd(hi0, hi1)), _mm_movemask_pd(nan) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn el(x: f64, y: f64) -> [u8; 16] {
        let mut e = [0u8; 16];
        e[..8].copy_from_slice(&x.to_le_bytes());
        e[8..].copy_from_slice(&y.to_le_bytes());
        e
    }

    /// Each group's box against the points one by one: every point in a window is in a
    /// group that is not `Outside`, every row of an `Inside` group is a point in the window,
    /// and the non-null counts are the groups' own, over nulls, NaN, empty points, signed
    /// zeros and points on every edge, for closed and open windows.
    #[test]
    fn group_tests_agree_with_the_points() {
        let fill = el(9.969209968386869e36, 9.969209968386869e36);
        let fill16 = Some(u128::from_le_bytes(fill));
        let vals = [-2.0, -1.0, -0.0, 0.0, 0.5, 1.0, 2.0, f64::NAN];
        let mut rng = crate::test_rng::SplitMix64::new(7);
        let mut below = |n: u64| rng.next_u64() % n;
        let mut checked = 0;
        for round in 0..400 {
            let n = 1 + below(3 * GROUP_ROWS as u64) as usize;
            let spread = round % 4;
            let mut bytes = Vec::new();
            for _ in 0..n {
                let e = match below(40) {
                    0 if spread > 0 => fill,
                    1 if spread > 1 => el(f64::NAN, f64::NAN),
                    _ => el(vals[below(7 + u64::from(spread == 3)) as usize], vals[below(7) as usize]),
                };
                bytes.extend_from_slice(&e);
            }
            let boxes = group_boxes(&bytes, fill16);
            assert_eq!(boxes.len(), n.div_ceil(GROUP_ROWS));
            for w in [BBox::xy(-1.0, -1.0, 1.0, 1.0), BBox::xy(0.0, 0.0, 0.5, 2.0), BBox::xy(-2.0, -2.0, 2.0, 2.0), BBox::xy(-0.0, 0.5, 0.0, 0.5)] {
                for strict in [false, true] {
                    for (g, b) in boxes.iter().enumerate() {
                        let pts: Vec<&[u8]> = bytes[g * GROUP_ROWS * 16..].chunks_exact(16).take(GROUP_ROWS).collect();
                        let null = |e: &[u8]| e == fill.as_slice();
                        assert_eq!(b.nonnull as usize, pts.iter().filter(|e| !null(e)).count());
                        let inside = |e: &[u8]| {
                            let (x, y) = (f64::from_le_bytes(e[..8].try_into().unwrap()), f64::from_le_bytes(e[8..].try_into().unwrap()));
                            if strict {
                                x > w.xmin && x < w.xmax && y > w.ymin && y < w.ymax
                            } else {
                                x >= w.xmin && x <= w.xmax && y >= w.ymin && y <= w.ymax
                            }
                        };
                        let hits = pts.iter().filter(|e| !null(e) && inside(e)).count();
                        match b.test(&w, strict) {
                            GroupTest::Outside => assert_eq!(hits, 0, "group {g} of round {round}"),
                            GroupTest::Inside => assert_eq!(hits, pts.len(), "group {g} of round {round}"),
                            GroupTest::Across => {}
                        }
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 5_000);
    }

    /// The boxes are kept by chunk, and dropped, not grown, past [`GROUP_BYTES`].
    #[test]
    fn boxes_are_kept_within_their_budget() {
        let bytes: Vec<u8> = (0..2048).flat_map(|i| el(i as f64, -(i as f64))).collect();
        let mut p = PointGroups::default();
        let a = p.of_piece(0, &bytes, None);
        assert_eq!(a.len(), 32);
        assert_eq!((a[1].xmin, a[1].xmax, a[1].ymin, a[1].ymax), (64.0, 127.0, -127.0, -64.0));
        assert!(Arc::ptr_eq(&a, &p.of_piece(0, &[], None)));
        for k in 1..10_000u64 {
            p.of_piece(k * 2048, &bytes, None);
            assert!(p.bytes <= GROUP_BYTES);
        }
    }
}
