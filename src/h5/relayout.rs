//! Copying objects into a file laid out to be read by byte range (issue #34,
//! `marquet convert --cloud`).
//!
//! A file written by appends interleaves metadata with data: each object header, chunk
//! B-tree node and heap lies wherever the file ended when it was made, so a reader over a
//! network finds each one only after reading the one that points to it, one round trip at
//! a time. [`copy_contiguous`] copies whole groups into a new file in two phases:
//!
//! 1. **metadata**: every group, dataset (its datatype, extent and fill value, with
//!    *contiguous* storage, no filters, allocated late) and attribute — so that, in a file
//!    that allocates only at its end (local ruling L7), every object header, heap and
//!    attribute lies together at the front of the file, after the superblock;
//! 2. **data**: the datasets' elements, in an order the caller chooses (the packed R-trees
//!    first, so that their upper levels follow the metadata, then the block indexes and the
//!    geometry data); each dataset's bytes are allocated at its first write, back to back.
//!
//! Contiguous storage has no chunk index to look up, and its bytes are read as they lie: one
//! R-tree node, one row's offsets, one geometry is exactly its bytes. The price: such a
//! dataset cannot grow (no appends), and its data is not compressed. Object references in
//! attributes are written again to the copies of the objects they point to (by path).
//!
//! The exception is a dataset that every reader reads whole, a block bounding-box index:
//! the caller names it in a [`OneChunk`], and the copy stores it as one chunk compressed
//! with HDF5's built-in shuffle and deflate (every HDF5 reader decodes it without plugins),
//! optionally with other elements than the source's ([`Replacement`]). Its one-node chunk
//! B-tree and its chunk are allocated at its turn in phase 2, next to each other.
#![allow(unsafe_code)]

use std::os::raw::c_void;
use std::ptr;

use hdf5_sys::h5::hsize_t;
use hdf5_sys::h5d::{H5D_alloc_time_t, H5D_fill_time_t, H5D_layout_t};
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5p::H5P_DEFAULT;
use hdf5_sys::h5s::H5S_seloper_t;
use hdf5_sys::h5t::H5T_class_t;
use hdf5_sys::{h5a, h5d, h5i, h5p, h5s, h5t, h5z};

use crate::error::{MarquetError, Result};

use super::*;

/// Bytes of elements moved per read and write while copying data.
const SLAB_BYTES: u64 = 32 << 20;

/// The deflate level of a [`OneChunk`] dataset: compressed once, read by every window.
const ONE_CHUNK_DEFLATE: u32 = 9;

/// A dataset that the copy stores as one chunk compressed with shuffle + deflate instead of
/// contiguous (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub struct OneChunk {
    /// The dataset's absolute path.
    pub path: String,
    /// Elements for the copy other than the source's, or `None` to copy the source's.
    pub replace: Option<Replacement>,
}

/// The elements a [`OneChunk`] copy holds instead of its source's (a derived index the
/// caller recomputed for the copy), with attributes to set over the source's.
#[derive(Debug, Clone, PartialEq)]
pub struct Replacement {
    /// The elements' datatype (rank-1 dataset).
    pub dtype: Dtype,
    /// The number of elements.
    pub len: u64,
    /// The elements, little-endian in `dtype`'s layout.
    pub bytes: Vec<u8>,
    /// Scalar `u64` attributes written after the source's attributes are copied.
    pub attrs: Vec<(String, u64)>,
}

/// What a copy into the cloud layout copied (`marquet::write_cloud_copy`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RelayoutReport {
    /// Groups created (the roots' ancestors not counted).
    pub groups: u64,
    /// Datasets copied.
    pub datasets: u64,
    /// Of those, the datasets stored as one chunk compressed with shuffle + deflate (the
    /// block indexes).
    pub one_chunk: u64,
    /// Bytes of elements copied.
    pub data_bytes: u64,
}

