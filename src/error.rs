//! The crate's one error type.

use std::fmt;

/// Where in a file something went wrong: an HDF5 object path and, optionally, a row.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Location {
    pub path: String,
    pub row: Option<u64>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.row {
            Some(r) => write!(f, "{} row {}", self.path, r),
            None => write!(f, "{}", self.path),
        }
    }
}

/// Every error Marquet reports. Messages are lowercase and name the object and rule.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MarquetError {
    /// The group is not an H5Col table (no `CLASS="COLUMN_TABLE"`).
    #[error("{path}: not an H5Col table group ({reason})")]
    NotATable { path: String, reason: String },

    /// A version this implementation cannot read.
    #[error("{path}: unsupported {what} {found} (this library implements {supported})")]
    UnsupportedVersion { path: String, what: &'static str, found: String, supported: &'static str },

    /// The file breaks a rule of HEP001 or HEP002.
    #[error("{path}: {rule}: {message}")]
    SpecViolation { path: String, rule: &'static str, message: String },

    /// A WKB value is malformed.
    #[error("{path}{}: invalid wkb: {message}", row.map(|r| format!(" row {r}")).unwrap_or_default())]
    InvalidWkb { path: String, row: Option<u64>, message: String },

    /// A value or an operation the producer refuses because writing it would break a rule
    /// of HEP001 or HEP002 (e.g. a clockwise exterior ring under `ORIENTATION =
    /// COUNTERCLOCKWISE`, or an H5Col append to a Marquet table). Nothing was written.
    #[error("{path}{}: {rule}: {message}", row.map(|r| format!(" row {r}")).unwrap_or_default())]
    Refused { path: String, row: Option<u64>, rule: &'static str, message: String },

    /// A search index failed its validity check where the caller required it.
    #[error("{path}: stale search index ({message})")]
    StaleIndex { path: String, message: String },

    /// The caller asked for something impossible.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// Valid input the library does not implement.
    #[error("unsupported: {0}")]
    Unsupported(String),

    /// An error from the HDF5 library: what failed, and HDF5's error stack as data (one
    /// entry per frame, innermost last: `function(): description`), also folded into the
    /// message.
    #[error("{path}: hdf5: {message}")]
    Hdf5 { path: String, message: String, stack: Vec<String> },

    /// An operating-system I/O error.
    #[error("{path}: {source}")]
    Io { path: String, #[source] source: std::io::Error },

    /// A Parquet file could not be read or written (the `parquet` crate's error, kept).
    #[cfg(feature = "geoparquet")]
    #[error("{path}: {source}")]
    Parquet { path: String, #[source] source: parquet::errors::ParquetError },

    /// Arrow data could not be read, built or written (the `arrow` crates' error, kept).
    #[cfg(feature = "geoparquet")]
    #[error("{path}: {source}")]
    Arrow { path: String, #[source] source: arrow_schema::ArrowError },
}

/// `Result` with [`MarquetError`] as the default error.
pub type Result<T, E = MarquetError> = std::result::Result<T, E>;

impl MarquetError {
    /// Shorthand for a [`MarquetError::SpecViolation`].
    pub fn spec(path: impl Into<String>, rule: &'static str, message: impl Into<String>) -> Self {
        MarquetError::SpecViolation { path: path.into(), rule, message: message.into() }
    }
    /// Shorthand for an HDF5 error at `path`.
    pub fn hdf5(path: impl Into<String>, e: impl fmt::Display) -> Self {
        MarquetError::Hdf5 { path: path.into(), message: e.to_string(), stack: Vec::new() }
    }
}
