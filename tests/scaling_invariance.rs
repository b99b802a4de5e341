//! Solves are invariant under scaling of the source over the whole double
//! range (issue 16): for c from 1e-310 (subnormal) to 1e300 the solution for
//! `c b` is `c` times the solution for `b`, to the requested tolerance, and
//! the call reports success, for every solver and mixed scheme, multi-shift
//! and multi-mass too, and `latsol_apply` is linear over the same range.
//! The library solves for `2^e c b` with the exact power of two that brings
//! the source's largest component near 1 (`HostSpinor::normalising_exponent`),
//! so no norm underflows or overflows and no storage format loses the field.

mod ffi_common;

use std::ffi::c_void;
use std::ptr;

use ffi_common::*;
use latsol::ffi::*;

const SCALES: [f64; 9] = [
    1e-310, 1e-300, 1e-170, 1e-160, 1e-50, 1.0, 1e40, 1e150, 1e300,
];

/// A 4⁴ lattice with a gauge field whose sloppy copy is `sloppy`.
struct Problem {
    ctx: *mut latsol_context,
    gauge: *mut latsol_gauge,
    b: Vec<f64>,
}

impl Problem {
    fn new(sloppy: latsol_precision) -> Problem {
        let dims = [4, 4, 4, 4];
        let links = random_gauge_qdp(dims, 41);
        let ctx = cpu_context();
        let mut gp = gauge_param(dims);
        gp.precision_sloppy = sloppy;
        if sloppy != LATSOL_PRECISION_DOUBLE {
            gp.reconstruct_sloppy = LATSOL_RECONSTRUCT_12;
        }
        let (s, gauge) = try_load_qdp(ctx, &gp, &links);
        ok(s);
        Problem {
            ctx,
            gauge,
            b: random_spinor(volume(dims), 42),
        }
    }

    fn invert(&self, p: &latsol_invert_param, c: f64) -> Vec<f64> {
        let b: Vec<f64> = self.b.iter().map(|v| c * v).collect();
        let mut x = vec![0.0; b.len()];
        let mut res = latsol_invert_result_default();
        let s = unsafe {
            latsol_invert(
                self.ctx,
                self.gauge,
                p,
                x.as_mut_ptr().cast(),
                b.as_ptr().cast(),
                &mut res,
            )
        };
        assert_eq!(s, LATSOL_SUCCESS, "c = {c:e}: {}", last_error());
        assert!(
            res.true_residual <= p.tol,
            "c = {c:e}: residual {:e}",
            res.true_residual
        );
        x
    }
}

impl Drop for Problem {
    fn drop(&mut self) {
        unsafe {
            ok(latsol_gauge_free(self.gauge));
            ok(latsol_end(self.ctx));
        }
    }
}

/// `‖x_c − c x_1‖ / ‖c x_1‖`, computed without forming tiny or huge norms:
/// both sides divided by c first.
fn scaled_diff(xc: &[f64], x1: &[f64], c: f64) -> f64 {
    let unscaled: Vec<f64> = xc.iter().map(|v| v / c).collect();
    rel_diff(&unscaled, x1)
}

/// The bound on the difference: the two solves each meet `tol` in the
/// relative residual, so their solutions differ by at most about
/// cond(M) · 2 tol (cond ≲ 10 at κ = 0.12 on this field), plus the
/// rounding of a subnormal source (c = 1e-310 keeps ~44 of 53 bits).
fn bound(tol: f64) -> f64 {
    20.0 * tol + 1e-12
}

fn check_invariance(sloppy: latsol_precision, setup: impl Fn(&mut latsol_invert_param)) {
    let pr = Problem::new(sloppy);
    let mut p = invert_param();
    p.precision_sloppy = sloppy;
    setup(&mut p);
    let x1 = pr.invert(&p, 1.0);
    for c in SCALES {
        let xc = pr.invert(&p, c);
        let d = scaled_diff(&xc, &x1, c);
        assert!(d < bound(p.tol), "c = {c:e}: |x_c/c − x_1|/|x_1| = {d:.2e}");
    }
}

#[test]
fn bicgstab_and_cg_in_double() {
    check_invariance(LATSOL_PRECISION_DOUBLE, |_| {});
    check_invariance(LATSOL_PRECISION_DOUBLE, |p| p.solver = LATSOL_SOLVER_CG);
    check_invariance(LATSOL_PRECISION_DOUBLE, |p| {
        p.solve_type = LATSOL_SOLVE_DIRECT;
        p.use_initial_guess = 0;
    });
}

#[test]
fn mixed_precision_schemes() {
    for sloppy in [
        LATSOL_PRECISION_SINGLE,
        LATSOL_PRECISION_HALF,
        LATSOL_PRECISION_PACKED20,
    ] {
        check_invariance(sloppy, |_| {});
        check_invariance(sloppy, |p| p.solver = LATSOL_SOLVER_CG);
        check_invariance(sloppy, |p| {
            p.solver = LATSOL_SOLVER_CG;
            p.mixed = LATSOL_MIXED_DEFECT_CORRECTION;
        });
    }
}

