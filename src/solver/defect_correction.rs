//! Defect correction (iterative refinement; seed clark2010 Algorithm 1,
//! seed cps-mixed-precision-cg §3.1): the residual is computed and the
//! solution accumulated in high precision, and each correction is solved in
//! the sloppy precision to the inner tolerance `ε_in`:
//!
//! ```text
//! r = b − A x
//! while ‖r‖ > ε ‖b‖:  solve A_sloppy e = r to ε_in;  x += e;  r = b − A x
//! ```
//! The Krylov space is discarded at each restart (the cost the reliable
//! updates avoid). `ε_in` must exceed the sloppy precision's epsilon.
//! `solve_corrected` is the variant of the cps seed §3.2 that carries the
//! CG direction into the next inner solve.

use super::{true_residual, SolverStats};
use crate::backend::Backend;
use crate::dirac::LinearOperator;
use crate::error::{Error, Result};
use crate::solver::{MixedParams, SolverParams};

/// The inner (sloppy) solve: `inner(e, r, params)` solves `A_sloppy e = r`.
pub type InnerSolve<'a, B> = dyn FnMut(
        &mut <B as Backend>::Spinor,
        &<B as Backend>::Spinor,
        &SolverParams,
    ) -> Result<SolverStats>
    + 'a;

/// Solves `A x = b`. `inner(e, r, params)` solves the sloppy system
/// `A_sloppy e = r` from `e = 0` with the given parameters.
pub fn solve<B: Backend, A: LinearOperator<B>>(
    backend: &B,
    a: &mut A,
    sloppy: crate::precision::Precision,
    x: &mut B::Spinor,
    b: &B::Spinor,
    params: &MixedParams,
    inner: &mut InnerSolve<'_, B>,
) -> Result<SolverStats> {
    let (lat, subset, hi) = (a.lattice().clone(), a.subset(), a.precision());
    let fermion = a.fermion();
    let mut r = backend.alloc_field(&lat, subset, hi, fermion)?;
    let mut rs = backend.alloc_field(&lat, subset, sloppy, fermion)?;
    let mut es = backend.alloc_field(&lat, subset, sloppy, fermion)?;
    let mut stats = SolverStats::default();

    let b2 = backend.norm2(b)?;
    if b2 == 0.0 {
        backend.zero(x)?;
        stats.converged = true;
        return Ok(stats);
    }
    let stop = params.tol * params.tol * b2;
    let mut rr = true_residual(backend, a, x, b, &mut r)?;
    stats.matvecs += 1;
    while rr > stop && stats.iterations < params.maxiter {
        // Aim the inner solve at ε_in, but no further than the outer target.
        let target = params.tol_inner.max(0.5 * (stop / rr).sqrt());
        backend.copy(&mut rs, &r)?;
        backend.zero(&mut es)?;
        let inner_params = SolverParams {
            tol: target.min(0.5),
            maxiter: params.maxiter - stats.iterations,
            progress_every: params.progress_every,
            confirm: false,
        };
        let s = inner(&mut es, &rs, &inner_params)?;
        stats.iterations += s.iterations;
        stats.matvecs += s.matvecs;
        stats.restarts += 1;
        backend.axpy_many(&[1.0], &[&es], x)?;
        let rr_new = true_residual(backend, a, x, b, &mut r)?;
        stats.matvecs += 1;
        stats.reliable_updates += 1;
        if s.iterations == 0 && rr_new >= rr {
            break; // the inner solver can make no progress
        }
        rr = rr_new;
    }
    stats.converged = rr <= stop;
    stats.iterated_residual = (rr / b2).sqrt();
    Ok(stats)
}

