//! BiCGstab(l) (G. L. G. Sleijpen and D. R. Fokkema, "BiCGstab(ℓ) for
//! linear equations involving unsymmetric matrices with complex spectrum",
//! ETNA 1 (1993) 11–32; seed clark2022 §6.1), mixed precision with reliable
//! updates as QUDA's `QUDA_BICGSTABL_INVERTER` (9521952,
//! lib/inv_bicgstabl_quda.cpp; docs/quda-gcr-sap.md §4).
//!
//! Each cycle makes l BiCG steps, which extend the residuals `r_0 … r_l`
//! (`r_{j+1} = A r_j`) and directions `u_0 … u_l`, then replaces BiCGstab's
//! one-dimensional minimal-residual step by an l-dimensional one: `γ`
//! minimising `|r_0 − Σ_{i=1..l} γ_i r_i|`, from the l × l normal equations
//! `(Rᴴ R) γ = Rᴴ r_0`, `R = [r_1 … r_l]` (one Gram block of the block
//! algebra and one small dense solve, as QUDA solves them). Then
//! `x += Σ γ_i r_{i−1}`, `r_0 −= Σ γ_i r_i`, `u_0 −= Σ γ_i u_i`, `ω = γ_l`.
//! Iterations are counted as QUDA counts them, l a cycle (2 operator
//! applications each), so a solve reports a multiple of l.
//!
//! Mixed precision: the cycle runs on sloppy fields, the solution since the
//! last update kept in `Precision::partial_solution` (single for the
//! fixed-point formats, as in `bicgstab_reliable`); after a cycle whose
//! residual has fallen by δ below its largest since the last update (or
//! below the target), the partial solution is added to the precise one and
//! the residual replaced by the true `b − A x`, and the shadow space
//! restarted from it (docs/numerics.md, "The shadow space restarted at
//! every update"). Convergence is judged on that true residual. A
//! vanishing `(r̃, r_j)` or `(r̃, u_{j+1})` restarts the shadow space from
//! the true residual; right after a restart it is `Error::Breakdown` in one
//! precision and a handover to the precise recurrence in mixed precision.
//! A sloppy recurrence that lost track of the true residual or diverged
//! (`LOST`, `DIVERGED`) hands over to the precise one, which goes on from
//! the solution reached.

use num_complex::Complex64 as C64;

use super::block::refs;
use super::dense::{from_rows, Dense, Lu};
use super::{report, true_residual, MixedParams, Monitor, SolverStats};
use crate::backend::{Backend, SpinorField};
use crate::dirac::LinearOperator;
use crate::error::{Error, Result};

const NAME: &str = "BiCGstab(l)";

/// Below this relative size an inner product counts as zero.
const BREAKDOWN: f64 = 1e-14;

/// A sloppy recurrence hands over to the precise one (which goes on from
/// the solution reached) only where it has failed as a recurrence: at a
/// reliable update the true residual came out more than `LOST` times the
/// iterated one it replaces (the sloppy residual no longer describes `x`),
/// or more than `DIVERGED` times the lowest true residual so far. Both in
/// `|r|²`: 100× and 1000× in the norm. Plateaus and excursions of the
/// iterated residual are not a reason: at a light staggered mass
/// BiCGstab(4) hovers for thousands of iterations and swings tenfold in
/// double too, and both a watch on the iterated residual (the rule of
/// `bicgstab_reliable`) and QUDA's count of true residuals above the last
/// one handed every mixed solve of seed clark2022's Table 2 over to double
/// (docs/numerics.md, "When a sloppy recurrence hands over to the precise
/// one"). QUDA's
/// BiCGstab(l) (9521952, lib/inv_bicgstabl_quda.cpp) has no handover.
///
/// A sloppy iterated `|r|²` `DIVERGED` times the lowest true one forces
/// the update that judges it (a diverging recurrence makes no δ-drop to
/// trigger one; near κ_c a single-precision BiCGstab(1) grew to 1e18:
/// docs/numerics.md, "BiCGstab(l)").
const LOST: f64 = 1e4;
const DIVERGED: f64 = 1e6;

/// The normal equations of the MR part are refused (a breakdown) when a
/// pivot falls below this share of the largest.
const MR_RCOND: f64 = 1e-15;

