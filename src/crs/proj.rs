//! The few PROJ C API calls Marquet needs, declared by hand and resolved at run time from
//! PROJ's shared library (feature `proj`).
//!
//! Why not the `proj` crate: its `proj-sys` (0.27) binds PROJ 9.6 and, when pkg-config
//! finds an older PROJ (Debian 12 ships 9.1), builds PROJ from source with cmake (plus
//! SQLite and libtiff), which takes many minutes on CI's two cores and needs bindgen for
//! other versions. The calls below (context, `proj_create`, PROJJSON / WKT output,
//! `proj_create_crs_to_crs_from_pj`, `proj_normalize_for_visualization`,
//! `proj_trans_generic`, `proj_trans_bounds`) are in every PROJ since 8.2.
//!
//! Why loaded at run time (issue #33, a fast start): linked, libproj and the ~40 libraries
//! it needs (curl, tiff, gnutls, krb5, …) were loaded and relocated by every `marquet`
//! process, `--version` included, before `main`. Now the library is opened (`dlopen`) on
//! the first call that needs PROJ and stays loaded for the process; building needs no
//! PROJ at all. Where it is looked for, first match wins:
//! 1. the path in the environment variable [`LIBRARY_ENV`] (`MARQUET_PROJ_LIB`), alone;
//! 2. the path given to [`set_library_path`] (the Python wheel names the libproj it
//!    carries);
//! 3. the names of [`LIBRARY_NAMES`] on the system loader's search path (`libproj.so`,
//!    then the sonames of PROJ 9 and 8: `libproj.so.25`, `.so.22`, …).
//!
//! When none opens, or the library lacks one of the functions (PROJ older than 8.2), every
//! call that needs PROJ fails with [`LoadError`], which says what to install; nothing
//! panics, and nothing without a CRS to resolve or reproject ever loads PROJ.
//!
//! This is the only unsafe code of the CRS layer; everything outside sees [`Ctx`] and
//! [`Pj`], which own their handles.
//!
//! Untrusted definitions: the caller bounds their size ([`super::MAX_DEFINITION_BYTES`]);
//! network access (grid downloads) is switched off on every context (HEP002 §17), and
//! PROJ's own logging is silenced (errors come back as values).
#![allow(unsafe_code)]

use std::ffi::{c_char, c_double, c_int, c_void, CStr, CString, OsString};
use std::path::{Path, PathBuf};
use std::ptr;
use std::sync::{Mutex, OnceLock};

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

/// The environment variable naming the PROJ shared library to load (a path, or a file name
/// the system loader finds). When set, nothing else is tried.
pub const LIBRARY_ENV: &str = "MARQUET_PROJ_LIB";

/// The file names of PROJ's shared library tried in order on the system loader's search
/// path: the development link first (it names the PROJ the machine builds against), then
/// the sonames of PROJ 9 (`25`) and of the neighbouring releases down to PROJ 8.2 (`22`).
#[cfg(all(unix, not(target_os = "macos")))]
pub const LIBRARY_NAMES: &[&str] = &["libproj.so", "libproj.so.25", "libproj.so.26", "libproj.so.27", "libproj.so.24", "libproj.so.23", "libproj.so.22"];
/// The file names of PROJ's shared library tried in order on the system loader's search path.
#[cfg(target_os = "macos")]
pub const LIBRARY_NAMES: &[&str] = &["libproj.dylib", "libproj.25.dylib", "libproj.26.dylib", "libproj.22.dylib"];
/// The file names of PROJ's shared library tried in order on the system loader's search path.
#[cfg(windows)]
pub const LIBRARY_NAMES: &[&str] = &["proj.dll", "proj_9.dll", "proj_9_6.dll", "proj_9_5.dll", "proj_9_4.dll", "proj_9_3.dll", "proj_9_2.dll", "proj_9_1.dll"];

/// What to install when PROJ is missing (in [`LoadError`]'s message).
const INSTALL_HINT: &str = "install PROJ's shared library (Debian/Ubuntu: `apt-get install proj-bin`, or the \
     `libprojNN` package it depends on, e.g. libproj25; Fedora: `dnf install proj`; macOS: `brew install proj`), \
     or set MARQUET_PROJ_LIB to the path of a libproj >= 8.2";

