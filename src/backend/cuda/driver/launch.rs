//! Launch geometry and the block-size tuner: on the first launch of a
//! kernel at a given number of threads, a few block sizes are timed with
//! CUDA events and the fastest is kept, in memory and in the disk cache
//! (`tune-<device>.txt`), so later starts launch at once. Reductions are not
//! tuned: their geometry fixes the order of summation (blas.rs).
//!
//! `LATSOL_TUNE=0` turns tuning off (the default block is used).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaStream, DeviceRepr, LaunchConfig, PushKernelArg};

use super::cache::{format_tune_table, parse_tune_table, write_atomic};
use super::errors::device_err;
use super::modules::Kernel;
use crate::error::Result;

/// Block sizes tried, a subset of those the kernel accepts.
pub const CANDIDATES: &[u32] = &[64, 128, 192, 256, 384, 512, 768, 1024];

/// Launches per timed candidate (after one warm-up launch).
const TIMED_LAUNCHES: usize = 4;

/// Blocks needed to cover `threads` threads.
pub fn grid_for(threads: usize, block: u32) -> Result<u32> {
    let g = threads.div_ceil(block as usize);
    u32::try_from(g.max(1)).map_err(|_| {
        crate::error::Error::Unsupported(format!("{threads} threads exceed one launch's grid"))
    })
}

/// The block sizes worth timing for a kernel that accepts `max_block`
/// threads per block and runs `threads` threads in all (blocks much larger
/// than the work are pointless).
pub fn candidates(max_block: u32, threads: usize) -> Vec<u32> {
    let mut c: Vec<u32> = CANDIDATES
        .iter()
        .copied()
        .filter(|&b| b <= max_block && (b as usize) < 2 * threads.max(32))
        .collect();
    if c.is_empty() {
        c.push(CANDIDATES[0].min(max_block));
    }
    c
}

/// The key of a tuned entry: new kernel code or another size retunes.
pub fn tune_key(kernel: &Kernel, threads: usize) -> String {
    // Programmatic launches overlap the kernel with its neighbours, which
    // can change the best block: tuned apart (`LATSOL_PDL=0` comparisons).
    let mode = if kernel.programmatic { ":pdl" } else { "" };
    format!(
        "{}:{}:{}{mode}{}",
        kernel.module_key,
        kernel.name,
        threads,
        prefetch_tag()
    )
}

/// Entries timed with the hopping terms' link prefetch forced
/// (`LATSOL_LINK_PREFETCH=0|1`, an experiment switch) are kept apart from
/// the default's, as `LATSOL_PDL=0` entries are.
fn prefetch_tag() -> &'static str {
    static TAG: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();
    TAG.get_or_init(|| match std::env::var("LATSOL_LINK_PREFETCH").as_deref() {
        Ok("0") => ":prefetch0",
        Ok("1") => ":prefetch1",
        _ => "",
    })
}

/// Tuned block sizes, shared by all launches of one backend.
pub struct Tuner {
    table: Mutex<BTreeMap<String, u32>>,
    /// The same answers by (kernel address, threads): no allocation on
    /// the launch path once a size is known.
    fast: Mutex<HashMap<(usize, usize), u32>>,
    /// Chosen forms of kernels that come in several (`variant_for`), by
    /// (kernel address, threads).
    variants: Mutex<HashMap<(usize, usize), u32>>,
    /// Entries answered in this process but not written to the table file
    /// (`keep_in_memory_only`): choices timed in a way a later start should
    /// not inherit.
    memory_only: Mutex<BTreeSet<String>>,
    path: Option<PathBuf>,
    enabled: bool,
}

impl Tuner {
    /// Reads the table at `path`, if any.
    pub fn new(path: Option<PathBuf>) -> Tuner {
        let enabled = std::env::var("LATSOL_TUNE")
            .map(|v| v != "0")
            .unwrap_or(true);
        let table = path
            .as_ref()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .map(|t| parse_tune_table(&t))
            .unwrap_or_default();
        Tuner {
            table: Mutex::new(table),
            fast: Mutex::new(HashMap::new()),
            variants: Mutex::new(HashMap::new()),
            memory_only: Mutex::new(BTreeSet::new()),
            path,
            enabled,
        }
    }

    /// Keeps the entries `keys` for this process only: they are answered as
    /// before but left out of the table file (rewritten now), so that a
    /// later start times them again. For choices timed on fields other than
    /// those intended (the small-volume forms, where the copies out of L2
    /// could not be made: dslash_forms.rs, `launch_choice`).
    pub fn keep_in_memory_only(&self, keys: &[String]) {
        let mut memory_only = self.memory_only.lock().expect("tune table poisoned");
        memory_only.extend(keys.iter().cloned());
        let table = self.table.lock().expect("tune table poisoned");
        self.write(&table, &memory_only);
    }

