//! `latsol_invert_sources` and `latsol_invert_sources_clover` on the CPU
//! backend: the same solutions and results as one `latsol_invert` per
//! source, bit for bit; NOT_CONVERGED writes everything; every other error
//! leaves every solution and result as it was.

mod ffi_common;

use std::ffi::c_void;
use std::ptr;

use ffi_common::*;
use latsol::ffi::*;

/// `n` sources of the setup's lattice, different from one another.
fn sources(s: &Setup, n: usize) -> Vec<Vec<f64>> {
    (0..n).map(|k| random_spinor(s.v, 40 + k as u64)).collect()
}

/// Calls `latsol_invert_sources` (or the clover form when `clover` is not
/// NULL) on the arrays as given.
fn invert_sources(
    s: &Setup,
    clover: *mut latsol_clover,
    p: &latsol_invert_param,
    xs: &mut [Vec<f64>],
    bs: &[Vec<f64>],
    results: &mut [latsol_invert_result],
) -> latsol_status {
    let xp: Vec<*mut c_void> = xs.iter_mut().map(|x| x.as_mut_ptr().cast()).collect();
    let bp: Vec<*const c_void> = bs.iter().map(|b| b.as_ptr().cast()).collect();
    let n = xs.len() as i32;
    unsafe {
        if clover.is_null() {
            latsol_invert_sources(
                s.ctx,
                s.gauge,
                p,
                n,
                xp.as_ptr(),
                bp.as_ptr(),
                results.as_mut_ptr(),
            )
        } else {
            latsol_invert_sources_clover(
                s.ctx,
                s.gauge,
                clover,
                p,
                n,
                xp.as_ptr(),
                bp.as_ptr(),
                results.as_mut_ptr(),
            )
        }
    }
}

/// One `latsol_invert` (or `latsol_invert_clover`) of source `b`.
fn single_call(
    s: &Setup,
    clover: *mut latsol_clover,
    p: &latsol_invert_param,
    b: &[f64],
) -> (Vec<f64>, latsol_invert_result) {
    let mut x = vec![0.0; b.len()];
    let mut r = latsol_invert_result_default();
    let (xp, bp) = (x.as_mut_ptr().cast(), b.as_ptr().cast());
    ok(unsafe {
        if clover.is_null() {
            latsol_invert(s.ctx, s.gauge, p, xp, bp, &mut r)
        } else {
            latsol_invert_clover(s.ctx, s.gauge, clover, p, xp, bp, &mut r)
        }
    });
    (x, r)
}

fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

#[test]
fn several_sources_solve_as_single_calls() {
    let s = Setup::new(51);
    let bs = sources(&s, 3);
    for solve_type in [LATSOL_SOLVE_DIRECT_PC, LATSOL_SOLVE_DIRECT] {
        let mut p = invert_param();
        p.solve_type = solve_type;
        let mut xs = vec![vec![0.0; s.v * 24]; 3];
        let mut rs = vec![latsol_invert_result_default(); 3];
        ok(invert_sources(
            &s,
            ptr::null_mut(),
            &p,
            &mut xs,
            &bs,
            &mut rs,
        ));
        for (k, b) in bs.iter().enumerate() {
            let (x, r) = single_call(&s, ptr::null_mut(), &p, b);
            assert!(same_bits(&xs[k], &x), "solve type {solve_type}, source {k}");
            assert_eq!(rs[k].iterations, r.iterations, "source {k}");
            assert_eq!(rs[k].true_residual.to_bits(), r.true_residual.to_bits());
            assert_eq!(rs[k].converged, 1);
            assert!(residual(&s, &p, &xs[k], b) <= 1.01 * p.tol);
        }
    }
}

