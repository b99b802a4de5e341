//! The inverse of a Hermitian 6×6 clover block by its LDL† factorisation
//! (`B = L D L†`, L unit lower triangular, D real): exact for any
//! non-singular block whose leading minors do not vanish, which holds for
//! every positive definite block (the physical case, 1 + small σ·F) and
//! more. A pivot that is not a finite number well away from zero, relative
//! to the block's size, is reported instead of divided by.

// Dense 6×6 algebra reads clearest with explicit indices.
#![allow(clippy::needless_range_loop)]

use num_complex::Complex64 as C64;

use super::Block;

/// Smallest accepted |pivot| relative to the block's largest entry: below
/// it the inverse would carry more than ~1e-8 relative rounding error in
/// double, and the operator is ill-conditioned at that site.
const MIN_PIVOT: f64 = 1e-8;

/// `B⁻¹`, or why it is refused.
pub fn invert(b: &Block) -> std::result::Result<Block, String> {
    let scale = b.iter().flatten().map(|z| z.norm()).fold(0.0f64, f64::max);
    if !scale.is_finite() || scale == 0.0 {
        return Err(format!("its largest entry is {scale}"));
    }
    for (i, row) in b.iter().enumerate() {
        for j in 0..i {
            if (row[j] - b[j][i].conj()).norm() > 1e-12 * scale {
                return Err(format!("it is not Hermitian (entry ({i}, {j}))"));
            }
        }
    }
    let zero = C64::new(0.0, 0.0);
    let mut l = [[zero; 6]; 6];
    let mut d = [0.0f64; 6];
    for j in 0..6 {
        // d_j = B_jj − Σ_k |L_jk|² d_k
        let mut dj = b[j][j].re;
        for k in 0..j {
            dj -= l[j][k].norm_sqr() * d[k];
        }
        if !(dj.is_finite() && dj.abs() > MIN_PIVOT * scale) {
            return Err(format!(
                "pivot {j} of its LDL† factorisation is {dj:.3e} (block scale {scale:.3e})"
            ));
        }
        d[j] = dj;
        l[j][j] = C64::new(1.0, 0.0);
        for i in (j + 1)..6 {
            // L_ij = (B_ij − Σ_k L_ik d_k conj(L_jk)) / d_j
            let mut s = b[i][j];
            for k in 0..j {
                s -= l[i][k] * d[k] * l[j][k].conj();
            }
            l[i][j] = s / dj;
        }
    }
    // Columns of B⁻¹: solve L y = e, then D z = y, then L† x = z.
    let mut inv = [[zero; 6]; 6];
    for col in 0..6 {
        let mut y = [zero; 6];
        for i in 0..6 {
            let mut s = if i == col { C64::new(1.0, 0.0) } else { zero };
            for k in 0..i {
                s -= l[i][k] * y[k];
            }
            y[i] = s;
        }
        for i in 0..6 {
            y[i] /= d[i];
        }
        for i in (0..6).rev() {
            let mut s = y[i];
            for k in (i + 1)..6 {
                s -= l[k][i].conj() * inv[k][col];
            }
            inv[i][col] = s;
        }
    }
    // Exactly Hermitian, as the inverse of a Hermitian block is.
    for i in 0..6 {
        inv[i][i] = C64::new(inv[i][i].re, 0.0);
        for j in 0..i {
            let z = (inv[i][j] + inv[j][i].conj()) * 0.5;
            inv[i][j] = z;
            inv[j][i] = z.conj();
        }
    }
    Ok(inv)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mul(a: &Block, b: &Block) -> Block {
        let mut m = [[C64::new(0.0, 0.0); 6]; 6];
        for i in 0..6 {
            for j in 0..6 {
                m[i][j] = (0..6).map(|k| a[i][k] * b[k][j]).sum();
            }
        }
        m
    }

    /// A Hermitian block with entries of every kind, diagonally shifted by
    /// `shift` (indefinite for small shifts).
    fn block(shift: f64) -> Block {
        let mut b = [[C64::new(0.0, 0.0); 6]; 6];
        for i in 0..6 {
            b[i][i] = C64::new(shift + 0.1 * i as f64 - 0.25, 0.0);
            for j in 0..i {
                let z = C64::new(
                    0.3 * ((i * 7 + j) as f64).sin(),
                    0.2 * ((i + 3 * j) as f64).cos(),
                );
                b[i][j] = z;
                b[j][i] = z.conj();
            }
        }
        b
    }

    #[test]
    fn inverse_times_block_is_one() {
        for shift in [2.0, 1.3, 0.6] {
            let b = block(shift);
            let inv = invert(&b).unwrap();
            let p = mul(&b, &inv);
            for (i, row) in p.iter().enumerate() {
                for (j, z) in row.iter().enumerate() {
                    let e = if i == j { 1.0 } else { 0.0 };
                    assert!((z - e).norm() < 1e-13, "shift {shift}: ({i},{j}) = {z}");
                }
            }
        }
    }

    #[test]
    fn singular_and_non_finite_blocks_are_refused() {
        let mut b = block(2.0);
        // Make row/column 0 a copy of 1 (rank-deficient, still Hermitian).
        let copy = b[1];
        b[0] = copy;
        for i in 0..6 {
            b[i][0] = b[i][1];
        }
        b[0][0] = b[1][1];
        assert!(invert(&b).unwrap_err().contains("pivot"));
        let mut c = block(2.0);
        c[2][2] = C64::new(f64::NAN, 0.0);
        assert!(invert(&c).is_err());
        assert!(invert(&[[C64::new(0.0, 0.0); 6]; 6]).is_err());
    }
}
