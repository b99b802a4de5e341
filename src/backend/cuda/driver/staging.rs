//! Host arrays across the bus through two pinned staging buffers, kept by
//! the device (made at the first transfer; the copies: `transfer.rs`): a caller's pageable array is
//! copied in chunks, by all host threads, into one buffer while the device
//! reads the other, so the copy runs at the pinned transfer rate rather
//! than the driver's pageable path (about 8 GB/s measured on the H100
//! machine for a 403 MB spinor). The way back is the same in reverse.

use cudarc::driver::{CudaEvent, PinnedHostSlice};
use rayon::prelude::*;

/// Bytes per chunk: large enough for the transfer rate, small enough that
/// the two buffers cost little pinned memory.
pub(crate) const CHUNK: usize = 16 << 20;

/// The two buffers and the events of the last transfer that used each.
pub(crate) struct Staging {
    pub(crate) bufs: [PinnedHostSlice<u8>; 2],
    pub(crate) done: [CudaEvent; 2],
}

/// Copies `src` into `dst` with every host thread.
pub(crate) fn parallel_copy(dst: &mut [u8], src: &[u8]) {
    const PIECE: usize = 1 << 20;
    dst.par_chunks_mut(PIECE)
        .zip(src.par_chunks(PIECE))
        .for_each(|(d, s)| d.copy_from_slice(s));
}
