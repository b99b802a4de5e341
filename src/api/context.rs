//! `Context`: the backend a host program talks to. Several contexts may live
//! at once, in different threads; they share nothing.

use std::any::Any;
use std::sync::Arc;

use super::clover::{Clover, CloverParams, CloverSource};
use super::gauge::Gauge;
use super::multi::{self, MultiMassPolicy, MultiResult};
use super::params::{
    BackendChoice, DslashType, GaugeParams, InitParams, InvertParams, InvertResult, Logger,
    OperatorKind, ProgressFn, SystemForm, Verbosity,
};
use crate::backend::cpu::CpuBackend;
#[cfg(feature = "cuda")]
use crate::backend::cuda::CudaBackend;
use crate::backend::{Backend, SpinorField};
use crate::dirac::WilsonFields;
use crate::dispatch;
use crate::error::{Error, Result};
use crate::field::HostSpinor;
use crate::lattice::Subset;
use crate::layout::{self, HostGauge, HostReals, HostRealsMut};

/// The backends a context can run on.
pub(crate) enum AnyBackend {
    Cpu(CpuBackend),
    #[cfg(feature = "cuda")]
    Cuda(Box<CudaBackend>),
}

/// Runs `$body` with `$b` bound to the concrete backend and `$f`, `$fs`
/// to the operator's fields stored for it (precise and sloppy).
macro_rules! with_backend {
    ($inner:expr, $fields:expr, |$b:ident, $f:ident, $fs:ident| $body:expr) => {
        match &$inner.backend {
            AnyBackend::Cpu($b) => {
                let ($f, $fs) = backend_fields::<CpuBackend>($fields)?;
                $body
            }
            #[cfg(feature = "cuda")]
            AnyBackend::Cuda($b) => {
                let $b: &CudaBackend = $b;
                let ($f, $fs) = backend_fields::<CudaBackend>($fields)?;
                $body
            }
        }
    };
}

fn downcast<'a, T: 'static>(store: &'a (dyn Any + Send + Sync), what: &str) -> Result<&'a T> {
    store
        .downcast_ref::<T>()
        .ok_or_else(|| Error::Internal(format!("{what} stored for another backend")))
}

/// The precise and sloppy backend fields of an operator.
fn backend_fields<'a, B: Backend>(
    f: OperatorFields<'a>,
) -> Result<(WilsonFields<'a, B>, WilsonFields<'a, B>)>
where
    B::Gauge: 'static,
    B::Clover: 'static,
{
    let g = downcast::<B::Gauge>(f.gauge.storage(), "gauge")?;
    let gs = downcast::<B::Gauge>(f.gauge.storage_sloppy(), "gauge")?;
    let (c, cs) = match f.clover {
        Some(c) => (
            Some(downcast::<B::Clover>(c.storage(), "clover")?),
            Some(downcast::<B::Clover>(c.storage_sloppy(), "clover")?),
        ),
        None => (None, None),
    };
    Ok((
        WilsonFields {
            gauge: g,
            clover: c,
        },
        WilsonFields {
            gauge: gs,
            clover: cs,
        },
    ))
}

/// The fields an operator is built from: a gauge field, and for the
/// Wilson-clover operator a clover field on its lattice. A `&Gauge`
/// converts into the plain Wilson operator's fields.
#[derive(Clone, Copy)]
pub struct OperatorFields<'a> {
    pub gauge: &'a Gauge,
    pub clover: Option<&'a Clover>,
}

impl<'a> From<&'a Gauge> for OperatorFields<'a> {
    fn from(gauge: &'a Gauge) -> Self {
        OperatorFields {
            gauge,
            clover: None,
        }
    }
}

impl<'a> From<(&'a Gauge, &'a Clover)> for OperatorFields<'a> {
    fn from((gauge, clover): (&'a Gauge, &'a Clover)) -> Self {
        OperatorFields {
            gauge,
            clover: Some(clover),
        }
    }
}

pub(crate) struct ContextInner {
    pub(crate) backend: AnyBackend,
    /// The host-side threads of a CUDA context (layout conversions, the
    /// clover term); a CPU context uses its backend's pool.
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    host_pool: Option<rayon::ThreadPool>,
    verbosity: Verbosity,
    logger: Logger,
    on_progress: Option<ProgressFn>,
}

