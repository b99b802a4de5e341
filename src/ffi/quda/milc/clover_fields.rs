//! MILC's resident Wilson-clover fields and the multi-shift solve on them,
//! as QUDA 9521952's lib/milc_interface.cpp has them:
//! `qudaLoadGaugeField`, `qudaLoadCloverField` (refused while a clover
//! field is loaded: "Clover term already allocated"), `qudaFreeCloverField`
//! (refused when none is), and `qudaCloverMultishiftInvert`:
//! `(M̂†M̂ + offset_i) x_i = b` on the even parity, M̂ the asymmetric even-odd
//! clover operator (`A_ee − κ² D_eo A_oo⁻¹ D_oe`), KAPPA normalization,
//! per-offset L2 targets (none may be zero); one zero offset is one
//! `invertQuda` (CG, or BiCGstab with `QUDA_MILC_CLOVER_SOLVER=BICGSTAB_SOLVER`).

use std::os::raw::{c_int, c_void};

use super::clover_params::{gauge_param, invert_param};
use crate::error::Error;
use crate::ffi::quda::abi::*;
use crate::ffi::quda::errors::{quda_call, quda_collective};
use crate::ffi::quda::host::not_null;
use crate::ffi::quda::{fields, invert, state};

/// `qudaLoadGaugeField(...)`: MILC's links, loaded as they are.
///
/// # Safety
/// `milc_link` holds this rank's links in MILC order (V·4·18 reals).
#[no_mangle]
pub unsafe extern "C" fn qudaLoadGaugeField(
    external_precision: c_int,
    quda_precision: c_int,
    inv_args: QudaInvertArgs_t,
    milc_link: *mut c_void,
) {
    quda_collective("qudaLoadGaugeField", || {
        not_null(milc_link, "milc_link")?;
        let mut gp = gauge_param(external_precision, quda_precision, &inv_args)?;
        // SAFETY: as the caller promises.
        unsafe { fields::load_gauge(milc_link, &mut gp) }
    })
}

/// `qudaLoadCloverField(...)`: the packed clover field (or, with NULL, the
/// term computed from `clover_coeff` on the loaded links); the inverse is
/// recomputed (QUDA's default build ignores the host one too).
///
/// # Safety
/// `milc_clover` is NULL or holds V·72 reals; `trlog` two doubles when
/// `compute_trlog`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qudaLoadCloverField(
    external_precision: c_int,
    quda_precision: c_int,
    inv_args: QudaInvertArgs_t,
    milc_clover: *mut c_void,
    _milc_clover_inv: *mut c_void,
    _solution_type: QudaSolutionType,
    _solve_type: QudaSolveType,
    _inverter: QudaInverterType,
    clover_coeff: f64,
    compute_trlog: c_int,
    _trlog: *mut f64,
) {
    quda_collective("qudaLoadCloverField", || {
        if compute_trlog != 0 {
            return Err(Error::Unsupported(
                "compute_trlog: the clover term's tr log A is not provided".into(),
            ));
        }
        if state::with(|s| Ok(s.clover.is_some()))? {
            return Err(Error::InvalidArgument(
                "a clover field is loaded: free it first (qudaFreeCloverField; QUDA: Clover term \
                 already allocated)"
                    .into(),
            ));
        }
        let mut ip = invert_param(
            external_precision,
            quda_precision,
            &inv_args,
            0.0,
            clover_coeff,
        );
        // SAFETY: as the caller promises.
        unsafe { fields::load_clover(milc_clover, &mut ip) }
    })
}

/// `qudaFreeCloverField()`: refused when no clover field is loaded, as
/// QUDA refuses it.
#[no_mangle]
pub extern "C" fn qudaFreeCloverField() {
    quda_call("qudaFreeCloverField", || {
        state::with(|s| match s.clover.take() {
            Some(_) => Ok(()),
            None => Err(Error::InvalidArgument(
                "no clover field is loaded (QUDA: Trying to free non-allocated clover term)".into(),
            )),
        })
    })
}

