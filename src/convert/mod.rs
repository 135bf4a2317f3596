//! GeoParquet and GeoJSON in and out of Marquet tables (HEP002 §14).
//!
//! - [`import_geoparquet`]: GeoParquet 0.x / 1.0 / 1.1 (WKB and the GeoArrow native
//!   encodings) / 2.0 (Parquet GEOMETRY and GEOGRAPHY logical types, with or without `geo`
//!   metadata) → a Marquet table, streamed record batch by record batch.
//! - [`export_geoparquet`]: a Marquet table → GeoParquet 2.0 (native logical types, `geo`
//!   metadata 2.0.0, per-row-group geospatial statistics) or the 1.1 / 1.0 flavours, one
//!   row group per row block.
//! - [`import_geojson`] / [`export_geojson`]: RFC 7946 FeatureCollections.
//! - [`convert`]: picks the direction from the file extensions (for the CLI).
//! - [`append_file`]: appends a GeoParquet, GeoJSON or Marquet file to an existing table.
//! - [`ArrowPlan`], [`import_record_batches`], [`append_record_batches`]: Marquet tables as
//!   in-memory Arrow record batches and back (for bindings: `python/`).
//!
//! The mapping is documented in `docs/geoparquet-mapping.md`. Nothing is dropped
//! silently: columns that have no HEP001 counterpart are listed in
//! [`ImportReport::skipped`], and deviations from the GeoParquet specification in
//! [`ImportReport::findings`] with the failure codes of the geoparquet-testing corpus
//! (`bad_data/manifest.json`); with [`ImportOptions::strict`] every finding is an error.
//!
//! # Example
//!
//! Natural Earth's 243 cities from GeoParquet into a Marquet point column (HEP002 §7.6),
//! out to GeoParquet 2.0 and in again: the geometries survive the round trip byte for byte.
//!
//! ```
//! use std::path::Path;
//! use marquet::convert::{export_geoparquet, import_geoparquet, ExportOptions, ImportOptions};
//! use marquet::h5col::File;
//! use marquet::marquet::{MarquetTable, StorageForm};
//! use marquet::Dimensions;
//!
//! let src = Path::new(env!("CARGO_MANIFEST_DIR"))
//!     .join("testdata/peers/geoarrow-data/natural-earth/natural-earth_cities_geo.parquet");
//! let h5 = std::env::temp_dir().join(format!("marquet-doc-convert-{}.h5", std::process::id()));
//! let parquet = h5.with_extension("parquet");
//! let file = File::create(&h5)?;
//!
//! let imported = import_geoparquet(&src, &file, &ImportOptions::new("/cities"))?;
//! assert_eq!(imported.rows, 243);
//! let geometry = &imported.geometry_columns[0];
//! assert_eq!(geometry.form, StorageForm::Point { dims: Dimensions::Xy, f32: false });
//!
//! let exported = export_geoparquet(&file, "/cities", &parquet, &ExportOptions::default())?;
//! assert_eq!((exported.rows, exported.version.as_str()), (243, "2.0.0"));
//! let again = import_geoparquet(&parquet, &file, &ImportOptions::new("/again"))?;
//! assert_eq!(again.rows, 243);
//!
//! let (a, b) = (MarquetTable::open(&file, "/cities")?, MarquetTable::open(&file, "/again")?);
//! assert_eq!(a.read_wkb(&geometry.name, 0, 243)?, b.read_wkb(&geometry.name, 0, 243)?);
//! # drop((a, b, file));
//! # std::fs::remove_file(&h5).ok();
//! # std::fs::remove_file(&parquet).ok();
//! # Ok::<(), marquet::MarquetError>(())
//! ```

pub mod append;
mod convert_crs;
#[cfg(feature = "gis")]
pub mod fgb;
pub mod geojson;
pub mod geojson_crs;
pub mod geoparquet;
#[cfg(feature = "gis")]
pub mod gpkg;
pub mod hub;
pub mod lake;
#[cfg(feature = "gis")]
pub mod shp;
mod stage;

use std::path::{Path, PathBuf};

use crate::error::{MarquetError, Result};
use crate::h5col::File;

