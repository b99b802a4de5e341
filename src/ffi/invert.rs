//! Solves and operator applications through the C ABI:
//! `latsol_invert_param`, `latsol_invert_result`, `latsol_invert`,
//! `latsol_apply`. Spinors are full fields of V·24 reals in the caller's
//! order and basis (docs/conventions.md, "Host spinor orders").

use super::ranks::collective;
use std::ffi::c_void;
use std::mem::size_of;

use super::boundary::{self, call, guard_value, HostPrecision, Versioned};
use super::context::latsol_context;
use super::enums::{
    count, flag, host_precision, host_precision_code, latsol_box_solver, latsol_dirac_order,
    latsol_dslash, latsol_gamma_basis, latsol_mass_normalization, latsol_matpc,
    latsol_mixed_scheme, latsol_operator, latsol_precision, latsol_schwarz, latsol_solve_type,
    latsol_solver, to_c_count, BOX_SOLVER, DIRAC_ORDER, DSLASH, GAMMA_BASIS, MASS_NORMALIZATION,
    MATPC, MIXED_SCHEME, OPERATOR, PRECISION, SCHWARZ, SOLVER, SOLVE_TYPE,
};
use super::gauge::latsol_gauge;
use super::status::latsol_status;
use crate::api::params::SapParams;
use crate::api::{InvertParams, InvertResult, OperatorFields};
use crate::error::{Error, Result};

/// Reals per site of a Wilson spinor (4 spins x 3 colours, complex).
const SPINOR_REALS: usize = 24;

