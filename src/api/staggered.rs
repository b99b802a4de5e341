//! Staggered quarks: `StaggeredLinks` (fat and long links, or thin links
//! for the naive operator) loaded into a context, and the solves and
//! applications of `M = 2m − D` on colour-vector fields
//! (docs/conventions.md, "The staggered operator").

use std::any::Any;
use std::sync::Arc;

use super::context::Context;
use super::context_inner::ContextInner;
use super::params::{InvertResult, Verbosity};
use super::staggered_params::{
    check_mass, PhaseFolding, StaggeredInvertParams, StaggeredOp, StaggeredParams, StaggeredSolve,
};
use crate::backend::Backend;
use crate::dirac::staggered::fold_phases;
use crate::error::{Error, Result};
use crate::field::{Fermion, GaugeField};
use crate::lattice::{Lattice, Parity, Subset};
use crate::layout::{self, DiracOrder, GammaBasis, GaugeOrder, HostGauge, HostReals, HostRealsMut};
use crate::long_links::{self, LongReconstruct};
use crate::precision::Precision;

/// The error with the name of the argument it concerns.
pub(super) fn named(e: Error, what: &str) -> Error {
    match e {
        Error::InvalidArgument(m) => Error::InvalidArgument(format!("{what}: {m}")),
        other => other,
    }
}

/// What `StaggeredLinks::prepare` leaves for the upload: the links the
/// backend stored itself (one a distinct format of `Copies::formats`), or
/// the host's fields.
enum Prepared {
    Stored(Vec<Box<dyn Any + Send + Sync>>),
    OnHost(GaugeField, Option<GaugeField>),
}

/// The stored forms of a set of links: the precise one first, then the
/// sloppy and the refinement copy where they differ in precision or
/// long-link storage from those before them.
struct Copies {
    formats: Vec<(Precision, LongReconstruct)>,
    /// Where the sloppy and the refinement copy are in `formats`.
    sloppy: usize,
    refinement: usize,
}

impl Copies {
    fn of(params: &StaggeredParams) -> Copies {
        let mut formats = vec![(params.precision, params.long_reconstruct)];
        let mut place = |f: (Precision, LongReconstruct)| match formats.iter().position(|&g| g == f)
        {
            Some(i) => i,
            None => {
                formats.push(f);
                formats.len() - 1
            }
        };
        let sloppy = place((params.precision_sloppy, params.long_reconstruct_sloppy));
        let refinement = match params.precision_refinement {
            Some(p) => place((p, params.long_reconstruct_refinement)),
            None => sloppy,
        };
        Copies {
            formats,
            sloppy,
            refinement,
        }
    }
}

/// Fat and long links (or thin links) loaded into a context.
pub struct StaggeredLinks {
    context: Arc<ContextInner>,
    params: StaggeredParams,
    lattice: Arc<Lattice>,
    improved: bool,
    /// One a format of `Copies::of(params).formats`, in its order.
    stored: Vec<Box<dyn Any + Send + Sync>>,
}

impl StaggeredLinks {
    pub(crate) fn load(
        ctx: &Context,
        params: &StaggeredParams,
        fat: &HostGauge,
        long: Option<&HostGauge>,
    ) -> Result<StaggeredLinks> {
        let start = std::time::Instant::now();
        let lattice = ctx.inner.agree(Lattice::new(params.dims).map(Arc::new))?;
        let improved = long.is_some();
        let done = |stored, path: &str| {
            ctx.inner.log(
                Verbosity::Verbose,
                &format!(
                    "{} staggered links {:?} converted {path}, loaded in {:.3} s",
                    if improved { "improved" } else { "naive" },
                    params.dims,
                    start.elapsed().as_secs_f64()
                ),
            );
            StaggeredLinks {
                context: ctx.inner.clone(),
                params: *params,
                lattice: lattice.clone(),
                improved,
                stored,
            }
        };
        // This rank's checks and conversions, agreed over the ranks before
        // the upload's first collective step.
        let prepared = Self::prepare(ctx, params, &lattice, fat, long);
        let (fat, long) = match ctx.inner.agree(prepared)? {
            Prepared::Stored(stored) => return Ok(done(stored, "on the backend")),
            Prepared::OnHost(fat, long) => (fat, long),
        };
        ctx.inner.check_same_local(params.dims)?;
        let stored = Copies::of(params)
            .formats
            .iter()
            .map(|&(p, r)| ctx.inner.upload_staggered(&fat, long.as_ref(), p, r))
            .collect::<Result<Vec<_>>>()?;
        Ok(done(stored, "on the host"))
    }

