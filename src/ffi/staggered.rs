//! Staggered quarks through the C ABI: `latsol_staggered` (fat and long
//! links, or thin links for the naive operator), its parameters, and the
//! solves and applications of `M = 2m - D` on colour-vector fields
//! (docs/conventions.md, "The staggered operator").

use std::ffi::c_void;
use std::mem::size_of;

use super::boundary::{self, call, guard_value, Handle, HostPrecision, Versioned};
use super::context::latsol_context;
use super::enums::{
    flag, host_precision, host_precision_code, latsol_gauge_order, latsol_operator,
    latsol_precision, latsol_reconstruct, latsol_solver, latsol_t_boundary, CEnum, GAUGE_ORDER,
    LATSOL_OP_DSLASH, LATSOL_OP_M, LATSOL_OP_MDAG, LATSOL_OP_MPC, LATSOL_RECONSTRUCT_13,
    LATSOL_RECONSTRUCT_18, LATSOL_RECONSTRUCT_9, PRECISION, SOLVER, T_BOUNDARY,
};
use super::gauge::host_gauge_arrays;
use super::invert::{latsol_invert_result, write_result};
use super::multishift::{latsol_multishift_result, not_converged, read_systems, solution_arrays};
use super::ranks::collective;
use super::status::latsol_status;
use crate::api::{
    GaugeParams, PhaseFolding, StaggeredInvertParams, StaggeredLinks, StaggeredOp, StaggeredParams,
    StaggeredSolve,
};
use crate::error::{Error, Result};
use crate::lattice::{Lattice, Parity};
use crate::long_links::LongReconstruct;
use crate::precision::TBoundary;

/// Reals a site of a staggered field (3 complex colours).
const COLOUR_REALS: usize = 6;

/// The links of a staggered operator loaded into a context. Opaque; made
/// by `latsol_staggered_load`, freed by `latsol_staggered_free`.
pub struct latsol_staggered {
    _opaque: [u8; 0],
}

impl Handle for latsol_staggered {
    type Target = StaggeredLinks;
    const MAGIC: u64 = 0x6c61_7473_6f6c_7374; // "latsolst"
    const NAME: &'static str = "latsol_staggered";
}

/// Which system a staggered solve iterates on.
pub type latsol_staggered_solve = i32;
/// CG on `4m^2 - D_eo D_oe` on the even sites, the odd ones reconstructed
/// (QUDA's staggered even-odd solve, MILC's EVEN).
pub const LATSOL_STAGGERED_SOLVE_EVEN: latsol_staggered_solve = 0;
/// The same on the odd sites.
pub const LATSOL_STAGGERED_SOLVE_ODD: latsol_staggered_solve = 1;
/// CG on `M^dag M` on the full lattice.
pub const LATSOL_STAGGERED_SOLVE_FULL: latsol_staggered_solve = 2;

static LONG_RECONSTRUCT: CEnum<LongReconstruct> = CEnum::new(
    "latsol_reconstruct (of long links)",
    &[
        (
            "LATSOL_RECONSTRUCT_18",
            LATSOL_RECONSTRUCT_18,
            LongReconstruct::Full18,
        ),
        (
            "LATSOL_RECONSTRUCT_13",
            LATSOL_RECONSTRUCT_13,
            LongReconstruct::Thirteen,
        ),
        (
            "LATSOL_RECONSTRUCT_9",
            LATSOL_RECONSTRUCT_9,
            LongReconstruct::Nine,
        ),
    ],
);

static STAGGERED_SOLVE: CEnum<StaggeredSolve> = CEnum::new(
    "latsol_staggered_solve",
    &[
        (
            "LATSOL_STAGGERED_SOLVE_EVEN",
            LATSOL_STAGGERED_SOLVE_EVEN,
            StaggeredSolve::EvenOdd(Parity::Even),
        ),
        (
            "LATSOL_STAGGERED_SOLVE_ODD",
            LATSOL_STAGGERED_SOLVE_ODD,
            StaggeredSolve::EvenOdd(Parity::Odd),
        ),
        (
            "LATSOL_STAGGERED_SOLVE_FULL",
            LATSOL_STAGGERED_SOLVE_FULL,
            StaggeredSolve::Full,
        ),
    ],
);

