//! BiCGstab (van der Vorst 1992) for a general `A`; seed clark2010 §5.1.
//!
//! ```text
//! r = b − A x;  r̂ = r;  ρ = α = ω = 1;  v = p = 0
//! repeat:  ρ' = (r̂, r);  β = (ρ'/ρ)(α/ω);  p = r + β (p − ω v)
//!          v = A p;  α = ρ' / (r̂, v);  s = r − α v
//!          t = A s;  ω = (t, s)/(t, t);  x += α p + ω s;  r = s − ω t
//! ```
//! Breakdown: `(r̂, r) = 0` or `(r̂, v) = 0` (the shadow residual became
//! orthogonal) restarts once from the current residual; a breakdown right
//! after a restart, or `t = 0`, `ω = 0`, is reported as `Error::Breakdown`.

use num_complex::Complex64 as C64;

use super::{report, true_residual, Monitor, SolverParams, SolverStats};
use crate::backend::Backend;
use crate::dirac::LinearOperator;
use crate::error::{Error, Result};

/// Below this relative size an inner product counts as zero.
const BREAKDOWN: f64 = 1e-14;

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
    let alloc = || backend.alloc_field(&lat, subset, prec, fermion);
    let (mut r, mut r_hat, mut p, mut v, mut t) =
        (alloc()?, alloc()?, alloc()?, alloc()?, alloc()?);
    let mut stats = SolverStats::default();

    let b2 = backend.norm2(b)?;
    if b2 == 0.0 {
        backend.zero(x)?;
        stats.converged = true;
        return Ok(stats);
    }
    let stop = params.tol * params.tol * b2;

    let one = C64::new(1.0, 0.0);
    let mut rr = true_residual(backend, a, x, b, &mut r)?;
    stats.matvecs += 1;
    let mut fresh = true;
    backend.copy(&mut r_hat, &r)?;
    let (mut rho, mut alpha, mut omega) = (one, one, one);
    let mut r_hat2 = rr;
    backend.zero(&mut p)?;
    backend.zero(&mut v)?;

    // (r̂, r) of the next iteration, when the fused update computed it.
    let mut rho_next: Option<C64> = None;
    let mut k = 0;
    while k < params.maxiter {
        if rr <= stop && !params.confirm {
            stats.converged = true;
            break;
        }
        if rr <= stop {
            let true_rr = true_residual(backend, a, x, b, &mut r)?;
            stats.matvecs += 1;
            rr = true_rr;
            if rr <= stop {
                stats.converged = true;
                break;
            }
            stats.restarts += 1;
            restart(backend, &r, &mut r_hat, &mut p, &mut v)?;
            (rho, alpha, omega, r_hat2, fresh) = (one, one, one, rr, true);
        }
        let rho_new = match rho_next.take() {
            Some(rho) => rho,
            None => backend.cdot(&r_hat, &r)?,
        };
        if rho_new.norm() <= BREAKDOWN * (r_hat2 * rr).sqrt() {
            if fresh {
                return Err(breakdown("(r̂, r)", rho_new, k));
            }
            stats.restarts += 1;
            restart(backend, &r, &mut r_hat, &mut p, &mut v)?;
            (rho, alpha, omega, r_hat2, fresh) = (one, one, one, rr, true);
            continue;
        }
        let beta = (rho_new / rho) * (alpha / omega);
        backend.cxpaypbz(&r, -beta * omega, &v, beta, &mut p)?;
        a.apply(&mut v, &p)?;
        let (v_r_hat, v2) = backend.cdot_norm2(&v, &r_hat)?;
        let r_hat_v = v_r_hat.conj();
        if r_hat_v.norm() <= BREAKDOWN * (r_hat2 * v2).sqrt() {
            if fresh {
                return Err(breakdown("(r̂, A p)", r_hat_v, k));
            }
            stats.restarts += 1;
            restart(backend, &r, &mut r_hat, &mut p, &mut v)?;
            (rho, alpha, omega, r_hat2, fresh) = (one, one, one, rr, true);
            continue;
        }
        alpha = rho_new / r_hat_v;
        rho = rho_new;
        // s = r − α v, held in r.
        let ss = backend.caxpy_norm2(-alpha, &v, &mut r)?;
        k += 1;
        stats.matvecs += 1;
        if ss <= stop {
            backend.caxpy(alpha, &p, x)?;
            rr = ss;
            report(monitor, params, "BiCGstab", k, (rr / b2).sqrt());
            continue;
        }
        a.apply(&mut t, &r)?;
        stats.matvecs += 1;
        let (ts, tt) = backend.cdot_norm2(&t, &r)?;
        if tt.is_nan() || tt <= 0.0 || ts.norm() == 0.0 {
            return Err(breakdown("ω = (t, s)/(t, t)", ts, k));
        }
        omega = ts / tt;
        let (rho_r, r2) = backend.bicgstab_update(alpha, &p, omega, &mut r, x, &t, &r_hat)?;
        (rr, rho_next) = (r2, Some(rho_r));
        fresh = false;
        report(monitor, params, "BiCGstab", k, (rr / b2).sqrt());
    }
    if !stats.converged && rr <= stop {
        rr = true_residual(backend, a, x, b, &mut r)?;
        stats.matvecs += 1;
        stats.converged = rr <= stop;
    }
    stats.iterations = k;
    stats.iterated_residual = (rr / b2).sqrt();
    Ok(stats)
}

/// New shadow residual `r̂ = r`, directions cleared.
fn restart<B: Backend>(
    backend: &B,
    r: &B::Spinor,
    r_hat: &mut B::Spinor,
    p: &mut B::Spinor,
    v: &mut B::Spinor,
) -> Result<()> {
    backend.copy(r_hat, r)?;
    backend.zero(p)?;
    backend.zero(v)
}

fn breakdown(what: &str, value: C64, k: usize) -> Error {
    Error::Breakdown(format!(
        "BiCGstab: {what} = {value} vanished at iteration {k}"
    ))
}
