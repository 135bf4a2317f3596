//! `marquet_geometry_info`: a geometry column's metadata as read from the file (storage
//! form, geometry types, BBOX, CRS, edges, orientation, covering column).

use std::ffi::c_char;

use mq::{Crs, GeometryColumnInfo, StorageForm};

use crate::ffi::{self, Handle, Kind};
use crate::options::{dims_to_c, edges_to_c, marquet_crs, marquet_form};
use crate::panic::{guard, guard_void};
use crate::status::{FfiError, FfiResult};

/// A snapshot of one geometry column's metadata (opaque), from
/// `marquet_table_geometry_info`; released by `marquet_geometry_info_free`. It does not
/// change when rows are appended later: ask again for fresh values.
pub struct marquet_geometry_info {
    pub(crate) info: GeometryColumnInfo,
}

impl Handle for marquet_geometry_info {
    const KIND: Kind = Kind::GeometryInfo;
    const NAME: &'static str = "info";
}

fn with_info<T>(info: *const marquet_geometry_info, out: *mut T, f: impl FnOnce(&GeometryColumnInfo) -> FfiResult<T>) -> i32 {
    guard(|| {
        let out = ffi::out_ptr(out, "out")?;
        let i = unsafe { ffi::handle(info)? };
        let v = f(&i.info)?;
        unsafe { ffi::write(out, v) };
        Ok(())
    })
}

/// Free a geometry info (NULL is a no-op).
#[no_mangle]
pub unsafe extern "C" fn marquet_geometry_info_free(info: *mut marquet_geometry_info) {
    guard_void(|| unsafe { ffi::free_handle(info) })
}

/// The storage form (a `MARQUET_FORM_*` value).
#[no_mangle]
pub unsafe extern "C" fn marquet_geometry_info_form(info: *const marquet_geometry_info, form: *mut i32) -> i32 {
    with_info(info, form, |i| {
        Ok(match i.form {
            StorageForm::VarWkb => marquet_form::MARQUET_FORM_VAR_WKB,
            StorageForm::FixedWkb { .. } => marquet_form::MARQUET_FORM_FIXED_WKB,
            StorageForm::Point { .. } => marquet_form::MARQUET_FORM_POINT,
        } as i32)
    })
}

/// The WKB size in bytes of a fixed-length WKB column (0 for the other forms).
#[no_mangle]
pub unsafe extern "C" fn marquet_geometry_info_fixed_size(info: *const marquet_geometry_info, size: *mut i64) -> i32 {
    with_info(info, size, |i| {
        Ok(match i.form {
            StorageForm::FixedWkb { size } => size as i64,
            _ => 0,
        })
    })
}

/// The dimensions (`MARQUET_DIMENSIONS_*`) and coordinate width (`*is_f32` 1 for
/// float32, 0 for float64) of a point column; `MARQUET_STATUS_INVALID_ARGUMENT` for
/// the WKB forms (whose dimensions are in the geometry types).
#[no_mangle]
pub unsafe extern "C" fn marquet_geometry_info_point_layout(
    info: *const marquet_geometry_info,
    dimensions: *mut i32,
    is_f32: *mut i32,
) -> i32 {
    guard(|| {
        let d = ffi::out_ptr(dimensions, "dimensions")?;
        let f = ffi::out_ptr(is_f32, "is_f32")?;
        let i = unsafe { ffi::handle(info)? };
        let StorageForm::Point { dims, f32 } = i.info.form else {
            return Err(FfiError::invalid(format!("{} is not a point column", i.info.path)));
        };
        unsafe {
            ffi::write(d, dims_to_c(dims) as i32);
            ffi::write(f, f32 as i32);
        }
        Ok(())
    })
}

/// The declared geometry types as ISO WKB codes (e.g. 1 = Point, 1003 = Polygon Z),
/// ascending, into `codes` (`codes_len` entries). `*count` receives the number of
/// types on success and on `MARQUET_STATUS_BUFFER_TOO_SMALL`; 0 means the types are
/// unknown (an empty GEOMETRY_TYPES, HEP002 §6.3). `codes` may be NULL when
/// `codes_len` is 0.
#[no_mangle]
pub unsafe extern "C" fn marquet_geometry_info_types(
    info: *const marquet_geometry_info,
    codes: *mut i32,
    codes_len: usize,
    count: *mut usize,
) -> i32 {
    guard(|| {
        let i = unsafe { ffi::handle(info)? };
        let out = unsafe { ffi::out_slice(codes, codes_len, "codes")? };
        let mut v: Vec<i32> = i.info.types.iter().flatten().map(|t| t.iso_code() as i32).collect();
        v.sort_unstable();
        unsafe { ffi::write_opt(count, v.len()) };
        if codes_len < v.len() {
            return Err(ffi::too_small("codes", codes_len, v.len()));
        }
        out[..v.len()].copy_from_slice(&v);
        Ok(())
    })
}

