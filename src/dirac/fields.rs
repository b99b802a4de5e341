//! The fields of a Wilson-type operator on one backend and the operators
//! made from them (`M` on the full lattice, `M̂` on one parity), with or
//! without the clover term.

use crate::backend::Backend;
use crate::error::Result;
use crate::lattice::Parity;
use crate::precision::Precision;

use super::clover::{CloverEvenOdd, CloverFull};
use super::operator::DiracOperator;
use super::wilson::{WilsonEvenOdd, WilsonFull};

/// The fields that define a Wilson-type operator on one backend in one
/// precision: the links, and the clover term (with its inverse) if any.
pub struct WilsonFields<'a, B: Backend> {
    pub gauge: &'a B::Gauge,
    pub clover: Option<&'a B::Clover>,
}

impl<B: Backend> Clone for WilsonFields<'_, B> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<B: Backend> Copy for WilsonFields<'_, B> {}

impl<'a, B: Backend> WilsonFields<'a, B> {
    /// The plain Wilson operator's fields.
    pub fn wilson(gauge: &'a B::Gauge) -> Self {
        WilsonFields {
            gauge,
            clover: None,
        }
    }

    /// `M = 1 − κ D` or `A − κ D` on the full lattice.
    pub fn full(
        self,
        backend: &'a B,
        kappa: f64,
        precision: Precision,
    ) -> Box<dyn DiracOperator<B> + 'a> {
        match self.clover {
            None => Box::new(WilsonFull::new(backend, self.gauge, kappa, precision)),
            Some(c) => Box::new(CloverFull::new(backend, self.gauge, c, kappa, precision)),
        }
    }

    /// The even-odd operator on `parity`; `symmetric` picks QUDA's
    /// symmetric form (it coincides with the asymmetric one without a
    /// clover term).
    pub fn even_odd(
        self,
        backend: &'a B,
        kappa: f64,
        parity: Parity,
        symmetric: bool,
        precision: Precision,
    ) -> Result<Box<dyn DiracOperator<B> + 'a>> {
        Ok(match self.clover {
            None => Box::new(WilsonEvenOdd::new(
                backend, self.gauge, kappa, parity, precision,
            )?),
            Some(c) => Box::new(CloverEvenOdd::new(
                backend, self.gauge, c, kappa, parity, symmetric, precision,
            )?),
        })
    }
}
