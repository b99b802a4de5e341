//! The small dense matrices of the block solvers (L × L for L right-hand
//! sides: Gram blocks, step matrices), through nalgebra. A block solver's
//! fields are combined with them by `Backend::block_caxpy`, which takes a
//! row-major slice.

use nalgebra::DMatrix;
use num_complex::Complex64 as C64;

/// A small dense complex matrix.
pub type Dense = DMatrix<C64>;

/// The matrix of a row-major slice (`Backend::block_cdot`'s Gram block).
pub fn from_rows(rows: usize, cols: usize, v: &[C64]) -> Dense {
    Dense::from_row_slice(rows, cols, v)
}

/// The row-major slice of a matrix (`Backend::block_caxpy`'s coefficients).
pub fn to_rows(m: &Dense) -> Vec<C64> {
    let mut v = Vec::with_capacity(m.nrows() * m.ncols());
    for i in 0..m.nrows() {
        for j in 0..m.ncols() {
            v.push(m[(i, j)]);
        }
    }
    v
}

/// A square system solved by LU with partial pivoting, refused (None) when
/// a pivot falls below `rcond` times the largest: the block recurrences
/// treat that as a breakdown, as the single-vector ones treat a vanishing
/// inner product.
pub struct Lu(nalgebra::linalg::LU<C64, nalgebra::Dyn, nalgebra::Dyn>);

impl Lu {
    pub fn new(a: &Dense, rcond: f64) -> Option<Lu> {
        if !a.iter().all(|z| z.re.is_finite() && z.im.is_finite()) {
            return None;
        }
        let lu = a.clone().lu();
        let u = lu.u();
        let pivots: Vec<f64> = (0..u.nrows()).map(|i| u[(i, i)].norm()).collect();
        let max = pivots.iter().copied().fold(0.0, f64::max);
        if max == 0.0 || pivots.iter().any(|&p| p <= rcond * max) {
            return None;
        }
        Some(Lu(lu))
    }

    /// `A⁻¹ b`.
    pub fn solve(&self, b: &Dense) -> Option<Dense> {
        self.0.solve(b)
    }
}

/// The Hermitian square root factor of a Gram matrix `G = Wᴴ W`, keeping
/// only the directions above `drop` times its largest eigenvalue: `(T, S)`
/// with `W T` orthonormal (`T = V Λ^{-1/2}`, k columns) and `W ≈ (W T) S`
/// (`S = Λ^{1/2} Vᴴ`, k rows). The rank-revealing orthogonalisation of
/// block CG (Dubrulle 2001, ETNA 12: any `W = Q S` with orthonormal `Q`
/// serves; the eigen-decomposition shows the rank, which a triangular
/// factor hides).
pub fn gram_factor(g: &Dense, drop: f64) -> Option<(Dense, Dense)> {
    if !g.iter().all(|z| z.re.is_finite() && z.im.is_finite()) {
        return None;
    }
    // Hermitian by construction up to rounding: symmetrise.
    let h = (g + g.adjoint()) * C64::new(0.5, 0.0);
    let eig = nalgebra::linalg::SymmetricEigen::new(h);
    let max = eig.eigenvalues.iter().copied().fold(0.0, f64::max);
    if max <= 0.0 {
        return None;
    }
    let mut keep: Vec<usize> = (0..eig.eigenvalues.len())
        .filter(|&i| eig.eigenvalues[i] > drop * max)
        .collect();
    // Largest first: the deflation below drops from the end.
    keep.sort_by(|&a, &b| eig.eigenvalues[b].total_cmp(&eig.eigenvalues[a]));
    let n = g.nrows();
    let k = keep.len();
    let mut t = Dense::zeros(n, k);
    let mut s = Dense::zeros(k, n);
    for (c, &i) in keep.iter().enumerate() {
        let l = eig.eigenvalues[i].sqrt();
        for r in 0..n {
            let v = eig.eigenvectors[(r, i)];
            t[(r, c)] = v / l;
            s[(c, r)] = v.conj() * l;
        }
    }
    Some((t, s))
}

/// The Cholesky factor `L` of a Hermitian positive definite `A = L Lᴴ`;
/// None where it is not (numerically) positive definite.
pub fn cholesky(a: &Dense) -> Option<Dense> {
    let h = (a + a.adjoint()) * C64::new(0.5, 0.0);
    h.cholesky().map(|c| c.l())
}

/// The identity of size n.
pub fn identity(n: usize) -> Dense {
    Dense::identity(n, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(re: f64, im: f64) -> C64 {
        C64::new(re, im)
    }

    #[test]
    fn rows_round_trip_and_lu_solves() {
        let v = [c(2.0, 1.0), c(0.5, 0.0), c(-1.0, 0.3), c(3.0, -2.0)];
        let a = from_rows(2, 2, &v);
        assert_eq!(to_rows(&a), v.to_vec());
        let x = from_rows(2, 1, &[c(1.0, -1.0), c(0.25, 2.0)]);
        let b = &a * &x;
        let y = Lu::new(&a, 1e-14).unwrap().solve(&b).unwrap();
        assert!((y - x).norm() < 1e-14);
        // A singular matrix is refused.
        let s = from_rows(2, 2, &[c(1.0, 0.0), c(2.0, 0.0), c(2.0, 0.0), c(4.0, 0.0)]);
        assert!(Lu::new(&s, 1e-12).is_none());
    }

    #[test]
    fn gram_factor_orthonormalises_and_reveals_rank() {
        // Three columns of which the third is the sum of the first two.
        let w = from_rows(
            4,
            3,
            &[
                c(1.0, 0.0),
                c(0.0, 1.0),
                c(1.0, 1.0),
                c(0.5, 0.0),
                c(2.0, 0.0),
                c(2.5, 0.0),
                c(0.0, -1.0),
                c(1.0, 0.0),
                c(1.0, -1.0),
                c(0.3, 0.3),
                c(0.0, 0.0),
                c(0.3, 0.3),
            ],
        );
        let g = w.adjoint() * &w;
        let (t, s) = gram_factor(&g, 1e-12).unwrap();
        assert_eq!(t.ncols(), 2, "rank 2");
        let q = &w * &t;
        assert!((q.adjoint() * &q - identity(2)).norm() < 1e-12);
        assert!((&q * &s - &w).norm() < 1e-12);
    }
}