/// What `latsol_invert` and `latsol_apply` are asked to do. Start from
/// `latsol_invert_param_default()`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct latsol_invert_param {
    /// `sizeof(latsol_invert_param)` as the caller was compiled.
    pub struct_size: usize,
    /// `LATSOL_DSLASH_*`; default WILSON.
    pub dslash: latsol_dslash,
    /// The hopping parameter, > 0; default 0.12.
    pub kappa: f64,
    /// Bare mass; the Wilson operator is defined by `kappa`, so it is not
    /// used (must be finite); default 0.
    pub mass: f64,
    /// `LATSOL_NORMALIZATION_*`; default KAPPA.
    pub mass_normalization: latsol_mass_normalization,
    /// `LATSOL_SOLVER_*`; default BICGSTAB.
    pub solver: latsol_solver,
    /// `LATSOL_SOLVE_*`; default DIRECT_PC.
    pub solve_type: latsol_solve_type,
    /// `LATSOL_MATPC_*`; default EVEN_EVEN.
    pub matpc: latsol_matpc,
    /// Target `|b - M x| / |b|`, in (0, 1); default 1e-10.
    pub tol: f64,
    /// Iteration limit, > 0; default 10000.
    pub maxiter: i32,
    /// Reliable-update threshold of mixed-precision solves, in (0, 1];
    /// default 0.1.
    pub reliable_delta: f64,
    /// The host spinors' precision: DOUBLE (`double`, the default) or SINGLE
    /// (`float`).
    pub host_precision: latsol_precision,
    /// Precision of the solve's precise fields: DOUBLE (default) or SINGLE;
    /// must match the gauge field's `precision`.
    pub precision: latsol_precision,
    /// Precision of the Krylov iteration; coarser than `precision` makes a
    /// mixed-precision solve (the gauge field's `precision_sloppy` must
    /// match); default DOUBLE.
    pub precision_sloppy: latsol_precision,
    /// `LATSOL_DIRAC_ORDER_*`; default DIRAC.
    pub dirac_order: latsol_dirac_order,
    /// `LATSOL_GAMMA_*`; default DEGRAND_ROSSI.
    pub gamma_basis: latsol_gamma_basis,
    /// 1: `solution` holds the initial guess on entry; 0 (default): start
    /// from zero.
    pub use_initial_guess: i32,
    /// Log a progress line every this many iterations (at VERBOSE); 0:
    /// never; default 10.
    pub progress_every: i32,
    /// `LATSOL_MIXED_*`, for mixed-precision solves; default
    /// RELIABLE_UPDATES.
    pub mixed: latsol_mixed_scheme,
    /// Inner tolerance of defect correction, in (0, 1); default 0.1.
    pub tol_inner: f64,
    /// 1 (default): mixed-precision CG with the stabilisations of reliable
    /// updates; 0: plain reliable-update CG.
    pub cg_stabilised: i32,
    /// `latsol_invert_sources`: how many sources are solved together by a
    /// block solver (block BiCGstab with QR, or block CG where `solver` is
    /// CG or `solve_type` a normal one): 1 (default) one after another,
    /// L > 1 in blocks of L, 0 all in one block; >= 0. A block iterates in
    /// `precision`; `precision_sloppy` is SAP's. (Added after the first
    /// version of the struct: a caller's older, shorter struct gets the
    /// default.)
    pub sources_per_block: i64,
    /// 1: block BiCGstab's memory-saving form (one block of fields fewer,
    /// the same iterates); 0 (default).
    pub block_memory_saving: i32,
    /// SAP's SSOR relaxation omega, in (0, 2); default 1. (This and the
    /// other `sap_` fields were added after `block_memory_saving`: an older,
    /// shorter struct gets the defaults, no SAP.)
    pub sap_omega: f64,
    /// The Schwarz alternating procedure as block BiCGstab's or GCR's
    /// right preconditioner (in `precision_sloppy`, on the full system;
    /// solver BICGSTAB or GCR with a direct solve type): how many times the
    /// boxes are solved (black and white in turn where `sap_schwarz` is
    /// MULTIPLICATIVE), 1 to 1000; 0 (default): no SAP.
    pub sap_cycles: i32,
    /// SSOR steps of each box solve, 0 to 1000; default 1.
    pub sap_ssor_iterations: i32,
    /// A box's extents X, Y, Z, T: even, dividing the local lattice; all 0
    /// (default): 4 where 4 divides the local extent, else 2.
    pub sap_extent: [i32; 4],
    /// GCR's Krylov space: steps between restarts (QUDA's `gcrNkrylov`),
    /// at least 1; default 16. (This and the two fields after it were added
    /// after `sap_extent`: an older, shorter struct gets the defaults.)
    pub gcr_nkrylov: i32,
    /// `LATSOL_SCHWARZ_*`: how SAP's box solves combine; default
    /// MULTIPLICATIVE.
    pub sap_schwarz: latsol_schwarz,
    /// `LATSOL_BOX_*`: how SAP solves a box, in `sap_ssor_iterations` steps
    /// relaxed by `sap_omega`; default SSOR (MR: with LATSOL_SOLVER_GCR only).
    pub sap_box_solver: latsol_box_solver,
}

unsafe impl Versioned for latsol_invert_param {
    const NAME: &'static str = "latsol_invert_param";
    const V1_SIZE: usize = std::mem::offset_of!(latsol_invert_param, sources_per_block);
    fn defaults() -> Self {
        let d = InvertParams::default();
        latsol_invert_param {
            struct_size: size_of::<latsol_invert_param>(),
            dslash: DSLASH.encode(d.dslash),
            kappa: d.kappa,
            mass: d.mass,
            mass_normalization: MASS_NORMALIZATION.encode(d.mass_normalization),
            solver: SOLVER.encode(d.solver),
            solve_type: SOLVE_TYPE.encode(d.solve_type),
            matpc: MATPC.encode(d.matpc),
            tol: d.tol,
            maxiter: to_c_count(d.maxiter),
            reliable_delta: d.reliable_delta,
            host_precision: host_precision_code(HostPrecision::F64),
            precision: PRECISION.encode(d.precision),
            precision_sloppy: PRECISION.encode(d.precision_sloppy),
            dirac_order: DIRAC_ORDER.encode(d.dirac_order),
            gamma_basis: GAMMA_BASIS.encode(d.gamma_basis),
            use_initial_guess: i32::from(d.use_initial_guess),
            progress_every: to_c_count(d.progress_every),
            mixed: MIXED_SCHEME.encode(d.mixed),
            tol_inner: d.tol_inner,
            cg_stabilised: i32::from(d.cg_stabilised),
            sources_per_block: d.sources_per_block as i64,
            block_memory_saving: i32::from(d.block_memory_saving),
            sap_omega: SapParams::default().omega,
            sap_cycles: 0,
            sap_ssor_iterations: to_c_count(SapParams::default().ssor_iterations),
            sap_extent: [0; 4],
            gcr_nkrylov: to_c_count(d.gcr_nkrylov),
            sap_schwarz: SCHWARZ.encode(SapParams::default().schwarz),
            sap_box_solver: BOX_SOLVER.encode(SapParams::default().box_solver),
        }
    }
}

