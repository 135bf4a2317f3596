//! `marquet._marquet`: the Rust half of the Python package (see `python/marquet/__init__.py`
//! for the public API). A thin shell over the `marquet` library: no rules of its own.
//!
//! - Errors: every [`MarquetError`] becomes an instance of the matching class of
//!   `marquet.errors` with the library's message, plus `rule`, `path` and `row` attributes
//!   where the error has them. Panics never cross: pyo3 turns them into `PanicException`,
//!   and the library does not panic on untrusted input anyway.
//! - The GIL is released (`Python::detach`) around every HDF5 read or write; Arrow data
//!   crosses through the C data / C stream interfaces (arrow-pyarrow), without copies.


use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use arrow_array::{ArrayRef, RecordBatch, RecordBatchReader, UInt64Array};
use arrow_array::ffi_stream::RecordBatchStreamReader;
use arrow_pyarrow::{IntoPyArrow, PyArrowType, ToPyArrow};
use arrow_schema::{ArrowError, SchemaRef};
use marquet::convert::{self as conv, AppendOptions, ConvertOptions, Coords, GeoParquetVersion, ImportOptions, PlanCache, PointForm};
use marquet::h5col::predicate;
use marquet::File;
use marquet::RTreeOnAppend;
use marquet::{is_marquet_table, RTreeChoice, Table as MarquetTable, WriteLayout};
use marquet::query::{Predicate, Query, TableQuery, Window};
use marquet::{BBox, ColumnReaders, Error as MarquetError};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Rows per record batch returned.
const BATCH_ROWS: usize = conv::DEFAULT_BATCH_ROWS;

/// The Python exception for a library error: a class of `marquet.errors`, by variant.
fn py_err(py: Python<'_>, e: MarquetError) -> PyErr {
    let msg = e.to_string();
    let (class, rule, path, row): (&str, Option<&str>, Option<String>, Option<u64>) = match &e {
        MarquetError::NotATable { path, .. } => ("NotATableError", None, Some(path.clone()), None),
        MarquetError::UnsupportedVersion { path, .. } => ("UnsupportedError", None, Some(path.clone()), None),
        MarquetError::SpecViolation { path, rule, .. } => ("SpecViolationError", Some(rule), Some(path.clone()), None),
        MarquetError::InvalidWkb { path, row, .. } => ("InvalidWkbError", None, Some(path.clone()), *row),
        MarquetError::Refused { path, row, rule, .. } => ("RefusedError", Some(rule), Some(path.clone()), *row),
        MarquetError::StaleIndex { path, .. } => ("StaleIndexError", None, Some(path.clone()), None),
        MarquetError::InvalidArgument(_) => ("InvalidArgumentError", None, None, None),
        MarquetError::Unsupported(_) => ("UnsupportedError", None, None, None),
        MarquetError::Hdf5 { path, .. } => ("Hdf5Error", None, Some(path.clone()), None),
        MarquetError::Io { path, source } => {
            let class = if source.kind() == std::io::ErrorKind::NotFound { "MarquetFileNotFoundError" } else { "MarquetIOError" };
            (class, None, Some(path.clone()), None)
        }
        MarquetError::Parquet { path, .. } | MarquetError::Arrow { path, .. } => ("MarquetIOError", None, Some(path.clone()), None),
        _ => ("MarquetError", None, None, None),
    };
    let build = || -> PyResult<PyErr> {
        let cls = py.import("marquet.errors")?.getattr(class)?;
        let inst = cls.call1((msg.clone(),))?;
        inst.setattr("rule", rule)?;
        inst.setattr("path", path.clone())?;
        inst.setattr("row", row)?;
        Ok(PyErr::from_value(inst))
    };
    build().unwrap_or_else(|err| err)
}

