//! The per-thread detailed message of the most recent failed call, and
//! `marquet_last_error_message`.

use std::cell::RefCell;
use std::ffi::c_char;

use crate::ffi;
use crate::panic::guard;

thread_local! {
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Record `msg` as this thread's last error.
pub fn set(msg: &str) {
    LAST_ERROR.with(|e| {
        let mut e = e.borrow_mut();
        e.clear();
        // A NUL inside would truncate the C string: show it instead.
        e.push_str(&msg.replace('\0', "\\0"));
    });
}

/// This thread's last error message.
pub fn get() -> String {
    LAST_ERROR.with(|e| e.borrow().clone())
}

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
    let msg = get();
    // Run the copy without letting a failure here overwrite the message being read.
    let status = guard(|| unsafe { ffi::copy_str_out(&msg, buf, len, needed) });
    set(&msg);
    status
}
