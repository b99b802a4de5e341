//! The C enumerations and their checked conversions.
//!
//! Each C enum is an `int32_t` typedef with `#define`d values, never a Rust
//! `enum` read from C memory: a value C sends that is not a variant would
//! be undefined behaviour in a Rust enum, and here it is an
//! `LATSOL_ERROR_INVALID_ARGUMENT` naming the field, the value and the
//! valid choices. One table per enum pairs each code with its Rust value,
//! so decoding (C → Rust) and encoding (the defaults) cannot disagree.

use crate::api::{
    BackendChoice, BoxSolver, DslashType, MassNormalization, MatPc, MixedScheme, MultiMassPolicy,
    OperatorKind, Schwarz, SequenceGuess, SolveType, SolverType, Verbosity,
};
use crate::error::{Error, Result};
use crate::layout::{DiracOrder, GammaBasis, GaugeOrder};
use crate::precision::{Precision, Reconstruct, TBoundary};

/// Which backend a context runs on.
pub type latsol_backend = i32;
/// CUDA when a device is usable, else the CPU (with a log line saying why).
pub const LATSOL_BACKEND_AUTO: latsol_backend = 0;
/// The CPU, multi-threaded.
pub const LATSOL_BACKEND_CPU: latsol_backend = 1;
/// A CUDA GPU; `LATSOL_ERROR_NO_DEVICE` if none is usable.
pub const LATSOL_BACKEND_CUDA: latsol_backend = 2;

/// How much a context logs; also the level of each log line.
pub type latsol_verbosity = i32;
/// Nothing.
pub const LATSOL_VERBOSITY_SILENT: latsol_verbosity = 0;
/// A summary line per solve.
pub const LATSOL_VERBOSITY_SUMMARIZE: latsol_verbosity = 1;
/// Also progress lines and setup.
pub const LATSOL_VERBOSITY_VERBOSE: latsol_verbosity = 2;
/// Everything.
pub const LATSOL_VERBOSITY_DEBUG: latsol_verbosity = 3;

/// A storage or host precision.
pub type latsol_precision = i32;
/// 64-bit IEEE (`double`).
pub const LATSOL_PRECISION_DOUBLE: latsol_precision = 0;
/// 32-bit IEEE (`float`).
pub const LATSOL_PRECISION_SINGLE: latsol_precision = 1;
/// 16-bit fixed point with a per-site norm (device-side sloppy fields only).
pub const LATSOL_PRECISION_HALF: latsol_precision = 2;
/// 8-bit fixed point with a per-site norm (device-side sloppy fields only).
pub const LATSOL_PRECISION_QUARTER: latsol_precision = 3;
/// 20-bit integers with one shared exponent per site (sloppy spinors; links
/// in 16-bit fixed point).
pub const LATSOL_PRECISION_PACKED20: latsol_precision = 4;
/// 30-bit integers with one shared exponent per site (sloppy spinors; links
/// in 32-bit fixed point; arithmetic in double).
pub const LATSOL_PRECISION_PACKED30: latsol_precision = 5;

/// How many reals of each 3x3 link the library stores; the value is the
/// count.
pub type latsol_reconstruct = i32;
/// All 18 reals (no compression).
pub const LATSOL_RECONSTRUCT_18: latsol_reconstruct = 18;
/// Two rows; the third is rebuilt (SU(3) links only).
pub const LATSOL_RECONSTRUCT_12: latsol_reconstruct = 12;
/// Eight reals (SU(3) links only).
pub const LATSOL_RECONSTRUCT_8: latsol_reconstruct = 8;
/// Staggered long links only: `|s|` times U(3), two rows and the phase of
/// the determinant (QUDA's reconstruct 13).
pub const LATSOL_RECONSTRUCT_13: latsol_reconstruct = 13;
/// Staggered long links only: `|s|` times U(3), the eight numbers of the
/// SU(3) part and the phase of the determinant (QUDA's reconstruct 9).
pub const LATSOL_RECONSTRUCT_9: latsol_reconstruct = 9;

/// The order of a host gauge field (docs/conventions.md).
pub type latsol_gauge_order = i32;
/// Four arrays (mu = x, y, z, t) of V row-major links, even-odd sites.
pub const LATSOL_GAUGE_ORDER_QDP: latsol_gauge_order = 0;
/// One array, even-odd sites, 4 row-major links per site (mu inner).
pub const LATSOL_GAUGE_ORDER_MILC: latsol_gauge_order = 1;
/// One array, even-odd sites, 4 column-major links per site (mu inner).
pub const LATSOL_GAUGE_ORDER_CPS_WILSON: latsol_gauge_order = 2;

