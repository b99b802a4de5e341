//! The CUDA backend (issue 3): device fields in the UKQCD basis, stored as
//! structure-of-arrays per parity with 16-byte vector loads (seed clark2010
//! §4.1, §4.5; layout in `kernels/core.cuh` and `layout.rs`), the Wilson
//! hopping term and the vector algebra as CUDA kernels compiled at run time
//! by NVRTC and cached on disk. Double, single, half and quarter (fixed
//! point with a per-site norm), links in the spinors' precision with
//! reconstruct 18, 12 or 8; the packed 20- and 30-bit spinors of seed
//! clark2022 §4 (the CPU backend's site bit strings, word-transposed; same
//! values and rounding) with 16- and 32-bit fixed-point links.
//!
//! The host code is a thin typed wrapper: it checks fields, picks a kernel
//! and launches it. cudarc drives the device; NVRTC and the driver library
//! are probed with `dlopen` first, so a machine without CUDA gets
//! `Error::NoDevice`, never a panic. One stream per backend; every call is
//! ordered on it, and calls that return host values synchronize.

mod blas;
mod cache;
mod clover;
mod clover_compute;
#[cfg(test)]
mod clover_emulation;
mod cold_fields;
mod dslash;
mod dslash_forms;
#[cfg(test)]
mod emulation;
mod host_gauge;
mod host_spinor;
mod launch;
pub mod layout;
mod modules;
mod nvrtc;
mod pool;
mod staggered;
mod staging;

use std::collections::HashMap;

use rayon::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr, DriverError};
use num_complex::Complex64 as C64;

use super::{Backend, CloverForm, GaugeStorage, OperatorFamily, SpinorField};
use crate::clover::CloverField;
use crate::error::{Error, Result};
use crate::field::{Fermion, GaugeField, HostSpinor, SPINOR_REALS};
use crate::format::{packed, Fixed};
use crate::lattice::{Lattice, Parity, Subset};
use crate::precision::{Precision, Reconstruct, TBoundary};

pub use modules::ModuleReport;

use blas::Out;
pub use clover::CudaClover;
pub use dslash_forms::{has_small_volume_forms, DslashForm, LinkPrefetch};
use layout::{SoaShape, LINK_REALS};
use modules::{Kernel, Module};

/// Maps a driver error into the library's error, naming the call.
pub(crate) fn device_err(what: &str) -> impl Fn(DriverError) -> Error + '_ {
    move |e| {
        let oom = e.0 == cudarc::driver::sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY;
        if oom {
            Error::OutOfMemory(format!("{what}: {e}"))
        } else {
            Error::Device(format!("{what}: {e}"))
        }
    }
}

/// Device memory of one field, in its storage precision.
#[derive(Debug)]
pub(crate) enum DeviceData {
    F64(CudaSlice<f64>),
    F32(CudaSlice<f32>),
    /// Half: int16 values; a spinor block's f32 norms follow its values.
    I16(CudaSlice<i16>),
    /// Quarter: int8 values, norms likewise.
    I8(CudaSlice<i8>),
    /// 32-bit fixed point: the links beside 30-bit spinors only.
    I32(CudaSlice<i32>),
    /// Packed 20-bit spinors: `packed::words(20)` words per site.
    P20(CudaSlice<u32>),
    /// Packed 30-bit spinors: `packed::words(30)` words per site.
    P30(CudaSlice<u32>),
}

impl DeviceData {
    fn precision(&self) -> Precision {
        match self {
            DeviceData::F64(_) => Precision::Double,
            DeviceData::F32(_) => Precision::Single,
            DeviceData::I16(_) => Precision::Half,
            DeviceData::I8(_) => Precision::Quarter,
            DeviceData::I32(_) | DeviceData::P30(_) => Precision::Packed30,
            DeviceData::P20(_) => Precision::Packed20,
        }
    }
    /// The device address (for kernel parameters).
    fn ptr(&self, stream: &CudaStream) -> u64 {
        match self {
            DeviceData::F64(s) => s.device_ptr(stream).0,
            DeviceData::F32(s) => s.device_ptr(stream).0,
            DeviceData::I16(s) => s.device_ptr(stream).0,
            DeviceData::I8(s) => s.device_ptr(stream).0,
            DeviceData::I32(s) => s.device_ptr(stream).0,
            DeviceData::P20(s) | DeviceData::P30(s) => s.device_ptr(stream).0,
        }
    }
    /// Elements.
    fn len(&self) -> usize {
        match self {
            DeviceData::F64(s) => s.len(),
            DeviceData::F32(s) => s.len(),
            DeviceData::I16(s) => s.len(),
            DeviceData::I8(s) => s.len(),
            DeviceData::I32(s) => s.len(),
            DeviceData::P20(s) | DeviceData::P30(s) => s.len(),
        }
    }
    /// Sets every byte to 0 (queued on `stream`).
    fn zero(&mut self, stream: &CudaStream) -> Result<()> {
        let (ptr, bytes) = (self.ptr(stream), self.bytes());
        // SAFETY: the whole live allocation.
        unsafe { cudarc::driver::result::memset_d8_async(ptr, 0, bytes, stream.cu_stream()) }
            .map_err(device_err("zeroing a field"))
    }
    fn bytes(&self) -> usize {
        match self {
            DeviceData::F64(s) => s.len() * 8,
            DeviceData::F32(s) => s.len() * 4,
            DeviceData::I16(s) => s.len() * 2,
            DeviceData::I8(s) => s.len(),
            DeviceData::I32(s) => s.len() * 4,
            DeviceData::P20(s) | DeviceData::P30(s) => s.len() * 4,
        }
    }
}

/// Reals per vector load of a spinor field (double2 / float4 / short4 / char4).
fn spinor_vec(p: Precision) -> usize {
    match p {
        Precision::Double => 2,
        _ => 4,
    }
}

/// Whether a site's numbers share a scale (a norm, or the packed formats'
/// exponent): such fields are handled a site at a time (one thread per
/// site in the BLAS) and reach the host through a conversion on the device.
pub(crate) fn per_site(p: Precision) -> bool {
    matches!(
        p,
        Precision::Half | Precision::Quarter | Precision::Packed20 | Precision::Packed30
    )
}

