//! Bad input through the C ABI (issue "Bad input gets a clear error and
//! loses nothing"): each case returns its status code, `latsol_last_error()`
//! names the parameter and the bad value, and the caller's outputs (the
//! solution, the result struct, the handle slot) are left as they were.

mod ffi_common;

use std::ffi::c_void;
use std::mem::size_of;
use std::ptr;

use ffi_common::*;
use latsol::ffi::*;

/// A result struct whose fields say "not written".
fn untouched_result() -> latsol_invert_result {
    let mut r = latsol_invert_result_default();
    r.iterations = -7;
    r.true_residual = SENTINEL;
    r.converged = -7;
    r
}

#[track_caller]
fn assert_untouched(solution: &[f64], result: &latsol_invert_result) {
    assert!(
        solution.iter().all(|&x| x == SENTINEL),
        "the solution buffer was written by a failing call"
    );
    assert_eq!(
        (result.iterations, result.true_residual, result.converged),
        (-7, SENTINEL, -7),
        "the result struct was written by a failing call"
    );
}

/// Runs `latsol_invert` with `p` on `s`, expecting `want` with a message
/// that mentions `needles`, and nothing written.
#[track_caller]
fn invert_fails(s: &Setup, p: &latsol_invert_param, want: latsol_status, needles: &[&str]) {
    let mut x = vec![SENTINEL; s.v * 24];
    let mut r = untouched_result();
    expect_error(s.invert(p, &mut x, &mut r), want, needles);
    assert_untouched(&x, &r);
}

/// Runs `latsol_apply(M)` with `p` on `s`, expecting `want` and `out`
/// untouched.
#[track_caller]
fn apply_fails(s: &Setup, p: &latsol_invert_param, want: latsol_status, needles: &[&str]) {
    let mut out = vec![SENTINEL; s.v * 24];
    let status = unsafe {
        latsol_apply(
            s.ctx,
            s.gauge,
            p,
            LATSOL_OP_M,
            out.as_mut_ptr().cast(),
            s.source.as_ptr().cast(),
        )
    };
    expect_error(status, want, needles);
    assert!(
        out.iter().all(|&x| x == SENTINEL),
        "apply wrote its output on an error"
    );
}

/// A gauge handle slot that must stay as it was after a failed load.
fn slot() -> *mut latsol_gauge {
    0x5e5e_5e58 as *mut latsol_gauge
}

#[track_caller]
fn load_fails(
    ctx: *mut latsol_context,
    p: *const latsol_gauge_param,
    host: *const c_void,
    want: latsol_status,
    needles: &[&str],
) {
    let mut g = slot();
    let status = unsafe { latsol_gauge_load(ctx, p, host, &mut g) };
    expect_error(status, want, needles);
    assert_eq!(g, slot(), "a failed load wrote the handle slot");
}