/// Copy the groups at `roots` (absolute paths), with everything below them, from the file
/// `src` into the same paths of the new file `dst`, as the module documentation describes:
/// all metadata first, then the datasets' data, those named in `first` (absolute paths, in
/// that order) before the rest. Missing ancestors of a root are created as plain groups.
/// Refuses what the copy could not keep as it is: external or virtual storage, committed
/// datatypes, references inside datasets or compound attributes, and references to objects
/// outside the roots. The datasets of `one_chunk` are stored as [`OneChunk`] says.
pub fn copy_contiguous(src: hid_t, dst: hid_t, roots: &[String], first: &[String], one_chunk: &[OneChunk]) -> Result<RelayoutReport> {
    let cx = Copy { src, dst, one_chunk };
    let mut report = RelayoutReport::default();
    let mut datasets = Vec::new();
    let mut refs = Vec::new();
    for root in roots {
        let mut at = String::new();
        for part in root.split('/').filter(|p| !p.is_empty()).collect::<Vec<_>>().split_last().map(|(_, a)| a.to_vec()).unwrap_or_default() {
            at = format!("{at}/{part}");
            if !path_exists(dst, &at)? {
                group_create(dst, &at)?;
            }
        }
        copy_meta(&cx, root, &mut datasets, &mut refs, &mut report)?;
    }
    // References, once every object they may point to exists.
    for (path, name) in &refs {
        let s = object_open(src, path)?;
        let d = object_open(dst, path)?;
        let Some((targets, _, space)) = attr_read_refs(s.id(), name)? else { continue };
        let mut paths = Vec::with_capacity(targets.len());
        for t in targets {
            let t = t.ok_or_else(|| MarquetError::Unsupported(format!("{path}: attribute {name} holds a reference that does not resolve")))?;
            if !roots.iter().any(|r| t == *r || t.starts_with(&format!("{}/", r.trim_end_matches('/')))) {
                return Err(MarquetError::Unsupported(format!("{path}: attribute {name} refers to {t}, outside the objects copied")));
            }
            paths.push(t);
        }
        attr_write_refs(d.id(), name, &paths, matches!(space, Space::Scalar))?;
    }
    // Data: the datasets named first, in their order, then the others as they were met.
    let mut seen = std::collections::HashSet::new();
    let order = first.iter().filter(|p| datasets.contains(p)).chain(datasets.iter()).filter(|p| seen.insert(p.as_str()));
    for path in order {
        report.data_bytes += match cx.one_chunk(path) {
            Some(oc) => {
                report.one_chunk += 1;
                write_one_chunk(src, dst, oc)?
            }
            None => copy_data(src, dst, path)?,
        };
    }
    Ok(report)
}

/// What one copy works with.
struct Copy<'a> {
    src: hid_t,
    dst: hid_t,
    one_chunk: &'a [OneChunk],
}

impl Copy<'_> {
    fn one_chunk(&self, path: &str) -> Option<&OneChunk> {
        self.one_chunk.iter().find(|o| o.path == path)
    }
}

/// Phase 1 for the object at `path` and everything below it.
fn copy_meta(cx: &Copy, path: &str, datasets: &mut Vec<String>, refs: &mut Vec<(String, String)>, report: &mut RelayoutReport) -> Result<()> {
    let (src, dst) = (cx.src, cx.dst);
    let o = object_open(src, path)?;
    let kind = locked(|| unsafe { h5i::H5Iget_type(o.id()) });
    match kind {
        h5i::H5I_type_t::H5I_GROUP => {
            let g = group_create(dst, path)?;
            report.groups += 1;
            copy_attrs(o.id(), g.id(), path, refs)?;
            drop(g);
            for m in member_names(o.id(), path)? {
                let child = format!("{}/{m}", path.trim_end_matches('/'));
                copy_meta(cx, &child, datasets, refs, report)?;
            }
        }
        h5i::H5I_type_t::H5I_DATASET => {
            let oc = cx.one_chunk(path);
            let d = create_contiguous(o.id(), dst, path, oc)?;
            report.datasets += 1;
            copy_attrs(o.id(), d.id(), path, refs)?;
            for (name, v) in oc.and_then(|o| o.replace.as_ref()).map(|r| r.attrs.as_slice()).unwrap_or_default() {
                attr_write_u64(d.id(), name, *v)?;
            }
            datasets.push(path.to_string());
        }
        _ => return Err(MarquetError::Unsupported(format!("{path}: a committed datatype or other object that the copy does not carry"))),
    }
    Ok(())
}

