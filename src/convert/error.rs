//! The errors and findings of conversions: GeoParquet failure codes (geoparquet-testing's
//! `bad_data/manifest.json` plus our own), the error that carries one, and the findings
//! an import reports.

use crate::error::MarquetError;

/// A GeoParquet failure code: geoparquet-testing's `bad_data/manifest.json` plus our own.
/// Errors carry it in their rule (`"geoparquet <code>"`, [`failure_code`] reads it back
/// through this enum) and findings carry it as a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FindingCode {
    /// The file has no `geo` key-value metadata (fatal when no column carries a Parquet
    /// GEOMETRY/GEOGRAPHY logical type either).
    MetadataMissing,
    /// The `geo` metadata is not valid JSON.
    MetadataInvalidJson,
    /// The `geo` metadata breaks the GeoParquet schema: a missing `version` or `columns`, a
    /// `primary_column` that is not a column, a member of the wrong JSON type.
    SchemaValidation,
    /// A `geo` `version` whose major version this importer does not know.
    VersionUnknown,
    /// A geometry value is not one ISO WKB value (HEP002 §7.1).
    WkbParse,
    /// The data holds a geometry kind that `geometry_types` does not declare (GEOMETRY_TYPES is
    /// written from the data).
    GeometryTypeMismatch,
    /// The data holds a declared kind with Z/M dimensions that `geometry_types` does not declare.
    ZmMismatch,
    /// `epoch` is set on a CRS without a dynamic datum (kept as `EPOCH`, HEP002 §8.3).
    EpochUnsupported,
    /// The declared `bbox` does not contain the data's box (BBOX is written from the data).
    BboxMismatch,
    /// The `geo` CRS differs from the CRS of the Parquet logical type.
    CrsMismatch,
    /// Ours: the `geo` edges differ from the Parquet logical type's (the logical type wins).
    EdgesMismatch,
    /// Ours: a CRS that is not PROJJSON (pre-1.0 WKT strings, `srid:N`).
    CrsNotProjjson,
    /// Ours: a Parquet or Arrow feature this converter does not read.
    Unsupported,
}

impl FindingCode {
    /// Every code.
    pub const ALL: [FindingCode; 13] = [FindingCode::MetadataMissing, FindingCode::MetadataInvalidJson, FindingCode::SchemaValidation, FindingCode::VersionUnknown, FindingCode::WkbParse, FindingCode::GeometryTypeMismatch, FindingCode::ZmMismatch, FindingCode::EpochUnsupported, FindingCode::BboxMismatch, FindingCode::CrsMismatch, FindingCode::EdgesMismatch, FindingCode::CrsNotProjjson, FindingCode::Unsupported];

    /// The code as geoparquet-testing spells it, e.g. `"metadata_missing"`.
    pub fn as_str(self) -> &'static str {
        match self {
            FindingCode::MetadataMissing => "metadata_missing",
            FindingCode::MetadataInvalidJson => "metadata_invalid_json",
            FindingCode::SchemaValidation => "schema_validation_error",
            FindingCode::VersionUnknown => "version_unknown",
            FindingCode::WkbParse => "wkb_parse_error",
            FindingCode::GeometryTypeMismatch => "geometry_type_mismatch",
            FindingCode::ZmMismatch => "zm_mismatch",
            FindingCode::EpochUnsupported => "epoch_unsupported",
            FindingCode::BboxMismatch => "bbox_mismatch",
            FindingCode::CrsMismatch => "crs_mismatch",
            FindingCode::EdgesMismatch => "edges_mismatch",
            FindingCode::CrsNotProjjson => "crs_not_projjson",
            FindingCode::Unsupported => "unsupported",
        }
    }

    /// The `rule` of the [`MarquetError::SpecViolation`] that carries the code.
    fn rule(self) -> &'static str {
        match self {
            FindingCode::MetadataMissing => "geoparquet metadata_missing",
            FindingCode::MetadataInvalidJson => "geoparquet metadata_invalid_json",
            FindingCode::SchemaValidation => "geoparquet schema_validation_error",
            FindingCode::VersionUnknown => "geoparquet version_unknown",
            FindingCode::WkbParse => "geoparquet wkb_parse_error",
            FindingCode::GeometryTypeMismatch => "geoparquet geometry_type_mismatch",
            FindingCode::ZmMismatch => "geoparquet zm_mismatch",
            FindingCode::EpochUnsupported => "geoparquet epoch_unsupported",
            FindingCode::BboxMismatch => "geoparquet bbox_mismatch",
            FindingCode::CrsMismatch => "geoparquet crs_mismatch",
            FindingCode::EdgesMismatch => "geoparquet edges_mismatch",
            FindingCode::CrsNotProjjson => "geoparquet crs_not_projjson",
            FindingCode::Unsupported => "geoparquet unsupported",
        }
    }

    /// The code whose rule is `rule`.
    fn of_rule(rule: &str) -> Option<FindingCode> {
        FindingCode::ALL.into_iter().find(|c| c.rule() == rule)
    }
}

