//! `Context::invert_sources` (QUDA's `invertMultiSrcQuda`) and its
//! one-at-a-time fallback `Context::invert_each` (taken by
//! `latsol_invert_sources` when the solutions do not fit on the device
//! together): several sources on one context are the solves `invert_form`
//! gives one by one, number for number, in every form (full and
//! preconditioned systems, the adjoint, a source factor, an initial guess);
//! a failing source leaves every solution array as it was, those of the
//! sources before it too; sources that reach `maxiter` still get their
//! solutions.

use std::sync::Arc;

mod common;

use common::{cpu_context, load_milc, single_sloppy};
use latsol::api::*;
use latsol::lattice::Lattice;
use latsol::layout::{HostReals, HostRealsMut};
use latsol::precision::Precision;
use latsol::random;

fn setup() -> (Context, Gauge, Arc<Lattice>) {
    let lat = Arc::new(Lattice::new([4, 4, 4, 8]).unwrap());
    let field = random::smooth_gauge(&lat, 0.3, 17);
    let ctx = cpu_context();
    let g = load_milc(&ctx, &field, single_sloppy());
    (ctx, g, lat)
}

fn sources(n: usize, reals: usize) -> Vec<Vec<f64>> {
    let mut rng = random::rng(9);
    (0..n)
        .map(|_| (0..reals).map(|_| random::gaussian(&mut rng).re).collect())
        .collect()
}

#[test]
fn several_sources_are_the_single_solves() {
    let (ctx, g, lat) = setup();
    let params = InvertParams {
        kappa: 0.12,
        tol: 1e-10,
        maxiter: 1000,
        precision_sloppy: Precision::Single,
        solve_type: SolveType::DirectPc,
        ..Default::default()
    };
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
        for guess in [false, true] {
            let params = InvertParams {
                use_initial_guess: guess,
                ..params
            };
            let reals = if form.preconditioned {
                lat.volume() * 12
            } else {
                lat.volume() * 24
            };
            let bs = sources(3, reals);
            // A guess: a multiple of the source (not the answer).
            let start: Vec<Vec<f64>> = bs
                .iter()
                .map(|b| b.iter().map(|x| 0.5 * x).collect())
                .collect();
            let mut one_by_one = start.clone();
            for (b, x) in bs.iter().zip(&mut one_by_one) {
                ctx.invert_form(&g, &params, HostReals::F64(b), HostRealsMut::F64(x), &form)
                    .unwrap();
            }
            let mut together = start.clone();
            let hosts: Vec<HostReals> = bs.iter().map(|b| HostReals::F64(b)).collect();
            let outs: Vec<HostRealsMut> =
                together.iter_mut().map(|x| HostRealsMut::F64(x)).collect();
            let results = ctx
                .invert_sources(&g, &params, &hosts, outs, &form)
                .unwrap();
            assert_eq!(results.len(), 3);
            assert!(results.iter().all(|r| r.converged), "{form:?}");
            assert_eq!(together, one_by_one, "{form:?}, guess {guess}");

            let mut each = start.clone();
            let outs: Vec<HostRealsMut> = each.iter_mut().map(|x| HostRealsMut::F64(x)).collect();
            let each_results = ctx.invert_each(&g, &params, &hosts, outs, &form).unwrap();
            assert_eq!(each, one_by_one, "invert_each {form:?}, guess {guess}");
            for (a, b) in each_results.iter().zip(&results) {
                assert_eq!(
                    (a.iterations, a.true_residual.to_bits(), a.converged),
                    (b.iterations, b.true_residual.to_bits(), b.converged)
                );
            }
        }
    }
}

#[test]
fn a_failing_source_leaves_every_solution_as_it_was() {
    let (ctx, g, lat) = setup();
    let params = InvertParams {
        kappa: 0.12,
        tol: 1e-10,
        maxiter: 1000,
        solve_type: SolveType::DirectPc,
        ..Default::default()
    };
    let mut bs = sources(3, lat.volume() * 24);
    bs[2][100] = f64::NAN;
    let mut xs = vec![vec![7.0; lat.volume() * 24]; 3];
    let hosts: Vec<HostReals> = bs.iter().map(|b| HostReals::F64(b)).collect();
    let outs: Vec<HostRealsMut> = xs.iter_mut().map(|x| HostRealsMut::F64(x)).collect();
    let e = ctx
        .invert_sources(&g, &params, &hosts, outs, &SystemForm::default())
        .unwrap_err();
    assert!(e.to_string().contains("sources[2]"), "{e}");
    assert!(xs.iter().flatten().all(|&x| x == 7.0));

    // One at a time: sources 0 and 1 are solved before source 2 fails, and
    // still no array is written.
    let outs: Vec<HostRealsMut> = xs.iter_mut().map(|x| HostRealsMut::F64(x)).collect();
    let e = ctx
        .invert_each(&g, &params, &hosts, outs, &SystemForm::default())
        .unwrap_err();
    assert!(e.to_string().contains("sources[2]"), "{e}");
    assert!(xs.iter().flatten().all(|&x| x == 7.0));

    // A solution array of the wrong length is refused before any solve,
    // also one at a time: nothing solved, nothing written.
    let mut short = vec![0.0; 24];
    let mut x0 = vec![7.0; lat.volume() * 24];
    for each in [false, true] {
        let outs = vec![HostRealsMut::F64(&mut x0), HostRealsMut::F64(&mut short)];
        let form = SystemForm::default();
        let e = if each {
            ctx.invert_each(&g, &params, &hosts[..2], outs, &form)
        } else {
            ctx.invert_sources(&g, &params, &hosts[..2], outs, &form)
        }
        .unwrap_err();
        assert!(e.to_string().contains("solutions[1]"), "{e}");
        assert!(!e.to_string().contains("solved one at a time"), "{e}");
        assert!(x0.iter().all(|&x| x == 7.0));
    }
}

#[test]
fn sources_at_maxiter_get_their_solutions_one_at_a_time_too() {
    let (ctx, g, lat) = setup();
    let params = InvertParams {
        kappa: 0.12,
        tol: 1e-14,
        maxiter: 3,
        solve_type: SolveType::DirectPc,
        ..Default::default()
    };
    let bs: Vec<Vec<f32>> = sources(2, lat.volume() * 24)
        .into_iter()
        .map(|b| b.into_iter().map(|x| x as f32).collect())
        .collect();
    let hosts: Vec<HostReals> = bs.iter().map(|b| HostReals::F32(b)).collect();
    let mut together = vec![vec![7.0f32; lat.volume() * 24]; 2];
    let mut each = together.clone();
    let outs: Vec<HostRealsMut> = together.iter_mut().map(|x| HostRealsMut::F32(x)).collect();
    let r = ctx
        .invert_sources(&g, &params, &hosts, outs, &SystemForm::default())
        .unwrap();
    let outs: Vec<HostRealsMut> = each.iter_mut().map(|x| HostRealsMut::F32(x)).collect();
    let r_each = ctx
        .invert_each(&g, &params, &hosts, outs, &SystemForm::default())
        .unwrap();
    assert!(r
        .iter()
        .chain(&r_each)
        .all(|r| !r.converged && r.iterations == 3));
    assert!(each.iter().flatten().all(|&x| x != 7.0));
    assert_eq!(each, together);
}
