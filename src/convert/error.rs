//! The errors and findings of conversions: GeoParquet failure codes (geoparquet-testing's
//! `bad_data/manifest.json` plus our own), the error that carries one, and the findings
//! an import reports.

use crate::error::MarquetError;

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

/// Wrap a parquet / arrow error.
pub(crate) fn io_err(path: &str, e: impl std::fmt::Display) -> MarquetError {
    MarquetError::Io { path: path.to_string(), source: std::io::Error::other(e.to_string()) }
}