impl ContextInner {
    /// A solver's progress: a log line at the verbose level, and the
    /// host's progress function whatever the verbosity.
    pub(crate) fn progress(&self, solver: &str, iteration: usize, residual: f64) {
        if Verbosity::Verbose <= self.verbosity {
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
        if level <= self.verbosity && level != Verbosity::Silent {
            (self.logger)(level, msg);
        }
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

    fn field_allocations(&self) -> (usize, usize) {
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

    /// Runs `f` on this context's threads: the CPU backend's pool, or the
    /// host pool of a CUDA context. Every parallel loop of the library runs
    /// inside one, so rayon's global pool is never started and a context's
    /// `num_threads` holds for all its work (issue 16).
    pub(crate) fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match &self.backend {
            AnyBackend::Cpu(b) => b.install(f),
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

/// A latsol context.
pub struct Context {
    pub(crate) inner: Arc<ContextInner>,
}

impl Context {
    /// Starts a context on the backend asked for (`Auto`: CUDA if usable).
    pub fn new(params: InitParams) -> Result<Context> {
        let logger: Logger = params
            .logger
            .clone()
            .unwrap_or_else(|| Arc::new(|_, msg: &str| eprintln!("latsol: {msg}")));
        // LATSOL_VERBOSITY (silent, summarize, verbose, debug) overrides the
        // host's choice, as QUDA's verbosity variable does: a C or Fortran
        // program's output can be raised without rebuilding it.
        let verbosity = std::env::var("LATSOL_VERBOSITY")
            .ok()
            .and_then(|v| Verbosity::from_name(&v))
            .unwrap_or(params.verbosity);
        let say = |level: Verbosity, msg: &str| {
            if level <= verbosity && verbosity != Verbosity::Silent {
                logger(level, msg);
            }
        };
        let backend = match params.backend {
            BackendChoice::Cpu => AnyBackend::Cpu(CpuBackend::new(params.num_threads)?),
            BackendChoice::Cuda => open_cuda(params.device)?,
            BackendChoice::Auto => match open_cuda(params.device) {
                Ok(b) => b,
                Err(e) => {
                    say(
                        Verbosity::Summarize,
                        &format!("CUDA not used ({e}); running on the CPU"),
                    );
                    AnyBackend::Cpu(CpuBackend::new(params.num_threads)?)
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
            verbosity,
            logger,
            on_progress: params.progress.clone(),
        };
        inner.log(
            Verbosity::Verbose,
            &format!("context started on the {} backend", inner.backend_name()),
        );
        Ok(Context {
            inner: Arc::new(inner),
        })
    }

    /// "cpu" or "cuda".
    pub fn backend_name(&self) -> &'static str {
        self.inner.backend_name()
    }

    /// Device fields allocated, and fields served from the buffers of
    /// freed ones, since the context started: a solve's vectors are kept
    /// when it ends, so the next solve of the same shape and precisions
    /// allocates nothing (its first count stays); (0, 0) on the CPU. The
    /// buffers are freed with a gauge field or the context.
    pub fn device_field_allocations(&self) -> (usize, usize) {
        self.inner.field_allocations()
    }

    /// Converts, checks and stores a host gauge field.
    pub fn load_gauge(&self, params: &GaugeParams, host: &HostGauge) -> Result<Gauge> {
        self.inner.install(|| Gauge::load(self, params, host))
    }

    /// Loads a clover field for the lattice of `gauge` (see `Clover`).
    pub fn load_clover(
        &self,
        gauge: &Gauge,
        params: &CloverParams,
        source: CloverSource,
    ) -> Result<Clover> {
        self.inner
            .install(|| Clover::load(self, gauge, params, source))
    }

    /// Solves `M x = b` for one source; see `dispatch::invert`. `fields`
    /// is a `&Gauge` (Wilson) or `(&Gauge, &Clover)` (Wilson-clover). On
    /// return `solution` holds the best solution found, also when the
    /// result says it did not converge; on an error it is untouched.
    pub fn invert<'a>(
        &self,
        fields: impl Into<OperatorFields<'a>> + Send,
        params: &InvertParams,
        source: HostReals,
        solution: HostRealsMut,
    ) -> Result<InvertResult> {
        self.invert_form(fields, params, source, solution, &SystemForm::default())
    }

    /// `invert` of the system `form` says: the source scaled, the adjoint
    /// system through γ5, or the even-odd operator's own system on fields
    /// of the `matpc` parity (what QUDA's `invertQuda` asks for with its
    /// solution types); all on the backend, beside the caller's order.
    pub fn invert_form<'a>(
        &self,
        fields: impl Into<OperatorFields<'a>> + Send,
        params: &InvertParams,
        source: HostReals,
        solution: HostRealsMut,
        form: &SystemForm,
    ) -> Result<InvertResult> {
        self.inner.install(|| {
            let fields = fields.into();
            let (lat, subset) = self.check_form(fields, params, form)?;
            let call = std::time::Instant::now();
            check_len(source.len(), &lat, subset, form, "source")?;
            check_len(solution.len(), &lat, subset, form, "solution")?;
            let inner = &self.inner;
            let monitor = |solver: &str, k: usize, res: f64| inner.progress(solver, k, res);
            let allocations = inner.field_allocations().0;
            let (order, basis) = (params.dirac_order, params.gamma_basis);
            // The caller's arrays go to the backend as they are: the
            // reordering, the basis change and the scale happen there (on
            // the device for CUDA), and the solution comes back the same
            // way; nothing is written to `solution` before the solve ends.
            let mut times = (0.0, 0.0);
            let result = with_backend!(inner, fields, |b, f, fs| {
                dispatch::prepare(b, f, fs, params)?;
                let prec = params.precision;
                let mut src = b.alloc_spinor(&lat, subset, prec)?;
                let scale = b
                    .import_spinor(&mut src, source, order, basis, None)
                    .map_err(|e| name_field(e, "source"))?;
                let mut x = b.alloc_spinor(&lat, subset, prec)?;
                if params.use_initial_guess {
                    let guess = HostReals::from(&solution);
                    b.import_spinor(&mut x, guess, order, basis, Some(scale))
                        .map_err(|e| name_field(e, "solution (initial guess)"))?;
                }
                times.0 = call.elapsed().as_secs_f64();
                let (r, x) = solve_imported(b, f, fs, params, form, src, x, &monitor)?;
                times.1 = call.elapsed().as_secs_f64();
                b.export_spinor(&x, solution, order, basis, -scale)
                    .map_err(|e| name_field(e, "solution"))?;
                r
            });
            let (imported, dispatched) = times;
            self.inner.log(
                Verbosity::Debug,
                &format!(
                    "invert call {:.3} s: source in {imported:.3} s, solve {:.3} s (solver {:.3} \
                     s), solution out {:.3} s; {} device field allocations",
                    call.elapsed().as_secs_f64(),
                    dispatched - imported,
                    result.seconds,
                    call.elapsed().as_secs_f64() - dispatched,
                    inner.field_allocations().0 - allocations
                ),
            );
            self.log_solve(params, &result);
            Ok(result)
        })
    }

    /// Whether `sources` solutions of `form`'s system fit on the backend
    /// beside a solve's working fields, as `invert_sources` requires (it
    /// refuses, before any solve, the calls that do not): callers with a
    /// fallback (one `invert_form` per source) ask first, so that an error
    /// of the call itself is never mistaken for that refusal.
    pub fn room_for_sources<'a>(
        &self,
        fields: impl Into<OperatorFields<'a>> + Send,
        params: &InvertParams,
        form: &SystemForm,
        sources: usize,
    ) -> Result<bool> {
        self.inner.install(|| {
            let fields = fields.into();
            let (lat, subset) = self.check_form(fields, params, form)?;
            let inner = &self.inner;
            with_backend!(inner, fields, |b, _f, _fs| {
                match check_room(b, &lat, subset, params.precision, sources) {
                    Ok(()) => Ok(true),
                    Err(Error::OutOfMemory(_)) => Ok(false),
                    Err(e) => Err(e),
                }
            })
        })
    }

    /// `invert_form` for several sources on the same fields (QUDA's
    /// `invertMultiSrcQuda`): solved in turn, the backend moving source
    /// k + 1 towards itself while solve k runs (`Backend::import_each`: on
    /// CUDA the raw bytes cross on a second stream behind the solver). The
    /// solutions stay on the backend until every solve has ended, and are
    /// written only if each fits the host precision: an error leaves every
    /// solution array as it was. Refused as out of memory before any solve
    /// when the solutions would not fit on the backend with a solve's
    /// working fields. With `use_initial_guess` each solution array holds
    /// its guess.
    pub fn invert_sources<'a>(
        &self,
        fields: impl Into<OperatorFields<'a>> + Send,
        params: &InvertParams,
        sources: &[HostReals],
        solutions: Vec<HostRealsMut>,
        form: &SystemForm,
    ) -> Result<Vec<InvertResult>> {
        self.inner.install(|| {
            let fields = fields.into();
            let (lat, subset) = self.check_form(fields, params, form)?;
            check_sources(&lat, subset, form, sources, &solutions)?;
            let call = std::time::Instant::now();
            let inner = &self.inner;
            let monitor = |solver: &str, k: usize, res: f64| inner.progress(solver, k, res);
            let (order, basis) = (params.dirac_order, params.gamma_basis);
            let mut solving = 0.0;
            let out_s;
            let results = with_backend!(inner, fields, |b, f, fs| {
                check_room(b, &lat, subset, params.precision, sources.len())?;
                dispatch::prepare(b, f, fs, params)?;
                let prec = params.precision;
                let mut solved = Vec::with_capacity(sources.len());
                b.import_each(
                    sources,
                    order,
                    basis,
                    &mut || b.alloc_spinor(&lat, subset, prec),
                    &mut |k, src, scale| {
                        let mut x = b.alloc_spinor(&lat, subset, prec)?;
                        if params.use_initial_guess {
                            let guess = HostReals::from(&solutions[k]);
                            b.import_spinor(&mut x, guess, order, basis, Some(scale))
                                .map_err(|e| {
                                    name_field(e, &format!("solutions[{k}] (initial guess)"))
                                })?;
                        }
                        let t = std::time::Instant::now();
                        let (r, x) = solve_imported(b, f, fs, params, form, src, x, &monitor)?;
                        solving += t.elapsed().as_secs_f64();
                        self.log_solve(params, &r);
                        solved.push((r, x, scale));
                        Ok(())
                    },
                )?;
                let out = std::time::Instant::now();
                // Every solution checked before any is written.
                for (k, ((_, x, scale), out)) in solved.iter().zip(&solutions).enumerate() {
                    b.check_export(x, out, -scale)
                        .map_err(|e| name_field(e, &format!("solutions[{k}]")))?;
                }
                let mut results = Vec::with_capacity(solved.len());
                for (k, ((r, x, scale), out)) in solved.into_iter().zip(solutions).enumerate() {
                    b.export_spinor(&x, out, order, basis, -scale)
                        .map_err(|e| name_field(e, &format!("solutions[{k}]")))?;
                    results.push(r);
                }
                out_s = out.elapsed().as_secs_f64();
                results
            });
            let total = call.elapsed().as_secs_f64();
            self.inner.log(
                Verbosity::Debug,
                &format!(
                    "invert call of {} sources {total:.3} s: sources in {:.3} s, solves {solving:.3} \
                     s (solvers {:.3} s), solutions out {out_s:.3} s",
                    results.len(),
                    total - solving - out_s,
                    results.iter().map(|r| r.seconds).sum::<f64>()
                ),
            );
            Ok(results)
        })
    }

    /// `invert_sources` one source at a time, for sources whose solutions
    /// do not fit on the backend together (`room_for_sources` says so): the
    /// same solutions and results, each solve an `invert_form`. Each solution
    /// goes to host memory of the library's first (holding the caller's
    /// initial guess where `use_initial_guess` asks for one): as much host
    /// memory again as the solutions (403 MB a double 32³×64 one). The
    /// caller's arrays are written only after the last solve has returned:
    /// an error (an allocation the system refuses included) leaves every
    /// solution array as it was, as `invert_sources` does. Arguments are
    /// checked, as there, before any solve.
    pub fn invert_each<'a>(
        &self,
        fields: impl Into<OperatorFields<'a>> + Send + Copy,
        params: &InvertParams,
        sources: &[HostReals],
        mut solutions: Vec<HostRealsMut>,
        form: &SystemForm,
    ) -> Result<Vec<InvertResult>> {
        let (lat, subset) = self.check_form(fields.into(), params, form)?;
        check_sources(&lat, subset, form, sources, &solutions)?;
        let mut solved = Vec::with_capacity(sources.len());
        for (k, (b, x)) in sources.iter().zip(&solutions).enumerate() {
            let scratch = if params.use_initial_guess {
                layout::HostRealsBuf::copy_of(x)
            } else {
                layout::HostRealsBuf::zeroed_like(x)
            };
            let mut scratch = scratch.map_err(|e| name_source(e, k))?;
            let r = self
                .invert_form(fields, params, *b, scratch.as_mut(), form)
                .map_err(|e| name_source(e, k))?;
            solved.push((r, scratch));
        }
        let mut results = Vec::with_capacity(solved.len());
        for ((r, scratch), out) in solved.into_iter().zip(&mut solutions) {
            scratch.write_to(out);
            results.push(r);
        }
        Ok(results)
    }

    /// The checks of a solve in `form`; the lattice and the subset of the
    /// caller's vectors.
    fn check_form(
        &self,
        fields: OperatorFields,
        params: &InvertParams,
        form: &SystemForm,
    ) -> Result<(Arc<crate::lattice::Lattice>, Subset)> {
        params.validate_solve()?;
        self.check_fields(fields, params)?;
        form.validate(params, fields.clover.is_some())?;
        let subset = if form.preconditioned {
            Subset::Single(dispatch::matpc_parity(params.matpc))
        } else {
            Subset::Full
        };
        Ok((fields.gauge.lattice().clone(), subset))
    }

    /// The summary line of one solve.
    fn log_solve(&self, params: &InvertParams, result: &InvertResult) {
        self.inner.log(
            Verbosity::Summarize,
            &format!(
                "{:?} {:?} on {}: {} iterations, true residual {:.3e} (tol {:.1e}), {:.3} s, {:.2} Gflops{}",
                params.solver,
                params.solve_type,
                self.backend_name(),
                result.iterations,
                result.true_residual,
                params.tol,
                result.seconds,
                result.gflops,
                if result.converged { "" } else { ", NOT converged" }
            ),
        );
    }

    /// Solves `(A + σ_i) x_i = b` for every shift `σ_i` (in any order,
    /// distinct, ≥ 0), `A = M†M` (full lattice) or `M̂†M̂` (the parity of
    /// `matpc`) as `solve_type` says, in the caller's normalization; `b`
    /// and the `x_i` are fields of that subset (V or V/2 sites). Multi-shift
    /// CG, mixed precision when `precision_sloppy` is coarser (seed
    /// clark2022 §3.2); `tols[i]` (None: `tol`) is shift i's tolerance.
    /// With `measure_phase1` each shift's true residual after the
    /// multi-shift phase is recomputed (one more operator application per
    /// shift). On an error the solutions are untouched.
    #[allow(clippy::too_many_arguments)]
    pub fn invert_multishift<'a>(
        &self,
        fields: impl Into<OperatorFields<'a>> + Send,
        params: &InvertParams,
        shifts: &[f64],
        tols: Option<&[f64]>,
        source: HostReals,
        solutions: Vec<HostRealsMut>,
        measure_phase1: bool,
    ) -> Result<MultiResult> {
        self.inner.install(|| {
            params.validate_solve()?;
            let fields = fields.into();
            self.check_fields(fields, params)?;
            multi::validate_systems(shifts, "shifts")?;
            if let Some((i, s)) = shifts.iter().enumerate().find(|(_, s)| **s < 0.0) {
                return Err(Error::InvalidArgument(format!(
                    "shifts[{i}] = {s}: a negative shift can make A + σ indefinite (CG needs \
                     σ ≥ 0)"
                )));
            }
            let tols = multi::tolerances(tols, shifts.len(), params.tol, "tol_shifts")?;
            for (i, t) in tols.iter().enumerate() {
                params.check_reachable(*t, &format!("tol_shifts[{i}]"))?;
            }
            let lat = fields.gauge.lattice().clone();
            let sub = dispatch::multishift::system_subset(params);
            let sites = lat.sites(sub);
            multi::check_solution_lengths(
                solutions.iter().map(|s| s.len()),
                shifts.len(),
                sites,
                crate::field::SPINOR_REALS,
                &format!("the system ({sub:?})"),
            )?;
            let inner = &self.inner;
            let monitor = |solver: &str, k: usize, res: f64| inner.progress(solver, k, res);
            // The caller's arrays cross as they are, converted by the
            // backend (on the device for CUDA), as for one solve.
            let result = with_backend!(inner, fields, |b, f, fs| {
                let (src, scale) = import_source(b, &lat, sub, params, source)?;
                let (r, xs) = dispatch::multishift::invert_multishift(
                    b,
                    f,
                    fs,
                    params,
                    shifts,
                    &tols,
                    src,
                    measure_phase1,
                    &monitor,
                )?;
                export_all(b, &xs, params, solutions, scale)?;
                r
            });
            self.inner.log(
                Verbosity::Summarize,
                &format!(
                    "multi-shift CG ({} shifts, {:?}/{:?}) on {}: {} iterations ({} multi-shift), {}",
                    shifts.len(),
                    params.precision,
                    params.precision_sloppy,
                    self.backend_name(),
                    result.iterations,
                    result.multishift_iterations,
                    result.summary_tail()
                ),
            );
            Ok(result)
        })
    }