/// Map a library result into Python.
trait IntoPy<T> {
    fn py(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> IntoPy<T> for marquet::Result<T> {
    fn py(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| py_err(py, e))
    }
}

fn arrow_err(e: ArrowError) -> MarquetError {
    MarquetError::InvalidArgument(format!("arrow: {e}"))
}

fn parse_predicate(p: &str) -> marquet::Result<Predicate> {
    Ok(match p {
        "intersects" => Predicate::Intersects,
        "within" => Predicate::Within,
        "contains" => Predicate::Contains,
        "bbox" => Predicate::BBoxOnly,
        _ => {
            return Err(MarquetError::InvalidArgument(format!(
                "predicate {p:?}: expected one of intersects, within, contains, bbox"
            )))
        }
    })
}

/// The Marquet tables of the file at `path`.
fn marquet_tables(file: &File) -> marquet::Result<Vec<String>> {
    let mut out = Vec::new();
    for t in file.tables()? {
        if let Ok(tab) = file.table(&t) {
            if is_marquet_table(&tab)? {
                out.push(t);
            }
        }
    }
    Ok(out)
}

/// The only Marquet table, or an error listing them.
fn only_table(file: &File) -> marquet::Result<String> {
    let mut v = marquet_tables(file)?;
    match v.len() {
        1 => Ok(v.remove(0)),
        0 => Err(MarquetError::InvalidArgument(format!("{}: no Marquet table in the file", file.filename()))),
        _ => Err(MarquetError::InvalidArgument(format!(
            "{}: several Marquet tables ({}); choose one with table=",
            file.filename(),
            v.join(", ")
        ))),
    }
}

/// An open Marquet table.
struct Open {
    // Field order: the readers and the table's HDF5 objects close before the file.
    /// The warm readers of the geometry columns queried so far (issue #33).
    readers: ColumnReaders,
    /// The Arrow plans of the column selections read so far.
    plans: PlanCache,
    table: MarquetTable,
    file: File,
}

impl Open {
    fn new(path: &Path, table: Option<&str>) -> marquet::Result<Open> {
        let file = File::open(path)?;
        let name = match table {
            Some(t) => t.to_string(),
            None => only_table(&file)?,
        };
        let table = MarquetTable::open(&file, &name)?;
        Ok(Open { readers: ColumnReaders::new(), plans: PlanCache::new(), table, file })
    }

    /// Matching rows, ascending: spatial window and/or attribute filters (ANDed, each on its
    /// best index, as `marquet query`); `None` when there is neither. A window is answered
    /// through the column's warm reader (`ColumnReaders::query`) when there are no filters.
    /// With `wkb`, also the queried geometry column's WKB of those rows (the query returns
    /// it: `Query::with_wkb`), so that reading the rows does not read those geometries
    /// again (issue #33 item 1).
    #[allow(clippy::type_complexity)]
    fn rows_with_wkb(
        &self,
        bbox: Option<(f64, f64, f64, f64)>,
        predicate: &str,
        wheres: &[String],
        column: Option<&str>,
        wkb: bool,
    ) -> marquet::Result<(Option<Vec<u64>>, Option<(String, marquet::WkbBuffer)>)> {
        let filters = wheres.iter().map(|w| predicate::parse_where(w)).collect::<marquet::Result<Vec<_>>>()?;
        let pred = parse_predicate(predicate)?;
        let Some((x0, y0, x1, y1)) = bbox else {
            return Ok(match filters.is_empty() {
                true => (None, None),
                false => (Some(self.table.filter_rows(&filters, true)?.0), None),
            });
        };
        let col = self.geometry_column(column)?;
        let q = Query::new(Window::BBox(BBox::xy(x0, y0, x1, y1)), pred).with_wkb(wkb);
        let (rows, w) = match filters.is_empty() {
            true => {
                let r = self.readers.query(&self.file, &self.table, &col, &q)?;
                (r.rows, r.wkb)
            }
            false => {
                let r = self.table.query_where(&col, &q, &filters)?;
                (r.rows, r.wkb)
            }
        };
        Ok((Some(rows), w.map(|w| (col, w))))
    }

    /// [`Open::rows_with_wkb`] without the WKB.
    fn rows(
        &self,
        bbox: Option<(f64, f64, f64, f64)>,
        predicate: &str,
        wheres: &[String],
        column: Option<&str>,
    ) -> marquet::Result<Option<Vec<u64>>> {
        Ok(self.rows_with_wkb(bbox, predicate, wheres, column, false)?.0)
    }