pub use append::{append_file, append_record_batches, AppendOptions, AppendReport};
pub use hub::arrow::{import_record_batches, ArrowPlan, ExportReport};
pub use geoparquet::export::{export_geoparquet, CoveringChoice, ExportOptions, GeoParquetVersion};
pub use geojson::{export_geojson, import_geojson};
pub use geoparquet::reader::{import_geoparquet, import_geoparquet_into};
pub use hub::import::{ImportOptions, ImportReport, PointForm};
pub use hub::nested_json::NestedPolicy;
pub use hub::target::ImportTarget;

/// Rows per record batch read or written, and per exported row group: one Marquet row block
/// at the default chunk length (HEP002 §10.2).
pub const DEFAULT_BATCH_ROWS: usize = 65_536;

/// Longest string (bytes, without the NUL) stored as a fixed-length UTF-8 column; longer
/// columns become list-of-bytes columns.
pub const DEFAULT_MAX_FIXED_STRING: usize = 4096;

/// Failure codes, as in geoparquet-testing's `bad_data/manifest.json` plus our own.
pub mod code {
    /// The file has no `geo` key-value metadata (fatal when no column carries a Parquet
    /// GEOMETRY/GEOGRAPHY logical type either).
    pub const METADATA_MISSING: &str = "metadata_missing";
    /// The `geo` metadata is not valid JSON.
    pub const METADATA_INVALID_JSON: &str = "metadata_invalid_json";
    /// The `geo` metadata breaks the GeoParquet schema: a missing `version` or `columns`, a
    /// `primary_column` that is not a column, a member of the wrong JSON type.
    pub const SCHEMA_VALIDATION: &str = "schema_validation_error";
    /// A `geo` `version` whose major version this importer does not know.
    pub const VERSION_UNKNOWN: &str = "version_unknown";
    /// A geometry value is not one ISO WKB value (HEP002 §7.1).
    pub const WKB_PARSE: &str = "wkb_parse_error";
    /// The data holds a geometry kind that `geometry_types` does not declare (GEOMETRY_TYPES is
    /// written from the data).
    pub const GEOMETRY_TYPE_MISMATCH: &str = "geometry_type_mismatch";
    /// The data holds a declared kind with Z/M dimensions that `geometry_types` does not declare.
    pub const ZM_MISMATCH: &str = "zm_mismatch";
    /// `epoch` is set on a CRS without a dynamic datum (kept as `EPOCH`, HEP002 §8.3).
    pub const EPOCH_UNSUPPORTED: &str = "epoch_unsupported";
    /// The declared `bbox` does not contain the data's box (BBOX is written from the data).
    pub const BBOX_MISMATCH: &str = "bbox_mismatch";
    /// The `geo` CRS differs from the CRS of the Parquet logical type.
    pub const CRS_MISMATCH: &str = "crs_mismatch";
    /// Ours: a CRS that is not PROJJSON (pre-1.0 WKT strings, `srid:N`).
    pub const CRS_NOT_PROJJSON: &str = "crs_not_projjson";
    /// Ours: a Parquet or Arrow feature this converter does not read.
    pub const UNSUPPORTED: &str = "unsupported";
}

/// The `rule` prefix of [`MarquetError::SpecViolation`]s raised here; the code follows.
const RULE: &str = "geoparquet";

/// Build the error for a failure `code` (a [`MarquetError::SpecViolation`] whose rule is
/// `"geoparquet <code>"`, see [`failure_code`]).
pub(crate) fn fail(path: &str, code: &'static str, message: impl Into<String>) -> MarquetError {
    let rule: &'static str = match code {
        code::METADATA_MISSING => "geoparquet metadata_missing",
        code::METADATA_INVALID_JSON => "geoparquet metadata_invalid_json",
        code::SCHEMA_VALIDATION => "geoparquet schema_validation_error",
        code::VERSION_UNKNOWN => "geoparquet version_unknown",
        code::WKB_PARSE => "geoparquet wkb_parse_error",
        code::GEOMETRY_TYPE_MISMATCH => "geoparquet geometry_type_mismatch",
        code::ZM_MISMATCH => "geoparquet zm_mismatch",
        code::EPOCH_UNSUPPORTED => "geoparquet epoch_unsupported",
        code::BBOX_MISMATCH => "geoparquet bbox_mismatch",
        code::CRS_MISMATCH => "geoparquet crs_mismatch",
        code::CRS_NOT_PROJJSON => "geoparquet crs_not_projjson",
        _ => "geoparquet unsupported",
    };
    MarquetError::spec(path, rule, message)
}

