//! Several sources on one operator through the C ABI:
//! `latsol_invert_sources` and `latsol_invert_sources_clover`, over
//! `Context::invert_sources` (on the GPU the next source crosses the bus
//! behind the current solve).

use super::ranks::collective;
use std::ffi::c_void;

use super::boundary::{self, call, HostPrecision};
use super::clover::{clover_fields, latsol_clover};
use super::context::latsol_context;
use super::gauge::latsol_gauge;
use super::invert::{latsol_invert_param, latsol_invert_result};
use super::status::latsol_status;
use crate::api::{InvertResult, OperatorFields, SystemForm};
use crate::error::{Error, Result};
use crate::field::SPINOR_REALS;
use crate::layout::{HostReals, HostRealsMut};

/// Solves `M x_k = b_k` for `num_sources` sources on `gauge`, each as
/// `latsol_invert` would (full fields of V*24 reals in `param`'s order,
/// basis and host precision), in one call: on the GPU the next source
/// crosses the bus while the current one is solved, and every solution is
/// written when all are solved. With `param->sources_per_block` other than
/// 1 the sources are solved together in blocks of that many (0: all in
/// one) by a block solver: block BiCGstab with QR (block CG where `solver`
/// is CG or `solve_type` a normal one), fewer operator applications for
/// the same solutions; `results[k].iterations` then counts the block's
/// iterations (each of `sources_per_block` operator applications), and a
/// block that breaks down (dependent sources) is solved one source at a
/// time.
///
/// - `solutions`, `sources`: `num_sources` (at least 1) pointers each; no
///   solution array may overlap another or any source (sources may repeat).
///   With `param->use_initial_guess` each solution array holds its guess.
/// - `results`: an array of `num_sources` `latsol_invert_result`, every
///   one with the same `struct_size` (start from
///   `latsol_invert_result_default()`); entry k describes source k.
///
/// Returns `LATSOL_SUCCESS` when every solve met `tol`;
/// `LATSOL_ERROR_NOT_CONVERGED` when one reached `maxiter` first (every
/// solution and result is then written, `results[k].converged` says which).
/// Any other error leaves every solution array and result as it was: the
/// errors of `latsol_invert` (naming the source or solution), a
/// `num_sources` below 1, NULL arrays or entries, overlapping arrays, or
/// results of different `struct_size`. Where the solutions of all sources
/// would not fit in the device's memory beside a solve, the sources are
/// solved one at a time instead, each solution kept in host memory until
/// the last solve has returned (the same results, the same rule for
/// errors; an error names the source).
///
/// # Safety
/// As `latsol_invert`; `solutions` and `sources` are NULL or point to
/// `num_sources` pointers; `results` is NULL or points to `num_sources`
/// structs of the `struct_size` its first one gives.
#[no_mangle]
pub unsafe extern "C" fn latsol_invert_sources(
    ctx: *mut latsol_context,
    gauge: *const latsol_gauge,
    param: *const latsol_invert_param,
    num_sources: i32,
    solutions: *const *mut c_void,
    sources: *const *const c_void,
    results: *mut latsol_invert_result,
) -> latsol_status {
    call("latsol_invert_sources", || {
        let fields = || Ok(unsafe { boundary::borrow(gauge, "gauge")? }.into());
        let arrays = (num_sources, solutions, sources, results);
        unsafe { sources_on(ctx, fields, param, arrays) }
    })
}

/// `latsol_invert_sources` for the Wilson-clover operator with `clover`,
/// as `latsol_invert_clover` is to `latsol_invert`.
///
/// # Safety
/// As `latsol_invert_sources`; `clover` is NULL or a handle from latsol.
#[no_mangle]
pub unsafe extern "C" fn latsol_invert_sources_clover(
    ctx: *mut latsol_context,
    gauge: *const latsol_gauge,
    clover: *const latsol_clover,
    param: *const latsol_invert_param,
    num_sources: i32,
    solutions: *const *mut c_void,
    sources: *const *const c_void,
    results: *mut latsol_invert_result,
) -> latsol_status {
    call("latsol_invert_sources_clover", || unsafe {
        let arrays = (num_sources, solutions, sources, results);
        sources_on(ctx, || clover_fields(gauge, clover), param, arrays)
    })
}

/// The caller's arrays of a multi-source call: `(num_sources, solutions,
/// sources, results)`.
type SourceArrays = (
    i32,
    *const *mut c_void,
    *const *const c_void,
    *mut latsol_invert_result,
);

