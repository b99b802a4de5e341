//! The golden staggered data (`tests/data/golden-staggered-6x4x4x8`, a copy
//! of `../shared/data/`, computed with QUDA's host reference code) through
//! the C ABI: `latsol_apply_staggered` reproduces `D χ`, `M χ`, `M† χ` and
//! `M̂ χ` on both parities for the improved and the naive operator to 1e-12
//! relative, with the links in QDP and in MILC order; every solve form,
//! plain and mixed, solves `M x = M χ` with its true residual met; bad
//! input is refused with a status and nothing written.

mod ffi_common;

use std::ffi::c_void;
use std::path::PathBuf;
use std::ptr;

use ffi_common::*;
use latsol::ffi::*;

fn read_f64(name: &str) -> Vec<f64> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/golden-staggered-6x4x4x8")
        .join(name);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

const DIMS: [i32; 4] = [6, 4, 4, 8];
const MASS: f64 = 0.05;

/// Loads fat (or thin) and long links in `order`; returns the handle.
fn load(
    ctx: *mut latsol_context,
    improved: bool,
    order: latsol_gauge_order,
    sloppy: latsol_precision,
) -> *mut latsol_staggered {
    let qdp_of = |name: &str| -> [Vec<f64>; 4] {
        let v = read_f64(name);
        let n = v.len() / 4;
        std::array::from_fn(|mu| v[mu * n..(mu + 1) * n].to_vec())
    };
    let fat = qdp_of(if improved {
        "fat_qdp.f64"
    } else {
        "thin_qdp.f64"
    });
    let long = improved.then(|| qdp_of("long_qdp.f64"));
    let mut p = latsol_staggered_param_default();
    p.dims = DIMS;
    p.order = order;
    p.precision_sloppy = sloppy;
    let mut links = ptr::null_mut();
    let status = if order == LATSOL_GAUGE_ORDER_QDP {
        let table = |l: &[Vec<f64>; 4]| -> [*const c_void; 4] {
            std::array::from_fn(|mu| l[mu].as_ptr().cast())
        };
        let f = table(&fat);
        let l = long.as_ref().map(table);
        let lp = l.as_ref().map_or(ptr::null(), |t| t.as_ptr().cast());
        unsafe { latsol_staggered_load(ctx, &p, f.as_ptr().cast(), lp, &mut links) }
    } else {
        let f = qdp_to_milc(&fat);
        let l = long.as_ref().map(qdp_to_milc);
        let lp = l.as_ref().map_or(ptr::null(), |v| v.as_ptr().cast());
        unsafe { latsol_staggered_load(ctx, &p, f.as_ptr().cast(), lp, &mut links) }
    };
    ok(status);
    links
}

#[test]
fn every_operator_matches_the_golden_data_in_both_orders() {
    let ctx = cpu_context();
    let chi = read_f64("chi.f64");
    let half = chi.len() / 2;
    for order in [LATSOL_GAUGE_ORDER_QDP, LATSOL_GAUGE_ORDER_MILC] {
        for (improved, prefix) in [(true, ""), (false, "naive_")] {
            let links = load(ctx, improved, order, LATSOL_PRECISION_DOUBLE);
            let mut param = latsol_staggered_invert_param_default();
            param.mass = MASS;
            for (op, solve, file, input) in [
                (
                    LATSOL_OP_DSLASH,
                    LATSOL_STAGGERED_SOLVE_FULL,
                    "D_chi.f64",
                    &chi[..],
                ),
                (
                    LATSOL_OP_M,
                    LATSOL_STAGGERED_SOLVE_FULL,
                    "M_chi.f64",
                    &chi[..],
                ),
                (
                    LATSOL_OP_MDAG,
                    LATSOL_STAGGERED_SOLVE_FULL,
                    "Mdag_chi.f64",
                    &chi[..],
                ),
                (
                    LATSOL_OP_MPC,
                    LATSOL_STAGGERED_SOLVE_EVEN,
                    "Mpc_chi_even.f64",
                    &chi[..half],
                ),
                (
                    LATSOL_OP_MPC,
                    LATSOL_STAGGERED_SOLVE_ODD,
                    "Mpc_chi_odd.f64",
                    &chi[half..],
                ),
            ] {
                param.solve = solve;
                let mut out = vec![0.0; input.len()];
                ok(unsafe {
                    latsol_apply_staggered(
                        ctx,
                        links,
                        &param,
                        op,
                        out.as_mut_ptr().cast(),
                        input.as_ptr().cast(),
                    )
                });
                let r = rel_diff(&out, &read_f64(&format!("{prefix}{file}")));
                assert!(r < 1e-12, "order {order} {prefix}{file}: {r:e}");
            }
            ok(unsafe { latsol_staggered_free(links) });
        }
    }
    ok(unsafe { latsol_end(ctx) });
}

