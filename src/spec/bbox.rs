//! Bounding boxes in the sense of HEP002 §6.4: XY always, Z and M optional.

/// A bounding box. An empty box holds +∞ in every minimum and −∞ in every maximum
/// (the GeoArrow convention HEP002 §10.3 adopts), so it intersects nothing.
///
/// `zmin/zmax` and `mmin/mmax` are kept for every box; whether they are *written*
/// depends on the column (ruling R11). A box with `xmin > xmax` (but not empty) is
/// the antimeridian-wrapping form, allowed only for geographic CRS (§6.4).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BBox {
    /// Minimum x (easting or longitude, HEP002 §8.2), in CRS units; +∞ when empty.
    pub xmin: f64,
    /// Minimum y (northing or latitude), in CRS units; +∞ when empty.
    pub ymin: f64,
    /// Minimum Z, ignoring NaN; +∞ when no Z value was added.
    pub zmin: f64,
    /// Minimum M, ignoring NaN; +∞ when no M value was added.
    pub mmin: f64,
    /// Maximum x; less than `xmin` only for an empty box or an antimeridian-wrapping one.
    pub xmax: f64,
    /// Maximum y; −∞ when empty.
    pub ymax: f64,
    /// Maximum Z; −∞ when no Z value was added.
    pub zmax: f64,
    /// Maximum M; −∞ when no M value was added.
    pub mmax: f64,
}

impl Default for BBox {
    fn default() -> Self {
        BBox::EMPTY
    }
}

impl BBox {
    /// The empty box: +∞ minima, −∞ maxima.
    pub const EMPTY: BBox = BBox {
        xmin: f64::INFINITY,
        ymin: f64::INFINITY,
        zmin: f64::INFINITY,
        mmin: f64::INFINITY,
        xmax: f64::NEG_INFINITY,
        ymax: f64::NEG_INFINITY,
        zmax: f64::NEG_INFINITY,
        mmax: f64::NEG_INFINITY,
    };

    /// An XY box (Z and M empty).
    pub fn xy(xmin: f64, ymin: f64, xmax: f64, ymax: f64) -> BBox {
        BBox { xmin, ymin, xmax, ymax, ..BBox::EMPTY }
    }

    /// True when no X/Y coordinate has been added.
    pub fn is_empty(&self) -> bool {
        !(self.xmin <= self.xmax || self.ymin <= self.ymax) || self.ymin > self.ymax
            || (self.xmin == f64::INFINITY && self.xmax == f64::NEG_INFINITY)
    }

    /// True when Z bounds hold at least one value.
    pub fn has_z(&self) -> bool {
        self.zmin <= self.zmax
    }

    /// True when M bounds hold at least one value.
    pub fn has_m(&self) -> bool {
        self.mmin <= self.mmax
    }

    /// Grow to include an XY position; NaN ordinates are ignored (§6.4).
    #[inline]
    pub fn add_xy(&mut self, x: f64, y: f64) {
        if !x.is_nan() {
            self.xmin = self.xmin.min(x);
            self.xmax = self.xmax.max(x);
        }
        if !y.is_nan() {
            self.ymin = self.ymin.min(y);
            self.ymax = self.ymax.max(y);
        }
    }

    /// Grow to include a Z value (NaN ignored).
    #[inline]
    pub fn add_z(&mut self, z: f64) {
        if !z.is_nan() {
            self.zmin = self.zmin.min(z);
            self.zmax = self.zmax.max(z);
        }
    }

    /// Grow to include an M value (NaN ignored).
    #[inline]
    pub fn add_m(&mut self, m: f64) {
        if !m.is_nan() {
            self.mmin = self.mmin.min(m);
            self.mmax = self.mmax.max(m);
        }
    }

    /// Union of two non-wrapping boxes.
    pub fn union(&self, o: &BBox) -> BBox {
        BBox {
            xmin: self.xmin.min(o.xmin),
            ymin: self.ymin.min(o.ymin),
            zmin: self.zmin.min(o.zmin),
            mmin: self.mmin.min(o.mmin),
            xmax: self.xmax.max(o.xmax),
            ymax: self.ymax.max(o.ymax),
            zmax: self.zmax.max(o.zmax),
            mmax: self.mmax.max(o.mmax),
        }
    }

