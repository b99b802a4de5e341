//! What the block solvers share (seed 002, block-bicgstab-qr-sap): blocks
//! of fields (one per right-hand side, `Vec<B::Spinor>`), their QR by
//! modified Gram–Schmidt, combinations with small dense matrices, the
//! block's true residual, and the right preconditioner interface SAP
//! plugs into.

use std::sync::Arc;

use super::dense::{to_rows, Dense};
use super::SolverStats;
use crate::backend::{Backend, SpinorField};
use crate::dirac::LinearOperator;
use crate::error::Result;
use crate::field::Fermion;
use crate::lattice::{Lattice, Subset};
use crate::precision::Precision;

/// A stationary right preconditioner `M` for a block solver (seed 002
/// §2.1: the same linear map on every right-hand side, so not a Krylov
/// method of its own): `out_i = M in_i`.
pub trait BlockPreconditioner<B: Backend> {
    fn apply_block(&mut self, out: &mut [B::Spinor], inp: &[&B::Spinor]) -> Result<()>;
    /// The precision of the fields it takes and returns.
    fn precision(&self) -> Precision;
    /// Operator applications one right-hand side's `M` costs, in units of
    /// the solver's `A` (for the mat-vec count of seed 002's Table 1).
    fn matvecs(&self) -> f64;
}

/// A right preconditioner applied in its own (lower) precision to a
/// block iterated in a wider one: the input converted down, `M` applied,
/// the output converted up. Seed 002 §2.3 (eqs. 11–23): a sloppy right
/// preconditioner leaves the recurrence `R = B − A X` exact in the
/// iteration's precision, so the Krylov block may stay precise while `M`
/// (SAP: most of the work) runs in single or half.
pub struct Converted<'m, B: Backend> {
    backend: &'m B,
    inner: &'m mut dyn BlockPreconditioner<B>,
    precision: Precision,
    inp: Vec<B::Spinor>,
    out: Vec<B::Spinor>,
}

impl<'m, B: Backend> Converted<'m, B> {
    /// `inner` taking and returning fields of `precision`.
    pub fn new(
        backend: &'m B,
        inner: &'m mut dyn BlockPreconditioner<B>,
        precision: Precision,
    ) -> Self {
        Converted {
            backend,
            inner,
            precision,
            inp: Vec::new(),
            out: Vec::new(),
        }
    }
}

impl<B: Backend> BlockPreconditioner<B> for Converted<'_, B> {
    fn apply_block(&mut self, out: &mut [B::Spinor], inp: &[&B::Spinor]) -> Result<()> {
        let (Some(first), n) = (inp.first(), inp.len()) else {
            return Ok(());
        };
        let shape = Shape {
            lattice: first.lattice().clone(),
            subset: first.subset(),
            fermion: first.fermion(),
        };
        let (backend, lo) = (self.backend, self.inner.precision());
        // Scratch of the inner precision, grown to the widest block seen.
        while self.inp.len() < n {
            self.inp.extend(shape.alloc(backend, lo, 1)?);
            self.out.extend(shape.alloc(backend, lo, 1)?);
        }
        copy_block(backend, &mut self.inp[..n], inp)?;
        self.inner
            .apply_block(&mut self.out[..n], &refs(&self.inp[..n]))?;
        copy_block(backend, out, &refs(&self.out[..n]))
    }

    fn precision(&self) -> Precision {
        self.precision
    }

    fn matvecs(&self) -> f64 {
        self.inner.matvecs()
    }
}

/// What a block solve did: the block's totals and each column's last
/// iterated relative residual.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BlockStats {
    /// `iterations` counts block iterations; `matvecs` single-right-hand-side
    /// applications of `A` (a block application of L columns is L), with
    /// the preconditioner's counted by its `matvecs`.
    pub total: SolverStats,
    pub residuals: Vec<f64>,
    /// Why the iteration broke down before converging (dependent
    /// right-hand sides, a singular small system), if it did.
    pub breakdown: Option<String>,
}