    /// Entries kept for this process only (`keep_in_memory_only`), for reports.
    pub fn memory_only_entries(&self) -> usize {
        let table = self
            .table
            .lock()
            .map(|t| t.keys().cloned().collect::<Vec<_>>());
        let memory_only = self.memory_only.lock();
        match (table, memory_only) {
            (Ok(keys), Ok(m)) => keys.iter().filter(|k| m.contains(*k)).count(),
            _ => 0,
        }
    }

    /// Writes `table` without the `memory_only` entries to the table file.
    fn write(&self, table: &BTreeMap<String, u32>, memory_only: &BTreeSet<String>) {
        let Some(p) = &self.path else { return };
        let kept: BTreeMap<String, u32> = table
            .iter()
            .filter(|(k, _)| !memory_only.contains(*k))
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        // A table that cannot be written only means tuning again later.
        let _ = write_atomic(p, format_tune_table(&kept).as_bytes());
    }

    /// Entries known (for reports).
    pub fn entries(&self) -> usize {
        self.table.lock().map(|t| t.len()).unwrap_or(0)
    }

    /// The block size for `kernel` at `threads` threads, tuned by `time`
    /// (milliseconds per launch at a block size) on first use.
    pub fn block_for(
        &self,
        kernel: &Kernel,
        threads: usize,
        default: u32,
        time: impl FnMut(u32) -> Result<f32>,
    ) -> Result<u32> {
        remembered(&self.fast, kernel, threads, || {
            let cands = candidates(kernel.max_block, threads);
            self.block(
                &tune_key(kernel, threads),
                default.min(kernel.max_block),
                &cands,
                time,
            )
        })
    }

    /// Which of `count` forms of a kernel to launch at `threads` threads
    /// (0 the first, the default), timed by `time` (milliseconds per launch
    /// of form v, each at its own best block) on first use and kept with
    /// the block sizes; `kernel` names the choice.
    pub fn variant_for(
        &self,
        kernel: &Kernel,
        threads: usize,
        count: u32,
        time: impl FnMut(u32) -> Result<f32>,
    ) -> Result<u32> {
        remembered(&self.variants, kernel, threads, || {
            self.form(&format!("{}:form", tune_key(kernel, threads)), count, time)
        })
    }

    /// The form for `key` among `count`: the stored one, else the fastest
    /// as timed by `time`, else the first. Stored one-based: the table keeps
    /// positive numbers only.
    fn form(&self, key: &str, count: u32, mut time: impl FnMut(u32) -> Result<f32>) -> Result<u32> {
        let forms: Vec<u32> = (1..=count).collect();
        Ok(self.block(key, 1, &forms, |f| time(f - 1))? - 1)
    }

    /// The block size for `key`: the stored one, else the fastest of
    /// `cands` as timed by `time` (milliseconds per launch), else `default`.
    pub fn block(
        &self,
        key: &str,
        default: u32,
        cands: &[u32],
        mut time: impl FnMut(u32) -> Result<f32>,
    ) -> Result<u32> {
        if let Some(&b) = self.table.lock().expect("tune table poisoned").get(key) {
            // An entry the kernel can no longer run (its launch bound
            // changed since it was stored) is tuned again; the default (where
            // nothing could be timed) is kept.
            if cands.contains(&b) || b == default {
                return Ok(b);
            }
        }
        if !self.enabled {
            return Ok(default);
        }
        let mut best: Option<(f32, u32)> = None;
        for &b in cands {
            // A candidate the kernel cannot run (resources) is skipped.
            if let Ok(t) = time(b) {
                if best.is_none_or(|(bt, _)| t < bt) {
                    best = Some((t, b));
                }
            }
        }
        let mut memory_only = self.memory_only.lock().expect("tune table poisoned");
        let block = match best {
            Some((_, b)) => b,
            None => {
                // No candidate could be timed (a failed launch, or timing
                // refused, as while a stream is captured into a graph): the
                // default for this process, not a choice for later starts.
                memory_only.insert(key.to_string());
                default
            }
        };
        let mut table = self.table.lock().expect("tune table poisoned");
        table.insert(key.to_string(), block);
        self.write(&table, &memory_only);
        Ok(block)
    }
}