#[test]
fn null_handles_and_pointers() {
    let s = Setup::new(1);
    let null_ctx: *mut latsol_context = ptr::null_mut();
    let null_gauge: *const latsol_gauge = ptr::null();

    // Contexts.
    let p = latsol_init_param_default();
    let mut ctx = 0x5e5e_5e58 as *mut latsol_context;
    expect_error(
        unsafe { latsol_init(ptr::null(), &mut ctx) },
        LATSOL_ERROR_NULL_POINTER,
        &["param"],
    );
    assert_eq!(ctx as usize, 0x5e5e_5e58);
    expect_error(
        unsafe { latsol_init(&p, ptr::null_mut()) },
        LATSOL_ERROR_NULL_POINTER,
        &["ctx"],
    );
    expect_error(
        unsafe { latsol_end(null_ctx) },
        LATSOL_ERROR_NULL_POINTER,
        &["ctx"],
    );

    // Gauge fields.
    let gp = gauge_param(s.dims);
    let table: [*const c_void; 4] = std::array::from_fn(|mu| s.links[mu].as_ptr().cast());
    let host = table.as_ptr().cast::<c_void>();
    load_fails(null_ctx, &gp, host, LATSOL_ERROR_NULL_POINTER, &["ctx"]);
    load_fails(
        s.ctx,
        ptr::null(),
        host,
        LATSOL_ERROR_NULL_POINTER,
        &["param"],
    );
    load_fails(
        s.ctx,
        &gp,
        ptr::null(),
        LATSOL_ERROR_NULL_POINTER,
        &["host_gauge"],
    );
    for mu in 0..4 {
        let mut t = table;
        t[mu] = ptr::null();
        load_fails(
            s.ctx,
            &gp,
            t.as_ptr().cast(),
            LATSOL_ERROR_NULL_POINTER,
            &[&format!("host_gauge[{mu}]")],
        );
    }
    let mut milc = gp;
    milc.order = LATSOL_GAUGE_ORDER_MILC;
    load_fails(
        s.ctx,
        &milc,
        ptr::null(),
        LATSOL_ERROR_NULL_POINTER,
        &["host_gauge"],
    );
    expect_error(
        unsafe { latsol_gauge_load(s.ctx, &gp, host, ptr::null_mut()) },
        LATSOL_ERROR_NULL_POINTER,
        &["gauge"],
    );
    expect_error(
        unsafe { latsol_gauge_free(ptr::null_mut()) },
        LATSOL_ERROR_NULL_POINTER,
        &["gauge"],
    );
    let mut plaq = [SENTINEL; 3];
    expect_error(
        unsafe { latsol_gauge_plaquette(null_gauge, plaq.as_mut_ptr()) },
        LATSOL_ERROR_NULL_POINTER,
        &["gauge"],
    );
    assert_eq!(plaq, [SENTINEL; 3]);
    expect_error(
        unsafe { latsol_gauge_plaquette(s.gauge, ptr::null_mut()) },
        LATSOL_ERROR_NULL_POINTER,
        &["plaq"],
    );

    // Solves: each argument NULL in turn.
    let ip = invert_param();
    let mut x = vec![SENTINEL; s.v * 24];
    let mut r = untouched_result();
    let xp = x.as_mut_ptr().cast::<c_void>();
    let bp = s.source.as_ptr().cast::<c_void>();
    let cases: [(&str, latsol_status); 6] = unsafe {
        [
            ("ctx", latsol_invert(null_ctx, s.gauge, &ip, xp, bp, &mut r)),
            (
                "gauge",
                latsol_invert(s.ctx, null_gauge, &ip, xp, bp, &mut r),
            ),
            (
                "param",
                latsol_invert(s.ctx, s.gauge, ptr::null(), xp, bp, &mut r),
            ),
            (
                "solution",
                latsol_invert(s.ctx, s.gauge, &ip, ptr::null_mut(), bp, &mut r),
            ),
            (
                "source",
                latsol_invert(s.ctx, s.gauge, &ip, xp, ptr::null(), &mut r),
            ),
            (
                "result",
                latsol_invert(s.ctx, s.gauge, &ip, xp, bp, ptr::null_mut()),
            ),
        ]
    };
    for (name, status) in cases {
        assert_eq!(status, LATSOL_ERROR_NULL_POINTER, "NULL {name}");
    }
    // The message of the last one names its parameter.
    expect_error(
        LATSOL_ERROR_NULL_POINTER,
        LATSOL_ERROR_NULL_POINTER,
        &["result is NULL"],
    );
    assert_untouched(&x, &r);
    // One by one, so each message is checked.
    expect_error(
        unsafe { latsol_invert(s.ctx, s.gauge, &ip, ptr::null_mut(), bp, &mut r) },
        LATSOL_ERROR_NULL_POINTER,
        &["solution is NULL"],
    );
    expect_error(
        unsafe { latsol_invert(s.ctx, s.gauge, &ip, xp, ptr::null(), &mut r) },
        LATSOL_ERROR_NULL_POINTER,
        &["source is NULL"],
    );
    assert_untouched(&x, &r);

    let mut out = vec![SENTINEL; s.v * 24];
    let op = out.as_mut_ptr().cast::<c_void>();
    let cases: [(&str, latsol_status); 5] = unsafe {
        [
            (
                "ctx",
                latsol_apply(null_ctx, s.gauge, &ip, LATSOL_OP_M, op, bp),
            ),
            (
                "gauge",
                latsol_apply(s.ctx, null_gauge, &ip, LATSOL_OP_M, op, bp),
            ),
            (
                "param",
                latsol_apply(s.ctx, s.gauge, ptr::null(), LATSOL_OP_M, op, bp),
            ),
            (
                "out",
                latsol_apply(s.ctx, s.gauge, &ip, LATSOL_OP_M, ptr::null_mut(), bp),
            ),
            (
                "in",
                latsol_apply(s.ctx, s.gauge, &ip, LATSOL_OP_M, op, ptr::null()),
            ),
        ]
    };
    for (name, status) in cases {
        assert_eq!(status, LATSOL_ERROR_NULL_POINTER, "NULL {name}");
    }
    expect_error(
        LATSOL_ERROR_NULL_POINTER,
        LATSOL_ERROR_NULL_POINTER,
        &["in is NULL"],
    );
    assert!(out.iter().all(|&x| x == SENTINEL));
}

