//! The CUDA backend (issue 3): device fields in the UKQCD basis, stored as
//! structure-of-arrays per parity with 16-byte vector loads (seed clark2010
//! §4.1, §4.5; layout in `kernels/core.cuh` and `layout.rs`), the hopping
//! terms and the vector algebra as CUDA kernels compiled at run time by
//! NVRTC and cached on disk. Double, single, half and quarter (fixed point
//! with a per-site norm), links in the spinors' precision with reconstruct
//! 18, 12 or 8; the packed 20- and 30-bit spinors of seed clark2022 §4 (the
//! CPU backend's site bit strings, word-transposed; same values and
//! rounding) with 16- and 32-bit fixed-point links.
//!
//! Layers, each importing only those below it (docs/architecture.md):
//! 1. `driver/`: the device, its context, streams, memory pool, NVRTC and
//!    module cache, launches and tuning, staged copies of host arrays;
//! 2. shared formats: `fields` (device spinors and links), `layout` (the
//!    structure-of-arrays placement), `hopping_params` (what every hopping
//!    term is given), `halo` (the faces of a cut lattice: packed, carried
//!    to the other ranks, read by the edges' launch);
//! 3. kernel families, never importing one another: `blas` and
//!    `block_blas` (vector algebra, of fields and of blocks of fields), the Wilson hopping term (`dslash`, `dslash_forms`,
//!    `cold_fields`), `clover`, `staggered`;
//! 4. host-order conversions: `host_gauge`, `host_spinor`, and the clover
//!    term computed from the caller's links (`clover_compute`);
//! 5. `catalogue` (every kernel source), `backend` and `backend_trait` (the
//!    `Backend` composing the families), `inspect` (read-backs for checks),
//!    `domains` (the Schwarz boxes: fields cut to one colour, links read back).
//!
//! cudarc drives the device; NVRTC and the driver library are probed with
//! `dlopen` first, so a machine without CUDA gets `Error::NoDevice`, never a
//! panic. One stream per backend; every call is ordered on it, and calls
//! that return host values synchronize.

mod backend;
mod backend_trait;
mod blas;
mod block_blas;
mod catalogue;
mod clover;
mod clover_compute;
#[cfg(test)]
mod clover_emulation;
mod cold_fields;
mod domains;
pub(crate) mod driver;
mod dslash;
mod dslash_forms;
#[cfg(test)]
pub(crate) mod emulation;
pub(crate) mod fat_links;
#[cfg(test)]
mod fat_links_emulation;
mod fields;
mod gauge_fixing;
mod halo;
mod halo_transport;
mod hopping_params;
mod host_gauge;
mod host_spinor;
mod inspect;
pub mod layout;
mod staggered;

pub use backend::CudaBackend;
pub use clover::CudaClover;
pub use driver::{DeviceInfo, ModuleReport};
pub use dslash_forms::{has_small_volume_forms, DslashForm, LinkPrefetch};
pub use fields::{CudaGauge, CudaSpinor};
pub use staggered::CudaStaggeredLinks;
