//! `QUDA_GCR_INVERTER` in `invertQuda`: the Krylov space (`gcrNkrylov`)
//! and the preconditioner fields, checked as QUDA's `checkInvertParam`
//! checks them (lib/check_params.h at 9521952: `gcrNkrylov`, and with an
//! MR preconditioner `tol_precondition`, `maxiter_precondition`,
//! `verbosity_precondition`, `precondition_cycle` must be set), then
//! mapped onto latsol's GCR and its Schwarz procedure.
//!
//! QUDA's MR preconditioner with `schwarz_type` runs `maxiter_precondition`
//! MR steps (no tolerance: `tol_precondition` must be set, as QUDA checks,
//! but a preconditioner's MR runs its steps) on domains with Dirichlet
//! boundaries, in `precondition_cycle` passes (multiplicative: the two
//! colours of domains in turn, so an even count; docs/quda-gcr-sap.md §2–3). latsol's domains are its SAP
//! boxes (the default extent, never crossing a rank) where QUDA's are the
//! ranks' sub-lattices: the same method on smaller domains, so the
//! iteration counts differ, the solution does not. Refused by name rather
//! than replaced: any other preconditioner, MR without a Schwarz type, a
//! preconditioner precision other than the sloppy one.

use super::abi::*;
use super::convert::{self, INVALID_DOUBLE};
use crate::api::{BoxSolver, SapParams, Schwarz};
use crate::error::Result;

/// BiCGstab(l)'s l from `gcrNkrylov` (QUDA 9521952,
/// lib/inv_bicgstabl_quda.cpp): unset refused as QUDA's check_params.h
/// refuses it; 0 or less refused where QUDA would index `γ(l − 1)` out of
/// its range. QUDA's BiCGstab(l) takes no preconditioner and ignores
/// `inv_type_precondition`; latsol refuses one rather than ignore it.
pub(crate) fn bicgstab_l(p: &QudaInvertParam) -> Result<usize> {
    let l = gcr_nkrylov(
        p,
        "QUDA_BICGSTABL_INVERTER takes its l",
        "BiCGstab(l) needs l >= 1",
    )?;
    if p.inv_type_precondition != QUDA_INVALID_INVERTER {
        return Err(convert::refuse(
            "param->inv_type_precondition",
            p.inv_type_precondition as i64,
            "QUDA_BICGSTABL_INVERTER runs without a preconditioner (leave it \
             QUDA_INVALID_INVERTER)",
        ));
    }
    Ok(l)
}

/// `gcrNkrylov`, set (`unset`: what the inverter needs it for, as QUDA
/// checks it) and at least 1 (`zero`: why).
fn gcr_nkrylov(p: &QudaInvertParam, unset: &str, zero: &str) -> Result<usize> {
    if p.gcrNkrylov == QUDA_INVALID_ENUM {
        return Err(convert::refuse(
            "param->gcrNkrylov",
            p.gcrNkrylov as i64,
            &format!("unset: {unset} from gcrNkrylov (as QUDA checks)"),
        ));
    }
    if p.gcrNkrylov <= 0 {
        return Err(convert::refuse(
            "param->gcrNkrylov",
            p.gcrNkrylov as i64,
            zero,
        ));
    }
    Ok(p.gcrNkrylov as usize)
}

/// GCR's Krylov space and its Schwarz preconditioner (None: GCR alone).
pub(crate) fn gcr_setup(p: &QudaInvertParam) -> Result<(usize, Option<SapParams>)> {
    // QUDA's GCR returns a zero solution at gcrNkrylov = 0 without an error.
    let nkrylov = gcr_nkrylov(
        p,
        "QUDA_GCR_INVERTER takes the size of its Krylov space",
        "GCR needs a Krylov space of at least one vector",
    )?;
    match p.inv_type_precondition {
        QUDA_INVALID_INVERTER => Ok((nkrylov, None)),
        QUDA_MR_INVERTER => Ok((nkrylov, Some(mr_schwarz(p)?))),
        v => Err(convert::refuse(
            "param->inv_type_precondition",
            v as i64,
            "GCR here takes no preconditioner (QUDA_INVALID_INVERTER) or MR with a \
             schwarz_type; it substitutes no other",
        )),
    }
}

/// The MR-Schwarz preconditioner's fields.
fn mr_schwarz(p: &QudaInvertParam) -> Result<SapParams> {
    let schwarz = match p.schwarz_type {
        QUDA_ADDITIVE_SCHWARZ => Schwarz::Additive,
        QUDA_MULTIPLICATIVE_SCHWARZ => Schwarz::Multiplicative,
        v => {
            return Err(convert::refuse(
                "param->schwarz_type",
                v as i64,
                "an MR preconditioner runs on Schwarz domains here: ADDITIVE or MULTIPLICATIVE",
            ))
        }
    };
    if p.tol_precondition == INVALID_DOUBLE || !p.tol_precondition.is_finite() {
        return Err(crate::error::Error::InvalidArgument(format!(
            "param->tol_precondition = {:e}: unset or not finite (QUDA checks it for an MR \
             preconditioner)",
            p.tol_precondition
        )));
    }
    if p.verbosity_precondition == QUDA_INVALID_VERBOSITY {
        return Err(convert::refuse(
            "param->verbosity_precondition",
            p.verbosity_precondition as i64,
            "unset (QUDA checks it for an MR preconditioner)",
        ));
    }
    if p.maxiter_precondition == QUDA_INVALID_ENUM || p.maxiter_precondition <= 0 {
        return Err(convert::refuse(
            "param->maxiter_precondition",
            p.maxiter_precondition as i64,
            "the MR steps of a preconditioner application: at least 1",
        ));
    }
    if p.precondition_cycle <= 0 {
        return Err(convert::refuse(
            "param->precondition_cycle",
            p.precondition_cycle as i64,
            "Schwarz passes of a preconditioner application: at least 1",
        ));
    }
    // QUDA's multiplicative passes alternate the two colours of domains,
    // one colour a pass, and its MR refuses an odd count
    // (lib/inv_mr_quda.cpp:18-20); a latsol cycle is both colours.
    let cycles = match schwarz {
        Schwarz::Multiplicative if p.precondition_cycle % 2 != 0 => {
            return Err(convert::refuse(
                "param->precondition_cycle",
                p.precondition_cycle as i64,
                "multiplicative Schwarz alternates the two colours of domains a pass: an even \
                 number of passes (as QUDA requires)",
            ))
        }
        Schwarz::Multiplicative => p.precondition_cycle as usize / 2,
        Schwarz::Additive => p.precondition_cycle as usize,
    };
    let precise = convert::precision(p.cuda_prec, "param->cuda_prec")?;
    let sloppy = convert::precision_or(p.cuda_prec_sloppy, "param->cuda_prec_sloppy", precise)?;
    if p.cuda_prec_precondition != QUDA_INVALID_PRECISION {
        let pre = convert::precision(p.cuda_prec_precondition, "param->cuda_prec_precondition")?;
        if pre != sloppy {
            return Err(convert::refuse(
                "param->cuda_prec_precondition",
                p.cuda_prec_precondition as i64,
                "the preconditioner runs in cuda_prec_sloppy here (the gauge field's sloppy \
                 copy): set them equal",
            ));
        }
    }
    Ok(SapParams {
        cycles,
        ssor_iterations: p.maxiter_precondition as usize,
        omega: p.omega,
        schwarz,
        box_solver: BoxSolver::Mr,
        ..Default::default()
    })
}
