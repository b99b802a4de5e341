//! Several sources of one Wilson or clover system solved together by a
//! block solver (issue 37, seed 002): the sources' iterated systems (the
//! full one, or the Schur system of `matpc` with each source's Schur
//! source) form one block, solved by block BiCGstab with QR (or block CG
//! where the solver is CG or the solve type asks for the normal
//! equations), then each solution is completed and its true residual
//! measured as a single solve's is. A column that misses the caller's
//! targets (a block solver stops at the strictest column's inner
//! tolerance, which the normal equations or rounding may leave short), or
//! a block that breaks down (dependent sources), goes on through the
//! single-source solve from where the block left it: the answer is that of
//! the single path, reached in fewer operator applications.

use std::time::Instant;

use crate::api::params::{InvertParams, InvertResult, SolveType, SolverType};
use crate::backend::{Backend, GaugeStorage, SpinorField};
use crate::dirac::even_odd::SchurSource;
use crate::dirac::{DiracOperator, Direct, Normal, WilsonFields};
use crate::error::{Error, Result};
use crate::lattice::Subset;
use crate::solver::block::{refs, BlockPreconditioner, BlockStats, Converted};
use crate::solver::block_bicgstab::{self, Variant};
use crate::solver::sap::{box_links, Sap};
use crate::solver::{block_cg, gcr, MixedParams, Monitor, SolverParams};

use super::system::{dirac, system_of, System};
use super::wilson::{invert_on_device, invert_preconditioned_on_device};

/// The box operator's links of `params.sap` in the sloppy precision, cut
/// from the precise links (`None` without SAP).
pub(crate) fn sap_boxes<B: Backend>(
    backend: &B,
    fields: WilsonFields<'_, B>,
    params: &InvertParams,
) -> Result<Option<B::Gauge>> {
    let Some(sap) = params.sap else {
        return Ok(None);
    };
    let lat = fields.gauge.lattice();
    let domains = sap.domains(lat.dims(), backend.rank_coords())?;
    box_links(backend, fields.gauge, &domains, params.precision_sloppy).map(Some)
}

