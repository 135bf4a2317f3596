//! Datasets: creation, extent, hyperslab reads and writes of rank-1 and rank-2 data.
#![allow(unsafe_code)]

use std::os::raw::{c_char, c_uint, c_void};
use std::ptr;

use hdf5::globals as g;
use hdf5_sys::h5::hsize_t;
use hdf5_sys::h5d::H5D_fill_value_t;
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5p::H5P_DEFAULT;
use hdf5_sys::h5s::{H5S_seloper_t, H5S_ALL, H5S_UNLIMITED};
use hdf5_sys::{h5d, h5o, h5p, h5s, h5t};

use crate::error::{MarquetError, Result};

use super::*;

/// How to create a dataset.
#[derive(Debug, Clone)]
pub struct DatasetSpec {
    /// Element datatype (written little-endian).
    pub dtype: Dtype,
    /// Initial extent.
    pub len: u64,
    /// Chunk length in elements; `None` = contiguous (fixed size).
    pub chunk: Option<u64>,
    /// Filter pipeline, applied in order (chunked datasets only).
    pub filters: Vec<Filter>,
    /// User-defined fill value bytes (little-endian, `dtype` layout); `None` = none declared.
    pub fill: Option<Vec<u8>>,
}

/// Add `filters` to a dataset creation property list, in pipeline order. Call inside
/// `locked`.
pub(super) unsafe fn set_filters(dcpl: hid_t, filters: &[Filter], name: &str) -> Result<()> {
    for f in filters {
        match f {
            Filter::Shuffle => check(h5p::H5Pset_shuffle(dcpl), name, "H5Pset_shuffle")?,
            Filter::Deflate(l) => check(h5p::H5Pset_deflate(dcpl, *l), name, "H5Pset_deflate")?,
            Filter::Zstd(l) => check(
                h5p::H5Pset_filter(dcpl, codec::FILTER_ZSTD, hdf5_sys::h5z::H5Z_FLAG_OPTIONAL, 1, l),
                name,
                "H5Pset_filter",
            )?,
            Filter::Fletcher32 => check(h5p::H5Pset_fletcher32(dcpl), name, "H5Pset_fletcher32")?,
            Filter::Other(id, cd) => check(h5p::H5Pset_filter(dcpl, *id, 0, cd.len(), cd.as_ptr()), name, "H5Pset_filter")?,
        };
    }
    Ok(())
}

/// Create a rank-1 dataset `name` in group `loc`. Chunked datasets are unlimited.
pub fn dataset_create(loc: hid_t, name: &str, spec: &DatasetSpec) -> Result<Hid> {
    if spec.filters.iter().any(|f| matches!(f, Filter::Zstd(_) | Filter::Other(codec::FILTER_ZSTD, _))) {
        register_filters()?;
    }
    let t = spec.dtype.to_hid()?;
    let max = if spec.chunk.is_some() { H5S_UNLIMITED } else { spec.len };
    let s = Space::Simple(vec![spec.len]).to_hid(Some(&[max]))?;
    let n = cstr(name)?;
    locked(|| unsafe {
        let dcpl = Hid::new(h5p::H5Pcreate(*g::H5P_DATASET_CREATE), name, "H5Pcreate")?;
        if let Some(c) = spec.chunk {
            let c: hsize_t = c.max(1);
            check(h5p::H5Pset_chunk(dcpl.0, 1, &c), name, "H5Pset_chunk")?;
            set_filters(dcpl.0, &spec.filters, name)?;
        }
        if let Some(fill) = &spec.fill {
            if fill.len() != spec.dtype.size() {
                return Err(MarquetError::InvalidArgument(format!("{name}: fill value size mismatch")));
            }
            check(h5p::H5Pset_fill_value(dcpl.0, t.0, fill.as_ptr() as *const c_void), name, "H5Pset_fill_value")?;
        }
        // Never write times into objects: reproducible files and golden DDL.
        check(h5p::H5Pset_obj_track_times(dcpl.0, 0), name, "H5Pset_obj_track_times")?;
        Hid::new(h5d::H5Dcreate2(loc, n.as_ptr(), t.0, s.0, H5P_DEFAULT, dcpl.0, H5P_DEFAULT), name, "H5Dcreate2")
    })
}

/// Open dataset `name` (relative to `loc`).
pub fn dataset_open(loc: hid_t, name: &str) -> Result<Hid> {
    let n = cstr(name)?;
    locked(|| unsafe { Hid::new(h5d::H5Dopen2(loc, n.as_ptr(), H5P_DEFAULT), name, "H5Dopen2") })
}

