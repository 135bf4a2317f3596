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
    Points { dims: Dimensions, x: Vec<f64>, y: Vec<f64>, z: Option<Vec<f64>>, m: Option<Vec<f64>>, valid: Option<Vec<bool>> },
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
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A batch of rows for a Marquet table: geometry columns plus ordinary H5Col columns.
#[derive(Debug, Clone, Default)]
pub struct GeoBatch {
    pub geometries: BTreeMap<String, GeometryValues>,
    pub columns: Batch,
}

impl GeoBatch {
    pub fn new() -> GeoBatch {
        GeoBatch::default()
    }
    pub fn with_geometry(mut self, name: &str, v: GeometryValues) -> Self {
        self.geometries.insert(name.to_string(), v);
        self
    }
    pub fn with_column(mut self, name: &str, v: ColumnValues) -> Self {
        self.columns.columns.insert(name.to_string(), v);
        self
    }
    pub fn with_array(self, name: &str, a: Array) -> Self {
        self.with_column(name, ColumnValues::array(a))
    }
}

/// What one row of a geometry column summarizes to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RowInfo {
    Null,
    Geometry(WkbInfo),
}

/// Read the WKB values of rows in a compact buffer: `bytes[offsets[i]..offsets[i+1]]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WkbBuffer {
    pub bytes: Vec<u8>,
    pub offsets: Vec<u64>,
    pub valid: Vec<bool>,
}

impl WkbBuffer {
    /// An empty buffer (no rows; `offsets` holds the leading 0).
    pub fn new() -> WkbBuffer {
        WkbBuffer { bytes: Vec::new(), offsets: vec![0], valid: Vec::new() }
    }
    pub fn len(&self) -> usize {
        self.valid.len()
    }
    pub fn is_empty(&self) -> bool {
        self.valid.is_empty()
    }
    /// The WKB value of row `i` (relative to the buffer), `None` when null. Zero-copy.
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
    pub x: Vec<f64>,
    pub y: Vec<f64>,
    pub z: Option<Vec<f64>>,
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
