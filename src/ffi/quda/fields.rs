//! `loadGaugeQuda`, `freeGaugeQuda`, `plaqQuda`, `loadCloverQuda`,
//! `freeCloverQuda`: QUDA's resident fields on latsol.
//!
//! QUDA's boundary contract (lib/interface_quda.cpp, include/
//! gauge_field_order.h; docs/quda-compat.md): the caller's links already
//! carry the time boundary sign that `t_boundary` names, QUDA uses
//! uncompressed links as given and rebuilds the third row of compressed
//! ones with that sign. latsol applies the sign itself to SU(3) links, so
//! the sign is taken off the T links of the last time slice here and
//! `t_boundary` handed on: the operator is QUDA's for every reconstruct
//! type.

use std::os::raw::c_void;

use super::abi::*;
use super::convert;
use super::errors::{quda_call, quda_collective};
use super::host::{host_gauge, host_reals, not_null};
use super::state;
use crate::api::{CloverParams, CloverSource};
use crate::error::{Error, Result};
use crate::lattice::Lattice;

/// `loadGaugeQuda(h_gauge, param)`: the Wilson links (`type` WILSON_LINKS)
/// in QDP (`h_gauge` an array of four pointers), MILC or CPS_WILSON order.
///
/// # Safety
/// `param` points to a `QudaGaugeParam`; `h_gauge` to the links in its order.
#[no_mangle]
pub unsafe extern "C" fn loadGaugeQuda(h_gauge: *mut c_void, param: *mut QudaGaugeParam) {
    // SAFETY: forwarded from the caller.
    quda_collective("loadGaugeQuda", || unsafe { load_gauge(h_gauge, param) })
}

/// The body of `loadGaugeQuda`, for the MILC interface too.
///
/// # Safety
/// As `loadGaugeQuda`.
pub(crate) unsafe fn load_gauge(h_gauge: *mut c_void, param: *mut QudaGaugeParam) -> Result<()> {
    not_null(param, "param")?;
    not_null(h_gauge, "h_gauge")?;
    // SAFETY: checked non-null; the caller passes a QudaGaugeParam.
    let p = unsafe { &*param };
    convert::check_struct_size(
        "param",
        p.struct_size,
        std::mem::size_of::<QudaGaugeParam>(),
    )?;
    if matches!(p.r#type, QUDA_ASQTAD_FAT_LINKS | QUDA_ASQTAD_LONG_LINKS) {
        // SAFETY: forwarded.
        return unsafe { super::staggered::load_links(h_gauge, p) };
    }
    if p.r#type != QUDA_WILSON_LINKS {
        return Err(convert::refuse(
            "param->type",
            p.r#type as i64,
            "loadGaugeQuda takes WILSON_LINKS, ASQTAD_FAT_LINKS and ASQTAD_LONG_LINKS",
        ));
    }
    let gp = convert::gauge_params(p)?;
    let double = convert::host_is_double(p.cpu_prec, "param->cpu_prec")?;
    let lat = Lattice::new(gp.dims)?;
    let n = lat.volume() * 18;
    // SAFETY: the caller's links in its order.
    let host = unsafe { host_gauge(h_gauge, gp.order, n, double)? };
    state::with(|s| {
        // A new gauge field replaces the old one. The clover field stays,
        // as in QUDA (its loadGaugeQuda leaves the resident clover alone:
        // PyQUDA computes the clover term from periodic links, then loads
        // the anti-periodic ones for the solve), unless it cannot pair
        // with the new lattice.
        s.gauge = None;
        if s.clover
            .as_ref()
            .is_some_and(|c| c.lattice().dims() != gp.dims)
        {
            s.clover = None;
        }
        // The caller's array as it is (the boundary sign in its last time
        // slice is taken out as the links are read: `gp`).
        // The copy first: a failure after the load's agreement would be
        // this rank's alone.
        let links = state::HostLinks::copy(&host)?;
        let gauge = s.context.load_gauge(&gp, &host)?;
        s.gauge = Some(state::LoadedGauge { gauge, links });
        // Naive staggered links made from the old field are stale.
        if let Some(h) = s.staggered.as_mut() {
            h.stored = None;
        }
        Ok(())
    })
}