#[test]
fn every_solve_form_meets_its_true_residual() {
    let ctx = cpu_context();
    let chi = read_f64("chi.f64");
    let b = read_f64("M_chi.f64");
    let links = load(ctx, true, LATSOL_GAUGE_ORDER_QDP, LATSOL_PRECISION_SINGLE);
    for solve in [
        LATSOL_STAGGERED_SOLVE_EVEN,
        LATSOL_STAGGERED_SOLVE_ODD,
        LATSOL_STAGGERED_SOLVE_FULL,
    ] {
        for (sloppy, solver) in [
            (LATSOL_PRECISION_DOUBLE, LATSOL_SOLVER_CG),
            (LATSOL_PRECISION_SINGLE, LATSOL_SOLVER_CG),
            (LATSOL_PRECISION_SINGLE, LATSOL_SOLVER_BICGSTAB),
            (LATSOL_PRECISION_SINGLE, LATSOL_SOLVER_BICGSTABL),
        ] {
            let mut param = latsol_staggered_invert_param_default();
            param.mass = MASS;
            param.solve = solve;
            param.tol = 1e-10;
            param.precision_sloppy = sloppy;
            param.solver = solver;
            let mut x = vec![0.0; chi.len()];
            let mut res = latsol_invert_result_default();
            ok(unsafe {
                latsol_invert_staggered(
                    ctx,
                    links,
                    &param,
                    x.as_mut_ptr().cast(),
                    b.as_ptr().cast(),
                    &mut res,
                )
            });
            assert!(
                res.true_residual <= 1e-10,
                "solve {solve} sloppy {sloppy} solver {solver}: {res:?}"
            );
            assert!(rel_diff(&x, &chi) < 1e-6, "solve {solve}: x is not χ");
            if solver == LATSOL_SOLVER_BICGSTABL {
                // Counted l = 4 a cycle, as QUDA counts them.
                assert_eq!(res.iterations % 4, 0, "{res:?}");
            }
        }
    }
    ok(unsafe { latsol_staggered_free(links) });
    ok(unsafe { latsol_end(ctx) });
}

#[test]
fn bad_input_is_a_status_with_nothing_written() {
    let ctx = cpu_context();
    let links = load(ctx, true, LATSOL_GAUGE_ORDER_QDP, LATSOL_PRECISION_DOUBLE);
    let chi = read_f64("chi.f64");
    let mut x = vec![3.0; chi.len()];
    let mut res = latsol_invert_result_default();
    let mut invert = |param: &latsol_staggered_invert_param, x: &mut Vec<f64>, src: &[f64]| unsafe {
        latsol_invert_staggered(
            ctx,
            links,
            param,
            x.as_mut_ptr().cast(),
            src.as_ptr().cast(),
            &mut res,
        )
    };
    for (mass, needle) in [(0.0, "mass"), (-1.0, "mass"), (f64::NAN, "mass")] {
        let mut p = latsol_staggered_invert_param_default();
        p.mass = mass;
        expect_error(
            invert(&p, &mut x, &chi),
            LATSOL_ERROR_INVALID_ARGUMENT,
            &[needle],
        );
    }
    let mut p = latsol_staggered_invert_param_default();
    p.solve = 7;
    expect_error(
        invert(&p, &mut x, &chi),
        LATSOL_ERROR_INVALID_ARGUMENT,
        &["param->solve"],
    );
    for (solver, l, needle) in [
        (9, 4, "param->solver"),
        (LATSOL_SOLVER_GCR, 4, "Gcr"),
        (LATSOL_SOLVER_BICGSTABL, 0, "bicgstab_l"),
        (LATSOL_SOLVER_BICGSTABL, -2, "bicgstab_l"),
    ] {
        let mut p = latsol_staggered_invert_param_default();
        (p.solver, p.bicgstab_l) = (solver, l);
        expect_error(
            invert(&p, &mut x, &chi),
            LATSOL_ERROR_INVALID_ARGUMENT,
            &[needle],
        );
    }
    // A caller built against the first version (no solver fields): CG.
    let mut p = latsol_staggered_invert_param_default();
    p.struct_size = std::mem::offset_of!(latsol_staggered_invert_param, solver);
    (p.solver, p.bicgstab_l) = (LATSOL_SOLVER_GCR, 0);
    let mut first = vec![0.0; chi.len()];
    assert_eq!(invert(&p, &mut first, &chi), LATSOL_SUCCESS);
    let mut bad = chi.clone();
    bad[5] = f64::INFINITY;
    let p = latsol_staggered_invert_param_default();
    expect_error(
        invert(&p, &mut x, &bad),
        LATSOL_ERROR_INVALID_ARGUMENT,
        &["source"],
    );
    assert!(
        x.iter().all(|&v| v == 3.0),
        "a refused call wrote the solution"
    );
    let mut p = latsol_staggered_invert_param_default();
    p.solve = LATSOL_STAGGERED_SOLVE_FULL;
    let mut out = vec![3.0; chi.len()];
    expect_error(
        unsafe {
            latsol_apply_staggered(
                ctx,
                links,
                &p,
                LATSOL_OP_MPC,
                out.as_mut_ptr().cast(),
                chi.as_ptr().cast(),
            )
        },
        LATSOL_ERROR_INVALID_ARGUMENT,
        &["LATSOL_OP_MPC"],
    );
    expect_error(
        unsafe {
            latsol_apply_staggered(
                ctx,
                links,
                &p,
                LATSOL_OP_CLOVER,
                out.as_mut_ptr().cast(),
                chi.as_ptr().cast(),
            )
        },
        LATSOL_ERROR_INVALID_ARGUMENT,
        &["op"],
    );
    assert!(out.iter().all(|&v| v == 3.0));
    // NULL handles and parameters.
    expect_error(
        unsafe {
            latsol_invert_staggered(
                ctx,
                ptr::null(),
                &p,
                x.as_mut_ptr().cast(),
                chi.as_ptr().cast(),
                &mut res,
            )
        },
        LATSOL_ERROR_NULL_POINTER,
        &["links"],
    );
    let mut sp = latsol_staggered_param_default();
    sp.dims = DIMS;
    sp.order = LATSOL_GAUGE_ORDER_CPS_WILSON;
    let fat = read_f64("fat_qdp.f64");
    let mut h = ptr::null_mut();
    expect_error(
        unsafe { latsol_staggered_load(ctx, &sp, fat.as_ptr().cast(), ptr::null(), &mut h) },
        LATSOL_ERROR_INVALID_ARGUMENT,
        &["CpsWilson"],
    );
    assert!(h.is_null());
    ok(unsafe { latsol_staggered_free(links) });
    ok(unsafe { latsol_end(ctx) });
}