/// Create dataset `path` in `dst` like `ds` (datatype, extent, fill value and the other
/// creation properties), stored contiguous without filters and allocated at its first write;
/// or, for a [`OneChunk`] with elements, as one chunk (of its [`Replacement`]'s datatype and
/// length, if any) filtered by shuffle and deflate.
fn create_contiguous(ds: hid_t, dst: hid_t, path: &str, one_chunk: Option<&OneChunk>) -> Result<Hid> {
    let n = cstr(path)?;
    let replace = one_chunk.and_then(|o| o.replace.as_ref());
    let new_type = replace.map(|r| r.dtype.to_hid()).transpose()?;
    locked(|| unsafe {
        let t = match &new_type {
            Some(t) => Hid::new(h5t::H5Tcopy(t.id()), path, "H5Tcopy")?,
            None => {
                let ft = Hid::new(h5d::H5Dget_type(ds), path, "H5Dget_type")?;
                Hid::new(h5t::H5Tcopy(ft.0), path, "H5Tcopy")?
            }
        };
        if h5t::H5Tdetect_class(t.0, H5T_class_t::H5T_REFERENCE) > 0 {
            return Err(MarquetError::Unsupported(format!("{path}: a dataset of references is not copied")));
        }
        let fs = Hid::new(h5d::H5Dget_space(ds), path, "H5Dget_space")?;
        let rank = check(h5s::H5Sget_simple_extent_ndims(fs.0), path, "H5Sget_simple_extent_ndims")?;
        let mut dims = vec![0 as hsize_t; rank.max(0) as usize];
        if rank > 0 {
            check(h5s::H5Sget_simple_extent_dims(fs.0, dims.as_mut_ptr(), ptr::null_mut()), path, "H5Sget_simple_extent_dims")?;
        }
        if let Some(r) = replace {
            if rank != 1 {
                return Err(MarquetError::Unsupported(format!("{path}: only a rank-1 dataset's elements are replaced")));
            }
            dims[0] = r.len;
        }
        let space = if rank > 0 {
            Hid::new(h5s::H5Screate_simple(rank, dims.as_ptr(), dims.as_ptr()), path, "H5Screate_simple")?
        } else {
            Hid::new(h5s::H5Scopy(fs.0), path, "H5Scopy")?
        };
        let dcpl = Hid::new(h5d::H5Dget_create_plist(ds), path, "H5Dget_create_plist")?;
        if check(h5p::H5Pget_external_count(dcpl.0), path, "H5Pget_external_count")? > 0 {
            return Err(MarquetError::Unsupported(format!("{path}: external storage is not copied")));
        }
        match h5p::H5Pget_layout(dcpl.0) {
            H5D_layout_t::H5D_CHUNKED => {
                if check(h5p::H5Pget_nfilters(dcpl.0), path, "H5Pget_nfilters")? > 0 {
                    check(h5p::H5Premove_filter(dcpl.0, h5z::H5Z_FILTER_ALL), path, "H5Premove_filter")?;
                }
                check(h5p::H5Pset_layout(dcpl.0, H5D_layout_t::H5D_CONTIGUOUS), path, "H5Pset_layout")?;
            }
            H5D_layout_t::H5D_CONTIGUOUS | H5D_layout_t::H5D_COMPACT => {}
            _ => return Err(MarquetError::Unsupported(format!("{path}: virtual storage is not copied"))),
        }
        if one_chunk.is_some() && rank > 0 && dims.iter().all(|&d| d > 0) {
            check(h5p::H5Pset_chunk(dcpl.0, rank, dims.as_ptr()), path, "H5Pset_chunk")?;
            check(h5p::H5Pset_shuffle(dcpl.0), path, "H5Pset_shuffle")?;
            check(h5p::H5Pset_deflate(dcpl.0, ONE_CHUNK_DEFLATE), path, "H5Pset_deflate")?;
        }
        if matches!(h5p::H5Pget_layout(dcpl.0), H5D_layout_t::H5D_CONTIGUOUS | H5D_layout_t::H5D_CHUNKED) {
            check(h5p::H5Pset_alloc_time(dcpl.0, H5D_alloc_time_t::H5D_ALLOC_TIME_LATE), path, "H5Pset_alloc_time")?;
        }
        // Every element is written by the copy: no fill values written first.
        check(h5p::H5Pset_fill_time(dcpl.0, H5D_fill_time_t::H5D_FILL_TIME_NEVER), path, "H5Pset_fill_time")?;
        Hid::new(h5d::H5Dcreate2(dst, n.as_ptr(), t.0, space.0, H5P_DEFAULT, dcpl.0, H5P_DEFAULT), path, "H5Dcreate2")
    })
}

