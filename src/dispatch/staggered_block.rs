//! Several sources of one staggered system solved together by block CG
//! (issue 37, seed 002 §2.1: one pass over the links for the whole block,
//! `Backend::staggered_dslash_block`): the even-odd system `M̂ x_p = b̂_p`
//! of every source (each with its Schur source), or the normal equations
//! `M†M x = M†b` of the full system, as one block of Hermitian positive
//! definite systems; then each solution is completed (the other parity
//! reconstructed) and finished by the single-source solve from where the
//! block left it: that measures its true (and heavy-quark) residual and,
//! for a column the block's one tolerance left short (a block stops at the
//! strictest column's inner tolerance; the heavy-quark criterion is a
//! single solve's), goes on alone. The answer is that of the single path.
//! `invert_block_parity` does the same for the even-odd systems themselves
//! (MILC's `qudaInvertMsrc`), finishing each with `invert_parity`.

use std::time::Instant;

use super::staggered::{check_field, inner_tol, invert, invert_parity, prepare};
use crate::api::{InvertResult, StaggeredInvertParams, StaggeredSolve};
use crate::backend::{Backend, SpinorField};
use crate::dirac::staggered::{StaggeredEvenOdd, StaggeredFull, StaggeredSchur};
use crate::dirac::{DiracOperator, Direct, Normal};
use crate::error::{Error, Result};
use crate::field::Fermion;
use crate::lattice::Subset;
use crate::solver::block::{refs, BlockStats};
use crate::solver::{block_cg, MixedParams, Monitor};

/// Solves `M x_k = b_k` for every source (full colour-vector fields; `xs`
/// holds the initial guesses) in one block; one result per source.
pub fn invert_block<B: Backend>(
    backend: &B,
    links: &B::StaggeredLinks,
    links_sloppy: &B::StaggeredLinks,
    params: &StaggeredInvertParams,
    sources: &[B::Spinor],
    xs: &mut [B::Spinor],
    monitor: &dyn Monitor,
) -> Result<Vec<InvertResult>> {
    check_columns(sources, xs, Subset::Full, params.precision)?;
    let Some(first) = sources.first() else {
        return Ok(Vec::new());
    };
    prepare(backend, params)?;
    let (hi, lo, m) = (params.precision, params.precision_sloppy, params.mass);
    if m <= 0.0 {
        // The block's tolerance `tol · 2m ‖b‖/‖b̂‖` needs m > 0: the sources
        // go the single way (which also words the even-odd refusal at m = 0).
        let mut results = Vec::with_capacity(sources.len());
        for (b, x) in sources.iter().zip(xs.iter_mut()) {
            results.push(invert(backend, links, links_sloppy, params, b, x, monitor)?);
        }
        return Ok(results);
    }
    let lat = first.lattice().clone();
    let alloc = |sub, prec| backend.alloc_field(&lat, sub, prec, Fermion::Staggered);
    let start = Instant::now();
    // Each source's iterated system: its right-hand side and solution, and
    // the strictest tolerance that meets the caller's on the full system.
    let tol = params.first_l2_tol();
    let mut inner = tol;
    let (mut rhs, mut xi) = (Vec::new(), Vec::new());
    for (b, x) in sources.iter().zip(xs.iter()) {
        match params.solve {
            StaggeredSolve::EvenOdd(p) => {
                let mut r = alloc(Subset::Single(p), hi)?;
                StaggeredSchur::prepare(backend, links, m, p, b, &mut r)?;
                inner = inner.min(inner_tol(backend, tol, 2.0 * m, b, &r)?);
                let mut g = alloc(Subset::Single(p), hi)?;
                backend.extract_parity(&mut g, x, p)?;
                rhs.push(r);
                xi.push(g);
            }
            StaggeredSolve::Full => {
                let mut r = alloc(Subset::Full, hi)?;
                StaggeredFull::new(backend, links, m, hi).apply(&mut r, b, true)?;
                inner = inner.min(inner_tol(backend, tol, 2.0 * m, b, &r)?);
                let mut g = alloc(Subset::Full, hi)?;
                backend.copy(&mut g, x)?;
                rhs.push(r);
                xi.push(g);
            }
        }
    }
    let mixed = MixedParams {
        tol: inner,
        maxiter: params.maxiter,
        progress_every: params.progress_every,
        delta: params.reliable_delta,
        tol_inner: 0.1,
    };
    let block = match params.solve {
        StaggeredSolve::EvenOdd(p) => {
            let mut a = Direct(StaggeredEvenOdd::new(backend, links, m, p, hi)?);
            let mut a_lo = Direct(StaggeredEvenOdd::new(backend, links_sloppy, m, p, lo)?);
            block_cg::solve(
                backend,
                &mut a,
                &mut a_lo,
                &mut xi,
                &refs(&rhs),
                &mixed,
                monitor,
            )
        }
        StaggeredSolve::Full => {
            let mut a = Normal::new(backend, StaggeredFull::new(backend, links, m, hi))?;
            let op_lo = StaggeredFull::new(backend, links_sloppy, m, lo);
            let mut a_lo = Normal::new(backend, op_lo)?;
            block_cg::solve(
                backend,
                &mut a,
                &mut a_lo,
                &mut xi,
                &refs(&rhs),
                &mixed,
                monitor,
            )
        }
    };
    let stats = settle(block)?;
    if stats.is_some() {
        for (k, (b, x)) in sources.iter().zip(xs.iter_mut()).enumerate() {
            match params.solve {
                StaggeredSolve::EvenOdd(p) => {
                    backend.insert_parity(x, p, &xi[k])?;
                    StaggeredSchur::reconstruct(backend, links, m, p, b, x)?;
                }
                StaggeredSolve::Full => backend.copy(x, &xi[k])?,
            }
        }
    }
    let rest = left_over(params, stats.as_ref());
    finish(stats, start, sources, xs, |b, x| {
        invert(backend, links, links_sloppy, &rest, b, x, monitor)
    })
}

