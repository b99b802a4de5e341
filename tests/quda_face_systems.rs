//! `invertQuda`'s systems through the QUDA face, which hands the caller's
//! arrays to the backend as they are (`Context::invert_form`): each
//! solution type (MAT, MATPC on either parity, symmetric and asymmetric),
//! `dagger`, each `mass_normalization` (its source factor), double and
//! single host vectors, an initial guess, and a solution array that is
//! also the source. Every answer is checked by `MatQuda` with the same
//! parameters (the caller's operator, tested against the golden data in
//! `quda_api_examples`): `|b − M x| / |b|` within the requested
//! tolerance, up to the rounding of the host vectors.

mod common;

use std::os::raw::c_void;

use latsol::ffi::quda::abi::*;

extern "C" {
    fn initQuda(device: i32);
    fn endQuda();
    fn newQudaGaugeParam() -> QudaGaugeParam;
    fn newQudaInvertParam() -> QudaInvertParam;
    fn loadGaugeQuda(h_gauge: *mut c_void, param: *mut QudaGaugeParam);
    fn loadCloverQuda(h_clover: *mut c_void, h_clovinv: *mut c_void, param: *mut QudaInvertParam);
    fn invertQuda(h_x: *mut c_void, h_b: *mut c_void, param: *mut QudaInvertParam);
    fn MatQuda(h_out: *mut c_void, h_in: *mut c_void, param: *mut QudaInvertParam);
    fn MatDagMatQuda(h_out: *mut c_void, h_in: *mut c_void, param: *mut QudaInvertParam);
    fn invertMultiSrcQuda(
        hp_x: *mut *mut c_void,
        hp_b: *mut *mut c_void,
        param: *mut QudaInvertParam,
    );
    fn latsol_quda_last_status() -> i32;
}

const DIMS: [usize; 4] = [6, 4, 4, 8];
const V: usize = 6 * 4 * 4 * 8;
const KAPPA: f64 = 0.12;
const TOL: f64 = 1e-10;

fn golden(name: &str) -> Vec<f64> {
    common::golden_reals("golden-clover-6x4x4x8", name)
}

fn rel_diff(a: &[f64], b: &[f64]) -> f64 {
    common::rel_diff_reals(a, b)
}

/// The golden links with the anti-periodic sign folded in, as QUDA's
/// callers pass them, loaded with reconstruct 12 (so the SU(3) check runs
/// on the links without the sign).
fn load_links() {
    let mut links = golden("gauge_qdp.f64");
    let vh = V / 2;
    for i in 0..V {
        let t = 2 * (i % vh) / (DIMS[0] * DIMS[1] * DIMS[2]);
        if t == DIMS[3] - 1 {
            links[(3 * V + i) * 18..(3 * V + i + 1) * 18]
                .iter_mut()
                .for_each(|x| *x = -*x);
        }
    }
    let mut gp = unsafe { newQudaGaugeParam() };
    gp.X = DIMS.map(|d| d as i32);
    gp.anisotropy = 1.0;
    gp.r#type = QUDA_WILSON_LINKS;
    gp.gauge_order = QUDA_QDP_GAUGE_ORDER;
    gp.t_boundary = QUDA_ANTI_PERIODIC_T;
    gp.cpu_prec = QUDA_DOUBLE_PRECISION;
    gp.cuda_prec = QUDA_DOUBLE_PRECISION;
    gp.cuda_prec_sloppy = QUDA_DOUBLE_PRECISION;
    gp.reconstruct = QUDA_RECONSTRUCT_12;
    gp.reconstruct_sloppy = QUDA_RECONSTRUCT_12;
    gp.gauge_fix = QUDA_GAUGE_FIXED_NO;
    let mut parts: Vec<*mut c_void> = links
        .chunks_mut(V * 18)
        .map(|c| c.as_mut_ptr() as *mut c_void)
        .collect();
    unsafe { loadGaugeQuda(parts.as_mut_ptr() as *mut c_void, &mut gp) };
    assert_eq!(unsafe { latsol_quda_last_status() }, 0, "loadGaugeQuda");
}

/// A case: the operator, the system and the caller's vectors.
#[derive(Clone, Copy, Debug)]
struct Case {
    clover: bool,
    solution: QudaSolutionType,
    matpc: QudaMatPCType,
    dagger: QudaDagType,
    normalization: QudaMassNormalization,
    single_host: bool,
}

