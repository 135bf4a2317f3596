//! The few PROJ C API calls Marquet needs, declared by hand (feature `proj`).
//!
//! Why not the `proj` crate: its `proj-sys` (0.27) binds PROJ 9.6 and, when pkg-config
//! finds an older PROJ (Debian 12 ships 9.1), builds PROJ from source with cmake (plus
//! SQLite and libtiff), which takes many minutes on CI's two cores and needs bindgen for
//! other versions. The calls below (context, `proj_create`, PROJJSON / WKT output,
//! `proj_create_crs_to_crs_from_pj`, `proj_normalize_for_visualization`,
//! `proj_trans_generic`) have been stable since PROJ 6.2, so this module links the
//! system `libproj` (Debian: `libproj-dev`) directly. It is the only unsafe code of the
//! CRS layer; everything outside sees [`Ctx`] and [`Pj`], which own their handles.
//!
//! Untrusted definitions: the caller bounds their size ([`super::MAX_DEFINITION_BYTES`]);
//! network access (grid downloads) is switched off on every context (HEP002 §17), and
//! PROJ's own logging is silenced (errors come back as values).
#![allow(unsafe_code)]

use std::ffi::{c_char, c_double, c_int, c_void, CStr, CString};
use std::ptr;

#[repr(C)]
struct PjContext {
    _p: [u8; 0],
}
#[repr(C)]
struct PjObj {
    _p: [u8; 0],
}
#[repr(C)]
struct PjObjList {
    _p: [u8; 0],
}

/// `PJ_FWD`.
const PJ_FWD: c_int = 1;
/// `PJ_LOG_NONE`.
const PJ_LOG_NONE: c_int = 0;
/// `PJ_WKT2_2019` and `PJ_WKT1_ESRI`, `PJ_WKT1_GDAL` of `PJ_WKT_TYPE`.
pub const WKT2_2019: c_int = 2;
/// ESRI's WKT1 dialect (Shapefile `.prj`).
pub const WKT1_ESRI: c_int = 5;
/// GDAL's WKT1 dialect.
pub const WKT1_GDAL: c_int = 4;

#[link(name = "proj")]
extern "C" {
    fn proj_context_create() -> *mut PjContext;
    fn proj_context_destroy(ctx: *mut PjContext) -> *mut PjContext;
    fn proj_context_set_enable_network(ctx: *mut PjContext, enabled: c_int) -> c_int;
    fn proj_log_level(ctx: *mut PjContext, level: c_int) -> c_int;
    fn proj_context_errno(ctx: *mut PjContext) -> c_int;
    fn proj_context_errno_string(ctx: *mut PjContext, err: c_int) -> *const c_char;
    fn proj_create(ctx: *mut PjContext, definition: *const c_char) -> *mut PjObj;
    fn proj_destroy(p: *mut PjObj) -> *mut PjObj;
    fn proj_is_crs(p: *const PjObj) -> c_int;
    fn proj_as_projjson(ctx: *mut PjContext, p: *const PjObj, options: *const *const c_char) -> *const c_char;
    fn proj_as_wkt(ctx: *mut PjContext, p: *const PjObj, kind: c_int, options: *const *const c_char) -> *const c_char;
    fn proj_create_crs_to_crs_from_pj(
        ctx: *mut PjContext,
        src: *const PjObj,
        dst: *const PjObj,
        area: *mut c_void,
        options: *const *const c_char,
    ) -> *mut PjObj;
    fn proj_normalize_for_visualization(ctx: *mut PjContext, p: *const PjObj) -> *mut PjObj;
    #[allow(clippy::too_many_arguments)]
    fn proj_trans_generic(
        p: *mut PjObj,
        direction: c_int,
        x: *mut c_double,
        sx: usize,
        nx: usize,
        y: *mut c_double,
        sy: usize,
        ny: usize,
        z: *mut c_double,
        sz: usize,
        nz: usize,
        t: *mut c_double,
        st: usize,
        nt: usize,
    ) -> usize;
    fn proj_errno(p: *const PjObj) -> c_int;
    #[allow(clippy::too_many_arguments)]
    fn proj_trans_bounds(
        ctx: *mut PjContext,
        p: *mut PjObj,
        direction: c_int,
        xmin: c_double,
        ymin: c_double,
        xmax: c_double,
        ymax: c_double,
        out_xmin: *mut c_double,
        out_ymin: *mut c_double,
        out_xmax: *mut c_double,
        out_ymax: *mut c_double,
        densify_pts: c_int,
    ) -> c_int;
    fn proj_identify(ctx: *mut PjContext, p: *const PjObj, auth: *const c_char, options: *const *const c_char, confidence: *mut *mut c_int) -> *mut PjObjList;
    fn proj_list_get_count(l: *const PjObjList) -> c_int;
    fn proj_list_get(ctx: *mut PjContext, l: *const PjObjList, index: c_int) -> *mut PjObj;
    fn proj_list_destroy(l: *mut PjObjList);
    fn proj_int_list_destroy(l: *mut c_int);
    fn proj_errno_reset(p: *const PjObj) -> c_int;
    fn proj_context_set_search_paths(ctx: *mut PjContext, count_paths: c_int, paths: *const *const c_char);
}

