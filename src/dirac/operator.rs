//! The operator traits the solvers are written against: a Dirac matrix
//! with its adjoint (`DiracOperator`), and the linear operators a Krylov
//! solver inverts (`M`, `M̂`, their normal forms, shifted by a constant).

use std::sync::Arc;

use crate::backend::Backend;
use crate::error::Result;
use crate::field::Fermion;
use crate::lattice::{Lattice, Subset};
use crate::precision::Precision;

/// Flops of a Wilson spinor axpy, per site (docs/conventions.md, "Solver conventions").
pub const AXPY_FLOPS_PER_SITE: f64 = 48.0;

/// An operator's block application is given as many outputs as inputs.
fn check_block(out: usize, inp: usize) -> Result<()> {
    if out == inp {
        Ok(())
    } else {
        Err(crate::error::Error::Internal(format!(
            "a block operator application with {inp} inputs and {out} outputs"
        )))
    }
}

/// Grows `block` to at least `n` zeroed fields of one subset, precision and kind:
/// the intermediates of an operator's block application, kept between
/// applications.
pub(crate) fn grow_block<B: Backend>(
    backend: &B,
    block: &mut Vec<B::Spinor>,
    n: usize,
    lattice: &Arc<Lattice>,
    subset: Subset,
    precision: Precision,
    fermion: Fermion,
) -> Result<()> {
    while block.len() < n {
        block.push(backend.alloc_field(lattice, subset, precision, fermion)?);
    }
    Ok(())
}

/// A Dirac matrix with its adjoint: what CGNR needs.
pub trait DiracOperator<B: Backend> {
    /// `out = M in` (`M† in` for `dagger`).
    fn apply(&mut self, out: &mut B::Spinor, inp: &B::Spinor, dagger: bool) -> Result<()>;
    /// `out_i = M in_i` (`M†` for `dagger`) for a block of right-hand sides.
    /// By default one `apply` each; an operator whose backend reads the
    /// links once for all of them overrides it.
    fn apply_block(
        &mut self,
        out: &mut [B::Spinor],
        inp: &[&B::Spinor],
        dagger: bool,
    ) -> Result<()> {
        check_block(out.len(), inp.len())?;
        for (o, i) in out.iter_mut().zip(inp) {
            self.apply(o, i, dagger)?;
        }
        Ok(())
    }
    /// Sites of the fields it acts on.
    fn subset(&self) -> Subset;
    fn lattice(&self) -> &Arc<Lattice>;
    fn precision(&self) -> Precision;
    /// What its fields hold at a site.
    fn fermion(&self) -> Fermion;
    /// Flops of one application (1320 per site per hopping term, 48 per
    /// site per axpy: docs/conventions.md, "Solver conventions").
    fn flops(&self) -> f64;
}

impl<B: Backend, D: DiracOperator<B> + ?Sized> DiracOperator<B> for Box<D> {
    fn apply(&mut self, out: &mut B::Spinor, inp: &B::Spinor, dagger: bool) -> Result<()> {
        (**self).apply(out, inp, dagger)
    }
    fn apply_block(
        &mut self,
        out: &mut [B::Spinor],
        inp: &[&B::Spinor],
        dagger: bool,
    ) -> Result<()> {
        (**self).apply_block(out, inp, dagger)
    }
    fn subset(&self) -> Subset {
        (**self).subset()
    }
    fn lattice(&self) -> &Arc<Lattice> {
        (**self).lattice()
    }
    fn precision(&self) -> Precision {
        (**self).precision()
    }
    fn fermion(&self) -> Fermion {
        (**self).fermion()
    }
    fn flops(&self) -> f64 {
        (**self).flops()
    }
}

/// The operator a solver inverts: `out = A in`.
pub trait LinearOperator<B: Backend> {
    fn apply(&mut self, out: &mut B::Spinor, inp: &B::Spinor) -> Result<()>;
    /// `out_i = A in_i` for a block of right-hand sides (the block
    /// solvers'); by default one `apply` each.
    fn apply_block(&mut self, out: &mut [B::Spinor], inp: &[&B::Spinor]) -> Result<()> {
        check_block(out.len(), inp.len())?;
        for (o, i) in out.iter_mut().zip(inp) {
            self.apply(o, i)?;
        }
        Ok(())
    }
    /// `out = A in`, returning `Re (in, A in)`, the curvature that CG's
    /// step length divides by. By default an inner product after the
    /// application; `Normal` has a cheaper and safer form.
    fn apply_with_curvature(
        &mut self,
        backend: &B,
        out: &mut B::Spinor,
        inp: &B::Spinor,
    ) -> Result<f64> {
        self.apply(out, inp)?;
        Ok(backend.cdot(inp, out)?.re)
    }
    fn subset(&self) -> Subset;
    fn lattice(&self) -> &Arc<Lattice>;
    fn precision(&self) -> Precision;
    /// What its fields hold at a site.
    fn fermion(&self) -> Fermion;
    fn flops(&self) -> f64;
}

/// `A = M`: the Dirac matrix itself (for BiCGstab).
pub struct Direct<D>(pub D);

impl<B: Backend, D: DiracOperator<B>> LinearOperator<B> for Direct<D> {
    fn apply(&mut self, out: &mut B::Spinor, inp: &B::Spinor) -> Result<()> {
        self.0.apply(out, inp, false)
    }
    fn apply_block(&mut self, out: &mut [B::Spinor], inp: &[&B::Spinor]) -> Result<()> {
        self.0.apply_block(out, inp, false)
    }
    fn subset(&self) -> Subset {
        self.0.subset()
    }
    fn lattice(&self) -> &Arc<Lattice> {
        self.0.lattice()
    }
    fn precision(&self) -> Precision {
        self.0.precision()
    }
    fn fermion(&self) -> Fermion {
        self.0.fermion()
    }
    fn flops(&self) -> f64 {
        self.0.flops()
    }
}

