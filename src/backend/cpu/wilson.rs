//! The Wilson hopping term on the CPU, UKQCD basis (docs/conventions.md, "The
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

use super::halo::{face_index, GaugeFaces, Region, SpinorFaces};
use super::links::Links;
use super::storage::{Sites, SitesMut, SITE};
use crate::backend::CloverForm;
use crate::clover::chiral::apply_storage_site;
use crate::clover::storage::CloverData;
use crate::lattice::{Lattice, Parity};
use crate::su3::ColorVector;

type Spinor = [ColorVector; 4];
type HalfSpinor = [ColorVector; 2];

const Z: C64 = C64::new(0.0, 0.0);
const I: C64 = C64::new(0.0, 1.0);

/// Sites per parallel task.
const SITES_PER_TASK: usize = 256;

#[inline(always)]
fn load_spinor(v: &Sites, site: usize) -> Spinor {
    spinor_of(&v.load(site))
}

#[inline(always)]
fn spinor_of(b: &[f64]) -> Spinor {
    std::array::from_fn(|spin| {
        std::array::from_fn(|color| {
            let k = 2 * (3 * spin + color);
            C64::new(b[k], b[k + 1])
        })
    })
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

/// What a hop needs besides the site.
struct Hop<'a> {
    lat: &'a Lattice,
    p: Parity,
    links: &'a Links,
    inp: Sites<'a>,
    /// (1 + s γ_μ) with s = −1 forward, +1 backward; dagger swaps them.
    s_fwd: f64,
    /// The factor on hops across the T boundary (−1: anti-periodic).
    t_sign: f64,
    t_last: usize,
    spatial_volume: usize,
}

/// The hopping term at site `cb` of parity `p`.
#[inline(always)]
fn hop_site(h: &Hop, cb: usize) -> Spinor {
    let mut acc = [[Z; 3]; 4];
    hop_direction::<0>(h, cb, 1.0, 1.0, &mut acc);
    hop_direction::<1>(h, cb, 1.0, 1.0, &mut acc);
    hop_direction::<2>(h, cb, 1.0, 1.0, &mut acc);
    // Both sites sharing a cb index share t, since X is even.
    let t = 2 * cb / h.spatial_volume;
    let fwd = if t == h.t_last { h.t_sign } else { 1.0 };
    let bwd = if t == 0 { h.t_sign } else { 1.0 };
    hop_direction::<3>(h, cb, fwd, bwd, &mut acc);
    acc
}

/// The forward and backward hops in direction `MU`, added to `acc`, with
/// the boundary factors `f_fwd`, `f_bwd`.
#[inline(always)]
fn hop_direction<const MU: usize>(h: &Hop, cb: usize, f_fwd: f64, f_bwd: f64, acc: &mut Spinor) {
    let (p, q) = (h.p, h.p.other());
    let nf = h.lat.neighbour_table(p, MU, true)[cb] as usize;
    let s = project::<MU>(h.s_fwd, &load_spinor(&h.inp, nf));
    // An unstored link is the unit matrix (temporal gauge): no multiply.
    let mut us = match h.links.link(p, cb, MU) {
        Some(u) => [u.mul_vec(&s[0]), u.mul_vec(&s[1])],
        None => s,
    };
    if f_fwd != 1.0 {
        us = us.map(|v| scale(C64::new(f_fwd, 0.0), &v));
    }
    accumulate::<MU>(h.s_fwd, &us, acc);

    let nb = h.lat.neighbour_table(p, MU, false)[cb] as usize;
    let s = project::<MU>(-h.s_fwd, &load_spinor(&h.inp, nb));
    let mut us = match h.links.link(q, nb, MU) {
        Some(u) => [u.adj_mul_vec(&s[0]), u.adj_mul_vec(&s[1])],
        None => s,
    };
    if f_bwd != 1.0 {
        us = us.map(|v| scale(C64::new(f_bwd, 0.0), &v));
    }
    accumulate::<MU>(-h.s_fwd, &us, acc);
}

/// What a hop on a partitioned lattice reads from the other ranks
/// (`halo.rs`): the neighbours' spinors beyond this rank's faces, the links
/// behind its backward faces, and whether this rank holds the global time
/// boundary (the antiperiodic sign belongs to the hops across it only).
pub(crate) struct Faces<'a> {
    pub local: [usize; 4],
    pub partitioned: [bool; 4],
    pub spinors: &'a SpinorFaces,
    pub links: &'a GaugeFaces,
    pub t_last_here: bool,
    pub t_first_here: bool,
}

/// The hopping term at site `cb` of parity `p` of a partitioned lattice.
fn hop_site_with_faces(h: &Hop, f: &Faces, cb: usize) -> Spinor {
    let x = h.lat.coords(h.p, cb);
    let mut acc = [[Z; 3]; 4];
    hop_direction_with_faces::<0>(h, f, cb, x, &mut acc);
    hop_direction_with_faces::<1>(h, f, cb, x, &mut acc);
    hop_direction_with_faces::<2>(h, f, cb, x, &mut acc);
    hop_direction_with_faces::<3>(h, f, cb, x, &mut acc);
    acc
}

