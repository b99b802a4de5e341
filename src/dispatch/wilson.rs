//! The Wilson and Wilson-clover solves: from validated parameters to the
//! operator, the solver and the reconstruction of the full solution, on
//! any backend.
//!
//! Every solve answers the full system `M x = b`. The even-odd solves
//! iterate on `M̂ x_p = b̂_p` with `b̂_p = b_p + κ D_{p p̄} b_p̄` and then set
//! `x_p̄ = b_p̄ + κ D_{p̄ p} x_p` (docs/conventions.md, "Even-odd"). Since
//! `b − M x` then vanishes on p̄, the full residual equals the Schur one, and
//! the Schur tolerance is scaled by `‖b‖/‖b̂‖` so that the caller's
//! tolerance holds for the full system. CG, and any solver asked for the
//! normal operator, iterates on `M†M x = M† b`. The true residual is
//! recomputed on the full system afterwards; if it misses the tolerance
//! (rounding, or the normal equations' weaker criterion) the solve goes on
//! from its answer with a tighter inner tolerance.
//!
//! Mixed precision (`precision_sloppy` coarser than `precision`): the same
//! systems, with reliable updates (BiCGstab; stabilised CG) or defect
//! correction around a sloppy solver.

use std::time::Instant;

use crate::api::params::{
    InvertParams, InvertResult, MixedScheme, OperatorKind, SolveType, SolverType,
};
use crate::backend::{Backend, SpinorField};
use crate::dirac::even_odd::SchurSource;
use crate::dirac::{DiracOperator, Direct, LinearOperator, Normal, WilsonFields};
use crate::error::Result;
use crate::field::HostSpinor;
use crate::lattice::{Parity, Subset};
use crate::solver::{
    bicgstab, bicgstab_l, bicgstab_reliable, cg, cg_reliable, cgnr, defect_correction, gcr,
    MixedParams, Monitor, SolverParams, SolverStats,
};

use super::system::operator_scale;
use super::system::{dirac, matpc_parity, matpc_symmetric, prepare, system_of, System};

/// Passes over the full system before giving up on the true residual.
const MAX_REFINEMENTS: usize = 4;
/// Passes with a heavy-quark target: each cuts the L2 tolerance by 2× to
/// 100×, so this many reach ten roundoffs from any start.
const MAX_HEAVY_QUARK_PASSES: usize = 24;

/// Solves `M x = b`; `x` holds the initial guess (zero if none) on entry and
/// the solution on exit, in the caller's normalization (host canonical).
/// `gauge_sloppy` is used when `precision_sloppy` differs from `precision`.
pub fn invert<B: Backend>(
    backend: &B,
    fields: WilsonFields<'_, B>,
    fields_sloppy: WilsonFields<'_, B>,
    params: &InvertParams,
    source: &HostSpinor,
    x: &mut HostSpinor,
    monitor: &dyn Monitor,
) -> Result<InvertResult> {
    prepare(backend, fields, fields_sloppy, params)?;
    let lat = source.lattice().clone();
    let prec = params.precision;
    let mut b = backend.alloc_spinor(&lat, Subset::Full, prec)?;
    backend.upload_spinor(&mut b, source)?;
    let mut xd = backend.alloc_spinor(&lat, Subset::Full, prec)?;
    backend.upload_spinor(&mut xd, x)?;
    let result = invert_on_device(backend, fields, fields_sloppy, params, &b, &mut xd, monitor)?;
    backend.download_spinor(&xd, x)?;
    Ok(result)
}

