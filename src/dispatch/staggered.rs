//! Staggered solves and applications on a backend (docs/conventions.md,
//! "The staggered operator"): `M = 2m − D` solved
//! - even-odd: CG on `M̂ = 4m² − D_pq D_qp` (Hermitian positive definite)
//!   for `x_p`, then `x_q = (b_q + D_qp x_p)/2m`;
//! - full: CG on `M† M` (CGNR; `M† M = 4m² − D²` is block diagonal).
//!
//! `params.solver` may instead be BiCGstab or BiCGstab(l) (seed clark2022
//! §6.1's HISQ solves): on `M̂` even-odd, on the non-Hermitian `M` itself
//! for the full system (`krylov`).
//!
//! With `tol_hq` set, MILC's heavy-quark residual is a second stop
//! criterion: while it is above `tol_hq` the solve continues from its
//! solution with a tighter L2 tolerance.
//!
//! The even-odd CG stops on the Schur residual that makes the full system's
//! `‖b − M x‖/‖b‖` meet `tol` (`r = r̂/2m` on parity p, 0 on q).
//!
//! Mixed precision: CG with reliable updates (stabilised as clark2022 §3.1
//! unless asked otherwise) on the sloppy copy of the links. The true
//! residual `‖b − M x‖/‖b‖` of the full system is recomputed afterwards.

use crate::api::multi::MultiResult;
use crate::api::{InvertResult, SolverType, StaggeredInvertParams, StaggeredOp, StaggeredSolve};
use crate::backend::{Backend, OperatorFamily, SpinorField};
use crate::dirac::staggered::{StaggeredEvenOdd, StaggeredFull, StaggeredSchur};
use crate::dirac::{DiracOperator, Direct, LinearOperator, Normal};
use crate::error::{Error, Result};
use crate::field::Fermion;
use crate::lattice::Subset;
use crate::precision::Precision;
use crate::solver::multishift_cg::{self, MultiShiftParams};
use crate::solver::{
    bicgstab, bicgstab_l, bicgstab_reliable, cg, cg_reliable, cgnr, MixedParams, Monitor,
    SolverParams, SolverStats,
};

/// Readies the backend's code for solves in `params`' precisions
/// (`Backend::prepare`).
pub(crate) fn prepare<B: Backend>(backend: &B, params: &StaggeredInvertParams) -> Result<()> {
    let any = crate::precision::Reconstruct::Full18;
    backend.prepare(
        OperatorFamily::Staggered,
        &[(params.precision, any), (params.precision_sloppy, any)],
    )
}

/// Solves `M x = b`; `x` holds the initial guess on entry.
pub fn invert<B: Backend>(
    backend: &B,
    links: &B::StaggeredLinks,
    links_sloppy: &B::StaggeredLinks,
    params: &StaggeredInvertParams,
    b: &B::Spinor,
    xd: &mut B::Spinor,
    monitor: &dyn Monitor,
) -> Result<InvertResult> {
    prepare(backend, params)?;
    let lat = b.lattice().clone();
    let (hi, m) = (params.precision, params.mass);
    if m == 0.0 && matches!(params.solve, StaggeredSolve::EvenOdd(_)) {
        return Err(Error::InvalidArgument(
            "mass = 0: the even-odd solve of the full system reconstructs x_q = (b_q + D x_p)/2m; \
             solve the full system (normal equations) or the parity system instead"
                .into(),
        ));
    }
    check_field(b, Subset::Full, hi, "source")?;
    check_field(xd, Subset::Full, hi, "solution")?;
    let alloc = |sub, prec| backend.alloc_field(&lat, sub, prec, Fermion::Staggered);

    let start = std::time::Instant::now();
    let bb = backend.norm2(b)?;
    let mut r = alloc(Subset::Full, hi)?;
    let mut flops = 0.0f64;
    let (total, true_residual, hq) = heavy_quark_rounds(params, bb, |tol, left| {
        let (stats, f) = solve_once(
            backend,
            links,
            links_sloppy,
            params,
            tol,
            left,
            b,
            xd,
            monitor,
        )?;
        flops += f * stats.iterations as f64;
        // The true residual of the full system, and its heavy-quark form.
        StaggeredFull::new(backend, links, m, hi).apply(&mut r, xd, false)?;
        let rr = backend.xmy_norm2(b, &mut r)?;
        let hq = backend.heavy_quark_residual2(xd, &r)?.sqrt();
        Ok((stats, rr, hq))
    })?;
    let seconds = start.elapsed().as_secs_f64();
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
        converged: params.met(true_residual, hq) || bb == 0.0,
        restarts: total.restarts,
        reliable_updates: total.reliable_updates,
        true_residual_hq: hq,
    })
}

