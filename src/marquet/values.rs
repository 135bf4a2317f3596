//! Geometry values in memory: what callers append ([`GeometryValues`], [`GeoBatch`]) and
//! what reads return ([`WkbBuffer`], [`PointArrays`]), and the per-row facts ([`RowInfo`])
//! that BBOX, GEOMETRY_TYPES, covering columns and indexes are derived from.

use std::collections::BTreeMap;
use crate::error::Result;
use crate::h5col::{Array, Batch, ColumnValues};
use crate::spec::{Dimensions, GeometryKind};
use crate::wkb::{self, ByteOrder, WkbInfo};

use super::*;

/// Geometry values for one column in an append.
#[derive(Debug, Clone)]
pub enum GeometryValues {
    /// One WKB value per row (`None` = null).
    Wkb(Vec<Option<Vec<u8>>>),
    /// Point coordinates as separate arrays; `valid[i] == false` = null; NaN x and y = empty.
    Points {
        /// The dimensions of every point (a point column holds one, HEP002 §7.4).
        dims: Dimensions,
        /// x (easting or longitude, HEP002 §8.2), one per row.
        x: Vec<f64>,
        /// y (northing or latitude), one per row.
        y: Vec<f64>,
        /// Z per row, required when `dims` has Z.
        z: Option<Vec<f64>>,
        /// M per row, required when `dims` has M.
        m: Option<Vec<f64>>,
        /// `Some(flags)`, `false` = null row, when some rows are null.
        valid: Option<Vec<bool>>,
    },
}

impl GeometryValues {
    /// From geo-types geometries (XY).
    pub fn from_geo(v: &[Option<geo_types::Geometry<f64>>]) -> GeometryValues {
        GeometryValues::Wkb(
            v.iter()
                .map(|g| g.as_ref().map(|g| wkb::encode(&wkb::Geometry::from(g), ByteOrder::LittleEndian)))
                .collect(),
        )
    }
    /// Number of rows.
    pub fn len(&self) -> usize {
        match self {
            GeometryValues::Wkb(v) => v.len(),
            GeometryValues::Points { x, .. } => x.len(),
        }
    }
    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A batch of rows for a Marquet table: geometry columns plus ordinary H5Col columns.
#[derive(Debug, Clone, Default)]
pub struct GeoBatch {
    /// Values per geometry column name.
    pub geometries: BTreeMap<String, GeometryValues>,
    /// Values of the ordinary columns (HEP001 column datasets and list columns).
    pub columns: Batch,
}

impl GeoBatch {
    /// An empty batch.
    pub fn new() -> GeoBatch {
        GeoBatch::default()
    }
    /// Add the values of geometry column `name`.
    pub fn with_geometry(mut self, name: &str, v: GeometryValues) -> Self {
        self.geometries.insert(name.to_string(), v);
        self
    }
    /// Add the values of ordinary (H5Col) column `name`.
    pub fn with_column(mut self, name: &str, v: ColumnValues) -> Self {
        self.columns.columns.insert(name.to_string(), v);
        self
    }
    /// Add the values of ordinary column `name` without missing rows.
    pub fn with_array(self, name: &str, a: Array) -> Self {
        self.with_column(name, ColumnValues::array(a))
    }
}

/// What one row of a geometry column summarizes to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RowInfo {
    /// A null geometry: excluded from boxes, indexes and GEOMETRY_TYPES (HEP002 §7.5).
    Null,
    /// A geometry (possibly empty, ruling R6) with its type, box and coordinate count.
    Geometry(WkbInfo),
}

/// Read the WKB values of rows in a compact buffer: `bytes[offsets[i]..offsets[i+1]]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WkbBuffer {
    /// The WKB values of the non-null rows, back to back.
    pub bytes: Vec<u8>,
    /// `len() + 1` byte offsets into `bytes`, starting at 0; a null row's slice is empty.
    pub offsets: Vec<u64>,
    /// One flag per row, `false` = null.
    pub valid: Vec<bool>,
}

impl WkbBuffer {
    /// An empty buffer (no rows; `offsets` holds the leading 0).
    pub fn new() -> WkbBuffer {
        WkbBuffer { bytes: Vec::new(), offsets: vec![0], valid: Vec::new() }
    }
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.valid.len()
    }
    /// True when the buffer holds no row.
    pub fn is_empty(&self) -> bool {
        self.valid.is_empty()
    }
    /// The WKB value of row `i` (relative to the buffer), `None` when null. Zero-copy.
    /// Panics when `i >= len()`.
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        if !self.valid[i] {
            return None;
        }
        Some(&self.bytes[self.offsets[i] as usize..self.offsets[i + 1] as usize])
    }
    pub(crate) fn push(&mut self, v: Option<&[u8]>) {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        if let Some(b) = v {
            self.bytes.extend_from_slice(b);
        }
        self.valid.push(v.is_some());
        self.offsets.push(self.bytes.len() as u64);
    }
}

/// Coordinates of a point column's rows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PointArrays {
    /// x per row; NaN for an empty point, the column's fill value for a null row.
    pub x: Vec<f64>,
    /// y per row (as `x`).
    pub y: Vec<f64>,
    /// Z per row when the column has a `z` field.
    pub z: Option<Vec<f64>>,
    /// M per row when the column has an `m` field.
    pub m: Option<Vec<f64>>,
    /// `false` = null row.
    pub valid: Vec<bool>,
}

/// Choose a storage form from data (issue: points of one dimension → point column;
/// otherwise variable-length WKB).
pub fn choose_form(v: &GeometryValues) -> Result<StorageForm> {
    match v {
        GeometryValues::Points { dims, .. } => Ok(StorageForm::Point { dims: *dims, f32: false }),
        GeometryValues::Wkb(vals) => {
            let mut dims: Option<Dimensions> = None;
            let mut all_points = true;
            for (i, w) in vals.iter().enumerate() {
                let Some(w) = w else { continue };
                let info = wkb::scan(w).map_err(|e| e.into_marquet("<input>", Some(i as u64)))?;
                if info.geometry_type.kind != GeometryKind::Point {
                    all_points = false;
                    break;
                }
                match dims {
                    None => dims = Some(info.geometry_type.dims),
                    Some(d) if d != info.geometry_type.dims => {
                        all_points = false;
                        break;
                    }
                    _ => {}
                }
            }
            Ok(match (all_points, dims) {
                (true, Some(d)) => StorageForm::Point { dims: d, f32: false },
                _ => StorageForm::VarWkb,
            })
        }
    }
}