/// PROJ's shared library could not be used: nothing that needs PROJ (a CRS code, URN or
/// WKT to resolve, WKT to write, a reprojection) can run, and the message says what to
/// install. Everything else works without it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// No candidate library could be opened.
    #[error("PROJ is needed here (CRS codes, WKT, reprojection) but its shared library was not found ({tried}): {hint}", hint = INSTALL_HINT)]
    NotFound {
        /// The system loader's reason for each name or path tried.
        tried: String,
    },
    /// A library was opened but lacks a function Marquet calls (a PROJ older than 8.2).
    #[error("{library} lacks the PROJ function {function} (Marquet needs PROJ >= 8.2): {hint}", hint = INSTALL_HINT)]
    MissingFunction {
        /// The name or path the library was opened by.
        library: String,
        /// The missing function.
        function: String,
    },
}

/// The functions of PROJ's C API Marquet calls (proj.h's prototypes), resolved once from
/// the library this struct keeps open for the rest of the process.
struct Api {
    /// The name or path the library was opened by.
    name: String,
    context_create: unsafe extern "C" fn() -> *mut PjContext,
    context_destroy: unsafe extern "C" fn(*mut PjContext) -> *mut PjContext,
    context_set_enable_network: unsafe extern "C" fn(*mut PjContext, c_int) -> c_int,
    log_level: unsafe extern "C" fn(*mut PjContext, c_int) -> c_int,
    context_errno: unsafe extern "C" fn(*mut PjContext) -> c_int,
    context_errno_string: unsafe extern "C" fn(*mut PjContext, c_int) -> *const c_char,
    create: unsafe extern "C" fn(*mut PjContext, *const c_char) -> *mut PjObj,
    destroy: unsafe extern "C" fn(*mut PjObj) -> *mut PjObj,
    is_crs: unsafe extern "C" fn(*const PjObj) -> c_int,
    as_projjson: unsafe extern "C" fn(*mut PjContext, *const PjObj, *const *const c_char) -> *const c_char,
    as_wkt: unsafe extern "C" fn(*mut PjContext, *const PjObj, c_int, *const *const c_char) -> *const c_char,
    create_crs_to_crs_from_pj: unsafe extern "C" fn(*mut PjContext, *const PjObj, *const PjObj, *mut c_void, *const *const c_char) -> *mut PjObj,
    normalize_for_visualization: unsafe extern "C" fn(*mut PjContext, *const PjObj) -> *mut PjObj,
    #[allow(clippy::type_complexity)]
    trans_generic: unsafe extern "C" fn(
        *mut PjObj,
        c_int,
        *mut c_double,
        usize,
        usize,
        *mut c_double,
        usize,
        usize,
        *mut c_double,
        usize,
        usize,
        *mut c_double,
        usize,
        usize,
    ) -> usize,
    errno: unsafe extern "C" fn(*const PjObj) -> c_int,
    #[allow(clippy::type_complexity)]
    trans_bounds: unsafe extern "C" fn(
        *mut PjContext,
        *mut PjObj,
        c_int,
        c_double,
        c_double,
        c_double,
        c_double,
        *mut c_double,
        *mut c_double,
        *mut c_double,
        *mut c_double,
        c_int,
    ) -> c_int,
    identify: unsafe extern "C" fn(*mut PjContext, *const PjObj, *const c_char, *const *const c_char, *mut *mut c_int) -> *mut PjObjList,
    list_get_count: unsafe extern "C" fn(*const PjObjList) -> c_int,
    list_get: unsafe extern "C" fn(*mut PjContext, *const PjObjList, c_int) -> *mut PjObj,
    list_destroy: unsafe extern "C" fn(*mut PjObjList),
    int_list_destroy: unsafe extern "C" fn(*mut c_int),
    errno_reset: unsafe extern "C" fn(*const PjObj) -> c_int,
    context_set_search_paths: unsafe extern "C" fn(*mut PjContext, c_int, *const *const c_char),
    /// Kept open: the function pointers above point into it. Last, so dropped last (it is
    /// never dropped in practice: the loaded API lives in a static).
    _lib: libloading::Library,
}

/// One function of `lib` as the function-pointer type `T`.
///
/// # Safety
/// `T` must be the C prototype of `function` (proj.h), and the pointer must not be used
/// after `lib` is closed.
unsafe fn function<T: Copy>(lib: &libloading::Library, name: &str, function: &'static str) -> Result<T, LoadError> {
    let mut sym = Vec::with_capacity(function.len() + 1);
    sym.extend_from_slice(function.as_bytes());
    sym.push(0);
    // SAFETY: the caller's contract (the type is the function's prototype).
    match unsafe { lib.get::<T>(&sym) } {
        Ok(s) => Ok(*s),
        Err(_) => Err(LoadError::MissingFunction { library: name.to_string(), function: function.to_string() }),
    }
}

