//! What MILC's staggered calls share: the solve's precisions and
//! parameters from MILC's arguments, MILC's links loaded into the context,
//! and parity halves of MILC's full-lattice host vectors.

use std::os::raw::{c_int, c_void};

use super::layout::dims;
use crate::api::{PhaseFolding, StaggeredInvertParams, StaggeredParams, StaggeredSolve};
use crate::error::{Error, Result};
use crate::ffi::quda::abi::*;
use crate::ffi::quda::host::{host_reals, host_reals_mut, not_null};
use crate::ffi::quda::{convert, state};
use crate::lattice::Parity;
use crate::layout::{GaugeOrder, HostGauge, HostReals, HostRealsMut};
use crate::long_links::LongReconstruct;
use crate::precision::Precision;

/// The solve's outer and sloppy precisions.
pub(crate) fn precisions(
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

pub(crate) fn parity(evenodd: QudaParity) -> Result<Parity> {
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
pub(crate) fn solve_params(
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
        progress_every: crate::ffi::quda::state::progress_every(),
        measure_multishift_phase: false,
        precision_refinement: None,
        multishift_refinement: Default::default(),
        // MILC's QUDA interface solves with CG (QUDA's milc_interface.cpp).
        solver: crate::api::SolverType::Cg,
        bicgstab_l: StaggeredInvertParams::default().bicgstab_l,
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
pub(crate) unsafe fn load_links(
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
        ..Default::default()
    };
    Ok((
        s.context.load_staggered(&params, &fat_h, long_h.as_ref())?,
        d,
    ))
}

/// The caller's numbers as f64, owned.
pub(crate) fn owned(h: HostReals) -> Vec<f64> {
    match h {
        HostReals::F64(v) => v.to_vec(),
        HostReals::F32(v) => v.iter().map(|&x| x as f64).collect(),
    }
}

/// `v` into the caller's array, in its precision.
pub(crate) fn copy_out(out: HostRealsMut, v: &[f64]) {
    match out {
        HostRealsMut::F64(o) => o.copy_from_slice(v),
        HostRealsMut::F32(o) => o.iter_mut().zip(v).for_each(|(o, &x)| *o = x as f32),
    }
}

/// `n` host reals starting `at` reals into `p`.
///
/// # Safety
/// `p` holds at least `at + n` reals of that precision.
pub(crate) unsafe fn offset_reals<'a>(
    p: *const c_void,
    at: usize,
    n: usize,
    double: bool,
) -> HostReals<'a> {
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
pub(crate) unsafe fn offset_reals_mut<'a>(
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
