//! Solves of many systems with one source through the C ABI:
//! `latsol_invert_multishift` (`(A + sigma_i) x_i = b`, A = M^dag M) and
//! `latsol_invert_multimass` (`M(kappa_i) x_i = b`), with their common
//! result struct `latsol_multishift_result`.

use super::ranks::collective;
use std::ffi::c_void;
use std::mem::size_of;

use super::boundary::{self, call, guard_value, HostPrecision, Versioned};
use super::context::latsol_context;
use super::enums::{latsol_multimass_policy, to_c_count, MULTIMASS_POLICY};
use super::gauge::latsol_gauge;
use super::invert::latsol_invert_param;
use super::status::latsol_status;
use crate::api::OperatorFields;
use crate::api::{MultiResult, MAX_SHIFTS};
use crate::dispatch::multishift::system_subset;
use crate::error::{Error, Result};
use crate::lattice::Subset;
use crate::layout::HostRealsMut;

/// The most shifts (or masses) of one call; the per-shift arrays of
/// `latsol_multishift_result` have this many entries.
pub const LATSOL_MAX_SHIFTS: usize = 32;
const _: () = assert!(LATSOL_MAX_SHIFTS == MAX_SHIFTS);

/// What a multi-shift (or multi-mass) solve did. The caller sets
/// `struct_size` (start from `latsol_multishift_result_default()`); latsol
/// writes only that many bytes. Per-shift entries `[i]` follow the order of
/// the caller's `shifts` (or `kappas`), for `i < num_shifts`; the rest are
/// zero.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct latsol_multishift_result {
    /// `sizeof(latsol_multishift_result)` as the caller was compiled; set
    /// by the caller, never written by latsol.
    pub struct_size: usize,
    /// The number of systems solved.
    pub num_shifts: i32,
    /// All iterations: the multi-shift phase plus every refinement (or
    /// every single-mass solve).
    pub iterations: i32,
    /// Iterations of the shared multi-shift phase (0 for the single-mass
    /// sequence).
    pub multishift_iterations: i32,
    /// 1 if every system met its tolerance, else 0.
    pub converged: i32,
    /// Residual replacements in high precision (mixed-precision solves).
    pub reliable_updates: i32,
    /// `LATSOL_MULTIMASS_*` the solve used (multi-mass solves; -1 for
    /// multi-shift).
    pub policy_used: latsol_multimass_policy,
    /// Wall-clock seconds of the whole solve.
    pub seconds: f64,
    /// Effective Gflops of the operator applications (1320 flops per site
    /// per hopping term, 48 per site per axpy of the operator).
    pub gflops: f64,
    /// Per system: iterations spent on it alone (its refinement after the
    /// multi-shift phase, or its own single-mass solve).
    pub shift_iterations: [i32; LATSOL_MAX_SHIFTS],
    /// Per system: multi-shift iterations in which it was updated.
    pub shift_multishift_iterations: [i32; LATSOL_MAX_SHIFTS],
    /// Per system: `|b - A_i x_i| / |b|` recomputed in high precision.
    pub true_residual: [f64; LATSOL_MAX_SHIFTS],
    /// Per system: the true residual after the sloppy multi-shift phase of
    /// a mixed-precision multi-shift CG (what the refinement started from);
    /// NaN where not measured (pure precision, multi-mass).
    pub residual_after_multishift: [f64; LATSOL_MAX_SHIFTS],
    /// Per system: 1 if it met its tolerance, else 0.
    pub shift_converged: [i32; LATSOL_MAX_SHIFTS],
}

impl Default for latsol_multishift_result {
    fn default() -> Self {
        latsol_multishift_result {
            struct_size: size_of::<latsol_multishift_result>(),
            num_shifts: 0,
            iterations: 0,
            multishift_iterations: 0,
            converged: 0,
            reliable_updates: 0,
            policy_used: -1,
            seconds: 0.0,
            gflops: 0.0,
            shift_iterations: [0; LATSOL_MAX_SHIFTS],
            shift_multishift_iterations: [0; LATSOL_MAX_SHIFTS],
            true_residual: [0.0; LATSOL_MAX_SHIFTS],
            residual_after_multishift: [0.0; LATSOL_MAX_SHIFTS],
            shift_converged: [0; LATSOL_MAX_SHIFTS],
        }
    }
}

unsafe impl Versioned for latsol_multishift_result {
    const NAME: &'static str = "latsol_multishift_result";
    const V1_SIZE: usize = size_of::<latsol_multishift_result>();
    fn defaults() -> Self {
        Self::default()
    }
}