/// Stored elements of one spinor parity block of `stride` sites: 24 reals
/// per site, then (half, quarter) one f32 norm per site; packed: the site's
/// 32-bit words.
pub(crate) fn spinor_block_len(p: Precision, stride: usize) -> usize {
    match p {
        Precision::Half | Precision::Quarter => stride * (SPINOR_REALS + 4 / p.bytes_per_real()),
        Precision::Packed20 | Precision::Packed30 => stride * packed::words(packed::bits(p)),
        _ => stride * SPINOR_REALS,
    }
}

/// Bytes of one spinor parity block of `stride` sites.
pub(crate) fn spinor_block_bytes(p: Precision, stride: usize) -> usize {
    let elem = match p {
        Precision::Packed20 | Precision::Packed30 => 4,
        p => p.bytes_per_real(),
    };
    spinor_block_len(p, stride) * elem
}

/// A spinor field in device memory (layout: `kernels/core.cuh`).
#[derive(Debug)]
pub struct CudaSpinor {
    lattice: Arc<Lattice>,
    subset: Subset,
    /// Sites between consecutive components (Vh plus padding).
    stride: usize,
    /// Wilson spinors (every format) or staggered colour vectors (double,
    /// single, half, quarter: 3 double2 / float2 / short2 / char2 a site,
    /// the fixed-point norms after them, `kernels/staggered_dslash.cuh`).
    fermion: Fermion,
    /// Back to the backend's pool when the field is dropped.
    data: pool::Pooled,
}

impl SpinorField for CudaSpinor {
    fn lattice(&self) -> &Arc<Lattice> {
        &self.lattice
    }
    fn subset(&self) -> Subset {
        self.subset
    }
    fn precision(&self) -> Precision {
        self.data.precision()
    }
    fn fermion(&self) -> Fermion {
        self.fermion
    }
}

pub use staggered::CudaStaggeredLinks;

impl CudaSpinor {
    /// Number of parity blocks (1 or 2).
    fn blocks(&self) -> usize {
        match self.subset {
            Subset::Full => 2,
            Subset::Single(_) => 1,
        }
    }

    /// Stored elements of one parity block.
    fn block_len(&self) -> usize {
        match self.fermion {
            Fermion::Wilson => spinor_block_len(self.precision(), self.stride),
            Fermion::Staggered => staggered::block_len(self.precision(), self.stride),
        }
    }

    /// Bytes of one parity block.
    fn block_bytes(&self) -> usize {
        self.block_len() * self.precision().bytes_per_real()
    }

    /// Where the structure-of-arrays layout puts a site's reals (double and
    /// single fields).
    fn soa_shape(&self) -> SoaShape {
        match self.fermion {
            Fermion::Wilson => SoaShape::spinor(
                spinor_vec(self.precision()),
                self.lattice.half_volume(),
                self.stride,
            ),
            Fermion::Staggered => SoaShape {
                reals: Fermion::Staggered.reals(),
                vec: 2,
                sites: self.lattice.half_volume(),
                stride: self.stride,
            },
        }
    }
}

/// A gauge field in device memory: the links as given (compressed to 12 or
/// 8 reals for reconstruct 12 or 8); the kernel applies the time boundary sign.
#[derive(Debug)]
pub struct CudaGauge {
    lattice: Arc<Lattice>,
    stride: usize,
    links: DeviceData,
    /// The precision asked for (the packed formats store fixed-point links).
    precision: Precision,
    reconstruct: Reconstruct,
    /// Fixed point: value = stored · scale.
    scale: f64,
    t_sign: f64,
}

impl GaugeStorage for CudaGauge {
    fn lattice(&self) -> &Arc<Lattice> {
        &self.lattice
    }
    fn precision(&self) -> Precision {
        self.precision
    }
    fn reconstruct(&self) -> Reconstruct {
        self.reconstruct
    }
}

/// Scratch memory of the reductions, one at a time: the per-block
/// partials, the counter that elects the last block, and the results in
/// pinned host memory that the device writes directly (mapped).
struct Scratch {
    partials: CudaSlice<f64>,
    counter: CudaSlice<u32>,
    result: cudarc::driver::PinnedHostSlice<f64>,
    /// The device's address of `result`.
    result_device: u64,
}

impl Scratch {
    fn new(ctx: &Arc<CudaContext>, stream: &Arc<CudaStream>) -> Result<Scratch> {
        let what = "reduction scratch";
        // SAFETY: a plain allocation of RED_MAX doubles of pinned memory,
        // mapped into the device's address space (not write-combined: the
        // host reads it).
        let result = unsafe {
            ctx.alloc_pinned_with_flags::<f64>(
                blas::RED_MAX,
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
                .alloc_zeros::<f64>(blas::RED_GRID_MAX * blas::RED_MAX)
                .map_err(device_err(what))?,
            counter: stream.alloc_zeros::<u32>(1).map_err(device_err(what))?,
            result,
            result_device: dev,
        })
    }
}

/// What the backend found and did at start.
#[derive(Debug, Clone)]
pub struct DeviceInfo {
    pub ordinal: usize,
    pub name: String,
    /// Compute capability, 10 major + minor.
    pub compute_capability: i32,
    pub multiprocessors: i32,
    /// L2 cache bytes.
    pub l2_bytes: usize,
    pub nvrtc_version: (i32, i32),
    pub nvrtc_library: &'static str,
    /// The NVRTC architecture option (sm_XY for a cubin, compute_XY for PTX).
    pub target: String,
    pub cache_dir: Option<std::path::PathBuf>,
    /// Tuned launch entries read from the cache at start.
    pub tuned_entries_at_start: usize,
}

/// The kernels of the modules loaded so far, and their reports.
type LoadedKernels = (HashMap<String, Arc<Kernel>>, Vec<ModuleReport>);