    /// Union of two boxes either of which may wrap the antimeridian (`xmin > xmax`, the
    /// form HEP002 §6.4 allows for a geographic CRS: longitudes `x ≥ xmin` or `x ≤ xmax`).
    /// The result contains every position either box contains: the longitudes both leave
    /// out form the gap of a wrapping result (the larger gap when there are two); without
    /// any gap it spans −180..180. Two non-wrapping boxes give [`BBox::union`]; so does a
    /// non-wrapping box reaching beyond ±180 (then the result spans at least −180..180).
    pub fn union_wrapping(&self, o: &BBox) -> BBox {
        if o.is_empty() {
            return *self;
        }
        if self.is_empty() {
            return *o;
        }
        let (sw, ow) = (self.xmin > self.xmax, o.xmin > o.xmax);
        let mut u = self.union(o);
        if !sw && !ow {
            return u;
        }
        let full = |u: &mut BBox| {
            u.xmin = u.xmin.min(-180.0);
            u.xmax = u.xmax.max(180.0);
        };
        // The longitudes left out by a wrapping box: the open interval (xmax, xmin).
        let (gap, plain) = match (sw, ow) {
            (true, true) => ((self.xmax.max(o.xmax), self.xmin.min(o.xmin)), None),
            (true, false) => ((self.xmax, self.xmin), Some(o)),
            _ => ((o.xmax, o.xmin), Some(self)),
        };
        let gap = match plain {
            None => Some(gap).filter(|g| g.0 < g.1),
            Some(p) => {
                if p.xmin < -180.0 || p.xmax > 180.0 {
                    full(&mut u);
                    return u;
                }
                let left = (gap.0, gap.1.min(p.xmin));
                let right = (gap.0.max(p.xmax), gap.1);
                [left, right].into_iter().filter(|g| g.0 < g.1).max_by(|a, b| (a.1 - a.0).total_cmp(&(b.1 - b.0)))
            }
        };
        match gap {
            Some((a, b)) => {
                u.xmin = b;
                u.xmax = a;
            }
            None => {
                u.xmin = -180.0;
                u.xmax = 180.0;
            }
        }
        u
    }

    /// XY intersection test of two non-wrapping boxes (closed intervals).
    /// An empty box intersects nothing.
    #[inline]
    pub fn intersects_xy(&self, o: &BBox) -> bool {
        self.xmin <= o.xmax && o.xmin <= self.xmax && self.ymin <= o.ymax && o.ymin <= self.ymax
    }

    /// Does this (non-wrapping) box contain `o` in XY?
    pub fn contains_xy(&self, o: &BBox) -> bool {
        self.xmin <= o.xmin && self.ymin <= o.ymin && o.xmax <= self.xmax && o.ymax <= self.ymax
    }

    /// Centre of the XY box.
    pub fn center(&self) -> (f64, f64) {
        ((self.xmin + self.xmax) / 2.0, (self.ymin + self.ymax) / 2.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Does the (possibly wrapping) box contain longitude `x`?
    fn has_lon(b: &BBox, x: f64) -> bool {
        if b.xmin > b.xmax {
            x >= b.xmin || x <= b.xmax
        } else {
            b.xmin <= x && x <= b.xmax
        }
    }

    #[test]
    fn union_keeps_a_wrapping_box_wrapping_and_containing_both() {
        let w = BBox::xy(170.0, -5.0, -170.0, 5.0);
        // The plain union would be xmin 170, xmax 178: everything west of -180 lost.
        assert_eq!(w.union_wrapping(&BBox::xy(175.0, 0.0, 178.0, 1.0)), w);
        assert_eq!(BBox::xy(-175.0, 0.0, -172.0, 1.0).union_wrapping(&w), w);
        let u = w.union_wrapping(&BBox::xy(0.0, 0.0, 10.0, 8.0));
        assert_eq!((u.xmin, u.xmax, u.ymin, u.ymax), (0.0, -170.0, -5.0, 8.0));
        let u = w.union_wrapping(&BBox::xy(-179.0, 0.0, 179.0, 1.0));
        assert_eq!((u.xmin, u.xmax), (-180.0, 180.0));
        let u = w.union_wrapping(&BBox::xy(160.0, 0.0, 165.0, 1.0));
        assert_eq!((u.xmin, u.xmax), (160.0, -170.0));
        // Two wrapping boxes: the common gap.
        let u = w.union_wrapping(&BBox::xy(100.0, 0.0, -100.0, 1.0));
        assert_eq!((u.xmin, u.xmax), (100.0, -100.0));
        let u = w.union_wrapping(&BBox::xy(-150.0, 0.0, -160.0, 1.0));
        assert_eq!((u.xmin, u.xmax), (-150.0, -160.0));
        // Exhaustively: every longitude of either input is in the union.
        let boxes = [w, BBox::xy(-30.0, 0.0, 40.0, 1.0), BBox::xy(120.0, 0.0, -120.0, 1.0), BBox::xy(179.0, 0.0, 180.0, 1.0)];
        for a in &boxes {
            for b in &boxes {
                let u = a.union_wrapping(b);
                for i in -360..=360 {
                    let x = i as f64 / 2.0;
                    if has_lon(a, x) || has_lon(b, x) {
                        assert!(has_lon(&u, x), "{a:?} + {b:?} = {u:?} misses {x}");
                    }
                }
            }
        }
        assert_eq!(BBox::EMPTY.union_wrapping(&w), w);
        assert_eq!(w.union_wrapping(&BBox::EMPTY), w);
    }

    #[test]
    fn empty_box_intersects_nothing() {
        let e = BBox::EMPTY;
        assert!(e.is_empty());
        assert!(!e.intersects_xy(&BBox::xy(-1e300, -1e300, 1e300, 1e300)));
        let mut b = BBox::EMPTY;
        b.add_xy(1.0, 2.0);
        b.add_xy(f64::NAN, 5.0);
        assert_eq!((b.xmin, b.xmax, b.ymin, b.ymax), (1.0, 1.0, 2.0, 5.0));
        assert!(!b.is_empty());
        assert!(!b.has_z());
        b.add_z(3.0);
        assert!(b.has_z());
    }
}
