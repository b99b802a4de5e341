//! MILC's `qudaSpinTaste` (issue 39; ks_spectrum's spin-taste operators)
//! through the C entry point: the local operators in closed form (`ε σ_spin
//! χ`), the one-link ones on a point source in closed form (the source's
//! neighbours along μ, each with its link), every (spin, taste) pair gauge
//! covariant (`O[gUg†] gχ = g O[U] χ`, which only the covariant paths
//! give), `dst = src` in place, single-precision arrays, kept links, and
//! refusals. One test: the kept links are the process's.

use std::os::raw::c_void;

use latsol::ffi::LATSOL_SUCCESS;
use latsol::lattice::Lattice;
use latsol::su3::{ColorVector, Su3};
use num_complex::Complex64 as C64;

mod milc_face;

extern "C" {
    fn qudaSpinTaste(
        external_precision: i32,
        quda_precision: i32,
        links: *mut c_void,
        src: *mut c_void,
        dst: *mut c_void,
        spin: i32,
        taste: i32,
        reload: i32,
    );
    fn latsol_quda_last_status() -> i32;
}

const D: [usize; 4] = [4, 4, 6, 4];

fn lat() -> Lattice {
    Lattice::new(D).unwrap()
}

/// `σ_b(x) = Π_{μ∈b} (−1)^{Σ_{ν≠μ} x_ν}`, written out.
fn sigma(b: i32, x: [usize; 4]) -> f64 {
    let mut s = 1.0;
    for mu in 0..4 {
        if b & (1 << mu) != 0 {
            for (nu, &c) in x.iter().enumerate() {
                if nu != mu && c % 2 == 1 {
                    s = -s;
                }
            }
        }
    }
    s
}

fn coords(i: usize) -> [usize; 4] {
    let l = lat();
    let vh = l.half_volume();
    l.coords(latsol::lattice::Parity::from_index(i / vh), i % vh)
}

fn index(x: [usize; 4]) -> usize {
    let l = lat();
    l.parity_of(x).index() * l.half_volume() + l.cb_index(x)
}

fn reals(v: &[ColorVector]) -> Vec<f64> {
    v.iter().flatten().flat_map(|z| [z.re, z.im]).collect()
}

fn vectors(r: &[f64]) -> Vec<ColorVector> {
    r.chunks(6)
        .map(|c| std::array::from_fn(|k| C64::new(c[2 * k], c[2 * k + 1])))
        .collect()
}

fn apply(
    links: Option<&mut [f64]>,
    chi: &[ColorVector],
    spin: i32,
    taste: i32,
) -> Vec<ColorVector> {
    let mut src = reals(chi);
    let mut dst = vec![0.0; src.len()];
    let l = links.map_or(std::ptr::null_mut(), |l| l.as_mut_ptr().cast());
    unsafe {
        qudaSpinTaste(
            2,
            2,
            l,
            src.as_mut_ptr().cast(),
            dst.as_mut_ptr().cast(),
            spin,
            taste,
            1,
        );
        assert_eq!(latsol_quda_last_status(), LATSOL_SUCCESS, "{spin} {taste}");
    }
    vectors(&dst)
}

/// A gauge field's links as MILC's array (even-odd order, 18 reals each).
fn milc_links(f: &latsol::field::GaugeField) -> Vec<f64> {
    f.links()
        .iter()
        .flat_map(|m| {
            let mut r = [0.0; 18];
            m.to_row_major(&mut r);
            r
        })
        .collect()
}

fn random_vectors(seed: u64) -> Vec<ColorVector> {
    let mut rng = latsol::random::rng(seed);
    (0..lat().volume())
        .map(|_| std::array::from_fn(|_| latsol::random::gaussian(&mut rng)))
        .collect()
}

fn max_diff(a: &[ColorVector], b: &[ColorVector]) -> f64 {
    a.iter()
        .flatten()
        .zip(b.iter().flatten())
        .map(|(x, y)| (x - y).norm())
        .fold(0.0, f64::max)
}