/// How staggered links are given and stored. Start from
/// `latsol_staggered_param_default()`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct latsol_staggered_param {
    /// `sizeof(latsol_staggered_param)` as the caller was compiled.
    pub struct_size: usize,
    /// Lattice extents X, Y, Z, T; each even and > 0.
    pub dims: [i32; 4],
    /// Precision of the host link arrays: DOUBLE (default) or SINGLE.
    pub host_precision: latsol_precision,
    /// QDP (`void *links[4]`, default) or MILC (site-major) order; each link
    /// 3x3 complex row-major, sites in even-odd order.
    pub order: latsol_gauge_order,
    /// Precision of the stored links and of the solves' precise fields:
    /// DOUBLE (default) or SINGLE.
    pub precision: latsol_precision,
    /// Precision of the links' sloppy copy: DOUBLE, SINGLE, HALF or
    /// QUARTER; default DOUBLE.
    pub precision_sloppy: latsol_precision,
    /// 0 (default): the staggered phases, the boundary signs and the Naik
    /// coefficient are in the links already (as MILC passes them to QUDA).
    /// 1: latsol folds them in: MILC's phases `eta_x = (-1)^t`,
    /// `eta_y = (-1)^(t+x)`, `eta_z = (-1)^(t+x+y)`, `eta_t = 1`, the
    /// `t_boundary` sign on the hops across the T boundary, and the long
    /// links times `long_coefficient`.
    pub fold_phases: i32,
    /// With `fold_phases`: PERIODIC or ANTIPERIODIC (default).
    pub t_boundary: latsol_t_boundary,
    /// With `fold_phases`: the factor of the long links (default 1: the
    /// Naik coefficient is in them; -1/24 for bare asqtad links, u0 = 1).
    pub long_coefficient: f64,
    /// Storage of the long links: LATSOL_RECONSTRUCT_18 (default), _13 or
    /// _9 (|s| times U(3), s the Naik coefficient; checked on load: links
    /// that are not are INVALID_ARGUMENT). Fat links are always 18.
    pub long_reconstruct: latsol_reconstruct,
    /// The same for the links' sloppy copy (mixed-precision solves).
    pub long_reconstruct_sloppy: latsol_reconstruct,
    /// 1: a third copy of the links, in `precision_refinement` with long
    /// links in `long_reconstruct_refinement`, for the refinement of mixed
    /// multi-shift solves (QUDA's `cuda_prec_refinement_sloppy`; Clark et
    /// al. 2022 section 3 refine in 20-bit after a 30-bit multi-shift
    /// phase); 0 (default): none. (Added after the first version.)
    pub refinement_copy: i32,
    pub precision_refinement: latsol_precision,
    pub long_reconstruct_refinement: latsol_reconstruct,
}

unsafe impl Versioned for latsol_staggered_param {
    const NAME: &'static str = "latsol_staggered_param";
    const V1_SIZE: usize = std::mem::offset_of!(latsol_staggered_param, refinement_copy);
    fn defaults() -> Self {
        let d = StaggeredParams::default();
        latsol_staggered_param {
            struct_size: size_of::<latsol_staggered_param>(),
            dims: d.dims.map(|x| x as i32),
            host_precision: host_precision_code(HostPrecision::F64),
            order: GAUGE_ORDER.encode(d.order),
            precision: PRECISION.encode(d.precision),
            precision_sloppy: PRECISION.encode(d.precision_sloppy),
            fold_phases: 0,
            t_boundary: T_BOUNDARY.encode(TBoundary::AntiPeriodic),
            long_coefficient: 1.0,
            long_reconstruct: LONG_RECONSTRUCT.encode(d.long_reconstruct),
            long_reconstruct_sloppy: LONG_RECONSTRUCT.encode(d.long_reconstruct_sloppy),
            refinement_copy: 0,
            precision_refinement: PRECISION.encode(d.precision_sloppy),
            long_reconstruct_refinement: LONG_RECONSTRUCT.encode(d.long_reconstruct_refinement),
        }
    }
}

