//! The one place that calls `hdf5-sys` directly.
//!
//! `hdf5-metno`'s safe API covers files, groups and links, but not what the HEPs need
//! byte for byte: opaque datatypes with tags, enumerations with a chosen base,
//! fixed-length strings with a chosen padding, null-dataspace attributes, `H5T_STD_REF`
//! attributes pointing at arbitrary objects, and raw hyperslab I/O of compound data.
//! This module wraps exactly those calls behind a small safe API that works in raw
//! little-endian bytes described by [`Dtype`]. Every call runs under hdf5-metno's global
//! lock (`hdf5::sync::sync`), so the rest of the crate stays thread-safe.
#![allow(unsafe_code)]

use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_uint, c_void};
use std::ptr;

use hdf5::globals as g;
use hdf5_sys::h5::{herr_t, hsize_t};
use hdf5_sys::h5d::H5D_fill_value_t;
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5p::H5P_DEFAULT;
use hdf5_sys::h5s::{H5S_class_t, H5S_seloper_t, H5S_ALL, H5S_UNLIMITED};
use hdf5_sys::h5t::{H5T_class_t, H5T_cset_t, H5T_order_t, H5T_sign_t, H5T_str_t};
use hdf5_sys::{h5a, h5d, h5i, h5o, h5p, h5r, h5s, h5t};

use crate::error::{MarquetError, Result};

pub mod cached;
pub mod codec;
pub mod direct;

/// Run `f` under the library lock.
fn locked<T>(f: impl FnOnce() -> T) -> T {
    hdf5::sync::sync(f)
}

/// Turn a negative HDF5 return into an error naming `path`, with the error stack.
fn check<T: Copy + PartialOrd + Default>(v: T, path: &str, what: &str) -> Result<T> {
    if v < T::default() {
        let stack = hdf5::Error::query().map(|e| e.to_string()).unwrap_or_default();
        Err(MarquetError::Hdf5 { path: path.to_string(), message: format!("{what} failed: {stack}") })
    } else {
        Ok(v)
    }
}

/// An owned HDF5 identifier of any kind, released with `H5Idec_ref` on drop.
#[derive(Debug)]
pub struct Hid(hid_t);

impl Hid {
    fn new(id: hid_t, path: &str, what: &str) -> Result<Hid> {
        check(id, path, what).map(Hid)
    }
    /// The raw identifier, valid while `self` lives.
    pub fn id(&self) -> hid_t {
        self.0
    }
}

impl Drop for Hid {
    fn drop(&mut self) {
        if self.0 > 0 {
            locked(|| unsafe { h5i::H5Idec_ref(self.0) });
        }
    }
}

fn cstr(s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| MarquetError::InvalidArgument(format!("name contains NUL: {s:?}")))
}

/// A field of a compound [`Dtype`].
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub name: String,
    pub offset: usize,
    pub dtype: Dtype,
}

/// A description of an HDF5 datatype, precise enough to write exactly the types the
/// HEPs name and to read any type leniently (ruling R3).
///
/// When a `Dtype` is turned into an HDF5 type it is always little-endian; the
/// `big_endian` flags record what a *file* type was when read.
#[derive(Debug, Clone, PartialEq)]
pub enum Dtype {
    Int { size: usize, signed: bool, big_endian: bool },
    Float { size: usize, big_endian: bool },
    /// Fixed-length string; `nullterm` false means null-padded (or space-padded when `spacepad`).
    FixedString { size: usize, utf8: bool, nullterm: bool, spacepad: bool },
    VarString { utf8: bool },
    Enum { base: Box<Dtype>, members: Vec<(String, i64)> },
    Compound { size: usize, fields: Vec<Field> },
    Opaque { size: usize, tag: String },
    /// `H5T_STD_REF` (new-style reference, 64 bytes in memory).
    StdRef,
    /// Deprecated `H5T_STD_REF_OBJ`.
    ObjRef,
    /// Anything else; read-only description.
    Other { class: String, size: usize },
}

impl Dtype {
    pub const U8: Dtype = Dtype::Int { size: 1, signed: false, big_endian: false };
    pub const U16: Dtype = Dtype::Int { size: 2, signed: false, big_endian: false };
    pub const U64: Dtype = Dtype::Int { size: 8, signed: false, big_endian: false };
    pub const I8: Dtype = Dtype::Int { size: 1, signed: true, big_endian: false };
    pub const I64: Dtype = Dtype::Int { size: 8, signed: true, big_endian: false };
    pub const F32: Dtype = Dtype::Float { size: 4, big_endian: false };
    pub const F64: Dtype = Dtype::Float { size: 8, big_endian: false };

