//! The embedded kernel sources (`kernels/`), their compilation by NVRTC for
//! the device (or their loading from the disk cache), and the table of
//! kernels the backend launches.
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
use crate::precision::Precision;

/// Headers every kernel source may include, by include name.
pub const HEADERS: &[(&str, &str)] = &[
    ("core.cuh", include_str!("../../../kernels/core.cuh")),
    (
        "wilson_dslash.cuh",
        include_str!("../../../kernels/wilson_dslash.cuh"),
    ),
    ("blas.cuh", include_str!("../../../kernels/blas.cuh")),
    ("clover.cuh", include_str!("../../../kernels/clover.cuh")),
    (
        "staggered_dslash.cuh",
        include_str!("../../../kernels/staggered_dslash.cuh"),
    ),
    (
        "staggered_blas.cuh",
        include_str!("../../../kernels/staggered_blas.cuh"),
    ),
];

/// The options file shared with CI.
const OPTIONS: &str = include_str!("../../../kernels/options.txt");

/// A kernel source file and the kernels it defines.
pub struct Source {
    pub name: &'static str,
    pub text: &'static str,
    pub kernels: fn() -> Vec<String>,
    /// Compiled on the first launch of one of its kernels rather than at
    /// start: operators a context may never use (the clover term), so that
    /// they cost a Wilson-only program nothing.
    pub lazy: bool,
}

/// Every module; compiled in parallel threads at the first start, so the
/// hopping term and the vector algebra are one module per storage format
/// rather than one module for all (the first start takes as long as the
/// slowest module, not their sum).
pub const SOURCES: &[Source] = &[
    Source {
        name: "wilson_dslash_f64",
        text: include_str!("../../../kernels/wilson_dslash_f64.cu"),
        kernels: || super::dslash::kernel_names(Precision::Double),
        lazy: false,
    },
    Source {
        name: "wilson_dslash_f32",
        text: include_str!("../../../kernels/wilson_dslash_f32.cu"),
        kernels: || super::dslash::kernel_names(Precision::Single),
        lazy: false,
    },
    Source {
        name: "wilson_dslash_f16",
        text: include_str!("../../../kernels/wilson_dslash_f16.cu"),
        kernels: || super::dslash::kernel_names(Precision::Half),
        lazy: false,
    },
    Source {
        name: "wilson_dslash_f8",
        text: include_str!("../../../kernels/wilson_dslash_f8.cu"),
        kernels: || super::dslash::kernel_names(Precision::Quarter),
        lazy: false,
    },
    Source {
        name: "wilson_dslash_p20",
        text: include_str!("../../../kernels/wilson_dslash_p20.cu"),
        kernels: || super::dslash::kernel_names(Precision::Packed20),
        lazy: false,
    },
    Source {
        name: "wilson_dslash_p30",
        text: include_str!("../../../kernels/wilson_dslash_p30.cu"),
        kernels: || super::dslash::kernel_names(Precision::Packed30),
        lazy: false,
    },
    Source {
        name: "wilson_clover_f64",
        text: include_str!("../../../kernels/wilson_clover_f64.cu"),
        kernels: || super::clover::kernel_names(Precision::Double),
        lazy: true,
    },
    Source {
        name: "wilson_clover_f32",
        text: include_str!("../../../kernels/wilson_clover_f32.cu"),
        kernels: || super::clover::kernel_names(Precision::Single),
        lazy: true,
    },
    Source {
        name: "wilson_clover_f16",
        text: include_str!("../../../kernels/wilson_clover_f16.cu"),
        kernels: || super::clover::kernel_names(Precision::Half),
        lazy: true,
    },
    Source {
        name: "wilson_clover_f8",
        text: include_str!("../../../kernels/wilson_clover_f8.cu"),
        kernels: || super::clover::kernel_names(Precision::Quarter),
        lazy: true,
    },
    Source {
        name: "wilson_clover_p20",
        text: include_str!("../../../kernels/wilson_clover_p20.cu"),
        kernels: || super::clover::kernel_names(Precision::Packed20),
        lazy: true,
    },
    Source {
        name: "wilson_clover_p30",
        text: include_str!("../../../kernels/wilson_clover_p30.cu"),
        kernels: || super::clover::kernel_names(Precision::Packed30),
        lazy: true,
    },
    Source {
        name: "staggered_dslash",
        text: include_str!("../../../kernels/staggered_dslash.cu"),
        kernels: || super::staggered::kernel_names(Precision::Double),
        lazy: true,
    },
    Source {
        name: "staggered_f16",
        text: include_str!("../../../kernels/staggered_f16.cu"),
        kernels: || super::staggered::kernel_names(Precision::Half),
        lazy: true,
    },
    Source {
        name: "staggered_f8",
        text: include_str!("../../../kernels/staggered_f8.cu"),
        kernels: || super::staggered::kernel_names(Precision::Quarter),
        lazy: true,
    },
    Source {
        name: "blas_f64",
        text: include_str!("../../../kernels/blas_f64.cu"),
        kernels: || super::blas::kernel_names(Precision::Double),
        lazy: false,
    },
    Source {
        name: "blas_f32",
        text: include_str!("../../../kernels/blas_f32.cu"),
        kernels: || super::blas::kernel_names(Precision::Single),
        lazy: false,
    },
    Source {
        name: "blas_f16",
        text: include_str!("../../../kernels/blas_f16.cu"),
        kernels: || super::blas::kernel_names(Precision::Half),
        lazy: false,
    },
    Source {
        name: "blas_f8",
        text: include_str!("../../../kernels/blas_f8.cu"),
        kernels: || super::blas::kernel_names(Precision::Quarter),
        lazy: false,
    },
    Source {
        name: "blas_p20",
        text: include_str!("../../../kernels/blas_p20.cu"),
        kernels: || super::blas::kernel_names(Precision::Packed20),
        lazy: false,
    },
    Source {
        name: "blas_p30",
        text: include_str!("../../../kernels/blas_p30.cu"),
        kernels: || super::blas::kernel_names(Precision::Packed30),
        lazy: false,
    },
];

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
}

