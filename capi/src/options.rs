//! `marquet_geometry_column_options`: how a new geometry column is created, and the
//! enumerations it uses (storage form, dimensions, edges, CRS kind).

use std::ffi::c_char;

use mq::{Crs, Edges, GeometryColumnSpec, StorageForm};
use mq::Dimensions;

use crate::ffi::{self, Handle, Kind};
use crate::panic::{guard, guard_void};
use crate::status::{FfiError, FfiResult};

/// Storage form of a geometry column (HEP002 §7).
#[allow(non_camel_case_types)]
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum marquet_form {
    /// Variable-length WKB: a list column of bytes (§7.2).
    MARQUET_FORM_VAR_WKB = 1,
    /// Fixed-length WKB: an opaque column of one size (§7.3).
    MARQUET_FORM_FIXED_WKB = 2,
    /// Points: a compound column of coordinates (§7.4).
    MARQUET_FORM_POINT = 3,
}

/// Coordinate dimensions (ISO WKB: XY, XYZ, XYM, XYZM).
#[allow(non_camel_case_types)]
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum marquet_dimensions {
    /// x and y.
    MARQUET_DIMENSIONS_XY = 0,
    /// x, y and Z (ISO type code + 1000).
    MARQUET_DIMENSIONS_XYZ = 1,
    /// x, y and M (ISO type code + 2000).
    MARQUET_DIMENSIONS_XYM = 2,
    /// x, y, Z and M (ISO type code + 3000).
    MARQUET_DIMENSIONS_XYZM = 3,
}

/// Edge interpolation (HEP002 §9.1); values are the file's EDGES enumeration codes.
#[allow(non_camel_case_types)]
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum marquet_edges {
    /// Straight lines in coordinate space (also: no EDGES attribute).
    MARQUET_EDGES_PLANAR = 0,
    /// Great-circle arcs on the sphere.
    MARQUET_EDGES_SPHERICAL = 1,
    /// Ellipsoidal geodesics, Vincenty's algorithm.
    MARQUET_EDGES_VINCENTY = 2,
    /// Ellipsoidal geodesics, Thomas's algorithm.
    MARQUET_EDGES_THOMAS = 3,
    /// Ellipsoidal geodesics, Andoyer's algorithm.
    MARQUET_EDGES_ANDOYER = 4,
    /// Exact ellipsoidal geodesics (Karney).
    MARQUET_EDGES_KARNEY = 5,
    /// Read only: a member name this library does not know.
    MARQUET_EDGES_UNKNOWN = 99,
}

/// The state of a column's CRS (HEP002 §8.1).
#[allow(non_camel_case_types)]
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum marquet_crs {
    /// No CRS attribute: OGC:CRS84 (longitude, latitude on WGS 84).
    MARQUET_CRS_DEFAULT = 0,
    /// A PROJJSON document.
    MARQUET_CRS_PROJJSON = 1,
    /// Explicitly unknown / undefined (null-dataspace attribute).
    MARQUET_CRS_UNKNOWN = 2,
}

/// The dimensions of a `MARQUET_DIMENSIONS_*` value; any other value is an invalid argument.
pub fn dims_from_c(v: i32) -> FfiResult<Dimensions> {
    Ok(match v {
        0 => Dimensions::Xy,
        1 => Dimensions::Xyz,
        2 => Dimensions::Xym,
        3 => Dimensions::Xyzm,
        _ => return Err(FfiError::invalid(format!("dimensions {v} is not a MARQUET_DIMENSIONS_* value"))),
    })
}

/// The `MARQUET_DIMENSIONS_*` value of `d`.
pub fn dims_to_c(d: Dimensions) -> marquet_dimensions {
    match d {
        Dimensions::Xy => marquet_dimensions::MARQUET_DIMENSIONS_XY,
        Dimensions::Xyz => marquet_dimensions::MARQUET_DIMENSIONS_XYZ,
        Dimensions::Xym => marquet_dimensions::MARQUET_DIMENSIONS_XYM,
        Dimensions::Xyzm => marquet_dimensions::MARQUET_DIMENSIONS_XYZM,
    }
}

/// The `MARQUET_EDGES_*` value of `e` (`MARQUET_EDGES_UNKNOWN` for an unknown member name).
pub fn edges_to_c(e: &Edges) -> marquet_edges {
    use marquet_edges::*;
    match e {
        Edges::Planar => MARQUET_EDGES_PLANAR,
        Edges::Spherical => MARQUET_EDGES_SPHERICAL,
        Edges::Vincenty => MARQUET_EDGES_VINCENTY,
        Edges::Thomas => MARQUET_EDGES_THOMAS,
        Edges::Andoyer => MARQUET_EDGES_ANDOYER,
        Edges::Karney => MARQUET_EDGES_KARNEY,
        Edges::Unknown(_) => MARQUET_EDGES_UNKNOWN,
    }
}

