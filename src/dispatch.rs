//! The invert dispatcher: from validated parameters to the operator, the
//! solver and the reconstruction of the full solution, on any backend.
//!
//! Every solve answers the full system `M x = b`. The even-odd solves
//! iterate on `M̂ x_p = b̂_p` with `b̂_p = b_p + κ D_{p p̄} b_p̄` and then set
//! `x_p̄ = b_p̄ + κ D_{p̄ p} x_p` (CONVENTIONS.md, "Even-odd"). Since
//! `b − M x` then vanishes on p̄, the full residual equals the Schur one, and
//! the Schur tolerance is scaled by `‖b‖/‖b̂‖` so that the caller's
//! tolerance holds for the full system. The true residual is recomputed on
//! the full system afterwards; if rounding left it above the tolerance, the
//! solve continues from its answer with a tighter inner tolerance.

use std::time::Instant;

use crate::api::params::{InvertParams, InvertResult, MatPc, OperatorKind, SolveType, SolverType};
use crate::backend::{Backend, SpinorField};
use crate::dirac::wilson::{WilsonEvenOdd, WilsonFull};
use crate::dirac::{DiracOperator, Direct, Normal};
use crate::error::Result;
use crate::field::HostSpinor;
use crate::lattice::{Parity, Subset};
use crate::solver::{bicgstab, cgnr, Monitor, SolverParams, SolverStats};

/// Passes over the full system before giving up on the true residual.
const MAX_REFINEMENTS: usize = 4;

/// Solves `M x = b`; `x` holds the initial guess (zero if none) on entry and
/// the solution on exit, in the caller's normalization (host canonical).
pub fn invert<B: Backend>(
    backend: &B,
    gauge: &B::Gauge,
    params: &InvertParams,
    source: &HostSpinor,
    x: &mut HostSpinor,
    monitor: &dyn Monitor,
) -> Result<InvertResult> {
    let start = Instant::now();
    let lat = source.lattice().clone();
    let prec = params.precision;
    let kappa = params.kappa;

    // The kappa-normalized source: M_mass x = b ⇔ (1 − κD) x = 2κ b.
    let mut b = backend.alloc_spinor(&lat, Subset::Full, prec)?;
    backend.upload_spinor(&mut b, source)?;
    if params.source_scale() != 1.0 {
        backend.ax(params.source_scale(), &mut b)?;
    }
    let b2 = backend.norm2(&b)?;

    let mut xd = backend.alloc_spinor(&lat, Subset::Full, prec)?;
    let mut r = backend.alloc_spinor(&lat, Subset::Full, prec)?;
    let mut full = WilsonFull::new(backend, gauge, kappa, prec);

    let mut total = SolverStats::default();
    let mut flops = 0.0;
    let mut inner_tol = params.tol;
    let mut true_residual = f64::INFINITY;
    for pass in 0..MAX_REFINEMENTS {
        let left = params.maxiter.saturating_sub(total.iterations);
        if left == 0 {
            break;
        }
        let solver_params = SolverParams {
            tol: inner_tol,
            maxiter: left,
            progress_every: params.progress_every,
        };
        let (stats, op_flops) = match params.solve_type {
            SolveType::Direct | SolveType::NormOp => {
                backend.upload_spinor(&mut xd, x)?;
                let out = solve_full(backend, gauge, params, &mut xd, &b, &solver_params, monitor)?;
                backend.download_spinor(&xd, x)?;
                out
            }
            SolveType::DirectPc | SolveType::NormOpPc => {
                solve_even_odd(backend, gauge, params, &b, b2, x, &solver_params, monitor)?
            }
        };
        total.iterations += stats.iterations;
        total.matvecs += stats.matvecs;
        total.restarts += stats.restarts + usize::from(pass > 0);
        total.iterated_residual = stats.iterated_residual;
        flops += op_flops * stats.matvecs as f64;

        // The true residual of the full kappa-normalized system.
        backend.upload_spinor(&mut xd, x)?;
        full.apply(&mut r, &xd, false)?;
        let rr = backend.xmy_norm2(&b, &mut r)?;
        flops += full.flops();
        true_residual = if b2 > 0.0 { (rr / b2).sqrt() } else { 0.0 };
        if true_residual <= params.tol {
            break;
        }
        // Tighten by the shortfall, with a margin.
        inner_tol = (inner_tol * 0.5 * params.tol / true_residual).max(f64::MIN_POSITIVE);
    }
    let seconds = start.elapsed().as_secs_f64();
    Ok(InvertResult {
        iterations: total.iterations,
        true_residual,
        iterated_residual: total.iterated_residual,
        seconds,
        gflops: if seconds > 0.0 {
            flops / seconds * 1e-9
        } else {
            0.0
        },
        converged: true_residual <= params.tol,
        restarts: total.restarts,
    })
}

