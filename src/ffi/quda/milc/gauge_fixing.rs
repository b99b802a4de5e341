//! MILC's gauge fixing through QUDA (`WANT_GAUGEFIX_OVR_GPU`, MILC's
//! generic/gaugefix2.c): `qudaGaugeFixingOVR` on MILC's links (site
//! structs or a link array, this rank's sites, precision code 1 single,
//! else double), fixed in place (`Context::fix_gauge_ovr`). As QUDA's
//! (lib/milc_interface.cpp, `computeGaugeFixingOVRQuda`): `gauge_dir` 3
//! Coulomb, 4 Landau (others refused); the links without the staggered
//! phases (MILC's `rephase(OFF)` before the call); `stopWtheta` 0 stops on the change of
//! the functional (MILC's criterion), else on θ; a tolerance of 0 runs
//! `Nsteps` steps; `reunit_interval` 0 never projects. Nothing is written
//! where the call fails.

use std::os::raw::{c_int, c_uint, c_void};

use super::gauge::{milc_field, write_site_links};
use super::layout::dims;
use crate::api::GaugeFixing;
use crate::error::{Error, Result};
use crate::ffi::quda::abi::*;
use crate::ffi::quda::errors::quda_collective;
use crate::ffi::quda::host::not_null;
use crate::ffi::quda::state;
use crate::gauge_fixing::{FftParams, OvrParams, Trajectory};
use crate::layout::{GaugeOrder, HostRealsMut};

/// The fixed directions of QUDA's `gauge_dir`.
fn directions(gauge_dir: c_uint) -> Result<usize> {
    match gauge_dir {
        3 | 4 => Ok(gauge_dir as usize),
        _ => Err(Error::InvalidArgument(format!(
            "gauge_dir = {gauge_dir}: 3 (Coulomb) or 4 (Landau)"
        ))),
    }
}

/// `links` (this rank's, MILC order, `double` or single) fixed by
/// `method` and written back.
///
/// # Safety
/// As `write_site_links`.
unsafe fn fix_in_place(a: &QudaMILCSiteArg_t, double: bool, method: GaugeFixing) -> Result<()> {
    let d = dims()?;
    // SAFETY: the caller's site structs or links.
    let field = unsafe { milc_field(a, d, double) };
    let reals = state::with(|s| {
        let mut field = s.context.agree(field)?;
        s.context.fix_gauge(&mut field, &method)?;
        let mut out = vec![0.0; field.links().len() * 18];
        crate::layout::gauge::export(&field, GaugeOrder::Milc, &mut [HostRealsMut::F64(&mut out)])?;
        Ok(out)
    })?;
    // SAFETY: as the caller promises.
    unsafe { write_site_links(a, &reals, double) }
}

/// The trajectory `LATSOL_GAUGE_FIX_TRAJECTORY` names: `quda` (or unset)
/// QUDA's, `milc` MILC's own CPU code's (`gauge_fixing::Trajectory`: the
/// same gauge condition, MILC's links, for continuity with runs that fixed
/// the gauge with MILC's CPU code; docs/milc-gauge-fixing.md).
fn trajectory() -> Result<Trajectory> {
    match std::env::var("LATSOL_GAUGE_FIX_TRAJECTORY").as_deref() {
        Err(_) | Ok("quda") => Ok(Trajectory::Quda),
        Ok("milc") => Ok(Trajectory::Milc),
        Ok(other) => Err(Error::InvalidArgument(format!(
            "LATSOL_GAUGE_FIX_TRAJECTORY = {other:?}: quda or milc"
        ))),
    }
}

/// A count of QUDA's `int`, not negative.
fn count(v: c_int, name: &str) -> Result<usize> {
    usize::try_from(v).map_err(|_| Error::InvalidArgument(format!("{name} = {v}: not negative")))
}

/// `qudaGaugeFixingOVR(precision, gauge_dir, Nsteps, verbose_interval,
/// relax_boost, tolerance, reunit_interval, stopWtheta, arg)`.
///
/// # Safety
/// `arg` points to a `QudaMILCSiteArg_t` whose site structs or link array
/// hold this rank's links in `precision`, writable.
#[no_mangle]
#[allow(non_snake_case)]
pub unsafe extern "C" fn qudaGaugeFixingOVR(
    precision: c_int,
    gauge_dir: c_uint,
    Nsteps: c_int,
    verbose_interval: c_int,
    relax_boost: f64,
    tolerance: f64,
    reunit_interval: c_uint,
    stopWtheta: c_uint,
    arg: *mut QudaMILCSiteArg_t,
) {
    quda_collective("qudaGaugeFixingOVR", || {
        not_null(arg, "arg")?;
        // SAFETY: checked non-null.
        let a = unsafe { &*arg };
        let params = OvrParams {
            dirs: directions(gauge_dir)?,
            max_steps: count(Nsteps, "Nsteps")?,
            verbose_interval: usize::try_from(verbose_interval).unwrap_or(0),
            relax_boost,
            tolerance,
            reunit_interval: reunit_interval as usize,
            stop_with_theta: stopWtheta != 0,
            trajectory: trajectory()?,
        };
        // SAFETY: forwarded from the caller.
        unsafe { fix_in_place(a, precision != 1, GaugeFixing::Overrelaxation(params)) }
    })
}

/// `qudaGaugeFixingFFT(precision, gauge_dir, Nsteps, verbose_interval,
/// alpha, autotune, tolerance, stopWtheta, milc_sitelink)`: Fourier-
/// accelerated steepest descent on a link array (one rank, as QUDA's).
///
/// # Safety
/// `milc_sitelink` holds this rank's links in MILC order and `precision`,
/// writable.
#[no_mangle]
#[allow(non_snake_case)]
pub unsafe extern "C" fn qudaGaugeFixingFFT(
    precision: c_int,
    gauge_dir: c_uint,
    Nsteps: c_int,
    verbose_interval: c_int,
    alpha: f64,
    autotune: c_uint,
    tolerance: f64,
    stopWtheta: c_uint,
    milc_sitelink: *mut c_void,
) {
    quda_collective("qudaGaugeFixingFFT", || {
        not_null(milc_sitelink, "milc_sitelink")?;
        let params = FftParams {
            dirs: directions(gauge_dir)?,
            max_steps: count(Nsteps, "Nsteps")?,
            verbose_interval: usize::try_from(verbose_interval).unwrap_or(0),
            alpha,
            autotune: autotune != 0,
            tolerance,
            stop_with_theta: stopWtheta != 0,
        };
        let a = QudaMILCSiteArg_t {
            site: std::ptr::null_mut(),
            link: milc_sitelink,
            link_offset: 0,
            mom: std::ptr::null_mut(),
            mom_offset: 0,
            size: 0,
        };
        // SAFETY: forwarded from the caller.
        unsafe { fix_in_place(&a, precision != 1, GaugeFixing::Fourier(params)) }
    })
}
