//! `qudaInvert`, `qudaInvertMsrc`, `qudaMultishiftInvert`: MILC's
//! staggered solves on one parity of full-lattice vectors.

use std::os::raw::{c_int, c_void};

use super::layout::host_double;
use super::staggered::{
    copy_out, load_links, offset_reals, offset_reals_mut, owned, parity, precisions, solve_params,
};
use super::targets::check_targets;
use crate::error::{Error, Result};
use crate::ffi::quda::abi::*;
use crate::ffi::quda::errors::quda_collective;
use crate::ffi::quda::host::not_null;
use crate::ffi::quda::invert::sources_per_block;
use crate::ffi::quda::offsets::{tol_or, Offsets};
use crate::ffi::quda::state;
use crate::layout::{HostReals, HostRealsMut};

/// `qudaInvert(...)`: `(4m² − D_pq D_qp) x_p = b_p` on parity
/// `inv_args.evenodd` of the full-lattice colour-vector arrays `source`
/// and `solution` (the solution is the initial guess). `final_resid` gets
/// the true relative residual, `final_rel_resid` the heavy-quark one.
///
/// # Safety
/// MILC's arrays: links V·4·18, vectors V·6 reals of `external_precision`;
/// the outputs writable.
#[no_mangle]
pub unsafe extern "C" fn qudaInvert(
    external_precision: c_int,
    quda_precision: c_int,
    mass: f64,
    inv_args: QudaInvertArgs_t,
    target_residual: f64,
    target_fermilab_residual: f64,
    milc_fatlink: *const c_void,
    milc_longlink: *const c_void,
    source: *mut c_void,
    solution: *mut c_void,
    final_resid: *mut f64,
    final_rel_resid: *mut f64,
    num_iters: *mut c_int,
) {
    quda_collective("qudaInvert", || {
        not_null(final_resid, "final_resid")?;
        not_null(final_rel_resid, "final_rel_resid")?;
        not_null(num_iters, "num_iters")?;
        let sources = [source];
        let solutions = [solution];
        // SAFETY: forwarded from the caller.
        let (iters, res, hq) = unsafe {
            solve_parity(
                external_precision,
                quda_precision,
                mass,
                &inv_args,
                target_residual,
                target_fermilab_residual,
                milc_fatlink,
                milc_longlink,
                &sources,
                &solutions,
            )?
        };
        // SAFETY: the caller's outputs.
        unsafe { write_outputs(final_resid, final_rel_resid, num_iters, (iters, res, hq)) }
    })
}

/// `qudaInvertMsrc(...)`: `qudaInvert` for `num_src` sources in turn (or
/// in blocks by block CG under `LATSOL_SOURCES_PER_BLOCK`); the residuals
/// of the last, the iterations of all.
///
/// # Safety
/// As `qudaInvert`, with `num_src` source and solution pointers.
#[no_mangle]
pub unsafe extern "C" fn qudaInvertMsrc(
    external_precision: c_int,
    quda_precision: c_int,
    mass: f64,
    inv_args: QudaInvertArgs_t,
    target_residual: f64,
    target_fermilab_residual: f64,
    fatlink: *const c_void,
    longlink: *const c_void,
    source_array: *mut *mut c_void,
    solution_array: *mut *mut c_void,
    final_residual: *mut f64,
    final_fermilab_residual: *mut f64,
    num_iters: *mut c_int,
    num_src: c_int,
) {
    quda_collective("qudaInvertMsrc", || {
        if !(1..=QUDA_MAX_MULTI_SRC).contains(&num_src) {
            return Err(Error::InvalidArgument(format!(
                "num_src = {num_src}: 1 to {QUDA_MAX_MULTI_SRC} (QUDA_MAX_MULTI_SRC)"
            )));
        }
        not_null(source_array, "sourceArray")?;
        not_null(solution_array, "solutionArray")?;
        not_null(final_residual, "final_residual")?;
        not_null(final_fermilab_residual, "final_fermilab_residual")?;
        not_null(num_iters, "num_iters")?;
        // SAFETY: num_src pointers each, as the caller promises.
        let (srcs, sols) = unsafe {
            (
                std::slice::from_raw_parts(source_array, num_src as usize),
                std::slice::from_raw_parts(solution_array, num_src as usize),
            )
        };
        // SAFETY: forwarded from the caller.
        let (iters, res, hq) = unsafe {
            solve_parity(
                external_precision,
                quda_precision,
                mass,
                &inv_args,
                target_residual,
                target_fermilab_residual,
                fatlink,
                longlink,
                srcs,
                sols,
            )?
        };
        // SAFETY: the caller's outputs.
        unsafe {
            write_outputs(
                final_residual,
                final_fermilab_residual,
                num_iters,
                (iters, res, hq),
            )
        }
    })
}

