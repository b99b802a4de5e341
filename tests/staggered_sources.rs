//! Several staggered sources in one call (`invert_staggered_sources`,
//! issue 37): block CG on the even-odd and the normal systems against the
//! same sources solved one at a time, on the CPU backend. Each answer's
//! residual is measured here with `apply_staggered` (M = 2m − D), not
//! taken from the solver's report.

mod common;

use common::cpu_context;
use latsol::api::*;
use latsol::lattice::Parity;
use latsol::layout::{GaugeOrder, HostGauge, HostReals, HostRealsMut};
use latsol::precision::Precision;

const DIMS: [usize; 4] = [4, 4, 4, 8];
const VOLUME: usize = 4 * 4 * 4 * 8;
const MASS: f64 = 0.05;

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

/// Random fat links (scaled so that |D| stays moderate) and Naik-sized long links.
fn links(ctx: &Context, precision_sloppy: Precision) -> StaggeredLinks {
    let n = 4 * VOLUME * 18;
    let fat: Vec<f64> = randoms(n, 11).iter().map(|v| 0.4 * v).collect();
    let long: Vec<f64> = randoms(n, 12).iter().map(|v| -0.05 * v).collect();
    fn q(v: &[f64]) -> [HostReals<'_>; 4] {
        let n = v.len() / 4;
        std::array::from_fn(|mu| HostReals::F64(&v[mu * n..(mu + 1) * n]))
    }
    let params = StaggeredParams {
        dims: DIMS,
        order: GaugeOrder::Qdp,
        precision_sloppy,
        ..Default::default()
    };
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

fn solve(
    ctx: &Context,
    l: &StaggeredLinks,
    params: &StaggeredInvertParams,
    sources: &[Vec<f64>],
    per_block: usize,
) -> (Vec<Vec<f64>>, Vec<InvertResult>) {
    let mut xs = vec![vec![0.0; 6 * VOLUME]; sources.len()];
    let srcs: Vec<HostReals> = sources.iter().map(|s| HostReals::F64(s)).collect();
    let outs: Vec<HostRealsMut> = xs.iter_mut().map(|x| HostRealsMut::F64(x)).collect();
    let results = ctx
        .invert_staggered_sources(l, params, &srcs, outs, per_block)
        .unwrap();
    (xs, results)
}

fn sources(n: usize) -> Vec<Vec<f64>> {
    (0..n)
        .map(|k| randoms(6 * VOLUME, 100 + k as u64))
        .collect()
}

#[test]
fn a_block_of_even_odd_systems_meets_each_sources_tolerance_in_fewer_iterations() {
    let ctx = cpu_context();
    let l = links(&ctx, Precision::Double);
    let params = StaggeredInvertParams {
        mass: MASS,
        solve: StaggeredSolve::EvenOdd(Parity::Even),
        tol: 1e-9,
        maxiter: 5000,
        ..Default::default()
    };
    let b = sources(5);
    let (block, rb) = solve(&ctx, &l, &params, &b, 0);
    let (alone, ra) = solve(&ctx, &l, &params, &b, 1);
    for k in 0..b.len() {
        let (res_b, res_a) = (
            residual(&ctx, &l, &b[k], &block[k]),
            residual(&ctx, &l, &b[k], &alone[k]),
        );
        assert!(res_b <= params.tol, "source {k}: block residual {res_b:e}");
        assert!(res_a <= params.tol, "source {k}: single residual {res_a:e}");
        assert!((rb[k].true_residual - res_b).abs() <= 1e-3 * params.tol + 1e-2 * res_b);
        assert!(rb[k].converged);
        // The block's Krylov space holds each column's own: block CG needs
        // at most as many iterations as a single CG (here far fewer).
        assert!(
            rb[k].iterations < ra[k].iterations,
            "source {k}: block {} iterations, single {}",
            rb[k].iterations,
            ra[k].iterations
        );
    }
}

#[test]
fn mixed_block_cg_on_the_normal_equations_and_blocks_of_two() {
    let ctx = cpu_context();
    let l = links(&ctx, Precision::Single);
    for solve_kind in [StaggeredSolve::Full, StaggeredSolve::EvenOdd(Parity::Odd)] {
        let params = StaggeredInvertParams {
            mass: MASS,
            solve: solve_kind,
            tol: 1e-8,
            maxiter: 10000,
            precision_sloppy: Precision::Single,
            ..Default::default()
        };
        let b = sources(5);
        let (x, r) = solve(&ctx, &l, &params, &b, 2);
        for k in 0..b.len() {
            let res = residual(&ctx, &l, &b[k], &x[k]);
            assert!(
                res <= params.tol,
                "{solve_kind:?} source {k}: residual {res:e}"
            );
            assert!(r[k].converged);
        }
    }
}

#[test]
fn zero_and_dependent_sources_get_the_single_answers() {
    let ctx = cpu_context();
    let l = links(&ctx, Precision::Double);
    let params = StaggeredInvertParams {
        mass: MASS,
        tol: 1e-9,
        maxiter: 5000,
        ..Default::default()
    };
    let mut b = sources(3);
    b.push(b[0].iter().map(|v| 2.0 * v).collect());
    b.push(vec![0.0; 6 * VOLUME]);
    let (x, _) = solve(&ctx, &l, &params, &b, 0);
    for k in 0..4 {
        let res = residual(&ctx, &l, &b[k], &x[k]);
        assert!(res <= params.tol, "source {k}: residual {res:e}");
    }
    assert!(
        x[4].iter().all(|&v| v == 0.0),
        "a zero source has the zero solution"
    );
}

#[test]
fn a_bad_call_leaves_every_solution_untouched() {
    let ctx = cpu_context();
    let l = links(&ctx, Precision::Double);
    let params = StaggeredInvertParams {
        mass: MASS,
        ..Default::default()
    };
    let b = sources(2);
    let mut xs = vec![vec![7.0; 6 * VOLUME]; 3];
    let srcs: Vec<HostReals> = b.iter().map(|s| HostReals::F64(s)).collect();
    let outs: Vec<HostRealsMut> = xs.iter_mut().map(|x| HostRealsMut::F64(x)).collect();
    let err = ctx
        .invert_staggered_sources(&l, &params, &srcs, outs, 0)
        .unwrap_err();
    assert!(
        matches!(err, latsol::error::Error::InvalidArgument(_)),
        "{err}"
    );
    // A source of the wrong length: refused before any solve.
    let short = vec![1.0; 6 * VOLUME - 2];
    let srcs = vec![HostReals::F64(&b[0]), HostReals::F64(&short)];
    let outs: Vec<HostRealsMut> = xs[..2].iter_mut().map(|x| HostRealsMut::F64(x)).collect();
    assert!(ctx
        .invert_staggered_sources(&l, &params, &srcs, outs, 0)
        .is_err());
    assert!(xs.iter().all(|x| x.iter().all(|&v| v == 7.0)));
}
