//! What the Wilson and Wilson-clover entry points (`invert`, `apply`)
//! share: the caller's system and the solve's parameters from
//! `QudaInvertParam`, the loaded fields of the operator, γ5 and rescaling
//! on host vectors.
//!
//! QUDA's semantics (lib/interface_quda.cpp, lib/solve.cpp, lib/dirac_*.cpp;
//! docs/quda-compat.md): `solution_type` says which system the caller's
//! vectors belong to (MAT and MATDAG_MAT full, MATPC and MATPCDAG_MATPC the
//! `matpc_type` parity), `mass_normalization` rescales the source by a
//! factor that depends on it, and the answer solves the caller's system.
//! latsol solves in κ normalization: the source (and the shifts) are
//! scaled by that factor.

use std::os::raw::c_void;

use super::abi::*;
use super::convert;
use super::state;
use crate::api::{
    DslashType, InvertParams, MassNormalization, MatPc, MixedScheme, SolveType, SystemForm,
};
use crate::error::{Error, Result};
use crate::layout::DiracOrder;

/// What the caller's vectors are.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Solution {
    Mat,
    MatDagMat,
    MatPc,
    MatPcDagMatPc,
}

impl Solution {
    pub(crate) fn of(v: QudaSolutionType) -> Result<Solution> {
        Ok(match v {
            QUDA_MAT_SOLUTION => Solution::Mat,
            QUDA_MATDAG_MAT_SOLUTION => Solution::MatDagMat,
            QUDA_MATPC_SOLUTION => Solution::MatPc,
            QUDA_MATPCDAG_MATPC_SOLUTION => Solution::MatPcDagMatPc,
            _ => {
                return Err(convert::refuse(
                    "param->solution_type",
                    v as i64,
                    "MAT, MATDAG_MAT, MATPC or MATPCDAG_MATPC",
                ))
            }
        })
    }
    pub(crate) fn one_parity(self) -> bool {
        matches!(self, Solution::MatPc | Solution::MatPcDagMatPc)
    }
    /// QUDA's source rescaling for `mass_normalization` (its `massRescale`):
    /// the caller's operator is QUDA's κ-normalized one divided by this.
    pub(crate) fn factor(self, n: MassNormalization, kappa: f64) -> f64 {
        let k2 = 2.0 * kappa;
        match (self, n) {
            (_, MassNormalization::Kappa) => 1.0,
            (Solution::Mat, _) => k2,
            (Solution::MatDagMat, _) => k2 * k2,
            (Solution::MatPc, MassNormalization::Mass) => k2 * k2,
            (Solution::MatPc, _) => k2,
            (Solution::MatPcDagMatPc, MassNormalization::Mass) => k2.powi(4),
            (Solution::MatPcDagMatPc, _) => k2 * k2,
        }
    }
}

/// The solve's latsol parameters (κ normalization) and the host precision.
pub(crate) fn invert_params(p: &QudaInvertParam, solve: bool) -> Result<(InvertParams, bool)> {
    convert::check_struct_size(
        "param",
        p.struct_size,
        std::mem::size_of::<QudaInvertParam>(),
    )?;
    let dslash = convert::dslash_type(p.dslash_type)?;
    let precision = convert::precision(p.cuda_prec, "param->cuda_prec")?;
    let matpc = convert::matpc(p.matpc_type)?;
    if dslash == DslashType::Wilson
        && matches!(matpc, MatPc::EvenEvenAsymmetric | MatPc::OddOddAsymmetric)
    {
        return Err(convert::refuse(
            "param->matpc_type",
            p.matpc_type as i64,
            "the Wilson operator's MatPC types are EVEN_EVEN and ODD_ODD (as in QUDA)",
        ));
    }
    if !matches!(p.dagger, QUDA_DAG_NO | QUDA_DAG_YES) {
        return Err(convert::refuse(
            "param->dagger",
            p.dagger as i64,
            "DAG_NO or DAG_YES",
        ));
    }
    let mut ip = InvertParams {
        dslash,
        kappa: p.kappa,
        mass_normalization: MassNormalization::Kappa,
        matpc,
        precision,
        precision_sloppy: convert::precision_or(
            p.cuda_prec_sloppy,
            "param->cuda_prec_sloppy",
            precision,
        )?,
        mixed: MixedScheme::ReliableUpdates,
        dirac_order: convert::dirac_order(p.dirac_order)?,
        gamma_basis: convert::gamma_basis(p.gamma_basis)?,
        use_initial_guess: p.use_init_guess == QUDA_USE_INIT_GUESS_YES,
        progress_every: super::state::progress_every(),
        ..Default::default()
    };
    if solve {
        ip.solver = convert::solver(p.inv_type)?;
        if p.inv_type == QUDA_PCG_INVERTER && p.inv_type_precondition != QUDA_INVALID_INVERTER {
            // A preconditioned CG whose preconditioner latsol would ignore.
            return Err(convert::refuse(
                "param->inv_type_precondition",
                p.inv_type_precondition as i64,
                "QUDA_PCG_INVERTER runs without a preconditioner here (leave \
                 inv_type_precondition QUDA_INVALID_INVERTER)",
            ));
        }
        if p.inv_type == QUDA_GCR_INVERTER {
            (ip.gcr_nkrylov, ip.sap) = super::gcr::gcr_setup(p)?;
        }
        if p.inv_type == QUDA_BICGSTABL_INVERTER {
            ip.gcr_nkrylov = super::gcr::bicgstab_l(p)?;
        }
        ip.solve_type = convert::solve_type(p.solve_type)?;
        // QUDA's residual_type: the L2 target, the heavy-quark one, or both
        // (no bit: L2). The heavy-quark residual is MILC's.
        let hq = p.residual_type & QUDA_HEAVY_QUARK_RESIDUAL != 0;
        let l2 = p.residual_type & (QUDA_L2_RELATIVE_RESIDUAL | QUDA_L2_ABSOLUTE_RESIDUAL) != 0;
        ip.tol = if l2 || !hq { p.tol } else { 0.0 };
        ip.tol_hq = if hq { p.tol_hq } else { 0.0 };
        if p.maxiter <= 0 {
            return Err(Error::InvalidArgument(format!(
                "param->maxiter = {}: must be positive",
                p.maxiter
            )));
        }
        ip.maxiter = p.maxiter as usize;
        ip.reliable_delta = p.reliable_delta;
    }
    let double = convert::host_is_double(p.cpu_prec, "param->cpu_prec")?;
    Ok((ip, double))
}