impl From<&MultiResult> for latsol_multishift_result {
    fn from(r: &MultiResult) -> Self {
        let mut c = latsol_multishift_result {
            num_shifts: to_c_count(r.shifts.len()),
            iterations: to_c_count(r.iterations),
            multishift_iterations: to_c_count(r.multishift_iterations),
            converged: i32::from(r.converged),
            reliable_updates: to_c_count(r.reliable_updates),
            policy_used: r.policy_used.map_or(-1, |p| MULTIMASS_POLICY.encode(p)),
            seconds: r.seconds,
            gflops: r.gflops,
            ..Default::default()
        };
        for (i, s) in r.shifts.iter().enumerate().take(LATSOL_MAX_SHIFTS) {
            c.shift_iterations[i] = to_c_count(s.iterations);
            c.shift_multishift_iterations[i] = to_c_count(s.multishift_iterations);
            c.true_residual[i] = s.true_residual;
            c.residual_after_multishift[i] = s.residual_after_multishift;
            c.shift_converged[i] = i32::from(s.converged);
        }
        c
    }
}

/// An empty result with `struct_size` set, to pass to
/// `latsol_invert_multishift` or `latsol_invert_multimass`.
#[no_mangle]
pub extern "C" fn latsol_multishift_result_default() -> latsol_multishift_result {
    guard_value(
        latsol_multishift_result::default,
        latsol_multishift_result::defaults,
    )
}

/// The caller's per-system arrays: `num` checked against the range, the
/// numbers and optional tolerances read.
///
/// # Safety
/// `values` is NULL or points to `num` doubles; `tols` likewise or NULL.
pub(crate) unsafe fn read_systems(
    num: i32,
    values: *const f64,
    tols: *const f64,
    names: (&str, &str, &str),
) -> Result<(Vec<f64>, Option<Vec<f64>>)> {
    let (num_name, values_name, tols_name) = names;
    let n = usize::try_from(num)
        .ok()
        .filter(|n| (1..=LATSOL_MAX_SHIFTS).contains(n))
        .ok_or_else(|| {
            Error::InvalidArgument(format!(
                "{num_name} = {num}: must be between 1 and LATSOL_MAX_SHIFTS = {LATSOL_MAX_SHIFTS}"
            ))
        })?;
    boundary::check_ptr(values, values_name)?;
    let values = unsafe { std::slice::from_raw_parts(values, n) }.to_vec();
    let tols = if tols.is_null() {
        None
    } else {
        boundary::check_ptr(tols, tols_name)?;
        Some(unsafe { std::slice::from_raw_parts(tols, n) }.to_vec())
    };
    Ok((values, tols))
}

/// The caller's solution arrays: `n` non-NULL pointers to `len` reals, none
/// overlapping another or the source.
///
/// # Safety
/// `solutions` is NULL or points to `n` pointers, each NULL or to `len`
/// writable reals that nothing else uses during the call.
pub(crate) unsafe fn solution_arrays<'a>(
    solutions: *const *mut c_void,
    n: usize,
    len: usize,
    host: HostPrecision,
    source: *const c_void,
) -> Result<Vec<HostRealsMut<'a>>> {
    boundary::check_ptr(solutions, "solutions")?;
    let ptrs = unsafe { std::slice::from_raw_parts(solutions, n) };
    for (i, &p) in ptrs.iter().enumerate() {
        let name = format!("solutions[{i}]");
        boundary::check_disjoint((source, "source"), (p.cast_const(), &name), len, host)?;
        for (j, &q) in ptrs[..i].iter().enumerate() {
            boundary::check_disjoint(
                (q.cast_const(), &format!("solutions[{j}]")),
                (p.cast_const(), &name),
                len,
                host,
            )?;
        }
    }
    ptrs.iter()
        .enumerate()
        .map(|(i, &p)| unsafe {
            boundary::host_reals_mut(p, len, host, &format!("solutions[{i}]"))
        })
        .collect()
}

