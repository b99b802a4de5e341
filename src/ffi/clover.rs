//! Clover fields through the C ABI: `latsol_clover_param`,
//! `latsol_clover_load` (QUDA's packed order from the host),
//! `latsol_clover_compute` (from the links and c_SW), `latsol_clover_free`,
//! and the Wilson-clover forms of invert, apply and multi-shift, which take
//! the clover handle beside the gauge handle.

use super::ranks::collective;
use std::ffi::c_void;
use std::mem::size_of;

use super::boundary::{self, call, guard_value, Handle, HostPrecision, Versioned};
use super::context::latsol_context;
use super::enums::{
    host_precision, host_precision_code, latsol_operator, latsol_precision, PRECISION,
};
use super::gauge::{host_gauge_arrays, latsol_gauge};
use super::invert::{apply_on, invert_on, latsol_invert_param, latsol_invert_result};
use super::multishift::{latsol_multishift_result, multishift_on};
use super::status::latsol_status;
use crate::api::{Clover, CloverParams, CloverSource, OperatorFields};
use crate::clover::PACKED_REALS;
use crate::error::Result;

/// A clover field (the site term `A` of the Wilson-clover operator and its
/// inverse) loaded into a context for the lattice of a gauge field.
/// Opaque; made by `latsol_clover_load` or `latsol_clover_compute`, freed
/// by `latsol_clover_free`.
pub struct latsol_clover {
    _opaque: [u8; 0],
}

impl Handle for latsol_clover {
    type Target = Clover;
    const MAGIC: u64 = 0x6c61_7473_6f6c_636c; // "latsolcl"
    const NAME: &'static str = "latsol_clover";
}

/// How a clover field is given and stored. Start from
/// `latsol_clover_param_default()`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct latsol_clover_param {
    /// `sizeof(latsol_clover_param)` as the caller was compiled.
    pub struct_size: usize,
    /// The host arrays' precision: of the clover arrays
    /// (`latsol_clover_load`) or of the links (`latsol_clover_compute`):
    /// DOUBLE (default) or SINGLE.
    pub host_precision: latsol_precision,
    /// The spinor precision of the solves that use the field: DOUBLE
    /// (default) or SINGLE; must match `latsol_invert_param.precision`.
    pub precision: latsol_precision,
    /// The sloppy spinor precision (any format); must match
    /// `precision_sloppy` of mixed-precision solves; default DOUBLE.
    pub precision_sloppy: latsol_precision,
    /// `latsol_clover_compute`: the Sheikholeslami-Wohlert coefficient,
    /// finite and >= 0; default 1.
    pub c_sw: f64,
    /// `latsol_clover_compute`: the hopping parameter, > 0; the clover term
    /// is `1 - kappa c_sw sum_{mu<nu} [g_mu, g_nu]/2 F_munu` (QUDA's
    /// `clover_coeff = kappa c_sw`); default 0.12.
    pub kappa: f64,
}

unsafe impl Versioned for latsol_clover_param {
    const NAME: &'static str = "latsol_clover_param";
    const V1_SIZE: usize = size_of::<latsol_clover_param>();
    fn defaults() -> Self {
        let d = CloverParams::default();
        latsol_clover_param {
            struct_size: size_of::<latsol_clover_param>(),
            host_precision: host_precision_code(HostPrecision::F64),
            precision: PRECISION.encode(d.precision),
            precision_sloppy: PRECISION.encode(d.precision_sloppy),
            c_sw: 1.0,
            kappa: 0.12,
        }
    }
}

impl latsol_clover_param {
    fn to_safe(self) -> Result<(CloverParams, HostPrecision)> {
        let params = CloverParams {
            precision: PRECISION.decode(self.precision, "param->precision")?,
            precision_sloppy: PRECISION.decode(self.precision_sloppy, "param->precision_sloppy")?,
        };
        let host = host_precision(self.host_precision, "param->host_precision")?;
        Ok((params, host))
    }
}

/// The default clover parameters: every field a valid choice, `struct_size`
/// set. Double precision on the host and in storage, c_sw 1, kappa 0.12.
#[no_mangle]
pub extern "C" fn latsol_clover_param_default() -> latsol_clover_param {
    guard_value(
        || latsol_clover_param {
            struct_size: 0,
            host_precision: 0,
            precision: 0,
            precision_sloppy: 0,
            c_sw: 0.0,
            kappa: 0.0,
        },
        latsol_clover_param::defaults,
    )
}

