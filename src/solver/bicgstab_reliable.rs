//! Mixed-precision BiCGstab with reliable updates (seed clark2010,
//! Algorithm 2 and §5.3): the iteration runs on sloppy fields; whenever the
//! iterated residual has fallen by δ below its maximum since the last
//! update, the partial solution is added to the high-precision solution
//! (group-wise update) and the residual is replaced by the true one,
//! `r = b − A x`, computed in high precision. Four high-precision fields
//! (b, x, r and a temporary) and the sloppy Krylov vectors are needed. A
//! sloppy recurrence that stalls (`STALL_WINDOW`) hands over to the precise
//! BiCGstab, which goes on from the solution reached.

use num_complex::Complex64 as C64;

use super::{report, true_residual, Monitor, SolverParams, SolverStats};
use crate::backend::Backend;
use crate::dirac::LinearOperator;
use crate::error::{Error, Result};
use crate::solver::MixedParams;

/// Below this relative size an inner product counts as zero.
const BREAKDOWN: f64 = 1e-14;

/// Iterations without the residual norm halving (or as many as it took
/// to last halve it, if more) after which the sloppy recurrence counts as
/// stalled. Near κ_c the inner products of a single-precision recurrence
/// sink into its rounding (`|(r̂, r)| ≈ 1e-8 |r̂||r|`, measured at 8⁴,
/// κ = 0.138) and the iterated residual stops falling long before the
/// tolerance, where the double recurrence converges; restarting the
/// shadow vector did not cure it (docs/numerics.md). The solve then goes
/// on in the precise precision from the solution reached.
const STALL_WINDOW: usize = 250;

