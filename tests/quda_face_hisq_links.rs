//! HISQ links through QUDA's MILC interface (issue 39; MILC's
//! `WANT_FL_GPU`): `qudaLoadUnitarizedLink` (fat7 and its U(3) projection)
//! and `qudaLoadKSLink` (the second level's fat and long links), and
//! `computeKSLinkQuda` under them, against references made here:
//! - the free field with MILC's phases in closed form: the first level
//!   gives the links back (1/8 + 6/16 + 24/64 + 48/384 = 1), the second
//!   9/8 of them and −1/24 of the three-hop product;
//! - gauge covariance of both levels on a random field (`F(x) → g(x) F(x)
//!   g(x+μ̂)†`, the long links to `x+3μ̂`): the paths and the projection
//!   both commute with a gauge transformation;
//! - the projection is the unitary polar factor (W unitary, W†V Hermitian
//!   positive);
//! - single-precision arrays agree with double to single's rounding; the
//!   QDP order of `computeKSLinkQuda` gives MILC's numbers;
//! - refused input leaves the outputs as they were.

use std::os::raw::c_void;

mod milc_face;

use latsol::ffi::quda::abi::*;
use latsol::ffi::LATSOL_SUCCESS;
use latsol::su3::Su3;
use num_complex::Complex64 as C64;

extern "C" {
    fn qudaLoadKSLink(
        precision: i32,
        args: QudaFatLinkArgs_t,
        coeff: *const f64,
        inlink: *mut c_void,
        fatlink: *mut c_void,
        longlink: *mut c_void,
    );
    fn qudaLoadUnitarizedLink(
        precision: i32,
        args: QudaFatLinkArgs_t,
        coeff: *const f64,
        inlink: *mut c_void,
        fatlink: *mut c_void,
        ulink: *mut c_void,
    );
    fn qudaHisqParamsInit(p: QudaHisqParams_t);
    fn computeKSLinkQuda(
        fatlink: *mut c_void,
        longlink: *mut c_void,
        ulink: *mut c_void,
        inlink: *mut c_void,
        coeff: *mut f64,
        param: *mut QudaGaugeParam,
    );
    fn newQudaGaugeParam() -> QudaGaugeParam;
    fn latsol_quda_last_status() -> i32;
}

const D: [usize; 4] = [4, 4, 6, 6];
const V: usize = 4 * 4 * 6 * 6;
// MILC's hisq_u3_action.h coefficients (the closed forms below check them).
const P1: [f64; 6] = latsol::fat_links::HISQ_FIRST_LEVEL;
const P2: [f64; 6] = latsol::fat_links::HISQ_SECOND_LEVEL;
const ARGS: QudaFatLinkArgs_t = QudaFatLinkArgs_t {
    su3_source: 0,
    use_pinned_memory: 0,
};

fn milc_index(x: [usize; 4]) -> usize {
    let lex = x[0] + D[0] * (x[1] + D[1] * (x[2] + D[2] * x[3]));
    (x.iter().sum::<usize>() % 2) * V / 2 + lex / 2
}

fn sites() -> impl Iterator<Item = [usize; 4]> {
    (0..V).map(|l| [l % 4, (l / 4) % 4, (l / 16) % 6, l / 96])
}

fn shift(mut x: [usize; 4], mu: usize, by: usize) -> [usize; 4] {
    x[mu] = (x[mu] + by) % D[mu];
    x
}

/// MILC's phase of direction `mu` at `x`, with the anti-periodic sign on
/// the T links of the last slice.
fn phase(x: [usize; 4], mu: usize) -> f64 {
    let n = match mu {
        0 => x[3],
        1 => x[3] + x[0],
        2 => x[3] + x[0] + x[1],
        _ => 0,
    };
    let s = if n % 2 == 0 { 1.0 } else { -1.0 };
    if mu == 3 && x[3] == D[3] - 1 {
        -s
    } else {
        s
    }
}

fn link(a: &[f64], x: [usize; 4], mu: usize) -> Su3 {
    Su3::from_row_major(&a[18 * (4 * milc_index(x) + mu)..][..18])
}

fn set(a: &mut [f64], x: [usize; 4], mu: usize, m: &Su3) {
    m.to_row_major(&mut a[18 * (4 * milc_index(x) + mu)..][..18]);
}

fn init() {
    milc_face::milc_init(D);
}

/// Both levels of MILC's HISQ links of `u` (double): V, W, fat, long.
fn hisq(u: &[f64]) -> [Vec<f64>; 4] {
    let mut input = u.to_vec();
    let (mut v, mut w) = (vec![0.0; u.len()], vec![0.0; u.len()]);
    let (mut fat, mut long) = (vec![0.0; u.len()], vec![0.0; u.len()]);
    unsafe {
        qudaLoadUnitarizedLink(
            2,
            ARGS,
            P1.as_ptr(),
            input.as_mut_ptr().cast(),
            v.as_mut_ptr().cast(),
            w.as_mut_ptr().cast(),
        );
        assert_eq!(latsol_quda_last_status(), LATSOL_SUCCESS);
        qudaLoadKSLink(
            2,
            ARGS,
            P2.as_ptr(),
            w.as_mut_ptr().cast(),
            fat.as_mut_ptr().cast(),
            long.as_mut_ptr().cast(),
        );
        assert_eq!(latsol_quda_last_status(), LATSOL_SUCCESS);
    }
    [v, w, fat, long]
}

