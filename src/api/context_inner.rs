//! What a context's fields share with it: the backend (CPU or CUDA), the
//! host threads of a CUDA context, the verbosity and the logger. `Gauge`,
//! `Clover` and `StaggeredLinks` hold an `Arc` of it, so a field never
//! reaches back into the `Context` that made it.

use std::any::Any;
use std::sync::Arc;

use super::params::{
    BackendChoice, GaugeParams, InitParams, Logger, ProgressFn, RanksParams, Verbosity,
};
use crate::backend::cpu::CpuBackend;
#[cfg(feature = "cuda")]
use crate::backend::cuda::CudaBackend;
use crate::backend::Backend;
use crate::comm::{RankGrid, Ranks, Reduction};
use crate::error::{Error, Result};

/// The backends a context can run on.
pub(crate) enum AnyBackend {
    Cpu(CpuBackend),
    #[cfg(feature = "cuda")]
    Cuda(Box<CudaBackend>),
}

pub(crate) struct ContextInner {
    pub(crate) backend: AnyBackend,
    /// The host-side threads of a CUDA context (layout conversions, the
    /// clover term); a CPU context uses its backend's pool.
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    host_pool: Option<rayon::ThreadPool>,
    /// The level logged (`Verbosity` as its index): changeable while the
    /// context lives (`set_verbosity`), unless `LATSOL_VERBOSITY` fixed it.
    verbosity: std::sync::atomic::AtomicU8,
    verbosity_from_env: bool,
    logger: Logger,
    on_progress: Option<ProgressFn>,
    /// The ranks a partitioned lattice spans; None on one process.
    ranks: Option<Ranks>,
}

impl ContextInner {
    /// A solver's progress: a log line at the verbose level, and the
    /// host's progress function whatever the verbosity.
    pub(crate) fn progress(&self, solver: &str, iteration: usize, residual: f64) {
        if Verbosity::Verbose <= self.verbosity() {
            self.log(
                Verbosity::Verbose,
                &format!("{solver}: iteration {iteration}, residual {residual:.3e}"),
            );
        }
        if let Some(f) = &self.on_progress {
            f(solver, iteration, residual);
        }
    }

    pub(crate) fn log(&self, level: Verbosity, msg: &str) {
        if level <= self.verbosity() && level != Verbosity::Silent {
            (self.logger)(level, msg);
        }
    }

