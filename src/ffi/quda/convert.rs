//! QUDA's enumerations and parameter structs into latsol's types, and
//! QUDA's markers of an unset field. Every refusal names the field and its
//! value (QUDA's enumerator name where it has one), as QUDA's own parameter
//! checks do.

use super::abi::*;
use crate::api::{
    DslashType, GaugeParams, MassNormalization, MatPc, SolveType, SolverType, Verbosity,
};
use crate::error::{Error, Result};
use crate::layout::{DiracOrder, GammaBasis, GaugeOrder};
use crate::precision::{Precision, Reconstruct, TBoundary};
use std::os::raw::c_int;

/// `struct_size` as `newQuda*Param` leaves it: `(size_t)INT_MIN`, which
/// QUDA's parameter checks take as "not set" (any other value must be the
/// struct's size).
pub(crate) const UNSET_SIZE: usize = QUDA_INVALID_ENUM as isize as usize;
/// QUDA's invalid double (`DBL_MIN`).
pub(crate) const INVALID_DOUBLE: f64 = f64::MIN_POSITIVE;

/// `field = value` is not accepted: `what` says why. The value is named by
/// its enumerator when `field` is of one of QUDA's enumerations.
pub(crate) fn refuse(field: &str, value: i64, what: &str) -> Error {
    let name = enum_of(field).and_then(|e| {
        ENUM_VALUES
            .iter()
            .zip(ENUM_OF)
            .find(|((_, v), of)| *v == value && **of == e)
            .map(|((n, _), _)| *n)
    });
    match name {
        Some(n) => Error::InvalidArgument(format!("{field} = {n} ({value}): {what}")),
        None => Error::InvalidArgument(format!("{field} = {value}: {what}")),
    }
}

/// The enumeration a parameter field is of.
fn enum_of(field: &str) -> Option<&'static str> {
    let f = field.rsplit("->").next().unwrap_or(field);
    Some(match f {
        "cpu_prec"
        | "cuda_prec"
        | "cuda_prec_sloppy"
        | "clover_cpu_prec"
        | "clover_cuda_prec"
        | "clover_cuda_prec_sloppy"
        | "cuda_prec_precondition" => "QudaPrecision",
        "reconstruct" | "reconstruct_sloppy" => "QudaReconstructType",
        "gauge_order" => "QudaGaugeFieldOrder",
        "t_boundary" => "QudaTboundary",
        "type" => "QudaLinkType",
        "dslash_type" => "QudaDslashType",
        "inv_type" | "inv_type_precondition" => "QudaInverterType",
        "solution_type" => "QudaSolutionType",
        "solve_type" => "QudaSolveType",
        "matpc_type" => "QudaMatPCType",
        "mass_normalization" => "QudaMassNormalization",
        "dirac_order" => "QudaDiracFieldOrder",
        "gamma_basis" => "QudaGammaBasis",
        "dagger" => "QudaDagType",
        "clover_order" => "QudaCloverFieldOrder",
        "parity" | "evenodd" => "QudaParity",
        "schwarz_type" => "QudaSchwarzType",
        "verbosity_precondition" => "QudaVerbosity",
        _ => return None,
    })
}

/// The host arrays' precision (`cpu_prec`).
pub(crate) fn host_is_double(v: QudaPrecision, field: &str) -> Result<bool> {
    match v {
        QUDA_DOUBLE_PRECISION => Ok(true),
        QUDA_SINGLE_PRECISION => Ok(false),
        _ => Err(refuse(field, v as i64, "host arrays are double or single")),
    }
}

/// A device precision.
pub(crate) fn precision(v: QudaPrecision, field: &str) -> Result<Precision> {
    Ok(match v {
        QUDA_DOUBLE_PRECISION => Precision::Double,
        QUDA_SINGLE_PRECISION => Precision::Single,
        QUDA_HALF_PRECISION => Precision::Half,
        QUDA_QUARTER_PRECISION => Precision::Quarter,
        _ => return Err(refuse(field, v as i64, "not a precision")),
    })
}

/// A device precision, or `fallback` when left invalid (QUDA's parameter
/// check falls back the same way).
pub(crate) fn precision_or(
    v: QudaPrecision,
    field: &str,
    fallback: Precision,
) -> Result<Precision> {
    if v == QUDA_INVALID_PRECISION {
        Ok(fallback)
    } else {
        precision(v, field)
    }
}

pub(crate) fn reconstruct(v: QudaReconstructType, field: &str) -> Result<Reconstruct> {
    Ok(match v {
        QUDA_RECONSTRUCT_NO => Reconstruct::Full18,
        QUDA_RECONSTRUCT_12 => Reconstruct::Twelve,
        QUDA_RECONSTRUCT_8 => Reconstruct::Eight,
        _ => return Err(refuse(
            field,
            v as i64,
            "Wilson links are stored in 18, 12 or 8 reals (13 and 9 are for staggered long links)",
        )),
    })
}

