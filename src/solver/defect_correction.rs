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

use super::{true_residual, SolverStats};
use crate::backend::Backend;
use crate::dirac::LinearOperator;
use crate::error::Result;
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
    let mut r = backend.alloc_spinor(&lat, subset, hi)?;
    let mut e_hi = backend.alloc_spinor(&lat, subset, hi)?;
    let mut rs = backend.alloc_spinor(&lat, subset, sloppy)?;
    let mut es = backend.alloc_spinor(&lat, subset, sloppy)?;
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
        backend.copy(&mut e_hi, &es)?;
        backend.axpy(1.0, &e_hi, x)?;
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