#[test]
fn spin_taste_operators() {
    milc_face::milc_init(D);
    let l = std::sync::Arc::new(lat());
    let u = latsol::random::hot_gauge(&l, 3);
    let mut links = milc_links(&u);
    let chi = random_vectors(4);

    // Local: ε σ_spin χ, no links needed.
    for spin in [0, 5, 9, 15] {
        let got = apply(None, &chi, spin, spin);
        let want: Vec<ColorVector> = (0..chi.len())
            .map(|i| chi[i].map(|z| z * sigma(spin, coords(i)) * sigma(15, coords(i))))
            .collect();
        assert!(max_diff(&got, &want) < 1e-15, "local {spin}");
    }

    // One link along μ on a point source at x0 (colour 1): at y = x0 − μ̂,
    // ½ ε Z_μ σ_spin(x0) U_μ(y) e₁; at y = x0 + μ̂, the same with U_μ(x0)†.
    let x0 = [1, 2, 3, 0];
    let mut point = vec![[C64::new(0.0, 0.0); 3]; chi.len()];
    point[index(x0)][1] = C64::new(1.0, 0.0);
    for (spin, taste, mu) in [(0, 1, 0), (3, 1, 1), (8, 12, 2), (7, 15, 3)] {
        let got = apply(Some(&mut links), &point, spin, taste);
        let mut want = vec![[C64::new(0.0, 0.0); 3]; chi.len()];
        let s0 = sigma(spin, x0);
        for (step, link) in [(-1isize, false), (1, true)] {
            let y = l.shift(x0, mu, step);
            let m: Su3 = if link {
                u.link_at(x0, mu).adjoint()
            } else {
                *u.link_at(y, mu)
            };
            let f = 0.5 * sigma(15, y) * sigma(1 << mu, y) * s0;
            for (c, w) in want[index(y)].iter_mut().enumerate() {
                *w += m.0[c][1] * f;
            }
        }
        assert!(max_diff(&got, &want) < 1e-15, "one link {spin} {taste}");
    }

    // Gauge covariance of every pair: O[gUg†](gχ) = g O[U]χ.
    let g = latsol::random::hot_gauge(&l, 9);
    let gx = |x: [usize; 4]| *g.link_at(x, 0);
    let mut ug = u.clone();
    for i in 0..l.volume() {
        let x = coords(i);
        for mu in 0..4 {
            *ug.link_at_mut(x, mu) = gx(x)
                .mul(u.link_at(x, mu))
                .mul(&gx(l.shift(x, mu, 1)).adjoint());
        }
    }
    let mut links_g = milc_links(&ug);
    let chi_g: Vec<ColorVector> = (0..chi.len())
        .map(|i| gx(coords(i)).mul_vec(&chi[i]))
        .collect();
    for spin in [0, 6, 11] {
        for taste in 0..16 {
            let a = apply(Some(&mut links), &chi, spin, taste);
            let b = apply(Some(&mut links_g), &chi_g, spin, taste);
            let ga: Vec<ColorVector> = (0..a.len()).map(|i| gx(coords(i)).mul_vec(&a[i])).collect();
            let d = max_diff(&ga, &b);
            assert!(d < 1e-13, "covariance {spin} {taste}: {d:e}");
            if spin ^ taste != 0 {
                assert!(a.iter().flatten().any(|z| z.norm() > 0.1));
            }
        }
    }

    // The kept links (reload 0, links NULL); in place, single precision.
    let want = apply(Some(&mut links), &chi, 2, 13);
    let mut src0 = reals(&chi);
    let mut dst0 = vec![0.0; src0.len()];
    unsafe {
        qudaSpinTaste(
            2,
            2,
            std::ptr::null_mut(),
            src0.as_mut_ptr().cast(),
            dst0.as_mut_ptr().cast(),
            2,
            13,
            0,
        );
        assert_eq!(latsol_quda_last_status(), LATSOL_SUCCESS);
    }
    assert!(max_diff(&vectors(&dst0), &want) < 1e-15);
    let mut inplace: Vec<f32> = reals(&chi).iter().map(|&r| r as f32).collect();
    let p = inplace.as_mut_ptr().cast::<c_void>();
    let mut links32: Vec<f32> = links.iter().map(|&r| r as f32).collect();
    unsafe {
        qudaSpinTaste(1, 1, links32.as_mut_ptr().cast(), p, p, 2, 13, 1);
        assert_eq!(latsol_quda_last_status(), LATSOL_SUCCESS);
    }
    let got = vectors(&inplace.iter().map(|&r| r as f64).collect::<Vec<_>>());
    assert!(max_diff(&got, &want) < 1e-5, "{:e}", max_diff(&got, &want));

    // Refused: masks outside 0..15, a non-finite source; dst untouched.
    let mut src = reals(&chi);
    let mut dst = vec![0.0; src.len()];
    let keep = dst.clone();
    src[7] = f64::NAN;
    unsafe {
        for (spin, taste) in [(16, 0), (0, -1), (1, 2)] {
            qudaSpinTaste(
                2,
                2,
                links.as_mut_ptr().cast(),
                src.as_mut_ptr().cast(),
                dst.as_mut_ptr().cast(),
                spin,
                taste,
                1,
            );
            assert_ne!(latsol_quda_last_status(), LATSOL_SUCCESS);
        }
    }
    assert_eq!(dst, keep);
}