    /// Columns returned by default: every column but the covering columns (an index).
    fn default_columns(&self) -> marquet::Result<Vec<String>> {
        let t = &self.table;
        let mut cov = Vec::new();
        let mut geoms = Vec::new();
        for g in t.geometry_column_names()? {
            if t.not_interpretable(&g)?.is_none() {
                if let Some(c) = t.geometry_column(&g)?.covering {
                    cov.push(c);
                }
            }
            geoms.push(g);
        }
        let mut order = t.column_names()?;
        if order.is_empty() {
            order = t.discover_columns()?;
        }
        for g in geoms {
            if !order.contains(&g) {
                order.push(g);
            }
        }
        Ok(order.into_iter().filter(|c| !cov.contains(c)).collect())
    }

    fn geometry_column(&self, column: Option<&str>) -> marquet::Result<String> {
        match column {
            Some(c) => Ok(c.to_string()),
            None => self.table.primary_geometry_column(),
        }
    }

    /// The selected rows (or all) of `columns` (or the default columns) as record batches.
    fn read(
        &self,
        columns: Option<Vec<String>>,
        rows: Option<&[u64]>,
        native: Option<Coords>,
        given: Option<&(String, marquet::WkbBuffer)>,
    ) -> marquet::Result<(SchemaRef, Vec<RecordBatch>, Vec<String>)> {
        let cols = match columns {
            Some(c) => c,
            None => self.default_columns()?,
        };
        let plan = self.plans.plan(&self.file, &self.table, Some(&cols), true, native)?;
        let batches = match rows {
            Some(r) => plan.take_given(&self.table, r, BATCH_ROWS, given.map(|(c, w)| (c.as_str(), w, 0)))?,
            // The whole table: batches read in parallel (issue #33 item 6).
            None => plan.read_all(&self.table, BATCH_ROWS)?,
        };
        let mut notes = plan.notes.clone();
        notes.extend(plan.skipped.iter().map(|(c, why)| format!("column {c}: not read ({why})")));
        Ok((plan.schema(), batches, notes))
    }
}

fn to_table(py: Python<'_>, schema: SchemaRef, batches: Vec<RecordBatch>) -> PyResult<Bound<'_, PyAny>> {
    let t = arrow_pyarrow::Table::try_new(batches, schema).map_err(|e| PyValueError::new_err(e.to_string()))?;
    t.into_pyarrow(py)
}

/// A Marquet table kept open for repeated queries (the warm reader). Not shared between
/// threads at once: calls on one object are serialized.
#[pyclass(module = "marquet._marquet", subclass)]
struct Table {
    state: Arc<Mutex<State>>,
    path: String,
    name: String,
}

/// What a [`Table`] holds.
enum State {
    Open(Open),
    /// Its HDF5 handles were released for a write to its file ([`release_tables`]); the next
    /// call opens the table again.
    Released,
    /// `close()` was called.
    Closed,
}

/// The tables open in this process, by file. Within one process HDF5 opens a file either
/// read-only or for writing, so a write to a file a `Table` holds open (`write`, `append`,
/// `convert`'s output) would fail with "file is already open for read-only": the write
/// first releases those tables' handles ([`release_tables`]), and each opens its file again
/// at its next call, seeing the rows written.
static OPEN_TABLES: Mutex<Vec<(PathBuf, Weak<Mutex<State>>)>> = Mutex::new(Vec::new());

/// The key of a file in [`OPEN_TABLES`] (its canonical path; the path as given when it
/// cannot be resolved).
fn file_key(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Release the HDF5 handles of the tables open on the file at `path` (see [`OPEN_TABLES`]).
/// Waits for a call in progress on such a table to end.
fn release_tables(path: &Path) {
    let key = file_key(path);
    let mut open = OPEN_TABLES.lock().unwrap_or_else(|p| p.into_inner());
    open.retain(|(_, w)| w.strong_count() > 0);
    for (k, w) in open.iter() {
        if *k != key {
            continue;
        }
        if let Some(state) = w.upgrade() {
            let mut g = state.lock().unwrap_or_else(|p| p.into_inner());
            if matches!(*g, State::Open(_)) {
                *g = State::Released;
            }
        }
    }
}

impl Table {
    fn with<T: Send>(&self, py: Python<'_>, f: impl FnOnce(&Open) -> marquet::Result<T> + Send) -> PyResult<T> {
        let r = py.detach(|| {
            let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
            if matches!(*g, State::Released) {
                *g = State::Open(Open::new(Path::new(&self.path), Some(&self.name))?);
            }
            match &*g {
                State::Open(o) => f(o),
                _ => Err(MarquetError::InvalidArgument(format!("{}: {}: the table is closed", self.path, self.name))),
            }
        });
        r.py(py)
    }
}

#[pymethods]
impl Table {
    #[new]
    #[pyo3(signature = (path, table=None))]
    fn new(py: Python<'_>, path: PathBuf, table: Option<String>) -> PyResult<Table> {
        let o = py.detach(|| Open::new(&path, table.as_deref())).py(py)?;
        let name = o.table.path().to_string();
        let state = Arc::new(Mutex::new(State::Open(o)));
        let mut open = OPEN_TABLES.lock().unwrap_or_else(|p| p.into_inner());
        open.retain(|(_, w)| w.strong_count() > 0);
        open.push((file_key(&path), Arc::downgrade(&state)));
        Ok(Table { state, path: path.display().to_string(), name })
    }

    /// The HDF5 file's path.
    #[getter]
    fn file(&self) -> String {
        self.path.clone()
    }

    /// The table group's path in the file, e.g. `/countries`.
    #[getter]
    fn name(&self) -> String {
        self.name.clone()
    }

    /// Number of rows (NROWS).
    #[getter]
    fn num_rows(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(py, |o| o.table.nrows())
    }

    /// Column names in COLUMN_ORDER (covering columns included).
    #[getter]
    fn columns(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.with(py, |o| {
            let c = o.table.column_names()?;
            if c.is_empty() {
                o.table.discover_columns()
            } else {
                Ok(c)
            }
        })
    }

    /// Geometry column names, primary first.
    #[getter]
    fn geometry_columns(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.with(py, |o| o.table.geometry_column_names())
    }

    /// The table as `marquet info --json` describes it (a JSON string).
    fn _describe(&self, py: Python<'_>) -> PyResult<String> {
        self.with(py, |o| cli::info::describe_table(&o.file, o.table.path()).map(|v| v.to_string()))
    }

    /// Matching row numbers, ascending, as a pyarrow UInt64Array.
    #[pyo3(signature = (bbox=None, predicate="intersects", r#where=None, column=None))]
    fn _query_rows<'py>(
        &self,
        py: Python<'py>,
        bbox: Option<(f64, f64, f64, f64)>,
        predicate: &str,
        r#where: Option<Vec<String>>,
        column: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let w = r#where.unwrap_or_default();
        let pred = predicate.to_string();
        let rows = self.with(py, move |o| match o.rows(bbox, &pred, &w, column.as_deref())? {
            Some(r) => Ok(r),
            None => Ok((0..o.table.nrows()?).collect()),
        })?;
        let a: ArrayRef = std::sync::Arc::new(UInt64Array::from(rows));
        a.to_data().to_pyarrow(py)
    }

    /// Rows as a pyarrow.Table (see `marquet.read_arrow`), and the notes of the read (geometry
    /// columns read as plain H5Col data, ruling R16; columns without an Arrow mapping).
    #[pyo3(signature = (columns=None, bbox=None, predicate="intersects", r#where=None, column=None, rows=None, native_points=false, interleaved=false))]
    #[allow(clippy::too_many_arguments)]
    fn _read_arrow<'py>(
        &self,
        py: Python<'py>,
        columns: Option<Vec<String>>,
        bbox: Option<(f64, f64, f64, f64)>,
        predicate: &str,
        r#where: Option<Vec<String>>,
        column: Option<String>,
        rows: Option<Vec<u64>>,
        native_points: bool,
        interleaved: bool,
    ) -> PyResult<(Bound<'py, PyAny>, Vec<String>)> {
        let native = native_points.then_some(if interleaved { Coords::Interleaved } else { Coords::Separated });
        let w = r#where.unwrap_or_default();
        let pred = predicate.to_string();
        let (schema, batches, notes) = self.with(py, move |o| {
            // The query's own WKB of the geometry column, when that column is read (as WKB
            // or in a GeoArrow native encoding, which is built from it).
            let (sel, given) = match rows {
                Some(r) => (Some(r), None),
                None => {
                    let wkb = bbox.is_some()
                        && match (&columns, &column) {
                            (Some(cs), Some(c)) => cs.contains(c),
                            (Some(cs), None) => cs.contains(&o.table.primary_geometry_column()?),
                            (None, _) => true,
                        };
                    o.rows_with_wkb(bbox, &pred, &w, column.as_deref(), wkb)?
                }
            };
            o.read(columns, sel.as_deref(), native, given.as_ref())
        })?;
        Ok((to_table(py, schema, batches)?, notes))
    }

    /// The rasters of a raster footprint table (Havasu rasters converted by `convert`, issue
    /// #37) whose footprint meets `bbox` (all rows without one): per hit, its facts as JSON
    /// (`TableRaster::to_json` without pixels), its array's bytes, numpy dtype and shape (or
    /// None when it has no in-db band).
    #[pyo3(signature = (bbox=None, r#where=None, column=None))]
    #[allow(clippy::type_complexity)]
    fn _rasters(
        &self,
        py: Python<'_>,
        bbox: Option<(f64, f64, f64, f64)>,
        r#where: Option<Vec<String>>,
        column: Option<String>,
    ) -> PyResult<Vec<(String, Option<Vec<u8>>, Option<String>, Option<Vec<u64>>)>> {
        use marquet::convert::lake::raster::PixelType;
        use marquet::convert::lake::raster::read::{raster_columns, read_rasters};
        let w = r#where.unwrap_or_default();
        self.with(py, move |o| {
            let col = match column.clone() {
                Some(c) => c,
                None => o.table.primary_geometry_column()?,
            };
            if !raster_columns(&o.table)?.contains(&col) {
                return Err(MarquetError::InvalidArgument(format!("{}: {col} is not a raster footprint column (a table `convert` made of Havasu rasters)", o.table.path())));
            }
            let rows = match o.rows(bbox, "intersects", &w, Some(&col))? {
                Some(r) => r,
                None => (0..o.table.nrows()?).collect(),
            };
            let mut out = Vec::with_capacity(rows.len());
            for chunk in rows.chunks(64) {
                for r in read_rasters(&o.file, &o.table, &col, chunk)? {
                    let facts = r.to_json(false).to_string();
                    let arr = r.array.map(|g| {
                        let dt = match PixelType::from_dtype(&g.dtype) {
                            Some(PixelType::I8) => "i1",
                            Some(PixelType::U8) => "u1",
                            Some(PixelType::I16) => "<i2",
                            Some(PixelType::U16) => "<u2",
                            Some(PixelType::I32) => "<i4",
                            Some(PixelType::U32) => "<u4",
                            Some(PixelType::F32) => "<f4",
                            _ => "<f8",
                        };
                        (g.bytes, dt.to_string(), g.dims)
                    });
                    match arr {
                        Some((b, d, s)) => out.push((facts, Some(b), Some(d), Some(s))),
                        None => out.push((facts, None, None, None)),
                    }
                }
            }
            Ok(out)
        })
    }

    /// Close the file (further calls raise).
    fn close(&self, py: Python<'_>) {
        py.detach(|| {
            *self.state.lock().unwrap_or_else(|p| p.into_inner()) = State::Closed;
        })
    }

    fn __repr__(&self) -> String {
        format!("<marquet.Table {} in {}>", self.name, self.path)
    }
}

/// The Marquet tables of an HDF5 file.
#[pyfunction]
fn list_tables(py: Python<'_>, path: PathBuf) -> PyResult<Vec<String>> {
    py.detach(|| marquet_tables(&File::open(&path)?)).py(py)
}

/// The layout of a new table from the keyword arguments of `write`.
fn layout(keep_order: bool, index: bool, rtree: &str, covering: bool) -> marquet::Result<WriteLayout> {
    let mut l = WriteLayout::default().with_spatial_order(!keep_order).with_covering(covering);
    if !index {
        l = l.without_indexes();
    } else {
        l = l.with_rtree(rtree.parse::<RTreeChoice>()?);
    }
    Ok(l)
}

/// Read every batch of a C stream (the GIL is released: pyarrow's exported streams take it
/// themselves when they call back into Python).
fn stream_batches(r: RecordBatchStreamReader) -> (SchemaRef, impl Iterator<Item = marquet::Result<RecordBatch>> + Send) {
    let schema = r.schema();
    (schema, r.map(|b| b.map_err(arrow_err)))
}

/// Write an Arrow stream as a new Marquet table (file created when missing).
#[pyfunction]
#[pyo3(signature = (path, data, table, geometry=None, keep_order=false, index=true, rtree="auto", covering=true, point_form="native"))]
#[allow(clippy::too_many_arguments)]
fn _write(
    py: Python<'_>,
    path: PathBuf,
    data: PyArrowType<RecordBatchStreamReader>,
    table: String,
    geometry: Option<Vec<String>>,
    keep_order: bool,
    index: bool,
    rtree: &str,
    covering: bool,
    point_form: &str,
) -> PyResult<u64> {
    let lay = layout(keep_order, index, rtree, covering).py(py)?;
    let point_form = match point_form {
        "native" => PointForm::Native,
        "fixed_wkb" => PointForm::FixedWkb,
        "wkb" => PointForm::VarWkb,
        _ => {
            return Err(py_err(
                py,
                MarquetError::InvalidArgument(format!("point_form {point_form:?}: expected native, fixed_wkb or wkb")),
            ))
        }
    };
    let geometry = geometry.unwrap_or_default();
    let table = if table.starts_with('/') { table } else { format!("/{table}") };
    py.detach(move || {
        release_tables(&path);
        let existed = path.exists();
        let file = if existed { File::open_rw(&path)? } else { File::create(&path)? };
        let (schema, batches) = stream_batches(data.0);
        let opts = ImportOptions { table, layout: lay, point_form, ..ImportOptions::default() };
        let r = conv::import_record_batches(&file, schema, batches, &geometry, &opts);
        drop(file);
        if r.is_err() && !existed {
            let _ = std::fs::remove_file(&path);
        }
        Ok(r?.rows)
    })
    .py(py)
}

/// Append an Arrow stream to an existing table through the library's append path.
#[pyfunction]
#[pyo3(signature = (path, data, table=None, geometry=None, rtree="rebuild"))]
fn _append(
    py: Python<'_>,
    path: PathBuf,
    data: PyArrowType<RecordBatchStreamReader>,
    table: Option<String>,
    geometry: Option<Vec<String>>,
    rtree: &str,
) -> PyResult<u64> {
    let rt = match rtree {
        "rebuild" => RTreeOnAppend::Rebuild,
        "stale" => RTreeOnAppend::LeaveStale,
        _ => return Err(py_err(py, MarquetError::InvalidArgument(format!("rtree {rtree:?}: expected rebuild or stale")))),
    };
    let geometry = geometry.unwrap_or_default();
    py.detach(move || {
        release_tables(&path);
        let file = File::open_rw(&path)?;
        let table = match table {
            Some(t) => t,
            None => only_table(&file)?,
        };
        let (schema, batches) = stream_batches(data.0);
        let opts = AppendOptions { rtree: rt, ..AppendOptions::default() };
        Ok(conv::append_record_batches(&file, &table, schema, batches, &geometry, &opts)?.rows)
    })
    .py(py)
}

/// Validate a file: the report as `marquet validate --json` prints it (a JSON string).
#[pyfunction]
#[pyo3(signature = (path, table=None, strict=false))]
fn _validate(py: Python<'_>, path: PathBuf, table: Option<String>, strict: bool) -> PyResult<String> {
    py.detach(move || {
        let opts = marquet::validate::Options { table, strict, ..Default::default() };
        Ok(marquet::validate::validate_file(&path, &opts)?.to_json().to_string())
    })
    .py(py)
}

/// Convert between GeoParquet, GeoJSON and Marquet by file extension (`marquet convert`).
#[pyfunction]
#[pyo3(signature = (input, output, table=None, geoparquet_version=None, keep_order=false, index=true, rtree="auto", covering=true, crs=None, to_crs=None, cloud=false))]
#[allow(clippy::too_many_arguments)]
fn convert<'py>(
    py: Python<'py>,
    input: PathBuf,
    output: PathBuf,
    table: Option<String>,
    geoparquet_version: Option<String>,
    keep_order: bool,
    index: bool,
    rtree: &str,
    covering: bool,
    crs: Option<String>,
    to_crs: Option<String>,
    cloud: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let lay = layout(keep_order, index, rtree, covering).py(py)?;
    let version = match geoparquet_version.as_deref() {
        None => None,
        Some(v) => Some(GeoParquetVersion::parse(v).ok_or_else(|| {
            py_err(py, MarquetError::InvalidArgument(format!("geoparquet_version {v:?}: expected 2.0, 1.1 or 1.0")))
        })?),
    };
    let r = py
        .detach(move || {
            release_tables(&output);
            let opts = ConvertOptions { table, geoparquet_version: version, layout: lay, crs, to_crs, cloud, ..ConvertOptions::default() };
            conv::convert(&input, &output, &opts)
        })
        .py(py)?;
    let d = PyDict::new(py);
    d.set_item("table", &r.table)?;
    d.set_item("rows", r.import.as_ref().map(|i| i.rows).or(r.export.as_ref().map(|e| e.rows)).or(r.copy.as_ref().map(|c| c.rows)))?;
    d.set_item("report", r.to_string())?;
    Ok(d)
}