pub(crate) fn gauge_order(v: QudaGaugeFieldOrder) -> Result<GaugeOrder> {
    Ok(match v {
        QUDA_QDP_GAUGE_ORDER => GaugeOrder::Qdp,
        QUDA_MILC_GAUGE_ORDER => GaugeOrder::Milc,
        QUDA_CPS_WILSON_GAUGE_ORDER => GaugeOrder::CpsWilson,
        _ => {
            return Err(refuse(
                "param->gauge_order",
                v as i64,
                "latsol reads QDP, MILC and CPS_WILSON host links",
            ))
        }
    })
}

pub(crate) fn t_boundary(v: QudaTboundary) -> Result<TBoundary> {
    Ok(match v {
        QUDA_PERIODIC_T => TBoundary::Periodic,
        QUDA_ANTI_PERIODIC_T => TBoundary::AntiPeriodic,
        _ => {
            return Err(refuse(
                "param->t_boundary",
                v as i64,
                "periodic or anti-periodic",
            ))
        }
    })
}

pub(crate) fn verbosity(v: QudaVerbosity) -> Verbosity {
    match v {
        QUDA_SILENT => Verbosity::Silent,
        QUDA_SUMMARIZE | QUDA_INVALID_VERBOSITY => Verbosity::Summarize,
        QUDA_VERBOSE => Verbosity::Verbose,
        _ => Verbosity::Debug,
    }
}

pub(crate) fn dslash_type(v: QudaDslashType) -> Result<DslashType> {
    Ok(match v {
        QUDA_WILSON_DSLASH => DslashType::Wilson,
        QUDA_CLOVER_WILSON_DSLASH => DslashType::CloverWilson,
        _ => {
            return Err(refuse(
                "param->dslash_type",
                v as i64,
                "this entry point takes WILSON and CLOVER_WILSON (staggered: the MILC interface)",
            ))
        }
    })
}

/// QUDA's Krylov solvers latsol runs: CG for QUDA's CG, CA_CG and CG3 (the
/// same Krylov method: the same solution, iteration counts latsol's; PCG
/// where no preconditioner is asked, see `wilson.rs`), BiCGstab for
/// BICGSTAB, flexible GCR for GCR (its fields: `gcr.rs`), BiCGstab(l) for
/// BICGSTABL (l from `gcrNkrylov`, `gcr.rs`). The others are refused by
/// name rather than replaced by another method: CA_GCR, MR as the outer
/// solver, and the rest.
pub(crate) fn solver(v: QudaInverterType) -> Result<SolverType> {
    Ok(match v {
        QUDA_CG_INVERTER | QUDA_CA_CG_INVERTER | QUDA_CG3_INVERTER | QUDA_PCG_INVERTER => {
            SolverType::Cg
        }
        QUDA_BICGSTAB_INVERTER => SolverType::BiCgStab,
        QUDA_GCR_INVERTER => SolverType::Gcr,
        QUDA_BICGSTABL_INVERTER => SolverType::BiCgStabL,
        _ => {
            // `refuse` names the enumerator.
            return Err(refuse(
                "param->inv_type",
                v as i64,
                "not provided (latsol runs CG, CA_CG, CG3, PCG without a preconditioner, \
                 BICGSTAB, BICGSTABL and GCR; it substitutes no other solver)",
            ));
        }
    })
}

pub(crate) fn solve_type(v: QudaSolveType) -> Result<SolveType> {
    Ok(match v {
        QUDA_DIRECT_SOLVE => SolveType::Direct,
        QUDA_DIRECT_PC_SOLVE => SolveType::DirectPc,
        QUDA_NORMOP_SOLVE | QUDA_NORMERR_SOLVE => SolveType::NormOp,
        QUDA_NORMOP_PC_SOLVE | QUDA_NORMERR_PC_SOLVE => SolveType::NormOpPc,
        _ => return Err(refuse("param->solve_type", v as i64, "not a solve type")),
    })
}

pub(crate) fn matpc(v: QudaMatPCType) -> Result<MatPc> {
    Ok(match v {
        QUDA_MATPC_EVEN_EVEN => MatPc::EvenEven,
        QUDA_MATPC_ODD_ODD => MatPc::OddOdd,
        QUDA_MATPC_EVEN_EVEN_ASYMMETRIC => MatPc::EvenEvenAsymmetric,
        QUDA_MATPC_ODD_ODD_ASYMMETRIC => MatPc::OddOddAsymmetric,
        _ => return Err(refuse("param->matpc_type", v as i64, "not a MatPC type")),
    })
}

