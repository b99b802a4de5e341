//! HISQ links through QUDA's MILC interface (MILC's `WANT_FL_GPU`:
//! generic_ks/fermion_links_hisq_load_quda.c): `qudaLoadUnitarizedLink`
//! (the first level, fat7 of the thin links, and its U(3) projection) and
//! `qudaLoadKSLink` (the second level's fat and long links), both
//! `computeKSLinkQuda` on MILC's arrays (MILC order, this rank's sites,
//! precision code 1 single, else double; `fatlink_args` unused, as in
//! QUDA); and `qudaHisqParamsInit`. As QUDA's (lib/milc_interface.cpp),
//! each drops the resident gauge fields (`freeGaugeQuda`): a later solve
//! loads its links again.

use std::os::raw::{c_int, c_void};

use super::layout::dims;
use crate::error::{Error, Result};
use crate::ffi::quda::abi::*;
use crate::ffi::quda::errors::quda_collective;
use crate::ffi::quda::fat_links::{compute_ks_links, KsLinkArrays};
use crate::ffi::quda::state;
use crate::layout::GaugeOrder;

/// The links of MILC's arrays computed and written; the resident fields
/// dropped.
///
/// # Safety
/// As `compute_ks_links`, with this rank's MILC-order arrays.
unsafe fn load(
    precision: c_int,
    coeff: *const f64,
    inlink: *mut c_void,
    fat: *mut c_void,
    long: *mut c_void,
    ulink: *mut c_void,
) -> Result<()> {
    let arrays = KsLinkArrays {
        fat,
        long,
        ulink,
        inlink,
        coeff,
        dims: dims()?,
        order: GaugeOrder::Milc,
        double: precision != 1,
    };
    // SAFETY: forwarded from the caller.
    unsafe { compute_ks_links(&arrays)? };
    state::with(|s| {
        s.gauge = None;
        s.staggered = None;
        Ok(())
    })
}

/// `qudaLoadKSLink(precision, fatlink_args, act_path_coeff, inlink,
/// fatlink, longlink)`: the fat links of `inlink` with the six path
/// coefficients, and the long links where `longlink` is not NULL.
///
/// # Safety
/// `act_path_coeff` holds 6 doubles; the link arrays hold this rank's
/// links in MILC order and `precision`.
#[no_mangle]
pub unsafe extern "C" fn qudaLoadKSLink(
    precision: c_int,
    _fatlink_args: QudaFatLinkArgs_t,
    act_path_coeff: *const f64,
    inlink: *mut c_void,
    fatlink: *mut c_void,
    longlink: *mut c_void,
) {
    quda_collective("qudaLoadKSLink", || {
        // SAFETY: forwarded from the caller.
        unsafe {
            load(
                precision,
                act_path_coeff,
                inlink,
                fatlink,
                longlink,
                std::ptr::null_mut(),
            )
        }
    })
}

/// `qudaLoadUnitarizedLink(precision, fatlink_args, path_coeff, inlink,
/// fatlink, ulink)`: the fat links of `inlink` and their U(3) projection.
///
/// # Safety
/// As `qudaLoadKSLink`, `ulink` a link array too.
#[no_mangle]
pub unsafe extern "C" fn qudaLoadUnitarizedLink(
    precision: c_int,
    _fatlink_args: QudaFatLinkArgs_t,
    path_coeff: *const f64,
    inlink: *mut c_void,
    fatlink: *mut c_void,
    ulink: *mut c_void,
) {
    quda_collective("qudaLoadUnitarizedLink", || {
        crate::ffi::quda::host::not_null(ulink, "ulink")?;
        // SAFETY: forwarded from the caller.
        unsafe {
            load(
                precision,
                path_coeff,
                inlink,
                fatlink,
                std::ptr::null_mut(),
                ulink,
            )
        }
    })
}

/// `qudaHisqParamsInit(hisq_params)`: QUDA sets the reunitarisation
/// constants of its HISQ force here (once; later calls are ignored) and
/// its fattening does not read them (it sets its own: `UnitarizeParams::
/// default`). latsol has no HISQ force (`qudaHisqForce` stops naming
/// itself), so the call checks its values and keeps nothing.
#[no_mangle]
pub extern "C" fn qudaHisqParamsInit(hisq_params: QudaHisqParams_t) {
    quda_collective("qudaHisqParamsInit", || {
        let p = hisq_params;
        for (name, v) in [
            ("reunit_svd_abs_error", p.reunit_svd_abs_error),
            ("reunit_svd_rel_error", p.reunit_svd_rel_error),
            ("force_filter", p.force_filter),
        ] {
            if !v.is_finite() || v < 0.0 {
                return Err(Error::InvalidArgument(format!(
                    "hisq_params.{name} = {v}: a non-negative number"
                )));
            }
        }
        Ok(())
    })
}