impl latsol_invert_param {
    /// The safe parameters and the host precision; the numbers' ranges are
    /// checked by the safe API (same checks, same messages for Rust
    /// callers), the C-only ones (enums, signs of counts) here.
    pub(crate) fn to_safe(self) -> Result<(InvertParams, HostPrecision)> {
        if self.maxiter <= 0 {
            return Err(Error::InvalidArgument(format!(
                "param->maxiter = {}: must be positive",
                self.maxiter
            )));
        }
        let params = InvertParams {
            dslash: DSLASH.decode(self.dslash, "param->dslash")?,
            kappa: self.kappa,
            mass: self.mass,
            mass_normalization: MASS_NORMALIZATION
                .decode(self.mass_normalization, "param->mass_normalization")?,
            solver: SOLVER.decode(self.solver, "param->solver")?,
            solve_type: SOLVE_TYPE.decode(self.solve_type, "param->solve_type")?,
            matpc: MATPC.decode(self.matpc, "param->matpc")?,
            tol: self.tol,
            // latsol.h asks for the L2 residual alone (QUDA's face sets
            // the heavy-quark target).
            tol_hq: 0.0,
            maxiter: count(self.maxiter, "param->maxiter")?,
            reliable_delta: self.reliable_delta,
            precision: PRECISION.decode(self.precision, "param->precision")?,
            precision_sloppy: PRECISION.decode(self.precision_sloppy, "param->precision_sloppy")?,
            mixed: MIXED_SCHEME.decode(self.mixed, "param->mixed")?,
            tol_inner: self.tol_inner,
            cg_stabilised: flag(self.cg_stabilised, "param->cg_stabilised")?,
            dirac_order: DIRAC_ORDER.decode(self.dirac_order, "param->dirac_order")?,
            gamma_basis: GAMMA_BASIS.decode(self.gamma_basis, "param->gamma_basis")?,
            use_initial_guess: flag(self.use_initial_guess, "param->use_initial_guess")?,
            progress_every: count(self.progress_every, "param->progress_every")?,
            sources_per_block: usize::try_from(self.sources_per_block).map_err(|_| {
                Error::InvalidArgument(format!(
                    "param->sources_per_block = {}: must be >= 0",
                    self.sources_per_block
                ))
            })?,
            block_memory_saving: flag(self.block_memory_saving, "param->block_memory_saving")?,
            sap: self.sap()?,
            gcr_nkrylov: usize::try_from(self.gcr_nkrylov).map_err(|_| {
                Error::InvalidArgument(format!(
                    "param->gcr_nkrylov = {}: must be >= 1",
                    self.gcr_nkrylov
                ))
            })?,
        };
        let host = host_precision(self.host_precision, "param->host_precision")?;
        Ok((params, host))
    }
}

impl latsol_invert_param {
    /// The SAP fields: `None` for 0 cycles; counts and extents must not be
    /// negative (the ranges are `SapParams::check`'s and the boxes').
    fn sap(&self) -> Result<Option<SapParams>> {
        if self.sap_cycles == 0 {
            return Ok(None);
        }
        let non_negative = |v: i32, name: &str| {
            usize::try_from(v)
                .map_err(|_| Error::InvalidArgument(format!("param->{name} = {v}: must be >= 0")))
        };
        let mut extent = [0; 4];
        for (e, &v) in extent.iter_mut().zip(&self.sap_extent) {
            *e = non_negative(v, "sap_extent")?;
        }
        Ok(Some(SapParams {
            extent,
            cycles: non_negative(self.sap_cycles, "sap_cycles")?,
            ssor_iterations: non_negative(self.sap_ssor_iterations, "sap_ssor_iterations")?,
            omega: self.sap_omega,
            schwarz: SCHWARZ.decode(self.sap_schwarz, "param->sap_schwarz")?,
            box_solver: BOX_SOLVER.decode(self.sap_box_solver, "param->sap_box_solver")?,
        }))
    }
}