impl Api {
    /// Resolve every function from an opened library.
    fn resolve(lib: libloading::Library, name: String) -> Result<Api, LoadError> {
        let n = name.as_str();
        // SAFETY: each field's type is the prototype of the function of that name in proj.h
        // (PROJ >= 8.2); the library is moved into the struct and outlives the pointers.
        unsafe {
            Ok(Api {
                context_create: function(&lib, n, "proj_context_create")?,
                context_destroy: function(&lib, n, "proj_context_destroy")?,
                context_set_enable_network: function(&lib, n, "proj_context_set_enable_network")?,
                log_level: function(&lib, n, "proj_log_level")?,
                context_errno: function(&lib, n, "proj_context_errno")?,
                context_errno_string: function(&lib, n, "proj_context_errno_string")?,
                create: function(&lib, n, "proj_create")?,
                destroy: function(&lib, n, "proj_destroy")?,
                is_crs: function(&lib, n, "proj_is_crs")?,
                as_projjson: function(&lib, n, "proj_as_projjson")?,
                as_wkt: function(&lib, n, "proj_as_wkt")?,
                create_crs_to_crs_from_pj: function(&lib, n, "proj_create_crs_to_crs_from_pj")?,
                normalize_for_visualization: function(&lib, n, "proj_normalize_for_visualization")?,
                trans_generic: function(&lib, n, "proj_trans_generic")?,
                errno: function(&lib, n, "proj_errno")?,
                trans_bounds: function(&lib, n, "proj_trans_bounds")?,
                identify: function(&lib, n, "proj_identify")?,
                list_get_count: function(&lib, n, "proj_list_get_count")?,
                list_get: function(&lib, n, "proj_list_get")?,
                list_destroy: function(&lib, n, "proj_list_destroy")?,
                int_list_destroy: function(&lib, n, "proj_int_list_destroy")?,
                errno_reset: function(&lib, n, "proj_errno_reset")?,
                context_set_search_paths: function(&lib, n, "proj_context_set_search_paths")?,
                name,
                _lib: lib,
            })
        }
    }
}

/// Open PROJ from the first candidate that opens: `explicit` alone when given (the
/// environment variable or [`set_library_path`]), else every name of [`LIBRARY_NAMES`].
fn open(explicit: Option<OsString>) -> Result<Api, LoadError> {
    let candidates: Vec<OsString> = match explicit {
        Some(p) => vec![p],
        None => LIBRARY_NAMES.iter().map(OsString::from).collect(),
    };
    let mut tried = Vec::with_capacity(candidates.len());
    for c in &candidates {
        // SAFETY: opening runs the library's initialisers; PROJ's (C++ statics) have no
        // preconditions. Loading a file that is not PROJ fails on its first missing function.
        match unsafe { libloading::Library::new(c) } {
            Ok(lib) => return Api::resolve(lib, Path::new(c).display().to_string()),
            // The loader's message names the file.
            Err(e) => tried.push(e.to_string()),
        }
    }
    Err(LoadError::NotFound { tried: tried.join("; ") })
}

/// The library given by [`set_library_path`], if any.
static LIBRARY_PATH: Mutex<Option<PathBuf>> = Mutex::new(None);

/// The loaded API (or why it could not be loaded), set on the first call needing PROJ.
static API: OnceLock<Result<Api, LoadError>> = OnceLock::new();

