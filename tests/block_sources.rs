//! `Context::invert_sources` with `sources_per_block` (issue 37): the
//! sources solved together by block BiCGstab (both of seed 002's forms) or
//! block CG give the solutions of the one-by-one solves, in every system
//! form (full and preconditioned systems, the adjoint with a source
//! factor, an initial guess), mixed precision, blocks of every size.
//!
//! Tolerance, derived: both solutions have true residuals below `tol`, so
//! they differ by at most `2 κ(M) tol` relatively. For the Wilson matrix
//! `M = 1 − κ D` with `‖D‖ ≤ 8`, `κ(M) ≤ (1 + 8κ)/(1 − 8κ)` = 49 at
//! κ = 0.12; the even-odd `1 − κ² D D` has `κ ≤ (1 + 64κ²)/(1 − 64κ²)`,
//! smaller.

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
    let field = random::smooth_gauge(&lat, 0.3, 17);
    let ctx = cpu_context();
    let g = load_milc(&ctx, &field, single_sloppy());
    (ctx, g, lat)
}

fn sources(n: usize, reals: usize) -> Vec<Vec<f64>> {
    let mut rng = random::rng(21);
    (0..n)
        .map(|_| (0..reals).map(|_| random::gaussian(&mut rng).re).collect())
        .collect()
}

fn rel_diff(a: &[f64], b: &[f64]) -> f64 {
    let d: f64 = a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum();
    (d / b.iter().map(|y| y * y).sum::<f64>()).sqrt()
}

fn solve_all(
    ctx: &Context,
    g: &Gauge,
    params: &InvertParams,
    form: &SystemForm,
    bs: &[Vec<f64>],
    start: &[Vec<f64>],
) -> (Vec<Vec<f64>>, Vec<InvertResult>) {
    let mut xs = start.to_vec();
    let hosts: Vec<HostReals> = bs.iter().map(|b| HostReals::F64(b)).collect();
    let outs: Vec<HostRealsMut> = xs.iter_mut().map(|x| HostRealsMut::F64(x)).collect();
    let results = ctx.invert_sources(g, params, &hosts, outs, form).unwrap();
    (xs, results)
}

#[test]
fn block_solves_are_the_single_solves_in_every_form() {
    let (ctx, g, lat) = setup();
    let bound = 2.0 * (1.0 + 8.0 * KAPPA) / (1.0 - 8.0 * KAPPA) * TOL;
    let forms = [
        SystemForm::default(),
        SystemForm {
            source_factor: 0.24,
            dagger: true,
            preconditioned: false,
        },
        SystemForm {
            source_factor: 1.0,
            dagger: false,
            preconditioned: true,
        },
    ];
    for form in forms {
        let reals = lat.volume() * if form.preconditioned { 12 } else { 24 };
        let bs = sources(5, reals);
        let start: Vec<Vec<f64>> = bs
            .iter()
            .map(|b| b.iter().map(|x| 0.5 * x).collect())
            .collect();
        for (solver, solve_type) in [
            (SolverType::BiCgStab, SolveType::DirectPc),
            (SolverType::Cg, SolveType::NormOpPc),
        ] {
            for guess in [false, true] {
                let params = InvertParams {
                    kappa: KAPPA,
                    tol: TOL,
                    maxiter: 1000,
                    precision_sloppy: Precision::Single,
                    solver,
                    solve_type,
                    use_initial_guess: guess,
                    ..Default::default()
                };
                let (single, _) = solve_all(&ctx, &g, &params, &form, &bs, &start);
                for (per_block, saving) in [(0, false), (2, true), (3, false)] {
                    let params = InvertParams {
                        sources_per_block: per_block,
                        block_memory_saving: saving,
                        ..params
                    };
                    let (xs, results) = solve_all(&ctx, &g, &params, &form, &bs, &start);
                    let what = format!("{form:?} {solver:?} guess {guess} L {per_block}");
                    assert_eq!(results.len(), bs.len());
                    for (k, (x, r)) in xs.iter().zip(&results).enumerate() {
                        assert!(r.converged && r.true_residual <= TOL, "{what}: {k}: {r:?}");
                        let d = rel_diff(x, &single[k]);
                        assert!(
                            d <= bound,
                            "{what}: source {k} differs by {d:e} > {bound:e}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn a_block_of_dependent_sources_falls_back_to_single_solves() {
    let (ctx, g, lat) = setup();
    let mut bs = sources(3, lat.volume() * 24);
    bs[2] = bs[0].clone();
    let params = InvertParams {
        kappa: KAPPA,
        tol: TOL,
        maxiter: 1000,
        sources_per_block: 0,
        ..Default::default()
    };
    let start = vec![vec![0.0; bs[0].len()]; 3];
    let (xs, results) = solve_all(&ctx, &g, &params, &SystemForm::default(), &bs, &start);
    assert!(results
        .iter()
        .all(|r| r.converged && r.true_residual <= TOL));
    assert!(rel_diff(&xs[2], &xs[0]) <= 1e-8);
}

/// SAP-preconditioned blocks in mixed precision (seed 002 eqs. 11–23):
/// the Krylov block iterates in double, only `M_SAP` in single, so a block
/// of twelve converges as a block (no breakdown, no column left to finish
/// alone), in no more block iterations than a source alone with the same
/// preconditioner needs.
#[test]
fn sap_blocks_in_mixed_precision_converge_as_blocks() {
    let (ctx, g, lat) = setup();
    let bs = sources(12, lat.volume() * 24);
    let start = vec![vec![0.0; bs[0].len()]; bs.len()];
    let solve = |per_block: usize| {
        let params = InvertParams {
            kappa: KAPPA,
            tol: TOL,
            maxiter: 1000,
            precision_sloppy: Precision::Single,
            solve_type: SolveType::Direct,
            sources_per_block: per_block,
            sap: Some(SapParams {
                cycles: 4,
                ..Default::default()
            }),
            ..Default::default()
        };
        solve_all(&ctx, &g, &params, &SystemForm::default(), &bs, &start)
    };
    let (alone_x, alone) = solve(1);
    let (block_x, block) = solve(0);
    for (k, r) in block.iter().enumerate() {
        assert!(r.converged && r.true_residual <= TOL, "source {k}: {r:?}");
        assert_eq!(r.restarts, 0, "source {k} left the block: {r:?}");
    }
    let bound = 2.0 * (1.0 + 8.0 * KAPPA) / (1.0 - 8.0 * KAPPA) * TOL;
    for k in 0..bs.len() {
        let d = rel_diff(&block_x[k], &alone_x[k]);
        assert!(d <= bound, "source {k}: {d:e} > {bound:e}");
    }
    let most = alone.iter().map(|r| r.iterations).max().unwrap();
    assert!(
        block[0].iterations <= most,
        "block {block:?}, alone {alone:?}"
    );
}