/// The CUDA backend on one device.
pub struct CudaBackend {
    stream: Arc<CudaStream>,
    /// The kernels of the modules loaded so far (when a context prepares
    /// its formats, or on first use), and what their loading reported.
    /// Behind `Arc`s that are never dropped while the backend lives: the
    /// tuner's fast path keys a kernel by its address.
    kernels: Mutex<LoadedKernels>,
    builder: modules::Builder,
    /// Device buffers of freed fields, for the next fields of their shape.
    pool: Arc<pool::BufferPool>,
    /// Two numbers the host-array conversions report (`host_spinor`).
    flags: CudaSlice<u64>,
    /// Pinned buffers for the caller's arrays (`staging`), made on first use.
    staging: Mutex<Option<staging::Staging>>,
    /// A second stream for the raw bytes of the next source
    /// (`import_each`), made on first use; ordered against `stream` by
    /// events, never by cudarc's per-field tracking (off).
    copy_stream: std::sync::OnceLock<Arc<CudaStream>>,
    tuner: launch::Tuner,
    /// Which forms of the hopping term to launch where a format has several
    /// (`dslash_forms::DslashForm`): from `LATSOL_DSLASH_FORM` or
    /// `LATSOL_DSLASH_SPLIT`, settable for checks.
    dslash_form: std::sync::atomic::AtomicU8,
    /// Whether the hopping terms prefetch their links (`dslash_forms::LinkPrefetch`
    /// from `LATSOL_LINK_PREFETCH`), settable for checks.
    link_prefetch: std::sync::atomic::AtomicU8,
    /// Blocks of a kernel resident on the device at once, by (kernel
    /// address, block size): `resident_blocks`.
    residency: Mutex<std::collections::HashMap<(usize, u32), u32>>,
    scratch: Mutex<Scratch>,
    info: DeviceInfo,
    // Dropped last: everything above lives in this context.
    ctx: Arc<CudaContext>,
}

impl CudaBackend {
    /// Opens device `ordinal`, compiling (or loading from the cache) the
    /// kernels. `Error::NoDevice` says why when there is no usable GPU,
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

    fn start(ordinal: usize, nvrtc: &nvrtc::Nvrtc) -> Result<CudaBackend> {
        let no_device =
            |what: &'static str| move |e: DriverError| Error::NoDevice(format!("{what}: {e}"));
        let ctx = CudaContext::new(ordinal).map_err(no_device("cannot open CUDA device"))?;
        // Fields are used on one stream, so the per-field events cudarc
        // would record for cross-stream safety are pure overhead (the copy
        // stream writes raw staging buffers only, ordered by events).
        // SAFETY: called before any allocation.
        unsafe { ctx.disable_event_tracking() };
        let (major, minor) = ctx
            .compute_capability()
            .map_err(no_device("compute capability"))?;
        let cc = 10 * major + minor;
        let name = ctx.name().map_err(no_device("device name"))?;
        let multiprocessors = ctx
            .attribute(
                cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            )
            .map_err(no_device("device attributes"))?;
        let l2_bytes = ctx
            .attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
            .map_err(no_device("device attributes"))?
            .max(0) as usize;
        let (target, cubin) = nvrtc::target(cc, &nvrtc.supported_archs()?)?;
        let stream = ctx.new_stream().map_err(device_err("stream creation"))?;

        let disk = cache::DiskCache::open(cache::default_dir());
        let builder = modules::Builder {
            nvrtc: *nvrtc,
            cache: disk.clone(),
            arch_option: target.clone(),
            cubin,
        };
        let device_key: String = format!("{name}-sm{cc}")
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let tuner = launch::Tuner::new(disk.tune_path(&device_key));
        let scratch = Scratch::new(&ctx, &stream)?;
        let flags = stream
            .alloc_zeros::<u64>(2)
            .map_err(device_err("conversion flags"))?;
        let info = DeviceInfo {
            ordinal,
            name,
            compute_capability: cc,
            multiprocessors,
            l2_bytes,
            nvrtc_version: nvrtc.version()?,
            nvrtc_library: nvrtc.soname(),
            target,
            cache_dir: disk.dir().map(|d| d.to_path_buf()),
            tuned_entries_at_start: tuner.entries(),
        };
        Ok(CudaBackend {
            stream,
            kernels: Mutex::new(Default::default()),
            pool: Arc::default(),
            flags,
            staging: Mutex::new(None),
            copy_stream: std::sync::OnceLock::new(),
            builder,
            tuner,
            dslash_form: std::sync::atomic::AtomicU8::new(
                dslash_forms::DslashForm::from_env() as u8
            ),
            link_prefetch: std::sync::atomic::AtomicU8::new(
                dslash_forms::LinkPrefetch::from_env() as u8
            ),
            residency: Mutex::new(std::collections::HashMap::new()),
            scratch: Mutex::new(scratch),
            info,
            ctx,
        })
    }

    /// The copy stream of `import_each`, made on first use.
    pub(crate) fn copy_stream(&self) -> Result<Arc<CudaStream>> {
        if let Some(s) = self.copy_stream.get() {
            return Ok(s.clone());
        }
        let s = self
            .ctx
            .new_stream()
            .map_err(device_err("copy stream creation"))?;
        Ok(self.copy_stream.get_or_init(|| s).clone())
    }

    /// The device, the compiler and what start-up compiled or loaded.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The backend's stream (for timing in benchmarks).
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Registers and local (spill) bytes per thread of each loaded kernel
    /// whose name starts with `prefix`, from the driver.
    pub fn kernel_resources(&self, prefix: &str) -> Vec<(String, i32, i32)> {
        let Ok(table) = self.loaded() else {
            return Vec::new();
        };
        let mut v: Vec<_> = table
            .0
            .values()
            .filter(|k| k.name.starts_with(prefix))
            .map(|k| {
                let regs = k.func.num_regs().unwrap_or(-1);
                let local = k.func.local_size_bytes().unwrap_or(-1);
                (k.name.clone(), regs, local)
            })
            .collect();
        v.sort();
        v
    }

    /// Waits for all queued work.
    pub fn synchronize(&self) -> Result<()> {
        self.stream.synchronize().map_err(device_err("synchronize"))
    }

