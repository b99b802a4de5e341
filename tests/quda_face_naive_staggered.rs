//! The naive staggered operator through `quda.h` as QUDA runs it
//! (`setDiracParam` in QUDA's lib/interface_quda.cpp: the precise gauge
//! field unless ASQTAD): links loaded with `type` WILSON_LINKS, phases and
//! the anti-periodic sign in them (QUDA's tests and MILC's naive interface
//! pass them so), then `invertQuda` with `dslash_type` STAGGERED. Checked
//! against the golden staggered set (QUDA's host reference): the MAT
//! solution of `M x = M χ` and the MATPC one of `M̂ x_e = M̂ χ_e` are χ,
//! with `t_boundary` ANTI_PERIODIC (the sign is in the links as given) and
//! PERIODIC (MILC's naive interface: "built into the gauge field"); the
//! links in MILC and CPS_WILSON order give the same solve; then a new
//! Wilson field replaces the links the next solve uses.

mod common;

use std::os::raw::c_void;

use latsol::ffi::quda::abi::*;

extern "C" {
    fn initQuda(device: i32);
    fn endQuda();
    fn newQudaInvertParam() -> QudaInvertParam;
    fn invertQuda(h_x: *mut c_void, h_b: *mut c_void, param: *mut QudaInvertParam);
}

const DIMS: [i32; 4] = [6, 4, 4, 8];
const V: usize = 6 * 4 * 4 * 8;
const MASS: f64 = 0.05;

fn golden(name: &str) -> Vec<f64> {
    common::golden_reals("golden-staggered-6x4x4x8", name)
}

fn rel_diff(a: &[f64], b: &[f64]) -> f64 {
    common::rel_diff_reals(a, b)
}

fn load_thin(thin: &[f64], t_boundary: QudaTboundary) {
    load_thin_in(thin, t_boundary, QUDA_QDP_GAUGE_ORDER);
}

/// `loadGaugeQuda` of the thin links (QDP order in `thin`) given in `order`.
fn load_thin_in(thin: &[f64], t_boundary: QudaTboundary, order: QudaGaugeFieldOrder) {
    common::quda_load_links(thin, DIMS, QUDA_WILSON_LINKS, order, t_boundary, false);
}

fn staggered_param(solution: QudaSolutionType, solve: QudaSolveType) -> QudaInvertParam {
    let ip = unsafe { newQudaInvertParam() };
    common::quda_staggered_param(ip, QUDA_STAGGERED_DSLASH, MASS, solution, solve)
}

/// `invertQuda` on a copy of `b` from a zero guess: the solution.
fn solve(ip: &mut QudaInvertParam, b: &[f64], n: usize) -> Vec<f64> {
    let mut b = b.to_vec();
    let mut x = vec![0.0; n];
    unsafe {
        invertQuda(
            x.as_mut_ptr() as *mut c_void,
            b.as_mut_ptr() as *mut c_void,
            ip,
        )
    };
    x
}

/// One test: the interface has one implicit context for the process.
#[test]
fn naive_staggered_runs_on_the_wilson_links_as_given() {
    let chi = golden("chi.f64");
    let m_chi = golden("naive_M_chi.f64");
    let mpc_chi = golden("naive_Mpc_chi_even.f64");
    // A bound from the tolerance: ‖x − χ‖/‖χ‖ ≤ κ · tol, with the
    // condition number κ of M = 2m − D at most (2m + ‖D‖)/2m and of
    // M̂ = 4m² − D_eo D_oe at most (4m² + ‖D‖²)/4m²; ‖D‖ ≤ 8 (eight hops
    // by links of norm 1: SU(3) times signs).
    let bound = |tol: f64, lo: f64, spread: f64| tol * (lo + spread) / lo;
    unsafe {
        initQuda(0);
        for t_boundary in [QUDA_ANTI_PERIODIC_T, QUDA_PERIODIC_T] {
            let thin = golden("thin_qdp.f64");
            load_thin(&thin, t_boundary);

            let mut ip = staggered_param(QUDA_MAT_SOLUTION, QUDA_DIRECT_PC_SOLVE);
            let x = solve(&mut ip, &m_chi, V * 6);
            let err = rel_diff(&x, &chi);
            assert!(ip.true_res[0] <= 1e-12, "MAT true_res {}", ip.true_res[0]);
            assert!(
                err < bound(1e-12, 2.0 * MASS, 8.0),
                "MAT {t_boundary}: {err:e}"
            );

            let mut ip = staggered_param(QUDA_MATPC_SOLUTION, QUDA_DIRECT_PC_SOLVE);
            let x = solve(&mut ip, &mpc_chi, V * 3);
            let err = rel_diff(&x, &chi[..V * 3]);
            assert!(
                err < bound(1e-12, 4.0 * MASS * MASS, 64.0),
                "MATPC {t_boundary}: {err:e}"
            );
        }

        // The same links in MILC and CPS_WILSON order: the same solve,
        // number for number.
        let thin = golden("thin_qdp.f64");
        load_thin(&thin, QUDA_PERIODIC_T);
        let mut ip = staggered_param(QUDA_MAT_SOLUTION, QUDA_DIRECT_PC_SOLVE);
        let from_qdp = solve(&mut ip, &m_chi, V * 6);
        for order in [QUDA_MILC_GAUGE_ORDER, QUDA_CPS_WILSON_GAUGE_ORDER] {
            load_thin_in(&thin, QUDA_PERIODIC_T, order);
            let mut ip = staggered_param(QUDA_MAT_SOLUTION, QUDA_DIRECT_PC_SOLVE);
            assert_eq!(solve(&mut ip, &m_chi, V * 6), from_qdp, "order {order}");
        }

        // A new Wilson field (the time links' sign flipped: another
        // operator) replaces the links the next solve uses.
        let mut thin = golden("thin_qdp.f64");
        let n = V * 18;
        thin[3 * n..].iter_mut().for_each(|x| *x = -*x);
        load_thin(&thin, QUDA_PERIODIC_T);
        let mut ip = staggered_param(QUDA_MAT_SOLUTION, QUDA_DIRECT_PC_SOLVE);
        let x = solve(&mut ip, &m_chi, V * 6);
        assert!(ip.true_res[0] <= 1e-12);
        assert!(rel_diff(&x, &chi) > 1e-3, "the old links were used");
        endQuda();
    }
}