    /// Null-terminated fixed-length ASCII sized to `value` plus NUL (HEP001 §7.1).
    pub fn ascii_for(value: &str) -> Dtype {
        Dtype::FixedString { size: value.len() + 1, utf8: false, nullterm: true, spacepad: false }
    }
    /// Null-terminated fixed-length UTF-8 sized to `value` plus NUL.
    pub fn utf8_for(value: &str) -> Dtype {
        Dtype::FixedString { size: value.len() + 1, utf8: true, nullterm: true, spacepad: false }
    }
    /// The HEP001 boolean enum: base `H5T_STD_I8LE`, `FALSE`=0, `TRUE`=1 (HEP001 §6).
    pub fn hep001_bool() -> Dtype {
        Dtype::Enum { base: Box::new(Dtype::I8), members: vec![("FALSE".into(), 0), ("TRUE".into(), 1)] }
    }
    /// Size in bytes of one element in memory (`StdRef` = 64).
    pub fn size(&self) -> usize {
        match self {
            Dtype::Int { size, .. } | Dtype::Float { size, .. } | Dtype::FixedString { size, .. } => *size,
            Dtype::Compound { size, .. } | Dtype::Opaque { size, .. } | Dtype::Other { size, .. } => *size,
            Dtype::VarString { .. } => std::mem::size_of::<*const c_char>(),
            Dtype::Enum { base, .. } => base.size(),
            Dtype::StdRef => h5r::H5R_REF_BUF_SIZE,
            Dtype::ObjRef => 8,
        }
    }
    /// A packed compound of f64 fields with the given names.
    pub fn f64_compound(names: &[&str]) -> Dtype {
        Dtype::Compound {
            size: 8 * names.len(),
            fields: names
                .iter()
                .enumerate()
                .map(|(i, n)| Field { name: n.to_string(), offset: 8 * i, dtype: Dtype::F64 })
                .collect(),
        }
    }
    /// The field names of a compound, else empty.
    pub fn field_names(&self) -> Vec<&str> {
        match self {
            Dtype::Compound { fields, .. } => fields.iter().map(|f| f.name.as_str()).collect(),
            _ => Vec::new(),
        }
    }
    /// Is this any string type?
    pub fn is_string(&self) -> bool {
        matches!(self, Dtype::FixedString { .. } | Dtype::VarString { .. })
    }
    /// Is this the HEP001 boolean (strict) or a tolerated boolean (1-byte base, FALSE=0, TRUE=1)?
    pub fn is_boolean(&self) -> bool {
        match self {
            Dtype::Enum { base, members } => {
                base.size() == 1
                    && members.len() == 2
                    && members.iter().any(|(n, v)| n == "FALSE" && *v == 0)
                    && members.iter().any(|(n, v)| n == "TRUE" && *v == 1)
            }
            _ => false,
        }
    }
    /// The same type with every byte-order flag cleared (how it looks in memory).
    pub fn to_le(&self) -> Dtype {
        match self {
            Dtype::Int { size, signed, .. } => Dtype::Int { size: *size, signed: *signed, big_endian: false },
            Dtype::Float { size, .. } => Dtype::Float { size: *size, big_endian: false },
            Dtype::Enum { base, members } => Dtype::Enum { base: Box::new(base.to_le()), members: members.clone() },
            Dtype::Compound { size, fields } => Dtype::Compound {
                size: *size,
                fields: fields
                    .iter()
                    .map(|f| Field { name: f.name.clone(), offset: f.offset, dtype: f.dtype.to_le() })
                    .collect(),
            },
            o => o.clone(),
        }
    }