/// PROJ's API, loaded on the first call.
fn api() -> Result<&'static Api, LoadError> {
    API.get_or_init(|| {
        let explicit = std::env::var_os(LIBRARY_ENV).filter(|v| !v.is_empty()).or_else(|| {
            LIBRARY_PATH.lock().unwrap_or_else(|e| e.into_inner()).as_ref().map(|p| p.as_os_str().to_os_string())
        });
        open(explicit)
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// Load PROJ now, if it is not loaded yet, and return the name or path it was opened by
/// (`libproj.so`, a path from `MARQUET_PROJ_LIB`, …). Every function that needs PROJ loads
/// it by itself; this only answers early (and tests where it came from).
pub fn load() -> Result<&'static str, LoadError> {
    api().map(|a| a.name.as_str())
}

/// Load PROJ from `path` (a file, or a name the system loader finds) instead of looking
/// for it, unless `MARQUET_PROJ_LIB` is set. The Python wheel calls it with the libproj it
/// carries (issue #30). It must come before the first call that needs PROJ: afterwards the
/// library in use is final and this is an error naming it.
pub fn set_library_path(path: &Path) -> Result<(), String> {
    let mut slot = LIBRARY_PATH.lock().unwrap_or_else(|e| e.into_inner());
    match API.get() {
        None => {}
        Some(Ok(a)) if Path::new(&a.name) == path => {}
        Some(Ok(a)) => return Err(format!("PROJ is already loaded from {}; {} comes too late", a.name, path.display())),
        Some(Err(e)) => return Err(format!("loading PROJ already failed ({e}); {} comes too late", path.display())),
    }
    *slot = Some(path.to_path_buf());
    Ok(())
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
fn ctx_error(api: &Api, ctx: *mut PjContext) -> String {
    // SAFETY: live context; the returned string is owned by PROJ and copied at once.
    unsafe {
        let e = (api.context_errno)(ctx);
        let s = (api.context_errno_string)(ctx, e);
        if s.is_null() {
            format!("PROJ error {e}")
        } else {
            CStr::from_ptr(s).to_string_lossy().into_owned()
        }
    }
}

/// A PROJ context (`PJ_CONTEXT`): no network, no log output. Not shared between threads.
pub struct Ctx {
    api: &'static Api,
    c: *mut PjContext,
}

// A context and the objects created in it may move to another thread together (PROJ's
// rule: one context per thread at a time); `Ctx` is not `Sync`.
unsafe impl Send for Ctx {}

impl Ctx {
    /// A new context. Loads PROJ on first use: the error is [`LoadError`]'s message when
    /// it cannot be loaded (what to install), or says that PROJ could not create a context
    /// (out of memory).
    pub fn new() -> Result<Ctx, String> {
        let api = api().map_err(|e| e.to_string())?;
        // SAFETY: no arguments; the result is checked for null and owned by `Ctx`.
        let c = unsafe { (api.context_create)() };
        if c.is_null() {
            return Err("PROJ could not create a context".into());
        }
        // SAFETY: `c` is a live context.
        unsafe {
            (api.context_set_enable_network)(c, 0);
            (api.log_level)(c, PJ_LOG_NONE);
        }
        let paths = SEARCH_PATHS.read().unwrap_or_else(|e| e.into_inner());
        if !paths.is_empty() {
            let ptrs: Vec<*const c_char> = paths.iter().map(|p| p.as_ptr()).collect();
            // SAFETY: live context; `ptrs` points at NUL-terminated strings that outlive the
            // call (PROJ copies them); the count is the array's length (a handful of paths).
            unsafe { (api.context_set_search_paths)(c, ptrs.len() as c_int, ptrs.as_ptr()) };
        }
        Ok(Ctx { api, c })
    }

    /// PROJ's message for the context's last error.
    fn last_error(&self) -> String {
        ctx_error(self.api, self.c)
    }

    /// `proj_create`: any definition PROJ reads (authority codes, URNs, WKT 1/2,
    /// PROJJSON, PROJ strings).
    pub fn create(&self, definition: &str) -> Result<Pj, String> {
        let c = CString::new(definition).map_err(|_| "the definition contains a NUL byte".to_string())?;
        // SAFETY: live context, NUL-terminated string that outlives the call.
        let p = unsafe { (self.api.create)(self.c, c.as_ptr()) };
        if p.is_null() {
            return Err(self.last_error());
        }
        Ok(Pj { api: self.api, ctx: self.c, p })
    }

    /// The operation from `src` to `dst` (PROJ picks the best one for the whole area),
    /// with axes normalized to easting/longitude first (HEP002 §8.3).
    pub fn crs_to_crs(&self, src: &Pj, dst: &Pj) -> Result<Pj, String> {
        // SAFETY: live context and objects; null area and options are allowed.
        let op = unsafe { (self.api.create_crs_to_crs_from_pj)(self.c, src.p, dst.p, ptr::null_mut(), ptr::null()) };
        if op.is_null() {
            return Err(self.last_error());
        }
        let op = Pj { api: self.api, ctx: self.c, p: op };
        // SAFETY: live context and operation; the result is a new object (or null).
        let n = unsafe { (self.api.normalize_for_visualization)(self.c, op.p) };
        if n.is_null() {
            return Err(self.last_error());
        }
        Ok(Pj { api: self.api, ctx: self.c, p: n })
    }
}

impl Drop for Ctx {
    fn drop(&mut self) {
        // SAFETY: owned, live context; every `Pj` borrowing it is gone.
        unsafe {
            (self.api.context_destroy)(self.c);
        }
    }
}

/// A PROJ object (`PJ`): a CRS or a coordinate operation, owned, living in the [`Ctx`]
/// that created it, which must outlive it (callers in `super` keep both in one struct,
/// the `Pj` field first so that it is dropped first).
pub struct Pj {
    api: &'static Api,
    ctx: *mut PjContext,
    p: *mut PjObj,
}

// Moves with its context (see `Ctx`).
unsafe impl Send for Pj {}

impl Pj {
    /// PROJ's message for the context's last error.
    fn last_error(&self) -> String {
        ctx_error(self.api, self.ctx)
    }

    /// Is it a CRS?
    pub fn is_crs(&self) -> bool {
        // SAFETY: live object.
        unsafe { (self.api.is_crs)(self.p) != 0 }
    }

    /// The EPSG CRS PROJ finds equivalent to this one with 100 % confidence, when there is
    /// exactly one (a WKT 1 from a Shapefile `.prj` names no authority code).
    pub fn identify_epsg(&self) -> Option<Pj> {
        let mut conf: *mut c_int = ptr::null_mut();
        // SAFETY: live context/object; static NUL-terminated authority; `conf` receives an
        // array owned by PROJ, freed below with the list.
        let list = unsafe { (self.api.identify)(self.ctx, self.p, c"EPSG".as_ptr(), ptr::null(), &mut conf) };
        if list.is_null() {
            return None;
        }
        let mut found = None;
        // SAFETY: `list` and `conf` (same length) are live until destroyed below.
        unsafe {
            let n = (self.api.list_get_count)(list);
            let mut sure = Vec::new();
            for i in 0..n {
                if !conf.is_null() && *conf.add(i as usize) >= 100 {
                    sure.push(i);
                }
            }
            if sure.len() == 1 {
                let p = (self.api.list_get)(self.ctx, list, sure[0]);
                if !p.is_null() {
                    found = Some(Pj { api: self.api, ctx: self.ctx, p });
                }
            }
            (self.api.list_destroy)(list);
            if !conf.is_null() {
                (self.api.int_list_destroy)(conf);
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
        let s = unsafe { (self.api.as_projjson)(self.ctx, self.p, opts.as_ptr()) };
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
        let s = unsafe { (self.api.as_wkt)(self.ctx, self.p, kind, opts.as_ptr()) };
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
            (self.api.errno_reset)(self.p);
            (self.api.trans_generic)(self.p, PJ_FWD, x.as_mut_ptr(), st, n, y.as_mut_ptr(), st, n, zp, zs, zn, ptr::null_mut(), 0, 0)
        };
        if done != n {
            return Err(format!("PROJ transformed {done} of {n} coordinates"));
        }
        // SAFETY: live object.
        let e = unsafe { (self.api.errno)(self.p) };
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
            (self.api.errno_reset)(self.p);
            let [a, c, d, e] = &mut o;
            (self.api.trans_bounds)(self.ctx, self.p, PJ_FWD, b[0], b[1], b[2], b[3], a, c, d, e, densify)
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
            (self.api.destroy)(self.p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_is_a_load_error_naming_what_to_install() {
        let Err(e) = open(Some(OsString::from("/nonexistent/libproj.so.25"))) else { panic!("opened a library that does not exist") };
        let LoadError::NotFound { tried } = &e else { panic!("{e:?}") };
        assert!(tried.starts_with("/nonexistent/libproj.so.25: "), "{tried}");
        let msg = e.to_string();
        assert!(msg.contains("apt-get install proj-bin") && msg.contains("MARQUET_PROJ_LIB"), "{msg}");
    }

    #[test]
    fn a_library_that_is_not_proj_lacks_its_functions() {
        // The C library opens but has no PROJ function.
        #[cfg(all(unix, not(target_os = "macos")))]
        {
            let e = open(Some(OsString::from("libc.so.6"))).err().expect("libc is not PROJ");
            assert_eq!(e, LoadError::MissingFunction { library: "libc.so.6".into(), function: "proj_context_create".into() });
            assert!(e.to_string().contains("PROJ >= 8.2"), "{e}");
        }
    }

    #[test]
    fn the_system_proj_loads_by_name() {
        // The machines that run the tests have PROJ (scripts/bootstrap.sh installs it).
        let name = load().unwrap_or_else(|e| panic!("{e}"));
        assert!(std::env::var_os(LIBRARY_ENV).is_some() || LIBRARY_NAMES.contains(&name), "{name}");
        let ctx = Ctx::new().unwrap();
        assert!(ctx.create("EPSG:3857").unwrap().is_crs());
        // Once loaded, another library is refused; the same one is accepted.
        assert!(set_library_path(Path::new("/elsewhere/libproj.so")).unwrap_err().contains("too late"));
        set_library_path(Path::new(name)).unwrap();
    }
}
