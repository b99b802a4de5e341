//! Solver paths that the Wilson systems do not reach: breakdown of
//! BiCGstab and CG on an indefinite operator (γ5), and plain CG on the
//! Hermitian positive definite `M̂†M̂` against CGNR on `M̂`.

mod common;

use std::sync::Arc;

use common::*;
use latsol::backend::cpu::{CpuBackend, CpuSpinor};
use latsol::backend::{Backend, SpinorField};
use latsol::dirac::wilson::WilsonEvenOdd;
use latsol::dirac::{LinearOperator, Normal, Shifted};
use latsol::error::Error;
use latsol::lattice::{Lattice, Parity, Subset};
use latsol::precision::{Precision, Reconstruct, TBoundary};
use latsol::random;
use latsol::solver::{bicgstab, cg, cgnr, Silent, SolverParams};
use num_complex::Complex64 as C64;

/// `A = γ5`: Hermitian, indefinite, `(ψ, γ5 ψ) = 0` for a ψ with only
/// upper spin components.
struct Gamma5<'a> {
    backend: &'a CpuBackend,
    lattice: Arc<Lattice>,
}

impl LinearOperator<CpuBackend> for Gamma5<'_> {
    fn apply(&mut self, out: &mut CpuSpinor, inp: &CpuSpinor) -> latsol::Result<()> {
        self.backend.gamma5(out, inp)
    }
    fn subset(&self) -> Subset {
        Subset::Full
    }
    fn lattice(&self) -> &Arc<Lattice> {
        &self.lattice
    }
    fn precision(&self) -> Precision {
        Precision::Double
    }
    fn fermion(&self) -> latsol::field::Fermion {
        latsol::field::Fermion::Wilson
    }
    fn flops(&self) -> f64 {
        0.0
    }
}

fn upper_only_source(b: &CpuBackend, lat: &Arc<Lattice>) -> CpuSpinor {
    let mut host = random::spinor(lat, Subset::Full, 4);
    for s in 0..host.sites() {
        host.site_mut(s)[6..]
            .iter_mut()
            .for_each(|z| *z = C64::new(0.0, 0.0));
    }
    let mut f = b
        .alloc_spinor(lat, Subset::Full, Precision::Double)
        .unwrap();
    b.upload_spinor(&mut f, &host).unwrap();
    f
}

const PARAMS: SolverParams = SolverParams {
    tol: 1e-10,
    maxiter: 100,
    progress_every: 0,
    confirm: true,
};

/// A random SU(3) field (antiperiodic in time) stored as asked.
fn hot_gauge(
    b: &CpuBackend,
    lat: &Arc<Lattice>,
    seed: u64,
    prec: Precision,
    rec: Reconstruct,
) -> latsol::backend::cpu::CpuGauge {
    b.upload_gauge(
        &random::hot_gauge(lat, seed),
        TBoundary::AntiPeriodic,
        prec,
        rec,
    )
    .unwrap()
}

#[test]
fn bicgstab_reports_breakdown() {
    let b = backend();
    let lat = lattice([4, 4, 4, 4]);
    let src = upper_only_source(&b, &lat);
    let mut x = b
        .alloc_spinor(&lat, Subset::Full, Precision::Double)
        .unwrap();
    let mut a = Gamma5 {
        backend: &b,
        lattice: lat.clone(),
    };
    match bicgstab::solve(&b, &mut a, &mut x, &src, &PARAMS, &Silent) {
        Err(Error::Breakdown(msg)) => assert!(msg.contains("BiCGstab"), "{msg}"),
        other => panic!("expected a breakdown, got {other:?}"),
    }
}

#[test]
fn cg_reports_an_indefinite_operator() {
    let b = backend();
    let lat = lattice([4, 4, 4, 4]);
    let src = upper_only_source(&b, &lat);
    let mut x = b
        .alloc_spinor(&lat, Subset::Full, Precision::Double)
        .unwrap();
    let mut a = Gamma5 {
        backend: &b,
        lattice: lat.clone(),
    };
    match cg::solve(&b, &mut a, &mut x, &src, &PARAMS, &Silent) {
        Err(Error::Breakdown(msg)) => assert!(msg.contains("positive definite"), "{msg}"),
        other => panic!("expected a breakdown, got {other:?}"),
    }
}

#[test]
fn zero_source_gives_zero_solution() {
    let b = backend();
    let lat = lattice([4, 4, 4, 4]);
    let zero = b
        .alloc_spinor(&lat, Subset::Full, Precision::Double)
        .unwrap();
    let mut x = b
        .alloc_spinor(&lat, Subset::Full, Precision::Double)
        .unwrap();
    let host = random::spinor(&lat, Subset::Full, 1);
    b.upload_spinor(&mut x, &host).unwrap();
    let mut a = Gamma5 {
        backend: &b,
        lattice: lat.clone(),
    };
    let s = bicgstab::solve(&b, &mut a, &mut x, &zero, &PARAMS, &Silent).unwrap();
    assert!(s.converged && b.norm2(&x).unwrap() == 0.0);
}