    /// Build the HDF5 datatype (little-endian).
    pub fn to_hid(&self) -> Result<Hid> {
        let p = "<datatype>";
        locked(|| unsafe {
            match self {
                Dtype::Int { size, signed, .. } => {
                    let base = match (size, signed) {
                        (1, true) => *g::H5T_STD_I8LE,
                        (2, true) => *g::H5T_STD_I16LE,
                        (4, true) => *g::H5T_STD_I32LE,
                        (8, true) => *g::H5T_STD_I64LE,
                        (1, false) => *g::H5T_STD_U8LE,
                        (2, false) => *g::H5T_STD_U16LE,
                        (4, false) => *g::H5T_STD_U32LE,
                        (8, false) => *g::H5T_STD_U64LE,
                        _ => return Err(MarquetError::Unsupported(format!("integer of {size} bytes"))),
                    };
                    Hid::new(h5t::H5Tcopy(base), p, "H5Tcopy")
                }
                Dtype::Float { size, .. } => {
                    let base = match size {
                        4 => *g::H5T_IEEE_F32LE,
                        8 => *g::H5T_IEEE_F64LE,
                        _ => return Err(MarquetError::Unsupported(format!("float of {size} bytes"))),
                    };
                    Hid::new(h5t::H5Tcopy(base), p, "H5Tcopy")
                }
                Dtype::FixedString { size, utf8, nullterm, spacepad } => {
                    let t = Hid::new(h5t::H5Tcopy(*g::H5T_C_S1), p, "H5Tcopy")?;
                    check(h5t::H5Tset_size(t.0, (*size).max(1)), p, "H5Tset_size")?;
                    let pad = if *nullterm {
                        H5T_str_t::H5T_STR_NULLTERM
                    } else if *spacepad {
                        H5T_str_t::H5T_STR_SPACEPAD
                    } else {
                        H5T_str_t::H5T_STR_NULLPAD
                    };
                    check(h5t::H5Tset_strpad(t.0, pad), p, "H5Tset_strpad")?;
                    let cs = if *utf8 { H5T_cset_t::H5T_CSET_UTF8 } else { H5T_cset_t::H5T_CSET_ASCII };
                    check(h5t::H5Tset_cset(t.0, cs), p, "H5Tset_cset")?;
                    Ok(t)
                }
                Dtype::VarString { utf8 } => {
                    let t = Hid::new(h5t::H5Tcopy(*g::H5T_C_S1), p, "H5Tcopy")?;
                    check(h5t::H5Tset_size(t.0, h5t::H5T_VARIABLE), p, "H5Tset_size")?;
                    let cs = if *utf8 { H5T_cset_t::H5T_CSET_UTF8 } else { H5T_cset_t::H5T_CSET_ASCII };
                    check(h5t::H5Tset_cset(t.0, cs), p, "H5Tset_cset")?;
                    Ok(t)
                }
                Dtype::Enum { base, members } => {
                    let b = base.to_hid()?;
                    let t = Hid::new(h5t::H5Tenum_create(b.0), p, "H5Tenum_create")?;
                    let bsize = base.size();
                    for (name, v) in members {
                        let n = cstr(name)?;
                        let bytes = v.to_le_bytes();
                        check(
                            h5t::H5Tenum_insert(t.0, n.as_ptr(), bytes[..bsize].as_ptr() as *const c_void),
                            p,
                            "H5Tenum_insert",
                        )?;
                    }
                    Ok(t)
                }
                Dtype::Compound { size, fields } => {
                    let t = Hid::new(h5t::H5Tcreate(H5T_class_t::H5T_COMPOUND, *size), p, "H5Tcreate")?;
                    for f in fields {
                        let ft = f.dtype.to_hid()?;
                        let n = cstr(&f.name)?;
                        check(h5t::H5Tinsert(t.0, n.as_ptr(), f.offset, ft.0), p, "H5Tinsert")?;
                    }
                    Ok(t)
                }
                Dtype::Opaque { size, tag } => {
                    let t = Hid::new(h5t::H5Tcreate(H5T_class_t::H5T_OPAQUE, *size), p, "H5Tcreate")?;
                    let tg = cstr(tag)?;
                    check(h5t::H5Tset_tag(t.0, tg.as_ptr()), p, "H5Tset_tag")?;
                    Ok(t)
                }
                Dtype::StdRef => Hid::new(h5t::H5Tcopy(*g::H5T_STD_REF), p, "H5Tcopy"),
                Dtype::ObjRef => Hid::new(h5t::H5Tcopy(*g::H5T_STD_REF_OBJ), p, "H5Tcopy"),
                Dtype::Other { class, .. } => Err(MarquetError::Unsupported(format!("cannot create {class} datatype"))),
            }
        })
    }