/// Solves `(A + shifts[i]) x_i = b` for `num_shifts` shifts at once by
/// multi-shift CG, where `A` is `M^dag M` on the full lattice
/// (`solve_type` DIRECT or NORMOP) or `Mhat^dag Mhat` of the even-odd
/// system on the parity of `matpc` (DIRECT_PC or NORMOP_PC), in the
/// caller's normalization (`param->mass_normalization`; for the even-odd
/// operator in mass normalization `Mhat = (4 + m)^2 - D_eo D_oe / 4`).
///
/// - `shifts`: `num_shifts` (1 to `LATSOL_MAX_SHIFTS`) distinct, finite,
///   non-negative numbers, in any order.
/// - `tol_shifts`: NULL (every shift to `param->tol`) or `num_shifts`
///   tolerances in (0, 1), `|b - (A + shifts[i]) x_i| / |b|`.
/// - `solutions`: `num_shifts` pointers to separate arrays; `source`: one
///   array. Each holds V*24 reals for the full system, or (V/2)*24 reals of
///   the `matpc` parity for the even-odd system, in `param->dirac_order`,
///   `gamma_basis` and `host_precision`.
/// - Mixed precision when `param->precision_sloppy` is coarser than
///   `precision` (clark2022 section 3.2): a sloppy multi-shift phase with
///   reliable updates, then a mixed-precision CG refinement per shift;
///   `param->solver`, `mixed` and `use_initial_guess` are not used (the
///   shifted recurrences start from zero).
///
/// Returns `LATSOL_SUCCESS` when every shift met its tolerance;
/// `LATSOL_ERROR_NOT_CONVERGED` when `maxiter` (all phases together) was
/// reached first: the solutions and `result` are then written. Other
/// errors (nothing written): NULL pointers, a `num_shifts` out of range,
/// NaN/Inf, negative or duplicate shifts, a tolerance outside (0, 1),
/// overlapping arrays, and the errors of `latsol_invert`.
///
/// # Safety
/// As `latsol_invert`; `shifts` (and `tol_shifts` unless NULL) point to
/// `num_shifts` doubles; `solutions` to `num_shifts` pointers.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn latsol_invert_multishift(
    ctx: *mut latsol_context,
    gauge: *const latsol_gauge,
    param: *const latsol_invert_param,
    num_shifts: i32,
    shifts: *const f64,
    tol_shifts: *const f64,
    solutions: *mut *mut c_void,
    source: *const c_void,
    result: *mut latsol_multishift_result,
) -> latsol_status {
    call("latsol_invert_multishift", || {
        let fields = || Ok(unsafe { boundary::borrow(gauge, "gauge")? }.into());
        unsafe {
            multishift_on(
                ctx,
                fields,
                param,
                (num_shifts, shifts, tol_shifts),
                solutions,
                source,
                result,
            )
        }
    })
}

/// The body of `latsol_invert_multishift` and
/// `latsol_invert_multishift_clover`; `systems` is `(num_shifts, shifts,
/// tol_shifts)`.
///
/// # Safety
/// As `latsol_invert_multishift`.
pub(crate) unsafe fn multishift_on<'a>(
    ctx: *mut latsol_context,
    fields: impl FnOnce() -> Result<OperatorFields<'a>>,
    param: *const latsol_invert_param,
    systems: (i32, *const f64, *const f64),
    solutions: *mut *mut c_void,
    source: *const c_void,
    result: *mut latsol_multishift_result,
) -> Result<()> {
    let context = unsafe { boundary::borrow(ctx.cast_const(), "ctx")? };
    let checked = (|| {
        let fields = fields()?;
        let (params, host) = unsafe { boundary::read_versioned(param, "param")? }.to_safe()?;
        let (num_shifts, shifts, tol_shifts) = systems;
        let (shifts, tols) = unsafe {
            read_systems(
                num_shifts,
                shifts,
                tol_shifts,
                ("num_shifts", "shifts", "tol_shifts"),
            )?
        };
        let result_size = unsafe { boundary::check_out_struct(result, "result")? };
        let len = fields.gauge.lattice().sites(system_subset(&params)) * 24;
        let source_reals = unsafe { boundary::host_reals(source, len, host, "source")? };
        let outs =
            unsafe { solution_arrays(solutions.cast_const(), shifts.len(), len, host, source)? };
        Ok((
            fields,
            params,
            shifts,
            tols,
            result_size,
            source_reals,
            outs,
        ))
    })();
    let (fields, params, shifts, tols, result_size, source_reals, outs) =
        collective(context, checked)?;
    let mixed = params.precision_sloppy != params.precision;
    let r = context.invert_multishift(
        fields,
        &params,
        &shifts,
        tols.as_deref(),
        source_reals,
        outs,
        mixed,
    )?;
    unsafe { boundary::write_versioned(result, result_size, &(&r).into()) };
    not_converged(&r, params.maxiter)
}