/// The fields of a block's columns.
pub(crate) struct Shape {
    pub lattice: Arc<Lattice>,
    pub subset: Subset,
    pub fermion: Fermion,
}

impl Shape {
    pub fn of<B: Backend, A: LinearOperator<B>>(a: &A) -> Shape {
        Shape {
            lattice: a.lattice().clone(),
            subset: a.subset(),
            fermion: a.fermion(),
        }
    }

    /// `n` zeroed fields of precision `p`.
    pub fn alloc<B: Backend>(&self, backend: &B, p: Precision, n: usize) -> Result<Vec<B::Spinor>> {
        (0..n)
            .map(|_| backend.alloc_field(&self.lattice, self.subset, p, self.fermion))
            .collect()
    }
}

/// The columns of a block as references (what the block operations take).
pub fn refs<S>(v: &[S]) -> Vec<&S> {
    v.iter().collect()
}

/// `y_i = x_i`, converting precision.
pub(crate) fn copy_block<B: Backend>(
    backend: &B,
    y: &mut [B::Spinor],
    x: &[&B::Spinor],
) -> Result<()> {
    for (y, x) in y.iter_mut().zip(x) {
        backend.copy(y, x)?;
    }
    Ok(())
}

/// `Y = X A` (`y` overwritten; `a` is `x.len()` × `y.len()`).
pub(crate) fn combine<B: Backend>(
    backend: &B,
    a: &Dense,
    x: &[&B::Spinor],
    y: &mut [B::Spinor],
) -> Result<()> {
    backend.block_combine(&to_rows(a), x, None, y)
}

/// `Y = W + X A` (`y` overwritten).
pub(crate) fn base_plus_product<B: Backend>(
    backend: &B,
    w: &[&B::Spinor],
    a: &Dense,
    x: &[&B::Spinor],
    y: &mut [B::Spinor],
) -> Result<()> {
    backend.block_combine(&to_rows(a), x, Some(w), y)
}

/// `Y += X A`.
pub(crate) fn add_product<B: Backend>(
    backend: &B,
    a: &Dense,
    x: &[&B::Spinor],
    y: &mut [B::Spinor],
) -> Result<()> {
    backend.block_caxpy(&to_rows(a), x, y)
}

/// The Gram block `Xᴴ Y`.
pub(crate) fn gram<B: Backend>(backend: &B, x: &[&B::Spinor], y: &[&B::Spinor]) -> Result<Dense> {
    let g = backend.block_cdot(x, y)?;
    Ok(super::dense::from_rows(x.len(), y.len(), &g))
}

/// `P = Q γ`, `P ← Q` in place (seed 002, Algorithm 2.1 line 4.1: any
/// orthonormal basis of P's span serves, and γ is not needed by the
/// recurrence). Returns false, leaving `p` partly orthonormalised, when a
/// column lies within `rank_tol` (relative) of the span of the ones before
/// it: the block has lost rank.
///
/// By CholQR (Yamamoto, Nakatsukasa, Yanagisawa and Fukaya, ETNA 44
/// (2015) 306): `Q = P R⁻¹` with `R` the Cholesky factor of `PᴴP`, one
/// Gram block and one change of basis, each one pass over the block where
/// the seed's modified Gram–Schmidt makes O(L²) (at L = 12, 48 field
/// passes against 378). One pass leaves `QᴴQ − I` near `L ε κ(P)²`; where
/// that exceeds √ε a second pass follows (CholQR2), which restores it to
/// rounding. A block near rank loss (a Cholesky pivot within
/// `cholqr_floor` of its column's norm), or one whose first pass left
/// `QᴴQ` far from the identity, goes to modified Gram–Schmidt, which
/// decides the rank: both keep the span, so that may start from either
/// pass's result.
pub(crate) fn orthonormalise<B: Backend>(
    backend: &B,
    p: &mut [B::Spinor],
    rank_tol: f64,
) -> Result<bool> {
    let Some(first) = p.first() else {
        return Ok(true);
    };
    let (eps, n) = (first.precision().epsilon(), p.len() as f64);
    // Pivots below this (relative, squared) are within rounding of
    // CholQR's Gram block: modified Gram–Schmidt judges them.
    let cholqr_floor = (1e3 * n * eps).max(rank_tol * rank_tol);
    let g = gram(backend, &refs(p), &refs(p))?;
    let Some((r_inv, kappa)) = cholqr_step(&g, cholqr_floor) else {
        return modified_gram_schmidt(backend, p, rank_tol);
    };
    backend.block_transform(&to_rows(&r_inv), p)?;
    if n * eps * kappa * kappa <= eps.sqrt() {
        return Ok(true);
    }
    let g = gram(backend, &refs(p), &refs(p))?;
    let off = (&g - super::dense::identity(p.len()))
        .iter()
        .map(|z| z.norm())
        .fold(0.0, f64::max);
    if off > 0.5 {
        return modified_gram_schmidt(backend, p, rank_tol);
    }
    let Some((r_inv, _)) = cholqr_step(&g, cholqr_floor) else {
        return modified_gram_schmidt(backend, p, rank_tol);
    };
    backend.block_transform(&to_rows(&r_inv), p)?;
    Ok(true)
}

