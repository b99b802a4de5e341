//! `qudaSetMPICommHandle`, `qudaInit`, `qudaSetLayout`, `qudaFinalize`,
//! `qudaAllocatePinned`, `qudaFreePinned`: the MILC interface's start,
//! end and host memory.

use std::os::raw::c_void;

use super::layout::set_layout;
use crate::error::Error;
use crate::ffi::quda::abi::*;
use crate::ffi::quda::errors::quda_call;
use crate::ffi::quda::{comms, convert, state};

/// `qudaSetMPICommHandle(mycomm)`: `setMPICommHandleQuda`.
///
/// # Safety
/// `mycomm` points to the host's `MPI_Comm`.
#[no_mangle]
pub unsafe extern "C" fn qudaSetMPICommHandle(mycomm: *mut c_void) {
    // SAFETY: as the caller promises.
    quda_call("qudaSetMPICommHandle", || {
        // SAFETY: as the caller promises.
        unsafe { comms::set_handle(mycomm) };
        Ok(())
    })
}

/// `qudaInit(input)`: the verbosity, then the layout and the context. A
/// second call while the interface is started changes nothing, as in QUDA
/// (lib/milc_interface.cpp keeps an `initialized` flag); after
/// `qudaFinalize` it starts the interface again (QUDA's flag stays set, so
/// there a later `qudaInit` is silently lost).
#[no_mangle]
pub extern "C" fn qudaInit(input: QudaInitArgs_t) {
    quda_call("qudaInit", || {
        if state::is_initialised() {
            return Ok(());
        }
        state::set_verbosity(convert::verbosity(input.verbosity));
        // SAFETY: MILC's layout arrays.
        unsafe { set_layout(&input.layout) }
    })
}

/// `qudaSetLayout(layout)`: this rank's part of the lattice, the grid of
/// ranks, and the context (as QUDA's, it starts it).
#[no_mangle]
pub extern "C" fn qudaSetLayout(layout: QudaLayout_t) {
    // SAFETY: MILC's layout arrays.
    quda_call("qudaSetLayout", || unsafe { set_layout(&layout) })
}

/// `qudaFinalize()`: `endQuda`.
#[no_mangle]
pub extern "C" fn qudaFinalize() {
    quda_call("qudaFinalize", state::end)
}

/// `qudaAllocatePinned(bytes)`: host memory (latsol's transfers stage
/// through their own buffers), NULL for 0 bytes or when none is left.
#[no_mangle]
pub extern "C" fn qudaAllocatePinned(bytes: usize) -> *mut c_void {
    if bytes == 0 {
        return std::ptr::null_mut();
    }
    // SAFETY: malloc of a positive size; freed by qudaFreePinned.
    let p = unsafe { libc::malloc(bytes) };
    if p.is_null() {
        quda_call("qudaAllocatePinned", || {
            Err(Error::OutOfMemory(format!("{bytes} bytes of host memory")))
        });
    }
    p
}

/// `qudaFreePinned(ptr)`.
///
/// # Safety
/// `ptr` is NULL or came from `qudaAllocatePinned`.
#[no_mangle]
pub unsafe extern "C" fn qudaFreePinned(ptr: *mut c_void) {
    // SAFETY: as the caller promises.
    unsafe { libc::free(ptr) }
}
