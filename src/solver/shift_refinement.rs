//! The refinement after a mixed-precision multi-shift phase, every shifted
//! system `(A + σ_i) x_i = b` at once: one reliable-update CG per system
//! (each with its own scalars, residual, direction and reliable updates, as
//! `cg_reliable`), advanced in lockstep so that each iteration applies `A`
//! to the directions of all systems still refining in one block
//! application (`LinearOperator::apply_block`: one pass over the links for
//! all of them, the several-field hopping terms of issue 37). Seed
//! clark2022 §3.2 refines the shifts one after another, each with a fresh
//! Krylov space and its own passes over the links; here the light shifts'
//! refinements ride along the base system's continuation.
//!
//! The systems are independent: the block only shares the operator's
//! passes, so each system runs `cg_reliable`'s recurrence, and a system
//! leaves the block when its true residual meets its target. The base
//! system keeps its Krylov space from the multi-shift phase
//! (`Continuation`). Two differences from `cg_reliable`, both in the
//! rounding only (the iterations agree within two on the golden asqtad
//! system, tests/staggered_golden.rs):
//! - each system's solution since its last reliable update is summed in
//!   `Precision::partial_solution` (single for the formats coarser than
//!   single), where `cg_reliable` buffers the directions and adds them to
//!   the precise solution when stabilised (n systems would need n rings);
//!   `stabilised` brings the other two cures of clark2022 §3.1 (Polak–Ribière
//!   β, the direction re-projected at each update);
//! - with several systems refining, the curvature is `(p, (A + σ) p)` from
//!   the block's images; `Normal`'s `‖M p‖²` form (never negative) is used
//!   when one system is left. A curvature that rounding makes negative is
//!   a breakdown, as in `cg_reliable`.

use super::cg_reliable::{first_direction, reproject, Continuation};
use super::{report, true_residual, MixedParams, Monitor, SolverStats};
use crate::backend::{Backend, SpinorField};
use crate::dirac::{LinearOperator, Shifted};
use crate::error::{Error, Result};

const NAME: &str = "CG (shifts refined together)";

/// One shifted system of the refinement.
pub struct ShiftedSystem<'p, S> {
    pub sigma: f64,
    /// Relative residual target `‖b − (A + σ) x‖ / ‖b‖`.
    pub tol: f64,
    /// The Krylov state the system goes on from (the multi-shift phase's
    /// base system); `None` starts with `p = r`.
    pub cont: Option<Continuation<'p, S>>,
}

/// One system's fields and scalars.
struct SystemState<F> {
    /// Residual and direction, sloppy.
    r: F,
    p: F,
    /// The solution since the last reliable update.
    partial: F,
    /// `|r|²` now and at its largest since the last update, the target.
    rr: f64,
    max_rr: f64,
    stop: f64,
    stats: SolverStats,
}

