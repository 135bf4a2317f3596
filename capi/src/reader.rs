//! `marquet_spatial_reader`: a geometry column opened once and queried for many windows
//! (`SpatialReader`, issue #20). The reader reads the column's attributes, indexes and
//! chunks once and keeps them, so repeated windows cost no metadata I/O; answers are
//! exactly those of `marquet_table_query_box` / `_query_wkb`, as `marquet_query_result`.

use std::ffi::c_char;
use std::sync::{Arc, Mutex};

use mq::File;
use mq::SpatialReader;
use mq::query::Window;

use crate::ffi::{self, Handle, Kind};
use crate::panic::{guard, guard_void};
use crate::query::{marquet_query_result, query_arg};
use crate::status::FfiResult;
use crate::table::marquet_table;

/// A spatial reader (opaque) from `marquet_spatial_reader_open`; released by
/// `marquet_spatial_reader_free`. It keeps its own handle on the table and the file open
/// until freed (freeing the table or file handle first is allowed). Queries through one
/// reader are serialized.
pub struct marquet_spatial_reader {
    /// The file of a reader opened on a table handle (`None`: opened by URL).
    _file: Option<Arc<File>>,
    inner: Mutex<SpatialReader>,
}

impl Handle for marquet_spatial_reader {
    const KIND: Kind = Kind::SpatialReader;
    const NAME: &'static str = "reader";
}

/// Open a reader of geometry column `column` of `table` (`column` NULL with
/// `column_len` 0: the primary geometry column). A table of a file opened read-only
/// (`marquet_file_open`, `marquet_file_open_url`) is read by byte range, without libhdf5;
/// any other through libhdf5. On success `*out` receives a reader to free with
/// `marquet_spatial_reader_free`.
#[no_mangle]
pub unsafe extern "C" fn marquet_spatial_reader_open(
    table: *const marquet_table,
    column: *const c_char,
    column_len: usize,
    out: *mut *mut marquet_spatial_reader,
) -> i32 {
    guard(|| unsafe {
        let out = ffi::out_ptr(out, "out")?;
        let th = ffi::handle(table)?;
        let col = ffi::opt_name_arg(column, column_len, "column")?;
        let file = th.file();
        let path = th.lock().path().to_string();
        let reader = SpatialReader::for_file(&file, &path, col)?;
        ffi::write(out, ffi::into_handle(marquet_spatial_reader { _file: Some(file), inner: Mutex::new(reader) }));
        Ok(())
    })
}

/// Open a reader of geometry column `column` (NULL with `column_len` 0: the primary one)
/// of table `table` (NULL with `table_len` 0: the file's one table) of the file at `url`
/// (`http://`, `https://`, `s3://`, `gs://`, `az://`, `file://`), read by byte range: the
/// metadata, the index nodes and the chunks each window needs, never the whole object
/// (issue #34; README "Files on a web server or in object storage"). Errors of the server
/// or store give `MARQUET_STATUS_REMOTE`; a library built without the `cloud` feature
/// gives `MARQUET_STATUS_UNSUPPORTED`. On success `*out` receives a reader to free with
/// `marquet_spatial_reader_free`.
#[no_mangle]
pub unsafe extern "C" fn marquet_spatial_reader_open_url(
    url: *const c_char,
    url_len: usize,
    table: *const c_char,
    table_len: usize,
    column: *const c_char,
    column_len: usize,
    out: *mut *mut marquet_spatial_reader,
) -> i32 {
    guard(|| unsafe {
        let out = ffi::out_ptr(out, "out")?;
        let url = ffi::name_arg(url, url_len, "url")?;
        let table = ffi::opt_name_arg(table, table_len, "table")?;
        let col = ffi::opt_name_arg(column, column_len, "column")?;
        let reader = open_url_reader(url, table, col)?;
        ffi::write(out, ffi::into_handle(marquet_spatial_reader { _file: None, inner: Mutex::new(reader) }));
        Ok(())
    })
}

#[cfg(feature = "cloud")]
fn open_url_reader(url: &str, table: Option<&str>, column: Option<&str>) -> mq::Result<SpatialReader> {
    let p = std::path::Path::new(url);
    if !mq::remote::is_url(url) {
        return Err(mq::Error::InvalidArgument(format!("{url}: not a URL of a scheme read here ({})", mq::remote::SCHEMES.join(", "))));
    }
    match table {
        Some(t) => SpatialReader::open_path(p, &mq::h5col::normalize_table_path(t), column),
        None => SpatialReader::open_path_single(p, column),
    }
}

#[cfg(not(feature = "cloud"))]
fn open_url_reader(url: &str, _: Option<&str>, _: Option<&str>) -> mq::Result<SpatialReader> {
    Err(mq::Error::Unsupported(format!("{url}: this libmarquet was built without the `cloud` feature")))
}

unsafe fn reader_query(
    reader: *const marquet_spatial_reader,
    window: impl FnOnce() -> FfiResult<Window>,
    predicate: i32,
    flags: i32,
    out: *mut *mut marquet_query_result,
) -> FfiResult {
    let out = ffi::out_ptr(out, "out")?;
    let r = unsafe { ffi::handle(reader)? };
    let q = query_arg(window()?, predicate, flags)?;
    let mut reader = r.inner.lock().unwrap_or_else(|p| p.into_inner());
    let result = reader.query(&q)?;
    let column_path = format!("{}/{}", reader.table_path().trim_end_matches('/'), reader.column());
    unsafe { ffi::write(out, ffi::into_handle(marquet_query_result::new(result, column_path))) };
    Ok(())
}

/// As `marquet_table_query_box`, through the reader: the rows of the reader's column whose
/// geometry satisfies `predicate` against `[xmin, xmax] x [ymin, ymax]` (`flags` as
/// there: `MARQUET_QUERY_*` bits).
#[no_mangle]
pub unsafe extern "C" fn marquet_spatial_reader_query_box(
    reader: *const marquet_spatial_reader,
    xmin: f64,
    ymin: f64,
    xmax: f64,
    ymax: f64,
    predicate: i32,
    flags: i32,
    out: *mut *mut marquet_query_result,
) -> i32 {
    guard(|| unsafe { reader_query(reader, || Ok(Window::try_bbox(xmin, ymin, xmax, ymax)?), predicate, flags, out) })
}

/// As `marquet_table_query_wkb`, through the reader (the window as one ISO WKB geometry of
/// `wkb_len` bytes).
#[no_mangle]
pub unsafe extern "C" fn marquet_spatial_reader_query_wkb(
    reader: *const marquet_spatial_reader,
    wkb: *const u8,
    wkb_len: usize,
    predicate: i32,
    flags: i32,
    out: *mut *mut marquet_query_result,
) -> i32 {
    guard(|| unsafe {
        let bytes = ffi::slice_arg(wkb, wkb_len, "wkb")?;
        reader_query(reader, || Ok(Window::from_wkb(bytes)?), predicate, flags, out)
    })
}

/// Free a reader (NULL is a no-op).
#[no_mangle]
pub unsafe extern "C" fn marquet_spatial_reader_free(reader: *mut marquet_spatial_reader) {
    guard_void(|| unsafe { ffi::free_handle(reader) })
}
