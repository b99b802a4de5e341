//! Multi-mass solves `M(κ_i) x_i = b` through the safe API on the CPU
//! backend: BiCGstab-M, the single-mass sequence with each initial guess,
//! and the `Auto` policy all meet every mass's tolerance, checked
//! independently with `Context::apply(M)` at that mass, in the kappa and
//! the mass normalization; the guesses made of earlier solutions save
//! iterations over starting from zero (alexandru2011 Fig. 6).

use std::sync::Arc;

mod common;

use common::{cpu_context, load_milc, single_sloppy};
use latsol::api::*;
use latsol::gauge_gen::{Generator, Start};
use latsol::lattice::Lattice;
use latsol::layout::{HostReals, HostRealsMut};
use latsol::precision::Precision;
use latsol::random;

/// A thermalised 4³×8 field loaded with a single-precision sloppy copy, on
/// a CPU context, and a random source.
fn setup() -> (Context, Gauge, Vec<f64>) {
    let lat = Arc::new(Lattice::new([4, 4, 4, 8]).unwrap());
    let mut gen = Generator::new(lat.clone(), 5.8, 31, Start::Cold)
        .unwrap()
        .with_overrelax(2);
    for _ in 0..40 {
        gen.sweep();
    }
    let field = gen.into_field();
    let ctx = cpu_context();
    let g = load_milc(&ctx, &field, single_sloppy());
    let mut rng = random::rng(5);
    let b: Vec<f64> = (0..lat.volume() * 24)
        .map(|_| random::gaussian(&mut rng).re)
        .collect();
    (ctx, g, b)
}

// Up to κ = 0.16, near this field's κ_c.
const KAPPAS: [f64; 6] = [0.155, 0.16, 0.14, 0.15, 0.145, 0.1575];
const TOLS: [f64; 6] = [1e-10, 1e-10, 1e-8, 1e-10, 1e-9, 1e-10];

/// Each solution's residual `‖b − M(κ_i) x_i‖/‖b‖`, recomputed with
/// `Context::apply`, meets its tolerance.
fn check_residuals(
    ctx: &Context,
    g: &Gauge,
    p: &InvertParams,
    b: &[f64],
    xs: &[Vec<f64>],
    r: &MultiResult,
    what: &str,
) {
    for (i, &kappa) in KAPPAS.iter().enumerate() {
        let pk = InvertParams { kappa, ..*p };
        let mut mx = vec![0.0; b.len()];
        ctx.apply(
            g,
            &pk,
            OperatorKind::M,
            HostReals::F64(&xs[i]),
            HostRealsMut::F64(&mut mx),
        )
        .unwrap();
        let r2: f64 = b.iter().zip(&mx).map(|(b, m)| (b - m).powi(2)).sum();
        let res = (r2 / b.iter().map(|v| v * v).sum::<f64>()).sqrt();
        println!(
            "  κ = {kappa}: residual {res:.2e} (reported {:.2e}), {} own iterations",
            r.shifts[i].true_residual, r.shifts[i].iterations
        );
        assert!(res <= TOLS[i], "{what}: κ = {kappa}: residual {res:e}");
    }
}

#[test]
fn every_policy_meets_every_mass_tolerance() {
    let (ctx, g, b) = setup();
    let (kappas, tols) = (KAPPAS, TOLS);

    let mut totals = std::collections::HashMap::new();
    for norm in [MassNormalization::Kappa, MassNormalization::Mass] {
        for policy in [
            MultiMassPolicy::BiCgStabM,
            MultiMassPolicy::Sequence(SequenceGuess::Zero),
            MultiMassPolicy::Sequence(SequenceGuess::Polynomial),
            MultiMassPolicy::Sequence(SequenceGuess::SolutionSpace),
            MultiMassPolicy::Auto,
        ] {
            let p = InvertParams {
                mass_normalization: norm,
                tol: 1e-10,
                maxiter: 20_000,
                precision_sloppy: Precision::Single,
                ..Default::default()
            };
            let mut xs = vec![vec![0.0; b.len()]; kappas.len()];
            let outs = xs.iter_mut().map(|x| HostRealsMut::F64(x)).collect();
            let r = ctx
                .invert_multimass(
                    &g,
                    &p,
                    &kappas,
                    Some(&tols),
                    policy,
                    HostReals::F64(&b),
                    outs,
                )
                .unwrap();
            let what = format!(
                "{norm:?} {policy:?} (ran {:?}): {} iterations, {:.3} s",
                r.policy_used, r.iterations, r.seconds
            );
            println!("{what}");
            assert!(r.converged, "{what}: {r:?}");
            if policy != MultiMassPolicy::Auto {
                assert_eq!(r.policy_used, Some(policy));
            }
            check_residuals(&ctx, &g, &p, &b, &xs, &r, &what);
            totals.insert(format!("{norm:?} {policy:?}"), r.iterations);
        }
        let t = |p: &str| totals[&format!("{norm:?} Sequence({p})")];
        assert!(t("Polynomial") < t("Zero"), "{totals:?}");
        assert!(t("SolutionSpace") < t("Zero"), "{totals:?}");
    }
}

/// The sequence solves each mass with the caller's solver: CG on the
/// normal equations (the robust choice near an exceptional point,
/// docs/numerics.md) meets every tolerance too, and so does `Auto` with it.
#[test]
fn the_sequence_runs_the_callers_cg() {
    let (ctx, g, b) = setup();
    let p = InvertParams {
        solver: SolverType::Cg,
        tol: 1e-10,
        maxiter: 20_000,
        precision_sloppy: Precision::Single,
        ..Default::default()
    };
    for policy in [
        MultiMassPolicy::Sequence(SequenceGuess::Polynomial),
        MultiMassPolicy::Auto,
    ] {
        let mut xs = vec![vec![0.0; b.len()]; KAPPAS.len()];
        let outs = xs.iter_mut().map(|x| HostRealsMut::F64(x)).collect();
        let r = ctx
            .invert_multimass(
                &g,
                &p,
                &KAPPAS,
                Some(&TOLS),
                policy,
                HostReals::F64(&b),
                outs,
            )
            .unwrap();
        let what = format!(
            "CG, {policy:?} (ran {:?}): {} iterations",
            r.policy_used, r.iterations
        );
        println!("{what}");
        assert!(r.converged, "{what}: {r:?}");
        if policy != MultiMassPolicy::Auto {
            assert_eq!(r.policy_used, Some(policy));
        }
        check_residuals(&ctx, &g, &p, &b, &xs, &r, &what);
    }
}
