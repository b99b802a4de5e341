//! Parameters and results of the safe API, validated here so the C layer and
//! Rust callers get the same checks and the same messages.

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::layout::{DiracOrder, GammaBasis, GaugeOrder};
use crate::precision::{Precision, Reconstruct, TBoundary};
pub use crate::solver::multishift_cg::Refinement as ShiftRefinement;
pub use crate::solver::sap::{BoxSolver, SapParams, Schwarz};

/// Which backend a context runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendChoice {
    /// CUDA when a device is usable, else the CPU (with a log line saying why).
    Auto,
    Cpu,
    Cuda,
}

/// `auto`, `cpu` or `cuda` (the command-line tools' `--backend`).
impl std::str::FromStr for BackendChoice {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<BackendChoice, String> {
        Ok(match s {
            "auto" => BackendChoice::Auto,
            "cpu" => BackendChoice::Cpu,
            "cuda" => BackendChoice::Cuda,
            _ => return Err(format!("'{s}' is not a backend (auto|cpu|cuda)")),
        })
    }
}

/// How much a context logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verbosity {
    Silent,
    Summarize,
    Verbose,
    Debug,
}

impl Verbosity {
    /// The level of index `i` (`Silent` 0 … `Debug` 3; above: `Debug`).
    pub(crate) fn from_index(i: u8) -> Verbosity {
        match i {
            0 => Verbosity::Silent,
            1 => Verbosity::Summarize,
            2 => Verbosity::Verbose,
            _ => Verbosity::Debug,
        }
    }

    /// `silent`, `summarize`, `verbose` or `debug` (any case), the values
    /// of `LATSOL_VERBOSITY`.
    pub fn from_name(name: &str) -> Option<Verbosity> {
        Some(match name.trim().to_ascii_lowercase().as_str() {
            "silent" => Verbosity::Silent,
            "summarize" => Verbosity::Summarize,
            "verbose" => Verbosity::Verbose,
            "debug" => Verbosity::Debug,
            _ => return None,
        })
    }
}

/// Receives every log line at or below the context's verbosity.
pub type Logger = Arc<dyn Fn(Verbosity, &str) + Send + Sync>;

/// Receives a solver's progress, `(solver, iteration, relative iterated
/// residual)`, every `InvertParams::progress_every` iterations whatever the
/// verbosity: for a progress bar or a monitor of the host's own.
pub type ProgressFn = Arc<dyn Fn(&str, usize, f64) + Send + Sync>;

/// How to start a context.
#[derive(Clone)]
pub struct InitParams {
    pub backend: BackendChoice,
    /// CUDA device ordinal; None (the default): the rank's place among
    /// the ranks on its node, or `LATSOL_DEVICE` (`comm::devices`; device
    /// 0 for one process).
    pub device: Option<usize>,
    /// CPU threads; 0 means one per core.
    pub num_threads: usize,
    pub verbosity: Verbosity,
    /// None: print to stderr.
    pub logger: Option<Logger>,
    /// None: progress only as verbose log lines.
    pub progress: Option<ProgressFn>,
    /// The ranks one lattice is cut over (issue 34); None: one process
    /// holding the whole lattice.
    pub ranks: Option<RanksParams>,
}

/// A lattice cut over the ranks of the host's communicator: every field
/// handed to the context is then the rank's local sub-lattice, and every
/// call is collective (all ranks make it, in the same order).
#[derive(Clone)]
pub struct RanksParams {
    /// The engine (`comm::MpiComm` over the host's communicator).
    pub comm: Arc<dyn crate::comm::Comm>,
    /// Ranks along x, y, z, t; their product is the communicator's size.
    pub grid: crate::comm::Dims,
    /// Which rank sits at which grid coordinates.
    pub map: crate::comm::RankMap,
    /// How global sums are formed (`LATSOL_DETERMINISTIC_SUMS` overrides).
    pub reduction: crate::comm::Reduction,
}

impl Default for InitParams {
    fn default() -> Self {
        InitParams {
            backend: BackendChoice::Auto,
            device: None,
            num_threads: 0,
            verbosity: Verbosity::Summarize,
            logger: None,
            progress: None,
            ranks: None,
        }
    }
}

