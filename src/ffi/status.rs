//! Status codes (one per `crate::Error` variant, plus success), their
//! strings, the per-thread message of the last failed call, and the version.

use std::ffi::{c_char, CStr};

use super::boundary::{guard_value, last_error_ptr};
use crate::error::Error;

/// The outcome of a latsol call: `LATSOL_SUCCESS` (0) or one of the
/// `LATSOL_ERROR_*` codes. On an error, `latsol_last_error()` says what went
/// wrong, naming the parameter and the bad value.
pub type latsol_status = i32;

/// The call succeeded.
pub const LATSOL_SUCCESS: latsol_status = 0;
/// A parameter is out of range, inconsistent or not a number, or a
/// `struct_size` is wrong.
pub const LATSOL_ERROR_INVALID_ARGUMENT: latsol_status = 1;
/// A required pointer (handle, parameter struct, array) was NULL.
pub const LATSOL_ERROR_NULL_POINTER: latsol_status = 2;
/// A handle is stale (freed already), foreign (not made by latsol), or
/// belongs to another context.
pub const LATSOL_ERROR_INVALID_HANDLE: latsol_status = 3;
/// A valid request that this build or backend does not implement.
pub const LATSOL_ERROR_UNSUPPORTED: latsol_status = 4;
/// The solver stopped at `maxiter` above the tolerance. The one error after
/// which outputs are written: the solution holds the best solution found
/// and the result struct is filled in.
pub const LATSOL_ERROR_NOT_CONVERGED: latsol_status = 5;
/// The Krylov recurrence broke down (a vanishing inner product).
pub const LATSOL_ERROR_BREAKDOWN: latsol_status = 6;
/// An allocation failed on the host or the device.
pub const LATSOL_ERROR_OUT_OF_MEMORY: latsol_status = 7;
/// No usable GPU (no driver, no device, no NVRTC).
pub const LATSOL_ERROR_NO_DEVICE: latsol_status = 8;
/// A CUDA driver or NVRTC call failed.
pub const LATSOL_ERROR_DEVICE: latsol_status = 9;
/// A bug in latsol: a panic caught at the C boundary, or a broken invariant.
pub const LATSOL_ERROR_INTERNAL: latsol_status = 10;

/// The status code of an error: the 1:1 map of `crate::Error` onto the C
/// codes (STYLE.md: one error enum, mapped 1:1).
pub(crate) fn status_of(e: &Error) -> latsol_status {
    match e {
        Error::InvalidArgument(_) => LATSOL_ERROR_INVALID_ARGUMENT,
        Error::NullPointer(_) => LATSOL_ERROR_NULL_POINTER,
        Error::InvalidHandle(_) => LATSOL_ERROR_INVALID_HANDLE,
        Error::Unsupported(_) => LATSOL_ERROR_UNSUPPORTED,
        Error::NotConverged(_) => LATSOL_ERROR_NOT_CONVERGED,
        Error::Breakdown(_) => LATSOL_ERROR_BREAKDOWN,
        Error::OutOfMemory(_) => LATSOL_ERROR_OUT_OF_MEMORY,
        Error::NoDevice(_) => LATSOL_ERROR_NO_DEVICE,
        Error::Device(_) => LATSOL_ERROR_DEVICE,
        Error::Internal(_) => LATSOL_ERROR_INTERNAL,
    }
}

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
