//! Raw chunk I/O (`H5Dread_chunk` / `H5Dwrite_chunk`), chunk locations, and object identity for caches.
#![allow(unsafe_code)]

use std::os::raw::{c_uint, c_void};

use hdf5_sys::h5::hsize_t;
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5p::H5P_DEFAULT;
use hdf5_sys::{h5d, h5o};

use crate::error::{MarquetError, Result};

use super::*;

/// Where a stored chunk is: its filter mask and byte size, or `None` when unallocated.
pub fn chunk_info(ds: hid_t, offset: u64, path: &str) -> Result<Option<(u32, u64)>> {
    Ok(chunk_location(ds, offset, path)?.map(|(mask, _, size)| (mask, size)))
}

/// Where a stored chunk is: its filter mask, file address and byte size, or `None` when
/// unallocated.
pub fn chunk_location(ds: hid_t, offset: u64, path: &str) -> Result<Option<(u32, u64, u64)>> {
    locked(|| unsafe {
        let mut mask: c_uint = 0;
        let mut addr: hdf5_sys::h5::haddr_t = 0;
        let mut size: hsize_t = 0;
        check(
            h5d::H5Dget_chunk_info_by_coord(ds, &offset, &mut mask, &mut addr, &mut size),
            path,
            "H5Dget_chunk_info_by_coord",
        )?;
        Ok(if addr == hdf5_sys::h5::HADDR_UNDEF || size == 0 { None } else { Some((mask, addr, size)) })
    })
}

/// Which object `id` is, for the life of this process: the serial number HDF5 gives each
/// file open (`fileno`, never reused within a process) and the object's token (address)
/// in that file.
pub fn object_identity(id: hid_t, path: &str) -> Result<(u64, [u8; 16])> {
    locked(|| unsafe {
        let mut info = std::mem::MaybeUninit::<h5o::H5O_info2_t>::uninit();
        check(h5o::H5Oget_info3(id, info.as_mut_ptr(), h5o::H5O_INFO_BASIC), path, "H5Oget_info3")?;
        let info = info.assume_init();
        // SAFETY: H5O_token_t is a repr(C) struct holding H5O_MAX_TOKEN_SIZE (16) bytes.
        let token: [u8; 16] = std::mem::transmute::<h5o::H5O_token_t, [u8; 16]>(info.token);
        // c_ulong: 64 bits here, 32 on Windows.
        #[allow(clippy::unnecessary_cast)]
        Ok((info.fileno as u64, token))
    })
}

/// Read the stored (still filtered) bytes of the chunk at element `offset`
/// (`H5Dread_chunk`): `size` must come from [`chunk_info`].
pub fn chunk_read_raw(ds: hid_t, offset: u64, size: u64, path: &str) -> Result<(u32, Vec<u8>)> {
    let len = usize::try_from(size).map_err(|_| MarquetError::spec(path, "HDF5 chunk", format!("chunk of {size} bytes")))?;
    let mut buf = vec![0u8; len];
    let mut mask: u32 = 0;
    #[allow(unused_mut)]
    let mut got: usize = len;
    // HDF5 2.0's H5Dread_chunk2 checks the buffer size; 1.12 / 1.14 (a shared HDF5, see
    // build.rs) have only the unchecked call, whose buffer `chunk_info`'s size fits.
    #[cfg(hdf5_2)]
    locked(|| unsafe {
        check(
            h5d::H5Dread_chunk2(ds, H5P_DEFAULT, &offset, &mut mask, buf.as_mut_ptr() as *mut c_void, &mut got),
            path,
            "H5Dread_chunk",
        )
    })?;
    #[cfg(not(hdf5_2))]
    locked(|| unsafe {
        check(h5d::H5Dread_chunk1(ds, H5P_DEFAULT, &offset, &mut mask, buf.as_mut_ptr() as *mut c_void), path, "H5Dread_chunk")
    })?;
    if got != len {
        return Err(MarquetError::spec(path, "HDF5 chunk", format!("chunk at element {offset} holds {got} bytes, its index says {len}")));
    }
    Ok((mask, buf))
}

/// Write already filtered bytes as the chunk at element `offset` (`H5Dwrite_chunk`,
/// filter mask 0: every filter of the pipeline was applied).
pub fn chunk_write_raw(ds: hid_t, offset: u64, data: &[u8], path: &str) -> Result<()> {
    wrote(locked(|| unsafe {
        check(
            h5d::H5Dwrite_chunk(ds, H5P_DEFAULT, 0, &offset, data.len(), data.as_ptr() as *const c_void),
            path,
            "H5Dwrite_chunk",
        )
    }))
    .map(|_| ())
}
