//! MILC's `qudaCloverInvert` with QUDA 9521952's targets and fields
//! (lib/milc_interface.cpp; issue 39, the onium test): the heavy-quark
//! ("Fermilab") target alone, as MILC's clover_invert2 sets it
//! (`error_for_propagator 0`, `rel_error_for_propagator 5e-7`), meets it
//! and returns the solution's heavy-quark residual, checked here against
//! `sqrt(mean_x |b − M x|²/|x|²)` computed on the host from `MatQuda`; NULL
//! links and clover use the loaded fields and leave them loaded; both
//! targets 0 are refused. The golden clover set, M ψ = b.

mod common;

use std::os::raw::c_void;

use latsol::ffi::quda::abi::*;
use latsol::ffi::{LATSOL_ERROR_INVALID_ARGUMENT, LATSOL_SUCCESS};

extern "C" {
    fn newQudaGaugeParam() -> QudaGaugeParam;
    fn newQudaInvertParam() -> QudaInvertParam;
    fn loadGaugeQuda(h_gauge: *mut c_void, param: *mut QudaGaugeParam);
    fn loadCloverQuda(h_clover: *mut c_void, h_clovinv: *mut c_void, param: *mut QudaInvertParam);
    fn MatQuda(h_out: *mut c_void, h_in: *mut c_void, param: *mut QudaInvertParam);
    fn MatDagMatQuda(h_out: *mut c_void, h_in: *mut c_void, param: *mut QudaInvertParam);
    fn qudaLoadGaugeField(
        external_precision: i32,
        quda_precision: i32,
        inv_args: QudaInvertArgs_t,
        milc_link: *mut c_void,
    );
    #[allow(clippy::too_many_arguments)]
    fn qudaLoadCloverField(
        external_precision: i32,
        quda_precision: i32,
        inv_args: QudaInvertArgs_t,
        milc_clover: *mut c_void,
        milc_clover_inv: *mut c_void,
        solution_type: QudaSolutionType,
        solve_type: QudaSolveType,
        inverter: QudaInverterType,
        clover_coeff: f64,
        compute_trlog: i32,
        trlog: *mut f64,
    );
    fn qudaFreeCloverField();
    #[allow(clippy::too_many_arguments)]
    fn qudaCloverMultishiftInvert(
        external_precision: i32,
        quda_precision: i32,
        num_offsets: i32,
        offset: *mut f64,
        kappa: f64,
        clover_coeff: f64,
        inv_args: QudaInvertArgs_t,
        target_residual: *mut f64,
        source: *mut c_void,
        solution_array: *mut *mut c_void,
        final_residual: *mut f64,
        num_iters: *mut i32,
    );
    fn qudaInit(input: QudaInitArgs_t);
    fn qudaFinalize();
    #[allow(clippy::too_many_arguments)]
    fn qudaCloverInvert(
        external_precision: i32,
        quda_precision: i32,
        kappa: f64,
        clover_coeff: f64,
        inv_args: QudaInvertArgs_t,
        target_residual: f64,
        target_fermilab_residual: f64,
        milc_link: *const c_void,
        milc_clover: *mut c_void,
        milc_clover_inv: *mut c_void,
        source: *mut c_void,
        solution: *mut c_void,
        final_residual: *mut f64,
        final_fermilab_residual: *mut f64,
        num_iters: *mut i32,
    );
    fn latsol_quda_last_status() -> i32;
}

const DIMS: [i32; 4] = [6, 4, 4, 8];
const V: usize = 6 * 4 * 4 * 8;
const KAPPA: f64 = 0.12;

fn golden(name: &str) -> Vec<f64> {
    common::golden_reals("golden-clover-6x4x4x8", name)
}

fn status() -> i32 {
    unsafe { latsol_quda_last_status() }
}

/// The golden links (QDP order) with the anti-periodic sign in the last
/// time slice's T links, as MILC and QUDA's callers pass them.
fn signed_links() -> Vec<f64> {
    let mut links = golden("gauge_qdp.f64");
    let spatial = (DIMS[0] * DIMS[1] * DIMS[2]) as usize;
    for i in 0..V {
        // QDP order: even sites first, then odd; t from the checkerboard index.
        let t = 2 * (i % (V / 2)) / spatial;
        if t == DIMS[3] as usize - 1 {
            links[(3 * V + i) * 18..][..18]
                .iter_mut()
                .for_each(|x| *x = -*x);
        }
    }
    links
}