/// The `marquet` command (src/bin/marquet/main.rs, compiled into the extension): the wheel's
/// console script `marquet` calls [`_cli_main`] with `sys.argv`.
#[allow(dead_code, clippy::all)]
#[path = "../../src/bin/marquet/main.rs"]
mod cli;

/// Run the `marquet` command with `argv` (program name first); returns its exit status.
/// The GIL is released while it runs.
#[pyfunction]
fn _cli_main(py: Python<'_>, argv: Vec<String>) -> u8 {
    let code = py.detach(move || {
        let c = format!("{:?}", cli::run(argv));
        let _ = std::io::Write::flush(&mut std::io::stdout());
        c
    });
    // ExitCode has no accessor: its Debug form carries the status.
    code.chars().filter(|c| c.is_ascii_digit()).collect::<String>().parse().unwrap_or(2)
}

/// The library version.
#[pyfunction]
fn _library_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Make PROJ read its database (`proj.db`) from `dir` only: the wheel carries one beside
/// its own libproj (issue #30), so CRS codes and reprojection work on a machine without
/// PROJ installed and never meet another PROJ version's database.
#[pyfunction]
fn _set_proj_data(dir: std::path::PathBuf) -> PyResult<()> {
    marquet::crs::proj::set_search_paths(&[dir]).map_err(pyo3::exceptions::PyValueError::new_err)
}

