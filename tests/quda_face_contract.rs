//! MILC's `qudaContractFT` (issue 39; ks_spectrum's `WANT_KS_CONT_GPU`)
//! against closed forms: with both propagators one unit colour vector at
//! one site, `corr[k][t]` is that site's Fourier factor on its time slice
//! and zero elsewhere (QUDA 9521952's convention: e^{+iθ}, cos θ, i sin θ
//! per direction, θ = 2π n (x − x0)/L, the time direction's included);
//! with random fields and zero momentum, each time slice's sum of
//! `Σ_c conj(q1_c) q2_c`; `corr` is added to; single-precision fields agree
//! with double.

use std::f64::consts::PI;
use std::os::raw::c_void;

use latsol::ffi::quda::abi::*;
use latsol::ffi::LATSOL_SUCCESS;
use num_complex::Complex64 as C64;

extern "C" {
    fn qudaInit(input: QudaInitArgs_t);
    fn qudaFinalize();
    fn qudaContractFT(
        external_precision: i32,
        cont_args: *mut QudaContractArgs_t,
        quark1: *mut c_void,
        quark2: *mut c_void,
        corr: *mut f64,
    );
    fn latsol_quda_last_status() -> i32;
}

const D: [usize; 4] = [4, 6, 4, 8];
const V: usize = 4 * 6 * 4 * 8;

/// MILC's index of the site at `x` (even sites first, then odd; x fastest).
fn milc_index(x: [usize; 4]) -> usize {
    let lex = x[0] + D[0] * (x[1] + D[1] * (x[2] + D[2] * x[3]));
    (x.iter().sum::<usize>() % 2) * V / 2 + lex / 2
}

/// `qudaContractFT` of `q1`, `q2` (double unless `single`) for momenta
/// `modes` (4 a momentum) with `kinds`, from `x0`, added to `corr`.
fn contract(
    q1: &[f64],
    q2: &[f64],
    single: bool,
    modes: &mut [i32],
    kinds: &mut [QudaFFTSymmType],
    x0: &mut [i32; 4],
    corr: &mut [f64],
) {
    let mut args = QudaContractArgs_t {
        n_mom: (modes.len() / 4) as i32,
        mom_modes: modes.as_mut_ptr(),
        fft_type: kinds.as_mut_ptr(),
        source_position: x0.as_mut_ptr(),
        flops: 0.0,
        dtime: 0.0,
    };
    let (mut a, mut b) = (q1.to_vec(), q2.to_vec());
    let (mut a32, mut b32): (Vec<f32>, Vec<f32>) = (
        q1.iter().map(|&v| v as f32).collect(),
        q2.iter().map(|&v| v as f32).collect(),
    );
    let (pa, pb): (*mut c_void, *mut c_void) = if single {
        (a32.as_mut_ptr().cast(), b32.as_mut_ptr().cast())
    } else {
        (a.as_mut_ptr().cast(), b.as_mut_ptr().cast())
    };
    let precision = if single { 1 } else { 2 };
    unsafe { qudaContractFT(precision, &mut args, pa, pb, corr.as_mut_ptr()) };
    assert_eq!(unsafe { latsol_quda_last_status() }, LATSOL_SUCCESS);
}

