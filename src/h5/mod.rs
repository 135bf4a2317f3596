//! The one place that calls `hdf5-sys` directly.
//!
//! `hdf5-metno`'s safe API covers files, groups and links, but not what the HEPs need
//! byte for byte: opaque datatypes with tags, enumerations with a chosen base,
//! fixed-length strings with a chosen padding, null-dataspace attributes, `H5T_STD_REF`
//! attributes pointing at arbitrary objects, and raw hyperslab I/O of compound data.
//! This module wraps exactly those calls behind a small safe API that works in raw
//! little-endian bytes described by [`Dtype`]. Every call runs under hdf5-metno's global
//! lock (`hdf5::sync::sync`), so the rest of the crate stays thread-safe.
#![allow(unsafe_code)]

use std::ffi::CString;

use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5i;

use crate::error::{MarquetError, Result};

pub mod cached;
pub mod codec;
pub mod direct;
#[cfg(feature = "mpio")]
pub mod mpio;
pub mod objects;
pub mod pure;
mod attr;
mod chunk;
mod dataset;
mod dtype;
mod file;
mod filter;
mod grid;
mod link;
#[cfg(unix)]
mod local;
pub(crate) mod pool;
mod reference;
mod relayout;
#[cfg(all(feature = "cloud", hdf5_1_14))]
mod range_driver;

pub use attr::*;
pub use chunk::*;
pub use dataset::*;
pub use dtype::*;
pub use file::*;
pub use filter::*;
pub use grid::*;
pub use link::*;
pub use reference::*;
pub use relayout::*;
#[cfg(all(feature = "cloud", hdf5_1_14))]
pub use range_driver::*;

/// Run `f` under the library lock.
fn locked<T>(f: impl FnOnce() -> T) -> T {
    hdf5::sync::sync(f)
}

/// Turn a negative HDF5 return into an error naming `path`, with the error stack.
fn check<T: Copy + PartialOrd + Default>(v: T, path: &str, what: &str) -> Result<T> {
    if v < T::default() {
        // A file read by URL: the typed error of the read that failed (issue #34).
        #[cfg(feature = "cloud")]
        if let Some(e) = crate::remote::take_last_error() {
            return Err(e);
        }
        let err = hdf5::Error::query().ok();
        let text = err.as_ref().map(|e| e.to_string()).unwrap_or_default();
        let frames = err
            .and_then(|e| e.stack())
            .map(|s| s.iter().map(|f| format!("{}(): {}", f.func(), f.desc())).collect())
            .unwrap_or_default();
        Err(MarquetError::Hdf5 { path: path.to_string(), message: format!("{what} failed: {text}"), stack: frames })
    } else {
        Ok(v)
    }
}

/// An owned HDF5 identifier of any kind, released with `H5Idec_ref` on drop.
#[derive(Debug)]
pub struct Hid(hid_t);

impl Hid {
    fn new(id: hid_t, path: &str, what: &str) -> Result<Hid> {
        check(id, path, what).map(Hid)
    }
    /// The raw identifier, valid while `self` lives.
    pub fn id(&self) -> hid_t {
        self.0
    }
}

impl Drop for Hid {
    fn drop(&mut self) {
        if self.0 > 0 {
            locked(|| unsafe { h5i::H5Idec_ref(self.0) });
        }
    }
}

fn cstr(s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| MarquetError::InvalidArgument(format!("name contains NUL: {s:?}")))
}

/// Counts every change this process makes to dataset contents, extents or links through
/// this module; decoded-chunk caches ([`direct`]) are valid only while it stands still.
static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The current value of the write counter (see [`WRITES`]).
pub(crate) fn write_generation() -> u64 {
    WRITES.load(std::sync::atomic::Ordering::SeqCst)
}

/// Record a change to dataset contents, extents or links, made or attempted (a failed
/// call may have changed some of it); pass its result through.
fn wrote<T>(r: Result<T>) -> Result<T> {
    WRITES.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    r
}