#[test]
fn initial_guesses_and_the_clover_form() {
    let s = Setup::new(52);
    let bs = sources(&s, 2);
    // A unit clover plus 0.3 on every diagonal entry: A = 1.3.
    let mut packed = vec![0.0; s.v * 72];
    for site in packed.chunks_exact_mut(72) {
        for k in 0..2 {
            for i in 0..6 {
                site[36 * k + i] = 1.3;
            }
        }
    }
    let cp = latsol_clover_param_default();
    let mut c = ptr::null_mut();
    ok(unsafe {
        latsol_clover_load(
            s.ctx,
            s.gauge,
            &cp,
            packed.as_ptr().cast(),
            ptr::null(),
            &mut c,
        )
    });
    let mut p = invert_param();
    p.dslash = LATSOL_DSLASH_CLOVER_WILSON;
    let mut xs = vec![vec![0.0; s.v * 24]; 2];
    let mut rs = vec![latsol_invert_result_default(); 2];
    ok(invert_sources(&s, c, &p, &mut xs, &bs, &mut rs));
    for (k, b) in bs.iter().enumerate() {
        let (x, r) = single_call(&s, c, &p, b);
        assert!(same_bits(&xs[k], &x), "clover source {k}");
        assert_eq!(rs[k].iterations, r.iterations, "clover source {k}");
    }
    // Started from their solutions, the solves have (almost) nothing to do.
    p.use_initial_guess = 1;
    let mut again = vec![latsol_invert_result_default(); 2];
    ok(invert_sources(&s, c, &p, &mut xs, &bs, &mut again));
    for k in 0..2 {
        assert!(
            again[k].iterations < rs[k].iterations / 2,
            "{:?} vs {:?}",
            again[k],
            rs[k]
        );
    }
    ok(unsafe { latsol_clover_free(c) });
}

#[test]
fn not_converged_writes_every_solution_and_result() {
    let s = Setup::new(53);
    let bs = sources(&s, 2);
    let mut p = invert_param();
    p.maxiter = 2;
    let mut xs = vec![vec![7.0; s.v * 24]; 2];
    let mut rs = vec![latsol_invert_result_default(); 2];
    let st = invert_sources(&s, ptr::null_mut(), &p, &mut xs, &bs, &mut rs);
    expect_error(
        st,
        LATSOL_ERROR_NOT_CONVERGED,
        &["source 0", "source 1", "written"],
    );
    for k in 0..2 {
        assert_eq!(rs[k].converged, 0);
        assert!(rs[k].iterations > 0 && rs[k].true_residual > p.tol);
        assert!(xs[k].iter().any(|&v| v != 7.0), "solution {k} written");
    }
}

#[test]
fn errors_leave_every_array_as_it_was() {
    let s = Setup::new(54);
    let p = invert_param();
    let good = sources(&s, 2);
    let sentinel = latsol_invert_result_default();
    let untouched = |xs: &[Vec<f64>], rs: &[latsol_invert_result]| {
        assert!(
            xs.iter().all(|x| x.iter().all(|&v| v == 7.0)),
            "a solution was written"
        );
        assert!(rs
            .iter()
            .all(|r| r.iterations == sentinel.iterations && r.converged == 0));
    };
    let fresh = || {
        (
            vec![vec![7.0; s.v * 24]; 2],
            vec![latsol_invert_result_default(); 2],
        )
    };

    // A NaN in the second source.
    let mut bad = good.clone();
    bad[1][17] = f64::NAN;
    let (mut xs, mut rs) = fresh();
    let st = invert_sources(&s, ptr::null_mut(), &p, &mut xs, &bad, &mut rs);
    expect_error(st, LATSOL_ERROR_INVALID_ARGUMENT, &["sources[1]"]);
    untouched(&xs, &rs);

    // Results of different sizes.
    let (mut xs, mut rs) = fresh();
    rs[1].struct_size -= 8;
    let st = invert_sources(&s, ptr::null_mut(), &p, &mut xs, &good, &mut rs);
    expect_error(
        st,
        LATSOL_ERROR_INVALID_ARGUMENT,
        &["results[1]", "struct_size"],
    );
    untouched(&xs, &rs[..1]);

    // No sources, NULL arrays and entries, a solution that is a source.
    let (mut xs, mut rs) = fresh();
    let xp: Vec<*mut c_void> = xs.iter_mut().map(|x| x.as_mut_ptr().cast()).collect();
    let bp: Vec<*const c_void> = good.iter().map(|b| b.as_ptr().cast()).collect();
    let call = |n: i32,
                x: *const *mut c_void,
                b: *const *const c_void,
                r: *mut latsol_invert_result| unsafe {
        latsol_invert_sources(s.ctx, s.gauge, &p, n, x, b, r)
    };
    let r = rs.as_mut_ptr();
    expect_error(
        call(0, xp.as_ptr(), bp.as_ptr(), r),
        LATSOL_ERROR_INVALID_ARGUMENT,
        &["num_sources"],
    );
    expect_error(
        call(2, ptr::null(), bp.as_ptr(), r),
        LATSOL_ERROR_NULL_POINTER,
        &["solutions"],
    );
    expect_error(
        call(2, xp.as_ptr(), ptr::null(), r),
        LATSOL_ERROR_NULL_POINTER,
        &["sources"],
    );
    expect_error(
        call(2, xp.as_ptr(), bp.as_ptr(), ptr::null_mut()),
        LATSOL_ERROR_NULL_POINTER,
        &["results"],
    );
    let holes = [xp[0], ptr::null_mut()];
    expect_error(
        call(2, holes.as_ptr(), bp.as_ptr(), r),
        LATSOL_ERROR_NULL_POINTER,
        &["solutions[1]"],
    );
    let aliased = [xp[0], bp[1].cast_mut()];
    expect_error(
        call(2, aliased.as_ptr(), bp.as_ptr(), r),
        LATSOL_ERROR_INVALID_ARGUMENT,
        &["sources[1]", "solutions[1]"],
    );
    let twice = [xp[0], xp[0]];
    expect_error(
        call(2, twice.as_ptr(), bp.as_ptr(), r),
        LATSOL_ERROR_INVALID_ARGUMENT,
        &["solutions[0]", "solutions[1]"],
    );
    untouched(&xs, &rs);
}

