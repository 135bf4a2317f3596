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

/// Does the absolute path `path` in the file of `loc` lead to an object? Each
/// component is tested in turn (`H5Lexists` on `a/b` fails when `a` is missing).
pub fn path_exists(loc: hid_t, path: &str) -> Result<bool> {
    let mut prefix = String::new();
    for part in path.split('/').filter(|s| !s.is_empty()) {
        prefix.push('/');
        prefix.push_str(part);
        if !link_exists(loc, &prefix)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Remove the link `name` from group `loc`.
pub fn link_delete(loc: hid_t, name: &str) -> Result<()> {
    let n = cstr(name)?;
    wrote(locked(|| unsafe { check(hdf5_sys::h5l::H5Ldelete(loc, n.as_ptr(), H5P_DEFAULT), name, "H5Ldelete") })).map(|_| ())
}

/// Unlink `name` from group `loc` *without* deleting the object it names: its reference
/// count is raised first (`H5Oincr_refcount`), so HDF5 never frees it and never reads its
/// chunk index. For an index dataset a full disk damaged (its chunk index points past the
/// end of the file, issue #38), which HDF5 can neither resize nor delete: it is set aside.
/// The object's bytes stay in the file, unreachable (reclaimed by `h5repack`).
pub fn link_delete_keeping_object(loc: hid_t, name: &str) -> Result<()> {
    let o = object_open(loc, name)?;
    locked(|| unsafe { check(hdf5_sys::h5o::H5Oincr_refcount(o.id()), name, "H5Oincr_refcount") })?;
    drop(o);
    link_delete(loc, name)
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
    link_move_between(loc, src, loc, dst)
}

/// Move link `src` of group `src_loc` to `dst` below `dst_loc` (same file). The object is
/// not copied: only the two groups' link storage changes.
pub fn link_move_between(src_loc: hid_t, src: &str, dst_loc: hid_t, dst: &str) -> Result<()> {
    let a = cstr(src)?;
    let b = cstr(dst)?;
    wrote(locked(|| unsafe {
        check(hdf5_sys::h5l::H5Lmove(src_loc, a.as_ptr(), dst_loc, b.as_ptr(), H5P_DEFAULT, H5P_DEFAULT), src, "H5Lmove")
    }))
    .map(|_| ())
}

/// Copy the object `src` below `src_loc` (a group with everything below it) to the new
/// link `dst` below `dst_loc`, possibly in another file (`H5Ocopy`; missing intermediate
/// groups are created). HDF5 links the copy only after the whole object is written — in
/// memory: on disk, a flush may write the linking header before the copy (see
/// `File::copy_tables_from`, which copies below an anonymous group for that reason).
///
/// Object references (HEP001 §7.4's SEARCH_INDEX_LIST, HEP002's GEOMETRY_COLUMNS) would
/// become null in another file; they are expanded, each pointing at the copy of its target
/// (HDF5 copies an object once per operation). A target met through a reference before its
/// own link is copied also gets a link `/~obj_pointed_by_<address>` in the destination's
/// root: the same object, so that link is dropped (H5Rget_name could otherwise name the
/// object by it). Such links are HDF5's, made only by reference-expanding copies; ones an
/// interrupted copy left (a full disk, a kill) are removed before copying, or the copy
/// would meet "name already exists".
pub fn object_copy(src_loc: hid_t, src: &str, dst_loc: hid_t, dst: &str) -> Result<()> {
    object_copy_with(src_loc, src, dst_loc, dst, true)
}

/// [`object_copy`], with object references expanded (`expand_references`) or left to
/// become null in the copy (a copy kept for its data only).
pub fn object_copy_with(src_loc: hid_t, src: &str, dst_loc: hid_t, dst: &str, expand_references: bool) -> Result<()> {
    const POINTED: &str = "~obj_pointed_by_";
    let a = cstr(src)?;
    let b = cstr(dst)?;
    let root = object_open(dst_loc, "/")?;
    for name in member_names(root.id(), "/")? {
        if name.starts_with(POINTED) {
            link_delete(dst_loc, &format!("/{name}"))?;
        }
    }
    let copied = wrote(locked(|| unsafe {
        let lcpl = Hid::new(h5p::H5Pcreate(*g::H5P_LINK_CREATE), dst, "H5Pcreate")?;
        check(h5p::H5Pset_create_intermediate_group(lcpl.0, 1), dst, "H5Pset_create_intermediate_group")?;
        let ocpypl = Hid::new(h5p::H5Pcreate(*g::H5P_OBJECT_COPY), dst, "H5Pcreate")?;
        if expand_references {
            check(h5p::H5Pset_copy_object(ocpypl.0, hdf5_sys::h5o::H5O_COPY_EXPAND_REFERENCE_FLAG), dst, "H5Pset_copy_object")?;
        }
        check(hdf5_sys::h5o::H5Ocopy(src_loc, a.as_ptr(), dst_loc, b.as_ptr(), ocpypl.0, lcpl.0), dst, "H5Ocopy")
    }));
    for name in member_names(root.id(), "/")? {
        if name.starts_with(POINTED) && (copied.is_err() || object_link_count(dst_loc, &format!("/{name}"))? > 1) {
            // After a failed copy: best effort (the next copy removes what is left).
            let r = link_delete(dst_loc, &format!("/{name}"));
            if copied.is_ok() {
                r?;
            }
        }
    }
    copied.map(|_| ())
}

/// The number of hard links HDF5 counts for the object at `path` (its reference count).
fn object_link_count(loc: hid_t, path: &str) -> Result<u32> {
    let n = cstr(path)?;
    locked(|| unsafe {
        let mut info = std::mem::MaybeUninit::<hdf5_sys::h5o::H5O_info2_t>::uninit();
        check(
            hdf5_sys::h5o::H5Oget_info_by_name3(loc, n.as_ptr(), info.as_mut_ptr(), hdf5_sys::h5o::H5O_INFO_BASIC, H5P_DEFAULT),
            path,
            "H5Oget_info_by_name3",
        )?;
        Ok(info.assume_init().rc)
    })
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

/// Create a group that no link names yet (`H5Gcreate_anon`), in the file of `loc`: what is
/// written below it stays unreachable from the file's root until its content is moved out
/// of it ([`link_move_between`]); closed while still unlinked, HDF5 deletes it with all
/// below it. No timestamps.
pub fn group_create_anon(loc: hid_t) -> Result<Hid> {
    locked(|| unsafe {
        let gcpl = Hid::new(h5p::H5Pcreate(*g::H5P_GROUP_CREATE), "(anonymous group)", "H5Pcreate")?;
        check(h5p::H5Pset_obj_track_times(gcpl.0, 0), "(anonymous group)", "H5Pset_obj_track_times")?;
        Hid::new(hdf5_sys::h5g::H5Gcreate_anon(loc, gcpl.0, H5P_DEFAULT), "(anonymous group)", "H5Gcreate_anon")
    })
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
