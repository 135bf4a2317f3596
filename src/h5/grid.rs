//! Fixed-shape datasets of any rank, written and read whole: the arrays (grids) that live
//! beside the tables — a raster's `bands × height × width` pixels (issue #37). HEP001
//! columns are rank 1 (`dataset.rs`); these are the "multidimensional arrays" HEP001 §3
//! asks producers to keep as siblings of table groups.
#![allow(unsafe_code)]

use std::os::raw::c_void;
use std::ptr;

use hdf5::globals as g;
use hdf5_sys::h5::hsize_t;
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5p::H5P_DEFAULT;
use hdf5_sys::h5s::H5S_ALL;
use hdf5_sys::{h5d, h5p, h5s};

use crate::error::{MarquetError, Result};

use super::*;

/// Create a fixed-size dataset `name` in `loc` of shape `dims`, chunked by `chunk` (same
/// rank; `None` = contiguous) with `filters`, and an optional fill value (`dtype`'s
/// little-endian bytes). A dimension of 0 is allowed (no chunking then).
pub fn grid_create(loc: hid_t, name: &str, dtype: &Dtype, dims: &[u64], chunk: Option<&[u64]>, filters: &[Filter], fill: Option<&[u8]>) -> Result<Hid> {
    if dims.is_empty() || dims.len() > 32 {
        return Err(MarquetError::InvalidArgument(format!("{name}: a grid has rank 1..32, not {}", dims.len())));
    }
    if filters.iter().any(|f| matches!(f, Filter::Zstd(_) | Filter::Other(codec::FILTER_ZSTD, _))) {
        register_filters()?;
    }
    let t = dtype.to_hid()?;
    let s = Space::Simple(dims.to_vec()).to_hid(None)?;
    let n = cstr(name)?;
    let chunk = chunk.filter(|c| c.len() == dims.len() && dims.iter().all(|&d| d > 0));
    locked(|| unsafe {
        let dcpl = Hid::new(h5p::H5Pcreate(*g::H5P_DATASET_CREATE), name, "H5Pcreate")?;
        if let Some(c) = chunk {
            let c: Vec<hsize_t> = c.iter().zip(dims).map(|(&c, &d)| c.clamp(1, d)).collect();
            check(h5p::H5Pset_chunk(dcpl.0, c.len() as i32, c.as_ptr()), name, "H5Pset_chunk")?;
            super::dataset::set_filters(dcpl.0, filters, name)?;
        }
        if let Some(fill) = fill {
            if fill.len() != dtype.size() {
                return Err(MarquetError::InvalidArgument(format!("{name}: fill value of {} bytes for a {}-byte type", fill.len(), dtype.size())));
            }
            check(h5p::H5Pset_fill_value(dcpl.0, t.0, fill.as_ptr() as *const c_void), name, "H5Pset_fill_value")?;
        }
        check(h5p::H5Pset_obj_track_times(dcpl.0, 0), name, "H5Pset_obj_track_times")?;
        Hid::new(h5d::H5Dcreate2(loc, n.as_ptr(), t.0, s.0, H5P_DEFAULT, dcpl.0, H5P_DEFAULT), name, "H5Dcreate2")
    })
}

/// Write the whole dataset `ds` from `data` (elements of `mem`, as many as the dataset holds).
pub fn grid_write_all(ds: hid_t, mem: &Dtype, data: &[u8], path: &str) -> Result<()> {
    let info = dataset_info(ds, path)?;
    let n: u64 = info.dims.iter().product();
    if (data.len() as u64) != n.saturating_mul(mem.size() as u64) {
        return Err(MarquetError::InvalidArgument(format!("{path}: {} bytes given for {n} elements of {} bytes", data.len(), mem.size())));
    }
    if n == 0 {
        return Ok(());
    }
    let mt = mem.to_hid()?;
    locked(|| unsafe { check(h5d::H5Dwrite(ds, mt.0, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.as_ptr() as *const c_void), path, "H5Dwrite") })?;
    Ok(())
}

/// Read the block `[start, start + count)` of a dataset of any rank, converted to `mem`.
pub fn grid_read_block(ds: hid_t, start: &[u64], count: &[u64], mem: &Dtype, path: &str) -> Result<Vec<u8>> {
    let info = dataset_info(ds, path)?;
    if start.len() != info.dims.len() || count.len() != info.dims.len() {
        return Err(MarquetError::InvalidArgument(format!("{path}: a block of rank {} in a dataset of rank {}", start.len(), info.dims.len())));
    }
    for k in 0..start.len() {
        if start[k].checked_add(count[k]).is_none_or(|e| e > info.dims[k]) {
            return Err(MarquetError::InvalidArgument(format!("{path}: block {start:?}+{count:?} outside the extent {:?}", info.dims)));
        }
    }
    let n: u64 = count.iter().product();
    let bytes = n.checked_mul(mem.size() as u64).and_then(|b| usize::try_from(b).ok()).ok_or_else(|| MarquetError::InvalidArgument(format!("{path}: block too large")))?;
    let mut buf = vec![0u8; bytes];
    if n == 0 {
        return Ok(buf);
    }
    let mt = mem.to_hid()?;
    locked(|| unsafe {
        let fs = Hid::new(h5d::H5Dget_space(ds), path, "H5Dget_space")?;
        check(
            h5s::H5Sselect_hyperslab(fs.0, h5s::H5S_seloper_t::H5S_SELECT_SET, start.as_ptr(), ptr::null(), count.as_ptr(), ptr::null()),
            path,
            "H5Sselect_hyperslab",
        )?;
        let ms = Hid::new(h5s::H5Screate_simple(count.len() as i32, count.as_ptr(), ptr::null()), path, "H5Screate_simple")?;
        check(h5d::H5Dread(ds, mt.0, ms.0, fs.0, H5P_DEFAULT, buf.as_mut_ptr() as *mut c_void), path, "H5Dread")
    })?;
    Ok(buf)
}
