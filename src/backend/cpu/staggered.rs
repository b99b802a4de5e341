//! The improved staggered hopping term on the CPU (docs/conventions.md,
//! "The staggered operator"):
//! `D χ(x) = Σ_μ [F_μ(x) χ(x+μ̂) − F_μ(x−μ̂)† χ(x−μ̂) + L_μ(x) χ(x+3μ̂) − L_μ(x−3μ̂)† χ(x−3μ̂)]`,
//! with the staggered phases, the boundary signs and the Naik coefficient
//! in the links (fat `F`, long `L`; the naive operator: thin links as `F`,
//! no `L`). Every hop wraps periodically with the link as stored.
//!
//! `out[p] = a · D_{p,p̄} in[p̄] + b · x[p]`: `D` is anti-Hermitian, so its
//! dagger is `a → −a`, and `M = 2m − D`, `M† = 2m + D` and the even-odd
//! `4m² − D_pq D_qp` are all this one form.

use num_complex::Complex64 as C64;

use super::halo::{face_index, GaugeFaces, Region, SpinorFaces};
use super::links::Links;
use super::staggered_float;
use super::storage::{Sites, SitesMut, SITE};
use crate::lattice::{Lattice, Parity};
use crate::su3::ColorVector;

/// Sites per parallel task.
const SITES_PER_TASK: usize = 256;

#[inline(always)]
fn load_vector(v: &Sites, site: usize) -> ColorVector {
    let b = v.load(site);
    std::array::from_fn(|c| C64::new(b[2 * c], b[2 * c + 1]))
}

/// The stored link `(p, cb, mu)`; staggered links are never implicit.
#[inline(always)]
fn link(links: &Links, p: Parity, cb: usize, mu: usize) -> crate::su3::Su3 {
    links
        .link(p, cb, mu)
        .expect("staggered links are stored for every site and direction")
}

/// The checkerboard indices of the three-hop neighbours, `[parity][mu]
/// [forward, backward][cb]` (in the other parity: three hops change it as
/// one does), built once per set of long links.
pub struct ThreeHopTable {
    table: [[[Vec<u32>; 2]; 4]; 2],
}

impl ThreeHopTable {
    pub fn new(lat: &Lattice) -> crate::error::Result<ThreeHopTable> {
        let vh = lat.half_volume();
        let mut table: [[[Vec<u32>; 2]; 4]; 2] = Default::default();
        for p in [Parity::Even, Parity::Odd] {
            for (mu, dirs) in table[p.index()].iter_mut().enumerate() {
                for (k, step) in [3isize, -3].into_iter().enumerate() {
                    let sites = (0..vh)
                        .map(|cb| lat.cb_index(lat.shift(lat.coords(p, cb), mu, step)) as u32);
                    dirs[k] = crate::alloc::collect(vh, sites, "the three-hop neighbour table")?;
                }
            }
        }
        Ok(ThreeHopTable { table })
    }

    #[inline(always)]
    pub(crate) fn get(&self, p: Parity, mu: usize, forward: bool) -> &[u32] {
        &self.table[p.index()][mu][if forward { 0 } else { 1 }]
    }
}

/// `D_{p,p̄} in` at checkerboard site `cb` of parity `p`.
fn hop_site(
    lat: &Lattice,
    p: Parity,
    cb: usize,
    fat: &Links,
    long: Option<(&Links, &ThreeHopTable)>,
    inp: &Sites,
) -> ColorVector {
    let q = p.other();
    let mut acc = [C64::new(0.0, 0.0); 3];
    let mut add = |v: ColorVector, sign: f64| {
        for c in 0..3 {
            acc[c] += sign * v[c];
        }
    };
    for mu in 0..4 {
        let fwd = lat.neighbour_table(p, mu, true)[cb] as usize;
        let bwd = lat.neighbour_table(p, mu, false)[cb] as usize;
        add(link(fat, p, cb, mu).mul_vec(&load_vector(inp, fwd)), 1.0);
        add(
            link(fat, q, bwd, mu).adj_mul_vec(&load_vector(inp, bwd)),
            -1.0,
        );
        if let Some((long, three)) = long {
            let fwd3 = three.get(p, mu, true)[cb] as usize;
            let bwd3 = three.get(p, mu, false)[cb] as usize;
            add(link(long, p, cb, mu).mul_vec(&load_vector(inp, fwd3)), 1.0);
            add(
                link(long, q, bwd3, mu).adj_mul_vec(&load_vector(inp, bwd3)),
                -1.0,
            );
        }
    }
    acc
}

