//! Gauge fields through the C ABI: `latsol_gauge_param`,
//! `latsol_gauge_load`, `latsol_gauge_free`, `latsol_gauge_plaquette`.
//! The host arrays' shapes follow docs/conventions.md, "Host gauge field
//! orders": QDP is 4 arrays of V·18 reals, MILC and CPS one of V·4·18.

use super::ranks::collective;
use std::ffi::c_void;
use std::mem::size_of;

use super::boundary::{self, call, guard_value, Handle, HostPrecision, Versioned};
use super::context::latsol_context;
use super::enums::{
    host_precision, host_precision_code, latsol_gauge_order, latsol_precision, latsol_reconstruct,
    latsol_t_boundary, GAUGE_ORDER, PRECISION, RECONSTRUCT, T_BOUNDARY,
};
use super::status::latsol_status;
use crate::api::{Gauge, GaugeParams};
use crate::error::{Error, Result};
use crate::lattice::Lattice;
use crate::layout::{GaugeOrder, HostGauge, HostReals};

/// Reals per link (3x3 complex).
const LINK_REALS: usize = 18;

/// A gauge field loaded into a context. Opaque; made by
/// `latsol_gauge_load`, freed by `latsol_gauge_free`. It keeps what it
/// needs of its context, so ending the context first is safe.
pub struct latsol_gauge {
    _opaque: [u8; 0],
}

impl Handle for latsol_gauge {
    type Target = Gauge;
    const MAGIC: u64 = 0x6c61_7473_6f6c_6761; // "latsolga"
    const NAME: &'static str = "latsol_gauge";
}

/// How a host gauge field is laid out, and how the library stores it.
/// Start from `latsol_gauge_param_default()`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct latsol_gauge_param {
    /// `sizeof(latsol_gauge_param)` as the caller was compiled.
    pub struct_size: usize,
    /// Local lattice extents {X, Y, Z, T}, each positive and even; default
    /// {4, 4, 4, 4}.
    pub dims: [i32; 4],
    /// The host arrays' precision: DOUBLE (`double`, the default) or SINGLE
    /// (`float`).
    pub host_precision: latsol_precision,
    /// `LATSOL_GAUGE_ORDER_*`; default QDP.
    pub order: latsol_gauge_order,
    /// `LATSOL_T_BOUNDARY_*`; default ANTIPERIODIC.
    pub t_boundary: latsol_t_boundary,
    /// Temporal/spatial lattice spacing ratio; only 1.0 (the default) is
    /// supported.
    pub anisotropy: f64,
    /// Storage precision of the gauge field: DOUBLE (default) or SINGLE.
    pub precision: latsol_precision,
    /// Storage precision of the sloppy copy (mixed-precision solves);
    /// default DOUBLE.
    pub precision_sloppy: latsol_precision,
    /// `LATSOL_RECONSTRUCT_*`; default 18.
    pub reconstruct: latsol_reconstruct,
    /// `LATSOL_RECONSTRUCT_*` of the sloppy copy; default 18.
    pub reconstruct_sloppy: latsol_reconstruct,
    /// Largest accepted deviation of a link from SU(3) (`|U U^dag - 1|`,
    /// `|det U - 1|`); 0 (the default) picks 1e-10 for double and 1e-5 for
    /// single host fields; negative skips the check (uncompressed links
    /// only).
    pub su3_tolerance: f64,
    /// 1: the field is in temporal gauge, every T link off the last time
    /// slice (t < T-1) is the unit matrix; the library checks that at load
    /// (within the SU(3) tolerance, or its default when that is negative)
    /// and then neither stores nor loads those links. 0 (the default): a
    /// general field. Other values are refused. Added after the first
    /// version: callers built without it get 0.
    pub gauge_fixed: i32,
}

