//! Scratch memory of a reduction: the per-block partial sums, the counter
//! that elects the last block, and the results in pinned host memory that
//! the device writes directly (mapped), read after one synchronisation.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaSlice, CudaStream};

use super::errors::device_err;
use crate::error::Result;

/// Scratch memory of the reductions, one at a time: the per-block
/// partials, the counter that elects the last block, and the results in
/// pinned host memory that the device writes directly (mapped).
pub(crate) struct Scratch {
    pub(crate) partials: CudaSlice<f64>,
    pub(crate) counter: CudaSlice<u32>,
    pub(crate) result: cudarc::driver::PinnedHostSlice<f64>,
    /// The device's address of `result`.
    pub(crate) result_device: u64,
}

impl Scratch {
    /// Room for `partials` partial sums, `counters` counters (reductions
    /// summed side by side, each electing its own last block) and
    /// `results` numbers.
    pub(crate) fn new(
        ctx: &Arc<CudaContext>,
        stream: &Arc<CudaStream>,
        partials: usize,
        counters: usize,
        results: usize,
    ) -> Result<Scratch> {
        let what = "reduction scratch";
        // SAFETY: a plain allocation of `results` doubles of pinned memory,
        // mapped into the device's address space (not write-combined: the
        // host reads it).
        let result = unsafe {
            ctx.alloc_pinned_with_flags::<f64>(
                results,
                cudarc::driver::sys::CU_MEMHOSTALLOC_DEVICEMAP,
            )
        }
        .map_err(device_err(what))?;
        let host = result.as_ptr().map_err(device_err(what))?;
        let mut dev: cudarc::driver::sys::CUdeviceptr = 0;
        // SAFETY: `host` is the start of a live mapped pinned allocation.
        unsafe { cudarc::driver::sys::cuMemHostGetDevicePointer_v2(&mut dev, host as *mut _, 0) }
            .result()
            .map_err(device_err(what))?;
        Ok(Scratch {
            partials: stream
                .alloc_zeros::<f64>(partials)
                .map_err(device_err(what))?,
            counter: stream
                .alloc_zeros::<u32>(counters)
                .map_err(device_err(what))?,
            result,
            result_device: dev,
        })
    }
}
