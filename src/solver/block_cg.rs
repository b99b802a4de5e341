//! Block CG for a Hermitian positive definite `A` and L right-hand sides,
//! in Dubrulle's form with an orthonormal residual basis (BCGrQ: A. A.
//! Dubrulle, "Retooling the method of block conjugate gradients", ETNA 12
//! (2001) 216–233), made rank-revealing so that converged directions leave
//! the block:
//!
//! ```text
//! R₀ = B − A X₀ = Q₀ C₀;  P₀ = Q₀
//! repeat:  δ = Pᴴ A P;  X ← X + P δ⁻¹ C
//!          Q' S = Q − A P δ⁻¹     (orthonormal Q', any S)
//!          C ← S C;  P ← Q' + P Sᴴ
//! ```
//! The residual is `R = Q C` with Q orthonormal, so `|r_i| = |C e_i|`
//! without touching a field. Q' and S come from the Gram matrix `Wᴴ W` of
//! `W = Q − A P δ⁻¹` by its eigen-decomposition (`dense::gram_factor`,
//! twice when the first pass leaves Q' short of orthonormal): directions
//! of W that rounding makes dependent are dropped there. After each step
//! the SVD `C = U Σ Vᴴ` rotates the basis to C's principal directions,
//! and those whose residual share lies below a tenth of the tolerance for
//! every right-hand side leave the block (the block shrinks as sources
//! converge; the dropped residual is kept in each column's count).
//!
//! Mixed precision with reliable updates, as `block_bicgstab`: the
//! recurrence in the sloppy precision, a partial solution X̂ added to the
//! precise X when `Σ_i |r_i|²/|b_i|²` has fallen by δ², the residual then
//! replaced by the true `B − A X = Q₁ C₁` (re-factored, which also brings
//! back a dropped direction a rounding error has revived), and the
//! directions rebased to it keeping O'Leary's unnormalised directions
//! `P C` fixed: `P₁ = Q₁ + (P − Q) C C₁⁺`.
//!
//! Breakdown: `δ` not positive definite restarts the directions from the
//! residual basis (`P = Q`); right after a restart it is `Error::Breakdown`.

use super::block::{add_product, combine, copy_block, gram, refs, BlockStats, Reliable, Shape};
use super::dense::{cholesky, gram_factor, identity, Dense, Lu};
use super::{report, MixedParams, Monitor};
use crate::backend::Backend;
use crate::dirac::LinearOperator;
use crate::error::{Error, Result};
use crate::precision::Precision;

const NAME: &str = "block CG";

/// The share of the tolerance (squared) a column's residual may lose to
/// dropped directions.
const DROP_SHARE2: f64 = 0.01;

/// Solves `A x_i = b_i` for every column (A Hermitian positive definite);
/// `a` acts in the precise precision, `a_sloppy` in the sloppy one. `x`
/// holds the initial guesses. Zero right-hand sides get zero solutions.
pub fn solve<B: Backend, A: LinearOperator<B>, S: LinearOperator<B>>(
    backend: &B,
    a: &mut A,
    a_sloppy: &mut S,
    x: &mut [B::Spinor],
    b: &[&B::Spinor],
    params: &MixedParams,
    monitor: &dyn Monitor,
) -> Result<BlockStats> {
    super::block::without_zero_columns(backend, x, b, |x, b| {
        let shape = Shape::of(a);
        let sloppy = a_sloppy.precision();
        let precise = Reliable::new(backend, &shape, b, a.precision(), sloppy, params.tol)?;
        let run = Run {
            backend,
            a,
            a_sloppy,
            params,
            precise,
            sloppy,
            shape,
        };
        run.iterate(x, monitor)
    })
}

struct Run<'r, B: Backend, A, S> {
    backend: &'r B,
    a: &'r mut A,
    a_sloppy: &'r mut S,
    params: &'r MixedParams,
    precise: Reliable<'r, B>,
    sloppy: Precision,
    shape: Shape,
}

/// The residual's orthonormal basis and coordinates, `R = Q C`.
struct Basis<S> {
    q: Vec<S>,
    c: Dense,
}