/// `R⁻¹` for `G = Rᴴ R` (Cholesky) and the condition number of `R`, or
/// None where a pivot `R_jj²` falls to `floor · G_jj` or the factor is not
/// finite.
fn cholqr_step(g: &Dense, floor: f64) -> Option<(Dense, f64)> {
    let l = super::dense::cholesky(g)?;
    let n = g.nrows();
    for j in 0..n {
        let (pivot, norm) = (l[(j, j)].norm_sqr(), g[(j, j)].re);
        if pivot.is_nan() || pivot <= floor * norm || !pivot.is_finite() {
            return None;
        }
    }
    let r = l.adjoint();
    let sv = r.clone().svd(false, false).singular_values;
    let (max, min) = sv
        .iter()
        .fold((0.0f64, f64::INFINITY), |(a, b), &s| (a.max(s), b.min(s)));
    let r_inv = r.solve_upper_triangular(&super::dense::identity(n))?;
    let finite = r_inv.iter().all(|z| z.re.is_finite() && z.im.is_finite());
    (finite && min > 0.0).then_some((r_inv, max / min))
}

/// Seed 002's orthonormalisation: modified Gram–Schmidt, column by column,
/// returning false at the first column within `rank_tol` of the span of
/// those before it.
fn modified_gram_schmidt<B: Backend>(
    backend: &B,
    p: &mut [B::Spinor],
    rank_tol: f64,
) -> Result<bool> {
    for j in 0..p.len() {
        let (done, rest) = p.split_at_mut(j);
        let pj = &mut rest[0];
        let before = backend.norm2(pj)?;
        for qi in done.iter() {
            let r = backend.cdot(qi, pj)?;
            backend.caxpy(-r, qi, pj)?;
        }
        let after = backend.norm2(pj)?;
        if after.is_nan() || after <= rank_tol * rank_tol * before || after == 0.0 {
            return Ok(false);
        }
        backend.ax(1.0 / after.sqrt(), pj)?;
    }
    Ok(true)
}

/// `R = B − A X` column by column; returns each `‖r_i‖²`.
pub(crate) fn true_residuals<B: Backend, A: LinearOperator<B>>(
    backend: &B,
    a: &mut A,
    x: &[B::Spinor],
    b: &[&B::Spinor],
    r: &mut [B::Spinor],
) -> Result<Vec<f64>> {
    a.apply_block(r, &refs(x))?;
    r.iter_mut()
        .zip(b)
        .map(|(r, b)| backend.xmy_norm2(b, r))
        .collect()
}

/// The largest relative residual of a block, `max_i sqrt(rr_i / bb_i)`
/// (seed 002's stopping criterion).
pub(crate) fn worst(rr: &[f64], bb: &[f64]) -> f64 {
    rr.iter()
        .zip(bb)
        .map(|(r, b)| (r / b).sqrt())
        .fold(0.0, f64::max)
}

