//! The parameters of staggered quarks: who folds the phases into the links
//! (`PhaseFolding`), how links are stored (`StaggeredParams`), and a
//! staggered solve's system, operator and tolerances (`StaggeredInvertParams`,
//! checked by `validate`; docs/conventions.md, "The staggered operator").

use crate::api::SolverType;
use crate::error::{Error, Result};
use crate::lattice::Parity;
use crate::layout::GaugeOrder;
use crate::long_links::LongReconstruct;
use crate::precision::{Precision, TBoundary};
use crate::solver::multishift_cg::Refinement as ShiftRefinement;

/// Who folds the staggered phases and the boundary signs into the links.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PhaseFolding {
    /// The caller did, as MILC does when it calls QUDA: the links are used
    /// as they are.
    InLinks,
    /// The library does: it multiplies each link by MILC's phase
    /// `η_x = (−1)^t`, `η_y = (−1)^(t+x)`, `η_z = (−1)^(t+x+y)`, `η_t = 1`
    /// and, anti-periodic, negates the T links whose hop crosses the
    /// boundary (one-hop links on t = T−1, long links on t ≥ T−3); the long
    /// links are further multiplied by `long_coefficient` (the Naik
    /// coefficient, e.g. −1/24 with u0 = 1, if the caller left it out).
    Fold {
        t_boundary: TBoundary,
        long_coefficient: f64,
    },
}

/// How staggered links are given and stored.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StaggeredParams {
    pub dims: [usize; 4],
    /// QDP (four direction arrays) or MILC (site-major) order.
    pub order: GaugeOrder,
    pub precision: Precision,
    /// The copy the sloppy iterations use (double, single, half, quarter,
    /// or the packed 20- and 30-bit formats of seed clark2022 §4 with 16-
    /// and 32-bit fixed-point links).
    pub precision_sloppy: Precision,
    pub phases: PhaseFolding,
    /// Storage of the long links: 18 reals, or as `|s|` × U(3) in 13 or 9
    /// (`long_links`; QUDA's reconstruct 13 and 9), for the precise and the
    /// sloppy copy. Fat links are always 18.
    pub long_reconstruct: LongReconstruct,
    pub long_reconstruct_sloppy: LongReconstruct,
    /// A third copy for the refinement of mixed multi-shift solves (QUDA's
    /// `cuda_prec_refinement_sloppy`, `reconstruct_refinement_sloppy`;
    /// clark2022 §3: an int30 multi-shift phase, an int20 refinement):
    /// its precision, None for none (the refinement then uses the sloppy
    /// copy), and its long links' storage.
    pub precision_refinement: Option<Precision>,
    pub long_reconstruct_refinement: LongReconstruct,
}

impl Default for StaggeredParams {
    fn default() -> Self {
        StaggeredParams {
            dims: [4, 4, 4, 8],
            order: GaugeOrder::Qdp,
            precision: Precision::Double,
            precision_sloppy: Precision::Double,
            phases: PhaseFolding::InLinks,
            long_reconstruct: LongReconstruct::Full18,
            long_reconstruct_sloppy: LongReconstruct::Full18,
            precision_refinement: None,
            long_reconstruct_refinement: LongReconstruct::Full18,
        }
    }
}

/// Which system a staggered solve iterates on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StaggeredSolve {
    /// CG on `M̂ = 4m² − D_pq D_qp` on parity p, the other parity
    /// reconstructed (QUDA's staggered even-odd solve).
    EvenOdd(Parity),
    /// CG on `M† M` on the full lattice.
    Full,
}

/// An operator applied by `Context::apply_staggered`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StaggeredOp {
    /// The hopping term `D` (full fields).
    Dslash,
    /// `M = 2m − D` (full fields).
    M,
    /// `M† = 2m + D` (full fields).
    MDag,
    /// `M̂ = 4m² − D_pq D_qp` on fields of parity p.
    MPc(Parity),
}

/// A staggered solve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StaggeredInvertParams {
    /// The quark mass m of `M = 2m − D` (> 0).
    pub mass: f64,
    pub solve: StaggeredSolve,
    /// Target `‖b − M x‖/‖b‖`; 0 with `tol_hq` set: the heavy-quark
    /// criterion alone (MILC's `target_residual = 0`).
    pub tol: f64,
    /// Target of MILC's heavy-quark residual `sqrt(mean_x |r(x)|²/|x(x)|²)`,
    /// a second stop criterion (QUDA's `QUDA_HEAVY_QUARK_RESIDUAL`); 0: off.
    pub tol_hq: f64,
    pub maxiter: usize,
    /// Precision of the precise fields and of the links' precise copy.
    pub precision: Precision,
    /// Sloppy precision (equal to `precision`: a plain CG).
    pub precision_sloppy: Precision,
    /// Reliable-update threshold δ of mixed CG.
    pub reliable_delta: f64,
    /// The stabilisations of clark2022 §3.1 in mixed CG.
    pub cg_stabilised: bool,
    /// The solution array holds an initial guess.
    pub use_init_guess: bool,
    /// Progress every this many iterations (0: none).
    pub progress_every: usize,
    /// Multi-shift: recompute each shift's true residual after the
    /// multi-shift phase (`ShiftResult::residual_after_multishift`; one
    /// more operator application a shift), as clark2022 Table 3 shows them.
    pub measure_multishift_phase: bool,
    /// Multi-shift: the precision of the refinement after a mixed
    /// multi-shift phase (QUDA's `cuda_prec_refinement_sloppy`); the links
    /// must hold a copy in it (`StaggeredParams::precision_refinement`, or
    /// the precise or sloppy copy; the links' refinement copy is taken when
    /// it is in this precision). None: `precision_sloppy`. A pure solve
    /// (`precision_sloppy == precision`) has no refinement and ignores it.
    pub precision_refinement: Option<Precision>,
    /// Multi-shift: how the shifts are refined after a mixed-precision
    /// multi-shift phase: all together, one block application of the
    /// operator an iteration (default), or one after another as clark2022.
    pub multishift_refinement: ShiftRefinement,
    /// The Krylov solver: CG (default; on the normal equations for the
    /// full system), BiCGstab or BiCGstab(l) on `M̂` (even-odd) or on the
    /// non-Hermitian `M = 2m − D` itself (full); GCR is Wilson's (it needs
    /// SAP). Multi-shift and block solves are CG.
    pub solver: SolverType,
    /// l of BiCGstab(l) (QUDA takes it from `gcrNkrylov`); default 4.
    pub bicgstab_l: usize,
}

