//! What the QUDA face does on an error. QUDA aborts the process (its
//! `errorQuda`); so, by default, does this layer, but first it prints the
//! function, the field and its value, and it exits with status 1 rather
//! than crashing. With `LATSOL_QUDA_ON_ERROR=return` in the environment it
//! returns instead (outputs untouched), and the status and message of the
//! last failed call are read with `latsol_quda_last_status` and
//! `latsol_last_error`.

use crate::error::Error;
use crate::ffi::status::latsol_status;

/// Whether a failed call returns (`LATSOL_QUDA_ON_ERROR=return`) rather
/// than exiting.
fn returns() -> bool {
    std::env::var("LATSOL_QUDA_ON_ERROR").is_ok_and(|v| v == "return")
}

/// A call failed with `status`; its message (function, field, value) is
/// the thread's last error. Prints it, then exits with status 1 or (return
/// mode) records the status and returns.
pub(crate) fn report(status: latsol_status) {
    // SAFETY: last_error_ptr is a NUL-terminated string owned by this thread.
    let message = unsafe { std::ffi::CStr::from_ptr(crate::ffi::status::last_error_ptr()) }
        .to_string_lossy()
        .into_owned();
    super::state::record_failure(status, &message);
    eprintln!("latsol (QUDA interface) ERROR: {message}");
    if !returns() {
        eprintln!(
            "latsol (QUDA interface): exiting with status 1, as QUDA would abort \
             (LATSOL_QUDA_ON_ERROR=return makes the call return instead)"
        );
        std::process::exit(1);
    }
}

/// A QUDA function latsol does not provide was called.
pub(crate) fn unprovided(function: &'static str) {
    super::quda_call(function, || {
        Err(Error::Unsupported(format!(
            "{function} is not provided by latsol's QUDA interface (docs/quda-compat.md lists \
             what is)"
        )))
    });
}

/// `pool_device_malloc(size)` of `malloc_quda.h` (QUDA's device memory
/// pool, which PyQUDA hands to CuPy and PyTorch): latsol offers no
/// allocator for a client's arrays, so it stops as an unprovided function
/// does (NULL in return mode).
#[no_mangle]
pub extern "C" fn latsol_quda_pool_device_malloc(_size: usize) -> *mut std::ffi::c_void {
    unprovided("pool_device_malloc");
    std::ptr::null_mut()
}

/// `pool_device_free(ptr)` of `malloc_quda.h`: as `pool_device_malloc`.
#[no_mangle]
pub extern "C" fn latsol_quda_pool_device_free(_ptr: *mut std::ffi::c_void) {
    unprovided("pool_device_free");
}