    /// Describe an HDF5 datatype.
    pub fn from_hid(t: hid_t) -> Result<Dtype> {
        let p = "<datatype>";
        locked(|| unsafe {
            let class = h5t::H5Tget_class(t);
            let size = h5t::H5Tget_size(t);
            let be = || h5t::H5Tget_order(t) == H5T_order_t::H5T_ORDER_BE;
            Ok(match class {
                H5T_class_t::H5T_INTEGER => Dtype::Int {
                    size,
                    signed: h5t::H5Tget_sign(t) == H5T_sign_t::H5T_SGN_2,
                    big_endian: be(),
                },
                H5T_class_t::H5T_FLOAT => Dtype::Float { size, big_endian: be() },
                H5T_class_t::H5T_STRING => {
                    let utf8 = h5t::H5Tget_cset(t) == H5T_cset_t::H5T_CSET_UTF8;
                    if h5t::H5Tis_variable_str(t) > 0 {
                        Dtype::VarString { utf8 }
                    } else {
                        let pad = h5t::H5Tget_strpad(t);
                        Dtype::FixedString {
                            size,
                            utf8,
                            nullterm: pad == H5T_str_t::H5T_STR_NULLTERM,
                            spacepad: pad == H5T_str_t::H5T_STR_SPACEPAD,
                        }
                    }
                }
                H5T_class_t::H5T_ENUM => {
                    let sup = Hid::new(h5t::H5Tget_super(t), p, "H5Tget_super")?;
                    let base = Dtype::from_hid(sup.0)?;
                    let n = check(h5t::H5Tget_nmembers(t), p, "H5Tget_nmembers")?;
                    let bsize = base.size().min(8);
                    let signed = matches!(base, Dtype::Int { signed: true, .. });
                    let mut members = Vec::with_capacity(n as usize);
                    for i in 0..n as c_uint {
                        let name = take_cstring(h5t::H5Tget_member_name(t, i));
                        // The value comes back in the enum's own (file) byte order.
                        let mut buf = [0u8; 8];
                        check(h5t::H5Tget_member_value(t, i, buf.as_mut_ptr() as *mut c_void), p, "H5Tget_member_value")?;
                        let raw = &buf[..bsize];
                        let v = int_from_bytes(raw, signed, matches!(base, Dtype::Int { big_endian: true, .. }));
                        members.push((name, v));
                    }
                    Dtype::Enum { base: Box::new(base), members }
                }
                H5T_class_t::H5T_COMPOUND => {
                    let n = check(h5t::H5Tget_nmembers(t), p, "H5Tget_nmembers")?;
                    let mut fields = Vec::with_capacity(n as usize);
                    for i in 0..n as c_uint {
                        let name = take_cstring(h5t::H5Tget_member_name(t, i));
                        let offset = h5t::H5Tget_member_offset(t, i);
                        let ft = Hid::new(h5t::H5Tget_member_type(t, i), p, "H5Tget_member_type")?;
                        fields.push(Field { name, offset, dtype: Dtype::from_hid(ft.0)? });
                    }
                    Dtype::Compound { size, fields }
                }
                H5T_class_t::H5T_OPAQUE => Dtype::Opaque { size, tag: take_cstring(h5t::H5Tget_tag(t)) },
                H5T_class_t::H5T_REFERENCE => {
                    if h5t::H5Tequal(t, *g::H5T_STD_REF) > 0 {
                        Dtype::StdRef
                    } else if h5t::H5Tequal(t, *g::H5T_STD_REF_OBJ) > 0 {
                        Dtype::ObjRef
                    } else {
                        Dtype::Other { class: "region reference".into(), size }
                    }
                }
                other => Dtype::Other { class: format!("{other:?}"), size },
            })
        })
    }

    /// The in-memory type used to read a file type of this description: the same
    /// layout converted to little-endian; enums read as their base integer.
    fn mem_for_read(&self) -> Dtype {
        self.to_le()
    }
}

impl std::fmt::Display for Dtype {
    /// A short spelling: `uint64`, `float32`, `string[13] ascii`, `enum<int8>{FALSE, TRUE}`,
    /// `compound{x: float64, y: float64}`, `opaque[21] "WKB"`, `reference`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Dtype::Int { size, signed, big_endian } => {
                write!(f, "{}int{}{}", if *signed { "" } else { "u" }, size * 8, if *big_endian { " (be)" } else { "" })
            }
            Dtype::Float { size, big_endian } => write!(f, "float{}{}", size * 8, if *big_endian { " (be)" } else { "" }),
            Dtype::FixedString { size, utf8, .. } => write!(f, "string[{size}] {}", if *utf8 { "utf-8" } else { "ascii" }),
            Dtype::VarString { utf8 } => write!(f, "vlen string {}", if *utf8 { "utf-8" } else { "ascii" }),
            Dtype::Enum { base, members } => {
                let names: Vec<&str> = members.iter().take(6).map(|(n, _)| n.as_str()).collect();
                write!(f, "enum<{base}>{{{}{}}}", names.join(", "), if members.len() > 6 { ", …" } else { "" })
            }
            Dtype::Compound { fields, .. } => {
                let v: Vec<String> = fields.iter().map(|x| format!("{}: {}", x.name, x.dtype)).collect();
                write!(f, "compound{{{}}}", v.join(", "))
            }
            Dtype::Opaque { size, tag } => write!(f, "opaque[{size}] {tag:?}"),
            Dtype::StdRef => write!(f, "reference"),
            Dtype::ObjRef => write!(f, "object reference (deprecated)"),
            Dtype::Other { class, size } => write!(f, "{class}[{size}]"),
        }
    }
}