/// QUDA's pairing of the solution with the solve (its `checkInvertParam`,
/// lib/check_params.h, and for multi-shift `invertMultiShiftQuda`): a
/// preconditioned solution (MATPC, MATPCDAG_MATPC) needs a preconditioned
/// solve, MATDAG_MAT an unpreconditioned one, a normal-error solve the MAT
/// solution; a multi-shift solve is of the normal equations (NORMOP with
/// MATDAG_MAT, NORMOP_PC with MATPCDAG_MATPC).
pub(crate) fn check_solve(p: &QudaInvertParam, solution: Solution, multishift: bool) -> Result<()> {
    let v = p.solve_type;
    let pc_solve = matches!(
        v,
        QUDA_DIRECT_PC_SOLVE | QUDA_NORMOP_PC_SOLVE | QUDA_NORMERR_PC_SOLVE
    );
    let refuse = |what: &str| Err(convert::refuse("param->solve_type", v as i64, what));
    if solution.one_parity() && !pc_solve {
        return refuse("a preconditioned (PC) solution_type requires a PC solve_type (as in QUDA)");
    }
    if solution == Solution::MatDagMat && pc_solve {
        return refuse(
            "the unpreconditioned MATDAG_MAT solution_type requires an unpreconditioned \
             solve_type (as in QUDA)",
        );
    }
    if matches!(v, QUDA_NORMERR_SOLVE | QUDA_NORMERR_PC_SOLVE) && solution != Solution::Mat {
        return refuse("a normal-error solve requires the MAT solution_type (as in QUDA)");
    }
    if multishift && !matches!(v, QUDA_NORMOP_SOLVE | QUDA_NORMOP_PC_SOLVE) {
        return refuse(
            "a Wilson-type multi-shift solve is NORMOP (MATDAG_MAT) or NORMOP_PC \
             (MATPCDAG_MATPC), as in QUDA",
        );
    }
    Ok(())
}

/// Whether two host vectors of `n` reals (f64 or f32) share memory.
pub(crate) fn share_memory(a: *mut c_void, b: *mut c_void, n: usize, double: bool) -> bool {
    let bytes = n * if double { 8 } else { 4 };
    let (a, b) = (a as usize, b as usize);
    a < b + bytes && b < a + bytes
}

/// The `SystemForm` of a MAT or MATPC solution (a MATPC solution needs a
/// preconditioned solve).
pub(crate) fn system_form(
    p: &QudaInvertParam,
    ip: &InvertParams,
    solution: Solution,
    source_factor: f64,
    dagger: bool,
) -> Result<SystemForm> {
    if solution == Solution::MatPc
        && !matches!(ip.solve_type, SolveType::DirectPc | SolveType::NormOpPc)
    {
        return Err(convert::refuse(
            "param->solve_type",
            p.solve_type as i64,
            "a MATPC solution needs a preconditioned solve",
        ));
    }
    Ok(SystemForm {
        source_factor,
        dagger,
        preconditioned: solution == Solution::MatPc,
    })
}

/// The loaded fields of the operator `dslash` (`what` names the call in
/// the error when one is missing).
pub(crate) fn operator_fields<'s>(
    s: &'s state::State,
    dslash: DslashType,
    what: &str,
) -> Result<crate::api::OperatorFields<'s>> {
    let gauge = &s.gauge.as_ref().ok_or_else(|| state::no_gauge(what))?.gauge;
    let clover = match dslash {
        DslashType::CloverWilson => Some(s.clover.as_ref().ok_or_else(|| {
            Error::InvalidArgument(format!(
                "{what}: CLOVER_WILSON with no clover field (call loadCloverQuda)"
            ))
        })?),
        DslashType::Wilson => None,
    };
    Ok(crate::api::OperatorFields { gauge, clover })
}