impl latsol_staggered_param {
    fn to_safe(self) -> Result<(StaggeredParams, HostPrecision)> {
        let mut dims = [0usize; 4];
        for (d, &v) in dims.iter_mut().zip(&self.dims) {
            *d = usize::try_from(v).map_err(|_| {
                Error::InvalidArgument(format!("param->dims = {:?}: extents are > 0", self.dims))
            })?;
        }
        let phases = if flag(self.fold_phases, "param->fold_phases")? {
            PhaseFolding::Fold {
                t_boundary: T_BOUNDARY.decode(self.t_boundary, "param->t_boundary")?,
                long_coefficient: self.long_coefficient,
            }
        } else {
            PhaseFolding::InLinks
        };
        let params = StaggeredParams {
            dims,
            order: GAUGE_ORDER.decode(self.order, "param->order")?,
            precision: PRECISION.decode(self.precision, "param->precision")?,
            precision_sloppy: PRECISION.decode(self.precision_sloppy, "param->precision_sloppy")?,
            phases,
            long_reconstruct: LONG_RECONSTRUCT
                .decode(self.long_reconstruct, "param->long_reconstruct")?,
            long_reconstruct_sloppy: LONG_RECONSTRUCT.decode(
                self.long_reconstruct_sloppy,
                "param->long_reconstruct_sloppy",
            )?,
            precision_refinement: flag(self.refinement_copy, "param->refinement_copy")?
                .then(|| PRECISION.decode(self.precision_refinement, "param->precision_refinement"))
                .transpose()?,
            long_reconstruct_refinement: LONG_RECONSTRUCT.decode(
                self.long_reconstruct_refinement,
                "param->long_reconstruct_refinement",
            )?,
        };
        Ok((
            params,
            host_precision(self.host_precision, "param->host_precision")?,
        ))
    }
}

/// The default staggered link parameters: every field a valid choice,
/// `struct_size` set. A 4x4x4x8 lattice, QDP order, double precision, the
/// phases in the links.
#[no_mangle]
pub extern "C" fn latsol_staggered_param_default() -> latsol_staggered_param {
    guard_value(
        || latsol_staggered_param {
            struct_size: 0,
            dims: [0; 4],
            host_precision: 0,
            order: 0,
            precision: 0,
            precision_sloppy: 0,
            fold_phases: 0,
            t_boundary: 0,
            long_coefficient: 0.0,
            long_reconstruct: 0,
            long_reconstruct_sloppy: 0,
            refinement_copy: 0,
            precision_refinement: 0,
            long_reconstruct_refinement: 0,
        },
        latsol_staggered_param::defaults,
    )
}

/// Loads the links of a staggered operator and stores the new handle in
/// `*links`: `host_fat` the one-hop links (fat links of asqtad or HISQ, or
/// the thin links of the naive operator), `host_long` the three-hop long
/// links (the link from x to x+3mu) or NULL for the naive operator; each in
/// `param->order` (QDP: `void *links[4]`; MILC: one array of V*4 links).
/// The arrays are only read.
///
/// Errors: NULL pointers other than `host_long` (NULL_POINTER); a stale
/// `ctx` (INVALID_HANDLE); a wrong `struct_size`, unknown enum values, CPS
/// order, packed precisions, NaN or Inf in a link (INVALID_ARGUMENT, naming
/// the site); a format a backend lacks (UNSUPPORTED: the CUDA backend holds
/// double and single links so far). On an error `*links` is unchanged.
///
/// # Safety
/// Pointers are NULL or valid for what they are documented to hold.
#[no_mangle]
pub unsafe extern "C" fn latsol_staggered_load(
    ctx: *mut latsol_context,
    param: *const latsol_staggered_param,
    host_fat: *const c_void,
    host_long: *const c_void,
    links: *mut *mut latsol_staggered,
) -> latsol_status {
    call("latsol_staggered_load", || {
        let context = unsafe { boundary::borrow(ctx.cast_const(), "ctx")? };
        let checked = (|| {
            boundary::check_ptr(links.cast_const(), "links")?;
            let (params, host) = unsafe { boundary::read_versioned(param, "param")? }.to_safe()?;
            // The host arrays are shaped as a gauge field's of this order.
            let shape = GaugeParams {
                dims: params.dims,
                order: params.order,
                ..Default::default()
            };
            let fat = unsafe { host_gauge_arrays(&shape, host, host_fat)? };
            let long = if host_long.is_null() {
                None
            } else {
                Some(unsafe { host_gauge_arrays(&shape, host, host_long)? })
            };
            Ok((params, fat, long))
        })();
        let (params, fat, long) = collective(context, checked)?;
        let loaded = context.load_staggered(&params, &fat, long.as_ref())?;
        unsafe { links.write(boundary::into_handle::<latsol_staggered>(loaded)) };
        Ok(())
    })
}