/// How one module was obtained at start.
#[derive(Debug, Clone)]
pub struct ModuleReport {
    pub name: &'static str,
    pub key: String,
    pub from_cache: bool,
    /// Seconds spent compiling (0 when loaded from the cache).
    pub compile_s: f64,
}

/// Where the kernels come from: the compiler, its target and the cache.
pub struct Builder {
    pub nvrtc: Nvrtc,
    pub cache: DiskCache,
    pub arch_option: String,
    pub cubin: bool,
}

impl Builder {
    fn ext(&self) -> &'static str {
        if self.cubin {
            "cubin"
        } else {
            "ptx"
        }
    }

    /// The module image of `src`, from the cache unless `fresh`.
    fn image(&self, src: &Source, opts: &[String], fresh: bool) -> Result<(Vec<u8>, ModuleReport)> {
        let key = module_key(src.text, HEADERS, opts, self.nvrtc.version()?);
        if !fresh {
            if let Some(bytes) = self.cache.load_module(src.name, &key, self.ext()) {
                let report = ModuleReport {
                    name: src.name,
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
            HEADERS,
            opts,
            self.cubin,
        )?;
        let compile_s = t.elapsed().as_secs_f64();
        self.cache
            .store_module(src.name, &key, self.ext(), image.bytes());
        let bytes = match image {
            Image::Cubin(b) | Image::Ptx(b) => b,
        };
        let report = ModuleReport {
            name: src.name,
            key,
            from_cache: false,
            compile_s,
        };
        Ok((bytes, report))
    }

    /// Compiles (or loads from the cache) every source that is not lazy,
    /// in parallel threads, and loads its kernels into `ctx`.
    pub fn load_all(
        &self,
        ctx: &Arc<CudaContext>,
    ) -> Result<(HashMap<String, Kernel>, Vec<ModuleReport>)> {
        let eager: Vec<&Source> = SOURCES.iter().filter(|s| !s.lazy).collect();
        self.load(ctx, &eager)
    }

    /// The lazy source that defines kernel `name`, if any.
    pub fn lazy_source_of(name: &str) -> Option<&'static Source> {
        SOURCES
            .iter()
            .filter(|s| s.lazy)
            .find(|s| (s.kernels)().iter().any(|k| k == name))
    }

    /// Compiles (or loads from the cache) `sources`, in parallel threads,
    /// and loads their kernels into `ctx`. A cached image the driver
    /// refuses is compiled afresh.
    pub fn load(
        &self,
        ctx: &Arc<CudaContext>,
        sources: &[&Source],
    ) -> Result<(HashMap<String, Kernel>, Vec<ModuleReport>)> {
        let opts = options(&self.arch_option);
        let images: Vec<Result<(Vec<u8>, ModuleReport)>> = std::thread::scope(|s| {
            let handles: Vec<_> = sources
                .iter()
                .map(|src| {
                    let opts = &opts;
                    s.spawn(move || self.image(src, opts, false))
                })
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
        for (src, image) in sources.iter().zip(images) {
            let (bytes, mut report) = image?;
            let module = match load_module(ctx, bytes, self.cubin, src.name) {
                Ok(m) => m,
                Err(_) if report.from_cache => {
                    let (bytes, fresh) = self.image(src, &opts, true)?;
                    report = fresh;
                    load_module(ctx, bytes, self.cubin, src.name)?
                }
                Err(e) => return Err(e),
            };
            for name in (src.kernels)() {
                let func = module.load_function(&name).map_err(|e| {
                    Error::Device(format!("kernel {name} not found in {}: {e}", src.name))
                })?;
                let max_block = func
                    .max_threads_per_block()
                    .map_err(|e| Error::Device(format!("attributes of {name}: {e}")))?
                    as u32;
                let kernel = Kernel {
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