/// Options for a new geometry column (opaque). Defaults: variable-length WKB, default
/// CRS (OGC:CRS84), no EDGES attribute (planar), no orientation, no covering column.
pub struct marquet_geometry_column_options {
    pub(crate) spec: GeometryColumnSpec,
}

impl Handle for marquet_geometry_column_options {
    const KIND: Kind = Kind::GeometryColumnOptions;
    const NAME: &'static str = "options";
}

fn with_opts(o: *mut marquet_geometry_column_options, f: impl FnOnce(&mut GeometryColumnSpec) -> FfiResult) -> i32 {
    guard(|| {
        let o = unsafe { ffi::handle_mut(o)? };
        f(&mut o.spec)
    })
}

/// Create geometry column options with the defaults. Free with
/// `marquet_geometry_column_options_free`.
#[no_mangle]
pub unsafe extern "C" fn marquet_geometry_column_options_new(out: *mut *mut marquet_geometry_column_options) -> i32 {
    guard(|| {
        let out = ffi::out_ptr(out, "out")?;
        let spec = GeometryColumnSpec::default().with_form(StorageForm::VarWkb);
        unsafe { ffi::write(out, ffi::into_handle(marquet_geometry_column_options { spec })) };
        Ok(())
    })
}

/// Free options (NULL is a no-op).
#[no_mangle]
pub unsafe extern "C" fn marquet_geometry_column_options_free(options: *mut marquet_geometry_column_options) {
    guard_void(|| unsafe { ffi::free_handle(options) })
}

/// Set the storage form (a `MARQUET_FORM_*` value). `fixed_size` is the WKB size in
/// bytes for `MARQUET_FORM_FIXED_WKB` (at least 5) and must be 0 otherwise.
/// `dimensions` (`MARQUET_DIMENSIONS_*`) and `use_f32` (0 or 1: store float32
/// coordinates) apply to `MARQUET_FORM_POINT` and must be 0 otherwise.
#[no_mangle]
pub unsafe extern "C" fn marquet_geometry_column_options_set_form(
    options: *mut marquet_geometry_column_options,
    form: i32,
    dimensions: i32,
    use_f32: i32,
    fixed_size: i64,
) -> i32 {
    with_opts(options, |s| {
        let f32 = ffi::flag_arg(use_f32, "use_f32")?;
        let f = match form {
            1 | 2 if dimensions != 0 || f32 => {
                return Err(FfiError::invalid("dimensions and use_f32 apply to MARQUET_FORM_POINT only; pass 0"))
            }
            1 if fixed_size != 0 => return Err(FfiError::invalid("fixed_size applies to MARQUET_FORM_FIXED_WKB only; pass 0")),
            1 => StorageForm::VarWkb,
            2 => {
                let size = ffi::len_arg(fixed_size, "fixed_size")?;
                if size < 5 {
                    return Err(FfiError::invalid(format!("fixed_size {size} is below the 5-byte minimum of a WKB value")));
                }
                StorageForm::FixedWkb { size }
            }
            3 if fixed_size != 0 => return Err(FfiError::invalid("fixed_size applies to MARQUET_FORM_FIXED_WKB only; pass 0")),
            3 => StorageForm::Point { dims: dims_from_c(dimensions)?, f32 },
            _ => return Err(FfiError::invalid(format!("form {form} is not a MARQUET_FORM_* value"))),
        };
        s.form = Some(f);
        Ok(())
    })
}

/// Set the CRS to a PROJJSON document (`len` bytes of UTF-8). The document is checked
/// when the column is added.
#[no_mangle]
pub unsafe extern "C" fn marquet_geometry_column_options_set_crs_projjson(
    options: *mut marquet_geometry_column_options,
    projjson: *const c_char,
    len: usize,
) -> i32 {
    with_opts(options, |s| {
        let doc = unsafe { ffi::name_arg(projjson, len, "projjson")? };
        s.crs = Crs::ProjJson(doc.to_string());
        Ok(())
    })
}

/// Set the CRS from a definition (`len` bytes of UTF-8): an authority code such as
/// `EPSG:3857` or `OGC:CRS84`, `srid:N`, an OGC URN, WKT 1 or 2, or PROJJSON, resolved to
/// PROJJSON with PROJ (issue #22; OGC:CRS84 and EPSG:4326 become `MARQUET_CRS_DEFAULT`,
/// `unknown` and `srid:0` `MARQUET_CRS_UNKNOWN`). A definition that cannot be resolved is
/// an error (`MARQUET_ERR_INVALID_ARGUMENT`, message from `marquet_last_error`), and the
/// options keep their CRS. Without PROJ in the library only the OGC:CRS84 / EPSG:4326
/// spellings and PROJJSON resolve.
#[no_mangle]
pub unsafe extern "C" fn marquet_geometry_column_options_set_crs_definition(
    options: *mut marquet_geometry_column_options,
    definition: *const c_char,
    len: usize,
) -> i32 {
    with_opts(options, |s| {
        let def = unsafe { ffi::name_arg(definition, len, "definition")? };
        s.crs = mq::crs::resolve(def).map_err(|e| FfiError::invalid(format!("crs definition: {e}")))?;
        Ok(())
    })
}

