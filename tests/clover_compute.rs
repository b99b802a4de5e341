//! The clover term computed from a gauge field (`clover::compute`, QUDA's
//! convention, docs/conventions.md "The clover term"):
//! - unit links give A = 1;
//! - A is Hermitian and block diagonal in chirality on a hot field;
//! - gauge covariance, A(x) → Ω(x) A(x) Ω(x)†;
//! - on a smooth field of constant abelian flux through the xy and zt
//!   planes the σF term equals the continuum-form expression built in this
//!   test from the plaquette angle alone, and the explicit block formulas
//!   that MILC and QUDA write out;

#![allow(clippy::needless_range_loop)] // dense 12×12 algebra

mod common;

use num_complex::Complex64 as C64;

use latsol::clover::compute::{compute, half_commutator};
use latsol::clover::{Block, CloverField};
use latsol::field::GaugeField;
use latsol::gamma;
use latsol::lattice::Parity;
use latsol::su3::Su3;

fn max_dev_from_unit(f: &CloverField) -> f64 {
    let mut d: f64 = 0.0;
    for s in f.sites() {
        for b in s {
            for (i, row) in b.iter().enumerate() {
                for (j, z) in row.iter().enumerate() {
                    let e = if i == j { 1.0 } else { 0.0 };
                    d = d.max((z - e).norm());
                }
            }
        }
    }
    d
}

fn hot(dims: [usize; 4], seed: u64) -> GaugeField {
    latsol::random::hot_gauge(&common::lattice(dims), seed)
}

#[test]
fn unit_links_give_the_unit_clover() {
    let g = GaugeField::unit(common::lattice([4, 4, 4, 4]));
    assert_eq!(max_dev_from_unit(&compute(&g, 0.3).unwrap()), 0.0);
}

#[test]
fn the_clover_is_hermitian_and_chirally_block_diagonal() {
    let g = hot([4, 4, 4, 6], 11);
    let c = 0.12 * 1.6;
    let f = compute(&g, c).unwrap();
    for s in f.sites() {
        for b in s {
            for i in 0..6 {
                for j in 0..6 {
                    assert!((b[i][j] - b[j][i].conj()).norm() < 1e-14);
                }
            }
        }
    }
    // The full 12×12 matrix from the dense gammas has no entries between
    // the chiral blocks: σ_μν commutes with γ5.
    let g5 = gamma::degrand_rossi(5);
    for mu in 0..4 {
        for nu in (mu + 1)..4 {
            let s = half_commutator(mu, nu);
            let (a, b) = (gamma::mul(&s, &g5), gamma::mul(&g5, &s));
            for i in 0..4 {
                for j in 0..4 {
                    assert!((a[i][j] - b[i][j]).norm() < 1e-15);
                }
            }
        }
    }
    // Hot links: far from 1, yet invertible at this coefficient.
    assert!(max_dev_from_unit(&f) > 0.05);
    f.inverse().unwrap();
}

/// Ω U_μ(x) Ω(x+μ)† for a random site-dependent Ω.
#[test]
fn the_clover_is_gauge_covariant() {
    let g = hot([4, 4, 4, 4], 12);
    let lat = g.lattice().clone();
    let mut rng = latsol::random::rng(99);
    let omega: Vec<Su3> = (0..lat.volume())
        .map(|_| latsol::random::su3(&mut rng))
        .collect();
    let om = |x: [usize; 4]| &omega[lat.eo_index(x)];
    let mut h = g.clone();
    for p in [Parity::Even, Parity::Odd] {
        for cb in 0..lat.half_volume() {
            let x = lat.coords(p, cb);
            for mu in 0..4 {
                let u = g.link_at(x, mu);
                *h.link_at_mut(x, mu) = om(x).mul(u).mul(&om(lat.shift(x, mu, 1)).adjoint());
            }
        }
    }
    let c = 0.2;
    let (a, b) = (compute(&g, c).unwrap(), compute(&h, c).unwrap());
    for (i, (sa, sb)) in a.sites().iter().zip(b.sites()).enumerate() {
        let w = om(a.coords_of(i));
        for k in 0..2 {
            // Ω acts on colour within each spin of the block.
            let rotated: Block = std::array::from_fn(|r| {
                std::array::from_fn(|col| {
                    let (s, ci) = (r / 3, r % 3);
                    let (t, cj) = (col / 3, col % 3);
                    let mut z = C64::new(0.0, 0.0);
                    for m in 0..3 {
                        for n in 0..3 {
                            z += w.0[ci][m] * sa[k][3 * s + m][3 * t + n] * w.0[cj][n].conj();
                        }
                    }
                    z
                })
            });
            for r in 0..6 {
                for col in 0..6 {
                    assert!(
                        (rotated[r][col] - sb[k][r][col]).norm() < 1e-13,
                        "site {i} block {k}"
                    );
                }
            }
        }
    }
}

