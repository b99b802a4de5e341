//! The clover handle through the C ABI beyond the golden data: a clover
//! computed from the links (`latsol_clover_compute`) gives a solvable
//! operator whose `A` matches the Rust computation, a caller's inverse is
//! used when right and refused when wrong, and bad input gets a clear
//! status with nothing written: NaN/Inf entries, c_SW NaN or negative, a
//! non-invertible block, a clover of another context or lattice, links that
//! are not the gauge field's, a dslash type that does not match.

mod ffi_common;

use std::ffi::c_void;
use std::ptr;

use ffi_common::*;
use latsol::ffi::*;

const DIMS: [i32; 4] = [4, 4, 4, 4];

fn links_table(l: &[Vec<f64>; 4]) -> [*const c_void; 4] {
    std::array::from_fn(|mu| l[mu].as_ptr().cast())
}

fn compute(
    s: &Setup,
    c_sw: f64,
    kappa: f64,
    links: &[Vec<f64>; 4],
) -> (latsol_status, *mut latsol_clover) {
    let mut p = latsol_clover_param_default();
    p.c_sw = c_sw;
    p.kappa = kappa;
    let table = links_table(links);
    let mut c = ptr::null_mut();
    let st = unsafe { latsol_clover_compute(s.ctx, s.gauge, &p, table.as_ptr().cast(), &mut c) };
    (st, c)
}

fn load(s: &Setup, packed: &[f64], inverse: Option<&[f64]>) -> (latsol_status, *mut latsol_clover) {
    let p = latsol_clover_param_default();
    let mut c = ptr::null_mut();
    let inv = inverse.map_or(ptr::null(), |v| v.as_ptr().cast());
    let st = unsafe { latsol_clover_load(s.ctx, s.gauge, &p, packed.as_ptr().cast(), inv, &mut c) };
    (st, c)
}

fn clover_param() -> latsol_invert_param {
    let mut p = invert_param();
    p.dslash = LATSOL_DSLASH_CLOVER_WILSON;
    p
}

fn apply(s: &Setup, c: *mut latsol_clover, op: latsol_operator, x: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; x.len()];
    ok(unsafe {
        latsol_apply_clover(
            s.ctx,
            s.gauge,
            c,
            &clover_param(),
            op,
            out.as_mut_ptr().cast(),
            x.as_ptr().cast(),
        )
    });
    out
}

/// The packed order of a field of unit blocks plus `h` on every first
/// diagonal entry.
fn packed_unit(v: usize, h: f64) -> Vec<f64> {
    let mut p = vec![0.0; v * 72];
    for site in p.chunks_exact_mut(72) {
        for k in 0..2 {
            for i in 0..6 {
                site[36 * k + i] = 1.0;
            }
        }
        site[0] += h;
    }
    p
}

#[test]
fn a_computed_clover_solves_and_matches_the_rust_computation() {
    let s = Setup::new(21);
    let (st, c) = compute(&s, 1.6, 0.12, &s.links);
    ok(st);
    let mut p = clover_param();
    let mut x = vec![0.0; s.source.len()];
    let mut res = latsol_invert_result_default();
    for matpc in [LATSOL_MATPC_EVEN_EVEN, LATSOL_MATPC_ODD_ODD_ASYMMETRIC] {
        p.matpc = matpc;
        ok(unsafe {
            latsol_invert_clover(
                s.ctx,
                s.gauge,
                c,
                &p,
                x.as_mut_ptr().cast(),
                s.source.as_ptr().cast(),
                &mut res,
            )
        });
        let mx = apply(&s, c, LATSOL_OP_M, &x);
        assert!(rel_diff(&mx, &s.source) < 1e-10);
    }
    // A ψ through the C ABI equals the Rust field applied site by site in
    // the DeGrand–Rossi basis (DIRAC order: spin outer, colour inner).
    let lat = std::sync::Arc::new(latsol::lattice::Lattice::new([4, 4, 4, 4]).unwrap());
    let host = latsol::layout::gauge::import(
        &lat,
        &latsol::layout::HostGauge::Qdp(std::array::from_fn(|mu| {
            latsol::layout::HostReals::F64(&s.links[mu])
        })),
    )
    .unwrap();
    let field = latsol::clover::compute::compute(&host, 1.6 * 0.12).unwrap();
    let got = apply(&s, c, LATSOL_OP_CLOVER, &s.source);
    let mut want = vec![0.0; s.source.len()];
    for (i, blocks) in field.sites().iter().enumerate() {
        let psi: Vec<num_complex::Complex64> = (0..12)
            .map(|k| {
                num_complex::Complex64::new(s.source[24 * i + 2 * k], s.source[24 * i + 2 * k + 1])
            })
            .collect();
        let a = latsol::clover::CloverField::apply_site_degrand_rossi(blocks, &psi);
        for k in 0..12 {
            want[24 * i + 2 * k] = a[k].re;
            want[24 * i + 2 * k + 1] = a[k].im;
        }
    }
    assert!(rel_diff(&got, &want) < 1e-14);
    ok(unsafe { latsol_clover_free(c) });
}

