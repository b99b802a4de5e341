//! MILC's frees through `quda_milc_interface.h` (issue 39): MILC calls
//! `qudaFreeTwoLink` at every new gauge field and `qudaFreeGaugeField`
//! when it is done with one. `qudaFreeGaugeField` is `freeGaugeQuda` (a
//! solve after it needs a new field); latsol makes no two-link field
//! (`computeTwoLinkQuda` is not provided), so `qudaFreeTwoLink` succeeds
//! with nothing to free and leaves the loaded field as it was.

mod common;

use std::os::raw::c_void;

use latsol::ffi::quda::abi::*;
use latsol::ffi::{LATSOL_ERROR_INVALID_ARGUMENT, LATSOL_SUCCESS};

extern "C" {
    fn initQuda(device: i32);
    fn endQuda();
    fn newQudaInvertParam() -> QudaInvertParam;
    fn MatQuda(h_out: *mut c_void, h_in: *mut c_void, param: *mut QudaInvertParam);
    fn qudaFreeTwoLink();
    fn qudaFreeGaugeField();
    fn freeGaugeTwoLinkQuda();
    fn latsol_quda_last_status() -> i32;
}

const DIMS: [i32; 4] = [6, 4, 4, 8];

fn golden(name: &str) -> Vec<f64> {
    common::golden_reals("golden-staggered-6x4x4x8", name)
}

/// `M χ` through `MatQuda` (the naive operator on the loaded thin links),
/// and the call's status.
fn m_chi(chi: &[f64]) -> (Vec<f64>, i32) {
    let mut ip = common::quda_staggered_param(
        unsafe { newQudaInvertParam() },
        QUDA_STAGGERED_DSLASH,
        0.05,
        QUDA_MAT_SOLUTION,
        QUDA_DIRECT_PC_SOLVE,
    );
    ip.mass_normalization = QUDA_KAPPA_NORMALIZATION;
    let mut inp = chi.to_vec();
    let mut out = vec![0.0; chi.len()];
    unsafe { MatQuda(out.as_mut_ptr().cast(), inp.as_mut_ptr().cast(), &mut ip) };
    (out, unsafe { latsol_quda_last_status() })
}

#[test]
fn frees_as_milc_calls_them() {
    // SAFETY: set before this binary's first call into the library.
    unsafe { std::env::set_var("LATSOL_QUDA_ON_ERROR", "return") };
    let chi = golden("chi.f64");
    unsafe { initQuda(0) };
    common::quda_load_links(
        &golden("thin_qdp.f64"),
        DIMS,
        QUDA_WILSON_LINKS,
        QUDA_QDP_GAUGE_ORDER,
        QUDA_PERIODIC_T,
        false,
    );
    let (before, status) = m_chi(&chi);
    assert_eq!(status, LATSOL_SUCCESS);
    // Nothing to free: the loaded field stays.
    unsafe { qudaFreeTwoLink() };
    assert_eq!(unsafe { latsol_quda_last_status() }, LATSOL_SUCCESS);
    unsafe { freeGaugeTwoLinkQuda() };
    assert_eq!(unsafe { latsol_quda_last_status() }, LATSOL_SUCCESS);
    let (after, status) = m_chi(&chi);
    assert_eq!(status, LATSOL_SUCCESS);
    assert_eq!(before, after);
    assert!(common::rel_diff_reals(&after, &golden("naive_M_chi.f64")) < 1e-13);
    // The gauge field freed: the operator has no links any more.
    unsafe { qudaFreeGaugeField() };
    assert_eq!(unsafe { latsol_quda_last_status() }, LATSOL_SUCCESS);
    let (_, status) = m_chi(&chi);
    assert_eq!(status, LATSOL_ERROR_INVALID_ARGUMENT);
    unsafe { endQuda() };
}