/// A constant abelian field: every plaquette of the xy plane is
/// `exp(i B_xy T)` and of the zt plane `exp(i B_zt T)`, T = diag(1, −1, 0),
/// with the flux quantised so that the torus holds it.
fn constant_flux(dims: [usize; 4], nxy: f64, nzt: f64) -> (GaugeField, f64, f64) {
    let lat = common::lattice(dims);
    let mut g = GaugeField::unit(lat.clone());
    let tau = 2.0 * std::f64::consts::PI;
    let bxy = tau * nxy / (dims[0] * dims[1]) as f64;
    let bzt = tau * nzt / (dims[2] * dims[3]) as f64;
    let phase = |a: f64| {
        let mut u = Su3::identity();
        u.0[0][0] = C64::from_polar(1.0, a);
        u.0[1][1] = C64::from_polar(1.0, -a);
        u
    };
    for p in [Parity::Even, Parity::Odd] {
        for cb in 0..lat.half_volume() {
            let x = lat.coords(p, cb);
            // U_x = e^{−i B y T}; U_y = e^{i B Ly x T} on the last y slice.
            *g.link_at_mut(x, 0) = phase(-bxy * x[1] as f64);
            if x[1] == dims[1] - 1 {
                *g.link_at_mut(x, 1) = phase(bxy * (dims[1] * x[0]) as f64);
            }
            *g.link_at_mut(x, 2) = phase(-bzt * x[3] as f64);
            if x[3] == dims[3] - 1 {
                *g.link_at_mut(x, 3) = phase(bzt * (dims[3] * x[2]) as f64);
            }
        }
    }
    (g, bxy, bzt)
}

#[test]
fn a_constant_abelian_field_gives_the_expected_sigma_f_term() {
    let dims = [6, 4, 4, 8];
    let (g, bxy, bzt) = constant_flux(dims, 1.0, 2.0);
    let c = 0.15;
    let f = compute(&g, c).unwrap();
    // F_μν = (Q − Q†)/8 with Q = 4 e^{i B T}: F = i sin(B T), diagonal in
    // colour; A = 1 − c Σ ½[γ_μ, γ_ν] ⊗ F_μν over the two planes.
    let f_of = |b: f64, colour: usize| {
        let t = [1.0, -1.0, 0.0][colour];
        C64::new(0.0, (b * t).sin())
    };
    let (sxy, szt) = (half_commutator(0, 1), half_commutator(2, 3));
    let mut want = [[C64::new(0.0, 0.0); 12]; 12];
    for s in 0..4 {
        for t in 0..4 {
            for col in 0..3 {
                let unit = if s == t { 1.0 } else { 0.0 };
                want[3 * s + col][3 * t + col] = C64::new(unit, 0.0)
                    - c * (sxy[s][t] * f_of(bxy, col) + szt[s][t] * f_of(bzt, col));
            }
        }
    }
    for (i, site) in f.sites().iter().enumerate() {
        for k in 0..2 {
            for r in 0..6 {
                for col in 0..6 {
                    let w = want[6 * k + r][6 * k + col];
                    assert!(
                        (site[k][r][col] - w).norm() < 1e-14,
                        "site {i} block {k} ({r}, {col})"
                    );
                }
            }
        }
    }
    // The block formulas MILC's make_clov2.c and QUDA's clover_compute.cuh
    // write out: A_00 = 1 + i c (F_xy − F_zt), A_11 = 1 − i c (F_xy − F_zt),
    // A_22 = 1 + i c (F_xy + F_zt), A_33 = 1 − i c (F_xy + F_zt) (spin
    // diagonal, colour `col`), with F anti-Hermitian.
    let site = &f.sites()[0];
    for col in 0..3 {
        let (fxy, fzt) = (f_of(bxy, col), f_of(bzt, col));
        let i = C64::new(0.0, 1.0);
        let one = C64::new(1.0, 0.0);
        let diag = [
            one + i * c * (fxy - fzt),
            one - i * c * (fxy - fzt),
            one + i * c * (fxy + fzt),
            one - i * c * (fxy + fzt),
        ];
        for (spin, d) in diag.iter().enumerate() {
            let (k, s) = (spin / 2, spin % 2);
            let got = site[k][3 * s + col][3 * s + col];
            assert!(
                (got - d).norm() < 1e-14,
                "spin {spin} colour {col}: {got} vs {d}"
            );
        }
    }
}