/// Corrected defect correction (seed cps-mixed-precision-cg §3.2, eq. 3.1),
/// for a Hermitian positive definite `A` with an inner CG: each inner solve
/// starts from `y_0 = 0`, `r_0^y = r_k` (the true residual) and, after the
/// first, the direction `d_0^y = r_k + β d` carried from the previous inner
/// solve, so the outer restart does not throw the Krylov direction away:
///
/// ```text
/// r = b − A x;  d = r
/// while ‖r‖ > ε ‖b‖:
///     inner CG on A_sloppy y = r from y = 0, first direction d, to ε_in
///     (its last direction d and the |r_n|² it was built from are kept)
///     x += y;  r = b − A x;  d = r + (|r|² / |r_n|²) d
/// ```
/// The β is the CG one with the true residual in place of the inner
/// iterated `r_{n+1}`: in exact arithmetic the two coincide, so the inner
/// iterations continue one CG recurrence across the outer restarts. In
/// floating point `d` is re-projected orthogonal to the new `r` first.
pub fn solve_corrected<B: Backend, A: LinearOperator<B>, S: LinearOperator<B>>(
    backend: &B,
    a: &mut A,
    a_sloppy: &mut S,
    x: &mut B::Spinor,
    b: &B::Spinor,
    params: &MixedParams,
) -> Result<SolverStats> {
    let (lat, subset, hi, lo) = (
        a.lattice().clone(),
        a.subset(),
        a.precision(),
        a_sloppy.precision(),
    );
    let fermion = a.fermion();
    let mut r = backend.alloc_field(&lat, subset, hi, fermion)?;
    let alloc = || backend.alloc_field(&lat, subset, lo, fermion);
    let (mut rs, mut y, mut d, mut ad) = (alloc()?, alloc()?, alloc()?, alloc()?);
    let mut stats = SolverStats::default();

    let b2 = backend.norm2(b)?;
    if b2 == 0.0 {
        backend.zero(x)?;
        stats.converged = true;
        return Ok(stats);
    }
    let stop = params.tol * params.tol * b2;
    let mut rr = true_residual(backend, a, x, b, &mut r)?;
    stats.matvecs += 1;
    // |r_n|² of the residual the carried direction was built from.
    let mut rr_dir: Option<f64> = None;
    while rr > stop && stats.iterations < params.maxiter {
        let target = params.tol_inner.max(0.5 * (stop / rr).sqrt()).min(0.5);
        let inner_stop = target * target * rr;
        backend.copy(&mut rs, &r)?;
        backend.zero(&mut y)?;
        // d_0 = r + β d (eq. 3.1), or r on the first pass. CG's step
        // α = |r|²/(d, A d) assumes (r, d_old) = 0, which the true residual
        // satisfies only to the sloppy format's rounding: d_old is first
        // re-projected orthogonal to r, as at the reliable updates of seed
        // clark2022 §3.1 (without it, half precision needed 3.5 times the
        // iterations of plain defect correction on the docs/numerics.md field).
        match rr_dir {
            Some(rn) => {
                let rd = backend.cdot(&rs, &d)?;
                backend.caxpy(-rd / rr, &rs, &mut d)?;
                backend.xpay(&rs, rr / rn, &mut d)?;
            }
            None => backend.copy(&mut d, &rs)?,
        }
        let mut rr_in = rr;
        let mut inner = 0;
        loop {
            let dad = a_sloppy.apply_with_curvature(backend, &mut ad, &d)?;
            stats.matvecs += 1;
            if dad.is_nan() || dad <= 0.0 {
                return Err(Error::Breakdown(format!(
                    "corrected defect correction: (d, A d) = {dad:e} at iteration {}: \
                     the operator is not positive definite",
                    stats.iterations
                )));
            }
            let alpha = rr_in / dad;
            backend.axpy(alpha, &d, &mut y)?;
            let rr_new = backend.axpy_norm2(-alpha, &ad, &mut rs)?;
            inner += 1;
            stats.iterations += 1;
            if rr_new <= inner_stop || stats.iterations >= params.maxiter {
                // d was built from the residual of norm² rr_in.
                rr_dir = Some(rr_in);
                break;
            }
            backend.xpay(&rs, rr_new / rr_in, &mut d)?;
            rr_in = rr_new;
        }
        stats.restarts += 1;
        backend.axpy_many(&[1.0], &[&y], x)?;
        let rr_new = true_residual(backend, a, x, b, &mut r)?;
        stats.matvecs += 1;
        stats.reliable_updates += 1;
        if inner == 0 && rr_new >= rr {
            break;
        }
        rr = rr_new;
    }
    stats.converged = rr <= stop;
    stats.iterated_residual = (rr / b2).sqrt();
    Ok(stats)
}