    /// Solves `M(κ_i) x_i = b` for every hopping parameter `kappas[i]`
    /// (distinct, > 0; `params.kappa` is not used) on full fields, in the
    /// caller's normalization, by BiCGstab-M, the single-mass sequence or
    /// the `Auto` choice between them (see `dispatch::multimass`);
    /// `tols[i]` (None: `tol`) is mass i's tolerance. On an error the
    /// solutions are untouched.
    #[allow(clippy::too_many_arguments)]
    pub fn invert_multimass(
        &self,
        gauge: &Gauge,
        params: &InvertParams,
        kappas: &[f64],
        tols: Option<&[f64]>,
        policy: MultiMassPolicy,
        source: HostReals,
        solutions: Vec<HostRealsMut>,
    ) -> Result<MultiResult> {
        self.inner.install(|| {
            multi::validate_systems(kappas, "kappas")?;
            if let Some((i, k)) = kappas.iter().enumerate().find(|(_, k)| **k <= 0.0) {
                return Err(Error::InvalidArgument(format!(
                    "kappas[{i}] = {k}: must be positive"
                )));
            }
            let kappa_max = kappas.iter().copied().fold(f64::MIN, f64::max);
            let params = &InvertParams {
                kappa: kappa_max,
                ..*params
            };
            params.validate_solve()?;
            if params.dslash != DslashType::Wilson {
                return Err(Error::Unsupported(format!(
                    "dslash = {:?}: multi-mass solves are of the Wilson operator (the masses of \
                     the clover operator are not a shifted family); solve each mass with its \
                     own clover field",
                    params.dslash
                )));
            }
            self.check_gauge(gauge, params)?;
            let tols = multi::tolerances(tols, kappas.len(), params.tol, "tol_masses")?;
            for (i, t) in tols.iter().enumerate() {
                params.check_reachable(*t, &format!("tol_masses[{i}]"))?;
            }
            let lat = gauge.lattice().clone();
            multi::check_solution_lengths(
                solutions.iter().map(|s| s.len()),
                kappas.len(),
                lat.volume(),
                crate::field::SPINOR_REALS,
                &format!("a full field on {:?}", lat.dims()),
            )?;
            let inner = &self.inner;
            let monitor = |solver: &str, k: usize, res: f64| inner.progress(solver, k, res);
            let result = with_backend!(inner, OperatorFields::from(gauge), |b, f, fs| {
                let (g, gs) = (f.gauge, fs.gauge);
                let (src, scale) = import_source(b, &lat, Subset::Full, params, source)?;
                let (r, xs) = dispatch::multimass::invert_multimass(
                    b, g, gs, params, kappas, &tols, policy, src, &monitor,
                )?;
                export_all(b, &xs, params, solutions, scale)?;
                r
            });
            self.inner.log(
                Verbosity::Summarize,
                &format!(
                    "multi-mass ({} masses, {:?}) on {}: {} iterations, {}",
                    kappas.len(),
                    result.policy_used,
                    self.backend_name(),
                    result.iterations,
                    result.summary_tail()
                ),
            );
            Ok(result)
        })
    }