/// `invert` on fields already on the backend: `source` and `x` are full
/// fields in `params.precision`, in the caller's normalization; `x` holds
/// the initial guess on entry. The single-mass sequence chains solves this
/// way without a trip to the host between them.
pub(crate) fn invert_on_device<B: Backend>(
    backend: &B,
    fields: WilsonFields<'_, B>,
    fields_sloppy: WilsonFields<'_, B>,
    params: &InvertParams,
    source: &B::Spinor,
    x: &mut B::Spinor,
    monitor: &dyn Monitor,
) -> Result<InvertResult> {
    let lat = source.lattice().clone();
    let prec = params.precision;
    let kappa = params.kappa;
    let system = system_of(params);

    // The kappa-normalized source: M_mass x = b ⇔ (1 − κD) x = 2κ b; the
    // solution is the same field in either normalization.
    let mut b = backend.alloc_spinor(&lat, Subset::Full, prec)?;
    backend.copy(&mut b, source)?;
    if params.source_scale() != 1.0 {
        backend.ax(params.source_scale(), &mut b)?;
    }
    let b2 = backend.norm2(&b)?;

    // The right-hand side of the iterated system and its tolerance.
    let sub = match system {
        System::Full => Subset::Full,
        System::EvenOdd(p, _) => Subset::Single(p),
    };
    let mut rhs = backend.alloc_spinor(&lat, sub, prec)?;
    let schur = match system {
        System::Full => {
            backend.copy(&mut rhs, &b)?;
            None
        }
        System::EvenOdd(p, symmetric) => Some(SchurSource::prepare(
            backend, fields, kappa, p, symmetric, &b, &mut rhs,
        )?),
    };
    let rhs2 = backend.norm2(&rhs)?;
    let inner_tol = if rhs2 > 0.0 {
        (params.first_l2_tol() * (b2 / rhs2).sqrt()).min(0.5)
    } else {
        params.first_l2_tol()
    };

    let mut xs = backend.alloc_spinor(&lat, sub, prec)?;
    let mut xq = match system {
        System::Full => None,
        System::EvenOdd(p, _) => {
            Some(backend.alloc_spinor(&lat, Subset::Single(p.other()), prec)?)
        }
    };
    let mut r = backend.alloc_spinor(&lat, Subset::Full, prec)?;
    let mut full = fields.full(backend, kappa, prec);
    // The initial guess restricted to the iterated system.
    match system {
        System::Full => backend.copy(&mut xs, x)?,
        System::EvenOdd(p, _) => backend.extract_parity(&mut xs, x, p)?,
    }
    let passes = Passes {
        system,
        rhs: &rhs,
        inner_tol,
    };
    passes.run(
        backend,
        fields,
        fields_sloppy,
        params,
        &mut xs,
        monitor,
        &mut |xs| {
            // The full solution.
            match (system, xq.as_mut(), schur.as_ref()) {
                (System::EvenOdd(p, _), Some(xq), Some(schur)) => {
                    schur.reconstruct(xq, xs, &b)?;
                    backend.insert_parity(x, p, xs)?;
                    backend.insert_parity(x, p.other(), xq)?;
                }
                _ => backend.copy(x, xs)?,
            }
            // The true residual of the full kappa-normalized system (and
            // its heavy-quark form where asked for).
            full.apply(&mut r, x, false)?;
            let rr = backend.xmy_norm2(&b, &mut r)?;
            let hq = heavy_quark(backend, params, x, &r)?;
            let l2 = if b2 > 0.0 { (rr / b2).sqrt() } else { 0.0 };
            Ok((l2, hq, full.flops()))
        },
    )
}

/// Solves the even-odd system itself, `M̂ x_p = b_p` on the parity of
/// `params.matpc` (`solve_type` DirectPc or NormOpPc, κ normalization),
/// the source and solution fields of that parity: what QUDA's MATPC
/// solution asks for, with no Schur source to prepare and no other parity
/// to reconstruct. `x` holds the initial guess on entry. The true residual
/// is that of `M̂`.
pub(crate) fn invert_preconditioned_on_device<B: Backend>(
    backend: &B,
    fields: WilsonFields<'_, B>,
    fields_sloppy: WilsonFields<'_, B>,
    params: &InvertParams,
    source: &B::Spinor,
    x: &mut B::Spinor,
    monitor: &dyn Monitor,
) -> Result<InvertResult> {
    let system = system_of(params);
    let System::EvenOdd(p, _) = system else {
        return Err(crate::error::Error::Internal(
            "a preconditioned solve needs an even-odd solve_type".into(),
        ));
    };
    if source.subset() != Subset::Single(p) || x.subset() != Subset::Single(p) {
        return Err(crate::error::Error::Internal(format!(
            "the preconditioned system's fields are of parity {p:?}"
        )));
    }
    let (lat, prec) = (source.lattice().clone(), params.precision);
    let b2 = backend.norm2(source)?;
    let mut r = backend.alloc_spinor(&lat, Subset::Single(p), prec)?;
    let mut m = dirac(backend, fields, params.kappa, prec, system)?;
    let passes = Passes {
        system,
        rhs: source,
        inner_tol: params.first_l2_tol().min(0.5),
    };
    passes.run(
        backend,
        fields,
        fields_sloppy,
        params,
        x,
        monitor,
        &mut |xs| {
            m.apply(&mut r, xs, false)?;
            let rr = backend.xmy_norm2(source, &mut r)?;
            let hq = heavy_quark(backend, params, xs, &r)?;
            let l2 = if b2 > 0.0 { (rr / b2).sqrt() } else { 0.0 };
            Ok((l2, hq, m.flops()))
        },
    )
}