/// The GeoParquet failure code of an error from this module (`wkb_parse_error` for
/// malformed WKB), or `None`.
pub fn failure_code(e: &MarquetError) -> Option<&'static str> {
    match e {
        MarquetError::SpecViolation { rule, .. } => rule.strip_prefix(RULE).map(|s| s.trim_start()),
        MarquetError::InvalidWkb { .. } => Some(code::WKB_PARSE),
        _ => None,
    }
}

/// A deviation from the GeoParquet specification found while importing.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// One of [`code`].
    pub code: &'static str,
    /// The GeoParquet column concerned, when the finding is about one column.
    pub column: Option<String>,
    /// Lowercase: what was found, and what was done about it.
    pub message: String,
}

impl Finding {
    /// A finding with failure `code` about `column` (or the whole file).
    pub fn new(code: &'static str, column: Option<&str>, message: impl Into<String>) -> Finding {
        Finding { code, column: column.map(|s| s.to_string()), message: message.into() }
    }
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.column {
            Some(c) => write!(f, "{}: column {c:?}: {}", self.code, self.message),
            None => write!(f, "{}: {}", self.code, self.message),
        }
    }
}

/// A file format [`convert`] reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// GeoParquet 0.x–2.0 (HEP002 §14).
    GeoParquet,
    /// An RFC 7946 GeoJSON FeatureCollection.
    GeoJson,
    /// HDF5 with Marquet tables.
    Marquet,
    /// FlatGeobuf (`.fgb`, feature `gis`).
    FlatGeobuf,
    /// OGC GeoPackage (`.gpkg`, feature `gis`).
    GeoPackage,
    /// ESRI Shapefile (`.shp` with `.dbf`, `.prj`, feature `gis`).
    Shapefile,
}

impl Format {
    /// From a file extension: `.parquet`/`.geoparquet`, `.geojson`/`.json`,
    /// `.h5`/`.hdf5`/`.he5`/`.hdf` and netCDF-4's `.nc`/`.nc4`, `.fgb`, `.gpkg`, `.shp`.
    pub fn from_path(p: &Path) -> Option<Format> {
        let ext = p.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "parquet" | "geoparquet" | "pq" => Format::GeoParquet,
            "geojson" | "json" => Format::GeoJson,
            // netCDF-4 files are HDF5 files (issue #35).
            "h5" | "hdf5" | "he5" | "hdf" | "nc" | "nc4" => Format::Marquet,
            "fgb" => Format::FlatGeobuf,
            "gpkg" => Format::GeoPackage,
            "shp" => Format::Shapefile,
            _ => return None,
        })
    }
}

/// Options for [`convert`].
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
}

/// What [`convert`] did.
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
        Ok(())
    }
}

pub(crate) fn default_table_name(p: &Path) -> String {
    let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("table");
    let clean: String = stem.chars().map(|c| if c == '/' || c == '.' { '_' } else { c }).collect();
    format!("/{}", if clean.is_empty() { "table" } else { &clean })
}

fn single_table(file: &File, opts: &ConvertOptions) -> Result<String> {
    if let Some(t) = &opts.table {
        return Ok(t.clone());
    }
    single_table_of(file)
}

/// The only Marquet table of `file`, or an error listing them.
fn single_table_of(file: &File) -> Result<String> {
    let mut marquet = Vec::new();
    for t in file.tables()? {
        if let Ok(tab) = file.table(&t) {
            if crate::marquet::is_marquet_table(&tab)? {
                marquet.push(t);
            }
        }
    }
    match marquet.len() {
        1 => Ok(marquet.remove(0)),
        0 => Err(MarquetError::InvalidArgument(format!("{}: no Marquet table in the file", file.filename()))),
        _ => Err(MarquetError::InvalidArgument(format!(
            "{}: several Marquet tables ({}); choose one with --table (Rust: ConvertOptions::table)",
            file.filename(),
            marquet.join(", ")
        ))),
    }
}

