//! Mixed-precision CG for a Hermitian positive definite `A` with reliable
//! updates (seed clark2010, Algorithm 2) and, when `stabilised`, the three
//! cures of seed clark2022 §3.1 for light masses:
//! 1. the solution is accumulated in high precision: the last few `α p`
//!    are buffered (sloppy `p`, exact `α`) and added to the high-precision
//!    `x` in groups, so the sloppy format never truncates the solution;
//! 2. at each reliable update the gradient is re-projected,
//!    `p ← p − (r, p)/(r, r) r`, so it stays orthogonal to the new residual;
//! 3. β by Polak–Ribière, `β = r_{k+1}†(r_{k+1} − r_k) / r_k† r_k`.
//!
//! Without `stabilised` it is the plain reliable-update CG (a sloppy
//! partial solution, Fletcher–Reeves β, no re-projection), kept to show the
//! difference (issue 4's iteration tables).

use super::{report, true_residual, Monitor, SolverStats};
use crate::backend::Backend;
use crate::dirac::LinearOperator;
use crate::error::{Error, Result};
use crate::solver::MixedParams;

/// Gradient vectors buffered before they are added to the solution. The
/// group update reads the buffered sloppy directions and reads and writes
/// the precise solution once, so a deeper buffer spreads the solution's
/// traffic thinner: with eight half directions about 100 bytes per site and
/// iteration against 150 with four (the solution in double is 384 bytes a
/// pass). The sum is the same to the bit for any depth (each term is rounded
/// into the solution in order); the cost is the ring's memory.
const BUFFERED: usize = 8;

/// Solves `A x = b`; `a` acts in high precision, `a_sloppy` on the sloppy
/// fields. `x` holds the initial guess.
#[allow(clippy::too_many_arguments)]
pub fn solve<B: Backend, A: LinearOperator<B>, S: LinearOperator<B>>(
    backend: &B,
    a: &mut A,
    a_sloppy: &mut S,
    x: &mut B::Spinor,
    b: &B::Spinor,
    params: &MixedParams,
    stabilised: bool,
    monitor: &dyn Monitor,
) -> Result<SolverStats> {
    solve_continued(
        backend, a, a_sloppy, x, b, params, stabilised, None, monitor,
    )
}

/// The Krylov state a solve goes on from: the last search direction `p_k`
/// and `r_k† r_k`, the denominator of the next β. Multi-shift CG hands its
/// unshifted system over with it (seed clark2022 §3.2: the unshifted system
/// keeps its Krylov space), and the first step is then the one of a
/// reliable update: the true residual, `p` re-projected onto its complement
/// when `stabilised`, `p = r + (r†r / rr) p`.
pub struct Continuation<'p, S> {
    pub p: &'p S,
    pub rr: f64,
}