/// The boundary condition in time (space is always periodic).
pub type latsol_t_boundary = i32;
/// Periodic in time.
pub const LATSOL_T_BOUNDARY_PERIODIC: latsol_t_boundary = 0;
/// Anti-periodic in time: a hop across the T boundary carries a factor -1
/// (applied inside the library; the caller's links are not modified).
pub const LATSOL_T_BOUNDARY_ANTIPERIODIC: latsol_t_boundary = 1;

/// The Dirac operator.
pub type latsol_dslash = i32;
/// Wilson fermions.
pub const LATSOL_DSLASH_WILSON: latsol_dslash = 0;
/// Wilson-clover fermions, `M = A - kappa D` with a clover field `A`
/// (`latsol_clover`; the `*_clover` entry points).
pub const LATSOL_DSLASH_CLOVER_WILSON: latsol_dslash = 1;

/// How the operator is normalized (docs/conventions.md, "The Wilson operator").
pub type latsol_mass_normalization = i32;
/// `M = 1 - kappa D`.
pub const LATSOL_NORMALIZATION_KAPPA: latsol_mass_normalization = 0;
/// `M = (4 + m) - D/2 = (1 - kappa D) / (2 kappa)`.
pub const LATSOL_NORMALIZATION_MASS: latsol_mass_normalization = 1;
/// As `LATSOL_NORMALIZATION_MASS` for the full system (differs only in the
/// preconditioned operator, which is internal).
pub const LATSOL_NORMALIZATION_ASYMMETRIC_MASS: latsol_mass_normalization = 2;

/// The Krylov solver.
pub type latsol_solver = i32;
/// Conjugate gradients; on `M` it runs on the normal equations (CGNR).
pub const LATSOL_SOLVER_CG: latsol_solver = 0;
/// BiCGstab, on `M` directly.
pub const LATSOL_SOLVER_BICGSTAB: latsol_solver = 1;
/// Flexible GCR restarted every `gcr_nkrylov` steps, right-preconditioned
/// by SAP where `sap_cycles` > 0.
pub const LATSOL_SOLVER_GCR: latsol_solver = 2;
/// BiCGstab(l) with l = `gcr_nkrylov` (QUDA's `QUDA_BICGSTABL_INVERTER`).
pub const LATSOL_SOLVER_BICGSTABL: latsol_solver = 3;

/// How SAP's box solves combine within a cycle.
pub type latsol_schwarz = i32;
/// Black boxes on the residual, the residual updated, white boxes on it.
pub const LATSOL_SCHWARZ_MULTIPLICATIVE: latsol_schwarz = 0;
/// Every box on the same residual at once.
pub const LATSOL_SCHWARZ_ADDITIVE: latsol_schwarz = 1;

/// How SAP solves a box's system.
pub type latsol_box_solver = i32;
/// SSOR Richardson steps: a fixed linear map (block BiCGstab or GCR).
pub const LATSOL_BOX_SSOR: latsol_box_solver = 0;
/// Minimal-residual steps: not a fixed map (GCR only).
pub const LATSOL_BOX_MR: latsol_box_solver = 1;

/// Which system the solver iterates on; the answer is always of `M x = b`.
pub type latsol_solve_type = i32;
/// `M x = b` on the full lattice.
pub const LATSOL_SOLVE_DIRECT: latsol_solve_type = 0;
/// The even-odd preconditioned system, then the other parity from it.
pub const LATSOL_SOLVE_DIRECT_PC: latsol_solve_type = 1;
/// `M^dag M x = M^dag b` on the full lattice.
pub const LATSOL_SOLVE_NORMOP: latsol_solve_type = 2;
/// The normal equations of the even-odd preconditioned system.
pub const LATSOL_SOLVE_NORMOP_PC: latsol_solve_type = 3;