fn take_cstring(p: *mut c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: HDF5 returned a NUL-terminated string it allocated; we free it after copying.
    let s = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
    unsafe { hdf5_sys::h5::H5free_memory(p as *mut c_void) };
    s
}

/// Decode an integer of 1..=8 bytes.
pub fn int_from_bytes(raw: &[u8], signed: bool, big_endian: bool) -> i64 {
    let n = raw.len().min(8);
    let mut b = [0u8; 8];
    if big_endian {
        for i in 0..n {
            b[i] = raw[n - 1 - i];
        }
    } else {
        b[..n].copy_from_slice(&raw[..n]);
    }
    if signed && n < 8 && (b[n - 1] & 0x80) != 0 {
        for x in b.iter_mut().skip(n) {
            *x = 0xff;
        }
    }
    i64::from_le_bytes(b)
}

/// The shape of an attribute or dataset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Space {
    Scalar,
    Null,
    Simple(Vec<u64>),
}

impl Space {
    /// Number of elements (scalar = 1, null = 0).
    pub fn npoints(&self) -> u64 {
        match self {
            Space::Scalar => 1,
            Space::Null => 0,
            Space::Simple(d) => d.iter().product(),
        }
    }
    fn to_hid(&self, maxdims: Option<&[u64]>) -> Result<Hid> {
        locked(|| unsafe {
            match self {
                Space::Scalar => Hid::new(h5s::H5Screate(H5S_class_t::H5S_SCALAR), "<space>", "H5Screate"),
                Space::Null => Hid::new(h5s::H5Screate(H5S_class_t::H5S_NULL), "<space>", "H5Screate"),
                Space::Simple(d) => {
                    let max: Option<Vec<hsize_t>> = maxdims.map(|m| m.to_vec());
                    Hid::new(
                        h5s::H5Screate_simple(
                            d.len() as i32,
                            d.as_ptr(),
                            max.as_ref().map(|m| m.as_ptr()).unwrap_or(ptr::null()),
                        ),
                        "<space>",
                        "H5Screate_simple",
                    )
                }
            }
        })
    }
    fn from_hid(s: hid_t) -> Result<Space> {
        locked(|| unsafe {
            match h5s::H5Sget_simple_extent_type(s) {
                H5S_class_t::H5S_SCALAR => Ok(Space::Scalar),
                H5S_class_t::H5S_NULL => Ok(Space::Null),
                H5S_class_t::H5S_SIMPLE => {
                    let nd = check(h5s::H5Sget_simple_extent_ndims(s), "<space>", "H5Sget_simple_extent_ndims")?;
                    let mut d = vec![0 as hsize_t; nd as usize];
                    check(
                        h5s::H5Sget_simple_extent_dims(s, d.as_mut_ptr(), ptr::null_mut()),
                        "<space>",
                        "H5Sget_simple_extent_dims",
                    )?;
                    Ok(Space::Simple(d))
                }
                _ => Err(MarquetError::Hdf5 { path: "<space>".into(), message: "invalid dataspace".into() }),
            }
        })
    }
}

/// An attribute read from a file: its file datatype, its shape, and its elements as
/// little-endian bytes in the layout of `dtype.to_le()` (strings as UTF-8 `String`s).
#[derive(Debug, Clone)]
pub struct RawAttr {
    pub dtype: Dtype,
    pub space: Space,
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
pub fn attr_read_refs(loc: hid_t, name: &str) -> Result<Option<(Vec<Option<String>>, Dtype, Space)>> {
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
                let oid = hdf5::silence_errors(true);
                let _ = oid;
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

/// A filter in a dataset's pipeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Filter {
    Shuffle,
    Deflate(u32),
    /// The registered Zstandard filter 32015 with `cd_values = [level]` (the convention
    /// of the reference plugin shipped by hdf5plugin; see [`codec`]).
    Zstd(u32),
    /// Any other registered filter by id and client data (also 32015 with no or several
    /// `cd_values`, as other writers may store it).
    Other(i32, Vec<u32>),
}

impl Filter {
    /// The HDF5 filter id.
    pub fn id(&self) -> i32 {
        match self {
            Filter::Shuffle => codec::FILTER_SHUFFLE,
            Filter::Deflate(_) => codec::FILTER_DEFLATE,
            Filter::Zstd(_) => codec::FILTER_ZSTD,
            Filter::Other(id, _) => *id,
        }
    }