/// Directories searched for PROJ's resource files (`proj.db`) by every context created
/// after [`set_search_paths`]; empty = PROJ's own rules (`PROJ_DATA`, its install prefix).
static SEARCH_PATHS: std::sync::RwLock<Vec<CString>> = std::sync::RwLock::new(Vec::new());

/// Make every PROJ context created from now on look for `proj.db` in `dirs` only (PROJ's
/// `proj_context_set_search_paths`). The Python wheel calls it with the `proj.db` it carries
/// (issue #30): it then works on a machine without PROJ installed, and never mixes its
/// libproj with another version's database. A directory with a NUL byte is an error.
pub fn set_search_paths(dirs: &[std::path::PathBuf]) -> Result<(), String> {
    let mut v = Vec::with_capacity(dirs.len());
    for d in dirs {
        let s = d.to_str().ok_or_else(|| format!("PROJ data directory {} is not UTF-8", d.display()))?;
        v.push(CString::new(s).map_err(|_| format!("PROJ data directory {s:?} contains a NUL byte"))?);
    }
    *SEARCH_PATHS.write().unwrap_or_else(|e| e.into_inner()) = v;
    Ok(())
}

/// PROJ's message for the last error of a live context.
fn ctx_error(ctx: *mut PjContext) -> String {
    // SAFETY: live context; the returned string is owned by PROJ and copied at once.
    unsafe {
        let e = proj_context_errno(ctx);
        let s = proj_context_errno_string(ctx, e);
        if s.is_null() {
            format!("PROJ error {e}")
        } else {
            CStr::from_ptr(s).to_string_lossy().into_owned()
        }
    }
}

/// A PROJ context (`PJ_CONTEXT`): no network, no log output. Not shared between threads.
pub struct Ctx(*mut PjContext);

// A context and the objects created in it may move to another thread together (PROJ's
// rule: one context per thread at a time); `Ctx` is not `Sync`.
unsafe impl Send for Ctx {}

impl Ctx {
    /// A new context, or `None` when PROJ cannot create one (out of memory).
    pub fn new() -> Option<Ctx> {
        // SAFETY: no arguments; the result is checked for null and owned by `Ctx`.
        let c = unsafe { proj_context_create() };
        if c.is_null() {
            return None;
        }
        // SAFETY: `c` is a live context.
        unsafe {
            proj_context_set_enable_network(c, 0);
            proj_log_level(c, PJ_LOG_NONE);
        }
        let paths = SEARCH_PATHS.read().unwrap_or_else(|e| e.into_inner());
        if !paths.is_empty() {
            let ptrs: Vec<*const c_char> = paths.iter().map(|p| p.as_ptr()).collect();
            // SAFETY: live context; `ptrs` points at NUL-terminated strings that outlive the
            // call (PROJ copies them); the count is the array's length (a handful of paths).
            unsafe { proj_context_set_search_paths(c, ptrs.len() as c_int, ptrs.as_ptr()) };
        }
        Some(Ctx(c))
    }

