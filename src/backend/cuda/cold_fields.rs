//! Copies of a hopping term's fields for timing its small-volume forms as a
//! lattice whose fields are not in L2 runs them (`WilsonKernels::launch_choice`).
//!
//! Timed on the caller's fields, which at 16^4 sit in L2 after the first
//! launch, the plain, split and wide forms are within a few per cent of each
//! other; from memory they are not (16^4 half r12: 49% of the roofline
//! against 62%), because the link prefetch of a form whose grid fits beside the
//! previous one's (`links_prefetched`) hides what only memory makes slow.
//! So the forms are timed on copies rotated so that no launch finds the
//! previous one's data in L2, as the benchmark and every solve whose fields
//! outgrow L2 meet them; a solve whose fields stay in L2 loses at most the
//! few per cent by which the forms differ there (docs/performance.md,
//! "Small volumes").

use cudarc::driver::{CudaSlice, DevicePtr};

use super::driver::device::Device;
use super::hopping_params::DslashParams;

/// Copies of one launch's fields, each with its kernel arguments.
pub(super) struct ColdCopies {
    _buffer: CudaSlice<u8>,
    pub params: Vec<DslashParams>,
}

impl ColdCopies {
    /// Enough copies of the links and the input (and xpay) block of
    /// `params`, with output blocks of their own, that launches rotated over
    /// them move four times L2's size between two uses of a copy (2 to 32
    /// copies: at twice, enough stayed in L2 that the forms' order still
    /// changed from one table to the next); `None` where the memory or a
    /// copy cannot be had (the forms are then timed on the caller's fields,
    /// and the choices kept for this process only: `launch_choice`).
    pub fn new(
        gpu: &Device,
        params: &DslashParams,
        gauge_bytes: usize,
        block_bytes: usize,
    ) -> Option<ColdCopies> {
        let aligned = |n: usize| n.div_ceil(256) * 256;
        let (g, b) = (aligned(gauge_bytes), aligned(block_bytes));
        let blocks = if params.x != 0 { 3 } else { 2 };
        let set = g + blocks * b;
        let sets = (4 * gpu.info.l2_bytes).div_ceil(set).clamp(2, 32);
        let stream = &gpu.stream;
        let buffer = stream.alloc_zeros::<u8>(sets * set).ok()?;
        let base = buffer.device_ptr(stream).0;
        let copy = |to: u64, from: u64, bytes: usize| {
            // SAFETY: `from` spans `bytes` of a live field of the caller's
            // (the arguments' blocks), `to` lies inside `buffer`.
            unsafe {
                cudarc::driver::result::memcpy_dtod_async(to, from, bytes, stream.cu_stream())
            }
            .ok()
        };
        let mut copies = Vec::with_capacity(sets);
        for k in 0..sets {
            let at = base + (k * set) as u64;
            let mut p = *params;
            copy(at, params.gauge, gauge_bytes)?;
            copy(at + g as u64, params.inp, block_bytes)?;
            p.gauge = at;
            p.inp = at + g as u64;
            p.out = at + (g + b) as u64;
            if params.x != 0 {
                copy(at + (g + 2 * b) as u64, params.x, block_bytes)?;
                p.x = at + (g + 2 * b) as u64;
            }
            copies.push(p);
        }
        // The copies complete before a timed launch: the kernels timed may
        // read their links before they wait for the kernel before them
        // (kernels/wilson_dslash.cuh, `links_first`); a copy is not such a
        // kernel, but the order is then plain.
        stream.synchronize().ok()?;
        Some(ColdCopies {
            _buffer: buffer,
            params: copies,
        })
    }
}
