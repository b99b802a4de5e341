//! QUDA's MILC interface (`quda_milc_interface.h`): what MILC's
//! `generic_ks/*_gpu.c` and `generic_clover` call. Learned from QUDA's
//! lib/milc_interface.cpp and MILC's callers (docs/quda-compat.md, "MILC");
//! nothing copied. The contracts kept:
//! - the links (MILC order, even sites first) carry the staggered phases,
//!   the anti-periodic sign and the Naik coefficient: used as they are;
//!   they are read on every call (MILC's `num_iters = −1`, "the links
//!   changed", needs no cache to drop);
//! - the staggered solvers read only `evenodd`, `max_iter`,
//!   `mixed_precision` of `QudaInvertArgs_t` (MILC leaves the rest
//!   unset); precision codes 2 = double, else single; the outer precision
//!   is double unless `QUDA_MILC_OVERRIDE_DOUBLE_MULTISHIFT` is set (not
//!   "0"); `mixed_precision` 0/1/2 = sloppy as outer, single, half; a
//!   heavy-quark target makes the sloppy precision the outer one;
//!   `QUDA_MILC_HISQ_RECONSTRUCT` = 13 or 9 compresses the long links;
//! - `qudaInvert` solves `(4m² − D_pq D_qp) x_p = b_p` on parity
//!   `evenodd` of full-lattice arrays from the solution as initial guess;
//!   `qudaMultishiftInvert` solves `(−D_pq D_qp + offset_i) x_i = b_p`
//!   from zero; non-convergence is not an error (MILC compares the
//!   returned residuals with its targets).

use std::os::raw::{c_int, c_void};
use std::sync::Mutex;

use super::abi::*;
use super::convert;
use super::fields::{host_reals, host_reals_mut, not_null};
use super::{quda_call, state};
use crate::api::{PhaseFolding, StaggeredInvertParams, StaggeredParams, StaggeredSolve};
use crate::error::{Error, Result};
use crate::lattice::{Lattice, Parity};
use crate::layout::{GaugeOrder, HostGauge, HostReals, HostRealsMut};
use crate::long_links::LongReconstruct;
use crate::precision::{Precision, TBoundary};

/// The lattice of `qudaSetLayout` / `qudaInit` (MILC passes the global
/// extents; one process).
static LAYOUT: Mutex<Option<[usize; 4]>> = Mutex::new(None);

fn dims() -> Result<[usize; 4]> {
    LAYOUT.lock().ok().and_then(|l| *l).ok_or_else(|| {
        Error::InvalidArgument("no lattice layout: call qudaInit or qudaSetLayout first".into())
    })
}

/// Reads a `QudaLayout_t`.
///
/// # Safety
/// `latsize` and `machsize` are null or point to 4 ints.
unsafe fn set_layout(layout: &QudaLayout_t) -> Result<()> {
    not_null(layout.latsize, "layout.latsize")?;
    // SAFETY: 4 ints, as the caller promises.
    let lat = unsafe { std::slice::from_raw_parts(layout.latsize, 4) };
    if !layout.machsize.is_null() {
        // SAFETY: as above.
        let mach = unsafe { std::slice::from_raw_parts(layout.machsize, 4) };
        if mach.iter().any(|&m| m != 1) {
            return Err(Error::Unsupported(format!(
                "layout.machsize = {mach:?}: latsol's QUDA interface runs on one process"
            )));
        }
    }
    if lat.iter().any(|&x| x <= 0 || x % 2 != 0) {
        return Err(Error::InvalidArgument(format!(
            "layout.latsize = {lat:?}: positive even extents"
        )));
    }
    let d = [
        lat[0] as usize,
        lat[1] as usize,
        lat[2] as usize,
        lat[3] as usize,
    ];
    if let Ok(mut l) = LAYOUT.lock() {
        *l = Some(d);
    }
    Ok(())
}

/// `qudaSetMPICommHandle(mycomm)`: one process; nothing to keep.
#[no_mangle]
pub extern "C" fn qudaSetMPICommHandle(_mycomm: *mut c_void) {}