#[test]
fn cg_on_the_normal_operator_matches_cgnr() {
    let b = backend();
    let lat = lattice([4, 4, 4, 8]);
    let gauge = hot_gauge(&b, &lat, 3, Precision::Double, Reconstruct::Full18);
    let p = Parity::Even;
    let host = random::spinor(&lat, Subset::Single(p), 5);
    let mut rhs = b
        .alloc_spinor(&lat, Subset::Single(p), Precision::Double)
        .unwrap();
    b.upload_spinor(&mut rhs, &host).unwrap();
    let params = SolverParams {
        tol: 1e-12,
        maxiter: 1000,
        progress_every: 0,
        confirm: true,
    };

    // CGNR on M̂ x = rhs.
    let mut x1 = b
        .alloc_spinor(&lat, Subset::Single(p), Precision::Double)
        .unwrap();
    let mut mhat = WilsonEvenOdd::new(&b, &gauge, 0.12, p, Precision::Double).unwrap();
    let s1 = cgnr::solve(&b, &mut mhat, &mut x1, &rhs, &params, &Silent).unwrap();

    // CG on M̂†M̂ x = M̂† rhs.
    let mut normal_rhs = b
        .alloc_spinor(&lat, Subset::Single(p), Precision::Double)
        .unwrap();
    latsol::dirac::DiracOperator::apply(&mut mhat, &mut normal_rhs, &rhs, true).unwrap();
    let mut a = Normal::new(&b, mhat).unwrap();
    let mut x2 = b
        .alloc_spinor(&lat, Subset::Single(p), Precision::Double)
        .unwrap();
    let s2 = cg::solve(&b, &mut a, &mut x2, &normal_rhs, &params, &Silent).unwrap();
    assert!(s1.converged && s2.converged, "{s1:?} {s2:?}");
    assert_eq!(x2.subset(), Subset::Single(p));

    // Same solution to the accuracy the normal equations allow.
    let mut d = x1.clone();
    b.axpy(-1.0, &x2, &mut d).unwrap();
    let rel = (b.norm2(&d).unwrap() / b.norm2(&x1).unwrap()).sqrt();
    assert!(rel < 1e-10, "{rel:e}");
}

/// `Normal` gives CG its curvature `(p, M̂†M̂ p)` as `‖M̂ p‖²` of the
/// intermediate field: the same output as `apply`, and the same number as
/// the inner product within the rounding of the stored fields.
#[test]
fn normal_curvature_is_the_norm_of_the_intermediate() {
    let b = backend();
    let lat = lattice([4, 4, 4, 8]);
    let p = Parity::Odd;
    for (prec, rec) in [
        (Precision::Double, Reconstruct::Full18),
        (Precision::Single, Reconstruct::Twelve),
        (Precision::Half, Reconstruct::Twelve),
    ] {
        let gauge = hot_gauge(&b, &lat, 4, prec, rec);
        let mhat = WilsonEvenOdd::new(&b, &gauge, 0.12, p, prec).unwrap();
        let mut a = Normal::new(&b, mhat).unwrap();
        let mut x = b.alloc_spinor(&lat, Subset::Single(p), prec).unwrap();
        b.upload_spinor(&mut x, &random::spinor(&lat, Subset::Single(p), 9))
            .unwrap();
        let (mut out, mut plain) = (x.clone(), x.clone());
        let curvature = a.apply_with_curvature(&b, &mut out, &x).unwrap();
        a.apply(&mut plain, &x).unwrap();
        let same = |f: &CpuSpinor| {
            let mut h = latsol::field::HostSpinor::zeros(lat.clone(), Subset::Single(p));
            b.download_spinor(f, &mut h).unwrap();
            h.data().to_vec()
        };
        assert_eq!(same(&out), same(&plain), "{prec:?}: output");

        let inner = b.cdot(&x, &out).unwrap().re;
        // Both sides see the stored M̂ x; they differ by its rounding and
        // that of the output: per site at most √24 ε of the site's norm
        // (ε relative to the largest component), so relative to the
        // curvature √24 ε (1 + ‖x‖ ‖out‖ / curvature), plus the arithmetic
        // (single for the narrow formats: 100 roundings is generous).
        let (xx, oo) = (b.norm2(&x).unwrap(), b.norm2(&out).unwrap());
        let arith_in = if prec == Precision::Double {
            Precision::Double
        } else {
            Precision::Single
        };
        let arith = 100.0 * arith_in.epsilon();
        let bound = 24f64.sqrt() * prec.epsilon() * (1.0 + (xx * oo).sqrt() / curvature) + arith;
        let rel = (curvature - inner).abs() / curvature;
        assert!(
            curvature > 0.0 && rel <= bound,
            "{prec:?}: {rel:e} > {bound:e}"
        );
    }
}

/// `Shifted` passes the cheaper curvature through when unshifted and takes
/// the inner product of its own output when shifted: `(x, (A + σ) x)`.
#[test]
fn shifted_curvature_includes_the_shift() {
    let b = backend();
    let lat = lattice([4, 4, 4, 4]);
    let gauge = hot_gauge(&b, &lat, 5, Precision::Double, Reconstruct::Full18);
    let p = Parity::Even;
    let mhat = WilsonEvenOdd::new(&b, &gauge, 0.12, p, Precision::Double).unwrap();
    let mut normal = Normal::new(&b, mhat).unwrap();
    let mut x = b
        .alloc_spinor(&lat, Subset::Single(p), Precision::Double)
        .unwrap();
    b.upload_spinor(&mut x, &random::spinor(&lat, Subset::Single(p), 6))
        .unwrap();
    let mut out = x.clone();
    let unshifted = normal.apply_with_curvature(&b, &mut out, &x).unwrap();
    let xx = b.norm2(&x).unwrap();
    for sigma in [0.0, 0.3] {
        let mut shifted = Shifted::new(&b, &mut normal, sigma);
        let c = shifted.apply_with_curvature(&b, &mut out, &x).unwrap();
        // (x, (A + σ) x) = (x, A x) + σ ‖x‖², to double's rounding.
        let want = unshifted + sigma * xx;
        assert!(
            (c - want).abs() <= 1e-13 * want,
            "σ = {sigma}: {c} vs {want}"
        );
        if sigma == 0.0 {
            assert_eq!(c, unshifted, "σ = 0 is the inner operator's own form");
        }
    }
}
