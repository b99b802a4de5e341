//! The string functions: a status code's name, the last failed call's
//! message and the library's version, each a NUL-terminated string that
//! latsol owns (never NULL, never to be freed).

use std::ffi::{c_char, CStr};

use super::boundary::guard_value;
use super::status::{
    last_error_ptr, latsol_status, LATSOL_ERROR_BREAKDOWN, LATSOL_ERROR_DEVICE,
    LATSOL_ERROR_INTERNAL, LATSOL_ERROR_INVALID_ARGUMENT, LATSOL_ERROR_INVALID_HANDLE,
    LATSOL_ERROR_NOT_CONVERGED, LATSOL_ERROR_NO_DEVICE, LATSOL_ERROR_NULL_POINTER,
    LATSOL_ERROR_OTHER_RANK, LATSOL_ERROR_OUT_OF_MEMORY, LATSOL_ERROR_UNSUPPORTED, LATSOL_SUCCESS,
};

/// The name of a status code as a NUL-terminated static string, e.g.
/// "LATSOL_ERROR_NULL_POINTER"; "LATSOL_UNKNOWN_STATUS" for a value that is
/// not a status. Never NULL; the string must not be freed.
#[no_mangle]
pub extern "C" fn latsol_status_string(status: latsol_status) -> *const c_char {
    let name: &'static CStr = match status {
        LATSOL_SUCCESS => c"LATSOL_SUCCESS",
        LATSOL_ERROR_INVALID_ARGUMENT => c"LATSOL_ERROR_INVALID_ARGUMENT",
        LATSOL_ERROR_NULL_POINTER => c"LATSOL_ERROR_NULL_POINTER",
        LATSOL_ERROR_INVALID_HANDLE => c"LATSOL_ERROR_INVALID_HANDLE",
        LATSOL_ERROR_UNSUPPORTED => c"LATSOL_ERROR_UNSUPPORTED",
        LATSOL_ERROR_NOT_CONVERGED => c"LATSOL_ERROR_NOT_CONVERGED",
        LATSOL_ERROR_BREAKDOWN => c"LATSOL_ERROR_BREAKDOWN",
        LATSOL_ERROR_OUT_OF_MEMORY => c"LATSOL_ERROR_OUT_OF_MEMORY",
        LATSOL_ERROR_NO_DEVICE => c"LATSOL_ERROR_NO_DEVICE",
        LATSOL_ERROR_DEVICE => c"LATSOL_ERROR_DEVICE",
        LATSOL_ERROR_INTERNAL => c"LATSOL_ERROR_INTERNAL",
        LATSOL_ERROR_OTHER_RANK => c"LATSOL_ERROR_OTHER_RANK",
        _ => c"LATSOL_UNKNOWN_STATUS",
    };
    name.as_ptr()
}

/// The message of the last failed latsol call on the calling thread, e.g.
/// "latsol_invert: invalid argument: kappa = -0.1: must be a positive
/// number"; "" if no call on this thread has failed. Successful calls leave
/// it as it is. Never NULL. The string belongs to latsol and stays valid
/// until the next failing latsol call on this thread; copy it to keep it.
#[no_mangle]
pub extern "C" fn latsol_last_error() -> *const c_char {
    guard_value(|| c"".as_ptr(), last_error_ptr)
}

/// The library version, e.g. "0.1.0", as a NUL-terminated static string.
#[no_mangle]
pub extern "C" fn latsol_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}