/// `qudaInit(input)`: the verbosity and the layout, then the context.
#[no_mangle]
pub extern "C" fn qudaInit(input: QudaInitArgs_t) {
    quda_call("qudaInit", || {
        state::set_verbosity(convert::verbosity(input.verbosity));
        // SAFETY: MILC's layout arrays.
        unsafe { set_layout(&input.layout)? };
        state::init()
    })
}

/// `qudaSetLayout(layout)`.
#[no_mangle]
pub extern "C" fn qudaSetLayout(layout: QudaLayout_t) {
    // SAFETY: MILC's layout arrays.
    quda_call("qudaSetLayout", || unsafe { set_layout(&layout) })
}

/// `qudaFinalize()`: `endQuda`.
#[no_mangle]
pub extern "C" fn qudaFinalize() {
    quda_call("qudaFinalize", state::end)
}

/// `qudaAllocatePinned(bytes)`: host memory (latsol's transfers stage
/// through their own buffers), NULL for 0 bytes or when none is left.
#[no_mangle]
pub extern "C" fn qudaAllocatePinned(bytes: usize) -> *mut c_void {
    if bytes == 0 {
        return std::ptr::null_mut();
    }
    // SAFETY: malloc of a positive size; freed by qudaFreePinned.
    let p = unsafe { libc::malloc(bytes) };
    if p.is_null() {
        quda_call("qudaAllocatePinned", || {
            Err(Error::OutOfMemory(format!("{bytes} bytes of host memory")))
        });
    }
    p
}

/// `qudaFreePinned(ptr)`.
///
/// # Safety
/// `ptr` is NULL or came from `qudaAllocatePinned`.
#[no_mangle]
pub unsafe extern "C" fn qudaFreePinned(ptr: *mut c_void) {
    // SAFETY: as the caller promises.
    unsafe { libc::free(ptr) }
}

/// The host arrays' precision from MILC's code (2 double, else single).
fn host_double(code: c_int) -> bool {
    code == 2
}

/// The solve's outer and sloppy precisions.
fn precisions(
    quda_precision: c_int,
    mixed: c_int,
    forced_double: bool,
    hq: bool,
) -> (Precision, Precision) {
    let override_double =
        std::env::var("QUDA_MILC_OVERRIDE_DOUBLE_MULTISHIFT").is_ok_and(|v| v != "0");
    let outer = if (forced_double && !override_double) || quda_precision == 2 {
        Precision::Double
    } else {
        Precision::Single
    };
    let sloppy = match mixed {
        _ if hq => outer,
        2 => Precision::Half,
        1 => Precision::Single,
        _ => outer,
    };
    (
        outer,
        if sloppy.epsilon() < outer.epsilon() {
            outer
        } else {
            sloppy
        },
    )
}

fn parity(evenodd: QudaParity) -> Result<Parity> {
    match evenodd {
        QUDA_EVEN_PARITY => Ok(Parity::Even),
        QUDA_ODD_PARITY => Ok(Parity::Odd),
        _ => Err(convert::refuse(
            "inv_args.evenodd",
            evenodd as i64,
            "EVEN or ODD parity",
        )),
    }
}

/// The parameters of MILC's staggered solves on parity `p`: of
/// `QudaInvertArgs_t` only `max_iter` (the precisions come from
/// `mixed_precision` already), δ = 0.1 as QUDA's MILC interface sets it (unused
/// without a sloppy precision).
fn solve_params(
    inv_args: &QudaInvertArgs_t,
    mass: f64,
    tol: f64,
    p: Parity,
    (hi, lo): (Precision, Precision),
    use_init_guess: bool,
) -> Result<StaggeredInvertParams> {
    if inv_args.max_iter <= 0 {
        return Err(Error::InvalidArgument(format!(
            "inv_args.max_iter = {}: must be positive",
            inv_args.max_iter
        )));
    }
    Ok(StaggeredInvertParams {
        mass,
        solve: StaggeredSolve::EvenOdd(p),
        tol,
        tol_hq: 0.0,
        maxiter: inv_args.max_iter as usize,
        precision: hi,
        precision_sloppy: lo,
        reliable_delta: 0.1,
        cg_stabilised: true,
        use_init_guess,
        progress_every: 0,
        measure_multishift_phase: false,
    })
}