/// Solves `M x_k = b_k` for every source of `sources` (full fields, or
/// fields of the `matpc` parity where `preconditioned`: the even-odd
/// system itself), `xs` holding the initial guesses; one result per source.
/// `boxes`: `sap_boxes`, where `params.sap` asks for SAP.
#[allow(clippy::too_many_arguments)]
pub(crate) fn invert_block_on_device<B: Backend>(
    backend: &B,
    fields: WilsonFields<'_, B>,
    fields_sloppy: WilsonFields<'_, B>,
    params: &InvertParams,
    preconditioned: bool,
    variant: Variant,
    sources: &[B::Spinor],
    xs: &mut [B::Spinor],
    boxes: Option<&B::Gauge>,
    monitor: &dyn Monitor,
) -> Result<Vec<InvertResult>> {
    let sap = match (params.sap, boxes) {
        (None, _) => None,
        (Some(_), _) if preconditioned => {
            return Err(Error::InvalidArgument(
                "sap preconditions the full operator M: a solve of the even-odd system itself \
                 (a preconditioned solution) cannot use it"
                    .into(),
            ))
        }
        (Some(p), Some(g)) => Some((p, g)),
        (Some(_), None) => return Err(Error::Internal("sap without its box links".into())),
    };
    // SAP iterates the full system whatever the solve type.
    let system = if sap.is_some() {
        System::Full
    } else {
        system_of(params)
    };
    let Some(first) = sources.first() else {
        return Ok(Vec::new());
    };
    let (lat, prec) = (first.lattice().clone(), params.precision);
    let parity = match system {
        System::EvenOdd(p, _) => Some(p),
        System::Full if preconditioned => {
            return Err(Error::Internal(
                "a preconditioned solve needs an even-odd solve_type".into(),
            ))
        }
        System::Full => None,
    };
    // Each source's iterated system: its right-hand side, its solution
    // (the guess restricted to it) and the Schur source for the rest.
    let sub = parity.map_or(Subset::Full, Subset::Single);
    let mut rhs = Vec::with_capacity(sources.len());
    let mut xi = Vec::with_capacity(sources.len());
    let mut scaled = Vec::with_capacity(sources.len());
    let mut schur = Vec::with_capacity(sources.len());
    let mut inner_tol = params.first_l2_tol().min(0.5);
    for (src, x) in sources.iter().zip(xs.iter()) {
        let mut r = backend.alloc_spinor(&lat, sub, prec)?;
        let mut g = backend.alloc_spinor(&lat, sub, prec)?;
        if preconditioned {
            backend.copy(&mut r, src)?;
            backend.copy(&mut g, x)?;
        } else {
            let mut b = backend.alloc_spinor(&lat, Subset::Full, prec)?;
            backend.copy(&mut b, src)?;
            if params.source_scale() != 1.0 {
                backend.ax(params.source_scale(), &mut b)?;
            }
            match system {
                System::Full => {
                    backend.copy(&mut r, &b)?;
                    backend.copy(&mut g, x)?;
                }
                System::EvenOdd(p, symmetric) => {
                    schur.push(SchurSource::prepare(
                        backend,
                        fields,
                        params.kappa,
                        p,
                        symmetric,
                        &b,
                        &mut r,
                    )?);
                    backend.extract_parity(&mut g, x, p)?;
                }
            }
            // The Schur tolerance that gives the caller's on the full system.
            let (b2, r2) = (backend.norm2(&b)?, backend.norm2(&r)?);
            if r2 > 0.0 {
                inner_tol = inner_tol.min(params.first_l2_tol() * (b2 / r2).sqrt());
            }
            scaled.push(b);
        }
        rhs.push(r);
        xi.push(g);
    }

    // The block's kernels (precise), and SAP's on its box links (sloppy).
    let mut formats = vec![(params.precision, fields.gauge.reconstruct())];
    if let Some((_, g)) = sap {
        formats.push((params.precision_sloppy, g.reconstruct()));
    }
    backend.prepare_block(&formats)?;
    let start = Instant::now();
    let mut sap = match sap {
        Some((p, g)) => {
            let lo = params.precision_sloppy;
            let (k, dag) = (params.kappa, false);
            Some(Sap::new(backend, fields_sloppy, g, &lat, k, dag, p, lo)?)
        }
        None => None,
    };
    let block = solve_block(
        backend,
        fields,
        params,
        system,
        variant,
        &rhs,
        &mut xi,
        inner_tol,
        sap.as_mut().map(|m| m as &mut dyn BlockPreconditioner<B>),
        monitor,
    );
    let block_seconds = start.elapsed().as_secs_f64();
    let stats = match block {
        Ok(s) => Some(s),
        // Block CG's breakdown (block BiCGstab returns its solution so
        // far, `BlockStats::breakdown`): every source goes the single way
        // from where it is.
        Err(Error::Breakdown(_)) => None,
        Err(e) => return Err(e),
    };
    // With SAP a block that broke down or stopped short goes on column by
    // column with SAP still: near κ_c the single path without it may not
    // converge at all where SAP does (docs/performance.md, 24³×48 at
    // κ = 0.1352).
    let n = sources.len();
    let mut alone = vec![BlockStats::default(); n];
    let mut alone_seconds = vec![0.0; n];
    let converged = stats.as_ref().is_some_and(|s| s.total.converged);
    if let (Some(m), false, true) = (sap.as_mut(), converged, n > 1) {
        for k in 0..n {
            let t = Instant::now();
            let one = solve_block(
                backend,
                fields,
                params,
                system,
                variant,
                &rhs[k..k + 1],
                &mut xi[k..k + 1],
                inner_tol,
                Some(m as &mut dyn BlockPreconditioner<B>),
                monitor,
            );
            match one {
                Ok(mut s) => {
                    s.total.restarts += usize::from(s.breakdown.is_some());
                    alone[k] = s;
                }
                Err(Error::Breakdown(_)) => alone[k].total.restarts += 1,
                Err(e) => return Err(e),
            }
            alone_seconds[k] = t.elapsed().as_secs_f64();
        }
    }

    // Complete each solution; those that miss the targets go on alone.
    let mut results = Vec::with_capacity(n);
    for k in 0..n {
        match (system, preconditioned) {
            (System::EvenOdd(p, _), false) => {
                let mut xq = backend.alloc_spinor(&lat, Subset::Single(p.other()), prec)?;
                schur[k].reconstruct(&mut xq, &xi[k], &scaled[k])?;
                backend.insert_parity(&mut xs[k], p, &xi[k])?;
                backend.insert_parity(&mut xs[k], p.other(), &xq)?;
            }
            _ => backend.copy(&mut xs[k], &xi[k])?,
        }
        let (src, x) = (&sources[k], &mut xs[k]);
        let mut r = if preconditioned {
            invert_preconditioned_on_device(
                backend,
                fields,
                fields_sloppy,
                params,
                src,
                x,
                monitor,
            )?
        } else {
            invert_on_device(backend, fields, fields_sloppy, params, src, x, monitor)?
        };
        if let Some(s) = stats.as_ref() {
            r.iterations += s.total.iterations;
            r.reliable_updates += s.total.reliable_updates;
            r.restarts += s.total.restarts + usize::from(s.breakdown.is_some());
            r.seconds += block_seconds / n as f64;
        } else {
            r.restarts += 1;
        }
        let a = &alone[k].total;
        r.iterations += a.iterations;
        r.reliable_updates += a.reliable_updates;
        r.restarts += a.restarts;
        r.seconds += alone_seconds[k];
        results.push(r);
    }
    Ok(results)
}