/// One CG solve of `M x = b` to the relative residual `tol` of the full
/// system in at most `maxiter` iterations, from the guess in `xd`: on the
/// Schur system of an even-odd `params.solve` (the other parity
/// reconstructed), or on the normal equations. Returns the solver's
/// statistics and the flops of one iteration's operator.
#[allow(clippy::too_many_arguments)]
fn solve_once<B: Backend>(
    backend: &B,
    links: &B::StaggeredLinks,
    links_sloppy: &B::StaggeredLinks,
    params: &StaggeredInvertParams,
    tol: f64,
    maxiter: usize,
    b: &B::Spinor,
    xd: &mut B::Spinor,
    monitor: &dyn Monitor,
) -> Result<(SolverStats, f64)> {
    let lat = b.lattice().clone();
    let (hi, lo, m) = (params.precision, params.precision_sloppy, params.mass);
    let alloc = |sub, prec| backend.alloc_field(&lat, sub, prec, Fermion::Staggered);
    let mixed = MixedParams {
        tol,
        maxiter,
        progress_every: params.progress_every,
        delta: params.reliable_delta,
        tol_inner: 0.1,
    };
    Ok(match params.solve {
        StaggeredSolve::EvenOdd(p) => {
            let mut rhs = alloc(Subset::Single(p), hi)?;
            StaggeredSchur::prepare(backend, links, m, p, b, &mut rhs)?;
            // After the reconstruction b − M x vanishes on q and is r̂/2m on
            // p (r̂ the Schur residual): the Schur tolerance that meets tol
            // on the full system.
            let mixed = MixedParams {
                tol: inner_tol(backend, tol, 2.0 * m, b, &rhs)?,
                ..mixed
            };
            let mut xp = alloc(Subset::Single(p), hi)?;
            backend.extract_parity(&mut xp, xd, p)?;
            let mut a = Direct(StaggeredEvenOdd::new(backend, links, m, p, hi)?);
            let flops = a.0.flops();
            let mut a_lo = Direct(StaggeredEvenOdd::new(backend, links_sloppy, m, p, lo)?);
            let stats = krylov(
                backend, params, &mut a, &mut a_lo, &mut xp, &rhs, &mixed, monitor,
            )?;
            backend.insert_parity(xd, p, &xp)?;
            StaggeredSchur::reconstruct(backend, links, m, p, b, xd)?;
            (stats, flops)
        }
        StaggeredSolve::Full if params.solver != SolverType::Cg => {
            // BiCGstab and BiCGstab(l) iterate on the non-Hermitian M itself.
            let mut a = Direct(StaggeredFull::new(backend, links, m, hi));
            let mut a_lo = Direct(StaggeredFull::new(backend, links_sloppy, m, lo));
            let flops = a.0.flops();
            let stats = krylov(backend, params, &mut a, &mut a_lo, xd, b, &mixed, monitor)?;
            (stats, flops)
        }
        StaggeredSolve::Full => {
            let mut op = StaggeredFull::new(backend, links, m, hi);
            let flops = 2.0 * op.flops();
            let stats = if lo == hi {
                let sp: SolverParams = mixed.progress();
                cgnr::solve(backend, &mut op, xd, b, &sp, monitor)?
            } else {
                let mut bn = alloc(Subset::Full, hi)?;
                op.apply(&mut bn, b, true)?;
                // ‖b − M x‖ ≤ ‖M†(b − M x)‖ / 2m (M is normal, |2m + iλ| ≥ 2m):
                // the normal-equation tolerance that meets tol on M x = b.
                let mixed = MixedParams {
                    tol: inner_tol(backend, tol, 2.0 * m, b, &bn)?,
                    ..mixed
                };
                let mut a = crate::dirac::Normal::new(backend, op)?;
                let mut a_lo = crate::dirac::Normal::new(
                    backend,
                    StaggeredFull::new(backend, links_sloppy, m, lo),
                )?;
                let stabilised = params.cg_stabilised;
                cg_reliable::solve(
                    backend, &mut a, &mut a_lo, xd, &bn, &mixed, stabilised, monitor,
                )?
            };
            (stats, flops)
        }
    })
}