impl Default for StaggeredInvertParams {
    fn default() -> Self {
        StaggeredInvertParams {
            mass: 0.1,
            solve: StaggeredSolve::EvenOdd(Parity::Even),
            tol: 1e-10,
            tol_hq: 0.0,
            maxiter: 10_000,
            precision: Precision::Double,
            precision_sloppy: Precision::Double,
            reliable_delta: 0.1,
            cg_stabilised: true,
            use_init_guess: false,
            progress_every: 0,
            measure_multishift_phase: false,
            precision_refinement: None,
            multishift_refinement: ShiftRefinement::Together,
            solver: SolverType::Cg,
            bicgstab_l: 4,
        }
    }
}

/// Any finite mass, as QUDA takes it: `2m − D` (eigenvalues `2m + iλ`)
/// and `4m² − D_pq D_qp` are invertible for m ≠ 0 and positive
/// semi-definite normal operators at m = 0, where only the even-odd
/// solve's reconstruction `x_q = (b_q + D x_p)/2m` is undefined
/// (`dispatch::staggered` refuses that one).
pub(super) fn check_mass(mass: f64) -> Result<()> {
    if !mass.is_finite() {
        return Err(Error::InvalidArgument(format!(
            "mass = {mass}: not a finite number"
        )));
    }
    Ok(())
}

impl StaggeredInvertParams {
    /// The L2 tolerance a solve starts from: `tol`, or with the
    /// heavy-quark criterion alone `tol_hq` (then tightened until the
    /// heavy-quark residual meets `tol_hq`).
    pub(crate) fn first_l2_tol(&self) -> f64 {
        if self.tol > 0.0 {
            self.tol
        } else {
            self.tol_hq
        }
    }

    /// Whether a solution with these residuals meets the targets.
    pub(crate) fn met(&self, true_residual: f64, hq: f64) -> bool {
        (self.tol == 0.0 || true_residual <= self.tol) && (self.tol_hq == 0.0 || hq <= self.tol_hq)
    }

    pub(crate) fn validate(&self) -> Result<()> {
        check_mass(self.mass)?;
        if !(self.tol_hq == 0.0 || (self.tol_hq > 0.0 && self.tol_hq < 1.0)) {
            return Err(Error::InvalidArgument(format!(
                "tol_hq = {}: give 0 (no heavy-quark criterion) or 0 < tol_hq < 1",
                self.tol_hq
            )));
        }
        let hq_alone = self.tol == 0.0 && self.tol_hq > 0.0;
        if !(hq_alone || (self.tol.is_finite() && self.tol > 0.0 && self.tol < 1.0)) {
            return Err(Error::InvalidArgument(format!(
                "tol = {}: give 0 < tol < 1 (or tol = 0 with a heavy-quark target tol_hq > 0)",
                self.tol
            )));
        }
        if self.maxiter == 0 {
            return Err(Error::InvalidArgument(
                "maxiter = 0: give at least 1".into(),
            ));
        }
        if self.precision.is_sloppy_only() {
            return Err(Error::InvalidArgument(format!(
                "precision = {:?}: the precise fields are double or single",
                self.precision
            )));
        }
        let eps = self.precision.epsilon();
        if !hq_alone && self.tol < eps {
            return Err(Error::InvalidArgument(format!(
                "tol = {:e} cannot be reached with precision = {:?} (unit roundoff {eps:.1e}); \
                 ask for tol ≥ {:.0e}",
                self.tol,
                self.precision,
                10.0 * eps
            )));
        }
        if let Some(p) = self.precision_refinement {
            if p.epsilon() < self.precision.epsilon() {
                return Err(Error::InvalidArgument(format!(
                    "precision_refinement = {p:?} is more precise than precision = {:?}",
                    self.precision
                )));
            }
        }
        if !(self.reliable_delta > 0.0 && self.reliable_delta < 1.0) {
            return Err(Error::InvalidArgument(format!(
                "reliable_delta = {}: give 0 < δ < 1",
                self.reliable_delta
            )));
        }
        match self.solver {
            SolverType::Gcr => Err(Error::InvalidArgument(
                "solver = Gcr: staggered solves run CG, BiCGstab or BiCGstab(l) (GCR is \
                 preconditioned by SAP, a Wilson method)"
                    .into(),
            )),
            SolverType::BiCgStabL if self.bicgstab_l == 0 => Err(Error::InvalidArgument(
                "bicgstab_l = 0 with solver = BiCgStabL: BiCGstab(l) needs l >= 1".into(),
            )),
            _ => Ok(()),
        }
    }

    /// Refuses a solver other than CG where only CG runs (`what`: the
    /// multi-shift or block solve).
    pub(crate) fn require_cg(&self, what: &str) -> Result<()> {
        if self.solver != SolverType::Cg {
            return Err(Error::InvalidArgument(format!(
                "solver = {:?}: {what} runs CG (shifted and block Krylov spaces need a \
                 Hermitian positive definite system)",
                self.solver
            )));
        }
        Ok(())
    }
}
