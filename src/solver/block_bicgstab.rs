//! Block BiCGstab with the search directions orthonormalised by QR (seed
//! 002, block-bicgstab-qr-sap, Algorithms 2.1 and 2.2), right-
//! preconditioned by a stationary `M`, in mixed precision with reliable
//! updates. For L right-hand sides `A X = B` (X, B: N × L):
//!
//! ```text
//! 2   R = B − A X;  3  P = R;  4  R̃ = R (orthonormalised: any R̃ serves,
//!     and an orthonormal one keeps the small systems of 4.4 and 4.11 scaled)
//! while max_i |r_i|/|b_i| > ε:
//!   4.1  P = Q γ (modified Gram–Schmidt), P ← Q
//!   4.2  U = M P              4.3  V = A U
//!   4.4  (R̃ᴴ V) α = R̃ᴴ R      4.5  T = R − V α
//!   4.6  S = M T              4.7  Z = A S
//!   4.8  ζ = Tr(Zᴴ T) / Tr(Zᴴ Z)
//!   4.9  X ← X + U α + ζ S    4.10 R = T − ζ Z
//!   4.11 (R̃ᴴ V) β = −R̃ᴴ Z     4.12 P ← R + (P − ζ V) β
//! ```
//! The memory-saving form (Algorithm 2.2) keeps T in R (`R ← R − V α` and
//! `X ← X + U α` right after line 4.4, `S = M R`) and builds the new P in
//! V's storage: one block of fields fewer, the same iterates.
//!
//! Mixed precision (seed 002 eqs. 11–23: a right preconditioner may be
//! sloppy, the recurrence keeps `R = B − A X` exact in its own terms): the
//! Krylov blocks live in the sloppy precision of `a_sloppy`, the solution
//! X in the precise one of `a`; the partial solution X̂ (in
//! `Precision::partial_solution` of the sloppy format) collects line 4.9
//! and is added to X at each reliable update, when the block's relative
//! residual `Σ_i |r_i|²/|b_i|²` has fallen by δ² below its maximum since
//! the last, or when the iterated residual meets the tolerance. There the
//! residual is replaced by the true one, `R = B − A X` in the precise
//! precision, while P, V and R̃ are kept (as `bicgstab_reliable` does).
//!
//! Breakdown: a rank-deficient P (line 4.1) or a singular `R̃ᴴ V` (4.4)
//! restarts from the current residual (`R̃ = P = R`); one right after a
//! restart, or `Zᴴ Z = 0`, ends the iteration: the solution reached so far
//! is returned, not converged, with the reason in `BlockStats::breakdown`.

use num_complex::Complex64 as C64;

use super::block::{
    add_product, base_plus_product, copy_block, gram, orthonormalise, refs, BlockPreconditioner,
    BlockStats, Reliable, Shape,
};
use super::dense::{Dense, Lu};
use super::{report, MixedParams, Monitor};
use crate::backend::Backend;
use crate::dirac::LinearOperator;
use crate::error::{Error, Result};
use crate::precision::Precision;

/// Which of seed 002's two forms runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Variant {
    /// Algorithm 2.1.
    #[default]
    Standard,
    /// Algorithm 2.2: T stored in R, one block of fields fewer.
    MemorySaving,
}

const NAME: &str = "block BiCGstab";

/// Solves `A x_i = b_i` for every column; `a` acts in the precise
/// precision, `a_sloppy` (and `precond`, if any) in the sloppy one. `x`
/// holds the initial guesses. Zero right-hand sides get zero solutions and
/// leave the block.
#[allow(clippy::too_many_arguments)]
pub fn solve<B: Backend, A: LinearOperator<B>, S: LinearOperator<B>>(
    backend: &B,
    a: &mut A,
    a_sloppy: &mut S,
    x: &mut [B::Spinor],
    b: &[&B::Spinor],
    params: &MixedParams,
    variant: Variant,
    precond: Option<&mut dyn BlockPreconditioner<B>>,
    monitor: &dyn Monitor,
) -> Result<BlockStats> {
    super::block::without_zero_columns(backend, x, b, |x, b| {
        Run::new(backend, a, a_sloppy, b, params, variant, precond)?.iterate(x, monitor)
    })
}

/// One block solve: its operators, parameters and working blocks.
struct Run<'r, 'm, B: Backend, A, S> {
    backend: &'r B,
    a: &'r mut A,
    a_sloppy: &'r mut S,
    params: &'r MixedParams,
    variant: Variant,
    precond: Option<&'r mut (dyn BlockPreconditioner<B> + 'm)>,
    precise: Reliable<'r, B>,
    sloppy: Precision,
    shape: Shape,
}

