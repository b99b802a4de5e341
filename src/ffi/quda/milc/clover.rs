//! `qudaCloverInvert`: MILC's Wilson-clover solve, through the `quda.h`
//! entry points' bodies (the fields MILC passes loaded and freed within
//! the call, as QUDA 9521952's lib/milc_interface.cpp does).

use std::os::raw::{c_int, c_void};

use super::clover_params::{gauge_param, invert_param};
use super::targets::check_targets;
use crate::ffi::quda::abi::*;
use crate::ffi::quda::errors::quda_collective;
use crate::ffi::quda::host::not_null;
use crate::ffi::quda::{fields, invert, state};

/// `qudaCloverInvert(...)`: `M x = b`, `M = A − κ D`, on the full lattice
/// in the DeGrand–Rossi basis (MILC applies its own basis change), links
/// in MILC order with the boundary phases already in them, the clover
/// field in QUDA's packed order (its inverse is recomputed, as QUDA
/// does); even-odd BiCGstab, or CG on the normal equations when
/// `inv_args.solver_type` is CG; from zero. As in QUDA: links given are
/// loaded and freed (with every link field) within the call, NULL links
/// use the loaded field; a clover field (or its inverse) given is loaded
/// and freed within the call (a NULL clover with an inverse given: the
/// clover term computed from `clover_coeff`), neither given uses the
/// loaded one. The targets are QUDA's: the L2 one (`target_residual`),
/// MILC's heavy-quark one (`target_fermilab_residual`), or both (a zero
/// target is off; both zero is an error); `final_fermilab_residual` is the
/// solution's heavy-quark residual where that target is set (else 0).
///
/// # Safety
/// MILC's arrays: links V·4·18, clover V·72, vectors V·24 reals of
/// `external_precision`; the outputs writable.
#[no_mangle]
pub unsafe extern "C" fn qudaCloverInvert(
    external_precision: c_int,
    quda_precision: c_int,
    kappa: f64,
    clover_coeff: f64,
    inv_args: QudaInvertArgs_t,
    target_residual: f64,
    target_fermilab_residual: f64,
    milc_link: *const c_void,
    milc_clover: *mut c_void,
    milc_clover_inv: *mut c_void,
    source: *mut c_void,
    solution: *mut c_void,
    final_residual: *mut f64,
    final_fermilab_residual: *mut f64,
    num_iters: *mut c_int,
) {
    quda_collective("qudaCloverInvert", || {
        check_targets(target_residual, target_fermilab_residual)?;
        not_null(source, "source")?;
        not_null(solution, "solution")?;
        for (p, name) in [
            (final_residual, "final_residual"),
            (final_fermilab_residual, "final_fermilab_residual"),
        ] {
            not_null(p, name)?;
        }
        not_null(num_iters, "num_iters")?;
        let mut gp = gauge_param(external_precision, quda_precision, &inv_args)?;
        let load_links = !milc_link.is_null();
        let load_clover = !milc_clover.is_null() || !milc_clover_inv.is_null();
        let mut ip = invert_param(
            external_precision,
            quda_precision,
            &inv_args,
            kappa,
            clover_coeff,
        );
        let cg = inv_args.solver_type == QUDA_CG_INVERTER;
        ip.inv_type = if cg {
            QUDA_CG_INVERTER
        } else {
            QUDA_BICGSTAB_INVERTER
        };
        ip.solution_type = QUDA_MAT_SOLUTION;
        ip.solve_type = if cg {
            QUDA_NORMOP_PC_SOLVE
        } else {
            QUDA_DIRECT_PC_SOLVE
        };
        // QUDA's: the odd parity's Schur system (the answer is the full
        // system's either way).
        ip.matpc_type = QUDA_MATPC_ODD_ODD;
        ip.tol = target_residual;
        ip.tol_hq = target_fermilab_residual;
        ip.residual_type = match (target_residual > 0.0, target_fermilab_residual > 0.0) {
            (true, true) => QUDA_L2_RELATIVE_RESIDUAL | QUDA_HEAVY_QUARK_RESIDUAL,
            (false, true) => QUDA_HEAVY_QUARK_RESIDUAL,
            _ => QUDA_L2_RELATIVE_RESIDUAL,
        };
        let outcome = (|| {
            // SAFETY: MILC's links, clover field and vectors.
            unsafe {
                if load_links {
                    fields::load_gauge(milc_link as *mut c_void, &mut gp)?;
                }
                if load_clover {
                    fields::load_clover(milc_clover, &mut ip)?;
                }
                invert::invert(solution, source, &mut ip)
            }
        })();
        // What the call loaded it frees, also on a failure (QUDA frees the
        // links with qudaFreeGaugeField: every link field).
        state::with(|s| {
            if load_clover {
                s.clover = None;
            }
            if load_links {
                s.gauge = None;
                s.staggered = None;
            }
            Ok(())
        })?;
        outcome?;
        // SAFETY: checked non-null.
        unsafe {
            *final_residual = ip.true_res[0];
            *final_fermilab_residual = ip.true_res_hq[0];
            *num_iters = ip.iter;
        }
        Ok(())
    })
}
