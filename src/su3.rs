//! Colour algebra: complex 3×3 matrices (gauge links) and colour vectors.
//! Row-major `m[row][col]`, as every host gauge order except CPS stores them.

use num_complex::Complex64 as C64;

/// A colour vector: three complex numbers.
pub type ColorVector = [C64; 3];

/// A complex 3×3 matrix, row-major. Gauge links are in SU(3).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Su3(pub [[C64; 3]; 3]);

const ZERO: C64 = C64::new(0.0, 0.0);
const ONE: C64 = C64::new(1.0, 0.0);

impl Default for Su3 {
    fn default() -> Self {
        Su3::identity()
    }
}

impl Su3 {
    pub fn zero() -> Su3 {
        Su3([[ZERO; 3]; 3])
    }

    pub fn identity() -> Su3 {
        let mut m = Su3::zero();
        for i in 0..3 {
            m.0[i][i] = ONE;
        }
        m
    }

    /// The 18 reals of a row-major link as stored by the QDP and MILC orders.
    pub fn from_row_major(re_im: &[f64]) -> Su3 {
        let mut m = Su3::zero();
        for r in 0..3 {
            for c in 0..3 {
                let k = 2 * (3 * r + c);
                m.0[r][c] = C64::new(re_im[k], re_im[k + 1]);
            }
        }
        m
    }

    pub fn to_row_major(&self, out: &mut [f64]) {
        for r in 0..3 {
            for c in 0..3 {
                let k = 2 * (3 * r + c);
                out[k] = self.0[r][c].re;
                out[k + 1] = self.0[r][c].im;
            }
        }
    }

    pub fn transpose(&self) -> Su3 {
        let mut t = Su3::zero();
        for r in 0..3 {
            for c in 0..3 {
                t.0[r][c] = self.0[c][r];
            }
        }
        t
    }

    pub fn adjoint(&self) -> Su3 {
        let mut t = Su3::zero();
        for r in 0..3 {
            for c in 0..3 {
                t.0[r][c] = self.0[c][r].conj();
            }
        }
        t
    }

    pub fn mul(&self, b: &Su3) -> Su3 {
        let mut m = Su3::zero();
        for r in 0..3 {
            for c in 0..3 {
                m.0[r][c] = (0..3).map(|k| self.0[r][k] * b.0[k][c]).sum();
            }
        }
        m
    }

    pub fn scale(&self, s: C64) -> Su3 {
        let mut m = *self;
        m.0.iter_mut().flatten().for_each(|z| *z *= s);
        m
    }

    pub fn trace(&self) -> C64 {
        self.0[0][0] + self.0[1][1] + self.0[2][2]
    }

    pub fn determinant(&self) -> C64 {
        let m = &self.0;
        m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
            - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
    }

    /// `U v`.
    #[inline(always)]
    pub fn mul_vec(&self, v: &ColorVector) -> ColorVector {
        let m = &self.0;
        [
            m[0][0] * v[0] + m[0][1] * v[1] + m[0][2] * v[2],
            m[1][0] * v[0] + m[1][1] * v[1] + m[1][2] * v[2],
            m[2][0] * v[0] + m[2][1] * v[1] + m[2][2] * v[2],
        ]
    }

    /// `U† v`.
    #[inline(always)]
    pub fn adj_mul_vec(&self, v: &ColorVector) -> ColorVector {
        let m = &self.0;
        [
            m[0][0].conj() * v[0] + m[1][0].conj() * v[1] + m[2][0].conj() * v[2],
            m[0][1].conj() * v[0] + m[1][1].conj() * v[1] + m[2][1].conj() * v[2],
            m[0][2].conj() * v[0] + m[1][2].conj() * v[1] + m[2][2].conj() * v[2],
        ]
    }

    /// Largest deviation from SU(3): `max |U U† − 1|` and `|det U − 1|`.
    /// The largest `|a_rc − b_rc|` over the entries.
    pub fn max_diff(&self, b: &Su3) -> f64 {
        self.0
            .iter()
            .flatten()
            .zip(b.0.iter().flatten())
            .map(|(x, y)| (x - y).norm())
            .fold(0.0, f64::max)
    }

    pub fn su3_deviation(&self) -> f64 {
        let u = self.mul(&self.adjoint());
        let mut dev: f64 = 0.0;
        for r in 0..3 {
            for c in 0..3 {
                let target = if r == c { ONE } else { ZERO };
                dev = dev.max((u.0[r][c] - target).norm());
            }
        }
        dev.max((self.determinant() - ONE).norm())
    }

    pub fn is_finite(&self) -> bool {
        self.0
            .iter()
            .flatten()
            .all(|z| z.re.is_finite() && z.im.is_finite())
    }

    /// Reunitarises by Gram–Schmidt on the first two rows and the third row as
    /// the conjugate cross product: the result is in SU(3).
    pub fn project_su3(&self) -> Su3 {
        let mut a = self.0[0];
        let na = a.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt();
        a.iter_mut().for_each(|z| *z /= na);
        let mut b = self.0[1];
        let ab: C64 = (0..3).map(|k| a[k].conj() * b[k]).sum();
        for k in 0..3 {
            b[k] -= ab * a[k];
        }
        let nb = b.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt();
        b.iter_mut().for_each(|z| *z /= nb);
        Su3([a, b, conj_cross(&a, &b)])
    }
}

/// `(a × b)*`: the third row of an SU(3) matrix from its first two rows.
pub fn conj_cross(a: &ColorVector, b: &ColorVector) -> ColorVector {
    [
        (a[1] * b[2] - a[2] * b[1]).conj(),
        (a[2] * b[0] - a[0] * b[2]).conj(),
        (a[0] * b[1] - a[1] * b[0]).conj(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projection_lands_in_su3() {
        let mut m = Su3::identity();
        m.0[0][1] = C64::new(0.3, -0.2);
        m.0[2][0] = C64::new(-0.1, 0.7);
        m.0[1][1] = C64::new(0.5, 0.5);
        let u = m.project_su3();
        assert!(u.su3_deviation() < 1e-14);
    }

    #[test]
    fn adjoint_mul_vec_matches_adjoint() {
        let u = Su3([
            [C64::new(1.0, 2.0), C64::new(0.5, -1.0), C64::new(0.0, 0.3)],
            [C64::new(-0.2, 0.1), C64::new(0.7, 0.0), C64::new(1.1, -0.4)],
            [C64::new(0.9, 0.9), C64::new(-1.3, 0.2), C64::new(0.4, 0.6)],
        ]);
        let v = [C64::new(0.1, 0.2), C64::new(-0.3, 0.4), C64::new(0.5, -0.6)];
        let a = u.adj_mul_vec(&v);
        let b = u.adjoint().mul_vec(&v);
        for k in 0..3 {
            assert!((a[k] - b[k]).norm() < 1e-15);
        }
    }
}