    /// `load`'s local part: the parameters and the links checked, and
    /// either stored by the backend's own path or converted on the host
    /// (the phases folded with the whole lattice's coordinates).
    fn prepare(
        ctx: &Context,
        params: &StaggeredParams,
        lattice: &Arc<Lattice>,
        fat: &HostGauge,
        long: Option<&HostGauge>,
    ) -> Result<Prepared> {
        if params.order == GaugeOrder::CpsWilson {
            return Err(Error::InvalidArgument(
                "order = CpsWilson: staggered links are given in QDP or MILC order".into(),
            ));
        }
        if params.precision.is_sloppy_only() {
            return Err(Error::InvalidArgument(format!(
                "precision = {:?}: the precise links are double or single",
                params.precision
            )));
        }
        let import = |host: &HostGauge, what: &str| -> Result<GaugeField> {
            let order = match host {
                HostGauge::Qdp(_) => GaugeOrder::Qdp,
                HostGauge::Milc(_) => GaugeOrder::Milc,
                HostGauge::CpsWilson(_) => GaugeOrder::CpsWilson,
            };
            if order != params.order {
                return Err(Error::InvalidArgument(format!(
                    "{what}: order = {:?} but the links were passed as {order:?}",
                    params.order
                )));
            }
            // The import refuses non-finite links, naming the site.
            layout::gauge::import(lattice, host).map_err(|e| match e {
                Error::InvalidArgument(m) => Error::InvalidArgument(format!("{what}: {m}")),
                other => other,
            })
        };
        // The backend's own path first (the CUDA backend folds the phases,
        // converts and compresses on the device); the host path where it has
        // none, a link is not finite or the long links do not compress (it
        // names either).
        let fold = match params.phases {
            PhaseFolding::InLinks => None,
            PhaseFolding::Fold {
                t_boundary,
                long_coefficient,
            } => {
                if !long_coefficient.is_finite() {
                    return Err(Error::InvalidArgument(format!(
                        "long_coefficient = {long_coefficient}: give a finite number"
                    )));
                }
                Some(crate::backend::PhaseFold {
                    t_boundary,
                    long_coefficient,
                })
            }
        };
        {
            // The stored forms as the host path makes them.
            let formats = Copies::of(params).formats;
            for (host, what) in
                std::iter::once((fat, "fat links")).chain(long.map(|l| (l, "long links")))
            {
                if host.order() != params.order {
                    return Err(Error::InvalidArgument(format!(
                        "{what}: order = {:?} but the links were passed as {:?}",
                        params.order,
                        host.order()
                    )));
                }
                layout::gauge::check_lengths(lattice, host).map_err(|e| match e {
                    Error::InvalidArgument(m) => Error::InvalidArgument(format!("{what}: {m}")),
                    other => other,
                })?;
            }
            if let Some(stored) = ctx
                .inner
                .import_staggered(lattice, fat, long, fold, &formats)?
            {
                return Ok(Prepared::Stored(stored));
            }
        }
        let mut fat = import(fat, "fat links")?;
        let mut long = long.map(|l| import(l, "long links")).transpose()?;
        if let Some(f) = fold {
            // MILC's phases and the boundary sign belong to the whole
            // lattice's coordinates (this rank's part starts at `origin`).
            let (origin, global) = ctx.inner.place(params.dims);
            fold_phases(&mut fat, origin, global, 1, f.t_boundary, 1.0);
            if let Some(l) = long.as_mut() {
                fold_phases(l, origin, global, 3, f.t_boundary, f.long_coefficient);
            }
        }
        // Compressed long links must be |s| × U(3) to the stored precision.
        if let Some(l) = &long {
            let refinement = params.precision_refinement.map(|p| {
                (
                    params.long_reconstruct_refinement,
                    p,
                    "long_reconstruct_refinement",
                )
            });
            for (r, p, name) in [
                (
                    params.long_reconstruct,
                    params.precision,
                    "long_reconstruct",
                ),
                (
                    params.long_reconstruct_sloppy,
                    params.precision_sloppy,
                    "long_reconstruct_sloppy",
                ),
            ]
            .into_iter()
            .chain(refinement)
            {
                if r == LongReconstruct::Full18 {
                    continue;
                }
                let scale = long_links::scale_of(l.links());
                let tolerance = 10.0 * p.link_epsilon().max(1e-12);
                let (d, i) = long_links::check(l.links(), r, scale);
                if d > tolerance || d.is_nan() {
                    let (site, mu) = (i / 4, i % 4);
                    let par = Parity::from_index(site / lattice.half_volume());
                    let x = lattice.coords(par, site % lattice.half_volume());
                    return Err(Error::InvalidArgument(format!(
                        "{name} = {r:?}: the long links are not |s| × U(3) (|s| = {scale:.6e} \
                         from the first link): link mu = {mu} at (x, y, z, t) = {x:?} differs \
                         from its compressed form by {d:.2e} of |s| (tolerance {tolerance:.0e}); \
                         store them with 18 reals"
                    )));
                }
            }
        }
        Ok(Prepared::OnHost(fat, long))
    }

