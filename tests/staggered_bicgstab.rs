//! BiCGstab and BiCGstab(l) on the staggered operator (issue 38; seed
//! clark2022 §6.1): on the even-odd `M̂` and on the non-Hermitian full
//! `M = 2m − D` itself, in double and mixed with single, half and the
//! packed 30- and 20-bit sloppy fields, on the golden asqtad links (QUDA's host reference made
//! `M_chi = M χ`). Each answer's residual is measured here with
//! `apply_staggered`, not taken from the solver's report, and the solution
//! is χ to within the condition number times the tolerance.

mod common;

use common::cpu_context;
use latsol::api::*;
use latsol::lattice::Parity;
use latsol::layout::{GaugeOrder, HostGauge, HostReals, HostRealsMut};
use latsol::precision::Precision;

const DIMS: [usize; 4] = [6, 4, 4, 8];
const MASS: f64 = 0.05;
const TOL: f64 = 1e-10;
/// κ(M = 2m − D) ≤ (2m + ‖D‖)/2m with ‖D‖ ≤ 25 for these links (8 fat
/// hops of entries in [−1, 1], norm ≤ 3 each, and 8 long hops of norm
/// 1/24; tests/quda_face_asqtad.rs), so ‖x − χ‖/‖χ‖ ≤ κ · TOL.
const KAPPA: f64 = (2.0 * MASS + 25.0) / (2.0 * MASS);

fn golden(name: &str) -> Vec<f64> {
    common::golden_reals("golden-staggered-6x4x4x8", name)
}

fn links(ctx: &Context, sloppy: Precision) -> StaggeredLinks {
    let (fat, long) = (golden("fat_qdp.f64"), golden("long_qdp.f64"));
    let params = StaggeredParams {
        dims: DIMS,
        order: GaugeOrder::Qdp,
        precision_sloppy: sloppy,
        ..Default::default()
    };
    let q = common::qdp_quarters;
    ctx.load_staggered(
        &params,
        &HostGauge::Qdp(q(&fat)),
        Some(&HostGauge::Qdp(q(&long))),
    )
    .unwrap()
}

/// ‖b − M x‖ / ‖b‖, measured with the library's M.
fn residual(ctx: &Context, l: &StaggeredLinks, b: &[f64], x: &[f64]) -> f64 {
    common::staggered_residual(ctx, l, MASS, b, x)
}

fn params(
    solve: StaggeredSolve,
    solver: SolverType,
    l: usize,
    sloppy: Precision,
) -> StaggeredInvertParams {
    StaggeredInvertParams {
        mass: MASS,
        solve,
        tol: TOL,
        maxiter: 20_000,
        precision_sloppy: sloppy,
        solver,
        bicgstab_l: l,
        ..Default::default()
    }
}

/// Every solver, solve form and sloppy format meets the tolerance on the
/// full system and finds χ; BiCGstab(l) counts l iterations a cycle.
#[test]
fn bicgstab_and_bicgstab_l_solve_the_golden_system() {
    let ctx = cpu_context();
    let (chi, b) = (golden("chi.f64"), golden("M_chi.f64"));
    let even = StaggeredSolve::EvenOdd(Parity::Even);
    let forms = [
        even,
        StaggeredSolve::EvenOdd(Parity::Odd),
        StaggeredSolve::Full,
    ];
    let solvers = [
        (SolverType::BiCgStab, 1),
        (SolverType::BiCgStabL, 1),
        (SolverType::BiCgStabL, 2),
        (SolverType::BiCgStabL, 4),
    ];
    // Every form and solver with the IEEE and fixed-point formats; the
    // packed ones (slow on the CPU: bit strings a site) with the seed's
    // BiCGstab(4) on both systems.
    let mut cases = Vec::new();
    for sloppy in [Precision::Double, Precision::Single, Precision::Half] {
        for solve in forms {
            for (solver, l) in solvers {
                cases.push((sloppy, solve, solver, l));
            }
        }
    }
    for sloppy in [Precision::Packed30, Precision::Packed20] {
        for solve in [even, StaggeredSolve::Full] {
            cases.push((sloppy, solve, SolverType::BiCgStabL, 4));
        }
    }
    let mut loaded: Option<(Precision, StaggeredLinks)> = None;
    for (sloppy, solve, solver, l) in cases {
        if loaded.as_ref().is_none_or(|(p, _)| *p != sloppy) {
            loaded = Some((sloppy, links(&ctx, sloppy)));
        }
        let l_links = &loaded.as_ref().expect("loaded").1;
        let what = format!("{solve:?} {solver:?} l {l} sloppy {sloppy:?}");
        let p = params(solve, solver, l, sloppy);
        let mut x = vec![0.0; b.len()];
        let r = ctx
            .invert_staggered(l_links, &p, HostReals::F64(&b), HostRealsMut::F64(&mut x))
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(r.converged, "{what}: {r:?}");
        let measured = residual(&ctx, l_links, &b, &x);
        // The reported residual is the measured one (up to the
        // roundoff of two evaluations of b − M x in double).
        assert!(measured <= TOL, "{what}: measured {measured:e}");
        assert!(
            (measured - r.true_residual).abs() <= 1e-3 * TOL,
            "{what}: {r:?}"
        );
        let err = common::rel_diff_reals(&x, &chi);
        assert!(err <= KAPPA * TOL, "{what}: ‖x − χ‖/‖χ‖ = {err:e}");
        if solver == SolverType::BiCgStabL {
            assert_eq!(r.iterations % l, 0, "{what}: {r:?}");
        }
    }
}