    /// Is this one of the filters built into the HDF5 library (ids below 256:
    /// deflate, shuffle, Fletcher-32, szip, N-bit, scale-offset), which any HDF5 reader
    /// decodes without a plugin? (szip is optional in HDF5 builds, but a predefined id.)
    pub fn is_predefined(&self) -> bool {
        (0..256).contains(&self.id())
    }

    /// The usual name of a registered filter id (the HDF Group's registry), if known.
    pub fn registered_name(id: i32) -> Option<&'static str> {
        Some(match id {
            1 => "deflate",
            2 => "shuffle",
            3 => "fletcher32",
            4 => "szip",
            5 => "nbit",
            6 => "scaleoffset",
            307 => "bzip2",
            32000 => "lzf",
            32001 => "blosc",
            32004 => "lz4",
            32008 => "bitshuffle",
            32013 => "zfp",
            32015 => "zstd",
            32017 => "sz",
            32026 => "blosc2",
            _ => return None,
        })
    }
}

impl std::fmt::Display for Filter {
    /// `shuffle`, `deflate(4)`, `zstd(1)`, or `filter 307 (bzip2) [9]` for others.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Filter::Shuffle => f.write_str("shuffle"),
            Filter::Deflate(l) => write!(f, "deflate({l})"),
            Filter::Zstd(l) => write!(f, "zstd({l})"),
            Filter::Other(id, cd) => {
                write!(f, "filter {id}")?;
                if let Some(n) = Filter::registered_name(*id) {
                    write!(f, " ({n})")?;
                }
                if !cd.is_empty() {
                    write!(f, " {cd:?}")?;
                }
                Ok(())
            }
        }
    }
}

/// The name HDF5 records for our 32015 filter, as the reference plugin spells it.
static ZSTD_FILTER_NAME: &CStr = c"Zstandard compression: http://www.zstd.net";

/// HDF5 filter callback for the registered Zstandard filter 32015 (used by HDF5's own
/// pipeline: partial chunks and foreign layouts). The codec is [`codec`]'s, so chunks
/// written here and by the direct chunk path are the same bytes.
extern "C" fn zstd_filter(
    flags: c_uint,
    cd_nelmts: usize,
    cd_values: *const c_uint,
    nbytes: usize,
    buf_size: *mut usize,
    buf: *mut *mut c_void,
) -> usize {
    // No unwinding across the C boundary: any panic is a filter failure (0).
    std::panic::catch_unwind(|| {
        // SAFETY: HDF5 passes `cd_nelmts` values, a buffer `*buf` of at least `nbytes`
        // valid bytes allocated with its allocator, and writable `buf`/`buf_size`.
        unsafe {
            if buf.is_null() || (*buf).is_null() || buf_size.is_null() {
                return 0;
            }
            let input = std::slice::from_raw_parts(*buf as *const u8, nbytes);
            let cd: &[c_uint] = if cd_nelmts == 0 || cd_values.is_null() {
                &[]
            } else {
                std::slice::from_raw_parts(cd_values, cd_nelmts)
            };
            let out = if flags & hdf5_sys::h5z::H5Z_FLAG_REVERSE != 0 {
                codec::zstd_decompress(input, codec::MAX_CHUNK_BYTES as usize)
            } else {
                codec::zstd_compress(input, codec::zstd_level(cd))
            };
            let Ok(out) = out else { return 0 };
            let nb = hdf5_sys::h5::H5allocate_memory(out.len().max(1), 0);
            if nb.is_null() {
                return 0;
            }
            ptr::copy_nonoverlapping(out.as_ptr(), nb as *mut u8, out.len());
            hdf5_sys::h5::H5free_memory(*buf);
            *buf = nb;
            *buf_size = out.len().max(1);
            out.len()
        }
    })
    .unwrap_or(0)
}