    pub fn lattice(&self) -> &Arc<Lattice> {
        &self.lattice
    }
    pub fn params(&self) -> &StaggeredParams {
        &self.params
    }
    /// Long links loaded: the improved operator; else the naive one.
    pub fn improved(&self) -> bool {
        self.improved
    }

    fn stored<B: Backend>(&self, i: usize) -> Result<&B::StaggeredLinks>
    where
        B::StaggeredLinks: 'static,
    {
        self.stored[i]
            .downcast_ref()
            .ok_or_else(|| Error::Internal("staggered links stored for another backend".into()))
    }

    /// The stored links in `precision`: the precise, the sloppy or the
    /// refinement copy, the first of them in it.
    pub(super) fn in_precision<B: Backend>(
        &self,
        precision: Precision,
    ) -> Result<&B::StaggeredLinks>
    where
        B::StaggeredLinks: 'static,
    {
        let p = &self.params;
        let copies = Copies::of(p);
        if precision == p.precision {
            self.stored::<B>(0)
        } else if precision == p.precision_sloppy {
            self.stored::<B>(copies.sloppy)
        } else if Some(precision) == p.precision_refinement {
            self.stored::<B>(copies.refinement)
        } else {
            let refinement = p
                .precision_refinement
                .map(|r| format!(" and (refinement) {r:?}"))
                .unwrap_or_default();
            Err(Error::InvalidArgument(format!(
                "precision {precision:?}: the links were loaded in {:?} and {:?}{refinement}",
                p.precision, p.precision_sloppy
            )))
        }
    }

    /// The links of a multi-shift refinement in `precision` (None: the
    /// sloppy copy): the refinement copy where it is in that precision,
    /// else the copy `in_precision` finds.
    pub(super) fn for_refinement<B: Backend>(
        &self,
        precision: Option<Precision>,
    ) -> Result<&B::StaggeredLinks>
    where
        B::StaggeredLinks: 'static,
    {
        let p = &self.params;
        match precision {
            None => self.stored::<B>(Copies::of(p).sloppy),
            Some(r) if Some(r) == p.precision_refinement => {
                self.stored::<B>(Copies::of(p).refinement)
            }
            Some(r) => self.in_precision::<B>(r),
        }
    }
}

/// Runs `$body` with `$b` bound to the concrete backend and `$l`, `$ls` to
/// the links stored for it in precisions `$hi` and `$lo`.
macro_rules! with_links {
    ($inner:expr, $links:expr, $hi:expr, $lo:expr, |$b:ident, $l:ident, $ls:ident| $body:expr) => {
        match &$inner.backend {
            crate::api::context_inner::AnyBackend::Cpu($b) => {
                let $l = $links.in_precision::<crate::backend::cpu::CpuBackend>($hi)?;
                let $ls = $links.in_precision::<crate::backend::cpu::CpuBackend>($lo)?;
                $body
            }
            #[cfg(feature = "cuda")]
            crate::api::context_inner::AnyBackend::Cuda($b) => {
                let $b: &crate::backend::cuda::CudaBackend = $b;
                let $l = $links.in_precision::<crate::backend::cuda::CudaBackend>($hi)?;
                let $ls = $links.in_precision::<crate::backend::cuda::CudaBackend>($lo)?;
                $body
            }
        }
    };
}
pub(super) use with_links;