fn param(c: &Case) -> QudaInvertParam {
    let mut ip = unsafe { newQudaInvertParam() };
    ip.dslash_type = if c.clover {
        QUDA_CLOVER_WILSON_DSLASH
    } else {
        QUDA_WILSON_DSLASH
    };
    ip.kappa = KAPPA;
    ip.clover_coeff = 0.0;
    ip.mass_normalization = c.normalization;
    ip.dagger = c.dagger;
    ip.cpu_prec = if c.single_host {
        QUDA_SINGLE_PRECISION
    } else {
        QUDA_DOUBLE_PRECISION
    };
    ip.cuda_prec = QUDA_DOUBLE_PRECISION;
    ip.cuda_prec_sloppy = QUDA_DOUBLE_PRECISION;
    ip.clover_cpu_prec = QUDA_DOUBLE_PRECISION;
    ip.clover_cuda_prec = QUDA_DOUBLE_PRECISION;
    ip.clover_cuda_prec_sloppy = QUDA_DOUBLE_PRECISION;
    ip.clover_order = QUDA_PACKED_CLOVER_ORDER;
    ip.dirac_order = QUDA_DIRAC_ORDER;
    ip.gamma_basis = QUDA_DEGRAND_ROSSI_GAMMA_BASIS;
    ip.solution_type = c.solution;
    ip.solve_type = QUDA_DIRECT_PC_SOLVE;
    ip.matpc_type = c.matpc;
    ip.inv_type = QUDA_BICGSTAB_INVERTER;
    ip.tol = TOL;
    ip.maxiter = 2000;
    ip.reliable_delta = 0.1;
    ip
}

/// Host vectors in the case's precision, as raw pointers.
enum Host {
    F64(Vec<f64>),
    F32(Vec<f32>),
}

impl Host {
    fn of(v: &[f64], single: bool) -> Host {
        if single {
            Host::F32(v.iter().map(|&x| x as f32).collect())
        } else {
            Host::F64(v.to_vec())
        }
    }
    fn ptr(&mut self) -> *mut c_void {
        match self {
            Host::F64(v) => v.as_mut_ptr() as *mut c_void,
            Host::F32(v) => v.as_mut_ptr() as *mut c_void,
        }
    }
    fn to_f64(&self) -> Vec<f64> {
        match self {
            Host::F64(v) => v.clone(),
            Host::F32(v) => v.iter().map(|&x| x as f64).collect(),
        }
    }
}

/// `|b − M x| / |b|` of the caller's operator, through `MatQuda` (in
/// double, whatever the case's host precision).
fn residual(c: &Case, x: &[f64], b: &[f64]) -> f64 {
    let mut ip = param(&Case {
        single_host: false,
        ..*c
    });
    let (mut xin, mut out) = (x.to_vec(), vec![0.0; x.len()]);
    unsafe {
        MatQuda(
            out.as_mut_ptr() as *mut c_void,
            xin.as_mut_ptr() as *mut c_void,
            &mut ip,
        )
    };
    assert_eq!(unsafe { latsol_quda_last_status() }, 0, "MatQuda {c:?}");
    rel_diff(&out, b)
}