impl<B: Backend, A: LinearOperator<B>, S: LinearOperator<B>> Run<'_, B, A, S> {
    fn iterate(mut self, x: &mut [B::Spinor], monitor: &dyn Monitor) -> Result<BlockStats> {
        let (backend, n, lo) = (self.backend, x.len(), self.sloppy);
        let mut stats = BlockStats::default();
        let tol = self.params.tol;
        let delta2 = self.params.delta * self.params.delta;

        let mut rr = self.precise.update(backend, self.a, x)?;
        stats.total.matvecs += n;
        let mut max_rel = self.precise.relative(&rr);
        let mut basis = self.residual_basis(self.precise.residual())?;
        let mut p = self.shape.alloc(backend, lo, basis.q.len())?;
        copy_block(backend, &mut p, &refs(&basis.q))?;
        // Each column's residual share in dropped directions.
        let mut dropped = vec![0.0; n];
        let mut fresh = true;
        let mut k = 0;
        loop {
            let empty = basis.q.is_empty();
            let (worst, relative) = (self.precise.worst(&rr), self.precise.relative(&rr));
            if empty || worst <= tol || relative < delta2 * max_rel {
                // Reliable update: X += X̂, the true residual, a new basis.
                rr = self.precise.update(backend, self.a, x)?;
                stats.total.matvecs += n;
                stats.total.reliable_updates += 1;
                max_rel = self.precise.relative(&rr);
                dropped.iter_mut().for_each(|d| *d = 0.0);
                if self.precise.worst(&rr) <= tol {
                    stats.total.converged = true;
                    break;
                }
                let new = self.residual_basis(self.precise.residual())?;
                p = self.rebase(&p, &basis, &new)?;
                basis = new;
            }
            if k >= self.params.maxiter || basis.q.is_empty() {
                break;
            }
            let s = p.len();
            let mut z = self.shape.alloc(backend, lo, s)?;
            self.a_sloppy.apply_block(&mut z, &refs(&p))?;
            stats.total.matvecs += s;
            // δ = Pᴴ A P, Hermitian positive definite unless broken down.
            let delta = gram(backend, &refs(&p), &refs(&z))?;
            let xi = match (cholesky(&delta), Lu::new(&delta, lo.epsilon())) {
                (Some(_), Some(lu)) => lu.solve(&identity(s)),
                _ => None,
            };
            let Some(xi) = xi else {
                if fresh {
                    return Err(breakdown("Pᴴ A P is not positive definite", k));
                }
                copy_block(backend, &mut p, &refs(&basis.q))?;
                (fresh, stats.total.restarts) = (true, stats.total.restarts + 1);
                continue;
            };
            // X̂ += P δ⁻¹ C, widened to X̂'s precision column by column.
            let step = &xi * &basis.c;
            self.precise.add(backend, &step, &p)?;
            // W = Q − A P δ⁻¹, in Q's storage; W = Q' S.
            add_product(backend, &-&xi, &refs(&z), &mut basis.q)?;
            let Some((q_new, s_mat)) = self.orthonormal(&basis.q)? else {
                // W vanished: every residual is gone.
                basis = Basis {
                    q: Vec::new(),
                    c: Dense::zeros(0, n),
                };
                k += 1;
                continue;
            };
            let c_new = &s_mat * &basis.c;
            // Rotate to C's principal directions and drop the spent ones.
            let (u, kept) = self.deflate(&c_new, &mut dropped);
            let rot = u.columns(0, kept).into_owned();
            let mut q = self.shape.alloc(backend, lo, kept)?;
            combine(backend, &rot, &refs(&q_new), &mut q)?;
            let s_hat = rot.adjoint() * &s_mat;
            let c_hat = rot.adjoint() * &c_new;
            // P ← Q̂ + P Ŝᴴ.
            let mut p_new = self.shape.alloc(backend, lo, kept)?;
            copy_block(backend, &mut p_new, &refs(&q))?;
            add_product(backend, &s_hat.adjoint(), &refs(&p), &mut p_new)?;
            p = p_new;
            basis = Basis { q, c: c_hat };
            for (i, r) in rr.iter_mut().enumerate() {
                *r = basis.c.column(i).norm_squared() + dropped[i];
            }
            k += 1;
            fresh = false;
            max_rel = max_rel.max(self.precise.relative(&rr));
            let worst = self.precise.worst(&rr);
            report(monitor, &self.params.progress(), NAME, k, worst);
        }
        self.precise.finish(backend, self.a, x, stats, k, rr)
    }

    /// The basis of a precise residual block, in the sloppy precision,
    /// deflated as after a step.
    fn residual_basis(&self, r_hi: &[B::Spinor]) -> Result<Basis<B::Spinor>> {
        let backend = self.backend;
        let n = r_hi.len();
        let mut w = self.shape.alloc(backend, self.sloppy, n)?;
        copy_block(backend, &mut w, &refs(r_hi))?;
        let Some((q, c)) = self.orthonormal(&w)? else {
            return Ok(Basis {
                q: Vec::new(),
                c: Dense::zeros(0, n),
            });
        };
        let mut dropped = vec![0.0; n];
        let (u, kept) = self.deflate(&c, &mut dropped);
        let rot = u.columns(0, kept).into_owned();
        let mut q_rot = self.shape.alloc(backend, self.sloppy, kept)?;
        combine(backend, &rot, &refs(&q), &mut q_rot)?;
        Ok(Basis {
            q: q_rot,
            c: rot.adjoint() * &c,
        })
    }

    /// `W = Q' S` with orthonormal Q' (new fields) by the Gram matrix,
    /// twice when once leaves Q' short of orthonormal; None where W is
    /// zero to rounding.
    fn orthonormal(&self, w: &[B::Spinor]) -> Result<Option<(Vec<B::Spinor>, Dense)>> {
        let backend = self.backend;
        let eps = self.sloppy.epsilon();
        let g = gram(backend, &refs(w), &refs(w))?;
        let Some((t, s)) = gram_factor(&g, 100.0 * eps) else {
            return Ok(None);
        };
        let mut q = self.shape.alloc(backend, self.sloppy, t.ncols())?;
        combine(backend, &t, &refs(w), &mut q)?;
        let g2 = gram(backend, &refs(&q), &refs(&q))?;
        let off = (&g2 - identity(q.len())).camax();
        if off <= 1e3 * eps {
            return Ok(Some((q, s)));
        }
        // A second pass: G₂ = L Lᴴ, Q ← Q L⁻ᴴ, S ← Lᴴ S.
        let l = cholesky(&g2).ok_or_else(|| breakdown("the residual basis lost rank", 0))?;
        let l_inv_h = l
            .adjoint()
            .try_inverse()
            .ok_or_else(|| breakdown("the residual basis lost rank", 0))?;
        let mut q2 = self.shape.alloc(backend, self.sloppy, q.len())?;
        combine(backend, &l_inv_h, &refs(&q), &mut q2)?;
        Ok(Some((q2, l.adjoint() * s)))
    }

    /// The SVD rotation `U` of `C = U Σ Vᴴ` (principal directions first)
    /// and how many directions stay: the trailing ones go while every
    /// column's residual share in them, with what it lost before
    /// (`dropped`, updated), stays below `DROP_SHARE2` of its tolerance.
    fn deflate(&self, c: &Dense, dropped: &mut [f64]) -> (Dense, usize) {
        let svd = c.clone().svd(true, false);
        let u_raw = svd.u.expect("the SVD was asked for U");
        let mut order: Vec<usize> = (0..svd.singular_values.len()).collect();
        order.sort_by(|&a, &b| svd.singular_values[b].total_cmp(&svd.singular_values[a]));
        // U's columns, principal first. C has no more rows than columns
        // (k ≤ L), so they span its column space; a direction outside it
        // would carry no residual.
        let mut u = Dense::zeros(c.nrows(), order.len());
        for (j, &o) in order.iter().enumerate() {
            u.set_column(j, &u_raw.column(o));
        }
        let coords = u.adjoint() * c;
        let limit = |i: usize| DROP_SHARE2 * self.params.tol * self.params.tol * self.precise.bb[i];
        let mut kept = u.ncols();
        while kept > 0 {
            let row = coords.row(kept - 1);
            let fits = (0..c.ncols()).all(|i| dropped[i] + row[i].norm_sqr() <= limit(i));
            if !fits {
                break;
            }
            for (i, d) in dropped.iter_mut().enumerate() {
                *d += row[i].norm_sqr();
            }
            kept -= 1;
        }
        (u, kept)
    }

    /// The directions for a new residual basis: `P₁ = Q₁ + (P − Q) C C₁⁺`.
    fn rebase(
        &self,
        p: &[B::Spinor],
        old: &Basis<B::Spinor>,
        new: &Basis<B::Spinor>,
    ) -> Result<Vec<B::Spinor>> {
        let backend = self.backend;
        let mut p1 = self.shape.alloc(backend, self.sloppy, new.q.len())?;
        copy_block(backend, &mut p1, &refs(&new.q))?;
        if new.q.is_empty() || old.q.is_empty() || p.len() != old.q.len() {
            return Ok(p1);
        }
        // C₁⁺ = C₁ᴴ (C₁ C₁ᴴ)⁻¹ (C₁ has full row rank after deflation).
        let cc = &new.c * new.c.adjoint();
        let Some(lu) = Lu::new(&cc, self.sloppy.epsilon()) else {
            return Ok(p1);
        };
        let Some(inv) = lu.solve(&identity(cc.nrows())) else {
            return Ok(p1);
        };
        let m = &old.c * new.c.adjoint() * inv;
        add_product(backend, &m, &refs(p), &mut p1)?;
        add_product(backend, &-m, &refs(&old.q), &mut p1)?;
        Ok(p1)
    }
}

fn breakdown(what: &str, k: usize) -> Error {
    Error::Breakdown(format!("{NAME}: {what} at iteration {k}"))
}
