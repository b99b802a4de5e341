//! Launches with a tuned block size: the tuner (`launch.rs`) times the
//! candidate blocks of a kernel at its first launch of a size, saving and
//! restoring what the kernel writes in place, and remembers the fastest.

use cudarc::driver::{result as cu, DeviceRepr};

use super::device::Device;
use super::errors::device_err;
use super::launch::{self, grid_for};
use super::memory::DeviceData;
use super::modules::Kernel;
use crate::error::Result;

impl Device {
    /// Launches `kernel` over `threads` threads with a tuned block size. If
    /// the kernel changes `written` in place, that memory is saved before the
    /// timing runs and restored after them.
    pub(crate) fn launch_tuned<P: DeviceRepr>(
        &self,
        kernel_name: &str,
        threads: usize,
        default_block: u32,
        params: &P,
        written: Option<&DeviceData>,
    ) -> Result<()> {
        let kernel = self.kernel(kernel_name)?;
        self.launch_tuned_kernel(&kernel, threads, default_block, params, written)
    }

    /// `launch_tuned` of a kernel already looked up.
    pub(crate) fn launch_tuned_kernel<P: DeviceRepr>(
        &self,
        k: &Kernel,
        threads: usize,
        default_block: u32,
        params: &P,
        written: Option<&DeviceData>,
    ) -> Result<()> {
        let block = self.tuned_block(k, threads, default_block, params, written)?;
        launch::launch(&self.stream, k, grid_for(threads, block)?, block, params)
    }

    /// The block `launch_tuned_kernel` launches `k` with, timed with these
    /// arguments on first use (`written`, if any, restored after).
    pub(crate) fn tuned_block<P: DeviceRepr>(
        &self,
        k: &Kernel,
        threads: usize,
        default_block: u32,
        params: &P,
        written: Option<&DeviceData>,
    ) -> Result<u32> {
        // The `Arc`'s kernel: its address is the tuner's fast key.
        self.tuner.block_for(k, threads, default_block, |b| {
            let backup = match written {
                Some(w) => Some(self.save(w)?),
                None => None,
            };
            let t = launch::time_launches(&self.stream, || {
                launch::launch(&self.stream, k, grid_for(threads, b)?, b, params)
            });
            if let (Some(w), Some(saved)) = (written, backup) {
                self.restore(w, &saved)?;
            }
            t
        })
    }

    fn save(&self, w: &DeviceData) -> Result<cudarc::driver::CudaSlice<u8>> {
        let mut s = self
            .stream
            .alloc_zeros::<u8>(w.bytes())
            .map_err(device_err("tuning backup"))?;
        let dst = cudarc::driver::DevicePtrMut::device_ptr_mut(&mut s, &self.stream).0;
        // SAFETY: both ranges are live allocations of `w.bytes()` bytes.
        unsafe {
            cu::memcpy_dtod_async(dst, w.ptr(&self.stream), w.bytes(), self.stream.cu_stream())
        }
        .map_err(device_err("tuning backup"))?;
        Ok(s)
    }

    fn restore(&self, w: &DeviceData, saved: &cudarc::driver::CudaSlice<u8>) -> Result<()> {
        let src = cudarc::driver::DevicePtr::device_ptr(saved, &self.stream).0;
        // SAFETY: as in `save`.
        unsafe {
            cu::memcpy_dtod_async(w.ptr(&self.stream), src, w.bytes(), self.stream.cu_stream())
        }
        .map_err(device_err("tuning restore"))
    }
}
