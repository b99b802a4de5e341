//! The QUDA interface's error policy, in-process: with
//! `LATSOL_QUDA_ON_ERROR=return` (set before any call of this test binary)
//! a failed call returns, `latsol_quda_last_status()` and
//! `latsol_last_error()` say what failed (the function, the field, its
//! value), the caller's buffers are untouched, and the next good call
//! clears the status. Nothing aborts, not even a function latsol does not
//! provide. (The default policy, exit with status 1, is tested by
//! tests/quda_api_examples.rs.)

use std::ffi::CStr;
use std::os::raw::c_void;
use std::sync::Once;

use latsol::ffi::quda::abi::*;
use latsol::ffi::{
    latsol_last_error, LATSOL_ERROR_INVALID_ARGUMENT, LATSOL_ERROR_NULL_POINTER,
    LATSOL_ERROR_UNSUPPORTED, LATSOL_SUCCESS,
};

extern "C" {
    fn initQuda(device: i32);
    fn endQuda();
    fn initCommsGridQuda(n_dim: i32, dims: *const i32, func: QudaCommsMap, fdata: *mut c_void);
    fn newQudaGaugeParam() -> QudaGaugeParam;
    fn newQudaInvertParam() -> QudaInvertParam;
    fn loadGaugeQuda(h_gauge: *mut c_void, param: *mut QudaGaugeParam);
    fn invertQuda(h_x: *mut c_void, h_b: *mut c_void, param: *mut QudaInvertParam);
    fn plaqQuda(plaq: *mut f64);
    fn eigensolveQuda(
        h_evecs: *mut *mut c_void,
        h_evals: *mut double_complex,
        param: *mut QudaEigParam,
    );
    fn latsol_quda_last_status() -> i32;
}

fn return_mode() {
    static ONCE: Once = Once::new();
    // SAFETY: set once, before this binary's first call into the library.
    ONCE.call_once(|| unsafe { std::env::set_var("LATSOL_QUDA_ON_ERROR", "return") });
}

fn last_error() -> String {
    // SAFETY: latsol_last_error returns a NUL-terminated string.
    unsafe { CStr::from_ptr(latsol_last_error()) }
        .to_string_lossy()
        .into_owned()
}

