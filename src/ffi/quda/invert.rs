//! `invertQuda`, `invertMultiShiftQuda`, `MatQuda`, `MatDagMatQuda`,
//! `dslashQuda` for the Wilson and Wilson-clover operators.
//!
//! QUDA's semantics (lib/interface_quda.cpp, lib/solve.cpp, lib/dirac_*.cpp;
//! docs/quda-compat.md): `solution_type` says which system the caller's
//! vectors belong to (MAT and MATDAG_MAT full, MATPC and MATPCDAG_MATPC the
//! `matpc_type` parity), `mass_normalization` rescales the source by a
//! factor that depends on it, and the answer solves the caller's system.
//! latsol solves in κ normalization: the source (and the shifts) are
//! scaled by that factor. MAT and MATPC go to `Context::invert_form` with
//! the caller's arrays as they are (the factor, γ5 for DAG_YES and the
//! parity applied on the backend, `SystemForm`; a MATPC solution is the
//! even-odd operator's own system on the `matpc_type` parity); the
//! normal-equation systems are single-shift multi-shift solves.

use std::os::raw::{c_int, c_void};
use std::time::Instant;

use super::abi::*;
use super::convert;
use super::errors::quda_call;
use super::fields::no_gauge;
use super::host::{host_reals, host_reals_mut, not_null};
use super::state;
use crate::api::{
    DslashType, InvertParams, MassNormalization, MatPc, MixedScheme, OperatorKind, SolveType,
    SystemForm,
};
use crate::error::{Error, Result};
use crate::layout::DiracOrder;

/// What the caller's vectors are.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Solution {
    Mat,
    MatDagMat,
    MatPc,
    MatPcDagMatPc,
}