impl<'r, 'm, B: Backend, A: LinearOperator<B>, S: LinearOperator<B>> Run<'r, 'm, B, A, S> {
    fn new(
        backend: &'r B,
        a: &'r mut A,
        a_sloppy: &'r mut S,
        b: &'r [&'r B::Spinor],
        params: &'r MixedParams,
        variant: Variant,
        precond: Option<&'r mut (dyn BlockPreconditioner<B> + 'm)>,
    ) -> Result<Self> {
        let sloppy = a_sloppy.precision();
        if let Some(m) = precond.as_ref() {
            if m.precision() != sloppy {
                return Err(Error::Internal(format!(
                    "{NAME}: a preconditioner in {:?} for a sloppy operator in {sloppy:?}",
                    m.precision()
                )));
            }
        }
        let shape = Shape::of(a);
        let precise = Reliable::new(backend, &shape, b, a.precision(), sloppy, params.tol)?;
        Ok(Run {
            backend,
            a,
            a_sloppy,
            params,
            variant,
            precond,
            precise,
            sloppy,
            shape,
        })
    }

    fn iterate(mut self, x: &mut [B::Spinor], monitor: &dyn Monitor) -> Result<BlockStats> {
        let (backend, n, lo) = (self.backend, x.len(), self.sloppy);
        let alloc = || self.shape.alloc(backend, lo, n);
        let (mut r, mut r_tilde, mut p, mut v, mut z) =
            (alloc()?, alloc()?, alloc()?, alloc()?, alloc()?);
        let mut t = match self.variant {
            Variant::Standard => Some(alloc()?),
            Variant::MemorySaving => None,
        };
        let (mut u, mut s) = match self.precond {
            Some(_) => (Some(alloc()?), Some(alloc()?)),
            None => (None, None),
        };
        let mut stats = BlockStats::default();
        let tol = self.params.tol;
        let delta2 = self.params.delta * self.params.delta;
        let rank_tol = (100.0 * lo.epsilon()).min(1e-2);
        let rcond = (10.0 * lo.epsilon()).min(1e-4);
        let precond_matvecs = self.precond.as_ref().map_or(0.0, |m| m.matvecs());

        let mut rr = self.precise.update(backend, self.a, x)?;
        stats.total.matvecs += n;
        let mut k = 0;
        // A breakdown ends the iteration, not the solve: the solution so
        // far and its counts go back with the reason in `stats.breakdown`.
        let mut iterations = || -> Result<()> {
            copy_block(backend, &mut r, &refs(self.precise.residual()))?;
            copy_block(backend, &mut r_tilde, &refs(&r))?;
            if !orthonormalise(backend, &mut r_tilde, rank_tol)? {
                return Err(breakdown("the residuals R lost rank", 0));
            }
            copy_block(backend, &mut p, &refs(&r))?;
            let mut max_rel = self.precise.relative(&rr);
            let mut fresh = true;
            loop {
                if self.precise.worst(&rr) <= tol || self.precise.relative(&rr) < delta2 * max_rel {
                    // Reliable update: X += X̂, R = B − A X (precise), X̂ = 0.
                    rr = self.precise.update(backend, self.a, x)?;
                    stats.total.matvecs += n;
                    stats.total.reliable_updates += 1;
                    copy_block(backend, &mut r, &refs(self.precise.residual()))?;
                    max_rel = self.precise.relative(&rr);
                    if self.precise.worst(&rr) <= tol {
                        stats.total.converged = true;
                        break;
                    }
                }
                if k >= self.params.maxiter {
                    break;
                }
                // 4.1: P ← Q of P = Q γ; a lost rank restarts from R.
                if !orthonormalise(backend, &mut p, rank_tol)? {
                    if fresh {
                        return Err(breakdown("the search directions P lost rank", k));
                    }
                    self.restart(&r, &mut r_tilde, &mut p, rank_tol, k)?;
                    (fresh, stats.total.restarts) = (true, stats.total.restarts + 1);
                }
                // 4.2, 4.3: U = M P, V = A U.
                let u_ref: &[B::Spinor] = match (self.precond.as_mut(), u.as_mut()) {
                    (Some(m), Some(u)) => {
                        m.apply_block(u, &refs(&p))?;
                        u
                    }
                    _ => &p,
                };
                self.a_sloppy.apply_block(&mut v, &refs(u_ref))?;
                // 4.4: (R̃ᴴ V) α = R̃ᴴ R.
                let rv = gram(backend, &refs(&r_tilde), &refs(&v))?;
                let Some(lu) = Lu::new(&rv, rcond) else {
                    if fresh {
                        return Err(breakdown("R̃ᴴ V is singular", k));
                    }
                    self.restart(&r, &mut r_tilde, &mut p, rank_tol, k)?;
                    (fresh, stats.total.restarts) = (true, stats.total.restarts + 1);
                    continue;
                };
                let alpha = solved(&lu, &gram(backend, &refs(&r_tilde), &refs(&r))?, k)?;
                // 4.5: T = R − V α (Algorithm 2.2: in R, with X̂ += U α now).
                let t_blk: &mut Vec<B::Spinor> = match t.as_mut() {
                    Some(t) => {
                        base_plus_product(backend, &refs(&r), &-&alpha, &refs(&v), t)?;
                        t
                    }
                    None => {
                        self.precise.add(backend, &alpha, u_ref)?;
                        add_product(backend, &-&alpha, &refs(&v), &mut r)?;
                        &mut r
                    }
                };
                // 4.6, 4.7: S = M T, Z = A S.
                let s_ref: &[B::Spinor] = match (self.precond.as_mut(), s.as_mut()) {
                    (Some(m), Some(s)) => {
                        m.apply_block(s, &refs(t_blk))?;
                        s
                    }
                    _ => &t_blk[..],
                };
                self.a_sloppy.apply_block(&mut z, &refs(s_ref))?;
                // 4.8: ζ = Tr(Zᴴ T) / Tr(Zᴴ Z).
                let (mut zt, mut zz) = (C64::new(0.0, 0.0), 0.0);
                for (zi, ti) in z.iter().zip(t_blk.iter()) {
                    let (d, n2) = backend.cdot_norm2(zi, ti)?;
                    (zt, zz) = (zt + d, zz + n2);
                }
                if zz.is_nan() || zz <= 0.0 || zt.norm() == 0.0 {
                    return Err(breakdown("Tr(Zᴴ T) / Tr(Zᴴ Z)", k));
                }
                let zeta = zt / zz;
                // 4.9: X̂ += U α + ζ S.
                if self.variant == Variant::Standard {
                    self.precise.add(backend, &alpha, u_ref)?;
                }
                self.precise
                    .add(backend, &(Dense::identity(n, n) * zeta), s_ref)?;
                // 4.10: R = T − ζ Z (the standard form's T becomes the scratch).
                if let Some(t) = t.as_mut() {
                    std::mem::swap(t, &mut r);
                }
                for (i, (ri, zi)) in r.iter_mut().zip(&z).enumerate() {
                    rr[i] = backend.caxpy_norm2(-zeta, zi, ri)?;
                }
                // 4.11: (R̃ᴴ V) β = −R̃ᴴ Z.
                let beta = -solved(&lu, &gram(backend, &refs(&r_tilde), &refs(&z))?, k)?;
                // 4.12: P ← R + (P − ζ V) β, built in T's storage (Algorithm
                // 2.1) or V's (2.2; V is not needed again this iteration).
                for (pi, vi) in p.iter_mut().zip(&v) {
                    backend.caxpy(-zeta, vi, pi)?;
                }
                let scratch = t.as_mut().unwrap_or(&mut v);
                base_plus_product(backend, &refs(&r), &beta, &refs(&p), scratch)?;
                std::mem::swap(scratch, &mut p);

                k += 1;
                fresh = false;
                stats.total.matvecs += 2 * n + (2.0 * precond_matvecs * n as f64).round() as usize;
                max_rel = max_rel.max(self.precise.relative(&rr));
                let worst = self.precise.worst(&rr);
                report(monitor, &self.params.progress(), NAME, k, worst);
            }
            Ok(())
        };
        match iterations() {
            Ok(()) => {}
            Err(Error::Breakdown(why)) => stats.breakdown = Some(why),
            Err(e) => return Err(e),
        }
        self.precise.finish(backend, self.a, x, stats, k, rr)
    }

    /// A new shadow block and new directions from the current residual:
    /// `R̃` and `P` the orthonormalised `R`.
    fn restart(
        &self,
        r: &[B::Spinor],
        r_tilde: &mut [B::Spinor],
        p: &mut [B::Spinor],
        rank_tol: f64,
        k: usize,
    ) -> Result<()> {
        copy_block(self.backend, p, &refs(r))?;
        if !orthonormalise(self.backend, p, rank_tol)? {
            return Err(breakdown("the residuals R lost rank", k));
        }
        copy_block(self.backend, r_tilde, &refs(p))
    }
}

fn solved(lu: &Lu, rhs: &Dense, k: usize) -> Result<Dense> {
    lu.solve(rhs)
        .ok_or_else(|| breakdown("the small system R̃ᴴ V", k))
}

fn breakdown(what: &str, k: usize) -> Error {
    Error::Breakdown(format!("{NAME}: {what} at iteration {k}"))
}