    /// PROJ's message for the context's last error.
    fn last_error(&self) -> String {
        ctx_error(self.0)
    }

    /// `proj_create`: any definition PROJ reads (authority codes, URNs, WKT 1/2,
    /// PROJJSON, PROJ strings).
    pub fn create(&self, definition: &str) -> Result<Pj, String> {
        let c = CString::new(definition).map_err(|_| "the definition contains a NUL byte".to_string())?;
        // SAFETY: live context, NUL-terminated string that outlives the call.
        let p = unsafe { proj_create(self.0, c.as_ptr()) };
        if p.is_null() {
            return Err(self.last_error());
        }
        Ok(Pj { ctx: self.0, p })
    }

    /// The operation from `src` to `dst` (PROJ picks the best one for the whole area),
    /// with axes normalized to easting/longitude first (HEP002 §8.3).
    pub fn crs_to_crs(&self, src: &Pj, dst: &Pj) -> Result<Pj, String> {
        // SAFETY: live context and objects; null area and options are allowed.
        let op = unsafe { proj_create_crs_to_crs_from_pj(self.0, src.p, dst.p, ptr::null_mut(), ptr::null()) };
        if op.is_null() {
            return Err(self.last_error());
        }
        let op = Pj { ctx: self.0, p: op };
        // SAFETY: live context and operation; the result is a new object (or null).
        let n = unsafe { proj_normalize_for_visualization(self.0, op.p) };
        if n.is_null() {
            return Err(self.last_error());
        }
        Ok(Pj { ctx: self.0, p: n })
    }
}

impl Drop for Ctx {
    fn drop(&mut self) {
        // SAFETY: owned, live context; every `Pj` borrowing it is gone.
        unsafe {
            proj_context_destroy(self.0);
        }
    }
}

/// A PROJ object (`PJ`): a CRS or a coordinate operation, owned, living in the [`Ctx`]
/// that created it, which must outlive it (callers in `super` keep both in one struct,
/// the `Pj` field first so that it is dropped first).
pub struct Pj {
    ctx: *mut PjContext,
    p: *mut PjObj,
}

// Moves with its context (see `Ctx`).
unsafe impl Send for Pj {}

impl Pj {
    /// PROJ's message for the context's last error.
    fn last_error(&self) -> String {
        ctx_error(self.ctx)
    }

    /// Is it a CRS?
    pub fn is_crs(&self) -> bool {
        // SAFETY: live object.
        unsafe { proj_is_crs(self.p) != 0 }
    }

    /// The EPSG CRS PROJ finds equivalent to this one with 100 % confidence, when there is
    /// exactly one (a WKT 1 from a Shapefile `.prj` names no authority code).
    pub fn identify_epsg(&self) -> Option<Pj> {
        let mut conf: *mut c_int = ptr::null_mut();
        // SAFETY: live context/object; static NUL-terminated authority; `conf` receives an
        // array owned by PROJ, freed below with the list.
        let list = unsafe { proj_identify(self.ctx, self.p, c"EPSG".as_ptr(), ptr::null(), &mut conf) };
        if list.is_null() {
            return None;
        }
        let mut found = None;
        // SAFETY: `list` and `conf` (same length) are live until destroyed below.
        unsafe {
            let n = proj_list_get_count(list);
            let mut sure = Vec::new();
            for i in 0..n {
                if !conf.is_null() && *conf.add(i as usize) >= 100 {
                    sure.push(i);
                }
            }
            if sure.len() == 1 {
                let p = proj_list_get(self.ctx, list, sure[0]);
                if !p.is_null() {
                    found = Some(Pj { ctx: self.ctx, p });
                }
            }
            proj_list_destroy(list);
            if !conf.is_null() {
                proj_int_list_destroy(conf);
            }
        }
        found
    }

