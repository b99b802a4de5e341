//! The device: its context and stream, the kernels compiled so far (from
//! the catalogue of kernel sources the backend hands it), the buffer pool,
//! the launch tuner and what the device is. The floor of the CUDA backend:
//! everything above launches kernels and takes memory through it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{CudaContext, CudaStream, DriverError};

use super::cache::{self, DiskCache};
use super::errors::device_err;
use super::launch::Tuner;
use super::memory::DeviceData;
use super::modules::{Builder, Catalogue, Kernel, Module, ModuleReport, Source};
use super::nvrtc;
use super::pool::{BufferPool, Pooled};
use super::staging::Staging;
use crate::error::{Error, Result};
use crate::precision::Precision;

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
    /// The PCI address, `domain << 16 | bus << 8 | device`: one GPU's
    /// identity whatever a rank's visible devices number it.
    pub pci: u64,
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

/// One device and what the backend keeps on it.
pub struct Device {
    pub(crate) stream: Arc<CudaStream>,
    /// The kernels of the modules loaded so far (when a context prepares
    /// its formats, or on first use), and what their loading reported.
    /// Behind `Arc`s that are never dropped while the device lives: the
    /// tuner's fast path keys a kernel by its address.
    kernels: Mutex<LoadedKernels>,
    builder: Builder,
    /// Device buffers of freed fields, for the next fields of their shape.
    pub(crate) pool: Arc<BufferPool>,
    /// Pinned buffers for the caller's arrays (`staging`), made on first use.
    pub(crate) staging: Mutex<Option<Staging>>,
    /// A second stream for the raw bytes of the next source
    /// (`import_each`), made on first use; ordered against `stream` by
    /// events, never by cudarc's per-field tracking (off).
    copy_stream: OnceLock<Arc<CudaStream>>,
    /// A stream of the highest priority for the edges of a cut lattice
    /// (`halo`), made on first use: their blocks are placed ahead of the
    /// interior's remaining ones, so the two run together.
    edge_stream: OnceLock<Arc<CudaStream>>,
    pub(crate) tuner: Tuner,
    /// Blocks of a kernel resident on the device at once, by (kernel
    /// address, block size): `resident_blocks`.
    residency: Mutex<HashMap<(usize, u32), u32>>,
    pub(crate) info: DeviceInfo,
    /// Every kernel source and the kernels it defines (`catalogue.rs`).
    catalogue: &'static Catalogue,
    // Dropped last: everything above lives in this context.
    pub(crate) ctx: Arc<CudaContext>,
}

impl Device {
    /// Opens device `ordinal` (nothing is compiled yet).
    pub(crate) fn start(
        ordinal: usize,
        nvrtc: &nvrtc::Nvrtc,
        catalogue: &'static Catalogue,
    ) -> Result<Device> {
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
        let pci = {
            use cudarc::driver::sys::CUdevice_attribute as A;
            let attribute = |a| {
                ctx.attribute(a)
                    .map(|v| v.max(0) as u64)
                    .map_err(no_device("device attributes"))
            };
            // Domains reach 32 bits (VMD), buses and devices 8.
            let domain = attribute(A::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID)?;
            let bus = attribute(A::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID)?;
            let dev = attribute(A::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID)?;
            (domain << 16) | ((bus & 0xff) << 8) | (dev & 0xff)
        };
        let (target, cubin) = nvrtc::target(cc, &nvrtc.supported_archs()?)?;
        let stream = ctx.new_stream().map_err(device_err("stream creation"))?;

        let disk = DiskCache::open(cache::default_dir());
        let builder = Builder {
            headers: catalogue.headers,
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
        let tuner = Tuner::new(disk.tune_path(&device_key));
        let info = DeviceInfo {
            ordinal,
            name,
            compute_capability: cc,
            multiprocessors,
            l2_bytes,
            pci,
            nvrtc_version: nvrtc.version()?,
            nvrtc_library: nvrtc.soname(),
            target,
            cache_dir: disk.dir().map(|d| d.to_path_buf()),
            tuned_entries_at_start: tuner.entries(),
        };
        Ok(Device {
            stream,
            kernels: Mutex::new(Default::default()),
            pool: Arc::default(),
            staging: Mutex::new(None),
            copy_stream: OnceLock::new(),
            edge_stream: OnceLock::new(),
            builder,
            tuner,
            residency: Mutex::new(HashMap::new()),
            info,
            catalogue,
            ctx,
        })
    }

    /// The catalogue of kernel sources the device compiles from.
    pub(crate) fn catalogue(&self) -> &'static [Source] {
        self.catalogue.sources
    }

