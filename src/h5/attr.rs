//! Attributes (HEP001 §5): read and write by name, as raw little-endian bytes or typed helpers.
#![allow(unsafe_code)]

use std::ffi::CStr;
use std::os::raw::{c_char, c_void};
use std::ptr;

use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5p::H5P_DEFAULT;
use hdf5_sys::{h5a, h5o, h5t};

use crate::error::{MarquetError, Result};

use super::*;

/// An attribute read from a file: its file datatype, its shape, and its elements as
/// little-endian bytes in the layout of `dtype.to_le()` (strings as UTF-8 `String`s).
#[derive(Debug, Clone)]
pub struct RawAttr {
    /// The attribute's datatype as stored in the file (byte order included).
    pub dtype: Dtype,
    /// The attribute's dataspace; [`Space::Null`] for e.g. an unknown `CRS` (HEP002 §8.1).
    pub space: Space,
    /// Every element, little-endian, `dtype.to_le()` layout, back to back.
    pub data: Vec<u8>,
    /// For string attributes: each element's logical value (padding and NULs stripped).
    pub strings: Vec<String>,
}

impl RawAttr {
    /// The scalar integer value of an integer attribute (any width/sign/order, R3).
    pub fn as_u64(&self) -> Option<u64> {
        match &self.dtype {
            Dtype::Int { size, signed, .. } if self.space == Space::Scalar && self.data.len() >= *size => {
                let v = int_from_bytes(&self.data[..*size], *signed, false);
                if *signed && v < 0 {
                    None
                } else {
                    Some(v as u64)
                }
            }
            _ => None,
        }
    }
    /// The scalar float value of a float attribute.
    pub fn as_f64(&self) -> Option<f64> {
        match &self.dtype {
            Dtype::Float { size: 8, .. } if self.space == Space::Scalar => {
                Some(f64::from_le_bytes(self.data[..8].try_into().ok()?))
            }
            Dtype::Float { size: 4, .. } if self.space == Space::Scalar => {
                Some(f32::from_le_bytes(self.data[..4].try_into().ok()?) as f64)
            }
            _ => None,
        }
    }
    /// The scalar string value of a string attribute.
    pub fn as_str(&self) -> Option<&str> {
        if self.space == Space::Scalar {
            self.strings.first().map(|s| s.as_str())
        } else {
            None
        }
    }
    /// Enum member names of the elements (by value), if this is an enum attribute.
    pub fn enum_names(&self) -> Option<Vec<Option<String>>> {
        match &self.dtype {
            Dtype::Enum { base, members } => {
                let sz = base.size();
                let signed = matches!(**base, Dtype::Int { signed: true, .. });
                if sz == 0 {
                    return None;
                }
                Some(
                    self.data
                        .chunks_exact(sz)
                        .map(|c| {
                            let v = int_from_bytes(c, signed, false);
                            members.iter().find(|(_, mv)| *mv == v).map(|(n, _)| n.clone())
                        })
                        .collect(),
                )
            }
            _ => None,
        }
    }
}

/// Does `loc` have an attribute called `name`?
pub fn attr_exists(loc: hid_t, name: &str) -> Result<bool> {
    let n = cstr(name)?;
    locked(|| unsafe { check(h5a::H5Aexists(loc, n.as_ptr()), name, "H5Aexists") }).map(|v| v > 0)
}

