//! Status codes (one per `crate::Error` variant, plus success), the map of
//! an `Error` onto them, and the per-thread store of the last failed call's
//! message (written by the call guard, `boundary::call`; read by
//! `latsol_last_error`, `strings`). The bottom of the C face: it imports
//! nothing of it.

use std::cell::RefCell;
use std::ffi::{c_char, CString};

use crate::error::Error;

thread_local! {
    /// The message of the last failed call on this thread.
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

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

/// A call on a partitioned lattice failed on another rank (its status
/// there says why); this rank's arguments were in order, nothing was done
/// and its buffers are as they were. Every rank returns an error together.
pub const LATSOL_ERROR_OTHER_RANK: latsol_status = 11;

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
        Error::OtherRank(_) => LATSOL_ERROR_OTHER_RANK,
    }
}

/// Keeps `function: error` as this thread's last error message.
pub(crate) fn record_error(function: &str, error: &Error) {
    let text = format!("{function}: {error}").replace('\0', " ");
    let text = CString::new(text).unwrap_or_default();
    // try_with: a call during thread teardown loses its message rather than
    // panicking.
    let _ = LAST_ERROR.try_with(|e| {
        if let Ok(mut slot) = e.try_borrow_mut() {
            *slot = text;
        }
    });
}

/// The pointer `latsol_last_error()` returns: valid until the next failed
/// call on this thread replaces the string.
pub(crate) fn last_error_ptr() -> *const c_char {
    LAST_ERROR
        .try_with(|e| e.borrow().as_ptr())
        .unwrap_or(c"".as_ptr())
}
