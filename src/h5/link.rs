//! Links and groups: existence, creation, deletion, soft links, moves, members and storage sizes.
#![allow(unsafe_code)]


use hdf5::globals as g;
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5p::H5P_DEFAULT;
use hdf5_sys::{h5d, h5i, h5p, h5t};

use crate::error::{MarquetError, Result};

use super::*;

/// Does the link `name` exist in group `loc`?
pub fn link_exists(loc: hid_t, name: &str) -> Result<bool> {
    let n = cstr(name)?;
    locked(|| unsafe { check(hdf5_sys::h5l::H5Lexists(loc, n.as_ptr(), H5P_DEFAULT), name, "H5Lexists") })
        .map(|v| v > 0)
}

/// Remove the link `name` from group `loc`.
pub fn link_delete(loc: hid_t, name: &str) -> Result<()> {
    let n = cstr(name)?;
    wrote(locked(|| unsafe { check(hdf5_sys::h5l::H5Ldelete(loc, n.as_ptr(), H5P_DEFAULT), name, "H5Ldelete") })).map(|_| ())
}

/// Create a soft link `name` in group `loc` pointing at the path `target` — used only by
/// tests that build non-conformant files (HEP001 §7.6 wants hard links).
pub fn link_create_soft(loc: hid_t, target: &str, name: &str) -> Result<()> {
    let t = cstr(target)?;
    let n = cstr(name)?;
    locked(|| unsafe {
        check(hdf5_sys::h5l::H5Lcreate_soft(t.as_ptr(), loc, n.as_ptr(), H5P_DEFAULT, H5P_DEFAULT), name, "H5Lcreate_soft")
    })
    .map(|_| ())
}

/// Rename (move) link `src` to `dst` within group `loc`.
pub fn link_move(loc: hid_t, src: &str, dst: &str) -> Result<()> {
    let a = cstr(src)?;
    let b = cstr(dst)?;
    wrote(locked(|| unsafe {
        check(hdf5_sys::h5l::H5Lmove(loc, a.as_ptr(), loc, b.as_ptr(), H5P_DEFAULT, H5P_DEFAULT), src, "H5Lmove")
    }))
    .map(|_| ())
}

/// Bytes of file storage used by the dataset `name` below `loc`, or by every dataset
/// below it when it is a group (`H5Dget_storage_size`).
pub fn storage_size_below(loc: hid_t, name: &str) -> Result<u64> {
    let o = object_open(loc, name)?;
    if is_group(o.id()) {
        let mut total = 0;
        for m in member_names(o.id(), name)? {
            total += storage_size_below(o.id(), &m).unwrap_or(0);
        }
        Ok(total)
    } else {
        Ok(locked(|| unsafe { h5d::H5Dget_storage_size(o.id()) }))
    }
}

/// Create a group without timestamps, tracking attribute creation order off.
pub fn group_create(loc: hid_t, name: &str) -> Result<Hid> {
    let n = cstr(name)?;
    locked(|| unsafe {
        let gcpl = Hid::new(h5p::H5Pcreate(*g::H5P_GROUP_CREATE), name, "H5Pcreate")?;
        check(h5p::H5Pset_obj_track_times(gcpl.0, 0), name, "H5Pset_obj_track_times")?;
        Hid::new(hdf5_sys::h5g::H5Gcreate2(loc, n.as_ptr(), H5P_DEFAULT, gcpl.0, H5P_DEFAULT), name, "H5Gcreate2")
    })
}

/// Commit (name) a datatype — used only by tests that build non-conformant files.
pub fn commit_datatype(loc: hid_t, name: &str, dtype: &Dtype) -> Result<()> {
    let t = dtype.to_hid()?;
    let n = cstr(name)?;
    locked(|| unsafe {
        check(h5t::H5Tcommit2(loc, n.as_ptr(), t.0, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), name, "H5Tcommit2")
    })
    .map(|_| ())
}

/// Names of the direct members of group `loc`.
pub fn member_names(loc: hid_t, path: &str) -> Result<Vec<String>> {
    let r = locked(|| unsafe { h5i::H5Iinc_ref(loc) });
    check(r, path, "H5Iinc_ref")?;
    // SAFETY: we own the extra reference taken above; the Group releases it on drop.
    let g: hdf5::Group = unsafe { hdf5::from_id(loc) }.map_err(|e| MarquetError::hdf5(path, e))?;
    g.member_names().map_err(|e| MarquetError::hdf5(path, e))
}

/// Is the open object a group?
pub fn is_group(id: hid_t) -> bool {
    locked(|| unsafe { h5i::H5Iget_type(id) }) == h5i::H5I_type_t::H5I_GROUP
}
