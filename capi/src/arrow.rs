//! Marquet tables through the Arrow C data and C stream interfaces
//! (<https://arrow.apache.org/docs/format/CDataInterface.html>): rows out as an
//! `ArrowArrayStream` of record batches, rows in as `ArrowArray` batches of one
//! `ArrowSchema` collected by a `marquet_arrow_writer`.
//!
//! The column mapping is the library's one Arrow mapping (`ArrowPlan`,
//! docs/geoparquet-mapping.md): integers, doubles, strings, booleans, dates, timestamps,
//! lists, categorical columns as dictionaries, geometry columns as `geoarrow.wkb` binary
//! fields carrying the CRS (PROJJSON) in their extension metadata. Writes go through the
//! library's one writer (`import_record_batches`: the default layout, HEP002 §10.6;
//! `append_record_batches` for appends). This is what the GDAL driver (`gdal/`) reads and
//! writes with; any consumer of the Arrow C interfaces (nanoarrow, pyarrow, DuckDB) can
//! use the same calls. Present only in a libmarquet built with the `geoparquet` feature
//! (the default); the header declares them inside `#if defined(MARQUET_ARROW)`, defined
//! by the header itself for the default build.

use std::ffi::c_char;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::ffi::{from_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchReader, StructArray};
use arrow_schema::{ArrowError, Schema, SchemaRef};

use mq::convert::{append_record_batches, import_record_batches, AppendOptions, ArrowPlan, ImportOptions};
use mq::{File, Table as MarquetTable};
use mq::Error as MarquetError;
use mq::WkbBuffer;

use crate::ffi::{self, Handle, Kind};
use crate::file::marquet_file;
use crate::panic::{guard, guard_void};
use crate::query::marquet_query_result;
use crate::status::{marquet_status, FfiError, FfiResult};
use crate::table::marquet_table;

/// Default rows per record batch of the readers (`batch_rows` 0).
const DEFAULT_ARROW_BATCH_ROWS: u64 = 65_536;

fn arrow_err(path: &str, e: ArrowError) -> FfiError {
    FfiError::invalid(format!("{path}: arrow: {e}"))
}

fn external(e: MarquetError) -> ArrowError {
    ArrowError::ExternalError(Box::new(e))
}

/// Run one batch read, turning a panic into an Arrow error (the stream's callbacks are
/// called from C: no unwind may cross them).
fn caught(f: impl FnOnce() -> Result<RecordBatch, ArrowError>) -> Result<RecordBatch, ArrowError> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let what = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic payload".into());
            Err(ArrowError::ExternalError(format!("internal error: panic caught at the c boundary: {what}").into()))
        }
    }
}

/// The column names of a `columns` / `column_offsets` / `ncolumns` argument triple:
/// `None` (every column) when `column_offsets` is NULL.
unsafe fn columns_arg(columns: *const c_char, columns_len: usize, offsets: *const i64, ncolumns: i64) -> FfiResult<Option<Vec<String>>> {
    if offsets.is_null() {
        if ncolumns != 0 {
            return Err(FfiError::null("column_offsets"));
        }
        return Ok(None);
    }
    let n = ffi::len_arg(ncolumns, "ncolumns")?;
    let offs = unsafe { ffi::slice_arg(offsets, n + 1, "column_offsets")? };
    let text = unsafe { ffi::slice_arg(columns.cast::<u8>(), columns_len, "columns")? };
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let (a, b) = (offs[i], offs[i + 1]);
        if a < 0 || b < a || b as u64 > columns_len as u64 {
            return Err(FfiError::invalid(format!("column_offsets[{i}..{}] = {a}..{b} is not a range of {columns_len} bytes", i + 1)));
        }
        let s = std::str::from_utf8(&text[a as usize..b as usize]).map_err(|e| FfiError::invalid(format!("column {i} is not valid UTF-8: {e}")))?;
        if s.is_empty() {
            return Err(FfiError::invalid(format!("column {i} is empty")));
        }
        out.push(s.to_string());
    }
    Ok(Some(out))
}