/// The body of both entry points once the operator's handles are borrowed.
///
/// # Safety
/// As `latsol_invert_sources`.
unsafe fn sources_on<'a>(
    ctx: *mut latsol_context,
    fields: impl FnOnce() -> Result<OperatorFields<'a>>,
    param: *const latsol_invert_param,
    arrays: SourceArrays,
) -> Result<()> {
    let (num_sources, solutions, sources, results) = arrays;
    let context = unsafe { boundary::borrow(ctx.cast_const(), "ctx")? };
    let checked = (|| {
        let fields = fields()?;
        let (params, host) = unsafe { boundary::read_versioned(param, "param")? }.to_safe()?;
        let n = usize::try_from(num_sources)
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| {
                Error::InvalidArgument(format!("num_sources = {num_sources}: must be at least 1"))
            })?;
        let result_size = unsafe { result_array(results, n)? };
        let len = fields.gauge.lattice().volume() * SPINOR_REALS;
        boundary::check_ptr(sources, "sources")?;
        boundary::check_ptr(solutions, "solutions")?;
        // SAFETY: the caller's arrays of n pointers (checked non-NULL).
        let (bs, xs) = unsafe {
            (
                std::slice::from_raw_parts(sources, n),
                std::slice::from_raw_parts(solutions, n),
            )
        };
        check_separate(bs, xs, len, host)?;
        let source_reals = bs
            .iter()
            .enumerate()
            .map(|(k, &b)| unsafe { boundary::host_reals(b, len, host, &format!("sources[{k}]")) })
            .collect::<Result<Vec<HostReals>>>()?;
        let solution_reals = xs
            .iter()
            .enumerate()
            .map(|(k, &x)| unsafe {
                boundary::host_reals_mut(x, len, host, &format!("solutions[{k}]"))
            })
            .collect::<Result<Vec<HostRealsMut>>>()?;
        Ok((fields, params, n, result_size, source_reals, solution_reals))
    })();
    let (fields, params, n, result_size, source_reals, solution_reals) =
        collective(context, checked)?;
    let form = SystemForm::default();
    let solved = if context.room_for_sources(fields, &params, &form, n)? {
        context.invert_sources(fields, &params, &source_reals, solution_reals, &form)?
    } else {
        // Too many solutions to keep on the device: one solve at a time.
        context.invert_each(fields, &params, &source_reals, solution_reals, &form)?
    };
    for (k, r) in solved.iter().enumerate() {
        // SAFETY: entry k of the caller's array, of result_size bytes (checked).
        let at =
            unsafe { results.cast::<u8>().add(k * result_size) }.cast::<latsol_invert_result>();
        let value: latsol_invert_result = r.into();
        unsafe { boundary::write_versioned(at, result_size, &value) };
    }
    not_converged(&solved, params.maxiter, params.tol)
}

/// The size of every entry of the caller's result array: that of the first,
/// checked as `latsol_invert` checks its result, and the same for all.
///
/// # Safety
/// `results` is NULL or points to `n` structs of the size its first gives.
unsafe fn result_array(results: *mut latsol_invert_result, n: usize) -> Result<usize> {
    let size = unsafe { boundary::check_out_struct(results, "results")? };
    for k in 1..n {
        // SAFETY: the caller's k-th entry starts with its struct_size.
        let at = unsafe { results.cast::<u8>().add(k * size) };
        let entry = unsafe { at.cast::<usize>().read_unaligned() };
        if entry != size {
            return Err(Error::InvalidArgument(format!(
                "results[{k}].struct_size = {entry}, results[0].struct_size = {size}: every \
                 result of the array must have the same struct_size"
            )));
        }
    }
    Ok(size)
}

/// No solution array overlaps a source or another solution.
fn check_separate(
    bs: &[*const c_void],
    xs: &[*mut c_void],
    len: usize,
    host: HostPrecision,
) -> Result<()> {
    for (i, &x) in xs.iter().enumerate() {
        let name = format!("solutions[{i}]");
        for (j, &b) in bs.iter().enumerate() {
            let other = format!("sources[{j}]");
            boundary::check_disjoint((b, &other), (x.cast_const(), &name), len, host)?;
        }
        for (j, &y) in xs[..i].iter().enumerate() {
            let other = format!("solutions[{j}]");
            boundary::check_disjoint((y.cast_const(), &other), (x.cast_const(), &name), len, host)?;
        }
    }
    Ok(())
}

/// NOT_CONVERGED naming the sources that reached `maxiter` first.
fn not_converged(solved: &[InvertResult], maxiter: usize, tol: f64) -> Result<()> {
    let missed: Vec<String> = solved
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.converged)
        .map(|(k, r)| format!("source {k}: true residual {:.3e}", r.true_residual))
        .collect();
    if missed.is_empty() {
        return Ok(());
    }
    Err(Error::NotConverged(format!(
        "{} (maxiter = {maxiter}, tol = {tol:.1e}); every solution was written",
        missed.join(", ")
    )))
}
