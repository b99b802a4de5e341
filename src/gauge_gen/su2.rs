//! SU(2) as quaternions, the three SU(2) subgroups of SU(3) used by the
//! Cabibbo–Marinari updates, and the SU(2) heatbath.
//!
//! Quaternion convention: `a = (a0, a1, a2, a3)` stands for the 2×2 matrix
//! `a0 + i a·σ = ((a0 + i a3, a2 + i a1), (−a2 + i a1, a0 − i a3))`. It is in
//! SU(2) when `|a| = 1`; every real multiple `k V` (k ≥ 0, V ∈ SU(2)) is a
//! quaternion, and the quaternion part of any complex 2×2 matrix `w` is what
//! `Re tr(r w)` sees for every `r ∈ SU(2)`.
//!
//! The heatbath draws `x ∈ SU(2)` with density `∝ exp(α x0)` with respect to
//! the Haar measure, i.e. `x0` with density `∝ sqrt(1 − x0²) exp(α x0)` on
//! [−1, 1] and the direction of `(x1, x2, x3)` uniform on the sphere:
//! - Kennedy and Pendleton, Phys. Lett. B 156 (1985) 393, for large α (its
//!   acceptance tends to 1 as α grows);
//! - Creutz, Phys. Rev. D 21 (1980) 2308, for small α (draw `x0 ∝ exp(α x0)`
//!   exactly, accept with probability `sqrt(1 − x0²)`; its acceptance tends to
//!   π/4 as α → 0, where Kennedy–Pendleton's tends to 0).

use num_complex::Complex64 as C64;
use rand::Rng;

use crate::su3::Su3;

/// The three SU(2) subgroups of SU(3): the (row, column) pairs they act on.
/// Updating all three in turn covers SU(3) (Cabibbo–Marinari).
pub const SUBGROUPS: [(usize, usize); 3] = [(0, 1), (0, 2), (1, 2)];

/// Below this α, Creutz's sampler is the more efficient of the two (both are
/// exact for every α). Their acceptance rates cross near α ≈ 1.6 (0.67 and
/// 0.72 at α = 1.5, 0.76 and 0.69 at α = 2); a Kennedy–Pendleton trial costs
/// more (two logarithms and a cosine), which moves the break-even up a little.
const CREUTZ_BELOW: f64 = 2.0;

/// A quaternion `a0 + i a·σ` (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quaternion(pub [f64; 4]);

impl Quaternion {
    pub fn identity() -> Quaternion {
        Quaternion([1.0, 0.0, 0.0, 0.0])
    }

    /// `sqrt(det)`: the `k` of `k V`.
    pub fn norm(&self) -> f64 {
        self.0.iter().map(|a| a * a).sum::<f64>().sqrt()
    }

    pub fn scale(&self, s: f64) -> Quaternion {
        Quaternion(self.0.map(|a| a * s))
    }

    /// The adjoint (the inverse on SU(2)).
    pub fn adjoint(&self) -> Quaternion {
        let [a0, a1, a2, a3] = self.0;
        Quaternion([a0, -a1, -a2, -a3])
    }

    /// `(a0 + i a·σ)(b0 + i b·σ) = a0 b0 − a·b + i (a0 b + b0 a − a × b)·σ`.
    pub fn mul(&self, b: &Quaternion) -> Quaternion {
        let [a0, a1, a2, a3] = self.0;
        let [b0, b1, b2, b3] = b.0;
        Quaternion([
            a0 * b0 - a1 * b1 - a2 * b2 - a3 * b3,
            a0 * b1 + b0 * a1 - (a2 * b3 - a3 * b2),
            a0 * b2 + b0 * a2 - (a3 * b1 - a1 * b3),
            a0 * b3 + b0 * a3 - (a1 * b2 - a2 * b1),
        ])
    }

    /// The 2×2 complex matrix, row-major.
    pub fn to_matrix(&self) -> [[C64; 2]; 2] {
        let [a0, a1, a2, a3] = self.0;
        [
            [C64::new(a0, a3), C64::new(a2, a1)],
            [C64::new(-a2, a1), C64::new(a0, -a3)],
        ]
    }

    /// The quaternion part of the 2×2 block of `w` on rows and columns
    /// `(i, j)`: for every SU(2) element `r` embedded in that block,
    /// `Re tr(r w_block) = Re tr(r q)` (the rest of the block is orthogonal).
    pub fn from_block(w: &Su3, i: usize, j: usize) -> Quaternion {
        let (w00, w01, w10, w11) = (w.0[i][i], w.0[i][j], w.0[j][i], w.0[j][j]);
        Quaternion([
            0.5 * (w00.re + w11.re),
            0.5 * (w01.im + w10.im),
            0.5 * (w01.re - w10.re),
            0.5 * (w00.im - w11.im),
        ])
    }

    /// `R m` where `R` is this quaternion embedded in SU(3) on rows and
    /// columns `(i, j)` (the identity elsewhere): only rows i and j change.
    pub fn left_mul_rows(&self, m: &mut Su3, i: usize, j: usize) {
        let [[r00, r01], [r10, r11]] = self.to_matrix();
        for c in 0..3 {
            let (mi, mj) = (m.0[i][c], m.0[j][c]);
            m.0[i][c] = r00 * mi + r01 * mj;
            m.0[j][c] = r10 * mi + r11 * mj;
        }
    }
}

