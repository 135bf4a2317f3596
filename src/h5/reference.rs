//! `H5T_STD_REF` object references stored in attributes (HEP001 §5, the `INDEXES` and `COLUMNS` lists), and object paths.
#![allow(unsafe_code)]

use std::os::raw::{c_char, c_void};
use std::ptr;

use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5p::H5P_DEFAULT;
use hdf5_sys::{h5a, h5i, h5r};

use crate::error::{MarquetError, Result};

use super::*;

/// What [`attr_read_refs`] returns: the path each element points to (`None` for a null
/// reference or one that cannot be opened), the attribute's datatype and its shape.
pub type RefAttr = (Vec<Option<String>>, Dtype, Space);

/// Write an `H5T_STD_REF` attribute whose elements reference the objects at `targets`
/// (paths relative to `loc` or absolute). `scalar` writes a scalar attribute (one target).
pub fn attr_write_refs(loc: hid_t, name: &str, targets: &[String], scalar: bool) -> Result<()> {
    if scalar && targets.len() != 1 {
        return Err(MarquetError::InvalidArgument(format!("scalar reference attribute {name} needs one target")));
    }
    let mut refs: Vec<h5r::H5R_ref_t> = Vec::with_capacity(targets.len());
    let res = (|| {
        for tgt in targets {
            let c = cstr(tgt)?;
            let mut r = std::mem::MaybeUninit::<h5r::H5R_ref_t>::uninit();
            locked(|| unsafe {
                check(h5r::H5Rcreate_object(loc, c.as_ptr(), H5P_DEFAULT, r.as_mut_ptr()), tgt, "H5Rcreate_object")
            })?;
            refs.push(unsafe { r.assume_init() });
        }
        let space = if scalar { Space::Scalar } else { Space::Simple(vec![targets.len() as u64]) };
        let bytes: &[u8] = unsafe {
            std::slice::from_raw_parts(refs.as_ptr() as *const u8, refs.len() * std::mem::size_of::<h5r::H5R_ref_t>())
        };
        attr_write(loc, name, &Dtype::StdRef, &space, bytes)
    })();
    for r in refs.iter_mut() {
        locked(|| unsafe { h5r::H5Rdestroy(r) });
    }
    res
}

/// Read a reference attribute: for each element, the absolute path of the object it
/// points to (`None` for a null reference or one that cannot be opened). Also returns
/// whether the datatype was `H5T_STD_REF`.
pub fn attr_read_refs(loc: hid_t, name: &str) -> Result<Option<RefAttr>> {
    let Some(raw) = attr_read(loc, name)? else { return Ok(None) };
    let np = raw.space.npoints() as usize;
    let n = cstr(name)?;
    let mut out = Vec::with_capacity(np);
    match raw.dtype {
        Dtype::StdRef => locked(|| unsafe {
            let a = Hid::new(h5a::H5Aopen(loc, n.as_ptr(), H5P_DEFAULT), name, "H5Aopen")?;
            let mut refs: Vec<h5r::H5R_ref_t> = Vec::with_capacity(np);
            if np > 0 {
                let mt = Dtype::StdRef.to_hid()?;
                check(h5a::H5Aread(a.0, mt.0, refs.as_mut_ptr() as *mut c_void), name, "H5Aread")?;
                refs.set_len(np);
            }
            for r in refs.iter_mut() {
                hdf5::silence_errors(true);
                let o = h5r::H5Ropen_object(r, H5P_DEFAULT, H5P_DEFAULT);
                if o < 0 {
                    out.push(None);
                } else {
                    let h = Hid(o);
                    out.push(object_path(h.0).ok());
                }
                h5r::H5Rdestroy(r);
            }
            Ok::<(), MarquetError>(())
        })?,
        Dtype::ObjRef => locked(|| unsafe {
            let a = Hid::new(h5a::H5Aopen(loc, n.as_ptr(), H5P_DEFAULT), name, "H5Aopen")?;
            let mut refs: Vec<u64> = vec![0; np];
            let mt = Dtype::ObjRef.to_hid()?;
            check(h5a::H5Aread(a.0, mt.0, refs.as_mut_ptr() as *mut c_void), name, "H5Aread")?;
            for r in refs.iter() {
                #[allow(deprecated)]
                let o = h5r::H5Rdereference2(
                    loc,
                    H5P_DEFAULT,
                    hdf5_sys::h5r::H5R_type_t::H5R_OBJECT1,
                    r as *const u64 as *const c_void,
                );
                if o < 0 {
                    out.push(None);
                } else {
                    let h = Hid(o);
                    out.push(object_path(h.0).ok());
                }
            }
            Ok::<(), MarquetError>(())
        })?,
        _ => return Err(MarquetError::spec(name, "HEP001 §5", format!("not a reference attribute ({:?})", raw.dtype))),
    }
    Ok(Some((out, raw.dtype, raw.space)))
}

/// The absolute path of an open object (`H5Iget_name`).
pub fn object_path(id: hid_t) -> Result<String> {
    locked(|| unsafe {
        let len = check(h5i::H5Iget_name(id, ptr::null_mut(), 0), "<object>", "H5Iget_name")?;
        let mut buf = vec![0u8; len as usize + 1];
        check(h5i::H5Iget_name(id, buf.as_mut_ptr() as *mut c_char, buf.len()), "<object>", "H5Iget_name")?;
        buf.truncate(len as usize);
        Ok(String::from_utf8_lossy(&buf).into_owned())
    })
}