    /// `out = op in` on full fields in the caller's order, basis and
    /// normalization.
    pub fn apply<'a>(
        &self,
        fields: impl Into<OperatorFields<'a>> + Send,
        params: &InvertParams,
        op: OperatorKind,
        input: HostReals,
        out: HostRealsMut,
    ) -> Result<()> {
        self.inner.install(|| {
            params.validate_operator()?;
            let fields = fields.into();
            self.check_fields(fields, params)?;
            let lat = fields.gauge.lattice().clone();
            let sub = dispatch::apply_subset(params, op, fields.clover.is_some())?;
            let scale = layout::normalising_exponent(input.max_abs());
            let (order, basis) = (params.dirac_order, params.gamma_basis);
            let inp = layout::spinor::import_scaled(&lat, sub, order, basis, input, scale)
                .map_err(|e| name_field(e, "input"))?;
            let mut res = HostSpinor::try_zeros(lat, sub)?;
            with_backend!(self.inner, fields, |b, f, _fs| {
                dispatch::apply(b, f, params, op, &inp, &mut res)?
            });
            layout::spinor::export_scaled(&res, order, basis, out, -scale)
                .map_err(|e| name_field(e, "out"))
        })
    }

    /// The operator's fields belong to this context, match each other and
    /// the parameters.
    fn check_fields(&self, fields: OperatorFields, params: &InvertParams) -> Result<()> {
        self.check_gauge(fields.gauge, params)?;
        match (params.dslash, fields.clover) {
            (DslashType::Wilson, None) | (DslashType::CloverWilson, Some(_)) => {}
            (DslashType::Wilson, Some(_)) => {
                return Err(Error::InvalidArgument(
                    "dslash = Wilson with a clover field: set dslash to CloverWilson".into(),
                ))
            }
            (DslashType::CloverWilson, None) => {
                return Err(Error::InvalidArgument(
                    "dslash = CloverWilson needs a clover field".into(),
                ))
            }
        }
        let Some(clover) = fields.clover else {
            return Ok(());
        };
        if !Arc::ptr_eq(clover.context(), &self.inner) {
            return Err(Error::InvalidHandle(
                "clover: the field was loaded into another context".into(),
            ));
        }
        if clover.lattice().dims() != fields.gauge.lattice().dims() {
            return Err(Error::InvalidArgument(format!(
                "clover: a field on {:?}, the gauge field is on {:?}",
                clover.lattice().dims(),
                fields.gauge.lattice().dims()
            )));
        }
        if let Some(k) = clover.kappa() {
            if (k - params.kappa).abs() > 1e-12 * k {
                return Err(Error::InvalidArgument(format!(
                    "kappa = {} but the clover field was computed for kappa = {k} (its term is \
                     kappa c_sw F): compute it with the solve's kappa",
                    params.kappa
                )));
            }
        }
        let cp = clover.params();
        check_stored_precisions(params, "clover", cp.precision, cp.precision_sloppy)
    }

    fn check_gauge(&self, gauge: &Gauge, params: &InvertParams) -> Result<()> {
        if !Arc::ptr_eq(gauge.context(), &self.inner) {
            return Err(Error::InvalidHandle(
                "gauge: the field was loaded into another context".into(),
            ));
        }
        let gp = gauge.params();
        check_stored_precisions(params, "gauge", gp.precision, gp.precision_sloppy)
    }
}