#[test]
fn every_solution_type_solves_the_callers_system() {
    std::env::set_var("LATSOL_QUDA_ON_ERROR", "return");
    unsafe { initQuda(0) };
    load_links();
    let mut clover = golden("clover_packed.f64");
    let mut cp = param(&Case {
        clover: true,
        solution: QUDA_MAT_SOLUTION,
        matpc: QUDA_MATPC_EVEN_EVEN,
        dagger: QUDA_DAG_NO,
        normalization: QUDA_KAPPA_NORMALIZATION,
        single_host: false,
    });
    unsafe {
        loadCloverQuda(
            clover.as_mut_ptr() as *mut c_void,
            std::ptr::null_mut(),
            &mut cp,
        )
    };
    assert_eq!(unsafe { latsol_quda_last_status() }, 0, "loadCloverQuda");
    let psi = golden("psi_dirac.f64");

    let mut cases = Vec::new();
    for clover in [false, true] {
        for (solution, matpc) in [
            (QUDA_MAT_SOLUTION, QUDA_MATPC_EVEN_EVEN),
            (QUDA_MATPC_SOLUTION, QUDA_MATPC_EVEN_EVEN),
            (QUDA_MATPC_SOLUTION, QUDA_MATPC_ODD_ODD),
            (QUDA_MATPC_SOLUTION, QUDA_MATPC_ODD_ODD_ASYMMETRIC),
        ] {
            // The Wilson operator has the symmetric forms only (as QUDA).
            if !clover && matpc == QUDA_MATPC_ODD_ODD_ASYMMETRIC {
                continue;
            }
            for dagger in [QUDA_DAG_NO, QUDA_DAG_YES] {
                // The symmetric clover MatPC adjoint is refused (below).
                let symmetric = matches!(matpc, QUDA_MATPC_EVEN_EVEN | QUDA_MATPC_ODD_ODD);
                if clover && solution == QUDA_MATPC_SOLUTION && symmetric && dagger == QUDA_DAG_YES
                {
                    continue;
                }
                for normalization in [
                    QUDA_KAPPA_NORMALIZATION,
                    QUDA_MASS_NORMALIZATION,
                    QUDA_ASYMMETRIC_MASS_NORMALIZATION,
                ] {
                    cases.push(Case {
                        clover,
                        solution,
                        matpc,
                        dagger,
                        normalization,
                        single_host: false,
                    });
                }
            }
        }
    }
    // Single-precision host vectors, a few.
    for k in [0, 5, 9] {
        cases.push(Case {
            single_host: true,
            ..cases[k]
        });
    }

    for c in &cases {
        let n = if c.solution == QUDA_MAT_SOLUTION {
            V * 24
        } else {
            V * 12
        };
        let b = &psi[..n];
        let mut bh = Host::of(b, c.single_host);
        let mut xh = Host::of(&vec![0.0; n], c.single_host);
        let mut ip = param(c);
        unsafe { invertQuda(xh.ptr(), bh.ptr(), &mut ip) };
        assert_eq!(unsafe { latsol_quda_last_status() }, 0, "invertQuda {c:?}");
        // Single host vectors: the source and the solution are rounded to
        // f32 (2^-24 relative), amplified by the condition number of this
        // well-conditioned system (κ = 0.12, < 10).
        let bound = if c.single_host { 1e-6 } else { 2.0 * TOL };
        let x = xh.to_f64();
        let r = residual(c, &x, &bh.to_f64());
        assert!(r <= bound, "{c:?}: |b - M x|/|b| = {r:.2e} > {bound:.0e}");
        assert!(ip.true_res[0] <= TOL, "{c:?}: true_res {}", ip.true_res[0]);

        // The answer as the initial guess: the solve has nothing left to do.
        if !c.single_host {
            ip.use_init_guess = QUDA_USE_INIT_GUESS_YES;
            unsafe { invertQuda(xh.ptr(), bh.ptr(), &mut ip) };
            assert_eq!(unsafe { latsol_quda_last_status() }, 0, "guess {c:?}");
            assert!(
                ip.iter <= 1,
                "{c:?}: {} iterations from the answer",
                ip.iter
            );
            let r = residual(c, &xh.to_f64(), b);
            assert!(r <= bound, "{c:?} from the guess: {r:.2e}");
        }
    }

    // The solution array is also the source: read before it is written.
    let c = cases[3];
    let n = if c.solution == QUDA_MAT_SOLUTION {
        V * 24
    } else {
        V * 12
    };
    let mut inplace = psi[..n].to_vec();
    let mut ip = param(&c);
    let p = inplace.as_mut_ptr() as *mut c_void;
    unsafe { invertQuda(p, p, &mut ip) };
    assert_eq!(unsafe { latsol_quda_last_status() }, 0, "in place");
    let r = residual(&c, &inplace, &psi[..n]);
    assert!(r <= 2.0 * TOL, "in place: {r:.2e}");

    // The symmetric clover MatPC adjoint: refused, the solution untouched.
    let c = Case {
        clover: true,
        solution: QUDA_MATPC_SOLUTION,
        matpc: QUDA_MATPC_EVEN_EVEN,
        dagger: QUDA_DAG_YES,
        normalization: QUDA_KAPPA_NORMALIZATION,
        single_host: false,
    };
    let mut ip = param(&c);
    let (mut x, mut b) = (vec![7.0; V * 12], psi[..V * 12].to_vec());
    unsafe {
        invertQuda(
            x.as_mut_ptr() as *mut c_void,
            b.as_mut_ptr() as *mut c_void,
            &mut ip,
        )
    };
    assert_ne!(unsafe { latsol_quda_last_status() }, 0);
    assert!(x.iter().all(|&v| v == 7.0));

    // The normal-equation solutions (κ normalization: the caller's arrays
    // straight through; MASS: through host copies), checked by
    // MatDagMatQuda: `|b − M†M x| / |b|`.
    for clover in [false, true] {
        for (solution, n) in [
            (QUDA_MATDAG_MAT_SOLUTION, V * 24),
            (QUDA_MATPCDAG_MATPC_SOLUTION, V * 12),
        ] {
            for normalization in [QUDA_KAPPA_NORMALIZATION, QUDA_MASS_NORMALIZATION] {
                let c = Case {
                    clover,
                    solution,
                    matpc: QUDA_MATPC_ODD_ODD_ASYMMETRIC,
                    dagger: QUDA_DAG_NO,
                    normalization,
                    single_host: false,
                };
                let c = if clover {
                    c
                } else {
                    Case {
                        matpc: QUDA_MATPC_EVEN_EVEN,
                        ..c
                    }
                };
                let mut ip = param(&c);
                ip.inv_type = QUDA_CG_INVERTER;
                // QUDA pairs MATDAG_MAT with NORMOP, MATPCDAG_MATPC with NORMOP_PC.
                ip.solve_type = if solution == QUDA_MATDAG_MAT_SOLUTION {
                    QUDA_NORMOP_SOLVE
                } else {
                    QUDA_NORMOP_PC_SOLVE
                };
                let mut b = psi[..n].to_vec();
                let mut x = vec![0.0; n];
                unsafe {
                    invertQuda(
                        x.as_mut_ptr() as *mut c_void,
                        b.as_mut_ptr() as *mut c_void,
                        &mut ip,
                    )
                };
                assert_eq!(unsafe { latsol_quda_last_status() }, 0, "{c:?}");
                let mut out = vec![0.0; n];
                let mut check = param(&c);
                unsafe {
                    MatDagMatQuda(
                        out.as_mut_ptr() as *mut c_void,
                        x.as_mut_ptr() as *mut c_void,
                        &mut check,
                    )
                };
                assert_eq!(
                    unsafe { latsol_quda_last_status() },
                    0,
                    "MatDagMatQuda {c:?}"
                );
                let r = rel_diff(&out, &psi[..n]);
                // CG on the normal equations: the tolerance holds for them.
                assert!(r <= 2.0 * TOL, "{c:?}: |b - M†M x|/|b| = {r:.2e}");
            }
        }
    }

    // invertMultiSrcQuda: the single solves, number for number, per case.
    for k in [3, 10] {
        let c = cases[k];
        let n = if c.solution == QUDA_MAT_SOLUTION {
            V * 24
        } else {
            V * 12
        };
        let bs: Vec<Vec<f64>> = (0..3)
            .map(|j| psi.iter().skip(j * 5).cycle().take(n).copied().collect())
            .collect();
        let mut single = vec![vec![0.0; n]; 3];
        for (b, x) in bs.iter().zip(&mut single) {
            let mut ip = param(&c);
            let mut b = b.clone();
            unsafe {
                invertQuda(
                    x.as_mut_ptr() as *mut c_void,
                    b.as_mut_ptr() as *mut c_void,
                    &mut ip,
                )
            };
            assert_eq!(unsafe { latsol_quda_last_status() }, 0);
        }
        let mut bs = bs;
        let mut xs = vec![vec![0.0; n]; 3];
        let mut pb: Vec<*mut c_void> = bs
            .iter_mut()
            .map(|b| b.as_mut_ptr() as *mut c_void)
            .collect();
        let mut px: Vec<*mut c_void> = xs
            .iter_mut()
            .map(|x| x.as_mut_ptr() as *mut c_void)
            .collect();
        let mut ip = param(&c);
        ip.num_src = 3;
        unsafe { invertMultiSrcQuda(px.as_mut_ptr(), pb.as_mut_ptr(), &mut ip) };
        assert_eq!(
            unsafe { latsol_quda_last_status() },
            0,
            "invertMultiSrcQuda {c:?}"
        );
        assert_eq!(xs, single, "{c:?}");
        assert!(ip.true_res[..3].iter().all(|&r| r > 0.0 && r <= TOL));

        // latsol's block solvers (LATSOL_SOURCES_PER_BLOCK; this file's
        // only test, so no other reads the variable meanwhile): each
        // solution meets the tolerance on the caller's system.
        std::env::set_var("LATSOL_SOURCES_PER_BLOCK", "0");
        let mut xs = vec![vec![0.0; n]; 3];
        let mut px: Vec<*mut c_void> = xs
            .iter_mut()
            .map(|x| x.as_mut_ptr() as *mut c_void)
            .collect();
        let mut ip = param(&c);
        ip.num_src = 3;
        unsafe { invertMultiSrcQuda(px.as_mut_ptr(), pb.as_mut_ptr(), &mut ip) };
        std::env::remove_var("LATSOL_SOURCES_PER_BLOCK");
        assert_eq!(unsafe { latsol_quda_last_status() }, 0, "blocks {c:?}");
        for (i, (x, b)) in xs.iter().zip(&bs).enumerate() {
            assert!(ip.true_res[i] <= TOL, "blocks {c:?}: {i}");
            let r = residual(&c, x, b);
            assert!(r <= 1.01 * TOL, "blocks {c:?}: source {i}: {r:e}");
        }
    }
    unsafe { endQuda() };
}