/// Which rows a reader returns.
enum Rows {
    /// `[next, end)` in batches of `batch` rows.
    Range { next: u64, end: u64 },
    /// These rows (strictly ascending), `batch` at a time from `pos`; with the WKB of
    /// one geometry column for each of them (a query's kept geometries), which that
    /// column is built from instead of read.
    Take { rows: Vec<u64>, pos: usize, given: Option<(String, Arc<WkbBuffer>)> },
}

/// The record batch reader behind an exported stream: its own handle on the table (the
/// caller may free the table and file handles while the stream lives).
struct TableReader {
    _file: Arc<File>,
    table: MarquetTable,
    plan: Arc<ArrowPlan>,
    rows: Rows,
    batch: u64,
    /// Batches of a `take` read but not yet handed out.
    pending: std::collections::VecDeque<RecordBatch>,
}

impl Iterator for TableReader {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(b) = self.pending.pop_front() {
            return Some(Ok(b));
        }
        match &mut self.rows {
            Rows::Range { next, end } => {
                if *next >= *end {
                    return None;
                }
                let (s, e) = (*next, (*next + self.batch).min(*end));
                *next = e;
                let (t, plan) = (&self.table, &self.plan);
                Some(caught(|| plan.read_range(t, s, e).map_err(external)))
            }
            Rows::Take { rows, pos, given } => {
                if *pos >= rows.len() {
                    return None;
                }
                let k = (*pos + self.batch as usize).min(rows.len());
                let (t, plan, batch) = (&self.table, &self.plan, self.batch as usize);
                let part = &rows[*pos..k];
                let given = given.as_ref().map(|(c, w)| (c.as_str(), &**w, *pos));
                *pos = k;
                let mut got = Vec::new();
                let r = caught(|| {
                    got = plan.take_given(t, part, batch, given).map_err(external)?;
                    Ok(RecordBatch::new_empty(plan.schema()))
                });
                if let Err(e) = r {
                    return Some(Err(e));
                }
                self.pending.extend(got);
                self.next()
            }
        }
    }
}

impl RecordBatchReader for TableReader {
    fn schema(&self) -> SchemaRef {
        self.plan.schema()
    }
}

#[allow(clippy::too_many_arguments)]
unsafe fn export_stream(
    table: *const marquet_table,
    columns: *const c_char,
    columns_len: usize,
    column_offsets: *const i64,
    ncolumns: i64,
    rows: impl FnOnce(&MarquetTable) -> FfiResult<Rows>,
    batch_rows: i64,
    out: *mut FFI_ArrowArrayStream,
) -> FfiResult {
    let out = ffi::out_ptr(out, "out")?;
    let th = unsafe { ffi::handle(table)? };
    let cols = unsafe { columns_arg(columns, columns_len, column_offsets, ncolumns)? };
    let batch = match ffi::count_arg(batch_rows, "batch_rows")? {
        0 => DEFAULT_ARROW_BATCH_ROWS,
        b => b,
    };
    let file = th.file();
    let path = th.lock().path().to_string();
    let t = MarquetTable::open(&file, &path)?;
    let rows = rows(&t)?;
    let plan = th.arrow_plans.plan(&file, &t, cols.as_deref(), true, None)?;
    let reader = TableReader { _file: file, table: t, plan, rows, batch, pending: Default::default() };
    unsafe { ffi::write(out, FFI_ArrowArrayStream::new(Box::new(reader))) };
    Ok(())
}