#[test]
fn struct_size_wrong() {
    let s = Setup::new(2);

    // Too large: a caller built against a newer header.
    let mut p = latsol_init_param_default();
    p.struct_size += 8;
    let mut ctx = ptr::null_mut();
    expect_error(
        unsafe { latsol_init(&p, &mut ctx) },
        LATSOL_ERROR_INVALID_ARGUMENT,
        &["param->struct_size", "larger", "latsol_init_param"],
    );
    // Too small (here: not initialised).
    p.struct_size = 4;
    expect_error(
        unsafe { latsol_init(&p, &mut ctx) },
        LATSOL_ERROR_INVALID_ARGUMENT,
        &["param->struct_size = 4", "smaller"],
    );
    assert!(ctx.is_null());

    let table: [*const c_void; 4] = std::array::from_fn(|mu| s.links[mu].as_ptr().cast());
    for size in [size_of::<latsol_gauge_param>() + 1, 0] {
        let mut gp = gauge_param(s.dims);
        gp.struct_size = size;
        load_fails(
            s.ctx,
            &gp,
            table.as_ptr().cast(),
            LATSOL_ERROR_INVALID_ARGUMENT,
            &[&format!("param->struct_size = {size}")],
        );
    }

    // A caller built before gauge_fixed existed (struct_size = the first
    // version's) loads a general field; its struct ends before gauge_fixed,
    // so a garbage value there must be ignored, not read.
    let mut gp = gauge_param(s.dims);
    gp.struct_size = std::mem::offset_of!(latsol_gauge_param, gauge_fixed);
    gp.gauge_fixed = 7;
    let mut g = ptr::null_mut();
    ok(unsafe { latsol_gauge_load(s.ctx, &gp, table.as_ptr().cast(), &mut g) });
    ok(unsafe { latsol_gauge_free(g) });
    // The current struct: only 0 and 1, and 1 only for a field in temporal
    // gauge (this random one is not).
    let mut gp = gauge_param(s.dims);
    for (v, needle) in [
        (7, "param->gauge_fixed = 7"),
        (1, "gauge_fixed: the T link"),
    ] {
        gp.gauge_fixed = v;
        load_fails(
            s.ctx,
            &gp,
            table.as_ptr().cast(),
            LATSOL_ERROR_INVALID_ARGUMENT,
            &[needle],
        );
    }

    for size in [size_of::<latsol_invert_param>() * 2, size_of::<usize>()] {
        let mut ip = invert_param();
        ip.struct_size = size;
        invert_fails(
            &s,
            &ip,
            LATSOL_ERROR_INVALID_ARGUMENT,
            &[&format!("param->struct_size = {size}")],
        );
        apply_fails(
            &s,
            &ip,
            LATSOL_ERROR_INVALID_ARGUMENT,
            &[&format!("param->struct_size = {size}")],
        );
    }

    // The result struct is checked before the solve.
    for size in [size_of::<latsol_invert_result>() + 8, 1] {
        let mut x = vec![SENTINEL; s.v * 24];
        let mut r = untouched_result();
        r.struct_size = size;
        expect_error(
            s.invert(&invert_param(), &mut x, &mut r),
            LATSOL_ERROR_INVALID_ARGUMENT,
            &[&format!("result->struct_size = {size}")],
        );
        r.struct_size = latsol_invert_result_default().struct_size;
        assert_untouched(&x, &r);
    }
}