/// The solve's precisions against those a field (`what`: gauge, clover)
/// was stored for: the precise one always, the sloppy one in a mixed solve.
fn check_stored_precisions(
    params: &InvertParams,
    what: &str,
    precision: crate::precision::Precision,
    precision_sloppy: crate::precision::Precision,
) -> Result<()> {
    if precision != params.precision {
        return Err(Error::InvalidArgument(format!(
            "precision = {:?} but the {what} field was stored in {precision:?}",
            params.precision
        )));
    }
    if params.precision_sloppy != params.precision && precision_sloppy != params.precision_sloppy {
        return Err(Error::InvalidArgument(format!(
            "precision_sloppy = {:?} but the {what} field's sloppy copy is {precision_sloppy:?}",
            params.precision_sloppy
        )));
    }
    Ok(())
}

/// Writes solutions scaled back by `2^-scale` (the source was solved for
/// at `2^scale`); all are checked to fit the host precision before any is
/// written, so an error leaves every output as it was.
fn export_all<B: Backend>(
    backend: &B,
    xs: &[B::Spinor],
    params: &InvertParams,
    mut outs: Vec<HostRealsMut>,
    scale: i32,
) -> Result<()> {
    let (order, basis) = (params.dirac_order, params.gamma_basis);
    // Every solution checked before any is written.
    for (i, (x, out)) in xs.iter().zip(&outs).enumerate() {
        backend
            .check_export(x, out, -scale)
            .map_err(|e| name_field(e, &format!("solutions[{i}]")))?;
    }
    for (i, (x, out)) in xs.iter().zip(outs.drain(..)).enumerate() {
        backend
            .export_spinor(x, out, order, basis, -scale)
            .map_err(|e| name_field(e, &format!("solutions[{i}]")))?;
    }
    Ok(())
}

