//! Bounding boxes in the sense of HEP002 §6.4: XY always, Z and M optional.

/// A bounding box. An empty box holds +∞ in every minimum and −∞ in every maximum
/// (the GeoArrow convention HEP002 §10.3 adopts), so it intersects nothing.
///
/// `zmin/zmax` and `mmin/mmax` are kept for every box; whether they are *written*
/// depends on the column (ruling R11). A box with `xmin > xmax` (but not empty) is
/// the antimeridian-wrapping form, allowed only for geographic CRS (§6.4).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BBox {
    pub xmin: f64,
    pub ymin: f64,
    pub zmin: f64,
    pub mmin: f64,
    pub xmax: f64,
    pub ymax: f64,
    pub zmax: f64,
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
