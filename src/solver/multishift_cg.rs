//! Multi-shift CG (Jegerlehner, hep-lat/9612014; seed alexandru2011 §6)
//! for `(A + σ_i) x_i = b`, `A` Hermitian positive definite (`M†M` or
//! `M̂†M̂`), all shifts from one Krylov space, and its mixed-precision form
//! of seed clark2022 §3.2.
//!
//! The unshifted (base) system is the smallest shift `σ_0`, the worst
//! conditioned; the others are `σ_i − σ_0 ≥ 0` from it. With CG's
//! `r_{k+1} = r_k − α_k A p_k`, `p_{k+1} = r_{k+1} + β_k p_k`, the shifted
//! residuals stay collinear, `r^σ_k = ζ^σ_k r_k`, with (ζ_0 = ζ_{−1} = 1,
//! β_{−1} = 0, α_{−1} = 1)
//! ```text
//! ζ_{k+1} = ζ_k ζ_{k−1} α_{k−1} / [α_{k−1} ζ_{k−1} (1 + α_k σ) + α_k β_{k−1} (ζ_{k−1} − ζ_k)]
//! α^σ_k = α_k ζ_{k+1}/ζ_k,   β^σ_k = β_k (ζ_{k+1}/ζ_k)²
//! x^σ += α^σ_k p^σ_k,        p^σ_{k+1} = ζ_{k+1} r_{k+1} + β^σ_k p^σ_k
//! ```
//! so each shift costs two vectors (`x^σ`, `p^σ`) and two BLAS passes per
//! iteration, and no operator application. A shift whose residual
//! `|ζ^σ| ‖r‖` meets its tolerance is no longer updated.
//!
//! Mixed precision (`a_sloppy` coarser than `a`), clark2022 §3.2:
//! 1. the multi-shift iteration runs on the sloppy fields, with reliable
//!    updates of the base system only (its solution is accumulated in a
//!    sloppy partial sum and added to the precise `x_0` at each update, when
//!    `b − (A + σ_0) x_0` is recomputed in high precision). The shifted
//!    residuals are not refreshed, so they drift from collinearity: a shift
//!    is dropped when its iterated residual meets its tolerance or the
//!    sloppy unit roundoff, below which that estimate carries no
//!    information; the phase ends when every shifted system is dropped;
//! 2. the base system goes on with its Krylov space (the last direction
//!    and `r†r` are handed over), and every shift is refined by
//!    mixed-precision CG from its multi-shift solution with a fresh Krylov
//!    space, each to its own tolerance: all together, one block application
//!    of the operator an iteration (`Refinement::Together`,
//!    `shift_refinement`), or one after another (`Refinement::OneByOne`,
//!    `cg_reliable`, as clark2022 does).
//!
//! The refinement may run in a format of its own (`a_refine`, QUDA's
//! `cuda_prec_refinement_sloppy`): clark2022 §3 pairs an int30 multi-shift
//! phase with an int20 refinement. Without it the refinement runs in the
//! phase's format.
//!
//! In pure precision the iteration runs until every system meets its
//! tolerance; a shift whose true residual then misses it (rounding drift)
//! is finished by CG from its solution.

use super::cg_reliable::{self, Continuation};
use super::shift_refinement::{self, ShiftedSystem};
use super::{cg, report, true_residual, MixedParams, Monitor, SolverParams, SolverStats};
use crate::backend::Backend;
use crate::dirac::{LinearOperator, Shifted};
use crate::error::{Error, Result};
use crate::precision::Precision;

/// What a multi-shift solve is asked for.
#[derive(Debug, Clone, Copy)]
pub struct MultiShiftParams<'t> {
    /// Relative residual target of each shift, `‖b − (A + σ_i) x_i‖/‖b‖`.
    pub tols: &'t [f64],
    /// Iterations of all phases together.
    pub maxiter: usize,
    pub progress_every: usize,
    /// Reliable-update threshold δ (mixed precision).
    pub delta: f64,
    /// Refinement CG with the stabilisations of clark2022 §3.1.
    pub stabilised: bool,
    /// Recompute each shift's true residual after the multi-shift phase
    /// (one high-precision application per shift; for clark2022 Table 3).
    pub measure_phase1: bool,
    /// How the shifts are refined after a mixed-precision phase.
    pub refinement: Refinement,
}

/// How the shifts of a mixed-precision multi-shift solve are refined after
/// the multi-shift phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Refinement {
    /// All at once, each system's CG in lockstep with one block application
    /// of the operator an iteration (`shift_refinement`).
    #[default]
    Together,
    /// One after another, the base system first (clark2022 §3.2).
    OneByOne,
}