/// Register the Zstandard filter 32015 with the HDF5 library (once per process), so that
/// datasets using it can be written and read by HDF5's pipeline. Called by every file
/// open and create of this crate.
pub fn register_filters() -> Result<()> {
    static REGISTERED: std::sync::OnceLock<std::result::Result<(), String>> = std::sync::OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            let cls = hdf5_sys::h5z::H5Z_class2_t {
                version: hdf5_sys::h5z::H5Z_CLASS_T_VERS as i32,
                id: codec::FILTER_ZSTD,
                encoder_present: 1,
                decoder_present: 1,
                name: ZSTD_FILTER_NAME.as_ptr(),
                can_apply: None,
                set_local: None,
                filter: Some(zstd_filter),
            };
            // H5Zregister copies the class; the name is 'static.
            locked(|| unsafe {
                check(hdf5_sys::h5z::H5Zregister(&cls as *const _ as *const c_void), "<filter 32015>", "H5Zregister")
            })
            .map(|_| ())
            .map_err(|e| e.to_string())
        })
        .clone()
        .map_err(|m| MarquetError::Hdf5 { path: "<filter 32015>".into(), message: m })
}

/// Is filter `id` available to HDF5's pipeline (`H5Zfilter_avail`)?
pub fn filter_available(id: i32) -> bool {
    locked(|| unsafe { hdf5_sys::h5z::H5Zfilter_avail(id) }) > 0
}

/// Where a stored chunk is: its filter mask and byte size, or `None` when unallocated.
pub fn chunk_info(ds: hid_t, offset: u64, path: &str) -> Result<Option<(u32, u64)>> {
    Ok(chunk_location(ds, offset, path)?.map(|(mask, _, size)| (mask, size)))
}

/// Where a stored chunk is: its filter mask, file address and byte size, or `None` when
/// unallocated.
pub fn chunk_location(ds: hid_t, offset: u64, path: &str) -> Result<Option<(u32, u64, u64)>> {
    locked(|| unsafe {
        let mut mask: c_uint = 0;
        let mut addr: hdf5_sys::h5::haddr_t = 0;
        let mut size: hsize_t = 0;
        check(
            h5d::H5Dget_chunk_info_by_coord(ds, &offset, &mut mask, &mut addr, &mut size),
            path,
            "H5Dget_chunk_info_by_coord",
        )?;
        Ok(if addr == hdf5_sys::h5::HADDR_UNDEF || size == 0 { None } else { Some((mask, addr, size)) })
    })
}

/// Which object `id` is, for the life of this process: the serial number HDF5 gives each
/// file open (`fileno`, never reused within a process) and the object's token (address)
/// in that file.
pub fn object_identity(id: hid_t, path: &str) -> Result<(u64, [u8; 16])> {
    locked(|| unsafe {
        let mut info = std::mem::MaybeUninit::<h5o::H5O_info2_t>::uninit();
        check(h5o::H5Oget_info3(id, info.as_mut_ptr(), h5o::H5O_INFO_BASIC), path, "H5Oget_info3")?;
        let info = info.assume_init();
        // SAFETY: H5O_token_t is a repr(C) struct holding H5O_MAX_TOKEN_SIZE (16) bytes.
        let token: [u8; 16] = std::mem::transmute::<h5o::H5O_token_t, [u8; 16]>(info.token);
        // c_ulong: 64 bits here, 32 on Windows.
        #[allow(clippy::unnecessary_cast)]
        Ok((info.fileno as u64, token))
    })
}

/// Counts every change this process makes to dataset contents, extents or links through
/// this module; decoded-chunk caches ([`direct`]) are valid only while it stands still.
static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The current value of the write counter (see [`WRITES`]).
pub(crate) fn write_generation() -> u64 {
    WRITES.load(std::sync::atomic::Ordering::SeqCst)
}

/// Record a change to dataset contents, extents or links, made or attempted (a failed
/// call may have changed some of it); pass its result through.
fn wrote<T>(r: Result<T>) -> Result<T> {
    WRITES.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    r
}

