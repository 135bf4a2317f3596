//! Status codes: stable numbers in groups (1xx caller errors, 2xx I/O and HDF5, 3xx file
//! format, 9xx internal), the mapping from [`MarquetError`], and `marquet_status_str`.

use std::ffi::c_char;

use mq::Error as MarquetError;

/// Status codes returned by every fallible `marquet_*` function (as `int32_t`).
///
/// Numbers are stable: a code keeps its meaning in every later version, and new codes
/// are only ever added. 0 is success; 1xx are caller errors (the call was refused before
/// anything was read or written); 2xx are I/O and HDF5 errors; 3xx mean a file breaks
/// or exceeds the format (HEP001 / HEP002); 9xx are internal errors.
#[allow(non_camel_case_types)]
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum marquet_status {
    /// Success.
    MARQUET_STATUS_OK = 0,
    /// A required pointer argument was NULL.
    MARQUET_STATUS_NULL_POINTER = 100,
    /// An argument is out of its domain (bad enum value, negative count, malformed
    /// offsets, invalid UTF-8, wrong column kind, ...).
    MARQUET_STATUS_INVALID_ARGUMENT = 101,
    /// A caller buffer is too small; `*needed` holds the size required.
    MARQUET_STATUS_BUFFER_TOO_SMALL = 102,
    /// A handle is not a live object of the expected type (already freed, or a
    /// different kind of handle).
    MARQUET_STATUS_INVALID_HANDLE = 103,
    /// The file handle was closed with `marquet_file_close`.
    MARQUET_STATUS_CLOSED = 104,
    /// A row range or index lies outside the table or list.
    MARQUET_STATUS_OUT_OF_RANGE = 105,
    /// An operating-system I/O error (e.g. the file does not exist).
    MARQUET_STATUS_IO = 200,
    /// The HDF5 library reported an error (its error stack is in the message).
    MARQUET_STATUS_HDF5 = 201,
    /// A web server or object store refused or failed a read of a file opened by URL
    /// (not found, access refused, no byte ranges, the object changed, a timeout: the
    /// message says which).
    MARQUET_STATUS_REMOTE = 202,
    /// The group is not an H5Col / Marquet table.
    MARQUET_STATUS_NOT_A_TABLE = 300,
    /// The file breaks a rule of HEP001 or HEP002 (section and object path in the message).
    MARQUET_STATUS_SPEC_VIOLATION = 301,
    /// A WKB value is malformed (column and row in the message).
    MARQUET_STATUS_INVALID_WKB = 302,
    /// The file declares a format version this library cannot interpret.
    MARQUET_STATUS_UNSUPPORTED_VERSION = 303,
    /// A search index failed its validity check.
    MARQUET_STATUS_STALE_INDEX = 304,
    /// Valid input this library does not implement.
    MARQUET_STATUS_UNSUPPORTED = 305,
    /// A Rust panic was caught at the C boundary (a bug in libmarquet: please report it).
    MARQUET_STATUS_PANIC = 900,
    /// Any other internal error.
    MARQUET_STATUS_INTERNAL = 901,
}

use marquet_status::*;

/// Every status, in numeric order.
const ALL_STATUSES: [marquet_status; 18] = [
        MARQUET_STATUS_OK,
        MARQUET_STATUS_NULL_POINTER,
        MARQUET_STATUS_INVALID_ARGUMENT,
        MARQUET_STATUS_BUFFER_TOO_SMALL,
        MARQUET_STATUS_INVALID_HANDLE,
        MARQUET_STATUS_CLOSED,
        MARQUET_STATUS_OUT_OF_RANGE,
        MARQUET_STATUS_IO,
        MARQUET_STATUS_HDF5,
    MARQUET_STATUS_REMOTE,
        MARQUET_STATUS_NOT_A_TABLE,
        MARQUET_STATUS_SPEC_VIOLATION,
        MARQUET_STATUS_INVALID_WKB,
        MARQUET_STATUS_UNSUPPORTED_VERSION,
        MARQUET_STATUS_STALE_INDEX,
        MARQUET_STATUS_UNSUPPORTED,
        MARQUET_STATUS_PANIC,
        MARQUET_STATUS_INTERNAL,
];

impl marquet_status {
    /// The status for a number, if it is one.
    pub fn from_i32(v: i32) -> Option<marquet_status> {
        ALL_STATUSES.iter().copied().find(|s| *s as i32 == v)
    }