/// Rows `[start, end)` of `table` as an Arrow C stream (`struct ArrowArrayStream`, the
/// Arrow C stream interface) of record batches of at most `batch_rows` rows (0: 65536),
/// read lazily as the consumer calls `get_next`.
///
/// Columns: `column_offsets` NULL (and `ncolumns` 0) for every column in COLUMN_ORDER
/// (covering columns included, as structs), or the `ncolumns` names
/// `columns[column_offsets[i] .. column_offsets[i+1]]` in that order (`column_offsets`
/// has `ncolumns + 1` entries). The Arrow types are the library's mapping
/// (docs/geoparquet-mapping.md): geometry columns are `geoarrow.wkb` binary fields whose
/// extension metadata holds the CRS as PROJJSON; columns without an Arrow mapping are
/// left out. On success `*out` receives the stream; the caller releases it with its
/// `release` callback. The stream keeps the table and its file open: the table and file
/// handles may be freed before it. Errors while reading come back from `get_next`, with
/// `get_last_error` giving the message.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn marquet_table_read_arrow(
    table: *const marquet_table,
    columns: *const c_char,
    columns_len: usize,
    column_offsets: *const i64,
    ncolumns: i64,
    start: i64,
    end: i64,
    batch_rows: i64,
    out: *mut FFI_ArrowArrayStream,
) -> i32 {
    guard(|| unsafe {
        export_stream(
            table,
            columns,
            columns_len,
            column_offsets,
            ncolumns,
            |t| {
                let n = t.nrows()?;
                let s = ffi::count_arg(start, "start")?;
                let e = ffi::count_arg(end, "end")?;
                if s > e || e > n {
                    return Err(FfiError::new(
                        marquet_status::MARQUET_STATUS_OUT_OF_RANGE,
                        format!("{}: rows {start}..{end} out of range for {n} rows", t.path()),
                    ));
                }
                Ok(Rows::Range { next: s, end: e })
            },
            batch_rows,
            out,
        )
    })
}

/// The rows `rows[0 .. nrows]` (strictly ascending 0-based row numbers, each below
/// NROWS: e.g. the rows of a `marquet_query_result`) of `table`, in that order, as an
/// Arrow C stream of record batches of at most `batch_rows` rows (0: 65536). Columns and
/// the stream as for `marquet_table_read_arrow`. Rows out of order or out of range give
/// `MARQUET_STATUS_OUT_OF_RANGE` / `_INVALID_ARGUMENT` before anything is read.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn marquet_table_take_arrow(
    table: *const marquet_table,
    columns: *const c_char,
    columns_len: usize,
    column_offsets: *const i64,
    ncolumns: i64,
    rows: *const i64,
    nrows: i64,
    batch_rows: i64,
    out: *mut FFI_ArrowArrayStream,
) -> i32 {
    guard(|| unsafe {
        let k = ffi::len_arg(nrows, "nrows")?;
        let given = ffi::slice_arg(rows, k, "rows")?;
        export_stream(
            table,
            columns,
            columns_len,
            column_offsets,
            ncolumns,
            |t| {
                let rows = given.iter().map(|&r| ffi::count_arg(r, "row")).collect::<FfiResult<Vec<u64>>>()?;
                checked_rows(t, &rows)?;
                Ok(Rows::Take { rows, pos: 0, given: None })
            },
            batch_rows,
            out,
        )
    })
}

/// Refuse, before anything is read, rows that are not strictly ascending row numbers
/// below `t`'s NROWS.
fn checked_rows(t: &MarquetTable, rows: &[u64]) -> FfiResult {
    let n = t.nrows()?;
    for (i, &r) in rows.iter().enumerate() {
        if r >= n {
            return Err(FfiError::new(marquet_status::MARQUET_STATUS_OUT_OF_RANGE, format!("{}: rows[{i}] = {r} out of range for {n} rows", t.path())));
        }
        if i > 0 && rows[i - 1] >= r {
            return Err(FfiError::invalid(format!("rows[{i}] = {r} is not above the row before it (rows must be strictly ascending)")));
        }
    }
    Ok(())
}

