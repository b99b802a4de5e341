//! The `quda.h` parameters of MILC's Wilson-clover calls, as QUDA
//! 9521952's lib/milc_interface.cpp sets them (`setGaugeParams`,
//! `setInvertParam`): MILC-order links with the boundary phases in them,
//! KAPPA normalization, DeGrand–Rossi basis, DIRAC order, packed clover;
//! MILC's precision codes (2 double, else single) and `mixed_precision`
//! (2 half, 1 single, else as the solve) for the sloppy precision.

use std::os::raw::c_int;

use super::layout::{dims, host_double};
use crate::error::Result;
use crate::ffi::quda::abi::*;
use crate::ffi::quda::init;

/// The host, device and sloppy precisions of a MILC call.
fn precisions(
    external_precision: c_int,
    quda_precision: c_int,
    inv_args: &QudaInvertArgs_t,
) -> (QudaPrecision, QudaPrecision, QudaPrecision) {
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
    (host, device, if sloppy > device { device } else { sloppy })
}

/// MILC's links (`milc_link`) as `loadGaugeQuda` takes them: used as
/// given (periodic, uncompressed), whatever phases they hold.
pub(crate) fn gauge_param(
    external_precision: c_int,
    quda_precision: c_int,
    inv_args: &QudaInvertArgs_t,
) -> Result<QudaGaugeParam> {
    let d = dims()?;
    let (host, device, sloppy) = precisions(external_precision, quda_precision, inv_args);
    let mut gp = init::newQudaGaugeParam();
    for (x, &n) in gp.X.iter_mut().zip(&d) {
        *x = n as c_int;
    }
    gp.anisotropy = 1.0;
    gp.r#type = QUDA_WILSON_LINKS;
    gp.gauge_order = QUDA_MILC_GAUGE_ORDER;
    gp.t_boundary = QUDA_PERIODIC_T;
    gp.cpu_prec = host;
    gp.cuda_prec = device;
    gp.reconstruct = QUDA_RECONSTRUCT_NO;
    gp.cuda_prec_sloppy = sloppy;
    gp.reconstruct_sloppy = QUDA_RECONSTRUCT_NO;
    gp.gauge_fix = QUDA_GAUGE_FIXED_NO;
    Ok(gp)
}

/// The Wilson-clover solve's parameters before the solution and solve
/// types (QUDA's `setInvertParam`).
pub(crate) fn invert_param(
    external_precision: c_int,
    quda_precision: c_int,
    inv_args: &QudaInvertArgs_t,
    kappa: f64,
    clover_coeff: f64,
) -> QudaInvertParam {
    let (host, device, sloppy) = precisions(external_precision, quda_precision, inv_args);
    let mut ip = init::newQudaInvertParam();
    ip.dslash_type = QUDA_CLOVER_WILSON_DSLASH;
    ip.kappa = kappa;
    ip.clover_coeff = clover_coeff;
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
    ip.maxiter = inv_args.max_iter;
    ip.reliable_delta = 0.1;
    ip.use_init_guess = QUDA_USE_INIT_GUESS_NO;
    ip
}