/// Open PROJ from `path` (the libproj the wheel carries in `marquet.libs/`, issue #33) rather
/// than look for it on the system; `MARQUET_PROJ_LIB` still takes precedence.
#[pyfunction]
fn _set_proj_library(path: std::path::PathBuf) -> PyResult<()> {
    marquet::crs::proj::set_library_path(&path).map_err(pyo3::exceptions::PyValueError::new_err)
}

/// Load PROJ now and return the name or path it was opened by (raises when it cannot be).
#[pyfunction]
fn _proj_library() -> PyResult<String> {
    marquet::crs::proj::load().map(str::to_string).map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))
}

#[pymodule]
fn _marquet(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Table>()?;
    m.add_function(wrap_pyfunction!(list_tables, m)?)?;
    m.add_function(wrap_pyfunction!(_write, m)?)?;
    m.add_function(wrap_pyfunction!(_append, m)?)?;
    m.add_function(wrap_pyfunction!(_validate, m)?)?;
    m.add_function(wrap_pyfunction!(convert, m)?)?;
    m.add_function(wrap_pyfunction!(_library_version, m)?)?;
    m.add_function(wrap_pyfunction!(_cli_main, m)?)?;
    m.add_function(wrap_pyfunction!(_set_proj_data, m)?)?;
    m.add_function(wrap_pyfunction!(_set_proj_library, m)?)?;
    m.add_function(wrap_pyfunction!(_proj_library, m)?)?;
    Ok(())
}