/// The parity (and form) of the even-odd preconditioned system.
pub type latsol_matpc = i32;
/// Symmetric, on the even sites.
pub const LATSOL_MATPC_EVEN_EVEN: latsol_matpc = 0;
/// Symmetric, on the odd sites.
pub const LATSOL_MATPC_ODD_ODD: latsol_matpc = 1;
/// Asymmetric, on the even sites.
pub const LATSOL_MATPC_EVEN_EVEN_ASYMMETRIC: latsol_matpc = 2;
/// Asymmetric, on the odd sites.
pub const LATSOL_MATPC_ODD_ODD_ASYMMETRIC: latsol_matpc = 3;

/// The order of a host spinor field (docs/conventions.md).
pub type latsol_dirac_order = i32;
/// Even-odd sites; per site spin outer, colour inner.
pub const LATSOL_DIRAC_ORDER_DIRAC: latsol_dirac_order = 0;
/// Even-odd sites; per site colour outer, spin inner.
pub const LATSOL_DIRAC_ORDER_QDP: latsol_dirac_order = 1;
/// Odd-even sites; per site spin outer, colour inner.
pub const LATSOL_DIRAC_ORDER_CPS_WILSON: latsol_dirac_order = 2;

/// The gamma basis of host spinors.
pub type latsol_gamma_basis = i32;
/// DeGrand-Rossi (Chroma, MILC, QUDA's host fields).
pub const LATSOL_GAMMA_DEGRAND_ROSSI: latsol_gamma_basis = 0;
/// UKQCD (non-relativistic; gamma_4 diagonal).
pub const LATSOL_GAMMA_UKQCD: latsol_gamma_basis = 1;
/// Chiral (gamma_5 diagonal; QUDA's CHIRAL basis, tmLQCD's spinors).
pub const LATSOL_GAMMA_CHIRAL: latsol_gamma_basis = 2;

/// How a mixed-precision solve (`precision_sloppy` coarser than
/// `precision`) keeps full accuracy.
pub type latsol_mixed_scheme = i32;
/// Reliable updates, delta = `reliable_delta`.
pub const LATSOL_MIXED_RELIABLE_UPDATES: latsol_mixed_scheme = 0;
/// Defect correction, inner tolerance `tol_inner`.
pub const LATSOL_MIXED_DEFECT_CORRECTION: latsol_mixed_scheme = 1;
/// Defect correction with the CG search direction carried from one inner
/// solve into the next (corrected mixed-precision CG); solver CG only.
pub const LATSOL_MIXED_DEFECT_CORRECTION_CORRECTED: latsol_mixed_scheme = 2;

/// The operator `latsol_apply` computes, on full fields.
pub type latsol_operator = i32;
/// `M` in the chosen normalization.
pub const LATSOL_OP_M: latsol_operator = 0;
/// `M^dag`.
pub const LATSOL_OP_MDAG: latsol_operator = 1;
/// `M^dag M`.
pub const LATSOL_OP_MDAG_M: latsol_operator = 2;
/// The hopping term `D` alone (full lattice, same boundary condition).
pub const LATSOL_OP_DSLASH: latsol_operator = 3;
/// The even-odd operator of `matpc` (symmetric or asymmetric; Wilson has
/// one form), on single-parity fields (V/2*24 reals) of its parity, in the
/// chosen normalization.
pub const LATSOL_OP_MPC: latsol_operator = 4;
/// Its adjoint, on single-parity fields.
pub const LATSOL_OP_MPC_DAG: latsol_operator = 5;
/// The clover term `A` alone, full fields (Wilson-clover only).
pub const LATSOL_OP_CLOVER: latsol_operator = 6;
/// The clover term's inverse `A^-1`, full fields (Wilson-clover only).
pub const LATSOL_OP_CLOVER_INV: latsol_operator = 7;

/// How `latsol_invert_multimass` solves `M(kappa_i) x_i = b`.
pub type latsol_multimass_policy = i32;
/// BiCGstab-M when its 2n+1 extra full fields fit in memory and its
/// expected cost is the lower, else the single-mass sequence with
/// polynomial guesses.
pub const LATSOL_MULTIMASS_AUTO: latsol_multimass_policy = 0;
/// Multi-shift BiCGstab on the full system, in `precision` (alexandru2011
/// section 6.1).
pub const LATSOL_MULTIMASS_BICGSTAB_M: latsol_multimass_policy = 1;
/// One even-odd solve per mass, heaviest first, mixed precision as
/// `precision_sloppy` says, each from the Lagrange extrapolation of the
/// previous solutions (alexandru2011 section 6.2.1).
pub const LATSOL_MULTIMASS_SEQUENCE: latsol_multimass_policy = 2;
/// As SEQUENCE, each guess minimising the residual over the span of the
/// previous solutions (alexandru2011 section 6.2.2).
pub const LATSOL_MULTIMASS_SEQUENCE_MINRES: latsol_multimass_policy = 3;
/// As SEQUENCE, every solve from zero (the baseline of alexandru2011 Fig. 6).
pub const LATSOL_MULTIMASS_SEQUENCE_ZERO_GUESS: latsol_multimass_policy = 4;

