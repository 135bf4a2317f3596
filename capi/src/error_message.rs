//! `marquet_last_error_message`: the entry point that reads the per-thread message of
//! `last_error.rs` (kept apart from it so that the panic boundary, which records messages,
//! and this entry point, which runs inside the boundary, do not depend on each other).

use std::ffi::c_char;

use crate::ffi;
use crate::last_error;
use crate::panic::guard;

/// Copy this thread's last error message (the detail behind the most recent non-zero
/// status returned on this thread, naming the HDF5 object path and row where known)
/// into `buf` as a NUL-terminated string.
///
/// `*needed` (if `needed` is not NULL) receives the size in bytes including the
/// terminating NUL, both on success and on `MARQUET_STATUS_BUFFER_TOO_SMALL`; `buf` may
/// be NULL when `len` is 0 to query the size. The message is empty ("") before any
/// failure. Successful calls do not clear it, and this function never changes it.
#[no_mangle]
pub unsafe extern "C" fn marquet_last_error_message(buf: *mut c_char, len: usize, needed: *mut usize) -> i32 {
    let msg = last_error::get();
    // Run the copy without letting a failure here overwrite the message being read.
    let status = guard(|| unsafe { ffi::copy_str_out(&msg, buf, len, needed) });
    last_error::set(&msg);
    status
}
