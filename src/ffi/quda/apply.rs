//! `MatQuda`, `MatDagMatQuda`, `dslashQuda`: the Wilson and Wilson-clover
//! operators applied to the caller's vectors, in the caller's
//! normalization (`wilson`).

use std::os::raw::c_void;

use super::abi::*;
use super::convert;
use super::errors::quda_collective;
use super::host::{host_reals, host_reals_mut, not_null};
use super::staggered::{self, Application};
use super::state;
use super::wilson::{
    block_start, invert_params, matpc_parity, negate_odd_block, operator_fields, read_scaled,
    write_scaled, Solution,
};
use crate::api::OperatorKind;
use crate::error::Result;

/// Applies `ops` in turn to the caller's vector (on a full field; a
/// single-parity vector is placed in its parity's block) and writes the
/// result times `scale` (the inverse of the mass-normalization factor).
/// `p` is the caller's parameter struct, copied.
///
/// # Safety
/// `h_in` and `h_out` hold vectors of the system's size in `p.cpu_prec`.
unsafe fn apply_ops(
    what: &str,
    h_out: *mut c_void,
    h_in: *mut c_void,
    p: &QudaInvertParam,
    ops: &[OperatorKind],
    parity_in_out: Option<(crate::lattice::Parity, crate::lattice::Parity)>,
    normalized: bool,
) -> Result<()> {
    not_null(h_out, "h_out")?;
    not_null(h_in, "h_in")?;
    let (mut ip, double) = invert_params(p, false)?;
    let pc = parity_in_out.is_some() || Solution::of(p.solution_type)?.one_parity();
    // A negative κ: |κ|, and ε in and out of the full-lattice operators
    // that hold κ (`negate_odd_block`; D and the clover term hold none, the
    // even-odd operators κ²).
    let flip = ip.kappa < 0.0
        && !pc
        && ops.iter().all(|o| {
            matches!(
                o,
                OperatorKind::M | OperatorKind::MDag | OperatorKind::MDagM
            )
        });
    ip.kappa = ip.kappa.abs();
    let scale = if normalized {
        let solution = Solution::of(p.solution_type)?;
        1.0 / solution.factor(convert::mass_normalization(p.mass_normalization)?, p.kappa)
    } else {
        1.0
    };
    state::with(|s| {
        let fields = operator_fields(s, ip.dslash, what)?;
        let full = fields.gauge.lattice().volume() * 24;
        let half = full / 2;
        let (p_in, p_out) = parity_in_out.unwrap_or_else(|| {
            let q = matpc_parity(ip.matpc);
            (q, q)
        });
        let n = if pc { half } else { full };
        // SAFETY: the caller's input vector.
        let inp = read_scaled(unsafe { host_reals(h_in, n, double) }, 1.0);
        // The even-odd operators take single-parity vectors; the others
        // full ones.
        let single = ops
            .iter()
            .all(|o| matches!(o, OperatorKind::MPc | OperatorKind::MPcDag));
        let mut v = if pc && !single {
            let mut f = vec![0.0; full];
            let at = block_start(ip.dirac_order, p_in, half);
            f[at..at + half].copy_from_slice(&inp);
            f
        } else {
            inp
        };
        if flip {
            negate_odd_block(&mut v, ip.dirac_order);
        }
        for &op in ops {
            let mut out = vec![0.0; v.len()];
            s.context.apply(
                fields,
                &ip,
                op,
                crate::layout::HostReals::F64(&v),
                crate::layout::HostRealsMut::F64(&mut out),
            )?;
            v = out;
        }
        if flip {
            negate_odd_block(&mut v, ip.dirac_order);
        }
        let result = if pc && !single {
            let at = block_start(ip.dirac_order, p_out, half);
            v[at..at + half].to_vec()
        } else {
            v
        };
        // SAFETY: the caller's output vector.
        write_scaled(unsafe { host_reals_mut(h_out, n, double) }, &result, scale);
        Ok(())
    })
}

/// The caller's parameter struct, copied.
///
/// # Safety
/// `param` is null or points to a `QudaInvertParam`.
unsafe fn copy_param(param: *const QudaInvertParam) -> Result<QudaInvertParam> {
    not_null(param, "param")?;
    // SAFETY: checked non-null.
    Ok(unsafe { *param })
}

