//! Appending a GeoParquet, GeoJSON, GIS or Marquet file to an existing Marquet table (the
//! `marquet append` command).
//!
//! A GeoParquet, GeoJSON, FlatGeobuf, GeoPackage or Shapefile source is planned exactly as
//! [`super::convert`] would import it — so a file converted once and appended later lands in
//! the same columns — and its rows, in Hilbert order, stream straight into the target's one
//! writer ([`super::ImportTarget::Append`], issue #31): no temporary file, every row encoded
//! once, everything committed at once. A Marquet source is read batch by batch into the same
//! writer ([`MarquetTable::append_from`]).

use std::path::{Path, PathBuf};


use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use super::hub::arrow::import_record_batches_into;
use super::hub::target::ImportTarget;
use super::lake;
use super::{single_table_of, Format, ImportOptions};
use crate::error::{MarquetError, Result};
use crate::h5col::File;
use crate::marquet::append_from::DEFAULT_APPEND_BATCH_ROWS;
use crate::marquet::spatial_index::RTreeOnAppend;
use crate::marquet::MarquetTable;
use crate::progress::Progress;

/// Options for [`append_file`].
#[derive(Debug, Clone, Default)]
pub struct AppendOptions {
    /// Source format (default: from the source's extension).
    pub format: Option<Format>,
    /// The table to read when the source is an HDF5 file (default: its only Marquet table).
    pub source_table: Option<String>,
    /// What the append does to valid packed R-trees (default: rebuild).
    pub rtree: RTreeOnAppend,
    /// Rows per append (default [`DEFAULT_APPEND_BATCH_ROWS`]).
    pub batch_rows: Option<u64>,
    /// Hears the rows appended so far (and imported, for GeoParquet/GeoJSON sources).
    pub progress: Progress,
    /// How CSV, plain Parquet, Iceberg and GeoMesa sources are read ([`super::lake`]).
    pub lake: super::lake::LakeOptions,
}

/// What [`append_file`] did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AppendReport {
    /// The file whose rows were appended.
    pub source: PathBuf,
    /// HDF5 path of the table appended to.
    pub table: String,
    /// Rows appended.
    pub rows: u64,
    /// Rows in the table after the append.
    pub nrows: u64,
    /// What the lakehouse reader did, for such sources.
    pub lake: Option<super::lake::LakeReport>,
}

impl std::fmt::Display for AppendReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "appended {} rows from {} to {} (now {} rows)", self.rows, self.source.display(), self.table, self.nrows)?;
        match &self.lake {
            Some(l) => write!(f, "{l}"),
            None => Ok(()),
        }
    }
}

/// Append the rows of `source` (GeoParquet, GeoJSON or an HDF5 file's Marquet table) to the
/// Marquet table `table` of `file`, which must have the same columns (see
/// `MarquetTable::check_append_source`).
pub fn append_file(file: &File, table: &str, source: &Path, opts: &AppendOptions) -> Result<AppendReport> {
    // A FIFO, socket or device is refused before anything reads it (issue #19); a lake may
    // be a directory.
    if std::fs::metadata(source).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        crate::error::check_regular_file(source)?;
    }
    if opts.format.is_none() && super::lake::wants_lake(source, &opts.lake)? {
        let (mut r, l) = append_lake(file, table, source, opts, &opts.lake)?;
        r.lake = Some(l);
        return Ok(r);
    }
    let fmt = opts.format.or_else(|| Format::from_path(source)).ok_or_else(|| {
        MarquetError::InvalidArgument(format!("{}: cannot tell the source format from the extension", source.display()))
    })?;
    // A FIFO would block, a directory is no source (issue #19).
    crate::error::check_regular_file(source)?;
    let dst = MarquetTable::open(file, table)?;
    let step = opts.batch_rows.unwrap_or(DEFAULT_APPEND_BATCH_ROWS);
    let rows = match fmt {
        Format::Marquet => {
            let sf = File::open(source)?;
            let st = match &opts.source_table {
                Some(t) => t.clone(),
                None => single_table_of(&sf)?,
            };
            let src = MarquetTable::open(&sf, &st)?;
            dst.append_from(&src, step, opts.rtree, &opts.progress)?
        }
        _ => {
            let target = ImportTarget::Append { table: &dst, rtree: opts.rtree };
            super::import_any(fmt, source, target, &import_options(&dst, opts)?)?.rows
        }
    };
    Ok(AppendReport { source: source.to_path_buf(), table: table.to_string(), rows, nrows: dst.nrows()?, lake: None })
}

/// How an append imports its source: planned as `convert` plans it, the rows in Hilbert
/// order among themselves (the block index then prunes the appended rows too); the
/// target's covering rows and indexes come from the writer.
pub(crate) fn import_options(dst: &MarquetTable, opts: &AppendOptions) -> Result<ImportOptions> {
    // A table that keeps its input order gets the rows as they come (local ruling L19).
    let layout = crate::marquet::WriteLayout::default().with_covering(false).with_spatial_order(!dst.keeps_input_order()?);
    let batch_rows = opts.batch_rows.and_then(|b| usize::try_from(b).ok()).unwrap_or(super::DEFAULT_BATCH_ROWS).max(1);
    Ok(ImportOptions { table: dst.path().to_string(), progress: opts.progress.clone(), layout, batch_rows, ..ImportOptions::default() })
}

/// Append Arrow record batches to the Marquet table `table` of `file`: mapped to columns as
/// [`super::import_record_batches`] maps them, compared with the table's, streamed into its
/// writer (BBOX, types, covering and block indexes maintained, R-trees per
/// [`AppendOptions::rtree`]); all or nothing.
pub fn append_record_batches<I>(file: &File, table: &str, schema: SchemaRef, batches: I, geometry: &[String], opts: &AppendOptions) -> Result<AppendReport>
where
    I: IntoIterator<Item = Result<RecordBatch>>,
{
    let dst = MarquetTable::open(file, table)?;
    let target = ImportTarget::Append { table: &dst, rtree: opts.rtree };
    let rows = import_record_batches_into(target, schema, batches, geometry, &import_options(&dst, opts)?)?.rows;
    Ok(AppendReport { source: PathBuf::from("<Arrow stream>"), table: table.to_string(), rows, nrows: dst.nrows()?, lake: None })
}

/// Append a lakehouse source to the Marquet table `table` of `file`.
pub fn append_lake(file: &File, table: &str, input: &Path, aopts: &AppendOptions, opts: &lake::LakeOptions) -> Result<(AppendReport, lake::LakeReport)> {
    if !lake::raster::raster_columns(&lake::open_source(input, opts)?.schema).is_empty() {
        return Err(MarquetError::Unsupported(format!("{}: Havasu raster columns are converted into a new file (marquet convert), not appended", input.display())));
    }
    let dst = MarquetTable::open(file, table)?;
    let target = ImportTarget::Append { table: &dst, rtree: aopts.rtree };
    let (r, l) = lake::import_lake_into(input, target, &import_options(&dst, aopts)?, opts)?;
    Ok((AppendReport { source: input.to_path_buf(), table: table.to_string(), rows: r.rows, nrows: dst.nrows()?, lake: None }, l))
}