/// Writes a parity solve's true and heavy-quark residuals and iterations
/// into MILC's outputs.
///
/// # Safety
/// Each pointer is NULL (refused) or points to a writable value.
unsafe fn write_outputs(
    resid: *mut f64,
    hq_resid: *mut f64,
    num_iters: *mut c_int,
    (iters, res, hq): (usize, f64, f64),
) -> Result<()> {
    for (p, v) in [(resid, res), (hq_resid, hq)] {
        not_null(p, "final residual")?;
        // SAFETY: checked non-null; the caller's output.
        unsafe { *p = v };
    }
    not_null(num_iters, "num_iters")?;
    // SAFETY: as above.
    unsafe { *num_iters = iters as c_int };
    Ok(())
}

/// The parity solves of `qudaInvert` / `qudaInvertMsrc`: total iterations
/// and the last source's residuals.
///
/// # Safety
/// As `qudaInvert`.
#[allow(clippy::too_many_arguments)]
unsafe fn solve_parity(
    external_precision: c_int,
    quda_precision: c_int,
    mass: f64,
    inv_args: &QudaInvertArgs_t,
    target_residual: f64,
    target_fermilab_residual: f64,
    fat: *const c_void,
    long: *const c_void,
    sources: &[*mut c_void],
    solutions: &[*mut c_void],
) -> Result<(usize, f64, f64)> {
    let p = parity(inv_args.evenodd)?;
    // As QUDA's milc_interface.cpp (setInvertParams): a zero target turns
    // its criterion off (QUDA's residual_type bits), both zero is an error;
    // with both, both must be met.
    check_targets(target_residual, target_fermilab_residual)?;
    let hq = target_fermilab_residual != 0.0;
    let (hi, lo) = precisions(quda_precision, inv_args.mixed_precision, true, hq);
    let double = host_double(external_precision);
    let mut params = solve_params(inv_args, mass, target_residual, p, (hi, lo), true)?;
    params.tol_hq = target_fermilab_residual;
    state::with(|s| {
        // SAFETY: the caller's links.
        let (links, d) = unsafe { load_links(s, fat, long, double, hi, lo)? };
        let vh = d.iter().product::<usize>() / 2;
        let at = p.index() * vh * 6;
        // Every pointer first, then solves into owned vectors (the caller's
        // source and solution may be one array), then the copies out: a
        // failure writes nothing.
        for (k, (&src, &sol)) in sources.iter().zip(solutions).enumerate() {
            not_null(src, &format!("source[{k}]"))?;
            not_null(sol, &format!("solution[{k}]"))?;
        }
        // SAFETY: the caller's full-lattice vectors; parity p's half.
        let (bs, mut answers): (Vec<_>, Vec<_>) = sources
            .iter()
            .zip(solutions)
            .map(|(&src, &sol)| unsafe {
                (
                    owned(offset_reals(src, at, vh * 6, double)),
                    owned(offset_reals(sol, at, vh * 6, double)),
                )
            })
            .unzip();
        // latsol's block CG where LATSOL_SOURCES_PER_BLOCK asks for it
        // (`sources_per_block`; unset: one source after another, as QUDA).
        let per_block = if bs.len() > 1 {
            sources_per_block()?
        } else {
            1
        };
        let results = if per_block == 1 {
            let mut results = Vec::with_capacity(bs.len());
            for (b, x) in bs.iter().zip(answers.iter_mut()) {
                results.push(s.context.invert_staggered_parity(
                    &links,
                    &params,
                    HostReals::F64(b),
                    HostRealsMut::F64(x),
                )?);
            }
            results
        } else {
            let srcs: Vec<HostReals> = bs.iter().map(|b| HostReals::F64(b)).collect();
            let outs: Vec<HostRealsMut> =
                answers.iter_mut().map(|x| HostRealsMut::F64(x)).collect();
            s.context
                .invert_staggered_parity_sources(&links, &params, &srcs, outs, per_block)?
        };
        let (mut iters, mut last) = (0, (0.0, 0.0));
        for r in &results {
            iters += r.iterations;
            last = (r.true_residual, r.true_residual_hq);
            if !r.converged {
                state::warn(&format!(
                    "qudaInvert: residual {:.3e} above the target {:.1e} after {} iterations",
                    r.true_residual, target_residual, r.iterations
                ));
            }
        }
        for (&sol, x) in solutions.iter().zip(&answers) {
            // SAFETY: as above.
            copy_out(unsafe { offset_reals_mut(sol, at, vh * 6, double) }, x);
        }
        Ok((iters, last.0, last.1))
    })
}