impl Context {
    /// Loads staggered links: `fat` one-hop links (thin ones for the naive
    /// operator) and, for the improved operator, `long` three-hop links.
    pub fn load_staggered(
        &self,
        params: &StaggeredParams,
        fat: &HostGauge,
        long: Option<&HostGauge>,
    ) -> Result<StaggeredLinks> {
        self.inner
            .install(|| StaggeredLinks::load(self, params, fat, long))
    }

    pub(super) fn check_links(&self, links: &StaggeredLinks) -> Result<()> {
        if !Arc::ptr_eq(&links.context, &self.inner) {
            return Err(Error::InvalidHandle(
                "staggered links: loaded into another context".into(),
            ));
        }
        Ok(())
    }

    /// Solves `M x = b`, `M = 2m − D`, for one colour-vector source (full
    /// field, even sites first). On return `solution` holds the best
    /// solution found, also when it did not converge; on an error it is
    /// untouched.
    pub fn invert_staggered(
        &self,
        links: &StaggeredLinks,
        params: &StaggeredInvertParams,
        source: HostReals,
        solution: HostRealsMut,
    ) -> Result<InvertResult> {
        self.inner.install(|| {
            // Agreed over the ranks: a bad argument on one fails all.
            let checked = params.validate().and_then(|()| self.check_links(links));
            self.inner.agree(checked)?;
            let (hi, lo) = (params.precision, params.precision_sloppy);
            let lat = links.lattice.clone();
            // `solve_on` scales the source to norm near 1 (solves are
            // invariant under scaling; the norms then neither underflow
            // nor overflow) and the solution back.
            let inner = &self.inner;
            let monitor = |solver: &str, k: usize, res: f64| inner.progress(solver, k, res);
            let guess = params.use_init_guess;
            let sub = Subset::Full;
            let result = with_links!(inner, links, hi, lo, |b, l, ls| {
                solve_on(
                    b,
                    &lat,
                    sub,
                    hi,
                    source,
                    solution,
                    guess,
                    SOLVE_NAMES,
                    |src, x| crate::dispatch::staggered::invert(b, l, ls, params, src, x, &monitor),
                )?
            });
            inner.log(
                Verbosity::Summarize,
                &format!(
                    "staggered CG {:?}: {} iterations, true residual {:.3e} (tol {:.1e}), {:.3} s",
                    params.solve,
                    result.iterations,
                    result.true_residual,
                    params.tol,
                    result.seconds
                ),
            );
            Ok(result)
        })
    }

    /// Solves the even-odd system itself, `(4m² − D_pq D_qp) x_p = b_p`
    /// on the parity p of `params.solve = EvenOdd(p)`: `source` and
    /// `solution` hold that parity's sites (V/2 colour vectors), the
    /// solution the initial guess when `use_init_guess` is set (MILC's
    /// `ks_congrad_parity`, QUDA's staggered MATPC solve). `tol` is this
    /// system's relative residual; the heavy-quark residual is reported.
    /// On an error the solution is untouched.
    pub fn invert_staggered_parity(
        &self,
        links: &StaggeredLinks,
        params: &StaggeredInvertParams,
        source: HostReals,
        solution: HostRealsMut,
    ) -> Result<InvertResult> {
        self.inner.install(|| {
            // Agreed over the ranks: a bad argument on one fails all.
            let checked = params.validate().and_then(|()| {
                self.check_links(links)?;
                match params.solve {
                    StaggeredSolve::EvenOdd(p) => Ok(p),
                    StaggeredSolve::Full => Err(Error::InvalidArgument(
                        "solve = Full: invert_staggered_parity solves an even-odd system".into(),
                    )),
                }
            });
            let p = self.inner.agree(checked)?;
            let (hi, lo) = (params.precision, params.precision_sloppy);
            let lat = links.lattice.clone();
            let sub = Subset::Single(p);
            let inner = &self.inner;
            let monitor = |solver: &str, k: usize, res: f64| inner.progress(solver, k, res);
            let guess = params.use_init_guess;
            let result = with_links!(inner, links, hi, lo, |b, l, ls| {
                solve_on(
                    b,
                    &lat,
                    sub,
                    hi,
                    source,
                    solution,
                    guess,
                    SOLVE_NAMES,
                    |src, x| {
                        crate::dispatch::staggered::invert_parity(
                            b, l, ls, params, src, x, &monitor,
                        )
                    },
                )?
            });
            Ok(result)
        })
    }

