//! The crate's one error type.

use std::fmt;

/// Where in a file something went wrong: an HDF5 object path and, optionally, a row.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Location {
    /// The HDF5 path of the object (group, dataset or attribute), e.g. `/lakes/geometry`.
    pub path: String,
    /// The zero-based row of the column, when the problem is in one row.
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
    NotATable {
        /// HDF5 path of the group.
        path: String,
        /// Why it is not a table, e.g. which attribute is missing.
        reason: String,
    },

    /// A version this implementation cannot read.
    #[error("{path}: unsupported {what} {found} (this library implements {supported})")]
    UnsupportedVersion {
        /// HDF5 path of the table group.
        path: String,
        /// Which version attribute, e.g. `"MARQUET_VERSION"` or `"H5Col VERSION"`.
        what: &'static str,
        /// The value found in the file.
        found: String,
        /// The versions this library reads, e.g. `"1.x"`.
        supported: &'static str,
    },

    /// The file breaks a rule of HEP001 or HEP002.
    #[error("{path}: {rule}: {message}")]
    SpecViolation {
        /// HDF5 path of the offending object.
        path: String,
        /// The rule broken, as a section reference, e.g. `"HEP002 §7.2"`.
        rule: &'static str,
        /// What is wrong, lowercase.
        message: String,
    },

    /// A WKB value is malformed.
    #[error("{path}{}: invalid wkb: {message}", row.map(|r| format!(" row {r}")).unwrap_or_default())]
    InvalidWkb {
        /// HDF5 path of the geometry column (empty for a bare WKB buffer).
        path: String,
        /// Zero-based row of the value, when known.
        row: Option<u64>,
        /// The decoder's message, e.g. a truncated count or an unknown type code.
        message: String,
    },

    /// A value or an operation the producer refuses because writing it would break a rule
    /// of HEP001 or HEP002 (e.g. a clockwise exterior ring under `ORIENTATION =
    /// COUNTERCLOCKWISE`, or an H5Col append to a Marquet table). Nothing was written.
    #[error("{path}{}: {rule}: {message}", row.map(|r| format!(" row {r}")).unwrap_or_default())]
    Refused {
        /// HDF5 path of the table or column written to.
        path: String,
        /// Zero-based row of the refused value, when one row is at fault.
        row: Option<u64>,
        /// The rule the write would break, e.g. `"HEP002 §9.2"`.
        rule: &'static str,
        /// What would have been wrong.
        message: String,
    },

    /// A search index failed its validity check where the caller required it.
    #[error("{path}: stale search index ({message})")]
    StaleIndex {
        /// HDF5 path of the search-index dataset.
        path: String,
        /// Which validity token did not match (HEP001 §12.2).
        message: String,
    },

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
    Hdf5 {
        /// HDF5 path of the object being accessed.
        path: String,
        /// What failed, with the error stack folded in.
        message: String,
        /// HDF5's error stack, one `function(): description` entry per frame, innermost last.
        stack: Vec<String>,
    },

    /// An operating-system I/O error.
    #[error("{path}: {source}")]
    Io {
        /// The file-system path.
        path: String,
        /// The operating-system error.
        #[source]
        source: std::io::Error,
    },

    /// A Parquet file could not be read or written (the `parquet` crate's error, kept).
    #[cfg(feature = "geoparquet")]
    #[error("{path}: {source}")]
    Parquet {
        /// The Parquet file's path.
        path: String,
        /// The `parquet` crate's error.
        #[source]
        source: parquet::errors::ParquetError,
    },

    /// Arrow data could not be read, built or written (the `arrow` crates' error, kept).
    #[cfg(feature = "geoparquet")]
    #[error("{path}: {source}")]
    Arrow {
        /// The file or data set the Arrow data belongs to.
        path: String,
        /// The Arrow crates' error.
        #[source]
        source: arrow_schema::ArrowError,
    },
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