/// `latsol_invert_sources` of `bs` from zero: every source converged,
/// its true residual (recomputed here) within the tolerance.
fn assert_all_solved(s: &Setup, p: &latsol_invert_param, bs: &[Vec<f64>]) {
    let n = bs.len();
    let mut xs = vec![vec![0.0; s.v * 24]; n];
    let mut rs = vec![latsol_invert_result_default(); n];
    ok(invert_sources(s, ptr::null_mut(), p, &mut xs, bs, &mut rs));
    for (k, b) in bs.iter().enumerate() {
        let what = format!("{} sources a block, source {k}", p.sources_per_block);
        assert_eq!(rs[k].converged, 1, "{what}");
        assert!(residual(s, p, &xs[k], b) <= 1.01 * p.tol, "{what}");
    }
}

#[test]
fn sources_in_blocks_through_the_c_face() {
    let s = Setup::new(53);
    let bs = sources(&s, 4);
    let mut p = invert_param();
    for per_block in [0, 2] {
        p.sources_per_block = per_block;
        p.block_memory_saving = i32::from(per_block == 2);
        assert_all_solved(&s, &p, &bs);
    }
    // A negative block size is refused, every array as it was.
    p.sources_per_block = -1;
    let mut xs = vec![vec![7.0; s.v * 24]; 4];
    let mut rs = vec![latsol_invert_result_default(); 4];
    let status = invert_sources(&s, ptr::null_mut(), &p, &mut xs, &bs, &mut rs);
    assert_eq!(status, LATSOL_ERROR_INVALID_ARGUMENT);
    assert!(
        last_error().contains("sources_per_block"),
        "{}",
        last_error()
    );
    assert!(xs.iter().all(|x| x.iter().all(|&v| v == 7.0)));
    // A caller built before the block fields (its struct ends at
    // cg_stabilised) gets one source at a time.
    let mut old = invert_param();
    old.struct_size = std::mem::offset_of!(latsol_invert_param, sources_per_block);
    ok(invert_sources(
        &s,
        ptr::null_mut(),
        &old,
        &mut xs,
        &bs,
        &mut rs,
    ));
    let (x, _) = single_call(&s, ptr::null_mut(), &invert_param(), &bs[1]);
    assert!(same_bits(&xs[1], &x));
}