#[test]
fn unknown_enum_values() {
    let s = Setup::new(3);

    type InitField = fn(&mut latsol_init_param) -> &mut i32;
    let init_fields: [(&str, InitField); 2] = [
        ("param->backend", |p| &mut p.backend),
        ("param->verbosity", |p| &mut p.verbosity),
    ];
    for (name, field) in init_fields {
        for bad in [-1, 99] {
            let mut p = latsol_init_param_default();
            *field(&mut p) = bad;
            let mut ctx = ptr::null_mut();
            expect_error(
                unsafe { latsol_init(&p, &mut ctx) },
                LATSOL_ERROR_INVALID_ARGUMENT,
                &[&format!("{name} = {bad}")],
            );
            assert!(ctx.is_null());
        }
    }

    type GaugeField = fn(&mut latsol_gauge_param) -> &mut i32;
    let gauge_fields: [(&str, GaugeField); 7] = [
        ("param->host_precision", |p| &mut p.host_precision),
        ("param->order", |p| &mut p.order),
        ("param->t_boundary", |p| &mut p.t_boundary),
        ("param->precision", |p| &mut p.precision),
        ("param->precision_sloppy", |p| &mut p.precision_sloppy),
        ("param->reconstruct", |p| &mut p.reconstruct),
        ("param->reconstruct_sloppy", |p| &mut p.reconstruct_sloppy),
    ];
    let table: [*const c_void; 4] = std::array::from_fn(|mu| s.links[mu].as_ptr().cast());
    for (name, field) in gauge_fields {
        for bad in [-1, 7] {
            let mut gp = gauge_param(s.dims);
            *field(&mut gp) = bad;
            load_fails(
                s.ctx,
                &gp,
                table.as_ptr().cast(),
                LATSOL_ERROR_INVALID_ARGUMENT,
                &[&format!("{name} = {bad}")],
            );
        }
    }
    // A valid precision that no host array has.
    let mut gp = gauge_param(s.dims);
    gp.host_precision = LATSOL_PRECISION_HALF;
    load_fails(
        s.ctx,
        &gp,
        table.as_ptr().cast(),
        LATSOL_ERROR_INVALID_ARGUMENT,
        &["param->host_precision = LATSOL_PRECISION_HALF"],
    );

    type InvertField = fn(&mut latsol_invert_param) -> &mut i32;
    let invert_fields: [(&str, InvertField); 11] = [
        ("param->dslash", |p| &mut p.dslash),
        ("param->mass_normalization", |p| &mut p.mass_normalization),
        ("param->solver", |p| &mut p.solver),
        ("param->solve_type", |p| &mut p.solve_type),
        ("param->matpc", |p| &mut p.matpc),
        ("param->host_precision", |p| &mut p.host_precision),
        ("param->precision", |p| &mut p.precision),
        ("param->precision_sloppy", |p| &mut p.precision_sloppy),
        ("param->dirac_order", |p| &mut p.dirac_order),
        ("param->gamma_basis", |p| &mut p.gamma_basis),
        ("param->mixed", |p| &mut p.mixed),
    ];
    for (name, field) in invert_fields {
        for bad in [-1, 42] {
            let mut ip = invert_param();
            *field(&mut ip) = bad;
            invert_fails(
                &s,
                &ip,
                LATSOL_ERROR_INVALID_ARGUMENT,
                &[&format!("{name} = {bad}")],
            );
        }
    }
    // The 0/1 flags.
    let flags: [(&str, InvertField); 2] = [
        ("param->use_initial_guess", |p| &mut p.use_initial_guess),
        ("param->cg_stabilised", |p| &mut p.cg_stabilised),
    ];
    for (name, field) in flags {
        let mut ip = invert_param();
        *field(&mut ip) = 2;
        invert_fails(
            &s,
            &ip,
            LATSOL_ERROR_INVALID_ARGUMENT,
            &[&format!("{name} = 2")],
        );
    }
    // The operator of latsol_apply.
    let mut out = vec![SENTINEL; s.v * 24];
    for bad in [-1, 8] {
        let status = unsafe {
            latsol_apply(
                s.ctx,
                s.gauge,
                &invert_param(),
                bad,
                out.as_mut_ptr().cast(),
                s.source.as_ptr().cast(),
            )
        };
        expect_error(
            status,
            LATSOL_ERROR_INVALID_ARGUMENT,
            &[&format!("op = {bad}"), "LATSOL_OP_M = 0"],
        );
    }
    assert!(out.iter().all(|&x| x == SENTINEL));
}

