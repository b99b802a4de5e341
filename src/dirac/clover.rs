//! The Wilson-clover Dirac matrix, kappa normalization `M = A − κ D`, `A`
//! the clover term with its unit diagonal (docs/conventions.md, "The clover
//! term"; tests/data/README.md, golden-clover-6x4x4x8):
//! - full: `(M ψ)_p = A_pp ψ_p − κ D_{p p̄} ψ_p̄`, `M† = A − κ D†`;
//! - even-odd on parity p, QUDA's two forms:
//!   asymmetric `M̂ = A_pp − κ² D_{p p̄} A⁻¹_{p̄ p̄} D_{p̄ p}` (the Schur
//!   complement) and symmetric `M̂ = 1 − κ² A⁻¹_pp D_{p p̄} A⁻¹_{p̄ p̄} D_{p̄ p}`
//!   (`A⁻¹_pp` times it), with their adjoints from `A† = A`, `D† = γ5 D γ5`.
//!
//! Each application is a chain of hopping terms with the clover term in the
//! epilogue (`Backend::wilson_clover_dslash`): every field is read once.

use std::sync::Arc;

use super::operator::grow_block;
use super::wilson::{AXPY_FLOPS_PER_SITE, DSLASH_FLOPS_PER_SITE};
use super::DiracOperator;
use crate::backend::{Backend, CloverForm, GaugeStorage};
use crate::error::Result;
use crate::lattice::{Lattice, Parity, Subset};
use crate::precision::Precision;

const WILSON: crate::field::Fermion = crate::field::Fermion::Wilson;

/// Flops per site of the clover term (two Hermitian 6×6 complex matrix-
/// vector products, QUDA's count).
pub const CLOVER_FLOPS_PER_SITE: f64 = 504.0;

/// `M = A − κ D` on the full lattice.
pub struct CloverFull<'a, B: Backend> {
    backend: &'a B,
    gauge: &'a B::Gauge,
    clover: &'a B::Clover,
    kappa: f64,
    precision: Precision,
}

impl<'a, B: Backend> CloverFull<'a, B> {
    pub fn new(
        backend: &'a B,
        gauge: &'a B::Gauge,
        clover: &'a B::Clover,
        kappa: f64,
        precision: Precision,
    ) -> Self {
        CloverFull {
            backend,
            gauge,
            clover,
            kappa,
            precision,
        }
    }
}

impl<B: Backend> DiracOperator<B> for CloverFull<'_, B> {
    fn apply(&mut self, out: &mut B::Spinor, inp: &B::Spinor, dagger: bool) -> Result<()> {
        for p in [Parity::Even, Parity::Odd] {
            self.backend.wilson_clover_dslash(
                out,
                p,
                self.gauge,
                self.clover,
                inp,
                dagger,
                -self.kappa,
                CloverForm::DirectOnX,
                Some(inp),
            )?;
        }
        Ok(())
    }
    fn apply_block(
        &mut self,
        out: &mut [B::Spinor],
        inp: &[&B::Spinor],
        dagger: bool,
    ) -> Result<()> {
        let (b, g, c, k) = (self.backend, self.gauge, self.clover, -self.kappa);
        let form = CloverForm::DirectOnX;
        for p in [Parity::Even, Parity::Odd] {
            b.wilson_clover_dslash_block(out, p, g, c, inp, dagger, k, form, Some(inp))?;
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
        self.gauge.lattice().volume() as f64
            * (DSLASH_FLOPS_PER_SITE + CLOVER_FLOPS_PER_SITE + AXPY_FLOPS_PER_SITE)
    }
}

/// The even-odd operator on the sites of parity `p`, symmetric or
/// asymmetric.
pub struct CloverEvenOdd<'a, B: Backend> {
    backend: &'a B,
    gauge: &'a B::Gauge,
    clover: &'a B::Clover,
    kappa: f64,
    parity: Parity,
    symmetric: bool,
    precision: Precision,
    /// The intermediate `A⁻¹ D ψ` on the other parity.
    tmp: B::Spinor,
    /// `A⁻¹_pp ψ`, the first step of the symmetric form's adjoint.
    tmp_p: Option<B::Spinor>,
    /// The intermediates of a block application: on the other parity, and
    /// on this one (the symmetric form's adjoint).
    tmp_block: Vec<B::Spinor>,
    tmp_p_block: Vec<B::Spinor>,
}