/// Loads a clover field from the host for the lattice of `gauge`, and
/// stores the new handle in `*clover`. `host_clover` holds V*72 reals in
/// QUDA's packed clover order (`QUDA_PACKED_CLOVER_ORDER`, Chroma's
/// packing): per site (even-odd order) two chiral blocks of 36 reals, each
/// the 6 real diagonal entries then the 15 complex strictly lower entries
/// column by column, block k acting on the DeGrand-Rossi spins 2k, 2k+1; the
/// unit diagonal included. `host_inverse` is NULL (latsol inverts each
/// block by LDL^dag) or the caller's inverse in the same order (checked
/// against the field, then used). The arrays are only read.
///
/// Errors: NULL pointers (NULL_POINTER); a stale `ctx` or `gauge`, a
/// gauge of another context (INVALID_HANDLE); a wrong `struct_size`,
/// unknown enum values, a NaN or Inf entry, a block that is not invertible
/// or an inverse that does not match (INVALID_ARGUMENT, naming the site and
/// block). On an error `*clover` is unchanged.
///
/// # Safety
/// Pointers are NULL or valid for what they are documented to hold.
#[no_mangle]
pub unsafe extern "C" fn latsol_clover_load(
    ctx: *mut latsol_context,
    gauge: *const latsol_gauge,
    param: *const latsol_clover_param,
    host_clover: *const c_void,
    host_inverse: *const c_void,
    clover: *mut *mut latsol_clover,
) -> latsol_status {
    call("latsol_clover_load", || {
        let context = unsafe { boundary::borrow(ctx.cast_const(), "ctx")? };
        let checked = (|| {
            let gauge = unsafe { boundary::borrow(gauge, "gauge")? };
            boundary::check_ptr(clover.cast_const(), "clover")?;
            let (params, host) = unsafe { boundary::read_versioned(param, "param")? }.to_safe()?;
            let len = gauge.lattice().volume() * PACKED_REALS;
            let field = unsafe { boundary::host_reals(host_clover, len, host, "host_clover")? };
            let inverse = if host_inverse.is_null() {
                None
            } else {
                Some(unsafe { boundary::host_reals(host_inverse, len, host, "host_inverse")? })
            };
            let source = CloverSource::Packed {
                clover: field,
                inverse,
            };
            Ok((gauge, params, source))
        })();
        let (gauge, params, source) = collective(context, checked)?;
        let loaded = context.load_clover(gauge, &params, source)?;
        unsafe { clover.write(boundary::into_handle::<latsol_clover>(loaded)) };
        Ok(())
    })
}

/// Computes the clover field of `gauge` with `param->c_sw` and
/// `param->kappa`, inverts it and stores the new handle in `*clover`:
/// `A(x) = 1 - kappa c_sw sum_{mu<nu} [g_mu, g_nu]/2 F_munu(x)`,
/// `F_munu = (Q_munu - Q_munu^dag)/8` from the four plaquette leaves
/// (QUDA's computed clover; docs/conventions.md). latsol keeps no host
/// copy of a gauge field, so `host_gauge` is the caller's links again,
/// exactly as passed to `latsol_gauge_load` (same order; precision
/// `param->host_precision`); their plaquette is checked against the loaded
/// field's.
///
/// Errors: as `latsol_clover_load`, plus c_sw NaN, Inf or negative, kappa
/// not positive, links that are not the gauge field's (INVALID_ARGUMENT).
///
/// # Safety
/// As `latsol_gauge_load` for `host_gauge`.
#[no_mangle]
pub unsafe extern "C" fn latsol_clover_compute(
    ctx: *mut latsol_context,
    gauge: *const latsol_gauge,
    param: *const latsol_clover_param,
    host_gauge: *const c_void,
    clover: *mut *mut latsol_clover,
) -> latsol_status {
    call("latsol_clover_compute", || {
        let context = unsafe { boundary::borrow(ctx.cast_const(), "ctx")? };
        let checked = (|| {
            let gauge = unsafe { boundary::borrow(gauge, "gauge")? };
            boundary::check_ptr(clover.cast_const(), "clover")?;
            let raw = unsafe { boundary::read_versioned(param, "param")? };
            let (params, host) = raw.to_safe()?;
            // latsol.h's contract: c_SW ≥ 0 (the safe API takes either
            // sign, as QUDA's face needs).
            if raw.c_sw < 0.0 {
                return Err(crate::error::Error::InvalidArgument(format!(
                    "param->c_sw = {}: must be a finite number ≥ 0",
                    raw.c_sw
                )));
            }
            let links = unsafe { host_gauge_arrays(gauge.params(), host, host_gauge)? };
            let source = CloverSource::Computed {
                c_sw: raw.c_sw,
                kappa: raw.kappa,
                links,
            };
            Ok((gauge, params, source))
        })();
        let (gauge, params, source) = collective(context, checked)?;
        let loaded = context.load_clover(gauge, &params, source)?;
        unsafe { clover.write(boundary::into_handle::<latsol_clover>(loaded)) };
        Ok(())
    })
}