/// What a solve did. The caller sets `struct_size` (start from
/// `latsol_invert_result_default()`); latsol writes only that many bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct latsol_invert_result {
    /// `sizeof(latsol_invert_result)` as the caller was compiled; set by
    /// the caller, never written by latsol.
    pub struct_size: usize,
    /// Iterations of the Krylov solver, all passes together.
    pub iterations: i32,
    /// `|b - M x| / |b|` of the returned solution, recomputed after the
    /// solve.
    pub true_residual: f64,
    /// The solver's last iterated relative residual (of the system it
    /// iterated on).
    pub iterated_residual: f64,
    /// Wall-clock seconds of the Krylov solve (as QUDA reports it): the
    /// host-side reordering and transfers of source and solution excluded.
    pub seconds: f64,
    /// Effective Gflops: 1320 flops per site per hopping term, 48 per
    /// site per axpy-type operation.
    pub gflops: f64,
    /// 1 if `true_residual <= tol`, else 0.
    pub converged: i32,
    /// Restarts from the true residual (and defect-correction restarts).
    pub restarts: i32,
    /// Residual replacements in high precision (mixed-precision solves).
    pub reliable_updates: i32,
    /// MILC's heavy-quark residual `sqrt(mean_x |r(x)|^2 / |x(x)|^2)` of the
    /// true residual (staggered solves; 0 where not computed). Added after
    /// the first version of the struct: written when `struct_size` covers it.
    pub true_residual_hq: f64,
}

unsafe impl Versioned for latsol_invert_result {
    const NAME: &'static str = "latsol_invert_result";
    // The first version ended with `reliable_updates`.
    const V1_SIZE: usize = std::mem::offset_of!(latsol_invert_result, true_residual_hq);
    fn defaults() -> Self {
        latsol_invert_result {
            struct_size: size_of::<latsol_invert_result>(),
            ..Default::default()
        }
    }
}

impl From<&InvertResult> for latsol_invert_result {
    fn from(r: &InvertResult) -> Self {
        latsol_invert_result {
            struct_size: size_of::<latsol_invert_result>(),
            iterations: to_c_count(r.iterations),
            true_residual: r.true_residual,
            iterated_residual: r.iterated_residual,
            seconds: r.seconds,
            gflops: r.gflops,
            converged: i32::from(r.converged),
            restarts: to_c_count(r.restarts),
            reliable_updates: to_c_count(r.reliable_updates),
            true_residual_hq: r.true_residual_hq,
        }
    }
}

/// The default invert parameters: every field a valid choice, `struct_size`
/// set. Wilson, kappa 0.12, kappa normalization, even-odd BiCGstab on the
/// even sites, tol 1e-10, maxiter 10000, double precision throughout,
/// DIRAC order, DeGrand-Rossi basis, no initial guess.
#[no_mangle]
pub extern "C" fn latsol_invert_param_default() -> latsol_invert_param {
    // A struct_size of 0 (refused by every call) if building the defaults
    // ever failed: nothing unwinds into C.
    guard_value(
        || latsol_invert_param {
            struct_size: 0,
            dslash: 0,
            kappa: 0.0,
            mass: 0.0,
            mass_normalization: 0,
            solver: 0,
            solve_type: 0,
            matpc: 0,
            tol: 0.0,
            maxiter: 0,
            reliable_delta: 0.0,
            host_precision: 0,
            precision: 0,
            precision_sloppy: 0,
            dirac_order: 0,
            gamma_basis: 0,
            use_initial_guess: 0,
            progress_every: 0,
            mixed: 0,
            tol_inner: 0.0,
            cg_stabilised: 0,
            sources_per_block: 0,
            block_memory_saving: 0,
            sap_omega: 0.0,
            sap_cycles: 0,
            sap_ssor_iterations: 0,
            sap_extent: [0; 4],
            gcr_nkrylov: 0,
            sap_schwarz: 0,
            sap_box_solver: 0,
        },
        latsol_invert_param::defaults,
    )
}