/// Direct and normal-operator solves of the full system.
fn solve_full<B: Backend>(
    backend: &B,
    gauge: &B::Gauge,
    params: &InvertParams,
    x: &mut B::Spinor,
    b: &B::Spinor,
    solver_params: &SolverParams,
    monitor: &dyn Monitor,
) -> Result<(SolverStats, f64)> {
    let mut m = WilsonFull::new(backend, gauge, params.kappa, params.precision);
    let flops = m.flops();
    match (params.solver, params.solve_type) {
        // CG on a non-Hermitian M is CG on the normal equations.
        (SolverType::Cg, _) => Ok((
            cgnr::solve(backend, &mut m, x, b, solver_params, monitor)?,
            flops,
        )),
        (SolverType::BiCgStab, SolveType::NormOp) => {
            let mut bn = backend.alloc_spinor(m.lattice(), Subset::Full, m.precision())?;
            m.apply(&mut bn, b, true)?;
            let mut a = Normal::new(backend, m)?;
            let stats = bicgstab::solve(backend, &mut a, x, &bn, solver_params, monitor)?;
            Ok((stats, 2.0 * flops))
        }
        (SolverType::BiCgStab, _) => {
            let mut a = Direct(m);
            Ok((
                bicgstab::solve(backend, &mut a, x, b, solver_params, monitor)?,
                flops,
            ))
        }
    }
}

/// The parity a preconditioned solve lives on.
pub fn matpc_parity(matpc: MatPc) -> Parity {
    match matpc {
        MatPc::EvenEven | MatPc::EvenEvenAsymmetric => Parity::Even,
        MatPc::OddOdd | MatPc::OddOddAsymmetric => Parity::Odd,
    }
}

/// Even-odd solve; `x` (host, full) carries the guess in and the answer out.
#[allow(clippy::too_many_arguments)]
fn solve_even_odd<B: Backend>(
    backend: &B,
    gauge: &B::Gauge,
    params: &InvertParams,
    b: &B::Spinor,
    b2: f64,
    x: &mut HostSpinor,
    solver_params: &SolverParams,
    monitor: &dyn Monitor,
) -> Result<(SolverStats, f64)> {
    let lat = x.lattice().clone();
    let (p, q) = (
        matpc_parity(params.matpc),
        matpc_parity(params.matpc).other(),
    );
    let prec = params.precision;
    let kappa = params.kappa;
    let mut mhat = WilsonEvenOdd::new(backend, gauge, kappa, p, prec)?;
    let flops = mhat.flops();

    // b̂_p = b_p + κ D_{p p̄} b_p̄
    let mut b_hat = backend.alloc_spinor(&lat, Subset::Single(p), prec)?;
    backend.wilson_dslash(&mut b_hat, p, gauge, b, false, kappa, Some(b))?;
    let b_hat2 = backend.norm2(&b_hat)?;
    let mut sp = *solver_params;
    if b_hat2 > 0.0 {
        sp.tol = (solver_params.tol * (b2 / b_hat2).sqrt()).min(0.5);
    }

    let mut xp = backend.alloc_spinor(&lat, Subset::Single(p), prec)?;
    backend.upload_spinor(&mut xp, &x.parity_part(p))?;
    let stats = match (params.solver, params.solve_type) {
        (SolverType::Cg, _) => cgnr::solve(backend, &mut mhat, &mut xp, &b_hat, &sp, monitor)?,
        (SolverType::BiCgStab, SolveType::NormOpPc) => {
            let mut bn = backend.alloc_spinor(&lat, Subset::Single(p), prec)?;
            mhat.apply(&mut bn, &b_hat, true)?;
            let mut a = Normal::new(backend, mhat)?;
            let s = bicgstab::solve(backend, &mut a, &mut xp, &bn, &sp, monitor)?;
            return finish_even_odd(backend, gauge, kappa, (p, q), b, &xp, x, (s, 2.0 * flops));
        }
        (SolverType::BiCgStab, _) => {
            bicgstab::solve(backend, &mut Direct(mhat), &mut xp, &b_hat, &sp, monitor)?
        }
    };
    finish_even_odd(backend, gauge, kappa, (p, q), b, &xp, x, (stats, flops))
}

