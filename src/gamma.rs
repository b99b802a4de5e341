//! Dirac matrices in the DeGrand–Rossi basis (the hosts') and the UKQCD basis
//! (the library's internal and device basis, where γ4 is diagonal), and the
//! unitary change of basis `ψ_DR = T ψ_UKQCD` (docs/conventions.md, "Gamma
//! matrices"). The operator kernels hard-code the UKQCD projectors; these
//! dense matrices define them and serve the conversions and the tests.

use num_complex::Complex64 as C64;

pub type SpinMatrix = [[C64; 4]; 4];

const O: C64 = C64::new(0.0, 0.0);
const R: C64 = C64::new(1.0, 0.0);
const I: C64 = C64::new(0.0, 1.0);

/// The three Pauli matrices σ1, σ2, σ3.
fn pauli(k: usize) -> [[C64; 2]; 2] {
    match k {
        1 => [[O, R], [R, O]],
        2 => [[O, -I], [I, O]],
        3 => [[R, O], [O, -R]],
        _ => unreachable!("Pauli index {k}"),
    }
}

/// Builds a 4×4 matrix from 2×2 blocks ((a, b), (c, d)).
fn blocks(a: [[C64; 2]; 2], b: [[C64; 2]; 2], c: [[C64; 2]; 2], d: [[C64; 2]; 2]) -> SpinMatrix {
    let mut m = [[O; 4]; 4];
    for i in 0..2 {
        for j in 0..2 {
            m[i][j] = a[i][j];
            m[i][j + 2] = b[i][j];
            m[i + 2][j] = c[i][j];
            m[i + 2][j + 2] = d[i][j];
        }
    }
    m
}

fn scale2(s: C64, m: [[C64; 2]; 2]) -> [[C64; 2]; 2] {
    [[s * m[0][0], s * m[0][1]], [s * m[1][0], s * m[1][1]]]
}

const ZERO2: [[C64; 2]; 2] = [[O, O], [O, O]];
const ONE2: [[C64; 2]; 2] = [[R, O], [O, R]];

/// `γ_mu` in the DeGrand–Rossi basis, `mu` = 1..=4, and γ5 for `mu` = 5.
pub fn degrand_rossi(mu: usize) -> SpinMatrix {
    match mu {
        1 => blocks(ZERO2, scale2(I, pauli(1)), scale2(-I, pauli(1)), ZERO2),
        2 => blocks(ZERO2, scale2(-I, pauli(2)), scale2(I, pauli(2)), ZERO2),
        3 => blocks(ZERO2, scale2(I, pauli(3)), scale2(-I, pauli(3)), ZERO2),
        4 => blocks(ZERO2, ONE2, ONE2, ZERO2),
        5 => blocks(scale2(-R, ONE2), ZERO2, ZERO2, ONE2),
        _ => panic!("gamma index {mu} out of 1..=5"),
    }
}

/// `γ_mu` in the UKQCD (non-relativistic) basis, `mu` = 1..=4, γ5 for 5.
pub fn ukqcd(mu: usize) -> SpinMatrix {
    match mu {
        1..=3 => blocks(ZERO2, scale2(I, pauli(mu)), scale2(-I, pauli(mu)), ZERO2),
        4 => blocks(ONE2, ZERO2, ZERO2, scale2(-R, ONE2)),
        5 => blocks(ZERO2, scale2(-R, ONE2), scale2(-R, ONE2), ZERO2),
        _ => panic!("gamma index {mu} out of 1..=5"),
    }
}

/// `T` with `ψ_DR = T ψ_UKQCD`: `T = (i/√2) ((−σ2, −σ2), (−σ2, σ2))`.
pub fn ukqcd_to_degrand_rossi() -> SpinMatrix {
    let s = I * std::f64::consts::FRAC_1_SQRT_2;
    let m = scale2(-R, pauli(2));
    let t = blocks(m, m, m, pauli(2));
    let mut out = [[O; 4]; 4];
    for i in 0..4 {
        for j in 0..4 {
            out[i][j] = s * t[i][j];
        }
    }
    out
}

/// `K` with `ψ_UKQCD = K ψ_chiral` and `ψ_chiral = K ψ_UKQCD`: on the
/// upper (u) and lower (l) spin pairs, `(−u + l, u + l)/√2`; real,
/// symmetric and its own inverse. It is QUDA's chiral basis (its
/// `ChiralToNonRelBasis` and `NonRelToChiralBasis` transforms in
/// include/kernels/copy_color_spinor.cuh), where γ5 is diagonal.
pub fn chiral_to_ukqcd() -> SpinMatrix {
    let s = std::f64::consts::FRAC_1_SQRT_2;
    let k = [[-s, s], [s, s]];
    let mut m = [[O; 4]; 4];
    for i in 0..2 {
        for j in 0..2 {
            for pair in 0..2 {
                m[2 * i + pair][2 * j + pair] = C64::new(k[i][j], 0.0);
            }
        }
    }
    m
}