    fn loaded(&self) -> Result<std::sync::MutexGuard<'_, LoadedKernels>> {
        self.kernels
            .lock()
            .map_err(|_| Error::Internal("kernel table poisoned".into()))
    }

    /// Compiles (or loads from the cache) those of `modules` not loaded
    /// yet, all at once in parallel threads.
    fn load_modules(&self, table: &mut LoadedKernels, modules: &[Module]) -> Result<()> {
        let mut missing: Vec<Module> = Vec::new();
        for m in modules {
            let name = m.name();
            if !missing.contains(m) && !table.1.iter().any(|r| r.name == name) {
                missing.push(*m);
            }
        }
        if missing.is_empty() {
            return Ok(());
        }
        let (kernels, reports) = self.builder.load(&self.ctx, &missing)?;
        for (name, k) in kernels {
            // A kernel every module of a source defines (the clover site
            // kernel) keeps its first copy: the tuner keys it by address.
            table.0.entry(name).or_insert_with(|| Arc::new(k));
        }
        table.1.extend(reports);
        Ok(())
    }

    /// How many blocks of `block` threads of `k` the device holds at once
    /// (its occupancy on every multiprocessor), found once a size.
    fn resident_blocks(&self, k: &Kernel, block: u32) -> Result<u32> {
        let key = (k as *const Kernel as usize, block);
        let poisoned = |_| Error::Internal("residency table poisoned".into());
        if let Some(&n) = self.residency.lock().map_err(poisoned)?.get(&key) {
            return Ok(n);
        }
        let per_sm = k
            .func
            .occupancy_max_active_blocks_per_multiprocessor(block, 0, None)
            .map_err(device_err("occupancy"))?;
        let n = per_sm.saturating_mul(self.info.multiprocessors.max(0) as u32);
        self.residency.lock().map_err(poisoned)?.insert(key, n);
        Ok(n)
    }

    /// The kernel `name`; its module is compiled (or loaded from the
    /// cache) on first use if no context prepared it.
    fn kernel(&self, name: &str) -> Result<Arc<Kernel>> {
        let mut table = self.loaded()?;
        if let Some(k) = table.0.get(name) {
            return Ok(k.clone());
        }
        let module = Module::of_kernel(name)
            .ok_or_else(|| Error::Internal(format!("no source defines kernel {name}")))?;
        self.load_modules(&mut table, &[module])?;
        table
            .0
            .get(name)
            .cloned()
            .ok_or_else(|| Error::Internal(format!("kernel {name} missing from {}", module.name())))
    }

    /// Tuned choices answered in this process but left out of the table
    /// file (`Tuner::keep_in_memory_only`).
    pub fn tuned_for_this_process_only(&self) -> usize {
        self.tuner.memory_only_entries()
    }

    /// The modules loaded so far, compiled or from the cache, in order.
    pub fn modules(&self) -> Vec<ModuleReport> {
        self.loaded().map(|t| t.1.clone()).unwrap_or_default()
    }

    /// The modules whose kernels solves with `family` on fields and links
    /// of `formats` (precision, reconstruct of the Wilson links) launch.
    pub fn modules_for(
        family: OperatorFamily,
        formats: &[(Precision, Reconstruct)],
    ) -> Vec<Module> {
        let mut names = Vec::new();
        for &(p, r) in formats {
            let (f, r) = (blas::suffix(p), r.reals());
            match family {
                OperatorFamily::Wilson => names.push(format!("wilson_dslash_{f}_r{r}")),
                OperatorFamily::Clover => {
                    names.push(format!("wilson_dslash_{f}_r{r}"));
                    names.push(format!("wilson_clover_{f}_r{r}"));
                }
                OperatorFamily::Staggered => names.push(
                    match p {
                        Precision::Half => "staggered_f16",
                        Precision::Quarter => "staggered_f8",
                        _ => "staggered_dslash",
                    }
                    .to_string(),
                ),
            }
            if family != OperatorFamily::Staggered {
                names.push("host_spinor".to_string());
                // The mixed BiCGstab keeps its partial solution in single
                // beside fields coarser than single.
                names.push(format!("blas_{f}"));
                names.push(format!("blas_{}", blas::suffix(p.partial_solution())));
            } else if matches!(p, Precision::Double | Precision::Single) {
                names.push(format!("blas_{f}"));
            }
        }
        names.iter().filter_map(|n| Module::named(n)).collect()
    }

    /// A field's buffer of `len` elements of `precision`, zeroed: a freed
    /// one of that shape from the pool, else a new allocation (after
    /// freeing the pool's buffers if the device is out of memory).
    fn pooled(&self, precision: Precision, len: usize) -> Result<pool::Pooled> {
        let data = match self.pool.take(precision, len) {
            Some(mut d) => {
                d.zero(&self.stream)?;
                d
            }
            None => {
                let d = match self.alloc(precision, len) {
                    Err(_) if self.pool.release_all() > 0 => self.alloc(precision, len)?,
                    r => r?,
                };
                self.pool.count_allocation();
                d
            }
        };
        Ok(pool::Pooled::new(data, self.pool.clone()))
    }

    /// Fields allocated on the device and fields served from freed
    /// buffers since the backend started.
    pub fn field_allocations(&self) -> (usize, usize) {
        self.pool.counts()
    }

    fn alloc(&self, precision: Precision, len: usize) -> Result<DeviceData> {
        let what = "device allocation";
        Ok(match precision {
            Precision::Double => {
                DeviceData::F64(self.stream.alloc_zeros(len).map_err(device_err(what))?)
            }
            Precision::Single => {
                DeviceData::F32(self.stream.alloc_zeros(len).map_err(device_err(what))?)
            }
            Precision::Half => {
                DeviceData::I16(self.stream.alloc_zeros(len).map_err(device_err(what))?)
            }
            Precision::Quarter => {
                DeviceData::I8(self.stream.alloc_zeros(len).map_err(device_err(what))?)
            }
            Precision::Packed20 => {
                DeviceData::P20(self.stream.alloc_zeros(len).map_err(device_err(what))?)
            }
            Precision::Packed30 => {
                DeviceData::P30(self.stream.alloc_zeros(len).map_err(device_err(what))?)
            }
        })
    }

    /// Link storage of `len` numbers for spinors of `precision`: the
    /// packed formats' links are 16-bit (20-bit spinors) and 32-bit (30-bit
    /// spinors) fixed point, as on the CPU backend (`cpu/links.rs`).
    fn alloc_links(&self, precision: Precision, len: usize) -> Result<DeviceData> {
        match precision {
            Precision::Packed20 => self.alloc(Precision::Half, len),
            Precision::Packed30 => Ok(DeviceData::I32(
                self.stream
                    .alloc_zeros(len)
                    .map_err(device_err("device allocation"))?,
            )),
            p => self.alloc(p, len),
        }
    }

    /// Links stored in `precision` with `max` their largest stored
    /// magnitude: the fixed-point type's largest integer and the scale
    /// (value = stored · scale); (1, 1) for floating point.
    fn link_scale(precision: Precision, max: f64) -> (f64, f64) {
        let fixed_max = match precision {
            Precision::Half | Precision::Packed20 => <i16 as Fixed>::MAX,
            Precision::Quarter => <i8 as Fixed>::MAX,
            Precision::Packed30 => <i32 as Fixed>::MAX,
            _ => return (1.0, 1.0),
        };
        (fixed_max, max / fixed_max)
    }

    /// The links of `gauge` as fixed point `T` relative to `max`, by the
    /// CPU backend's rule, in the device layout of `shape`, to device
    /// memory at `dst`.
    fn store_fixed_links<T: Fixed + bytemuck::Pod>(
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
        self.upload_bytes(dst, bytemuck::cast_slice(&v))
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
        self.stream
            .memcpy_htod(&v, dst)
            .map_err(device_err("host-to-device copy"))
    }

    /// Reorders canonical reals (blocks of `shape.stride` sites) into the
    /// device layout and precision in one host pass, then copies them in one
    /// transfer. Fixed point is relative to `scale` (the largest magnitude).
    fn upload_soa(
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
                self.stream.memcpy_htod(&v, d).map_err(device_err(what))
            }
            DeviceData::F32(d) => {
                let mut v = crate::alloc::filled(len, 0.0f32, "staging a field for the device")?;
                layout::to_soa(shape, canonical, &mut v, |x| x as f32);
                self.stream.memcpy_htod(&v, d).map_err(device_err(what))
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

    /// The lattice must allow 32-bit site and element indices in kernels.
    fn check_lattice(lattice: &Lattice) -> Result<()> {
        if lattice.volume().saturating_mul(SPINOR_REALS) >= i32::MAX as usize {
            return Err(Error::Unsupported(format!(
                "a lattice of {} sites is too large for one device's 32-bit indexing",
                lattice.volume()
            )));
        }
        Ok(())
    }
}

