//! The QUDA face under hostile input (issue 39): where QUDA 9521952
//! refuses an input, latsol refuses it with the function's and QUDA's own
//! field name and leaves the caller's buffers as they were; where QUDA
//! accepts one with a meaning, latsol gives it that meaning. QUDA's checks
//! are in lib/check_params.h (`checkInvertParam`), lib/interface_quda.cpp
//! (`invertMultiShiftQuda`, `loadCloverQuda`) and lib/milc_interface.cpp
//! (`qudaInit`). In-process, with `LATSOL_QUDA_ON_ERROR=return`; one test,
//! as the interface has one implicit context for the process.

mod common;

use std::ffi::CStr;
use std::os::raw::c_void;

use latsol::ffi::quda::abi::*;
use latsol::ffi::{
    latsol_last_error, LATSOL_ERROR_INVALID_ARGUMENT, LATSOL_ERROR_NULL_POINTER, LATSOL_SUCCESS,
};

extern "C" {
    fn initQuda(device: i32);
    fn endQuda();
    fn newQudaInvertParam() -> QudaInvertParam;
    fn loadCloverQuda(h_clover: *mut c_void, h_clovinv: *mut c_void, param: *mut QudaInvertParam);
    fn freeGaugeQuda();
    fn invertQuda(h_x: *mut c_void, h_b: *mut c_void, param: *mut QudaInvertParam);
    fn invertMultiShiftQuda(hp_x: *mut *mut c_void, hp_b: *mut c_void, param: *mut QudaInvertParam);
    fn invertMultiSrcQuda(
        hp_x: *mut *mut c_void,
        hp_b: *mut *mut c_void,
        param: *mut QudaInvertParam,
    );
    fn MatQuda(h_out: *mut c_void, h_in: *mut c_void, param: *mut QudaInvertParam);
    fn qudaInit(input: QudaInitArgs_t);
    fn qudaFinalize();
    fn latsol_quda_last_status() -> i32;
}

const DIMS: [i32; 4] = [6, 4, 4, 8];
const V: usize = 6 * 4 * 4 * 8;
/// Reals of one parity of a Wilson spinor field.
const HALF: usize = V * 12;

fn status() -> i32 {
    unsafe { latsol_quda_last_status() }
}

fn last_error() -> String {
    // SAFETY: latsol_last_error returns a NUL-terminated string.
    unsafe { CStr::from_ptr(latsol_last_error()) }
        .to_string_lossy()
        .into_owned()
}

/// Asserts that the last call failed with an invalid argument whose
/// message holds every one of `words`.
fn refused(words: &[&str]) {
    assert_eq!(status(), LATSOL_ERROR_INVALID_ARGUMENT, "{}", last_error());
    let e = last_error();
    for w in words {
        assert!(e.contains(w), "{w:?} not in {e:?}");
    }
}

/// Wilson CG on M̂†M̂ of the even parity, κ normalization, double.
fn wilson_param() -> QudaInvertParam {
    let mut ip = unsafe { newQudaInvertParam() };
    ip.dslash_type = QUDA_WILSON_DSLASH;
    ip.kappa = 0.12;
    ip.mass_normalization = QUDA_KAPPA_NORMALIZATION;
    ip.dagger = QUDA_DAG_NO;
    ip.cpu_prec = QUDA_DOUBLE_PRECISION;
    ip.cuda_prec = QUDA_DOUBLE_PRECISION;
    ip.cuda_prec_sloppy = QUDA_DOUBLE_PRECISION;
    ip.dirac_order = QUDA_DIRAC_ORDER;
    ip.gamma_basis = QUDA_DEGRAND_ROSSI_GAMMA_BASIS;
    ip.solution_type = QUDA_MATPCDAG_MATPC_SOLUTION;
    ip.solve_type = QUDA_NORMOP_PC_SOLVE;
    ip.matpc_type = QUDA_MATPC_EVEN_EVEN;
    ip.inv_type = QUDA_CG_INVERTER;
    ip.tol = 1e-10;
    ip.maxiter = 2000;
    ip.reliable_delta = 0.1;
    ip.verbosity = QUDA_SILENT;
    ip
}

