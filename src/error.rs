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

/// Every error Marquet reports (`marquet::Error`). Messages are lowercase and name the
/// object and rule.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
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
    #[error("{path}: hdf5: {}", tidy_hdf5(message))]
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

    /// A file on a web server or in object storage could not be read (issue #34,
    /// [`crate::remote`]): the kind of failure, for programs, and a message naming the
    /// status, the byte range or the store's own error.
    #[error("{url}: {message}")]
    Remote {
        /// The file's URL.
        url: String,
        /// What went wrong.
        kind: RemoteErrorKind,
        /// What happened, in words.
        message: String,
    },
}

/// Why a file on a web server or in object storage could not be read ([`Error::Remote`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RemoteErrorKind {
    /// The URL is not one the library reads (scheme, bucket, path).
    InvalidUrl,
    /// No object at the URL (HTTP 404).
    NotFound,
    /// The credentials were refused or are missing (HTTP 401, 403).
    Forbidden,
    /// The server refused a byte range (HTTP 416): the object is shorter than it was.
    RangeNotSatisfiable,
    /// The server answered a range request with the whole object: it does not serve
    /// byte ranges, which reading a part of a file needs.
    NoRangeSupport,
    /// The object changed while it was read (its ETag differs from the one seen when it
    /// was opened, or the server reported the precondition failed, HTTP 412).
    Changed,
    /// No answer within the timeout, after the retries.
    Timeout,
    /// Anything else the store reported (connection refused, 5xx after the retries, …).
    Other,
}


/// The name the crate's own code uses for [`Error`] (before issue #33 the public name).
pub use Error as MarquetError;

/// `Result` with [`Error`] as the default error.
pub type Result<T, E = Error> = std::result::Result<T, E>;

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

/// An HDF5 error message as a user should see it (issue #19): HDF5's low-level I/O errors
/// carry "time = …, filename = …, file descriptor = 3, errno = 28, error message = 'No
/// space left on device', buf = 0x7fee…, total write size = …"; only the operating
/// system's reason is kept, after the description of what failed.
pub fn tidy_hdf5(message: &str) -> String {
    const REASON: &str = "error message = '";
    let Some(i) = message.find(REASON) else { return message.to_string() };
    let reason = message[i + REASON.len()..].split('\'').next().unwrap_or_default();
    let cut = ["time = ", "filename = ", "file descriptor = ", "errno = "]
        .iter()
        .filter_map(|k| message[..i].find(k))
        .min()
        .unwrap_or(i);
    let head = message[..cut].trim_end_matches([',', ' ', ':']);
    format!("{head}: {reason}")
}

/// Refuse anything but a regular file (or a symbolic link to one) as an input (issue #19):
/// a FIFO would block the reader forever, a directory or a device is no file to read.
/// Names what the path is, and says "no such file" only when nothing is there.
pub fn check_regular_file(path: &std::path::Path) -> Result<()> {
    use std::io::{Error, ErrorKind};
    let p = path.display().to_string();
    let io = |kind: ErrorKind, msg: &str| MarquetError::Io { path: p.clone(), source: Error::new(kind, msg.to_string()) };
    let md = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == ErrorKind::NotFound => return Err(io(ErrorKind::NotFound, "no such file")),
        Err(e) => return Err(MarquetError::Io { path: p, source: e }),
    };
    if md.is_file() {
        return Ok(());
    }
    if md.is_dir() {
        return Err(io(ErrorKind::InvalidInput, "is a directory, not a file"));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = md.file_type();
        let what = if t.is_fifo() {
            "is a FIFO (named pipe), not a regular file"
        } else if t.is_socket() {
            "is a socket, not a regular file"
        } else if t.is_block_device() || t.is_char_device() {
            "is a device, not a regular file"
        } else {
            "is not a regular file"
        };
        return Err(io(ErrorKind::InvalidInput, what));
    }
    #[allow(unreachable_code)]
    Err(io(ErrorKind::InvalidInput, "is not a regular file"))
}

#[cfg(test)]
mod tidy_tests {
    use super::*;

    #[test]
    fn hdf5_io_errors_keep_the_reason_only() {
        let m = "H5Fflush failed: file write failed: time = Wed Dec  2 06:00:00 2026, filename = 'x.h5', file descriptor = 3, errno = 28, error message = 'No space left on device', buf = 0x7fee12345678, total write size = 4096, bytes this sub-write = 4096, bytes actually written = 18446744073709551615, offset = 0";
        assert_eq!(tidy_hdf5(m), "H5Fflush failed: file write failed: No space left on device");
        assert_eq!(tidy_hdf5("H5Dopen2 failed: not found"), "H5Dopen2 failed: not found");
    }

    #[test]
    fn only_regular_files_are_inputs() {
        let d = std::env::temp_dir();
        let e = check_regular_file(&d).unwrap_err().to_string();
        assert!(e.contains("is a directory"), "{e}");
        let e = check_regular_file(&d.join("surely-not-here-19.h5")).unwrap_err().to_string();
        assert!(e.contains("no such file"), "{e}");
        #[cfg(unix)]
        {
            let e = check_regular_file(std::path::Path::new("/dev/null")).unwrap_err().to_string();
            assert!(e.contains("device"), "{e}");
        }
    }
}