/// Whether elements of `t` hold pointers that HDF5 allocates on read (variable-length
/// strings or sequences, also inside compounds and arrays).
unsafe fn has_vlen(t: hid_t) -> bool {
    h5t::H5Tdetect_class(t, H5T_class_t::H5T_VLEN) > 0 || h5t::H5Tis_variable_str(t) > 0 || (h5t::H5Tdetect_class(t, H5T_class_t::H5T_STRING) > 0 && h5t::H5Tget_class(t) != H5T_class_t::H5T_STRING)
}

/// Copy every attribute of `from` to `to` as stored, except reference attributes, which
/// are noted in `refs` for [`copy_contiguous`] to write once their targets exist.
fn copy_attrs(from: hid_t, to: hid_t, path: &str, refs: &mut Vec<(String, String)>) -> Result<()> {
    for name in attr_names(from)? {
        let c = cstr(&name)?;
        let what = format!("{path} attribute {name}");
        let is_ref = locked(|| unsafe {
            let a = Hid::new(h5a::H5Aopen(from, c.as_ptr(), H5P_DEFAULT), &what, "H5Aopen")?;
            let ft = Hid::new(h5a::H5Aget_type(a.0), &what, "H5Aget_type")?;
            if h5t::H5Tget_class(ft.0) == H5T_class_t::H5T_REFERENCE {
                return Ok(true);
            }
            if h5t::H5Tdetect_class(ft.0, H5T_class_t::H5T_REFERENCE) > 0 {
                return Err(MarquetError::Unsupported(format!("{what}: references inside a compound are not copied")));
            }
            let t = Hid::new(h5t::H5Tcopy(ft.0), &what, "H5Tcopy")?;
            let sp = Hid::new(h5a::H5Aget_space(a.0), &what, "H5Aget_space")?;
            let np = check(h5s::H5Sget_simple_extent_npoints(sp.0), &what, "H5Sget_simple_extent_npoints")? as u64;
            let size = h5t::H5Tget_size(t.0) as u64;
            let words = np.checked_mul(size).map(|b| b.div_ceil(8)).and_then(|w| usize::try_from(w).ok()).ok_or_else(|| MarquetError::spec(&what, "HDF5 attribute", "size overflow"))?;
            // u64 words: aligned for the pointers of variable-length elements.
            let mut buf = vec![0u64; words];
            if np > 0 {
                check(h5a::H5Aread(a.0, t.0, buf.as_mut_ptr() as *mut c_void), &what, "H5Aread")?;
            }
            let na = Hid::new(h5a::H5Acreate2(to, c.as_ptr(), t.0, sp.0, H5P_DEFAULT, H5P_DEFAULT), &what, "H5Acreate2");
            let res = match na {
                Ok(na) if np > 0 => check(h5a::H5Awrite(na.0, t.0, buf.as_ptr() as *const c_void), &what, "H5Awrite").map(|_| ()),
                Ok(_) => Ok(()),
                Err(e) => Err(e),
            };
            if np > 0 && has_vlen(t.0) {
                h5t::H5Treclaim(t.0, sp.0, H5P_DEFAULT, buf.as_mut_ptr() as *mut c_void);
            }
            res.map(|()| false)
        })?;
        if is_ref {
            refs.push((path.to_string(), name));
        }
    }
    Ok(())
}

/// Phase 2 for a [`OneChunk`] dataset: its elements (the replacement's, or the source's read
/// whole) shuffled, deflated and written as the one chunk. Returns the bytes of elements.
fn write_one_chunk(src: hid_t, dst: hid_t, oc: &OneChunk) -> Result<u64> {
    let path = oc.path.as_str();
    let d = dataset_open(dst, path)?;
    let info = dataset_info(d.id(), path)?;
    if info.chunk.is_none() {
        // Nothing to store (no elements): created contiguous, allocated never.
        return Ok(0);
    }
    let elem = info.dtype.size();
    let len = info.dims.first().copied().unwrap_or(0);
    let raw = match &oc.replace {
        Some(r) => r.bytes.clone(),
        None => read_whole(src, path, len, elem)?,
    };
    if elem == 0 || info.dims.len() != 1 || raw.len() as u64 != len.saturating_mul(elem as u64) {
        return Err(MarquetError::spec(path, "HDF5 dataset", format!("{} bytes for {len} elements of {elem} bytes", raw.len())));
    }
    chunk_write_raw(d.id(), 0, &one_chunk_bytes(&raw, elem, path)?, path)?;
    Ok(raw.len() as u64)
}