/// `γ_mu` in the chiral basis, `mu` = 1..=4, γ5 for 5: `K γ_mu^UKQCD K`.
pub fn chiral(mu: usize) -> SpinMatrix {
    let k = chiral_to_ukqcd();
    mul(&mul(&k, &ukqcd(mu)), &k)
}

/// `T†`, with `ψ_UKQCD = T† ψ_DR`.
pub fn degrand_rossi_to_ukqcd() -> SpinMatrix {
    adjoint(&ukqcd_to_degrand_rossi())
}

pub fn mul(a: &SpinMatrix, b: &SpinMatrix) -> SpinMatrix {
    let mut m = [[O; 4]; 4];
    for i in 0..4 {
        for j in 0..4 {
            m[i][j] = (0..4).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    m
}

pub fn adjoint(a: &SpinMatrix) -> SpinMatrix {
    let mut m = [[O; 4]; 4];
    for i in 0..4 {
        for j in 0..4 {
            m[i][j] = a[j][i].conj();
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn max_diff(a: &SpinMatrix, b: &SpinMatrix) -> f64 {
        let mut d: f64 = 0.0;
        for i in 0..4 {
            for j in 0..4 {
                d = d.max((a[i][j] - b[i][j]).norm());
            }
        }
        d
    }

    #[test]
    fn basis_change_maps_ukqcd_onto_degrand_rossi() {
        let t = ukqcd_to_degrand_rossi();
        let td = adjoint(&t);
        for mu in 1..=5 {
            let g = mul(&mul(&t, &ukqcd(mu)), &td);
            assert!(max_diff(&g, &degrand_rossi(mu)) < 1e-15, "gamma_{mu}");
        }
        let id = mul(&t, &td);
        assert!(max_diff(&id, &blocks(ONE2, ZERO2, ZERO2, ONE2)) < 1e-15);
    }

    #[test]
    fn chiral_basis_change_is_its_own_inverse_and_makes_gamma5_diagonal() {
        let k = chiral_to_ukqcd();
        assert!(max_diff(&mul(&k, &k), &blocks(ONE2, ZERO2, ZERO2, ONE2)) < 1e-15);
        assert!(max_diff(&k, &adjoint(&k)) < 1e-15);
        // Upper pair γ5 = +1, lower −1 with γ5 = γ4 γ1 γ2 γ3 (QUDA writes
        // the opposite sign for its own γ5 convention).
        let g5 = chiral(5);
        assert!(max_diff(&g5, &blocks(ONE2, ZERO2, ZERO2, scale2(-R, ONE2))) < 1e-15);
        // QUDA's ChiralToNonRelBasis: u0 = (−c0 + c2)/√2, u2 = (c0 + c2)/√2.
        let s = std::f64::consts::FRAC_1_SQRT_2;
        assert!((k[0][0].re + s).abs() < 1e-15 && (k[0][2].re - s).abs() < 1e-15);
        assert!((k[2][0].re - s).abs() < 1e-15 && (k[2][2].re - s).abs() < 1e-15);
        assert!((k[1][1].re + s).abs() < 1e-15 && (k[3][3].re - s).abs() < 1e-15);
    }

    #[test]
    fn gamma5_is_the_product_in_both_bases() {
        for basis in [degrand_rossi as fn(usize) -> SpinMatrix, ukqcd, chiral] {
            let g = mul(&mul(&basis(4), &basis(1)), &mul(&basis(2), &basis(3)));
            assert!(max_diff(&g, &basis(5)) < 1e-15);
        }
    }

    #[test]
    fn clifford_algebra_holds() {
        for basis in [degrand_rossi as fn(usize) -> SpinMatrix, ukqcd] {
            for m in 1..=4 {
                for n in 1..=4 {
                    let a = mul(&basis(m), &basis(n));
                    let b = mul(&basis(n), &basis(m));
                    let mut s = [[O; 4]; 4];
                    for i in 0..4 {
                        for j in 0..4 {
                            s[i][j] = a[i][j] + b[i][j];
                        }
                    }
                    let mut expect = [[O; 4]; 4];
                    if m == n {
                        for (i, row) in expect.iter_mut().enumerate() {
                            row[i] = C64::new(2.0, 0.0);
                        }
                    }
                    assert!(max_diff(&s, &expect) < 1e-15);
                }
            }
        }
    }
}
