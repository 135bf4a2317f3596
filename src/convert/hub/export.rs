//! What every format writer consumes (issue #32): record batches in the hub's form, read
//! as often as the writer needs them.
//!
//! The hub's form is the Arrow mapping of a Marquet table (`docs/geoparquet-mapping.md`):
//! geometry fields are WKB binary, described by the [`GeometryColumnInfo`] the table states
//! (CRS, edges, orientation, epoch, types, covering); ordinary columns have their Arrow
//! types (categoricals as dictionaries, nested columns as structs when the shape asks for
//! it). A writer sees an [`ExportSource`], never the HDF5 table behind it: GeoParquet,
//! GeoJSON and the GIS formats (FlatGeobuf, GeoPackage, Shapefile) are each one function
//! of an `ExportSource`, and `convert` hands them [`TableSource`] — the table a conversion
//! produced (in the output file, or in an HDF5 file held in memory when neither side is
//! HDF5) or the table being exported.
//!
//! Why a conversion between two other formats goes through the hub's table rather than
//! straight from reader to writer: the table is where the rows get their Hilbert order,
//! their types and their geometry checks (one import for every format), which the writers
//! then rely on (a GeoParquet's row groups prune by box because of that order). It is held
//! in memory (HDF5's core driver), never in a temporary file.

use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use super::arrow::{describe_schema, ArrowPlan};
use super::source::{ArrowSource, Batches, SourceSchema};
use crate::error::{MarquetError, Result};
use crate::marquet::{GeometryColumnInfo, MarquetTable, WkbBuffer};

/// Record batches in the hub's form for a writer (see the module documentation).
pub trait ExportSource {
    /// The name of the source in messages (a table path).
    fn path(&self) -> &str;
    /// The Arrow schema of the batches.
    fn schema(&self) -> SchemaRef;
    /// The geometry fields of the schema that are interpretable, primary first; each is a
    /// WKB binary field named [`GeometryColumnInfo::name`].
    fn geometry_columns(&self) -> &[GeometryColumnInfo];
    /// The rows every read yields.
    fn rows(&self) -> u64;
    /// Things a reader of the output should know (e.g. a geometry column read as data).
    fn notes(&self) -> &[String];
    /// Columns that have no Arrow mapping, with the reason.
    fn skipped(&self) -> &[(String, String)];
    /// All rows, in order, as batches of at most `batch_rows` rows. May be called again: a
    /// writer that needs two passes reads the source twice.
    fn batches(&mut self, batch_rows: usize) -> Result<Batches<'_>>;
}

/// How a writer wants the table's columns ([`TableSource::for_export`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct ExportShape {
    /// Geometry fields carry the GeoArrow `geoarrow.wkb` extension metadata (CRS, edges),
    /// which Parquet's writer turns into the GEOMETRY / GEOGRAPHY logical type.
    pub geoarrow: bool,
    /// Struct columns that the import flattened are nested again ([`ArrowPlan::renested`]).
    pub renest: bool,
    /// The table's covering columns are kept (named by [`GeometryColumnInfo::covering`]);
    /// otherwise they are left out.
    pub coverings: bool,
}

/// A Marquet table as record batches: an `ArrowSource` of the hub's import (a table
/// converted again, e.g. with a new CRS: [`TableSource::new`]) and the [`ExportSource`]
/// every writer consumes ([`TableSource::for_export`]).
pub struct TableSource<'t> {
    table: &'t MarquetTable,
    plan: ArrowPlan,
    /// The plan's fields that are read.
    keep: Vec<usize>,
    schema: SchemaRef,
    /// The import's description (geometry fields from their GeoArrow metadata; for an
    /// export source, the schema alone).
    described: SourceSchema,
    rows: u64,
}

