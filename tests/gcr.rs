//! Flexible GCR (QUDA's `QUDA_GCR_INVERTER`, issue 37) through
//! `Context::invert_sources` on the CPU backend: without a preconditioner
//! in every solve type, and right-preconditioned by the Schwarz procedure
//! with SSOR or MR box solves, multiplicative or additive, in mixed
//! precision: every solution meets the tolerance on its true residual and
//! is BiCGstab's within the bound two such solutions share, and the
//! preconditioned solves take fewer iterations than plain GCR.
//!
//! Tolerance, derived: both solutions have true residuals below `tol`, so
//! they differ by at most `2 κ(M) tol` relatively; for `M = 1 − κ D` with
//! `‖D‖ ≤ 8`, `κ(M) ≤ (1 + 8κ)/(1 − 8κ)`, and the even-odd and normal
//! systems' solutions are those of `M` (the full solution is compared).

use std::sync::Arc;

mod common;

use common::{cpu_context, load_milc, single_sloppy};
use latsol::api::*;
use latsol::lattice::Lattice;
use latsol::layout::{HostReals, HostRealsMut};
use latsol::precision::Precision;
use latsol::random;

const KAPPA: f64 = 0.12;
const TOL: f64 = 1e-10;

fn setup() -> (Context, Gauge, Arc<Lattice>) {
    let lat = Arc::new(Lattice::new([4, 4, 4, 8]).unwrap());
    let field = random::smooth_gauge(&lat, 0.3, 23);
    let ctx = cpu_context();
    let g = load_milc(&ctx, &field, single_sloppy());
    (ctx, g, lat)
}

fn source(reals: usize) -> Vec<f64> {
    let mut rng = random::rng(5);
    (0..reals).map(|_| random::gaussian(&mut rng).re).collect()
}

fn rel_diff(a: &[f64], b: &[f64]) -> f64 {
    let d: f64 = a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum();
    (d / b.iter().map(|y| y * y).sum::<f64>()).sqrt()
}

fn solve(ctx: &Context, g: &Gauge, params: &InvertParams, b: &[f64]) -> (Vec<f64>, InvertResult) {
    let mut x = vec![0.0; b.len()];
    let hosts = [HostReals::F64(b)];
    let outs = vec![HostRealsMut::F64(&mut x)];
    let mut r = ctx
        .invert_sources(g, params, &hosts, outs, &SystemForm::default())
        .unwrap();
    (x, r.remove(0))
}

fn bound() -> f64 {
    2.0 * (1.0 + 8.0 * KAPPA) / (1.0 - 8.0 * KAPPA) * TOL
}

#[test]
fn gcr_gives_the_bicgstab_solution_in_every_solve_type() {
    let (ctx, g, lat) = setup();
    let b = source(lat.volume() * 24);
    for solve_type in [SolveType::DirectPc, SolveType::Direct, SolveType::NormOpPc] {
        let base = InvertParams {
            kappa: KAPPA,
            tol: TOL,
            maxiter: 2000,
            solve_type,
            ..Default::default()
        };
        let (want, _) = solve(&ctx, &g, &base, &b);
        // A Krylov space of 6: restarts happen on the way.
        let gcr = InvertParams {
            solver: SolverType::Gcr,
            gcr_nkrylov: 6,
            ..base
        };
        let (got, r) = solve(&ctx, &g, &gcr, &b);
        assert!(
            r.converged && r.true_residual <= TOL,
            "{solve_type:?}: {r:?}"
        );
        let d = rel_diff(&got, &want);
        assert!(d <= bound(), "{solve_type:?}: {d:e} > {:e}", bound());
    }
}

#[test]
fn schwarz_preconditioned_gcr_converges_in_fewer_iterations() {
    let (ctx, g, lat) = setup();
    let b = source(lat.volume() * 24);
    let base = InvertParams {
        kappa: KAPPA,
        tol: TOL,
        maxiter: 2000,
        solve_type: SolveType::Direct,
        precision_sloppy: Precision::Single,
        solver: SolverType::Gcr,
        gcr_nkrylov: 10,
        ..Default::default()
    };
    let (want, plain) = solve(&ctx, &g, &base, &b);
    assert!(plain.converged && plain.true_residual <= TOL, "{plain:?}");
    for (schwarz, box_solver) in [
        (Schwarz::Multiplicative, BoxSolver::Ssor),
        (Schwarz::Multiplicative, BoxSolver::Mr),
        (Schwarz::Additive, BoxSolver::Mr),
        (Schwarz::Additive, BoxSolver::Ssor),
    ] {
        let params = InvertParams {
            sap: Some(SapParams {
                cycles: 2,
                ssor_iterations: 4,
                omega: if box_solver == BoxSolver::Mr {
                    0.9
                } else {
                    1.0
                },
                schwarz,
                box_solver,
                ..Default::default()
            }),
            ..base
        };
        let (got, r) = solve(&ctx, &g, &params, &b);
        let what = format!("{schwarz:?} Schwarz, {box_solver:?} box solves");
        eprintln!(
            "{what}: {} GCR iterations (plain GCR {})",
            r.iterations, plain.iterations
        );
        assert!(r.converged && r.true_residual <= TOL, "{what}: {r:?}");
        assert!(
            r.iterations < plain.iterations,
            "{what}: {} iterations, plain GCR {}",
            r.iterations,
            plain.iterations
        );
        let d = rel_diff(&got, &want);
        assert!(d <= bound(), "{what}: {d:e} > {:e}", bound());
    }
}

#[test]
fn what_gcr_cannot_take_is_refused() {
    let (ctx, g, lat) = setup();
    let b = source(lat.volume() * 24);
    let mr = SapParams {
        box_solver: BoxSolver::Mr,
        ..Default::default()
    };
    let cases = [
        // MR box solves make SAP no fixed map: not for block BiCGstab.
        InvertParams {
            solve_type: SolveType::Direct,
            sap: Some(mr),
            ..Default::default()
        },
        InvertParams {
            solver: SolverType::Gcr,
            gcr_nkrylov: 0,
            ..Default::default()
        },
    ];
    for params in cases {
        let mut x = vec![0.0; b.len()];
        let hosts = [HostReals::F64(&b)];
        let outs = vec![HostRealsMut::F64(&mut x)];
        let e = ctx
            .invert_sources(&g, &params, &hosts, outs, &SystemForm::default())
            .unwrap_err();
        assert!(matches!(e, latsol::Error::InvalidArgument(_)), "{e}");
        assert!(
            x.iter().all(|&v| v == 0.0),
            "the caller's array was written"
        );
    }
}
