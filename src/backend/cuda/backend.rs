//! `CudaBackend`: the `Backend` of one device. It owns the device (the
//! driver layer) and the state of the kernel families (the reductions'
//! scratch memory, the conversions' flags, the hopping term's forms), and
//! composes them: each family is reached through a view of the device
//! (`blas()`, `wilson()`, `clover_kernels()`, `staggered()`, `host_order()`),
//! so a family never names another. The `Backend` methods themselves are in
//! `backend_trait.rs`; what checks read back from the device, `inspect.rs`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaSlice, CudaStream};

use super::blas::{Blas, RED_GRID_MAX, RED_MAX};
use super::block_blas::{GRAM_GRID_MAX, GRAM_SUMS, GRAM_TILES_MAX};
use super::catalogue;
use super::clover::CloverKernels;
use super::driver::device::{Device, DeviceInfo};
use super::driver::errors::device_err;
use super::driver::memory::DeviceData;
use super::driver::modules::{Module, ModuleReport};
use super::driver::nvrtc;
use super::driver::scratch::Scratch;
use super::dslash_forms::{DslashForm, DslashForms, LinkPrefetch, WilsonKernels};
use super::fields::suffix;
use super::halo::DeferredFailure;
use super::host_gauge::HostOrder;
use super::layout::{self, SoaShape};
use super::staggered::StaggeredKernels;
use crate::backend::OperatorFamily;
use crate::comm::Ranks;
use crate::error::{Error, Result};
use crate::field::GaugeField;
use crate::format::Fixed;
use crate::precision::{Precision, Reconstruct};

/// The CUDA backend on one device.
pub struct CudaBackend {
    /// The reductions' scratch memory, one reduction at a time (`blas`).
    scratch: Mutex<Scratch>,
    /// Two numbers the host-array conversions report (`host_spinor`).
    flags: CudaSlice<u64>,
    /// The hopping term's forms and link prefetch (`dslash_forms`).
    forms: DslashForms,
    /// On many ranks: this rank's part of the lattice and the engine that
    /// reaches the others (the faces, the global sums).
    pub(crate) ranks: Option<Ranks>,
    /// A failure on this rank kept for the next collective step
    /// (`halo::DeferredFailure`).
    pub(crate) failure: DeferredFailure,
    // Dropped last: everything above lives in its context.
    pub(crate) dev: Device,
}

impl CudaBackend {
    /// Opens device `ordinal` (a module is compiled, or loaded from the
    /// cache, when a context prepares its formats or at its first launch).
    /// `Error::NoDevice` says why when there is no usable GPU,
    /// driver or NVRTC; this never panics.
    pub fn new(ordinal: usize) -> Result<CudaBackend> {
        nvrtc::probe_driver()?;
        let nvrtc = nvrtc::Nvrtc::load()?;
        match catch_unwind(AssertUnwindSafe(|| Self::start(ordinal, &nvrtc))) {
            Ok(r) => r,
            Err(p) => {
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                Err(Error::NoDevice(format!(
                    "the CUDA driver failed to start: {msg}"
                )))
            }
        }
    }

    /// The number of CUDA devices this process sees (`Error::NoDevice`
    /// without a driver).
    pub fn device_count() -> Result<usize> {
        nvrtc::probe_driver()?;
        match catch_unwind(cudarc::driver::CudaContext::device_count) {
            Ok(Ok(n)) => Ok(n.max(0) as usize),
            Ok(Err(e)) => Err(Error::NoDevice(format!("cannot count CUDA devices: {e}"))),
            Err(_) => Err(Error::NoDevice("the CUDA driver failed to start".into())),
        }
    }

    fn start(ordinal: usize, nvrtc: &nvrtc::Nvrtc) -> Result<CudaBackend> {
        let dev = Device::start(ordinal, nvrtc, &catalogue::CATALOGUE)?;
        // The reductions' (RED_MAX numbers a block) and the Gram blocks'
        // (GRAM_SUMS a block, GRAM_TILES_MAX tiles side by side).
        let scratch = Scratch::new(
            &dev.ctx,
            &dev.stream,
            (RED_GRID_MAX * RED_MAX).max(GRAM_GRID_MAX * GRAM_SUMS),
            GRAM_TILES_MAX,
            RED_MAX.max(GRAM_TILES_MAX * GRAM_SUMS),
        )?;
        let flags = dev
            .stream
            .alloc_zeros::<u64>(2)
            .map_err(device_err("conversion flags"))?;
        Ok(CudaBackend {
            scratch: Mutex::new(scratch),
            flags,
            forms: DslashForms::from_env(),
            ranks: None,
            failure: DeferredFailure::default(),
            dev,
        })
    }

    /// The backend of one rank of a partitioned lattice: its fields are the
    /// rank's sub-lattice, its sums global, its hopping terms read the
    /// other ranks' faces (`halo`).
    pub fn with_ranks(mut self, ranks: Ranks) -> CudaBackend {
        self.ranks = Some(ranks);
        self
    }