impl std::fmt::Display for FindingCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for FindingCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// The failure codes by their geoparquet-testing names (constants of [`FindingCode`]).
pub mod code {
    use super::FindingCode;
    /// `metadata_missing`: see [`FindingCode::MetadataMissing`].
    pub const METADATA_MISSING: FindingCode = FindingCode::MetadataMissing;
    /// `metadata_invalid_json`: see [`FindingCode::MetadataInvalidJson`].
    pub const METADATA_INVALID_JSON: FindingCode = FindingCode::MetadataInvalidJson;
    /// `schema_validation_error`: see [`FindingCode::SchemaValidation`].
    pub const SCHEMA_VALIDATION: FindingCode = FindingCode::SchemaValidation;
    /// `version_unknown`: see [`FindingCode::VersionUnknown`].
    pub const VERSION_UNKNOWN: FindingCode = FindingCode::VersionUnknown;
    /// `wkb_parse_error`: see [`FindingCode::WkbParse`].
    pub const WKB_PARSE: FindingCode = FindingCode::WkbParse;
    /// `geometry_type_mismatch`: see [`FindingCode::GeometryTypeMismatch`].
    pub const GEOMETRY_TYPE_MISMATCH: FindingCode = FindingCode::GeometryTypeMismatch;
    /// `zm_mismatch`: see [`FindingCode::ZmMismatch`].
    pub const ZM_MISMATCH: FindingCode = FindingCode::ZmMismatch;
    /// `epoch_unsupported`: see [`FindingCode::EpochUnsupported`].
    pub const EPOCH_UNSUPPORTED: FindingCode = FindingCode::EpochUnsupported;
    /// `bbox_mismatch`: see [`FindingCode::BboxMismatch`].
    pub const BBOX_MISMATCH: FindingCode = FindingCode::BboxMismatch;
    /// `crs_mismatch`: see [`FindingCode::CrsMismatch`].
    pub const CRS_MISMATCH: FindingCode = FindingCode::CrsMismatch;
    /// `edges_mismatch`: see [`FindingCode::EdgesMismatch`].
    pub const EDGES_MISMATCH: FindingCode = FindingCode::EdgesMismatch;
    /// `crs_not_projjson`: see [`FindingCode::CrsNotProjjson`].
    pub const CRS_NOT_PROJJSON: FindingCode = FindingCode::CrsNotProjjson;
    /// `unsupported`: see [`FindingCode::Unsupported`].
    pub const UNSUPPORTED: FindingCode = FindingCode::Unsupported;
}

/// Build the error for a failure `code`: a [`MarquetError::SpecViolation`] whose rule is
/// `"geoparquet <code>"` (see [`failure_code`]).
pub(crate) fn fail(path: &str, code: FindingCode, message: impl Into<String>) -> MarquetError {
    MarquetError::spec(path, code.rule(), message)
}

/// The GeoParquet failure code of an error from a conversion ([`FindingCode::WkbParse`]
/// for malformed WKB), or `None`.
pub fn failure_code(e: &MarquetError) -> Option<FindingCode> {
    match e {
        MarquetError::SpecViolation { rule, .. } => FindingCode::of_rule(rule),
        MarquetError::InvalidWkb { .. } => Some(FindingCode::WkbParse),
        _ => None,
    }
}

/// A deviation from the GeoParquet specification found while importing.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The failure code.
    pub code: FindingCode,
    /// The GeoParquet column concerned, when the finding is about one column.
    pub column: Option<String>,
    /// Lowercase: what was found, and what was done about it.
    pub message: String,
}

impl Finding {
    /// A finding with failure `code` about `column` (or the whole file).
    pub fn new(code: FindingCode, column: Option<&str>, message: impl Into<String>) -> Finding {
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

/// An error of a conversion step, located at `path` (a file, a table, a column) and kept
/// as its type: Parquet and Arrow errors become [`MarquetError::Parquet`] /
/// [`MarquetError::Arrow`], I/O errors [`MarquetError::Io`]; a message (a broken invariant,
/// a malformed value another crate reported as text) becomes [`MarquetError::Io`] with
/// that message.
pub(crate) fn err_at(path: &str, e: impl Located) -> MarquetError {
    e.at(path)
}

/// An error that can be located at a path ([`err_at`]).
pub(crate) trait Located {
    /// The error, at `path`.
    fn at(self, path: &str) -> MarquetError;
}

impl Located for arrow_schema::ArrowError {
    fn at(self, path: &str) -> MarquetError {
        MarquetError::Arrow { path: path.to_string(), source: self }
    }
}

impl Located for parquet::errors::ParquetError {
    fn at(self, path: &str) -> MarquetError {
        MarquetError::Parquet { path: path.to_string(), source: self }
    }
}

impl Located for std::io::Error {
    fn at(self, path: &str) -> MarquetError {
        MarquetError::Io { path: path.to_string(), source: self }
    }
}

/// Messages: other crates' errors given as text (serde_json, Avro, GeoJSON, WKB scans).
macro_rules! located_as_message {
    ($($t:ty),*) => {$(
        impl Located for $t {
            fn at(self, path: &str) -> MarquetError {
                MarquetError::Io { path: path.to_string(), source: std::io::Error::other(self.to_string()) }
            }
        }
    )*};
}
located_as_message!(String, &str, serde_json::Error, geojson::Error, apache_avro::Error, crate::wkb::WkbError);

/// A Parquet error of `path`, kept as its type.
pub(crate) fn pq_err(path: &str, e: parquet::errors::ParquetError) -> MarquetError {
    e.at(path)
}

/// An Arrow error of `path`, kept as its type.
pub(crate) fn arrow_err(path: &str, e: arrow_schema::ArrowError) -> MarquetError {
    e.at(path)
}