/// Runs `solve` on the columns with a nonzero right-hand side only (moved
/// to the front of `x` for it, and back after); the others get the zero
/// solution and a zero residual. A zero column would make the block
/// rank-deficient from the start.
pub(crate) fn without_zero_columns<B: Backend>(
    backend: &B,
    x: &mut [B::Spinor],
    b: &[&B::Spinor],
    solve: impl FnOnce(&mut [B::Spinor], &[&B::Spinor]) -> Result<BlockStats>,
) -> Result<BlockStats> {
    if x.len() != b.len() {
        return Err(crate::error::Error::Internal(format!(
            "a block solve of {} right-hand sides with {} solutions",
            b.len(),
            x.len()
        )));
    }
    let mut nonzero = Vec::with_capacity(b.len());
    for bi in b {
        nonzero.push(backend.norm2(bi)? > 0.0);
    }
    if nonzero.iter().all(|&nz| nz) {
        return solve(x, b);
    }
    let order: Vec<usize> = (0..b.len())
        .filter(|&i| nonzero[i])
        .chain((0..b.len()).filter(|&i| !nonzero[i]))
        .collect();
    let live = nonzero.iter().filter(|&&nz| nz).count();
    // Where each original column sits now, and which column sits where.
    let (mut at, mut held): (Vec<usize>, Vec<usize>) =
        ((0..x.len()).collect(), (0..x.len()).collect());
    let mut place = |x: &mut [B::Spinor], j: usize, col: usize| {
        let pos = at[col];
        if pos != j {
            x.swap(j, pos);
            let other = held[j];
            held.swap(j, pos);
            (at[col], at[other]) = (j, pos);
        }
    };
    for (j, &col) in order.iter().enumerate() {
        place(x, j, col);
    }
    let b_live: Vec<&B::Spinor> = order[..live].iter().map(|&i| b[i]).collect();
    let result = solve(&mut x[..live], &b_live);
    for j in 0..x.len() {
        place(x, j, j);
    }
    let mut stats = result?;
    for (i, &nz) in nonzero.iter().enumerate() {
        if !nz {
            backend.zero(&mut x[i])?;
        }
    }
    let mut residuals = vec![0.0; b.len()];
    for (k, &col) in order[..live].iter().enumerate() {
        residuals[col] = stats.residuals[k];
    }
    stats.residuals = residuals;
    Ok(stats)
}

/// The precise side of a mixed-precision block solve with reliable
/// updates: the right-hand sides and their norms, the precise residual
/// block and the partial solution X̂ (in the partial-solution precision of
/// the sloppy format, `Precision::partial_solution`) that the sloppy
/// recurrence adds to.
pub(crate) struct Reliable<'b, B: Backend> {
    pub b: &'b [&'b B::Spinor],
    /// `|b_i|²`.
    pub bb: Vec<f64>,
    r_hi: Vec<B::Spinor>,
    x_hat: Vec<B::Spinor>,
    /// One field of X̂'s precision where it is wider than the sloppy one.
    widen: Option<B::Spinor>,
    sloppy: Precision,
    /// The stopping criterion's tolerance.
    tol: f64,
}