/// Random SU(3) links times MILC's phases.
fn random_links(seed: u64) -> Vec<f64> {
    let mut rng = latsol::random::rng(seed);
    let mut u = vec![0.0; V * 72];
    for x in sites() {
        for mu in 0..4 {
            let m = latsol::random::su3(&mut rng).scale(C64::new(phase(x, mu), 0.0));
            set(&mut u, x, mu, &m);
        }
    }
    u
}

#[test]
fn the_free_field_gives_the_closed_forms() {
    init();
    let mut u = vec![0.0; V * 72];
    for x in sites() {
        for mu in 0..4 {
            set(
                &mut u,
                x,
                mu,
                &Su3::identity().scale(C64::new(phase(x, mu), 0.0)),
            );
        }
    }
    let [v, w, fat, long] = hisq(&u);
    for x in sites() {
        for mu in 0..4 {
            let l = link(&u, x, mu);
            assert!(link(&v, x, mu).max_diff(&l) < 1e-15, "V {x:?} {mu}");
            assert!(link(&w, x, mu).max_diff(&l) < 1e-14, "W {x:?} {mu}");
            let f = l.scale(C64::new(9.0 / 8.0, 0.0));
            assert!(link(&fat, x, mu).max_diff(&f) < 1e-14, "fat {x:?} {mu}");
            let three = (0..3).map(|k| phase(shift(x, mu, k), mu)).product::<f64>();
            let want = Su3::identity().scale(C64::new(-three / 24.0, 0.0));
            assert!(
                link(&long, x, mu).max_diff(&want) < 1e-15,
                "long {x:?} {mu}"
            );
        }
    }
}

#[test]
fn both_levels_are_gauge_covariant_and_w_is_the_polar_factor() {
    init();
    let u = random_links(7);
    let mut rng = latsol::random::rng(8);
    let g: Vec<Su3> = (0..V).map(|_| latsol::random::su3(&mut rng)).collect();
    let gx = |x: [usize; 4]| g[milc_index(x)];
    let mut ug = vec![0.0; u.len()];
    for x in sites() {
        for mu in 0..4 {
            let m = gx(x)
                .mul(&link(&u, x, mu))
                .mul(&gx(shift(x, mu, 1)).adjoint());
            set(&mut ug, x, mu, &m);
        }
    }
    let a = hisq(&u);
    let b = hisq(&ug);
    for x in sites() {
        for mu in 0..4 {
            for (k, hops) in [(0, 1), (1, 1), (2, 1), (3, 3)] {
                let want = gx(x)
                    .mul(&link(&a[k], x, mu))
                    .mul(&gx(shift(x, mu, hops)).adjoint());
                let d = link(&b[k], x, mu).max_diff(&want);
                assert!(d < 1e-12, "field {k} at {x:?} {mu}: {d:e}");
            }
            let (v, w) = (link(&a[0], x, mu), link(&a[1], x, mu));
            // QUDA's bound on W†W − 1 (`max_error`), which the library
            // checks itself: on a hot field V is small and V†V's
            // eigenvalues spread, so the projection loses a few digits
            // (1e-13 seen here).
            let dev = w.adjoint().mul(&w).max_diff(&Su3::identity());
            assert!(dev < 1e-10, "{x:?} {mu} {dev:e}");
            let h = w.adjoint().mul(&v);
            assert!(h.max_diff(&h.adjoint()) < 1e-10);
            // Positive: the diagonal entries of a positive Hermitian matrix.
            assert!((0..3).all(|i| h.0[i][i].re > 0.0));
        }
    }
}

