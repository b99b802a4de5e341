//! Temporal gauge fixing (`gauge_fixed`, issue 4): a thermalised field
//! gauge-transformed to temporal gauge gives the same solution with the
//! flag (unit T links neither stored nor loaded) as without it, in double
//! and from a half-precision sloppy field with compressed links; and the
//! solution is the gauge transform of the untransformed field's solution,
//! `x' = g x` (so the transform itself is right). A field that is not in
//! temporal gauge is refused when the flag claims it is.

use std::sync::Arc;

mod common;

use common::cpu_context;
use latsol::api::*;
use latsol::field::GaugeField;
use latsol::gauge_gen::{Generator, Start};
use latsol::lattice::Lattice;
use latsol::layout::{self, GaugeOrder, HostGauge, HostReals, HostRealsMut};
use latsol::precision::{Precision, Reconstruct, TBoundary};
use latsol::random;
use latsol::su3::Su3;
use num_complex::Complex64 as C64;

fn params(lat: &Lattice, gauge_fixed: bool, sloppy: Precision) -> GaugeParams {
    GaugeParams {
        dims: lat.dims(),
        order: GaugeOrder::Milc,
        t_boundary: TBoundary::AntiPeriodic,
        precision_sloppy: sloppy,
        reconstruct_sloppy: if sloppy == Precision::Double {
            Reconstruct::Full18
        } else {
            Reconstruct::Twelve
        },
        gauge_fixed,
        ..Default::default()
    }
}

fn milc(field: &GaugeField) -> Vec<f64> {
    let mut m = vec![0.0f64; field.lattice().volume() * 72];
    layout::gauge::export(field, GaugeOrder::Milc, &mut [HostRealsMut::F64(&mut m)]).unwrap();
    m
}

/// The transform `g` to temporal gauge, `g(x, 0) = 1`,
/// `g(x, t+1) = g(x, t) U_4(x, t)`, so that
/// `U'_4(x, t) = g(x, t) U_4(x, t) g(x, t+1)† = 1` for t < T − 1; and the
/// transformed field `U'_μ(x) = g(x) U_μ(x) g(x+μ̂)†`.
fn to_temporal_gauge(field: &GaugeField) -> (GaugeField, Vec<Su3>) {
    let lat = field.lattice().clone();
    let d = lat.dims();
    let mut g = vec![Su3::identity(); lat.volume()];
    for t in 0..d[3] - 1 {
        for z in 0..d[2] {
            for y in 0..d[1] {
                for x in 0..d[0] {
                    let s = [x, y, z, t];
                    let next = lat.shift(s, 3, 1);
                    g[lat.lex_index(next)] = g[lat.lex_index(s)].mul(field.link_at(s, 3));
                }
            }
        }
    }
    let mut out = field.clone();
    for i in 0..lat.volume() {
        let s = coords(&lat, i);
        for mu in 0..4 {
            let n = lat.shift(s, mu, 1);
            *out.link_at_mut(s, mu) = g[i]
                .mul(field.link_at(s, mu))
                .mul(&g[lat.lex_index(n)].adjoint());
        }
    }
    (out, g)
}

fn coords(lat: &Lattice, lex: usize) -> [usize; 4] {
    let d = lat.dims();
    [
        lex % d[0],
        lex / d[0] % d[1],
        lex / (d[0] * d[1]) % d[2],
        lex / (d[0] * d[1] * d[2]),
    ]
}

/// `ψ'(x) = g(x) ψ(x)` on a host field in DIRAC order (colour inner).
fn transform_spinor(lat: &Lattice, g: &[Su3], psi: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; psi.len()];
    for (lex, gx) in g.iter().enumerate() {
        let site = lat.eo_index(coords(lat, lex));
        for spin in 0..4 {
            let base = (site * 4 + spin) * 6;
            let v = std::array::from_fn(|c| C64::new(psi[base + 2 * c], psi[base + 2 * c + 1]));
            for (c, z) in gx.mul_vec(&v).iter().enumerate() {
                out[base + 2 * c] = z.re;
                out[base + 2 * c + 1] = z.im;
            }
        }
    }
    out
}

fn max_rel_diff(a: &[f64], b: &[f64]) -> f64 {
    let n: f64 = b.iter().map(|v| v * v).sum::<f64>().sqrt();
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).powi(2))
        .sum::<f64>()
        .sqrt()
        / n
}

#[test]
fn temporal_gauge_flag_gives_the_same_solution() {
    let lat = Arc::new(Lattice::new([4, 4, 4, 6]).unwrap());
    let mut gen = Generator::new(lat.clone(), 5.8, 77, Start::Cold)
        .unwrap()
        .with_overrelax(2);
    for _ in 0..20 {
        gen.sweep();
    }
    let field = gen.into_field();
    let (fixed, g) = to_temporal_gauge(&field);
    // The transformed field is in temporal gauge off the last slice, and
    // still SU(3) (the check at load would refuse it otherwise).
    let mut rng = random::rng(78);
    let b: Vec<f64> = (0..lat.volume() * 24)
        .map(|_| random::gaussian(&mut rng).re)
        .collect();
    let ctx = cpu_context();
    let base = InvertParams {
        kappa: 0.15,
        tol: 1e-12,
        maxiter: 10_000,
        ..Default::default()
    };
    let solve = |f: &GaugeField, gauge_fixed: bool, sloppy: Precision, src: &[f64]| {
        let host = milc(f);
        let gauge = ctx
            .load_gauge(
                &params(&lat, gauge_fixed, sloppy),
                &HostGauge::Milc(HostReals::F64(&host)),
            )
            .unwrap();
        let mut x = vec![0.0; src.len()];
        let p = InvertParams {
            precision_sloppy: sloppy,
            ..base
        };
        let r = ctx
            .invert(&gauge, &p, HostReals::F64(src), HostRealsMut::F64(&mut x))
            .unwrap();
        assert!(r.converged && r.true_residual < 1e-12, "{r:?}");
        x
    };

    let b_fixed = transform_spinor(&lat, &g, &b);
    let x_orig = solve(&field, false, Precision::Double, &b);
    let expected = transform_spinor(&lat, &g, &x_orig);
    for sloppy in [Precision::Double, Precision::Half] {
        let without = solve(&fixed, false, sloppy, &b_fixed);
        let with = solve(&fixed, true, sloppy, &b_fixed);
        // Both solve one system to 1e-12; the condition number at this κ
        // (hundreds) bounds the solutions' distance by about 1e-10.
        let d = max_rel_diff(&with, &without);
        assert!(d < 1e-9, "{sloppy:?}: with vs without the flag: {d:e}");
        let d = max_rel_diff(&with, &expected);
        assert!(d < 1e-9, "{sloppy:?}: vs g x of the original field: {d:e}");
    }
}

#[test]
fn a_field_not_in_temporal_gauge_is_refused() {
    let lat = Arc::new(Lattice::new([4, 4, 4, 4]).unwrap());
    let field = random::hot_gauge(&lat, 5);
    let ctx = cpu_context();
    let host = milc(&field);
    match ctx.load_gauge(
        &params(&lat, true, Precision::Double),
        &HostGauge::Milc(HostReals::F64(&host)),
    ) {
        Err(latsol::Error::InvalidArgument(m)) => assert!(m.contains("gauge_fixed"), "{m}"),
        other => panic!("{:?}", other.err()),
    }
}