/// How a host gauge field is laid out and how the library stores it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GaugeParams {
    pub dims: [usize; 4],
    pub order: GaugeOrder,
    pub t_boundary: TBoundary,
    /// Temporal/spatial lattice spacing ratio; the Wilson operator here is
    /// isotropic, so only 1 is accepted.
    pub anisotropy: f64,
    pub precision: Precision,
    pub precision_sloppy: Precision,
    pub reconstruct: Reconstruct,
    pub reconstruct_sloppy: Reconstruct,
    /// Largest accepted deviation of a link from SU(3) (`|U U† − 1|`,
    /// `|det U − 1|`); 0 picks 1e-10 for double and 1e-5 for single host
    /// fields; negative skips the check.
    pub su3_tolerance: f64,
    /// The field is in temporal gauge: every T link off the last time
    /// slice is the unit matrix (checked at load, within `su3_tolerance`),
    /// and the backend need not store or load those links.
    pub gauge_fixed: bool,
    /// The caller's T links on the last time slice already carry the
    /// anti-periodic sign (QUDA's convention for `t_boundary` ANTI_PERIODIC,
    /// used by the QUDA interface): it is taken out at load, and the
    /// operator puts it back as `t_boundary` says. Only with an
    /// anti-periodic `t_boundary`.
    pub boundary_sign_in_links: bool,
}

impl Default for GaugeParams {
    fn default() -> Self {
        GaugeParams {
            dims: [4, 4, 4, 4],
            order: GaugeOrder::Qdp,
            t_boundary: TBoundary::AntiPeriodic,
            anisotropy: 1.0,
            precision: Precision::Double,
            precision_sloppy: Precision::Double,
            reconstruct: Reconstruct::Full18,
            reconstruct_sloppy: Reconstruct::Full18,
            su3_tolerance: 0.0,
            gauge_fixed: false,
            boundary_sign_in_links: false,
        }
    }
}

impl GaugeParams {
    pub(crate) fn validate(&self) -> Result<()> {
        if !(self.anisotropy.is_finite() && self.anisotropy > 0.0) {
            return Err(Error::InvalidArgument(format!(
                "anisotropy = {}: must be a positive number",
                self.anisotropy
            )));
        }
        if self.anisotropy != 1.0 {
            return Err(Error::Unsupported(format!(
                "anisotropy = {}: the Wilson operator is isotropic (1.0)",
                self.anisotropy
            )));
        }
        if self.su3_tolerance.is_nan() {
            return Err(Error::InvalidArgument("su3_tolerance is NaN".into()));
        }
        if self.boundary_sign_in_links && self.t_boundary != TBoundary::AntiPeriodic {
            return Err(Error::InvalidArgument(
                "boundary_sign_in_links with a periodic t_boundary: only an anti-periodic \
                 boundary puts a sign in the links"
                    .into(),
            ));
        }
        if self.precision.is_sloppy_only() {
            return Err(Error::InvalidArgument(format!(
                "gauge precision = {:?}: the precise gauge field must be double or single \
                 (half, quarter and the packed formats are sloppy formats)",
                self.precision
            )));
        }
        if self.precision_sloppy.epsilon() < self.precision.epsilon() {
            return Err(Error::InvalidArgument(format!(
                "precision_sloppy = {:?} is more precise than precision = {:?}",
                self.precision_sloppy, self.precision
            )));
        }
        Ok(())
    }
}