impl<'a, B: Backend> CloverEvenOdd<'a, B> {
    pub fn new(
        backend: &'a B,
        gauge: &'a B::Gauge,
        clover: &'a B::Clover,
        kappa: f64,
        parity: Parity,
        symmetric: bool,
        precision: Precision,
    ) -> Result<Self> {
        let lat = gauge.lattice();
        let tmp = backend.alloc_spinor(lat, Subset::Single(parity.other()), precision)?;
        let tmp_p = if symmetric {
            Some(backend.alloc_spinor(lat, Subset::Single(parity), precision)?)
        } else {
            None
        };
        Ok(CloverEvenOdd {
            backend,
            gauge,
            clover,
            kappa,
            parity,
            symmetric,
            precision,
            tmp,
            tmp_p,
            tmp_block: Vec::new(),
            tmp_p_block: Vec::new(),
        })
    }
}

impl<B: Backend> DiracOperator<B> for CloverEvenOdd<'_, B> {
    fn apply(&mut self, out: &mut B::Spinor, inp: &B::Spinor, dagger: bool) -> Result<()> {
        let (p, q) = (self.parity, self.parity.other());
        let (b, g, c) = (self.backend, self.gauge, self.clover);
        let k2 = self.kappa * self.kappa;
        let inv = CloverForm::InverseOnHopping;
        match (self.symmetric, dagger, self.tmp_p.as_mut()) {
            // 1 − κ² D†_pq A⁻¹_qq D†_qp A⁻¹_pp: the inverse comes first.
            (true, true, Some(tmp_p)) => {
                b.clover(tmp_p, p, c, inp, true)?;
                b.wilson_clover_dslash(&mut self.tmp, q, g, c, tmp_p, true, 1.0, inv, None)?;
                b.wilson_dslash(out, p, g, &self.tmp, true, -k2, Some(inp))
            }
            // 1 − κ² A⁻¹_pp D_pq A⁻¹_qq D_qp
            (true, false, _) => {
                b.wilson_clover_dslash(&mut self.tmp, q, g, c, inp, false, 1.0, inv, None)?;
                b.wilson_clover_dslash(out, p, g, c, &self.tmp, false, -k2, inv, Some(inp))
            }
            // A_pp − κ² D_pq A⁻¹_qq D_qp, and its adjoint with D†.
            _ => {
                b.wilson_clover_dslash(&mut self.tmp, q, g, c, inp, dagger, 1.0, inv, None)?;
                b.wilson_clover_dslash(
                    out,
                    p,
                    g,
                    c,
                    &self.tmp,
                    dagger,
                    -k2,
                    CloverForm::DirectOnX,
                    Some(inp),
                )
            }
        }
    }
    fn apply_block(
        &mut self,
        out: &mut [B::Spinor],
        inp: &[&B::Spinor],
        dagger: bool,
    ) -> Result<()> {
        let (p, q) = (self.parity, self.parity.other());
        let (b, g, c) = (self.backend, self.gauge, self.clover);
        let (lat, n, prec) = (g.lattice(), inp.len(), self.precision);
        let k2 = self.kappa * self.kappa;
        let inv = CloverForm::InverseOnHopping;
        grow_block(
            b,
            &mut self.tmp_block,
            n,
            lat,
            Subset::Single(q),
            prec,
            WILSON,
        )?;
        let tmp = &mut self.tmp_block[..n];
        if self.symmetric && dagger {
            // 1 − κ² D†_pq A⁻¹_qq D†_qp A⁻¹_pp, as `apply`.
            grow_block(
                b,
                &mut self.tmp_p_block,
                n,
                lat,
                Subset::Single(p),
                prec,
                WILSON,
            )?;
            let tmp_p = &mut self.tmp_p_block[..n];
            for (t, i) in tmp_p.iter_mut().zip(inp) {
                b.clover(t, p, c, i, true)?;
            }
            let first: Vec<&B::Spinor> = tmp_p.iter().collect();
            b.wilson_clover_dslash_block(tmp, q, g, c, &first, true, 1.0, inv, None)?;
            let mid: Vec<&B::Spinor> = tmp.iter().collect();
            return b.wilson_dslash_block(out, p, g, &mid, true, -k2, Some(inp));
        }
        b.wilson_clover_dslash_block(tmp, q, g, c, inp, dagger, 1.0, inv, None)?;
        let mid: Vec<&B::Spinor> = tmp.iter().collect();
        // The symmetric form: A⁻¹ on the hopping term; the asymmetric: A on x.
        let form = if self.symmetric {
            inv
        } else {
            CloverForm::DirectOnX
        };
        b.wilson_clover_dslash_block(out, p, g, c, &mid, dagger, -k2, form, Some(inp))
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
        vh * (2.0 * DSLASH_FLOPS_PER_SITE + 2.0 * CLOVER_FLOPS_PER_SITE + AXPY_FLOPS_PER_SITE)
    }
}