/// The caller's source on the backend, in `params.precision` on `subset`,
/// normalised by a power of two (returned) as one solve's is.
fn import_source<B: Backend>(
    backend: &B,
    lat: &Arc<crate::lattice::Lattice>,
    subset: Subset,
    params: &InvertParams,
    source: HostReals,
) -> Result<(B::Spinor, i32)> {
    let mut src = backend.alloc_spinor(lat, subset, params.precision)?;
    let (order, basis) = (params.dirac_order, params.gamma_basis);
    let scale = backend
        .import_spinor(&mut src, source, order, basis, None)
        .map_err(|e| name_field(e, "source"))?;
    Ok((src, scale))
}

/// Full fields a solve may hold besides its source and solution (the
/// largest working set of the mixed-precision solvers, counted as fields
/// of the lattice in the precise precision: an upper bound).
const SOLVE_WORKING_FIELDS: usize = 24;

/// `invert_sources` keeps every solution on the backend: refused before
/// any solve, as out of memory, when they and a solve's working fields
/// cannot fit in what the backend says is free (QUDA's interface then
/// solves the sources one call each).
fn check_room<B: Backend>(
    b: &B,
    lat: &crate::lattice::Lattice,
    subset: Subset,
    precision: crate::precision::Precision,
    sources: usize,
) -> Result<()> {
    let Some(free) = b.memory_available() else {
        return Ok(());
    };
    let field = |sites: usize| sites * (24 * precision.bytes_per_real() + 4);
    let need = sources * field(lat.sites(subset)) + SOLVE_WORKING_FIELDS * field(lat.volume());
    if need > free {
        return Err(Error::OutOfMemory(format!(
            "{sources} solutions kept on the backend with a solve's working fields need about \
             {need} bytes, {free} are free: solve fewer sources per call"
        )));
    }
    Ok(())
}