/// `qudaCloverMultishiftInvert(...)` on the loaded gauge and clover fields.
///
/// # Safety
/// `offset` and `target_residual` hold `num_offsets` numbers,
/// `solutionArray` `num_offsets` pointers; the vectors hold the even
/// parity (V/2·24 reals of `external_precision`); `final_residual`
/// `num_offsets` doubles.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn qudaCloverMultishiftInvert(
    external_precision: c_int,
    quda_precision: c_int,
    num_offsets: c_int,
    offset: *mut f64,
    kappa: f64,
    clover_coeff: f64,
    inv_args: QudaInvertArgs_t,
    target_residual: *mut f64,
    source: *mut c_void,
    solution_array: *mut *mut c_void,
    final_residual: *mut f64,
    num_iters: *mut c_int,
) {
    quda_collective("qudaCloverMultishiftInvert", || {
        if !(1..=QUDA_MAX_MULTI_SHIFT).contains(&num_offsets) {
            return Err(Error::InvalidArgument(format!(
                "num_offsets = {num_offsets}: 1 to {QUDA_MAX_MULTI_SHIFT}"
            )));
        }
        let n = num_offsets as usize;
        for (p, name) in [
            (offset.cast_const(), "offset"),
            (target_residual.cast_const(), "target_residual"),
            (final_residual.cast_const(), "final_residual"),
        ] {
            not_null(p, name)?;
        }
        not_null(source, "source")?;
        not_null(solution_array, "solutionArray")?;
        not_null(num_iters, "num_iters")?;
        // SAFETY: num_offsets entries each, as the caller promises.
        let (offsets, targets, xs) = unsafe {
            (
                std::slice::from_raw_parts(offset, n),
                std::slice::from_raw_parts(target_residual, n),
                std::slice::from_raw_parts(solution_array, n),
            )
        };
        if let Some(i) = targets.iter().position(|&t| t == 0.0) {
            return Err(Error::InvalidArgument(format!(
                "target_residual[{i}] = 0: a multi-shift target cannot be zero (as in QUDA)"
            )));
        }
        let mut ip = invert_param(
            external_precision,
            quda_precision,
            &inv_args,
            kappa,
            clover_coeff,
        );
        ip.residual_type = QUDA_L2_RELATIVE_RESIDUAL;
        ip.solution_type = QUDA_MATPCDAG_MATPC_SOLUTION;
        ip.solve_type = QUDA_NORMOP_PC_SOLVE;
        ip.inv_type = QUDA_CG_INVERTER;
        ip.matpc_type = QUDA_MATPC_EVEN_EVEN_ASYMMETRIC;
        ip.tol = targets[0];
        ip.num_offset = num_offsets;
        ip.offset[..n].copy_from_slice(offsets);
        ip.tol_offset[..n].copy_from_slice(targets);
        let mut outputs = vec![0.0; n];
        if n == 1 && offsets[0] == 0.0 {
            if std::env::var("QUDA_MILC_CLOVER_SOLVER").as_deref() == Ok("BICGSTAB_SOLVER") {
                ip.inv_type = QUDA_BICGSTAB_INVERTER;
                ip.solve_type = QUDA_DIRECT_PC_SOLVE;
            }
            not_null(xs[0], "solutionArray[0]")?;
            // SAFETY: the caller's vectors.
            unsafe { invert::invert(xs[0], source, &mut ip)? };
            outputs[0] = ip.true_res[0];
        } else {
            // SAFETY: the caller's vectors.
            unsafe { invert::invert_multishift(solution_array, source, &mut ip)? };
            outputs.copy_from_slice(&ip.true_res_offset[..n]);
        }
        // SAFETY: num_offsets outputs and the iteration count, as promised.
        unsafe {
            std::slice::from_raw_parts_mut(final_residual, n).copy_from_slice(&outputs);
            *num_iters = ip.iter;
        }
        Ok(())
    })
}