/// Frees staggered links (also after their context has ended).
///
/// Errors: NULL (NULL_POINTER); a handle already freed or not made by
/// latsol (INVALID_HANDLE; detected in practice, not guaranteed).
///
/// # Safety
/// `links` is NULL or a handle from `latsol_staggered_load`.
#[no_mangle]
pub unsafe extern "C" fn latsol_staggered_free(links: *mut latsol_staggered) -> latsol_status {
    call("latsol_staggered_free", || unsafe {
        boundary::free(links, "links")
    })
}

/// A staggered solve. Start from `latsol_staggered_invert_param_default()`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct latsol_staggered_invert_param {
    /// `sizeof(latsol_staggered_invert_param)` as the caller was compiled.
    pub struct_size: usize,
    /// The quark mass m of `M = 2m - D`; finite and > 0.
    pub mass: f64,
    /// EVEN (default), ODD or FULL.
    pub solve: latsol_staggered_solve,
    /// Target `|b - M x| / |b|` of the full system; default 1e-10.
    pub tol: f64,
    /// Iteration limit; default 10000.
    pub maxiter: i32,
    /// Precision of the source and solution arrays: DOUBLE or SINGLE.
    pub host_precision: latsol_precision,
    /// Precision of the solve: the links' `precision`.
    pub precision: latsol_precision,
    /// Sloppy precision: `precision` (plain CG) or the links'
    /// `precision_sloppy` (CG with reliable updates).
    pub precision_sloppy: latsol_precision,
    /// Reliable-update threshold delta, in (0, 1); default 0.1.
    pub reliable_delta: f64,
    /// 1 (default): mixed CG with the stabilisations of Clark et al. 2022
    /// section 3.1; 0: without.
    pub cg_stabilised: i32,
    /// 1: `solution` holds an initial guess; 0 (default): start from zero.
    pub use_init_guess: i32,
    /// Target of MILC's heavy-quark residual
    /// `sqrt(mean_x |r(x)|^2 / |x(x)|^2)` as a second stop criterion
    /// (QUDA's QUDA_HEAVY_QUARK_RESIDUAL); 0 (default): off. The residual is
    /// reported in `latsol_invert_result.true_residual_hq` either way.
    pub tol_hq: f64,
    /// `LATSOL_SOLVER_CG` (default: CG on the even-odd system, on the
    /// normal equations for FULL), `_BICGSTAB` or `_BICGSTABL` (on the
    /// even-odd system, or on `M` itself for FULL); GCR is refused. Several
    /// sources in blocks and multi-shift solves take CG only. (Added after
    /// the first version: a caller built before it gets CG.)
    pub solver: latsol_solver,
    /// l of BiCGstab(l), at least 1; default 4.
    pub bicgstab_l: i32,
    /// Multi-shift: 1: the refinement after a mixed multi-shift phase runs
    /// in `precision_refinement` (QUDA's `cuda_prec_refinement_sloppy`; the
    /// links need a copy in it, `latsol_staggered_param.refinement_copy`);
    /// 0 (default): in `precision_sloppy`. (Added after the first version.)
    pub refinement_precision_set: i32,
    pub precision_refinement: latsol_precision,
}

unsafe impl Versioned for latsol_staggered_invert_param {
    const NAME: &'static str = "latsol_staggered_invert_param";
    const V1_SIZE: usize = std::mem::offset_of!(latsol_staggered_invert_param, solver);
    fn defaults() -> Self {
        let d = StaggeredInvertParams::default();
        latsol_staggered_invert_param {
            struct_size: size_of::<latsol_staggered_invert_param>(),
            mass: d.mass,
            solve: STAGGERED_SOLVE.encode(d.solve),
            tol: d.tol,
            maxiter: d.maxiter as i32,
            host_precision: host_precision_code(HostPrecision::F64),
            precision: PRECISION.encode(d.precision),
            precision_sloppy: PRECISION.encode(d.precision_sloppy),
            reliable_delta: d.reliable_delta,
            cg_stabilised: 1,
            use_init_guess: 0,
            tol_hq: d.tol_hq,
            solver: SOLVER.encode(d.solver),
            bicgstab_l: d.bicgstab_l as i32,
            refinement_precision_set: 0,
            precision_refinement: PRECISION.encode(d.precision_sloppy),
        }
    }
}