/// The clover operator's `MatQuda` parameters (κ normalization, MAT).
fn mat_param() -> QudaInvertParam {
    let mut ip = unsafe { newQudaInvertParam() };
    ip.dslash_type = QUDA_CLOVER_WILSON_DSLASH;
    ip.kappa = KAPPA;
    ip.mass_normalization = QUDA_KAPPA_NORMALIZATION;
    ip.dagger = QUDA_DAG_NO;
    ip.solution_type = QUDA_MAT_SOLUTION;
    ip.matpc_type = QUDA_MATPC_EVEN_EVEN;
    ip.cpu_prec = QUDA_DOUBLE_PRECISION;
    ip.cuda_prec = QUDA_DOUBLE_PRECISION;
    ip.cuda_prec_sloppy = QUDA_DOUBLE_PRECISION;
    ip.clover_cpu_prec = QUDA_DOUBLE_PRECISION;
    ip.clover_cuda_prec = QUDA_DOUBLE_PRECISION;
    ip.clover_cuda_prec_sloppy = QUDA_DOUBLE_PRECISION;
    ip.clover_order = QUDA_PACKED_CLOVER_ORDER;
    ip.dirac_order = QUDA_DIRAC_ORDER;
    ip.gamma_basis = QUDA_DEGRAND_ROSSI_GAMMA_BASIS;
    ip
}

/// `sqrt(mean_x |b − M x|²/|x(x)|²)` on the host (24 reals a site in
/// DIRAC order), M through `MatQuda` on the loaded fields.
fn heavy_quark_residual(x: &[f64], b: &[f64]) -> f64 {
    let mut ip = mat_param();
    let (mut inp, mut mx) = (x.to_vec(), vec![0.0; x.len()]);
    unsafe { MatQuda(mx.as_mut_ptr().cast(), inp.as_mut_ptr().cast(), &mut ip) };
    assert_eq!(status(), LATSOL_SUCCESS, "MatQuda");
    let sum: f64 = (0..V)
        .map(|s| {
            let site = s * 24..(s + 1) * 24;
            let xx: f64 = x[site.clone()].iter().map(|v| v * v).sum();
            let rr: f64 = site.map(|k| (b[k] - mx[k]).powi(2)).sum();
            rr / xx
        })
        .sum();
    (sum / V as f64).sqrt()
}

/// MILC's solver arguments: BiCGstab, `mixed_precision` 1 (single sloppy).
fn milc_args() -> QudaInvertArgs_t {
    QudaInvertArgs_t {
        max_iter: 1000,
        evenodd: QUDA_EVEN_PARITY,
        mixed_precision: 1,
        boundary_phase: [0.0; 4],
        make_resident_solution: 0,
        use_resident_solution: 0,
        solver_type: QUDA_BICGSTAB_INVERTER,
        tadpole: 1.0,
        naik_epsilon: 0.0,
    }
}

/// `qudaCloverMultishiftInvert` of the even-parity `b` for `offsets`, each
/// to 1e-10; the solutions, their residuals and the iterations.
fn clover_multishift(offsets: &[f64], b: &[f64]) -> (Vec<Vec<f64>>, Vec<f64>, i32) {
    let n = offsets.len();
    let (mut off, mut targets) = (offsets.to_vec(), vec![1e-10; n]);
    let mut xs = vec![vec![0.0; b.len()]; n];
    let mut ptrs: Vec<*mut c_void> = xs.iter_mut().map(|x| x.as_mut_ptr().cast()).collect();
    let (mut b, mut res, mut iters) = (b.to_vec(), vec![-1.0; n], -1);
    unsafe {
        qudaCloverMultishiftInvert(
            2,
            2,
            n as i32,
            off.as_mut_ptr(),
            KAPPA,
            0.0,
            milc_args(),
            targets.as_mut_ptr(),
            b.as_mut_ptr().cast(),
            ptrs.as_mut_ptr(),
            res.as_mut_ptr(),
            &mut iters,
        )
    };
    (xs, res, iters)
}