/// The rows of a query's answer `result` (`marquet_table_query_*`,
/// `marquet_spatial_reader_query_*`) of `table`, as `marquet_table_take_arrow` reads
/// them (columns, `batch_rows` and the stream alike). When the query kept the geometries
/// (`MARQUET_QUERY_KEEP_GEOMETRY`), the queried geometry column is built from them
/// instead of read again: a spatial filter followed by a read of its rows reads each
/// geometry once (the GDAL driver's spatial filter does this). `table` must be the table
/// the query ran on: a result of a column of another table path gives
/// `MARQUET_STATUS_INVALID_ARGUMENT`. The stream holds what it needs of the result:
/// the result, table and file handles may be freed before it.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn marquet_query_result_take_arrow(
    table: *const marquet_table,
    result: *const marquet_query_result,
    columns: *const c_char,
    columns_len: usize,
    column_offsets: *const i64,
    ncolumns: i64,
    batch_rows: i64,
    out: *mut FFI_ArrowArrayStream,
) -> i32 {
    guard(|| unsafe {
        let r = ffi::handle(result)?;
        export_stream(
            table,
            columns,
            columns_len,
            column_offsets,
            ncolumns,
            |t| {
                let (dir, name) = r.column_path.rsplit_once('/').unwrap_or(("", &r.column_path));
                if dir.trim_end_matches('/') != t.path().trim_end_matches('/') {
                    return Err(FfiError::invalid(format!("{}: the result is of a query of {}, another table", t.path(), r.column_path)));
                }
                checked_rows(t, r.rows())?;
                let given = r.kept().map(|w| (name.to_string(), w.clone()));
                Ok(Rows::Take { rows: r.rows().to_vec(), pos: 0, given })
            },
            batch_rows,
            out,
        )
    })
}

// ---- the writer ---------------------------------------------------------------------------

/// A writer of Arrow record batches into one table (opaque), from
/// `marquet_arrow_writer_new`; released by `marquet_arrow_writer_free`. It collects the
/// batches and writes them all at `marquet_arrow_writer_finish`: nothing reaches the file
/// before, so a writer freed unfinished (a failed translation) leaves the file as it was.
pub struct marquet_arrow_writer {
    file: Arc<File>,
    table: String,
    append: bool,
    schema: SchemaRef,
    ffi_schema: FFI_ArrowSchema,
    batches: Vec<RecordBatch>,
    finished: bool,
}

impl Handle for marquet_arrow_writer {
    const KIND: Kind = Kind::ArrowWriter;
    const NAME: &'static str = "writer";
}

/// Start writing the table `table` (a path; without a leading '/' relative to the file
/// handle's group) of a file opened read-write, from record batches of `schema` (an
/// `ArrowSchema` of a struct: the columns). `append` 0 creates a new table (one that
/// exists already is refused), laid out by the library's default layout (Hilbert order,
/// default indexes: `marquet_table_write`); 1 appends to an existing table through the
/// library's append path (`marquet_table_append`), the columns mapped as a new table's
/// would be. Geometry columns are the fields with a GeoArrow extension type
/// (`ARROW:extension:name` `geoarrow.wkb` ...; `ARROW:extension:metadata` may give
/// `{"crs": <PROJJSON>, "edges": ...}`, as GeoArrow says); the first is primary.
///
/// `schema` is moved in (C data interface): on success and on failure alike the writer
/// owns it and its `release` is set to NULL. On success `*out` receives a writer to free
/// with `marquet_arrow_writer_free`.
#[no_mangle]
pub unsafe extern "C" fn marquet_arrow_writer_new(
    file: *const marquet_file,
    table: *const c_char,
    table_len: usize,
    append: i32,
    schema: *mut FFI_ArrowSchema,
    out: *mut *mut marquet_arrow_writer,
) -> i32 {
    guard(|| unsafe {
        if schema.is_null() {
            return Err(FfiError::null("schema"));
        }
        // Take ownership first, so the caller's struct is released whatever happens next.
        let ffi_schema = FFI_ArrowSchema::from_raw(schema);
        let out = ffi::out_ptr(out, "out")?;
        let fh = ffi::handle(file)?;
        let f = fh.get()?;
        let path = mq::h5col::normalize_table_path(&fh.resolve(ffi::name_arg(table, table_len, "table")?));
        let append = ffi::flag_arg(append, "append")?;
        let s = Schema::try_from(&ffi_schema).map_err(|e| arrow_err(&path, e))?;
        let exists = f.tables()?.contains(&path);
        if append && !exists {
            return Err(FfiError::new(marquet_status::MARQUET_STATUS_NOT_A_TABLE, format!("{path}: no such table to append to")));
        }
        if !append && exists {
            return Err(FfiError::invalid(format!("{}: table {path} already exists", f.filename())));
        }
        let w = marquet_arrow_writer { file: f, table: path, append, schema: Arc::new(s), ffi_schema, batches: Vec::new(), finished: false };
        ffi::write(out, ffi::into_handle(w));
        Ok(())
    })
}

