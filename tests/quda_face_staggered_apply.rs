//! The staggered operators applied through `quda.h` (issue 39): `MatQuda`,
//! `MatDagMatQuda` and `dslashQuda` with `dslash_type` ASQTAD and
//! STAGGERED, checked against the golden staggered set (QUDA 9521952's
//! host reference: `D χ`, `M χ`, `M† χ`, `M̂ χ` on either parity) and
//! with QUDA's normalizations (lib/interface_quda.cpp: after `MatQuda` the
//! MASS normalizations rescale by 1/(2κ), or 1/(4κ²) for MATPC, also for
//! staggered; `dslashQuda` scales its input by 1/(2m) with KAPPA). A
//! MATPC `MatDagMatQuda` is refused, as QUDA refuses it.

mod common;

use std::os::raw::c_void;

use latsol::ffi::quda::abi::*;
use latsol::ffi::{LATSOL_ERROR_INVALID_ARGUMENT, LATSOL_SUCCESS};

extern "C" {
    fn initQuda(device: i32);
    fn endQuda();
    fn newQudaInvertParam() -> QudaInvertParam;
    fn MatQuda(h_out: *mut c_void, h_in: *mut c_void, param: *mut QudaInvertParam);
    fn MatDagMatQuda(h_out: *mut c_void, h_in: *mut c_void, param: *mut QudaInvertParam);
    fn dslashQuda(
        h_out: *mut c_void,
        h_in: *mut c_void,
        param: *mut QudaInvertParam,
        parity: QudaParity,
    );
    fn latsol_quda_last_status() -> i32;
}

const DIMS: [i32; 4] = [6, 4, 4, 8];
const V: usize = 6 * 4 * 4 * 8;
const MASS: f64 = 0.05;
/// Double arithmetic summed in another order than QUDA's host code: each
/// output number is a sum of 16 hops of 3 products, so a few roundings of
/// the largest terms (|D χ| ≈ 4 |χ|): 1e-13 relative leaves a margin of
/// about 100.
const TOL: f64 = 1e-13;

fn golden(name: &str) -> Vec<f64> {
    common::golden_reals("golden-staggered-6x4x4x8", name)
}

fn param(dslash: QudaDslashType, solution: QudaSolutionType) -> QudaInvertParam {
    let mut ip = common::quda_staggered_param(
        unsafe { newQudaInvertParam() },
        dslash,
        MASS,
        solution,
        QUDA_DIRECT_PC_SOLVE,
    );
    ip.mass_normalization = QUDA_KAPPA_NORMALIZATION;
    ip.kappa = 0.25;
    ip
}

type Apply = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut QudaInvertParam);

fn apply(f: Apply, ip: &mut QudaInvertParam, input: &[f64]) -> Vec<f64> {
    let mut inp = input.to_vec();
    let mut out = vec![0.0; input.len()];
    unsafe { f(out.as_mut_ptr().cast(), inp.as_mut_ptr().cast(), ip) };
    assert_eq!(unsafe { latsol_quda_last_status() }, LATSOL_SUCCESS);
    out
}

fn dslash(ip: &mut QudaInvertParam, input: &[f64], parity: QudaParity) -> Vec<f64> {
    let mut inp = input.to_vec();
    let mut out = vec![0.0; input.len()];
    unsafe { dslashQuda(out.as_mut_ptr().cast(), inp.as_mut_ptr().cast(), ip, parity) };
    assert_eq!(unsafe { latsol_quda_last_status() }, LATSOL_SUCCESS);
    out
}

fn close(got: &[f64], want: &[f64], what: &str) {
    let d = common::rel_diff_reals(got, want);
    assert!(d < TOL, "{what}: {d:e}");
}

fn scaled(v: &[f64], f: f64) -> Vec<f64> {
    v.iter().map(|x| x * f).collect()
}