/// Solves `A x = b`; `a` acts in high precision, `a_sloppy` on the sloppy
/// fields. `x` holds the initial guess.
pub fn solve<B: Backend, A: LinearOperator<B>, S: LinearOperator<B>>(
    backend: &B,
    a: &mut A,
    a_sloppy: &mut S,
    x: &mut B::Spinor,
    b: &B::Spinor,
    params: &MixedParams,
    monitor: &dyn Monitor,
) -> Result<SolverStats> {
    let (lat, subset) = (a.lattice().clone(), a.subset());
    let fermion = a.fermion();
    let (hi, lo) = (a.precision(), a_sloppy.precision());
    let mut r = backend.alloc_field(&lat, subset, hi, fermion)?;
    let mut tmp = backend.alloc_field(&lat, subset, hi, fermion)?;
    let alloc = || backend.alloc_field(&lat, subset, lo, fermion);
    let (mut rs, mut r_hat, mut p, mut v, mut t) =
        (alloc()?, alloc()?, alloc()?, alloc()?, alloc()?);
    // The partial solution x̂ collects every α p and ω s between updates. In
    // a fixed-point format each accumulation would round all of x̂ to the
    // format's ε (1.5e-5 for half) of its norm, an error that the next
    // update exposes in the true residual and that, near κ_c, undoes much of
    // a cycle. So x̂ is kept in single (the arithmetic precision of those
    // formats) when the sloppy format is coarser, as seed clark2022 §3.1
    // keeps CG's solution out of the sloppy format. `bicgstab_update` takes
    // x̂ in single beside the narrow fields (one pass, as for one precision).
    let mut xs = backend.alloc_field(&lat, subset, lo.partial_solution(), fermion)?;
    let mut stats = SolverStats::default();

    let b2 = backend.norm2(b)?;
    if b2 == 0.0 {
        backend.zero(x)?;
        stats.converged = true;
        return Ok(stats);
    }
    let stop = params.tol * params.tol * b2;
    let delta2 = params.delta * params.delta;

    let one = C64::new(1.0, 0.0);
    let mut rr = true_residual(backend, a, x, b, &mut r)?;
    stats.matvecs += 1;
    backend.copy(&mut rs, &r)?;
    backend.copy(&mut r_hat, &rs)?;
    let mut r_hat2 = rr;
    let mut max_rr = rr;
    let (mut rho, mut alpha, mut omega) = (one, one, one);
    let mut fresh = true;

    // (r̂, r) of the next iteration, when the fused update computed it.
    let mut rho_next: Option<C64> = None;
    let mut k = 0;
    // Stagnation watch: the last iteration that halved the best residual.
    let (mut best_rr, mut best_k, mut stalled) = (rr, 0, false);
    while k < params.maxiter {
        if rr <= stop || rr < delta2 * max_rr {
            // Reliable update: x += x̂, r = b − A x, r̂ = r, x̂ = 0.
            backend.axpy_many(&[1.0], &[&xs], x)?;
            backend.zero(&mut xs)?;
            rr = true_residual(backend, a, x, b, &mut r)?;
            stats.matvecs += 1;
            stats.reliable_updates += 1;
            backend.copy(&mut rs, &r)?;
            max_rr = rr;
            // ρ = (r̂, r) stays the iterated one of the fused update (as
            // QUDA's inv_bicgstab_quda.cpp keeps it): recomputed from the
            // true residual it mixes two recurrences in β, which near κ_c
            // measured 3.7× the iterations (8⁴, κ = 0.137, single sloppy).
            if rr <= stop {
                stats.converged = true;
                break;
            }
        }
        let rho_new = match rho_next.take() {
            Some(rho) => rho,
            None => backend.cdot(&r_hat, &rs)?,
        };
        if rho_new.norm() <= BREAKDOWN * (r_hat2 * rr).sqrt() {
            if fresh {
                return Err(breakdown("(r̂, r)", rho_new, k));
            }
            // Restart the shadow space from the current residual.
            backend.copy(&mut r_hat, &rs)?;
            backend.zero(&mut p)?;
            backend.zero(&mut v)?;
            (rho, alpha, omega, r_hat2, fresh) = (one, one, one, rr, true);
            stats.restarts += 1;
            continue;
        }
        let beta = (rho_new / rho) * (alpha / omega);
        backend.cxpaypbz(&rs, -beta * omega, &v, beta, &mut p)?;
        a_sloppy.apply(&mut v, &p)?;
        let (v_r_hat, v2) = backend.cdot_norm2(&v, &r_hat)?;
        let r_hat_v = v_r_hat.conj();
        if r_hat_v.norm() <= BREAKDOWN * (r_hat2 * v2).sqrt() {
            if fresh {
                return Err(breakdown("(r̂, A p)", r_hat_v, k));
            }
            backend.copy(&mut r_hat, &rs)?;
            backend.zero(&mut p)?;
            backend.zero(&mut v)?;
            (rho, alpha, omega, r_hat2, fresh) = (one, one, one, rr, true);
            stats.restarts += 1;
            continue;
        }
        alpha = rho_new / r_hat_v;
        rho = rho_new;
        let ss = backend.caxpy_norm2(-alpha, &v, &mut rs)?;
        k += 1;
        stats.matvecs += 1;
        // The α p term is fused into the update below or, on exit, goes
        // straight into x (the reliable update next adds x̂).
        if ss <= stop {
            backend.copy(&mut tmp, &p)?;
            backend.caxpy(alpha, &tmp, x)?;
            rr = ss;
            max_rr = max_rr.max(rr);
            report(
                monitor,
                &params.progress(),
                "BiCGstab (reliable)",
                k,
                (rr / b2).sqrt(),
            );
            continue;
        }
        a_sloppy.apply(&mut t, &rs)?;
        stats.matvecs += 1;
        let (ts, tt) = backend.cdot_norm2(&t, &rs)?;
        if tt.is_nan() || tt <= 0.0 || ts.norm() == 0.0 {
            return Err(breakdown("ω = (t, s)/(t, t)", ts, k));
        }
        omega = ts / tt;
        // x̂ += α p + ω s, r = s − ω t and the next (r̂, r), in one pass.
        let (rho_r, r2) =
            backend.bicgstab_update(alpha, &p, omega, &mut rs, &mut xs, &t, &r_hat)?;
        (rr, rho_next) = (r2, Some(rho_r));
        max_rr = max_rr.max(rr);
        fresh = false;
        if rr < 0.25 * best_rr {
            (best_rr, best_k) = (rr, k);
        } else if k - best_k >= STALL_WINDOW.max(best_k) {
            stalled = true;
            break;
        }
        report(
            monitor,
            &params.progress(),
            "BiCGstab (reliable)",
            k,
            (rr / b2).sqrt(),
        );
    }
    if stalled {
        // The precise solver goes on from where the sloppy one stalled.
        backend.axpy_many(&[1.0], &[&xs], x)?;
        drop((rs, r_hat, p, v, t, xs, r, tmp));
        let rest = SolverParams {
            maxiter: params.maxiter - k,
            ..params.progress()
        };
        let more = super::bicgstab::solve(backend, a, x, b, &rest, monitor)?;
        stats.iterations = k + more.iterations;
        stats.matvecs += more.matvecs;
        stats.restarts += 1 + more.restarts;
        stats.converged = more.converged;
        stats.iterated_residual = more.iterated_residual;
        return Ok(stats);
    }
    if !stats.converged {
        // Fold in the partial solution and report the true residual.
        backend.axpy_many(&[1.0], &[&xs], x)?;
        rr = true_residual(backend, a, x, b, &mut r)?;
        stats.matvecs += 1;
        stats.converged = rr <= stop;
    }
    stats.iterations = k;
    stats.iterated_residual = (rr / b2).sqrt();
    Ok(stats)
}

fn breakdown(what: &str, value: C64, k: usize) -> Error {
    Error::Breakdown(format!(
        "BiCGstab (reliable updates): {what} = {value} vanished at iteration {k}"
    ))
}