    /// The object as one-line PROJJSON.
    pub fn projjson(&self) -> Result<String, String> {
        let opt = c"MULTILINE=NO";
        let opts = [opt.as_ptr(), ptr::null()];
        // SAFETY: live context/object; a null-terminated option list of static strings; the
        // returned string belongs to the object and is copied at once.
        let s = unsafe { proj_as_projjson(self.ctx, self.p, opts.as_ptr()) };
        if s.is_null() {
            return Err(self.last_error());
        }
        // SAFETY: non-null NUL-terminated string owned by PROJ.
        Ok(unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned())
    }

    /// The object as one-line WKT of `kind` ([`WKT2_2019`], [`WKT1_ESRI`], [`WKT1_GDAL`]).
    pub fn wkt(&self, kind: c_int) -> Result<String, String> {
        let opt = c"MULTILINE=NO";
        let opts = [opt.as_ptr(), ptr::null()];
        // SAFETY: as in `projjson`.
        let s = unsafe { proj_as_wkt(self.ctx, self.p, kind, opts.as_ptr()) };
        if s.is_null() {
            return Err(self.last_error());
        }
        // SAFETY: non-null NUL-terminated string owned by PROJ.
        Ok(unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned())
    }

    /// Transform coordinates in place (an operation from [`Ctx::crs_to_crs`]); `z` empty
    /// or as long as `x`. A coordinate PROJ cannot transform becomes infinite (PROJ's
    /// HUGE_VAL), which the caller reports.
    pub fn trans(&self, x: &mut [f64], y: &mut [f64], z: &mut [f64]) -> Result<(), String> {
        if x.len() != y.len() || (!z.is_empty() && z.len() != x.len()) {
            return Err("coordinate arrays of different lengths".into());
        }
        if x.is_empty() {
            return Ok(());
        }
        let n = x.len();
        let st = std::mem::size_of::<f64>();
        let (zp, zs, zn) = if z.is_empty() { (ptr::null_mut(), 0, 0) } else { (z.as_mut_ptr(), st, n) };
        // SAFETY: live operation; each pointer addresses `n` doubles with stride `st` that
        // stay borrowed for the call; `t` is absent.
        let done = unsafe {
            proj_errno_reset(self.p);
            proj_trans_generic(self.p, PJ_FWD, x.as_mut_ptr(), st, n, y.as_mut_ptr(), st, n, zp, zs, zn, ptr::null_mut(), 0, 0)
        };
        if done != n {
            return Err(format!("PROJ transformed {done} of {n} coordinates"));
        }
        // SAFETY: live object.
        let e = unsafe { proj_errno(self.p) };
        if e != 0 && x.iter().chain(y.iter()).any(|v| !v.is_finite()) {
            return Err(self.last_error());
        }
        Ok(())
    }
}

impl Pj {
    /// The box of `[xmin, ymin, xmax, ymax]` after the operation (PROJ >= 8.2's
    /// `proj_trans_bounds`): each edge densified with `densify` points, a pole inside the
    /// box widening a geographic result to all longitudes, and an antimeridian crossing
    /// returned as `xmin > xmax`.
    pub fn trans_bounds(&self, b: [f64; 4], densify: i32) -> Result<[f64; 4], String> {
        let mut o = [0f64; 4];
        // SAFETY: live context and operation; the four out-pointers address distinct doubles.
        let ok = unsafe {
            proj_errno_reset(self.p);
            let [a, c, d, e] = &mut o;
            proj_trans_bounds(self.ctx, self.p, PJ_FWD, b[0], b[1], b[2], b[3], a, c, d, e, densify)
        };
        if ok == 0 || o.iter().any(|v| !v.is_finite()) {
            return Err(self.last_error());
        }
        Ok(o)
    }
}

impl Drop for Pj {
    fn drop(&mut self) {
        // SAFETY: owned, live object.
        unsafe {
            proj_destroy(self.p);
        }
    }
}