/// Convert between GeoParquet, GeoJSON and Marquet (HDF5), choosing the direction by the
/// file extensions (or [`ConvertOptions::format`]). Writing into an existing HDF5 file adds
/// a table; a new output file is removed again if the conversion fails. GeoParquet ↔
/// GeoJSON goes through a temporary HDF5 file.
///
/// Into HDF5 the conversion is all-or-nothing: it runs into a staging file beside the
/// output and is published at the end in one step (a rename for a new file, one `H5Ocopy`
/// of the table into an existing one); a failure or a kill leaves the output as it was
/// (issue #19, docs/FAULTS.md F2).
pub fn convert(input: &Path, output: &Path, opts: &ConvertOptions) -> Result<ConvertReport> {
    if opts.output_format.or_else(|| Format::from_path(output)) == Some(Format::Marquet) && !opts.lake.geomesa_export {
        return stage::into_hdf5(input, output, opts, convert_unstaged);
    }
    convert_unstaged(input, output, opts)
}

/// [`convert`] without the staging of an HDF5 output.
pub(crate) fn convert_unstaged(input: &Path, output: &Path, opts: &ConvertOptions) -> Result<ConvertReport> {
    // A FIFO, socket or device is refused before anything reads it (issue #19); a lake may
    // be a directory.
    if std::fs::metadata(input).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        crate::error::check_regular_file(input)?;
    }
    // CSV, plain Parquet, Iceberg and GeoMesa sources; the GeoMesa layout (issue #24).
    if let Some(mut r) = lake::convert_hook(input, output, opts)? {
        // --to-crs applies to lakehouse sources too (issue #22).
        if let Some(i) = &r.import {
            r.reproject = convert_crs::report_of(i, opts);
        }
        return Ok(r);
    }
    if let Some(r) = convert_crs::marquet_input(input, output, opts)? {
        return Ok(r);
    }
    let fin = opts.format.or_else(|| Format::from_path(input)).ok_or_else(|| {
        MarquetError::InvalidArgument(format!("{}: cannot tell the input format from the extension", input.display()))
    })?;
    let fout = opts.output_format.or_else(|| Format::from_path(output)).ok_or_else(|| {
        MarquetError::InvalidArgument(format!("{}: cannot tell the output format from the extension", output.display()))
    })?;
    let mut report = ConvertReport { input: input.to_path_buf(), output: output.to_path_buf(), ..Default::default() };
    let iopts = ImportOptions {
        table: opts.table.clone().unwrap_or_else(|| default_table_name(input)),
        strict: opts.strict,
        point_form: opts.point_form.unwrap_or_default(),
        progress: opts.progress.clone(),
        layout: opts.layout.clone(),
        crs: convert_crs::stated(opts)?,
        nested: opts.nested,
        text_as_bytes: opts.text_as_bytes,
        to_crs: convert_crs::target(opts)?,
        ..ImportOptions::default()
    };
    let eopts = ExportOptions {
        version: opts.geoparquet_version.unwrap_or_default(),
        progress: opts.progress.clone(),
        covering: opts.covering,
        ..ExportOptions::default()
    };
    match (fin, fout) {
        (Format::Marquet, Format::Marquet) => {
            return Err(MarquetError::InvalidArgument("HDF5 to HDF5 is not a conversion".into()));
        }
        (_, Format::Marquet) => {
            // A new file: [`convert`] stages conversions into HDF5 (docs/FAULTS.md F2).
            let file = File::create(output)?;
            let r = import_any(fin, input, ImportTarget::New(&file), &iopts);
            let r = r.map(|r| (convert_crs::report_of(&r, opts), r));
            drop(file);
            match r {
                Ok((rp, r)) => {
                    report.table = r.table.clone();
                    report.import = Some(r);
                    report.reproject = rp;
                }
                Err(e) => {
                    let _ = std::fs::remove_file(output);
                    return Err(e);
                }
            }
        }
        (Format::Marquet, _) => {
            let file = File::open(input)?;
            let table = single_table(&file, opts)?;
            let r = export_any(fout, &file, &table, output, &eopts);
            if r.is_err() {
                let _ = std::fs::remove_file(output);
            }
            report.table = table;
            report.export = Some(r?);
        }
        _ => {
            // Between two formats other than HDF5: the table is built in an HDF5 file held
            // in memory (the core driver, no backing store), never in a temporary file.
            let res = (|| {
                let file = File::create_in_memory(&format!("{}:convert", input.display()))?;
                let r = import_any(fin, input, ImportTarget::New(&file), &iopts)?;
                let rp = convert_crs::report_of(&r, opts);
                let e = export_any(fout, &file, &r.table, output, &eopts)?;
                Ok::<_, MarquetError>((r, e, rp))
            })();
            if res.is_err() {
                let _ = std::fs::remove_file(output);
            }
            let (r, e, rp) = res?;
            report.reproject = rp;
            report.table = r.table.clone();
            report.import = Some(r);
            report.export = Some(e);
        }
    }
    Ok(report)
}

