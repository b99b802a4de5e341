//! `invertQuda`, `invertMultiShiftQuda`, `invertMultiSrcQuda` for the
//! Wilson and Wilson-clover operators (QUDA's systems and their
//! normalization: `wilson`).
//!
//! MAT and MATPC go to `Context::invert_form` with the caller's arrays as
//! they are (the factor, γ5 for DAG_YES and the parity applied on the
//! backend, `SystemForm`; a MATPC solution is the even-odd operator's own
//! system on the `matpc_type` parity); the normal-equation systems are
//! single-shift multi-shift solves.

use std::os::raw::{c_int, c_void};
use std::time::Instant;

use super::abi::*;
use super::convert;
use super::errors::quda_collective;
use super::host::{host_reals, host_reals_mut, not_null};
use super::offsets::{tol_or, Offsets};
use super::state;
use super::wilson::{
    check_solve, dagger_of, gamma5_host, invert_params, negate_odd_block, operator_fields,
    read_scaled, share_memory, system_form, write_scaled, Solution,
};
use crate::api::{InvertParams, SolveType};
use crate::error::{Error, Result};

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
    quda_collective("invertQuda", || unsafe { invert(h_x, h_b, param) })
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
    let _verbosity = state::CallVerbosity::push(p.verbosity);
    if super::staggered::is_staggered(p) {
        // SAFETY: forwarded.
        return unsafe { super::staggered::invert(&[h_x], h_b, p, false) };
    }
    let (mut ip, double) = invert_params(p, true)?;
    let solution = Solution::of(p.solution_type)?;
    check_solve(p, solution, false)?;
    let f = solution.factor(convert::mass_normalization(p.mass_normalization)?, p.kappa);
    // A negative κ: |κ| and ε on full-lattice vectors (`negate_odd_block`).
    let flip = ip.kappa < 0.0 && !solution.one_parity();
    ip.kappa = ip.kappa.abs();
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
        let mut true_res_hq = 0.0;
        let (iterations, true_res, gflop) = match solution {
            // The caller's arrays straight to the backend: the scale, γ5
            // and the parity are applied there (`SystemForm`).
            Solution::Mat | Solution::MatPc => {
                let form = system_form(p, &ip, solution, f, dagger)?;
                if flip {
                    // Through host copies: ε b in, ε x out (and ε on a guess).
                    // SAFETY: the caller's vectors of the system's size.
                    let mut b = read_scaled(unsafe { host_reals(h_b, n, double) }, 1.0);
                    negate_odd_block(&mut b, ip.dirac_order);
                    let mut x = if ip.use_initial_guess {
                        read_scaled(unsafe { host_reals(h_x, n, double) }, 1.0)
                    } else {
                        vec![0.0; n]
                    };
                    negate_odd_block(&mut x, ip.dirac_order);
                    let r = s.context.invert_form(
                        fields,
                        &ip,
                        crate::layout::HostReals::F64(&b),
                        crate::layout::HostRealsMut::F64(&mut x),
                        &form,
                    )?;
                    negate_odd_block(&mut x, ip.dirac_order);
                    // SAFETY: the caller's solution array of the system's size.
                    write_scaled(unsafe { host_reals_mut(h_x, n, double) }, &x, 1.0);
                    true_res_hq = r.true_residual_hq;
                    (r.iterations, r.true_residual, r.gflops * r.seconds)
                } else {
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
                    true_res_hq = r.true_residual_hq;
                    (r.iterations, r.true_residual, r.gflops * r.seconds)
                }
            }
            Solution::MatDagMat | Solution::MatPcDagMatPc => {
                if ip.tol_hq > 0.0 {
                    return Err(Error::Unsupported(
                        "param->residual_type with HEAVY_QUARK: the heavy-quark target is \
                         provided for the MAT and MATPC solutions"
                            .into(),
                    ));
                }
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
                if f == 1.0 && !dagger && !overlap && !flip {
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
                    if flip {
                        negate_odd_block(&mut b, ip.dirac_order);
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
                    if flip {
                        negate_odd_block(&mut x, ip.dirac_order);
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
        p.true_res_hq[0] = true_res_hq;
        p.gflops = gflop;
        p.secs = start.elapsed().as_secs_f64();
        if iterations >= ip.maxiter && !(true_res <= ip.tol || ip.tol == 0.0) {
            state::warn(&format!(
                "invertQuda: exceeded maxiter = {} (true residual {true_res:.3e})",
                ip.maxiter
            ));
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
    // SAFETY: forwarded from the caller.
    quda_collective("invertMultiShiftQuda", || unsafe {
        invert_multishift(hp_x, hp_b, param)
    })
}

/// The body of `invertMultiShiftQuda`, for the MILC interface too.
///
/// # Safety
/// As `invertMultiShiftQuda`.
pub(crate) unsafe fn invert_multishift(
    hp_x: *mut *mut c_void,
    hp_b: *mut c_void,
    param: *mut QudaInvertParam,
) -> Result<()> {
    not_null(param, "param")?;
    not_null(hp_x, "_hp_x")?;
    not_null(hp_b, "_hp_b")?;
    let start = Instant::now();
    // SAFETY: checked non-null.
    let p = unsafe { &mut *param };
    let _verbosity = state::CallVerbosity::push(p.verbosity);
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
    check_solve(p, solution, true)?;
    let count = p.num_offset;
    if !(1..=QUDA_MAX_MULTI_SHIFT).contains(&count) {
        return Err(Error::InvalidArgument(format!(
            "param->num_offset = {count}: 1 to {QUDA_MAX_MULTI_SHIFT}"
        )));
    }
    let count = count as usize;
    let f = solution.factor(convert::mass_normalization(p.mass_normalization)?, p.kappa);
    // A negative κ: |κ| and ε on full-lattice vectors (`negate_odd_block`).
    let flip = ip.kappa < 0.0 && !solution.one_parity();
    ip.kappa = ip.kappa.abs();
    ip.solve_type = if solution == Solution::MatDagMat {
        SolveType::NormOp
    } else {
        SolveType::NormOpPc
    };
    ip.solver = crate::api::SolverType::Cg;
    ip.use_initial_guess = false;
    // Per-shift L2 targets (QUDA's heavy-quark per-shift targets are
    // not provided: `true_res_hq_offset` stays 0).
    ip.tol = p.tol;
    ip.tol_hq = 0.0;
    let tols: Vec<f64> = p.tol_offset[..count]
        .iter()
        .map(|&t| tol_or(t, p.tol))
        .collect();
    let systems = Offsets::new(
        &p.offset[..count],
        &tols,
        "param->offset",
        "param->tol_offset",
    )?;
    let shifts: Vec<f64> = systems.distinct.iter().map(|o| o * f).collect();
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
        if flip {
            negate_odd_block(&mut b, ip.dirac_order);
        }
        let mut xs = vec![vec![0.0; n]; shifts.len()];
        let r = s.context.invert_multishift(
            fields,
            &ip,
            &shifts,
            Some(&systems.tols),
            crate::layout::HostReals::F64(&b),
            xs.iter_mut()
                .map(|x| crate::layout::HostRealsMut::F64(x))
                .collect(),
            false,
        )?;
        for x in xs.iter_mut() {
            if dagger {
                gamma5_host(x, ip.dirac_order, ip.gamma_basis);
            }
            if flip {
                negate_odd_block(x, ip.dirac_order);
            }
        }
        for (i, &k) in systems.system_of.iter().enumerate() {
            // SAFETY: the caller's solution arrays, checked non-null.
            write_scaled(unsafe { host_reals_mut(xs_ptr[i], n, double) }, &xs[k], 1.0);
            let t = r.shifts[k].true_residual;
            p.true_res_offset[i] = t;
            p.iter_res_offset[i] = t;
            p.true_res_hq_offset[i] = 0.0;
        }
        p.iter = r.iterations as c_int;
        p.gflops = r.gflops * r.seconds;
        p.secs = start.elapsed().as_secs_f64();
        Ok(())
    })
}

/// `invertMultiSrcQuda(_hp_x, _hp_b, param)`: `invertQuda` for each of the
/// `num_src` sources in turn (no split grid: every rank takes part in every solve);
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
    quda_collective("invertMultiSrcQuda", || {
        not_null(param, "param")?;
        not_null(hp_x, "_hp_x")?;
        not_null(hp_b, "_hp_b")?;
        let start = Instant::now();
        // SAFETY: checked non-null.
        let p = unsafe { &mut *param };
        let _verbosity = state::CallVerbosity::push(p.verbosity);
        let n = p.num_src;
        if !(1..=QUDA_MAX_MULTI_SRC).contains(&n) {
            return Err(Error::InvalidArgument(format!(
                "param->num_src = {n}: 1 to {QUDA_MAX_MULTI_SRC}"
            )));
        }
        if p.split_grid.iter().any(|&g| g > 1) {
            return Err(Error::Unsupported(format!(
                "param->split_grid = {:?}: latsol solves the sources on the whole grid of ranks in turn (no split grid)",
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
        // The sources in turn, each solution into a copy of the caller's
        // array (its guess): a failure at any source leaves every solution
        // and `param` as they were.
        let saved = *p;
        let bytes = system_bytes(p)?;
        // SAFETY: the caller's solution arrays of the system's size.
        let mut copies = unsafe { solution_copies(xs, bytes)? };
        let (mut iters, mut gflop) = (0, 0.0);
        let mut res = Vec::with_capacity(xs.len());
        for (copy, &b) in copies.iter_mut().zip(bs) {
            let x = copy.as_mut_ptr().cast::<c_void>();
            // SAFETY: a copy of the system's size; p is the caller's struct.
            if let Err(e) = unsafe { invert(x, b, p) } {
                *p = saved;
                return Err(e);
            }
            iters += p.iter;
            gflop += p.gflops;
            res.push((p.true_res[0], p.true_res_hq[0]));
        }
        for (copy, &x) in copies.iter().zip(xs) {
            // SAFETY: the caller's array of the system's bytes; the copy
            // holds at least as many; they do not overlap.
            unsafe {
                std::ptr::copy_nonoverlapping(copy.as_ptr().cast::<u8>(), x.cast::<u8>(), bytes)
            };
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

/// latsol's block solvers for `invertMultiSrcQuda` (QUDA 9521952 has no
/// field for them): `LATSOL_SOURCES_PER_BLOCK=L` solves the sources in
/// blocks of L (0: all in one block) by block BiCGstab with QR, or block
/// CG for the CG inverter (`InvertParams::sources_per_block`); unset or 1,
/// one after another as QUDA does. MILC's `qudaInvertMsrc` reads it too
/// (block CG on the staggered even-odd systems).
pub(crate) fn sources_per_block() -> Result<usize> {
    match std::env::var("LATSOL_SOURCES_PER_BLOCK") {
        Err(_) => Ok(1),
        Ok(v) => v.trim().parse().map_err(|_| {
            Error::InvalidArgument(format!(
                "LATSOL_SOURCES_PER_BLOCK = '{v}': a number of sources >= 0 (0: all in one block)"
            ))
        }),
    }
}

/// The bytes of one host vector of `p`'s system: the loaded lattice's
/// sites (one parity for the MATPC solutions), 24 reals a site (6
/// staggered), in `cpu_prec`.
fn system_bytes(p: &QudaInvertParam) -> Result<usize> {
    let double = convert::host_is_double(p.cpu_prec, "param->cpu_prec")?;
    let staggered = super::staggered::is_staggered(p);
    let volume = state::with(|s| {
        let loaded = s.gauge.as_ref().map(|g| g.gauge.lattice().volume());
        let links = s.staggered.as_ref().map(|h| h.dims.iter().product());
        match if staggered { links.or(loaded) } else { loaded } {
            Some(v) => Ok(v),
            None => Err(state::no_gauge("invertMultiSrcQuda")),
        }
    })?;
    let one_parity = matches!(
        p.solution_type,
        QUDA_MATPC_SOLUTION | QUDA_MATPCDAG_MATPC_SOLUTION
    );
    let reals = volume * if staggered { 6 } else { 24 } / if one_parity { 2 } else { 1 };
    Ok(reals * if double { 8 } else { 4 })
}

/// Copies of the caller's solution arrays of `bytes` bytes each (in
/// 8-byte words, so that they are aligned for either precision); out of
/// memory is an error, not an abort.
///
/// # Safety
/// Each of `xs` points to `bytes` readable bytes.
unsafe fn solution_copies(xs: &[*mut c_void], bytes: usize) -> Result<Vec<Vec<u64>>> {
    let words = bytes.div_ceil(8);
    xs.iter()
        .map(|&x| {
            let mut copy: Vec<u64> = Vec::new();
            copy.try_reserve_exact(words).map_err(|_| {
                Error::OutOfMemory(format!("{bytes} bytes for a copy of a solution"))
            })?;
            copy.resize(words, 0);
            // SAFETY: as the caller promises; a fresh buffer of as many bytes.
            unsafe {
                std::ptr::copy_nonoverlapping(x.cast::<u8>(), copy.as_mut_ptr().cast::<u8>(), bytes)
            };
            Ok(copy)
        })
        .collect()
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
    let ip = InvertParams {
        sources_per_block: sources_per_block()?,
        ..ip
    };
    let solution = Solution::of(p.solution_type)?;
    // A negative κ: the sources in turn (`invert` applies ε).
    if !matches!(solution, Solution::Mat | Solution::MatPc) || ip.kappa < 0.0 {
        return Ok(false);
    }
    check_solve(p, solution, false)?;
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
            p.true_res_hq[i] = r.true_residual_hq;
            if r.iterations >= ip.maxiter && r.true_residual > ip.tol {
                state::warn(&format!(
                    "invertMultiSrcQuda: source {i} exceeded maxiter = {} (true residual {:.3e})",
                    ip.maxiter, r.true_residual
                ));
            }
        }
        p.iter = results.iter().map(|r| r.iterations as c_int).sum();
        p.gflops = results.iter().map(|r| r.gflops * r.seconds).sum();
        Ok(true)
    })
}