impl latsol_staggered_invert_param {
    fn to_safe(self) -> Result<(StaggeredInvertParams, HostPrecision)> {
        // latsol.h's contract: m > 0 (the safe API takes any finite mass,
        // as QUDA's face needs).
        if !(self.mass.is_finite() && self.mass > 0.0) {
            return Err(Error::InvalidArgument(format!(
                "param->mass = {}: the staggered solves of latsol.h take m > 0",
                self.mass
            )));
        }
        let maxiter = usize::try_from(self.maxiter).unwrap_or(0);
        let params = StaggeredInvertParams {
            mass: self.mass,
            solve: STAGGERED_SOLVE.decode(self.solve, "param->solve")?,
            tol: self.tol,
            tol_hq: self.tol_hq,
            maxiter,
            precision: PRECISION.decode(self.precision, "param->precision")?,
            precision_sloppy: PRECISION.decode(self.precision_sloppy, "param->precision_sloppy")?,
            reliable_delta: self.reliable_delta,
            cg_stabilised: flag(self.cg_stabilised, "param->cg_stabilised")?,
            use_init_guess: flag(self.use_init_guess, "param->use_init_guess")?,
            progress_every: 0,
            measure_multishift_phase: false,
            precision_refinement: flag(
                self.refinement_precision_set,
                "param->refinement_precision_set",
            )?
            .then(|| PRECISION.decode(self.precision_refinement, "param->precision_refinement"))
            .transpose()?,
            multishift_refinement: Default::default(),
            solver: SOLVER.decode(self.solver, "param->solver")?,
            // A negative l is refused as l = 0 is (validation).
            bicgstab_l: usize::try_from(self.bicgstab_l).unwrap_or(0),
        };
        Ok((
            params,
            host_precision(self.host_precision, "param->host_precision")?,
        ))
    }
}

/// The default staggered solve: every field a valid choice, `struct_size`
/// set. Mass 0.1, even-odd CG on the even sites, tol 1e-10, double.
#[no_mangle]
pub extern "C" fn latsol_staggered_invert_param_default() -> latsol_staggered_invert_param {
    guard_value(
        || latsol_staggered_invert_param {
            struct_size: 0,
            mass: 0.0,
            solve: 0,
            tol: 0.0,
            maxiter: 0,
            host_precision: 0,
            precision: 0,
            precision_sloppy: 0,
            reliable_delta: 0.0,
            cg_stabilised: 0,
            use_init_guess: 0,
            tol_hq: 0.0,
            solver: 0,
            bicgstab_l: 0,
            refinement_precision_set: 0,
            precision_refinement: 0,
        },
        latsol_staggered_invert_param::defaults,
    )
}

