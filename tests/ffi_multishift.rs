//! `latsol_invert_multishift` through the C ABI: a solve whose every shift
//! meets its tolerance (checked with `latsol_apply(MDAG_M)` plus the
//! shift), single-parity arrays for the even-odd system, and bad input:
//! each case returns its status, `latsol_last_error()` names the parameter,
//! and the solutions and the result struct are left as they were.

mod ffi_common;

use std::ffi::c_void;
use std::ptr;

use ffi_common::*;
use latsol::ffi::*;

/// A result whose fields say "not written".
fn untouched_result() -> latsol_multishift_result {
    let mut r = latsol_multishift_result_default();
    r.iterations = -7;
    r.true_residual[0] = SENTINEL;
    r
}

/// Calls `latsol_invert_multishift` with the given pieces on `s`.
#[allow(clippy::too_many_arguments)]
fn call(
    s: &Setup,
    p: *const latsol_invert_param,
    num: i32,
    shifts: *const f64,
    tols: *const f64,
    outs: &mut [Vec<f64>],
    source: *const c_void,
    result: *mut latsol_multishift_result,
) -> latsol_status {
    let mut ptrs: Vec<*mut c_void> = outs.iter_mut().map(|x| x.as_mut_ptr().cast()).collect();
    unsafe {
        latsol_invert_multishift(
            s.ctx,
            s.gauge,
            p,
            num,
            shifts,
            tols,
            ptrs.as_mut_ptr(),
            source,
            result,
        )
    }
}

#[test]
fn every_shift_meets_its_tolerance_through_the_c_abi() {
    let s = Setup::new(41);
    let mut p = invert_param();
    p.solve_type = LATSOL_SOLVE_NORMOP;
    let shifts = [0.5, 0.0, 0.05, 2.0];
    let tols = [1e-9, 1e-10, 1e-10, 1e-8];
    let mut xs = vec![vec![0.0; s.v * 24]; shifts.len()];
    let mut r = latsol_multishift_result_default();
    ok(call(
        &s,
        &p,
        4,
        shifts.as_ptr(),
        tols.as_ptr(),
        &mut xs,
        s.source.as_ptr().cast(),
        &mut r,
    ));
    assert_eq!((r.num_shifts, r.converged, r.policy_used), (4, 1, -1));
    assert!(r.multishift_iterations > 0 && r.iterations >= r.multishift_iterations);
    for (i, &sigma) in shifts.iter().enumerate() {
        let ax = s.apply(&p, LATSOL_OP_MDAG_M, &xs[i]);
        let lhs: Vec<f64> = ax.iter().zip(&xs[i]).map(|(a, x)| a + sigma * x).collect();
        let res = rel_diff(&lhs, &s.source);
        assert!(res <= tols[i], "σ = {sigma}: {res:e}");
        assert!((res - r.true_residual[i]).abs() <= 0.1 * tols[i]);
        assert_eq!(r.shift_converged[i], 1);
    }
    assert!(r.true_residual[4..].iter().all(|&t| t == 0.0));
}

#[test]
fn the_even_odd_system_takes_single_parity_arrays() {
    let s = Setup::new(43);
    let mut p = invert_param();
    p.solve_type = LATSOL_SOLVE_NORMOP_PC;
    let shifts = [0.0, 0.1];
    let half = s.source[..s.v * 12].to_vec();
    let mut xs = vec![vec![0.0; s.v * 12]; 2];
    let mut r = latsol_multishift_result_default();
    ok(call(
        &s,
        &p,
        2,
        shifts.as_ptr(),
        ptr::null(),
        &mut xs,
        half.as_ptr().cast(),
        &mut r,
    ));
    assert_eq!(r.converged, 1);
    assert!(r.true_residual[..2].iter().all(|&t| t <= p.tol));
    assert!(xs.iter().all(|x| norm(x) > 0.0));
}