/// Precisions a solve may run its precise fields in.
fn precise_supported(name: &str, p: Precision) -> Result<()> {
    match p {
        Precision::Double | Precision::Single => Ok(()),
        _ => Err(Error::InvalidArgument(format!(
            "{name} = {p:?}: the precise fields must be double or single"
        ))),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DslashType {
    Wilson,
    /// Wilson-clover: `M = A − κ D` with a clover field `A`.
    CloverWilson,
}

/// How the operator is normalized (docs/conventions.md, "The Wilson operator").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MassNormalization {
    /// `M = 1 − κ D`.
    Kappa,
    /// `M = (4 + m) − D/2 = (1 − κ D) / (2κ)`.
    Mass,
    /// As `Mass` for the full system; differs from it only in the
    /// preconditioned operator, which is internal here.
    AsymmetricMass,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SolverType {
    /// CG; on a non-Hermitian system it runs on the normal equations (CGNR).
    Cg,
    BiCgStab,
    /// Flexible GCR restarted every `gcr_nkrylov` steps (QUDA's GCR),
    /// right-preconditioned by SAP in `precision_sloppy` where `sap` is
    /// set; its own vectors stay in `precision`.
    Gcr,
    /// BiCGstab(l) (Sleijpen–Fokkema; QUDA's `QUDA_BICGSTABL_INVERTER`) with
    /// `l = gcr_nkrylov` (as QUDA takes it from `gcrNkrylov`), mixed
    /// precision by reliable updates; iterations counted l a cycle.
    BiCgStabL,
}

/// Which system the solver iterates on; the answer is always of `M x = b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SolveType {
    /// `M x = b` on the full lattice.
    Direct,
    /// The even-odd Schur complement `M̂ x_p = b̂_p`, then `x_p̄` from it.
    DirectPc,
    /// `M† M x = M† b`.
    NormOp,
    /// `M̂† M̂ x_p = M̂† b̂_p`.
    NormOpPc,
}

/// The parity the preconditioned system lives on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatPc {
    EvenEven,
    OddOdd,
    EvenEvenAsymmetric,
    OddOddAsymmetric,
}

/// How a solve with `precision_sloppy` ≠ `precision` keeps full accuracy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MixedScheme {
    /// Reliable updates (seed clark2010 Algorithm 2), δ = `reliable_delta`;
    /// CG with the stabilisations of seed clark2022 §3.1.
    ReliableUpdates,
    /// Defect correction (seed clark2010 Algorithm 1), inner tolerance
    /// `tol_inner`.
    DefectCorrection,
    /// Defect correction with the CG direction carried from one inner
    /// solve into the next (seed cps-mixed-precision-cg §3.2); CG only.
    DefectCorrectionCorrected,
}

/// What `invert` and `apply` are asked to do.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InvertParams {
    pub dslash: DslashType,
    pub kappa: f64,
    /// Bare mass; the Wilson operator is defined by `kappa`, and `mass`
    /// (reserved for operators defined by a mass) is not used.
    pub mass: f64,
    pub mass_normalization: MassNormalization,
    pub solver: SolverType,
    pub solve_type: SolveType,
    pub matpc: MatPc,
    /// The relative L2 residual to reach; 0 with a heavy-quark target
    /// alone.
    pub tol: f64,
    /// MILC's heavy-quark ("Fermilab") residual to reach as well,
    /// `sqrt(mean_x |r(x)|²/|x(x)|²)` (QUDA's QUDA_HEAVY_QUARK_RESIDUAL);
    /// 0 (the default) leaves it out. Solves of one system (not the
    /// multi-shift ones).
    pub tol_hq: f64,
    pub maxiter: usize,
    pub reliable_delta: f64,
    pub precision: Precision,
    /// The precision of the Krylov iteration; must match the gauge field's
    /// `precision_sloppy`. Coarser than `precision`: a mixed solve.
    pub precision_sloppy: Precision,
    pub mixed: MixedScheme,
    /// Inner tolerance of defect correction.
    pub tol_inner: f64,
    /// CG with the three stabilisations of clark2022 §3.1 (mixed precision
    /// only); false runs plain reliable-update CG.
    pub cg_stabilised: bool,
    pub dirac_order: DiracOrder,
    pub gamma_basis: GammaBasis,
    pub use_initial_guess: bool,
    /// Log a progress line every this many iterations (verbose level).
    pub progress_every: usize,
    /// Sources of a multi-source solve (`Context::invert_sources`) solved
    /// together by a block solver (seed 002: block BiCGstab with QR, or
    /// block CG where `solver` is CG or the solve type is a normal one):
    /// 1 (the default) solves them one after another, L > 1 in blocks of
    /// L, 0 all in one block. A block iterates in `precision`;
    /// `precision_sloppy` is SAP's (a Krylov block kept in single loses
    /// its gain: docs/numerics.md, "Block solvers in mixed precision").
    pub sources_per_block: usize,
    /// Block BiCGstab's memory-saving form (seed 002 Algorithm 2.2: one
    /// block of fields fewer, the same iterates).
    pub block_memory_saving: bool,
    /// The Schwarz alternating procedure as block BiCGstab's right
    /// preconditioner (seed 002 §2.2), in `precision_sloppy`, on the full
    /// Wilson or clover system: BiCGstab with a direct solve type only.
    /// With it every source goes through the block solver (one at a time
    /// where `sources_per_block` is 1). `None` (the default): no SAP.
    pub sap: Option<SapParams>,
    /// GCR's Krylov space: steps between restarts (QUDA's `gcrNkrylov`),
    /// at least 1; BiCGstab(l)'s l (QUDA takes it from the same field).
    pub gcr_nkrylov: usize,
}