/// Solves `M x = b`, `M = 2m - D`, for one source on the staggered links
/// `links`: `source` and `solution` are full colour-vector fields of V*6
/// reals (3 complex colours a site, even sites first), separate arrays.
/// The solution is of the full system whatever `param->solve`.
///
/// Returns SUCCESS when `result->true_residual <= tol`; NOT_CONVERGED when
/// `maxiter` was reached first (`solution` and `result` then hold the best
/// solution and its residual). Other errors: NULL pointers (NULL_POINTER);
/// stale or foreign handles (INVALID_HANDLE); a wrong `struct_size`,
/// unknown enum values, mass <= 0, NaN or Inf, tol outside (0, 1) or below
/// the roundoff of `precision`, maxiter <= 0, NaN or Inf in the source,
/// precisions the links were not loaded in (INVALID_ARGUMENT); after those
/// `solution` and `result` are untouched.
///
/// # Safety
/// Handles are NULL or from latsol; `param` is NULL or points to a
/// `latsol_staggered_invert_param` of its `struct_size`; `solution` and
/// `source` are NULL or point to V*6 reals; `result` is NULL or points to a
/// `latsol_invert_result` of its `struct_size`.
#[no_mangle]
pub unsafe extern "C" fn latsol_invert_staggered(
    ctx: *mut latsol_context,
    links: *const latsol_staggered,
    param: *const latsol_staggered_invert_param,
    solution: *mut c_void,
    source: *const c_void,
    result: *mut latsol_invert_result,
) -> latsol_status {
    call("latsol_invert_staggered", || {
        let context = unsafe { boundary::borrow(ctx.cast_const(), "ctx")? };
        let checked = (|| {
            let links = unsafe { boundary::borrow(links, "links")? };
            let (params, host) = unsafe { boundary::read_versioned(param, "param")? }.to_safe()?;
            let result_size = unsafe { boundary::check_out_struct(result, "result")? };
            let len = links.lattice().volume() * COLOUR_REALS;
            let source_reals = unsafe { boundary::host_reals(source, len, host, "source")? };
            boundary::check_disjoint(
                (source, "source"),
                (solution.cast_const(), "solution"),
                len,
                host,
            )?;
            let solution_reals =
                unsafe { boundary::host_reals_mut(solution, len, host, "solution")? };
            Ok((links, params, result_size, source_reals, solution_reals))
        })();
        let (links, params, result_size, source_reals, solution_reals) =
            collective(context, checked)?;
        let r = context.invert_staggered(links, &params, source_reals, solution_reals)?;
        unsafe { write_result(result, result_size, &r, params.maxiter, params.tol) }
    })
}