impl Solution {
    fn of(v: QudaSolutionType) -> Result<Solution> {
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
    fn one_parity(self) -> bool {
        matches!(self, Solution::MatPc | Solution::MatPcDagMatPc)
    }
    /// QUDA's source rescaling for `mass_normalization` (its `massRescale`):
    /// the caller's operator is QUDA's κ-normalized one divided by this.
    fn factor(self, n: MassNormalization, kappa: f64) -> f64 {
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
fn invert_params(p: &QudaInvertParam, solve: bool) -> Result<(InvertParams, bool)> {
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
        progress_every: 0,
        ..Default::default()
    };
    if solve {
        ip.solver = convert::solver(p.inv_type)?;
        ip.solve_type = convert::solve_type(p.solve_type)?;
        ip.tol = p.tol;
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

/// Whether two host vectors of `n` reals (f64 or f32) share memory.
fn share_memory(a: *mut c_void, b: *mut c_void, n: usize, double: bool) -> bool {
    let bytes = n * if double { 8 } else { 4 };
    let (a, b) = (a as usize, b as usize);
    a < b + bytes && b < a + bytes
}

/// The `SystemForm` of a MAT or MATPC solution (a MATPC solution needs a
/// preconditioned solve).
fn system_form(
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
fn operator_fields<'s>(
    s: &'s state::State,
    dslash: DslashType,
    what: &str,
) -> Result<crate::api::OperatorFields<'s>> {
    let gauge = &s.gauge.as_ref().ok_or_else(|| no_gauge(what))?.gauge;
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
fn dagger_of(p: &QudaInvertParam, ip: &InvertParams, solution: Solution) -> Result<bool> {
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

/// The parity of the caller's single-parity vectors.
fn matpc_parity(m: MatPc) -> crate::lattice::Parity {
    match m {
        MatPc::EvenEven | MatPc::EvenEvenAsymmetric => crate::lattice::Parity::Even,
        _ => crate::lattice::Parity::Odd,
    }
}

/// Where parity `p`'s block starts in a full host spinor (reals): even
/// sites first, but odd first in CPS order.
fn block_start(order: DiracOrder, p: crate::lattice::Parity, half: usize) -> usize {
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
fn gamma5_host(v: &mut [f64], order: DiracOrder, basis: crate::layout::GammaBasis) {
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
fn read_scaled(h: crate::layout::HostReals, scale: f64) -> Vec<f64> {
    match h {
        crate::layout::HostReals::F64(v) => v.iter().map(|x| x * scale).collect(),
        crate::layout::HostReals::F32(v) => v.iter().map(|&x| x as f64 * scale).collect(),
    }
}

/// Writes `v` (times `scale`) into the caller's array.
fn write_scaled(out: crate::layout::HostRealsMut, v: &[f64], scale: f64) {
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

/// `invertQuda(h_x, h_b, param)`: solves the caller's system for one
/// source. Not converging is a warning, as in QUDA; `iter`, `secs`,
/// `gflops` (a count, as QUDA's), `true_res[0]` are written back.
///
/// # Safety
/// `param` points to a `QudaInvertParam`; `h_b` and `h_x` to host spinors
/// of the system's size (V or V/2 sites of 24 reals, `cpu_prec`).
#[no_mangle]
pub unsafe extern "C" fn invertQuda(
    h_x: *mut c_void,
    h_b: *mut c_void,
    param: *mut QudaInvertParam,
) {
    // SAFETY: forwarded from the caller.
    quda_call("invertQuda", || unsafe { invert(h_x, h_b, param) })
}

/// The body of `invertQuda`, for the MILC interface too.
///
/// # Safety
/// As `invertQuda`.
pub(crate) unsafe fn invert(
    h_x: *mut c_void,
    h_b: *mut c_void,
    param: *mut QudaInvertParam,
) -> Result<()> {
    not_null(param, "param")?;
    not_null(h_x, "h_x")?;
    not_null(h_b, "h_b")?;
    let start = Instant::now();
    // SAFETY: checked non-null; the caller passes a QudaInvertParam.
    let p = unsafe { &mut *param };
    if super::staggered::is_staggered(p) {
        // SAFETY: forwarded.
        return unsafe { super::staggered::invert(&[h_x], h_b, p, false) };
    }
    let (mut ip, double) = invert_params(p, true)?;
    let solution = Solution::of(p.solution_type)?;
    let f = solution.factor(convert::mass_normalization(p.mass_normalization)?, p.kappa);
    state::with(|s| {
        let fields = operator_fields(s, ip.dslash, "invertQuda")?;
        let full = fields.gauge.lattice().volume() * 24;
        let n = if solution.one_parity() {
            full / 2
        } else {
            full
        };
        // DAG_YES: M† = γ5 M γ5 (also M̂† and the normal operators), so
        // the dagger system's answer is γ5 times that of M for γ5 b.
        let dagger = dagger_of(p, &ip, solution)?;
        let (iterations, true_res, gflop) = match solution {
            // The caller's arrays straight to the backend: the scale, γ5
            // and the parity are applied there (`SystemForm`).
            Solution::Mat | Solution::MatPc => {
                let form = system_form(p, &ip, solution, f, dagger)?;
                let overlap = share_memory(h_b, h_x, n, double);
                // SAFETY: the caller's vectors of the system's size; a
                // source that shares memory with the solution is copied
                // first (QUDA reads it before writing the solution).
                let copy;
                let b = if overlap {
                    copy = read_scaled(unsafe { host_reals(h_b, n, double) }, 1.0);
                    crate::layout::HostReals::F64(&copy)
                } else {
                    unsafe { host_reals(h_b, n, double) }
                };
                let x = unsafe { host_reals_mut(h_x, n, double) };
                let r = s.context.invert_form(fields, &ip, b, x, &form)?;
                (r.iterations, r.true_residual, r.gflops * r.seconds)
            }
            Solution::MatDagMat | Solution::MatPcDagMatPc => {
                if ip.use_initial_guess {
                    return Err(Error::InvalidArgument("param->use_init_guess = YES: not with the MATDAG_MAT and MATPCDAG_MATPC solutions (as in QUDA)".into()));
                }
                ip.solve_type = if solution == Solution::MatDagMat {
                    SolveType::NormOp
                } else {
                    SolveType::NormOpPc
                };
                ip.solver = crate::api::SolverType::Cg;
                let overlap = share_memory(h_b, h_x, n, double);
                if f == 1.0 && !dagger && !overlap {
                    // Nothing to do to the vectors on the host: the
                    // caller's arrays go to the backend as they are.
                    // SAFETY: the caller's vectors of the system's size,
                    // not sharing memory (checked above).
                    let (b, x) =
                        unsafe { (host_reals(h_b, n, double), host_reals_mut(h_x, n, double)) };
                    let r = s.context.invert_multishift(
                        fields,
                        &ip,
                        &[0.0],
                        None,
                        b,
                        vec![x],
                        false,
                    )?;
                    let t = r.shifts.first().map_or(f64::NAN, |s| s.true_residual);
                    (r.iterations, t, r.gflops * r.seconds)
                } else {
                    // SAFETY: the caller's source of the system's size.
                    let mut b = read_scaled(unsafe { host_reals(h_b, n, double) }, f);
                    if dagger {
                        gamma5_host(&mut b, ip.dirac_order, ip.gamma_basis);
                    }
                    let mut x = vec![0.0; n];
                    let r = s.context.invert_multishift(
                        fields,
                        &ip,
                        &[0.0],
                        None,
                        crate::layout::HostReals::F64(&b),
                        vec![crate::layout::HostRealsMut::F64(&mut x)],
                        false,
                    )?;
                    if dagger {
                        gamma5_host(&mut x, ip.dirac_order, ip.gamma_basis);
                    }
                    // SAFETY: the caller's solution array of the system's size.
                    write_scaled(unsafe { host_reals_mut(h_x, n, double) }, &x, 1.0);
                    let t = r.shifts.first().map_or(f64::NAN, |s| s.true_residual);
                    (r.iterations, t, r.gflops * r.seconds)
                }
            }
        };
        p.iter = iterations as c_int;
        p.true_res[0] = true_res;
        p.true_res_hq[0] = 0.0;
        p.gflops = gflop;
        p.secs = start.elapsed().as_secs_f64();
        if iterations >= ip.maxiter && true_res > ip.tol {
            eprintln!("latsol (QUDA interface) WARNING: invertQuda: exceeded maxiter = {} (true residual {true_res:.3e})", ip.maxiter);
        }
        Ok(())
    })
}

/// `invertMultiShiftQuda(_hp_x, _hp_b, param)`: `(A + offset[i]) x_i = b`
/// for `num_offset` offsets, A = M̂†M̂ (MATPCDAG_MATPC) or M†M (MATDAG_MAT)
/// in the caller's normalization; per-shift tolerances `tol_offset`
/// (0: `tol`); `true_res_offset`, `iter_res_offset` (latsol's recomputed
/// residual: the iterated one is not kept), `iter`, `secs`, `gflops`.
///
/// # Safety
/// `param` points to a `QudaInvertParam`; `_hp_x` to `num_offset` pointers
/// to solution arrays, `_hp_b` to the source, each of the system's size.
#[no_mangle]
pub unsafe extern "C" fn invertMultiShiftQuda(
    hp_x: *mut *mut c_void,
    hp_b: *mut c_void,
    param: *mut QudaInvertParam,
) {
    quda_call("invertMultiShiftQuda", || {
        not_null(param, "param")?;
        not_null(hp_x, "_hp_x")?;
        not_null(hp_b, "_hp_b")?;
        let start = Instant::now();
        // SAFETY: checked non-null.
        let p = unsafe { &mut *param };
        if super::staggered::is_staggered(p) {
            let count = p.num_offset;
            if !(1..=QUDA_MAX_MULTI_SHIFT).contains(&count) {
                return Err(Error::InvalidArgument(format!(
                    "param->num_offset = {count}: 1 to {QUDA_MAX_MULTI_SHIFT}"
                )));
            }
            // SAFETY: the caller passes num_offset pointers.
            let xs = unsafe { std::slice::from_raw_parts(hp_x, count as usize) };
            super::staggered::check_solutions(xs)?;
            // SAFETY: forwarded.
            return unsafe { super::staggered::invert(xs, hp_b, p, true) };
        }
        let (mut ip, double) = invert_params(p, true)?;
        let solution = Solution::of(p.solution_type)?;
        if !matches!(solution, Solution::MatDagMat | Solution::MatPcDagMatPc) {
            return Err(convert::refuse(
                "param->solution_type",
                p.solution_type as i64,
                "multi-shift solves MATPCDAG_MATPC or MATDAG_MAT systems",
            ));
        }
        let count = p.num_offset;
        if !(1..=QUDA_MAX_MULTI_SHIFT).contains(&count) {
            return Err(Error::InvalidArgument(format!(
                "param->num_offset = {count}: 1 to {QUDA_MAX_MULTI_SHIFT}"
            )));
        }
        let count = count as usize;
        let f = solution.factor(convert::mass_normalization(p.mass_normalization)?, p.kappa);
        ip.solve_type = if solution == Solution::MatDagMat {
            SolveType::NormOp
        } else {
            SolveType::NormOpPc
        };
        ip.solver = crate::api::SolverType::Cg;
        ip.use_initial_guess = false;
        let shifts: Vec<f64> = p.offset[..count].iter().map(|o| o * f).collect();
        let tols: Vec<f64> = p.tol_offset[..count]
            .iter()
            .map(|&t| {
                if t > 0.0 && t != convert::INVALID_DOUBLE {
                    t
                } else {
                    p.tol
                }
            })
            .collect();
        // SAFETY: the caller passes num_offset pointers.
        let xs_ptr = unsafe { std::slice::from_raw_parts(hp_x, count) };
        for (i, x) in xs_ptr.iter().enumerate() {
            not_null(*x, &format!("_hp_x[{i}]"))?;
        }
        state::with(|s| {
            let fields = operator_fields(s, ip.dslash, "invertMultiShiftQuda")?;
            let full = fields.gauge.lattice().volume() * 24;
            let n = if solution.one_parity() {
                full / 2
            } else {
                full
            };
            // SAFETY: the caller's source of the system's size.
            let mut b = read_scaled(unsafe { host_reals(hp_b, n, double) }, f);
            // DAG_YES: (M̂ M̂† + σ)⁻¹ = γ5 (M̂† M̂ + σ)⁻¹ γ5.
            let dagger = dagger_of(p, &ip, solution)?;
            if dagger {
                gamma5_host(&mut b, ip.dirac_order, ip.gamma_basis);
            }
            let mut xs = vec![vec![0.0; n]; count];
            let r = s.context.invert_multishift(
                fields,
                &ip,
                &shifts,
                Some(&tols),
                crate::layout::HostReals::F64(&b),
                xs.iter_mut()
                    .map(|x| crate::layout::HostRealsMut::F64(x))
                    .collect(),
                false,
            )?;
            for (i, x) in xs.iter_mut().enumerate() {
                if dagger {
                    gamma5_host(x, ip.dirac_order, ip.gamma_basis);
                }
                // SAFETY: the caller's solution arrays, checked non-null.
                write_scaled(unsafe { host_reals_mut(xs_ptr[i], n, double) }, x, 1.0);
                let t = r.shifts[i].true_residual;
                p.true_res_offset[i] = t;
                p.iter_res_offset[i] = t;
                p.true_res_hq_offset[i] = 0.0;
            }
            p.iter = r.iterations as c_int;
            p.gflops = r.gflops * r.seconds;
            p.secs = start.elapsed().as_secs_f64();
            Ok(())
        })
    })
}

/// Applies `ops` in turn to the caller's vector (on a full field; a
/// single-parity vector is placed in its parity's block) and writes the
/// result times `scale` (the inverse of the mass-normalization factor).
/// `p` is the caller's parameter struct, copied.
///
/// # Safety
/// `h_in` and `h_out` hold vectors of the system's size in `p.cpu_prec`.
unsafe fn apply_ops(
    what: &str,
    h_out: *mut c_void,
    h_in: *mut c_void,
    p: &QudaInvertParam,
    ops: &[OperatorKind],
    parity_in_out: Option<(crate::lattice::Parity, crate::lattice::Parity)>,
    normalized: bool,
) -> Result<()> {
    not_null(h_out, "h_out")?;
    not_null(h_in, "h_in")?;
    let (ip, double) = invert_params(p, false)?;
    let pc = parity_in_out.is_some() || Solution::of(p.solution_type)?.one_parity();
    let scale = if normalized {
        let solution = Solution::of(p.solution_type)?;
        1.0 / solution.factor(convert::mass_normalization(p.mass_normalization)?, p.kappa)
    } else {
        1.0
    };
    state::with(|s| {
        let fields = operator_fields(s, ip.dslash, what)?;
        let full = fields.gauge.lattice().volume() * 24;
        let half = full / 2;
        let (p_in, p_out) = parity_in_out.unwrap_or_else(|| {
            let q = matpc_parity(ip.matpc);
            (q, q)
        });
        let n = if pc { half } else { full };
        // SAFETY: the caller's input vector.
        let inp = read_scaled(unsafe { host_reals(h_in, n, double) }, 1.0);
        // The even-odd operators take single-parity vectors; the others
        // full ones.
        let single = ops
            .iter()
            .all(|o| matches!(o, OperatorKind::MPc | OperatorKind::MPcDag));
        let mut v = if pc && !single {
            let mut f = vec![0.0; full];
            let at = block_start(ip.dirac_order, p_in, half);
            f[at..at + half].copy_from_slice(&inp);
            f
        } else {
            inp
        };
        for &op in ops {
            let mut out = vec![0.0; v.len()];
            s.context.apply(
                fields,
                &ip,
                op,
                crate::layout::HostReals::F64(&v),
                crate::layout::HostRealsMut::F64(&mut out),
            )?;
            v = out;
        }
        let result = if pc && !single {
            let at = block_start(ip.dirac_order, p_out, half);
            v[at..at + half].to_vec()
        } else {
            v
        };
        // SAFETY: the caller's output vector.
        write_scaled(unsafe { host_reals_mut(h_out, n, double) }, &result, scale);
        Ok(())
    })
}

/// The caller's parameter struct, copied.
///
/// # Safety
/// `param` is null or points to a `QudaInvertParam`.
unsafe fn copy_param(param: *const QudaInvertParam) -> Result<QudaInvertParam> {
    not_null(param, "param")?;
    // SAFETY: checked non-null.
    Ok(unsafe { *param })
}

/// `MatQuda(h_out, h_in, param)`: `M` (MAT) or `M̂` (MATPC, on the
/// `matpc_type` parity) in the caller's normalization, `M†` with DAG_YES.
///
/// # Safety
/// `param` points to a `QudaInvertParam`; the vectors hold the system's size.
#[no_mangle]
pub unsafe extern "C" fn MatQuda(
    h_out: *mut c_void,
    h_in: *mut c_void,
    param: *mut QudaInvertParam,
) {
    quda_call("MatQuda", || {
        // SAFETY: as the caller promises.
        let mut p = unsafe { copy_param(param)? };
        let dagger = p.dagger == QUDA_DAG_YES;
        p.dagger = QUDA_DAG_NO;
        let op = match (Solution::of(p.solution_type)?, dagger) {
            (Solution::Mat, false) => OperatorKind::M,
            (Solution::Mat, true) => OperatorKind::MDag,
            (Solution::MatPc, false) => OperatorKind::MPc,
            (Solution::MatPc, true) => OperatorKind::MPcDag,
            _ => {
                return Err(convert::refuse(
                    "param->solution_type",
                    p.solution_type as i64,
                    "MatQuda applies MAT or MATPC",
                ))
            }
        };
        // SAFETY: the caller's vectors.
        unsafe { apply_ops("MatQuda", h_out, h_in, &p, &[op], None, true) }
    })
}

/// `MatDagMatQuda(h_out, h_in, param)`: `M†M` (MATDAG_MAT) or `M̂†M̂`
/// (MATPCDAG_MATPC) in the caller's normalization.
///
/// # Safety
/// As for `MatQuda`.
#[no_mangle]
pub unsafe extern "C" fn MatDagMatQuda(
    h_out: *mut c_void,
    h_in: *mut c_void,
    param: *mut QudaInvertParam,
) {
    quda_call("MatDagMatQuda", || {
        // SAFETY: as the caller promises.
        let mut p = unsafe { copy_param(param)? };
        p.dagger = QUDA_DAG_NO;
        let ops: &[OperatorKind] = match Solution::of(p.solution_type)? {
            Solution::MatDagMat | Solution::Mat => {
                p.solution_type = QUDA_MATDAG_MAT_SOLUTION;
                &[OperatorKind::MDagM]
            }
            Solution::MatPcDagMatPc | Solution::MatPc => {
                // The squared normalization, as QUDA applies it.
                p.solution_type = QUDA_MATPCDAG_MATPC_SOLUTION;
                &[OperatorKind::MPc, OperatorKind::MPcDag]
            }
        };
        // SAFETY: the caller's vectors.
        unsafe { apply_ops("MatDagMatQuda", h_out, h_in, &p, ops, None, true) }
    })
}

/// `dslashQuda(h_out, h_in, param, parity)`: the bare hopping term from
/// the other parity into `parity`, `D_pq in` (no −κ, no normalization),
/// times `A_pp⁻¹` for Wilson-clover, on single-parity vectors.
///
/// # Safety
/// As for `MatQuda`, with V/2-site vectors.
#[no_mangle]
pub unsafe extern "C" fn dslashQuda(
    h_out: *mut c_void,
    h_in: *mut c_void,
    param: *mut QudaInvertParam,
    parity: QudaParity,
) {
    quda_call("dslashQuda", || {
        let out_parity = match parity {
            QUDA_EVEN_PARITY => crate::lattice::Parity::Even,
            QUDA_ODD_PARITY => crate::lattice::Parity::Odd,
            _ => return Err(convert::refuse("parity", parity as i64, "EVEN or ODD")),
        };
        // SAFETY: as the caller promises.
        let mut p = unsafe { copy_param(param)? };
        if p.dagger == QUDA_DAG_YES {
            return Err(convert::refuse(
                "param->dagger",
                p.dagger as i64,
                "dslashQuda applies D (DAG_NO)",
            ));
        }
        p.solution_type = QUDA_MATPC_SOLUTION;
        // dslashQuda does not read matpc_type.
        p.matpc_type = QUDA_MATPC_EVEN_EVEN;
        let ops: &[OperatorKind] = if p.dslash_type == QUDA_CLOVER_WILSON_DSLASH {
            &[OperatorKind::Dslash, OperatorKind::CloverInverse]
        } else {
            &[OperatorKind::Dslash]
        };
        let parities = Some((out_parity.other(), out_parity));
        // SAFETY: the caller's vectors.
        unsafe { apply_ops("dslashQuda", h_out, h_in, &p, ops, parities, false) }
    })
}

/// `invertMultiSrcQuda(_hp_x, _hp_b, param)`: `invertQuda` for each of the
/// `num_src` sources in turn (one process: no split grid);
/// `true_res[i]`, `true_res_hq[i]` per source, `iter` and `secs` of all.
///
/// # Safety
/// `param` points to a `QudaInvertParam`; `_hp_x` and `_hp_b` to `num_src`
/// pointers to vectors of the system's size.
#[no_mangle]
pub unsafe extern "C" fn invertMultiSrcQuda(
    hp_x: *mut *mut c_void,
    hp_b: *mut *mut c_void,
    param: *mut QudaInvertParam,
) {
    quda_call("invertMultiSrcQuda", || {
        not_null(param, "param")?;
        not_null(hp_x, "_hp_x")?;
        not_null(hp_b, "_hp_b")?;
        let start = Instant::now();
        // SAFETY: checked non-null.
        let p = unsafe { &mut *param };
        let n = p.num_src;
        if !(1..=QUDA_MAX_MULTI_SRC).contains(&n) {
            return Err(Error::InvalidArgument(format!(
                "param->num_src = {n}: 1 to {QUDA_MAX_MULTI_SRC}"
            )));
        }
        if p.split_grid.iter().any(|&g| g > 1) {
            return Err(Error::Unsupported(format!(
                "param->split_grid = {:?}: latsol's QUDA interface runs on one process",
                p.split_grid
            )));
        }
        // SAFETY: num_src pointers each.
        let (xs, bs) = unsafe {
            (
                std::slice::from_raw_parts(hp_x, n as usize),
                std::slice::from_raw_parts(hp_b, n as usize),
            )
        };
        for (i, (&x, &b)) in xs.iter().zip(bs).enumerate() {
            not_null(x, &format!("_hp_x[{i}]"))?;
            not_null(b, &format!("_hp_b[{i}]"))?;
        }
        // SAFETY: the caller's vectors; p is the caller's struct.
        if unsafe { invert_sources(xs, bs, p)? } {
            p.secs = start.elapsed().as_secs_f64();
            return Ok(());
        }
        let (mut iters, mut gflop) = (0, 0.0);
        let mut res = Vec::with_capacity(xs.len());
        for (&x, &b) in xs.iter().zip(bs) {
            // SAFETY: the caller's vectors; p is the caller's struct.
            unsafe { invert(x, b, p)? };
            iters += p.iter;
            gflop += p.gflops;
            res.push((p.true_res[0], p.true_res_hq[0]));
        }
        for (i, (r, hq)) in res.into_iter().enumerate() {
            p.true_res[i] = r;
            p.true_res_hq[i] = hq;
        }
        p.iter = iters;
        p.gflops = gflop;
        p.secs = start.elapsed().as_secs_f64();
        Ok(())
    })
}

/// `invertMultiSrcQuda`'s Wilson and clover MAT and MATPC solutions in one
/// call of `Context::invert_sources` (the next source's upload behind the
/// current solve; every solution written at the end), or of
/// `Context::invert_each` where the solutions would not all fit on the
/// device (one at a time, written at the end too). `Ok(false)` where that
/// does not apply (staggered, the normal-equation solutions, vectors that
/// share memory): the caller then solves the sources in turn.
///
/// # Safety
/// As `invertMultiSrcQuda`.
unsafe fn invert_sources(
    xs: &[*mut c_void],
    bs: &[*mut c_void],
    p: &mut QudaInvertParam,
) -> Result<bool> {
    if super::staggered::is_staggered(p) {
        return Ok(false);
    }
    let (ip, double) = invert_params(p, true)?;
    let solution = Solution::of(p.solution_type)?;
    if !matches!(solution, Solution::Mat | Solution::MatPc) {
        return Ok(false);
    }
    let f = solution.factor(convert::mass_normalization(p.mass_normalization)?, p.kappa);
    state::with(|s| {
        let fields = operator_fields(s, ip.dslash, "invertMultiSrcQuda")?;
        let full = fields.gauge.lattice().volume() * 24;
        let n = if solution.one_parity() {
            full / 2
        } else {
            full
        };
        let all: Vec<*mut c_void> = xs.iter().chain(bs).copied().collect();
        for (i, &a) in all.iter().enumerate() {
            if all[i + 1..].iter().any(|&b| share_memory(a, b, n, double)) {
                return Ok(false);
            }
        }
        let dagger = dagger_of(p, &ip, solution)?;
        let form = system_form(p, &ip, solution, f, dagger)?;
        // SAFETY: the caller's vectors of the system's size, none sharing
        // memory with another (checked above).
        let sources: Vec<_> = bs
            .iter()
            .map(|&b| unsafe { host_reals(b, n, double) })
            .collect();
        let solutions: Vec<_> = xs
            .iter()
            .map(|&x| unsafe { host_reals_mut(x, n, double) })
            .collect();
        // Too many sources to keep every solution on the device: one at a
        // time, the solutions written when every solve has returned (as
        // `invert_sources` writes them).
        let results = if s
            .context
            .room_for_sources(fields, &ip, &form, sources.len())?
        {
            s.context
                .invert_sources(fields, &ip, &sources, solutions, &form)?
        } else {
            s.context
                .invert_each(fields, &ip, &sources, solutions, &form)?
        };
        for (i, r) in results.iter().enumerate() {
            p.true_res[i] = r.true_residual;
            p.true_res_hq[i] = 0.0;
            if r.iterations >= ip.maxiter && r.true_residual > ip.tol {
                eprintln!("latsol (QUDA interface) WARNING: invertMultiSrcQuda: source {i} exceeded maxiter = {} (true residual {:.3e})", ip.maxiter, r.true_residual);
            }
        }
        p.iter = results.iter().map(|r| r.iterations as c_int).sum();
        p.gflops = results.iter().map(|r| r.gflops * r.seconds).sum();
        Ok(true)
    })
}
