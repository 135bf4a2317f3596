//! The filter pipeline (compression and checksums) of chunked datasets, and the registration of the Zstandard filter.
#![allow(unsafe_code)]

use std::ffi::CStr;
use std::os::raw::{c_uint, c_void};
use std::ptr;


use crate::error::{MarquetError, Result};

use super::*;

/// A filter in a dataset's pipeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Filter {
    /// The byte-shuffle filter (`H5Z_FILTER_SHUFFLE`), applied at the element size.
    Shuffle,
    /// The deflate (zlib) filter at this level, 0–9.
    Deflate(u32),
    /// The registered Zstandard filter 32015 with `cd_values = [level]` (the convention
    /// of the reference plugin shipped by hdf5plugin; `src/h5/codec.rs`).
    Zstd(u32),
    /// HDF5's Fletcher-32 checksum filter (id 3), last in the pipeline: each stored chunk
    /// carries a checksum of its (filtered) bytes that every read verifies.
    Fletcher32,
    /// Any other registered filter by id and client data (also 32015 with no or several
    /// `cd_values`, as other writers may store it).
    Other(i32, Vec<u32>),
}

impl Filter {
    /// The HDF5 filter id.
    pub fn id(&self) -> i32 {
        match self {
            Filter::Shuffle => codec::FILTER_SHUFFLE,
            Filter::Deflate(_) => codec::FILTER_DEFLATE,
            Filter::Zstd(_) => codec::FILTER_ZSTD,
            Filter::Fletcher32 => codec::FILTER_FLETCHER32,
            Filter::Other(id, _) => *id,
        }
    }

    /// Is this one of the filters built into the HDF5 library (ids below 256:
    /// deflate, shuffle, Fletcher-32, szip, N-bit, scale-offset), which any HDF5 reader
    /// decodes without a plugin? (szip is optional in HDF5 builds, but a predefined id.)
    pub fn is_predefined(&self) -> bool {
        (0..256).contains(&self.id())
    }

    /// The usual name of a registered filter id (the HDF Group's registry), if known.
    pub fn registered_name(id: i32) -> Option<&'static str> {
        Some(match id {
            1 => "deflate",
            2 => "shuffle",
            3 => "fletcher32",
            4 => "szip",
            5 => "nbit",
            6 => "scaleoffset",
            307 => "bzip2",
            32000 => "lzf",
            32001 => "blosc",
            32004 => "lz4",
            32008 => "bitshuffle",
            32013 => "zfp",
            32015 => "zstd",
            32017 => "sz",
            32026 => "blosc2",
            _ => return None,
        })
    }
}

impl std::fmt::Display for Filter {
    /// `shuffle`, `deflate(4)`, `zstd(1)`, or `filter 307 (bzip2) [9]` for others.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Filter::Shuffle => f.write_str("shuffle"),
            Filter::Deflate(l) => write!(f, "deflate({l})"),
            Filter::Zstd(l) => write!(f, "zstd({l})"),
            Filter::Fletcher32 => f.write_str("fletcher32"),
            Filter::Other(id, cd) => {
                write!(f, "filter {id}")?;
                if let Some(n) = Filter::registered_name(*id) {
                    write!(f, " ({n})")?;
                }
                if !cd.is_empty() {
                    write!(f, " {cd:?}")?;
                }
                Ok(())
            }
        }
    }
}

/// The name HDF5 records for our 32015 filter, as the reference plugin spells it.
static ZSTD_FILTER_NAME: &CStr = c"Zstandard compression: http://www.zstd.net";

/// HDF5 filter callback for the registered Zstandard filter 32015 (used by HDF5's own
/// pipeline: partial chunks and foreign layouts). The codec is [`codec`]'s, so chunks
/// written here and by the direct chunk path are the same bytes.
extern "C" fn zstd_filter(
    flags: c_uint,
    cd_nelmts: usize,
    cd_values: *const c_uint,
    nbytes: usize,
    buf_size: *mut usize,
    buf: *mut *mut c_void,
) -> usize {
    // No unwinding across the C boundary: any panic is a filter failure (0).
    std::panic::catch_unwind(|| {
        // SAFETY: HDF5 passes `cd_nelmts` values, a buffer `*buf` of at least `nbytes`
        // valid bytes allocated with its allocator, and writable `buf`/`buf_size`.
        unsafe {
            if buf.is_null() || (*buf).is_null() || buf_size.is_null() {
                return 0;
            }
            let input = std::slice::from_raw_parts(*buf as *const u8, nbytes);
            let cd: &[c_uint] = if cd_nelmts == 0 || cd_values.is_null() {
                &[]
            } else {
                std::slice::from_raw_parts(cd_values, cd_nelmts)
            };
            let out = if flags & hdf5_sys::h5z::H5Z_FLAG_REVERSE != 0 {
                codec::zstd_decompress(input, codec::MAX_CHUNK_BYTES as usize)
            } else {
                codec::zstd_compress(input, codec::zstd_level(cd))
            };
            let Ok(out) = out else { return 0 };
            let nb = hdf5_sys::h5::H5allocate_memory(out.len().max(1), 0);
            if nb.is_null() {
                return 0;
            }
            ptr::copy_nonoverlapping(out.as_ptr(), nb as *mut u8, out.len());
            hdf5_sys::h5::H5free_memory(*buf);
            *buf = nb;
            *buf_size = out.len().max(1);
            out.len()
        }
    })
    .unwrap_or(0)
}

/// Register the Zstandard filter 32015 with the HDF5 library (once per process), so that
/// datasets using it can be written and read by HDF5's pipeline. Called by every file
/// open and create of this crate.
pub fn register_filters() -> Result<()> {
    static REGISTERED: std::sync::OnceLock<std::result::Result<(), String>> = std::sync::OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            let cls = hdf5_sys::h5z::H5Z_class2_t {
                version: hdf5_sys::h5z::H5Z_CLASS_T_VERS as i32,
                id: codec::FILTER_ZSTD,
                encoder_present: 1,
                decoder_present: 1,
                name: ZSTD_FILTER_NAME.as_ptr(),
                can_apply: None,
                set_local: None,
                filter: Some(zstd_filter),
            };
            // H5Zregister copies the class; the name is 'static.
            locked(|| unsafe {
                check(hdf5_sys::h5z::H5Zregister(&cls as *const _ as *const c_void), "<filter 32015>", "H5Zregister")
            })
            .map(|_| ())
            .map_err(|e| e.to_string())
        })
        .clone()
        .map_err(|m| MarquetError::Hdf5 { path: "<filter 32015>".into(), message: m, stack: Vec::new() })
}

/// Is filter `id` available to HDF5's pipeline (`H5Zfilter_avail`)?
pub fn filter_available(id: i32) -> bool {
    locked(|| unsafe { hdf5_sys::h5z::H5Zfilter_avail(id) }) > 0
}