/// The stored bytes of a [`OneChunk`] copy whose elements of `elem` bytes are `raw`.
pub fn one_chunk_bytes(raw: &[u8], elem: usize, path: &str) -> Result<Vec<u8>> {
    let stages = [codec::Stage::Shuffle { elem }, codec::Stage::Deflate { level: ONE_CHUNK_DEFLATE }];
    codec::encode(&stages, raw).map_err(|e| MarquetError::spec(path, "HDF5 chunk", e))
}

/// The elements of the rank-1 dataset `path` of `src` as stored (its file datatype), `len`
/// elements of `elem` bytes: a small dataset read whole (a block index).
fn read_whole(src: hid_t, path: &str, len: u64, elem: usize) -> Result<Vec<u8>> {
    let s = dataset_open(src, path)?;
    let bytes = len.checked_mul(elem as u64).and_then(|b| usize::try_from(b).ok()).ok_or_else(|| MarquetError::spec(path, "HDF5 dataset", "size overflow"))?;
    let mut buf = vec![0u8; bytes];
    locked(|| unsafe {
        let ft = Hid::new(h5d::H5Dget_type(s.0), path, "H5Dget_type")?;
        let t = Hid::new(h5t::H5Tcopy(ft.0), path, "H5Tcopy")?;
        if has_vlen(t.0) || h5t::H5Tget_size(t.0) != elem {
            return Err(MarquetError::Unsupported(format!("{path}: elements of variable length or another size are not stored as one chunk")));
        }
        if bytes > 0 {
            check(h5d::H5Dread(s.0, t.0, h5s::H5S_ALL, h5s::H5S_ALL, H5P_DEFAULT, buf.as_mut_ptr() as *mut c_void), path, "H5Dread")?;
        }
        Ok(())
    })?;
    Ok(buf)
}

/// Copy the elements of dataset `path` from `src` to its copy in `dst`, in slabs of whole
/// rows (the first dimension) of about [`SLAB_BYTES`]. Returns the bytes copied.
fn copy_data(src: hid_t, dst: hid_t, path: &str) -> Result<u64> {
    let s = dataset_open(src, path)?;
    let d = dataset_open(dst, path)?;
    wrote(locked(|| unsafe {
        let ft = Hid::new(h5d::H5Dget_type(s.0), path, "H5Dget_type")?;
        let t = Hid::new(h5t::H5Tcopy(ft.0), path, "H5Tcopy")?;
        let size = h5t::H5Tget_size(t.0) as u64;
        let vlen = has_vlen(t.0);
        let fs = Hid::new(h5d::H5Dget_space(s.0), path, "H5Dget_space")?;
        let rank = check(h5s::H5Sget_simple_extent_ndims(fs.0), path, "H5Sget_simple_extent_ndims")? as usize;
        let npoints = check(h5s::H5Sget_simple_extent_npoints(fs.0), path, "H5Sget_simple_extent_npoints")? as u64;
        if npoints == 0 || size == 0 {
            return Ok(0);
        }
        let too_big = || MarquetError::spec(path, "HDF5 dataset", "size overflow");
        if rank == 0 {
            let words = usize::try_from(size.div_ceil(8)).map_err(|_| too_big())?;
            let mut buf = vec![0u64; words];
            check(h5d::H5Dread(s.0, t.0, h5s::H5S_ALL, h5s::H5S_ALL, H5P_DEFAULT, buf.as_mut_ptr() as *mut c_void), path, "H5Dread")?;
            let r = check(h5d::H5Dwrite(d.0, t.0, h5s::H5S_ALL, h5s::H5S_ALL, H5P_DEFAULT, buf.as_ptr() as *const c_void), path, "H5Dwrite");
            if vlen {
                h5t::H5Treclaim(t.0, fs.0, H5P_DEFAULT, buf.as_mut_ptr() as *mut c_void);
            }
            r?;
            return Ok(size);
        }
        let mut dims = vec![0 as hsize_t; rank];
        check(h5s::H5Sget_simple_extent_dims(fs.0, dims.as_mut_ptr(), ptr::null_mut()), path, "H5Sget_simple_extent_dims")?;
        let row_bytes = dims[1..].iter().try_fold(size, |a, &b| a.checked_mul(b)).ok_or_else(too_big)?;
        let rows_per = (SLAB_BYTES / row_bytes.max(1)).max(1);
        let ds_space = Hid::new(h5d::H5Dget_space(d.0), path, "H5Dget_space")?;
        let mut total = 0u64;
        let mut r = 0u64;
        while r < dims[0] {
            let n = rows_per.min(dims[0] - r);
            let mut start = vec![0 as hsize_t; rank];
            start[0] = r;
            let mut count = dims.clone();
            count[0] = n;
            let bytes = n.checked_mul(row_bytes).ok_or_else(too_big)?;
            let mut buf = vec![0u64; usize::try_from(bytes.div_ceil(8)).map_err(|_| too_big())?];
            check(h5s::H5Sselect_hyperslab(fs.0, H5S_seloper_t::H5S_SELECT_SET, start.as_ptr(), ptr::null(), count.as_ptr(), ptr::null()), path, "H5Sselect_hyperslab")?;
            check(h5s::H5Sselect_hyperslab(ds_space.0, H5S_seloper_t::H5S_SELECT_SET, start.as_ptr(), ptr::null(), count.as_ptr(), ptr::null()), path, "H5Sselect_hyperslab")?;
            let ms = Hid::new(h5s::H5Screate_simple(rank as i32, count.as_ptr(), ptr::null()), path, "H5Screate_simple")?;
            check(h5d::H5Dread(s.0, t.0, ms.0, fs.0, H5P_DEFAULT, buf.as_mut_ptr() as *mut c_void), path, "H5Dread")?;
            let w = check(h5d::H5Dwrite(d.0, t.0, ms.0, ds_space.0, H5P_DEFAULT, buf.as_ptr() as *const c_void), path, "H5Dwrite");
            if vlen {
                h5t::H5Treclaim(t.0, ms.0, H5P_DEFAULT, buf.as_mut_ptr() as *mut c_void);
            }
            w?;
            total += bytes;
            r += n;
        }
        Ok(total)
    }))
}

