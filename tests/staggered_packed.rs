//! The packed 20- and 30-bit colour-vector formats of seed clark2022 (§4,
//! Listings 2 and 3; issue 38) on the CPU backend: a field's round trip is
//! the format's own rounding (`format::packed`) and a second trip is exact;
//! the improved hopping term on packed fields with the links beside them
//! (16-bit fixed point beside 20-bit vectors, 32-bit beside 30-bit) is the
//! double one within the formats' roundoff; CG, BiCGstab(4) and multi-shift
//! CG with packed sloppy fields meet their targets on the golden links.

mod common;

use std::sync::Arc;

use common::cpu_context;
use latsol::api::*;
use latsol::backend::cpu::CpuBackend;
use latsol::backend::Backend;
use latsol::field::{Fermion, HostSpinor};
use latsol::lattice::{Lattice, Parity, Subset};
use latsol::layout::{GaugeOrder, HostGauge, HostReals, HostRealsMut};
use latsol::long_links::LongReconstruct;
use latsol::precision::Precision;
use latsol::random;
use num_complex::Complex64 as C64;

const PACKED: [Precision; 2] = [Precision::Packed20, Precision::Packed30];

fn vector(lat: &Arc<Lattice>, subset: Subset, seed: u64) -> HostSpinor {
    let mut rng = random::rng(seed);
    let mut h = HostSpinor::try_zeros_of(lat.clone(), subset, Fermion::Staggered).unwrap();
    h.data_mut()
        .iter_mut()
        .for_each(|z| *z = random::gaussian(&mut rng));
    h
}

fn up(b: &CpuBackend, h: &HostSpinor, p: Precision) -> <CpuBackend as Backend>::Spinor {
    let mut s = b
        .alloc_field(h.lattice(), h.subset(), p, Fermion::Staggered)
        .unwrap();
    b.upload_spinor(&mut s, h).unwrap();
    s
}

fn down(b: &CpuBackend, s: &<CpuBackend as Backend>::Spinor, like: &HostSpinor) -> HostSpinor {
    let mut h = HostSpinor::try_zeros_of(like.lattice().clone(), like.subset(), Fermion::Staggered)
        .unwrap();
    b.download_spinor(s, &mut h).unwrap();
    h
}

fn rel(a: &[C64], b: &[C64]) -> f64 {
    let d: f64 = a.iter().zip(b).map(|(x, y)| (x - y).norm_sqr()).sum();
    let n: f64 = b.iter().map(|y| y.norm_sqr()).sum();
    (d / n).sqrt()
}

/// Each site's 6 reals come back within the format's ε of the site's
/// largest (the scale is a power of two of the site), and storing what
/// came back reproduces it exactly; the 20-bit format is 16 bytes a site
/// (half's) and the 30-bit one 24 (single's).
#[test]
fn colour_vectors_round_trip_within_the_format() {
    let b = CpuBackend::new(2).unwrap();
    let lat = Arc::new(Lattice::new([4, 4, 4, 8]).unwrap());
    let h = vector(&lat, Subset::Full, 5);
    for p in PACKED {
        let once = down(&b, &up(&b, &h, p), &h);
        for (site, (x, y)) in h.data().chunks(3).zip(once.data().chunks(3)).enumerate() {
            let max = x
                .iter()
                .fold(0.0f64, |m, z| m.max(z.re.abs()).max(z.im.abs()));
            for (u, v) in x.iter().zip(y) {
                let d = (u - v).re.abs().max((u - v).im.abs());
                assert!(d <= p.epsilon() * max, "{p:?} site {site}: {u} vs {v}");
            }
        }
        let twice = down(&b, &up(&b, &once, p), &h);
        assert_eq!(once.data(), twice.data(), "{p:?}: a second trip is exact");
    }
    assert_eq!(latsol::format::packed::words(20, 6) * 4, 16);
    assert_eq!(latsol::format::packed::words(30, 6) * 4, 24);
}

