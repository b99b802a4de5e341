//! The Wilson hopping term on the CPU, UKQCD basis (CONVENTIONS.md, "The
//! Wilson operator"; seed clark2010 §3 and Appendix B):
//! `D ψ(x) = Σ_μ (1 − γ_μ) U_μ(x) ψ(x+μ̂) + (1 + γ_μ) U_μ†(x−μ̂) ψ(x−μ̂)`.
//!
//! Each hop projects the neighbour to a half spinor (two colour vectors),
//! multiplies by the link, and rebuilds the full spinor. In the UKQCD basis
//! `γ_k = ((0, iσ_k), (−iσ_k, 0))` for k = 1, 2, 3, so
//! `(1 + s γ_k) ψ = (h, −s iσ_k h)` with `h = u + s iσ_k l`, and
//! `γ_4 = diag(1, 1, −1, −1)`, so `(1 ± γ_4)` keeps only the upper or the
//! lower pair (the temporal saving of Appendix B).

use num_complex::Complex64 as C64;
use rayon::prelude::*;

use super::storage::Real;
use crate::lattice::{Lattice, Parity};
use crate::su3::{ColorVector, Su3};

type Spinor = [ColorVector; 4];
type HalfSpinor = [ColorVector; 2];

const Z: C64 = C64::new(0.0, 0.0);
const I: C64 = C64::new(0.0, 1.0);

/// Sites per parallel task.
const SITES_PER_TASK: usize = 256;

#[inline(always)]
fn load_spinor<R: Real>(v: &[R], site: usize) -> Spinor {
    let b = &v[site * 24..site * 24 + 24];
    let mut s = [[Z; 3]; 4];
    for (spin, sv) in s.iter_mut().enumerate() {
        for (color, z) in sv.iter_mut().enumerate() {
            let k = 2 * (3 * spin + color);
            *z = C64::new(b[k].to_f64(), b[k + 1].to_f64());
        }
    }
    s
}

#[inline(always)]
fn load_link<G: Real>(links: &[G], index: usize) -> Su3 {
    let b = &links[index * 18..index * 18 + 18];
    let mut m = Su3::zero();
    for r in 0..3 {
        for c in 0..3 {
            let k = 2 * (3 * r + c);
            m.0[r][c] = C64::new(b[k].to_f64(), b[k + 1].to_f64());
        }
    }
    m
}

#[inline(always)]
fn scale(a: C64, v: &ColorVector) -> ColorVector {
    [a * v[0], a * v[1], a * v[2]]
}