/// One C enumeration: its C type name and its values.
pub(crate) struct CEnum<T: 'static> {
    type_name: &'static str,
    variants: &'static [(&'static str, i32, T)],
}

impl<T: 'static> CEnum<T> {
    /// An enumeration of C type `type_name` and its `(name, code, value)`s.
    pub(crate) const fn new(
        type_name: &'static str,
        variants: &'static [(&'static str, i32, T)],
    ) -> Self {
        CEnum {
            type_name,
            variants,
        }
    }
}

impl<T: Copy + PartialEq + std::fmt::Debug> CEnum<T> {
    /// The Rust value of `code`; an unknown code is an error naming `field`.
    pub(crate) fn decode(&self, code: i32, field: &str) -> Result<T> {
        self.variants
            .iter()
            .find(|v| v.1 == code)
            .map(|v| v.2)
            .ok_or_else(|| {
                let choices: Vec<String> = self
                    .variants
                    .iter()
                    .map(|(name, c, _)| format!("{name} = {c}"))
                    .collect();
                Error::InvalidArgument(format!(
                    "{field} = {code} is not a {} (one of {})",
                    self.type_name,
                    choices.join(", ")
                ))
            })
    }

    /// The C code of `value`. Every Rust value has one; a missing entry is
    /// a bug, and the panic is caught at the boundary.
    pub(crate) fn encode(&self, value: T) -> i32 {
        match self.variants.iter().find(|v| v.2 == value) {
            Some(v) => v.1,
            None => panic!("{}: no C code for {value:?}", self.type_name),
        }
    }

    /// The C name of a code, for messages.
    pub(crate) fn name(&self, code: i32) -> &'static str {
        self.variants
            .iter()
            .find(|v| v.1 == code)
            .map_or("?", |v| v.0)
    }
}

pub(crate) static BACKEND: CEnum<BackendChoice> = CEnum {
    type_name: "latsol_backend",
    variants: &[
        (
            "LATSOL_BACKEND_AUTO",
            LATSOL_BACKEND_AUTO,
            BackendChoice::Auto,
        ),
        ("LATSOL_BACKEND_CPU", LATSOL_BACKEND_CPU, BackendChoice::Cpu),
        (
            "LATSOL_BACKEND_CUDA",
            LATSOL_BACKEND_CUDA,
            BackendChoice::Cuda,
        ),
    ],
};

pub(crate) static VERBOSITY: CEnum<Verbosity> = CEnum {
    type_name: "latsol_verbosity",
    variants: &[
        (
            "LATSOL_VERBOSITY_SILENT",
            LATSOL_VERBOSITY_SILENT,
            Verbosity::Silent,
        ),
        (
            "LATSOL_VERBOSITY_SUMMARIZE",
            LATSOL_VERBOSITY_SUMMARIZE,
            Verbosity::Summarize,
        ),
        (
            "LATSOL_VERBOSITY_VERBOSE",
            LATSOL_VERBOSITY_VERBOSE,
            Verbosity::Verbose,
        ),
        (
            "LATSOL_VERBOSITY_DEBUG",
            LATSOL_VERBOSITY_DEBUG,
            Verbosity::Debug,
        ),
    ],
};

pub(crate) static PRECISION: CEnum<Precision> = CEnum {
    type_name: "latsol_precision",
    variants: &[
        (
            "LATSOL_PRECISION_DOUBLE",
            LATSOL_PRECISION_DOUBLE,
            Precision::Double,
        ),
        (
            "LATSOL_PRECISION_SINGLE",
            LATSOL_PRECISION_SINGLE,
            Precision::Single,
        ),
        (
            "LATSOL_PRECISION_HALF",
            LATSOL_PRECISION_HALF,
            Precision::Half,
        ),
        (
            "LATSOL_PRECISION_QUARTER",
            LATSOL_PRECISION_QUARTER,
            Precision::Quarter,
        ),
        (
            "LATSOL_PRECISION_PACKED20",
            LATSOL_PRECISION_PACKED20,
            Precision::Packed20,
        ),
        (
            "LATSOL_PRECISION_PACKED30",
            LATSOL_PRECISION_PACKED30,
            Precision::Packed30,
        ),
    ],
};