/// Open any object (group or dataset) by path relative to `loc`.
pub fn object_open(loc: hid_t, name: &str) -> Result<Hid> {
    let n = cstr(name)?;
    locked(|| unsafe { Hid::new(h5o::H5Oopen(loc, n.as_ptr(), H5P_DEFAULT), name, "H5Oopen") })
}

/// Facts about a rank-1 (or other) dataset.
#[derive(Debug, Clone)]
pub struct DatasetInfo {
    /// The datatype as stored in the file.
    pub dtype: Dtype,
    /// Current extent per dimension (for a column: its length, at least `NROWS`).
    pub dims: Vec<u64>,
    /// Maximum extent per dimension; `u64::MAX` for `H5S_UNLIMITED`.
    pub maxdims: Vec<u64>,
    /// Chunk shape, `None` for a contiguous or compact dataset.
    pub chunk: Option<Vec<u64>>,
    /// `Some(bytes)` when a user-defined fill value is declared (little-endian layout).
    pub fill: Option<Vec<u8>>,
    /// The filter pipeline as declared, in order.
    pub filters: Vec<Filter>,
    /// True when the datatype is a committed (named) datatype.
    pub committed_type: bool,
}

impl DatasetInfo {
    /// Whether the dataset is chunked in a single chunk that holds its whole extent.
    pub fn one_chunk(&self) -> bool {
        self.chunk.as_ref().is_some_and(|c| c.len() == self.dims.len() && c.iter().zip(&self.dims).all(|(c, d)| d <= c))
    }
}

/// Describe a dataset.
pub fn dataset_info(ds: hid_t, path: &str) -> Result<DatasetInfo> {
    locked(|| unsafe {
        let t = Hid::new(h5d::H5Dget_type(ds), path, "H5Dget_type")?;
        let dtype = Dtype::from_hid(t.0)?;
        let committed_type = h5t::H5Tcommitted(t.0) > 0;
        let s = Hid::new(h5d::H5Dget_space(ds), path, "H5Dget_space")?;
        let nd = check(h5s::H5Sget_simple_extent_ndims(s.0), path, "H5Sget_simple_extent_ndims")?;
        let mut dims = vec![0 as hsize_t; nd as usize];
        let mut maxdims = vec![0 as hsize_t; nd as usize];
        check(h5s::H5Sget_simple_extent_dims(s.0, dims.as_mut_ptr(), maxdims.as_mut_ptr()), path, "dims")?;
        let dcpl = Hid::new(h5d::H5Dget_create_plist(ds), path, "H5Dget_create_plist")?;
        let chunk = if h5p::H5Pget_layout(dcpl.0) == hdf5_sys::h5d::H5D_layout_t::H5D_CHUNKED {
            let mut c = vec![0 as hsize_t; nd.max(1) as usize];
            check(h5p::H5Pget_chunk(dcpl.0, nd.max(1), c.as_mut_ptr()), path, "H5Pget_chunk")?;
            Some(c)
        } else {
            None
        };
        let mut st = H5D_fill_value_t::H5D_FILL_VALUE_ERROR;
        check(h5p::H5Pfill_value_defined(dcpl.0, &mut st), path, "H5Pfill_value_defined")?;
        let fill = if st == H5D_fill_value_t::H5D_FILL_VALUE_USER_DEFINED {
            match &dtype {
                // The fill's bytes (a NULL pointer reads as "", as h5py and netCDF-C read it).
                Dtype::VarString { utf8 } => Some(vlen_fill(dcpl.0, *utf8, path)?),
                Dtype::StdRef | Dtype::ObjRef | Dtype::Other { .. } => Some(Vec::new()),
                _ => {
                    let mem = dtype.mem_for_read();
                    let mt = mem.to_hid()?;
                    let mut buf = vec![0u8; mem.size()];
                    check(h5p::H5Pget_fill_value(dcpl.0, mt.0, buf.as_mut_ptr() as *mut c_void), path, "H5Pget_fill_value")?;
                    Some(buf)
                }
            }
        } else {
            None
        };
        let nf = check(h5p::H5Pget_nfilters(dcpl.0), path, "H5Pget_nfilters")?;
        let mut filters = Vec::new();
        for i in 0..nf as c_uint {
            let mut flags: c_uint = 0;
            let mut nelmts: usize = 8;
            let mut cd = [0 as c_uint; 8];
            let mut name = [0 as c_char; 64];
            let mut fcfg: c_uint = 0;
            let id = h5p::H5Pget_filter2(dcpl.0, i, &mut flags, &mut nelmts, cd.as_mut_ptr(), 64, name.as_mut_ptr(), &mut fcfg);
            filters.push(match id {
                2 => Filter::Shuffle,
                1 => Filter::Deflate(cd[0]),
                3 => Filter::Fletcher32,
                codec::FILTER_ZSTD if nelmts == 1 => Filter::Zstd(cd[0]),
                other => Filter::Other(other, cd[..nelmts.min(8)].to_vec()),
            });
        }
        Ok(DatasetInfo { dtype, dims, maxdims, chunk, fill, filters, committed_type })
    })
}