    /// A short, static, NUL-terminated description.
    pub fn describe(self) -> &'static str {
        match self {
            MARQUET_STATUS_OK => "ok\0",
            MARQUET_STATUS_NULL_POINTER => "null pointer argument\0",
            MARQUET_STATUS_INVALID_ARGUMENT => "invalid argument\0",
            MARQUET_STATUS_BUFFER_TOO_SMALL => "buffer too small\0",
            MARQUET_STATUS_INVALID_HANDLE => "invalid or freed handle\0",
            MARQUET_STATUS_CLOSED => "file handle is closed\0",
            MARQUET_STATUS_OUT_OF_RANGE => "row range or index out of range\0",
            MARQUET_STATUS_IO => "i/o error\0",
            MARQUET_STATUS_HDF5 => "hdf5 error\0",
            MARQUET_STATUS_REMOTE => "web server or object store error\0",
            MARQUET_STATUS_NOT_A_TABLE => "not a marquet table\0",
            MARQUET_STATUS_SPEC_VIOLATION => "file violates the specification\0",
            MARQUET_STATUS_INVALID_WKB => "invalid wkb\0",
            MARQUET_STATUS_UNSUPPORTED_VERSION => "unsupported format version\0",
            MARQUET_STATUS_STALE_INDEX => "stale search index\0",
            MARQUET_STATUS_UNSUPPORTED => "unsupported\0",
            MARQUET_STATUS_PANIC => "internal error: panic caught at the c boundary\0",
            MARQUET_STATUS_INTERNAL => "internal error\0",
        }
    }
}

/// An error on its way to the C caller: a status and the detailed message that
/// `marquet_last_error_message` will return.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FfiError {
    /// The status code the entry point returns (never `MARQUET_STATUS_OK`).
    pub status: marquet_status,
    /// The detailed, lowercase message stored for `marquet_last_error_message`.
    pub message: String,
}

impl FfiError {
    /// An error with `status` and `message`.
    pub fn new(status: marquet_status, message: impl Into<String>) -> FfiError {
        FfiError { status, message: message.into() }
    }
    /// `MARQUET_STATUS_NULL_POINTER`: the argument `what` was NULL.
    pub fn null(what: &str) -> FfiError {
        FfiError::new(MARQUET_STATUS_NULL_POINTER, format!("{what} is null"))
    }
    /// `MARQUET_STATUS_INVALID_ARGUMENT` with `message`.
    pub fn invalid(message: impl Into<String>) -> FfiError {
        FfiError::new(MARQUET_STATUS_INVALID_ARGUMENT, message)
    }
}

impl From<MarquetError> for FfiError {
    fn from(e: MarquetError) -> FfiError {
        let status = match &e {
            MarquetError::NotATable { .. } => MARQUET_STATUS_NOT_A_TABLE,
            MarquetError::UnsupportedVersion { .. } => MARQUET_STATUS_UNSUPPORTED_VERSION,
            MarquetError::SpecViolation { .. } => MARQUET_STATUS_SPEC_VIOLATION,
            MarquetError::InvalidWkb { .. } => MARQUET_STATUS_INVALID_WKB,
            MarquetError::StaleIndex { .. } => MARQUET_STATUS_STALE_INDEX,
            MarquetError::InvalidArgument(_) => MARQUET_STATUS_INVALID_ARGUMENT,
            // The caller handed values that would break a rule (issue 18): a caller error.
            MarquetError::Refused { .. } => MARQUET_STATUS_INVALID_ARGUMENT,
            MarquetError::Unsupported(_) => MARQUET_STATUS_UNSUPPORTED,
            MarquetError::Hdf5 { .. } => MARQUET_STATUS_HDF5,
            MarquetError::Io { .. } => MARQUET_STATUS_IO,
            MarquetError::Remote { .. } => MARQUET_STATUS_REMOTE,
            #[cfg(feature = "geoparquet")]
            MarquetError::Parquet { .. } | MarquetError::Arrow { .. } => MARQUET_STATUS_IO,
            _ => MARQUET_STATUS_INTERNAL,
        };
        FfiError { status, message: e.to_string() }
    }
}

/// Result of the Rust side of an entry point.
pub type FfiResult<T = ()> = Result<T, FfiError>;

/// A static, NUL-terminated description of `status`; never NULL (unknown numbers give
/// "unknown status").
#[no_mangle]
pub extern "C" fn marquet_status_str(status: i32) -> *const c_char {
    let s = marquet_status::from_i32(status).map(|s| s.describe()).unwrap_or("unknown status\0");
    s.as_ptr().cast()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_has_a_nul_terminated_description() {
        for s in ALL_STATUSES {
            let d = s.describe();
            assert!(d.ends_with('\0') && !d[..d.len() - 1].contains('\0'), "{s:?}");
            assert_eq!(marquet_status::from_i32(s as i32), Some(s));
        }
        assert!(!marquet_status_str(12345).is_null());
        assert!(!marquet_status_str(-1).is_null());
    }

    #[test]
    fn groups_are_stable() {
        assert_eq!(MARQUET_STATUS_NULL_POINTER as i32, 100);
        assert_eq!(MARQUET_STATUS_INVALID_ARGUMENT as i32, 101);
        assert_eq!(MARQUET_STATUS_BUFFER_TOO_SMALL as i32, 102);
        assert_eq!(MARQUET_STATUS_PANIC as i32, 900);
        assert_eq!(FfiError::from(MarquetError::InvalidArgument("x".into())).status, MARQUET_STATUS_INVALID_ARGUMENT);
    }
}