/// Solves the even-odd system itself, `M̂ x_p = b_p` with `M̂ = 4m² −
/// D_pq D_qp` on the parity p of `params.solve` (which must be even-odd):
/// `source` and `x` are fields of that parity, `x` the initial guess (the
/// system MILC's `ks_congrad_parity` hands QUDA). CG, or mixed CG with
/// reliable updates (clark2022 §3.1); `tol` is the relative residual of
/// this system. The heavy-quark residual of the answer is reported.
pub fn invert_parity<B: Backend>(
    backend: &B,
    links: &B::StaggeredLinks,
    links_sloppy: &B::StaggeredLinks,
    params: &StaggeredInvertParams,
    b: &B::Spinor,
    xp: &mut B::Spinor,
    monitor: &dyn Monitor,
) -> Result<InvertResult> {
    let StaggeredSolve::EvenOdd(p) = params.solve else {
        return Err(crate::error::Error::InvalidArgument(
            "solve = Full: the parity system needs an even-odd solve".into(),
        ));
    };
    prepare(backend, params)?;
    let lat = b.lattice().clone();
    let (hi, lo, m) = (params.precision, params.precision_sloppy, params.mass);
    check_field(b, Subset::Single(p), hi, "source")?;
    check_field(xp, Subset::Single(p), hi, "solution")?;
    let alloc = || backend.alloc_field(&lat, Subset::Single(p), hi, Fermion::Staggered);
    let start = std::time::Instant::now();
    let mut a = Direct(StaggeredEvenOdd::new(backend, links, m, p, hi)?);
    let mut a_lo = Direct(StaggeredEvenOdd::new(backend, links_sloppy, m, p, lo)?);
    let flops = a.0.flops();
    let bb = backend.norm2(b)?;
    let mut r = alloc()?;
    let (total, true_residual, hq) = heavy_quark_rounds(params, bb, |tol, left| {
        let mixed = MixedParams {
            tol,
            maxiter: left,
            progress_every: params.progress_every,
            delta: params.reliable_delta,
            tol_inner: 0.1,
        };
        let stats = krylov(backend, params, &mut a, &mut a_lo, xp, b, &mixed, monitor)?;
        let rr = crate::solver::true_residual(backend, &mut a, xp, b, &mut r)?;
        let hq = backend.heavy_quark_residual2(xp, &r)?.sqrt();
        Ok((stats, rr, hq))
    })?;
    let seconds = start.elapsed().as_secs_f64();
    Ok(InvertResult {
        iterations: total.iterations,
        true_residual,
        iterated_residual: total.iterated_residual,
        seconds,
        gflops: flops * total.iterations as f64 * backend.ranks() as f64 / seconds.max(1e-12) / 1e9,
        converged: params.met(true_residual, hq) || bb == 0.0,
        restarts: total.restarts,
        reliable_updates: total.reliable_updates,
        true_residual_hq: hq,
    })
}

/// One solve of `a x = b` from the guess in `x` by `params.solver`, mixed
/// by reliable updates on `a_sloppy` where the sloppy precision differs:
/// CG (`a` Hermitian positive definite: `M̂` or `M†M`), BiCGstab or
/// BiCGstab(l) (any `a`: `M̂` or `M` itself; seed clark2022 §6.1).
#[allow(clippy::too_many_arguments)]
fn krylov<B: Backend, A: LinearOperator<B>, S: LinearOperator<B>>(
    backend: &B,
    params: &StaggeredInvertParams,
    a: &mut A,
    a_sloppy: &mut S,
    x: &mut B::Spinor,
    b: &B::Spinor,
    mixed: &MixedParams,
    monitor: &dyn Monitor,
) -> Result<SolverStats> {
    let plain = params.precision_sloppy == params.precision;
    match params.solver {
        SolverType::Cg if plain => cg::solve(backend, a, x, b, &mixed.progress(), monitor),
        SolverType::Cg => {
            let stabilised = params.cg_stabilised;
            cg_reliable::solve(backend, a, a_sloppy, x, b, mixed, stabilised, monitor)
        }
        SolverType::BiCgStab if plain => {
            bicgstab::solve(backend, a, x, b, &mixed.progress(), monitor)
        }
        SolverType::BiCgStab => {
            bicgstab_reliable::solve(backend, a, a_sloppy, x, b, mixed, monitor)
        }
        SolverType::BiCgStabL => bicgstab_l::solve(
            backend,
            a,
            a_sloppy,
            x,
            b,
            params.bicgstab_l,
            mixed,
            monitor,
        ),
        SolverType::Gcr => Err(Error::Internal(
            "a staggered GCR solve passed validation".into(),
        )),
    }
}