/// What the staggered hops across the cut faces of a partitioned lattice
/// read from the other ranks (`halo.rs`): the input's sites beyond the
/// faces (3 layers deep for the improved operator, 1 for the naive), the
/// fat links of the one-hops and the long links of the three-hops that
/// enter this rank. The phases and boundary signs are in the links.
pub(crate) struct Faces<'a> {
    pub local: [usize; 4],
    pub partitioned: [bool; 4],
    pub spinors: &'a SpinorFaces,
    pub fat: &'a GaugeFaces,
    pub long: Option<&'a GaugeFaces>,
}

fn vector_of(b: &[f64]) -> ColorVector {
    std::array::from_fn(|c| C64::new(b[2 * c], b[2 * c + 1]))
}

/// `hop_site` on a partitioned lattice: a hop of length `d` that leaves
/// the local lattice through a cut face reads the received site and (for
/// a backward hop) the received link; the same arithmetic in the same
/// order as one rank's.
fn hop_site_with_faces(
    lat: &Lattice,
    p: Parity,
    cb: usize,
    fat: &Links,
    long: Option<(&Links, &ThreeHopTable)>,
    inp: &Sites,
    f: &Faces,
) -> ColorVector {
    let q = p.other();
    let x = lat.coords(p, cb);
    let mut acc = [C64::new(0.0, 0.0); 3];
    let mut add = |v: ColorVector, sign: f64| {
        for c in 0..3 {
            acc[c] += sign * v[c];
        }
    };
    for mu in 0..4 {
        let (l, cut) = (f.local[mu], f.partitioned[mu]);
        let fi = || face_index(f.local, mu, x);
        // A hop of `len` forward and back with `links`; `table`: the
        // neighbours `len` sites away; `faces`: the links entering here.
        let mut hop = |len: usize, links: &Links, table: [&[u32]; 2], faces: &GaugeFaces| {
            let ahead = if cut && x[mu] + len >= l {
                vector_of(f.spinors.ahead(mu, x[mu] + len - l, fi()))
            } else {
                load_vector(inp, table[0][cb] as usize)
            };
            add(link(links, p, cb, mu).mul_vec(&ahead), 1.0);
            let (u, behind) = if cut && x[mu] < len {
                let i = fi();
                let v = vector_of(f.spinors.behind(mu, len - 1 - x[mu], i));
                (faces.behind(mu, p, x[mu], i), v)
            } else {
                let bwd = table[1][cb] as usize;
                (link(links, q, bwd, mu), load_vector(inp, bwd))
            };
            add(u.adj_mul_vec(&behind), -1.0);
        };
        let one = [true, false].map(|forward| lat.neighbour_table(p, mu, forward));
        hop(1, fat, one, f.fat);
        // The Naik term's three hops.
        if let (Some((long, three)), Some(long_faces)) = (long, f.long) {
            let three = [true, false].map(|forward| three.get(p, mu, forward));
            hop(3, long, three, long_faces);
        }
    }
    acc
}