/// Set the extent of a rank-1 dataset.
pub fn dataset_set_len(ds: hid_t, len: u64, path: &str) -> Result<()> {
    wrote(locked(|| unsafe { check(h5d::H5Dset_extent(ds, &len), path, "H5Dset_extent") })).map(|_| ())
}

pub(super) fn select_1d(ds: hid_t, start: u64, count: u64, path: &str) -> Result<(Hid, Hid)> {
    locked(|| unsafe {
        let fs = Hid::new(h5d::H5Dget_space(ds), path, "H5Dget_space")?;
        if count > 0 {
            check(
                h5s::H5Sselect_hyperslab(fs.0, H5S_seloper_t::H5S_SELECT_SET, &start, ptr::null(), &count, ptr::null()),
                path,
                "H5Sselect_hyperslab",
            )?;
        } else {
            check(h5s::H5Sselect_none(fs.0), path, "H5Sselect_none")?;
        }
        let ms = Hid::new(h5s::H5Screate_simple(1, &count, ptr::null()), path, "H5Screate_simple")?;
        Ok((fs, ms))
    })
}

/// Read `count` elements from `start` of a rank-1 dataset, converted to `mem` (which must
/// be convertible from the file type; usually `info.dtype.to_le()`).
pub fn dataset_read(ds: hid_t, start: u64, count: u64, mem: &Dtype, path: &str) -> Result<Vec<u8>> {
    // Bounded work on hostile files (issue #19, docs/FAULTS.md F4): the count comes from a
    // file value (NROWS, an offset, num_items); nothing is allocated for elements the
    // dataset does not hold.
    check_within_extent(ds, start, count, path)?;
    let bytes = (mem.size() as u64)
        .checked_mul(count)
        .ok_or_else(|| MarquetError::InvalidArgument(format!("{path}: read of {count} elements overflows")))?;
    let mut buf = vec![0u8; bytes as usize];
    if count == 0 {
        return Ok(buf);
    }
    dataset_read_into(ds, start, count, mem, path, &mut buf)?;
    Ok(buf)
}

/// Refuse a read of elements `[start, start + count)` of a rank-1 dataset past its extent,
/// before anything is allocated for it.
fn check_within_extent(ds: hid_t, start: u64, count: u64, path: &str) -> Result<()> {
    if count == 0 {
        return Ok(());
    }
    let ext = locked(|| unsafe {
        let s = Hid::new(h5d::H5Dget_space(ds), path, "H5Dget_space")?;
        let nd = check(h5s::H5Sget_simple_extent_ndims(s.0), path, "H5Sget_simple_extent_ndims")?;
        if nd != 1 {
            return Ok::<Option<u64>, MarquetError>(None);
        }
        let mut dims = [0 as hsize_t; 1];
        check(h5s::H5Sget_simple_extent_dims(s.0, dims.as_mut_ptr(), std::ptr::null_mut()), path, "dims")?;
        Ok(Some(dims[0]))
    })?;
    match (ext, start.checked_add(count)) {
        (Some(e), Some(end)) if end <= e => Ok(()),
        (None, Some(_)) => Ok(()),
        (e, _) => Err(MarquetError::spec(
            path,
            "HEP001 §13 req 2",
            format!("read of elements {start}..{} past the dataset's extent {}", start.saturating_add(count), e.unwrap_or(0)),
        )),
    }
}