impl Default for InvertParams {
    fn default() -> Self {
        InvertParams {
            dslash: DslashType::Wilson,
            kappa: 0.12,
            mass: 0.0,
            mass_normalization: MassNormalization::Kappa,
            solver: SolverType::BiCgStab,
            solve_type: SolveType::DirectPc,
            matpc: MatPc::EvenEven,
            tol: 1e-10,
            tol_hq: 0.0,
            maxiter: 10_000,
            reliable_delta: 0.1,
            precision: Precision::Double,
            precision_sloppy: Precision::Double,
            mixed: MixedScheme::ReliableUpdates,
            tol_inner: 0.1,
            cg_stabilised: true,
            dirac_order: DiracOrder::Dirac,
            gamma_basis: GammaBasis::DegrandRossi,
            use_initial_guess: false,
            progress_every: 10,
            sources_per_block: 1,
            block_memory_saving: false,
            sap: None,
            gcr_nkrylov: 16,
        }
    }
}

impl InvertParams {
    /// Checks what the operator needs (for `apply` as for `invert`).
    pub(crate) fn validate_operator(&self) -> Result<()> {
        if !(self.kappa.is_finite() && self.kappa > 0.0) {
            return Err(Error::InvalidArgument(format!(
                "kappa = {}: must be a positive number",
                self.kappa
            )));
        }
        if !self.mass.is_finite() {
            return Err(Error::InvalidArgument(format!(
                "mass = {}: not finite",
                self.mass
            )));
        }
        precise_supported("precision", self.precision)
    }