/// Solves `A x = b` by BiCGstab(`l`); `a` acts in the precise precision,
/// `a_sloppy` on the sloppy fields (the same precision: plain BiCGstab(l)
/// with its residual checked at the end). `x` holds the initial guess.
#[allow(clippy::too_many_arguments)]
pub fn solve<B: Backend, A: LinearOperator<B>, S: LinearOperator<B>>(
    backend: &B,
    a: &mut A,
    a_sloppy: &mut S,
    x: &mut B::Spinor,
    b: &B::Spinor,
    l: usize,
    params: &MixedParams,
    monitor: &dyn Monitor,
) -> Result<SolverStats> {
    if l == 0 {
        return Err(Error::InvalidArgument(
            "BiCGstab(l) with l = 0 (gcrNkrylov = 0) makes no step".into(),
        ));
    }
    let (mut stats, stalled) = iterate(backend, a, Some(a_sloppy), x, b, l, params, monitor)?;
    if stalled {
        // The precise recurrence goes on from the solution reached.
        let rest = MixedParams {
            maxiter: params.maxiter.saturating_sub(stats.iterations).max(l),
            ..*params
        };
        let none: Option<&mut A> = None;
        let (more, _) = iterate(backend, a, none, x, b, l, &rest, monitor)?;
        stats.iterations += more.iterations;
        stats.matvecs += more.matvecs;
        stats.reliable_updates += more.reliable_updates;
        stats.restarts += 1 + more.restarts;
        stats.converged = more.converged;
        stats.iterated_residual = more.iterated_residual;
    }
    Ok(stats)
}

/// The iteration of `solve`, its cycles on `a_sloppy` (on `a` itself where
/// `None`). Returns its statistics and whether a sloppy recurrence stalled
/// (`LOST`, `DIVERGED`) before converging, with the partial solution
/// folded into `x`.
#[allow(clippy::too_many_arguments)]
fn iterate<B: Backend, A: LinearOperator<B>, S: LinearOperator<B>>(
    backend: &B,
    a: &mut A,
    mut a_sloppy: Option<&mut S>,
    x: &mut B::Spinor,
    b: &B::Spinor,
    l: usize,
    params: &MixedParams,
    monitor: &dyn Monitor,
) -> Result<(SolverStats, bool)> {
    let mut stats = SolverStats::default();
    let b2 = backend.norm2(b)?;
    if b2 == 0.0 {
        backend.zero(x)?;
        stats.converged = true;
        return Ok((stats, false));
    }
    let (lat, subset, fermion) = (a.lattice().clone(), a.subset(), a.fermion());
    let hi = a.precision();
    let lo = a_sloppy.as_ref().map_or(hi, |s| s.precision());
    let alloc = |p| backend.alloc_field(&lat, subset, p, fermion);
    let mut r_true = alloc(hi)?;
    let mut r = (0..=l).map(|_| alloc(lo)).collect::<Result<Vec<_>>>()?;
    let mut u = (0..=l).map(|_| alloc(lo)).collect::<Result<Vec<_>>>()?;
    let mut r_shadow = alloc(lo)?;
    let mut partial = Partial::new(backend, alloc(lo.partial_solution())?, lo)?;

    let stop = params.tol * params.tol * b2;
    // Reliable updates only where the sloppy precision differs: in one
    // precision the true residual is checked only when the recurrence says
    // converged. A replaced r_0 perturbs the shadow products (r̃, r_j) at
    // the roundoff of b − A x, which near convergence is a fair share of
    // them: measured on the golden 6×4×4×8 asqtad M̂ in double, l = 1
    // took 1632 iterations with updates at δ = 0.1 against 740 without
    // (docs/numerics.md, "BiCGstab(l)").
    let delta2 = if lo == hi {
        0.0
    } else {
        params.delta * params.delta
    };
    let mut rr = true_residual(backend, a, x, b, &mut r_true)?;
    stats.matvecs += 1;
    let mut max_rr = rr;
    let mut k = 0;
    let mut scalars = Scalars::fresh();
    let mut fresh = true;
    let mut stalled = false;
    backend.copy(&mut r[0], &r_true)?;
    backend.copy(&mut r_shadow, &r[0])?;
    let mut shadow2 = rr;
    let progress = params.progress();
    // The lowest true residual so far (the handover's yardstick).
    let mut best_true = rr;
    let mixed = lo != hi;
    while rr > stop && k < params.maxiter {
        let (shadow, sc, pt) = (&r_shadow, &mut scalars, &mut partial);
        let cycle = match a_sloppy.as_deref_mut() {
            Some(s) => cycle(backend, s, &mut r, &mut u, shadow, shadow2, sc, pt)?,
            None => cycle(backend, a, &mut r, &mut u, shadow, shadow2, sc, pt)?,
        };
        stats.matvecs += 2 * l;
        let update = match cycle {
            Some(cycle_rr) => {
                k += l;
                fresh = false;
                rr = cycle_rr;
                max_rr = max_rr.max(rr);
                report(monitor, &progress, NAME, k, (rr / b2).sqrt());
                rr <= stop
                    || rr < delta2 * max_rr
                    || k >= params.maxiter
                    || (mixed && rr > DIVERGED * best_true)
            }
            None if fresh && mixed => {
                // Right after a restart (each update restarts a mixed
                // solve's shadow space) the sloppy recurrence has nothing
                // left to try: the precise one goes on from x.
                partial.fold_into(backend, x)?;
                stalled = true;
                break;
            }
            None if fresh => {
                // The work since the last update is kept in x.
                partial.fold_into(backend, x)?;
                return Err(Error::Breakdown(format!(
                    "{NAME}: the shadow inner products vanished right after a restart \
                     (iteration {k})"
                )));
            }
            None => {
                stats.restarts += 1;
                true
            }
        };
        if update {
            // Reliable update: x += x̂, r = b − A x, the sloppy r_0 = r.
            partial.add_to(backend, x, 1.0)?;
            let iterated = rr;
            rr = true_residual(backend, a, x, b, &mut r_true)?;
            stats.matvecs += 1;
            stats.reliable_updates += 1;
            // After a restart `iterated` is the last cycle's residual,
            // not a recurrence's claim, so only divergence is judged then.
            let lost = cycle.is_some() && rr > LOST * iterated;
            if mixed && rr > stop && (lost || rr > DIVERGED * best_true) {
                // The stretch since the last update is dropped: a diverged
                // x̂ is large, and the precise recurrence from x + x̂ could
                // reach no better than ε |A| |x + x̂| (its true and
                // iterated residuals parted at 1e-9 of ‖b‖ when it was
                // kept, on the H200 Table 2 runs).
                partial.add_to(backend, x, -1.0)?;
                partial.clear(backend)?;
                stalled = true;
                break;
            }
            partial.clear(backend)?;
            backend.copy(&mut r[0], &r_true)?;
            max_rr = rr;
            best_true = best_true.min(rr);
            if cycle.is_none() || mixed {
                // A restart: the shadow space and the directions anew. In
                // mixed precision at every update too: a shadow vector
                // grown orthogonal to the residual stalls the sloppy
                // recurrence on the plateaus of a light staggered mass and
                // near κ_c (docs/numerics.md, "The shadow space restarted
                // at every update"; double-single 15040 → 9496 iterations
                // on the H200 Table 2 field, docs/performance.md).
                backend.copy(&mut r_shadow, &r[0])?;
                backend.zero(&mut u[0])?;
                (scalars, shadow2, fresh) = (Scalars::fresh(), rr, true);
            }
        }
    }
    partial.fold_into(backend, x)?;
    stats.iterations = k;
    stats.converged = rr <= stop;
    stats.iterated_residual = (rr / b2).sqrt();
    Ok((stats, stalled))
}

