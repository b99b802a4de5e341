//! The Wilson Dirac matrix, kappa normalization `M = 1 − κ D`
//! (docs/conventions.md, "The Wilson operator"; seed clark2010 §3):
//! - full: `(M ψ)_p = ψ_p − κ D_{p p̄} ψ_p̄` on both parities;
//! - even-odd, Schur complement on parity p: `M̂ = 1 − κ² D_{p p̄} D_{p̄ p}`
//!   (symmetric and asymmetric preconditioning coincide without a clover
//!   term), with `M̂† = 1 − κ² D†_{p p̄} D†_{p̄ p}` from `D† = γ5 D γ5`.

use std::sync::Arc;

use super::operator::grow_block;
use super::DiracOperator;
use crate::backend::{Backend, GaugeStorage};
use crate::error::Result;
use crate::lattice::{Lattice, Parity, Subset};
use crate::precision::Precision;

/// Flops per site of one hopping term and of one axpy-type update.
pub const DSLASH_FLOPS_PER_SITE: f64 = 1320.0;
pub use super::operator::AXPY_FLOPS_PER_SITE;

/// `M = 1 − κ D` on the full lattice.
pub struct WilsonFull<'a, B: Backend> {
    backend: &'a B,
    gauge: &'a B::Gauge,
    kappa: f64,
    precision: Precision,
}

impl<'a, B: Backend> WilsonFull<'a, B> {
    pub fn new(backend: &'a B, gauge: &'a B::Gauge, kappa: f64, precision: Precision) -> Self {
        WilsonFull {
            backend,
            gauge,
            kappa,
            precision,
        }
    }
}

impl<B: Backend> DiracOperator<B> for WilsonFull<'_, B> {
    fn apply(&mut self, out: &mut B::Spinor, inp: &B::Spinor, dagger: bool) -> Result<()> {
        for p in [Parity::Even, Parity::Odd] {
            self.backend
                .wilson_dslash(out, p, self.gauge, inp, dagger, -self.kappa, Some(inp))?;
        }
        Ok(())
    }
    fn apply_block(
        &mut self,
        out: &mut [B::Spinor],
        inp: &[&B::Spinor],
        dagger: bool,
    ) -> Result<()> {
        for p in [Parity::Even, Parity::Odd] {
            let (b, g, k) = (self.backend, self.gauge, -self.kappa);
            b.wilson_dslash_block(out, p, g, inp, dagger, k, Some(inp))?;
        }
        Ok(())
    }
    fn subset(&self) -> Subset {
        Subset::Full
    }
    fn lattice(&self) -> &Arc<Lattice> {
        self.gauge.lattice()
    }
    fn precision(&self) -> Precision {
        self.precision
    }
    fn fermion(&self) -> crate::field::Fermion {
        crate::field::Fermion::Wilson
    }
    fn flops(&self) -> f64 {
        self.gauge.lattice().volume() as f64 * (DSLASH_FLOPS_PER_SITE + AXPY_FLOPS_PER_SITE)
    }
}

/// `M̂ = 1 − κ² D_{p p̄} D_{p̄ p}` on the sites of parity `p`.
pub struct WilsonEvenOdd<'a, B: Backend> {
    backend: &'a B,
    gauge: &'a B::Gauge,
    kappa: f64,
    parity: Parity,
    precision: Precision,
    /// The intermediate `D_{p̄ p} ψ` on the other parity.
    tmp: B::Spinor,
    /// The intermediates of a block application.
    tmp_block: Vec<B::Spinor>,
}

impl<'a, B: Backend> WilsonEvenOdd<'a, B> {
    pub fn new(
        backend: &'a B,
        gauge: &'a B::Gauge,
        kappa: f64,
        parity: Parity,
        precision: Precision,
    ) -> Result<Self> {
        let tmp =
            backend.alloc_spinor(gauge.lattice(), Subset::Single(parity.other()), precision)?;
        Ok(WilsonEvenOdd {
            backend,
            gauge,
            kappa,
            parity,
            precision,
            tmp,
            tmp_block: Vec::new(),
        })
    }

    pub fn parity(&self) -> Parity {
        self.parity
    }
}

impl<B: Backend> DiracOperator<B> for WilsonEvenOdd<'_, B> {
    fn apply(&mut self, out: &mut B::Spinor, inp: &B::Spinor, dagger: bool) -> Result<()> {
        let (p, q) = (self.parity, self.parity.other());
        self.backend
            .wilson_dslash(&mut self.tmp, q, self.gauge, inp, dagger, 1.0, None)?;
        let k2 = self.kappa * self.kappa;
        self.backend
            .wilson_dslash(out, p, self.gauge, &self.tmp, dagger, -k2, Some(inp))
    }
    fn apply_block(
        &mut self,
        out: &mut [B::Spinor],
        inp: &[&B::Spinor],
        dagger: bool,
    ) -> Result<()> {
        let (p, q, b, g) = (self.parity, self.parity.other(), self.backend, self.gauge);
        let (lat, n) = (g.lattice(), inp.len());
        grow_block(
            b,
            &mut self.tmp_block,
            n,
            lat,
            Subset::Single(q),
            self.precision,
            crate::field::Fermion::Wilson,
        )?;
        let tmp = &mut self.tmp_block[..n];
        b.wilson_dslash_block(tmp, q, g, inp, dagger, 1.0, None)?;
        let k2 = self.kappa * self.kappa;
        let mid: Vec<&B::Spinor> = tmp.iter().collect();
        b.wilson_dslash_block(out, p, g, &mid, dagger, -k2, Some(inp))
    }
    fn subset(&self) -> Subset {
        Subset::Single(self.parity)
    }
    fn lattice(&self) -> &Arc<Lattice> {
        self.gauge.lattice()
    }
    fn precision(&self) -> Precision {
        self.precision
    }
    fn fermion(&self) -> crate::field::Fermion {
        crate::field::Fermion::Wilson
    }
    fn flops(&self) -> f64 {
        let vh = self.gauge.lattice().half_volume() as f64;
        vh * (2.0 * DSLASH_FLOPS_PER_SITE + AXPY_FLOPS_PER_SITE)
    }
}