/// An empty result with `struct_size` set, to pass to `latsol_invert`.
#[no_mangle]
pub extern "C" fn latsol_invert_result_default() -> latsol_invert_result {
    guard_value(
        latsol_invert_result::default,
        latsol_invert_result::defaults,
    )
}

/// Solves `M x = b` for one source `b` on `gauge` (loaded into `ctx`), and
/// writes `x` to `solution` and what the solve did to `result`. The
/// solution is of the full system, whatever `solve_type`; `solution` and
/// `source` are full fields of V*24 reals (`double` or `float` as
/// `param->host_precision` says), separate arrays.
///
/// Returns `LATSOL_SUCCESS` when `result->true_residual <= tol`.
/// `LATSOL_ERROR_NOT_CONVERGED` when `maxiter` was reached first: then,
/// unlike any other error, `solution` holds the best solution found and
/// `result` is filled in. Other errors: NULL pointers (NULL_POINTER); a
/// stale `ctx` or `gauge`, or a gauge of another context (INVALID_HANDLE);
/// a wrong `struct_size`, unknown enum values, kappa <= 0 or NaN, tol
/// outside (0, 1) or below the unit roundoff of `precision` (single
/// precision reaches about 1e-7), maxiter <= 0, NaN or Inf in the source, a
/// precision that does not match the gauge field's, a solution beyond the
/// range of the host precision (INVALID_ARGUMENT); a breakdown of the
/// recurrence (BREAKDOWN). After those, `solution` and `result` are
/// untouched.
///
/// A source of any magnitude, subnormal to near the largest double, is
/// solved as well as one of norm 1: latsol solves for the source times the
/// exact power of two that brings its largest component near 1 and scales
/// the solution back.
///
/// # Safety
/// Handles are NULL or from latsol; `param` is NULL or points to a
/// `latsol_invert_param` of its `struct_size`; `solution` and `source` are
/// NULL or point to V*24 reals; `result` is NULL or points to a
/// `latsol_invert_result` of its `struct_size`.
#[no_mangle]
pub unsafe extern "C" fn latsol_invert(
    ctx: *mut latsol_context,
    gauge: *const latsol_gauge,
    param: *const latsol_invert_param,
    solution: *mut c_void,
    source: *const c_void,
    result: *mut latsol_invert_result,
) -> latsol_status {
    call("latsol_invert", || {
        let fields = || Ok(unsafe { boundary::borrow(gauge, "gauge")? }.into());
        unsafe { invert_on(ctx, fields, param, solution, source, result) }
    })
}

/// The body of `latsol_invert` and `latsol_invert_clover` once the
/// operator's handles are borrowed.
///
/// # Safety
/// As `latsol_invert`.
pub(crate) unsafe fn invert_on<'a>(
    ctx: *mut latsol_context,
    fields: impl FnOnce() -> Result<OperatorFields<'a>>,
    param: *const latsol_invert_param,
    solution: *mut c_void,
    source: *const c_void,
    result: *mut latsol_invert_result,
) -> Result<()> {
    let context = unsafe { boundary::borrow(ctx.cast_const(), "ctx")? };
    let checked = (|| {
        let fields = fields()?;
        let (params, host) = unsafe { boundary::read_versioned(param, "param")? }.to_safe()?;
        // Checked before the solve, so a bad result struct costs nothing
        // and leaves the solution untouched.
        let result_size = unsafe { boundary::check_out_struct(result, "result")? };
        let len = fields.gauge.lattice().volume() * SPINOR_REALS;
        let source_reals = unsafe { boundary::host_reals(source, len, host, "source")? };
        boundary::check_disjoint(
            (source, "source"),
            (solution.cast_const(), "solution"),
            len,
            host,
        )?;
        let solution_reals = unsafe { boundary::host_reals_mut(solution, len, host, "solution")? };
        Ok((fields, params, result_size, source_reals, solution_reals))
    })();
    let (fields, params, result_size, source_reals, solution_reals) = collective(context, checked)?;
    let r = context.invert(fields, &params, source_reals, solution_reals)?;
    unsafe { write_result(result, result_size, &r, params.maxiter, params.tol) }
}