#[inline(always)]
fn add(a: &ColorVector, b: &ColorVector) -> ColorVector {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

/// `iσ_k (a, b)` for the Pauli matrix `k` = 1, 2, 3.
#[inline(always)]
fn i_sigma(k: usize, a: &ColorVector, b: &ColorVector) -> HalfSpinor {
    match k {
        1 => [scale(I, b), scale(I, a)],
        2 => [*b, scale(C64::new(-1.0, 0.0), a)],
        _ => [scale(I, a), scale(-I, b)],
    }
}

/// Projects `(1 + s γ_μ) ψ` to its half spinor.
#[inline(always)]
fn project<const MU: usize>(s: f64, psi: &Spinor) -> HalfSpinor {
    let mu = MU;
    if mu == 3 {
        let keep = if s > 0.0 { 0 } else { 2 };
        let two = C64::new(2.0, 0.0);
        return [scale(two, &psi[keep]), scale(two, &psi[keep + 1])];
    }
    let t = i_sigma(mu + 1, &psi[2], &psi[3]);
    let sc = C64::new(s, 0.0);
    [
        add(&psi[0], &scale(sc, &t[0])),
        add(&psi[1], &scale(sc, &t[1])),
    ]
}

/// Adds the full spinor rebuilt from the half spinor `h` of `(1 + s γ_μ)`.
#[inline(always)]
fn accumulate<const MU: usize>(s: f64, h: &HalfSpinor, acc: &mut Spinor) {
    let mu = MU;
    if mu == 3 {
        let keep = if s > 0.0 { 0 } else { 2 };
        acc[keep] = add(&acc[keep], &h[0]);
        acc[keep + 1] = add(&acc[keep + 1], &h[1]);
        return;
    }
    acc[0] = add(&acc[0], &h[0]);
    acc[1] = add(&acc[1], &h[1]);
    let t = i_sigma(mu + 1, &h[0], &h[1]);
    let sc = C64::new(-s, 0.0);
    acc[2] = add(&acc[2], &scale(sc, &t[0]));
    acc[3] = add(&acc[3], &scale(sc, &t[1]));
}

/// The hopping term at one site of parity `p`, `cb` its checkerboard index.
#[inline(always)]
fn hop_site<R: Real, G: Real>(
    lat: &Lattice,
    p: Parity,
    cb: usize,
    links: &[G],
    inp: &[R],
    dagger: bool,
) -> Spinor {
    let vh = lat.half_volume();
    let q = p.other();
    // Forward hops carry (1 − γ_μ), backward (1 + γ_μ); dagger swaps them.
    let s_fwd = if dagger { 1.0 } else { -1.0 };
    let mut acc = [[Z; 3]; 4];
    hop_direction::<0, R, G>(lat, p, q, cb, vh, links, inp, s_fwd, &mut acc);
    hop_direction::<1, R, G>(lat, p, q, cb, vh, links, inp, s_fwd, &mut acc);
    hop_direction::<2, R, G>(lat, p, q, cb, vh, links, inp, s_fwd, &mut acc);
    hop_direction::<3, R, G>(lat, p, q, cb, vh, links, inp, s_fwd, &mut acc);
    acc
}

/// The forward and backward hops in direction `MU`, added to `acc`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn hop_direction<const MU: usize, R: Real, G: Real>(
    lat: &Lattice,
    p: Parity,
    q: Parity,
    cb: usize,
    vh: usize,
    links: &[G],
    inp: &[R],
    s_fwd: f64,
    acc: &mut Spinor,
) {
    let nf = lat.neighbour_table(p, MU, true)[cb] as usize;
    let u = load_link(links, (p.index() * vh + cb) * 4 + MU);
    let h = project::<MU>(s_fwd, &load_spinor(inp, nf));
    let uh = [u.mul_vec(&h[0]), u.mul_vec(&h[1])];
    accumulate::<MU>(s_fwd, &uh, acc);

    let nb = lat.neighbour_table(p, MU, false)[cb] as usize;
    let u = load_link(links, (q.index() * vh + nb) * 4 + MU);
    let h = project::<MU>(-s_fwd, &load_spinor(inp, nb));
    let uh = [u.adj_mul_vec(&h[0]), u.adj_mul_vec(&h[1])];
    accumulate::<MU>(-s_fwd, &uh, acc);
}

/// `out = a · D_{p,p̄} inp (+ x)`. `out`, `inp` and `x` are the parity halves
/// (Vh sites each); `links` is the whole gauge field `[parity][cb][mu][18]`.
#[allow(clippy::too_many_arguments)]
pub fn dslash<R: Real, G: Real>(
    lat: &Lattice,
    p: Parity,
    links: &[G],
    out: &mut [R],
    inp: &[R],
    x: Option<&[R]>,
    dagger: bool,
    a: f64,
) {
    out.par_chunks_mut(SITES_PER_TASK * 24)
        .enumerate()
        .for_each(|(task, chunk)| {
            for (k, o) in chunk.chunks_exact_mut(24).enumerate() {
                let cb = task * SITES_PER_TASK + k;
                let d = hop_site(lat, p, cb, links, inp, dagger);
                let xs = x.map(|x| load_spinor(x, cb));
                for spin in 0..4 {
                    for color in 0..3 {
                        let mut v = a * d[spin][color];
                        if let Some(xs) = &xs {
                            v += xs[spin][color];
                        }
                        let i = 2 * (3 * spin + color);
                        o[i] = R::from_f64(v.re);
                        o[i + 1] = R::from_f64(v.im);
                    }
                }
            }
        });
}
