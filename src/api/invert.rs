//! A context's solves of one or several sources (`Context::invert`,
//! `invert_form`, `invert_sources`, `invert_each`): the checks, the
//! sources imported and scaled, the dispatcher, the solutions exported.

use std::sync::Arc;

use super::context::{name_field, Context};
use super::operator_fields::{with_backend, OperatorFields};
use super::params::{InvertParams, InvertResult, SystemForm, Verbosity};
use crate::backend::{Backend, SpinorField};
use crate::dirac::WilsonFields;
use crate::dispatch;
use crate::error::{Error, Result};
use crate::lattice::Subset;
use crate::layout::{self, HostReals, HostRealsMut};

impl Context {
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
            let call = std::time::Instant::now();
            // Agreed over the ranks: a bad argument on one fails all.
            let checked = self
                .check_form(fields, params, form)
                .and_then(|(lat, subset)| {
                    check_len(source.len(), &lat, subset, form, "source")?;
                    check_len(solution.len(), &lat, subset, form, "solution")?;
                    Ok((lat, subset))
                });
            let (lat, subset) = self.inner.agree(checked)?;
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
                same_on_every_rank(b, params, lat.dims(), 1)?;
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
            let (lat, subset) = self.inner.agree(self.check_form(fields, params, form))?;
            let inner = &self.inner;
            let room = with_backend!(inner, fields, |b, _f, _fs| {
                let block = block_len(params, sources);
                match check_room(b, &lat, subset, params.precision, sources, block) {
                    Ok(()) => Ok(true),
                    Err(Error::OutOfMemory(_)) => Ok(false),
                    Err(e) => Err(e),
                }
            });
            // Room on every rank, or on none.
            let room = inner.agree(room)?;
            inner.all_ok(room)
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
            let checked = self.check_form(fields, params, form).and_then(|(lat, subset)| {
                check_sources(&lat, subset, form, sources, &solutions)?;
                Ok((lat, subset))
            });
            let (lat, subset) = self.inner.agree(checked)?;
            let call = std::time::Instant::now();
            let inner = &self.inner;
            let monitor = |solver: &str, k: usize, res: f64| inner.progress(solver, k, res);
            let (order, basis) = (params.dirac_order, params.gamma_basis);
            let mut solving = 0.0;
            let out_s;
            let results = with_backend!(inner, fields, |b, f, fs| {
                // Room on every rank, or the call fails on all.
                let block = block_len(params, sources.len());
                same_on_every_rank(b, params, lat.dims(), block)?;
                inner.agree(check_room(b, &lat, subset, params.precision, sources.len(), block))?;
                dispatch::prepare(b, f, fs, params)?;
                let prec = params.precision;
                let mut solved = Vec::with_capacity(sources.len());
                // A guess for source k, in its source's scale.
                let guess = |k: usize, scale: i32| {
                    let mut x = b.alloc_spinor(&lat, subset, prec)?;
                    if params.use_initial_guess {
                        let guess = HostReals::from(&solutions[k]);
                        b.import_spinor(&mut x, guess, order, basis, Some(scale))
                            .map_err(|e| name_field(e, &format!("solutions[{k}] (initial guess)")))?;
                    }
                    Ok::<_, Error>(x)
                };
                let block = block_len(params, sources.len());
                if block > 1 || params.sap.is_some() {
                    // Every source imported, then solved in blocks.
                    let mut imported = Vec::with_capacity(sources.len());
                    b.import_each(
                        sources,
                        order,
                        basis,
                        &mut || b.alloc_spinor(&lat, subset, prec),
                        &mut |_, src, scale| {
                            imported.push((src, scale));
                            Ok(())
                        },
                    )?;
                    let (mut srcs, mut xs, mut scales) = (Vec::new(), Vec::new(), Vec::new());
                    for (k, (mut src, scale)) in imported.into_iter().enumerate() {
                        let mut x = guess(k, scale)?;
                        form_in(b, params, form, &mut src, &mut x)?;
                        srcs.push(src);
                        xs.push(x);
                        scales.push(scale);
                    }
                    let variant = if params.block_memory_saving {
                        crate::solver::block_bicgstab::Variant::MemorySaving
                    } else {
                        crate::solver::block_bicgstab::Variant::Standard
                    };
                    let mut results = Vec::with_capacity(srcs.len());
                    let boxes = dispatch::sap_boxes(b, f, params)?;
                    for (src, x) in srcs.chunks(block).zip(xs.chunks_mut(block)) {
                        let t = std::time::Instant::now();
                        results.extend(dispatch::invert_block_on_device(
                            b,
                            f,
                            fs,
                            params,
                            form.preconditioned,
                            variant,
                            src,
                            x,
                            boxes.as_ref(),
                            &monitor,
                        )?);
                        solving += t.elapsed().as_secs_f64();
                    }
                    for ((r, mut x), scale) in results.into_iter().zip(xs).zip(scales) {
                        form_out(b, params, form, &mut x)?;
                        self.log_solve(params, &r);
                        solved.push((r, x, scale));
                    }
                } else {
                    b.import_each(
                        sources,
                        order,
                        basis,
                        &mut || b.alloc_spinor(&lat, subset, prec),
                        &mut |k, src, scale| {
                            let x = guess(k, scale)?;
                            let t = std::time::Instant::now();
                            let (r, x) = solve_imported(b, f, fs, params, form, src, x, &monitor)?;
                            solving += t.elapsed().as_secs_f64();
                            self.log_solve(params, &r);
                            solved.push((r, x, scale));
                            Ok(())
                        },
                    )?;
                }
                let out = std::time::Instant::now();
                // Every solution checked before any is written (on every rank).
                let checked = solved.iter().zip(&solutions).enumerate().try_for_each(
                    |(k, ((_, x, scale), out))| {
                        b.check_export(x, out, -scale)
                            .map_err(|e| name_field(e, &format!("solutions[{k}]")))
                    },
                );
                crate::backend::agreed(b, checked)?;
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
    pub(super) fn check_form(
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
    pub(super) fn log_solve(&self, params: &InvertParams, result: &InvertResult) {
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
}

/// Writes solutions scaled back by `2^-scale` (the source was solved for
/// at `2^scale`); all are checked to fit the host precision before any is
/// written, so an error leaves every output as it was.
pub(super) fn export_all<B: Backend>(
    backend: &B,
    xs: &[B::Spinor],
    params: &InvertParams,
    mut outs: Vec<HostRealsMut>,
    scale: i32,
) -> Result<()> {
    let (order, basis) = (params.dirac_order, params.gamma_basis);
    // Every solution checked before any is written (on every rank).
    let checked = xs
        .iter()
        .zip(&outs)
        .enumerate()
        .try_for_each(|(i, (x, out))| {
            backend
                .check_export(x, out, -scale)
                .map_err(|e| name_field(e, &format!("solutions[{i}]")))
        });
    crate::backend::agreed(backend, checked)?;
    for (i, (x, out)) in xs.iter().zip(outs.drain(..)).enumerate() {
        backend
            .export_spinor(x, out, order, basis, -scale)
            .map_err(|e| name_field(e, &format!("solutions[{i}]")))?;
    }
    Ok(())
}

/// The caller's source on the backend, in `params.precision` on `subset`,
/// normalised by a power of two (returned) as one solve's is.
pub(super) fn import_source<B: Backend>(
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

/// Fields a block solve holds per source of the block besides its source
/// and solution (block BiCGstab's blocks R, R̃, P, V, T, Z, the precise
/// residual, the partial solution, the Schur sources and the iterated
/// solutions: an upper bound, counted as full precise fields).
const BLOCK_WORKING_FIELDS: usize = 12;

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
    block: usize,
) -> Result<()> {
    let Some(free) = b.memory_available() else {
        return Ok(());
    };
    let field = |sites: usize| sites * (24 * precision.bytes_per_real() + 4);
    let working = if block > 1 {
        block * BLOCK_WORKING_FIELDS
    } else {
        SOLVE_WORKING_FIELDS
    };
    let need = sources * field(lat.sites(subset)) + working * field(lat.volume());
    if need > free {
        return Err(Error::OutOfMemory(format!(
            "{sources} solutions kept on the backend with a solve's working fields (blocks of \
             {block}) need about {need} bytes, {free} are free: solve fewer sources per call, or \
             in smaller blocks"
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
    form_in(b, params, form, &mut src, &mut x)?;
    let r = if form.preconditioned {
        dispatch::invert_preconditioned_on_device(b, f, fs, params, &src, &mut x, monitor)?
    } else if params.sap.is_some() {
        // SAP runs in block BiCGstab, here on a block of one.
        let boxes = dispatch::sap_boxes(b, f, params)?;
        let variant = crate::solver::block_bicgstab::Variant::Standard;
        let mut xs = [x];
        let srcs = [src];
        let r = dispatch::invert_block_on_device(
            b,
            f,
            fs,
            params,
            false,
            variant,
            &srcs,
            &mut xs,
            boxes.as_ref(),
            monitor,
        )?;
        let [solved] = xs;
        x = solved;
        r.into_iter()
            .next()
            .ok_or_else(|| Error::Internal("a block of one source without a result".into()))?
    } else {
        dispatch::invert_on_device(b, f, fs, params, &src, &mut x, monitor)?
    };
    form_out(b, params, form, &mut x)?;
    Ok((r, x))
}

/// The source (and guess) of `form`'s system from the caller's: the
/// source scaled, and for the adjoint system γ5 on both.
fn form_in<B: Backend>(
    b: &B,
    params: &InvertParams,
    form: &SystemForm,
    src: &mut B::Spinor,
    x: &mut B::Spinor,
) -> Result<()> {
    if form.source_factor != 1.0 {
        b.ax(form.source_factor, src)?;
    }
    if form.dagger {
        let mut t = b.alloc_spinor(src.lattice(), src.subset(), params.precision)?;
        b.gamma5(&mut t, src)?;
        std::mem::swap(&mut t, src);
        if params.use_initial_guess {
            b.gamma5(&mut t, x)?;
            std::mem::swap(&mut t, x);
        }
    }
    Ok(())
}

/// The caller's solution from the system's: γ5 back for the adjoint one.
fn form_out<B: Backend>(
    b: &B,
    params: &InvertParams,
    form: &SystemForm,
    x: &mut B::Spinor,
) -> Result<()> {
    if form.dagger {
        let mut t = b.alloc_spinor(x.lattice(), x.subset(), params.precision)?;
        b.gamma5(&mut t, x)?;
        std::mem::swap(&mut t, x);
    }
    Ok(())
}

/// Refuses, on every rank alike, the choices that shape a solve's
/// collective steps when they differ between the ranks: the block size
/// (each rank's `sources_per_block`, or its `LATSOL_SOURCES_PER_BLOCK`) and
/// the SAP preconditioner (on or off, its cycles, box solve and boxes).
/// Ranks that disagree would enter different collective steps and hang.
fn same_on_every_rank<B: Backend>(
    b: &B,
    params: &InvertParams,
    local: [usize; 4],
    block: usize,
) -> Result<()> {
    let sap = params.sap.unwrap_or(super::params::SapParams {
        cycles: 0,
        ssor_iterations: 0,
        omega: 0.0,
        ..Default::default()
    });
    let e = match params.sap {
        Some(sap) => sap.resolved_extent(local).map(|x| x as f64),
        None => [0.0; 4],
    };
    let choices = [
        ("sources_per_block", block as f64),
        ("SAP cycles (0: no SAP)", sap.cycles as f64),
        ("SAP SSOR iterations", sap.ssor_iterations as f64),
        ("SAP omega", sap.omega),
        ("SAP box extent x", e[0]),
        ("SAP box extent y", e[1]),
        ("SAP box extent z", e[2]),
        ("SAP box extent t", e[3]),
        // The forms of SAP and GCR's restarts change which collective steps
        // (sums, faces) a solve makes and when.
        ("SAP Schwarz form", sap.schwarz as u8 as f64),
        ("SAP box solver", sap.box_solver as u8 as f64),
        ("solver", params.solver as u8 as f64),
        ("gcr_nkrylov", params.gcr_nkrylov as f64),
    ];
    for (name, value) in choices {
        let (largest, smallest) = (b.global_max(value)?, -b.global_max(-value)?);
        if largest != smallest {
            return Err(Error::InvalidArgument(format!(
                "{name} differs between the ranks ({smallest} to {largest}): every rank must \
                 solve the same blocks with the same preconditioner"
            )));
        }
    }
    Ok(())
}

/// How many sources a block solve of `invert_sources` takes
/// (`sources_per_block`: 0 all of them), at most all.
fn block_len(params: &InvertParams, sources: usize) -> usize {
    match params.sources_per_block {
        0 => sources,
        l => l.min(sources),
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