#[test]
fn sap_preconditioned_sources_through_the_c_face() {
    let s = Setup::new(61);
    let bs = sources(&s, 3);
    let mut p = invert_param();
    p.sap_cycles = 4;
    p.sap_extent = [2, 2, 2, 2];
    for per_block in [1, 3] {
        p.sources_per_block = per_block;
        assert_all_solved(&s, &p, &bs);
    }
    // Dependent sources break the block down at once; with SAP each then
    // goes on alone, preconditioned still.
    let mut twice = bs.clone();
    twice[2] = twice[0].clone();
    p.sources_per_block = 0;
    assert_all_solved(&s, &p, &twice);
    // One source through latsol_invert takes the same path.
    let (x, r) = single_call(&s, ptr::null_mut(), &p, &bs[0]);
    assert_eq!(r.converged, 1);
    assert!(residual(&s, &p, &x, &bs[0]) <= 1.01 * p.tol);
    // What cannot run is refused before any solve, every array as it was:
    // boxes that do not tile the lattice, omega outside (0, 2), SAP with
    // CG or a negative count.
    type Spoil = fn(&mut latsol_invert_param);
    let bad: [(&str, Spoil); 4] = [
        ("SAP domain extent", |p| p.sap_extent = [3, 2, 2, 2]),
        ("sap omega", |p| p.sap_omega = 2.0),
        ("SAP preconditions block", |p| p.solver = LATSOL_SOLVER_CG),
        ("sap_cycles", |p| p.sap_cycles = -1),
    ];
    for (message, spoil) in bad {
        let mut q = p;
        spoil(&mut q);
        let mut xs = vec![vec![7.0; s.v * 24]; 3];
        let mut rs = vec![latsol_invert_result_default(); 3];
        let status = invert_sources(&s, ptr::null_mut(), &q, &mut xs, &bs, &mut rs);
        assert_eq!(status, LATSOL_ERROR_INVALID_ARGUMENT, "{message}");
        assert!(last_error().contains(message), "{}", last_error());
        assert!(xs.iter().all(|x| x.iter().all(|&v| v == 7.0)));
    }
    // A caller built before the SAP fields gets no SAP.
    let mut old = invert_param();
    old.struct_size = std::mem::offset_of!(latsol_invert_param, sap_omega);
    let (x_old, _) = single_call(&s, ptr::null_mut(), &old, &bs[1]);
    let (x, _) = single_call(&s, ptr::null_mut(), &invert_param(), &bs[1]);
    assert!(same_bits(&x_old, &x));
}

#[test]
fn gcr_with_schwarz_preconditioners_through_the_c_face() {
    let s = Setup::new(67);
    let bs = sources(&s, 2);
    let mut p = invert_param();
    p.solver = LATSOL_SOLVER_GCR;
    p.gcr_nkrylov = 8;
    assert_all_solved(&s, &p, &bs);
    p.sap_cycles = 2;
    p.sap_ssor_iterations = 3;
    p.sap_omega = 0.9;
    p.sap_extent = [2, 2, 2, 2];
    for schwarz in [LATSOL_SCHWARZ_MULTIPLICATIVE, LATSOL_SCHWARZ_ADDITIVE] {
        for box_solver in [LATSOL_BOX_SSOR, LATSOL_BOX_MR] {
            (p.sap_schwarz, p.sap_box_solver) = (schwarz, box_solver);
            assert_all_solved(&s, &p, &bs);
        }
    }
    // Refused before any solve, every array as it was: no Krylov space,
    // MR boxes under block BiCGstab, an enum outside its values.
    type Spoil = fn(&mut latsol_invert_param);
    let bad: [(&str, Spoil); 4] = [
        ("gcr_nkrylov", |p| p.gcr_nkrylov = 0),
        ("flexible GCR only", |p| p.solver = LATSOL_SOLVER_BICGSTAB),
        ("sap_schwarz", |p| p.sap_schwarz = 7),
        ("sap_box_solver", |p| p.sap_box_solver = -1),
    ];
    for (message, spoil) in bad {
        let mut q = p;
        spoil(&mut q);
        let mut xs = vec![vec![7.0; s.v * 24]; 2];
        let mut rs = vec![latsol_invert_result_default(); 2];
        let status = invert_sources(&s, ptr::null_mut(), &q, &mut xs, &bs, &mut rs);
        assert_eq!(status, LATSOL_ERROR_INVALID_ARGUMENT, "{message}");
        assert!(last_error().contains(message), "{}", last_error());
        assert!(xs.iter().all(|x| x.iter().all(|&v| v == 7.0)));
    }
    // A caller built before the GCR fields gets their defaults.
    let mut old = invert_param();
    old.struct_size = std::mem::offset_of!(latsol_invert_param, gcr_nkrylov);
    let (x_old, _) = single_call(&s, ptr::null_mut(), &old, &bs[1]);
    let (x, _) = single_call(&s, ptr::null_mut(), &invert_param(), &bs[1]);
    assert!(same_bits(&x_old, &x));
}