/// The block solve of the iterated systems `A x_k = rhs_k`.
#[allow(clippy::too_many_arguments)]
fn solve_block<B: Backend>(
    backend: &B,
    fields: WilsonFields<'_, B>,
    params: &InvertParams,
    system: System,
    variant: Variant,
    rhs: &[B::Spinor],
    x: &mut [B::Spinor],
    tol: f64,
    precond: Option<&mut dyn BlockPreconditioner<B>>,
    monitor: &dyn Monitor,
) -> Result<BlockStats> {
    // The block iterates in the precise precision; the sloppy one is the
    // preconditioner's (seed 002 eqs. 11–23: a sloppy right
    // preconditioner leaves `R = B − A X` exact). A Krylov block of many
    // columns kept in single loses the accuracy of its small systems and
    // with it most of the block's gain, or breaks down (docs/numerics.md,
    // "Block solvers in mixed precision").
    let (kappa, hi) = (params.kappa, params.precision);
    let m = dirac(backend, fields, kappa, hi, system)?;
    let m_iter = dirac(backend, fields, kappa, hi, system)?;
    let mixed = MixedParams {
        tol,
        maxiter: params.maxiter,
        progress_every: params.progress_every,
        delta: params.reliable_delta,
        tol_inner: params.tol_inner,
    };
    let normal = params.solver == SolverType::Cg
        || matches!(params.solve_type, SolveType::NormOp | SolveType::NormOpPc);
    if normal {
        // M†M x = M† b.
        let mut m = m;
        let mut bn = Vec::with_capacity(rhs.len());
        for r in rhs {
            let mut f = backend.alloc_spinor(r.lattice(), r.subset(), hi)?;
            m.apply(&mut f, r, true)?;
            bn.push(f);
        }
        let mut a = Normal::new(backend, m)?;
        let mut a_iter = Normal::new(backend, m_iter)?;
        return block_cg::solve(backend, &mut a, &mut a_iter, x, &refs(&bn), &mixed, monitor);
    }
    if params.solver == SolverType::Gcr {
        return gcr_columns(backend, m, params, rhs, x, tol, precond, monitor);
    }
    let mut converted;
    let precond = match precond {
        Some(p) => {
            converted = Converted::new(backend, p, hi);
            Some(&mut converted as &mut dyn BlockPreconditioner<B>)
        }
        None => None,
    };
    let (mut a, mut a_iter) = (Direct(m), Direct(m_iter));
    block_bicgstab::solve(
        backend,
        &mut a,
        &mut a_iter,
        x,
        &refs(rhs),
        &mixed,
        variant,
        precond,
        monitor,
    )
}

/// GCR on each column alone (a single-vector method), right-preconditioned
/// by `precond` (SAP) in its own precision; the block's statistics are the
/// columns' sums.
#[allow(clippy::too_many_arguments)]
fn gcr_columns<B: Backend>(
    backend: &B,
    m: Box<dyn DiracOperator<B> + '_>,
    params: &InvertParams,
    rhs: &[B::Spinor],
    x: &mut [B::Spinor],
    tol: f64,
    mut precond: Option<&mut dyn BlockPreconditioner<B>>,
    monitor: &dyn Monitor,
) -> Result<BlockStats> {
    let sp = SolverParams {
        tol,
        maxiter: params.maxiter,
        progress_every: params.progress_every,
        confirm: true,
    };
    let mut a = Direct(m);
    let mut stats = BlockStats::default();
    stats.total.converged = true;
    for (xk, bk) in x.iter_mut().zip(rhs) {
        let one = gcr::solve(
            backend,
            &mut a,
            xk,
            bk,
            &sp,
            params.gcr_nkrylov,
            precond.as_deref_mut(),
            monitor,
        )?;
        let t = &mut stats.total;
        t.iterations += one.iterations;
        t.matvecs += one.matvecs;
        t.restarts += one.restarts;
        t.converged &= one.converged;
        t.iterated_residual = t.iterated_residual.max(one.iterated_residual);
        stats.residuals.push(one.iterated_residual);
    }
    Ok(stats)
}
