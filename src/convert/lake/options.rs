//! What the lakehouse reader is asked, what it found and reports, and the stream a source
//! becomes.

use arrow_array::RecordBatch;
use arrow_schema::{DataType, Schema, SchemaRef};

use super::decode::TextOrBinary;
use crate::error::{MarquetError, Result};
use crate::spec::BBox;

/// A geometry column named by the user: `COL` or `COL:ENCODING`.
#[derive(Debug, Clone, PartialEq)]
pub struct GeometrySource {
    /// The source column holding the geometries.
    pub column: String,
    /// `None`: binary columns are WKB/EWKB, string columns WKT (GeoJSON when a value starts
    /// with `{`).
    pub encoding: Option<TextOrBinary>,
}

impl std::str::FromStr for GeometrySource {
    type Err = MarquetError;
    /// `COL[:wkb|ewkb|wkt|geojson]` (the part after the last `:` is taken as the encoding
    /// only when it names one).
    fn from_str(s: &str) -> Result<GeometrySource> {
        if let Some((c, e)) = s.rsplit_once(':') {
            if let Some(enc) = TextOrBinary::parse(e) {
                return Ok(GeometrySource { column: c.to_string(), encoding: Some(enc) });
            }
        }
        if s.is_empty() {
            return Err(MarquetError::InvalidArgument("--geometry needs a column name".into()));
        }
        Ok(GeometrySource { column: s.to_string(), encoding: None })
    }
}

/// How lakehouse sources are read (the CLI's `--geometry`, `--lonlat`, `--crs`,
/// `--null-bad-geometry`, `--recompute-bbox` and `--bbox`).
#[derive(Debug, Clone, Default)]
pub struct LakeOptions {
    /// Geometry columns (first = primary). Empty: found from the source (Havasu field
    /// properties, Iceberg v3 types, GeoMesa companions).
    pub geometry: Vec<GeometrySource>,
    /// X (longitude) and Y (latitude) columns making a point column `geometry`; CRS
    /// OGC:CRS84 unless [`LakeOptions::crs`] says otherwise.
    pub lonlat: Option<(String, String)>,
    /// The CRS of the geometry columns, as GeoParquet's `crs` strings are read
    /// (`OGC:CRS84`, `EPSG:3857`, `srid:N`, PROJJSON text). Default: from the values'
    /// SRIDs ([`super::decode::srid_crs`]), the Iceberg type, OGC:CRS84 for GeoJSON, lon/lat and GeoMesa,
    /// unknown otherwise.
    pub crs: Option<String>,
    /// A value that does not decode becomes a null geometry (with a warning naming the
    /// rows) instead of an error naming the row.
    pub null_bad_geometry: bool,
    /// A GeoMesa `__<col>_bbox__` row that does not contain its geometry is recomputed
    /// (with a warning) instead of refused.
    pub recompute_bbox: bool,
    /// Keep only rows whose geometry's box meets this window (XY); Iceberg data files whose
    /// bounds miss it are not read.
    pub bbox: Option<BBox>,
    /// Write Parquet in GeoMesa's Trino layout when exporting (`--layout geomesa`).
    pub geomesa_export: bool,
}

/// What the lakehouse reader did besides the import itself.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LakeReport {
    /// e.g. "csv", "parquet (no GeoParquet metadata)", "iceberg format-version 2, 3 data files".
    pub source: String,
    /// Per geometry column: (name, how it was read).
    pub geometry: Vec<(String, String)>,
    /// Warnings: nulled values, recomputed boxes, SRIDs without a resolver.
    pub warnings: Vec<String>,
    /// Columns dropped as derived data (GeoMesa z2/xz2).
    pub dropped: Vec<String>,
    /// Iceberg data files not read because their bounds miss [`LakeOptions::bbox`].
    pub files_skipped: usize,
    /// Iceberg data files read.
    pub files_read: usize,
    /// Rows read from the source, and rows kept (after the `bbox` window).
    pub rows_read: u64,
    /// Rows kept after the `bbox` window.
    pub rows_kept: u64,
}