struct Solve {
    x: Vec<f64>,
    residual: f64,
    fermilab: f64,
    iterations: i32,
}

/// `qudaCloverInvert` of `b` (double, BiCGstab with a single sloppy
/// operator) with the two targets and the fields given (NULL: the loaded
/// ones); the outputs start as −1.
fn clover_invert(
    targets: (f64, f64),
    links: *const c_void,
    clover: *mut c_void,
    b: &[f64],
) -> Solve {
    let args = milc_args();
    let mut b = b.to_vec();
    let mut s = Solve {
        x: vec![0.0; V * 24],
        residual: -1.0,
        fermilab: -1.0,
        iterations: -1,
    };
    unsafe {
        qudaCloverInvert(
            2,
            2,
            KAPPA,
            0.0,
            args,
            targets.0,
            targets.1,
            links,
            clover,
            std::ptr::null_mut(),
            b.as_mut_ptr().cast(),
            s.x.as_mut_ptr().cast(),
            &mut s.residual,
            &mut s.fermilab,
            &mut s.iterations,
        )
    };
    s
}

#[test]
fn heavy_quark_target_and_resident_fields_as_quda_takes_them() {
    // SAFETY: set before this binary's first call into the library.
    unsafe { std::env::set_var("LATSOL_QUDA_ON_ERROR", "return") };
    let mut latsize = DIMS;
    let mut machsize = [1i32; 4];
    unsafe {
        qudaInit(QudaInitArgs_t {
            verbosity: QUDA_SILENT,
            layout: QudaLayout_t {
                latsize: latsize.as_mut_ptr(),
                machsize: machsize.as_mut_ptr(),
                device: 0,
            },
        })
    };
    assert_eq!(status(), LATSOL_SUCCESS);
    let qdp = signed_links();
    let milc = common::quda_links_in_order(&qdp, V, QUDA_MILC_GAUGE_ORDER);
    let mut clover = golden("clover_packed.f64");
    let (psi, b) = (golden("psi_dirac.f64"), golden("M_psi.f64"));

    // The heavy-quark target alone (MILC's onium): met, and returned.
    let target = 5e-7;
    let s = clover_invert(
        (0.0, target),
        milc.as_ptr().cast(),
        clover.as_mut_ptr().cast(),
        &b,
    );
    assert_eq!(status(), LATSOL_SUCCESS);
    assert!(s.fermilab > 0.0 && s.fermilab <= target, "{}", s.fermilab);
    assert!(s.residual > 0.0 && s.iterations > 0);
    // The solution is ψ to about the target (the clover operator's
    // condition number here is O(10)).
    assert!(common::rel_diff_reals(&s.x, &psi) < 100.0 * target);
    // Both targets zero: refused, nothing written.
    let z = clover_invert(
        (0.0, 0.0),
        milc.as_ptr().cast(),
        clover.as_mut_ptr().cast(),
        &b,
    );
    assert_eq!(status(), LATSOL_ERROR_INVALID_ARGUMENT);
    assert!(z.x.iter().all(|&v| v == 0.0) && z.residual == -1.0 && z.iterations == -1);

    // The fields loaded beforehand (loadGaugeQuda, loadCloverQuda), NULL
    // links and clover: those are used, and stay loaded.
    let mut gp = unsafe { newQudaGaugeParam() };
    gp.X = DIMS;
    gp.anisotropy = 1.0;
    gp.r#type = QUDA_WILSON_LINKS;
    gp.gauge_order = QUDA_QDP_GAUGE_ORDER;
    gp.t_boundary = QUDA_ANTI_PERIODIC_T;
    gp.cpu_prec = QUDA_DOUBLE_PRECISION;
    gp.cuda_prec = QUDA_DOUBLE_PRECISION;
    gp.cuda_prec_sloppy = QUDA_SINGLE_PRECISION;
    gp.reconstruct = QUDA_RECONSTRUCT_NO;
    gp.reconstruct_sloppy = QUDA_RECONSTRUCT_NO;
    gp.gauge_fix = QUDA_GAUGE_FIXED_NO;
    let mut links = qdp.clone();
    let mut parts: Vec<*mut c_void> = links
        .chunks_mut(V * 18)
        .map(|c| c.as_mut_ptr().cast())
        .collect();
    unsafe { loadGaugeQuda(parts.as_mut_ptr().cast(), &mut gp) };
    assert_eq!(status(), LATSOL_SUCCESS);
    let mut cp = mat_param();
    cp.clover_cuda_prec_sloppy = QUDA_SINGLE_PRECISION;
    unsafe { loadCloverQuda(clover.as_mut_ptr().cast(), std::ptr::null_mut(), &mut cp) };
    assert_eq!(status(), LATSOL_SUCCESS);
    for targets in [(0.0, target), (1e-9, 1e-8)] {
        let s = clover_invert(targets, std::ptr::null(), std::ptr::null_mut(), &b);
        assert_eq!(status(), LATSOL_SUCCESS);
        // The returned heavy-quark residual is the solution's: the host's
        // from M x (rounding of the two residuals apart).
        let hq = heavy_quark_residual(&s.x, &b);
        assert!(
            (s.fermilab - hq).abs() <= 1e-6 * hq,
            "returned {} against {hq}",
            s.fermilab
        );
        assert!(s.fermilab <= targets.1);
        if targets.0 > 0.0 {
            assert!(s.residual <= targets.0, "{}", s.residual);
        }
    }

    // MILC's resident clover fields: one clover field at a time, a free of
    // none refused, as QUDA's.
    let load_clover = |clover: &mut Vec<f64>| unsafe {
        qudaLoadCloverField(
            2,
            2,
            milc_args(),
            clover.as_mut_ptr().cast(),
            std::ptr::null_mut(),
            QUDA_MAT_SOLUTION,
            QUDA_DIRECT_PC_SOLVE,
            QUDA_BICGSTAB_INVERTER,
            0.0,
            0,
            std::ptr::null_mut(),
        )
    };
    load_clover(&mut clover);
    assert_eq!(status(), LATSOL_ERROR_INVALID_ARGUMENT);
    unsafe { qudaFreeCloverField() };
    assert_eq!(status(), LATSOL_SUCCESS);
    unsafe { qudaFreeCloverField() };
    assert_eq!(status(), LATSOL_ERROR_INVALID_ARGUMENT);
    let mut milc_links = milc.clone();
    unsafe { qudaLoadGaugeField(2, 2, milc_args(), milc_links.as_mut_ptr().cast()) };
    assert_eq!(status(), LATSOL_SUCCESS);
    load_clover(&mut clover);
    assert_eq!(status(), LATSOL_SUCCESS);

    // The multi-shift solve on them: (M̂†M̂ + σ) x = b on the even parity,
    // M̂ the asymmetric even-odd operator, checked with MatDagMatQuda.
    let even = &b[..V * 12];
    let offsets = [0.0, 0.05];
    let (xs, res, iters) = clover_multishift(&offsets, even);
    assert_eq!(status(), LATSOL_SUCCESS);
    assert!(iters > 0 && res.iter().all(|&r| (0.0..=1e-9).contains(&r)));
    for (x, sigma) in xs.iter().zip(offsets) {
        let mut ip = mat_param();
        ip.solution_type = QUDA_MATPCDAG_MATPC_SOLUTION;
        ip.matpc_type = QUDA_MATPC_EVEN_EVEN_ASYMMETRIC;
        let (mut inp, mut out) = (x.clone(), vec![0.0; x.len()]);
        unsafe { MatDagMatQuda(out.as_mut_ptr().cast(), inp.as_mut_ptr().cast(), &mut ip) };
        let ax: Vec<f64> = out.iter().zip(x).map(|(o, v)| o + sigma * v).collect();
        assert!(common::rel_diff_reals(&ax, even) < 1e-9, "σ = {sigma}");
    }
    // One zero offset: one invertQuda, the same solution.
    let (single, _, _) = clover_multishift(&[0.0], even);
    assert_eq!(status(), LATSOL_SUCCESS);
    assert!(common::rel_diff_reals(&single[0], &xs[0]) < 1e-8);
    unsafe { qudaFreeCloverField() };
    unsafe { qudaFinalize() };
}