#[test]
fn odd_or_zero_dims() {
    let ctx = cpu_context();
    for (dims, needle) in [
        ([4, 4, 4, 3], "dims[3] = 3"),
        ([4, 5, 4, 4], "dims[1] = 5"),
        ([0, 4, 4, 4], "dims[0] = 0"),
        ([4, 4, -2, 4], "dims[2] = -2"),
    ] {
        // Arrays large enough for any of these shapes.
        let links: [Vec<f64>; 4] = std::array::from_fn(|_| vec![0.0; 4 * 4 * 4 * 4 * 18]);
        let mut gp = gauge_param(dims);
        let table: [*const c_void; 4] = std::array::from_fn(|mu| links[mu].as_ptr().cast());
        load_fails(
            ctx,
            &gp,
            table.as_ptr().cast(),
            LATSOL_ERROR_INVALID_ARGUMENT,
            &[needle, "positive and even"],
        );
        gp.order = LATSOL_GAUGE_ORDER_MILC;
        load_fails(
            ctx,
            &gp,
            links[0].as_ptr().cast(),
            LATSOL_ERROR_INVALID_ARGUMENT,
            &[needle],
        );
    }
    ok(unsafe { latsol_end(ctx) });
}

#[test]
fn kappa_not_positive_or_nan() {
    let s = Setup::new(4);
    for kappa in [0.0, -0.12, f64::NAN, f64::INFINITY] {
        let mut ip = invert_param();
        ip.kappa = kappa;
        let needle = format!("kappa = {kappa}");
        invert_fails(&s, &ip, LATSOL_ERROR_INVALID_ARGUMENT, &[&needle]);
        apply_fails(&s, &ip, LATSOL_ERROR_INVALID_ARGUMENT, &[&needle]);
    }
}

#[test]
fn tol_not_positive() {
    let s = Setup::new(5);
    for tol in [0.0, -1e-10, f64::NAN, 1.5] {
        let mut ip = invert_param();
        ip.tol = tol;
        invert_fails(
            &s,
            &ip,
            LATSOL_ERROR_INVALID_ARGUMENT,
            &[&format!("tol = {tol}")],
        );
    }
}

#[test]
fn maxiter_not_positive() {
    let s = Setup::new(6);
    for maxiter in [0, -1, i32::MIN] {
        let mut ip = invert_param();
        ip.maxiter = maxiter;
        invert_fails(
            &s,
            &ip,
            LATSOL_ERROR_INVALID_ARGUMENT,
            &[&format!("maxiter = {maxiter}"), "positive"],
        );
    }
}

#[test]
fn gauge_handle_from_another_context() {
    let a = Setup::new(7);
    let b = Setup::new(8);
    let mut x = vec![SENTINEL; a.v * 24];
    let mut r = untouched_result();
    let status = unsafe {
        latsol_invert(
            a.ctx,
            b.gauge,
            &invert_param(),
            x.as_mut_ptr().cast(),
            a.source.as_ptr().cast(),
            &mut r,
        )
    };
    expect_error(
        status,
        LATSOL_ERROR_INVALID_HANDLE,
        &["gauge", "another context"],
    );
    assert_untouched(&x, &r);
    let status = unsafe {
        latsol_apply(
            a.ctx,
            b.gauge,
            &invert_param(),
            LATSOL_OP_M,
            x.as_mut_ptr().cast(),
            a.source.as_ptr().cast(),
        )
    };
    expect_error(status, LATSOL_ERROR_INVALID_HANDLE, &["another context"]);
    assert!(x.iter().all(|&v| v == SENTINEL));
    // One handle type passed for the other.
    let status = unsafe {
        latsol_gauge_plaquette(
            a.ctx.cast_const().cast::<latsol_gauge>(),
            [0.0; 3].as_mut_ptr(),
        )
    };
    expect_error(
        status,
        LATSOL_ERROR_INVALID_HANDLE,
        &["gauge", "latsol_gauge"],
    );
    let status = unsafe {
        latsol_apply(
            a.gauge.cast::<latsol_context>(),
            a.gauge,
            &invert_param(),
            LATSOL_OP_M,
            x.as_mut_ptr().cast(),
            a.source.as_ptr().cast(),
        )
    };
    expect_error(
        status,
        LATSOL_ERROR_INVALID_HANDLE,
        &["ctx", "latsol_context"],
    );
    // A pointer latsol never made.
    let mut fake = [0u64; 8];
    let status = unsafe { latsol_gauge_free(fake.as_mut_ptr().cast()) };
    expect_error(
        status,
        LATSOL_ERROR_INVALID_HANDLE,
        &["not a live latsol_gauge"],
    );
}

