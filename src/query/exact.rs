//! Layer 4: the exact predicate on decoded geometries (the `geo` crate), and the
//! geometry column read run by run for it.

use geo::{Contains, Intersects, Within};
use crate::error::{MarquetError, Result};
use crate::spatial::geom_box::intersects;
use crate::h5col::list::ListColumn;
use crate::h5col::{Column, ListValues};
use crate::marquet::{GeometryColumnInfo, MarquetTable, StorageForm};
use crate::spec::BBox;

use super::*;

/// The spatial predicate, read as "the row's geometry *predicate* the window".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Predicate {
    /// The geometry and the window share at least one point.
    #[default]
    Intersects,
    /// The geometry lies within the window (OGC `Within`).
    Within,
    /// The geometry contains the window (OGC `Contains`).
    Contains,
    /// The geometry's box intersects the window's box.
    BBoxOnly,
}

impl Predicate {
    /// The exact planar predicate of two `geo` geometries (not `BBoxOnly`, which tests
    /// boxes).
    pub fn evaluate(&self, geometry: &geo::Geometry<f64>, window: &geo::Geometry<f64>) -> bool {
        match self {
            Predicate::Intersects => geometry.intersects(window),
            Predicate::Within => geometry.is_within(window),
            Predicate::Contains => geometry.contains(window),
            Predicate::BBoxOnly => {
                use geo::BoundingRect;
                match (geometry.bounding_rect(), window.bounding_rect()) {
                    (Some(a), Some(b)) => a.intersects(&b),
                    _ => false,
                }
            }
        }
    }
}

/// The exact predicate, kept by box should `geo` panic.
pub(super) fn exact(p: &Predicate, g: &geo::Geometry<f64>, w: &geo::Geometry<f64>, gbox: &BBox, wbox: &BBox, st: &mut QueryStats) -> bool {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| p.evaluate(g, w))) {
        Ok(b) => b,
        Err(_) => {
            st.predicate_fallbacks += 1;
            intersects(gbox, wbox)
        }
    }
}

/// The geometry column, opened once per query and read run by run.
pub(super) enum GeomSource {
    Var { lc: ListColumn, mask: bool, path: String },
    Fixed { col: Column, size: usize },
    /// Byte offsets of the x and y fields, whether they are 32-bit, and the dimensions.
    Point { col: Column, x: usize, y: usize, f32: bool, dims: crate::spec::Dimensions },
}

impl GeomSource {
    pub(super) fn open(t: &MarquetTable, info: &GeometryColumnInfo) -> Result<GeomSource> {
        Ok(match info.form {
            StorageForm::VarWkb => {
                let lc = t.table().list_column(&info.name)?;
                GeomSource::Var { mask: lc.has_mask(), lc, path: info.path.clone() }
            }
            StorageForm::FixedWkb { size } => GeomSource::Fixed { col: t.table().column(&info.name)?, size },
            StorageForm::Point { f32, dims } => {
                let col = t.table().column(&info.name)?;
                let field = |n: &str| match col.dtype() {
                    crate::h5col::Dtype::Compound { fields, .. } => fields.iter().find(|f| f.name == n).map(|f| f.offset),
                    _ => None,
                };
                let (Some(x), Some(y)) = (field("x"), field("y")) else {
                    return Err(MarquetError::spec(&info.path, "HEP002 §7.4", "a point column without x and y fields"));
                };
                GeomSource::Point { col, x, y, f32, dims }
            }
        })
    }

    /// The WKB values of rows `[s, e)` (`None` = null) of a WKB column.
    pub(super) fn read_wkb(&self, s: u64, e: u64, st: &mut QueryStats) -> Result<Vec<Option<Vec<u8>>>> {
        match self {
            GeomSource::Var { lc, mask, path } => {
                let l = lc.read(s, e)?;
                let ListValues::Leaf(a) = &l.values else {
                    return Err(MarquetError::spec(path, "HEP002 §7.2", "VALUES must be a uint8 dataset"));
                };
                st.bytes_read += (e - s + 1) * 8 + if *mask { e - s } else { 0 } + a.bytes.len() as u64;
                (0..l.len())
                    .map(|i| {
                        if l.is_null(i) {
                            return Ok(None);
                        }
                        match l.bytes_of(i) {
                            Some(b) if !b.is_empty() => Ok(Some(b.to_vec())),
                            _ => Err(MarquetError::InvalidWkb {
                                path: path.clone(),
                                row: Some(s + i as u64),
                                message: "empty slice for a non-null row (HEP002 §7.2)".into(),
                            }),
                        }
                    })
                    .collect()
            }
            GeomSource::Fixed { col, size } => {
                let a = col.read(s, e - s)?;
                st.bytes_read += a.bytes.len() as u64;
                let miss = a.missing(col.fill());
                Ok((0..a.len()).map(|i| (!miss[i]).then(|| a.bytes[i * size..(i + 1) * size].to_vec())).collect())
            }
            GeomSource::Point { .. } => Err(MarquetError::InvalidArgument("a point column holds no wkb".into())),
        }
    }
}