/// What a multi-shift solve did for one shift.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ShiftStats {
    /// Multi-shift iterations in which this shift was updated.
    pub multishift_iterations: usize,
    /// Iterations of its refinement (for the base system: the continuation
    /// of its Krylov space).
    pub refinement_iterations: usize,
    /// Its true relative residual after the multi-shift phase (NaN unless
    /// measured).
    pub phase1_residual: f64,
    /// Whether its true residual met its tolerance.
    pub converged: bool,
}

/// What a multi-shift solve did.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MultiShiftStats {
    /// Iterations of the multi-shift phase (one operator application each).
    pub multishift_iterations: usize,
    /// Per shift, in the order given.
    pub shifts: Vec<ShiftStats>,
    /// Index of the base (smallest) shift.
    pub base: usize,
    pub matvecs: usize,
    pub reliable_updates: usize,
    /// New Krylov spaces after a near-breakdown (BiCGstab-M).
    pub restarts: usize,
    /// Wall time of the multi-shift phase (to its last reduction, which
    /// waits for the device), for the tables' split of the time.
    pub phase_seconds: f64,
}

impl MultiShiftStats {
    /// Operator iterations of all phases.
    pub fn iterations(&self) -> usize {
        self.multishift_iterations
            + self
                .shifts
                .iter()
                .map(|s| s.refinement_iterations)
                .sum::<usize>()
    }
}

/// The common start of the multi-shift solvers: checks the counts, finds
/// the base (smallest) shift, zeroes the solutions (the shifted recurrences
/// need a zero initial guess) and returns `|b|²` with fresh statistics; for
/// a zero source every shift is solved already (x = 0, residual 0).
pub(crate) fn begin<B: Backend>(
    backend: &B,
    solver: &str,
    shifts: &[f64],
    xs: &mut [B::Spinor],
    b: &B::Spinor,
    num_tols: usize,
) -> Result<(MultiShiftStats, f64)> {
    let n = shifts.len();
    if n == 0 || xs.len() != n || num_tols != n {
        return Err(Error::Internal(format!(
            "{solver}: {n} shifts, {} solutions, {num_tols} tolerances",
            xs.len(),
        )));
    }
    let base = (0..n)
        .min_by(|&i, &j| shifts[i].total_cmp(&shifts[j]))
        .unwrap_or(0);
    let mut stats = MultiShiftStats {
        shifts: vec![
            ShiftStats {
                phase1_residual: f64::NAN,
                ..Default::default()
            };
            n
        ],
        base,
        ..Default::default()
    };
    for x in xs.iter_mut() {
        backend.zero(x)?;
    }
    let b2 = backend.norm2(b)?;
    if b2 == 0.0 {
        for s in &mut stats.shifts {
            s.converged = true;
            s.phase1_residual = 0.0;
        }
    }
    Ok((stats, b2))
}