/// Solves `M(kappas[i]) x_i = b` for `num_masses` Wilson hopping
/// parameters and one source (`param->kappa` is not used), in the
/// normalization of `param->mass_normalization`. In the mass normalization
/// `M(m) = (4 + m) - D/2` with `m = 1/(2 kappa) - 4`, the systems differ by
/// multiples of the identity, which BiCGstab-M exploits.
///
/// - `kappas`: `num_masses` (1 to `LATSOL_MAX_SHIFTS`) distinct positive
///   numbers, in any order.
/// - `tol_masses`: NULL (every mass to `param->tol`) or `num_masses`
///   tolerances in (0, 1), `|b - M_i x_i| / |b|`.
/// - `policy`: `LATSOL_MULTIMASS_BICGSTAB_M` (multi-shift BiCGstab on the
///   full lattice in `precision`), `LATSOL_MULTIMASS_SEQUENCE` (one
///   even-odd solve per mass, heaviest first, mixed precision when
///   `precision_sloppy` is coarser, initial guesses extrapolated from the
///   previous solutions; `_MINRES` and `_ZERO_GUESS` for the other guesses)
///   or `LATSOL_MULTIMASS_AUTO` (BiCGstab-M only when its 2n+1 extra fields
///   fit and its expected cost is lower). `result->policy_used` says which
///   ran.
/// - `solutions`, `source`: full fields of V*24 reals, as for
///   `latsol_invert`; `result` as for `latsol_invert_multishift`.
///
/// Returns as `latsol_invert_multishift`; an unknown `policy`, or a kappa
/// that is not positive, is INVALID_ARGUMENT.
///
/// # Safety
/// As `latsol_invert_multishift`, with `kappas` and `tol_masses` for
/// `shifts` and `tol_shifts`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn latsol_invert_multimass(
    ctx: *mut latsol_context,
    gauge: *const latsol_gauge,
    param: *const latsol_invert_param,
    num_masses: i32,
    kappas: *const f64,
    tol_masses: *const f64,
    policy: latsol_multimass_policy,
    solutions: *mut *mut c_void,
    source: *const c_void,
    result: *mut latsol_multishift_result,
) -> latsol_status {
    call("latsol_invert_multimass", || {
        let context = unsafe { boundary::borrow(ctx.cast_const(), "ctx")? };
        let checked = (|| {
            let gauge = unsafe { boundary::borrow(gauge, "gauge")? };
            let (params, host) = unsafe { boundary::read_versioned(param, "param")? }.to_safe()?;
            let policy = MULTIMASS_POLICY.decode(policy, "policy")?;
            let (kappas, tols) = unsafe {
                read_systems(
                    num_masses,
                    kappas,
                    tol_masses,
                    ("num_masses", "kappas", "tol_masses"),
                )?
            };
            let result_size = unsafe { boundary::check_out_struct(result, "result")? };
            let len = gauge.lattice().sites(Subset::Full) * 24;
            let source_reals = unsafe { boundary::host_reals(source, len, host, "source")? };
            let outs = unsafe {
                solution_arrays(solutions.cast_const(), kappas.len(), len, host, source)?
            };
            Ok((
                gauge,
                params,
                policy,
                kappas,
                tols,
                result_size,
                source_reals,
                outs,
            ))
        })();
        let (gauge, params, policy, kappas, tols, result_size, source_reals, outs) =
            collective(context, checked)?;
        let r = context.invert_multimass(
            gauge,
            &params,
            &kappas,
            tols.as_deref(),
            policy,
            source_reals,
            outs,
        )?;
        unsafe { boundary::write_versioned(result, result_size, &(&r).into()) };
        not_converged(&r, params.maxiter)
    })
}

/// `LATSOL_ERROR_NOT_CONVERGED` naming the systems that missed their
/// tolerance, after the outputs are written.
pub(crate) fn not_converged(r: &MultiResult, maxiter: usize) -> Result<()> {
    let missed: Vec<String> = r
        .shifts
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.converged)
        .map(|(i, s)| format!("[{i}] at {:.2e}", s.true_residual))
        .collect();
    if missed.is_empty() {
        return Ok(());
    }
    Err(Error::NotConverged(format!(
        "{} iterations (maxiter = {maxiter}); systems {} missed their tolerance; the best \
         solutions were written",
        r.iterations,
        missed.join(", ")
    )))
}
