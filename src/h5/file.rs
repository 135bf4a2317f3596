//! Files: create (with the crash-safe free-space strategy), open, flush, and files handed over by a caller's `hid_t`.
#![allow(unsafe_code)]


use hdf5::globals as g;
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5p::H5P_DEFAULT;
use hdf5_sys::{h5i, h5p};

use crate::error::{MarquetError, Result};

use super::*;

/// Flush the file that `loc` belongs to.
pub fn flush(loc: hid_t) -> Result<()> {
    locked(|| unsafe {
        check(hdf5_sys::h5f::H5Fflush(loc, hdf5_sys::h5f::H5F_scope_t::H5F_SCOPE_LOCAL), "<file>", "H5Fflush")
    })
    .map(|_| ())
}

/// Create (truncate) a file whose freed file space is never reused.
///
/// HEP001 §12.3's crash guarantee assumes that a killed writer leaves the committed
/// state readable. With HDF5's default free-space managers, rewriting a compressed
/// partial chunk frees its old location, and a later allocation in the same session may
/// overwrite those bytes while the on-disk chunk index (last flushed) still points at
/// them. `H5F_FSPACE_STRATEGY_NONE` allocates only at the end of the file, so flushed
/// metadata never points at overwritten bytes; the cost is that rewritten chunks leave
/// holes (reclaimed by `h5repack`).
pub fn file_create(path: &str) -> Result<hdf5::File> {
    register_filters()?;
    let c = cstr(path)?;
    let id = locked(|| unsafe {
        let fcpl = Hid::new(h5p::H5Pcreate(*g::H5P_FILE_CREATE), path, "H5Pcreate")?;
        check(
            h5p::H5Pset_file_space_strategy(fcpl.0, hdf5_sys::h5f::H5F_fspace_strategy_t::H5F_FSPACE_STRATEGY_NONE, 0, 1),
            path,
            "H5Pset_file_space_strategy",
        )?;
        check(hdf5_sys::h5f::H5Fcreate(c.as_ptr(), hdf5_sys::h5f::H5F_ACC_TRUNC, fcpl.0, H5P_DEFAULT), path, "H5Fcreate")
    })?;
    // SAFETY: `id` is a fresh file id that the returned File owns.
    unsafe { hdf5::from_id(id) }.map_err(|e| MarquetError::hdf5(path, e))
}

/// Open an existing file read-only or read-write, with the filters this crate registers
/// (zstd 32015) available to its reads, like every file entry point of this module.
pub fn file_open(path: &std::path::Path, rw: bool) -> Result<hdf5::File> {
    register_filters()?;
    let r = if rw { hdf5::File::open_rw(path) } else { hdf5::File::open(path) };
    r.map_err(|e| MarquetError::hdf5(path.display().to_string(), e))
}

/// Take a reference to the file of an identifier that the caller opened with its own calls
/// to the *same* HDF5 library (a program linking a shared libhdf5 that libmarquet also
/// links; HEP002 §1.1 "arrays and features in one open file").
///
/// `id` must be a live file or group identifier. Returns the file, holding a reference of
/// its own (`H5Iget_file_id`), so the caller may close `id` before or after dropping it,
/// and the group's path (`"/"` for a file identifier). Anything else is refused with
/// [`MarquetError::InvalidArgument`], without dereferencing anything: `H5Iis_valid` and
/// `H5Iget_type` only look the number up in HDF5's id tables.
pub fn file_from_caller_id(id: hid_t) -> Result<(hdf5::File, String)> {
    register_filters()?;
    let what = format!("<hid_t {id}>");
    let (fid, is_group) = locked(|| unsafe {
        if h5i::H5Iis_valid(id) <= 0 {
            return Err(MarquetError::InvalidArgument(format!("hid_t {id} is not a live HDF5 identifier")));
        }
        let is_group = match h5i::H5Iget_type(id) {
            h5i::H5I_type_t::H5I_FILE => false,
            h5i::H5I_type_t::H5I_GROUP => true,
            t => {
                return Err(MarquetError::InvalidArgument(format!(
                    "hid_t {id} is a {t:?} identifier, not a file or group"
                )))
            }
        };
        Ok((check(h5i::H5Iget_file_id(id), &what, "H5Iget_file_id")?, is_group))
    })?;
    // SAFETY: H5Iget_file_id returned a new reference that the File owns.
    let file: hdf5::File = unsafe { hdf5::from_id(fid) }.map_err(|e| MarquetError::hdf5(&what, e))?;
    let path = if is_group { object_path(id)? } else { "/".to_string() };
    Ok((file, path))
}