unsafe impl Versioned for latsol_gauge_param {
    const NAME: &'static str = "latsol_gauge_param";
    // The first version ended with su3_tolerance.
    const V1_SIZE: usize = std::mem::offset_of!(latsol_gauge_param, gauge_fixed);
    fn defaults() -> Self {
        let d = GaugeParams::default();
        latsol_gauge_param {
            struct_size: size_of::<latsol_gauge_param>(),
            dims: d.dims.map(|x| x as i32),
            host_precision: host_precision_code(HostPrecision::F64),
            order: GAUGE_ORDER.encode(d.order),
            t_boundary: T_BOUNDARY.encode(d.t_boundary),
            anisotropy: d.anisotropy,
            precision: PRECISION.encode(d.precision),
            precision_sloppy: PRECISION.encode(d.precision_sloppy),
            reconstruct: RECONSTRUCT.encode(d.reconstruct),
            reconstruct_sloppy: RECONSTRUCT.encode(d.reconstruct_sloppy),
            su3_tolerance: d.su3_tolerance,
            gauge_fixed: i32::from(d.gauge_fixed),
        }
    }
}

impl latsol_gauge_param {
    fn to_safe(self) -> Result<(GaugeParams, HostPrecision)> {
        let mut dims = [0usize; 4];
        for (mu, (&d, out)) in self.dims.iter().zip(&mut dims).enumerate() {
            *out = usize::try_from(d).map_err(|_| {
                Error::InvalidArgument(format!(
                    "param->dims[{mu}] = {d}: every lattice extent must be positive and even"
                ))
            })?;
        }
        let params = GaugeParams {
            dims,
            order: GAUGE_ORDER.decode(self.order, "param->order")?,
            t_boundary: T_BOUNDARY.decode(self.t_boundary, "param->t_boundary")?,
            anisotropy: self.anisotropy,
            precision: PRECISION.decode(self.precision, "param->precision")?,
            precision_sloppy: PRECISION.decode(self.precision_sloppy, "param->precision_sloppy")?,
            reconstruct: RECONSTRUCT.decode(self.reconstruct, "param->reconstruct")?,
            reconstruct_sloppy: RECONSTRUCT
                .decode(self.reconstruct_sloppy, "param->reconstruct_sloppy")?,
            su3_tolerance: self.su3_tolerance,
            gauge_fixed: match self.gauge_fixed {
                0 => false,
                1 => true,
                v => {
                    return Err(Error::InvalidArgument(format!(
                        "param->gauge_fixed = {v}: must be 0 or 1"
                    )))
                }
            },
            boundary_sign_in_links: false,
        };
        let host = host_precision(self.host_precision, "param->host_precision")?;
        Ok((params, host))
    }
}

/// The default gauge parameters: every field a valid choice, `struct_size`
/// set. A 4^4 lattice in QDP order, double precision on the host and in
/// storage, anti-periodic in time, no compression, the default SU(3)
/// check.
#[no_mangle]
pub extern "C" fn latsol_gauge_param_default() -> latsol_gauge_param {
    // A struct_size of 0 (refused by every call) if building the defaults
    // ever failed: nothing unwinds into C.
    guard_value(
        || latsol_gauge_param {
            struct_size: 0,
            dims: [0; 4],
            host_precision: 0,
            order: 0,
            t_boundary: 0,
            anisotropy: 0.0,
            precision: 0,
            precision_sloppy: 0,
            reconstruct: 0,
            reconstruct_sloppy: 0,
            su3_tolerance: 0.0,
            gauge_fixed: 0,
        },
        latsol_gauge_param::defaults,
    )
}

