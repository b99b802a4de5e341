//! The improved staggered operator through `quda.h`: fat and long links
//! loaded by `loadGaugeQuda` with `type` ASQTAD_FAT_LINKS and
//! ASQTAD_LONG_LINKS (kept as the caller gave them and converted at the
//! first solve), then `invertQuda` with `dslash_type` ASQTAD. Checked against
//! the golden staggered set (QUDA's host reference): the MAT solution of
//! `M x = M χ` is χ, for the links in QDP, MILC and CPS_WILSON order, in
//! double and in single, and with the fat and long fields in different
//! orders; a fat field with a NaN is refused at the load, naming the link.
//! `LATSOL_QUDA_ON_ERROR=return`, so that the refusal can be read back.

mod common;

use std::ffi::CStr;
use std::os::raw::c_void;

use latsol::ffi::quda::abi::*;
use latsol::ffi::{latsol_last_error, LATSOL_ERROR_INVALID_ARGUMENT, LATSOL_SUCCESS};

extern "C" {
    fn initQuda(device: i32);
    fn endQuda();
    fn newQudaInvertParam() -> QudaInvertParam;
    fn invertQuda(h_x: *mut c_void, h_b: *mut c_void, param: *mut QudaInvertParam);
    fn latsol_quda_last_status() -> i32;
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

/// `loadGaugeQuda` of one staggered field, given in `order` and host
/// precision `single` or double.
fn load(links: &[f64], kind: QudaLinkType, order: QudaGaugeFieldOrder, single: bool) {
    common::quda_load_links(links, DIMS, kind, order, QUDA_PERIODIC_T, single);
}

/// The MAT solution of `M x = M χ` (double host vectors).
fn solve(m_chi: &[f64]) -> Vec<f64> {
    solve_with(m_chi, |_| {}).unwrap()
}

/// The MAT solution of `M x = M χ` with `set` applied to the parameters,
/// or the error message of a refusal.
fn solve_with(m_chi: &[f64], set: impl Fn(&mut QudaInvertParam)) -> Result<Vec<f64>, String> {
    let mut ip = common::quda_staggered_param(
        unsafe { newQudaInvertParam() },
        QUDA_ASQTAD_DSLASH,
        MASS,
        QUDA_MAT_SOLUTION,
        QUDA_DIRECT_PC_SOLVE,
    );
    set(&mut ip);
    let mut b = m_chi.to_vec();
    let mut x = vec![0.0; V * 6];
    unsafe { invertQuda(x.as_mut_ptr().cast(), b.as_mut_ptr().cast(), &mut ip) };
    if unsafe { latsol_quda_last_status() } == LATSOL_SUCCESS {
        Ok(x)
    } else {
        Err(unsafe { CStr::from_ptr(latsol_last_error()) }
            .to_string_lossy()
            .into_owned())
    }
}

/// One test: the interface has one implicit context for the process.
#[test]
fn asqtad_links_in_every_order_and_precision_solve_the_golden_system() {
    // SAFETY: set before this binary's first call into the library.
    unsafe { std::env::set_var("LATSOL_QUDA_ON_ERROR", "return") };
    let (fat, long) = (golden("fat_qdp.f64"), golden("long_qdp.f64"));
    let (chi, m_chi) = (golden("chi.f64"), golden("M_chi.f64"));
    // ‖x − χ‖/‖χ‖ ≤ κ · tol with κ(M = 2m − D) ≤ (2m + ‖D‖)/2m, ‖D‖ ≤ 8
    // fat hops of entries in [−1, 1] (norm ≤ 3 each) and 8 long hops of
    // norm 1/24: ‖D‖ ≤ 25.
    let bound = 1e-12 * (2.0 * MASS + 25.0) / (2.0 * MASS);
    // Single host links: each number rounded once (relative 2^−24), so the
    // operator moves by about that much and χ by κ times it.
    let bound_single = bound + (2.0 * MASS + 25.0) / (2.0 * MASS) * 6e-8 * 4.0;
    unsafe { initQuda(0) };
    let mut reference = None;
    for order in [
        QUDA_QDP_GAUGE_ORDER,
        QUDA_MILC_GAUGE_ORDER,
        QUDA_CPS_WILSON_GAUGE_ORDER,
    ] {
        load(&fat, QUDA_ASQTAD_FAT_LINKS, order, false);
        load(&long, QUDA_ASQTAD_LONG_LINKS, order, false);
        assert_eq!(unsafe { latsol_quda_last_status() }, LATSOL_SUCCESS);
        let x = solve(&m_chi);
        assert!(
            rel_diff(&x, &chi) < bound,
            "order {order}: {:e}",
            rel_diff(&x, &chi)
        );
        // The same links in another order: the same operator, the same
        // solve, number for number.
        match &reference {
            None => reference = Some(x),
            Some(r) => assert_eq!(&x, r, "order {order}"),
        }
    }
    // Fat links in MILC order, long links in QDP order.
    load(&fat, QUDA_ASQTAD_FAT_LINKS, QUDA_MILC_GAUGE_ORDER, false);
    load(&long, QUDA_ASQTAD_LONG_LINKS, QUDA_QDP_GAUGE_ORDER, false);
    let x = solve(&m_chi);
    assert_eq!(Some(&x), reference.as_ref(), "mixed orders");
    // Single host links.
    load(&fat, QUDA_ASQTAD_FAT_LINKS, QUDA_MILC_GAUGE_ORDER, true);
    load(&long, QUDA_ASQTAD_LONG_LINKS, QUDA_MILC_GAUGE_ORDER, true);
    let x = solve(&m_chi);
    let err = rel_diff(&x, &chi);
    assert!(err < bound_single, "single links: {err:e}");
    // BiCGstab and BiCGstab(l) (l from gcrNkrylov) on the even-odd system
    // and on M itself (DIRECT), double and mixed single: the same solution
    // to the same bound (single sloppy: the same tolerance, met by
    // reliable updates). GCR is refused by name, and BICGSTABL without l.
    load(&fat, QUDA_ASQTAD_FAT_LINKS, QUDA_MILC_GAUGE_ORDER, false);
    load(&long, QUDA_ASQTAD_LONG_LINKS, QUDA_MILC_GAUGE_ORDER, false);
    for (inv, l) in [
        (QUDA_BICGSTAB_INVERTER, 0),
        (QUDA_BICGSTABL_INVERTER, 1),
        (QUDA_BICGSTABL_INVERTER, 4),
    ] {
        for solve_type in [QUDA_DIRECT_PC_SOLVE, QUDA_DIRECT_SOLVE] {
            for sloppy in [QUDA_DOUBLE_PRECISION, QUDA_SINGLE_PRECISION] {
                let what = format!("inv_type {inv} l {l} solve_type {solve_type} sloppy {sloppy}");
                let x = solve_with(&m_chi, |ip| {
                    ip.inv_type = inv;
                    ip.gcrNkrylov = if l > 0 { l } else { QUDA_INVALID_ENUM };
                    ip.solve_type = solve_type;
                    ip.cuda_prec_sloppy = sloppy;
                })
                .unwrap_or_else(|e| panic!("{what}: {e}"));
                let err = rel_diff(&x, &chi);
                assert!(err < bound, "{what}: {err:e}");
            }
        }
    }
    for (inv, l, needle) in [
        (QUDA_GCR_INVERTER, 8, "Gcr"),
        (QUDA_BICGSTABL_INVERTER, QUDA_INVALID_ENUM, "gcrNkrylov"),
        (QUDA_BICGSTABL_INVERTER, 0, "gcrNkrylov"),
    ] {
        let e = solve_with(&m_chi, |ip| {
            ip.inv_type = inv;
            ip.gcrNkrylov = l;
        })
        .expect_err("refused");
        assert!(e.contains(needle), "inv_type {inv} gcrNkrylov {l}: {e}");
    }
    // A NaN in the fat links: refused at the load, naming the link.
    let mut bad = fat.clone();
    bad[5 * 18 + 3] = f64::NAN;
    load(&bad, QUDA_ASQTAD_FAT_LINKS, QUDA_MILC_GAUGE_ORDER, false);
    assert_eq!(
        unsafe { latsol_quda_last_status() },
        LATSOL_ERROR_INVALID_ARGUMENT
    );
    let message = unsafe { CStr::from_ptr(latsol_last_error()) }
        .to_string_lossy()
        .into_owned();
    assert!(
        message.contains("loadGaugeQuda") && message.contains("not finite"),
        "{message}"
    );
    unsafe { endQuda() };
}
