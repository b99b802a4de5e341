//! Properties of the Wilson operator that hold in any convention
//! (docs/conventions.md): γ5-hermiticity, gauge covariance, the free-field
//! plane-wave spectrum, agreement with a dense matrix built element by
//! element from the definition, and the plaquette.

// Index loops here follow the formulas (rows, columns, directions).
#![allow(clippy::needless_range_loop)]

mod common;

use common::*;
use latsol::field::{GaugeField, HostSpinor};
use latsol::gamma;
use latsol::lattice::Subset;
use latsol::precision::TBoundary;
use latsol::random;
use latsol::su3::Su3;
use num_complex::Complex64 as C64;

/// Double-precision operator: a few thousand roundings per site at most.
const TOL: f64 = 1e-13;

#[test]
fn gamma5_hermiticity() {
    let b = backend();
    let lat = lattice([4, 4, 6, 8]);
    let g = random::hot_gauge(&lat, 11);
    for bc in [TBoundary::Periodic, TBoundary::AntiPeriodic] {
        let x = random::spinor(&lat, Subset::Full, 1);
        let y = random::spinor(&lat, Subset::Full, 2);
        // ⟨y, M x⟩ = ⟨γ5 M γ5 y, x⟩
        let lhs = dot(&y, &apply_m(&b, &g, bc, 0.12, &x, false));
        let g5mg5y = gamma5(&apply_m(&b, &g, bc, 0.12, &gamma5(&y), false));
        let rhs = dot(&g5mg5y, &x);
        assert!((lhs - rhs).norm() < TOL * lhs.norm(), "{lhs} vs {rhs}");
        // and the backend's M† is γ5 M γ5
        let mdag = apply_m(&b, &g, bc, 0.12, &x, true);
        let g5mg5 = gamma5(&apply_m(&b, &g, bc, 0.12, &gamma5(&x), false));
        assert!(rel_diff(&mdag, &g5mg5) < TOL);
        // ⟨y, M x⟩ = ⟨M† y, x⟩
        let rhs2 = dot(&apply_m(&b, &g, bc, 0.12, &y, true), &x);
        assert!((lhs - rhs2).norm() < TOL * lhs.norm());
    }
}

#[test]
fn gauge_covariance() {
    let b = backend();
    let lat = lattice([4, 6, 4, 4]);
    let g = random::hot_gauge(&lat, 5);
    let psi = random::spinor(&lat, Subset::Full, 6);
    // Ω(x) random; U'_μ(x) = Ω(x) U_μ(x) Ω(x+μ)†, ψ'(x) = Ω(x) ψ(x).
    let mut rng = random::rng(7);
    let omega: Vec<Su3> = (0..lat.volume()).map(|_| random::su3(&mut rng)).collect();
    let om = |x: [usize; 4]| &omega[lat.eo_index(x)];
    let mut g2 = GaugeField::unit(lat.clone());
    let mut psi2 = HostSpinor::zeros(lat.clone(), Subset::Full);
    let rotate = |o: &Su3, s: &[C64], out: &mut [C64]| {
        for spin in 0..4 {
            let v = o.mul_vec(&[s[3 * spin], s[3 * spin + 1], s[3 * spin + 2]]);
            out[3 * spin..3 * spin + 3].copy_from_slice(&v);
        }
    };
    for i in 0..lat.volume() {
        let p = latsol::lattice::Parity::from_index(i / lat.half_volume());
        let x = lat.coords(p, i % lat.half_volume());
        for mu in 0..4 {
            *g2.link_at_mut(x, mu) = om(x)
                .mul(g.link_at(x, mu))
                .mul(&om(lat.shift(x, mu, 1)).adjoint());
        }
        rotate(om(x), psi.site(i), psi2.site_mut(i));
    }
    for bc in [TBoundary::Periodic, TBoundary::AntiPeriodic] {
        let m_psi = apply_m(&b, &g, bc, 0.13, &psi, false);
        let m2_psi2 = apply_m(&b, &g2, bc, 0.13, &psi2, false);
        let mut expect = HostSpinor::zeros(lat.clone(), Subset::Full);
        for i in 0..lat.volume() {
            let p = latsol::lattice::Parity::from_index(i / lat.half_volume());
            let x = lat.coords(p, i % lat.half_volume());
            rotate(om(x), m_psi.site(i), expect.site_mut(i));
        }
        assert!(rel_diff(&m2_psi2, &expect) < TOL);
    }
}