/// One test: the interface has one implicit context for the process.
#[test]
fn staggered_operators_are_qudas() {
    // SAFETY: set before this binary's first call into the library.
    unsafe { std::env::set_var("LATSOL_QUDA_ON_ERROR", "return") };
    let chi = golden("chi.f64");
    let half = V * 3;
    let (even, odd) = (&chi[..half], &chi[half..]);
    unsafe { initQuda(0) };
    for (dslash_type, prefix) in [(QUDA_ASQTAD_DSLASH, ""), (QUDA_STAGGERED_DSLASH, "naive_")] {
        if dslash_type == QUDA_ASQTAD_DSLASH {
            common::quda_load_links(
                &golden("fat_qdp.f64"),
                DIMS,
                QUDA_ASQTAD_FAT_LINKS,
                QUDA_QDP_GAUGE_ORDER,
                QUDA_PERIODIC_T,
                false,
            );
            common::quda_load_links(
                &golden("long_qdp.f64"),
                DIMS,
                QUDA_ASQTAD_LONG_LINKS,
                QUDA_QDP_GAUGE_ORDER,
                QUDA_PERIODIC_T,
                false,
            );
        } else {
            common::quda_load_links(
                &golden("thin_qdp.f64"),
                DIMS,
                QUDA_WILSON_LINKS,
                QUDA_QDP_GAUGE_ORDER,
                QUDA_PERIODIC_T,
                false,
            );
        }
        assert_eq!(unsafe { latsol_quda_last_status() }, LATSOL_SUCCESS);
        let g = |name: &str| golden(&format!("{prefix}{name}"));
        let (m_chi, mdag_chi, d_chi) = (g("M_chi.f64"), g("Mdag_chi.f64"), g("D_chi.f64"));

        // MatQuda, MAT: M χ, and M† χ with DAG_YES.
        let mut ip = param(dslash_type, QUDA_MAT_SOLUTION);
        close(&apply(MatQuda, &mut ip, &chi), &m_chi, "M");
        ip.dagger = QUDA_DAG_YES;
        close(&apply(MatQuda, &mut ip, &chi), &mdag_chi, "M dagger");

        // MatQuda, MATPC: M̂ on either parity (the dagger changes nothing).
        let mut ip = param(dslash_type, QUDA_MATPC_SOLUTION);
        close(
            &apply(MatQuda, &mut ip, even),
            &g("Mpc_chi_even.f64"),
            "Mpc even",
        );
        ip.matpc_type = QUDA_MATPC_ODD_ODD;
        ip.dagger = QUDA_DAG_YES;
        close(
            &apply(MatQuda, &mut ip, odd),
            &g("Mpc_chi_odd.f64"),
            "Mpc odd",
        );

        // The MASS normalization: × 1/(2κ) for MAT, × 1/(4κ²) for MATPC.
        let mut ip = param(dslash_type, QUDA_MAT_SOLUTION);
        ip.mass_normalization = QUDA_MASS_NORMALIZATION;
        close(
            &apply(MatQuda, &mut ip, &chi),
            &scaled(&m_chi, 2.0),
            "M, MASS",
        );
        ip.solution_type = QUDA_MATPC_SOLUTION;
        let mpc = scaled(&g("Mpc_chi_even.f64"), 4.0);
        close(&apply(MatQuda, &mut ip, even), &mpc, "Mpc, MASS");

        // MatDagMatQuda, MAT: M†M χ = M† (M χ).
        let mut ip = param(dslash_type, QUDA_MAT_SOLUTION);
        let mut dag = param(dslash_type, QUDA_MAT_SOLUTION);
        dag.dagger = QUDA_DAG_YES;
        let want = apply(MatQuda, &mut dag, &m_chi);
        close(&apply(MatDagMatQuda, &mut ip, &chi), &want, "M dagger M");
        // × 1/(4κ²) with either MASS normalization.
        for normalization in [QUDA_MASS_NORMALIZATION, QUDA_ASYMMETRIC_MASS_NORMALIZATION] {
            ip.mass_normalization = normalization;
            let got = apply(MatDagMatQuda, &mut ip, &chi);
            close(&got, &scaled(&want, 4.0), "M dagger M, MASS");
        }
        // MATPC: refused, as QUDA refuses it.
        let mut ip = param(dslash_type, QUDA_MATPC_SOLUTION);
        let mut out = vec![0.0; half];
        let mut inp = even.to_vec();
        unsafe { MatDagMatQuda(out.as_mut_ptr().cast(), inp.as_mut_ptr().cast(), &mut ip) };
        assert_eq!(
            unsafe { latsol_quda_last_status() },
            LATSOL_ERROR_INVALID_ARGUMENT
        );

        // dslashQuda: D from the other parity, its input × 1/(2m) with
        // KAPPA, as is with MASS; −D with DAG_YES.
        let mut ip = param(dslash_type, QUDA_MATPC_SOLUTION);
        ip.mass_normalization = QUDA_MASS_NORMALIZATION;
        close(
            &dslash(&mut ip, odd, QUDA_EVEN_PARITY),
            &d_chi[..half],
            "D even",
        );
        close(
            &dslash(&mut ip, even, QUDA_ODD_PARITY),
            &d_chi[half..],
            "D odd",
        );
        ip.dagger = QUDA_DAG_YES;
        let minus = scaled(&d_chi[..half], -1.0);
        close(&dslash(&mut ip, odd, QUDA_EVEN_PARITY), &minus, "D dagger");
        let mut ip = param(dslash_type, QUDA_MATPC_SOLUTION);
        let kappa_scaled = scaled(&d_chi[..half], 0.5 / MASS);
        close(
            &dslash(&mut ip, odd, QUDA_EVEN_PARITY),
            &kappa_scaled,
            "D, KAPPA",
        );
    }
    unsafe { endQuda() };
}
