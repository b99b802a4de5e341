//! Flexible GCR(m) with restarts (Eisenstat, Elman and Schultz 1983; the
//! flexible form for a preconditioner that changes from step to step,
//! Vuik 1995), right-preconditioned: QUDA's `QUDA_GCR_INVERTER` (its
//! `lib/inv_gcr_quda.cpp` is where the restart length `gcrNkrylov` and the
//! preconditioner fields come from; this is latsol's own code).
//!
//! ```text
//! r = b − A x
//! repeat (a cycle of at most m steps, then r = b − A x again):
//!   z_k = K r;  w_k = A z_k
//!   w_k, z_k ← w_k − W β, z_k − Z β   with β = Wᴴ w_k   (W orthonormal)
//!   w_k, z_k ← w_k / |w_k|, z_k / |w_k|
//!   α = (w_k, r);  x += α z_k;  r −= α w_k
//! ```
//! Each step minimises `|r|` over the span of the `w_i` = `A z_i`, so the
//! residual never grows, whatever `K` is (MR steps, a Schwarz sweep with
//! them: not a fixed linear map). The orthogonalisation is classical
//! Gram–Schmidt through the block algebra (one Gram row and two block
//! updates: three passes over the cycle's fields, `Backend::block_cdot`,
//! `block_caxpy`), with the true residual recomputed at every restart.
//! The preconditioner is applied in its own precision
//! (`block::Converted`): the GCR vectors stay in the operator's.

use num_complex::Complex64 as C64;

use super::block::{BlockPreconditioner, Converted};
use super::{report, source_norm2, true_residual, Monitor, SolverParams, SolverStats};
use crate::backend::Backend;
use crate::dirac::LinearOperator;
use crate::error::{Error, Result};

const NAME: &str = "GCR";

/// Solves `A x = b` with `x` as the initial guess: cycles of at most
/// `nkrylov` steps, right-preconditioned by `precond` (in its own
/// precision) where given.
#[allow(clippy::too_many_arguments)]
pub fn solve<B: Backend, A: LinearOperator<B>>(
    backend: &B,
    a: &mut A,
    x: &mut B::Spinor,
    b: &B::Spinor,
    params: &SolverParams,
    nkrylov: usize,
    precond: Option<&mut (dyn BlockPreconditioner<B> + '_)>,
    monitor: &dyn Monitor,
) -> Result<SolverStats> {
    if nkrylov == 0 {
        return Err(Error::InvalidArgument(
            "GCR with a Krylov space of 0 vectors (gcrNkrylov = 0) cannot iterate".into(),
        ));
    }
    let mut stats = SolverStats::default();
    let Some(b2) = source_norm2(backend, b, x)? else {
        stats.converged = true;
        return Ok(stats);
    };
    let (lat, subset, prec) = (a.lattice().clone(), a.subset(), a.precision());
    let fermion = a.fermion();
    let alloc = || backend.alloc_field(&lat, subset, prec, fermion);
    let stop = params.tol * params.tol * b2;
    let mut converted;
    let mut precond = match precond {
        Some(m) => {
            converted = Converted::new(backend, m, prec);
            Some(&mut converted as &mut dyn BlockPreconditioner<B>)
        }
        None => None,
    };
    let precond_matvecs = precond.as_ref().map_or(0.0, |m| m.matvecs());
    let mut r = alloc()?;
    let (mut z, mut w): (Vec<B::Spinor>, Vec<B::Spinor>) = (Vec::new(), Vec::new());
    let mut rr = true_residual(backend, a, x, b, &mut r)?;
    stats.matvecs += 1;
    let mut k = 0;
    'cycles: while rr > stop && k < params.maxiter {
        for j in 0..nkrylov {
            if z.len() <= j {
                z.push(alloc()?);
                w.push(alloc()?);
            }
            let (done_w, rest_w) = w.split_at_mut(j);
            let (done_z, rest_z) = z.split_at_mut(j);
            let (wj, zj) = (&mut rest_w[0], &mut rest_z[0]);
            // z_j = K r, w_j = A z_j.
            match precond.as_mut() {
                Some(m) => m.apply_block(std::slice::from_mut(zj), &[&r])?,
                None => backend.copy(zj, &r)?,
            }
            a.apply(wj, zj)?;
            stats.matvecs += 1;
            // Orthogonal to the cycle's earlier w_i (orthonormal).
            if j > 0 {
                let done: Vec<&B::Spinor> = done_w.iter().collect();
                let beta: Vec<C64> = backend
                    .block_cdot(&done, &[&*wj])?
                    .into_iter()
                    .map(|c| -c)
                    .collect();
                backend.block_caxpy(&beta, &done, std::slice::from_mut(wj))?;
                let done_z: Vec<&B::Spinor> = done_z.iter().collect();
                backend.block_caxpy(&beta, &done_z, std::slice::from_mut(zj))?;
            }
            let ww = backend.norm2(wj)?;
            if ww.is_nan() || ww <= 0.0 {
                return Err(Error::Breakdown(format!(
                    "{NAME}: A K r vanished at iteration {k} (|A z|² = {ww:e})"
                )));
            }
            let scale = 1.0 / ww.sqrt();
            backend.ax(scale, wj)?;
            backend.ax(scale, zj)?;
            let alpha = backend.cdot(wj, &r)?;
            backend.caxpy(alpha, zj, x)?;
            rr = backend.caxpy_norm2(-alpha, wj, &mut r)?;
            k += 1;
            stats.matvecs += precond_matvecs.round() as usize;
            report(monitor, params, NAME, k, (rr / b2).sqrt());
            if rr <= stop || k >= params.maxiter {
                break;
            }
        }
        // The cycle's end: the true residual, from which the next starts
        // (and on which convergence is judged).
        let iterated = rr;
        rr = true_residual(backend, a, x, b, &mut r)?;
        stats.matvecs += 1;
        if iterated <= stop && rr > stop {
            stats.restarts += 1;
        }
        if !params.confirm && iterated <= stop {
            break 'cycles;
        }
    }
    stats.iterations = k;
    stats.iterated_residual = (rr / b2).sqrt();
    stats.converged = rr <= stop;
    Ok(stats)
}
