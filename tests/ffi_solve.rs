//! Success paths through the C ABI, on the CPU backend: init, load, invert
//! and end; every solver and solve type; the three gauge orders; the log
//! callback; two contexts in two threads; single-precision host arrays;
//! ending a context while its gauge fields live; the defaults and strings.

mod ffi_common;

use std::ffi::{c_char, c_void, CStr};
use std::mem::size_of;
use std::ptr;
use std::sync::{Barrier, Mutex};

use ffi_common::*;
use latsol::ffi::*;

#[test]
fn init_load_invert_end() {
    let s = Setup::new(21);
    let mut plaq = [0.0; 3];
    ok(unsafe { latsol_gauge_plaquette(s.gauge, plaq.as_mut_ptr()) });
    // A hot field: the plaquette is small, and the average is the mean of
    // the spatial and temporal halves (3 planes each).
    assert!(plaq.iter().all(|p| p.abs() < 0.2), "{plaq:?}");
    assert!((plaq[0] - 0.5 * (plaq[1] + plaq[2])).abs() < 1e-14);

    let b = point_source(s.v);
    let mut x = vec![0.0; s.v * 24];
    let mut r = latsol_invert_result_default();
    let ip = invert_param();
    ok(unsafe {
        latsol_invert(
            s.ctx,
            s.gauge,
            &ip,
            x.as_mut_ptr().cast(),
            b.as_ptr().cast(),
            &mut r,
        )
    });
    assert_eq!(r.converged, 1);
    assert!(r.iterations > 0 && r.true_residual <= ip.tol, "{r:?}");
    assert!(r.seconds > 0.0 && r.gflops > 0.0, "{r:?}");
    assert_eq!(r.struct_size, size_of::<latsol_invert_result>());
    // Checked independently of the solver, through latsol_apply.
    let res = residual(&s, &ip, &x, &b);
    assert!(res <= 1.01 * ip.tol, "residual {res:e}");
    assert!((res - r.true_residual).abs() <= 1e-3 * ip.tol);
}

#[test]
fn every_solver_and_solve_type() {
    let s = Setup::new(22);
    for solver in [LATSOL_SOLVER_CG, LATSOL_SOLVER_BICGSTAB] {
        for solve_type in [
            LATSOL_SOLVE_DIRECT,
            LATSOL_SOLVE_DIRECT_PC,
            LATSOL_SOLVE_NORMOP,
            LATSOL_SOLVE_NORMOP_PC,
        ] {
            for matpc in [LATSOL_MATPC_EVEN_EVEN, LATSOL_MATPC_ODD_ODD_ASYMMETRIC] {
                let mut ip = invert_param();
                ip.solver = solver;
                ip.solve_type = solve_type;
                ip.matpc = matpc;
                let mut x = vec![0.0; s.v * 24];
                let mut r = latsol_invert_result_default();
                ok(s.invert(&ip, &mut x, &mut r));
                let res = residual(&s, &ip, &x, &s.source);
                assert!(
                    r.converged == 1 && res <= 1.01 * ip.tol,
                    "solver {solver}, solve type {solve_type}, matpc {matpc}: residual {res:e}, {r:?}"
                );
            }
        }
    }
}

#[test]
fn mass_normalization_and_initial_guess() {
    let s = Setup::new(23);
    let mut ip = invert_param();
    ip.mass_normalization = LATSOL_NORMALIZATION_MASS;
    let mut x = vec![0.0; s.v * 24];
    let mut r = latsol_invert_result_default();
    ok(s.invert(&ip, &mut x, &mut r));
    // M in the mass normalization is the kappa one over 2 kappa.
    let mut kp = ip;
    kp.mass_normalization = LATSOL_NORMALIZATION_KAPPA;
    let m_mass = s.apply(&ip, LATSOL_OP_M, &x);
    let m_kappa = s.apply(&kp, LATSOL_OP_M, &x);
    let scaled: Vec<f64> = m_kappa.iter().map(|v| v / (2.0 * ip.kappa)).collect();
    assert!(rel_diff(&m_mass, &scaled) < 1e-14);
    assert!(rel_diff(&m_mass, &s.source) <= 1.01 * ip.tol);

    // Starting from the answer, a solve has (almost) nothing to do.
    ip.use_initial_guess = 1;
    let mut r2 = latsol_invert_result_default();
    ok(s.invert(&ip, &mut x, &mut r2));
    assert!(
        r2.iterations < r.iterations / 2,
        "{} vs {}",
        r2.iterations,
        r.iterations
    );
}