#[test]
fn multishift_through_the_c_abi_meets_every_shift() {
    let ctx = cpu_context();
    let links = load(ctx, true, LATSOL_GAUGE_ORDER_MILC, LATSOL_PRECISION_SINGLE);
    let chi = read_f64("chi.f64");
    let half = chi.len() / 2;
    let b = &chi[half..];
    let shifts = [0.0, 0.01, 0.3, 4.0];
    let mut xs = vec![vec![0.0; half]; shifts.len()];
    let mut ptrs: Vec<*mut c_void> = xs.iter_mut().map(|x| x.as_mut_ptr().cast()).collect();
    let mut p = latsol_staggered_invert_param_default();
    p.mass = MASS;
    p.solve = LATSOL_STAGGERED_SOLVE_ODD;
    p.tol = 1e-10;
    p.precision_sloppy = LATSOL_PRECISION_SINGLE;
    let mut res = latsol_multishift_result_default();
    ok(unsafe {
        latsol_invert_multishift_staggered(
            ctx,
            links,
            &p,
            shifts.len() as i32,
            shifts.as_ptr(),
            ptr::null(),
            ptrs.as_mut_ptr(),
            b.as_ptr().cast(),
            &mut res,
        )
    });
    for (i, (x, &s)) in xs.iter().zip(&shifts).enumerate() {
        let mut ax = vec![0.0; half];
        ok(unsafe {
            latsol_apply_staggered(
                ctx,
                links,
                &p,
                LATSOL_OP_MPC,
                ax.as_mut_ptr().cast(),
                x.as_ptr().cast(),
            )
        });
        let r: Vec<f64> = ax.iter().zip(x).map(|(a, x)| a + s * x).collect();
        let e = rel_diff(&r, b);
        assert!(
            e <= 1.01e-10 && res.true_residual[i] <= 1e-10,
            "shift {s}: {e:e}"
        );
    }
    // A negative shift is refused, nothing written.
    let bad = [0.1, -0.2];
    let before = xs.clone();
    expect_error(
        unsafe {
            latsol_invert_multishift_staggered(
                ctx,
                links,
                &p,
                2,
                bad.as_ptr(),
                ptr::null(),
                ptrs.as_mut_ptr(),
                b.as_ptr().cast(),
                &mut res,
            )
        },
        LATSOL_ERROR_INVALID_ARGUMENT,
        &["shifts[1]"],
    );
    assert_eq!(xs, before);
    ok(unsafe { latsol_staggered_free(links) });
    ok(unsafe { latsol_end(ctx) });
}