/// Names of all attributes on `loc`, in creation/name order.
pub fn attr_names(loc: hid_t) -> Result<Vec<String>> {
    locked(|| unsafe {
        let mut info = std::mem::MaybeUninit::<h5o::H5O_info2_t>::uninit();
        check(h5o::H5Oget_info3(loc, info.as_mut_ptr(), h5o::H5O_INFO_NUM_ATTRS), "<object>", "H5Oget_info3")?;
        let n = info.assume_init().num_attrs;
        let mut out = Vec::with_capacity(n.min(4096) as usize);
        for i in 0..n {
            let dot = c".";
            let a = Hid::new(
                h5a::H5Aopen_by_idx(
                    loc,
                    dot.as_ptr(),
                    hdf5_sys::h5::H5_index_t::H5_INDEX_NAME,
                    hdf5_sys::h5::H5_iter_order_t::H5_ITER_INC,
                    i,
                    H5P_DEFAULT,
                    H5P_DEFAULT,
                ),
                "<object>",
                "H5Aopen_by_idx",
            )?;
            let len = check(h5a::H5Aget_name(a.0, 0, ptr::null_mut()), "<object>", "H5Aget_name")?;
            let mut buf = vec![0u8; len as usize + 1];
            check(h5a::H5Aget_name(a.0, buf.len(), buf.as_mut_ptr() as *mut c_char), "<object>", "H5Aget_name")?;
            buf.truncate(len as usize);
            out.push(String::from_utf8_lossy(&buf).into_owned());
        }
        Ok(out)
    })
}

/// Delete attribute `name` from `loc` if it exists.
pub fn attr_delete(loc: hid_t, name: &str) -> Result<()> {
    if attr_exists(loc, name)? {
        let n = cstr(name)?;
        locked(|| unsafe { check(h5a::H5Adelete(loc, n.as_ptr()), name, "H5Adelete") })?;
    }
    Ok(())
}

/// Write an attribute of exactly `dtype` and `space`. When an attribute of the same
/// datatype and shape exists it is overwritten in place (one `H5Awrite`, which is what
/// makes an `NROWS` commit a single step); otherwise it is replaced.
pub fn attr_write(loc: hid_t, name: &str, dtype: &Dtype, space: &Space, data: &[u8]) -> Result<()> {
    let need = dtype.size() as u64 * space.npoints();
    if data.len() as u64 != need {
        return Err(MarquetError::InvalidArgument(format!(
            "attribute {name}: {} bytes given, {need} needed",
            data.len()
        )));
    }
    let t = dtype.to_hid()?;
    let n = cstr(name)?;
    if attr_exists(loc, name)? {
        let same = locked(|| unsafe {
            let a = Hid::new(h5a::H5Aopen(loc, n.as_ptr(), H5P_DEFAULT), name, "H5Aopen")?;
            let ft = Hid::new(h5a::H5Aget_type(a.0), name, "H5Aget_type")?;
            let fs = Hid::new(h5a::H5Aget_space(a.0), name, "H5Aget_space")?;
            let same = h5t::H5Tequal(ft.0, t.0) > 0 && Space::from_hid(fs.0)? == *space;
            if same && *space != Space::Null {
                check(h5a::H5Awrite(a.0, t.0, data.as_ptr() as *const c_void), name, "H5Awrite")?;
            }
            Ok::<bool, MarquetError>(same)
        })?;
        if same {
            return Ok(());
        }
        attr_delete(loc, name)?;
    }
    let s = space.to_hid(None)?;
    locked(|| unsafe {
        let a = Hid::new(h5a::H5Acreate2(loc, n.as_ptr(), t.0, s.0, H5P_DEFAULT, H5P_DEFAULT), name, "H5Acreate2")?;
        if *space != Space::Null {
            check(h5a::H5Awrite(a.0, t.0, data.as_ptr() as *const c_void), name, "H5Awrite")?;
        }
        Ok(())
    })
}

/// Write a scalar null-terminated fixed-length ASCII attribute sized to the value.
pub fn attr_write_ascii(loc: hid_t, name: &str, value: &str) -> Result<()> {
    let mut b = value.as_bytes().to_vec();
    b.push(0);
    attr_write(loc, name, &Dtype::ascii_for(value), &Space::Scalar, &b)
}

/// Write a scalar null-terminated fixed-length UTF-8 attribute sized to the value.
pub fn attr_write_utf8(loc: hid_t, name: &str, value: &str) -> Result<()> {
    let mut b = value.as_bytes().to_vec();
    b.push(0);
    attr_write(loc, name, &Dtype::utf8_for(value), &Space::Scalar, &b)
}