/// Import any input format into `target` (the GIS formats with feature `gis`).
pub(crate) fn import_any(fin: Format, input: &Path, target: ImportTarget<'_>, iopts: &ImportOptions) -> Result<ImportReport> {
    match fin {
        Format::GeoParquet => import_geoparquet_into(input, target, iopts),
        Format::GeoJson => geojson::import_geojson_into(input, target, iopts),
        #[cfg(feature = "gis")]
        Format::FlatGeobuf => {
            let (info, first) = fgb::open(input)?;
            hub::features::import_features(input, "FlatGeobuf", target, info, first, || Ok(fgb::open(input)?.1), iopts)
        }
        #[cfg(feature = "gis")]
        Format::GeoPackage => {
            let (info, first) = gpkg::open(input)?;
            hub::features::import_features(input, "GeoPackage", target, info, first, || Ok(gpkg::open(input)?.1), iopts)
        }
        #[cfg(feature = "gis")]
        Format::Shapefile => {
            let (info, first) = shp::open(input)?;
            hub::features::import_features(input, "Shapefile", target, info, first, || Ok(shp::open(input)?.1), iopts)
        }
        Format::Marquet => Err(MarquetError::InvalidArgument("an HDF5 file is not imported".into())),
        #[cfg(not(feature = "gis"))]
        f => Err(MarquetError::Unsupported(format!("{}: {f:?} needs the `gis` feature", input.display()))),
    }
}

/// Export to any output format (the GIS formats with feature `gis`).
fn export_any(fout: Format, file: &File, table: &str, output: &Path, eopts: &ExportOptions) -> Result<ExportReport> {
    match fout {
        Format::GeoParquet => export_geoparquet(file, table, output, eopts),
        Format::GeoJson => export_geojson(file, table, output),
        #[cfg(feature = "gis")]
        Format::FlatGeobuf => hub::features::export_features("FlatGeobuf", file, table, |info, _| Ok(Box::new(fgb::create(output, info)?))),
        #[cfg(feature = "gis")]
        Format::GeoPackage => hub::features::export_features("GeoPackage", file, table, |info, _| Ok(Box::new(gpkg::create(output, table, info)?))),
        #[cfg(feature = "gis")]
        Format::Shapefile => hub::features::export_features("Shapefile", file, table, |info, r| Ok(Box::new(shp::create(output, info, r)?))),
        Format::Marquet => Err(MarquetError::InvalidArgument("HDF5 is not an export format".into())),
        #[cfg(not(feature = "gis"))]
        f => Err(MarquetError::Unsupported(format!("{}: {f:?} needs the `gis` feature", output.display()))),
    }
}

/// Wrap a parquet / arrow error.
pub(crate) fn io_err(path: &str, e: impl std::fmt::Display) -> MarquetError {
    MarquetError::Io { path: path.to_string(), source: std::io::Error::other(e.to_string()) }
}
