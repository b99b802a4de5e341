//! The even-odd (Schur) system of a Wilson-type operator: its source and
//! the reconstruction of the other parity (docs/conventions.md, "Even-odd").
//! With `M = ((A_pp, −κ D_pq), (−κ D_qp, A_qq))` (A = 1 for Wilson),
//! `M x = b` on parity p becomes
//! - asymmetric: `(A_pp − κ² D_pq A⁻¹_qq D_qp) x_p = b_p + κ D_pq A⁻¹_qq b_q`,
//! - symmetric: the same system multiplied by `A⁻¹_pp`,
//!
//! and then `x_q = A⁻¹_qq (b_q + κ D_qp x_p)`. In either form
//! `b − M x` vanishes on q, and on p it is the asymmetric Schur residual.

use super::WilsonFields;
use crate::backend::{Backend, CloverForm, SpinorField};
use crate::error::Result;
use crate::lattice::{Parity, Subset};

/// The source side of a Schur system: what reconstruction needs again.
pub struct SchurSource<'a, B: Backend> {
    backend: &'a B,
    fields: WilsonFields<'a, B>,
    kappa: f64,
    parity: Parity,
    /// `A⁻¹_qq b_q` (clover only).
    inv_bq: Option<B::Spinor>,
}

impl<'a, B: Backend> SchurSource<'a, B> {
    /// Writes the source `b̂_p` of the Schur system on `parity` into `rhs`
    /// (a field of that parity) from the full source `b`.
    pub fn prepare(
        backend: &'a B,
        fields: WilsonFields<'a, B>,
        kappa: f64,
        parity: Parity,
        symmetric: bool,
        b: &B::Spinor,
        rhs: &mut B::Spinor,
    ) -> Result<Self> {
        let (p, q) = (parity, parity.other());
        let g = fields.gauge;
        let inv_bq = match fields.clover {
            None => {
                // b̂_p = b_p + κ D_pq b_q
                backend.wilson_dslash(rhs, p, g, b, false, kappa, Some(b))?;
                None
            }
            Some(c) => {
                let lat = b.lattice();
                let mut t = backend.alloc_spinor(lat, Subset::Single(q), rhs.precision())?;
                backend.clover(&mut t, q, c, b, true)?;
                if symmetric {
                    // b̂_p = A⁻¹_pp (b_p + κ D_pq A⁻¹_qq b_q)
                    let mut u = backend.alloc_spinor(lat, Subset::Single(p), rhs.precision())?;
                    backend.clover(&mut u, p, c, b, true)?;
                    let form = CloverForm::InverseOnHopping;
                    backend.wilson_clover_dslash(rhs, p, g, c, &t, false, kappa, form, Some(&u))?;
                } else {
                    backend.wilson_dslash(rhs, p, g, &t, false, kappa, Some(b))?;
                }
                Some(t)
            }
        };
        Ok(SchurSource {
            backend,
            fields,
            kappa,
            parity,
            inv_bq,
        })
    }

    /// `x_q = A⁻¹_qq (b_q + κ D_qp x_p)` into `xq` (a field of the other
    /// parity), from the Schur solution `xp` and the full source `b`.
    pub fn reconstruct(&self, xq: &mut B::Spinor, xp: &B::Spinor, b: &B::Spinor) -> Result<()> {
        let q = self.parity.other();
        let (backend, g) = (self.backend, self.fields.gauge);
        match (self.fields.clover, self.inv_bq.as_ref()) {
            (Some(c), Some(t)) => {
                let form = CloverForm::InverseOnHopping;
                backend.wilson_clover_dslash(xq, q, g, c, xp, false, self.kappa, form, Some(t))
            }
            _ => backend.wilson_dslash(xq, q, g, xp, false, self.kappa, Some(b)),
        }
    }
}