    /// The module named `name` (`wilson_dslash_f64_r12`, `blas_f16`).
    pub(crate) fn module_named(&self, name: &str) -> Option<Module> {
        Module::named(self.catalogue.sources, name)
    }

    /// The module that defines kernel `name` (`Module::of_kernel`).
    pub(crate) fn module_of_kernel(&self, name: &str) -> Option<Module> {
        Module::of_kernel(self.catalogue.sources, name)
    }

    /// Compiles (or loads from the cache) `modules` not loaded yet, all at
    /// once in parallel threads.
    pub(crate) fn prepare_modules(&self, modules: &[Module]) -> Result<()> {
        let mut table = self.loaded()?;
        self.load_modules(&mut table, modules)
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

    /// `edge_stream`, made on first use.
    pub(crate) fn edge_stream(&self) -> Result<Arc<CudaStream>> {
        if let Some(s) = self.edge_stream.get() {
            return Ok(s.clone());
        }
        let what = device_err("edge stream creation");
        self.ctx.bind_to_thread().map_err(&what)?;
        let (_, greatest) = cudarc::driver::result::stream::get_priority_range().map_err(&what)?;
        let s = self.ctx.new_stream_with_priority(greatest).map_err(&what)?;
        Ok(self.edge_stream.get_or_init(|| s).clone())
    }

    /// The device, the compiler and what start-up compiled or loaded.
    pub(crate) fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The backend's stream (for timing in benchmarks).
    pub(crate) fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Registers and local (spill) bytes per thread of each loaded kernel
    /// whose name starts with `prefix`, from the driver.
    pub(crate) fn kernel_resources(&self, prefix: &str) -> Vec<(String, i32, i32)> {
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
    pub(crate) fn synchronize(&self) -> Result<()> {
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
    pub(crate) fn resident_blocks(&self, k: &Kernel, block: u32) -> Result<u32> {
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
    pub(crate) fn kernel(&self, name: &str) -> Result<Arc<Kernel>> {
        let mut table = self.loaded()?;
        if let Some(k) = table.0.get(name) {
            return Ok(k.clone());
        }
        let module = self
            .module_of_kernel(name)
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
    pub(crate) fn tuned_for_this_process_only(&self) -> usize {
        self.tuner.memory_only_entries()
    }

    /// The modules loaded so far, compiled or from the cache, in order.
    pub(crate) fn modules(&self) -> Vec<ModuleReport> {
        self.loaded().map(|t| t.1.clone()).unwrap_or_default()
    }

    /// A field's buffer of `len` elements of `precision`, zeroed: a freed
    /// one of that shape from the pool, else a new allocation (after
    /// freeing the pool's buffers if the device is out of memory).
    pub(crate) fn pooled(&self, precision: Precision, len: usize) -> Result<Pooled> {
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
        Ok(Pooled::new(data, self.pool.clone()))
    }

    /// Fields allocated on the device and fields served from freed
    /// buffers since the backend started.
    pub(crate) fn field_allocations(&self) -> (usize, usize) {
        self.pool.counts()
    }

    pub(crate) fn alloc(&self, precision: Precision, len: usize) -> Result<DeviceData> {
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
    pub(crate) fn alloc_links(&self, precision: Precision, len: usize) -> Result<DeviceData> {
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

    /// Free device memory as the driver reports it (other processes on the
    /// GPU included), so the multi-mass policy sees what it can allocate.
    pub(crate) fn memory_available(&self) -> Option<usize> {
        // The pool's kept buffers are the library's to give back.
        let kept = self.pool.kept_bytes();
        self.ctx
            .mem_get_info()
            .ok()
            .map(|(free, _total)| free + kept)
    }
}
