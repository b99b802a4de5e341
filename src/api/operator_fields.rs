//! The fields an operator is built from (`OperatorFields`: a gauge field,
//! and a clover field for the Wilson-clover operator), and `with_backend!`,
//! which runs a solve on the concrete backend with the fields stored for it.

use std::any::Any;

use super::clover::Clover;
use super::gauge::Gauge;
use crate::backend::Backend;
use crate::dirac::WilsonFields;
use crate::error::{Error, Result};

/// Runs `$body` with `$b` bound to the concrete backend and `$f`, `$fs`
/// to the operator's fields stored for it (precise and sloppy).
macro_rules! with_backend {
    ($inner:expr, $fields:expr, |$b:ident, $f:ident, $fs:ident| $body:expr) => {
        match &$inner.backend {
            $crate::api::context_inner::AnyBackend::Cpu($b) => {
                let ($f, $fs) = $crate::api::operator_fields::backend_fields::<
                    $crate::backend::cpu::CpuBackend,
                >($fields)?;
                $body
            }
            #[cfg(feature = "cuda")]
            $crate::api::context_inner::AnyBackend::Cuda($b) => {
                let $b: &$crate::backend::cuda::CudaBackend = $b;
                let ($f, $fs) = $crate::api::operator_fields::backend_fields::<
                    $crate::backend::cuda::CudaBackend,
                >($fields)?;
                $body
            }
        }
    };
}
pub(crate) use with_backend;

fn downcast<'a, T: 'static>(store: &'a (dyn Any + Send + Sync), what: &str) -> Result<&'a T> {
    store
        .downcast_ref::<T>()
        .ok_or_else(|| Error::Internal(format!("{what} stored for another backend")))
}

/// The precise and sloppy backend fields of an operator.
pub(crate) fn backend_fields<'a, B: Backend>(
    f: OperatorFields<'a>,
) -> Result<(WilsonFields<'a, B>, WilsonFields<'a, B>)>
where
    B::Gauge: 'static,
    B::Clover: 'static,
{
    let g = downcast::<B::Gauge>(f.gauge.storage(), "gauge")?;
    let gs = downcast::<B::Gauge>(f.gauge.storage_sloppy(), "gauge")?;
    let (c, cs) = match f.clover {
        Some(c) => (
            Some(downcast::<B::Clover>(c.storage(), "clover")?),
            Some(downcast::<B::Clover>(c.storage_sloppy(), "clover")?),
        ),
        None => (None, None),
    };
    Ok((
        WilsonFields {
            gauge: g,
            clover: c,
        },
        WilsonFields {
            gauge: gs,
            clover: cs,
        },
    ))
}

/// The fields an operator is built from: a gauge field, and for the
/// Wilson-clover operator a clover field on its lattice. A `&Gauge`
/// converts into the plain Wilson operator's fields.
#[derive(Clone, Copy)]
pub struct OperatorFields<'a> {
    pub gauge: &'a Gauge,
    pub clover: Option<&'a Clover>,
}

impl<'a> From<&'a Gauge> for OperatorFields<'a> {
    fn from(gauge: &'a Gauge) -> Self {
        OperatorFields {
            gauge,
            clover: None,
        }
    }
}

impl<'a> From<(&'a Gauge, &'a Clover)> for OperatorFields<'a> {
    fn from((gauge, clover): (&'a Gauge, &'a Clover)) -> Self {
        OperatorFields {
            gauge,
            clover: Some(clover),
        }
    }
}