/// The BBOX attribute (HEP002 §6.4). `bbox` receives 8 doubles — xmin, ymin, zmin,
/// mmin, xmax, ymax, zmax, mmax — (`bbox_len` must be at least 8); `*present` is 1
/// when the column has a BBOX (0: no BBOX, and `bbox` is left untouched); `*has_z` and
/// `*has_m` are 1 when the BBOX carries Z / M bounds (otherwise those entries are NaN).
#[no_mangle]
pub unsafe extern "C" fn marquet_geometry_info_bbox(
    info: *const marquet_geometry_info,
    bbox: *mut f64,
    bbox_len: usize,
    present: *mut i32,
    has_z: *mut i32,
    has_m: *mut i32,
) -> i32 {
    guard(|| {
        let i = unsafe { ffi::handle(info)? };
        let out = unsafe { ffi::out_slice(bbox, bbox_len, "bbox")? };
        let p = ffi::out_ptr(present, "present")?;
        let hz = ffi::out_ptr(has_z, "has_z")?;
        let hm = ffi::out_ptr(has_m, "has_m")?;
        if bbox_len < 8 {
            return Err(FfiError::invalid(format!("bbox holds {bbox_len} doubles, 8 are needed")));
        }
        match i.info.bbox {
            None => unsafe {
                ffi::write(p, 0);
                ffi::write(hz, 0);
                ffi::write(hm, 0);
            },
            Some((b, z, m)) => {
                let nz = |v: f64, on: bool| if on { v } else { f64::NAN };
                out[..8].copy_from_slice(&[
                    b.xmin,
                    b.ymin,
                    nz(b.zmin, z),
                    nz(b.mmin, m),
                    b.xmax,
                    b.ymax,
                    nz(b.zmax, z),
                    nz(b.mmax, m),
                ]);
                unsafe {
                    ffi::write(p, 1);
                    ffi::write(hz, z as i32);
                    ffi::write(hm, m as i32);
                }
            }
        }
        Ok(())
    })
}

/// The CRS state (a `MARQUET_CRS_*` value).
#[no_mangle]
pub unsafe extern "C" fn marquet_geometry_info_crs(info: *const marquet_geometry_info, crs: *mut i32) -> i32 {
    with_info(info, crs, |i| {
        Ok(match i.crs {
            Crs::Default => marquet_crs::MARQUET_CRS_DEFAULT,
            Crs::ProjJson(_) => marquet_crs::MARQUET_CRS_PROJJSON,
            Crs::Unknown => marquet_crs::MARQUET_CRS_UNKNOWN,
        } as i32)
    })
}

/// The PROJJSON text of the CRS as a NUL-terminated string (empty when the CRS state is
/// not `MARQUET_CRS_PROJJSON`); `buf` / `needed` as for `marquet_file_table_name`.
#[no_mangle]
pub unsafe extern "C" fn marquet_geometry_info_crs_projjson(
    info: *const marquet_geometry_info,
    buf: *mut c_char,
    buf_len: usize,
    needed: *mut usize,
) -> i32 {
    guard(|| {
        let i = unsafe { ffi::handle(info)? };
        let s = match &i.info.crs {
            Crs::ProjJson(d) => d.as_str(),
            _ => "",
        };
        unsafe { ffi::copy_str_out(s, buf, buf_len, needed) }
    })
}

/// The EDGES value (a `MARQUET_EDGES_*` value; PLANAR when the attribute is absent).
#[no_mangle]
pub unsafe extern "C" fn marquet_geometry_info_edges(info: *const marquet_geometry_info, edges: *mut i32) -> i32 {
    with_info(info, edges, |i| Ok(edges_to_c(&i.edges) as i32))
}

/// 1 when ORIENTATION declares counterclockwise exterior rings, else 0.
#[no_mangle]
pub unsafe extern "C" fn marquet_geometry_info_orientation(info: *const marquet_geometry_info, ccw: *mut i32) -> i32 {
    with_info(info, ccw, |i| Ok(i.orientation_ccw as i32))
}

/// The name of the covering column as a NUL-terminated string (empty when there is
/// none); `buf` / `needed` as for `marquet_file_table_name`.
#[no_mangle]
pub unsafe extern "C" fn marquet_geometry_info_covering(
    info: *const marquet_geometry_info,
    buf: *mut c_char,
    buf_len: usize,
    needed: *mut usize,
) -> i32 {
    guard(|| {
        let i = unsafe { ffi::handle(info)? };
        unsafe { ffi::copy_str_out(i.info.covering.as_deref().unwrap_or(""), buf, buf_len, needed) }
    })
}