/// Write a 1-D fixed-length UTF-8 string array attribute (size = longest + NUL).
pub fn attr_write_utf8_array(loc: hid_t, name: &str, values: &[String]) -> Result<()> {
    let size = values.iter().map(|v| v.len()).max().unwrap_or(0) + 1;
    let mut b = vec![0u8; size * values.len()];
    for (i, v) in values.iter().enumerate() {
        b[i * size..i * size + v.len()].copy_from_slice(v.as_bytes());
    }
    let dt = Dtype::FixedString { size, utf8: true, nullterm: true, spacepad: false };
    attr_write(loc, name, &dt, &Space::Simple(vec![values.len() as u64]), &b)
}

/// Write a scalar `uint64` attribute.
pub fn attr_write_u64(loc: hid_t, name: &str, v: u64) -> Result<()> {
    attr_write(loc, name, &Dtype::U64, &Space::Scalar, &v.to_le_bytes())
}

/// Read an attribute, or `None` when absent.
pub fn attr_read(loc: hid_t, name: &str) -> Result<Option<RawAttr>> {
    if !attr_exists(loc, name)? {
        return Ok(None);
    }
    let n = cstr(name)?;
    locked(|| unsafe {
        let a = Hid::new(h5a::H5Aopen(loc, n.as_ptr(), H5P_DEFAULT), name, "H5Aopen")?;
        let ft = Hid::new(h5a::H5Aget_type(a.0), name, "H5Aget_type")?;
        let fs = Hid::new(h5a::H5Aget_space(a.0), name, "H5Aget_space")?;
        let dtype = Dtype::from_hid(ft.0)?;
        let space = Space::from_hid(fs.0)?;
        let np = space.npoints();
        let mut out = RawAttr { dtype: dtype.clone(), space, data: Vec::new(), strings: Vec::new() };
        if np == 0 {
            return Ok(Some(out));
        }
        // Attributes are small (64 KiB header limit unless dense); still bound it.
        if np > (1 << 24) {
            return Err(MarquetError::spec(name, "HEP001 §7", format!("attribute with {np} elements")));
        }
        match &dtype {
            Dtype::VarString { utf8 } => {
                let mt = Dtype::VarString { utf8: *utf8 }.to_hid()?;
                let mut ptrs: Vec<*mut c_char> = vec![ptr::null_mut(); np as usize];
                check(h5a::H5Aread(a.0, mt.0, ptrs.as_mut_ptr() as *mut c_void), name, "H5Aread")?;
                for p in &ptrs {
                    out.strings.push(if p.is_null() { String::new() } else { CStr::from_ptr(*p).to_string_lossy().into_owned() });
                }
                h5t::H5Treclaim(mt.0, fs.0, H5P_DEFAULT, ptrs.as_mut_ptr() as *mut c_void);
            }
            Dtype::StdRef | Dtype::ObjRef | Dtype::Other { .. } => {
                // References are read by attr_read_refs; others are exposed raw.
                if let Dtype::Other { .. } = dtype {
                    let mut buf = vec![0u8; dtype.size() * np as usize];
                    check(h5a::H5Aread(a.0, ft.0, buf.as_mut_ptr() as *mut c_void), name, "H5Aread")?;
                    out.data = buf;
                }
            }
            _ => {
                let mem = dtype.mem_for_read();
                let mt = mem.to_hid()?;
                let mut buf = vec![0u8; mem.size() * np as usize];
                check(h5a::H5Aread(a.0, mt.0, buf.as_mut_ptr() as *mut c_void), name, "H5Aread")?;
                if let Dtype::FixedString { size, .. } = dtype {
                    for c in buf.chunks_exact(size.max(1)) {
                        out.strings.push(fixed_str(c));
                    }
                }
                out.data = buf;
            }
        }
        Ok(Some(out))
    })
}

/// The logical value of a fixed-length string element: up to the first NUL, trailing
/// spaces kept only for non-space-padded types (callers strip pad as HEP001 says).
pub fn fixed_str(c: &[u8]) -> String {
    let end = c.iter().position(|&b| b == 0).unwrap_or(c.len());
    String::from_utf8_lossy(&c[..end]).into_owned()
}
