//! The staggered operator on a lattice where no two hops coincide (every
//! extent ≥ 8, unlike the golden 6×4×4×8 set): against a reference written
//! here from the formula (docs/conventions.md, "The staggered operator"),
//! anti-Hermiticity of D, `M† = ε M ε`, and free-field plane waves,
//! `D² = −4 Σ_μ (c₁ sin p_μ + c₃ sin 3p_μ)²`.

use std::f64::consts::PI;

mod common;

use common::cpu_context;
use latsol::api::*;
use latsol::lattice::{Lattice, Parity};
use latsol::layout::{GaugeOrder, HostGauge, HostReals, HostRealsMut};
use latsol::precision::TBoundary;
use num_complex::Complex64 as C64;

const DIMS: [usize; 4] = [8, 8, 8, 8];

/// splitmix64 numbers in [−1, 1).
fn randoms(n: usize, mut s: u64) -> Vec<f64> {
    (0..n)
        .map(|_| {
            s = s.wrapping_add(0x9e3779b97f4a7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
            z ^= z >> 31;
            (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        })
        .collect()
}

/// Even-odd site index of `x` (all even sites first).
fn eo(lat: &Lattice, x: [usize; 4]) -> usize {
    lat.parity_of(x).index() * lat.half_volume() + lat.cb_index(x)
}

fn link(l: &[f64], lat: &Lattice, x: [usize; 4], mu: usize) -> [[C64; 3]; 3] {
    let off = (mu * lat.volume() + eo(lat, x)) * 18;
    std::array::from_fn(|r| {
        std::array::from_fn(|c| C64::new(l[off + 6 * r + 2 * c], l[off + 6 * r + 2 * c + 1]))
    })
}

/// `D χ` from the formula, site by site (QDP links, even-odd fields).
fn reference_dslash(lat: &Lattice, fat: &[f64], long: &[f64], chi: &[f64]) -> Vec<f64> {
    let v = |x: [usize; 4]| -> [C64; 3] {
        let i = eo(lat, x) * 6;
        std::array::from_fn(|c| C64::new(chi[i + 2 * c], chi[i + 2 * c + 1]))
    };
    let mut out = vec![0.0; chi.len()];
    for lex in 0..lat.volume() {
        let d = lat.dims();
        let x = [
            lex % d[0],
            lex / d[0] % d[1],
            lex / (d[0] * d[1]) % d[2],
            lex / (d[0] * d[1] * d[2]),
        ];
        let mut acc = [C64::new(0.0, 0.0); 3];
        for mu in 0..4 {
            for (links, hop) in [(fat, 1isize), (long, 3)] {
                let u = link(links, lat, x, mu);
                let f = v(lat.shift(x, mu, hop));
                let y = lat.shift(x, mu, -hop);
                let w = link(links, lat, y, mu);
                let b = v(y);
                for r in 0..3 {
                    for c in 0..3 {
                        acc[r] += u[r][c] * f[c] - w[c][r].conj() * b[c];
                    }
                }
            }
        }
        let i = eo(lat, x) * 6;
        for c in 0..3 {
            out[i + 2 * c] = acc[c].re;
            out[i + 2 * c + 1] = acc[c].im;
        }
    }
    out
}

fn load(ctx: &Context, fat: &[f64], long: &[f64], phases: PhaseFolding) -> StaggeredLinks {
    fn q(v: &[f64]) -> [HostReals<'_>; 4] {
        let n = v.len() / 4;
        std::array::from_fn(|mu| HostReals::F64(&v[mu * n..(mu + 1) * n]))
    }
    let params = StaggeredParams {
        dims: DIMS,
        order: GaugeOrder::Qdp,
        phases,
        ..Default::default()
    };
    ctx.load_staggered(
        &params,
        &HostGauge::Qdp(q(fat)),
        Some(&HostGauge::Qdp(q(long))),
    )
    .unwrap()
}

fn apply(ctx: &Context, l: &StaggeredLinks, op: StaggeredOp, inp: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; inp.len()];
    ctx.apply_staggered(l, 0.1, op, HostReals::F64(inp), HostRealsMut::F64(&mut out))
        .unwrap();
    out
}

fn dot(a: &[f64], b: &[f64]) -> C64 {
    a.chunks_exact(2)
        .zip(b.chunks_exact(2))
        .map(|(x, y)| C64::new(x[0], -x[1]) * C64::new(y[0], y[1]))
        .sum()
}

fn rel(a: &[f64], b: &[f64]) -> f64 {
    let d: f64 = a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum();
    (d / b.iter().map(|y| y * y).sum::<f64>()).sqrt()
}

#[test]
fn random_links_match_the_reference_and_the_symmetries() {
    let lat = Lattice::new(DIMS).unwrap();
    let n = 4 * lat.volume() * 18;
    let (fat, long) = (randoms(n, 1), randoms(n, 2));
    let (chi, psi) = (randoms(lat.volume() * 6, 3), randoms(lat.volume() * 6, 4));
    let ctx = cpu_context();
    let l = load(&ctx, &fat, &long, PhaseFolding::InLinks);

    let d_chi = apply(&ctx, &l, StaggeredOp::Dslash, &chi);
    let r = rel(&d_chi, &reference_dslash(&lat, &fat, &long, &chi));
    assert!(r < 1e-14, "D χ differs from the reference by {r:e}");

    // ⟨ψ, D χ⟩ = −⟨D ψ, χ⟩.
    let d_psi = apply(&ctx, &l, StaggeredOp::Dslash, &psi);
    let (a, b) = (dot(&psi, &d_chi), dot(&d_psi, &chi));
    assert!(
        (a + b).norm() < 1e-12 * a.norm(),
        "D is not anti-Hermitian: {a} vs {b}"
    );

    // M† = ε M ε, ε(x) = (−1)^(x+y+z+t): the odd half negated.
    let half = chi.len() / 2;
    let eps = |v: &[f64]| -> Vec<f64> {
        v.iter()
            .enumerate()
            .map(|(i, &x)| if i < half { x } else { -x })
            .collect()
    };
    let lhs = apply(&ctx, &l, StaggeredOp::MDag, &chi);
    let rhs = eps(&apply(&ctx, &l, StaggeredOp::M, &eps(&chi)));
    assert!(rel(&lhs, &rhs) < 1e-14);

    // M̂_p = [M† M]_pp on each parity.
    let mdm = apply(
        &ctx,
        &l,
        StaggeredOp::MDag,
        &apply(&ctx, &l, StaggeredOp::M, &{
            let mut c = chi.clone();
            c[half..].iter_mut().for_each(|v| *v = 0.0);
            c
        }),
    );
    let mpc = apply(&ctx, &l, StaggeredOp::MPc(Parity::Even), &chi[..half]);
    assert!(rel(&mpc, &mdm[..half]) < 1e-13);
}

#[test]
fn free_field_plane_waves_are_eigenvectors_of_d_squared() {
    // Unit links, phases and the anti-periodic sign folded by the library,
    // asqtad's free coefficients c₁ = 9/8, c₃ = −1/24.
    let lat = Lattice::new(DIMS).unwrap();
    let (c1, c3) = (9.0 / 8.0, -1.0 / 24.0);
    let mut unit = vec![0.0; 4 * lat.volume() * 18];
    for l in unit.chunks_exact_mut(18) {
        for c in 0..3 {
            l[8 * c] = 1.0;
        }
    }
    let fat: Vec<f64> = unit.iter().map(|v| v * c1).collect();
    let ctx = cpu_context();
    let l = load(
        &ctx,
        &fat,
        &unit,
        PhaseFolding::Fold {
            t_boundary: TBoundary::AntiPeriodic,
            long_coefficient: c3,
        },
    );
    for (k, colour) in [([1, 0, 2, 0], 0), ([3, 5, 1, 2], 2), ([0, 0, 0, 7], 1)] {
        // p_μ = 2π n/L in space, (2n + 1)π/T in anti-periodic time.
        let p: [f64; 4] = std::array::from_fn(|mu| {
            let n = k[mu] as f64;
            if mu == 3 {
                (2.0 * n + 1.0) * PI / DIMS[3] as f64
            } else {
                2.0 * PI * n / DIMS[mu] as f64
            }
        });
        let mut wave = vec![0.0; lat.volume() * 6];
        for par in [Parity::Even, Parity::Odd] {
            for cb in 0..lat.half_volume() {
                let x = lat.coords(par, cb);
                let phase: f64 = (0..4).map(|mu| p[mu] * x[mu] as f64).sum();
                let i = (par.index() * lat.half_volume() + cb) * 6 + 2 * colour;
                wave[i] = phase.cos();
                wave[i + 1] = phase.sin();
            }
        }
        let dd = apply(
            &ctx,
            &l,
            StaggeredOp::Dslash,
            &apply(&ctx, &l, StaggeredOp::Dslash, &wave),
        );
        let lambda: f64 = -4.0
            * p.iter()
                .map(|&q| (c1 * q.sin() + c3 * (3.0 * q).sin()).powi(2))
                .sum::<f64>();
        let expect: Vec<f64> = wave.iter().map(|v| lambda * v).collect();
        let r = rel(&dd, &expect);
        assert!(
            r < 1e-13,
            "plane wave {k:?}: D² ψ ≠ {lambda} ψ (relative {r:e})"
        );
    }
}