/// Set the CRS state: `MARQUET_CRS_DEFAULT` (OGC:CRS84, no attribute) or
/// `MARQUET_CRS_UNKNOWN`. Use `marquet_geometry_column_options_set_crs_projjson` for a
/// PROJJSON document.
#[no_mangle]
pub unsafe extern "C" fn marquet_geometry_column_options_set_crs(options: *mut marquet_geometry_column_options, crs: i32) -> i32 {
    with_opts(options, |s| {
        s.crs = match crs {
            0 => Crs::Default,
            2 => Crs::Unknown,
            1 => return Err(FfiError::invalid("use marquet_geometry_column_options_set_crs_projjson for a PROJJSON CRS")),
            _ => return Err(FfiError::invalid(format!("crs {crs} is not a MARQUET_CRS_* value"))),
        };
        Ok(())
    })
}

/// Set EDGES (a `MARQUET_EDGES_*` value other than UNKNOWN). Non-planar edges need a
/// geographic CRS (checked when the column is added).
#[no_mangle]
pub unsafe extern "C" fn marquet_geometry_column_options_set_edges(options: *mut marquet_geometry_column_options, edges: i32) -> i32 {
    with_opts(options, |s| {
        s.edges = Some(match edges {
            0 => Edges::Planar,
            1 => Edges::Spherical,
            2 => Edges::Vincenty,
            3 => Edges::Thomas,
            4 => Edges::Andoyer,
            5 => Edges::Karney,
            _ => return Err(FfiError::invalid(format!("edges {edges} is not a settable MARQUET_EDGES_* value"))),
        });
        Ok(())
    })
}

/// Declare polygon rings counterclockwise (1) or leave orientation undeclared (0)
/// (HEP002 §9.2).
#[no_mangle]
pub unsafe extern "C" fn marquet_geometry_column_options_set_orientation(
    options: *mut marquet_geometry_column_options,
    counterclockwise: i32,
) -> i32 {
    with_opts(options, |s| {
        s.orientation_ccw = ffi::flag_arg(counterclockwise, "counterclockwise")?;
        Ok(())
    })
}

/// Create a covering (per-row bounding box) column named `name` (`len` bytes) with the
/// geometry column, of float64 boxes or float32 ones when `use_f32` is 1 (HEP002 §10.5).
/// `name` NULL with `len` 0 removes the setting.
#[no_mangle]
pub unsafe extern "C" fn marquet_geometry_column_options_set_covering(
    options: *mut marquet_geometry_column_options,
    name: *const c_char,
    len: usize,
    use_f32: i32,
) -> i32 {
    with_opts(options, |s| {
        let f32 = ffi::flag_arg(use_f32, "use_f32")?;
        if name.is_null() && len == 0 {
            s.covering = None;
            s.covering_f32 = false;
            return Ok(());
        }
        let n = unsafe { ffi::name_arg(name, len, "name")? };
        s.covering = Some(n.to_string());
        s.covering_f32 = f32;
        Ok(())
    })
}

/// Set the chunk length in rows (at least 1) of the new column's datasets.
#[no_mangle]
pub unsafe extern "C" fn marquet_geometry_column_options_set_chunk_rows(
    options: *mut marquet_geometry_column_options,
    rows: i64,
) -> i32 {
    with_opts(options, |s| {
        let r = ffi::count_arg(rows, "rows")?;
        if r == 0 {
            return Err(FfiError::invalid("rows must be at least 1"));
        }
        s.chunk_rows = r;
        Ok(())
    })
}

/// Set the deflate (gzip) level 0-9 of the column's data, or -1 to store it without
/// filters. The default is the library's (`marquet::marquet::Compression::default()`:
/// shuffle + deflate, which every HDF5 reads without plugins; deflate alone for
/// variable-length WKB).
#[no_mangle]
pub unsafe extern "C" fn marquet_geometry_column_options_set_deflate(
    options: *mut marquet_geometry_column_options,
    level: i32,
) -> i32 {
    with_opts(options, |s| {
        s.filters = Some(match level {
            -1 => Vec::new(),
            // The pipeline of multi-byte numbers (shuffle, then deflate), for every dataset.
            0..=9 => mq::Compression::Deflate { level: level as u32 }.filters(mq::Elements::Numbers),
            _ => return Err(FfiError::invalid(format!("deflate level {level} is not -1 or 0-9"))),
        });
        Ok(())
    })
}