    /// The ranks of a partitioned lattice, if any direction is cut.
    pub(crate) fn cut(&self) -> Option<&Ranks> {
        self.ranks.as_ref().filter(|r| r.partitioned())
    }

    /// The vector operations.
    pub(crate) fn blas(&self) -> Blas<'_> {
        Blas {
            dev: &self.dev,
            scratch: &self.scratch,
            ranks: self.ranks.as_ref(),
            failure: &self.failure,
        }
    }

    /// The Wilson hopping term.
    pub(crate) fn wilson(&self) -> WilsonKernels<'_> {
        WilsonKernels {
            dev: &self.dev,
            forms: &self.forms,
            failure: &self.failure,
        }
    }

    /// The clover term, alone and in the hopping term.
    pub(crate) fn clover_kernels(&self) -> CloverKernels<'_> {
        CloverKernels {
            dev: &self.dev,
            failure: &self.failure,
        }
    }

    /// The staggered hopping terms.
    pub(crate) fn staggered(&self) -> StaggeredKernels<'_> {
        StaggeredKernels {
            dev: &self.dev,
            ranks: self.ranks.as_ref(),
            failure: &self.failure,
        }
    }

    /// The conversions of the caller's arrays.
    pub(crate) fn host_order(&self) -> HostOrder<'_> {
        HostOrder {
            dev: &self.dev,
            flags: &self.flags,
        }
    }

    /// The device, the compiler and what start-up compiled or loaded.
    pub fn info(&self) -> &DeviceInfo {
        self.dev.info()
    }

    /// The backend's stream (for timing in benchmarks).
    pub fn stream(&self) -> &Arc<CudaStream> {
        self.dev.stream()
    }

    /// Registers and local (spill) bytes per thread of each loaded kernel
    /// whose name starts with `prefix`, from the driver.
    pub fn kernel_resources(&self, prefix: &str) -> Vec<(String, i32, i32)> {
        self.dev.kernel_resources(prefix)
    }

    /// Waits for all queued work.
    pub fn synchronize(&self) -> Result<()> {
        self.dev.synchronize()
    }

    /// Tuned choices answered in this process but left out of the table
    /// file (`Tuner::keep_in_memory_only`).
    pub fn tuned_for_this_process_only(&self) -> usize {
        self.dev.tuned_for_this_process_only()
    }

    /// The modules loaded so far, compiled or from the cache, in order.
    pub fn modules(&self) -> Vec<ModuleReport> {
        self.dev.modules()
    }

    /// Fields allocated on the device and fields served from freed
    /// buffers since the backend started.
    pub fn field_allocations(&self) -> (usize, usize) {
        self.dev.field_allocations()
    }

    /// Which forms of the hopping term this backend launches.
    pub fn dslash_form(&self) -> DslashForm {
        self.forms.form()
    }

    /// Sets the forms to launch (checks run each form against the CPU).
    pub fn set_dslash_form(&self, forms: DslashForm) {
        self.forms.set_form(forms)
    }

    /// Whether the hopping terms prefetch their links (`links_prefetched`).
    pub fn link_prefetch(&self) -> LinkPrefetch {
        self.forms.link_prefetch()
    }

    /// Sets it (checks compare the outputs with and without).
    pub fn set_link_prefetch(&self, prefetch: LinkPrefetch) {
        self.forms.set_link_prefetch(prefetch)
    }

    /// Compiles (or loads from the cache) the small-volume forms' modules of
    /// `formats` now, in parallel, as a gauge field's import does for a
    /// small lattice.
    pub fn prepare_small_volume_forms(&self, formats: &[(Precision, Reconstruct)]) -> Result<()> {
        self.wilson().prepare_small_volume_forms(formats)
    }

    /// Microseconds per launch of an empty kernel, launched plainly and
    /// through the tuned path, over `n` launches (`launch_study`).
    pub fn launch_overhead_us(&self, n: usize) -> Result<(f64, f64)> {
        self.host_order().launch_overhead_us(n)
    }

    /// One launch of the empty kernel (`launch_study`).
    pub fn launch_empty(&self) -> Result<()> {
        self.host_order().launch_empty()
    }

    /// The modules whose kernels solves with `family` on fields and links
    /// of `formats` (precision, reconstruct of the Wilson links) launch.
    pub(crate) fn modules_for(
        family: OperatorFamily,
        formats: &[(Precision, Reconstruct)],
    ) -> Vec<Module> {
        let mut names = Vec::new();
        for &(p, r) in formats {
            let (f, r) = (suffix(p), r.reals());
            match family {
                OperatorFamily::Wilson => names.push(format!("wilson_dslash_{f}_r{r}")),
                OperatorFamily::Clover => {
                    names.push(format!("wilson_dslash_{f}_r{r}"));
                    names.push(format!("wilson_clover_{f}_r{r}"));
                }
                OperatorFamily::Staggered => {
                    names.push(super::staggered::module_name(p).to_string());
                    // The mixed solvers' partial solution beside fields
                    // coarser than single is single.
                    let partial = p.partial_solution();
                    names.push(super::staggered::module_name(partial).to_string());
                }
            }
            if family != OperatorFamily::Staggered {
                names.push("host_spinor".to_string());
                // The mixed BiCGstab keeps its partial solution in single
                // beside fields coarser than single.
                names.push(format!("blas_{f}"));
                names.push(format!("blas_{}", suffix(p.partial_solution())));
            } else if matches!(p, Precision::Double | Precision::Single) {
                names.push(format!("blas_{f}"));
            }
        }
        names
            .iter()
            .filter_map(|n| Module::named(catalogue::SOURCES, n))
            .collect()
    }

    /// The modules a solve with `family` on `formats` launches besides
    /// `modules_for` on a cut lattice: the edges' kernels and the packing.
    pub(crate) fn edge_modules_for(
        family: OperatorFamily,
        formats: &[(Precision, Reconstruct)],
    ) -> Vec<Module> {
        let mut names = vec!["halo".to_string()];
        if family == OperatorFamily::Staggered {
            names.push("staggered_edges".to_string());
        } else {
            for &(p, r) in formats {
                names.push(format!("wilson_edges_{}_r{}", suffix(p), r.reals()));
            }
        }
        names
            .iter()
            .filter_map(|n| Module::named(catalogue::SOURCES, n))
            .collect()
    }

    /// The links of `gauge` as fixed point `T` relative to `max`, by the
    /// CPU backend's rule, in the device layout of `shape`, to device
    /// memory at `dst`.
    pub(super) fn store_fixed_links<T: Fixed + bytemuck::Pod>(
        &self,
        dst: u64,
        gauge: &GaugeField,
        reconstruct: Reconstruct,
        shape: SoaShape,
        max: f64,
    ) -> Result<()> {
        let v = layout::links_to_soa(gauge, reconstruct, shape, |x| {
            T::from_scaled(x / max * T::MAX)
        })?;
        self.dev.upload_bytes(dst, bytemuck::cast_slice(&v))
    }

    /// `canonical` in the device layout as fixed point `T`, by the CPU
    /// backend's rule (`cpu/links.rs`): `round(x / scale · MAX)`, clamped.
    fn upload_fixed<T: Fixed + cudarc::driver::DeviceRepr>(
        &self,
        dst: &mut CudaSlice<T>,
        shape: SoaShape,
        canonical: &[f64],
        scale: f64,
    ) -> Result<()> {
        let len = canonical.len() / shape.canonical_len() * shape.block_len();
        let mut v = crate::alloc::filled(len, T::default(), "staging a field for the device")?;
        layout::to_soa(shape, canonical, &mut v, |x| {
            T::from_scaled(x / scale * T::MAX)
        });
        self.dev
            .stream
            .memcpy_htod(&v, dst)
            .map_err(device_err("host-to-device copy"))
    }

    /// Reorders canonical reals (blocks of `shape.stride` sites) into the
    /// device layout and precision in one host pass, then copies them in one
    /// transfer. Fixed point is relative to `scale` (the largest magnitude).
    pub(super) fn upload_soa(
        &self,
        dst: &mut DeviceData,
        shape: SoaShape,
        canonical: &[f64],
        scale: f64,
    ) -> Result<()> {
        let what = "host-to-device copy";
        let len = canonical.len() / shape.canonical_len() * shape.block_len();
        match dst {
            DeviceData::F64(d) => {
                let mut v = crate::alloc::filled(len, 0.0f64, "staging a field for the device")?;
                layout::to_soa(shape, canonical, &mut v, |x| x);
                self.dev.stream.memcpy_htod(&v, d).map_err(device_err(what))
            }
            DeviceData::F32(d) => {
                let mut v = crate::alloc::filled(len, 0.0f32, "staging a field for the device")?;
                layout::to_soa(shape, canonical, &mut v, |x| x as f32);
                self.dev.stream.memcpy_htod(&v, d).map_err(device_err(what))
            }
            // Fixed point (links only: spinors are converted on the device).
            DeviceData::I16(d) => self.upload_fixed(d, shape, canonical, scale),
            DeviceData::I8(d) => self.upload_fixed(d, shape, canonical, scale),
            DeviceData::I32(d) => self.upload_fixed(d, shape, canonical, scale),
            DeviceData::P20(_) | DeviceData::P30(_) => Err(Error::Internal(
                "packed spinors are converted on the device".into(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On a machine without a driver (CI) the backend must refuse, not panic.
    #[test]
    fn new_without_a_driver_is_no_device_not_a_panic() {
        let driver_present = nvrtc::probe_driver().is_ok();
        match CudaBackend::new(0) {
            Ok(b) => assert!(
                driver_present,
                "a backend on {} without a driver?",
                b.info().name
            ),
            Err(Error::NoDevice(msg)) => assert!(!msg.is_empty()),
            Err(e) => panic!("expected NoDevice or a device, got {e:?}"),
        }
    }

    #[test]
    fn out_of_range_ordinal_is_an_error_not_a_panic() {
        assert!(CudaBackend::new(1 << 20).is_err());
    }
}