    /// Solves `(A + σ_i) x_i = b` for every shift `σ_i` (distinct, ≥ 0),
    /// `A = M̂ = 4m² − D_pq D_qp` on parity p for `solve = EvenOdd(p)` (the
    /// RHMC systems of MILC) or `M†M` for `Full`; `b` and the `x_i` are
    /// fields of that subset. Multi-shift CG, mixed precision with per-shift
    /// refinement when `precision_sloppy` is coarser (clark2022 §3.2);
    /// `tols[i]` (None: `tol`) is shift i's tolerance. On an error the
    /// solutions are untouched.
    pub fn invert_multishift_staggered(
        &self,
        links: &StaggeredLinks,
        params: &StaggeredInvertParams,
        shifts: &[f64],
        tols: Option<&[f64]>,
        source: HostReals,
        solutions: Vec<HostRealsMut>,
    ) -> Result<crate::api::MultiResult> {
        use crate::api::multi;
        self.inner.install(|| {
            // Agreed over the ranks: a bad argument on one fails all.
            let checked = (|| {
                params.validate()?;
                params.require_cg("a multi-shift solve")?;
                self.check_links(links)?;
                multi::validate_systems(shifts, "shifts")?;
                if let Some((i, s)) = shifts.iter().enumerate().find(|(_, s)| **s < 0.0) {
                    return Err(Error::InvalidArgument(format!(
                        "shifts[{i}] = {s}: a negative shift can make A + σ indefinite (CG needs σ ≥ 0)"
                    )));
                }
                let tols = multi::tolerances(tols, shifts.len(), params.tol, "tol_shifts")?;
                let eps = params.precision.epsilon();
                if let Some((i, t)) = tols.iter().enumerate().find(|(_, t)| **t < eps) {
                    return Err(Error::InvalidArgument(format!(
                        "tol_shifts[{i}] = {t:e} cannot be reached with precision = {:?} (unit \
                         roundoff {eps:.1e})",
                        params.precision
                    )));
                }
                let lat = links.lattice.clone();
                let sub = match params.solve {
                    StaggeredSolve::EvenOdd(p) => Subset::Single(p),
                    StaggeredSolve::Full => Subset::Full,
                };
                multi::check_solution_lengths(
                    solutions.iter().map(|s| s.len()),
                    shifts.len(),
                    lat.sites(sub),
                    Fermion::Staggered.reals(),
                    &format!("the system ({sub:?})"),
                )?;
                Ok((lat, sub, tols))
            })();
            let (lat, sub, tols) = self.inner.agree(checked)?;
            let inner = &self.inner;
            let monitor = |solver: &str, k: usize, res: f64| inner.progress(solver, k, res);
            let (hi, lo) = (params.precision, params.precision_sloppy);
            // The source imported and every solution exported on the
            // backend (on the device for CUDA), all checked before any is
            // written.
            fn shifts_on<B: Backend>(
                b: &B,
                lat: &Arc<Lattice>,
                sub: Subset,
                hi: Precision,
                source: HostReals,
                solutions: Vec<HostRealsMut>,
                solve: impl FnOnce(&B::Spinor) -> Result<(crate::api::MultiResult, Vec<B::Spinor>)>,
            ) -> Result<crate::api::MultiResult> {
                let (src, scale) = import_colour(b, lat, sub, hi, source, "source")?;
                let (r, xs) = solve(&src)?;
                // Every solution fits its host array on every rank, or
                // none is written anywhere.
                let fits = xs.iter().zip(&solutions).enumerate().try_for_each(|(i, (x, out))| {
                    b.check_export(x, out, -scale)
                        .map_err(|e| named(e, &format!("solutions[{i}]")))
                });
                crate::backend::agreed(b, fits)?;
                for (i, (x, out)) in xs.iter().zip(solutions).enumerate() {
                    b.export_spinor(x, out, DiracOrder::Dirac, GammaBasis::Ukqcd, -scale)
                        .map_err(|e| named(e, &format!("solutions[{i}]")))?;
                }
                Ok(r)
            }
            /// The refinement's links, on the backend `_b` names.
            fn refinement_links<'l, B: Backend>(
                _b: &B,
                links: &'l StaggeredLinks,
                precision: Option<Precision>,
            ) -> Result<&'l B::StaggeredLinks>
            where
                B::StaggeredLinks: 'static,
            {
                links.for_refinement::<B>(precision)
            }
            // A pure solve has no refinement: its links are the sloppy ones.
            let refine_in = params.precision_refinement.filter(|_| hi != lo);
            let result = with_links!(inner, links, hi, lo, |b, l, ls| {
                    let lr = refinement_links(b, links, refine_in)?;
                    shifts_on(b, &lat, sub, hi, source, solutions, |src| {
                        crate::dispatch::staggered::invert_multishift(
                            b, l, ls, lr, params, shifts, &tols, src, &monitor,
                        )
                    })?
            });
            inner.log(
                Verbosity::Summarize,
                &format!(
                    "staggered multi-shift CG ({} shifts, {:?}/{:?}): {} iterations ({} multi-shift)",
                    shifts.len(),
                    hi,
                    lo,
                    result.iterations,
                    result.multishift_iterations
                ),
            );
            Ok(result)
        })
    }

    /// `out = op in` for a staggered operator of mass `mass`, in the links'
    /// precise precision; fields of parity p for `MPc(p)`, full otherwise.
    pub fn apply_staggered(
        &self,
        links: &StaggeredLinks,
        mass: f64,
        op: StaggeredOp,
        input: HostReals,
        out: HostRealsMut,
    ) -> Result<()> {
        self.inner.install(|| {
            // Agreed over the ranks: a bad argument on one fails all.
            let checked = self.check_links(links).and_then(|()| match op {
                StaggeredOp::Dslash => Ok(()),
                _ => check_mass(mass),
            });
            self.inner.agree(checked)?;
            let lat = links.lattice.clone();
            let sub = match op {
                StaggeredOp::MPc(p) => Subset::Single(p),
                _ => Subset::Full,
            };
            let prec = links.params.precision;
            // `out` is not an initial guess: `solve_on` leaves it unread.
            with_links!(self.inner, links, prec, prec, |b, l, _ls| {
                solve_on(
                    b,
                    &lat,
                    sub,
                    prec,
                    input,
                    out,
                    false,
                    ("input", "out"),
                    |i, o| crate::dispatch::staggered::apply(b, l, mass, op, prec, i, o),
                )
            })
        })
    }
}