/// `freeGaugeQuda()`: frees the gauge field (the clover field stays until
/// `freeCloverQuda`, as in QUDA).
#[no_mangle]
pub extern "C" fn freeGaugeQuda() {
    quda_call("freeGaugeQuda", || {
        state::with(|s| {
            // QUDA frees the Wilson, fat and long links here (and keeps
            // the clover field): a staggered solve after it needs them
            // loaded again.
            s.gauge = None;
            s.staggered = None;
            Ok(())
        })
    })
}

/// `freeGaugeTwoLinkQuda()`: frees the two-link field of QUDA's Gaussian
/// smearing (`computeTwoLinkQuda`). latsol makes none (that function is
/// not provided: a call to it stops), so there is nothing to free; MILC
/// calls this at every new gauge field (`qudaFreeTwoLink`).
#[no_mangle]
pub extern "C" fn freeGaugeTwoLinkQuda() {
    quda_call("freeGaugeTwoLinkQuda", || Ok(()))
}

/// `plaqQuda(plaq)`: average, spatial and temporal plaquette of the loaded
/// links, each 1 for the unit field (the boundary sign taken off).
///
/// # Safety
/// `plaq` points to 3 doubles.
#[no_mangle]
pub unsafe extern "C" fn plaqQuda(plaq: *mut f64) {
    quda_call("plaqQuda", || {
        not_null(plaq, "plaq")?;
        let v = state::with(|s| {
            let g = s
                .gauge
                .as_ref()
                .ok_or_else(|| state::no_gauge("plaqQuda"))?;
            Ok(g.gauge.plaquette())
        })?;
        // SAFETY: the caller passes 3 doubles.
        unsafe { std::slice::from_raw_parts_mut(plaq, 3) }.copy_from_slice(&v);
        Ok(())
    })
}

/// `loadCloverQuda(h_clover, h_clovinv, inv_param)`: the clover field of
/// the loaded links, from the host in QUDA's packed order (72 reals a
/// site, DeGrand–Rossi chiral blocks, `clover_cpu_prec`) or computed
/// (`compute_clover`, or `h_clover` NULL) with coefficient `clover_coeff`
/// (κ c_SW; `clover_csw` κ when it is 0). Its inverse is always computed
/// (QUDA's default build ignores `h_clovinv` too).
///
/// # Safety
/// `inv_param` points to a `QudaInvertParam`; `h_clover` is NULL or holds
/// V·72 reals.
#[no_mangle]
pub unsafe extern "C" fn loadCloverQuda(
    h_clover: *mut c_void,
    _h_clovinv: *mut c_void,
    inv_param: *mut QudaInvertParam,
) {
    // SAFETY: forwarded from the caller.
    quda_collective("loadCloverQuda", || unsafe {
        load_clover(h_clover, inv_param)
    })
}