#[test]
fn single_precision_and_qdp_order_agree_with_double_milc() {
    init();
    let u = random_links(9);
    let [_, w, fat, long] = hisq(&u);
    // Single-precision MILC arrays: inputs rounded once, results within a
    // few single ulps of the O(1) entries.
    let mut w32: Vec<f32> = w.iter().map(|&r| r as f32).collect();
    let (mut f32s, mut l32) = (vec![0f32; w.len()], vec![0f32; w.len()]);
    unsafe {
        qudaLoadKSLink(
            1,
            ARGS,
            P2.as_ptr(),
            w32.as_mut_ptr().cast(),
            f32s.as_mut_ptr().cast(),
            l32.as_mut_ptr().cast(),
        );
        assert_eq!(latsol_quda_last_status(), LATSOL_SUCCESS);
    }
    let eps = f32::EPSILON as f64;
    for (got, want) in [(&f32s, &fat), (&l32, &long)] {
        let d = got
            .iter()
            .zip(want.iter())
            .map(|(&g, &w)| (g as f64 - w).abs())
            .fold(0.0, f64::max);
        assert!(d < 64.0 * eps, "{d:e}");
    }
    // QDP order: four arrays of V links; computeKSLinkQuda with long links.
    let mut qdp_in: Vec<Vec<f64>> = (0..4).map(|_| vec![0.0; V * 18]).collect();
    for x in sites() {
        for (mu, arr) in qdp_in.iter_mut().enumerate() {
            link(&w, x, mu).to_row_major(&mut arr[18 * milc_index(x)..][..18]);
        }
    }
    let mut qdp_fat: Vec<Vec<f64>> = (0..4).map(|_| vec![0.0; V * 18]).collect();
    let mut qdp_long: Vec<Vec<f64>> = (0..4).map(|_| vec![0.0; V * 18]).collect();
    let ptrs = |v: &mut Vec<Vec<f64>>| -> Vec<*mut c_void> {
        v.iter_mut().map(|a| a.as_mut_ptr().cast()).collect()
    };
    let (mut pin, mut pfat, mut plong) =
        (ptrs(&mut qdp_in), ptrs(&mut qdp_fat), ptrs(&mut qdp_long));
    let mut coeff = P2;
    unsafe {
        let mut param = newQudaGaugeParam();
        param.X = D.map(|d| d as i32);
        param.cpu_prec = QUDA_DOUBLE_PRECISION;
        param.cuda_prec = QUDA_DOUBLE_PRECISION;
        param.gauge_order = QUDA_QDP_GAUGE_ORDER;
        param.r#type = QUDA_GENERAL_LINKS;
        computeKSLinkQuda(
            pfat.as_mut_ptr().cast(),
            plong.as_mut_ptr().cast(),
            std::ptr::null_mut(),
            pin.as_mut_ptr().cast(),
            coeff.as_mut_ptr(),
            &mut param,
        );
        assert_eq!(latsol_quda_last_status(), LATSOL_SUCCESS);
    }
    for x in sites() {
        for mu in 0..4 {
            let i = 18 * milc_index(x);
            let f = Su3::from_row_major(&qdp_fat[mu][i..][..18]);
            let l = Su3::from_row_major(&qdp_long[mu][i..][..18]);
            assert_eq!(f, link(&fat, x, mu));
            assert_eq!(l, link(&long, x, mu));
        }
    }
}

#[test]
fn refused_input_leaves_the_outputs_alone() {
    init();
    let mut u = random_links(10);
    let (mut fat, mut ulink) = (vec![7.0; u.len()], vec![7.0; u.len()]);
    let mut bad = P1;
    bad[3] = f64::NAN;
    unsafe {
        qudaLoadUnitarizedLink(
            2,
            ARGS,
            bad.as_ptr(),
            u.as_mut_ptr().cast(),
            fat.as_mut_ptr().cast(),
            ulink.as_mut_ptr().cast(),
        );
        assert_ne!(latsol_quda_last_status(), LATSOL_SUCCESS);
        qudaLoadUnitarizedLink(
            2,
            ARGS,
            P1.as_ptr(),
            u.as_mut_ptr().cast(),
            fat.as_mut_ptr().cast(),
            std::ptr::null_mut(),
        );
        assert_ne!(latsol_quda_last_status(), LATSOL_SUCCESS);
        qudaLoadKSLink(
            2,
            ARGS,
            P2.as_ptr(),
            std::ptr::null_mut(),
            fat.as_mut_ptr().cast(),
            ulink.as_mut_ptr().cast(),
        );
        assert_ne!(latsol_quda_last_status(), LATSOL_SUCCESS);
        // A link that is not finite is named, nothing written.
        u[18 * 4 * 5 + 3] = f64::INFINITY;
        qudaLoadKSLink(
            2,
            ARGS,
            P2.as_ptr(),
            u.as_mut_ptr().cast(),
            fat.as_mut_ptr().cast(),
            ulink.as_mut_ptr().cast(),
        );
        assert_ne!(latsol_quda_last_status(), LATSOL_SUCCESS);
        qudaHisqParamsInit(QudaHisqParams_t {
            reunit_allow_svd: 1,
            reunit_svd_only: 0,
            reunit_svd_abs_error: f64::NAN,
            reunit_svd_rel_error: 1e-6,
            force_filter: 5e-5,
        });
        assert_ne!(latsol_quda_last_status(), LATSOL_SUCCESS);
        qudaHisqParamsInit(QudaHisqParams_t {
            reunit_allow_svd: 1,
            reunit_svd_only: 0,
            reunit_svd_abs_error: 1e-6,
            reunit_svd_rel_error: 1e-6,
            force_filter: 5e-5,
        });
        assert_eq!(latsol_quda_last_status(), LATSOL_SUCCESS);
    }
    assert!(fat.iter().chain(&ulink).all(|&r| r == 7.0));
}
