//! Building a module: a kernel source of the catalogue (`catalogue.rs`) with
//! the kernel headers, compiled by NVRTC for the device or loaded from the
//! disk cache, and its kernels loaded (the table of loaded kernels is the
//! device's, `device.rs`).
//!
//! Options: `kernels/options.txt` (the file `.ci/compile_kernels.py` uses
//! too), the target architecture, and `$LATSOL_NVRTC_OPTIONS` (extra options
//! separated by spaces, for experiments; they enter the cache key).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{CudaContext, CudaFunction, CudaModule};
use cudarc::nvrtc::Ptx;

use super::cache::{module_key, DiskCache};
use super::nvrtc::{Image, Nvrtc};
use crate::error::{Error, Result};

/// The kernel sources a device compiles from (`catalogue.rs`): the headers
/// every source may include, by include name, and the sources.
pub struct Catalogue {
    pub headers: &'static [(&'static str, &'static str)],
    pub sources: &'static [Source],
}

/// The options file shared with CI.
const OPTIONS: &str = include_str!("../../../../kernels/options.txt");

/// A kernel source file and the kernels it defines.
pub struct Source {
    pub name: &'static str,
    pub text: &'static str,
    pub kernels: fn() -> Vec<String>,
    /// Link reconstructions compiled as modules of their own (the source
    /// built with `-DLATSOL_ONLY_RECONSTRUCT=r`), so that a solve compiles
    /// the hopping terms of its links only; empty: the source is one module.
    pub reconstructs: &'static [u32],
}

/// One compiled unit: a source, or one reconstruct of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Module {
    pub source: &'static Source,
    pub reconstruct: Option<u32>,
}

impl PartialEq for Source {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}
impl Eq for Source {}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// The reconstruct a kernel name states (`…_r12`, `…_r12_dag`), if any.
fn reconstruct_of(kernel: &str) -> Option<u32> {
    kernel
        .split('_')
        .find_map(|w| w.strip_prefix('r').and_then(|n| n.parse().ok()))
}

impl Module {
    /// Every module of every source of `sources`.
    pub fn all(sources: &'static [Source]) -> impl Iterator<Item = Module> {
        sources.iter().flat_map(|source| {
            let split: Vec<Option<u32>> = if source.reconstructs.is_empty() {
                vec![None]
            } else {
                source.reconstructs.iter().map(|&r| Some(r)).collect()
            };
            split.into_iter().map(move |reconstruct| Module {
                source,
                reconstruct,
            })
        })
    }

    /// The module named `name` (`wilson_dslash_f64_r12`, `blas_f16`).
    pub fn named(sources: &'static [Source], name: &str) -> Option<Module> {
        Module::all(sources).find(|m| m.name() == name)
    }

    /// The module that defines kernel `name`: kernels with no reconstruct
    /// in their name (the clover site kernel) are in every module of their
    /// source, and found in the first.
    pub fn of_kernel(sources: &'static [Source], name: &str) -> Option<Module> {
        Module::all(sources).find(|m| m.kernels().iter().any(|k| k == name))
    }

    pub fn name(&self) -> String {
        match self.reconstruct {
            Some(r) => format!("{}_r{r}", self.source.name),
            None => self.source.name.to_string(),
        }
    }

    /// The kernels it defines.
    pub fn kernels(&self) -> Vec<String> {
        let all = (self.source.kernels)();
        match self.reconstruct {
            None => all,
            Some(r) => all
                .into_iter()
                .filter(|k| reconstruct_of(k).is_none_or(|kr| kr == r))
                .collect(),
        }
    }

    /// Its compile options beyond the shared ones.
    fn defines(&self) -> Vec<String> {
        self.reconstruct
            .map(|r| format!("-DLATSOL_ONLY_RECONSTRUCT={r}"))
            .into_iter()
            .collect()
    }
}

/// The options for a target, in the order they are passed.
pub fn options(arch_option: &str) -> Vec<String> {
    let mut o: Vec<String> = OPTIONS
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect();
    o.push(arch_option.to_string());
    if let Ok(extra) = std::env::var("LATSOL_NVRTC_OPTIONS") {
        o.extend(extra.split_whitespace().map(String::from));
    }
    o
}

/// A loaded kernel with what the launcher needs to know about it.
#[derive(Debug, Clone)]
pub struct Kernel {
    pub name: String,
    pub func: CudaFunction,
    /// Largest block the compiled kernel accepts.
    pub max_block: u32,
    /// Cache key of its module (prefixes tuning keys, so new code retunes).
    pub module_key: String,
    /// Launched with programmatic stream serialization (sm_90 and later):
    /// the kernel waits for its predecessor in the stream before anything
    /// else (kernels/core.cuh, `kernel_entry`).
    pub programmatic: bool,
}

