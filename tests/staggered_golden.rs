//! The golden staggered data set (`tests/data/golden-staggered-6x4x4x8`, a
//! copy of `../shared/data/`, computed with QUDA's host reference code):
//! the safe API reproduces `D χ`, `M χ`, `M† χ` and `M̂ χ` on both parities
//! for the improved (fat + long links) and the naive operator to 1e-12,
//! and solves `M x = M χ` back to `χ` by every solve form.

use std::path::PathBuf;

mod common;

use common::cpu_context;
use latsol::api::*;
use latsol::lattice::Parity;
use latsol::layout::{GaugeOrder, HostGauge, HostReals, HostRealsMut};

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden-staggered-6x4x4x8")
}

fn read_f64(name: &str) -> Vec<f64> {
    let bytes = std::fs::read(golden_dir().join(name)).unwrap();
    bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

const DIMS: [usize; 4] = [6, 4, 4, 8];
const MASS: f64 = 0.05;

/// The QDP links of a file as four direction slices.
fn qdp(v: &[f64]) -> [&[f64]; 4] {
    let n = v.len() / 4;
    [&v[..n], &v[n..2 * n], &v[2 * n..3 * n], &v[3 * n..]]
}

fn load(ctx: &Context, improved: bool, params: StaggeredParams) -> StaggeredLinks {
    let (fat, long) = if improved {
        (read_f64("fat_qdp.f64"), Some(read_f64("long_qdp.f64")))
    } else {
        (read_f64("thin_qdp.f64"), None)
    };
    let f = qdp(&fat);
    let fat = HostGauge::Qdp(f.map(HostReals::F64));
    let long = long
        .as_ref()
        .map(|l| HostGauge::Qdp(qdp(l).map(HostReals::F64)));
    ctx.load_staggered(&params, &fat, long.as_ref()).unwrap()
}

fn rel(a: &[f64], b: &[f64]) -> f64 {
    let d: f64 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
    let n: f64 = b.iter().map(|y| y * y).sum();
    (d / n).sqrt()
}

fn params() -> StaggeredParams {
    StaggeredParams {
        dims: DIMS,
        order: GaugeOrder::Qdp,
        ..Default::default()
    }
}

#[test]
fn every_operator_matches_the_golden_data() {
    let ctx = cpu_context();
    let chi = read_f64("chi.f64");
    let half = chi.len() / 2;
    for (improved, prefix) in [(true, ""), (false, "naive_")] {
        let links = load(&ctx, improved, params());
        assert_eq!(links.improved(), improved);
        let cases = [
            (StaggeredOp::Dslash, "D_chi.f64"),
            (StaggeredOp::M, "M_chi.f64"),
            (StaggeredOp::MDag, "Mdag_chi.f64"),
            (StaggeredOp::MPc(Parity::Even), "Mpc_chi_even.f64"),
            (StaggeredOp::MPc(Parity::Odd), "Mpc_chi_odd.f64"),
        ];
        for (op, file) in cases {
            let input = match op {
                StaggeredOp::MPc(Parity::Even) => &chi[..half],
                StaggeredOp::MPc(Parity::Odd) => &chi[half..],
                _ => &chi[..],
            };
            let expect = read_f64(&format!("{prefix}{file}"));
            let mut out = vec![0.0; input.len()];
            ctx.apply_staggered(
                &links,
                MASS,
                op,
                HostReals::F64(input),
                HostRealsMut::F64(&mut out),
            )
            .unwrap();
            let r = rel(&out, &expect);
            println!("{prefix}{file}: relative difference {r:.2e}");
            assert!(r < 1e-12, "{prefix}{file}: {op:?} differs by {r:e}");
        }
    }
}

#[test]
fn the_library_folds_phases_as_the_caller_would() {
    // Undo the folding of the golden links (η and the T sign are ±1, their
    // own inverses; the Naik factor −1/24 is kept in the long links), then
    // let the library fold them again: the same operator.
    let ctx = cpu_context();
    let chi = read_f64("chi.f64");
    let (mut fat, mut long) = (read_f64("fat_qdp.f64"), read_f64("long_qdp.f64"));
    let lat = latsol::lattice::Lattice::new(DIMS).unwrap();
    let vh = lat.half_volume();
    for (links, hops) in [(&mut fat, 1), (&mut long, 3)] {
        for mu in 0..4 {
            for i in 0..2 * vh {
                let p = if i < vh { Parity::Even } else { Parity::Odd };
                let x = lat.coords(p, i % vh);
                let eta_sum = match mu {
                    0 => x[3],
                    1 => x[3] + x[0],
                    2 => x[3] + x[0] + x[1],
                    _ => 0,
                };
                let mut s = if eta_sum % 2 == 0 { 1.0 } else { -1.0 };
                if mu == 3 && x[3] + hops >= DIMS[3] {
                    s = -s;
                }
                let off = (mu * 2 * vh + i) * 18;
                links[off..off + 18].iter_mut().for_each(|v| *v *= s);
            }
        }
    }
    let fold = StaggeredParams {
        phases: PhaseFolding::Fold {
            t_boundary: latsol::precision::TBoundary::AntiPeriodic,
            long_coefficient: 1.0,
        },
        ..params()
    };
    let fatg = HostGauge::Qdp(qdp(&fat).map(HostReals::F64));
    let longg = HostGauge::Qdp(qdp(&long).map(HostReals::F64));
    let links = ctx.load_staggered(&fold, &fatg, Some(&longg)).unwrap();
    let mut out = vec![0.0; chi.len()];
    ctx.apply_staggered(
        &links,
        MASS,
        StaggeredOp::M,
        HostReals::F64(&chi),
        HostRealsMut::F64(&mut out),
    )
    .unwrap();
    let r = rel(&out, &read_f64("M_chi.f64"));
    assert!(r < 1e-12, "library-folded links differ by {r:e}");
}

#[test]
fn solves_of_m_chi_give_chi_back() {
    let ctx = cpu_context();
    let chi = read_f64("chi.f64");
    let b = read_f64("M_chi.f64");
    let links = load(
        &ctx,
        true,
        StaggeredParams {
            precision_sloppy: latsol::precision::Precision::Single,
            ..params()
        },
    );
    for (solve, sloppy) in [
        (
            StaggeredSolve::EvenOdd(Parity::Even),
            latsol::precision::Precision::Double,
        ),
        (
            StaggeredSolve::EvenOdd(Parity::Odd),
            latsol::precision::Precision::Double,
        ),
        (StaggeredSolve::Full, latsol::precision::Precision::Double),
        (
            StaggeredSolve::EvenOdd(Parity::Even),
            latsol::precision::Precision::Single,
        ),
        (StaggeredSolve::Full, latsol::precision::Precision::Single),
    ] {
        let p = StaggeredInvertParams {
            mass: MASS,
            solve,
            tol: 1e-11,
            precision_sloppy: sloppy,
            ..Default::default()
        };
        let mut x = vec![0.0; chi.len()];
        let r = ctx
            .invert_staggered(&links, &p, HostReals::F64(&b), HostRealsMut::F64(&mut x))
            .unwrap();
        let err = rel(&x, &chi);
        println!(
            "{solve:?} sloppy {sloppy:?}: {} iterations, true residual {:.2e}, |x − χ|/|χ| {err:.2e}",
            r.iterations, r.true_residual
        );
        assert!(r.converged && r.true_residual <= 1e-11, "{solve:?}: {r:?}");
        // |x − χ| ≤ cond(M) · tol: M = 2m − D has |eigenvalues| in [2m, 2m + ‖D‖].
        assert!(err < 1e-7, "{solve:?} {sloppy:?}: |x − χ|/|χ| = {err:e}");
    }
}

#[test]
fn bad_input_is_refused_with_nothing_written() {
    let ctx = cpu_context();
    let links = load(&ctx, true, params());
    let chi = read_f64("chi.f64");
    let mut x = vec![7.0; chi.len()];
    // Any finite mass is an operator (QUDA's); m = 0 has no even-odd
    // solve of the full system (its reconstruction divides by 2m).
    for mass in [0.0, f64::NAN, f64::INFINITY] {
        let p = StaggeredInvertParams {
            mass,
            ..Default::default()
        };
        let e = ctx
            .invert_staggered(&links, &p, HostReals::F64(&chi), HostRealsMut::F64(&mut x))
            .unwrap_err();
        assert!(e.to_string().contains("mass"), "{e}");
    }
    let mut bad = chi.clone();
    bad[17] = f64::NAN;
    let e = ctx
        .invert_staggered(
            &links,
            &Default::default(),
            HostReals::F64(&bad),
            HostRealsMut::F64(&mut x),
        )
        .unwrap_err();
    assert!(e.to_string().contains("non-finite"), "{e}");
    assert!(
        x.iter().all(|&v| v == 7.0),
        "a refused call wrote its output"
    );
    let mut fat = read_f64("fat_qdp.f64");
    fat[100] = f64::INFINITY;
    let e = ctx
        .load_staggered(
            &params(),
            &HostGauge::Qdp(qdp(&fat).map(HostReals::F64)),
            None,
        )
        .err()
        .unwrap();
    assert!(
        e.to_string().contains("fat links") && e.to_string().contains("not finite"),
        "{e}"
    );
}

#[test]
fn multishift_solves_every_shifted_even_odd_system() {
    // RHMC-like shifts of M̂ on the even sites, plain and mixed (single and
    // half sloppy with per-shift refinement); each (M̂ + σ) x = b checked
    // through apply_staggered.
    let ctx = cpu_context();
    let chi = read_f64("chi.f64");
    let half = chi.len() / 2;
    let b = &chi[..half];
    let shifts = [0.0, 1e-4, 3e-3, 0.02, 0.1, 0.5, 2.0];
    for sloppy in [
        latsol::precision::Precision::Double,
        latsol::precision::Precision::Single,
        latsol::precision::Precision::Half,
    ] {
        let links = load(
            &ctx,
            true,
            StaggeredParams {
                precision_sloppy: sloppy,
                ..params()
            },
        );
        // Mixed: the shifts refined together (one block application an
        // iteration) and one after another; each system runs the same
        // recurrence either way, so its iterations agree to a step or two
        // (the solution's partial sums are rounded differently: in single
        // together, cg_reliable's buffered directions into double alone,
        // which may move the crossing of a reliable-update threshold).
        let mut per_refinement = Vec::new();
        for refinement in [ShiftRefinement::Together, ShiftRefinement::OneByOne] {
            let p = StaggeredInvertParams {
                mass: MASS,
                solve: StaggeredSolve::EvenOdd(Parity::Even),
                tol: 1e-10,
                precision_sloppy: sloppy,
                multishift_refinement: refinement,
                ..Default::default()
            };
            let mut xs = vec![vec![0.0; half]; shifts.len()];
            let r = ctx
                .invert_multishift_staggered(
                    &links,
                    &p,
                    &shifts,
                    None,
                    HostReals::F64(b),
                    xs.iter_mut().map(|x| HostRealsMut::F64(x)).collect(),
                )
                .unwrap();
            println!(
                "{sloppy:?} {refinement:?}: {} iterations ({} multi-shift), {} reliable updates",
                r.iterations, r.multishift_iterations, r.reliable_updates
            );
            assert!(r.converged, "{sloppy:?} {refinement:?}: {r:?}");
            for (x, &sigma) in xs.iter().zip(&shifts) {
                let mut ax = vec![0.0; half];
                ctx.apply_staggered(
                    &links,
                    MASS,
                    StaggeredOp::MPc(Parity::Even),
                    HostReals::F64(x),
                    HostRealsMut::F64(&mut ax),
                )
                .unwrap();
                let res: Vec<f64> = ax.iter().zip(x).map(|(a, x)| a + sigma * x).collect();
                let e = rel(&res, b);
                assert!(
                    e <= 1.01e-10,
                    "{sloppy:?} {refinement:?} σ = {sigma}: residual {e:e}"
                );
            }
            per_refinement.push(r);
            if sloppy == latsol::precision::Precision::Double {
                break;
            }
        }
        if let [together, one_by_one] = &per_refinement[..] {
            for (t, o) in together.shifts.iter().zip(&one_by_one.shifts) {
                assert!(
                    t.iterations.abs_diff(o.iterations) <= 2,
                    "{sloppy:?}: {} refinement iterations together, {} alone",
                    t.iterations,
                    o.iterations
                );
            }
        }
    }
}

#[test]
fn the_heavy_quark_residual_is_reported_and_can_stop_the_solve() {
    let ctx = cpu_context();
    let b = read_f64("M_chi.f64");
    let links = load(&ctx, true, params());
    // MILC's definition, computed here from the true residual.
    let hq_of = |x: &[f64]| -> f64 {
        let mut mx = vec![0.0; x.len()];
        ctx.apply_staggered(
            &links,
            MASS,
            StaggeredOp::M,
            HostReals::F64(x),
            HostRealsMut::F64(&mut mx),
        )
        .unwrap();
        let sites = x.len() / 6;
        let sum: f64 = (0..sites)
            .map(|s| {
                let r: f64 = (0..6).map(|k| (b[6 * s + k] - mx[6 * s + k]).powi(2)).sum();
                let xx: f64 = (0..6).map(|k| x[6 * s + k].powi(2)).sum();
                if xx > 0.0 {
                    r / xx
                } else {
                    0.0
                }
            })
            .sum();
        (sum / sites as f64).sqrt()
    };
    let loose = StaggeredInvertParams {
        mass: MASS,
        tol: 1e-4,
        ..Default::default()
    };
    let mut x = vec![0.0; b.len()];
    let r = ctx
        .invert_staggered(
            &links,
            &loose,
            HostReals::F64(&b),
            HostRealsMut::F64(&mut x),
        )
        .unwrap();
    let hq = hq_of(&x);
    assert!(
        (r.true_residual_hq - hq).abs() <= 1e-6 * hq,
        "{} vs {hq}",
        r.true_residual_hq
    );
    assert!(
        hq > 1e-8,
        "the loose solve already meets the heavy-quark target ({hq:e})"
    );
    // The same L2 tolerance with a heavy-quark target: the solve goes on.
    let strict = StaggeredInvertParams {
        tol_hq: 1e-8,
        ..loose
    };
    let mut x = vec![0.0; b.len()];
    let r = ctx
        .invert_staggered(
            &links,
            &strict,
            HostReals::F64(&b),
            HostRealsMut::F64(&mut x),
        )
        .unwrap();
    assert!(r.converged && r.true_residual_hq <= 1e-8, "{r:?}");
    assert!(hq_of(&x) <= 1.01e-8);
}

#[test]
fn compressed_long_links_give_the_same_operator() {
    // The golden long links are −1/24 × η × (T sign) × SU(3): |s| × U(3),
    // so reconstruct 13 and 9 store them exactly (to rounding).
    let ctx = cpu_context();
    let chi = read_f64("chi.f64");
    let expect = read_f64("M_chi.f64");
    for r in [
        latsol::long_links::LongReconstruct::Thirteen,
        latsol::long_links::LongReconstruct::Nine,
    ] {
        let links = load(
            &ctx,
            true,
            StaggeredParams {
                long_reconstruct: r,
                long_reconstruct_sloppy: r,
                precision_sloppy: latsol::precision::Precision::Half,
                ..params()
            },
        );
        let mut out = vec![0.0; chi.len()];
        ctx.apply_staggered(
            &links,
            MASS,
            StaggeredOp::M,
            HostReals::F64(&chi),
            HostRealsMut::F64(&mut out),
        )
        .unwrap();
        let d = rel(&out, &expect);
        assert!(d < 1e-13, "{r:?}: M χ differs by {d:e}");
        // A mixed solve with the compressed half-precision copy.
        let p = StaggeredInvertParams {
            mass: MASS,
            tol: 1e-10,
            precision_sloppy: latsol::precision::Precision::Half,
            ..Default::default()
        };
        let mut x = vec![0.0; chi.len()];
        let res = ctx
            .invert_staggered(
                &links,
                &p,
                HostReals::F64(&expect),
                HostRealsMut::F64(&mut x),
            )
            .unwrap();
        assert!(res.converged, "{r:?}: {res:?}");
    }
    // Fat links are not |s| × U(3): refused as compressed long links.
    let fat = read_f64("fat_qdp.f64");
    let f = HostGauge::Qdp(qdp(&fat).map(HostReals::F64));
    let e = ctx
        .load_staggered(
            &StaggeredParams {
                long_reconstruct: latsol::long_links::LongReconstruct::Thirteen,
                ..params()
            },
            &f,
            Some(&f),
        )
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("not |s| × U(3)"), "{e}");
}
