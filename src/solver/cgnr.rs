//! CG on the normal equations `M† M x = M† b` for a non-Hermitian `M`, in
//! the CGLS form: it carries the residual of `M x = b` itself, so it stops
//! on `‖b − M x‖ / ‖b‖` (the caller's tolerance) rather than on the residual
//! of the normal equations, whose relation to it depends on the condition
//! number. Same iterates as CGNR (seed clark2010 §5.1).
//!
//! ```text
//! r = b − M x;  s = M† r;  p = s;  γ = ‖s‖²
//! repeat:  q = M p;  α = γ/‖q‖²;  x += α p;  r −= α q
//!          s = M† r;  β = ‖s‖²/γ;  p = s + β p
//! ```

use super::{report, Monitor, SolverParams, SolverStats};
use crate::backend::Backend;
use crate::dirac::DiracOperator;
use crate::error::{Error, Result};

/// Solves `M x = b` with `x` as the initial guess.
pub fn solve<B: Backend, D: DiracOperator<B>>(
    backend: &B,
    m: &mut D,
    x: &mut B::Spinor,
    b: &B::Spinor,
    params: &SolverParams,
    monitor: &dyn Monitor,
) -> Result<SolverStats> {
    let (lat, subset, prec) = (m.lattice().clone(), m.subset(), m.precision());
    let fermion = m.fermion();
    let mut r = backend.alloc_field(&lat, subset, prec, fermion)?;
    let mut s = backend.alloc_field(&lat, subset, prec, fermion)?;
    let mut p = backend.alloc_field(&lat, subset, prec, fermion)?;
    let mut q = backend.alloc_field(&lat, subset, prec, fermion)?;
    let mut stats = SolverStats::default();

    let b2 = backend.norm2(b)?;
    if b2 == 0.0 {
        backend.zero(x)?;
        stats.converged = true;
        return Ok(stats);
    }
    let stop = params.tol * params.tol * b2;

    let (mut rr, mut gamma) = restart(backend, m, x, b, &mut r, &mut s, &mut p)?;
    stats.matvecs += 2;
    let mut k = 0;
    while k < params.maxiter {
        if rr <= stop {
            let (true_rr, g) = restart(backend, m, x, b, &mut r, &mut s, &mut p)?;
            stats.matvecs += 2;
            rr = true_rr;
            gamma = g;
            if rr <= stop {
                stats.converged = true;
                break;
            }
            stats.restarts += 1;
        }
        m.apply(&mut q, &p, false)?;
        let qq = backend.norm2(&q)?;
        if qq.is_nan() || qq <= 0.0 {
            return Err(Error::Breakdown(format!(
                "CGNR: ‖M p‖² = {qq:e} at iteration {k}"
            )));
        }
        let alpha = gamma / qq;
        backend.axpy(alpha, &p, x)?;
        rr = backend.axpy_norm2(-alpha, &q, &mut r)?;
        k += 1;
        report(monitor, params, "CGNR", k, (rr / b2).sqrt());
        if rr <= stop {
            continue;
        }
        m.apply(&mut s, &r, true)?;
        stats.matvecs += 2;
        let gamma_new = backend.norm2(&s)?;
        backend.xpay(&s, gamma_new / gamma, &mut p)?;
        gamma = gamma_new;
    }
    if !stats.converged && rr <= stop {
        m.apply(&mut r, x, false)?;
        stats.matvecs += 1;
        rr = backend.xmy_norm2(b, &mut r)?;
        stats.converged = rr <= stop;
    }
    stats.iterations = k;
    stats.iterated_residual = (rr / b2).sqrt();
    Ok(stats)
}

/// `r = b − M x`, `s = M† r`, `p = s`; returns `(‖r‖², ‖s‖²)`.
fn restart<B: Backend, D: DiracOperator<B>>(
    backend: &B,
    m: &mut D,
    x: &B::Spinor,
    b: &B::Spinor,
    r: &mut B::Spinor,
    s: &mut B::Spinor,
    p: &mut B::Spinor,
) -> Result<(f64, f64)> {
    m.apply(r, x, false)?;
    let rr = backend.xmy_norm2(b, r)?;
    m.apply(s, r, true)?;
    backend.copy(p, s)?;
    Ok((rr, backend.norm2(s)?))
}