#[test]
fn freeing_twice() {
    // Nothing is allocated between the two frees, so the freed memory is
    // not reused by another handle (the documented limit of the check).
    let links = random_gauge_qdp([4, 4, 4, 4], 9);
    let ctx = cpu_context();
    let gauge = load_qdp(ctx, [4, 4, 4, 4], &links);
    ok(unsafe { latsol_gauge_free(gauge) });
    expect_error(
        unsafe { latsol_gauge_free(gauge) },
        LATSOL_ERROR_INVALID_HANDLE,
        &["gauge", "latsol_gauge"],
    );
    ok(unsafe { latsol_end(ctx) });
    expect_error(
        unsafe { latsol_end(ctx) },
        LATSOL_ERROR_INVALID_HANDLE,
        &["ctx", "latsol_context"],
    );
}

#[test]
fn nan_or_inf_in_the_source() {
    let mut s = Setup::new(10);
    let ip = invert_param();
    for (at, bad) in [
        (0, f64::NAN),
        (24 * 37 + 5, f64::INFINITY),
        (s.v * 24 - 1, f64::NEG_INFINITY),
    ] {
        let keep = s.source[at];
        s.source[at] = bad;
        invert_fails(
            &s,
            &ip,
            LATSOL_ERROR_INVALID_ARGUMENT,
            &["source", "NaN or Inf"],
        );
        apply_fails(
            &s,
            &ip,
            LATSOL_ERROR_INVALID_ARGUMENT,
            &["input", "NaN or Inf"],
        );
        s.source[at] = keep;
    }
    // With an initial guess, a NaN in the guess is refused too.
    let mut ip = ip;
    ip.use_initial_guess = 1;
    let mut x = vec![0.0; s.v * 24];
    x[100] = f64::NAN;
    let before = x.clone();
    let mut r = untouched_result();
    expect_error(
        s.invert(&ip, &mut x, &mut r),
        LATSOL_ERROR_INVALID_ARGUMENT,
        &["initial guess", "NaN or Inf"],
    );
    assert!(x
        .iter()
        .zip(&before)
        .all(|(a, b)| a.to_bits() == b.to_bits()));
}

#[test]
fn nan_or_inf_in_the_links() {
    let ctx = cpu_context();
    let dims = [4, 4, 4, 4];
    let v = volume(dims);
    for (mu, at, bad) in [(0, 3, f64::NAN), (3, v * 18 - 1, f64::INFINITY)] {
        let mut links = random_gauge_qdp(dims, 11);
        links[mu][at] = bad;
        let table: [*const c_void; 4] = std::array::from_fn(|m| links[m].as_ptr().cast());
        load_fails(
            ctx,
            &gauge_param(dims),
            table.as_ptr().cast(),
            LATSOL_ERROR_INVALID_ARGUMENT,
            &["not finite", &format!("mu = {mu}")],
        );
        // The same links in MILC order.
        let milc = qdp_to_milc(&links);
        let mut gp = gauge_param(dims);
        gp.order = LATSOL_GAUGE_ORDER_MILC;
        load_fails(
            ctx,
            &gp,
            milc.as_ptr().cast(),
            LATSOL_ERROR_INVALID_ARGUMENT,
            &["not finite", &format!("mu = {mu}")],
        );
    }
    ok(unsafe { latsol_end(ctx) });
}