/// `invertMultiShiftQuda` with `offsets` (and `tols` per offset, 0 for
/// `tol`) on `b`; the solutions start as 7s, and the call's status.
fn multishift(ip: &mut QudaInvertParam, offsets: &[f64], tols: &[f64], b: &[f64]) -> Vec<Vec<f64>> {
    ip.num_offset = offsets.len() as i32;
    ip.offset[..offsets.len()].copy_from_slice(offsets);
    ip.tol_offset[..tols.len()].copy_from_slice(tols);
    let mut xs = vec![vec![7.0; HALF]; offsets.len()];
    let mut ptrs: Vec<*mut c_void> = xs.iter_mut().map(|x| x.as_mut_ptr().cast()).collect();
    let mut b = b.to_vec();
    unsafe { invertMultiShiftQuda(ptrs.as_mut_ptr(), b.as_mut_ptr().cast(), ip) };
    xs
}

#[test]
fn hostile_input_is_refused_or_given_quda_meaning() {
    // SAFETY: set before this binary's first call into the library.
    unsafe { std::env::set_var("LATSOL_QUDA_ON_ERROR", "return") };
    let gauge = common::golden_reals("golden-wilson-6x4x4x8", "gauge_qdp.f64");
    let psi = common::golden_reals("golden-wilson-6x4x4x8", "psi_dirac.f64");
    let b = &psi[..HALF];
    unsafe { initQuda(0) };
    common::quda_load_links(
        &gauge,
        DIMS,
        QUDA_WILSON_LINKS,
        QUDA_QDP_GAUGE_ORDER,
        QUDA_ANTI_PERIODIC_T,
        false,
    );
    assert_eq!(status(), LATSOL_SUCCESS, "{}", last_error());

    // Multi-shift offsets: ascending, a repeated one allowed.
    let mut ip = wilson_param();
    let once = multishift(&mut ip, &[0.01, 0.05, 0.2], &[0.0; 3], b);
    assert_eq!(status(), LATSOL_SUCCESS, "{}", last_error());
    let res_once = ip.true_res_offset;
    let mut ip = wilson_param();
    let twice = multishift(&mut ip, &[0.01, 0.05, 0.05, 0.2], &[0.0; 4], b);
    assert_eq!(status(), LATSOL_SUCCESS, "{}", last_error());
    assert_eq!(twice[0], once[0]);
    assert_eq!(twice[1], once[1]);
    assert_eq!(twice[2], once[1]);
    assert_eq!(twice[3], once[2]);
    assert_eq!(ip.true_res_offset[2], res_once[1]);
    assert!(ip.true_res_offset[..4].iter().all(|&r| r < 1e-9));
    // Descending: refused before anything is written.
    let mut ip = wilson_param();
    let xs = multishift(&mut ip, &[0.05, 0.01], &[0.0; 2], b);
    refused(&[
        "invertMultiShiftQuda",
        "param->offset[1]",
        "smallest to largest",
    ]);
    assert!(xs.iter().flatten().all(|&v| v == 7.0));
    assert_eq!(ip.iter, wilson_param().iter);
    // A NaN per-shift target: refused, not replaced by `tol`.
    let mut ip = wilson_param();
    let xs = multishift(&mut ip, &[0.01, 0.05], &[1e-9, f64::NAN], b);
    refused(&["param->tol_offset[1] = NaN"]);
    assert!(xs.iter().flatten().all(|&v| v == 7.0));
    // Wilson multi-shift solves the normal equations only.
    for solve in [QUDA_DIRECT_PC_SOLVE, QUDA_DIRECT_SOLVE] {
        let mut ip = wilson_param();
        ip.solve_type = solve;
        multishift(&mut ip, &[0.01, 0.05], &[0.0; 2], b);
        refused(&["invertMultiShiftQuda", "param->solve_type"]);
    }

    // invertQuda: QUDA's pairing of solution and solve.
    for (solution, solve) in [
        (QUDA_MATPCDAG_MATPC_SOLUTION, QUDA_NORMOP_SOLVE),
        (QUDA_MATDAG_MAT_SOLUTION, QUDA_NORMOP_PC_SOLVE),
        (QUDA_MATPC_SOLUTION, QUDA_NORMERR_PC_SOLVE),
    ] {
        let mut ip = wilson_param();
        ip.solution_type = solution;
        ip.solve_type = solve;
        let (mut x, mut src) = (vec![7.0; 2 * HALF], psi.clone());
        unsafe { invertQuda(x.as_mut_ptr().cast(), src.as_mut_ptr().cast(), &mut ip) };
        refused(&["invertQuda", "param->solve_type"]);
        assert!(x.iter().all(|&v| v == 7.0));
    }

    // newQudaInvertParam leaves QUDA's "unset" markers where QUDA does
    // (lib/check_params.h): INVALID_INT = INT_MIN, INVALID_DOUBLE = DBL_MIN.
    let fresh = unsafe { newQudaInvertParam() };
    assert_eq!(
        (fresh.gcrNkrylov, fresh.Nsteps, fresh.maxiter_precondition),
        (i32::MIN, i32::MIN, i32::MIN)
    );
    assert_eq!(fresh.tol_precondition, f64::MIN_POSITIVE);
    assert_eq!(
        fresh.accelerator_type_precondition,
        QUDA_INVALID_ACCELERATOR
    );
    assert_eq!(fresh.inv_type_precondition, QUDA_INVALID_INVERTER);

    // Inverters latsol does not run are refused by name, never replaced by
    // another solver (issue 37); a PCG with a preconditioner likewise.
    for (inv, name) in [
        (QUDA_CA_GCR_INVERTER, "QUDA_CA_GCR_INVERTER"),
        (QUDA_MR_INVERTER, "QUDA_MR_INVERTER"),
    ] {
        let mut ip = wilson_param();
        ip.inv_type = inv;
        ip.solution_type = QUDA_MAT_SOLUTION;
        ip.solve_type = QUDA_DIRECT_PC_SOLVE;
        let (mut x, mut src) = (vec![7.0; 2 * HALF], psi.clone());
        unsafe { invertQuda(x.as_mut_ptr().cast(), src.as_mut_ptr().cast(), &mut ip) };
        refused(&[
            "invertQuda",
            "param->inv_type",
            name,
            "substitutes no other",
        ]);
        assert!(x.iter().all(|&v| v == 7.0));
    }
    // GCR (src/ffi/quda/gcr.rs): QUDA's checks of its fields, and what
    // latsol does not provide refused by name.
    let gcr = || {
        let mut ip = wilson_param();
        ip.inv_type = QUDA_GCR_INVERTER;
        ip.solution_type = QUDA_MAT_SOLUTION;
        ip.solve_type = QUDA_DIRECT_PC_SOLVE;
        ip.gcrNkrylov = 8;
        ip
    };
    let mr = |schwarz: QudaSchwarzType| {
        let mut ip = gcr();
        ip.inv_type_precondition = QUDA_MR_INVERTER;
        ip.schwarz_type = schwarz;
        ip.tol_precondition = 0.1;
        ip.maxiter_precondition = 4;
        ip.verbosity_precondition = QUDA_SILENT;
        ip.precondition_cycle = 2;
        ip.omega = 0.9;
        ip
    };
    let bicgstab_l = |l: i32| QudaInvertParam {
        inv_type: QUDA_BICGSTABL_INVERTER,
        gcrNkrylov: l,
        ..gcr()
    };
    let cases: [(QudaInvertParam, &[&str]); 11] = [
        (
            bicgstab_l(i32::MIN),
            &["param->gcrNkrylov", "unset", "BICGSTABL"],
        ),
        (bicgstab_l(0), &["param->gcrNkrylov = 0", "l >= 1"]),
        (
            QudaInvertParam {
                inv_type_precondition: QUDA_MR_INVERTER,
                ..bicgstab_l(4)
            },
            &["param->inv_type_precondition", "without a preconditioner"],
        ),
        (
            QudaInvertParam {
                precondition_cycle: 3,
                ..mr(QUDA_MULTIPLICATIVE_SCHWARZ)
            },
            &["param->precondition_cycle = 3", "even"],
        ),
        (
            QudaInvertParam {
                gcrNkrylov: i32::MIN,
                ..gcr()
            },
            &["param->gcrNkrylov", "unset"],
        ),
        (
            QudaInvertParam {
                gcrNkrylov: 0,
                ..gcr()
            },
            &["param->gcrNkrylov = 0"],
        ),
        (
            QudaInvertParam {
                inv_type_precondition: QUDA_BICGSTAB_INVERTER,
                ..gcr()
            },
            &["param->inv_type_precondition", "QUDA_BICGSTAB_INVERTER"],
        ),
        (
            mr(QUDA_INVALID_SCHWARZ),
            &["param->schwarz_type", "QUDA_INVALID_SCHWARZ"],
        ),
        (
            QudaInvertParam {
                tol_precondition: f64::MIN_POSITIVE,
                ..mr(QUDA_ADDITIVE_SCHWARZ)
            },
            &["param->tol_precondition", "unset"],
        ),
        (
            QudaInvertParam {
                maxiter_precondition: i32::MIN,
                ..mr(QUDA_ADDITIVE_SCHWARZ)
            },
            &["param->maxiter_precondition"],
        ),
        (
            QudaInvertParam {
                cuda_prec_precondition: QUDA_HALF_PRECISION,
                ..mr(QUDA_MULTIPLICATIVE_SCHWARZ)
            },
            &["param->cuda_prec_precondition", "cuda_prec_sloppy"],
        ),
    ];
    for (mut ip, words) in cases {
        let (mut x, mut src) = (vec![7.0; 2 * HALF], psi.clone());
        unsafe { invertQuda(x.as_mut_ptr().cast(), src.as_mut_ptr().cast(), &mut ip) };
        let mut all = vec!["invertQuda"];
        all.extend_from_slice(words);
        refused(&all);
        assert!(x.iter().all(|&v| v == 7.0));
    }
    // GCR alone and with MR-Schwarz preconditioners: BiCGstab's solution,
    // within the 2 κ(M) tol two solutions to tol share (κ(M) ≤ (1 + 8κ) /
    // (1 − 8κ) = 49 at κ = 0.12).
    let solve = |mut ip: QudaInvertParam| {
        let (mut x, mut src) = (vec![0.0f64; 2 * HALF], psi.clone());
        unsafe { invertQuda(x.as_mut_ptr().cast(), src.as_mut_ptr().cast(), &mut ip) };
        assert_eq!(status(), LATSOL_SUCCESS, "{}", last_error());
        assert!(ip.true_res[0] <= ip.tol, "true_res {:e}", ip.true_res[0]);
        x
    };
    let want = solve(QudaInvertParam {
        inv_type: QUDA_BICGSTAB_INVERTER,
        ..gcr()
    });
    let bound = 2.0 * 49.0 * 1e-10;
    // BiCGstab(l) with l from gcrNkrylov (mixed precision: tests/bicgstab_l.rs).
    for ip in [
        gcr(),
        mr(QUDA_ADDITIVE_SCHWARZ),
        mr(QUDA_MULTIPLICATIVE_SCHWARZ),
        bicgstab_l(1),
        bicgstab_l(4),
    ] {
        let x = solve(ip);
        let d: f64 = x.iter().zip(&want).map(|(a, b)| (a - b).powi(2)).sum();
        let n: f64 = want.iter().map(|b| b * b).sum();
        assert!((d / n).sqrt() <= bound, "{:e}", (d / n).sqrt());
    }

    let mut ip = wilson_param();
    ip.inv_type = QUDA_PCG_INVERTER;
    ip.inv_type_precondition = QUDA_MR_INVERTER;
    let (mut x, mut src) = (vec![7.0; HALF], b.to_vec());
    unsafe { invertQuda(x.as_mut_ptr().cast(), src.as_mut_ptr().cast(), &mut ip) };
    refused(&["invertQuda", "param->inv_type_precondition"]);
    assert!(x.iter().all(|&v| v == 7.0));
    ip.inv_type_precondition = QUDA_INVALID_INVERTER;
    unsafe { invertQuda(x.as_mut_ptr().cast(), src.as_mut_ptr().cast(), &mut ip) };
    assert_eq!(status(), LATSOL_SUCCESS, "{}", last_error());

    // MatQuda: a dagger outside the enum is refused, not taken as DAG_NO.
    let mut ip = wilson_param();
    ip.solution_type = QUDA_MAT_SOLUTION;
    ip.dagger = 5;
    let (mut out, mut inp) = (vec![7.0; 2 * HALF], psi.clone());
    unsafe { MatQuda(out.as_mut_ptr().cast(), inp.as_mut_ptr().cast(), &mut ip) };
    refused(&["MatQuda", "param->dagger = 5"]);
    assert!(out.iter().all(|&v| v == 7.0));

    // A negative κ, as QUDA takes it: M(−κ) = 1 + κD = 2 − M(κ) for the
    // Wilson operator (MatQuda both ways); the even-odd operator holds κ²
    // alone; invertQuda's solution meets M(−κ) x = b.
    let mat = |kappa: f64, solution: QudaSolutionType, v: &[f64]| -> Vec<f64> {
        let mut ip = wilson_param();
        ip.kappa = kappa;
        ip.solution_type = solution;
        let (mut inp, mut out) = (v.to_vec(), vec![0.0; v.len()]);
        unsafe { MatQuda(out.as_mut_ptr().cast(), inp.as_mut_ptr().cast(), &mut ip) };
        assert_eq!(status(), LATSOL_SUCCESS, "{}", last_error());
        out
    };
    let minus = mat(-0.12, QUDA_MAT_SOLUTION, &psi);
    let plus = mat(0.12, QUDA_MAT_SOLUTION, &psi);
    let want: Vec<f64> = psi.iter().zip(&plus).map(|(v, m)| 2.0 * v - m).collect();
    assert!(common::rel_diff_reals(&minus, &want) < 1e-14);
    assert_eq!(
        mat(-0.12, QUDA_MATPC_SOLUTION, b),
        mat(0.12, QUDA_MATPC_SOLUTION, b)
    );
    let mut ip = wilson_param();
    ip.kappa = -0.12;
    ip.solution_type = QUDA_MAT_SOLUTION;
    ip.solve_type = QUDA_DIRECT_PC_SOLVE;
    ip.inv_type = QUDA_BICGSTAB_INVERTER;
    let (mut x, mut src) = (vec![0.0; 2 * HALF], psi.clone());
    unsafe { invertQuda(x.as_mut_ptr().cast(), src.as_mut_ptr().cast(), &mut ip) };
    assert_eq!(status(), LATSOL_SUCCESS, "{}", last_error());
    let mx = mat(-0.12, QUDA_MAT_SOLUTION, &x);
    assert!(common::rel_diff_reals(&mx, &psi) < 1e-9);

    // loadCloverQuda loads the clover operators' field only.
    let mut ip = wilson_param();
    ip.clover_cpu_prec = QUDA_DOUBLE_PRECISION;
    ip.clover_cuda_prec = QUDA_DOUBLE_PRECISION;
    ip.clover_order = QUDA_PACKED_CLOVER_ORDER;
    ip.clover_coeff = 0.12;
    ip.compute_clover = 1;
    unsafe { loadCloverQuda(std::ptr::null_mut(), std::ptr::null_mut(), &mut ip) };
    refused(&["loadCloverQuda", "inv_param->dslash_type"]);
    // A negative coefficient, as QUDA takes it; neither set, QUDA's error.
    ip.dslash_type = QUDA_CLOVER_WILSON_DSLASH;
    ip.clover_coeff = -0.12;
    unsafe { loadCloverQuda(std::ptr::null_mut(), std::ptr::null_mut(), &mut ip) };
    assert_eq!(status(), LATSOL_SUCCESS, "{}", last_error());
    let mut cp = wilson_param();
    cp.dslash_type = QUDA_CLOVER_WILSON_DSLASH;
    cp.solution_type = QUDA_MATPC_SOLUTION;
    cp.solve_type = QUDA_DIRECT_PC_SOLVE;
    cp.inv_type = QUDA_BICGSTAB_INVERTER;
    cp.clover_cuda_prec = QUDA_DOUBLE_PRECISION;
    let (mut x, mut src) = (vec![0.0; HALF], b.to_vec());
    unsafe { invertQuda(x.as_mut_ptr().cast(), src.as_mut_ptr().cast(), &mut cp) };
    assert_eq!(status(), LATSOL_SUCCESS, "{}", last_error());
    assert!(cp.true_res[0] <= 1e-10, "{}", cp.true_res[0]);
    ip.clover_coeff = 0.0;
    ip.clover_csw = 0.0;
    unsafe { loadCloverQuda(std::ptr::null_mut(), std::ptr::null_mut(), &mut ip) };
    refused(&["loadCloverQuda", "neither clover coefficient nor c_SW"]);

    // invertMultiSrcQuda: a NaN in source 1 fails the call with solution 0
    // and the param's outputs as they were (the normal-equation solution
    // takes the sources in turn).
    let mut ip = wilson_param();
    ip.num_src = 2;
    ip.iter = -3;
    ip.true_res[0] = -1.0;
    let mut xs = [vec![7.0; HALF], vec![7.0; HALF]];
    let mut bs = [b.to_vec(), b.to_vec()];
    bs[1][5] = f64::NAN;
    let mut xp: Vec<*mut c_void> = xs.iter_mut().map(|x| x.as_mut_ptr().cast()).collect();
    let mut bp: Vec<*mut c_void> = bs.iter_mut().map(|x| x.as_mut_ptr().cast()).collect();
    unsafe { invertMultiSrcQuda(xp.as_mut_ptr(), bp.as_mut_ptr(), &mut ip) };
    assert_ne!(status(), LATSOL_SUCCESS);
    assert!(xs.iter().flatten().all(|&v| v == 7.0));
    assert_eq!((ip.iter, ip.true_res[0]), (-3, -1.0));

    // Staggered solves check `struct_size` as the Wilson ones do.
    let mut ip = common::quda_staggered_param(
        unsafe { newQudaInvertParam() },
        QUDA_ASQTAD_DSLASH,
        0.05,
        QUDA_MATPC_SOLUTION,
        QUDA_DIRECT_PC_SOLVE,
    );
    ip.struct_size = 100;
    let (mut x, mut src) = (vec![7.0; V * 3], vec![1.0; V * 3]);
    unsafe { invertQuda(x.as_mut_ptr().cast(), src.as_mut_ptr().cast(), &mut ip) };
    refused(&["invertQuda", "param->struct_size = 100"]);
    assert!(x.iter().all(|&v| v == 7.0));

    // freeGaugeQuda frees the fat and long links too: an asqtad solve
    // after it is refused until they are loaded again.
    let stag = |name: &str| common::golden_reals("golden-staggered-6x4x4x8", name);
    for (name, kind) in [
        ("fat_qdp.f64", QUDA_ASQTAD_FAT_LINKS),
        ("long_qdp.f64", QUDA_ASQTAD_LONG_LINKS),
    ] {
        let t = QUDA_PERIODIC_T;
        common::quda_load_links(&stag(name), DIMS, kind, QUDA_QDP_GAUGE_ORDER, t, false);
        assert_eq!(status(), LATSOL_SUCCESS, "{}", last_error());
    }
    let asqtad = |x: &mut Vec<f64>| {
        let mut ip = common::quda_staggered_param(
            unsafe { newQudaInvertParam() },
            QUDA_ASQTAD_DSLASH,
            0.05,
            QUDA_MATPC_SOLUTION,
            QUDA_DIRECT_PC_SOLVE,
        );
        let mut src = stag("chi.f64")[..V * 3].to_vec();
        unsafe { invertQuda(x.as_mut_ptr().cast(), src.as_mut_ptr().cast(), &mut ip) };
    };
    let mut x = vec![0.0; V * 3];
    asqtad(&mut x);
    assert_eq!(status(), LATSOL_SUCCESS, "{}", last_error());
    // Staggered masses as QUDA takes them: m = 0 on the parity system
    // (−D_eo D_oe, positive semi-definite), m < 0 on the full one (2m − D);
    // m = 0 with the even-odd solve of the full system is refused (its
    // reconstruction divides by 2m).
    for (mass, solution, ok) in [
        (0.0, QUDA_MATPC_SOLUTION, true),
        (-0.05, QUDA_MAT_SOLUTION, true),
        (0.0, QUDA_MAT_SOLUTION, false),
    ] {
        let mut ip = common::quda_staggered_param(
            unsafe { newQudaInvertParam() },
            QUDA_ASQTAD_DSLASH,
            mass,
            solution,
            QUDA_DIRECT_PC_SOLVE,
        );
        ip.tol = 1e-9;
        let n = if solution == QUDA_MAT_SOLUTION {
            V * 6
        } else {
            V * 3
        };
        let mut src = stag("chi.f64")[..n].to_vec();
        let mut x = vec![0.0; n];
        unsafe { invertQuda(x.as_mut_ptr().cast(), src.as_mut_ptr().cast(), &mut ip) };
        if ok {
            assert_eq!(status(), LATSOL_SUCCESS, "m = {mass}: {}", last_error());
            assert!(ip.true_res[0] <= 1e-9, "m = {mass}: {}", ip.true_res[0]);
        } else {
            refused(&["invertQuda", "mass = 0"]);
            assert!(x.iter().all(|&v| v == 0.0));
        }
    }
    unsafe { freeGaugeQuda() };
    let mut x = vec![7.0; V * 3];
    asqtad(&mut x);
    refused(&["invertQuda"]);
    assert!(x.iter().all(|&v| v == 7.0));
    unsafe { endQuda() };

    // MILC's qudaInit: a second call while started changes nothing (here
    // a layout it could not take), as QUDA's ignores it.
    let mut latsize = DIMS;
    let mut machsize = [1i32; 4];
    let machsize = machsize.as_mut_ptr();
    let init = |latsize: *mut i32| QudaInitArgs_t {
        verbosity: QUDA_SILENT,
        layout: QudaLayout_t {
            latsize,
            machsize,
            device: 0,
        },
    };
    unsafe { qudaInit(init(latsize.as_mut_ptr())) };
    assert_eq!(status(), LATSOL_SUCCESS, "{}", last_error());
    unsafe { qudaInit(init(std::ptr::null_mut())) };
    assert_eq!(status(), LATSOL_SUCCESS, "{}", last_error());
    unsafe { qudaFinalize() };
    // After qudaFinalize it starts the interface again (and checks).
    unsafe { qudaInit(init(std::ptr::null_mut())) };
    assert_eq!(status(), LATSOL_ERROR_NULL_POINTER);
    assert!(last_error().contains("layout.latsize"), "{}", last_error());
}
