//! Driver errors as the library's: an out-of-memory error stays one (the
//! callers free their caches and retry, or report it as such), every other
//! failure names the call that failed.

use cudarc::driver::DriverError;

use crate::error::Error;

/// Maps a driver error into the library's error, naming the call.
pub(crate) fn device_err(what: &str) -> impl Fn(DriverError) -> Error + '_ {
    move |e| {
        let oom = e.0 == cudarc::driver::sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY;
        if oom {
            Error::OutOfMemory(format!("{what}: {e}"))
        } else {
            Error::Device(format!("{what}: {e}"))
        }
    }
}
