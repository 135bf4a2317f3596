//! What [`super::convert`] is asked and what it reports.

use std::path::{Path, PathBuf};

use super::format::Format;
use super::geoparquet::export::{CoveringChoice, GeoParquetVersion};
use super::hub::arrow::ExportReport;
use super::hub::import::{ImportReport, PointForm};
use super::hub::nested_json::NestedPolicy;
use super::lake;
use crate::error::Result;

/// Options for [`super::convert`].
#[derive(Debug, Clone, Default)]
pub struct ConvertOptions {
    /// Table path inside the HDF5 file (default: `/` + the other file's stem when writing;
    /// the file's only Marquet table when reading).
    pub table: Option<String>,
    /// Input format (default: from the input's extension).
    pub format: Option<Format>,
    /// Output format (default: from the output's extension).
    pub output_format: Option<Format>,
    /// GeoParquet flavour to write (default 2.0).
    pub geoparquet_version: Option<GeoParquetVersion>,
    /// Treat GeoParquet findings as errors.
    pub strict: bool,
    /// How point columns are stored (default: native point columns).
    pub point_form: Option<PointForm>,
    /// Called after each batch imported or exported (GeoParquet and GeoJSON import,
    /// GeoParquet export), with the rows done so far and the total.
    pub progress: crate::Progress,
    /// How an imported table is laid out (default [`WriteLayout::default`](crate::marquet::WriteLayout::default): Hilbert order,
    /// block index, R-tree for non-point columns, covering columns).
    pub layout: crate::marquet::WriteLayout,
    /// State the CRS of the geometry columns (`--crs`: any definition
    /// [`crate::crs::resolve`] reads), replacing a missing or wrong one; coordinates are
    /// not changed.
    pub crs: Option<String>,
    /// Reproject the geometry columns to this CRS (`--to-crs`, [`crate::crs::reproject_table`]).
    pub to_crs: Option<String>,
    /// Lakehouse sources (CSV, plain Parquet, Iceberg, GeoMesa) and the GeoMesa layout on
    /// export ([`lake`]).
    pub lake: lake::LakeOptions,
    /// Which geometry columns of a GeoParquet output get a bbox covering column (default:
    /// the non-point ones; `--covering` every one, `--no-covering` none; issue #22).
    pub covering: CoveringChoice,
    /// Nested Arrow columns HEP001 cannot hold (lists of structs, maps, nested lists): JSON
    /// text with a warning (default) or refused (`--nested`, issue #22).
    pub nested: NestedPolicy,
    /// Store string columns as UTF-8 bytes in list columns with a null mask (local ruling
    /// L17), the form netCDF-C reads; set for an output that is a netCDF-4 file.
    pub text_as_bytes: bool,
    /// Write a new HDF5 output in the cloud layout (`--cloud`, issue #34,
    /// [`crate::write_cloud_copy`]): metadata at the front, every dataset contiguous and
    /// uncompressed, R-trees first — few round trips per window over HTTP or object
    /// storage; such tables take no appends. Refused for an output that exists.
    pub cloud: bool,
}

/// What [`super::convert`] did.
#[derive(Debug, Clone, Default)]
pub struct ConvertReport {
    /// The file read.
    pub input: PathBuf,
    /// The file written.
    pub output: PathBuf,
    /// The table written or read.
    pub table: String,
    /// The import's report, when the output is a Marquet file.
    pub import: Option<ImportReport>,
    /// The export's report, when the input is a Marquet file.
    pub export: Option<ExportReport>,
    /// What `to_crs` did.
    pub reproject: Option<crate::crs::ReprojectReport>,
    /// What the lakehouse reader did ([`lake`]).
    pub lake: Option<lake::LakeReport>,
    /// The table copied, when input and output are both HDF5 (`super::copy`, issue #32).
    pub copy: Option<super::copy::CopyReport>,
    /// The cloud layout's copy ([`ConvertOptions::cloud`]).
    pub cloud: Option<crate::h5::RelayoutReport>,
}

impl std::fmt::Display for ConvertReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "{} -> {} (table {})", self.input.display(), self.output.display(), self.table)?;
        if let Some(l) = &self.lake {
            write!(f, "{l}")?;
        }
        if let Some(i) = &self.import {
            write!(f, "{i}")?;
        }
        if let Some(r) = &self.reproject {
            write!(f, "{r}")?;
        }
        if let Some(e) = &self.export {
            write!(f, "{e}")?;
        }
        if let Some(c) = &self.copy {
            write!(f, "{c}")?;
        }
        if let Some(c) = &self.cloud {
            writeln!(
                f,
                "cloud layout: {} datasets contiguous and uncompressed, {} block indexes in one compressed chunk, metadata first ({} bytes of data)",
                c.datasets - c.one_chunk,
                c.one_chunk,
                c.data_bytes
            )?;
        }
        Ok(())
    }
}

impl ConvertReport {
    /// The report of an import into the new file `output`, which is removed again when the
    /// import failed.
    pub(crate) fn of_new_file(input: &Path, output: &Path, r: Result<(ImportReport, lake::LakeReport)>) -> Result<ConvertReport> {
        match r {
            Ok((ir, lr)) => Ok(ConvertReport {
                input: input.into(),
                output: output.into(),
                table: ir.table.clone(),
                import: Some(ir),
                lake: Some(lr),
                ..Default::default()
            }),
            Err(e) => {
                let _ = std::fs::remove_file(output);
                Err(e)
            }
        }
    }
}
