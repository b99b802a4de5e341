//! Gauge-link compression (seed clark2010, Appendix A): a link is stored as
//! 18 reals, as 12 (the first two rows; the third is `c = (a × b)*`), or as
//! 8 (`a2`, `a3`, `b1` and the phases of `a1` and `c1`; the rest rebuilt
//! from unitarity). Both compressed forms assume SU(3); the caller checks
//! that (`api::gauge`) before asking for them.
//!
//! The 8-number rebuild, with `N = √(|a2|² + |a3|²)`:
//! `a1 = √(1 − N²) e^{iθ_a1}`, `c1 = √(1 − |a1|² − |b1|²) e^{iθ_c1}`
//! (a negative argument, possible after rounding, is set to zero as the seed
//! advises); the plane orthogonal to `a` is spanned by
//! `b' = (0, −a3*, a2*)/N` and `c' = (a × b')* = (N, −a1* a2/N, −a1* a3/N)`,
//! and `b = p1 b' + p2 c'`, `c = −p2* b' + p1* c'` with `p2 = b1/N`,
//! `p1 = c1*/N`. (The seed's printed matrix has a sign typo in `b'`; this
//! form is the one that is orthogonal to `a`.) Singular at `|a1| = 1`.

use num_complex::Complex64 as C64;

use crate::precision::Reconstruct;
use crate::su3::{conj_cross, Su3};

impl Reconstruct {
    /// Reals stored per link.
    pub fn reals(self) -> usize {
        match self {
            Reconstruct::Full18 => 18,
            Reconstruct::Twelve => 12,
            Reconstruct::Eight => 8,
        }
    }
}

/// Writes the stored reals of `u` into `out[..r.reals()]`. For `Eight` the
/// two phases are stored divided by π, so every stored number lies in [−1, 1].
pub fn compress(u: &Su3, r: Reconstruct, out: &mut [f64]) {
    let m = &u.0;
    match r {
        Reconstruct::Full18 => u.to_row_major(&mut out[..18]),
        Reconstruct::Twelve => {
            for row in 0..2 {
                for col in 0..3 {
                    out[2 * (3 * row + col)] = m[row][col].re;
                    out[2 * (3 * row + col) + 1] = m[row][col].im;
                }
            }
        }
        Reconstruct::Eight => {
            let pi = std::f64::consts::PI;
            out[0] = m[0][1].re;
            out[1] = m[0][1].im;
            out[2] = m[0][2].re;
            out[3] = m[0][2].im;
            out[4] = m[1][0].re;
            out[5] = m[1][0].im;
            out[6] = m[0][0].arg() / pi;
            out[7] = m[2][0].arg() / pi;
        }
    }
}

/// Rebuilds the link from its stored reals.
#[inline(always)]
pub fn decompress(v: &[f64], r: Reconstruct) -> Su3 {
    let c = |k: usize| C64::new(v[k], v[k + 1]);
    match r {
        Reconstruct::Full18 => Su3::from_row_major(&v[..18]),
        Reconstruct::Twelve => {
            let a = [c(0), c(2), c(4)];
            let b = [c(6), c(8), c(10)];
            Su3([a, b, conj_cross(&a, &b)])
        }
        Reconstruct::Eight => {
            let pi = std::f64::consts::PI;
            let (a2, a3, b1) = (c(0), c(2), c(4));
            let n2 = a2.norm_sqr() + a3.norm_sqr();
            let a1 = C64::from_polar((1.0 - n2).max(0.0).sqrt(), v[6] * pi);
            let c1_abs2 = (1.0 - a1.norm_sqr() - b1.norm_sqr()).max(0.0);
            let c1 = C64::from_polar(c1_abs2.sqrt(), v[7] * pi);
            let n = n2.sqrt();
            let inv_n = 1.0 / n;
            let b_prime = [C64::new(0.0, 0.0), -a3.conj() * inv_n, a2.conj() * inv_n];
            let c_prime = [
                C64::new(n, 0.0),
                -a1.conj() * a2 * inv_n,
                -a1.conj() * a3 * inv_n,
            ];
            let (p1, p2) = (c1.conj() * inv_n, b1 * inv_n);
            let b: [C64; 3] = std::array::from_fn(|k| p1 * b_prime[k] + p2 * c_prime[k]);
            let cc: [C64; 3] =
                std::array::from_fn(|k| -p2.conj() * b_prime[k] + p1.conj() * c_prime[k]);
            Su3([[a1, a2, a3], b, cc])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random;

    fn max_diff(a: &Su3, b: &Su3) -> f64 {
        a.max_diff(b)
    }

    #[test]
    fn twelve_and_eight_rebuild_su3_links_exactly() {
        let mut rng = random::rng(1);
        for _ in 0..1000 {
            let u = random::su3(&mut rng);
            for r in [Reconstruct::Full18, Reconstruct::Twelve, Reconstruct::Eight] {
                let mut v = [0.0; 18];
                compress(&u, r, &mut v);
                let w = decompress(&v[..r.reals()], r);
                assert!(max_diff(&u, &w) < 1e-13, "{r:?}: {}", max_diff(&u, &w));
            }
        }
    }

    #[test]
    fn stored_reals_lie_in_the_unit_interval() {
        let mut rng = random::rng(2);
        for _ in 0..200 {
            let u = random::su3(&mut rng);
            for r in [Reconstruct::Full18, Reconstruct::Twelve, Reconstruct::Eight] {
                let mut v = [0.0; 18];
                compress(&u, r, &mut v);
                assert!(v[..r.reals()].iter().all(|x| x.abs() <= 1.0));
            }
        }
    }

    #[test]
    fn eight_survives_a_negative_square_root_argument() {
        // Rounded inputs can make 1 − |a1|² − |b1|² slightly negative.
        let mut rng = random::rng(3);
        let u = random::su3(&mut rng);
        let mut v = [0.0; 18];
        compress(&u, Reconstruct::Eight, &mut v);
        v[4] *= 1.0 + 1e-3;
        v[5] *= 1.0 + 1e-3;
        let w = decompress(&v[..8], Reconstruct::Eight);
        assert!(w.is_finite());
    }
}