/// `x_p̄ = b_p̄ + κ D_{p̄ p} x_p`, and both halves into the host solution.
#[allow(clippy::too_many_arguments)]
fn finish_even_odd<B: Backend>(
    backend: &B,
    gauge: &B::Gauge,
    kappa: f64,
    (p, q): (Parity, Parity),
    b: &B::Spinor,
    xp: &B::Spinor,
    x: &mut HostSpinor,
    out: (SolverStats, f64),
) -> Result<(SolverStats, f64)> {
    let lat = x.lattice().clone();
    let mut xq = backend.alloc_spinor(&lat, Subset::Single(q), xp.precision())?;
    backend.wilson_dslash(&mut xq, q, gauge, xp, false, kappa, Some(b))?;
    let mut host = HostSpinor::zeros(lat.clone(), Subset::Single(p));
    backend.download_spinor(xp, &mut host)?;
    x.set_parity_part(p, &host);
    let mut host = HostSpinor::zeros(lat, Subset::Single(q));
    backend.download_spinor(&xq, &mut host)?;
    x.set_parity_part(q, &host);
    Ok(out)
}

/// `out = op in` on full host fields, in the caller's normalization.
pub fn apply<B: Backend>(
    backend: &B,
    gauge: &B::Gauge,
    params: &InvertParams,
    op: OperatorKind,
    input: &HostSpinor,
    out: &mut HostSpinor,
) -> Result<()> {
    let lat = input.lattice().clone();
    let prec = params.precision;
    let mut i = backend.alloc_spinor(&lat, Subset::Full, prec)?;
    let mut o = backend.alloc_spinor(&lat, Subset::Full, prec)?;
    backend.upload_spinor(&mut i, input)?;
    let mut m = WilsonFull::new(backend, gauge, params.kappa, prec);
    // M in the caller's normalization is the kappa one divided by this.
    let norm = params.source_scale();
    match op {
        OperatorKind::M | OperatorKind::MDag => {
            m.apply(&mut o, &i, op == OperatorKind::MDag)?;
            backend.ax(1.0 / norm, &mut o)?;
        }
        OperatorKind::MDagM => {
            let mut t = backend.alloc_spinor(&lat, Subset::Full, prec)?;
            m.apply(&mut t, &i, false)?;
            m.apply(&mut o, &t, true)?;
            backend.ax(1.0 / (norm * norm), &mut o)?;
        }
        OperatorKind::Dslash => {
            for p in [Parity::Even, Parity::Odd] {
                backend.wilson_dslash(&mut o, p, gauge, &i, false, 1.0, None)?;
            }
        }
    }
    backend.download_spinor(&o, out)
}