/// Whether two fields live on the same lattice. By extents, not `==`:
/// `Lattice`'s `PartialEq` compares its neighbour tables, megabytes per call
/// on large lattices (it once cost more than the kernels themselves).
pub(crate) fn same_lattice(a: &Arc<Lattice>, b: &Arc<Lattice>) -> bool {
    Arc::ptr_eq(a, b) || a.dims() == b.dims()
}

/// Fields of one operation must live on one lattice and hold the same sites.
fn check_same(what: &str, a: &CudaSpinor, b: &CudaSpinor) -> Result<()> {
    if a.subset != b.subset
        || !same_lattice(&a.lattice, &b.lattice)
        || a.stride != b.stride
        || a.fermion != b.fermion
    {
        return Err(Error::Internal(format!(
            "{what}: fields of different subsets ({:?} vs {:?}) or lattices",
            a.subset, b.subset
        )));
    }
    Ok(())
}

impl Backend for CudaBackend {
    type Spinor = CudaSpinor;
    type Gauge = CudaGauge;
    type Clover = CudaClover;
    type StaggeredLinks = CudaStaggeredLinks;

    fn name(&self) -> &'static str {
        "cuda"
    }

    fn prepare(&self, family: OperatorFamily, formats: &[(Precision, Reconstruct)]) -> Result<()> {
        let modules = Self::modules_for(family, formats);
        let mut table = self.loaded()?;
        self.load_modules(&mut table, &modules)
    }

    fn release_workspaces(&self) {
        self.pool.release_all();
    }

    fn import_staggered(
        &self,
        lattice: &Arc<Lattice>,
        fat: &crate::layout::HostGauge,
        long: Option<&crate::layout::HostGauge>,
        fold: Option<super::PhaseFold>,
        formats: &[(Precision, crate::long_links::LongReconstruct)],
    ) -> Result<Option<Vec<CudaStaggeredLinks>>> {
        self.import_staggered_impl(lattice, fat, long, fold, formats)
    }

    fn import_gauge(
        &self,
        lattice: &Arc<Lattice>,
        host: &crate::layout::HostGauge,
        form: super::GaugeForm,
        formats: &[(Precision, Reconstruct)],
        accept: &dyn Fn(&super::GaugeScan) -> bool,
    ) -> Result<Option<(super::GaugeScan, Vec<CudaGauge>)>> {
        // Temporal-gauge storage is the plain one here (the default
        // `upload_gauge_temporal`).
        self.import_gauge_impl(lattice, host, form, formats, accept)
    }

    fn import_spinor(
        &self,
        dst: &mut CudaSpinor,
        host: crate::layout::HostReals,
        order: crate::layout::DiracOrder,
        basis: crate::layout::GammaBasis,
        exp: Option<i32>,
    ) -> Result<i32> {
        self.import_spinor_impl(dst, host, order, basis, exp)
    }

    fn import_each(
        &self,
        sources: &[crate::layout::HostReals],
        order: crate::layout::DiracOrder,
        basis: crate::layout::GammaBasis,
        alloc: &mut dyn FnMut() -> Result<CudaSpinor>,
        solve: &mut crate::backend::SolveEach<'_, CudaSpinor>,
    ) -> Result<()> {
        self.import_each_impl(sources, order, basis, alloc, solve)
    }

    fn export_spinor(
        &self,
        src: &CudaSpinor,
        out: crate::layout::HostRealsMut,
        order: crate::layout::DiracOrder,
        basis: crate::layout::GammaBasis,
        exp: i32,
    ) -> Result<()> {
        self.export_spinor_impl(src, out, order, basis, exp)
    }

    fn check_export(
        &self,
        src: &CudaSpinor,
        out: &crate::layout::HostRealsMut,
        exp: i32,
    ) -> Result<()> {
        self.check_export_impl(src, out, exp)
    }

    fn field_allocations(&self) -> (usize, usize) {
        self.pool.counts()
    }

    fn upload_gauge(
        &self,
        gauge: &GaugeField,
        t_boundary: TBoundary,
        precision: Precision,
        reconstruct: Reconstruct,
    ) -> Result<CudaGauge> {
        let lat = gauge.lattice().clone();
        Self::check_lattice(&lat)?;
        let vh = lat.half_volume();
        let reals = reconstruct.reals();
        // Fixed point relative to the largest stored number (at least 1;
        // 1 for unitary links), as the CPU backend stores them: the same
        // integers and the same `max / MAX` multiplier. One parallel pass
        // over the compressed links, nothing stored.
        let max = (0..8 * vh)
            .into_par_iter()
            .map(|k| {
                let (block, cb) = (k / vh, k % vh);
                let (p, mu) = (Parity::from_index(block / 4), block % 4);
                let mut buf = [0.0; LINK_REALS];
                crate::reconstruct::compress(gauge.link(p, cb, mu), reconstruct, &mut buf);
                buf[..reals].iter().fold(1.0f64, |m, v| m.max(v.abs()))
            })
            .reduce(|| 1.0f64, f64::max);
        let (_, scale) = Self::link_scale(precision, max);
        let stride = layout::padded_stride(vh);
        let vec = SoaShape::link_vec(precision, reals);
        let shape = SoaShape::link(reals, vec, vh, stride);
        let links = self.alloc_links(precision, 8 * shape.block_len())?;
        // Compressed and reordered straight into the device layout in one
        // parallel pass (no canonical copy in between), then one transfer
        // through the pinned staging buffers.
        let at = links.ptr(&self.stream);
        match &links {
            DeviceData::F64(_) => {
                let v = layout::links_to_soa(gauge, reconstruct, shape, |x| x)?;
                self.upload_bytes(at, bytemuck::cast_slice(&v))?
            }
            DeviceData::F32(_) => {
                let v = layout::links_to_soa(gauge, reconstruct, shape, |x| x as f32)?;
                self.upload_bytes(at, bytemuck::cast_slice(&v))?
            }
            DeviceData::I16(_) => {
                self.store_fixed_links::<i16>(at, gauge, reconstruct, shape, max)?
            }
            DeviceData::I8(_) => {
                self.store_fixed_links::<i8>(at, gauge, reconstruct, shape, max)?
            }
            DeviceData::I32(_) => {
                self.store_fixed_links::<i32>(at, gauge, reconstruct, shape, max)?
            }
            DeviceData::P20(_) | DeviceData::P30(_) => {
                return Err(Error::Internal("links are never stored packed".into()))
            }
        }
        // Stored before any later kernel starts (as `import_gauge_impl`).
        self.synchronize()?;
        Ok(CudaGauge {
            lattice: lat,
            stride,
            links,
            precision,
            reconstruct,
            scale,
            t_sign: t_boundary.sign(),
        })
    }

    fn alloc_field(
        &self,
        lattice: &Arc<Lattice>,
        subset: Subset,
        precision: Precision,
        fermion: Fermion,
    ) -> Result<CudaSpinor> {
        if fermion == Fermion::Staggered
            && matches!(precision, Precision::Packed20 | Precision::Packed30)
        {
            return Err(Error::Unsupported(format!(
                "staggered fields in {precision:?}: double, single, half or quarter"
            )));
        }
        Self::check_lattice(lattice)?;
        let stride = layout::padded_stride(lattice.half_volume());
        let blocks = lattice.sites(subset) / lattice.half_volume();
        let len = match fermion {
            Fermion::Wilson => spinor_block_len(precision, stride),
            Fermion::Staggered => staggered::block_len(precision, stride),
        };
        let data = self.pooled(precision, blocks * len)?;
        Ok(CudaSpinor {
            lattice: lattice.clone(),
            subset,
            stride,
            fermion,
            data,
        })
    }

    fn upload_spinor(&self, dst: &mut CudaSpinor, src: &HostSpinor) -> Result<()> {
        if dst.subset != src.subset()
            || src.fermion() != dst.fermion
            || !same_lattice(&dst.lattice, src.lattice())
        {
            return Err(Error::Internal("upload_spinor: the fields differ".into()));
        }
        if per_site(dst.precision()) {
            // Rounded to fixed point (packed) on the device, by the kernels' rule.
            let mut d =
                self.alloc_field(&dst.lattice, dst.subset, Precision::Double, dst.fermion)?;
            self.upload_spinor(&mut d, src)?;
            return self.copy_impl(dst, &d);
        }
        let reals: &[f64] = bytemuck::cast_slice(src.data());
        let shape = dst.soa_shape();
        self.upload_soa(&mut dst.data, shape, reals, 1.0)
    }

    fn download_spinor(&self, src: &CudaSpinor, dst: &mut HostSpinor) -> Result<()> {
        if src.subset != dst.subset()
            || dst.fermion() != src.fermion
            || !same_lattice(&src.lattice, dst.lattice())
        {
            return Err(Error::Internal("download_spinor: the fields differ".into()));
        }
        let shape = src.soa_shape();
        if per_site(src.precision()) {
            let mut d =
                self.alloc_field(&src.lattice, src.subset, Precision::Double, src.fermion)?;
            self.copy_impl(&mut d, src)?;
            return self.download_spinor(&d, dst);
        }
        let what = "device-to-host copy";
        let reals: &mut [f64] = bytemuck::cast_slice_mut(dst.data_mut());
        match &*src.data {
            DeviceData::F64(s) => {
                let v = self.stream.clone_dtoh(s).map_err(device_err(what))?;
                self.synchronize()?;
                layout::from_soa(shape, &v, reals, |x| x);
            }
            DeviceData::F32(s) => {
                let v = self.stream.clone_dtoh(s).map_err(device_err(what))?;
                self.synchronize()?;
                layout::from_soa(shape, &v, reals, |x| x as f64);
            }
            _ => unreachable!("converted above"),
        }
        Ok(())
    }

    fn extract_parity(&self, part: &mut CudaSpinor, full: &CudaSpinor, p: Parity) -> Result<()> {
        crate::backend::check_parity_pair("extract_parity", full, part, p)?;
        // A full field is the even block then the odd one, each of the
        // single-parity field's layout (same stride, norms inside).
        let n = full.block_len();
        let r = p.index() * n..(p.index() + 1) * n;
        let (s, what) = (&self.stream, "parity copy");
        match (&mut *part.data, &*full.data) {
            (DeviceData::F64(d), DeviceData::F64(x)) => s.memcpy_dtod(&x.slice(r), d),
            (DeviceData::F32(d), DeviceData::F32(x)) => s.memcpy_dtod(&x.slice(r), d),
            (DeviceData::I16(d), DeviceData::I16(x)) => s.memcpy_dtod(&x.slice(r), d),
            (DeviceData::I8(d), DeviceData::I8(x)) => s.memcpy_dtod(&x.slice(r), d),
            (DeviceData::P20(d), DeviceData::P20(x)) | (DeviceData::P30(d), DeviceData::P30(x)) => {
                s.memcpy_dtod(&x.slice(r), d)
            }
            _ => return Err(Error::Internal(format!("{what}: precisions differ"))),
        }
        .map_err(device_err(what))
    }

    fn insert_parity(&self, full: &mut CudaSpinor, p: Parity, part: &CudaSpinor) -> Result<()> {
        crate::backend::check_parity_pair("insert_parity", full, part, p)?;
        let n = full.block_len();
        let r = p.index() * n..(p.index() + 1) * n;
        let (s, what) = (&self.stream, "parity copy");
        match (&mut *full.data, &*part.data) {
            (DeviceData::F64(d), DeviceData::F64(x)) => s.memcpy_dtod(x, &mut d.slice_mut(r)),
            (DeviceData::F32(d), DeviceData::F32(x)) => s.memcpy_dtod(x, &mut d.slice_mut(r)),
            (DeviceData::I16(d), DeviceData::I16(x)) => s.memcpy_dtod(x, &mut d.slice_mut(r)),
            (DeviceData::I8(d), DeviceData::I8(x)) => s.memcpy_dtod(x, &mut d.slice_mut(r)),
            (DeviceData::P20(d), DeviceData::P20(x)) | (DeviceData::P30(d), DeviceData::P30(x)) => {
                s.memcpy_dtod(x, &mut d.slice_mut(r))
            }
            _ => return Err(Error::Internal(format!("{what}: precisions differ"))),
        }
        .map_err(device_err(what))
    }

    fn copy(&self, dst: &mut CudaSpinor, src: &CudaSpinor) -> Result<()> {
        check_same("copy", src, dst)?;
        self.copy_impl(dst, src)
    }

    fn zero(&self, x: &mut CudaSpinor) -> Result<()> {
        let what = "memset";
        match &mut *x.data {
            DeviceData::F64(d) => self.stream.memset_zeros(d).map_err(device_err(what)),
            DeviceData::F32(d) => self.stream.memset_zeros(d).map_err(device_err(what)),
            DeviceData::I16(d) => self.stream.memset_zeros(d).map_err(device_err(what)),
            DeviceData::I8(d) => self.stream.memset_zeros(d).map_err(device_err(what)),
            DeviceData::I32(d) => self.stream.memset_zeros(d).map_err(device_err(what)),
            // All-zero words: exponent byte 0, a zero site.
            DeviceData::P20(d) | DeviceData::P30(d) => {
                self.stream.memset_zeros(d).map_err(device_err(what))
            }
        }
    }

    fn ax(&self, a: f64, x: &mut CudaSpinor) -> Result<()> {
        self.map("ax", None, None, Out::Y(x), [a, 0.0, 0.0, 0.0])
    }

    fn axpy(&self, a: f64, x: &CudaSpinor, y: &mut CudaSpinor) -> Result<()> {
        self.map("axpy", Some(x), None, Out::Y(y), [a, 0.0, 0.0, 0.0])
    }

    fn xpay(&self, x: &CudaSpinor, a: f64, y: &mut CudaSpinor) -> Result<()> {
        self.map("xpay", Some(x), None, Out::Y(y), [a, 0.0, 0.0, 0.0])
    }

    fn axpby(&self, a: f64, x: &CudaSpinor, b: f64, y: &mut CudaSpinor) -> Result<()> {
        self.map("axpby", Some(x), None, Out::Y(y), [a, 0.0, b, 0.0])
    }

    fn caxpy(&self, a: C64, x: &CudaSpinor, y: &mut CudaSpinor) -> Result<()> {
        self.map("caxpy", Some(x), None, Out::Y(y), [a.re, a.im, 0.0, 0.0])
    }

    fn cxpaypbz(
        &self,
        x: &CudaSpinor,
        a: C64,
        y: &CudaSpinor,
        b: C64,
        z: &mut CudaSpinor,
    ) -> Result<()> {
        self.map(
            "cxpaypbz",
            Some(x),
            Some(y),
            Out::Z(z),
            [a.re, a.im, b.re, b.im],
        )
    }

    fn axpy_many(&self, a: &[f64], x: &[&CudaSpinor], y: &mut CudaSpinor) -> Result<()> {
        self.axpy_many_impl(a, x, y)
    }

    fn xpay_into(
        &self,
        x: &CudaSpinor,
        a: f64,
        y: &CudaSpinor,
        out: &mut CudaSpinor,
    ) -> Result<()> {
        self.map(
            "xpay_into",
            Some(x),
            Some(y),
            Out::Z(out),
            [a, 0.0, 0.0, 0.0],
        )
    }

    fn axpy_norm2_pr(&self, a: f64, x: &CudaSpinor, y: &mut CudaSpinor) -> Result<(f64, f64)> {
        let r = self.reduce(
            "axpy_norm2_pr",
            x,
            None,
            ReduceOut::Write(y),
            [a, 0.0, 0.0, 0.0],
        )?;
        Ok((r[0], a * r[1]))
    }

    fn norm2(&self, x: &CudaSpinor) -> Result<f64> {
        Ok(self.reduce("norm2", x, None, ReduceOut::Read, [0.0; 4])?[0])
    }

    fn cdot(&self, x: &CudaSpinor, y: &CudaSpinor) -> Result<C64> {
        let r = self.reduce("cdot", x, Some(y), ReduceOut::Read, [0.0; 4])?;
        Ok(C64::new(r[0], r[1]))
    }

    fn cdot_norm2(&self, x: &CudaSpinor, y: &CudaSpinor) -> Result<(C64, f64)> {
        let r = self.reduce("cdot_norm2", x, Some(y), ReduceOut::Read, [0.0; 4])?;
        Ok((C64::new(r[0], r[1]), r[2]))
    }

    fn axpy_norm2(&self, a: f64, x: &CudaSpinor, y: &mut CudaSpinor) -> Result<f64> {
        Ok(self.reduce(
            "axpy_norm2",
            x,
            None,
            ReduceOut::Write(y),
            [a, 0.0, 0.0, 0.0],
        )?[0])
    }

    fn caxpy_norm2(&self, a: C64, x: &CudaSpinor, y: &mut CudaSpinor) -> Result<f64> {
        Ok(self.reduce(
            "caxpy_norm2",
            x,
            None,
            ReduceOut::Write(y),
            [a.re, a.im, 0.0, 0.0],
        )?[0])
    }

    fn xmy_norm2(&self, x: &CudaSpinor, y: &mut CudaSpinor) -> Result<f64> {
        Ok(self.reduce("xmy_norm2", x, None, ReduceOut::Write(y), [0.0; 4])?[0])
    }

    fn bicgstab_update(
        &self,
        alpha: C64,
        p: &CudaSpinor,
        omega: C64,
        s: &mut CudaSpinor,
        x: &mut CudaSpinor,
        t: &CudaSpinor,
        r_hat: &CudaSpinor,
    ) -> Result<(C64, f64)> {
        self.bicgstab_update_impl(alpha, p, omega, s, x, t, r_hat)
    }

    fn wilson_dslash(
        &self,
        out: &mut CudaSpinor,
        parity: Parity,
        gauge: &CudaGauge,
        inp: &CudaSpinor,
        dagger: bool,
        a: f64,
        x: Option<&CudaSpinor>,
    ) -> Result<()> {
        self.dslash_impl(out, parity, gauge, inp, dagger, a, x)
    }

    fn heavy_quark_residual2(&self, x: &CudaSpinor, r: &CudaSpinor) -> Result<f64> {
        self.heavy_quark_residual2_impl(x, r)
    }

    fn upload_staggered(
        &self,
        fat: &GaugeField,
        long: Option<&GaugeField>,
        precision: Precision,
        long_reconstruct: crate::long_links::LongReconstruct,
    ) -> Result<CudaStaggeredLinks> {
        self.upload_staggered_impl(fat, long, precision, long_reconstruct)
    }

    fn staggered_dslash(
        &self,
        out: &mut CudaSpinor,
        parity: Parity,
        links: &CudaStaggeredLinks,
        inp: &CudaSpinor,
        a: f64,
        x: Option<(f64, &CudaSpinor)>,
    ) -> Result<()> {
        self.staggered_dslash_impl(out, parity, links, inp, a, x)
    }

    fn upload_clover(
        &self,
        clover: &CloverField,
        inverse: &CloverField,
        precision: Precision,
    ) -> Result<CudaClover> {
        self.upload_clover_impl(clover, inverse, precision)
    }

    fn compute_clover(
        &self,
        lattice: &Arc<Lattice>,
        links: &crate::layout::HostGauge,
        c: f64,
        precisions: &[Precision],
        accept: &dyn Fn(&super::GaugeScan) -> bool,
    ) -> Result<Option<Vec<CudaClover>>> {
        self.compute_clover_impl(lattice, links, c, precisions, accept)
    }

    fn clover(
        &self,
        out: &mut CudaSpinor,
        parity: Parity,
        clover: &CudaClover,
        inp: &CudaSpinor,
        inverse: bool,
    ) -> Result<()> {
        self.clover_impl(out, parity, clover, inp, inverse)
    }

    fn wilson_clover_dslash(
        &self,
        out: &mut CudaSpinor,
        parity: Parity,
        gauge: &CudaGauge,
        clover: &CudaClover,
        inp: &CudaSpinor,
        dagger: bool,
        a: f64,
        form: CloverForm,
        x: Option<&CudaSpinor>,
    ) -> Result<()> {
        self.clover_dslash_impl(out, parity, gauge, clover, inp, dagger, a, form, x)
    }

    fn gamma5(&self, out: &mut CudaSpinor, inp: &CudaSpinor) -> Result<()> {
        check_same("gamma5", inp, out)?;
        self.gamma5_impl(out, inp)
    }

    /// Free device memory as the driver reports it (other processes on the
    /// GPU included), so the multi-mass policy sees what it can allocate.
    fn memory_available(&self) -> Option<usize> {
        // The pool's kept buffers are the library's to give back.
        let kept = self.pool.kept_bytes();
        self.ctx
            .mem_get_info()
            .ok()
            .map(|(free, _total)| free + kept)
    }
}