    /// Checks the whole set for a solve.
    pub(crate) fn validate_solve(&self) -> Result<()> {
        self.validate_operator()?;
        if !(self.tol_hq.is_finite() && self.tol_hq >= 0.0 && self.tol_hq < 1.0) {
            return Err(Error::InvalidArgument(format!(
                "tol_hq = {}: must lie in [0, 1) (0: no heavy-quark target)",
                self.tol_hq
            )));
        }
        let hq_alone = self.tol == 0.0 && self.tol_hq > 0.0;
        let l2_target = self.tol.is_finite() && self.tol > 0.0 && self.tol < 1.0;
        if !(hq_alone || l2_target) {
            return Err(Error::InvalidArgument(format!(
                "tol = {}: must lie in (0, 1) (0 only with a heavy-quark target, tol_hq)",
                self.tol
            )));
        }
        self.check_reachable(self.first_l2_tol(), "tol")?;
        if self.maxiter == 0 {
            return Err(Error::InvalidArgument(
                "maxiter = 0: must be positive".into(),
            ));
        }
        if !(self.reliable_delta.is_finite()
            && self.reliable_delta > 0.0
            && self.reliable_delta <= 1.0)
        {
            return Err(Error::InvalidArgument(format!(
                "reliable_delta = {}: must lie in (0, 1]",
                self.reliable_delta
            )));
        }
        if self.precision_sloppy.epsilon() < self.precision.epsilon() {
            return Err(Error::InvalidArgument(format!(
                "precision_sloppy = {:?} is more precise than precision = {:?}",
                self.precision_sloppy, self.precision
            )));
        }
        if !(self.tol_inner.is_finite() && self.tol_inner > 0.0 && self.tol_inner < 1.0) {
            return Err(Error::InvalidArgument(format!(
                "tol_inner = {}: must lie in (0, 1)",
                self.tol_inner
            )));
        }
        if self.mixed == MixedScheme::DefectCorrectionCorrected && self.solver != SolverType::Cg {
            return Err(Error::InvalidArgument(format!(
                "mixed = DefectCorrectionCorrected with solver = {:?}: the corrected scheme \
                 carries a CG direction between inner solves (solver must be CG)",
                self.solver
            )));
        }
        if self.mixed != MixedScheme::ReliableUpdates
            && self.tol_inner <= self.precision_sloppy.epsilon()
        {
            return Err(Error::InvalidArgument(format!(
                "tol_inner = {:e} is below the epsilon of precision_sloppy = {:?} ({:e})",
                self.tol_inner,
                self.precision_sloppy,
                self.precision_sloppy.epsilon()
            )));
        }
        if let Some(sap) = &self.sap {
            sap.check()?;
            let direct = matches!(self.solve_type, SolveType::Direct | SolveType::DirectPc);
            let preconditionable = matches!(self.solver, SolverType::BiCgStab | SolverType::Gcr);
            if !preconditionable || !direct {
                return Err(Error::InvalidArgument(format!(
                    "sap with solver = {:?}, solve_type = {:?}: SAP preconditions block \
                     BiCGstab or GCR on M itself (a direct solve type)",
                    self.solver, self.solve_type
                )));
            }
            if sap.box_solver == BoxSolver::Mr && self.solver != SolverType::Gcr {
                return Err(Error::InvalidArgument(
                    "sap with MR box solves is not a fixed linear map: it preconditions the \
                     flexible GCR only (solver Gcr)"
                        .into(),
                ));
            }
        }
        if self.solver == SolverType::Gcr && self.gcr_nkrylov == 0 {
            return Err(Error::InvalidArgument(
                "gcr_nkrylov = 0: GCR needs a Krylov space of at least one vector".into(),
            ));
        }
        if self.solver == SolverType::BiCgStabL {
            if self.gcr_nkrylov == 0 {
                return Err(Error::InvalidArgument(
                    "gcr_nkrylov = 0 with solver = BiCgStabL: BiCGstab(l) needs l >= 1".into(),
                ));
            }
            if self.mixed != MixedScheme::ReliableUpdates {
                return Err(Error::InvalidArgument(format!(
                    "mixed = {:?} with solver = BiCgStabL: BiCGstab(l) is mixed by reliable \
                     updates only",
                    self.mixed
                )));
            }
            if self.sources_per_block != 1 {
                return Err(Error::InvalidArgument(format!(
                    "sources_per_block = {} with solver = BiCgStabL: BiCGstab(l) solves sources \
                     one at a time (block BiCGstab is solver = BiCgStab)",
                    self.sources_per_block
                )));
            }
        }
        Ok(())
    }

    /// Refuses a tolerance below the unit roundoff of the precise fields:
    /// the true residual of such a solve stalls near that roundoff (a
    /// single-precision solve near 1e-7 or 1e-8), so it would run to
    /// `maxiter` and end NOT_CONVERGED.
    pub(crate) fn check_reachable(&self, tol: f64, name: &str) -> Result<()> {
        let eps = self.precision.epsilon();
        if tol < eps {
            return Err(Error::InvalidArgument(format!(
                "{name} = {tol:e} cannot be reached with precision = {:?}: its unit roundoff is \
                 {eps:.1e}, and the true residual stalls near it; ask for {name} ≥ {:.0e} or \
                 precision = Double",
                self.precision,
                (10.0 * eps).min(0.5)
            )));
        }
        Ok(())
    }

    /// The L2 tolerance a solve starts from: `tol`, or with the
    /// heavy-quark target alone `tol_hq` (then tightened until the
    /// heavy-quark residual meets it).
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

    /// The factor that turns the caller's source into the source of the
    /// kappa-normalized system.
    pub(crate) fn source_scale(&self) -> f64 {
        match self.mass_normalization {
            MassNormalization::Kappa => 1.0,
            MassNormalization::Mass | MassNormalization::AsymmetricMass => 2.0 * self.kappa,
        }
    }
}