/// `A = M† M`: Hermitian positive definite, for CG and multi-shift CG.
pub struct Normal<'b, B: Backend, D> {
    pub op: D,
    tmp: B::Spinor,
    /// The intermediates `M in_i` of a block application.
    tmp_block: Vec<B::Spinor>,
    backend: &'b B,
}

impl<'b, B: Backend, D: DiracOperator<B>> Normal<'b, B, D> {
    pub fn new(backend: &'b B, op: D) -> Result<Self> {
        let tmp = backend.alloc_field(op.lattice(), op.subset(), op.precision(), op.fermion())?;
        Ok(Normal {
            op,
            tmp,
            tmp_block: Vec::new(),
            backend,
        })
    }
}

impl<B: Backend, D: DiracOperator<B>> LinearOperator<B> for Normal<'_, B, D> {
    fn apply(&mut self, out: &mut B::Spinor, inp: &B::Spinor) -> Result<()> {
        self.op.apply(&mut self.tmp, inp, false)?;
        self.op.apply(out, &self.tmp, true)
    }
    fn apply_block(&mut self, out: &mut [B::Spinor], inp: &[&B::Spinor]) -> Result<()> {
        let (lat, sub, prec) = (
            self.op.lattice().clone(),
            self.op.subset(),
            self.op.precision(),
        );
        let n = inp.len();
        while self.tmp_block.len() < n {
            let f = self
                .backend
                .alloc_field(&lat, sub, prec, self.op.fermion())?;
            self.tmp_block.push(f);
        }
        let tmp = &mut self.tmp_block[..n];
        self.op.apply_block(tmp, inp, false)?;
        let mid: Vec<&B::Spinor> = tmp.iter().collect();
        self.op.apply_block(out, &mid, true)
    }
    /// `(in, M†M in) = ‖M in‖²`, the norm of the intermediate: one field
    /// read instead of two (`in` and `out`), and never negative however
    /// coarse the storage format (the textbook CGNR form).
    fn apply_with_curvature(
        &mut self,
        backend: &B,
        out: &mut B::Spinor,
        inp: &B::Spinor,
    ) -> Result<f64> {
        self.op.apply(&mut self.tmp, inp, false)?;
        let curvature = backend.norm2(&self.tmp)?;
        self.op.apply(out, &self.tmp, true)?;
        Ok(curvature)
    }
    fn subset(&self) -> Subset {
        self.op.subset()
    }
    fn lattice(&self) -> &Arc<Lattice> {
        self.op.lattice()
    }
    fn precision(&self) -> Precision {
        self.op.precision()
    }
    fn fermion(&self) -> Fermion {
        self.op.fermion()
    }
    fn flops(&self) -> f64 {
        2.0 * self.op.flops()
    }
}

impl<B: Backend, A: LinearOperator<B> + ?Sized> LinearOperator<B> for &mut A {
    fn apply(&mut self, out: &mut B::Spinor, inp: &B::Spinor) -> Result<()> {
        (**self).apply(out, inp)
    }
    fn apply_block(&mut self, out: &mut [B::Spinor], inp: &[&B::Spinor]) -> Result<()> {
        (**self).apply_block(out, inp)
    }
    fn apply_with_curvature(
        &mut self,
        backend: &B,
        out: &mut B::Spinor,
        inp: &B::Spinor,
    ) -> Result<f64> {
        (**self).apply_with_curvature(backend, out, inp)
    }
    fn subset(&self) -> Subset {
        (**self).subset()
    }
    fn lattice(&self) -> &Arc<Lattice> {
        (**self).lattice()
    }
    fn precision(&self) -> Precision {
        (**self).precision()
    }
    fn fermion(&self) -> Fermion {
        (**self).fermion()
    }
    fn flops(&self) -> f64 {
        (**self).flops()
    }
}

/// `A + σ`: one system of a shifted family (multi-shift CG, BiCGstab-M),
/// and the operator each shift's refinement solve inverts.
pub struct Shifted<'b, B: Backend, A> {
    backend: &'b B,
    pub op: A,
    pub sigma: f64,
}

impl<'b, B: Backend, A: LinearOperator<B>> Shifted<'b, B, A> {
    pub fn new(backend: &'b B, op: A, sigma: f64) -> Self {
        Shifted { backend, op, sigma }
    }
}

impl<B: Backend, A: LinearOperator<B>> LinearOperator<B> for Shifted<'_, B, A> {
    fn apply(&mut self, out: &mut B::Spinor, inp: &B::Spinor) -> Result<()> {
        self.op.apply(out, inp)?;
        if self.sigma != 0.0 {
            self.backend.axpy(self.sigma, inp, out)?;
        }
        Ok(())
    }
    /// Unshifted, the inner operator's own (cheaper) form.
    fn apply_with_curvature(
        &mut self,
        backend: &B,
        out: &mut B::Spinor,
        inp: &B::Spinor,
    ) -> Result<f64> {
        if self.sigma != 0.0 {
            self.apply(out, inp)?;
            return Ok(backend.cdot(inp, out)?.re);
        }
        self.op.apply_with_curvature(backend, out, inp)
    }
    fn subset(&self) -> Subset {
        self.op.subset()
    }
    fn lattice(&self) -> &Arc<Lattice> {
        self.op.lattice()
    }
    fn precision(&self) -> Precision {
        self.op.precision()
    }
    fn fermion(&self) -> Fermion {
        self.op.fermion()
    }
    fn flops(&self) -> f64 {
        let sites = self.op.lattice().sites(self.op.subset()) as f64;
        self.op.flops() + AXPY_FLOPS_PER_SITE * sites
    }
}