/// Writes what a solve did to the caller's `result` (of `size` bytes); a
/// solve that did not converge is NOT_CONVERGED, its solution written.
///
/// # Safety
/// `result` was checked by `boundary::check_out_struct`, which gave `size`.
pub(crate) unsafe fn write_result(
    result: *mut latsol_invert_result,
    size: usize,
    r: &InvertResult,
    maxiter: usize,
    tol: f64,
) -> Result<()> {
    unsafe { boundary::write_versioned(result, size, &r.into()) };
    if !r.converged {
        return Err(Error::NotConverged(format!(
            "{} iterations (maxiter = {maxiter}), true residual {:.3e} > tol = {tol:.1e}; the \
             best solution was written",
            r.iterations, r.true_residual
        )));
    }
    Ok(())
}

/// Applies an operator: `out = op in`, with the operator of `param`
/// (dslash, kappa, mass_normalization, matpc) on `gauge`, in the caller's
/// order, basis and host precision. `LATSOL_OP_M`, `_MDAG`, `_MDAG_M`,
/// `_DSLASH` (the hopping term D of `M = 1 - kappa D`) on full fields of
/// V*24 reals; `_MPC`, `_MPC_DAG` (the even-odd operator of `matpc`) on
/// single-parity fields of (V/2)*24 reals of the `matpc` parity. `out` and
/// `in` are separate arrays. The solver fields of `param` are not used.
///
/// Errors: as `latsol_invert`, plus an unknown `op`, or a clover operator
/// without a clover field (INVALID_ARGUMENT). On any error `out` is
/// untouched.
///
/// # Safety
/// As `latsol_invert`; `out` and `in` are NULL or point to as many reals
/// as `op` needs.
#[no_mangle]
pub unsafe extern "C" fn latsol_apply(
    ctx: *mut latsol_context,
    gauge: *const latsol_gauge,
    param: *const latsol_invert_param,
    op: latsol_operator,
    out: *mut c_void,
    r#in: *const c_void,
) -> latsol_status {
    call("latsol_apply", || {
        let fields = || Ok(unsafe { boundary::borrow(gauge, "gauge")? }.into());
        unsafe { apply_on(ctx, fields, param, op, out, r#in) }
    })
}

/// The body of `latsol_apply` and `latsol_apply_clover`.
///
/// # Safety
/// As `latsol_apply`.
pub(crate) unsafe fn apply_on<'a>(
    ctx: *mut latsol_context,
    fields: impl FnOnce() -> Result<OperatorFields<'a>>,
    param: *const latsol_invert_param,
    op: latsol_operator,
    out: *mut c_void,
    r#in: *const c_void,
) -> Result<()> {
    let context = unsafe { boundary::borrow(ctx.cast_const(), "ctx")? };
    let checked = (|| {
        let fields = fields()?;
        let (params, host) = unsafe { boundary::read_versioned(param, "param")? }.to_safe()?;
        let op = OPERATOR.decode(op, "op")?;
        let sub = crate::dispatch::apply_subset(&params, op, fields.clover.is_some())?;
        let len = fields.gauge.lattice().sites(sub) * SPINOR_REALS;
        let input = unsafe { boundary::host_reals(r#in, len, host, "in")? };
        boundary::check_disjoint((r#in, "in"), (out.cast_const(), "out"), len, host)?;
        let output = unsafe { boundary::host_reals_mut(out, len, host, "out")? };
        Ok((fields, params, op, input, output))
    })();
    let (fields, params, op, input, output) = collective(context, checked)?;
    context.apply(fields, &params, op, input, output)
}