/// `MatQuda(h_out, h_in, param)`: `M` (MAT) or `M̂` (MATPC, on the
/// `matpc_type` parity) in the caller's normalization, `M†` with DAG_YES.
///
/// # Safety
/// `param` points to a `QudaInvertParam`; the vectors hold the system's size.
#[no_mangle]
pub unsafe extern "C" fn MatQuda(
    h_out: *mut c_void,
    h_in: *mut c_void,
    param: *mut QudaInvertParam,
) {
    quda_collective("MatQuda", || {
        // SAFETY: as the caller promises.
        let mut p = unsafe { copy_param(param)? };
        if !matches!(p.dagger, QUDA_DAG_NO | QUDA_DAG_YES) {
            return Err(convert::refuse(
                "param->dagger",
                p.dagger as i64,
                "DAG_NO or DAG_YES",
            ));
        }
        if staggered::is_staggered(&p) {
            // SAFETY: the caller's vectors.
            return unsafe { staggered::apply(h_out, h_in, &p, Application::Mat, "MatQuda") };
        }
        let dagger = p.dagger == QUDA_DAG_YES;
        p.dagger = QUDA_DAG_NO;
        let op = match (Solution::of(p.solution_type)?, dagger) {
            (Solution::Mat, false) => OperatorKind::M,
            (Solution::Mat, true) => OperatorKind::MDag,
            (Solution::MatPc, false) => OperatorKind::MPc,
            (Solution::MatPc, true) => OperatorKind::MPcDag,
            _ => {
                return Err(convert::refuse(
                    "param->solution_type",
                    p.solution_type as i64,
                    "MatQuda applies MAT or MATPC",
                ))
            }
        };
        // SAFETY: the caller's vectors.
        unsafe { apply_ops("MatQuda", h_out, h_in, &p, &[op], None, true) }
    })
}

/// `MatDagMatQuda(h_out, h_in, param)`: `M†M` (MATDAG_MAT) or `M̂†M̂`
/// (MATPCDAG_MATPC) in the caller's normalization.
///
/// # Safety
/// As for `MatQuda`.
#[no_mangle]
pub unsafe extern "C" fn MatDagMatQuda(
    h_out: *mut c_void,
    h_in: *mut c_void,
    param: *mut QudaInvertParam,
) {
    quda_collective("MatDagMatQuda", || {
        // SAFETY: as the caller promises.
        let mut p = unsafe { copy_param(param)? };
        if staggered::is_staggered(&p) {
            let what = Application::MatDagMat;
            // SAFETY: the caller's vectors.
            return unsafe { staggered::apply(h_out, h_in, &p, what, "MatDagMatQuda") };
        }
        p.dagger = QUDA_DAG_NO;
        let ops: &[OperatorKind] = match Solution::of(p.solution_type)? {
            Solution::MatDagMat | Solution::Mat => {
                p.solution_type = QUDA_MATDAG_MAT_SOLUTION;
                &[OperatorKind::MDagM]
            }
            Solution::MatPcDagMatPc | Solution::MatPc => {
                // The squared normalization, as QUDA applies it.
                p.solution_type = QUDA_MATPCDAG_MATPC_SOLUTION;
                &[OperatorKind::MPc, OperatorKind::MPcDag]
            }
        };
        // SAFETY: the caller's vectors.
        unsafe { apply_ops("MatDagMatQuda", h_out, h_in, &p, ops, None, true) }
    })
}

/// `dslashQuda(h_out, h_in, param, parity)`: the bare hopping term from
/// the other parity into `parity`, `D_pq in` (no −κ, no normalization),
/// times `A_pp⁻¹` for Wilson-clover, on single-parity vectors.
///
/// # Safety
/// As for `MatQuda`, with V/2-site vectors.
#[no_mangle]
pub unsafe extern "C" fn dslashQuda(
    h_out: *mut c_void,
    h_in: *mut c_void,
    param: *mut QudaInvertParam,
    parity: QudaParity,
) {
    quda_collective("dslashQuda", || {
        let out_parity = match parity {
            QUDA_EVEN_PARITY => crate::lattice::Parity::Even,
            QUDA_ODD_PARITY => crate::lattice::Parity::Odd,
            _ => return Err(convert::refuse("parity", parity as i64, "EVEN or ODD")),
        };
        // SAFETY: as the caller promises.
        let mut p = unsafe { copy_param(param)? };
        if staggered::is_staggered(&p) {
            let what = Application::Dslash(out_parity);
            // SAFETY: the caller's vectors.
            return unsafe { staggered::apply(h_out, h_in, &p, what, "dslashQuda") };
        }
        if p.dagger == QUDA_DAG_YES {
            return Err(convert::refuse(
                "param->dagger",
                p.dagger as i64,
                "dslashQuda applies D (DAG_NO)",
            ));
        }
        p.solution_type = QUDA_MATPC_SOLUTION;
        // dslashQuda does not read matpc_type.
        p.matpc_type = QUDA_MATPC_EVEN_EVEN;
        let ops: &[OperatorKind] = if p.dslash_type == QUDA_CLOVER_WILSON_DSLASH {
            &[OperatorKind::Dslash, OperatorKind::CloverInverse]
        } else {
            &[OperatorKind::Dslash]
        };
        let parities = Some((out_parity.other(), out_parity));
        // SAFETY: the caller's vectors.
        unsafe { apply_ops("dslashQuda", h_out, h_in, &p, ops, parities, false) }
    })
}