/// Where the bytes of a dataset lie: its object header's address and, for contiguous
/// storage or a dataset of one chunk, the address of its data (`None` when not allocated)
/// — for telling whether a file keeps its metadata ahead of its data (`marquet info`, issue
/// #34).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    /// The object header's address.
    pub header: u64,
    /// Contiguous storage's address (`H5Dget_offset`) or the one chunk's, `None` for other
    /// layouts.
    pub data: Option<u64>,
    /// Whether the dataset is stored contiguous (or compact) and unfiltered.
    pub plain: bool,
    /// Whether the dataset is chunked in a single chunk that holds its whole extent (a
    /// [`OneChunk`] copy).
    pub one_chunk: bool,
}

/// The [`Placement`] of the open dataset `ds`.
pub fn placement(ds: hid_t, path: &str) -> Result<Placement> {
    let (_, token) = object_identity(ds, path)?;
    let header = u64::from_le_bytes(token[..8].try_into().unwrap_or([0; 8]));
    let one_chunk = dataset_info(ds, path)?.one_chunk();
    let (layout, nf, offset) = locked(|| unsafe {
        let dcpl = Hid::new(h5d::H5Dget_create_plist(ds), path, "H5Dget_create_plist")?;
        let nf = check(h5p::H5Pget_nfilters(dcpl.0), path, "H5Pget_nfilters")?;
        Ok::<_, MarquetError>((h5p::H5Pget_layout(dcpl.0), nf, h5d::H5Dget_offset(ds)))
    })?;
    let plain = nf == 0 && matches!(layout, H5D_layout_t::H5D_CONTIGUOUS | H5D_layout_t::H5D_COMPACT);
    let data = match layout {
        H5D_layout_t::H5D_CONTIGUOUS => (offset != hdf5_sys::h5::HADDR_UNDEF).then_some(offset),
        // A chunk index that cannot be read (damaged by a full disk, issue #38) places
        // nothing; readers ignore such an index when it is stale.
        H5D_layout_t::H5D_CHUNKED if one_chunk => chunk_location(ds, 0, path).ok().flatten().map(|(_, addr, _)| addr),
        _ => None,
    };
    Ok(Placement { header, data, plain, one_chunk })
}
