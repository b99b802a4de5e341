//! Conjugate gradients (Hestenes–Stiefel) for a Hermitian positive definite
//! `A` (here `M†M` or `M̂†M̂`); seed clark2010 §5.1.
//!
//! ```text
//! r = b − A x;  p = r
//! repeat:  α = (r,r)/(p,Ap);  x += α p;  r −= α Ap
//!          β = (r,r)_new/(r,r);  p = r + β p
//! ```

use super::{report, true_residual, Monitor, SolverParams, SolverStats};
use crate::backend::Backend;
use crate::dirac::LinearOperator;
use crate::error::{Error, Result};

/// Solves `A x = b` with `x` as the initial guess.
pub fn solve<B: Backend, A: LinearOperator<B>>(
    backend: &B,
    a: &mut A,
    x: &mut B::Spinor,
    b: &B::Spinor,
    params: &SolverParams,
    monitor: &dyn Monitor,
) -> Result<SolverStats> {
    let (lat, subset, prec) = (a.lattice().clone(), a.subset(), a.precision());
    let fermion = a.fermion();
    let mut r = backend.alloc_field(&lat, subset, prec, fermion)?;
    let mut p = backend.alloc_field(&lat, subset, prec, fermion)?;
    let mut ap = backend.alloc_field(&lat, subset, prec, fermion)?;
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
    backend.copy(&mut p, &r)?;
    let mut k = 0;
    while k < params.maxiter {
        if rr <= stop && !params.confirm {
            stats.converged = true;
            break;
        }
        if rr <= stop {
            // Confirm on the true residual; restart from it if it drifted.
            let true_rr = true_residual(backend, a, x, b, &mut r)?;
            stats.matvecs += 1;
            if true_rr <= stop {
                rr = true_rr;
                stats.converged = true;
                break;
            }
            rr = true_rr;
            backend.copy(&mut p, &r)?;
            stats.restarts += 1;
        }
        let pap = a.apply_with_curvature(backend, &mut ap, &p)?;
        stats.matvecs += 1;
        if pap.is_nan() || pap <= 0.0 {
            return Err(Error::Breakdown(format!(
                "CG: (p, A p) = {pap:e} at iteration {k}: the operator is not positive definite"
            )));
        }
        let alpha = rr / pap;
        backend.axpy(alpha, &p, x)?;
        let rr_new = backend.axpy_norm2(-alpha, &ap, &mut r)?;
        let beta = rr_new / rr;
        rr = rr_new;
        k += 1;
        report(monitor, params, "CG", k, (rr / b2).sqrt());
        if rr > stop {
            backend.xpay(&r, beta, &mut p)?;
        }
    }
    if !stats.converged && rr <= stop {
        // maxiter reached exactly as the iterated residual converged.
        let true_rr = true_residual(backend, a, x, b, &mut r)?;
        stats.matvecs += 1;
        stats.converged = true_rr <= stop;
        rr = true_rr;
    }
    stats.iterations = k;
    stats.iterated_residual = (rr / b2).sqrt();
    Ok(stats)
}