/// How the caller's vectors of a solve relate to the system (QUDA's
/// `solution_type`, `mass_normalization` and `dagger`, for its interface):
/// applied to the source and the solution on the backend, beside the
/// conversion from the caller's order, so no host copy is made.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SystemForm {
    /// The source is multiplied by this first (finite, not 0).
    pub source_factor: f64,
    /// Solve the adjoint system `M† x = b` as `M (γ5 x) = γ5 b`: γ5 on the
    /// source and on the solution (`M† = γ5 M γ5`; not for the symmetric
    /// clover even-odd operator, whose adjoint is not of that form).
    pub dagger: bool,
    /// The source and solution are fields of the `matpc` parity (V/2
    /// sites) and the system is the even-odd operator's own, `M̂ x = b`
    /// (an even-odd `solve_type`, κ normalization); the true residual is
    /// that of `M̂`.
    pub preconditioned: bool,
}

impl Default for SystemForm {
    fn default() -> Self {
        SystemForm {
            source_factor: 1.0,
            dagger: false,
            preconditioned: false,
        }
    }
}

impl SystemForm {
    pub(crate) fn validate(&self, params: &InvertParams, clover: bool) -> Result<()> {
        if !(self.source_factor.is_finite() && self.source_factor != 0.0) {
            return Err(Error::InvalidArgument(format!(
                "source_factor = {}: must be finite and not 0",
                self.source_factor
            )));
        }
        if self.preconditioned {
            if !matches!(params.solve_type, SolveType::DirectPc | SolveType::NormOpPc) {
                return Err(Error::InvalidArgument(format!(
                    "solve_type = {:?}: the preconditioned system is solved by an even-odd \
                     solve (DirectPc or NormOpPc)",
                    params.solve_type
                )));
            }
            if params.mass_normalization != MassNormalization::Kappa {
                return Err(Error::InvalidArgument(format!(
                    "mass_normalization = {:?}: the preconditioned system is solved in κ \
                     normalization (scale the source by source_factor)",
                    params.mass_normalization
                )));
            }
        }
        let symmetric = matches!(params.matpc, MatPc::EvenEven | MatPc::OddOdd);
        if self.dagger && self.preconditioned && clover && symmetric {
            return Err(Error::Unsupported(
                "dagger with the symmetric clover even-odd operator: its adjoint (A⁻¹K)† = K†A⁻¹ \
                 is not γ5 M̂ γ5"
                    .into(),
            ));
        }
        Ok(())
    }
}

/// Which operator `apply` computes, on full fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OperatorKind {
    /// `M` in the chosen normalization.
    M,
    /// `M†`.
    MDag,
    /// `M† M`.
    MDagM,
    /// The hopping term `D` alone.
    Dslash,
    /// The even-odd operator `M̂` of `matpc` (symmetric or asymmetric), on
    /// single-parity fields of its parity, in the caller's normalization.
    MPc,
    /// `M̂†`.
    MPcDag,
    /// The clover term `A` alone (Wilson-clover only), as stored.
    Clover,
    /// Its inverse `A⁻¹`.
    CloverInverse,
}

/// What a solve did.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct InvertResult {
    pub iterations: usize,
    /// `‖b − M x‖ / ‖b‖` recomputed in the solve's precision after the solve.
    pub true_residual: f64,
    /// The solver's last iterated relative residual (of the system it iterated on).
    pub iterated_residual: f64,
    /// Seconds of the Krylov solve, host-side reordering and transfers excluded.
    pub seconds: f64,
    /// Operator flops (1320 per site per hopping term, 48 per axpy) over
    /// time, on the whole lattice (every rank's sites, as QUDA counts).
    pub gflops: f64,
    pub converged: bool,
    /// Restarts from the true residual (and defect-correction restarts).
    pub restarts: usize,
    /// Residual replacements in high precision (mixed precision).
    pub reliable_updates: usize,
    /// MILC's heavy-quark residual `sqrt(mean_x |r(x)|²/|x(x)|²)` of the
    /// true residual (staggered solves; 0 where not computed).
    pub true_residual_hq: f64,
}