/// Whether the solve is of the adjoint system (DAG_YES), which is solved
/// through `M† = γ5 M γ5`; refused for the symmetric clover MatPC
/// operator, whose adjoint `(A⁻¹K)† = K†A⁻¹` is not `γ5 M̂ γ5`.
pub(crate) fn dagger_of(
    p: &QudaInvertParam,
    ip: &InvertParams,
    solution: Solution,
) -> Result<bool> {
    let dagger = p.dagger == QUDA_DAG_YES;
    if dagger && symmetric_clover_pc(ip, solution) {
        return Err(convert::refuse(
            "param->dagger",
            p.dagger as i64,
            "the adjoint of the symmetric clover MatPC operator (A⁻¹K)† = K†A⁻¹ is not γ5 M̂ γ5: \
             not provided; use an asymmetric MatPC type or a MAT solution",
        ));
    }
    Ok(dagger)
}

/// A negative κ as QUDA takes it: `M(−κ) = ε M(|κ|) ε` with
/// `ε = (−1)^{x+y+z+t}` (D joins the two parities; the clover term and the
/// even-odd operators, which hold κ², are unchanged), so a solve or an
/// application runs with |κ| and a full-lattice vector gets ε, its odd
/// block negated, on the way in and out.
pub(crate) fn negate_odd_block(v: &mut [f64], order: DiracOrder) {
    let half = v.len() / 2;
    let at = block_start(order, crate::lattice::Parity::Odd, half);
    v[at..at + half].iter_mut().for_each(|x| *x = -*x);
}

/// The parity of the caller's single-parity vectors.
pub(crate) fn matpc_parity(m: MatPc) -> crate::lattice::Parity {
    match m {
        MatPc::EvenEven | MatPc::EvenEvenAsymmetric => crate::lattice::Parity::Even,
        _ => crate::lattice::Parity::Odd,
    }
}

/// Where parity `p`'s block starts in a full host spinor (reals): even
/// sites first, but odd first in CPS order.
pub(crate) fn block_start(order: DiracOrder, p: crate::lattice::Parity, half: usize) -> usize {
    let odd_first = order == DiracOrder::CpsWilson;
    match (p, odd_first) {
        (crate::lattice::Parity::Even, false) | (crate::lattice::Parity::Odd, true) => 0,
        _ => half,
    }
}

/// Whether the caller's system involves the symmetric clover MatPC
/// operator `A_pp⁻¹ K`, whose adjoint `K† A_pp⁻¹` is not `γ5 M̂ γ5`.
fn symmetric_clover_pc(ip: &InvertParams, solution: Solution) -> bool {
    ip.dslash == DslashType::CloverWilson
        && solution.one_parity()
        && matches!(ip.matpc, MatPc::EvenEven | MatPc::OddOdd)
}

/// `v = γ5 v` on host spinors (24 reals a site) in `order` and `basis`:
/// DeGrand–Rossi γ5 = diag(−1, −1, 1, 1) on the spins, chiral its negative;
/// UKQCD's swaps spins
/// 0 ↔ 2 and 1 ↔ 3 (its overall sign cancels where this is used: every
/// caller applies it twice, `M† = γ5 M γ5`).
pub(crate) fn gamma5_host(v: &mut [f64], order: DiracOrder, basis: crate::layout::GammaBasis) {
    let at = |s: usize, c: usize, r: usize| match order {
        DiracOrder::Qdp => (c * 4 + s) * 2 + r,
        _ => (s * 3 + c) * 2 + r,
    };
    for site in v.chunks_mut(24) {
        for c in 0..3 {
            for r in 0..2 {
                match basis {
                    // γ5 = ±diag(−1, −1, 1, 1) in both (the sign cancels).
                    crate::layout::GammaBasis::DegrandRossi | crate::layout::GammaBasis::Chiral => {
                        site[at(0, c, r)] = -site[at(0, c, r)];
                        site[at(1, c, r)] = -site[at(1, c, r)];
                    }
                    crate::layout::GammaBasis::Ukqcd => {
                        site.swap(at(0, c, r), at(2, c, r));
                        site.swap(at(1, c, r), at(3, c, r));
                    }
                }
            }
        }
    }
}

/// Host reals of the caller's vectors as f64 (owned), times `scale`.
pub(crate) fn read_scaled(h: crate::layout::HostReals, scale: f64) -> Vec<f64> {
    match h {
        crate::layout::HostReals::F64(v) => v.iter().map(|x| x * scale).collect(),
        crate::layout::HostReals::F32(v) => v.iter().map(|&x| x as f64 * scale).collect(),
    }
}

/// Writes `v` (times `scale`) into the caller's array.
pub(crate) fn write_scaled(out: crate::layout::HostRealsMut, v: &[f64], scale: f64) {
    match out {
        crate::layout::HostRealsMut::F64(o) => {
            o.iter_mut().zip(v).for_each(|(o, x)| *o = x * scale)
        }
        crate::layout::HostRealsMut::F32(o) => o
            .iter_mut()
            .zip(v)
            .for_each(|(o, x)| *o = (x * scale) as f32),
    }
}