impl<'t> TableSource<'t> {
    /// The table as an import source: its columns as [`ArrowPlan`] reads them, geometry
    /// columns with their GeoArrow extension metadata (CRS, edges), covering columns left
    /// out (the import's layout makes its own).
    pub fn new(table: &'t MarquetTable) -> Result<TableSource<'t>> {
        let mut s = TableSource::with_shape(table, ExportShape { geoarrow: true, renest: false, coverings: false })?;
        let mut described = describe_schema(table.path(), s.schema.clone(), &[])?;
        described.rows = Some(s.rows);
        for g in described.geometry.iter_mut() {
            g.source = "Marquet geometry column".into();
        }
        s.described = described;
        Ok(s)
    }

    /// The table as a writer's source, in `shape`.
    pub fn for_export(table: &'t MarquetTable, shape: ExportShape) -> Result<TableSource<'t>> {
        TableSource::with_shape(table, shape)
    }

    fn with_shape(table: &'t MarquetTable, shape: ExportShape) -> Result<TableSource<'t>> {
        let mut plan = ArrowPlan::new(table, None, shape.geoarrow)?;
        if shape.renest {
            plan = plan.renested();
        }
        let full = plan.schema();
        let coverings: Vec<&String> = plan.geometry_columns.iter().filter_map(|g| g.covering.as_ref()).collect();
        let keep: Vec<usize> =
            (0..full.fields().len()).filter(|&i| shape.coverings || !coverings.contains(&full.field(i).name())).collect();
        let schema = Arc::new(full.project(&keep).map_err(|e| MarquetError::Arrow { path: table.path().to_string(), source: e })?);
        let rows = table.nrows()?;
        let described = SourceSchema {
            path: table.path().to_string(),
            schema: schema.clone(),
            geometry: Vec::new(),
            rows: Some(rows),
            findings: Vec::new(),
            geoparquet_version: None,
            native_types: false,
        };
        Ok(TableSource { table, plan, keep, schema, described, rows })
    }

    /// Rows `[start, end)` as one batch of the source's fields.
    pub fn range(&self, start: u64, end: u64) -> Result<RecordBatch> {
        self.project(self.plan.read_range(self.table, start, end)?)
    }

    /// The rows `rows` (strictly ascending, each below NROWS; e.g. a query's answer), in
    /// that order, as batches of the source's fields of at most `batch_rows` rows
    /// ([`ArrowPlan::take`]).
    pub fn take(&self, rows: &[u64], batch_rows: usize) -> Result<Vec<RecordBatch>> {
        self.take_given(rows, batch_rows, None)
    }

    /// [`TableSource::take`] with one geometry column's WKB values in hand
    /// ([`ArrowPlan::take_given`]).
    pub fn take_given(&self, rows: &[u64], batch_rows: usize, given: Option<(&str, &WkbBuffer, usize)>) -> Result<Vec<RecordBatch>> {
        self.plan.take_given(self.table, rows, batch_rows, given)?.into_iter().map(|b| self.project(b)).collect()
    }

    fn project(&self, b: RecordBatch) -> Result<RecordBatch> {
        if self.keep.len() == b.num_columns() {
            return Ok(b);
        }
        b.project(&self.keep).map_err(|e| MarquetError::Arrow { path: self.table.path().to_string(), source: e })
    }

    /// Batches of the plan's fields `cols`.
    fn read(&self, cols: Vec<usize>, batch_rows: usize) -> Batches<'_> {
        let step = batch_rows.max(1) as u64;
        let path = self.table.path().to_string();
        let (t, plan, n) = (self.table, &self.plan, self.rows);
        let all = cols.len() == plan.schema().fields().len();
        let mut s = 0u64;
        Box::new(std::iter::from_fn(move || {
            if s >= n {
                return None;
            }
            let e = (s + step).min(n);
            // Only the columns asked for are read (the import's survey reads few).
            let b = match all {
                true => plan.read_range(t, s, e),
                false => plan.read_fields(t, &cols, s, e).and_then(|b| match b {
                    Some(b) => Ok(b),
                    None => plan.read_range(t, s, e).and_then(|b| b.project(&cols).map_err(|e| MarquetError::Arrow { path: path.clone(), source: e })),
                }),
            };
            s = e;
            Some(b)
        }))
    }
}

impl ArrowSource for TableSource<'_> {
    fn describe(&self) -> &SourceSchema {
        &self.described
    }

    fn batches(&mut self, roots: &[usize], batch_rows: usize) -> Result<Batches<'_>> {
        let cols: Vec<usize> = roots.iter().map(|&r| self.keep[r]).collect();
        Ok(self.read(cols, batch_rows))
    }
}

impl ExportSource for TableSource<'_> {
    fn path(&self) -> &str {
        self.table.path()
    }
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
    fn geometry_columns(&self) -> &[GeometryColumnInfo] {
        &self.plan.geometry_columns
    }
    fn rows(&self) -> u64 {
        self.rows
    }
    fn notes(&self) -> &[String] {
        &self.plan.notes
    }
    fn skipped(&self) -> &[(String, String)] {
        &self.plan.skipped
    }
    fn batches(&mut self, batch_rows: usize) -> Result<Batches<'_>> {
        Ok(self.read(self.keep.clone(), batch_rows))
    }
}