pub(crate) static RECONSTRUCT: CEnum<Reconstruct> = CEnum {
    type_name: "latsol_reconstruct",
    variants: &[
        (
            "LATSOL_RECONSTRUCT_18",
            LATSOL_RECONSTRUCT_18,
            Reconstruct::Full18,
        ),
        (
            "LATSOL_RECONSTRUCT_12",
            LATSOL_RECONSTRUCT_12,
            Reconstruct::Twelve,
        ),
        (
            "LATSOL_RECONSTRUCT_8",
            LATSOL_RECONSTRUCT_8,
            Reconstruct::Eight,
        ),
    ],
};

pub(crate) static GAUGE_ORDER: CEnum<GaugeOrder> = CEnum {
    type_name: "latsol_gauge_order",
    variants: &[
        (
            "LATSOL_GAUGE_ORDER_QDP",
            LATSOL_GAUGE_ORDER_QDP,
            GaugeOrder::Qdp,
        ),
        (
            "LATSOL_GAUGE_ORDER_MILC",
            LATSOL_GAUGE_ORDER_MILC,
            GaugeOrder::Milc,
        ),
        (
            "LATSOL_GAUGE_ORDER_CPS_WILSON",
            LATSOL_GAUGE_ORDER_CPS_WILSON,
            GaugeOrder::CpsWilson,
        ),
    ],
};

pub(crate) static T_BOUNDARY: CEnum<TBoundary> = CEnum {
    type_name: "latsol_t_boundary",
    variants: &[
        (
            "LATSOL_T_BOUNDARY_PERIODIC",
            LATSOL_T_BOUNDARY_PERIODIC,
            TBoundary::Periodic,
        ),
        (
            "LATSOL_T_BOUNDARY_ANTIPERIODIC",
            LATSOL_T_BOUNDARY_ANTIPERIODIC,
            TBoundary::AntiPeriodic,
        ),
    ],
};

pub(crate) static DSLASH: CEnum<DslashType> = CEnum {
    type_name: "latsol_dslash",
    variants: &[
        (
            "LATSOL_DSLASH_WILSON",
            LATSOL_DSLASH_WILSON,
            DslashType::Wilson,
        ),
        (
            "LATSOL_DSLASH_CLOVER_WILSON",
            LATSOL_DSLASH_CLOVER_WILSON,
            DslashType::CloverWilson,
        ),
    ],
};

pub(crate) static MASS_NORMALIZATION: CEnum<MassNormalization> = CEnum {
    type_name: "latsol_mass_normalization",
    variants: &[
        (
            "LATSOL_NORMALIZATION_KAPPA",
            LATSOL_NORMALIZATION_KAPPA,
            MassNormalization::Kappa,
        ),
        (
            "LATSOL_NORMALIZATION_MASS",
            LATSOL_NORMALIZATION_MASS,
            MassNormalization::Mass,
        ),
        (
            "LATSOL_NORMALIZATION_ASYMMETRIC_MASS",
            LATSOL_NORMALIZATION_ASYMMETRIC_MASS,
            MassNormalization::AsymmetricMass,
        ),
    ],
};

pub(crate) static SOLVER: CEnum<SolverType> = CEnum {
    type_name: "latsol_solver",
    variants: &[
        ("LATSOL_SOLVER_CG", LATSOL_SOLVER_CG, SolverType::Cg),
        (
            "LATSOL_SOLVER_BICGSTAB",
            LATSOL_SOLVER_BICGSTAB,
            SolverType::BiCgStab,
        ),
        ("LATSOL_SOLVER_GCR", LATSOL_SOLVER_GCR, SolverType::Gcr),
        (
            "LATSOL_SOLVER_BICGSTABL",
            LATSOL_SOLVER_BICGSTABL,
            SolverType::BiCgStabL,
        ),
    ],
};

