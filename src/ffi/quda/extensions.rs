//! The QUDA face's entry points that are latsol's, not QUDA's: the status
//! of the last call (`latsol_quda_last_status`, declared in latsol's
//! `quda.h`) and the device-pool functions of latsol's `malloc_quda.h`
//! (which its `pool_device_malloc`/`pool_device_free` macros name), which
//! latsol does not provide.

use super::errors::unprovided;
use super::state;
use crate::ffi::status::{latsol_status, LATSOL_SUCCESS};

/// The status of the last call into latsol's QUDA interface:
/// `LATSOL_SUCCESS`, or the status of the failure that (with
/// `LATSOL_QUDA_ON_ERROR=return`) made it return; its message is
/// `latsol_last_error()`'s. A latsol extension, declared in latsol.h.
#[no_mangle]
pub extern "C" fn latsol_quda_last_status() -> latsol_status {
    match state::last_failure() {
        None => LATSOL_SUCCESS,
        Some((status, _)) => status,
    }
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