/// Frees a clover field (also after its context has ended).
///
/// Errors: NULL (NULL_POINTER); a handle already freed or not made by
/// latsol (INVALID_HANDLE; detected in practice, not guaranteed).
///
/// # Safety
/// `clover` is NULL or a handle from `latsol_clover_load`/`_compute`.
#[no_mangle]
pub unsafe extern "C" fn latsol_clover_free(clover: *mut latsol_clover) -> latsol_status {
    call("latsol_clover_free", || unsafe {
        boundary::free(clover, "clover")
    })
}

/// Borrows the two handles of a Wilson-clover operator.
pub(crate) unsafe fn clover_fields<'a>(
    gauge: *const latsol_gauge,
    clover: *const latsol_clover,
) -> Result<OperatorFields<'a>> {
    let gauge = unsafe { boundary::borrow(gauge, "gauge")? };
    let clover = unsafe { boundary::borrow(clover, "clover")? };
    Ok((gauge, clover).into())
}

/// `latsol_invert` for the Wilson-clover operator `M = A - kappa D`
/// (`param->dslash` = `LATSOL_DSLASH_CLOVER_WILSON`) with the clover field
/// `clover` (of `gauge`'s lattice and context, stored for the solve's
/// precisions). The even-odd solves take `param->matpc`'s form: symmetric
/// (EVEN_EVEN, ODD_ODD: `1 - kappa^2 A^-1 D A^-1 D`) or asymmetric
/// (`*_ASYMMETRIC`: `A - kappa^2 D A^-1 D`). Everything else, errors
/// included, as `latsol_invert`; a clover of another context is
/// INVALID_HANDLE, one of another lattice or precision INVALID_ARGUMENT.
///
/// # Safety
/// As `latsol_invert`; `clover` is NULL or a handle from latsol.
#[no_mangle]
pub unsafe extern "C" fn latsol_invert_clover(
    ctx: *mut latsol_context,
    gauge: *const latsol_gauge,
    clover: *const latsol_clover,
    param: *const latsol_invert_param,
    solution: *mut c_void,
    source: *const c_void,
    result: *mut latsol_invert_result,
) -> latsol_status {
    call("latsol_invert_clover", || unsafe {
        invert_on(
            ctx,
            || clover_fields(gauge, clover),
            param,
            solution,
            source,
            result,
        )
    })
}

/// `latsol_apply` for the Wilson-clover operator; besides the operators of
/// `latsol_apply`, `LATSOL_OP_CLOVER` and `LATSOL_OP_CLOVER_INV` apply `A`
/// and `A^-1` alone (full fields).
///
/// # Safety
/// As `latsol_apply`; `clover` is NULL or a handle from latsol.
#[no_mangle]
pub unsafe extern "C" fn latsol_apply_clover(
    ctx: *mut latsol_context,
    gauge: *const latsol_gauge,
    clover: *const latsol_clover,
    param: *const latsol_invert_param,
    op: latsol_operator,
    out: *mut c_void,
    r#in: *const c_void,
) -> latsol_status {
    call("latsol_apply_clover", || unsafe {
        apply_on(ctx, || clover_fields(gauge, clover), param, op, out, r#in)
    })
}

/// `latsol_invert_multishift` for the Wilson-clover operator: multi-shift
/// CG on `M^dag M` or `Mhat^dag Mhat` (the `matpc` form), as Chroma's RHMC
/// path solves it.
///
/// # Safety
/// As `latsol_invert_multishift`; `clover` is NULL or a handle from latsol.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn latsol_invert_multishift_clover(
    ctx: *mut latsol_context,
    gauge: *const latsol_gauge,
    clover: *const latsol_clover,
    param: *const latsol_invert_param,
    num_shifts: i32,
    shifts: *const f64,
    tol_shifts: *const f64,
    solutions: *mut *mut c_void,
    source: *const c_void,
    result: *mut latsol_multishift_result,
) -> latsol_status {
    call("latsol_invert_multishift_clover", || unsafe {
        multishift_on(
            ctx,
            || clover_fields(gauge, clover),
            param,
            (num_shifts, shifts, tol_shifts),
            solutions,
            source,
            result,
        )
    })
}