/// Solves `(A + shifts[i]) xs[i] = b` for every `i`; `a` acts in high
/// precision, `a_sloppy` on the Krylov iteration's fields (the same
/// precision for a pure solve), `a_refine` (None: `a_sloppy`) on the
/// refinement's sloppy fields after a mixed phase. The `xs` are overwritten
/// (the shifted recurrences need a zero initial guess).
#[allow(clippy::too_many_arguments)]
pub fn solve<B: Backend, A: LinearOperator<B>, S: LinearOperator<B>>(
    backend: &B,
    a: &mut A,
    a_sloppy: &mut S,
    a_refine: Option<&mut dyn LinearOperator<B>>,
    shifts: &[f64],
    xs: &mut [B::Spinor],
    b: &B::Spinor,
    params: &MultiShiftParams,
    monitor: &dyn Monitor,
) -> Result<MultiShiftStats> {
    let started = std::time::Instant::now();
    let n = shifts.len();
    let (mut stats, b2) = begin(backend, "multi-shift CG", shifts, xs, b, params.tols.len())?;
    if b2 == 0.0 {
        return Ok(stats);
    }
    let base = stats.base;
    let sigma0 = shifts[base];
    let rel: Vec<f64> = shifts.iter().map(|s| s - sigma0).collect();
    let (lat, subset) = (a.lattice().clone(), a.subset());
    let fermion = a.fermion();
    let (hi, lo) = (a.precision(), a_sloppy.precision());
    let mixed = hi != lo;

    // A shift is dropped at its tolerance, or (mixed) at the sloppy unit
    // roundoff: its residual estimate `ζ r` is computed in the sloppy
    // precision, relative to ‖b‖ since shifts are never refreshed.
    let floor = if mixed { lo.epsilon() } else { 0.0 };
    let target2: Vec<f64> = params
        .tols
        .iter()
        .map(|t| t.max(floor).powi(2) * b2)
        .collect();

    let alloc_lo = || backend.alloc_field(&lat, subset, lo, fermion);
    let mut r = backend.alloc_field(&lat, subset, hi, fermion)?;
    let (mut rs, mut ap, mut p0) = (alloc_lo()?, alloc_lo()?, alloc_lo()?);
    backend.copy(&mut rs, b)?;
    backend.copy(&mut p0, &rs)?;
    // The shifted directions (none for the base, whose direction is p0),
    // and in mixed precision the sloppy partial solutions.
    let mut ps: Vec<Option<B::Spinor>> = Vec::with_capacity(n);
    let mut partial: Vec<Option<B::Spinor>> = Vec::with_capacity(n);
    for i in 0..n {
        ps.push(if i == base {
            None
        } else {
            let mut p = alloc_lo()?;
            backend.copy(&mut p, &rs)?;
            Some(p)
        });
        partial.push(if mixed { Some(alloc_lo()?) } else { None });
    }

    let mut zeta = vec![1.0f64; n];
    let mut zeta_prev = vec![1.0f64; n];
    let (mut alpha_prev, mut beta_prev) = (1.0f64, 0.0f64);
    let mut rr = b2;
    let mut rr_prev = rr;
    let mut max_rr = rr;
    let delta2 = params.delta * params.delta;
    let mut active: Vec<bool> = (0..n).map(|i| i != base && rr > target2[i]).collect();
    let mut base_p_valid = false;
    let mut a0 = Shifted::new(backend, &mut *a_sloppy, sigma0);
    let mut k = 0;
    loop {
        let shifts_left = active.iter().any(|&x| x);
        // Pure: run until every system is done. Mixed: until every shifted
        // system is dropped; the base goes on in `cg_reliable`.
        if !shifts_left && (mixed || rr <= target2[base]) {
            break;
        }
        if k >= params.maxiter {
            break;
        }
        let pap = a0.apply_with_curvature(backend, &mut ap, &p0)?;
        stats.matvecs += 1;
        if pap.is_nan() || pap <= 0.0 {
            return Err(Error::Breakdown(format!(
                "multi-shift CG: (p, (A + σ_0) p) = {pap:e} at iteration {k}: the operator \
                 is not positive definite"
            )));
        }
        let alpha = rr / pap;
        for i in 0..n {
            if !active[i] {
                continue;
            }
            let (z, zp) = (zeta[i], zeta_prev[i]);
            let denom = alpha_prev * zp * (1.0 + alpha * rel[i]) + alpha * beta_prev * (zp - z);
            let zn = z * zp * alpha_prev / denom;
            let alpha_i = alpha * zn / z;
            let p = ps[i].as_ref().ok_or_else(missing)?;
            match &mut partial[i] {
                Some(xl) => backend.axpy(alpha_i, p, xl)?,
                None => backend.axpy(alpha_i, p, &mut xs[i])?,
            }
            (zeta_prev[i], zeta[i]) = (z, zn);
            stats.shifts[i].multishift_iterations += 1;
        }
        match &mut partial[base] {
            Some(xl) => backend.axpy(alpha, &p0, xl)?,
            None => backend.axpy(alpha, &p0, &mut xs[base])?,
        }
        stats.shifts[base].multishift_iterations += 1;
        let rr_new = backend.axpy_norm2(-alpha, &ap, &mut rs)?;
        k += 1;
        rr_prev = rr;
        let beta = if mixed && rr_new < delta2 * max_rr {
            // Reliable update of the base system: its solution to high
            // precision, its residual recomputed there. The shifted
            // solutions are flushed too, so their sloppy partial sums stay
            // short.
            for i in 0..n {
                if i == base || active[i] {
                    flush(backend, &mut partial[i], &mut xs[i])?;
                }
            }
            let mut a_hi = Shifted::new(backend, &mut *a, sigma0);
            let rr_true = true_residual(backend, &mut a_hi, &xs[base], b, &mut r)?;
            stats.matvecs += 1;
            stats.reliable_updates += 1;
            backend.copy(&mut rs, &r)?;
            rr = rr_true;
            max_rr = rr;
            rr_true / rr_prev
        } else {
            rr = rr_new;
            max_rr = max_rr.max(rr);
            rr_new / rr_prev
        };
        report(
            monitor,
            &SolverParams {
                tol: params.tols[base],
                maxiter: params.maxiter,
                progress_every: params.progress_every,
                confirm: true,
            },
            "multi-shift CG",
            k,
            (rr / b2).sqrt(),
        );
        for i in 0..n {
            if active[i] && zeta[i] * zeta[i] * rr <= target2[i] {
                active[i] = false;
                flush(backend, &mut partial[i], &mut xs[i])?;
            }
        }
        base_p_valid = true;
        if mixed && !active.iter().any(|&x| x) {
            // Stop before the direction update: the base system's next
            // step is taken by `cg_reliable` from the true residual.
            break;
        }
        backend.xpay(&rs, beta, &mut p0)?;
        for i in 0..n {
            if !active[i] {
                continue;
            }
            let beta_i = beta * (zeta[i] / zeta_prev[i]).powi(2);
            let p = ps[i].as_mut().ok_or_else(missing)?;
            backend.axpby(zeta[i], &rs, beta_i, p)?;
        }
        (alpha_prev, beta_prev) = (alpha, beta);
    }
    for i in 0..n {
        flush(backend, &mut partial[i], &mut xs[i])?;
    }
    stats.multishift_iterations = k;
    stats.phase_seconds = started.elapsed().as_secs_f64();
    // The shifted fields are not needed by the refinement: free them first.
    drop(ps);
    drop(partial);

    if params.measure_phase1 {
        for i in 0..n {
            let mut ai = Shifted::new(backend, &mut *a, shifts[i]);
            let rr_i = true_residual(backend, &mut ai, &xs[i], b, &mut r)?;
            stats.matvecs += 1;
            stats.shifts[i].phase1_residual = (rr_i / b2).sqrt();
        }
    }

    // The refinement's sloppy operator: its own format, or the phase's.
    let mut a_refine: &mut dyn LinearOperator<B> = match a_refine {
        Some(r) => r,
        None => a_sloppy,
    };
    let lo = a_refine.precision();
    // The stabilisations of clark2022 §3.1 (cg_reliable's, and
    // shift_refinement's Polak–Ribière β and re-projection). A refinement
    // starts near the target and needs few iterations; with a
    // single-precision sloppy format plain reliable updates take the same
    // iterations (docs/numerics.md) at less cost, so the stabilisations are
    // kept for the coarser formats only.
    let stabilised = params.stabilised && lo.epsilon() > Precision::Single.epsilon();
    let cont = |i: usize| {
        (i == base && base_p_valid).then_some(Continuation {
            p: &p0,
            rr: rr_prev,
        })
    };
    let mp = |tol: f64, maxiter: usize| MixedParams {
        tol,
        maxiter,
        progress_every: params.progress_every,
        delta: params.delta,
        tol_inner: 0.1,
    };
    if mixed && params.refinement == Refinement::Together {
        // The iterations left, shared by every system as one after another.
        let left = params.maxiter.saturating_sub(k);
        let systems: Vec<ShiftedSystem<'_, B::Spinor>> = (0..n)
            .map(|i| ShiftedSystem {
                sigma: shifts[i],
                tol: params.tols[i],
                cont: cont(i),
            })
            .collect();
        let per_system = shift_refinement::solve(
            backend,
            &mut *a,
            &mut a_refine,
            &systems,
            xs,
            b,
            &mp(params.tols[base], left),
            stabilised,
            monitor,
        )?;
        for (i, st) in per_system.iter().enumerate() {
            record(&mut stats, i, st);
        }
        return Ok(stats);
    }
    // One after another: the base system first (going on from its Krylov
    // space), then the shifts in increasing order (the lighter ones gain
    // most from the iterations still left).
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| shifts[i].total_cmp(&shifts[j]));
    let mut used = k;
    for &i in &order {
        let left = params.maxiter.saturating_sub(used);
        let mut ai = Shifted::new(backend, &mut *a, shifts[i]);
        let st = if mixed {
            let mut ai_lo = Shifted::new(backend, &mut a_refine, shifts[i]);
            cg_reliable::solve_continued(
                backend,
                &mut ai,
                &mut ai_lo,
                &mut xs[i],
                b,
                &mp(params.tols[i], left),
                stabilised,
                cont(i),
                monitor,
            )?
        } else {
            let sp = SolverParams {
                tol: params.tols[i],
                maxiter: left,
                progress_every: params.progress_every,
                confirm: true,
            };
            cg::solve(backend, &mut ai, &mut xs[i], b, &sp, monitor)?
        };
        used += st.iterations;
        record(&mut stats, i, &st);
    }
    Ok(stats)
}

/// Adds shift `i`'s refinement to the statistics.
fn record(stats: &mut MultiShiftStats, i: usize, st: &SolverStats) {
    stats.matvecs += st.matvecs;
    stats.reliable_updates += st.reliable_updates;
    stats.shifts[i].refinement_iterations = st.iterations;
    stats.shifts[i].converged = st.converged;
}

/// Adds a sloppy partial solution to the precise one and clears it.
fn flush<B: Backend>(
    backend: &B,
    partial: &mut Option<B::Spinor>,
    x: &mut B::Spinor,
) -> Result<()> {
    if let Some(xl) = partial {
        backend.axpy_many(&[1.0], &[&*xl], x)?;
        backend.zero(xl)?;
    }
    Ok(())
}

fn missing() -> Error {
    Error::Internal("multi-shift CG: a shifted direction is missing".into())
}