/// Like [`dataset_read`], into a caller buffer of exactly the right size. Reads of at
/// least a chunk from datasets whose filters [`codec`] implements decompress their chunks
/// in parallel (see [`direct`]); anything else goes through HDF5's pipeline.
pub fn dataset_read_into(ds: hid_t, start: u64, count: u64, mem: &Dtype, path: &str, buf: &mut [u8]) -> Result<()> {
    if buf.len() as u64 != mem.size() as u64 * count {
        return Err(MarquetError::InvalidArgument(format!("{path}: buffer size mismatch")));
    }
    if count == 0 {
        return Ok(());
    }
    check_within_extent(ds, start, count, path)?;
    if direct::read(ds, start, count, mem, path, buf)? {
        return Ok(());
    }
    dataset_read_pipeline(ds, start, count, mem, path, buf)
}

/// [`dataset_read_into`] through HDF5's filter pipeline only.
pub fn dataset_read_pipeline(ds: hid_t, start: u64, count: u64, mem: &Dtype, path: &str, buf: &mut [u8]) -> Result<()> {
    if buf.len() as u64 != mem.size() as u64 * count {
        return Err(MarquetError::InvalidArgument(format!("{path}: buffer size mismatch")));
    }
    if count == 0 {
        return Ok(());
    }
    let (fs, ms) = select_1d(ds, start, count, path)?;
    let mt = mem.to_hid()?;
    locked(|| unsafe {
        check(h5d::H5Dread(ds, mt.0, ms.0, fs.0, H5P_DEFAULT, buf.as_mut_ptr() as *mut c_void), path, "H5Dread")
    })?;
    Ok(())
}

/// The user-defined fill value of a variable-length string dataset, as bytes (a NULL
/// pointer is ""). Call inside `locked`.
unsafe fn vlen_fill(dcpl: hid_t, utf8: bool, path: &str) -> Result<Vec<u8>> {
    let mt = Dtype::VarString { utf8 }.to_hid()?;
    let mut p: *mut c_char = ptr::null_mut();
    check(h5p::H5Pget_fill_value(dcpl, mt.0, &mut p as *mut *mut c_char as *mut c_void), path, "H5Pget_fill_value")?;
    let out = if p.is_null() { Vec::new() } else { std::ffi::CStr::from_ptr(p).to_bytes().to_vec() };
    if !p.is_null() {
        let sp = Hid::new(h5s::H5Screate(h5s::H5S_class_t::H5S_SCALAR), path, "H5Screate")?;
        h5t::H5Treclaim(mt.0, sp.0, H5P_DEFAULT, &mut p as *mut *mut c_char as *mut c_void);
    }
    Ok(out)
}

/// Read elements `[start, start + count)` of a rank-1 variable-length string dataset: the
/// bytes of each (HDF5 strings end at their first NUL; a NULL pointer reads as empty, as
/// h5py and netCDF-C read it).
pub fn dataset_read_vlen_strings(ds: hid_t, start: u64, count: u64, utf8: bool, path: &str) -> Result<Vec<Vec<u8>>> {
    check_within_extent(ds, start, count, path)?;
    if count == 0 {
        return Ok(Vec::new());
    }
    let (fs, ms) = select_1d(ds, start, count, path)?;
    let mt = Dtype::VarString { utf8 }.to_hid()?;
    locked(|| unsafe {
        let mut ptrs: Vec<*mut c_char> = vec![ptr::null_mut(); count as usize];
        check(h5d::H5Dread(ds, mt.0, ms.0, fs.0, H5P_DEFAULT, ptrs.as_mut_ptr() as *mut c_void), path, "H5Dread")?;
        let out = ptrs
            .iter()
            .map(|p| if p.is_null() { Vec::new() } else { std::ffi::CStr::from_ptr(*p).to_bytes().to_vec() })
            .collect();
        h5t::H5Treclaim(mt.0, ms.0, H5P_DEFAULT, ptrs.as_mut_ptr() as *mut c_void);
        Ok(out)
    })
}

/// Write variable-length strings at `start` of a rank-1 variable-length string dataset.
/// A value holding NUL is refused (an HDF5 string ends at its first NUL), naming its
/// position.
pub fn dataset_write_vlen_strings(ds: hid_t, start: u64, values: &[&[u8]], utf8: bool, path: &str) -> Result<()> {
    if values.is_empty() {
        return Ok(());
    }
    let mut owned = Vec::with_capacity(values.len());
    for (i, v) in values.iter().enumerate() {
        owned.push(std::ffi::CString::new(*v).map_err(|_| {
            MarquetError::InvalidArgument(format!(
                "{path}: element {} holds a NUL byte, which an HDF5 variable-length string cannot hold",
                start + i as u64
            ))
        })?);
    }
    let ptrs: Vec<*const c_char> = owned.iter().map(|c| c.as_ptr()).collect();
    let (fs, ms) = select_1d(ds, start, values.len() as u64, path)?;
    let mt = Dtype::VarString { utf8 }.to_hid()?;
    let r = locked(|| unsafe {
        check(h5d::H5Dwrite(ds, mt.0, ms.0, fs.0, H5P_DEFAULT, ptrs.as_ptr() as *const c_void), path, "H5Dwrite")
    });
    wrote(r).map(|_| ())
}