/// What a pass's `finish` measured of the caller's solution: its true
/// relative residual, its heavy-quark residual (0 unless asked for) and
/// the flops that took.
type Checked = (f64, f64, f64);

/// MILC's heavy-quark residual `sqrt(mean_x |r(x)|²/|x(x)|²)` of the
/// solution `x` and its residual `r` where the solve asks for it (else 0,
/// as QUDA reports it then).
fn heavy_quark<B: Backend>(
    backend: &B,
    params: &InvertParams,
    x: &B::Spinor,
    r: &B::Spinor,
) -> Result<f64> {
    if params.tol_hq > 0.0 {
        Ok(backend.heavy_quark_residual2(x, r)?.sqrt())
    } else {
        Ok(0.0)
    }
}

/// The passes over an iterated system `A xs = rhs`: solve from the current
/// `xs`, then `finish(xs)` writes the caller's solution and returns its
/// true residual, its heavy-quark residual and the flops that took; while
/// it misses the targets (rounding, the normal equations' weaker
/// criterion, or a heavy-quark target the L2 one does not imply) the next
/// pass goes on from `xs` with a tighter inner tolerance.
struct Passes<'r, S> {
    system: System,
    rhs: &'r S,
    inner_tol: f64,
}

impl<S> Passes<'_, S> {
    #[allow(clippy::too_many_arguments)]
    fn run<B: Backend<Spinor = S>>(
        self,
        backend: &B,
        fields: WilsonFields<'_, B>,
        fields_sloppy: WilsonFields<'_, B>,
        params: &InvertParams,
        xs: &mut S,
        monitor: &dyn Monitor,
        finish: &mut dyn FnMut(&S) -> Result<Checked>,
    ) -> Result<InvertResult> {
        // The solver's own time, as QUDA reports it: host-side reordering
        // and transfers of the source and solution are not part of it.
        let mut solver_seconds = 0.0;
        let mut inner_tol = self.inner_tol;
        let mut total = SolverStats::default();
        let mut flops = 0.0;
        let mut true_residual = f64::INFINITY;
        let mut hq = 0.0;
        // A heavy-quark target is met by tightening the L2 tolerance pass
        // by pass (QUDA restarts on it too), down to ten roundoffs.
        let passes = if params.tol_hq > 0.0 {
            MAX_HEAVY_QUARK_PASSES
        } else {
            MAX_REFINEMENTS
        };
        let floor = 10.0 * params.precision.epsilon();
        for pass in 0..passes {
            let left = params.maxiter.saturating_sub(total.iterations);
            if left == 0 {
                break;
            }
            let mixed = MixedParams {
                tol: inner_tol,
                maxiter: left,
                progress_every: params.progress_every,
                delta: params.reliable_delta,
                tol_inner: params.tol_inner,
            };
            let start = Instant::now();
            let (stats, op_flops) = solve_system(
                backend,
                fields,
                fields_sloppy,
                params,
                self.system,
                xs,
                self.rhs,
                &mixed,
                monitor,
            )?;
            solver_seconds += start.elapsed().as_secs_f64();
            total.iterations += stats.iterations;
            total.matvecs += stats.matvecs;
            total.reliable_updates += stats.reliable_updates;
            total.restarts += stats.restarts + usize::from(pass > 0);
            total.iterated_residual = stats.iterated_residual;
            flops += op_flops * stats.matvecs as f64;

            let (residual, heavy_quark, check_flops) = finish(xs)?;
            flops += check_flops;
            (true_residual, hq) = (residual, heavy_quark);
            if params.met(true_residual, hq) {
                break;
            }
            // Tighten by the shortfall, with a margin: of the L2 residual,
            // and of the heavy-quark one (by 2× to 100× a pass).
            let mut cut: f64 = 1.0;
            if params.tol > 0.0 && true_residual > params.tol {
                cut = cut.min(0.5 * params.tol / true_residual);
            }
            if params.tol_hq > 0.0 && hq > params.tol_hq {
                if inner_tol <= floor {
                    break;
                }
                cut = cut.min((params.tol_hq / hq).clamp(0.01, 0.5));
                inner_tol = (inner_tol * cut).max(floor);
            } else {
                inner_tol = (inner_tol * cut).max(f64::MIN_POSITIVE);
            }
        }
        let seconds = solver_seconds;
        Ok(InvertResult {
            iterations: total.iterations,
            true_residual,
            iterated_residual: total.iterated_residual,
            seconds,
            // The whole lattice's: every rank's part counted (as QUDA's).
            gflops: if seconds > 0.0 {
                flops * backend.ranks() as f64 / seconds * 1e-9
            } else {
                0.0
            },
            converged: params.met(true_residual, hq),
            restarts: total.restarts,
            reliable_updates: total.reliable_updates,
            true_residual_hq: hq,
        })
    }
}