/// The answer for (`kernel`, `threads`) from `map`, else `make`'s, kept:
/// no allocation on the launch path once an answer is known. The key is
/// the kernel's address: stable, as the backend keeps every kernel in an
/// `Arc` for its whole life (`Device::kernel`, driver/device.rs).
fn remembered(
    map: &Mutex<HashMap<(usize, usize), u32>>,
    kernel: &Kernel,
    threads: usize,
    make: impl FnOnce() -> Result<u32>,
) -> Result<u32> {
    let key = (kernel as *const Kernel as usize, threads);
    if let Some(&v) = map.lock().expect("tune table poisoned").get(&key) {
        return Ok(v);
    }
    let v = make()?;
    map.lock().expect("tune table poisoned").insert(key, v);
    Ok(v)
}

/// Launches `kernel` with one by-value parameter struct.
pub fn launch<P: DeviceRepr>(
    stream: &Arc<CudaStream>,
    kernel: &Kernel,
    grid: u32,
    block: u32,
    params: &P,
) -> Result<()> {
    let cfg = LaunchConfig {
        grid_dim: (grid, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    };
    if kernel.programmatic {
        return launch_programmatic(stream, kernel, &cfg, params);
    }
    // SAFETY: every kernel of kernels/ takes exactly one parameter struct
    // whose layout `P` mirrors (checked by static_asserts on the C side and
    // size tests here); the pointers in it are live device allocations.
    unsafe { stream.launch_builder(&kernel.func).arg(params).launch(cfg) }
        .map_err(device_err(&format!("launch of {}", kernel.name)))?;
    Ok(())
}

/// Launches `kernel` with programmatic stream serialization: it may be
/// placed on the device while the previous kernel of the stream finishes, and
/// waits for it before anything else (kernels/core.cuh, `kernel_entry`).
/// Through the driver: cudarc's launcher sets no launch attributes.
fn launch_programmatic<P: DeviceRepr>(
    stream: &Arc<CudaStream>,
    kernel: &Kernel,
    cfg: &LaunchConfig,
    params: &P,
) -> Result<()> {
    use cudarc::driver::sys;
    // SAFETY: zeroed is a valid bit pattern for this plain C union.
    let mut value: sys::CUlaunchAttributeValue = unsafe { std::mem::zeroed() };
    value.programmaticStreamSerializationAllowed = 1;
    let mut attr = sys::CUlaunchAttribute {
        id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
        pad: [0; 4],
        value,
    };
    let config = sys::CUlaunchConfig {
        gridDimX: cfg.grid_dim.0,
        gridDimY: cfg.grid_dim.1,
        gridDimZ: cfg.grid_dim.2,
        blockDimX: cfg.block_dim.0,
        blockDimY: cfg.block_dim.1,
        blockDimZ: cfg.block_dim.2,
        sharedMemBytes: cfg.shared_mem_bytes,
        hStream: stream.cu_stream(),
        attrs: &mut attr,
        numAttrs: 1,
    };
    stream
        .context()
        .bind_to_thread()
        .map_err(device_err("binding the context"))?;
    let mut arg = params as *const P as *mut std::ffi::c_void;
    // SAFETY: as in `launch`: one by-value parameter struct that `P` mirrors,
    // read by the driver before cuLaunchKernelEx returns; the function and
    // stream belong to the context current on this thread.
    unsafe {
        sys::cuLaunchKernelEx(
            &config,
            kernel.func.cu_function(),
            &mut arg,
            std::ptr::null_mut(),
        )
    }
    .result()
    .map_err(device_err(&format!("launch of {}", kernel.name)))?;
    Ok(())
}

/// Milliseconds per launch of `run`, timed with events after a warm-up.
pub fn time_launches(stream: &Arc<CudaStream>, run: impl FnMut() -> Result<()>) -> Result<f32> {
    time_launches_n(stream, TIMED_LAUNCHES, run)
}

/// As `time_launches`, over `launches` launches (more where two choices
/// differ by less than the noise of a few short launches).
pub fn time_launches_n(
    stream: &Arc<CudaStream>,
    launches: usize,
    mut run: impl FnMut() -> Result<()>,
) -> Result<f32> {
    let ctx = stream.context();
    let ev = || ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT));
    let (start, end) = (
        ev().map_err(device_err("event"))?,
        ev().map_err(device_err("event"))?,
    );
    run()?;
    start.record(stream).map_err(device_err("event record"))?;
    for _ in 0..launches {
        run()?;
    }
    end.record(stream).map_err(device_err("event record"))?;
    let ms = start.elapsed_ms(&end).map_err(device_err("event timing"))?;
    Ok(ms / launches.max(1) as f32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_covers_every_thread() {
        assert_eq!(grid_for(1000, 128).unwrap(), 8);
        assert_eq!(grid_for(1024, 128).unwrap(), 8);
        assert_eq!(grid_for(1025, 128).unwrap(), 9);
        assert_eq!(grid_for(0, 128).unwrap(), 1);
        for threads in [1usize, 31, 4096, 1 << 20] {
            for b in CANDIDATES {
                let g = grid_for(threads, *b).unwrap() as usize;
                assert!(g * (*b as usize) >= threads && (g - 1) * (*b as usize) < threads.max(1));
            }
        }
        assert!(grid_for(usize::MAX / 2, 64).is_err());
    }

    #[test]
    fn candidates_respect_the_kernel_limit_and_the_size() {
        assert_eq!(candidates(256, 1 << 20), vec![64, 128, 192, 256]);
        assert_eq!(candidates(1024, 100), vec![64, 128, 192]);
        assert_eq!(candidates(1024, 1), vec![64]);
        assert_eq!(candidates(32, 1 << 20), vec![32]);
    }

    #[test]
    fn stored_entries_are_used_without_timing() {
        let t = Tuner {
            table: Mutex::new(BTreeMap::from([("k".to_string(), 192)])),
            fast: Mutex::new(HashMap::new()),
            variants: Mutex::new(HashMap::new()),
            memory_only: Mutex::new(BTreeSet::new()),
            path: None,
            enabled: true,
        };
        let b = t
            .block("k", 128, &[64, 192], |_| panic!("must not time"))
            .unwrap();
        assert_eq!(b, 192);
        let b = t
            .block("new", 128, &[64, 256], |b| {
                Ok(if b == 256 { 1.0 } else { 2.0 })
            })
            .unwrap();
        assert_eq!(b, 256);
        assert_eq!(t.entries(), 2);
    }

    #[test]
    fn memory_only_entries_stay_out_of_the_table_file() {
        let dir = std::env::temp_dir().join(format!("latsol-tune-test-{}", std::process::id()));
        let path = dir.join("tune.txt");
        let t = Tuner {
            enabled: true,
            ..Tuner::new(Some(path.clone()))
        };
        let time = |b: u32| Ok(if b == 192 { 1.0 } else { 2.0 });
        assert_eq!(t.block("warm", 128, &[64, 192], time).unwrap(), 192);
        assert_eq!(t.block("cold", 128, &[64, 192], time).unwrap(), 192);
        t.keep_in_memory_only(&["warm".to_string()]);
        // Still answered here, without timing; gone from the file.
        assert_eq!(
            t.block("warm", 128, &[64, 192], |_| panic!("timed again"))
                .unwrap(),
            192
        );
        assert_eq!(t.memory_only_entries(), 1);
        let on_disk = parse_tune_table(&std::fs::read_to_string(&path).unwrap());
        assert_eq!(on_disk.keys().collect::<Vec<_>>(), ["cold"]);
        // A later entry's write leaves it out too.
        assert_eq!(t.block("later", 128, &[64, 192], time).unwrap(), 192);
        let on_disk = parse_tune_table(&std::fs::read_to_string(&path).unwrap());
        assert_eq!(on_disk.keys().collect::<Vec<_>>(), ["cold", "later"]);
        // No candidate timed: the default, for this process only.
        let failed = |_| Err(crate::error::Error::Internal("no timing".into()));
        assert_eq!(t.block("failed", 128, &[64, 192], failed).unwrap(), 128);
        assert_eq!(
            t.block("failed", 128, &[64, 192], |_| panic!("timed again"))
                .unwrap(),
            128
        );
        let on_disk = parse_tune_table(&std::fs::read_to_string(&path).unwrap());
        assert_eq!(on_disk.keys().collect::<Vec<_>>(), ["cold", "later"]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn forms_survive_the_table_file() {
        let t = Tuner {
            enabled: true,
            ..Tuner::new(None)
        };
        let fastest_first = t.form("a", 2, |f| Ok(if f == 0 { 1.0 } else { 2.0 }));
        let fastest_second = t.form("b", 2, |f| Ok(if f == 1 { 1.0 } else { 2.0 }));
        assert_eq!((fastest_first.unwrap(), fastest_second.unwrap()), (0, 1));
        // Written and read back (a later start): both kept, neither retimed.
        let text = format_tune_table(&t.table.lock().unwrap());
        let again = Tuner {
            table: Mutex::new(parse_tune_table(&text)),
            ..Tuner::new(None)
        };
        assert_eq!(again.form("a", 2, |_| panic!("timed again")).unwrap(), 0);
        assert_eq!(again.form("b", 2, |_| panic!("timed again")).unwrap(), 1);
    }
}