/// Write elements (layout of `mem`) at `start` of a rank-1 dataset. The whole chunks of a
/// write to a dataset whose filters [`codec`] implements are compressed in parallel and
/// stored with direct chunk I/O (the same bytes HDF5's pipeline would store, see
/// [`direct`]); partial chunks and other datasets go through HDF5's pipeline.
pub fn dataset_write(ds: hid_t, start: u64, mem: &Dtype, data: &[u8], path: &str) -> Result<()> {
    let es = mem.size();
    if es == 0 || !data.len().is_multiple_of(es) {
        return Err(MarquetError::InvalidArgument(format!("{path}: data is not a whole number of elements")));
    }
    if data.is_empty() {
        return Ok(());
    }
    // Parallel files: no direct chunk writes (a chunk allocation is a metadata change that
    // every rank must make alike); collective writes through the pipeline (docs/PARALLEL.md).
    #[cfg(feature = "mpio")]
    if super::mpio::parallel_rank(ds).is_some() {
        return dataset_write_pipeline(ds, start, mem, data, path);
    }
    direct::write(ds, start, mem, data, path)
}

/// [`dataset_write`] through HDF5's filter pipeline only.
pub fn dataset_write_pipeline(ds: hid_t, start: u64, mem: &Dtype, data: &[u8], path: &str) -> Result<()> {
    let es = mem.size();
    if es == 0 || !data.len().is_multiple_of(es) {
        return Err(MarquetError::InvalidArgument(format!("{path}: data is not a whole number of elements")));
    }
    let count = (data.len() / es) as u64;
    if count == 0 {
        return Ok(());
    }
    let (fs, ms) = select_1d(ds, start, count, path)?;
    let mt = mem.to_hid()?;
    #[cfg(feature = "mpio")]
    let xfer = super::mpio::replicated_xfer(ds, &fs, &ms, path)?;
    #[cfg(feature = "mpio")]
    let dxpl = xfer.as_ref().map_or(H5P_DEFAULT, |x| x.id());
    #[cfg(not(feature = "mpio"))]
    let dxpl = H5P_DEFAULT;
    let r = locked(|| unsafe {
        check(h5d::H5Dwrite(ds, mt.0, ms.0, fs.0, dxpl, data.as_ptr() as *const c_void), path, "H5Dwrite")
    });
    wrote(r).map(|_| ())
}

/// Read a whole dataset of any rank into bytes of `mem` layout.
pub fn dataset_read_all(ds: hid_t, mem: &Dtype, path: &str, npoints: u64) -> Result<Vec<u8>> {
    let mut buf = vec![0u8; mem.size() * npoints as usize];
    if npoints == 0 {
        return Ok(buf);
    }
    let mt = mem.to_hid()?;
    locked(|| unsafe {
        check(h5d::H5Dread(ds, mt.0, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.as_mut_ptr() as *mut c_void), path, "H5Dread")
    })?;
    Ok(buf)
}

// ------------------------------------------------------------------ rank-2 datasets
// HEP001's BITMAP (K, ceil(NROWS/8)) and CHUNK_BLOOM (n_chunks, m_bytes) indexes are the
// only rank-2 datasets the crate writes: whole rows of a 2-D array, read and written as
// row blocks.

/// Create a chunked rank-2 dataset with both dimensions unlimited (so that an index can
/// be rebuilt in place at any new shape, HEP001 §11.3).
pub fn dataset_create_2d(loc: hid_t, name: &str, dtype: &Dtype, dims: [u64; 2], chunk: [u64; 2], filters: &[Filter]) -> Result<Hid> {
    if filters.iter().any(|f| matches!(f, Filter::Zstd(_) | Filter::Other(codec::FILTER_ZSTD, _))) {
        register_filters()?;
    }
    let t = dtype.to_hid()?;
    let s = Space::Simple(dims.to_vec()).to_hid(Some(&[H5S_UNLIMITED, H5S_UNLIMITED]))?;
    let n = cstr(name)?;
    locked(|| unsafe {
        let dcpl = Hid::new(h5p::H5Pcreate(*g::H5P_DATASET_CREATE), name, "H5Pcreate")?;
        let c: [hsize_t; 2] = [chunk[0].max(1), chunk[1].max(1)];
        check(h5p::H5Pset_chunk(dcpl.0, 2, c.as_ptr()), name, "H5Pset_chunk")?;
        set_filters(dcpl.0, filters, name)?;
        check(h5p::H5Pset_obj_track_times(dcpl.0, 0), name, "H5Pset_obj_track_times")?;
        Hid::new(h5d::H5Dcreate2(loc, n.as_ptr(), t.0, s.0, H5P_DEFAULT, dcpl.0, H5P_DEFAULT), name, "H5Dcreate2")
    })
}