/// The recurrence's scalars carried from cycle to cycle.
struct Scalars {
    rho0: C64,
    alpha: C64,
    omega: C64,
}

impl Scalars {
    fn fresh() -> Scalars {
        Scalars {
            rho0: C64::new(1.0, 0.0),
            alpha: C64::new(0.0, 0.0),
            omega: C64::new(1.0, 0.0),
        }
    }
}

/// One cycle: l BiCG steps and the MR part. Returns `|r_0|²` after it, or
/// `None` where a shadow inner product vanished (the caller restarts).
#[allow(clippy::too_many_arguments)]
fn cycle<B: Backend, S: LinearOperator<B>>(
    backend: &B,
    a: &mut S,
    r: &mut [B::Spinor],
    u: &mut [B::Spinor],
    r_shadow: &B::Spinor,
    shadow2: f64,
    s: &mut Scalars,
    partial: &mut Partial<B>,
) -> Result<Option<f64>> {
    let l = r.len() - 1;
    let zero = C64::new(0.0, 0.0);
    s.rho0 = -s.omega * s.rho0;
    for j in 0..l {
        // β = α ρ₁/ρ₀; u_i = r_i − β u_i (i ≤ j); u_{j+1} = A u_j.
        // (r̃, r_j) and |r_j|² (for the breakdown test) in one pass.
        let (r_shadow_j, rj2) = backend.cdot_norm2(&r[j], r_shadow)?;
        let rho1 = r_shadow_j.conj();
        if rho1.norm() <= BREAKDOWN * (shadow2 * rj2).sqrt() || s.rho0.norm() == 0.0 {
            return Ok(None);
        }
        let beta = s.alpha * rho1 / s.rho0;
        s.rho0 = rho1;
        for i in 0..=j {
            backend.cxpaypbz(&r[i], zero, &r[i], -beta, &mut u[i])?;
        }
        let (done, next) = u.split_at_mut(j + 1);
        a.apply(&mut next[0], &done[j])?;
        // α = ρ₀/(r̃, u_{j+1}); r_i −= α u_{i+1} (i ≤ j); r_{j+1} = A r_j.
        let (u_shadow, u2) = backend.cdot_norm2(&u[j + 1], r_shadow)?;
        let gamma = u_shadow.conj();
        if gamma.norm() <= BREAKDOWN * (shadow2 * u2).sqrt() {
            return Ok(None);
        }
        s.alpha = s.rho0 / gamma;
        for i in 0..=j {
            backend.caxpy(-s.alpha, &u[i + 1], &mut r[i])?;
        }
        let (done, next) = r.split_at_mut(j + 1);
        a.apply(&mut next[0], &done[j])?;
        // x += α u_0.
        partial.caxpy(backend, s.alpha, &u[0])?;
    }
    // The MR part: (Rᴴ R) γ = Rᴴ r_0 with R = [r_1 … r_l].
    let gram = backend.block_cdot(&refs(&r[1..]), &refs(r))?;
    let g = from_rows(l, l + 1, &gram);
    let normal: Dense = g.columns(1, l).into_owned();
    let rhs: Dense = g.columns(0, 1).into_owned();
    let Some(gamma) = Lu::new(&normal, MR_RCOND).and_then(|lu| lu.solve(&rhs)) else {
        return Ok(None);
    };
    let gamma: Vec<C64> = gamma.iter().copied().collect();
    s.omega = gamma[l - 1];
    // x += Σ γ_i r_{i−1} (before r_0 changes), r_0 −= Σ γ_i r_i,
    // u_0 −= Σ γ_i u_i.
    partial.add_combination(backend, &gamma, &refs(&r[..l]))?;
    let minus: Vec<C64> = gamma.iter().map(|g| -g).collect();
    let (r0, rest) = r.split_at_mut(1);
    backend.block_caxpy(&minus, &refs(rest), r0)?;
    let (u0, rest) = u.split_at_mut(1);
    backend.block_caxpy(&minus, &refs(rest), u0)?;
    Ok(Some(backend.norm2(&r[0])?))
}

