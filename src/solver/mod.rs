//! Krylov solvers, written once against the `Backend` trait so that the CPU
//! backend (and CI) runs the very code the GPU runs.
//!
//! Convergence is on the L2 relative residual `‖b − A x‖ / ‖b‖ < tol`
//! (docs/conventions.md, "Solver conventions"). When the iterated residual meets
//! the tolerance the solvers recompute the true residual and, if it does not
//! meet it (rounding drift), restart from it rather than report a false
//! convergence.

pub mod bicgstab;
pub mod bicgstab_l;
pub mod bicgstab_m;
pub mod bicgstab_reliable;
pub mod block;
pub mod block_bicgstab;
pub mod block_cg;
pub mod cg;
pub mod cg_reliable;
pub mod cgnr;
pub mod defect_correction;
pub mod dense;
pub mod gcr;
pub mod multishift_cg;
pub mod sap;
pub mod shift_refinement;

use crate::backend::Backend;
use crate::dirac::LinearOperator;
use crate::error::Result;

/// What a solve is asked for.
#[derive(Debug, Clone, Copy)]
pub struct SolverParams {
    /// Relative residual target `‖b − A x‖ / ‖b‖`.
    pub tol: f64,
    pub maxiter: usize,
    /// Report progress every this many iterations (0: never).
    pub progress_every: usize,
    /// Confirm convergence on the true residual `b − A x` (and go on from it
    /// when the iterated residual has drifted away). The inner solves of
    /// defect correction leave this to the outer loop: in a sloppy
    /// precision the true residual may never reach the target that the
    /// iterated one does.
    pub confirm: bool,
}

/// What a mixed-precision solve is asked for.
#[derive(Debug, Clone, Copy)]
pub struct MixedParams {
    pub tol: f64,
    pub maxiter: usize,
    pub progress_every: usize,
    /// Reliable-update threshold δ: the true residual is recomputed when
    /// the iterated one has fallen by δ below its maximum since the last.
    pub delta: f64,
    /// Inner tolerance of defect correction.
    pub tol_inner: f64,
}

impl MixedParams {
    pub(crate) fn progress(&self) -> SolverParams {
        SolverParams {
            tol: self.tol,
            maxiter: self.maxiter,
            progress_every: self.progress_every,
            confirm: true,
        }
    }
}

/// What a solve did.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SolverStats {
    pub iterations: usize,
    /// The last iterated relative residual.
    pub iterated_residual: f64,
    /// Whether the true relative residual met `tol`.
    pub converged: bool,
    /// Restarts from the true residual (after drift or near-breakdown).
    pub restarts: usize,
    /// Operator applications (for the flop count).
    pub matvecs: usize,
    /// Residual replacements in high precision (mixed precision).
    pub reliable_updates: usize,
}

/// Receives progress lines: `(iteration, relative iterated residual)`.
pub trait Monitor {
    fn progress(&self, solver: &str, iteration: usize, residual: f64);
}

/// A monitor that says nothing.
pub struct Silent;
impl Monitor for Silent {
    fn progress(&self, _: &str, _: usize, _: f64) {}
}

impl<F: Fn(&str, usize, f64)> Monitor for F {
    fn progress(&self, solver: &str, iteration: usize, residual: f64) {
        self(solver, iteration, residual)
    }
}

/// `r = b − A x`; returns `‖r‖²`. `ax` is scratch for `A x`.
pub(crate) fn true_residual<B: Backend, A: LinearOperator<B>>(
    backend: &B,
    a: &mut A,
    x: &B::Spinor,
    b: &B::Spinor,
    r: &mut B::Spinor,
) -> Result<f64> {
    a.apply(r, x)?;
    backend.xmy_norm2(b, r)
}

/// `|b|²`, or None for `b = 0`, whose solution (zero) is written to `x`:
/// the start of every solver.
pub(crate) fn source_norm2<B: Backend>(
    backend: &B,
    b: &B::Spinor,
    x: &mut B::Spinor,
) -> Result<Option<f64>> {
    let b2 = backend.norm2(b)?;
    if b2 == 0.0 {
        backend.zero(x)?;
        return Ok(None);
    }
    Ok(Some(b2))
}

pub(crate) fn report(monitor: &dyn Monitor, params: &SolverParams, name: &str, k: usize, rel: f64) {
    if params.progress_every > 0 && k.is_multiple_of(params.progress_every) {
        monitor.progress(name, k, rel);
    }
}
