//! HDF5 datatypes and dataspaces as values: [`Dtype`] (the byte layouts HEP001 uses) and [`Space`].
#![allow(unsafe_code)]

use std::ffi::CStr;
use std::os::raw::{c_char, c_uint, c_void};
use std::ptr;

use hdf5::globals as g;
use hdf5_sys::h5::hsize_t;
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5s::H5S_class_t;
use hdf5_sys::h5t::{H5T_class_t, H5T_cset_t, H5T_order_t, H5T_sign_t, H5T_str_t};
use hdf5_sys::{h5r, h5s, h5t};

use crate::error::{MarquetError, Result};

use super::*;

/// A field of a compound [`Dtype`].
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// Field name, e.g. `"xmin"` (HEP002 identifies fields by name).
    pub name: String,
    /// Byte offset of the field in the compound element.
    pub offset: usize,
    /// The field's datatype.
    pub dtype: Dtype,
}

/// A description of an HDF5 datatype, precise enough to write exactly the types the
/// HEPs name and to read any type leniently (ruling R3).
///
/// When a `Dtype` is turned into an HDF5 type it is always little-endian; the
/// `big_endian` flags record what a *file* type was when read.
#[derive(Debug, Clone, PartialEq)]
pub enum Dtype {
    /// An integer (`H5T_INTEGER`).
    Int {
        /// Bytes per element (1, 2, 4 or 8 in the types HEP001 names).
        size: usize,
        /// Two's complement signed.
        signed: bool,
        /// Big-endian in the file.
        big_endian: bool,
    },
    /// An IEEE floating-point number (`H5T_FLOAT`).
    Float {
        /// Bytes per element (2, 4 or 8 in the types HEP001 names).
        size: usize,
        /// Big-endian in the file.
        big_endian: bool,
    },
    /// Fixed-length string; `nullterm` false means null-padded (or space-padded when `spacepad`).
    FixedString {
        /// Bytes per element, terminator or padding included.
        size: usize,
        /// Character set UTF-8 (else ASCII).
        utf8: bool,
        /// `H5T_STR_NULLTERM`.
        nullterm: bool,
        /// `H5T_STR_SPACEPAD`.
        spacepad: bool,
    },
    /// A variable-length string (read leniently, ruling R3; never written below a list column).
    VarString {
        /// Character set UTF-8 (else ASCII).
        utf8: bool,
    },
    /// An enumeration (`H5T_ENUM`): HEP001 booleans, GEOMETRY_TYPES, EDGES, ORIENTATION.
    Enum {
        /// The integer base type.
        base: Box<Dtype>,
        /// Member names and values, in definition order.
        members: Vec<(String, i64)>,
    },
    /// A compound (`H5T_COMPOUND`): boxes, point columns, index entries.
    Compound {
        /// Bytes per element.
        size: usize,
        /// The fields, in offset order.
        fields: Vec<Field>,
    },
    /// An opaque type (`H5T_OPAQUE`): fixed-length WKB is tagged `"WKB"` (HEP002 §7.3).
    Opaque {
        /// Bytes per element.
        size: usize,
        /// The opaque tag.
        tag: String,
    },
    /// `H5T_STD_REF` (new-style reference, 64 bytes in memory).
    StdRef,
    /// Deprecated `H5T_STD_REF_OBJ`.
    ObjRef,
    /// Anything else; read-only description.
    Other {
        /// The HDF5 type class, e.g. `"H5T_TIME"`.
        class: String,
        /// Bytes per element.
        size: usize,
    },
}

impl Dtype {
    /// `uint8` little-endian (`H5T_STD_U8LE`): WKB `VALUES`, `CHARS`, bitmaps.
    pub const U8: Dtype = Dtype::Int { size: 1, signed: false, big_endian: false };
    /// `uint16` little-endian: base of the GEOMETRY_TYPES enumeration (ruling R1), `node_size`.
    pub const U16: Dtype = Dtype::Int { size: 2, signed: false, big_endian: false };
    /// `uint64` little-endian: `NROWS`, `OFFSETS`, validity tokens.
    pub const U64: Dtype = Dtype::Int { size: 8, signed: false, big_endian: false };
    /// `int8` little-endian: base of the HEP001 boolean enumeration (§6).
    pub const I8: Dtype = Dtype::Int { size: 1, signed: true, big_endian: false };
    /// `int64` little-endian.
    pub const I64: Dtype = Dtype::Int { size: 8, signed: true, big_endian: false };
    /// IEEE `float32` little-endian.
    pub const F32: Dtype = Dtype::Float { size: 4, big_endian: false };
    /// IEEE `float64` little-endian: coordinates, boxes.
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

    internal_pub! {
        /// Build the HDF5 datatype (little-endian).
        fn to_hid(&self) -> Result<Hid> {
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
    }

    internal_pub! {
        /// Describe an HDF5 datatype.
        fn from_hid(t: hid_t) -> Result<Dtype> {
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
    }

    /// The in-memory type used to read a file type of this description: the same
    /// layout converted to little-endian; enums read as their base integer.
    pub(super) fn mem_for_read(&self) -> Dtype {
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
    /// A scalar dataspace: one element.
    Scalar,
    /// The null dataspace (`H5S_NULL`): no element at all.
    Null,
    /// A simple dataspace with these current dimensions.
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
    pub(super) fn to_hid(&self, maxdims: Option<&[u64]>) -> Result<Hid> {
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
    pub(super) fn from_hid(s: hid_t) -> Result<Space> {
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
                _ => Err(MarquetError::Hdf5 { path: "<space>".into(), message: "invalid dataspace".into(), stack: Vec::new() }),
            }
        })
    }
}