/// The names of a solve's arrays in its errors.
const SOLVE_NAMES: (&str, &str) = ("source", "solution");

/// The caller's colour vectors on the backend in `precision` on `subset`,
/// normalised by a power of two (returned), converted there (on the device
/// for CUDA; `layout::colour` on the host otherwise).
pub(super) fn import_colour<B: Backend>(
    backend: &B,
    lat: &Arc<Lattice>,
    subset: Subset,
    precision: Precision,
    host: HostReals,
    what: &str,
) -> Result<(B::Spinor, i32)> {
    let mut f = backend.alloc_field(lat, subset, precision, Fermion::Staggered)?;
    let scale = backend
        .import_spinor(&mut f, host, DiracOrder::Dirac, GammaBasis::Ukqcd, None)
        .map_err(|e| named(e, what))?;
    Ok((f, scale))
}

/// One solve's conversions on the backend: the source imported (and the
/// solution as the initial guess with `use_guess`), `solve` run on them,
/// the solution exported at the source's scale; on an error `solution` is
/// untouched. `input`, `output`: the arrays' names in errors.
#[allow(clippy::too_many_arguments)]
fn solve_on<B: Backend, R>(
    backend: &B,
    lat: &Arc<Lattice>,
    subset: Subset,
    precision: Precision,
    source: HostReals,
    solution: HostRealsMut,
    use_guess: bool,
    (input, output): (&str, &str),
    solve: impl FnOnce(&B::Spinor, &mut B::Spinor) -> Result<R>,
) -> Result<R> {
    let (src, scale) = import_colour(backend, lat, subset, precision, source, input)?;
    let mut x = backend.alloc_field(lat, subset, precision, Fermion::Staggered)?;
    if use_guess {
        let guess = HostReals::from(&solution);
        backend
            .import_spinor(
                &mut x,
                guess,
                DiracOrder::Dirac,
                GammaBasis::Ukqcd,
                Some(scale),
            )
            .map_err(|e| named(e, "solution (initial guess)"))?;
    }
    // Agreed: a failure kept on one rank (a GPU's faces) ends the call on
    // every rank here, also where no global sum followed it.
    let r = crate::backend::agreed(backend, solve(&src, &mut x))?;
    backend
        .export_spinor(&x, solution, DiracOrder::Dirac, GammaBasis::Ukqcd, -scale)
        .map_err(|e| named(e, output))?;
    Ok(r)
}