/// Converts, checks and stores a host gauge field in `ctx`, and stores the
/// new handle in `*gauge`. The caller's arrays are only read, and may be
/// freed after the call.
///
/// `host_gauge`: for `LATSOL_GAUGE_ORDER_QDP`, an array of 4 pointers
/// (`const void *const[4]`, mu = x, y, z, t), each to V*18 reals; for MILC
/// and CPS_WILSON, one array of V*4*18 reals. Reals are `double` or `float`
/// as `param->host_precision` says; V = dims[0]*dims[1]*dims[2]*dims[3].
///
/// Errors: NULL pointers (NULL_POINTER); a wrong `struct_size`, unknown
/// enum values, odd, zero or negative dims, a non-finite link or one that
/// is not in SU(3) (INVALID_ARGUMENT, naming the site and direction); a
/// stale `ctx` (INVALID_HANDLE); an anisotropy other than 1
/// (UNSUPPORTED). On an error `*gauge` is unchanged.
///
/// # Safety
/// Pointers are NULL or valid for what they are documented to hold.
#[no_mangle]
pub unsafe extern "C" fn latsol_gauge_load(
    ctx: *mut latsol_context,
    param: *const latsol_gauge_param,
    host_gauge: *const c_void,
    gauge: *mut *mut latsol_gauge,
) -> latsol_status {
    call("latsol_gauge_load", || {
        let context = unsafe { boundary::borrow(ctx.cast_const(), "ctx")? };
        let checked = (|| {
            boundary::check_ptr(gauge.cast_const(), "gauge")?;
            let (params, host) = unsafe { boundary::read_versioned(param, "param")? }.to_safe()?;
            let links = unsafe { host_gauge_arrays(&params, host, host_gauge)? };
            Ok((params, links))
        })();
        let (params, links) = collective(context, checked)?;
        let loaded = context.load_gauge(&params, &links)?;
        unsafe { gauge.write(boundary::into_handle::<latsol_gauge>(loaded)) };
        Ok(())
    })
}

/// The caller's gauge arrays as `params` describe them (order, dims) in
/// the host precision `host`.
///
/// # Safety
/// `host_gauge` is NULL or valid for what `latsol_gauge_load` documents.
pub(crate) unsafe fn host_gauge_arrays<'a>(
    params: &GaugeParams,
    host: HostPrecision,
    host_gauge: *const c_void,
) -> Result<HostGauge<'a>> {
    // The lattice checks the dims before they size any slice.
    let volume = Lattice::new(params.dims)?.volume();
    Ok(match params.order {
        GaugeOrder::Qdp => {
            let table = host_gauge.cast::<*const c_void>();
            boundary::check_ptr(table, "host_gauge")?;
            let mut arrays = [HostReals::F64(&[]); 4];
            for (mu, array) in arrays.iter_mut().enumerate() {
                let p = unsafe { table.add(mu).read() };
                *array = unsafe {
                    boundary::host_reals(
                        p,
                        volume * LINK_REALS,
                        host,
                        &format!("host_gauge[{mu}]"),
                    )?
                };
            }
            HostGauge::Qdp(arrays)
        }
        GaugeOrder::Milc | GaugeOrder::CpsWilson => {
            let array = unsafe {
                boundary::host_reals(host_gauge, volume * 4 * LINK_REALS, host, "host_gauge")?
            };
            if params.order == GaugeOrder::Milc {
                HostGauge::Milc(array)
            } else {
                HostGauge::CpsWilson(array)
            }
        }
    })
}

/// Frees a gauge field (also after its context has ended).
///
/// Errors: NULL (NULL_POINTER); a handle already freed or not made by
/// latsol (INVALID_HANDLE; detected in practice, not guaranteed).
///
/// # Safety
/// `gauge` is NULL or a handle from `latsol_gauge_load`.
#[no_mangle]
pub unsafe extern "C" fn latsol_gauge_free(gauge: *mut latsol_gauge) -> latsol_status {
    call("latsol_gauge_free", || unsafe {
        boundary::free(gauge, "gauge")
    })
}

/// Writes the plaquette of a gauge field, `Re tr U_p / 3` averaged:
/// `plaq[0]` over all planes, `plaq[1]` the spatial ones, `plaq[2]` the
/// temporal ones (a unit field gives 1). Computed from the caller's links
/// as given (no boundary sign).
///
/// Errors: NULL pointers (NULL_POINTER); a stale handle (INVALID_HANDLE).
///
/// # Safety
/// `gauge` is NULL or a handle from `latsol_gauge_load`; `plaq` is NULL or
/// points to 3 writable doubles.
#[no_mangle]
pub unsafe extern "C" fn latsol_gauge_plaquette(
    gauge: *const latsol_gauge,
    plaq: *mut f64,
) -> latsol_status {
    call("latsol_gauge_plaquette", || {
        let gauge = unsafe { boundary::borrow(gauge, "gauge")? };
        boundary::check_ptr(plaq.cast_const(), "plaq")?;
        let p = gauge.plaquette();
        unsafe { std::ptr::copy_nonoverlapping(p.as_ptr(), plaq, 3) };
        Ok(())
    })
}
