//! The system a Wilson-type solve iterates on (the full `M x = b` or the
//! Schur system of one parity, symmetric or not), its Dirac matrix, and the
//! caller's normalization of it (docs/conventions.md, "Even-odd").

use crate::api::params::{InvertParams, MassNormalization, MatPc, SolveType};
use crate::backend::{Backend, GaugeStorage, OperatorFamily};
use crate::dirac::{DiracOperator, WilsonFields};
use crate::error::Result;
use crate::lattice::Parity;
use crate::precision::Precision;

/// The parity a preconditioned solve lives on.
pub fn matpc_parity(matpc: MatPc) -> Parity {
    match matpc {
        MatPc::EvenEven | MatPc::EvenEvenAsymmetric => Parity::Even,
        MatPc::OddOdd | MatPc::OddOddAsymmetric => Parity::Odd,
    }
}

/// Whether `matpc` is QUDA's symmetric form `1 − κ² A⁻¹ D A⁻¹ D` (as
/// opposed to the Schur complement `A − κ² D A⁻¹ D`).
pub fn matpc_symmetric(matpc: MatPc) -> bool {
    matches!(matpc, MatPc::EvenEven | MatPc::OddOdd)
}

/// The system a solve iterates on.
#[derive(Clone, Copy)]
pub(crate) enum System {
    Full,
    /// The Schur system on a parity, symmetric or not.
    EvenOdd(Parity, bool),
}

pub(crate) fn system_of(params: &InvertParams) -> System {
    match params.solve_type {
        SolveType::Direct | SolveType::NormOp => System::Full,
        SolveType::DirectPc | SolveType::NormOpPc => {
            System::EvenOdd(matpc_parity(params.matpc), matpc_symmetric(params.matpc))
        }
    }
}

/// The Dirac matrix of a system in one precision.
pub(crate) fn dirac<'a, B: Backend>(
    backend: &'a B,
    fields: WilsonFields<'a, B>,
    kappa: f64,
    precision: Precision,
    system: System,
) -> Result<Box<dyn DiracOperator<B> + 'a>> {
    match system {
        System::Full => Ok(fields.full(backend, kappa, precision)),
        System::EvenOdd(p, symmetric) => fields.even_odd(backend, kappa, p, symmetric, precision),
    }
}

/// Readies the backend's code for solves in `params`' precisions on these
/// fields, all at once (`Backend::prepare`: on a GPU, the kernels of those
/// formats only, compiled in parallel before the first launch).
pub(crate) fn prepare<B: Backend>(
    backend: &B,
    fields: WilsonFields<'_, B>,
    fields_sloppy: WilsonFields<'_, B>,
    params: &InvertParams,
) -> Result<()> {
    let family = if fields.clover.is_some() {
        OperatorFamily::Clover
    } else {
        OperatorFamily::Wilson
    };
    backend.prepare(
        family,
        &[
            (params.precision, fields.gauge.reconstruct()),
            (params.precision_sloppy, fields_sloppy.gauge.reconstruct()),
        ],
    )
}

/// `M_c = M_κ / scale`: the caller's normalization of the iterated Dirac
/// matrix.
pub(crate) fn operator_scale(params: &InvertParams, system: System) -> f64 {
    let k2 = 2.0 * params.kappa;
    match (system, params.mass_normalization) {
        (_, MassNormalization::Kappa) => 1.0,
        (System::Full, _) => k2,
        (System::EvenOdd(..), MassNormalization::Mass) => k2 * k2,
        (System::EvenOdd(..), MassNormalization::AsymmetricMass) => k2,
    }
}