/// Refines every system from its initial guess `xs[i]` (precise) to its
/// target; `a` acts in the precise precision, `a_sloppy` on the sloppy
/// fields, both unshifted. Each system has its own tolerance (`params.tol`
/// is the progress report's only); `params.maxiter` bounds the iterations
/// of all systems together (one operator application each, as one system
/// after another would count them). Returns each system's statistics.
#[allow(clippy::too_many_arguments)]
pub fn solve<B: Backend, A: LinearOperator<B>, S: LinearOperator<B>>(
    backend: &B,
    a: &mut A,
    a_sloppy: &mut S,
    systems: &[ShiftedSystem<'_, B::Spinor>],
    xs: &mut [B::Spinor],
    b: &B::Spinor,
    params: &MixedParams,
    stabilised: bool,
    monitor: &dyn Monitor,
) -> Result<Vec<SolverStats>> {
    let n = systems.len();
    if xs.len() != n {
        return Err(Error::Internal(format!(
            "{NAME}: {n} systems, {} solutions",
            xs.len()
        )));
    }
    let (lat, subset, fermion) = (a.lattice().clone(), a.subset(), a.fermion());
    let (hi, lo) = (a.precision(), a_sloppy.precision());
    let alloc = |p| backend.alloc_field(&lat, subset, p, fermion);
    let b2 = backend.norm2(b)?;
    if b2 == 0.0 {
        // A zero source: every solution is zero.
        let mut all = Vec::with_capacity(n);
        for x in xs.iter_mut() {
            backend.zero(x)?;
            all.push(SolverStats {
                converged: true,
                ..Default::default()
            });
        }
        return Ok(all);
    }
    let mut r_true = alloc(hi)?;
    let delta2 = params.delta * params.delta;

    // Every system's true residual, its sloppy copy and first direction.
    let mut states = Vec::with_capacity(n);
    for (sys, x) in systems.iter().zip(xs.iter()) {
        let mut stats = SolverStats::default();
        let mut a_i = Shifted::new(backend, &mut *a, sys.sigma);
        let rr = true_residual(backend, &mut a_i, x, b, &mut r_true)?;
        stats.matvecs += 1;
        let (mut r, mut p) = (alloc(lo)?, alloc(lo)?);
        backend.copy(&mut r, &r_true)?;
        first_direction(backend, sys.cont.as_ref(), &r, rr, stabilised, &mut p)?;
        let stop = sys.tol * sys.tol * b2;
        stats.converged = rr <= stop;
        stats.iterated_residual = (rr / b2).sqrt();
        states.push(SystemState {
            r,
            p,
            partial: alloc(lo.partial_solution())?,
            rr,
            max_rr: rr,
            stop,
            stats,
        });
    }
    // The images `A p` of the systems still refining, in block order.
    let mut ap = Vec::new();
    let (mut k, mut used) = (0, 0);
    loop {
        let active: Vec<usize> = (0..n).filter(|&i| !states[i].stats.converged).collect();
        if active.is_empty() || used + active.len() > params.maxiter {
            break;
        }
        used += active.len();
        while ap.len() < active.len() {
            ap.push(alloc(lo)?);
        }
        // A p for every active system in one block application, then each
        // system's shift and curvature (p, (A + σ) p).
        let mut curvatures = Vec::with_capacity(active.len());
        if let [i] = active[..] {
            let mut a_i = Shifted::new(backend, &mut *a_sloppy, systems[i].sigma);
            curvatures.push(a_i.apply_with_curvature(backend, &mut ap[0], &states[i].p)?);
        } else {
            let dirs: Vec<&B::Spinor> = active.iter().map(|&i| &states[i].p).collect();
            a_sloppy.apply_block(&mut ap[..active.len()], &dirs)?;
            for (j, &i) in active.iter().enumerate() {
                if systems[i].sigma != 0.0 {
                    backend.axpy(systems[i].sigma, &states[i].p, &mut ap[j])?;
                }
                curvatures.push(backend.cdot(&states[i].p, &ap[j])?.re);
            }
        }
        for (j, &i) in active.iter().enumerate() {
            let state = &mut states[i];
            state.stats.matvecs += 1;
            let pap = curvatures[j];
            if pap.is_nan() || pap <= 0.0 {
                return Err(Error::Breakdown(format!(
                    "{NAME}: (p, (A + σ) p) = {pap:e} for σ = {:e} at iteration {k}: the \
                     operator is not positive definite",
                    systems[i].sigma
                )));
            }
            let alpha = state.rr / pap;
            // The sum in a format of its own is formed by `axpy_many` (the
            // mixed-precision sum); in the sloppy one (int30, whose
            // partial_solution is itself) by `axpy`.
            if state.partial.precision() == lo {
                backend.axpy(alpha, &state.p, &mut state.partial)?;
            } else {
                backend.axpy_many(&[alpha], &[&state.p], &mut state.partial)?;
            }
            let (rr_new, pr_num) = backend.axpy_norm2_pr(-alpha, &ap[j], &mut state.r)?;
            state.stats.iterations += 1;
            let beta = if rr_new <= state.stop || rr_new < delta2 * state.max_rr {
                // Reliable update: x += x̂, r = b − (A + σ) x in high precision.
                backend.axpy_many(&[1.0], &[&state.partial], &mut xs[i])?;
                backend.zero(&mut state.partial)?;
                let mut a_i = Shifted::new(backend, &mut *a, systems[i].sigma);
                let rr_true = true_residual(backend, &mut a_i, &xs[i], b, &mut r_true)?;
                state.stats.matvecs += 1;
                state.stats.reliable_updates += 1;
                backend.copy(&mut state.r, &r_true)?;
                if stabilised {
                    reproject(backend, &state.r, rr_true, &mut state.p)?;
                }
                let beta = rr_true / state.rr;
                (state.rr, state.max_rr) = (rr_true, rr_true);
                state.stats.converged = rr_true <= state.stop;
                beta
            } else {
                let beta = if stabilised {
                    (pr_num / state.rr).max(0.0)
                } else {
                    rr_new / state.rr
                };
                state.rr = rr_new;
                state.max_rr = state.max_rr.max(rr_new);
                beta
            };
            state.stats.iterated_residual = (state.rr / b2).sqrt();
            if !state.stats.converged {
                backend.xpay(&state.r, beta, &mut state.p)?;
            }
        }
        k += 1;
        // Progress: the worst relative residual of the block.
        let worst = active
            .iter()
            .map(|&i| states[i].stats.iterated_residual)
            .fold(0.0, f64::max);
        report(monitor, &params.progress(), NAME, k, worst);
    }
    // A system that ran out of iterations keeps what it reached.
    for (state, x) in states.iter().zip(xs.iter_mut()) {
        if !state.stats.converged {
            backend.axpy_many(&[1.0], &[&state.partial], x)?;
        }
    }
    Ok(states.into_iter().map(|c| c.stats).collect())
}