/// Draws `x0 ∈ [−1, 1]` with density `∝ sqrt(1 − x0²) exp(α x0)`, α ≥ 0.
pub fn sample_x0(alpha: f64, rng: &mut impl Rng) -> f64 {
    if alpha < CREUTZ_BELOW {
        creutz_x0(alpha, rng)
    } else {
        kennedy_pendleton_x0(alpha, rng)
    }
}

/// Uniform in (0, 1]: the logarithms below must stay finite.
fn open_uniform(rng: &mut impl Rng) -> f64 {
    1.0 - rng.gen::<f64>()
}

/// Kennedy–Pendleton (1985): `λ²` from `λ² exp(−2αλ²)` (a χ² with three
/// degrees of freedom, from three uniforms), accepted with probability
/// `sqrt(1 − λ²)`; then `x0 = 1 − 2λ²`.
pub fn kennedy_pendleton_x0(alpha: f64, rng: &mut impl Rng) -> f64 {
    loop {
        let r1 = open_uniform(rng);
        let c = (2.0 * std::f64::consts::PI * rng.gen::<f64>()).cos();
        let r3 = open_uniform(rng);
        let lambda2 = -(r1.ln() + c * c * r3.ln()) / (2.0 * alpha);
        let r: f64 = rng.gen();
        if r * r <= 1.0 - lambda2 {
            return 1.0 - 2.0 * lambda2;
        }
    }
}

/// Creutz (1980): `x0` from `exp(α x0)` on [−1, 1] by inverting its
/// distribution function, accepted with probability `sqrt(1 − x0²)`.
pub fn creutz_x0(alpha: f64, rng: &mut impl Rng) -> f64 {
    loop {
        let u = open_uniform(rng);
        // x0 = 1 + ln(u + (1 − u) e^{−2α}) / α, written with ln_1p and
        // exp_m1 so that it stays accurate (and tends to 2u − 1) as α → 0.
        let x0 = if alpha > 0.0 {
            1.0 + ((1.0 - u) * (-2.0 * alpha).exp_m1()).ln_1p() / alpha
        } else {
            2.0 * u - 1.0
        };
        let x0 = x0.clamp(-1.0, 1.0);
        let r: f64 = rng.gen();
        if r * r <= 1.0 - x0 * x0 {
            return x0;
        }
    }
}

/// An SU(2) element with Haar density `∝ exp(α x0)`.
pub fn heatbath(alpha: f64, rng: &mut impl Rng) -> Quaternion {
    let x0 = sample_x0(alpha, rng);
    let r = (1.0 - x0 * x0).max(0.0).sqrt();
    // (x1, x2, x3) uniform on the sphere of radius r.
    let cos_theta = 2.0 * rng.gen::<f64>() - 1.0;
    let sin_theta = (1.0 - cos_theta * cos_theta).max(0.0).sqrt();
    let phi = 2.0 * std::f64::consts::PI * rng.gen::<f64>();
    Quaternion([
        x0,
        r * sin_theta * phi.cos(),
        r * sin_theta * phi.sin(),
        r * cos_theta,
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random;

    fn matmul2(a: [[C64; 2]; 2], b: [[C64; 2]; 2]) -> [[C64; 2]; 2] {
        let mut m = [[C64::new(0.0, 0.0); 2]; 2];
        for r in 0..2 {
            for c in 0..2 {
                m[r][c] = a[r][0] * b[0][c] + a[r][1] * b[1][c];
            }
        }
        m
    }

    #[test]
    fn quaternion_product_is_the_matrix_product() {
        let a = Quaternion([0.3, -0.5, 0.7, 0.2]);
        let b = Quaternion([-0.4, 0.1, 0.6, -0.9]);
        let m = matmul2(a.to_matrix(), b.to_matrix());
        let q = a.mul(&b).to_matrix();
        for r in 0..2 {
            for c in 0..2 {
                assert!((m[r][c] - q[r][c]).norm() < 1e-15);
            }
        }
    }

    #[test]
    fn block_projection_recovers_an_embedded_quaternion() {
        let q = Quaternion([0.3, -0.5, 0.7, 0.2]);
        for (i, j) in SUBGROUPS {
            let mut w = Su3::zero();
            let m = q.to_matrix();
            w.0[i][i] = m[0][0];
            w.0[i][j] = m[0][1];
            w.0[j][i] = m[1][0];
            w.0[j][j] = m[1][1];
            assert_eq!(Quaternion::from_block(&w, i, j), q);
        }
    }

    #[test]
    fn left_mul_rows_is_the_embedded_product_and_stays_in_su3() {
        let mut rng = random::rng(5);
        let u = random::su3(&mut rng);
        let q = heatbath(3.0, &mut rng);
        for (i, j) in SUBGROUPS {
            let mut r = Su3::identity();
            let m = q.to_matrix();
            r.0[i][i] = m[0][0];
            r.0[i][j] = m[0][1];
            r.0[j][i] = m[1][0];
            r.0[j][j] = m[1][1];
            let mut v = u;
            q.left_mul_rows(&mut v, i, j);
            let w = r.mul(&u);
            for (a, b) in v.0.iter().flatten().zip(w.0.iter().flatten()) {
                assert!((a - b).norm() < 1e-15);
            }
            assert!(v.su3_deviation() < 1e-14);
        }
    }

    #[test]
    fn heatbath_draws_unit_quaternions() {
        let mut rng = random::rng(6);
        for alpha in [0.0, 0.3, 1.9, 2.1, 30.0] {
            for _ in 0..1000 {
                let q = heatbath(alpha, &mut rng);
                assert!((q.norm() - 1.0).abs() < 1e-14, "alpha {alpha}: {q:?}");
            }
        }
    }
}