/// `solve`, going on from `cont` instead of starting with `p = r`.
#[allow(clippy::too_many_arguments)]
pub fn solve_continued<B: Backend, A: LinearOperator<B>, S: LinearOperator<B>>(
    backend: &B,
    a: &mut A,
    a_sloppy: &mut S,
    x: &mut B::Spinor,
    b: &B::Spinor,
    params: &MixedParams,
    stabilised: bool,
    cont: Option<Continuation<'_, B::Spinor>>,
    monitor: &dyn Monitor,
) -> Result<SolverStats> {
    let (lat, subset) = (a.lattice().clone(), a.subset());
    let fermion = a.fermion();
    let (hi, lo) = (a.precision(), a_sloppy.precision());
    let mut r = backend.alloc_field(&lat, subset, hi, fermion)?;
    let alloc = || backend.alloc_field(&lat, subset, lo, fermion);
    let (mut rs, mut ap) = (alloc()?, alloc()?);
    // The search directions: with buffering, a ring of the last few.
    let nbuf = if stabilised { BUFFERED } else { 1 };
    let mut ps = (0..nbuf).map(|_| alloc()).collect::<Result<Vec<_>>>()?;
    let mut alphas: Vec<f64> = Vec::with_capacity(nbuf);
    // The plain variant's sloppy partial solution.
    let mut xs = if stabilised { None } else { Some(alloc()?) };
    let mut stats = SolverStats::default();

    let b2 = backend.norm2(b)?;
    if b2 == 0.0 {
        backend.zero(x)?;
        stats.converged = true;
        return Ok(stats);
    }
    let stop = params.tol * params.tol * b2;
    let delta2 = params.delta * params.delta;

    let mut rr = true_residual(backend, a, x, b, &mut r)?;
    stats.matvecs += 1;
    backend.copy(&mut rs, &r)?;
    first_direction(backend, cont.as_ref(), &rs, rr, stabilised, &mut ps[0])?;
    let mut cur = 0;
    let mut max_rr = rr;

    let mut k = 0;
    while k < params.maxiter && rr > stop {
        let pap = a_sloppy.apply_with_curvature(backend, &mut ap, &ps[cur])?;
        stats.matvecs += 1;
        if pap.is_nan() || pap <= 0.0 {
            return Err(Error::Breakdown(format!(
                "CG (reliable updates): (p, A p) = {pap:e} at iteration {k}: \
                 the operator is not positive definite"
            )));
        }
        let alpha = rr / pap;
        match &mut xs {
            Some(xs) => backend.axpy(alpha, &ps[cur], xs)?,
            None => alphas.push(alpha),
        }
        let (rr_new, pr_num) = backend.axpy_norm2_pr(-alpha, &ap, &mut rs)?;
        k += 1;
        report(
            monitor,
            &params.progress(),
            "CG (reliable)",
            k,
            (rr_new / b2).sqrt(),
        );

        let update = rr_new <= stop || rr_new < delta2 * max_rr;
        if update || alphas.len() == nbuf {
            // Group-wise solution update in high precision, in one pass.
            add_buffered(backend, &mut alphas, &ps, cur, x)?;
        }
        let next = (cur + 1) % nbuf;
        if update {
            if let Some(xs) = &mut xs {
                backend.axpy_many(&[1.0], &[&*xs], x)?;
                backend.zero(xs)?;
            }
            let rr_true = true_residual(backend, a, x, b, &mut r)?;
            stats.matvecs += 1;
            stats.reliable_updates += 1;
            backend.copy(&mut rs, &r)?;
            if stabilised {
                reproject(backend, &rs, rr_true, &mut ps[cur])?;
            }
            let beta = rr_true / rr;
            rr = rr_true;
            max_rr = rr;
            if rr <= stop {
                break;
            }
            next_direction(backend, &mut ps, cur, next, &rs, beta)?;
        } else {
            let beta = if stabilised {
                (pr_num / rr).max(0.0)
            } else {
                rr_new / rr
            };
            rr = rr_new;
            max_rr = max_rr.max(rr);
            next_direction(backend, &mut ps, cur, next, &rs, beta)?;
        }
        cur = next;
    }
    // Whatever is still buffered belongs to the solution; the directions
    // buffered end with the last one used, `cur − 1` after the loop's step.
    let last = (cur + nbuf - 1) % nbuf;
    add_buffered(backend, &mut alphas, &ps, last, x)?;
    if let Some(xs) = &xs {
        backend.axpy_many(&[1.0], &[xs], x)?;
    }
    let rr_true = true_residual(backend, a, x, b, &mut r)?;
    stats.matvecs += 1;
    stats.converged = rr_true <= stop;
    stats.iterations = k;
    stats.iterated_residual = (rr_true / b2).sqrt();
    Ok(stats)
}

/// The first search direction from the residual `r` (`|r|² = rr`):
/// `p = r`, or going on from `cont`: its direction, re-projected onto the
/// complement of `r` when `stabilised`, then `p = r + (rr / cont.rr) p`.
pub(crate) fn first_direction<B: Backend>(
    backend: &B,
    cont: Option<&Continuation<'_, B::Spinor>>,
    r: &B::Spinor,
    rr: f64,
    stabilised: bool,
    p: &mut B::Spinor,
) -> Result<()> {
    match cont {
        Some(c) if c.rr > 0.0 && rr > 0.0 => {
            backend.copy(p, c.p)?;
            if stabilised {
                reproject(backend, r, rr, p)?;
            }
            backend.xpay(r, rr / c.rr, p)
        }
        _ => backend.copy(p, r),
    }
}

/// Re-projects the direction `p` onto the complement of the residual `r`
/// (`|r|² = rr`), `p −= (r, p)/(r, r) r`: clark2022 §3.1's second cure,
/// after a reliable update.
pub(crate) fn reproject<B: Backend>(
    backend: &B,
    r: &B::Spinor,
    rr: f64,
    p: &mut B::Spinor,
) -> Result<()> {
    let rp = backend.cdot(r, p)?;
    backend.caxpy(-rp / rr, r, p)
}

/// `x += Σ α_j p_j` over the buffered directions, the last of which is in
/// slot `last` of the ring (the others before it, oldest first); empties
/// the buffer.
fn add_buffered<B: Backend>(
    backend: &B,
    alphas: &mut Vec<f64>,
    ps: &[B::Spinor],
    last: usize,
    x: &mut B::Spinor,
) -> Result<()> {
    let (n, nbuf) = (alphas.len(), ps.len());
    let dirs: Vec<&B::Spinor> = (0..n)
        .map(|j| &ps[(last + nbuf + j + 1 - n) % nbuf])
        .collect();
    backend.axpy_many(alphas, &dirs, x)?;
    alphas.clear();
    Ok(())
}

/// `p_next = r + β p_cur` (in place when the ring has one slot).
fn next_direction<B: Backend>(
    backend: &B,
    ps: &mut [B::Spinor],
    cur: usize,
    next: usize,
    r: &B::Spinor,
    beta: f64,
) -> Result<()> {
    if cur == next {
        return backend.xpay(r, beta, &mut ps[next]);
    }
    let (done, rest) = if cur < next {
        let (a, b) = ps.split_at_mut(next);
        (&a[cur], &mut b[0])
    } else {
        let (a, b) = ps.split_at_mut(cur);
        (&b[0], &mut a[next])
    };
    backend.xpay_into(r, beta, done, rest)
}