pub(crate) static SCHWARZ: CEnum<Schwarz> = CEnum {
    type_name: "latsol_schwarz",
    variants: &[
        (
            "LATSOL_SCHWARZ_MULTIPLICATIVE",
            LATSOL_SCHWARZ_MULTIPLICATIVE,
            Schwarz::Multiplicative,
        ),
        (
            "LATSOL_SCHWARZ_ADDITIVE",
            LATSOL_SCHWARZ_ADDITIVE,
            Schwarz::Additive,
        ),
    ],
};

pub(crate) static BOX_SOLVER: CEnum<BoxSolver> = CEnum {
    type_name: "latsol_box_solver",
    variants: &[
        ("LATSOL_BOX_SSOR", LATSOL_BOX_SSOR, BoxSolver::Ssor),
        ("LATSOL_BOX_MR", LATSOL_BOX_MR, BoxSolver::Mr),
    ],
};

pub(crate) static SOLVE_TYPE: CEnum<SolveType> = CEnum {
    type_name: "latsol_solve_type",
    variants: &[
        (
            "LATSOL_SOLVE_DIRECT",
            LATSOL_SOLVE_DIRECT,
            SolveType::Direct,
        ),
        (
            "LATSOL_SOLVE_DIRECT_PC",
            LATSOL_SOLVE_DIRECT_PC,
            SolveType::DirectPc,
        ),
        (
            "LATSOL_SOLVE_NORMOP",
            LATSOL_SOLVE_NORMOP,
            SolveType::NormOp,
        ),
        (
            "LATSOL_SOLVE_NORMOP_PC",
            LATSOL_SOLVE_NORMOP_PC,
            SolveType::NormOpPc,
        ),
    ],
};

pub(crate) static MATPC: CEnum<MatPc> = CEnum {
    type_name: "latsol_matpc",
    variants: &[
        (
            "LATSOL_MATPC_EVEN_EVEN",
            LATSOL_MATPC_EVEN_EVEN,
            MatPc::EvenEven,
        ),
        ("LATSOL_MATPC_ODD_ODD", LATSOL_MATPC_ODD_ODD, MatPc::OddOdd),
        (
            "LATSOL_MATPC_EVEN_EVEN_ASYMMETRIC",
            LATSOL_MATPC_EVEN_EVEN_ASYMMETRIC,
            MatPc::EvenEvenAsymmetric,
        ),
        (
            "LATSOL_MATPC_ODD_ODD_ASYMMETRIC",
            LATSOL_MATPC_ODD_ODD_ASYMMETRIC,
            MatPc::OddOddAsymmetric,
        ),
    ],
};

pub(crate) static DIRAC_ORDER: CEnum<DiracOrder> = CEnum {
    type_name: "latsol_dirac_order",
    variants: &[
        (
            "LATSOL_DIRAC_ORDER_DIRAC",
            LATSOL_DIRAC_ORDER_DIRAC,
            DiracOrder::Dirac,
        ),
        (
            "LATSOL_DIRAC_ORDER_QDP",
            LATSOL_DIRAC_ORDER_QDP,
            DiracOrder::Qdp,
        ),
        (
            "LATSOL_DIRAC_ORDER_CPS_WILSON",
            LATSOL_DIRAC_ORDER_CPS_WILSON,
            DiracOrder::CpsWilson,
        ),
    ],
};

pub(crate) static GAMMA_BASIS: CEnum<GammaBasis> = CEnum {
    type_name: "latsol_gamma_basis",
    variants: &[
        (
            "LATSOL_GAMMA_DEGRAND_ROSSI",
            LATSOL_GAMMA_DEGRAND_ROSSI,
            GammaBasis::DegrandRossi,
        ),
        ("LATSOL_GAMMA_UKQCD", LATSOL_GAMMA_UKQCD, GammaBasis::Ukqcd),
        (
            "LATSOL_GAMMA_CHIRAL",
            LATSOL_GAMMA_CHIRAL,
            GammaBasis::Chiral,
        ),
    ],
};

pub(crate) static MIXED_SCHEME: CEnum<MixedScheme> = CEnum {
    type_name: "latsol_mixed_scheme",
    variants: &[
        (
            "LATSOL_MIXED_RELIABLE_UPDATES",
            LATSOL_MIXED_RELIABLE_UPDATES,
            MixedScheme::ReliableUpdates,
        ),
        (
            "LATSOL_MIXED_DEFECT_CORRECTION",
            LATSOL_MIXED_DEFECT_CORRECTION,
            MixedScheme::DefectCorrection,
        ),
        (
            "LATSOL_MIXED_DEFECT_CORRECTION_CORRECTED",
            LATSOL_MIXED_DEFECT_CORRECTION_CORRECTED,
            MixedScheme::DefectCorrectionCorrected,
        ),
    ],
};