/// One solve of the iterated system `A x = rhs` with the chosen solver and
/// scheme; returns the statistics and the flops of one `A` application.
#[allow(clippy::too_many_arguments)]
fn solve_system<B: Backend>(
    backend: &B,
    fields: WilsonFields<'_, B>,
    fields_sloppy: WilsonFields<'_, B>,
    params: &InvertParams,
    system: System,
    x: &mut B::Spinor,
    rhs: &B::Spinor,
    mixed: &MixedParams,
    monitor: &dyn Monitor,
) -> Result<(SolverStats, f64)> {
    let (kappa, hi, lo) = (params.kappa, params.precision, params.precision_sloppy);
    let mut m = dirac(backend, fields, kappa, hi, system)?;
    let lat = m.lattice().clone();
    let flops = m.flops();
    let normal = params.solver == SolverType::Cg
        || matches!(params.solve_type, SolveType::NormOp | SolveType::NormOpPc);
    let sp = mixed.progress();

    if params.solver == SolverType::BiCgStabL {
        // Its sloppy operator is a second one, also where lo == hi.
        let m_lo = dirac(backend, fields_sloppy, kappa, lo, system)?;
        let l = params.gcr_nkrylov;
        if normal {
            let mut bn = backend.alloc_spinor(&lat, m.subset(), hi)?;
            m.apply(&mut bn, rhs, true)?;
            let (mut a, mut a_lo) = (Normal::new(backend, m)?, Normal::new(backend, m_lo)?);
            let stats = bicgstab_l::solve(backend, &mut a, &mut a_lo, x, &bn, l, mixed, monitor)?;
            return Ok((stats, 2.0 * flops));
        }
        let (mut a, mut a_lo) = (Direct(m), Direct(m_lo));
        let stats = bicgstab_l::solve(backend, &mut a, &mut a_lo, x, rhs, l, mixed, monitor)?;
        return Ok((stats, flops));
    }
    if lo == hi {
        return match (params.solver, normal) {
            // CG on a non-Hermitian M is CG on the normal equations (CGLS form).
            (SolverType::Cg, _) => Ok((cgnr::solve(backend, &mut m, x, rhs, &sp, monitor)?, flops)),
            (SolverType::BiCgStab, true) => {
                let mut bn = backend.alloc_spinor(&lat, m.subset(), hi)?;
                m.apply(&mut bn, rhs, true)?;
                let mut a = Normal::new(backend, m)?;
                Ok((
                    bicgstab::solve(backend, &mut a, x, &bn, &sp, monitor)?,
                    2.0 * flops,
                ))
            }
            (SolverType::BiCgStab, false) => Ok((
                bicgstab::solve(backend, &mut Direct(m), x, rhs, &sp, monitor)?,
                flops,
            )),
            (SolverType::Gcr, true) => {
                let mut bn = backend.alloc_spinor(&lat, m.subset(), hi)?;
                m.apply(&mut bn, rhs, true)?;
                let mut a = Normal::new(backend, m)?;
                Ok((
                    gcr_alone(backend, &mut a, x, &bn, params, &sp, monitor)?,
                    2.0 * flops,
                ))
            }
            (SolverType::Gcr, false) => Ok((
                gcr_alone(backend, &mut Direct(m), x, rhs, params, &sp, monitor)?,
                flops,
            )),
            (SolverType::BiCgStabL, _) => Err(unreachable_bicgstab_l()),
        };
    }

    let m_lo = dirac(backend, fields_sloppy, kappa, lo, system)?;
    if normal {
        let mut bn = backend.alloc_spinor(&lat, m.subset(), hi)?;
        m.apply(&mut bn, rhs, true)?;
        let mut a = Normal::new(backend, m)?;
        let mut a_lo = Normal::new(backend, m_lo)?;
        let stats = match (params.mixed, params.solver) {
            (MixedScheme::ReliableUpdates, SolverType::Cg) => cg_reliable::solve(
                backend,
                &mut a,
                &mut a_lo,
                x,
                &bn,
                mixed,
                params.cg_stabilised,
                monitor,
            )?,
            (MixedScheme::ReliableUpdates, SolverType::BiCgStab) => {
                bicgstab_reliable::solve(backend, &mut a, &mut a_lo, x, &bn, mixed, monitor)?
            }
            (MixedScheme::ReliableUpdates, SolverType::Gcr) => {
                gcr_alone(backend, &mut a, x, &bn, params, &sp, monitor)?
            }
            (_, SolverType::BiCgStabL) => return Err(unreachable_bicgstab_l()),
            (MixedScheme::DefectCorrection, solver) => {
                defect_correction::solve(backend, &mut a, lo, x, &bn, mixed, &mut |e, r, p| {
                    inner_solve(backend, params, solver, &mut a_lo, e, r, p, monitor)
                })?
            }
            // validate_solve allows it with CG only.
            (MixedScheme::DefectCorrectionCorrected, _) => {
                defect_correction::solve_corrected(backend, &mut a, &mut a_lo, x, &bn, mixed)?
            }
        };
        return Ok((stats, 2.0 * flops));
    }
    let (mut a, mut a_lo) = (Direct(m), Direct(m_lo));
    let stats = match params.mixed {
        MixedScheme::ReliableUpdates if params.solver == SolverType::Gcr => {
            gcr_alone(backend, &mut a, x, rhs, params, &sp, monitor)?
        }
        MixedScheme::ReliableUpdates => {
            bicgstab_reliable::solve(backend, &mut a, &mut a_lo, x, rhs, mixed, monitor)?
        }
        MixedScheme::DefectCorrection => {
            let inner = match params.solver {
                SolverType::Gcr => SolverType::Gcr,
                _ => SolverType::BiCgStab,
            };
            defect_correction::solve(backend, &mut a, lo, x, rhs, mixed, &mut |e, r, p| {
                inner_solve(backend, params, inner, &mut a_lo, e, r, p, monitor)
            })?
        }
        MixedScheme::DefectCorrectionCorrected => {
            return Err(crate::error::Error::Internal(
                "the corrected defect correction needs the normal equations (CG)".into(),
            ))
        }
    };
    Ok((stats, flops))
}

