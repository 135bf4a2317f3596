//! Arrays beside the tables (issue #37): fixed-shape datasets of any rank written and read
//! whole, with their attributes. HEP001 §3 keeps "multidimensional arrays not derived from
//! / exclusively bound to this table's columns" out of table groups: producers put them as
//! siblings, and a column (here a path string) associates each row with its array.

use crate::error::{MarquetError, Result};
use crate::h5;

use super::{Dtype, File, Filter};

/// Largest array [`File::read_grid`] reads whole: 2 GiB (also the most a Parquet BINARY
/// value, a Havasu band, holds).
pub const MAX_GRID_BYTES: u64 = (1 << 31) - 1;

/// A whole array in memory: `dims` (row-major, C order) elements of `dtype`, little-endian.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    /// Element type (integers and floats of 1–8 bytes).
    pub dtype: Dtype,
    /// Shape, slowest dimension first.
    pub dims: Vec<u64>,
    /// `dims.product() * dtype.size()` bytes, row-major.
    pub bytes: Vec<u8>,
}

/// An attribute value of an array.
#[derive(Debug, Clone, PartialEq)]
pub enum GridAttr {
    /// 64-bit floats (a scalar when one value).
    F64(Vec<f64>),
    /// 64-bit signed integers (a scalar when one value).
    I64(Vec<i64>),
    /// One UTF-8 string (scalar).
    Text(String),
    /// UTF-8 strings (1-D).
    Texts(Vec<String>),
    /// One value of `dtype`, its little-endian bytes (e.g. a fill value of the array's type).
    Value(Dtype, Vec<u8>),
}

/// How an array is stored.
#[derive(Debug, Clone, Default)]
pub struct GridSpec {
    /// Chunk shape (same rank); `None` = contiguous.
    pub chunk: Option<Vec<u64>>,
    /// Filter pipeline of chunked arrays.
    pub filters: Vec<Filter>,
    /// The dataset's fill value (little-endian bytes of the element type).
    pub fill: Option<Vec<u8>>,
}

fn space_of(n: usize) -> h5::Space {
    if n == 1 {
        h5::Space::Scalar
    } else {
        h5::Space::Simple(vec![n as u64])
    }
}

impl File {
    /// Create the group `path` and any missing parents (no error when it exists).
    pub fn create_groups(&self, path: &str) -> Result<()> {
        let mut prefix = String::new();
        for part in path.split('/').filter(|s| !s.is_empty()) {
            prefix.push('/');
            prefix.push_str(part);
            if !h5::link_exists(self.inner.id(), &prefix)? {
                h5::group_create(self.inner.id(), &prefix)?;
            }
        }
        Ok(())
    }

    /// Does an object exist at `path`?
    pub fn exists(&self, path: &str) -> Result<bool> {
        h5::path_exists(self.inner.id(), path)
    }

    /// Write the array `grid` as a new dataset at `path` (parent groups are created), with
    /// `attrs` on it.
    pub fn write_grid(&self, path: &str, grid: &Grid, spec: &GridSpec, attrs: &[(&str, GridAttr)]) -> Result<()> {
        let (parent, name) = match path.rsplit_once('/') {
            Some((p, n)) if !n.is_empty() => (if p.is_empty() { "/" } else { p }, n),
            _ => return Err(MarquetError::InvalidArgument(format!("{path}: not an absolute dataset path"))),
        };
        self.create_groups(parent)?;
        let g = h5::object_open(self.inner.id(), parent)?;
        let ds = h5::grid_create(g.id(), name, &grid.dtype, &grid.dims, spec.chunk.as_deref(), &spec.filters, spec.fill.as_deref())?;
        h5::grid_write_all(ds.id(), &grid.dtype.to_le(), &grid.bytes, path)?;
        for (k, v) in attrs {
            match v {
                GridAttr::F64(x) => {
                    let b: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
                    h5::attr_write(ds.id(), k, &Dtype::F64, &space_of(x.len()), &b)?
                }
                GridAttr::I64(x) => {
                    let b: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
                    h5::attr_write(ds.id(), k, &Dtype::I64, &space_of(x.len()), &b)?
                }
                GridAttr::Text(s) => h5::attr_write_utf8(ds.id(), k, s)?,
                GridAttr::Texts(s) => h5::attr_write_utf8_array(ds.id(), k, s)?,
                GridAttr::Value(d, b) => h5::attr_write(ds.id(), k, d, &h5::Space::Scalar, b)?,
            }
        }
        Ok(())
    }

    /// The element type and shape of the array at `path`, without reading it.
    pub fn grid_shape(&self, path: &str) -> Result<(Dtype, Vec<u64>)> {
        let ds = h5::dataset_open(self.inner.id(), path)?;
        let info = h5::dataset_info(ds.id(), path)?;
        Ok((info.dtype.to_le(), info.dims))
    }

    /// Read the array at `path` whole, in its stored element type (little-endian). Arrays
    /// of more than `MAX_GRID_BYTES` are refused before anything is allocated (a hostile
    /// file may declare any shape).
    pub fn read_grid(&self, path: &str) -> Result<Grid> {
        let ds = h5::dataset_open(self.inner.id(), path)?;
        let info = h5::dataset_info(ds.id(), path)?;
        let bytes = info.dims.iter().try_fold(info.dtype.size() as u64, |a, &d| a.checked_mul(d));
        if bytes.is_none_or(|b| b > MAX_GRID_BYTES) {
            return Err(MarquetError::Unsupported(format!("{path}: an array of shape {:?} exceeds the {MAX_GRID_BYTES}-byte limit of whole reads", info.dims)));
        }
        let dtype = match info.dtype {
            Dtype::Int { .. } | Dtype::Float { .. } => info.dtype.to_le(),
            ref d => return Err(MarquetError::Unsupported(format!("{path}: array of {d:?} (numbers only)"))),
        };
        let zero = vec![0u64; info.dims.len()];
        let bytes = h5::grid_read_block(ds.id(), &zero, &info.dims, &dtype, path)?;
        Ok(Grid { dtype, dims: info.dims, bytes })
    }

    /// The fill value declared on the array at `path` (little-endian bytes), if any.
    pub fn grid_fill(&self, path: &str) -> Result<Option<Vec<u8>>> {
        let ds = h5::dataset_open(self.inner.id(), path)?;
        Ok(h5::dataset_info(ds.id(), path)?.fill)
    }

    /// An attribute of the object at `path`: numbers as [`GridAttr::F64`] / [`GridAttr::I64`],
    /// strings as [`GridAttr::Text`] (scalar) or [`GridAttr::Texts`]; `None` when absent.
    pub fn grid_attr(&self, path: &str, name: &str) -> Result<Option<GridAttr>> {
        let o = h5::object_open(self.inner.id(), path)?;
        let Some(a) = h5::attr_read(o.id(), name)? else { return Ok(None) };
        let scalar = a.space == h5::Space::Scalar;
        Ok(Some(match &a.dtype {
            Dtype::Float { size: 8, .. } => GridAttr::F64(a.data.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect()),
            Dtype::Float { size: 4, .. } => GridAttr::F64(a.data.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap_or([0; 4])) as f64).collect()),
            Dtype::Int { size, signed, .. } => GridAttr::I64(a.data.chunks_exact(*size).map(|c| h5::int_from_bytes(c, *signed, false)).collect()),
            d if d.is_string() && scalar => GridAttr::Text(a.strings.first().cloned().unwrap_or_default()),
            d if d.is_string() => GridAttr::Texts(a.strings.clone()),
            d => return Err(MarquetError::Unsupported(format!("{path}: attribute {name} of type {d:?}"))),
        }))
    }
}