/// The rounds of a solve with MILC's heavy-quark residual as a second stop
/// criterion (QUDA's QUDA_HEAVY_QUARK_RESIDUAL): `round(tol, maxiter)`
/// solves on from the current solution to the L2 tolerance `tol` and
/// returns its statistics, `‖b − M x‖²` and the heavy-quark residual of its
/// answer; while that is above `params.tol_hq` the next round runs with a
/// tighter L2 tolerance (cut by the ratio still to go, between 2× and 100×,
/// not below ten roundoffs). `bb` is `‖b‖²`. Returns the summed statistics,
/// the true relative residual and the heavy-quark residual of the last round.
fn heavy_quark_rounds(
    params: &StaggeredInvertParams,
    bb: f64,
    mut round: impl FnMut(f64, usize) -> Result<(SolverStats, f64, f64)>,
) -> Result<(SolverStats, f64, f64)> {
    let mut total = SolverStats::default();
    let mut tol = params.first_l2_tol();
    let floor = 10.0 * params.precision.epsilon();
    loop {
        let left = params.maxiter.saturating_sub(total.iterations).max(1);
        let (stats, rr, hq) = round(tol, left)?;
        total.iterations += stats.iterations;
        total.restarts += stats.restarts;
        total.reliable_updates += stats.reliable_updates;
        total.iterated_residual = stats.iterated_residual;
        let true_residual = if bb > 0.0 { (rr / bb).sqrt() } else { 0.0 };
        let hq_met = params.tol_hq == 0.0 || hq <= params.tol_hq;
        if hq_met || total.iterations >= params.maxiter || tol <= floor || bb == 0.0 {
            return Ok((total, true_residual, hq));
        }
        tol = (tol * (params.tol_hq / hq).clamp(0.01, 0.5)).max(floor);
    }
}

/// The Hermitian positive definite operator of a staggered multi-shift
/// solve: `M̂ = 4m² − D_pq D_qp` on parity p, or `M†M` on the full lattice.
fn hpd_operator<'a, B: Backend>(
    backend: &'a B,
    links: &'a B::StaggeredLinks,
    mass: f64,
    solve: StaggeredSolve,
    precision: crate::precision::Precision,
) -> Result<Box<dyn LinearOperator<B> + 'a>> {
    Ok(match solve {
        StaggeredSolve::EvenOdd(p) => Box::new(Direct(StaggeredEvenOdd::new(
            backend, links, mass, p, precision,
        )?)),
        StaggeredSolve::Full => Box::new(Normal::new(
            backend,
            StaggeredFull::new(backend, links, mass, precision),
        )?),
    })
}