/// The checks of a multi-source call's arrays: one solution per source, at
/// least one, every array of the system's length.
fn check_sources(
    lat: &crate::lattice::Lattice,
    subset: Subset,
    form: &SystemForm,
    sources: &[HostReals],
    solutions: &[HostRealsMut],
) -> Result<()> {
    if sources.is_empty() || sources.len() != solutions.len() {
        return Err(Error::InvalidArgument(format!(
            "{} sources and {} solutions: one solution per source, at least one",
            sources.len(),
            solutions.len()
        )));
    }
    for (k, (b, x)) in sources.iter().zip(solutions).enumerate() {
        check_len(b.len(), lat, subset, form, &format!("sources[{k}]"))?;
        check_len(x.len(), lat, subset, form, &format!("solutions[{k}]"))?;
    }
    Ok(())
}

/// Refuses a caller's vector of the wrong length for `subset`.
fn check_len(
    len: usize,
    lat: &crate::lattice::Lattice,
    subset: Subset,
    form: &SystemForm,
    what: &str,
) -> Result<()> {
    let reals = lat.sites(subset) * 24;
    if len != reals {
        return Err(Error::InvalidArgument(format!(
            "{what} holds {len} reals; {} on {:?} needs {reals}",
            if form.preconditioned {
                "a field of one parity"
            } else {
                "a full field"
            },
            lat.dims(),
        )));
    }
    Ok(())
}