impl<'b, B: Backend> Reliable<'b, B> {
    pub fn new(
        backend: &B,
        shape: &Shape,
        b: &'b [&'b B::Spinor],
        precise: Precision,
        sloppy: Precision,
        tol: f64,
    ) -> Result<Self> {
        let n = b.len();
        let wide = sloppy.partial_solution();
        let widen = if wide != sloppy {
            shape.alloc(backend, wide, 1)?.pop()
        } else {
            None
        };
        Ok(Reliable {
            b,
            bb: b.iter().map(|b| backend.norm2(b)).collect::<Result<_>>()?,
            r_hi: shape.alloc(backend, precise, n)?,
            x_hat: shape.alloc(backend, wide, n)?,
            widen,
            sloppy,
            tol,
        })
    }

    /// `Σ_i |r_i|²/|b_i|²`, what a reliable update is triggered on.
    pub fn relative(&self, rr: &[f64]) -> f64 {
        rr.iter().zip(&self.bb).map(|(r, b)| r / b).sum()
    }

    /// The stopping criterion's `max_i |r_i|/|b_i|`.
    pub fn worst(&self, rr: &[f64]) -> f64 {
        worst(rr, &self.bb)
    }

    /// `X += X̂`, `X̂ = 0`, then the true residual `R = B − A X` (precise):
    /// returns each `|r_i|²`; `residual()` holds the block.
    pub fn update<A: LinearOperator<B>>(
        &mut self,
        backend: &B,
        a: &mut A,
        x: &mut [B::Spinor],
    ) -> Result<Vec<f64>> {
        for (x, xh) in x.iter_mut().zip(self.x_hat.iter_mut()) {
            backend.axpy_many(&[1.0], &[&*xh], x)?;
            backend.zero(xh)?;
        }
        true_residuals(backend, a, x, self.b, &mut self.r_hi)
    }

    /// The precise residual of the last update.
    pub fn residual(&self) -> &[B::Spinor] {
        &self.r_hi
    }

    /// `X̂ += Y c` for a sloppy block Y: where X̂ is wider, each `y_i` is
    /// widened first, so the sum is formed in X̂'s precision.
    pub fn add(&mut self, backend: &B, c: &Dense, y: &[B::Spinor]) -> Result<()> {
        let Some(w) = self.widen.as_mut() else {
            return add_product(backend, c, &refs(y), &mut self.x_hat);
        };
        debug_assert!(y.iter().all(|f| {
            use crate::backend::SpinorField;
            f.precision() == self.sloppy
        }));
        for (i, yi) in y.iter().enumerate() {
            backend.copy(w, yi)?;
            for (j, xj) in self.x_hat.iter_mut().enumerate() {
                if c[(i, j)] != num_complex::Complex64::new(0.0, 0.0) {
                    backend.caxpy(c[(i, j)], w, xj)?;
                }
            }
        }
        Ok(())
    }

    /// The end of a solve after `k` iterations with iterated residuals
    /// `rr`: unless converged, X̂ folded in and the true residual measured.
    pub fn finish<A: LinearOperator<B>>(
        mut self,
        backend: &B,
        a: &mut A,
        x: &mut [B::Spinor],
        mut stats: BlockStats,
        k: usize,
        mut rr: Vec<f64>,
    ) -> Result<BlockStats> {
        let tol = self.tol;
        if !stats.total.converged {
            rr = self.update(backend, a, x)?;
            stats.total.matvecs += x.len();
            stats.total.converged = self.worst(&rr) <= tol;
        }
        stats.total.iterations = k;
        stats.total.iterated_residual = self.worst(&rr);
        stats.residuals = rr
            .iter()
            .zip(&self.bb)
            .map(|(r, b)| (r / b).sqrt())
            .collect();
        Ok(stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cpu::CpuBackend;
    use crate::field::HostSpinor;
    use crate::lattice::Parity;
    use num_complex::Complex64 as C64;

    /// `n` Gaussian fields of the even sites of a 4⁴ lattice, in `p`.
    fn fields(b: &CpuBackend, n: usize, p: Precision) -> Vec<<CpuBackend as Backend>::Spinor> {
        let lat = Arc::new(Lattice::new([4, 4, 4, 4]).unwrap());
        let sub = Subset::Single(Parity::Even);
        (0..n)
            .map(|k| {
                let mut h = HostSpinor::try_zeros_of(lat.clone(), sub, Fermion::Wilson).unwrap();
                let mut rng = crate::random::rng(7 + k as u64);
                h.data_mut()
                    .iter_mut()
                    .for_each(|z| *z = crate::random::gaussian(&mut rng));
                let mut f = b.alloc_field(&lat, sub, p, Fermion::Wilson).unwrap();
                b.upload_spinor(&mut f, &h).unwrap();
                f
            })
            .collect()
    }

    /// `max |QᴴQ − I|` and `max_j |p_j − Q Qᴴ p_j| / |p_j|`.
    fn orthonormality_and_span(
        b: &CpuBackend,
        q: &[<CpuBackend as Backend>::Spinor],
        p: &[<CpuBackend as Backend>::Spinor],
    ) -> (f64, f64) {
        let g = gram(b, &refs(q), &refs(q)).unwrap();
        let off = (&g - super::super::dense::identity(q.len()))
            .iter()
            .map(|z| z.norm())
            .fold(0.0, f64::max);
        let coeff = gram(b, &refs(q), &refs(p)).unwrap();
        let mut proj = fields(b, p.len(), q[0].precision());
        combine(b, &coeff, &refs(q), &mut proj).unwrap();
        let mut worst: f64 = 0.0;
        for (pj, mut rj) in p.iter().zip(proj) {
            let r = b.xmy_norm2(pj, &mut rj).unwrap();
            worst = worst.max((r / b.norm2(pj).unwrap()).sqrt());
        }
        (off, worst)
    }

    #[test]
    fn cholqr_orthonormalises_an_ill_conditioned_block_and_keeps_its_span() {
        let b = CpuBackend::new(2).unwrap();
        let mut p = fields(&b, 12, Precision::Double);
        // Columns 1 and 7 within 1e-4 of others: κ(P) about 1e4, where one
        // CholQR pass leaves QᴴQ − I near κ² ε and the second restores it.
        let (p0, p3) = (p[0].clone(), p[3].clone());
        b.ax(1e-4, &mut p[1]).unwrap();
        b.axpy(1.0, &p0, &mut p[1]).unwrap();
        b.ax(1e-4, &mut p[7]).unwrap();
        b.caxpy(C64::new(0.5, -2.0), &p3, &mut p[7]).unwrap();
        let original = p.clone();
        assert!(orthonormalise(&b, &mut p, 100.0 * f64::EPSILON).unwrap());
        let (off, span) = orthonormality_and_span(&b, &p, &original);
        // Rounding of 12-term sums of unit vectors: a few hundred ε.
        assert!(off < 1e-13, "QᴴQ − I: {off:e}");
        assert!(span < 1e-11, "P outside span(Q): {span:e}");
    }

    #[test]
    fn cholqr_in_single_precision() {
        let b = CpuBackend::new(2).unwrap();
        let mut p = fields(&b, 6, Precision::Single);
        let original = p.clone();
        assert!(orthonormalise(&b, &mut p, 100.0 * f32::EPSILON as f64).unwrap());
        let (off, span) = orthonormality_and_span(&b, &p, &original);
        let eps = f32::EPSILON as f64;
        assert!(off < 100.0 * eps, "QᴴQ − I: {off:e}");
        assert!(span < 100.0 * eps, "P outside span(Q): {span:e}");
    }

    #[test]
    fn a_dependent_column_is_reported_as_rank_loss() {
        let b = CpuBackend::new(2).unwrap();
        let mut p = fields(&b, 5, Precision::Double);
        // p_4 = p_0 − 2i p_2: no CholQR pivot survives it, and modified
        // Gram–Schmidt finds it dependent.
        let (p0, p2) = (p[0].clone(), p[2].clone());
        b.zero(&mut p[4]).unwrap();
        b.axpy(1.0, &p0, &mut p[4]).unwrap();
        b.caxpy(C64::new(0.0, -2.0), &p2, &mut p[4]).unwrap();
        assert!(!orthonormalise(&b, &mut p, 100.0 * f64::EPSILON).unwrap());
    }

    #[test]
    fn block_transform_is_combine_in_place() {
        let b = CpuBackend::new(2).unwrap();
        let x = fields(&b, 4, Precision::Double);
        let a = Dense::from_fn(4, 4, |i, j| {
            C64::new(i as f64 - 0.5 * j as f64, 0.25 * (i * j) as f64)
        });
        let mut want = fields(&b, 4, Precision::Double);
        combine(&b, &a, &refs(&x), &mut want).unwrap();
        let mut got = x.clone();
        b.block_transform(&to_rows(&a), &mut got).unwrap();
        for (g, w) in got.iter().zip(&want) {
            let mut d = w.clone();
            assert_eq!(b.xmy_norm2(g, &mut d).unwrap(), 0.0);
        }
    }
}