/// Solves `(A + σ_i) x_i = b` for every shift, `A = M̂` on the parity of an
/// even-odd `params.solve` (the RHMC systems MILC gives QUDA) or `M†M` for
/// a full one; `b` and the `x_i` are fields of that subset. Multi-shift CG
/// with mixed precision and per-shift refinement (clark2022 §3.2), the
/// refinement in `params.precision_refinement` on `links_refinement` (its
/// copy of the links; the sloppy one when that is None).
#[allow(clippy::too_many_arguments)]
pub fn invert_multishift<B: Backend>(
    backend: &B,
    links: &B::StaggeredLinks,
    links_sloppy: &B::StaggeredLinks,
    links_refinement: &B::StaggeredLinks,
    params: &StaggeredInvertParams,
    shifts: &[f64],
    tols: &[f64],
    b: &B::Spinor,
    monitor: &dyn Monitor,
) -> Result<(MultiResult, Vec<B::Spinor>)> {
    prepare(backend, params)?;
    let lat = b.lattice().clone();
    let sub = b.subset();
    let (hi, lo, m) = (params.precision, params.precision_sloppy, params.mass);
    check_field(b, sub, hi, "source")?;
    let alloc = || backend.alloc_field(&lat, sub, hi, Fermion::Staggered);
    let start = std::time::Instant::now();
    let mut a_box = hpd_operator(backend, links, m, params.solve, hi)?;
    let mut a: &mut dyn LinearOperator<B> = &mut *a_box;
    let flops = a.flops();
    let mut x = (0..shifts.len())
        .map(|_| alloc())
        .collect::<Result<Vec<_>>>()?;
    let mp = MultiShiftParams {
        tols,
        maxiter: params.maxiter,
        progress_every: params.progress_every,
        delta: params.reliable_delta,
        stabilised: params.cg_stabilised,
        measure_phase1: params.measure_multishift_phase,
        refinement: params.multishift_refinement,
    };
    let mut a_lo_box = hpd_operator(
        backend,
        if lo == hi { links } else { links_sloppy },
        m,
        params.solve,
        lo,
    )?;
    let mut a_lo: &mut dyn LinearOperator<B> = &mut *a_lo_box;
    // The refinement in a format of its own (clark2022 §3: int30 phase,
    // int20 refinement), when asked for in a mixed solve and other than the
    // phase's: another precision, or another copy of the links (the same
    // precision with other long-link storage).
    let own_copy = !std::ptr::eq(links_refinement, links_sloppy);
    let mut a_refine_box = match params.precision_refinement {
        Some(rf) if lo != hi && (rf != lo || own_copy) => Some(hpd_operator(
            backend,
            links_refinement,
            m,
            params.solve,
            rf,
        )?),
        _ => None,
    };
    let a_refine = a_refine_box
        .as_mut()
        .map(|r| &mut **r as &mut dyn LinearOperator<B>);
    let stats = multishift_cg::solve(
        backend, &mut a, &mut a_lo, a_refine, shifts, &mut x, b, &mp, monitor,
    )?;

    let result = super::multishift::finish(backend, a, shifts, tols, b, &x, &stats, flops, start)?;
    Ok((result, x))
}

/// Refuses a field of another subset or precision than the solve's.
pub(crate) fn check_field<S: SpinorField>(
    f: &S,
    subset: Subset,
    precision: Precision,
    what: &str,
) -> Result<()> {
    if (f.subset(), f.precision(), f.fermion()) != (subset, precision, Fermion::Staggered) {
        return Err(crate::error::Error::Internal(format!(
            "staggered {what}: a {:?} {:?} {:?} field where {subset:?} {precision:?} colour \
             vectors are needed",
            f.subset(),
            f.precision(),
            f.fermion()
        )));
    }
    Ok(())
}

/// The relative tolerance on a system with source `rhs` that meets `tol`
/// on `M x = b` when its residual bounds the full one times `factor`:
/// `tol · factor · ‖b‖/‖rhs‖`, never looser than `tol`.
pub(crate) fn inner_tol<B: Backend>(
    backend: &B,
    tol: f64,
    factor: f64,
    b: &B::Spinor,
    rhs: &B::Spinor,
) -> Result<f64> {
    let (bb, rr) = (backend.norm2(b)?.sqrt(), backend.norm2(rhs)?.sqrt());
    Ok(if rr > 0.0 {
        (tol * factor * bb / rr).min(tol)
    } else {
        tol
    })
}

/// `out = op in` (single-parity fields for `MPc`, full ones otherwise).
pub fn apply<B: Backend>(
    backend: &B,
    links: &B::StaggeredLinks,
    mass: f64,
    op: StaggeredOp,
    precision: crate::precision::Precision,
    i: &B::Spinor,
    o: &mut B::Spinor,
) -> Result<()> {
    let sub = i.subset();
    check_field(i, sub, precision, "input")?;
    check_field(o, sub, precision, "output")?;
    match op {
        StaggeredOp::Dslash => {
            for p in [crate::lattice::Parity::Even, crate::lattice::Parity::Odd] {
                backend.staggered_dslash(o, p, links, i, 1.0, None)?;
            }
        }
        StaggeredOp::M | StaggeredOp::MDag => {
            let dagger = op == StaggeredOp::MDag;
            StaggeredFull::new(backend, links, mass, precision).apply(o, i, dagger)?;
        }
        StaggeredOp::MPc(p) => {
            StaggeredEvenOdd::new(backend, links, mass, p, precision)?.apply(o, i, false)?;
        }
    }
    Ok(())
}