/// `hop_direction` where the neighbour across a cut face is the received
/// one: the same arithmetic on the same numbers as one rank's.
#[inline(always)]
fn hop_direction_with_faces<const MU: usize>(
    h: &Hop,
    f: &Faces,
    cb: usize,
    x: [usize; 4],
    acc: &mut Spinor,
) {
    let (p, q) = (h.p, h.p.other());
    let last = f.local[MU] - 1;
    let cut = f.partitioned[MU];
    let fi = || face_index(f.local, MU, x);
    let f_fwd = if MU == 3 && x[3] == last && f.t_last_here {
        h.t_sign
    } else {
        1.0
    };
    let f_bwd = if MU == 3 && x[3] == 0 && f.t_first_here {
        h.t_sign
    } else {
        1.0
    };

    let ahead = if cut && x[MU] == last {
        spinor_of(f.spinors.ahead(MU, 0, fi()))
    } else {
        load_spinor(&h.inp, h.lat.neighbour_table(p, MU, true)[cb] as usize)
    };
    let s = project::<MU>(h.s_fwd, &ahead);
    let mut us = match h.links.link(p, cb, MU) {
        Some(u) => [u.mul_vec(&s[0]), u.mul_vec(&s[1])],
        None => s,
    };
    if f_fwd != 1.0 {
        us = us.map(|v| scale(C64::new(f_fwd, 0.0), &v));
    }
    accumulate::<MU>(h.s_fwd, &us, acc);

    let (behind, link) = if cut && x[MU] == 0 {
        let i = fi();
        (
            spinor_of(f.spinors.behind(MU, 0, i)),
            Some(f.links.behind(MU, p, 0, i)),
        )
    } else {
        let nb = h.lat.neighbour_table(p, MU, false)[cb] as usize;
        (load_spinor(&h.inp, nb), h.links.link(q, nb, MU))
    };
    let s = project::<MU>(-h.s_fwd, &behind);
    let mut us = match link {
        Some(u) => [u.adj_mul_vec(&s[0]), u.adj_mul_vec(&s[1])],
        None => s,
    };
    if f_bwd != 1.0 {
        us = us.map(|v| scale(C64::new(f_bwd, 0.0), &v));
    }
    accumulate::<MU>(-h.s_fwd, &us, acc);
}

/// `out = a · D_{p,p̄} inp (+ x)`. `out`, `inp` and `x` are the parity
/// halves (Vh sites each); `links` the whole field. With a clover field
/// (stored numbers of A or A⁻¹, all sites), its `CloverForm` epilogue:
/// `out = a · C D inp (+ x)` or `out = a · D inp + C x`. On a partitioned
/// lattice, `faces` holds what the hops across cut faces read (needed for
/// the edge sites); `region` the sites this pass computes.
#[allow(clippy::too_many_arguments)]
pub fn dslash(
    lat: &Lattice,
    p: Parity,
    links: &Links,
    t_sign: f64,
    out: SitesMut,
    inp: Sites,
    x: Option<Sites>,
    dagger: bool,
    a: f64,
    clover: Option<(&CloverData, CloverForm)>,
    region: Region,
    faces: Option<&Faces>,
) {
    let hop = Hop {
        lat,
        p,
        links,
        inp,
        s_fwd: if dagger { 1.0 } else { -1.0 },
        t_sign,
        t_last: lat.dims()[3] - 1,
        spatial_volume: lat.dims()[0] * lat.dims()[1] * lat.dims()[2],
    };
    let site0 = p.index() * lat.half_volume();
    out.par_chunks(SITES_PER_TASK, |task, mut o| {
        for k in 0..o.sites() {
            let cb = task * SITES_PER_TASK + k;
            if !region.has(cb) {
                continue;
            }
            let d = match faces {
                Some(f) => hop_site_with_faces(&hop, f, cb),
                None => hop_site(&hop, cb),
            };
            let mut v = [0.0; SITE];
            for (spin, row) in d.iter().enumerate() {
                for (color, &c) in row.iter().enumerate() {
                    let i = 2 * (3 * spin + color);
                    let z = a * c;
                    v[i] = z.re;
                    v[i + 1] = z.im;
                }
            }
            let mut xs = x.map(|x| x.load(cb));
            match clover {
                None => {}
                Some((c, CloverForm::InverseOnHopping)) => {
                    v = apply_storage_site(&c.site(site0 + cb), &v);
                }
                Some((c, CloverForm::DirectOnX)) => {
                    xs = xs.map(|xs| apply_storage_site(&c.site(site0 + cb), &xs));
                }
            }
            if let Some(xs) = xs {
                for i in 0..SITE {
                    v[i] += xs[i];
                }
            }
            o.store(k, &v);
        }
    });
}

/// `out = C inp` site by site on the parity-`p` halves, `C` the stored
/// clover numbers (A or A⁻¹) of all sites.
pub fn clover(p: Parity, vh: usize, c: &CloverData, out: SitesMut, inp: Sites) {
    let site0 = p.index() * vh;
    out.par_chunks(SITES_PER_TASK, |task, mut o| {
        for k in 0..o.sites() {
            let cb = task * SITES_PER_TASK + k;
            o.store(k, &apply_storage_site(&c.site(site0 + cb), &inp.load(cb)));
        }
    });
}