#[test]
fn a_callers_inverse_is_used_when_right_and_refused_when_wrong() {
    let s = Setup::new(22);
    let v = s.v;
    let a = packed_unit(v, 0.5);
    let mut inv = packed_unit(v, 0.0);
    for site in inv.chunks_exact_mut(72) {
        site[0] = 1.0 / 1.5;
    }
    let (st, c) = load(&s, &a, Some(&inv));
    ok(st);
    let y = apply(&s, c, LATSOL_OP_CLOVER_INV, &s.source);
    let back = apply(&s, c, LATSOL_OP_CLOVER, &y);
    assert!(rel_diff(&back, &s.source) < 1e-14);
    ok(unsafe { latsol_clover_free(c) });
    inv[72 * 5] = 0.9;
    let (st, c) = load(&s, &a, Some(&inv));
    expect_error(st, LATSOL_ERROR_INVALID_ARGUMENT, &["inverse", "block 0"]);
    assert!(c.is_null());
}

#[test]
fn bad_clover_input_is_refused_with_nothing_written() {
    let s = Setup::new(23);
    let v = s.v;
    // NaN and Inf entries, named by site and block.
    for bad in [f64::NAN, f64::INFINITY] {
        let mut a = packed_unit(v, 0.0);
        a[72 * 3 + 36 + 10] = bad;
        let (st, c) = load(&s, &a, None);
        expect_error(
            st,
            LATSOL_ERROR_INVALID_ARGUMENT,
            &["NaN or Inf", "block 1"],
        );
        assert!(c.is_null());
    }
    // A singular block: its first diagonal entry zero and its column empty.
    let mut a = packed_unit(v, 0.0);
    a[72 * 7] = 0.0;
    let (st, _) = load(&s, &a, None);
    expect_error(
        st,
        LATSOL_ERROR_INVALID_ARGUMENT,
        &["not invertible", "block 0"],
    );
    // c_sw NaN, negative; kappa not positive.
    for (c_sw, kappa, needle) in [
        (f64::NAN, 0.12, "c_sw"),
        (-1.0, 0.12, "c_sw"),
        (1.0, 0.0, "kappa"),
    ] {
        let (st, c) = compute(&s, c_sw, kappa, &s.links);
        expect_error(st, LATSOL_ERROR_INVALID_ARGUMENT, &[needle]);
        assert!(c.is_null());
    }
    // Links that are not the gauge field's.
    let other = random_gauge_qdp(DIMS, 999);
    let (st, _) = compute(&s, 1.0, 0.12, &other);
    expect_error(st, LATSOL_ERROR_INVALID_ARGUMENT, &["plaquette"]);

    let (st, c) = compute(&s, 1.0, 0.12, &s.links);
    ok(st);
    let mut x = vec![7.0; s.source.len()];
    let mut res = latsol_invert_result_default();
    // Wilson parameters with a clover, and a clover solve without one.
    let wilson = invert_param();
    let st = unsafe {
        latsol_invert_clover(
            s.ctx,
            s.gauge,
            c,
            &wilson,
            x.as_mut_ptr().cast(),
            s.source.as_ptr().cast(),
            &mut res,
        )
    };
    expect_error(st, LATSOL_ERROR_INVALID_ARGUMENT, &["CloverWilson"]);
    let st = unsafe {
        latsol_invert(
            s.ctx,
            s.gauge,
            &clover_param(),
            x.as_mut_ptr().cast(),
            s.source.as_ptr().cast(),
            &mut res,
        )
    };
    expect_error(st, LATSOL_ERROR_INVALID_ARGUMENT, &["needs a clover"]);
    // A computed clover holds κ c_SW: a solve at another κ is refused.
    let mut other_kappa = clover_param();
    other_kappa.kappa = 0.13;
    let st = unsafe {
        latsol_invert_clover(
            s.ctx,
            s.gauge,
            c,
            &other_kappa,
            x.as_mut_ptr().cast(),
            s.source.as_ptr().cast(),
            &mut res,
        )
    };
    expect_error(
        st,
        LATSOL_ERROR_INVALID_ARGUMENT,
        &["computed for kappa = 0.12"],
    );
    // Multi-mass is a Wilson solve: a clover dslash is refused, not ignored.
    let kappas = [0.11, 0.12];
    let mut outs: Vec<Vec<f64>> = (0..2).map(|_| vec![7.0; s.source.len()]).collect();
    let mut ptrs: Vec<*mut c_void> = outs.iter_mut().map(|o| o.as_mut_ptr().cast()).collect();
    let mut mres = latsol_multishift_result_default();
    let st = unsafe {
        latsol_invert_multimass(
            s.ctx,
            s.gauge,
            &clover_param(),
            2,
            kappas.as_ptr(),
            ptr::null(),
            LATSOL_MULTIMASS_AUTO,
            ptrs.as_mut_ptr(),
            s.source.as_ptr().cast(),
            &mut mres,
        )
    };
    expect_error(st, LATSOL_ERROR_UNSUPPORTED, &["multi-mass"]);
    assert!(outs.iter().flatten().all(|&v| v == 7.0));
    // The clover operators need a clover field.
    let mut out = vec![7.0; s.source.len()];
    let st = unsafe {
        latsol_apply(
            s.ctx,
            s.gauge,
            &wilson,
            LATSOL_OP_CLOVER,
            out.as_mut_ptr().cast(),
            s.source.as_ptr().cast(),
        )
    };
    expect_error(st, LATSOL_ERROR_INVALID_ARGUMENT, &["clover"]);
    assert!(out.iter().all(|&v| v == 7.0));
    // A clover of another context; a gauge field of another lattice.
    let ctx2 = cpu_context();
    let links8 = random_gauge_qdp([4, 4, 4, 8], 5);
    let g2 = load_qdp(ctx2, [4, 4, 4, 8], &links8);
    let st = unsafe {
        latsol_invert_clover(
            ctx2,
            g2,
            c,
            &clover_param(),
            x.as_mut_ptr().cast(),
            s.source.as_ptr().cast(),
            &mut res,
        )
    };
    expect_error(st, LATSOL_ERROR_INVALID_HANDLE, &["another context"]);
    let g3 = load_qdp(s.ctx, [4, 4, 4, 8], &links8);
    let big = vec![0.0; 2 * s.source.len()];
    let mut xb = vec![7.0; big.len()];
    let st = unsafe {
        latsol_invert_clover(
            s.ctx,
            g3,
            c,
            &clover_param(),
            xb.as_mut_ptr().cast(),
            big.as_ptr().cast(),
            &mut res,
        )
    };
    expect_error(
        st,
        LATSOL_ERROR_INVALID_ARGUMENT,
        &["clover", "[4, 4, 4, 4]"],
    );
    assert!(x.iter().chain(&xb).all(|&v| v == 7.0));
    unsafe {
        ok(latsol_gauge_free(g3));
        ok(latsol_gauge_free(g2));
        ok(latsol_end(ctx2));
        ok(latsol_clover_free(c));
        expect_error(
            latsol_clover_free(ptr::null_mut()),
            LATSOL_ERROR_NULL_POINTER,
            &["clover"],
        );
    }
}