#[test]
fn multishift_and_multimass() {
    let pr = Problem::new(LATSOL_PRECISION_SINGLE);
    let mut p = invert_param();
    p.precision_sloppy = LATSOL_PRECISION_SINGLE;
    let half = pr.b.len() / 2;
    let shifts = [0.0, 0.1, 1.0];
    let kappas = [0.11, 0.12];
    let run = |c: f64, multimass: bool, policy: latsol_multimass_policy| -> Vec<Vec<f64>> {
        let n = if multimass { pr.b.len() } else { half };
        let b: Vec<f64> = pr.b[..n].iter().map(|v| c * v).collect();
        let count = if multimass {
            kappas.len()
        } else {
            shifts.len()
        };
        let mut xs: Vec<Vec<f64>> = (0..count).map(|_| vec![0.0; n]).collect();
        let mut ptrs: Vec<*mut c_void> = xs.iter_mut().map(|x| x.as_mut_ptr().cast()).collect();
        let mut res = latsol_multishift_result_default();
        let s = unsafe {
            if multimass {
                latsol_invert_multimass(
                    pr.ctx,
                    pr.gauge,
                    &p,
                    2,
                    kappas.as_ptr(),
                    ptr::null(),
                    policy,
                    ptrs.as_mut_ptr(),
                    b.as_ptr().cast(),
                    &mut res,
                )
            } else {
                latsol_invert_multishift(
                    pr.ctx,
                    pr.gauge,
                    &p,
                    3,
                    shifts.as_ptr(),
                    ptr::null(),
                    ptrs.as_mut_ptr(),
                    b.as_ptr().cast(),
                    &mut res,
                )
            }
        };
        assert_eq!(s, LATSOL_SUCCESS, "c = {c:e}: {}", last_error());
        xs
    };
    for (multimass, policy) in [
        (false, LATSOL_MULTIMASS_AUTO),
        (true, LATSOL_MULTIMASS_BICGSTAB_M),
        (true, LATSOL_MULTIMASS_SEQUENCE),
    ] {
        let x1 = run(1.0, multimass, policy);
        for c in SCALES {
            for (i, (xc, x1)) in run(c, multimass, policy).iter().zip(&x1).enumerate() {
                let d = scaled_diff(xc, x1, c);
                assert!(
                    d < bound(p.tol),
                    "multimass {multimass}, system {i}, c = {c:e}: {d:.2e}"
                );
            }
        }
    }
}

#[test]
fn apply_is_linear_over_the_double_range() {
    for precision in [LATSOL_PRECISION_DOUBLE, LATSOL_PRECISION_SINGLE] {
        let s = Setup::new(43);
        let mut p = invert_param();
        if precision == LATSOL_PRECISION_SINGLE {
            // A gauge field stored in single for single-precision fields.
            let mut gp = gauge_param(s.dims);
            gp.precision = precision;
            gp.precision_sloppy = precision;
            let (st, g) = try_load_qdp(s.ctx, &gp, &s.links);
            ok(st);
            p.precision = precision;
            p.precision_sloppy = precision;
            let apply = |x: &[f64]| {
                let mut out = vec![0.0; x.len()];
                ok(unsafe {
                    latsol_apply(
                        s.ctx,
                        g,
                        &p,
                        LATSOL_OP_M,
                        out.as_mut_ptr().cast(),
                        x.as_ptr().cast(),
                    )
                });
                out
            };
            let m1 = apply(&s.source);
            for c in SCALES {
                let b: Vec<f64> = s.source.iter().map(|v| c * v).collect();
                let d = scaled_diff(&apply(&b), &m1, c);
                assert!(d < 1e-6, "single, c = {c:e}: {d:.2e}");
            }
            ok(unsafe { latsol_gauge_free(g) });
        } else {
            let m1 = s.apply(&p, LATSOL_OP_M, &s.source);
            for c in SCALES {
                let b: Vec<f64> = s.source.iter().map(|v| c * v).collect();
                let d = scaled_diff(&s.apply(&p, LATSOL_OP_M, &b), &m1, c);
                assert!(d < 1e-13, "double, c = {c:e}: {d:.2e}");
            }
        }
    }
}

#[test]
fn a_solution_beyond_the_double_range_is_refused_with_nothing_written() {
    // Scale the source so that its largest component is near the largest
    // double: where M⁻¹ amplifies the largest component (measured at c = 1),
    // the solution cannot be represented.
    let pr = Problem::new(LATSOL_PRECISION_DOUBLE);
    let p = invert_param();
    let x1 = pr.invert(&p, 1.0);
    let max = |v: &[f64]| v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let amplification = max(&x1) / max(&pr.b);
    assert!(amplification > 1.1, "M⁻¹ amplifies by {amplification}");
    let b: Vec<f64> = pr.b.iter().map(|v| v * (1.7e308 / max(&pr.b))).collect();
    let mut x = vec![7.0; b.len()];
    let mut res = latsol_invert_result_default();
    let st = unsafe {
        latsol_invert(
            pr.ctx,
            pr.gauge,
            &p,
            x.as_mut_ptr().cast(),
            b.as_ptr().cast(),
            &mut res,
        )
    };
    expect_error(
        st,
        LATSOL_ERROR_INVALID_ARGUMENT,
        &["solution", "exceeds the range"],
    );
    assert!(x.iter().all(|&v| v == 7.0));
}