pub(crate) fn mass_normalization(v: QudaMassNormalization) -> Result<MassNormalization> {
    Ok(match v {
        QUDA_KAPPA_NORMALIZATION => MassNormalization::Kappa,
        QUDA_MASS_NORMALIZATION => MassNormalization::Mass,
        QUDA_ASYMMETRIC_MASS_NORMALIZATION => MassNormalization::AsymmetricMass,
        _ => {
            return Err(refuse(
                "param->mass_normalization",
                v as i64,
                "not a mass normalization",
            ))
        }
    })
}

pub(crate) fn dirac_order(v: QudaDiracFieldOrder) -> Result<DiracOrder> {
    Ok(match v {
        QUDA_DIRAC_ORDER => DiracOrder::Dirac,
        QUDA_QDP_DIRAC_ORDER => DiracOrder::Qdp,
        QUDA_CPS_WILSON_DIRAC_ORDER => DiracOrder::CpsWilson,
        _ => {
            return Err(refuse(
                "param->dirac_order",
                v as i64,
                "latsol reads DIRAC, QDP and CPS_WILSON host spinors",
            ))
        }
    })
}

pub(crate) fn gamma_basis(v: QudaGammaBasis) -> Result<GammaBasis> {
    Ok(match v {
        QUDA_DEGRAND_ROSSI_GAMMA_BASIS => GammaBasis::DegrandRossi,
        QUDA_UKQCD_GAMMA_BASIS => GammaBasis::Ukqcd,
        QUDA_CHIRAL_GAMMA_BASIS => GammaBasis::Chiral,
        _ => {
            return Err(refuse(
                "param->gamma_basis",
                v as i64,
                "latsol converts from DEGRAND_ROSSI, UKQCD and CHIRAL host spinors",
            ))
        }
    })
}

/// The stored parameters of a gauge field from `QudaGaugeParam`: QUDA's
/// links carry the boundary sign (`t_boundary` says which; the caller
/// applied it), so latsol is given the links with the sign taken off and
/// applies it itself (`gauge::load`).
pub(crate) fn gauge_params(p: &QudaGaugeParam) -> Result<GaugeParams> {
    let dims = extents(&p.X, "param->X")?;
    if p.anisotropy != 1.0 && p.anisotropy != f64::MIN_POSITIVE {
        return Err(Error::Unsupported(format!(
            "param->anisotropy = {}: latsol's Wilson operator is isotropic (1)",
            p.anisotropy
        )));
    }
    let precision = precision(p.cuda_prec, "param->cuda_prec")?;
    let reconstruct = reconstruct(p.reconstruct, "param->reconstruct")?;
    let t_boundary = t_boundary(p.t_boundary)?;
    Ok(GaugeParams {
        dims,
        order: gauge_order(p.gauge_order)?,
        t_boundary,
        anisotropy: 1.0,
        precision,
        precision_sloppy: precision_or(p.cuda_prec_sloppy, "param->cuda_prec_sloppy", precision)?,
        reconstruct,
        reconstruct_sloppy: if p.reconstruct_sloppy == QUDA_RECONSTRUCT_INVALID {
            reconstruct
        } else {
            self::reconstruct(p.reconstruct_sloppy, "param->reconstruct_sloppy")?
        },
        // QUDA checks nothing of the links; latsol checks reconstructed ones.
        su3_tolerance: if reconstruct == Reconstruct::Full18 {
            -1.0
        } else {
            0.0
        },
        gauge_fixed: false,
        // QUDA's callers put the anti-periodic sign into the links.
        boundary_sign_in_links: t_boundary == TBoundary::AntiPeriodic,
    })
}

/// A parameter struct's local extents, each positive and even (the
/// even-odd layout).
pub(crate) fn extents(x: &[c_int; 4], field: &str) -> Result<[usize; 4]> {
    let mut dims = [0usize; 4];
    for (d, &e) in dims.iter_mut().zip(x) {
        if e <= 0 || e % 2 != 0 {
            return Err(Error::InvalidArgument(format!(
                "{field} = {x:?}: every extent must be positive and even (the even-odd layout)"
            )));
        }
        *d = e as usize;
    }
    Ok(dims)
}

/// QUDA's check of a parameter struct's `struct_size`: left at
/// `newQuda*Param`'s marker, or the size this library was built with (a
/// caller compiled against other headers is refused rather than misread).
pub(crate) fn check_struct_size(what: &str, struct_size: usize, size: usize) -> Result<()> {
    if struct_size != UNSET_SIZE && struct_size != size {
        return Err(Error::InvalidArgument(format!(
            "{what}->struct_size = {struct_size}: this library's {what} has {size} bytes (QUDA \
             develop 9521952); rebuild against its headers"
        )));
    }
    Ok(())
}