/// `D` on packed fields against `D` in double. Each of the 16 hops
/// multiplies a link by a vector; the vector's numbers carry ε_v of its
/// site's largest, the links' ε_l of the largest link number (fixed point
/// against one scale), so a hop's error is within (ε_v + 3 ε_l) of its
/// size and the sum's within 16 of those against a sum of random-sign
/// terms about a quarter of their total; the output is rounded once more
/// (ε_v): 64 (ε_v + 3 ε_l) + ε_v bounds the relative error.
#[test]
fn the_packed_hopping_term_is_the_double_one_within_the_roundoff() {
    let b = CpuBackend::new(2).unwrap();
    let lat = Arc::new(Lattice::new([4, 4, 6, 8]).unwrap());
    let fat = random::hot_gauge(&lat, 3);
    let mut long = random::hot_gauge(&lat, 4);
    long.links_mut()
        .iter_mut()
        .for_each(|u| *u = u.scale(C64::new(-1.0 / 24.0, 0.0)));
    for lr in [
        LongReconstruct::Full18,
        LongReconstruct::Thirteen,
        LongReconstruct::Nine,
    ] {
        let exact = b
            .upload_staggered(&fat, Some(&long), Precision::Double, lr)
            .unwrap();
        for p in PACKED {
            let links = b.upload_staggered(&fat, Some(&long), p, lr).unwrap();
            let bound = 64.0 * (p.epsilon() + 3.0 * p.link_epsilon()) + p.epsilon();
            for parity in [Parity::Even, Parity::Odd] {
                let hin = vector(&lat, Subset::Single(parity.other()), 7);
                let hx = vector(&lat, Subset::Single(parity), 8);
                let sub = Subset::Single(parity);
                let mut out_d = b
                    .alloc_field(&lat, sub, Precision::Double, Fermion::Staggered)
                    .unwrap();
                let mut out_p = b.alloc_field(&lat, sub, p, Fermion::Staggered).unwrap();
                let (xd, xp) = (up(&b, &hx, Precision::Double), up(&b, &hx, p));
                let ind = up(&b, &hin, Precision::Double);
                b.staggered_dslash(&mut out_d, parity, &exact, &ind, -0.8, Some((0.3, &xd)))
                    .unwrap();
                let inp = up(&b, &hin, p);
                b.staggered_dslash(&mut out_p, parity, &links, &inp, -0.8, Some((0.3, &xp)))
                    .unwrap();
                let (d, q) = (down(&b, &out_d, &hx), down(&b, &out_p, &hx));
                let err = rel(q.data(), d.data());
                assert!(
                    err <= bound,
                    "{p:?} long {lr:?} {parity:?}: {err:e} > {bound:e}"
                );
                // Not the double answer: the format does round.
                assert!(err > 0.0, "{p:?} {lr:?}");
            }
        }
    }
}

fn golden(name: &str) -> Vec<f64> {
    common::golden_reals("golden-staggered-6x4x4x8", name)
}

/// Mixed CG (even-odd), BiCGstab(4) and multi-shift CG with packed sloppy
/// fields on the golden links: every true residual at its target.
#[test]
fn solves_with_packed_sloppy_fields_meet_their_targets() {
    let ctx = cpu_context();
    let (fat, long, b) = (
        golden("fat_qdp.f64"),
        golden("long_qdp.f64"),
        golden("M_chi.f64"),
    );
    let q = common::qdp_quarters;
    for p in PACKED {
        let links = ctx
            .load_staggered(
                &StaggeredParams {
                    dims: [6, 4, 4, 8],
                    order: GaugeOrder::Qdp,
                    precision_sloppy: p,
                    long_reconstruct_sloppy: LongReconstruct::Thirteen,
                    ..Default::default()
                },
                &HostGauge::Qdp(q(&fat)),
                Some(&HostGauge::Qdp(q(&long))),
            )
            .unwrap_or_else(|e| panic!("{p:?}: {e}"));
        let params = StaggeredInvertParams {
            mass: 0.05,
            tol: 1e-10,
            precision_sloppy: p,
            ..Default::default()
        };
        let mut x = vec![0.0; b.len()];
        let r = ctx
            .invert_staggered(
                &links,
                &params,
                HostReals::F64(&b),
                HostRealsMut::F64(&mut x),
            )
            .unwrap();
        let measured = common::staggered_residual(&ctx, &links, 0.05, &b, &x);
        assert!(
            r.converged && measured <= 1e-10,
            "{p:?} CG: {r:?} {measured:e}"
        );
        // Multi-shift CG on the even sites, each shift's own target.
        let half = b.len() / 2;
        let shifts = [0.0, 0.01, 0.3];
        let tols = [1e-10, 1e-9, 1e-8];
        let mut xs = vec![vec![0.0; half]; shifts.len()];
        let r = ctx
            .invert_multishift_staggered(
                &links,
                &params,
                &shifts,
                Some(&tols),
                HostReals::F64(&b[..half]),
                xs.iter_mut().map(|x| HostRealsMut::F64(x)).collect(),
            )
            .unwrap();
        for (k, s) in r.shifts.iter().enumerate() {
            assert!(s.true_residual <= tols[k], "{p:?} shift {k}: {s:?}");
        }
    }
}