/// Runs a call that must fail with `want`, mentioning `needles`, and
/// checks that nothing was written.
#[allow(clippy::too_many_arguments)]
#[track_caller]
fn fails(
    s: &Setup,
    p: *const latsol_invert_param,
    num: i32,
    shifts: *const f64,
    tols: *const f64,
    nout: usize,
    want: latsol_status,
    needles: &[&str],
) {
    let mut xs = vec![vec![SENTINEL; s.v * 24]; nout];
    let mut r = untouched_result();
    let st = call(
        s,
        p,
        num,
        shifts,
        tols,
        &mut xs,
        s.source.as_ptr().cast(),
        &mut r,
    );
    expect_error(st, want, needles);
    assert!(
        xs.iter().flatten().all(|&x| x == SENTINEL),
        "a solution was written"
    );
    assert_eq!((r.iterations, r.true_residual[0]), (-7, SENTINEL));
}

#[test]
fn bad_input_is_refused_and_nothing_is_written() {
    let s = Setup::new(47);
    let p = invert_param();
    let good = [0.0, 0.1, 1.0];
    let inv = LATSOL_ERROR_INVALID_ARGUMENT;
    for num in [0, -1, 33] {
        fails(
            &s,
            &p,
            num,
            good.as_ptr(),
            ptr::null(),
            3,
            inv,
            &["num_shifts"],
        );
    }
    fails(
        &s,
        &p,
        3,
        ptr::null(),
        ptr::null(),
        3,
        LATSOL_ERROR_NULL_POINTER,
        &["shifts"],
    );
    fails(
        &s,
        ptr::null(),
        3,
        good.as_ptr(),
        ptr::null(),
        3,
        LATSOL_ERROR_NULL_POINTER,
        &["param"],
    );
    let nan = [0.0, f64::NAN, 1.0];
    fails(
        &s,
        &p,
        3,
        nan.as_ptr(),
        ptr::null(),
        3,
        inv,
        &["shifts[1]", "NaN"],
    );
    let negative = [0.0, -0.1, 1.0];
    fails(
        &s,
        &p,
        3,
        negative.as_ptr(),
        ptr::null(),
        3,
        inv,
        &["shifts[1]", "negative"],
    );
    let duplicate = [0.1, 1.0, 0.1];
    fails(
        &s,
        &p,
        3,
        duplicate.as_ptr(),
        ptr::null(),
        3,
        inv,
        &["shifts[2]", "duplicates"],
    );
    for bad_tol in [0.0, 1.0, f64::NAN] {
        let tols = [1e-10, bad_tol, 1e-10];
        fails(
            &s,
            &p,
            3,
            good.as_ptr(),
            tols.as_ptr(),
            3,
            inv,
            &["tol_shifts[1]"],
        );
    }
    let mut bad_p = p;
    bad_p.kappa = f64::NAN;
    fails(
        &s,
        &bad_p,
        3,
        good.as_ptr(),
        ptr::null(),
        3,
        inv,
        &["kappa"],
    );

    // NULL arrays of solutions, a NULL solution, overlapping solutions.
    let mut r = untouched_result();
    let st = unsafe {
        latsol_invert_multishift(
            s.ctx,
            s.gauge,
            &p,
            3,
            good.as_ptr(),
            ptr::null(),
            ptr::null_mut(),
            s.source.as_ptr().cast(),
            &mut r,
        )
    };
    expect_error(st, LATSOL_ERROR_NULL_POINTER, &["solutions"]);
    let mut x0 = vec![SENTINEL; s.v * 24];
    let mut x1 = vec![SENTINEL; s.v * 24];
    for second in [ptr::null_mut(), x0.as_mut_ptr().cast::<c_void>()] {
        let mut ptrs: [*mut c_void; 3] = [x0.as_mut_ptr().cast(), second, x1.as_mut_ptr().cast()];
        let st = unsafe {
            latsol_invert_multishift(
                s.ctx,
                s.gauge,
                &p,
                3,
                good.as_ptr(),
                ptr::null(),
                ptrs.as_mut_ptr(),
                s.source.as_ptr().cast(),
                &mut r,
            )
        };
        if second.is_null() {
            expect_error(st, LATSOL_ERROR_NULL_POINTER, &["solutions[1]"]);
        } else {
            expect_error(st, inv, &["solutions[0]", "solutions[1]", "overlap"]);
        }
    }
    assert!(x0.iter().chain(&x1).all(|&x| x == SENTINEL));
    assert_eq!(r.iterations, -7);

    // A result struct of the wrong size.
    let mut xs = vec![vec![SENTINEL; s.v * 24]; 3];
    let mut r = untouched_result();
    r.struct_size = 8;
    let st = call(
        &s,
        &p,
        3,
        good.as_ptr(),
        ptr::null(),
        &mut xs,
        s.source.as_ptr().cast(),
        &mut r,
    );
    expect_error(st, inv, &["result->struct_size"]);
    assert!(xs.iter().flatten().all(|&x| x == SENTINEL));
}