/// GCR without a preconditioner on `a` in its own (the precise)
/// precision: with reliable updates a mixed GCR has nothing to make
/// sloppy but a preconditioner (SAP: `dispatch::block`).
fn gcr_alone<B: Backend, A: LinearOperator<B>>(
    backend: &B,
    a: &mut A,
    x: &mut B::Spinor,
    b: &B::Spinor,
    params: &InvertParams,
    sp: &SolverParams,
    monitor: &dyn Monitor,
) -> Result<SolverStats> {
    gcr::solve(backend, a, x, b, sp, params.gcr_nkrylov, None, monitor)
}

/// The sloppy inner solve of defect correction.
#[allow(clippy::too_many_arguments)]
fn inner_solve<B: Backend, A: LinearOperator<B>>(
    backend: &B,
    invert: &InvertParams,
    solver: SolverType,
    a: &mut A,
    e: &mut B::Spinor,
    r: &B::Spinor,
    params: &SolverParams,
    monitor: &dyn Monitor,
) -> Result<SolverStats> {
    match solver {
        SolverType::Cg => cg::solve(backend, a, e, r, params, monitor),
        SolverType::BiCgStab => bicgstab::solve(backend, a, e, r, params, monitor),
        SolverType::Gcr => gcr_alone(backend, a, e, r, invert, params, monitor),
        SolverType::BiCgStabL => Err(unreachable_bicgstab_l()),
    }
}