/// `e^{i p·x} u` is an eigenvector of the free `M` with the spin matrix
/// `1 − κ Σ_μ (2 cos p_μ − 2i γ_μ sin p_μ)` acting on `u`.
#[test]
fn free_field_plane_waves() {
    let b = backend();
    let dims = [4, 6, 4, 8];
    let lat = lattice(dims);
    let g = GaugeField::unit(lat.clone());
    let kappa = 0.11;
    let mut rng = random::rng(3);
    for bc in [TBoundary::Periodic, TBoundary::AntiPeriodic] {
        for n in [[0, 0, 0, 0], [1, 2, 3, 1], [3, 5, 1, 6], [2, 1, 0, 7]] {
            let mut p = [0.0; 4];
            for mu in 0..4 {
                p[mu] = 2.0 * std::f64::consts::PI * n[mu] as f64 / dims[mu] as f64;
            }
            if bc == TBoundary::AntiPeriodic {
                p[3] += std::f64::consts::PI / dims[3] as f64;
            }
            let u: Vec<C64> = (0..12).map(|_| random::gaussian(&mut rng)).collect();
            let mut psi = HostSpinor::zeros(lat.clone(), Subset::Full);
            for i in 0..lat.volume() {
                let par = latsol::lattice::Parity::from_index(i / lat.half_volume());
                let x = lat.coords(par, i % lat.half_volume());
                let phase = C64::from_polar(1.0, (0..4).map(|m| p[m] * x[m] as f64).sum());
                for (k, z) in psi.site_mut(i).iter_mut().enumerate() {
                    *z = phase * u[k];
                }
            }
            // The eigenvalue matrix in the UKQCD basis.
            let mut lam = [[C64::new(0.0, 0.0); 4]; 4];
            for (a, row) in lam.iter_mut().enumerate() {
                row[a] = C64::new(1.0, 0.0);
            }
            for mu in 0..4 {
                let gm = gamma::ukqcd(mu + 1);
                for a in 0..4 {
                    lam[a][a] -= kappa * 2.0 * p[mu].cos();
                    for c in 0..4 {
                        lam[a][c] += kappa * C64::new(0.0, 2.0 * p[mu].sin()) * gm[a][c];
                    }
                }
            }
            let mut expect = psi.clone();
            for i in 0..lat.volume() {
                let s = psi.site(i).to_vec();
                let o = expect.site_mut(i);
                for a in 0..4 {
                    for c in 0..3 {
                        o[3 * a + c] = (0..4).map(|bb| lam[a][bb] * s[3 * bb + c]).sum();
                    }
                }
            }
            let got = apply_m(&b, &g, bc, kappa, &psi, false);
            assert!(rel_diff(&got, &expect) < TOL, "p = {p:?}, {bc:?}");
        }
    }
}