/// One solve of an imported source in `form` on the backend: the source
/// scaled, γ5 on the source, the guess and the solution for the adjoint
/// system (`M† x = b ⇔ M (γ5 x) = γ5 b`), the even-odd system itself or
/// the full one; returns the solution field.
#[allow(clippy::too_many_arguments)]
fn solve_imported<B: Backend>(
    b: &B,
    f: WilsonFields<'_, B>,
    fs: WilsonFields<'_, B>,
    params: &InvertParams,
    form: &SystemForm,
    mut src: B::Spinor,
    mut x: B::Spinor,
    monitor: &dyn crate::solver::Monitor,
) -> Result<(InvertResult, B::Spinor)> {
    if form.source_factor != 1.0 {
        b.ax(form.source_factor, &mut src)?;
    }
    let mut g5 = if form.dagger {
        let mut t = b.alloc_spinor(src.lattice(), src.subset(), params.precision)?;
        b.gamma5(&mut t, &src)?;
        std::mem::swap(&mut t, &mut src);
        if params.use_initial_guess {
            b.gamma5(&mut t, &x)?;
            std::mem::swap(&mut t, &mut x);
        }
        Some(t)
    } else {
        None
    };
    let r = if form.preconditioned {
        dispatch::invert_preconditioned_on_device(b, f, fs, params, &src, &mut x, monitor)?
    } else {
        dispatch::invert_on_device(b, f, fs, params, &src, &mut x, monitor)?
    };
    if let Some(t) = g5.as_mut() {
        b.gamma5(t, &x)?;
        std::mem::swap(t, &mut x);
    }
    Ok((r, x))
}

/// Prefixes an import error with the field it concerns.
fn name_field(e: Error, what: &str) -> Error {
    match e {
        Error::InvalidArgument(m) => Error::InvalidArgument(format!("{what}: {m}")),
        other => other,
    }
}

/// An error of source k's solve in `invert_each`, naming the source.
fn name_source(e: Error, k: usize) -> Error {
    let at = |m: String| format!("sources[{k}] (solved one at a time): {m}");
    match e {
        Error::InvalidArgument(m) => Error::InvalidArgument(at(m)),
        Error::NotConverged(m) => Error::NotConverged(at(m)),
        Error::Breakdown(m) => Error::Breakdown(at(m)),
        Error::OutOfMemory(m) => Error::OutOfMemory(at(m)),
        other => other,
    }
}

#[cfg(feature = "cuda")]
fn open_cuda(device: usize) -> Result<AnyBackend> {
    Ok(AnyBackend::Cuda(Box::new(CudaBackend::new(device)?)))
}

#[cfg(not(feature = "cuda"))]
fn open_cuda(_device: usize) -> Result<AnyBackend> {
    Err(Error::NoDevice(
        "this build has no CUDA backend (enable the `cuda` feature)".into(),
    ))
}