    /// The level logged now.
    pub(crate) fn verbosity(&self) -> Verbosity {
        Verbosity::from_index(self.verbosity.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Logs at `v` from now on, unless `LATSOL_VERBOSITY` chose the level.
    pub(crate) fn set_verbosity(&self, v: Verbosity) {
        if !self.verbosity_from_env {
            self.verbosity
                .store(v as u8, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Whether `ok` holds on every rank.
    pub(crate) fn all_ok(&self, ok: bool) -> Result<bool> {
        match &self.ranks {
            Some(r) => r.comm.all_ok(ok),
            None => Ok(ok),
        }
    }

    /// How many collective verdicts have come out false on this rank (0
    /// on one process): a C face compares it before and after a call to
    /// know whether the other ranks have heard of the call's failure.
    pub(crate) fn failed_verdicts(&self) -> u64 {
        self.ranks.as_ref().map_or(0, |r| r.comm.failed_verdicts())
    }

    /// `result` made collective over the ranks (`Ranks::agree`): called
    /// by every public call after its local checks and before its first
    /// collective step, so a bad argument on one rank fails the call on
    /// all, and none waits in a collective another has left.
    pub(crate) fn agree<T>(&self, result: Result<T>) -> Result<T> {
        match &self.ranks {
            Some(r) => r.agree(result),
            None => result,
        }
    }

    /// Where this rank's part of extents `local` sits in the whole lattice:
    /// its first site's global coordinates and the global extents.
    /// The ranks this context spans (`None`: one process).
    pub(crate) fn ranks(&self) -> Option<&Ranks> {
        self.ranks.as_ref()
    }

    pub(crate) fn sum_over_ranks(&self, values: &mut [f64]) -> Result<()> {
        match &self.ranks {
            Some(r) => r.sum(values),
            None => Ok(()),
        }
    }

    pub(crate) fn place(&self, local: [usize; 4]) -> ([usize; 4], [usize; 4]) {
        match &self.ranks {
            Some(r) => {
                let (g, c) = (r.grid.grid(), r.grid.coords());
                (
                    [0, 1, 2, 3].map(|mu| c[mu] * local[mu]),
                    [0, 1, 2, 3].map(|mu| g[mu] * local[mu]),
                )
            }
            None => ([0; 4], local),
        }
    }

    /// Whether this rank holds the whole lattice's last time slice (where
    /// the anti-periodic sign lives).
    pub(crate) fn holds_last_t(&self) -> bool {
        self.ranks.as_ref().is_none_or(|r| r.holds_last(3))
    }

    /// The whole lattice's plaquette from this rank's links (collective).
    pub(crate) fn plaquette(&self, field: &crate::field::GaugeField) -> Result<[f64; 3]> {
        match &self.ranks {
            Some(r) if r.partitioned() => crate::comm::extend::plaquette(r, field),
            _ => Ok(field.plaquette()),
        }
    }

    /// The whole lattice's Polyakov loop in time from this rank's links
    /// (collective).
    pub(crate) fn polyakov_loop(
        &self,
        field: &crate::field::GaugeField,
    ) -> Result<num_complex::Complex64> {
        crate::comm::polyakov::polyakov_loop(self.ranks.as_ref(), field)
    }

    /// The clover field of this rank's sites from its links (collective:
    /// the leaves at the cut faces reach the neighbours' links).
    pub(crate) fn compute_clover_on_host(
        &self,
        links: &crate::field::GaugeField,
        c: f64,
    ) -> Result<crate::clover::CloverField> {
        match &self.ranks {
            Some(r) if r.partitioned() => {
                let ext = crate::comm::extend::extend(r, links, 1)?;
                let computed = crate::clover::compute::compute_at(
                    &ext.field,
                    links.lattice().clone(),
                    ext.offset,
                    c,
                );
                self.agree(computed)
            }
            _ => crate::clover::compute::compute(links, c),
        }
    }

    /// Refuses, on every rank, local lattices that differ between ranks.
    pub(crate) fn check_same_local(&self, local: [usize; 4]) -> Result<()> {
        match &self.ranks {
            Some(r) => r.check_same_local(local),
            None => Ok(()),
        }
    }

    /// The largest of `value` over the ranks.
    pub(crate) fn global_max(&self, value: f64) -> Result<f64> {
        let mut v = [value];
        if let Some(r) = &self.ranks {
            r.comm.max(&mut v)?;
        }
        Ok(v[0])
    }

    pub(crate) fn backend_name(&self) -> &'static str {
        match &self.backend {
            AnyBackend::Cpu(b) => b.name(),
            #[cfg(feature = "cuda")]
            AnyBackend::Cuda(b) => b.name(),
        }
    }

    /// Frees the device buffers kept for the next solves.
    pub(crate) fn release_workspaces(&self) {
        match &self.backend {
            AnyBackend::Cpu(b) => b.release_workspaces(),
            #[cfg(feature = "cuda")]
            AnyBackend::Cuda(b) => b.release_workspaces(),
        }
    }

    pub(crate) fn field_allocations(&self) -> (usize, usize) {
        match &self.backend {
            AnyBackend::Cpu(b) => b.field_allocations(),
            #[cfg(feature = "cuda")]
            AnyBackend::Cuda(b) => b.field_allocations(),
        }
    }

    /// Stores a gauge field on this context's backend.
    pub(crate) fn upload_gauge(
        &self,
        field: &crate::field::GaugeField,
        params: &GaugeParams,
        precision: crate::precision::Precision,
        reconstruct: crate::precision::Reconstruct,
    ) -> Result<Box<dyn Any + Send + Sync>> {
        fn upload<B: Backend>(
            b: &B,
            field: &crate::field::GaugeField,
            params: &GaugeParams,
            precision: crate::precision::Precision,
            reconstruct: crate::precision::Reconstruct,
        ) -> Result<Box<dyn Any + Send + Sync>>
        where
            B::Gauge: 'static,
        {
            let t = params.t_boundary;
            Ok(if params.gauge_fixed {
                Box::new(b.upload_gauge_temporal(field, t, precision, reconstruct)?)
            } else {
                Box::new(b.upload_gauge(field, t, precision, reconstruct)?)
            })
        }
        match &self.backend {
            AnyBackend::Cpu(b) => upload(b, field, params, precision, reconstruct),
            #[cfg(feature = "cuda")]
            AnyBackend::Cuda(b) => upload(b.as_ref(), field, params, precision, reconstruct),
        }
    }
}

/// A backend's stored fields, each boxed, if it made them.
fn boxed<T: Any + Send + Sync>(v: Option<Vec<T>>) -> Option<Vec<Box<dyn Any + Send + Sync>>> {
    v.map(|v| {
        v.into_iter()
            .map(|t| Box::new(t) as Box<dyn Any + Send + Sync>)
            .collect()
    })
}

/// What a backend's own gauge import gives: its scan and the stored
/// formats, boxed.
type ImportedGauge = (crate::backend::GaugeScan, Vec<Box<dyn Any + Send + Sync>>);

impl ContextInner {
    /// A caller's gauge array checked and stored by the backend itself
    /// (`Backend::import_gauge`), the stored fields boxed; `None` where the
    /// host path must do it.
    pub(crate) fn import_gauge(
        &self,
        lattice: &Arc<crate::lattice::Lattice>,
        host: &crate::layout::HostGauge,
        params: &GaugeParams,
        formats: &[(crate::precision::Precision, crate::precision::Reconstruct)],
        accept: &dyn Fn(&crate::backend::GaugeScan) -> bool,
    ) -> Result<Option<ImportedGauge>> {
        fn import<B: Backend>(
            b: &B,
            lattice: &Arc<crate::lattice::Lattice>,
            host: &crate::layout::HostGauge,
            params: &GaugeParams,
            formats: &[(crate::precision::Precision, crate::precision::Reconstruct)],
            accept: &dyn Fn(&crate::backend::GaugeScan) -> bool,
        ) -> Result<Option<ImportedGauge>>
        where
            B::Gauge: 'static,
        {
            let form = crate::backend::GaugeForm {
                t_boundary: params.t_boundary,
                temporal: params.gauge_fixed,
                sign_in_links: params.boundary_sign_in_links,
            };
            Ok(b.import_gauge(lattice, host, form, formats, accept)?
                .map(|(scan, links)| {
                    let boxed = links
                        .into_iter()
                        .map(|g| Box::new(g) as Box<dyn Any + Send + Sync>)
                        .collect();
                    (scan, boxed)
                }))
        }
        match &self.backend {
            AnyBackend::Cpu(b) => import(b, lattice, host, params, formats, accept),
            #[cfg(feature = "cuda")]
            AnyBackend::Cuda(b) => import(b.as_ref(), lattice, host, params, formats, accept),
        }
    }

    /// Staggered links stored by the backend itself
    /// (`Backend::import_staggered`), boxed; `None` where the host path
    /// must do it.
    pub(crate) fn import_staggered(
        &self,
        lattice: &Arc<crate::lattice::Lattice>,
        fat: &crate::layout::HostGauge,
        long: Option<&crate::layout::HostGauge>,
        fold: Option<crate::backend::PhaseFold>,
        formats: &[(
            crate::precision::Precision,
            crate::long_links::LongReconstruct,
        )],
    ) -> Result<Option<Vec<Box<dyn Any + Send + Sync>>>> {
        Ok(match &self.backend {
            AnyBackend::Cpu(b) => boxed(b.import_staggered(lattice, fat, long, fold, formats)?),
            #[cfg(feature = "cuda")]
            AnyBackend::Cuda(b) => boxed(b.import_staggered(lattice, fat, long, fold, formats)?),
        })
    }

    /// Stores staggered links on the backend (`Backend::upload_staggered`).
    pub(crate) fn upload_staggered(
        &self,
        fat: &crate::field::GaugeField,
        long: Option<&crate::field::GaugeField>,
        precision: crate::precision::Precision,
        long_reconstruct: crate::long_links::LongReconstruct,
    ) -> Result<Box<dyn Any + Send + Sync>> {
        Ok(match &self.backend {
            AnyBackend::Cpu(b) => {
                Box::new(b.upload_staggered(fat, long, precision, long_reconstruct)?)
            }
            #[cfg(feature = "cuda")]
            AnyBackend::Cuda(b) => {
                Box::new(b.upload_staggered(fat, long, precision, long_reconstruct)?)
            }
        })
    }

    /// The fat (and long) links of a periodic field on the backend
    /// (`Backend::fat_links`); `None` where the host path must do it.
    pub(crate) fn fat_links_on_backend(
        &self,
        links: &crate::field::GaugeField,
        c: &crate::fat_links::PathCoefficients,
        long: bool,
    ) -> Result<Option<crate::backend::FatAndLong>> {
        match &self.backend {
            AnyBackend::Cpu(b) => b.fat_links(links, c, long),
            #[cfg(feature = "cuda")]
            AnyBackend::Cuda(b) => b.fat_links(links, c, long),
        }
    }

    /// Gauge fixing's steps on the backend (`Backend::ovr_sweeps`).
    pub(crate) fn ovr_sweeps(
        &self,
        links: &crate::field::GaugeField,
        dirs: usize,
        relax_boost: f64,
    ) -> Result<Option<Box<dyn crate::backend::OvrSweeps + '_>>> {
        match &self.backend {
            AnyBackend::Cpu(b) => b.ovr_sweeps(links, dirs, relax_boost),
            #[cfg(feature = "cuda")]
            AnyBackend::Cuda(b) => b.ovr_sweeps(links, dirs, relax_boost),
        }
    }

    /// The U(3) projection on the backend (`Backend::unitarize_links`).
    pub(crate) fn unitarize_on_backend(
        &self,
        v: &crate::field::GaugeField,
        p: &crate::fat_links::UnitarizeParams,
    ) -> Result<Option<(crate::field::GaugeField, Vec<usize>)>> {
        match &self.backend {
            AnyBackend::Cpu(b) => b.unitarize_links(v, p),
            #[cfg(feature = "cuda")]
            AnyBackend::Cuda(b) => b.unitarize_links(v, p),
        }
    }

    /// This rank's links extended by `depth` layers of its neighbours'
    /// where the lattice is cut (collective), and where its own sites sit
    /// in the result; the field itself on one rank.
    pub(crate) fn extended(
        &self,
        links: &crate::field::GaugeField,
        depth: usize,
    ) -> Result<(crate::field::GaugeField, [usize; 4])> {
        match &self.ranks {
            Some(r) if r.partitioned() => {
                let ext = crate::comm::extend::extend(r, links, depth)?;
                Ok((ext.field, ext.offset))
            }
            _ => Ok((links.clone(), [0; 4])),
        }
    }

    /// Runs `f` on this context's threads: the CPU backend's pool, or the
    /// host pool of a CUDA context. Every parallel loop of the library runs
    /// inside one, so rayon's global pool is never started and a context's
    /// `num_threads` holds for all its work (issue 16).
    pub(crate) fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match &self.backend {
            AnyBackend::Cpu(b) => match &self.ranks {
                // The host's thread serves the MPI calls of the pool's.
                Some(r) => crate::comm::install(r.comm.as_ref(), b.pool(), f),
                None => b.install(f),
            },
            #[cfg(feature = "cuda")]
            AnyBackend::Cuda(_) => match &self.host_pool {
                Some(pool) => pool.install(f),
                // Not reached: a CUDA context is made with a host pool.
                None => f(),
            },
        }
    }

    /// A clover field computed from a caller's links and stored by the
    /// backend itself (`Backend::compute_clover`), boxed; `None` where the
    /// host path must do it.
    pub(crate) fn compute_clover(
        &self,
        lattice: &Arc<crate::lattice::Lattice>,
        links: &crate::layout::HostGauge,
        c: f64,
        precisions: &[crate::precision::Precision],
        accept: &dyn Fn(&crate::backend::GaugeScan) -> bool,
    ) -> Result<Option<Vec<Box<dyn Any + Send + Sync>>>> {
        Ok(match &self.backend {
            AnyBackend::Cpu(b) => boxed(b.compute_clover(lattice, links, c, precisions, accept)?),
            #[cfg(feature = "cuda")]
            AnyBackend::Cuda(b) => boxed(b.compute_clover(lattice, links, c, precisions, accept)?),
        })
    }

    /// Stores a clover field and its inverse on this context's backend.
    pub(crate) fn upload_clover(
        &self,
        clover: &crate::clover::CloverField,
        inverse: &crate::clover::CloverField,
        precision: crate::precision::Precision,
    ) -> Result<Box<dyn Any + Send + Sync>> {
        Ok(match &self.backend {
            AnyBackend::Cpu(b) => Box::new(b.upload_clover(clover, inverse, precision)?),
            #[cfg(feature = "cuda")]
            AnyBackend::Cuda(b) => Box::new(b.upload_clover(clover, inverse, precision)?),
        })
    }
}

impl ContextInner {
    /// Starts the backend asked for (`Auto`: CUDA if usable), with the
    /// host's logging.
    pub(crate) fn start(params: &InitParams) -> Result<ContextInner> {
        let logger: Logger = params
            .logger
            .clone()
            .unwrap_or_else(|| Arc::new(|_, msg: &str| eprintln!("latsol: {msg}")));
        // LATSOL_VERBOSITY (silent, summarize, verbose, debug) overrides the
        // host's choice, as QUDA's verbosity variable does: a C or Fortran
        // program's output can be raised without rebuilding it.
        let from_env = std::env::var("LATSOL_VERBOSITY")
            .ok()
            .and_then(|v| Verbosity::from_name(&v));
        let verbosity = from_env.unwrap_or(params.verbosity);
        let say = |level: Verbosity, msg: &str| {
            if level <= verbosity && verbosity != Verbosity::Silent {
                logger(level, msg);
            }
        };
        let ranks = params.ranks.as_ref().map(ranks_of).transpose()?;
        let cpu = || match &ranks {
            Some(r) => CpuBackend::on_ranks(threads_per_rank(params.num_threads, r), r.clone()),
            None => CpuBackend::new(params.num_threads),
        };
        let cuda = || open_cuda(params.device, ranks.as_ref());
        let backend = match params.backend {
            BackendChoice::Cpu => AnyBackend::Cpu(cpu()?),
            BackendChoice::Cuda => cuda()?,
            BackendChoice::Auto => match cuda() {
                Ok(b) => b,
                Err(e) => {
                    say(
                        Verbosity::Summarize,
                        &format!("CUDA not used ({e}); running on the CPU"),
                    );
                    AnyBackend::Cpu(cpu()?)
                }
            },
        };
        let host_pool = match backend {
            AnyBackend::Cpu(_) => None,
            #[cfg(feature = "cuda")]
            AnyBackend::Cuda(_) => Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(params.num_threads)
                    .thread_name(|i| format!("latsol-host-{i}"))
                    .build()
                    .map_err(|e| {
                        Error::Internal(format!("cannot start the host thread pool: {e}"))
                    })?,
            ),
        };
        let inner = ContextInner {
            backend,
            host_pool,
            verbosity: std::sync::atomic::AtomicU8::new(verbosity as u8),
            verbosity_from_env: from_env.is_some(),
            logger,
            on_progress: params.progress.clone(),
            ranks,
        };
        inner.log(
            Verbosity::Verbose,
            &format!("context started on the {} backend", inner.backend_name()),
        );
        Ok(inner)
    }
}

/// The CPU threads of a rank: as asked, or (0, the default) the node's
/// cores shared among the ranks on it, at least one each, so that ranks ×
/// threads fill the cores without oversubscribing them.
fn threads_per_rank(asked: usize, ranks: &Ranks) -> usize {
    if asked > 0 {
        return asked;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cores / ranks.comm.node_ranks()).max(1)
}

/// The ranks of a context: the grid checked against the communicator and
/// the map, every rank agreeing (a grid refused on one is refused on all).
fn ranks_of(p: &RanksParams) -> Result<Ranks> {
    let grid = RankGrid::new(p.grid, p.comm.size(), p.comm.rank(), &p.map);
    let ranks_ok = p.comm.all_ok(grid.is_ok())?;
    let grid = match (grid, ranks_ok) {
        (Err(e), _) => return Err(e),
        (Ok(_), false) => {
            return Err(Error::OtherRank(
                "another rank refused the grid of ranks (its status says why)".into(),
            ))
        }
        (Ok(g), true) => g,
    };
    Ok(Ranks {
        comm: p.comm.clone(),
        grid,
        reduction: Reduction::from_env_or(p.reduction),
    })
}

#[cfg(feature = "cuda")]
fn open_cuda(asked: Option<usize>, ranks: Option<&Ranks>) -> Result<AnyBackend> {
    use crate::comm::devices;
    let comm = ranks.map(|r| r.comm.as_ref());
    let (place, on_node) = comm.map_or((0, 1), |c| (c.node_rank(), c.node_ranks()));
    let share = devices::sharing_allowed();
    let opened = CudaBackend::device_count().and_then(|count| {
        let variable = std::env::var(devices::DEVICE_VARIABLE).ok();
        let ordinal = devices::choose(asked, variable.as_deref(), place, on_node, count, share)?;
        CudaBackend::new(ordinal)
    });
    // On many ranks the device each opened, or why not, agreed; then no
    // two ranks of a node on one device (unless allowed).
    let backend = match ranks {
        Some(r) => {
            let backend = r.agree(opened)?;
            r.agree(devices::check_exclusive(
                r.comm.as_ref(),
                backend.info().pci,
                share,
            ))?;
            backend.with_ranks(r.clone())
        }
        None => opened?,
    };
    Ok(AnyBackend::Cuda(Box::new(backend)))
}

#[cfg(not(feature = "cuda"))]
fn open_cuda(_device: Option<usize>, _ranks: Option<&Ranks>) -> Result<AnyBackend> {
    Err(Error::NoDevice(
        "this build has no CUDA backend (enable the `cuda` feature)".into(),
    ))
}