/// The second field of a reduction: read only, or updated in place.
pub(crate) enum ReduceOut<'a> {
    Read,
    Write(&'a mut CudaSpinor),
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

    /// Packed blocks hold the CPU's words per site (16 for 20-bit, 23 for
    /// 30-bit), and every block starts 16-byte aligned for the uint4 loads
    /// of 20-bit sites (core.cuh).
    #[test]
    fn packed_blocks_hold_the_cpu_words_per_site() {
        let stride = layout::padded_stride(6 * 4 * 8 * 10 / 2);
        assert_eq!(spinor_block_len(Precision::Packed20, stride), 16 * stride);
        assert_eq!(spinor_block_len(Precision::Packed30, stride), 23 * stride);
        assert_eq!(spinor_block_bytes(Precision::Packed20, stride), 64 * stride);
        assert_eq!(spinor_block_bytes(Precision::Packed30, stride), 92 * stride);
        for p in [Precision::Packed20, Precision::Packed30] {
            assert!(per_site(p));
            assert_eq!(spinor_block_bytes(p, stride) % 16, 0);
        }
        // Half: int16 values then one f32 norm per site.
        assert_eq!(spinor_block_bytes(Precision::Half, stride), 52 * stride);
        assert!(!per_site(Precision::Single));
    }

    #[test]
    fn out_of_range_ordinal_is_an_error_not_a_panic() {
        assert!(CudaBackend::new(1 << 20).is_err());
    }
}