#[test]
fn multimass_through_the_c_abi() {
    let s = Setup::new(53);
    let mut p = invert_param();
    p.mass_normalization = LATSOL_NORMALIZATION_MASS;
    let kappas = [0.11, 0.12, 0.115];
    for policy in [
        LATSOL_MULTIMASS_AUTO,
        LATSOL_MULTIMASS_BICGSTAB_M,
        LATSOL_MULTIMASS_SEQUENCE,
        LATSOL_MULTIMASS_SEQUENCE_MINRES,
        LATSOL_MULTIMASS_SEQUENCE_ZERO_GUESS,
    ] {
        let mut xs = vec![vec![0.0; s.v * 24]; 3];
        let mut ptrs: Vec<*mut c_void> = xs.iter_mut().map(|x| x.as_mut_ptr().cast()).collect();
        let mut r = latsol_multishift_result_default();
        ok(unsafe {
            latsol_invert_multimass(
                s.ctx,
                s.gauge,
                &p,
                3,
                kappas.as_ptr(),
                ptr::null(),
                policy,
                ptrs.as_mut_ptr(),
                s.source.as_ptr().cast(),
                &mut r,
            )
        });
        assert_eq!((r.num_shifts, r.converged), (3, 1));
        if policy != LATSOL_MULTIMASS_AUTO {
            assert_eq!(r.policy_used, policy);
        } else {
            assert!(
                [LATSOL_MULTIMASS_BICGSTAB_M, LATSOL_MULTIMASS_SEQUENCE].contains(&r.policy_used)
            );
        }
        for (i, &kappa) in kappas.iter().enumerate() {
            let mut pk = p;
            pk.kappa = kappa;
            let res = residual(&s, &pk, &xs[i], &s.source);
            assert!(res <= p.tol, "policy {policy}, κ = {kappa}: {res:e}");
        }
    }
}

#[test]
fn multimass_bad_input_is_refused_and_nothing_is_written() {
    let s = Setup::new(59);
    let p = invert_param();
    let cases: [(&[f64], i32, latsol_status, &[&str]); 5] = [
        (
            &[0.11, 0.12],
            7,
            LATSOL_ERROR_INVALID_ARGUMENT,
            &["policy = 7"],
        ),
        (
            &[0.11, -0.12],
            LATSOL_MULTIMASS_AUTO,
            LATSOL_ERROR_INVALID_ARGUMENT,
            &["kappas[1]"],
        ),
        (
            &[0.11, 0.11],
            LATSOL_MULTIMASS_AUTO,
            LATSOL_ERROR_INVALID_ARGUMENT,
            &["duplicates"],
        ),
        (
            &[0.11, f64::INFINITY],
            LATSOL_MULTIMASS_SEQUENCE,
            LATSOL_ERROR_INVALID_ARGUMENT,
            &["kappas[1]"],
        ),
        (
            &[],
            LATSOL_MULTIMASS_SEQUENCE,
            LATSOL_ERROR_INVALID_ARGUMENT,
            &["num_masses = 0"],
        ),
    ];
    for (kappas, policy, want, needles) in cases {
        let mut xs = vec![vec![SENTINEL; s.v * 24]; 2];
        let mut ptrs: Vec<*mut c_void> = xs.iter_mut().map(|x| x.as_mut_ptr().cast()).collect();
        let mut r = untouched_result();
        let st = unsafe {
            latsol_invert_multimass(
                s.ctx,
                s.gauge,
                &p,
                kappas.len() as i32,
                if kappas.is_empty() {
                    [0.1].as_ptr()
                } else {
                    kappas.as_ptr()
                },
                ptr::null(),
                policy,
                ptrs.as_mut_ptr(),
                s.source.as_ptr().cast(),
                &mut r,
            )
        };
        expect_error(st, want, needles);
        assert!(xs.iter().flatten().all(|&x| x == SENTINEL));
        assert_eq!(r.iterations, -7);
    }
}
