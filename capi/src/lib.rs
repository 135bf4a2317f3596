//! libmarquet: the C ABI of Marquet (HEP002 geospatial vector tables on HEP001 H5Col
//! column tables in HDF5), for C, Fortran and Julia.
//!
//! Conventions (docs/FFI.md has the full text): opaque handles with explicit `_free`
//! (`_free(NULL)` is a no-op); every fallible function returns an `int32_t` status
//! (`MARQUET_STATUS_OK` = 0) and writes its outputs only on success; strings in are
//! pointer + length; counts and row numbers are `int64_t`, buffer lengths `size_t`;
//! flags are `int32_t` 0 / 1; a per-thread message explains the last failure
//! (`marquet_last_error_message`). No panic crosses the boundary. The Rust crate holds
//! no logic of its own: it checks arguments and calls the `marquet` crate.
#![allow(non_camel_case_types)]
#![deny(unsafe_op_in_unsafe_fn)]
// Entry points check their pointers themselves (see ffi.rs) and document their contract
// in the C header; the Rust-level `# Safety` sections would repeat it.
#![allow(clippy::missing_safety_doc)]

#[cfg(feature = "geoparquet")]
pub mod arrow;
pub mod batch;
pub mod ffi;
pub mod file;
pub mod geometry_info;
pub mod index;
pub mod error_message;
pub mod last_error;
#[cfg(feature = "mpio")]
pub mod mpi;
pub mod options;
pub mod panic;
pub mod query;
pub mod reader;
pub mod report;
pub mod status;
pub mod table;

use std::ffi::c_char;

/// The library version ("MAJOR.MINOR.PATCH"), a static NUL-terminated string; never NULL.
#[no_mangle]
pub extern "C" fn marquet_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}
