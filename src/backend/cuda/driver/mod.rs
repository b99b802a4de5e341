//! The driver layer, the floor of the CUDA backend: the device (context,
//! streams, memory pool, NVRTC and the module cache, the loaded kernels),
//! launches and their tuning, and the copies of host arrays through pinned
//! staging buffers. It knows no operator: the kernel sources come from the
//! catalogue the backend hands it.

pub(crate) mod cache;
pub(crate) mod device;
pub(crate) mod errors;
pub(crate) mod launch;
pub(crate) mod memory;
pub(crate) mod modules;
pub(crate) mod nvrtc;
pub(crate) mod pool;
pub(crate) mod scratch;
pub(crate) mod staging;
mod transfer;
mod tuned;

pub use device::DeviceInfo;
pub use modules::ModuleReport;