/// One test: the interface has one implicit context for the process.
#[test]
fn failed_calls_return_with_a_status_and_leave_buffers_untouched() {
    return_mode();
    unsafe {
        // Before initQuda.
        let mut plaq = [7.0f64; 3];
        plaqQuda(plaq.as_mut_ptr());
        assert_eq!(latsol_quda_last_status(), LATSOL_ERROR_INVALID_ARGUMENT);
        assert!(last_error().contains("initQuda first"), "{}", last_error());
        assert_eq!(plaq, [7.0; 3]);

        // The grid of ranks: four extents; several ranks need the `mpi`
        // build (this one is without), which the message names.
        initCommsGridQuda(3, [1, 1, 1].as_ptr(), None, std::ptr::null_mut());
        assert_eq!(latsol_quda_last_status(), LATSOL_ERROR_INVALID_ARGUMENT);
        assert!(last_error().contains("nDim = 3"), "{}", last_error());
        initCommsGridQuda(4, [1, 1, 0, 1].as_ptr(), None, std::ptr::null_mut());
        assert_eq!(latsol_quda_last_status(), LATSOL_ERROR_INVALID_ARGUMENT);
        assert!(last_error().contains("dims[2] = 0"), "{}", last_error());
        initCommsGridQuda(4, [1, 1, 2, 1].as_ptr(), None, std::ptr::null_mut());
        assert_eq!(latsol_quda_last_status(), LATSOL_ERROR_UNSUPPORTED);
        assert!(last_error().contains("--features mpi"), "{}", last_error());
        initCommsGridQuda(4, [1, 1, 1, 1].as_ptr(), None, std::ptr::null_mut());
        assert_eq!(latsol_quda_last_status(), LATSOL_SUCCESS);

        initQuda(0);
        assert_eq!(latsol_quda_last_status(), LATSOL_SUCCESS);

        // Null pointers.
        loadGaugeQuda(std::ptr::null_mut(), std::ptr::null_mut());
        assert_eq!(latsol_quda_last_status(), LATSOL_ERROR_NULL_POINTER);
        assert!(
            last_error().starts_with("loadGaugeQuda"),
            "{}",
            last_error()
        );

        // An invalid enum value is named with its field.
        let mut links = vec![0.0f64; 4 * 4 * 4 * 4 * 4 * 18];
        let mut gp = newQudaGaugeParam();
        gp.X = [4, 4, 4, 4];
        gp.anisotropy = 1.0;
        gp.r#type = QUDA_WILSON_LINKS;
        gp.gauge_order = QUDA_MILC_GAUGE_ORDER;
        gp.t_boundary = QUDA_PERIODIC_T;
        gp.cpu_prec = QUDA_DOUBLE_PRECISION;
        gp.cuda_prec = 3; // not a precision
        gp.reconstruct = QUDA_RECONSTRUCT_NO;
        gp.gauge_fix = QUDA_GAUGE_FIXED_NO;
        loadGaugeQuda(links.as_mut_ptr() as *mut c_void, &mut gp);
        assert_eq!(latsol_quda_last_status(), LATSOL_ERROR_INVALID_ARGUMENT);
        assert!(
            last_error().contains("param->cuda_prec = 3"),
            "{}",
            last_error()
        );
        gp.cuda_prec = QUDA_DOUBLE_PRECISION;
        // A struct of another size (headers of another QUDA version).
        gp.struct_size = 200;
        loadGaugeQuda(links.as_mut_ptr() as *mut c_void, &mut gp);
        assert!(
            last_error().contains("param->struct_size = 200"),
            "{}",
            last_error()
        );
        gp.struct_size = std::mem::size_of::<QudaGaugeParam>();
        gp.gauge_order = QUDA_BQCD_GAUGE_ORDER;
        loadGaugeQuda(links.as_mut_ptr() as *mut c_void, &mut gp);
        assert!(
            last_error().contains("param->gauge_order = QUDA_BQCD_GAUGE_ORDER"),
            "{}",
            last_error()
        );

        // Unit links load; a solve with a bad solve type leaves x untouched.
        gp.gauge_order = QUDA_MILC_GAUGE_ORDER;
        for link in links.chunks_mut(18) {
            link[0] = 1.0;
            link[8] = 1.0;
            link[16] = 1.0;
        }
        loadGaugeQuda(links.as_mut_ptr() as *mut c_void, &mut gp);
        assert_eq!(
            latsol_quda_last_status(),
            LATSOL_SUCCESS,
            "{}",
            last_error()
        );
        plaqQuda(plaq.as_mut_ptr());
        assert_eq!(plaq, [1.0; 3]);
        let v = 4 * 4 * 4 * 4;
        let mut b = vec![1.0f64; v * 24];
        let mut x = vec![3.0f64; v * 24];
        let mut ip = newQudaInvertParam();
        ip.dslash_type = QUDA_WILSON_DSLASH;
        ip.inv_type = QUDA_BICGSTAB_INVERTER;
        ip.kappa = 0.1;
        ip.solution_type = QUDA_MAT_SOLUTION;
        ip.solve_type = 99;
        ip.matpc_type = QUDA_MATPC_EVEN_EVEN;
        ip.dagger = QUDA_DAG_NO;
        ip.mass_normalization = QUDA_KAPPA_NORMALIZATION;
        ip.cpu_prec = QUDA_DOUBLE_PRECISION;
        ip.cuda_prec = QUDA_DOUBLE_PRECISION;
        ip.dirac_order = QUDA_DIRAC_ORDER;
        ip.gamma_basis = QUDA_DEGRAND_ROSSI_GAMMA_BASIS;
        ip.tol = 1e-10;
        ip.maxiter = 100;
        ip.reliable_delta = 0.1;
        invertQuda(
            x.as_mut_ptr() as *mut c_void,
            b.as_mut_ptr() as *mut c_void,
            &mut ip,
        );
        assert_eq!(latsol_quda_last_status(), LATSOL_ERROR_INVALID_ARGUMENT);
        assert!(
            last_error().contains("param->solve_type = 99"),
            "{}",
            last_error()
        );
        assert!(
            x.iter().all(|&v| v == 3.0),
            "x was written by a failed call"
        );
        assert_eq!(ip.iter, 0);

        // The same solve, valid: M x = b on unit links converges, and the
        // status is cleared.
        ip.solve_type = QUDA_DIRECT_PC_SOLVE;
        invertQuda(
            x.as_mut_ptr() as *mut c_void,
            b.as_mut_ptr() as *mut c_void,
            &mut ip,
        );
        assert_eq!(
            latsol_quda_last_status(),
            LATSOL_SUCCESS,
            "{}",
            last_error()
        );
        assert!(
            ip.iter > 0 && ip.true_res[0] <= 1e-10,
            "{} {}",
            ip.iter,
            ip.true_res[0]
        );

        // A function latsol does not provide names itself and returns.
        let mut ep: QudaEigParam = std::mem::zeroed();
        eigensolveQuda(std::ptr::null_mut(), std::ptr::null_mut(), &mut ep);
        assert_ne!(latsol_quda_last_status(), LATSOL_SUCCESS);
        assert!(
            last_error().contains("eigensolveQuda is not provided"),
            "{}",
            last_error()
        );

        endQuda();
        assert_eq!(latsol_quda_last_status(), LATSOL_SUCCESS);
    }
}
