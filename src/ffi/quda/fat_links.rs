//! `computeKSLinkQuda`: improved staggered links from a caller's links
//! (`Context::fatten_links`), and the body MILC's `qudaLoadKSLink` and
//! `qudaLoadUnitarizedLink` share. As QUDA 9521952's
//! (lib/interface_quda.cpp): the fat links always, the long links where
//! `longlink` is not NULL, the fat links' U(3) projection where `ulink` is
//! not NULL (QUDA's reunitarisation constants; a link that fails it fails
//! the call); every array in the host order and precision of the gauge
//! parameters, the links used with whatever phases they carry. What QUDA
//! computes in the arrays' precision latsol computes in double and rounds
//! once, as it writes the caller's arrays; nothing is written on failure.

use std::os::raw::c_void;

use super::abi::*;
use super::convert;
use super::errors::quda_collective;
use super::host::{host_gauge, host_reals_mut, not_null};
use super::state;
use crate::api::FatLinkOutputs;
use crate::error::{Error, Result};
use crate::fat_links::PathCoefficients;
use crate::field::GaugeField;
use crate::layout::{GaugeOrder, HostRealsMut};

/// Where a call's links come from and go to.
pub(crate) struct KsLinkArrays {
    pub fat: *mut c_void,
    pub long: *mut c_void,
    pub ulink: *mut c_void,
    pub inlink: *mut c_void,
    pub coeff: *const f64,
    pub dims: [usize; 4],
    pub order: GaugeOrder,
    pub double: bool,
}

/// The caller's output array `p` in `order` (QDP: four pointers).
///
/// # Safety
/// `p` holds `4 n` reals of the precision in that order, unaliased.
unsafe fn host_out<'a>(
    p: *mut c_void,
    order: GaugeOrder,
    n: usize,
    double: bool,
    name: &str,
) -> Result<Vec<HostRealsMut<'a>>> {
    // SAFETY: as the caller promises.
    unsafe {
        Ok(match order {
            GaugeOrder::Qdp => {
                let ptrs = std::slice::from_raw_parts(p as *const *mut c_void, 4);
                let mut out = Vec::with_capacity(4);
                for (mu, &q) in ptrs.iter().enumerate() {
                    not_null(q, &format!("{name}[{mu}]"))?;
                    out.push(host_reals_mut(q, n, double));
                }
                out
            }
            _ => vec![host_reals_mut(p, 4 * n, double)],
        })
    }
}

/// `field` into the caller's array.
///
/// # Safety
/// As `host_out`.
unsafe fn write(field: &GaugeField, a: &KsLinkArrays, p: *mut c_void, name: &str) -> Result<()> {
    let n = field.lattice().volume() * 18;
    // SAFETY: forwarded.
    let mut out = unsafe { host_out(p, a.order, n, a.double, name)? };
    crate::layout::gauge::export(field, a.order, &mut out)
}

/// The links of `a` computed and written.
///
/// # Safety
/// Every non-NULL array of `a` holds a gauge field of its lattice in its
/// order and precision; `coeff` 6 doubles.
pub(crate) unsafe fn compute_ks_links(a: &KsLinkArrays) -> Result<()> {
    not_null(a.fat, "fatlink")?;
    not_null(a.inlink, "inlink")?;
    not_null(a.coeff, "path_coeff")?;
    // SAFETY: 6 doubles.
    let c = unsafe { std::slice::from_raw_parts(a.coeff, 6) };
    let c = PathCoefficients::from_array([c[0], c[1], c[2], c[3], c[4], c[5]]);
    if !c.is_finite() {
        return Err(Error::InvalidArgument(format!(
            "path_coeff = {:?}: not all finite",
            c.to_array()
        )));
    }
    let n = a.dims.iter().product::<usize>() * 18;
    // SAFETY: the caller's links.
    let host = unsafe { host_gauge(a.inlink, a.order, n, a.double)? };
    let outputs = FatLinkOutputs {
        long: !a.long.is_null(),
        unitarized: !a.ulink.is_null(),
    };
    let links = state::with(|s| s.context.fatten_links(a.dims, &host, &c, outputs))?;
    // Written only once everything is computed.
    // SAFETY: the caller's output arrays.
    unsafe {
        write(&links.fat, a, a.fat, "fatlink")?;
        if let Some(long) = &links.long {
            write(long, a, a.long, "longlink")?;
        }
        if let Some(w) = &links.unitarized {
            write(w, a, a.ulink, "ulink")?;
        }
    }
    Ok(())
}

/// `computeKSLinkQuda(fatlink, longlink, ulink, inlink, path_coeff,
/// param)`: `param` gives the local extents `X`, the host order
/// (`gauge_order`: QDP, MILC, CPS_WILSON) and precision (`cpu_prec`).
///
/// # Safety
/// As `compute_ks_links`, `param` a `QudaGaugeParam`.
#[no_mangle]
pub unsafe extern "C" fn computeKSLinkQuda(
    fatlink: *mut c_void,
    longlink: *mut c_void,
    ulink: *mut c_void,
    inlink: *mut c_void,
    path_coeff: *mut f64,
    param: *mut QudaGaugeParam,
) {
    quda_collective("computeKSLinkQuda", || {
        not_null(param, "param")?;
        // SAFETY: checked non-null; the caller passes a QudaGaugeParam.
        let p = unsafe { &*param };
        convert::check_struct_size(
            "param",
            p.struct_size,
            std::mem::size_of::<QudaGaugeParam>(),
        )?;
        let dims = convert::extents(&p.X, "param->X")?;
        let arrays = KsLinkArrays {
            fat: fatlink,
            long: longlink,
            ulink,
            inlink,
            coeff: path_coeff,
            dims,
            order: convert::gauge_order(p.gauge_order)?,
            double: convert::host_is_double(p.cpu_prec, "param->cpu_prec")?,
        };
        // SAFETY: forwarded from the caller.
        unsafe { compute_ks_links(&arrays) }
    })
}