impl std::fmt::Display for LakeReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "source: {} ({} rows read, {} kept)", self.source, self.rows_read, self.rows_kept)?;
        if self.files_read + self.files_skipped > 0 {
            writeln!(f, "  data files read {}, skipped by bounds {}", self.files_read, self.files_skipped)?;
        }
        for (g, how) in &self.geometry {
            writeln!(f, "  geometry {g}: {how}")?;
        }
        for d in &self.dropped {
            writeln!(f, "  dropped {d}: derived data (GeoMesa space-filling-curve index)")?;
        }
        for w in &self.warnings {
            writeln!(f, "  warning: {w}")?;
        }
        Ok(())
    }
}

/// A geometry column a source declares (Havasu property, Iceberg v3 type).
#[derive(Debug, Clone, PartialEq)]
pub struct FoundColumn {
    /// The column's name in the source.
    pub column: String,
    /// The value encoding the source declares (`None`: told by the column's type).
    pub encoding: Option<TextOrBinary>,
    /// The CRS as a GeoParquet `crs` value; `None`: from the values' SRIDs.
    pub crs: Option<serde_json::Value>,
    /// Edges (GeoParquet name) of geography columns.
    pub edges: Option<String>,
    /// How it was found, for the report.
    pub how: String,
}

/// What the source knows of its geometry columns, for [`super::Converter::new`].
#[derive(Debug, Clone, Default)]
pub struct SourceGeometry {
    /// The declared geometry columns, in schema order.
    pub columns: Vec<FoundColumn>,
}

pub(crate) use crate::convert::error::{arrow_err, pq_err};

/// Field metadata key of Parquet field ids in Arrow schemas.
pub(crate) const PARQUET_FIELD_ID: &str = "PARQUET:field_id";

/// What kind of lakehouse source a path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    /// `.csv` (comma) or `.tsv` (tab), with a header line.
    Csv,
    /// Parquet that is not GeoParquet, or GeoParquet with GeoMesa companions, or any
    /// Parquet when a geometry is named.
    Parquet,
    /// An Iceberg table: its directory (holding `metadata/`) or a `*.metadata.json`.
    Iceberg,
}

/// A stream of record batches and what the source says about its geometry.
pub struct Source {
    /// For messages.
    pub path: String,
    /// The Arrow schema of every batch.
    pub schema: SchemaRef,
    /// The rows, batch by batch (bounded memory).
    pub batches: Box<dyn Iterator<Item = Result<RecordBatch>>>,
    /// What the source declares about its geometry columns.
    pub geometry: SourceGeometry,
    /// For the report.
    pub describe: String,
    /// Iceberg data files in the scan, and those skipped by their bounds.
    pub files_total: usize,
    /// Iceberg data files skipped because their bounds miss the window.
    pub files_skipped: usize,
    /// What the reader skipped or could not honour.
    pub warnings: Vec<String>,
}

impl Source {
    /// Data files read (Iceberg).
    pub fn files_read(&self) -> usize {
        self.files_total - self.files_skipped
    }
}


/// The GeoMesa companion column `__<col>_<what>__`.
pub(crate) fn companion(col: &str, what: &str) -> String {
    format!("__{col}_{what}__")
}

/// Is `schema` a GeoMesa Trino schema (a binary column with a `__<col>_bbox__`,
/// `__<col>_z2__` or `__<col>_xz2__` companion)? Returns those columns.
pub fn geomesa_columns(schema: &Schema) -> Vec<String> {
    schema
        .fields()
        .iter()
        .filter(|f| matches!(f.data_type(), DataType::Binary | DataType::LargeBinary | DataType::BinaryView))
        .filter(|f| ["bbox", "z2", "xz2"].iter().any(|w| schema.column_with_name(&companion(f.name(), w)).is_some()))
        .map(|f| f.name().clone())
        .collect()
}
