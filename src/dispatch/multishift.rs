//! The multi-shift dispatcher: `(A + σ_i) x_i = b` for the Hermitian
//! positive definite `A` the parameters select (docs/conventions.md, "Solver
//! conventions"): `M†M` on the full lattice (`Direct`, `NormOp`) or
//! `M̂†M̂` on the parity of `matpc` (`DirectPc`, `NormOpPc`), with `b` and
//! the `x_i` fields of that subset.
//!
//! `A` is the caller's: with `M_c = M_κ / s` in the caller's normalization
//! (`s` = 1 for kappa, 2κ for mass; for the even-odd operator `(2κ)²` for
//! mass, as `M̂ = (4 + m)² − D D/4`, and 2κ for asymmetric mass), the
//! solver iterates on `M_κ†M_κ + s²σ` with the source `s² b`; the relative
//! residuals are those of the caller's systems.

use std::time::Instant;

use super::system::{dirac, operator_scale, system_of, System};
use crate::api::multi::{MultiResult, ShiftResult};
use crate::api::params::InvertParams;
use crate::backend::{Backend, SpinorField};
use crate::dirac::{LinearOperator, Normal, Shifted, WilsonFields};
use crate::error::Result;
use crate::lattice::Subset;
use crate::solver::multishift_cg::{self, MultiShiftParams, MultiShiftStats};
use crate::solver::Monitor;

/// The subset the systems of `params` live on.
pub fn system_subset(params: &InvertParams) -> Subset {
    match system_of(params) {
        System::Full => Subset::Full,
        System::EvenOdd(p, _) => Subset::Single(p),
    }
}

/// Solves every shifted system for the source `b` (on the backend, in
/// `params.precision`, of the system's subset: `system_subset`); returns
/// the solution of each shift, in the same format.
#[allow(clippy::too_many_arguments)]
pub fn invert_multishift<B: Backend>(
    backend: &B,
    fields: WilsonFields<'_, B>,
    fields_sloppy: WilsonFields<'_, B>,
    params: &InvertParams,
    shifts: &[f64],
    tols: &[f64],
    mut b: B::Spinor,
    measure_phase1: bool,
    monitor: &dyn Monitor,
) -> Result<(MultiResult, Vec<B::Spinor>)> {
    super::prepare(backend, fields, fields_sloppy, params)?;
    let system = system_of(params);
    let lat = b.lattice().clone();
    let sub = system_subset(params);
    let (hi, lo) = (params.precision, params.precision_sloppy);
    if (b.subset(), b.precision()) != (sub, hi) {
        return Err(crate::error::Error::Internal(format!(
            "multi-shift source of {:?} in {:?}; the system needs {sub:?} in {hi:?}",
            b.subset(),
            b.precision()
        )));
    }
    let s2 = operator_scale(params, system).powi(2);
    let internal: Vec<f64> = shifts.iter().map(|s| s * s2).collect();

    // Solver time from here: the source's conversion is not in it.
    let start = Instant::now();
    if s2 != 1.0 {
        backend.ax(s2, &mut b)?;
    }
    let mut a = Normal::new(backend, dirac(backend, fields, params.kappa, hi, system)?)?;
    let flops = a.flops();
    let mut x = (0..shifts.len())
        .map(|_| backend.alloc_spinor(&lat, sub, hi))
        .collect::<Result<Vec<_>>>()?;
    let mp = MultiShiftParams {
        tols,
        maxiter: params.maxiter,
        progress_every: params.progress_every,
        delta: params.reliable_delta,
        stabilised: params.cg_stabilised,
        measure_phase1,
        refinement: Default::default(),
    };
    let stats = if lo == hi {
        let mut a2 = Normal::new(backend, dirac(backend, fields, params.kappa, hi, system)?)?;
        multishift_cg::solve(
            backend, &mut a, &mut a2, None, &internal, &mut x, &b, &mp, monitor,
        )?
    } else {
        let mut a_lo = Normal::new(
            backend,
            dirac(backend, fields_sloppy, params.kappa, lo, system)?,
        )?;
        multishift_cg::solve(
            backend, &mut a, &mut a_lo, None, &internal, &mut x, &b, &mp, monitor,
        )?
    };

    let result = finish(
        backend, &mut a, &internal, tols, &b, &x, &stats, flops, start,
    )?;
    Ok((result, x))
}

/// What a multi-shift solve of `(A + shifts[i]) x_i = b` did: the true
/// residuals of each system recomputed in high precision and the solver's
/// time to the last of them (the copies to the host come after it, as for
/// one solve). `flops` is one application of `A`; shared by the Wilson and
/// the staggered dispatchers.
#[allow(clippy::too_many_arguments)]
pub(crate) fn finish<B: Backend, A: LinearOperator<B> + ?Sized>(
    backend: &B,
    a: &mut A,
    shifts: &[f64],
    tols: &[f64],
    b: &B::Spinor,
    x: &[B::Spinor],
    stats: &MultiShiftStats,
    flops: f64,
    start: Instant,
) -> Result<MultiResult> {
    let b2 = backend.norm2(b)?;
    let mut r = backend.alloc_field(b.lattice(), b.subset(), b.precision(), b.fermion())?;
    // The true residuals (each ends in a reduction, which waits for the
    // device), then the time.
    let mut rrs = Vec::with_capacity(shifts.len());
    for (i, xi) in x.iter().enumerate() {
        let mut ai = Shifted::new(backend, &mut *a, shifts[i]);
        ai.apply(&mut r, xi)?;
        rrs.push(backend.xmy_norm2(b, &mut r)?);
    }
    let seconds = start.elapsed().as_secs_f64();
    let mut shifts_out = Vec::with_capacity(shifts.len());
    for (i, rr) in rrs.into_iter().enumerate() {
        let true_residual = if b2 > 0.0 { (rr / b2).sqrt() } else { 0.0 };
        let st = stats.shifts[i];
        shifts_out.push(ShiftResult {
            iterations: st.refinement_iterations,
            multishift_iterations: st.multishift_iterations,
            true_residual,
            residual_after_multishift: st.phase1_residual,
            converged: true_residual <= tols[i],
        });
    }
    // The whole lattice's: every rank's part counted (as QUDA's).
    let total_flops = flops * (stats.matvecs + shifts.len()) as f64 * backend.ranks() as f64;
    Ok(MultiResult {
        converged: shifts_out.iter().all(|s| s.converged),
        shifts: shifts_out,
        iterations: stats.iterations(),
        multishift_iterations: stats.multishift_iterations,
        seconds,
        multishift_seconds: stats.phase_seconds,
        gflops: if seconds > 0.0 {
            total_flops / seconds * 1e-9
        } else {
            0.0
        },
        reliable_updates: stats.reliable_updates,
        policy_used: None,
    })
}