/// Applies a staggered operator of mass `param->mass`: `LATSOL_OP_DSLASH`
/// (the hopping term D), `LATSOL_OP_M` (`2m - D`), `LATSOL_OP_MDAG`
/// (`2m + D`) on full fields of V*6 reals, `LATSOL_OP_MPC`
/// (`4m^2 - D_pq D_qp`) on fields of (V/2)*6 reals of the parity of
/// `param->solve` (EVEN or ODD). In the links' precision; `out` and `in`
/// separate arrays of `param->host_precision`.
///
/// Errors: as `latsol_invert_staggered`, plus an operator other than these
/// four, MPC with a FULL solve (INVALID_ARGUMENT). On any error `out` is
/// untouched.
///
/// # Safety
/// As `latsol_invert_staggered`; `out` and `in` are NULL or point to as
/// many reals as `op` needs.
#[no_mangle]
pub unsafe extern "C" fn latsol_apply_staggered(
    ctx: *mut latsol_context,
    links: *const latsol_staggered,
    param: *const latsol_staggered_invert_param,
    op: latsol_operator,
    out: *mut c_void,
    r#in: *const c_void,
) -> latsol_status {
    call("latsol_apply_staggered", || {
        let context = unsafe { boundary::borrow(ctx.cast_const(), "ctx")? };
        let checked = (|| {
            let links = unsafe { boundary::borrow(links, "links")? };
            let (params, host) = unsafe { boundary::read_versioned(param, "param")? }.to_safe()?;
            let op = match (op, params.solve) {
                (LATSOL_OP_DSLASH, _) => StaggeredOp::Dslash,
                (LATSOL_OP_M, _) => StaggeredOp::M,
                (LATSOL_OP_MDAG, _) => StaggeredOp::MDag,
                (LATSOL_OP_MPC, StaggeredSolve::EvenOdd(p)) => StaggeredOp::MPc(p),
                (LATSOL_OP_MPC, StaggeredSolve::Full) => {
                    return Err(Error::InvalidArgument(
                        "op = LATSOL_OP_MPC needs param->solve EVEN or ODD (its parity)".into(),
                    ))
                }
                (other, _) => {
                    return Err(Error::InvalidArgument(format!(
                        "op = {other}: a staggered operator is LATSOL_OP_DSLASH, _M, _MDAG or _MPC"
                    )))
                }
            };
            let lat: &Lattice = links.lattice();
            let sites = match op {
                StaggeredOp::MPc(_) => lat.half_volume(),
                _ => lat.volume(),
            };
            let len = sites * COLOUR_REALS;
            let input = unsafe { boundary::host_reals(r#in, len, host, "in")? };
            boundary::check_disjoint((r#in, "in"), (out.cast_const(), "out"), len, host)?;
            let output = unsafe { boundary::host_reals_mut(out, len, host, "out")? };
            Ok((links, params, op, input, output))
        })();
        let (links, params, op, input, output) = collective(context, checked)?;
        context.apply_staggered(links, params.mass, op, input, output)
    })
}

/// Solves `(A + shifts[i]) x_i = b` for `num_shifts` shifts at once by
/// multi-shift CG on the staggered links `links`: `A = 4m^2 - D_pq D_qp` on
/// the parity of `param->solve` (EVEN or ODD: the RHMC systems MILC gives
/// QUDA), or `M^dag M` on the full lattice (FULL).
///
/// - `shifts`: `num_shifts` (1 to `LATSOL_MAX_SHIFTS`) distinct, finite,
///   non-negative numbers, in any order.
/// - `tol_shifts`: NULL (every shift to `param->tol`) or `num_shifts`
///   tolerances, `|b - (A + shifts[i]) x_i| / |b|`.
/// - `solutions`: `num_shifts` pointers to separate arrays; `source`: one
///   array; each (V/2)*6 reals of the solve's parity (V*6 for FULL), in
///   `param->host_precision`.
/// - Mixed precision when `param->precision_sloppy` is coarser than
///   `precision` (clark2022 section 3.2): a sloppy multi-shift phase with
///   reliable updates, then a mixed-precision CG refinement per shift.
///
/// Returns SUCCESS when every shift met its tolerance; NOT_CONVERGED when
/// `maxiter` was reached first (the solutions and `result` are then
/// written). Other errors (nothing written): as
/// `latsol_invert_staggered`, plus a `num_shifts` out of range, NaN, Inf,
/// negative or duplicate shifts, overlapping arrays.
///
/// # Safety
/// As `latsol_invert_staggered`; `shifts` (and `tol_shifts` unless NULL)
/// point to `num_shifts` doubles; `solutions` to `num_shifts` pointers;
/// `result` is NULL or a `latsol_multishift_result` of its `struct_size`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn latsol_invert_multishift_staggered(
    ctx: *mut latsol_context,
    links: *const latsol_staggered,
    param: *const latsol_staggered_invert_param,
    num_shifts: i32,
    shifts: *const f64,
    tol_shifts: *const f64,
    solutions: *mut *mut c_void,
    source: *const c_void,
    result: *mut latsol_multishift_result,
) -> latsol_status {
    call("latsol_invert_multishift_staggered", || {
        let context = unsafe { boundary::borrow(ctx.cast_const(), "ctx")? };
        let checked = (|| {
            let links = unsafe { boundary::borrow(links, "links")? };
            let (params, host) = unsafe { boundary::read_versioned(param, "param")? }.to_safe()?;
            let names = ("num_shifts", "shifts", "tol_shifts");
            let (shifts, tols) = unsafe { read_systems(num_shifts, shifts, tol_shifts, names)? };
            let result_size = unsafe { boundary::check_out_struct(result, "result")? };
            let sites = match params.solve {
                StaggeredSolve::EvenOdd(_) => links.lattice().half_volume(),
                StaggeredSolve::Full => links.lattice().volume(),
            };
            let len = sites * COLOUR_REALS;
            let source_reals = unsafe { boundary::host_reals(source, len, host, "source")? };
            let outs = unsafe {
                solution_arrays(solutions.cast_const(), shifts.len(), len, host, source)?
            };
            Ok((links, params, shifts, tols, result_size, source_reals, outs))
        })();
        let (links, params, shifts, tols, result_size, source_reals, outs) =
            collective(context, checked)?;
        let r = context.invert_multishift_staggered(
            links,
            &params,
            &shifts,
            tols.as_deref(),
            source_reals,
            outs,
        )?;
        unsafe { boundary::write_versioned(result, result_size, &(&r).into()) };
        not_converged(&r, params.maxiter)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_solve_code_round_trips() {
        for code in [
            LATSOL_STAGGERED_SOLVE_EVEN,
            LATSOL_STAGGERED_SOLVE_ODD,
            LATSOL_STAGGERED_SOLVE_FULL,
        ] {
            let v = STAGGERED_SOLVE.decode(code, "solve").unwrap();
            assert_eq!(STAGGERED_SOLVE.encode(v), code);
        }
        assert!(STAGGERED_SOLVE.decode(3, "solve").is_err());
    }
}