pub(crate) static OPERATOR: CEnum<OperatorKind> = CEnum {
    type_name: "latsol_operator",
    variants: &[
        ("LATSOL_OP_M", LATSOL_OP_M, OperatorKind::M),
        ("LATSOL_OP_MDAG", LATSOL_OP_MDAG, OperatorKind::MDag),
        ("LATSOL_OP_MDAG_M", LATSOL_OP_MDAG_M, OperatorKind::MDagM),
        ("LATSOL_OP_DSLASH", LATSOL_OP_DSLASH, OperatorKind::Dslash),
        ("LATSOL_OP_MPC", LATSOL_OP_MPC, OperatorKind::MPc),
        ("LATSOL_OP_MPC_DAG", LATSOL_OP_MPC_DAG, OperatorKind::MPcDag),
        ("LATSOL_OP_CLOVER", LATSOL_OP_CLOVER, OperatorKind::Clover),
        (
            "LATSOL_OP_CLOVER_INV",
            LATSOL_OP_CLOVER_INV,
            OperatorKind::CloverInverse,
        ),
    ],
};

/// A host precision: only double and single arrays exist on the host.
pub(crate) fn host_precision(
    code: latsol_precision,
    field: &str,
) -> Result<super::boundary::HostPrecision> {
    use super::boundary::HostPrecision;
    match PRECISION.decode(code, field)? {
        Precision::Double => Ok(HostPrecision::F64),
        Precision::Single => Ok(HostPrecision::F32),
        _ => Err(Error::InvalidArgument(format!(
            "{field} = {} ({code}): host arrays are LATSOL_PRECISION_DOUBLE or \
             LATSOL_PRECISION_SINGLE",
            PRECISION.name(code)
        ))),
    }
}

/// The C code of a host precision (for the defaults).
pub(crate) fn host_precision_code(p: super::boundary::HostPrecision) -> latsol_precision {
    match p {
        super::boundary::HostPrecision::F64 => LATSOL_PRECISION_DOUBLE,
        super::boundary::HostPrecision::F32 => LATSOL_PRECISION_SINGLE,
    }
}

/// A C `int32_t` flag: 0 or 1, anything else is refused (a stray value
/// more likely means an uninitialised field than "true").
pub(crate) fn flag(v: i32, field: &str) -> Result<bool> {
    match v {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(Error::InvalidArgument(format!(
            "{field} = {v}: must be 0 or 1"
        ))),
    }
}

/// A non-negative C `int32_t` count as `usize`.
pub(crate) fn count(v: i32, field: &str) -> Result<usize> {
    usize::try_from(v)
        .map_err(|_| Error::InvalidArgument(format!("{field} = {v}: must not be negative")))
}

/// A C count from a `usize`, saturating (results).
pub(crate) fn to_c_count(v: usize) -> i32 {
    i32::try_from(v).unwrap_or(i32::MAX)
}

pub(crate) static MULTIMASS_POLICY: CEnum<MultiMassPolicy> = CEnum {
    type_name: "latsol_multimass_policy",
    variants: &[
        (
            "LATSOL_MULTIMASS_AUTO",
            LATSOL_MULTIMASS_AUTO,
            MultiMassPolicy::Auto,
        ),
        (
            "LATSOL_MULTIMASS_BICGSTAB_M",
            LATSOL_MULTIMASS_BICGSTAB_M,
            MultiMassPolicy::BiCgStabM,
        ),
        (
            "LATSOL_MULTIMASS_SEQUENCE",
            LATSOL_MULTIMASS_SEQUENCE,
            MultiMassPolicy::Sequence(SequenceGuess::Polynomial),
        ),
        (
            "LATSOL_MULTIMASS_SEQUENCE_MINRES",
            LATSOL_MULTIMASS_SEQUENCE_MINRES,
            MultiMassPolicy::Sequence(SequenceGuess::SolutionSpace),
        ),
        (
            "LATSOL_MULTIMASS_SEQUENCE_ZERO_GUESS",
            LATSOL_MULTIMASS_SEQUENCE_ZERO_GUESS,
            MultiMassPolicy::Sequence(SequenceGuess::Zero),
        ),
    ],
};