/// `out = a · D in (+ b · x)` on the parity-`p` half (the sites `region`
/// names); `inp` is the other parity's half, `out` and `x` this parity's
/// (all `Vh` sites); on a cut lattice `faces` holds what the hops across
/// the cut faces read (needed for the edge sites). Links and fields stored
/// as plain floats of one type, with their adjoint backward links (`back`,
/// `staggered_float::adjoint_behind`), take `staggered_float`'s path where
/// no hop leaves the rank; the others decode site by site.
#[allow(clippy::too_many_arguments)]
pub(crate) fn dslash(
    lat: &Lattice,
    p: Parity,
    fat: &Links,
    long: Option<(&Links, &ThreeHopTable)>,
    out: SitesMut,
    inp: Sites,
    a: f64,
    x: Option<(f64, Sites)>,
    back: Option<staggered_float::Behind>,
    region: Region,
    faces: Option<&Faces>,
) {
    let floats = match (fat.floats(), inp.floats(), back, region) {
        (Some(fat_floats), Some(inp_floats), Some(back), Region::Whole | Region::Interior(_)) => {
            let long_floats = match long {
                Some((l, _)) => l.floats(),
                None => None,
            };
            let x_floats = match &x {
                Some((b, x)) => x.floats().map(|f| (*b, f)),
                None => None,
            };
            let complete =
                long.is_none() == long_floats.is_none() && x.is_none() == x_floats.is_none();
            complete.then(|| staggered_float::Operands {
                parity: p.index(),
                vh: lat.half_volume(),
                one: std::array::from_fn(|mu| [true, false].map(|f| lat.neighbour_table(p, mu, f))),
                three: long
                    .map(|(_, t)| std::array::from_fn(|mu| [true, false].map(|f| t.get(p, mu, f)))),
                fat: fat_floats,
                long: long_floats,
                back,
                inp: inp_floats,
                a,
                x: x_floats,
            })
        }
        _ => None,
    };
    out.par_chunks(SITES_PER_TASK, |task, mut o| {
        let first = task * SITES_PER_TASK;
        if let (Some(ops), Some(of)) = (&floats, o.floats_mut()) {
            if staggered_float::chunk(ops, region, first, of) {
                return;
            }
        }
        for k in 0..o.sites() {
            let cb = first + k;
            if !region.has(cb) {
                continue;
            }
            let d = match faces {
                Some(f) => hop_site_with_faces(lat, p, cb, fat, long, &inp, f),
                None => hop_site(lat, p, cb, fat, long, &inp),
            };
            let mut v = [0.0; SITE];
            for c in 0..3 {
                v[2 * c] = a * d[c].re;
                v[2 * c + 1] = a * d[c].im;
            }
            if let Some((b, x)) = &x {
                let xs = x.load(cb);
                for i in 0..6 {
                    v[i] += b * xs[i];
                }
            }
            o.store(k, &v);
        }
    });
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::super::links::StaggeredReals;
    use super::super::storage::Data;
    use super::*;
    use crate::precision::Precision;
    use crate::random;

    /// The float fast path (`staggered_float`) and the site-by-site path
    /// give the same bits, in double and single, with and without `x`: a
    /// cut lattice mixes them, and one rank must agree with many.
    #[test]
    fn the_float_path_gives_the_bits_of_the_general_one() {
        let lat = Arc::new(Lattice::new([4, 4, 6, 8]).unwrap());
        let vh = lat.half_volume();
        let (fat, long) = (random::hot_gauge(&lat, 3), random::hot_gauge(&lat, 4));
        let three = ThreeHopTable::new(&lat).unwrap();
        let field = |prec: Precision, seed: u64| {
            let mut d = Data::try_zeros_of(prec, vh, 6).unwrap();
            let mut rng = random::rng(seed);
            let mut v = d.view_mut(0, vh);
            for i in 0..vh {
                let mut s = [0.0; SITE];
                for x in s.iter_mut().take(6) {
                    *x = random::gaussian(&mut rng).re;
                }
                v.store(i, &s);
            }
            d
        };
        for prec in [Precision::Double, Precision::Single] {
            let store = |f| {
                StaggeredReals::of(f, None, 1.0)
                    .unwrap()
                    .store(prec, 1.0)
                    .unwrap()
            };
            let (fat, long) = (store(&fat), store(&long));
            let (fat_store, long_store) = (&fat, &long);
            let (inp, x) = (field(prec, 5), field(prec, 6));
            for with_x in [false, true] {
                let mut fast = Data::try_zeros_of(prec, vh, 6).unwrap();
                let xs = with_x.then(|| (0.25, x.view(0, vh)));
                let long = Some((&long, &three));
                let p = Parity::Odd;
                let out = fast.view_mut(0, vh);
                let parities = [Parity::Even, Parity::Odd];
                let one =
                    parities.map(|p| std::array::from_fn(|mu| lat.neighbour_table(p, mu, false)));
                let three_back =
                    parities.map(|p| std::array::from_fn(|mu| three.get(p, mu, false)));
                let back_fat =
                    staggered_float::adjoint_behind(fat_store.floats().unwrap(), vh, one).unwrap();
                let back_long =
                    staggered_float::adjoint_behind(long_store.floats().unwrap(), vh, three_back)
                        .unwrap();
                let back = staggered_float::Behind {
                    fat: back_fat.floats(),
                    long: Some(back_long.floats()),
                };
                dslash(
                    &lat,
                    p,
                    &fat,
                    long,
                    out,
                    inp.view(0, vh),
                    -0.5,
                    xs,
                    Some(back),
                    Region::Whole,
                    None,
                );
                let mut general = Data::try_zeros_of(prec, vh, 6).unwrap();
                let mut g = general.view_mut(0, vh);
                for cb in 0..vh {
                    let d = hop_site(&lat, p, cb, &fat, long, &inp.view(0, vh));
                    let mut v = [0.0; SITE];
                    for c in 0..3 {
                        v[2 * c] = -0.5 * d[c].re;
                        v[2 * c + 1] = -0.5 * d[c].im;
                    }
                    if let Some((b, x)) = &xs {
                        let s = x.load(cb);
                        for i in 0..6 {
                            v[i] += b * s[i];
                        }
                    }
                    g.store(cb, &v);
                }
                let (f, g) = (fast.view(0, vh), general.view(0, vh));
                for cb in 0..vh {
                    let (a, b) = (f.load(cb), g.load(cb));
                    assert!(
                        a.iter().zip(&b).all(|(a, b)| a.to_bits() == b.to_bits()),
                        "{prec:?}, x {with_x}, site {cb}: {a:?} against {b:?}"
                    );
                }
            }
        }
    }
}