#[test]
fn apply_operators_agree() {
    let s = Setup::new(24);
    let ip = invert_param();
    let psi = &s.source;
    let m = s.apply(&ip, LATSOL_OP_M, psi);
    let d = s.apply(&ip, LATSOL_OP_DSLASH, psi);
    // M = 1 − κ D.
    let want: Vec<f64> = psi.iter().zip(&d).map(|(p, q)| p - ip.kappa * q).collect();
    assert!(rel_diff(&m, &want) < 1e-14);
    // M†M ψ = M†(M ψ).
    let mdm = s.apply(&ip, LATSOL_OP_MDAG_M, psi);
    let md_m = s.apply(&ip, LATSOL_OP_MDAG, &m);
    assert!(rel_diff(&mdm, &md_m) < 1e-13);
    // ⟨ψ, M φ⟩ = ⟨M† ψ, φ⟩ (real parts suffice as a check of the adjoint).
    let phi = random_spinor(s.v, 99);
    let m_phi = s.apply(&ip, LATSOL_OP_M, &phi);
    let md_psi = s.apply(&ip, LATSOL_OP_MDAG, psi);
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let (l, r) = (dot(psi, &m_phi), dot(&md_psi, &phi));
    assert!((l - r).abs() < 1e-12 * l.abs().max(1.0), "{l} vs {r}");
}

#[test]
fn the_three_gauge_orders_give_the_same_operator() {
    let dims = [4, 4, 4, 6];
    let v = volume(dims);
    let qdp = random_gauge_qdp(dims, 25);
    let milc = qdp_to_milc(&qdp);
    let cps = qdp_to_cps(&qdp);
    let ctx = cpu_context();
    let psi = random_spinor(v, 26);
    let ip = invert_param();
    let mut outs = Vec::new();
    for (order, host) in [
        (LATSOL_GAUGE_ORDER_MILC, milc.as_ptr()),
        (LATSOL_GAUGE_ORDER_CPS_WILSON, cps.as_ptr()),
    ] {
        let mut gp = gauge_param(dims);
        gp.order = order;
        let mut g = ptr::null_mut();
        ok(unsafe { latsol_gauge_load(ctx, &gp, host.cast(), &mut g) });
        outs.push(apply_on(ctx, g, &ip, &psi));
        ok(unsafe { latsol_gauge_free(g) });
    }
    let g = load_qdp(ctx, dims, &qdp);
    let reference = apply_on(ctx, g, &ip, &psi);
    for out in outs {
        assert_eq!(out, reference, "orders disagree");
    }
    ok(unsafe { latsol_gauge_free(g) });
    ok(unsafe { latsol_end(ctx) });
}

fn apply_on(
    ctx: *mut latsol_context,
    g: *mut latsol_gauge,
    ip: &latsol_invert_param,
    psi: &[f64],
) -> Vec<f64> {
    let mut out = vec![0.0; psi.len()];
    ok(unsafe {
        latsol_apply(
            ctx,
            g,
            ip,
            LATSOL_OP_M,
            out.as_mut_ptr().cast(),
            psi.as_ptr().cast(),
        )
    });
    out
}

/// Collects log lines through `user_data`.
unsafe extern "C" fn collect(level: latsol_verbosity, msg: *const c_char, user: *mut c_void) {
    let lines = unsafe { &*(user as *const Mutex<Vec<(i32, String)>>) };
    let msg = unsafe { CStr::from_ptr(msg) }
        .to_string_lossy()
        .into_owned();
    lines.lock().unwrap().push((level, msg));
}

#[test]
fn log_callback_receives_lines() {
    let lines: Mutex<Vec<(i32, String)>> = Mutex::new(Vec::new());
    let mut p = latsol_init_param_default();
    p.backend = LATSOL_BACKEND_CPU;
    p.num_threads = 2;
    p.verbosity = LATSOL_VERBOSITY_VERBOSE;
    p.log_callback = Some(collect);
    p.log_user_data = (&lines as *const Mutex<_>).cast_mut().cast();
    let mut ctx = ptr::null_mut();
    ok(unsafe { latsol_init(&p, &mut ctx) });
    let dims = [4, 4, 4, 4];
    let g = load_qdp(ctx, dims, &random_gauge_qdp(dims, 27));
    let b = point_source(volume(dims));
    let mut x = vec![0.0; b.len()];
    let mut r = latsol_invert_result_default();
    let mut ip = invert_param();
    ip.progress_every = 2;
    ok(unsafe {
        latsol_invert(
            ctx,
            g,
            &ip,
            x.as_mut_ptr().cast(),
            b.as_ptr().cast(),
            &mut r,
        )
    });
    ok(unsafe { latsol_gauge_free(g) });
    ok(unsafe { latsol_end(ctx) });

    let lines = lines.into_inner().unwrap();
    assert!(!lines.is_empty(), "the callback got no lines");
    for (level, msg) in &lines {
        assert!(
            [LATSOL_VERBOSITY_SUMMARIZE, LATSOL_VERBOSITY_VERBOSE].contains(level),
            "level {level}: {msg}"
        );
        assert!(!msg.ends_with('\n'));
    }
    let summary = lines
        .iter()
        .find(|(level, _)| *level == LATSOL_VERBOSITY_SUMMARIZE)
        .expect("a summary line");
    assert!(
        summary.1.contains(&format!("{} iterations", r.iterations)),
        "{}",
        summary.1
    );
    assert!(
        lines.iter().any(|(_, m)| m.contains("plaquette")),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .filter(|(_, m)| m.contains("iteration "))
            .count()
            >= 2,
        "no progress lines: {lines:?}"
    );
}