/// The solution since the last reliable update, in the partial-solution
/// precision; sloppy terms are converted through `scratch` where that
/// differs from the sloppy precision.
struct Partial<B: Backend> {
    x: B::Spinor,
    scratch: Option<B::Spinor>,
}

impl<B: Backend> Partial<B> {
    /// `x`: a fresh (zero) field of the partial-solution precision.
    fn new(backend: &B, x: B::Spinor, sloppy: crate::precision::Precision) -> Result<Self> {
        let scratch = if x.precision() == sloppy {
            None
        } else {
            Some(backend.alloc_field(x.lattice(), x.subset(), sloppy, x.fermion())?)
        };
        Ok(Partial { x, scratch })
    }

    /// `x̂ += a v` for a sloppy field `v`.
    fn caxpy(&mut self, backend: &B, a: C64, v: &B::Spinor) -> Result<()> {
        self.add_combination(backend, &[a], &[v])
    }

    /// `x̂ += Σ_i c_i v_i` for sloppy fields `v_i`.
    fn add_combination(&mut self, backend: &B, c: &[C64], v: &[&B::Spinor]) -> Result<()> {
        match &mut self.scratch {
            None => backend.block_caxpy(c, v, std::slice::from_mut(&mut self.x)),
            Some(t) => {
                // A fixed-point sloppy format: the sum formed in it would
                // round x̂ to its ε, so the terms are summed in the sloppy
                // format first and then added to x̂ in its own precision.
                backend.block_combine(c, v, None, std::slice::from_mut(t))?;
                backend.axpy_many(&[1.0], &[&*t], &mut self.x)
            }
        }
    }

    /// `x += x̂; x̂ = 0`.
    fn fold_into(&mut self, backend: &B, x: &mut B::Spinor) -> Result<()> {
        self.add_to(backend, x, 1.0)?;
        self.clear(backend)
    }

    /// `x += s x̂`, x̂ kept.
    fn add_to(&self, backend: &B, x: &mut B::Spinor, s: f64) -> Result<()> {
        backend.axpy_many(&[s], &[&self.x], x)
    }

    /// `x̂ = 0`.
    fn clear(&mut self, backend: &B) -> Result<()> {
        backend.zero(&mut self.x)
    }
}