#[test]
fn contractions_match_the_closed_forms() {
    // SAFETY: set before this binary's first call into the library.
    unsafe { std::env::set_var("LATSOL_QUDA_ON_ERROR", "return") };
    let mut latsize = D.map(|d| d as i32);
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
    let nt = D[3];
    let mut x0 = [1, 2, 0, 3];
    let mut modes = vec![1, 0, 2, 0, 0, 1, 1, 0, 2, 3, 1, 1];
    let mut kinds = vec![
        QUDA_FFT_SYMM_EO,
        QUDA_FFT_SYMM_EVEN,
        QUDA_FFT_SYMM_EO,
        QUDA_FFT_SYMM_EVEN,
        QUDA_FFT_SYMM_EVEN,
        QUDA_FFT_SYMM_ODD,
        QUDA_FFT_SYMM_EO,
        QUDA_FFT_SYMM_EO,
        QUDA_FFT_SYMM_ODD,
        QUDA_FFT_SYMM_EO,
        QUDA_FFT_SYMM_EVEN,
        QUDA_FFT_SYMM_EO,
    ];
    // One unit vector (colour 1) at one site in both propagators.
    for x in [[0, 0, 0, 0], [3, 5, 2, 7], [1, 4, 3, 2]] {
        let mut q = vec![0.0; V * 6];
        q[6 * milc_index(x) + 2] = 1.0;
        let mut corr = vec![0.0; 3 * nt * 2];
        contract(&q, &q, false, &mut modes, &mut kinds, &mut x0, &mut corr);
        for k in 0..3 {
            let mut want = C64::new(1.0, 0.0);
            for mu in 0..4 {
                let theta = 2.0 * PI * modes[4 * k + mu] as f64 * (x[mu] as f64 - x0[mu] as f64)
                    / D[mu] as f64;
                want *= match kinds[4 * k + mu] {
                    QUDA_FFT_SYMM_EVEN => C64::new(theta.cos(), 0.0),
                    QUDA_FFT_SYMM_ODD => C64::new(0.0, theta.sin()),
                    _ => C64::from_polar(1.0, theta),
                };
            }
            for t in 0..nt {
                let got = C64::new(corr[2 * (k * nt + t)], corr[2 * (k * nt + t) + 1]);
                let w = if t == x[3] { want } else { C64::new(0.0, 0.0) };
                assert!(
                    (got - w).norm() < 1e-14,
                    "site {x:?} momentum {k} t {t}: {got} vs {w}"
                );
            }
        }
    }

    // Random fields, zero momentum: each time slice's sum of q1† q2; the
    // second call adds the same again; single agrees with double.
    let mut rng = 12345u64;
    let mut next = || {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (rng >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    let q1: Vec<f64> = (0..V * 6).map(|_| next()).collect();
    let q2: Vec<f64> = (0..V * 6).map(|_| next()).collect();
    let mut zero = vec![0; 4];
    let mut even = vec![QUDA_FFT_SYMM_EVEN; 4];
    let mut corr = vec![0.0; nt * 2];
    contract(&q1, &q2, false, &mut zero, &mut even, &mut x0, &mut corr);
    let mut want = vec![C64::new(0.0, 0.0); nt];
    for (t, w) in want.iter_mut().enumerate() {
        for z in 0..D[2] {
            for y in 0..D[1] {
                for x in 0..D[0] {
                    let i = milc_index([x, y, z, t]);
                    for c in 0..3 {
                        let k = 6 * i + 2 * c;
                        *w += C64::new(q1[k], -q1[k + 1]) * C64::new(q2[k], q2[k + 1]);
                    }
                }
            }
        }
    }
    for t in 0..nt {
        let got = C64::new(corr[2 * t], corr[2 * t + 1]);
        assert!((got - want[t]).norm() < 1e-13 * want[t].norm().max(1.0));
    }
    let once = corr.clone();
    contract(&q1, &q2, false, &mut zero, &mut even, &mut x0, &mut corr);
    assert!(corr
        .iter()
        .zip(&once)
        .all(|(c, o)| (c - 2.0 * o).abs() < 1e-13));
    let mut narrow = vec![0.0; nt * 2];
    contract(&q1, &q2, true, &mut zero, &mut even, &mut x0, &mut narrow);
    // Single-precision fields: each product rounded to ~6e-8 relative.
    let scale: f64 = want.iter().map(|w| w.norm()).fold(0.0, f64::max);
    assert!(narrow
        .iter()
        .zip(&once)
        .all(|(n, o)| (n - o).abs() < 1e-5 * scale));
    unsafe { qudaFinalize() };
}