#[test]
fn two_contexts_in_two_threads() {
    // Both threads solve at the same time (the barrier lines them up), each
    // on its own context; each answer must equal the one computed alone.
    let alone: Vec<Vec<f64>> = (0..2).map(|i| solve_once(30 + i, None)).collect();
    let barrier = Barrier::new(2);
    let together: Vec<Vec<f64>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..2)
            .map(|i| {
                let barrier = &barrier;
                scope.spawn(move || solve_once(30 + i, Some(barrier)))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(alone, together);
    assert_ne!(together[0], together[1]);
}

fn solve_once(seed: u64, barrier: Option<&Barrier>) -> Vec<f64> {
    let s = Setup::new(seed);
    if let Some(b) = barrier {
        b.wait();
    }
    let mut x = vec![0.0; s.v * 24];
    let mut r = latsol_invert_result_default();
    ok(s.invert(&invert_param(), &mut x, &mut r));
    x
}

#[test]
fn single_precision_host_arrays() {
    let dims = [4, 4, 4, 4];
    let v = volume(dims);
    let links = random_gauge_qdp(dims, 40);
    let links32: [Vec<f32>; 4] =
        std::array::from_fn(|mu| links[mu].iter().map(|&x| x as f32).collect());
    let ctx = cpu_context();
    let mut gp = gauge_param(dims);
    gp.host_precision = LATSOL_PRECISION_SINGLE;
    let table: [*const c_void; 4] = std::array::from_fn(|mu| links32[mu].as_ptr().cast());
    let mut g32 = ptr::null_mut();
    ok(unsafe { latsol_gauge_load(ctx, &gp, table.as_ptr().cast(), &mut g32) });

    let b32: Vec<f32> = random_spinor(v, 41).iter().map(|&x| x as f32).collect();
    let mut x32 = vec![0.0f32; v * 24];
    let mut ip = invert_param();
    ip.host_precision = LATSOL_PRECISION_SINGLE;
    ip.tol = 1e-6;
    let mut r = latsol_invert_result_default();
    ok(unsafe {
        latsol_invert(
            ctx,
            g32,
            &ip,
            x32.as_mut_ptr().cast(),
            b32.as_ptr().cast(),
            &mut r,
        )
    });
    assert!(r.converged == 1 && r.true_residual <= 1e-6, "{r:?}");

    // The residual of the f32 answer, in double: what f32 rounding of the
    // solution leaves.
    let x64: Vec<f64> = x32.iter().map(|&x| x as f64).collect();
    let b64: Vec<f64> = b32.iter().map(|&x| x as f64).collect();
    let mut dp = invert_param();
    dp.host_precision = LATSOL_PRECISION_DOUBLE;
    let mut mx = vec![0.0; v * 24];
    ok(unsafe {
        latsol_apply(
            ctx,
            g32,
            &dp,
            LATSOL_OP_M,
            mx.as_mut_ptr().cast(),
            x64.as_ptr().cast(),
        )
    });
    let res = rel_diff(&mx, &b64);
    assert!(
        res < 1e-5,
        "residual of the single-precision answer: {res:e}"
    );

    // apply with single host arrays agrees with double to f32 rounding.
    let mut m32 = vec![0.0f32; v * 24];
    ok(unsafe {
        latsol_apply(
            ctx,
            g32,
            &ip,
            LATSOL_OP_M,
            m32.as_mut_ptr().cast(),
            x32.as_ptr().cast(),
        )
    });
    let m32: Vec<f64> = m32.iter().map(|&x| x as f64).collect();
    assert!(rel_diff(&m32, &mx) < 1e-6);

    ok(unsafe { latsol_gauge_free(g32) });
    ok(unsafe { latsol_end(ctx) });
}

#[test]
fn ending_the_context_first_is_safe() {
    let dims = [4, 4, 4, 4];
    let ctx = cpu_context();
    let g = load_qdp(ctx, dims, &random_gauge_qdp(dims, 50));
    let mut before = [0.0; 3];
    ok(unsafe { latsol_gauge_plaquette(g, before.as_mut_ptr()) });
    ok(unsafe { latsol_end(ctx) });
    let mut after = [0.0; 3];
    ok(unsafe { latsol_gauge_plaquette(g, after.as_mut_ptr()) });
    assert_eq!(before, after);
    ok(unsafe { latsol_gauge_free(g) });
}

#[test]
fn unit_field_plaquette_is_one() {
    let dims = [4, 4, 4, 4];
    let v = volume(dims);
    let mut unit = vec![0.0; v * 18];
    for link in unit.chunks_exact_mut(18) {
        for c in 0..3 {
            link[(c * 3 + c) * 2] = 1.0;
        }
    }
    let ctx = cpu_context();
    let g = load_qdp(ctx, dims, &[unit.clone(), unit.clone(), unit.clone(), unit]);
    let mut plaq = [0.0; 3];
    ok(unsafe { latsol_gauge_plaquette(g, plaq.as_mut_ptr()) });
    assert_eq!(plaq, [1.0; 3]);
    ok(unsafe { latsol_gauge_free(g) });
    ok(unsafe { latsol_end(ctx) });
}

#[test]
fn defaults_version_and_strings() {
    let ip = latsol_invert_param_default();
    assert_eq!(ip.struct_size, size_of::<latsol_invert_param>());
    assert_eq!(
        (
            ip.dslash,
            ip.kappa,
            ip.solver,
            ip.solve_type,
            ip.tol,
            ip.maxiter
        ),
        (
            LATSOL_DSLASH_WILSON,
            0.12,
            LATSOL_SOLVER_BICGSTAB,
            LATSOL_SOLVE_DIRECT_PC,
            1e-10,
            10000
        )
    );
    assert_eq!(
        (
            ip.host_precision,
            ip.precision,
            ip.dirac_order,
            ip.gamma_basis
        ),
        (
            LATSOL_PRECISION_DOUBLE,
            LATSOL_PRECISION_DOUBLE,
            LATSOL_DIRAC_ORDER_DIRAC,
            LATSOL_GAMMA_DEGRAND_ROSSI
        )
    );
    let gp = latsol_gauge_param_default();
    assert_eq!(gp.struct_size, size_of::<latsol_gauge_param>());
    assert_eq!(
        (gp.order, gp.t_boundary, gp.reconstruct, gp.anisotropy),
        (
            LATSOL_GAUGE_ORDER_QDP,
            LATSOL_T_BOUNDARY_ANTIPERIODIC,
            LATSOL_RECONSTRUCT_18,
            1.0
        )
    );
    let p = latsol_init_param_default();
    assert_eq!(p.struct_size, size_of::<latsol_init_param>());
    assert_eq!(
        (p.backend, p.verbosity),
        (LATSOL_BACKEND_AUTO, LATSOL_VERBOSITY_SUMMARIZE)
    );
    assert!(p.log_callback.is_none() && p.log_user_data.is_null());
    assert_eq!(
        latsol_invert_result_default().struct_size,
        size_of::<latsol_invert_result>()
    );

    let version = unsafe { CStr::from_ptr(latsol_version()) };
    assert_eq!(version.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
    assert_eq!(status_name(LATSOL_SUCCESS), "LATSOL_SUCCESS");
    assert_eq!(
        status_name(LATSOL_ERROR_NOT_CONVERGED),
        "LATSOL_ERROR_NOT_CONVERGED"
    );
    assert_eq!(status_name(LATSOL_ERROR_INTERNAL), "LATSOL_ERROR_INTERNAL");
    assert_eq!(status_name(1234), "LATSOL_UNKNOWN_STATUS");
    // Every code from SUCCESS to INTERNAL has its own name.
    let names: std::collections::HashSet<String> = (0..=10).map(status_name).collect();
    assert_eq!(names.len(), 11);
    // A fresh thread has no error yet, and errors stay per thread.
    std::thread::spawn(|| assert_eq!(last_error(), ""))
        .join()
        .unwrap();
    let _ = unsafe { latsol_end(ptr::null_mut()) };
    assert!(last_error().contains("latsol_end"));
    std::thread::spawn(|| assert_eq!(last_error(), ""))
        .join()
        .unwrap();
}