/// Clark2022 §3's pairing: a multi-shift phase in 30-bit, the refinement in
/// 20-bit (a third copy of the links, `precision_refinement`). Every shift's
/// residual, measured with the operator in double, meets its target; the
/// phase is the 30-bit one whatever the refinement; a refinement format the
/// links hold no copy of is refused with the solutions untouched.
#[test]
fn a_thirty_bit_phase_refined_in_twenty_bit_meets_every_target() {
    let ctx = cpu_context();
    let (fat, long, chi) = (
        golden("fat_qdp.f64"),
        golden("long_qdp.f64"),
        golden("M_chi.f64"),
    );
    let q = common::qdp_quarters;
    let load = |refinement: Option<Precision>| {
        ctx.load_staggered(
            &StaggeredParams {
                dims: [6, 4, 4, 8],
                order: GaugeOrder::Qdp,
                precision_sloppy: Precision::Packed30,
                long_reconstruct_sloppy: LongReconstruct::Thirteen,
                precision_refinement: refinement,
                long_reconstruct_refinement: LongReconstruct::Thirteen,
                ..Default::default()
            },
            &HostGauge::Qdp(q(&fat)),
            Some(&HostGauge::Qdp(q(&long))),
        )
        .unwrap()
    };
    let (three, two) = (load(Some(Precision::Packed20)), load(None));
    let mass = 0.05;
    let b = &chi[..chi.len() / 2];
    let shifts = [0.0, 1e-3, 0.01, 0.1, 1.0];
    let solve = |links: &StaggeredLinks, refinement: Option<Precision>| {
        let params = StaggeredInvertParams {
            mass,
            tol: 1e-10,
            precision_sloppy: Precision::Packed30,
            precision_refinement: refinement,
            ..Default::default()
        };
        let mut xs = vec![vec![7.0; b.len()]; shifts.len()];
        let r = ctx.invert_multishift_staggered(
            links,
            &params,
            &shifts,
            None,
            HostReals::F64(b),
            xs.iter_mut().map(|x| HostRealsMut::F64(x)).collect(),
        );
        (r, xs)
    };
    let (r20, xs) = solve(&three, Some(Precision::Packed20));
    let r20 = r20.unwrap();
    let (r30, _) = solve(&three, None);
    let r30 = r30.unwrap();
    println!(
        "int30 phase, int20 refinement: {} iterations ({} multi-shift); int30 throughout: {} ({})",
        r20.iterations, r20.multishift_iterations, r30.iterations, r30.multishift_iterations
    );
    assert!(r20.converged, "{r20:?}");
    assert_eq!(r20.multishift_iterations, r30.multishift_iterations);
    // The same phase; the refinement ran on the 20-bit copy, whose coarser
    // rounding moves some shift's refinement by an iteration or more.
    let refinements = |r: &MultiResult| r.shifts.iter().map(|s| s.iterations).collect::<Vec<_>>();
    assert_ne!(
        refinements(&r20),
        refinements(&r30),
        "the refinement ran in 30-bit"
    );
    for (k, (x, &sigma)) in xs.iter().zip(&shifts).enumerate() {
        let mut ax = vec![0.0; b.len()];
        ctx.apply_staggered(
            &three,
            mass,
            StaggeredOp::MPc(Parity::Even),
            HostReals::F64(x),
            HostRealsMut::F64(&mut ax),
        )
        .unwrap();
        let r: Vec<f64> = ax
            .iter()
            .zip(x)
            .zip(b)
            .map(|((a, x), b)| b - a - sigma * x)
            .collect();
        let norm = |v: &[f64]| v.iter().map(|y| y * y).sum::<f64>().sqrt();
        let e = norm(&r) / norm(b);
        assert!(e <= 1.01e-10, "shift {k} (σ = {sigma}): residual {e:e}");
        assert!(r20.shifts[k].true_residual <= 1e-10, "{:?}", r20.shifts[k]);
    }
    // Links without a 20-bit copy: refused, nothing written.
    let (refused, untouched) = solve(&two, Some(Precision::Packed20));
    match refused {
        Err(latsol::error::Error::InvalidArgument(m)) => assert!(m.contains("Packed20"), "{m}"),
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
    assert!(untouched.iter().all(|x| x.iter().all(|&v| v == 7.0)));
}