/// Read the stored (still filtered) bytes of the chunk at element `offset`
/// (`H5Dread_chunk`): `size` must come from [`chunk_info`].
pub fn chunk_read_raw(ds: hid_t, offset: u64, size: u64, path: &str) -> Result<(u32, Vec<u8>)> {
    let len = usize::try_from(size).map_err(|_| MarquetError::spec(path, "HDF5 chunk", format!("chunk of {size} bytes")))?;
    let mut buf = vec![0u8; len];
    let mut mask: u32 = 0;
    #[allow(unused_mut)]
    let mut got: usize = len;
    // HDF5 2.0's H5Dread_chunk2 checks the buffer size; 1.12 / 1.14 (a shared HDF5, see
    // build.rs) have only the unchecked call, whose buffer `chunk_info`'s size fits.
    #[cfg(hdf5_2)]
    locked(|| unsafe {
        check(
            h5d::H5Dread_chunk2(ds, H5P_DEFAULT, &offset, &mut mask, buf.as_mut_ptr() as *mut c_void, &mut got),
            path,
            "H5Dread_chunk",
        )
    })?;
    #[cfg(not(hdf5_2))]
    locked(|| unsafe {
        check(h5d::H5Dread_chunk1(ds, H5P_DEFAULT, &offset, &mut mask, buf.as_mut_ptr() as *mut c_void), path, "H5Dread_chunk")
    })?;
    if got != len {
        return Err(MarquetError::spec(path, "HDF5 chunk", format!("chunk at element {offset} holds {got} bytes, its index says {len}")));
    }
    Ok((mask, buf))
}

/// Write already filtered bytes as the chunk at element `offset` (`H5Dwrite_chunk`,
/// filter mask 0: every filter of the pipeline was applied).
pub fn chunk_write_raw(ds: hid_t, offset: u64, data: &[u8], path: &str) -> Result<()> {
    wrote(locked(|| unsafe {
        check(
            h5d::H5Dwrite_chunk(ds, H5P_DEFAULT, 0, &offset, data.len(), data.as_ptr() as *const c_void),
            path,
            "H5Dwrite_chunk",
        )
    }))
    .map(|_| ())
}

/// How to create a dataset.
#[derive(Debug, Clone)]
pub struct DatasetSpec {
    pub dtype: Dtype,
    /// Initial extent.
    pub len: u64,
    /// Chunk length in elements; `None` = contiguous (fixed size).
    pub chunk: Option<u64>,
    pub filters: Vec<Filter>,
    /// User-defined fill value bytes (little-endian, `dtype` layout); `None` = none declared.
    pub fill: Option<Vec<u8>>,
}

/// Add `filters` to a dataset creation property list, in pipeline order. Call inside
/// `locked`.
unsafe fn set_filters(dcpl: hid_t, filters: &[Filter], name: &str) -> Result<()> {
    for f in filters {
        match f {
            Filter::Shuffle => check(h5p::H5Pset_shuffle(dcpl), name, "H5Pset_shuffle")?,
            Filter::Deflate(l) => check(h5p::H5Pset_deflate(dcpl, *l), name, "H5Pset_deflate")?,
            Filter::Zstd(l) => check(
                h5p::H5Pset_filter(dcpl, codec::FILTER_ZSTD, hdf5_sys::h5z::H5Z_FLAG_OPTIONAL, 1, l),
                name,
                "H5Pset_filter",
            )?,
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
    pub dtype: Dtype,
    pub dims: Vec<u64>,
    pub maxdims: Vec<u64>,
    pub chunk: Option<Vec<u64>>,
    /// `Some(bytes)` when a user-defined fill value is declared (little-endian layout).
    pub fill: Option<Vec<u8>>,
    pub filters: Vec<Filter>,
    /// True when the datatype is a committed (named) datatype.
    pub committed_type: bool,
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
                Dtype::VarString { .. } | Dtype::StdRef | Dtype::ObjRef | Dtype::Other { .. } => Some(Vec::new()),
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

fn select_1d(ds: hid_t, start: u64, count: u64, path: &str) -> Result<(Hid, Hid)> {
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
    let r = locked(|| unsafe {
        check(h5d::H5Dwrite(ds, mt.0, ms.0, fs.0, H5P_DEFAULT, data.as_ptr() as *const c_void), path, "H5Dwrite")
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

/// Flush the file that `loc` belongs to.
pub fn flush(loc: hid_t) -> Result<()> {
    locked(|| unsafe {
        check(hdf5_sys::h5f::H5Fflush(loc, hdf5_sys::h5f::H5F_scope_t::H5F_SCOPE_LOCAL), "<file>", "H5Fflush")
    })
    .map(|_| ())
}

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

/// Unused helper kept to silence a lint on `herr_t` import in some cfgs.
#[allow(dead_code)]
fn _herr(_: herr_t) {}

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
    let r = locked(|| unsafe {
        check(h5d::H5Dwrite(ds, mt.0, ms.0, fs.0, H5P_DEFAULT, data.as_ptr() as *const c_void), path, "H5Dwrite")
    });
    wrote(r).map(|_| ())
}
