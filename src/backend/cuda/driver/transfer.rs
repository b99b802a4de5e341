//! Copies between the caller's host arrays and device memory through the
//! device's two pinned staging buffers (`staging.rs`), chunk by chunk, one
//! buffer filled by the host threads while the device reads the other.

use cudarc::driver::CudaStream;

use super::device::Device;
use super::errors::device_err;
use super::staging::{parallel_copy, Staging, CHUNK};
use crate::error::{Error, Result};

impl Device {
    fn staging(&self) -> Result<std::sync::MutexGuard<'_, Option<Staging>>> {
        let mut guard = self
            .staging
            .lock()
            .map_err(|_| Error::Internal("staging buffers poisoned".into()))?;
        if guard.is_none() {
            let what = device_err("pinned staging buffers");
            // SAFETY: plain pinned allocations (not write-combined: the
            // host reads them on the way back).
            let alloc = || unsafe { self.ctx.alloc_pinned_with_flags::<u8>(CHUNK, 0) };
            let event = || self.ctx.new_event(None);
            *guard = Some(Staging {
                bufs: [alloc().map_err(&what)?, alloc().map_err(&what)?],
                done: [event().map_err(&what)?, event().map_err(&what)?],
            });
        }
        Ok(guard)
    }

    /// `src` into device memory at `dst` (at least `src.len()` bytes);
    /// queued on the stream, the caller's array free on return.
    pub(crate) fn upload_bytes(&self, dst: u64, src: &[u8]) -> Result<()> {
        self.upload_bytes_on(&self.stream, dst, src)
    }

    /// `upload_bytes` queued on `stream` (the copy stream of
    /// `import_each`, which orders it against the solver's by an event).
    pub(crate) fn upload_bytes_on(&self, stream: &CudaStream, dst: u64, src: &[u8]) -> Result<()> {
        let mut guard = self.staging()?;
        let st = guard.as_mut().expect("made above");
        let what = device_err("host-to-device copy");
        for (k, chunk) in src.chunks(CHUNK).enumerate() {
            let b = k % 2;
            // The copy that last read this buffer is done.
            st.done[b].synchronize().map_err(&what)?;
            let buf = &mut st.bufs[b].as_mut_slice().map_err(&what)?[..chunk.len()];
            parallel_copy(buf, chunk);
            // SAFETY: the device range is within the caller's allocation;
            // the buffer is not written again before `done[b]` is reached.
            unsafe {
                cudarc::driver::result::memcpy_htod_async(
                    dst + (k * CHUNK) as u64,
                    buf,
                    stream.cu_stream(),
                )
            }
            .map_err(&what)?;
            st.done[b].record(stream).map_err(&what)?;
        }
        Ok(())
    }

    /// `dst.len()` bytes of device memory at `src` into `dst`, after the
    /// work queued before; returns when they are there.
    pub(crate) fn download_bytes(&self, dst: &mut [u8], src: u64) -> Result<()> {
        let mut guard = self.staging()?;
        let st = guard.as_mut().expect("made above");
        let stream: &CudaStream = &self.stream;
        let what = device_err("device-to-host copy");
        let n = dst.len().div_ceil(CHUNK);
        let total = dst.len();
        let len = move |k: usize| CHUNK.min(total - k * CHUNK);
        // Chunk k + 1 is on its way while chunk k is copied out.
        let issue = |st: &mut Staging, k: usize| -> Result<()> {
            let b = k % 2;
            // The copy that last used this buffer (on any stream) is done.
            st.done[b].synchronize().map_err(&what)?;
            let buf = &mut st.bufs[b].as_mut_slice().map_err(&what)?[..len(k)];
            // SAFETY: the device range is within the field's allocation;
            // the buffer is read only after `done[b]`.
            unsafe {
                cudarc::driver::result::memcpy_dtoh_async(
                    buf,
                    src + (k * CHUNK) as u64,
                    stream.cu_stream(),
                )
            }
            .map_err(&what)?;
            st.done[b].record(stream).map_err(&what)
        };
        if n > 0 {
            issue(st, 0)?;
        }
        for k in 0..n {
            if k + 1 < n {
                issue(st, k + 1)?;
            }
            let b = k % 2;
            st.done[b].synchronize().map_err(&what)?;
            let buf = &st.bufs[b].as_mut_slice().map_err(&what)?[..len(k)];
            parallel_copy(&mut dst[k * CHUNK..k * CHUNK + len(k)], buf);
        }
        Ok(())
    }
}