/// BiCGstab(l) has its own branch of `solve_system` (and no defect
/// correction: `InvertParams::validate_solve`).
fn unreachable_bicgstab_l() -> crate::error::Error {
    crate::error::Error::Internal("BiCGstab(l) reached another solver's branch".into())
}

/// The subset of the fields `apply` takes for `op`: one parity for the
/// even-odd operator, else the full lattice. The clover operators need a
/// clover field.
pub fn apply_subset(params: &InvertParams, op: OperatorKind, clover: bool) -> Result<Subset> {
    match op {
        OperatorKind::MPc | OperatorKind::MPcDag => Ok(Subset::Single(matpc_parity(params.matpc))),
        OperatorKind::Clover | OperatorKind::CloverInverse if !clover => {
            Err(crate::error::Error::InvalidArgument(format!(
                "op = {op:?} needs the Wilson-clover operator (a clover field)"
            )))
        }
        _ => Ok(Subset::Full),
    }
}

/// `out = op in` on host fields (full, or the parity of `matpc` for the
/// even-odd operator), in the caller's normalization.
pub fn apply<B: Backend>(
    backend: &B,
    fields: WilsonFields<'_, B>,
    params: &InvertParams,
    op: OperatorKind,
    input: &HostSpinor,
    out: &mut HostSpinor,
) -> Result<()> {
    let lat = input.lattice().clone();
    let prec = params.precision;
    let sub = input.subset();
    let mut i = backend.alloc_spinor(&lat, sub, prec)?;
    let mut o = backend.alloc_spinor(&lat, sub, prec)?;
    backend.upload_spinor(&mut i, input)?;
    // M in the caller's normalization is the kappa one divided by this.
    let norm = params.source_scale();
    match op {
        OperatorKind::M | OperatorKind::MDag => {
            let mut m = fields.full(backend, params.kappa, prec);
            m.apply(&mut o, &i, op == OperatorKind::MDag)?;
            backend.ax(1.0 / norm, &mut o)?;
        }
        OperatorKind::MDagM => {
            let mut m = fields.full(backend, params.kappa, prec);
            let mut t = backend.alloc_spinor(&lat, Subset::Full, prec)?;
            m.apply(&mut t, &i, false)?;
            m.apply(&mut o, &t, true)?;
            backend.ax(1.0 / (norm * norm), &mut o)?;
        }
        OperatorKind::MPc | OperatorKind::MPcDag => {
            let system = System::EvenOdd(matpc_parity(params.matpc), matpc_symmetric(params.matpc));
            let mut m = dirac(backend, fields, params.kappa, prec, system)?;
            m.apply(&mut o, &i, op == OperatorKind::MPcDag)?;
            let scale = operator_scale(params, system);
            backend.ax(1.0 / scale, &mut o)?;
        }
        OperatorKind::Dslash => {
            for p in [Parity::Even, Parity::Odd] {
                backend.wilson_dslash(&mut o, p, fields.gauge, &i, false, 1.0, None)?;
            }
        }
        OperatorKind::Clover | OperatorKind::CloverInverse => {
            let c = fields.clover.ok_or_else(|| {
                crate::error::Error::InvalidArgument(format!("op = {op:?} needs a clover field"))
            })?;
            for p in [Parity::Even, Parity::Odd] {
                backend.clover(&mut o, p, c, &i, op == OperatorKind::CloverInverse)?;
            }
        }
    }
    backend.download_spinor(&o, out)
}