/// The body of `loadCloverQuda`, for the MILC interface too.
///
/// # Safety
/// As `loadCloverQuda`.
pub(crate) unsafe fn load_clover(
    h_clover: *mut c_void,
    inv_param: *mut QudaInvertParam,
) -> Result<()> {
    not_null(inv_param, "inv_param")?;
    // SAFETY: checked non-null; the caller passes a QudaInvertParam.
    let p = unsafe { &mut *inv_param };
    convert::check_struct_size(
        "inv_param",
        p.struct_size,
        std::mem::size_of::<QudaInvertParam>(),
    )?;
    // QUDA loads a clover field for the clover operators only
    // ("Wrong dslash_type in loadCloverQuda()"); of those latsol has
    // CLOVER_WILSON (the twisted ones are refused by name).
    match p.dslash_type {
        QUDA_CLOVER_WILSON_DSLASH => {}
        QUDA_TWISTED_CLOVER_DSLASH | QUDA_CLOVER_HASENBUSCH_TWIST_DSLASH => {
            return Err(Error::Unsupported(format!(
                "inv_param->dslash_type = {}: latsol has no twisted-mass operators",
                p.dslash_type
            )))
        }
        v => {
            return Err(convert::refuse(
                "inv_param->dslash_type",
                v as i64,
                "loadCloverQuda loads the clover field of CLOVER_WILSON (as in QUDA)",
            ))
        }
    }
    if p.clover_order != QUDA_PACKED_CLOVER_ORDER && !h_clover.is_null() && p.compute_clover == 0 {
        return Err(convert::refuse(
            "inv_param->clover_order",
            p.clover_order as i64,
            "latsol reads QUDA's PACKED clover order",
        ));
    }
    let precision = convert::precision(p.clover_cuda_prec, "inv_param->clover_cuda_prec")?;
    let params = CloverParams {
        precision,
        precision_sloppy: convert::precision_or(
            p.clover_cuda_prec_sloppy,
            "inv_param->clover_cuda_prec_sloppy",
            precision,
        )?,
    };
    let compute = h_clover.is_null() || p.compute_clover != 0;
    state::with(|s| {
        let g = s
            .gauge
            .as_ref()
            .ok_or_else(|| state::no_gauge("loadCloverQuda"))?;
        let lat = g.gauge.lattice().clone();
        let clover = if compute {
            // The term holds the coefficient κ c_SW alone (`clover_coeff`,
            // else `clover_csw` times κ): latsol is given it as |κ| (1 where
            // QUDA's caller leaves κ at 0, as MILC's qudaLoadCloverField
            // does) times c_SW.
            let kappa = p.kappa;
            if !kappa.is_finite() {
                return Err(Error::InvalidArgument(format!(
                    "inv_param->kappa = {kappa}: not a finite number"
                )));
            }
            let coeff = if p.clover_coeff != 0.0 && p.clover_coeff != convert::INVALID_DOUBLE {
                p.clover_coeff
            } else {
                p.clover_csw * kappa
            };
            // Either sign, as QUDA takes it; neither set is QUDA's error.
            if !(coeff.is_finite() && coeff != 0.0) {
                return Err(Error::InvalidArgument(format!(
                    "inv_param->clover_coeff = {}, clover_csw = {}: neither clover coefficient \
                     nor c_SW set (a computed clover term needs κ c_SW ≠ 0)",
                    p.clover_coeff, p.clover_csw
                )));
            }
            // The links as given: the boundary sign in them changes
            // neither the plaquette nor the clover term (each leaf holds
            // both or none of the T links of the last time slice).
            let split = if kappa != 0.0 { kappa.abs() } else { 1.0 };
            let source = CloverSource::Computed {
                c_sw: coeff / split,
                kappa: split,
                links: g.links.host_gauge(),
            };
            let clover = s.context.load_clover(&g.gauge, &params, source)?;
            // QUDA writes the coefficient it used back.
            p.clover_coeff = coeff;
            clover
        } else {
            let double = convert::host_is_double(p.clover_cpu_prec, "inv_param->clover_cpu_prec")?;
            // SAFETY: the caller's packed clover field, V·72 reals.
            let clover = unsafe { host_reals(h_clover, lat.volume() * 72, double) };
            let source = CloverSource::Packed {
                clover,
                inverse: None,
            };
            s.context.load_clover(&g.gauge, &params, source)?
        };
        s.clover = Some(clover);
        Ok(())
    })
}

/// `freeCloverQuda()`.
#[no_mangle]
pub extern "C" fn freeCloverQuda() {
    quda_call("freeCloverQuda", || {
        state::with(|s| {
            s.clover = None;
            Ok(())
        })
    })
}