/// Add one record batch: `array` is an `ArrowArray` of the writer's schema (a struct
/// array, one child per column), moved in as the C data interface says (on success and
/// on failure alike its `release` is set to NULL). The batch is checked against the
/// schema and kept in memory until `marquet_arrow_writer_finish`.
#[no_mangle]
pub unsafe extern "C" fn marquet_arrow_writer_write(writer: *mut marquet_arrow_writer, array: *mut FFI_ArrowArray) -> i32 {
    guard(|| unsafe {
        if array.is_null() {
            return Err(FfiError::null("array"));
        }
        let a = FFI_ArrowArray::from_raw(array);
        let w = ffi::handle_mut(writer)?;
        if w.finished {
            return Err(FfiError::invalid(format!("{}: the writer is finished", w.table)));
        }
        let data = from_ffi(a, &w.ffi_schema).map_err(|e| arrow_err(&w.table, e))?;
        let sa = StructArray::from(data);
        let b = RecordBatch::try_new(w.schema.clone(), sa.columns().to_vec()).map_err(|e| arrow_err(&w.table, e))?;
        w.batches.push(b);
        Ok(())
    })
}

/// The staging file of a new table: beside the output, named as the CLI's staging files
/// (`.<name>.marquet-<pid>-<nanos>.partial.h5`), so that a killed process's file is
/// reclaimed by the next conversion there.
fn staging_path(output: &Path) -> PathBuf {
    let dir = output.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = output.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    dir.join(format!(".{name}.marquet-{}-{nanos}.partial.h5", std::process::id()))
}

/// Write every batch given: a new table is built in a staging file beside the output
/// (sorted, indexed) and then copied into the file in one step (`H5Ocopy` links it only
/// when complete, HEP002 §11.1 / docs/FAULTS.md F2); an append runs the library's append,
/// which leaves the table as it was when it fails. On success `*nrows` (if not NULL)
/// receives the table's row count. A writer finishes once; on failure the file is as it
/// was and the writer refuses further use.
#[no_mangle]
pub unsafe extern "C" fn marquet_arrow_writer_finish(writer: *mut marquet_arrow_writer, nrows: *mut i64) -> i32 {
    guard(|| unsafe {
        let w = ffi::handle_mut(writer)?;
        if w.finished {
            return Err(FfiError::invalid(format!("{}: the writer is finished", w.table)));
        }
        w.finished = true;
        let batches: Vec<RecordBatch> = std::mem::take(&mut w.batches);
        let n = if w.append {
            let r = append_record_batches(&w.file, &w.table, w.schema.clone(), batches.into_iter().map(Ok), &[], &AppendOptions::default())?;
            r.nrows
        } else {
            let out = PathBuf::from(w.file.filename());
            let tmp = staging_path(&out);
            let res = (|| -> FfiResult<u64> {
                let staged = File::create(&tmp)?;
                let r = import_record_batches(&staged, w.schema.clone(), batches.into_iter().map(Ok), &[], &ImportOptions::new(&w.table))?;
                drop(staged);
                let src = File::open(&tmp)?;
                w.file.copy_tables_from(&src, std::slice::from_ref(&w.table))?;
                w.file.flush()?;
                Ok(r.rows)
            })();
            let _ = std::fs::remove_file(&tmp);
            res?
        };
        ffi::write_opt(nrows, ffi::to_i64(n, "nrows")?);
        Ok(())
    })
}

/// Free a writer (NULL is a no-op). An unfinished writer's batches are dropped and the
/// file is left as it was.
#[no_mangle]
pub unsafe extern "C" fn marquet_arrow_writer_free(writer: *mut marquet_arrow_writer) {
    guard_void(|| unsafe { ffi::free_handle(writer) })
}