/// Solves the even-odd systems themselves, `M̂ x_k = b_k` on the parity of
/// `params.solve` (which must be even-odd; fields of that parity, `xs` the
/// initial guesses), in one block: `invert_block` for `invert_parity`.
pub fn invert_block_parity<B: Backend>(
    backend: &B,
    links: &B::StaggeredLinks,
    links_sloppy: &B::StaggeredLinks,
    params: &StaggeredInvertParams,
    sources: &[B::Spinor],
    xs: &mut [B::Spinor],
    monitor: &dyn Monitor,
) -> Result<Vec<InvertResult>> {
    let StaggeredSolve::EvenOdd(p) = params.solve else {
        return Err(Error::InvalidArgument(
            "solve = Full: the parity system needs an even-odd solve".into(),
        ));
    };
    check_columns(sources, xs, Subset::Single(p), params.precision)?;
    if sources.is_empty() {
        return Ok(Vec::new());
    }
    prepare(backend, params)?;
    let (hi, lo, m) = (params.precision, params.precision_sloppy, params.mass);
    let start = Instant::now();
    let mixed = MixedParams {
        tol: params.first_l2_tol(),
        maxiter: params.maxiter,
        progress_every: params.progress_every,
        delta: params.reliable_delta,
        tol_inner: 0.1,
    };
    let mut a = Direct(StaggeredEvenOdd::new(backend, links, m, p, hi)?);
    let mut a_lo = Direct(StaggeredEvenOdd::new(backend, links_sloppy, m, p, lo)?);
    // On a breakdown every source goes the single way from its guess, which
    // the block has left as it was.
    let mut xi = Vec::with_capacity(xs.len());
    for x in xs.iter() {
        let mut g = backend.alloc_field(x.lattice(), Subset::Single(p), hi, Fermion::Staggered)?;
        backend.copy(&mut g, x)?;
        xi.push(g);
    }
    let block = block_cg::solve(
        backend,
        &mut a,
        &mut a_lo,
        &mut xi,
        &refs(sources),
        &mixed,
        monitor,
    );
    let stats = settle(block)?;
    if stats.is_some() {
        for (x, g) in xs.iter_mut().zip(&xi) {
            backend.copy(x, g)?;
        }
    }
    let rest = left_over(params, stats.as_ref());
    finish(stats, start, sources, xs, |b, x| {
        invert_parity(backend, links, links_sloppy, &rest, b, x, monitor)
    })
}

/// The parameters of the single solves that finish the columns: `maxiter`
/// less the block's iterations (at least one: a column the block
/// converged takes none), so that no column passes the caller's budget.
fn left_over(params: &StaggeredInvertParams, stats: Option<&BlockStats>) -> StaggeredInvertParams {
    let used = stats.map_or(0, |s| s.total.iterations);
    StaggeredInvertParams {
        maxiter: params.maxiter.saturating_sub(used).max(1),
        ..*params
    }
}

/// One solution a source, every field of `subset` in `precision`.
fn check_columns<S: SpinorField>(
    sources: &[S],
    xs: &[S],
    subset: Subset,
    precision: crate::precision::Precision,
) -> Result<()> {
    if sources.len() != xs.len() {
        return Err(Error::Internal(format!(
            "a staggered block of {} sources and {} solutions",
            sources.len(),
            xs.len()
        )));
    }
    for (b, x) in sources.iter().zip(xs) {
        check_field(b, subset, precision, "source")?;
        check_field(x, subset, precision, "solution")?;
    }
    Ok(())
}

/// A block solve's statistics, or `None` where it broke down (dependent
/// sources): the columns then go the single way.
fn settle(block: Result<BlockStats>) -> Result<Option<BlockStats>> {
    match block {
        Ok(s) => Ok(Some(s)),
        Err(Error::Breakdown(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Each column finished by the single solve `alone` from where the block
/// left it, the block's iterations and time added to its result.
fn finish<S>(
    stats: Option<BlockStats>,
    start: Instant,
    sources: &[S],
    xs: &mut [S],
    mut alone: impl FnMut(&S, &mut S) -> Result<InvertResult>,
) -> Result<Vec<InvertResult>> {
    let block_seconds = start.elapsed().as_secs_f64();
    let n = sources.len();
    let mut results = Vec::with_capacity(n);
    for (b, x) in sources.iter().zip(xs.iter_mut()) {
        let mut r = alone(b, x)?;
        match &stats {
            Some(s) => {
                r.iterations += s.total.iterations;
                r.reliable_updates += s.total.reliable_updates;
                r.restarts += s.total.restarts + usize::from(s.breakdown.is_some());
            }
            None => r.restarts += 1,
        }
        r.seconds += block_seconds / n as f64;
        results.push(r);
    }
    Ok(results)
}