/// Builds `M` element by element from the definition (dense 4×4 UKQCD γ's,
/// coordinates walked by hand) on a 2⁴ lattice — where x+μ̂ and x−μ̂ are the
/// same site, so both hops land on one neighbour — and compares every column.
#[test]
fn dense_matrix_on_2_to_the_4() {
    let b = backend();
    let dims = [2, 2, 2, 2];
    let lat = lattice(dims);
    let g = random::hot_gauge(&lat, 21);
    let kappa = 0.15;
    let bc = TBoundary::AntiPeriodic;
    let n = 12 * lat.volume();
    let row = |x: [usize; 4], spin: usize, color: usize| 12 * lat.eo_index(x) + 3 * spin + color;
    let mut dense = vec![vec![C64::new(0.0, 0.0); n]; n];
    for (i, r) in dense.iter_mut().enumerate() {
        r[i] = C64::new(1.0, 0.0);
    }
    let sites: Vec<[usize; 4]> = (0..16)
        .map(|l| [l % 2, (l / 2) % 2, (l / 4) % 2, l / 8])
        .collect();
    for &x in &sites {
        for mu in 0..4 {
            let gm = gamma::ukqcd(mu + 1);
            let mut fwd = x;
            fwd[mu] = (x[mu] + 1) % dims[mu];
            let mut bwd = x;
            bwd[mu] = (x[mu] + dims[mu] - 1) % dims[mu];
            // The boundary factor on hops across the T edge.
            let s_fwd = if mu == 3 && x[3] == dims[3] - 1 {
                bc.sign()
            } else {
                1.0
            };
            let s_bwd = if mu == 3 && x[3] == 0 { bc.sign() } else { 1.0 };
            let u_fwd = g.link_at(x, mu);
            let u_bwd = g.link_at(bwd, mu).adjoint();
            for a in 0..4 {
                for bb in 0..4 {
                    let id = if a == bb { 1.0 } else { 0.0 };
                    let pm = C64::new(id, 0.0) - gm[a][bb]; // (1 − γ)
                    let pp = C64::new(id, 0.0) + gm[a][bb]; // (1 + γ)
                    for c in 0..3 {
                        for d in 0..3 {
                            dense[row(x, a, c)][row(fwd, bb, d)] -=
                                kappa * s_fwd * pm * u_fwd.0[c][d];
                            dense[row(x, a, c)][row(bwd, bb, d)] -=
                                kappa * s_bwd * pp * u_bwd.0[c][d];
                        }
                    }
                }
            }
        }
    }
    for col in 0..n {
        let mut e = HostSpinor::zeros(lat.clone(), Subset::Full);
        e.data_mut()[col] = C64::new(1.0, 0.0);
        let got = apply_m(&b, &g, bc, kappa, &e, false);
        for r in 0..n {
            let diff = (got.data()[r] - dense[r][col]).norm();
            assert!(
                diff < 1e-14,
                "M[{r}][{col}]: {} vs {}",
                got.data()[r],
                dense[r][col]
            );
        }
    }
}

#[test]
fn plaquette_of_unit_and_random_fields() {
    let lat = lattice([4, 4, 4, 6]);
    let unit = GaugeField::unit(lat.clone());
    for v in unit.plaquette() {
        assert!((v - 1.0).abs() < 1e-15);
    }
    // Independently: links in a lexicographic array, plaquette by hand.
    let g = random::hot_gauge(&lat, 8);
    let d = lat.dims();
    let lex = |x: [usize; 4]| x[0] + d[0] * (x[1] + d[1] * (x[2] + d[2] * x[3]));
    let mut links = vec![Su3::identity(); 4 * lat.volume()];
    let mut all = Vec::new();
    for t in 0..d[3] {
        for z in 0..d[2] {
            for y in 0..d[1] {
                for xx in 0..d[0] {
                    all.push([xx, y, z, t]);
                }
            }
        }
    }
    for &x in &all {
        for mu in 0..4 {
            links[4 * lex(x) + mu] = *g.link_at(x, mu);
        }
    }
    let step = |mut x: [usize; 4], mu: usize| {
        x[mu] = (x[mu] + 1) % d[mu];
        x
    };
    let (mut s, mut t) = (0.0, 0.0);
    for &x in &all {
        for mu in 0..4 {
            for nu in mu + 1..4 {
                let u = links[4 * lex(x) + mu]
                    .mul(&links[4 * lex(step(x, mu)) + nu])
                    .mul(&links[4 * lex(step(x, nu)) + mu].adjoint())
                    .mul(&links[4 * lex(x) + nu].adjoint());
                if nu == 3 {
                    t += u.trace().re / 3.0;
                } else {
                    s += u.trace().re / 3.0;
                }
            }
        }
    }
    let n = 3.0 * lat.volume() as f64;
    let expect = [(s + t) / (2.0 * n), s / n, t / n];
    let got = g.plaquette();
    for k in 0..3 {
        assert!(
            (got[k] - expect[k]).abs() < 1e-14,
            "{k}: {} vs {}",
            got[k],
            expect[k]
        );
    }
    // A hot field has a plaquette near zero.
    assert!(got[0].abs() < 0.05);
}