#[test]
fn non_su3_link() {
    let ctx = cpu_context();
    let dims = [4, 4, 4, 4];
    let mut links = random_gauge_qdp(dims, 12);
    // Link 5 in the y direction scaled by 1.01: unitary no more.
    for x in &mut links[1][5 * 18..6 * 18] {
        *x *= 1.01;
    }
    let table: [*const c_void; 4] = std::array::from_fn(|m| links[m].as_ptr().cast());
    load_fails(
        ctx,
        &gauge_param(dims),
        table.as_ptr().cast(),
        LATSOL_ERROR_INVALID_ARGUMENT,
        &["U_1", "not in SU(3)", "deviation"],
    );
    // A negative su3_tolerance skips the check for uncompressed links.
    let mut gp = gauge_param(dims);
    gp.su3_tolerance = -1.0;
    let (status, g) = try_load_qdp(ctx, &gp, &links);
    ok(status);
    ok(unsafe { latsol_gauge_free(g) });
    // ... but not when links are rebuilt assuming SU(3).
    gp.reconstruct_sloppy = LATSOL_RECONSTRUCT_12;
    gp.precision_sloppy = LATSOL_PRECISION_SINGLE;
    load_fails(
        ctx,
        &gp,
        table.as_ptr().cast(),
        LATSOL_ERROR_INVALID_ARGUMENT,
        &["not in SU(3)"],
    );
    ok(unsafe { latsol_end(ctx) });
}

#[test]
fn not_converged() {
    let s = Setup::new(13);
    for solver in [LATSOL_SOLVER_BICGSTAB, LATSOL_SOLVER_CG] {
        let mut ip = invert_param();
        ip.solver = solver;
        ip.maxiter = 1;
        ip.tol = 1e-12;
        let mut x = vec![SENTINEL; s.v * 24];
        let mut r = untouched_result();
        expect_error(
            s.invert(&ip, &mut x, &mut r),
            LATSOL_ERROR_NOT_CONVERGED,
            &["maxiter = 1", "true residual", "best solution"],
        );
        // The documented exception: the best solution and the result are
        // written.
        assert!(x.iter().all(|v| v.is_finite() && *v != SENTINEL));
        assert_eq!(r.converged, 0);
        assert_eq!(r.iterations, 1);
        assert!(
            r.true_residual > 1e-12 && r.true_residual < 1.0,
            "{}",
            r.true_residual
        );
        // The reported residual is the residual of what was written.
        let res = residual(&s, &ip, &x, &s.source);
        assert!(
            (res - r.true_residual).abs() < 1e-8 * res.max(1.0),
            "{res} vs {}",
            r.true_residual
        );
    }
}

#[test]
fn overlapping_or_misaligned_arrays() {
    let mut s = Setup::new(14);
    let ip = invert_param();
    let mut r = untouched_result();
    // Solving in place is refused before anything is read or written.
    let p = s.source.as_mut_ptr();
    let before = s.source.clone();
    let status =
        unsafe { latsol_invert(s.ctx, s.gauge, &ip, p.cast(), p.cast_const().cast(), &mut r) };
    expect_error(
        status,
        LATSOL_ERROR_INVALID_ARGUMENT,
        &["source", "solution", "overlap"],
    );
    assert_eq!(s.source, before);
    let status = unsafe {
        latsol_apply(
            s.ctx,
            s.gauge,
            &ip,
            LATSOL_OP_M,
            p.cast(),
            p.cast_const().cast(),
        )
    };
    expect_error(status, LATSOL_ERROR_INVALID_ARGUMENT, &["overlap"]);
    // A double array that is not 8-aligned.
    let mut x = vec![SENTINEL; s.v * 24 + 1];
    let odd = unsafe { x.as_mut_ptr().cast::<u8>().add(4) };
    let status = unsafe {
        latsol_invert(
            s.ctx,
            s.gauge,
            &ip,
            odd.cast(),
            s.source.as_ptr().cast(),
            &mut r,
        )
    };
    expect_error(
        status,
        LATSOL_ERROR_INVALID_ARGUMENT,
        &["solution", "aligned"],
    );
    assert!(x.iter().all(|&v| v == SENTINEL));
    assert_untouched(&x[..1], &r);
}