/// Set the extent of a rank-2 dataset.
pub fn dataset_set_extent_2d(ds: hid_t, dims: [u64; 2], path: &str) -> Result<()> {
    wrote(locked(|| unsafe { check(h5d::H5Dset_extent(ds, dims.as_ptr()), path, "H5Dset_extent") })).map(|_| ())
}

fn select_rows_2d(ds: hid_t, row0: u64, nrows: u64, ncols: u64, path: &str) -> Result<(Hid, Hid)> {
    locked(|| unsafe {
        let fs = Hid::new(h5d::H5Dget_space(ds), path, "H5Dget_space")?;
        let start: [hsize_t; 2] = [row0, 0];
        let count: [hsize_t; 2] = [nrows, ncols];
        check(
            h5s::H5Sselect_hyperslab(fs.0, H5S_seloper_t::H5S_SELECT_SET, start.as_ptr(), ptr::null(), count.as_ptr(), ptr::null()),
            path,
            "H5Sselect_hyperslab",
        )?;
        let ms = Hid::new(h5s::H5Screate_simple(2, count.as_ptr(), ptr::null()), path, "H5Screate_simple")?;
        Ok((fs, ms))
    })
}

/// Read rows `[row0, row0 + nrows)` (all `ncols` columns) of a rank-2 dataset. The caller
/// checks the block against the dataset's extent first (HDF5 refuses it otherwise).
pub fn dataset_read_rows_2d(ds: hid_t, row0: u64, nrows: u64, ncols: u64, mem: &Dtype, path: &str) -> Result<Vec<u8>> {
    let bytes = nrows
        .checked_mul(ncols)
        .and_then(|n| n.checked_mul(mem.size() as u64))
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| MarquetError::InvalidArgument(format!("{path}: read of {nrows}x{ncols} elements overflows")))?;
    let mut buf = vec![0u8; bytes];
    if bytes == 0 {
        return Ok(buf);
    }
    let (fs, ms) = select_rows_2d(ds, row0, nrows, ncols, path)?;
    let mt = mem.to_hid()?;
    locked(|| unsafe {
        check(h5d::H5Dread(ds, mt.0, ms.0, fs.0, H5P_DEFAULT, buf.as_mut_ptr() as *mut c_void), path, "H5Dread")
    })?;
    Ok(buf)
}

/// Write whole rows (each `ncols` elements of `mem`) from row `row0` of a rank-2 dataset.
pub fn dataset_write_rows_2d(ds: hid_t, row0: u64, ncols: u64, mem: &Dtype, data: &[u8], path: &str) -> Result<()> {
    let row_bytes = (ncols as usize).saturating_mul(mem.size());
    if row_bytes == 0 || !data.len().is_multiple_of(row_bytes) {
        return Err(MarquetError::InvalidArgument(format!("{path}: data is not a whole number of rows")));
    }
    let nrows = (data.len() / row_bytes) as u64;
    if nrows == 0 {
        return Ok(());
    }
    let (fs, ms) = select_rows_2d(ds, row0, nrows, ncols, path)?;
    let mt = mem.to_hid()?;
    #[cfg(feature = "mpio")]
    let xfer = super::mpio::replicated_xfer(ds, &fs, &ms, path)?;
    #[cfg(feature = "mpio")]
    let dxpl = xfer.as_ref().map_or(H5P_DEFAULT, |x| x.id());
    #[cfg(not(feature = "mpio"))]
    let dxpl = H5P_DEFAULT;
    let r = locked(|| unsafe {
        check(h5d::H5Dwrite(ds, mt.0, ms.0, fs.0, dxpl, data.as_ptr() as *const c_void), path, "H5Dwrite")
    });
    wrote(r).map(|_| ())
}
