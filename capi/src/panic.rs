//! The panic boundary: every entry point runs its body through [`guard`] (fallible
//! functions) or [`guard_void`] (`_free` functions), so no unwind crosses into C.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::last_error;
use crate::status::{marquet_status, FfiResult};

/// Run `f`, turning its error or a panic into a status code and recording the detailed
/// message for `marquet_last_error_message`. Returns `MARQUET_STATUS_OK` (0) on success.
pub fn guard(f: impl FnOnce() -> FfiResult) -> i32 {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => marquet_status::MARQUET_STATUS_OK as i32,
        Ok(Err(e)) => {
            last_error::set(&e.message);
            e.status as i32
        }
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic payload".into());
            last_error::set(&format!("internal error: panic caught at the c boundary: {what}"));
            marquet_status::MARQUET_STATUS_PANIC as i32
        }
    }
}

/// Run `f` for a function that returns nothing (the `_free` functions): a panic is
/// swallowed and recorded as the last error.
pub fn guard_void(f: impl FnOnce()) {
    let _ = guard(|| {
        f();
        Ok(())
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::FfiError;

    #[test]
    fn panics_become_status_900_with_a_message() {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let s = guard(|| panic!("boom"));
        std::panic::set_hook(prev);
        assert_eq!(s, 900);
        assert!(last_error::get().contains("boom"));
    }

    #[test]
    fn errors_set_the_message_and_success_keeps_it() {
        assert_eq!(guard(|| Err(FfiError::invalid("bad thing"))), 101);
        assert_eq!(last_error::get(), "bad thing");
        assert_eq!(guard(|| Ok(())), 0);
        assert_eq!(last_error::get(), "bad thing");
    }
}
