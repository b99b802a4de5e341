//! Device buffers of freed fields, kept for the next fields of the same
//! format and size: the vectors of a solve (solver workspaces, sloppy
//! copies, the source and solution on the device) are freed when it ends
//! and found here by the next solve of the same shape, so the second and
//! later solves of a context allocate no device memory (a `cuMemAlloc`
//! synchronises the device and costs about a millisecond; a 32³×64 double
//! BiCGstab solve takes a dozen of them). The buffers go back to the driver
//! when the context frees a gauge field or ends (`Backend::release_workspaces`),
//! and all at once when an allocation fails (memory pressure), before it is
//! tried again.

use std::collections::HashMap;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::memory::DeviceData;
use crate::precision::Precision;

/// The free buffers by format and length, and what the pool has seen.
#[derive(Default)]
pub(crate) struct BufferPool {
    free: Mutex<HashMap<(Precision, usize), Vec<DeviceData>>>,
    /// Device allocations made for fields (pool misses).
    allocations: AtomicUsize,
    /// Fields served from the pool.
    reuses: AtomicUsize,
}

impl BufferPool {
    /// A free buffer of `len` elements of `precision`, if one is kept.
    pub fn take(&self, precision: Precision, len: usize) -> Option<DeviceData> {
        let mut free = self.free.lock().ok()?;
        let d = free.get_mut(&(precision, len))?.pop()?;
        self.reuses.fetch_add(1, Ordering::Relaxed);
        Some(d)
    }

    /// Counts a buffer allocated because none was free.
    pub fn count_allocation(&self) {
        self.allocations.fetch_add(1, Ordering::Relaxed);
    }

    fn give_back(&self, d: DeviceData) {
        if let Ok(mut free) = self.free.lock() {
            let len = d.len();
            free.entry((d.precision(), len)).or_default().push(d);
        }
        // A poisoned lock drops the buffer: freed, never lost.
    }

    /// Bytes of the kept buffers: free to the library (they go back to
    /// the driver when an allocation fails), though the driver counts them
    /// as used.
    pub fn kept_bytes(&self) -> usize {
        self.free
            .lock()
            .map(|free| free.values().flatten().map(DeviceData::bytes).sum())
            .unwrap_or(0)
    }

    /// Frees every kept buffer; returns how many there were.
    pub fn release_all(&self) -> usize {
        let Ok(mut free) = self.free.lock() else {
            return 0;
        };
        let n = free.values().map(Vec::len).sum();
        free.clear();
        n
    }

    /// (device allocations for fields, fields served from the pool).
    pub fn counts(&self) -> (usize, usize) {
        (
            self.allocations.load(Ordering::Relaxed),
            self.reuses.load(Ordering::Relaxed),
        )
    }
}

/// A field's device buffer; back to its pool when the field is dropped.
pub(crate) struct Pooled {
    data: Option<DeviceData>,
    pool: Arc<BufferPool>,
}

impl Pooled {
    pub fn new(data: DeviceData, pool: Arc<BufferPool>) -> Pooled {
        Pooled {
            data: Some(data),
            pool,
        }
    }
}

impl std::fmt::Debug for Pooled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Pooled").field(&self.data).finish()
    }
}

impl Deref for Pooled {
    type Target = DeviceData;
    fn deref(&self) -> &DeviceData {
        self.data
            .as_ref()
            .expect("a pooled buffer is present until dropped")
    }
}

impl DerefMut for Pooled {
    fn deref_mut(&mut self) -> &mut DeviceData {
        self.data
            .as_mut()
            .expect("a pooled buffer is present until dropped")
    }
}

impl Drop for Pooled {
    fn drop(&mut self) {
        if let Some(d) = self.data.take() {
            self.pool.give_back(d);
        }
    }
}
