//! The per-thread detailed message of the most recent failed call (read through
//! `marquet_last_error_message`, in `status.rs`).

use std::cell::RefCell;

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