/// The parity system MILC hands over (`invert_staggered_parity`) by
/// BiCGstab(4): the same solution as CG's to within κ(M̂) times the
/// tolerances, with κ(M̂) ≤ (4m² + ‖D‖²)/4m².
#[test]
fn the_parity_system_by_bicgstab_l_is_cgs() {
    let ctx = cpu_context();
    let l_links = links(&ctx, Precision::Single);
    let b: Vec<f64> = golden("M_chi.f64")[..DIMS.iter().product::<usize>() / 2 * 6].to_vec();
    let mut solved = Vec::new();
    for (solver, l) in [(SolverType::Cg, 1), (SolverType::BiCgStabL, 4)] {
        let p = params(
            StaggeredSolve::EvenOdd(Parity::Even),
            solver,
            l,
            Precision::Single,
        );
        let mut x = vec![0.0; b.len()];
        let r = ctx
            .invert_staggered_parity(&l_links, &p, HostReals::F64(&b), HostRealsMut::F64(&mut x))
            .unwrap();
        assert!(r.converged && r.true_residual <= TOL, "{solver:?}: {r:?}");
        solved.push(x);
    }
    let kappa_hat = (4.0 * MASS * MASS + 25.0 * 25.0) / (4.0 * MASS * MASS);
    let diff = common::rel_diff_reals(&solved[1], &solved[0]);
    assert!(diff <= 2.0 * kappa_hat * TOL, "{diff:e}");
}

/// What only CG runs is refused by name, and so are GCR and l = 0.
#[test]
fn solvers_outside_their_domain_are_refused() {
    let ctx = cpu_context();
    let l_links = links(&ctx, Precision::Single);
    let b = golden("M_chi.f64");
    let even = StaggeredSolve::EvenOdd(Parity::Even);
    let refused = |p: &StaggeredInvertParams, needle: &str| {
        let mut x = vec![0.0; b.len()];
        let e = ctx
            .invert_staggered(&l_links, p, HostReals::F64(&b), HostRealsMut::F64(&mut x))
            .expect_err(needle);
        assert!(e.to_string().contains(needle), "{e}");
    };
    refused(&params(even, SolverType::Gcr, 4, Precision::Single), "Gcr");
    refused(
        &params(even, SolverType::BiCgStabL, 0, Precision::Single),
        "bicgstab_l = 0",
    );
    // Multi-shift: CG only.
    let half = b.len() / 2;
    let mut outs = vec![vec![0.0; half]; 2];
    let e = ctx
        .invert_multishift_staggered(
            &l_links,
            &params(even, SolverType::BiCgStabL, 4, Precision::Single),
            &[0.0, 0.1],
            None,
            HostReals::F64(&b[..half]),
            outs.iter_mut().map(|o| HostRealsMut::F64(o)).collect(),
        )
        .expect_err("multi-shift BiCGstab(l)");
    assert!(e.to_string().contains("multi-shift"), "{e}");
    // Several sources in one block: CG only; one at a time: any solver.
    let sources = [b.clone(), b.iter().map(|v| 0.5 * v).collect::<Vec<_>>()];
    let p = params(even, SolverType::BiCgStab, 1, Precision::Single);
    let mut xs = vec![vec![0.0; b.len()]; 2];
    let srcs: Vec<HostReals> = sources.iter().map(|s| HostReals::F64(s)).collect();
    let e = ctx
        .invert_staggered_sources(
            &l_links,
            &p,
            &srcs,
            xs.iter_mut().map(|x| HostRealsMut::F64(x)).collect(),
            2,
        )
        .expect_err("a block by BiCGstab");
    assert!(e.to_string().contains("block"), "{e}");
    let results = ctx
        .invert_staggered_sources(
            &l_links,
            &p,
            &srcs,
            xs.iter_mut().map(|x| HostRealsMut::F64(x)).collect(),
            1,
        )
        .unwrap();
    for (x, (s, r)) in xs.iter().zip(sources.iter().zip(&results)) {
        assert!(
            r.converged && residual(&ctx, &l_links, s, x) <= TOL,
            "{r:?}"
        );
    }
}