/// The long links' storage from `QUDA_MILC_HISQ_RECONSTRUCT`.
fn long_reconstruct() -> LongReconstruct {
    match std::env::var("QUDA_MILC_HISQ_RECONSTRUCT").as_deref() {
        Ok("13") => LongReconstruct::Thirteen,
        Ok("9") => LongReconstruct::Nine,
        _ => LongReconstruct::Full18,
    }
}

/// Loads MILC's fat (and long, if not NULL) links into the context.
///
/// # Safety
/// The arrays hold V·4·18 reals of the host precision.
unsafe fn load_links(
    s: &state::State,
    fat: *const c_void,
    long: *const c_void,
    double: bool,
    precision: Precision,
    precision_sloppy: Precision,
) -> Result<(crate::api::StaggeredLinks, [usize; 4])> {
    not_null(fat, "milc_fatlink")?;
    let d = dims()?;
    let n = d.iter().product::<usize>() * 4 * 18;
    // SAFETY: as the caller promises.
    let fat_h = HostGauge::Milc(unsafe { host_reals(fat, n, double) });
    let long_h = if long.is_null() {
        None
    } else {
        // SAFETY: as the caller promises.
        Some(HostGauge::Milc(unsafe { host_reals(long, n, double) }))
    };
    let r = long_reconstruct();
    let params = StaggeredParams {
        dims: d,
        order: GaugeOrder::Milc,
        precision,
        precision_sloppy,
        phases: PhaseFolding::InLinks,
        long_reconstruct: r,
        long_reconstruct_sloppy: r,
    };
    Ok((
        s.context.load_staggered(&params, &fat_h, long_h.as_ref())?,
        d,
    ))
}

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
    quda_call("qudaInvert", || {
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

/// `qudaInvertMsrc(...)`: `qudaInvert` for `num_src` sources in turn;
/// the residuals of the last, the iterations of all.
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
    quda_call("qudaInvertMsrc", || {
        if num_src <= 0 {
            return Err(Error::InvalidArgument(format!(
                "num_src = {num_src}: must be positive"
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
    let hq = target_fermilab_residual != 0.0;
    if target_residual == 0.0 && !hq {
        return Err(Error::InvalidArgument(
            "target_residual = 0 and target_fermilab_residual = 0: no stopping criterion".into(),
        ));
    }
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
        let (mut iters, mut last) = (0, (0.0, 0.0));
        let mut answers = Vec::with_capacity(sources.len());
        for (&src, &sol) in sources.iter().zip(solutions) {
            // SAFETY: the caller's full-lattice vectors; parity p's half.
            let (b, mut x) = unsafe {
                (
                    owned(offset_reals(src, at, vh * 6, double)),
                    owned(offset_reals(sol, at, vh * 6, double)),
                )
            };
            let r = s.context.invert_staggered_parity(
                &links,
                &params,
                HostReals::F64(&b),
                HostRealsMut::F64(&mut x),
            )?;
            iters += r.iterations;
            last = (r.true_residual, r.true_residual_hq);
            if !r.converged {
                eprintln!(
                    "latsol (QUDA interface) WARNING: qudaInvert: residual {:.3e} above the target {:.1e} after {} iterations",
                    r.true_residual, target_residual, r.iterations
                );
            }
            answers.push(x);
        }
        for (&sol, x) in solutions.iter().zip(&answers) {
            // SAFETY: as above.
            copy_out(unsafe { offset_reals_mut(sol, at, vh * 6, double) }, x);
        }
        Ok((iters, last.0, last.1))
    })
}

/// The caller's numbers as f64, owned.
fn owned(h: HostReals) -> Vec<f64> {
    match h {
        HostReals::F64(v) => v.to_vec(),
        HostReals::F32(v) => v.iter().map(|&x| x as f64).collect(),
    }
}

/// `v` into the caller's array, in its precision.
fn copy_out(out: HostRealsMut, v: &[f64]) {
    match out {
        HostRealsMut::F64(o) => o.copy_from_slice(v),
        HostRealsMut::F32(o) => o.iter_mut().zip(v).for_each(|(o, &x)| *o = x as f32),
    }
}

/// `n` host reals starting `at` reals into `p`.
///
/// # Safety
/// `p` holds at least `at + n` reals of that precision.
unsafe fn offset_reals<'a>(p: *const c_void, at: usize, n: usize, double: bool) -> HostReals<'a> {
    let q = if double {
        // SAFETY: within the caller's array.
        unsafe { (p as *const f64).add(at) as *const c_void }
    } else {
        // SAFETY: as above.
        unsafe { (p as *const f32).add(at) as *const c_void }
    };
    // SAFETY: as the caller promises.
    unsafe { host_reals(q, n, double) }
}

/// `offset_reals`, writable.
///
/// # Safety
/// As `offset_reals`, writable and unaliased.
unsafe fn offset_reals_mut<'a>(
    p: *mut c_void,
    at: usize,
    n: usize,
    double: bool,
) -> HostRealsMut<'a> {
    let q = if double {
        // SAFETY: within the caller's array.
        unsafe { (p as *mut f64).add(at) as *mut c_void }
    } else {
        // SAFETY: as above.
        unsafe { (p as *mut f32).add(at) as *mut c_void }
    };
    // SAFETY: as the caller promises.
    unsafe { host_reals_mut(q, n, double) }
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
    quda_call("qudaMultishiftInvert", || {
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
        let tols: Vec<f64> = targets
            .iter()
            .map(|&t| if t > 0.0 { t } else { targets[0] })
            .collect();
        let tols = &tols[..];
        let hq = !target_fermilab_residual.is_null()
            // SAFETY: num_offsets entries.
            && unsafe { std::slice::from_raw_parts(target_fermilab_residual, n) }
                .iter()
                .any(|&t| t > 0.0);
        let p = parity(inv_args.evenodd)?;
        let (hi, lo) = precisions(precision, inv_args.mixed_precision, true, hq);
        let double = host_double(external_precision);
        // M̂ = 4m² − DD: m = 0 leaves −DD, the offsets carry the mass.
        let params = solve_params(&inv_args, f64::MIN_POSITIVE, tols[0], p, (hi, lo), false)?;
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
            let mut xs = vec![vec![0.0; vh * 6]; n];
            let r = s.context.invert_multishift_staggered(
                &links,
                &params,
                offsets,
                Some(tols),
                HostReals::F64(&b),
                xs.iter_mut().map(|x| HostRealsMut::F64(x)).collect(),
            )?;
            for (&sol, x) in sols.iter().zip(&xs) {
                // SAFETY: the caller's solution arrays; parity p's half.
                copy_out(unsafe { offset_reals_mut(sol, at, vh * 6, double) }, x);
            }
            for (i, sh) in r.shifts.iter().enumerate() {
                // SAFETY: num_offsets outputs each.
                unsafe {
                    *final_residual.add(i) = sh.true_residual;
                    *final_fermilab_residual.add(i) = 0.0;
                }
            }
            // SAFETY: checked non-null.
            unsafe { *num_iters = r.iterations as c_int };
            Ok(())
        })
    })
}

/// `qudaPlaquettePhased(precision, plaq, arg, phase_in)`: average, spatial
/// and temporal plaquette, each 1 for the unit field, of MILC's links (a
/// site struct array or a link array, `QudaMILCSiteArg_t`); with
/// `phase_in` the links carry MILC's staggered phases and anti-periodic
/// sign, taken off first.
///
/// # Safety
/// `plaq` points to 3 doubles; `arg` to a `QudaMILCSiteArg_t` whose arrays
/// hold the lattice's links in `precision` (2 double, else single).
#[no_mangle]
pub unsafe extern "C" fn qudaPlaquettePhased(
    precision: c_int,
    plaq: *mut f64,
    arg: *mut QudaMILCSiteArg_t,
    phase_in: c_int,
) {
    quda_call("qudaPlaquettePhased", || {
        not_null(plaq, "plaq")?;
        not_null(arg, "arg")?;
        // SAFETY: checked non-null.
        let a = unsafe { &*arg };
        let d = dims()?;
        let lat = std::sync::Arc::new(Lattice::new(d)?);
        // Single precision is code 1 here (QUDA's site-argument functions).
        let double = precision != 1;
        // SAFETY: the caller's site structs or links.
        let links = unsafe { site_links(a, lat.volume(), double)? };
        let mut field =
            crate::layout::gauge::import(&lat, &HostGauge::Milc(HostReals::F64(&links)))?;
        if phase_in != 0 {
            crate::api::staggered_fold(&mut field, 1, TBoundary::AntiPeriodic, 1.0);
        }
        let v = field.plaquette();
        // SAFETY: 3 doubles.
        unsafe { std::slice::from_raw_parts_mut(plaq, 3) }.copy_from_slice(&v);
        Ok(())
    })
}

/// The links of `arg` in MILC order (V·4·18 reals, double): from the site
/// structs (`site` non-NULL: 4 links at `link_offset` bytes into each
/// `size`-byte struct) or the link array.
///
/// # Safety
/// As `qudaPlaquettePhased`.
unsafe fn site_links(a: &QudaMILCSiteArg_t, volume: usize, double: bool) -> Result<Vec<f64>> {
    let per_site = 4 * 18;
    let mut out = crate::alloc::filled(volume * per_site, 0.0f64, "MILC's links")?;
    let real = if double { 8 } else { 4 };
    for (i, site) in out.chunks_mut(per_site).enumerate() {
        let base: *const u8 = if !a.site.is_null() {
            // SAFETY: site i's struct, `size` bytes each.
            unsafe { (a.site as *const u8).add(i * a.size + a.link_offset) }
        } else {
            not_null(a.link, "arg->link")?;
            // SAFETY: the link array.
            unsafe { (a.link as *const u8).add(i * per_site * real) }
        };
        for (k, v) in site.iter_mut().enumerate() {
            // SAFETY: within site i's links; unaligned reads (site structs).
            *v = unsafe {
                if double {
                    std::ptr::read_unaligned(base.add(8 * k) as *const f64)
                } else {
                    std::ptr::read_unaligned(base.add(4 * k) as *const f32) as f64
                }
            };
        }
    }
    Ok(out)
}

/// `qudaCloverInvert(...)`: `M x = b`, `M = A − κ D`, on the full lattice
/// in the DeGrand–Rossi basis (MILC applies its own basis change), links
/// in MILC order with the boundary phases already in them, the clover
/// field in QUDA's packed order (its inverse is recomputed, as QUDA
/// does); even-odd BiCGstab, or CG on the normal equations when
/// `inv_args.solver_type` is CG; from zero. Gauge and clover are loaded
/// and freed within the call.
///
/// # Safety
/// MILC's arrays: links V·4·18, clover V·72, vectors V·24 reals of
/// `external_precision`; the outputs writable.
#[no_mangle]
pub unsafe extern "C" fn qudaCloverInvert(
    external_precision: c_int,
    quda_precision: c_int,
    kappa: f64,
    clover_coeff: f64,
    inv_args: QudaInvertArgs_t,
    target_residual: f64,
    _target_fermilab_residual: f64,
    milc_link: *const c_void,
    milc_clover: *mut c_void,
    _milc_clover_inv: *mut c_void,
    source: *mut c_void,
    solution: *mut c_void,
    final_residual: *mut f64,
    final_fermilab_residual: *mut f64,
    num_iters: *mut c_int,
) {
    quda_call("qudaCloverInvert", || {
        not_null(milc_clover, "milc_clover")?;
        for (p, name) in [
            (final_residual, "final_residual"),
            (final_fermilab_residual, "final_fermilab_residual"),
        ] {
            not_null(p, name)?;
        }
        not_null(num_iters, "num_iters")?;
        let d = dims()?;
        let host = if host_double(external_precision) {
            QUDA_DOUBLE_PRECISION
        } else {
            QUDA_SINGLE_PRECISION
        };
        let device = if quda_precision == 2 {
            QUDA_DOUBLE_PRECISION
        } else {
            QUDA_SINGLE_PRECISION
        };
        let sloppy = match inv_args.mixed_precision {
            2 => QUDA_HALF_PRECISION,
            1 => QUDA_SINGLE_PRECISION,
            _ => device,
        };
        let sloppy = if sloppy > device { device } else { sloppy };
        let mut gp = super::init::newQudaGaugeParam();
        for (x, &n) in gp.X.iter_mut().zip(&d) {
            *x = n as c_int;
        }
        gp.anisotropy = 1.0;
        gp.r#type = QUDA_WILSON_LINKS;
        gp.gauge_order = QUDA_MILC_GAUGE_ORDER;
        // The boundary phases are in MILC's links.
        gp.t_boundary = QUDA_PERIODIC_T;
        gp.cpu_prec = host;
        gp.cuda_prec = device;
        gp.reconstruct = QUDA_RECONSTRUCT_NO;
        gp.cuda_prec_sloppy = sloppy;
        gp.reconstruct_sloppy = QUDA_RECONSTRUCT_NO;
        gp.gauge_fix = QUDA_GAUGE_FIXED_NO;
        // SAFETY: MILC's links.
        unsafe { super::fields::load_gauge(milc_link as *mut c_void, &mut gp)? };
        let mut ip = super::init::newQudaInvertParam();
        ip.dslash_type = QUDA_CLOVER_WILSON_DSLASH;
        ip.kappa = kappa;
        ip.clover_coeff = clover_coeff;
        let cg = inv_args.solver_type == QUDA_CG_INVERTER;
        ip.inv_type = if cg {
            QUDA_CG_INVERTER
        } else {
            QUDA_BICGSTAB_INVERTER
        };
        ip.solution_type = QUDA_MAT_SOLUTION;
        ip.solve_type = if cg {
            QUDA_NORMOP_PC_SOLVE
        } else {
            QUDA_DIRECT_PC_SOLVE
        };
        ip.matpc_type = QUDA_MATPC_EVEN_EVEN;
        ip.dagger = QUDA_DAG_NO;
        ip.mass_normalization = QUDA_KAPPA_NORMALIZATION;
        ip.cpu_prec = host;
        ip.cuda_prec = device;
        ip.cuda_prec_sloppy = sloppy;
        ip.dirac_order = QUDA_DIRAC_ORDER;
        ip.gamma_basis = QUDA_DEGRAND_ROSSI_GAMMA_BASIS;
        ip.clover_cpu_prec = host;
        ip.clover_cuda_prec = device;
        ip.clover_cuda_prec_sloppy = sloppy;
        ip.clover_order = QUDA_PACKED_CLOVER_ORDER;
        ip.tol = target_residual;
        ip.maxiter = inv_args.max_iter;
        ip.reliable_delta = 0.1;
        ip.use_init_guess = QUDA_USE_INIT_GUESS_NO;
        let outcome = (|| {
            // SAFETY: MILC's clover field and vectors.
            unsafe {
                super::fields::load_clover(milc_clover, &mut ip)?;
                super::invert::invert(solution, source, &mut ip)
            }
        })();
        // Loaded and freed within the call, also on a failure.
        state::with(|s| {
            s.clover = None;
            s.gauge = None;
            Ok(())
        })?;
        outcome?;
        // SAFETY: checked non-null.
        unsafe {
            *final_residual = ip.true_res[0];
            *final_fermilab_residual = 0.0;
            *num_iters = ip.iter;
        }
        Ok(())
    })
}

/// `qudaDslash(...)`: the staggered hopping term into parity
/// `inv_args.evenodd` from the other parity of `source`,
/// `solution_p = D_pq source_q` (fat and, if not NULL, long links as
/// MILC passes them; D of docs/conventions.md, MILC's `dslash_fn`). Only
/// that parity's half of `solution` is written (`num_iters` is not).
///
/// # Safety
/// As `qudaInvert`.
#[no_mangle]
pub unsafe extern "C" fn qudaDslash(
    external_precision: c_int,
    quda_precision: c_int,
    inv_args: QudaInvertArgs_t,
    milc_fatlink: *const c_void,
    milc_longlink: *const c_void,
    source: *mut c_void,
    solution: *mut c_void,
    _num_iters: *mut c_int,
) {
    quda_call("qudaDslash", || {
        not_null(source, "source")?;
        not_null(solution, "solution")?;
        let p = parity(inv_args.evenodd)?;
        let precision = if quda_precision == 2 {
            Precision::Double
        } else {
            Precision::Single
        };
        let double = host_double(external_precision);
        state::with(|s| {
            // SAFETY: the caller's links.
            let (links, d) = unsafe {
                load_links(s, milc_fatlink, milc_longlink, double, precision, precision)?
            };
            let vh = d.iter().product::<usize>() / 2;
            let q = p.other();
            // The other parity of the source, zero elsewhere.
            let mut inp = vec![0.0; 2 * vh * 6];
            // SAFETY: the caller's full-lattice source.
            match unsafe { offset_reals(source, q.index() * vh * 6, vh * 6, double) } {
                HostReals::F64(v) => inp[q.index() * vh * 6..][..vh * 6].copy_from_slice(v),
                HostReals::F32(v) => inp[q.index() * vh * 6..][..vh * 6]
                    .iter_mut()
                    .zip(v)
                    .for_each(|(o, &x)| *o = x as f64),
            }
            let mut out = vec![0.0; 2 * vh * 6];
            s.context.apply_staggered(
                &links,
                0.0,
                crate::api::StaggeredOp::Dslash,
                HostReals::F64(&inp),
                HostRealsMut::F64(&mut out),
            )?;
            let half = &out[p.index() * vh * 6..][..vh * 6];
            // SAFETY: the caller's full-lattice solution; parity p's half.
            match unsafe { offset_reals_mut(solution, p.index() * vh * 6, vh * 6, double) } {
                HostRealsMut::F64(o) => o.copy_from_slice(half),
                HostRealsMut::F32(o) => o.iter_mut().zip(half).for_each(|(o, &x)| *o = x as f32),
            }
            Ok(())
        })
    })
}

/// `qudaPolyakovLoopPhased(precision, ploop, dir, arg, phase_in)`: the
/// Polyakov loop in the time direction (`dir` 3 only, as QUDA),
/// `(1/V₃) Σ_x⃗ tr Π_t U_t(x⃗, t)` (not divided by 3), real and imaginary
/// parts, **negated** as QUDA's is: MILC's links carry the anti-periodic
/// sign on the last slice, which the negation cancels (the staggered
/// phases of T links are 1, so `phase_in` changes nothing here).
///
/// # Safety
/// `ploop` points to 2 doubles; `arg` as for `qudaPlaquettePhased`.
#[no_mangle]
pub unsafe extern "C" fn qudaPolyakovLoopPhased(
    precision: c_int,
    ploop: *mut f64,
    dir: c_int,
    arg: *mut QudaMILCSiteArg_t,
    _phase_in: c_int,
) {
    quda_call("qudaPolyakovLoopPhased", || {
        not_null(ploop, "ploop")?;
        not_null(arg, "arg")?;
        if dir != 3 {
            return Err(Error::InvalidArgument(format!(
                "dir = {dir}: the Polyakov loop is taken in the time direction (3)"
            )));
        }
        // SAFETY: checked non-null.
        let a = unsafe { &*arg };
        let d = dims()?;
        let lat = std::sync::Arc::new(Lattice::new(d)?);
        // SAFETY: the caller's site structs or links.
        let links = unsafe { site_links(a, lat.volume(), precision != 1)? };
        let field = crate::layout::gauge::import(&lat, &HostGauge::Milc(HostReals::F64(&links)))?;
        let mut sum = num_complex::Complex64::new(0.0, 0.0);
        for z in 0..d[2] {
            for y in 0..d[1] {
                for x in 0..d[0] {
                    let mut p = *field.link_at([x, y, z, 0], 3);
                    for t in 1..d[3] {
                        p = p.mul(field.link_at([x, y, z, t], 3));
                    }
                    sum += p.trace();
                }
            }
        }
        let v3 = (d[0] * d[1] * d[2]) as f64;
        // SAFETY: 2 doubles.
        unsafe {
            *ploop = -sum.re / v3;
            *ploop.add(1) = -sum.im / v3;
        }
        Ok(())
    })
}