/// Whether kernels are launched with programmatic stream serialization: on
/// sm_90 and later (every kernel waits for its predecessor first,
/// kernels/core.cuh `kernel_entry`); `LATSOL_PDL=0` turns it off (for
/// comparisons: docs/performance.md, "Small volumes").
fn programmatic_launches(arch: u32) -> bool {
    arch >= 90 && std::env::var("LATSOL_PDL").map_or(true, |v| v != "0")
}

/// How one module was obtained.
#[derive(Debug, Clone)]
pub struct ModuleReport {
    pub name: String,
    pub key: String,
    pub from_cache: bool,
    /// Seconds spent compiling (0 when loaded from the cache).
    pub compile_s: f64,
}

/// Where the kernels come from: the compiler, its target and the cache.
pub struct Builder {
    /// The headers of the catalogue the device was given.
    pub headers: &'static [(&'static str, &'static str)],
    pub nvrtc: Nvrtc,
    pub cache: DiskCache,
    pub arch_option: String,
    pub cubin: bool,
}

impl Builder {
    /// The target's compute capability as a number (90 for sm_90).
    fn arch(&self) -> u32 {
        let digits: String = self
            .arch_option
            .chars()
            .filter(char::is_ascii_digit)
            .collect();
        digits.parse().unwrap_or(0)
    }

    fn ext(&self) -> &'static str {
        if self.cubin {
            "cubin"
        } else {
            "ptx"
        }
    }

    /// The image of `module`, from the cache unless `fresh`.
    fn image(&self, module: &Module, fresh: bool) -> Result<(Vec<u8>, ModuleReport)> {
        let mut opts = options(&self.arch_option);
        opts.extend(module.defines());
        let src = module.source;
        let name = module.name();
        let key = module_key(src.text, self.headers, &opts, self.nvrtc.version()?);
        if !fresh {
            if let Some(bytes) = self.cache.load_module(&name, &key, self.ext()) {
                let report = ModuleReport {
                    name,
                    key,
                    from_cache: true,
                    compile_s: 0.0,
                };
                return Ok((bytes, report));
            }
        }
        let t = Instant::now();
        let image = self.nvrtc.compile(
            &format!("{}.cu", src.name),
            src.text,
            self.headers,
            &opts,
            self.cubin,
        )?;
        let compile_s = t.elapsed().as_secs_f64();
        self.cache
            .store_module(&name, &key, self.ext(), image.bytes());
        let bytes = match image {
            Image::Cubin(b) | Image::Ptx(b) => b,
        };
        let report = ModuleReport {
            name,
            key,
            from_cache: false,
            compile_s,
        };
        Ok((bytes, report))
    }

    /// Compiles (or loads from the cache) `modules`, in parallel threads,
    /// and loads their kernels into `ctx`. A cached image the driver
    /// refuses is compiled afresh.
    pub fn load(
        &self,
        ctx: &Arc<CudaContext>,
        modules: &[Module],
    ) -> Result<(HashMap<String, Kernel>, Vec<ModuleReport>)> {
        let images: Vec<Result<(Vec<u8>, ModuleReport)>> = std::thread::scope(|s| {
            let handles: Vec<_> = modules
                .iter()
                .map(|m| s.spawn(move || self.image(m, false)))
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(Error::Internal("kernel compilation panicked".into()))
                    })
                })
                .collect()
        });

        let mut kernels = HashMap::new();
        let mut reports = Vec::new();
        for (m, image) in modules.iter().zip(images) {
            let (bytes, mut report) = image?;
            let loaded = match load_module(ctx, bytes, self.cubin, &report.name) {
                Ok(l) => l,
                Err(_) if report.from_cache => {
                    let (bytes, fresh) = self.image(m, true)?;
                    report = fresh;
                    load_module(ctx, bytes, self.cubin, &report.name)?
                }
                Err(e) => return Err(e),
            };
            for name in m.kernels() {
                let func = loaded.load_function(&name).map_err(|e| {
                    Error::Device(format!("kernel {name} not found in {}: {e}", report.name))
                })?;
                let max_block = func
                    .max_threads_per_block()
                    .map_err(|e| Error::Device(format!("attributes of {name}: {e}")))?
                    as u32;
                let kernel = Kernel {
                    programmatic: programmatic_launches(self.arch()),
                    name: name.clone(),
                    func,
                    max_block,
                    module_key: report.key.clone(),
                };
                kernels.insert(name, kernel);
            }
            reports.push(report);
        }
        Ok((kernels, reports))
    }
}

fn load_module(
    ctx: &Arc<CudaContext>,
    mut bytes: Vec<u8>,
    cubin: bool,
    name: &str,
) -> Result<Arc<CudaModule>> {
    let image = if cubin {
        Ptx::from_binary(bytes)
    } else {
        // cuModuleLoadData wants NUL-terminated PTX text.
        if bytes.last() != Some(&0) {
            bytes.push(0);
        }
        Ptx::from_binary(bytes)
    };
    ctx.load_module(image)
        .map_err(|e| Error::Device(format!("cannot load the {name} kernels: {e}")))
}