#[test]
fn unsupported_or_unavailable_choices() {
    let s = Setup::new(15);
    // Anisotropy: a valid number the isotropic operator does not support.
    let mut gp = gauge_param(s.dims);
    gp.anisotropy = 2.0;
    let table: [*const c_void; 4] = std::array::from_fn(|m| s.links[m].as_ptr().cast());
    load_fails(
        s.ctx,
        &gp,
        table.as_ptr().cast(),
        LATSOL_ERROR_UNSUPPORTED,
        &["anisotropy = 2"],
    );
    gp.anisotropy = f64::NAN;
    load_fails(
        s.ctx,
        &gp,
        table.as_ptr().cast(),
        LATSOL_ERROR_INVALID_ARGUMENT,
        &["anisotropy = NaN"],
    );
    // Negative counts.
    for (name, set) in [
        (
            "param->device = -2",
            (|p: &mut latsol_init_param| p.device = -2) as fn(&mut _),
        ),
        ("param->num_threads = -2", |p| p.num_threads = -2),
    ] {
        let mut p = latsol_init_param_default();
        p.backend = LATSOL_BACKEND_CPU;
        set(&mut p);
        let mut ctx = ptr::null_mut();
        expect_error(
            unsafe { latsol_init(&p, &mut ctx) },
            LATSOL_ERROR_INVALID_ARGUMENT,
            &[name],
        );
    }
    // Many ranks in this build without MPI: a communicator (C's or
    // Fortran's) or a larger grid is refused, naming the rebuild; both
    // communicators at once are refused as such.
    for (what, set) in [
        (
            "--features mpi",
            (|p: &mut latsol_init_param| p.grid = [1, 1, 2, 1]) as fn(&mut _),
        ),
        ("--features mpi", |p| {
            p.fortran_comm_given = 1;
            p.fortran_comm = 0;
        }),
        ("param->fortran_comm_given = 2", |p| {
            p.fortran_comm_given = 2
        }),
    ] {
        let mut p = latsol_init_param_default();
        p.backend = LATSOL_BACKEND_CPU;
        set(&mut p);
        let mut ctx = ptr::null_mut();
        let status = unsafe { latsol_init(&p, &mut ctx) };
        let want = if what.starts_with("--") {
            LATSOL_ERROR_UNSUPPORTED
        } else {
            LATSOL_ERROR_INVALID_ARGUMENT
        };
        expect_error(status, want, &[what]);
        assert!(ctx.is_null());
    }
    let comm = 0i64;
    let mut p = latsol_init_param_default();
    p.backend = LATSOL_BACKEND_CPU;
    p.mpi_comm = (&raw const comm).cast();
    p.fortran_comm_given = 1;
    let mut ctx = ptr::null_mut();
    expect_error(
        unsafe { latsol_init(&p, &mut ctx) },
        LATSOL_ERROR_INVALID_ARGUMENT,
        &["both given"],
    );
    // A solve precision the gauge field was not stored in.
    let mut ip = invert_param();
    ip.precision = LATSOL_PRECISION_SINGLE;
    ip.precision_sloppy = LATSOL_PRECISION_SINGLE;
    invert_fails(
        &s,
        &ip,
        LATSOL_ERROR_INVALID_ARGUMENT,
        &["precision = Single"],
    );
    // The CUDA backend: this machine may or may not have a GPU.
    let mut p = latsol_init_param_default();
    p.backend = LATSOL_BACKEND_CUDA;
    p.verbosity = LATSOL_VERBOSITY_SILENT;
    let mut ctx = ptr::null_mut();
    match unsafe { latsol_init(&p, &mut ctx) } {
        LATSOL_SUCCESS => ok(unsafe { latsol_end(ctx) }),
        status => {
            expect_error(status, LATSOL_ERROR_NO_DEVICE, &[]);
            assert!(ctx.is_null());
        }
    }
}