/// `qudaMultishiftInvert(...)`: `(−D_pq D_qp + offset_i) x_i = b_p` on
/// parity `inv_args.evenodd` (the mass enters through the offsets, as in
/// MILC's RHMC), offsets ascending, per-offset targets; from zero.
///
/// # Safety
/// As `qudaInvert`, with `num_offsets` offsets, targets, solutions and
/// output residuals.
#[no_mangle]
pub unsafe extern "C" fn qudaMultishiftInvert(
    external_precision: c_int,
    precision: c_int,
    num_offsets: c_int,
    offset: *mut f64,
    inv_args: QudaInvertArgs_t,
    target_residual: *const f64,
    target_fermilab_residual: *const f64,
    milc_fatlink: *const c_void,
    milc_longlink: *const c_void,
    source: *mut c_void,
    solution_array: *mut *mut c_void,
    final_residual: *mut f64,
    final_fermilab_residual: *mut f64,
    num_iters: *mut c_int,
) {
    quda_collective("qudaMultishiftInvert", || {
        if !(1..=QUDA_MAX_MULTI_SHIFT).contains(&num_offsets) {
            return Err(Error::InvalidArgument(format!(
                "num_offsets = {num_offsets}: 1 to {QUDA_MAX_MULTI_SHIFT}"
            )));
        }
        let n = num_offsets as usize;
        for (ptr, name) in [
            (offset as *const f64, "offset"),
            (target_residual, "target_residual"),
            (final_residual as *const f64, "final_residual"),
            (
                final_fermilab_residual as *const f64,
                "final_fermilab_residual",
            ),
        ] {
            not_null(ptr, name)?;
        }
        not_null(solution_array, "solutionArray")?;
        not_null(source, "source")?;
        not_null(num_iters, "num_iters")?;
        // SAFETY: num_offsets entries each, as the caller promises.
        let (offsets, targets, sols) = unsafe {
            (
                std::slice::from_raw_parts(offset, n),
                std::slice::from_raw_parts(target_residual, n),
                std::slice::from_raw_parts(solution_array, n),
            )
        };
        // MILC sets only the first target when it does not ask for one
        // per shift (0 for the others): those shifts get the first one.
        let tols: Vec<f64> = targets.iter().map(|&t| tol_or(t, targets[0])).collect();
        let systems = Offsets::new(offsets, &tols, "offset", "target_residual")?;
        let hq = !target_fermilab_residual.is_null()
            // SAFETY: num_offsets entries.
            && unsafe { std::slice::from_raw_parts(target_fermilab_residual, n) }
                .iter()
                .any(|&t| t > 0.0);
        let p = parity(inv_args.evenodd)?;
        let (hi, lo) = precisions(precision, inv_args.mixed_precision, true, hq);
        let double = host_double(external_precision);
        // M̂ = 4m² − DD: m = 0 leaves −DD, the offsets carry the mass.
        let params = solve_params(
            &inv_args,
            f64::MIN_POSITIVE,
            systems.tols[0],
            p,
            (hi, lo),
            false,
        )?;
        state::with(|s| {
            // SAFETY: the caller's links.
            let (links, d) = unsafe { load_links(s, milc_fatlink, milc_longlink, double, hi, lo)? };
            let vh = d.iter().product::<usize>() / 2;
            let at = p.index() * vh * 6;
            for (k, &x) in sols.iter().enumerate() {
                not_null(x, &format!("solutionArray[{k}]"))?;
            }
            // SAFETY: the caller's source; parity p's half (owned: a
            // solution array may be the source).
            let b = owned(unsafe { offset_reals(source, at, vh * 6, double) });
            let mut xs = vec![vec![0.0; vh * 6]; systems.distinct.len()];
            let r = s.context.invert_multishift_staggered(
                &links,
                &params,
                &systems.distinct,
                Some(&systems.tols),
                HostReals::F64(&b),
                xs.iter_mut().map(|x| HostRealsMut::F64(x)).collect(),
            )?;
            for (i, (&sol, &k)) in sols.iter().zip(&systems.system_of).enumerate() {
                // SAFETY: the caller's solution arrays; parity p's half.
                copy_out(unsafe { offset_reals_mut(sol, at, vh * 6, double) }, &xs[k]);
                // SAFETY: num_offsets outputs each.
                unsafe {
                    *final_residual.add(i) = r.shifts[k].true_residual;
                    *final_fermilab_residual.add(i) = 0.0;
                }
            }
            // SAFETY: checked non-null.
            unsafe { *num_iters = r.iterations as c_int };
            Ok(())
        })
    })
}
